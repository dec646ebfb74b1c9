"""fabric: an emulated network for the Python examples and tests, a thin wrapper over `inart emu`.

    with Fabric("topo.json", "jobs.json", queue_ms=10) as fab:
        plan = fab.plan("inart")
        fab.install(plan)
        res = fab.run(["w0", "w1"], [sys.executable, "train.py"], env={...})

`start()` is `inart emu up TOPO JOBS --prefix P --rate-scale 1 -q` (links
shaped at the topology's capacities, so the planner's predictions are in the
emulated units; namespaces inart-emu-P-<node>, `inart switchd` on every
switch, `inart ps` on every PS, the deployment /run/inart-emu/P/deploy.json),
`run()` is `inart emu exec` (one program as the ranks of the job, torchrun's
variables and the INART_* ones the backend reads set by it), `close()` is
`inart emu down --prefix P` (also at interpreter exit and on
SIGTERM/SIGINT).  The rest is `inart plan`, `inart ctl install`, `inart
eval` and `inart ctl stats` on the run's files.  docs/emulator.md describes
the network; docs/python.md this module.

Needs root.  The prefix is "f" + this process's PID in base 36 (at most 9
characters, as `inart emu` wants); `Fabric.janitor()` takes down the
networks of earlier runs of this module whose process is gone (only those:
a network another user brought up with `inart emu up` is never touched).
"""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

RUN_DIR = "/run/inart-emu"      # src/emu/net.h: INART_EMU_RUN_DIR
NS_PREFIX = "inart-emu-"        # INART_EMU_NS_PREFIX


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


def _run(argv, check=True, env=None):
    # output through files, not pipes: `inart emu up` leaves daemons behind
    # that hold its descriptors (a pipe would never reach end of file)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        rc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, text=True,
                            env=env).returncode
        out.seek(0)
        err.seek(0)
        r = subprocess.CompletedProcess(argv, rc, out.read(), err.read())
    if check and r.returncode != 0:
        raise RuntimeError("fabric: '%s' failed (exit %d): %s"
                           % (" ".join(argv), r.returncode, (r.stderr or r.stdout).strip()[:800]))
    return r


def _b36(n):
    s = ""
    while True:
        n, d = divmod(n, 36)
        s = "0123456789abcdefghijklmnopqrstuvwxyz"[d] + s
        if n == 0:
            return s


class Daemon:
    """A switchd or PS of the network, found by its namespace (`ip netns
    pids`): its PID, and signals to it (SIGSTOP/SIGCONT: a node that stops
    answering, then answers again; SIGKILL: a node that fails)."""

    def __init__(self, node, pid):
        self.node, self.pid = node, pid

    def send_signal(self, sig):
        os.kill(self.pid, sig)

    def alive(self):
        try:
            os.kill(self.pid, 0)
            return True
        except ProcessLookupError:
            return False


class Fabric:
    """Fabric(topo_path, jobs_path, inart=None, queue_ms=50, dataplane=None)

    queue_ms: `inart emu up --queue-ms` (each link's queue in ms at its
    rate).  dataplane: entries merged into the deployment's "dataplane"
    object (docs/programs.md) before any plan is installed, e.g.
    {"pace_scale": 1.05}; without it the installation's default pacing
    applies (`inart emu up` writes "pace_scale": 0, not paced; this module
    removes that entry, as the hand-built fabric it replaces never wrote
    it).  Use as a context manager, or call start() and close()."""

    def __init__(self, topo_path, jobs_path, inart=None, queue_ms=50, dataplane=None,
                 workdir=None):
        self.topo_path, self.jobs_path = os.path.abspath(topo_path), os.path.abspath(jobs_path)
        self.inart = inart or find_inart()
        self.queue_ms, self.dataplane = queue_ms, dataplane
        with open(topo_path) as f:
            self.topo = json.load(f)
        with open(jobs_path) as f:
            self.jobs = json.load(f)
        self.prefix = "f" + _b36(os.getpid())
        self.run_dir = os.path.join(RUN_DIR, self.prefix)
        self.deploy_path = os.path.join(self.run_dir, "deploy.json")
        self._own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="inart-fabric-")
        self.kind = {n["id"]: n.get("kind", "host") for n in self.topo["nodes"]}
        self.ps_nodes = sorted({p for j in self.jobs["jobs"] for p in j.get("ps", [])})
        self.daemons = {}
        self._up = self._closed = False

    # -- names ---------------------------------------------------------------------------
    def ns(self, node):
        return NS_PREFIX + self.prefix + "-" + node

    def ip(self, node):
        with open(self.deploy_path) as f:
            return json.load(f)["nodes"][node]["ip"]

    def ctl(self, node):
        return os.path.join(self.run_dir, node + ".sock")

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    @classmethod
    def janitor(cls, inart=None):
        """`inart emu down --prefix P` of earlier runs of this module (prefix
        "f" + a PID in base 36) whose process is gone."""
        try:
            names = os.listdir(RUN_DIR)
        except OSError:
            return
        for p in names:
            if not re.match(r"^f[0-9a-z]{1,8}$", p):
                continue
            try:
                pid = int(p[1:], 36)
            except ValueError:
                continue
            if pid != os.getpid() and not os.path.exists("/proc/%d" % pid):
                _run([inart or find_inart(), "emu", "down", "--prefix", p], check=False)

    def start(self):
        if os.geteuid() != 0:
            raise PermissionError("fabric: needs root (inart emu up: network namespaces)")
        atexit.register(self.close)
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
                    signal.signal(sig, _exit_on_signal)
            except ValueError:   # not the main thread
                pass
        self.janitor(self.inart)
        if os.path.isdir(self.run_dir):     # this PID's own leftovers (a reused PID)
            _run([self.inart, "emu", "down", "--prefix", self.prefix], check=False)
        try:
            self._up = True
            _run([self.inart, "emu", "up", self.topo_path, self.jobs_path, "--prefix",
                  self.prefix, "--rate-scale", "1", "--queue-ms", str(self.queue_ms), "-q"])
            self._dataplane()
            self._find_daemons()
        except BaseException:
            self.close()
            raise
        return self

    def _dataplane(self):
        with open(self.deploy_path) as f:
            d = json.load(f)
        dp = d.setdefault("dataplane", {})
        dp.pop("pace_scale", None)
        dp.update(self.dataplane or {})
        tmp = self.deploy_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(d, f, indent=1)
        os.replace(tmp, self.deploy_path)

    def _find_daemons(self):
        for n, k in self.kind.items():
            if k != "switch" and n not in self.ps_nodes:
                continue
            r = _run(["ip", "netns", "pids", self.ns(n)])
            pids = [int(x) for x in r.stdout.split()]
            if len(pids) != 1:
                raise RuntimeError("fabric: namespace %s holds %d processes (%s), not its one "
                                   "daemon" % (self.ns(n), len(pids), pids))
            self.daemons[n] = Daemon(n, pids[0])

    def close(self):
        """`inart emu down --prefix P` (the daemons, the namespaces, the run
        directory), then this object's working directory.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        for d in self.daemons.values():     # a daemon stopped by a test
            try:
                d.send_signal(signal.SIGCONT)
            except ProcessLookupError:
                pass
        if self._up:
            _run([self.inart, "emu", "down", "--prefix", self.prefix], check=False)
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- using it ---------------------------------------------------------------------------
    def job_of(self, nodes):
        """The id of the job whose workers include every node of `nodes`."""
        for j in self.jobs["jobs"]:
            if all(n in j.get("workers", []) for n in nodes):
                return j["id"]
        raise ValueError("fabric: no job of %s has the workers %s" % (self.jobs_path, nodes))

    def run(self, nodes, argv, env=None, timeout=300, plan=None):
        """`inart emu exec`: argv (a list) as the ranks of the job of `nodes`,
        rank r in the namespace of nodes[r], with torchrun's variables
        (RANK, WORLD_SIZE, LOCAL_RANK=0, MASTER_ADDR = nodes[0]'s address,
        MASTER_PORT, GLOO_SOCKET_IFNAME) and INART_TOPO, INART_JOBS,
        INART_DEPLOY, INART_JOB, INART_WORKERS (INART_PLAN with `plan`),
        plus this process's environment updated with `env`.  Waits for all;
        after `timeout` s (or 10 s after a rank failed) the others get
        SIGTERM, then SIGKILL.  Returns a list of (exit status, output) per
        rank, None as the status of a rank that emu exec ended."""
        logs = tempfile.mkdtemp(prefix="exec-", dir=self.dir)
        cmd = [self.inart, "emu", "exec", self.topo_path, self.jobs_path, "--prefix",
               self.prefix, "--job", self.job_of(nodes), "--workers", ",".join(nodes),
               "--log-dir", logs, "--timeout", str(timeout)]
        cmd += ["--plan", plan] if plan else []
        e = dict(os.environ)
        e.update(env or {})
        r = _run(cmd + ["--"] + list(argv), check=False, env=e)
        status = [0] * len(nodes)
        if r.returncode == 1:
            for m in re.finditer(r"^inart emu exec: rank (\d+) \([^)]*\): (exit|signal) (-?\d+)"
                                 r"( \(ended by emu exec\))?$", r.stderr, re.M):
                k, v = int(m.group(1)), int(m.group(3))
                status[k] = None if m.group(4) else (v if m.group(2) == "exit" else 128 + v)
        if r.returncode not in (0, 1) or (r.returncode == 1 and not any(status)):
            raise RuntimeError("fabric: '%s' failed (exit %d): %s"
                               % (" ".join(cmd), r.returncode, r.stderr.strip()[-1500:]))
        res = []
        for k in range(len(nodes)):
            try:
                with open(os.path.join(logs, "rank-%d.log" % k)) as f:
                    out = f.read()
            except OSError:
                out = ""
            res.append((status[k], out))
        shutil.rmtree(logs, ignore_errors=True)
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
        """Send sig to the daemon of node."""
        self.daemons[node].send_signal(sig)


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
