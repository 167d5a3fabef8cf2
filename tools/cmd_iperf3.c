/* cmd_iperf3.c — `iommulab iperf3`: iperf3's client (-c HOST, -P, -t, -l, -R, -i, -O, -J,
 * -u -b) on the machine's NIC in the simulator, in one IOMMU mode, with iperf3 3.12's text
 * and JSON. The streams are the netperf model's (src/workloads/netperf.c): -c sends
 * (TCP_STREAM), -R receives (TCP_MAERTS), -u sends paced datagrams (UDP_STREAM with a rate);
 * the intervals are its per-interval payload counters. Not a TCP: no retransmissions,
 * congestion window or RTT, which iperf3's JSON has and this writes as 0.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iommulab/netperf.h>

#include "util/units.h"
#include "workloads/nic_env.h"

#define IPERF3_VERSION "iperf 3.12"      /* the iperf3 whose formats these are */
#define IPERF3_FIRST_SOCKET 5             /* iperf3's first stream socket on Linux */
#define IPERF3_SNDBUF 16384               /* Linux's tcp_wmem[1], tcp_rmem[1] (docs/iperf3.md) */
#define IPERF3_RCVBUF 131072
#define IPERF3_UDP_SOCKBUF 212992         /* net.core.wmem_default, rmem_default */
/* iperf3's UDP block without -l: the control connection's MSS (iperf_client_api.c), 1448 on
 * the simulated Ethernet (MTU 1500, TCP timestamps): one datagram per packet */
#define IPERF3_UDP_BLKSIZE ILAB_NETPERF_MSS
#define IPERF3_UDP_RATE 1e6               /* -u without -b: 1 Mbit/s */

struct ip_opts {
	struct ilab_netperf_cfg cfg;
	struct ilab_nic_env env;
	const char *host;
	unsigned port;
	uint64_t interval_ns, omit_ns;
	bool json, reverse, udp, rate_set, len_set;
	struct cli_trace_opt trace; /* --trace FILE and its limits (docs/trace.md) */
};

#define USAGE(...) cli_usage_error("iperf3", __VA_ARGS__)

static int parse_seconds(const char *s, double lo, double hi, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo) || v > hi)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* iperf3's -b: bits per second with K, M, G, T by 1000 (unit_atof_rate); a burst ("/N") is
 * not modelled and refused. */
static int parse_rate(const char *s, double *bps)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v >= 0) || v > 1e15)
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= 1e3; end++; break;
	case 'm': case 'M': v *= 1e6; end++; break;
	case 'g': case 'G': v *= 1e9; end++; break;
	case 't': case 'T': v *= 1e12; end++; break;
	default: break;
	}
	/* 0 is no limit; a pace below 1 bit/s or above 1 Pbit/s is no rate a NIC runs at, and
	 * its interval between datagrams, or the JSON's integer target_bitrate, would overflow */
	if (*end || (v != 0 && v < 1) || v > 1e15)
		return -1;
	*bps = v;
	return 0;
}

enum { O_MODE = 256, O_PROFILE, O_SEED, O_TRACE, O_TRACE_US, O_TRACE_MB };

static int parse_opt(int opt, struct ip_opts *o)
{
	uint64_t v;

	switch (opt) {
	case 'c': o->host = optarg; break;
	case 'p':
		if (cli_parse_count(optarg, 1, 65535, &v))
			return USAGE("-p must be a port, 1..65535, not '%s'", optarg);
		o->port = (unsigned)v;
		break;
	case 't':
		if (parse_seconds(optarg, 0.001, 1e6, &o->cfg.duration_ns))
			return USAGE("-t must be seconds, at least 0.001 (10, 0.5), not '%s'", optarg);
		break;
	case 'i':
		if (parse_seconds(optarg, 0, 60, &o->interval_ns) ||
		    (o->interval_ns && o->interval_ns < 1000000))
			return USAGE("-i must be 0 (no intervals) or 0.001 to 60 seconds, not '%s'",
				     optarg);
		break;
	case 'O':
		if (parse_seconds(optarg, 0, 1e6, &o->omit_ns))
			return USAGE("-O must be seconds to omit, not '%s'", optarg);
		break;
	case 'P':
		if (cli_parse_count(optarg, 1, 128, &v))
			return USAGE("-P must be a number of streams, 1..128, not '%s'", optarg);
		o->cfg.queues = (unsigned)v;
		break;
	case 'l':
		/* iperf3's sizes: K, M, G are powers of 1024 */
		if (ilab_parse_size(optarg, ILAB_UNITS_FIO_1024, &v) || !v ||
		    v > ILAB_NETPERF_MAX_MSG)
			return USAGE("-l must be a length of 1 byte to 1M (128K), not '%s'", optarg);
		o->cfg.send_bytes = (unsigned)v;
		o->len_set = true;
		break;
	case 'R': o->reverse = true; break;
	case 'J': o->json = true; break;
	case 'u': o->udp = true; break;
	case 'b':
		if (parse_rate(optarg, &o->cfg.rate_bps))
			return USAGE("-b must be a bit rate from 1 bit/s to 1000T, a number with K, "
				     "M, G or T (powers of 1000): 100M, 1.5G, 0 (no limit); not "
				     "'%s'", optarg);
		o->rate_set = true;
		break;
	case 's': return USAGE("-s: iommulab iperf3 is the client; the server is simulated");
	case O_MODE:
		if (!strcmp(optarg, "strict"))
			o->env.mode = ILAB_NIC_ENV_STRICT;
		else if (!strcmp(optarg, "lazy"))
			o->env.mode = ILAB_NIC_ENV_LAZY;
		else if (!strcmp(optarg, "passthrough"))
			o->env.mode = ILAB_NIC_ENV_PASSTHROUGH;
		else
			return USAGE("--iommu-mode must be strict, lazy or passthrough, not '%s'",
				     optarg);
		break;
	case O_PROFILE:
		if (!*optarg)
			return USAGE("--profile needs a profile name or file");
		o->env.profile = optarg;
		break;
	case O_SEED:
		if (cli_parse_count(optarg, 1, CLI_SEED_MAX, &o->env.seed))
			return USAGE("--seed must be a whole number from 1 to %llu, not '%s'",
				     (unsigned long long)CLI_SEED_MAX, optarg);
		break;
	case O_TRACE:
		return cli_trace_own_opt("iperf3", "trace", optarg, &o->trace);
	case O_TRACE_US:
		return cli_trace_own_opt("iperf3", "trace-limit-us", optarg, &o->trace);
	case O_TRACE_MB:
		return cli_trace_own_opt("iperf3", "trace-limit-mb", optarg, &o->trace);
	default: return -2;
	}
	return 0;
}

static int parse(int argc, char **argv, struct ip_opts *o)
{
	static const struct option opts[] = {
		{ "client", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "time", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "omit", required_argument, NULL, 'O' },
		{ "parallel", required_argument, NULL, 'P' },
		{ "length", required_argument, NULL, 'l' },
		{ "reverse", no_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'J' },
		{ "udp", no_argument, NULL, 'u' },
		{ "bitrate", required_argument, NULL, 'b' },
		{ "server", no_argument, NULL, 's' },
		{ "iommu-mode", required_argument, NULL, O_MODE },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "seed", required_argument, NULL, O_SEED },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "trace-limit-us", required_argument, NULL, O_TRACE_US },
		{ "trace-limit-mb", required_argument, NULL, O_TRACE_MB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, ret;

	memset(o, 0, sizeof(*o));
	o->trace.max_bytes = ILAB_TRACE_MAX_BYTES;
	o->port = 5201;                    /* iperf3's defaults */
	o->cfg.duration_ns = 10000000000ull;
	o->interval_ns = 1000000000ull;
	o->cfg.queues = 1;
	o->cfg.send_bytes = 131072;
	o->cfg.ring_size = 64;             /* as iommulab netperf */
	o->env.profile = "kunpeng920";
	o->env.seed = 1;
	o->env.nic_node = 2;
	o->env.mode = ILAB_NIC_ENV_STRICT;
	o->env.map_pages = true;
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":c:p:t:i:O:P:l:RJub:sh", opts, NULL)) != -1) {
		if (opt == 'h') {
			cli_print_command_help(cli_find_command("iperf3"), stdout);
			return -1;
		}
		ret = parse_opt(opt, o);
		if (ret == -2)
			return cli_bad_option("iperf3", opt, argc, argv);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return USAGE("unexpected argument '%s'", argv[optind]);
	if (!o->host || !*o->host)
		return USAGE("-c HOST is needed: iommulab iperf3 is iperf3's client");
	o->cfg.test = o->reverse ? ILAB_NETPERF_MAERTS : ILAB_NETPERF_STREAM;
	if (o->rate_set && !o->udp)
		return USAGE("-b: a rate limit is modelled for UDP (-u) only; TCP streams send as "
			     "fast as they can");
	if (o->udp && o->reverse)
		return USAGE("-u with -R: UDP receive is not modelled (only this host sending)");
	if (o->udp) {
		o->cfg.test = ILAB_NETPERF_UDP_STREAM;
		if (!o->len_set)
			o->cfg.send_bytes = IPERF3_UDP_BLKSIZE;
		if (o->cfg.send_bytes > ILAB_NETPERF_UDP_MAX)
			return USAGE("-l %u: a UDP datagram holds at most %u bytes",
				     o->cfg.send_bytes, ILAB_NETPERF_UDP_MAX);
		if (!o->rate_set)
			o->cfg.rate_bps = IPERF3_UDP_RATE;
	}
	o->cfg.warmup_ns = o->omit_ns;
	return 0;
}

/* iperf3's unit_snprintf, adaptive: bytes by 1024 (KBytes...), bits by 1000 (Kbits...),
 * four places. */
static void units(char *buf, size_t len, double v, bool bits)
{
	static const char *const byte_label[] = { "Bytes", "KBytes", "MBytes", "GBytes", "TBytes" };
	static const char *const bit_label[] = { "bits", "Kbits", "Mbits", "Gbits", "Tbits" };
	double base = bits ? 1000 : 1024;
	unsigned k = 0;

	while (v >= base && k < 4) {
		v /= base;
		k++;
	}
	snprintf(buf, len, v < 9.995 ? "%4.2f %s" : v < 99.95 ? "%4.1f %s" : "%4.0f %s", v,
		 bits ? bit_label[k] : byte_label[k]);
}

struct ip_run {
	const struct ip_opts *o;
	const struct ilab_netperf_result *r;
	const uint64_t *ib;   /* queues x intervals */
	unsigned nint;
	double secs;
	const struct ilab_netperf_stream *st; /* -u: per stream */
};

static uint64_t stream_bytes(const struct ip_run *x, unsigned q)
{
	uint64_t b = 0;

	for (unsigned i = 0; i < x->nint; i++)
		b += x->ib[(size_t)q * x->nint + i];
	return x->nint ? b : (x->o->cfg.queues == 1 ? x->r->bytes : 0);
}

static double interval_end(const struct ip_run *x, unsigned i)
{
	double e = (i + 1) * (x->o->interval_ns / 1e9);

	return e < x->secs ? e : x->secs;
}

static void text_line(const char *id, double a, double b, uint64_t bytes, const char *tail)
{
	char tr[32], bw[32];

	units(tr, sizeof(tr), (double)bytes, false);
	units(bw, sizeof(bw), b > a ? bytes * 8.0 / (b - a) : 0, true);
	/* report_bw_format / report_sum_bw_format */
	printf("[%s] %6.2f-%-6.2f sec  %s  %s/sec                  %s\n", id, a, b, tr, bw, tail);
}

/* iperf3's opening lines: the control connection, then one line per stream's socket. */
static void print_connected(const struct ip_opts *o)
{
	printf("Connecting to host %s, port %u\n", o->host, o->port);
	if (o->reverse)
		printf("Reverse mode, remote host %s is sending\n", o->host);
	for (unsigned q = 0; q < o->cfg.queues; q++)
		printf("[%3u] local 0.0.0.0 port %u connected to %s port %u\n",
		       IPERF3_FIRST_SOCKET + 2 * q, 40000 + q, o->host, o->port);
}

static void print_text(const struct ip_run *x, const struct ilab_nic_env_info *in)
{
	const struct ip_opts *o = x->o;
	unsigned nq = o->cfg.queues;
	char id[8];

	print_connected(o);
	printf("[ ID] Interval           Transfer     Bitrate\n");
	for (unsigned i = 0; i < x->nint; i++) {
		double a = i * (o->interval_ns / 1e9), b = interval_end(x, i);
		uint64_t sum = 0;

		for (unsigned q = 0; q < nq; q++) {
			uint64_t v = x->ib[(size_t)q * x->nint + i];

			snprintf(id, sizeof(id), "%3u", IPERF3_FIRST_SOCKET + 2 * q);
			text_line(id, a, b, v, "");
			sum += v;
		}
		if (nq > 1) {
			text_line("SUM", a, b, sum, "");
			printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
		}
	}
	if (nq == 1 || !x->nint) /* with -P, each interval's [SUM] is followed by one already */
		printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	printf("[ ID] Interval           Transfer     Bitrate\n");
	for (unsigned q = 0; q < nq; q++) {
		snprintf(id, sizeof(id), "%3u", IPERF3_FIRST_SOCKET + 2 * q);
		text_line(id, 0, x->secs, stream_bytes(x, q), "sender");
		text_line(id, 0, x->secs, stream_bytes(x, q), "receiver");
	}
	if (nq > 1) {
		text_line("SUM", 0, x->secs, x->r->bytes, "sender");
		text_line("SUM", 0, x->secs, x->r->bytes, "receiver");
	}
	printf("\niperf Done.\n");
	printf("iommulab: simulated time, %s to %s (node %d, iommu unit %u), iommu=%s, profile "
	       "%s, seed %llu\n", o->reverse ? "receiving" : "sending", in->device, in->node,
	       in->iommu, o->env.mode == ILAB_NIC_ENV_LAZY ? "lazy" :
	       o->env.mode == ILAB_NIC_ENV_PASSTHROUGH ? "passthrough" : "strict", in->profile,
	       (unsigned long long)o->env.seed);
}

static json_t *span(int sock, double a, double b, uint64_t bytes, bool sender, bool tcp_info)
{
	json_t *o = sock >= 0 ? json_pack("{s:i}", "socket", sock) : json_object();

	json_object_set_new(o, "start", json_real(a));
	json_object_set_new(o, "end", json_real(b));
	json_object_set_new(o, "seconds", json_real(b - a));
	json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(o, "bits_per_second", json_real(b > a ? bytes * 8.0 / (b - a) : 0));
	if (tcp_info) /* tcp_info the model has no counterpart for (docs/iperf3.md) */
		json_object_update_new(o, json_pack("{s:i,s:i,s:i,s:i,s:i,s:i}", "retransmits", 0,
						     "snd_cwnd", 0, "snd_wnd", 0, "rtt", 0,
						     "rttvar", 0, "pmtu", 0));
	return o;
}

static void print_json(const struct ip_run *x)
{
	const struct ip_opts *o = x->o;
	unsigned nq = o->cfg.queues;
	json_t *connected = json_array(), *intervals = json_array(), *streams = json_array();
	time_t now = time(NULL);
	char tbuf[64];
	json_t *root, *sum_sent, *sum_rcvd;
	/* the receive model (-R) does not measure the CPUs' busy time: 0 there */
	double busy = x->r->cpu_busy > 0 ? 100.0 * x->r->cpu_busy : 0;

	strftime(tbuf, sizeof(tbuf), "%a, %d %b %Y %H:%M:%S GMT", gmtime(&now));
	for (unsigned q = 0; q < nq; q++)
		json_array_append_new(connected, json_pack("{s:i,s:s,s:i,s:s,s:i}", "socket",
			IPERF3_FIRST_SOCKET + 2 * q, "local_host", "0.0.0.0", "local_port",
			40000 + q, "remote_host", o->host, "remote_port", o->port));
	for (unsigned i = 0; i < x->nint; i++) {
		double a = i * (o->interval_ns / 1e9), b = interval_end(x, i);
		json_t *ss = json_array(), *sum;
		uint64_t total = 0;

		for (unsigned q = 0; q < nq; q++) {
			uint64_t v = x->ib[(size_t)q * x->nint + i];
			json_t *s = span(IPERF3_FIRST_SOCKET + 2 * q, a, b, v, !o->reverse,
					 !o->reverse);

			json_object_set_new(s, "omitted", json_false());
			json_object_set_new(s, "sender", json_boolean(!o->reverse));
			json_array_append_new(ss, s);
			total += v;
		}
		sum = span(-1, a, b, total, !o->reverse, false);
		if (!o->reverse)
			json_object_set_new(sum, "retransmits", json_integer(0));
		json_object_set_new(sum, "omitted", json_false());
		json_object_set_new(sum, "sender", json_boolean(!o->reverse));
		json_array_append_new(intervals, json_pack("{s:o,s:o}", "streams", ss, "sum", sum));
	}
	for (unsigned q = 0; q < nq; q++) {
		int sock = IPERF3_FIRST_SOCKET + 2 * q;
		uint64_t b = stream_bytes(x, q);
		json_t *snd = span(sock, 0, x->secs, b, true, false);
		json_t *rcv = span(sock, 0, x->secs, b, true, false);

		json_object_update_new(snd, json_pack("{s:i,s:i,s:i,s:i,s:i,s:i}", "retransmits", 0,
						       "max_snd_cwnd", 0, "max_snd_wnd", 0,
						       "max_rtt", 0, "min_rtt", 0, "mean_rtt", 0));
		json_object_set_new(snd, "sender", json_boolean(!o->reverse));
		json_object_set_new(rcv, "sender", json_boolean(!o->reverse));
		json_array_append_new(streams, json_pack("{s:o,s:o}", "sender", snd, "receiver",
							 rcv));
	}
	sum_sent = span(-1, 0, x->secs, x->r->bytes, true, false);
	json_object_set_new(sum_sent, "retransmits", json_integer(0));
	json_object_set_new(sum_sent, "sender", json_boolean(!o->reverse));
	sum_rcvd = span(-1, 0, x->secs, x->r->bytes, true, false);
	json_object_set_new(sum_rcvd, "sender", json_boolean(!o->reverse));
	root = json_pack(
		"{s:{s:o,s:s,s:s,s:{s:s,s:I},s:{s:s,s:i},s:s,s:i,s:i,s:i,s:i,s:i,"
		"s:{s:s,s:i,s:i,s:i,s:f,s:i,s:i,s:i,s:i,s:i}},s:o,"
		"s:{s:o,s:o,s:o,s:{s:f,s:f,s:f,s:f,s:f,s:f},s:s,s:s}}",
		"start", "connected", connected, "version", IPERF3_VERSION, "system_info",
		"iommulab simulated machine", "timestamp", "time", tbuf, "timesecs", (json_int_t)now,
		"connecting_to", "host", o->host, "port", (int)o->port, "cookie", "iommulab",
		"tcp_mss_default", (int)ILAB_NETPERF_MSS, "target_bitrate", 0, "sock_bufsize", 0,
		"sndbuf_actual", IPERF3_SNDBUF, "rcvbuf_actual", IPERF3_RCVBUF,
		"test_start", "protocol", "TCP", "num_streams", (int)nq, "blksize",
		(int)o->cfg.send_bytes, "omit", (int)(o->omit_ns / 1000000000ull), "duration",
		o->cfg.duration_ns / 1e9, "bytes", 0, "blocks", 0, "reverse", o->reverse ? 1 : 0,
		"tos", 0, "target_bitrate", 0,
		"intervals", intervals,
		"end", "streams", streams, "sum_sent", sum_sent, "sum_received", sum_rcvd,
		"cpu_utilization_percent", "host_total", busy, "host_user", 0.0,
		"host_system", busy, "remote_total", 0.0, "remote_user", 0.0,
		"remote_system", 0.0, "sender_tcp_congestion", "none",
		"receiver_tcp_congestion", "none");
	if (!root) {
		fprintf(stderr, "%s iperf3: out of memory\n", CLI_PROG);
		return;
	}
	json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	putchar('\n');
	json_decref(root);
}

/* ---- -u: iperf3's UDP test (iperf_locale.c's report_bw_udp_* formats, iperf_api.c's JSON) */

static uint64_t datagrams(const struct ip_run *x, uint64_t bytes)
{
	unsigned len = x->o->cfg.send_bytes;

	return (bytes + len / 2) / len;
}

static void udp_sender_line(const char *id, double a, double b, uint64_t bytes, uint64_t pkts)
{
	char tr[32], bw[32];

	units(tr, sizeof(tr), (double)bytes, false);
	units(bw, sizeof(bw), b > a ? bytes * 8.0 / (b - a) : 0, true);
	printf("[%s] %6.2f-%-6.2f sec  %s  %s/sec  %llu  \n", id, a, b, tr, bw,
	       (unsigned long long)pkts);
}

static void udp_summary_line(const char *id, double secs, uint64_t bytes, double jitter_ms,
			     uint64_t lost, uint64_t total, const char *role)
{
	char tr[32], bw[32];

	units(tr, sizeof(tr), (double)bytes, false);
	units(bw, sizeof(bw), secs > 0 ? bytes * 8.0 / secs : 0, true);
	printf("[%s] %6.2f-%-6.2f sec  %s  %s/sec  %5.3f ms  %llu/%llu (%.2g%%)  %s\n", id, 0.0,
	       secs, tr, bw, jitter_ms, (unsigned long long)lost, (unsigned long long)total,
	       total ? 100.0 * (double)lost / (double)total : 0.0, role);
}

static void print_text_udp(const struct ip_run *x, const struct ilab_nic_env_info *in)
{
	const struct ip_opts *o = x->o;
	unsigned nq = o->cfg.queues, len = o->cfg.send_bytes;
	uint64_t sent = 0, got = 0;
	double jitter = 0;
	char id[8];

	print_connected(o);
	printf("[ ID] Interval           Transfer     Bitrate         Total Datagrams\n");
	for (unsigned i = 0; i < x->nint; i++) {
		double a = i * (o->interval_ns / 1e9), b = interval_end(x, i);
		uint64_t sum = 0;

		for (unsigned q = 0; q < nq; q++) {
			uint64_t v = x->ib[(size_t)q * x->nint + i];

			snprintf(id, sizeof(id), "%3u", IPERF3_FIRST_SOCKET + 2 * q);
			udp_sender_line(id, a, b, v, datagrams(x, v));
			sum += v;
		}
		if (nq > 1) {
			udp_sender_line("SUM", a, b, sum, datagrams(x, sum));
			printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
		}
	}
	if (nq == 1 || !x->nint)
		printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	printf("[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total "
	       "Datagrams\n");
	for (unsigned q = 0; q < nq; q++) {
		const struct ilab_netperf_stream *st = &x->st[q];

		snprintf(id, sizeof(id), "%3u", IPERF3_FIRST_SOCKET + 2 * q);
		udp_summary_line(id, x->secs, st->messages * len, 0, 0, st->messages, "sender");
		udp_summary_line(id, x->secs, st->remote_messages * len, st->jitter_ns / 1e6,
				 st->messages - st->remote_messages, st->messages, "receiver");
		sent += st->messages;
		got += st->remote_messages;
		jitter += st->jitter_ns / 1e6 / nq;
	}
	if (nq > 1) {
		udp_summary_line("SUM", x->secs, sent * len, 0, 0, sent, "sender");
		udp_summary_line("SUM", x->secs, got * len, jitter, sent - got, sent, "receiver");
	}
	printf("\niperf Done.\n");
	printf("iommulab: simulated time, sending UDP to %s (node %d, iommu unit %u), iommu=%s, "
	       "profile %s, seed %llu\n", in->device, in->node, in->iommu,
	       o->env.mode == ILAB_NIC_ENV_LAZY ? "lazy" :
	       o->env.mode == ILAB_NIC_ENV_PASSTHROUGH ? "passthrough" : "strict", in->profile,
	       (unsigned long long)o->env.seed);
}

/* an end figure: iperf3's keys for a UDP summary (sock < 0: the sums, without socket and
 * out_of_order) */
static json_t *udp_end(int sock, double secs, uint64_t bytes, double jitter_ms, uint64_t lost,
		       uint64_t pkts, bool sender)
{
	json_t *o = sock >= 0 ? json_pack("{s:i}", "socket", sock) : json_object();

	json_object_update_new(o, json_pack("{s:f,s:f,s:f,s:I,s:f,s:f,s:I,s:I,s:f}", "start", 0.0,
		"end", secs, "seconds", secs, "bytes", (json_int_t)bytes, "bits_per_second",
		secs > 0 ? bytes * 8.0 / secs : 0.0, "jitter_ms", jitter_ms, "lost_packets",
		(json_int_t)lost, "packets", (json_int_t)pkts, "lost_percent",
		pkts ? 100.0 * (double)lost / (double)pkts : 0.0));
	if (sock >= 0)
		json_object_set_new(o, "out_of_order", json_integer(0));
	json_object_set_new(o, "sender", json_boolean(sender));
	return o;
}

static void print_json_udp(const struct ip_run *x)
{
	const struct ip_opts *o = x->o;
	unsigned nq = o->cfg.queues, len = o->cfg.send_bytes;
	json_t *connected = json_array(), *intervals = json_array(), *streams = json_array();
	time_t now = time(NULL);
	char tbuf[64];
	uint64_t sent = 0, got = 0;
	double jitter = 0, busy = x->r->cpu_busy > 0 ? 100.0 * x->r->cpu_busy : 0;
	json_t *root;

	strftime(tbuf, sizeof(tbuf), "%a, %d %b %Y %H:%M:%S GMT", gmtime(&now));
	for (unsigned q = 0; q < nq; q++)
		json_array_append_new(connected, json_pack("{s:i,s:s,s:i,s:s,s:i}", "socket",
			IPERF3_FIRST_SOCKET + 2 * q, "local_host", "0.0.0.0", "local_port",
			40000 + q, "remote_host", o->host, "remote_port", o->port));
	for (unsigned i = 0; i < x->nint; i++) {
		double a = i * (o->interval_ns / 1e9), b = interval_end(x, i);
		json_t *ss = json_array(), *sum;
		uint64_t total = 0;

		for (unsigned q = 0; q < nq; q++) {
			uint64_t v = x->ib[(size_t)q * x->nint + i];
			json_t *s = span(IPERF3_FIRST_SOCKET + 2 * q, a, b, v, true, false);

			json_object_set_new(s, "packets", json_integer((json_int_t)datagrams(x, v)));
			json_object_set_new(s, "omitted", json_false());
			json_object_set_new(s, "sender", json_true());
			json_array_append_new(ss, s);
			total += v;
		}
		sum = span(-1, a, b, total, true, false);
		json_object_set_new(sum, "packets", json_integer((json_int_t)datagrams(x, total)));
		json_object_set_new(sum, "omitted", json_false());
		json_object_set_new(sum, "sender", json_true());
		json_array_append_new(intervals, json_pack("{s:o,s:o}", "streams", ss, "sum", sum));
	}
	for (unsigned q = 0; q < nq; q++) {
		const struct ilab_netperf_stream *st = &x->st[q];

		json_array_append_new(streams, json_pack("{s:o}", "udp",
			udp_end(IPERF3_FIRST_SOCKET + 2 * q, x->secs, st->messages * len,
				st->jitter_ns / 1e6, st->messages - st->remote_messages,
				st->messages, true)));
		sent += st->messages;
		got += st->remote_messages;
		jitter += st->jitter_ns / 1e6 / nq;
	}
	root = json_pack(
		"{s:{s:o,s:s,s:s,s:{s:s,s:I},s:{s:s,s:i},s:s,s:I,s:i,s:i,s:i,"
		"s:{s:s,s:i,s:i,s:i,s:f,s:i,s:i,s:i,s:i,s:I}},s:o,"
		"s:{s:o,s:o,s:o,s:o,s:{s:f,s:f,s:f,s:f,s:f,s:f}}}",
		"start", "connected", connected, "version", IPERF3_VERSION, "system_info",
		"iommulab simulated machine", "timestamp", "time", tbuf, "timesecs", (json_int_t)now,
		"connecting_to", "host", o->host, "port", (int)o->port, "cookie", "iommulab",
		"target_bitrate", (json_int_t)o->cfg.rate_bps, "sock_bufsize", 0,
		"sndbuf_actual", IPERF3_UDP_SOCKBUF, "rcvbuf_actual", IPERF3_UDP_SOCKBUF,
		"test_start", "protocol", "UDP", "num_streams", (int)nq, "blksize", (int)len,
		"omit", (int)(o->omit_ns / 1000000000ull), "duration", o->cfg.duration_ns / 1e9,
		"bytes", 0, "blocks", 0, "reverse", 0, "tos", 0, "target_bitrate",
		(json_int_t)o->cfg.rate_bps,
		"intervals", intervals,
		"end", "streams", streams,
		"sum", udp_end(-1, x->secs, sent * len, jitter, sent - got, sent, true),
		"sum_sent", udp_end(-1, x->secs, sent * len, 0, 0, sent, true),
		"sum_received", udp_end(-1, x->secs, got * len, jitter, sent - got, sent, false),
		"cpu_utilization_percent", "host_total", busy, "host_user", 0.0,
		"host_system", busy, "remote_total", 0.0, "remote_user", 0.0,
		"remote_system", 0.0);
	if (!root) {
		fprintf(stderr, "%s iperf3: out of memory\n", CLI_PROG);
		return;
	}
	json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	putchar('\n');
	json_decref(root);
}

int cmd_iperf3(int argc, char **argv)
{
	struct ip_opts o;
	struct ilab_netperf_result res;
	struct ilab_nic_env_info info = { 0 };
	struct cli_progress progress;
	struct ilab_trace *trace = NULL;
	char err[600] = "", label[300];
	double estimate_s;
	uint64_t sim_ns, *ib = NULL;
	unsigned nint = 0;
	struct ilab_netperf_stream st[128];
	int ret = parse(argc, argv, &o);

	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret; /* -1: --help was printed */
	if (o.udp)
		o.cfg.streams = st; /* -P is at most 128 */
	ret = cli_netperf_check_time("iperf3", &o.cfg, 1, "shorten -t or lower -P", &estimate_s,
				     &sim_ns);
	if (ret)
		return ret;
	if (o.interval_ns) {
		nint = (unsigned)((o.cfg.duration_ns + o.interval_ns - 1) / o.interval_ns);
		ib = calloc((size_t)nint * o.cfg.queues, sizeof(*ib));
		if (!ib)
			return fprintf(stderr, "%s iperf3: out of memory\n", CLI_PROG), CLI_EXIT_FAIL;
		o.cfg.report_interval_ns = o.interval_ns;
		o.cfg.intervals = nint;
		o.cfg.interval_bytes = ib;
	}
	snprintf(label, sizeof(label), "iperf3 -c %s (%s, seed %llu)", o.host, o.env.profile,
		 (unsigned long long)o.env.seed);
	ret = cli_trace_start("iperf3", &o.trace, o.env.profile, label, &trace);
	if (ret) {
		free(ib);
		return ret;
	}
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	cli_progress_start(&progress, "iperf3", estimate_s, sim_ns);
	ret = ilab_netperf_env_run(&o.env, &o.cfg, &res, NULL, &info, err, sizeof(err));
	cli_progress_end(&progress);
	if (trace && cli_trace_close("iperf3", &o.trace, trace) && !ret) {
		free(ib);
		return CLI_EXIT_FAIL;
	}
	if (ret) {
		free(ib);
		fprintf(stderr, "%s iperf3: %s\n", CLI_PROG, err);
		return ret == -EINVAL || ret == -ENOENT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	{
		struct ip_run x = { .o = &o, .r = &res, .ib = ib, .nint = nint,
				    .secs = res.window_ns / 1e9, .st = st };

		if (o.json)
			o.udp ? print_json_udp(&x) : print_json(&x);
		else
			o.udp ? print_text_udp(&x, &info) : print_text(&x, &info);
	}
	free(ib);
	return CLI_EXIT_OK;
}
