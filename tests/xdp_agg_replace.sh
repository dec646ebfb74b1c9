#!/usr/bin/env bash
# xdp_agg_replace.sh INART ALLREDUCE: the kernel aggregation path removed and
# replaced while traffic flows (issue 25, "Bad input and faults").  The
# fabric of netns.sh without x0:
#
#     w0 --\                      /-- p0
#     w1 ---- t0 (INA) ------- t1
#     w2 --/                      \-- p1
#
# One run of exact all-reduces (examples/allreduce.c, every iteration checked
# bit for bit by every worker; the workers pinned to both CPUs, so a chunk's
# contributions arrive on different CPUs) goes on while t0, the aggregating
# switch, is stopped and started again under it, each time installed again
# with `ctl install --only t0` (as netns.sh and the emulator recover a
# switch):
#   1. --agg kernel, killed (SIGKILL) -> --agg user (the core aggregates);
#   2. --agg user, stopped (SIGTERM) -> --agg kernel;
#   3. --agg kernel, killed (SIGKILL) -> --agg kernel (the program replaced
#      by a new instance).
# Every switch the kernel path was at, then the user path, then the kernel
# again, with its busy slots lost with the process (the CPUMAP, its program
# and the slot maps go with switchd's descriptors): they are recovered by the
# workers' retransmission path.  Checks:
#   - after each stop no XDP program is left on t0's interfaces; after each
#     start t0 reports the path asked for (`agg_where`), and aggregated on it
#     (the kernel's `sent`, or the core's tree counters);
#   - every iteration exact on every worker, each reported once (none lost,
#     none doubled), and the PSs completed exactly iterations x chunks
#     chunks (as many as in an undisturbed iteration: no chunk done twice),
#     with no step notice and nothing dropped as stale;
#   - the faults did cost retransmissions (the check is not vacuous);
#   - --agg kernel where the kernel path cannot run (--io ring) exits 1
#     saying why, --agg auto takes user saying why; --agg kernel with
#     --shape starts and says its frames go through the shaper;
#   - at the end (t0 SIGTERM, t1 SIGKILL) no XDP program left anywhere.
# switchd has no live reload or replacement of its program (a new program is
# a new switchd): the restarts above are the replacement path.
#
# Needs root, `ip netns` and the AF_XDP back end; exits 77 (skipped)
# otherwise (INART_NO_SKIP=1: a failure).  Namespaces with the prefix
# inh25r<pid>-, removed at exit with every process started (by PID).
set -u

. "$(dirname "${BASH_SOURCE[0]}")/netns_lib.sh" xdp_agg_replace.sh "$@" # INART ALLREDUCE, skip, run
need_live_frames xdp_agg_replace.sh "$INART" "--agg kernel's flush ticks"

P="inh25r$$-"
. "$(dirname "${BASH_SOURCE[0]}")/fabric.sh" # tmp, pids, nss, ns, fabric_*

declare -A IP MAC PORTS DPID
IO=xdp fabric_w3p2_io 85

xdp_left() { # xdp_left NODE: XDP programs attached to NODE's interfaces
	ip -n "$(ns "$1")" link show | grep -c ' xdp'
}
# t0_stop SIGNAL: t0's switchd stopped; its programs must go with it (the
# kernel releases them once the last descriptor closed: up to 2 s)
t0_stop() {
	local n
	kill "-$1" "${DPID[t0]}" 2>/dev/null
	wait "${DPID[t0]}" 2>/dev/null
	for _ in $(seq 20); do
		n=$(xdp_left t0)
		[ "$n" -eq 0 ] && break
		sleep 0.1
	done
	if [ "$n" -eq 0 ]; then ok; else bad "XDP programs left on t0 after SIG$1: $(ip -n "$(ns t0)" link show | grep xdp)"; fi
}
# t0_start WHERE: t0's switchd with --agg WHERE, installed with --only t0
t0_start() {
	fabric_daemon t0 --io xdp --agg "$1"
	if "$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
		--deploy "$tmp/deploy.json" --only t0 >"$tmp/out" 2>&1; then ok; else
		bad "t0 (--agg $1) installed with --only t0: $(cat "$tmp/out")"
	fi
	"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/t0.stats" 2>&1
	if grep -q "\"agg_where\": *\"$1\"" "$tmp/t0.stats"; then ok; else
		bad "t0 started with --agg $1 reports it: $(grep -o '"agg_where": *"[a-z]*"' "$tmp/t0.stats")"
	fi
}
# t0_aggregated WHERE: t0 aggregated on that path since its start
t0_aggregated() {
	"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/t0.stats" 2>&1
	if /usr/bin/python3 - "$1" "$tmp/t0.stats" >"$tmp/out" 2>&1 <<'PY'; then ok; else bad "t0 aggregated on the $1 path: $(cat "$tmp/out")"; fabric_dump_stats t0; fi
import json, sys
where, s = sys.argv[1], json.load(open(sys.argv[2]))
agg = sum(t["aggregated"] for t in s["trees"])
k = s.get("xdp", {}).get("agg_kernel")
print("aggregated %d, kernel %s" % (agg, k and "sent %d dropped %d" % (k["sent"], k["dropped"])))
sys.exit(0 if agg > 0 and (k is not None and k["sent"] > 0) == (where == "kernel") else 1)
PY
}
# workers VALUES ITERS: job j0 on w0..w2, as fabric_allreduce (an install
# with --restart-jobs first), with -v: outputs and counters in $tmp/wR.out
workers() {
	local r
	"$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
		--deploy "$tmp/deploy.json" --restart-jobs >/dev/null 2>&1 || return 1
	wpids=()
	for r in 0 1 2; do
		taskset -c $((r % $(nproc))) ip netns exec "$(ns w$r)" stdbuf -oL "$ALLREDUCE" "$tmp/topo.json" \
			"$tmp/jobs.json" "$tmp/plan.json" j0 $r --deploy "$tmp/deploy.json" -n "$1" \
			--iters "$2" --workers 3 --timeout-ms 20000 -v >"$tmp/w$r.out" 2>&1 &
		wpids+=($!)
		pids+=($!)
	done
}
workers_wait() { # 0 if all three exited 0
	local rc=0 p
	for p in "${wpids[@]}"; do
		wait "$p" || rc=1
	done
	return $rc
}
done_iters() { grep -c ' exact' "$tmp/w0.out" 2>/dev/null; }
# wait_iters N: until w0 reported N iterations (at most 20 s); 1 if it ended first
wait_iters() {
	for _ in $(seq 200); do
		[ "$(done_iters)" -ge "$1" ] && return 0
		kill -0 "${wpids[0]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
ps_sum() { # ps_sum KEY: p0's + p1's counter KEY
	local s=0 p v
	for p in p0 p1; do
		v=$("$INART" ctl stats "$tmp/$p.sock" --json 2>/dev/null | grep -o "\"$1\": *[0-9]*" | grep -o '[0-9]*$')
		s=$((s + ${v:-0}))
	done
	echo $s
}

fabric_daemon t0 --io xdp --agg kernel
fabric_daemon t1 --io xdp
fabric_daemon p0
fabric_daemon p1
if ! "$INART" plan "$tmp/topo.json" "$tmp/jobs.json" --algo inart -o "$tmp/plan.json" >"$tmp/out" 2>&1 ||
	! fabric_install; then
	echo "xdp_agg_replace.sh: plan or install failed: $(cat "$tmp/out" "$tmp/install.log")"
	echo "$pass passed, $((fail + 1)) failed, $skip skipped"
	exit 1
fi
if grep -q '"agg_where": *"kernel"' <("$INART" ctl stats "$tmp/t0.sock" --json 2>&1); then ok; else
	bad "t0 runs the kernel path: $(tail -3 "$tmp/t0.log")"
fi

VALUES=200000 ITERS=100
# the chunks of one undisturbed iteration (the PSs' completed records)
c0=$(ps_sum completed)
workers $VALUES 1
if workers_wait; then ok; else bad "an undisturbed all-reduce"; cat "$tmp"/w?.out | head; fi
per_iter=$(($(ps_sum completed) - c0))
t0_aggregated kernel

# the run under the restarts
c0=$(ps_sum completed)
s0=$(ps_sum drop_stale)
n0=$(ps_sum step_notices)
workers $VALUES $ITERS
start=$(date +%s.%N)
steps=("KILL user" "TERM kernel" "KILL kernel")
next=10 # restart at iteration 10, then 8 iterations after each restart's
now=kernel
for i in 0 1 2; do
	read -r sig where <<<"${steps[$i]}"
	if ! wait_iters $next || [ "$(done_iters)" -ge $((ITERS - 1)) ]; then
		bad "the all-reduce still running at restart $((i + 1)) (w0 at $(done_iters) of $ITERS iterations)"
		break
	fi
	t0_stop "$sig"
	t0_start "$where"
	echo "xdp_agg_replace.sh: t0 --agg $now, SIG$sig -> --agg $where, at iteration $(done_iters)"
	now=$where
	# traffic on the new path before the next restart
	next=$(($(done_iters) + 8))
	if wait_iters $next; then t0_aggregated "$where"; fi
done
if workers_wait; then ok; else
	bad "every worker exact through the restarts"
	grep -v ' exact' "$tmp"/w?.out | head -20
fi
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
for r in 0 1 2; do
	n=$(grep -c "^rank $r iter .* exact" "$tmp/w$r.out")
	if [ "$n" -eq $ITERS ]; then ok; else bad "rank $r reported $ITERS exact iterations, once each (got $n)"; fi
done
completed=$(($(ps_sum completed) - c0))
if [ "$per_iter" -gt 0 ] && [ "$completed" -eq $((ITERS * per_iter)) ]; then ok; else
	bad "the PSs completed $ITERS x $per_iter chunks, each once (got $completed)"
fi
stale=$(($(ps_sum drop_stale) - s0))
notices=$(($(ps_sum step_notices) - n0))
if [ "$stale" -eq 0 ] && [ "$notices" -eq 0 ]; then ok; else
	bad "no step notices, nothing stale at the PSs (drop_stale $stale, step_notices $notices)"
fi
retx=$(grep -ho 'retransmitted [0-9]*' "$tmp"/w?.out | awk '{s += $2} END {print s + 0}')
probes=$(grep -ho 'probes [0-9]*' "$tmp"/w?.out | awk '{s += $2} END {print s + 0}')
echo "xdp_agg_replace.sh: $ITERS iterations of $VALUES values in $secs s, $per_iter chunks each;" \
	"workers retransmitted $retx, probed $probes"
if [ $((retx + probes)) -gt 0 ]; then ok; else bad "the restarts cost the workers retransmissions (none: the check saw no fault)"; fi

# --- nothing left attached ---------------------------------------------------------
t0_stop TERM
# where the kernel path cannot run, --agg kernel refuses at start (exit 1,
# saying why) and --agg auto takes user, saying why; with --shape (since
# h25e) it runs, its frames for the shaped port through the shaper
for c in "ring|kernel|needs --io xdp|exits" "xdp --shape p0=100mbit|kernel|goes through the shaper|runs" \
	"ring|auto|--agg auto: user|runs"; do
	IFS='|' read -r io where want runs <<<"$c"
	# shellcheck disable=SC2086
	timeout 10 ip netns exec "$(ns t0)" "$INART" switchd --name t0 --port p0,p1,p2,p3 \
		--ctl "$tmp/x.sock" --io $io --agg "$where" --log-level info >"$tmp/out" 2>&1 &
	xp=$!
	pids+=($xp)
	if [ "$runs" = runs ]; then
		fabric_wait_socks "$tmp/x.sock"
		sleep 0.2
		kill "$xp" 2>/dev/null
	fi
	wait "$xp"
	rc=$?
	if grep -qF -- "$want" "$tmp/out" && { [ "$runs" = runs ] || [ $rc -eq 1 ]; }; then ok; else
		bad "--io $io --agg $where: exit $rc, '$want' wanted: $(head -c 300 "$tmp/out")"
	fi
	rm -f "$tmp/x.sock"
done
if [ "$(xdp_left t0)" -eq 0 ]; then ok; else bad "XDP programs left on t0 after the refusals"; fi
kill -9 "${DPID[t1]}" 2>/dev/null
wait "${DPID[t1]}" 2>/dev/null
for _ in $(seq 20); do
	[ "$(xdp_left t1)" -eq 0 ] && break
	sleep 0.1
done
if [ "$(xdp_left t1)" -eq 0 ]; then ok; else bad "XDP programs left on t1 after SIGKILL"; fi
fabric_logs_clean t0 t1 p0 p1

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
