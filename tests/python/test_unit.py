"""test_unit.py INART LIBINART_WORKER: the Python package without namespaces.

Checks what needs no root: the library binding, the buffer checks, the
errno -> exception table, the gain, every refusal of Context and State
(files, job, plan for another job, rank, world size, an address that is not
on this host, an address in use), and real all-reduces over loopback: an
`inart ps` daemon bound to a 127.x address, a plan without in-network
aggregation (the PS sends results straight to the workers), two workers as
threads of this process: exact sums, averaging, the gain, numpy, the DDP
hook called directly (averages, float64 conversion, a refused dtype), a PS
that stops answering (SIGSTOP): the timeout within bounded time, then
all-reduces again once it answers.  Prints "N passed, N failed".
"""
import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

passed, failed = 0, 0


def check(name, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok %s" % name, flush=True)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, why), flush=True)


def raises(name, exc, fn, contains=()):
    try:
        fn()
    except exc as e:
        miss = [s for s in contains if s not in str(e)]
        check(name, not miss, "message %r lacks %s" % (str(e), miss))
        return e
    except Exception as e:
        check(name, False, "raised %s: %s" % (type(e).__name__, e))
        return e
    check(name, False, "did not raise %s" % exc.__name__)


def files(tmp, base):
    """A rack (w0, w1 under t0; t1; p0, p1) on loopback addresses 127.B.x."""
    topo = {"nodes": [{"id": n, "kind": "host"} for n in ("w0", "w1", "p0", "p1")] +
            [{"id": "t0", "kind": "switch", "ina": {"agg_gbps": 10, "trees": 4}},
             {"id": "t1", "kind": "switch"}],
            "links": [{"a": "w0", "b": "t0", "gbps": 1}, {"a": "w1", "b": "t0", "gbps": 1},
                      {"a": "t0", "b": "t1", "gbps": 1}, {"a": "t1", "b": "p0", "gbps": 1},
                      {"a": "t1", "b": "p1", "gbps": 1}]}
    jobs = {"jobs": [{"id": "j0", "workers": ["w0", "w1"], "ps": ["p0", "p1"],
                      "gradient_bytes": 100000}]}
    ip = {n: "%s.%d" % (base, i + 1) for i, n in enumerate(("w0", "w1", "p0", "p1", "t0", "t1"))}
    dep = {"nodes": {n: {"ip": ip[n]} for n in ip}}
    for n in ("p0", "p1", "t0", "t1"):
        dep["nodes"][n]["ctl"] = os.path.join(tmp, n + ".sock")
    dep["nodes"]["t0"]["ports"] = {"w0": {"port": 0}, "w1": {"port": 1}, "t1": {"port": 2}}
    dep["nodes"]["t1"]["ports"] = {"t0": {"port": 0}, "p0": {"port": 1}, "p1": {"port": 2}}
    paths = {}
    for k, v in (("topo", topo), ("jobs", jobs), ("deploy", dep)):
        paths[k] = os.path.join(tmp, k + ".json")
        json.dump(v, open(paths[k], "w"))
    return paths, ip


def offline_checks(inart, tmp, paths):
    import numpy as np
    import torch
    from inart import core, errors, _lib
    check("library loads from INART_WORKER_LIB",
          _lib.path() == os.environ["INART_WORKER_LIB"], _lib.path())
    # buffers
    check("float32 tensor accepted", inart.buffer_of(torch.zeros(5))[1] == 5)
    check("float32 numpy accepted", inart.buffer_of(np.zeros(7, np.float32))[1] == 7)
    raises("float64 tensor", inart.InartDtypeError, lambda: inart.buffer_of(torch.zeros(3).double()),
           ["float64"])
    raises("float16 numpy", inart.InartDtypeError,
           lambda: inart.buffer_of(np.zeros(3, np.float16)), ["float16"])
    raises("non-contiguous tensor", inart.InartLayoutError,
           lambda: inart.buffer_of(torch.zeros(4, 4)[:, 1]), ["not contiguous"])
    raises("non-contiguous numpy", inart.InartLayoutError,
           lambda: inart.buffer_of(np.zeros((4, 4), np.float32)[:, 1]), ["not C-contiguous"])
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    raises("read-only numpy", inart.InartLayoutError, lambda: inart.buffer_of(ro), ["read-only"])
    raises("a tuple", inart.InartDtypeError, lambda: inart.buffer_of((1.0,)), ["tuple"])
    # the errno table: every error worker.h documents, and -ESTALE
    for rc, cls, create in ((errno.ETIMEDOUT, inart.InartTimeoutError, False),
                            (errno.EINVAL, inart.InartValueError, False),
                            (errno.EIO, inart.InartIOError, False),
                            (errno.ENOMEM, inart.InartMemoryError, False),
                            (errno.ESTALE, inart.InartStaleError, False),
                            (errno.EINVAL, inart.InartConfigError, True),
                            (errno.ENOENT, inart.InartConfigError, True),
                            (errno.EADDRNOTAVAIL, inart.InartAddressError, True),
                            (errno.EADDRINUSE, inart.InartAddressError, True),
                            (errno.EPERM, inart.InartError, False)):
        e = errors.error_for(-rc, "m", creating=create)
        check("errno %s -> %s" % (errno.errorcode[rc], cls.__name__),
              type(e) is cls and e.errno == rc and os.strerror(rc) in str(e), repr(e))
    check("exceptions are RuntimeErrors and the standard classes",
          issubclass(inart.InartTimeoutError, TimeoutError) and
          issubclass(inart.InartDtypeError, TypeError) and
          issubclass(inart.InartRankError, ValueError) and
          issubclass(inart.InartError, RuntimeError))
    # the gain: m * 2^g * 2^16 < 2^23, the highest such g
    for m, g0, g in ((1.0, 0, 6), (0.75, 3, 7), (100.0, 0, 0), (2.0 ** -20, 0, 26),
                     (1e-30, 0, 48), (0.0, 0, 8), (0.0, 30, 32), (0.0, 40, 40)):
        check("gain_for(%g, %d) == %d" % (m, g0, g), core.gain_for(m, g0) == g,
              str(core.gain_for(m, g0)))
    # refusals of Context
    plan = paths["plan"]
    C = inart.Context
    raises("missing topology file", inart.InartConfigError,
           lambda: C(os.path.join(tmp, "nope.json"), paths["jobs"], plan, paths["deploy"], rank=0),
           ["nope.json"])
    raises("job not in the jobs file", inart.InartConfigError,
           lambda: C(paths["topo"], paths["jobs"], plan, paths["deploy"], job="j9", rank=0),
           ["job 'j9' is not in"])
    raises("plan for another job", inart.InartConfigError,
           lambda: C(paths["topo"], paths["jobs"], paths["plan_other"], paths["deploy"], rank=0),
           ["is for job 'jx'", "not for job 'j0'"])
    raises("rank out of range", inart.InartRankError,
           lambda: C(paths["topo"], paths["jobs"], plan, paths["deploy"], rank=2), ["rank 2"])
    raises("world size against the job", inart.InartRankError,
           lambda: C(paths["topo"], paths["jobs"], plan, paths["deploy"], rank=0, world_size=4),
           ["world size 4", "2 workers"])
    os.environ.pop("RANK", None)
    raises("no rank at all", inart.InartRankError,
           lambda: C(paths["topo"], paths["jobs"], plan, paths["deploy"]), ["RANK"])
    raises("an address not on this host", inart.InartAddressError,
           lambda: C(paths["topo"], paths["jobs"], plan, paths["deploy_far"], rank=0),
           ["192.0.2.1", "not on this host"])
    raises("inart.init without files", inart.InartConfigError,
           lambda: inart.init(), ["INART_TOPO"])


def send_trees(inart_bin, paths, plan, node):
    """The PS trees of `plan` sent straight to node's daemon (ctl install
    would also want the switches, which this test does not run)."""
    r = subprocess.run([inart_bin, "ctl", "install", paths["topo"], paths["jobs"], plan,
                        "--deploy", paths["deploy"], "--dry-run"], capture_output=True, text=True,
                       check=True)
    for line in r.stdout.splitlines():
        sock, _, req = line.partition(" ")
        if sock.endswith(node + ".sock"):
            subprocess.run([inart_bin, "ctl", "send", sock, req], check=True,
                           capture_output=True)
            return
    raise RuntimeError("no request for %s in: %s" % (node, r.stdout))


def both(fn):
    """fn(rank) in two threads at once; the results (an exception is a result)."""
    out = [None, None]

    def go(r):
        try:
            out[r] = fn(r)
        except Exception as e:
            out[r] = e
    ts = [threading.Thread(target=go, args=(r,)) for r in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return out


class Bucket:
    def __init__(self, index, t, last=None):
        self.i, self.t = index, t
        if last is not None:
            self.is_last = lambda: last

    def index(self):
        return self.i

    def buffer(self):
        return self.t


def loopback_checks(inart, inart_bin, tmp, paths, ip):
    import numpy as np
    import torch
    import inart.torch as it
    plan = paths["plan"]
    ps = subprocess.Popen([inart_bin, "ps", "--name", "p0", "--bind", ip["p0"], "--ctl",
                           os.path.join(tmp, "p0.sock"), "--log-level", "error"],
                          stdin=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(tmp, "p0.sock")):
                break
            time.sleep(0.05)
        send_trees(inart_bin, paths, plan, "p0")
        ctxs = [inart.Context(paths["topo"], paths["jobs"], plan, paths["deploy"], rank=r,
                              timeout=10) for r in (0, 1)]
        raises("a second context on the same address", inart.InartAddressError,
               lambda: inart.Context(paths["topo"], paths["jobs"], plan, paths["deploy"], rank=0),
               [ip["w0"], "in use"])
        for n in (1, 357, 358, 359, 3000):
            res = both(lambda r: ctxs[r].allreduce(
                (torch.arange(n, dtype=torch.float32) % 7 - 3 + r) / 8))
            want = ((torch.arange(n, dtype=torch.float32) % 7 - 3) * 2 + 1) / 8
            check("loopback sum of %d values exact" % n,
                  all(isinstance(x, torch.Tensor) and bool((x == want).all()) for x in res),
                  repr(res)[:300])
        raises("more values than the job's gradient (25000)", inart.InartValueError,
               lambda: ctxs[0].allreduce(torch.zeros(25001)), ["gradient", "25000 values"])
        res = both(lambda r: ctxs[r].allreduce(np.full(500, 1.0 + r, np.float32), average=True))
        check("numpy, average", all(isinstance(x, np.ndarray) and (x == 1.5).all() for x in res),
              repr(res)[:200])
        # the gain: a repeated key reduces small values at a finer scale
        errs = []
        for k in range(3):
            res = both(lambda r: ctxs[r].allreduce(torch.full((100,), 1e-6 * (r + 1)), key="g"))
            errs.append((float((res[0] - 3e-6).abs().max()), ctxs[0].last["scale"]))
        # first call: both values below scale 16's step, the sum is 0; so
        # the second goes 8 bits finer (24); the third from its result (41)
        check("gain: zero result -> 8 bits finer, then from the result, more exact",
              [e[1] for e in errs] == [16, 24, 41] and errs[2][0] < errs[0][0] / 1000, str(errs))
        check("step: 9 all-reduces done, the 10th next, no step notice",
              ctxs[0].step() == (10, 0), str(ctxs[0].step()))
        raises("resync without a step notice", inart.InartStateError, ctxs[0].resync,
               ["no step notice"])
        st = ctxs[0].stats()
        check("stats counts the all-reduces", st["allreduces"] == 9 and st["timeouts"] == 0, str(st))
        for c in ctxs:
            c.close()
        # the DDP hook, called directly
        states = [it.State(paths["topo"], paths["jobs"], plan, paths["deploy"], rank=r,
                           world_size=2, timeout=10) for r in (0, 1)]
        futs = both(lambda r: it.allreduce_hook(states[r], Bucket(0, torch.full((1000,), 2.0 + 2 * r)))
                    .wait())
        check("hook: the average (2 + 4) / 2", all(isinstance(x, torch.Tensor) and
                                                   bool((x == 3.0).all()) for x in futs),
              repr(futs)[:200])
        futs = both(lambda r: it.allreduce_hook(states[r], Bucket(1, torch.full(
            (777,), 0.5 * (r + 1), dtype=torch.float64))).wait())
        check("hook: float64 bucket converted and back",
              all(isinstance(x, torch.Tensor) and x.dtype == torch.float64 and
                  bool((x == 0.75).all()) for x in futs), repr(futs)[:200])
        # the backward's last bucket, nothing queued: reduced in the caller's
        # thread (the future is complete when the hook returns)
        futs = both(lambda r: (lambda f: (f.done(), f.wait()))(it.allreduce_hook(
            states[r], Bucket(3, torch.full((2000,), 1.0 + r), last=True))))
        check("hook: last bucket reduced at once in the caller's thread, the average",
              all(isinstance(x, tuple) and x[0] and bool((x[1] == 1.5).all()) for x in futs),
              repr(futs)[:300])
        last = states[0].iterations[-1]
        parts = last["wait_s"] + last["barrier_s"] + last["c_s"] + last["post_s"]
        check("hook: comm_s = wait + barrier (none: no sync) + C + post",
              abs(parts - last["comm_s"]) < 1e-6 and last["barrier_s"] == 0 and
              min(last["wait_s"], last["c_s"], last["post_s"]) >= 0, str(last))
        futs = both(lambda r: it.allreduce_hook(states[r], Bucket(2, torch.zeros(
            5, dtype=torch.int64))).wait())
        check("hook: an int64 bucket fails the future with InartDtypeError",
              all(isinstance(x, Exception) and "InartDtypeError" in str(x) or
                  isinstance(x, inart.InartDtypeError) for x in futs), repr(futs)[:300])
        check("hook: state failed after the refusal", all(s.failed for s in states))
        for s in states:
            s.close()
        t0 = time.monotonic()
        raises("hook after close: the bucket fails (no hang)", RuntimeError,
               lambda: it.allreduce_hook(states[0], Bucket(0, torch.ones(10))).wait(),
               ["Inart"])
        check("hook after close fails at once", time.monotonic() - t0 < 1.0)
        # the start barrier (sync=True, the same on every rank)
        states = [it.State(paths["topo"], paths["jobs"], plan, paths["deploy"], rank=r,
                           world_size=2, timeout=10, sync=True) for r in (0, 1)]
        futs = both(lambda r: [it.allreduce_hook(states[r], Bucket(i, torch.full(
            (500 + i,), 1.0 + r), last=i == 1)).wait() for i in (0, 1)])
        check("hook, sync=True: two buckets averaged",
              all(isinstance(x, list) and all(bool((y == 1.5).all()) for y in x) for x in futs),
              repr(futs)[:300])
        last = states[1].iterations[-1]
        check("hook, sync=True: one barrier per backward, in comm_s",
              last["buckets"] == 2 and last["barrier_s"] > 0 and
              abs(last["wait_s"] + last["barrier_s"] + last["c_s"] + last["post_s"] -
                  last["comm_s"]) < 1e-6, str(last))
        for s in states:
            s.close()
        # a PS that does not answer
        ctxs = [inart.Context(paths["topo"], paths["jobs"], plan, paths["deploy"], rank=r,
                              timeout=1.0) for r in (0, 1)]
        both(lambda r: ctxs[r].allreduce(torch.ones(10), timeout=10))
        ps.send_signal(signal.SIGSTOP)
        t0 = time.monotonic()
        res = both(lambda r: ctxs[r].allreduce(torch.ones(1000)))
        dt = time.monotonic() - t0
        check("PS stopped: InartTimeoutError naming the PS within 2 s (%.2f s)" % dt,
              dt < 2.0 and all(isinstance(x, inart.InartTimeoutError) and "p0 (%s)" % ip["p0"]
                               in str(x) and "no result arrived" in str(x) for x in res),
              repr(res)[:400])
        ps.send_signal(signal.SIGCONT)
        res = both(lambda r: ctxs[r].allreduce(torch.ones(1000)))
        check("PS answers again: the same contexts all-reduce again",
              all(isinstance(x, torch.Tensor) and bool((x == 2).all()) for x in res),
              repr(res)[:300])
        check("stats count the timeout", ctxs[0].stats()["timeouts"] == 1, str(ctxs[0].stats()))
        for c in ctxs:
            c.close()
        raises("a closed context", inart.InartStateError,
               lambda: ctxs[0].allreduce(torch.ones(3)), ["closed"])
    finally:
        ps.send_signal(signal.SIGCONT)
        ps.terminate()
        ps.wait(5)


def main():
    if len(sys.argv) != 3:
        print("usage: test_unit.py INART LIBINART_WORKER", file=sys.stderr)
        return 2
    inart_bin = os.path.abspath(sys.argv[1])
    os.environ["INART_WORKER_LIB"] = os.path.abspath(sys.argv[2])
    for k in ("INART_TOPO", "INART_JOBS", "INART_PLAN", "INART_DEPLOY", "INART_JOB", "WORLD_SIZE"):
        os.environ.pop(k, None)
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print("test_unit.py: %s (scripts/deps.sh installs python3-torch, python3-numpy)" % e)
        if os.environ.get("INART_NO_SKIP") == "1":
            print("0 passed, 1 failed")
            return 1
        print("0 passed, 0 failed, all skipped")
        return 77
    import inart
    pid = os.getpid()
    base = "127.%d.%d" % (100 + pid % 150, (pid // 150) % 250)
    with tempfile.TemporaryDirectory(prefix="inart-pyunit-") as tmp:
        paths, ip = files(tmp, base)
        paths["plan"] = os.path.join(tmp, "plan.json")
        subprocess.run([inart_bin, "plan", paths["topo"], paths["jobs"], "--algo", "ps", "-o",
                        paths["plan"]], check=True, capture_output=True)
        other = os.path.join(tmp, "jobs_other.json")
        json.dump({"jobs": [{"id": "jx", "workers": ["w1"], "ps": ["p1"],
                             "gradient_bytes": 10}]}, open(other, "w"))
        paths["plan_other"] = os.path.join(tmp, "plan_other.json")
        subprocess.run([inart_bin, "plan", paths["topo"], other, "-o", paths["plan_other"]],
                       check=True, capture_output=True)
        far = json.load(open(paths["deploy"]))
        far["nodes"]["w0"]["ip"] = "192.0.2.1"   # TEST-NET-1: never on this host
        paths["deploy_far"] = os.path.join(tmp, "deploy_far.json")
        json.dump(far, open(paths["deploy_far"], "w"))
        offline_checks(inart, tmp, paths)
        loopback_checks(inart, inart_bin, tmp, paths, ip)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
