/* test_yaml_file.c — the YAML file reader shared by scenarios, profiles and sweeps
 * (src/util/yaml_file.c): a whole file read and NUL-terminated, a file of more than the limit
 * refused and one at the limit read, a missing file named with its errno, and libyaml's syntax
 * errors in the two wordings its users print. Not the parsers' own messages
 * (test_scenario_errors.c, test_sim_profile.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/yaml_file.h"

/* A temporary file holding n bytes of `fill`; its path is written to path. */
static void make_file(char *path, size_t pathlen, size_t n, char fill)
{
	FILE *f;
	int fd;

	snprintf(path, pathlen, "/tmp/test_yaml_file.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fputc(fill, f), fill);
	assert_int_equal(fclose(f), 0);
}

/* Sizes around the growth steps (8 KiB, doubled) and the limit: every byte is read, and the
 * buffer ends in a NUL the parsers and the sweep's hash rely on. */
static void test_whole_file_is_read_up_to_the_limit(void **state)
{
	static const size_t max = 40000;
	const size_t sizes[] = { 0, 1, 8190, 8191, 8192, 16383, 16384, 39999, max };
	char path[64], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *text = NULL;
		size_t len = 12345;

		make_file(path, sizeof(path), sizes[i], 'a');
		assert_int_equal(ilab_yaml_read_file(path, max, "too big", &text, &len, err,
						     sizeof(err)), 0);
		assert_non_null(text);
		assert_int_equal(len, sizes[i]);
		assert_int_equal(strspn(text, "a"), sizes[i]);
		assert_int_equal(text[len], '\0');
		free(text);
		unlink(path);
	}
}

static void test_file_past_the_limit_is_refused(void **state)
{
	static const size_t max = 40000;
	const size_t sizes[] = { max + 1, 3 * max };
	char path[64], err[256], want[128];

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *text = (char *)&err;
		size_t len = 0;

		make_file(path, sizeof(path), sizes[i], 'b');
		assert_int_equal(ilab_yaml_read_file(path, max, "larger than 1 MiB", &text, &len,
						     err, sizeof(err)), -EFBIG);
		assert_null(text);
		snprintf(want, sizeof(want), "%s: larger than 1 MiB", path);
		assert_string_equal(err, want);
		unlink(path);
	}
}

static void test_missing_file_names_its_errno(void **state)
{
	static const char path[] = "/nonexistent-dir/x.yaml";
	char err[256], want[128];
	char *text = NULL;
	size_t len;

	(void)state;
	assert_int_equal(ilab_yaml_read_file(path, 100, "too big", &text, &len, err, sizeof(err)),
			 -ENOENT);
	assert_null(text);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	assert_string_equal(err, want);
}

/* A directory (sweep /tmp --check): named as such, not "read error" (fopen opens it, only the
 * read fails). */
static void test_directory_says_so(void **state)
{
	char err[256], want[128];
	char *text = NULL;
	size_t len;

	(void)state;
	assert_int_equal(ilab_yaml_read_file("/tmp", 100, "too big", &text, &len, err,
					     sizeof(err)), -EISDIR);
	assert_null(text);
	snprintf(want, sizeof(want), "/tmp: %s", strerror(EISDIR));
	assert_string_equal(err, want);
}

/* "a: b: c" — libyaml: "mapping values are not allowed in this context" at line 1, column 5
 * (the second ':' after "a: b"), in the context of no construct. */
static void test_syntax_error_in_both_wordings(void **state)
{
	static const char text[] = "a: b: c\n";
	char err[256];
	yaml_document_t doc;

	(void)state;
	assert_int_equal(ilab_yaml_load(text, sizeof(text) - 1, "s.yaml", "scenario",
					ILAB_YAML_ERROR_SYNTAX, &doc, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "s.yaml:1:5: YAML syntax error: mapping values are not "
				 "allowed in this context");
	assert_int_equal(ilab_yaml_load(text, sizeof(text) - 1, "p.yaml", "profile",
					ILAB_YAML_ERROR_PROBLEM_CONTEXT, &doc, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "p.yaml:1:5: mapping values are not allowed in this context");
}

/* An unclosed flow mapping: the problem at the end of the text, with its context. */
static void test_problem_context_names_the_construct(void **state)
{
	static const char text[] = "m: {a: 1\n";
	char err[256];
	yaml_document_t doc;

	(void)state;
	assert_int_equal(ilab_yaml_load(text, sizeof(text) - 1, "p.yaml", "profile",
					ILAB_YAML_ERROR_PROBLEM_CONTEXT, &doc, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "p.yaml:2:1: did not find expected ',' or '}' while parsing a "
				 "flow mapping");
}

/* One document is loaded and handed over; a second one is refused, nothing left to free. */
static void test_one_document_only(void **state)
{
	static const char one[] = "a: 1\n", two[] = "a: 1\n---\nb: 2\n";
	yaml_document_t doc;
	yaml_node_t *root;
	char err[256];

	(void)state;
	assert_int_equal(ilab_yaml_load(one, sizeof(one) - 1, "s.yaml", "scenario",
					ILAB_YAML_ERROR_SYNTAX, &doc, err, sizeof(err)), 0);
	root = yaml_document_get_root_node(&doc);
	assert_non_null(root);
	assert_int_equal(root->type, YAML_MAPPING_NODE);
	yaml_document_delete(&doc);
	assert_int_equal(ilab_yaml_load(two, sizeof(two) - 1, "s.yaml", "scenario",
					ILAB_YAML_ERROR_SYNTAX, &doc, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "s.yaml:3:1: a second YAML document: a scenario file holds one");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_file_is_read_up_to_the_limit),
		cmocka_unit_test(test_file_past_the_limit_is_refused),
		cmocka_unit_test(test_missing_file_names_its_errno),
		cmocka_unit_test(test_directory_says_so),
		cmocka_unit_test(test_syntax_error_in_both_wordings),
		cmocka_unit_test(test_problem_context_names_the_construct),
		cmocka_unit_test(test_one_document_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
