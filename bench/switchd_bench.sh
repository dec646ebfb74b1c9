#!/usr/bin/env bash
# switchd_bench.sh [SECONDS [ROUNDS]]: packets per second of `inart switchd`
# over veth between network namespaces, side by side in the same run with
# the kernel's own forwarding (a Linux bridge) on the same path.
#
#   sender ns --veth-- middle ns (bridge br0 | inart switchd) --veth-- receiver ns
#
# The sender (bench/udp_gen) sends 1 KB frames carrying valid InArt DATA
# packets (label 1, fan-in 1) to the receiver; switchd aggregates every one
# (its label entry is an aggregation point with fan-in 1: slot taken, values
# summed, complete, aggregate built and sent on), the bridge just forwards.
# Delivered packets are counted at the receiver's interface.  Two loads:
#   max    the sender as fast as it can (capacity; SECONDS per round)
#   1gbit  paced at 1 Gbit/s equivalent (122 kpps of 1 KB frames)
# ROUNDS alternate bridge and switchd (median reported).  Prints both pps
# and the ratio switchd / bridge (target >= 0.85).
#
# IO="ring mmsg" selects switchd's socket back ends to measure (default: both,
# each against the same bridge rounds; `inart switchd --io`).
#
# PIN=1 pins the sender to CPU 0 and switchd to CPU 1 (the bridge forwards
# in the sender's context, so it gets CPU 0 only; switchd gets both).
#
# Needs root, ip netns and ethtool (scripts/deps.sh); the namespaces carry a
# per-run prefix and are always removed; processes are ended by PID.
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

PS_=""
PW_=""
if [ "${PIN:-0}" = 1 ] && command -v taskset >/dev/null 2>&1; then
	PS_="taskset -c 0"
	PW_="taskset -c 1"
fi
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

# measure LOAD_PPS: prints "sent_pps delivered_pps"
measure() {
	local pps=$1 before after sent
	ip netns exec "$R" "$GEN" sink $RIP $((secs + 2)) >/dev/null &
	local sink=$!
	pids+=($sink)
	sleep 0.3
	before=$(rx_count)
	sent=$(ip netns exec "$S" $PS_ "$GEN" send $SIP $RIP "$secs" 1024 "$pps" | awk '{print $4}')
	sleep 0.2
	after=$(rx_count)
	kill "$sink" 2>/dev/null
	wait "$sink" 2>/dev/null
	echo "$sent $(((after - before) / secs))"
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
	ip netns exec "$M" $PW_ "$INART" switchd --name m --port a0,a1 --ctl "$tmp/m.sock" \
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

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "switchd vs Linux bridge, 1024-byte frames, ${secs} s per run, $rounds rounds"
if [ -n "$PS_" ]; then
	echo "(pinned: sender on CPU 0, switchd on CPU 1)"
else
	echo "($(nproc) CPUs; sender, forwarder and receiver share them)"
fi
for load in max 1gbit; do
	pps=0
	[ $load = 1gbit ] && pps=122070
	: >"$tmp/bridge.$load"
	for m in $modes; do : >"$tmp/switchd-$m.$load"; done
	for r in $(seq "$rounds"); do
		bridge_up
		read -r sent got < <(measure $pps)
		bridge_down
		echo "$got" >>"$tmp/bridge.$load"
		printf '  %-6s round %d  bridge      : sent %9s pps, delivered %9s pps\n' $load "$r" "$sent" "$got"
		for m in $modes; do
			switchd_up "$m"
			read -r sent got < <(measure $pps)
			"$INART" ctl stats "$tmp/m.sock" --json >"$tmp/stats.json" 2>/dev/null
			switchd_down
			echo "$got" >>"$tmp/switchd-$m.$load"
			agg=$(grep -o '"aggregated": [0-9]*' "$tmp/stats.json" | awk '{s += $2} END {print s + 0}')
			kd=$(grep -o '"sock_rx_kernel_drops": [0-9]*' "$tmp/stats.json" | awk '{s += $2} END {print s + 0}')
			printf '  %-6s round %d  switchd %-4s: sent %9s pps, delivered %9s pps (aggregated %s, socket drops %s)\n' \
				$load "$r" "$m" "$sent" "$got" "$agg" "$kd"
		done
	done
	b=$(median <"$tmp/bridge.$load")
	for m in $modes; do
		s=$(median <"$tmp/switchd-$m.$load")
		ratio=$(awk -v s="$s" -v b="$b" 'BEGIN {printf "%.3f", (b > 0 ? s / b : 0)}')
		verdict=$(awk -v r="$ratio" 'BEGIN {print (r >= 0.85 ? "meets" : "misses")}')
		printf '%-6s bridge %9s pps  switchd %-4s %9s pps  ratio %s (%s the 0.85 target)\n' \
			$load "$b" "$m" "$s" "$ratio" "$verdict"
	done
done
