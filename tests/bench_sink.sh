#!/usr/bin/env bash
# bench_sink.sh BUILD_DIR: the self-test of bench/switchd_bench.sh's sink
# (build/bench/xdp_bench sink): it must see what a device gets wrong.  On a
# direct veth pair, the generator (xdp_bench gen, pinned to one CPU) sends
# for 0.3 s and the sink counts:
#  - a clean run: no frame bad, every frame the generator emitted either
#    checked or dropped by the veth (its xdp_xmit_errors);
#  - --corrupt N (one value wrong in every N-th frame; every value checked,
#    and sampled, where the middle value is the wrong one; fan-in 1 and 8):
#    exactly those frames bad, none of the others;
#  - --lose N (every N-th frame not sent): exactly that many frames missing
#    from the sink's count, which the bench reports as offered - delivered.
# Needs root, `ip netns`, ethtool and build/bench/xdp_bench (libbpf-dev,
# bpftool, clang: scripts/deps.sh); exits 77 (skipped) otherwise, or fails
# with INART_NO_SKIP=1 (CI).
set -u
BUILD=${1:?usage: bench_sink.sh BUILD_DIR}
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # pass/fail/skip, ok, bad, skipped, skip_all
. "$(dirname "${BASH_SOURCE[0]}")/../bench/xdp_bench_lib.sh" # xb_sink_start, xb_sink_snap
XB=$BUILD/bench/xdp_bench

if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
	skip_all bench_sink "needs root and ip netns"
fi
[ -x "$XB" ] || skip_all bench_sink "$XB not built (libbpf-dev, bpftool, clang: scripts/deps.sh)"
command -v ethtool >/dev/null 2>&1 || skip_all bench_sink "needs ethtool"
need_live_frames bench_sink "$BUILD/inart" "the XDP generator"

P="bsk$$-"
G=${P}g R=${P}r
tmp=$(mktemp -d)
sink_pid=""
cleanup() {
	if [ -n "$sink_pid" ]; then
		kill "$sink_pid" 2>/dev/null
		wait "$sink_pid" 2>/dev/null
	fi
	ip netns del "$G" 2>/dev/null
	ip netns del "$R" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "$G" && ip netns add "$R" &&
	ip link add name d0 netns "$G" type veth peer name d1 netns "$R" &&
	ip -n "$G" link set d0 address 02:78:00:00:00:01 &&
	ip -n "$R" link set d1 address 02:78:00:00:00:02 &&
	ip -n "$G" link set d0 up && ip -n "$R" link set d1 up ||
	{
		bad "the veth pair could not be made"
		exit 1
	}

xmit_err() {
	ip netns exec "$G" ethtool -S d0 | awk '/xdp_xmit_errors/ {s += $2} END {print s + 0}'
}

# case NAME LOAD CHECK(full|sample) GEN-OPTION... ; sets sent, frames, bad, lost_tx
run_case() {
	local name=$1 load=$2 chk=() s0 s1 e0 e1 out rc
	[ "$3" = sample ] && chk=(--sample)
	shift 3
	xb_sink_start "$XB" "$R" d1 "$tmp/sink" "$load" "${chk[@]}"
	rc=$?
	sink_pid=$xb_sink_pid
	if [ $rc -ne 0 ]; then
		bad "$name: the sink did not start: $(cat "$tmp/sink.err")"
		return 1
	fi
	s0=$(xb_sink_snap "$tmp/sink" "$sink_pid")
	e0=$(xmit_err)
	out=$(ip netns exec "$G" taskset -c 0 "$XB" gen d0 "$load" 0.3 "${chk[@]}" "$@" 2>&1)
	sleep 0.1
	s1=$(xb_sink_snap "$tmp/sink" "$sink_pid")
	e1=$(xmit_err)
	kill "$sink_pid" 2>/dev/null
	wait "$sink_pid" 2>/dev/null
	sink_pid=""
	sent=$(echo "$out" | awk '/^sent / {print $2}')
	if [ -z "$sent" ] || [ "$sent" -le 0 ]; then
		bad "$name: the generator sent nothing: $out"
		return 1
	fi
	read -r frames bad_n < <(echo "$s0 $s1" | awk '{print $14 - $2, $20 - $8}')
	lost_tx=$((e1 - e0))
	echo "$name: sent $sent, checked $frames, bad $bad_n, dropped by the veth $lost_tx"
	return 0
}

# clean: nothing bad, nothing missing but what the veth dropped
for c in "ina1 full" "ina8 full" "plain sample"; do
	set -- $c
	if run_case "clean $1 $2" "$1" "$2"; then
		if [ "$bad_n" -eq 0 ] && [ $((frames + lost_tx)) -eq "$sent" ]; then ok; else
			bad "clean $1 $2: bad $bad_n, checked $frames + dropped $lost_tx != sent $sent"
		fi
	fi
done

# a wrong value every N-th frame: exactly those frames bad (those the veth
# dropped aside)
for c in "ina1 full 10" "ina1 sample 10" "ina8 full 9"; do
	set -- $c
	if run_case "corrupt $1 $2 every $3" "$1" "$2" --corrupt "$3"; then
		want=$((sent / $3))
		if [ $((frames + bad_n + lost_tx)) -eq "$sent" ] && [ "$bad_n" -gt 0 ] &&
			[ "$bad_n" -le "$want" ] && [ "$bad_n" -ge $((want - lost_tx)) ]; then
			ok
		else
			bad "corrupt $1 $2 every $3: bad $bad_n (want $want), checked $frames, dropped $lost_tx, sent $sent"
		fi
	fi
done

# a frame lost every 7th: exactly that many missing from the count
if run_case "lose ina1 every 7" ina1 full --lose 7; then
	want=$((sent - sent / 7))
	if [ "$bad_n" -eq 0 ] && [ $((frames + lost_tx)) -eq "$want" ]; then ok; else
		bad "lose every 7: checked $frames + dropped $lost_tx != $want (sent $sent), bad $bad_n"
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
