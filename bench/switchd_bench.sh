#!/usr/bin/env bash
# switchd_bench.sh [SECONDS [ROUNDS]]: packets per second of `inart switchd`
# over veth between network namespaces, side by side in the same run with
# the kernel's own forwarding (a Linux bridge) on the same path.
#
#   sender ns --veth-- middle ns (bridge br0 | inart switchd) --veth-- receiver ns
#
# The sender (bench/udp_gen) sends 1 KB frames carrying valid InArt DATA
# packets (label 1, fan-in 1, values a function of the chunk number) to the
# receiver; switchd aggregates every one (its label entry is an aggregation
# point with fan-in 1: slot taken, values summed, complete, aggregate built
# and sent on), the bridge just forwards.  Two loads:
#   max    the sender as fast as it can (capacity; SECONDS per round)
#   1gbit  paced at 1 Gbit/s equivalent (122 kpps of 1 KB frames)
# ROUNDS alternate bridge and switchd (medians reported).
#
# Method -- like with like:
#   - Counted at the receiving application: the sink (udp_gen sink) checks
#     every datagram it receives (decodes, DATA of job 0 from contributor 0,
#     the right value count, every value as sent) and only valid ones count;
#     delivered pps = valid datagrams / SECONDS.  The receiver interface's
#     rx_packets is printed beside it as a diagnostic only.
#   - The same CPU set for both: the sender, the sink and switchd all run
#     under `taskset -c $CPUS` in the bridge rounds and the switchd rounds
#     alike (CPUS: default every online CPU; e.g. CPUS=0 puts the whole path
#     on one core, CPUS=0,1 on two).  The bridge forwards in the kernel, in
#     the softirq of the sender's CPU; switchd in its own process plus the
#     same softirq work around its socket: both inside the set.
#   - CPU time per delivered packet: the busy time of the CPUs in the set
#     (user + nice + system + irq + softirq from /proc/stat, so the
#     kernel's softirq forwarding work is included) from the start of the
#     send to 0.2 s after it, divided by the valid packets delivered, in
#     microseconds.  It also counts anything else that ran on those CPUs
#     meanwhile (the script prints that idle load, measured before the
#     rounds): trust it on a quiet machine only.
# Targets (docs/programs.md): switchd >= 0.85 x the bridge's delivered pps,
# and switchd's CPU time per packet <= bridge's / 0.85 (the efficiency
# ratio bridge / switchd >= 0.85).
#
# IO="ring mmsg" selects switchd's socket back ends to measure (default: both,
# each against the same bridge rounds; `inart switchd --io`).
#
# Needs root, ip netns, ethtool and taskset (scripts/deps.sh); the namespaces
# carry a per-run prefix and are always removed; processes are ended by PID.
set -u

secs=${1:-3}
modes=${IO:-ring mmsg}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${BUILD:-$root/build}
INART=$bdir/inart
GEN=$bdir/bench/udp_gen
for f in "$INART" "$GEN"; do
	if [ ! -x "$f" ]; then
		echo "switchd_bench: $f missing (ninja -C $bdir; BUILD=dir selects the build)" >&2
		exit 1
	fi
done
if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
	echo "switchd_bench: needs root and 'ip netns'" >&2
	exit 1
fi

if [ -n "${PIN:-}" ]; then
	echo "switchd_bench: PIN is gone: CPUS=LIST pins sender, sink and switchd alike" >&2
	exit 2
fi
CPUS=${CPUS:-0-$(($(nproc) - 1))}
if ! command -v taskset >/dev/null 2>&1 || ! taskset -c "$CPUS" true; then
	echo "switchd_bench: needs taskset and a valid CPUS list (got '$CPUS')" >&2
	exit 1
fi
ON="taskset -c $CPUS"
HZ=$(getconf CLK_TCK)
P="inartb$$-"
S=${P}s M=${P}m R=${P}r
tmp=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
	done
	for n in "$S" "$M" "$R"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

SIP=10.78.0.1 RIP=10.78.0.2
SMAC=02:78:00:00:00:01 RMAC=02:78:00:00:00:02
set -e
for n in "$S" "$M" "$R"; do
	ip netns add "$n"
	ip -n "$n" link set lo up
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$n" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
done
ip link add name eth0 netns "$S" type veth peer name a0 netns "$M"
ip link add name eth0 netns "$R" type veth peer name a1 netns "$M"
ip -n "$S" link set eth0 address $SMAC
ip -n "$R" link set eth0 address $RMAC
ip -n "$S" addr add $SIP/24 dev eth0
ip -n "$R" addr add $RIP/24 dev eth0
for n in "$S" "$R"; do
	ip -n "$n" link set eth0 up
	# complete checksums on the hosts: switchd passes frames on as they are
	ip netns exec "$n" ethtool -K eth0 tx off >/dev/null 2>&1 || true
done
ip -n "$M" link set a0 up
ip -n "$M" link set a1 up
# static neighbours: no ARP in the measured path
ip -n "$S" neigh replace $RIP lladdr $RMAC dev eth0 nud permanent
ip -n "$R" neigh replace $SIP lladdr $SMAC dev eth0 nud permanent
set +e

rx_count() { ip netns exec "$R" cat /sys/class/net/eth0/statistics/rx_packets; }

# Busy clock ticks (user nice system irq softirq) of the CPUs in $CPUS.
busy_ticks() {
	local list
	list=$(taskset -c "$CPUS" sh -c 'grep Cpus_allowed_list /proc/self/status' | awk '{print $2}')
	awk -v list="$list" '
		BEGIN {
			n = split(list, parts, ",")
			for (i = 1; i <= n; i++) {
				m = split(parts[i], r, "-")
				for (c = r[1]; c <= (m > 1 ? r[2] : r[1]); c++) want["cpu" c] = 1
			}
		}
		($1 in want) { s += $2 + $3 + $4 + $7 + $8 }
		END { print s + 0 }' /proc/stat
}

# measure LOAD_PPS: prints "sent_pps delivered_pps cpu_us_per_packet iface_pps invalid"
measure() {
	local pps=$1 before after t0 t1 sent out valid invalid
	ip netns exec "$R" $ON "$GEN" sink $RIP $((secs + 1)) 1024 >"$tmp/sink.out" &
	local sink=$!
	pids+=($sink)
	sleep 0.3
	before=$(rx_count)
	t0=$(busy_ticks)
	sent=$(ip netns exec "$S" $ON "$GEN" send $SIP $RIP "$secs" 1024 "$pps" | awk '{print $4}')
	[ -n "$sent" ] || echo "switchd_bench: the sender failed" >&2
	sleep 0.2
	t1=$(busy_ticks)
	after=$(rx_count)
	wait "$sink" 2>/dev/null
	out=$(cat "$tmp/sink.out")
	valid=$(echo "$out" | awk '{print $4}')
	invalid=$(echo "$out" | awk '{print $6}')
	awk -v s="${sent:-0}" -v v="${valid:-0}" -v secs="$secs" -v t="$((t1 - t0))" -v hz="$HZ" \
		-v i="$((after - before))" -v bad="${invalid:-?}" 'BEGIN {
		printf "%s %d %.3f %d %s\n", s, v / secs, (v > 0 ? t / hz / v * 1e6 : 0), i / secs, bad
	}'
}

bridge_up() {
	ip -n "$M" link add br0 type bridge
	ip -n "$M" link set a0 master br0
	ip -n "$M" link set a1 master br0
	ip -n "$M" link set br0 up
}
bridge_down() { ip -n "$M" link del br0; }

swd=""
switchd_up() {
	ip netns exec "$M" $ON "$INART" switchd --name m --port a0,a1 --ctl "$tmp/m.sock" \
		--io "$1" --log-level warn 2>"$tmp/switchd.log" &
	swd=$!
	pids+=($swd)
	for _ in $(seq 50); do
		[ -S "$tmp/m.sock" ] && break
		sleep 0.1
	done
	"$INART" ctl send "$tmp/m.sock" '{"op": "install", "node": "m", "replace": true,
	  "config": {"ports": [{"peer_mac": "'$SMAC'"}, {"peer_mac": "'$RMAC'"}],
	             "pool_slots": 64, "flush_timeout_ns": 10000000},
	  "labels": [{"label": 1, "kind": "up", "job": 0, "tree": 0, "out_port": 1,
	              "next_label": 0, "aggregate": true, "slot_base": 0, "n_slots": 64,
	              "expected": ["0000000000000001"]}],
	  "routes": [{"prefix": "'$SIP'/32", "port": 0}, {"prefix": "'$RIP'/32", "port": 1}]}' \
		>"$tmp/install.out" || {
		cat "$tmp/install.out" >&2
		exit 1
	}
}
switchd_down() {
	kill "$swd" 2>/dev/null
	wait "$swd" 2>/dev/null
}

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# Load of the CPU set with nothing of ours running (other users' work that
# the CPU-time figures include too), in busy CPUs.
t0=$(busy_ticks)
sleep "$secs"
idle=$(awk -v t="$(($(busy_ticks) - t0))" -v hz="$HZ" -v s="$secs" 'BEGIN {printf "%.2f", t / hz / s}')

echo "switchd vs Linux bridge, 1024-byte frames, ${secs} s per run, $rounds rounds"
echo "CPU set $CPUS for sender, sink and switchd alike; busy CPUs of the set before the rounds: $idle"
echo "delivered = valid datagrams at the receiving application; CPU = busy time of the set / delivered"
for load in max 1gbit; do
	pps=0
	[ $load = 1gbit ] && pps=122070
	for f in bridge $(for m in $modes; do echo "switchd-$m"; done); do
		: >"$tmp/$f.$load.pps"
		: >"$tmp/$f.$load.cpu"
	done
	for r in $(seq "$rounds"); do
		bridge_up
		read -r sent got cpu iface bad < <(measure $pps)
		bridge_down
		echo "$got" >>"$tmp/bridge.$load.pps"
		echo "$cpu" >>"$tmp/bridge.$load.cpu"
		printf '  %-6s round %d  bridge      : sent %9s pps, delivered %9s pps (%s invalid; interface %s pps), %s us CPU/packet\n' \
			$load "$r" "$sent" "$got" "$bad" "$iface" "$cpu"
		for m in $modes; do
			switchd_up "$m"
			read -r sent got cpu iface bad < <(measure $pps)
			"$INART" ctl stats "$tmp/m.sock" --json >"$tmp/stats.json" 2>/dev/null
			switchd_down
			echo "$got" >>"$tmp/switchd-$m.$load.pps"
			echo "$cpu" >>"$tmp/switchd-$m.$load.cpu"
			agg=$(grep -o '"aggregated": [0-9]*' "$tmp/stats.json" | awk '{s += $2} END {print s + 0}')
			kd=$(grep -o '"sock_rx_kernel_drops": [0-9]*' "$tmp/stats.json" | awk '{s += $2} END {print s + 0}')
			printf '  %-6s round %d  switchd %-4s: sent %9s pps, delivered %9s pps (%s invalid; interface %s pps), %s us CPU/packet (aggregated %s, socket drops %s)\n' \
				$load "$r" "$m" "$sent" "$got" "$bad" "$iface" "$cpu" "$agg" "$kd"
		done
	done
	b=$(median <"$tmp/bridge.$load.pps")
	bc=$(median <"$tmp/bridge.$load.cpu")
	for m in $modes; do
		s=$(median <"$tmp/switchd-$m.$load.pps")
		sc=$(median <"$tmp/switchd-$m.$load.cpu")
		awk -v l=$load -v m="$m" -v b="$b" -v s="$s" -v bc="$bc" -v sc="$sc" 'BEGIN {
			r = b > 0 ? s / b : 0
			e = sc > 0 ? bc / sc : 0
			printf "%-6s bridge %9s pps %7s us/pkt  switchd %-4s %9s pps %7s us/pkt  pps ratio %.3f (%s)  CPU efficiency bridge/switchd %.3f (%s) [target 0.85]\n",
				l, b, bc, m, s, sc, r, (r >= 0.85 ? "meets" : "MISSES"), e, (e >= 0.85 ? "meets" : "MISSES")
		}'
	done
done
