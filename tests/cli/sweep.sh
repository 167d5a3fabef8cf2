#!/bin/bash
# sweep.sh — `iommulab sweep` and `iommulab merge`: a 2 x 3 x 4 grid gives the same merged bytes
# with 1, 3 and 5 shards as unsharded (and at -j1 as at -j2); shards are k mod N; merge refuses
# missing, overlapping and foreign shards; a case of a scenario's base equals that scenario's
# pinned quick figure; a profile axis reaches the simulator; two axes give a heat-map PNG; bad
# sweep files are one file:line:column line and exit 2.
# usage: bash sweep.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$2
D=$SRC/tests/data/sweeps
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

# figure CASE METRIC FILE: the metric of case CASE (the file's keys are sorted: case, figures)
figure() {
	awk -v k="$1" -v m="\"$2\":" 'BEGIN { c = -1 } $1 == "\"case\":" { c = $2 + 0 }
		$1 == m && c == k { sub(",", "", $2); print $2; exit }' "$3"
}

# values CASE FILE: the case's axis values, space-separated
values() {
	awk -v k="$1" 'BEGIN { c = -1 } $1 == "\"case\":" { c = $2 + 0 } c == k && $1 ~ /^]/ { v = 0 }
		c == k && v { gsub(/[",]/, ""); printf "%s%s", n++ ? " " : "", $1 }
		c == k && $1 == "\"values\":" { v = 1 }' "$2"
}

# ---- sharding: the same bytes whatever the split ----
"$BIN" sweep "$D/grid24.yaml" -j2 -o full.json 2>err || bad "unsharded sweep: exit $? ($(tail -1 err))"
[ "$(grep -c '^\[grid24 [0-9]*/24\] case [0-9]*: params.threads=' err)" -eq 24 ] ||
	bad "not a progress line per case on a non-terminal stderr: $(head -3 err)"
[ "$(grep -c '"case":' full.json)" -eq 24 ] || bad "full.json: not 24 cases"
grep -q "$TMP\|/tmp/" full.json && bad "full.json holds a path"
for n in 1 3 5; do
	shards=()
	for ((i = n - 1; i >= 0; i--)); do # merged in reverse order
		"$BIN" sweep "$D/grid24.yaml" -j1 --shard "$i/$n" -o "s$i-$n.json" 2>/dev/null ||
			bad "shard $i/$n: exit $?"
		shards+=("s$i-$n.json")
	done
	"$BIN" merge --no-plot "merged-$n.json" "${shards[@]}" 2>err || bad "merge of $n: $(cat err)"
	cmp -s full.json "merged-$n.json" || bad "$n shards merged differ from the unsharded run"
done
# shard 1/3 holds cases 1, 4, ... 22 and says which shard it is
[ "$(grep '"case":' s1-3.json | tr -dc '0-9\n' | tr '\n' ' ')" = "1 4 7 10 13 16 19 22 " ] ||
	bad "shard 1/3 does not hold cases k mod 3 = 1: $(grep '"case":' s1-3.json | tr -d '\n ')"
grep -q '"count": 3' s1-3.json || bad "shard 1/3 does not say it is one of 3"

# ---- the grid's order and what its cases measure ----
# first axis slowest: case 0 is (1, strict, 100), case 23 (2, passthrough, 800)
[ "$(values 0 full.json)" = '1 strict 100' ] || bad "case 0 is $(values 0 full.json), not 1 strict 100"
[ "$(values 23 full.json)" = '2 passthrough 800' ] ||
	bad "case 23 is $(values 23 full.json), not 2 passthrough 800"
# one thread, strict: each unmap waits for one CMD_SYNC after its TLBI, so 700 ns more of
# smmu.tlbi_sync_ns (800 against 100) is 700 ns more per unmap; passthrough has no sync
u100=$(figure 0 unmap_ns full.json) u800=$(figure 3 unmap_ns full.json)
awk -v a="$u100" -v b="$u800" 'BEGIN { d = b - a; exit !(d > 699.5 && d < 700.5) }' ||
	bad "strict t=1 unmap_ns: $u100 at tlbi_sync_ns 100, $u800 at 800: not 700 ns apart"
[ "$(figure 8 unmap_ns full.json)" = "$(figure 11 unmap_ns full.json)" ] ||
	bad "passthrough unmap_ns depends on smmu.tlbi_sync_ns"
# a scenario's case as the base: granule 1 and 4 are seed 002's quick t1-g1/t1-g4-map_pages
"$BIN" sweep "$D/seed002-case.yaml" -o seed.json --no-plot 2>/dev/null || bad "seed002-case: exit $?"
Q=$SRC/tests/data/expected/quick-figures.txt
for g in 1 4; do
	want=$(awk -v l="t1-g$g-map_pages" '$1 == "figure" && $3 == l && $4 == "unmap_ns" { print $5 }' "$Q")
	got=$(figure $((g == 1 ? 0 : 1)) unmap_ns seed.json)
	awk -v a="$want" -v b="$got" 'BEGIN { exit !(a != "" && (a - b) ^ 2 < 1e-12 * a * a) }' ||
		bad "seed002-case granule $g: unmap_ns $got, the scenario's quick figure is $want"
done

# ---- merge refuses ----
check_merge() { # want-substring shard...: exit 2 with that message
	local want=$1 out rc
	shift
	out=$("$BIN" merge --no-plot m.json "$@" 2>&1); rc=$?
	[ $rc -eq 2 ] && printf '%s' "$out" | grep -qF -- "$want" ||
		bad "merge $*: rc $rc, '$out' (want exit 2 and '$want')"
}
check_merge "cases missing" s0-3.json s2-3.json
check_merge "shards overlap" s0-3.json s1-3.json s2-3.json s1-5.json
"$BIN" sweep "$D/heat.yaml" -o heat.json --shard 0/1 --no-plot 2>/dev/null || bad "heat shard: exit $?"
check_merge "is not a shard of the sweep of" s0-1.json heat.json
echo '{' >broken.json
check_merge "not JSON" broken.json
echo '{"schema": "iommulab-result/1", "cases": []}' >other.json
check_merge "not a sweep result" other.json
[ -e m.json ] && bad "a refused merge wrote m.json"

# ---- two axes: a heat map ----
if have gnuplot "the sweep's PNG plots"; then
	"$BIN" sweep "$D/heat.yaml" -o heat.json 2>err || bad "heat sweep: exit $? ($(tail -1 err))"
	# each panel of the heat map: its metric's name as the title, its unit on the colour bar
	[ "$(grep -A1 "^set title 'unmap_ns'$" heat-heatmap.gp | tail -1)" = "set cblabel 'ns'" ] &&
		[ "$(grep -A1 "^set title 'map_latency'$" heat-heatmap.gp | tail -1)" = "set cblabel 'us'" ] ||
		bad "heat-heatmap.gp: a panel without its unit: $(grep -A1 '^set title' heat-heatmap.gp | head -4)"
	for png in heat-heatmap.png heat-params.threads.png heat-profile.smmu.tlbi_sync_ns.png; do
		[ -s "$png" ] || { bad "no $png"; continue; }
		# PNG signature, IHDR size (4 panels of 560 px), IEND at the end
		[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] ||
			bad "$png: not a PNG signature"
		w=$(od -An -tu1 -j16 -N4 "$png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
		h=$(od -An -tu1 -j20 -N4 "$png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
		[ "$w" -ge 1000 ] && [ "$w" -le 4000 ] && [ "$h" -ge 400 ] && [ "$h" -le 1000 ] ||
			bad "$png: $w x $h pixels"
		[ "$(tail -c 8 "$png" | od -An -tx1 | tr -d ' ')" = 49454e44ae426082 ] ||
			bad "$png: no IEND chunk at its end"
		[ "$(stat -c %s "$png")" -gt 10000 ] || bad "$png: only $(stat -c %s "$png") bytes"
	done
fi

# ---- bad sweep files: file:line:column, one line, exit 2, nothing written ----
HEAD='name: e
workload: dma_map_benchmark
profile: kunpeng920
params: { iterations: 3 }
'
check_file() { # want-substring body
	local want=$1 out rc
	printf '%s%s' "$HEAD" "$2" >e.yaml
	out=$("$BIN" sweep e.yaml -o e.json 2>&1); rc=$?
	if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ]; then
		bad "sweep ($want): rc $rc, '$out'"
	elif ! printf '%s' "$out" | grep -qF -- "$want"; then
		bad "sweep: '$out' does not say '$want'"
	fi
	[ -e e.json ] && bad "a refused sweep wrote e.json"
}
AX='grid:
  - param: '
check_file "e.yaml:5:1: unknown key 'colour' in sweep" "colour: red
${AX}params.threads
    values: [1]
"
check_file "e.yaml:6:12: param: unknown parameter 'thread'" "${AX}params.thread
    values: [1]
"
check_file "e.yaml:6:12: param: unknown mechanism 'modes'" "${AX}mechanisms.modes
    values: [strict]
"
check_file "e.yaml:6:12: profile.smmu.tlb_entries: smmu: unknown key 'tlb_entries'" \
	"${AX}profile.smmu.tlb_entries
    values: [64]
"
check_file "e.yaml:6:12: profile.nosuch.x: profile key 'nosuch.x': the profile has no section" \
	"${AX}profile.nosuch.x
    values: [1]
"
check_file "e.yaml:6:12: param: 'threads' is not params.NAME" "${AX}threads
    values: [1]
"
check_file "e.yaml:7:13: values: the list is empty" "${AX}params.threads
    values: []
"
check_file "e.yaml:7:17: params.threads: expected a number, got 'two'" "${AX}params.threads
    values: [1, two]
"
check_file "e.yaml:7:14: params.threads: expected an integer, got '1.5'" "${AX}params.threads
    values: [1.5]
"
check_file "e.yaml:7:14: params.threads: 0 is out of range" "${AX}params.threads
    values: [0]
"
check_file "e.yaml:7:22: mechanisms.mode: 'bogus' is not one of strict|lazy|passthrough" \
	"${AX}mechanisms.mode
    values: [strict, bogus]
"
# profile values pass the profile parser's own checks
check_file "e.yaml:7:19: profile.smmu.tlbi_sync_ns: tlbi_sync_ns: expected a non-negative integer" \
	"${AX}profile.smmu.tlbi_sync_ns
    values: [100, -5]
"
check_file "got the string '100'" "${AX}profile.smmu.tlbi_sync_ns
    values: [\"100\"]
"
check_file "profile.mmio.read_local_ns: read_local_ns: a latency must be at least 1 ns" \
	"${AX}profile.mmio.read_local_ns
    values: [0]
"
check_file "e.yaml:7:17: values: '1' given twice" "${AX}params.threads
    values: [1, 1]
"
check_file "e.yaml:6:3: grid: more than 4096 cases (4352 so far)" "${AX}params.threads
    values: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]
  - param: params.granule
    values: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]
  - param: params.iterations
    values: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]
"
check_file "case 1 (mechanisms.cmdqv=on): cmdqv: on, but profile kunpeng920's SMMU has no" \
	"${AX}mechanisms.cmdqv
    values: [off, on]
"
# a case its machine cannot run: named, before anything runs
check_file "case 1 (params.threads=64): threads: 64, but node 0 has 32 CPUs" \
	"${AX}params.threads
    values: [1, 64]
"
check_file "e.yaml:5:7: grid: the list is empty" "grid: []
"
# the command's prefix and the profile: key's position, as every other error of the file
printf 'name: e\nworkload: dma_map_benchmark\nprofile: nosuch\ngrid:\n  - param: params.threads\n    values: [1]\n' >p.yaml
out=$("$BIN" sweep p.yaml --check 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] &&
	printf '%s' "$out" | grep -q "^iommulab sweep: p.yaml:3:10: profile: no machine profile 'nosuch'" ||
	bad "sweep with profile: nosuch: rc $rc, '$out'"
# a directory is named as one, not as a read error
out=$("$BIN" sweep /tmp --check 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "iommulab sweep: /tmp: Is a directory" ] ||
	bad "sweep /tmp --check: rc $rc, '$out'"
printf 'name: e\nscenario: seed002-map-pages\ngrid:\n  - param: params.granule\n    values: [1]\n' >s.yaml
out=$("$BIN" sweep s.yaml 2>&1); rc=$?
[ $rc -eq 2 ] && printf '%s' "$out" | grep -qF "s.yaml:2:11: scenario seed002-map-pages has 44 cases: say which with case: LABEL" ||
	bad "a many-case scenario without case:: rc $rc, '$out'"

# ---- bad command lines ----
for args in "--shard 3/3 $D/grid24.yaml" "--shard 1 $D/grid24.yaml" "-j 0 $D/grid24.yaml" "" \
	"$D/grid24.yaml $D/heat.yaml" "--bogus $D/grid24.yaml"; do
	# shellcheck disable=SC2086
	"$BIN" sweep $args >/dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] || bad "sweep $args: exit $rc, want 2"
done
"$BIN" merge out.json >/dev/null 2>&1; [ $? -eq 2 ] || bad "merge without shards: not exit 2"

[ $fail -eq 0 ] && echo "cli/sweep: all checks passed"
exit $fail
