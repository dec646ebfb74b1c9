"""test_backend.py INART LIBINART_WORKER BUILD_DIR: the "inart" torch.distributed backend.

Builds (or loads from BUILD_DIR/torch_ext, where it is cached) the
backend's C++ half; runs torchrun with two ranks on the host (no InArt
job: the gloo path); then the rack of tests/python/test_netns.py (two,
then four workers under the INA switch t0, PSs p0 and p1 behind t1, links shaped to
100 Mbit/s, python/inart/fabric.py), installs the plan and runs
tests/python/backend_ranks.py on every worker (with four workers only
the collectives and the training): init_process_group("inart")
with env://, file://, tcp:// and a given store; every collective and dtype
against a reference; DDP and DDP + ZeroRedundancyOptimizer against gloo;
a stopped PS raising within the timeout, the group refusing InArt
collectives until inart.torch.resync(); init mismatches named; the PSs
killed (2 workers), the PS p0 or the switch t1 (its own network) killed
mid-training with 4 workers, the error naming as silent exactly the
node(s) killed.

Root and Debian's python3-torch needed; exits 77 (skipped) otherwise, or 1
with INART_NO_SKIP=1.  Prints "N passed, N failed".
"""
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

from report import bad, ok, skip_all, summary  # noqa: E402


def main():
    if len(sys.argv) != 4:
        print("usage: test_backend.py INART LIBINART_WORKER BUILD_DIR", file=sys.stderr)
        return 2
    os.environ["INART_BIN"] = os.path.abspath(sys.argv[1])
    os.environ["INART_WORKER_LIB"] = os.path.abspath(sys.argv[2])
    os.environ.setdefault("INART_TORCH_EXT_DIR", os.path.join(os.path.abspath(sys.argv[3]),
                                                              "torch_ext"))
    if os.geteuid() != 0:
        skip_all("test_backend.py", "not root")
    try:
        import torch  # noqa: F401
    except ImportError as e:
        skip_all("test_backend.py", "%s (scripts/deps.sh installs python3-torch)" % e)
    t0 = time.monotonic()
    try:
        from inart import backend
        backend.extension()
    except Exception as e:
        bad("the backend's C++ half builds", str(e))
        return summary()
    ok("the backend's C++ half built or loaded from %s (%.0f s)"
       % (os.environ["INART_TORCH_EXT_DIR"], time.monotonic() - t0))
    # torch's build lock left by a process killed mid-build (a file d/lock):
    # a new process removes it under the backend's own lock and loads the
    # cached build (before, it waited on the file forever)
    import subprocess
    stale = os.path.join(os.environ["INART_TORCH_EXT_DIR"], "lock")
    open(stale, "w").close()
    try:
        r = subprocess.run([sys.executable, "-c", "import inart.backend as b; b.extension()"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
        name = "a stale torch build lock in the cache is removed and the build loaded"
        if r.returncode == 0 and not os.path.exists(stale):
            ok(name)
        else:
            bad(name, r.stderr[-1500:])
    except subprocess.TimeoutExpired:
        bad("a stale torch build lock in the cache is removed and the build loaded",
            "the process still waited after 120 s")
    finally:
        try:
            os.unlink(stale)
        except FileNotFoundError:
            pass
    # torchrun's launch on this host (no InArt job here: Options(ina=False)).
    # --redirects/--tee: torch 1.13's elastic agent fails on Python 3.11
    # with their default 0 (Std.from_str misses NONE), so 1 (stdout) each.
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                        "--master_port", "29563", "--redirects", "1", "--tee", "1",
                        os.path.join(HERE, "backend_ranks.py"), "torchrun"],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    n_ok = r.stdout.count(":ok torchrun")
    name = ("torchrun --nproc_per_node 2: init_process_group('inart'), all_reduce (%d checks)"
            % n_ok)
    if r.returncode == 0 and "FAIL" not in r.stdout and n_ok == 6:
        ok(name)
    else:
        bad(name, r.stdout[-2000:] + r.stderr[-2000:])
    # 2 workers: everything; 4 workers: the collectives, the training, a PS
    # stopped then resync(), the PS p0 killed; then a new network for the
    # switch t1 killed
    for workers, steps in ((2, "all"), (4, "collectives,training,ps_stopped,destroy,p0_killed"),
                           (4, "destroy,switch_killed")):
        on_rack(workers, steps)
    return summary()


def on_rack(workers, steps):
    from test_netns import files, run_ranks
    from inart.fabric import Fabric, tree_counters
    with tempfile.TemporaryDirectory(prefix="inart-backend-") as tmp:
        tp, jp = files(tmp, workers)
        jobs_more = os.path.join(tmp, "jobs_more.json")   # one worker more than the ranks
        j = json.load(open(jp))
        j["jobs"][0]["workers"] = ["w%d" % i for i in range(workers + 1)]
        json.dump(j, open(jobs_more, "w"))
        with Fabric(tp, jp, queue_ms=10) as fab:
            plan = fab.plan("inart")
            fab.install(plan)
            env = {"TEST_TMP": tmp, "TEST_JOBS_MORE": jobs_more, "TEST_STEPS": steps,
                   "TEST_PS_PIDS": ",".join(str(fab.daemons[p].pid) for p in ("p0", "p1")),
                   "TEST_SWITCH_PID": str(fab.daemons["t1"].pid),
                   "INART_TORCH_EXT_DIR": os.environ["INART_TORCH_EXT_DIR"]}
            run_ranks(fab, None, workers, plan, env, timeout=300, script="backend_ranks.py")
            if steps.endswith("switch_killed"):
                return
            n = tree_counters(fab.stats("t0")).get("aggregated", 0)
            (ok if n > 0 else bad)("%d workers: t0 aggregated the backend's all-reduces (%d)"
                                   % (workers, n))


if __name__ == "__main__":
    sys.exit(main())
