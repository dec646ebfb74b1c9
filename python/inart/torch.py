"""PyTorch over InArt: the "inart" torch.distributed backend and a DDP comm hook.

    import inart.torch
    torch.distributed.init_process_group("inart")   # the backend (inart/backend.py)

or, beside a gloo process group, the hook:

    import inart.torch
    state = inart.torch.State("topo.json", "jobs.json", "plan.json",
                              deploy="deploy.json", job="j0")
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    ddp.register_comm_hook(state, inart.torch.allreduce_hook)

The state holds one InArt worker context (inart.core.Context) of this
process: rank and world size come from RANK / WORLD_SIZE (torchrun sets
them; LOCAL_RANK is only reported) and are checked against the job in the
plan and against the process group, if one is initialized.

allreduce_hook(state, bucket) returns a torch.futures.Future completed by
the state's communication thread: the buckets are all-reduced one after the
other in the order DDP hands them over (the same on every rank), while
backward goes on (the C call releases the GIL); the backward's last bucket,
if nothing is queued, is reduced at once in DDP's thread.  The result is the
average (the sum divided by the world size), as DDP's own hook returns.
Ranks need not start a backward's all-reduces together: a worker waits for
the results of peers that start later without sending anything again
(docs/python.md); State(sync=True), on every rank alike, adds a one-value
all-reduce before the first bucket of each backward that lines the ranks
up.  Buckets may have any size; float32 buckets are reduced in place,
other floating dtypes (float64, float16, bfloat16) through a float32 copy,
others refused with InartDtypeError.  Each bucket index keeps its own power-of-two gain, so
small gradients are summed at a finer fixed-point scale (docs/python.md).

Errors: a failed all-reduce fails the bucket's future with the exception
(DDP re-raises it from backward as a RuntimeError whose message holds the
class name and the message, e.g. "InartTimeoutError: job 'j0' rank 1 ...
timed out after 10 s; no result arrived at all: the PS or a switch ..."),
fails the buckets
still queued at once, and marks the state failed: later buckets raise
InartStateError until every rank calls `state.resync()`, a collective over
the process group that restarts the InArt contexts together.  The process
group itself is never used by the hook and stays usable.
"""
import os
import queue
import threading
import time

import torch
import torch.distributed as dist

from .backend import Options, register, resync, stats
from .core import Context, _env_int
from .errors import (InartAddressError, InartDtypeError, InartError, InartRankError,
                     InartStateError)

__all__ = ["State", "allreduce_hook", "Options", "stats", "resync"]

register()   # torch.distributed.init_process_group("inart") (inart/backend.py)


class State:
    """State of the InArt DDP comm hook (one per process).

    State(topo=None, jobs=None, plan=None, deploy=None, job=None, rank=None,
          world_size=None, timeout=10.0, process_group=None, gain=True)

    Files default to INART_TOPO, INART_JOBS, INART_PLAN, INART_DEPLOY; job
    to INART_JOB (or the only job); rank and world_size to RANK and
    WORLD_SIZE, else to the process group's.  `timeout`: seconds one bucket
    may take.  `gain`: adaptive power-of-two gain per bucket.  `sync`
    (default off): start every backward's all-reduces with a one-value
    all-reduce (a barrier).  It costs a round trip per backward; without
    it, ranks that start further apart than a switch's flush timeout (10
    ms by default) have their first chunks aggregated as partial ones
    (exact, slower), nearer starts cost nothing (docs/python.md).
    """

    def __init__(self, topo=None, jobs=None, plan=None, deploy=None, job=None, rank=None,
                 world_size=None, timeout=10.0, process_group=None, gain=True, sync=False):
        env = os.environ.get
        self.files = dict(topo=topo or env("INART_TOPO"), jobs=jobs or env("INART_JOBS"),
                          plan=plan or env("INART_PLAN"), deploy=deploy or env("INART_DEPLOY"))
        missing = [k for k in ("topo", "jobs", "plan") if not self.files[k]]
        if missing:
            raise InartRankError("inart.torch.State: no %s file (argument or INART_%s)"
                                 % (", ".join(missing), missing[0].upper()))
        self.group = process_group
        rank, world_size = self._ranks(rank, world_size)
        self.local_rank = _env_int("LOCAL_RANK")
        self.job, self.rank, self.world_size = job, rank, world_size
        self.timeout, self.use_gain, self.sync = float(timeout), bool(gain), bool(sync)
        self._synced = None       # the iteration record the last start barrier was for
        self._one = torch.zeros(1)
        self.ctx = self._context()
        self.world_size = self.ctx.world_size
        self.failed = None
        self.iterations = []      # per backward, sums over its buckets: comm_s (hook entry
        #                           to averaged result) = wait_s (hook entry to the C call,
        #                           barrier excluded) + barrier_s (the start barrier, if
        #                           sync) + c_s (the C all-reduce) + post_s (C return to
        #                           result: gain, average); buckets, values; first, last
        #                           (time.monotonic() of the first hand-over, last result)
        self._cur = None
        self.buckets = {}         # bucket index -> the last all-reduce's values, seconds,
        #                           gain, scale (fixed-point bits) and rescales
        self._q = queue.Queue()
        self._busy = 0            # buckets queued or being reduced by the thread
        self._busy_lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="inart-comm", daemon=True)
        self._thread.start()

    def _ranks(self, rank, world_size):
        """rank and world size from the arguments, RANK/WORLD_SIZE and the
        process group, which must all agree."""
        env_rank, env_world = _env_int("RANK"), _env_int("WORLD_SIZE")
        pg_rank = pg_world = None
        if dist.is_available() and dist.is_initialized():
            pg_rank, pg_world = dist.get_rank(self.group), dist.get_world_size(self.group)
        srcs = [("rank=", rank, "world_size=", world_size),
                ("RANK", env_rank, "WORLD_SIZE", env_world),
                ("the process group's rank", pg_rank, "the process group's size", pg_world)]
        r = w = None
        for rn, rv, wn, wv in srcs:
            if rv is not None:
                if r is not None and rv != r[1]:
                    raise InartRankError("%s %d but %s %d: they must agree" % (r[0], r[1],
                                                                               rn, rv))
                r = r or (rn, rv)
            if wv is not None:
                if w is not None and wv != w[1]:
                    raise InartRankError("%s %d but %s %d: they must agree" % (w[0], w[1],
                                                                               wn, wv))
                w = w or (wn, wv)
        if r is None:
            raise InartRankError("no rank: set RANK (torchrun does), pass rank= or "
                                 "initialize the process group first")
        return r[1], (w[1] if w else None)

    def _context(self):
        f = self.files
        try:
            return Context(f["topo"], f["jobs"], f["plan"], deploy=f["deploy"], job=self.job,
                           rank=self.rank, world_size=self.world_size, timeout=self.timeout)
        except InartAddressError as e:
            if self.local_rank:
                e.args = (e.args[0] + "; LOCAL_RANK=%d: several processes on one machine need "
                          "one address each in the deployment (one worker per address)"
                          % self.local_rank,)
            raise

    # -- the communication thread ------------------------------------------------------
    def submit(self, index, buf, fut, last=False):
        """All-reduce bucket `index` (tensor buf); fut gets the averaged
        tensor or the exception.  Queued for the state's thread, or, for the
        backward's last bucket (`last`) when nothing is queued or running,
        reduced at once in the caller's thread: the caller (DDP's backward)
        would only wait for it, and the hand-over to the thread costs a
        wake-up of a thread that then needs the GIL (0.3-0.5 ms measured)."""
        now = time.monotonic()
        if self._cur is None or index in self._cur["indices"]:   # a new backward
            self._cur = dict(indices=set(), buckets=0, values=0, comm_s=0.0, wait_s=0.0,
                             barrier_s=0.0, c_s=0.0, post_s=0.0, first=now, last=now)
            self.iterations.append(self._cur)
        self._cur["indices"].add(index)
        item = (index, buf, fut, now, self._cur)
        with self._busy_lock:
            # (after close() the thread is gone: the closed context fails the bucket here)
            inline = (last and self._busy == 0) or self._stop
            if not inline:
                self._busy += 1
        if inline:
            self._process(item)
        else:
            self._q.put(item)

    def _run(self):
        while True:
            item = self._q.get()
            try:
                if item is None:
                    return
                self._process(item)
            finally:
                if item is not None:
                    with self._busy_lock:
                        self._busy -= 1
                self._q.task_done()

    def _process(self, item):
        index, buf, fut, t_sub, it = item
        try:
            if self.failed is not None:
                raise InartStateError(
                    "an earlier all-reduce failed (%s); bucket %d not sent: call "
                    "state.resync() on every rank before training on" % (self.failed, index))
            if self.sync and self._synced is not it:
                # the start barrier: a one-value all-reduce before the
                # first bucket of a backward (every rank makes the same
                # calls in the same order: the bucket order is DDP's)
                self._synced = it
                self._one.zero_()
                self.ctx.allreduce(self._one)
                it["barrier_s"] = self.ctx.last["seconds"]
                it["wait_s"] -= self.ctx.last["seconds"]
            out = self._reduce(index, buf)
            last = self.ctx.last
            done = time.monotonic()
            it["wait_s"] += last["start"] - t_sub
            it["c_s"] += last["seconds"]
            it["post_s"] += done - last["end"]
            it["buckets"] += 1
            it["values"] += buf.numel()
            it["comm_s"] += done - t_sub
            it["last"] = done
        except BaseException as e:  # the future carries it to DDP (see allreduce_hook)
            if self.failed is None:
                self.failed = "%s: %s" % (type(e).__name__, e.args[0] if e.args else e)
            fut.set_result(e if isinstance(e, Exception) else InartError(str(e)))
            return
        fut.set_result(out)

    def _reduce(self, index, buf):
        key = ("bucket", index) if self.use_gain else None
        if buf.dtype == torch.float32:
            self.ctx.allreduce(buf, average=True, key=key)
            self.buckets[index] = dict(self.ctx.last, dtype=str(buf.dtype))
            return buf
        if not buf.is_floating_point():
            raise InartDtypeError("bucket %d has dtype %s: InArt sums floating-point "
                                  "gradients only (float32, or float64/float16/bfloat16 "
                                  "through a float32 copy)" % (index, buf.dtype))
        tmp = buf.detach().to(torch.float32).contiguous()
        self.ctx.allreduce(tmp, average=True, key=key)
        buf.copy_(tmp)
        self.buckets[index] = dict(self.ctx.last, dtype=str(buf.dtype))
        return buf

    # -- recovery and teardown -----------------------------------------------------------
    def resync(self):
        """Collective (every rank of the process group calls it): wait for
        this rank's queued buckets, then restart every rank's InArt context
        together.  The PSs take a job whose trees were silent for a second
        as started again (docs/dataplane.md, PS rule 5), so the new contexts
        (created 2 s after the old ones closed, core.RESTART_GAP_S) start
        again from the first all-reduce without a new install."""
        self._q.join()
        self.ctx.close()
        dist.barrier(group=self.group)
        self.ctx = self._context()
        dist.barrier(group=self.group)
        self.failed = None
        self._cur = None

    def stats(self):
        """The context's counters (inart_ctx_stats) as a dict."""
        return self.ctx.stats()

    def close(self):
        """Stop the thread and close the context.  Idempotent."""
        if not self._stop:
            self._stop = True
            self._q.put(None)
            self._thread.join(timeout=self.timeout + 5)
        self.ctx.close()


def allreduce_hook(state, bucket):
    """DDP communication hook: the average of the bucket over the job's
    workers through InArt (register with ddp.register_comm_hook(state,
    inart.torch.allreduce_hook))."""
    raw = torch.futures.Future()
    is_last = getattr(bucket, "is_last", None)
    state.submit(bucket.index(), bucket.buffer(), raw, last=bool(is_last and is_last()))
    # The communication thread completes `raw` with the tensor or with the
    # exception object as its value; raising it in a then() callback marks
    # the returned future failed in C++ (Future.set_exception would only
    # wrap it for Python, and DDP's reducer would then fail to cast it to a
    # tensor), so backward raises "...: InartTimeoutError: <message>".
    return raw.then(_unwrap)


def _unwrap(fut):
    v = fut.value()
    if isinstance(v, BaseException):
        raise v
    return v
