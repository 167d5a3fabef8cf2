#!/bin/bash
# bench.sh — `iommulab bench`: bad options are one line + exit 2; a short run prints the
# dma_map_benchmark tool's lines (format of tools/dma/dma_map_benchmark.c) and valid JSON.
# usage: bash bench.sh <iommulab binary> <source dir>
set -u
BIN=$1
fail=0
check_usage() { # args...: must exit 2 with a message on stderr
	local out rc
	out=$("$BIN" bench "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -ne 2 ] || [ -z "$out" ]; then echo "FAIL: bench $* -> rc $rc, '$out'"; fail=1; fi
}
check_usage -g 0
check_usage -g 1025
check_usage -t 0
check_usage -d 3
check_usage -b 19
check_usage -x 10000001
check_usage -m both
check_usage --mode fast
check_usage --map-pages maybe
check_usage --lookup sometimes
check_usage --cma local
check_usage --fq-timer never
check_usage -n 9
check_usage --device nosuchdev
check_usage --topology /nonexistent.xml
check_usage stray

out=$("$BIN" bench --duration-ms 50 -n 2 -g 2 --mode lazy) || { echo "FAIL: short run rc $?"; fail=1; }
echo "$out" | grep -Eq '^dma mapping benchmark: threads:1 seconds:[0-9]+ node:2 dir:BIDIRECTIONAL granule: 2$' \
	|| { echo "FAIL: header line: $out"; fail=1; }
echo "$out" | grep -Eq '^average map latency\(us\):[0-9]+\.[0-9] standard deviation:[0-9]+\.[0-9]$' \
	|| { echo "FAIL: map line: $out"; fail=1; }
echo "$out" | grep -Eq '^average unmap latency\(us\):[0-9]+\.[0-9] standard deviation:[0-9]+\.[0-9]$' \
	|| { echo "FAIL: unmap line: $out"; fail=1; }
json=$("$BIN" bench --duration-ms 50 -n 2 -m sg -g 4 --mode strict --lookup refcount --json) \
	|| { echo "FAIL: json run"; fail=1; }
echo "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["result"]
assert d["config"]["map_mode"] == "sg" and d["config"]["lookup"] == "refcount"
assert r["loops"] > 0 and r["map_errors"] == 0
# the kernel figure is the truncated one: never above the ns figure
assert r["avg_map_100ns"] * 100 <= r["map_ns"] + 1, r
assert d["stats"]["refcount_lookups"] == 2 * r["loops"], d["stats"]
' || { echo "FAIL: json content"; fail=1; }
exit $fail
