#!/usr/bin/env bash
# emu_exec.sh INART: `inart emu exec` (issue 26) on a network of `inart emu up`
# (two workers and a PS under one switch, a third host outside the job):
#   - every rank runs in its worker's namespace with torchrun's variables
#     (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR = rank 0's address in the
#     deployment, MASTER_PORT, GLOO_SOCKET_IFNAME = the host's interface, the
#     PET_* options) and the backend's INART_* ones; rank 1 connects to rank
#     0's MASTER_ADDR:MASTER_PORT (TCP through the switch, as gloo does);
#     --workers picks and orders the ranks;
#   - a failed rank: exit 1 naming it and its status, the others ended after
#     --grace (marked "ended by emu exec"), well before they would have ended;
#   - --timeout: every rank ended, exit 1 saying so;
#   - refusals: a worker not of the job (exit 2), a prefix with no network
#     (exit 1 naming the deployment), a program that cannot be run (exit 1);
#   - nothing of the ranks is left running afterwards.
# Prefix h26x<pid>, removed by 'inart emu down' at exit.  Needs root; exits
# 77 (skipped) otherwise.  Prints "N passed, N failed".
set -u

INART=${1:?usage: emu_exec.sh PATH-TO-INART}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # skip_all NAME WHY
if [ "$(id -u)" -ne 0 ]; then
	skip_all emu_exec.sh "not root"
fi
if ! ip netns list >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1; then
	skip_all emu_exec.sh "'ip netns' or tc unavailable"
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"
P="x$(($$ % 100000))"
. "$(dirname "${BASH_SOURCE[0]}")/emu_lib.sh" # emu_track P, emu_left P; clean-up at exit
emu_track "$P"

cat >"$tmp/topo.json" <<'EOF'
{"nodes": [{"id": "w0", "kind": "host"}, {"id": "w1", "kind": "host"},
           {"id": "x0", "kind": "host"}, {"id": "p0", "kind": "host"},
           {"id": "s0", "kind": "switch", "ina": {"agg_gbps": 1, "trees": 2}}],
 "links": [{"a": "w0", "b": "s0", "gbps": 0.1}, {"a": "w1", "b": "s0", "gbps": 0.1},
           {"a": "x0", "b": "s0", "gbps": 0.1}, {"a": "p0", "b": "s0", "gbps": 0.1}]}
EOF
cat >"$tmp/jobs.json" <<'EOF'
{"jobs": [{"id": "j0", "workers": ["w0", "w1"], "ps": ["p0"], "gradient_bytes": 4000}]}
EOF
T=$tmp/topo.json
J=$tmp/jobs.json

if ! "$INART" emu up "$T" "$J" --prefix "$P" --rate-scale 1 -q >"$tmp/up.out" 2>&1; then
	bad "emu up: $(cat "$tmp/up.out")"
	echo "$pass passed, $fail failed"
	exit 1
fi
ok
D=/run/inart-emu/$P/deploy.json
ip_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][sys.argv[2]]["ip"])' "$D" "$1"; }
ip0=$(ip_of w0)
ip1=$(ip_of w1)

# the environment of every rank (and the namespace: its own address)
cat >"$tmp/env.sh" <<'EOF'
#!/bin/sh
out=$1/env-$RANK
{
	for v in RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GLOO_SOCKET_IFNAME \
		PET_NNODES PET_NODE_RANK PET_NPROC_PER_NODE PET_MASTER_ADDR PET_MASTER_PORT \
		INART_TOPO INART_JOBS INART_DEPLOY INART_JOB INART_WORKERS INART_PLAN INART_EMU_PREFIX \
		MINE; do
		eval "echo $v=\${$v-unset}"
	done
	echo ADDR=$(ip -4 -o addr show dev "$GLOO_SOCKET_IFNAME" | awk '{print $4}')
	# TCP from rank 1 to rank 0's MASTER_ADDR:MASTER_PORT (gloo's way)
	/usr/bin/python3 - <<'PY'
import os, socket, time
a, p = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if os.environ["RANK"] == "0":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, p))
    s.listen(1)
    s.settimeout(10)
    c, _ = s.accept()
    print("TCP=" + c.recv(16).decode())
else:
    t = time.monotonic() + 10
    while True:
        try:
            socket.create_connection((a, p), timeout=2).sendall(b"ok")
            break
        except OSError:
            if time.monotonic() > t:
                raise
            time.sleep(0.1)
PY
} >"$out.tmp"
mv "$out.tmp" "$out"
EOF
chmod +x "$tmp/env.sh"
# the switch forwards once it has a configuration (inart ctl install)
if "$INART" plan "$T" "$J" -o "$tmp/plan.json" >"$tmp/x.out" 2>&1 &&
	"$INART" ctl install "$T" "$J" "$tmp/plan.json" --deploy "$D" >>"$tmp/x.out" 2>&1; then
	ok
else
	bad "plan and install: $(cat "$tmp/x.out")"
fi
if MINE=kept "$INART" emu exec "$T" "$J" --prefix "$P" --plan "$tmp/plan.json" \
	--master-port 29777 -- "$tmp/env.sh" "$tmp" >"$tmp/x.out" 2>&1; then
	ok
else
	bad "emu exec of env.sh: $(cat "$tmp/x.out")"
fi
want0="RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=$ip0 MASTER_PORT=29777
GLOO_SOCKET_IFNAME=e$P-p0 PET_NNODES=2 PET_NODE_RANK=0 PET_NPROC_PER_NODE=1
PET_MASTER_ADDR=$ip0 PET_MASTER_PORT=29777 INART_TOPO=$T INART_JOBS=$J INART_DEPLOY=$D
INART_JOB=j0 INART_WORKERS=w0,w1 INART_PLAN=$tmp/plan.json INART_EMU_PREFIX=$P MINE=kept
ADDR=$ip0/32 TCP=ok"
got0=$(tr '\n' ' ' <"$tmp/env-0" 2>/dev/null)
if [ "$got0" = "$(echo $want0) " ]; then ok; else bad "rank 0's environment: '$got0', want '$(echo $want0)'"; fi
if grep -qx "RANK=1" "$tmp/env-1" 2>/dev/null && grep -qx "ADDR=$ip1/32" "$tmp/env-1" &&
	grep -qx "PET_NODE_RANK=1" "$tmp/env-1" && grep -qx "MASTER_ADDR=$ip0" "$tmp/env-1"; then
	ok
else
	bad "rank 1's environment: $(cat "$tmp/env-1" 2>&1)"
fi

# --workers: the order of the ranks (rank 0 on w1), --log-dir
rm -f "$tmp"/env-*
mkdir "$tmp/logs"
if "$INART" emu exec "$T" "$J" --prefix "$P" --workers w1,w0 --log-dir "$tmp/logs" -- \
	sh -c 'echo "rank $RANK here"; "$0" "$1"' "$tmp/env.sh" "$tmp" >"$tmp/x.out" 2>&1 &&
	grep -qx "ADDR=$ip1/32" "$tmp/env-0" && grep -qx "MASTER_ADDR=$ip1" "$tmp/env-1" &&
	grep -qx "INART_WORKERS=w1,w0" "$tmp/env-0" && grep -qx "rank 1 here" "$tmp/logs/rank-1.log"; then
	ok
else
	bad "--workers w1,w0: $(cat "$tmp/x.out" "$tmp/env-0" "$tmp/logs/rank-1.log" 2>&1)"
fi

# a failed rank: named, the other one ended after --grace
t0=$(date +%s%N)
"$INART" emu exec "$T" "$J" --prefix "$P" --grace 1 -- \
	sh -c 'if [ "$RANK" = 1 ]; then sleep 0.3; exit 3; fi; exec sleep 60' >"$tmp/x.out" 2>&1
rc=$?
dt=$((($(date +%s%N) - t0) / 1000000))
if [ $rc -eq 1 ] && grep -q "rank 1 (node w1) exited with status 3" "$tmp/x.out" &&
	grep -q "rank 0 (w0): signal 15 (ended by emu exec)" "$tmp/x.out" && [ $dt -lt 15000 ]; then
	ok
else
	bad "a failed rank (exit $rc, $dt ms): $(cat "$tmp/x.out")"
fi

# --timeout
t0=$(date +%s%N)
"$INART" emu exec "$T" "$J" --prefix "$P" --timeout 1 -- sleep 60 >"$tmp/x.out" 2>&1
rc=$?
dt=$((($(date +%s%N) - t0) / 1000000))
if [ $rc -eq 1 ] && grep -q "timed out after 1 s" "$tmp/x.out" && [ $dt -lt 15000 ] &&
	[ "$(grep -c "(ended by emu exec)" "$tmp/x.out")" = 2 ]; then
	ok
else
	bad "--timeout 1 (exit $rc, $dt ms): $(cat "$tmp/x.out")"
fi

# refusals
"$INART" emu exec "$T" "$J" --prefix "$P" --workers w0,x0 -- true >"$tmp/x.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "'x0' is not a worker of job 'j0'" "$tmp/x.out"; then ok; else bad "x0 as a rank (exit $rc): $(cat "$tmp/x.out")"; fi
"$INART" emu exec "$T" "$J" --prefix "${P}q" -- true >"$tmp/x.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "/run/inart-emu/${P}q/deploy.json" "$tmp/x.out"; then ok; else bad "a prefix with no network (exit $rc): $(cat "$tmp/x.out")"; fi
"$INART" emu exec "$T" "$J" --prefix "$P" -- "$tmp/no-such-program" >"$tmp/x.out" 2>&1
rc=$?
if [ $rc -eq 1 ]; then ok; else bad "a program that does not exist (exit $rc): $(cat "$tmp/x.out")"; fi

# nothing of the ranks left: the worker namespaces are empty again
left=""
for w in w0 w1; do
	[ -n "$(ip netns pids "inart-emu-$P-$w" 2>/dev/null)" ] && left="$left $w"
done
if [ -z "$left" ]; then ok; else bad "processes left in the namespaces of$left"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
