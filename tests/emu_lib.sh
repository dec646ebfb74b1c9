# emu_lib.sh: the set-up shared by the emulator's scripts (tests/emu.sh,
# tests/emu_exec.sh, bench/emu_scale_bench.sh), sourced once INART (the
# inart program) and tmp (the script's own temporary directory) are set:
#   emu_track P   remember run prefix P: 'inart emu down --prefix P' at exit
#   emu_left P    what of prefix P is left -- " namespaces", " run-directory",
#                 " processes", " interfaces" -- or "" if nothing
# At exit (INT and TERM exit 1) every tracked prefix is taken down and $tmp
# removed; only the tracked prefixes are ever touched.
emu_prefixes=()
emu_track() { emu_prefixes+=("$1"); }
emu_cleanup() {
	for p in "${emu_prefixes[@]}"; do
		"$INART" emu down --prefix "$p" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap emu_cleanup EXIT
trap 'exit 1' INT TERM

emu_left() {
	local p=$1 what=""
	ip netns list | grep -q "^inart-emu-$p-" && what="$what namespaces"
	[ -e "/run/inart-emu/$p" ] && what="$what run-directory"
	ps -eo args | grep -v grep | grep -q "/run/inart-emu/$p/" && what="$what processes"
	ip -o link | grep -q ": e$p-p" && what="$what interfaces"
	echo "$what"
}
