#!/bin/sh
# seed001-sensitivity.sh — seed 001's fast-lookup effect (refcount-strict -> direct-strict) by
# the number of receiving CPUs (the scenario's `processes`, one NIC queue each, placed on the
# NIC's node first) and by the cost of a cache-line transfer (kunpeng920's cache.transfer_*
# entries scaled). Prints one markdown table of "refcount / direct K packets/s, effect" cells.
# Nothing it writes is kept: scratch scenario and profile copies go to a temporary directory.
#
# usage: scripts/seed001-sensitivity.sh [BIN] [CPUS] [SCALES]
#   BIN     iommulab binary (default build/iommulab)
#   CPUS    space-separated receiving-CPU counts (default "4 16 32 64 128")
#   SCALES  space-separated transfer-cost multipliers (default "1 2 4")
set -eu
BIN=${1:-build/iommulab}
CPUS=${2:-"4 16 32 64 128"}
SCALES=${3:-"1 2 4"}
SRC=$(dirname "$0")/..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# kunpeng920.yaml with every cache-line transfer cost (local and by distance) times $1
scaled_profile() {
	awk -v k="$1" '
	/^  transfer_local_ns:/ { printf "  transfer_local_ns: %d\n", $2 * k + 0.5; next }
	/^  transfer_by_distance:/ {
		line = $0; out = "  transfer_by_distance: {"; sep = " "
		gsub(/.*\{ */, "", line); gsub(/ *\}.*/, "", line)
		n = split(line, kv, /, */)
		for (i = 1; i <= n; i++) {
			split(kv[i], p, /: */)
			out = out sep p[1] ": " int(p[2] * k + 0.5); sep = ", "
		}
		print out " }"; next
	}
	{ print }' "$SRC/profiles/kunpeng920.yaml"
}

printf '| rx CPUs |'
for k in $SCALES; do printf ' transfers x%s |' "$k"; done
printf '\n|---|'
for k in $SCALES; do printf -- '---|'; done
printf '\n'
for n in $CPUS; do
	sed "s/^    processes: 128 /    processes: $n /" "$SRC/scenarios/seed001-domain-lookup.yaml" \
		> "$tmp/s.yaml"
	printf '| %s |' "$n"
	for k in $SCALES; do
		scaled_profile "$k" > "$tmp/p.yaml"
		"$BIN" run --out "$tmp/out" --profile "$tmp/p.yaml" "$tmp/s.yaml" > "$tmp/o.txt" 2>&1 ||
			true # a case outside its tolerance is not an error here; a failed run prints "failed"
		awk '
		$1 == "refcount-strict" { r = $5 }
		$1 == "direct-strict" { d = $5 }
		END {
			if (r > 0 && d > 0)
				printf " %.0f / %.0f K, %+.1f%% |", r / 1000, d / 1000, 100 * (d / r - 1)
			else
				printf " failed |"
		}' "$tmp/o.txt"
	done
	printf '\n'
done
