#!/usr/bin/env bash
# abi.sh LIB HEADER: the shared library exports exactly the functions and
# data that the public header declares (no internal symbol leaks).
set -euo pipefail
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ {sub(/@.*/, "", $3); print $3}' | sort -u)
declared=$( (grep -oE '\binart_[a-z0-9_]+ *\(' "$header" | tr -d '( '
	grep -oE 'extern [^;]*\binart_[a-z0-9_]+\[' "$header" | grep -oE 'inart_[a-z0-9_]+') | sort -u)
if [ "$exported" != "$declared" ]; then
	echo "exported by $lib but not declared in $header:"
	comm -23 <(echo "$exported") <(echo "$declared")
	echo "declared in $header but not exported:"
	comm -13 <(echo "$exported") <(echo "$declared")
	echo "0 passed, 1 failed"
	exit 1
fi
echo "$(echo "$exported" | wc -l) symbols match"
echo "1 passed, 0 failed"
