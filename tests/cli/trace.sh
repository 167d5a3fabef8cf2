#!/bin/bash
# trace.sh — `--trace FILE` of bench and run (docs/trace.md): the file is JSON trace-event
# format, B/E nest per track, the CPUs' slices add up to the same run's breakdown, the IOMMU
# tracks hold as many commands as the unit's statistics (tests/cli/trace_check.py), the same
# seed gives the same bytes, --trace-limit-us bounds the window, natively it is refused; and
# the checker itself fails on a trace with one E, one command or 2 % of one slice missing.
# usage: bash trace.sh <iommulab binary> <source dir>
set -u
BIN=$1
SRC=$2
CHECK="$SRC/tests/cli/trace_check.py"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 not found: the trace cannot be parsed"
	[ -n "${CI:-}" ] && exit 1
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# refused: natively, a window without a file, a file that cannot be made
out=$("$BIN" bench --trace "$tmp/n.json" --iterations 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || bad "--trace natively: rc $rc"
case $out in *"not supported natively"*) ;; *) bad "--trace natively: '$out'";; esac
[ ! -e "$tmp/n.json" ] || bad "--trace natively wrote a file"
"$BIN" bench --engine sim --trace-limit-us 5 --iterations 2 >/dev/null 2>&1
[ $? -eq 2 ] || bad "--trace-limit-us without --trace: not exit 2"
"$BIN" run --quick --out "$tmp/res" --trace-limit-us 5 cmdsync >/dev/null 2>&1
[ $? -eq 2 ] || bad "run --trace-limit-us without --trace: not exit 2"
"$BIN" bench --engine sim --trace "$tmp/t.json" --trace-limit-us 0 --iterations 2 >/dev/null 2>&1
[ $? -eq 2 ] || bad "--trace-limit-us 0: not exit 2"
out=$("$BIN" bench --engine sim --trace "$tmp/no/such/dir/t.json" --iterations 2 2>&1); rc=$?
[ $rc -eq 2 ] || bad "--trace into a missing directory: rc $rc"
case $out in *"--trace $tmp/no/such/dir/t.json: "*) ;; *) bad "bad --trace path: '$out'";; esac

# bench, strict (SMMUv3): checked against its own JSON; the same seed twice, byte for byte
bench() { "$BIN" bench --engine sim -t 8 --iterations 30 --json "$@"; }
bench --trace "$tmp/b.json" >"$tmp/b.res" || bad "bench --trace failed"
python3 "$CHECK" --flows "$tmp/b.json" "$tmp/b.res" || bad "bench strict: trace_check"
bench --trace "$tmp/b2.json" >/dev/null || bad "bench --trace (again) failed"
cmp -s "$tmp/b.json" "$tmp/b2.json" || bad "the same seed gave two different traces"
bench --seed 2 --trace "$tmp/b3.json" >/dev/null || bad "bench --seed 2 --trace failed"
cmp -s "$tmp/b.json" "$tmp/b3.json" && bad "seeds 1 and 2 gave the same trace"
for want in '"name":"dma_unmap"' '"name":"cmdq_sync_wait"' '"name":"CMD_SYNC"' \
	'"name":"CMD_TLBI_NH_VA"' '"name":"smmu2 cmdq","args":{"entries":' \
	'"name":"smmu2 invalidation engine"' '"name":"cpu 0 (node 0)"' '"name":"statistics"'; do
	grep -qF -- "$want" "$tmp/b.json" || bad "bench trace lacks $want"
done

# contended lines: counter tracks of the named lines (the home model queues requests)
bench --profile kunpeng920-contention -t 16 --trace "$tmp/h.json" >"$tmp/h.res" || bad "bench home --trace"
python3 "$CHECK" --flows "$tmp/h.json" "$tmp/h.res" >/dev/null || bad "bench home: trace_check"
grep -qE '"name":"line [^"]+","args":\{"(queued ns|failed cmpxchg)":' "$tmp/h.json" ||
	bad "bench home: no counter track of a contended line"

# a lock's release: with 4.19's spinlock queue, the holder's unlock wakes the spinners, a flow
# from the holder's slice to each waiter's ("release smmu.cmdq.legacy_lock")
bench -t 16 --kernel 4.19 --trace "$tmp/k.json" >"$tmp/k.res" || bad "bench --kernel 4.19 --trace"
python3 "$CHECK" "$tmp/k.json" "$tmp/k.res" >/dev/null || bad "bench 4.19: trace_check"
grep -qF '"ph":"f","cat":"flow","pid":1' "$tmp/k.json" && grep -qF '"name":"release smmu.cmdq.legacy_lock"' "$tmp/k.json" ||
	bad "bench 4.19: no flow from the lock's release to a waiter"

# per-CPU queues (ECMDQ): every wait still has its flow from its own queue's CMD_SYNC
bench --ecmdq on --trace "$tmp/e.json" >"$tmp/e.res" || bad "bench --ecmdq on --trace"
python3 "$CHECK" --flows "$tmp/e.json" "$tmp/e.res" || bad "bench ECMDQ: trace_check --flows"

# lazy mode: the flush queue's depth; VT-d: descriptors
bench --mode lazy --trace "$tmp/l.json" >"$tmp/l.res" || bad "bench --mode lazy --trace"
python3 "$CHECK" "$tmp/l.json" "$tmp/l.res" || bad "bench lazy: trace_check"
grep -qF '"name":"flush queue","args":{"entries":' "$tmp/l.json" || bad "no flush-queue counter"
bench --profile icelake-2s-a100 --trace "$tmp/v.json" >"$tmp/v.res" || bad "bench VT-d --trace"
python3 "$CHECK" "$tmp/v.json" "$tmp/v.res" || bad "bench VT-d: trace_check"
grep -qF '"name":"INV_WAIT"' "$tmp/v.json" || bad "VT-d trace without wait descriptors"

# run: one process per case, each against its case's statistics
"$BIN" run --quick --json --out "$tmp/res" --trace "$tmp/r.json" map-pages >"$tmp/r.res" \
	2>/dev/null || bad "run --trace map-pages failed"
python3 "$CHECK" --flows "$tmp/r.json" "$tmp/r.res" >"$tmp/r.log" || { cat "$tmp/r.log"; bad "run: trace_check"; }
n=$(grep -c "^trace_check: seed002-map-pages " "$tmp/r.log")
[ "$n" -eq 44 ] || bad "run map-pages: $n cases checked, not 44"
# seed 000 clears the SMMU's counters after its warm-up: the structure and breakdown only
"$BIN" run --quick --json --out "$tmp/res" --trace "$tmp/c.json" cmdsync >"$tmp/c.res" \
	2>/dev/null || bad "run --trace cmdsync failed"
python3 "$CHECK" --no-commands "$tmp/c.json" "$tmp/c.res" >/dev/null || bad "run cmdsync: trace_check"

# the window: nothing but E after it, and a smaller file
bench --trace "$tmp/w.json" --trace-limit-us 40 >/dev/null || bad "--trace-limit-us 40 failed"
python3 "$CHECK" --limit-us 40 "$tmp/w.json" - >/dev/null || bad "--trace-limit-us 40: trace_check"
[ "$(stat -c %s "$tmp/w.json")" -lt "$(stat -c %s "$tmp/b.json")" ] || bad "the window did not shrink the file"

# the size bound: the file stops near it, the run goes on and says so in one line; 0: none
bench --iterations 3000 --trace "$tmp/m.json" --trace-limit-mb 1 >"$tmp/m.res" 2>"$tmp/m.err" ||
	bad "--trace-limit-mb 1 failed"
python3 "$CHECK" --limit-us 1e12 "$tmp/m.json" - >/dev/null || bad "--trace-limit-mb 1: trace_check"
size=$(stat -c %s "$tmp/m.json")
[ "$size" -ge 1048576 ] && [ "$size" -lt 1572864 ] || bad "--trace-limit-mb 1 wrote $size bytes"
grep -qF '"name":"trace limit reached"' "$tmp/m.json" || bad "no 'trace limit reached' mark"
# (a sanitizer's own "==PID==" notes are not the command's)
grep -v '^==' "$tmp/m.err" >"$tmp/m.err1"
[ "$(wc -l <"$tmp/m.err1")" -eq 1 ] && grep -q -- "--trace $tmp/m.json: stopped at 1 MiB in bench .*--trace-limit-us" \
	"$tmp/m.err1" || bad "--trace-limit-mb 1: not one line naming --trace-limit-us: $(cat "$tmp/m.err1")"
python3 -c 'import json,sys; assert "config" in json.load(open(sys.argv[1]))' "$tmp/m.res" || bad "--trace-limit-mb 1: the run's own result is missing"
bench --iterations 3000 --trace "$tmp/m0.json" --trace-limit-mb 0 >/dev/null 2>"$tmp/m0.err" ||
	bad "--trace-limit-mb 0 failed"
[ -z "$(grep -v '^==' "$tmp/m0.err")" ] && [ "$(stat -c %s "$tmp/m0.json")" -gt 1572864 ] ||
	bad "--trace-limit-mb 0 bounded the file"
for v in -1 x 1048577; do
	"$BIN" bench --engine sim --trace "$tmp/mx.json" --trace-limit-mb "$v" --iterations 2 \
		>/dev/null 2>&1
	[ $? -eq 2 ] || bad "--trace-limit-mb $v: not exit 2"
done
"$BIN" run --quick --out "$tmp/res" --trace-limit-mb 5 cmdsync >/dev/null 2>&1
[ $? -eq 2 ] || bad "run --trace-limit-mb without --trace: not exit 2"

# fio, netperf and iperf3 take --trace too: a valid trace with a process per job / test,
# every wait with its flow; never over --output or the profile; limits without a file refused
"$BIN" fio --name=r --ioengine=libaio --numjobs=2 --iodepth=8 --rw=randread --runtime=1ms \
	--trace="$tmp/fio.json" >/dev/null || bad "fio --trace failed"
python3 "$CHECK" --limit-us 1e12 "$tmp/fio.json" - >/dev/null || bad "fio --trace: trace_check"
grep -qF '"name":"fio r (kunpeng920, iommu=strict, seed 1)"' "$tmp/fio.json" || bad "fio: no process for job r"
"$BIN" netperf -t TCP_RR -l 0.001 --trace "$tmp/np.json" -- -r 1,1 >/dev/null || bad "netperf --trace failed"
python3 "$CHECK" --limit-us 1e12 "$tmp/np.json" - >/dev/null || bad "netperf --trace: trace_check"
grep -qF '"name":"netperf TCP_RR (' "$tmp/np.json" || bad "netperf: no process for its test"
"$BIN" iperf3 -c peer -t 0.001 --trace "$tmp/ip.json" >/dev/null || bad "iperf3 --trace failed"
python3 "$CHECK" --limit-us 1e12 "$tmp/ip.json" - >/dev/null || bad "iperf3 --trace: trace_check"
for f in fio np ip; do
	grep -qF '"ph":"f"' "$tmp/$f.json" || bad "$f: no flow from a CMD_SYNC to its waiter"
done
# device rows: the NIC's DMA (SMMUv3), a VT-d unit's translations and walks
grep -qF '"name":"DMA write sid 0x' "$tmp/np.json" || bad "netperf: no DMA rows"
"$BIN" netperf -t TCP_RR -l 0.001 --profile icelake-2s-a100 --trace "$tmp/nv.json" -- -r 1,1 \
	>/dev/null || bad "netperf VT-d --trace failed"
python3 "$CHECK" --limit-us 1e12 "$tmp/nv.json" - >/dev/null || bad "netperf VT-d: trace_check"
for want in '"name":"dmar0 translation"' '"name":"dmar0 walk"' '"name":"DMA read sid 0x'; do
	grep -qF "$want" "$tmp/nv.json" || bad "netperf VT-d trace lacks $want"
done
"$BIN" fio --name=r --runtime=1ms --trace "$tmp/o.json" --output "$tmp/o.json" >/dev/null 2>&1
[ $? -eq 2 ] || bad "fio --trace F --output F: not exit 2"
printf '[r]\nrw=randread\nruntime=1ms\n' >"$tmp/j.fio"
"$BIN" fio "$tmp/j.fio" --trace "$tmp/j.fio" >/dev/null 2>&1
[ $? -eq 2 ] && grep -qx '\[r\]' "$tmp/j.fio" || bad "fio --trace over its job file: not exit 2, or the job file changed"
"$BIN" netperf -l 0.001 --trace-limit-us 5 >/dev/null 2>&1
[ $? -eq 2 ] || bad "netperf --trace-limit-us without --trace: not exit 2"
"$BIN" iperf3 -c peer -t 0.001 --trace "$SRC/profiles/kunpeng920.yaml" \
	--profile "$SRC/profiles/kunpeng920.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || bad "iperf3 --trace over its profile: not exit 2"

# the checker can fail: one E dropped, one command dropped, one slice 2 % longer, one flow's
# end dropped
python3 - "$tmp/b.json" "$tmp" <<'PY' || bad "could not make the broken traces"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
def write(name, events):
    json.dump({"traceEvents": events}, open(sys.argv[2] + "/" + name, "w"))
i = next(k for k, e in enumerate(ev) if e["ph"] == "E")
write("x1.json", ev[:i] + ev[i + 1:])
i = next(k for k, e in enumerate(ev) if e["ph"] == "X" and e["name"] == "CMD_SYNC")
write("x2.json", ev[:i] + ev[i + 1:])
# the longest dma_unmap: its B 2 % of its own duration earlier
opens, best = {}, None
for k, e in enumerate(ev):
    if e["ph"] == "B":
        opens.setdefault(e["tid"], []).append(k)
    elif e["ph"] == "E":
        b = opens[e["tid"]].pop()
        if ev[b]["name"] == "dma_unmap" and not opens[e["tid"]] and \
           (best is None or e["ts"] - ev[b]["ts"] > best[1]):
            best = (b, e["ts"] - ev[b]["ts"])
ev = [dict(e) for e in ev]
total = sum(1 for e in ev if e["ph"] == "B" and e["name"] == "dma_unmap")
ev[best[0]]["ts"] -= best[1] * 0.02 * total  # 2 % of the sum of all dma_unmap slices
write("x3.json", ev)
i = next(k for k, e in enumerate(ev) if e["ph"] == "f")
write("x4.json", ev[:i] + ev[i + 1:])
PY
for x in x1 x2 x3 x4; do
	python3 "$CHECK" --flows "$tmp/$x.json" "$tmp/b.res" >"$tmp/$x.log" 2>&1 &&
		bad "trace_check passed the broken trace $x"
done
grep -q "cmdq_sync_wait at .* 0 flows end in it" "$tmp/x4.log" || bad "x4: the missing flow not reported"
grep -q "open slices\|E of\|E without B" "$tmp/x1.log" || bad "x1: not reported as unbalanced"
grep -q "command slices" "$tmp/x2.log" || bad "x2: the missing command not reported"
grep -q "dma_unmap: slices sum to" "$tmp/x3.log" || bad "x3: the longer slice not reported"
exit $fail
