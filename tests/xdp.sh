#!/usr/bin/env bash
# xdp.sh INART CORPUS [BPF_OBJ]: `inart switchd --io xdp` between two namespaces
# (h0 -- s0 -- h1), checking:
#   - without privilege `--io xdp` exits 1 saying why; `--io auto` names its
#     choice in one line: ring on a port with a tbf qdisc (which AF_XDP would
#     bypass), xdp otherwise; `--agg auto` takes the kernel path, or where
#     the kernel refuses live frames user, saying why (`--agg kernel` then
#     exits 1 saying so);
#   - the XDP program is attached while it runs, plain IPv4 (ping) is
#     forwarded inside it (its "fwd" counter, the ports' counters) once the
#     routes are installed, and the switch still answers ARP; a /32
#     changed by an install is followed (no stale entry), a /24 forwards;
#   - bad input (tests/xdp_replay.py: the fuzz corpus of switch frames and
#     wire headers, a frame cut at every length, bad checksums, IHL, lengths,
#     TTL, VLAN, IPv6) through the XDP path: no crash, drops counted, ping
#     still forwarded;
#   - after SIGTERM and after SIGKILL no XDP program is left on the ports,
#     and a new switchd attaches again; a port deleted while switchd runs
#     leaves it serving (and answering) and detaching at exit.
#   - `--io xdp --cores 2` on a 1-queue veth exits 1 naming the queue
#     count, no program left;
#   - a UMEM larger than memory allows (--ring-frames 65536 on two ports,
#     264 MB): under a 100 MB memory cgroup exit 1 saying it does not fit
#     (not killed by the OOM killer), under a 250 MB address-space limit
#     exit 1 saying out of memory, --ring-frames 65537 a usage error; no
#     program left after any;
#   - (with BPF_OBJ, the program's object) an interface that has another XDP
#     program already is refused, the program left in place.
# The all-reduces through switchd --io xdp are tests/netns.sh's, run with
# INART_IO=xdp (meson test netns_xdp).  Needs root; exits 77 otherwise.
set -u

INART=${1:?usage: xdp.sh PATH-TO-INART CORPUS-DIR}
CORPUS=${2:?usage: xdp.sh PATH-TO-INART CORPUS-DIR}
BPF_OBJ=${3:-}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

. "$HERE/skip.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip_all xdp.sh "not root"
fi
if ! "$INART" switchd --help | grep -q "xdp (AF_XDP"; then
	skip_all xdp.sh "inart without --io xdp"
fi

P="inxd$$-"
declare -A IP=([h0]=10.79.0.1 [h1]=10.79.0.2) MAC=([h0]=02:79:00:00:00:01 [h1]=02:79:00:00:00:02)
. "$HERE/fabric.sh"

if ! { fabric_ns h0 h1 s0 && fabric_host h0 s0 p0 && fabric_host h1 s0 p1; }; then
	echo "xdp.sh: setup failed"
	exit 1
fi
for h in h0 h1; do # a redirected frame into a veth needs GRO (or XDP) on its peer
	ip netns exec "$(ns $h)" ethtool -K eth0 gro on >/dev/null 2>&1
done
S=$(ns s0)

xdp_attached() { # any XDP program on s0's ports?
	ip -n "$S" link show | grep -q "xdp"
}

start() { # start IO [OPTION...]: switchd on p0,p1; DPID
	local io=$1
	shift
	ip netns exec "$S" "$INART" switchd --name s0 --port p0,p1 --ctl "$tmp/s0.sock" --io "$io" \
		--log-level info "$@" 2>"$tmp/s0.log" &
	DPID=$!
	pids+=($!)
	fabric_wait_socks "$tmp/s0.sock"
}

stop() { # stop SIGNAL
	kill "-$1" "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	rm -f "$tmp/s0.sock"
}

stat() { # stat PYTHON-EXPRESSION over the --stats JSON (j)
	"$INART" switchd --stats --ctl "$tmp/s0.sock" --json >"$tmp/stats.json" 2>&1 &&
		/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" \
			"$tmp/stats.json"
}

# --- no privilege, auto's choice ---------------------------------------------------
if ip netns exec "$S" setpriv --reuid nobody --regid nogroup --clear-groups --inh-caps=-all \
	"$INART" switchd --name s0 --port p0,p1 --ctl "$tmp/np.sock" --io xdp >"$tmp/out" 2>&1; then
	bad "--io xdp without privilege started"
else
	rc=$?
	if [ $rc -eq 1 ] && grep -q "xdp.*\(not permitted\|CAP_\)" "$tmp/out"; then ok; else
		bad "--io xdp without privilege: exit $rc, $(cat "$tmp/out")"
	fi
fi
ip -n "$S" link show p0 | grep -q xdp && bad "an XDP program left after the refused start"
tc -n "$S" qdisc replace dev p0 root tbf rate 100mbit burst 32k latency 50ms
start auto
stop TERM
if grep -q -- "--io auto: ring (xdp not used: p0 has a tbf qdisc" "$tmp/s0.log"; then ok; else
	bad "--io auto on a shaped port: $(cat "$tmp/s0.log")"
fi
tc -n "$S" qdisc del dev p0 root
start auto
stop TERM
if grep -q -- "--io auto: xdp (AF_XDP" "$tmp/s0.log"; then ok; else
	bad "--io auto: $(cat "$tmp/s0.log")"
fi
# the kernel's aggregation where the kernel refuses live frames (its flush
# ticks): --agg kernel exits 1 saying so, no program left; --agg auto takes
# user saying why.  Elsewhere auto takes the kernel path.
if live_frames_refused "$INART"; then
	ip netns exec "$S" "$INART" switchd --name s0 --port p0,p1 --ctl "$tmp/k.sock" --io xdp \
		--agg kernel >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "agg kernel: this kernel refuses BPF_PROG_RUN with live" \
		"$tmp/out" && ! xdp_attached; then ok; else
		bad "--agg kernel where live frames are refused: exit $rc, $(cat "$tmp/out")"
	fi
	want="--agg auto: user (the kernel's aggregation not used: --agg kernel: this kernel refuses"
else
	want="--agg auto: kernel (xdp_agg on CPUs"
fi
start xdp --agg auto
stop TERM
if grep -qF -- "$want" "$tmp/s0.log"; then ok; else
	bad "--agg auto: '$want' expected: $(cat "$tmp/s0.log")"
fi

# a UMEM larger than memory allows: exit 1 with the reason, no program left
umem_refused() { # DESC PATTERN RC OUT
	if [ "$3" -eq 1 ] && grep -q "$2" "$4" && ! xdp_attached; then ok; else
		bad "$1: exit $3, $(cat "$4"); $(ip -n "$S" link show | grep xdp)"
	fi
}
cg=""
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then # v2: a child of the root cgroup
	cg=/sys/fs/cgroup/inxd$$
	mkdir "$cg" 2>/dev/null && echo 100M >"$cg/memory.max" 2>/dev/null || cg=""
elif [ -d /sys/fs/cgroup/memory ]; then # v1: a child of this process's
	cg=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
	cg=${cg%/}/inxd$$
	mkdir "$cg" 2>/dev/null && echo 100M >"$cg/memory.limit_in_bytes" 2>/dev/null || cg=""
fi
if [ -n "$cg" ]; then
	# nsenter, not ip netns exec: that mounts a sysfs without the cgroup files
	(
		echo "$BASHPID" >"$cg/cgroup.procs" &&
			exec nsenter --net="/run/netns/$S" "$INART" switchd --name s0 --port p0,p1 \
				--ctl "$tmp/m.sock" --io xdp --ring-frames 65536
	) >"$tmp/out" 2>&1
	rc=$?
	umem_refused "--io xdp, a 264 MB UMEM under a 100 MB memory cgroup" \
		"does not fit the .* MB left under this process's memory cgroup limit of 100 MB" $rc \
		"$tmp/out"
	rmdir "$cg"
else
	skipped 1 "no memory cgroup could be made: the UMEM under a cgroup limit"
fi
(
	ulimit -v 250000
	exec ip netns exec "$S" "$INART" switchd --name s0 --port p0,p1 --ctl "$tmp/m.sock" \
		--io xdp --ring-frames 65536
) >"$tmp/out" 2>&1
umem_refused "--io xdp, a 264 MB UMEM under a 250 MB address-space limit" \
	"UMEM of 264 MB: out of memory" $? "$tmp/out"
ip netns exec "$S" "$INART" switchd --name s0 --port p0,p1 --ctl "$tmp/m.sock" --io xdp \
	--ring-frames 65537 >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--ring-frames" "$tmp/out" && ! xdp_attached; then ok; else
	bad "--ring-frames 65537: exit $rc, $(cat "$tmp/out")"
fi

# --- forwarding in the XDP program ---------------------------------------------------
start xdp
if grep -q -- "--io xdp: xdp (AF_XDP copy mode" "$tmp/s0.log"; then ok; else
	bad "--io xdp log line: $(cat "$tmp/s0.log")"
fi
if xdp_attached; then ok; else bad "no XDP program on s0's ports while switchd runs"; fi
"$INART" ctl send "$tmp/s0.sock" '{"op": "install", "node": "s0", "replace": true,
  "routes": [{"prefix": "10.79.0.1/32", "port": 0}, {"prefix": "10.79.0.2/32", "port": 1}]}' \
	>"$tmp/out" 2>&1
if grep -q '"ok": *true' "$tmp/out"; then ok; else bad "install routes: $(cat "$tmp/out")"; fi
if ip netns exec "$(ns h0)" ping -c 5 -i 0.1 -W 2 "${IP[h1]}" >"$tmp/out" 2>&1; then ok; else
	bad "ping h0 -> h1 through switchd --io xdp: $(cat "$tmp/out")"
fi
fwd=$(stat 'j["xdp"]["fwd"]')
if [ "${fwd:-0}" -ge 5 ]; then ok; else bad "ping forwarded in the XDP program: fwd=${fwd:-?} $(cat "$tmp/stats.json")"; fi
rx=$(stat 'j["ports"][0]["rx_pkts"] + j["ports"][1]["rx_pkts"]')
if [ "${rx:-0}" -ge 10 ]; then ok; else bad "port counters include the XDP program's: rx=${rx:-?}"; fi
user=$(stat 'j["xdp"]["user"]')
if [ "${user:-0}" -ge 1 ]; then ok; else bad "ARP reached switchd: user=${user:-?}"; fi
# a changed /32 reaches the program's table of /32s: h1's turned back out of
# port 0 (ping lost, not forwarded by a stale entry), then h1 by a /24 (in
# the kernel again)
routes() { # install the routes (JSON list)
	"$INART" ctl send "$tmp/s0.sock" '{"op": "install", "node": "s0", "replace": true,
	  "routes": '"$1"'}' >"$tmp/out" 2>&1 && grep -q '"ok": *true' "$tmp/out"
}
if routes '[{"prefix": "10.79.0.1/32", "port": 0}, {"prefix": "10.79.0.2/32", "port": 0}]' &&
	! ip netns exec "$(ns h0)" ping -c 2 -i 0.2 -W 1 "${IP[h1]}" >/dev/null 2>&1; then ok; else
	bad "h1's /32 turned to port 0: ping still answered (a stale /32 in the program?)"
fi
fwd0=$(stat 'j["xdp"]["fwd"]')
if routes '[{"prefix": "10.79.0.1/32", "port": 0}, {"prefix": "10.79.0.0/24", "port": 1}]' &&
	ip netns exec "$(ns h0)" ping -c 5 -i 0.1 -W 2 "${IP[h1]}" >"$tmp/out" 2>&1; then ok; else
	bad "ping h0 -> h1 by a /24: $(cat "$tmp/out")"
fi
fwd1=$(stat 'j["xdp"]["fwd"]')
if [ $((${fwd1:-0} - ${fwd0:-0})) -ge 10 ]; then ok; else
	bad "ping by a /24 forwarded in the XDP program: fwd ${fwd0:-?} -> ${fwd1:-?}"
fi

# --- bad input through the XDP path --------------------------------------------------
drops0=$(stat 'sum(j["drops"].values())')
smac=${MAC[h0]}
dmac=$(ip -n "$S" link show p0 | awk '/link\/ether/ {print $2}')
n=$(ip netns exec "$(ns h0)" /usr/bin/python3 "$HERE/xdp_replay.py" eth0 "$CORPUS" "$smac" "$dmac" \
	"${IP[h0]}" "${IP[h1]}" 2>"$tmp/err")
sleep 0.5
if [ "${n:-0}" -ge 50 ]; then ok; else bad "replay sent ${n:-0} frames: $(cat "$tmp/err")"; fi
if kill -0 "$DPID" 2>/dev/null; then ok; else bad "switchd --io xdp died on bad input"; fi
drops1=$(stat 'sum(j["drops"].values())')
if [ "${drops1:-0}" -gt "${drops0:-0}" ]; then ok; else
	bad "bad input counted as drops: ${drops0:-?} -> ${drops1:-?}"
fi
echo "xdp.sh: replayed $n frames; drops ${drops0:-?} -> ${drops1:-?}; xdp $(stat 'j["xdp"]')"
if ip netns exec "$(ns h0)" ping -c 2 -i 0.1 -W 2 "${IP[h1]}" >/dev/null 2>&1; then ok; else
	bad "ping after the bad input"
fi

# --- detach on exit and after SIGKILL ------------------------------------------------
stop TERM
if xdp_attached; then bad "an XDP program left after SIGTERM"; else ok; fi
start xdp
if xdp_attached; then ok; else bad "switchd --io xdp after a stop: no program"; fi
stop KILL
sleep 0.2
if xdp_attached; then bad "an XDP program left after SIGKILL: $(ip -n "$S" link show)"; else ok; fi
start xdp
if xdp_attached && kill -0 "$DPID" 2>/dev/null; then ok; else
	bad "switchd --io xdp after a SIGKILL: $(cat "$tmp/s0.log")"
fi
# a port that vanishes while switchd runs: it goes on with the other
ip -n "$S" link del p1
ip netns exec "$(ns h0)" ping -c 2 -i 0.1 -W 1 "${IP[h1]}" >/dev/null 2>&1
if kill -0 "$DPID" 2>/dev/null && stat 'j["name"]' >/dev/null; then ok; else
	bad "switchd --io xdp after its port p1 was deleted: $(cat "$tmp/s0.log")"
fi
stop TERM
if xdp_attached; then bad "an XDP program left after the port went"; else ok; fi

# someone else's XDP program on a port: refused with the reason, left alone
if [ -n "$BPF_OBJ" ] && ip -n "$S" link set dev p0 xdpgeneric obj "$BPF_OBJ" sec xdp 2>"$tmp/err"; then
	if ip netns exec "$S" "$INART" switchd --name s0 --port p0 --ctl "$tmp/o.sock" --io xdp \
		>"$tmp/out" 2>&1; then
		bad "--io xdp started over another XDP program"
	elif grep -q "has an XDP program already" "$tmp/out" && xdp_attached; then ok; else
		bad "--io xdp over another program: $(cat "$tmp/out"); $(ip -n "$S" link show p0)"
	fi
	ip -n "$S" link set dev p0 xdpgeneric off
elif [ -n "$BPF_OBJ" ]; then
	bad "attaching a program with ip link: $(cat "$tmp/err")"
else
	skipped 1 "no BPF object given: the check of another XDP program skipped"
fi

# a queue count the device does not have: p0 has one queue, --cores 2 needs
# two: exit 1 naming it, no program left
ip netns exec "$S" "$INART" switchd --name s0 --port p0 --ctl "$tmp/q.sock" --io xdp --cores 2 \
	>"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "receive queues" "$tmp/out" && ! xdp_attached; then ok; else
	bad "--io xdp --cores 2 on a 1-queue veth: exit $rc, $(cat "$tmp/out"); $(ip -n "$S" link show p0)"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
