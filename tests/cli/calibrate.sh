#!/bin/bash
# calibrate.sh — `iommulab calibrate`: a small fit (seed 000's local wait and two seed 002
# cases, quick sizes, -j2) writes the fitted profile (comments kept, only the free constants'
# lines changed, a free: section with bounds, value and fitted_on; it loads and runs), the
# report (text, JSON) and the correlator; the same seed gives the same bytes; a profile's own
# free: section is read; bad command lines, free constants and free: sections are one line
# and exit 2, before anything runs; the fitted profile is never written over its input.
# usage: bash calibrate.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$2
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
# kunpeng920 without its free: section: the constants are the test's own
sed '/^free:$/,$d' "$SRC/profiles/kunpeng920.yaml" >k.yaml
K=$TMP/k.yaml
PLOT=(000 002 --quick --case cma-pernuma --case t1-g256-map_pages --case t1-g256-per-page
      --starts 1 --max-evals 20 -j2)
SMALL=("${PLOT[@]}" --no-plot)

# refused: one line, exit 2, nothing written
refuse() { # WHAT EXPECTED-SUBSTRING ARGS...
	local what=$1 want=$2
	shift 2
	"$BIN" calibrate "$@" --out "$TMP/no" >out 2>err
	local rc=$?
	[ $rc -eq 2 ] || bad "$what: exit $rc, not 2 ($(tail -1 err))"
	[ "$(grep -c . err)" -eq 1 ] || [ "$(grep -c '^iommulab' err)" -ge 1 ] ||
		bad "$what: not one line: $(cat err)"
	grep -q -- "$want" err || bad "$what: '$want' not in: $(head -1 err)"
	[ -e "$TMP/no" ] && bad "$what: wrote $TMP/no"
}
refuse "no profile" "no profile given"
refuse "no free constant" "no free constants" "$K" 000 --quick
refuse "bad --free" "expected SECTION.KEY=MIN:MAX" "$K" --free smmu.sync_ns=10
refuse "min >= max" "MIN must be below MAX" "$K" --free smmu.sync_ns=100:10
refuse "zero bound" "whole numbers" "$K" --free smmu.sync_ns=0:10
refuse "unknown key" "no such key" "$K" --free smmu.sync_nsx=1:10
refuse "not a number" "not a whole number" "$K" --free smmu.range_invalidation=1:2
refuse "beyond the loader" "outside what the profile loader accepts" "$K" \
	--free smmu.cmd_readahead_entries=1:1000000
refuse "other machine" "not the machine of profile" "$K" 004 --free smmu.sync_ns=1:9
refuse "unknown case" "no case of that label" "$K" 000 --case nope --free smmu.sync_ns=1:9
refuse "bad --starts" "--starts must be" "$K" --starts 0 --free smmu.sync_ns=1:9
# a free: section in the profile, strictly
cp "$K" p.yaml && printf 'free:\n  smmu:\n    sync_ns: { min: 10 }\n' >>p.yaml
refuse "free: without max" "needs both min and max" "$TMP/p.yaml" 000
cp "$K" p.yaml && printf 'free:\n  smmu:\n    sync_ns: { min: 10, max: 20, step: 1 }\n' >>p.yaml
refuse "free: unknown key" "expected the keys min, max" "$TMP/p.yaml" 000
cp "$K" p.yaml && printf 'free: 3\n' >>p.yaml
refuse "free: not a mapping" "free: expected a mapping" "$TMP/p.yaml" 000
"$BIN" run --quick --profile "$TMP/p.yaml" --out r 000 >/dev/null 2>err &&
	bad "run accepted a profile whose free: is not a mapping"

# a small fit, started away from the profile's sync_ns
sed 's/^  sync_ns: [0-9]*$/  sync_ns: 300/' "$K" >start.yaml
grep -q '^  sync_ns: 300$' start.yaml || bad "start.yaml: no sync_ns line to move"
"$BIN" calibrate "$TMP/start.yaml" "${SMALL[@]}" --free smmu.sync_ns=10:2000 \
	--free smmu.tlbi_ns=5:500 --out a >a.txt 2>a.err || bad "fit: exit $? ($(tail -1 a.err))"
for f in kunpeng920.calibrated.yaml calibrate-kunpeng920.json calibrate-kunpeng920.txt; do
	[ -s "a/$f" ] || bad "fit: no a/$f"
done
cmp -s a.txt a/calibrate-kunpeng920.txt || bad "the text report differs from stdout"
grep -q "^smmu.sync_ns .*\[10, 2000\]" a.txt || bad "no sync_ns row: $(head -8 a.txt)"
grep -q "seed000-cmdsync/cma-pernuma/cmdsync_wait" a.txt || bad "no residual of seed 000"
# only the two free constants' lines change, and a free: section is appended
sed '/^# Free constants (iommulab calibrate/,$d' a/kunpeng920.calibrated.yaml >body.yaml
grep -q '^  sync_ns: 300$' body.yaml && bad "the fit did not move sync_ns from 300"
diff start.yaml body.yaml | grep '^[<>]' | grep -v '^[<>]   sync_ns: [0-9]*$\|^[<>]   tlbi_ns: [0-9]*$' \
	| grep -v '^> $' >d.other
[ -s d.other ] && bad "more than the free constants' lines changed: $(cat d.other)"
grep -q '^free:$' a/kunpeng920.calibrated.yaml || bad "no free: section"
grep -q 'sync_ns: { min: 10, max: 2000, value: [0-9]*, fitted_on: "seed000-cmdsync seed002-map-pages \[cases' \
	a/kunpeng920.calibrated.yaml || bad "free: entry: $(grep sync_ns a/kunpeng920.calibrated.yaml)"
"$BIN" run --quick --profile a/kunpeng920.calibrated.yaml --out r 000 >/dev/null 2>err ||
	bad "the fitted profile does not run: $(tail -1 err)"
# the fitted profile's own free: section drives a second fit; same seed, same bytes
"$BIN" calibrate a/kunpeng920.calibrated.yaml "${SMALL[@]}" --out b >/dev/null 2>b.err ||
	bad "fit from the fitted profile: exit $? ($(tail -1 b.err))"
grep -q '"key": "smmu.tlbi_ns"' b/calibrate-kunpeng920.json || bad "free: section not read"
"$BIN" calibrate a/kunpeng920.calibrated.yaml "${SMALL[@]}" --out c >/dev/null 2>&1
cmp -s b/calibrate-kunpeng920.json c/calibrate-kunpeng920.json || bad "same seed, other bytes"
cmp -s b/kunpeng920.calibrated.yaml c/kunpeng920.calibrated.yaml || bad "same seed, other profile"
# the record beside the fitted profile: `run` says in-sample or not under each seed table
[ -s a/kunpeng920.calibrated.calibration.json ] || bad "no calibration record"
"$BIN" run --quick --profile a/kunpeng920.calibrated.yaml --out r 000 001 >run.txt 2>err ||
	bad "run on the fitted profile: exit $?"
grep -q "^calibration: these figures were in the calibration set (seed000-cmdsync seed002-map-pages" run.txt ||
	bad "run: no in-sample line for seed 000: $(grep calibration run.txt)"
grep -q "^calibration: not in the calibration set" run.txt ||
	bad "run: seed 001 not said to be out of the set: $(grep calibration run.txt)"
"$BIN" run --quick --profile "$K" --out r 000 >run0.txt 2>err
grep -q "^calibration" run0.txt && bad "run: a calibration line without a record"
# cross-validation: each experiment left out, its out-of-sample error in the record and in run
"$BIN" calibrate "$K" "${PLOT[@]}" --free smmu.sync_ns=10:2000 --free smmu.tlbi_ns=5:500 \
	--cross-validate --folds 2 --out cv >cv.txt 2>cv.err || bad "cross-validate: exit $? ($(tail -1 cv.err))"
grep -q "seed000-cmdsync *left out: [0-9]* of 1 figures within tolerance.*only it pins (held at the prior): smmu.sync_ns=" cv.txt ||
	bad "cross-validate: seed 000 not reported as the only one pinning sync_ns: $(grep -A3 '^cross' cv.txt)"
grep -q "2-fold over cases" cv.txt || bad "cross-validate: no case folds"
# the correlator: a PNG, its script with filled in-sample and hollow out-of-sample points per
# experiment, its numbers in the JSON (5 figures in, 5 out)
if have gnuplot "the correlator PNG"; then
	[ "$(head -c 8 cv/calibrate-kunpeng920-correlator.png | od -An -tx1 | tr -d ' \n')" = \
	  89504e470d0a1a0a ] || bad "correlator: not a PNG"
fi
grep -q "e0in using 1:2 with points pt 7" cv/calibrate-kunpeng920-correlator.gp &&
grep -q "e1out using 1:2 with points pt 6" cv/calibrate-kunpeng920-correlator.gp ||
	bad "correlator script: no filled/hollow series per experiment"
[ "$(grep -c '"in_sample": true' cv/calibrate-kunpeng920.json)" -eq 5 ] &&
[ "$(grep -c '"in_sample": false' cv/calibrate-kunpeng920.json)" -eq 5 ] ||
	bad "correlator JSON: not 5 in-sample and 5 out-of-sample points"
"$BIN" run --quick --profile cv/kunpeng920.calibrated.yaml --out r 002 >run2.txt 2>err
grep -q "^calibration: .*out of sample (experiment left out): [0-9]* of 4 within tolerance" run2.txt ||
	bad "run: no out-of-sample line for seed 002: $(grep calibration run2.txt)"
# the importer: dma_map_benchmark's output (the tool's lines, as iommulab bench prints them
# too) into entries; a 0.0 latency gives no entry; a bad file is one line, exit 2, no output
"$BIN" calibrate --import dma_map_benchmark "$SRC/tests/data/calibrate/dma_map_benchmark.txt" \
	>m.yaml 2>err || bad "import: exit $? ($(cat err))"
[ "$(grep -c '^  - workload: dma_map_benchmark$' m.yaml)" -eq 3 ] || bad "import: not 3 entries: $(cat m.yaml)"
grep -q "params: { threads: 4, granule: 1, node: 2 }" m.yaml || bad "import: node 2 lost"
grep -q "# map latency 0.0 us (threads 4, granule 1)" m.yaml || bad "import: the 0.0 latency not noted"
head -3 "$SRC/tests/data/calibrate/dma_map_benchmark.txt" >short.txt
for f in "$K" short.txt; do
	"$BIN" calibrate --import dma_map_benchmark "$f" >o.txt 2>err
	[ $? -eq 2 ] && [ "$(grep -c . err)" -eq 1 ] && [ ! -s o.txt ] &&
		grep -q "not dma_map_benchmark output" err || bad "import of $f: not refused in one line: $(cat err)"
done
# fio's JSON (tests/data/calibrate/fio.json: fio's JSON layout, figures of the model's drive)
"$BIN" calibrate --import fio "$SRC/tests/data/calibrate/fio.json" >f.yaml 2>err || bad "import fio: exit $? ($(cat err))"
[ "$(grep -c '^  - workload: fio$' f.yaml)" -eq 5 ] || bad "import fio: not 5 entries: $(cat f.yaml)"
grep -q "params: { rw: 0, bs: 4096, iodepth: 32, numjobs: 8 }" f.yaml || bad "import fio: options: $(head -4 f.yaml)"
grep -A2 "metric: bw" f.yaml | grep -q "value: 3440.64" || bad "import fio: bw not in MB/s"
grep -A2 "metric: clat_p99$" f.yaml | grep -q "value: 329.728" || bad "import fio: clat p99 not in us"
sed 's/"randread",$/"randrw",/' "$SRC/tests/data/calibrate/fio.json" >rw.json
echo '{"jobs": []}' >nojobs.json
for f in "$SRC/tests/data/calibrate/dma_map_benchmark.txt" rw.json nojobs.json; do
	"$BIN" calibrate --import fio "$f" >o.txt 2>err
	[ $? -eq 2 ] && [ "$(grep -c . err)" -eq 1 ] && [ ! -s o.txt ] ||
		bad "import fio of $f: not refused in one line: $(cat err)"
	case $f in rw.json) cp err rw.err ;; esac
done
grep -q "rw.json: job 0: rw 'randrw' and bs '4k': not fio's randread" rw.err ||
	bad "import fio: the refused job's options not named: $(cat rw.err)"
# --measurements: the entries fitted (and only they: no seed scenario), checked on the machine
"$BIN" calibrate "$K" --measurements m.yaml --free compute.iommu_unmap_ns=10:1000 \
	--starts 1 --max-evals 10 -j2 --no-plot --out me >me.txt 2>err || bad "measurements: exit $? ($(tail -1 err))"
grep -q "^measurement-3/measured/unmap_latency  *3.45 " me.txt || bad "measurements: no entry 3: $(grep measurement me.txt)"
grep -q "^seed" me.txt && bad "measurements: seed figures in a --measurements set"
printf 'measurements:\n  - workload: dma_map_benchmark\n    params: { threads: 64 }\n    metric: map_latency\n    value: 1\n    unit: us\n' >m64.yaml
refuse "measurement beyond the machine" "m64.yaml:2:5: measurement 1: .*threads: 64" "$K" \
	--measurements "$TMP/m64.yaml" --free smmu.sync_ns=10:2000
printf 'measurements:\n  - workload: dma_map_benchmark\n    metric: map_latency\n    value: 1\n    unit: us\n    speed: 3\n' >mk.yaml
refuse "measurement unknown key" "mk.yaml:6:5: measurement 1: unknown key 'speed'" "$K" \
	--measurements "$TMP/mk.yaml" --free smmu.sync_ns=10:2000
printf 'measurements:\n  - workload: dma_map_benchmark\n    metric: map_latency\n    value: 1\n    unit: ns\n' >mu.yaml
refuse "measurement wrong unit" "mu.yaml:2:5: measurement 1: .*unit" "$K" \
	--measurements "$TMP/mu.yaml" --free smmu.sync_ns=10:2000
# never over the input
cp a/kunpeng920.calibrated.yaml in.yaml
mkdir -p same && cp in.yaml same/kunpeng920.calibrated.yaml
"$BIN" calibrate same/kunpeng920.calibrated.yaml "${SMALL[@]}" --out same >/dev/null 2>err
[ $? -eq 1 ] || bad "fit over its input: not exit 1"
cmp -s in.yaml same/kunpeng920.calibrated.yaml || bad "the input profile was overwritten"
exit $fail
