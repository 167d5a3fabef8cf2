#!/bin/bash
# output_rule.sh — the one output rule of every command (docs/architecture.md "Output files"):
# stdout that cannot be written (`--json > /dev/full`, a file past its size limit) is one
# line naming it and exit 1; a file (trace, result, plot) is written whole through a temporary
# renamed over it, so a full disk keeps the earlier file and leaves no temporary; an output
# that is an input or another output of the same run (however it is spelt: ./x/../y, a
# symbolic link), a directory or a device is refused up front, exit 2, nothing run; files get
# the umask's mode, PNGs too; a signal that ends a run removes its temporaries. Every file it writes is under its own temporary directory, even
# with a broken build (inputs are copies; no device is named as an output).
# A full disk is a 512 KiB tmpfs when this can mount one (root, as CI), and always a file size
# limit (ulimit -f, SIGXFSZ ignored: writes fail with EFBIG), which needs no privilege.
# usage: bash output_rule.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
MNT=
cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
cd "$TMP" || exit 1
umask 022

# one_line RC WANT-RC WANT-SUBSTRING WHAT: exit code and a single stderr line (in err; an
# ASan build's warning about the simulator's fibers is not the program's)
one_line() {
	sed -i '/^==[0-9]*==WARNING: ASan doesn.t fully support makecontext/d' err
	if [ "$1" -ne "$2" ] || [ "$(grep -c . err)" -ne 1 ] || ! grep -qF -- "$3" err; then
		bad "$4: exit $1 (want $2), stderr '$(head -c 400 err)' (want one line with '$3')"
	fi
}
# no_temporaries DIR WHAT: the hidden .<name>.XXXXXX files are all gone
no_temporaries() {
	local left
	left=$(find "$1" -name '.*.??????' 2>/dev/null | head -3)
	[ -z "$left" ] || bad "$2: temporary files left: $left"
}

# ---- stdout: every command's, checked to its end (item 1) ----
for cmd in "fio --name=x --output-format=json" "netperf --json" "bench --engine sim --iterations 20 --json" \
	"bench --engine sim --iterations 20" "topo" "topo --json" "--version" "help"; do
	# shellcheck disable=SC2086
	"$BIN" $cmd >/dev/full 2>err
	one_line $? 1 "iommulab: standard output: No space left on device" "$cmd > /dev/full"
done
"$BIN" run --quick --json --out res 000 >/dev/full 2>err; rc=$? # also says what it wrote
[ $rc -eq 1 ] && grep -qFx "iommulab: standard output: No space left on device" err ||
	bad "run --json > /dev/full: exit $rc, '$(cat err)'"
# a regular file past the size limit (10 KiB of a JSON of ~50 KiB): EFBIG, named
(trap '' XFSZ; ulimit -f 10; exec "$BIN" fio --name=x --numjobs=8 --output-format=json+ --runtime=1ms >fio.json 2>err)
one_line $? 1 "iommulab: standard output: File too large" "fio --output-format=json+ > a file past ulimit -f"
# a closed stdout that nothing is written to is not an error; one that is written to is
"$BIN" sweep "$SRC/tests/data/sweeps/grid24.yaml" -o "$TMP" >&- 2>err
one_line $? 2 "Is a directory" "sweep with stdout closed"
"$BIN" topo >&- 2>err
one_line $? 1 "iommulab: standard output: Bad file descriptor" "topo >&-"

# ---- a trace on a full disk keeps the earlier trace (item 2) ----
trace() { "$BIN" bench --engine sim -t 8 --iterations "$1" --trace "$2" >/dev/null; }
trace 5 small.json 2>err || bad "bench --trace small.json: exit $? ($(cat err))"
cp small.json small.ref
(trap '' XFSZ; ulimit -f 16; exec "$BIN" bench --engine sim -t 8 --iterations 400 \
	--trace small.json >/dev/null 2>err)
one_line $? 1 "iommulab bench: --trace small.json: File too large" "--trace past ulimit -f"
cmp -s small.json small.ref || bad "--trace past ulimit -f: the earlier trace was replaced"
no_temporaries . "--trace past ulimit -f"
# TERM while the trace is being written: its temporary goes, the earlier trace stays
cp small.ref sig.json
"$BIN" bench --engine sim -t 8 --iterations 100000 --trace sig.json --trace-limit-us 5 \
	>/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do # the temporary appears before the run (seconds) starts
	ls .sig.json.?????? >/dev/null 2>&1 && break
	sleep 0.05
done
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || bad "bench --trace, TERM: exit $rc, not by the signal (143)"
cmp -s sig.json small.ref || bad "bench --trace, TERM: the earlier trace was replaced"
no_temporaries . "bench --trace, TERM"
mkdir mnt
# 512 KiB: more than the earlier trace (132 KiB) and run's files, less than the 400-iteration trace
if mount -t tmpfs -o size=512k tmpfs mnt 2>/dev/null; then
	MNT=$TMP/mnt
	cp small.ref mnt/t.json
	trace 400 mnt/t.json 2>err
	one_line $? 1 "--trace mnt/t.json: No space left on device" "--trace on a full tmpfs"
	cmp -s mnt/t.json small.ref || bad "--trace on a full tmpfs: the earlier trace was replaced"
	no_temporaries mnt "--trace on a full tmpfs"
	rm mnt/t.json
	# the result files of run, as its trace (~130 KiB with the SVGs and the results page)
	"$BIN" run --quick --out mnt/res 000 >/dev/null 2>&1 || bad "run into the tmpfs: exit $?"
	cp mnt/res/seed000-cmdsync.json run.ref
	head -c 600000 /dev/zero >mnt/filler 2>/dev/null # fills the rest
	"$BIN" run --quick --out mnt/res 000 >/dev/null 2>err
	[ $? -eq 1 ] && grep -qF "mnt/res/seed000-cmdsync." err ||
		bad "run onto a full tmpfs: want exit 1 naming the file, got '$(cat err)'"
	cmp -s mnt/res/seed000-cmdsync.json run.ref || bad "run onto a full tmpfs: the old result changed"
	no_temporaries mnt "run onto a full tmpfs"
	# a sweep case's profile (a profile axis) in a full $TMPDIR: the case fails saying why
	TMPDIR=$TMP/mnt "$BIN" sweep "$SRC/tests/data/sweeps/heat.yaml" --no-plot -o full-tmpdir.json \
		>/dev/null 2>err
	rc=$?
	[ $rc -eq 1 ] && grep -qF "cannot write the case's profile: No space left on device" err ||
		bad "sweep with a full \$TMPDIR: exit $rc, '$(head -2 err)'"
	umount mnt && MNT=
else
	case ${CI:-} in
	'' | 0 | false) echo "SKIP: cannot mount a tmpfs (not root?): the ENOSPC cases are not checked (ulimit -f's EFBIG ones are)" ;;
	*) bad "cannot mount a tmpfs and CI is set: the full-disk cases must run" ;;
	esac
fi

# ---- an output is never an input, nor another output of the same run (items 3, 4) ----
cp "$SRC/tests/data/sweeps/heat.yaml" heat.yaml
cp heat.yaml heat.ref
mkdir sub
ln -s heat.yaml link.yaml
"$BIN" sweep heat.yaml -o heat.yaml 2>err
one_line $? 2 "-o heat.yaml is the sweep file heat.yaml" "sweep heat.yaml -o heat.yaml"
"$BIN" sweep heat.yaml -o sub/../heat.yaml 2>err
one_line $? 2 "is the sweep file heat.yaml" "sweep heat.yaml -o sub/../heat.yaml"
"$BIN" sweep link.yaml -o "$TMP/heat.yaml" 2>err
one_line $? 2 "is the sweep file link.yaml" "sweep link.yaml -o (its target)"
# a plot would be the input: -o heat-heatmap.gp.json draws heat-heatmap.gp-....png only;
# this names the plot script of -o x.json: x-heatmap.gp
cp heat.yaml x-heatmap.gp
"$BIN" sweep x-heatmap.gp -o x.json 2>err
one_line $? 2 "the plot script x-heatmap.gp is the sweep file x-heatmap.gp" "a sweep's plot over its input"
cmp -s heat.yaml heat.ref || bad "a refused sweep changed heat.yaml"

cp "$SRC/scenarios/seed000-cmdsync.yaml" s.yaml
cp s.yaml s.ref
"$BIN" run --quick --out res s.yaml --trace s.yaml 2>err
one_line $? 2 "--trace s.yaml is the scenario file s.yaml" "run s.yaml --trace s.yaml"
cmp -s s.yaml s.ref || bad "run --trace s.yaml changed s.yaml"
"$BIN" run --quick --out R --trace R/seed000-cmdsync.json 000 2>err
one_line $? 2 "--trace R/seed000-cmdsync.json is also the result file R/seed000-cmdsync.json of this run" \
	"run --out R --trace R/seed000-cmdsync.json"
[ -e R/seed000-cmdsync.json ] && bad "a refused run wrote its result"
"$BIN" run --quick --out R --trace ./R/../R/seed000-cmdsync.png 000 2>err
one_line $? 2 "is also the plot R/seed000-cmdsync.png of this run" "run --trace (the PNG, spelt otherwise)"
cp "$SRC/profiles/kunpeng920.yaml" k.yaml # a copy: a broken build must not write in $SRC
cp k.yaml k.ref
"$BIN" run --quick --out R --profile k.yaml --trace ./k.yaml 000 2>err
one_line $? 2 "--trace ./k.yaml is the profile" "run --trace (its --profile file)"
"$BIN" bench --engine sim --profile k.yaml --iterations 5 --trace k.yaml 2>err
one_line $? 2 "--trace k.yaml is the profile" "bench --profile k.yaml --trace k.yaml"
cmp -s k.yaml k.ref || bad "bench --trace k.yaml changed its profile"

for i in 0 1 2; do
	"$BIN" sweep heat.yaml --shard $i/3 -o g$i.json 2>/dev/null || bad "heat shard $i/3: exit $?"
done
cp g0.json g0.ref
"$BIN" merge --no-plot g0.json g0.json g1.json g2.json 2>err
one_line $? 2 "the merged file g0.json is the shard g0.json" "merge g0.json g0.json g1.json g2.json"
cmp -s g0.json g0.ref || bad "merge g0.json g0.json ... changed g0.json"
"$BIN" merge m.json g0.json g1.json g2.json 2>/dev/null || bad "merge m.json g0 g1 g2: exit $?"
cp g1.json m-params.threads.gp
"$BIN" merge --no-plot n.json g0.json m-params.threads.gp g2.json 2>/dev/null ||
	bad "merge with a shard named like another merge's plot (the control): exit $?"
"$BIN" merge m.json g0.json m-params.threads.gp g2.json 2>err
one_line $? 2 "the plot script m-params.threads.gp is the shard m-params.threads.gp" \
	"merge whose plot is a shard"
[ -e n.json ] || bad "the control merge wrote no n.json"

# ---- an output that cannot be one: refused before any case runs (item 7) ----
mkdir outdir
"$BIN" sweep "$SRC/tests/data/sweeps/grid24.yaml" -o outdir 2>err
one_line $? 2 "iommulab sweep: -o outdir: Is a directory" "sweep -o DIR"
# not a regular file (as /dev/null, which root could rename over: a FIFO here, so that a
# broken build harms nothing)
mkfifo fifo
"$BIN" sweep "$SRC/tests/data/sweeps/grid24.yaml" -o fifo 2>err
one_line $? 2 "-o fifo: not a regular file" "sweep -o FIFO"
[ -p fifo ] || bad "sweep -o FIFO replaced the FIFO"
"$BIN" merge outdir g0.json g1.json g2.json 2>err
one_line $? 2 "outdir: Is a directory" "merge DIR ..."
"$BIN" bench --engine sim --iterations 5 --trace outdir 2>err
one_line $? 2 "--trace outdir: Is a directory" "bench --trace DIR"

# ---- files follow the umask, PNGs too (item 14) ----
if have gnuplot "the PNGs' mode"; then
	for mask in 022 027; do
		(umask $mask; exec "$BIN" run --quick --out "u$mask" 000 >/dev/null 2>&1) ||
			bad "run (umask $mask): exit $?"
		want=$(printf '%o' $((0666 & ~0$mask)))
		for f in "u$mask"/seed000-cmdsync.{json,gp,png}; do
			[ "$(stat -c %a "$f")" = "$want" ] ||
				bad "$f: mode $(stat -c %a "$f") under umask $mask, want $want"
		done
	done
	[ "$(stat -c %a m-heatmap.png)" = 644 ] || bad "merge's PNG: mode $(stat -c %a m-heatmap.png)"
fi
no_temporaries . "the whole test"

[ $fail -eq 0 ] && echo "cli/output_rule: all checks passed"
exit $fail
