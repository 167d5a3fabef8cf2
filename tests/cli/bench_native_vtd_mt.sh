#!/bin/bash
# bench_native_vtd_mt.sh — `iommulab bench --engine native --iommu vtd`: the native engine
# assembles a VT-d machine (the x86 topology, its DMAR units, each served by an agent thread,
# the VT-d driver probed on them) and real threads map and unmap through it. Labelled threads
# (the name's _mt): CI also runs it against the TSan build. Figures are printed, never judged
# (a native latency is the host's); what is checked is what the run did.
# usage: bash bench_native_vtd_mt.sh <iommulab binary> <source dir>
set -u
BIN=$1
. "$2/tests/support/cli_lib.sh" # fail, bad, have

# The issue-20 acceptance command, shortened: a native strict run prints the tool's figures
# on icelake-2s-a100's topology.
out=$("$BIN" bench --engine native --iommu vtd -t 1 -g 1 --mode strict --iterations 200 2>&1) ||
	bad "native --iommu vtd strict: exit $?: $out"
echo "$out"
for want in '^average map latency(us):' '^unmap latency(ns): avg ' \
	'topology icelake-2s-a100' '^loops 200, map errors 0, iotlb syncs 200,'; do
	printf '%s\n' "$out" | grep -q -- "$want" || bad "native --iommu vtd lacks '$want'"
done

# Two threads, strict and lazy, --json: the unit is a VT-d one, and its driver did the work
# the mode implies (a strict unmap is one page-selective invalidation, submitted and waited
# for; lazy mode invalidates domain-wide from the flush queue).
if have python3 "the native VT-d run's JSON"; then
	for mode in strict lazy; do
		"$BIN" bench --engine native --iommu vtd -t 2 -g 4 --mode $mode --iterations 300 \
			--json >"${TMPDIR:-/tmp}/bnv.$$.json" || bad "native --iommu vtd $mode --json"
		python3 - "${TMPDIR:-/tmp}/bnv.$$.json" $mode <<'PY' || bad "native VT-d $mode JSON"
import json, sys
d = json.load(open(sys.argv[1]))
mode = sys.argv[2]
c, r, u = d["config"], d["result"], d["iommu"]
assert c["engine"] == "native" and c["topology"] == "icelake-2s-a100", c
assert r["loops"] == 600 and r["map_errors"] == 0, r
assert u["arch"] == "vtd", u
drv = u["driver"]
if mode == "strict":
    # one PSI per unmap, each in its own qi_submit_sync (+ probe's global invalidations)
    assert drv["iotlb_psi"] == 600 and drv["qi_submits"] >= 600, drv
else:
    assert drv["iotlb_psi"] == 0 and drv["iotlb_dsi"] >= 1, drv
assert u["model"]["iq_errors"] == 0 and u["model"]["faults"] == 0, u["model"]
PY
	done
	rm -f "${TMPDIR:-/tmp}/bnv.$$.json"
fi

# --topology with --iommu: that topology's units, all VT-d (a100-2node's are SMMUv3 otherwise)
out=$("$BIN" bench --engine native --iommu vtd --topology a100-2node -t 1 --iterations 50 --json) ||
	bad "native --iommu vtd --topology a100-2node: exit $?"
printf '%s' "$out" | grep -q '"arch": "vtd"' || bad "a100-2node with --iommu vtd: no VT-d unit"
exit $fail
