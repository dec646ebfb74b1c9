"""test_mininet.py INART ALLREDUCE: InArt's nodes in Mininet (python/inart/mininet.py).

  - topologies both ways: every shipped topology file (examples/, tests/data/)
    and generated ones (fat-tree, leaf-spine, BCube) -> InartTopo ->
    export_topo gives the same topology back (the same JSON objects, and the
    same `inart topo describe`); a topology built in Python with Mininet's
    Topo API -> export_topo -> a file `inart topo check` accepts -> InartTopo
    -> export_topo gives the first export back;
  - InartLink refuses delay=, jitter= and loss= with a message naming
    switchd's own loss options (no netem here), and a bw= Mininet would ignore;
  - a 2-switch topology up in Mininet (InartSwitch, InartHost, InartLink):
    plan with InArt, install, 10 all-reduces of 100000 values, exact at
    every worker, the INA switch aggregated, a program run on the job's
    hosts with torchrun's variables; net.stop(): no interface with
    the run's prefix, no process of the run (daemons, node shells) and no
    run directory left;
  - `mn --custom python/inart/mininet.py --topo inart,TOPO,JOBS`: the CLI's
    `inart plan`, `inart install`, `inart allreduce` and a ping.

Needs Mininet (Debian's mininet, for /usr/bin/python3) and root for the
networks; exits 77 (skipped) otherwise, or 1 with INART_NO_SKIP=1.  Never
runs Mininet's own clean-up (mn -c).  Prints "N passed, N failed".
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
DATA = os.path.join(ROOT, "tests", "data", "mininet")

from report import bad, ok, skip_all, summary  # noqa: E402


def inart(*args):
    return subprocess.run([os.environ["INART_BIN"]] + list(args), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def shipped_topologies(tmp):
    files = [os.path.join(ROOT, "examples", "two_racks", "topo.json"),
             os.path.join(ROOT, "tests", "data", "tiny_topo.json")]
    files += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "*", "topo.json")))
    for name, argv in (("fattree4", ["fattree", "--k", "4"]),
                       ("leafspine", ["leafspine", "--spines", "2", "--leaves", "3",
                                      "--hosts", "2", "--ina", "tor"]),
                       ("bcube", ["bcube", "--n", "3", "--k", "1"])):
        p = os.path.join(tmp, name + ".json")
        r = inart("topo", "gen", *argv, "-o", p)
        if r.returncode != 0:
            bad("topo gen %s" % name, r.stderr)
            continue
        files.append(p)
    return files


def round_trips(tmp):
    from mininet.topo import Topo
    from inart.mininet import InartTopo, export_topo
    for path in shipped_topologies(tmp):
        name = os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path)
        with open(path) as f:
            orig = json.load(f)
        back = export_topo(InartTopo(path), os.path.join(tmp, "back.json"))
        if back != orig:
            bad("round trip %s: the JSON differs" % name,
                json.dumps(orig)[:300] + "\n" + json.dumps(back)[:300])
            continue
        d1, d2 = inart("topo", "describe", path), inart("topo", "describe",
                                                       os.path.join(tmp, "back.json"))
        # the first line names the file
        if d1.returncode != 0 or d1.stdout.split("\n", 1)[1] != d2.stdout.split("\n", 1)[1]:
            bad("round trip %s: describe differs" % name, d1.stdout + d1.stderr + d2.stdout)
        else:
            ok("round trip %s" % name)

    # Mininet's own Topo API -> file -> InartTopo -> file
    t = Topo()
    for i in range(4):
        t.addHost("h%d" % (i + 1))
    for s in ("s1", "s2", "s3"):
        t.addSwitch(s)
    t.addLink("h1", "s1", bw=10)
    t.addLink("h2", "s1", bw=10)
    t.addLink("h3", "s2", bw=10)
    t.addLink("h4", "s2", bw=10)
    t.addLink("s1", "s3", bw=40)
    t.addLink("s2", "s3", bw=40, params1={"bw": 40}, params2={"bw": 20})
    p1 = os.path.join(tmp, "mn1.json")
    first = export_topo(t, p1, rate_scale=0.001, ina={"agg_gbps": 400, "trees": 4})
    r = inart("topo", "check", p1)
    if r.returncode != 0:
        bad("Mininet Topo exported: inart topo check", r.stdout + r.stderr)
        return
    again = export_topo(InartTopo(p1, rate_scale=0.001))
    links = {(l["a"], l["b"]): l for l in first["links"]}
    if again != first:
        bad("Mininet Topo -> file -> InartTopo -> file", json.dumps(first) + "\n" +
            json.dumps(again))
    elif links[("h1", "s1")].get("gbps") != 10 or links[("s2", "s3")].get("ba_gbps") != 20:
        bad("Mininet Topo exported: capacities", json.dumps(first["links"]))
    elif not all(n.get("ina") for n in first["nodes"] if n["kind"] == "switch"):
        bad("Mininet Topo exported: ina", json.dumps(first["nodes"]))
    else:
        ok("Mininet Topo -> file -> InartTopo -> file")


def refusals():
    from inart.mininet import InartLink
    for kw in ({"delay": "5ms"}, {"loss": 1}, {"jitter": "1ms"},
               {"params1": {"delay": "2ms"}}):
        try:
            InartLink("a", "b", **kw)
            bad("InartLink %s: accepted" % kw)
        except ValueError as e:
            m = str(e)
            if "no netem" in m and "--rx-loss" in m:
                ok("InartLink refuses %s" % list(kw)[0])
            else:
                bad("InartLink %s: message" % kw, m)
    try:
        InartLink("a", "b", bw=5000)
        bad("InartLink bw=5000: accepted (Mininet would ignore it)")
    except ValueError as e:
        ok("InartLink refuses bw=5000") if "rate scale" in str(e) else bad("bw msg", e)


def leftovers(prefix, pids):
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    mine = [l for l in links.splitlines() if (": %s" % prefix) in l]
    deadline = time.monotonic() + 5
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if os.path.exists("/proc/%d" % p)
                 and "State:\tZ" not in open("/proc/%d/status" % p).read()]
        time.sleep(0.1)
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return mine, alive, [n for n in netns.split() if n.startswith(prefix)]


def network(prefix):
    from mininet.net import Mininet
    from inart import mininet as im
    topo = im.InartTopo(os.path.join(DATA, "topo.json"), os.path.join(DATA, "jobs.json"),
                        prefix=prefix)
    net = Mininet(topo=topo, controller=None, autoSetMacs=False)
    pids, rundir = [], None
    try:
        net.start()
        rundir = im.run_dir()
        pids = [n.pid for n in net.hosts + net.switches]
        pids += [n.daemon.pid for n in net.hosts + net.switches if n.daemon is not None]
        if len(pids) != 7 + 2 + 2:
            bad("mininet: node shells and daemons", pids)
        ia = im.Inart(net)
        plan = ia.plan("inart")
        ia.install(plan)
        res = ia.allreduce(values=100000, iters=10)
        ms = im.iteration_ms(res)
        if len(ms) != 10 or len(res["j0"]) != 3 or any(r["rc"] != 0 for r in res["j0"]):
            bad("mininet: 10 all-reduces", json.dumps(res)[:500])
        else:
            ok("mininet: 10 all-reduces of 100000 values exact at 3 workers (%.1f-%.1f ms)"
               % (min(ms), max(ms)))
        used = json.load(open(plan))
        aggs = {f["agg"] for j in used["jobs"] for f in j["flows"]}
        st = ia.stats("e0") if "e0" in aggs else None
        text = json.dumps(st) if st else ""
        total = sum(int(x) for x in re.findall(r'"aggregated": (\d+)', text))
        if "e0" not in aggs:
            bad("mininet: InArt's plan aggregates at e0", json.dumps(used)[:400])
        elif total == 0:
            bad("mininet: e0 aggregated", text[:600])
        else:
            ok("mininet: e0 aggregated")
        got = ia.run("j0", ["sh", "-c", 'echo "$RANK/$WORLD_SIZE $MASTER_ADDR $INART_PLAN"'])
        want = [(0, "%d/3 %s %s\n" % (r, net.get(prefix + "w0").IP(), plan)) for r in range(3)]
        if got != want:
            bad("mininet: run on the job's hosts", "%s\n%s" % (got, want))
        else:
            ok("mininet: run on the job's hosts (torchrun's variables)")
        try:
            ia.stats("nosuch")
            bad("mininet: stats of an unknown node")
        except KeyError:
            ok("mininet: stats of an unknown node refused")
    except Exception as e:  # noqa: BLE001 -- the test reports and cleans up
        bad("mininet: the run", repr(e))
    finally:
        net.stop()
        im.cleanup()
    mine, alive, ns = leftovers(prefix, pids)
    if mine or alive or ns or (rundir and os.path.exists(rundir)):
        bad("mininet: leftovers", "links %s, processes %s, namespaces %s, run dir %s"
            % (mine, alive, ns, rundir if rundir and os.path.exists(rundir) else None))
    else:
        ok("mininet: stopped, nothing of the run left")


def mn_cli(prefix):
    cmds = "inart plan inart\ninart install\ninart allreduce 5000 3\nw0 ping -c1 -W2 p1\nexit\n"
    r = subprocess.run(["mn", "--custom", os.path.join(ROOT, "python", "inart", "mininet.py"),
                        "--topo", "inart,%s,%s" % (os.path.join(DATA, "topo.json"),
                                                   os.path.join(DATA, "jobs.json")),
                        "--switch", "inart", "--host", "inart", "--controller", "none"],
                       input=cmds, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    want = ["predicted", "installed", "5000 values x 3 iterations, exact", "1 received"]
    missing = [w for w in want if w not in out]
    if r.returncode != 0 or missing:
        bad("mn --custom: CLI session", "exit %d, missing %s\n%s" % (r.returncode, missing,
                                                                     out[-1500:]))
    else:
        ok("mn --custom: plan, install, allreduce, ping")


def main():
    if len(sys.argv) != 3:
        print("usage: test_mininet.py INART ALLREDUCE", file=sys.stderr)
        return 2
    os.environ["INART_BIN"] = os.path.abspath(sys.argv[1])
    os.environ["INART_ALLREDUCE"] = os.path.abspath(sys.argv[2])
    try:
        import mininet.net  # noqa: F401
    except ImportError as e:
        skip_all("test_mininet.py", "%s (scripts/deps.sh installs Debian's mininet)" % e)
    with tempfile.TemporaryDirectory(prefix="inart-mntest-") as tmp:
        round_trips(tmp)
        refusals()
        if os.geteuid() != 0:
            skip_all("test_mininet.py", "not root (the checks above ran)")
        network("m%d" % (os.getpid() % 10000))
        mn_cli("")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
