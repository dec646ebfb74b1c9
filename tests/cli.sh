#!/usr/bin/env bash
# cli.sh INART: command-line tests of the `inart` program (meson runs it with
# the path of the built binary).  Checks exit codes (0 ok, 1 invalid input or
# plan, 2 usage), that every error names the file at fault, the
# gen -> check -> plan -> eval round trip, hand-written plans with
# hand-computed times, compare in all formats and dot through Graphviz.
# Prints "N passed, N failed, N skipped"; exits 1 if anything failed.  A
# check that cannot run here (no Graphviz) is counted as skipped and named;
# with INART_NO_SKIP=1 (CI: .ci/run) a skipped check counts as failed.
set -u

INART=${1:?usage: cli.sh PATH-TO-INART}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # skipped N WHY
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

pass=0
fail=0
skip=0
out=$tmp/out
err=$tmp/err

ok() {
	pass=$((pass + 1))
}

bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
	echo "  stdout: $(head -c 600 "$out")"
	echo "  stderr: $(head -c 600 "$err")"
}

# expect RC DESC -- CMD...: CMD exits with RC.
expect() {
	local rc=$1 desc=$2
	shift 3
	"$@" >"$out" 2>"$err" </dev/null
	local got=$?
	if [ "$got" -eq "$rc" ]; then ok; else bad "$desc: exit $got, expected $rc"; fi
}

# expect_err RC TEXT DESC -- CMD...: exits RC and stderr contains TEXT.
expect_err() {
	local rc=$1 text=$2 desc=$3
	shift 4
	"$@" >"$out" 2>"$err" </dev/null
	local got=$?
	if [ "$got" -ne "$rc" ]; then
		bad "$desc: exit $got, expected $rc"
	elif ! grep -qF -- "$text" "$err"; then
		bad "$desc: stderr lacks '$text'"
	else
		ok
	fi
}

# expect_out TEXT DESC: the last command's stdout contains TEXT.
expect_out() {
	if grep -qF -- "$1" "$out"; then ok; else bad "$2: stdout lacks '$1'"; fi
}

# expect_stderr TEXT DESC: the last command's stderr contains TEXT.
expect_stderr() {
	if grep -qF -- "$1" "$err"; then ok; else bad "$2: stderr lacks '$1'"; fi
}

# pycheck DESC FILE EXPR: python3 evaluates EXPR with d = json.load(FILE).
pycheck() {
	if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" 2>>"$err"; then
		ok
	else
		bad "$1: $3"
	fi
}

# ---------------------------------------------------------------- help, version
expect 0 "--help" -- "$INART" --help
expect_out "usage: inart" "--help"
expect 0 "help" -- "$INART" help
expect 0 "--version" -- "$INART" --version
expect_out "inart " "--version"
for c in topo plan eval compare dot run; do
	expect 0 "$c --help" -- "$INART" "$c" --help
	expect_out "usage: inart $c" "$c --help"
	expect 0 "help $c" -- "$INART" help "$c"
	expect_out "usage: inart $c" "help $c"
done
for a in gen check describe; do
	expect 0 "topo $a --help" -- "$INART" topo "$a" --help
	expect_out "usage: inart topo" "topo $a --help"
done

# ---------------------------------------------------------------- usage errors
expect 2 "no arguments" -- "$INART"
expect 2 "unknown command" -- "$INART" frobnicate
expect_err 2 "frobnicate" "unknown command named" -- "$INART" frobnicate
expect 2 "unknown global option" -- "$INART" --frob
expect 2 "help for unknown command" -- "$INART" help frob
expect 2 "topo without action" -- "$INART" topo
expect 2 "topo unknown action" -- "$INART" topo frob
expect 2 "gen without family" -- "$INART" topo gen
expect 2 "gen unknown family" -- "$INART" topo gen torus --k 4
expect 2 "fattree without --k" -- "$INART" topo gen fattree
expect_err 2 "--k" "bad number" -- "$INART" topo gen fattree --k four
expect 2 "trailing garbage in number" -- "$INART" topo gen fattree --k 4x
expect 2 "negative number" -- "$INART" topo gen fattree --k -4
expect 2 "missing option argument" -- "$INART" topo gen fattree --k
expect_err 2 "--bogus" "unknown option" -- "$INART" topo gen fattree --k 4 --bogus
expect 2 "unknown short option" -- "$INART" topo gen fattree --k 4 -q
expect 2 "bad --ina" -- "$INART" topo gen fattree --k 4 --ina some
expect 2 "bad --ina fraction" -- "$INART" topo gen fattree --k 4 --ina random:1.5
expect 2 "bad --agg-gbps" -- "$INART" topo gen fattree --k 4 --agg-gbps 0
expect 2 "bad --host-gbps" -- "$INART" topo gen fattree --k 4 --host-gbps nan
expect 2 "leafspine incomplete" -- "$INART" topo gen leafspine --spines 2 --leaves 2
expect 2 "bcube incomplete" -- "$INART" topo gen bcube --n 4
expect 2 "check without file" -- "$INART" topo check
expect 2 "check too many files" -- "$INART" topo check a b c
expect 2 "describe without file" -- "$INART" topo describe
expect 2 "plan without files" -- "$INART" plan
expect 2 "plan without jobs" -- "$INART" plan t.json
expect 2 "plan extra argument" -- "$INART" plan t.json j.json x.json
expect_err 2 "nosuch" "plan unknown algorithm" -- "$INART" plan t.json j.json --algo nosuch
expect 2 "plan bad seed" -- "$INART" plan t.json j.json --seed -1
expect 2 "plan bad trials" -- "$INART" plan t.json j.json --trials 0
expect 2 "plan bad k-paths" -- "$INART" plan t.json j.json --k-paths abc
expect 2 "plan bad time limit" -- "$INART" plan t.json j.json --milp-time-limit -3
expect 2 "plan bad --time-limit" -- "$INART" plan t.json j.json --time-limit -1
expect 2 "eval missing plan" -- "$INART" eval t.json j.json
expect 2 "eval bad --top" -- "$INART" eval t.json j.json p.json --top x
expect 2 "compare bad format" -- "$INART" compare t.json j.json --format xml
expect 2 "compare empty algo" -- "$INART" compare t.json j.json --algos ps,,atp
expect 2 "compare unknown algo" -- "$INART" compare t.json j.json --algos ps,nosuch
expect 2 "dot jobs without plan" -- "$INART" dot t.json j.json
expect 2 "dot too many" -- "$INART" dot t.json j.json p.json q.json
expect 2 "run unknown scenario" -- "$INART" run --scenario nosuch
expect 2 "run extra argument" -- "$INART" run extra
expect 2 "run bad format" -- "$INART" run --format yaml

# ---------------------------------------------------------------- generators
expect 0 "gen fattree" -- "$INART" topo gen fattree --k 4 -o ft4.json
expect 0 "check fattree" -- "$INART" topo check ft4.json
expect_out "16 hosts, 20 switches, 20 INA" "check fattree counts"
expect 0 "gen fattree tor" -- "$INART" topo gen fattree --k 4 --ina tor --trees 2 \
	--agg-gbps 200 --host-gbps 25 --fabric-gbps 40 -o ft4tor.json
expect 0 "describe fattree tor" -- "$INART" topo describe ft4tor.json
expect_out "8 INA-capable" "describe: INA count"
expect_out "8x 2" "describe: tree budgets"
expect_out "32x 25 Gbit/s" "describe: host capacities"
expect 0 "gen to stdout" -- "$INART" topo gen fattree --k 4 --ina none
pycheck "generated JSON" "$out" 'len(d["nodes"]) == 36 and all("ina" not in n for n in d["nodes"])'
expect 0 "gen random INA" -- "$INART" topo gen fattree --k 4 --ina random:0.5 --seed 7 -o r1.json
expect 0 "gen random INA again" -- "$INART" topo gen fattree --k 4 --ina random:0.5 --seed 7 -o r2.json
if cmp -s r1.json r2.json; then ok; else bad "gen with the same seed differs"; fi
expect 0 "gen leafspine" -- "$INART" topo gen leafspine --spines 2 --leaves 4 --hosts 4 -o ls.json
expect 0 "check leafspine" -- "$INART" topo check ls.json
expect_out "16 hosts, 6 switches" "leafspine counts"
expect 0 "gen bcube" -- "$INART" topo gen bcube --n 4 --k 1 -o bc.json
expect 0 "check bcube" -- "$INART" topo check bc.json
expect_out "16 hosts, 8 switches" "bcube counts"
expect 1 "fattree odd k" -- "$INART" topo gen fattree --k 3
expect_err 1 "$tmp/nodir/x.json" "unwritable output" -- \
	"$INART" topo gen fattree --k 4 -o "$tmp/nodir/x.json"
"$INART" topo check - <ft4.json >"$out" 2>"$err"
if [ $? -eq 0 ]; then ok; else bad "topo check from stdin"; fi

# ---------------------------------------------------------------- bad input files
bad_file() { # name content
	printf '%s\n' "$2" >"$1"
}
bad_file syntax.json '{"nodes": [{"id": "h0", "kind": "host"},
  {"id": "e0" "kind": "switch"}], "links": []}'
expect_err 1 "inart: syntax.json:2:" "malformed topology JSON" -- "$INART" topo check syntax.json
bad_file unknown_node.json '{"nodes": [{"id": "h0", "kind": "host"}, {"id": "e0", "kind": "switch"}],
 "links": [{"a": "h0", "b": "e9", "gbps": 10}]}'
expect_err 1 "unknown_node.json" "link to unknown node" -- "$INART" topo check unknown_node.json
expect_err 1 "e9" "link to unknown node names it" -- "$INART" topo check unknown_node.json
bad_file dup.json '{"nodes": [{"id": "h0", "kind": "host"}, {"id": "h0", "kind": "switch"}],
 "links": []}'
expect_err 1 "dup.json" "duplicate id" -- "$INART" topo check dup.json
bad_file cap.json '{"nodes": [{"id": "h0", "kind": "host"}, {"id": "e0", "kind": "switch"}],
 "links": [{"a": "h0", "b": "e0", "gbps": 0}]}'
expect_err 1 "cap.json" "zero capacity" -- "$INART" topo check cap.json
bad_file bg.json '{"nodes": [{"id": "h0", "kind": "host"}, {"id": "e0", "kind": "switch"}],
 "links": [{"a": "h0", "b": "e0", "gbps": 10, "background_gbps": 12}]}'
expect_err 1 "bg.json" "background above capacity" -- "$INART" topo check bg.json
expect_err 1 "missing.json" "missing file" -- "$INART" topo check missing.json
bad_file empty.json ''
expect_err 1 "empty.json" "empty file" -- "$INART" topo describe empty.json

# A hand-written tiny network: workers h0, h1 under INA switch e0, PS h2
# behind e0 as well; n0 is a switch without INA.
cat >tiny.json <<'EOF'
{"nodes": [
  {"id": "h0", "kind": "host"}, {"id": "h1", "kind": "host"}, {"id": "h2", "kind": "host"},
  {"id": "h3", "kind": "host"},
  {"id": "e0", "kind": "switch", "ina": {"agg_gbps": 100, "trees": 1}},
  {"id": "n0", "kind": "switch"}],
 "links": [
  {"a": "h0", "b": "e0", "gbps": 10}, {"a": "h1", "b": "e0", "gbps": 10},
  {"a": "e0", "b": "h2", "gbps": 10}, {"a": "e0", "b": "n0", "gbps": 10},
  {"a": "n0", "b": "h3", "gbps": 10}]}
EOF
# 1.25e8 bytes = 1 Gbit
cat >tinyjobs.json <<'EOF'
{"jobs": [{"id": "j0", "workers": ["h0", "h1"], "ps": ["h2"], "gradient_bytes": 125000000}]}
EOF
expect 0 "tiny check" -- "$INART" topo check tiny.json tinyjobs.json
expect_out "1 jobs, 2 workers" "tiny jobs counted"
bad_file jmodel.json '{"jobs": [{"id": "j0", "workers": ["h0"], "ps": ["h2"], "model": "nosuchnet"}]}'
expect_err 1 "jmodel.json" "unknown model" -- "$INART" topo check tiny.json jmodel.json
expect_err 1 "nosuchnet" "unknown model named" -- "$INART" topo check tiny.json jmodel.json
bad_file jswitch.json '{"jobs": [{"id": "j0", "workers": ["e0"], "ps": ["h2"], "model": "resnet50"}]}'
expect_err 1 "jswitch.json" "worker is a switch" -- "$INART" topo check tiny.json jswitch.json
bad_file jempty.json '{"jobs": [{"id": "j0", "workers": [], "ps": ["h2"], "model": "resnet50"}]}'
expect_err 1 "jempty.json" "empty job" -- "$INART" topo check tiny.json jempty.json
bad_file junk.json '{"jobs": [{"id": "j0", "workers": ["h7"], "ps": ["h2"], "model": "resnet50"}]}'
expect_err 1 "h7" "unknown worker" -- "$INART" plan tiny.json junk.json --algo ps
bad_file jsyntax.json '{"jobs": [}'
expect_err 1 "jsyntax.json:1:" "malformed jobs JSON" -- "$INART" compare tiny.json jsyntax.json

# ---------------------------------------------------------------- hand-written plans
# INA at e0: every arc of h0-e0, h1-e0, e0-h2 carries 1 Gbit each way in
# turn: (push + pull) / 10 Gbit/s = 0.1 s on each directed arc; e0 merges
# 2 Gbit at 100 Gbit/s = 0.02 s.  comm = push = pull = 0.1 s.
cat >plan_ina.json <<'EOF'
{"algorithm": "hand", "jobs": [{"id": "j0", "split": {"h2": 1},
 "flows": [{"worker": "h0", "ps": "h2", "agg": "e0", "path": ["h0", "e0"]},
           {"worker": "h1", "ps": "h2", "agg": "e0", "path": ["h1", "e0"]}],
 "trees": [{"switch": "e0", "ps": "h2", "parent": "h2", "path": ["e0", "h2"]}]}]}
EOF
expect 0 "eval hand plan" -- "$INART" eval tiny.json tinyjobs.json plan_ina.json
expect_out "valid plan" "eval hand plan text"
expect_out "e0->h2" "eval lists loaded link"
expect 0 "eval hand plan json" -- "$INART" eval tiny.json tinyjobs.json plan_ina.json --json
pycheck "hand plan comm time 0.1 s" "$out" \
	'abs(d["comm_time_s"] - 0.1) < 1e-9 and abs(d["push_time_s"] - 0.1) < 1e-9'
pycheck "hand plan trees" "$out" \
	'[(s["id"], s["trees"], s["budget"]) for s in d["switches"]] == [("e0", 1, 1)]'
pycheck "hand plan aggregation input 2 Gbit" "$out" 'abs(d["switches"][0]["agg_gbit"] - 2) < 1e-9'
# No INA: both streams cross e0->h2: 2 Gbit push, 2 pull back: 0.2 s.
cat >plan_noina.json <<'EOF'
{"algorithm": "hand", "jobs": [{"id": "j0", "split": {"h2": 1},
 "flows": [{"worker": "h0", "ps": "h2", "agg": "h2", "path": ["h0", "e0", "h2"]},
           {"worker": "h1", "ps": "h2", "agg": "h2", "path": ["h1", "e0", "h2"]}]}]}
EOF
expect 0 "eval no-INA plan" -- "$INART" eval tiny.json tinyjobs.json plan_noina.json --json
pycheck "no-INA comm time 0.2 s" "$out" 'abs(d["comm_time_s"] - 0.2) < 1e-9'
pycheck "no-INA bottleneck e0->h2" "$out" \
	'd["bottleneck"] == {"kind": "link", "from": "e0", "to": "h2"}'
pycheck "no-INA PS ingress 2 Gbit" "$out" \
	'[(p["id"], round(p["ingress_gbit"], 9)) for p in d["ps_ingress"]] == [("h2", 2.0)]'

# Invalid plans: exit 1, the message names the plan file and the rule.
sed 's/"h2": 1}/"h2": 0.7}/' plan_ina.json >plan_split.json
expect_err 1 "plan_split.json" "split not summing to 1" -- \
	"$INART" eval tiny.json tinyjobs.json plan_split.json
expect_err 1 "sum" "split reason" -- "$INART" eval tiny.json tinyjobs.json plan_split.json
expect 1 "invalid plan with --json" -- "$INART" eval tiny.json tinyjobs.json plan_split.json --json
pycheck "invalid plan json" "$out" 'd["valid"] is False and "sum" in d["reason"]'
cat >plan_noncontig.json <<'EOF'
{"algorithm": "hand", "jobs": [{"id": "j0", "split": {"h2": 1},
 "flows": [{"worker": "h0", "ps": "h2", "agg": "h2", "path": ["h0", "h2"]},
           {"worker": "h1", "ps": "h2", "agg": "h2", "path": ["h1", "e0", "h2"]}]}]}
EOF
expect_err 1 "contiguous" "non-contiguous path" -- \
	"$INART" eval tiny.json tinyjobs.json plan_noncontig.json
cat >plan_nonina.json <<'EOF'
{"algorithm": "hand", "jobs": [{"id": "j0", "split": {"h2": 1},
 "flows": [{"worker": "h0", "ps": "h2", "agg": "n0", "path": ["h0", "e0", "n0"]},
           {"worker": "h1", "ps": "h2", "agg": "h2", "path": ["h1", "e0", "h2"]}]}]}
EOF
expect_err 1 "not an INA switch" "aggregation at a non-INA switch" -- \
	"$INART" eval tiny.json tinyjobs.json plan_nonina.json
cat >plan_missing.json <<'EOF'
{"algorithm": "hand", "jobs": [{"id": "j0", "split": {"h2": 1},
 "flows": [{"worker": "h0", "ps": "h2", "agg": "h2", "path": ["h0", "e0", "h2"]}]}]}
EOF
expect_err 1 "h1" "worker without flow" -- "$INART" eval tiny.json tinyjobs.json plan_missing.json
cat >plan_unknown.json <<'EOF'
{"algorithm": "hand", "jobs": [{"id": "j0", "split": {"h2": 1},
 "flows": [{"worker": "h0", "ps": "h2", "agg": "h2", "path": ["h0", "zz", "h2"]}]}]}
EOF
expect_err 1 "plan_unknown.json" "plan with unknown node" -- \
	"$INART" eval tiny.json tinyjobs.json plan_unknown.json
expect_err 1 "zz" "plan unknown node named" -- \
	"$INART" eval tiny.json tinyjobs.json plan_unknown.json
printf '{"jobs": [\n  {"id": 1,}\n' >plan_syntax.json
expect_err 1 "plan_syntax.json:2:" "malformed plan JSON" -- \
	"$INART" eval tiny.json tinyjobs.json plan_syntax.json
expect_err 1 "plan_split.json" "dot rejects invalid plan" -- \
	"$INART" dot tiny.json tinyjobs.json plan_split.json

# ---------------------------------------------------------------- round trip
# fat-tree k=4: hosts h0..h15, four per edge switch, two edges per pod.
cat >jobs4.json <<'EOF'
{"jobs": [
  {"id": "j0", "workers": ["h0", "h1", "h2", "h4", "h5", "h6"], "ps": ["h8", "h12"],
   "model": "resnet50"},
  {"id": "j1", "workers": ["h9", "h13", "h3"], "ps": ["h7", "h14"], "gradient_bytes": 50000000}]}
EOF
expect 0 "check fat-tree jobs" -- "$INART" topo check ft4tor.json jobs4.json
# (inart without a time limit: a seed then reproduces the plan, checked below)
for algo in inart inart-even inart-sp grid ps byteps switchml atp ring milp; do
	expect 0 "plan $algo" -- "$INART" plan ft4tor.json jobs4.json --algo "$algo" --seed 3 \
		--trials 8 --milp-time-limit 20 --time-limit 0 -o "plan_$algo.json"
	expect_stderr "inart plan: $algo: comm" "plan $algo summary"
	if [ -s "plan_$algo.json" ]; then ok; else bad "plan $algo wrote nothing"; fi
	expect 0 "eval $algo" -- "$INART" eval ft4tor.json jobs4.json "plan_$algo.json" --json
	cp "$out" "eval_$algo.json"
	python3 - "plan_$algo.json" "eval_$algo.json" "$algo" <<'EOF' >>"$err" 2>&1
import json, sys
p = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))
assert p["algorithm"] == sys.argv[3], p["algorithm"]
assert e["valid"] is True
assert abs(p["comm_time_s"] - e["comm_time_s"]) <= 1e-9 * max(1, e["comm_time_s"]), \
    (p["comm_time_s"], e["comm_time_s"])
EOF
	if [ $? -eq 0 ]; then ok; else bad "plan $algo: file and evaluator disagree"; fi
done
expect 0 "plan lp (bound only)" -- "$INART" plan ft4tor.json jobs4.json --algo lp -o plan_lp.json
# InArt's own search, without the guard, against every baseline and the bounds
expect 0 "plan inart, no guard" -- "$INART" plan ft4tor.json jobs4.json --algo inart --seed 3 \
	--trials 8 --time-limit 2 --no-baseline-guard -o plan_inart_ng.json
python3 - <<'EOF' >>"$err" 2>&1
import json
c = {a: json.load(open("plan_%s.json" % a))["comm_time_s"]
     for a in ["inart_ng", "ps", "byteps", "switchml", "atp", "inart-sp", "grid", "inart-even",
               "milp", "lp"]}
best = min(c[a] for a in ["ps", "byteps", "switchml", "atp", "inart-sp", "grid", "inart-even"])
assert c["inart_ng"] <= best * (1 + 1e-9), (c["inart_ng"], best)
assert c["lp"] <= c["milp"] * (1 + 1e-6), (c["lp"], c["milp"])
assert c["lp"] <= c["inart_ng"] * (1 + 1e-6), (c["lp"], c["inart_ng"])
assert json.load(open("plan_inart_ng.json"))["origin"] is None
EOF
if [ $? -eq 0 ]; then ok; else bad "lp <= milp, lp <= inart (no guard) <= every baseline"; fi
# milp's status, bound and gap, both ways: proven on this small instance, and
# stopped by a 1 s limit on scarce-small/1 (CBC needs minutes to prove it)
pycheck "milp proven optimal" plan_milp.json \
	'd["milp_status"] == "optimal" and d["bound_source"] == "cbc" and abs(d["best_bound_s"] - d["comm_time_s"]) <= 1e-6 * d["comm_time_s"]'
expect 0 "scarce-small/1 written" -- "$INART" run --scenario scarce-small/1 --write ss1 --no-compare
expect 0 "milp with a 1 s limit" -- "$INART" plan ss1/topo.json ss1/jobs.json --algo milp \
	--milp-time-limit 1 -o plan_milp_limit.json
pycheck "milp stopped by its limit" plan_milp_limit.json \
	'd["milp_status"] == "time_limit" and d["best_bound_s"] < d["comm_time_s"] * (1 - 1e-6)'
expect_stderr "time limit, best bound" "milp summary says time limit and bound"
# ring jobs: on scarce-small/6 the ring beats every PS plan; inart finds it
# (no guard), --no-ring keeps every job on PSs
expect 0 "scarce-small/6 written" -- "$INART" run --scenario scarce-small/6 --write ss6 --no-compare
expect 0 "plan inart with ring jobs" -- "$INART" plan ss6/topo.json ss6/jobs.json --algo inart \
	--trials 8 --time-limit 0 --no-baseline-guard -o plan_ss6.json
expect 0 "plan inart --no-ring" -- "$INART" plan ss6/topo.json ss6/jobs.json --algo inart \
	--trials 8 --time-limit 0 --no-baseline-guard --no-ring -o plan_ss6_nr.json
expect 0 "plan ring on ss6" -- "$INART" plan ss6/topo.json ss6/jobs.json --algo ring \
	-o plan_ss6_ring.json
python3 - <<'EOF' >>"$err" 2>&1
import json
m, n, r = (json.load(open(f)) for f in ("plan_ss6.json", "plan_ss6_nr.json", "plan_ss6_ring.json"))
assert any(j.get("ring") for j in m["jobs"]), "no ring job"
assert not any(j.get("ring") for j in n["jobs"]), "ring job with --no-ring"
assert m["comm_time_s"] <= r["comm_time_s"] * (1 + 1e-9) < n["comm_time_s"], (m, r, n)
assert 0 < m["ring_bound_s"] <= m["comm_time_s"] * (1 + 1e-9)
assert "ring_bound_s" not in n
EOF
if [ $? -eq 0 ]; then ok; else bad "inart: ring jobs where they win, none with --no-ring"; fi
pycheck "ring plan: one hop per worker, no flows" plan_ring.json \
	'[len(j["ring"]) for j in d["jobs"]] == [6, 3] and d["jobs"][0]["flows"] == []'
expect 0 "plan to stdout" -- "$INART" plan ft4tor.json jobs4.json --algo ps
pycheck "plan on stdout is JSON" "$out" 'd["algorithm"] == "ps" and len(d["jobs"]) == 2'
expect 0 "plan reads stdin" -- sh -c "\"$INART\" plan ft4tor.json - --algo atp <jobs4.json"
# the same seed gives the same plan
expect 0 "plan again" -- "$INART" plan ft4tor.json jobs4.json --algo inart --seed 3 --trials 8 \
	--time-limit 0 -o plan_inart2.json
# (everything but the wall-clock planning time)
python3 - <<'EOF2' >>"$err" 2>&1
import json
a, b = json.load(open("plan_inart.json")), json.load(open("plan_inart2.json"))
a.pop("plan_time_s", None); b.pop("plan_time_s", None)
assert a == b
EOF2
if [ $? -eq 0 ]; then ok; else bad "inart not reproducible with the same seed"; fi

expect 0 "leafspine jobs" -- "$INART" topo check ls.json tinyjobs.json
expect 1 "jobs naming a node the topology lacks" -- "$INART" topo check bc.json jswitch.json
cat >jobsls.json <<'EOF'
{"jobs": [{"id": "j0", "workers": ["h0", "h1", "h4", "h5", "h8"], "ps": ["h12", "h15"],
           "model": "alexnet"}]}
EOF
for topo in ls bc; do
	expect 0 "plan inart on $topo" -- "$INART" plan "$topo.json" jobsls.json --algo inart --time-limit 1 \
		--trials 4 -o "plan_$topo.json"
	expect 0 "eval inart on $topo" -- "$INART" eval "$topo.json" jobsls.json "plan_$topo.json"
done

# ---------------------------------------------------------------- compare
algos=ps,byteps,switchml,atp,inart,lp
expect 0 "compare table" -- "$INART" compare ft4tor.json jobs4.json --algos $algos --trials 4 --time-limit 1
expect_out "vs best baseline" "table header"
expect_out "best baseline:" "table footer"
expect_out "LP lower bound" "table LP bound"
expect 0 "compare csv" -- "$INART" compare ft4tor.json jobs4.json --algos $algos --trials 4 --time-limit 1 \
	--format csv -o cmp.csv
python3 - <<'EOF' >>"$err" 2>&1
import csv
rows = list(csv.DictReader(open("cmp.csv")))
assert [r["algorithm"] for r in rows] == "ps,byteps,switchml,atp,inart,lp".split(","), rows
assert all(r["ok"] == "1" for r in rows)
lp = [r for r in rows if r["algorithm"] == "lp"][0]
assert abs(float(lp["lp_ratio"]) - 1) < 1e-9
for r in rows:
    assert float(r["lp_ratio"]) >= 1 - 1e-6, r
EOF
if [ $? -eq 0 ]; then ok; else bad "compare csv content"; fi
expect 0 "compare json" -- "$INART" compare ft4tor.json jobs4.json --algos $algos --trials 4 --time-limit 1 \
	--format json
pycheck "compare json parses" "$out" \
	'len(d["rows"]) == 6 and d["best_baseline"] in ("ps", "byteps", "switchml", "atp")'
pycheck "compare json inart not worse than baselines" "$out" \
	'[r for r in d["rows"] if r["algorithm"] == "inart"][0]["reduction"] >= -1e-9'
expect 0 "compare milp, proven" -- "$INART" compare ft4tor.json jobs4.json \
	--algos atp,milp --milp-time-limit 20 --format json
pycheck "compare: milp status optimal" "$out" \
	'd["rows"][1]["algorithm"] == "milp" and d["rows"][1]["status"] == "optimal" and d["rows"][1]["milp_status"] == "optimal"'
expect 0 "compare milp, time limit" -- "$INART" compare ss1/topo.json ss1/jobs.json \
	--algos milp,ring,inart --milp-time-limit 1 --time-limit 1
expect_out "limit (gap " "compare: milp status says limit and gap"
expect_out "ring all-reduce" "compare: ring line under the table"
expect_err 1 "syntax.json" "compare bad topology" -- "$INART" compare syntax.json jobs4.json

# ---------------------------------------------------------------- run
expect 0 "run --list" -- "$INART" run --list
expect_out "default" "scenario list"
expect_out "scarce" "scenario list has scarce"
expect 0 "run --write" -- "$INART" run --write sc --no-compare
expect 0 "written scenario checks" -- "$INART" topo check sc/topo.json sc/jobs.json
expect 0 "run default csv" -- "$INART" run --algos ps,atp,inart --trials 4 --time-limit 1 --format csv
expect_out "algorithm,ok,comm_time_s" "run csv header"

# ---------------------------------------------------------------- dot
expect 0 "dot topology" -- "$INART" dot ft4tor.json -o topo.dot
expect 0 "dot plan" -- "$INART" dot ft4tor.json jobs4.json plan_inart.json -o plan.dot
if grep -q 'dir=forward' plan.dot; then ok; else bad "dot plan draws no tree"; fi
if grep -q '"h0" \[shape=box' topo.dot; then ok; else bad "dot: hosts are not boxes"; fi
if command -v dot >/dev/null 2>&1; then
	for f in topo.dot plan.dot; do
		expect 0 "dot -Tsvg $f" -- dot -Tsvg "$f" -o "$f.svg"
		if grep -q '<svg' "$f.svg"; then ok; else bad "$f.svg is not SVG"; fi
	done
	expect 0 "dot hand plan" -- "$INART" dot tiny.json tinyjobs.json plan_ina.json -o hand.dot
	expect 0 "dot -Tsvg hand plan" -- dot -Tsvg hand.dot -o hand.svg
else
	skipped 6 "graphviz 'dot' not found, SVG rendering not checked (scripts/deps.sh installs graphviz)"
fi

# issue 23: --check-config validates without starting (0, or 1 with the error)
expect 0 "switchd --check-config (lo)" -- "$INART" switchd --name t0 --port lo --ctl ./t0.sock --check-config
if grep -q 'switchd: configuration OK' "$out" && [ ! -e ./t0.sock ]; then ok; else bad "switchd --check-config says OK and opens nothing"; fi
expect_err 1 "nosuchif0: no such interface" "switchd --check-config (missing interface)" -- \
	"$INART" switchd --name t0 --port lo,nosuchif0 --ctl ./t0.sock --check-config
expect_err 1 "23:x: not LPORT:PPORT" "switchd --check-config (udp port name)" -- \
	"$INART" switchd --name t0 --io udp --port 23:x --ctl ./t0.sock --check-config
expect_err 1 "--user: no user 'nosuchuser0'" "ps --check-config (unknown user)" -- \
	"$INART" ps --bind 127.0.0.1 --ctl ./p0.sock --user nosuchuser0 --check-config
expect 0 "ps --check-config" -- "$INART" ps --bind 127.0.0.1 --ctl ./p0.sock --check-config
expect_err 2 "--ctl-tcp and --ctl-key go together" "ps --ctl-tcp without --ctl-key" -- \
	"$INART" ps --bind 127.0.0.1 --ctl ./p0.sock --ctl-tcp 127.0.0.1:0 --check-config

# issue 23: --check-config --deployment FILE: the node's entry agrees with the
# options (kind, ports and their interfaces, address, control socket); errors
# located by the file's JSON path (FILE:LINE:COL for syntax)
cat >dep.json <<'EOF'
{"nodes": {"w0": {"ip": "10.9.0.1"}, "w1": {"ip": "10.9.0.2"},
  "p0": {"ip": "10.9.0.4", "ctl": "./p0.sock"},
  "t0": {"ip": "10.9.0.101", "ctl": "./t0.sock", "ports": {"w0": {"port": 0, "if": "lo"}}},
  "t1": {"ip": "10.9.0.102", "ctl": "tcp:127.0.0.1:7000",
         "ports": {"w0": {"port": 0, "if": "30003:30004"}, "w1": {"port": 1}}},
  "t2": {"ip": "10.9.0.103", "ports": {"w0": {"port": 0, "if": "nosuchif0"}}},
  "t3": {"ip": "10.9.0.104", "ports": {"w0": {"port": 1}}}}}
EOF
printf '{"nodes": {\n  "t0": {"ip": "10.9.0.1",}}}\n' >dep_syntax.json
head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' >dep.key
chmod 600 dep.key
dsw() { "$INART" switchd --deployment dep.json --ctl ./t0.sock --check-config "$@"; }
dps() { "$INART" ps --deployment dep.json --ctl ./p0.sock --check-config "$@"; }
tcp=(--ctl-tcp 127.0.0.1:7000 --ctl-key dep.key)
expect 0 "switchd --check-config --deployment" -- dsw --name t0 --port lo
expect_out "switchd: configuration OK" "switchd --deployment OK"
expect 0 "ps --check-config --deployment" -- dps --name p0 --bind 10.9.0.4
expect_out "ps: configuration OK" "ps --deployment OK"
expect 0 "ps --deployment, --bind any" -- dps --name p0 --bind 0.0.0.0
expect_err 1 "dep.json: nodes.t9: no such node" "switchd --deployment: no entry" -- \
	dsw --name t9 --port lo
expect_err 1 "dep.json: nodes.t2.ports.w0.if: nosuchif0: no such interface" \
	"switchd --deployment: an interface that does not exist" -- dsw --name t2 --port lo
expect_err 1 "dep.json: nodes.t1.ports: 2 ports, but 1 --port interface" \
	"switchd --deployment: port count" -- dsw --name t1 --io udp --port 30001:30002 "${tcp[@]}"
expect_err 1 "dep.json: nodes.t1.ports.w0.if: '30003:30004' is port 0, but --port 0 is '30001:30002'" \
	"switchd --deployment: interfaces in another order" -- \
	dsw --name t1 --io udp --port 30001:30002,30003:30004 "${tcp[@]}"
expect 0 "switchd --deployment: udp ports, TCP control" -- \
	dsw --name t1 --io udp --port 30003:30004,30001:30002 "${tcp[@]}"
expect_err 1 "dep.json: nodes.t1.ctl: 'tcp:127.0.0.1:7000', but --ctl-tcp is not given" \
	"switchd --deployment: TCP control socket" -- dsw --name t1 --io udp --port 30003:30004,30001:30002
expect_err 1 "dep.json: nodes.t3.ports.w0.port: must be a distinct number in 0..0" \
	"switchd --deployment: port number" -- dsw --name t3 --port lo
expect_err 1 "dep.json: nodes.t0.ctl: './t0.sock', but --ctl is './t9.sock'" \
	"switchd --deployment: control socket" -- dsw --name t0 --port lo --ctl ./t9.sock
expect 0 "switchd --deployment: the same socket by another path" -- \
	dsw --name t0 --port lo --ctl "$PWD/t0.sock"
expect_err 1 "dep.json: nodes.p0.ip: 10.9.0.4, but --bind is 10.9.0.5" "ps --deployment: address" -- \
	dps --name p0 --bind 10.9.0.5
expect_err 1 'dep.json: nodes.t0: a switch (it has "ports"), but this is a PS' \
	"ps --deployment: a switch's entry" -- dps --name t0 --bind 10.9.0.101 --ctl ./t0.sock
expect_err 1 'dep.json: nodes.w0: a host (no "ports"), but this is a switch' \
	"switchd --deployment: a host's entry" -- dsw --name w0 --port lo
expect_err 1 "dep_syntax.json:2:" "switchd --deployment: JSON syntax, located" -- \
	"$INART" switchd --deployment dep_syntax.json --name t0 --port lo --ctl ./t0.sock --check-config
expect_err 1 "nosuch.json" "switchd --deployment: no file" -- \
	"$INART" switchd --deployment nosuch.json --name t0 --port lo --ctl ./t0.sock --check-config
expect_err 2 "--deployment FILE goes with --name ID" "ps --deployment without --name" -- \
	"$INART" ps --deployment dep.json --bind 10.9.0.4 --ctl ./p0.sock --check-config
if [ ! -e ./t0.sock ] && [ ! -e ./p0.sock ]; then ok; else bad "--check-config --deployment opened a socket"; fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
