#!/bin/bash
# iperf3.sh — `iommulab iperf3`: bad options are one line + exit 2 naming the option; the text
# has iperf3 3.12's lines (connecting, connected per stream, the interval and summary lines,
# [SUM] with -P); the JSON's figures agree with each other and with the intervals.
# (The key sets against the real iperf3: iperf3_real.sh.)
# usage: bash iperf3.sh <iommulab binary> <source dir>
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
check_usage() { # want-substring args...: must exit 2 with that message on stderr
	local want=$1 out rc
	shift
	out=$("$BIN" iperf3 "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -gt 2 ]; then
		bad "iperf3 $* -> rc $rc, '$out'"
	elif ! printf '%s' "$out" | grep -qF -- "$want"; then
		bad "iperf3 $*: '$out' does not say '$want'"
	fi
}
check_usage "-c HOST is needed" -t 1
check_usage "-s: iommulab iperf3 is the client" -s
check_usage "-b: a rate limit is modelled for UDP (-u) only" -c h -b 1G
check_usage "-b must be a bit rate" -c h -u -b 1X
check_usage "-b must be a bit rate" -c h -u -b 10M/100
check_usage "-b must be a bit rate from 1 bit/s" -c h -u -b 0.0000001
check_usage "-b must be a bit rate from 1 bit/s" -c h -u -b 100000000T
check_usage "-u with -R: UDP receive is not modelled" -c h -u -R
check_usage "-l 65508: a UDP datagram holds at most 65507 bytes" -c h -u -l 65508
check_usage "-t must be seconds" -c h -t x
check_usage "-P must be a number of streams, 1..128" -c h -P 0
check_usage "-l must be a length of 1 byte to 1M" -c h -l 2M
check_usage "-i must be 0 (no intervals) or 0.001 to 60 seconds" -c h -i 100
check_usage "unknown option '--frob'" -c h --frob
check_usage "unexpected argument 'x'" -c h x
out=$("$BIN" iperf3 -c peer -t 0.02 -i 0.01 -P 2 -l 64K 2>/dev/null) || bad "iperf3 run: rc $?"
[ "$(printf '%s\n' "$out" | head -3)" = 'Connecting to host peer, port 5201
[  5] local 0.0.0.0 port 40000 connected to peer port 5201
[  7] local 0.0.0.0 port 40001 connected to peer port 5201' ] || bad "iperf3 connect lines: '$out'"
printf '%s\n' "$out" | grep -Eq '^\[  5\]   0\.00-0\.01   sec  [ 0-9.]{4} [KMG]?Bytes  [ 0-9.]{4} [KMG]?bits/sec                  $' ||
	bad "iperf3 interval line: '$out'"
[ "$(printf '%s\n' "$out" | grep -c '^\[SUM\]   0\.00-0\.02   sec .*  \(sender\|receiver\)$')" = 2 ] ||
	bad "iperf3 [SUM] sender and receiver lines: '$out'"
printf '%s\n' "$out" | grep -q '^iperf Done\.$' || bad "iperf3 Done: '$out'"
out=$("$BIN" iperf3 -c peer -t 0.01 -R 2>/dev/null) || bad "iperf3 -R: rc $?"
printf '%s\n' "$out" | grep -q '^Reverse mode, remote host peer is sending$' || bad "iperf3 -R: '$out'"
"$BIN" iperf3 --help | grep -q -- '-R  ' || bad "iperf3 --help"
# -u -b: iperf3 3.12's UDP layout (iperf_locale.c report_bw_udp_sender_header/_format,
# report_bw_udp_header/_format); 100 Mbit/s of 1448-byte datagrams for 10 ms: 86 or 87 each
out=$("$BIN" iperf3 -c peer -u -b 100M -t 0.01 -i 0.005 2>/dev/null) || bad "iperf3 -u: rc $?"
[ "$(printf '%s\n' "$out" | sed -n 3p)" = '[ ID] Interval           Transfer     Bitrate         Total Datagrams' ] ||
	bad "iperf3 -u interval header: '$out'"
printf '%s\n' "$out" | grep -Eq '^\[  5\]   0\.00-0\.01   sec  [ 0-9.]{4} [KMG]?Bytes  [ 0-9.]{4} [KMG]?bits/sec  4[34]  $' ||
	bad "iperf3 -u interval line: '$out'"
printf '%s\n' "$out" | grep -qxF '[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams' ||
	bad "iperf3 -u summary header: '$out'"
printf '%s\n' "$out" | grep -Eq '^\[  5\]   0\.00-0\.01   sec  [ 0-9.]{4} KBytes  [ 0-9.]{4} Mbits/sec  0\.000 ms  0/8[67] \(0%\)  sender$' ||
	bad "iperf3 -u sender line: '$out'"
printf '%s\n' "$out" | grep -Eq '^\[  5\]   0\.00-0\.01   sec  .* ms  0/8[67] \(0%\)  receiver$' ||
	bad "iperf3 -u receiver line: '$out'"
# faster than the peer's stack takes them (passthrough, 64-byte datagrams): lost, and said
if have python3 "iperf3 -u -J loss"; then
	"$BIN" iperf3 -c peer -u -b 10G -l 64 -t 0.002 -i 0 --iommu-mode=passthrough -J 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["end"]
r, s = e["sum_received"], e["sum_sent"]
assert d["start"]["test_start"]["protocol"] == "UDP" and d["start"]["test_start"]["blksize"] == 64
assert s["packets"] == r["packets"] > 0 and s["lost_packets"] == 0, (s, r)
assert 0 < r["lost_packets"] < r["packets"], r
assert abs(r["lost_percent"] - 100.0 * r["lost_packets"] / r["packets"]) < 1e-9, r
assert r["bytes"] == (r["packets"] - r["lost_packets"]) * 64, r
u = e["streams"][0]["udp"]
assert u["lost_packets"] == r["lost_packets"] and u["jitter_ms"] >= 0, u
' || bad "iperf3 -u -J: lost packets"
fi
if have python3 "iperf3 -J figures"; then
	for rev in "" -R; do
		# shellcheck disable=SC2086
		"$BIN" iperf3 -c peer -t 0.02 -i 0.005 -P 3 $rev -J 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["start"]["test_start"]
assert s["num_streams"] == 3 and s["blksize"] == 131072 and s["protocol"] == "TCP", s
assert len(d["start"]["connected"]) == 3 and len(d["intervals"]) == 4, d["intervals"]
e = d["end"]
total = sum(i["sum"]["bytes"] for i in d["intervals"])
assert total == e["sum_sent"]["bytes"] == e["sum_received"]["bytes"] > 0, (total, e["sum_sent"])
assert all(i["sum"]["bytes"] > 0 for i in d["intervals"]), [i["sum"]["bytes"] for i in d["intervals"]]
for i in d["intervals"]:
    assert sum(x["bytes"] for x in i["streams"]) == i["sum"]["bytes"], i
    assert abs(i["sum"]["bits_per_second"] - i["sum"]["bytes"] * 8 / i["sum"]["seconds"]) < 1e-3 * i["sum"]["bits_per_second"] + 1, i["sum"]
assert abs(e["sum_sent"]["seconds"] - 0.02) < 1e-9, e["sum_sent"]
assert sum(x["sender"]["bytes"] for x in e["streams"]) == e["sum_sent"]["bytes"], e["streams"]
cpu = e["cpu_utilization_percent"]["host_total"]
assert (cpu == 0) if s["reverse"] else (0 < cpu <= 100), e["cpu_utilization_percent"]
' || bad "iperf3 $rev -J figures"
	done
fi
exit $fail
