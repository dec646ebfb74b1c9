"""inart_ranks.py MODE: one rank of the Python package's integration tests.

Run by tests/python/test_netns.py in a worker namespace of an InArt fabric
(python/inart/fabric.py) with RANK, WORLD_SIZE, MASTER_ADDR, INART_TOPO,
INART_JOBS, INART_DEPLOY and INART_PLAN set; prints one line per check
("ok NAME" or "FAIL NAME: why") and exits 1 if a check failed.

  grads   the DDP hook's averaged gradients against gloo's all-reduce of the
          same local gradients, within the documented bound, for several
          bucket sizes (DDP bucket_cap_mb) and iterations; inart.allreduce
          of sizes around a packet's payload (358 values) against gloo
  bad     bad input: dtype, layout, NaN, rank and world size against the
          plan and the process group, a plan for another job, a PS that
          does not answer (stopped), a switch that does not answer
          (stopped): the exception named, within a bounded time, the
          process group and the InArt state usable afterwards
"""
import copy
import os
import signal
import sys
import time
import traceback

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import inart
import inart.torch
from inart.core import DEFAULT_SCALE

FAILS = []
EPS = 2.0 ** -24


def check(name, cond, why=""):
    if cond:
        print("ok %s" % name, flush=True)
    else:
        FAILS.append(name)
        print("FAIL %s: %s" % (name, why), flush=True)


def raises(name, exc, fn, must_contain=(), within=None):
    """fn() must raise exc (with every string of must_contain in its
    message), within `within` seconds if given; returns the exception."""
    t0 = time.monotonic()
    try:
        fn()
    except exc as e:
        dt = time.monotonic() - t0
        msg = str(e)
        miss = [s for s in must_contain if s not in msg]
        why = ("message %r lacks %s" % (msg, miss) if miss else
               "took %.2f s > %.2f s" % (dt, within or 0))
        check(name, not miss and (within is None or dt <= within), why)
        print("   %s (%.2f s): %s" % (type(e).__name__, dt, msg[:300]), flush=True)
        return e
    except Exception as e:  # the wrong exception
        check(name, False, "raised %s: %s" % (type(e).__name__, e))
        return e
    check(name, False, "did not raise %s" % exc.__name__)
    return None


def model(seed, dtype=torch.float32):
    torch.manual_seed(seed)
    # layer sizes give parameter tensors of 2368, 37, 851, 23, 230 and 10
    # values: none a multiple of a packet's 358
    return torch.nn.Sequential(torch.nn.Linear(64, 37), torch.nn.ReLU(), torch.nn.Linear(37, 23),
                               torch.nn.ReLU(), torch.nn.Linear(23, 10)).to(dtype)


def batch(rank, it, n=48, dtype=torch.float32):
    g = torch.Generator().manual_seed(1000 * it + rank)
    return (torch.randn(n, 64, generator=g).to(dtype),
            torch.randint(0, 10, (n,), generator=g))


def gloo_reference(local, world):
    """DDP's own averaging through gloo (divide, sum) and the sum of the
    magnitudes of the ranks' values, for the bound."""
    ref = [g.detach().clone().div_(world) for g in local]
    mag = [g.detach().abs() for g in local]
    for t in ref + mag:
        dist.all_reduce(t)
    return ref, mag


def bound(scale, mag, world, dtype=torch.float32):
    """docs/python.md: |InArt's average - gloo's| <= 2^-(s+1) (quantization:
    n values each within 2^-(s+1), divided by n) + 2^-22 * sum|x_i| / n (the
    float32 roundings of both sides: InArt's dequantization and division,
    gloo's division and n-1 additions) + 2^-149."""
    tiny = 2.0 ** -149
    if dtype == torch.float64:
        return 2.0 ** -(scale + 1) + 2.0 ** -21 * mag / world + tiny
    return 2.0 ** -(scale + 1) + 4 * EPS * mag / world + tiny


def grads_mode(world, rank):
    sizes_seen = set()
    for cap in (0.0001, 0.004, 25.0):
        m = model(7)
        # DDP puts every parameter in one bucket for the first iteration, then
        # rebuilds with a first bucket of this size and the others of the cap
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(cap * 1024 * 1024)
        ddp = DDP(m, bucket_cap_mb=cap)
        state = inart.torch.State(plan=os.environ["INART_PLAN"], timeout=20)
        ddp.register_comm_hook(state, inart.torch.allreduce_hook)
        lossf = torch.nn.CrossEntropyLoss()
        worst = 0.0
        scales = set()
        for it in range(4):
            x, y = batch(rank, it)
            local = torch.autograd.grad(lossf(m(x), y), list(m.parameters()))
            ref, mag = gloo_reference(local, world)
            ddp.zero_grad()
            lossf(ddp(x), y).backward()
            info = dict(state.buckets)
            rescaled = sum(b["rescales"] for b in info.values())
            check("cap %g it %d: no rescale" % (cap, it), rescaled == 0, "rescales %d" % rescaled)
            # each parameter's scale: that of the bucket holding it (the
            # lowest scale used in the iteration is a valid bound for all)
            s = min(b["scale"] for b in info.values())
            scales.add(s)
            for b in info.values():
                sizes_seen.add(b["values"])
            for p, r, mg in zip(m.parameters(), ref, mag):
                err = (p.grad - r).abs()
                lim = bound(s, mg, world)
                worst = max(worst, float((err / lim).max()))
                if not bool((err <= lim).all()):
                    i = int((err - lim).argmax())
                    check("cap %g it %d: grads within bound" % (cap, it), False,
                          "value %d: |%g - %g| > %g" % (i, float(p.grad.reshape(-1)[i]),
                                                        float(r.reshape(-1)[i]),
                                                        float(lim.reshape(-1)[i])))
                    break
            else:
                check("cap %g it %d: grads within bound" % (cap, it), True)
        print("   cap %g MB: buckets %s, scales %s, worst error / bound %.3f"
              % (cap, sorted(b["values"] for b in info.values()), sorted(scales), worst),
              flush=True)
        check("cap %g: the gain raised the scale above %d" % (cap, DEFAULT_SCALE),
              max(scales) > DEFAULT_SCALE, "scales %s" % sorted(scales))
        state.close()
    odd = sorted(n for n in sizes_seen if n % 358)
    check("bucket sizes not multiples of 358 values were reduced", len(odd) >= 3,
          "sizes %s" % sorted(sizes_seen))
    check("a bucket of several packets was reduced", max(sizes_seen) > 358,
          "sizes %s" % sorted(sizes_seen))
    # float64 model: the hook converts to float32 and back
    m = model(7, torch.float64)
    ddp = DDP(m, bucket_cap_mb=25)
    state = inart.torch.State(plan=os.environ["INART_PLAN"], timeout=20)
    ddp.register_comm_hook(state, inart.torch.allreduce_hook)
    lossf = torch.nn.CrossEntropyLoss()
    x, y = batch(rank, 9, dtype=torch.float64)
    local = torch.autograd.grad(lossf(m(x), y), list(m.parameters()))
    ref, mag = gloo_reference(local, world)
    ddp.zero_grad()
    lossf(ddp(x), y).backward()
    s = min(b["scale"] for b in state.buckets.values())
    ok = all(bool(((p.grad - r).abs() <= bound(s, mg, world, torch.float64) + 2.0 ** -24 *
                   r.abs()).all()) for p, r, mg in zip(m.parameters(), ref, mag))
    check("float64 buckets converted, grads within bound", ok)
    state.close()
    # inart.allreduce (sum, no gain: scale 16) around a packet's payload
    ctx = inart.init(plan=os.environ["INART_PLAN"], timeout=20)
    for n in (1, 357, 358, 359, 717, 5000):
        g = torch.Generator().manual_seed(n * 31 + rank)
        x = torch.randn(n, generator=g) * 3
        got = x.clone()
        inart.allreduce(got)
        ref = x.clone()
        mag = x.abs()
        dist.all_reduce(ref)
        dist.all_reduce(mag)
        lim = world * 2.0 ** -(DEFAULT_SCALE + 1) + 2 * world * EPS * mag
        check("inart.allreduce of %d values within bound" % n,
              bool(((got - ref).abs() <= lim).all()),
              "max error %g" % float((got - ref).abs().max()))
    a = torch.arange(10, dtype=torch.float32) + rank
    inart.allreduce(a, average=True)
    want = torch.arange(10, dtype=torch.float32) + (world - 1) / 2.0
    check("inart.allreduce(average=True)", bool(((a - want).abs() <= 1e-4).all()), str(a))
    import numpy as np
    v = np.full(1000, 0.5 + rank, dtype=np.float32)
    inart.allreduce(v)
    check("inart.allreduce of a numpy array", abs(float(v[0]) - (0.5 * world +
                                                                 world * (world - 1) / 2)) < 1e-4,
          str(v[:3]))
    inart.finalize()


def pg_usable(name):
    t = torch.ones(3)
    done = []

    def go():
        dist.all_reduce(t)
        done.append(1)
    try:
        go()
    except Exception as e:
        check(name, False, "gloo all_reduce raised %s" % e)
        return
    check(name, bool((t == dist.get_world_size()).all()), str(t))


def stop_all(pids, sig):
    for p in pids:
        os.kill(p, sig)


def bad_mode(world, rank):
    plan = os.environ["INART_PLAN"]
    ctx = inart.init(plan=plan, timeout=10)
    # dtype and layout: refused here, nothing sent
    raises("float64 tensor refused", inart.InartDtypeError,
           lambda: inart.allreduce(torch.zeros(10, dtype=torch.float64)), ["float64"])
    raises("int32 tensor refused", TypeError,
           lambda: inart.allreduce(torch.zeros(10, dtype=torch.int32)), ["int32"])
    raises("non-contiguous tensor refused", inart.InartLayoutError,
           lambda: inart.allreduce(torch.zeros(8, 6).t()), ["not contiguous"])
    raises("a list refused", inart.InartDtypeError, lambda: inart.allreduce([1.0, 2.0]),
           ["float32"])
    nan = torch.zeros(100)
    nan[17] = float("nan")
    raises("NaN refused", inart.InartValueError, lambda: inart.allreduce(nan),
           ["value 17", "nan"])
    ok = torch.ones(500)
    inart.allreduce(ok)
    check("all-reduce after refused inputs", bool((ok == world).all()), str(ok[:3]))
    inart.finalize()
    # rank and world size against the plan and the process group
    raises("world size %d for a %d-worker job" % (world + 1, world), inart.InartRankError,
           lambda: inart.Context(os.environ["INART_TOPO"], os.environ["INART_JOBS"], plan,
                                 os.environ["INART_DEPLOY"], rank=rank, world_size=world + 1),
           ["world size %d" % (world + 1), "%d workers" % world])
    raises("world_size= disagrees with WORLD_SIZE", inart.InartRankError,
           lambda: inart.torch.State(plan=plan, world_size=world + 1),
           ["world_size= %d" % (world + 1), "WORLD_SIZE %d" % world])
    raises("rank beyond the job", inart.InartRankError,
           lambda: inart.Context(os.environ["INART_TOPO"], os.environ["INART_JOBS"], plan,
                                 os.environ["INART_DEPLOY"], rank=world + 2),
           ["rank %d" % (world + 2)])
    os.environ["RANK"] = str((rank + 1) % world)
    raises("RANK disagrees with the process group", inart.InartRankError,
           lambda: inart.torch.State(plan=plan), ["RANK", "process group"])
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world + 1)
    raises("WORLD_SIZE disagrees with the process group", inart.InartRankError,
           lambda: inart.torch.State(plan=plan), ["WORLD_SIZE"])
    os.environ["WORLD_SIZE"] = str(world)
    raises("another job's plan", inart.InartConfigError,
           lambda: inart.torch.State(plan=os.environ["TEST_OTHER_PLAN"]),
           ["not for job 'j0'", "'jx'"])
    raises("a job the jobs file does not have", inart.InartConfigError,
           lambda: inart.torch.State(plan=plan, job="nope"), ["job 'nope' is not in"])
    raises("an unreadable plan", inart.InartConfigError,
           lambda: inart.torch.State(plan=os.environ["TEST_BROKEN_PLAN"]), ["broken"])
    pg_usable("process group usable after the refused set-ups")

    # a PS that does not answer: the DDP hook's future fails, backward raises
    ps_pids = [int(p) for p in os.environ["TEST_PS_PIDS"].split(",")]
    sw_pid = int(os.environ["TEST_SWITCH_PID"])
    m = model(3)
    ddp = DDP(m)
    state = inart.torch.State(plan=plan, timeout=2.0)
    ddp.register_comm_hook(state, inart.torch.allreduce_hook)
    lossf = torch.nn.CrossEntropyLoss()
    x, y = batch(rank, 1)
    lossf(ddp(x), y).backward()   # one good step first
    dist.barrier()
    if rank == 0:
        stop_all(ps_pids, signal.SIGSTOP)
    dist.barrier()
    e = raises("PS stopped: backward raises the hook's timeout", RuntimeError,
               lambda: lossf(ddp(x), y).backward(),
               ["InartTimeoutError", "timed out after 2 s", "does not answer"], within=6.0)
    pg_usable("process group usable after the timeout")
    raises("state refuses buckets until resync", RuntimeError, lambda: _hook_once(state),
           ["InartStateError", "resync"])
    dist.barrier()
    if rank == 0:
        stop_all(ps_pids, signal.SIGCONT)
    state.resync()
    # the same DDP model trains on after the failed backward
    local = torch.autograd.grad(lossf(m(x), y), list(m.parameters()))
    ref, mag = gloo_reference(local, world)
    ddp.zero_grad()
    try:
        lossf(ddp(x), y).backward()
        s = min(b["scale"] for b in state.buckets.values())
        good = all(bool(((p.grad - r).abs() <= bound(s, mg, world)).all())
                   for p, r, mg in zip(m.parameters(), ref, mag))
        check("after resync the same DDP model reduces again, within bound", good)
    except Exception as ex:
        check("after resync the same DDP model reduces again, within bound", False, repr(ex))
    state.close()

    # a switch that does not answer (t1, between the workers' switch and the
    # PSs: the workers' own TCP does not cross it): inart.allreduce times out
    ctx = inart.init(plan=plan, timeout=1.5)
    t = torch.ones(2000)
    inart.allreduce(t, timeout=10)   # works before (and waits out core.RESTART_GAP_S)
    dist.barrier()
    if rank == 0:
        os.kill(sw_pid, signal.SIGSTOP)
    dist.barrier()
    raises("switch stopped: allreduce times out", inart.InartTimeoutError,
           lambda: inart.allreduce(torch.ones(2000)), ["timed out after 1.5 s", "switch"],
           within=2.5)
    pg_usable("process group usable after the switch timeout")
    dist.barrier()
    if rank == 0:
        os.kill(sw_pid, signal.SIGCONT)
    dist.barrier()
    t = torch.ones(2000)
    try:
        inart.allreduce(t)
        check("inart.allreduce works again once the switch answers", bool((t == world).all()),
              str(t[:3]))
    except Exception as ex:
        check("inart.allreduce works again once the switch answers", False, repr(ex))
    inart.finalize()


class _Bucket:
    """A stand-in GradBucket for calling the hook directly."""

    def __init__(self, t):
        self.t = t

    def index(self):
        return 0

    def buffer(self):
        return self.t


def _hook_once(state):
    fut = inart.torch.allreduce_hook(state, _Bucket(torch.ones(5)))
    return fut.wait()


def finish(rank, fn, *args):
    """fn(*args), an exception counted as a failure; then the tally, and
    the process leaves with os._exit (tearing down gloo's threads can hang,
    pytorch/pytorch#75097)."""
    try:
        fn(*args)
    except Exception:
        traceback.print_exc()
        FAILS.append("exception")
    print("rank %d: %d failed" % (rank, len(FAILS)), flush=True)
    sys.stdout.flush()
    os._exit(1 if FAILS else 0)


def main():
    mode = sys.argv[1]
    torch.set_num_threads(1)
    import datetime
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    world, rank = dist.get_world_size(), dist.get_rank()
    finish(rank, {"grads": grads_mode, "bad": bad_mode}[mode], world, rank)


if __name__ == "__main__":
    main()
