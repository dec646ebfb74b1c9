#!/usr/bin/env bash
# dynamics_bench.sh [ITERS [OUTDIR]] (root): issue 10's targets on the
# emulated k=4 fat-tree (the built-in default scenario, two jobs), with a
# background surge on the fabric link the InArt plan loads most:
#   1. from the background change to the new plan installed: < 1 s (100 ms
#      counter period);
#   2. after adaptation, measured communication time within 20% of a plan
#      computed with the true loads (the planner given the surge as static
#      background, run under the same schedule);
#   3. zero lost or duplicated all-reduces (every iteration of every run
#      finished and exact: the values change every iteration);
#   4. controller CPU < 5% of a core.
# Runs `inart emu run --controller both` (the plan without, then with the
# controller) and the true-load plan; writes OUTDIR/dynamics.png (both runs'
# per-iteration times with the surge) and prints every figure with
# PASS/MISSED, then the controller's own summary (its CPU by phase and
# re-plans).  Timing figures are only meaningful on a quiet machine.
set -u
ITERS=${1:-16}
OUT=${2:-dynamics-bench}
BUILD=${BUILD:-build}
INART=$BUILD/inart
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
AT=3 # the surge, seconds after the first iteration starts
mkdir -p "$OUT"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$INART" run --scenario default --write "$tmp/s" --no-compare >/dev/null || exit 1
"$INART" plan "$tmp/s/topo.json" "$tmp/s/jobs.json" -o "$tmp/plan.json" 2>/dev/null || exit 1
# the fabric arc the plan loads most, and a surge to 90% of its capacity
read -r A B G < <("$PY" - "$tmp/s/topo.json" "$tmp/plan.json" "$tmp/true.json" <<'EOF'
import collections, json, sys
topo, plan = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
kind = {n["id"]: n["kind"] for n in topo["nodes"]}
use = collections.Counter()
for j in plan["jobs"]:
    for f in j.get("flows", []) + j.get("trees", []):
        p = f["path"]
        for u, v in zip(p, p[1:]):
            if kind[u] == "switch" and kind[v] == "switch":
                use[(u, v)] += 1
(a, b), _ = use.most_common(1)[0]
for l in topo["links"]:
    if {l["a"], l["b"]} == {a, b}:
        d = "ab" if l["a"] == a else "ba"
        cap = l.get(d + "_gbps", l.get("gbps"))
        g = round(0.9 * cap, 3)
        l["background_" + d + "_gbps"] = g
json.dump(topo, open(sys.argv[3], "w"))
print(a, b, g)
EOF
)
echo "surge: $G Gbit/s on $A -> $B at $AT s"
"$INART" plan "$tmp/true.json" "$tmp/s/jobs.json" -o "$tmp/plan-true.json" 2>/dev/null || exit 1
common=(--iters "$ITERS" --target-s 0.5 --queue-ms 5000 --iter-timeout 60 --bg-at "$A-$B@$AT=$G")
"$INART" emu run "$tmp/s/topo.json" "$tmp/s/jobs.json" "$tmp/plan.json" "${common[@]}" \
	--controller both --dynamics-png "$OUT/dynamics.png" --keep "$OUT/keep" -f json \
	-o "$OUT/controller.json" 2>"$OUT/controller.err"
rc1=$?
"$INART" emu run "$tmp/s/topo.json" "$tmp/s/jobs.json" "$tmp/plan-true.json" "${common[@]}" \
	-f json -o "$OUT/true.json" 2>"$OUT/true.err"
rc2=$?
"$PY" - "$OUT" "$AT" "$rc1" "$rc2" <<'EOF'
import json, re, statistics, sys
out, at, rc1, rc2 = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def runs(path):
    """{run name: [(start_s, iteration_s)]} from the per-iteration lines."""
    r, cur = {}, None
    for line in open(path):
        m = re.match(r"inart emu: (.*): per-iteration communication time", line)
        if m:
            cur = r.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s+\d+ at\s+([\d.]+) s: ([\d.]+) s$", line)
        if m and cur is not None:
            cur.append((float(m.group(1)), float(m.group(2))))
    return r
c, t = runs(out + "/controller.err"), runs(out + "/true.err")
err = open(out + "/controller.err").read()
m = re.search(r"controller on: controller installed (\d+) plan\(s\), the first at ([-\d.]+) s; "
              r"controller CPU ([\d.]+)%", err)
def verdict(ok):
    return "PASS" if ok else "MISSED"
if m is None or not c.get("controller on") or not t:
    print("MISSED: no figures (runs exit %d, %d); see %s/*.err" % (rc1, rc2, out))
    sys.exit(1)
first, cpu = float(m.group(2)), float(m.group(3))
lat = first - at
print("1. background change -> new plan installed: %.3f s (target < 1 s): %s; plans "
      "installed in the run: %s" % (lat, verdict(0 <= lat < 1), m.group(1)))
on = [s for (st, s) in c["controller on"] if st >= first + 1]
off = [s for (st, s) in c.get("controller off", []) if st >= at + 1]
tr = [s for (st, s) in list(t.values())[0] if st >= at + 1]
if on and tr:
    ratio = statistics.median(on) / statistics.median(tr)
    print("2. after adaptation: median %.3f s per iteration with the controller, %.3f s with "
          "the true-load plan, %s without the controller (on packets): ratio %.3f (target "
          "<= 1.2): %s" % (statistics.median(on), statistics.median(tr),
                           "%.3f s" % statistics.median(off) if off else "-", ratio,
                           verdict(ratio <= 1.2)))
else:
    print("2. MISSED: no iterations after adaptation")
res = [json.load(open(out + "/controller.json")), json.load(open(out + "/true.json"))]
exact = all(r.get("exact") for r in res) and rc1 == 0 and rc2 == 0
print("3. every iteration of every run finished and exact (no all-reduce lost or "
      "counted twice): %s" % verdict(exact))
print("4. controller CPU %.1f%% of a core (target < 5%%): %s" % (cpu, verdict(cpu < 5)))
# the controller's own summary: CPU by phase, re-plans (docs/controller.md)
import glob
for f in sorted(glob.glob(out + "/keep/controller-*.log")):
    for line in open(f):
        if line.startswith("inart controller: ") and ("CPU" in line):
            print("   " + line.rstrip())
EOF
