#!/usr/bin/env bash
# Runs the simulator on AArch64: cross-builds the tree for aarch64 (hand-written AArch64 fiber
# switch, src/sim/arch/aarch64) in a Debian 12 chroot, runs the single-threaded tests under
# qemu-aarch64 (user mode), and checks that `iommulab run --quick --json` gives byte for byte
# the JSON of this host's build: the simulated results do not depend on the architecture.
#   scripts/check-aarch64.sh [ROOT_DIR]     (default build-aarch64/root; needs root and network)
# The chroot (~1 GB) is kept for the next run; delete the directory to start afresh (nothing
# stays mounted in it after the script ends).
#
# Tests that start host threads or fork are not run: qemu-aarch64 7.2 (Debian 12) hangs in
# clone() on newer host kernels (a five-line pthread_create or fork program hangs the same
# way on the 6.18 kernel this was written on), and test_mem's RSS check measures qemu's own
# memory. Everything the simulator runs is single-threaded, so it is all covered.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-$src/build-aarch64/root}
mkdir -p "$(dirname "$root")"
root=$(cd "$(dirname "$root")" && pwd)/$(basename "$root")

. "$src/scripts/chroot-lib.sh"
chroot_setup check-aarch64 "$root"

if [ ! -x "$root/usr/bin/qemu-aarch64" ]; then
  echo "check-aarch64: installing the cross toolchain, qemu-user and the arm64 libraries"
  in_root 'dpkg --add-architecture arm64 && apt-get update -qq &&
    apt-get install -y -qq --no-install-recommends build-essential cmake pkg-config \
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
      libhwloc-dev:arm64 libhwloc-plugins:arm64 liburcu-dev:arm64 libyaml-dev:arm64 \
      libjansson-dev:arm64 libcmocka-dev:arm64 libnlopt-dev:arm64 >/dev/null'
fi

echo "check-aarch64: building this tree (HEAD: $(git -C "$src" rev-parse --short HEAD), with local changes) for aarch64"
copy_tree_to_root "$src"
in_root 'cd /src && cmake -S . -B build-a64 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
           -DCMAKE_TOOLCHAIN_FILE=/src/cmake/aarch64-linux-gnu.cmake >/dev/null &&
         cmake --build build-a64 -j"$(nproc)" 2>&1 | grep -E "warning:|error:" || true'
in_root 'grep -q "src/sim/arch/aarch64/fiber_switch.S" /src/build-a64/CMakeFiles/iommulab.dir/build.make' ||
  { echo "check-aarch64: the build did not use the AArch64 fiber switch" >&2; exit 1; }

echo "check-aarch64: single-threaded tests under qemu-aarch64"
in_root 'cd /src && ctest --test-dir build-a64 -j"$(nproc)" --output-on-failure \
           -L "sim|hw|experiments|topo|api|workloads" -LE threads \
           -E "sim/test_sim_stack|workloads/test_allreduce"'

echo "check-aarch64: iommulab run --quick --json, aarch64 (qemu) against this host"
in_root 'cd /src && qemu-aarch64 -L /usr/aarch64-linux-gnu build-a64/iommulab run --quick --json --out /tmp/a64-run > /tmp/a64.json 2>/tmp/a64-run.log'
host_build=$(host_cli_build "$src")
"$host_build/iommulab" run --quick --json --out "$root/tmp/host-run" > "$root/tmp/host.json" 2>/dev/null
cmp "$root/tmp/host.json" "$root/tmp/a64.json"
echo "check-aarch64: identical result JSON ($(wc -c < "$root/tmp/a64.json") bytes): the AArch64 build simulates the same machine"
