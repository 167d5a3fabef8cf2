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
check_usage "option 'rw': 'trimwrite': the model does not run fio's trim-then-write pairs" \
	--name=x --rw=trimwrite
check_usage "job 'x': trims of varying sizes (bsrange, bssplit) are not modelled" \
	--name=x --rw=randtrim --bsrange=4k-8k
check_usage "option 'rw': 'readwrit': the model runs randread, randwrite, read, write, rw" \
	--name=x --rw=readwrit
check_usage "option 'rwmixread': '101' must be a percentage" --name=x --rw=randrw --rwmixread=101
check_usage "option 'bs': '4k-8k': fio reads only the size before '-'" --name=x --bs=4k-8k
check_usage "option 'bs': '4k,3000' must be a size" --name=x --bs=4k,3000
check_usage "option 'bsrange': '8k-4k' must be MIN-MAX" --name=x --bsrange=8k-4k
check_usage "option 'bsrange': '4k' must be MIN-MAX" --name=x --bsrange=4k
check_usage "option 'bssplit': '4k/60:8k/60' must be SIZE/PERCENT" --name=x --bssplit=4k/60:8k/60
check_usage "option 'bssplit': '4k/10:1000/90' must be SIZE/PERCENT" --name=x --bssplit=4k/10:1000/90
check_usage "option 'bssplit': '4k/x' must be SIZE/PERCENT" --name=x --bssplit=4k/x
check_usage "option 'cpus_allowed': '3-1' must be CPUs and ranges" --name=x --cpus_allowed=3-1
check_usage "option 'cpus_allowed': '0,a' must be CPUs and ranges" --name=x --cpus_allowed=0,a
check_usage "option 'cpus_allowed_policy': 'spread' must be shared or split" --name=x \
	--cpus_allowed_policy=spread
check_usage "job 'x': cpus_allowed gives 1 CPUs for more jobs" --name=x --numjobs=2 \
	--cpus_allowed=4
check_usage "cannot place 1 jobs on CPUs given (the machine has 128)" --name=x --number_ios=1 \
	--cpus_allowed=500
check_usage "--iommu-mode must be strict, lazy or passthrough" --name=x --iommu-mode=off
check_usage "--iommu-mode must be strict, lazy or passthrough" --name=x --iommu-mode off
check_usage "option 'runtime': '5x' must be a time" --name=x --runtime=5x
check_usage "give runtime or number_ios, not both" --name=x --runtime=1ms --number_ios=5
check_usage "ramp_time needs runtime" --name=x --number_ios=5 --ramp_time=1ms
check_usage "option 'ioengine': 'null'" --name=x --ioengine=null
check_usage "option 'direct': '0': the model has no page cache" --name=x --direct=0
check_usage "option 'hipri' is io_uring's and pvsync2's, not libaio's" --name=x --hipri \
	--ioengine=libaio
check_usage "option 'hipri': '2' must be 0 or 1" --name=x --hipri=2 --ioengine=io_uring
check_usage "option 'verify' is not supported" --name=x --verify=md5
check_usage "option 'bogus' is not supported" --name=x --bogus=1
check_usage "size and runtime without time_based" --name=x --size=1m --runtime=1
check_usage "no job: give --name=NAME" --bs=4k
check_usage "cannot read job file nosuch.fio" nosuch.fio
check_usage "--output-format must be normal, json, json+ or terse" --name=x --output-format=xml
check_usage "--terse-version: iommulab writes fio's terse version 3 only, not '2'" --name=x \
	--output-format=terse --terse-version=2
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
# --nr-queues: the controller's queues; CPUs 0-7 in groups of 16 (8 queues over 128 CPUs)
# share one, and its vector's CPU 0 runs the completion work of all eight
check_usage "--nr-queues must be a whole number from 1 to 65535" --nr-queues=0 --name=q
check_usage "--nr-queues must be a whole number from 1 to 65535" --nr-queues=x --name=q
# --kernel: the era (docs/kernel-eras.md), said on the machine line; a release it does not know
# is one line + exit 2
check_usage "--kernel: 5.20 is not a Linux release from 4.14 to 7.x (or latest)" --kernel=5.20 --name=q
check_usage "--kernel: 'x' is not a version" --kernel x --name=q
out=$("$BIN" fio --kernel 5.15 --name=k --rw=randread --number_ios=20 2>/dev/null)
printf '%s\n' "$out" | grep -q 'iommu=strict, kernel 5\.15, seed 1$' || bad "fio --kernel 5.15: '$out'"
own=$("$BIN" fio --name=q --numjobs=8 --iodepth=32 --ioengine=libaio --runtime=2ms --group_reporting) ||
	bad "fio own queues: rc $?"
shared=$("$BIN" fio --nr-queues 8 --name=q --numjobs=8 --iodepth=32 --ioengine=libaio --runtime=2ms --group_reporting) ||
	bad "fio --nr-queues 8: rc $?"
[ "$(printf '%s\n' "$own" | grep 'sys=')" != "$(printf '%s\n' "$shared" | grep 'sys=')" ] ||
	bad "fio --nr-queues 8 changes nothing: '$shared'"

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
# trims: Dataset Management commands, reported in fio's trim section (JSON, the same keys as
# read's) and its `trim:` and `TRIM:` lines, reads and writes 0; rw=trim is sequential
if have python3 "fio's trim JSON"; then
	"$BIN" fio --name=t --ioengine=libaio --iodepth=8 --rw=randtrim --bs=8k --number_ios=200 \
		--output-format=json | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
t, r, w = j["trim"], j["read"], j["write"]
assert t["iops"] > 0 and t["total_ios"] == 200 and t["io_bytes"] == 200 * 8192, t
assert r["iops"] == 0 and w["iops"] == 0 and r["total_ios"] == 0 and w["total_ios"] == 0, (r, w)
assert t["clat_ns"]["N"] == 200 and t["slat_ns"]["N"] == 200, t
assert set(t) == set(r), set(t) ^ set(r)
' || bad "fio randtrim JSON"
fi
out=$("$BIN" fio --name=t --ioengine=libaio --rw=trim --number_ios=20) || bad "fio trim: rc $?"
printf '%s\n' "$out" | grep -q '^  trim: IOPS=' || bad "fio trim: no trim: line: $out"
printf '%s\n' "$out" | grep -q '^   TRIM: bw=' || bad "fio trim: no TRIM: status line: $out"
printf '%s\n' "$out" | grep -q 'issued rwts: total=0,0,20,0 ' || bad "fio trim: issued: $out"
printf '%s\n' "$out" | grep -qE '^  (read|write):' && bad "fio trim: a read/write line: $out"
# mixes: both directions reported, each I/O's direction drawn by rwmixread (rwmixwrite, the
# later, overrides it), per-direction bs; bssplit and bsrange sizes; the run status has both
out=$("$BIN" fio --name=m --ioengine=libaio --rw=randrw --rwmixread=70 --bs=4k,64k \
	--iodepth=4 --number_ios=1000) || bad "fio randrw: rc $?"
printf '%s\n' "$out" | grep -q '^m: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 64.0KiB-64.0KiB, (T) 64.0KiB-64.0KiB, ioengine=libaio, iodepth=4$' ||
	bad "fio randrw header: '$out'"
printf '%s\n' "$out" | grep -Eq '^  read: IOPS=' && printf '%s\n' "$out" | grep -Eq '^  write: IOPS=.*; 0 zone resets$' &&
	printf '%s\n' "$out" | grep -Eq '^   READ: bw=' && printf '%s\n' "$out" | grep -Eq '^  WRITE: bw=' ||
	bad "fio randrw: a read and a write section, READ and WRITE status lines: '$out'"
if have python3 "fio's mixes in JSON"; then
	mix() { # rw options... -> JSON on stdout
		"$BIN" fio --name=m --ioengine=libaio --iodepth=4 --number_ios=2000 \
			--output-format=json "$@"
	}
	check_mix() { # python condition on r (read), w (write), j (job); args
		local cond=$1
		shift
		mix "$@" >mix.json || bad "fio $*: rc $?"
		python3 -c '
import json, sys
j = json.load(open("mix.json"))["jobs"][0]; r = j["read"]; w = j["write"]
assert '"$cond"', (r["total_ios"], r["io_bytes"], w["total_ios"], w["io_bytes"], j["sys_cpu"])
for x in (r, w):
    if x["total_ios"]:
        assert x["clat_ns"]["N"] == x["total_ios"] and x["bw"] > 0 and x["iops"] > 0, x
' || bad "fio $*: not $cond"
	}
	check_mix 'r["total_ios"] + w["total_ios"] == 2000 and abs(r["total_ios"] / 2000 - 0.7) < 0.04 and r["io_bytes"] == 4096 * r["total_ios"] and w["io_bytes"] == 65536 * w["total_ios"]' \
		--rw=randrw --rwmixread=70 --bs=4k,64k
	check_mix 'abs(r["total_ios"] / 2000 - 0.7) < 0.04' --rw=rw --rwmixread=10 --rwmixwrite=30
	check_mix 'abs(w["total_ios"] / 2000 - 0.7) < 0.04' --rw=readwrite --rwmixwrite=70
	# the drive serves each command by its direction: writes' latency (21 us) below reads' (92)
	check_mix 'w["clat_ns"]["min"] < 30000 < 90000 < r["clat_ns"]["min"]' --rw=randrw \
		--iodepth=1
	check_mix 'w["total_ios"] == 0 and r["total_ios"] == 2000' --rw=randrw --rwmixread=100
	# bssplit: a quarter 4k, the rest 128k (writes' own list after the comma)
	check_mix 'w["total_ios"] == 0 and abs((r["io_bytes"] - 4096 * 2000) / (131072 - 4096) / 2000 - 0.75) < 0.04' \
		--rw=randread --bssplit=4k/25:128k/75,8k
	check_mix 'abs(r["io_bytes"] / r["total_ios"] - 4096) < 1 and abs(w["io_bytes"] / w["total_ios"] - 0.1 * 8192 - 0.9 * 16384) < 600' \
		--rw=randrw --bssplit=4k,8k/10:16k/
	# bsrange: multiples of the smallest, in the range, not all one size
	check_mix 'r["io_bytes"] % 4096 == 0 and 4096 * 2000 < r["io_bytes"] < 16384 * 2000' \
		--rw=read --bsrange=4k-16k
	# with size and varying sizes the job ends after size bytes (fio)
	"$BIN" fio --name=m --ioengine=libaio --rw=randread --bsrange=4k:64k --size=1m \
		--output-format=json | python3 -c '
import json, sys
r = json.load(sys.stdin)["jobs"][0]["read"]
assert 1048576 <= r["io_bytes"] < 1048576 + 65536 and r["total_ios"] < 256, r["io_bytes"]
' || bad "fio bsrange with size: not size bytes"
	# cpus_allowed places the jobs: CPUs 32-33 (node 1, away from the drive) are not 0-1
	place() {
		"$BIN" fio --name=c --ioengine=libaio --numjobs=2 --iodepth=32 --runtime=3ms \
			--group_reporting --output-format=json "$@" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["read"]["iops"])'
	}
	near=$(place --cpus_allowed=0-1) && far=$(place --cpus_allowed=32,33) &&
		split=$(place --cpus_allowed=32-33 --cpus_allowed_policy=split) &&
		dflt=$(place) || bad "fio cpus_allowed: rc $?"
	[ "$near" = "$dflt" ] && [ "$far" != "$near" ] && [ "$split" = "$far" ] ||
		bad "fio cpus_allowed: IOPS 0-1 $near, default $dflt, 32,33 $far, split $split"
	# hipri: polled completions, the CPU spins (sys 100 %) and no handler adds to clat
	"$BIN" fio --name=h --ioengine=io_uring --hipri --number_ios=200 --output-format=json >poll.json &&
		"$BIN" fio --name=h --ioengine=io_uring --number_ios=200 --output-format=json >irq.json ||
		bad "fio hipri: rc $?"
	python3 -c '
import json
p = json.load(open("poll.json"))["jobs"][0]; i = json.load(open("irq.json"))["jobs"][0]
assert p["sys_cpu"] > 99.9 and i["sys_cpu"] < 20, (p["sys_cpu"], i["sys_cpu"])
assert p["read"]["clat_ns"]["mean"] < i["read"]["clat_ns"]["mean"] - 400, (p["read"]["clat_ns"], i["read"]["clat_ns"])
' || bad "fio hipri: not polled"
	# terse v3: one line per report, the JSON's figures in fio's fields (KiB, KiB/s, IOPS, ms,
	# usec), 20 percentile fields, the write direction after the read's; --minimal is terse
	for fmt in --output-format=terse --minimal; do
		"$BIN" fio --name=t --ioengine=libaio --rw=randrw --bs=4k,8k --iodepth=4 \
			--number_ios=500 --percentile_list=50:99 --description="a b" $fmt >t.txt &&
			"$BIN" fio --name=t --ioengine=libaio --rw=randrw --bs=4k,8k --iodepth=4 \
				--number_ios=500 --percentile_list=50:99 --output-format=json >t.json ||
			bad "fio terse: rc $?"
		python3 - t.txt t.json <<'EOT' || bad "fio $fmt: not fio's terse v3"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
j = json.load(open(sys.argv[2]))["jobs"][0]
assert len(lines) == 1, lines
f = lines[0].split(";")
assert len(f) == 122 and f[:5] == ["3", "fio-3.33", "t", "0", "0"] and f[-1] == "a b", f
for d, base in (("read", 5), ("write", 5 + 41)):
    x = j[d]; runt = x["runtime"]
    assert f[base:base + 4] == [str(x["io_kbytes"]), str(1000 * x["io_bytes"] // runt // 1024),
                                str(1000 * x["total_ios"] // runt), str(runt)], (d, f[base:base + 4])
    c = x["clat_ns"]
    assert f[base + 8] == str(c["min"] // 1000) and abs(float(f[base + 10]) - c["mean"] / 1000) < 1e-3, f[base + 8:base + 12]
    assert f[base + 12:base + 14] == ["50.000000%%=%d" % (c["percentile"]["50.000000"] // 1000),
                                      "99.000000%%=%d" % (c["percentile"]["99.000000"] // 1000)], f[base + 12:base + 14]
    assert f[base + 14:base + 32] == ["0%=0"] * 18, f[base + 14:base + 32]
assert f[87] == "0.000000%" and abs(float(f[88][:-1]) - j["sys_cpu"]) < 1e-3, f[87:89]
assert [float(v[:-1]) for v in f[92:99]] == [round(v, 1) for v in j["iodepth_level"].values()], f[92:99]
assert abs(sum(float(v[:-1]) for v in f[99:121]) - 100) < 0.1, f[99:121]
EOT
	done
fi
# job sections run at once unless stonewall (fio): two drive-bound readers share the drive's
# 840k IOPS (about half each), after a stonewall the second has it alone; groups
if have python3 "fio's concurrent jobs"; then
	"$BIN" fio --output-format=json --name=a --ioengine=libaio --numjobs=4 --iodepth=32 \
		--rw=randread --runtime=3ms --group_reporting --name=b --ioengine=libaio --numjobs=4 \
		--iodepth=32 --rw=randread --runtime=3ms --group_reporting --new_group \
		--name=c --stonewall --ioengine=libaio --numjobs=4 --iodepth=32 --rw=randread \
		--runtime=3ms --group_reporting >conc.json || bad "fio concurrent: rc $?"
	python3 -c '
import json
j = json.load(open("conc.json"))["jobs"]
assert [(x["jobname"], x["groupid"]) for x in j] == [("a", 0), ("b", 1), ("c", 2)], j
a, b, c = (x["read"]["iops"] for x in j)
assert abs(a - 420e3) < 30e3 and abs(b - 420e3) < 30e3 and abs(c - 840e3) < 30e3, (a, b, c)
' || bad "fio: sections without stonewall do not share the drive"
	# a writer beside a reader: the link is full duplex, the reads' data do not hold the
	# writes' (21 us drive latency: no write waits for a read's transfer)
	"$BIN" fio --output-format=json --name=r --ioengine=libaio --rw=randread --iodepth=16 \
		--runtime=3ms --name=w --ioengine=libaio --rw=randwrite --runtime=3ms >duplex.json ||
		bad "fio duplex: rc $?"
	python3 -c '
import json
r, w = json.load(open("duplex.json"))["jobs"]
assert w["write"]["clat_ns"]["max"] < 40000 < 90000 < r["read"]["clat_ns"]["min"], (w["write"]["clat_ns"], r["read"]["clat_ns"])
' || bad "fio: a write waits for reads on the link"
fi
out=$("$BIN" fio --name=a --rw=read --number_ios=100 --group_reporting --name=b --rw=write \
	--number_ios=100 --group_reporting --name=c --new_group --number_ios=10) ||
	bad "fio groups: rc $?"
printf '%s\n' "$out" | grep -q '^a: (groupid=0, jobs=2): err= 0: ' &&
	printf '%s\n' "$out" | grep -q '^c: (g=1): rw=read' &&
	printf '%s\n' "$out" | grep -q '^c: (groupid=1, jobs=1): err= 0: ' &&
	printf '%s\n' "$out" | grep -q '^Run status group 1 (all jobs):$' &&
	[ "$(printf '%s\n' "$out" | grep -c '^  read: \|^  write: ')" = 3 ] ||
	bad "fio: group_reporting merges a group's sections, new_group starts one: '$out'"
check_usage "two jobs on CPU 3: the model runs one job per CPU" --name=a --cpus_allowed=3 \
	--number_ios=1 --name=b --cpus_allowed=3 --number_ios=1
# fio's runtime is the elapsed microseconds rounded up to ms: a 0.3 ms job ran 1 ms, not 0
out=$("$BIN" fio --name=s --number_ios=3 --output-format=terse) || bad "fio short: rc $?"
[ "$(printf '%s\n' "$out" | cut -d';' -f9)" = 1 ] || bad "fio short job: runtime not 1 ms: '$out'"
# runtime in seconds, past the former 10-second cap (a drive-bound job: few I/Os to simulate)
out=$("$BIN" fio --name=long --bs=2m --rw=read --runtime=11 2>/dev/null) || bad "fio --runtime=11: rc $?"
printf '%s\n' "$out" | grep -Eq '^  read: .*/11000msec\)$' || bad "fio --runtime=11: '$out'"
exit $fail
