/* test_report_verdicts.c — every verdict ilab_compare and ilab_compare_effect can give, on both
 * sides of each bound: a figure within, above or below its tolerance (which depends on the
 * reference's kind or its own tolerance), with no data (not implemented, failed, not reported,
 * not finite); "gt" and "lt" bounds, which only fail on one side; and every effect verdict
 * (same, opposite, missing, spurious, no_data) on either side of the ±2% flat band. Tolerances
 * are powers of two so that the boundary cases are exact in binary. A test workload returns
 * fixed figures: this checks the judging, it measures nothing.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/report.h"
#include "iommulab/scenario.h"
#include "support/scenario_fixture.h"

static const struct ilab_workload_metric metrics[] = {
	{ "lat", "ns", "a latency" },
	{ "bw", "GB/s", "a bandwidth (never reported: no data)" },
	{ NULL, NULL, NULL },
};

/* ours, per case label; a label not listed fails the case */
static const struct {
	const char *label;
	double lat;
} ours[] = {
	/* figures against 100, by kind (calibration ±12.5%, prediction ±25%) */
	{ "eq_hi_edge", 125 },	{ "eq_above", 126 },	{ "eq_lo_edge", 75 },
	{ "eq_below", 74 },	{ "cal_120", 120 },	{ "pred_120", 120 },
	{ "undec_120", 120 },	{ "own_tol", 140 },	{ "cal_edge", 112.5 },
	{ "nan", NAN },		{ "inf", INFINITY },
	/* bounds against 100 */
	{ "gt_far_above", 1000 }, { "gt_edge", 75 },	{ "gt_below", 74 },
	{ "lt_far_below", 1 },	{ "lt_edge", 125 },	{ "lt_above", 126 },
	/* effects: the seed's change is set by the references below */
	{ "base", 100 },	{ "up50", 150 },	{ "down50", 50 },
	{ "up1_9", 101.9 },	{ "down1_9", 98.1 },	{ "up2_1", 102.1 },
	{ "down2_1", 97.9 },	{ "zero", 0 },
};

static int run(const struct ilab_scenario *s, const struct ilab_case *c,
	       struct ilab_case_result *r, char *err, size_t errlen)
{
	(void)s;
	if (!strcmp(c->label, "not_impl"))
		return -ENOSYS;
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strcmp(c->label, ours[i].label))
			return ilab_case_result_add(r, "lat", "ns", ours[i].lat);
	snprintf(err, errlen, "device fell over");
	return -EIO;
}

static const struct ilab_workload_param no_params[] = { { NULL, 0, 0, 0, false, NULL, false } };
static const struct ilab_workload verdicts_wl = {
	"test_verdicts", run, "fixed figures for verdict tests", "issue 19", no_params, metrics,
	false, NULL, NULL,
};

#define CASE(label, v, kind, extra)                                                          \
	"  - label: " label "\n"                                                            \
	"    reference: [ { metric: lat, value: " #v ", unit: ns, kind: " kind extra " } ]\n"
#define PRED(label, v) CASE(label, v, "prediction", "")

static const char text[] =
	"name: verdicts-test\nseed: \"042\"\ntitle: \"verdicts\"\nprofile: kunpeng920\n"
	"workload: { type: test_verdicts }\n"
	"tolerance: { calibration: 0.125, prediction: 0.25 }\n"
	"cases:\n"
	PRED("eq_hi_edge", 100) PRED("eq_above", 100) PRED("eq_lo_edge", 100) PRED("eq_below", 100)
	CASE("cal_120", 100, "calibration", "") PRED("pred_120", 100)
	CASE("undec_120", 100, "undecided", "") CASE("own_tol", 100, "calibration", ", tolerance: 0.5")
	CASE("cal_edge", 100, "calibration", "")
	PRED("nan", 100) PRED("inf", 100) PRED("not_impl", 100) PRED("broken", 100)
	"  - label: unreported\n"
	"    reference: [ { metric: bw, value: 10, unit: GB/s, kind: prediction } ]\n"
	CASE("gt_far_above", 100, "prediction", ", relation: gt")
	CASE("gt_edge", 100, "prediction", ", relation: gt")
	CASE("gt_below", 100, "prediction", ", relation: gt")
	CASE("lt_far_below", 100, "prediction", ", relation: lt")
	CASE("lt_edge", 100, "prediction", ", relation: lt")
	CASE("lt_above", 100, "prediction", ", relation: lt")
	/* the seed's figures of the effect cases: base 100, then +50%, -50%, ±1.9%, ±2.1% */
	PRED("base", 100) PRED("up50", 150) PRED("down50", 50) PRED("up1_9", 101.9)
	PRED("down1_9", 98.1) PRED("up2_1", 102.1) PRED("down2_1", 97.9) PRED("zero", 100)
	"effects:\n"
	/* ours changes like the seed's: +50/+50, -50/-50, +1.9/+1.9 and -1.9/-1.9 (flat) */
	"  - { label: same_up, metric: lat, from: base, to: up50 }\n"
	"  - { label: same_down, metric: lat, from: base, to: down50 }\n"
	"  - { label: same_flat_up, metric: lat, from: base, to: up1_9 }\n"
	"  - { label: same_flat_down, metric: lat, from: base, to: down1_9 }\n"
	"  - { label: same_edge_up, metric: lat, from: base, to: up2_1 }\n"
	"  - { label: same_edge_down, metric: lat, from: base, to: down2_1 }\n"
	/* the reverse of each: from the changed case back to base */
	"  - { label: same_back_from_up, metric: lat, from: up50, to: base }\n"
	/* between two changed cases, and where one figure is missing or ours is 0 */
	"  - { label: down_to_up, metric: lat, from: down50, to: up50 }\n"
	"  - { label: no_data_from, metric: lat, from: broken, to: base }\n"
	"  - { label: no_data_to, metric: lat, from: base, to: not_impl }\n"
	"  - { label: no_data_zero, metric: lat, from: zero, to: base }\n";

static int setup(void **state)
{
	static struct scenario_fixture f;

	if (scenario_fixture_up(&f, &verdicts_wl, text, "verdicts.yaml"))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	scenario_fixture_down(*state);
	return 0;
}

static unsigned case_index(const struct scenario_fixture *f, const char *label)
{
	for (unsigned i = 0; i < f->s->nr_cases; i++)
		if (!strcmp(f->s->cases[i].label, label))
			return i;
	fail_msg("no case %s", label);
	return 0;
}

static struct ilab_comparison judge(const struct scenario_fixture *f, const char *label)
{
	unsigned i = case_index(f, label);
	struct ilab_comparison c;

	ilab_compare(f->s, &f->s->cases[i].refs[0], &f->r->cases[i], &c);
	return c;
}

static void expect(const struct scenario_fixture *f, const char *label, enum ilab_verdict v)
{
	struct ilab_comparison c = judge(f, label);

	if (c.verdict != v)
		fail_msg("%s: verdict %s (ratio %g, tolerance %g), want %s", label,
			 ilab_verdict_name(c.verdict), c.ratio, c.tolerance, ilab_verdict_name(v));
}

static void test_figure_within_above_below(void **state)
{
	struct scenario_fixture *f = *state;

	/* ±25% is inclusive on both sides, and one ns past it is outside */
	expect(f, "eq_hi_edge", ILAB_VERDICT_WITHIN);
	expect(f, "eq_above", ILAB_VERDICT_OUTSIDE);
	expect(f, "eq_lo_edge", ILAB_VERDICT_WITHIN);
	expect(f, "eq_below", ILAB_VERDICT_OUTSIDE);
	assert_true(judge(f, "eq_above").ratio == 1.26);
	assert_true(judge(f, "eq_below").ratio == 0.74);
}

static void test_tolerance_by_kind(void **state)
{
	struct scenario_fixture *f = *state;

	/* +20%: outside a calibration's 12.5%, within a prediction's 25%; undecided is judged
	 * as a prediction until calibrated; a reference's own tolerance wins over its kind's */
	expect(f, "cal_120", ILAB_VERDICT_OUTSIDE);
	assert_true(judge(f, "cal_120").tolerance == 0.125);
	expect(f, "cal_edge", ILAB_VERDICT_WITHIN);
	expect(f, "pred_120", ILAB_VERDICT_WITHIN);
	assert_true(judge(f, "pred_120").tolerance == 0.25);
	expect(f, "undec_120", ILAB_VERDICT_WITHIN);
	assert_true(judge(f, "undec_120").tolerance == 0.25);
	expect(f, "own_tol", ILAB_VERDICT_WITHIN);
	assert_true(judge(f, "own_tol").tolerance == 0.5);
}

static void test_no_data(void **state)
{
	struct scenario_fixture *f = *state;
	const char *const labels[] = { "nan", "inf", "not_impl", "broken", "unreported" };

	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		struct ilab_comparison c = judge(f, labels[i]);

		if (c.verdict != ILAB_VERDICT_NO_DATA || c.have_ours)
			fail_msg("%s: verdict %s, have_ours %d; want no_data", labels[i],
				 ilab_verdict_name(c.verdict), c.have_ours);
	}
	assert_string_equal(ilab_verdict_name(ILAB_VERDICT_NO_DATA), "no_data");
	assert_string_equal(ilab_verdict_name(ILAB_VERDICT_WITHIN), "within");
	assert_string_equal(ilab_verdict_name(ILAB_VERDICT_OUTSIDE), "outside");
}

/* "> x": any figure above passes, and one below fails only past the tolerance. */
static void test_gt_bound(void **state)
{
	struct scenario_fixture *f = *state;

	expect(f, "gt_far_above", ILAB_VERDICT_WITHIN);
	expect(f, "gt_edge", ILAB_VERDICT_WITHIN);
	expect(f, "gt_below", ILAB_VERDICT_OUTSIDE);
}

/* "< x": any figure below passes, and one above fails only past the tolerance. */
static void test_lt_bound(void **state)
{
	struct scenario_fixture *f = *state;

	expect(f, "lt_far_below", ILAB_VERDICT_WITHIN);
	expect(f, "lt_edge", ILAB_VERDICT_WITHIN);
	expect(f, "lt_above", ILAB_VERDICT_OUTSIDE);
}

static struct ilab_effect_comparison effect(const struct scenario_fixture *f, const char *label)
{
	struct ilab_effect_comparison c = { 0 };

	for (unsigned i = 0; i < f->s->nr_effects; i++)
		if (!strcmp(f->s->effects[i].label, label)) {
			ilab_compare_effect(f->r, &f->s->effects[i], &c);
			return c;
		}
	fail_msg("no effect %s", label);
	return c;
}

static void expect_effect(const struct scenario_fixture *f, const char *label,
			  enum ilab_effect_verdict v)
{
	struct ilab_effect_comparison c = effect(f, label);

	if (c.verdict != v)
		fail_msg("%s: verdict %s (seed %+g, ours %+g), want %s", label,
			 ilab_effect_verdict_name(c.verdict), c.seed_change, c.ours_change,
			 ilab_effect_verdict_name(v));
}

static void test_effects_same_and_opposite(void **state)
{
	struct scenario_fixture *f = *state;

	expect_effect(f, "same_up", ILAB_EFFECT_SAME);
	expect_effect(f, "same_down", ILAB_EFFECT_SAME);
	expect_effect(f, "same_back_from_up", ILAB_EFFECT_SAME);
	expect_effect(f, "down_to_up", ILAB_EFFECT_SAME); /* +200% both */
	expect_effect(f, "no_data_from", ILAB_EFFECT_NO_DATA);
	expect_effect(f, "no_data_to", ILAB_EFFECT_NO_DATA);
	expect_effect(f, "no_data_zero", ILAB_EFFECT_NO_DATA);
	assert_false(effect(f, "no_data_zero").have_ours);
	assert_true(effect(f, "same_up").have_ours);
	assert_string_equal(ilab_effect_verdict_name(ILAB_EFFECT_NO_DATA), "no_data");
}

/* Effects whose seed's and our changes differ: the seed's figure of the `to` case is set in
 * place for each combination (ours +50% against the seed's +50%, -50%, ±1.9%, and so on), and
 * restored after each check. */
struct swap {
	struct ilab_reference *ref;
	double saved;
};

static struct swap set_seed(struct scenario_fixture *f, const char *label, double v)
{
	struct swap sw;

	sw.ref = &f->s->cases[case_index(f, label)].refs[0];
	sw.saved = sw.ref->value;
	sw.ref->value = v;
	return sw;
}

static void check_combination(struct scenario_fixture *f, const char *to, double seed_to,
			      enum ilab_effect_verdict want)
{
	const struct ilab_effect *e = NULL;
	struct ilab_effect_comparison c;
	struct swap sw;

	for (unsigned i = 0; i < f->s->nr_effects; i++)
		if (!strcmp(f->s->cases[f->s->effects[i].to].label, to) &&
		    !strcmp(f->s->cases[f->s->effects[i].from].label, "base"))
			e = &f->s->effects[i];
	if (!e)
		fail_msg("no effect base -> %s", to);
	sw = set_seed(f, to, seed_to);
	ilab_compare_effect(f->r, e, &c);
	sw.ref->value = sw.saved;
	if (c.verdict != want)
		fail_msg("base -> %s, seed %g: verdict %s (seed %+g, ours %+g), want %s", to,
			 seed_to, ilab_effect_verdict_name(c.verdict), c.seed_change, c.ours_change,
			 ilab_effect_verdict_name(want));
}

static void test_effect_verdicts_by_direction(void **state)
{
	struct scenario_fixture *f = *state;

	/* ours +50%: the seed up, down, flat */
	check_combination(f, "up50", 150, ILAB_EFFECT_SAME);
	check_combination(f, "up50", 50, ILAB_EFFECT_OPPOSITE);
	check_combination(f, "up50", 101.9, ILAB_EFFECT_SPURIOUS);
	check_combination(f, "up50", 98.1, ILAB_EFFECT_SPURIOUS);
	/* ours -50% */
	check_combination(f, "down50", 150, ILAB_EFFECT_OPPOSITE);
	check_combination(f, "down50", 50, ILAB_EFFECT_SAME);
	check_combination(f, "down50", 100, ILAB_EFFECT_SPURIOUS);
	/* ours flat (+1.9%, -1.9%): the seed's change is missing, or both are flat */
	check_combination(f, "up1_9", 150, ILAB_EFFECT_MISSING);
	check_combination(f, "up1_9", 50, ILAB_EFFECT_MISSING);
	check_combination(f, "up1_9", 98.1, ILAB_EFFECT_SAME);
	check_combination(f, "down1_9", 150, ILAB_EFFECT_MISSING);
	check_combination(f, "down1_9", 101.9, ILAB_EFFECT_SAME);
	assert_string_equal(ilab_effect_verdict_name(ILAB_EFFECT_SAME), "same");
	assert_string_equal(ilab_effect_verdict_name(ILAB_EFFECT_OPPOSITE), "opposite");
	assert_string_equal(ilab_effect_verdict_name(ILAB_EFFECT_MISSING), "missing");
	assert_string_equal(ilab_effect_verdict_name(ILAB_EFFECT_SPURIOUS), "spurious");
}

/* The flat band is ±2%: 1.9% either way is no change, 2.1% either way is one; for the
 * seed's change and for ours alike. */
static void test_flat_band_edges(void **state)
{
	struct scenario_fixture *f = *state;

	/* ours ±2.1% is a change: against a flat seed it is spurious */
	check_combination(f, "up2_1", 101.9, ILAB_EFFECT_SPURIOUS);
	check_combination(f, "down2_1", 98.1, ILAB_EFFECT_SPURIOUS);
	check_combination(f, "up2_1", 102.1, ILAB_EFFECT_SAME);
	check_combination(f, "down2_1", 97.9, ILAB_EFFECT_SAME);
	check_combination(f, "up2_1", 97.9, ILAB_EFFECT_OPPOSITE);
	/* the seed's ±2.1% is a change: ours flat misses it */
	check_combination(f, "up1_9", 102.1, ILAB_EFFECT_MISSING);
	check_combination(f, "down1_9", 97.9, ILAB_EFFECT_MISSING);
	/* both within ±1.9%, in opposite directions: both flat, the same */
	check_combination(f, "up1_9", 98.1, ILAB_EFFECT_SAME);
	check_combination(f, "down1_9", 101.9, ILAB_EFFECT_SAME);
	expect_effect(f, "same_flat_up", ILAB_EFFECT_SAME);
	expect_effect(f, "same_flat_down", ILAB_EFFECT_SAME);
	expect_effect(f, "same_edge_up", ILAB_EFFECT_SAME);
	expect_effect(f, "same_edge_down", ILAB_EFFECT_SAME);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure_within_above_below),
		cmocka_unit_test(test_tolerance_by_kind),
		cmocka_unit_test(test_no_data),
		cmocka_unit_test(test_gt_bound),
		cmocka_unit_test(test_lt_bound),
		cmocka_unit_test(test_effects_same_and_opposite),
		cmocka_unit_test(test_effect_verdicts_by_direction),
		cmocka_unit_test(test_flat_band_edges),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
