#!/usr/bin/python3
"""ddp_resnet: ResNet-18 (torchvision) with unmodified DDP, process group
"inart" against "gloo", on the same shaped links: time per iteration.

    sudo /usr/bin/python3 examples/ddp_resnet.py [--workers 4] [--mbps 100]
        [--iters 8] [--batch 4] [--size 224] [--json out.json]

The rack of examples/ddp_digits.py (workers under the INA switch t0, PSs
p0 and p1 behind t1, every link --mbps, python/inart/fabric.py), the job's
gradient the model's 11 689 512 float32 values.  Each worker trains
torchvision's resnet18 (1000 classes) on synthetic ImageNet-shaped data
(batch x 3 x size x size, random labels, seeded per rank) for --iters
iterations, once with init_process_group("inart") (the backend of
python/inart/backend.py: DDP's bucket all-reduces through the switches)
and once with init_process_group("gloo").  DDP's all-reduce is timed by a
hook doing what DDP does without one (divide, all_reduce on the default
group; examples/ddp_digits.py's gloo_timed_hook): the communication time
of an iteration is the span from the first bucket handed over to the last
bucket's result (backward overlaps part of it).  Prints the median time
and communication time per iteration (the first --warmup left out), their
ratio inart/gloo and the planner's predicted ratio (evaluator / ring
formula), and the backend's path counts (inart.torch.stats()).

Needs root and Debian's python3-torchvision (scripts/deps.sh).  On a
2-core machine four workers share the cores: compute dominates the
iteration; the communication time is the figure to compare.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import ddp_digits  # noqa: E402  (rack, CommRecord, gloo_timed_hook)

PARAMS = 11689512   # torchvision resnet18(num_classes=1000)


class Span(ddp_digits.CommRecord):
    """Per iteration: the bucket times' sum (comm_s; buckets queue behind
    each other, so it counts waits twice) and the span from the first
    bucket's hand-over to the last bucket's result (first, last)."""

    def record(self, index, t0, t1):
        super().record(index, t0, t1)
        self._cur["last"] = max(self._cur.get("last", t1), t1)


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
    rec = Span()
    ddp.register_comm_hook(rec, ddp_digits.gloo_timed_hook)
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
    out = dict(iter_s=iter_s, comm_s=[it["last"] - it["first"] for it in rec.iterations],
               comm_sum_s=[it["comm_s"] for it in rec.iterations], losses=losses,
               params=sum(p.numel() for p in model.parameters()))
    if args.worker == "inart":
        import inart.torch
        out["paths"] = inart.torch.stats()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--mbps", type=float, default=100.0)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--queue-ms", type=float, default=50.0)
    ap.add_argument("--backends", default="inart,gloo")
    ap.add_argument("--run-timeout", type=float, default=1800.0)
    ap.add_argument("--json")
    ap.add_argument("--worker", choices=("inart", "gloo"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
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
               iters=args.iters, warmup=args.warmup)
    with Fabric(tp, jp, queue_ms=args.queue_ms) as fab:
        plan = fab.plan("inart")
        ev = fab.evaluate(plan)
        n = args.workers
        res["predicted_inart_s"] = ev["comm_time_s"]
        res["predicted_ring_s"] = 2.0 * (n - 1) / n * 4 * PARAMS * 8 / (args.mbps * 1e6)
        for b in [x for x in args.backends.split(",") if x]:
            if b == "inart":
                fab.install(plan)
            fab.reset_stats("t0")
            out = os.path.join(tmp, "%s-{rank}.json" % b)    # one command for every rank
            outs = [out.replace("{rank}", str(r)) for r in range(n)]
            argv = [sys.executable, os.path.abspath(__file__), "--worker", b, "--out", out,
                    "--iters", str(args.iters), "--batch", str(args.batch),
                    "--size", str(args.size), "--timeout", str(args.timeout), "--plan", plan]
            env = {"PYTHONPATH": os.path.join(HERE, "..", "python")}
            t0 = time.monotonic()
            ran = fab.run(nodes, argv, env=env, timeout=args.run_timeout)
            for r, (rc, o) in enumerate(ran):
                if rc != 0:
                    raise SystemExit("%s rank %d exited %s:\n%s" % (b, r, rc, o[-3000:]))
            rs = [json.load(open(p)) for p in outs]
            w = args.warmup
            res[b] = dict(
                wall_s=time.monotonic() - t0,
                iter_med=statistics.median(max(r["iter_s"][i] for r in rs)
                                           for i in range(w, args.iters)),
                comm_med=statistics.median(max(r["comm_s"][i] for r in rs)
                                           for i in range(w, len(rs[0]["comm_s"]))),
                loss=rs[0]["losses"], paths=rs[0].get("paths"),
                t0={k: v for k, v in tree_counters(fab.stats("t0")).items()
                    if k in ("aggregated", "emitted", "partial")})
    print("ResNet-18 (%d parameters), DDP, %d workers, links %g Mbit/s, batch %d x 3 x %d x %d, "
          "%d iterations (first %d left out)" % (PARAMS, n, args.mbps, args.batch, args.size,
                                                 args.size, args.iters, args.warmup))
    for b in ("inart", "gloo"):
        if b in res:
            print("%-6s time per iteration %.2f s, comm time per iteration %.2f s (medians), "
                  "t0 %s" % (b, res[b]["iter_med"], res[b]["comm_med"], res[b]["t0"]))
    if "inart" in res and "gloo" in res:
        print("comm time inart/gloo %.3f (planner's predicted ratio %.3f: %.2f s / %.2f s); "
              "time per iteration inart/gloo %.3f"
              % (res["inart"]["comm_med"] / res["gloo"]["comm_med"],
                 res["predicted_inart_s"] / res["predicted_ring_s"], res["predicted_inart_s"],
                 res["predicted_ring_s"], res["inart"]["iter_med"] / res["gloo"]["iter_med"]))
    if "inart" in res:
        print("backend paths (rank 0): %s" % res["inart"]["paths"])
    if args.json:
        json.dump(res, open(args.json, "w"), indent=1)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
