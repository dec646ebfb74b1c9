"""test_netns.py INART LIBINART_WORKER: the Python package through real sockets.

Builds racks of network namespaces with python/inart/fabric.py (workers under
an INA switch t0, t0 -- t1, PSs p0 and p1 under t1, links shaped to 100
Mbit/s with tc tbf), runs switchd, ps and the ranks of
tests/python/inart_ranks.py in the worker namespaces, and checks:

  - with 2 and with 4 workers: the DDP hook's gradients against gloo's
    all-reduce within the documented bound, for three bucket caps (every
    parameter alone, some together, one bucket), sizes that are not
    multiples of a packet's 358 values, float64 buckets; inart.allreduce of
    1..5000 values; t0 aggregated;
  - bad input (2 workers): dtype, layout, NaN, rank / world size against the
    plan and the process group, another job's plan, a PS and a switch that
    do not answer: the named exception within a bounded time, and the
    process group and the InArt state usable afterwards;
  - a short seeded training (examples/ddp_digits.py, 2 workers, 6 epochs):
    the InArt run's test accuracy within 1 point of the gloo run's.

Root and Debian's python3-torch needed; exits 77 (skipped) otherwise, or 1
with INART_NO_SKIP=1.  Prints "N passed, N failed".
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

from report import bad, ok, skip_all, summary  # noqa: E402


def files(tmp, workers):
    import ddp_digits
    # a gradient of 5000 values: the largest all-reduce of grads_mode
    topo, jobs = ddp_digits.rack(workers, 100.0, 5000)
    tp, jp = os.path.join(tmp, "topo%d.json" % workers), os.path.join(tmp, "jobs%d.json" % workers)
    json.dump(topo, open(tp, "w"))
    json.dump(jobs, open(jp, "w"))
    return tp, jp


def run_ranks(fab, mode, workers, plan, extra_env=None, timeout=240, script="inart_ranks.py"):
    """Run `script` [mode] on workers w0.. of the fabric; one check per rank
    (its exit status and its "ok"/"FAIL" lines), rank 0's indented lines
    printed."""
    env = {"INART_PLAN": plan, "PYTHONPATH": os.path.join(ROOT, "python")}
    env.update(extra_env or {})
    nodes = ["w%d" % i for i in range(workers)]
    t0 = time.monotonic()
    res = fab.run(nodes, [sys.executable, os.path.join(HERE, script)] + ([mode] if mode else []),
                  env=env, timeout=timeout)
    mode = mode or script
    dt = time.monotonic() - t0
    for r, (rc, out) in enumerate(res):
        lines = out.splitlines()
        n_ok = sum(1 for line in lines if line.startswith("ok "))
        fails = [line for line in lines if line.startswith("FAIL ")]
        name = "%s, %d workers, rank %d (%d checks, %.0f s)" % (mode, workers, r, n_ok, dt)
        if rc == 0 and not fails and n_ok > 0:
            ok(name)
            if r == 0:
                for line in lines:
                    if line.startswith("   "):
                        print("  " + line.strip(), flush=True)
        else:
            bad(name + ": exit %s" % rc, "\n".join(fails) + "\n" + out[-4000:])


def aggregated(fab):
    from inart.fabric import tree_counters
    return tree_counters(fab.stats("t0")).get("aggregated", 0)


def grads(tmp, workers):
    from inart.fabric import Fabric
    tp, jp = files(tmp, workers)
    with Fabric(tp, jp, queue_ms=10) as fab:
        plan = fab.plan("inart")
        fab.install(plan)
        run_ranks(fab, "grads", workers, plan)
        n = aggregated(fab)
        (ok if n > 0 else bad)("%d workers: t0 aggregated contributions (%d)" % (workers, n))


def bad_input(tmp):
    from inart.fabric import Fabric
    tp, jp = files(tmp, 2)
    other_jobs = os.path.join(tmp, "jobs_other.json")
    json.dump({"jobs": [{"id": "jx", "workers": ["w1", "w0"], "ps": ["p1"],
                         "gradient_bytes": 1000}]}, open(other_jobs, "w"))
    broken = os.path.join(tmp, "broken_plan.json")
    open(broken, "w").write('{"jobs": [ broken')
    with Fabric(tp, jp, queue_ms=10) as fab:
        plan = fab.plan("inart")
        other = os.path.join(tmp, "plan_other.json")
        subprocess.run([fab.inart, "plan", tp, other_jobs, "-o", other], check=True,
                       capture_output=True)
        fab.install(plan)
        env = {"TEST_OTHER_PLAN": other, "TEST_BROKEN_PLAN": broken,
               "TEST_PS_PIDS": ",".join(str(fab.daemons[p].pid) for p in ("p0", "p1")),
               "TEST_SWITCH_PID": str(fab.daemons["t1"].pid)}
        run_ranks(fab, "bad", 2, plan, env)


def training(tmp):
    import argparse
    import ddp_digits
    args = argparse.Namespace(workers=2, mbps=100.0, epochs=6, batch=32, hidden=64, lr=0.05,
                              seed=1, bucket_mb=25.0, timeout=20.0, warmup=3, queue_ms=10.0,
                              pace=1.05, sync=False, backends=["inart", "gloo"],
                              run_timeout=180.0)
    t0 = time.monotonic()
    try:
        out = ddp_digits.compare(args)
    except Exception as e:
        bad("training run", repr(e))
        return
    a, g = out["results"]["inart"], out["results"]["gloo"]
    name = ("training, 2 workers, 6 epochs (%.0f s): test accuracy InArt %.2f%%, gloo %.2f%%, "
            "difference %+.2f points (within 1)" % (time.monotonic() - t0, a["final_acc"],
                                                   g["final_acc"], a["final_acc"] - g["final_acc"]))
    (ok if abs(a["final_acc"] - g["final_acc"]) <= 1.0 else bad)(name)
    (ok if a["final_acc"] >= 80.0 else bad)("training learned (InArt accuracy %.2f%% >= 80%%)"
                                             % a["final_acc"])
    (ok if a["t0"]["aggregated"] > 0 and g["t0"]["aggregated"] == 0 else bad)(
        "training: t0 aggregated the InArt run only (%d vs %d)"
        % (a["t0"]["aggregated"], g["t0"]["aggregated"]))
    print("  comm time per iteration, median: InArt %.1f ms, gloo %.1f ms (not checked here: "
          "bench/python_bench.sh measures it)" % (a["comm_med"] * 1e3, g["comm_med"] * 1e3))


def main():
    if len(sys.argv) != 3:
        print("usage: test_netns.py INART LIBINART_WORKER", file=sys.stderr)
        return 2
    os.environ["INART_BIN"] = os.path.abspath(sys.argv[1])
    os.environ["INART_WORKER_LIB"] = os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        skip_all("test_netns.py", "not root")
    try:
        import torch  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as e:
        skip_all("test_netns.py", "%s (scripts/deps.sh installs python3-torch, python3-sklearn)" % e)
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        skip_all("test_netns.py", "'ip netns' unavailable")
    only = os.environ.get("INART_PY_ONLY", "grads2,bad,grads4,train").split(",")
    with tempfile.TemporaryDirectory(prefix="inart-pytest-") as tmp:
        if "grads2" in only:
            grads(tmp, 2)
        if "bad" in only:
            bad_input(tmp)
        if "grads4" in only:
            grads(tmp, 4)
        if "train" in only:
            training(tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
