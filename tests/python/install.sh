#!/usr/bin/env bash
# install.sh PYTHON SRC BUILD: `pip install ./python` works offline.
# Makes a venv from PYTHON (Debian's /usr/bin/python3) with the system's
# site packages (torch, numpy), installs a copy of SRC/python into it with
# pip and no package index (nothing may be downloaded), and checks from
# another folder that the installed package imports, bundles
# libinart_worker.so from BUILD and loads it, and that inart.torch imports.
# Exits 77 (skipped) without the venv module, 1 on a failure; with
# INART_NO_SKIP=1 a skip is a failure.  Prints "N passed, N failed".
set -u
PY=${1:?usage: install.sh PYTHON SRC BUILD}
SRC=${2:?}
BUILD=${3:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
	echo "install.sh: $PY has no venv/ensurepip (scripts/deps.sh installs python3-venv)"
	if [ "${INART_NO_SKIP:-0}" = 1 ]; then echo "0 passed, 1 failed"; exit 1; fi
	echo "0 passed, 0 failed, all skipped"
	exit 77
fi
step() { # step DESC CMD...
	local d=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then
		pass=$((pass + 1))
		echo "ok $d"
	else
		fail=$((fail + 1))
		echo "FAIL $d"
		sed 's/^/  | /' "$tmp/out" | tail -20
	fi
}
cp -r "$SRC/python" "$tmp/src"
rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
step "venv with the system's site packages" "$PY" -m venv --system-site-packages "$tmp/venv"
step "pip install ./python, no index" env PIP_NO_INDEX=1 PIP_FIND_LINKS= INART_BUILD_DIR="$BUILD" \
	"$tmp/venv/bin/pip" install --no-cache-dir "$tmp/src"
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1
step "the installed package bundles and loads libinart_worker" env -u INART_WORKER_LIB \
	"$tmp/venv/bin/python" -c '
import os, inart, inart._lib as L
p = L.path()
assert p.startswith(os.path.dirname(inart.__file__)), (p, inart.__file__)
assert "site-packages" in inart.__file__, inart.__file__
print(p)'
step "inart.torch imports (Debian torch through the venv)" "$tmp/venv/bin/python" -c '
import inart.torch, torch; print(torch.__version__)'
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
