#!/usr/bin/env bash
# Rewrite tests/data/expected/quick-figures.txt, the figures that tests/experiments/
# test_results_regression.c pins, from `iommulab run --quick --json` of the current tree.
# Run it when a change of the simulated results is wanted, and commit the file with that
# change: the diff of the file shows in review which figures moved, and by how much, and the
# commit's message names them on the `Moved:` line this script prints (CI checks it).
#   scripts/update-expected.sh [BUILD_DIR]      (default: build; configured if need be)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=$(nproc 2>/dev/null || echo 2)
out=tests/data/expected/quick-figures.txt

[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs" --target iommulab-cli test_results_regression >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ILAB_UPDATE_EXPECTED="$PWD/$out" "$build/test_results_regression" >"$log" 2>&1 || {
	cat "$log" >&2
	echo "update-expected: the quick run failed (above); $out left as it was" >&2
	exit 1
}
"$build/test_results_regression" >"$log" 2>&1 || {
	cat "$log" >&2
	echo "update-expected: the new $out does not pass its own test" >&2
	exit 1
}
if git diff --quiet -- "$out" 2>/dev/null; then
	echo "update-expected: $out unchanged"
else
	echo "update-expected: $out rewritten; the figures that moved:"
	git diff --stat -- "$out"
	git diff -U0 -- "$out" | grep -E '^[-+]figure' || true
	# CI (scripts/check-expected-moves.py) fails a commit of this file whose message does
	# not name every case that moved: the line to paste, against the last commit.
	git show HEAD:"$out" >"$log" 2>/dev/null || : >"$log"
	moved=$(python3 scripts/check-expected-moves.py --moved-line "$log" "$out")
	echo "update-expected: put this line in the commit message (CI checks it):"
	echo "$moved"
fi
