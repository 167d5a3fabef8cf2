#!/usr/bin/env bash
# main.sh — the iommulab front end: help, version, command dispatch, and `run` selecting
# experiments. Not the topo command (topo.sh) nor run's details (run.sh).
# Run as: bash main.sh <iommulab> <srcdir>
set -u
BIN=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$BIN" --help | grep -q 'topo' || bad "--help does not list topo"
"$BIN" help | grep -Eq '^  run ' || bad "help does not list run"
"$BIN" help topo | grep -q -- '--json' || bad "help topo does not show --json"
"$BIN" --version | grep -Eq '^iommulab [0-9]+\.[0-9]+\.[0-9]+$' || bad "--version is not 'iommulab X.Y.Z'"

for args in "frobnicate" "--bogus" "" "help nosuchcommand" "run 999"; do
	# shellcheck disable=SC2086
	"$BIN" $args >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] || bad "'iommulab $args': exit $rc, want 2"
done
err=$("$BIN" frobnicate 2>&1 >/dev/null)
printf '%s\n' "$err" | head -1 | grep -q "unknown command 'frobnicate'" || bad "unknown command: message '$err'"
# A value given to an option that takes none is not an unknown short option.
err=$("$BIN" topo --json=1 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || bad "'topo --json=1': exit $rc, want 2"
printf '%s\n' "$err" | head -1 | grep -q "option '--json' takes no value" || bad "topo --json=1: message '$err'"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Every seed runs (reduced size: this also runs under ASan) and gets its table.
out=$("$BIN" run --quick --out "$TMP/all" 2>/dev/null); rc=$?
[ $rc -eq 0 ] || bad "run: exit $rc, want 0"
for id in 000 001 002 003 004; do
	printf '%s\n' "$out" | grep -q "^seed $id " || bad "run has no table for seed $id"
done
printf '%s\n' "$out" | grep -Eq '^11 scenarios, [0-9]+ cases: [0-9]+ run, 0 not implemented yet, 0 failed' ||
	bad "run: summary line missing or some case not run"
out=$("$BIN" run --quick --out "$TMP/one" 004 2>/dev/null); rc=$?
[ $rc -eq 0 ] || bad "run 004: exit $rc"
printf '%s\n' "$out" | grep -q '^seed 004 ' || bad "run 004: no seed 004 table"
printf '%s\n' "$out" | grep -q '^seed 000 ' && bad "run 004 also ran 000"

[ $fail -eq 0 ] && echo "cli/main: all checks passed"
exit $fail
