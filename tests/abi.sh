#!/usr/bin/env bash
# abi.sh [--forbid-needed REGEX] LIB HEADER...: the shared library exports
# exactly the functions and data that the public headers declare (no internal
# symbol leaks, nothing declared and missing), and, with --forbid-needed, none
# of its DT_NEEDED entries (readelf -d) matches REGEX (e.g. the LP solver
# libraries for the worker library).
set -euo pipefail
forbid=
if [ "${1:-}" = --forbid-needed ]; then
	forbid=$2
	shift 2
fi
lib=$1
shift
pass=0 fail=0
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ {sub(/@.*/, "", $3); print $3}' | sort -u)
declared=$( (cat "$@" | grep -oE '\binart_[a-z0-9_]+ *\(' | tr -d '( '
	cat "$@" | grep -oE 'extern [^;]*\binart_[a-z0-9_]+\[' | grep -oE 'inart_[a-z0-9_]+' || true) | sort -u)
if [ "$exported" != "$declared" ]; then
	echo "FAIL: exported by $lib but not declared in $*:"
	comm -23 <(echo "$exported") <(echo "$declared")
	echo "declared in $* but not exported:"
	comm -13 <(echo "$exported") <(echo "$declared")
	fail=$((fail + 1))
else
	echo "$(echo "$exported" | wc -l) symbols match"
	pass=$((pass + 1))
fi
if [ -n "$forbid" ]; then
	needed=$(readelf -d "$lib" | awk '/\(NEEDED\)/ {gsub(/[][]/, "", $5); print $5}')
	echo "NEEDED: $(echo $needed)"
	if bad=$(echo "$needed" | grep -E -- "$forbid"); then
		echo "FAIL: $lib needs $(echo $bad) (forbidden: $forbid)"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
