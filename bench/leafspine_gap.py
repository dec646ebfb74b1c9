#!/usr/bin/python3
"""Where the gap between InArt's plan and the LP bound lies on a two-tier
leaf-spine (offline analysis, not part of the planner; docs/formulation.md
section 10, "The leafspine gap").  Needs scipy >= 1.9 (HiGHS); Debian's
python3-scipy, so run it with /usr/bin/python3.

usage: leafspine_gap.py TOPO JOBS cut [SECONDS]
       leafspine_gap.py TOPO JOBS fixed PLAN [SECONDS [OUT]]

Both models count streams (one per worker and PS, docs/evaluator.md) on the
leaf-spine links of a topology whose hosts hang off leaves and whose leaves
connect only to spines (as `inart_gen_leafspine` builds it); the load of a
link is the volume of the streams crossing it, over min(res) of its arcs.

cut: a RELAXATION of every plan (any routes, any split): per leaf L, the
  streams of each (job, PS) pair that must cross L's uplinks -- every local
  worker's stream when the PS is elsewhere and L holds no tree of the pair
  (one when it does), one inbound stream when the PS is on L and the job has
  remote workers, plus its local workers that go up -- as integers per
  uplink; PS access links carry the local workers' direct streams plus one;
  leaf tree budgets; the shares free (products linearized exactly, the
  counts in binary).  Its optimum is a lower bound on every plan; the
  script prints HiGHS's best point (an upper bound on that optimum) and
  HiGHS's bound.
fixed: a RESTRICTION to plans with PLAN's split whose routes are
  leaf-spine-leaf: a worker's flow aggregates at its own leaf, a spine
  (also from the PS's leaf),
  another leaf (down from a spine, its tree then sending up again) or the
  PS's leaf or the PS; a leaf tree sends to a spine's tree, the PS's leaf's
  or the PS; a spine tree to the PS's leaf's or the PS.  Its solutions are
  such plans (or, where a flow goes down to its own leaf's tree, dominated
  by one that aggregates there directly), so HiGHS's bound is a lower bound
  on every such plan with that split (not on other routes or splits).
  OUT: the best point as a plan file (docs/formats.md), for `inart eval`.
"""
import json
import math
import sys

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

PARAMS = {"resnet50": 25.6e6, "vgg16": 138.4e6, "alexnet": 61.1e6,
          "bert-base": 110e6, "gpt2-small": 124e6}  # src/cp/model/jobs.c


class Model:
    def __init__(self):
        self.v = []  # (lo, hi, integer)
        self.rows = []  # ({var: coef}, lo, hi)

    def var(self, lo, hi, integer):
        self.v.append((lo, hi, integer))
        return len(self.v) - 1

    def row(self, coef, lo, hi):
        self.rows.append((coef, lo, hi))

    def prod(self, share, n, scale, into):
        """into += scale * share * n, share a [0,1] variable, n an integer
        variable: n in binary, each bit's product with share by McCormick
        (exact for a binary bit)."""
        bits = max(1, math.ceil(math.log2(self.v[n][1] + 1)))
        bs = [self.var(0, 1, 1) for _ in range(bits)]
        self.row({n: 1, **{b: -(1 << k) for k, b in enumerate(bs)}}, 0, 0)
        for k, b in enumerate(bs):
            w = self.var(0, 1, 0)
            self.row({w: 1, b: -1}, -np.inf, 0)
            self.row({w: 1, share: -1}, -np.inf, 0)
            self.row({w: 1, share: -1, b: -1}, -1, np.inf)
            into[w] = into.get(w, 0) + scale * (1 << k)

    def solve(self, obj, seconds):
        a = np.zeros((len(self.rows), len(self.v)))
        for r, (coef, _, _) in enumerate(self.rows):
            for k, c in coef.items():
                a[r, k] += c
        c = np.zeros(len(self.v))
        c[obj] = 1
        return milp(c, integrality=[x[2] for x in self.v],
                    constraints=LinearConstraint(a, [r[1] for r in self.rows],
                                                 [r[2] for r in self.rows]),
                    bounds=Bounds([x[0] for x in self.v], [x[1] for x in self.v]),
                    options={"time_limit": seconds})


def load(topo_file, jobs_file):
    topo = json.load(open(topo_file))
    jobs = json.load(open(jobs_file))["jobs"]
    kind = {n["id"]: n for n in topo["nodes"]}
    leaf_of, cap = {}, {}
    for ln in topo["links"]:
        a, b = ln["a"], ln["b"]
        res = ln["gbps"] - ln.get("background_gbps", 0)
        if kind[a]["kind"] == "host" or kind[b]["kind"] == "host":
            h, s = (a, b) if kind[a]["kind"] == "host" else (b, a)
            if h in leaf_of:
                sys.exit("leafspine_gap: host %s is multi-homed" % h)
            leaf_of[h] = s
        else:
            cap[a, b] = res
    leaves = set(leaf_of.values())
    up = {}
    for (a, b), res in cap.items():
        if (a in leaves) == (b in leaves):
            sys.exit("leafspine_gap: link %s-%s is not leaf-spine" % (a, b))
        leaf, spine = (a, b) if a in leaves else (b, a)
        up.setdefault(leaf, []).append((spine, res))
    for j in jobs:
        j["gbit"] = (j["gradient_bytes"] if "gradient_bytes" in j
                     else 4 * PARAMS[j["model"]]) * 8 / 1e9
    ina = {n: kind[n]["ina"] for n in kind if "ina" in kind[n]}
    return jobs, leaf_of, sorted(leaves), up, ina


def cut_model(jobs, leaf_of, leaves, up, ina):
    m = Model()
    t = m.var(0, np.inf, 0)
    share = {}
    for j, jb in enumerate(jobs):
        for p in jb["ps"]:
            share[j, p] = m.var(0, 1, 0)
        m.row({share[j, p]: 1 for p in jb["ps"]}, 1, 1)
    tree = {}
    for leaf in leaves:
        if ina.get(leaf, {}).get("trees", 0) > 0:
            for j, jb in enumerate(jobs):
                for p in jb["ps"]:
                    tree[leaf, j, p] = m.var(0, 1, 1)
            m.row({tree[k]: 1 for k in tree if k[0] == leaf}, 0, ina[leaf]["trees"])
    for leaf in leaves:
        loads = [dict() for _ in up[leaf]]
        for j, jb in enumerate(jobs):
            local = sum(1 for w in jb["workers"] if leaf_of[w] == leaf)
            remote = len(jb["workers"]) - local
            for p in jb["ps"]:
                if leaf_of[p] != leaf:
                    if local == 0:
                        continue
                    cnt = [m.var(0, local, 1) for _ in up[leaf]]
                    need = {c: 1 for c in cnt}
                    if (leaf, j, p) in tree:
                        need[tree[leaf, j, p]] = local - 1
                    m.row(need, local, np.inf)
                else:
                    cnt = [m.var(0, local + 1, 1) for _ in up[leaf]]
                    direct = m.var(0, local, 1)
                    goes_up = m.var(0, local, 1)
                    m.row({**{c: 1 for c in cnt}, goes_up: -1}, 1 if remote else 0, np.inf)
                    agg = {direct: 1, goes_up: 1}
                    if (leaf, j, p) in tree:
                        agg[tree[leaf, j, p]] = local
                    m.row(agg, local, np.inf)
                    ps_link = {}
                    m.prod(share[j, p], direct, jb["gbit"], ps_link)
                    if remote:
                        ps_link[share[j, p]] = ps_link.get(share[j, p], 0) + jb["gbit"]
                    ps_link[t] = -ps_cap[p]
                    m.row(ps_link, -np.inf, 0)
                for i, c in enumerate(cnt):
                    m.prod(share[j, p], c, jb["gbit"], loads[i])
        for i, (_, res) in enumerate(up[leaf]):
            m.row({**loads[i], t: -res}, -np.inf, 0)
    workers_link(m, t, jobs)
    return m, t, share


def workers_link(m, t, jobs):
    """Every worker's access link carries its whole gradient (its streams
    to all PSs)."""
    for jb in jobs:
        for w in jb["workers"]:
            if w in jb["ps"]:
                sys.exit("leafspine_gap: %s is a worker and a PS of %s" % (w, jb["id"]))
            m.row({t: ps_cap[w]}, jb["gbit"], np.inf)


def fixed_model(jobs, leaf_of, leaves, up, ina, split):
    m = Model()
    t = m.var(0, np.inf, 0)
    spines = sorted({s for leaf in leaves for s, _ in up[leaf]})
    res = {(leaf, s): r for leaf in leaves for s, r in up[leaf]}
    link = {k: {} for k in res}
    agg = {s: {} for s in ina}
    budget = {s: {} for s in ina}
    big = sum(len(jb["workers"]) for jb in jobs)
    recs = {}

    def add(d, k, c):
        d[k] = d.get(k, 0) + c

    for j, jb in enumerate(jobs):
        local = {leaf: sum(1 for w in jb["workers"] if leaf_of[w] == leaf) for leaf in leaves}
        for p in jb["ps"]:
            vol = split[j].get(p, 0.0) * jb["gbit"]
            if vol <= 0:
                continue
            home = leaf_of[p]
            rec = recs[j, p] = {"lt": {}, "out": {}, "relay": {}, "k": {}, "n": {}, "hu": {},
                                "st": {}, "through": {}, "home": None}
            flows_in = {s: {} for s in spines}  # worker flows arriving at s
            outs_in = {s: {} for s in spines}  # leaf trees' outputs arriving at s
            ltree = {}  # INA leaf (not home) -> its tree of the pair
            relay = {s: {} for s in spines}  # flows s sends down to another leaf's tree
            for leaf in leaves:
                if leaf == home or leaf not in ina:
                    continue
                tr = ltree[leaf] = m.var(0, 1, 1)
                budget[leaf][tr] = 1
                out = rec["out"][leaf] = {s: m.var(0, 1, 1) for s in spines}
                rec["lt"][leaf] = tr
                m.row({**{out[s]: 1 for s in spines}, tr: -1}, 0, 0)
                inputs = {}
                for s in spines:
                    add(link[leaf, s], out[s], vol)
                    outs_in[s][out[s]] = 1
                    r = relay[s][leaf] = m.var(0, big, 1)
                    rec["relay"].setdefault(s, {})[leaf] = r
                    m.row({r: 1, tr: -big}, -np.inf, 0)
                    add(link[leaf, s], r, vol)
                    inputs[r] = 1
                if local[leaf]:
                    k = rec["k"][leaf] = m.var(0, local[leaf], 1)
                    m.row({k: 1, tr: -local[leaf]}, -np.inf, 0)
                    inputs[k] = 1
                    ltree[leaf] = (tr, k)
                for v in inputs:
                    add(agg[leaf], v, vol)
            for leaf in leaves:
                if leaf == home or local[leaf] == 0:
                    continue
                n = rec["n"][leaf] = {s: m.var(0, local[leaf], 1) for s in spines}
                part = {n[s]: 1 for s in spines}
                if isinstance(ltree.get(leaf), tuple):
                    part[ltree[leaf][1]] = 1
                m.row(part, local[leaf], local[leaf])
                for s in spines:
                    add(link[leaf, s], n[s], vol)
                    flows_in[s][n[s]] = 1
            # local workers of the PS's leaf may go up to a spine (SwitchML's
            # routes do) instead of straight to the PS or its leaf's tree
            home_up = {}
            for s in spines:
                if local[home]:
                    u = home_up[s] = rec["hu"][s] = m.var(0, local[home], 1)
                    add(link[home, s], u, vol)
                    flows_in[s][u] = 1
            if home_up:  # each of those workers goes up at most once
                m.row({u: 1 for u in home_up.values()}, 0, local[home])
            arrive = {}
            for s in spines:
                through = m.var(0, big, 1)
                down = {r: -1 for r in relay[s].values()}
                if s in ina:
                    tr = m.var(0, 1, 1)
                    budget[s][tr] = 1
                    g_f, g_o = m.var(0, big, 1), m.var(0, big, 1)
                    rec["st"][s] = (tr, g_f, g_o)
                    m.row({g_f: 1, g_o: 1, tr: -big}, -np.inf, 0)
                    m.row({**flows_in[s], **outs_in[s], through: -1, g_f: -1, g_o: -1, **down},
                          0, 0)
                    # only worker flows go down to another leaf's tree
                    m.row({**flows_in[s], g_f: -1, **down}, 0, np.inf)
                    m.row({**outs_in[s], g_o: -1}, 0, np.inf)
                    add(agg[s], g_f, vol)
                    add(agg[s], g_o, vol)
                    add(link[home, s], tr, vol)
                    arrive[tr] = 1
                else:
                    m.row({**flows_in[s], **outs_in[s], through: -1, **down}, 0, 0)
                    m.row({**flows_in[s], **down}, 0, np.inf)
                add(link[home, s], through, vol)
                arrive[through] = 1
            streams = m.var(0, big + 1, 1)
            here = local[home]
            if home in ina:
                tr = m.var(0, 1, 1)
                budget[home][tr] = 1
                g = m.var(0, big, 1)
                rec["home"] = (tr, g)
                m.row({g: 1, tr: -big}, -np.inf, 0)
                add(agg[home], g, vol)
                m.row({streams: 1, **{k: -1 for k in arrive}, **{u: 1 for u in home_up.values()},
                       g: 1, tr: -1}, here, here)
            else:
                m.row({streams: 1, **{k: -1 for k in arrive}, **{u: 1 for u in home_up.values()}},
                      here, here)
            m.row({streams: vol, t: -ps_cap[p]}, -np.inf, 0)
    workers_link(m, t, jobs)
    for k, d in link.items():
        m.row({**d, t: -res[k]}, -np.inf, 0)
    for s, d in agg.items():
        if d:
            m.row({**d, t: -ina[s]["agg_gbps"]}, -np.inf, 0)
    for s, d in budget.items():
        if d:
            m.row(d, 0, ina[s]["trees"])
    return m, t, recs


def to_plan(x, jobs, leaf_of, leaves, split, recs):
    """The plan of a `fixed` solution x (docs/formats.md), for `inart eval`."""
    val = lambda i: int(round(x[i]))
    out = {"algorithm": "inart", "jobs": []}
    for j, jb in enumerate(jobs):
        flows, trees = [], []
        for p in jb["ps"]:
            if (j, p) not in recs:
                continue
            rec, home = recs[j, p], leaf_of[p]
            spines = sorted(rec["st"].keys() | rec["through"].keys() | rec["hu"].keys()
                            | {s for L in rec["n"] for s in rec["n"][L]})
            at_spine = {s: [] for s in spines}  # flow tokens: (worker, path)
            outs = {s: [] for s in spines}  # leaf tree outputs: (leaf, path)
            for L in leaves:
                ws = [w for w in jb["workers"] if leaf_of[w] == L]
                if L == home or not ws:
                    continue
                k = val(rec["k"][L]) if L in rec["k"] else 0
                for w in ws[:k]:
                    flows.append({"worker": w, "ps": p, "agg": L, "path": [w, L]})
                ws = ws[k:]
                for s_, v in rec["n"][L].items():
                    for _ in range(val(v)):
                        w = ws.pop(0)
                        at_spine[s_].append((w, [w, L, s_]))
            for L, tr in rec["lt"].items():
                if val(tr):
                    s_ = [s_ for s_, v in rec["out"][L].items() if val(v)][0]
                    outs[s_].append((L, [L, s_]))
            here = [w for w in jb["workers"] if leaf_of[w] == home]
            for s_, v in rec["hu"].items():
                for _ in range(val(v)):
                    w = here.pop(0)
                    at_spine[s_].append((w, [w, home, s_]))
            arrivals = [("flow", w, [w, home]) for w in here]
            for s_ in spines:
                toks, os_ = at_spine[s_], outs[s_]
                if s_ in rec["st"] and val(rec["st"][s_][0]):
                    _, g_f, g_o = rec["st"][s_]
                    for w, path in toks[:val(g_f)]:
                        flows.append({"worker": w, "ps": p, "agg": s_, "path": path})
                    for L, path in os_[:val(g_o)]:
                        trees.append({"switch": L, "ps": p, "parent": s_, "path": path})
                    toks, os_ = toks[val(g_f):], os_[val(g_o):]
                    arrivals.append(("tree", s_, [s_, home]))
                for L2, v in rec["relay"].get(s_, {}).items():
                    for _ in range(val(v)):
                        w, path = toks.pop(0)
                        if path[1] == L2:  # down to its own leaf: aggregate there directly
                            path = [w, L2]
                        flows.append({"worker": w, "ps": p, "agg": L2, "path": path + ([L2] if path[-1] != L2 else [])})
                for w, path in toks:
                    # a worker of the PS's leaf that went up and was not
                    # aggregated at the spine comes straight down: its
                    # direct path carries the same to the PS's leaf with
                    # less load, so the plan is no slower than the point
                    arrivals.append(("flow", w, [w, home] if path[1] == home else path + [home]))
                for L, path in os_:
                    arrivals.append(("tree", L, path + [home]))
            g = 0
            if rec["home"] is not None and val(rec["home"][0]):
                g = val(rec["home"][1])
                trees.append({"switch": home, "ps": p, "parent": p, "path": [home, p]})
            for i, (kind, who, path) in enumerate(arrivals):
                at_home = i < g
                if kind == "flow":
                    flows.append({"worker": who, "ps": p, "agg": home if at_home else p,
                                  "path": path if at_home else path + [p]})
                else:
                    trees.append({"switch": who, "ps": p, "parent": home if at_home else p,
                                  "path": path if at_home else path + [p]})
        while True:  # a tree the model opened without inputs carries nothing: drop it
            fed = {(r["ps"], r["agg"]) for r in flows} | {(r["ps"], r["parent"]) for r in trees}
            keep = [r for r in trees if (r["ps"], r["switch"]) in fed]
            if len(keep) == len(trees):
                break
            trees = keep
        out["jobs"].append({"id": jb["id"], "split": split[j], "flows": flows, "trees": trees})
    return out


def main():
    global ps_cap
    if len(sys.argv) < 4 or sys.argv[3] not in ("cut", "fixed"):
        sys.exit(__doc__)
    jobs, leaf_of, leaves, up, ina = load(sys.argv[1], sys.argv[2])
    topo = json.load(open(sys.argv[1]))
    ps_cap = {}
    for ln in topo["links"]:
        for h in (ln["a"], ln["b"]):
            if h in leaf_of:
                ps_cap[h] = ln["gbps"] - ln.get("background_gbps", 0)
    if sys.argv[3] == "cut":
        seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 120
        m, t, share = cut_model(jobs, leaf_of, leaves, up, ina)
    else:
        plan = json.load(open(sys.argv[4]))
        seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 120
        by_id = {jb["id"]: jb["split"] for jb in plan["jobs"]}
        split = [by_id[jb["id"]] for jb in jobs]
        m, t, recs = fixed_model(jobs, leaf_of, leaves, up, ina, split)
    r = m.solve(t, seconds)
    best = r.fun * 1e3 if r.x is not None else float("nan")
    print("%s: %s; best point %.4f ms, HiGHS bound %.4f ms (%d variables, %d rows, %.0f s)"
          % (sys.argv[3], "optimal" if r.status == 0 else "time limit" if r.status == 1
             else r.message, best, r.mip_dual_bound * 1e3, len(m.v), len(m.rows), seconds))
    if sys.argv[3] == "fixed" and r.x is not None and len(sys.argv) > 6:
        with open(sys.argv[6], "w") as f:
            json.dump(to_plan(r.x, jobs, leaf_of, leaves, split, recs), f, indent=1)
    if sys.argv[3] == "cut" and r.x is not None:
        print("  shares at the best point: " + ", ".join(
            "%s/%s %.3f" % (jobs[j]["id"], p, r.x[i]) for (j, p), i in share.items()))


if __name__ == "__main__":
    main()
