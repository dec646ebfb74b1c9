#!/usr/bin/env bash
# emu_bench.sh [ITERS]: InArt and its baselines measured on packets in the
# emulated network (inart emu compare, docs/emulator.md), beside the
# evaluator's prediction, on three k=4 fat-tree scenarios and a leaf-spine
# one:
#   default     the built-in default scenario (two jobs, INA everywhere with
#               2 trees per switch, 20% background on a third of the fabric)
#   scarce      INA only at the ToRs, one tree and 100 Gbit/s of
#               aggregation each (the switches' aggregation limit and tree
#               budgets bind), same jobs
#   background  the default topology with 50% background load on every
#               aggregation-core link (real cross traffic), same jobs; run
#               at --mbps 10 (EMU_BG_MBPS), half the default rate scale: its
#               cross-traffic sender and InArt's run used 1.66-1.70 of the 2
#               cores at 20 Mbit/s and InArt measured 1.15-1.21x there (at
#               c181cf2), 1.15 cores and 1.01-1.03x at 10 Mbit/s
#   scarce-small the planning family's scarce-small/1 (5 leaves, 2 spines,
#               three jobs): InArt's plan is mixed there, two jobs as ring
#               all-reduces and one through PSs, sharing the leaf-spine links
# Algorithms: inart, ps, byteps, switchml, atp and ring (EMU_ALGOS to change).
# For each: a table, CSV, JSON and a PNG chart in bench/results/emu/, the
# measured/predicted ratios, InArt's reductions, CPU headroom, and the
# targets of issue 12 (PASS/MISS; a CPU-bound run is reported as info).
# EMU_ARGS adds options to every compare (e.g. "--mbps 10").  Root only.
# About 6 minutes with ITERS 5 on a quiet 2-core machine (7 min 45 s on a
# busy one).
set -u
iters=${1:-5}
algos=${EMU_ALGOS:-inart,ps,byteps,switchml,atp,ring}
root=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD:-$root/build}
out=$root/bench/results/emu
if [ "$(id -u)" -ne 0 ]; then
	echo "emu_bench: needs root" >&2
	exit 1
fi
# (a directory without build.ninja -- a copy of inart, inart-emu-worker and
# libinart_worker.so* -- is used as is: a long run is not disturbed by builds)
if [ -f "$B/build.ninja" ]; then
	ninja -C "$B" >/dev/null || exit 1
fi
mkdir -p "$out"
I=$B/inart

"$I" run --scenario default --write "$out/default" --no-compare >/dev/null || exit 1
"$I" run --scenario scarce-small/1 --write "$out/scarce-small" --no-compare >/dev/null || exit 1
mkdir -p "$out/scarce" "$out/background"
"$I" topo gen fattree --k 4 --ina tor --trees 1 --agg-gbps 100 -o "$out/scarce/topo.json" || exit 1
cp "$out/default/jobs.json" "$out/scarce/jobs.json"
cp "$out/default/jobs.json" "$out/background/jobs.json"
python3 - "$out/default/topo.json" "$out/background/topo.json" <<'X' || exit 1
import json, sys
t = json.load(open(sys.argv[1]))
kind = {n["id"]: n["kind"] for n in t["nodes"]}
for l in t["links"]:
    ends = (l["a"][0], l["b"][0])
    l["background_gbps"] = 0.5 * l["gbps"] if sorted(ends) == ["a", "c"] else 0
json.dump(t, open(sys.argv[2], "w"), indent=1)
X

echo "emu_bench: commit $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
# target: a k=4 fat-tree (20 switches, 16 hosts) up and down in under 10 s
P=${EMU_PREFIX:-eb$$} # EMU_PREFIX: another per-run prefix (1-9 of [a-z0-9])
t0=$(date +%s.%N)
"$I" emu up "$out/default/topo.json" "$out/default/jobs.json" --prefix "$P" -q >/dev/null || status=1
t1=$(date +%s.%N)
"$I" emu down --prefix "$P" >/dev/null || status=1
t2=$(date +%s.%N)
python3 -c "
import sys; a, b, c = map(float, sys.argv[1:4]); t = c - a
print('== up and down: up %.2f s (namespaces, veths, shaping, 20 switchd, 5 ps), down %.2f s' % (b - a, c - b))
print('  %s k=4 fat-tree up and down in under 10 s (%.2f s)' % ('PASS' if t < 10 else 'MISS', t))" "$t0" "$t1" "$t2"
for s in default scarce background scarce-small; do
	echo "== $s"
	"$I" emu compare "$out/$s/topo.json" "$out/$s/jobs.json" --iters "$iters" --algos "$algos" \
		--prefix "$P" -f json -o "$out/$s.json" --png "$out/$s.png" ${EMU_ARGS:-} \
		$([ "$s" = background ] && echo "--mbps ${EMU_BG_MBPS:-10}") 2>"$out/$s.log"
	rc=$?
	[ $rc -ne 0 ] && status=1
	python3 - "$out/$s.json" <<'X'
import json, sys
d = json.load(open(sys.argv[1]))
print("%-10s %12s %12s %7s %6s %6s %6s" % ("algorithm", "predicted ms", "measured ms",
                                          "ratio", "exact", "cpu", "sw cpu"))
for r in d["runs"]:
    m = r["measured_comm_s"]
    print("%-10s %12.3f %12s %7s %6s %6.2f %6.2f%s" % (
        r["algorithm"], r["predicted_comm_s"] * 1e3, "%.3f" % (m * 1e3) if m else "-",
        "%.3f" % r["ratio"] if r["ratio"] else "-", "yes" if r["exact"] else "NO",
        r.get("cpu", {}).get("run_cores", 0), r.get("cpu", {}).get("switchd_max_cores", 0),
        "  CPU-bound: " + r["cpu_why"] if r["cpu_bound"] else ""))
for x in d["reductions"]:
    print("  inart vs %-9s measured %s predicted %.1f%%" % (
        x["baseline"], "%.1f%%" % (100 * x["measured"]) if x["measured"] is not None else "-",
        100 * x["predicted"]))
for t in d["targets"]:
    print("  %s %s" % (t["verdict"], t["what"]))
X
done
echo "results in $out"
exit $status
