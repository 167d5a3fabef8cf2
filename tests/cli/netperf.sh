#!/bin/bash
# netperf.sh — `iommulab netperf`: bad options, a machine without a NIC and a profile without
# the netperf path are one line + exit 2; short runs print netperf's result lines; the JSON's
# figures agree with themselves.
# usage: bash netperf.sh <iommulab binary> <source dir>
set -u
BIN=$1
. "$2/tests/support/cli_lib.sh" # fail, bad, have
check_usage() { # want-substring args...: must exit 2 with that message on stderr
	local want=$1 out rc
	shift
	out=$("$BIN" netperf "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -gt 2 ]; then
		bad "netperf $* -> rc $rc, '$out'"
	elif ! printf '%s' "$out" | grep -qF -- "$want"; then
		bad "netperf $*: '$out' does not say '$want'"
	fi
}
check_usage "-l must be a test length in seconds" -l 0
# -i repeats the run up to its maximum: the host-time limit covers every run (100 s of one
# stream is ~200 s of host time, 30 runs ~100 min), refused before anything runs
out=$(timeout 20 "$BIN" netperf -t TCP_STREAM -l 100 -i 30,3 -P 0 2>&1 >/dev/null); rc=$?
{ [ $rc -eq 2 ] && printf '%s' "$out" | grep -qF "30 runs (-i)"; } ||
	bad "netperf -l 100 -i 30,3 -> rc $rc, '$out'"
# below 100 us a window holds no transaction: refused, not a throughput of 0.00
check_usage "-l must be a test length in seconds, at least 0.0001" -l 1e-9
check_usage "-l must be a test length in seconds, at least 0.0001" -l 0.00009
check_usage "-l -5: a count of bytes (TCP_STREAM) is not supported" -l -5
check_usage "-l -5: a count of bytes (UDP_STREAM) is not supported" -t UDP_STREAM -l -5
check_usage "-l -0: a count must be -N, N transactions from 1 to 10^8" -t TCP_RR -l -0
check_usage "-l -x: a count must be -N" -t TCP_RR -l -x
check_usage "-r 1473,1: UDP_RR's request and response are one packet each, at most 1472 bytes" -t UDP_RR -- -r 1473,1
check_usage "-m 65508: a UDP datagram holds at most 65507 bytes" -t UDP_STREAM -- -m 65508
check_usage "-c and -C: TCP_MAERTS's receive model does not measure CPU time" -t TCP_MAERTS -c
check_usage "-s must be a socket buffer size of 1 byte to 1G, not '0'" -- -s 0
check_usage "-S must be a socket buffer size" -- -S x
check_usage "-M must be a receive size of 1 byte to 1M" -- -M 2M
check_usage "--channels must be a number in 1..4096" --channels 0
check_usage "--irq-shift must be a number of CPUs in 0..4095" --irq-shift -1
check_usage "irq_shift must be below the machine's 128 CPUs, not 200" --irq-shift 200 -l 0.0001
check_usage "-l must be a test length in seconds" -l 2x
check_usage "-P must be 0 (no banner and headers) or 1, not '2'" -P 2
check_usage "-H needs a host name" -H ""
check_usage "--iommu-mode must be strict, lazy or passthrough, not 'off'" --iommu-mode=off
check_usage "--iommu-mode must be strict, lazy or passthrough" --iommu-mode off
check_usage "--queues must be a number in 1..256" --queues=0
check_usage "--queues must be a number in 1..256" --queues 257
check_usage "--seed must be a whole number from 1" --seed=x
check_usage "unknown option '-x'" -x
check_usage "unknown option '--frob'" --frob
check_usage "option '--json' takes no value" --json=1
check_usage "needs a value" -t
check_usage "unexpected argument 'foo' (test options go after --)" foo
check_usage "-m must be a send size of 1 byte to 1M" -- -m 0
check_usage "-m must be a send size of 1 byte to 1M" -- -m 2M
check_usage "-m must be a send size of 1 byte to 1M" -- -m 1q
check_usage "-r must be REQ[,RSP], sizes of 1 to 65160 bytes" -t TCP_RR -- -r 1,70000
check_usage "-r must be REQ[,RSP]" -t TCP_RR -- -r x
check_usage "unknown test option '-z'" -- -z 1
check_usage "test option '-m' needs a value" -- -m
check_usage "-m is a stream tests' option; TCP_RR takes -r REQ,RSP" -t TCP_RR -- -m 64
check_usage "-r is a request/response tests' option; TCP_STREAM takes -m SIZE" -- -r 1,1
check_usage "unexpected argument 'extra'" -- -m 64 extra
# machines: a profile whose nic: section has no netperf path; a topology without a NIC
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# kunpeng920 without the six netperf keys of its nic: section (nvme: keeps its irq_ns)
sed -E '/^nic:/,/^nvme:/{/^  (tx_skb_ns|tx_clean_ns|irq_ns|nic_tx_ns|nic_rx_ns|wire_ns):/d}' \
	"$2/profiles/kunpeng920.yaml" >"$tmp/notx.yaml"
check_usage "describes no netperf path" --profile="$tmp/notx.yaml" -l 0.0001
sed 's/^topology: .*/topology: "synthetic:pack:2 numa:2 pu:2"/' "$2/profiles/kunpeng920.yaml" \
	>"$tmp/nonic.yaml"
check_usage "topology synthetic:pack:2 numa:2 pu:2 has no NIC device" --profile="$tmp/nonic.yaml" -l 0.0001
check_usage "missing.yaml: No such file" --profile="$tmp/missing.yaml"
# a machine whose wire takes 10 ms: 100 us of TCP_RR complete no transaction, which is said
sed -E 's/^(  wire_ns: )[0-9]+/\110000000/' "$2/profiles/kunpeng920.yaml" >"$tmp/slow.yaml"
grep -q '^  wire_ns: 10000000$' "$tmp/slow.yaml" || bad "could not set wire_ns in a copy"
check_usage "-l 0.0001 s measured nothing (no transaction completed in the window): give a longer -l" \
	--profile="$tmp/slow.yaml" -t TCP_RR -l 0.0001
out=$("$BIN" netperf -t TCP_RR -l 0.0001 2>&1) || bad "netperf -t TCP_RR -l 0.0001: rc $?, $out"
# runs: netperf 2.7's lines (src/nettest_omni.c send_tcp_stream / send_tcp_rr)
out=$("$BIN" netperf -H peer -t TCP_STREAM -l 0.001 --queues=2 --iommu-mode=lazy -- -m 64K) ||
	bad "TCP_STREAM run: rc $?"
want_lines() { # what out: out's first lines must be these
	local what=$1 out=$2 want=$3
	[ "$(printf "%s\n" "$out" | head -n "$(printf "%s\n" "$want" | wc -l)")" = "$(printf "%s" "$want")" ] ||
		bad "$what header lines: '$out'"
}
want_lines TCP_STREAM "$out" 'MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET
Recv   Send    Send                          
Socket Socket  Message  Elapsed              
Size   Size    Size     Time     Throughput  
bytes  bytes   bytes    secs.    10^6bits/sec  
'
printf '%s\n' "$out" | grep -Eq '^131072  16384  65536    0\.00     +[0-9]+\.[0-9]{2}   $' ||
	bad "TCP_STREAM result line (5 columns): '$out'"
printf '%s\n' "$out" | grep -q '^iommulab: simulated time, TCP_STREAM to nic0 (node 2, iommu unit 2), iommu=lazy, 2 queues, profile kunpeng920, seed 1$' ||
	bad "TCP_STREAM iommulab line: '$out'"
printf '%s\n' "$out" | grep -Eq '^iommulab: tx [0-9]+ skbs, [0-9]+ segments in the window; [0-9]+ maps, [0-9]+ unmaps, [0-9]+ interrupts, 0 DMAs faulted, 0 map errors' ||
	bad "TCP_STREAM tx line: '$out'"
out=$("$BIN" netperf -t TCP_RR -l 0.001 --iommu-mode=passthrough -- -r 64) || bad "TCP_RR run: rc $?"
want_lines TCP_RR "$out" 'MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to localhost () port 0 AF_INET : first burst 0
Local /Remote
Socket Size   Request  Resp.   Elapsed  Trans.
Send   Recv   Size     Size    Time     Rate         
bytes  Bytes  bytes    bytes   secs.    per sec   
'
printf '%s\n' "$out" | grep -Eq '^16384  131072 64       64      0\.00     +[0-9]+\.[0-9]{2}   $' ||
	bad "TCP_RR result line (-r 64 is 64,64): '$out'"
printf '%s\n' "$out" | grep -Eq '^iommulab: latency p50 [0-9.]+ us, p99 [0-9.]+ us, [0-9]+ transactions$' ||
	bad "TCP_RR latency line: '$out'"
# -P 0: the data lines only; column 6 is the rate, the transactions over the window
out=$("$BIN" netperf -H peer -l 0.002 -t TCP_RR -P 0) || bad "TCP_RR -P 0: rc $?"
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || bad "TCP_RR -P 0: not 2 lines: '$out'"
if have python3 "TCP_RR's rate in column 6"; then
	js=$("$BIN" netperf -l 0.002 -t TCP_RR --json)
	rate=$(printf '%s\n' "$out" | awk 'NR == 1 {print $6}')
	printf '%s' "$js" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert abs(r["tps"] - float(sys.argv[1])) < 0.01, (r["tps"], sys.argv[1])' "$rate" ||
		bad "TCP_RR -P 0 column 6 '$rate' is not the JSON's tps"
fi
out=$("$BIN" netperf -t TCP_MAERTS -l 0.0005 --iommu-mode=strict) || bad "TCP_MAERTS run: rc $?"
printf '%s\n' "$out" | grep -q '^MIGRATED TCP MAERTS TEST from ' || bad "TCP_MAERTS banner: '$out'"
printf '%s\n' "$out" | grep -q '^iommulab: rx [0-9]* buffers, [0-9]* frames' || bad "TCP_MAERTS rx line: '$out'"
"$BIN" netperf --help | grep -q -- '-r REQ\[,RSP\]' || bad "netperf --help"
# UDP_STREAM, UDP_RR, TCP_CRR and -c/-C: netperf 2.7's layouts (nettest_omni.c send_udp_stream,
# send_udp_rr, send_tcp_conn_rr; with -c the cpu_title and cpu_fmt_1 strings)
out=$("$BIN" netperf -H peer -t UDP_STREAM -l 0.001 -- -m 1472) || bad "UDP_STREAM run: rc $?"
want_lines UDP_STREAM "$out" 'MIGRATED UDP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET
Socket  Message  Elapsed      Messages                
Size    Size     Time         Okay Errors   Throughput
bytes   bytes    secs            #      #   10^6bits/sec
'
printf '%s\n' "$out" | grep -Eq '^212992    1472   0\.00    +[0-9]+      0 +[0-9]+\.[0-9]{2}$' ||
	bad "UDP_STREAM local line: '$out'"
printf '%s\n' "$out" | grep -Eq '^212992           0\.00    +[0-9]+ +[0-9]+\.[0-9]{2}$' ||
	bad "UDP_STREAM remote line: '$out'"
out=$("$BIN" netperf -t UDP_STREAM -l 0.001 -P 0) || bad "UDP_STREAM -P 0: rc $?"
printf '%s\n' "$out" | awk 'NR == 1 && $2 == 65507 {ok = 1} END {exit !ok}' ||
	bad "UDP_STREAM's default message is 65507 bytes: '$out'"
out=$("$BIN" netperf -H peer -t UDP_RR -l 0.001) || bad "UDP_RR run: rc $?"
want_lines UDP_RR "$out" 'MIGRATED UDP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET : first burst 0
Local /Remote
Socket Size   Request  Resp.   Elapsed  Trans.
Send   Recv   Size     Size    Time     Rate         
bytes  Bytes  bytes    bytes   secs.    per sec   
'
printf '%s\n' "$out" | grep -Eq '^212992 212992 1        1       0\.00     +[0-9]+\.[0-9]{2}   $' ||
	bad "UDP_RR result line: '$out'"
out=$("$BIN" netperf -H peer -t TCP_CRR -l 0.001) || bad "TCP_CRR run: rc $?"
want_lines TCP_CRR "$out" 'MIGRATED TCP Connect/Request/Response TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET
Local /Remote
Socket Size   Request  Resp.   Elapsed  Trans.
Send   Recv   Size     Size    Time     Rate         
bytes  Bytes  bytes    bytes   secs.    per sec   
'
out=$("$BIN" netperf -H peer -t TCP_STREAM -l 0.001 -c -C -- -m 64K -s 64K) || bad "TCP_STREAM -c -C: rc $?"
want_lines "TCP_STREAM -c -C" "$out" 'MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET
Recv   Send    Send                          Utilization       Service Demand
Socket Socket  Message  Elapsed              Send     Recv     Send    Recv
Size   Size    Size     Time     Throughput  local    remote   local   remote
bytes  bytes   bytes    secs.    10^6bits/s  % S      % S      us/KB   us/KB
'
# -s 64K: getsockopt gives Linux's double; one stream busy on one CPU of 128 is 0.78 %
printf '%s\n' "$out" | grep -Eq '^131072 131072  65536    0\.00     +[0-9]+\.[0-9]{2}   0\.7[0-9]     0\.[0-9]{2}     [0-9.]+ +[0-9.]+ +$' ||
	bad "TCP_STREAM -c -C line: '$out'"
out=$("$BIN" netperf -H peer -t TCP_RR -l 0.001 -c) || bad "TCP_RR -c: rc $?"
want_lines "TCP_RR -c" "$out" 'MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET : first burst 0
Local /Remote
Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem
Send   Recv   Size    Size   Time    Rate     local  remote local   remote
bytes  bytes  bytes   bytes  secs.   per sec  % S    % S    us/Tr   us/Tr
'
# -c without -C: the remote figures are netperf's -1
printf '%s\n' "$out" | grep -Eq '^16384  131072 1       1      0\.00    [0-9]+\.[0-9]{2}  0\.[0-9]{2}   -1\.00  [0-9.]+ +-1\.000 $' ||
	bad "TCP_RR -c line: '$out'"
out=$("$BIN" netperf -t TCP_CRR -l 0.001 -c -C) || bad "TCP_CRR -c -C: rc $?"
printf '%s\n' "$out" | grep -qxF 'bytes  bytes  bytes   bytes  secs.   per sec  %      %      us/Tr   us/Tr' ||
	bad "TCP_CRR -c title: '$out'"
# -l -N: N transactions per stream, then the rate over the time they took
out=$("$BIN" netperf -t TCP_CRR -l -40 --queues 2) || bad "TCP_CRR -l -40: rc $?"
printf '%s\n' "$out" | grep -q '^iommulab: latency p50 [0-9.]* us, p99 [0-9.]* us, 80 transactions$' ||
	bad "TCP_CRR -l -40 --queues 2: not 80 transactions: '$out'"
# OMNI and the output selectors (nettest_omni.c: set_output_elt's header lines, print_omni_csv,
# print_omni_keyword, print_omni_human, set_output_list_by_test's default lists)
check_usage "-t must be TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM, UDP_RR or OMNI, not 'SCTP_RR'" -t SCTP_RR
check_usage "output selector 'P50_LATENCY' is not measured in this test" -- -o P50_LATENCY
check_usage "output selector 'STDDEV_LATENCY' is not supported" -t TCP_RR -- -o THROUGHPUT,STDDEV_LATENCY
check_usage "'sel.txt': a file of output selections is not supported" -- -k sel.txt
check_usage "-d must be send, recv or rr, not 'up'" -t OMNI -- -d up
check_usage "-T (after --) must be tcp or udp, not 'sctp'" -t OMNI -- -T sctp
check_usage "-d and -T (after --) are OMNI options" -t TCP_RR -- -d rr
check_usage "-t OMNI -- -d recv -T udp: UDP receive is not modelled" -t OMNI -- -d recv -T udp
out=$("$BIN" netperf -H peer -t TCP_RR -l 0.001 -- -o THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,TRANSACTION_RATE,LOCAL_CPU_UTIL) ||
	bad "TCP_RR -o: rc $?"
want_lines "TCP_RR -o" "$out" 'MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET : first burst 0
Throughput,Throughput Units,Mean Latency Microseconds,50th Percentile Latency Microseconds,90th Percentile Latency Microseconds,99th Percentile Latency Microseconds,Transaction Rate Tran/s,Local CPU Util %'
[ "$(printf '%s\n' "$out" | wc -l)" = 3 ] || bad "TCP_RR -o: not the banner, the header and the values: '$out'"
printf '%s\n' "$out" | sed -n 3p | grep -Eq '^[0-9]+\.[0-9]{2},Trans/s,[0-9]+\.[0-9]{2},[0-9]+,[0-9]+,[0-9]+,[0-9]+\.[0-9]{3},-1\.00$' ||
	bad "TCP_RR -o values: '$out'"
out=$("$BIN" netperf -t TCP_RR -l 0.001 -P 0 -c -- -k THROUGHPUT,P99_LATENCY,LOCAL_CPU_UTIL) || bad "-k: rc $?"
printf '%s\n' "$out" | awk -F= 'NR == 1 && $1 == "THROUGHPUT" {a = 1} NR == 2 && $1 == "P99_LATENCY" && $2 ~ /^[0-9]+$/ {b = 1}
	NR == 3 && $1 == "LOCAL_CPU_UTIL" && $2 > 0 {c = 1} END {exit !(a && b && c && NR == 3)}' || bad "-k: '$out'"
out=$("$BIN" netperf -H peer -t OMNI -l 0.001 -- -d send -m 64K) || bad "OMNI: rc $?"
want_lines "OMNI -d send" "$out" 'OMNI Send TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET
Local       Remote      Local  Elapsed Throughput Throughput  
Send Socket Recv Socket Send   Time               Units       
Size        Size        Size   (sec)                          
Final       Final                                             '
printf '%s\n' "$out" | grep -Eq '^16384       131072      65536  0\.00    [0-9]+\.[0-9]{2} +10\^6bits/s  $' ||
	bad "OMNI -d send values: '$out'"
out=$("$BIN" netperf -t OMNI -l 0.001 -P 0 -- -d rr -T udp -o PROTOCOL,DIRECTION,REQUEST_SIZE,THROUGHPUT_UNITS) || bad "OMNI rr udp: rc $?"
[ "$out" = 'UDP,Send|Recv,1,Trans/s' ] || bad "OMNI -d rr -T udp -o: '$out'"
# -i/-I: seeded repeats until the result's confidence interval is narrow enough (netperf's
# rules: at least 3 runs, at most 30; -I alone 3 to 10); the banner says what was asked
check_usage "-I must be LEVEL[,WIDTH]: a level of 95 or 99" -I 90
check_usage "-i must be MAX[,MIN] iterations, not 'x'" -i x
out=$("$BIN" netperf -H peer -t TCP_RR -l 0.001 -i 10,3 -I 95,1) || bad "-i -I: rc $?"
printf '%s\n' "$out" | head -1 | grep -qxF 'MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to peer () port 0 AF_INET : +/-0.500% @ 95% conf.  : first burst 0' ||
	bad "-i -I banner: '$out'"
printf '%s\n' "$out" | grep -q '^iommulab: 3 runs (seeds 1 to 3), the figures their means; the result.s 95% confidence interval 0\.000% of the mean wide, 1\.000% wanted$' ||
	bad "-i 10,3: not 3 runs: '$out'"
out=$("$BIN" netperf -t TCP_STREAM -l 0.001 -i 1 --seed 7) || bad "-i 1: rc $?"
printf '%s\n' "$out" | grep -q '^iommulab: 3 runs (seeds 7 to 9)' || bad "-i 1 is at least 3 runs: '$out'"
# the TX completions line: moved interrupts put every unmap on another CPU
out=$("$BIN" netperf -t UDP_STREAM -l 0.001 --queues 2 --irq-shift 40 -- -m 64) || bad "--irq-shift run: rc $?"
printf '%s\n' "$out" | grep -Eq '^iommulab: TX completions: [1-9][0-9]* of [0-9]+ unmaps on another CPU than their map.s \(channels from the profile, irq shift 40\), 4 CPUs did the work$' ||
	bad "--irq-shift 40: '$out'"
# the global -T LCPU[,RCPU] (netsh.c's break_args): N binds both, N, the local only, ,N the
# remote only; the stream runs on the local CPU, and XPS sends it on that CPU's channel
check_usage "-T 128: the machine has CPUs 0..127" -T 128 -l 0.0001
check_usage "-T ,128: the peer (modelled as this machine) has CPUs 0..127" -T ,128 -l 0.0001
check_usage "-T must be LCPU[,RCPU], ,RCPU or LCPU, (CPU numbers), not 'x'" -T x
check_usage "-T must be LCPU[,RCPU], ,RCPU or LCPU, (CPU numbers), not ','" -T ,
check_usage "-T must be LCPU[,RCPU], ,RCPU or LCPU, (CPU numbers), not '1,2,3'" -T 1,2,3
check_usage "-T must be LCPU[,RCPU], ,RCPU or LCPU, (CPU numbers), not '-1'" -T -1
check_usage "-T binds the one netperf process: not with --queues=2" -T 3 --queues=2
check_usage "-T 3: TCP_MAERTS's receive model does not place its queue on a CPU" -T 3 -t TCP_MAERTS
for tb in "7:7,7" "7,:7,-1" ",7:-1,7" "40,3:40,3" ":-1,-1"; do
	bind=(); [ -n "${tb%%:*}" ] && bind=(-T "${tb%%:*}")
	out=$("$BIN" netperf -t TCP_RR -l 0.001 -P 0 "${bind[@]}" -- -o LOCAL_CPU_BIND,REMOTE_CPU_BIND) ||
		bad "-T ${tb%%:*}: rc $?"
	[ "$out" = "${tb#*:}" ] || bad "-T ${tb%%:*} -o LOCAL_CPU_BIND,REMOTE_CPU_BIND: '$out', not '${tb#*:}'"
done
# kunpeng920's NIC is on node 2 (CPUs 64..95, the spread order's first 32): unbound, the
# stream reaps its own completions; -T 40 (node 1, the order's 73rd CPU) sends on channel
# 72 mod the profile's channels, whose interrupt is another CPU's
out=$("$BIN" netperf -t TCP_STREAM -l 0.001) || bad "unbound TCP_STREAM: rc $?"
printf '%s\n' "$out" | grep -Eq '^iommulab: TX completions: 0 of [0-9]+ unmaps .*, 1 CPUs did the work$' ||
	bad "unbound: '$out'"
out=$("$BIN" netperf -t TCP_STREAM -l 0.001 -T 40) || bad "-T 40 TCP_STREAM: rc $?"
printf '%s\n' "$out" | grep -Eq '^iommulab: TX completions: [1-9][0-9]* of [0-9]+ unmaps .*, 2 CPUs did the work$' ||
	bad "-T 40: '$out'"
if have python3 "netperf --json"; then
	"$BIN" netperf -t TCP_RR -l 0.001 --queues 2 --json -- -r 100,2000 | python3 -c '
import json, sys
d = json.load(sys.stdin)
t, r = d["test"], d["result"]
assert t["name"] == "TCP_RR" and t["req_bytes"] == 100 and t["rsp_bytes"] == 2000, t
assert t["iommu_mode"] == "strict" and t["queues"] == 2, t
assert r["transactions"] > 0 and r["dma_faults"] == 0 and r["map_errors"] == 0, r
assert abs(r["tps"] - r["transactions"] * 1e9 / r["window_ns"]) < 1e-6 * r["tps"], r
assert r["lat_min_ns"] <= r["lat_p50_ns"] <= r["lat_p99_ns"] <= r["lat_max_ns"], r
assert r["tx_maps"] == r["tx_unmaps"], r
assert "cpus" in d["stats"], list(d)
' || bad "netperf --json content"
	for tb in "40:40:1:40" ",5:64:2:5" "3,:3:0:-1"; do
		"$BIN" netperf -t TCP_RR -l 0.001 -T "${tb%%:*}" --json | TB=$tb python3 -c '
import json, os, sys
cpu, node, rcpu = (int(x) for x in os.environ["TB"].split(":")[1:])
d = json.load(sys.stdin)
t, r = d["test"], d["result"]
assert r["stream_cpu"] == cpu and r["stream_node"] == node, r
assert t["remote_cpu_bind"] == rcpu, t
' || bad "netperf -T ${tb%%:*} --json: the stream's CPU and node"
	done
fi
exit $fail
