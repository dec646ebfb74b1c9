#!/usr/bin/env bash
# deadpeer_bench.sh [SECONDS]: packets per second a worker sends to a PS that
# never answers (issue 7's target: at most 1000 per second after 1 s of no
# progress; before the fix, about 22k retransmissions and 67k probes per
# second).
#
# On loopback, no root needed: the worker of a one-worker job with two PSs
# (two trees, window 64 each) runs all-reduces (tests/chaos_worker, the
# public API, a timeout of SECONDS + 5 s per call); a fake PS bound to both
# PS addresses answers every contribution with its result for 2 s (so the
# worker's timers learn the short loopback round trip, as in a running job),
# then goes silent -- the peer is dead -- and counts, per second, the
# datagrams that still arrive, for SECONDS (default 10).  Prints the count
# of every second and PASS/MISS.  Figures in docs/benchmarks.md.
set -u

secs=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${BUILD:-$root/build}
WORKER=$bdir/tests/chaos_worker
if [ ! -x "$WORKER" ]; then
	echo "deadpeer_bench: $WORKER missing (ninja -C $bdir; BUILD=dir selects the build)" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
a=$(($$ % 200 + 20))
b=$(($$ / 200 % 200 + 20))
cat >"$tmp/topo.json" <<'EOF'
{"nodes": [{"id": "w0", "kind": "host"}, {"id": "w1", "kind": "host"}, {"id": "p0", "kind": "host"},
           {"id": "p1", "kind": "host"}, {"id": "s0", "kind": "switch"}],
 "links": [{"a": "w0", "b": "s0", "gbps": 10}, {"a": "w1", "b": "s0", "gbps": 10},
           {"a": "s0", "b": "p0", "gbps": 10}, {"a": "s0", "b": "p1", "gbps": 10}]}
EOF
cat >"$tmp/jobs.json" <<'EOF'
{"jobs": [{"id": "j0", "workers": ["w0"], "ps": ["p0", "p1"], "gradient_bytes": 4000000}]}
EOF
cat >"$tmp/plan.json" <<'EOF'
{"jobs": [{"id": "j0", "split": {"p0": 0.5, "p1": 0.5},
  "flows": [{"worker": "w0", "ps": "p0", "agg": "p0", "path": ["w0", "s0", "p0"]},
            {"worker": "w0", "ps": "p1", "agg": "p1", "path": ["w0", "s0", "p1"]}]}]}
EOF
cat >"$tmp/deploy.json" <<EOF
{"nodes": {"w0": {"ip": "127.$a.$b.1"}, "w1": {"ip": "127.$a.$b.4"}, "p0": {"ip": "127.$a.$b.2"},
           "p1": {"ip": "127.$a.$b.5"},
           "s0": {"ip": "127.$a.$b.3", "ports": {"w0": {"port": 0}, "w1": {"port": 1},
                  "p0": {"port": 2}, "p1": {"port": 3}}}}}
EOF
python3 - "127.$a.$b.2" "127.$a.$b.5" "$secs" >"$tmp/sink.out" <<'PY' &
import select, socket, struct, sys, time
socks = []
for ip in sys.argv[1:3]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((ip, 47470)); socks.append(s)
start = time.time()
silent = None
counts = {}
end = start + 2 + float(sys.argv[3])
while time.time() < end:
    r, _, _ = select.select(socks, [], [], 0.1)
    for s in r:
        d, peer = s.recvfrom(2048)
        now = time.time()
        if now < start + 2:
            # the only worker's contribution is the result: DATA -> RESULT
            if len(d) >= 40 and d[1] & 0x01 and not d[1] & 0x40:
                s.sendto(d[:1] + bytes([0x02]) + d[2:12] + b"\0\0\0\0" + d[16:], peer)
            continue
        if silent is None:
            silent = start + 2
        k = int(now - silent)
        counts[k] = counts.get(k, 0) + 1
for k in range(int(float(sys.argv[3]))):
    print(k, counts.get(k, 0))
PY
sink=$!
sleep 0.3
"$WORKER" "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" "$tmp/deploy.json" j0 0 \
	--workers 1 -n 700000 --timeout-ms $(((secs + 5) * 1000)) --seconds 2 >"$tmp/worker.out" 2>&1 &
wp=$!
wait $sink
kill $wp 2>/dev/null
wait $wp 2>/dev/null
echo "deadpeer_bench: one worker, two trees of 978 chunks (window 64 each), answered for 2 s, then"
echo "a dead PS; datagrams per second from the moment it went silent:"
worst=0
while read -r s n; do
	echo "  second $s: $n datagrams"
	if [ "$s" -ge 1 ] && [ "$s" -lt "$secs" ] && [ "$n" -gt "$worst" ]; then
		worst=$n
	fi
done <"$tmp/sink.out"
if [ ! -s "$tmp/sink.out" ]; then
	echo "MISS: the fake PS counted nothing"
elif [ "$worst" -le 1000 ]; then
	echo "PASS: at most $worst datagrams per second after the first second (target 1000)"
else
	echo "MISS: $worst datagrams in a second after the first (target 1000)"
fi
