#!/usr/bin/python3
"""ddp_resnet: ResNet-18 (torchvision) with unmodified DDP, process group
"inart" against "gloo", on the same shaped links: communication time per
iteration against the planner's prediction.

    sudo /usr/bin/python3 examples/ddp_resnet.py [--workers 4] [--mbps 100]
        [--iters 8] [--warmup 2] [--batch 2] [--size 224] [--replay 3]
        [--backends inart,gloo] [--flush-ms MS] [--retx-ms MS] [--window N]
        [--json out.json]

The rack of examples/ddp_digits.py (workers under the INA switch t0, PSs
p0 and p1 behind t1, every link --mbps, python/inart/fabric.py), the job's
gradient the model's 11 689 512 float32 values.  Each worker trains
torchvision's resnet18 (1000 classes) on synthetic ImageNet-shaped data
(batch x 3 x size x size, random labels, seeded per rank) for --iters
iterations, once with init_process_group("inart") (python/inart/backend.py:
DDP's bucket all-reduces through the switches) and once with
init_process_group("gloo"), in the order of --backends, on one network.
Both runs are the same processes in the same namespaces, on the same links
and the same (unpinned) CPUs; only the process group differs.

Communication time per iteration (the figure compared with the planner):
DDP's all-reduce of every bucket is timed by a hook doing what DDP does
without one (divide, all_reduce on the default group: torch's
default_hooks.allreduce_hook), which notes on every rank when the bucket
was handed over and when its result came (CLOCK_MONOTONIC, one clock for
every namespace).  A bucket's all-reduce can only run once every rank
handed it over (before that the early ranks wait for the late one: that is
compute skew, not communication); it ends when the last rank has its
result.  So bucket i is "in communication" from ready_i (the last rank's
hand-over) to done_i (the last rank's result), and an iteration's
communication time is the length of the union of those intervals: the
time during which some bucket every rank had handed over was not reduced
yet.  It leaves out the time the ranks wait for each other's backward,
keeps the time communication shares the CPUs with backward compute (on
both sides alike).  Also printed: the old span (first hand-over to last
result, max over ranks; it includes the other ranks' compute), the tail
(last bucket ready -> done: what the iteration waits for after backward)
and the handover skew.

--replay N: after training, N times: a barrier, then the same buckets
(sizes and order of the last iteration) all-reduced back to back, async as
DDP issues them, outside backward: the communication time with no compute
beside it (last rank out of the barrier -> last rank's result).

Predictions: the evaluator's communication time of the plan (`inart
eval`) for the inart side; for gloo the ring formula 2 (n-1)/n x gradient
bytes / link rate (every worker link carries that much each way); each
scaled to the buckets' share of the gradient.  Both sides' measured /
predicted are printed, and the ratio inart/gloo against the predicted
ratio (the target of issue 26: within 15%, and below 1.0).

--flush-ms, --retx-ms, --window: the deployment's data-plane settings
(flush_timeout_ms of the switches' partial aggregates, the workers'
retx_timeout_ms, slots_per_tree = the workers' window), else the
emulator's defaults (window 16; retx and flush twice a window of every
worker on the slowest link, at least 50 ms; docs/emulator.md).

Needs root and Debian's python3-torchvision (scripts/deps.sh).  On a
2-core machine four workers share the cores: compute dominates the
iteration; the communication time is the figure to compare.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import ddp_digits  # noqa: E402  (rack)

PARAMS = 11689512   # torchvision resnet18(num_classes=1000)


class Buckets:
    """Per iteration: bucket index -> (handed over, result, values)."""

    def __init__(self):
        self.iterations, self._cur = [], None

    def record(self, index, t0, t1, n):
        if self._cur is None or index in self._cur:
            self._cur = {}
            self.iterations.append(self._cur)
        self._cur[index] = (t0, t1, n)


def timed_hook(rec, bucket):
    """torch's default allreduce_hook (divide, all_reduce of the bucket on
    the default group), timed from hand-over to result."""
    import torch.distributed as dist
    t0 = time.monotonic()
    buf = bucket.buffer()
    buf.div_(dist.get_world_size())
    fut = dist.all_reduce(buf, async_op=True).get_future()
    index, n = bucket.index(), buf.numel()

    def done(f):
        rec.record(index, t0, time.monotonic(), n)
        return f.value()[0]
    return fut.then(done)


def switch_counters(args):
    """t0's per-tree counters summed (rank 0 asks its control socket)."""
    from inart.fabric import tree_counters
    r = subprocess.run([args.inart, "ctl", "stats", args.t0_ctl, "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None
    c = tree_counters(json.loads(r.stdout))
    return {k: c.get(k, 0) for k in ("aggregated", "emitted", "partial", "fallback")}


def worker(args):
    import datetime
    import torch
    import torch.distributed as dist
    import torchvision
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.set_num_threads(1)
    tmo = datetime.timedelta(seconds=args.timeout)
    if args.worker == "inart":
        import inart.torch
        dist.init_process_group("inart", timeout=tmo, pg_options=inart.torch.Options(
            plan=args.plan, job="j0"))
    else:
        dist.init_process_group("gloo", timeout=tmo)
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=1000)
    ddp = DDP(model)
    rec = Buckets()
    ddp.register_comm_hook(rec, timed_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(rank)
    iter_s, losses = [], []
    for _ in range(args.iters):
        x = torch.randn(args.batch, 3, args.size, args.size, generator=g)
        y = torch.randint(0, 1000, (args.batch,), generator=g)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = lossf(ddp(x), y)
        loss.backward()
        opt.step()
        iter_s.append(time.perf_counter() - t0)
        losses.append(float(loss))

    def ctx_stats():
        if args.worker != "inart":
            return None
        import inart.backend
        return next(iter(inart.backend.context_stats().values()), None)

    dist.barrier()
    sw_train = switch_counters(args) if rank == 0 and args.t0_ctl else None
    ctx_train = ctx_stats()
    # the same buckets again, outside backward
    last = rec.iterations[-1]
    sizes = [last[i][2] for i in sorted(last)]
    bufs = [torch.randn(n, generator=g) * 1e-3 for n in sizes]
    replay = []
    for _ in range(args.replay):
        dist.barrier()
        s = time.monotonic()
        works = [dist.all_reduce(b, async_op=True) for b in bufs]
        ends = []
        for w in works:
            w.wait()
            ends.append(time.monotonic())
        replay.append((s, ends))
    dist.barrier()
    sw_replay = switch_counters(args) if rank == 0 and args.t0_ctl else None
    out = dict(iter_s=iter_s, losses=losses, buckets=[
        [[i] + list(it[i]) for i in sorted(it)] for it in rec.iterations],
        replay=replay, replay_sizes=sizes, sw_train=sw_train, sw_replay=sw_replay,
        ctx_train=ctx_train, ctx_all=ctx_stats(),
        params=sum(p.numel() for p in model.parameters()))
    if args.worker == "inart":
        import inart.torch
        out["paths"] = inart.torch.stats()
    return out


def union_length(intervals):
    tot, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            tot += b - a
            end = b
        elif b > end:
            tot += b - end
            end = b
    return tot


def analyse(rs, warmup):
    """Per iteration (the first `warmup` left out) from the ranks' bucket
    records: comm (union of [ready_i, done_i]), span (old definition), tail
    (last bucket), skew (handover spread, largest bucket), per bucket."""
    its = []
    for k in range(warmup, min(len(r["buckets"]) for r in rs)):
        per = [{b[0]: b[1:] for b in r["buckets"][k]} for r in rs]
        idx = sorted(per[0])
        bk = []
        for i in idx:
            hand = [p[i][0] for p in per]
            res = [p[i][1] for p in per]
            bk.append(dict(index=i, values=per[0][i][2], ready=max(hand), first=min(hand),
                           done=max(res)))
        prev = None
        for b in sorted(bk, key=lambda b: b["ready"]):
            # the part of [ready, done] not already covered by an earlier bucket
            b["service"] = max(0.0, b["done"] - max(b["ready"], prev if prev is not None
                                                    else b["ready"]))
            prev = b["done"] if prev is None else max(prev, b["done"])
        lastb = max(bk, key=lambda b: b["ready"])
        its.append(dict(
            comm=union_length([(b["ready"], b["done"]) for b in bk]),
            span=max(max(p[i][1] for i in idx) - min(p[i][0] for i in idx) for p in per),
            tail=lastb["done"] - lastb["ready"],
            skew=max(b["ready"] - b["first"] for b in bk),
            buckets=bk))
    return its


def replay_times(rs):
    out = []
    for k in range(min(len(r["replay"]) for r in rs)):
        ready = max(r["replay"][k][0] for r in rs)
        done = max(r["replay"][k][1][-1] for r in rs)
        out.append(done - ready)
    return out


def diff(a, b):
    if not a or not b:
        return None
    return {k: a[k] - b.get(k, 0) for k in a if isinstance(a[k], (int, float))}


def main():
    ap = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()), epilog=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--mbps", type=float, default=100.0)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--replay", type=int, default=3,
                    help="all-reduces of the buckets outside backward (0: none)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--queue-ms", type=float, default=50.0)
    ap.add_argument("--flush-ms", type=float, help="deployment's dataplane.flush_timeout_ms")
    ap.add_argument("--retx-ms", type=float, help="deployment's dataplane.retx_timeout_ms")
    ap.add_argument("--window", type=int, help="deployment's dataplane.slots_per_tree")
    ap.add_argument("--backends", default="inart,gloo")
    ap.add_argument("--run-timeout", type=float, default=1800.0)
    ap.add_argument("--json")
    ap.add_argument("--worker", choices=("inart", "gloo"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    ap.add_argument("--t0-ctl", help=argparse.SUPPRESS)
    ap.add_argument("--inart", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        r = worker(args)
        with open(args.out.replace("{rank}", os.environ.get("RANK", "0")), "w") as f:
            json.dump(r, f)
        sys.stdout.flush()
        os._exit(0)
    from inart.fabric import Fabric, tree_counters
    topo, jobs = ddp_digits.rack(args.workers, args.mbps, PARAMS)
    tmp = tempfile.mkdtemp(prefix="ddp-resnet-")
    tp, jp = os.path.join(tmp, "topo.json"), os.path.join(tmp, "jobs.json")
    json.dump(topo, open(tp, "w"))
    json.dump(jobs, open(jp, "w"))
    nodes = jobs["jobs"][0]["workers"]
    res = dict(workers=args.workers, mbps=args.mbps, batch=args.batch, size=args.size,
               iters=args.iters, warmup=args.warmup, replay=args.replay, runs=[])
    dp = {k: v for k, v in (("flush_timeout_ms", args.flush_ms),
                            ("retx_timeout_ms", args.retx_ms),
                            ("slots_per_tree", args.window)) if v is not None}
    with Fabric(tp, jp, queue_ms=args.queue_ms, dataplane=dp or None) as fab:
        with open(fab.deploy_path) as f:
            res["dataplane"] = json.load(f).get("dataplane")
        plan = fab.plan("inart")
        ev = fab.evaluate(plan)
        n = args.workers
        res["predicted_inart_s"] = ev["comm_time_s"]
        res["predicted_ring_s"] = 2.0 * (n - 1) / n * 4 * PARAMS * 8 / (args.mbps * 1e6)
        for b in [x for x in args.backends.split(",") if x]:
            # before either side: the install also gives the switches their
            # forwarding (gloo first on a fresh network: rank 1 could not reach
            # the store on w0); gloo's run leaves the PSs idle
            fab.install(plan)
            fab.reset_stats("t0")
            out = os.path.join(tmp, "%s-{rank}.json" % b)    # one command for every rank
            outs = [out.replace("{rank}", str(r)) for r in range(n)]
            argv = [sys.executable, os.path.abspath(__file__), "--worker", b, "--out", out,
                    "--iters", str(args.iters), "--batch", str(args.batch),
                    "--size", str(args.size), "--timeout", str(args.timeout), "--plan", plan,
                    "--replay", str(args.replay), "--t0-ctl", fab.ctl("t0"),
                    "--inart", os.path.abspath(fab.inart)]
            env = {"PYTHONPATH": os.path.join(HERE, "..", "python")}
            load0 = os.getloadavg()
            t0 = time.monotonic()
            ran = fab.run(nodes, argv, env=env, timeout=args.run_timeout)
            bad = sorted(((rc is None, r, rc, o) for r, (rc, o) in enumerate(ran) if rc != 0),
                         key=lambda x: x[:2])   # a rank that failed first, then those ended
            if bad:
                _, r, rc, o = bad[0]
                raise SystemExit("%s rank %d %s:\n%s" % (
                    b, r, "exited %d" % rc if rc is not None else "was ended by emu exec "
                    "(another rank failed, or --run-timeout)", o[-3000:]))
            rs = [json.load(open(p)) for p in outs]
            w = args.warmup
            its = analyse(rs, w)
            nb = len(its[0]["buckets"])
            run = dict(
                backend=b, wall_s=time.monotonic() - t0, load_before=load0,
                load_after=os.getloadavg(),
                iter_med=statistics.median(max(r["iter_s"][i] for r in rs)
                                           for i in range(w, args.iters)),
                comm_med=statistics.median(it["comm"] for it in its),
                span_med=statistics.median(it["span"] for it in its),
                tail_med=statistics.median(it["tail"] for it in its),
                skew_med=statistics.median(it["skew"] for it in its),
                comm=[it["comm"] for it in its], span=[it["span"] for it in its],
                buckets=[dict(index=its[0]["buckets"][j]["index"],
                              values=its[0]["buckets"][j]["values"],
                              service_med=statistics.median(it["buckets"][j]["service"]
                                                            for it in its),
                              skew_med=statistics.median(it["buckets"][j]["ready"] -
                                                         it["buckets"][j]["first"]
                                                         for it in its))
                         for j in range(nb)],
                replay=replay_times(rs), replay_values=sum(rs[0]["replay_sizes"]),
                loss=rs[0]["losses"], paths=rs[0].get("paths"),
                t0_train=rs[0]["sw_train"], t0_replay=diff(rs[0]["sw_replay"], rs[0]["sw_train"]),
                ctx_train=[r["ctx_train"] for r in rs],
                ctx_replay=[diff(r["ctx_all"], r["ctx_train"]) for r in rs])
            run["replay_med"] = statistics.median(run["replay"]) if run["replay"] else None
            res["runs"].append(run)
    report(res, args)
    if args.json:
        json.dump(res, open(args.json, "w"), indent=1)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def report(res, args):
    n = res["workers"]
    print("ResNet-18 (%d parameters), DDP, %d workers, links %g Mbit/s, batch %d x 3 x %d x %d, "
          "%d iterations (first %d left out), dataplane %s"
          % (PARAMS, n, args.mbps, args.batch, args.size, args.size, args.iters, args.warmup,
             json.dumps(res["dataplane"])))
    pred = {"inart": res["predicted_inart_s"], "gloo": res["predicted_ring_s"]}
    for r in res["runs"]:
        b = r["backend"]
        frac = sum(x["values"] for x in r["buckets"]) / PARAMS
        p = pred[b] * frac
        print("\n%s (load average %.1f before, %.1f after):" % (b, r["load_before"][0],
                                                               r["load_after"][0]))
        print("  time per iteration %.2f s; comm time per iteration %.2f s (predicted %.2f s: "
              "%.2fx); old span %.2f s; tail %.2f s; handover skew %.2f s (medians)"
              % (r["iter_med"], r["comm_med"], p, r["comm_med"] / p, r["span_med"],
                 r["tail_med"], r["skew_med"]))
        for x in r["buckets"]:
            print("  bucket %d: %8d values, in communication %.2f s (predicted %.2f s), "
                  "handover skew %.2f s" % (x["index"], x["values"], x["service_med"],
                                            pred[b] * x["values"] / PARAMS, x["skew_med"]))
        if r["replay"]:
            pr = pred[b] * r["replay_values"] / PARAMS
            print("  replay outside backward: %s s (median %.2f: %.2fx its prediction %.2f s)"
                  % (", ".join("%.2f" % t for t in r["replay"]), r["replay_med"],
                     r["replay_med"] / pr, pr))
        if b == "inart":
            print("  t0 training %s; replay %s" % (r["t0_train"], r["t0_replay"]))
            keys = ("sent", "retransmitted", "retx_asked", "probes", "nacks", "stalls")
            for name in ("ctx_train", "ctx_replay"):
                print("  workers %s: %s" % (name[4:], "; ".join(
                    ",".join("%s %d" % (k, c.get(k, 0)) for k in keys) if c else "-"
                    for c in r[name])))
            print("  backend paths (rank 0): %s" % r["paths"])
    med = {}
    for b in ("inart", "gloo"):
        v = [r for r in res["runs"] if r["backend"] == b]
        if v:
            med[b] = (statistics.median(r["comm_med"] for r in v),
                      statistics.median(r["replay_med"] for r in v) if v[0]["replay"] else None)
    if len(med) == 2:
        want = res["predicted_inart_s"] / res["predicted_ring_s"]
        got = med["inart"][0] / med["gloo"][0]
        print("\ncomm time inart/gloo %.3f against the planner's predicted ratio %.3f "
              "(%.2f s / %.2f s): %+.1f%% off%s; below 1.0: %s"
              % (got, want, res["predicted_inart_s"], res["predicted_ring_s"],
                 (got / want - 1) * 100, ": within 15%" if abs(got / want - 1) <= 0.15 else
                 ": NOT within 15%", "yes" if got < 1 else "no"))
        if med["inart"][1] and med["gloo"][1]:
            print("replay (outside backward) inart/gloo %.3f"
                  % (med["inart"][1] / med["gloo"][1]))


if __name__ == "__main__":
    sys.exit(main())
