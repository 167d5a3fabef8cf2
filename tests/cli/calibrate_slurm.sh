#!/bin/bash
# calibrate_slurm.sh — scripts/slurm/calibrate.sbatch end to end on a running Slurm: a small
# cross-validated fit (two experiments, three cases, two case folds: five folds) as a job
# array and the dependent merge gives the bytes of one local `calibrate --cross-validate`
# (report, JSON, record, fitted profile); a bad command line submits nothing. Needs a Slurm
# that answers `sinfo` (scripts/slurm/install-single-node.sh starts one); with
# ILAB_SLURM_INSTALL=1 it runs that script first; else it says why and skips (exit 77). .ci/run
# runs it in its Slurm step, where Slurm must be there.
# usage: bash calibrate_slurm.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad
. "$SRC/tests/support/slurm_lib.sh" # skip, TMP, jobs
sed '/^free:$/,$d' "$SRC/profiles/kunpeng920.yaml" >k.yaml
ARGS=(k.yaml 000 002 --quick --case cma-pernuma --case t1-g256-map_pages --case t1-g256-per-page
      --starts 1 --max-evals 20 --free smmu.sync_ns=10:2000 --free smmu.tlbi_ns=5:500
      --cross-validate --folds 2 --no-plot)

"$BIN" calibrate "${ARGS[@]}" -j1 --out local >/dev/null 2>err || bad "local run: exit $? ($(tail -1 err))"
# a bad command line: its one line, exit 2, nothing submitted
IOMMULAB=$BIN "$SRC/scripts/slurm/calibrate.sbatch" bad "${ARGS[@]}" --starts 0 >ids 2>err
[ $? -eq 2 ] && grep -q -- "--starts must be" err && [ ! -s ids ] && [ ! -e bad ] ||
	bad "a bad command line: not refused before submitting: $(cat ids err)"
ids=$(IOMMULAB=$BIN "$SRC/scripts/slurm/calibrate.sbatch" out "${ARGS[@]}" 2>err) ||
	{ bad "calibrate.sbatch: exit $? ($(cat err))"; exit 1; }
read -r array merge <<<"$ids"
jobs=("$array" "$merge")
for ((t = 0; t < 300; t++)); do
	state=$(squeue -h -j "$array,$merge" -o '%i %T %r' 2>/dev/null)
	[ -z "$state" ] && break
	grep -q DependencyNeverSatisfied <<<"$state" && { bad "a job waits for ever: $state"; break; }
	sleep 1
done
[ -z "$state" ] || bad "the jobs did not finish in 300 s: $state"
jobs=()
for k in 0 1 2 3 4; do
	[ -s out/calibrate-kunpeng920-fold-$k.json ] && [ "$(cat out/.fold-$k.rc 2>/dev/null)" = 0 ] ||
		bad "fold $k: no result ($(cat "out/slurm-${array}_$k.out" 2>/dev/null | tail -2))"
done
for f in calibrate-kunpeng920.txt calibrate-kunpeng920.json kunpeng920.calibrated.yaml \
	 kunpeng920.calibrated.calibration.json; do
	cmp -s "local/$f" "out/$f" || bad "the array's $f differs from the local run's ($(tail -2 out/slurm-merge-*.out 2>/dev/null))"
done

[ $fail -eq 0 ] && echo "cli/calibrate_slurm: all checks passed"
exit $fail
