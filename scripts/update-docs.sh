#!/usr/bin/env bash
# Refresh the figures of README.md and docs/*.md after a change of the model (docs/docs-figures.md):
# rewrites every generated figure (<!-- gen: CMD -->) from its command's output, then says which
# figures need a person: floors the run no longer reaches (<!-- floor: CMD -->) and measured-on
# figures whose commit predates a change of src/ profiles/ scenarios/ tools/ (re-measure them
# with their command and put the new commit in). Commit the docs with the change that moved them.
#   scripts/update-docs.sh [BUILD_DIR]      (default: build; configured if need be)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=$(nproc 2>/dev/null || echo 2)

[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null || { echo "update-docs: the build failed" >&2; exit 1; }

scripts/docs-figures.py update --build "$build"
rc=$?
if git diff --quiet -- README.md docs 2>/dev/null; then
	echo "update-docs: no generated figure moved"
else
	echo "update-docs: generated figures rewritten:"
	git diff --stat -- README.md docs
fi
echo
echo "update-docs: measured-on figures (re-measure those marked '<- code changed since'):"
scripts/docs-figures.py report
[ $rc -eq 0 ] || echo "update-docs: some figures need attention (above: floors, failing commands)" >&2
exit $rc
