#!/bin/bash
# profiles.sh — every workload runs on every machine profile (issue 22): for each profile in
# profiles/ (listed, so a new one is covered without editing this), a short simulated bench,
# fio, netperf TCP_STREAM and TCP_RR exit 0 and print their figures, in each IOMMU mode for fio
# and netperf. A topology without an NVMe still gives the clear error, from the CLI and at a
# scenario's load.
# usage: bash profiles.sh <iommulab binary> <source dir>
set -u
BIN=$1
SRC=$2
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
NUM='[0-9]+(\.[0-9]+)?'
run() { # label command...: stdout of a command that must exit 0
	local out rc
	out=$("$BIN" "${@:2}" 2>&1); rc=$?
	[ $rc -eq 0 ] || bad "$1: exit $rc: $(printf '%s' "$out" | tail -2)"
	printf '%s\n' "$out"
}
want() { # label ERE text: the text must have a line matching ERE
	printf '%s\n' "$3" | grep -Eq -- "$2" || bad "$1: no line matching '$2' in: $3"
}
n=0
for f in "$SRC"/profiles/*.yaml; do
	p=$(basename "$f" .yaml)
	n=$((n + 1))
	out=$(run "$p bench" bench --engine sim --profile "$p" -t 2 --iterations 20)
	want "$p bench" "^map latency\(ns\): avg $NUM" "$out"
	want "$p bench" "^unmap latency\(ns\): avg $NUM" "$out"
	want "$p bench" "^loops 40, map errors 0" "$out"
	for m in strict lazy passthrough; do
		out=$(run "$p fio $m" fio --profile="$p" --name=fio --numjobs=2 --iodepth=4 \
			--ioengine=libaio --runtime=500us --group_reporting --iommu-mode=$m)
		want "$p fio $m" "^  read: IOPS=$NUM[kM]?, BW=" "$out"
		want "$p fio $m" "^fio: \(groupid=0, jobs=2\): err= 0: " "$out"
		want "$p fio $m" "^iommulab: simulated time, profile $(basename "$p" .yaml), device nvme.*, iommu=$m," "$out"
		out=$(run "$p TCP_STREAM $m" netperf --profile="$p" -t TCP_STREAM -l 0.001 \
			--iommu-mode=$m -- -m 64K)
		want "$p TCP_STREAM $m" "^131072  16384  65536    0\.00 +$NUM +$" "$out"
		want "$p TCP_STREAM $m" "iommu=$m, 1 queue, profile $p," "$out"
		out=$(run "$p TCP_RR $m" netperf --profile="$p" -t TCP_RR -l 0.001 \
			--iommu-mode=$m -- -r 1,1)
		want "$p TCP_RR $m" "^16384  131072 1 +1 +0\.00 +$NUM +$" "$out"
	done
done
[ $n -ge 5 ] || bad "only $n profiles found in $SRC/profiles"

# allreduce pairs each NIC with a GPU: a profile whose topology (as `iommulab topo` lists it)
# has both runs a small one; the others are refused at load, naming the missing devices.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$SRC"/profiles/*.yaml; do
	p=$(basename "$f" .yaml)
	topo=$(sed -n 's/^topology: *//p' "$f")
	devs=$("$BIN" topo --topology "$topo")
	gpus=$(printf '%s\n' "$devs" | grep -cE '^  [^ ]+ +gpu ')
	nics=$(printf '%s\n' "$devs" | grep -cE '^  [^ ]+ +nic ')
	cat >"$tmp/ar.yaml" <<-EOF
	name: ar
	seed: "004"
	title: "t"
	profile: $p
	workload: { type: allreduce }
	cases:
	  - label: a
	    params: { nics_per_node: 1, gpus_per_node: 1, iterations: 1 }
	EOF
	out=$("$BIN" run --quick --out "$tmp/out" "$tmp/ar.yaml" 2>&1); rc=$?
	if [ "$gpus" -gt 0 ] && [ "$nics" -gt 0 ]; then
		[ $rc -eq 0 ] && want "$p allreduce" "^a +algbw .* $NUM GB/s .*ran$" "$out" ||
			bad "$p allreduce: rc $rc, $out"
	else
		[ $rc -eq 2 ] && printf '%s' "$out" |
			grep -q "has $gpus GPUs and $nics NICs: the allreduce workload pairs each NIC" ||
			bad "$p allreduce without GPUs and NICs: rc $rc, '$out'"
	fi
done

# A topology without an NVMe (a test topology: every shipped one has a drive) is refused with
# one line and exit 2, by the CLI and by a scenario's load check.
mkdir "$tmp/profiles"
sed -e 's/^name: .*/name: nodrive/' \
	-e "s|^topology: .*|topology: $SRC/tests/data/topologies/24em64t-2n6c2t-pci.xml|" \
	"$SRC/profiles/kunpeng920.yaml" >"$tmp/profiles/nodrive.yaml"
err=$("$BIN" fio --profile="$tmp/profiles/nodrive.yaml" --name=x --number_ios=1 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] &&
	printf '%s' "$err" | grep -q "24em64t-2n6c2t-pci.xml has no NVMe device" ||
	bad "fio without an NVMe: rc $rc, '$err'"
sed 's/^profile: .*/profile: nodrive/' "$SRC/tests/data/scenarios/good-fio.yaml" >"$tmp/s.yaml"
err=$(IOMMULAB_DATADIR=$tmp "$BIN" run --quick --out "$tmp/out" "$tmp/s.yaml" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] && printf '%s' "$err" | grep -q "s.yaml:6:10: profile: topology .*24em64t-2n6c2t-pci.xml has no NVMe device" ||
	bad "scenario without an NVMe: rc $rc, '$err'"
exit $fail
