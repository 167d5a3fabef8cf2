/* cmd_netperf.c — `iommulab netperf`: netperf's TCP_STREAM, TCP_MAERTS and TCP_RR on the
 * machine's NIC in the simulator, in one IOMMU mode, with netperf's option names (-t, -l,
 * and after `--` the test's -m or -r) and netperf's figures in simulated time.
 * Not the model (src/workloads/netperf.c) nor the machine's set-up (netperf_env.c): this
 * parses options and prints.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/netperf.h>

#include "experiments/host_time.h"
#include "workloads/nic_env.h"

struct np_opts {
	struct ilab_netperf_cfg cfg;
	struct ilab_nic_env env;
	const char *host;   /* -H: the simulated peer's name (nothing is sent) */
	bool headers;       /* -P 1 (netperf's default) */
	bool json;
	bool m_set, r_set;
	struct cli_trace_opt trace; /* --trace FILE and its limits (docs/trace.md) */
};

/* The socket buffer sizes netperf prints (getsockopt before the test, which on Linux is
 * tcp_wmem[1] and tcp_rmem[1]: 16384 and 131072 since Linux 4.20, Documentation/networking/
 * ip-sysctl.rst). Configuration the model has no counterpart for, printed as Linux's. */
#define NETPERF_SNDBUF 16384
#define NETPERF_RCVBUF 131072

static const char *const test_names[] = { "TCP_STREAM", "TCP_MAERTS", "TCP_RR" };

#define USAGE(...) cli_usage_error("netperf", __VA_ARGS__)

/* netperf's sizes: a number with an optional k/K or m/M (powers of 1024). */
static int parse_size(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long long v, mul = 1;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	if (*end || v == 0 || v > max / mul)
		return -1;
	*out = (unsigned)(v * mul);
	return 0;
}

/* -l: seconds of simulated time, a decimal number from 0.0001 up (the host-time estimate
 * bounds it; netperf's negative lengths, counts of transactions or bytes, are refused by the
 * caller). 100 us is the least in which
 * every test measures something on the shipped profiles (kunpeng920: TCP_RR 2 transactions,
 * TCP_STREAM 12 skbs); shorter, a window holds no transaction and the result would be 0. */
#define NETPERF_LENGTH_MIN_S 0.0001
static int parse_length(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]) && s[0] != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= NETPERF_LENGTH_MIN_S) || v > 1e6)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return *ns ? 0 : -1;
}

enum { O_MODE = 256, O_QUEUES, O_CHANNELS, O_IRQ_SHIFT, O_PROFILE, O_SEED, O_JSON, O_HELP, O_TRACE, O_TRACE_US,
       O_TRACE_MB };

static int parse_global(int opt, struct np_opts *o)
{
	uint64_t v;

	switch (opt) {
	case 't':
		for (unsigned i = 0; i < 3; i++)
			if (!strcmp(optarg, test_names[i])) {
				o->cfg.test = (enum ilab_netperf_test)i;
				return 0;
			}
		return USAGE("-t must be TCP_STREAM, TCP_MAERTS or TCP_RR (UDP_STREAM, UDP_RR, "
			     "TCP_CRR and OMNI are not supported), not '%s'", optarg);
	case 'l':
		if (optarg[0] == '-')
			return USAGE("-l %s: a count of transactions or bytes is not supported; give "
				     "the length in seconds", optarg);
		if (parse_length(optarg, &o->cfg.duration_ns))
			return USAGE("-l must be a test length in seconds, at least %g (30, 0.02), "
				     "not '%s'", NETPERF_LENGTH_MIN_S, optarg);
		return 0;
	case 'H':
		if (!*optarg)
			return USAGE("-H needs a host name");
		o->host = optarg;
		return 0;
	case 'P':
		if (strcmp(optarg, "0") && strcmp(optarg, "1"))
			return USAGE("-P must be 0 (no banner and headers) or 1, not '%s'", optarg);
		o->headers = optarg[0] == '1';
		return 0;
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
		return 0;
	case O_QUEUES:
		if (cli_parse_count(optarg, 1, ILAB_NETPERF_MAX_QUEUES, &v))
			return USAGE("--queues must be a number in 1..%u, not '%s'",
				     ILAB_NETPERF_MAX_QUEUES, optarg);
		o->cfg.queues = (unsigned)v;
		return 0;
	case O_CHANNELS:
		if (cli_parse_count(optarg, 1, 4096, &v))
			return USAGE("--channels must be a number in 1..4096 (ethtool -L combined), "
				     "not '%s'", optarg);
		o->cfg.channels = (unsigned)v;
		return 0;
	case O_IRQ_SHIFT:
		if (cli_parse_count(optarg, 0, 4095, &v))
			return USAGE("--irq-shift must be a number of CPUs in 0..4095, not '%s'",
				     optarg);
		o->cfg.irq_shift = (unsigned)v;
		return 0;
	case O_PROFILE:
		if (!*optarg)
			return USAGE("--profile needs a profile name or file");
		o->env.profile = optarg;
		return 0;
	case O_SEED:
		if (cli_parse_count(optarg, 1, CLI_SEED_MAX, &o->env.seed))
			return USAGE("--seed must be a whole number from 1 to %llu, not '%s'",
				     (unsigned long long)CLI_SEED_MAX, optarg);
		return 0;
	case O_JSON:
		o->json = true;
		return 0;
	case O_TRACE:
		return cli_trace_own_opt("netperf", "trace", optarg, &o->trace);
	case O_TRACE_US:
		return cli_trace_own_opt("netperf", "trace-limit-us", optarg, &o->trace);
	case O_TRACE_MB:
		return cli_trace_own_opt("netperf", "trace-limit-mb", optarg, &o->trace);
	default:
		return -2;
	}
}

/* After `--`: the test's own options, netperf's -m (send size) and -r (request,response). */
static int parse_test(int argc, char **argv, struct np_opts *o)
{
	int opt;

	optind = 0; /* glibc: start a new scan */
	while ((opt = getopt(argc, argv, "+:m:r:")) != -1) {
		switch (opt) {
		case 'm':
			if (parse_size(optarg, ILAB_NETPERF_MAX_MSG, &o->cfg.send_bytes))
				return USAGE("-m must be a send size of 1 byte to 1M (64, 16K), not "
					     "'%s'", optarg);
			o->m_set = true;
			break;
		case 'r': {
			char req[32], *comma;

			snprintf(req, sizeof(req), "%s", optarg);
			comma = strchr(req, ',');
			if (comma)
				*comma++ = '\0';
			if (parse_size(req, ILAB_NETPERF_TSO_BYTES, &o->cfg.req_bytes) ||
			    (comma && *comma && parse_size(comma, ILAB_NETPERF_TSO_BYTES,
							   &o->cfg.rsp_bytes)))
				return USAGE("-r must be REQ[,RSP], sizes of 1 to %u bytes (one TSO "
					     "skb), not '%s'", ILAB_NETPERF_TSO_BYTES, optarg);
			if (!comma || !*comma)
				o->cfg.rsp_bytes = o->cfg.req_bytes; /* netperf: -r 64 is 64,64 */
			o->r_set = true;
			break;
		}
		case ':':
			return USAGE("test option '-%c' needs a value", optopt);
		default:
			return USAGE("unknown test option '-%c' (after --: -m SIZE for TCP_STREAM "
				     "and TCP_MAERTS, -r REQ,RSP for TCP_RR)", optopt);
		}
	}
	if (optind < argc)
		return USAGE("unexpected argument '%s'", argv[optind]);
	return 0;
}

static int parse(int argc, char **argv, struct np_opts *o)
{
	static const struct option opts[] = {
		{ "iommu-mode", required_argument, NULL, O_MODE },
		{ "queues", required_argument, NULL, O_QUEUES },
		{ "channels", required_argument, NULL, O_CHANNELS },
		{ "irq-shift", required_argument, NULL, O_IRQ_SHIFT },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "seed", required_argument, NULL, O_SEED },
		{ "json", no_argument, NULL, O_JSON },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "trace-limit-us", required_argument, NULL, O_TRACE_US },
		{ "trace-limit-mb", required_argument, NULL, O_TRACE_MB },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int opt, ret;

	memset(o, 0, sizeof(*o));
	o->trace.max_bytes = ILAB_TRACE_MAX_BYTES;
	o->cfg.test = ILAB_NETPERF_STREAM; /* netperf's default test */
	o->host = "localhost";             /* netperf's default -H */
	o->headers = true;
	o->cfg.queues = 1;
	o->cfg.send_bytes = 16384;         /* netperf's usual -m on Linux: the socket buffer */
	o->cfg.req_bytes = o->cfg.rsp_bytes = 1;
	o->cfg.ring_size = 64;
	o->cfg.duration_ns = 20000000ull;  /* 20 ms of simulated time */
	o->cfg.warmup_ns = 200000ull;
	o->env.profile = "kunpeng920";
	o->env.seed = 1;
	o->env.nic_node = 2;
	o->env.mode = ILAB_NIC_ENV_STRICT;
	o->env.map_pages = true;
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "+:t:l:H:P:h", opts, NULL)) != -1) {
		if (opt == 'h' || opt == O_HELP) {
			cli_print_command_help(cli_find_command("netperf"), stdout);
			return -1;
		}
		ret = parse_global(opt, o);
		if (ret == -2)
			return cli_bad_option("netperf", opt, argc, argv);
		if (ret)
			return ret;
	}
	if (optind < argc && strcmp(argv[optind - 1], "--"))
		return USAGE("unexpected argument '%s' (test options go after --)", argv[optind]);
	if (optind < argc) {
		ret = parse_test(argc - optind + 1, argv + optind - 1, o);
		if (ret)
			return ret;
	}
	if (o->m_set && o->cfg.test == ILAB_NETPERF_RR)
		return USAGE("-m is a TCP_STREAM and TCP_MAERTS option; TCP_RR takes -r REQ,RSP");
	if (o->r_set && o->cfg.test != ILAB_NETPERF_RR)
		return USAGE("-r is a TCP_RR option; %s takes -m SIZE", test_names[o->cfg.test]);
	o->env.nic_from_profile = false;
	return 0;
}

static const char *mode_name(enum ilab_nic_env_mode m)
{
	return m == ILAB_NIC_ENV_LAZY ? "lazy" : m == ILAB_NIC_ENV_PASSTHROUGH ? "passthrough"
									   : "strict";
}

static const char *const banner_names[] = { "TCP STREAM", "TCP MAERTS",
					    "TCP REQUEST/RESPONSE" };

/* netperf 2.7's migrated tests' output (src/nettest_omni.c send_tcp_stream, send_tcp_maerts,
 * send_tcp_rr; the banner: nettest_bsd.c print_top_test_header), column for column: -P 0
 * leaves the data lines only. TCP_RR's sixth column is the transaction rate. */
static void print_text(const struct np_opts *o, const struct ilab_nic_env_info *in,
		       const struct ilab_netperf_result *r)
{
	const struct ilab_netperf_cfg *c = &o->cfg;
	double secs = r->window_ns / 1e9;
	bool rr = c->test == ILAB_NETPERF_RR;

	if (o->headers)
		printf("MIGRATED %s TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to %s () port 0 "
		       "AF_INET%s\n", banner_names[c->test], o->host, rr ? " : first burst 0" : "");
	if (rr) {
		if (o->headers)
			printf("Local /Remote\n"
			       "Socket Size   Request  Resp.   Elapsed  Trans.\n"
			       "Send   Recv   Size     Size    Time     Rate         \n"
			       "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n");
		printf("%-6d %-6d %-6u   %-6u  %-6.2f   %7.2f   \n", NETPERF_SNDBUF, NETPERF_RCVBUF,
		       c->req_bytes, c->rsp_bytes, secs, r->tps);
		printf("%-6d %-6d\n", NETPERF_SNDBUF, NETPERF_RCVBUF);
	} else {
		if (o->headers)
			printf("Recv   Send    Send                          \n"
			       "Socket Socket  Message  Elapsed              \n"
			       "Size   Size    Size     Time     Throughput  \n"
			       "bytes  bytes   bytes    secs.    10^6bits/sec  \n\n");
		printf("%6d %6d %6u    %-6.2f   %7.2f   \n", NETPERF_RCVBUF, NETPERF_SNDBUF,
		       c->send_bytes, secs, r->gbps * 1e3);
	}
	if (!o->headers)
		return;
	/* iommulab's own lines, after netperf's (not with -P 0, whose users parse lines) */
	printf("\niommulab: simulated time, %s to %s (node %d, iommu unit %u), iommu=%s, %u "
	       "queue%s, profile %s, seed %llu\n", test_names[c->test], in->device, in->node,
	       in->iommu, mode_name(o->env.mode), c->queues, c->queues == 1 ? "" : "s",
	       in->profile, (unsigned long long)o->env.seed);
	if (rr)
		printf("iommulab: latency p50 %.2f us, p99 %.2f us, %llu transactions\n",
		       r->lat_p50_ns / 1e3, r->lat_p99_ns / 1e3,
		       (unsigned long long)r->transactions);
	if (c->test == ILAB_NETPERF_MAERTS)
		printf("iommulab: rx %llu buffers, %llu frames; 0 DMAs faulted\n",
		       (unsigned long long)r->rx_buffers, (unsigned long long)r->segments);
	else
		printf("iommulab: tx %llu skbs, %llu segments in the window; %llu maps, %llu "
		       "unmaps, %llu interrupts, %llu DMAs faulted, %llu map errors, CPUs busy "
		       "%.1f%% over the run\n",
		       (unsigned long long)r->skbs, (unsigned long long)r->segments,
		       (unsigned long long)r->tx_maps, (unsigned long long)r->tx_unmaps,
		       (unsigned long long)r->interrupts, (unsigned long long)r->dma_faults,
		       (unsigned long long)r->map_errors, r->cpu_busy * 100);
}

static void print_json(const struct np_opts *o, const struct ilab_nic_env_info *in,
		       const struct ilab_netperf_result *r, const char *stats)
{
	const struct ilab_netperf_cfg *c = &o->cfg;
	json_t *root = json_pack(
		"{s:{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:s,s:s,s:I},"
		"s:{s:I,s:I,s:f,s:I,s:f,s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:I,s:I}}",
		"test", "name", test_names[c->test], "queues", (json_int_t)c->queues,
		"send_bytes", (json_int_t)c->send_bytes, "req_bytes", (json_int_t)c->req_bytes,
		"rsp_bytes", (json_int_t)c->rsp_bytes, "duration_ns", (json_int_t)c->duration_ns,
		"warmup_ns", (json_int_t)c->warmup_ns, "iommu_mode", mode_name(o->env.mode),
		"profile", in->profile, "device", in->device, "seed", (json_int_t)o->env.seed,
		"result", "window_ns", (json_int_t)r->window_ns, "bytes", (json_int_t)r->bytes,
		"gbps", r->gbps, "transactions", (json_int_t)r->transactions, "tps", r->tps,
		"lat_p50_ns", (json_int_t)r->lat_p50_ns, "lat_p99_ns", (json_int_t)r->lat_p99_ns,
		"lat_min_ns", (json_int_t)r->lat_min_ns, "lat_max_ns", (json_int_t)r->lat_max_ns,
		"lat_mean_ns", r->lat_mean_ns, "skbs", (json_int_t)r->skbs, "segments",
		(json_int_t)r->segments, "tx_maps", (json_int_t)r->tx_maps, "tx_unmaps",
		(json_int_t)r->tx_unmaps, "rx_buffers", (json_int_t)r->rx_buffers, "interrupts",
		(json_int_t)r->interrupts, "cpu_busy", r->cpu_busy, "dma_faults",
		(json_int_t)r->dma_faults, "map_errors", (json_int_t)r->map_errors);

	cli_print_result_json(root, stats);
}

/* The limit of run's netperf cases (case_checks.c), before anything is built: the host-time
 * estimate of cfg's streams for their simulated time (netperf's and iperf3's). */
int cli_netperf_check_time(const char *cmd, const struct ilab_netperf_cfg *cfg,
			   const char *shorten, double *estimate_s, uint64_t *sim_ns)
{
	char work[96], err[300];

	*sim_ns = cfg->duration_ns + cfg->warmup_ns;
	*estimate_s = cfg->queues * (*sim_ns / 1e3) * ILAB_HOST_S_NETPERF;
	snprintf(work, sizeof(work), "%u stream%s for %.3f simulated s", cfg->queues,
		 cfg->queues == 1 ? "" : "s", *sim_ns / 1e9);
	if (ilab_host_time_check(*estimate_s, work, "run", shorten, err, sizeof(err)))
		return cli_usage_error(cmd, "%s", err);
	return 0;
}

int cmd_netperf(int argc, char **argv)
{
	struct np_opts o;
	struct ilab_netperf_result res;
	struct ilab_nic_env_info info = { 0 };
	struct cli_progress progress;
	struct ilab_trace *trace = NULL;
	char err[600] = "", label[200], *stats = NULL;
	double estimate_s;
	uint64_t sim_ns;
	int ret = parse(argc, argv, &o);

	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret; /* -1: --help was printed */
	ret = cli_netperf_check_time("netperf", &o.cfg, "shorten -l or lower --queues",
				     &estimate_s, &sim_ns);
	if (ret)
		return ret;
	snprintf(label, sizeof(label), "netperf %s (%s, iommu=%s, seed %llu)",
		 test_names[o.cfg.test], o.env.profile, mode_name(o.env.mode),
		 (unsigned long long)o.env.seed);
	ret = cli_trace_start("netperf", &o.trace, o.env.profile, label, &trace);
	if (ret)
		return ret;
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	cli_progress_start(&progress, "netperf", estimate_s, sim_ns);
	ret = ilab_netperf_env_run(&o.env, &o.cfg, &res, o.json ? &stats : NULL, &info, err,
				   sizeof(err));
	cli_progress_end(&progress);
	if (trace && cli_trace_close("netperf", &o.trace, trace) && !ret) {
		free(stats);
		return CLI_EXIT_FAIL;
	}
	if (ret) {
		fprintf(stderr, "%s netperf: %s\n", CLI_PROG, err);
		return ret == -EINVAL || ret == -ENOENT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	/* a slower machine than the shipped ones can still complete nothing in a short -l:
	 * that is no measurement, not a throughput of 0 */
	if (o.cfg.test == ILAB_NETPERF_RR ? !res.transactions : !res.bytes) {
		fprintf(stderr, "%s netperf: -l %g s measured nothing (no %s completed in the "
			"window): give a longer -l\n", CLI_PROG, o.cfg.duration_ns / 1e9,
			o.cfg.test == ILAB_NETPERF_RR ? "transaction" : "byte");
		free(stats);
		return CLI_EXIT_USAGE;
	}
	if (o.json)
		print_json(&o, &info, &res, stats);
	else
		print_text(&o, &info, &res);
	free(stats);
	return CLI_EXIT_OK;
}
