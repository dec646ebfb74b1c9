# xdp_agg_lib.sh: the common start of xdp_agg_replace.sh and
# xdp_agg_limit.sh, sourced with the script's arguments:
#
#   NAME=xdp_agg_x.sh P=prefix- NET=N . xdp_agg_lib.sh "$@"
#
# INART and ALLREDUCE from the arguments (made absolute); skipped (exit 77,
# skip.sh) without root or `ip netns`, or where the kernel refuses live
# frames (the kernel path's ticks need them: kernel_refuses); fabric.sh sourced (namespaces with
# the prefix P, removed at exit); fabric_w3p2 NET set up (on failure: says
# so, exits 1) and GRO on every host's eth0 (a frame the XDP program
# redirects into a veth needs it on the peer).
INART=${1:?usage: $NAME PATH-TO-INART PATH-TO-ALLREDUCE}
ALLREDUCE=${2:?usage: $NAME PATH-TO-INART PATH-TO-ALLREDUCE}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
case $ALLREDUCE in /*) ;; *) ALLREDUCE=$PWD/$ALLREDUCE ;; esac

. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip_all "$NAME" "not root"
fi
if ! command -v ip >/dev/null 2>&1 || ! ip netns list >/dev/null 2>&1; then
	skip_all "$NAME" "'ip netns' unavailable"
fi
if live_frames_refused "$INART"; then
	kernel_refuses "$NAME" "--agg kernel: $live_why (its flush ticks need them)"
fi

. "$(dirname "${BASH_SOURCE[0]}")/fabric.sh" # tmp, pids, nss, ns, fabric_*

declare -A IP MAC PORTS DPID
if ! fabric_w3p2 "$NET" >"$tmp/setup.err" 2>&1; then
	echo "$NAME: setup failed"
	sed 's/^/  | /' "$tmp/setup.err" | head -20
	echo "0 passed, 1 failed, $skip skipped"
	exit 1
fi
for h in w0 w1 w2 p0 p1; do
	ip netns exec "$(ns $h)" ethtool -K eth0 gro on >/dev/null 2>&1
done
