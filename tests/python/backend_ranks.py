"""backend_ranks.py: one rank of the "inart" torch.distributed backend's test.

Run by tests/python/test_backend.py in a worker namespace of an InArt
fabric with RANK, WORLD_SIZE, MASTER_ADDR/PORT, INART_TOPO, INART_JOBS,
INART_DEPLOY, INART_PLAN set; prints "ok NAME" / "FAIL NAME: why" per check
and exits 1 if one failed.  In order:

  - init_process_group("inart") from torchrun's environment (env://);
  - every collective and dtype against a reference computed here (every
    rank's input is a function of its rank): floats within the quantization
    bound of docs/python.md, integers exact; which path each took
    (inart.torch.stats()); bad input (NaN, AVG of integers) named;
  - DDP (no hook) and DDP + ZeroRedundancyOptimizer, 20 steps of a small
    CNN, against the same on a gloo group of the same ranks;
  - a second group on the same job refused, naming the job;
  - a PS that stops answering: all_reduce raises within the timeout given
    to init_process_group, naming the timeout and the PS; once it answers
    again the same group goes on (the next all-reduces are right);
  - destroy_process_group, then init again with file://, tcp:// and a
    given store, each checked with an all-reduce;
  - init mismatches: a rank-to-worker mapping naming a worker the job does
    not have, a world size the job does not match: errors naming both;
  - DDP training with the PSs killed (SIGKILL) mid-way, the PS p0 only
    (p0_killed), or the switch t1 (switch_killed): backward raises a
    RuntimeError within the init timeout, naming the PS or the switch, and
    as silent exactly the node(s) killed.
TEST_STEPS picks the steps (steps(): ALL by default).
"""
import datetime
import os
import signal
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import inart.torch
from inart_ranks import check, finish

T = datetime.timedelta


def silent_part(msg):
    """The nodes a timeout's message names after "silent: " (up to the
    next "; " or " ["; each "NAME (IP) (why)"), as a list of names."""
    if "silent: " not in msg:
        return []
    part = msg.split("silent: ", 1)[1].split(" [", 1)[0].split("; ", 1)[0]
    import re
    part = re.sub(r" \([^()]*\)", "", part)
    return [w.split(" ", 1)[0] for w in part.replace(" or ", ", ").split(", ") if w]


def raises(name, fn, must, within=None, cls=Exception, named=None):
    t0 = time.monotonic()
    try:
        fn()
    except Exception as e:
        dt, msg = time.monotonic() - t0, "%s: %s" % (type(e).__name__, e)
        miss = [s for s in must if s not in msg]
        if named is not None and sorted(silent_part(msg)) != sorted(named[0]):
            miss.append("silent: exactly %s (not %s), found %s"
                        % (", ".join(named[0]), ", ".join(named[1]) or "-", silent_part(msg)))
        check(name, not miss and (within is None or dt <= within) and isinstance(e, cls),
              "message %r lacks %s" % (msg[:600], miss) if miss else
              "%s is not a %s" % (type(e).__name__, cls.__name__) if not isinstance(e, cls)
              else "took %.1f s" % dt)
        print("   (%.2f s) %s" % (dt, msg[:300].replace("\n", " ")), flush=True)
        return
    check(name, False, "did not raise")


def data(r, n, dtype, seed=0):
    g = torch.Generator().manual_seed(seed * 7919 + n * 31 + r)
    if dtype.is_floating_point:
        return (torch.randn(n, generator=g) * 3).to(dtype)
    return torch.randint(-1000, 1000, (n,), generator=g).to(dtype)


def every(world, n, dtype, seed=0):
    return [data(r, n, dtype, seed) for r in range(world)]


def tol(ref, mag, world, dtype):
    """Quantization (each value within 2^-17 at scale >= 16, n of them)
    plus float32 rounding of the sum, plus the rounding of the dtype the
    result is stored in."""
    eps = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}.get(dtype, 2.0 ** -23)
    return world * 2.0 ** -17 + 4 * 2.0 ** -24 * mag + eps * ref.abs() + 1e-30


def close(name, got, ref, mag, world, dtype):
    got, ref64 = got.double().reshape(-1), ref.double().reshape(-1)
    mag = mag.reshape(-1)
    lim = tol(ref64, mag.double(), world, dtype)
    err = (got - ref64).abs()
    check(name, bool((err <= lim).all()), "max error %g (bound there %g)"
          % (float(err.max()), float(lim[int((err - lim).argmax())])))


def collectives(world, rank):
    inart.torch.stats(reset=True)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for n in (1, 359, 5000):
            xs = every(world, n, dtype)
            t = xs[rank].clone()
            dist.all_reduce(t)
            ref = sum(x.double() for x in xs)
            mag = sum(x.double().abs() for x in xs)
            close("all_reduce SUM %s of %d" % (dtype, n), t, ref, mag, world, dtype)
        t = xs[rank].clone()
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        close("all_reduce AVG %s" % dtype, t, ref / world, mag / world, world, dtype)
    for dtype in (torch.int32, torch.int64):
        xs = every(world, 777, dtype)
        t = xs[rank].clone()
        dist.all_reduce(t)
        check("all_reduce SUM %s exact" % dtype, torch.equal(t, sum(xs)))
    for name, op, f in (("MAX", dist.ReduceOp.MAX, torch.maximum),
                        ("MIN", dist.ReduceOp.MIN, torch.minimum)):
        for dtype in (torch.float32, torch.bfloat16, torch.int64):
            xs = every(world, 100, dtype)
            t = xs[rank].clone()
            dist.all_reduce(t, op=op)
            ref = xs[0]
            for x in xs[1:]:
                ref = f(ref, x)
            check("all_reduce %s %s exact" % (name, dtype), torch.equal(t, ref))
    xs = [torch.full((10,), 1.5 + r) for r in range(world)]
    t = xs[rank].clone()
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    check("all_reduce PRODUCT", torch.allclose(t, torch.stack(xs).prod(0)))
    # non-contiguous
    base = data(rank, 600, torch.float32).view(20, 30)
    t = base.t()
    dist.all_reduce(t)
    ref = sum(data(r, 600, torch.float32).view(20, 30) for r in range(world)).t()
    mag = sum(data(r, 600, torch.float32).abs().view(20, 30) for r in range(world)).t()
    close("all_reduce of a non-contiguous tensor", t, ref, mag, world, torch.float32)
    # reduce-scatter: list form and FSDP's flat-shard form, fp32/fp16/bf16
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        n = 1000 * world
        xs = every(world, n, dtype, seed=3)
        ref = sum(x.double() for x in xs)
        mag = sum(x.double().abs() for x in xs)
        out = torch.empty(n // world, dtype=dtype)
        dist._reduce_scatter_base(out, xs[rank].clone())
        sl = slice(rank * n // world, (rank + 1) * n // world)
        close("_reduce_scatter_base %s (FSDP's flat shard)" % dtype, out, ref[sl], mag[sl],
              world, dtype)
        out = torch.empty(n // world, dtype=dtype)
        dist.reduce_scatter(out, list(xs[rank].clone().chunk(world)))
        close("reduce_scatter %s" % dtype, out, ref[sl], mag[sl], world, dtype)
        # all-gather: FSDP's flat form and the list form (exact)
        shards = [data(r, 333, dtype, seed=5) for r in range(world)]
        out = torch.empty(333 * world, dtype=dtype)
        dist._all_gather_base(out, shards[rank].clone())
        check("_all_gather_base %s exact (FSDP's unshard)" % dtype, torch.equal(out,
                                                                               torch.cat(shards)))
        outs = [torch.empty(333, dtype=dtype) for _ in range(world)]
        dist.all_gather(outs, shards[rank].clone())
        check("all_gather %s exact" % dtype, all(torch.equal(a, b) for a, b in zip(outs, shards)))
        t = shards[rank].clone()
        dist.broadcast(t, src=world - 1)
        check("broadcast %s exact" % dtype, torch.equal(t, shards[world - 1]))
    t = torch.arange(12, dtype=torch.int64).view(3, 4).t() * (rank + 1)   # non-contiguous
    dist.broadcast(t, src=0)
    check("broadcast of a non-contiguous int64 tensor",
          torch.equal(t, torch.arange(12, dtype=torch.int64).view(3, 4).t()))
    xs = every(world, 50, torch.float32)
    t = xs[rank].clone()
    dist.reduce(t, dst=0)
    if rank == 0:
        check("reduce (to rank 0)", torch.allclose(t, sum(xs), atol=1e-5))
    g = [torch.empty(50) for _ in range(world)] if rank == 0 else None
    dist.gather(xs[rank].clone(), g, dst=0)
    if rank == 0:
        check("gather exact", all(torch.equal(a, b) for a, b in zip(g, xs)))
    out = torch.empty(50)
    dist.scatter(out, xs if rank == 0 else None, src=0)
    check("scatter exact", torch.equal(out, xs[rank]))
    ins = [torch.full((r + 1,), float(rank * 10 + r)) for r in range(world)]
    outs = [torch.empty(rank + 1) for _ in range(world)]
    dist.all_to_all(outs, ins)
    check("all_to_all exact", all(torch.equal(outs[s], torch.full((rank + 1,), float(s * 10 +
                                                                                    rank)))
                                  for s in range(world)))
    out = torch.empty(world * 4)
    dist.all_to_all_single(out, torch.arange(world * 4, dtype=torch.float32) + 100 * rank)
    want = torch.cat([torch.arange(rank * 4, rank * 4 + 4, dtype=torch.float32) + 100 * s
                      for s in range(world)])
    check("all_to_all_single exact", torch.equal(out, want))
    if rank == 0:
        dist.send(torch.arange(7, dtype=torch.bfloat16), dst=1)
        t = torch.empty(7, dtype=torch.int32)
        dist.recv(t, src=1)
        check("send/recv (bfloat16 there, int32 back)", torch.equal(t, torch.arange(7) * 2))
    elif rank == 1:
        t = torch.empty(7, dtype=torch.bfloat16)
        dist.recv(t, src=0)
        check("send/recv bfloat16 exact", torch.equal(t, torch.arange(7, dtype=torch.bfloat16)))
        dist.send(torch.arange(7, dtype=torch.int32) * 2, dst=0)
    dist.barrier()
    check("barrier", True)
    w = dist.all_reduce(torch.ones(1000), async_op=True)
    fut = w.get_future()
    w.wait()
    check("async all_reduce: wait() and future", fut.done() and
          bool((fut.value()[0] == world).all()))
    st = inart.torch.stats()
    print("   stats: %s" % st, flush=True)
    ar = st.get("allreduce", {})
    check("float SUM/AVG all-reduces took the inart path, integers and MIN/MAX/PRODUCT gloo",
          ar.get("inart", {}).get("calls") == 4 * 4 + 1 + 1 and
          ar.get("gloo", {}).get("calls") == 2 + 6 + 1, str(ar))
    check("reduce-scatters took the inart path",
          st.get("_reduce_scatter_base", {}).get("inart", {}).get("calls") == 3 and
          "gloo" not in st.get("reduce_scatter", {}), str(st.get("reduce_scatter")))
    # bad input
    nan = torch.zeros(100)
    nan[17] = float("nan")
    raises("NaN in an all-reduce: InartValueError naming the value",
           lambda: dist.all_reduce(nan), ["InartValueError", "value 17", "nan"])
    big = torch.full((10,), 40000.0, dtype=torch.float16)
    raises("a float16 sum beyond float16's range: InartValueError, tensor unchanged",
           lambda: dist.all_reduce(big), ["InartValueError", "beyond float16", "65504"])
    check("the float16 tensor was left unchanged", bool((big == 40000.0).all()), str(big[:3]))
    raises("AVG of integers refused", lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32),
                                                               op=dist.ReduceOp.AVG),
           ["AVG of integer", "int32"])
    t = torch.ones(300)
    dist.all_reduce(t)
    check("all_reduce after refused input", bool((t == world).all()), str(t[:3]))


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        return self.fc(torch.relu(self.c2(x)).flatten(1))


def train(pg, zero, rank, steps=20):
    torch.manual_seed(11)
    m = CNN()
    ddp = DDP(m, process_group=pg, bucket_cap_mb=0.01)
    if zero:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.SGD,
                                      process_group=pg, lr=0.02, momentum=0.9)
    else:
        opt = torch.optim.SGD(ddp.parameters(), lr=0.02, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    losses = []
    for s in range(steps):
        g = torch.Generator().manual_seed(100 * s + rank)
        x, y = torch.randn(16, 1, 8, 8, generator=g), torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        loss = lossf(ddp(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return torch.cat([p.detach().reshape(-1) for p in m.parameters()]), losses


def training(world, rank):
    gl = dist.new_group(backend="gloo")
    for zero in (False, True):
        name = "DDP + ZeroRedundancyOptimizer" if zero else "DDP"
        inart.torch.stats(reset=True)
        t0 = time.monotonic()
        a, la = train(None, zero, rank)
        ta = time.monotonic() - t0
        st = inart.torch.stats()
        t0 = time.monotonic()
        b, lb = train(gl, zero, rank)
        tb = time.monotonic() - t0
        d = float((a - b).abs().max())
        dl = max(abs(x - y) for x, y in zip(la, lb))
        print("   %s: max parameter difference %.3g, max loss difference %.3g" % (name, d, dl))
        check("%s, 20 steps: parameters equal gloo's within 1e-3 (max diff %.2g)" % (name, d),
              d <= 1e-3, "losses %s vs %s" % (la[-3:], lb[-3:]))
        check("%s, 20 steps: losses equal gloo's within 1e-3 (max diff %.2g)" % (name, dl),
              dl <= 1e-3)
        ar = st.get("allreduce", {})
        check("%s: the gradient buckets went through InArt (%s)" % (name, ar),
              ar.get("inart", {}).get("calls", 0) >= 20, str(st))
        # the plan says INA applies to this job: over the whole run (DDP's
        # set-up, 20 steps), no collective INA carries took the gloo path
        sw = {op: st[op]["gloo"]["calls"] for op in ("allreduce", "allreduce_coalesced",
                                                       "reduce_scatter", "_reduce_scatter_base")
              if st.get(op, {}).get("gloo", {}).get("calls")}
        check("%s, the whole run: 0 collectives on the software path where INA applies "
              "(inart.torch.stats(): %s)" % (name, sw or "none"), not sw, str(st))
        if zero:
            check("ZeroRedundancyOptimizer broadcast the shards (gloo path)",
                  st.get("broadcast", {}).get("gloo", {}).get("calls", 0) >= 20, str(st))
        print("   %s: %.2f s with inart, %.2f s with gloo (busy machine)" % (name, ta, tb))
    raises("a second group on the same job refused", lambda: dist.new_group(backend="inart"),
           ["job 'j0' is already used", "Options(job="])
    g2 = dist.new_group(backend="inart", pg_options=inart.torch.Options(ina=False))
    t = torch.ones(10)
    dist.all_reduce(t, group=g2)
    check("a second group with Options(ina=False) works (gloo path)",
          bool((t == world).all()) and inart.torch.stats()["allreduce"].get("gloo"))


def ps_stopped(world, rank):
    pids = [int(p) for p in os.environ["TEST_PS_PIDS"].split(",")]
    t = torch.ones(2000)
    dist.all_reduce(t)
    dist.barrier()
    if rank == 0:
        for p in pids:
            os.kill(p, signal.SIGSTOP)
    dist.barrier()
    import json
    split = json.load(open(os.environ["INART_PLAN"]))["jobs"][0]["split"]
    used = sorted(p for p, v in split.items() if v)
    raises("PS stopped: all_reduce raises within the init timeout (6 s), naming the stopped "
           "PS %s as silent (mute on its control socket)" % ", ".join(used),
           lambda: dist.all_reduce(torch.ones(2000)),
           ["InartTimeoutError", "timed out after 6 s", "PS p", "stopped or hung"], within=9.0,
           named=(used, ["t0", "t1"]))
    # after a failed InArt collective the group refuses the next ones (a
    # PS may hold the failed step's partial sum: no silent wrong sum) until
    # every rank calls inart.torch.resync(); async work raises from wait()
    w = dist.all_reduce(torch.ones(2000), async_op=True)
    raises("after the timeout: the next all_reduce (async) is refused at once, from wait(), "
           "naming resync", w.wait, ["InartStateError", "inart.torch.resync(group)",
                                     "timed out after 6 s"], within=1.0)
    t = torch.ones(10, dtype=torch.int64)
    dist.all_reduce(t)
    check("after the timeout: the gloo path still works (int64 all_reduce)",
          bool((t == world).all()), str(t[:3]))
    dist.barrier()
    if rank == 0:
        for p in pids:
            os.kill(p, signal.SIGCONT)
    dist.barrier()
    t0 = time.monotonic()
    inart.torch.resync()
    dt = time.monotonic() - t0
    try:
        t = torch.full((2000,), float(rank + 1))
        dist.all_reduce(t)
        check("PS answering again, inart.torch.resync() (%.1f s): the same group's next "
              "all_reduce is right" % dt,
              bool(((t - world * (world + 1) / 2).abs() < 1e-3).all()), str(t[:3]))
        t = torch.ones(5000)
        dist.all_reduce(t)
        check("... and the one after it, through InArt", bool((t == world).all()), str(t[:3]))
    except Exception as e:
        check("PS answering again, inart.torch.resync(): the same group's next all_reduce",
              False, repr(e))


def kill_training(tmp, rank, world, what, pids, tmo=4, silent=(), alive=()):
    """DDP on a fresh group (FileStore, init timeout tmo s), three steps,
    then rank 0 kills `pids` (SIGKILL) between two barriers; the next
    backward must raise a RuntimeError naming `what` within the timeout,
    and naming as silent (what the worker's recovery found, narrowed by
    the daemons' control sockets) exactly the nodes `silent` (none of
    `alive`)."""
    dist.init_process_group("inart", store=dist.FileStore(tmp + "/kill-" + what[0], world),
                            rank=rank, world_size=world, timeout=T(seconds=tmo))
    torch.manual_seed(3)
    m = CNN()
    ddp = DDP(m)
    lossf = torch.nn.CrossEntropyLoss()
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 10, (8,))
    for _ in range(3):
        lossf(ddp(x), y).backward()
    dist.barrier()
    if rank == 0:
        for p in pids:
            os.kill(p, signal.SIGKILL)
    dist.barrier()
    raises("%d ranks, %s killed mid-training: DDP's backward raises a RuntimeError naming it "
           "within the init timeout (%d s)" % (world, ", ".join(what), tmo),
           lambda: lossf(ddp(x), y).backward(),
           ["InartTimeoutError", "timed out after %d s" % tmo] + list(what),
           within=tmo + 3.0, cls=RuntimeError, named=(silent, alive))
    # the group is not usable for InArt any more: destroy it (a new one
    # would need the node back)
    dist.destroy_process_group()


def switch_killed(world, rank, tmp):
    """The switch t1 (between the workers' switch and the PSs) killed:
    the error names it ("other switches on the way t1")."""
    kill_training(tmp, rank, world, ["t1"], [int(os.environ["TEST_SWITCH_PID"])],
                  silent=["t1"], alive=["t0"])


def reinit(world, rank, tmp):
    addr = os.environ["MASTER_ADDR"]
    for name, kw in (("file://", dict(init_method="file://%s/init-file" % tmp)),
                     ("tcp://", dict(init_method="tcp://%s:29531" % addr)),
                     ("a given store", dict(store=dist.TCPStore(addr, 29532, world, rank == 0)))):
        try:
            if "store" not in kw:
                kw.update(rank=rank, world_size=world)
            else:
                kw.update(rank=rank, world_size=world)
            dist.init_process_group("inart", timeout=T(seconds=20), **kw)
            t = torch.full((500,), float(rank + 1))
            dist.all_reduce(t)
            check("destroy, then init with %s: all_reduce through InArt" % name,
                  bool(((t - world * (world + 1) / 2).abs() < 1e-3).all()) and
                  dist.get_backend() == "inart", str(t[:3]))
            dist.barrier()
            dist.destroy_process_group()
        except Exception as e:
            check("destroy, then init with %s" % name, False, repr(e))
            return


def mismatch(world, rank, tmp):
    os.environ["INART_WORKERS"] = ",".join("w%d" % (r + 5) for r in range(world))
    raises("init: a rank-to-worker mapping the job does not have",
           lambda: dist.init_process_group("inart", store=dist.FileStore(tmp + "/mm1", world),
                                           rank=rank, world_size=world, timeout=T(seconds=5)),
           ["rank %d maps to worker 'w%d'" % (rank, rank + 5), "INART_WORKERS", "job 'j0'",
            ", ".join("w%d" % r for r in range(world))])
    del os.environ["INART_WORKERS"]
    jobs3 = os.environ["TEST_JOBS_MORE"]
    raises("init: world size against the job's workers",
           lambda: dist.init_process_group(
               "inart", store=dist.FileStore(tmp + "/mm2", world), rank=rank,
               world_size=world, timeout=T(seconds=5),
               pg_options=inart.torch.Options(jobs=jobs3)),
           ["world size %d" % world, "lists %d workers" % (world + 1), "w%d" % world])


def torchrun_mode():
    """Under torchrun on this host (no InArt job: Options(ina=False), every
    op on the gloo path): the launch's variables reach the backend."""
    dist.init_process_group("inart", pg_options=inart.torch.Options(ina=False),
                            timeout=T(seconds=20))
    world, rank = dist.get_world_size(), dist.get_rank()

    def go():
        check("torchrun: rank %d of %d, LOCAL_RANK %s, backend %s"
              % (rank, world, os.environ.get("LOCAL_RANK"), dist.get_backend()),
              dist.get_backend() == "inart" and world == int(os.environ["WORLD_SIZE"]) and
              os.environ.get("LOCAL_RANK") == str(rank))
        t = torch.full((100,), float(rank + 1))
        dist.all_reduce(t)
        check("torchrun: all_reduce", bool((t == world * (world + 1) / 2).all()), str(t[:3]))
        st = inart.torch.stats()
        check("torchrun: counted on the gloo path", "inart" not in st.get("allreduce", {}) and
              st["allreduce"]["gloo"]["calls"] >= 1, str(st))
    finish(rank, go)


def main():
    import sys
    if sys.argv[1:] == ["torchrun"]:
        return torchrun_mode()
    torch.set_num_threads(1)
    tmp = os.environ["TEST_TMP"]
    dist.init_process_group("inart", timeout=T(seconds=6))    # env:// (torchrun's variables)
    world, rank = dist.get_world_size(), dist.get_rank()
    check("init_process_group('inart') from env:// (backend %s, %d ranks)"
          % (dist.get_backend(), world), dist.get_backend() == "inart")
    finish(rank, steps, world, rank, tmp)


def ps_killed(world, rank, tmp):
    """The PSs killed: the error names the PS the plan uses.  Last: the
    fabric's PSs are gone afterwards."""
    import json
    split = json.load(open(os.environ["INART_PLAN"]))["jobs"][0]["split"]
    used = sorted(p for p, v in split.items() if v)
    kill_training(tmp, rank, world, ["PS " + ", ".join(used)],
                  [int(p) for p in os.environ["TEST_PS_PIDS"].split(",")], silent=used)


def p0_killed(world, rank, tmp):
    """One PS (p0) killed: the error names p0 as the silent node, not the
    other PS (whose tree still answered) nor the switches."""
    import json
    split = json.load(open(os.environ["INART_PLAN"]))["jobs"][0]["split"]
    others = sorted(p for p, v in split.items() if v and p != "p0")
    pids = dict(zip(("p0", "p1"), os.environ["TEST_PS_PIDS"].split(",")))
    kill_training(tmp, rank, world, ["p0"], [int(pids["p0"])], silent=["p0"],
                  alive=others + ["t0", "t1"])


def destroy(world, rank, tmp):
    dist.destroy_process_group()


ALL = "collectives,training,ps_stopped,destroy,reinit,mismatch,ps_killed"


def steps(world, rank, tmp):
    """TEST_STEPS: the steps to run, comma-separated (default ALL); the
    first ones on the env:// group made in main()."""
    only = os.environ.get("TEST_STEPS", "all")
    for name in (ALL if only == "all" else only).split(","):
        fn = globals()[name]
        fn(world, rank) if fn.__code__.co_argcount == 2 else fn(world, rank, tmp)


if __name__ == "__main__":
    main()
