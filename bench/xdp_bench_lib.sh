# xdp_bench_lib.sh: sourced by bench/switchd_bench.sh and tests/bench_sink.sh,
# the start and the reading of build/bench/xdp_bench's sink.
#   xb_sink_start XB NS IFACE OUT LOAD [OPTION...]
#       starts `XB sink IFACE LOAD OPTION...` in namespace NS, its output in
#       OUT.out and OUT.err; sets xb_sink_pid; returns 1 (the process ended
#       or never said ready within 5 s) with the reason in OUT.err
#   xb_sink_snap OUT PID
#       asks the sink PID for its counters (SIGUSR1) and prints its newest
#       line "frames F contribs C full U bad B other O bytes Y"
xb_sink_pid=""
xb_sink_start() {
	local xb=$1 ns=$2 ifc=$3 out=$4 load=$5
	shift 5
	: >"$out.out"
	ip netns exec "$ns" "$xb" sink "$ifc" "$load" "$@" >"$out.out" 2>"$out.err" &
	xb_sink_pid=$!
	for _ in $(seq 50); do
		grep -q ready "$out.out" && return 0
		kill -0 "$xb_sink_pid" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}
xb_sink_snap() {
	local n
	n=$(grep -c '^frames' "$1.out")
	kill -USR1 "$2"
	for _ in $(seq 100); do
		[ "$(grep -c '^frames' "$1.out")" -gt "$n" ] && break
		sleep 0.02
	done
	grep '^frames' "$1.out" | tail -1
}
