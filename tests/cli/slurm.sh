#!/bin/bash
# slurm.sh — scripts/slurm/sweep.sbatch end to end on a running Slurm: the 24-case sweep as a
# 3-task job array and the dependent merge give the bytes of a local unsharded run, with the
# site's set-up hook (ILAB_SLURM_SETUP) sourced by every job; a shard that fails ends the merge
# job (it names the shard; nothing stays PENDING) and --rerun-failed completes the sweep; a bad
# sweep file submits nothing. Needs a Slurm that answers `sinfo` (scripts/slurm/install-single-node.sh
# starts one on this machine); with ILAB_SLURM_INSTALL=1 (.ci/run) it runs that script first.
# Where Slurm cannot be installed or started it says why and skips (exit 77), in CI too: .ci/run
# runs it in a step of its own that says whether Slurm was there (docs/sweep.md).
# usage: bash slurm.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad
. "$SRC/tests/support/slurm_lib.sh" # skip, TMP, jobs
SWEEP=$SRC/tests/data/sweeps/grid24.yaml

"$BIN" sweep "$SWEEP" --no-plot -o local.json 2>/dev/null || bad "local sweep: exit $?"
# the site's set-up hook: every job sources it on its node before iommulab runs
printf 'echo "$SLURM_JOB_ID" >>%s/setup.log\n' "$TMP" >setup.sh
ids=$(ILAB_SLURM_SETUP=setup.sh IOMMULAB=$BIN "$SRC/scripts/slurm/sweep.sbatch" "$SWEEP" 3 out 2>err) ||
	{ bad "sweep.sbatch: exit $? ($(cat err))"; exit 1; }
read -r array merge <<<"$ids"
jobs=("$array" "$merge")
# both jobs leave the queue when they have run; nothing may stay PENDING on a dependency
wait_jobs() {
	local state t
	for ((t = 0; t < 300; t++)); do
		state=$(squeue -h -j "$1" -o '%i %T %r' 2>/dev/null)
		[ -z "$state" ] && return 0
		if grep -q DependencyNeverSatisfied <<<"$state"; then
			bad "a job waits for ever: $state"
			return 1
		fi
		sleep 1
	done
	bad "the jobs $1 did not finish in 300 s: $state"
	return 1
}
wait_jobs "$array,$merge"
jobs=()
for i in 0 1 2; do
	[ -s "out/shard-$i-of-3.json" ] || bad "no shard $i of 3 ($(cat "out/slurm-${array}_$i.out" 2>/dev/null))"
done
if [ -s out/sweep.json ]; then
	cmp -s local.json out/sweep.json || bad "the merged result of the Slurm jobs differs from the local run"
else
	bad "no merged result ($(cat out/slurm-merge-*.out 2>/dev/null))"
fi
[ "$(grep -c . setup.log 2>/dev/null)" -eq 4 ] ||
	bad "ILAB_SLURM_SETUP sourced $(grep -c . setup.log 2>/dev/null) times, not by 3 shards and the merge"
grep -q "wrote $TMP/out/sweep.json" out/slurm-merge-*.out || bad "the merge job's log does not say what it wrote"

# a shard that fails (a binary that fails shard 1 once): the merge job ends, names it and
# merges nothing; --rerun-failed submits shard 1 alone and the merge, which completes the sweep
cat >flaky <<EOF
#!/bin/bash
case " \$* " in *" --shard 1/3 "*) [ -e $TMP/failed-once ] || { touch $TMP/failed-once; exit 3; } ;; esac
exec "$BIN" "\$@"
EOF
chmod +x flaky
ids=$(IOMMULAB=$TMP/flaky "$SRC/scripts/slurm/sweep.sbatch" "$SWEEP" 3 out3 2>err) ||
	{ bad "sweep.sbatch (flaky): exit $? ($(cat err))"; exit 1; }
read -r array merge <<<"$ids"
jobs=("$array" "$merge")
wait_jobs "$array,$merge"
[ -e failed-once ] || bad "the flaky binary never failed shard 1"
[ ! -e out3/sweep.json ] || bad "a sweep with a failed shard was merged"
grep -q "shard(s) 1 of 3 failed.*--rerun-failed $TMP/out3" out3/slurm-merge-*.out ||
	bad "the merge job's log does not name the failed shard: $(cat out3/slurm-merge-*.out)"
ids=$("$SRC/scripts/slurm/sweep.sbatch" --rerun-failed out3 2>err) ||
	{ bad "--rerun-failed: exit $? ($(cat err))"; exit 1; }
grep -q "re-running shard(s) 1 of 3" err || bad "--rerun-failed did not re-run shard 1 alone: $(cat err)"
read -r array merge <<<"$ids"
jobs=("$array" "$merge")
wait_jobs "$array,$merge"
jobs=()
cmp -s local.json out3/sweep.json || bad "--rerun-failed: the merged result differs from the local run"
out=$("$SRC/scripts/slurm/sweep.sbatch" --rerun-failed out3 2>&1) ||
	bad "--rerun-failed on a complete sweep: exit $?"
grep -q "nothing to submit" <<<"$out" || bad "--rerun-failed on a complete sweep: '$out'"
"$SRC/scripts/slurm/sweep.sbatch" --rerun-failed "$TMP" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--rerun-failed on a directory that is no sweep's: not exit 2"

# a bad sweep file: exit 2 from the submitting call, and no job submitted
printf 'name: bad\nworkload: dma_map_benchmark\nprofile: kunpeng920\ngrid: []\n' >bad.yaml
before=$(squeue -h | wc -l)
IOMMULAB=$BIN "$SRC/scripts/slurm/sweep.sbatch" bad.yaml 2 out2 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || bad "sweep.sbatch with a bad sweep file: exit $rc, want 2"
[ "$(squeue -h | wc -l)" -eq "$before" ] || bad "a bad sweep file was submitted"

[ $fail -eq 0 ] && echo "cli/slurm: all checks passed (jobs $array and $merge)"
exit $fail
