#!/usr/bin/env bash
# netns_cores.sh INART ALLREDUCE: `inart switchd --cores 2` on real sockets
# (issue 24): two switches, each with two pinned workers, a shard of the
# switch each, their AF_PACKET sockets in fanout groups steered by shard
# (io/fanout).  Three workers, two PSs (the fabric of netns.sh without x0):
#   - both switches report 2 cores; --cores 2 is refused with --io udp and
#     with --agg-mbps (accepted with --rx-loss), --cores 0 is a usage error;
#   - ping through both switches (ARP, plain IPv4: shard 0 and the flow
#     hash);
#   - all-reduces are bit-exact (several sizes and iterations), also while
#     the switches' counters are reset again and again (every reset parks
#     the second worker) and after t0 lost its aggregation state;
#   - t0 aggregated, and both of its shards received frames;
#   - the kernel steers by (job, tree, slot): InArt frames of 8 slots sent
#     from a host reach the shard the documented formula gives (computed by
#     the test in Python, not by the C code), counted per shard;
#   - (with UDP_FLOOD) a non-InArt flood from w2 (plain UDP of 1 KB frames,
#     sendmmsg as fast as it goes, to p1 through both switches and to an
#     address with no route) for 2 s beside an all-reduce: the all-reduce
#     exact, the flood counted at t0 (forwarded: its ports' or XDP
#     program's counters; no route: the no_route drops), both switches
#     still running.
# t0 runs PACKET_MMAP rings, t1 recvmmsg/sendmmsg.
#
# INART_IO=xdp (the meson test netns_xdp_cores): `--io xdp --cores 2`, worker
# k with an AF_XDP socket on queue k of every port (veths with 2 queues); a
# frame received on the queue of a worker that does not own its shard is
# handed to the owner (io/xsk: the kernel refuses a redirect to another
# queue's socket).  t0 runs --io xdp, t1 --io auto (which takes xdp at
# --cores 2 where every port has 2 queues), both must report xdp; the same
# checks (the InArt frames all arrive on one queue: sent from one CPU), and:
#   - --io xdp --cores 2 on an interface with one queue exits 1 saying so,
#     --io auto then takes ring;
#   - SIGKILL: no XDP program stays on any of t0's interfaces;
#   - a port deleted while t0 runs on 2 cores: it goes on with the others
#     (ping), answers, and leaves no program after SIGTERM.
#
#     w0 --\                      /-- p0
#     w1 ---- t0 (INA) ------- t1
#     w2 --/                      \-- p1
#
# Needs root and `ip netns`; exits 77 (skipped) otherwise (INART_NO_SKIP=1:
# a failure).  Removes its namespaces and processes (trap EXIT).
set -u

UDP_FLOOD=${3:-} # usage: netns_cores.sh PATH-TO-INART PATH-TO-ALLREDUCE [PATH-TO-UDP-FLOOD]
. "$(dirname "${BASH_SOURCE[0]}")/netns_lib.sh" netns_cores.sh "$@" # INART ALLREDUCE, skip, run

P="inh24s$$-"
IO=${INART_IO:-}
[ "$IO" = xdp ] && FABRIC_QUEUES=2 # read by fabric.sh: a socket per queue and worker
. "$(dirname "${BASH_SOURCE[0]}")/fabric.sh" # tmp, pids, nss, ns, fabric_*

declare -A IP MAC PORTS DPID
fabric_w3p2_io 78

# --- the option's limits -------------------------------------------------------
"$INART" switchd --name x --port 1:2 --io udp --cores 2 --ctl "$tmp/x.sock" --check-config \
	>"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "several cores" "$tmp/out"; then ok; else bad "--cores 2 --io udp refused (exit $rc): $(cat "$tmp/out")"; fi
# (seeded loss works at --cores N: a gate per worker, tests/chaos.sh at
# INART_CORES=2; the aggregation limit, one token bucket, does not)
ip netns exec "$(ns t0)" "$INART" switchd --name x --port p0 --cores 2 --agg-mbps 100 \
	--ctl "$tmp/x.sock" --check-config >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "several cores" "$tmp/out"; then ok; else bad "--cores 2 --agg-mbps refused (exit $rc): $(cat "$tmp/out")"; fi
ip netns exec "$(ns t0)" "$INART" switchd --name x --port p0 --cores 2 --rx-loss 0.1 \
	--ctl "$tmp/x.sock" --check-config >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "--cores 2 --rx-loss accepted (exit $rc): $(cat "$tmp/out")"; fi
"$INART" switchd --name x --port p0 --cores 0 --ctl "$tmp/x.sock" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ]; then ok; else bad "--cores 0 is a usage error (exit $rc)"; fi

# --- one queue: refused by xdp, auto falls back -----------------------------------
if [ "$IO" = xdp ]; then
	run ip -n "$(ns t0)" link add q1a type veth peer name q1b &&
		run ip -n "$(ns t0)" link set q1a up && run ip -n "$(ns t0)" link set q1b up
	ip netns exec "$(ns t0)" "$INART" switchd --name x --port q1a --io xdp --cores 2 \
		--ctl "$tmp/x.sock" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "needs 2" "$tmp/out"; then ok; else bad "--io xdp --cores 2 on one queue exits 1 (exit $rc): $(cat "$tmp/out")"; fi
	ip netns exec "$(ns t0)" "$INART" switchd --name x --port q1a --io auto --cores 2 \
		--ctl "$tmp/x.sock" --user root 2>"$tmp/auto.log" &
	xp=$!
	pids+=($xp)
	fabric_wait_socks "$tmp/x.sock"
	fabric_stop $xp
	if grep -q -- "--io auto: ring (xdp not used: .*needs 2" "$tmp/auto.log"; then ok; else bad "--io auto --cores 2 on one queue takes ring, saying why: $(cat "$tmp/auto.log")"; fi
	ip -n "$(ns t0)" link del q1a
fi

# --- daemons -------------------------------------------------------------------
if [ "$IO" = xdp ]; then
	fabric_daemon t0 --io xdp --cores 2
	fabric_daemon t1 --io auto --cores 2 # auto takes xdp where every port has 2 queues
else
	fabric_daemon t0 --io ring --cores 2
	fabric_daemon t1 --io mmsg --cores 2
fi
fabric_daemon p0
fabric_daemon p1
for s in t0 t1; do
	"$INART" ctl send "$tmp/$s.sock" '{"op": "info"}' >"$tmp/out" 2>&1
	if grep -q '"cores": *2' "$tmp/out" && { [ "$IO" != xdp ] || grep -q '"io": *"xdp"' "$tmp/out"; }; then ok; else
		bad "$s runs 2 cores${IO:+ on $IO}: $(head -c 300 "$tmp/out"; cat "$tmp/$s.log")"
	fi
done
if "$INART" plan "$tmp/topo.json" "$tmp/jobs.json" --algo inart -o "$tmp/plan.json" \
	>"$tmp/out" 2>&1 && fabric_install; then
	ok
else
	bad "plan and install: $(cat "$tmp/out" "$tmp/install.log")"
fi

if command -v ping >/dev/null 2>&1; then
	if ip netns exec "$(ns w0)" ping -c 3 -i 0.2 -W 2 "${IP[p1]}" >"$tmp/out" 2>&1; then ok; else bad "ping w0 -> p1: $(cat "$tmp/out")"; fi
	if ip netns exec "$(ns w2)" ping -c 2 -i 0.2 -W 2 "${IP[w1]}" >"$tmp/out" 2>&1; then ok; else bad "ping w2 -> w1: $(cat "$tmp/out")"; fi
else
	skipped 2 "ping missing (scripts/deps.sh installs iputils-ping)"
fi

fabric_exact_sizes

"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/t0.stats" 2>&1
sum() { grep -o "\"$1\": [0-9]*" "$tmp/t0.stats" | awk '{s += $2} END {print s + 0}'; }
agg=$(sum aggregated) emitted=$(sum emitted) partial=$(sum partial)
if [ "$agg" -gt 0 ] && [ $((emitted + partial)) -gt 0 ]; then ok; else bad "t0 aggregated (aggregated $agg, emitted $emitted, partial $partial)"; fi
shards=$(tr -d ' \n' <"$tmp/t0.stats" | grep -o '"shard_rx_pkts":\[[0-9,]*\]')
case $shards in
*:\[[1-9]*,[1-9]*\]) ok ;;
*) bad "both of t0's shards received frames: '$shards'" ;;
esac

# --- a non-InArt flood beside an all-reduce ----------------------------------------
if [ -n "$UDP_FLOOD" ]; then
	tsum() { # tsum PYTHON-EXPRESSION over t0's stats JSON (j)
		"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/fl.json" 2>&1 &&
			/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" \
				"$tmp/fl.json"
	}
	seen='sum(p["rx_pkts"] for p in j["ports"])'
	nr0=$(tsum 'j["drops"]["no_route"]') rx0=$(tsum "$seen")
	# an address no switch has a route for, reached through the first hop
	run ip -n "$(ns w2)" route replace 10.254.0.0/24 via "${IP[p1]}" dev eth0
	ip netns exec "$(ns w2)" "$UDP_FLOOD" "${IP[w2]}" "${IP[p1]}" 9 2 >"$tmp/fl1.out" 2>&1 &
	f1=$!
	ip netns exec "$(ns w2)" "$UDP_FLOOD" "${IP[w2]}" 10.254.0.1 9 2 >"$tmp/fl2.out" 2>&1 &
	f2=$!
	pids+=($f1 $f2)
	if fabric_allreduce 100000 3; then ok; else
		bad "all-reduce exact beside a UDP flood"
		cat "$tmp"/w?.out | head -20
		fabric_dump_stats t0 t1 p0 p1
	fi
	wait $f1
	wait $f2
	s1=$(awk '/^sent/ {print $2}' "$tmp/fl1.out") s2=$(awk '/^sent/ {print $2}' "$tmp/fl2.out")
	sleep 0.3
	nr1=$(tsum 'j["drops"]["no_route"]') rx1=$(tsum "$seen")
	echo "netns_cores.sh: flood: sent ${s1:-?} to p1 and ${s2:-?} unrouted" \
		"($(awk '/^sent/ {print $4}' "$tmp/fl1.out") + $(awk '/^sent/ {print $4}' "$tmp/fl2.out") pps);" \
		"t0 rx ${rx0:-?} -> ${rx1:-?}, no_route ${nr0:-?} -> ${nr1:-?}${IO:+, xdp $(tsum 'j["xdp"]')}"
	if [ "${s1:-0}" -ge 10000 ] && [ "${s2:-0}" -ge 10000 ]; then ok; else
		bad "the flood sent ${s1:-0} and ${s2:-0} datagrams: $(cat "$tmp/fl1.out" "$tmp/fl2.out")"
	fi
	# the unrouted flood reached t0 and was dropped as no_route (frames the
	# kernel lost on the way, e.g. a full veth queue, are not t0's to count)
	if [ $((${nr1:-0} - ${nr0:-0})) -ge 1000 ] && [ $((${rx1:-0} - ${rx0:-0})) -ge $((${nr1:-0} - ${nr0:-0})) ]; then ok; else
		bad "the flood counted at t0: no_route ${nr0:-?} -> ${nr1:-?}, rx ${rx0:-?} -> ${rx1:-?}"
	fi
	for d in t0 t1; do
		if kill -0 "${DPID[$d]}" 2>/dev/null; then ok; else bad "$d still running after the flood: $(tail -5 "$tmp/$d.log")"; fi
	done
	if fabric_allreduce 1000 2; then ok; else bad "all-reduce exact after the flood"; fi
fi

# --- the kernel steers by (job, tree, slot) --------------------------------------
# w0 sends InArt frames of a job t0 has no entry for (dropped at the first
# hop, but counted by the shard that received them), 4 of each slot 0..7;
# the shard each must reach is computed here from docs/dataplane.md's
# formula, independently of the C code
fabric_shard_steer

# --- parking under traffic: counters reset again and again during a run ----------
fabric_parked_exact

# --- aggregation state lost (every shard) --------------------------------------------
out=$("$INART" ctl send "$tmp/t0.sock" '{"op": "lose_state"}' 2>&1)
case $out in *busy_slots*) ok ;; *) bad "lose_state: $out" ;; esac
if fabric_allreduce 100000 3; then ok; else
	bad "all-reduce exact after lose-state"
	fabric_dump_stats t0 t1 p0 p1
fi
for d in t0 t1; do
	if kill -0 "${DPID[$d]}" 2>/dev/null; then ok; else bad "$d still running: $(tail -5 "$tmp/$d.log")"; fi
done

if [ "$IO" = xdp ]; then
	# --- SIGKILL: nothing left attached ----------------------------------------------------
	kill -9 "${DPID[t0]}"
	wait "${DPID[t0]}" 2>/dev/null
	sleep 0.2
	left=$(ip -n "$(ns t0)" link show | grep -c ' xdp')
	if [ "$left" -eq 0 ]; then ok; else bad "XDP programs left on t0's interfaces after SIGKILL: $left"; fi

	# --- a port that vanishes while both workers run: the others go on -------------
	rm -f "$tmp/t0.sock"
	fabric_daemon t0 --io xdp --cores 2
	if fabric_install; then ok; else bad "install after t0's restart: $(tail -5 "$tmp/install.log")"; fi
	ip -n "$(ns t0)" link del p2 # w2's link
	if command -v ping >/dev/null 2>&1; then
		if ip netns exec "$(ns w0)" ping -c 2 -i 0.2 -W 2 "${IP[w1]}" >"$tmp/out" 2>&1; then ok; else bad "ping w0 -> w1 after t0's p2 was deleted: $(cat "$tmp/out")"; fi
	else
		skipped 1 "ping missing (scripts/deps.sh installs iputils-ping)"
	fi
	if kill -0 "${DPID[t0]}" 2>/dev/null && "$INART" ctl stats "$tmp/t0.sock" >/dev/null 2>&1; then ok; else
		bad "t0 (--io xdp --cores 2) runs and answers after its port p2 was deleted: $(tail -5 "$tmp/t0.log")"
	fi
	fabric_stop "${DPID[t0]}"
	left=$(ip -n "$(ns t0)" link show | grep -c ' xdp')
	if [ "$left" -eq 0 ]; then ok; else bad "XDP programs left on t0's interfaces after SIGTERM: $left"; fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
