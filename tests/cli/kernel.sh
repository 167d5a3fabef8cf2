#!/bin/bash
# kernel.sh — `iommulab bench --kernel` and the scenarios' kernel: key: a bad version is one line
# and exit 2 (bench) or file:line:column (scenario); for each row of the era table
# (docs/kernel-eras.md) the simulated figures of the release before it and of its release
# differ where the row changes something the benchmark can see, and are equal where it does not.
# usage: bash kernel.sh <iommulab binary> <source dir>
set -u
BIN=$1
SRC=$2
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for v in '' 5 5.a 05.4 4.13 4.21 5.20 8.0 5.4.1 latest2; do
	out=$("$BIN" bench --engine sim --kernel "$v" 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] && echo "$out" | grep -q -- '--kernel: ' ||
		bad "bench --kernel '$v': rc $rc, '$out'"
done

# figs ARGS...: "map_ns unmap_ns loops iova-misses" of one simulated run
figs() {
	"$BIN" bench --engine sim "$@" | awk '
		/^map latency\(ns\)/ { m = $4 } /^unmap latency\(ns\)/ { u = $4 }
		/^loops/ { l = $2; for (i = 1; i <= NF; i++) if ($i == "misses") x = $(i + 1) }
		END { print m, u, l, x }'
}
# pair WHAT DIFFER|SAME A B ARGS...: --kernel A and --kernel B give different/equal figures
pair() {
	local what=$1 want=$2 a=$3 b=$4 fa fb
	shift 4
	fa=$(figs --kernel "$a" "$@") || bad "$what: bench --kernel $a $* failed"
	fb=$(figs --kernel "$b" "$@") || bad "$what: bench --kernel $b $* failed"
	case $want in
	DIFFER) [ "$fa" != "$fb" ] || bad "$what: $a and $b give the same figures ($fa): $*" ;;
	SAME) [ "$fa" = "$fb" ] || bad "$what: $a ($fa) and $b ($fb) differ: $*" ;;
	esac
	echo "$what: $a [$fa] vs $b [$fb]"
}
STRICT16="-t 16 -n 2 --iterations 1000"
pair cmdq DIFFER 5.3 5.4 $STRICT16
# range invalidation needs an SMMU with IDR3.RIL: kunpeng920's has none (same figures there)
sed 's/^  range_invalidation: false/  range_invalidation: true/' "$SRC/profiles/kunpeng920.yaml" \
	> "$TMP/ril.yaml"
grep -q '^  range_invalidation: true' "$TMP/ril.yaml" || bad "could not make a profile with RIL"
pair ril DIFFER 5.6 5.7 --profile "$TMP/ril.yaml" -t 1 -n 2 -g 16 --map-pages on --iterations 300
pair ril-none SAME 5.6 5.7 -t 1 -n 2 -g 16 --map-pages on --iterations 300
pair map_pages DIFFER 5.14 5.15 -t 1 -n 2 -g 16 --iterations 300
pair map_pages-given SAME 5.14 5.15 -t 1 -n 2 -g 16 --iterations 300 --map-pages on
pair mag_size DIFFER 5.19 6.0 --mode lazy -t 32 -n -1 --iterations 5000
pair sac_latch SAME 6.4 6.5 $STRICT16 # the 32-bit space never runs out here
# one shared flush queue frees thousands of IOVAs on one CPU: the fixed depot overflows
# (scenarios/iova-depot-collapse.yaml); per-CPU queues, as here before, no longer do
pair depot DIFFER 6.6 6.7 --mode lazy --fq single -t 16 -n -1 --iterations 3000
pair fq_kind SAME 6.6 6.7 --mode lazy -t 32 -n -1 --iterations 2000 # depot too, unseen here
pair ste_writer SAME 6.8 6.9 $STRICT16 # set-up only
pair split SAME 6.12 6.13 $STRICT16    # dma-iommu never unmaps part of a block
pair fair_lock SAME 6.19 7.0 $STRICT16 # starves only near a full queue (test_smmuv3_drv_cmdq_fair)
# the bench switches win over the kernel's
pair depot-given SAME 6.6 6.7 --mode lazy --fq single -t 16 -n -1 --iterations 3000 --iova-depot list
out=$("$BIN" bench --engine sim --kernel 6.19 -t 1 --iterations 10 --json)
echo "$out" | grep -q '"cmdq_lock": "shared"' || bad "bench --kernel 6.19: not the old cmdq lock"
out=$("$BIN" bench --engine sim -t 1 --iterations 10 --json)
echo "$out" | grep -q '"cmdq_lock": "fair"' || bad "bench (latest): not the fair cmdq lock"
out=$("$BIN" bench --engine sim --kernel 6.6 -t 1 --iterations 10 --json)
echo "$out" | grep -q '"iova_depot": "fixed32"' || bad "bench --kernel 6.6: not the fixed depot"
# the VT-d driver's invalidation hint (vtd_ih, 6.19): dropped before, so no PSI carries IH
ih() {
	"$BIN" bench --engine sim --profile icelake-2s-a100 --kernel "$1" -t 1 --iterations 20 \
		--json | grep -o '"psi_ih": *[0-9]*' | grep -o '[0-9]*$'
}
[ "$(ih 6.18)" = 0 ] || bad "bench --kernel 6.18 on VT-d: IH reached $(ih 6.18) PSIs"
[ "$(ih 6.19)" = 20 ] || bad "bench --kernel 6.19 on VT-d: $(ih 6.19) PSIs with IH, not 20"
pair latest SAME latest 7.0 $STRICT16
out=$("$BIN" bench --engine sim $STRICT16)
echo "$out" | grep -q 'kernel latest' || bad "bench without --kernel does not say 'kernel latest'"
out=$("$BIN" bench --engine sim --kernel 5.10 -t 1 --iterations 10 --json)
echo "$out" | grep -q '"kernel": "5.10"' || bad "bench --json does not name the kernel"

# issue 32's rows. CMD_SYNC: 4.14 polls CONS under the lock, 4.15-4.19 insert every CMD_SYNC
# with a number taken before the lock, 4.20 merges back-to-back ones
pair sync_msi DIFFER 4.14 4.15 $STRICT16
pair sync_order DIFFER 4.19 4.20 $STRICT16
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# 4.15-4.19 had no last-opcode field: a command's hold of the queue lock writes the lock's
# line three times (ticket, software prod, unlock); 4.20 also stores the opcode (and sync_nr)
lockw() {
	"$BIN" bench --engine sim --kernel "$1" -t 1 --iterations 100 --json | jget \
	"d['sim']['lines']['smmu.cmdq.legacy_lock']['acquisitions'], d['iommu']['driver']['cmds']"
}
read -r w c <<<"$(lockw 4.19)"
[ "$w" -eq $((3 * c)) ] || bad "bench --kernel 4.19: $w writes of the lock line for $c commands"
read -r w c <<<"$(lockw 4.20)"
[ "$w" -gt $((3 * c)) ] || bad "bench --kernel 4.20: $w writes of the lock line for $c commands"
# refcounted domain lookup up to 4.18, the fast one from 4.19; --lookup wins, said as such
out=$("$BIN" bench --engine sim --kernel 4.14 -t 1 --iterations 10 --json)
[ "$(echo "$out" | jget "d['config']['lookup'], d['stats']['refcount_lookups'] > 0")" = \
  "refcount True" ] || bad "bench --kernel 4.14 --json: not the refcounted lookup"
# the refcount is where Linux keeps it, group->devices_kobj: a line of its own (not the group
# mutex's), read (kobject_get/put's state_initialized check) before each of its two atomics
out=$("$BIN" bench --engine sim --kernel 4.18 -t 4 --iterations 100 --json)
[ "$(echo "$out" | jget "sorted(k for k in d['sim']['lines'] if 'iommu_group' in k), \
d['sim']['lines']['iommu_group.devices_kobj']['reads'] == 2 * d['stats']['refcount_lookups']")" = \
  "['iommu_group.devices_kobj', 'iommu_group.mutex'] True" ] ||
	bad "bench --kernel 4.18: the lookup's kobject is not a line of its own read per get/put"
out=$("$BIN" bench --engine sim --kernel 4.19 -t 1 --iterations 10 --json)
[ "$(echo "$out" | jget "d['config']['lookup'], 'kernel_overrides' in d['config']")" = \
  "direct False" ] || bad "bench --kernel 4.19 --json: not the direct lookup, or an override"
out=$("$BIN" bench --engine sim --kernel 4.18 --lookup direct -t 1 --iterations 10 --json)
[ "$(echo "$out" | jget "d['config']['lookup'], d['config']['kernel_overrides']['lookup']['as']")" \
  = "direct backport" ] || bad "bench --kernel 4.18 --lookup direct: not marked a backport"
out=$("$BIN" bench --engine sim --kernel 4.18 --lookup direct -t 1 --iterations 10)
echo "$out" | grep -q "kernel 4.18 has refcount domain lookup; --lookup direct runs 4.19's" ||
	bad "bench --kernel 4.18 --lookup direct: the text does not say so"
# SMMUv3 lazy mode before 4.20 runs only as a backport, said in the text and the JSON
out=$("$BIN" bench --engine sim --kernel 4.19 --mode lazy -t 1 --iterations 10 --json)
[ "$(echo "$out" | jget "d['config']['mode'], d['config']['kernel_overrides']['mode']['as']")" = \
  "lazy backport" ] || bad "bench --kernel 4.19 --mode lazy --json: not marked a backport"
out=$("$BIN" bench --engine sim --kernel 4.19 --mode lazy -t 1 --iterations 10)
echo "$out" | grep -q "4.19's SMMUv3 driver is strict only.*as a backport" ||
	bad "bench --kernel 4.19 --mode lazy: the text does not say it is a backport"
out=$("$BIN" bench --engine sim --kernel 4.20 --mode lazy -t 1 --iterations 10)
echo "$out" | grep -q "backport" && bad "bench --kernel 4.20 --mode lazy: called a backport"
# ... but VT-d had its deferred flush long before
out=$("$BIN" bench --engine sim --profile icelake-2s-a100 --kernel 4.19 --mode lazy -t 1 \
	--iterations 10)
echo "$out" | grep -q "backport" && bad "bench --kernel 4.19 --mode lazy on VT-d: a backport"
# VT-d's invalidation hint reaches the queued PSI from 6.19 (dropped before)
ih() {
	"$BIN" bench --engine sim --profile icelake-2s-a100 -t 2 --iterations 50 --kernel "$1" \
		--json | jget "d['iommu']['driver']['psi_ih']"
}
[ "$(ih 6.18)" = 0 ] && [ "$(ih 6.19)" -gt 0 ] ||
	bad "VT-d IH: 6.18 $(ih 6.18) PSIs with IH, 6.19 $(ih 6.19)"
# seed 001's lazy case: the non-strict series on 4.18, said as a backport (JSON and table)
"$BIN" run --quick --json --out "$TMP/s1" seed001-domain-lookup > /dev/null ||
	bad "run seed001-domain-lookup failed"
[ "$(jget "[c['label'] for c in d['cases'] if c.get('backport') == 'non_strict']" \
   < "$TMP/s1/seed001-domain-lookup.json")" = "['direct-lazy']" ] ||
	bad "seed 001: the backport is not direct-lazy's alone"
"$BIN" run --quick --out "$TMP/s1t" seed001-domain-lookup | grep -q \
	"^backport: direct-lazy runs 4.20's SMMUv3 non-strict" || bad "seed 001: no backport line"

# a scenario's kernel sets the lookup when the file does not: refcount on 4.18, direct on
# 4.19; a case's lookup: wins (the figures follow: the refcount's two atomics per call)
cat > "$TMP/lookup.yaml" <<'EOF2'
name: lookup-era
seed: none
title: "lookup by era"
profile: kunpeng920
engine: sim
kernel: "4.18"
workload:
  type: dma_map_benchmark
  params: { iterations: 3, node: 2, smmu_node: 2, threads: 2 }
cases:
  - label: era
  - label: given
    mechanisms: { lookup: direct }
  - label: newer
    kernel: "4.19"
EOF2
"$BIN" run --quick --json --out "$TMP/lk" "$TMP/lookup.yaml" > /dev/null 2>&1 ||
	bad "run lookup.yaml failed"
[ "$(jget "[(c['mechanisms']['lookup'], c['figures']['map_ns']['value'] > 180) for c in d['cases']]" \
   < "$TMP/lk/lookup-era.json")" = \
  "[('refcount', True), ('direct', False), ('direct', False)]" ] ||
	bad "scenario lookup by kernel: $(jget "[c['mechanisms'] for c in d['cases']]" \
	    < "$TMP/lk/lookup-era.json")"

# VT-d: its driver has only map_pages, which an era before 5.15 leaves it
out=$("$BIN" bench --engine sim --profile icelake-2s-a100 -t 2 --iterations 50 --kernel 5.10) &&
	echo "$out" | grep -q 'kernel 5.10, mode strict, map-pages on' ||
	bad "bench --kernel 5.10 on VT-d: '$out'"

# scenario files: kernel: at scenario and case level, bad ones refused with file:line:column
sed 's/^kernel: .*/kernel: "5.a"/' "$SRC/scenarios/seed000-cmdsync.yaml" > "$TMP/bad1.yaml"
grep -q '^kernel: "5.a"' "$TMP/bad1.yaml" || bad "seed000-cmdsync.yaml has no kernel: line to replace"
out=$("$BIN" run --quick --out "$TMP/o" "$TMP/bad1.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "bad1.yaml:[0-9]*:[0-9]*: kernel: '5.a' is not a version" ||
	bad "scenario kernel: 5.a: rc $rc, '$out'"
awk '/^  - label:/ && !done { print; print "    kernel: 4.13"; done = 1; next } { print }' \
	"$SRC/scenarios/seed000-cmdsync.yaml" > "$TMP/bad2.yaml"
out=$("$BIN" run --quick --out "$TMP/o" "$TMP/bad2.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "bad2.yaml:[0-9]*:[0-9]*: kernel: 4.13 is not a Linux release" ||
	bad "case kernel: 4.13: rc $rc, '$out'"
exit $fail
