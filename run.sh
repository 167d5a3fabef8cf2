#!/usr/bin/env bash
# The main job on its built-in default: install the Debian packages that are missing (needs
# root; otherwise prints the apt-get line), build, and run `iommulab run` (all the built-in
# scenarios). Arguments go to `iommulab run` unchanged, e.g. ./run.sh seed002 --quick.
# A bash script rather than `make run` alone, so that it works where make is not yet installed.
# The arguments are passed as "$@", never through make's ARGS string, which the shell would
# split again (a path with a space, or a `;`, would change the command).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh --check || scripts/install-deps.sh
make build >&2 # stdout is iommulab's alone (run --json)
exec "${BUILD:-build}/iommulab" run "$@"
