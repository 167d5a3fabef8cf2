#!/bin/bash
# calibrate_stop.sh — TERM or INT to `calibrate -j2` in the middle of an evaluation stops its
# workers and it ends by that signal, as sweep does (sweep_workers.sh): one line saying so, no
# "Interrupted system call" exit 1, nothing written in its results directory.
# usage: bash calibrate_stop.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
set -m # a background job gets INT as from a terminal, and is its own process group

workers() { cat /proc/"$1"/task/*/children 2>/dev/null; }

for sig in TERM INT; do
	# seed 002 at full sizes: an evaluation takes seconds, so the signal finds one running
	"$BIN" calibrate kunpeng920 002 --free smmu.tlbi_ns=5:500 --starts 1 -j2 \
		--out "out-$sig" --no-plot >/dev/null 2>err &
	pid=$!
	w=
	for _ in $(seq 100); do # up to 10 s for the first evaluation's two workers
		w=$(workers $pid)
		[ "$(echo $w | wc -w)" -ge 2 ] && break
		sleep 0.1
	done
	[ "$(echo $w | wc -w)" -ge 2 ] || bad "$sig: calibrate did not start two workers ($(cat err))"
	kill -$sig $pid
	wait $pid 2>/dev/null
	rc=$?
	num=$(kill -l $sig)
	[ $rc -eq $((128 + num)) ] ||
		bad "$sig: calibrate ended with $rc, not by the signal ($((128 + num))): $(cat err)"
	grep -q "iommulab calibrate: stopped by SIG$sig after [0-9]* evaluations: its workers are stopped, nothing written" err ||
		bad "$sig: stderr '$(cat err)', want the line saying it stopped"
	grep -q "Interrupted system call" err && bad "$sig: reported as a failure: $(cat err)"
	[ -z "$(ls -A "out-$sig" 2>/dev/null)" ] || bad "$sig: a stopped calibrate wrote $(ls "out-$sig")"
done

[ $fail -eq 0 ] && echo "cli/calibrate_stop: all checks passed"
exit $fail
