# skip.sh: sourced by the shell tests (cli.sh, netns.sh), which keep their
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
