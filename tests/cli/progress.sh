#!/bin/bash
# progress.sh — the progress line of a long simulated run (issue 28): bench --engine sim with
# an estimate of 5 s or more writes "iommulab bench: X of Y simulated s (P%), N s of host time"
# to stderr every 2 s of host time, one line each time when stderr is not a terminal; stdout
# has the result as without it. run, on a terminal, rewrites a line for a case that runs for
# seconds and clears it before the case's own line. Takes 5-10 s. Not the hook itself
# (test_sim_model.c) nor the refusals (limits.sh).
# usage: bash progress.sh <iommulab binary> <source dir>
set -u
BIN=$1
. "$2/tests/support/cli_lib.sh" # fail, bad, have
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

# run on a terminal (script(1) gives it one): 4e6 CMD_SYNCs, about 3 s of host time
if have script "run's progress line on a terminal"; then
	cat >"$TMP/long.yaml" <<'YAML'
name: long
seed: none
title: "t"
profile: kunpeng920
workload: { type: cmdsync_latency }
cases:
  - label: a
    params: { iterations: 4000000 }
YAML
	t0=$(date +%s%N)
	script -qec "'$BIN' run --out '$TMP/long-out' '$TMP/long.yaml'" /dev/null >"$TMP/tty" ||
		bad "run long.yaml on a terminal: rc $?"
	ms=$((($(date +%s%N) - t0) / 1000000))
	# the case's line, after the progress line is cleared (or alone, for a fast host)
	grep -aq $'\033\[K\[long 1/1\] a: done (\|^\[long 1/1\] a: done (' "$TMP/tty" ||
		bad "run: no case line: $(head -c 300 "$TMP/tty" | cat -A)"
	if [ "$ms" -ge 3000 ] &&
		! grep -aq $'\r\[long 1/1\] a: [0-9.]* simulated s, [0-9]* s of host time\033\[K' "$TMP/tty"; then
		bad "a $ms ms case showed no progress line on a terminal: $(head -c 300 "$TMP/tty" | cat -A)"
	fi
fi
exit $fail
