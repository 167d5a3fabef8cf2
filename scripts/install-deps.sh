#!/usr/bin/env bash
# Install the Debian 12 packages iommulab needs to build, test, fuzz and plot. Idempotent:
# packages already present are left alone, and nothing runs when all are there.
#   scripts/install-deps.sh          install what is missing (needs root)
#   scripts/install-deps.sh --check  exit 0 if everything is installed, 1 otherwise (silent)
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config python3
  libhwloc-dev hwloc liburcu-dev libyaml-dev libjansson-dev libcmocka-dev
  libhwloc-plugins   # libxml2 XML import: hwloc's built-in parser rejects hand-edited XML
  gnuplot-nox
  libnlopt-dev   # iommulab calibrate's optimiser
  clang libclang-rt-14-dev   # libFuzzer and sanitizer runtimes
  chromium   # tests/cli/results_page.sh opens the results page in headless Chromium
  fio iperf3   # the real tools iommulab fio / iperf3 are checked against (tests/cli/fio_real.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${1:-}" = "--check" ]; then
  [ ${#missing[@]} -eq 0 ]
  exit
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

line="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root:  $line" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
