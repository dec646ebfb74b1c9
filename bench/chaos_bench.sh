#!/usr/bin/env bash
# chaos_bench.sh [SECONDS]: the chaos test (tests/chaos.sh) run long -- by
# default 600 s of crashes, recoveries, state losses, forgeries and control
# floods -- for issue 7's targets: zero wrong results over at least 1000
# all-reduces, no call outliving its timeout by more than 1 s, and the jobs
# converging after the last event.  Prints chaos.sh's verdict and totals and
# PASS/MISS.  Needs root and ip netns.
set -u

secs=${1:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=${BUILD:-$root/build}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
CHAOS_SECONDS=$secs CHAOS_STEPS=${CHAOS_STEPS:-1000} CHAOS_SEED=${CHAOS_SEED:-7} \
	bash "$root/tests/chaos.sh" "$bdir/inart" "$bdir/tests/chaos_worker" 2>&1 | tee "$out"
total=$(grep -o '[0-9]* all-reduces returned 0' "$out" | awk '{print $1}')
if grep -q '^0 failed\|, 0 failed' "$out" && [ "${total:-0}" -ge 1000 ]; then
	echo "PASS: ${total} all-reduces returned 0 under chaos, every one exact; no call outlived its timeout by 1 s; the jobs converged"
else
	echo "MISS: see the failures above (${total:-0} all-reduces returned 0)"
fi
