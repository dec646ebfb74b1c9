"""mininet: InArt's switch, PS and worker as Mininet nodes.

For researchers who build their testbeds with Mininet (2.3.0, Debian's
`mininet` package, for /usr/bin/python3; no Open vSwitch needed):

    InartSwitch   a Mininet Switch that runs `inart switchd` on its interfaces,
                  always in a network namespace of its own (Mininet's
                  inNamespace), with its control socket in the run directory;
    InartHost     a Mininet Host; on a PS of the jobs (param ps=True) it runs
                  `inart ps` bound to its address;
    InartLink     a TCLink with bw= only: this kernel has no netem, so
                  delay=, jitter= and loss= are refused (switchd emulates loss
                  itself: `inart switchd --rx-loss P` / `--tx-loss P`, given
                  through the InartSwitch param switchd_args);
    InartTopo     a project topology file (docs/formats.md) as a Mininet Topo,
                  link bandwidths = capacities x a rate scale;
    export_topo   a Mininet Topo (built in Python or from a file) as a project
                  topology, for `inart plan`;
    Inart         plan, install, all-reduce and counters on a running net;
    InartCLI      Mininet's CLI with an `inart` command.

Used two ways: imported (`from inart.mininet import ...`, see
examples/mininet_allreduce.py), or as a custom file of `mn`:

    sudo mn --custom python/inart/mininet.py --topo inart,TOPO[,JOBS] \\
            --switch inart --host inart --controller none
    mininet> inart plan inart
    mininet> inart install
    mininet> inart allreduce

This file is also read by `mn --custom`, which runs it with exec() and copies
every top-level name into its own globals: so it imports nothing from the
inart package, and its top-level names are those below (CLI replaces
mn's CLI class by InartCLI; the rest are new names).

Clean-up: never Mininet's own (`mn -c` kills processes by name and deletes
files broadly).  net.stop() stops every switch and host: each ends the
daemon it started by its PID and removes its control socket; the run
directory (RUN_DIR, one per Python process) is removed by cleanup(), which
Inart.close() and the mn custom entry call at exit.  Node names (and so
interface names) may carry a per-run prefix: InartTopo(..., prefix=...).
"""
import atexit
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from mininet.cli import CLI as _MnCLI
from mininet.link import TCLink
from mininet.node import Host, Switch
from mininet.topo import Topo

INART_PORT = 47470
MAX_MBPS = 1000.0      # Mininet's TCLink ignores (with a warning) a bw above this
SOCKET_WAIT_S = 10.0


def _find(prog, env):
    """A program of the project: $env, the checkout's build/, or PATH."""
    if os.environ.get(env):
        return os.environ[env]
    try:
        here = os.path.dirname(os.path.abspath(__file__))
    except NameError:  # mn --custom execs this file: no __file__
        here = os.getcwd()
    for up in ("..", os.path.join("..", "..")):
        p = os.path.normpath(os.path.join(here, up, "build", prog))
        if os.path.exists(p):
            return p
    p = os.path.normpath(os.path.join(os.getcwd(), "build", prog))
    if os.path.exists(p):
        return p
    return shutil.which(prog) or prog


def find_inart():
    """The inart program: $INART_BIN, the checkout's build/inart, or PATH."""
    return _find("inart", "INART_BIN")


def find_allreduce():
    """The example worker (examples/allreduce.c): $INART_ALLREDUCE or build/allreduce."""
    return _find("allreduce", "INART_ALLREDUCE")


_run_dir = []


def run_dir():
    """This process's run directory (control sockets, logs, files): made on
    first use, removed by cleanup()."""
    if not _run_dir:
        _run_dir.append(tempfile.mkdtemp(prefix="inart-mn-%d-" % os.getpid()))
        atexit.register(cleanup)
    return _run_dir[0]


def cleanup():
    """Remove the run directory (the daemons have been stopped by net.stop())."""
    while _run_dir:
        shutil.rmtree(_run_dir.pop(), ignore_errors=True)


def _node_id(node):
    return node.params.get("inart_id", node.name)


def _stop(proc, timeout=3.0):
    """End a daemon started with Node.popen, by its PID."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _spawn(node, argv, env=None):
    """node.popen(argv) with its output into a temporary file: (proc, file)."""
    out = tempfile.TemporaryFile(mode="w+", dir=run_dir())
    return node.popen(list(argv), stdin=subprocess.DEVNULL, stdout=out,
                      stderr=subprocess.STDOUT, env=env), out


def _wait_all(procs, timeout_s):
    """Wait for every (proc, file) of _spawn, at most timeout_s in all (the
    rest are ended by PID): [(exit status or None, output)]."""
    deadline = time.monotonic() + timeout_s
    res = []
    for p, out in procs:
        try:
            rc = p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _stop(p, 1.0)
            rc = None
        out.seek(0)
        res.append((rc, out.read()))
        out.close()
    return res


def _wait_socket(path, proc, what):
    deadline = time.monotonic() + SOCKET_WAIT_S
    while not os.path.exists(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            log = path[:-len(".sock")] + ".log"
            try:
                with open(log) as f:
                    text = f.read()[-500:]
            except OSError:
                text = ""
            raise RuntimeError("inart.mininet: %s did not start (exit %s): %s"
                               % (what, proc.poll(), text.strip()))
        time.sleep(0.05)


class InartLink(TCLink):
    """A TCLink whose only shaping is bw= (Mbit/s, htb).  delay=, jitter= and
    loss= are refused: the kernel here has no netem."""

    REFUSED = ("delay", "jitter", "loss")

    def __init__(self, node1, node2, **params):
        for key in self.REFUSED:
            for p in (params, params.get("params1") or {}, params.get("params2") or {}):
                if p.get(key) not in (None, 0, "0", "0ms", ""):
                    raise ValueError(
                        "inart.mininet: link %s-%s: %s=%r refused: this kernel has no netem; "
                        "links take bw= only; switchd emulates loss itself: "
                        "InartSwitch(..., switchd_args=['--rx-loss', P]) or --tx-loss "
                        "(inart switchd --help)"
                        % (node1, node2, key, p.get(key)))
        for p in (params, params.get("params1") or {}, params.get("params2") or {}):
            bw = p.get("bw")
            if bw is not None and float(bw) > MAX_MBPS:
                raise ValueError("inart.mininet: link %s-%s: bw=%s Mbit/s is above Mininet's "
                                 "%g (it would be ignored): lower the rate scale"
                                 % (node1, node2, bw, MAX_MBPS))
        TCLink.__init__(self, node1, node2, **params)


class InartSwitch(Switch):
    """Runs `inart switchd --name ID --port IF,...` on the switch's interfaces,
    port i being its i-th interface in Mininet's port order, in the switch's
    own network namespace.  Params: inart_id (the topology's node id, default
    the name), switchd_args (a list of further switchd options, e.g.
    ["--rx-loss", "0.01"]), log_level (default "warn")."""

    def __init__(self, name, **params):
        params["inNamespace"] = True   # interfaces inside the switch, not the host's
        params.setdefault("dpid", "%016x" % (abs(hash(name)) % (1 << 48)))
        Switch.__init__(self, name, **params)
        self.daemon = None

    def ctl_path(self):
        return os.path.join(run_dir(), _node_id(self) + ".sock")

    def data_intfs(self):
        """The data interfaces in port order (switchd's --port list)."""
        return [i for i in self.intfList() if i.name != "lo"]

    def start(self, controllers):
        ctl = self.ctl_path()
        argv = [find_inart(), "switchd", "--name", _node_id(self),
                "--port", ",".join(i.name for i in self.data_intfs()), "--ctl", ctl,
                "--ring-frames", "1024", "--log-level", self.params.get("log_level", "warn")]
        argv += list(self.params.get("switchd_args", []))
        with open(ctl[:-len(".sock")] + ".log", "w") as log:
            self.daemon = self.popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT)
        _wait_socket(ctl, self.daemon, "switchd of %s" % self.name)

    def stop(self, deleteIntfs=True):
        _stop(self.daemon)
        self.daemon = None
        try:
            os.unlink(self.ctl_path())
        except OSError:
            pass
        Switch.stop(self, deleteIntfs)


class InartHost(Host):
    """A host whose interfaces send complete checksums (a user-space switch
    forwards frames as they are: `ethtool -K IF tx off`) and, with ps=True,
    runs `inart ps` on its address.  Params: inart_id, ps, log_level."""

    def __init__(self, name, **params):
        Host.__init__(self, name, **params)
        self.daemon = None

    def ctl_path(self):
        return os.path.join(run_dir(), _node_id(self) + ".sock")

    def config(self, **params):
        r = Host.config(self, **params)
        for intf in self.intfList():
            if intf.name != "lo":
                self.cmd("ethtool -K %s tx off >/dev/null 2>&1" % intf.name)
        if self.params.get("ps") and self.daemon is None:
            ctl = self.ctl_path()
            argv = [find_inart(), "ps", "--name", _node_id(self), "--bind", self.IP(),
                    "--ctl", ctl, "--log-level", self.params.get("log_level", "warn")]
            with open(ctl[:-len(".sock")] + ".log", "w") as log:
                self.daemon = self.popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
            _wait_socket(ctl, self.daemon, "ps of %s" % self.name)
        return r

    def terminate(self):
        _stop(self.daemon)
        self.daemon = None
        if self.params.get("ps"):
            try:
                os.unlink(self.ctl_path())
            except OSError:
                pass
        Host.terminate(self)


# -- topologies both ways ------------------------------------------------------------------

def _gbps(link):
    """(a->b, b->a) capacity of a topology file's link, Gbit/s."""
    g = link.get("gbps")
    return (float(link.get("ab_gbps", g)), float(link.get("ba_gbps", g)))


def auto_rate_scale(topo_json, fastest_mbps=100.0):
    """The rate scale that puts the topology's fastest link at fastest_mbps."""
    top = max((max(_gbps(l)) for l in topo_json["links"]), default=1.0)
    return fastest_mbps / (top * 1e3)


class InartTopo(Topo):
    """InartTopo(topo_path, jobs_path=None, rate_scale=None, prefix="")

    A project topology file as a Mininet Topo: every host and switch of the
    file (switches InartSwitch, hosts InartHost), every link an InartLink of
    bw = gbps x 1000 x rate_scale Mbit/s (rate_scale None: the fastest link
    at 100 Mbit/s).  With a jobs file, its PS hosts get ps=True.  Node names
    are prefix + id (the id stays in the param inart_id).  The file's node and
    link objects ride along as params, so export_topo gives the file back."""

    def build(self, topo_path, jobs_path=None, rate_scale=None, prefix=""):
        with open(topo_path) as f:
            t = json.load(f)
        self.topo_path = os.path.abspath(topo_path)
        self.jobs_path = os.path.abspath(jobs_path) if jobs_path else None
        self.prefix = prefix
        self.rate_scale = auto_rate_scale(t) if rate_scale is None else float(rate_scale)
        self.topo_extra = {k: v for k, v in t.items() if k not in ("nodes", "links")}
        ps = set()
        if jobs_path:
            with open(jobs_path) as f:
                for j in json.load(f)["jobs"]:
                    ps.update(j.get("ps", []))
        for n in t["nodes"]:
            name = prefix + n["id"]
            if len(name) + len("-eth99") > 15:
                raise ValueError("inart.mininet: node %s: name too long for interface names "
                                 "(at most 9 characters with the prefix)" % name)
            if n.get("kind") == "switch":
                self.addSwitch(name, cls=InartSwitch, inart_id=n["id"], inart=n)
            else:
                self.addHost(name, cls=InartHost, inart_id=n["id"], inart=n,
                             ps=n["id"] in ps)
        for i, l in enumerate(t["links"]):
            ab, ba = (g * 1e3 * self.rate_scale for g in _gbps(l))
            # each end shapes what it sends: a's interface a->b, b's b->a
            self.addLink(prefix + l["a"], prefix + l["b"], cls=InartLink,
                         params1={"bw": ab}, params2={"bw": ba}, inart=l, inart_index=i)


def export_topo(topo, path=None, rate_scale=None, ina=None, background_gbps=0.0):
    """A Mininet Topo (an InartTopo, or one built in Python) as a project
    topology (docs/formats.md): a dict, also written to path if given.

    Nodes and links that came from a file (param inart) are written as they
    were; others are built from Mininet's view: switches (kind "switch", with
    ina {"agg_gbps":..., "trees":...} from the node's param ina or the
    argument ina, else none), hosts, links of gbps = bw / 1000 / rate_scale
    (rate_scale: the topo's own, else 1: bw Mbit/s are the capacities x
    1e-3) and background_gbps as given."""
    scale = rate_scale if rate_scale is not None else getattr(topo, "rate_scale", None)
    scale = 1.0 if scale is None else float(scale)
    ids = {}
    nodes = []
    for name in topo.nodes(sort=False):
        info = topo.nodeInfo(name)
        ids[name] = info.get("inart_id", name)
        if "inart" in info:
            nodes.append(info["inart"])
            continue
        if topo.isSwitch(name):
            n = {"id": ids[name], "kind": "switch"}
            spec = info.get("ina", ina)
            if spec:
                n["ina"] = dict(spec)
        else:
            n = {"id": ids[name], "kind": "host"}
        nodes.append(n)
    links = []
    # the file's order first (Mininet keeps links by name, not by insertion)
    order = sorted(topo.links(sort=False, withKeys=False, withInfo=True),
                   key=lambda x: x[2].get("inart_index", float("inf")))
    for a, b, info in order:
        if "inart" in info:
            links.append(info["inart"])
            continue
        ab = (info.get("params1") or {}).get("bw", info.get("bw"))
        ba = (info.get("params2") or {}).get("bw", info.get("bw"))
        if ab is None or ba is None:
            raise ValueError("inart.mininet: link %s-%s has no bw= (a capacity is needed "
                             "for the planner)" % (a, b))
        l = {"a": ids[a], "b": ids[b]}
        if float(ab) == float(ba):
            l["gbps"] = float(ab) / 1e3 / scale
        else:
            l["ab_gbps"], l["ba_gbps"] = float(ab) / 1e3 / scale, float(ba) / 1e3 / scale
        if background_gbps:
            l["background_gbps"] = background_gbps
        links.append(l)
    out = dict(getattr(topo, "topo_extra", {}))
    out.update(nodes=nodes, links=links)
    if path:
        with open(path, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    return out


# -- a running network ------------------------------------------------------------------------

def deployment(net):
    """The deployment (docs/programs.md) of a running net built with
    InartSwitch and InartHost: addresses, host MACs, switch ports by
    neighbour, control sockets."""
    nodes = {}
    for k, sw in enumerate(net.switches):
        ports = {}
        for p, intf in enumerate(sw.data_intfs()):
            link = intf.link
            other = link.intf2 if link.intf1 is intf else link.intf1
            ports[_node_id(other.node)] = {"port": p, "mac": intf.MAC()}
        nodes[_node_id(sw)] = {"ip": "10.255.%d.%d" % (k // 250, k % 250 + 1),
                               "ctl": sw.ctl_path(), "ports": ports}
    for h in net.hosts:
        d = {"ip": h.IP(), "mac": h.MAC()}
        if h.params.get("ps"):
            d["ctl"] = h.ctl_path()
        nodes[_node_id(h)] = d
    return {"nodes": nodes}


def _run(argv):
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("inart.mininet: '%s' failed (exit %d): %s"
                           % (" ".join(argv), r.returncode, (r.stderr or r.stdout).strip()[:800]))
    return r


class Inart:
    """Inart(net, topo_path=None, jobs_path=None, dataplane=None): InArt on a
    running Mininet.

    topo_path and jobs_path default to the InartTopo's files; a net built
    from another Topo gives them (export_topo writes the topology).
    dataplane: the deployment's "dataplane" settings (default:
    default_dataplane(), the emulator's for the topo's rate scale; {}: the
    data plane's own defaults)."""

    def __init__(self, net, topo_path=None, jobs_path=None, dataplane=None):
        self.net = net
        self.topo_path = topo_path or getattr(net.topo, "topo_path", None)
        self.jobs_path = jobs_path or getattr(net.topo, "jobs_path", None)
        if not self.topo_path or not self.jobs_path:
            raise ValueError("inart.mininet: a topology file and a jobs file are needed")
        self.inart = find_inart()
        self.deploy_path = os.path.join(run_dir(), "deploy.json")
        self.plan_path = None
        with open(self.jobs_path) as f:
            self.jobs = {j["id"]: j for j in json.load(f)["jobs"]}
        self.dataplane = self.default_dataplane() if dataplane is None else dict(dataplane)
        self.write_deployment()

    def default_dataplane(self):
        """The deployment's "dataplane" object (docs/programs.md) for a
        network at the topo's rate scale, as `inart emu` sets it
        (docs/emulator.md): a window of 16 chunks per tree, retransmission
        and flush timeouts of twice the time the slowest link needs for a
        full window of the largest job, workers paced at 1.1x (the
        installation's default) their plan rates on this network, at most
        10 ms ahead."""
        scale = getattr(self.net.topo, "rate_scale", None)
        with open(self.topo_path) as f:
            slow = min(min(_gbps(l)) for l in json.load(f)["links"])
        dp = {"slots_per_tree": 16, "pace_scale": 1.1}
        if scale:
            workers = max(len(j["workers"]) for j in self.jobs.values())
            retx = 2 * 16 * workers * 1514 * 8 / (slow * 1e9 * scale) * 1e3
            dp.update(retx_timeout_ms=retx, flush_timeout_ms=retx, pace_lead_ms=10,
                      rate_scale=scale)
        return dp

    def write_deployment(self):
        d = deployment(self.net)
        if self.dataplane:
            d["dataplane"] = self.dataplane
        with open(self.deploy_path, "w") as f:
            json.dump(d, f, indent=1)
        return self.deploy_path

    def node(self, node_id):
        for n in self.net.hosts + self.net.switches:
            if _node_id(n) == node_id:
                return n
        raise KeyError("inart.mininet: no node %s" % node_id)

    def plan(self, algorithm="inart", extra=()):
        """`inart plan` of the jobs with ALGORITHM; the plan file's path."""
        out = os.path.join(run_dir(), "plan-%s.json" % algorithm)
        _run([self.inart, "plan", self.topo_path, self.jobs_path, "--algo", algorithm,
              "-o", out] + list(extra))
        return out

    def install(self, plan_path):
        """`inart ctl install` of a plan on every switch and PS (the jobs'
        trees restarted, so all-reduces number from 1 again)."""
        _run([self.inart, "ctl", "install", self.topo_path, self.jobs_path, plan_path,
              "--deploy", self.deploy_path, "--restart-jobs"])
        self.plan_path = plan_path

    def evaluate(self, plan_path):
        """The evaluator's prediction for a plan (`inart eval --json`)."""
        return json.loads(_run([self.inart, "eval", self.topo_path, self.jobs_path, plan_path,
                                "--json"]).stdout)

    def stats(self, node_id):
        """A daemon's counters (`inart ctl stats --json`)."""
        return json.loads(_run([self.inart, "ctl", "stats", self.node(node_id).ctl_path(),
                                "--json"]).stdout)

    def env(self, extra=None):
        """os.environ plus what a worker (the inart package, the worker
        library) needs to find its files: INART_TOPO, INART_JOBS,
        INART_DEPLOY and, once installed, INART_PLAN."""
        e = dict(os.environ)
        e.update(INART_TOPO=self.topo_path, INART_JOBS=self.jobs_path,
                 INART_DEPLOY=self.deploy_path)
        if self.plan_path:
            e["INART_PLAN"] = self.plan_path
        e.update(extra or {})
        return e

    def run(self, job, argv, env=None, timeout_s=600):
        """Run a program (a training script, say) on every worker host of a
        job at once, rank r on the job's r-th worker, with torchrun's
        variables (RANK, WORLD_SIZE, LOCAL_RANK=0, MASTER_ADDR = rank 0's
        address, MASTER_PORT) and env() set.  argv: a list, or a function of
        the rank giving one.  Waits for all (at most timeout_s; the rest are
        ended by PID) and returns [(exit status or None, output)] by rank."""
        workers = self.jobs[job]["workers"]
        master = self.node(workers[0]).IP()
        procs = []
        for r, w in enumerate(workers):
            e = self.env(env)
            e.update(RANK=str(r), WORLD_SIZE=str(len(workers)), LOCAL_RANK="0",
                     MASTER_ADDR=master, MASTER_PORT="29500", INART_JOB=job)
            a = argv(r) if callable(argv) else argv
            procs.append(_spawn(self.node(w), a, e))
        return _wait_all(procs, timeout_s)

    def allreduce(self, job=None, values=100000, iters=3, timeout_s=60):
        """Run the example worker (examples/allreduce.c) on every worker host
        of every job (or of one), all at once, each checking its results bit
        for bit.  Returns {job: [per rank: {"rc", "ms": [per iteration],
        "out"}]}; raises if a rank failed."""
        if self.plan_path is None:
            raise RuntimeError("inart.mininet: install a plan first")
        prog = find_allreduce()
        procs, who = [], []
        for jid, j in self.jobs.items():
            if job is not None and jid != job:
                continue
            for r, w in enumerate(j["workers"]):
                argv = [prog, self.topo_path, self.jobs_path, self.plan_path, jid, str(r),
                        "--deploy", self.deploy_path, "-n", str(values), "--iters", str(iters),
                        "--workers", str(len(j["workers"])),
                        "--timeout-ms", str(int(timeout_s * 1000))]
                procs.append(_spawn(self.node(w), argv))
                who.append((jid, r))
        res, bad = {}, []
        for (jid, r), (rc, text) in zip(who, _wait_all(procs, timeout_s * (iters + 1))):
            ms = [float(m) for m in re.findall(r"values in ([0-9.]+) ms", text)]
            res.setdefault(jid, []).append({"rc": rc, "ms": ms, "out": text})
            if rc != 0:
                bad.append("%s rank %d (exit %s): %s" % (jid, r, rc, text.strip()[-300:]))
        if bad:
            raise RuntimeError("inart.mininet: all-reduce failed: " + "; ".join(bad))
        return res


def iteration_ms(result):
    """Per iteration, the slowest rank of any job: the time of one all-reduce
    of every job."""
    ranks = [r["ms"] for ranks in result.values() for r in ranks]
    n = min(len(m) for m in ranks)
    return [max(m[i] for m in ranks) for i in range(n)]


class InartCLI(_MnCLI):
    """Mininet's CLI with one more command, `inart`:

        inart plan [ALGO]          plan the jobs (default inart), print the prediction
        inart install [ALGO|FILE]  install a plan (default: the last planned)
        inart allreduce [VALUES [ITERS [JOB]]]   the example worker on every worker host
        inart stats NODE           a switch's or PS's counters
        inart files                the topology, jobs, deployment and plan in use"""

    def __init__(self, mininet, *args, **kwargs):
        self._inart = None
        self._last_plan = None
        _MnCLI.__init__(self, mininet, *args, **kwargs)

    def _ia(self):
        if self._inart is None:
            self._inart = Inart(self.mn)
        return self._inart

    def do_inart(self, line):
        """inart plan|install|allreduce|stats|files ...: InArt on this network."""
        a = line.split()
        try:
            if not a or a[0] in ("help", "-h", "--help"):
                self.stdout.write(InartCLI.__doc__.split("\n\n", 1)[1] + "\n")
            elif a[0] == "plan":
                algo = a[1] if len(a) > 1 else "inart"
                self._last_plan = self._ia().plan(algo)
                ev = self._ia().evaluate(self._last_plan)
                self.stdout.write("%s: %s, predicted %.3f ms per iteration\n"
                                  % (algo, self._last_plan, ev.get("comm_time_s", 0) * 1e3))
            elif a[0] == "install":
                p = a[1] if len(a) > 1 else self._last_plan
                if p and not os.path.exists(p):
                    p = self._ia().plan(p)
                if not p:
                    p = self._ia().plan("inart")
                self._ia().install(p)
                self.stdout.write("installed %s\n" % p)
            elif a[0] == "allreduce":
                values = int(a[1]) if len(a) > 1 else 100000
                iters = int(a[2]) if len(a) > 2 else 3
                res = self._ia().allreduce(a[3] if len(a) > 3 else None, values, iters)
                ms = iteration_ms(res)
                self.stdout.write("%d values x %d iterations, exact; ms per iteration: %s\n"
                                  % (values, iters, " ".join("%.3f" % x for x in ms)))
            elif a[0] == "stats":
                self.stdout.write(json.dumps(self._ia().stats(a[1]), indent=1) + "\n")
            elif a[0] == "files":
                ia = self._ia()
                self.stdout.write("topology %s\njobs %s\ndeployment %s\nplan %s\n"
                                  % (ia.topo_path, ia.jobs_path, ia.deploy_path, ia.plan_path))
            else:
                self.stdout.write("inart: unknown command '%s' (inart help)\n" % a[0])
        except (RuntimeError, ValueError, KeyError, OSError, IndexError) as e:
            self.stdout.write("inart: %s\n" % e)


# -- mn --custom entry points ---------------------------------------------------------------
topos = {"inart": InartTopo}
switches = {"inart": InartSwitch}
hosts = {"inart": InartHost}
CLI = InartCLI
