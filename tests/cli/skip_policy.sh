#!/usr/bin/env bash
# skip_policy.sh — the shell tests' skips: with python3 missing from PATH, a script that needs
# it throughout skips (exit 77, which ctest shows as skipped) and one that needs it for a few
# checks says which it did not make; with CI set, both fail instead (CI must run every check).
# Not the cmocka tests' skips (tests/experiments/test_skip_policy.c). Run as:
#   bash skip_policy.sh <iommulab> <srcdir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# A PATH with every command of this one but python3.
mkdir "$TMP/bin"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	for f in "$d"/*; do
		n=$(basename "$f")
		case $n in python3*) continue ;; esac
		[ -x "$f" ] && [ ! -e "$TMP/bin/$n" ] && ln -s "$f" "$TMP/bin/$n"
	done
done
BASH_BIN=$(command -v bash)
PATH="$TMP/bin" command -v python3 >/dev/null && bad "python3 still on the reduced PATH"

# run <CI value or -> <script>: exit status, output in $TMP/out
run() {
	local ci=$1 script=$2
	if [ "$ci" = - ]; then
		env -u CI PATH="$TMP/bin" "$BASH_BIN" "$SRC/tests/cli/$script" "$BIN" "$SRC" >"$TMP/out" 2>&1
	else
		env CI="$ci" PATH="$TMP/bin" "$BASH_BIN" "$SRC/tests/cli/$script" "$BIN" "$SRC" >"$TMP/out" 2>&1
	fi
}

# sensitivity.sh needs python3 throughout: a skip, or a failure in CI.
for ci in - "" false 0; do
	run "$ci" sensitivity.sh; rc=$?
	[ $rc -eq 77 ] || bad "sensitivity.sh without python3, CI='$ci': exit $rc, want 77 (skipped)"
	grep -q '^SKIP: python3 not found' "$TMP/out" || bad "sensitivity.sh, CI='$ci': no SKIP line"
done
run true sensitivity.sh; rc=$?
[ $rc -eq 1 ] || bad "sensitivity.sh without python3, CI=true: exit $rc, want 1"
grep -q 'python3 not found, and CI is set' "$TMP/out" || bad "sensitivity.sh, CI=true: no reason given"

# bench.sh needs python3 for six of its checks: it says so and passes, or fails in CI.
run - bench.sh; rc=$?
[ $rc -eq 0 ] || bad "bench.sh without python3: exit $rc, want 0 ($(grep FAIL "$TMP/out" | head -3))"
[ "$(grep -c '^SKIP: python3 not found' "$TMP/out")" -eq 6 ] ||
	bad "bench.sh without python3: not six SKIP lines: $(cat "$TMP/out")"
run true bench.sh; rc=$?
[ $rc -eq 1 ] || bad "bench.sh without python3, CI=true: exit $rc, want 1"
grep -q 'FAIL: python3 not found, and CI is set' "$TMP/out" || bad "bench.sh, CI=true: no reason given"

# topo.sh checks topo --json's node counts with python3: the same.
run - topo.sh; rc=$?
[ $rc -eq 0 ] || bad "topo.sh without python3: exit $rc, want 0 ($(grep FAIL "$TMP/out" | head -3))"
grep -q '^SKIP: python3 not found' "$TMP/out" || bad "topo.sh without python3: no SKIP line"
run true topo.sh; rc=$?
[ $rc -eq 1 ] || bad "topo.sh without python3, CI=true: exit $rc, want 1"
grep -q 'FAIL: python3 not found, and CI is set' "$TMP/out" || bad "topo.sh, CI=true: no reason given"

[ $fail -eq 0 ] && echo "cli/skip_policy: all checks passed"
exit $fail
