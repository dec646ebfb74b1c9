"""Context: one worker of an installed InArt plan, over libinart_worker.

A Context is `inart_ctx_create` (the same topology, jobs, plan and
deployment files `inart ctl install` used, the job id and this worker's
rank) plus the checks that give a clear exception before anything is sent:
the rank and world size against the job's workers, the job against the plan.
`allreduce` sums a float32 buffer (torch.Tensor or numpy.ndarray, contiguous,
in host memory) in place over the job's workers; every worker must call it
with the same sizes in the same order.

Precision (docs/python.md): values travel as int32 fixed point at scale s
(16 unless the values need less), so each sum is within
n_workers * 2^-(s+1) of the exact sum.  With `key`, the context multiplies
the values by a power of two 2^g chosen from the previous result of the same
key (the same on every worker, since results are identical bytes), so small
gradients are summed at scale 16 + g; g = 0 on the first call of a key.

Thread safety: calls on one Context are serialized by a lock.
"""
import ctypes
import errno
import json
import math
import os
import threading
import time

from . import _lib
from .errors import (InartConfigError, InartDtypeError, InartLayoutError, InartRankError,
                     InartStateError, InartTimeoutError, InartValueError, error_for)

DEFAULT_SCALE = 16   # INART_WORKER_DEFAULT_SCALE in src/dp/worker.h
HEADROOM_BITS = 8    # the gain leaves this many bits of int32 free (as the C worker does)
MAX_GAIN = 48        # x * 2^48 stays finite for every gradient that is (|x| < 2^79)
# A new context numbers its all-reduces from 1 again; a PS takes that as a
# new run of the job only after its trees were silent for a second
# (docs/dataplane.md, PS rule 5), else as stale packets of the old run.  So
# a context is not created within RESTART_GAP_S of this process closing one.
RESTART_GAP_S = 2.0
_closed_at = None


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None   # the C loader reports the file's problem with line:column


def _env_int(name):
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise InartRankError("environment variable %s=%r is not an integer" % (name, v)) from None


class JobInfo:
    """What the Python side reads from the files (for checks and messages;
    the C library validates them fully)."""

    def __init__(self, jobs_path, plan_path, deploy_path, job):
        self.job = job
        self.workers, self.ps, self.switches, self.transit, self.ips = [], [], [], [], {}
        self.max_values = None  # the job's gradient size in values (gradient_bytes / 4)
        self.plan_jobs = None
        self.flows, self.trees, self.ctls = [], [], {}
        js = _read_json(jobs_path)
        if isinstance(js, dict):
            for j in js.get("jobs", []):
                if isinstance(j, dict) and j.get("id") == job:
                    self.workers = list(j.get("workers", []))
                    if isinstance(j.get("gradient_bytes"), int):
                        self.max_values = (j["gradient_bytes"] + 3) // 4
            self.job_ids = [j.get("id") for j in js.get("jobs", []) if isinstance(j, dict)]
        else:
            self.job_ids = None
        pl = _read_json(plan_path)
        if isinstance(pl, dict) and isinstance(pl.get("jobs"), list):
            self.plan_jobs = [j.get("id") for j in pl["jobs"] if isinstance(j, dict)]
            for j in pl["jobs"]:
                if isinstance(j, dict) and j.get("id") == job:
                    self.ps = sorted(k for k, v in (j.get("split") or {}).items() if v)
                    self.switches = sorted({f.get("agg") for f in j.get("flows", [])
                                            if f.get("agg") and f.get("agg") not in self.ps})
                    # the other switches the job's packets cross (paths of
                    # flows and trees, less their end hosts)
                    on = {n for f in j.get("flows", []) + j.get("trees", [])
                          if isinstance(f, dict) and isinstance(f.get("path"), list)
                          for n in f["path"] if isinstance(n, str)}
                    self.flows = [f for f in j.get("flows", []) if isinstance(f, dict)]
                    self.trees = [t for t in j.get("trees", []) if isinstance(t, dict)]
                    self.transit = sorted(on - set(self.workers) - set(self.ps) -
                                          set(self.switches) -
                                          {p for p in (j.get("split") or {})})
        dp = _read_json(deploy_path) if deploy_path else None
        if isinstance(dp, dict) and isinstance(dp.get("nodes"), dict):
            self.ips = {k: v.get("ip") for k, v in dp["nodes"].items() if isinstance(v, dict)}
            self.ctls = {k: v.get("ctl") for k, v in dp["nodes"].items()
                         if isinstance(v, dict) and isinstance(v.get("ctl"), str)}

    def tree_path(self, worker, ps):
        """The nodes a tree of `worker` to PS `ps` crosses (the plan's flow
        from the worker, then the switches' trees up to the PS), the
        worker and the PS included; [] if the plan has no such flow."""
        out = []
        for f in self.flows:
            if f.get("worker") == worker and f.get("ps") == ps:
                out = [n for n in f.get("path") or [] if isinstance(n, str)]
                sw, seen = f.get("agg"), set()
                while sw and sw != ps and sw not in seen:
                    seen.add(sw)
                    t = next((t for t in self.trees if t.get("switch") == sw and
                              t.get("ps") == ps), None)
                    if t is None:
                        break
                    out += [n for n in t.get("path") or [] if isinstance(n, str)]
                    sw = t.get("parent")
                out.append(ps)
                break
        return list(dict.fromkeys(out))

    def name_of_ip(self, ip):
        return next((k for k, v in self.ips.items() if v == ip), ip)

    def silent_text(self, rank, trees):
        """What the worker's recovery found, for a timeout's message:
        trees [(PS ip, state)] of the call (inart_ctx_trees).  Of the
        nodes on a silent tree and on no tree that still heard answers,
        the daemons that do not answer an "info" request on their control
        socket (the deployment's "ctl") within CTL_WAIT_S are named (gone:
        the socket refuses connections; mute: stopped or hung), and only
        those when there are any; otherwise the nodes on every silent
        tree, less the daemons that answered, as suspects.  "" when no
        tree was silent."""
        me = self.workers[rank] if 0 <= rank < len(self.workers) else None
        silent = sorted({self.name_of_ip(ip) for ip, q in trees if q == _lib.TREE_SILENT})
        heard = sorted({self.name_of_ip(ip) for ip, q in trees
                        if q == _lib.TREE_ANSWERED} - set(silent))
        if not silent:
            return ""
        paths = [self.tree_path(me, p) or [p] for p in silent]
        on_heard = set(self.workers)
        for p in heard:
            on_heard |= set(self.tree_path(me, p) or [p])
        order = [n for n in dict.fromkeys(n for q in paths for n in q) if n not in on_heard]
        common = [n for n in order if all(n in q for q in paths)]
        state = {n: _ctl_state(self.ctls.get(n)) for n in order}
        dead = [n for n in order if state[n] in ("gone", "mute")]
        live = [n for n in order if state[n] == "up"]
        trees_txt = "the tree%s to PS %s heard nothing through the worker's probes and " \
            "resends%s" % ("s" if len(silent) > 1 else "", ", ".join(silent),
                           " (the tree%s to PS %s still answered)"
                           % ("s" if len(heard) > 1 else "", ", ".join(heard)) if heard else "")
        if dead:
            why = {"gone": "its control socket refuses connections: the daemon is gone",
                   "mute": "no answer on its control socket in %.1f s: stopped or hung"
                   % CTL_WAIT_S}
            return "%s; silent: %s%s" % (
                trees_txt, ", ".join("%s (%s)" % (self.node(n), why[state[n]]) for n in dead),
                "; %s answer%s on %s control socket%s" % (
                    ", ".join(live), "s" if len(live) == 1 else "",
                    "its" if len(live) == 1 else "their", "" if len(live) == 1 else "s")
                if live else "")
        named = ([n for n in common if n not in live] or
                 [n for n in order if n not in live] or order)
        return "%s; silent: %s" % (trees_txt, " or ".join(self.node(n) for n in named))

    def node(self, n):
        ip = self.ips.get(n)
        return "%s (%s)" % (n, ip) if ip else n

    def who(self, rank):
        w = self.workers[rank] if 0 <= rank < len(self.workers) else "?"
        return "job '%s' rank %d (worker %s)" % (self.job, rank, self.node(w))

    def path_text(self):
        ps = ", ".join(self.node(p) for p in self.ps) or "?"
        sw = ", ".join(self.node(s) for s in self.switches) or "none"
        tr = ", ".join(self.node(s) for s in self.transit)
        return "PS %s; aggregating switches %s%s" % (ps, sw, "; other switches on the way %s"
                                                    % tr if tr else "")


CTL_WAIT_S = 0.3   # a daemon's answer to "info" on its control socket, after a timeout


def _ctl_state(path):
    """"up" if the daemon at control socket `path` answers an "info"
    request (docs/programs.md section 6: a 4-byte big-endian length, then
    JSON) within CTL_WAIT_S, "gone" if the socket refuses connections or
    is missing, "mute" if it accepts but does not answer in time (the
    daemon stopped or hung), None if unknown (no path, another error)."""
    if not path:
        return None
    import socket
    import struct
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(CTL_WAIT_S)
    try:
        try:
            s.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            return "gone"
        req = b'{"op": "info"}'
        s.sendall(struct.pack(">I", len(req)) + req)
        head = b""
        while len(head) < 4:
            got = s.recv(4 - len(head))
            if not got:
                return "gone"
            head += got
        return "up"
    except socket.timeout:
        return "mute"
    except OSError:
        return None
    finally:
        s.close()


def buffer_of(x):
    """(address, number of float32 values) of a float32, contiguous,
    writable host buffer x (torch.Tensor or numpy.ndarray); else the
    exception naming what is wrong."""
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        import torch
        if isinstance(x, torch.Tensor):
            if x.dtype != torch.float32:
                raise InartDtypeError(
                    "tensor of dtype %s: InArt sums float32 only (convert with .float() and "
                    "copy the result back; the DDP hook converts floating buckets itself)"
                    % x.dtype)
            if x.device.type != "cpu":
                raise InartLayoutError("tensor on device %s: InArt sums host memory only "
                                       "(move it with .cpu())" % x.device)
            if not x.is_contiguous():
                raise InartLayoutError(
                    "tensor is not contiguous (shape %s, stride %s): call .contiguous() and "
                    "copy the result back" % (tuple(x.shape), x.stride()))
            return x.data_ptr(), x.numel()
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None and isinstance(x, np.ndarray):
        if x.dtype != np.float32:
            raise InartDtypeError("array of dtype %s: InArt sums float32 only "
                                  "(x.astype(numpy.float32))" % x.dtype)
        if not x.flags.c_contiguous:
            raise InartLayoutError("array is not C-contiguous (strides %s): use "
                                   "numpy.ascontiguousarray and copy the result back"
                                   % (x.strides,))
        if not x.flags.writeable:
            raise InartLayoutError("array is read-only: the all-reduce writes the sums in place")
        return x.ctypes.data, x.size
    raise InartDtypeError("expected a float32 torch.Tensor or numpy.ndarray, got %s"
                          % type(x).__name__)


def _scale_(x, f):
    """x *= f in place (torch or numpy; f a power of two: exact)."""
    if (type(x).__module__ or "").startswith("torch"):
        x.detach().mul_(f)   # detach: also for a tensor that requires grad
    else:
        x *= f


def _div_(x, n):
    """x /= n in place (torch or numpy)."""
    if (type(x).__module__ or "").startswith("torch"):
        x.detach().div_(n)
    else:
        x /= n


def _absmax(x):
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        if not x.numel():
            return 0.0
        import torch
        lo, hi = torch.aminmax(x.detach())   # one pass, no temporary
        return max(-float(lo), float(hi))
    import numpy as np
    return float(np.abs(x).max()) if x.size else 0.0


def _first_nonfinite(x):
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        import torch
        bad = (~torch.isfinite(x.reshape(-1))).nonzero()
        return (int(bad[0]), float(x.reshape(-1)[int(bad[0])])) if len(bad) else None
    import numpy as np
    bad = np.flatnonzero(~np.isfinite(x.reshape(-1)))
    return (int(bad[0]), float(x.reshape(-1)[bad[0]])) if len(bad) else None


ZERO_STEP = 8         # a result of zeros only: the next call of the key 8 bits finer,
ZERO_MAX_GAIN = 32    # up to this gain (values all below the scale's step)


def gain_for(m, g=0):
    """The power-of-two gain for the next call of a key whose result had
    largest magnitude m (in the caller's units) at gain g: the highest gain
    in 0..MAX_GAIN with m * 2^gain * 2^DEFAULT_SCALE below
    2^(31 - HEADROOM_BITS); if the result was all zeros (every value below
    the step of the scale used), g + ZERO_STEP, at most ZERO_MAX_GAIN."""
    if m == 0:
        return max(g, min(ZERO_MAX_GAIN, g + ZERO_STEP))
    if not (m > 0) or math.isinf(m):
        return 0
    e = math.frexp(m)[1]   # m < 2^e
    return max(0, min(MAX_GAIN, 31 - HEADROOM_BITS - DEFAULT_SCALE - e))


class Context:
    """One worker of an installed plan.

    Context(topo, jobs, plan, deploy=None, job=None, rank=None,
            world_size=None, timeout=10.0)

    job: the job id (default: INART_JOB, or the only job of the jobs file).
    rank: this worker's index in the job's worker list (default: RANK).
    world_size: checked against the job's worker count (default: WORLD_SIZE
    if set).  timeout: seconds an all-reduce may take before
    InartTimeoutError (the context stays usable).
    """

    def __init__(self, topo, jobs, plan, deploy=None, job=None, rank=None, world_size=None,
                 timeout=10.0):
        self._lib = _lib.load()
        self._h = None
        self._lock = threading.Lock()
        self.files = dict(topo=topo, jobs=jobs, plan=plan, deploy=deploy)
        if rank is None:
            rank = _env_int("RANK")
            if rank is None:
                raise InartRankError("no rank: pass rank= or set RANK (torchrun sets it)")
        if world_size is None:
            world_size = _env_int("WORLD_SIZE")
        if job is None:
            job = os.environ.get("INART_JOB") or None
        js = _read_json(jobs)
        if job is None and isinstance(js, dict) and isinstance(js.get("jobs"), list):
            ids = [j.get("id") for j in js["jobs"] if isinstance(j, dict)]
            if len(ids) != 1:
                raise InartConfigError("%s has %d jobs (%s): give job= or INART_JOB"
                                       % (jobs, len(ids), ", ".join(map(str, ids))))
            job = ids[0]
        self.job = job if job is not None else ""
        self.rank = int(rank)
        self.info = JobInfo(jobs, plan, deploy, self.job)
        self._check(world_size)
        err = _lib.Err()
        h = self._lib.inart_ctx_create(topo.encode(), jobs.encode(), plan.encode(),
                                       deploy.encode() if deploy else None,
                                       self.job.encode(), self.rank, err)
        if not h:
            e = ctypes.get_errno() or errno.EINVAL
            msg = err.msg.decode(errors="replace") or os.strerror(e)
            raise error_for(e, "cannot start %s: %s" % (self.info.who(self.rank), msg),
                            creating=True)
        self._h = h
        self.world_size = len(self.info.workers) or world_size
        self.timeout = float(timeout)
        self.calls = 0
        self._not_before = _closed_at + RESTART_GAP_S if _closed_at is not None else 0.0
        self.gains = {}
        self.last = {}

    def _check(self, world_size):
        info, rank = self.info, self.rank
        if info.job_ids is not None and self.job not in info.job_ids:
            raise InartConfigError("job '%s' is not in %s (jobs: %s)"
                                   % (self.job, self.files["jobs"],
                                      ", ".join("'%s'" % j for j in info.job_ids)))
        if info.plan_jobs is not None and self.job not in info.plan_jobs:
            raise InartConfigError(
                "plan %s is for job%s %s, not for job '%s': install and use the plan made "
                "for this job" % (self.files["plan"], "s" if len(info.plan_jobs) != 1 else "",
                                  ", ".join("'%s'" % j for j in info.plan_jobs) or "(none)",
                                  self.job))
        n = len(info.workers)
        if n == 0:
            return   # the C library names the problem (job missing, file unreadable)
        if not 0 <= rank < n:
            raise InartRankError("rank %d (RANK) is not a worker of job '%s': %s lists %d "
                                 "workers (ranks 0..%d)" % (rank, self.job, self.files["jobs"],
                                                           n, n - 1))
        if world_size is not None and int(world_size) != n:
            raise InartRankError("world size %d (WORLD_SIZE / the process group) does not "
                                 "match job '%s': %s lists %d workers (%s)"
                                 % (int(world_size), self.job, self.files["jobs"], n,
                                    ", ".join(info.workers)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def close(self):
        """Destroy the C context (its socket is closed).  Idempotent."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        global _closed_at
        with lock:
            if self._h:
                self._lib.inart_ctx_destroy(self._h)
                self._h = None
                _closed_at = time.monotonic()

    @property
    def closed(self):
        return not self._h

    def stats(self):
        """The context's counters since creation (inart_ctx_stats), a dict."""
        st = _lib.CtxStats()
        st.size = ctypes.sizeof(st)
        with self._lock:
            if not self._h:
                raise InartStateError("context is closed")
            rc = self._lib.inart_ctx_stats(self._h, st)
        if rc < 0:
            raise error_for(rc, "inart_ctx_stats")
        filled = st.size
        out = {}
        for i, f in enumerate(_lib.STATS_FIELDS):
            if 8 + 8 * (i + 1) <= filled:
                out[f] = getattr(st, f)
        return out

    def step(self):
        """(step, job_step): the step the next all-reduce runs, and the step
        a PS named in a step notice (0 if none since the last success);
        inart_ctx_step."""
        s, j = ctypes.c_uint32(), ctypes.c_uint32()
        with self._lock:
            if not self._h:
                raise InartStateError("context is closed")
            self._lib.inart_ctx_step(self._h, ctypes.byref(s), ctypes.byref(j))
        return s.value, j.value

    def resync(self):
        """After InartStaleError (C -ESTALE): go on at the step the data
        plane named (inart_ctx_resync); the lost step's result is gone.
        InartStateError if no step notice came."""
        with self._lock:
            if not self._h:
                raise InartStateError("context is closed")
            rc = self._lib.inart_ctx_resync(self._h)
        if rc == -errno.EAGAIN:
            raise InartStateError("resync: no step notice came (the context is not stale)")
        if rc < 0:
            raise error_for(rc, "inart_ctx_resync")
        return self.step()[0]

    def allreduce(self, x, average=False, timeout=None, key=None):
        """Sum x (float32 torch.Tensor or numpy.ndarray) in place over the
        job's workers and return it; divided by the worker count if
        `average`.  `key` (any hashable, the same on every worker) turns on
        the adaptive power-of-two gain for buffers reduced repeatedly.
        Raises InartTimeoutError (x unchanged), InartValueError (NaN/Inf),
        InartDtypeError, InartLayoutError, InartIOError, InartStateError."""
        ptr, n = buffer_of(x)
        tmo = self.timeout if timeout is None else float(timeout)
        ms = max(1, min(2**31 - 1, int(math.ceil(tmo * 1000))))
        g = self.gains.get((key, n), 0) if key is not None else 0
        with self._lock:
            if not self._h:
                raise InartStateError("context is closed")
            if self.calls == 0 and n:
                wait = self._not_before - time.monotonic()
                if wait > 0:   # see RESTART_GAP_S
                    time.sleep(wait)
            self.calls += 1
            before = self._counters_locked() if n else None
            if g:
                _scale_(x, 2.0 ** g)
            t0 = time.monotonic()
            rc = self._lib.inart_allreduce(self._h, ptr, n, ms)
            t1 = time.monotonic()
            if rc < 0:
                if g:
                    _scale_(x, 2.0 ** -g)   # exact: the C library left x unchanged
                raise self._failure(rc, x, n, tmo, before)
            m = _absmax(x) if key is not None and n else 0.0
            if average:
                # one pass: x / (n * 2^g) is x * 2^-g (exact) divided by n
                _div_(x, self.world_size * 2.0 ** g)
            elif g:
                _scale_(x, 2.0 ** -g)
            rescales = self._counters_locked().rescales - before.rescales if n else 0
        # start and end of the C call (time.monotonic()), for the hook's timing
        self.last = dict(values=n, seconds=t1 - t0, gain=g, scale=DEFAULT_SCALE + g,
                         rescales=rescales, start=t0, end=t1)
        if key is not None and n:
            self.gains[(key, n)] = gain_for(m * 2.0 ** -g, g)
        return x

    def _counters_locked(self):
        st = _lib.CtxStats()
        st.size = ctypes.sizeof(st)
        self._lib.inart_ctx_stats(self._h, st)
        return st

    def _trees_locked(self):
        """[(PS ip, state)] of the call that just timed out (inart_ctx_trees;
        state: _lib.TREE_IDLE, TREE_ANSWERED or TREE_SILENT)."""
        if not hasattr(self._lib, "inart_ctx_trees"):
            return []
        out = (_lib.CtxTree * 64)()
        k = self._lib.inart_ctx_trees(self._h, out, 64)
        return [("%d.%d.%d.%d" % (t.ps_ip >> 24, t.ps_ip >> 16 & 255, t.ps_ip >> 8 & 255,
                                  t.ps_ip & 255), t.state) for t in out[:max(k, 0)]]

    def _failure(self, rc, x, n, tmo, before):
        who = "%s, all-reduce #%d of %d values" % (self.info.who(self.rank), self.calls, n)
        if -rc == errno.ETIMEDOUT:
            got = self._counters_locked().results - before.results
            hint = ("no result arrived at all: the PS or a switch on the trees does not "
                    "answer (is 'inart ps'/'inart switchd' running, the plan installed with "
                    "'inart ctl install', every worker of the job calling?)" if got == 0 else
                    "%d chunk results arrived, the others did not: a PS or switch stopped "
                    "answering, or a worker of the job is missing or behind" % got)
            found = self.info.silent_text(self.rank, self._trees_locked())
            return InartTimeoutError("%s: timed out after %.3g s; %s%s [%s]"
                                     % (who, tmo, found + "; " if found else "", hint,
                                        self.info.path_text()), errno=-rc)
        if -rc == errno.EINVAL:
            if self.info.max_values is not None and n > self.info.max_values:
                return InartValueError("%s: more values than the job's gradient (%d values: "
                                       "its gradient_bytes in the jobs file, which sizes the "
                                       "PSs' memory)" % (who, self.info.max_values),
                                       errno=-rc)
            bad = _first_nonfinite(x)
            if bad is not None:
                return InartValueError("%s: value %d is %r: NaN and infinities cannot be "
                                       "summed in fixed point" % (who, bad[0], bad[1]),
                                       errno=-rc)
        return error_for(rc, "%s failed" % who)
