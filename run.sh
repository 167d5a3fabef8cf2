#!/usr/bin/env bash
# The main job on its built-in default: install the Debian packages that are missing (needs
# root; otherwise prints the apt-get line), build, and run `iommulab run` (all five seed
# experiments). Arguments go to `iommulab run`, e.g. ./run.sh seed002 --quick.
# A bash script rather than `make run` alone, so that it works where make is not yet installed.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh --check || scripts/install-deps.sh
exec make run ARGS="$*"
