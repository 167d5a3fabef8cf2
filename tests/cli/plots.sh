#!/bin/bash
# plots.sh — what the plots say at a glance (issue 34): categorical cases (a scenario without an
# x parameter, a sweep's mechanism axis) are points, never joined by lines; a whole-number x
# axis gets a whole tic step and no fractional tic label; the heat map is viridis with human
# axis names, readable cell labels (whole numbers, not "7e+03") and no colour scale on a constant
# panel, cells drawn as rectangles (not a bitmap a browser smooths); every plot has an SVG
# beside its PNG that parses as XML.
# usage: bash plots.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
have gnuplot "the plots" || exit 77
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

# svg_ok FILE: an SVG document that parses as XML; prints its text elements, one a line
svg_texts() {
	python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
if not root.tag.endswith('svg'):
    sys.exit('root element is %s, not svg' % root.tag)
for t in root.iter():
    if t.tag.endswith('text'):
        s = ''.join(t.itertext()).strip()
        if s:
            print(s)
PY
}

# plot_lines GP: the series of the script's plot commands, one a line
plot_lines() { sed -n '/^plot /,/[^\\]$/p' "$1"; }

"$BIN" run --quick --out r cmdsync ecmdq map-pages >/dev/null 2>err ||
	bad "run --quick: exit $? ($(tail -1 err))"
for s in seed000-cmdsync seed003-ecmdq seed002-map-pages correlator; do
	[ -s "r/$s.png" ] || bad "$s: no PNG"
	[ -s "r/$s.svg" ] || { bad "$s: no SVG beside the PNG"; continue; }
	svg_texts "r/$s.svg" >"$s.texts" || bad "$s.svg does not parse as SVG"
done

# seed 000's cases are placements, not an x value: points only
grep -q '^plot ' r/seed000-cmdsync.gp || bad "seed000-cmdsync.gp: no plot command"
plot_lines r/seed000-cmdsync.gp | grep -E 'with (lines|linespoints|yerrorlines)' &&
	bad "seed000-cmdsync: categorical cases joined by a line"
plot_lines r/seed000-cmdsync.gp | grep -q 'with points' ||
	bad "seed000-cmdsync: the cases are not drawn as points"

# seed 003's x is nic_queues (6, 8): a whole tic step, and no tic label 6.5 or 7.5
grep -Eq '^set xtics [0-9]+$' r/seed003-ecmdq.gp ||
	bad "seed003-ecmdq.gp: no whole-number tic increment for nic_queues"
grep -qx 7 seed003-ecmdq.texts || bad "seed003-ecmdq.svg: no tic label 7 ($(tr '\n' ' ' <seed003-ecmdq.texts))"
grep -Ex '[67]\.[0-9]+' seed003-ecmdq.texts && bad "seed003-ecmdq.svg: a fractional tic on the NIC queues axis"
# its x is a number: the cases of one series are a line
plot_lines r/seed003-ecmdq.gp | grep -q 'linespoints' || bad "seed003-ecmdq: numeric x drawn without lines"
# a logarithmic x (granule) keeps gnuplot's powers of two
grep -Eq '^set xtics [0-9]+$' r/seed002-map-pages.gp && bad "seed002-map-pages.gp: a tic step on a log axis"

# ---- sweeps ----
"$BIN" sweep "$SRC/tests/data/sweeps/grid24.yaml" -j2 -o g.json 2>err ||
	bad "sweep grid24: exit $? ($(tail -1 err))"
for p in params.threads mechanisms.mode profile.smmu.tlbi_sync_ns; do
	[ -s "g-$p.svg" ] && svg_texts "g-$p.svg" >/dev/null || bad "g-$p.svg: missing or not SVG"
done
plot_lines g-mechanisms.mode.gp | grep -E 'linespoints|yerrorlines|with lines' &&
	bad "g-mechanisms.mode.gp: strict/lazy/... joined by lines"
plot_lines g-mechanisms.mode.gp | grep -Eq 'with (points|yerrorbars)' ||
	bad "g-mechanisms.mode.gp: the categories are not points"
plot_lines g-params.threads.gp | grep -Eq 'linespoints|yerrorlines' ||
	bad "g-params.threads.gp: a numeric axis drawn without lines"
grep -q "^set xlabel 'mode'" g-mechanisms.mode.gp || bad "g-mechanisms.mode.gp: axis not named 'mode'"

"$BIN" sweep "$SRC/tests/data/sweeps/heat.yaml" -j2 -o h.json 2>err ||
	bad "sweep heat: exit $? ($(tail -1 err))"
H=h-heatmap.gp
[ -s h-heatmap.svg ] && svg_texts h-heatmap.svg >heat.texts || bad "h-heatmap.svg: missing or not SVG"
grep -q "^set palette defined (0 '#440154'" $H || bad "$H: not the viridis palette"
grep -q rgbformulae $H && bad "$H: a rainbow palette"
grep -q "^set xlabel 'smmu tlbi sync (ns)'" $H || bad "$H: x axis not named 'smmu tlbi sync (ns)'"
grep -q "^set ylabel 'threads'" $H || bad "$H: y axis not named 'threads'"
grep -Eq "^set [xy]label '(params|profile)\." $H && bad "$H: a raw parameter path as an axis name"
grep -Eq '"[-0-9.]+e[-+][0-9]+"' $H && bad "$H: a cell label in e-notation"
# unmap_ns's cells (thousands of ns) print whole, "7001", not "7e+03" (no figure pinned here)
grep -Eqx '[0-9]{4,}' heat.texts || bad "h-heatmap.svg: no whole-number cell label of 4+ digits"
grep -Eq '[0-9]e[-+]?[0-9]' heat.texts && bad "h-heatmap.svg: a cell label in e-notation"
# cells drawn as rectangles: an embedded 3x3 bitmap is smoothed by browsers into a gradient
grep -q '<image' h-heatmap.svg && bad "h-heatmap.svg: cells as a bitmap (browsers blur it)"
# map_latency is 0.1 in every case: its panel has no colour scale, unmap_ns's has one
panel() { awk -v t="set title '$1'" '$0 == t { on = 1 } on && /^plot / { exit } on' $H; }
[ "$(grep -c '"0.1"' $H)" -ge 9 ] || bad "$H: map_latency is no longer constant: pick another panel"
panel map_latency | grep -qx 'unset colorbox' || bad "$H: a colour scale on the constant map_latency panel"
panel unmap_ns | grep -qx 'set colorbox' || bad "$H: no colour scale on unmap_ns"
exit $fail
