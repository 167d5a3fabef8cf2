/* cmd_bench.c — `iommulab bench`: the dma_map_benchmark experiment on the modelled board (each
 * IOMMU unit's model in its polling agent, SMMUv3 or VT-d as --iommu or the profile says, its
 * driver, the IOMMU core and dma-iommu), natively (real threads) or in the deterministic
 * simulator (--engine sim: fibers, virtual time, a machine profile's costs). Not the experiment itself (src/workloads/map_benchmark.c): this parses
 * options, assembles the machine, prints the tool's lines, nanosecond figures and optionally
 * JSON (with the simulator's and the IOMMU unit's statistics).
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iommulab/board.h>
#include <iommulab/iommu_arch.h>
#include <iommulab/sim.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/kernel_era.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/plat.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>
#include <iommulab/trace.h>

#include "experiments/host_time.h"
#include "util/errf.h"
#include "util/output_set.h"

struct bench_opts {
	struct ilab_map_bench_cfg cfg;
	enum ilab_domain_type type;
	bool map_pages;
	bool map_pages_set; /* --map-pages given: it wins over the kernel's */
	struct ilab_kernel_era kernel; /* --kernel, default latest */
	bool fq_timer;
	bool fq_timer_set; /* given on the command line: only lazy mode has a flush queue */
	enum ilab_dma_fq_kind fq_kind; /* --fq percpu|single */
	unsigned fq_size;              /* --fq-size: 0 = the kind's (256 / 32768) */
	unsigned fq_timeout_ms;        /* --fq-timeout-ms: 0 = the kind's (10 / 1000) */
	const char *fq_opt;            /* the first flush-queue option given (for its error) */
	enum ilab_iova_depot_mode iova_depot; /* --iova-depot list|fixed32 */
	bool iova_depot_set;
	bool cmdq_fair_lock;           /* --cmdq-lock fair|shared */
	bool cmdq_lock_set;
	enum ilab_dma_lookup lookup;
	bool lookup_set;    /* --lookup given: it wins over the kernel's (a backport if newer) */
	bool lazy_backport; /* --mode lazy on an SMMUv3 of a kernel before 4.20 */
	enum ilab_cma_mode cma;
	const char *topology;
	bool topology_set;
	const char *device;
	int unit;               /* --unit N (--smmu N): a device behind unit N only; -1 any */
	bool json;
	bool breakdown; /* --breakdown: print where the simulated time went */
	struct cli_trace_opt trace; /* --trace FILE and its limits (docs/trace.md) */
	enum plat_engine engine;
	const char *profile;     /* --profile: file or name; NULL = the topology's */
	const char *iommu;       /* --iommu: the architecture the machine must have; alone, it
				  * picks that architecture's built-in machine (iommu_machine) */
	uint64_t seed;
	bool seed_set; /* given on the command line: only the simulator draws random numbers */
	/* --ecmdq: -1 not given (an SMMU without ECMDQs); 0 off, 1 on: the SMMU has one ECMDQ per
	 * CPU and the driver uses them (on) or only its main queue (off): an A/B of the driver
	 * on the same hardware (the model's serial consumer takes only the queues with work either way) */
	int ecmdq;
	/* --cmdqv: -1 not given (the driver uses the profile's Tegra241 CMDQV if it has one, as
	 * Linux does); 1 on (the profile must have one), 0 off (Linux's disable_cmdqv) */
	int cmdqv;
	unsigned lengths; /* which of -s, --duration-ms, --iterations were given (LEN_*) */
};

/* How long a run lasts: one of these options, not several (one would silently win). */
enum { LEN_SECONDS = 1, LEN_DURATION = 2, LEN_ITERATIONS = 4 };

/* strtol and strtoull skip leading blanks and take a sign: "-t ' 1'" or "--seed ' -1'" (2^64 - 1)
 * would pass. A number starts with a digit, or '-' and a digit where negatives are in range. */
static bool starts_number(const char *s, bool negative_ok)
{
	if (negative_ok && s[0] == '-')
		s++;
	return isdigit((unsigned char)s[0]);
}

/* Decimal, or hexadecimal with 0x: not strtol's base 0, which reads "-t 010" as 8 threads. */
static int number_base(const char *s)
{
	if (s[0] == '-')
		s++;
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!starts_number(s, lo < 0))
		return -1;
	errno = 0;
	v = strtol(s, &end, number_base(s));
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

#define NUM(opt, name, lo, hi, dst)                                                           \
	do {                                                                                  \
		long v_;                                                                      \
		if (parse_long(optarg, (lo), (hi), &v_))                                      \
			return cli_usage_error("bench", "%s must be a number in %ld..%ld, not '%s'", \
					       (name), (long)(lo), (long)(hi), optarg);        \
		(dst) = v_;                                                                   \
	} while (0)

static int parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ "node", required_argument, NULL, 'n' },
		{ "dma-bits", required_argument, NULL, 'b' },
		{ "dir", required_argument, NULL, 'd' },
		{ "dma-trans-ns", required_argument, NULL, 'x' },
		{ "granule", required_argument, NULL, 'g' },
		{ "map-mode", required_argument, NULL, 'm' },
		{ "mode", required_argument, NULL, 'M' },
		{ "map-pages", required_argument, NULL, 'P' },
		{ "lookup", required_argument, NULL, 'L' },
		{ "cma", required_argument, NULL, 'C' },
		{ "topology", required_argument, NULL, 'T' },
		{ "unit", required_argument, NULL, 'S' },
		{ "smmu", required_argument, NULL, 'S' }, /* --unit's SMMUv3-era name */
		{ "device", required_argument, NULL, 'D' },
		{ "duration-ms", required_argument, NULL, 'U' },
		{ "fq-timer", required_argument, NULL, 'F' },
		{ "engine", required_argument, NULL, 'E' },
		{ "profile", required_argument, NULL, 'p' },
		{ "iommu", required_argument, NULL, 'A' },
		{ "seed", required_argument, NULL, 'R' },
		{ "iterations", required_argument, NULL, 'I' },
		{ "ecmdq", required_argument, NULL, 'Q' },
		{ "cmdqv", required_argument, NULL, 'V' },
		{ "fq", required_argument, NULL, 'K' },
		{ "fq-size", required_argument, NULL, 'Z' },
		{ "fq-timeout-ms", required_argument, NULL, 'O' },
		{ "iova-depot", required_argument, NULL, 'H' },
		{ "cmdq-lock", required_argument, NULL, 'G' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "breakdown", no_argument, NULL, 'B' },
		{ "trace", required_argument, NULL, 'W' },
		{ "trace-limit-us", required_argument, NULL, 'Y' },
		{ "trace-limit-mb", required_argument, NULL, 1001 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	ilab_map_bench_cfg_default(&o->cfg);
	o->type = ILAB_DOMAIN_DMA;
	o->map_pages = true;
	o->fq_timer = true;
	o->lookup = ILAB_DMA_LOOKUP_DIRECT;
	o->cma = ILAB_CMA_GLOBAL;
	o->topology = "kunpeng920";
	o->unit = -1;
	o->engine = PLAT_ENGINE_NATIVE;
	o->seed = 1;
	o->ecmdq = -1;
	o->cmdqv = -1;
	o->trace.max_bytes = ILAB_TRACE_MAX_BYTES;
	ilab_kernel_era_latest(&o->kernel);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":t:s:n:b:d:x:g:m:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 't': NUM(opt, "-t threads", 1, ILAB_MAP_BENCH_MAX_THREADS, o->cfg.threads); break;
		case 's':
			NUM(opt, "-s seconds", 1, ILAB_MAP_BENCH_MAX_SECONDS, o->cfg.seconds);
			o->lengths |= LEN_SECONDS;
			break;
		case 'n': NUM(opt, "-n node", -1, 63, o->cfg.node); break;
		case 'b': NUM(opt, "-b dma_bits", 20, 64, o->cfg.dma_bits); break;
		case 'd': NUM(opt, "-d dir", 0, 2, o->cfg.dir); break;
		case 'x': NUM(opt, "-x dma_trans_ns", 0, ILAB_MAP_BENCH_MAX_TRANS_NS,
			      o->cfg.dma_trans_ns); break;
		case 'g': NUM(opt, "-g granule", 1, ILAB_MAP_BENCH_MAX_GRANULE, o->cfg.granule); break;
		case 'U': {
			long ms;

			NUM(opt, "--duration-ms", 1, 300000, ms);
			o->cfg.duration_ns = (uint64_t)ms * 1000000ull;
			o->lengths |= LEN_DURATION;
			break;
		}
		case 'm':
			if (!strcmp(optarg, "single") || !strcmp(optarg, "0"))
				o->cfg.mode = ILAB_MAP_BENCH_SINGLE;
			else if (!strcmp(optarg, "sg") || !strcmp(optarg, "1"))
				o->cfg.mode = ILAB_MAP_BENCH_SG;
			else
				return cli_usage_error("bench", "-m must be single or sg, not '%s'",
						       optarg);
			break;
		case 'M':
			if (!strcmp(optarg, "strict"))
				o->type = ILAB_DOMAIN_DMA;
			else if (!strcmp(optarg, "lazy"))
				o->type = ILAB_DOMAIN_DMA_FQ;
			else if (!strcmp(optarg, "passthrough"))
				o->type = ILAB_DOMAIN_IDENTITY;
			else
				return cli_usage_error("bench", "--mode must be strict, lazy or "
						       "passthrough, not '%s'", optarg);
			break;
		case 'P':
			if (!strcmp(optarg, "on") || !strcmp(optarg, "off")) {
				o->map_pages = !strcmp(optarg, "on");
				o->map_pages_set = true;
			} else
				return cli_usage_error("bench", "--map-pages must be on or off, not "
						       "'%s'", optarg);
			break;
		case 'F':
			if (!strcmp(optarg, "agent") || !strcmp(optarg, "unmap")) {
				o->fq_timer = !strcmp(optarg, "agent");
				o->fq_timer_set = true;
			} else
				return cli_usage_error("bench", "--fq-timer must be agent or unmap, "
						       "not '%s'", optarg);
			break;
		case 'K':
			if (!strcmp(optarg, "percpu") || !strcmp(optarg, "single"))
				o->fq_kind = !strcmp(optarg, "single") ? ILAB_DMA_FQ_SINGLE
								      : ILAB_DMA_FQ_PERCPU;
			else
				return cli_usage_error("bench", "--fq must be percpu or single, not "
						       "'%s'", optarg);
			o->fq_opt = o->fq_opt ? o->fq_opt : "--fq";
			break;
		case 'Z': {
			long n;

			NUM(opt, "--fq-size", 2, 1L << 20, n);
			if (n & (n - 1))
				return cli_usage_error("bench", "--fq-size must be a power of two "
						       "(the ring's index is masked), not %ld", n);
			o->fq_size = (unsigned)n;
			o->fq_opt = o->fq_opt ? o->fq_opt : "--fq-size";
			break;
		}
		case 'O':
			NUM(opt, "--fq-timeout-ms", 1, 60000, o->fq_timeout_ms);
			o->fq_opt = o->fq_opt ? o->fq_opt : "--fq-timeout-ms";
			break;
		case 'H':
			if (!strcmp(optarg, "list") || !strcmp(optarg, "fixed32"))
				o->iova_depot = !strcmp(optarg, "list") ? ILAB_IOVA_DEPOT_LIST
									: ILAB_IOVA_DEPOT_FIXED32;
			else
				return cli_usage_error("bench", "--iova-depot must be list or fixed32, "
						       "not '%s'", optarg);
			o->iova_depot_set = true;
			break;
		case 'G':
			if (!strcmp(optarg, "fair") || !strcmp(optarg, "shared"))
				o->cmdq_fair_lock = !strcmp(optarg, "fair");
			else
				return cli_usage_error("bench", "--cmdq-lock must be shared or fair, "
						       "not '%s'", optarg);
			o->cmdq_lock_set = true;
			break;
		case 'L':
			if (!strcmp(optarg, "refcount"))
				o->lookup = ILAB_DMA_LOOKUP_REFCOUNT;
			else if (!strcmp(optarg, "direct"))
				o->lookup = ILAB_DMA_LOOKUP_DIRECT;
			else
				return cli_usage_error("bench", "--lookup must be refcount or direct, "
						       "not '%s'", optarg);
			o->lookup_set = true;
			break;
		case 'C':
			if (!strcmp(optarg, "global"))
				o->cma = ILAB_CMA_GLOBAL;
			else if (!strcmp(optarg, "pernuma"))
				o->cma = ILAB_CMA_PERNUMA;
			else
				return cli_usage_error("bench", "--cma must be global or pernuma, not "
						       "'%s'", optarg);
			break;
		case 'E':
			if (!strcmp(optarg, "native") || !strcmp(optarg, "sim"))
				o->engine = !strcmp(optarg, "sim") ? PLAT_ENGINE_SIM
								   : PLAT_ENGINE_NATIVE;
			else
				return cli_usage_error("bench", "--engine must be native or sim, not "
						       "'%s'", optarg);
			break;
		case 'p': o->profile = optarg; break;
		case 'A':
			if (!ilab_iommu_arch_find(optarg)) {
				char names[64];

				return cli_usage_error("bench", "--iommu must be %s, not '%s'",
						       ilab_iommu_arch_names(names, sizeof(names), "|"),
						       optarg);
			}
			o->iommu = optarg;
			break;
		case 'R': {
			char *end;

			errno = 0;
			o->seed = strtoull(optarg, &end, number_base(optarg));
			if (errno || end == optarg || *end || !starts_number(optarg, false) ||
			    o->seed < 1 || o->seed > CLI_SEED_MAX)
				return cli_usage_error("bench", "--seed must be a whole number from 1 "
						       "to %llu, not '%s'",
						       (unsigned long long)CLI_SEED_MAX, optarg);
			o->seed_set = true;
			break;
		}
		case 'I': {
			long n;

			NUM(opt, "--iterations", 1, 1000000000L, n);
			o->cfg.iterations = (uint64_t)n;
			o->lengths |= LEN_ITERATIONS;
			break;
		}
		case 'Q':
			if (!strcmp(optarg, "on") || !strcmp(optarg, "off"))
				o->ecmdq = !strcmp(optarg, "on");
			else
				return cli_usage_error("bench", "--ecmdq must be on or off, not '%s'",
						       optarg);
			break;
		case 'V':
			if (!strcmp(optarg, "on") || !strcmp(optarg, "off"))
				o->cmdqv = !strcmp(optarg, "on");
			else
				return cli_usage_error("bench", "--cmdqv must be on or off, not '%s'",
						       optarg);
			break;
		case 'k': {
			char msg[160];

			if (ilab_kernel_era_parse(optarg, &o->kernel, msg, sizeof(msg)))
				return cli_usage_error("bench", "--%s", msg);
			break;
		}
		case 'T': o->topology = optarg; o->topology_set = true; break;
		case 'S': NUM(opt, "--unit (--smmu)", 0, 1023, o->unit); break;
		case 'D':
			if (!*optarg)
				return cli_usage_error("bench", "--device needs a device name");
			o->device = optarg;
			break;
		case 'j': o->json = true; break;
		case 'B': o->breakdown = true; break;
		case 'W': o->trace.path = optarg; break;
		case 'Y':
			if (cli_trace_limit("bench", optarg, &o->trace))
				return CLI_EXIT_USAGE;
			break;
		case 1001:
			if (cli_trace_limit_mb("bench", optarg, &o->trace))
				return CLI_EXIT_USAGE;
			break;
		case 'h':
			cli_print_command_help(cli_find_command("bench"), stdout);
			return -1;
		default:
			return cli_bad_option("bench", opt, argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
	/* natively a profile only names the machine (its topology and iommu:), with --iommu */
	if (o->profile && o->engine != PLAT_ENGINE_SIM && !o->iommu)
		return cli_usage_error("bench", "--profile needs --engine sim (or --iommu, "
				       "natively: the profile's topology with that architecture)");
	if (o->breakdown && o->engine != PLAT_ENGINE_SIM)
		return cli_usage_error("bench", "--breakdown needs --engine sim (only the simulator "
				       "knows where each CPU's time went)");
	if ((o->trace.path || o->trace.limit_set) && o->engine != PLAT_ENGINE_SIM)
		return cli_usage_error("bench", "--trace is not supported natively: it needs "
				       "--engine sim (only the simulator has a timeline to write)");
	if (o->trace.limit_set && !o->trace.path)
		return cli_usage_error("bench", "--trace-limit-us and --trace-limit-mb need "
				       "--trace FILE");
	if (o->seed_set && o->engine != PLAT_ENGINE_SIM)
		return cli_usage_error("bench", "--seed needs --engine sim (a native run has no "
				       "random numbers to seed)");
	if (o->fq_timer_set && o->type != ILAB_DOMAIN_DMA_FQ)
		return cli_usage_error("bench", "--fq-timer needs --mode lazy (only lazy mode has a "
				       "flush queue and its timer)");
	if (o->fq_opt && o->type != ILAB_DOMAIN_DMA_FQ)
		return cli_usage_error("bench", "%s needs --mode lazy (only lazy mode has a flush "
				       "queue)", o->fq_opt);
	if (o->iova_depot_set && o->type == ILAB_DOMAIN_IDENTITY)
		return cli_usage_error("bench", "--iova-depot needs --mode strict or lazy (a "
				       "passthrough device allocates no IOVA)");
	if (o->lengths & (o->lengths - 1))
		return cli_usage_error("bench", "give one of -s, --duration-ms and --iterations");
	if (o->cmdqv >= 0 && o->engine != PLAT_ENGINE_SIM)
		return cli_usage_error("bench", "--cmdqv needs --engine sim (the machine with a "
				       "CMDQV is a profile's)");
	if (o->cmdqv == 1 && o->ecmdq >= 0)
		return cli_usage_error("bench", "--cmdqv on with --ecmdq: an SMMU has ECMDQs "
				       "(SMMUv3.3) or a Tegra241 CMDQV, not both");
	if (!o->map_pages_set)
		o->map_pages = o->kernel.map_pages;
	if (!o->iova_depot_set)
		o->iova_depot = o->kernel.iova_depot;
	if (!o->cmdq_lock_set)
		o->cmdq_fair_lock = o->kernel.cmdq_fair_lock;
	if (!o->lookup_set)
		o->lookup = o->kernel.lookup;
	return 0;
}

/* The flush-queue and IOVA options as dma-iommu takes them: the kind brings Linux's size and
 * timeout for it, then --fq-size / --fq-timeout-ms override them. */
static void bench_dma_options(const struct bench_opts *o, struct ilab_dma_options *d)
{
	ilab_dma_options_default(d);
	ilab_kernel_era_dma_opts(&o->kernel, d); /* the switches below win */
	d->use_map_pages = o->map_pages;
	d->lookup = o->lookup;
	d->fq_timer = o->fq_timer;
	ilab_dma_options_set_fq_kind(d, o->fq_kind);
	if (o->fq_size)
		d->fq_size = o->fq_size;
	if (o->fq_timeout_ms)
		d->fq_timeout_ns = (uint64_t)o->fq_timeout_ms * 1000000ull;
	d->iova_depot = o->iova_depot;
}

static const char *fq_kind_name(enum ilab_dma_fq_kind k)
{
	return k == ILAB_DMA_FQ_SINGLE ? "single" : "percpu";
}

static const char *depot_name(enum ilab_iova_depot_mode m)
{
	return m == ILAB_IOVA_DEPOT_FIXED32 ? "fixed32" : "list";
}

/* The default device: the NIC on node 2 (kunpeng920's), else the first NIC, else the first
 * device; restricted to those behind --unit when given. */
static const struct ilab_device *pick_device(const struct ilab_topo *t, const struct bench_opts *o)
{
	const struct ilab_device *best = NULL;
	int best_score = -1;

	if (o->device)
		return ilab_topo_find_device(t, o->device);
	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);
		int score = (d->kind == ILAB_DEV_NIC) * 2 + (d->node == 2);

		if (o->unit >= 0 && d->smmu != (unsigned)o->unit)
			continue;
		if (score > best_score) {
			best = d;
			best_score = score;
		}
	}
	return best;
}

static const char *mode_name(enum ilab_domain_type t)
{
	return t == ILAB_DOMAIN_DMA_FQ ? "lazy" : t == ILAB_DOMAIN_IDENTITY ? "passthrough"
									     : "strict";
}

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* A passthrough device's bounce buffers (dma-direct beyond the DMA mask, docs/dma-iommu.md). */
static void print_swiotlb(const struct ilab_swiotlb_stats *sw)
{
	printf("swiotlb: bounced maps %llu, unmaps %llu, copied in %llu bytes, out %llu bytes, "
	       "full %llu, slots in use %llu of %llu\n", (unsigned long long)sw->maps,
	       (unsigned long long)sw->unmaps, (unsigned long long)sw->bytes_in,
	       (unsigned long long)sw->bytes_out, (unsigned long long)sw->full,
	       (unsigned long long)sw->used, (unsigned long long)sw->slots);
}

static json_t *swiotlb_json(const struct ilab_swiotlb_stats *sw)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "bytes_in", (json_int_t)sw->bytes_in,
			 "bytes_out", (json_int_t)sw->bytes_out, "full", (json_int_t)sw->full,
			 "maps", (json_int_t)sw->maps, "slots", (json_int_t)sw->slots, "unmaps",
			 (json_int_t)sw->unmaps, "used", (json_int_t)sw->used);
}

/* Where an explicit option gave another behaviour than the kernel's (docs/kernel-eras.md):
 * "backport" when it is a later kernel's, "revert" when an earlier one's. */
static json_t *overrides_json(const struct bench_opts *o)
{
	json_t *a = json_object();

	if (o->lookup_set && o->lookup != o->kernel.lookup)
		json_object_set_new(a, "lookup", json_pack("{s:s,s:s,s:s}", "kernel",
			o->kernel.lookup == ILAB_DMA_LOOKUP_REFCOUNT ? "refcount" : "direct", "used",
			o->lookup == ILAB_DMA_LOOKUP_REFCOUNT ? "refcount" : "direct", "as",
			o->lookup == ILAB_DMA_LOOKUP_DIRECT ? "backport" : "revert"));
	if (o->lazy_backport)
		json_object_set_new(a, "mode", json_pack("{s:s,s:s,s:s}", "kernel", "strict",
							 "used", "lazy", "as", "backport"));
	return a;
}

/* The same, one line each, before the figures (only when there is one). */
static void print_overrides(const struct bench_opts *o)
{
	if (o->lookup_set && o->lookup != o->kernel.lookup)
		printf("iommulab: kernel %s has %s domain lookup; --lookup %s runs %s\n",
		       o->kernel.name,
		       o->kernel.lookup == ILAB_DMA_LOOKUP_REFCOUNT ? "refcount" : "direct",
		       o->lookup == ILAB_DMA_LOOKUP_REFCOUNT ? "refcount" : "direct",
		       o->lookup == ILAB_DMA_LOOKUP_DIRECT
		       ? "4.19's fast lookup as a backport" : "the refcounted lookup as a revert");
	if (o->lazy_backport)
		printf("iommulab: kernel %s's SMMUv3 driver is strict only (non-strict mode came "
		       "in 4.20); --mode lazy runs 4.20's non-strict series as a backport\n",
		       o->kernel.name);
}

static void print_json(const struct bench_opts *o, const struct ilab_dma_options *d,
		       const char *devname, unsigned unit, const char *unit_name,
		       const struct ilab_map_bench_result *r, const struct ilab_dma_stats *st,
		       struct ilab_board *board, const struct ilab_sim *sim,
		       const struct ilab_profile *prof, const struct ilab_swiotlb_stats *sw)
{
	const struct ilab_map_bench_cfg *c = &o->cfg;
	json_t *root = json_pack(
		"{s:{s:i,s:i,s:i,s:i,s:s,s:i,s:i,s:s,s:s,s:b,s:s,s:s,s:s,s:s,s:s,s:s,s:I},"
		"s:{s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},"
		"s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}}",
		"config", "threads", (int)c->threads, "seconds", (int)c->seconds, "node", c->node,
		"dma_bits", (int)c->dma_bits, "dir", ilab_dma_dir_name(c->dir), "dma_trans_ns",
		(int)c->dma_trans_ns, "granule", (int)c->granule, "map_mode",
		c->mode == ILAB_MAP_BENCH_SG ? "sg" : "single", "mode", mode_name(o->type),
		"map_pages", o->map_pages, "fq_timer", o->fq_timer ? "agent" : "unmap", "lookup",
		o->lookup == ILAB_DMA_LOOKUP_REFCOUNT ? "refcount" : "direct", "cma",
		o->cma == ILAB_CMA_PERNUMA ? "pernuma" : "global", "topology", o->topology,
		"device", devname, "iommu", unit_name, "duration_ns", (json_int_t)c->duration_ns,
		"result", "loops", (json_int_t)r->loops, "avg_map_100ns",
		(json_int_t)r->avg_map_100ns, "map_stddev_100ns", (json_int_t)r->map_stddev_100ns,
		"avg_unmap_100ns", (json_int_t)r->avg_unmap_100ns, "unmap_stddev_100ns",
		(json_int_t)r->unmap_stddev_100ns, "map_us", r->avg_map_100ns / 10.0, "unmap_us",
		r->avg_unmap_100ns / 10.0, "map_ns", (json_int_t)(r->map_ns + 0.5),
		"map_stddev_ns", (json_int_t)(r->map_stddev_ns + 0.5), "unmap_ns",
		(json_int_t)(r->unmap_ns + 0.5), "unmap_stddev_ns",
		(json_int_t)(r->unmap_stddev_ns + 0.5), "map_ns_min", (json_int_t)r->map_ns_min,
		"map_ns_max", (json_int_t)r->map_ns_max, "unmap_ns_min",
		(json_int_t)r->unmap_ns_min, "unmap_ns_max", (json_int_t)r->unmap_ns_max,
		"map_errors", (json_int_t)r->map_errors,
		"stats", "iotlb_syncs", (json_int_t)st->iotlb_syncs, "fq_queued",
		(json_int_t)st->fq_queued, "fq_flushes", (json_int_t)st->fq_flushes,
		"fq_full_flushes", (json_int_t)st->fq_full_flushes, "fq_timeouts",
		(json_int_t)st->fq_timeouts, "iova_cache_hits", (json_int_t)st->iova_cache_hits,
		"iova_cache_misses", (json_int_t)st->iova_cache_misses, "refcount_lookups",
		(json_int_t)st->refcount_lookups, "dac_fallbacks", (json_int_t)st->dac_fallbacks);
	char *s;
	json_t *cfg = root ? json_object_get(root, "config") : NULL;

	if (cfg) {
		json_object_set_new(cfg, "engine", json_string(sim ? "sim" : "native"));
		json_object_set_new(cfg, "iterations", jint(c->iterations));
		json_object_set_new(cfg, "fq", json_string(fq_kind_name(d->fq_kind)));
		json_object_set_new(cfg, "fq_size", jint(d->fq_size));
		json_object_set_new(cfg, "fq_timeout_ns", jint(d->fq_timeout_ns));
		json_object_set_new(cfg, "iova_depot", json_string(depot_name(d->iova_depot)));
		json_object_set_new(cfg, "cmdq_lock", json_string(o->cmdq_fair_lock ? "fair"
										  : "shared"));
		json_object_set_new(cfg, "kernel", json_string(o->kernel.name));
		json_t *ov = overrides_json(o);

		if (json_object_size(ov)) /* only when there is one: older outputs stay */
			json_object_set_new(cfg, "kernel_overrides", ov);
		else
			json_decref(ov);
		json_object_set_new(cfg, "ecmdq", o->ecmdq < 0 ? json_string("none")
							       : json_string(o->ecmdq ? "on" : "off"));
		if (o->cmdqv >= 0) /* only when given: older outputs stay as they were */
			json_object_set_new(cfg, "cmdqv", json_string(o->cmdqv ? "on" : "off"));
		if (sim) {
			json_object_set_new(cfg, "profile", json_string(prof->name));
			json_object_set_new(cfg, "seed", jint(o->seed));
		}
		/* the unit the device sits behind, by its architecture's name in config.iommu */
		json_object_set_new(root, "iommu", ilab_board_iommu_json(board, unit));
		if (sw)
			json_object_set_new(root, "swiotlb", swiotlb_json(sw));
		if (sim) {
			json_object_set_new(root, "sim", ilab_sim_json(sim));
			json_object_set_new(json_object_get(root, "result"), "elapsed_ns",
					    jint(r->elapsed_ns));
		}
	}
	s = root ? json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2)) : NULL;
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(root);
}

static void print_text(const struct bench_opts *o, const struct ilab_dma_options *d,
		       const char *devname, const char *unit_name,
		       const struct ilab_map_bench_result *r, const struct ilab_dma_stats *st)
{
	ilab_map_bench_print_tool(stdout, &o->cfg, r);
	print_overrides(o);
	printf("iommulab: device %s (%s), kernel %s, mode %s, map-pages %s, fq-timer %s, "
	       "lookup %s, cma %s, topology %s, ecmdq %s\n", devname, unit_name, o->kernel.name,
	       mode_name(o->type),
	       o->map_pages ? "on" : "off", o->fq_timer ? "agent" : "unmap",
	       o->lookup == ILAB_DMA_LOOKUP_REFCOUNT ? "refcount" : "direct",
	       o->cma == ILAB_CMA_PERNUMA ? "pernuma" : "global", o->topology,
	       o->ecmdq < 0 ? "none" : o->ecmdq ? "on" : "off");
	/* only when asked for: the line above is what scripts and docs already parse */
	if (o->fq_opt || o->iova_depot_set || o->cmdq_lock_set)
		printf("iommulab: fq %s, fq-size %u, fq-timeout %llu ms, iova-depot %s, "
		       "cmdq-lock %s\n", o->type == ILAB_DOMAIN_DMA_FQ ? fq_kind_name(d->fq_kind)
								       : "none",
		       d->fq_size, (unsigned long long)(d->fq_timeout_ns / 1000000),
		       depot_name(d->iova_depot), o->cmdq_fair_lock ? "fair" : "shared");
	printf("map latency(ns): avg %.1f stddev %.1f min %llu max %llu\n", r->map_ns,
	       r->map_stddev_ns, (unsigned long long)r->map_ns_min,
	       (unsigned long long)r->map_ns_max);
	printf("unmap latency(ns): avg %.1f stddev %.1f min %llu max %llu\n", r->unmap_ns,
	       r->unmap_stddev_ns, (unsigned long long)r->unmap_ns_min,
	       (unsigned long long)r->unmap_ns_max);
	printf("loops %llu, map errors %llu, iotlb syncs %llu, fq flushes %llu (full %llu, "
	       "timer %llu), iova cache hits %llu misses %llu\n",
	       (unsigned long long)r->loops, (unsigned long long)r->map_errors,
	       (unsigned long long)st->iotlb_syncs, (unsigned long long)st->fq_flushes,
	       (unsigned long long)st->fq_full_flushes, (unsigned long long)st->fq_timeouts,
	       (unsigned long long)st->iova_cache_hits, (unsigned long long)st->iova_cache_misses);
}

static double host_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --iommu alone: the built-in machine of that architecture (kunpeng920: SMMUv3, the default;
 * icelake-2s-a100: VT-d, seed 004's host). */
static const char *iommu_machine(const char *arch)
{
	return !strcmp(arch, "vtd") ? "icelake-2s-a100" : "kunpeng920";
}

/* --engine sim: the profile (--profile, else the one named after the topology, else --iommu's
 * machine) and, unless --topology was given, the profile's topology; its iommu: must be
 * --iommu's. Natively the same with --iommu and no --topology, for the machine's topology
 * only (a native run charges no profile costs). Errors are one line; bad input exits 2. */
static int load_profile(struct bench_opts *o, struct ilab_profile *prof)
{
	const char *what;
	char err[600];

	if (o->iommu && !o->profile && !o->topology_set)
		o->profile = iommu_machine(o->iommu);
	what = o->profile ? o->profile : o->topology;

	if (!o->profile && (strchr(what, '/') || strchr(what, '.'))) {
		fprintf(stderr, "%s bench: --engine sim with a topology file needs --profile\n",
			CLI_PROG);
		return CLI_EXIT_USAGE;
	}
	if (ilab_profile_open(what, prof, err, sizeof(err))) {
		/* without --profile the topology's name had to be a profile's too: say so */
		fprintf(stderr, "%s bench: %s%s\n", CLI_PROG, err,
			o->profile ? "" : " (--engine sim takes the profile named after --topology; "
					  "give --profile for another machine)");
		return CLI_EXIT_USAGE;
	}
	if (o->iommu && strcmp(prof->iommu_arch, o->iommu)) {
		fprintf(stderr, "%s bench: --iommu %s: profile %s has iommu: %s (%s has %s)\n",
			CLI_PROG, o->iommu, prof->name, prof->iommu_arch,
			iommu_machine(o->iommu), o->iommu);
		return CLI_EXIT_USAGE;
	}
	if (o->cmdqv == 1 && !prof->smmu_cmdqv_vcmdqs) {
		fprintf(stderr, "%s bench: --cmdqv on: profile %s's SMMU has no Tegra241 CMDQV "
			"(no smmu.cmdqv_vcmdqs; profiles/grace.yaml has one)\n", CLI_PROG, prof->name);
		return CLI_EXIT_USAGE;
	}
	if (o->cmdq_lock_set && strcmp(prof->iommu_arch, "smmuv3")) {
		fprintf(stderr, "%s bench: --cmdq-lock: profile %s has iommu: %s (the lock is the "
			"SMMUv3 driver's command queue's)\n", CLI_PROG, prof->name, prof->iommu_arch);
		return CLI_EXIT_USAGE;
	}
	if (!o->topology_set)
		o->topology = prof->topology;
	return 0;
}

/* The machine --engine and the options ask for, from the profile (simulation) or none
 * (native): topology, device, then the testbed with only that device's SMMU modelled. */
static int bench_up(struct bench_opts *o, const struct ilab_profile *prof,
		    struct ilab_testbed *tb, const struct ilab_device **td)
{
	struct ilab_testbed_opts to = {
		.native = o->engine != PLAT_ENGINE_SIM,
		.profile = o->engine == PLAT_ENGINE_SIM ? prof : NULL,
		.topology = o->topology,
		.iommu_arch = o->iommu, /* NULL: the profile's (sim), the topology's (native) */
		.seed = o->seed,
		.cma = o->cma,
		/* --ecmdq on|off: the same SMMUv3.3 with one ECMDQ per CPU; the driver gives each
		 * CPU its own queue, or uses only its main queue */
		.ecmdq_per_cpu = o->ecmdq >= 0,
		.drv.ecmdq = o->ecmdq > 0 ? ILAB_SMMU_ECMDQ_ON : ILAB_SMMU_ECMDQ_OFF,
		/* --cmdqv on|off: the machine's Tegra241 CMDQV used or not; not given: Linux's
		 * default, used when the machine has one */
		.drv.cmdqv = o->cmdqv < 0 ? ILAB_SMMU_CMDQV_AUTO
			     : o->cmdqv ? ILAB_SMMU_CMDQV_ON : ILAB_SMMU_CMDQV_OFF,
	};
	char err[512];
	int ret;

	ilab_kernel_era_drv_opts(&o->kernel, &to.drv);
	ilab_kernel_era_vtd_opts(&o->kernel, &to.vtd_drv);
	to.drv.cmdq_fair_lock = o->cmdq_fair_lock; /* --cmdq-lock, else the kernel's */

	if (ilab_testbed_load_topology(tb, &to, err, sizeof(err))) {
		fprintf(stderr, "%s bench: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	*td = pick_device(tb->topo, o);
	if (*td && o->device && o->unit >= 0 && (*td)->smmu != (unsigned)o->unit) {
		fprintf(stderr, "%s bench: device %s is behind IOMMU unit %u (%s), not --unit %d\n",
			CLI_PROG, (*td)->name, (*td)->smmu,
			ilab_topo_smmu(tb->topo, (*td)->smmu)->name, o->unit);
		return CLI_EXIT_USAGE;
	}
	if (!*td && !o->device && o->unit >= 0 && ilab_topo_nr_devices(tb->topo)) {
		fprintf(stderr, "%s bench: no device behind IOMMU unit %d in topology %s (it has %u "
			"IOMMU units)\n", CLI_PROG, o->unit, ilab_topo_name(tb->topo),
			ilab_topo_nr_smmus(tb->topo));
		return CLI_EXIT_USAGE;
	}
	if (!*td) { /* says how to get a device: lstopo's I/O export, or the names there are */
		fprintf(stderr, "%s bench: %s\n", CLI_PROG,
			ilab_topo_explain_no_device(tb->topo, o->device, err, sizeof(err)));
		return CLI_EXIT_USAGE;
	}
	to.smmu_mask = 1ull << (*td)->smmu; /* only the unit we use gets a model and an agent */
	ret = ilab_testbed_up(tb, &to, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s bench: %s\n", CLI_PROG, err);
		/* -ENODEV: no driver for the machine's IOMMU units (e.g. VT-d before its driver) */
		return ret == -EINVAL || ret == -ENODEV ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	if (ilab_map_bench_check(&o->cfg, err, sizeof(err))) { /* needs plat: the CPU count */
		fprintf(stderr, "%s bench: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* The run's host time, estimated before anything is built (the limit of run's
 * dma_map_benchmark cases, case_checks.c), and refused over it. A native run given a time
 * (-s, --duration-ms) takes that time; one given --iterations is estimated too. The estimate
 * goes to the progress line (the simulator's only). */
static int check_host_time(const struct bench_opts *o, double *estimate_s)
{
	const struct ilab_map_bench_cfg *c = &o->cfg;
	double sim_us = c->duration_ns ? c->duration_ns / 1e3 : c->seconds * 1e6;
	char work[128], msg[400];

	*estimate_s = 0;
	if (o->engine != PLAT_ENGINE_SIM && !c->iterations)
		return 0;
	if (o->engine != PLAT_ENGINE_SIM) {
		*estimate_s = (double)c->threads * c->iterations *
			      (ILAB_HOST_S_NATIVE_PAIR + c->granule * ILAB_HOST_S_NATIVE_PAGE);
		snprintf(work, sizeof(work), "%u thread%s x %llu iterations", c->threads,
			 c->threads == 1 ? "" : "s", (unsigned long long)c->iterations);
	} else if (c->iterations) {
		*estimate_s = (double)c->threads * c->iterations * ILAB_HOST_S_MAP_PAIR;
		snprintf(work, sizeof(work), "%u thread%s x %llu iterations", c->threads,
			 c->threads == 1 ? "" : "s", (unsigned long long)c->iterations);
	} else {
		*estimate_s = ilab_host_s_map_timed(c->threads, o->type == ILAB_DOMAIN_IDENTITY,
						    sim_us);
		snprintf(work, sizeof(work), "%u thread%s for %g simulated s", c->threads,
			 c->threads == 1 ? "" : "s", sim_us / 1e6);
	}
	if (ilab_host_time_check(*estimate_s, work, "run", c->iterations
				 ? "lower --iterations or -t"
				 : "shorten -s (or give --duration-ms) or lower -t", msg, sizeof(msg)))
		return cli_usage_error("bench", "%s", msg);
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o;
	struct ilab_testbed tb = { 0 };
	struct ilab_profile *prof = NULL;
	const struct ilab_device *td = NULL;
	struct ilab_dev *dev = NULL;
	struct ilab_swiotlb_stats sw;
	bool have_swiotlb;
	struct ilab_map_bench_result res;
	struct ilab_dma_options dopts;
	struct ilab_dma_stats st = { 0 };
	struct ilab_trace *trace = NULL;
	struct ilab_output_set files = ILAB_OUTPUT_SET_INIT;
	struct cli_progress progress;
	char err[512];
	double host_t0, estimate_s;
	int ret, rc = CLI_EXIT_FAIL;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret; /* -1: --help was printed */
	ret = check_host_time(&o, &estimate_s);
	if (ret)
		return ret;

	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	/* natively only --iommu without --topology needs a profile: its machine's topology */
	if (o.engine == PLAT_ENGINE_SIM || (o.iommu && !o.topology_set)) {
		prof = calloc(1, sizeof(*prof));
		if (!prof)
			return CLI_EXIT_FAIL;
		rc = load_profile(&o, prof);
		if (rc)
			goto out;
		/* the trace is written over neither the profile nor its topology file */
		ilab_output_set_input(&files, prof->source, "the profile");
		ilab_output_set_input(&files, prof->topology, "the topology file");
		rc = cli_trace_open("bench", &o.trace, &files, &trace);
		ilab_output_set_free(&files);
		if (rc)
			goto out;
		snprintf(err, sizeof(err), "bench (%s, seed %llu)", prof->name,
			 (unsigned long long)o.seed);
		ilab_trace_use(trace, err);
	}
	rc = bench_up(&o, prof, &tb, &td);
	if (rc)
		goto out;
	if (o.breakdown || o.json)
		ilab_sim_breakdown_enable(tb.sim); /* NULL natively */
	rc = CLI_EXIT_FAIL;
	dev = ilab_testbed_dev(&tb, td->name);
	if (!dev || !dev->iommu) {
		fprintf(stderr, "%s bench: device %s has no IOMMU on the board\n", CLI_PROG,
			td->name);
		dev = NULL;
		goto out;
	}
	dev->pci = td->kind != ILAB_DEV_OTHER;
	{
		const struct ilab_iommu_arch *arch = ilab_board_iommu_arch(tb.board, td->smmu);

		o.lazy_backport = o.type == ILAB_DOMAIN_DMA_FQ &&
			ilab_kernel_era_lazy_is_backport(&o.kernel,
							 arch && !strcmp(arch->name, "smmuv3"));
	}
	ret = ilab_iommu_probe_device(dev, o.type);
	if (ret) {
		fprintf(stderr, "%s bench: %s\n", CLI_PROG, ilab_iommu_strerror());
		dev = NULL;
		goto out;
	}
	/* The era's per-page path is the SMMUv3 driver's (map_pages came to it in 5.15); the VT-d
	 * driver here has only map_pages, which it keeps unless --map-pages off asks otherwise. */
	if (!o.map_pages_set && !o.map_pages && !ilab_dma_has_per_page_path(dev))
		o.map_pages = true;
	bench_dma_options(&o, &dopts);
	ret = ilab_dma_configure(dev, &dopts);
	if (ret) {
		fprintf(stderr, "%s bench: %s\n", CLI_PROG, ilab_iommu_strerror());
		goto out;
	}
	host_t0 = host_seconds();
	if (tb.sim)
		cli_progress_start(&progress, "bench", estimate_s,
				   o.cfg.iterations ? 0
				   : ilab_sim_now_ns(tb.sim) + (o.cfg.duration_ns ? o.cfg.duration_ns
							  : o.cfg.seconds * 1000000000ull));
	ret = ilab_map_bench_run(dev, ilab_board_mem(tb.board), &o.cfg, &res, err, sizeof(err));
	if (tb.sim)
		cli_progress_end(&progress);
	if (ret) {
		ilab_errf_cause(err, sizeof(err), ret, ilab_testbed_sim_error(&tb));
		fprintf(stderr, "%s bench: %s\n", CLI_PROG, err);
		rc = ret == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
		goto out;
	}
	ilab_sim_trace_end(tb.sim); /* the trace ends where the statistics are taken */
	ilab_dma_stats(dev, &st);
	have_swiotlb = ilab_dma_swiotlb_stats(dev, &sw) == 0;
	if (o.json) {
		print_json(&o, &dopts, td->name, td->smmu, ilab_topo_smmu(tb.topo, td->smmu)->name,
			   &res, &st, tb.board, tb.sim, prof,
			   have_swiotlb ? &sw : NULL);
	} else {
		print_text(&o, &dopts, td->name, ilab_topo_smmu(tb.topo, td->smmu)->name, &res,
			   &st);
		if (have_swiotlb)
			print_swiotlb(&sw);
		if (tb.sim) {
			double host = host_seconds() - host_t0;

			printf("simulated %.6f s (profile %s, seed %llu) in %.3f host s: %.4f "
			       "simulated s per host s, %.0f host ns per map+unmap\n",
			       res.elapsed_ns / 1e9, prof->name, (unsigned long long)o.seed, host,
			       host > 0 ? res.elapsed_ns / 1e9 / host : 0.0,
			       res.loops ? host * 1e9 / (double)res.loops : 0.0);
		}
		if (tb.sim && o.breakdown) {
			json_t *sj = ilab_sim_json(tb.sim);

			cli_print_breakdown(stdout, sj);
			json_decref(sj);
		}
	}
	rc = CLI_EXIT_OK;
out:
	if (dev)
		ilab_iommu_release_device(dev);
	ilab_testbed_down(&tb);
	if (trace && cli_trace_close("bench", &o.trace, trace) && rc == CLI_EXIT_OK)
		rc = CLI_EXIT_FAIL;
	free(prof);
	return rc;
}
