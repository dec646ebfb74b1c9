#!/usr/bin/python3
"""mininet_allreduce.py: InArt against a baseline on a Mininet fat-tree.

    sudo /usr/bin/python3 examples/mininet_allreduce.py [--k 4] [--values N]
         [--iters K] [--baseline atp] [--workers W] [--mbps M] [--cli]

Builds a k-ary fat-tree (`inart topo gen fattree`) as a Mininet network of
InartSwitch (inart switchd) and InartHost nodes, links at the topology's
capacities x a rate scale (the fastest at --mbps, default 20 Mbit/s), one job of W workers
in the first pods with two PSs in the last pod; plans the job with InArt and
with the baseline, installs each plan, runs the all-reduce of N float32
values K times on every worker host (examples/allreduce.c, each result
checked bit for bit) and prints, per plan, the model's prediction at the
emulated rates next to the measured median iteration.  --cli leaves
Mininet's CLI open (with its `inart` command) before stopping.

Run from the checkout after building (meson setup build && ninja -C build),
or set INART_BIN and INART_ALLREDUCE.  With 20 software switches on a
2-core machine the run can be CPU-bound rather than link-bound: the
measured times then say more about the machine than about the plans.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from mininet.log import setLogLevel  # noqa: E402
from mininet.net import Mininet  # noqa: E402

from inart import mininet as im  # noqa: E402

HEADER_FACTOR = 1514.0 / 1432.0   # frame bytes per gradient byte (docs/emulator.md)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--values", type=int, default=200000)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--baseline", default="atp")
    ap.add_argument("--mbps", type=float, default=20.0,
                    help="the fastest link's emulated rate (Mbit/s)")
    ap.add_argument("--cli", action="store_true")
    a = ap.parse_args()
    if os.geteuid() != 0:
        ap.error("needs root (Mininet)")
    setLogLevel("error")
    tmp = tempfile.mkdtemp(prefix="inart-mnex-")
    topo_path, jobs_path = os.path.join(tmp, "topo.json"), os.path.join(tmp, "jobs.json")
    subprocess.run([im.find_inart(), "topo", "gen", "fattree", "--k", str(a.k), "-o", topo_path],
                   check=True)
    hosts = a.k ** 3 // 4
    if a.workers + 2 > hosts:
        ap.error("--workers: at most %d on a k=%d fat-tree" % (hosts - 2, a.k))
    job = {"id": "j0", "workers": ["h%d" % i for i in range(a.workers)],
           "ps": ["h%d" % (hosts - 2), "h%d" % (hosts - 1)], "gradient_bytes": 4 * a.values}
    with open(jobs_path, "w") as f:
        json.dump({"jobs": [job]}, f)

    with open(topo_path) as f:
        scale = im.auto_rate_scale(json.load(f), a.mbps)
    topo = im.InartTopo(topo_path, jobs_path, rate_scale=scale)
    net = Mininet(topo=topo, controller=None, autoSetMacs=False)
    try:
        net.start()
        ia = im.Inart(net)
        print("fat-tree k=%d, %d workers, PSs %s, %d values x %d iterations, rate scale %g"
              % (a.k, a.workers, ",".join(job["ps"]), a.values, a.iters, topo.rate_scale))
        print("%-10s %14s %13s" % ("algorithm", "predicted ms", "measured ms"))
        for algo in ("inart", a.baseline):
            plan = ia.plan(algo)
            pred = ia.evaluate(plan)["comm_time_s"] * 1e3 / topo.rate_scale * HEADER_FACTOR
            ia.install(plan)
            ms = im.iteration_ms(ia.allreduce(values=a.values, iters=a.iters))
            print("%-10s %14.1f %13.1f" % (algo, pred, statistics.median(ms)), flush=True)
        if a.cli:
            im.InartCLI(net)
    finally:
        net.stop()
        im.cleanup()
        subprocess.run(["rm", "-rf", tmp])
    return 0


if __name__ == "__main__":
    sys.exit(main())
