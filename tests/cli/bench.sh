#!/bin/bash
# bench.sh — `iommulab bench`: bad options are one line + exit 2; a short run prints the
# dma_map_benchmark tool's lines (format of tools/dma/dma_map_benchmark.c) and valid JSON.
# usage: bash bench.sh <iommulab binary> <source dir>
set -u
BIN=$1
. "$2/tests/support/cli_lib.sh" # fail, bad, have
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
check_usage --device ''
out=$("$BIN" bench --device '' 2>&1 >/dev/null)
case $out in *"--device needs a device name"*) ;; *) echo "FAIL: --device '': '$out'"; fail=1;; esac
# --iommu: a registered architecture; the profile must have it; alone it picks the machine
check_usage --engine sim --iommu amd
check_usage --profile icelake-2s-a100        # natively a profile only comes with --iommu
out=$("$BIN" bench --engine sim --iommu vtd --profile a100-2node -t 1 --iterations 10 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q -- '--iommu vtd: profile a100-2node has iommu: smmuv3' ||
	{ echo "FAIL: --iommu vtd on a100-2node: rc $rc, '$out'"; fail=1; }
out=$("$BIN" bench --engine sim --iommu vtd -t 1 -g 1 --mode strict --iterations 20) &&
	echo "$out" | grep -q '^unmap latency(ns): avg ' &&
	echo "$out" | grep -q '(profile icelake-2s-a100, seed 1)' ||
	{ echo "FAIL: bench --engine sim --iommu vtd: '$out'"; fail=1; }
# seed 004's host on VT-d: the machine is built and the VT-d driver probed on its DMAR units;
# a strict run issues page-selective IOTLB invalidations and waits for them
out=$("$BIN" bench --engine sim --profile icelake-2s-a100 -t 2 -g 1 --mode strict --iterations 50 --json) ||
	{ echo "FAIL: icelake-2s-a100 bench exit $?"; fail=1; }
if have python3 "the VT-d bench JSON's content"; then
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["result"]["loops"] == 100 and d["result"]["map_errors"] == 0, d["result"]
u = d["iommu"]  # the unit the device sits behind, named as VT-d names it
assert "smmu" not in d and d["config"]["iommu"] == "dmar0", d["config"]
assert u["arch"] == "vtd", u
assert u["driver"]["iotlb_psi"] >= 100 and u["driver"]["qi_submits"] >= 100, u["driver"]
' || { echo "FAIL: icelake-2s-a100: VT-d strict bench JSON"; fail=1; }
fi
"$BIN" bench --help | grep -q -- '--ecmdq on|off' || { echo "FAIL: bench --help does not show --ecmdq"; fail=1; }
"$BIN" bench --help | grep -q -- '--cmdqv on|off' || { echo "FAIL: bench --help does not show --cmdqv"; fail=1; }
check_usage --engine sim --cmdqv on --iterations 1              # kunpeng920's SMMU has no CMDQV
check_usage --engine sim --profile grace --cmdqv on --ecmdq off --iterations 1  # one or the other
check_usage --cmdqv off --iterations 1                          # natively: no profile, no CMDQV
check_usage --engine sim --profile grace --cmdqv yes --iterations 1
out=$("$BIN" bench --engine sim --profile grace --device nic0 -n 0 -t 4 --iterations 20 --cmdqv on --json) ||
	{ echo "FAIL: grace --cmdqv on bench exit $?"; fail=1; }
if have python3 "the CMDQV bench JSON's content"; then
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["config"]["cmdqv"] == "on", d["config"]
u = d["iommu"]
# every unmap TLBI and its sync went through the VCMDQs; the main queue had only set-up commands
assert u["vcmdqs"]["queues_used"] == 2, u["vcmdqs"]
assert u["vcmdqs"]["commands"] >= 2 * 4 * 20, u["vcmdqs"]
' || { echo "FAIL: grace --cmdqv on bench JSON"; fail=1; }
fi
check_usage --smmu 9                          # kunpeng920 has 4 SMMUs
check_usage --unit 9
check_usage --unit 2 --device sas0 --iterations 1  # sas0 is behind SMMU 0 (smmu0)
check_usage -s 1 --duration-ms 5              # one of them would silently win
check_usage -s 1 --iterations 3
check_usage --duration-ms 5 --iterations 3
out=$("$BIN" bench --smmu 9 2>&1 >/dev/null); case $out in *"IOMMU unit 9"*"4 IOMMU units"*) ;; *) echo "FAIL: --smmu 9 message: $out"; fail=1;; esac
out=$("$BIN" bench --unit 2 --device sas0 --iterations 1 2>&1 >/dev/null); case $out in *"unit 0 (smmu0), not --unit 2"*) ;; *) echo "FAIL: --unit 2 --device sas0 message: $out"; fail=1;; esac
check_usage --topology /nonexistent.xml
check_usage stray
check_usage --engine warp
check_usage --profile kunpeng920            # a profile is for --engine sim
check_usage --fq-timer agent --iterations 1  # only lazy mode has a flush-queue timer
check_usage --seed 7 --iterations 1          # a seed is for --engine sim
out=$("$BIN" bench --mode passthrough --fq-timer agent 2>&1 >/dev/null)
case $out in *"--fq-timer needs --mode lazy"*) ;; *) echo "FAIL: --fq-timer in passthrough: '$out'"; fail=1;; esac
"$BIN" bench --engine sim --mode lazy --fq-timer unmap --iterations 2 >/dev/null ||
	{ echo "FAIL: --mode lazy --fq-timer unmap was refused"; fail=1; }
check_usage --engine sim --profile nosuchprofile
out=$("$BIN" bench --engine sim --profile '' 2>&1 >/dev/null)
case $out in *"empty machine profile name"*) ;; *) echo "FAIL: --profile '': '$out'"; fail=1;; esac
check_usage --engine sim --seed -1
# strtol/strtoull skip blanks and take a sign (' -1' was seed 2^64 - 1); --iterations 1: a quick
# run, not a 20 s one, if such a value were accepted
check_usage --engine sim --iterations 1 --seed ' -1'
check_usage --engine sim --iterations 1 --seed +1
check_usage --iterations 1 -t ' 1'
check_usage --iterations 1 -t +1
check_usage --iterations 1 -x ' 0'
check_usage --engine sim --iterations 0
# Numbers are decimal (0x for hex): strtol's base 0 read "-t 010" as 8 threads and refused 08.
for arg in "010:10" "08:8" "0x2:2"; do
	out=$("$BIN" bench --engine sim --iterations 1 -t "${arg%%:*}" 2>&1 | grep -o 'threads:[0-9]*')
	[ "$out" = "threads:${arg##*:}" ] || { echo "FAIL: -t ${arg%%:*} -> '$out'"; fail=1; }
done
# A topology file (one that exists) without --profile: the simulator has no machine profile.
out=$("$BIN" bench --engine sim --topology "$2/tests/data/topologies/24em64t-2n6c2t-pci.xml" \
	--iterations 1 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q 'needs --profile' ||
	{ echo "FAIL: --engine sim --topology FILE without --profile -> rc $rc, '$out'"; fail=1; }

# A bad profile: one line naming file:line:column, exit 2.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/^  command_ns: [0-9]*/  command_ns: thirty/' "$2/profiles/kunpeng920.yaml" > "$tmp/bad.yaml"
out=$("$BIN" bench --engine sim --profile "$tmp/bad.yaml" --iterations 1 2>&1 >/dev/null); rc=$?
line=$(grep -n '^  command_ns: thirty' "$tmp/bad.yaml" | cut -d: -f1)
if [ $rc -ne 2 ] || [ "$(echo "$out" | wc -l)" -ne 1 ] || \
   ! echo "$out" | grep -Eq "bad\.yaml:$line:[0-9]+: "; then
	echo "FAIL: bad profile -> rc $rc, '$out' (want one line with bad.yaml:$line:col)"; fail=1
fi

# Every map fails (passthrough, 20-bit mask: memory above 4 GiB, the swiotlb's bounce slots
# above 1 MiB): exit 1 at once with the cause, no dangling ': ' (the threads used to go on
# failing, at no simulated cost, forever).
out=$(timeout 120 "$BIN" bench --engine sim --mode passthrough -b 20 --duration-ms 1 2>&1 >/dev/null); rc=$?
if [ $rc -ne 1 ] || ! echo "$out" | grep -q 'every map failed: .*DMA mask$'; then
	echo "FAIL: passthrough, 20-bit mask -> rc $rc, '$out'"; fail=1
fi
# The bench's default 32-bit mask bounces through the swiotlb instead: it runs, and says so
# (one thread, 10 maps of 4 KiB in and out: bidirectional is the tool's default direction).
out=$(timeout 120 "$BIN" bench --engine sim --mode passthrough --iterations 10 2>&1); rc=$?
[ $rc -eq 0 ] || bad "passthrough with the default 32-bit mask does not run: rc $rc, '$out'"
case $out in
*"swiotlb: bounced maps 10, unmaps 10, copied in 40960 bytes, out 40960 bytes, full 0,"*) ;;
*) bad "passthrough, 32-bit mask: no swiotlb line with 10 bounced maps: '$out'" ;;
esac
# With a 64-bit mask nothing bounces.
out=$(timeout 120 "$BIN" bench --engine sim --mode passthrough -b 64 --iterations 10 2>&1)
case $out in *"swiotlb: bounced maps 0, "*) ;; *) bad "passthrough, 64-bit mask bounced: '$out'" ;; esac

# A topology the simulator refuses (local distance 5, which hwloc and the loader accept): one
# "simulator: " prefix, exit 2.
sed 's|<u64values length="13">10 300 20 10 </u64values>|<u64values length="9">5 20 20 5</u64values>|' \
	"$2/tests/data/topologies/broken-distances-range.xml" > "$tmp/local5.xml"
out=$("$BIN" bench --engine sim --profile kunpeng920 --topology "$tmp/local5.xml" --iterations 1 2>&1 >/dev/null); rc=$?
if [ $rc -ne 2 ] || ! echo "$out" | grep -q '^iommulab bench: simulator: SLIT distances must be 10\.\.255$'; then
	echo "FAIL: local distance 5 -> rc $rc, '$out'"; fail=1
fi

# Simulation: the same command twice gives byte-identical JSON; another seed is recorded.
sim_args="--engine sim -n 2 -t 4 --iterations 50 --json"
"$BIN" bench $sim_args > "$tmp/a.json" || { echo "FAIL: sim run rc $?"; fail=1; }
"$BIN" bench $sim_args > "$tmp/b.json" || { echo "FAIL: sim run 2 rc $?"; fail=1; }
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: sim JSON differs between two runs"; fail=1; }
"$BIN" bench $sim_args --seed 7 > "$tmp/c.json" || { echo "FAIL: sim seed 7 rc $?"; fail=1; }
# --cma pernuma takes the SMMU's queue memory from its own node's CMA area: the model's memory
# traffic (command and event queues) turns local, where one global area leaves it remote.
"$BIN" bench $sim_args --cma pernuma > "$tmp/d.json" || { echo "FAIL: sim --cma pernuma rc $?"; fail=1; }
if have python3 "bench --cma's effect"; then
python3 - "$tmp/a.json" "$tmp/d.json" <<'PY' || { echo "FAIL: --cma pernuma changed nothing"; fail=1; }
import json, sys
g, p = (json.load(open(f)) for f in sys.argv[1:])
assert g["config"]["cma"] == "global" and p["config"]["cma"] == "pernuma"
ga, pa = g["sim"]["agents"]["smmu2"], p["sim"]["agents"]["smmu2"]
assert ga["mem_bytes_remote"] > 0 and ga["mem_bytes_local"] == 0, ga
assert pa["mem_bytes_local"] > 0 and pa["mem_bytes_remote"] == 0, pa
PY
fi
if have python3 "the sim JSON's content"; then
python3 - "$tmp/a.json" "$tmp/c.json" <<'PY' || { echo "FAIL: sim json content"; fail=1; }
import json, sys
a = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
cfg, r, sim, smmu = a["config"], a["result"], a["sim"], a["iommu"]
assert cfg["iommu"] == "smmu2" and "smmu" not in cfg and "smmu" not in a, cfg
assert cfg["engine"] == "sim" and cfg["profile"] == "kunpeng920" and cfg["seed"] == 1, cfg
assert c["config"]["seed"] == 7 and c["sim"]["seed"] == 7
assert r["loops"] == 4 * 50 and r["map_errors"] == 0, r
# threads bound to node 2's CPUs of the modelled 128-CPU machine: 64..67
assert sorted(x["cpu"] for x in sim["cpus"]) == [64, 65, 66, 67], sim["cpus"]
assert all(x["node"] == 2 for x in sim["cpus"])
assert sim["agents"]["smmu2"]["node"] == 2
d = sim["distributions"]
assert d["smmu2.cmd_sync_ns"]["count"] >= 200 and "smmu2.cmdq_used" in d, d.keys()
# the model completed what the driver wrote, opcode by opcode
assert smmu["cmdq"]["by_opcode"] == smmu["driver"]["by_opcode"], smmu
assert "hit_rate_ppm" in smmu["caches"]["tlb"]
PY
fi

out=$("$BIN" bench --duration-ms 50 -n 2 -g 2 --mode lazy) || { echo "FAIL: short run rc $?"; fail=1; }
echo "$out" | grep -Eq '^dma mapping benchmark: threads:1 seconds:0.05 node:2 dir:BIDIRECTIONAL granule: 2$' \
	|| { echo "FAIL: header line (a 50 ms run says seconds:0.05): $out"; fail=1; }
# a run by iterations says so in the header, not the default -s it did not use (issue 28)
out=$("$BIN" bench --engine sim -t 2 --iterations 30 -n 2) || { echo "FAIL: iterations run rc $?"; fail=1; }
echo "$out" | grep -Eq '^dma mapping benchmark: threads:2 iterations:30 node:2 dir:BIDIRECTIONAL granule: 1$' \
	|| { echo "FAIL: header line (want iterations:30): $out"; fail=1; }
echo "$out" | grep -Eq '^average map latency\(us\):[0-9]+\.[0-9] standard deviation:[0-9]+\.[0-9]$' \
	|| { echo "FAIL: map line: $out"; fail=1; }
echo "$out" | grep -Eq '^average unmap latency\(us\):[0-9]+\.[0-9] standard deviation:[0-9]+\.[0-9]$' \
	|| { echo "FAIL: unmap line: $out"; fail=1; }
json=$("$BIN" bench --duration-ms 50 -n 2 -m sg -g 4 --mode strict --lookup refcount --json) \
	|| { echo "FAIL: json run"; fail=1; }
if have python3 "bench --json's content"; then
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
fi
# flush-queue and IOVA options (issue 21): bad values and options outside lazy mode exit 2
check_usage --mode lazy --fq shared
check_usage --mode lazy --fq-size 3            # not a power of two
check_usage --mode lazy --fq-size 1
check_usage --mode lazy --fq-timeout-ms 0
check_usage --fq single --iterations 1         # strict (the default) has no flush queue
check_usage --mode strict --fq-size 64 --iterations 1
check_usage --mode passthrough --iova-depot list --iterations 1
check_usage --iova-depot magazines
check_usage --cmdq-lock ticket
out=$("$BIN" bench --mode strict --fq-timeout-ms 5 2>&1 >/dev/null)
case $out in *"--fq-timeout-ms needs --mode lazy"*) ;; *) echo "FAIL: --fq-timeout-ms in strict: '$out'"; fail=1;; esac
out=$("$BIN" bench --mode lazy --fq-size 48 2>&1 >/dev/null)
case $out in *"power of two"*) ;; *) echo "FAIL: --fq-size 48: '$out'"; fail=1;; esac
# single 16-entry ring (holds 15), unmap-checked 1 s deadline (never reached here): the 16th
# entry finds it full and flushes, emptying it, then the 31st, ...: (queued - 1) / 15 flushes,
# all of them full ones; the kind brings Linux's 1 s
fqj=$("$BIN" bench --engine sim --mode lazy --fq single --fq-size 16 --fq-timer unmap \
	--iova-depot fixed32 --cmdq-lock fair -t 2 --iterations 60 --json) ||
	{ echo "FAIL: --fq single run rc $?"; fail=1; }
pcj=$("$BIN" bench --engine sim --mode lazy -t 2 --iterations 60 --json) ||
	{ echo "FAIL: lazy per-CPU run rc $?"; fail=1; }
if have python3 "the flush-queue options' JSON"; then
python3 - "$fqj" "$pcj" <<'PY' || { echo "FAIL: flush-queue options JSON"; fail=1; }
import json, sys
s = json.loads(sys.argv[1]); p = json.loads(sys.argv[2])
c = s["config"]
assert (c["fq"], c["fq_size"], c["fq_timeout_ns"], c["iova_depot"], c["cmdq_lock"]) == \
	("single", 16, 10**9, "fixed32", "fair"), c
st = s["stats"]
assert st["fq_queued"] >= 120 and st["fq_flushes"] == st["fq_full_flushes"] == \
	(st["fq_queued"] - 1) // 15, st
c = p["config"]
# the defaults are --kernel latest's: since 7.0 the cmdq lock is the fair one (docs/kernel-eras.md)
assert (c["fq"], c["fq_size"], c["fq_timeout_ns"], c["iova_depot"], c["cmdq_lock"]) == \
	("percpu", 256, 10**7, "list", "fair"), c
# two CPUs, 256-entry rings (255 each): fewer than 255 unmaps per CPU never fill one
assert p["stats"]["fq_full_flushes"] == 0, p["stats"]
# the main queue's lock counters, in both versions
for d in (s, p):
	assert set(d["iommu"]["driver"]["cmdq_lock"]) == \
		{"exclusive", "shared_waits", "shared_wait_ns", "shared_wait_max_ns"}, d["iommu"]["driver"]
PY
fi
out=$("$BIN" bench --engine sim --iommu vtd --cmdq-lock fair -t 1 --iterations 1 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q -- '--cmdq-lock: profile icelake-2s-a100 has iommu: vtd' ||
	{ echo "FAIL: --cmdq-lock on VT-d: rc $rc, '$out'"; fail=1; }
out=$("$BIN" bench --engine sim --mode lazy --fq single -t 2 --iterations 20 --breakdown) &&
	echo "$out" | grep -q '^iommulab: fq single, fq-size 32768, fq-timeout 1000 ms, iova-depot list' ||
	{ echo "FAIL: --fq single --breakdown: '$out'"; fail=1; }
exit $fail
