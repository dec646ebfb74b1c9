#!/usr/bin/env bash
# deps.sh: install the Debian 12 packages InArt needs, only those missing:
# everything the build and every check of the test suite use, so that CI
# (root, a fresh Debian 12, INART_NO_SKIP=1) skips nothing.
# Uses sudo when not root.  Safe to run repeatedly: it does nothing (and
# needs no network) when everything is installed.
set -euo pipefail

packages=(
	build-essential   # gcc, libc6-dev, make
	meson ninja-build pkg-config
	coinor-libclp-dev coinor-libcbc-dev
	libjansson-dev libcmocka-dev
	libssl-dev        # libcrypto: HMAC-SHA256 of the daemons' TCP control (src/ctlproto/ctlauth.c)
	graphviz          # tests/cli.sh renders SVG with dot
	python3           # scripts/check_layers.py (every build), tests/cli.sh, tests/netns.sh
	binutils          # nm, readelf: tests/abi.sh
	clang             # libFuzzer targets (scripts/fuzz.sh); the XDP program of switchd --io xdp
	libxdp-dev libbpf-dev bpftool # switchd --io xdp: AF_XDP sockets (libxdp), the XDP program's
	                  # loader (libbpf) and skeleton (bpftool gen skeleton); optional (-Dxdp)
	iproute2 ethtool iputils-ping procps # tests/netns.sh (ip, ethtool, ping, sysctl), bench/switchd_bench.sh, inart emu
	util-linux        # setpriv: tests/emu.sh
	gnuplot-nox       # inart emu --png
	# bench/xdp_bench and bench/xsk_fwd (built by bench/meson.build when these
	# are present; clang above compiles their XDP programs): the XDP generator,
	# sink and reference forwarders of bench/switchd_bench.sh and its test
	# tests/switchd_bench.sh (issue 24)
	libbpf-dev libxdp-dev bpftool
	# the Python package (python/inart) and its tests, example and benchmark:
	# Debian's torch 1.13 (gloo), numpy, scikit-learn (the digits data set),
	# matplotlib (the loss-curve PNG), venv (pip install ./python in a venv)
	python3-torch python3-numpy python3-sklearn python3-matplotlib python3-venv
	# the "inart" torch.distributed backend's C++ half (python/inart/_c10d.cpp,
	# built on first use by torch.utils.cpp_extension): torch's C++ headers
	# and the pybind11 headers they include
	libtorch-dev pybind11-dev
	python3-torchvision # ResNet-18 of examples/ddp_resnet.py (the backend against gloo)
	python3-scipy     # HiGHS MILPs of bench/leafspine_gap.py (offline analysis)
	mininet           # python/inart/mininet.py and its test (installed without its
	                  # recommended Open vSwitch: --no-install-recommends below)
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
