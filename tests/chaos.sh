#!/usr/bin/env bash
# chaos.sh INART CHAOS_WORKER: the data plane under faults, hostile hosts and
# a control plane in recovery (issue 7), in network namespaces.
#
#   w0 w1 w2 w3 x0 -- t0 (INA) --- t1 -- p0 p1 w4
#   job j0: w0 w1 w2 -> PSs p0, p1      job j1: w3 w4 -> PS p1
#
# Five workers (tests/chaos_worker.c, public API only) run all-reduces of
# both jobs while a driver, every 1-3 s, does one of: kill -9 a switchd or a
# PS and start it again followed by the documented recovery (`inart ctl
# install` of the same plan: the nodes that hold it are left alone), make t0
# lose its aggregation state, have x0 (a host outside the jobs) forge
# contributions, results (also with a spoofed source) and far-future
# iterations and replay them, flood the control sockets with idle and
# half-sent clients (and check that `ctl stats` is still answered); with
# CHAOS_LOSS (default 0.01) every switchd also loses that fraction of the
# frames it receives (switchd --rx-loss, when the build has it; asserted:
# the switches' gate counters show frames lost).
# The workers run 15 s longer than the driver.  Asserts: every all-reduce
# that returned 0 returned the exact sum of its step (the workers check bit
# for bit), no call took longer than its timeout plus 1 s (the documented
# bound), every worker completed at least CHAOS_STEPS all-reduces and one in
# the last 5 s (the jobs converge after the last recovery), every recovery
# install succeeded, the forgeries were dropped at the first hop, the
# control sockets kept answering.
#
# INART_IO=MODE (default: switchd's own; the meson test chaos_xdp: xdp) runs
# both switches with `--io MODE` (with xdp the hosts' veths get GRO on, as in
# netns.sh); INART_CORES=N (N > 1; the meson tests chaos_cores2 on ring and
# chaos_xdp_cores2) with `--cores N` and N queues on every veth: each worker
# loses frames from a seeded stream of its own (--loss-seed and its index),
# and the gate counters summed over the workers must show frames lost.
# CHAOS_SECONDS (default 60): how long the driver makes trouble; CHAOS_STEPS
# (default 150): all-reduces each worker must complete at least; CHAOS_SEED
# (default 1).  bench/chaos_bench.sh runs it long.  Needs root and `ip netns` (exits
# 77 otherwise); namespaces carry a per-run prefix and are removed at exit.
# Prints "N passed, N failed, N skipped"; exits 1 if anything failed.
set -u

INART=${1:?usage: chaos.sh PATH-TO-INART PATH-TO-CHAOS-WORKER}
WORKER=${2:?usage: chaos.sh PATH-TO-INART PATH-TO-CHAOS-WORKER}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
case $WORKER in /*) ;; *) WORKER=$PWD/$WORKER ;; esac
SECONDS_CHAOS=${CHAOS_SECONDS:-60}
STEPS=${CHAOS_STEPS:-150}
SETTLE=15 # the workers go on this long after the last event
LOSS=${CHAOS_LOSS:-0.01}
RANDOM=${CHAOS_SEED:-1}

. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # pass/fail/skip, ok, bad, skipped N WHY
if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
	echo "chaos.sh: not root or no 'ip netns', skipped"
	skipped 1 "chaos test needs root and ip netns"
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] && exit 77
	exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
	skipped 1 "python3 missing: no forgeries, no control flood (scripts/deps.sh installs it)"
fi

P="${PREFIX:-inh7c$$-}" # PREFIX: another per-run prefix
BACKEND=()
[ -n "${INART_IO:-}" ] && BACKEND=(--io "$INART_IO")
if [ "${INART_CORES:-1}" -gt 1 ]; then
	BACKEND+=(--cores "$INART_CORES")
	FABRIC_QUEUES=$INART_CORES # read by fabric.sh's fabric_host / fabric_trunk
fi
. "$(dirname "${BASH_SOURCE[0]}")/fabric.sh" # tmp, pids, nss, ns, fabric_*

# --- topology, jobs, deployment -------------------------------------------
cat >"$tmp/topo.json" <<'EOF'
{"nodes": [{"id": "w0", "kind": "host"}, {"id": "w1", "kind": "host"}, {"id": "w2", "kind": "host"},
           {"id": "w3", "kind": "host"}, {"id": "w4", "kind": "host"}, {"id": "x0", "kind": "host"},
           {"id": "p0", "kind": "host"}, {"id": "p1", "kind": "host"},
           {"id": "t0", "kind": "switch", "ina": {"agg_gbps": 100, "trees": 4}},
           {"id": "t1", "kind": "switch"}],
 "links": [{"a": "w0", "b": "t0", "gbps": 10}, {"a": "w1", "b": "t0", "gbps": 10},
           {"a": "w2", "b": "t0", "gbps": 10}, {"a": "w3", "b": "t0", "gbps": 10},
           {"a": "x0", "b": "t0", "gbps": 10}, {"a": "t0", "b": "t1", "gbps": 40},
           {"a": "t1", "b": "p0", "gbps": 10}, {"a": "t1", "b": "p1", "gbps": 10},
           {"a": "t1", "b": "w4", "gbps": 10}]}
EOF
cat >"$tmp/jobs.json" <<'EOF'
{"jobs": [{"id": "j0", "workers": ["w0", "w1", "w2"], "ps": ["p0", "p1"], "gradient_bytes": 1000000},
          {"id": "j1", "workers": ["w3", "w4"], "ps": ["p1"], "gradient_bytes": 1000000}]}
EOF
declare -A IP MAC
i=1
for h in w0 w1 w2 w3 w4 x0 p0 p1; do
	IP[$h]=10.78.0.$i
	MAC[$h]=02:78:00:00:00:0$i
	i=$((i + 1))
done
IP[t0]=10.78.0.101
IP[t1]=10.78.0.102
{
	echo '{"nodes": {'
	for h in w0 w1 w2 w3 w4 x0; do
		echo "  \"$h\": {\"ip\": \"${IP[$h]}\", \"mac\": \"${MAC[$h]}\"},"
	done
	for h in p0 p1; do
		echo "  \"$h\": {\"ip\": \"${IP[$h]}\", \"mac\": \"${MAC[$h]}\", \"ctl\": \"$tmp/$h.sock\"},"
	done
	echo "  \"t0\": {\"ip\": \"${IP[t0]}\", \"ctl\": \"$tmp/t0.sock\", \"ports\": {\"w0\": {\"port\": 0},"
	echo "     \"w1\": {\"port\": 1}, \"w2\": {\"port\": 2}, \"w3\": {\"port\": 3}, \"x0\": {\"port\": 4},"
	echo "     \"t1\": {\"port\": 5}}},"
	echo "  \"t1\": {\"ip\": \"${IP[t1]}\", \"ctl\": \"$tmp/t1.sock\", \"ports\": {\"t0\": {\"port\": 0},"
	echo "     \"p0\": {\"port\": 1}, \"p1\": {\"port\": 2}, \"w4\": {\"port\": 3}}}"
	echo '}}'
} >"$tmp/deploy.json"

setup() {
	fabric_ns w0 w1 w2 w3 w4 x0 p0 p1 t0 t1 &&
		fabric_host w0 t0 p0 && fabric_host w1 t0 p1 && fabric_host w2 t0 p2 &&
		fabric_host w3 t0 p3 && fabric_host x0 t0 p4 && fabric_trunk t0 p5 t1 p0 &&
		fabric_host p0 t1 p1 && fabric_host p1 t1 p2 && fabric_host w4 t1 p3 || return 1
	if [ "${INART_IO:-}" = xdp ]; then # a frame redirected into a veth: GRO on its peer
		local h
		for h in w0 w1 w2 w3 w4 x0 p0 p1; do
			ip netns exec "$(ns $h)" ethtool -K eth0 gro on >/dev/null || return 1
		done
	fi
}
if ! setup >"$tmp/setup.err" 2>&1; then
	echo "chaos.sh: setup failed"
	sed 's/^/  | /' "$tmp/setup.err" | head
	echo "0 passed, 1 failed, $skip skipped"
	exit 1
fi

# --- daemons, restartable ---------------------------------------------------------
declare -A DPID PORTS=([t0]=p0,p1,p2,p3,p4,p5 [t1]=p0,p1,p2,p3)
SWOPT=()
if awk -v l="$LOSS" 'BEGIN {exit !(l > 0)}'; then
	if "$INART" switchd --help 2>/dev/null | grep -q -- --rx-loss; then
		SWOPT=(--rx-loss "$LOSS")
	else
		echo "chaos.sh: note: switchd has no --rx-loss in this build: frames are lost only by crashes and state losses"
	fi
fi
start() { # start NODE: its daemon (the loss options are switchd's only)
	local extra=()
	case $1 in t*) extra=("${SWOPT[@]}") ;; esac
	[ ${#extra[@]} -gt 0 ] && extra+=(--loss-seed $RANDOM)
	case $1 in t*) extra+=("${BACKEND[@]}") ;; esac
	fabric_daemon "$1" "${extra[@]}"
}
install() { fabric_install; } # the documented recovery, and the first install
for n in t0 t1 p0 p1; do
	start $n
done
if "$INART" plan "$tmp/topo.json" "$tmp/jobs.json" --algo inart -o "$tmp/plan.json" \
	>"$tmp/plan.log" 2>&1 && install; then ok; else
	bad "plan and first install"
	cat "$tmp/plan.log" "$tmp/install.log" | head
	echo "$pass passed, $fail failed, $skip skipped"
	exit 1
fi

# --- workers ---------------------------------------------------------------------
wpids=()
worker() { # worker HOST JOB RANK N_WORKERS SEED
	ip netns exec "$(ns "$1")" "$WORKER" "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
		"$tmp/deploy.json" "$2" "$3" --workers "$4" --job-seed "$5" -n 2000 \
		--pause-ms 5 --timeout-ms 2000 --seconds $((SECONDS_CHAOS + SETTLE)) \
		>"$tmp/$1.out" 2>"$tmp/$1.err" &
	wpids+=($!)
	pids+=($!)
}
worker w0 j0 0 3 1
worker w1 j0 1 3 1
worker w2 j0 2 3 1
worker w3 j1 0 2 2
worker w4 j1 1 2 2

# --- the driver ---------------------------------------------------------------------
forge() { # x0 forges and replays for a second
	ip netns exec "$(ns x0)" python3 "$(dirname "${BASH_SOURCE[0]}")/forge.py" 1 r r \
		"0:3:${IP[p0]}:${IP[w0]}" "0:3:${IP[p1]}:${IP[w0]}" "1:2:${IP[p1]}:${IP[w3]}" \
		2>>"$tmp/forge.err"
}
flood() { # idle and half-sent clients on two control sockets; stats still answered
	python3 - "$tmp/t0.sock" "$tmp/p1.sock" 2>>"$tmp/flood.err" <<'PY' &
import socket, sys, time
cs = []
for i in range(60):
    for path in sys.argv[1:3]:
        try:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(path)
            if i % 3 == 0:
                c.send(b"\x00\x00\x10\x00{\"op\":")
            cs.append(c)
        except OSError:
            pass
time.sleep(3)
PY
	local fl=$!
	pids+=($fl)
	sleep 0.5
	local d
	for d in t0 p1; do
		if timeout 10 "$INART" ctl stats "$tmp/$d.sock" >/dev/null 2>&1; then ok; else
			bad "$d answered ctl stats during a control flood"
		fi
	done
	wait $fl
}

events=0
forged=0
t_end=$((SECONDS + SECONDS_CHAOS))
echo "chaos.sh: ${SECONDS_CHAOS} s of chaos, ${STEPS} steps per worker, loss ${SWOPT[1]:-none}, switchd ${BACKEND[*]:-(default back end)}"
while [ $SECONDS -lt $t_end ]; do
	sleep "$((1 + RANDOM % 2)).$((RANDOM % 10))"
	e=$((RANDOM % 9))
	events=$((events + 1))
	case $e in
	0 | 1 | 2 | 3)
		n=$(echo t0 t1 p0 p1 | cut -d' ' -f$((e + 1)))
		echo "$SECONDS: crash $n" >>"$tmp/events.log"
		kill -9 "${DPID[$n]}" 2>/dev/null
		wait "${DPID[$n]}" 2>/dev/null
		sleep 0.$((RANDOM % 8))
		start "$n"
		install || echo "$SECONDS: install failed" >>"$tmp/events.log"
		;;
	4 | 5)
		echo "$SECONDS: t0 loses its state" >>"$tmp/events.log"
		"$INART" ctl lose-state "$tmp/t0.sock" >/dev/null 2>&1
		;;
	6 | 7)
		if command -v python3 >/dev/null 2>&1; then
			echo "$SECONDS: forgeries from x0" >>"$tmp/events.log"
			forge
			forged=1
		fi
		;;
	8)
		if command -v python3 >/dev/null 2>&1; then
			echo "$SECONDS: control flood" >>"$tmp/events.log"
			flood
		fi
		;;
	esac
done
# the last recovery converges: every worker finishes its steps
wfail=0
for w in "${wpids[@]}"; do
	wait "$w" || wfail=1
done
if ! grep -q "install failed" "$tmp/events.log" 2>/dev/null; then ok; else
	bad "a recovery install failed: $(grep -B1 "install failed" "$tmp/events.log" | head -4)"
	tail -20 "$tmp/install.log" | sed 's/^/  | /'
fi

# --- verdict -------------------------------------------------------------------
total=0
for h in w0 w1 w2 w3 w4; do
	line=$(cat "$tmp/$h.out")
	echo "chaos.sh: $h: $line"
	okn=$(echo "$line" | awk '{print $4}')
	wrong=$(echo "$line" | awk '{print $6}')
	hung=$(echo "$line" | awk '{print $14}')
	age=$(echo "$line" | awk '{print $20}')
	total=$((total + ${okn:-0}))
	if [ "${wrong:-1}" = 0 ]; then ok; else bad "$h: $wrong all-reduces returned 0 with a wrong sum"; fi
	if [ "${hung:-1}" = 0 ]; then ok; else bad "$h: $hung calls outlived their timeout by more than 1 s"; fi
	if [ "${okn:-0}" -ge "$STEPS" ] && awk -v a="${age:-99}" 'BEGIN {exit !(a <= 5)}'; then ok; else
		bad "$h: ${okn:-0} all-reduces (at least $STEPS), the last ${age:-?} s before the end (at most 5: converged)"
		tail -5 "$tmp/$h.err" | sed 's/^/  | /'
	fi
done
if [ $wfail -eq 0 ]; then ok; else bad "a worker exited with an error"; fi
if [ $forged -eq 1 ]; then
	"$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/t0.stats" 2>&1
	rank=$(grep -o '"rank": [0-9]*' "$tmp/t0.stats" | awk '{print $2}')
	spoof=$(grep -o '"spoofed": [0-9]*' "$tmp/t0.stats" | awk '{print $2}')
	# (counters start again when t0 crashed after the forgeries)
	if [ "${rank:-0}" -gt 0 ] || [ "${spoof:-0}" -gt 0 ] || grep -q "crash t0" "$tmp/events.log"; then
		ok
	else
		bad "t0 counted no forgery dropped at the first hop"
	fi
fi
# the loss was really injected: the gates' counters (since each switch's
# last start) show frames lost
if [ ${#SWOPT[@]} -gt 0 ]; then
	if command -v python3 >/dev/null 2>&1; then
		lost=0
		for n in t0 t1; do
			l=$("$INART" ctl stats "$tmp/$n.sock" --json 2>/dev/null | python3 -c \
				'import json, sys; print(sum(json.load(sys.stdin).get("gate", {}).get("rx_lost", [])))' \
				2>/dev/null)
			echo "chaos.sh: $n lost ${l:-?} received frames since its last start (--rx-loss $LOSS)"
			lost=$((lost + ${l:-0}))
		done
		if [ "$lost" -gt 0 ]; then ok; else bad "--rx-loss $LOSS given, but no switch counted a frame lost"; fi
	else
		skipped 1 "python3 missing: the injected loss is not checked"
	fi
fi
for n in t0 t1 p0 p1; do
	if kill -0 "${DPID[$n]}" 2>/dev/null; then ok; else bad "daemon $n alive at the end"; fi
done
echo "chaos.sh: $events events ($(sort "$tmp/events.log" 2>/dev/null | awk '{$1=""; print}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')); $total all-reduces returned 0, every one exact; $SECONDS s in all"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
