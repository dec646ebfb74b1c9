#!/usr/bin/env bash
# long_functions.sh PYTHON SCRIPT: no function of src/ over 100 lines but
# those scripts/long_functions.allow lists (option parsing; functions other
# branches are changing), and the scanner itself counts right: a planted
# function of 101 lines is found by name and length, one of 100 is not, and
# braces in comments, strings, character literals, preprocessor lines and
# file-scope initialisers do not make or break a function.  INART_SRC is the
# source root.
set -u
py=$1 script=$2
src=${INART_SRC:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() {
	echo "FAIL: $*"
	fail=$((fail + 1))
}

# body N: N lines of statements
body() { for ((i = 0; i < $1; i++)); do echo "	x += $i;"; done; }

# a function of 101 lines (name line to closing brace), one of exactly 100,
# and the traps
{
	echo '#define OPEN {'
	echo 'static const int table[] = {'
	for ((i = 0; i < 150; i++)); do echo "	$i,"; done
	echo '};'
	echo 'static int too_long(int x)'
	echo '{'
	body 97
	echo '	return x;'
	echo '}'
	echo ''
	echo 'static int just_right(int x)'
	echo '{'
	echo '	const char *s = "}}}{"; /* } */'
	echo "	char c = '}';"
	echo '	// }'
	body 93
	echo '	return x + s[0] + c;'
	echo '}'
} >"$tmp/t.c"
out=$("$py" "$script" --check "$tmp/t.c" 2>&1)
rc=$?
[ $rc = 1 ] || bad "planted long function: exit $rc, not 1"
echo "$out" | grep -q "t.c:154: too_long 101$" && ok || bad "too_long (101 lines) not reported as such: $out"
echo "$out" | grep -q "just_right" && bad "just_right (100 lines) reported: $out" || ok
echo "$out" | grep -q "table" && bad "an initialiser reported as a function: $out" || ok
"$py" "$script" --check --allow "$tmp/t.c:too_long" "$tmp/t.c" >/dev/null 2>&1 && ok ||
	bad "--allow did not accept too_long"
"$py" "$script" --check --max 101 "$tmp/t.c" >/dev/null 2>&1 && ok ||
	bad "--max 101 still reports a 101-line function"
"$py" "$script" --check --allow "$tmp/t.c:too_long" --allow "$tmp/t.c:just_right" "$tmp/t.c" \
	>/dev/null 2>&1 && bad "--check accepted a stale entry (just_right is not over 100 lines)" || ok

# the tree
out=$(cd "$src" && "$py" "$script" --check --allow-file scripts/long_functions.allow src 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] && ok || bad "src/ has functions over 100 lines that scripts/long_functions.allow does not list"

echo "long_functions: $pass passed, $fail failed"
[ $fail = 0 ]
