#!/usr/bin/env bash
# emu.sh INART: the emulated network end to end (inart emu, docs/emulator.md).
#   - bad inputs refused before anything is built (a plan for another
#     topology, a scale below 1 Mbit/s, a topology too large for the
#     machine, not root, leftovers of the same prefix), nothing left behind;
#   - a k=4 fat-tree with two jobs (the built-in default scenario, where the
#     evaluator predicts InArt at least 30% faster than ps, atp and
#     switchml): every result exact, InArt measured faster than each;
#   - 1% loss on every link direction: exact;
#   - a link down and up, and a switchd killed and restarted, during a run:
#     exact, or a clear message within the bounded time;
#   - clean-up after a normal run, after SIGKILL of the emulator midway
#     (its janitor), and after 'emu up' + 'emu down': no namespace,
#     interface, run directory (sockets) or process of the run is left;
#   - --io passed to every switchd and read back (issue 24), a bad one
#     refused; a k=8 fat-tree's 80 switches with 32 hosts up (with
#     --no-size-limit; refused without it) and down, nothing left;
#   - --agg auto's choice said (the kernel on every switch, or user where
#     the kernel refuses live frames); a run with --agg kernel (issue 25)
#     exact, its frames through the switches' shapers (where live frames
#     are refused: it fails saying so, the rest skipped and named).
# Every run has its own prefix (h12t<pid><n>); only those are ever removed.
# Needs root; exits 77 (skipped) otherwise.  Prints "N passed, N failed, N skipped".
set -u

INART=${1:?usage: emu.sh PATH-TO-INART}
case $INART in /*) ;; *) INART=$PWD/$INART ;; esac
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh" # skip_all NAME WHY
if [ "$(id -u)" -ne 0 ]; then
	skip_all emu.sh "not root"
fi
if ! ip netns list >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1 ||
	! command -v setpriv >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	skip_all emu.sh "'ip netns', tc, setpriv or python3 unavailable"
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"
base="t$(($$ % 100000))"
. "$(dirname "${BASH_SOURCE[0]}")/emu_lib.sh" # emu_track P, emu_left P; clean-up at exit

n=0
newprefix() { n=$((n + 1)); P="${base}x$n"; emu_track "$P"; }

clean_check() { # DESC PREFIX
	local l
	l=$(emu_left "$2")
	if [ -z "$l" ]; then ok; else bad "$1: left behind:$l"; fi
}

"$INART" run --scenario default --write "$tmp/def" --no-compare >/dev/null 2>&1 || bad "write the default scenario"
T=$tmp/def/topo.json J=$tmp/def/jobs.json
"$INART" plan "$T" "$J" --algo inart -o "$tmp/inart.json" >/dev/null 2>&1 || bad "plan"

# --- bad inputs: refused before anything is built ------------------------------
refused() { # DESC PATTERN -- ARGS...
	local desc=$1 pat=$2 rc
	shift 3
	newprefix
	"$@" --prefix "$P" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$pat" "$tmp/out"; then ok; else
		bad "$desc: exit $rc, want 1 and '$pat': $(head -c 300 "$tmp/out")"
	fi
	clean_check "$desc" "$P"
}
cat >"$tmp/other_topo.json" <<'X'
{"nodes": [{"id": "w0", "kind": "host"}, {"id": "w1", "kind": "host"}, {"id": "p0", "kind": "host"},
           {"id": "s0", "kind": "switch", "ina": {"agg_gbps": 100, "trees": 2}}],
 "links": [{"a": "w0", "b": "s0", "gbps": 10}, {"a": "w1", "b": "s0", "gbps": 10},
           {"a": "p0", "b": "s0", "gbps": 10}]}
X
cat >"$tmp/other_jobs.json" <<'X'
{"jobs": [{"id": "j0", "workers": ["w0", "w1"], "ps": ["p0"], "gradient_bytes": 100000}]}
X
"$INART" plan "$tmp/other_topo.json" "$tmp/other_jobs.json" --algo inart -o "$tmp/other_plan.json" >/dev/null 2>&1
refused "plan for another topology" "other_plan.json" -- "$INART" emu run "$T" "$J" "$tmp/other_plan.json" -q
refused "scale below 1 Mbit/s" "below the 1 Mbit/s" -- "$INART" emu run "$T" "$J" "$tmp/inart.json" --mbps 0.5 -q
"$INART" topo gen fattree --k 8 -o "$tmp/ft8.json" >/dev/null 2>&1
refused "topology too large" "too large for this machine" -- "$INART" emu up "$tmp/ft8.json" -q
newprefix
setpriv --reuid 65534 --regid 65534 --clear-groups "$INART" emu run "$T" "$J" "$tmp/inart.json" \
	--prefix "$P" -q >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "needs root" "$tmp/out"; then ok; else bad "not root: exit $rc: $(cat "$tmp/out")"; fi
clean_check "not root" "$P"
newprefix
ip netns add "inart-emu-$P-x"
"$INART" emu run "$T" "$J" "$tmp/inart.json" --prefix "$P" -q >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "leftovers" "$tmp/out"; then ok; else bad "leftovers: exit $rc: $(head -c 300 "$tmp/out")"; fi
if ip netns list | grep -q "^inart-emu-$P-x"; then ok; else bad "leftovers: the other run's namespace was touched"; fi
"$INART" emu down --prefix "$P" >/dev/null 2>&1
clean_check "down of leftovers" "$P"

# --- k=4 fat-tree, two jobs: exact, InArt faster than ps, atp, switchml ---------------
# Not tried again when it does not finish: a stall is a data-plane bug (the
# retry that hid one is gone with its fix, issue 12).
newprefix
"$INART" emu compare "$T" "$J" --algos inart,ps,atp,switchml --iters 3 --target-s 0.4 \
	--prefix "$P" -f json -o "$tmp/cmp.json" 2>"$tmp/cmp.err"
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "emu compare: exit $rc"; tail -5 "$tmp/cmp.err"; fi
clean_check "after a normal run" "$P"
python3 - "$tmp/cmp.json" "$T" <<'X' >"$tmp/cmp.out" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
hosts = {n["id"] for n in json.load(open(sys.argv[2]))["nodes"] if n["kind"] == "host"}
runs = {r["algorithm"]: r for r in d["runs"]}
bad = []
for a, r in runs.items():
    for k in ("algorithm", "predicted_comm_s", "measured_comm_s", "exact", "cpu_bound"):
        if k not in r:
            bad.append("%s: no %s" % (a, k))
    if r["exact"] is not True:
        bad.append("%s not exact: %s" % (a, r.get("why")))
    # the frames the switches sent: at least their bytes in full frames
    c, sent = r["cpu"], sum(l["measured_bytes"] or 0 for l in r["links"] if l["from"] not in hosts)
    if not (c["switch_frames"] >= sent / 1514 > 0 and c["us_per_frame"] > 0):
        bad.append("%s: %s switch frames, %s us each, for %d bytes sent by switches"
                   % (a, c["switch_frames"], c["us_per_frame"], sent))
inart = runs["inart"]
for b in ("ps", "atp", "switchml"):
    gain = 1 - inart["predicted_comm_s"] / runs[b]["predicted_comm_s"]
    if gain < 0.3:
        bad.append("predicted gain vs %s only %.2f" % (b, gain))
    if not (runs[b]["measured_comm_s"] and inart["measured_comm_s"] < runs[b]["measured_comm_s"]):
        bad.append("inart (%s s) not measured faster than %s (%s s)"
                   % (inart["measured_comm_s"], b, runs[b]["measured_comm_s"]))
for a, r in runs.items():
    print("%s predicted %.4f measured %s ratio %s cpu_bound %s" % (a, r["predicted_comm_s"],
          r["measured_comm_s"], r["ratio"], r["cpu_bound"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
X
if [ $? -eq 0 ]; then ok; else bad "k=4 fat-tree, two jobs:"; sed 's/^/  | /' "$tmp/cmp.out"; fi

# --- 1% loss on every link: exact -----------------------------------------------------
newprefix
"$INART" emu run "$T" "$J" "$tmp/inart.json" --loss 0.01 --seed 3 --iters 2 --target-s 0.3 \
	--prefix "$P" -f json -o "$tmp/loss.json" 2>"$tmp/loss.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '"exact": true' "$tmp/loss.json" &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['runs'][0]['drops']['emulated_loss'] > 0 else 1)" "$tmp/loss.json"; then
	ok
else
	bad "1% loss: exit $rc"
	tail -5 "$tmp/loss.err"
fi
# with the loss gate --agg auto takes user where the kernel path would run,
# and says why (on ring the reason is the back end)
if grep -q "switchd aggregation: kernel on 0, user on .*(--agg auto: .*\(--rx-loss or --tx-loss: the gate must see every frame\|the kernel path needs --io xdp\)" \
	"$tmp/loss.err"; then ok; else bad "--agg auto with --loss: the reason for user not said: $(grep aggregation "$tmp/loss.err")"; fi
clean_check "after the loss run" "$P"

# --- faults: a link down and up, a switchd killed and restarted ---------------------------
newprefix
start=$(date +%s)
"$INART" emu run "$T" "$J" "$tmp/inart.json" --iters 3 --target-s 0.3 --iter-timeout 20 \
	--link-down e0-a0@0.1+0.4 --kill-switch a2@0.2+0.5 --prefix "$P" -f json \
	-o "$tmp/fault.json" 2>"$tmp/fault.err"
rc=$?
took=$(($(date +%s) - start))
if [ $rc -eq 0 ] && grep -q '"exact": true' "$tmp/fault.json"; then
	ok
elif [ $rc -eq 1 ] && grep -q '"why"' "$tmp/fault.json" && [ $took -lt 120 ]; then
	ok
	echo "emu.sh: faults: the run did not finish, with a message: $(grep '"why"' "$tmp/fault.json" | head -1)"
else
	bad "faults: exit $rc after $took s"
	tail -5 "$tmp/fault.err"
fi
grep -q "fault: link e0-a0 down" "$tmp/fault.err" && grep -q "fault: switchd of a2 restarted" "$tmp/fault.err" &&
	ok || bad "faults were injected: $(grep fault "$tmp/fault.err")"
clean_check "after the fault run" "$P"

# --- SIGKILL of the emulator midway: its janitor removes everything -----------------------
newprefix
"$INART" emu run "$T" "$J" "$tmp/inart.json" --iters 200 --target-s 0.2 --prefix "$P" \
	>/dev/null 2>"$tmp/kill.err" &
epid=$!
for _ in $(seq 300); do
	grep -q "iteration 1:" "$tmp/kill.err" && break
	sleep 0.1
done
if ip netns list | grep -q "^inart-emu-$P-"; then ok; else bad "SIGKILL test: the run did not start"; fi
kill -9 $epid
wait $epid 2>/dev/null
for _ in $(seq 200); do
	[ -z "$(emu_left "$P")" ] && break
	sleep 0.1
done
clean_check "after SIGKILL of the emulator" "$P"

# --- up, then down ---------------------------------------------------------------------
newprefix
if "$INART" emu up "$T" "$J" --prefix "$P" -q >"$tmp/up.out" 2>&1 &&
	[ "$(ip netns list | grep -c "^inart-emu-$P-")" -eq 36 ] &&
	ps -eo args | grep -v grep | grep -q "/run/inart-emu/$P/"; then
	ok
else
	bad "emu up: $(cat "$tmp/up.out")"
fi
"$INART" emu down --prefix "$P" >/dev/null 2>&1 || bad "emu down"
clean_check "after emu down" "$P"

# --- --io: passed to every switchd and read back from them -----------------------------
# (issue 24: the emulator runs the back end it asks for and says which one the
# switches run; a bad mode is a usage error)
newprefix
"$INART" emu up "$T" "$J" --prefix "$P" --io mmsg >"$tmp/io.out" 2>&1
rc=$?
io=$(ps -eo args | grep -v grep | grep "/run/inart-emu/$P/" | grep -c -- "switchd .*--io mmsg")
ctl_io=$(python3 - "/run/inart-emu/$P/e0.sock" <<'X'
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
b = b'{"op": "info"}'
s.sendall(struct.pack(">I", len(b)) + b)
h = s.recv(4, socket.MSG_WAITALL); n = struct.unpack(">I", h)[0]
print(json.loads(s.recv(n, socket.MSG_WAITALL)).get("io"))
X
)
if [ $rc -eq 0 ] && [ "$io" -eq 20 ] && grep -q "switchd I/O: mmsg on 20 switches (--io mmsg)" "$tmp/io.out" &&
	[ "$ctl_io" = mmsg ]; then ok; else
	bad "--io mmsg: exit $rc, $io switchd with --io mmsg, e0 runs '$ctl_io': $(cat "$tmp/io.out")"
fi
"$INART" emu down --prefix "$P" >/dev/null 2>&1
clean_check "after emu up --io mmsg" "$P"
newprefix
"$INART" emu up "$T" "$J" --prefix "$P" >"$tmp/io.out" 2>&1
grep -q "switchd I/O: [a-z]* on 20 switches" "$tmp/io.out" && ok || bad "--io auto: no back end said: $(cat "$tmp/io.out")"
"$INART" emu down --prefix "$P" >/dev/null 2>&1
"$INART" emu up "$T" "$J" --prefix "$P" --io bogus >"$tmp/io.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q -- "--io: auto, ring or mmsg" "$tmp/io.out" && ok || bad "--io bogus: exit $rc: $(cat "$tmp/io.out")"
clean_check "after emu up --io" "$P"
# xdp bypasses tbf: the switches shape the links they send on (switchd
# --shape), their ends have no tbf, the hosts' ends keep it
newprefix
"$INART" emu up "$T" "$J" --prefix "$P" --io xdp >"$tmp/io.out" 2>&1
rc=$?
e0=$(ip netns list | awk -v p="inart-emu-$P-e0" '$1 == p {print $1}')
h0=$(ip netns list | awk -v p="inart-emu-$P-h0" '$1 == p {print $1}')
e0tbf=$( [ -n "$e0" ] && tc -n "$e0" qdisc show | grep -c tbf)
h0tbf=$( [ -n "$h0" ] && tc -n "$h0" qdisc show | grep -c tbf)
if [ $rc -eq 0 ] && grep -q "switchd I/O: xdp on 20 switches (--io xdp)" "$tmp/io.out" &&
	[ "${e0tbf:-x}" = 0 ] && [ "${h0tbf:-0}" -ge 1 ]; then ok; else
	bad "--io xdp: exit $rc, tbf on e0 ${e0tbf:-?} h0 ${h0tbf:-?}: $(cat "$tmp/io.out")"
fi
# --agg auto (the default) on xdp: the kernel on every switch (the
# aggregation limit charged in the kernel since h25g), said in one line;
# where the kernel refuses live frames (the kernel path's ticks), user on
# every switch, that said
refused=0
live_frames_refused "$INART" && refused=1
if [ $refused = 1 ]; then
	want="switchd aggregation: kernel on 0, user on 20 switches (--agg auto: .*refuses BPF_PROG_RUN with live frames"
else
	want="switchd aggregation: kernel on 20, user on 0 switches (--agg auto)"
fi
if grep -q "$want" "$tmp/io.out"; then ok; else bad "--agg auto: '$want' expected: $(grep aggregation "$tmp/io.out")"; fi
"$INART" emu down --prefix "$P" >/dev/null 2>&1
clean_check "after emu up --io xdp" "$P"

# --- the kernel aggregation path (issue 25): its frames through the switches' shapers ----
# --agg kernel needs no aggregation-limit gate (--no-agg-limit); exact, every
# switch on it, contributions absorbed in the kernel and every frame it built
# given to the shaper of its port (every switch port is shaped on xdp)
newprefix
"$INART" emu run "$T" "$J" "$tmp/inart.json" --io xdp --agg kernel --no-agg-limit --iters 2 \
	--target-s 0.3 --prefix "$P" -f json -o "$tmp/kern.json" 2>"$tmp/kern.err"
rc=$?
if [ $refused = 1 ]; then # it must fail, saying why
	if [ $rc -eq 1 ] && grep -q "refuses BPF_PROG_RUN with live frames" "$tmp/kern.err"; then ok; else
		bad "emu run --agg kernel where live frames are refused: exit $rc: $(tail -3 "$tmp/kern.err")"
	fi
	kernel_skipped 2 "emu run --agg kernel: $live_why"
elif [ $rc -eq 0 ] && python3 - "$tmp/kern.json" >"$tmp/kern.out" 2>&1 <<'X'; then ok; else
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
k = r["kernel"]
print("exact %s, kernel %s" % (r["exact"], k))
sys.exit(0 if r["exact"] is True and k["switches"] == 20 and k["absorbed"] > 0 and
         k["sent"] > 0 and k["to_shaper"] == k["sent"] + k["flushed"] else 1)
X
	bad "emu run --agg kernel: exit $rc: $(cat "$tmp/kern.out"; tail -3 "$tmp/kern.err")"
fi
if [ $refused = 0 ]; then
	grep -q "switchd aggregation: kernel on 20, user on 0 switches (--agg kernel)" "$tmp/kern.err" &&
		grep -q "kernel path on 20 switches: [0-9]* frames absorbed" "$tmp/kern.err" && ok ||
		bad "emu run --agg kernel: its lines: $(grep 'aggregation\|kernel path' "$tmp/kern.err")"
fi
clean_check "after emu run --agg kernel" "$P"

# --- a k=8 fat-tree's switch layer (80 switchd) up and down (issue 24) ------------------
# one host per edge switch: 112 namespaces, beyond the size limit without
# --no-size-limit; about 4 GB of kernel packet rings while up, 10-20 s here
"$INART" run --scenario fattree8 --write "$tmp/ft8" --no-compare >/dev/null 2>&1
python3 - "$tmp/ft8/topo.json" "$tmp/ft8s.json" <<'X'
import json, sys
t = json.load(open(sys.argv[1]))
keep = {"h%d" % (4 * i) for i in range(32)}
drop = lambda n: n.startswith("h") and n not in keep
t["nodes"] = [n for n in t["nodes"] if not drop(n["id"])]
t["links"] = [l for l in t["links"] if not drop(l["a"]) and not drop(l["b"])]
json.dump(t, open(sys.argv[2], "w"))
X
refused "k=8, 32 hosts, without --no-size-limit" "112 namespaces" -- "$INART" emu up "$tmp/ft8s.json" -q
newprefix
"$INART" emu up "$tmp/ft8s.json" --no-size-limit --prefix "$P" >"$tmp/up8.out" 2>&1
rc=$?
nsw=$(ps -eo args | grep -v grep | grep "/run/inart-emu/$P/" | grep -c " switchd ")
if [ $rc -eq 0 ] && [ "$(ip netns list | grep -c "^inart-emu-$P-")" -eq 112 ] && [ "$nsw" -eq 80 ] &&
	grep -q "on 80 switches" "$tmp/up8.out"; then ok; else
	bad "k=8 up: exit $rc, $nsw switchd: $(tail -3 "$tmp/up8.out")"
fi
"$INART" emu down --prefix "$P" >/dev/null 2>&1 || bad "k=8 down"
clean_check "after k=8 up + down" "$P"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
