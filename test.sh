#!/usr/bin/env bash
# The whole test suite: install the Debian packages that are missing (needs root; otherwise
# prints the apt-get line), build, and run every test with ctest (`make test`).
# A bash script rather than `make test` alone, so that it works where make is not yet installed.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh --check || scripts/install-deps.sh
exec make test
