#!/bin/bash
# contention_seeds.sh — the line contention model's seeds from the command line
# (docs/simulation.md, "Line contention model"): with profiles/kunpeng920-contention.yaml,
# `bench --engine sim --json` run twice with one seed is byte-identical, also across processes
# (whose host addresses differ: nothing in the JSON may depend on them), and two seeds give
# different results (requests that arrive at a line's home at the same instant are ordered by
# the seed). A bad cache.contention word is a one-line error at load, exit 2.
# usage: bash contention_seeds.sh <iommulab binary> <source dir>
set -u
BIN=$1
SRC=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # seed output
	"$BIN" bench --engine sim --profile "$SRC/profiles/kunpeng920-contention.yaml" -t 128 \
		--duration-ms 3 --seed "$1" --json >"$2" 2>"$2.err" ||
		bad "bench --seed $1 failed: $(tail -1 "$2.err")"
}
run 1 "$tmp/a.json"
run 1 "$tmp/b.json"
run 1 "$tmp/c.json"
run 2 "$tmp/d.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || bad "seed 1 twice: JSON differs ($(cmp "$tmp/a.json" "$tmp/b.json"))"
cmp -s "$tmp/a.json" "$tmp/c.json" || bad "seed 1 a third time: JSON differs"
# the seed itself is in the JSON: compare what the runs did, without it
strip() { grep -v '"seed"' "$1"; }
if strip "$tmp/a.json" | cmp -s - <(strip "$tmp/d.json"); then
	bad "seeds 1 and 2 gave the same results"
fi
grep -q '"home_nodes"' "$tmp/a.json" || bad "a home run's JSON lacks the lines' home_nodes"

sed 's/^  contention: home/  contention: queue/' "$SRC/profiles/kunpeng920-contention.yaml" \
	>"$tmp/bad.yaml"
out=$("$BIN" bench --engine sim --profile "$tmp/bad.yaml" -t 1 --iterations 2 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] || bad "cache.contention: queue: rc $rc"
case $out in *"expected flat or home"*) ;; *) bad "cache.contention: queue: message '$out'";; esac
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || bad "the error is not one line: '$out'"
exit $fail
