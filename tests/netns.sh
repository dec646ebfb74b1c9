#!/usr/bin/env bash
# netns.sh INART ALLREDUCE: the data plane through real sockets.  Builds a
# two-switch fabric out of network namespaces and veth pairs (names carry a
# per-run prefix), runs `inart switchd` for each switch (AF_PACKET), `inart
# ps` for two PSs and the example worker (examples/allreduce.c, public API)
# on three hosts, installs a plan with `inart ctl install`, and checks:
#   - ping works through both switches (plain IPv4 forwarding, proxy ARP);
#   - all-reduces are bit-exact (several iterations, several sizes);
#   - the switch aggregated (per-tree counters) and counts per port;
#   - the all-reduce stays exact while a switch loses its aggregation state
#     repeatedly (`inart ctl lose-state`);
#   - malformed or inconsistent control messages are refused with a reason
#     and leave the tables as they were;
#   - a bad/unknown label packet is dropped and counted, never crashes.
#
# t0 uses PACKET_MMAP rings, t1 recvmmsg/sendmmsg: both back ends are tested.
#
#     w0 --\                      /-- p0
#     w1 ---- t0 (INA) ------- t1
#     w2 --/                      \-- p1
#
# Needs root and `ip netns`; exits 77 (skipped) otherwise.  Always removes
# its namespaces and kills the processes it started, by PID (trap EXIT).
# Prints "N passed, N failed, N skipped"; exits 1 if anything failed.  Checks
# that cannot run here (no ping, no python3) are counted as skipped and named;
# with INART_NO_SKIP=1 (CI: .ci/run) a skip, the whole script's included,
# counts as a failure.
set -u

INART=${1:?usage: netns.sh PATH-TO-INART PATH-TO-ALLREDUCE}
ALLREDUCE=${2:?usage: netns.sh PATH-TO-INART PATH-TO-ALLREDUCE}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
case $ALLREDUCE in /*) ;; *) ALLREDUCE=$PWD/$ALLREDUCE ;; esac

. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # skipped N WHY, skip_all NAME WHY
if [ "$(id -u)" -ne 0 ]; then
	skip_all netns.sh "not root"
fi
if ! command -v ip >/dev/null 2>&1 || ! ip netns list >/dev/null 2>&1; then
	skip_all netns.sh "'ip netns' unavailable"
fi

P="inart$$-"
tmp=$(mktemp -d)
pids=()
nss=()

cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
	done
	for ns in "${nss[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

pass=0
fail=0
skip=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}
check() { # check DESC -- CMD...: CMD must succeed
	local desc=$1
	shift 2
	if "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; then
		ok
	else
		bad "$desc (exit $?)"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -20
	fi
}

setup_ok=1
run() { # setup step: any failure aborts the test
	if ! "$@" >"$tmp/setup.err" 2>&1; then
		echo "netns.sh: setup failed: $*"
		sed 's/^/  | /' "$tmp/setup.err" | head -20
		setup_ok=0
		return 1
	fi
}

ns() { echo "${P}$1"; }

# --- topology, jobs, deployment -------------------------------------------
cat >"$tmp/topo.json" <<'EOF'
{
  "nodes": [
    {"id": "w0", "kind": "host"},
    {"id": "w1", "kind": "host"},
    {"id": "w2", "kind": "host"},
    {"id": "p0", "kind": "host"},
    {"id": "p1", "kind": "host"},
    {"id": "t0", "kind": "switch", "ina": {"agg_gbps": 100, "trees": 4}},
    {"id": "t1", "kind": "switch"}
  ],
  "links": [
    {"a": "w0", "b": "t0", "gbps": 10},
    {"a": "w1", "b": "t0", "gbps": 10},
    {"a": "w2", "b": "t0", "gbps": 10},
    {"a": "t0", "b": "t1", "gbps": 10},
    {"a": "t1", "b": "p0", "gbps": 10},
    {"a": "t1", "b": "p1", "gbps": 10}
  ]
}
EOF
cat >"$tmp/jobs.json" <<'EOF'
{"jobs": [{"id": "j0", "workers": ["w0", "w1", "w2"], "ps": ["p0", "p1"],
           "gradient_bytes": 1000000}]}
EOF
# hosts: address, MAC; switches: port order = the --port order below
declare -A IP=([w0]=10.77.0.1 [w1]=10.77.0.2 [w2]=10.77.0.3 [p0]=10.77.0.4 [p1]=10.77.0.5
	[t0]=10.77.0.101 [t1]=10.77.0.102)
declare -A MAC=([w0]=02:77:00:00:00:01 [w1]=02:77:00:00:00:02 [w2]=02:77:00:00:00:03
	[p0]=02:77:00:00:00:04 [p1]=02:77:00:00:00:05)
cat >"$tmp/deploy.json" <<EOF
{"nodes": {
  "w0": {"ip": "${IP[w0]}", "mac": "${MAC[w0]}"},
  "w1": {"ip": "${IP[w1]}", "mac": "${MAC[w1]}"},
  "w2": {"ip": "${IP[w2]}", "mac": "${MAC[w2]}"},
  "p0": {"ip": "${IP[p0]}", "mac": "${MAC[p0]}", "ctl": "$tmp/p0.sock"},
  "p1": {"ip": "${IP[p1]}", "mac": "${MAC[p1]}", "ctl": "$tmp/p1.sock"},
  "t0": {"ip": "${IP[t0]}", "ctl": "$tmp/t0.sock",
         "ports": {"w0": {"port": 0}, "w1": {"port": 1}, "w2": {"port": 2}, "t1": {"port": 3}}},
  "t1": {"ip": "${IP[t1]}", "ctl": "$tmp/t1.sock",
         "ports": {"t0": {"port": 0}, "p0": {"port": 1}, "p1": {"port": 2}}}
}}
EOF

# --- namespaces and links ----------------------------------------------------
for n in w0 w1 w2 p0 p1 t0 t1; do
	run ip netns add "$(ns $n)" || break
	nss+=("$(ns $n)")
	ip -n "$(ns $n)" link set lo up
	ip netns exec "$(ns $n)" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
	ip netns exec "$(ns $n)" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
done
host_link() { # host switch switch-ifname
	local h=$1 s=$2 sif=$3
	run ip link add name eth0 netns "$(ns $h)" type veth peer name "$sif" netns "$(ns $s)" &&
		run ip -n "$(ns $h)" link set eth0 address "${MAC[$h]}" &&
		run ip -n "$(ns $h)" addr add "${IP[$h]}/24" dev eth0 &&
		run ip -n "$(ns $h)" link set eth0 up &&
		run ip -n "$(ns $s)" link set "$sif" up
	# a user-space switch passes frames on as they are: checksums must be
	# complete when they leave the host
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$(ns $h)" ethtool -K eth0 tx off >/dev/null 2>&1
	fi
}
[ $setup_ok -eq 1 ] && host_link w0 t0 p0
[ $setup_ok -eq 1 ] && host_link w1 t0 p1
[ $setup_ok -eq 1 ] && host_link w2 t0 p2
[ $setup_ok -eq 1 ] && run ip link add name p3 netns "$(ns t0)" type veth peer name p0 netns "$(ns t1)" &&
	run ip -n "$(ns t0)" link set p3 up && run ip -n "$(ns t1)" link set p0 up
[ $setup_ok -eq 1 ] && host_link p0 t1 p1
[ $setup_ok -eq 1 ] && host_link p1 t1 p2
if [ $setup_ok -eq 0 ]; then
	echo "0 passed, 1 failed, $skip skipped"
	exit 1
fi
if ! command -v ethtool >/dev/null 2>&1; then
	echo "netns.sh: warning: ethtool missing; UDP checksum offload stays on (scripts/deps.sh installs it)"
fi

# --- daemons -------------------------------------------------------------------
ip netns exec "$(ns t0)" "$INART" switchd --name t0 --port p0,p1,p2,p3 --ctl "$tmp/t0.sock" \
	--io ring --log-level warn 2>"$tmp/t0.log" &
pids+=($!)
ip netns exec "$(ns t1)" "$INART" switchd --name t1 --port p0 --port p1,p2 --ctl "$tmp/t1.sock" \
	--io mmsg --log-level warn 2>"$tmp/t1.log" &
pids+=($!)
for p in p0 p1; do
	ip netns exec "$(ns $p)" "$INART" ps --name $p --bind "${IP[$p]}" --ctl "$tmp/$p.sock" \
		--log-level warn 2>"$tmp/$p.log" &
	pids+=($!)
done
for s in t0 t1 p0 p1; do
	for _ in $(seq 50); do
		[ -S "$tmp/$s.sock" ] && break
		sleep 0.1
	done
done
for s in t0 t1 p0 p1; do
	check "daemon $s listening" -- test -S "$tmp/$s.sock"
done
for s in t0:ring t1:mmsg; do
	"$INART" ctl send "$tmp/${s%:*}.sock" '{"op": "info"}' >"$tmp/out" 2>&1
	if grep -q "\"io\": *\"${s#*:}\"" "$tmp/out"; then ok; else bad "${s%:*} runs the ${s#*:} back end: $(cat "$tmp/out")"; fi
done

# --- plan and install ------------------------------------------------------------
check "plan" -- "$INART" plan "$tmp/topo.json" "$tmp/jobs.json" --algo inart -o "$tmp/plan.json"
check "ctl install" -- "$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
	--deploy "$tmp/deploy.json"
cp "$tmp/out" "$tmp/install.out"
"$INART" ctl show "$tmp/t0.sock" --json >"$tmp/t0.tables" 2>&1
if grep -q '"aggregate": true' "$tmp/t0.tables"; then ok; else bad "t0 has an aggregating label"; fi
check "ctl show (text)" -- "$INART" ctl show "$tmp/t0.sock"
check "ctl show (ps)" -- "$INART" ctl show "$tmp/p0.sock"

# --- plain IPv4 through the switches ---------------------------------------------
if command -v ping >/dev/null 2>&1; then
	check "ping w0 -> p1 through t0 and t1" -- ip netns exec "$(ns w0)" ping -c 3 -i 0.2 -W 2 "${IP[p1]}"
	check "ping w2 -> w1 through t0" -- ip netns exec "$(ns w2)" ping -c 2 -i 0.2 -W 2 "${IP[w1]}"
else
	skipped 2 "ping missing, ping checks skipped (scripts/deps.sh installs iputils-ping)"
fi

dump_stats() {
	local d
	for d in t0 t1 p0 p1; do
		echo "  -- $d"
		"$INART" ctl stats "$tmp/$d.sock" 2>&1 | sed 's/^/  | /'
	done
}

# --- all-reduce -----------------------------------------------------------------------
allreduce() { # allreduce VALUES ITERS [keep]: three workers at once, all must be exact
	local n=$1 iters=$2 r rc=0 wp=()
	# a new run of the job: workers number all-reduces from 1 again, so
	# the PS trees are restarted by installing again (unless "keep": then
	# the PSs must see the restart themselves)
	if [ "${3:-}" != keep ]; then
		"$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
			--deploy "$tmp/deploy.json" >/dev/null 2>&1 || return 1
	fi
	for r in 0 1 2; do
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
"$INART" ctl reset-stats "$tmp/t0.sock" >/dev/null 2>&1
for size in 1 1000 100000; do
	if allreduce $size 3; then
		ok
	else
		bad "all-reduce of $size values x 3 iterations"
		cat "$tmp"/w?.out | head -20
		dump_stats
	fi
done
if grep -c exact "$tmp/w0.out" | grep -qx 3; then ok; else bad "worker 0 reports 3 exact iterations"; fi

# the job started again without a new install: after a second of silence
# the PSs take fresh DATA of an old iteration as a restart (ps.h)
sleep 1.2
if allreduce 1000 2 keep; then
	ok
else
	bad "a restarted job, no new install"
	cat "$tmp"/w?.out | head -20
	dump_stats
fi
"$INART" ctl stats "$tmp/p0.sock" --json >"$tmp/p0.stats" 2>&1
restarts=$(grep -o '"restarts": [0-9]*' "$tmp/p0.stats" | awk '{print $2}')
if [ "${restarts:-0}" -ge 1 ]; then ok; else bad "p0 counted the restart (restarts ${restarts:-?})"; fi

"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/t0.stats" 2>&1
agg=$(grep -o '"aggregated": [0-9]*' "$tmp/t0.stats" | awk '{s += $2} END {print s + 0}')
if [ "$agg" -gt 0 ]; then ok; else bad "t0 aggregated contributions (got $agg)"; fi
check "switchd --stats" -- "$INART" switchd --stats --ctl "$tmp/t0.sock"
if grep -q "aggregated" "$tmp/out"; then ok; else bad "switchd --stats prints tree counters"; fi
check "ps stats" -- "$INART" ctl stats "$tmp/p0.sock"
# reset-stats: every counter of the daemons' tables starts again from zero
for d in t0 p0; do
	"$INART" ctl reset-stats "$tmp/$d.sock" >/dev/null 2>&1
	"$INART" ctl stats "$tmp/$d.sock" --json >"$tmp/$d.stats" 2>&1
	nz=$(grep -oE '"(aggregated|emitted|early|repaired|answered|rx_pkts|tx_pkts|rx|absorbed|completed|probes|nacks)": [0-9]+' \
		"$tmp/$d.stats" | awk '$2 != 0' | head -3)
	n=$(grep -cE '"(aggregated|rx_pkts|absorbed)": ' "$tmp/$d.stats")
	if [ -z "$nz" ] && [ "$n" -gt 0 ]; then ok; else bad "$d counters zero after reset-stats: $nz"; fi
done

# --- aggregation state lost mid-run ------------------------------------------------------
(
	for _ in $(seq 20); do
		"$INART" ctl lose-state "$tmp/t0.sock" >/dev/null 2>&1
		sleep 0.05
	done
) &
lp=$!
pids+=($lp)
if allreduce 200000 4; then ok; else
	bad "all-reduce exact while t0 loses its state"
	cat "$tmp"/w?.out | head -20
fi
wait $lp

# --- control messages refused, tables unchanged ----------------------------------------------
"$INART" ctl show "$tmp/t0.sock" --json >"$tmp/before" 2>&1
refuse() { # refuse DESC JSON: the daemon must refuse it with a reason
	local desc=$1 json=$2
	if "$INART" ctl send "$tmp/t0.sock" "$json" >"$tmp/out" 2>&1; then
		bad "refused: $desc"
	elif grep -q '"reason"' "$tmp/out"; then
		ok
	else
		bad "refused with a reason: $desc ($(head -c 200 "$tmp/out"))"
	fi
}
refuse "not JSON" '{"op": "install", '
refuse "unknown op" '{"op": "reboot"}'
refuse "label 0" '{"op": "install", "labels": [{"label": 0, "kind": "up", "job": 0, "tree": 0, "out_port": 1}]}'
refuse "port out of range" '{"op": "install", "labels": [{"label": 999, "kind": "up", "job": 0, "tree": 0, "out_port": 9}]}'
refuse "route to a missing port" '{"op": "install", "routes": [{"prefix": "10.1.0.0/16", "port": 12}]}'
refuse "second entry bad: batch refused whole" '{"op": "install", "routes": [{"prefix": "10.1.0.0/16", "port": 0}, {"prefix": "10.2.0.0/33", "port": 0}]}'
refuse "wrong node" '{"op": "install", "node": "t1", "routes": []}'
refuse "config with the wrong port count" '{"op": "install", "config": {"ports": [{}], "pool_slots": 4, "flush_timeout_ns": 1000}}'
refuse "PS request at a switch" '{"op": "trees", "trees": []}'
"$INART" ctl show "$tmp/t0.sock" --json >"$tmp/after" 2>&1
if cmp -s "$tmp/before" "$tmp/after"; then ok; else bad "tables unchanged after refused requests"; fi
if "$INART" ctl send "$tmp/p0.sock" '{"op": "trees", "trees": [{"job": 0, "tree": 9, "fan_in": 0}]}' >"$tmp/out" 2>&1; then
	bad "PS refuses fan_in 0"
else ok; fi

# --- garbage INA packets at the switch: dropped and counted ----------------------------------
if command -v python3 >/dev/null 2>&1; then
	ip netns exec "$(ns w0)" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(50):
    s.sendto(bytes([1, 1, 1, 0]) + bytes(i % 40), ("'"${IP[p0]}"'", 47470))
    s.sendto(bytes([9]) * 64, ("'"${IP[p0]}"'", 47470))
' 2>/dev/null
	sleep 0.3
	"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/t0.stats2" 2>&1
	wire=$(grep -o '"wire": [0-9]*' "$tmp/t0.stats2" | awk '{print $2}')
	if [ "${wire:-0}" -ge 100 ]; then ok; else bad "garbage counted as wire drops (got ${wire:-none})"; fi
else
	skipped 1 "python3 missing, garbage packets not sent (scripts/deps.sh installs python3)"
fi
if allreduce 1000 1; then ok; else bad "all-reduce after garbage"; fi

# daemons still alive
for i in 0 1 2 3; do
	if kill -0 "${pids[$i]}" 2>/dev/null; then ok; else bad "daemon $i still running"; fi
done
for f in t0 t1 p0 p1; do
	if grep -qiE "error|sanitizer" "$tmp/$f.log"; then
		bad "$f log has errors"
		head -5 "$tmp/$f.log"
	fi
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
