#!/bin/bash
# slurm.sh — scripts/slurm/sweep.sbatch end to end on a running Slurm: the 24-case sweep as a
# 3-task job array and the dependent merge give the bytes of a local unsharded run; a bad sweep
# file submits nothing. Needs a Slurm that answers `sinfo` (scripts/slurm/install-single-node.sh
# starts one on this machine); with ILAB_SLURM_INSTALL=1 (.ci/run) it runs that script first.
# Where Slurm cannot be installed or started it says why and skips (exit 77), in CI too: .ci/run
# runs it in a step of its own that says whether Slurm was there (docs/sweep.md).
# usage: bash slurm.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad
skip() { echo "SKIPPED: Slurm not installable here ($*)"; exit 77; }

if ! command -v sinfo >/dev/null || [ -z "$(sinfo -h -N -t idle,mix,alloc -o %N 2>/dev/null)" ]; then
	[ "${ILAB_SLURM_INSTALL:-0}" = 1 ] ||
		skip "no Slurm node answers sinfo; scripts/slurm/install-single-node.sh starts one, or set ILAB_SLURM_INSTALL=1"
	why=$("$SRC/scripts/slurm/install-single-node.sh" 2>&1 >/dev/null) ||
		skip "${why#install-single-node: not installable: }"
fi
TMP=$(mktemp -d)
jobs=()
trap '[ ${#jobs[@]} -gt 0 ] && scancel "${jobs[@]}" 2>/dev/null; rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
SWEEP=$SRC/tests/data/sweeps/grid24.yaml

"$BIN" sweep "$SWEEP" --no-plot -o local.json 2>/dev/null || bad "local sweep: exit $?"
ids=$(IOMMULAB=$BIN "$SRC/scripts/slurm/sweep.sbatch" "$SWEEP" 3 out 2>err) ||
	{ bad "sweep.sbatch: exit $? ($(cat err))"; exit 1; }
read -r array merge <<<"$ids"
jobs=("$array" "$merge")
# the merge job leaves the queue when it has run; a failed shard leaves it pending forever
for ((t = 0; t < 300; t++)); do
	state=$(squeue -h -j "$array,$merge" -o '%i %T %r' 2>/dev/null)
	[ -z "$state" ] && break
	if grep -q DependencyNeverSatisfied <<<"$state"; then
		bad "a shard failed: $(cat out/slurm-*_*.out 2>/dev/null | tail -3)"
		break
	fi
	sleep 1
done
[ -z "$state" ] || bad "the jobs did not finish in 300 s: $state"
jobs=()
for i in 0 1 2; do
	[ -s "out/shard-$i-of-3.json" ] || bad "no shard $i of 3 ($(cat "out/slurm-${array}_$i.out" 2>/dev/null))"
done
if [ -s out/sweep.json ]; then
	cmp -s local.json out/sweep.json || bad "the merged result of the Slurm jobs differs from the local run"
else
	bad "no merged result ($(cat out/slurm-merge-*.out 2>/dev/null))"
fi
grep -q "wrote $TMP/out/sweep.json" out/slurm-merge-*.out || bad "the merge job's log does not say what it wrote"

# a bad sweep file: exit 2 from the submitting call, and no job submitted
printf 'name: bad\nworkload: dma_map_benchmark\nprofile: kunpeng920\ngrid: []\n' >bad.yaml
before=$(squeue -h | wc -l)
IOMMULAB=$BIN "$SRC/scripts/slurm/sweep.sbatch" bad.yaml 2 out2 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || bad "sweep.sbatch with a bad sweep file: exit $rc, want 2"
[ "$(squeue -h | wc -l)" -eq "$before" ] || bad "a bad sweep file was submitted"

[ $fail -eq 0 ] && echo "cli/slurm: all checks passed (jobs $array and $merge)"
exit $fail
