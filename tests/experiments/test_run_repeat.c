/* test_run_repeat.c — `iommulab run --seed/--repeat` in the runner and the report: every case
 * runs with seeds S .. S+N-1, its figures are the means (exactly one run's value when all runs
 * agree), min, max and standard deviation go into the JSON, an effect whose change is smaller
 * than its spread across seeds is flagged within_spread, and a default run (seed 1, once)
 * carries none of the new keys. A test workload's figures depend on the seed it is given.
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

static const struct ilab_workload_metric metrics[] = {
	{ "lat", "ns", "a latency" },
	{ NULL, NULL, NULL },
};

/* lat per case and seed (1, 2, 3, ...) */
static double lat_of(const char *label, uint64_t seed)
{
	static const double wobble[] = { 3, -3, 1 };

	if (!strcmp(label, "seeded"))
		return 100 + (double)seed; /* 101, 102, 103: mean 102, sd 1 */
	if (!strcmp(label, "noisy"))  /* changes from base: +3 %, -3 %, +1 %, sd about 3 % */
		return 100 + wobble[(seed - 1) % 3];
	if (!strcmp(label, "clear"))
		return 150 + (double)seed;
	if (!strcmp(label, "tenth"))
		return 0.1;
	return 100; /* base */
}

static int run(const struct ilab_scenario *s, const struct ilab_case *c,
	       struct ilab_case_result *r, char *err, size_t errlen)
{
	uint64_t seed = ilab_scenario_seed(s);

	if (!strcmp(c->label, "fails_later") && seed > 1) {
		snprintf(err, errlen, "device fell over");
		return -EIO;
	}
	if (!(r->stats_json = strdup(seed == 1 ? "{\"seed\": 1}" : "{\"seed\": 2}")))
		return -ENOMEM;
	return ilab_case_result_add(r, "lat", "ns", lat_of(c->label, seed));
}

static const struct ilab_workload_param no_params[] = { { NULL, 0, 0, 0, false, NULL, false } };
static const struct ilab_workload repeat_wl = {
	"test_repeat", run, "figures that depend on the seed", "", no_params, metrics, false, NULL,
	NULL,
};

#define REF(v) "    reference: [ { metric: lat, value: " #v ", unit: ns, kind: prediction } ]\n"
static const char text[] =
	"name: repeat-test\nseed: \"042\"\ntitle: \"repeat\"\nprofile: kunpeng920\n"
	"workload: { type: test_repeat }\n"
	"cases:\n"
	"  - label: base\n" REF(100)
	"  - label: seeded\n" REF(100)
	"  - label: noisy\n" REF(150)
	"  - label: clear\n" REF(150)
	"  - label: tenth\n" REF(0.1)
	"  - label: fails_later\n" REF(100)
	"effects:\n"
	"  - { label: noisy, metric: lat, from: base, to: noisy }\n"
	"  - { label: clear, metric: lat, from: base, to: clear }\n"
	"  - { label: flat, metric: lat, from: base, to: tenth }\n";

enum { BASE, SEEDED, NOISY, CLEAR, TENTH, FAILS_LATER };

static struct ilab_scenario *scn;

static int setup(void **state)
{
	char err[256];

	(void)state;
	if (!ilab_workload_find(repeat_wl.name) && ilab_workload_register(&repeat_wl))
		return -1;
	if (ilab_scenario_parse(text, sizeof(text) - 1, "repeat.yaml", &scn, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ilab_scenario_free(scn);
	return 0;
}

static struct ilab_scenario_result *run_with(uint64_t seed, unsigned repeat)
{
	struct ilab_scenario_result *r = NULL;
	char err[256];

	assert_int_equal(ilab_scenario_run(scn, &(struct ilab_run_options){ .seed = seed,
									     .repeat = repeat },
					   &r, err, sizeof(err)), 0);
	return r;
}

static struct ilab_effect_comparison effect(const struct ilab_scenario_result *r, unsigned i)
{
	struct ilab_effect_comparison c;

	ilab_compare_effect(r, &scn->effects[i], &c);
	return c;
}

static void test_means_and_spread(void **state)
{
	struct ilab_scenario_result *r = run_with(1, 3);
	struct ilab_spread sp;

	(void)state;
	assert_int_equal(r->repeat, 3);
	assert_true(ilab_figure_spread(&r->cases[SEEDED], 0, &sp));
	assert_int_equal(sp.n, 3);
	assert_true(r->cases[SEEDED].figures[0].value == 102);
	assert_true(sp.min == 101 && sp.max == 103);
	assert_true(fabs(sp.sd - 1) < 1e-12);
	/* identical runs: the mean is the run's value to the bit, and the spread 0 */
	assert_true(r->cases[TENTH].figures[0].value == 0.1);
	assert_true(ilab_figure_spread(&r->cases[BASE], 0, &sp));
	assert_true(sp.sd == 0 && sp.min == 100 && sp.max == 100);
	/* a later seed's failure is the case's, named by its seed */
	assert_int_equal(r->cases[FAILS_LATER].status, ILAB_CASE_FAILED);
	assert_non_null(strstr(r->cases[FAILS_LATER].message, "seed 2: device fell over"));
	ilab_scenario_result_free(r);
}

static void test_within_spread(void **state)
{
	struct ilab_scenario_result *r = run_with(1, 3);
	struct ilab_effect_comparison noisy = effect(r, 0), clear = effect(r, 1),
				      flat = effect(r, 2);

	(void)state;
	/* +0.33 % on the means against a spread of about 3.1 %: no direction */
	assert_true(noisy.have_spread);
	assert_true(fabs(noisy.ours_change - 1.0 / 300) < 1e-12);
	assert_true(noisy.change_sd > 0.03 && noisy.change_sd < 0.032);
	assert_true(fabs(noisy.change_min + 0.03) < 1e-12 && fabs(noisy.change_max - 0.03) < 1e-12);
	assert_true(noisy.within_spread);
	/* +52 % ± 1 %: a direction */
	assert_true(clear.have_spread && !clear.within_spread);
	/* no spread at all is never "within" it */
	assert_true(flat.have_spread && flat.change_sd == 0 && !flat.within_spread);
	ilab_scenario_result_free(r);
}

static void test_json_keys(void **state)
{
	struct ilab_scenario_result *r = run_with(1, 3);
	json_t *j = ilab_result_json(r), *fig, *eff, *sum;

	(void)state;
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "seeds"),
							    "count")), 3);
	fig = json_object_get(json_object_get(json_object_get(
		json_array_get(json_object_get(j, "cases"), SEEDED), "figures"), "lat"), "sd");
	assert_true(json_number_value(fig) == 1);
	eff = json_array_get(json_object_get(j, "effects"), 0);
	assert_true(json_is_true(json_object_get(eff, "within_spread")));
	assert_non_null(json_object_get(eff, "ours_change_sd"));
	sum = json_object_get(j, "summary");
	assert_int_equal(json_integer_value(json_object_get(sum, "effects_within_spread")), 1);
	json_decref(j);
	ilab_scenario_result_free(r);
}

/* The default run, and a single run with another seed. */
static void test_single_run(void **state)
{
	struct ilab_scenario_result *r = run_with(0, 0);
	json_t *j = ilab_result_json(r);
	char *text1 = json_dumps(j, JSON_SORT_KEYS);

	(void)state;
	assert_true(r->cases[SEEDED].figures[0].value == 101);
	assert_false(effect(r, 0).have_spread);
	/* none of the new keys: the default run's JSON is what it was */
	assert_null(strstr(text1, "\"seeds\""));
	assert_null(strstr(text1, "\"sd\""));
	assert_null(strstr(text1, "within_spread"));
	free(text1);
	json_decref(j);
	ilab_scenario_result_free(r);

	r = run_with(5, 1);
	assert_true(r->cases[SEEDED].figures[0].value == 105);
	j = ilab_result_json(r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "seeds"),
							    "first")), 5);
	json_decref(j);
	ilab_scenario_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_means_and_spread),
		cmocka_unit_test(test_within_spread),
		cmocka_unit_test(test_json_keys),
		cmocka_unit_test(test_single_run),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
