#!/usr/bin/python3
"""ddp_digits: train an MLP on scikit-learn's digits with PyTorch DDP, once with
the InArt comm hook (gradients aggregated by switchd) and once with gloo's
all-reduce, over the same shaped links, and compare.

    sudo python3 examples/ddp_digits.py [--workers 4] [--mbps 100] [--epochs 8]
                                        [--png curves.png] [--json out.json]
    sudo python3 examples/ddp_digits.py --curves tta.png [--workers 4]

Builds a rack with `inart emu up` (python/inart/fabric.py): workers
w0..wN-1 under switch t0 (INA), t0 -- t1, PSs p0 and p1 under t1, every
link shaped to --mbps with tc tbf; runs `inart switchd` on t0 and t1 and
`inart ps` on p0 and p1; plans with `inart plan` and installs the plan.
Then N training processes (one per worker namespace, RANK/WORLD_SIZE set as
torchrun would) train the same seeded model on their shard of the data:

  inart: DDP with inart.torch.allreduce_hook (the gloo process group is
         used only for DDP's set-up: the parameter broadcast);
  gloo:  DDP's default all-reduce over the gloo process group (TCP through
         the same veths and switchd, which forwards plain IPv4);
  backend: (--backends backend,gloo) init_process_group("inart"), the
         torch.distributed backend (python/inart/backend.py): DDP's default
         all-reduce, the same call as for gloo, over the "inart" process
         group, whose float32 sums go through the switches.

The "gloo" and "backend" runs time DDP's all-reduce with a hook doing
exactly what DDP does without one (torch's default allreduce_hook: divide,
all_reduce of the bucket on the default process group), timed from the
hand-over to the result.

--curves PNG: time-to-accuracy instead, four runs -- DDP and DDP +
ZeroRedundancyOptimizer, each with init_process_group("inart") and with
"gloo" -- test accuracy against training time in one PNG (a panel each),
the time to --target-acc, the accuracy difference, and the backend's
collectives on the software path where INA applies (inart.torch.stats()).

It prints the loss per epoch side by side, the final test accuracy of both,
the time per iteration and the communication time per iteration of both
(median: from a bucket handed to the hook to its averaged gradient, summed
over the buckets of an iteration) with the ratio, the planner's prediction,
t0's aggregation counters, and writes a PNG of both loss curves.

The digits data ships with python3-sklearn (no download).  Needs root.
`--worker` is the per-process entry point the driver runs in a namespace.
"""
import argparse
import faulthandler
import json
import os
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))   # the checkout's package


# -- the model and the data (the same in every process) ------------------------------------
def load_data(seed):
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    return train_test_split(x, d.target.astype(np.int64), test_size=0.25, random_state=seed,
                            stratify=d.target)


def make_model(hidden, seed):
    import torch
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, 10))


def n_params(hidden):
    return 64 * hidden + hidden + hidden * hidden + hidden + hidden * 10 + 10


def gloo_timed_hook(rec, bucket):
    """DDP's own all-reduce hook (divide, gloo all-reduce: torch's
    default_hooks.allreduce_hook), timed from hand-over to result."""
    import torch.distributed as dist
    t0 = time.monotonic()
    buf = bucket.buffer()
    buf.div_(dist.get_world_size())
    fut = dist.all_reduce(buf, async_op=True).get_future()
    index = bucket.index()

    def done(f):
        rec.record(index, t0, time.monotonic())
        return f.value()[0]
    return fut.then(done)


class CommRecord:
    """Communication time per iteration (sum over buckets) of the gloo hook."""

    def __init__(self):
        self.iterations, self._cur = [], None

    def record(self, index, t0, t1):
        if self._cur is None or index in self._cur["indices"]:
            self._cur = dict(indices=set(), comm_s=0.0, first=t0)
            self.iterations.append(self._cur)
        self._cur["indices"].add(index)
        self._cur["comm_s"] += t1 - t0


def train(args):
    """One training process (RANK, WORLD_SIZE, MASTER_ADDR set): returns a
    dict of what it measured."""
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    tmo = __import__("datetime").timedelta(seconds=120)
    if args.worker == "backend":
        import inart.torch
        dist.init_process_group("inart", timeout=tmo, pg_options=inart.torch.Options(
            plan=args.plan, job="j0", timeout=args.timeout))
    else:
        dist.init_process_group("gloo", timeout=tmo)
    rank, world = dist.get_rank(), dist.get_world_size()
    xtr, xte, ytr, yte = load_data(args.seed)
    xtr, ytr = torch.from_numpy(xtr), torch.from_numpy(ytr)
    xte, yte = torch.from_numpy(xte), torch.from_numpy(yte)
    model = make_model(args.hidden, args.seed)
    ddp = DDP(model, bucket_cap_mb=args.bucket_mb)
    state = None
    if args.worker == "inart":
        import inart.torch
        state = inart.torch.State(plan=args.plan, job="j0", timeout=args.timeout,
                                  sync=args.sync)
        ddp.register_comm_hook(state, inart.torch.allreduce_hook)
    else:
        rec = CommRecord()
        ddp.register_comm_hook(rec, gloo_timed_hook)
    if args.zero:   # the optimizer state sharded over the ranks (broadcasts after each step)
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.SGD,
                                      lr=args.lr, momentum=0.9)
    else:
        opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    losses, iter_s, acc, acc_t = [], [], [], []
    train_s = 0.0   # training time so far (the evaluations left out): time to accuracy
    for epoch in range(args.epochs):
        te = time.perf_counter()
        g = torch.Generator().manual_seed(args.seed * 1000 + epoch)
        perm = torch.randperm(len(xtr), generator=g)
        shard = perm[rank::world]
        steps = len(shard) // args.batch
        for s in range(steps):
            idx = shard[s * args.batch:(s + 1) * args.batch]
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = lossf(ddp(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            iter_s.append(time.perf_counter() - t0)
            losses.append(float(loss))
        train_s += time.perf_counter() - te
        acc_t.append(train_s)
        with torch.no_grad():
            acc.append(float((model(xte).argmax(1) == yte).float().mean()) * 100)
    its = state.iterations if state else rec.iterations
    comm = [it["comm_s"] for it in its]
    out = dict(backend=args.worker, rank=rank, world=world, losses=losses, iter_s=iter_s,
               comm_s=comm, first=[it["first"] for it in its], acc=acc, acc_t=acc_t,
               params=sum(p.numel() for p in model.parameters()),
               checksum=float(sum(p.double().sum() for p in model.parameters())))
    for k in ("c_s", "barrier_s", "wait_s", "post_s"):
        out[k] = [it.get(k, 0.0) for it in its]
    if state is not None:
        out["stats"] = state.stats()
        state.close()
    if args.worker == "backend":
        import inart.torch
        out["backend_stats"] = inart.torch.stats()
        out["stats"] = next(iter(inart.backend.context_stats().values()), None)
    # The process group is not destroyed: the worker leaves with os._exit
    # once its results are written (main), as tests/python/inart_ranks.py
    # does -- tearing down gloo's threads can hang (pytorch/pytorch#75097),
    # which once held a rank until the driver's run timeout.
    return out


# -- the driver ------------------------------------------------------------------------
def rack(workers, mbps, params):
    """Topology and jobs of the example: a rack of workers under an INA
    switch, two PSs behind a second switch, every link `mbps`."""
    g = mbps / 1000.0
    ws = ["w%d" % i for i in range(workers)]
    nodes = [{"id": w, "kind": "host"} for w in ws] + [
        {"id": "p0", "kind": "host"}, {"id": "p1", "kind": "host"},
        {"id": "t0", "kind": "switch", "ina": {"agg_gbps": 10 * g * workers, "trees": 4}},
        {"id": "t1", "kind": "switch"}]
    links = [{"a": w, "b": "t0", "gbps": g} for w in ws] + [
        {"a": "t0", "b": "t1", "gbps": g}, {"a": "t1", "b": "p0", "gbps": g},
        {"a": "t1", "b": "p1", "gbps": g}]
    jobs = {"jobs": [{"id": "j0", "workers": ws, "ps": ["p0", "p1"],
                      "gradient_bytes": 4 * params}]}
    return {"nodes": nodes, "links": links}, jobs


def worker_argv(args, backend, out, plan):
    a = [sys.executable, os.path.abspath(__file__), "--worker", backend, "--out", out,
         "--epochs", str(args.epochs), "--batch", str(args.batch), "--hidden", str(args.hidden),
         "--lr", str(args.lr), "--seed", str(args.seed), "--bucket-mb", str(args.bucket_mb),
         "--timeout", str(args.timeout)] + (["--sync"] if args.sync else []) + \
        (["--zero"] if getattr(args, "zero", False) else [])
    return a + (["--plan", plan] if plan else [])


def run_backend(fab, args, backend, plan, nodes):
    """Train with `backend` on the fabric; the per-rank result dicts."""
    out = os.path.join(fab.dir, "%s-{rank}.json" % backend)   # one command for every rank
    outs = [out.replace("{rank}", str(r)) for r in range(len(nodes))]
    if backend != "gloo":
        fab.install(plan)
    env = {"PYTHONPATH": os.pathsep.join(
        [os.path.join(HERE, "..", "python")] + ([os.environ["PYTHONPATH"]]
                                               if os.environ.get("PYTHONPATH") else []))}
    res = fab.run(nodes, worker_argv(args, backend, out, plan), env=env,
                  timeout=args.run_timeout)
    bad = [(r, rc, o) for r, (rc, o) in enumerate(res) if rc != 0]
    if bad:
        r, rc, o = bad[0]
        how = ("did not finish within %g s (ended by inart emu exec; its stack follows)"
               % args.run_timeout if rc is None else "exited with status %d" % rc)
        raise RuntimeError("%s rank %d %s:\n%s" % (backend, r, how, o[-3000:]))
    return [json.load(open(p)) for p in outs]


def summarize(rs, warmup):
    """Figures of one backend's run from its ranks' results."""
    n_it = len(rs[0]["losses"])
    loss = [statistics.fmean(r["losses"][i] for r in rs) for i in range(n_it)]
    comm = [max(r["comm_s"][i] for r in rs) for i in range(warmup, len(rs[0]["comm_s"]))]
    its = [max(r["iter_s"][i] for r in rs) for i in range(warmup, n_it)]
    # how far apart the ranks handed their first bucket over (CLOCK_MONOTONIC
    # is one clock for every namespace of the machine)
    skew = [max(r["first"][i] for r in rs) - min(r["first"][i] for r in rs)
            for i in range(warmup, len(rs[0]["first"]))]
    # the InArt hook's parts of the comm time (slowest rank each)
    parts = {k: statistics.median(max(r[k][i] for r in rs)
                                  for i in range(warmup, len(rs[0][k])))
             for k in ("c_s", "barrier_s", "wait_s", "post_s")}
    # the slowest rank's training time at each epoch's end
    acc_t = [max(r["acc_t"][e] for r in rs) for e in range(len(rs[0]["acc_t"]))]
    return dict(loss=loss, acc=rs[0]["acc"], acc_t=acc_t, final_acc=rs[0]["acc"][-1],
                skew_med=statistics.median(skew), c_med=parts["c_s"],
                barrier_med=parts["barrier_s"], wait_med=parts["wait_s"],
                post_med=parts["post_s"],
                comm_med=statistics.median(comm), comm_mean=statistics.fmean(comm),
                iter_med=statistics.median(its), iter_mean=statistics.fmean(its),
                checksum=rs[0]["checksum"], params=rs[0]["params"], iterations=n_it)


def write_png(path, a, b, epochs, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name, s, st in (("InArt (switchd aggregation)", a, "-"), ("gloo all-reduce", b, "--")):
        ax1.plot(range(1, len(s["loss"]) + 1), s["loss"], st, label=name, lw=1)
        ax2.plot(range(1, epochs + 1), s["acc"], st + "o", label=name)
    ax1.set_xlabel("iteration")
    ax1.set_ylabel("training loss (mean over workers)")
    ax1.set_yscale("log")
    ax1.legend()
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("test accuracy (%)")
    ax2.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def write_curves_png(path, runs, title):
    """Time-to-accuracy curves: test accuracy against training time, one
    panel per optimizer set-up, InArt against gloo in each."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 4), squeeze=False)
    for ax, (name, res) in zip(axes[0], runs):
        for k, label, st in (("backend", 'init_process_group("inart")', "-o"),
                             ("inart", "InArt DDP hook", "-s"),
                             ("gloo", 'init_process_group("gloo")', "--^")):
            if k in res:
                ax.plot(res[k]["acc_t"], res[k]["acc"], st, label=label, ms=4)
        ax.set_xlabel("training time (s, slowest rank; evaluation left out)")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def time_to(res, target):
    """Training time at the first epoch whose test accuracy reaches target."""
    for t, a in zip(res["acc_t"], res["acc"]):
        if a >= target:
            return t
    return None


def curves(args):
    """DDP and DDP + ZeroRedundancyOptimizer, each with the backend "inart"
    and with "gloo" (a network each); the PNG and a table."""
    runs = []
    for zero in (False, True):
        a = argparse.Namespace(**vars(args))
        a.zero, a.backends = zero, ["backend", "gloo"]
        name = "DDP + ZeroRedundancyOptimizer" if zero else "DDP"
        out = compare(a)
        runs.append((name, out["results"]))
    target = args.target_acc
    print("time to accuracy, %d workers, links %g Mbit/s, %d epochs (busy machine: other "
          "processes shared the 2 cores)" % (args.workers, args.mbps, args.epochs))
    print("%-32s %10s %12s %14s %12s" % ("", "backend", "final acc", "to %.0f%% (s)" % target,
                                          "comm/iter"))
    for name, res in runs:
        for k in ("backend", "gloo"):
            t = time_to(res[k], target)
            print("%-32s %10s %11.2f%% %14s %10.1f ms" % (
                name, "inart" if k == "backend" else k, res[k]["final_acc"],
                "%.2f" % t if t is not None else "not reached", res[k]["comm_med"] * 1e3))
        d = res["backend"]["final_acc"] - res["gloo"]["final_acc"]
        print("%-32s accuracy inart - gloo %+.2f points: %s (target: within 1)"
              % (name, d, "MET" if abs(d) <= 1.0 else "MISSED"))
        sw = software_ina_calls(res["backend"].get("backend_stats") or {})
        print("%-32s collectives on the software path where INA applies: %d %s"
              % (name, sum(sw.values()), sw or ""))
    write_curves_png(args.curves, runs, "MLP on digits, %d workers, %g Mbit/s links: inart "
                     "vs gloo" % (args.workers, args.mbps))
    print("wrote %s" % args.curves)
    return runs


# ops the backend carries through InArt when they are float SUM/AVG
INA_OPS = ("allreduce", "allreduce_coalesced", "reduce_scatter", "_reduce_scatter_base")


def software_ina_calls(st):
    """{op: calls} of the ops INA applies to that took the gloo path."""
    return {op: st[op]["gloo"]["calls"] for op in INA_OPS
            if op in st and st[op].get("gloo", {}).get("calls")}


def compare(args):
    """Build the fabric, run both backends, return the summary dict."""
    from inart.fabric import Fabric, tree_counters
    import tempfile
    params = n_params(args.hidden)
    topo, jobs = rack(args.workers, args.mbps, params)
    tmp = tempfile.mkdtemp(prefix="ddp-digits-")
    tp, jp = os.path.join(tmp, "topo.json"), os.path.join(tmp, "jobs.json")
    json.dump(topo, open(tp, "w"), indent=1)
    json.dump(jobs, open(jp, "w"), indent=1)
    nodes = jobs["jobs"][0]["workers"]
    out = dict(workers=args.workers, mbps=args.mbps, params=params, epochs=args.epochs,
               batch=args.batch, seed=args.seed)
    dp = {"pace_scale": args.pace} if args.pace > 0 else None
    with Fabric(tp, jp, queue_ms=args.queue_ms, dataplane=dp) as fab:
        plan = fab.plan("inart")
        ev = fab.evaluate(plan)
        n = args.workers
        out["predicted_inart_s"] = ev["comm_time_s"]
        # ring all-reduce (gloo): every worker link carries 2(n-1)/n of the
        # gradient each way
        out["predicted_ring_s"] = 2.0 * (n - 1) / n * 4 * params * 8 / (args.mbps * 1e6)
        res = {}
        for backend in args.backends:
            fab.reset_stats("t0")
            t0 = time.perf_counter()
            rs = run_backend(fab, args, backend, plan if backend != "gloo" else None, nodes)
            s = summarize(rs, args.warmup)
            s["wall_s"] = time.perf_counter() - t0
            s["t0"] = {k: v for k, v in tree_counters(fab.stats("t0")).items()
                       if k in ("aggregated", "emitted", "partial", "results")}
            if backend != "gloo":
                s["worker_stats"] = [r.get("stats") for r in rs]
            if backend == "backend":
                s["backend_stats"] = rs[0].get("backend_stats")
            res[backend] = s
        out["results"] = res
    return out


def report(out, args):
    res = out["results"]
    a, b = res.get("inart"), res.get("gloo")
    print("MLP 64-%d-%d-10 (%d parameters, %.0f KB of gradient), %d workers, links %g Mbit/s, "
          "%d epochs x %d iterations, batch %d per worker"
          % (args.hidden, args.hidden, out["params"], out["params"] * 4 / 1e3, out["workers"],
             out["mbps"], out["epochs"], next(iter(res.values()))["iterations"] // out["epochs"],
             out["batch"]))
    names = [k for k in ("inart", "backend", "gloo") if k in res]
    others = [k for k in ("inart", "backend") if k in res and b]
    print("\nloss per epoch (mean over the epoch's iterations and the workers):")
    print("epoch  " + "  ".join("%10s" % k for k in names) + "   test acc: " +
          "  ".join("%7s" % k for k in names))
    per = len(res[names[0]]["loss"]) // out["epochs"]
    for e in range(out["epochs"]):
        print("%5d  " % (e + 1) + "  ".join(
            "%10.4f" % statistics.fmean(res[k]["loss"][e * per:(e + 1) * per]) for k in names)
            + "             " + "  ".join("%6.2f%%" % res[k]["acc"][e] for k in names))
    print("\n%-34s" % "" + "  ".join("%12s" % k for k in names) +
          "".join("  %12s" % (k + "/gloo") for k in others))

    def row(label, key, fmt, scale=1.0):
        vals = [res[k][key] * scale for k in names]
        r = "%-38s" % label + "  ".join(fmt % v for v in vals)
        for k in others:
            if key != "final_acc":
                r += "  %12.3f" % (res[k][key] / b[key])
            else:
                r += "  %+11.2f pt" % (res[k][key] - b[key])
        print(r)
    row("final test accuracy (%)", "final_acc", "%12.2f")
    row("time per iteration, median (ms)", "iter_med", "%12.2f", 1e3)
    row("comm time per iteration, median (ms)", "comm_med", "%12.2f", 1e3)
    row("comm time per iteration, mean (ms)", "comm_mean", "%12.2f", 1e3)
    row("ranks' hand-over skew, median (ms)", "skew_med", "%12.2f", 1e3)
    if a:
        print("%-38s%12.2f  (the C all-reduce of the buckets alone; before it: hand-over "
              "%.2f, start barrier %.2f; after it: %.2f)"
              % ("InArt: of which all-reduce, median (ms)", a["c_med"] * 1e3,
                 a["wait_med"] * 1e3, a["barrier_med"] * 1e3, a["post_med"] * 1e3))
    print("%-38s%12.2f  %12.2f   (evaluator / ring all-reduce formula)"
          % ("predicted comm time (ms)", out["predicted_inart_s"] * 1e3,
             out["predicted_ring_s"] * 1e3))
    for k in names:
        print("t0 tree counters during %-6s %s" % (k + ":", res[k]["t0"]))
    if a:
        st = [s for s in a.get("worker_stats", []) if s]
        if st:
            keys = ("sent", "retransmitted", "probes", "nacks", "rescales", "timeouts")
            print("InArt worker counters (sum over ranks): " + ", ".join(
                "%s %d" % (k, sum(s[k] for s in st)) for k in keys))
    if "backend" in res and res["backend"].get("backend_stats"):
        print("backend paths (rank 0, calls per op and path): " + ", ".join(
            "%s %s" % (op, " ".join("%s %d" % (p, v["calls"]) for p, v in paths.items()))
            for op, paths in sorted(res["backend"]["backend_stats"].items())))
    for k in others:
        a = res[k]
        acc_ok = abs(a["final_acc"] - b["final_acc"]) <= 1.0
        print("\n%s: accuracy parity (within 1 point): %s (%+.2f points)"
              % (k, "MET" if acc_ok else "MISSED", a["final_acc"] - b["final_acc"]))
        ratio = a["comm_med"] / b["comm_med"]
        gain = out["predicted_inart_s"] < out["predicted_ring_s"]
        print("comm time %s/gloo = %.3f: %s (%s)"
              % (k, ratio, "no worse" if ratio <= 1.0 else "WORSE",
                 "the planner predicts a gain of %.2fx" % (out["predicted_ring_s"] /
                                                          out["predicted_inart_s"])
                 if gain else "the planner predicts no gain"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--mbps", type=float, default=100.0)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--timeout", type=float, default=20.0, help="InArt all-reduce timeout (s)")
    ap.add_argument("--warmup", type=int, default=3, help="iterations left out of the times")
    ap.add_argument("--queue-ms", type=float, default=50.0)
    ap.add_argument("--pace", type=float, default=1.1,
                    help="InArt workers send each flow at this factor of its plan rate "
                         "(0: not paced; docs/dataplane.md, Pacing)")
    ap.add_argument("--sync", action="store_true",
                    help="InArt: a start barrier before each backward's buckets "
                         "(inart.torch.State(sync=True))")
    ap.add_argument("--zero", action="store_true",
                    help="DDP + ZeroRedundancyOptimizer (SGD's state sharded over the ranks)")
    ap.add_argument("--backends", default="inart,gloo",
                    help="comma-separated: inart (the DDP hook), backend "
                         "(init_process_group(\"inart\")), gloo")
    ap.add_argument("--run-timeout", type=float, default=900.0)
    ap.add_argument("--png", default="ddp_digits.png")
    ap.add_argument("--json", default=None, help="write the summary there")
    ap.add_argument("--curves", metavar="PNG",
                    help="time-to-accuracy curves instead: DDP and DDP + "
                         "ZeroRedundancyOptimizer, backend inart vs gloo, into PNG")
    ap.add_argument("--target-acc", type=float, default=90.0,
                    help="the accuracy whose time --curves reports (%%)")
    ap.add_argument("--worker", choices=("inart", "gloo", "backend"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        # SIGTERM prints every thread's stack, then ends the rank: `inart emu
        # exec` sends it to a rank that overran --timeout (or outlived a failed
        # rank by --grace) before SIGKILL.
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
        r = train(args)
        # "{rank}" in --out: one command for every rank (inart emu exec)
        with open(args.out.replace("{rank}", str(r["rank"])), "w") as f:
            json.dump(r, f)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    args.backends = [b for b in args.backends.split(",") if b]
    if args.curves:
        runs = curves(args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(runs), f, indent=1)
        return 0
    out = compare(args)
    report(out, args)
    ina = "inart" if "inart" in out["results"] else "backend"
    if args.png and ina in out["results"] and "gloo" in out["results"]:
        write_png(args.png, out["results"][ina], out["results"]["gloo"], args.epochs,
                  "MLP on digits, %d workers, %g Mbit/s links" % (args.workers, args.mbps))
        print("wrote %s" % args.png)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
