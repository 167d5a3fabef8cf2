#!/bin/bash
# results_page.sh — <out>/index.html, the results page (issue 34 item 2): `run`, `sweep` and
# `merge` write it; it has a table row for every comparison, effect, correlator point and sweep
# case of the result files beside it, an <img> of every plot there and the tree and profiles,
# no script and nothing from the network; it is never written over a directory or before the
# check of the outputs. In headless Chromium (Debian's `chromium`; $CHROMIUM to name another)
# every image loads (naturalWidth > 0) and every table is there; a truncated SVG is seen as
# not loaded, so the check can fail. Without chromium the browser part is skipped, with CI set
# it fails (scripts/install-deps.sh installs chromium).
# usage: bash results_page.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
have gnuplot "the results page's pictures" || exit 77
CHECK="python3 $SRC/tests/cli/results_page.py"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

# ---- run, sweep and merge write it ----
"$BIN" run --quick --out r cmdsync ecmdq >/dev/null 2>err || bad "run: exit $? ($(tail -1 err))"
grep -qFx "iommulab run: wrote r/index.html" err || bad "run: no 'wrote r/index.html' line"
"$BIN" sweep "$SRC/tests/data/sweeps/heat.yaml" -j2 -o r/sweep-heat.json 2>err ||
	bad "sweep: exit $? ($(tail -1 err))"
grep -qFx "iommulab sweep: wrote r/index.html" err || bad "sweep: no 'wrote r/index.html' line"
$CHECK static r >out || bad "run + sweep page: $(grep PROBLEM out | head -3)"
# the page names what ran: the tree, each scenario's profile, each verdict line
grep -Eq 'built from tree <b>[^<]+</b>' r/index.html || bad "the page names no tree"
grep -q 'profile <b>kunpeng920</b>' r/index.html || bad "the page names no profile"
grep -q '2 of 2 published figures within tolerance' r/index.html ||
	bad "seed000-cmdsync's verdict line is not on the page"
for img in seed000-cmdsync.svg seed003-ecmdq.svg correlator.svg sweep-heat-heatmap.svg; do
	grep -qF "<img src=\"$img\"" r/index.html || bad "no <img> of $img"
done

for i in 0 1; do
	"$BIN" sweep "$SRC/tests/data/sweeps/grid24.yaml" -j2 --shard "$i/2" -o "sh$i.json" 2>err ||
		bad "shard $i/2: exit $?"
done
[ -e index.html ] && bad "a shard wrote a results page"
mkdir m
"$BIN" merge m/grid24.json sh0.json sh1.json 2>err || bad "merge: exit $? ($(tail -1 err))"
grep -qFx "iommulab merge: wrote m/index.html" err || bad "merge: no 'wrote m/index.html' line"
$CHECK static m >out || bad "merge page: $(grep PROBLEM out | head -3)"
grep -q '^0 images' out && bad "merge page: no picture"

# ---- the output rule: a directory named index.html stops the command before it runs ----
mkdir -p o/index.html
"$BIN" run --quick --out o 000 >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] && grep -q 'o/index.html' err || bad "run onto a directory index.html: exit $rc, '$(cat err)'"
[ -e o/seed000-cmdsync.json ] && bad "run onto a directory index.html ran its cases"
"$BIN" sweep "$SRC/tests/data/sweeps/heat.yaml" -o o/h.json >/dev/null 2>err
rc=$?
[ $rc -eq 2 ] && grep -q 'o/index.html' err || bad "sweep onto a directory index.html: exit $rc, '$(cat err)'"
ls -A . | grep -q '^\.index\.html\.' && bad "a temporary page was left behind"

# ---- in a browser ----
CHROMIUM=${CHROMIUM:-chromium}
if have "$CHROMIUM" "the results page in a browser"; then
	# browse DIR: check.html (the page and a probe script) in headless Chromium, its DOM
	# after every image loaded or failed; the result of the browser check in out
	browse() {
		$CHECK probe "$1" || return 1
		timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$TMP/profile" --virtual-time-budget=10000 --dump-dom \
			"file://$TMP/$1/check.html" >"$1.dom" 2>"$1.chromium.err"
		$CHECK browser "$1" "$1.dom" >out
	}
	browse r || bad "in the browser: $(grep PROBLEM out | head -3) $(tail -2 r.chromium.err)"
	grep -q '^browser: 6 images loaded of 6' out || bad "in the browser: $(head -1 out)"
	browse m || bad "merge page in the browser: $(grep PROBLEM out | head -3)"
	# the check sees a broken picture: the same page with a truncated SVG
	cp -r r broken && head -c 2000 r/correlator.svg >broken/correlator.svg
	browse broken && bad "a truncated correlator.svg passed the browser check"
	grep -q 'PROBLEM: correlator.svg: not loaded' out ||
		bad "the truncated SVG was not the one found: $(grep PROBLEM out | head -2)"
fi
exit $fail
