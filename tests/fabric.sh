# fabric.sh: sourced by the network-namespace tests (netns.sh, chaos.sh)
# and benches (recovery_bench.sh, install_bench.sh) to build a fabric of
# namespaces and veth pairs and clean it up.  The caller sets P (a per-run
# prefix of namespace names: include the helper name and $$), and the
# associative arrays IP and MAC (addresses of the hosts); it
# gets $tmp (a scratch directory), pids (processes it started: killed at
# exit, by PID), nss (namespaces: deleted at exit).
#   ns NAME                the namespace of node NAME
#   fabric_ns NAME...      create the namespaces (lo up, no IPv6)
#   fabric_host H S SIF    host H's eth0 <-> switch S's interface SIF
#   fabric_trunk S1 IF1 S2 IF2   a link between two switches
#   fabric_wait_socks PATH...    wait up to 5 s for the control sockets
#   fabric_stop PID        stop a process we started (TERM, then KILL)
#   fabric_daemon NODE [OPTION...]  start NODE's daemon: switchd (t*: on the
#                          interfaces ${PORTS[NODE]}) or ps (p*: bound to
#                          ${IP[NODE]}), with the OPTIONs, as $INART, control
#                          socket $tmp/NODE.sock, log $tmp/NODE.log;
#                          DPID[NODE] = its PID (the caller declares the
#                          associative arrays PORTS and DPID); waits for the socket
#   fabric_install         `ctl install` of $tmp/{topo,jobs,plan,deploy}.json
#                          (the first install, and the documented recovery),
#                          output appended to $tmp/install.log
#   fabric_allreduce VALUES ITERS [keep]   job j0 on workers w0..w2 at once
#                          ($ALLREDUCE, the example worker), after an install
#                          with --restart-jobs (unless keep); fails unless all
#                          three exit 0 (exact); outputs in $tmp/wR.out
#   fabric_dump_stats NODE...  every node's `ctl stats`, indented
#   fabric_exact_sizes     t0's counters reset, then all-reduces of 1, 1000 and
#                          100000 values x 3 iterations, each exact, and 3
#                          exact iterations reported (ok / bad: tests/skip.sh)
#   fabric_shard_steer     (t0 at --cores 2) w0 sends, from CPU 0, InArt frames of
#                          a job t0 does not have, 4 of each slot 0..7; each
#                          must be counted (shard_rx_pkts) on the shard
#                          docs/dataplane.md's formula gives, computed here in
#                          Python (ok / bad)
#   fabric_parked_exact [NODE...]  an exact all-reduce while t0's counters
#                          (or those of the NODEs) are reset (the workers
#                          parked) again and again (ok / bad)
#   fabric_w3p2 NET        the fabric w0 w1 w2 -- t0 (INA) -- t1 -- p0 p1:
#                          addresses 10.NET.0.x, $tmp/{topo,jobs,deploy}.json,
#                          IP, MAC and PORTS filled (the caller declares them
#                          associative), namespaces and links built
#   fabric_w3p2_io NET     (with netns_lib.sh's run) fabric_w3p2 NET, then (IO=xdp) GRO on in every
#                          host; on failure says so and exits 1
# Setup steps return non-zero on failure (the caller decides).

tmp=$(mktemp -d)
pids=()
nss=()

fabric_stop() {
	local pid=$1
	kill "$pid" 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

fabric_cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		fabric_stop "$pid"
	done
	for n in "${nss[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap fabric_cleanup EXIT
trap 'exit 1' INT TERM

ns() { echo "${P}$1"; }

fabric_ns() {
	local n
	for n in "$@"; do
		ip netns add "$(ns "$n")" || return 1
		nss+=("$(ns "$n")")
		ip -n "$(ns "$n")" link set lo up
		ip netns exec "$(ns "$n")" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
		ip netns exec "$(ns "$n")" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
	done
}

# FABRIC_QUEUES=N: every veth with N receive and transmit queues (switchd
# --io xdp --cores N needs N)
fabric_q() { [ -n "${FABRIC_QUEUES:-}" ] && echo "numrxqueues $FABRIC_QUEUES numtxqueues $FABRIC_QUEUES"; }

fabric_host() { # host switch switch-ifname
	local h=$1 s=$2 sif=$3
	# shellcheck disable=SC2046
	ip link add name eth0 $(fabric_q) netns "$(ns "$h")" type veth peer name "$sif" $(fabric_q) \
		netns "$(ns "$s")" &&
		ip -n "$(ns "$h")" link set eth0 address "${MAC[$h]}" &&
		ip -n "$(ns "$h")" addr add "${IP[$h]}/24" dev eth0 &&
		ip -n "$(ns "$h")" link set eth0 up &&
		ip -n "$(ns "$s")" link set "$sif" up || return 1
	# a user-space switch passes frames on as they are: checksums must be
	# complete when they leave the host
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$(ns "$h")" ethtool -K eth0 tx off >/dev/null 2>&1
	fi
	return 0
}

fabric_trunk() { # switch1 if1 switch2 if2
	# shellcheck disable=SC2046
	ip link add name "$2" $(fabric_q) netns "$(ns "$1")" type veth peer name "$4" $(fabric_q) \
		netns "$(ns "$3")" &&
		ip -n "$(ns "$1")" link set "$2" up && ip -n "$(ns "$3")" link set "$4" up
}

fabric_wait_socks() {
	local s
	for s in "$@"; do
		for _ in $(seq 50); do
			[ -S "$s" ] && break
			sleep 0.1
		done
	done
}

fabric_daemon() {
	local n=$1
	shift
	rm -f "$tmp/$n.sock"
	case $n in
	t*) ip netns exec "$(ns "$n")" "$INART" switchd --name "$n" --port "${PORTS[$n]}" \
		--ctl "$tmp/$n.sock" "$@" --log-level warn 2>>"$tmp/$n.log" & ;;
	p*) ip netns exec "$(ns "$n")" "$INART" ps --name "$n" --bind "${IP[$n]}" \
		--ctl "$tmp/$n.sock" "$@" --log-level warn 2>>"$tmp/$n.log" & ;;
	esac
	DPID[$n]=$!
	pids+=($!)
	fabric_wait_socks "$tmp/$n.sock"
}

fabric_install() {
	"$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
		--deploy "$tmp/deploy.json" >>"$tmp/install.log" 2>&1
}

fabric_allreduce() {
	local n=$1 iters=$2 r rc=0 wp=()
	# a new run of the job: workers number all-reduces from 1 again, so
	# the PS trees are restarted (--restart-jobs) (unless "keep": then the
	# PSs must see the restart themselves)
	if [ "${3:-}" != keep ]; then
		"$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
			--deploy "$tmp/deploy.json" --restart-jobs >/dev/null 2>&1 || return 1
	fi
	for r in 0 1 2; do
		# FABRIC_TASKSET=1: worker r pinned to CPU r mod the CPUs (senders on
		# every CPU: veth receives on the sender's)
		${FABRIC_TASKSET:+taskset -c $((r % $(nproc)))} \
		ip netns exec "$(ns w$r)" "$ALLREDUCE" "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
			j0 $r --deploy "$tmp/deploy.json" -n "$n" --iters "$iters" --workers 3 \
			--timeout-ms 20000 >"$tmp/w$r.out" 2>&1 &
		wp+=($!)
		pids+=($!)
	done
	for r in 0 1 2; do
		wait "${wp[$r]}" || rc=1
	done
	return $rc
}

fabric_dump_stats() {
	local d
	for d in "$@"; do
		echo "  -- $d"
		"$INART" ctl stats "$tmp/$d.sock" 2>&1 | sed 's/^/  | /'
	done
}

fabric_w3p2() {
	local n=$1
	cat >"$tmp/topo.json" <<'EOF'
{"nodes": [{"id": "w0", "kind": "host"}, {"id": "w1", "kind": "host"}, {"id": "w2", "kind": "host"},
           {"id": "p0", "kind": "host"}, {"id": "p1", "kind": "host"},
           {"id": "t0", "kind": "switch", "ina": {"agg_gbps": 100, "trees": 4}},
           {"id": "t1", "kind": "switch"}],
 "links": [{"a": "w0", "b": "t0", "gbps": 10}, {"a": "w1", "b": "t0", "gbps": 10},
           {"a": "w2", "b": "t0", "gbps": 10}, {"a": "t0", "b": "t1", "gbps": 10},
           {"a": "t1", "b": "p0", "gbps": 10}, {"a": "t1", "b": "p1", "gbps": 10}]}
EOF
	echo '{"jobs": [{"id": "j0", "workers": ["w0", "w1", "w2"], "ps": ["p0", "p1"], "gradient_bytes": 1000000}]}' \
		>"$tmp/jobs.json"
	IP=([w0]=10.$n.0.1 [w1]=10.$n.0.2 [w2]=10.$n.0.3 [p0]=10.$n.0.4 [p1]=10.$n.0.5
		[t0]=10.$n.0.101 [t1]=10.$n.0.102)
	MAC=([w0]=02:$n:00:00:00:01 [w1]=02:$n:00:00:00:02 [w2]=02:$n:00:00:00:03
		[p0]=02:$n:00:00:00:04 [p1]=02:$n:00:00:00:05)
	PORTS=([t0]=p0,p1,p2,p3 [t1]=p0,p1,p2)
	cat >"$tmp/deploy.json" <<EOF
{"nodes": {
  "w0": {"ip": "${IP[w0]}", "mac": "${MAC[w0]}"}, "w1": {"ip": "${IP[w1]}", "mac": "${MAC[w1]}"},
  "w2": {"ip": "${IP[w2]}", "mac": "${MAC[w2]}"},
  "p0": {"ip": "${IP[p0]}", "mac": "${MAC[p0]}", "ctl": "$tmp/p0.sock"},
  "p1": {"ip": "${IP[p1]}", "mac": "${MAC[p1]}", "ctl": "$tmp/p1.sock"},
  "t0": {"ip": "${IP[t0]}", "ctl": "$tmp/t0.sock",
         "ports": {"w0": {"port": 0}, "w1": {"port": 1}, "w2": {"port": 2}, "t1": {"port": 3}}},
  "t1": {"ip": "${IP[t1]}", "ctl": "$tmp/t1.sock",
         "ports": {"t0": {"port": 0}, "p0": {"port": 1}, "p1": {"port": 2}}}
}}
EOF
	fabric_ns w0 w1 w2 p0 p1 t0 t1 && fabric_host w0 t0 p0 && fabric_host w1 t0 p1 &&
		fabric_host w2 t0 p2 && fabric_trunk t0 p3 t1 p0 && fabric_host p0 t1 p1 &&
		fabric_host p1 t1 p2
}

fabric_exact_sizes() {
	local size
	"$INART" ctl reset-stats "$tmp/t0.sock" >/dev/null 2>&1
	for size in 1 1000 100000; do
		if fabric_allreduce $size 3; then
			ok
		else
			bad "all-reduce of $size values x 3 iterations"
			cat "$tmp"/w?.out | head -20
			fabric_dump_stats t0 t1 p0 p1
		fi
	done
	if grep -c exact "$tmp/w0.out" | grep -qx 3; then ok; else bad "worker 0 reports 3 exact iterations"; fi
}

# Each node's daemon log ($tmp/NODE.log) free of errors and sanitizer reports.
fabric_logs_clean() {
	local f
	for f in "$@"; do
		if grep -qiE "error|sanitizer" "$tmp/$f.log"; then
			bad "$f log has errors"
			head -5 "$tmp/$f.log"
		fi
	done
}

fabric_shard_steer() {
	local a0 a1 b0 b1 want w0n w1n
	read -r a0 a1 <<<"$(fabric_shard_rx)"
	want=$(ip netns exec "$(ns w0)" taskset -c 0 /usr/bin/python3 - "${MAC[w0]}" "${IP[w0]}" "${IP[p0]}" <<'PY'
import socket, struct, sys
K1, K2, M = 0x9E3779B1, 0x85EBCA6B, 0xffffffff
def mix(a, b):
    y = (((a * K1) & M) ^ b) * K2 & M
    return y ^ (y >> 16)
def shard(job, tree, slot, n):
    return (mix(job, tree) % n + slot) % n
mac = bytes.fromhex(sys.argv[1].replace(':', ''))
src, dst = socket.inet_aton(sys.argv[2]), socket.inet_aton(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('eth0', 0))
job, want = 999, [0, 0]
for slot in range(8):
    ina = struct.pack('!BBBbIHHIIIHHI', 1, 1, 1, 16, job, 0, 3, 0, 1, slot, slot, 0, 0)
    ina += struct.pack('!Q', 1)
    udp = struct.pack('!HHHH', 40000, 47470, 8 + len(ina), 0) + ina
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, src, dst)
    c = sum(struct.unpack('!10H', ip))
    c = (c & 0xffff) + (c >> 16)
    c = (c & 0xffff) + (c >> 16)
    ip = ip[:10] + struct.pack('!H', ~c & 0xffff) + ip[12:]
    frame = b'\xff' * 6 + mac + b'\x08\x00' + ip + udp
    for _ in range(4):
        s.send(frame)
    want[shard(job, 0, slot, 2)] += 4
print(want[0], want[1])
PY
)
	sleep 0.3
	read -r b0 b1 <<<"$(fabric_shard_rx)"
	read -r w0n w1n <<<"$want"
	if [ -n "$w0n" ] && [ -n "$b1" ] && [ $((b0 - a0)) -ge "$w0n" ] && [ $((b1 - a1)) -eq "$w1n" ] &&
		[ "$w1n" -gt 0 ]; then
		ok
	else
		bad "InArt frames reach the shard of their slot: sent $want (shard 0, 1), received $((${b0:-0} - ${a0:-0})) $((${b1:-0} - ${a1:-0}))"
	fi
}

fabric_shard_rx() { "$INART" ctl stats "$tmp/t0.sock" --json 2>/dev/null | tr -d ' \n' |
	grep -o '"shard_rx_pkts":\[[0-9,]*\]' | grep -o '[0-9][0-9,]*' | tr ',' ' '; }

fabric_parked_exact() {
	local ap n
	fabric_allreduce 200000 10 &
	ap=$!
	pids+=($ap)
	while kill -0 $ap 2>/dev/null; do
		if [ $# -eq 0 ]; then
			"$INART" ctl reset-stats "$tmp/t0.sock" >/dev/null 2>&1
			"$INART" ctl stats "$tmp/t1.sock" >/dev/null 2>&1
		fi
		for n in "$@"; do
			"$INART" ctl reset-stats "$tmp/$n.sock" >/dev/null 2>&1
		done
		sleep 0.05
	done
	if wait $ap; then ok; else
		bad "all-reduce exact while the counters are reset (the workers parked) again and again"
		cat "$tmp"/w?.out | head -20
		fabric_dump_stats t0 t1 p0 p1
	fi
}

fabric_w3p2_io() {
	local h
	if ! run fabric_w3p2 "$1"; then
		echo "0 passed, 1 failed, $skip skipped"
		exit 1
	fi
	if [ "${IO:-}" = xdp ]; then
		# a frame the XDP program redirects into a host's veth needs GRO there
		for h in w0 w1 w2 p0 p1; do
			ip netns exec "$(ns $h)" ethtool -K eth0 gro on >/dev/null 2>&1
		done
	fi
}
