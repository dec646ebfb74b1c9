#!/usr/bin/env bash
# run.sh: the main job.  Installs what is missing, builds, then plans the
# built-in default scenario with every algorithm and prints the comparison
# table.  Arguments go to `inart run` (e.g. --scenario scarce, --list,
# --format csv).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/deps.sh
if [ ! -f build/build.ninja ]; then
	meson setup build
fi
ninja -C build >&2
exec build/inart run "$@"
