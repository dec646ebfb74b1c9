#!/bin/sh
# cli_golden: the outputs of a fixed set of `inart` invocations, byte for
# byte, against golden files (issue 8: refactors keep the CLI's outputs).
#
# Usage: tests/cli_golden.sh INART [--update]
#   INART     the inart program (build/inart)
#   --update  rewrite the golden files from INART (after a change that is
#             meant to change an output; say so in the commit)
#
# Every invocation is deterministic: built-in scenarios and generators are
# seeded, planners run without a time limit on their improvement phase
# (--time-limit 0; the plans' "plan_time_s" is replaced by T), and only stdout and the exit status are compared, plus
# stderr for invocations that fail (their message; planners print timings on
# stderr when they succeed).  Golden files: tests/data/cli_golden/NAME.
set -u
INART=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
UPDATE=${2:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
GOLD=$SRC/tests/data/cli_golden
W=$(mktemp -d "${TMPDIR:-/tmp}/cli_golden.XXXXXX")
trap 'rm -rf "$W"' EXIT
fails=0
n=0
if [ ! -x "$INART" ]; then
	echo "cli_golden: no program $1"
	exit 1
fi

# run NAME [--stderr] ARGS...: run inart ARGS in $W, compare with NAME.
run() {
	name=$1
	shift
	with_err=0
	if [ "$1" = --stderr ]; then
		with_err=1
		shift
	fi
	n=$((n + 1))
	(cd "$W" && "$INART" "$@" >"$W/out" 2>"$W/err")
	rc=$?
	{
		echo "# inart $*"
		echo "# exit $rc"
		# the one field that is a wall-clock time
		sed 's/"plan_time_s": [0-9.e+-]*/"plan_time_s": T/' "$W/out"
		if [ $with_err = 1 ]; then
			echo "# stderr"
			cat "$W/err"
		fi
	} >"$W/got.$name"
	if [ "$UPDATE" = --update ]; then
		cp "$W/got.$name" "$GOLD/$name"
	elif [ ! -f "$GOLD/$name" ]; then
		echo "FAIL $name: no golden file $GOLD/$name"
		fails=$((fails + 1))
	elif ! cmp -s "$W/got.$name" "$GOLD/$name"; then
		echo "FAIL $name: output differs from $GOLD/$name:"
		diff -u "$GOLD/$name" "$W/got.$name" | cut -c1-240 | head -40
		fails=$((fails + 1))
	fi
}

[ "$UPDATE" = --update ] && mkdir -p "$GOLD"

# the default scenario's inputs (and a small fat-tree)
run scenario_write run --write sc --no-compare
run topo_gen topo gen fattree --k 4 --ina tor --trees 4
run topo_describe topo describe sc/topo.json
run topo_check topo check sc/topo.json sc/jobs.json
(cd "$W" && "$INART" topo gen fattree --k 4 -o ft4.json)

# plans of every algorithm that has no wall-clock limit, and their evaluation
for a in inart inart-even inart-sp grid ps byteps switchml atp ring lp; do
	run "plan_$a" plan sc/topo.json sc/jobs.json --algo $a --time-limit 0
	cp "$W/out" "$W/p_$a.json"
done
for a in inart ps atp ring; do
	run "eval_$a" eval sc/topo.json sc/jobs.json "p_$a.json"
	run "eval_${a}_json" eval sc/topo.json sc/jobs.json "p_$a.json" --json
done
run dot_inart dot sc/topo.json sc/jobs.json p_inart.json

# the other built-in scenarios (their own shapes of fabric, INA and jobs):
# the inputs written and described, phase 1 and 2 through inart's and the
# PS baseline's plans, the evaluator, and compare's JSON (its plan times are
# the one wall-clock field, replaced by T)
for s in scarce leafspine bcube scarce-small/1; do
	d=$(echo "$s" | tr / _)
	(cd "$W" && "$INART" run --scenario "$s" --write "$d" --no-compare >/dev/null)
	run "topo_describe_$d" topo describe "$d/topo.json"
	for a in inart ps; do
		run "plan_${a}_$d" plan "$d/topo.json" "$d/jobs.json" --algo $a --time-limit 0
		cp "$W/out" "$W/$d/p_$a.json"
		run "eval_${a}_$d" eval "$d/topo.json" "$d/jobs.json" "$d/p_$a.json"
	done
	run "compare_$d" compare "$d/topo.json" "$d/jobs.json" --format json --time-limit 0 \
		--algos inart,inart-even,ps,byteps,switchml,atp,ring,lp
done

# tables and control requests built from the plans (bridge: install, ctlmsg)
run ctl_deploy ctl deploy sc/topo.json sc/jobs.json --ctl-dir /run/g
for a in inart atp switchml ring; do
	run "ctl_install_$a" --stderr ctl install sc/topo.json sc/jobs.json "p_$a.json" --auto-deploy \
		--ctl-dir /run/g --dry-run
done
run ctl_install_learn ctl install sc/topo.json sc/jobs.json p_inart.json --auto-deploy \
	--ctl-dir /run/g --dry-run --learn-macs --flush-ms 3 --restart-jobs
(cd "$W" && "$INART" ctl deploy sc/topo.json sc/jobs.json --ctl-dir /run/g -o dep.json)
run ctl_install_deploy ctl install sc/topo.json sc/jobs.json p_inart.json --deploy dep.json \
	--dry-run
run ctl_install_only --stderr ctl install sc/topo.json sc/jobs.json p_inart.json --auto-deploy \
	--ctl-dir /run/g --dry-run --only nosuchnode
run ctl_install_noplan --stderr ctl install sc/topo.json sc/jobs.json missing.json \
	--auto-deploy --dry-run
run ctl_install_usage --stderr ctl install sc/topo.json
run ctl_send_usage --stderr ctl send
run switchd_help switchd --help
run switchd_noname --stderr switchd --ctl /nonexistent/s.sock --port lo
run switchd_noport --stderr switchd --ctl /nonexistent/s.sock --name s
run switchd_badopt --stderr switchd --name s --port lo --tx-loss-ports 1,x
run switchd_badagg --stderr switchd --name s --port lo --agg fpga
run switchd_stats_noctl --stderr switchd --stats
run ps_help ps --help
run ps_io_bad --stderr ps --bind 10.9.0.4 --ctl /nonexistent/p.sock --io bogus
run ps_cores_xdp --stderr ps --bind 10.9.0.4 --ctl /nonexistent/p.sock --io xdp --cores 2 --check-config
# --check-config against a deployment file (issue 23): located errors
cat >"$W/dep.json" <<'EOF'
{"nodes": {"p0": {"ip": "10.9.0.4", "ctl": "./p0.sock"},
  "t0": {"ip": "10.9.0.101", "ctl": "./t0.sock", "ports": {"w0": {"port": 0, "if": "nosuchif0"}}}}}
EOF
run switchd_deploy_badif --stderr switchd --name t0 --port lo --ctl ./t0.sock --deployment dep.json --check-config
run ps_deploy_ok --stderr ps --name p0 --bind 10.9.0.4 --ctl ./p0.sock --deployment dep.json --check-config
run ps_deploy_bind --stderr ps --name p0 --bind 10.9.0.5 --ctl ./p0.sock --deployment dep.json --check-config
run ctl_help ctl --help
run eval_bad --stderr eval sc/topo.json sc/jobs.json sc/jobs.json
# issue 26: emu exec (its help, its usage errors: exit 2 before the root check)
run emu_help emu --help
run emu_exec_help emu exec --help
run emu_exec_nodash --stderr emu exec sc/topo.json sc/jobs.json --prefix g
run emu_exec_noprefix --stderr emu exec sc/topo.json sc/jobs.json -- /bin/true
run emu_exec_operands --stderr emu exec sc/topo.json --prefix g -- /bin/true
run emu_exec_badport --stderr emu exec sc/topo.json sc/jobs.json --prefix g --master-port 0 -- /bin/true

if [ "$UPDATE" = --update ]; then
	echo "cli_golden: wrote $n golden files to $GOLD"
	exit 0
fi
if [ $fails -gt 0 ]; then
	echo "cli_golden: $fails of $n outputs differ (if the change is meant: $0 $1 --update," \
		"and say so in the commit)"
	exit 1
fi
echo "cli_golden: $n outputs as golden"
exit 0
