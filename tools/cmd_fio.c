/* cmd_fio.c — `iommulab fio`: fio's block workload on the machine's NVMe in the simulator, in
 * one IOMMU mode, with fio's option names (--numjobs=8 --iodepth=32 --bs=4k --rw=randread)
 * and fio's figures (IOPS, bandwidth, completion-latency percentiles) in simulated time.
 * Not the model (src/workloads/nvme.c) nor the machine's set-up (nvme_env.c): this parses
 * options and prints.
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

#include <iommulab/nvme.h>

#include "experiments/case_checks.h"
#include "experiments/host_time.h"
#include "workloads/nvme_env.h"

struct fio_opts {
	struct ilab_nvme_cfg cfg;
	struct ilab_nvme_env env;
	const char *name;
	bool json;
	bool runtime_set;
};

/* fio's sizes: a number with an optional k/m/g (powers of 1024, either case), "B" allowed. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 'k': mul = 1ull << 10; end++; break;
	case 'm': mul = 1ull << 20; end++; break;
	case 'g': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (tolower((unsigned char)*end) == 'i' && mul > 1)
		end++;
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* fio's times: seconds by default, or with us, ms, s or m. In ns of simulated time. */
static int parse_time(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long long v;
	uint64_t mul;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (!*end || !strcmp(end, "s"))
		mul = 1000000000ull;
	else if (!strcmp(end, "ms"))
		mul = 1000000ull;
	else if (!strcmp(end, "us"))
		mul = 1000ull;
	else if (!strcmp(end, "m"))
		mul = 60000000000ull;
	else
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*ns = v * mul;
	return 0;
}

#define USAGE(...) cli_usage_error("fio", __VA_ARGS__)

enum { O_NAME = 256, O_NUMJOBS, O_IODEPTH, O_BS, O_RW, O_RUNTIME, O_RAMP, O_NUMBER_IOS,
       O_MODE, O_PROFILE, O_DEVICE, O_SEED, O_IOENGINE, O_DIRECT, O_GROUP, O_JSON, O_HELP };

static int parse_opt(int opt, struct fio_opts *o)
{
	uint64_t v;

	switch (opt) {
	case O_NAME: o->name = optarg; break;
	case O_NUMJOBS:
		if (cli_parse_count(optarg, 1, ILAB_NVME_MAX_JOBS, &v))
			return USAGE("--numjobs must be a number in 1..%u, not '%s'",
				     ILAB_NVME_MAX_JOBS, optarg);
		o->cfg.numjobs = (unsigned)v;
		break;
	case O_IODEPTH:
		if (cli_parse_count(optarg, 1, ILAB_NVME_DEFAULT_QUEUE - 1, &v))
			return USAGE("--iodepth must be a number in 1..%u (a queue of %u entries), "
				     "not '%s'", ILAB_NVME_DEFAULT_QUEUE - 1,
				     ILAB_NVME_DEFAULT_QUEUE, optarg);
		o->cfg.iodepth = (unsigned)v;
		break;
	case O_BS:
		if (parse_size(optarg, &v) || v < 512 || v % 512 || v > ILAB_NVME_MAX_BS)
			return USAGE("--bs must be a size, a multiple of 512 up to 2m (4k, 128k), "
				     "not '%s'", optarg);
		o->cfg.bs = (unsigned)v;
		break;
	case O_RW:
		if (ilab_fio_rw_parse(optarg, &o->cfg.rw))
			return USAGE("--rw must be randread, randwrite, read or write, not '%s'",
				      optarg);
		break;
	case O_RUNTIME:
		if (parse_time(optarg, &o->cfg.runtime_ns) || !o->cfg.runtime_ns ||
		    o->cfg.runtime_ns > 10000000000ull)
			return USAGE("--runtime must be a time up to 10 s (20ms, 500us, 1s), not '%s'",
				     optarg);
		o->runtime_set = true;
		break;
	case O_RAMP:
		if (parse_time(optarg, &o->cfg.ramp_ns) || o->cfg.ramp_ns > 10000000000ull)
			return USAGE("--ramp_time must be a time up to 10 s (1ms), not '%s'", optarg);
		break;
	case O_NUMBER_IOS:
		if (cli_parse_count(optarg, 1, 100000000, &o->cfg.number_ios))
			return USAGE("--number_ios must be a number in 1..100000000, not '%s'", optarg);
		break;
	case O_MODE:
		if (!strcmp(optarg, "strict"))
			o->env.mode = ILAB_NVME_ENV_STRICT;
		else if (!strcmp(optarg, "lazy"))
			o->env.mode = ILAB_NVME_ENV_LAZY;
		else if (!strcmp(optarg, "passthrough"))
			o->env.mode = ILAB_NVME_ENV_PASSTHROUGH;
		else
			return USAGE("--iommu-mode must be strict, lazy or passthrough, not '%s'",
				     optarg);
		break;
	case O_PROFILE: o->env.profile = optarg; break;
	case O_DEVICE:
		if (!*optarg)
			return USAGE("--device needs a device name");
		o->env.device = optarg;
		break;
	case O_SEED:
		if (cli_parse_count(optarg, 1, CLI_SEED_MAX, &o->env.seed))
			return USAGE("--seed must be a whole number from 1 to %llu, not '%s'",
				     (unsigned long long)CLI_SEED_MAX, optarg);
		break;
	case O_IOENGINE:
		if (strcmp(optarg, "sim"))
			return USAGE("--ioengine: only 'sim' (the simulated drive), not '%s'", optarg);
		break;
	case O_DIRECT:
		if (strcmp(optarg, "1"))
			return USAGE("--direct: only 1 (the model has no page cache), not '%s'", optarg);
		break;
	case O_GROUP: break; /* the jobs are always reported as one group */
	case O_JSON: o->json = true; break;
	default: return -2;
	}
	return 0;
}

static int parse(int argc, char **argv, struct fio_opts *o)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, O_NAME },
		{ "numjobs", required_argument, NULL, O_NUMJOBS },
		{ "iodepth", required_argument, NULL, O_IODEPTH },
		{ "bs", required_argument, NULL, O_BS },
		{ "blocksize", required_argument, NULL, O_BS },
		{ "rw", required_argument, NULL, O_RW },
		{ "readwrite", required_argument, NULL, O_RW },
		{ "runtime", required_argument, NULL, O_RUNTIME },
		{ "ramp_time", required_argument, NULL, O_RAMP },
		{ "number_ios", required_argument, NULL, O_NUMBER_IOS },
		{ "iommu-mode", required_argument, NULL, O_MODE },
		{ "iommu_mode", required_argument, NULL, O_MODE },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "device", required_argument, NULL, O_DEVICE },
		{ "seed", required_argument, NULL, O_SEED },
		{ "ioengine", required_argument, NULL, O_IOENGINE },
		{ "direct", required_argument, NULL, O_DIRECT },
		{ "group_reporting", no_argument, NULL, O_GROUP },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int opt, ret;

	memset(o, 0, sizeof(*o));
	o->name = "fio";
	o->cfg.numjobs = 1;  /* fio's defaults */
	o->cfg.iodepth = 1;
	o->cfg.bs = 4096;
	o->cfg.rw = ILAB_FIO_READ;
	o->env.profile = "kunpeng920";
	o->env.seed = 1;
	o->env.mode = ILAB_NVME_ENV_STRICT;
	o->env.drive_from_profile = true;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (opt == 'h' || opt == O_HELP) {
			cli_print_command_help(cli_find_command("fio"), stdout);
			return -1;
		}
		ret = parse_opt(opt, o);
		if (ret == -2)
			return cli_bad_option("fio", opt, argc, argv);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return USAGE("unexpected argument '%s' (fio's options are --name=value; job files "
			     "are not read)", argv[optind]);
	if (o->runtime_set && o->cfg.number_ios)
		return USAGE("give --runtime or --number_ios, not both");
	if (!o->runtime_set && !o->cfg.number_ios)
		o->cfg.runtime_ns = 20000000ull; /* 20 ms of simulated time */
	if (o->cfg.number_ios && o->cfg.ramp_ns)
		return USAGE("--ramp_time needs --runtime (with --number_ios every I/O counts)");
	o->cfg.seed = o->env.seed;
	return 0;
}

static const char *mode_name(enum ilab_nvme_env_mode m)
{
	return m == ILAB_NVME_ENV_LAZY ? "lazy" : m == ILAB_NVME_ENV_PASSTHROUGH ? "passthrough"
										 : "strict";
}

/* fio's short numbers, three figures: 839k, 10.4k, 1234, 3.44M. */
static void num(char *buf, size_t len, double v)
{
	if (v >= 1e7)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e5)
		snprintf(buf, len, "%.0fk", v / 1e3);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

static void print_text(const struct fio_opts *o, const struct ilab_nvme_env_info *in,
		       const struct ilab_nvme_result *r)
{
	const struct ilab_nvme_cfg *c = &o->cfg;
	bool w = ilab_fio_rw_is_write(c->rw);
	char iops[32];

	num(iops, sizeof(iops), r->iops);
	printf("%s: (g=0): rw=%s, bs=(%c) %uB-%uB, ioengine=sim, iodepth=%u\n", o->name,
	       ilab_fio_rw_name(c->rw), w ? 'W' : 'R', c->bs, c->bs, c->iodepth);
	printf("%s: (groupid=0, jobs=%u): err=%2llu: iommu=%s, device %s (node %d, iommu unit %u), "
	       "profile %s, seed %llu\n", o->name, c->numjobs, (unsigned long long)r->errors,
	       mode_name(o->env.mode), in->device, in->node, in->iommu, in->profile,
	       (unsigned long long)o->env.seed);
	printf("  %s: IOPS=%s, BW=%.0fMiB/s (%.0fMB/s)(%.1fMiB/%lluusec)\n", w ? "write" : "read",
	       iops, r->bw_mbps * 1e6 / (1 << 20), r->bw_mbps,
	       (double)r->ios * c->bs / (1 << 20), (unsigned long long)(r->window_ns / 1000));
	printf("    clat (usec): min=%.1f, max=%.1f, avg=%.2f, stdev=%.2f\n",
	       r->clat_min_ns / 1e3, r->clat_max_ns / 1e3, r->clat_mean_ns / 1e3,
	       r->clat_stdev_ns / 1e3);
	printf("    clat percentiles (usec):\n");
	printf("     | 50.00th=[%.1f], 99.00th=[%.1f], 99.90th=[%.1f]\n", r->clat_p50_ns / 1e3,
	       r->clat_p99_ns / 1e3, r->clat_p999_ns / 1e3);
	printf("  cpu          : busy=%.1f%% (mean of the jobs' CPUs)\n", r->cpu_busy * 100);
	printf("  drive: %llu commands, %llu with a PRP list, %llu DMAs faulted; CPUs: %llu "
	       "interrupts, %llu map errors; simulated time\n", (unsigned long long)r->commands,
	       (unsigned long long)r->prp_lists, (unsigned long long)r->dma_faults,
	       (unsigned long long)r->interrupts, (unsigned long long)r->map_errors);
}

static void print_json(const struct fio_opts *o, const struct ilab_nvme_env_info *in,
		       const struct ilab_nvme_result *r, const char *stats)
{
	const struct ilab_nvme_cfg *c = &o->cfg;
	json_t *root = json_pack(
		"{s:{s:s,s:I,s:I,s:I,s:s,s:I,s:I,s:I,s:s,s:s,s:s,s:I},"
		"s:{s:I,s:I,s:I,s:f,s:f,s:I,s:I,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}}",
		"job", "name", o->name, "numjobs", (json_int_t)c->numjobs, "iodepth",
		(json_int_t)c->iodepth, "bs", (json_int_t)c->bs, "rw", ilab_fio_rw_name(c->rw),
		"runtime_ns", (json_int_t)c->runtime_ns, "ramp_ns", (json_int_t)c->ramp_ns,
		"number_ios", (json_int_t)c->number_ios, "iommu_mode", mode_name(o->env.mode),
		"profile", in->profile, "device", in->device, "seed", (json_int_t)o->env.seed,
		"result", "ios", (json_int_t)r->ios, "errors", (json_int_t)r->errors, "window_ns",
		(json_int_t)r->window_ns, "iops", r->iops, "bw_mbps", r->bw_mbps, "clat_min_ns",
		(json_int_t)r->clat_min_ns, "clat_max_ns", (json_int_t)r->clat_max_ns,
		"clat_mean_ns", r->clat_mean_ns, "clat_stdev_ns", r->clat_stdev_ns,
		"clat_p50_ns", (json_int_t)r->clat_p50_ns, "clat_p99_ns", (json_int_t)r->clat_p99_ns,
		"clat_p999_ns", (json_int_t)r->clat_p999_ns, "dma_faults",
		(json_int_t)r->dma_faults, "interrupts", (json_int_t)r->interrupts, "commands",
		(json_int_t)r->commands, "prp_lists", (json_int_t)r->prp_lists, "cpu_busy",
		r->cpu_busy);

	cli_print_result_json(root, stats);
}

/* Before anything is built: the jobs' buffers fit the simulated memory, and the run its host
 * time (the limits of run's fio cases, case_checks.c). The estimate, for the progress line. */
static int check_limits(const struct fio_opts *o, double *estimate_s)
{
	const struct ilab_nvme_cfg *c = &o->cfg;
	char msg[300], work[128];

	if (ilab_fio_buffers_check(c->numjobs, c->iodepth, c->bs, msg, sizeof(msg)))
		return USAGE("%s", msg);
	if (c->number_ios) {
		*estimate_s = (double)c->number_ios * c->numjobs * ILAB_HOST_S_FIO_IO;
		snprintf(work, sizeof(work), "%u jobs x %llu I/Os", c->numjobs,
			 (unsigned long long)c->number_ios);
	} else {
		*estimate_s = ilab_host_s_fio(c->numjobs, c->iodepth,
					      (c->runtime_ns + c->ramp_ns) / 1e3);
		snprintf(work, sizeof(work), "%u jobs at iodepth %u for %.0f simulated ms",
			 c->numjobs, c->iodepth, (c->runtime_ns + c->ramp_ns) / 1e6);
	}
	if (ilab_host_time_check(*estimate_s, work, "run", c->number_ios
				 ? "lower --number_ios, --numjobs or --iodepth"
				 : "shorten --runtime or lower --numjobs or --iodepth", msg,
				 sizeof(msg)))
		return USAGE("%s", msg);
	return 0;
}

int cmd_fio(int argc, char **argv)
{
	struct fio_opts o;
	struct ilab_nvme_result res;
	struct ilab_nvme_env_info info = { 0 };
	struct cli_progress progress;
	char err[600] = "", *stats = NULL;
	double estimate_s = 0;
	int ret = parse(argc, argv, &o);

	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret; /* -1: --help was printed */
	ret = check_limits(&o, &estimate_s);
	if (ret)
		return ret;
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	cli_progress_start(&progress, "fio", estimate_s,
			   o.cfg.number_ios ? 0 : o.cfg.runtime_ns + o.cfg.ramp_ns);
	ret = ilab_nvme_env_run(&o.env, &o.cfg, &res, o.json ? &stats : NULL, &info, err,
				sizeof(err));
	cli_progress_end(&progress);
	if (ret && ret != -EIO) {
		fprintf(stderr, "%s fio: %s\n", CLI_PROG, err);
		return ret == -EINVAL || ret == -ENOENT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	if (o.json)
		print_json(&o, &info, &res, stats);
	else
		print_text(&o, &info, &res);
	free(stats);
	if (ret) { /* -EIO: I/O errors, printed like fio's err= and said once more */
		fprintf(stderr, "%s fio: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}
