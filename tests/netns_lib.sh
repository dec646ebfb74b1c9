# netns_lib.sh: the preamble of the fabric tests that take INART ALLREDUCE
# [EXTRA] (tests/netns_cores.sh, tests/ps_xdp.sh), sourced as
#   . netns_lib.sh NAME "$@"
# It sets INART and ALLREDUCE (absolute paths; usage error without them),
# sources skip.sh (the counters, ok, bad, skipped), exits 77 (skipped; 1
# with INART_NO_SKIP=1) unless root with `ip netns`, and defines
#   run CMD...   a set-up step: on failure says so with CMD's output, returns 1
netns_name=$1
INART=${2:?usage: $netns_name PATH-TO-INART PATH-TO-ALLREDUCE}
ALLREDUCE=${3:?usage: $netns_name PATH-TO-INART PATH-TO-ALLREDUCE}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
case $ALLREDUCE in /*) ;; *) ALLREDUCE=$PWD/$ALLREDUCE ;; esac

. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip_all "$netns_name" "not root"
fi
if ! command -v ip >/dev/null 2>&1 || ! ip netns list >/dev/null 2>&1; then
	skip_all "$netns_name" "'ip netns' unavailable"
fi

run() {
	if ! "$@" >"$tmp/setup.err" 2>&1; then
		echo "$netns_name: setup failed: $*"
		sed 's/^/  | /' "$tmp/setup.err" | head -20
		return 1
	fi
}
