#!/bin/bash
# run_sh.sh — ./run.sh passes its arguments to `iommulab run` unchanged: one with a space stays
# one argument, one with `;`, `$(...)`, a glob or quotes is not run or expanded by a shell, an
# empty one stays. run.sh runs in a copy of the tree's run.sh and Makefile whose
# scripts/install-deps.sh, cmake and build/iommulab are stubs: the stub binary records the
# arguments it was given, and nothing is installed or built.
# usage: bash run_sh.sh <iommulab binary> <source dir>
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
# no make: skipped (77), or a failure when CI is set (have sets fail)
have make "run.sh's arguments (it builds with make)" || { [ "$fail" -eq 0 ] && exit 77; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T=$TMP/tree
mkdir -p "$T/scripts" "$T/build" "$TMP/bin"
cp "$SRC/run.sh" "$SRC/Makefile" "$T/"
printf '#!/bin/sh\nexit 0\n' >"$T/scripts/install-deps.sh"
printf '#!/bin/sh\nexit 0\n' >"$TMP/bin/cmake"
: >"$T/build/CMakeCache.txt"
# the stub binary: each argument on its own line, framed, into args.txt
printf '#!/bin/sh\nfor a in "$@"; do printf "<%%s>\\n" "$a"; done >"%s/args.txt"\n' "$TMP" \
	>"$T/build/iommulab"
chmod +x "$T/run.sh" "$T/scripts/install-deps.sh" "$TMP/bin/cmake" "$T/build/iommulab"

cd "$TMP" || exit 1
# check_args ARG...: run.sh ARG... runs the stub with `run ARG...`, and nothing else
check_args() {
	local out rc
	rm -f args.txt
	# not the suite's own make's variables (make test BUILD=build-asan exports BUILD and
	# MAKEFLAGS to ctest and so to here): run.sh must build the stub tree's default build/
	out=$(env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$TMP/bin:$PATH" \
		"$T/run.sh" "$@" 2>err); rc=$?
	[ $rc -eq 0 ] || bad "run.sh $*: exit $rc ($(tail -2 err))"
	printf '<%s>\n' run "$@" >want.txt
	cmp -s want.txt args.txt || bad "run.sh passed other arguments: got
$(cat args.txt 2>/dev/null)
want
$(cat want.txt)"
	printf '%s\n' "$out" | grep -qx INJECTED && bad "run.sh ran the argument's 'echo INJECTED'"
	[ -z "$out" ] || bad "run.sh printed on stdout besides iommulab's: '$out'"
}
# the two (28, item 12), then what else a shell would take apart
check_args "000; echo INJECTED"
check_args 000 --out "/tmp/x/my dir"
check_args '$(touch pwned)' '*' "it's \"quoted\"" "" --quick
[ -e pwned ] && bad "run.sh ran the argument's \$(touch pwned)"

[ $fail -eq 0 ] && echo "cli/run_sh: all checks passed"
exit $fail
