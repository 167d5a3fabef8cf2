#!/usr/bin/env bash
# A profile-guided Release build (gcc, or clang with CC=clang): an instrumented build, a
# training run of the simulator (bench_sim_dma at 1, 16 and 128 simulated CPUs, a lazy-mode
# and a scatter-gather `iommulab bench`, the quick seed experiments), then a rebuild of
# everything with the profiles (ILAB_PGO in CMakeLists.txt), with link-time optimisation
# (ILAB_LTO; ILAB_LTO=OFF in the environment leaves it out). Simulated results are the same as
# a plain build's; the simulator runs ~15-20% faster (docs/journal.md, "passages moved from
# docs/simulation.md", "Seventh pass").
#   scripts/pgo-build.sh [BUILD_DIR] [JOBS]     (defaults: build-pgo, 2)
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-pgo}
jobs=${2:-2}
mkdir -p "$build"
build=$(cd "$build" && pwd)
data="$build/pgo-data"

rm -rf "$data"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DILAB_PGO=generate -DILAB_LTO="${ILAB_LTO:-ON}" \
      -DILAB_PGO_DIR="$data" >/dev/null
cmake --build "$build" -j"$jobs" --target iommulab-cli bench_sim_dma

echo "pgo-build: training"
for n in 1 16 128; do
  "$build/bench_sim_dma" kunpeng920 "$n" 20000 >/dev/null
done
"$build/iommulab" bench --engine sim -t 16 --mode lazy --duration-ms 2 --json >/dev/null
"$build/iommulab" bench --engine sim -t 32 -m sg --duration-ms 2 --json >/dev/null
"$build/iommulab" run --quick --out "$build/pgo-train-run" >/dev/null
rm -rf "$build/pgo-train-run"

if compgen -G "$data/*.profraw" >/dev/null; then # clang: merge the raw profiles
  "${LLVM_PROFDATA:-llvm-profdata}" merge -o "$data/ilab.profdata" "$data"/*.profraw
fi
cmake -S "$src" -B "$build" -DILAB_PGO=use >/dev/null
cmake --build "$build" -j"$jobs"
echo "pgo-build: done ($build)"
