#!/usr/bin/env bash
# switchd_bench.sh: packets per second of `inart switchd` over veth between
# network namespaces, side by side in one run with the kernel's own paths
# and a bare AF_XDP forwarder, fed by a generator and counted by a sink that
# are both faster than any device under test (issue 24).  --help says all.
usage() {
	cat <<'EOF'
usage: bench/switchd_bench.sh [--modes LIST] [--cores LIST] [--load plain|ina1|ina8]
                              [--seconds S] [--check sample|all] [--nice N] [--json]
                              [--bpf-stats]

    generator ns --veth-- middle ns (the device) --veth-- sink ns
    generator ns --veth------------------------------- sink ns   (direct)

Modes (LIST comma-separated; default all of them):
  direct        a veth pair, no device: the ceiling of every test here
  bridge        a Linux bridge in the middle namespace (bridge-nf off)
  xdp-redirect  the kernel's XDP_REDIRECT between the middle namespace's
                veths (build/bench/xdp_bench redirect: a DEVMAP)
  xsk-fwd       a bare AF_XDP copy-mode forwarder, rx on one veth, tx on
                the other, no processing (build/bench/xsk_fwd)
  ring, mmsg    inart switchd --io ring | mmsg
  xdp           inart switchd --io xdp --agg user (reported "not available"
                where this build's switchd has no such back end or it
                refuses to start): the user-space core aggregates
  xdp-agg       inart switchd --io xdp --agg kernel: InArt DATA aggregated
                by the XDP program (issue 25), the rest by the user-space
                core as in xdp.  switchd (so its aggregation CPUs) on the
                generator's CPUs: every frame is aggregated in the receive
                softirq of the CPU it arrived on (xdp_switch tail-calls
                xdp_agg_dev), the CPUs xdp-redirect forwards on.  At N > 1
                cores switchd runs without --cores (the kernel path feeds
                one user-space core); --io xdp then refuses the N-queue
                veths (reported not available)
  xdp-agg-cpumap the same with switchd on the device's CPUs, as xdp: the
                frames cross to the aggregation CPU through the CPUMAP
                (xdp_agg_cpu in its kernel thread)
--cores LIST    worker cores for the modes that have a choice (ring, mmsg,
                xdp: switchd --cores N; xdp-agg: see above; default 1,2; 1 runs without the
                option), and queues for direct and xdp-redirect (N queues
                on each veth).  At N > 1 the generator runs on N CPUs.  A
                count switchd does not offer is reported as not available.
                bridge and xsk-fwd run once, reported as cores 1.
--load          plain: IPv4 UDP to port 47471 (forwarded by LPM);
                ina1: InArt DATA, label 1, fan-in 1 (switchd aggregates each:
                one aggregate per frame); ina8 (default ina1): eight
                contributors per slot, the device emits one aggregate per 8
                inputs.  1022-byte frames, 235 int32 values.
--seconds S     generator time per run (default 3)
--check         sample (default): the generator writes and the sink checks
                3 of the 235 values (first, middle, last; the others stay 0)
                and every header field; all: every value (costs the
                generator and the sink about a third of their rate)
--nice N        niceness of the generator and the device's processes
                (default -20: on a machine others keep busy, the run gets
                its CPUs; 0 to share them fairly), each in a session of its
                own whose autogroup gets the same niceness (with autogroups
                on, plain nice does not reach beyond its own session)
--bpf-stats     sysctl kernel.bpf_stats_enabled=1 for the run (the old value
                restored at exit) and, for xdp-redirect, xdp, xdp-agg and
                xdp-agg-cpumap, the ns per run of the device's own BPF
                programs during the generator's run (run_time_ns / run_cnt
                of the programs the device process holds, bpftool): robust
                against other load, unlike pps.  A tail-called program's
                time counts in its caller's (xdp_agg_dev in
                inart_xdp_switch).  The statistics cost two clock reads per
                run of every program (the generator's and the sink's too):
                compare pps without this option
--json          one JSON object instead of the table:
  {"runs":[{"mode","cores","load","pps","gbps","path_cpu_us_per_pkt",
            "device_cpu_us_per_pkt","valid", "bpf_ns_per_run" (--bpf-stats:
            {"PROGRAM": [ns per run, runs]}), ...}], "direct_pair_pps", ...}

Method:
 - Generator: build/bench/xdp_bench gen, an XDP program run with BPF_PROG_RUN
   and BPF_F_TEST_XDP_LIVE_FRAMES, one call for the whole run (ended by
   SIGALRM: each call's page pool costs an RCU grace period on return):
   each frame gets the template's 82-byte header again (a device may have
   changed the frame in place; live frames come back as the last user left
   them) and is rewritten from a per-CPU counter (seq, slot = seq % 64,
   contributor = counter % 8 for ina8, values (r + 1) * (seq % 65536 + 1 +
   i)), and sent with XDP_TX out of the veth toward the device.  At 1 core
   one process pinned to the first CPU of CPUS; at N cores one on each of
   the first N CPUs, each its share of the chunks (--part K/N), so the frames
   spread over N veth queues (queue = sending CPU mod queues).
 - Sink: build/bench/xdp_bench sink, an XDP program on the receiving veth
   that checks each frame (InArt header, contributor bits, values = the sum
   of the contributions its bitmap names) and counts in a per-CPU array,
   XDP_DROP.  pps = frames that checked / S; contrib_pps = contributions
   inside them / S (for ina8 through switchd, 8 per full aggregate);
   full_pps = frames carrying all contributors; bad = frames of ours that
   did not check; switchd_socket_rx_drops / _tx_drops: switchd's own
   counters of frames its sockets lost (ctl stats; null for other modes).
   valid: something arrived, nothing bad, and for ina8
   through switchd full aggregates did arrive.
 - CPU set: CPUS (default every online CPU).  At 1 core the generator runs
   on its first CPU, the device (switchd, xsk_fwd) on the others; at N cores
   the generator on the first N, the device on the N after them, or on all
   of them (sharing with the generator: the row says so) where the set has
   no more (2 cores on a 2-CPU set).  The kernel modes (direct, bridge,
   xdp-redirect) run in the softirq of the generator's CPUs: a veth receives
   on the sending CPU.
 - path_cpu_us_per_pkt: busy time (user nice system irq softirq,
   /proc/stat) of every CPU of the set during the run / delivered frames.
 - device_cpu_us_per_pkt: the device's own threads (/proc/PID/task/*/stat)
   plus the softirq time of its CPUs, / delivered frames.  For xdp-agg and
   xdp-agg-cpumap also the kernel threads of switchd's CPUMAP
   (cpumap/CPU/map:ID, found by the map ids in switchd's fdinfo), and its
   CPUs are the generator's and switchd's.  For the kernel
   modes that is the softirq of the generator's CPU (the sink's XDP and, in
   direct, only it).  Both count whatever else runs on those CPUs: the
   script prints the set's busy CPUs before the runs; trust it on a quiet
   machine.
 - direct_pair_pps: the direct pair's delivered contributions/s at 1 core
   (always measured, at 1 core and each count of LIST); by_cores: per count
   the direct pair (the same generator CPUs) over the best other mode of
   that count; direct_over_best: the lowest of them; the target is at least
   1.5 at every count (generator_faster); direct_over_best_switchd: the
   direct pair over the best switchd mode alone (at its core count).

Needs root, ip netns, ethtool, taskset and the programs of this build
(BUILD=dir, default ./build): inart, bench/xdp_bench, bench/xsk_fwd (libbpf,
libxdp, clang, bpftool: scripts/deps.sh).  Namespaces carry a per-run
prefix and are always removed; processes are ended by PID.
EOF
}
set -u

modes_arg=direct,bridge,xdp-redirect,xsk-fwd,ring,mmsg,xdp,xdp-agg,xdp-agg-cpumap
cores_arg=1,2
load=ina1
secs=3
check=sample
json=0
bstats=0
nice=-20
while [ $# -gt 0 ]; do
	case $1 in
	--modes) modes_arg=${2:?}; shift 2 ;;
	--cores) cores_arg=${2:?}; shift 2 ;;
	--load) load=${2:?}; shift 2 ;;
	--seconds) secs=${2:?}; shift 2 ;;
	--check) check=${2:?}; shift 2 ;;
	--json) json=1; shift ;;
	--bpf-stats) bstats=1; shift ;;
	--nice) nice=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "switchd_bench: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
case $load in plain | ina1 | ina8) ;; *) echo "switchd_bench: --load plain|ina1|ina8" >&2; exit 2 ;; esac
case $check in sample | all) ;; *) echo "switchd_bench: --check sample|all" >&2; exit 2 ;; esac
if ! [[ $nice =~ ^-?[0-9]+$ ]]; then
	echo "switchd_bench: --nice takes a number" >&2
	exit 2
fi
if ! [[ $secs =~ ^[0-9]+([.][0-9]+)?$ ]]; then
	echo "switchd_bench: --seconds takes a number" >&2
	exit 2
fi
modes=()
for m in ${modes_arg//,/ }; do
	case $m in
	direct | bridge | xdp-redirect | xsk-fwd | ring | mmsg | xdp | xdp-agg | xdp-agg-cpumap) modes+=("$m") ;;
	*) echo "switchd_bench: unknown mode '$m' (--help)" >&2; exit 2 ;;
	esac
done
cores=()
for c in ${cores_arg//,/ }; do
	[[ $c =~ ^[1-9][0-9]*$ ]] || { echo "switchd_bench: --cores takes counts" >&2; exit 2; }
	cores+=("$c")
done

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/xdp_bench_lib.sh
. "$root/bench/xdp_bench_lib.sh" # xb_sink_start, xb_sink_snap
bdir=${BUILD:-$root/build}
INART=$bdir/inart
XB=$bdir/bench/xdp_bench
XSK=$bdir/bench/xsk_fwd
for f in "$INART" "$XB" "$XSK"; do
	if [ ! -x "$f" ]; then
		echo "switchd_bench: $f missing (ninja -C $bdir; BUILD=dir selects the build;" \
			"xdp_bench and xsk_fwd need libbpf-dev, libxdp-dev, clang, bpftool)" >&2
		exit 1
	fi
done
if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
	echo "switchd_bench: needs root and 'ip netns'" >&2
	exit 1
fi
CPUS=${CPUS:-0-$(($(nproc) - 1))}
if ! command -v taskset >/dev/null 2>&1 || ! taskset -c "$CPUS" true; then
	echo "switchd_bench: needs taskset and a valid CPUS list (got '$CPUS')" >&2
	exit 1
fi
# the CPUs of the set, one per word
cpulist=$(taskset -c "$CPUS" sh -c 'grep Cpus_allowed_list /proc/self/status' | awk '{print $2}')
cpus=$(echo "$cpulist" | awk '{
	n = split($1, parts, ",")
	for (i = 1; i <= n; i++) {
		m = split(parts[i], r, "-")
		for (c = r[1]; c <= (m > 1 ? r[2] : r[1]); c++) printf "%d ", c
	}}')
read -r -a cpuv <<<"$cpus"
GEN_CPU=${cpuv[0]}
# the device's CPUs at N worker cores: the next N CPUs of the set after the
# generator's, or the whole set (shared with the generator) if it has fewer
dev_cpus_of() {
	if [ ${#cpuv[@]} -gt "$1" ]; then
		echo "${cpuv[@]:1:$1}" | tr ' ' ','
	else
		echo "$cpus" | tr ' ' ',' | sed 's/,$//'
	fi
}
DEV1=$(dev_cpus_of 1)
# the generator's CPUs for a run at N cores: its own CPU at 1 (the device
# gets the others), the first N CPUs of the set at N > 1 (one generator
# process each, --part K/N; a veth receives on the sending CPU, queue = CPU
# mod queues, so N sending CPUs spread the frames over N queues)
gen_cpus_of() {
	if [ "$1" -le 1 ]; then
		echo "$GEN_CPU"
	else
		echo "${cpuv[@]:0:$1}" | tr ' ' ','
	fi
}
HZ=$(getconf CLK_TCK)
# nice alone does nothing against other sessions where the kernel groups
# tasks by session (autogroup, kernel.sched_autogroup_enabled=1, this
# machine's default): each command gets a session of its own (setsid; no
# fork, the PID stays) whose autogroup gets the same niceness
NICE=(setsid sh -c 'echo "$0" >/proc/self/autogroup 2>/dev/null; exec nice -n "$0" "$@"' "$nice")
CHK=()
[ "$check" = sample ] && CHK=(--sample)

P="h24b$$-"
G=${P}g M=${P}m R=${P}r
tmp=$(mktemp -d)
pids=()
bstats_old=""
cleanup() {
	[ -n "$bstats_old" ] && sysctl -qw kernel.bpf_stats_enabled="$bstats_old"
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
	done
	for n in "$G" "$M" "$R"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ $bstats = 1 ]; then
	bstats_old=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) &&
		sysctl -qw kernel.bpf_stats_enabled=1 || {
		echo "switchd_bench: --bpf-stats: cannot set kernel.bpf_stats_enabled" >&2
		exit 1
	}
	command -v bpftool >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
fi
trap 'exit 1' INT TERM

SIP=10.78.0.1 RIP=10.78.0.2
SMAC=02:78:00:00:00:01 RMAC=02:78:00:00:00:02
set -e
for n in "$G" "$M" "$R"; do
	ip netns add "$n"
	ip -n "$n" link set lo up
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$n" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
done
# through the middle: G/eth0 - M/a0, M/a1 - R/eth0; direct: G/d0 - R/d1
# a0, a1 with as many queues as the most worker cores asked (switchd --io
# xdp --cores N needs N: a socket per queue and worker); each run sets the
# count it needs (set_queues): N for switchd, 1 for the others; their peers
# the same (veth refuses an XDP program on a device with fewer receive
# queues than its peer has transmit queues)
maxq=1
for c in "${cores[@]}"; do [ "$c" -gt $maxq ] && maxq=$c; done
q="numrxqueues $maxq numtxqueues $maxq"
# shellcheck disable=SC2086
ip link add name eth0 $q netns "$G" type veth peer name a0 $q netns "$M"
# shellcheck disable=SC2086
ip link add name eth0 $q netns "$R" type veth peer name a1 $q netns "$M"
# shellcheck disable=SC2086
ip link add name d0 $q netns "$G" type veth peer name d1 $q netns "$R"
for i in eth0 d0; do ip -n "$G" link set $i address $SMAC; done
for i in eth0 d1; do ip -n "$R" link set $i address $RMAC; done
ip -n "$G" addr add $SIP/24 dev eth0
ip -n "$R" addr add $RIP/24 dev eth0
for n in "$G" "$R"; do
	for i in eth0 d0 d1; do
		ip -n "$n" link show $i >/dev/null 2>&1 || continue
		ip -n "$n" link set $i up
		# complete checksums on the hosts: a user-space switch passes frames on as they are
		ip netns exec "$n" ethtool -K $i tx off >/dev/null 2>&1 || true
	done
done
ip -n "$M" link set a0 up
ip -n "$M" link set a1 up
# XDP_TX into G/eth0 needs NAPI on its peer: an XDP program or GRO (the
# modes without a program of their own on a0)
ip netns exec "$M" ethtool -K a0 gro on >/dev/null 2>&1 || true
ip -n "$G" neigh replace $RIP lladdr $RMAC dev eth0 nud permanent
ip -n "$R" neigh replace $SIP lladdr $SMAC dev eth0 nud permanent
set +e

# /proc/stat of the CPU set: "busy cpuN:softirq ..." in ticks
stat_ticks() {
	awk -v list="$cpus" '
		BEGIN { n = split(list, c, " "); for (i = 1; i <= n; i++) want["cpu" c[i]] = 1 }
		($1 in want) { b += $2 + $3 + $4 + $7 + $8; s = s " " substr($1, 4) ":" $8 }
		END { print b + 0 s }' /proc/stat
}

# utime + stime ticks of every thread of PID (0 if none)
proc_ticks() {
	[ -n "${1:-}" ] || { echo 0; return; }
	cat /proc/"$1"/task/*/stat 2>/dev/null | sed 's/.*) //' |
		awk '{s += $12 + $13} END {print s + 0}'
}

# the kernel threads of the CPUMAPs PID holds ("cpumap/CPU/map:ID": xdp-agg's
# aggregation runs there), by the map ids in its descriptors' fdinfo
cpumap_threads() {
	local ids id t
	[ -n "${1:-}" ] || return 0
	ids=$(awk '/^map_type:/ {t = $2} /^map_id:/ {if (t == 16) print $2; t = ""}' \
		/proc/"$1"/fdinfo/* 2>/dev/null | sort -u)
	for id in $ids; do
		for t in /proc/[0-9]*; do
			case $(cat "$t/comm" 2>/dev/null) in "cpumap/"*"/map:$id") echo "${t#/proc/}" ;; esac
		done
	done
}
# "NAME:RUN_TIME_NS:RUN_CNT ..." of the BPF programs PID holds (--bpf-stats)
prog_stats() {
	local id
	[ $bstats = 1 ] && [ -n "${1:-}" ] || return 0
	for id in $(awk '/^prog_id:/ {print $2}' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u); do
		bpftool prog show id "$id" --json 2>/dev/null | awk '{
			n = t = c = ""
			if (match($0, /"name":"[^"]*"/)) n = substr($0, RSTART + 8, RLENGTH - 9)
			if (match($0, /"run_time_ns":[0-9]+/)) t = substr($0, RSTART + 14, RLENGTH - 14)
			if (match($0, /"run_cnt":[0-9]+/)) c = substr($0, RSTART + 10, RLENGTH - 10)
			if (n != "") printf "%s:%d:%d ", n, t, c}'
	done
}
kthr_ticks() { # PID... (0 if none)
	local s=0 t
	for t in "$@"; do s=$((s + $(proc_ticks "$t"))); done
	echo $s
}

sink_pid=""
sink_start() { # IFACE
	xb_sink_start "$XB" "$R" "$1" "$tmp/sink" "$load" "${CHK[@]}"
	local rc=$?
	sink_pid=$xb_sink_pid
	pids+=("$sink_pid")
	[ $rc -eq 0 ] && return 0
	echo "switchd_bench: the sink did not start: $(cat "$tmp/sink.err")" >&2
	return 1
}
sink_snap() { xb_sink_snap "$tmp/sink" "$sink_pid"; }
stop_pid() {
	[ -n "${1:-}" ] || return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# Device set-up per mode; sets dev_pid (a process of the device, or empty),
# dev_cpus (its CPUs), note; returns 1 with $why when not available.
dev_pid=""
stats_pid="" # the process whose BPF programs --bpf-stats reports
dev_kthreads=()
why=""
wait_ready() { # FILE PID
	for _ in $(seq 50); do
		grep -q ready "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
switchd_up() { # MODE CORES CPUS
	local extra=() exp="0000000000000001" io=$1
	# (the kernel path feeds one user-space core: xdp-agg* never --cores)
	case $1 in xdp-agg*) ;; *) [ "$2" -gt 1 ] && extra=(--cores "$2") ;; esac
	# xdp: the user-space core aggregates (part 1); xdp-agg: the kernel
	case $1 in
	xdp) extra+=(--agg user) ;;
	xdp-agg | xdp-agg-cpumap) io=xdp extra+=(--agg kernel) ;;
	esac
	[ "$load" = ina8 ] && exp="00000000000000ff"
	rm -f "$tmp/m.sock"
	if ! ip netns exec "$M" "$INART" switchd --name m --port a0,a1 --ctl "$tmp/m.sock" \
		--io "$io" "${extra[@]}" --check-config >"$tmp/check.out" 2>&1; then
		why="inart switchd --io $io ${extra[*]}: $(head -c 300 "$tmp/check.out" | tr '\n"' ' ')"
		return 1
	fi
	ip netns exec "$M" "${NICE[@]}" taskset -c "$3" "$INART" switchd --name m --port a0,a1 \
		--ctl "$tmp/m.sock" --io "$io" "${extra[@]}" --log-level warn 2>"$tmp/switchd.log" &
	dev_pid=$!
	pids+=("$dev_pid")
	for _ in $(seq 50); do
		[ -S "$tmp/m.sock" ] && break
		kill -0 "$dev_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 "$dev_pid" 2>/dev/null; then
		why="inart switchd --io $io ${extra[*]}: $(head -c 300 "$tmp/switchd.log" | tr '\n"' ' ')"
		return 1
	fi
	if ! "$INART" ctl send "$tmp/m.sock" '{"op": "install", "node": "m", "replace": true,
	  "config": {"ports": [{"peer_mac": "'$SMAC'"}, {"peer_mac": "'$RMAC'"}],
	             "pool_slots": 64, "flush_timeout_ns": 10000000},
	  "labels": [{"label": 1, "kind": "up", "job": 0, "tree": 0, "out_port": 1,
	              "next_label": 0, "aggregate": true, "slot_base": 0, "n_slots": 64,
	              "expected": ["'$exp'"]}],
	  "routes": [{"prefix": "'$SIP'/32", "port": 0}, {"prefix": "'$RIP'/32", "port": 1}]}' \
		>"$tmp/install.out" 2>&1; then
		why="install into switchd failed: $(head -c 300 "$tmp/install.out" | tr '\n"' ' ')"
		return 1
	fi
	return 0
}
set_queues() { # N: receive and transmit queues of a0, a1 and their peers (ethtool -L)
	local d
	for d in "$G":eth0 "$M":a0 "$M":a1 "$R":eth0 "$G":d0 "$R":d1; do
		ip netns exec "${d%:*}" ethtool -L "${d#*:}" rx "$1" tx "$1" >/dev/null 2>&1
	done
}
mode_up() { # MODE CORES
	local cpu
	dev_pid="" why="" note="" dev_kthreads=() stats_pid=""
	cpu=$(dev_cpus_of "$2")
	dev_cpus=$cpu
	[ $maxq -gt 1 ] && case $1 in direct | xdp-redirect | ring | mmsg | xdp | xdp-agg*) set_queues "$2" ;; *) set_queues 1 ;; esac
	case $1 in
	direct)
		dev_cpus=$(gen_cpus_of "$2")
		note="no device; all in the generator's CPU"
		[ "$2" -gt 1 ] && note="no device; $2 generator CPUs, $2 queues" ;;
	bridge)
		dev_cpus=$GEN_CPU
		ip -n "$M" link add br0 type bridge
		ip netns exec "$M" sysctl -qw net.bridge.bridge-nf-call-iptables=0 2>/dev/null
		ip -n "$M" link set a0 master br0
		ip -n "$M" link set a1 master br0
		ip -n "$M" link set br0 up
		note="in the softirq of the generator's CPU" ;;
	xdp-redirect)
		dev_cpus=$(gen_cpus_of "$2")
		ip netns exec "$M" "$XB" redirect a0 a1 >"$tmp/dev.out" 2>&1 &
		dev_pid=$!
		pids+=("$dev_pid")
		wait_ready "$tmp/dev.out" "$dev_pid" || { why=$(cat "$tmp/dev.out"); return 1; }
		stats_pid=$dev_pid
		dev_pid="" # only the loader: the work is softirq
		note="in the softirq of the generator's CPU"
		[ "$2" -gt 1 ] && note="$2 queues, in the softirq of the $2 generator CPUs" ;;
	xsk-fwd)
		ip netns exec "$M" "${NICE[@]}" taskset -c "$cpu" "$XSK" a0 a1 >"$tmp/dev.out" 2>&1 &
		dev_pid=$!
		pids+=("$dev_pid")
		wait_ready "$tmp/dev.out" "$dev_pid" || { why=$(cat "$tmp/dev.out"); return 1; }
		note="busy-polls its core; its rx steering runs in the generator's softirq" ;;
	ring | mmsg | xdp | xdp-agg*)
		# xdp-agg: switchd, so its aggregation CPUs, on the generator's
		[ "$1" = xdp-agg ] && cpu=$(gen_cpus_of "$2")
		switchd_up "$1" "$2" "$cpu" || return 1
		stats_pid=$dev_pid
		[ ${#cpuv[@]} -le "$2" ] && note="shares its $2 cores with the generator ($(gen_cpus_of "$2"))"
		case $1 in
		xdp-agg)
			read -r -a dev_kthreads <<<"$(cpumap_threads "$dev_pid" | tr '\n' ' ')"
			dev_cpus=$cpu
			note="switchd on CPU(s) $cpu: aggregates in the receive softirq of the generator's CPU(s) (tail call, no CPUMAP hop), as xdp-redirect forwards" ;;
		xdp-agg-cpumap)
			read -r -a dev_kthreads <<<"$(cpumap_threads "$dev_pid" | tr '\n' ' ')"
			dev_cpus=$(printf '%s\n' $(gen_cpus_of "$2" | tr ',' ' ') $(echo "$cpu" | tr ',' ' ') | sort -nu | paste -sd,)
			note="switchd on CPU(s) $cpu: receive softirq and steering on the generator's CPU(s), aggregation in the CPUMAP threads of CPU(s) $cpu (${#dev_kthreads[@]} threads; their time is the device's)${note:+; $note}" ;;
		esac ;;
	esac
	return 0
}
mode_down() { # MODE
	case $1 in
	bridge)
		ip -n "$M" link set a0 nomaster
		ip -n "$M" link set a1 nomaster
		ip -n "$M" link del br0 ;;
	esac
	# xdp_bench redirect: its pid was dropped from dev_pid; the last in pids
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null && [ "$pid" != "$sink_pid" ] && stop_pid "$pid"
	done
	pids=()
	dev_pid=""
}

# Busy CPUs of the set with nothing of ours running (1 s)
read -r b0 _ <<<"$(stat_ticks)"
sleep 1
read -r b1 _ <<<"$(stat_ticks)"
idle=$(awk -v t="$((b1 - b0))" -v hz="$HZ" 'BEGIN {printf "%.2f", t / hz}')

# The generator on CPUS (comma-separated), out of interface IF: one process a
# CPU, each its part of the chunks; prints "SENT SECONDS" (the sum of what
# they emitted, the longest of their times)
gen_run() { # IF CPUS
	local k=0 n pids_g=() c
	n=$(echo "$2" | tr ',' ' ' | wc -w)
	for c in ${2//,/ }; do
		ip netns exec "$G" "${NICE[@]}" taskset -c "$c" "$XB" gen "$1" "$load" "$secs" \
			"${CHK[@]}" --part "$k/$n" >"$tmp/gen.$k" 2>"$tmp/gen.err.$k" &
		pids_g+=($!)
		k=$((k + 1))
	done
	for c in "${pids_g[@]}"; do wait "$c"; done
	cat "$tmp"/gen.err.* >"$tmp/gen.err" 2>/dev/null
	cat "$tmp"/gen.[0-9]* 2>/dev/null | awk -v n="$n" '
		/^sent / {s += $2; if ($6 > t) t = $6; k++}
		END {if (k == n) printf "%d %.6f\n", s, t}'
	rm -f "$tmp"/gen.[0-9]* "$tmp"/gen.err.*
}

results=() # one JSON object per run
table=()
declare -A direct_c=() best_c=() bestm_c=() # by cores: the direct pair, the best device
declare -A cps_of=()                          # contributions/s by MODE/CORES
best_contrib=0
best_mode=""
sw_contrib=0
sw_mode=""
run_one() { # MODE CORES
	local m=$1 c=$2 iface=eth0 gif=eth0 s0 s1 st0 st1 p0 p1 sent took gcpus b0="" b1=
	[ "$m" = direct ] && iface=d1 gif=d0
	if ! mode_up "$m" "$c"; then
		mode_down "$m"
		why=$(echo "$why" | tr -d '\\' | head -c 300)
		results+=("{\"mode\":\"$m\",\"cores\":$c,\"load\":\"$load\",\"pps\":null,\"gbps\":null,\"path_cpu_us_per_pkt\":null,\"device_cpu_us_per_pkt\":null,\"valid\":false,\"available\":false,\"reason\":\"$why\"}")
		table+=("$(printf '%-13s %5s  not available: %s' "$m" "$c" "$why")")
		return
	fi
	if ! sink_start "$iface"; then
		mode_down "$m"
		results+=("{\"mode\":\"$m\",\"cores\":$c,\"load\":\"$load\",\"pps\":null,\"gbps\":null,\"path_cpu_us_per_pkt\":null,\"device_cpu_us_per_pkt\":null,\"valid\":false,\"available\":true,\"reason\":\"the sink did not start\"}")
		table+=("$(printf '%-13s %5s  sink failed' "$m" "$c")")
		return
	fi
	sleep 0.2
	s0=$(sink_snap)
	st0=$(stat_ticks)
	p0=$(($(proc_ticks "$dev_pid") + $(kthr_ticks "${dev_kthreads[@]}")))
	b0=$(prog_stats "$stats_pid")
	gcpus=$(gen_cpus_of "$c")
	read -r sent took < <(gen_run "$gif" "$gcpus")
	sleep 0.2
	s1=$(sink_snap)
	st1=$(stat_ticks)
	p1=$(($(proc_ticks "$dev_pid") + $(kthr_ticks "${dev_kthreads[@]}")))
	b1=$(prog_stats "$stats_pid")
	[ -n "$sent" ] || echo "switchd_bench: $m: the generator failed: $(cat "$tmp/gen.err")" >&2
	stop_pid "$sink_pid"
	local sockd=null txd=null
	case $m in
	ring | mmsg | xdp | xdp-agg*)
		"$INART" ctl stats "$tmp/m.sock" --json >"$tmp/stats.json" 2>/dev/null
		sockd=$(grep -o '"sock_rx_kernel_drops": [0-9]*' "$tmp/stats.json" | awk '{s += $2} END {print s + 0}')
		txd=$(grep -oE '"sock_tx_(drops|errors)": [0-9]*' "$tmp/stats.json" | awk '{s += $2} END {print s + 0}') ;;
	esac
	mode_down "$m"
	local line
	line=$(awk -v s0="$s0" -v s1="$s1" -v st0="$st0" -v st1="$st1" -v p="$((p1 - p0))" \
		-v secs="${took:-$secs}" -v hz="$HZ" -v m="$m" -v c="$c" -v load="$load" -v sent="${sent:-0}" \
		-v gcpu="$gcpus" -v dcpu="$dev_cpus" -v note="$note" -v sockd="$sockd" -v txd="$txd" -v b0="$b0" -v b1="$b1" '
		BEGIN {
			split(s0, a, " "); split(s1, b, " ")
			fr = b[2] - a[2]; co = b[4] - a[4]; fu = b[6] - a[6]; bad = b[8] - a[8]; by = b[12] - a[12]
			nx = split(st0, x, " "); split(st1, y, " ")
			busy = y[1] - x[1]
			nd = split(dcpu, d, ","); for (i = 1; i <= nd; i++) isdev[d[i]] = 1
			sirq = 0
			for (i = 2; i <= nx; i++) {
				split(x[i], u, ":"); split(y[i], v, ":")
				if (u[1] in isdev) sirq += v[2] - u[2]
			}
			dev = sirq + p
			pps = fr / secs; cps = co / secs; fps = fu / secs
			gbps = by * 8 / secs / 1e9
			path = fr > 0 ? busy / hz / fr * 1e6 : 0
			devus = fr > 0 ? dev / hz / fr * 1e6 : 0
			agg = (m == "ring" || m == "mmsg" || m == "xdp" || m ~ /^xdp-agg/)
			valid = (fr > 0 && bad == 0 && !(load == "ina8" && agg && fu == 0)) ? "true" : "false"
			printf "{\"mode\":\"%s\",\"cores\":%d,\"load\":\"%s\",\"pps\":%.0f,\"gbps\":%.3f,", m, c, load, pps, gbps
			printf "\"path_cpu_us_per_pkt\":%.3f,\"device_cpu_us_per_pkt\":%.3f,\"valid\":%s,", path, devus, valid
			printf "\"available\":true,\"contrib_pps\":%.0f,\"full_pps\":%.0f,\"offered_pps\":%.0f,\"bad\":%d,", cps, fps, sent / secs, bad
			printf "\"switchd_socket_rx_drops\":%s,\"switchd_socket_tx_drops\":%s,", sockd, txd
			# --bpf-stats: ns per run of each program that ran, between the snapshots
			nb = split(b0, q0, " "); split(b1, q1, " "); bj = ""; bt = ""
			for (i = 1; i <= nb; i++) {
				split(q0[i], u, ":"); split(q1[i], v, ":")
				if (u[1] != v[1] || v[3] - u[3] <= 0) continue
				ns = (v[2] - u[2]) / (v[3] - u[3])
				bj = bj (bj == "" ? "" : ",") sprintf("\"%s\":[%.0f,%d]", u[1], ns, v[3] - u[3])
				bt = bt (bt == "" ? "" : ", ") sprintf("%s %.0f ns/run", u[1], ns)
			}
			if (bj != "") printf "\"bpf_ns_per_run\":{%s},", bj
			printf "\"generator_cpus\":\"%s\",\"device_cpus\":\"%s\",\"note\":\"%s\"}", gcpu, dcpu, note
			printf "\t%-14s %5d %11.0f %8.3f %11.0f %11.0f %9.3f %9.3f %-5s  gen %s, device %s%s%s\n", m, c, pps, gbps, cps, sent / secs, path, devus, valid, gcpu, dcpu, (note != "" ? "; " note : ""), (bt != "" ? "; bpf " bt : "")
		}')
	results+=("${line%%	*}")
	table+=("${line#*	}")
	local cps
	cps=$(echo "${line%%	*}" | grep -o '"contrib_pps":[0-9]*' | cut -d: -f2)
	cps_of[$m/$c]=${cps:-0}
	if [ "$m" = direct ]; then
		direct_c[$c]=${cps:-0}
	else
		if [ "${cps:-0}" -gt "$best_contrib" ]; then
			best_contrib=$cps
			best_mode="$m/$c"
		fi
		if [ "${cps:-0}" -gt "${best_c[$c]:-0}" ]; then
			best_c[$c]=$cps
			bestm_c[$c]="$m/$c"
		fi
		case $m in ring | mmsg | xdp | xdp-agg*)
			if [ "${cps:-0}" -gt "$sw_contrib" ]; then
				sw_contrib=$cps
				sw_mode="$m/$c"
			fi ;;
		esac
	fi
}

has_choice() { case $1 in direct | xdp-redirect | ring | mmsg | xdp | xdp-agg*) return 0 ;; esac; return 1; }
want_direct=0
for m in "${modes[@]}"; do [ "$m" = direct ] && want_direct=1; done
# the direct pair first, always, at 1 core (bridge and xsk-fwd run at 1)
# and at each count of LIST (the ceiling every run of that count is
# compared with: the same generator CPUs and queues)
dcores=(1)
for c in "${cores[@]}"; do [ "$c" = 1 ] || dcores+=("$c"); done
for c in "${dcores[@]}"; do run_one direct "$c"; done
[ $want_direct = 1 ] || { results=(); table=(); }
for m in "${modes[@]}"; do
	[ "$m" = direct ] && continue
	if has_choice "$m"; then
		for c in "${cores[@]}"; do run_one "$m" "$c"; done
	else
		run_one "$m" 1
	fi
done

# the target: at every core count the direct pair >= 1.5x the best device
direct_contrib=${direct_c[1]:-0}
ratio=null
by_cores=""
by_text=""
for c in "${dcores[@]}"; do
	[ -n "${direct_c[$c]:-}" ] || continue
	r=$(awk -v d="${direct_c[$c]}" -v b="${best_c[$c]:-0}" 'BEGIN {if (b > 0) printf "%.2f", d / b; else print "null"}')
	case $by_cores in *"\"$c\":"*) continue ;; esac
	by_cores="$by_cores${by_cores:+,}\"$c\":{\"direct_pair_pps\":${direct_c[$c]},\"best_device\":\"${bestm_c[$c]:-}\",\"best_device_pps\":${best_c[$c]:-0},\"direct_over_best\":$r}"
	by_text="$by_text${by_text:+; }$c core(s): direct ${direct_c[$c]} / ${bestm_c[$c]:-none} ${best_c[$c]:-0} = $r"
	if [ "$r" != null ]; then
		ratio=$(awk -v a="$ratio" -v b="$r" 'BEGIN {print (a == "null" || b + 0 < a + 0) ? b : a}')
	fi
done
# issue 25's targets, per core count, from this run's rows: xdp-agg (and
# xdp-agg-cpumap) over xdp-redirect (the CPUs: in the notes) and over xdp
kp_json=""
kp_text=()
for c in "${cores[@]}"; do
	for m in xdp-agg xdp-agg-cpumap; do
		[ -n "${cps_of[$m/$c]:-}" ] || continue
		r1=$(awk -v a="${cps_of[$m/$c]}" -v b="${cps_of[xdp-redirect/$c]:-0}" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "null"}')
		r2=$(awk -v a="${cps_of[$m/$c]}" -v b="${cps_of[xdp/$c]:-0}" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "null"}')
		case $load in
		ina1) t1=0.4 t2=3 ;;
		ina8) t1=0.5 t2="" ;;
		*) t1="" t2="" ;;
		esac
		v1=$(awk -v r="$r1" -v t="$t1" 'BEGIN {if (t == "" || r == "null") print "none"; else print (r + 0 >= t + 0) ? "met" : "MISSED"}')
		v2=$(awk -v r="$r2" -v t="$t2" 'BEGIN {if (t == "" || r == "null") print "none"; else print (r + 0 >= t + 0) ? "met" : "MISSED"}')
		kp_json="$kp_json${kp_json:+,}\"$m/$c\":{\"over_xdp_redirect\":$r1,\"over_xdp\":$r2}"
		kp_text+=("$m/$c: ${cps_of[$m/$c]} contributions/s = $r1 x xdp-redirect/$c${t1:+ (target >= $t1: $v1)}, $r2 x xdp/$c${t2:+ (target >= $t2: $v2)}")
	done
done
swc=${sw_mode#*/}
swratio=$(awk -v d="${direct_c[${swc:-x}]:-0}" -v b="$sw_contrib" 'BEGIN {if (b > 0) printf "%.2f", d / b; else print "null"}')
ok=$(awk -v r="$ratio" 'BEGIN {print (r != "null" && r + 0 >= 1.5) ? "true" : "false"}')
if [ $json = 1 ]; then
	printf '{"runs":['
	sep=""
	for r in "${results[@]}"; do printf '%s%s' "$sep" "$r"; sep=","; done
	printf '],"direct_pair_pps":%s,"best_device":"%s","best_device_pps":%s,"direct_over_best":%s,"generator_faster":%s,' \
		"${direct_contrib:-0}" "$best_mode" "$best_contrib" "$ratio" "$ok"
	printf '"by_cores":{%s},' "$by_cores"
	printf '"best_switchd":"%s","best_switchd_pps":%s,"direct_over_best_switchd":%s,' \
		"$sw_mode" "$sw_contrib" "$swratio"
	printf '"kernel_path":{%s},' "$kp_json"
	printf '"load":"%s","seconds":%s,"check":"%s","nice":%s,"cpu_set":"%s","generator_cpu":%s,"busy_cpus_before":%s,"frame_bytes":1022}\n' \
		"$load" "$secs" "$check" "$nice" "$CPUS" "$GEN_CPU" "$idle"
else
	echo "switchd_bench: load $load, 1022-byte frames, $secs s per run, values checked: $check, nice $nice"
	echo "CPU set $CPUS: generator on CPU $GEN_CPU (at N > 1 cores on the first N CPUs), a 1-core device on CPU $DEV1; busy CPUs of the set before the runs: $idle"
	echo "pps = frames that checked at the sink / s; contrib/s = contributions in them; CPU = us per delivered frame"
	printf '%-14s %5s %11s %8s %11s %11s %9s %9s %-5s  %s\n' mode cores pps Gbit/s contrib/s offered/s path_us dev_us valid cpus
	for t in "${table[@]}"; do echo "$t"; done
	echo "direct pair over the best other mode at the same core count: $by_text"
	echo "lowest ratio $ratio (target >= 1.5 at every core count: $([ "$ok" = true ] && echo meets || echo MISSES))"
	if [ -n "$sw_mode" ]; then
		echo "best switchd: $sw_mode $sw_contrib contributions/s; the direct pair at its core count / it: $swratio"
	fi
	for t in "${kp_text[@]}"; do echo "kernel path (issue 25) $t"; done
fi
