#!/usr/bin/env bash
# install_bench.sh [LABELS [ROUNDS]]: how much a large install delays the
# forwarding going on meanwhile (issue 7's target: an install of 400k labels
# delays concurrent forwarding by under 50 ms; before the control thread, a
# 47 MB request stretched an all-reduce iteration from 15 ms to 3.4 s), and
# the switch's memory with those labels.
#
#     h0 --- t0 (inart switchd) --- h1
#
# h0 pings h1 through t0 every 2 ms (ping -D: a timestamp per reply) while
# a client sends t0 one install of LABELS (default 400000) label entries --
# 70% forwarding UP entries, 20% DOWN entries with 2 copies, 10% aggregating
# entries -- over its control socket.  The delay = the largest round trip
# during the install (from sending the request to its reply, plus 0.5 s)
# minus the median round trip before it; a ping lost during the install
# counts as 1 s.  ROUNDS (default 3) installs, each replacing the last.
# Prints per round the request size, the install's time, the round trips,
# and switchd's resident memory (VmRSS) before and after; PASS/MISS.
# Needs root and ip netns; the namespaces carry a per-run prefix and are
# always removed.
set -u

labels=${1:-400000}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${BUILD:-$root/build}
INART=$bdir/inart
if [ ! -x "$INART" ]; then
	echo "install_bench: $INART missing (ninja -C $bdir; BUILD=dir selects the build)" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install_bench: needs root (network namespaces)" >&2
	exit 1
fi
P="inh7i$$-"
. "$root/tests/fabric.sh"
declare -A IP=([h0]=10.80.0.1 [h1]=10.80.0.2)
declare -A MAC=([h0]=02:80:00:00:00:01 [h1]=02:80:00:00:00:02)
if ! { fabric_ns h0 h1 t0 && fabric_host h0 t0 p0 && fabric_host h1 t0 p1; } >"$tmp/setup.err" 2>&1; then
	echo "install_bench: setup failed" >&2
	cat "$tmp/setup.err" >&2
	exit 1
fi
ip netns exec "$(ns t0)" "$INART" switchd --name t0 --port p0,p1 --ctl "$tmp/t0.sock" \
	--pool-slots 65536 --log-level warn 2>"$tmp/t0.log" &
swp=$!
pids+=($swp)
fabric_wait_socks "$tmp/t0.sock"
"$INART" ctl send "$tmp/t0.sock" '{"op": "install", "config": {"ports": [{}, {}], "pool_slots": 65536, "flush_timeout_ns": 10000000}, "routes": [{"prefix": "10.80.0.1/32", "port": 0}, {"prefix": "10.80.0.2/32", "port": 1}]}' >/dev/null ||
	{ echo "install_bench: routes refused" >&2; exit 1; }
rss() { awk '/^VmRSS/ {print $2 / 1024}' "/proc/$swp/status"; }
verdict=PASS
worst_all=0
for k in $(seq "$rounds"); do
	ip netns exec "$(ns h0)" ping -D -i 0.002 -c 3000 "${IP[h1]}" >"$tmp/ping$k.out" 2>&1 &
	pp=$!
	pids+=($pp)
	sleep 2
	r0=$(rss)
	python3 - "$tmp/t0.sock" "$labels" "$k" >"$tmp/install$k.out" <<'PY'
import json, socket, struct, sys, time
path, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = 1000000 * k
labels = []
for i in range(n):
    kind = i % 10
    if kind < 7:
        labels.append({"label": base + i, "kind": "up", "job": i % 100, "tree": 0, "out_port": 1,
                       "next_label": base + i + 1})
    elif kind < 9:
        labels.append({"label": base + i, "kind": "down", "job": i % 100, "tree": 0,
                       "down": [{"port": 0, "label": 5}, {"port": 1, "label": 6}]})
    else:
        labels.append({"label": base + i, "kind": "up", "job": i % 100, "tree": 0, "out_port": 1,
                       "aggregate": True, "slot_base": (i % 100) * 64, "n_slots": 64,
                       "expected": ["000000000000000f"]})
body = json.dumps({"op": "install", "replace": True, "labels": labels,
                   "routes": [{"prefix": "10.80.0.1/32", "port": 0},
                              {"prefix": "10.80.0.2/32", "port": 1}]}).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path)
t0 = time.time()
s.sendall(struct.pack("!I", len(body)) + body)
m = struct.unpack("!I", s.recv(4, socket.MSG_WAITALL))[0]
r = s.recv(m, socket.MSG_WAITALL)
t1 = time.time()
print(t0, t1, len(body), r.decode()[:80])
PY
	sleep 1
	r1=$(rss)
	wait $pp
	read -r t_a t_b size reply <"$tmp/install$k.out"
	python3 - "$tmp/ping$k.out" "$t_a" "$t_b" >"$tmp/rtt$k.out" <<'PY'
import re, statistics, sys
t_a, t_b = float(sys.argv[2]), float(sys.argv[3]) + 0.5
before, during, seqs = [], [], []
for line in open(sys.argv[1]):
    m = re.match(r"\[(\d+\.\d+)\].*icmp_seq=(\d+).*time=([\d.]+) ms", line)
    if not m:
        continue
    t, seq, rtt = float(m.group(1)), int(m.group(2)), float(m.group(3))
    if t < t_a:
        before.append(rtt)
    elif t - rtt / 1000 <= t_b:
        during.append(rtt)
        seqs.append(seq)
# a ping sent during the install and never answered: 1 s
lost = (max(seqs) - min(seqs) + 1 - len(seqs)) if seqs else 0
worst = max(during + [1000.0] * lost) if during or lost else 0
print("%.3f %.3f %.3f %d" % (statistics.median(before), worst, worst - statistics.median(before), lost))
PY
	read -r med worst delay lost <"$tmp/rtt$k.out"
	printf "round %d: %d labels (%.1f MB of JSON) installed in %.2f s (%s); ping rtt median %s ms before, worst %s ms during (%s lost): delay %s ms; switchd RSS %.0f -> %.0f MB\n" \
		"$k" "$labels" "$(awk -v s="$size" 'BEGIN {print s / 1e6}')" \
		"$(awk -v a="$t_a" -v b="$t_b" 'BEGIN {print b - a}')" "$reply" "$med" "$worst" "$lost" \
		"$delay" "$r0" "$r1"
	if ! awk -v d="$delay" 'BEGIN {exit !(d < 50)}'; then
		verdict=MISS
	fi
	worst_all=$(awk -v a="$worst_all" -v b="$delay" 'BEGIN {print (b > a ? b : a)}')
done
"$INART" ctl send "$tmp/t0.sock" '{"op": "info"}' | grep -o '"table_bytes":[0-9]*'
echo "$verdict: a $labels-label install delayed forwarding by at most $worst_all ms over $rounds rounds (target 50 ms)"
