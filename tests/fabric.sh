# fabric.sh: sourced by the network-namespace tests (netns.sh, chaos.sh)
# and benches (recovery_bench.sh, install_bench.sh) to build a fabric of
# namespaces and veth pairs and clean it up.  The caller sets P (a per-run
# prefix of namespace names: include the helper name and $$), and the
# associative arrays IP and MAC (addresses of the hosts); it
# gets $tmp (a scratch directory), pids (processes it started: killed at
# exit, by PID), nss (namespaces: deleted at exit).
#   ns NAME                the namespace of node NAME
#   fabric_ns NAME...      create the namespaces (lo up, no IPv6)
#   fabric_host H S SIF    host H's eth0 <-> switch S's interface SIF
#   fabric_trunk S1 IF1 S2 IF2   a link between two switches
#   fabric_wait_socks PATH...    wait up to 5 s for the control sockets
#   fabric_stop PID        stop a process we started (TERM, then KILL)
#   fabric_daemon NODE [OPTION...]  start NODE's daemon: switchd (t*: on the
#                          interfaces ${PORTS[NODE]}, with the OPTIONs) or ps
#                          (p*: bound to ${IP[NODE]}), as $INART, control
#                          socket $tmp/NODE.sock, log $tmp/NODE.log;
#                          DPID[NODE] = its PID (the caller declares the
#                          associative arrays PORTS and DPID); waits for the socket
#   fabric_install         `ctl install` of $tmp/{topo,jobs,plan,deploy}.json
#                          (the first install, and the documented recovery),
#                          output appended to $tmp/install.log
# Setup steps return non-zero on failure (the caller decides).

tmp=$(mktemp -d)
pids=()
nss=()

fabric_stop() {
	local pid=$1
	kill "$pid" 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

fabric_cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${pids[@]}"; do
		fabric_stop "$pid"
	done
	for n in "${nss[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap fabric_cleanup EXIT
trap 'exit 1' INT TERM

ns() { echo "${P}$1"; }

fabric_ns() {
	local n
	for n in "$@"; do
		ip netns add "$(ns "$n")" || return 1
		nss+=("$(ns "$n")")
		ip -n "$(ns "$n")" link set lo up
		ip netns exec "$(ns "$n")" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
		ip netns exec "$(ns "$n")" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
	done
}

fabric_host() { # host switch switch-ifname
	local h=$1 s=$2 sif=$3
	ip link add name eth0 netns "$(ns "$h")" type veth peer name "$sif" netns "$(ns "$s")" &&
		ip -n "$(ns "$h")" link set eth0 address "${MAC[$h]}" &&
		ip -n "$(ns "$h")" addr add "${IP[$h]}/24" dev eth0 &&
		ip -n "$(ns "$h")" link set eth0 up &&
		ip -n "$(ns "$s")" link set "$sif" up || return 1
	# a user-space switch passes frames on as they are: checksums must be
	# complete when they leave the host
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$(ns "$h")" ethtool -K eth0 tx off >/dev/null 2>&1
	fi
	return 0
}

fabric_trunk() { # switch1 if1 switch2 if2
	ip link add name "$2" netns "$(ns "$1")" type veth peer name "$4" netns "$(ns "$3")" &&
		ip -n "$(ns "$1")" link set "$2" up && ip -n "$(ns "$3")" link set "$4" up
}

fabric_wait_socks() {
	local s
	for s in "$@"; do
		for _ in $(seq 50); do
			[ -S "$s" ] && break
			sleep 0.1
		done
	done
}

fabric_daemon() {
	local n=$1
	shift
	rm -f "$tmp/$n.sock"
	case $n in
	t*) ip netns exec "$(ns "$n")" "$INART" switchd --name "$n" --port "${PORTS[$n]}" \
		--ctl "$tmp/$n.sock" "$@" --log-level warn 2>>"$tmp/$n.log" & ;;
	p*) ip netns exec "$(ns "$n")" "$INART" ps --name "$n" --bind "${IP[$n]}" \
		--ctl "$tmp/$n.sock" --log-level warn 2>>"$tmp/$n.log" & ;;
	esac
	DPID[$n]=$!
	pids+=($!)
	fabric_wait_socks "$tmp/$n.sock"
}

fabric_install() {
	"$INART" ctl install "$tmp/topo.json" "$tmp/jobs.json" "$tmp/plan.json" \
		--deploy "$tmp/deploy.json" >>"$tmp/install.log" 2>&1
}
