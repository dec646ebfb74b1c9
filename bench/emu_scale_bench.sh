#!/usr/bin/env bash
# emu_scale_bench.sh [rate|ft8|all]: how far the emulator goes on this machine
# (issue 24, part 4; docs/emulator.md, Scale and link rate).
#   rate  the default scenario (k=4 fat-tree, two jobs) compared with inart
#         and ps at each link rate of EMU_RATES (Mbit/s of the fastest link,
#         default "20 50 100 200"; today's default is 20): per run the
#         ratio, cpu_bound and why, the run's own cores, the busiest
#         switchd and the kernel's softirq threads.  The highest rate whose
#         every run is link-bound (cpu_bound false) is printed, and whether
#         it reaches 10x today's default (200 Mbit/s).
#   ft8   a k=8 fat-tree with all 80 switches and one host per edge switch
#         (32 hosts: two jobs of 14 workers and 2 PSs, bert-base and
#         resnet50, on alternate edge switches): brought up with
#         --no-size-limit, inart, ps, atp and switchml compared at
#         EMU_FT8_MBPS (default 5: at 20, InArt's plan needs ~200000
#         frames/s through the switches, ~3.8 of 2 cores; docs/emulator.md)
#         (EMU_FT8_ARGS adds options), taken down; then it
#         checks that no namespace, interface, run directory or process of
#         the run is left.  Prints bring-up time, memory used while up, per
#         run ratio and cpu_bound.
# EMU_ITERS iterations per run (default 3), EMU_IO the switches' --io
# (default auto).  Results (JSON, stderr) in bench/results/emu_scale/.
# Root only.  About 2 minutes for ft8 and 30-60 s per rate on a busy
# 2-core machine.
set -u
what=${1:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD:-$root/build}
out=$root/bench/results/emu_scale
iters=${EMU_ITERS:-3}
io=${EMU_IO:-auto}
PY=/usr/bin/python3
if [ "$(id -u)" -ne 0 ]; then
	echo "emu_scale_bench: needs root" >&2
	exit 1
fi
if [ -f "$B/build.ninja" ]; then
	ninja -C "$B" inart inart-emu-worker >/dev/null || exit 1
fi
mkdir -p "$out"
tmp=$(mktemp -d)
pre="s$(($$ % 10000))" # prefixes of at most 9 characters: s9999r200
INART=$B/inart
. "$root/tests/emu_lib.sh" # emu_track P, emu_left P; clean-up at exit

# per run: algorithm, ratio, cpu_bound, why, the run's cores, busiest switchd
summary() { # JSON
	$PY - "$1" <<'X'
import json, sys
d = json.load(open(sys.argv[1]))
print("  switches' I/O: %s" % d["scales"].get("switch_io", "?"))
for r in d["runs"]:
    c = r.get("cpu", {})
    print("  %-9s ratio %s exact %s cpu_bound %s (run %.2f cores, demand %.2f, switchd max "
          "%.0f%% %s, ksoftirqd %.2f, machine %.0f%% busy, %d switch frames at %.1f us)%s" % (
        r["algorithm"], "%.3f" % r["ratio"] if r["ratio"] else "-", r["exact"],
        str(r["cpu_bound"]).lower(), c.get("run_cores", 0), c.get("demand_cores", 0),
        100 * c.get("switchd_max_cores", 0), c.get("switchd_max_node", ""),
        c.get("ksoftirqd_cores", 0), 100 * c.get("machine_busy", 0),
        c.get("switch_frames", 0), c.get("us_per_frame", 0),
        ": " + r["cpu_why"] if r.get("cpu_why") else ""))
X
}

rate() {
	local best=0 rates=${EMU_RATES:-20 50 100 200}
	"$B/inart" run --scenario default --write "$tmp/def" --no-compare >/dev/null 2>&1 || exit 1
	for m in $rates; do
		local p="${pre}r$m"
		emu_track "$p"
		echo "default scenario at --mbps $m (uptime: $(cut -d' ' -f1-3 /proc/loadavg)):"
		"$B/inart" emu compare "$tmp/def/topo.json" "$tmp/def/jobs.json" --algos inart,ps \
			--iters "$iters" --target-s 0.5 --mbps "$m" --io "$io" --prefix "$p" -f json \
			-o "$out/rate-$m.json" 2>"$out/rate-$m.err"
		echo "  exit $?"
		summary "$out/rate-$m.json"
		if $PY -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if all(not r['cpu_bound'] and r['exact'] for r in d['runs']) else 1)" "$out/rate-$m.json"; then
			best=$m
		fi
	done
	echo "highest link rate with every run link-bound: ${best} Mbit/s" \
		"($(awk -v b="$best" 'BEGIN{printf "%.1f", b/20}')x today's default 20);" \
		"target 10x (200 Mbit/s): $([ "$best" -ge 200 ] && echo met || echo MISSED)"
}

ft8() {
	local p="${pre}f" t0 t1 used0 used1 left
	emu_track "$p"
	"$B/inart" run --scenario fattree8 --write "$tmp/ft8" --no-compare >/dev/null 2>&1 || exit 1
	$PY - "$tmp/ft8/topo.json" "$tmp/ft8s" <<'X' || exit 1
import json, os, sys
t = json.load(open(sys.argv[1]))
os.makedirs(sys.argv[2], exist_ok=True)
hosts = ["h%d" % (4 * i) for i in range(32)]  # one per edge switch e0..e31
keep = set(hosts)
host = lambda n: n.startswith("h")
t["nodes"] = [n for n in t["nodes"] if n["kind"] != "host" or n["id"] in keep]
t["links"] = [l for l in t["links"]
              if not (host(l["a"]) and l["a"] not in keep) and not (host(l["b"]) and l["b"] not in keep)]
a, b = hosts[0::2], hosts[1::2]
jobs = {"jobs": [{"id": "j0", "workers": a[:14], "ps": a[14:], "model": "bert-base"},
                 {"id": "j1", "workers": b[:14], "ps": b[14:], "model": "resnet50"}]}
json.dump(t, open(sys.argv[2] + "/topo.json", "w"), indent=1)
json.dump(jobs, open(sys.argv[2] + "/jobs.json", "w"), indent=1)
X
	"$B/inart" topo check "$tmp/ft8s/topo.json" "$tmp/ft8s/jobs.json" | sed 's/^/  /'
	# bring-up, memory and idle CPU of the network alone
	used0=$(free -m | awk '/^Mem:/{print $3}')
	t0=$(date +%s.%N)
	"$B/inart" emu up "$tmp/ft8s/topo.json" "$tmp/ft8s/jobs.json" --no-size-limit --io "$io" \
		--prefix "$p" >"$out/ft8-up.out" 2>&1 || {
		echo "ft8: emu up failed: $(tail -3 "$out/ft8-up.out")"
		return 1
	}
	t1=$(date +%s.%N)
	used1=$(free -m | awk '/^Mem:/{print $3}')
	grep "inart emu:" "$out/ft8-up.out" | sed 's/^/  /'
	echo "  up in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s;" \
		"memory in use +$((used1 - used0)) MB while up (80 switchd, 4 ps, 112 namespaces," \
		"288 veth pairs)"
	t0=$(date +%s.%N)
	"$B/inart" emu down --prefix "$p" >/dev/null
	t1=$(date +%s.%N)
	echo "  down in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
	# the comparison
	t0=$(date +%s.%N)
	"$B/inart" emu compare "$tmp/ft8s/topo.json" "$tmp/ft8s/jobs.json" --no-size-limit \
		--algos inart,ps,atp,switchml --iters "$iters" --target-s 0.5 --io "$io" \
		--mbps "${EMU_FT8_MBPS:-5}" \
		--prefix "$p" ${EMU_FT8_ARGS:-} -f json -o "$out/ft8.json" 2>"$out/ft8.err"
	echo "  compare: exit $? in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}') s"
	summary "$out/ft8.json"
	left=$(emu_left "$p")
	echo "  after the run: ${left:-nothing left}"
}

case $what in
rate) rate ;;
ft8) ft8 ;;
all) rate && ft8 ;;
*)
	echo "usage: emu_scale_bench.sh [rate|ft8|all]" >&2
	exit 2
	;;
esac
