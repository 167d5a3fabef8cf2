/* test_yaml_depth.c — deeply nested YAML ('[[[[...' or '{a: {a: ...') given as a scenario or a
 * machine profile is refused at the first level past ILAB_YAML_MAX_DEPTH, with
 * "file:line:column". The inputs are 400 KB: without the limit, libyaml's loader takes minutes
 * on them (quadratic in the depth), so a hang here is the failure. Nesting at the limit is
 * left to the parsers' own checks. Not the parsers' other errors (test_scenario_errors.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/scenario.h"
#include "iommulab/sim.h"
#include "util/yaml_util.h"

#define BIG (400u * 1024)

/* "key: " then `levels` openings of `open` and their closings; the text has one line. */
static char *nested(const char *open, const char *close, size_t levels, size_t *len)
{
	size_t lo = strlen(open), lc = strlen(close), n = 5 + levels * (lo + lc) + 2;
	char *buf = malloc(n), *p = buf;

	assert_non_null(buf);
	p += sprintf(p, "name: ");
	for (size_t i = 0; i < levels; i++, p += lo)
		memcpy(p, open, lo);
	for (size_t i = 0; i < levels; i++, p += lc)
		memcpy(p, close, lc);
	*p++ = '\n';
	*len = (size_t)(p - buf);
	return buf;
}

/* The column of the first opening past the limit: after "name: " and the allowed ones, plus
 * the root mapping, which is level 1. */
static unsigned column_past_limit(const char *open)
{
	return 7 + (ILAB_YAML_MAX_DEPTH - 1) * (unsigned)strlen(open);
}

static void expect_too_deep(int ret, const char *err, const char *file, unsigned column)
{
	char prefix[128];

	assert_int_equal(ret, -EINVAL);
	snprintf(prefix, sizeof(prefix), "%s:1:%u: ", file, column);
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fail_msg("'%s' does not start with '%s'", err, prefix);
	assert_non_null(strstr(err, "nested more than 64 deep"));
}

static const struct {
	const char *open, *close;
} shapes[] = {
	{ "[", "]" },
	{ "{a: ", "}" },
};

static void test_deep_scenario_is_refused_at_the_limit(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		size_t len;
		char *text = nested(shapes[i].open, shapes[i].close,
				    BIG / (strlen(shapes[i].open) + 1), &len);
		struct ilab_scenario *s = (void *)1;
		char err[512] = "";

		assert_true(len >= BIG);
		expect_too_deep(ilab_scenario_parse(text, len, "deep.yaml", &s, err, sizeof(err)),
				err, "deep.yaml", column_past_limit(shapes[i].open));
		assert_null(s);
		free(text);
	}
}

static void test_deep_profile_is_refused_at_the_limit(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		size_t len;
		char *text = nested(shapes[i].open, shapes[i].close,
				    BIG / (strlen(shapes[i].open) + 1), &len);
		struct ilab_profile *p = calloc(1, sizeof(*p));
		char err[512] = "";

		assert_non_null(p);
		expect_too_deep(ilab_profile_parse(text, len, "deep-profile.yaml", p, err,
						   sizeof(err)),
				err, "deep-profile.yaml", column_past_limit(shapes[i].open));
		free(p);
		free(text);
	}
}

/* At exactly the limit the depth check passes, and the parsers say what is wrong instead. */
static void test_nesting_at_the_limit_passes_the_depth_check(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		size_t len;
		char *text = nested(shapes[i].open, shapes[i].close, ILAB_YAML_MAX_DEPTH - 1,
				    &len);
		struct ilab_scenario *s = (void *)1;
		char err[512] = "";

		assert_int_equal(ilab_yaml_check_depth(text, len, "x", "scenario", err,
						       sizeof(err)), 0);
		assert_int_equal(ilab_scenario_parse(text, len, "x", &s, err, sizeof(err)),
				 -EINVAL);
		assert_null(strstr(err, "nested"));
		free(text);
		text = nested(shapes[i].open, shapes[i].close, ILAB_YAML_MAX_DEPTH, &len);
		assert_int_equal(ilab_yaml_check_depth(text, len, "x", "scenario", err,
						       sizeof(err)), -EINVAL);
		free(text);
	}
}

/* A syntax error is left to the loader, which reports it at its own place. */
static void test_syntax_error_is_not_a_depth_error(void **state)
{
	static const char text[] = "name: [[[\n";
	char err[256] = "";

	(void)state;
	assert_int_equal(ilab_yaml_check_depth(text, sizeof(text) - 1, "x", "scenario", err,
					       sizeof(err)), 0);
	assert_string_equal(err, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deep_scenario_is_refused_at_the_limit),
		cmocka_unit_test(test_deep_profile_is_refused_at_the_limit),
		cmocka_unit_test(test_nesting_at_the_limit_passes_the_depth_check),
		cmocka_unit_test(test_syntax_error_is_not_a_depth_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
