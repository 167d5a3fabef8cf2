#!/usr/bin/env bash
# `make install` puts the library, headers, pkg-config file and CLI under a prefix, and a
# program built only from what was installed (via pkg-config) links and runs.
set -euo pipefail
bin=$1
builddir=$(dirname "$bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$builddir" --prefix "$tmp/prefix" >/dev/null
for f in bin/iommulab include/iommulab/plat.h include/iommulab/smmuv3.h; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
pc=$(ls "$tmp"/prefix/lib*/pkgconfig/iommulab.pc 2>/dev/null | head -n1)
[ -n "$pc" ] || { echo "FAIL: iommulab.pc not installed"; exit 1; }
lib=$(ls "$tmp"/prefix/lib*/libiommulab.a 2>/dev/null | head -n1)
[ -n "$lib" ] || { echo "FAIL: libiommulab.a not installed"; exit 1; }

cat > "$tmp/use.c" <<'C'
#include <iommulab/smmuv3.h>
#include <iommulab/topo.h>
#include <stdio.h>
int main(void)
{
	struct smmu_config cfg;
	struct ilab_topo *t;
	char err[256];
	smmu_config_default(&cfg);
	if (ilab_topo_load("kunpeng920", &t, err, sizeof(err)))
		return 1;
	printf("%u %u\n", ilab_topo_nr_nodes(t), cfg.oas);
	ilab_topo_free(t);
	return 0;
}
C
export PKG_CONFIG_PATH="$(dirname "$pc")"

# A sanitizer build's archive needs the same runtime in the program that links it.
san=$(sed -n 's/^ILAB_SANITIZE:STRING=//p' "$builddir/CMakeCache.txt" 2>/dev/null || true)
case "$san" in
  address) sanflags="-fsanitize=address,undefined" ;;
  thread) sanflags="-fsanitize=thread" ;;
  *) sanflags="" ;;
esac
cc $sanflags -o "$tmp/use" "$tmp/use.c" $(pkg-config --cflags --libs iommulab)
out=$("$tmp/use")
[ "${out%% *}" = "4" ] || { echo "FAIL: installed program printed '$out'"; exit 1; }
"$tmp/prefix/bin/iommulab" topo --topology kunpeng920 >/dev/null || { echo "FAIL: installed CLI"; exit 1; }
echo "install: ok ($out)"
