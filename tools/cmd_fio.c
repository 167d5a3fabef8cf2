/* cmd_fio.c — `iommulab fio`: fio's command lines and job files (tools/fio_job.c) run as the
 * block workload on the machine's NVMe in the simulator, in one IOMMU mode, and fio's outputs
 * (tools/fio_report.c) in simulated time. Not the model (src/workloads/nvme.c) nor the
 * machine's set-up (nvme_env.c): this parses, runs each job section and prints.
 */
#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/nvme.h>

#include "experiments/case_checks.h"
#include "experiments/host_time.h"
#include "fio_job.h"
#include "fio_report.h"
#include "util/atomic_file.h"
#include "util/output_set.h"
#include "workloads/nvme_env.h"

struct fio_cli {
	struct ilab_nvme_env env;
	char machine[300];  /* what ran, for the normal output */
	enum fio_format fmt;
	const char *output;
	uint64_t nr_queues; /* --nr-queues: the controller's I/O queues (0: one per CPU) */
	struct ilab_kernel_era kernel; /* --kernel: env.kernel points here (none: today's) */
	struct cli_trace_opt trace;  /* --trace FILE and its limits (docs/trace.md) */
	struct ilab_output_set files; /* the job files read, then the outputs: none over another */
};

#define USAGE(...) cli_usage_error("fio", __VA_ARGS__)

/* iommulab's own options (the machine) and fio's command-line-only ones: 0, CLI_EXIT_USAGE
 * after one line, or 1 when key is not one of them (a job option). */
static int parse_own(struct fio_cli *o, const char *key, const char *val)
{
	if (!strcmp(key, "iommu-mode") || !strcmp(key, "iommu_mode")) {
		if (val && !strcmp(val, "strict"))
			o->env.mode = ILAB_NVME_ENV_STRICT;
		else if (val && !strcmp(val, "lazy"))
			o->env.mode = ILAB_NVME_ENV_LAZY;
		else if (val && !strcmp(val, "passthrough"))
			o->env.mode = ILAB_NVME_ENV_PASSTHROUGH;
		else
			return USAGE("--iommu-mode must be strict, lazy or passthrough, not '%s'",
				     val ? val : "");
	} else if (!strcmp(key, "profile")) {
		if (!val || !*val)
			return USAGE("--profile needs a profile name or file");
		o->env.profile = val;
	} else if (!strcmp(key, "device")) {
		if (!val || !*val)
			return USAGE("--device needs a device name");
		o->env.device = val;
	} else if (!strcmp(key, "nr-queues")) {
		if (!val || cli_parse_count(val, 1, 65535, &o->nr_queues))
			return USAGE("--nr-queues must be a whole number from 1 to 65535 (the "
				     "controller's I/O queues), not '%s'", val ? val : "");
	} else if (!strcmp(key, "kernel")) {
		char msg[160];

		if (!val || ilab_kernel_era_parse(val, &o->kernel, msg, sizeof(msg)))
			return USAGE("--%s", val ? msg : "kernel needs a version (X.Y or latest)");
		o->env.kernel = &o->kernel;
	} else if (!strcmp(key, "seed")) {
		if (!val || cli_parse_count(val, 1, CLI_SEED_MAX, &o->env.seed))
			return USAGE("--seed must be a whole number from 1 to %llu, not '%s'",
				     (unsigned long long)CLI_SEED_MAX, val ? val : "");
	} else if (!strcmp(key, "output-format")) {
		if (val && !strcmp(val, "normal"))
			o->fmt = FIO_NORMAL;
		else if (val && !strcmp(val, "json"))
			o->fmt = FIO_JSON;
		else if (val && !strcmp(val, "json+"))
			o->fmt = FIO_JSON_PLUS;
		else if (val && !strcmp(val, "terse"))
			o->fmt = FIO_TERSE;
		else
			return USAGE("--output-format must be normal, json, json+ or terse, not '%s'",
				     val ? val : "");
	} else if (!strcmp(key, "minimal")) {
		if (val)
			return USAGE("--minimal takes no value");
		o->fmt = FIO_TERSE; /* fio: terse output */
	} else if (!strcmp(key, "terse-version")) {
		if (!val || strcmp(val, "3"))
			return USAGE("--terse-version: iommulab writes fio's terse version 3 only, "
				     "not '%s'", val ? val : "");
	} else if (!strcmp(key, "output")) {
		if (!val || !*val)
			return USAGE("--output needs a file name");
		o->output = val;
	} else if (!strcmp(key, "eta") || !strcmp(key, "eta-newline")) {
		/* fio's progress line: iommulab prints its own on stderr */
	} else {
		return cli_trace_own_opt("fio", key, val, &o->trace);
	}
	return 0;
}

/* argv: iommulab's options, fio's command-line options (--name starts a job), job files. */
static int parse(int argc, char **argv, struct fio_cli *o, struct fio_run *run)
{
	int ret;

	memset(o, 0, sizeof(*o));
	o->trace.max_bytes = ILAB_TRACE_MAX_BYTES;
	o->env.profile = "kunpeng920";
	o->env.seed = 1;
	o->env.mode = ILAB_NVME_ENV_STRICT;
	o->env.drive_from_profile = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char key[256];
		const char *eq, *val;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_print_command_help(cli_find_command("fio"), stdout);
			return -1;
		}
		if (strncmp(a, "--", 2) || !a[2]) {
			if (ilab_output_set_input(&o->files, a, "a job file"))
				return fprintf(stderr, "%s fio: out of memory\n", CLI_PROG),
				       CLI_EXIT_FAIL;
			ret = fio_run_read_file(run, a);
			if (ret)
				return ret;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		snprintf(key, sizeof(key), "%.*s", (int)(eq ? eq - a : (long)strlen(a)), a);
		val = eq ? eq + 1 : NULL;
		/* iommulab's own options also take "--opt value" */
		if (!eq && i + 1 < argc && (!strcmp(key, "iommu-mode") || !strcmp(key, "profile") ||
					    !strcmp(key, "device") || !strcmp(key, "seed") ||
					    !strcmp(key, "nr-queues") || !strcmp(key, "kernel") ||
					    !strcmp(key, "output") || !strcmp(key, "output-format") ||
					    !strcmp(key, "terse-version") ||
					    !strcmp(key, "trace") || !strcmp(key, "trace-limit-us") ||
					    !strcmp(key, "trace-limit-mb")))
			val = argv[++i];
		ret = parse_own(o, key, val);
		if (ret == CLI_EXIT_USAGE)
			return ret;
		if (!ret)
			continue; /* one of iommulab's or fio's command-line-only options */
		if (!strcmp(key, "name")) {
			if (!val || !*val)
				return USAGE("--name needs a job name");
			ret = fio_run_add_section(run, val, NULL);
		} else {
			ret = fio_run_add_opt(run, key, val, NULL);
		}
		if (ret)
			return ret;
	}
	return fio_run_resolve(run);
}

/* Before anything is built: the buffers fit the simulated memory, and the run its host
 * time (the limits of run's fio cases, case_checks.c). The estimate, for the progress line. */
static int check_limits(const struct fio_run *run, double *estimate_s, uint64_t *sim_ns)
{
	char msg[300], work[160];
	const char *hint = "shorten runtime or size, or lower numjobs or iodepth";

	*estimate_s = 0;
	*sim_ns = 0;
	for (unsigned i = 0; i < run->nsecs; i++) {
		const struct ilab_nvme_cfg *c = &run->jobs[i].cfg;

		if (ilab_fio_buffers_check(c->numjobs, c->iodepth, c->bs, msg, sizeof(msg)))
			return USAGE("job '%s': %s", run->secs[i].name, msg);
		if (c->number_ios)
			*estimate_s += (double)c->number_ios * c->numjobs * ILAB_HOST_S_FIO_IO;
		else
			*estimate_s += ilab_host_s_fio(c->numjobs, c->iodepth,
						       (c->runtime_ns + c->ramp_ns) / 1e3);
		*sim_ns += c->number_ios ? 0 : c->runtime_ns + c->ramp_ns;
	}
	if (run->nsecs == 1) {
		const struct ilab_nvme_cfg *c = &run->jobs[0].cfg;

		if (c->number_ios)
			snprintf(work, sizeof(work), "%u jobs x %llu I/Os", c->numjobs,
				 (unsigned long long)c->number_ios);
		else
			snprintf(work, sizeof(work), "%u jobs at iodepth %u for %.0f simulated ms",
				 c->numjobs, c->iodepth, (c->runtime_ns + c->ramp_ns) / 1e6);
		hint = c->number_ios ? "lower number_ios (or size), numjobs or iodepth"
				     : "shorten runtime or lower numjobs or iodepth";
	} else {
		snprintf(work, sizeof(work), "%u job sections", run->nsecs);
	}
	if (ilab_host_time_check(*estimate_s, work, "run", hint, msg, sizeof(msg)))
		return USAGE("%s", msg);
	return 0;
}

/* Run job section j; its reports (one per job, or one with group_reporting) go to reps. */
static const char *mode_name(enum ilab_nvme_env_mode m)
{
	return m == ILAB_NVME_ENV_LAZY ? "lazy" : m == ILAB_NVME_ENV_PASSTHROUGH ? "passthrough"
										 : "strict";
}

/* Run the sections first..last-1 at once on one machine (fio's jobs between stonewalls);
 * section i's per-job figures into jr[i]. */
static int run_batch(struct fio_cli *o, struct fio_run *run, unsigned first, unsigned last,
		     struct ilab_nvme_job_result **jr, char *err, size_t errlen)
{
	const struct ilab_nvme_cfg *also[FIO_MAX_JOBS];
	struct fio_job *m = &run->jobs[first];
	struct ilab_nvme_env_info info = { 0 };
	struct ilab_nvme_result res;
	int ret;

	for (unsigned i = first; i < last; i++) {
		run->jobs[i].cfg.seed = o->env.seed;
		run->jobs[i].cfg.job_results = jr[i];
		if (i > first)
			also[i - first - 1] = &run->jobs[i].cfg;
	}
	m->cfg.also = last - first > 1 ? also : NULL;
	m->cfg.nalso = last - first - 1;
	m->cfg.nr_queues = (unsigned)o->nr_queues; /* the controller's: the first section's */
	ret = ilab_nvme_env_run(&o->env, &m->cfg, &res, NULL, &info, err, errlen);
	snprintf(o->machine, sizeof(o->machine), "iommulab: simulated time, profile %s, device %s "
		 "(node %d, iommu unit %u), iommu=%s%s%s, seed %llu", info.profile, info.device,
		 info.node, info.iommu, mode_name(o->env.mode), o->env.kernel ? ", kernel " : "",
		 o->env.kernel ? o->env.kernel->name : "", (unsigned long long)o->env.seed);
	m->cfg.also = NULL;
	m->cfg.nalso = 0;
	for (unsigned i = first; i < last; i++)
		run->jobs[i].cfg.job_results = NULL;
	return ret;
}

static void merge_result(struct fio_report *to, const struct ilab_nvme_job_result *r)
{
	for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++) {
		struct ilab_nvme_dir_result *t = &to->r.dir[d];

		ilab_lat_hist_merge(&t->slat, &r->dir[d].slat);
		ilab_lat_hist_merge(&t->clat, &r->dir[d].clat);
		ilab_lat_hist_merge(&t->lat, &r->dir[d].lat);
		t->ios += r->dir[d].ios;
		t->errors += r->dir[d].errors;
		t->bytes += r->dir[d].bytes;
	}
	to->r.ios += r->ios;
	to->r.errors += r->errors;
	to->r.cpu_busy += r->cpu_busy;
	to->r.run_ns = r->run_ns > to->r.run_ns ? r->run_ns : to->r.run_ns;
	to->window_ns = r->window_ns > to->window_ns ? r->window_ns : to->window_ns;
	for (unsigned k = 0; k < ILAB_NVME_DEPTH_BUCKETS; k++) {
		to->r.depth[k] += r->depth[k];
		to->r.submit_batch[k] += r->submit_batch[k];
		to->r.complete_batch[k] += r->complete_batch[k];
	}
	to->error = to->r.errors ? EIO : 0;
	to->jobs++;
}

/* The reports, as fio's: one per job, or, for a job with group_reporting, merged into the
 * report before it when that is of the same group (across sections, as fio). */
static unsigned build_reports(const struct fio_run *run, struct ilab_nvme_job_result **jr,
			      struct fio_report *reps)
{
	unsigned n = 0;

	for (unsigned i = 0; i < run->nsecs; i++) {
		const struct fio_job *j = &run->jobs[i];

		for (unsigned k = 0; k < j->cfg.numjobs; k++) {
			if (n && j->group_reporting && reps[n - 1].groupid == j->groupid) {
				merge_result(&reps[n - 1], &jr[i][k]);
				for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++)
					reps[n - 1].does[d] |= ilab_fio_rw_does(j->cfg.rw, d);
				continue;
			}
			reps[n] = (struct fio_report){ .job = j, .jobs = 1, .r = jr[i][k],
						       .window_ns = jr[i][k].window_ns,
						       .groupid = j->groupid,
						       .error = jr[i][k].errors ? EIO : 0,
						       .does = { ilab_fio_rw_does(j->cfg.rw, 0),
								 ilab_fio_rw_does(j->cfg.rw, 1),
								 ilab_fio_rw_does(j->cfg.rw, 2) } };
			n++;
		}
	}
	for (unsigned i = 0; i < n; i++)
		reps[i].r.cpu_busy /= reps[i].jobs;
	return n;
}

static int write_out(const struct fio_cli *o, const struct fio_run *run,
		     const struct fio_report *reps, unsigned nreps)
{
	struct ilab_afile af;
	char err[600];
	int ret;

	if (!o->output) {
		ret = fio_report_write(stdout, o->fmt, run, reps, nreps, o->machine);
		return ret ? (fprintf(stderr, "%s fio: out of memory\n", CLI_PROG), CLI_EXIT_FAIL)
			   : CLI_EXIT_OK;
	}
	ret = ilab_afile_open(&af, o->output, err, sizeof(err));
	if (!ret) {
		if (fio_report_write(af.f, o->fmt, run, reps, nreps, o->machine)) {
			ilab_afile_abort(&af);
			snprintf(err, sizeof(err), "out of memory");
			ret = -ENOMEM;
		} else {
			ret = ilab_afile_commit(&af, err, sizeof(err));
		}
	}
	if (ret) {
		fprintf(stderr, "%s fio: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* --trace: never over a job file or the --output file (the output rule's checks). */
static int open_trace(struct fio_cli *o, struct ilab_trace **t)
{
	char err[600];

	ilab_output_set_input(&o->files, o->env.profile, "the profile");
	if (o->output && o->trace.path &&
	    ilab_output_set_output(&o->files, o->output, "--output", err, sizeof(err)))
		return USAGE("%s", err);
	return cli_trace_open("fio", &o->trace, &o->files, t);
}

int cmd_fio(int argc, char **argv)
{
	struct fio_cli o;
	struct fio_run *run = calloc(1, sizeof(*run));
	struct fio_report *reps = NULL;
	struct ilab_nvme_job_result *jr[FIO_MAX_JOBS] = { NULL };
	struct ilab_trace *trace = NULL;
	struct cli_progress progress;
	char label[300];
	char err[600] = "", ioerr[900] = "";
	double estimate_s = 0;
	uint64_t sim_ns;
	unsigned nreps = 0, total = 0;
	int ret;

	if (!run)
		return fprintf(stderr, "%s fio: out of memory\n", CLI_PROG), CLI_EXIT_FAIL;
	ret = parse(argc, argv, &o, run);
	if (!ret)
		ret = check_limits(run, &estimate_s, &sim_ns);
	if (!ret && o.output && ilab_afile_check(o.output, err, sizeof(err)))
		ret = USAGE("--output: %s", err);
	for (unsigned i = 0; !ret && i < run->nsecs; i++)
		total += run->jobs[i].cfg.numjobs;
	if (!ret && !(reps = calloc(total, sizeof(*reps))))
		ret = (fprintf(stderr, "%s fio: out of memory\n", CLI_PROG), CLI_EXIT_FAIL);
	for (unsigned i = 0; !ret && i < run->nsecs; i++)
		if (!(jr[i] = calloc(run->jobs[i].cfg.numjobs, sizeof(*jr[i]))))
			ret = (fprintf(stderr, "%s fio: out of memory\n", CLI_PROG), CLI_EXIT_FAIL);
	if (!ret)
		ret = open_trace(&o, &trace);
	if (ret) {
		free(reps);
		for (unsigned i = 0; i < FIO_MAX_JOBS; i++)
			free(jr[i]);
		ilab_output_set_free(&o.files);
		fio_run_free(run);
		free(run);
		return ret < 0 ? CLI_EXIT_OK : ret; /* -1: --help was printed */
	}
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	cli_progress_start(&progress, "fio", estimate_s, sim_ns);
	for (unsigned i = 0, last; !ret && i < run->nsecs; i = last) {
		for (last = i + 1; last < run->nsecs && run->jobs[last].batch == run->jobs[i].batch;)
			last++;
		if (trace) {
			snprintf(label, sizeof(label), "fio %s%s (%s, iommu=%s, seed %llu)",
				 run->secs[i].name, last - i > 1 ? " and the jobs with it" : "",
				 o.env.profile, mode_name(o.env.mode),
				 (unsigned long long)o.env.seed);
			ilab_trace_use(trace, label);
		}
		ret = run_batch(&o, run, i, last, jr, err, sizeof(err));
		if (ret == -EIO) { /* I/O errors: reported as fio's err=, said once more */
			snprintf(ioerr, sizeof(ioerr), "job '%s': %s", run->secs[i].name, err);
			ret = 0;
		}
	}
	if (!ret)
		nreps = build_reports(run, jr, reps);
	cli_progress_end(&progress);
	if (trace && cli_trace_close("fio", &o.trace, trace) && !ret)
		ret = -EIO, snprintf(err, sizeof(err), "the trace was not written");
	if (ret) {
		fprintf(stderr, "%s fio: %s\n", CLI_PROG, err);
		ret = ret == -EINVAL || ret == -ENOENT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	} else {
		ret = write_out(&o, run, reps, nreps);
		if (!ret && *ioerr) {
			fprintf(stderr, "%s fio: %s\n", CLI_PROG, ioerr);
			ret = CLI_EXIT_FAIL;
		}
	}
	free(reps);
	for (unsigned i = 0; i < FIO_MAX_JOBS; i++)
		free(jr[i]);
	ilab_output_set_free(&o.files);
	fio_run_free(run);
	free(run);
	return ret;
}
