#!/usr/bin/env bash
# cycles.sh PYTHON CHECK ALLOW: no two files of src/ call each other's
# functions but the cycles ALLOW lists (scripts/check_cycles.py), and the
# check itself sees right on planted copies of the tree: a cycle of two
# files is found with the functions that make it, a static function of the
# same name, a member and a name in a comment or string make no edge, a
# one-way call passes, and a stale entry of the allow list fails.
# INART_SRC is the source root.
set -u
py=$1 check=$2 allow=$3
src=${INART_SRC:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() {
	echo "FAIL: $*"
	cat "$tmp/out"
	fail=$((fail + 1))
}
run() { "$py" "$check" --root "$1" --allow-file "$allow" >"$tmp/out" 2>&1; }
fresh() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t"
	cp -r "$src/src" "$tmp/t/"
}

if run "$src"; then ok; else bad "the check fails on the tree itself"; fi

# a cycle: err.c calls plant.c, plant.c calls err.c
fresh
printf 'void plant_b(void);\nvoid plant_a(void)\n{\n\tplant_b();\n}\n' >>"$tmp/t/src/common/err.c"
printf 'void plant_a(void);\nvoid plant_b(void)\n{\n\tplant_a();\n}\n' >"$tmp/t/src/common/plant.c"
if run "$tmp/t"; then bad "a planted cycle passed"
elif grep -qF 'cycle: src/common/err.c src/common/plant.c' "$tmp/out" &&
	grep -qF 'src/common/plant.c -> src/common/err.c: plant_a' "$tmp/out" &&
	grep -qF 'src/common/err.c -> src/common/plant.c: plant_b' "$tmp/out"; then ok
else bad "the planted cycle is not named with its functions"; fi

# one way only: err.c calls plant.c, which calls nothing of it; plant.c's
# static plant_a, a member .plant_a and names in comments and strings make
# no edge back
fresh
printf 'void plant_b(void);\nvoid plant_a(void)\n{\n\tplant_b();\n}\n' >>"$tmp/t/src/common/err.c"
cat >"$tmp/t/src/common/plant.c" <<'C'
struct s { void (*plant_a)(void); };
static void plant_a(void)
{
}
void plant_b(void)
{
	struct s x = {plant_a};
	const char *n = "plant_a()"; /* plant_a() */
	x.plant_a();
	(void)n;
}
C
if run "$tmp/t"; then ok; else bad "a one-way call failed"; fi

# a stale allow entry fails
printf 'src/common/err.c src/common/sbuf.c # planted\n' >"$tmp/allow"
cat "$allow" >>"$tmp/allow"
if "$py" "$check" --root "$src" --allow-file "$tmp/allow" >"$tmp/out" 2>&1; then
	bad "a stale allow entry passed"
elif grep -qF 'allowed but no longer a cycle' "$tmp/out"; then ok
else bad "the stale entry is not named"; fi

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
