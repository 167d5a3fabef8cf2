/* cmd_run.c — `iommulab run [scenario...]`: parse the scenarios (all built-in ones by default),
 * run each case, print the comparison table (or the JSON), write <out>/<name>.json and a plot.
 * Not the runner or the report themselves (src/experiments, src/report): this is the glue.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibrate/calib.h"
#include "iommulab/report.h"
#include "iommulab/scenario.h"
#include "iommulab/sim.h"
#include "iommulab/topo.h"
#include "iommulab/trace.h"
#include "report/results_page.h"
#include "util/atomic_file.h"
#include "util/output_set.h"

#define ERRLEN 1024

/* mkdir -p; -EEXIST when path is there but not a directory */
static int make_dirs(const char *path)
{
	char buf[ILAB_SCN_PATH_MAX];
	struct stat st;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return -errno;
	if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
		return -EEXIST; /* there, and not a directory */
	return 0;
}

/* The results directory: created, and a file can be made there (a read-only place, or one
 * that is not a directory, is found before anything runs, not after the first scenario).
 * Prints the one-line reason; returns a CLI exit code. */
static int prepare_out(const char *out)
{
	char name[ILAB_SCN_PATH_MAX + 32], probe[ILAB_SCN_PATH_MAX + 48];
	int m = make_dirs(out);

	if (m == -EEXIST) {
		fprintf(stderr, "%s run: --out %s: exists and is not a directory\n", CLI_PROG, out);
		return CLI_EXIT_USAGE;
	}
	if (m < 0) {
		fprintf(stderr, "%s run: --out %s: cannot create the directory: %s\n", CLI_PROG,
			out, strerror(-m));
		return CLI_EXIT_USAGE;
	}
	snprintf(name, sizeof(name), "%s/.iommulab-probe", out);
	m = ilab_afile_tmpname(name, probe, sizeof(probe));
	if (m < 0) {
		fprintf(stderr, "%s run: --out %s: cannot write there: %s\n", CLI_PROG, out,
			strerror(-m));
		return CLI_EXIT_USAGE;
	}
	unlink(probe);
	return CLI_EXIT_OK;
}

/* The correlator of the run's published figures: <out>/correlator.json, .gp, .png. */
#define CORRELATOR "correlator"

/* What the run reads (scenario and profile files) and writes (each scenario's JSON, plot
 * script and PNG in out, and the correlator): no output may be an input or another output, found before anything
 * runs. Prints the one-line reason; returns a CLI exit code. The trace joins files later. */
static int check_files(struct ilab_scenario **scn, int nr, const char *out, const char *profile,
		       struct ilab_output_set *files)
{
	static const char *const kinds[][2] = { { "json", "the result file" },
						{ "gp", "the plot script" },
						{ "png", "the plot" },
						{ "svg", "the plot's SVG" } };
	char path[ILAB_SCN_PATH_MAX + 80], err[ERRLEN];

	for (int i = 0; i < nr; i++) {
		ilab_output_set_input(files, scn[i]->path, "the scenario file");
		if (!ilab_profile_resolve(scn[i]->profile, path, sizeof(path), err, sizeof(err)))
			ilab_output_set_input(files, path, "the profile");
	}
	if (profile && !ilab_profile_resolve(profile, path, sizeof(path), err, sizeof(err)))
		ilab_output_set_input(files, path, "the profile");
	static const char *const corr[][2] = { { "json", "the correlator's points" },
					       { "gp", "the correlator's script" },
					       { "png", "the correlator" },
					       { "svg", "the correlator's SVG" } };

	for (int i = 0; i < nr; i++)
		for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			snprintf(path, sizeof(path), "%s/%s.%s", out, scn[i]->name, kinds[k][0]);
			if (ilab_output_set_output(files, path, kinds[k][1], err, sizeof(err))) {
				fprintf(stderr, "%s run: %s\n", CLI_PROG, err);
				return CLI_EXIT_USAGE;
			}
		}
	for (unsigned k = 0; k < sizeof(corr) / sizeof(corr[0]); k++) {
		snprintf(path, sizeof(path), "%s/" CORRELATOR ".%s", out, corr[k][0]);
		if (ilab_output_set_output(files, path, corr[k][1], err, sizeof(err))) {
			fprintf(stderr, "%s run: %s\n", CLI_PROG, err);
			return CLI_EXIT_USAGE;
		}
	}
	ilab_results_page_path(out, path, sizeof(path));
	if (ilab_output_set_output(files, path, "the results page", err, sizeof(err))) {
		fprintf(stderr, "%s run: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/* The command table's help line predates scenarios; this is the authoritative text. */
static void print_help(FILE *f)
{
	fprintf(f,
		"usage: %s run [--out DIR] [--quick] [--json] [--seed N] [--repeat N]\n"
		"           [--profile NAME|FILE] [--trace FILE [--trace-limit-us N]\n"
		"           [--trace-limit-mb M]] [scenario...]\n"
		"run the seed experiments and compare with the published figures\n"
		"  scenario          a scenario file, a built-in name (seed000-cmdsync), its short\n"
		"                    name (cmdsync) or a seed id (000); default: all built-in ones\n"
		"  -o, --out DIR     write <scenario>.json and <scenario>.png (and .svg) there,\n"
		"                    the correlator (correlator.png, .json) and index.html, the\n"
		"                    page of every result there (default results)\n"
		"  -q, --quick       reduced sizes (the scenario's quick: parameters), for tests\n"
		"  -j, --json        print the result JSON to stdout instead of the tables\n"
		"  --seed N          the simulator's seed, 1 to 2^53 (default 1)\n"
		"  --repeat N        run each case with seeds S, S+1 ... (1 to %d): figures are\n"
		"                    means, effects smaller than their spread are flagged\n"
		"  --trace FILE      write every case's simulation to FILE as one Chrome/Perfetto\n"
		"                    JSON trace, a process per case (docs/trace.md)\n"
		"  --trace-limit-us N  only the first N simulated microseconds of each case\n"
		"                    after its CPU threads start (its set-up is always written)\n"
		"  --trace-limit-mb M  stop the trace once the file is M MiB (default 256, 0: no\n"
		"                    bound); the run goes on\n"
		"  --profile P       run every scenario on profile P (a name or a file) instead of\n"
		"                    its own. P must describe the same machine (topology): a named\n"
		"                    scenario of another machine is refused (exit 2); with none\n"
		"                    named, the built-in ones of other machines are left out\n"
		"  -h, --help        show this help\n"
		"Built-in scenarios come from $IOMMULAB_DATADIR/scenarios, else the source tree,\n"
		"else the install prefix. A malformed scenario: file:line:column: message, exit 2;\n"
		"an --out that is not a writable directory: exit 2. Files are written whole or not\n"
		"at all; a failed write: exit 1.\n",
		CLI_PROG, ILAB_RUN_REPEAT_MAX);
}

struct run_totals {
	unsigned scenarios, cases, ok, not_implemented, failed, figures, within;
	unsigned effects, effects_same, effects_identical;
	unsigned effects_spread, effects_same_spread; /* --repeat: within the seeds' spread */
};

static void add_totals(struct run_totals *t, const struct ilab_scenario_result *r)
{
	t->scenarios++;
	for (unsigned i = 0; i < r->nr_cases; i++) {
		const struct ilab_case *k = &r->scenario->cases[i];

		t->cases++;
		t->ok += r->cases[i].status == ILAB_CASE_OK;
		t->not_implemented += r->cases[i].status == ILAB_CASE_NOT_IMPLEMENTED;
		t->failed += r->cases[i].status == ILAB_CASE_FAILED;
		for (unsigned j = 0; j < k->nr_refs; j++) {
			struct ilab_comparison c;

			ilab_compare(r->scenario, &k->refs[j], &r->cases[i], &c);
			t->figures++;
			t->within += c.verdict == ILAB_VERDICT_WITHIN;
		}
	}
	for (unsigned i = 0; i < r->scenario->nr_effects; i++) {
		struct ilab_effect_comparison c;

		ilab_compare_effect(r, &r->scenario->effects[i], &c);
		t->effects++;
		t->effects_same += c.verdict == ILAB_EFFECT_SAME;
		t->effects_identical += c.verdict != ILAB_EFFECT_SAME && c.identical_runs;
		t->effects_spread += c.within_spread;
		t->effects_same_spread += c.within_spread && c.verdict == ILAB_EFFECT_SAME;
	}
}

/* Under a seed table: whether its figures were in the calibration set of the profile it ran
 * on, and their out-of-sample error (the calibration record beside the profile,
 * docs/calibration.md). Nothing without a record. */
static void print_calibration(const struct ilab_scenario *s, const char *profile)
{
	char path[ILAB_SCN_PATH_MAX], line[1024], err[256];

	if (!strcmp(s->seed, "none") ||
	    ilab_profile_resolve(profile ? profile : s->profile, path, sizeof(path), err,
				 sizeof(err)))
		return;
	if (ilab_calib_record_line(path, s->name, line, sizeof(line)))
		printf("%s\n", line);
}

/* Each published figure of r into the correlator: in-sample when its scenario was in the
 * calibration set of the profile it ran on (the record beside it, docs/calibration.md), or,
 * without a record, when the scenario names it a calibration figure; else out-of-sample. */
static int add_correlator(const struct ilab_scenario_result *r, const char *profile,
			  struct ilab_correlator *corr)
{
	const struct ilab_scenario *s = r->scenario;
	char path[ILAB_SCN_PATH_MAX], label[ILAB_SCN_NAME_MAX * 2 + ILAB_SCN_KEY_MAX + 4],
	     err[256];
	int in = -ENOENT, rc = 0;

	if (!ilab_profile_resolve(profile ? profile : s->profile, path, sizeof(path), err,
				  sizeof(err)))
		in = ilab_calib_record_in_sample(path, s->name);
	for (unsigned i = 0; !rc && i < r->nr_cases; i++)
		for (unsigned j = 0; !rc && j < s->cases[i].nr_refs; j++) {
			const struct ilab_reference *ref = &s->cases[i].refs[j];
			struct ilab_comparison c;
			bool fitted = in >= 0 ? in == 1 : ref->kind == ILAB_REF_CALIBRATION;

			ilab_compare(s, ref, &r->cases[i], &c);
			if (!c.have_ours)
				continue;
			snprintf(label, sizeof(label), "%s/%s/%s", s->name, s->cases[i].label,
				 ref->metric);
			rc = ilab_correlator_add(corr, s->name, label, ref->unit, ref->value,
						 c.ours_raw, fitted ? NULL : in >= 0 ?
						 "not in the calibration set" : "prediction");
		}
	return rc;
}

/* Run one parsed scenario: table or JSON to stdout, files to out. Returns a CLI exit code. */
static int run_one(const struct ilab_scenario *s, const char *out,
		   const struct ilab_run_options *ro, bool json, json_t *json_all,
		   struct run_totals *tot, struct ilab_correlator *corr)
{
	struct ilab_scenario_result *r;
	char path[ILAB_SCN_PATH_MAX + 80], err[ERRLEN];
	int ret = CLI_EXIT_OK, pr;

	if (ilab_scenario_run(s, ro, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s run: %s: %s\n", CLI_PROG, s->name, err);
		return CLI_EXIT_FAIL;
	}
	add_totals(tot, r);
	if (add_correlator(r, ro->profile, corr))
		ret = CLI_EXIT_FAIL;
	if (json) {
		json_t *j = ilab_result_json(r);

		if (!j || json_array_append_new(json_all, j) != 0)
			ret = CLI_EXIT_FAIL;
	} else {
		ilab_report_table(r, stdout);
		print_calibration(s, ro->profile);
		fputc('\n', stdout);
	}
	snprintf(path, sizeof(path), "%s/%s.json", out, s->name);
	fflush(stdout); /* the table first: on one terminal, stderr must not cut into it */
	if (ilab_result_save_json(r, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s run: %s\n", CLI_PROG, err);
		ret = CLI_EXIT_FAIL;
	}
	pr = ilab_report_plot(r, out, err, sizeof(err));
	if (pr < 0) {
		fprintf(stderr, "%s run: plot: %s\n", CLI_PROG, err);
		ret = CLI_EXIT_FAIL;
	} else {
		fprintf(stderr, "%s run: wrote %s%s%s\n", CLI_PROG, path, pr == 0 ? " and " : "; ",
			err);
	}
	for (unsigned i = 0; i < r->nr_cases; i++)
		if (r->cases[i].status == ILAB_CASE_FAILED)
			ret = CLI_EXIT_FAIL;
	ilab_scenario_result_free(r);
	return ret;
}

/* A whole decimal number in [min, max], or -1 with the one-line reason printed. */
/* <out>/correlator.json, .gp, .png (registered in check_files). Nonzero on a failed write. */
static int save_correlator(const struct ilab_correlator *corr, const char *out)
{
	char json[ILAB_SCN_PATH_MAX + 32], gp[ILAB_SCN_PATH_MAX + 32], png[ILAB_SCN_PATH_MAX + 32],
	     err[ERRLEN];
	int rc;

	snprintf(json, sizeof(json), "%s/" CORRELATOR ".json", out);
	snprintf(gp, sizeof(gp), "%s/" CORRELATOR ".gp", out);
	snprintf(png, sizeof(png), "%s/" CORRELATOR ".png", out);
	rc = ilab_correlator_save(corr, json, gp, png, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "%s run: correlator: %s\n", CLI_PROG, err);
		return 1;
	}
	fprintf(stderr, "%s run: wrote %s and %s%s%s\n", CLI_PROG, json, rc ? gp : png,
		rc ? "; " : "", rc ? err : "");
	return 0;
}

static int parse_count(const char *opt, const char *arg, uint64_t min, uint64_t max,
		       uint64_t *out)
{
	char *end;

	errno = 0;
	/* strtoull takes blanks and a sign ("-1" is 2^64 - 1): only digits are a count */
	if (*arg < '0' || *arg > '9' || (*out = strtoull(arg, &end, 10), errno) || *end ||
	    *out < min || *out > max) {
		cli_usage_error("run", "%s must be a whole number from %llu to %llu, not '%s'", opt,
				(unsigned long long)min, (unsigned long long)max, arg);
		return -1;
	}
	return 0;
}

/* The machine a profile describes, as text: two profiles are of the same machine when these
 * are equal. NULL with msg set when the profile or its topology cannot be loaded. */
static char *machine_of(const char *profile, char *msg, size_t msglen)
{
	struct ilab_profile *prof = malloc(sizeof(*prof));
	struct ilab_topo *topo = NULL;
	char *text = NULL;
	size_t len;
	FILE *f;

	if (!prof) {
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	if (ilab_profile_open(profile, prof, msg, msglen) == 0 &&
	    ilab_topo_load(prof->topology, &topo, msg, msglen) == 0) {
		f = open_memstream(&text, &len);
		if (f) {
			ilab_topo_print_json(topo, f);
			fclose(f);
		}
		if (!text)
			snprintf(msg, msglen, "out of memory");
	}
	ilab_topo_free(topo);
	free(prof);
	return text;
}

/* --profile against every scenario: the published figures belong to the scenario's machine,
 * so another machine's profile is refused before anything runs. With no scenario named
 * (builtin), the built-in scenarios of other machines are left out instead, with a line each,
 * and *nr shrinks. Returns a CLI exit code. */
static int check_profile_override(const char *profile, struct ilab_scenario **scn, int *nr,
				  bool builtin)
{
	char msg[ILAB_PROFILE_PATH_MAX + 256];
	char *want = machine_of(profile, msg, sizeof(msg));
	struct ilab_profile *prof;
	int ret = CLI_EXIT_OK;

	if (!want)
		return cli_usage_error("run", "--profile %s: %s", profile, msg);
	prof = malloc(sizeof(*prof));
	if (!prof || ilab_profile_open(profile, prof, msg, sizeof(msg))) {
		free(want);
		free(prof);
		return CLI_EXIT_FAIL;
	}
	for (int i = 0; i < *nr && ret == CLI_EXIT_OK; i++) {
		char *have = machine_of(scn[i]->profile, msg, sizeof(msg));

		if (!have) {
			ret = cli_usage_error("run", "%s: profile %s: %s", scn[i]->name,
					      scn[i]->profile, msg);
		} else if (strcmp(have, want) && builtin) {
			fprintf(stderr, "%s run: %s: not run: its machine (profile %s) is not "
				"--profile %s's\n", CLI_PROG, scn[i]->name, scn[i]->profile, profile);
			ilab_scenario_free(scn[i]);
			memmove(&scn[i], &scn[i + 1], (size_t)(*nr - i - 1) * sizeof(*scn));
			scn[--*nr] = NULL;
			i--;
		} else if (strcmp(have, want))
			ret = cli_usage_error("run", "--profile %s: not the machine of %s (profile "
					      "%s): the published figures belong to that machine",
					      profile, scn[i]->name, scn[i]->profile);
		else if (scn[i]->workload->check_profile &&
			 scn[i]->workload->check_profile(prof, msg, sizeof(msg)))
			ret = cli_usage_error("run", "--profile %s for %s: %s", profile,
					      scn[i]->name, msg);
		free(have);
	}
	if (ret == CLI_EXIT_OK && !*nr)
		ret = cli_usage_error("run", "--profile %s: no built-in scenario is of its machine",
				      profile);
	free(prof);
	free(want);
	return ret;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "seed", required_argument, NULL, 'S' },
		{ "repeat", required_argument, NULL, 'R' },
		{ "profile", required_argument, NULL, 'P' },
		{ "trace", required_argument, NULL, 'W' },
		{ "trace-limit-us", required_argument, NULL, 'Y' },
		{ "trace-limit-mb", required_argument, NULL, 'Z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = "results";
	bool quick = false, json = false;
	uint64_t seed = 1, repeat = 1;
	const char *profile = NULL;
	struct cli_trace_opt topt = CLI_TRACE_OPT_INIT;
	struct ilab_trace *trace = NULL;
	struct ilab_output_set io = ILAB_OUTPUT_SET_INIT; /* the files read and written */
	struct ilab_scenario **scn = NULL;
	struct run_totals tot = { 0 };
	struct ilab_correlator corr;
	char err[ERRLEN], path[ILAB_SCN_PATH_MAX];
	char **builtin = NULL, **files;
	int opt, nr, ret = CLI_EXIT_OK;
	json_t *json_all = NULL;

	ilab_correlator_init(&corr, "iommulab run: published figures", "iommulab run");
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:qjh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'q': quick = true; break;
		case 'j': json = true; break;
		case 'S':
			/* 2^53: the JSON keeps seeds as exact integers */
			if (parse_count("--seed", optarg, 1, CLI_SEED_MAX, &seed))
				return CLI_EXIT_USAGE;
			break;
		case 'R':
			if (parse_count("--repeat", optarg, 1, ILAB_RUN_REPEAT_MAX, &repeat))
				return CLI_EXIT_USAGE;
			break;
		case 'P':
			profile = optarg;
			break;
		case 'W':
			topt.path = optarg;
			break;
		case 'Y':
			if (cli_trace_limit("run", optarg, &topt))
				return CLI_EXIT_USAGE;
			break;
		case 'Z':
			if (cli_trace_limit_mb("run", optarg, &topt))
				return CLI_EXIT_USAGE;
			break;
		case 'h':
			print_help(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option("run", opt, argc, argv);
		}
	}
	if (!*out)
		return cli_usage_error("run", "--out needs a directory");
	if (profile && !*profile)
		return cli_usage_error("run", "--profile needs a profile name or file");
	if (topt.limit_set && !topt.path)
		return cli_usage_error("run", "--trace-limit-us and --trace-limit-mb need "
				       "--trace FILE");
	if (topt.path && !*topt.path)
		return cli_usage_error("run", "--trace needs a file name");
	if (seed + repeat - 1 > 1ull << 53)
		return cli_usage_error("run", "--seed %llu with --repeat %llu goes past 2^53",
				       (unsigned long long)seed, (unsigned long long)repeat);

	/* Which files: the arguments, or every built-in scenario. */
	if (optind < argc) {
		files = argv + optind;
		nr = argc - optind;
	} else {
		nr = ilab_scenario_builtin_list(&builtin, err, sizeof(err));
		if (nr <= 0) { /* nothing can run: as for an unknown scenario name */
			fprintf(stderr, "%s run: %s\n", CLI_PROG,
				nr == 0 ? "no built-in scenarios found" : err);
			return CLI_EXIT_USAGE;
		}
		files = builtin;
	}

	/* Parse everything before running anything: a typo in the last file should not cost the
	 * time of the first. */
	scn = calloc((size_t)nr, sizeof(*scn));
	if (!scn) {
		free(builtin);
		return CLI_EXIT_FAIL;
	}
	for (int i = 0; i < nr && ret == CLI_EXIT_OK; i++) {
		if (ilab_scenario_resolve(files[i], path, sizeof(path), err, sizeof(err)) < 0) {
			ret = cli_usage_error("run", "%s", err);
			break;
		}
		if (ilab_scenario_load(path, &scn[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			ret = CLI_EXIT_USAGE;
			break;
		}
		/* <out>/<name>.json is per name: a second one would overwrite the first */
		for (int j = 0; j < i; j++)
			if (!strcmp(scn[j]->name, scn[i]->name)) {
				ret = cli_usage_error("run", "scenario %s given twice (%s, %s)",
						      scn[i]->name, files[j], files[i]);
				break;
			}
	}
	if (ret == CLI_EXIT_OK && profile)
		ret = check_profile_override(profile, scn, &nr, builtin != NULL);
	if (ret == CLI_EXIT_OK)
		ret = prepare_out(out);
	if (ret == CLI_EXIT_OK)
		ret = check_files(scn, nr, out, profile, &io);
	if (ret == CLI_EXIT_OK && json && !(json_all = json_array()))
		ret = CLI_EXIT_FAIL;
	if (ret == CLI_EXIT_OK)
		ret = cli_trace_open("run", &topt, &io, &trace);
	ilab_output_set_free(&io);

	/* Nothing runs when the set-up failed: results with nowhere to go are wasted time. */
	bool ready = ret == CLI_EXIT_OK;

	for (int i = 0; ready && i < nr; i++) {
		struct ilab_run_options ro = { .quick = quick, .progress = stderr, .seed = seed,
					       .repeat = (unsigned)repeat, .profile = profile,
					       .trace = trace };
		int r = run_one(scn[i], out, &ro, json, json_all, &tot, &corr);

		if (r != CLI_EXIT_OK)
			ret = r;
	}

	if (ready && tot.scenarios && save_correlator(&corr, out) && ret == CLI_EXIT_OK)
		ret = CLI_EXIT_FAIL;
	if (ready && tot.scenarios) { /* the page of every result in out, this run's among them */
		if (ilab_results_page(out, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s run: results page: %s\n", CLI_PROG, err);
			if (ret == CLI_EXIT_OK)
				ret = CLI_EXIT_FAIL;
		} else {
			fprintf(stderr, "%s run: wrote %s\n", CLI_PROG, err);
		}
	}
	ilab_correlator_free(&corr);
	if (trace && cli_trace_close("run", &topt, trace) && ret == CLI_EXIT_OK)
		ret = CLI_EXIT_FAIL;
	if (ret != CLI_EXIT_USAGE && json_all) {
		/* One scenario: its object; several: an array of them. */
		json_t *doc = json_array_size(json_all) == 1 ? json_array_get(json_all, 0) : json_all;

		json_dumpf(doc, stdout, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		fputc('\n', stdout);
	} else if (ret != CLI_EXIT_USAGE && tot.scenarios) {
		printf("%u scenario%s, %u cases: %u run, %u not implemented yet, %u failed; "
		       "%u of %u published figures within tolerance",
		       tot.scenarios, tot.scenarios == 1 ? "" : "s", tot.cases, tot.ok,
		       tot.not_implemented, tot.failed, tot.within, tot.figures);
		if (tot.effects)
			printf("; %u of %u published effects in the same direction",
			       tot.effects_same, tot.effects);
		/* which of the others the model cannot show at all: its two runs were the same */
		if (tot.effects_identical)
			printf(" (%u of the other %u between two identical runs)",
			       tot.effects_identical, tot.effects - tot.effects_same);
		/* --repeat: a change smaller than its spread across seeds shows no direction */
		if (tot.effects && repeat > 1)
			printf("; %u within the seeds' spread, %u of the other %u in the same "
			       "direction", tot.effects_spread,
			       tot.effects_same - tot.effects_same_spread,
			       tot.effects - tot.effects_spread);
		putchar('\n');
	}
	json_decref(json_all);
	for (int i = 0; i < nr; i++)
		ilab_scenario_free(scn[i]);
	free(scn);
	free(builtin);
	return ret;
}
