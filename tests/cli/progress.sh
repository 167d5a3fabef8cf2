#!/bin/bash
# progress.sh — the progress line of a long simulated run (issue 28): bench --engine sim with
# an estimate of 5 s or more writes "iommulab bench: X of Y simulated s (P%), N s of host time"
# to stderr every 2 s of host time, one line each time when stderr is not a terminal; stdout
# has the result as without it. Takes 2-5 s. Not the hook itself (test_sim_model.c) nor the
# refusals (limits.sh).
# usage: bash progress.sh <iommulab binary> <source dir>
set -u
BIN=$1
. "$2/tests/support/cli_lib.sh" # fail, bad
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# 6 simulated s of one thread: estimated at 6 s of host time (docs/experiments.md)
t0=$(date +%s%N)
"$BIN" bench --engine sim -t 1 -s 6 >"$TMP/out" 2>"$TMP/err" || bad "bench -s 6: rc $?"
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q '^simulated 6\.0[0-9]* s (profile kunpeng920, seed 1)' "$TMP/out" ||
	bad "bench -s 6: no result line: $(tail -1 "$TMP/out")"
grep -q 'iommulab bench' "$TMP/out" && bad "a progress line went to stdout"
# every stderr line is a progress line, newline-terminated, no carriage return off a terminal
grep -v -E '^iommulab bench: [0-9]+\.[0-9]{3} of 6\.[0-9]{3} simulated s \([0-9]+%\), [0-9]+ s of host time$' \
	"$TMP/err" | grep -q . && bad "stderr has other lines: $(cat -A "$TMP/err" | head -3)"
grep -q $'\r' "$TMP/err" && bad "a carriage return off a terminal"
# the first line comes after 2 s of host time: a run of 3 s or more has one
if [ "$ms" -ge 3000 ] && ! [ -s "$TMP/err" ]; then
	bad "a $ms ms run printed no progress line"
fi
[ "$ms" -lt 3000 ] && echo "note: the run took $ms ms; a progress line was not required"
exit $fail
