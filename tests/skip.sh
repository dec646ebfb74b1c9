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
