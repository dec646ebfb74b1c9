#!/usr/bin/env bash
# emu_dynamics.sh INART: traffic dynamics on the emulated network (issue 10;
# docs/emulator.md "Dynamics", docs/controller.md).  Two workers under t0
# reach the PS p0 through ta or tb; the plan goes through ta.  One second
# into the run, 6 of ta's 10 Gbit/s of t0 -> ta fill with background frames
# (--bg-at, the emulator's background sender).  With the controller on
# (`inart emu run --controller on`):
#   - the surge is detected and a new plan installed (a plan epoch: tables
#     side by side, the workers move at an all-reduce boundary) within 2 s;
#   - every iteration finishes with exact results (the values change every
#     iteration: a lost or repeated one would be wrong);
#   - the per-iteration time recovers: the median of the last three
#     iterations is within 1.5x of the first (on ta with the surge an
#     iteration takes about 2.4x: measured with the controller off);
#   - the dynamics chart is written.
# Short on purpose (about 40 s); bench/dynamics_bench.sh measures the
# targets on a k=4 fat-tree.  Needs root; exits 77 (skipped) otherwise.
set -u

INART=${1:?usage: emu_dynamics.sh PATH-TO-INART}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # pass/fail/skip, ok, bad, skip_all
if [ "$(id -u)" -ne 0 ]; then
	skip_all emu_dynamics.sh "not root"
fi
if ! ip netns list >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1; then
	skip_all emu_dynamics.sh "'ip netns' or tc unavailable"
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
tmp=$(mktemp -d)
chmod 755 "$tmp"
prefix="h10d$(($$ % 10000))"
trap '"$INART" emu down --prefix "$prefix" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

data=$(dirname "${BASH_SOURCE[0]}")/data/twopath
cp "$data/topo.json" "$data/jobs.json" "$data/plan.json" "$tmp/"

# bad schedules: refused before anything is built
for args in "--bg-at t0-ta" "--bg-at t0-zz@1=2" "--bg-at t0-ta@1=10" "--controller maybe"; do
	# shellcheck disable=SC2086
	"$INART" emu run "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" --prefix "$prefix" $args \
		>"$tmp/bad.out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] || [ $rc -eq 2 ]; then ok; else bad "emu run $args: exit $rc"; fi
done

"$INART" emu run "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" --prefix "$prefix" \
	--iters 10 --target-s 0.3 --queue-ms 5000 --iter-timeout 60 --bg-at t0-ta@1=6 \
	--controller on --dynamics-png "$tmp/dyn.png" --keep "$tmp/keep" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
sed -n '/per-iteration/,$p' "$tmp/err" | sed 's/^/  | /'
if [ $rc -eq 0 ] && grep -q " yes " "$tmp/out"; then ok; else
	bad "the run with the controller: exit $rc, not finished or not exact"
	tail -5 "$tmp/err" | sed 's/^/  | /'
fi
first=$(sed -n 's/.*installed \([0-9]*\) plan(s), the first at \([-0-9.]*\) s.*/\2/p' "$tmp/err")
if [ -n "$first" ] && "$PY" -c "import sys; sys.exit(not (1.0 < $first < 3.0))"; then ok; else
	bad "the surge at 1 s: first install at '${first}' s, expected within 2 s"
fi
if grep -q '"event":"install","epoch":1,.*"ok":true' "$tmp"/keep/controller-*.log 2>/dev/null; then ok; else
	bad "no epoch-1 install in the controller's log"
fi
"$PY" - "$tmp/err" <<'EOF'
import re, statistics, sys
t = [float(m.group(1)) for m in re.finditer(r"^\s+\d+ at\s+[\d.]+ s: ([\d.]+) s$", open(sys.argv[1]).read(), re.M)]
ok = len(t) == 10 and statistics.median(t[-3:]) <= 1.5 * t[0]
print("  iterations: first %.3f s, median of the last three %.3f s" % (t[0], statistics.median(t[-3:])) if t else "  no iterations")
sys.exit(0 if ok else 1)
EOF
if [ $? -eq 0 ]; then ok; else bad "the per-iteration time did not recover"; fi
if [ -s "$tmp/dyn.png" ]; then ok; else bad "no dynamics chart"; fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
