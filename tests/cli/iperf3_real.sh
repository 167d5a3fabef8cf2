#!/bin/bash
# iperf3_real.sh — iommulab iperf3 -J against Debian's iperf3 (3.12): a short loopback run
# (iperf3 -s -1 / iperf3 -c 127.0.0.1 -t 1 -J), forward and reverse with two streams, and UDP
# (-u -b 100M, and two streams at 50M each), gives the real JSON; iommulab's has the same keys
# at every level (tests/cli/json_keys.py; the number of
# intervals may differ by the real run's timing). Skipped (77) when iperf3 is not installed,
# failed instead when CI is set (scripts/install-deps.sh installs it).
# usage: bash iperf3_real.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
have iperf3 "the JSON key sets against the real iperf3" || exit $((fail ? 1 : 77))
have python3 "the JSON key sets against the real iperf3" || exit $((fail ? 1 : 77))
tmp=$(mktemp -d)
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
port=$((20000 + $$ % 20000))
listening() { # port: is a server listening on it (without connecting, which a one-off
	# server would take for its client)?
	if command -v ss >/dev/null; then
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
	else
		sleep 0.5
	fi
}
real_run() { # out args...: a fresh one-off server per attempt (a failed attempt uses one up)
	local out=$1 try t
	shift
	for try in 1 2 3 4 5; do
		iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
		server=$!
		for t in $(seq 1 40); do
			listening "$port" && break
			sleep 0.05
		done
		iperf3 -c 127.0.0.1 -p "$port" "$@" -J >"$out" 2>/dev/null
		# the server ends with its client; one that does not is stopped after 5 s
		for t in $(seq 1 50); do
			kill -0 "$server" 2>/dev/null || break
			sleep 0.1
		done
		kill "$server" 2>/dev/null
		wait "$server" 2>/dev/null
		server=
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))["end"]["sum_sent"]' \
			"$out" 2>/dev/null && return 0
		port=$((port + 1))
	done
	return 1
}
for args in "-t 1" "-t 1 -P 2 -R" "-u -b 100M -t 1" "-u -b 50M -t 1 -P 2"; do
	# shellcheck disable=SC2086
	real_run "$tmp/real.json" $args || { bad "real iperf3 $args gave no JSON: $(head -c 300 "$tmp/real.json")"; continue; }
	# shellcheck disable=SC2086
	"$BIN" iperf3 -c 127.0.0.1 -p "$port" $args -J >"$tmp/ours.json" 2>"$tmp/err" ||
		bad "iommulab iperf3 $args -J: $(cat "$tmp/err")"
	out=$(python3 "$SRC/tests/cli/json_keys.py" --loose-lists "$tmp/real.json" "$tmp/ours.json") ||
		bad "iperf3 $args: key sets differ from iperf3's: $out"
done
exit $fail
