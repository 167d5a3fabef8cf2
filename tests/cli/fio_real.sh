#!/bin/bash
# fio_real.sh — iommulab fio against Debian's fio (3.33): for the same job file (the real fio
# with ioengine=null, as it has no simulated drive; iommulab with libaio), the JSON and json+
# outputs have fio's keys at every level (tests/cli/json_keys.py), and fio's own
# fio_jsonplus_clat2csv reads and validates iommulab's json+. Skipped (77) when fio is not
# installed, failed instead when CI is set (scripts/install-deps.sh installs it).
# usage: bash fio_real.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
have fio "the JSON key sets against the real fio" || exit $((fail ? 1 : 77))
have python3 "the JSON key sets against the real fio" || exit $((fail ? 1 : 77))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
# fio's HOWTO shapes: a global section with an include, two jobs, units
cat >inc.fio <<'EOT'
iodepth=4
EOT
cat >job.fio <<'EOT'
; two jobs sharing a global section
[global]
ENGINE
size=1Mi
bs=4k
include inc.fio

[reader]
rw=randread

[writer]
rw=write
bs=8k
EOT
sed 's/^ENGINE$/ioengine=null/' job.fio >real.fio
sed 's/^ENGINE$/ioengine=libaio/' job.fio >ours.fio
for fmt in json json+; do
	fio --output-format=$fmt real.fio >real.json 2>real.err || bad "fio $fmt: $(cat real.err)"
	"$BIN" fio --output-format=$fmt ours.fio >ours.json 2>ours.err ||
		bad "iommulab fio $fmt: $(cat ours.err)"
	out=$(python3 "$SRC/tests/cli/json_keys.py" real.json ours.json) ||
		bad "$fmt key sets differ from fio's: $out"
done
# the last pair is json+: fio's own tool reads ours
if have fio_jsonplus_clat2csv "fio_jsonplus_clat2csv on iommulab's json+"; then
	fio_jsonplus_clat2csv ours.json lat.csv >/dev/null 2>clat.err || bad "clat2csv: $(cat clat.err)"
	fio_jsonplus_clat2csv --validate ours.json lat.csv >/dev/null 2>clat.err ||
		bad "clat2csv --validate: $(cat clat.err)"
	[ -s lat_job0.csv ] && [ -s lat_job1.csv ] || bad "clat2csv wrote no CSV per job"
fi
# a command line with numjobs and group_reporting: one report, as fio's
fio --name=x --ioengine=null --size=256k --numjobs=2 --group_reporting --output-format=json \
	>real.json 2>real.err || bad "fio command line: $(cat real.err)"
"$BIN" fio --name=x --ioengine=libaio --size=256k --numjobs=2 --group_reporting \
	--output-format=json >ours.json 2>ours.err || bad "iommulab fio command line: $(cat ours.err)"
out=$(python3 "$SRC/tests/cli/json_keys.py" real.json ours.json) ||
	bad "command-line key sets differ from fio's: $out"
# a mix with per-direction sizes: both directions filled, the same keys as fio's; and fio's
# terse v3 line: the same fields, each of the same kind (tests/cli/terse_fields.py)
mixopts="--rw=randrw --rwmixread=70 --bssplit=4k/50:8k/50,16k --iodepth=4 --size=1m"
fio --name=m --ioengine=null $mixopts --output-format=json >real.json 2>real.err ||
	bad "fio randrw: $(cat real.err)"
"$BIN" fio --name=m --ioengine=libaio $mixopts --output-format=json >ours.json 2>ours.err ||
	bad "iommulab fio randrw: $(cat ours.err)"
out=$(python3 "$SRC/tests/cli/json_keys.py" real.json ours.json) ||
	bad "randrw key sets differ from fio's: $out"
python3 -c '
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f))["jobs"][0]
    assert j["read"]["total_ios"] > 0 and j["write"]["total_ios"] > 0, (f, "one direction empty")
' real.json ours.json || bad "randrw: a direction is empty"
# trims: the trim direction filled, the same keys as fio's (Dataset Management on the model)
fio --name=t --ioengine=null --rw=randtrim --size=1m --output-format=json >real.json \
	2>real.err || bad "fio randtrim: $(cat real.err)"
"$BIN" fio --name=t --ioengine=libaio --rw=randtrim --size=1m --output-format=json \
	>ours.json 2>ours.err || bad "iommulab fio randtrim: $(cat ours.err)"
out=$(python3 "$SRC/tests/cli/json_keys.py" real.json ours.json) ||
	bad "randtrim key sets differ from fio's: $out"
python3 -c '
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f))["jobs"][0]
    assert j["trim"]["total_ios"] > 0 and j["read"]["total_ios"] == 0, (f, "not a trim job")
' real.json ours.json || bad "randtrim: the trim direction is empty"
for job in "--rw=randread" "$mixopts --description=two_words"; do
	# shellcheck disable=SC2086 # the options are words
	fio --name=t --ioengine=null --size=1m $job --output-format=terse >real.txt 2>real.err ||
		bad "fio terse: $(cat real.err)"
	# shellcheck disable=SC2086
	"$BIN" fio --name=t --ioengine=libaio --size=1m $job --output-format=terse >ours.txt \
		2>ours.err || bad "iommulab fio terse: $(cat ours.err)"
	out=$(python3 "$SRC/tests/cli/terse_fields.py" real.txt ours.txt) ||
		bad "terse ($job) differs from fio's: $out"
done
# which jobs run at once and how they are grouped and reported: stonewall, new_group and
# group_reporting give fio's report names and group ids
cat >groups.fio <<'EOT'
[global]
ENGINE
size=256k
group_reporting
[a]
rw=read
[b]
rw=write
[c]
new_group
rw=read
[d]
stonewall
rw=randread
[e]
group_reporting=0
rw=randread
numjobs=2
EOT
sed 's/^ENGINE$/ioengine=null/' groups.fio >real.fio
sed 's/^ENGINE$/ioengine=libaio/' groups.fio >ours.fio
fio --output-format=json real.fio >real.json 2>real.err || bad "fio groups: $(cat real.err)"
"$BIN" fio --output-format=json ours.fio >ours.json 2>ours.err ||
	bad "iommulab fio groups: $(cat ours.err)"
python3 -c '
import json, sys
r, o = ([(j["jobname"], j["groupid"], j["read"]["total_ios"], j["write"]["total_ios"])
         for j in json.load(open(f))["jobs"]] for f in sys.argv[1:])
assert r == o, ("fio", r, "ours", o)
' real.json ours.json || bad "groups differ from fio's"
exit $fail
