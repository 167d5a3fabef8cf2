#!/bin/bash
# merge_schema.sh — `iommulab merge` checks each shard against the result schema before using
# it (src/report/sweep_schema.c): a field missing or of the wrong type, an unknown status, a
# shard index out of range, a case's values that are not the grid's, a figure that is not a
# number, a key given twice... each is one line naming the file and the field, exit 2, nothing
# written. Shards of another sweep name the fields that differ and both values. The unedited
# copy merges, so each refusal is the edit's.
# usage: bash merge_schema.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 not found: the shards cannot be edited"
	[ -n "${CI:-}" ] && exit 1
	exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

for i in 0 1 2; do
	"$BIN" sweep "$SRC/tests/data/sweeps/heat.yaml" --shard $i/3 -o g$i.json 2>/dev/null ||
		bad "heat shard $i/3: exit $?"
done
"$BIN" merge --no-plot good.json g0.json g1.json g2.json 2>/dev/null || bad "the unedited shards: exit $?"

# make_edit PYTHON: e1.json is g1.json (shard 1 of 3) with d edited by PYTHON
make_edit() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open("g1.json"))
exec(sys.argv[1])
json.dump(d, open("e1.json", "w"), indent=2, sort_keys=True)
PY
}
# merge_refused WANT WHAT: g0 + e1.json + g2 is refused with WANT, one line, nothing written
merge_refused() {
	local out rc
	rm -f m.json
	out=$("$BIN" merge --no-plot m.json g0.json e1.json g2.json 2>&1); rc=$?
	if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] ||
		! printf '%s' "$out" | grep -qF -- "$1"; then
		bad "$2: exit $rc, '$out' (want exit 2 and one line with '$1')"
	fi
	[ -e m.json ] && bad "$2: a refused merge wrote m.json"
}
# edit PYTHON WANT: the shard edited so is refused with WANT
edit() {
	make_edit "$1" || { bad "could not edit g1.json with: $1"; return; }
	merge_refused "$2" "$1"
}

# the control: rewritten by the same Python, unedited, it merges to the same bytes
make_edit "pass" || bad "could not rewrite g1.json"
"$BIN" merge --no-plot m.json g0.json e1.json g2.json 2>/dev/null || bad "the unedited copy: exit $?"
cmp -s m.json good.json || bad "the unedited copy merged to other bytes"

# the issue's five (28, item 5), then the other fields merge and the plots read
edit "d['cases'][0]['figures'] = 'x'" "e1.json: cases[0].figures: expected an object, got a string"
edit "del d['cases'][0]['figures']" "e1.json: cases[0].figures: missing"
edit "d['cases'][0]['status'] = 'weird'" "e1.json: cases[0].status: 'weird' is not ok, not_implemented or failed"
edit "d['shard']['index'] = 7" "e1.json: shard.index: 7 is not from 0 to 2"
edit "d['cases'][0]['values'] = ['zzz']" "e1.json: cases[0].values: 1 value for 2 axes"
edit "d['cases'][0]['values'][0] = 'zzz'" \
	"e1.json: cases[0].values: value 0 is 'zzz', but case 1 has params.threads = '1'"
edit "d['cases'][0]['figures']['unmap_ns'] = '12'" \
	"e1.json: cases[0].figures.unmap_ns: expected a number, got a string"
edit "d['cases'][0]['figures']['unmap_ns'] = [1]" "cases[0].figures.unmap_ns: expected a number, got a list"
edit "d['cases'][0]['case'] = 3" "e1.json: cases[0].case: case 3 is not in shard 1 of 3"
edit "d['cases'][0]['case'] = 9" "e1.json: cases[0].case: 9 is not from 0 to 8"
edit "d['cases'][0]['case'] = 1.0" "e1.json: cases[0].case: expected an integer, got a real number"
edit "d['cases'][0]['status'] = 'failed'" "e1.json: cases[0].message: missing"
edit "d['cases'][0]['message'] = 'hm'" "e1.json: cases[0].status: ok, with a message"
edit "d['cases'][0]['colour'] = 1" "e1.json: cases[0].colour: unknown field"
edit "d['cases'][0] = 3" "e1.json: cases[0]: expected an object, got an integer"
edit "d['extra'] = 1" "e1.json: extra: unknown field"
edit "del d['metrics']" "e1.json: metrics: missing"
edit "d['metrics'][0]['unit'] = 5" "e1.json: metrics[0].unit: expected a string, got an integer"
edit "d['quick'] = 'no'" "e1.json: quick: expected a boolean, got a string"
edit "d['seed'] = 0" "e1.json: seed: 0 is not from 1 to 9007199254740992"
edit "d['nr_cases'] = 10" "e1.json: nr_cases: 10, but the axes make 9 cases"
edit "d['nr_cases'] = 9.0" "e1.json: nr_cases: expected an integer, got a real number"
edit "d['axes'][0]['kind'] = 'foo'" "e1.json: axes[0]: kind 'foo' is not param, mechanism or profile"
edit "d['axes'][1]['values'][2] = 1600" "e1.json: axes[1]: values[2]: expected a string, got an integer"
edit "d['axes'] = []" "e1.json: axes: 0 axes, not 1 to 8"
edit "d['shard'] = {'index': 1}" "e1.json: shard.count: missing"
edit "d['shard']['count'] = 0" "e1.json: shard.count: 0 is not from 1 to 4096"
edit "d['cases'] = {}" "e1.json: cases: expected a list, got an object"
# a key given twice is not read as its last value
sed '0,/"seed": 1,/s//"seed": 1,\n  "seed": 1,/' g1.json >e1.json
merge_refused "e1.json:" "a key given twice"
grep -c '"seed"' e1.json | grep -qx 2 || bad "the duplicate-key edit did not take"

# another sweep's shard: the fields that differ, each with both values (item 6)
edit "d['seed'] = 2" "e1.json is not a shard of the sweep of g0.json: seed 1 in g0.json, 2 in e1.json"
hash=$(sed -n 's/^  "hash": "\(.*\)",$/\1/p' g0.json)
[ -n "$hash" ] || bad "no hash in g0.json"
edit "d['hash'] = 'fnv1a64:0000000000000000'; d['quick'] = True" \
	"hash \"$hash\" in g0.json, \"fnv1a64:0000000000000000\" in e1.json; quick false in g0.json, true in e1.json"
# nr_cases edited with the axes to match: both named
edit "d['axes'][0]['values'].append('8'); d['nr_cases'] = 12" "nr_cases 9 in g0.json, 12 in e1.json"
edit "d['axes'][0]['values'].append('8'); d['nr_cases'] = 12" "axes [{\"kind\":\"param\",\"path\":\"params.threads\""

[ $fail -eq 0 ] && echo "cli/merge_schema: all checks passed"
exit $fail
