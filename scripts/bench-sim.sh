#!/usr/bin/env bash
# The simulator's host speed (issue 6's benchmark): bench_sim_dma from a plain Release build
# (build-rel/) and from the profile-guided, link-time optimised build (scripts/pgo-build.sh,
# build-pgo/), run one after the other on this machine. Host ns per simulated strict 4 KiB
# map+unmap at 1, 16 and 128 simulated CPUs (best and median of five interleaved rounds),
# simulated seconds per host second, and the marginal cost per operation from 10k to 1M.
# About two minutes on two cores, most of it the two builds.
#   scripts/bench-sim.sh [PROFILE]      (default: kunpeng920)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

scripts/install-deps.sh --check >/dev/null || scripts/install-deps.sh
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-rel -j"$jobs" --target bench_sim_dma >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! scripts/pgo-build.sh build-pgo "$jobs" >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "bench-sim: the profile-guided build failed (above: the end of its output)" >&2
  exit 1
fi
build-rel/bench_sim_dma "$@"
echo
build-pgo/bench_sim_dma "$@"
