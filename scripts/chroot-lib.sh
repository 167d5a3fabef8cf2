# Sourced by scripts/check-*.sh: a Debian 12 chroot to run something in, made safely.
#   chroot_setup NAME ROOT   debootstrap ROOT if it is not a Debian root yet, mount its /proc
#                            and a private /dev, copy resolv.conf; unmounted on any exit
#   in_root CMD              run CMD with bash inside ROOT (as root, clean environment)
# The chroot gets its own small /dev (a tmpfs with the few nodes apt, compilers and qemu use),
# never a bind mount of the host's: an `rm -rf` of the root while something is still mounted
# in it would otherwise delete the host's device nodes.

chroot_mounted=()
chroot_cleanup() {
  for ((i = ${#chroot_mounted[@]} - 1; i >= 0; i--)); do
    umount "${chroot_mounted[$i]}" 2>/dev/null || umount -l "${chroot_mounted[$i]}" || true
  done
  chroot_mounted=()
  # Anything else mounted under the root meanwhile (a second /proc was once left behind,
  # busy, after a fresh-root run): detach it too, deepest first.
  if [ -n "${chroot_root:-}" ]; then
    local m
    for m in $(awk -v r="$chroot_root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
      umount -l "$m" || true
    done
  fi
}

chroot_setup() {
  local name=$1
  chroot_root=$2
  if [ "$(id -u)" -ne 0 ]; then
    echo "$name: needs root (debootstrap, chroot)" >&2
    exit 1
  fi
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
  [ -e "$chroot_root/etc/debian_version" ] ||
    debootstrap --variant=minbase bookworm "$chroot_root" http://deb.debian.org/debian >/dev/null
  trap chroot_cleanup EXIT
  trap 'exit 130' INT TERM HUP
  if ! mountpoint -q "$chroot_root/proc"; then
    mount -t proc proc "$chroot_root/proc"
    chroot_mounted+=("$chroot_root/proc")
  fi
  if ! mountpoint -q "$chroot_root/dev"; then
    mount -t tmpfs -o mode=755,size=1m,dev ilab-dev "$chroot_root/dev"
    chroot_mounted+=("$chroot_root/dev")
    local n
    for n in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
      set -- $n
      mknod -m 666 "$chroot_root/dev/$1" c "$2" "$3"
    done
    ln -s /proc/self/fd "$chroot_root/dev/fd"
    ln -s /proc/self/fd/0 "$chroot_root/dev/stdin"
    ln -s /proc/self/fd/1 "$chroot_root/dev/stdout"
    ln -s /proc/self/fd/2 "$chroot_root/dev/stderr"
    mkdir "$chroot_root/dev/shm" "$chroot_root/dev/pts"
  fi
  cp /etc/resolv.conf "$chroot_root/etc/resolv.conf"
}

in_root() {
  chroot "$chroot_root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive IOMMULAB_DATADIR=/src bash -c "$1"
}

# Copy this tree (tracked files and untracked ones git does not ignore) to ROOT/src.
copy_tree_to_root() {
  local src=$1
  rm -rf "$chroot_root/src"
  mkdir -p "$chroot_root/src"
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
     tar --null -T - -cf -) | tar -xf - -C "$chroot_root/src"
}

# This host's build of the CLI, up to date with the tree (the comparisons must not trust a
# binary built before the last change): configures build/ if needed, builds iommulab-cli,
# prints the build directory.
host_cli_build() {
  local src=$1 b="$1/build"
  [ -f "$b/CMakeCache.txt" ] || cmake -S "$src" -B "$b" >/dev/null
  cmake --build "$b" -j"$(nproc)" --target iommulab-cli >/dev/null
  echo "$b"
}
