/* cmd_netperf.c — `iommulab netperf`: netperf's TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR,
 * UDP_STREAM and UDP_RR on the machine's NIC in the simulator, in one IOMMU mode, with
 * netperf's option names (-t, -l, -c, -C, and after `--` the test's -m, -r, -s, -S, -D, -M)
 * and netperf's figures in simulated time.
 * Not the model (src/workloads/netperf.c) nor the machine's set-up (netperf_env.c): this
 * parses options and prints.
 */
#include "cli.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/netperf.h>
#include <iommulab/sim.h>

#include "experiments/host_time.h"
#include "netperf_confid.h"
#include "netperf_omni.h"
#include "workloads/nic_env.h"

struct np_opts {
	struct ilab_netperf_cfg cfg;
	struct ilab_nic_env env;
	const char *host;   /* -H: the simulated peer's name (nothing is sent) */
	bool headers;       /* -P 1 (netperf's default) */
	bool json;
	bool m_set, r_set;
	bool local_cpu, remote_cpu; /* -c, -C */
	bool nodelay;               /* -D */
	unsigned sndbuf, rcvbuf;    /* -s, -S: what getsockopt would give (Linux doubles) */
	bool omni;                  /* -t OMNI: -d and -T choose the test */
	int omni_dir;               /* -d: 0 send, 1 receive, 2 rr */
	bool omni_udp;              /* -T udp */
	bool omni_out;              /* -o, -O or -k: omni output, for any test */
	enum np_omni_mode omni_mode;
	const char *omni_spec;      /* its list, or NULL: the test's default */
	struct np_omni_sel sel;
	struct np_confid conf;      /* -i, -I */
	bool cpu_mean;              /* the CPU figures below are the runs' means */
	double mean_lcpu, mean_rcpu, mean_lsd, mean_rsd;
	struct cli_trace_opt trace; /* --trace FILE and its limits (docs/trace.md) */
};

/* The socket buffer sizes netperf prints (getsockopt before the test, which on Linux is
 * tcp_wmem[1] and tcp_rmem[1]: 16384 and 131072 since Linux 4.20, Documentation/networking/
 * ip-sysctl.rst). Configuration the model has no counterpart for, printed as Linux's. */
#define NETPERF_SNDBUF 16384
#define NETPERF_RCVBUF 131072
/* A UDP socket's buffers: net.core.wmem_default and rmem_default, 212992 on Linux since 3.x
 * (SK_WMEM_MAX: 256 skbs of the truesize of a 256-byte packet). */
#define NETPERF_UDP_SOCKBUF 212992
/* -l -N: each stream's N transactions must complete within this many times the least a
 * transaction can take (the path's constants without an IOMMU: the peer's turn-round, the
 * wire both ways, this host's send and receive): a bound for the host-time estimate. */
#define NETPERF_TRANS_BOUND 8

/* netperf's test names, in enum ilab_netperf_test's order, and their banners (nettest_omni.c's
 * send_* functions' header strings) */
static const char *const test_names[] = { "TCP_STREAM", "TCP_MAERTS", "TCP_RR", "UDP_STREAM",
					  "UDP_RR", "TCP_CRR" };
#define NR_TESTS (sizeof(test_names) / sizeof(test_names[0]))

static bool rr_test(enum ilab_netperf_test t)
{
	return t == ILAB_NETPERF_RR || t == ILAB_NETPERF_UDP_RR || t == ILAB_NETPERF_CRR;
}

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

/* -T LCPU[,RCPU] (netsh.c's break_args): "N" binds both, "N," the local only, ",N" the
 * remote only; each a CPU number (netperf's convert, without its unit suffixes). */
static int parse_bind(const char *s, struct ilab_netperf_cfg *c)
{
	const char *comma = strchr(s, ',');
	char local[16] = "", remote[16] = "";
	size_t n = comma ? (size_t)(comma - s) : strlen(s);
	uint64_t v;

	if (n >= sizeof(local) || (comma && strlen(comma + 1) >= sizeof(remote)))
		return -1;
	memcpy(local, s, n);
	snprintf(remote, sizeof(remote), "%s", comma ? comma + 1 : local);
	if (!local[0] && !remote[0])
		return -1;
	if (local[0]) {
		if (cli_parse_count(local, 0, 4095, &v))
			return -1;
		c->bind = true, c->bind_cpu = (unsigned)v;
	}
	if (remote[0]) {
		if (cli_parse_count(remote, 0, 4095, &v))
			return -1;
		c->remote_bind = true, c->remote_cpu = (unsigned)v;
	}
	return 0;
}

enum { O_MODE = 256, O_QUEUES, O_CHANNELS, O_IRQ_SHIFT, O_PROFILE, O_SEED, O_JSON, O_HELP, O_TRACE, O_TRACE_US,
       O_TRACE_MB };

static int parse_global(int opt, struct np_opts *o)
{
	uint64_t v;

	switch (opt) {
	case 't':
		o->omni = !strcasecmp(optarg, "OMNI");
		if (o->omni)
			return 0;
		for (unsigned i = 0; i < NR_TESTS; i++)
			if (!strcasecmp(optarg, test_names[i])) { /* netperf: strcasecmp too */
				o->cfg.test = (enum ilab_netperf_test)i;
				return 0;
			}
		return USAGE("-t must be TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM, "
			     "UDP_RR or OMNI, not '%s'", optarg);
	case 'j': /* keep latency statistics: the model always does */
		return 0;
	case 'i':
	case 'I': {
		char err[200];

		if ((opt == 'i' ? np_confid_parse_i : np_confid_parse_I)(&o->conf, optarg, err,
									  sizeof(err)))
			return USAGE("%s", err);
		return 0;
	}
	case 'l':
		if (optarg[0] == '-') {
			if (cli_parse_count(optarg + 1, 1, 100000000, &v))
				return USAGE("-l %s: a count must be -N, N transactions from 1 to 10^8",
					     optarg);
			o->cfg.transactions = v;
			return 0;
		}
		o->cfg.transactions = 0;
		if (parse_length(optarg, &o->cfg.duration_ns))
			return USAGE("-l must be a test length in seconds, at least %g (30, 0.02), "
				     "not '%s'", NETPERF_LENGTH_MIN_S, optarg);
		return 0;
	case 'H':
		if (!*optarg)
			return USAGE("-H needs a host name");
		o->host = optarg;
		return 0;
	case 'T':
		if (parse_bind(optarg, &o->cfg))
			return USAGE("-T must be LCPU[,RCPU], ,RCPU or LCPU, (CPU numbers), not '%s'",
				     optarg);
		return 0;
	case 'P':
		if (strcmp(optarg, "0") && strcmp(optarg, "1"))
			return USAGE("-P must be 0 (no banner and headers) or 1, not '%s'", optarg);
		o->headers = optarg[0] == '1';
		return 0;
	case 'c':
		o->local_cpu = true;
		return 0;
	case 'C':
		o->remote_cpu = true;
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

/* -s/-S SIZE: the socket buffer asked for; Linux's setsockopt doubles it (for the kernel's
 * bookkeeping, socket(7)) and getsockopt, which netperf prints, returns the double. The model
 * has no socket buffers: printed only. */
static int parse_sockbuf(const char *s, unsigned *out)
{
	unsigned v;

	if (parse_size(s, 1u << 30, &v))
		return -1;
	*out = 2 * v;
	return 0;
}

/* After `--`: the test's own options, netperf's -m (send size), -r (request,response), -s and
 * -S (socket buffers, printed), -D (no delay: the model pushes each send at once anyway) and
 * -M (the peer's receive size: the peer has no receive calls in the model). */
static int parse_test(int argc, char **argv, struct np_opts *o)
{
	int opt;
	unsigned v;

	optind = 0; /* glibc: start a new scan */
	while ((opt = getopt(argc, argv, "+:m:r:s:S:M:Dd:T:oOk")) != -1) {
		switch (opt) {
		case 'o':
		case 'O':
		case 'k':
			/* netperf: a list (or file) follows when the next word is no option */
			o->omni_out = true;
			o->omni_mode = opt == 'o' ? NP_OMNI_CSV : opt == 'O' ? NP_OMNI_HUMAN
								  : NP_OMNI_KEYVAL;
			o->omni_spec = NULL;
			if (optind < argc && argv[optind][0] != '-')
				o->omni_spec = argv[optind++];
			if (o->omni_spec && !strcmp(o->omni_spec, "?"))
				return USAGE("-%c ?: the list of selectors is in docs/netperf.md", opt);
			break;
		case 'd':
			if (!strcasecmp(optarg, "send") || !strcasecmp(optarg, "xmit") ||
			    !strcasecmp(optarg, "stream") || !strcasecmp(optarg, "transmit"))
				o->omni_dir = 0;
			else if (!strcasecmp(optarg, "recv") || !strcasecmp(optarg, "receive") ||
				 !strcasecmp(optarg, "maerts"))
				o->omni_dir = 1;
			else if (!strcasecmp(optarg, "rr") || !strcasecmp(optarg, "send|recv"))
				o->omni_dir = 2;
			else
				return USAGE("-d must be send, recv or rr, not '%s'", optarg);
			break;
		case 'T':
			if (!strcasecmp(optarg, "tcp"))
				o->omni_udp = false;
			else if (!strcasecmp(optarg, "udp"))
				o->omni_udp = true;
			else
				return USAGE("-T (after --) must be tcp or udp, not '%s'", optarg);
			break;
		case 's':
			if (parse_sockbuf(optarg, &o->sndbuf))
				return USAGE("-s must be a socket buffer size of 1 byte to 1G, not '%s'",
					     optarg);
			break;
		case 'S':
			if (parse_sockbuf(optarg, &o->rcvbuf))
				return USAGE("-S must be a socket buffer size of 1 byte to 1G, not '%s'",
					     optarg);
			break;
		case 'M':
			if (parse_size(optarg, ILAB_NETPERF_MAX_MSG, &v))
				return USAGE("-M must be a receive size of 1 byte to 1M, not '%s'",
					     optarg);
			break;
		case 'D':
			o->nodelay = true;
			break;
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
					     "skb; UDP_RR: %u, one packet), not '%s'",
					     ILAB_NETPERF_TSO_BYTES, ILAB_NETPERF_UDP_FIRST, optarg);
			if (!comma || !*comma)
				o->cfg.rsp_bytes = o->cfg.req_bytes; /* netperf: -r 64 is 64,64 */
			o->r_set = true;
			break;
		}
		case ':':
			return USAGE("test option '-%c' needs a value", optopt);
		default:
			return USAGE("unknown test option '-%c' (after --: -m SIZE for the stream "
				     "tests, -r REQ,RSP for the request/response tests, -s, -S, -D, -M)",
				     optopt);
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
	while ((opt = getopt_long(argc, argv, "+:t:l:H:P:T:cCji:I:h", opts, NULL)) != -1) {
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
	if (o->omni) {
		static const enum ilab_netperf_test t[2][3] = {
			{ ILAB_NETPERF_STREAM, ILAB_NETPERF_MAERTS, ILAB_NETPERF_RR },
			{ ILAB_NETPERF_UDP_STREAM, ILAB_NETPERF_MAERTS, ILAB_NETPERF_UDP_RR } };

		if (o->omni_udp && o->omni_dir == 1)
			return USAGE("-t OMNI -- -d recv -T udp: UDP receive is not modelled");
		o->cfg.test = t[o->omni_udp][o->omni_dir];
		o->omni_out = true; /* OMNI's own output (human, unless -o or -k) */
	} else if (o->omni_dir || o->omni_udp) {
		return USAGE("-d and -T (after --) are OMNI options; -t %s fixes them",
			     test_names[o->cfg.test]);
	}
	if (o->m_set && rr_test(o->cfg.test))
		return USAGE("-m is a stream tests' option; %s takes -r REQ,RSP",
			     test_names[o->cfg.test]);
	if (o->r_set && !rr_test(o->cfg.test))
		return USAGE("-r is a request/response tests' option; %s takes -m SIZE",
			     test_names[o->cfg.test]);
	if (o->cfg.transactions && !rr_test(o->cfg.test))
		return USAGE("-l -%llu: a count of bytes (%s) is not supported; give the length "
			     "in seconds", (unsigned long long)o->cfg.transactions,
			     test_names[o->cfg.test]);
	if (o->cfg.test == ILAB_NETPERF_UDP_STREAM) {
		if (!o->m_set) /* netperf: the socket buffer, at most UDP_LENGTH_MAX */
			o->cfg.send_bytes = ILAB_NETPERF_UDP_MAX;
		if (o->cfg.send_bytes > ILAB_NETPERF_UDP_MAX)
			return USAGE("-m %u: a UDP datagram holds at most %u bytes",
				     o->cfg.send_bytes, ILAB_NETPERF_UDP_MAX);
	}
	if (o->cfg.test == ILAB_NETPERF_UDP_RR &&
	    (o->cfg.req_bytes > ILAB_NETPERF_UDP_FIRST || o->cfg.rsp_bytes > ILAB_NETPERF_UDP_FIRST))
		return USAGE("-r %u,%u: UDP_RR's request and response are one packet each, at most "
			     "%u bytes (IP fragments are modelled in UDP_STREAM only)",
			     o->cfg.req_bytes, o->cfg.rsp_bytes, ILAB_NETPERF_UDP_FIRST);
	if (o->cfg.bind && o->cfg.queues != 1)
		return USAGE("-T binds the one netperf process: not with --queues=%u",
			     o->cfg.queues);
	if (o->cfg.bind && o->cfg.test == ILAB_NETPERF_MAERTS)
		return USAGE("-T %u: TCP_MAERTS's receive model does not place its queue on a CPU "
			     "(-T ,RCPU binds the peer only)", o->cfg.bind_cpu);
	if (o->cfg.test == ILAB_NETPERF_MAERTS && (o->local_cpu || o->remote_cpu))
		return USAGE("-c and -C: TCP_MAERTS's receive model does not measure CPU time");
	if (o->cfg.transactions) {
		o->cfg.warmup_ns = 0; /* netperf counts every transaction */
		o->cfg.duration_ns = 0; /* set from the profile's path in cmd_netperf */
	}
	o->env.nic_from_profile = false;
	return 0;
}

static const char *mode_name(enum ilab_nic_env_mode m)
{
	return m == ILAB_NIC_ENV_LAZY ? "lazy" : m == ILAB_NIC_ENV_PASSTHROUGH ? "passthrough"
									   : "strict";
}

static const char *const banner_names[] = { "TCP STREAM", "TCP MAERTS",
					    "TCP REQUEST/RESPONSE", "UDP STREAM",
					    "UDP REQUEST/RESPONSE",
					    "TCP Connect/Request/Response" };

/* netperf's CPU figures (-c, -C): utilisation in % of all the machine's CPUs over the run,
 * service demand in us of CPU per KB (1024 bytes) or per transaction; -1 where not asked,
 * as netperf prints them. The method letter: Linux's /proc/stat ('S'). */
struct np_cpu_figs {
	double local_util, remote_util, local_sd, remote_sd;
};

static struct np_cpu_figs cpu_figs(const struct np_opts *o, const struct ilab_netperf_result *r)
{
	struct np_cpu_figs f = { -1, -1, -1, -1 };
	bool rr = rr_test(o->cfg.test);

	if (o->cpu_mean)
		return (struct np_cpu_figs){ o->mean_lcpu, o->mean_rcpu, o->mean_lsd, o->mean_rsd };
	double per = rr ? (double)r->transactions : r->bytes / 1024.0;
	double win_us = r->window_ns / 1e3;

	if (o->cfg.test == ILAB_NETPERF_UDP_STREAM)
		per = r->messages * (double)o->cfg.send_bytes / 1024.0;
	if (o->local_cpu && r->run_ns && r->cpus) {
		f.local_util = 100.0 * (double)r->busy_ns / ((double)r->run_ns * r->cpus);
		f.local_sd = per > 0 ? f.local_util / 100.0 * r->cpus * win_us / per : -1;
	}
	if (o->remote_cpu && r->window_ns && r->cpus) {
		double rper = o->cfg.test == ILAB_NETPERF_UDP_STREAM
				      ? r->remote_messages * (double)o->cfg.send_bytes / 1024.0 : per;

		f.remote_util = 100.0 * (double)r->peer_busy_ns / ((double)r->window_ns * r->cpus);
		f.remote_sd = rper > 0 ? (double)r->peer_busy_ns / 1e3 / rper : -1;
	}
	return f;
}

/* The four socket buffers netperf reports: -s sets the local send and receive buffers, -S the
 * remote's; otherwise Linux's defaults (TCP's tcp_wmem/tcp_rmem, UDP's wmem/rmem_default). */
struct np_socks {
	unsigned lss, lsr, rss, rsr;
};

static struct np_socks socks(const struct np_opts *o)
{
	bool udp = o->cfg.test == ILAB_NETPERF_UDP_STREAM || o->cfg.test == ILAB_NETPERF_UDP_RR;
	unsigned snd = udp ? NETPERF_UDP_SOCKBUF : NETPERF_SNDBUF;
	unsigned rcv = udp ? NETPERF_UDP_SOCKBUF : NETPERF_RCVBUF;

	return (struct np_socks){ o->sndbuf ? o->sndbuf : snd, o->sndbuf ? o->sndbuf : rcv,
				  o->rcvbuf ? o->rcvbuf : snd, o->rcvbuf ? o->rcvbuf : rcv };
}

static const char *direction_name(enum ilab_netperf_test t)
{
	return t == ILAB_NETPERF_MAERTS ? "Receive" : t == ILAB_NETPERF_CRR ? "Connect|Send|Recv"
	       : rr_test(t) ? "Send|Recv" : "Send";
}

static void print_banner(const struct np_opts *o)
{
	const char *name = banner_names[o->cfg.test];

	if (o->omni) /* send_omni: "OMNI <direction> TEST" */
		printf("OMNI %s TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to %s () port 0 "
		       "AF_INET", direction_name(o->cfg.test), o->host);
	else
		printf("MIGRATED %s TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to %s () port 0 "
		       "AF_INET", name, o->host);
	if (np_confid_on(&o->conf)) /* print_top_test_header: the half width, the level */
		printf(" : +/-%.3f%% @ %2d%% conf. ", o->conf.interval / 0.02, o->conf.level);
	if (o->nodelay)
		printf(" : nodelay");
	if (!o->omni && strstr(name, "REQUEST/RESPONSE")) /* nettest_bsd.c: only these name it */
		printf(" : first burst 0");
	printf("\n");
}

static void print_stream(const struct np_opts *o, const struct ilab_netperf_result *r,
			 const struct np_cpu_figs *f, bool cpu)
{
	const struct ilab_netperf_cfg *c = &o->cfg;
	double secs = r->window_ns / 1e9;
	struct np_socks k = socks(o);
	unsigned rcv = c->test == ILAB_NETPERF_MAERTS ? k.lsr : k.rsr;
	unsigned snd = c->test == ILAB_NETPERF_MAERTS ? k.rss : k.lss;

	if (cpu) {
		if (o->headers)
			printf("Recv   Send    Send                          Utilization       "
			       "Service Demand\n"
			       "Socket Socket  Message  Elapsed              Send     Recv     "
			       "Send    Recv\n"
			       "Size   Size    Size     Time     Throughput  local    remote   "
			       "local   remote\n"
			       "bytes  bytes   bytes    secs.    10^6bits/s  %% S      %% S      "
			       "us/KB   us/KB\n\n");
		printf("%6u %6u %6u    %-6.2f     %7.2f   %-6.2f   %-6.2f   %-6.3f  %-6.3f \n", rcv,
		       snd, c->send_bytes, secs, r->gbps * 1e3, f->local_util, f->remote_util,
		       f->local_sd, f->remote_sd);
		return;
	}
	if (o->headers)
		printf("Recv   Send    Send                          \n"
		       "Socket Socket  Message  Elapsed              \n"
		       "Size   Size    Size     Time     Throughput  \n"
		       "bytes  bytes   bytes    secs.    10^6bits/sec  \n\n");
	printf("%6u %6u %6u    %-6.2f   %7.2f   \n", rcv, snd, c->send_bytes, secs, r->gbps * 1e3);
}

/* UDP_STREAM: this host's sends, then the peer's receives (netperf's two lines). */
static void print_udp_stream(const struct np_opts *o, const struct ilab_netperf_result *r,
			     const struct np_cpu_figs *f, bool cpu)
{
	const struct ilab_netperf_cfg *c = &o->cfg;
	double secs = r->window_ns / 1e9;
	struct np_socks k = socks(o);
	unsigned snd = k.lss, rcv = k.rsr;
	double local = r->messages * (double)c->send_bytes * 8 / (double)r->window_ns * 1e3;

	if (cpu) {
		if (o->headers)
			printf("Socket  Message  Elapsed      Messages                   CPU      "
			       "Service\n"
			       "Size    Size     Time         Okay Errors   Throughput   Util     "
			       "Demand\n"
			       "bytes   bytes    secs            #      #   10^6bits/sec %% SS     "
			       "us/KB\n\n");
		printf("%6u  %6u   %-7.2f   %7llu %6d    %7.1f     %-6.2f   %-6.3f\n"
		       "%6u           %-7.2f   %7llu           %7.1f     %-6.2f   %-6.3f\n\n",
		       snd, c->send_bytes, secs, (unsigned long long)r->messages, 0, local,
		       f->local_util, f->local_sd, rcv, secs,
		       (unsigned long long)r->remote_messages, r->remote_gbps * 1e3,
		       f->remote_util, f->remote_sd);
		return;
	}
	if (o->headers)
		printf("Socket  Message  Elapsed      Messages                \n"
		       "Size    Size     Time         Okay Errors   Throughput\n"
		       "bytes   bytes    secs            #      #   10^6bits/sec\n\n");
	printf("%6u  %6u   %-7.2f   %7llu %6d    %7.2f\n"
	       "%6u           %-7.2f   %7llu           %7.2f\n\n",
	       snd, c->send_bytes, secs, (unsigned long long)r->messages, 0, local, rcv, secs,
	       (unsigned long long)r->remote_messages, r->remote_gbps * 1e3);
}

static void print_rr(const struct np_opts *o, const struct ilab_netperf_result *r,
		     const struct np_cpu_figs *f, bool cpu)
{
	const struct ilab_netperf_cfg *c = &o->cfg;
	double secs = r->window_ns / 1e9;
	bool crr = c->test == ILAB_NETPERF_CRR;
	struct np_socks k = socks(o);
	unsigned snd = k.lss, rcv = k.lsr;

	if (cpu) {
		if (o->headers)
			printf("Local /Remote\n"
			       "Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   "
			       "S.dem\n"
			       "Send   Recv   Size    Size   Time    Rate     local  remote local   "
			       "remote\n"
			       "bytes  bytes  bytes   bytes  secs.   per sec  %s    %s    us/Tr   "
			       "us/Tr\n\n", crr ? "%  " : "% S", crr ? "%  " : "% S");
		/* TCP_RR's line has two spaces before the local CPU, UDP_RR's and TCP_CRR's three */
		printf("%-6u %-6u %-6u  %-6u %-6.2f  %-6.2f %s%-6.2f %-6.2f %-6.3f  %-6.3f%s\n",
		       snd, rcv, c->req_bytes, c->rsp_bytes, secs, r->tps,
		       c->test == ILAB_NETPERF_RR ? " " : "  ", f->local_util, f->remote_util,
		       f->local_sd, f->remote_sd, crr ? "" : " ");
	} else {
		if (o->headers)
			printf("Local /Remote\n"
			       "Socket Size   Request  Resp.   Elapsed  Trans.\n"
			       "Send   Recv   Size     Size    Time     Rate         \n"
			       "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n");
		printf("%-6u %-6u %-6u   %-6u  %-6.2f   %7.2f   \n", snd, rcv, c->req_bytes,
		       c->rsp_bytes, secs, r->tps);
	}
	printf("%-6u %-6u\n", k.rss, k.rsr);
}

/* ---- omni output (netperf_omni.c): the figures of each selector ------------------------- */

struct omni_ctx {
	const struct np_opts *o;
	const struct ilab_netperf_result *r; /* NULL while parsing: "is it measured?" */
	struct np_cpu_figs f;
	char buf[64];
};

static const char *fmt(struct omni_ctx *x, const char *f, ...)
	__attribute__((format(printf, 2, 3)));
static const char *fmt(struct omni_ctx *x, const char *f, ...)
{
	va_list ap;

	if (!x->r)
		return "";
	va_start(ap, f);
	vsnprintf(x->buf, sizeof(x->buf), f, ap);
	va_end(ap);
	return x->buf;
}

/* each selector's figure as netperf formats it; NULL: not measured in this test */
static const char *omni_value(const char *name, void *arg)
{
	struct omni_ctx *x = arg;
	const struct ilab_netperf_cfg *c = &x->o->cfg;
	const struct ilab_netperf_result *r = x->r;
	enum ilab_netperf_test t = c->test;
	bool rr = rr_test(t), udp = t == ILAB_NETPERF_UDP_STREAM || t == ILAB_NETPERF_UDP_RR;
	bool maerts = t == ILAB_NETPERF_MAERTS;
	double secs = r ? r->window_ns / 1e9 : 1, local_mbps = 0, cpu = x->f.local_util;
	struct np_socks k = socks(x->o);

	if (r)
		local_mbps = t == ILAB_NETPERF_UDP_STREAM
				     ? r->messages * (double)c->send_bytes * 8 / (double)r->window_ns * 1e3
				     : r->gbps * 1e3;
#define IS(n) (!strcmp(name, n))
	if (IS("PROTOCOL"))
		return fmt(x, "%s", udp ? "UDP" : "TCP");
	if (IS("DIRECTION"))
		return fmt(x, "%s", direction_name(t));
	if (IS("ELAPSED_TIME"))
		return fmt(x, "%.2f", secs);
	if (IS("THROUGHPUT"))
		return rr ? fmt(x, "%.2f", r ? r->tps : 0) : fmt(x, "%.2f", local_mbps);
	if (IS("THROUGHPUT_UNITS"))
		return fmt(x, "%s/s", rr ? "Trans" : "10^6bits");
	if (IS("LSS_SIZE_END"))
		return fmt(x, "%u", k.lss);
	if (IS("LSR_SIZE_END"))
		return fmt(x, "%u", k.lsr);
	if (IS("RSS_SIZE_END"))
		return fmt(x, "%u", k.rss);
	if (IS("RSR_SIZE_END"))
		return fmt(x, "%u", k.rsr);
	if (IS("TRANSPORT_MSS"))
		return fmt(x, "%d", udp ? -1 : (int)ILAB_NETPERF_MSS);
	if (IS("LOCAL_SEND_SIZE"))
		return rr || maerts ? NULL : fmt(x, "%u", c->send_bytes);
	if (IS("REMOTE_SEND_SIZE"))
		return maerts ? fmt(x, "%u", c->send_bytes) : NULL;
	if (IS("LOCAL_SEND_THROUGHPUT"))
		return rr || maerts ? NULL : fmt(x, "%.2f", local_mbps);
	if (IS("REMOTE_RECV_THROUGHPUT"))
		return rr || maerts ? NULL : fmt(x, "%.2f", t == ILAB_NETPERF_UDP_STREAM && r
							      ? r->remote_gbps * 1e3 : local_mbps);
	if (IS("TRANSACTION_RATE")) /* a stream test's transaction is a send call */
		return maerts ? NULL : rr ? fmt(x, "%.3f", r ? r->tps : 0)
			: fmt(x, "%.3f", !r ? 0 : t == ILAB_NETPERF_UDP_STREAM
					     ? r->messages / secs
					     : r->bytes / (double)c->send_bytes / secs);
	if (!strcmp(name + strlen(name) - (strlen(name) > 7 ? 7 : 0), "LATENCY") ||
	    IS("REQUEST_SIZE") || IS("RESPONSE_SIZE")) {
		if (!rr)
			return NULL; /* a stream test's per-send latency is not modelled */
		if (IS("REQUEST_SIZE"))
			return fmt(x, "%u", c->req_bytes);
		if (IS("RESPONSE_SIZE"))
			return fmt(x, "%u", c->rsp_bytes);
		if (IS("RT_LATENCY"))
			return fmt(x, "%.3f", r && r->tps ? 1e6 * c->queues / r->tps : 0);
		if (IS("MEAN_LATENCY"))
			return fmt(x, "%.2f", r ? r->lat_mean_ns / 1e3 : 0);
		if (!r)
			return "";
		return fmt(x, "%d", (int)((IS("MIN_LATENCY") ? r->lat_min_ns
					   : IS("MAX_LATENCY") ? r->lat_max_ns
					   : IS("P50_LATENCY") ? r->lat_p50_ns
					   : IS("P90_LATENCY") ? r->lat_p90_ns : r->lat_p99_ns) / 1000));
	}
	if (IS("LOCAL_CPU_BIND")) /* netperf's -1: not bound */
		return fmt(x, "%d", c->bind ? (int)c->bind_cpu : -1);
	if (IS("REMOTE_CPU_BIND"))
		return fmt(x, "%d", c->remote_bind ? (int)c->remote_cpu : -1);
	if (IS("SD_UNITS"))
		return fmt(x, "%s", rr ? "usec/Tran" : "usec/KB");
	if (maerts) /* the receive model measures no CPU time */
		return NULL;
	if (IS("LOCAL_CPU_METHOD") || IS("REMOTE_CPU_METHOD"))
		return fmt(x, "S");
	if (!strncmp(name, "REMOTE_", 7))
		cpu = x->f.remote_util;
	if (IS("LOCAL_CPU_UTIL") || IS("REMOTE_CPU_UTIL") || strstr(name, "_PERCENT_SYSTEM"))
		return fmt(x, "%.2f", cpu); /* the model's CPU work is the kernel's */
	if (strstr(name, "_PERCENT_"))
		return fmt(x, "%.2f", cpu < 0 ? -1.0 : 0.0);
	if (IS("LOCAL_SD"))
		return fmt(x, "%.3f", x->f.local_sd);
	if (IS("REMOTE_SD"))
		return fmt(x, "%.3f", x->f.remote_sd);
#undef IS
	return NULL;
}

/* -o/-O/-k and OMNI: the selection, or netperf's default list for the test */
static int omni_selection(const struct np_opts *o, struct np_omni_sel *sel)
{
	struct omni_ctx x = { .o = o };
	char err[300];

	if (!o->omni_spec) {
		np_omni_default(sel, rr_test(o->cfg.test) ? NP_OMNI_KIND_RR
				: o->cfg.test == ILAB_NETPERF_MAERTS ? NP_OMNI_KIND_RECV
								     : NP_OMNI_KIND_SEND,
				o->local_cpu || o->remote_cpu);
		return 0;
	}
	if (np_omni_parse(o->omni_spec, sel, omni_value, &x, err, sizeof(err)))
		return USAGE("%s", err);
	return 0;
}

/* netperf 2.7's migrated tests' output (src/nettest_omni.c send_tcp_stream, send_tcp_maerts,
 * send_tcp_rr, send_tcp_conn_rr, send_udp_stream, send_udp_rr; the banner: nettest_bsd.c
 * print_top_test_header), column for column: -P 0 leaves the data lines only. The
 * request/response tests' sixth column is the transaction rate. */
static void print_text(const struct np_opts *o, const struct ilab_nic_env_info *in,
		       const struct ilab_netperf_result *r)
{
	const struct ilab_netperf_cfg *c = &o->cfg;
	bool cpu = o->local_cpu || o->remote_cpu;
	struct np_cpu_figs f = cpu_figs(o, r);

	if (o->headers)
		print_banner(o);
	if (np_confid_on(&o->conf) && np_confid_confidence(&o->conf) < 0) /* display_confidence */
		printf("!!! WARNING\n"
		       "!!! Desired confidence was not achieved within the specified iterations.\n"
		       "!!! This implies that there was variability in the test environment that\n"
		       "!!! must be investigated before going further.\n"
		       "!!! Confidence intervals: Throughput      : %4.3f%%\n"
		       "!!!                       Local CPU util  : %4.3f%%\n"
		       "!!!                       Remote CPU util : %4.3f%%\n\n",
		       100.0 * (o->conf.interval - np_confid_margin(&o->conf, NP_CONF_RESULT)),
		       100.0 * (o->conf.interval - np_confid_margin(&o->conf, NP_CONF_LCPU)),
		       100.0 * (o->conf.interval - np_confid_margin(&o->conf, NP_CONF_RCPU)));
	if (o->omni_out) {
		struct omni_ctx x = { .o = o, .r = r, .f = f };

		np_omni_print(o->omni_mode, o->headers, &o->sel, omni_value, &x);
	} else if (rr_test(c->test))
		print_rr(o, r, &f, cpu);
	else if (c->test == ILAB_NETPERF_UDP_STREAM)
		print_udp_stream(o, r, &f, cpu);
	else
		print_stream(o, r, &f, cpu);
	if (!o->headers || (o->omni_out && o->omni_mode != NP_OMNI_HUMAN))
		return;
	/* iommulab's own lines, after netperf's (not with -P 0, -o or -k, whose users parse
	 * lines) */
	printf("\niommulab: simulated time, %s to %s (node %d, iommu unit %u), iommu=%s, %u "
	       "queue%s, profile %s, seed %llu\n", test_names[c->test], in->device, in->node,
	       in->iommu, mode_name(o->env.mode), c->queues, c->queues == 1 ? "" : "s",
	       in->profile, (unsigned long long)o->env.seed);
	if (np_confid_on(&o->conf))
		printf("iommulab: %u runs (seeds %llu to %llu), the figures their means; the "
		       "result's %d%% confidence interval %.3f%% of the mean wide, %.3f%% wanted\n",
		       o->conf.n, (unsigned long long)o->env.seed,
		       (unsigned long long)(o->env.seed + o->conf.n - 1), o->conf.level,
		       100.0 * (o->conf.interval - np_confid_margin(&o->conf, NP_CONF_RESULT)),
		       100.0 * o->conf.interval);
	if (rr_test(c->test))
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
	if (c->test == ILAB_NETPERF_STREAM || c->test == ILAB_NETPERF_UDP_STREAM)
		printf("iommulab: TX completions: %llu of %llu unmaps on another CPU than their "
		       "map's (channels %s, irq shift %u), %u CPUs did the work\n",
		       (unsigned long long)r->tx_remote_unmaps, (unsigned long long)r->tx_unmaps,
		       c->channels ? "as given" : "from the profile", c->irq_shift, r->work_cpus);
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

	json_t *res = json_object_get(root, "result"), *test = json_object_get(root, "test");
	struct np_cpu_figs f = cpu_figs(o, r);

	json_object_set_new(test, "channels", json_integer(c->channels));
	json_object_set_new(test, "irq_shift", json_integer(c->irq_shift));
	json_object_set_new(test, "local_cpu_bind", json_integer(c->bind ? (int)c->bind_cpu : -1));
	json_object_set_new(test, "remote_cpu_bind",
			    json_integer(c->remote_bind ? (int)c->remote_cpu : -1));
	json_object_set_new(test, "transactions", json_integer((json_int_t)c->transactions));
	json_object_set_new(res, "tx_remote_unmaps", json_integer((json_int_t)r->tx_remote_unmaps));
	json_object_set_new(res, "messages", json_integer((json_int_t)r->messages));
	json_object_set_new(res, "remote_messages", json_integer((json_int_t)r->remote_messages));
	json_object_set_new(res, "remote_gbps", json_real(r->remote_gbps));
	json_object_set_new(res, "work_cpus", json_integer(r->work_cpus));
	json_object_set_new(res, "stream_cpu", json_integer(r->stream_cpu));
	json_object_set_new(res, "stream_node", json_integer(r->stream_node));
	json_object_set_new(res, "local_cpu_util", json_real(f.local_util));
	json_object_set_new(res, "remote_cpu_util", json_real(f.remote_util));
	json_object_set_new(res, "local_service_demand", json_real(f.local_sd));
	json_object_set_new(res, "remote_service_demand", json_real(f.remote_sd));
	cli_print_result_json(root, stats);
}

/* The limit of run's netperf cases (case_checks.c), before anything is built: the host-time
 * estimate of cfg's streams for their simulated time (netperf's and iperf3's). */
int cli_netperf_check_time(const char *cmd, const struct ilab_netperf_cfg *cfg, unsigned runs,
			   const char *shorten, double *estimate_s, uint64_t *sim_ns)
{
	char work[128], err[300];

	*sim_ns = cfg->duration_ns + cfg->warmup_ns; /* one run's, for the progress line */
	*estimate_s = runs * cfg->queues * (*sim_ns / 1e3) * ILAB_HOST_S_NETPERF;
	snprintf(work, sizeof(work), "%u stream%s for %.3f simulated s", cfg->queues,
		 cfg->queues == 1 ? "" : "s", *sim_ns / 1e9);
	if (runs > 1)
		snprintf(work + strlen(work), sizeof(work) - strlen(work), ", %u runs (-i)", runs);
	if (ilab_host_time_check(*estimate_s, work, "run", shorten, err, sizeof(err)))
		return cli_usage_error(cmd, "%s", err);
	return 0;
}

/* One run's figures for the confidence intervals: the result netperf prints (throughput or
 * transaction rate), the CPU utilisations and service demands, the elapsed time. */
static void conf_figures(const struct np_opts *o, const struct ilab_netperf_result *r,
			 double v[NP_CONF_N])
{
	struct np_cpu_figs f = cpu_figs(o, r);

	v[NP_CONF_RESULT] = rr_test(o->cfg.test) ? r->tps
			    : o->cfg.test == ILAB_NETPERF_UDP_STREAM
				    ? r->messages * (double)o->cfg.send_bytes * 8 / (double)r->window_ns
				    : r->gbps;
	v[NP_CONF_LCPU] = f.local_util;
	v[NP_CONF_RCPU] = f.remote_util;
	v[NP_CONF_LSD] = f.local_sd;
	v[NP_CONF_RSD] = f.remote_sd;
	v[NP_CONF_TIME] = r->window_ns / 1e9;
}

/* -i/-I: the first run is in *res; run again with the next seeds while netperf would, and
 * leave in *res and o the runs' means (the figures netperf prints). */
static int confidence_runs(struct np_opts *o, struct ilab_netperf_result *res, char *err,
			   size_t errlen)
{
	struct ilab_nic_env env = o->env;
	struct ilab_netperf_result r = *res;
	double v[NP_CONF_N], gbps = 0, tps = 0, rgbps = 0, msgs = 0, rmsgs = 0, lat[6] = { 0 };
	int ret = 0;

	for (;;) {
		conf_figures(o, &r, v);
		np_confid_add(&o->conf, v);
		gbps += r.gbps, tps += r.tps, rgbps += r.remote_gbps;
		msgs += (double)r.messages, rmsgs += (double)r.remote_messages;
		lat[0] += r.lat_mean_ns, lat[1] += (double)r.lat_min_ns;
		lat[2] += (double)r.lat_max_ns, lat[3] += (double)r.lat_p50_ns;
		lat[4] += (double)r.lat_p90_ns, lat[5] += (double)r.lat_p99_ns;
		if (!np_confid_again(&o->conf))
			break;
		env.seed++;
		ret = ilab_netperf_env_run(&env, &o->cfg, &r, NULL, NULL, err, errlen);
		if (ret)
			return ret;
	}
	{
		double n = o->conf.n;

		res->gbps = gbps / n, res->tps = tps / n, res->remote_gbps = rgbps / n;
		res->messages = (uint64_t)(msgs / n + 0.5);
		res->remote_messages = (uint64_t)(rmsgs / n + 0.5);
		res->lat_mean_ns = lat[0] / n;
		res->lat_min_ns = (uint64_t)(lat[1] / n + 0.5);
		res->lat_max_ns = (uint64_t)(lat[2] / n + 0.5);
		res->lat_p50_ns = (uint64_t)(lat[3] / n + 0.5);
		res->lat_p90_ns = (uint64_t)(lat[4] / n + 0.5);
		res->lat_p99_ns = (uint64_t)(lat[5] / n + 0.5);
		res->window_ns = (uint64_t)(np_confid_mean(&o->conf, NP_CONF_TIME) * 1e9 + 0.5);
	}
	o->mean_lcpu = np_confid_mean(&o->conf, NP_CONF_LCPU);
	o->mean_rcpu = np_confid_mean(&o->conf, NP_CONF_RCPU);
	o->mean_lsd = np_confid_mean(&o->conf, NP_CONF_LSD);
	o->mean_rsd = np_confid_mean(&o->conf, NP_CONF_RSD);
	o->cpu_mean = true;
	return 0;
}

/* -l -N: the simulated time the run may take, NETPERF_TRANS_BOUND times the least N
 * transactions take on the profile's path (no IOMMU), so that the host-time estimate can
 * bound it before anything runs. */
static int transactions_bound(struct np_opts *o, char *err, size_t errlen)
{
	struct ilab_profile *prof = calloc(1, sizeof(*prof));
	struct ilab_netperf_cfg c = o->cfg;
	uint64_t least;
	int ret;

	if (!prof)
		return fprintf(stderr, "%s netperf: out of memory\n", CLI_PROG), CLI_EXIT_FAIL;
	ret = ilab_profile_open(o->env.profile, prof, err, errlen);
	if (!ret)
		ret = ilab_netperf_from_profile(prof, &c, err, errlen);
	free(prof);
	if (ret) {
		fprintf(stderr, "%s netperf: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	least = ilab_netperf_peer_ns(&c) + 2 * c.wire_ns + c.nic_tx_ns + c.nic_rx_ns +
		c.tx_skb_ns + c.irq_ns + c.rx_buffer_ns;
	if (o->cfg.test == ILAB_NETPERF_CRR)
		least *= 3; /* three round trips */
	o->cfg.duration_ns = o->cfg.transactions * least * NETPERF_TRANS_BOUND;
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
	if (o.omni_out) {
		ret = omni_selection(&o, &o.sel);
		if (ret)
			return ret;
	}
	if (o.cfg.transactions) {
		ret = transactions_bound(&o, err, sizeof(err));
		if (ret)
			return ret;
	}
	ret = cli_netperf_check_time("netperf", &o.cfg, np_confid_on(&o.conf) ? o.conf.it_max : 1,
				     np_confid_on(&o.conf) ? "shorten -l, lower --queues or -i"
							   : "shorten -l or lower --queues",
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
	if (!ret && np_confid_on(&o.conf))
		ret = confidence_runs(&o, &res, err, sizeof(err));
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
	if (rr_test(o.cfg.test) ? !res.transactions : !res.bytes) {
		fprintf(stderr, "%s netperf: -l %g s measured nothing (no %s completed in the "
			"window): give a longer -l\n", CLI_PROG, o.cfg.duration_ns / 1e9,
			rr_test(o.cfg.test) ? "transaction" : "byte");
		free(stats);
		return CLI_EXIT_USAGE;
	}
	if (o.cfg.transactions && res.transactions < o.cfg.transactions * o.cfg.queues) {
		fprintf(stderr, "%s netperf: -l -%llu: %llu transactions completed within the "
			"bound of %g simulated s\n", CLI_PROG,
			(unsigned long long)o.cfg.transactions,
			(unsigned long long)res.transactions, o.cfg.duration_ns / 1e9);
		free(stats);
		return CLI_EXIT_FAIL;
	}
	if (o.json)
		print_json(&o, &info, &res, stats);
	else
		print_text(&o, &info, &res);
	free(stats);
	return CLI_EXIT_OK;
}
