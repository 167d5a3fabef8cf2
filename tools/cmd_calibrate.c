/* cmd_calibrate.c — `iommulab calibrate PROFILE [SCENARIO...]`: one joint fit of the
 * profile's free constants to the scenarios' published figures and effects
 * (src/calibrate/, docs/calibration.md), optionally cross-validated; writes the fitted
 * profile, the report (text and JSON) and the correlator plot into --out. Everything is
 * checked before anything runs; a bad command line, profile or scenario is one line, exit 2.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calibrate/calib.h"
#include "experiments/sweep.h"
#include "util/atomic_file.h"

#define ERRLEN 2048
#define MAX_ARGS 64

struct opts {
	const char *profile, *out, *measurements, *import_tool, *import_file;
	const char *fold, *merge; /* --fold K|list, --merge DIR: the cross-validation apart */
	const char *scenarios[MAX_ARGS], *frees[MAX_ARGS], *cases[MAX_ARGS];
	unsigned nr_scenarios, nr_frees, nr_cases;
	uint64_t seed, starts, jobs, max_evals, folds;
	bool quick, cv, plot, verbose, nodes;
	enum ilab_calib_weights weights; /* --weights terms|experiments */
	int cpu_node, memory_node; /* --nodes, for --import lat_mem_rd */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "free", required_argument, NULL, 'F' },
		{ "case", required_argument, NULL, 'c' },
		{ "quick", no_argument, NULL, 'q' },
		{ "weights", required_argument, NULL, 'W' },
		{ "seed", required_argument, NULL, 'S' },
		{ "starts", required_argument, NULL, 's' },
		{ "max-evals", required_argument, NULL, 'M' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "out", required_argument, NULL, 'o' },
		{ "cross-validate", no_argument, NULL, 'X' },
		{ "folds", required_argument, NULL, 'k' },
		{ "fold", required_argument, NULL, 'f' },
		{ "merge", required_argument, NULL, 'G' },
		{ "no-plot", no_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "measurements", required_argument, NULL, 'm' },
		{ "import", required_argument, NULL, 'I' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int opt;

	o->seed = 1;
	o->starts = 3;
	o->folds = 5;
	o->jobs = cpus > 0 ? (uint64_t)cpus : 1;
	o->out = "results";
	o->plot = true;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":qj:o:hv", lo, NULL)) != -1) {
		switch (opt) {
		case 'F':
		case 'c':
			if ((opt == 'F' ? o->nr_frees : o->nr_cases) == MAX_ARGS)
				return cli_usage_error("calibrate", "at most %d --%s", MAX_ARGS,
						       opt == 'F' ? "free" : "case");
			if (opt == 'F')
				o->frees[o->nr_frees++] = optarg;
			else
				o->cases[o->nr_cases++] = optarg;
			break;
		case 'q': o->quick = true; break;
		case 'W':
			if (!strcmp(optarg, "terms"))
				o->weights = ILAB_CALIB_WEIGH_TERMS;
			else if (!strcmp(optarg, "experiments"))
				o->weights = ILAB_CALIB_WEIGH_EXPERIMENTS;
			else
				return cli_usage_error("calibrate", "--weights: terms or "
						       "experiments, not '%s'", optarg);
			break;
		case 'X': o->cv = true; break;
		case 'f': o->fold = optarg; o->cv = true; break;
		case 'G': o->merge = optarg; o->cv = true; break;
		case 'N': o->plot = false; break;
		case 'v': o->verbose = true; break;
		case 'o': o->out = optarg; break;
		case 'm': o->measurements = optarg; break;
		case 'I':
			if (strcmp(optarg, "dma_map_benchmark") && strcmp(optarg, "fio") &&
			    strcmp(optarg, "lat_mem_rd") && strcmp(optarg, "core-to-core-latency"))
				return cli_usage_error("calibrate", "--import: dma_map_benchmark, fio, "
						       "lat_mem_rd or core-to-core-latency, not '%s'",
						       optarg);
			o->import_tool = optarg;
			break;
		case 'n': {
			char extra;

			if (sscanf(optarg, "%d,%d%c", &o->cpu_node, &o->memory_node, &extra) != 2 ||
			    o->cpu_node < 0 || o->memory_node < 0 || o->cpu_node > 4095 ||
			    o->memory_node > 4095)
				return cli_usage_error("calibrate", "--nodes: CPU,MEMORY (two node "
						       "numbers), not '%s'", optarg);
			o->nodes = true;
			break;
		}
		case 'S':
			if (cli_parse_count(optarg, 1, 1ull << 53, &o->seed))
				return cli_usage_error("calibrate", "--seed must be 1 to 2^53, not '%s'",
						       optarg);
			break;
		case 's':
			if (cli_parse_count(optarg, 1, 100, &o->starts))
				return cli_usage_error("calibrate", "--starts must be 1 to 100, not "
						       "'%s'", optarg);
			break;
		case 'M':
			if (cli_parse_count(optarg, 10, 100000, &o->max_evals))
				return cli_usage_error("calibrate", "--max-evals must be 10 to 100000, "
						       "not '%s'", optarg);
			break;
		case 'k':
			if (cli_parse_count(optarg, 2, 100, &o->folds))
				return cli_usage_error("calibrate", "--folds must be 2 to 100, not '%s'",
						       optarg);
			break;
		case 'j':
			if (cli_parse_count(optarg, 1, 1024, &o->jobs))
				return cli_usage_error("calibrate", "-j must be 1 to 1024, not '%s'",
						       optarg);
			break;
		case 'h':
			cli_print_command_help(cli_find_command("calibrate"), stdout);
			return -1;
		default:
			return cli_bad_option("calibrate", opt, argc, argv);
		}
	}
	if (o->import_tool) {
		if (optind != argc - 1)
			return cli_usage_error("calibrate", "--import %s takes one file of its output",
					       o->import_tool);
		o->import_file = argv[optind];
		if (!strcmp(o->import_tool, "lat_mem_rd") != o->nodes)
			return cli_usage_error("calibrate", o->nodes ? "--nodes goes with --import "
					       "lat_mem_rd" : "--import lat_mem_rd needs --nodes CPU,"
					       "MEMORY: the nodes of the run (numactl --cpunodebind, "
					       "--membind) are not in its output");
		return 0;
	}
	if (optind == argc)
		return cli_usage_error("calibrate", "no profile given (a name, kunpeng920, or a file)");
	o->profile = argv[optind++];
	for (; optind < argc; optind++) {
		if (o->nr_scenarios == MAX_ARGS)
			return cli_usage_error("calibrate", "at most %d scenarios", MAX_ARGS);
		o->scenarios[o->nr_scenarios++] = argv[optind];
	}
	if (!*o->out)
		return cli_usage_error("calibrate", "--out needs a directory");
	if (o->fold && o->merge)
		return cli_usage_error("calibrate", "--fold runs one fold, --merge merges them: "
				       "not both");
	return 0;
}

/* --out: a directory we can write to, made when missing. */
static int prepare_out(const char *out)
{
	char probe[PATH_MAX];
	struct stat st;
	int ret;

	if (mkdir(out, 0777) != 0 && errno != EEXIST)
		return cli_usage_error("calibrate", "--out %s: cannot create the directory: %s",
				       out, strerror(errno));
	if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
		return cli_usage_error("calibrate", "--out %s: not a directory", out);
	snprintf(probe, sizeof(probe), "%s/x", out);
	ret = ilab_afile_tmpname(probe, probe, sizeof(probe));
	if (ret)
		return cli_usage_error("calibrate", "--out %s: cannot write there: %s", out,
				       strerror(-ret));
	unlink(probe);
	return 0;
}

/* The set's experiments, sizes and (when --case) cases: what the constants were fitted on. */
static void fitted_on(const struct ilab_calib_set *set, const struct opts *o, char *buf,
		      size_t len)
{
	size_t off = 0;

	for (unsigned e = 0; e < set->nr_exp && off < len; e++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", e ? " " : "",
					set->exp[e]->name);
	for (unsigned c = 0; c < o->nr_cases && off < len; c++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", c ? "," : " [cases ",
					o->cases[c]);
	if (o->nr_cases && off < len)
		off += (size_t)snprintf(buf + off, len - off, "]");
	if (off < len)
		snprintf(buf + off, len - off, " (%s sizes%s)", set->quick ? "quick" : "full",
			 set->weights == ILAB_CALIB_WEIGH_EXPERIMENTS ? ", weighted by experiment"
								      : "");
}

static int save_text(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
	struct ilab_afile a;
	int ret = ilab_afile_open(&a, path, err, errlen);

	if (ret)
		return ret;
	fwrite(text, 1, len, a.f);
	return ilab_afile_commit(&a, err, errlen);
}

/* doc (consumed) as sorted, indented JSON text with a final newline. */
static int save_json(const char *path, json_t *doc, char *err, size_t errlen)
{
	char *text = doc ? json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(2) |
					   JSON_REAL_PRECISION(17)) : NULL;
	char *nl = text ? realloc(text, strlen(text) + 2) : NULL;
	int ret;

	json_decref(doc);
	if (!nl) {
		free(text);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	strcat(nl, "\n");
	ret = save_text(path, nl, strlen(nl), err, errlen);
	free(nl);
	return ret;
}

/* Every output file, each whole or not at all: the fitted profile, the report (text, JSON),
 * the correlator. All writes of the command are here. */
static int write_outputs(const struct opts *o, const struct ilab_calib_report *r,
			 const char *report_text, size_t report_len)
{
	const struct ilab_calib_set *set = r->set;
	char path[PATH_MAX], err[ERRLEN], *prof = NULL;
	char real_in[PATH_MAX], real_out[PATH_MAX], png[PATH_MAX];
	struct ilab_correlator corr;
	size_t plen;
	int ret;

	snprintf(path, sizeof(path), "%s/%s.calibrated.yaml", o->out, set->profile_name);
	/* never over an input */
	if (realpath(set->profile_path, real_in) && realpath(path, real_out) &&
	    !strcmp(real_in, real_out)) {
		fprintf(stderr, "%s calibrate: %s is the input profile: not overwritten\n",
			CLI_PROG, path);
		return CLI_EXIT_FAIL;
	}
	ret = ilab_calib_fitted_profile(set, r->fit->theta, r->fitted_on, &prof, &plen, err,
					sizeof(err));
	if (!ret)
		ret = save_text(path, prof, plen, err, sizeof(err));
	free(prof);
	if (ret) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s calibrate: wrote %s\n", CLI_PROG, path);
	ilab_calib_record_path(path, real_out, sizeof(real_out));
	if (save_json(real_out, ilab_calib_record_json(r), err, sizeof(err))) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s calibrate: wrote %s\n", CLI_PROG, real_out);
	snprintf(path, sizeof(path), "%s/calibrate-%s.txt", o->out, set->profile_name);
	if (save_text(path, report_text, report_len, err, sizeof(err))) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	snprintf(path, sizeof(path), "%s/calibrate-%s.json", o->out, set->profile_name);
	if (save_json(path, ilab_calib_report_json(r), err, sizeof(err))) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s calibrate: wrote %s and the report beside it\n", CLI_PROG, path);
	if (!o->plot)
		return CLI_EXIT_OK;
	snprintf(path, sizeof(path), "%s/calibrate-%s-correlator.gp", o->out, set->profile_name);
	snprintf(png, sizeof(png), "%s/calibrate-%s-correlator.png", o->out, set->profile_name);
	ret = ilab_calib_correlator(r, &corr);
	if (!ret)
		ret = ilab_correlator_save(&corr, NULL, path, png, err, sizeof(err));
	ilab_correlator_free(&corr);
	if (ret == 1) {
		fprintf(stderr, "%s calibrate: warning: %s\n", CLI_PROG, err);
		return CLI_EXIT_OK;
	}
	if (ret) {
		fprintf(stderr, "%s calibrate: correlator: %s\n", CLI_PROG, err);
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s calibrate: wrote %s\n", CLI_PROG, png);
	return CLI_EXIT_OK;
}

/* --import TOOL FILE: the tool's output as measurement entries on stdout, all or nothing. */
static int import(const struct opts *o)
{
	char err[ERRLEN], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return CLI_EXIT_FAIL;
	if (!strcmp(o->import_tool, "fio"))
		rc = ilab_calib_import_fio(o->import_file, f, err, sizeof(err));
	else if (!strcmp(o->import_tool, "lat_mem_rd"))
		rc = ilab_calib_import_lat_mem_rd(o->import_file, o->cpu_node, o->memory_node, f,
						  err, sizeof(err));
	else if (!strcmp(o->import_tool, "core-to-core-latency"))
		rc = ilab_calib_import_core_to_core(o->import_file, f, err, sizeof(err));
	else
		rc = ilab_calib_import_dma_map_benchmark(o->import_file, f, err, sizeof(err));
	fclose(f);
	if (!rc)
		fwrite(text, 1, len, stdout);
	else
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
	free(text);
	return rc ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* TERM/INT/HUP stopped an evaluation's workers (the pool is gone): say so, and end as the
 * signal asked, as sweep does, not as a failed case. */
static int stopped(struct ilab_calib_set *set)
{
	int sig = ilab_pool_stop_signal();

	fprintf(stderr, "%s calibrate: stopped by SIG%s after %u evaluations: its workers are "
		"stopped, nothing written\n", CLI_PROG, sigabbrev_np(sig), set->nr_evals);
	ilab_calib_set_free(set);
	signal(sig, SIG_DFL);
	raise(sig);
	return CLI_EXIT_FAIL;
}

/* --fold list: the folds, one a line ("K<TAB>what it fits"), nothing run. */
static int list_folds(const struct ilab_calib_set *set, const struct opts *o)
{
	unsigned nf = ilab_calib_cv_nr_folds(set, (unsigned)o->folds);
	char name[ILAB_SCN_NAME_MAX + 64];

	for (unsigned k = 0; k < nf; k++) {
		ilab_calib_cv_fold_name(set, (unsigned)o->folds, k, name, sizeof(name));
		printf("%u\t%s\n", k, name);
	}
	return CLI_EXIT_OK;
}

/* --fold K: that fold alone, its result file written whole into --out. */
static int run_fold(struct ilab_calib_set *set, const struct opts *o,
		    const struct ilab_calib_fold_id *id, unsigned k)
{
	struct ilab_calib_fold_result res = { 0 };
	char err[ERRLEN], path[PATH_MAX];
	const double *tv;
	int ret;

	res.values = calloc(set->nr_terms + 1, sizeof(*res.values));
	if (!res.values) {
		ilab_calib_set_free(set);
		return CLI_EXIT_FAIL;
	}
	if (k) {
		ret = ilab_calib_cv_fold(set, id->folds, k, id->seed, id->starts, id->max_evals,
					 res.values, res.pinned, sizeof(res.pinned), err,
					 sizeof(err));
	} else {
		/* as one run does: the fit, its analysis, the model's values there */
		ret = ilab_calib_fit(set, id->seed, id->starts, id->max_evals, &res.fit, err,
				     sizeof(err));
		if (!ret)
			ret = ilab_calib_analyse(set, res.fit.theta, res.fit.objective, &res.sens,
						 err, sizeof(err));
		if (!ret)
			ret = ilab_calib_eval(set, res.fit.theta, &tv, err, sizeof(err));
		if (!ret)
			memcpy(res.values, tv, set->nr_terms * sizeof(*tv));
	}
	if (ret && ilab_pool_stop_signal()) {
		free(res.values);
		return stopped(set);
	}
	ilab_calib_fold_path(o->out, set->profile_name, k, path, sizeof(path));
	if (!ret)
		ret = save_json(path, ilab_calib_fold_json(set, id, k, &res), err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
	else
		fprintf(stderr, "%s calibrate: wrote %s (%u evaluations)\n", CLI_PROG, path,
			set->nr_evals);
	free(res.values);
	ilab_calib_set_free(set);
	return ret ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int cmd_calibrate(int argc, char **argv)
{
	struct opts o = { 0 };
	struct ilab_calib_set *set = NULL;
	struct ilab_calib_fit fit;
	struct ilab_calib_sens sens;
	struct ilab_calib_cv cv = { 0 };
	struct ilab_calib_report r = { 0 };
	char err[ERRLEN], on[1024], *text = NULL;
	size_t tlen = 0;
	const double *tv;
	double t0 = now();
	struct ilab_calib_fold_id id;
	struct ilab_calib_merged merged = { 0 };
	uint64_t fold = 0;
	FILE *mem;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret;
	if (o.import_tool)
		return import(&o);
	if (ilab_calib_set_open(&set, o.profile, o.nr_scenarios || o.measurements ? o.scenarios
									       : NULL,
				o.nr_scenarios, o.quick, err, sizeof(err))) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	set->weights = o.weights;
	if (o.measurements)
		ret = ilab_calib_measurements_add(set, o.measurements, err, sizeof(err));
	for (unsigned i = 0; !ret && i < o.nr_frees; i++)
		ret = ilab_calib_free_add_arg(set, o.frees[i], err, sizeof(err));
	if (!ret && o.nr_cases)
		ret = ilab_calib_set_only_cases(set, o.cases, o.nr_cases, err, sizeof(err));
	if (!ret)
		ret = ilab_calib_free_check(set, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		ilab_calib_set_free(set);
		return CLI_EXIT_USAGE;
	}
	id = (struct ilab_calib_fold_id){ .seed = o.seed, .starts = (unsigned)o.starts,
					  .max_evals = (unsigned)o.max_evals,
					  .folds = (unsigned)o.folds };
	if (o.fold && !strcmp(o.fold, "list")) {
		ret = list_folds(set, &o);
		ilab_calib_set_free(set);
		return ret;
	}
	if (o.fold && cli_parse_count(o.fold, 0, ilab_calib_cv_nr_folds(set, id.folds) - 1,
				      &fold)) {
		unsigned last = ilab_calib_cv_nr_folds(set, id.folds) - 1; /* before the free */

		ilab_calib_set_free(set);
		return cli_usage_error("calibrate", "--fold must be 'list' or 0 to %u (the folds "
				       "of this set: --fold list), not '%s'", last, o.fold);
	}
	/* --merge: the folds' files in place of the fits (the same report, record and
	 * correlator), each checked before anything is written */
	if (o.merge && ilab_calib_fold_merge(set, &id, o.merge, &merged, err, sizeof(err))) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		ilab_calib_set_free(set);
		return CLI_EXIT_USAGE;
	}
	ret = prepare_out(o.out);
	if (ret) {
		ilab_calib_merged_free(&merged);
		ilab_calib_set_free(set);
		return ret;
	}
	set->jobs = (unsigned)o.jobs;
	set->progress = o.verbose ? stderr : NULL;
	fitted_on(set, &o, on, sizeof(on));
	fprintf(stderr, "%s calibrate: %s: %u free constants, %u cases, %u terms, %llu starts, "
		"-j %u\n", CLI_PROG, set->profile_name, set->nr_free, set->nr_cases, set->nr_terms,
		(unsigned long long)o.starts, set->jobs);
	if (o.fold)
		return run_fold(set, &o, &id, (unsigned)fold);
	if (o.merge) {
		fit = merged.whole.fit;
		sens = merged.whole.sens;
		tv = merged.whole.values;
		cv = merged.cv;
		memset(&merged.cv, 0, sizeof(merged.cv));
	} else {
		ret = ilab_calib_fit(set, o.seed, (unsigned)o.starts, (unsigned)o.max_evals, &fit,
				     err, sizeof(err));
		if (!ret)
			ret = ilab_calib_analyse(set, fit.theta, fit.objective, &sens, err,
						 sizeof(err));
		if (!ret && o.cv)
			ret = ilab_calib_crossval(set, o.seed, (unsigned)o.starts,
						  (unsigned)o.max_evals, (unsigned)o.folds, &cv, err,
						  sizeof(err));
		if (!ret)
			ret = ilab_calib_eval(set, fit.theta, &tv, err, sizeof(err));
	}
	if (ret && ilab_pool_stop_signal()) {
		ilab_calib_cv_free(&cv);
		return stopped(set);
	}
	if (ret) {
		fprintf(stderr, "%s calibrate: %s\n", CLI_PROG, err);
		ilab_calib_cv_free(&cv);
		ilab_calib_set_free(set);
		return CLI_EXIT_FAIL;
	}
	r = (struct ilab_calib_report){ .set = set, .fit = &fit, .sens = &sens, .tv = tv,
					.cv = o.cv ? &cv : NULL, .seed = o.seed, .fitted_on = on };
	mem = open_memstream(&text, &tlen);
	if (!mem) {
		ret = CLI_EXIT_FAIL;
	} else {
		ilab_calib_report_text(&r, mem);
		fclose(mem);
		fputs(text, stdout);
		fflush(stdout);
		ret = write_outputs(&o, &r, text, tlen);
	}
	fprintf(stderr, "%s calibrate: %u evaluations, %.1f s host time\n", CLI_PROG,
		set->nr_evals, now() - t0);
	free(text);
	ilab_calib_cv_free(&cv);
	ilab_calib_merged_free(&merged);
	ilab_calib_set_free(set);
	return ret;
}
