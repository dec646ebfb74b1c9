#!/usr/bin/python3
"""fsdp_digits: train the MLP of ddp_digits.py on scikit-learn's digits with
FullyShardedDataParallel over the torch.distributed backend "inart".

    torchrun --nproc_per_node N examples/fsdp_digits.py [--backend inart|gloo|nccl]
             [--epochs 8] [--hidden 256] [--lr 0.05] [--batch 32] [--seed 1]
    /usr/bin/python3 examples/fsdp_digits.py --check   # can FSDP run here? (exit 0/1)

FSDP needs CUDA in torch 1.13 ("FSDP does not support CPU only execution"),
and Debian's torch 1.13 build is CPU-only; its FSDP import also fails on
Python 3.11 (a mutable dataclass default in torch.distributed._shard).  So
on this machine the script does not train: it checks first and exits 1 with
one message saying why and pointing to the sharded path that runs here,
DDP + ZeroRedundancyOptimizer (examples/ddp_digits.py --backends
backend,gloo --zero, or --curves PNG).

Where torch has CUDA, each rank (RANK, WORLD_SIZE, LOCAL_RANK set by
torchrun; "inart" also needs its job: INART_PLAN/INART_JOB or the other
variables of docs/python.md, section 9) trains FSDP(model,
device_id=LOCAL_RANK) on its shard of the data and prints the test accuracy
per epoch and, with "inart", inart.torch.stats().  The "inart" backend sums
host memory only (CUDA tensors raise InartLayoutError), so this script
stages FSDP's collectives through host memory: it wraps the functions
FSDP 1.13 calls (torch.distributed._all_gather_base, _reduce_scatter_base,
all_reduce, broadcast) to copy CUDA tensors to the host, run the
collective there, and copy the result back.  That path has not been run on
this CPU-only machine.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))   # the checkout's package
sys.path.insert(0, HERE)                                   # ddp_digits' data and model


def why_not():
    """The reasons FSDP cannot run in this process's torch, [] if it can."""
    import torch
    reasons = []
    if not torch.cuda.is_available():
        reasons.append("torch %s has no CUDA (torch.cuda.is_available() is False) and its "
                       "FSDP refuses CPU-only execution (\"FSDP does not support CPU only "
                       "execution\")" % torch.__version__)
    try:
        from torch.distributed.fsdp import FullyShardedDataParallel  # noqa: F401
    except Exception as e:   # 1.13 on Python 3.11: ValueError from a dataclass
        reasons.append("its FSDP import fails on Python %d.%d (%s: %s)"
                       % (sys.version_info[0], sys.version_info[1], type(e).__name__,
                          str(e).split("\n")[0][:160]))
    return reasons


def refusal(reasons):
    return ("fsdp_digits: FSDP cannot run here: %s.  The sharded path that runs on this "
            "build is DDP + ZeroRedundancyOptimizer: sudo /usr/bin/python3 "
            "examples/ddp_digits.py --backends backend,gloo --zero (or --curves PNG), "
            "see docs/python.md." % "; ".join(reasons))


def stage_through_host():
    """Wrap the collectives FSDP calls so CUDA tensors go through host
    copies (the "inart" backend reduces host memory only).  Synchronous:
    FSDP 1.13 calls these without async_op."""
    import torch.distributed as dist

    def host(t):
        return t if t.device.type == "cpu" else t.detach().cpu()

    def back(dst, src):
        if dst is not src:
            dst.copy_(src)

    ag, rs, ar, bc = dist._all_gather_base, dist._reduce_scatter_base, dist.all_reduce, \
        dist.broadcast

    def all_gather_base(output, input, group=None, async_op=False):
        o = host(output)
        ag(o, host(input), group=group)
        back(output, o)

    def reduce_scatter_base(output, input, op=dist.ReduceOp.SUM, group=None, async_op=False):
        o = host(output)
        rs(o, host(input), op=op, group=group)
        back(output, o)

    def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        t = host(tensor)
        ar(t, op=op, group=group)
        back(tensor, t)

    def broadcast(tensor, src, group=None, async_op=False):
        t = host(tensor)
        bc(t, src, group=group)
        back(tensor, t)

    dist._all_gather_base, dist._reduce_scatter_base = all_gather_base, reduce_scatter_base
    dist.all_reduce, dist.broadcast = all_reduce, broadcast


def train(args):
    import datetime
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from ddp_digits import load_data, make_model

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    if args.backend == "inart":
        import inart.torch  # noqa: F401  (registers the backend)
        stage_through_host()
    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    xtr, xte, ytr, yte = (torch.from_numpy(a) for a in load_data(args.seed))
    model = FSDP(make_model(args.hidden, args.seed), device_id=local)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    mine = torch.arange(rank, len(xtr), world)
    dev = torch.device("cuda", local)
    for epoch in range(args.epochs):
        g = torch.Generator().manual_seed(args.seed + epoch)
        order = mine[torch.randperm(len(mine), generator=g)]
        model.train()
        for i in range(0, len(order), args.batch):
            b = order[i:i + args.batch]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xtr[b].to(dev)), ytr[b].to(dev))
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(xte.to(dev)).argmax(1).cpu() == yte).float().mean().item() * 100
        if rank == 0:
            print("epoch %d: loss %.4f, test accuracy %.2f%%" % (epoch + 1, loss.item(), acc))
    if rank == 0 and args.backend == "inart":
        import inart.torch
        print("inart.torch.stats():", inart.torch.stats())
    dist.destroy_process_group()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="inart", help="inart (default), gloo or nccl")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check", action="store_true",
                    help="only check that FSDP can run here (exit 0) or say why not (exit 1)")
    args = ap.parse_args()
    reasons = why_not()
    if reasons:
        print(refusal(reasons), file=sys.stderr)
        return 1
    if args.check:
        print("fsdp_digits: FSDP can run here (torch has CUDA and FSDP imports)")
        return 0
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
