/* runner.c — runs a parsed scenario case by case through its workload and collects a
 * struct ilab_scenario_result; also finds the built-in scenarios (source tree, install prefix
 * or $IOMMULAB_DATADIR). It is not the report (src/report/) and does not judge the figures.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "iommulab/kernel_era.h"
#include "iommulab/scenario.h"
#include "iommulab/sim.h"
#include "iommulab/trace.h"

#ifndef ILAB_SRCDIR
#define ILAB_SRCDIR "."
#endif
#ifndef ILAB_DATADIR
#define ILAB_DATADIR "/usr/local/share/iommulab"
#endif

int ilab_case_result_add(struct ilab_case_result *r, const char *metric, const char *unit,
			 double value)
{
	struct ilab_figure *f;

	if (r->nr_figures == ILAB_SCN_MAX_FIGURES)
		return -ENOSPC;
	f = &r->figures[r->nr_figures++];
	snprintf(f->metric, sizeof(f->metric), "%s", metric);
	snprintf(f->unit, sizeof(f->unit), "%s", unit);
	f->value = value;
	return 0;
}

const struct ilab_figure *ilab_case_result_find(const struct ilab_case_result *r,
						const char *metric)
{
	for (unsigned i = 0; r && i < r->nr_figures; i++)
		if (strcmp(r->figures[i].metric, metric) == 0)
			return &r->figures[i];
	return NULL;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The line a case's run rewrites on a terminal every 2 s of host time (ilab_sim_set_progress),
 * cleared before the case's own line: "[seed002-map-pages 3/44] t10-g1024: 0.012 simulated s,
 * 4 s of host time". Off a terminal only the case lines are written. */
struct case_progress {
	FILE *f;
	const char *scenario, *label;
	unsigned case_nr, nr_cases;
	double t0;
	bool shown;
};

static void case_progress_show(uint64_t virtual_ns, void *arg)
{
	struct case_progress *p = arg;

	fprintf(p->f, "\r[%s %u/%u] %s: %.3f simulated s, %.0f s of host time\033[K", p->scenario,
		p->case_nr, p->nr_cases, p->label, virtual_ns / 1e9, now_seconds() - p->t0);
	fflush(p->f);
	p->shown = true;
}

static void run_case(const struct ilab_scenario *s, const struct ilab_case *k, bool quick,
		     struct ilab_case_result *r)
{
	struct ilab_case eff;
	char err[sizeof(r->message)] = "";
	double t0 = now_seconds();
	int ret;

	ilab_case_effective(s, k, quick, &eff);
	ret = s->workload->run(s, &eff, r, err, sizeof(err));
	r->host_seconds = now_seconds() - t0;
	if (ret == -ENOSYS) {
		r->status = ILAB_CASE_NOT_IMPLEMENTED;
		r->nr_figures = 0;
		snprintf(r->message, sizeof(r->message), "not implemented yet (needs %s)",
			 s->workload->needs ? s->workload->needs : "a later issue");
	} else if (ret < 0) {
		r->status = ILAB_CASE_FAILED;
		snprintf(r->message, sizeof(r->message), "%s",
			 err[0] ? err : strerror(-ret));
	} else {
		r->status = ILAB_CASE_OK;
		r->message[0] = '\0';
	}
}

static const char *status_word(const struct ilab_case_result *r)
{
	switch (r->status) {
	case ILAB_CASE_OK: return "done";
	case ILAB_CASE_NOT_IMPLEMENTED: return "skipped";
	default: return "FAILED";
	}
}

/* The mean of n values that is exactly v[0] when they are all equal (a plain sum / n is not:
 * three times 0.1 over 3 is 0.10000000000000002), so a repeat of identical runs reports the
 * figure of one run, byte for byte. */
static double exact_mean(const double *v, unsigned n, unsigned stride)
{
	double d = 0;

	for (unsigned k = 1; k < n; k++)
		d += v[k * stride] - v[0];
	return v[0] + d / n;
}

/* Fold run k (seed + k) of a case into r, the first run's result: the same figures in the same
 * order, or the case fails naming the seed. */
static void add_run(struct ilab_case_result *r, struct ilab_case_result *run, unsigned k,
		    uint64_t seed)
{
	double *row = &r->runs[k * ILAB_SCN_MAX_FIGURES];
	bool same = run->nr_figures == r->nr_figures;

	for (unsigned i = 0; same && i < r->nr_figures; i++)
		same = !strcmp(run->figures[i].metric, r->figures[i].metric);
	if (run->status != ILAB_CASE_OK) {
		r->status = run->status;
		snprintf(r->message, sizeof(r->message), "seed %llu: %.200s",
			 (unsigned long long)(seed + k), run->message);
	} else if (!same) {
		r->status = ILAB_CASE_FAILED;
		snprintf(r->message, sizeof(r->message),
			 "seed %llu reported other figures than seed %llu",
			 (unsigned long long)(seed + k), (unsigned long long)seed);
	}
	for (unsigned i = 0; same && i < r->nr_figures; i++)
		row[i] = run->figures[i].value;
	r->host_seconds += run->host_seconds;
	free(run->stats_json);
}

/* Run case k of s with seeds seed .. seed + repeat - 1 on the scenario copy rs; figures[] end
 * up as the means, runs[] keeps every run's. */
/* With a trace, the simulators of the run that follows are a process named after it. */
static void trace_label(struct ilab_trace *t, const struct ilab_scenario *s,
			const struct ilab_case *k, uint64_t seed)
{
	char label[1024];

	if (!t)
		return;
	snprintf(label, sizeof(label), "%s %s seed %llu", s->name, k->label,
		 (unsigned long long)seed);
	ilab_trace_use(t, label);
}

static void run_case_seeds(struct ilab_scenario *rs, const struct ilab_case *k, bool quick,
			   uint64_t seed, unsigned repeat, struct ilab_trace *trace,
			   struct ilab_case_result *r)
{
	rs->sim_seed = seed;
	trace_label(trace, rs, k, seed);
	run_case(rs, k, quick, r);
	if (repeat < 2 || r->status != ILAB_CASE_OK)
		return;
	r->runs = calloc((size_t)repeat * ILAB_SCN_MAX_FIGURES, sizeof(*r->runs));
	if (!r->runs) {
		r->status = ILAB_CASE_FAILED;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	r->nr_runs = repeat;
	for (unsigned i = 0; i < r->nr_figures; i++)
		r->runs[i] = r->figures[i].value;
	for (unsigned j = 1; j < repeat && r->status == ILAB_CASE_OK; j++) {
		struct ilab_case_result run = { 0 };

		rs->sim_seed = seed + j;
		trace_label(trace, rs, k, seed + j);
		run_case(rs, k, quick, &run);
		add_run(r, &run, j, seed);
	}
	if (r->status != ILAB_CASE_OK) {
		r->nr_figures = 0;
		return;
	}
	for (unsigned i = 0; i < r->nr_figures; i++)
		r->figures[i].value = exact_mean(&r->runs[i], repeat, ILAB_SCN_MAX_FIGURES);
}

/* Which cases run a later kernel's behaviour on their own kernel (docs/kernel-eras.md): lazy
 * mode on an SMMUv3 before 4.20. The architecture is the profile's; a profile that does not
 * load marks nothing (the case then fails on it anyway). */
static void mark_backports(const struct ilab_scenario *s, struct ilab_scenario_result *res)
{
	struct ilab_profile *prof = calloc(1, sizeof(*prof));
	char msg[256];
	bool smmuv3;

	if (!prof || !s->profile[0] || ilab_profile_open(s->profile, prof, msg, sizeof(msg))) {
		free(prof);
		return;
	}
	smmuv3 = !strcmp(prof->iommu_arch, "smmuv3");
	free(prof);
	for (unsigned i = 0; i < s->nr_cases; i++) {
		const struct ilab_case *k = &s->cases[i];

		res->cases[i].backport_non_strict = k->has_kernel && k->mech.mode == ILAB_MODE_LAZY &&
			ilab_kernel_era_lazy_is_backport(&k->kernel, smmuv3);
	}
}

int ilab_scenario_run(const struct ilab_scenario *s, const struct ilab_run_options *o,
		      struct ilab_scenario_result **out, char *err, size_t errlen)
{
	struct ilab_run_options none = { 0 };
	struct ilab_scenario_result *res;
	struct ilab_scenario *rs; /* what the workload sees: s with the run's seed and profile */
	uint64_t seed;
	unsigned repeat;

	*out = NULL;
	if (!o)
		o = &none;
	if (!s || !s->workload || !s->workload->run) {
		snprintf(err, errlen, "scenario has no runnable workload");
		return -EINVAL;
	}
	if (o->profile && strlen(o->profile) >= sizeof(s->profile)) {
		snprintf(err, errlen, "profile name too long");
		return -EINVAL;
	}
	seed = o->seed ? o->seed : 1;
	repeat = o->repeat ? o->repeat : 1;
	res = calloc(1, sizeof(*res));
	rs = malloc(sizeof(*rs));
	if (res)
		res->cases = calloc(s->nr_cases ? s->nr_cases : 1, sizeof(*res->cases));
	if (!res || !rs || !res->cases) {
		free(res);
		free(rs);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*rs = *s; /* shares the cases and effects: not freed through rs */
	if (o->profile) {
		snprintf(rs->profile, sizeof(rs->profile), "%s", o->profile);
		snprintf(res->profile, sizeof(res->profile), "%s", o->profile);
	}
	mark_backports(rs, res);
	res->scenario = s;
	res->quick = o->quick;
	res->nr_cases = s->nr_cases;
	res->seed = seed;
	res->repeat = repeat;
	for (unsigned i = 0; i < s->nr_cases; i++) {
		struct ilab_case_result *r = &res->cases[i];
		struct case_progress cp = { .f = o->progress, .scenario = s->name, .case_nr = i + 1,
					    .nr_cases = s->nr_cases, .label = s->cases[i].label,
					    .t0 = now_seconds() };

		/* on a terminal, a case that runs for seconds shows where it is */
		if (o->progress && isatty(fileno(o->progress)))
			ilab_sim_set_progress(case_progress_show, &cp, 2.0);
		run_case_seeds(rs, &s->cases[i], o->quick, seed, repeat, o->trace, r);
		ilab_sim_set_progress(NULL, NULL, 0);
		if (cp.shown)
			fprintf(o->progress, "\r\033[K");
		if (o->progress) {
			fprintf(o->progress, "[%s %u/%u] %s: %s", s->name, i + 1, s->nr_cases,
				s->cases[i].label, status_word(r));
			if (r->status == ILAB_CASE_OK)
				fprintf(o->progress, " (%.2f s)\n", r->host_seconds);
			else
				fprintf(o->progress, ": %s\n", r->message);
			fflush(o->progress);
		}
	}
	free(rs);
	*out = res;
	return 0;
}

void ilab_scenario_result_free(struct ilab_scenario_result *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->nr_cases; i++) {
		free(r->cases[i].stats_json);
		free(r->cases[i].runs);
	}
	free(r->cases);
	free(r);
}

/* ---- finding the built-in scenarios --------------------------------------------------------- */

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int ilab_scenario_dir(char *buf, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("IOMMULAB_DATADIR");

	/* An explicit override wins, and is not second-guessed: a wrong one is an error. */
	if (env && *env) {
		snprintf(buf, len, "%s/scenarios", env);
		if (is_dir(buf))
			return 0;
		snprintf(err, errlen, "IOMMULAB_DATADIR=%s: no scenarios/ directory there", env);
		return -ENOENT;
	}
	snprintf(buf, len, "%s/scenarios", ILAB_SRCDIR);
	if (is_dir(buf))
		return 0;
	snprintf(buf, len, "%s/scenarios", ILAB_DATADIR);
	if (is_dir(buf))
		return 0;
	snprintf(err, errlen,
		 "no built-in scenarios: looked in %s/scenarios and %s/scenarios (set IOMMULAB_DATADIR)",
		 ILAB_SRCDIR, ILAB_DATADIR);
	return -ENOENT;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_yaml_suffix(const char *n)
{
	size_t l = strlen(n);

	return l > 5 && strcmp(n + l - 5, ".yaml") == 0 && n[0] != '.';
}

int ilab_scenario_builtin_list(char ***paths, char *err, size_t errlen)
{
	char dir[ILAB_SCN_PATH_MAX];
	struct dirent *e;
	size_t nr = 0, bytes = 0, dlen;
	char **arr, *strs;
	DIR *d;
	int ret;

	*paths = NULL;
	if ((ret = ilab_scenario_dir(dir, sizeof(dir), err, errlen)))
		return ret;
	d = opendir(dir);
	if (!d) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	dlen = strlen(dir);
	while ((e = readdir(d)) != NULL)
		if (has_yaml_suffix(e->d_name)) {
			nr++;
			bytes += dlen + 1 + strlen(e->d_name) + 1;
		}
	/* One block: the pointer array, then the strings. */
	arr = malloc((nr + 1) * sizeof(*arr) + bytes);
	if (!arr) {
		closedir(d);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	strs = (char *)(arr + nr + 1);
	rewinddir(d);
	size_t i = 0;
	while ((e = readdir(d)) != NULL && i < nr)
		if (has_yaml_suffix(e->d_name)) {
			size_t l = dlen + 1 + strlen(e->d_name) + 1;

			if ((size_t)(strs - (char *)(arr + nr + 1)) + l > bytes)
				break; /* the directory grew between the two passes */
			snprintf(strs, l, "%s/%s", dir, e->d_name);
			arr[i++] = strs;
			strs += l;
		}
	closedir(d);
	arr[i] = NULL;
	qsort(arr, i, sizeof(*arr), cmp_str);
	*paths = arr;
	return (int)i;
}

/* "seed000-cmdsync.yaml" matches "seed000-cmdsync", "seed000", "000" and "cmdsync". */
static bool name_matches(const char *file, const char *what)
{
	const char *base = strrchr(file, '/');
	char stem[256];
	size_t l;

	base = base ? base + 1 : file;
	snprintf(stem, sizeof(stem), "%s", base);
	l = strlen(stem);
	if (l > 5)
		stem[l - 5] = '\0';
	if (strcmp(stem, what) == 0)
		return true;
	if (strncmp(stem, "seed", 4) == 0 && strlen(stem) >= 7) {
		const char *id = stem + 4, *rest = stem + 7;

		if (strlen(what) == 3 && strncmp(id, what, 3) == 0)
			return true;
		if (strncmp(what, "seed", 4) == 0 && strlen(what) == 7 && strncmp(id, what + 4, 3) == 0)
			return true;
		if (*rest == '-' && strcmp(rest + 1, what) == 0)
			return true;
	}
	return false;
}

int ilab_scenario_resolve(const char *what, char *path, size_t len, char *err, size_t errlen)
{
	char **list;
	int n;

	if (strchr(what, '/') || is_file(what)) {
		struct stat st;

		snprintf(path, len, "%s", what);
		if (is_file(path))
			return 0;
		/* say why: "no such file" for a directory or /dev/null misleads */
		if (stat(path, &st) != 0)
			snprintf(err, errlen, "%s: no such scenario file (%s)", what, strerror(errno));
		else
			snprintf(err, errlen, "%s: not a scenario file (%s)", what,
				 S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		return -ENOENT;
	}
	n = ilab_scenario_builtin_list(&list, err, errlen);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if (name_matches(list[i], what)) {
			snprintf(path, len, "%s", list[i]);
			free(list);
			return 0;
		}
	{
		size_t off = (size_t)snprintf(err, errlen, "unknown scenario '%s' (known:", what);

		for (int i = 0; i < n && off < errlen; i++) {
			const char *b = strrchr(list[i], '/');

			b = b ? b + 1 : list[i];
			off += (size_t)snprintf(err + off, errlen - off, " %.*s", (int)strlen(b) - 5, b);
		}
		if (off < errlen)
			snprintf(err + off, errlen - off, ")");
	}
	free(list);
	return -ENOENT;
}
