#!/usr/bin/env bash
# python_bench.sh [EPOCHS]: the issue-9 targets, measured.  Trains the MLP of
# examples/ddp_digits.py (85002 parameters, sklearn's digits) with PyTorch
# DDP in network namespaces, once through the InArt comm hook (switchd
# aggregation) and once with gloo's all-reduce over the same shaped links,
# in two scenarios of the example's rack (workers under INA switch t0, PSs
# p0, p1 behind t1, every link 100 Mbit/s, tbf queue 10 ms):
#
#   parity  2 workers: the planner predicts no gain over a ring all-reduce
#           (both move the gradient once over each worker link)
#           target: InArt's comm time per iteration no worse than gloo's
#   gain    4 workers: the planner predicts 27.2 ms against the ring's 40.8
#           target: InArt's comm time per iteration lower than gloo's
#
# and in both: the final test accuracy of the InArt run within 1 point of
# the gloo run's.  Comm time per iteration: from a bucket handed to the hook
# to its averaged gradient, summed over the iteration's buckets, slowest rank,
# median over the iterations after the first 3 (the example's --warmup);
# InArt's parts of it (hand-over to the C call, start barrier -- none by
# default --, C all-reduce, after it) are printed too.
# Prints each run's table, then PASS/MISS per target with both figures and
# the ratio, and the machine's load average before and after (figures taken
# on a busy machine are tentative).  Results (JSON, PNG of the loss curves,
# the log) go to bench/results/python-<scenario>.*.
#
# SYNC=1 runs InArt with the hook's start barrier (ddp_digits.py --sync,
# inart.torch.State(sync=True); off by default).
# Needs root, the build (BUILD=dir, default build/) and scripts/deps.sh's
# python3-torch, python3-sklearn, python3-matplotlib.
set -u
epochs=${1:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${BUILD:-$root/build}
out=$root/bench/results
PY=/usr/bin/python3
if [ "$(id -u)" -ne 0 ]; then
	echo "python_bench: needs root (network namespaces)" >&2
	exit 1
fi
for f in "$bdir/inart" "$bdir/libinart_worker.so"; do
	if [ ! -e "$f" ]; then
		echo "python_bench: $f missing (ninja -C $bdir; BUILD=dir selects the build)" >&2
		exit 1
	fi
done
mkdir -p "$out"
export INART_BIN=$bdir/inart INART_WORKER_LIB=$bdir/libinart_worker.so
echo "python_bench: commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null), $(nproc) cores," \
	"load average before: $(cut -d' ' -f1-3 /proc/loadavg)${SYNC:+, start barrier on (SYNC)}"
rc=0
for sc in parity:2 gain:4; do
	name=${sc%:*}
	w=${sc#*:}
	echo
	echo "== $name: $w workers, 100 Mbit/s, $epochs epochs"
	if ! $PY "$root/examples/ddp_digits.py" --workers "$w" --mbps 100 --epochs "$epochs" \
		--queue-ms 10 --png "$out/python-$name.png" --json "$out/python-$name.json" ${SYNC:+--sync} \
		2>&1 | tee "$out/python-$name.log"; then
		echo "MISS $name: the run failed (log: $out/python-$name.log)"
		rc=1
	fi
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); ${SECONDS} s in all"
echo
echo "Targets (issue 9):"
$PY - "$out" <<'PYEOF'
import json, os, sys
out = sys.argv[1]
npass = nmiss = 0
for name, want_gain in (("parity", False), ("gain", True)):
    p = os.path.join(out, "python-%s.json" % name)
    if not os.path.exists(p):
        print("  MISS %s: no result" % name); nmiss += 1; continue
    r = json.load(open(p))
    a, g = r["results"]["inart"], r["results"]["gloo"]
    d = a["final_acc"] - g["final_acc"]
    ok = abs(d) <= 1.0
    print("  %s %s: test accuracy InArt %.2f%%, gloo %.2f%% (%+.2f points, target within 1)"
          % ("PASS" if ok else "MISS", name, a["final_acc"], g["final_acc"], d))
    npass, nmiss = npass + ok, nmiss + (not ok)
    ratio = a["comm_med"] / g["comm_med"]
    ok = ratio < 1.0 if want_gain else ratio <= 1.0
    print("  %s %s: comm time per iteration InArt %.2f ms, gloo %.2f ms, ratio %.3f (target %s; "
          "predicted %.1f vs %.1f ms)" % ("PASS" if ok else "MISS", name, a["comm_med"] * 1e3,
                                          g["comm_med"] * 1e3, ratio,
                                          "< 1" if want_gain else "<= 1",
                                          r["predicted_inart_s"] * 1e3, r["predicted_ring_s"] * 1e3))
    npass, nmiss = npass + ok, nmiss + (not ok)
    print("       InArt's comm time, medians over the iterations (ms): hand-over %.2f, start "
          "barrier %.2f, C all-reduce %.2f, after it %.2f; skew of the ranks' hand-overs "
          "%.2f (gloo's %.2f)" % (a["wait_med"] * 1e3, a["barrier_med"] * 1e3,
                                  a["c_med"] * 1e3, a["post_med"] * 1e3, a["skew_med"] * 1e3,
                                  g["skew_med"] * 1e3))
print("\n%d PASS, %d MISS" % (npass, nmiss))
PYEOF
exit $rc
