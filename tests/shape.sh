#!/usr/bin/env bash
# shape.sh INART: `inart switchd --io xdp --shape` between two namespaces
# (h0 -- s0 -- h1): h0 sends UDP (1000-byte payloads, 1042-byte frames) to
# h1 at about twice the shaped rate for 1.5 s; h1 measures the rate of the
# frames it receives after the first 0.3 s, which must be within 5% of the
# rate set on s0's port towards h1, at 20 and at 100 Mbit/s; s0's counters
# show the shaper held and dropped frames (a full queue) and nothing went
# out of the shaped port in the XDP program (plain IPv4 comes up to the
# shaper).  Needs root; exits 77 otherwise.
set -u

INART=${1:?usage: shape.sh PATH-TO-INART}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

. "$HERE/skip.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip_all shape.sh "not root"
fi
if ! "$INART" switchd --help | grep -q "xdp (AF_XDP"; then
	skip_all shape.sh "inart without --io xdp"
fi

P="insh$$-"
declare -A IP=([h0]=10.78.0.1 [h1]=10.78.0.2) MAC=([h0]=02:78:00:00:00:01 [h1]=02:78:00:00:00:02)
. "$HERE/fabric.sh"

if ! { fabric_ns h0 h1 s0 && fabric_host h0 s0 p0 && fabric_host h1 s0 p1; }; then
	echo "shape.sh: setup failed"
	exit 1
fi
for h in h0 h1; do
	ip netns exec "$(ns $h)" ethtool -K eth0 gro on >/dev/null 2>&1
done
S=$(ns s0)

stat() { # stat PYTHON-EXPRESSION over the --stats JSON (j)
	"$INART" switchd --stats --ctl "$tmp/s0.sock" --json >"$tmp/stats.json" 2>&1 &&
		/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" \
			"$tmp/stats.json"
}

# the receiver: prints the rate (bit/s of Ethernet frames) after SKIP s
cat >"$tmp/rx.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind((sys.argv[1], 9999))
s.settimeout(3)
skip = float(sys.argv[2])
t0 = None; first = None; last = None; nbytes = 0; n = 0
try:
    while True:
        d = s.recv(2048)
        now = time.monotonic()
        if t0 is None:
            t0 = now
        if now - t0 < skip:
            continue
        if first is None:
            first = now
            continue
        last = now; nbytes += len(d) + 42; n += 1
        s.settimeout(0.3)
except socket.timeout:
    pass
print("%.0f %d" % (nbytes * 8 / (last - first) if last and last > first else 0, n))
PY
# the sender: RATE bit/s of 1042-byte frames for SECONDS
cat >"$tmp/tx.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = (sys.argv[1], 9999); rate = float(sys.argv[2]); secs = float(sys.argv[3])
pay = b"x" * 1000; per = 1042 * 8 / rate
t0 = time.monotonic(); k = 0
while True:
    now = time.monotonic()
    if now - t0 > secs:
        break
    while k * per <= now - t0:
        try:
            s.sendto(pay, dst)
        except OSError:
            pass
        k += 1
    time.sleep(0.0002)
PY

for mbit in 20 100; do
	ip netns exec "$S" "$INART" switchd --name s0 --port p0,p1 --ctl "$tmp/s0.sock" --io xdp \
		--shape "p1=${mbit}mbit" --log-level info 2>"$tmp/s0.log" &
	DPID=$!
	pids+=($!)
	fabric_wait_socks "$tmp/s0.sock"
	"$INART" ctl send "$tmp/s0.sock" '{"op": "install", "node": "s0", "replace": true,
  "routes": [{"prefix": "10.78.0.1/32", "port": 0}, {"prefix": "10.78.0.2/32", "port": 1}]}' \
		>"$tmp/out" 2>&1
	grep -q '"ok": *true' "$tmp/out" || bad "install routes: $(cat "$tmp/out")"
	# ARP both ways first (the switch learns the hosts' MACs)
	ip netns exec "$(ns h0)" ping -c 2 -i 0.2 -W 2 "${IP[h1]}" >/dev/null 2>&1
	ip netns exec "$(ns h1)" /usr/bin/python3 "$tmp/rx.py" "${IP[h1]}" 0.3 >"$tmp/rate" &
	rxpid=$!
	pids+=($rxpid)
	sleep 0.2
	ip netns exec "$(ns h0)" /usr/bin/python3 "$tmp/tx.py" "${IP[h1]}" "$((2 * mbit))e6" 1.5
	wait "$rxpid"
	read -r got n <"$tmp/rate"
	want=$((mbit * 1000000))
	if /usr/bin/python3 -c "import sys; sys.exit(0 if abs(${got:-0} - $want) <= 0.05 * $want else 1)"; then
		ok
	else
		bad "shaped at ${mbit} Mbit/s: received ${got:-?} bit/s ($n frames); $(cat "$tmp/s0.log")"
	fi
	held=$(stat 'j["ports"][1]["shaped_held"]')
	drops=$(stat 'j["ports"][1]["shaped_drops"]')
	kfwd=$(stat 'j["xdp"]["fwd"]')
	if [ "${held:-0}" -gt 100 ] && [ "${drops:-0}" -gt 0 ]; then ok; else
		bad "shaper counters at ${mbit} Mbit/s: held ${held:-?} drops ${drops:-?}: $(cat "$tmp/stats.json")"
	fi
	# h1 -> h0 is not shaped and may go in the kernel; h0 -> h1 never does
	tx1=$(stat 'j["ports"][1]["shaped_tx"]')
	echo "shape.sh: ${mbit} Mbit/s set, ${got:-?} bit/s received ($n frames after 0.3 s);" \
		"shaper held ${held:-?} dropped ${drops:-?} sent ${tx1:-?}; xdp fwd ${kfwd:-?}"
	fabric_stop "$DPID"
	rm -f "$tmp/s0.sock"
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
