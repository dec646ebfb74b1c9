#!/usr/bin/env bash
# leafspine_gap.sh INART PYTHON SCRIPT: bench/leafspine_gap.py's two models
# against CBC's proven optima on scarce-small instances (small leaf-spines):
#  - `cut` is a relaxation of every plan: its HiGHS bound, and its value
#    when HiGHS proves it, are never above CBC's proven optimum;
#  - `fixed` restricted to the milp plan's split holds the milp plan when
#    its routes are the model's (leaf-spine-leaf, see the script): then HiGHS's bound is
#    never above the milp plan's time, and its best point never below CBC's
#    optimum (CBC's optimum is over the candidates, a larger set);
#  - the `fixed` model's best point, written as a plan, is valid and
#    `inart eval` gives it at most the model's time.
set -u
inart=$1 py=$2 script=$3
if ! "$py" -c 'from scipy.optimize import milp' 2>/dev/null; then
	echo "no scipy >= 1.9 for $py (scripts/deps.sh installs python3-scipy): skipped"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 checked=0
for n in 0 3 5 8 9 12; do
	d=$tmp/s$n
	"$inart" run --scenario "scarce-small/$n" --write "$d" --no-compare || exit 1
	if ! "$inart" plan "$d/topo.json" "$d/jobs.json" --algo milp --milp-time-limit 60 \
		-o "$d/milp.json" 2>"$d/milp.err"; then
		echo "scarce-small/$n: milp failed: $(cat "$d/milp.err")"
		fail=1
		continue
	fi
	if ! grep -q '"milp_status": "optimal"' "$d/milp.json"; then
		echo "scarce-small/$n: CBC did not prove optimality in 60 s, skipped"
		continue
	fi
	"$py" "$script" "$d/topo.json" "$d/jobs.json" cut 30 >"$d/cut.txt" || { fail=1; continue; }
	"$py" "$script" "$d/topo.json" "$d/jobs.json" fixed "$d/milp.json" 30 "$d/fixed.json" \
		>"$d/fixed.txt" || { fail=1; continue; }
	# the best point is a plan: the evaluator gives it the model's time or less
	"$inart" eval "$d/topo.json" "$d/jobs.json" "$d/fixed.json" --json >"$d/fixed.eval" ||
		{ echo "scarce-small/$n: the fixed model's plan is invalid"; fail=1; continue; }
	"$py" - "$d" "$n" <<'EOF' || fail=1
import json, re, sys
d, n = sys.argv[1], sys.argv[2]
plan = json.load(open(d + "/milp.json"))
opt = plan["comm_time_s"] * 1e3
def parse(f):
    s = open(f).read()
    m = re.search(r": (optimal|time limit); best point (\S+) ms, HiGHS bound (\S+) ms", s)
    if m is None:
        sys.exit("scarce-small/%s: cannot read %s: %s" % (n, f, s))
    return m.group(1), float(m.group(2)), float(m.group(3))
st, val, bnd = parse(d + "/cut.txt")
bad = bnd > opt * (1 + 1e-6) or (st == "optimal" and val > opt * (1 + 1e-6))
print("scarce-small/%s: CBC optimum %.4f ms; cut %s, point %.4f, bound %.4f%s"
      % (n, opt, st, val, bnd, "  <- ABOVE THE OPTIMUM" if bad else ""))
topo = json.load(open(d + "/topo.json"))
leaf = {}
for ln in topo["links"]:
    for h, o in ((ln["a"], ln["b"]), (ln["b"], ln["a"])):
        if h.startswith("h"):
            leaf[h] = o
leaves = set(leaf.values())
def fits(p, r, tree):
    """the route is one of the `fixed` model's (bench/leafspine_gap.py)"""
    P = leaf[p]
    sw = [x for x in r["path"] if not x.startswith("h")]
    if sw[0] == P:
        return sw == [P] or (not tree and sw[1:] == [r["agg"]])
    if sw[0] in leaves:
        return len(sw) <= 3 and (len(sw) < 3 or sw[2] == P or (not tree and sw[2] == r["agg"]))
    return sw in ([sw[0]], [sw[0], P])
two_hop = all(fits(r["ps"], r, t) for j in plan["jobs"]
              for t, rs in ((0, j["flows"]), (1, j.get("trees", []))) for r in rs)
st, val, bnd = parse(d + "/fixed.txt")
ev = json.load(open(d + "/fixed.eval"))["comm_time_s"] * 1e3
if ev > val * (1 + 1e-6):
    print("  the fixed model's plan evaluates to %.4f ms, above its %.4f" % (ev, val))
    bad = True
if two_hop:
    bad2 = bnd > opt * (1 + 1e-6) or val < opt * (1 - 1e-6)
    print("  fixed at milp's split (the milp plan is in the model): %s, point %.4f, bound %.4f%s"
          % (st, val, bnd, "  <- INCONSISTENT WITH THE OPTIMUM" if bad2 else ""))
    bad = bad or bad2
sys.exit(1 if bad else 0)
EOF
	checked=$((checked + 1))
done
if [ $checked -lt 3 ]; then
	echo "only $checked instances checked"
	fail=1
fi
exit $fail
