#!/bin/bash
# calibrate_parts.sh — measurements of parts: `calibrate --import lat_mem_rd` (lmbench) and
# `--import core-to-core-latency` (its --csv) give parts: entries, each importer refuses
# another tool's file in one line with exit 2, and `--measurements` sets the profile's
# memory and line-transfer constants from them (the median per node pair's distance),
# written in place in the fitted profile.
# usage: bash calibrate_parts.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
D=$SRC/tests/data/calibrate

"$BIN" calibrate --import lat_mem_rd "$D/lat_mem_rd.txt" --nodes 0,1 >mem.yaml 2>err ||
	bad "lat_mem_rd: exit $? ($(cat err))"
[ "$(grep -c '^  - part: memory_latency$' mem.yaml)" -eq 2 ] || bad "lat_mem_rd: not 2 entries: $(cat mem.yaml)"
grep -q "value: 117.402" mem.yaml && grep -q "value: 119.855" mem.yaml ||
	bad "lat_mem_rd: not each stride's largest array: $(cat mem.yaml)"
"$BIN" calibrate --import core-to-core-latency "$D/core-to-core-latency.csv" >c2c.yaml 2>err ||
	bad "core-to-core-latency: exit $? ($(cat err))"
[ "$(grep -c '^  - { part: line_transfer, cpus: \[[0-9], [0-9]\], value: [0-9.]*, unit: ns }$' c2c.yaml)" -eq 6 ] ||
	bad "core-to-core-latency: not 6 pairs: $(cat c2c.yaml)"
grep -q "cpus: \[3, 1\], value: 36.110" c2c.yaml || bad "core-to-core-latency: cell (3, 1) lost"

# bad files: one line, exit 2, nothing on stdout
printf ',,\n35.1,,\n' >ragged.csv
printf ',,\n35.1,4,\n3,4,\n' >diagonal.csv
printf ',x\ny,\n' >words.csv
printf '"stride=64\n0.5 1.5\nL1 hit\n' >cut.txt
for t in "lat_mem_rd $D/core-to-core-latency.csv" "lat_mem_rd cut.txt" \
	 "core-to-core-latency $D/lat_mem_rd.txt" "core-to-core-latency ragged.csv" \
	 "core-to-core-latency diagonal.csv" "core-to-core-latency words.csv" \
	 "lat_mem_rd $D/lat_mem_rd.txt"; do
	set -- $t
	n=; [ "$1" = lat_mem_rd ] && [ "$2" != "$D/lat_mem_rd.txt" ] && n="--nodes 0,0"
	"$BIN" calibrate --import "$1" "$2" $n >o.txt 2>err
	rc=$?
	[ $rc -eq 2 ] && [ "$(grep -v "^Try " err | grep -c .)" -eq 1 ] && [ ! -s o.txt ] ||
		bad "import $t: not refused in one line with exit 2 (exit $rc): $(cat err)"
done
grep -q "needs --nodes" err || bad "lat_mem_rd without --nodes: $(cat err)"

# applied: CPUs 0-31 are node 0, 32-63 node 1 (distance 16) on kunpeng920; a 64-core CSV in
# the tool's layout (lower triangle), 35 + i%3 ns within a node, 80 + i%3 across
awk 'BEGIN { for (i = 0; i < 64; i++) { s = ""; for (j = 0; j < 64; j++) {
	v = j < i ? ((int(i / 32) == int(j / 32) ? 35 : 80) + i % 3) : "";
	s = s (j ? "," : "") v } print s } }' >k64.csv
"$BIN" calibrate --import core-to-core-latency k64.csv >k64.yaml 2>err || bad "k64: $(cat err)"
{ cat mem.yaml; tail -n +4 k64.yaml; } >parts.yaml
"$BIN" calibrate kunpeng920 000 --quick --measurements parts.yaml --case cma-pernuma \
	--starts 1 --max-evals 10 -j1 --no-plot --out fit >fit.txt 2>err || bad "apply: exit $? ($(tail -1 err))"
P=fit/kunpeng920.calibrated.yaml
grep -q "^  latency_by_distance: { 16: 119, 25: 219, 32: 198, 33: 219 }" $P ||
	bad "apply: memory d16 not the median 119: $(grep latency_by_distance: $P)"
grep -q "^  local_ns: 117$" $P || bad "apply: local_ns changed: $(grep '  local_ns' $P)"
grep -q "^  transfer_local_ns: 36$" $P || bad "apply: transfer_local_ns not 36: $(grep transfer_local_ns: $P)"
grep -q "^  transfer_by_distance: { 16: 81, 25: 290" $P ||
	bad "apply: transfer d16 not 81: $(grep transfer_by_distance: $P)"
grep -q "measured parts (set, not fitted): memory.latency_by_distance.16=119 (median of 2), cache.transfer_local_ns=36 (median of 992), cache.transfer_by_distance.16=81 (median of 1024)" fit.txt ||
	bad "apply: the report does not name the parts: $(grep -i parts fit.txt)"
# a node the machine does not have: one line, exit 2
"$BIN" calibrate --import lat_mem_rd "$D/lat_mem_rd.txt" --nodes 0,9 >m9.yaml
"$BIN" calibrate kunpeng920 000 --quick --measurements m9.yaml --no-plot --out f9 >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c . err)" -eq 1 ] && grep -q "m9.yaml:4:5: part 1: node 9 does not exist" err ||
	bad "node 9: exit $rc: $(cat err)"

[ $fail -eq 0 ] && echo "cli/calibrate_parts: all checks passed"
exit $fail
