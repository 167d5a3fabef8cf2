#!/usr/bin/env bash
# Runs the README's two commands on a fresh Debian 12 machine: a new minimal root
# (debootstrap --variant=minbase bookworm) with nothing installed, this tree copied in, then
# `./test.sh` and `./run.sh` as root in it, as a new user of the project would. Checks that
# both succeed and that the result files (one per built-in scenario) are byte-identical to this host's build's.
#   scripts/check-fresh-debian.sh [ROOT_DIR]   (default build-fresh/root; needs root, network)
# The root is deleted first (it must be fresh) and after a successful run.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-$src/build-fresh/root}
mkdir -p "$(dirname "$root")"
root=$(cd "$(dirname "$root")" && pwd)/$(basename "$root")

if grep -q " $root/" /proc/mounts; then
  echo "check-fresh-debian: something is still mounted under $root; not deleting it" >&2
  exit 1
fi
rm -rf "$root"

. "$src/scripts/chroot-lib.sh"
chroot_setup check-fresh-debian "$root"
copy_tree_to_root "$src"
echo "check-fresh-debian: tree $(git -C "$src" rev-parse --short HEAD) (with local changes) in a fresh Debian 12 root"

t0=$(date +%s)
in_root 'cd /src && ./test.sh' > "$root/test.log" 2>&1 ||
  { tail -30 "$root/test.log"; echo "check-fresh-debian: ./test.sh failed (log: $root/test.log)" >&2; exit 1; }
t1=$(date +%s)
grep -E "tests passed" "$root/test.log"
echo "check-fresh-debian: ./test.sh passed in $((t1 - t0)) s (packages, build, tests)"
in_root 'cd /src && ./run.sh' > "$root/run.log" 2>&1 ||
  { tail -30 "$root/run.log"; echo "check-fresh-debian: ./run.sh failed (log: $root/run.log)" >&2; exit 1; }
t2=$(date +%s)
tail -1 "$root/run.log"
echo "check-fresh-debian: ./run.sh passed in $((t2 - t1)) s"

host_build=$(host_cli_build "$src")
host_out=$(mktemp -d)
"$host_build/iommulab" run --out "$host_out" >/dev/null 2>&1
n=0
for f in "$host_out"/*.json; do
  cmp "$f" "$root/src/results/$(basename "$f")"
  n=$((n + 1))
done
rm -rf "$host_out"
echo "check-fresh-debian: $n result files byte-identical to this host's build"

chroot_cleanup
if grep -q " $root/" /proc/mounts; then
  echo "check-fresh-debian: $root still has mounts; left in place" >&2
  exit 1
fi
rm -rf "$root"
