#!/usr/bin/env bash
# switchd_bench.sh BUILD_DIR: bench/switchd_bench.sh (issue 24) in a few
# seconds.  Runs it with --seconds 1 on the direct veth pair and one device
# (inart switchd --io ring aggregating the 8:1 load, every value checked by
# the XDP sink) and checks the form scripts rely on: one JSON object, a run
# per mode with mode, cores, load, pps, gbps, path_cpu_us_per_pkt,
# device_cpu_us_per_pkt and valid; valid true for both runs, full 8:1
# aggregates delivered through switchd, no bad frame, direct_pair_pps set.
# Also a usage error exits 2.
#
# Needs root, `ip netns` and the bench programs of the build
# (build/bench/xdp_bench, xsk_fwd: libbpf-dev, libxdp-dev, bpftool, clang;
# scripts/deps.sh); exits 77 (skipped) otherwise, or fails with
# INART_NO_SKIP=1 (CI).
set -u
BUILD=${1:?usage: switchd_bench.sh BUILD_DIR}
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # pass/fail/skip, ok, bad, skipped, skip_all
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=/usr/bin/python3

if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
	skip_all switchd_bench "needs root and ip netns"
fi
for f in "$BUILD/bench/xdp_bench" "$BUILD/bench/xsk_fwd" "$BUILD/inart"; do
	[ -x "$f" ] || skip_all switchd_bench "$f not built (libbpf-dev, libxdp-dev, bpftool: scripts/deps.sh)"
done
[ -x "$PY" ] || skip_all switchd_bench "no $PY to read the JSON"
need_live_frames switchd_bench "$BUILD/inart" "the XDP generator"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

BUILD=$BUILD "$SRC/bench/switchd_bench.sh" --modes nonsense >/dev/null 2>&1
rc=$?
if [ $rc -eq 2 ]; then ok; else bad "an unknown mode exits $rc (2 expected)"; fi

BUILD=$BUILD "$SRC/bench/switchd_bench.sh" --modes direct,ring --cores 1 --load ina8 \
	--seconds 1 --check all --json >"$out" 2>"$out.err"
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "the bench exited $rc: $(cat "$out.err")"; fi
verdict=$("$PY" - "$out" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("not one JSON object:", e)
    sys.exit(0)
keys = ["mode", "cores", "load", "pps", "gbps", "path_cpu_us_per_pkt",
        "device_cpu_us_per_pkt", "valid"]
runs = {r.get("mode"): r for r in d.get("runs", [])}
for r in d.get("runs", []):
    miss = [k for k in keys if k not in r]
    if miss:
        print("run", r.get("mode"), "lacks", miss)
for m in ["direct", "ring"]:
    r = runs.get(m)
    if r is None:
        print("no", m, "run")
        continue
    if r.get("valid") is not True:
        print(m, "not valid:", json.dumps(r))
    if r.get("cores") != 1 or r.get("load") != "ina8" or not r.get("pps", 0) > 0:
        print(m, "cores/load/pps wrong:", json.dumps(r))
    if r.get("bad", 1) != 0:
        print(m, "bad frames:", r.get("bad"))
if "ring" in runs and not runs["ring"].get("full_pps", 0) > 0:
    print("no full 8:1 aggregate through switchd:", json.dumps(runs["ring"]))
if not isinstance(d.get("direct_pair_pps"), (int, float)) or not d["direct_pair_pps"] > 0:
    print("direct_pair_pps missing or 0")
print("ok")
PY
)
rm -f "$out.err"
if [ "$verdict" = ok ]; then
	ok
else
	bad "$(echo "$verdict" | grep -v '^ok$')"
	cat "$out"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
