#!/usr/bin/env bash
# Run the two_racks example with build/inart (build it first: ninja -C build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inart=${INART:-$here/../../build/inart}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$here"
set -x
"$inart" topo check topo.json jobs.json
"$inart" eval topo.json jobs.json plan.json
"$inart" plan topo.json jobs.json --algo inart -o "$out/inart_plan.json"
"$inart" eval topo.json jobs.json "$out/inart_plan.json"
"$inart" compare topo.json jobs.json
"$inart" dot topo.json jobs.json plan.json -o "$out/plan.dot"
if command -v dot >/dev/null; then dot -Tsvg "$out/plan.dot" -o "$out/plan.svg"; fi
