#!/bin/bash
# calibrate_folds.sh — the cross-validation as separate folds (`calibrate --fold K`, a Slurm
# array task each) and their merge (`--merge DIR`): --fold list names them; each fold writes
# its result file; the merge writes the same report (text, JSON), record, fitted profile and
# correlator as one `--cross-validate` run, byte for byte, whatever order the folds ran in; a
# missing, duplicate, misnamed or mismatched fold (another free set, seed, profile, sizes,
# tree) is refused in one line, exit 2, nothing written.
# usage: bash calibrate_folds.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
# kunpeng920 without its free: section: the constants are the test's own
sed '/^free:$/,$d' "$SRC/profiles/kunpeng920.yaml" >k.yaml
K=$TMP/k.yaml
# two experiments, three cases, two case folds: five folds whose results all differ
ARGS=("$K" 000 002 --quick --case cma-pernuma --case t1-g256-map_pages --case t1-g256-per-page
      --starts 1 --max-evals 20 -j2 --free smmu.sync_ns=10:2000 --free smmu.tlbi_ns=5:500
      --cross-validate --folds 2)
OUTS=(calibrate-kunpeng920.txt calibrate-kunpeng920.json kunpeng920.calibrated.yaml
      kunpeng920.calibrated.calibration.json calibrate-kunpeng920-correlator.gp)

"$BIN" calibrate "${ARGS[@]}" --fold list >list.txt 2>err || bad "--fold list: exit $? ($(cat err))"
[ "$(wc -l <list.txt)" -eq 5 ] || bad "--fold list: not 5 folds: $(cat list.txt)"
grep -q "^0	the whole set" list.txt && grep -q "^1	seed000-cmdsync left out" list.txt &&
	grep -q "^4	case fold 1 of 2" list.txt || bad "--fold list: $(cat list.txt)"

# one process (outputs compared from the same relative path: the correlator's script names it)
mkdir one arr
(cd one && "$BIN" calibrate "${ARGS[@]}" --out out >stdout.txt 2>err) ||
	bad "one run: exit $? ($(tail -1 one/err))"
# the folds one by one, last first (an array runs them in any order), then the merge
for k in 4 3 2 1 0; do
	(cd arr && "$BIN" calibrate "${ARGS[@]}" --fold $k --out out >/dev/null 2>err) ||
		bad "fold $k: exit $? ($(tail -1 arr/err))"
	[ -s arr/out/calibrate-kunpeng920-fold-$k.json ] || bad "fold $k: no result file"
done
ls arr/out | grep -qv 'calibrate-kunpeng920-fold-[0-4].json' && bad "a fold wrote more: $(ls arr/out)"
mkdir keep && cp arr/out/*fold*.json keep/
(cd arr && "$BIN" calibrate "${ARGS[@]}" --merge out --out out >stdout.txt 2>err) ||
	bad "merge: exit $? ($(tail -1 arr/err))"
for f in "${OUTS[@]}"; do
	cmp -s "one/out/$f" "arr/out/$f" || bad "merge: $f differs from one run's: $(diff "one/out/$f" "arr/out/$f" | head -4)"
done
cmp -s one/stdout.txt arr/stdout.txt || bad "merge: the printed report differs"
grep -q "2-fold over cases" arr/stdout.txt || bad "merge: no case folds in the report"
[ "$(grep -o '[0-9]* evaluations, ' one/err)" = "$(grep -o '[0-9]* evaluations, ' arr/err)" ] ||
	bad "merge: not the distinct evaluations one run made ($(tail -1 one/err); $(tail -1 arr/err))"

# refused: one line, exit 2, nothing written into --out
refuse() { # WHAT EXPECTED-SUBSTRING DIR [ARGS...]
	local what=$1 want=$2 dir=$3
	shift 3
	"$BIN" calibrate "${ARGS[@]}" "$@" --merge "$dir" --out "$TMP/no" >out 2>err
	local rc=$?
	[ $rc -eq 2 ] || bad "$what: exit $rc, not 2 ($(tail -1 err))"
	[ "$(grep -c -v '^iommulab calibrate: kunpeng920: ' err)" -eq 1 ] || bad "$what: not one line: $(cat err)"
	grep -q -- "$want" err || bad "$what: '$want' not in: $(tail -1 err)"
	[ -e "$TMP/no" ] && bad "$what: wrote $TMP/no"
}
fresh() { rm -rf d && mkdir d && cp keep/*.json d/; }
fresh && rm d/calibrate-kunpeng920-fold-3.json
refuse "a fold missing" "fold(s) 3 of 5 missing" d
fresh && cp d/calibrate-kunpeng920-fold-1.json d/calibrate-kunpeng920-fold-01.json
refuse "a fold twice" "fold 1 twice" d
fresh && rm d/calibrate-kunpeng920-fold-3.json &&
	mv d/calibrate-kunpeng920-fold-2.json d/calibrate-kunpeng920-fold-3.json
refuse "a fold under another's name" "its name says fold 3, it holds fold 2" d
fresh && echo '{' >d/calibrate-kunpeng920-fold-2.json
refuse "not JSON" "calibrate-kunpeng920-fold-2.json: not a fold of calibrate" d
# of two bad files the lower fold is named, whatever order the directory lists them in
# (tmpfs lists the newest first: fold 4 is spoiled last)
fresh && echo '{' >d/calibrate-kunpeng920-fold-1.json && echo '{' >d/calibrate-kunpeng920-fold-4.json
refuse "two bad folds" "calibrate-kunpeng920-fold-1.json: not a fold of calibrate" d
fresh
refuse "another weighting" "was run on another set" d --weights experiments
# mismatched: the same fold run on another free set, another seed, another profile
fresh && (cd d && "$BIN" calibrate "${ARGS[@]}" --free smmu.tlbi_ns=5:400 --fold 2 --out . 2>/dev/null)
refuse "another free set" "fold 2 was run on another free" d
fresh && (cd d && "$BIN" calibrate "${ARGS[@]}" --seed 2 --fold 1 --out . 2>/dev/null)
refuse "another seed" "fold 1 was run on another seed" d
sed 's/^  sync_ns: [0-9]*$/  sync_ns: 300/' "$K" >k300.yaml
fresh && (cd d && "$BIN" calibrate "$TMP/k300.yaml" "${ARGS[@]:1}" --fold 4 --out . 2>/dev/null)
refuse "another profile" "fold 4 was run on another profile_text" d
# a fold's record of its sizes and tree (at full sizes a fold takes minutes: edited here)
fresh && sed -i 's/"sizes": "quick"/"sizes": "full"/' d/calibrate-kunpeng920-fold-0.json
refuse "other sizes" "fold 0 was run on another sizes" d
fresh && sed -i 's/"tree": "[^"]*"/"tree": "0123456789ab"/' d/calibrate-kunpeng920-fold-3.json
refuse "another tree" "fold 3 was run on another tree" d
fresh
refuse "another number of case folds" "was run on another case_folds" d --folds 3
"$BIN" calibrate "${ARGS[@]}" --fold 5 --out "$TMP/no" >out 2>err
[ $? -eq 2 ] && grep -q -- "--fold must be 'list' or 0 to 4" err && [ ! -e "$TMP/no" ] ||
	bad "--fold 5 of 5 folds: not refused: $(cat err)"
"$BIN" calibrate "${ARGS[@]}" --fold 1 --merge d --out "$TMP/no" >out 2>err
[ $? -eq 2 ] && grep -q "not both" err || bad "--fold with --merge: not refused: $(cat err)"

[ $fail -eq 0 ] && echo "cli/calibrate_folds: all checks passed"
exit $fail
