#!/usr/bin/env bash
# fit_constant.sh — scripts/fit-constant.py against the built binary: it recovers a constant
# from the figure that constant gives (seed 000's local CMD_SYNC wait, which grows by 1 ns per
# ns of smmu.sync_ns), --write sets only the value, and bad requests are refused with a
# message. Not the shipped fits (the profile comments and docs/journal.md give those). Run as:
#   bash fit_constant.sh <iommulab> <srcdir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$2
SCRIPT="$SRC/scripts/fit-constant.py"
. "$2/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
have python3 "scripts/fit-constant.py" || exit $((fail ? 1 : 77))

# A profile whose smmu.sync_ns is a value no shipped fit uses, and the figure it gives.
WANT=41
sed -E "s/^(  sync_ns: )[0-9]+/\1$WANT/" "$SRC/profiles/kunpeng920.yaml" >"$TMP/p.yaml"
grep -q "^  sync_ns: $WANT\$" "$TMP/p.yaml" || bad "could not set sync_ns in a copy"
"$BIN" run --json --out "$TMP" --profile "$TMP/p.yaml" seed000 >"$TMP/r.json" 2>"$TMP/err" ||
	bad "run: exit $? ($(tail -1 "$TMP/err"))"
fig=$(python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    if c["label"] == "cma-pernuma":
        print(c["figures"]["cmdsync_wait"]["value"])' "$TMP/r.json")
[ -n "$fig" ] || bad "no cma-pernuma cmdsync_wait in the run's JSON"

# Start the copy elsewhere; the fit must come back to WANT, from below and above alike.
sed -i -E 's/^(  sync_ns: )[0-9]+/\1120/' "$TMP/p.yaml"
for range in "0 200" "20 60"; do
	set -- $range
	python3 "$SCRIPT" --cli "$BIN" --profile "$TMP/p.yaml" --key smmu.sync_ns \
		--scenario seed000 --case cma-pernuma --figure cmdsync_wait --target "$fig" \
		--lo "$1" --hi "$2" >"$TMP/out" 2>"$TMP/err" || bad "fit [$range]: exit $? ($(tail -1 "$TMP/err"))"
	grep -qE "^fit: smmu\.sync_ns 120 -> $WANT \(cmdsync_wait = $fig," "$TMP/out" ||
		bad "fit [$range]: want 120 -> $WANT at $fig, got: $(tail -1 "$TMP/out")"
done

# --write changes the value and nothing else.
cp "$TMP/p.yaml" "$TMP/before.yaml"
python3 "$SCRIPT" --cli "$BIN" --profile "$TMP/p.yaml" --key smmu.sync_ns --scenario seed000 \
	--case cma-pernuma --figure cmdsync_wait --target "$fig" --lo 0 --hi 200 --write \
	>/dev/null 2>"$TMP/err" || bad "--write: exit $? ($(tail -1 "$TMP/err"))"
changed=$(diff "$TMP/before.yaml" "$TMP/p.yaml" | grep -E '^[<>]')
[ "$changed" = "$(printf '< %s\n> %s' '  sync_ns: 120' "  sync_ns: $WANT")" ] ||
	bad "--write changed more (or less) than the value: $changed"

# Bad requests are refused with a message, not a traceback.
refuse() { # refuse <message> <args...>
	local msg=$1
	shift
	python3 "$SCRIPT" --cli "$BIN" --profile "$TMP/p.yaml" "$@" >/dev/null 2>"$TMP/err" &&
		bad "accepted: $*"
	grep -qF -- "$msg" "$TMP/err" || bad "$*: no message '$msg' ($(tail -1 "$TMP/err"))"
	grep -q Traceback "$TMP/err" && bad "$*: a traceback"
}
common="--scenario seed000 --case cma-pernuma --figure cmdsync_wait"
refuse 'no such integer constant' --key smmu.nosuch_ns $common --target 240 --lo 0 --hi 9
refuse 'is not between' --key smmu.sync_ns $common --target 99999 --lo 0 --hi 9
refuse 'no case nosuch' --key smmu.sync_ns --scenario seed000 --case nosuch \
	--figure cmdsync_wait --target 240 --lo 0 --hi 9
refuse '--lo must be below --hi' --key smmu.sync_ns $common --target 240 --lo 9 --hi 9

[ $fail -eq 0 ] && echo "fit_constant.sh: all checks passed"
exit $fail
