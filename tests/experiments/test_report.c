/* test_report.c — the report of a scenario result: comparison arithmetic (ratio, tolerance by
 * kind, "> x" bounds, truncation to the published resolution), the human table, the result JSON
 * (schema iommulab-result/1: keys, types, exact integers, sorted keys, round trip) and the plot.
 * A test workload returns fixed figures: this checks formatting, it measures nothing.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "iommulab/report.h"
#include "iommulab/scenario.h"
#include "support/scenario_fixture.h"
#include "support/skip.h"

static const struct ilab_workload_param fixed_params[] = {
	{ "size", 1, 1, 1024, true, "x axis of the plot", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric fixed_metrics[] = {
	{ "lat", "ns", "a latency" },
	{ "t", "us", "a latency in the tool's 100 ns units" },
	{ NULL, NULL, NULL },
};

/* Fixed figures per case label. */
static int fixed_run(const struct ilab_scenario *s, const struct ilab_case *c,
		     struct ilab_case_result *r, char *err, size_t errlen)
{
	(void)s;
	if (strcmp(c->label, "cal") == 0)
		return ilab_case_result_add(r, "lat", "ns", 210);
	if (strcmp(c->label, "pred") == 0)
		return ilab_case_result_add(r, "lat", "ns", 150);
	if (strcmp(c->label, "bound") == 0)
		return ilab_case_result_add(r, "lat", "ns", 500);
	if (strcmp(c->label, "trunc") == 0) {
		ilab_case_result_add(r, "t", "us", 0.19);
		r->stats_json = strdup("{\"cpus\": 4}");
		return 0;
	}
	if (strcmp(c->label, "missing") == 0)
		return -ENOSYS;
	snprintf(err, errlen, "device fell over");
	return -EIO;
}

static const struct ilab_workload fixed = {
	"test_fixed", fixed_run, "fixed figures for report tests", "issue 99", fixed_params,
	fixed_metrics, false, NULL, NULL,
};

static const char scenario_text[] =
	"name: report-test\n"
	"seed: \"042\"\n"
	"title: \"report test\"\n"
	"profile: kunpeng920\n"
	"workload: { type: test_fixed }\n"
	"plot: { x: size }\n"
	"cases:\n"
	"  - label: cal\n"
	"    params: { size: 1 }\n"
	"    reference: [ { metric: lat, value: 200, unit: ns, kind: calibration } ]\n"
	"  - label: pred\n"
	"    params: { size: 2 }\n"
	"    reference: [ { metric: lat, value: 100, unit: ns, kind: prediction } ]\n"
	"  - label: bound\n"
	"    params: { size: 4 }\n"
	"    reference: [ { metric: lat, value: 550, unit: ns, kind: undecided, relation: gt } ]\n"
	"  - label: trunc\n"
	"    params: { size: 8 }\n"
	"    reference: [ { metric: t, value: 0.1, unit: us, kind: prediction, truncate: 0.1,\n"
	"                   note: \"the tool's 100 ns steps\" } ]\n"
	"  - label: missing\n"
	"    reference: [ { metric: lat, value: 240, unit: ns, kind: undecided } ]\n"
	"  - label: broken\n";

static int setup(void **state)
{
	static struct scenario_fixture f;

	if (scenario_fixture_up(&f, &fixed, scenario_text, "report-test.yaml"))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	scenario_fixture_down(*state);
	return 0;
}

static void test_registry_rejects_duplicates_and_bad_entries(void **state)
{
	struct ilab_workload nameless = fixed;

	(void)state;
	assert_int_equal(ilab_workload_register(&fixed), -EEXIST);
	nameless.name = "";
	assert_int_equal(ilab_workload_register(&nameless), -EINVAL);
	assert_int_equal(ilab_workload_register(NULL), -EINVAL);
	assert_ptr_equal(ilab_workload_find("test_fixed"), &fixed);
	assert_null(ilab_workload_find("nope"));
}

static void test_statuses_follow_the_workload_return(void **state)
{
	struct scenario_fixture *f = *state;

	assert_int_equal(f->r->nr_cases, 6);
	for (int i = 0; i < 4; i++)
		assert_int_equal(f->r->cases[i].status, ILAB_CASE_OK);
	assert_int_equal(f->r->cases[4].status, ILAB_CASE_NOT_IMPLEMENTED);
	assert_string_equal(f->r->cases[4].message, "not implemented yet (needs issue 99)");
	assert_int_equal(f->r->cases[5].status, ILAB_CASE_FAILED);
	assert_string_equal(f->r->cases[5].message, "device fell over");
	assert_string_equal(ilab_result_status(f->r), "failed");
}

static void test_comparison_arithmetic(void **state)
{
	struct scenario_fixture *f = *state;
	const struct ilab_scenario *s = f->s;
	struct ilab_comparison c;

	/* 210 / 200 = 1.05: within the calibration bound of ±10%. */
	ilab_compare(s, &s->cases[0].refs[0], &f->r->cases[0], &c);
	assert_true(c.have_ours);
	assert_true(fabs(c.ratio - 1.05) < 1e-12);
	assert_true(c.tolerance == 0.10);
	assert_int_equal(c.verdict, ILAB_VERDICT_WITHIN);
	/* 150 / 100 = 1.5: outside the prediction bound of ±25%. */
	ilab_compare(s, &s->cases[1].refs[0], &f->r->cases[1], &c);
	assert_true(fabs(c.ratio - 1.5) < 1e-12);
	assert_true(c.tolerance == 0.25);
	assert_int_equal(c.verdict, ILAB_VERDICT_OUTSIDE);
	/* "> 550": 500 / 550 = 0.909 >= 1 - 0.25 (undecided is judged as a prediction). */
	ilab_compare(s, &s->cases[2].refs[0], &f->r->cases[2], &c);
	assert_true(fabs(c.ratio - 500.0 / 550.0) < 1e-12);
	assert_true(c.tolerance == 0.25);
	assert_int_equal(c.verdict, ILAB_VERDICT_WITHIN);
	/* 0.19 µs shows as 0.1 in 100 ns units: ratio 1. */
	ilab_compare(s, &s->cases[3].refs[0], &f->r->cases[3], &c);
	assert_true(c.ours_raw == 0.19);
	assert_true(fabs(c.ours - 0.1) < 1e-12);
	assert_true(fabs(c.ratio - 1) < 1e-9);
	assert_int_equal(c.verdict, ILAB_VERDICT_WITHIN);
	/* No figure: no verdict. */
	ilab_compare(s, &s->cases[4].refs[0], &f->r->cases[4], &c);
	assert_false(c.have_ours);
	assert_int_equal(c.verdict, ILAB_VERDICT_NO_DATA);
}

static void test_number_format(void **state)
{
	char b[64];

	(void)state;
	ilab_report_format_number(240, b, sizeof(b));
	assert_string_equal(b, "240");
	ilab_report_format_number(1215539, b, sizeof(b));
	assert_string_equal(b, "1215539");
	ilab_report_format_number(0.1, b, sizeof(b));
	assert_string_equal(b, "0.1");
	ilab_report_format_number(241.37, b, sizeof(b));
	assert_string_equal(b, "241.4");
	ilab_report_format_number(1215539.6, b, sizeof(b));
	assert_string_equal(b, "1215540");
}

static char *table_text(const struct ilab_scenario_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(ilab_report_table(r, m), 0);
	fclose(m);
	return buf;
}

static const char *line_of(const char *text, const char *label)
{
	static char line[512];
	const char *p = text;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (strncmp(p, label, strlen(label)) == 0 && p[strlen(label)] == ' ') {
			snprintf(line, sizeof(line), "%.*s", (int)n, p);
			return line;
		}
		p = e ? e + 1 : NULL;
	}
	fail_msg("no table row for %s in:\n%s", label, text);
	return NULL;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' lacks '%s'", hay, needle);
}

static void test_table_rows(void **state)
{
	struct scenario_fixture *f = *state;
	char *t = table_text(f->r);
	const char *l;

	assert_contains(t, "seed 042 — report test");
	assert_contains(t, "seed figure");
	assert_contains(t, "iommulab");
	assert_contains(t, "ratio");
	l = line_of(t, "cal");
	assert_contains(l, "200 ns");
	assert_contains(l, "210 ns");
	assert_contains(l, "1.05");
	assert_contains(l, "calibration");
	assert_contains(l, "within ±10%");
	l = line_of(t, "pred");
	assert_contains(l, "100 ns");
	assert_contains(l, "150 ns");
	assert_contains(l, "1.50");
	assert_contains(l, "OUTSIDE ±25%");
	l = line_of(t, "bound");
	assert_contains(l, "> 550 ns");
	assert_contains(l, "500 ns");
	assert_contains(l, "0.91");
	l = line_of(t, "trunc");
	assert_contains(l, "0.1 us");
	assert_contains(l, "1.00");
	l = line_of(t, "missing");
	assert_contains(l, "240 ns");
	assert_contains(l, "—");
	assert_contains(l, "not implemented yet (needs issue 99)");
	l = line_of(t, "broken");
	assert_contains(l, "device fell over");
	free(t);
}

static json_t *member(json_t *o, const char *key, int type)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		fail_msg("missing key '%s'", key);
	if ((int)json_typeof(v) != type)
		fail_msg("key '%s' has JSON type %d, want %d", key, json_typeof(v), type);
	return v;
}

static void assert_number_or_null(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!v || !(json_is_number(v) || json_is_null(v)))
		fail_msg("key '%s' is not a number or null", key);
}

static void test_json_follows_schema(void **state)
{
	struct scenario_fixture *f = *state;
	json_t *j = ilab_result_json(f->r), *cases, *sum, *scn, *c0, *cmp;
	size_t i;
	json_t *c;

	assert_non_null(j);
	assert_string_equal(json_string_value(member(j, "schema", JSON_STRING)), "iommulab-result/1");
	scn = member(j, "scenario", JSON_OBJECT);
	for (const char *const *k = (const char *const[]){ "name", "seed", "title", "source",
							    "profile", "engine", "workload", NULL };
	     *k; k++)
		member(scn, *k, JSON_STRING);
	assert_string_equal(json_string_value(member(scn, "workload", JSON_STRING)), "test_fixed");
	assert_true(json_is_boolean(json_object_get(j, "quick")));
	member(member(j, "tolerance", JSON_OBJECT), "calibration", JSON_REAL);
	assert_string_equal(json_string_value(member(j, "status", JSON_STRING)), "failed");
	sum = member(j, "summary", JSON_OBJECT);
	assert_int_equal(json_integer_value(member(sum, "cases", JSON_INTEGER)), 6);
	assert_int_equal(json_integer_value(member(sum, "ok", JSON_INTEGER)), 4);
	assert_int_equal(json_integer_value(member(sum, "not_implemented", JSON_INTEGER)), 1);
	assert_int_equal(json_integer_value(member(sum, "failed", JSON_INTEGER)), 1);
	assert_int_equal(json_integer_value(member(sum, "figures", JSON_INTEGER)), 5);
	assert_int_equal(json_integer_value(member(sum, "within", JSON_INTEGER)), 3);
	assert_int_equal(json_integer_value(member(sum, "outside", JSON_INTEGER)), 1);
	assert_int_equal(json_integer_value(member(sum, "no_data", JSON_INTEGER)), 1);

	cases = member(j, "cases", JSON_ARRAY);
	assert_int_equal(json_array_size(cases), 6);
	json_array_foreach(cases, i, c) {
		json_t *mech = member(c, "mechanisms", JSON_OBJECT), *x;
		size_t k;
		const char *st;

		member(c, "label", JSON_STRING);
		member(c, "series", JSON_STRING);
		member(c, "message", JSON_STRING);
		member(c, "params", JSON_OBJECT);
		member(c, "figures", JSON_OBJECT);
		st = json_string_value(member(c, "status", JSON_STRING));
		assert_true(!strcmp(st, "ok") || !strcmp(st, "not_implemented") ||
			    !strcmp(st, "failed"));
		member(mech, "cma", JSON_STRING);
		member(mech, "lookup", JSON_STRING);
		member(mech, "mode", JSON_STRING);
		assert_true(json_is_boolean(json_object_get(mech, "map_pages")));
		assert_true(json_is_boolean(json_object_get(mech, "ecmdq")));
		assert_true(json_is_boolean(json_object_get(mech, "vfio_attach_group_by_node")));
		json_array_foreach(member(c, "comparisons", JSON_ARRAY), k, x) {
			member(x, "metric", JSON_STRING);
			member(x, "unit", JSON_STRING);
			member(x, "kind", JSON_STRING);
			member(x, "relation", JSON_STRING);
			member(x, "verdict", JSON_STRING);
			assert_true(json_is_number(json_object_get(x, "seed")));
			assert_true(json_is_number(json_object_get(x, "tolerance")));
			assert_true(json_is_number(json_object_get(x, "truncate")));
			assert_number_or_null(x, "ours");
			assert_number_or_null(x, "ours_raw");
			assert_number_or_null(x, "ratio");
		}
	}
	/* Exact integers where integral: 200 and 210 are integers, 1.05 a real. */
	c0 = json_array_get(cases, 0);
	cmp = json_array_get(member(c0, "comparisons", JSON_ARRAY), 0);
	assert_int_equal(json_integer_value(member(cmp, "seed", JSON_INTEGER)), 200);
	assert_int_equal(json_integer_value(member(cmp, "ours", JSON_INTEGER)), 210);
	assert_true(fabs(json_real_value(member(cmp, "ratio", JSON_REAL)) - 1.05) < 1e-12);
	assert_string_equal(json_string_value(member(cmp, "verdict", JSON_STRING)), "within");
	assert_int_equal(json_integer_value(member(member(member(c0, "figures", JSON_OBJECT), "lat",
							   JSON_OBJECT), "value", JSON_INTEGER)), 210);
	assert_int_equal(json_integer_value(member(member(c0, "params", JSON_OBJECT), "size",
						   JSON_INTEGER)), 1);
	/* The workload's statistics are embedded as an object. */
	assert_int_equal(json_integer_value(member(member(json_array_get(cases, 3), "stats",
							  JSON_OBJECT), "cpus", JSON_INTEGER)), 4);
	/* truncate is the reference's (0 when it has none); note only where the reference has one */
	assert_true(json_number_value(member(cmp, "truncate", JSON_INTEGER)) == 0);
	assert_null(json_object_get(cmp, "note"));
	cmp = json_array_get(member(json_array_get(cases, 3), "comparisons", JSON_ARRAY), 0);
	assert_true(fabs(json_number_value(member(cmp, "truncate", JSON_REAL)) - 0.1) < 1e-12);
	assert_string_equal(json_string_value(member(cmp, "note", JSON_STRING)),
			    "the tool's 100 ns steps");
	/* Not-implemented: null figures. */
	cmp = json_array_get(member(json_array_get(cases, 4), "comparisons", JSON_ARRAY), 0);
	assert_true(json_is_null(json_object_get(cmp, "ours")));
	assert_string_equal(json_string_value(member(cmp, "verdict", JSON_STRING)), "no_data");
	json_decref(j);
}

static void test_json_round_trip_and_sorted_keys(void **state)
{
	struct scenario_fixture *f = *state;
	char *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;
	FILE *m = open_memstream(&buf, &len);
	json_error_t jerr;
	json_t *back, *orig;

	assert_int_equal(ilab_result_write_json(f->r, m), 0);
	fclose(m);
	back = json_loads(buf, 0, &jerr);
	if (!back)
		fail_msg("not JSON: %s at line %d", jerr.text, jerr.line);
	orig = ilab_result_json(f->r);
	assert_true(json_equal(back, orig));
	/* Top-level keys (the lines indented by exactly two spaces) in sorted order, all of them. */
	{
		char keys[16][32], line_key[32];
		unsigned nk = 0;

		for (const char *p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
			if (!strncmp(p, "  \"", 3) && sscanf(p + 3, "%31[^\"]", line_key) == 1) {
				assert_true(nk < 16);
				strcpy(keys[nk++], line_key);
			}
		for (unsigned i = 1; i < nk; i++)
			if (strcmp(keys[i - 1], keys[i]) >= 0)
				fail_msg("top-level key '%s' after '%s'", keys[i], keys[i - 1]);
		assert_int_equal(nk, json_object_size(orig));
	}
	/* Deterministic: the same result gives the same bytes. */
	m = open_memstream(&buf2, &len2);
	assert_int_equal(ilab_result_write_json(f->r, m), 0);
	fclose(m);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	/* 0.1 written as 0.1, not 0.10000000000000001 */
	assert_null(strstr(buf, "0.1000000"));
	json_decref(back);
	json_decref(orig);
	free(buf);
	free(buf2);
}

static void make_tmpdir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/ilab-report-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void test_plot_renders_png_or_warns(void **state)
{
	struct scenario_fixture *f = *state;
	char dir[64], msg[1024], path[128];
	unsigned char magic[8] = { 0 };
	FILE *p;
	int ret;

	make_tmpdir(dir, sizeof(dir));
	/* Without gnuplot: a warning, the script is still written, and it is not an error. */
	setenv("IOMMULAB_GNUPLOT", "/nonexistent/gnuplot", 1);
	assert_int_equal(ilab_report_plot(f->r, dir, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "gnuplot not found"));
	snprintf(path, sizeof(path), "%s/report-test.gp", dir);
	assert_int_equal(access(path, R_OK), 0);
	unsetenv("IOMMULAB_GNUPLOT");

	ret = ilab_report_plot(f->r, dir, msg, sizeof(msg));
	if (ret == 1 && strstr(msg, "gnuplot not found")) {
		ILAB_SKIP_CHECK("no gnuplot on this host: PNG rendering not checked");
	} else {
		if (ret != 0)
			fail_msg("plot: %d %s", ret, msg);
		snprintf(path, sizeof(path), "%s/report-test.png", dir);
		assert_string_equal(msg, path);
		p = fopen(path, "rb");
		assert_non_null(p);
		assert_int_equal(fread(magic, 1, 8, p), 8);
		fclose(p);
		assert_memory_equal(magic, "\x89PNG\r\n\x1a\n", 8);
		remove(path);
	}
	snprintf(path, sizeof(path), "%s/report-test.gp", dir);
	remove(path);
	rmdir(dir);
}

static void test_plot_skipped_without_figures(void **state)
{
	struct scenario_fixture *f = *state;
	struct ilab_scenario_result only_missing = *f->r;
	struct ilab_scenario one = *f->s;
	char msg[512];

	/* Only the not-implemented case: nothing to plot, nothing written. */
	one.nr_cases = 1;
	one.cases = &f->s->cases[4];
	only_missing.scenario = &one;
	only_missing.nr_cases = 1;
	only_missing.cases = &f->r->cases[4];
	assert_int_equal(ilab_report_plot(&only_missing, "/nonexistent-dir", msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "no figure"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_rejects_duplicates_and_bad_entries),
		cmocka_unit_test(test_statuses_follow_the_workload_return),
		cmocka_unit_test(test_comparison_arithmetic),
		cmocka_unit_test(test_number_format),
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test(test_json_follows_schema),
		cmocka_unit_test(test_json_round_trip_and_sorted_keys),
		cmocka_unit_test(test_plot_renders_png_or_warns),
		cmocka_unit_test(test_plot_skipped_without_figures),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
