#!/usr/bin/env bash
# mutate.sh — scripts/mutate.py on a tiny CMake project: a planted mutation that a test notices
# is killed (by that test), an equivalent one survives, one that does not compile is "didn't
# build" (not a kill), one that hangs is a timeout (killed, counted apart), a pattern found
# nowhere is "not found" and one found twice "ambiguous"; the file is restored after each
# mutant; the random sample is the same for the same seed and never mutates an array
# designator (`[4] = ...`), only a subscript. Not the kill rate of this tree
# (docs/mutation.md). Run as:
#   bash mutate.sh <iommulab> <srcdir>
set -u
SRC=$2
. "$2/tests/support/cli_lib.sh" # fail, bad, have
have cmake "scripts/mutate.py" && have python3 "scripts/mutate.py" || exit $((fail ? 1 : 77))
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
F=$TMP/fixture
mkdir -p "$F/src/core" "$F/tests/core"
cat >"$F/CMakeLists.txt" <<'X'
cmake_minimum_required(VERSION 3.13)
project(fixture C)
enable_testing()
add_library(calc src/core/calc.c)
add_executable(test_calc tests/core/test_calc.c)
target_link_libraries(test_calc calc)
add_test(NAME core/test_calc COMMAND test_calc)
X
cat >"$F/src/core/calc.c" <<'X'
/* the sum of a and b, at most max */
int clamp_add(int a, int b, int max)
{
	int s = a + b;

	if (s > max)
		s = max;
	return s;
}

int twice(int a)
{
	return a * 2;
}

const char *name_of(int i)
{
	static const char *const names[8] = {
		[0] = "zero", [4] = "four",
	};
	int v[2];

	v[1] = i & 7;
	return names[v[1]];
}
X
cat >"$F/tests/core/test_calc.c" <<'X'
int clamp_add(int a, int b, int max);
int main(void)
{
	return !(clamp_add(2, 3, 10) == 5 && clamp_add(8, 5, 10) == 10);
}
X
cat >"$F/named.json" <<'X'
[
 {"name": "planted", "file": "src/core/calc.c", "pattern": "if (s > max)", "replacement": "if (s < max)"},
 {"name": "equivalent", "file": "src/core/calc.c", "pattern": "if (s > max)", "replacement": "if (s >= max)"},
 {"name": "nobuild", "file": "src/core/calc.c", "pattern": "int s = a + b;", "replacement": "int s = a + ;"},
 {"name": "hang", "file": "src/core/calc.c", "pattern": "\treturn s;", "replacement": "\tfor (volatile int i = 0;; i++)\n\t\t;\n\treturn s;"},
 {"name": "missing", "file": "src/core/calc.c", "pattern": "no such code", "replacement": "x"},
 {"name": "twice", "file": "src/core/calc.c", "pattern": "max", "replacement": "min"},
 {"name": "moved", "file": "src/old/calc.c", "pattern": "\ts = max;", "replacement": "\ts = max + 1;"}
]
X
cp "$F/src/core/calc.c" "$TMP/calc.orig"
M() { python3 "$SRC/scripts/mutate.py" --root "$F" --named "$F/named.json" --search src --dirs src \
	--jobs 1 --cmake-arg=-DCMAKE_BUILD_TYPE=Debug "$@"; }
M --sample 0 --timeout 5 --json "$TMP/r.json" >"$TMP/out" 2>"$TMP/err" &
pid=$!
# the JSON is written whole after every mutant: seen while the run goes on (the hang mutant
# alone takes 5 s), with the mutants not run yet pending
while kill -0 $pid 2>/dev/null && [ ! -e "$TMP/r.json" ]; do sleep 0.1; done
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["state"] == "running" and d["named"]["counts"]["pending"] > 0, (d["state"], d["named"]["counts"])' \
	"$TMP/r.json" 2>/dev/null || bad "the JSON is not written as the run goes: $(head -c 300 "$TMP/r.json" 2>&1)"
wait $pid || bad "mutate.py: exit $? ($(tail -3 "$TMP/err"))"
grep -q '"state": "finished"' "$TMP/r.json" || bad "the last JSON is not the finished run's"
st() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
m = {x["id"]: x for x in d["named"]["mutants"]}[sys.argv[2]]
print(m["status"], m["killed_by"], m["file"], m["line"])' "$TMP/r.json" "$1"; }
[ "$(st planted)" = "killed core/test_calc src/core/calc.c 6" ] || bad "planted: $(st planted)"
[ "$(st equivalent | cut -d' ' -f1)" = survived ] || bad "equivalent: $(st equivalent)"
[ "$(st nobuild | cut -d' ' -f1-2)" = "didn't build" ] || bad "nobuild: $(st nobuild)"
[ "$(st hang | cut -d' ' -f1)" = timeout ] || bad "hang: $(st hang)"
[ "$(st missing | cut -d' ' -f1-2)" = "not found" ] || bad "missing: $(st missing)"
[ "$(st twice | cut -d' ' -f1)" = ambiguous ] || bad "twice: $(st twice)"
[ "$(st moved)" = "killed core/test_calc src/core/calc.c 7" ] || bad "moved: $(st moved)"
# killed: planted, hang (timeout), moved; survived: equivalent -> 3 of 4
grep -q "named: 7 mutants: 2 killed, 1 timeout, 1 survived, 1 didn't build, 1 not found, 1 ambiguous; kill rate 75.0 %" \
	"$TMP/out" || bad "summary: $(grep '^named' "$TMP/out")"
grep -q "^      +	if (s >= max)" "$TMP/out" || bad "the survivor's diff is not shown"
cmp -s "$F/src/core/calc.c" "$TMP/calc.orig" || bad "the fixture's file changed"
cmp -s "$F/build-mutate/tree/src/core/calc.c" "$TMP/calc.orig" || bad "the scratch copy is not restored"
# the random sample: the same seed, the same mutants; a bad value, one line and exit 2
M --named '' --sample 3 --seed 7 --list >"$TMP/l1" 2>/dev/null
M --named '' --sample 3 --seed 7 --list >"$TMP/l2" 2>/dev/null
[ "$(wc -l <"$TMP/l1")" = 3 ] && cmp -s "$TMP/l1" "$TMP/l2" || bad "seeded sample: $(cat "$TMP/l1")"
# an array designator is never mutated, a subscript is
M --named '' --sample 1000 --list >"$TMP/all" 2>/dev/null
grep -q 'calc.c:19 ' "$TMP/all" && bad "a designator mutated: $(grep 'calc.c:19 ' "$TMP/all")"
grep -q "calc.c:23 \[boundary\] '1' -> '2'" "$TMP/all" || bad "subscript not mutated: $(cat "$TMP/all")"
# several named lists, comma-separated, in one run; a name given twice is refused
printf '[{"name": "second", "file": "src/core/calc.c", "pattern": "return a * 2;", "replacement": "return a * 3;"}]\n' \
	>"$TMP/named2.json"
M --named "$F/named.json,$TMP/named2.json" --sample 0 --list >"$TMP/l3" 2>/dev/null
[ "$(wc -l <"$TMP/l3")" = 8 ] && grep -q '^second ' "$TMP/l3" || bad "two named lists: $(cat "$TMP/l3")"
M --named "$TMP/named2.json,$TMP/named2.json" --sample 0 --list >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || bad "a name twice: exit $rc, $(cat "$TMP/err")"
M --sample -1 >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || bad "--sample -1: exit $rc, $(cat "$TMP/err")"
exit $fail
