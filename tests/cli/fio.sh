#!/bin/bash
# fio.sh — `iommulab fio`: fio's command lines and job files ([global], two jobs, include,
# ${VAR}, fio's units) run; bad options and unsupported ones are one line naming the option +
# exit 2; the normal output has fio's lines, the JSON fio's shape with figures that agree with
# each other (KiB/s, the default percentile list); --output writes the file whole; runtime is
# not capped at 10 simulated seconds. (The key sets against the real fio: fio_real.sh.)
# usage: bash fio.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
check_usage "option 'numjobs': '0' must be a number in 1..128" --name=x --numjobs=0
check_usage "option 'numjobs': '129' must be a number in 1..128" --name=x --numjobs=129
check_usage "option 'iodepth': '1024' must be a number in 1..1023" --name=x --iodepth=1024
check_usage "option 'bs': '3000' must be a size" --name=x --bs=3000
check_usage "option 'bs': '4q' must be a size" --name=x --bs=4q
check_usage "option 'rw': 'randrw': the model runs randread, randwrite, read or write" \
	--name=x --rw=randrw
check_usage "--iommu-mode must be strict, lazy or passthrough" --name=x --iommu-mode=off
check_usage "--iommu-mode must be strict, lazy or passthrough" --name=x --iommu-mode off
check_usage "option 'runtime': '5x' must be a time" --name=x --runtime=5x
check_usage "give runtime or number_ios, not both" --name=x --runtime=1ms --number_ios=5
check_usage "ramp_time needs runtime" --name=x --number_ios=5 --ramp_time=1ms
check_usage "option 'ioengine': 'null'" --name=x --ioengine=null
check_usage "option 'direct': '0': the model has no page cache" --name=x --direct=0
check_usage "option 'hipri' is not supported" --name=x --hipri
check_usage "option 'bogus' is not supported" --name=x --bogus=1
check_usage "size and runtime without time_based" --name=x --size=1m --runtime=1
check_usage "no job: give --name=NAME" --bs=4k
check_usage "cannot read job file nosuch.fio" nosuch.fio
check_usage "--output-format must be normal, json or json+" --name=x --output-format=terse
check_usage "--output: " --name=x --number_ios=1 --output="$tmp"
printf '[a]\nrw=read\n[b\n' >badsec.fio
check_usage "badsec.fio:3: a section is [name]" badsec.fio
printf '[a]\ninclude inc-sec.fio\n' >incsec.fio
printf '[c]\n' >inc-sec.fio
check_usage "inc-sec.fio:1: an included file may not have sections" incsec.fio
# machines: a topology without an NVMe (a test topology: every shipped one has a drive); an
# NVMe named wrong; a profile without nvme:
sed "s|^topology: .*|topology: $SRC/tests/data/topologies/24em64t-2n6c2t-pci.xml|" \
	"$SRC/profiles/kunpeng920.yaml" >nodrive.yaml
check_usage "24em64t-2n6c2t-pci.xml has no NVMe device" --profile=nodrive.yaml --name=x \
	--number_ios=1
check_usage "no NVMe device nvme9 in topology kunpeng920; its NVMe devices: nvme0" \
	--device=nvme9 --name=x --number_ios=1
sed '/^nvme:/,$d' "$SRC/profiles/kunpeng920.yaml" >nonvme.yaml
check_usage "describes no NVMe drive" --profile=nonvme.yaml --name=x --number_ios=1

# a command line: fio's lines, one report per job without group_reporting, one with
out=$("$BIN" fio --name=t --numjobs=2 --iodepth=4 --bs=4k --rw=randread --ioengine=libaio \
	--runtime=2ms --ramp_time=200us --iommu-mode=lazy) || bad "fio run: rc $?"
printf '%s\n' "$out" | grep -q '^t: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=4$' ||
	bad "fio header: '$out'"
[ "$(printf '%s\n' "$out" | grep -c '^t: (groupid=0, jobs=1): err= 0: ')" = 2 ] ||
	bad "fio: two jobs without group_reporting are two reports: '$out'"
printf '%s\n' "$out" | grep -Eq '^  read: IOPS=[0-9.]+[kM]?, BW=[0-9.]+[KMG]iB/s \([0-9.]+[kMG]B/s\)\([0-9.]+[KMG]iB/2msec\)$' ||
	bad "fio IOPS line: '$out'"
printf '%s\n' "$out" | grep -Eq '^     \|  1\.00th=\[ *[0-9]+\],  5\.00th=\[ *[0-9]+\], 10\.00th=\[ *[0-9]+\], 20\.00th=\[ *[0-9]+\],$' ||
	bad "fio percentiles (fio's default list): '$out'"
printf '%s\n' "$out" | grep -Eq '^     \| 99\.99th=\[ *[0-9]+\]$' || bad "fio 99.99th: '$out'"
printf '%s\n' "$out" | grep -Eq '^   READ: bw=.*, run=2-2msec$' || bad "fio run status: '$out'"
out=$("$BIN" fio --name=t --numjobs=2 --rw=randwrite --runtime=1ms --group_reporting) ||
	bad "fio group_reporting: rc $?"
[ "$(printf '%s\n' "$out" | grep -c '^t: (groupid=0, jobs=2): err= 0: ')" = 1 ] ||
	bad "fio: group_reporting is one report of 2 jobs: '$out'"
"$BIN" fio --help | grep -q -- '--output-format=F' || bad "fio --help"

# a job file as fio's HOWTO writes them: global section, include, two jobs, units, ${VAR}
cat >inc.fio <<'EOT'
iodepth=2
EOT
cat >two.fio <<'EOT'
; a global section and two jobs
[global]
ioengine=libaio
direct=1
bs=4k
include inc.fio

[reader]
rw=randread
size=${ILAB_TEST_SIZE}

# the second job
[writer]
rw=write
bs=8Ki
size=256KiB
kb_base=1000
EOT
if have python3 "fio's JSON figures"; then
	ILAB_TEST_SIZE=128k "$BIN" fio --output-format=json+ --output=two.json two.fio >stdout.txt ||
		bad "fio job file: rc $?"
	[ -s stdout.txt ] && bad "fio --output: stdout not empty: $(cat stdout.txt)"
	python3 - two.json <<'EOT' || bad "fio job file JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["fio version"] == "fio-3.33", d["fio version"]
assert d["global options"] == {"ioengine": "libaio", "direct": "1", "bs": "4k", "iodepth": "2"}, d["global options"]
r, w = d["jobs"]
assert r["jobname"] == "reader" and w["jobname"] == "writer", (r["jobname"], w["jobname"])
# size/bs I/Os each: 128k / 4k; with kb_base=1000 256KiB is 262144 bytes and 8Ki 8192
assert r["read"]["total_ios"] == 32 and r["write"]["total_ios"] == 0, r["read"]["total_ios"]
assert w["write"]["total_ios"] == 32 and w["read"]["total_ios"] == 0, w["write"]
assert r["job options"]["size"] == "128k", r["job options"]
for j, x in ((r, r["read"]), (w, w["write"])):
    ms = x["runtime"]
    assert abs(x["bw"] - x["iops"] * x["io_bytes"] / x["total_ios"] / 1024) <= 1, x  # KiB/s
    assert x["io_kbytes"] == x["io_bytes"] >> 10, x
    c = x["clat_ns"]
    assert c["N"] == x["total_ios"] and x["lat_ns"]["N"] == c["N"] and x["slat_ns"]["N"] == c["N"], x
    p = [float(k) for k in c["percentile"]]
    assert p == [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99], p
    v = list(c["percentile"].values())
    assert v == sorted(v) and c["min"] <= v[0] and v[-1] <= c["max"], c
    assert sum(c["bins"].values()) == c["N"], c["bins"]
    assert x["lat_ns"]["mean"] > c["mean"] > 0, x
    assert abs(sum(j["iodepth_level"].values()) - 100) < 1e-6, j["iodepth_level"]
    il = j["iodepth_level"]  # iodepth=2 from the include: 1 or 2 in flight
    assert il["2"] > 0 and abs(il["1"] + il["2"] - 100) < 1e-6, il
    lat = [v for k in ("latency_ns", "latency_us", "latency_ms") for v in j[k].values()]
    assert abs(sum(lat) - 100) < 1e-6, lat
    assert 0 < j["sys_cpu"] <= 100 and j["usr_cpu"] == 0, j
EOT
	# percentile_list, and the sync engines' one I/O in flight
	"$BIN" fio --name=p --ioengine=psync --iodepth=8 --number_ios=50 \
		--percentile_list=50:99 --output-format=json | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
assert list(j["read"]["clat_ns"]["percentile"]) == ["50.000000", "99.000000"], j["read"]["clat_ns"]
assert j["iodepth_level"]["1"] == 100 and j["read"]["slat_ns"]["N"] == 0, j
' || bad "fio percentile_list / psync"
fi
# runtime in seconds, past the former 10-second cap (a drive-bound job: few I/Os to simulate)
out=$("$BIN" fio --name=long --bs=2m --rw=read --runtime=11 2>/dev/null) || bad "fio --runtime=11: rc $?"
printf '%s\n' "$out" | grep -Eq '^  read: .*/11000msec\)$' || bad "fio --runtime=11: '$out'"
exit $fail
