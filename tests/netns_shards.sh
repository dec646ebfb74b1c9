#!/usr/bin/env bash
# netns_shards.sh INART ALLREDUCE: the install transaction across the shards
# of a running `inart switchd --io xdp --cores 2` (issue 24), on the fabric
# of netns_cores.sh (w0 w1 w2 -- t0 (INA) -- t1 -- p0 p1):
#   (a) plan A puts two trees of j0 on t0 (one to each PS); t0's per-shard
#       info shows both shards holding the same tables (same digest, both
#       trees) and its per-shard stats show each shard aggregating each of
#       the two trees (a tree's slots go round the shards), the shards'
#       counters adding up to the sums; all-reduces exact;
#   (b) t0 started with --test-faults, shard 1 made to refuse the next
#       install (test_fault, errno ENOSPC): `inart ctl install` of plan B
#       (one tree, to p1), once with --keep-core (the tables swapped on the
#       live shards) and once with a new core, is refused as a whole, the
#       error naming t0's shard 1; both shards keep plan A's tables (their
#       epochs and digests as before), the PSs plan A's trees, all-reduces
#       exact on plan A; then, the fault used up, the same install goes
#       through on both shards (both one epoch further, the same new digest)
#       and all-reduces are exact on plan B, both shards aggregating;
#   and a switchd without --test-faults refuses test_fault.
# INART_IO=ring: the same on AF_PACKET fanout (default xdp).
#
# Needs root and `ip netns`; exits 77 (skipped) otherwise (INART_NO_SKIP=1:
# a failure).  Removes its namespaces and processes (trap EXIT).
set -u

. "$(dirname "${BASH_SOURCE[0]}")/netns_lib.sh" netns_shards.sh "$@" # INART ALLREDUCE, skip, run

P="inh24d$$-"
IO=${INART_IO:-xdp}
[ "$IO" = xdp ] && FABRIC_QUEUES=2 # read by fabric.sh: a socket per queue and worker
. "$(dirname "${BASH_SOURCE[0]}")/fabric.sh" # tmp, pids, nss, ns, fabric_*

declare -A IP MAC PORTS DPID
fabric_w3p2_io 79

# py FILE EXPRESSION: EXPRESSION over the JSON object j of FILE, printed;
# in stats, sh(j) is the shards' counters as objects (rows in the reply)
py() {
	/usr/bin/python3 -c "import json,sys
def sh(j):
    c = j['shard_columns']
    return [dict(s, drops=dict(zip(c['drops'], s['drops'])),
                 trees=[dict(zip(c['trees'], t)) for t in s['trees']]) for s in j['shards']]
j=json.load(open(sys.argv[1])); print($2)" "$1" 2>&1
}
info() { "$INART" ctl send "$tmp/t0.sock" '{"op": "info"}' >"$tmp/info.json" 2>&1; }
stats() { "$INART" ctl stats "$tmp/t0.sock" --json >"$tmp/stats.json" 2>&1; }
# the shards' (epoch, digest, labels, trees), one line
shard_tables() { info && py "$tmp/info.json" "[(s['epoch'], s['digest'], s['label_entries'], s['trees']) for s in j['shards']]"; }

# plan A: two trees at t0 (to p0 and p1); plan B: one tree (to p1)
if ! run "$INART" plan "$tmp/topo.json" "$tmp/jobs.json" --algo inart --time-limit 0 \
	-o "$tmp/plan0.json"; then
	echo "1 failed"
	exit 1
fi
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
p = json.load(open(d + '/plan0.json'))
def plan(ps, name):
    q = json.loads(json.dumps(p))
    j = q['jobs'][0]
    j['split'] = {x: (1.0 / len(ps) if x in ps else 0) for x in ('p0', 'p1')}
    j['flows'] = [{"worker": w, "ps": x, "agg": "t0", "path": [w, "t0"]}
                  for x in ps for w in ('w0', 'w1', 'w2')]
    j['trees'] = [{"switch": "t0", "ps": x, "parent": x, "path": ["t0", "t1", x]} for x in ps]
    json.dump(q, open(d + '/' + name, 'w'), indent=1)
plan(['p0', 'p1'], 'planA.json')
plan(['p1'], 'planB.json')
PY
cp "$tmp/planA.json" "$tmp/plan.json" # what fabric_install and fabric_allreduce install

fabric_daemon t0 --io "$IO" --cores 2 --test-faults
fabric_daemon t1 --io "$IO" --cores 2
fabric_daemon p0
fabric_daemon p1

# --- fault injection is off unless asked for --------------------------------------
out=$("$INART" ctl send "$tmp/t1.sock" '{"op": "test_fault", "shard": 1, "error": 28}' 2>&1)
rc=$?
case $rc:$out in
1:*"fault injection is off"*) ok ;;
*) bad "test_fault refused without --test-faults (exit $rc): $out" ;;
esac
out=$("$INART" ctl send "$tmp/t0.sock" '{"op": "test_fault", "shard": 2, "error": 28}' 2>&1)
case $out in *"shard 2, this switch has 2"*) ok ;; *) bad "test_fault refused for a shard t0 does not have: $out" ;; esac
out=$("$INART" ctl send "$tmp/p0.sock" '{"op": "test_fault", "shard": 0, "error": 28}' 2>&1)
case $out in *"is a switch request"*) ok ;; *) bad "a PS refuses test_fault: $out" ;; esac
info
if [ "$(py "$tmp/info.json" "j['cores'], j['io'], len(j['shards']), j['test_faults']")" = "2 $IO 2 True" ]; then ok; else
	bad "t0 runs 2 shards on $IO with --test-faults: $(head -c 400 "$tmp/info.json")"
fi

# --- (a) plan A: two trees, each aggregated on both shards -----------------------------
if fabric_install; then ok; else bad "install plan A: $(cat "$tmp/install.log")"; fi
"$INART" ctl reset-stats "$tmp/t0.sock" >/dev/null 2>&1
if fabric_allreduce 100000 3; then ok; else
	bad "all-reduce exact on plan A"
	cat "$tmp"/w?.out | head -20
	fabric_dump_stats t0 t1 p0 p1
fi
A=$(shard_tables)
case $A in
"[(1, '"*"', "*", 2), (1, '"*"', "*", 2)]") ok ;;
*) bad "both shards hold plan A's two trees at epoch 1: $A" ;;
esac
same=$(py "$tmp/info.json" "len({s['digest'] for s in j['shards']}) == 1 and j['shards'][0]['label_entries'] == j['labels'] and all(s['slots_assigned'] > 0 for s in j['shards'])")
if [ "$same" = True ]; then ok; else bad "the shards' tables the same (digest, labels), slots assigned: $(py "$tmp/info.json" "j['shards']")"; fi
stats
# every tree aggregated on every shard; each counter of the sums the shards' total
# (the ports' frames too, but with xdp those count what the XDP program
# forwarded itself as well: at least the shards')
rxop='=='
[ "$IO" = xdp ] && rxop='<='
agg=$(py "$tmp/stats.json" "[[t['aggregated'] for t in s['trees']] for s in sh(j)]")
sums=$(py "$tmp/stats.json" "all(sum(s['trees'][i][c] for s in sh(j)) == t[c] for i, t in enumerate(j['trees']) for c in ('aggregated', 'emitted', 'partial', 'results')) and all(sum(s['drops'][d] for s in sh(j)) == n for d, n in j['drops'].items()) and sum(s['rx_frames'] for s in j['shards']) $rxop sum(p['rx_pkts'] for p in j['ports'])")
echo "netns_shards.sh: plan A: aggregated per shard and tree $agg"
case $agg in
"[["[1-9]*", "[1-9]*"], ["[1-9]*", "[1-9]*"]]") ok ;;
*) bad "each shard aggregated each of plan A's two trees: $agg" ;;
esac
# ... and the rows do not count twice for a script that adds up every
# "aggregated" of the reply (netns.sh, python/inart/fabric.py's tree_counters)
all=$(grep -o '"aggregated": [0-9]*' "$tmp/stats.json" | awk '{s += $2} END {print s + 0}')
if [ "$all" = "$(py "$tmp/stats.json" "sum(t['aggregated'] for t in j['trees'])")" ]; then ok; else
	bad "every \"aggregated\" of the reply adds up to the sums' ($all)"
fi
if [ "$sums" = True ]; then ok; else
	bad "the shards' counters add up to the sums: $(py "$tmp/stats.json" "[(s['rx_frames'], s['drops'], s['trees']) for s in j['shards']], sum(p['rx_pkts'] for p in j['ports']), j['trees']")"
fi

# --- (b) shard 1 refuses: the install is refused as a whole ----------------------------
# refused: install plan B (options ...) with shard 1 armed to refuse
refused() {
	local out rc
	out=$("$INART" ctl send "$tmp/t0.sock" '{"op": "test_fault", "shard": 1, "error": 28}' 2>&1)
	case $out in *'"armed"'*) ok ;; *) bad "test_fault armed: $out" ;; esac
	"$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/planB.json" \
		--deploy "$tmp/deploy.json" "$@" >"$tmp/inst.out" 2>&1
	rc=$?
	echo "netns_shards.sh: install ($*) with the fault: $(grep -m1 "shard 1" "$tmp/inst.out")"
	if [ $rc -eq 1 ] && grep -q "t0.*shard 1: injected failure: No space left on device" "$tmp/inst.out"; then ok; else
		bad "install of plan B ($*) refused, naming t0's shard 1 (exit $rc): $(cat "$tmp/inst.out")"
	fi
	now=$(shard_tables)
	if [ "$now" = "$A" ]; then ok; else bad "after the refused install ($*) both shards on plan A's tables: was $A, now $now"; fi
	if [ "$(py "$tmp/info.json" "'test_fault' in j")" = False ]; then ok; else bad "the fault used up: $(py "$tmp/info.json" "j.get('test_fault')")"; fi
	"$INART" ctl show "$tmp/p0.sock" >"$tmp/show.out" 2>&1
	if grep -q "^1 trees" "$tmp/show.out"; then ok; else bad "p0 keeps plan A's tree ($*): $(cat "$tmp/show.out")"; fi
}
refused --keep-core
refused
if fabric_allreduce 100000 3; then ok; else
	bad "all-reduce exact on plan A after the refused installs"
	cat "$tmp"/w?.out | head -20
	fabric_dump_stats t0 t1 p0 p1
fi

# --- the fault used up: the same install goes through on both shards -------------------
if "$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/planB.json" \
	--deploy "$tmp/deploy.json" --keep-core >"$tmp/inst.out" 2>&1; then ok; else
	bad "install of plan B (--keep-core) once the fault is used up: $(cat "$tmp/inst.out")"
fi
B=$(shard_tables)
case $B in
"[(2, '"*"', "*", 1), (2, '"*"', "*", 1)]") ok ;;
*) bad "both shards at epoch 2 holding plan B's tree: $B" ;;
esac
if [ "$(py "$tmp/info.json" "len({s['digest'] for s in j['shards']}) == 1")" = True ] && [ "$B" != "$A" ]; then ok; else
	bad "both shards hold the same new tables: $A -> $B"
fi
cp "$tmp/planB.json" "$tmp/plan.json"
"$INART" ctl reset-stats "$tmp/t0.sock" >/dev/null 2>&1
if fabric_allreduce 100000 3; then ok; else
	bad "all-reduce exact on plan B"
	cat "$tmp"/w?.out | head -20
	fabric_dump_stats t0 t1 p0 p1
fi
if [ "$(shard_tables)" = "$B" ]; then ok; else bad "the all-reduces' install of plan B left t0's core as it was: $B, now $(shard_tables)"; fi
stats
agg=$(py "$tmp/stats.json" "[[t['aggregated'] for t in s['trees']] for s in sh(j)]")
echo "netns_shards.sh: plan B: aggregated per shard and tree $agg"
case $agg in
"[["[1-9]*"], ["[1-9]*"]]") ok ;;
*) bad "each shard aggregated plan B's tree: $agg" ;;
esac
"$INART" ctl stats "$tmp/t0.sock" >"$tmp/stats.txt" 2>&1
if [ "$(grep -c '^shard [01] .* aggregated *[1-9]' "$tmp/stats.txt")" -eq 2 ]; then ok; else bad "ctl stats prints a line per shard: $(cat "$tmp/stats.txt")"; fi
for d in t0 t1; do
	if kill -0 "${DPID[$d]}" 2>/dev/null; then ok; else bad "$d still running: $(tail -5 "$tmp/$d.log")"; fi
done
fabric_logs_clean t0 t1 p0 p1

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
