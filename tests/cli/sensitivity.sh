#!/usr/bin/env bash
# sensitivity.sh — scripts/sensitivity.py against the built binary, on the smallest profile at
# reduced sizes: --list names every integer constant of the profile with its kind; a run of
# two constants gives one row each with both variants run; bad options are refused. Not the
# figures themselves (docs/experiments.md reports them), and not every constant (under ASan
# each run costs seconds). Run as:
#   bash sensitivity.sh <iommulab> <srcdir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$2
SCRIPT="$SRC/scripts/sensitivity.py"
PROFILE="$SRC/profiles/a100-2node.yaml"
. "$2/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# everything below runs the script: without python3, skip (exit 77) or fail in CI
have python3 "scripts/sensitivity.py" || exit $((fail ? 1 : 77))

# --list: every integer constant of the profile, in file order, with its kind.
python3 "$SCRIPT" --list --profile a100-2node >"$TMP/list" 2>"$TMP/err" ||
	bad "--list: exit $? ($(tail -2 "$TMP/err"))"
want=$(grep -E '^\s+[a-z_]+:\s*-?[0-9]+\s*(#.*)?$' "$PROFILE" | sed -E 's/^\s+([a-z_]+):.*/\1/')
got=$(sed -E 's/^[a-z_]+\.([a-z_]+) .*/\1/' "$TMP/list")
[ -n "$want" ] || bad "found no constants in $PROFILE"
[ "$want" = "$got" ] ||
	bad "--list does not match the profile's constants: got [$got], want [$want]"
grep -qx 'nic.ats_outstanding 2 calibrated' "$TMP/list" ||
	bad "ats_outstanding (CALIBRATED in the profile's comments) not listed as calibrated"
grep -qx 'memory.local_ns 90 estimate' "$TMP/list" ||
	bad "memory.local_ns not listed as an estimate"

# Two constants: a table with their two rows, both variants run.
python3 "$SCRIPT" --cli "$BIN" --quick --profile a100-2node --only nic.ats_outstanding \
	--only memory.local_ns --figures >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] || bad "run: exit $rc, want 0 ($(tail -2 "$TMP/err"))"
grep -q '^### a100-2node (whatif-seed004-smmuv3; x0.80 / x1.20)' "$TMP/out" || bad "no table heading"
grep -qE '^Base: [0-9]+ of [0-9]+ figures within tolerance, [0-9]+ of [0-9]+ effects' "$TMP/out" ||
	bad "no base line"
rows=$(grep -E '^\| [a-z_]+\.[a-z_]+ \|' "$TMP/out")
order=$(printf '%s\n' "$rows" | sed -E 's/^\| ([a-z_.]+) \|.*/\1/' | tr '\n' ' ')
[ "$order" = "memory.local_ns nic.ats_outstanding " ] ||
	bad "rows are not the two constants in file order: $rows"
printf '%s\n' "$rows" | grep -qE '^\| memory\.local_ns \| 90 \(72/108\) \| estimate \|' ||
	bad "memory.local_ns row: not 90 (72/108), estimate"
printf '%s\n' "$rows" | grep -qE '^\| nic\.ats_outstanding \| 2 \(1/3\) \| calibrated \|' ||
	bad "nic.ats_outstanding row: not 2 (1/3), calibrated"
while IFS= read -r row; do
	cells=$(printf '%s\n' "$row" | awk -F'|' '{print NF - 2}')
	[ "$cells" -eq 7 ] || bad "row has $cells cells, want 7: $row"
	printf '%s\n' "$row" | grep -qE '\| [0-9]+ / [0-9]+ \| [0-9]+ / [0-9]+ \| [0-9]+ / [0-9]+ \|' ||
		bad "row lacks low/high counts: $row"
done <<<"$rows"

# --figures: per constant, every figure it moves with its value at low / base / high. Each NIC
# in flight is a share of seed 004's bandwidth: 1 / 2 / 3 of them give rising algbw in all six
# cases.
fig=$(awk '/^#### nic\.ats_outstanding = 2 \(1 \/ 3\)$/ { on = 1; next } /^####/ { on = 0 }
	on && /^\| case[0-9]/' "$TMP/out")
[ "$(printf '%s\n' "$fig" | grep -c .)" -eq 6 ] ||
	bad "--figures: want the six seed-004 figures under nic.ats_outstanding, got [$fig]"
printf '%s\n' "$fig" | grep -qE '^\| case2-node1-shared \| algbw \| calibration \| 32 \|' ||
	bad "--figures: no calibration row for case2-node1-shared: $fig"
printf '%s\n' "$fig" | awk -F'|' '{ split($6, l, " "); split($7, b, " "); split($8, h, " ")
	if (!(l[1] + 0 < b[1] + 0 && b[1] + 0 < h[1] + 0)) { print; bad = 1 } } END { exit bad }' ||
	bad "--figures: algbw does not rise with ats_outstanding: $fig"

# Bad options are refused with a message, not a traceback.
refuse() { # refuse <message> <args...>
	local msg=$1
	shift
	python3 "$SCRIPT" "$@" >/dev/null 2>"$TMP/err" && bad "accepted: $*"
	grep -qF "$msg" "$TMP/err" || bad "$*: no message '$msg' ($(tail -1 "$TMP/err"))"
	grep -q Traceback "$TMP/err" && bad "$*: a traceback"
}
refuse 'factor must be' --cli "$BIN" --factor 1.5
refuse "no built-in scenario uses profile 'nosuch'" --cli "$BIN" --profile nosuch
refuse 'no constant smmu.nosuch_ns' --cli "$BIN" --profile a100-2node --only smmu.nosuch_ns
refuse 'no iommulab binary' --cli "$TMP/none"

[ $fail -eq 0 ] && echo "sensitivity.sh: all checks passed"
exit $fail
