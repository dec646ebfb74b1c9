#!/usr/bin/env bash
# run.sh: the main job.  Installs what is missing, builds, then plans the
# built-in default scenario with every algorithm and prints the comparison
# table.  Arguments go to `inart run` (e.g. --scenario scarce, --list,
# --format csv).
# run.sh --emu [EMU OPTIONS]: the default scenario's plans (InArt and the
# baselines) run on packets in the emulated network (root; `inart emu
# compare`, docs/emulator.md), next to the model's prediction.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/deps.sh
if [ ! -f build/build.ninja ]; then
	meson setup build
fi
ninja -C build >&2
if [ "${1:-}" = --emu ]; then
	shift
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	build/inart run --scenario default --write "$dir" --no-compare >/dev/null
	build/inart emu compare "$dir/topo.json" "$dir/jobs.json" "$@"
	exit $?
fi
exec build/inart run "$@"
