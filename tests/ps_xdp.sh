#!/usr/bin/env bash
# ps_xdp.sh INART ALLREDUCE: `inart ps --io xdp|auto` (issue 24): the PS
# receives and sends its InArt datagrams as frames on an AF_XDP socket of
# its interface (io/xsk's host set, bpf/xdp_host.bpf.c), everything else
# passed to the kernel.  The fabric of netns_cores.sh (w0 w1 w2 -- t0 (INA)
# -- t1 -- p0 p1), switches on AF_PACKET, p0 with --io xdp, p1 with --io
# auto:
#   - both PSs report the xdp back end and have an XDP program on eth0;
#   - ping to the PSs (ARP and ICMP reach the kernel's stack);
#   - all-reduces are bit-exact (several sizes and iterations); p0's program
#     steered InArt frames to the socket and passed other frames up; p0 runs
#     as nobody after start-up;
#   - SIGKILL: no XDP program stays on the interface; p0 starts again on
#     xdp, and all-reduces are exact again; SIGTERM: the same;
#   - --io xdp exits 1 with the reason on the loopback address, on an
#     address the host does not have and on an interface with two receive
#     queues, where --io auto takes udp and says why in one log line.
# Needs root and `ip netns`; exits 77 (skipped) otherwise (INART_NO_SKIP=1:
# a failure).  Removes its namespaces and processes (trap EXIT).
set -u

. "$(dirname "${BASH_SOURCE[0]}")/netns_lib.sh" ps_xdp.sh "$@" # INART ALLREDUCE, skip, run

P="inh24p$$-"
. "$(dirname "${BASH_SOURCE[0]}")/fabric.sh" # tmp, pids, nss, ns, fabric_*

declare -A IP MAC PORTS DPID
if ! run fabric_w3p2 80; then
	echo "0 passed, 1 failed, $skip skipped"
	exit 1
fi

has_xdp() { ip -n "$(ns "$1")" link show eth0 | grep -q ' xdp'; }
io_of() { "$INART" ctl send "$tmp/$1.sock" '{"op": "info"}' 2>&1 | tr -d ' \n' |
	grep -o '"io":"[a-z]*"'; }

fabric_daemon t0 --io ring
fabric_daemon t1 --io ring
fabric_daemon p0 --io xdp
fabric_daemon p1 --io auto
for p in p0 p1; do
	io=$(io_of $p)
	if [ "$io" = '"io":"xdp"' ]; then ok; else bad "$p runs on xdp: '$io' $(cat "$tmp/$p.log")"; fi
	if has_xdp $p; then ok; else bad "$p: an XDP program on eth0"; fi
done
if "$INART" plan "$tmp/topo.json" "$tmp/jobs.json" --algo inart -o "$tmp/plan.json" \
	>"$tmp/out" 2>&1 && fabric_install; then
	ok
else
	bad "plan and install: $(cat "$tmp/out" "$tmp/install.log")"
fi
uid=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/${DPID[p0]}/status" 2>/dev/null)
case " $uid " in
"" | *" 0 "*) bad "p0 runs as root after start-up (uids: '$uid')" ;;
*) ok ;;
esac

if command -v ping >/dev/null 2>&1; then
	for p in p0 p1; do
		if ip netns exec "$(ns w0)" ping -c 2 -i 0.2 -W 2 "${IP[$p]}" >"$tmp/out" 2>&1; then ok; else bad "ping w0 -> $p: $(cat "$tmp/out")"; fi
	done
else
	skipped 2 "ping missing (scripts/deps.sh installs iputils-ping)"
fi

fabric_exact_sizes

"$INART" ctl stats "$tmp/p0.sock" --json >"$tmp/p0.stats" 2>&1
xget() { tr -d ' \n' <"$tmp/p0.stats" | grep -o "\"xdp\":{[^}]*}" | grep -o "\"$1\":[0-9]*" | cut -d: -f2; }
ina=$(xget ina) up=$(xget pass)
if [ "${ina:-0}" -gt 100 ] && [ "${up:-0}" -gt 0 ]; then ok; else bad "p0's program steered InArt up and passed the rest (ina '$ina', pass '$up'): $(head -c 600 "$tmp/p0.stats")"; fi

# --- detach: SIGKILL, then SIGTERM ---------------------------------------------
kill -9 "${DPID[p0]}"
wait "${DPID[p0]}" 2>/dev/null
sleep 0.2
if has_xdp p0; then bad "an XDP program stays on p0's eth0 after SIGKILL: $(ip -n "$(ns p0)" link show eth0)"; else ok; fi
fabric_daemon p0 --io xdp
if [ "$(io_of p0)" = '"io":"xdp"' ] && has_xdp p0; then ok; else bad "p0 attaches again after SIGKILL: $(tail -3 "$tmp/p0.log")"; fi
if fabric_install && fabric_allreduce 100000 3; then ok; else
	bad "all-reduce exact after p0 restarted on xdp"
	cat "$tmp"/w?.out | head -10
	fabric_dump_stats t1 p0 p1
fi
fabric_stop "${DPID[p1]}"
if has_xdp p1; then bad "an XDP program stays on p1's eth0 after SIGTERM"; else ok; fi

# --- where AF_XDP cannot be had ------------------------------------------------
"$INART" ps --bind 127.0.0.1 --io xdp --ctl "$tmp/x.sock" --user root >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "loopback" "$tmp/out"; then ok; else bad "--io xdp on 127.0.0.1 exits 1 (exit $rc): $(cat "$tmp/out")"; fi
ip netns exec "$(ns p1)" "$INART" ps --bind 10.80.9.9 --io xdp --ctl "$tmp/x.sock" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "not an address" "$tmp/out"; then ok; else bad "--io xdp on a missing address exits 1 (exit $rc): $(cat "$tmp/out")"; fi
# an interface with two receive queues: refused by xdp, auto falls back
if run ip -n "$(ns p1)" link add mq0 numrxqueues 2 numtxqueues 2 type veth peer name mq1 numrxqueues 2 numtxqueues 2 &&
	run ip -n "$(ns p1)" addr add 10.80.8.1/24 dev mq0 && run ip -n "$(ns p1)" link set mq0 up &&
	run ip -n "$(ns p1)" link set mq1 up; then
	ip netns exec "$(ns p1)" "$INART" ps --bind 10.80.8.1 --io xdp --ctl "$tmp/x.sock" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "receive queues" "$tmp/out"; then ok; else bad "--io xdp on 2 queues exits 1 (exit $rc): $(cat "$tmp/out")"; fi
	ip netns exec "$(ns p1)" "$INART" ps --bind 10.80.8.1 --io auto --ctl "$tmp/x.sock" 2>"$tmp/auto.log" &
	xp=$!
	pids+=($xp)
	fabric_wait_socks "$tmp/x.sock"
	fabric_stop $xp
	if [ "$(grep -c -- '--io auto' "$tmp/auto.log")" -eq 1 ] &&
		grep -q -- "--io auto: udp (xdp not used: .*receive queues" "$tmp/auto.log"; then
		ok
	else
		bad "--io auto on 2 queues: udp, one log line saying why: $(cat "$tmp/auto.log")"
	fi
	if ip -n "$(ns p1)" link show mq0 | grep -q ' xdp'; then bad "a program left on mq0"; else ok; fi
else
	bad "a veth with two queues"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
