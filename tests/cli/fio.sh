#!/bin/bash
# fio.sh — `iommulab fio`: bad options and machines without an NVMe are one line + exit 2; a
# short run prints fio's lines (IOPS, BW, clat percentiles) and valid JSON whose figures agree.
# usage: bash fio.sh <iommulab binary> <source dir>
set -u
BIN=$1
. "$2/tests/support/cli_lib.sh" # fail, bad, have
check_usage() { # want-substring args...: must exit 2 with that message on stderr
	local want=$1 out rc
	shift
	out=$("$BIN" fio "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -gt 2 ]; then
		bad "fio $* -> rc $rc, '$out'"
	elif ! printf '%s' "$out" | grep -qF -- "$want"; then
		bad "fio $*: '$out' does not say '$want'"
	fi
}
check_usage "--numjobs must be a number in 1..128" --numjobs=0
check_usage "--numjobs must be a number in 1..128" --numjobs=129
check_usage "--iodepth must be a number in 1..1023" --iodepth=1024
check_usage "--bs must be a size" --bs=3000
check_usage "--bs must be a size" --bs=4q
check_usage "--rw must be randread, randwrite, read or write" --rw=randrw
check_usage "--iommu-mode must be strict, lazy or passthrough" --iommu-mode=off
check_usage "--iommu-mode must be strict, lazy or passthrough" --iommu-mode off
check_usage "--runtime must be a time" --runtime=5h
check_usage "give --runtime or --number_ios, not both" --runtime=1ms --number_ios=5
check_usage "--ramp_time needs --runtime" --number_ios=5 --ramp_time=1ms
check_usage "--ioengine: only 'sim'" --ioengine=libaio
check_usage "unknown option '--size=1g'" --size=1g
check_usage "unexpected argument 'job.fio'" job.fio
check_usage "option '--json' takes no value" --json=1
check_usage "option '--bs' needs a value" --bs
# machines: a topology without an NVMe (a test topology: every shipped one has a drive); an
# NVMe named wrong; a profile without nvme:
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|^topology: .*|topology: $2/tests/data/topologies/24em64t-2n6c2t-pci.xml|" \
	"$2/profiles/kunpeng920.yaml" >"$tmp/nodrive.yaml"
check_usage "24em64t-2n6c2t-pci.xml has no NVMe device" --profile="$tmp/nodrive.yaml" --number_ios=1
check_usage "no NVMe device nvme9 in topology kunpeng920; its NVMe devices: nvme0" \
	--device=nvme9 --number_ios=1
sed '/^nvme:/,$d' "$2/profiles/kunpeng920.yaml" >"$tmp/nonvme.yaml"
check_usage "describes no NVMe drive" --profile="$tmp/nonvme.yaml" --number_ios=1
# a run: fio's lines, in the mode asked
out=$("$BIN" fio --name=t --numjobs=2 --iodepth=4 --bs=4k --rw=randread --runtime=2ms \
	--ramp_time=200us --iommu-mode=lazy) || bad "fio run: rc $?"
printf '%s\n' "$out" | grep -q '^t: (g=0): rw=randread, bs=(R) 4096B-4096B, ioengine=sim, iodepth=4$' ||
	bad "fio header: '$out'"
printf '%s\n' "$out" | grep -q '^t: (groupid=0, jobs=2): err= 0: iommu=lazy, device nvme0' ||
	bad "fio group line: '$out'"
printf '%s\n' "$out" | grep -Eq '^  read: IOPS=[0-9.]+[kM]?, BW=[0-9]+MiB/s' || bad "fio IOPS line: '$out'"
printf '%s\n' "$out" | grep -Eq '^     \| 50.00th=\[[0-9.]+\], 99.00th=\[[0-9.]+\], 99.90th=\[[0-9.]+\]$' ||
	bad "fio percentiles: '$out'"
"$BIN" fio --help | grep -q -- '--iommu-mode=M' || bad "fio --help"
if have python3 "fio --json"; then
	"$BIN" fio --numjobs=1 --iodepth=2 --bs=128k --rw=randwrite --number_ios=20 --json |
	python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["result"]
assert d["job"]["rw"] == "randwrite" and d["job"]["bs"] == 131072, d["job"]
assert r["ios"] == 20 and r["errors"] == 0 and r["prp_lists"] == 20, r
assert r["clat_p50_ns"] <= r["clat_p99_ns"] <= r["clat_p999_ns"] <= r["clat_max_ns"], r
assert abs(r["bw_mbps"] - r["iops"] * 131072 / 1e6) < 1e-6 * r["bw_mbps"], r
assert "sim" not in d and "cpus" in d["stats"], list(d)
' || bad "fio --json content"
fi
exit $fail
