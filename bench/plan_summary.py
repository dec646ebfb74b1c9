#!/usr/bin/env python3
"""plan_summary.py OUT K32 FAMILY: the summary of bench/plan_bench.sh.

Reads OUT/<scenario>.csv (one row per algorithm, as `inart compare --format
csv` writes them; `inart-ng` is InArt without the baseline guard, `inart-nr`
InArt without the guard and without ring jobs: `--no-ring`, the plans the
data plane installs, for which the ring baseline is not a fallback), prints a
table per scenario and the targets of issues 2 and 11 as PASS or MISS, each
MISS with its reason (no exemptions), and writes OUT/summary.json.
"""
import csv
import json
import math
import os
import sys

out, k32, family = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
builtin = ["fattree4", "bcube", "default", "fattree8", "leafspine", "scarce", "fattree16"]
if k32:
    builtin.append("fattree32")
names = builtin + ["scarce-small/%d" % i for i in range(family)]
baselines = ["ps", "byteps", "switchml", "atp"]
guard_covered = baselines + ["inart-sp", "grid", "inart-even"]
# guard off, InArt's search must match every baseline, the ring included
search_covered = guard_covered + ["ring"]
single_ps_ina = ["switchml", "atp", "grid"]


def load(name):
    path = os.path.join(out, name.replace("/", "-") + ".csv")
    if not os.path.exists(path):
        return None
    return {r["algorithm"]: r for r in csv.DictReader(open(path))}


def load_cpu(name):
    """CPU seconds per algorithm (the whole `inart compare` process), if measured."""
    path = os.path.join(out, name.replace("/", "-") + ".cpu")
    if not os.path.exists(path):
        return {}
    return {a: float(c) for a, c in (l.strip().split(",") for l in open(path) if "," in l)}


def val(row, key):
    if row is None or row.get("ok") != "1" or row.get(key, "") == "":
        return math.nan
    return float(row[key])


def fmt(x, spec):
    return "-" if math.isnan(x) else format(x, spec)


def pct(x):
    return fmt(x * 100, "+.1f") + "%" if not math.isnan(x) else "-"


def best_bound(rows):
    """The bound over InArt's search space, with its source: the highest bound
    any row proved over plans without ring jobs (best_bound_s: lp, cbc, bnb),
    unless the highest over plans with ring jobs (ring_bound_s of inart and
    bound, docs/formulation.md section 11) is lower."""
    best, src = math.nan, "-"
    order = ["lp", "milp", "inart"] + [a for a in rows if a not in ("lp", "milp", "inart")]
    for a in order:
        b = val(rows.get(a), "best_bound_s")
        if b > 0 and (math.isnan(best) or b > best * (1 + 1e-9)):
            best, src = b, "%s (%s)" % (rows[a]["bound_source"], a)
    ring, by = math.nan, "-"
    for a in order:
        b = val(rows.get(a), "ring_bound_s")
        if b > 0 and (math.isnan(ring) or b > ring * (1 + 1e-9)):
            ring, by = b, a
    if ring > 0 and not ring >= best:
        best, src = ring, "ring-mix/%s (%s)" % (rows[by].get("ring_bound_source") or "?", by)
    return best, src


def space_optimum(rows, milp_opt):
    """The proven optimum over InArt's whole search space (rings included), or
    NaN: the smaller of CBC's PS optimum and the best plan with ring jobs, when
    a row proved the latter (ring_bound_source cbc: CBC proved the MILP of the
    subset attaining the ring-mix bound, every other subset bounded above
    it), each side known or bounded above the other."""
    ring_opt = max([val(r, "ring_bound_s") for r in rows.values()
                    if r.get("ring_bound_source") == "cbc" and val(r, "ring_bound_s") > 0]
                   + [math.nan], key=lambda x: -math.inf if math.isnan(x) else x)
    ring_lb = max([val(r, "ring_bound_s") for r in rows.values() if val(r, "ring_bound_s") > 0]
                  + [-math.inf])
    ps_lb = max([val(r, "best_bound_s") for r in rows.values() if val(r, "best_bound_s") > 0]
                + [-math.inf])
    if ring_opt > 0 and milp_opt > 0:
        return min(ring_opt, milp_opt)
    if ring_opt > 0 and ps_lb >= ring_opt * (1 - 1e-9):
        return ring_opt
    if milp_opt > 0 and ring_lb >= milp_opt * (1 - 1e-9):
        return milp_opt
    return math.nan


def summarize(name, rows):
    t = val(rows.get("inart"), "comm_time_s")
    tng = val(rows.get("inart-ng"), "comm_time_s")
    tnr = val(rows.get("inart-nr"), "comm_time_s")
    milp = rows.get("milp")
    bound, src = best_bound(rows)
    base = [(val(rows.get(b), "comm_time_s"), b) for b in baselines]
    base = [x for x in base if not math.isnan(x[0])]
    best = min(base) if base else (math.nan, "-")
    covered = [(val(rows.get(b), "comm_time_s"), b) for b in search_covered]
    covered = [x for x in covered if not math.isnan(x[0])]
    ring = val(rows.get("ring"), "comm_time_s")
    return {
        "comm_s": t,
        "comm_noguard_s": tng,
        "comm_noring_s": tnr,
        "plan_s": val(rows.get("inart"), "plan_time_s"),
        "cpu_s": load_cpu(name).get("inart", math.nan),
        "inart_status": rows["inart"]["status"] if "inart" in rows else "not run",
        "origin": rows["inart"]["origin"] if "inart" in rows else "",
        "milp_s": val(milp, "comm_time_s"),
        "milp_status": (milp["milp_status"] or milp["status"]) if milp else None,
        "milp_detail": milp["status"] if milp else None,
        # a plan bench/leafspine_gap.py found at InArt's split, evaluated by
        # `inart eval`: the optimum is at most its time
        "known_s": val(rows.get("leafgap"), "comm_time_s"),
        "bound_s": bound,
        "bound_source": src,
        "bound_ratio": t / bound if bound > 0 else math.nan,
        "best_baseline": best,
        "best_covered": min(covered) if covered else (math.nan, "-"),
        "vs_best": 1 - t / best[0] if best[0] > 0 else math.nan,
        "ring_s": ring,
        "vs_ring": 1 - t / ring if ring > 0 else math.nan,
        "single": {b: 1 - t / val(rows.get(b), "comm_time_s")
                   if val(rows.get(b), "comm_time_s") > 0 else math.nan for b in single_ps_ina},
    }


res = {n: load(n) for n in names}
summary = {}
print()
hdr = "%-16s %9s %7s %6s %7s %7s %-26s %8s %8s %9s %7s %8s" % (
    "scenario", "inart ms", "plan s", "cpu s", "/opt", "/bound", "bound source", "vs best", "vs ring",
    "noring ms", "nr/opt", "nr vs ring")
hdr += "".join(" %8s" % ("vs " + b) for b in single_ps_ina) + "  best baseline"
print(hdr)
for name in names:
    rows = res[name]
    if rows is None:
        continue
    s = summary[name] = summarize(name, rows)
    opt = s["milp_s"] if s["milp_status"] == "optimal" else math.nan
    s["opt_ratio"] = s["comm_s"] / opt if opt > 0 else math.nan
    s["space_opt_s"] = space_optimum(rows, opt)
    s["space_ratio"] = s["comm_s"] / s["space_opt_s"] if s["space_opt_s"] > 0 else math.nan
    s["nr_opt_ratio"] = s["comm_noring_s"] / opt if opt > 0 else math.nan
    nr_ring = 1 - s["comm_noring_s"] / s["ring_s"] if s["ring_s"] > 0 else math.nan
    line = "%-16s %9s %7s %6s %7s %7s %-26s %8s %8s %9s %7s %8s" % (
        name, fmt(s["comm_s"] * 1e3, ".3f"), fmt(s["plan_s"], ".2f"), fmt(s["cpu_s"], ".2f"),
        fmt(s["opt_ratio"], ".3f"),
        fmt(s["bound_ratio"], ".3f"), s["bound_source"][:26], pct(s["vs_best"]), pct(s["vs_ring"]),
        fmt(s["comm_noring_s"] * 1e3, ".3f"), fmt(s["nr_opt_ratio"], ".3f"), pct(nr_ring))
    line += "".join(" %8s" % pct(s["single"][b]) for b in single_ps_ina)
    line += "  %s %s ms" % (s["best_baseline"][1], fmt(s["best_baseline"][0] * 1e3, ".3f"))
    print(line)
    if s["inart_status"] != "ok":
        print("   inart: " + s["inart_status"])
    if s["milp_detail"] not in (None, "optimal"):
        print("   milp: " + s["milp_detail"])

print()
print("Targets (issues 2 and 11):")
verdicts = []


def target(ok, text, why=""):
    v = "PASS" if ok else "MISS"
    verdicts.append(v)
    print("  %s %s%s" % (v, text, "" if ok or not why else " -- " + why))


for name, s in summary.items():
    # issue 11: within 1.05x of the optimum (family and built-in scenarios).  Proven by
    # CBC's optimum, or by any proven lower bound: optimum >= bound, so a plan within
    # 1.05x of a bound is within 1.05x of the optimum.
    # Where the optimum over the whole search space (rings included) is proven,
    # that is the optimum; CBC's PS optimum alone would let a better plan with
    # ring jobs go unseen.
    if not math.isnan(s["space_ratio"]):
        target(s["space_ratio"] <= 1.05 * (1 + 1e-9),
               "%s: inart within 1.05x of the proven optimum over its search space, rings "
               "included (%s of %s ms; CBC's PS optimum %s ms)" % (
                   name, fmt(s["space_ratio"], ".3f"), fmt(s["space_opt_s"] * 1e3, ".3f"),
                   fmt(s["milp_s"] * 1e3 if s["milp_status"] == "optimal" else math.nan,
                       ".3f")))
    elif not math.isnan(s["bound_ratio"]) and s["bound_ratio"] <= 1.05:
        target(True, "%s: inart within 1.05x of the optimum (%s of the %s bound: proven by "
               "the bound)" % (name, fmt(s["bound_ratio"], ".3f"), s["bound_source"]))
    elif s["milp_status"] == "optimal" and s["opt_ratio"] <= 1.05:
        target(True, "%s: inart within 1.05x of the proven optimum (%s; CBC's, over PS plans: "
               "the optimum with ring jobs is not proven, %s)" %
               (name, fmt(s["opt_ratio"], ".3f"), s["bound_source"]))
    elif s["milp_status"] == "optimal":
        target(False, "%s: inart within 1.05x of the proven optimum (%s)" %
               (name, fmt(s["opt_ratio"], ".3f")))
    elif s["comm_s"] > 1.05 * (1 + 1e-9) * s["known_s"]:
        target(False, "%s: inart within 1.05x of the optimum" % name,
               "%s of a plan found by bench/leafspine_gap.py at inart's split (%s ms, "
               "evaluated), and the optimum is at most that (%s of the best proven bound, %s)"
               % (fmt(s["comm_s"] / s["known_s"], ".3f"), fmt(s["known_s"] * 1e3, ".3f"),
                  fmt(s["bound_ratio"], ".3f"), s["bound_source"]))
    else:
        target(False, "%s: inart within 1.05x of the optimum" % name,
               "no proven optimum (milp %s) and %s of the best proven bound (%s)" % (
                   s["milp_detail"] or "not run: too large for CBC", fmt(s["bound_ratio"], ".3f"),
                   s["bound_source"]))
for name, s in summary.items():
    # issue 11: within 1.15x of the best proven bound
    r = s["bound_ratio"]
    target(not math.isnan(r) and r <= 1.15,
           "%s: inart within 1.15x of the best proven bound (%s, %s)" %
           (name, fmt(r, ".3f"), s["bound_source"]),
           "" if not math.isnan(r) else "no bound")
def guarded():
    """The scenarios of the "never worse" targets: default, scarce, the family."""
    return [(n, s) for n, s in summary.items()
            if n in ("default", "scarce") or n.startswith("scarce-small/")]


# issue 11: never worse than any baseline with the guard off (default, scarce,
# family): a target on InArt, whose search space holds ring jobs (the data plane
# runs plans mixing ring and PS jobs, docs/dataplane.md "Ring all-reduce").
for name, s in guarded():
    b = s["best_covered"]
    # 1e-6: the search's resolution (IMPROVE_REL; compare's CSV has 9
    # digits): scarce-small/2 gave 0.105600003 s against the ring's 0.1056
    ok = not math.isnan(s["comm_noguard_s"]) and s["comm_noguard_s"] <= b[0] * (1 + 1e-6)
    target(ok, "%s: inart without the guard (%s ms) never worse than any baseline "
           "(best %s %s ms)" % (name, fmt(s["comm_noguard_s"] * 1e3, ".3f"), b[1],
                                fmt(b[0] * 1e3, ".3f")))
# --no-ring restricts the search to PS plans: never worse than every PS baseline
# (their plans are points of that space) is a target of its search; against the
# ring, which is outside that space, it is a comparison (info), not a target of
# issue 11 -- printed either way, with the figures.
for name, s in guarded():
    ps_base = [x for x in ((val(res[name].get(b), "comm_time_s"), b) for b in guard_covered)
               if not math.isnan(x[0])]
    b = min(ps_base) if ps_base else (math.nan, "-")
    ok = not math.isnan(s["comm_noring_s"]) and s["comm_noring_s"] <= b[0] * (1 + 1e-6)
    target(ok, "%s: inart --no-ring without the guard (%s ms) never worse than any PS "
           "baseline (best %s %s ms)" % (name, fmt(s["comm_noring_s"] * 1e3, ".3f"), b[1],
                                         fmt(b[0] * 1e3, ".3f")))
for name, s in guarded():
    r, nr = s["ring_s"], s["comm_noring_s"]
    if r > 0 and nr > r * (1 + 1e-6):
        print("  info %s: the ring all-reduce (%s ms) beats inart --no-ring (%s ms, PS plans "
              "only) by %.1f%% -- a comparison, not a target of issue 11 (the ring is outside "
              "the --no-ring search space; inart with ring jobs: %s ms)" % (
                  name, fmt(r * 1e3, ".3f"), fmt(nr * 1e3, ".3f"), 100 * (1 - r / nr),
                  fmt(s["comm_noguard_s"] * 1e3, ".3f")))
for label, name, limit in (("fat-tree k=16, 256 workers, 8 PSs", "fattree16", 5),
                           ("fat-tree k=32, 1024 workers, 16 PSs", "fattree32", 60)):
    s = summary.get(name)
    if s is None:
        target(False, "%s planned in under %d s" % (label, limit),
               "not run" + (" (run with --k32)" if name == "fattree32" else ""))
    else:
        # wall-clock, and CPU time where measured (a shared machine stretches
        # wall-clock): both must be under the limit
        ok = not math.isnan(s["plan_s"]) and s["plan_s"] < limit
        cpu = "" if math.isnan(s["cpu_s"]) else ", CPU %s s" % fmt(s["cpu_s"], ".2f")
        ok = ok and (math.isnan(s["cpu_s"]) or s["cpu_s"] < limit)
        target(ok, "%s planned in under %d s (wall %s s%s)" % (
            label, limit, fmt(s["plan_s"], ".2f"), cpu),
               s["inart_status"] if s["inart_status"] != "ok" else "")
s = summary.get("scarce")
if s is not None:
    worst = min(s["single"].values())
    target(not math.isnan(worst) and worst >= 0.20,
           "scarce INA: inart at least 20%% below every single-PS INA baseline (%s)" %
           ", ".join("%s %s" % (b, pct(v)) for b, v in s["single"].items()))
for name, s in summary.items():
    if s["vs_ring"] < 0:
        print("  info %s: the ring all-reduce (%s ms) beats inart by %.1f%%" % (
            name, fmt(s["ring_s"] * 1e3, ".3f"), -100 * s["vs_ring"]))
    if s["origin"]:
        print("  info %s: the guard kept the routes of %s (the search alone: %s ms)" % (
            name, s["origin"], fmt(s["comm_noguard_s"] * 1e3, ".3f")))
for name, s in summary.items():
    # the planning budget (--time-limit, default 4 s): reported, not a target
    if s["plan_s"] > 4.5 or s["cpu_s"] > 4.5:
        print("  info %s: planning took %s s wall, %s s CPU (budget 4 s by default)" % (
            name, fmt(s["plan_s"], ".2f"), fmt(s["cpu_s"], ".2f")))
print()
print("%d PASS, %d MISS" % (verdicts.count("PASS"), verdicts.count("MISS")))


def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


json.dump(clean(summary), open(os.path.join(out, "summary.json"), "w"), indent=2)
