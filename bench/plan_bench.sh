#!/usr/bin/env bash
# plan_bench.sh: the planning benchmark of InArt (not a timed test).
#
# Builds the project, then for each built-in scenario (fat-tree k=4, 8, 16,
# leaf-spine, BCube, the default and the scarce-INA scenario; fat-tree k=32
# with --k32) writes the scenario's topology and jobs with `inart run
# --scenario NAME --write DIR --no-compare`, runs `inart compare DIR/topo.json
# DIR/jobs.json --algos ALGO --format csv` for each algorithm (one process
# each, under a timeout, rows merged into NAME.csv; ratios are computed in the
# summary), and prints planning time and communication-time
# ratios: InArt versus the LP lower bound, versus the exact MILP where CBC
# finishes (small scenarios only), versus the best baseline, and its reduction
# versus each single-PS INA baseline (switchml, atp, grid).  Finally it checks
# the targets of issue 2 and prints PASS/MISS for each.
#
# Results (inputs, CSVs, summary) go to bench/results/<date-time>/.
#
# usage: bench/plan_bench.sh [--k32] [--no-build] [--seed S] [--trials N]
#                            [--milp-time-limit S] [--only NAME[,NAME..]]
#                            [--timeout S]   (per algorithm and scenario, default 900)
# env:   INART=path/to/inart to use an existing binary (implies --no-build),
#        BUILD=dir (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

k32=0
build=1
seed=1
trials=
milp_limit=30
tlimit=900
only=
while [ $# -gt 0 ]; do
	case $1 in
	--k32) k32=1 ;;
	--no-build) build=0 ;;
	--seed) seed=$2; shift ;;
	--trials) trials=$2; shift ;;
	--milp-time-limit) milp_limit=$2; shift ;;
	--only) only=$2; shift ;;
	--timeout) tlimit=$2; shift ;;
	-h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "plan_bench.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done

BUILD=${BUILD:-build}
if [ -n "${INART:-}" ]; then
	build=0
else
	INART=$BUILD/inart
fi
if [ $build -eq 1 ]; then
	./scripts/deps.sh
	[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" --buildtype=release >&2
	ninja -C "$BUILD" >&2
fi
[ -x "$INART" ] || { echo "plan_bench.sh: no inart binary at $INART" >&2; exit 1; }

out=bench/results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

# scenario : algorithms (milp only where CBC can finish)
all_but_milp=ps,byteps,switchml,atp,grid,inart-sp,inart-even,inart,lp
with_milp=$all_but_milp,milp
cases=(
	"fattree4:$with_milp"
	"bcube:$with_milp"
	"default:$with_milp"
	"fattree8:$all_but_milp"
	"leafspine:$all_but_milp"
	"scarce:$all_but_milp"
	"fattree16:$all_but_milp"
)
if [ $k32 -eq 1 ]; then
	cases+=("fattree32:ps,byteps,switchml,atp,inart,lp")
fi

opts=(--seed "$seed" --milp-time-limit "$milp_limit")
[ -n "$trials" ] && opts+=(--trials "$trials")

echo "InArt planning benchmark: $("$INART" --version), $(nproc) cores, results in $out" | tee "$out/summary.txt"
for c in "${cases[@]}"; do
	name=${c%%:*}
	algos=${c#*:}
	if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then
		continue
	fi
	"$INART" run --scenario "$name" --seed "$seed" --write "$out/$name" --no-compare
	echo "== $name: $("$INART" run --list | awk -v n="$name" '$1 == n { $1 = ""; print substr($0, 2) }')" >&2
	# One process per algorithm, so that a slow one (bounded by --timeout)
	# does not cost the others' results; rows are merged into NAME.csv.
	echo "algorithm,ok,comm_time_s,push_time_s,pull_time_s,reduction,lp_ratio,plan_time_s,is_baseline,status" >"$out/$name.csv"
	for algo in ${algos//,/ }; do
		case $algo in ps|byteps|switchml|atp) base=1 ;; *) base=0 ;; esac
		t0=$(date +%s.%N)
		rc=0
		timeout "$tlimit" "$INART" compare "$out/$name/topo.json" "$out/$name/jobs.json" \
			--algos "$algo" "${opts[@]}" --format csv -o "$out/$name.$algo.csv" || rc=$?
		t1=$(date +%s.%N)
		wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
		if [ $rc -eq 0 ]; then
			tail -n +2 "$out/$name.$algo.csv" >>"$out/$name.csv"
			line=$(tail -n 1 "$out/$name.$algo.csv")
			echo "   $algo: $(echo "$line" | awk -F, '{ if ($2 == 1) printf "%.3f ms, plan %.2f s", $3 * 1e3, $8; else print $NF }') (wall $wall s)" >&2
		elif [ $rc -eq 124 ]; then
			echo "$algo,0,,,,,,$tlimit,$base,bench timeout after $tlimit s" >>"$out/$name.csv"
			echo "   $algo: bench timeout after $tlimit s" >&2
		else
			echo "$algo,0,,,,,,,$base,inart compare failed (exit $rc)" >>"$out/$name.csv"
			echo "   $algo: inart compare failed (exit $rc)" >&2
		fi
		rm -f "$out/$name.$algo.csv"
	done
done

python3 - "$out" "$k32" <<'EOF' | tee -a "$out/summary.txt"
import csv, json, math, os, sys

out, k32 = sys.argv[1], sys.argv[2] == "1"
order = ["fattree4", "bcube", "default", "fattree8", "leafspine", "scarce", "fattree16",
         "fattree32"]
single_ps_ina = ["switchml", "atp", "grid"]
res = {}
for name in order:
    path = os.path.join(out, name + ".csv")
    if os.path.exists(path):
        res[name] = {r["algorithm"]: r for r in csv.DictReader(open(path))}

def val(row, key):
    if row is None or row.get("ok") != "1" or row.get(key, "") == "":
        return math.nan
    return float(row[key])

def fmt(x, spec):
    return "-" if math.isnan(x) else format(x, spec)

hdr = "%-10s %9s %8s %7s %7s %9s" % ("scenario", "inart ms", "plan s", "/LP", "/MILP",
                                     "vs best")
hdr += "".join(" %9s" % ("vs " + b) for b in single_ps_ina) + "  best baseline"
print()
print(hdr)
summary = {}
for name, rows in res.items():
    inart = rows.get("inart")
    t = val(inart, "comm_time_s")
    lp = val(rows.get("lp"), "comm_time_s")
    milp = val(rows.get("milp"), "comm_time_s")
    base = [(val(rows.get(b), "comm_time_s"), b) for b in ("ps", "byteps", "switchml", "atp")]
    base = [x for x in base if not math.isnan(x[0])]
    best = min(base) if base else (math.nan, "-")
    s = {
        "comm_s": t,
        "plan_s": val(inart, "plan_time_s"),
        "lp_ratio": t / lp if lp > 0 else math.nan,
        "milp_ratio": t / milp if milp > 0 else math.nan,
        "vs_best": 1 - t / best[0] if best[0] > 0 else math.nan,
        "single": {b: 1 - t / val(rows.get(b), "comm_time_s")
                   if val(rows.get(b), "comm_time_s") > 0 else math.nan
                   for b in single_ps_ina},
        "milp_status": rows["milp"]["status"] if "milp" in rows else None,
        "inart_status": inart["status"] if inart else "not run",
    }
    summary[name] = s
    line = "%-10s %9s %8s %7s %7s %9s" % (
        name, fmt(t * 1e3, ".3f"), fmt(s["plan_s"], ".3f"), fmt(s["lp_ratio"], ".3f"),
        fmt(s["milp_ratio"], ".3f"), fmt(s["vs_best"] * 100, "+.1f") + "%")
    line += "".join(" %9s" % (fmt(s["single"][b] * 100, "+.1f") + "%") for b in single_ps_ina)
    line += "  %s %s ms" % (best[1], fmt(best[0] * 1e3, ".3f"))
    print(line)
    if s["inart_status"] != "ok":
        print("   inart: " + s["inart_status"])
    if s["milp_status"] not in (None, "ok"):
        print("   milp: " + s["milp_status"])

print()
print("Targets (issue 2):")
verdicts = []
def target(ok, text):
    v = "SKIP" if ok is None else ("PASS" if ok else "MISS")
    verdicts.append(v)
    print("  %-4s %s" % (v, text))

for name, s in summary.items():
    r = s["lp_ratio"]
    # The 1.15x target is for the default scenarios.  scarce has a target of
    # its own (below); fattree32's bound comes from a time-limited LP.
    if name in ("scarce", "fattree32"):
        print("  info %s: inart / LP bound %s (%s)" % (name, fmt(r, ".3f"),
              "scarce-INA scenario, its target is the reduction below" if name == "scarce"
              else "bound from a time-limited LP, weaker than the optimum"))
        continue
    target(None if math.isnan(r) else r <= 1.15,
           "%s: inart within 1.15x of the LP bound (%s)" % (name, fmt(r, ".3f")))
for name, s in summary.items():
    r = s["milp_ratio"]
    if s["milp_status"] is None:
        continue
    target(None if math.isnan(r) else r <= 1.05,
           "%s: inart within 1.05x of milp where CBC finishes (%s%s)" % (
               name, fmt(r, ".3f"), "" if s["milp_status"] == "ok" else "; milp: " +
               s["milp_status"]))
s = summary.get("fattree16")
if s is None:
    target(None, "fat-tree k=16, 256 workers, 8 PSs planned in under 5 s (not run)")
else:
    target(not math.isnan(s["plan_s"]) and s["plan_s"] < 5,
           "fat-tree k=16, 256 workers, 8 PSs planned in under 5 s (%s)" %
           (fmt(s["plan_s"], ".2f") + " s" if s["inart_status"] == "ok" else s["inart_status"]))
s = summary.get("fattree32")
if s is None:
    target(None, "fat-tree k=32, 1024 workers, 16 PSs planned in under 60 s (run with --k32)")
else:
    target(not math.isnan(s["plan_s"]) and s["plan_s"] < 60,
           "fat-tree k=32, 1024 workers, 16 PSs planned in under 60 s (%s)" %
           (fmt(s["plan_s"], ".2f") + " s" if s["inart_status"] == "ok" else s["inart_status"]))
s = summary.get("scarce")
if s is None:
    target(None, "scarce INA: inart well below every single-PS INA baseline (not run)")
else:
    worst = min(s["single"].values())
    target(None if math.isnan(worst) else worst >= 0.20,
           "scarce INA: inart at least 20%% below every single-PS INA baseline "
           "(reductions: %s)" % ", ".join("%s %s%%" % (b, fmt(v * 100, ".1f"))
                                          for b, v in s["single"].items()))
print()
print("%d PASS, %d MISS, %d SKIP" % (verdicts.count("PASS"), verdicts.count("MISS"),
                                     verdicts.count("SKIP")))
def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    return None if isinstance(x, float) and math.isnan(x) else x
json.dump(clean(summary), open(os.path.join(out, "summary.json"), "w"), indent=2)
EOF
