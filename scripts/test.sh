#!/usr/bin/env bash
# test.sh: the whole test suite.  Installs what is missing, builds, runs
# every meson test suite (unit, property, command line) and then a brief
# fuzzing run when scripts/fuzz.sh exists.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/deps.sh
if [ ! -f build/build.ninja ]; then
	meson setup build
fi
ninja -C build
meson test -C build --print-errorlogs
if [ -x scripts/fuzz.sh ]; then
	scripts/fuzz.sh 10
elif [ -f scripts/fuzz.sh ]; then
	bash scripts/fuzz.sh 10
fi
