"""The "inart" torch.distributed backend (import inart.torch registers it).

    import inart.torch
    torch.distributed.init_process_group("inart")       # env://, tcp://, file://, store=
    ddp = DistributedDataParallel(model)                 # no hook: DDP's own all-reduce
    ...
    inart.torch.stats()                                  # calls and bytes per op and path

The process group is a C++ object (python/inart/_c10d.cpp, built on first
use with torch.utils.cpp_extension and cached, see `extension()`): DDP and
the optimizers get C++ Work objects with futures; collectives complete in
issue order, one at a time, on the process group's thread, which runs them
here (Executor.run), or, for gloo ops on tensors gloo takes as they are
(broadcast, all_gather, barrier, all_reduce off the inart path: dense,
contiguous, not bfloat16), on the gloo group from C++ without the GIL.
Two paths:

  inart  float tensors (float32; float16, bfloat16, float64 through a
         float32 copy) reduced with SUM or AVG: all_reduce (and the
         coalesced form), reduce_scatter and _reduce_scatter_base (an
         all-reduce of the whole input through the switches, of which each
         rank keeps its shard).  Summed as int32 fixed point by the plan's
         switches and PSs (inart.core.Context): within the bound of
         docs/python.md section 5; NaN/Inf raise InartValueError.
  gloo   everything else, over a gloo process group the backend makes on
         the same store: broadcast, all_gather (and _all_gather_base,
         coalesced), gather, scatter, reduce, all_to_all, send/recv,
         barrier, integer tensors (exact), PRODUCT/MIN/MAX/BAND/BOR/BXOR.
         bfloat16 (which gloo 1.13 refuses) is moved as float16 bits and
         reduced through float32; gloo's missing ops are composed.

`stats()` counts both paths per op, so nothing falls back unseen.

Which InArt job: the backend options (init_process_group(...,
pg_options=inart.torch.Options(...))) or the environment: INART_TOPO,
INART_JOBS, INART_PLAN, INART_DEPLOY (the files `inart ctl install` used),
INART_JOB (default: the only job), INART_WORKERS (optional: the worker id
of each rank, comma-separated, checked against the job's worker list),
INART_TIMEOUT (seconds, caps the process group's timeout for the InArt
path).  Rank r of the group is worker r of the job; the world size must be
the job's worker count.  At init every rank also checks, over the store,
that all ranks use the same job, plan and mapping.
"""
import datetime
import hashlib
import json
import os
import threading
import weakref

import torch
import torch.distributed as dist

from .core import Context, _read_json
from .errors import (InartConfigError, InartDtypeError, InartError, InartLayoutError,
                     InartRankError, InartStateError, InartValueError)

# c10d::ReduceOp::RedOpType
SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = range(9)
OP_NAMES = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"]
INA_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
F16_MAX = 65504.0

_ext = None
_ext_lock = threading.Lock()
_live = []          # (weakref of the process group, weakref of its executor): the
#                     C++ group owns the executor, so destroy_process_group frees both
_stats = {}         # op -> path -> {"calls", "bytes"}, over every process group
_stats_lock = threading.Lock()


class Options:
    """Backend options: init_process_group("inart", pg_options=Options(...)).

    Options(topo=None, jobs=None, plan=None, deploy=None, job=None,
            workers=None, timeout=None, ina=True)

    Unset fields come from INART_TOPO, INART_JOBS, INART_PLAN,
    INART_DEPLOY, INART_JOB, INART_WORKERS, INART_TIMEOUT.  `workers`: the
    worker id of each rank (a list), checked against the job.  `timeout`
    (seconds): caps the process group's timeout for InArt all-reduces.
    `ina=False`: no InArt job, every op on the gloo path (counted as such):
    for a second group (new_group) that has no job of its own."""

    def __init__(self, topo=None, jobs=None, plan=None, deploy=None, job=None, workers=None,
                 timeout=None, ina=True):
        env = os.environ.get
        self.topo = topo or env("INART_TOPO")
        self.jobs = jobs or env("INART_JOBS")
        self.plan = plan or env("INART_PLAN")
        self.deploy = deploy or env("INART_DEPLOY")
        self.job = job or env("INART_JOB") or None
        if workers is None and env("INART_WORKERS"):
            workers = [w.strip() for w in env("INART_WORKERS").split(",") if w.strip()]
        self.workers = list(workers) if workers is not None else None
        if timeout is None and env("INART_TIMEOUT"):
            timeout = float(env("INART_TIMEOUT"))
        self.timeout = timeout
        self.ina = bool(ina)


def extension():
    """The compiled C++ half (python/inart/_c10d.cpp), built once with
    torch.utils.cpp_extension into INART_TORCH_EXT_DIR, else the checkout's
    build/torch_ext (INART_BUILD_DIR/torch_ext), else
    ~/.cache/inart/torch_ext; later imports load the cached build (torch
    rebuilds only when the source or flags change).  Needs g++ and Debian's
    libtorch-dev and pybind11-dev (scripts/deps.sh)."""
    global _ext
    with _ext_lock:
        if _ext is not None:
            return _ext
        from torch.utils import cpp_extension
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_c10d.cpp")
        d = _ext_dir()
        os.makedirs(d, exist_ok=True)
        try:
            with _build_lock(d):
                _ext = cpp_extension.load("inart_c10d", [src], build_directory=d,
                                          extra_cflags=["-O2"], verbose=False)
        except Exception as e:
            raise InartConfigError(
                "cannot build the inart backend's C++ half (%s) in %s: %s; it needs g++ and "
                "Debian's libtorch-dev and pybind11-dev (scripts/deps.sh)"
                % (src, d, str(e)[-1500:])) from None
        return _ext


class _build_lock:
    """Serializes the processes that build or load the extension in `d`
    with an fcntl lock on d/inart.lock, which the kernel releases when its
    holder dies.  torch's own build lock (d/lock, a file that exists while
    a build runs, torch.utils.file_baton) is left behind by a process
    killed mid-build; the next processes then wait for it forever (seen:
    four ranks asleep for 10 minutes), and once it is removed they load a
    library that was never built.  Under this lock no other process of
    ours is building, so a d/lock found is such a leftover and goes."""

    def __init__(self, d):
        self.path = os.path.join(d, "inart.lock")
        self.f = None

    def __enter__(self):
        import fcntl
        self.f = open(self.path, "a")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        try:
            os.unlink(os.path.join(os.path.dirname(self.path), "lock"))
        except FileNotFoundError:
            pass
        return self

    def __exit__(self, *exc):
        self.f.close()   # releases the lock


def _ext_dir():
    if os.environ.get("INART_TORCH_EXT_DIR"):
        return os.environ["INART_TORCH_EXT_DIR"]
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.environ.get("INART_BUILD_DIR") or os.path.join(here, "..", "..", "build")
    if os.path.isdir(build) and os.access(build, os.W_OK):
        return os.path.normpath(os.path.join(build, "torch_ext"))
    return os.path.join(os.path.expanduser("~"), ".cache", "inart", "torch_ext")


def stats(reset=False):
    """Per op, per path ("inart" or "gloo"): {"calls": n, "bytes": n}, over
    every inart process group of this process since import (or reset)."""
    with _stats_lock:
        out = {op: {p: dict(v) for p, v in paths.items()} for op, paths in _stats.items()}
        if reset:
            _stats.clear()
    if _ext is not None:   # the ops the C++ half ran on gloo itself
        for op, (calls, nbytes) in _ext.native_stats(reset).items():
            s = out.setdefault(op, {}).setdefault("gloo", {"calls": 0, "bytes": 0})
            s["calls"] += calls
            s["bytes"] += nbytes
    return out


def context_stats():
    """The InArt worker counters (inart_ctx_stats, a dict) of each live
    inart process group of this process that has a job, by group name."""
    out = {}
    for _, exref in _live:
        ex = exref()
        if ex is not None and ex.ctx is not None and not ex.ctx.closed:
            out[ex.group_name or "default"] = ex.ctx.stats()
    return out


def _count(op, path, tensors):
    n = sum(t.numel() * t.element_size() for t in tensors)
    with _stats_lock:
        s = _stats.setdefault(op, {}).setdefault(path, {"calls": 0, "bytes": 0})
        s["calls"] += 1
        s["bytes"] += n


def _bytes_of(x):
    return x.numel() * x.element_size()


def _check_tensors(op, tensors):
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise InartDtypeError("inart %s: expected tensors, got %s" % (op, type(t).__name__))
        if t.device.type != "cpu":
            raise InartLayoutError("inart %s: tensor on %s: this backend reduces host memory "
                                   "(torch here is CPU-only); move it with .cpu()"
                                   % (op, t.device))
        if t.is_sparse:
            raise InartLayoutError("inart %s: sparse tensors are not supported" % op)


class Executor:
    """Runs one process group's collectives (called by the C++ queue thread,
    one at a time, in issue order)."""

    def __init__(self, store, rank, size, timeout, opts, group_name="", global_ranks=None):
        self.rank, self.size = rank, size
        self.timeout = timeout if isinstance(timeout, datetime.timedelta) else \
            datetime.timedelta(seconds=float(timeout))
        self.opts = opts
        self.group_name = group_name
        self.closed = False
        self.ctx = None
        self.failed = None      # the message of the InArt all-reduce that failed (resync())
        # the local checks (files, mapping, world size) first: a rank that
        # fails them raises before any other rank waits for it
        if opts.ina:
            self.ctx = self._context()
        try:
            self.sw = dist.ProcessGroupGloo(dist.PrefixStore("inart-sw/", store), rank, size,
                                            self.timeout)
            if self.ctx is not None:
                self._agree(store)
        except BaseException:
            self.close()
            raise

    # -- set-up -------------------------------------------------------------------------
    def _context(self):
        o = self.opts
        missing = [n for n, v in (("topology (INART_TOPO)", o.topo), ("jobs (INART_JOBS)", o.jobs),
                                  ("plan (INART_PLAN)", o.plan)) if not v]
        if missing:
            raise InartConfigError(
                "backend 'inart': no %s file: set the environment variables or pass "
                "pg_options=inart.torch.Options(topo=, jobs=, plan=, deploy=, job=)"
                % ", ".join(missing))
        rank = self.rank
        job = o.job
        if job is None:
            js = _read_json(o.jobs)
            ids = [j.get("id") for j in (js or {}).get("jobs", []) if isinstance(j, dict)]
            if len(ids) == 1:
                job = ids[0]
        if o.workers is not None:
            job_workers = self._job_workers(job)
            if len(o.workers) != self.size:
                raise InartRankError(
                    "backend 'inart': the rank-to-worker mapping (INART_WORKERS / "
                    "Options.workers) names %d workers (%s) but the process group has %d ranks"
                    % (len(o.workers), ",".join(o.workers), self.size))
            me = o.workers[rank]
            if me not in job_workers:
                raise InartRankError(
                    "backend 'inart': rank %d maps to worker '%s' (INART_WORKERS) but job "
                    "'%s' in %s has workers %s" % (rank, me, job, o.jobs, ", ".join(job_workers)))
            rank = job_workers.index(me)
        tmo = self.timeout.total_seconds()
        if o.timeout is not None:
            tmo = min(tmo, float(o.timeout))
        self.ina_timeout = tmo
        try:
            return Context(o.topo, o.jobs, o.plan, deploy=o.deploy, job=job, rank=rank,
                           world_size=self.size, timeout=tmo)
        except InartRankError as e:
            e.args = ("backend 'inart' (process group rank %d of %d): %s"
                      % (self.rank, self.size, e.args[0]),)
            raise

    def _job_workers(self, job):
        js = _read_json(self.opts.jobs) or {}
        for j in js.get("jobs", []):
            if isinstance(j, dict) and j.get("id") == job:
                return list(j.get("workers", []))
        raise InartConfigError("backend 'inart': job '%s' is not in %s" % (job, self.opts.jobs))

    def _agree(self, store):
        """Every rank publishes its job, plan digest, worker and world size
        on the store and checks the others' against its own."""
        ctx = self.ctx
        try:
            with open(self.opts.plan, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:16]
        except OSError:
            digest = "?"
        mine = dict(job=ctx.job, plan=digest, worker=ctx.info.workers[ctx.rank]
                    if ctx.info.workers else "?", world=self.size, inart_rank=ctx.rank)
        store.set("inart-agree/%d" % self.rank, json.dumps(mine))
        workers = {}
        for r in range(self.size):
            other = json.loads(store.get("inart-agree/%d" % r).decode())
            for k in ("job", "plan", "world"):
                if other[k] != mine[k]:
                    raise InartConfigError(
                        "backend 'inart': rank %d uses %s %r but rank %d uses %r (plan %s): "
                        "every rank must use the same job and plan" % (
                            self.rank, k, mine[k], r, other[k], self.opts.plan))
            if other["worker"] in workers:
                raise InartRankError(
                    "backend 'inart': ranks %d and %d both map to worker '%s' of job '%s'"
                    % (workers[other["worker"]], r, other["worker"], ctx.job))
            workers[other["worker"]] = r

    def close(self):
        self.closed = True
        if self.ctx is not None:
            self.ctx.close()

    def resync(self, barrier):
        """Restart the InArt context together with the other ranks (every
        rank calls it; `barrier()` waits for all): close, barrier, create
        again (the PSs take the job as started again after the restart gap,
        docs/dataplane.md, PS rule 5), barrier."""
        if self.ctx is None:
            self.failed = None
            return
        self.ctx.close()
        barrier()
        self.ctx = self._context()
        barrier()
        self.failed = None

    # -- dispatch --------------------------------------------------------------------------
    def run(self, op, *args):
        if self.closed:
            raise InartStateError("inart %s: the process group was destroyed" % op)
        return getattr(self, "op_" + op)(*args)

    def _wait(self, work, ms):
        work.wait(datetime.timedelta(milliseconds=max(1, int(ms))))

    def _ina_ok(self, op, dtypes):
        return (self.ctx is not None and op in (SUM, AVG) and all(d in INA_DTYPES
                                                                    for d in dtypes))

    def _reduce_op(self, name, op):
        if op == PREMUL_SUM or not 0 <= op < len(OP_NAMES):
            raise InartConfigError("inart %s: reduce op %s is not supported (SUM, AVG, "
                                   "PRODUCT, MIN, MAX, BAND, BOR, BXOR are)"
                                   % (name, OP_NAMES[op] if 0 <= op < len(OP_NAMES) else op))
        return op

    def _ina_sum(self, flat, op, key):
        """Sum (AVG: average) the float tensor `flat` in place through InArt,
        in pieces of at most the job's gradient size, through a float32
        contiguous copy when it is not one already."""
        work = flat if flat.dtype == torch.float32 and flat.is_contiguous() else \
            flat.detach().to(torch.float32).contiguous()
        v = work.view(-1)
        step = self.ctx.info.max_values or v.numel() or 1
        if self.failed is not None:
            raise InartStateError(
                "inart %s: refused: an earlier InArt all-reduce of this process group failed "
                "(%s); the ranks may be at different steps and a PS may hold that step's "
                "partial sum, so a new all-reduce could return a wrong sum: every rank must "
                "call inart.torch.resync(group) (or destroy_process_group() and init again)"
                % (key, self.failed[:300]))
        try:
            for i in range(0, v.numel(), step):
                self.ctx.allreduce(v[i:i + step], average=(op == AVG), key=key)
        except (InartValueError, InartDtypeError, InartLayoutError):
            raise   # refused before anything was sent: the steps are unchanged
        except InartError as e:
            self.failed = "%s: %s" % (type(e).__name__, e)
            raise
        if work is not flat:
            if flat.dtype == torch.float16 and v.numel():
                big = float(v.abs().max())
                if big > F16_MAX:
                    raise InartValueError(
                        "inart: the sum of a float16 tensor of %d values reaches %g, beyond "
                        "float16's largest value %g: the tensor is left unchanged (sum it "
                        "as float32)" % (v.numel(), big, F16_MAX))
            flat.detach().copy_(work)

    # gloo's all-reduce with what gloo 1.13 lacks: bfloat16 through float32, AVG as SUM / n
    def _sw_allreduce(self, tensors, op, ms):
        if op == AVG and any(not t.is_floating_point() for t in tensors):
            raise InartDtypeError("inart allreduce: AVG of integer tensors (%s) is not defined; "
                                  "use SUM" % ", ".join(str(t.dtype) for t in tensors))
        stage = [t if (t.dtype != torch.bfloat16 and t.is_contiguous()) else
                 t.detach().to(torch.float32 if t.dtype == torch.bfloat16 else t.dtype)
                 .contiguous() for t in tensors]
        o = dist.AllreduceOptions()
        o.reduceOp = dist.ReduceOp.SUM if op == AVG else _torch_op(op)
        self._wait(self.sw.allreduce(stage, o), ms)
        for t, s in zip(tensors, stage):
            if op == AVG:
                s.detach().div_(self.size)
            if s is not t:
                t.detach().copy_(s)

    # -- the ops (arguments as _c10d.cpp passes them) --------------------------------------
    def op_allreduce(self, tensors, op, ms, name="allreduce"):
        self._reduce_op(name, op)
        _check_tensors(name, tensors)
        if self._ina_ok(op, [t.dtype for t in tensors]):
            for t in tensors:
                self._ina_sum(t, op, key=name)
            _count(name, "inart", tensors)
        else:
            # coalesced: tensors of several sizes, one gloo all-reduce each
            for part in ([tensors] if name == "allreduce" else [[t] for t in tensors]):
                self._sw_allreduce(part, op, ms)
            _count(name, "gloo", tensors)

    def op_allreduce_coalesced(self, tensors, op, ms):
        self.op_allreduce(tensors, op, ms, name="allreduce_coalesced")

    def op_reduce_scatter(self, out, ins, op, ms, name="reduce_scatter"):
        self._reduce_op(name, op)
        if len(out) != 1 or len(ins) != 1 or len(ins[0]) != self.size:
            raise InartConfigError("inart %s: one output and a list of %d inputs expected"
                                   % (name, self.size))
        _check_tensors(name, out + ins[0])
        pieces = ins[0]
        flat = torch.cat([p.reshape(-1) for p in pieces])
        if self._ina_ok(op, [flat.dtype]):
            self._ina_sum(flat, op, key=name)
            path = "inart"
        else:
            self._sw_allreduce([flat], op, ms)
            path = "gloo"
        off = sum(p.numel() for p in pieces[:self.rank])
        out[0].copy_(flat[off:off + pieces[self.rank].numel()].view_as(out[0]))
        _count(name, path, [flat])

    def op__reduce_scatter_base(self, out, inp, op, ms):
        if inp.numel() != out.numel() * self.size:
            raise InartConfigError("inart _reduce_scatter_base: input of %d values for an "
                                   "output of %d and %d ranks" % (inp.numel(), out.numel(),
                                                                  self.size))
        pieces = list(inp.reshape(-1).split(out.numel()))
        self.op_reduce_scatter([out], [pieces], op, ms, name="_reduce_scatter_base")

    def op_broadcast(self, tensors, root, root_tensor, ms):
        _check_tensors("broadcast", tensors)
        o = dist.BroadcastOptions()
        o.rootRank, o.rootTensor = root, root_tensor
        stage = [_movable(t) for t in tensors]
        self._wait(self.sw.broadcast(stage, o), ms)
        _back(tensors, stage)
        _count("broadcast", "gloo", tensors)

    def op_reduce(self, tensors, op, root, root_tensor, ms):
        self._reduce_op("reduce", op)
        _check_tensors("reduce", tensors)
        if op == AVG:
            raise InartConfigError("inart reduce: AVG is not supported (gloo has no AVG "
                                   "reduce); use SUM")
        o = dist.ReduceOptions()
        o.reduceOp, o.rootRank, o.rootTensor = _torch_op(op), root, root_tensor
        stage = [t.detach().float().contiguous() if t.dtype == torch.bfloat16 or
                 not t.is_contiguous() else t for t in tensors]
        self._wait(self.sw.reduce(stage, o), ms)
        _back(tensors, stage)
        _count("reduce", "gloo", tensors)

    def op_allgather(self, outs, ins, ms, name="allgather"):
        _check_tensors(name, ins + [t for l in outs for t in l])
        si = [_movable(t) for t in ins]
        so = [[_movable(t, copy=False) for t in l] for l in outs]
        w = (self.sw.allgather_coalesced if name == "allgather_coalesced" else
             self.sw.allgather)(so, si)
        self._wait(w, ms)
        for l, s in zip(outs, so):
            _back(l, s)
        _count(name, "gloo", ins)

    def op_allgather_coalesced(self, outs, ins, ms):
        self.op_allgather(outs, ins, ms, name="allgather_coalesced")

    def op__allgather_base(self, out, inp, ms):
        _check_tensors("_allgather_base", [out, inp])
        if out.numel() != inp.numel() * self.size:
            raise InartConfigError("inart _allgather_base: output of %d values for an input "
                                   "of %d and %d ranks" % (out.numel(), inp.numel(), self.size))
        flat = out if out.is_contiguous() else torch.empty_like(out, memory_format=torch.
                                                                contiguous_format)
        views = [v.view(inp.shape) for v in flat.view(-1).split(inp.numel())]
        self.op_allgather([views], [inp], ms, name="_allgather_base")
        if flat is not out:
            out.copy_(flat)

    def op_gather(self, outs, ins, root, ms):
        _check_tensors("gather", ins + [t for l in outs for t in l])
        o = dist.GatherOptions()
        o.rootRank = root
        si = [_movable(t) for t in ins]
        so = [[_movable(t, copy=False) for t in l] for l in outs]
        self._wait(self.sw.gather(so, si, o), ms)
        for l, s in zip(outs, so):
            _back(l, s)
        _count("gather", "gloo", ins)

    def op_scatter(self, outs, ins, root, ms):
        _check_tensors("scatter", outs + [t for l in ins for t in l])
        o = dist.ScatterOptions()
        o.rootRank = root
        so = [_movable(t, copy=False) for t in outs]
        si = [[_movable(t) for t in l] for l in ins]
        self._wait(self.sw.scatter(so, si, o), ms)
        _back(outs, so)
        _count("scatter", "gloo", outs)

    def op_alltoall_base(self, out, inp, out_splits, in_splits, ms, name="alltoall_base"):
        _check_tensors(name, [out, inp])
        si, so = _movable(inp), _movable(out, copy=False)
        self._wait(self.sw.alltoall_base(so, si, list(out_splits), list(in_splits),
                                         dist.AllToAllOptions()), ms)
        _back([out], [so])
        _count(name, "gloo", [inp])

    def op_alltoall(self, outs, ins, ms):
        # gloo 1.13 has alltoall_base only: one flat exchange of every piece
        _check_tensors("alltoall", outs + ins)
        if len({t.dtype for t in outs + ins}) > 1:
            raise InartDtypeError("inart alltoall: tensors of several dtypes")
        inp = torch.cat([t.reshape(-1) for t in ins])
        out = torch.empty(sum(t.numel() for t in outs), dtype=inp.dtype)
        self.op_alltoall_base(out, inp, [t.numel() for t in outs], [t.numel() for t in ins], ms,
                              name="alltoall")
        off = 0
        for t in outs:
            t.copy_(out[off:off + t.numel()].view_as(t))
            off += t.numel()

    def op_send(self, tensors, dst, tag, ms):
        _check_tensors("send", tensors)
        stage = [_movable(t) for t in tensors]
        self._wait(self.sw.send(stage, dst, tag), ms)
        _count("send", "gloo", tensors)

    def op_recv(self, tensors, src, tag, ms):
        _check_tensors("recv", tensors)
        stage = [_movable(t, copy=False) for t in tensors]
        w = self.sw.recv(stage, src, tag)
        self._wait(w, ms)
        _back(tensors, stage)
        _count("recv", "gloo", tensors)
        return src

    def op_recv_anysource(self, tensors, tag, ms):
        _check_tensors("recv", tensors)
        stage = [_movable(t, copy=False) for t in tensors]
        w = self.sw.recv_anysource(stage, tag)
        self._wait(w, ms)
        _back(tensors, stage)
        _count("recv", "gloo", tensors)
        return w._source_rank()

    def op_barrier(self, ms):
        self._wait(self.sw.barrier(), ms)
        _count("barrier", "gloo", [])


def _torch_op(op):
    return {SUM: dist.ReduceOp.SUM, PRODUCT: dist.ReduceOp.PRODUCT, MIN: dist.ReduceOp.MIN,
            MAX: dist.ReduceOp.MAX, BAND: dist.ReduceOp.BAND, BOR: dist.ReduceOp.BOR,
            BXOR: dist.ReduceOp.BXOR}[op]


def _movable(t, copy=True):
    """A tensor gloo can move the bytes of: bfloat16 as float16 bits (gloo
    1.13 refuses bfloat16; a copy moves the bits unchanged), a contiguous
    copy of a non-contiguous tensor (`copy`: with its values)."""
    if t.is_contiguous() and t.dtype != torch.bfloat16:
        return t
    c = t.contiguous() if copy else torch.empty_like(t, memory_format=torch.contiguous_format)
    return c.view(torch.float16) if c.dtype == torch.bfloat16 else c


def _back(tensors, staged):
    for t, s in zip(tensors, staged):
        if s is t:
            continue
        if t.dtype == torch.bfloat16 and s.dtype == torch.float16:
            s = s.view(torch.bfloat16)
        if s.data_ptr() != t.data_ptr():
            t.detach().copy_(s)


def _create(dist_opts, pg_options):
    """The creator registered with torch.distributed.Backend (extended API)."""
    opts = pg_options if isinstance(pg_options, Options) else Options()
    if pg_options is not None and not isinstance(pg_options, Options):
        raise InartConfigError("backend 'inart': pg_options must be inart.torch.Options, not %s"
                               % type(pg_options).__name__)
    store, rank, size = dist_opts.store, dist_opts.group_rank, dist_opts.group_size
    timeout = dist_opts.timeout
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(seconds=float(timeout))
    _retire(opts)
    ext = extension()
    ex = Executor(store, rank, size, timeout, opts, dist_opts.group_id,
                  list(dist_opts.global_ranks_in_group))
    pg = ext.ProcessGroupInart(rank, size, ex, timeout.total_seconds(), ex.sw,
                               ex.ctx is not None)
    _live.append((weakref.ref(pg), weakref.ref(ex)))
    return pg


def _retire(opts):
    """Close the InArt contexts of process groups torch no longer knows
    (destroy_process_group); refuse a second live group on the same job."""
    from torch.distributed import distributed_c10d as c10d
    keep = []
    for ref, exref in _live:
        pg, ex = ref(), exref()
        if pg is None or ex is None or pg not in c10d._pg_map:
            if pg is not None:
                pg.shutdown()
            if ex is not None:
                ex.close()
            continue
        keep.append((ref, exref))
        if opts.ina and ex.ctx is not None and ex.ctx.job == (opts.job or ex.ctx.job) and \
                ex.opts.plan == opts.plan:
            raise InartConfigError(
                "backend 'inart': job '%s' is already used by process group '%s' of this "
                "process: give a new group its own job (pg_options=inart.torch.Options("
                "job=...)) or Options(ina=False) for the gloo path only"
                % (ex.ctx.job, ex.group_name or "default"))
    _live[:] = keep


def resync(group=None):
    """After an InArt collective of `group` (default: the default group)
    failed (a timeout: a PS or switch did not answer), the group refuses
    InArt collectives (InartStateError) until every rank calls
    resync(group): it waits for the group's queued collectives, then
    restarts every rank's InArt context together (about 2 s: the restart
    gap).  The nodes must answer again for the next all-reduce to succeed.
    A no-op on a group that did not fail but still collective."""
    from torch.distributed import distributed_c10d as c10d
    pg = group if group is not None else c10d._get_default_group()
    ex = None
    for ref, exref in _live:
        if ref() is pg:
            ex = exref()
    if ex is None:
        raise InartStateError("inart.torch.resync: %r is not a live inart process group" % (pg,))
    dist.barrier(group=group)   # in issue order: every collective before it is done
    ex.resync(lambda: dist.barrier(group=group))


def shutdown_all():
    """Shut every inart process group of this process down (at exit)."""
    for ref, exref in list(_live):
        pg, ex = ref(), exref()
        if pg is not None:
            pg.shutdown()
        if ex is not None:
            ex.close()
    _live.clear()


_registered = False


def register():
    """Register "inart" with torch.distributed (idempotent)."""
    global _registered
    if _registered or "INART" in dist.Backend._plugins:
        _registered = True
        return
    dist.Backend.register_backend("inart", _create, extended_api=True)
    import atexit
    atexit.register(shutdown_all)
    _registered = True


__all__ = ["Options", "register", "stats", "resync", "context_stats", "extension",
           "shutdown_all", "InartError"]
