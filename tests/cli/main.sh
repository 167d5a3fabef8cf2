#!/usr/bin/env bash
# main.sh — the iommulab front end: help, version, command dispatch, `run` before experiments
# exist. Not the topo command (topo.sh). Run as: bash main.sh <iommulab> <srcdir>
set -u
BIN=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$BIN" --help | grep -q 'topo' || bad "--help does not list topo"
"$BIN" help | grep -q 'run' || bad "help does not list run"
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

out=$("$BIN" run); rc=$?
[ $rc -eq 0 ] || bad "run: exit $rc, want 0"
printf '%s\n' "$out" | grep -q 'not implemented' || bad "run does not say 'not implemented'"
for id in 000 001 002 003 004; do
	printf '%s\n' "$out" | grep -q "$id" || bad "run does not list experiment $id"
done
out=$("$BIN" run 004); rc=$?
[ $rc -eq 0 ] || bad "run 004: exit $rc"
[ "$(printf '%s\n' "$out" | grep -c 'not implemented')" -ge 1 ] || bad "run 004: no 'not implemented'"
printf '%s\n' "$out" | grep -q '000' && bad "run 004 also lists 000"

[ $fail -eq 0 ] && echo "cli/main: all checks passed"
exit $fail
