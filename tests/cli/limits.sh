#!/bin/bash
# limits.sh — limits checked before a run starts (issue 28): bench --engine sim, fio and netperf
# refuse a run estimated over run's 10 minutes of host time, in one line naming the estimate
# and how to shorten it, before anything is built; fio's numjobs x iodepth x bs is checked as
# one limit; an out-of-range profile value stops run at load; a short run prints no progress
# line. Not each command's own option checks (bench.sh, fio.sh, netperf.sh).
# usage: bash limits.sh <iommulab binary> <source dir>
set -u
BIN=$1
SRC=$2
. "$SRC/tests/support/cli_lib.sh" # fail, bad
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# refused CMD... : exit 2 at once, the first line says $want, no more than the usual "Try" line
refused() {
	local want=$1 out rc t0 t1
	shift
	t0=$(date +%s%N)
	out=$(timeout 10 "$BIN" "$@" 2>&1 >"$TMP/stdout"); rc=$? # a run that starts is killed
	t1=$(date +%s%N)
	if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -gt 2 ]; then
		bad "$* -> rc $rc, '$out'"
	elif ! printf '%s' "$out" | head -1 | grep -qF -- "$want"; then
		bad "$*: '$out' does not say '$want'"
	elif [ -s "$TMP/stdout" ]; then
		bad "$*: refused, but wrote to stdout"
	elif [ $(((t1 - t0) / 1000000)) -gt 3000 ]; then
		bad "$*: took $(((t1 - t0) / 1000000)) ms to refuse (the run started?)"
	fi
}

# ---- item 10: the host-time estimate, as run's and sweep's ----
refused "128 threads x 1000000000 iterations would take about" \
	bench --engine sim -t 128 --iterations 1000000000
refused "minutes of host time (more than the 10 minutes a run may take): lower --iterations or -t" \
	bench --engine sim -t 128 --iterations 1000000000
# natively too, when the run is a count and not a time
refused "1 thread x 1000000000 iterations would take about" bench --iterations 1000000000
refused "128 threads for 300 simulated s would take about" bench --engine sim -t 128 -s 300
refused "shorten -s (or give --duration-ms) or lower -t" bench --engine sim -t 128 -s 300
refused "8 threads for 300 simulated s would take about" \
	bench --engine sim -t 8 -s 300 --mode passthrough
refused "128 streams for 10.000 simulated s would take about" netperf --queues=128 -l 10
refused "shorten -l or lower --queues" netperf --queues=128 -l 10
refused "128 jobs at iodepth 1023 for 10000 simulated ms would take about" \
	fio --name=x --ioengine=libaio --numjobs=128 --iodepth=1023 --bs=4k --runtime=10s
refused "lower number_ios (or size), numjobs or iodepth" fio --name=x --numjobs=128 --number_ios=100000000

# ---- item 11: fio's buffers as one limit, named ----
refused "numjobs x iodepth x bs: 64 x 256 buffers of 1024 KiB need 16.0 GiB of simulated memory; a run may use 3 GiB" \
	fio --name=x --ioengine=libaio --numjobs=64 --iodepth=256 --bs=1m

# ---- item 8: an out-of-range profile value stops run at load, at its line and column ----
sed -E 's/^(  sync_ns: )[0-9]+/\11000000000000/' "$SRC/profiles/kunpeng920.yaml" >"$TMP/p.yaml"
line=$(grep -n '^  sync_ns: 1000000000000$' "$TMP/p.yaml" | cut -d: -f1)
[ -n "$line" ] || bad "could not set sync_ns in a copy"
out=$("$BIN" run --quick --profile "$TMP/p.yaml" --out "$TMP/r" 003 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s' "$out" |
	grep -qF "$TMP/p.yaml:$line:12: smmu.sync_ns: 1000000000000 is out of range: 0..1000000 ns" ||
	bad "run with smmu.sync_ns 1e12: rc $rc, '$out'"
[ -e "$TMP/r" ] && bad "a refused run wrote $TMP/r"

# ---- progress: none for a short run ----
# (an ASan build's one makecontext warning is the sanitizer's, not the tool's)
asan='/^==[0-9]*==WARNING: ASan doesn.t fully support makecontext/d'
out=$(set -o pipefail; "$BIN" bench --engine sim --iterations 5 -t 2 2>&1 >/dev/null | sed "$asan") || bad "bench --iterations 5: rc $?"
[ -z "$out" ] || bad "a short bench wrote to stderr: $out"
out=$(set -o pipefail; "$BIN" bench --engine sim --duration-ms 2 2>&1 >/dev/null | sed "$asan") || bad "bench --duration-ms 2: rc $?"
[ -z "$out" ] || bad "a short bench wrote to stderr: $out"
exit $fail
