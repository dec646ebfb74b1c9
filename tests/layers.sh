#!/usr/bin/env bash
# layers.sh PYTHON CHECK_LAYERS LAYER...: the layer check passes on the tree
# and fails, naming file:line, on each planted fault in a copy of it: an
# upward include, an include not in the one style (relative path, bare
# same-folder name), the control-plane
# model including the planner, an include of a missing file, a file under
# src/ that no module list names.  meson passes the same LAYER specs the
# build uses; INART_SRC is the source root.
set -u
py=$1 check=$2
shift 2
src=${INART_SRC:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

run() { "$py" "$check" --root "$1" "${@:2}" >"$tmp/out" 2>&1; }

# fresh: a clean copy of src/ and include/ in $tmp/t
fresh() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t"
	cp -r "$src/src" "$src/include" "$tmp/t/"
}

# plant DESC FILE LINE TEXT EXPECT: insert TEXT as line LINE of FILE in a
# fresh copy; the check must exit 1 and print EXPECT.
plant() {
	local desc=$1 file=$2 line=$3 text=$4 expect=$5
	shift 5
	fresh
	sed -i "${line}i\\$text" "$tmp/t/$file"
	if run "$tmp/t" "$@"; then
		echo "FAIL: $desc: the check passed"
		fail=$((fail + 1))
	elif ! grep -qF -- "$expect" "$tmp/out"; then
		echo "FAIL: $desc: output lacks '$expect':"
		cat "$tmp/out"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}

if run "$src" "$@"; then pass=$((pass + 1)); else
	echo "FAIL: the check fails on the tree itself:"
	cat "$tmp/out"
	fail=$((fail + 1))
fi

layers=("$@")
p() { plant "$@" "${layers[@]}"; }
p "dp includes cp" src/dp/wire.c 3 '#include "cp/model/plan.h"' \
	'src/dp/wire.c:3: #include "cp/model/plan.h": layer dp may not include src/cp/model/plan.h of layer cp_model'
p "a relative include" src/dp/switch.h 2 '#include "../common/err.h"' \
	'src/dp/switch.h:2: #include "../common/err.h": write it "common/err.h"'
p "a same-folder include" src/dp/switch.c 2 '#include "wire.h"' \
	'src/dp/switch.c:2: #include "wire.h": write it "dp/wire.h"'
p "sim includes ctlproto" src/sim/sim.c 2 '#include "ctlproto/ctlmsg.h"' \
	'layer sim may not include src/ctlproto/ctlmsg.h of layer ctlproto'
p "emu includes cli" src/emu/run.c 2 '#include "cli/util.h"' \
	'layer emu may not include src/cli/util.h of layer cli'
p "common includes dp" src/common/sbuf.c 1 '#include "dp/wire.h"' 'src/common/sbuf.c:1:'
p "cp model includes the planner" src/cp/model/evaluate.c 5 '#include "cp/planner/planner.h"' \
	'src/cp/model/evaluate.c:5: #include "cp/planner/planner.h": layer cp_model may not include src/cp/planner/planner.h of layer cp_planner'
p "bridge includes io" src/bridge/install.c 4 '#include "io/udp.h"' 'src/bridge/install.c:4:'
p "io includes cli" src/io/log.c 4 '#include "cli/util.h"' 'src/io/log.c:4:'
p "an include of a missing file" src/dp/pkt.c 2 '#include "dp/nosuch.h"' \
	'src/dp/pkt.c:2: #include "dp/nosuch.h" names no file'

fresh
echo 'int x;' >"$tmp/t/src/dp/extra.c"
if run "$tmp/t" "$@"; then
	echo "FAIL: an unlisted file passed"
	fail=$((fail + 1))
elif grep -qF 'src/dp/extra.c: in no layer' "$tmp/out"; then pass=$((pass + 1)); else
	echo "FAIL: unlisted file: output lacks 'src/dp/extra.c: in no layer'"
	fail=$((fail + 1))
fi

# A downward include is fine (the check is not failing everything).
p_ok() {
	fresh
	sed -i "$3i\\$4" "$tmp/t/$2"
	if run "$tmp/t" "${layers[@]}"; then pass=$((pass + 1)); else
		echo "FAIL: $1: the check failed:"
		cat "$tmp/out"
		fail=$((fail + 1))
	fi
}
p_ok "bridge includes dp and cp" src/bridge/install.c 4 '#include "dp/lpm.h"'
p_ok "io includes the public header" src/io/log.c 4 '#include "inart/inart.h"'

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
