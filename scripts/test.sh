#!/usr/bin/env bash
# test.sh: the whole test suite.  Installs what is missing, builds, runs
# every meson test suite (unit, property, command line, fuzz corpus replay,
# netns as root) and then a brief fuzzing run.  INART_NO_SKIP=1 (set by
# .ci/run) turns a skipped check (no root, no ping, no Graphviz, ...) into a
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/deps.sh
if [ ! -f build/build.ninja ]; then
	meson setup build
fi
ninja -C build
meson test -C build --print-errorlogs
sh scripts/fuzz.sh 10
