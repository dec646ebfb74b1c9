"""fabric: a topology as network namespaces on this machine, for examples and tests.

Builds every node of a switch-centric topology file (docs/formats.md) as a
network namespace named PREFIX + node id, every link as a veth pair shaped
by tc tbf at the link's capacity in both directions (gbps from the
topology, so the planner's predictions are in the emulated units), runs
`inart switchd` on every switch and `inart ps` on every PS of the jobs,
writes the deployment file and installs plans with `inart ctl install`.
Processes run inside a node's namespace with `spawn` (`ip netns exec`), so a
worker's traffic, InArt's UDP and gloo's TCP alike, crosses the shaped veths
and the switchd processes (which forward plain IPv4 besides aggregating).

Needs root and iproute2.  Cleanup is by PID and by prefix: `close()` (also
at interpreter exit and on SIGTERM/SIGINT) ends the processes it started and
deletes the namespaces it made; `Fabric.janitor()` deletes namespaces left
by runs of this module whose process is gone (names "<base><pid>-*").

This is the hand-built fabric that tests/netns.sh also uses in shell; once
the emulator (`inart emu up`, src/emu) is on main, this module should become
a thin wrapper over it.
"""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

BASE = "h9py"          # namespace names: BASE + pid + "-" + node id


def find_inart():
    """The inart program: $INART_BIN, the checkout's build/inart, or PATH."""
    env = os.environ.get("INART_BIN")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    p = os.path.normpath(os.path.join(here, "..", "..", "build", "inart"))
    if os.path.exists(p):
        return p
    return shutil.which("inart") or "inart"


def _run(argv, check=True, quiet=False):
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("fabric: '%s' failed (exit %d): %s"
                           % (" ".join(argv), r.returncode, (r.stderr or r.stdout).strip()[:500]))
    return r


class Fabric:
    """Fabric(topo_path, jobs_path, inart=None, shape=True, queue_ms=50, log_level="warn",
    dataplane=None)

    dataplane: the deployment's "dataplane" object (docs/programs.md), e.g.
    {"pace_scale": 1.1}: workers paced at 1.1x their plan rates (the links
    are shaped at the topology's capacities, so the scale is the factor).
    Use as a context manager, or call start() and close()."""

    def __init__(self, topo_path, jobs_path, inart=None, shape=True, queue_ms=50,
                 log_level="warn", workdir=None, dataplane=None):
        self.topo_path, self.jobs_path = os.path.abspath(topo_path), os.path.abspath(jobs_path)
        self.inart = inart or find_inart()
        self.shape, self.queue_ms, self.log_level = shape, queue_ms, log_level
        self.dataplane = dataplane
        with open(topo_path) as f:
            self.topo = json.load(f)
        with open(jobs_path) as f:
            self.jobs = json.load(f)
        self.prefix = "%s%d-" % (BASE, os.getpid())
        self._own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="inart-fabric-")
        self.deploy_path = os.path.join(self.dir, "deploy.json")
        self.kind = {n["id"]: n.get("kind", "host") for n in self.topo["nodes"]}
        self.ps_nodes = sorted({p for j in self.jobs["jobs"] for p in j.get("ps", [])})
        self.nss, self.procs, self.daemons = [], [], {}
        self.ips, self.macs, self.ports = {}, {}, {}
        for i, n in enumerate(self.topo["nodes"]):
            self.ips[n["id"]] = "10.99.%d.%d" % (i // 200, i % 200 + 1)
            self.macs[n["id"]] = "02:99:00:00:%02x:%02x" % (i // 256, i % 256)
        self._closed = False

    # -- names ---------------------------------------------------------------------------
    def ns(self, node):
        return self.prefix + node

    def ip(self, node):
        return self.ips[node]

    def ctl(self, node):
        return os.path.join(self.dir, node + ".sock")

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    @classmethod
    def janitor(cls):
        """Delete namespaces of earlier runs of this module whose process is gone."""
        r = _run(["ip", "netns", "list"], check=False)
        for line in r.stdout.splitlines():
            name = line.split()[0] if line.split() else ""
            m = re.match(r"^%s(\d+)-" % BASE, name)
            if m and not os.path.exists("/proc/%s" % m.group(1)):
                _run(["ip", "netns", "del", name], check=False)

    def start(self):
        if os.geteuid() != 0:
            raise PermissionError("fabric: needs root (network namespaces)")
        atexit.register(self.close)
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
                    signal.signal(sig, _exit_on_signal)
            except ValueError:   # not the main thread
                pass
        self.janitor()
        try:
            self._build()
            self._daemons()
        except BaseException:
            self.close()
            raise
        return self

    def _build(self):
        for n in self.kind:
            ns = self.ns(n)
            _run(["ip", "netns", "add", ns])
            self.nss.append(ns)
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            for k in ("all", "default"):
                _run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                      "net.ipv6.conf.%s.disable_ipv6=1" % k], check=False)
        nports = {n: 0 for n in self.kind}
        deploy = {}
        for n, k in self.kind.items():
            deploy[n] = {"ip": self.ips[n]}
            if k == "host":
                deploy[n]["mac"] = self.macs[n]
            if k == "switch" or n in self.ps_nodes:
                deploy[n]["ctl"] = self.ctl(n)
            if k == "switch":
                deploy[n]["ports"] = {}
                self.ports[n] = []
        for link in self.topo["links"]:
            ends = []
            for me, other in ((link["a"], link["b"]), (link["b"], link["a"])):
                if self.kind[me] == "switch":
                    ifn = "p%d" % nports[me]
                    deploy[me]["ports"][other] = {"port": nports[me]}
                    self.ports[me].append(ifn)
                    nports[me] += 1
                else:
                    if nports[me]:
                        raise ValueError("fabric: host %s has more than one link" % me)
                    ifn = "eth0"
                    nports[me] = 1
                ends.append((me, ifn))
            (a, ia), (b, ib) = ends
            _run(["ip", "link", "add", "name", ia, "netns", self.ns(a), "type", "veth", "peer",
                  "name", ib, "netns", self.ns(b)])
            for node, ifn in ends:
                ns = self.ns(node)
                if self.kind[node] == "host":
                    _run(["ip", "-n", ns, "link", "set", ifn, "address", self.macs[node]])
                    _run(["ip", "-n", ns, "addr", "add", self.ips[node] + "/16", "dev", ifn])
                _run(["ip", "-n", ns, "link", "set", ifn, "up"])
                if self.kind[node] == "host":
                    # a user-space switch passes frames on as they are:
                    # checksums must be complete when they leave the host
                    _run(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "tx", "off"],
                         check=False)
                if self.shape and link.get("gbps"):
                    self._tbf(ns, ifn, float(link["gbps"]))
        with open(self.deploy_path, "w") as f:
            d = {"nodes": deploy}
            if self.dataplane:
                d["dataplane"] = self.dataplane
            json.dump(d, f, indent=1)

    def _tbf(self, ns, ifn, gbps):
        bps = gbps * 1e9
        burst = max(15000, int(bps / 8 * 0.002))           # 2 ms at line rate
        limit = max(3 * burst, int(bps / 8 * self.queue_ms / 1000.0))
        _run(["tc", "-n", ns, "qdisc", "add", "dev", ifn, "root", "tbf", "rate",
              "%dkbit" % int(bps / 1000), "burst", str(burst), "limit", str(limit)])

    def _daemons(self):
        for n, k in self.kind.items():
            if k == "switch":
                argv = [self.inart, "switchd", "--name", n, "--port", ",".join(self.ports[n]),
                        "--ctl", self.ctl(n), "--log-level", self.log_level]
            elif n in self.ps_nodes:
                argv = [self.inart, "ps", "--name", n, "--bind", self.ips[n], "--ctl",
                        self.ctl(n), "--log-level", self.log_level]
            else:
                continue
            log = open(os.path.join(self.dir, n + ".log"), "w")
            self.daemons[n] = self.spawn(n, argv, stdout=log, stderr=subprocess.STDOUT)
            log.close()
        deadline = time.monotonic() + 10
        for n in self.daemons:
            while not os.path.exists(self.ctl(n)):
                if self.daemons[n].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("fabric: daemon %s did not start: %s"
                                       % (n, self.log(n)[-500:]))
                time.sleep(0.05)

    def log(self, node):
        try:
            with open(os.path.join(self.dir, node + ".log")) as f:
                return f.read()
        except OSError:
            return ""

    def close(self):
        """End every process started here (by PID), delete the namespaces
        made here, remove the working directory.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGCONT)   # a daemon stopped by a test
                    p.terminate()
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 3
        for p in self.procs:
            try:
                p.wait(timeout=max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for ns in self.nss:
            _run(["ip", "netns", "del", ns], check=False)
        self.nss = []
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- using it ---------------------------------------------------------------------------
    def spawn(self, node, argv, env=None, **kw):
        """subprocess.Popen of argv inside node's namespace (tracked: ended by close())."""
        p = subprocess.Popen(["ip", "netns", "exec", self.ns(node)] + list(argv),
                             stdin=subprocess.DEVNULL, env=env, **kw)
        self.procs.append(p)
        return p

    def run(self, nodes, argv, env=None, timeout=300):
        """Run argv (a list, or a function of the rank giving one) on every node
        of `nodes` at once, rank r on nodes[r], with RANK, WORLD_SIZE,
        LOCAL_RANK=0, MASTER_ADDR (nodes[0]'s address), MASTER_PORT and
        GLOO_SOCKET_IFNAME set (torchrun's variables).  Waits for all (at
        most `timeout` s: the others are killed then) and returns a list of
        (exit status, output), None as status for a rank that timed out."""
        procs = []
        for r, node in enumerate(nodes):
            e = self.env(env)
            e.update(RANK=str(r), WORLD_SIZE=str(len(nodes)), LOCAL_RANK="0",
                     MASTER_ADDR=self.ips[nodes[0]], MASTER_PORT="29500",
                     GLOO_SOCKET_IFNAME="eth0")
            a = argv(r) if callable(argv) else argv
            out = tempfile.TemporaryFile(mode="w+", dir=self.dir)
            procs.append((self.spawn(node, a, env=e, stdout=out, stderr=subprocess.STDOUT),
                          out))
        deadline = time.monotonic() + timeout
        res = []
        for p, out in procs:
            try:
                rc = p.wait(timeout=max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                # SIGUSR1 first: a program that registered faulthandler for it
                # prints where it hangs into its output; then the kill.
                p.send_signal(signal.SIGUSR1)
                try:
                    p.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
                p.kill()
                p.wait()
                rc = None
            out.seek(0)
            res.append((rc, out.read()))
            out.close()
        return res

    def plan(self, algo="inart", out=None, extra=()):
        """Plan the jobs with `inart plan`; the plan file's path."""
        out = out or os.path.join(self.dir, "plan-%s.json" % algo)
        _run([self.inart, "plan", self.topo_path, self.jobs_path, "--algo", algo, "-o", out]
             + list(extra))
        return out

    def install(self, plan_path):
        """`inart ctl install` of a plan (restarts the PSs' trees)."""
        _run([self.inart, "ctl", "install", self.topo_path, self.jobs_path, plan_path,
              "--deploy", self.deploy_path])

    def evaluate(self, plan_path):
        """The evaluator's figures of a plan (`inart eval --json`)."""
        r = _run([self.inart, "eval", self.topo_path, self.jobs_path, plan_path, "--json"])
        return json.loads(r.stdout)

    def stats(self, node):
        """A daemon's counters (`inart ctl stats --json`), a dict."""
        r = _run([self.inart, "ctl", "stats", self.ctl(node), "--json"])
        return json.loads(r.stdout)

    def reset_stats(self, node):
        _run([self.inart, "ctl", "reset-stats", self.ctl(node)])

    def signal(self, node, sig):
        """Send sig to the daemon of node (SIGSTOP/SIGCONT: a switch or PS
        that does not answer, then answers again)."""
        self.daemons[node].send_signal(sig)

    def env(self, extra=None):
        """os.environ plus what the inart package needs to find its files."""
        e = dict(os.environ)
        e.update(INART_TOPO=self.topo_path, INART_JOBS=self.jobs_path,
                 INART_DEPLOY=self.deploy_path)
        e.update(extra or {})
        return e


def _exit_on_signal(signum, frame):
    raise SystemExit(128 + signum)


def tree_counters(stats):
    """Sum of each per-tree counter over a switch's trees (ctl stats --json)."""
    out = {}

    def walk(o):
        if isinstance(o, dict):
            if "aggregated" in o and "emitted" in o:
                for k, v in o.items():
                    if isinstance(v, (int, float)):
                        out[k] = out.get(k, 0) + v
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(stats)
    return out
