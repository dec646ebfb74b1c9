#!/usr/bin/env bash
# xdp_agg_limit.sh INART ALLREDUCE: --agg-mbps on the kernel aggregation
# path (issue 25, h25g).  The fabric of xdp_agg_replace.sh (w0..w2 -- t0 (INA)
# -- t1 -- p0, p1); t0 runs `switchd --io xdp --agg kernel --agg-mbps M`, so
# the XDP program charges its token bucket and hands the frames that must
# wait to switchd, which sends them back at their time (docs/dataplane.md
# "The aggregation-rate limit on the kernel path").  Checks:
#   - with --shape on every port as well (the emulator's switches): exact
#     all-reduces, no frame sent past the shapers (the ports' tx at most
#     what left the shapers, at least the kernel's frames);
#   - t0 takes the kernel path with the limit (agg_where, its log line), and
#     --agg auto with --agg-mbps takes it too; --rx-loss is still refused
#     with --agg kernel, saying why;
#   - exact all-reduces (every iteration bit for bit on every worker) while
#     the limit binds: frames were held (gate.agg_held > 0) and the kernel
#     aggregated (agg_kernel.sent > 0);
#   - the rate: the charged frames let through (agg_frames - agg_dropped, at
#     their mean length) over the all-reduce's wall time is at most M x 1.02
#     plus one burst (the bucket's bound: a strict one, it holds on a busy
#     machine) and at least M x 0.5 (the workers offer more than M: it
#     holds unless the machine is too busy to send M; the figure is printed).
#
# XDP_AGG_LIMIT_AGG=user runs the same on the user path (to compare; its
# kernel checks then fail), XDP_AGG_LIMIT_MBPS, _VALUES the load,
# XDP_AGG_LIMIT_DUMP=1 prints t0's stats and worker 0's output.
#
# Needs root, `ip netns` and the AF_XDP back end; exits 77 (skipped)
# otherwise (INART_NO_SKIP=1: a failure).  Namespaces with the prefix
# inh25g<pid>-, removed at exit with every process started (by PID).
set -u

. "$(dirname "${BASH_SOURCE[0]}")/netns_lib.sh" xdp_agg_limit.sh "$@" # INART ALLREDUCE, skip, run
need_live_frames xdp_agg_limit.sh "$INART" "--agg kernel's flush ticks"

P="inh25g$$-"
. "$(dirname "${BASH_SOURCE[0]}")/fabric.sh" # tmp, pids, nss, ns, fabric_*

declare -A IP MAC PORTS DPID
IO=xdp fabric_w3p2_io 86

MBPS=${XDP_AGG_LIMIT_MBPS:-10}
VALUES=${XDP_AGG_LIMIT_VALUES:-50000}
ITERS=4
fabric_daemon t0 --io xdp --agg "${XDP_AGG_LIMIT_AGG:-kernel}" --agg-mbps "$MBPS"
fabric_daemon t1 --io xdp
fabric_daemon p0
fabric_daemon p1
if ! "$INART" plan "$tmp/topo.json" "$tmp/jobs.json" --algo inart -o "$tmp/plan.json" >"$tmp/out" 2>&1 ||
	! fabric_install; then
	echo "xdp_agg_limit.sh: plan or install failed: $(cat "$tmp/out" "$tmp/install.log")"
	echo "$pass passed, $((fail + 1)) failed, $skip skipped"
	exit 1
fi
if grep -q '"agg_where": *"kernel"' <("$INART" ctl stats "$tmp/t0.sock" --json 2>&1); then ok; else
	bad "t0 runs the kernel path with --agg-mbps: $(tail -3 "$tmp/t0.log")"
fi

# stats: "FRAMES DROPPED BYTES HELD SENT" of t0's gate and kernel path
t0_gate() {
	"$INART" ctl stats "$tmp/t0.sock" --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
g = s.get("gate", {})
k = s.get("xdp", {}).get("agg_kernel", {})
print(g.get("agg_frames", 0), g.get("agg_dropped", 0), g.get("agg_bytes", 0),
      g.get("agg_held", 0), k.get("sent", 0))'
}
read -r f0 d0 b0 h0 s0 <<<"$(t0_gate)"
start=$(date +%s.%N)
if FABRIC_TASKSET=1 fabric_allreduce $VALUES $ITERS; then ok; else
	bad "all-reduce of $VALUES values x $ITERS iterations under --agg-mbps $MBPS"
	cat "$tmp"/w?.out | head -20
	fabric_dump_stats t0
fi
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}')
read -r f1 d1 b1 h1 s1 <<<"$(t0_gate)"
[ -n "${XDP_AGG_LIMIT_DUMP:-}" ] && { fabric_dump_stats t0; "$INART" ctl stats "$tmp/t0.sock" --json | grep -A30 agg_kernel; cat "$tmp"/w0.out; }
if [ "$(grep -c ' exact' "$tmp/w0.out")" -eq $ITERS ]; then ok; else bad "worker 0 reports $ITERS exact iterations"; fi
if [ $((h1 - h0)) -gt 0 ] && [ $((s1 - s0)) -gt 0 ]; then ok; else
	bad "the limit held frames ($((h1 - h0))) and the kernel aggregated (sent $((s1 - s0)))"
fi
# the rate of the frames let through, against the bucket's bound
# (the upper bound over the wall time, from before the install to the last
# worker's exit: a strict bound; the achieved rate over worker 0's
# iterations, without the start)
iter_s=$(awk '/ exact$/ {s += $(NF - 2)} END {printf "%.3f", s / 1000}' "$tmp/w0.out")
out=$(awk -v f=$((f1 - f0)) -v d=$((d1 - d0)) -v b=$((b1 - b0)) -v t="$secs" -v it="$iter_s" -v m="$MBPS" 'BEGIN {
	len = f > 0 ? b / f : 0; passed = (f - d) * len * 8 / 1e6
	burst = 16 * 1518 * 8 / 1e6
	rate = it > 0 ? passed / it : 0
	printf "%.2f %.2f %d %d\n", passed / t, rate, (passed <= m * t * 1.02 + burst + len * 8 / 1e6), (rate >= 0.5 * m) }')
read -r wall_rate rate upper lower <<<"$out"
echo "xdp_agg_limit.sh: --agg-mbps $MBPS: $((f1 - f0)) charged frames, $((h1 - h0)) held," \
	"$((d1 - d0)) dropped; through at $wall_rate Mbit/s over the run's $secs s, $rate Mbit/s over" \
	"worker 0's $ITERS iterations ($iter_s s) (load: $(cut -d' ' -f1-3 /proc/loadavg))"
if [ "$upper" = 1 ]; then ok; else bad "at most $MBPS Mbit/s x 1.02 + a burst let through (got $wall_rate over $secs s)"; fi
if [ "$lower" = 1 ]; then ok; else bad "at least half of $MBPS Mbit/s let through while the workers ran (got $rate)"; fi

# with --shape on every port too (as the emulator runs its switches): the
# kernel's frames leave through the shapers (no port sent more than its
# shaper let out), the all-reduces exact
kill "${DPID[t0]}" 2>/dev/null
wait "${DPID[t0]}" 2>/dev/null
fabric_daemon t0 --io xdp --agg kernel --agg-mbps "$MBPS" --shape p0=200mbit --shape p1=200mbit \
	--shape p2=200mbit --shape p3=200mbit
if "$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
	--deploy "$tmp/deploy.json" --only t0 >"$tmp/out" 2>&1; then ok; else
	bad "t0 (--shape) installed with --only t0: $(cat "$tmp/out")"
fi
if FABRIC_TASKSET=1 fabric_allreduce 20000 2; then ok; else
	bad "all-reduce of 20000 values x 2 iterations with --shape and --agg-mbps"
	cat "$tmp"/w?.out | head -20
fi
"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/t0.stats" 2>&1
if /usr/bin/python3 - "$tmp/t0.stats" >"$tmp/out" 2>&1 <<'PY'; then ok; else bad "the kernel's frames through the shapers: $(cat "$tmp/out")"; fi
import json, sys
s = json.load(open(sys.argv[1]))
k = s.get("xdp", {}).get("agg_kernel", {})
shaped = sum(p.get("shaped_tx", 0) for p in s["ports"])
out = k.get("sent", 0) + k.get("queued", 0) + k.get("flushed", 0)
tx = sum(p.get("tx_pkts", 0) for p in s["ports"])
print("agg_where %s, kernel frames %d, sent %d, shaped %d" % (s.get("xdp", {}).get("agg_where"), out, tx, shaped))
sys.exit(0 if s["xdp"]["agg_where"] == "kernel" and out > 0 and shaped >= out and tx <= shaped else 1)
PY
echo "xdp_agg_limit.sh: with --shape: $(cat "$tmp/out")"

# --agg auto takes the kernel path with --agg-mbps (saying so); --rx-loss is
# refused
kill "${DPID[t0]}" 2>/dev/null
wait "${DPID[t0]}" 2>/dev/null
for c in "auto:--agg-mbps 10:--agg auto: kernel" "auto:--agg-mbps 10:--agg-mbps 10: charged in the kernel" "kernel:--agg-mbps 10 --rx-loss 0.01:--rx-loss or --tx-loss"; do
	IFS=: read -r where extra want <<<"$c"
	# shellcheck disable=SC2086
	timeout 10 ip netns exec "$(ns t0)" "$INART" switchd --name t0 --port p0,p1,p2,p3 \
		--ctl "$tmp/x.sock" --io xdp --agg "$where" $extra --log-level info >"$tmp/out" 2>&1 &
	xp=$!
	pids+=($xp)
	if [ "$where" = auto ]; then
		fabric_wait_socks "$tmp/x.sock"
		sleep 0.2
		kill "$xp" 2>/dev/null
	fi
	wait "$xp"
	rc=$?
	if grep -qF -- "$want" "$tmp/out" && { [ "$where" = auto ] || [ $rc -eq 1 ]; }; then ok; else
		bad "--agg $where $extra: exit $rc, '$want' wanted: $(head -c 300 "$tmp/out")"
	fi
	rm -f "$tmp/x.sock"
done
fabric_logs_clean t0 t1 p0 p1

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
