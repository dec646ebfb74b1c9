# skip.sh: sourced by the shell tests (cli.sh, netns.sh, emu.sh), which keep their
# counts in $skip and $fail.
#   skipped N WHY   N checks cannot run here: counted as skipped and named, or
#                   as failed when INART_NO_SKIP=1 (CI: .ci/run)
skipped() {
	if [ "${INART_NO_SKIP:-0}" = 1 ]; then
		fail=$((fail + $1))
		echo "FAIL: $1 checks skipped (INART_NO_SKIP=1): $2"
	else
		skip=$((skip + $1))
		echo "SKIP: $1 checks: $2"
	fi
}

# skip_all NAME WHY: nothing of script NAME can run here: exit 77 (skipped),
# or 1 when INART_NO_SKIP=1
skip_all() {
	echo "$1: $2, all checks skipped"
	if [ "${INART_NO_SKIP:-0}" = 1 ]; then
		echo "0 passed, 1 failed, 0 skipped (INART_NO_SKIP=1)"
		exit 1
	fi
	echo "0 passed, 0 failed, all skipped"
	exit 77
}

# The counts and the two verdicts every shell test uses (a script may
# define its own after sourcing this file).
pass=0
fail=0
skip=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}

# live_frames_refused INART: true (0) when this kernel refuses BPF_PROG_RUN
# with live frames (tests/live_probe, built beside INART), which the bench's
# XDP generator and the kernel aggregation path's flush ticks need; its
# answer in $live_why.  False where it runs them or the probe is not built
# (no libbpf: the scripts' own checks say so).
live_frames_refused() {
	local probe
	probe="$(dirname "$1")/tests/live_probe"
	[ -x "$probe" ] || return 1
	live_why=$("$probe" 2>&1) && return 1
	return 0
}

# need_live_frames NAME INART FOR: script NAME's checks all need live
# frames (for FOR); where this kernel refuses them (not a missing package:
# scripts/deps.sh cannot help) exit 77, skipped, even under
# INART_NO_SKIP=1, with the kernel's answer on the first line.
need_live_frames() {
	live_frames_refused "$2" || return 0
	echo "$1: SKIP, the kernel refuses what every check needs: $3: $live_why"
	echo "0 passed, 0 failed, all skipped (the kernel, not a package)"
	exit 77
}

# kernel_skipped N WHY: N checks this kernel refuses to run (need_live_frames'
# reason, for part of a script): counted as skipped even under
# INART_NO_SKIP=1, and named
kernel_skipped() {
	skip=$((skip + $1))
	echo "SKIP: $1 checks, the kernel refuses what they need (not a package): $2"
}
