#!/usr/bin/env bash
# topo.sh — `iommulab topo`: text and JSON output, and one-line errors with exit 2 on bad input.
# Not a check of every topology fact (tests/topo does that); run as: bash topo.sh <iommulab> <srcdir>
set -u
BIN=$1
SRC=$2
DATA=$SRC/tests/data/topologies
. "$2/tests/support/cli_lib.sh" # fail, bad, have
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

PY=1
have python3 "the node counts of topo --json" || PY=0

# JSON node count: print nr_nodes and len(nodes) from stdin.
json_nodes() {
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["nr_nodes"], len(d["nodes"]))' 2>/dev/null
}

# default topology is kunpeng920: 4 nodes
out=$("$BIN" topo --json) || bad "topo --json exited $?"
[ $PY = 0 ] || [ "$(printf '%s' "$out" | json_nodes)" = "4 4" ] || bad "topo --json: not 4 nodes"

for spec_nodes in "a100-2node:2" "$DATA/24em64t-2n6c2t-pci.xml:2" "synthetic:pack:2 numa:2 pu:2:4" "host:"; do
	spec=${spec_nodes%:*}
	want=${spec_nodes##*:}
	out=$("$BIN" topo --topology "$spec" --json) || { bad "topo --topology '$spec' --json exited $?"; continue; }
	[ $PY = 1 ] || continue
	got=$(printf '%s' "$out" | json_nodes) || { bad "'$spec': output is not JSON"; continue; }
	if [ -n "$want" ] && [ "$got" != "$want $want" ]; then bad "'$spec': nodes '$got', want $want"; fi
done

# text output names the CPU ranges and the NIC's SMMU
out=$("$BIN" topo) || bad "topo exited $?"
printf '%s\n' "$out" | grep -q '0-31' || bad "topo text: no CPU range 0-31"
printf '%s\n' "$out" | grep -q 'smmu2' || bad "topo text: no smmu2"

# bad input: exit 2, exactly one line on stderr, nothing on stdout
expect_one_line_error() {
	local what=$1; shift
	"$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 2 ] || bad "$what: exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || { bad "$what: stderr is not one line:"; cat "$tmp/err"; }
	grep -q '^iommulab\( bench\)\?: ' "$tmp/err" || bad "$what: stderr does not start with 'iommulab: ' (or 'iommulab bench: ')"
	[ ! -s "$tmp/out" ] || bad "$what: wrote to stdout"
}
expect_one_line_error "missing file" topo --topology /nonexistent.xml
grep -q 'nonexistent.xml' "$tmp/err" || bad "missing file: message does not name the file"
expect_one_line_error "truncated" topo --topology "$DATA/broken-truncated.xml"
expect_one_line_error "no NUMA" topo --topology "$DATA/broken-no-numa.xml"
expect_one_line_error "garbage" topo --topology "$DATA/broken-garbage.xml"
expect_one_line_error "distances" topo --topology "$DATA/broken-distances-diagonal.xml"
grep -q 'nonsense distances' "$tmp/err" || bad "distances: no 'nonsense distances' in message"
expect_one_line_error "unknown preset" topo --topology kunpeng921

# files that crashed libhwloc 2.9 (SIGSEGV) in topo, bench and run: now one line and exit 2
for f in broken-machine-no-complete-cpuset broken-numa-no-complete-nodeset broken-pu-no-complete-cpuset; do
	expect_one_line_error "$f" topo --topology "$DATA/$f.xml"
	grep -q 'no complete_' "$tmp/err" || bad "$f: message does not name the missing attribute"
done
expect_one_line_error "bench, no complete_cpuset" bench --topology "$DATA/broken-machine-no-complete-cpuset.xml" --iterations 1
# kunpeng920's own file with the Machine's complete_cpuset deleted: the issue's reproducer
sed '0,/ complete_cpuset="[^"]*"/s///' "$DATA/kunpeng920-2p4n128c.xml" >"$tmp/kunpeng-broken.xml"
expect_one_line_error "kunpeng920 without complete_cpuset" topo --topology "$tmp/kunpeng-broken.xml"
grep -q 'Machine object has a cpuset but no complete_cpuset' "$tmp/err" || bad "kunpeng920 without complete_cpuset: $(cat "$tmp/err")"
expect_one_line_error "PU without os_index" topo --topology "$DATA/broken-pu-no-os-index.xml"
grep -q 'PU L#0 has no os_index' "$tmp/err" || bad "PU without os_index: $(cat "$tmp/err")"

# a topology without PCI devices, when bench needs one: says how to get devices
expect_one_line_error "no devices" bench --topology 'synthetic:pack:2 numa:2 pu:2' --iterations 1
grep -q 'no PCI devices: export .*lstopo --of xml' "$tmp/err" || bad "no devices: $(cat "$tmp/err")"
expect_one_line_error "unknown device" bench --device nic9 --iterations 1
grep -q 'no device nic9 in topology kunpeng920; it has: nic0 sas0 nvme0' "$tmp/err" || bad "unknown device: $(cat "$tmp/err")"

# bad options: exit 2
"$BIN" topo --bogus >/dev/null 2>&1; rc=$?; [ $rc -eq 2 ] || bad "topo --bogus: exit $rc, want 2"
"$BIN" topo --topology >/dev/null 2>&1; rc=$?; [ $rc -eq 2 ] || bad "topo --topology (no value): exit $rc, want 2"
"$BIN" topo --help | grep -q -- '--topology' || bad "topo --help does not mention --topology"

[ $fail -eq 0 ] && echo "cli/topo: all checks passed"
exit $fail
