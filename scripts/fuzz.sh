#!/bin/sh
# Fuzz the JSON readers (topology, jobs, plan), the INA header decoder (wire),
# the switch pipeline (switch), the PS and worker cores (ps, worker), the
# control-message parser (ctlmsg), the emulation gate in front of the switch
# core (gate), the deployment reader (deploy) and, as root, the XDP
# aggregation program against the switch core (xdp_agg, BPF_PROG_TEST_RUN)
# with libFuzzer.
#
#   scripts/fuzz.sh [SECONDS]      (default 10 seconds per target)
#
# Builds build-fuzz/ with clang, -Dfuzz=true, AddressSanitizer and
# UndefinedBehaviorSanitizer on the library as well as the targets, and the
# library instrumented for coverage (-fsanitize=fuzzer-no-link).  Each target
# starts from the seeds in fuzz/corpus/<target>/ plus what earlier runs found
# (build-fuzz/fuzz-corpus/<target>/).  Crashes are saved as
# build-fuzz/fuzz-artifacts/<target>-crash-*; reproduce one with
#   build-fuzz/fuzz/fuzz_<target> FILE
# Exits non-zero if any target crashed, leaked, timed out or failed to build.
set -eu

secs=${1:-10}
case $secs in
'' | *[!0-9]*)
	echo "usage: $0 [SECONDS]" >&2
	exit 2
	;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
bdir=$root/build-fuzz

if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz.sh: clang is needed (apt-get install clang)" >&2
	exit 1
fi
if [ ! -f "$bdir/build.ninja" ]; then
	CC=clang meson setup "$bdir" "$root" \
		-Dfuzz=true \
		-Db_sanitize=address,undefined \
		-Db_lundef=false \
		-Dbuildtype=debugoptimized \
		-Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=all'
fi
ninja -C "$bdir" fuzz/fuzz_topo fuzz/fuzz_jobs fuzz/fuzz_plan fuzz/fuzz_wire fuzz/fuzz_switch fuzz/fuzz_ps \
	fuzz/fuzz_worker fuzz/fuzz_ctlmsg fuzz/fuzz_gate fuzz/fuzz_deploy
targets="topo jobs plan wire switch ps worker ctlmsg gate deploy"
# the XDP aggregation program (an XDP build, root: it loads BPF)
if ninja -C "$bdir" -t targets all 2>/dev/null | grep -q '^fuzz/fuzz_xdp_agg:' &&
	[ "$(id -u)" -eq 0 ]; then
	ninja -C "$bdir" fuzz/fuzz_xdp_agg
	targets="$targets xdp_agg"
fi

status=0
mkdir -p "$bdir/fuzz-artifacts"
for t in $targets; do
	work=$bdir/fuzz-corpus/$t
	mkdir -p "$work"
	echo "== fuzz_$t for ${secs}s"
	if ! "$bdir/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -dict="$root/fuzz/formats.dict" \
		-artifact_prefix="$bdir/fuzz-artifacts/$t-" \
		"$work" "$root/fuzz/corpus/$t"; then
		echo "fuzz.sh: fuzz_$t FAILED (see $bdir/fuzz-artifacts/)" >&2
		status=1
	fi
done
[ $status -eq 0 ] && echo "fuzz.sh: no crashes"
exit $status
