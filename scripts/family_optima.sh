#!/usr/bin/env bash
# family_optima.sh [N] [LIMIT]: CBC's proven optima of the scarce family
# (scarce-small/0..N-1, seed 1, the planner's default candidates), written to
# tests/data/scarce_family_optima.tsv for tests/test_family.c.  Each instance
# gets `inart plan --algo milp --milp-time-limit LIMIT` (default 300 s); only
# instances CBC proves optimal are written (the family is defined as those).
# Rerun after any change to the candidate routes (cand.c), which changes the
# optima; test_family re-proves the quick ones live and fails on a stale file.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-18}
limit=${2:-300}
INART=${INART:-build/inart}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=tests/data/scarce_family_optima.tsv
{
	echo "# CBC's proven optima of scarce-small/N (seed 1, default candidates), from"
	echo "# scripts/family_optima.sh $n $limit at commit $(git rev-parse --short HEAD)."
	echo "# index	optimum_s	cbc_seconds"
} >"$tmp/tsv"
for ((i = 0; i < n; i++)); do
	"$INART" run --scenario "scarce-small/$i" --write "$tmp/s" --no-compare
	"$INART" plan "$tmp/s/topo.json" "$tmp/s/jobs.json" --algo milp --milp-time-limit "$limit" \
		-o "$tmp/p.json" 2>"$tmp/err"
	python3 - "$tmp/p.json" "$i" >>"$tmp/tsv" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
if p["milp_status"] == "optimal":
    print("%s\t%.12g\t%.2f" % (sys.argv[2], p["comm_time_s"], p["plan_time_s"]))
else:
    print("scarce-small/%s: not proven (%s)" % (sys.argv[2], p["milp_status"]), file=sys.stderr)
PY
	tail -1 "$tmp/err" >&2
done
cp "$tmp/tsv" "$out"
echo "$(grep -vc '^#' "$out") proven instances in $out" >&2
