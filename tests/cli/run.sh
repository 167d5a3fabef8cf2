#!/usr/bin/env bash
# run.sh — `iommulab run`: all built-in scenarios (exit 0, a table naming every seed, results/
# JSON per scenario, the correlator), one by name or id, --json, --quick, and malformed
# scenario files (exit 2 with file:line:column). Not the runner's internals (tests/experiments). Run as:
#   bash run.sh <iommulab> <srcdir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$2
. "$2/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

out=$("$BIN" run --quick --out "$TMP/res" 2>"$TMP/err"); rc=$?
[ $rc -eq 0 ] || bad "run: exit $rc, want 0 ($(head -3 "$TMP/err"))"
for id in 000 001 002 003 004; do
	printf '%s\n' "$out" | grep -q "^seed $id — " || bad "run: no table for seed $id"
done
printf '%s\n' "$out" | grep -q 'seed figure' || bad "run: table has no 'seed figure' column"
printf '%s\n' "$out" | grep -q 'ratio' || bad "run: table has no 'ratio' column"
# Published figures appear as published (seed-figures.md).
for fig in '> 550 ns' '240 ns' '1215539 packets/s' '280.8 us' '145 Gbit/s' '63 GB/s'; do
	printf '%s\n' "$out" | grep -qF "$fig" || bad "run: figure '$fig' missing from the table"
done
grep -q '^\[seed000-cmdsync 1/2\] ' "$TMP/err" || bad "run: no progress line on stderr"
for n in seed000-cmdsync seed001-domain-lookup seed002-map-pages seed003-ecmdq seed004-vfio-numa; do
	f="$TMP/res/$n.json"
	[ -s "$f" ] || { bad "run: $f not written"; continue; }
	grep -q '"schema": "iommulab-result/1"' "$f" || bad "$f: no schema tag"
	grep -q '"quick": true' "$f" || bad "$f: --quick not recorded"
done
# The correlator of the run's published figures (docs/calibration.md): every figure of the
# table a point, a colour per experiment, in-sample where the profile's calibration record
# (profiles/*.calibration.json) has the scenario in its set; the PNG when gnuplot is there.
total=$(printf '%s\n' "$out" | sed -n 's/.* of \([0-9]*\) published figures within tolerance.*/\1/p')
[ -s "$TMP/res/correlator.json" ] || bad "run: no correlator.json"
grep -q 'e0in using 1:2 with points pt 7' "$TMP/res/correlator.gp" || bad "run: correlator script has no in-sample series"
if have python3 "the correlator's points"; then
	python3 - "$TMP/res/correlator.json" "$total" <<'PY' || bad "run: correlator.json: wrong points"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "iommulab-correlator/1", d["schema"]
pts = d["points"]
assert len(pts) == int(sys.argv[2]), (len(pts), sys.argv[2])
assert {p["experiment"] for p in pts} == {"seed000-cmdsync", "seed001-domain-lookup",
    "seed002-map-pages", "seed003-ecmdq", "seed004-vfio-numa", "whatif-seed004-smmuv3"}
assert all(p["measured"] > 0 and p["model"] > 0 for p in pts)
# every seed is in the calibration set of its shipped profile (profiles/*.calibration.json)
assert all(p["in_sample"] for p in pts), [p["label"] for p in pts if not p["in_sample"]]
assert "seed000-cmdsync/cma-pernuma/cmdsync_wait" in {p["label"] for p in pts}
PY
fi
if have gnuplot "the correlator PNG"; then
	[ "$(head -c 8 "$TMP/res/correlator.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		bad "run: correlator.png is not a PNG"
fi
# With a calibration record beside the profile (as calibrate writes it): the scenario in its set
# is drawn in-sample (filled), one outside it out-of-sample (hollow), each in its own colour.
cp "$SRC/profiles/kunpeng920.yaml" "$TMP/k.yaml"
printf '%s\n' '{"schema": "iommulab-calibration-record/1", "profile": "kunpeng920", "fitted_on": "test",' \
	'"tree": "test", "experiments": [{"name": "seed000-cmdsync", "in_sample": true}]}' >"$TMP/k.calibration.json"
"$BIN" run --quick --profile "$TMP/k.yaml" --out "$TMP/oos" 000 001 >"$TMP/out" 2>&1 || bad "run --profile k.yaml 000 001 failed"
grep -q 'e0in using 1:2 with points pt 7' "$TMP/oos/correlator.gp" &&
grep -q 'e1out using 1:2 with points pt 6' "$TMP/oos/correlator.gp" ||
	bad "run: seed 000 (in the record) not filled, or seed 001 (not in it) not hollow"
grep -q 'e0out using' "$TMP/oos/correlator.gp" && bad "run: a scenario in the calibration set drawn out-of-sample"
grep -q 'e1in using' "$TMP/oos/correlator.gp" && bad "run: a scenario not in the calibration set drawn in-sample"
# A scenario named correlator would write over the correlator's files: refused before it runs.
sed 's/^name: seed000-cmdsync$/name: correlator/' "$SRC/scenarios/seed000-cmdsync.yaml" >"$TMP/correlator.yaml"
"$BIN" run --quick --out "$TMP/coll" "$TMP/correlator.yaml" >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || bad "run of a scenario named correlator: exit $rc, want 2"
[ "$(grep -c . "$TMP/err")" -eq 1 ] || bad "run of a scenario named correlator: not one line: $(cat "$TMP/err")"
[ -e "$TMP/coll/correlator.json" ] && bad "run of a scenario named correlator: ran anyway"

# One scenario, by id and by file; --json prints the result object.
out=$("$BIN" run --quick 003 --out "$TMP/one" 2>/dev/null); rc=$?
[ $rc -eq 0 ] || bad "run 003: exit $rc"
printf '%s\n' "$out" | grep -q '^seed 003 — ' || bad "run 003: no table"
printf '%s\n' "$out" | grep -q '^seed 000 — ' && bad "run 003 also ran seed 000"
out=$("$BIN" run --quick --json --out "$TMP/one" "$SRC/scenarios/seed004-vfio-numa.yaml" 2>/dev/null); rc=$?
[ $rc -eq 0 ] || bad "run --json file: exit $rc"
printf '%s\n' "$out" | head -1 | grep -q '^{' || bad "run --json: output is not a JSON object"
printf '%s\n' "$out" | grep -q '"name": "seed004-vfio-numa"' || bad "run --json: wrong scenario"
if have python3 "run --json's schema tag"; then
	printf '%s\n' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["schema"]=="iommulab-result/1"' \
		|| bad "run --json: not valid JSON with the schema tag"
fi

# Every malformed file: exit 2, first stderr line "file:line:column: message".
for f in "$SRC"/tests/data/scenarios/bad-*.yaml; do
	"$BIN" run --out "$TMP/bad" "$f" >/dev/null 2>"$TMP/err"; rc=$?
	[ $rc -eq 2 ] || bad "run $(basename "$f"): exit $rc, want 2"
	head -1 "$TMP/err" | grep -Eq "^$f:[0-9]+:[0-9]+: ." || bad "run $(basename "$f"): '$(head -1 "$TMP/err")'"
done
[ -e "$TMP/bad" ] && bad "a malformed scenario still created the results directory"
# 400 KB of '[' (then of '{a: '): refused at the 65th level in well under the 20 s allowed here
# (without the depth limit libyaml took minutes).
for open in '[' '{a: '; do
	printf 'name: ' >"$TMP/deep.yaml"
	head -c $((400000 / ${#open})) /dev/zero | tr '\0' x | sed "s/x/$open/g" >>"$TMP/deep.yaml"
	timeout 20 "$BIN" run --out "$TMP/bad" "$TMP/deep.yaml" >/dev/null 2>"$TMP/err"; rc=$?
	[ $rc -eq 2 ] || bad "run deep '$open': exit $rc, want 2"
	grep -q "^$TMP/deep.yaml:1:[0-9]*: lists and mappings nested more than 64 deep" "$TMP/err" ||
		bad "run deep '$open': '$(head -1 "$TMP/err")'"
done

# A bad file among good ones: nothing runs.
"$BIN" run --out "$TMP/mixed" 000 "$SRC/tests/data/scenarios/bad-kind.yaml" >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || bad "run good+bad: exit $rc, want 2"
[ -e "$TMP/mixed" ] && bad "run good+bad: created the results directory"
grep -q '^\[seed000' "$TMP/err" && bad "run good+bad: ran seed 000 anyway"

# A results directory that cannot be created or written: exit 2 with one line, before anything
# runs. procfs and sysfs refuse new files even to root (chmod would not stop root); in a chroot
# either may be a plain directory, so the one used is the first that really refuses a file.
touch "$TMP/afile"
RO=
for d in /proc /sys; do
	if [ -d "$d" ] && ! touch "$d/.ilab-probe" 2>/dev/null; then RO=$d; break; fi
	rm -f "$d/.ilab-probe" 2>/dev/null
done
if [ -z "$RO" ]; then
	case ${CI:-} in
	'' | 0 | false) echo "SKIP: neither /proc nor /sys refuses a new file: run --out UNWRITABLE not checked" ;;
	*) bad "neither /proc nor /sys refuses a new file, and CI is set: run --out UNWRITABLE must be checked" ;;
	esac
fi
for o in /dev/null/res "$TMP/afile" "$TMP/afile/res" $RO; do
	"$BIN" run --quick --out "$o" 000 >"$TMP/out" 2>"$TMP/err"; rc=$?
	[ $rc -eq 2 ] || bad "run --out $o: exit $rc, want 2"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || bad "run --out $o: not one line: '$(cat "$TMP/err")'"
	grep -q "^iommulab run: --out $o: " "$TMP/err" || bad "run --out $o: '$(head -1 "$TMP/err")'"
	grep -q '^\[seed000' "$TMP/err" && bad "run --out $o: ran the scenario anyway"
	[ -s "$TMP/out" ] && bad "run --out $o: printed a table"
done
"$BIN" run --quick --out "$TMP/afile" 000 >/dev/null 2>"$TMP/err"
grep -q 'exists and is not a directory' "$TMP/err" || bad "run --out FILE: '$(head -1 "$TMP/err")'"
if [ -n "$RO" ]; then
	"$BIN" run --quick --out "$RO" 000 >/dev/null 2>"$TMP/err"
	grep -q 'cannot write there' "$TMP/err" || bad "run --out $RO: '$(head -1 "$TMP/err")'"
fi
# The probe leaves nothing behind in a good directory.
mkdir "$TMP/empty"
"$BIN" run --quick --out "$TMP/empty" 000 >/dev/null 2>&1 || bad "run --out an empty directory failed"
[ -z "$(ls -A "$TMP/empty" | grep -v '^\(seed000-cmdsync\|correlator\)\.\(json\|gp\|png\|svg\)$' | grep -vx index.html)" ] ||
	bad "run left other files: $(ls -A "$TMP/empty" | tr '\n' ' ')"

# A results file that cannot be written whole (here a 2 KiB file size limit, SIGXFSZ ignored so
# that writes fail with EFBIG): exit 1 naming the file, and no partial or temporary file.
mkdir "$TMP/small"
(trap '' XFSZ; ulimit -f 2; exec "$BIN" run --quick --out "$TMP/small" 000) >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] || bad "run under ulimit -f 2: exit $rc, want 1"
grep -q "^iommulab run: $TMP/small/seed000-cmdsync.json: File too large$" "$TMP/err" ||
	bad "run under ulimit -f 2: '$(grep -v '^\[' "$TMP/err" | head -1)'"
[ -e "$TMP/small/seed000-cmdsync.json" ] && bad "run under ulimit -f 2: a partial JSON is left"
ls -A "$TMP/small" | grep -q '^\.' && bad "run under ulimit -f 2: temporary files left: $(ls -A "$TMP/small")"

# The same scenario twice (here by id and by name): its results would overwrite each other.
"$BIN" run --quick --out "$TMP/twice" 000 cmdsync >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || bad "run 000 cmdsync: exit $rc, want 2"
grep -q 'seed000-cmdsync given twice' "$TMP/err" || bad "run 000 cmdsync: '$(head -1 "$TMP/err")'"

# Usage errors.
for args in "run --bogus" "run --out" "run nosuchscenario"; do
	# shellcheck disable=SC2086
	"$BIN" $args >/dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] || bad "'iommulab $args': exit $rc, want 2"
done
"$BIN" run --help | grep -q -- '--quick' || bad "run --help does not mention --quick"

# Installed layout: scenarios under <datadir>/scenarios, found through IOMMULAB_DATADIR.
mkdir -p "$TMP/share/iommulab"
cp -r "$SRC/scenarios" "$TMP/share/iommulab/"
cp -r "$SRC/profiles" "$TMP/share/iommulab/"
IOMMULAB_DATADIR="$TMP/share/iommulab" "$BIN" run --quick --out "$TMP/inst" 002 >/dev/null 2>&1 \
	|| bad "run with IOMMULAB_DATADIR: failed"
[ -s "$TMP/inst/seed002-map-pages.json" ] || bad "run with IOMMULAB_DATADIR: no JSON"
IOMMULAB_DATADIR="$TMP/nowhere" "$BIN" run --out "$TMP/x" >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || bad "run with a wrong IOMMULAB_DATADIR: exit $rc, want 2 (as 'run 000' there)"
grep -q 'IOMMULAB_DATADIR' "$TMP/err" || bad "run with a wrong IOMMULAB_DATADIR: no explanation"

# Determinism: the same command twice gives byte-identical result JSON (simulator statistics
# included), in separate processes, whatever malloc did in between.
"$BIN" run --quick --json --out "$TMP/det1" 000 003 >"$TMP/det1.json" 2>/dev/null
"$BIN" run --quick --json --out "$TMP/det2" 000 003 >"$TMP/det2.json" 2>/dev/null
[ -s "$TMP/det1.json" ] || bad "run --json 000 003: no output"
cmp -s "$TMP/det1.json" "$TMP/det2.json" || bad "run 000 003 twice: the JSON differs"
# ... and whatever the environment's size and the working directory (they move the main
# thread's stack: nothing the simulator tracks may live there).
(cd "$TMP" && ILAB_PAD_ENV="$(printf 'x%.0s' $(seq 1 333))" \
	"$BIN" run --quick --json --out "$TMP/det3" 000 003 >"$TMP/det3.json" 2>/dev/null)
cmp -s "$TMP/det1.json" "$TMP/det3.json" || bad "run 000 003 with another environment: the JSON differs"

# Each simulated case carries its IOMMU unit's statistics under stats.iommus, keyed by the
# unit's name (smmu2 on these SMMUv3 machines): caches with hit rates, the queues the model
# consumed (the ECMDQs when the case uses them), what the driver issued.
if have python3 "run --json's SMMU statistics"; then
	python3 - "$TMP/det1.json" <<'PY' || bad "run --json: stats.iommus missing or inconsistent"
import json, sys
runs = json.load(open(sys.argv[1]))
for run in runs:
    for case in run["cases"]:
        assert "smmus" not in case["stats"], case["label"]
        units = case["stats"]["iommus"]
        assert len(units) == 1, (case["label"], list(units))
        assert next(iter(units)).startswith("smmu"), (case["label"], list(units))
        s = next(iter(units.values()))
        assert s["caches"]["tlb"]["capacity"] > 0
        for name, c in s["caches"].items():
            assert c["lookups"] == c["hits"] + c["misses"], (case["label"], name, c)
            ppm = c["hits"] * 1000000 // c["lookups"] if c["lookups"] else 0
            assert c["hit_rate_ppm"] == ppm, (case["label"], name, c)
        queued = s["cmdq"]["commands"] + s.get("ecmdqs", {}).get("commands", 0)
        assert queued == s["driver"]["cmds"], (case["label"], queued, s["driver"]["cmds"])
        ecmdq = case["mechanisms"]["ecmdq"]
        assert ecmdq == (s.get("ecmdqs", {}).get("queues_used", 0) > 0), case["label"]
        if run["scenario"]["workload"] == "nic_throughput" and case["mechanisms"]["mode"] != "passthrough":
            assert s["model"]["translations"] > 0, case["label"]
PY
fi

# --seed 1 is the default run, byte for byte (the results regression test holds it to HEAD).
"$BIN" run --quick --json --seed 1 --out "$TMP/s1" 000 003 >"$TMP/s1.json" 2>/dev/null
cmp -s "$TMP/det1.json" "$TMP/s1.json" || bad "run --seed 1: the JSON differs from no --seed"
# ... and another seed reaches the simulator: its scheduler orders same-instant fibers with a
# seeded coin, so seed 000's context-switch counts move with --seed (not only the recorded seed).
"$BIN" run --quick --json --seed 5 --out "$TMP/s5" 000 >"$TMP/s5.json" 2>/dev/null || bad "run --seed 5 000: failed"
if have python3 "run --seed's effect"; then
	python3 - "$TMP/det1.json" "$TMP/s5.json" <<'PY' || bad "run --seed 5: no figure moved"
import json, sys
one, five = (json.load(open(p)) for p in sys.argv[1:])
def switches(run):
    runs = run if isinstance(run, list) else [run]
    return {c["label"]: c["stats"]["scheduler"]["switches"]
            for r in runs if r["scenario"]["name"] == "seed000-cmdsync" for c in r["cases"]}
a, b = switches(one), switches(five)
assert a and a.keys() == b.keys(), (a, b)
assert a != b, ("the same scheduler switches with seed 1 and seed 5", a)
PY
fi

# --repeat 3 on the flat profile: each figure's mean, min, max and sd are those of the runs with
# seeds 1, 2 and 3 made one by one. (Seeds order same-instant ties, so a figure may differ
# between seeds on any line model: docs/experiments.md, "Seeds and spread".)
"$BIN" run --quick --json --repeat 3 --out "$TMP/r3" 000 003 >"$TMP/r3.json" 2>/dev/null ||
	bad "run --repeat 3: failed"
for s in 2 3; do
	"$BIN" run --quick --json --seed $s --out "$TMP/s$s" 000 003 >"$TMP/s$s.json" 2>/dev/null ||
		bad "run --seed $s 000 003: failed"
done
# --repeat 3 with line contention (seed 001, quick: three cases): the seeds order the
# same-instant requests differently, so some figure has a spread. Not in a sanitizer build: its
# ucontext fibers make the home model's many hand-overs ~200x slower (2 s become 10 min); the
# plain build of the same CI run makes this check.
echo '{}' >"$TMP/c3.json"
if ldd "$BIN" 2>/dev/null | grep -q 'lib[at]san'; then
	echo "NOTE: sanitizer build: run --repeat 3 --profile kunpeng920-contention left to the plain build"
else
	"$BIN" run --quick --json --repeat 3 --profile kunpeng920-contention --out "$TMP/c3" 001 \
		>"$TMP/c3.json" 2>"$TMP/err" || bad "run --repeat 3 --profile kunpeng920-contention: failed"
fi
if have python3 "run --repeat's spread"; then
	python3 - "$TMP/det1.json" "$TMP/s2.json" "$TMP/s3.json" "$TMP/r3.json" "$TMP/c3.json" <<'PY' || bad "run --repeat: wrong spread"
import json, math, statistics, sys
one, two, three, rep, cont = (json.load(open(p)) for p in sys.argv[1:])
def figures(runs):
    return {(r["scenario"]["name"], c["label"], m): f["value"]
            for r in runs for c in r["cases"] for m, f in c["figures"].items()}
def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
singles = [figures(x) for x in (one, two, three)]
assert singles[0].keys() == singles[1].keys() == singles[2].keys()
spread = 0
for run in rep:
    assert run["seeds"] == {"first": 1, "count": 3}, run["seeds"]
    for case in run["cases"]:
        for m, f in case["figures"].items():
            vals = [s[(run["scenario"]["name"], case["label"], m)] for s in singles]
            want = (case["label"], m, vals, f)
            assert close(f["value"], statistics.fmean(vals)), want
            assert f["min"] == min(vals) and f["max"] == max(vals), want
            assert close(f["sd"], statistics.stdev(vals)), want
            if len(set(vals)) == 1:  # all runs agree: exactly that value, no spread
                assert f["value"] == vals[0] and f["sd"] == 0, want
            spread += f["sd"] > 0
assert len(singles[0]) == sum(len(c["figures"]) for r in rep for c in r["cases"])
effects = [e for run in rep for e in run.get("effects", [])]
assert effects
for e in effects:
    assert {"ours_change_min", "ours_change_max", "ours_change_sd", "within_spread"} <= set(e), e
    assert e["ours_change_min"] <= e["ours_change_max"], e
    if e["ours_change"] is not None:
        assert e["within_spread"] == (0 < e["ours_change_sd"] > abs(e["ours_change"])), e
print(f"flat --repeat 3: {spread} figures with a spread", file=sys.stderr)
if not cont:
    sys.exit(0)  # not run in a sanitizer build (above)
assert cont["scenario"]["profile"] == "kunpeng920-contention", cont["scenario"]
assert cont["scenario"]["scenario_profile"] == "kunpeng920", cont["scenario"]
sds = [f["sd"] for c in cont["cases"] for f in c["figures"].values()]
assert max(sds) > 0, sds
for c in cont["cases"]:
    for f in c["figures"].values():
        assert f["min"] <= f["value"] <= f["max"], f
for e in cont["effects"]:
    assert {"ours_change_min", "ours_change_max", "ours_change_sd", "within_spread"} <= set(e), e
assert "effects_within_spread" in cont["summary"], cont["summary"]
PY
fi

# --profile of another machine: refused before anything runs; bad counts and seeds too.
"$BIN" run --quick --profile a100-2node --out "$TMP/other" 000 >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || bad "run --profile a100-2node 000: exit $rc, want 2"
grep -q 'not the machine of seed000-cmdsync' "$TMP/err" ||
	bad "run --profile a100-2node 000: '$(head -1 "$TMP/err")'"
grep -q '^\[seed000' "$TMP/err" && bad "run --profile a100-2node 000: ran anyway"
for args in "--repeat 0" "--repeat 1000" "--repeat x" "--seed -1" "--seed 0" "--seed 1x" \
	"--profile nosuch" "--seed 9007199254740992 --repeat 2"; do
	# shellcheck disable=SC2086
	"$BIN" run --quick $args --out "$TMP/badv" 000 >/dev/null 2>"$TMP/err"; rc=$?
	[ $rc -eq 2 ] || bad "run $args: exit $rc, want 2"
	[ "$(grep -vc '^Try ' "$TMP/err")" -eq 1 ] || bad "run $args: not one line: $(cat "$TMP/err")"
done

[ $fail -eq 0 ] && echo "cli/run: all checks passed"
exit $fail
