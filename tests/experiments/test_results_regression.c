/* test_results_regression.c — pins the simulated results: `iommulab run --quick --json` is run
 * and every figure of every case (not only those with a published value) is compared with the
 * committed expectation tests/data/expected/quick-figures.txt, as is each case's status. Any
 * figure that moves is named with its old and new value. Not a check of the figures against
 * the published ones (that is the report's job): this catches any change, wanted or not.
 *
 * A change on purpose: scripts/update-expected.sh rewrites the file (this program with
 * ILAB_UPDATE_EXPECTED=<path>), and the diff shows in review.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#define EXPECTED ILAB_TESTDATA "/expected/quick-figures.txt"

/*
 * Relative tolerance of every figure. The simulator is deterministic: gcc, clang and the
 * profile-guided build give byte-identical JSON (.ci/run compares them), so a figure can only
 * move when the model or a workload changes. The JSON holds 15 significant digits (a rounding
 * of at most 5e-15), and the expectation file writes back exactly what it read; 1e-9 leaves
 * room for a last-bit difference of libm on another platform and still catches a change of
 * one nanosecond in a millisecond figure (1e-6).
 */
#define REL_TOL 1e-9

#define NAME_MAX_LEN 128
#define MAX_ENTRIES 4096

/* One line of the expectation: a case's status (metric empty) or one figure of a case. */
struct entry {
	char scenario[NAME_MAX_LEN], label[NAME_MAX_LEN], metric[NAME_MAX_LEN];
	char text[NAME_MAX_LEN]; /* status, or unit of a figure */
	double value;
	bool seen;
};

struct entries {
	unsigned n;
	struct entry e[MAX_ENTRIES];
};

static char *slurp(FILE *f)
{
	size_t cap = 1 << 20, len = 0, got;
	char *buf = malloc(cap);

	assert_non_null(buf);
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/* The quick run's result JSON (an array of scenario results), from the built CLI. */
static json_t *quick_run(void)
{
	char dir[] = "/tmp/ilab-regress-XXXXXX", cmd[512], errpath[64];
	json_error_t jerr;
	json_t *j;
	char *out;
	FILE *p;
	int rc;

	assert_non_null(mkdtemp(dir));
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	/* the PNGs are not under test here: no gnuplot, no time spent drawing */
	snprintf(cmd, sizeof(cmd),
		 "IOMMULAB_GNUPLOT=/nonexistent '%s' run --quick --json --out '%s/res' 2>'%s'",
		 ILAB_CLI, dir, errpath);
	p = popen(cmd, "r");
	assert_non_null(p);
	out = slurp(p);
	rc = pclose(p);
	if (rc != 0) {
		FILE *e = fopen(errpath, "r");
		char *msg = e ? slurp(e) : strdup("(no stderr)");

		fail_msg("%s: %s %d\n%s", cmd, WIFEXITED(rc) ? "exit" : "status",
			 WIFEXITED(rc) ? WEXITSTATUS(rc) : rc, msg);
	}
	j = json_loads(out, 0, &jerr);
	if (!j || !json_is_array(j))
		fail_msg("run --quick --json: not a JSON array (%s, line %d)", jerr.text, jerr.line);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return j;
}

static void copy_token(char *dst, const char *src, const char *what)
{
	if (strlen(src) >= NAME_MAX_LEN || strpbrk(src, " \t\n") || !*src)
		fail_msg("%s '%s' cannot be written as one token of the expectation", what, src);
	strcpy(dst, src);
}

static struct entry *add(struct entries *es)
{
	if (es->n >= MAX_ENTRIES)
		fail_msg("more than %d figures: raise MAX_ENTRIES", MAX_ENTRIES);
	memset(&es->e[es->n], 0, sizeof(es->e[0]));
	return &es->e[es->n++];
}

/* Flatten the run into entries, in the run's order (scenarios, cases, figures sorted). */
static void flatten(json_t *runs, struct entries *es)
{
	size_t i, k;
	json_t *run, *c;

	es->n = 0;
	json_array_foreach(runs, i, run) {
		const char *scn = json_string_value(json_object_get(json_object_get(run, "scenario"),
								    "name"));

		if (!scn || !json_is_true(json_object_get(run, "quick")))
			fail_msg("scenario result %zu: no name, or not a quick run", i);
		json_array_foreach(json_object_get(run, "cases"), k, c) {
			const char *label = json_string_value(json_object_get(c, "label"));
			const char *status = json_string_value(json_object_get(c, "status"));
			const char *metric;
			json_t *fig;
			struct entry *e = add(es);

			if (!label || !status)
				fail_msg("%s case %zu: no label or status", scn, k);
			copy_token(e->scenario, scn, "scenario");
			copy_token(e->label, label, "label");
			copy_token(e->text, status, "status");
			json_object_foreach(json_object_get(c, "figures"), metric, fig) {
				json_t *v = json_object_get(fig, "value");
				const char *unit = json_string_value(json_object_get(fig, "unit"));

				e = add(es);
				copy_token(e->scenario, scn, "scenario");
				copy_token(e->label, label, "label");
				copy_token(e->metric, metric, "metric");
				copy_token(e->text, unit ? unit : "", "unit");
				if (!json_is_number(v))
					fail_msg("%s/%s %s: value is not a number", scn, label, metric);
				e->value = json_number_value(v);
			}
		}
	}
}

/* The shortest of %.15g (what the JSON holds) and %.17g that reads back as the same double:
 * 0.1 stays 0.1 in the file, for a readable diff. */
static const char *shortest(double v)
{
	static char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	return buf;
}

static void write_expected(const char *path, const struct entries *es)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "# Every figure of every case of `iommulab run --quick --json`, pinned by\n"
		   "# tests/experiments/test_results_regression.c (relative tolerance %g).\n"
		   "# Written by scripts/update-expected.sh: do not edit by hand.\n"
		   "# case <scenario> <label> <status>\n"
		   "# figure <scenario> <label> <metric> <value> <unit>\n", REL_TOL);
	for (unsigned i = 0; i < es->n; i++) {
		const struct entry *e = &es->e[i];

		if (!e->metric[0])
			fprintf(f, "case %s %s %s\n", e->scenario, e->label, e->text);
		else
			fprintf(f, "figure %s %s %s %s %s\n", e->scenario, e->label, e->metric,
				shortest(e->value), e->text);
	}
	if (fclose(f))
		fail_msg("cannot write %s: %s", path, strerror(errno));
}

static void read_expected(const char *path, struct entries *es)
{
	char line[1024], kind[16];
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		fail_msg("cannot read %s: %s (scripts/update-expected.sh writes it)", path,
			 strerror(errno));
	es->n = 0;
	while (fgets(line, sizeof(line), f)) {
		struct entry *e;
		int n;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		e = add(es);
		if (sscanf(line, "%15s", kind) != 1)
			fail_msg("%s:%u: empty record", path, lineno);
		if (!strcmp(kind, "case"))
			n = sscanf(line, "%*s %127s %127s %127s", e->scenario, e->label, e->text) - 3;
		else if (!strcmp(kind, "figure"))
			n = sscanf(line, "%*s %127s %127s %127s %lf %127s", e->scenario, e->label,
				   e->metric, &e->value, e->text) - 5;
		else
			n = -1;
		if (n != 0)
			fail_msg("%s:%u: malformed line: %s", path, lineno, line);
	}
	fclose(f);
}

static struct entry *find(struct entries *es, const struct entry *want)
{
	for (unsigned i = 0; i < es->n; i++) {
		struct entry *e = &es->e[i];

		if (!strcmp(e->scenario, want->scenario) && !strcmp(e->label, want->label) &&
		    !strcmp(e->metric, want->metric))
			return e;
	}
	return NULL;
}

static void report(bool quiet, const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* Within REL_TOL of the larger magnitude: 0 only matches 0 (to within denormals). */
static bool close_enough(double old, double now)
{
	return fabs(now - old) <= REL_TOL * fmax(fabs(old), fabs(now));
}

/* Compare, print every difference (unless quiet), return how many there are. */
static unsigned compare(struct entries *want, struct entries *got, bool quiet)
{
	unsigned bad = 0;

	for (unsigned i = 0; i < got->n; i++)
		got->e[i].seen = false;
	for (unsigned i = 0; i < want->n; i++) {
		const struct entry *w = &want->e[i];
		struct entry *g = find(got, w);

		if (!g) {
			report(quiet, "%s/%s %s: in the expectation, not in the run\n", w->scenario,
				    w->label, w->metric[0] ? w->metric : "(case)");
			bad++;
			continue;
		}
		g->seen = true;
		if (!w->metric[0]) {
			if (strcmp(w->text, g->text)) {
				report(quiet, "%s/%s: status %s, expected %s\n", w->scenario, w->label,
					    g->text, w->text);
				bad++;
			}
			continue;
		}
		if (strcmp(w->text, g->text)) {
			report(quiet, "%s/%s %s: unit %s, expected %s\n", w->scenario, w->label,
				    w->metric, g->text, w->text);
			bad++;
		}
		if (!close_enough(w->value, g->value)) {
			report(quiet, "%s/%s %s: %.15g %s, expected %.15g (%+.3g%%)\n", w->scenario,
				    w->label, w->metric, g->value, g->text, w->value,
				    w->value ? (g->value / w->value - 1) * 100 : INFINITY);
			bad++;
		}
	}
	for (unsigned i = 0; i < got->n; i++) {
		const struct entry *g = &got->e[i];

		if (!g->seen) {
			report(quiet, "%s/%s %s: in the run, not in the expectation\n", g->scenario,
				    g->label, g->metric[0] ? g->metric : "(case)");
			bad++;
		}
	}
	return bad;
}

static struct entries want, got;

static void test_quick_run_matches_the_expectation(void **state)
{
	const char *update = getenv("ILAB_UPDATE_EXPECTED");
	json_t *runs = quick_run();
	unsigned bad;

	(void)state;
	flatten(runs, &got);
	json_decref(runs);
	if (update && *update) {
		write_expected(update, &got);
		print_message("wrote %u lines to %s\n", got.n, update);
		return;
	}
	read_expected(EXPECTED, &want);
	bad = compare(&want, &got, false);
	if (bad)
		fail_msg("%u difference(s) from %s; if the change is wanted, run "
			 "scripts/update-expected.sh and commit the file with it",
			 bad, EXPECTED);
}

/* The comparison itself can fail: a figure that moves, one that appears, a status. */
static void test_comparison_names_what_moved(void **state)
{
	static struct entries a, b;
	struct entry base = { "s", "c", "lat", "ns", 100, false };
	struct entry st = { "s", "c", "", "ok", 0, false };

	(void)state;
	a.n = b.n = 2;
	a.e[0] = b.e[0] = st;
	a.e[1] = b.e[1] = base;
	assert_int_equal(compare(&a, &b, true), 0);
	b.e[1].value = 100 * (1 + REL_TOL / 2);
	assert_int_equal(compare(&a, &b, true), 0);
	b.e[1].value = 100 * (1 + REL_TOL * 2);
	assert_int_equal(compare(&a, &b, true), 1);
	b.e[1].value = 100;
	strcpy(b.e[0].text, "failed");
	assert_int_equal(compare(&a, &b, true), 1);
	strcpy(b.e[0].text, "ok");
	b.n = 1; /* the figure disappeared */
	assert_int_equal(compare(&a, &b, true), 1);
	a.n = 1;
	b.n = 2; /* a new figure */
	assert_int_equal(compare(&a, &b, true), 1);
	/* zero matches only zero */
	a.n = 2;
	a.e[1].value = 0;
	b.e[1].value = 1e-300;
	assert_int_equal(compare(&a, &b, true), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comparison_names_what_moved),
		cmocka_unit_test(test_quick_run_matches_the_expectation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
