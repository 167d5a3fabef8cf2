#!/bin/bash
# sweep_workers.sh — a sweep's workers end with it: TERM, INT or HUP to `sweep -j2` stops its
# running workers and it exits by that signal with one line, writing nothing; KILL (no handler
# runs) takes them too (PR_SET_PDEATHSIG). Each case of tests/data/sweeps/slow.yaml runs for
# many seconds, so a worker still there a few seconds after its parent is one left behind.
# usage: bash sweep_workers.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
# job control: a background job gets INT as a terminal's Ctrl-C would (not ignored), and is
# its own process group, so a signal to the sweep reaches the sweep only
set -m

# workers PID: the sweep's child processes
workers() { cat /proc/"$1"/task/*/children 2>/dev/null; }
# alive PID: running (a zombie, dead and not yet reaped by init, is not)
alive() { [ -r /proc/"$1"/stat ] && [ "$(awk '{ print $3 }' /proc/"$1"/stat 2>/dev/null)" != Z ]; }

for sig in TERM INT HUP KILL; do
	mkdir "tmp-$sig"
	TMPDIR=$TMP/tmp-$sig "$BIN" sweep "$SRC/tests/data/sweeps/slow.yaml" -j2 -o "slow-$sig.json" \
		--no-plot 2>err &
	pid=$!
	w=
	for _ in $(seq 100); do # up to 10 s for the two workers to start, with their profiles
		w=$(workers $pid)
		[ "$(echo $w | wc -w)" -ge 2 ] && [ "$(ls "tmp-$sig" | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	[ "$(echo $w | wc -w)" -ge 2 ] && [ "$(ls "tmp-$sig" | wc -l)" -ge 2 ] ||
		bad "$sig: the sweep did not start two workers with their profiles ($(cat err))"
	kill -$sig $pid
	wait $pid 2>/dev/null
	rc=$?
	num=$(kill -l $sig)
	[ $rc -eq $((128 + num)) ] || bad "$sig: the sweep ended with $rc, not by the signal ($((128 + num)))"
	left=
	for _ in $(seq 30); do # up to 3 s for them to go
		left=
		for p in $w; do alive $p && left="$left $p"; done
		[ -z "$left" ] && [ -z "$(ls -A "tmp-$sig")" ] && break
		sleep 0.1
	done
	[ -z "$(ls -A "tmp-$sig")" ] || bad "$sig: the workers' temporary profiles are left: $(ls -A "tmp-$sig")"
	if [ -n "$left" ]; then
		bad "$sig: workers$left still running 3 s after their sweep ended"
		kill -KILL $left 2>/dev/null
	fi
	[ -e "slow-$sig.json" ] && bad "$sig: a stopped sweep wrote its result"
	sed -i '/^==[0-9]*==WARNING: ASan doesn.t fully support makecontext/d' err # an ASan build's
	if [ $sig != KILL ] && { [ "$(grep -c . err)" -ne 1 ] ||
		! grep -qF "iommulab sweep: stopped by SIG$sig: its workers are stopped, nothing written" err; }; then
		bad "$sig: stderr '$(cat err)', want the one line saying it stopped"
	fi
done

[ $fail -eq 0 ] && echo "cli/sweep_workers: all checks passed"
exit $fail
