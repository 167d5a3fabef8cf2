#!/bin/bash
# seed.sh — one rule for the simulator's seed (issue 28): 1 .. 2^53 for bench, fio, netperf and
# run (--seed) and a sweep file (seed:); 0 and 2^53 + 1 are refused with the same line, exit 2,
# before anything runs. 2^53: result files keep seeds as exact JSON integers; not 0, which
# bench, fio and netperf accepted while run and sweep refused it (tools/cli.h, CLI_SEED_MAX).
# usage: bash seed.sh <iommulab binary> <source dir>
set -u
BIN=$1
. "$2/tests/support/cli_lib.sh" # fail, bad
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

refused() { # value command args...
	local v=$1 out rc
	shift
	out=$(timeout 20 "$BIN" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -gt 2 ]; then
		bad "$* -> rc $rc, '$out'"
	elif ! printf '%s' "$out" | head -1 |
		grep -qF -- "--seed must be a whole number from 1 to 9007199254740992, not '$v'"; then
		bad "$*: '$out'"
	fi
}
for v in 0 9007199254740993; do
	refused "$v" bench --engine sim --seed "$v" --iterations 1
	refused "$v" fio --seed="$v" --name=x --runtime=100us
	refused "$v" netperf --seed="$v" -l 0.0001
	refused "$v" run --seed "$v" 000
done
# the largest seed runs, and is the one printed
out=$("$BIN" fio --seed=9007199254740992 --name=x --runtime=100us 2>&1) || bad "fio --seed 2^53: $out"
printf '%s\n' "$out" | grep -q "seed 9007199254740992$" || bad "fio --seed 2^53 not printed: $out"
out=$("$BIN" bench --engine sim --seed 9007199254740992 --iterations 1 2>&1) ||
	bad "bench --seed 2^53: $out"
# a sweep file's seed: has the same range
printf 'name: s\nworkload: dma_map_benchmark\nprofile: kunpeng920\nseed: 0\ngrid:\n  - param: params.threads\n    values: [1]\n' >"$TMP/s.yaml"
out=$("$BIN" sweep "$TMP/s.yaml" --check 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s' "$out" | grep -qF "seed: expected a whole number from 1 to 2^53" ||
	bad "sweep seed: 0: rc $rc, '$out'"
exit $fail
