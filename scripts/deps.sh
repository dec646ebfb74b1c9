#!/usr/bin/env bash
# deps.sh: install the Debian 12 packages InArt needs, only those missing.
# Uses sudo when not root.  Safe to run repeatedly: it does nothing (and
# needs no network) when everything is installed.
set -euo pipefail

packages=(
	build-essential   # gcc, libc6-dev, make
	meson ninja-build pkg-config
	coinor-libclp-dev coinor-libcbc-dev
	libjansson-dev libcmocka-dev
	graphviz python3
	clang             # libFuzzer targets (scripts/fuzz.sh)
	iproute2 ethtool iputils-ping # tests/netns.sh, bench/switchd_bench.sh, inart emu
	gnuplot-nox       # inart emu --png
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg -s "$p" >/dev/null 2>&1; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "deps.sh: missing packages (${missing[*]}) and not root; install them first" >&2
		exit 1
	fi
fi
echo "deps.sh: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
