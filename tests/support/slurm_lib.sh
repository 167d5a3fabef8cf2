# slurm_lib.sh — sourced by the CLI tests that need a running Slurm (slurm.sh,
# calibrate_slurm.sh), after SRC is set: start Slurm when ILAB_SLURM_INSTALL=1 asks for it,
# or say why not and skip (exit 77); then work in a scratch directory whose submitted jobs
# (append their ids to `jobs`) are cancelled, and which is removed, on exit.
skip() { echo "SKIPPED: Slurm not installable here ($*)"; exit 77; }

if ! command -v sinfo >/dev/null || [ -z "$(sinfo -h -N -t idle,mix,alloc -o %N 2>/dev/null)" ]; then
	[ "${ILAB_SLURM_INSTALL:-0}" = 1 ] ||
		skip "no Slurm node answers sinfo; scripts/slurm/install-single-node.sh starts one, or set ILAB_SLURM_INSTALL=1"
	why=$("$SRC/scripts/slurm/install-single-node.sh" 2>&1 >/dev/null) ||
		skip "${why#install-single-node: not installable: }"
fi
TMP=$(mktemp -d)
jobs=()
trap '[ ${#jobs[@]} -gt 0 ] && scancel "${jobs[@]}" 2>/dev/null; rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
