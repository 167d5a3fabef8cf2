/* test_report_effects.c — published effects (scenario "effects:"): the seed's change of a
 * metric from one case to another against ours, judged by direction with a ±2% flat band,
 * on truncated figures like the comparisons, with "> x" bounds flagged; two runs with the
 * same engine statistics flagged as identical; and how the table, the result JSON and its
 * summary show them. A test workload returns fixed figures (and, for some cases, statistics).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/report.h"
#include "iommulab/scenario.h"
#include "support/scenario_fixture.h"

static const struct ilab_workload_metric metrics[] = {
	{ "lat", "ns", "a latency" },
	{ "t", "us", "a latency in 100 ns units" },
	{ NULL, NULL, NULL },
};

struct fixed {
	const char *label, *metric;
	double value;
};

/* ours, per case */
static const struct fixed ours[] = {
	{ "base", "lat", 100 },      { "up", "lat", 130 },        { "down", "lat", 120 },
	{ "flat_seed", "lat", 150 }, { "flat_ours", "lat", 101 }, { "both_flat", "lat", 99.5 },
	{ "gt", "lat", 900 },        { "ta", "t", 0.19 },         { "tb", "t", 0.15 },
	{ "twin_a", "lat", 120 },    { "twin_b", "lat", 120 },    { "twin_c", "lat", 120 },
	{ "nostats", "lat", 120 },
};

/* engine statistics, per case: twin_a and twin_b ran the same, twin_c did something else */
static const char *stats_of(const char *label)
{
	if (!strcmp(label, "twin_a") || !strcmp(label, "twin_b"))
		return "{\"smmu\": {\"commands\": 7}}";
	if (!strcmp(label, "twin_c"))
		return "{\"smmu\": {\"commands\": 8}}";
	return NULL;
}

static int run(const struct ilab_scenario *s, const struct ilab_case *c,
	       struct ilab_case_result *r, char *err, size_t errlen)
{
	(void)s;
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (strcmp(c->label, ours[i].label) == 0) {
			const char *st = stats_of(c->label);

			if (st && !(r->stats_json = strdup(st)))
				return -ENOMEM;
			return ilab_case_result_add(r, ours[i].metric,
						    strcmp(ours[i].metric, "t") ? "ns" : "us",
						    ours[i].value);
		}
	snprintf(err, errlen, "device fell over");
	return -EIO;
}

static const struct ilab_workload_param no_params[] = { { NULL, 0, 0, 0, false, NULL, false } };
static const struct ilab_workload effects_wl = {
	"test_effects", run, "fixed figures for effect tests", "", no_params, metrics, false, NULL,
	NULL,
};

#define REF(v) "    reference: [ { metric: lat, value: " #v ", unit: ns, kind: prediction } ]\n"
static const char text[] =
	"name: effects-test\nseed: \"042\"\ntitle: \"effects\"\nprofile: kunpeng920\n"
	"workload: { type: test_effects }\n"
	"cases:\n"
	"  - label: base\n" REF(100)
	"  - label: up\n" REF(150)
	"  - label: down\n" REF(50)
	"  - label: flat_seed\n" REF(101)
	"  - label: flat_ours\n" REF(200)
	"  - label: both_flat\n" REF(99)
	"  - label: broken\n" REF(80)
	"  - label: gt\n"
	"    reference: [ { metric: lat, value: 550, unit: ns, kind: prediction, relation: gt } ]\n"
	"  - label: ta\n"
	"    reference: [ { metric: t, value: 0.1, unit: us, kind: prediction, truncate: 0.1 } ]\n"
	"  - label: tb\n"
	"    reference: [ { metric: t, value: 0.2, unit: us, kind: prediction, truncate: 0.1 } ]\n"
	"  - label: twin_a\n" REF(100)
	"  - label: twin_b\n" REF(140)
	"  - label: twin_c\n" REF(140)
	"  - label: nostats\n" REF(140)
	"effects:\n"
	"  - { label: same, metric: lat, from: base, to: up }\n"
	"  - { label: opposite, metric: lat, from: base, to: down }\n"
	"  - { label: spurious, metric: lat, from: base, to: flat_seed }\n"
	"  - { label: missing, metric: lat, from: base, to: flat_ours }\n"
	"  - { label: flat, metric: lat, from: base, to: both_flat }\n"
	"  - { label: nodata, metric: lat, from: base, to: broken }\n"
	"  - { label: bound, metric: lat, from: gt, to: base }\n"
	"  - { label: truncated, metric: t, from: ta, to: tb }\n"
	"  - { label: twins, metric: lat, from: twin_a, to: twin_b }\n"
	"  - { label: not_twins, metric: lat, from: twin_a, to: twin_c }\n"
	"  - { label: no_stats, metric: lat, from: nostats, to: twin_a }\n";

static int setup(void **state)
{
	static struct scenario_fixture f;

	if (scenario_fixture_up(&f, &effects_wl, text, "effects.yaml"))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	scenario_fixture_down(*state);
	return 0;
}

static struct ilab_effect_comparison judge(const struct scenario_fixture *f, const char *label)
{
	struct ilab_effect_comparison c = { 0 };

	for (unsigned i = 0; i < f->s->nr_effects; i++)
		if (strcmp(f->s->effects[i].label, label) == 0) {
			ilab_compare_effect(f->r, &f->s->effects[i], &c);
			return c;
		}
	fail_msg("no effect %s", label);
	return c;
}

/* A published change ours does not show, and whether the two runs were the same. */
static void expect_missing(const struct scenario_fixture *f, const char *label, bool identical)
{
	struct ilab_effect_comparison c = judge(f, label);

	assert_int_equal(c.verdict, ILAB_EFFECT_MISSING);
	assert_int_equal(c.identical_runs, identical);
}

static void test_parsed(void **state)
{
	struct scenario_fixture *f = *state;
	const struct ilab_effect *e = &f->s->effects[7];

	assert_int_equal(f->s->nr_effects, 11);
	assert_string_equal(e->label, "truncated");
	assert_string_equal(f->s->cases[e->from].label, "ta");
	assert_string_equal(f->s->cases[e->to].label, "tb");
	assert_int_equal(e->from_ref, 0);
}

static void test_verdicts(void **state)
{
	struct scenario_fixture *f = *state;
	struct ilab_effect_comparison c;

	c = judge(f, "same");
	assert_int_equal(c.verdict, ILAB_EFFECT_SAME);
	assert_true(fabs(c.seed_change - 0.5) < 1e-12 && fabs(c.ours_change - 0.3) < 1e-12);
	assert_false(c.bound);
	assert_int_equal(judge(f, "opposite").verdict, ILAB_EFFECT_OPPOSITE);
	assert_int_equal(judge(f, "spurious").verdict, ILAB_EFFECT_SPURIOUS);   /* seed +1% */
	assert_int_equal(judge(f, "missing").verdict, ILAB_EFFECT_MISSING);     /* ours +1% */
	assert_int_equal(judge(f, "flat").verdict, ILAB_EFFECT_SAME);           /* -1% / -0.5% */
	c = judge(f, "nodata");
	assert_int_equal(c.verdict, ILAB_EFFECT_NO_DATA);
	assert_false(c.have_ours);
	c = judge(f, "bound");
	assert_int_equal(c.verdict, ILAB_EFFECT_SAME);
	assert_true(c.bound);
	assert_true(fabs(c.seed_change - (100.0 / 550 - 1)) < 1e-12);
	/* 0.19 and 0.15 both print as 0.1: no change of ours, the seed's doubles */
	c = judge(f, "truncated");
	assert_int_equal(c.verdict, ILAB_EFFECT_MISSING);
	assert_true(fabs(c.ours_change) < 1e-12);
	assert_false(c.identical_runs); /* no statistics: not known to be identical */
	/* the same published +40% and the same figures of ours; only the statistics differ */
	expect_missing(f, "twins", true);
	expect_missing(f, "not_twins", false);
	expect_missing(f, "no_stats", false);
	for (const char *const *l = (const char *const[]){ "same", "opposite", "spurious", NULL };
	     *l; l++)
		assert_false(judge(f, *l).identical_runs);
}

static void test_table_and_json(void **state)
{
	struct scenario_fixture *f = *state;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	json_t *j, *effects, *e, *sum;

	assert_non_null(m);
	assert_int_equal(ilab_report_table(f->r, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "opposite (base -> down)"));
	assert_non_null(strstr(buf, "OPPOSITE"));
	assert_non_null(strstr(buf, "NOT REPRODUCED"));
	assert_non_null(strstr(buf, "+50.0%"));
	assert_non_null(strstr(buf, "(bound)"));
	/* only the twins' row says so */
	{
		const char *twins = strstr(buf, "twins (twin_a -> twin_b)");
		const char *flag = strstr(buf, "NOT REPRODUCED (identical runs)");

		assert_non_null(twins);
		assert_non_null(flag);
		assert_true(flag > twins && !memchr(twins, '\n', (size_t)(flag - twins)));
		assert_null(strstr(flag + strlen("NOT REPRODUCED (identical runs)"), "(identical runs)"));
	}
	free(buf);

	j = ilab_result_json(f->r);
	assert_non_null(j);
	effects = json_object_get(j, "effects");
	assert_true(json_is_array(effects));
	assert_int_equal(json_array_size(effects), 11);
	assert_true(json_is_true(json_object_get(json_array_get(effects, 8), "identical_runs")));
	assert_true(json_is_false(json_object_get(json_array_get(effects, 9), "identical_runs")));
	assert_true(json_is_false(json_object_get(json_array_get(effects, 0), "identical_runs")));
	e = json_array_get(effects, 1);
	assert_string_equal(json_string_value(json_object_get(e, "verdict")), "opposite");
	assert_string_equal(json_string_value(json_object_get(e, "from")), "base");
	assert_string_equal(json_string_value(json_object_get(e, "to")), "down");
	assert_true(json_is_number(json_object_get(e, "seed_change")));
	assert_true(json_is_null(json_object_get(json_array_get(effects, 5), "ours_change")));
	assert_true(json_is_true(json_object_get(json_array_get(effects, 6),
						 "seed_change_is_bound")));
	sum = json_object_get(j, "summary");
	assert_int_equal(json_integer_value(json_object_get(sum, "effects")), 11);
	assert_int_equal(json_integer_value(json_object_get(sum, "effects_missed_identical_runs")), 1);
	/* same, flat, bound */
	assert_int_equal(json_integer_value(json_object_get(sum, "effects_same_direction")), 3);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parsed),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_table_and_json),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
