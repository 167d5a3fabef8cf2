/* cmd_sweep.c — `iommulab sweep FILE.yaml`: load and check a sweep (src/experiments/sweep*),
 * run its cases (or one shard's) in forked worker processes, -j at a time, with a progress bar
 * and an ETA on a terminal (a line per case otherwise), and write the result file (and, for a
 * whole sweep, its plots). Each case runs in its own child: a fresh process whose result
 * depends on nothing run before it, and whose crash fails one case, not the sweep.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "experiments/sweep.h"
#include "iommulab/sim.h"
#include "report/results_page.h"
#include "report/sweep_result.h"
#include "util/output_set.h"

#define ERRLEN 2048
#define JOBS_MAX 1024

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: %s sweep FILE.yaml [-j N] [--shard I/N] [-o OUT.json] [--no-plot] [--check]\n"
		"run every case of a sweep's grid (docs/sweep.md) and write one result file\n"
		"  -j, --jobs N      cases run at once, each in its own process (default: the\n"
		"                    host's CPUs)\n"
		"  --shard I/N       run only the cases k with k mod N = I (0 <= I < N) and write a\n"
		"                    shard file for `%s merge`\n"
		"  -o, --out FILE    the result file (default results/sweep-<name>.json, or\n"
		"                    results/sweep-<name>.shard-I-of-N.json); plots go next to it,\n"
		"                    and index.html, the page of every result in its folder\n"
		"  --no-plot         no plots and no page\n"
		"  --check           check the sweep file, print its number of cases and its\n"
		"                    hash, run nothing\n"
		"  -h, --help        show this help\n"
		"A bad sweep file: file:line:column: message, exit 2, before anything runs. A case\n"
		"that fails is recorded as failed and the exit status is 1.\n",
		CLI_PROG, CLI_PROG);
}

static int parse_shard(const char *arg, unsigned *i, unsigned *n)
{
	char *end;
	unsigned long a, b;

	errno = 0;
	if (*arg < '0' || *arg > '9')
		return -1;
	a = strtoul(arg, &end, 10);
	if (errno || *end != '/' || end[1] < '1' || end[1] > '9')
		return -1;
	b = strtoul(end + 1, &end, 10);
	if (errno || *end || b > ILAB_SWEEP_MAX_CASES || a >= b)
		return -1;
	*i = (unsigned)a;
	*n = (unsigned)b;
	return 0;
}

struct progress {
	const struct ilab_sweep *sw;
	bool tty;
	unsigned done, total;
	double t0;
};

static void show(struct progress *p, const struct ilab_sweep *sw, unsigned k,
		 const struct ilab_case_result *r)
{
	double el = now() - p->t0, eta = el / p->done * (p->total - p->done);

	if (p->tty) {
		char bar[31];
		unsigned fill = p->done * 30 / p->total;

		memset(bar, '#', fill);
		memset(bar + fill, '.', 30 - fill);
		bar[30] = '\0';
		fprintf(stderr, "\r%s sweep: [%s] %u/%u cases, %.0f s, ETA %.0f s   ", CLI_PROG,
			bar, p->done, p->total, el, eta);
		if (r->status == ILAB_CASE_FAILED)
			fprintf(stderr, "\n%s sweep: case %u FAILED: %s\n", CLI_PROG, k, r->message);
		if (p->done == p->total)
			fputc('\n', stderr);
	} else {
		fprintf(stderr, "[%s %u/%u] case %u:", sw->name, p->done, p->total, k);
		for (unsigned a = 0; a < sw->nr_axes; a++)
			fprintf(stderr, " %s=%s", sw->axes[a].path,
				sw->axes[a].values[ilab_sweep_value_index(sw, k, a)].text);
		if (r->status == ILAB_CASE_OK)
			fprintf(stderr, ": done (%.2f s; ETA %.0f s)\n", r->host_seconds, eta);
		else
			fprintf(stderr, ": FAILED: %s\n", r->message);
	}
	fflush(stderr);
}

static void run_one(void *ctx, unsigned k, struct ilab_case_result *r)
{
	ilab_sweep_run_case(((struct progress *)ctx)->sw, k, r);
}

static void one_done(void *ctx, unsigned k, const struct ilab_case_result *r)
{
	struct progress *p = ctx;

	p->done++;
	show(p, p->sw, k, r);
}

/* Run the cases k = shard, shard + count ... into res[k] on the sweep engine's workers
 * (src/experiments/sweep_pool.c); returns 0 or a negative errno, -EINTR when a signal
 * stopped the sweep (ilab_pool_stop_signal() says which; its workers are gone). */
static int run_cases(const struct ilab_sweep *sw, unsigned shard, unsigned count,
		     unsigned jobs, struct ilab_case_result *res)
{
	struct progress p = { .sw = sw, .tty = isatty(2), .t0 = now() };

	for (unsigned k = shard; k < sw->nr_cases; k += count)
		p.total++;
	return ilab_pool_run(sw->nr_cases, shard, count, jobs, run_one, one_done, &p, res);
}

/* OUT.json -> OUT: the plots' base name */
static void plot_base(const char *out, char *base, size_t len)
{
	size_t n = strlen(out);

	snprintf(base, len, "%.*s", (int)(n > 5 && !strcmp(out + n - 5, ".json") ? n - 5 : n),
		 out);
}

/* OUT.json's folder: its plots and the results page (index.html) go there */
static void out_dir(const char *out, char *dir, size_t len)
{
	const char *slash = strrchr(out, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else
		snprintf(dir, len, "%.*s", (int)(slash == out ? 1 : slash - out), out);
}

int cli_sweep_plot_outputs(const char *cmd, struct ilab_output_set *files, const json_t *doc,
			   const char *out)
{
	char base[ILAB_SCN_PATH_MAX], path[ILAB_SCN_PATH_MAX + 200], err[ERRLEN];

	out_dir(out, base, sizeof(base));
	ilab_results_page_path(base, path, sizeof(path));
	if (ilab_output_set_output(files, path, "the results page", err, sizeof(err))) {
		fprintf(stderr, "%s %s: %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_USAGE;
	}

	plot_base(out, base, sizeof(base));
	for (unsigned i = 0; ilab_sweep_plot_file(doc, base, i, path, sizeof(path)); i++)
		if (ilab_output_set_output(files, path, (const char *[]){ "the plot script", "the plot",
							   "the plot's SVG" }[i % 3],
					   err, sizeof(err))) {
			fprintf(stderr, "%s %s: %s\n", CLI_PROG, cmd, err);
			return CLI_EXIT_USAGE;
		}
	return CLI_EXIT_OK;
}

/* The result file (and its plots) can be written there and are none of the sweep's inputs:
 * found before the cases run, not after. Prints why not; returns a CLI exit code. */
static int check_out(const struct ilab_sweep *sw, const char *file, const char *out,
		     bool given, bool plot)
{
	struct ilab_output_set files = ILAB_OUTPUT_SET_INIT;
	char err[ERRLEN], path[ILAB_SCN_PATH_MAX];
	json_t *header;
	int ret = CLI_EXIT_OK;

	if (!given)
		mkdir("results", 0777);
	ilab_output_set_input(&files, file, "the sweep file");
	ilab_output_set_input(&files, sw->scn->path, "its base scenario");
	if (!ilab_profile_resolve(sw->scn->profile, path, sizeof(path), err, sizeof(err)))
		ilab_output_set_input(&files, path, "its profile");
	if (ilab_output_set_output(&files, out, given ? "-o" : "the result file", err,
				   sizeof(err))) {
		ret = CLI_EXIT_USAGE;
		fprintf(stderr, "%s sweep: %s%s\n", CLI_PROG, given && strncmp(err, "-o ", 3) ?
			"-o " : "", err);
	}
	if (ret == CLI_EXIT_OK && plot) {
		header = ilab_sweep_header_json(sw);
		ret = cli_sweep_plot_outputs("sweep", &files, header, out);
		json_decref(header);
	}
	ilab_output_set_free(&files);
	return ret;
}

/* Save doc to out and, when plot, draw it. Returns a CLI exit code. */
int cli_sweep_save(const char *cmd, const json_t *doc, const char *out, bool plot)
{
	char err[ERRLEN], base[ILAB_SCN_PATH_MAX];
	int pr;

	if (ilab_sweep_doc_save(doc, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s %s: %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_FAIL;
	}
	if (!plot) {
		fprintf(stderr, "%s %s: wrote %s\n", CLI_PROG, cmd, out);
		return CLI_EXIT_OK;
	}
	plot_base(out, base, sizeof(base));
	pr = ilab_sweep_plot(doc, base, err, sizeof(err));
	if (pr < 0) {
		fprintf(stderr, "%s %s: wrote %s; plot: %s\n", CLI_PROG, cmd, out, err);
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s %s: wrote %s%s%s\n", CLI_PROG, cmd, out, pr == 0 ? " and " : "; ",
		err);
	out_dir(out, base, sizeof(base)); /* the page of every result there, this one's among them */
	if (ilab_results_page(base, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s %s: results page: %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s %s: wrote %s\n", CLI_PROG, cmd, err);
	return CLI_EXIT_OK;
}

static int sweep_write(const struct ilab_sweep *sw, const struct ilab_case_result *res,
		       unsigned shard, unsigned count, const char *out, bool plot)
{
	json_t *cases = json_array(), *header = ilab_sweep_header_json(sw), *doc;
	int ret;

	for (unsigned k = shard; k < sw->nr_cases; k += count ? count : 1)
		json_array_append_new(cases, ilab_sweep_case_json(sw, k, &res[k]));
	doc = ilab_sweep_doc(header, cases, shard, count);
	ret = cli_sweep_save("sweep", doc, out, plot && !count);
	json_decref(doc);
	json_decref(header);
	return ret;
}

int cmd_sweep(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "shard", required_argument, NULL, 'S' },
		{ "out", required_argument, NULL, 'o' },
		{ "no-plot", no_argument, NULL, 'N' },
		{ "check", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned jobs = cpus > 0 ? (unsigned)cpus : 1, shard = 0, count = 0;
	const char *out = NULL;
	char err[ERRLEN], defout[ILAB_SCN_PATH_MAX + 64];
	struct ilab_case_result *res;
	struct ilab_sweep *sw;
	bool plot = true, check = false;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":j:o:h", opts, NULL)) != -1) {
		char *end;
		unsigned long j;

		switch (opt) {
		case 'j':
			errno = 0;
			j = strtoul(optarg, &end, 10);
			if (*optarg < '1' || *optarg > '9' || errno || *end || j > JOBS_MAX)
				return cli_usage_error("sweep", "-j must be a whole number from 1 to "
						       "%d, not '%s'", JOBS_MAX, optarg);
			jobs = (unsigned)j;
			break;
		case 'S':
			if (parse_shard(optarg, &shard, &count))
				return cli_usage_error("sweep", "--shard must be I/N with 0 <= I < N "
						       "<= %d, not '%s'", ILAB_SWEEP_MAX_CASES,
						       optarg);
			break;
		case 'o': out = optarg; break;
		case 'N': plot = false; break;
		case 'C': check = true; break;
		case 'h':
			print_help(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option("sweep", opt, argc, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("sweep", optind == argc ? "no sweep file given"
							       : "one sweep file at a time");
	if (out && !*out)
		return cli_usage_error("sweep", "-o needs a file name");
	if (ilab_sweep_load(argv[optind], &sw, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s sweep: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	if (check) {
		printf("%s: %u cases, %s\n", sw->name, sw->nr_cases, sw->hash);
		ilab_sweep_free(sw);
		return CLI_EXIT_OK;
	}
	if (!out) {
		if (count)
			snprintf(defout, sizeof(defout), "results/sweep-%s.shard-%u-of-%u.json",
				 sw->name, shard, count);
		else
			snprintf(defout, sizeof(defout), "results/sweep-%s.json", sw->name);
	}
	ret = check_out(sw, argv[optind], out ? out : defout, out != NULL, plot && !count);
	res = ret == CLI_EXIT_OK ? calloc(sw->nr_cases, sizeof(*res)) : NULL;
	if (ret == CLI_EXIT_OK && !res)
		ret = CLI_EXIT_FAIL;
	if (ret == CLI_EXIT_OK) {
		int r = run_cases(sw, shard, count ? count : 1, jobs, res);

		if (r == -EINTR) { /* stopped: say so, and end as the signal asked */
			fprintf(stderr, "%s sweep: stopped by SIG%s: its workers are stopped, "
				"nothing written\n", CLI_PROG, sigabbrev_np(ilab_pool_stop_signal()));
			free(res);
			ilab_sweep_free(sw);
			signal(ilab_pool_stop_signal(), SIG_DFL);
			raise(ilab_pool_stop_signal());
			return CLI_EXIT_FAIL;
		}
		if (r < 0) {
			fprintf(stderr, "%s sweep: cannot run the cases: %s\n", CLI_PROG,
				strerror(-r));
			ret = CLI_EXIT_FAIL;
		}
	}
	if (ret == CLI_EXIT_OK)
		ret = sweep_write(sw, res, shard, count, out ? out : defout, plot);
	for (unsigned k = shard; ret == CLI_EXIT_OK && k < sw->nr_cases; k += count ? count : 1)
		if (res[k].status == ILAB_CASE_FAILED)
			ret = CLI_EXIT_FAIL;
	free(res);
	ilab_sweep_free(sw);
	return ret;
}
