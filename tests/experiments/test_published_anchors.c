/* test_published_anchors.c — the seeds' published figures and the tolerances they are judged
 * with, as every built-in scenario file gives them to the report, equal the anchor copy
 * tests/data/anchors/published-figures.txt line for line. The anchor file is edited only by
 * hand (no script writes it), and scripts/check-expected-moves.py requires an `Anchors:
 * <reason>` line in the message of any commit that changes it: a figure or tolerance changed
 * in a scenario file, or in the defaults of the code, fails here until a person says why.
 * Not what the simulator gives for them (test_results_regression.c pins that).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/report.h"
#include "iommulab/scenario.h"

#define MAX_LINES 1024
#define LINE_MAX_LEN 256

static const char *const kind_names[] = { "undecided", "calibration", "prediction" };
static const char *const rel_names[] = { "eq", "gt", "lt" };

struct lines {
	char (*l)[LINE_MAX_LEN];
	unsigned n;
};

static void add(struct lines *ls, const char *fmt, ...)
{
	va_list ap;

	assert_true(ls->n < MAX_LINES);
	va_start(ap, fmt);
	vsnprintf(ls->l[ls->n++], LINE_MAX_LEN, fmt, ap);
	va_end(ap);
}

/* One line per published figure: scenario, case, metric, value, unit, kind, relation, the
 * published tool's resolution and the tolerance the report applies. */
static void scenario_lines(const struct ilab_scenario *s, struct lines *ls)
{
	for (unsigned i = 0; i < s->nr_cases; i++) {
		const struct ilab_case *c = &s->cases[i];

		for (unsigned j = 0; j < c->nr_refs; j++) {
			const struct ilab_reference *r = &c->refs[j];

			add(ls, "anchor %s %s %s %.15g %s %s %s truncate=%.15g tolerance=%.15g", s->name,
			    c->label, r->metric, r->value, r->unit, kind_names[r->kind],
			    rel_names[r->relation], r->truncate, ilab_reference_tolerance(s, r));
		}
	}
}

static void file_lines(const char *path, struct lines *ls)
{
	char buf[LINE_MAX_LEN];
	FILE *f = fopen(path, "r");

	if (!f)
		fail_msg("%s: cannot open", path);
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		if (buf[0] && buf[0] != '#')
			add(ls, "%s", buf);
	}
	fclose(f);
}

static bool has(const struct lines *ls, const char *line)
{
	for (unsigned i = 0; i < ls->n; i++)
		if (!strcmp(ls->l[i], line))
			return true;
	return false;
}

static void test_published_figures_match_the_anchors(void **state)
{
	char **paths, err[1024];
	struct lines now = { calloc(MAX_LINES, LINE_MAX_LEN), 0 };
	struct lines want = { calloc(MAX_LINES, LINE_MAX_LEN), 0 };
	int n, bad = 0;

	(void)state;
	assert_non_null(now.l);
	assert_non_null(want.l);
	unsetenv("IOMMULAB_DATADIR");
	n = ilab_scenario_builtin_list(&paths, err, sizeof(err));
	if (n < 0)
		fail_msg("%s", err);
	for (int i = 0; i < n; i++) {
		struct ilab_scenario *s;

		if (ilab_scenario_load(paths[i], &s, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		scenario_lines(s, &now);
		ilab_scenario_free(s);
	}
	free(paths);
	file_lines(ILAB_TESTDATA "/anchors/published-figures.txt", &want);
	/* Each difference on its own line, so that a person can judge it and edit the file. */
	for (unsigned i = 0; i < now.n; i++)
		if (!has(&want, now.l[i])) {
			fprintf(stderr, "not in the anchors: %s\n", now.l[i]);
			bad++;
		}
	for (unsigned i = 0; i < want.n; i++)
		if (!has(&now, want.l[i])) {
			fprintf(stderr, "anchored but not given: %s\n", want.l[i]);
			bad++;
		}
	assert_true(now.n > 0);
	assert_int_equal(now.n, want.n);
	assert_int_equal(bad, 0);
	free(now.l);
	free(want.l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_figures_match_the_anchors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
