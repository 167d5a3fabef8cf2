/* test_topo_errors.c — bad topology input: each gives a negative errno and a one-line cause
 * naming the source, never a crash. Not the good paths (test_topo_presets.c, test_topo_hwloc.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <iommulab/topo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA ILAB_TESTDATA "/topologies/"

/* Load spec, expect -want_errno, a one-line message containing spec and every needle. */
static void expect_error(const char *spec, int want_errno, const char *needle1, const char *needle2)
{
	struct ilab_topo *t = (struct ilab_topo *)0x1;
	char err[512];
	int ret;

	memset(err, 'x', sizeof(err));
	ret = ilab_topo_load(spec, &t, err, sizeof(err));
	if (ret != -want_errno || (needle1 && !strstr(err, needle1)) ||
	    (needle2 && !strstr(err, needle2)))
		print_error("%s: ret %d, err '%s'\n", spec, ret, err);
	assert_int_equal(ret, -want_errno);
	assert_null(t);
	assert_non_null(memchr(err, '\0', sizeof(err)));
	assert_true(strlen(err) > 0);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, spec));
	if (needle1)
		assert_non_null(strstr(err, needle1));
	if (needle2)
		assert_non_null(strstr(err, needle2));
}

static void missing_file(void **state)
{
	expect_error("/nonexistent/dir/machine.xml", ENOENT, "No such file", NULL);
}

static void directory_instead_of_file(void **state)
{
	expect_error(ILAB_TESTDATA "/topologies", EISDIR, "cannot read", NULL);
}

static void truncated_xml(void **state)
{
	expect_error(DATA "broken-truncated.xml", EINVAL, "truncated", NULL);
}

static void garbage_text(void **state)
{
	expect_error(DATA "broken-garbage.xml", EINVAL, "not an hwloc XML", NULL);
}

/* hwloc refuses a topology without NUMA nodes; so do we, with that reason. */
static void no_numa_node(void **state)
{
	expect_error(DATA "broken-no-numa.xml", EINVAL, "no NUMA node", NULL);
}

/* A matrix whose values do not add up to the nodes is malformed XML for hwloc. */
static void distance_matrix_with_missing_values(void **state)
{
	expect_error(DATA "broken-distances-count.xml", EINVAL, "cannot parse hwloc XML", NULL);
}

static void distances_diagonal_not_minimum(void **state)
{
	expect_error(DATA "broken-distances-diagonal.xml", EINVAL, "nonsense distances", "[0][1]");
}

static void distances_above_slit_range(void **state)
{
	expect_error(DATA "broken-distances-range.xml", EINVAL, "nonsense distances", "[0][1] = 300");
}

static void distances_zero_diagonal(void **state)
{
	expect_error(DATA "broken-distances-zero.xml", EINVAL, "nonsense distances", "[1][1] = 0");
}

/* Write text to a fresh temporary .xml file; returns its path (caller unlinks). */
static char *temp_xml(const char *text)
{
	char *path = strdup("/tmp/ilab-topo-test-XXXXXX.xml");
	int fd = mkstemps(path, 4);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void empty_file(void **state)
{
	char *path = temp_xml("");

	expect_error(path, EINVAL, "empty", NULL);
	unlink(path);
	free(path);
}

/* Closed properly but broken inside: hwloc's parser must reject it. */
static void malformed_xml(void **state)
{
	char *path = temp_xml("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
			      "<object type=\"Machine\" os_index=\"0\"\n"
			      "<object type=\"NUMANode\"/></object></topology>\n");

	expect_error(path, EINVAL, "hwloc XML", NULL);
	unlink(path);
	free(path);
}

static void unknown_name(void **state)
{
	expect_error("kunpeng921", ENOENT, "unknown topology", NULL);
}

static void bad_synthetic(void **state)
{
	expect_error("synthetic:pack:two", EINVAL, "synthetic", NULL);
}

static void too_many_nodes(void **state)
{
	expect_error("synthetic:numa:65 pu:1", E2BIG, "at most 64", NULL);
}

static void too_many_cpus(void **state)
{
	expect_error("synthetic:pack:2 pu:2049", E2BIG, "at most 4096", NULL);
	/* counted before hwloc builds it (which for these took minutes), and without overflow */
	expect_error("synthetic:pu:100000", E2BIG, "100000 CPUs", NULL);
	expect_error("synthetic:pack:99999999999 numa:99999999999 pu:99999999999", E2BIG,
		     "over 4096 CPUs", NULL);
}

/* A FIFO (or a device) is no topology file: refused before reading, not waited on. */
static void not_a_regular_file(void **state)
{
	char path[] = "/tmp/ilab-topo-fifo-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_error(path, EINVAL, "not a regular file", NULL);
	unlink(path);
	expect_error("/dev/zero", EINVAL, "not a regular file", NULL);
}

static void null_and_empty_arguments(void **state)
{
	struct ilab_topo *t;
	char err[64];

	assert_int_equal(ilab_topo_load(NULL, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(ilab_topo_load("", &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(ilab_topo_load("kunpeng920", NULL, err, sizeof(err)), -EINVAL);
	/* no message buffer: still an error, still no crash */
	assert_int_equal(ilab_topo_load(DATA "broken-truncated.xml", &t, NULL, 0), -EINVAL);
	/* a tiny buffer truncates the message safely */
	assert_int_equal(ilab_topo_load(DATA "broken-truncated.xml", &t, err, 8), -EINVAL);
	assert_int_equal(strlen(err), 7);
	ilab_topo_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_file),
		cmocka_unit_test(directory_instead_of_file),
		cmocka_unit_test(truncated_xml),
		cmocka_unit_test(garbage_text),
		cmocka_unit_test(no_numa_node),
		cmocka_unit_test(distance_matrix_with_missing_values),
		cmocka_unit_test(distances_diagonal_not_minimum),
		cmocka_unit_test(distances_above_slit_range),
		cmocka_unit_test(distances_zero_diagonal),
		cmocka_unit_test(empty_file),
		cmocka_unit_test(malformed_xml),
		cmocka_unit_test(unknown_name),
		cmocka_unit_test(bad_synthetic),
		cmocka_unit_test(not_a_regular_file),
		cmocka_unit_test(too_many_nodes),
		cmocka_unit_test(too_many_cpus),
		cmocka_unit_test(null_and_empty_arguments),
	};

	/* hwloc's own complaints would only clutter the test log */
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
