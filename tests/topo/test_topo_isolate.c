/* test_topo_isolate.c — the backstop of the topology loaders: a load runs in a child process
 * first, and a crash, an abnormal exit or a hang there becomes a one-line error, not the
 * caller's death. Not the checks that refuse known-bad files (test_topo_errors.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <hwloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iommulab/topo.h>
#include "topo/topo_internal.h"

#define DATA ILAB_TESTDATA "/topologies/"

static int touched;

static void returns(void *arg)
{
	touched = 1; /* in the child's copy only */
}

static void segfaults(void *arg)
{
	raise(SIGSEGV);
}

static void exits_3(void *arg)
{
	_exit(3);
}

static void hangs(void *arg)
{
	for (;;)
		pause();
}

/* A real libhwloc 2.9 crash: this file, without the checks of topo_xml_check.c, makes
 * hwloc_topology_load dereference a NULL complete_cpuset. */
static void hwloc_crashes(void *arg)
{
	hwloc_topology_t h;

	hwloc_topology_init(&h);
	if (hwloc_topology_set_xml(h, arg) == 0)
		hwloc_topology_load(h);
	hwloc_topology_destroy(h);
}

static void one_line(const char *err, const char *needle1, const char *needle2)
{
	if (!strstr(err, needle1) || (needle2 && !strstr(err, needle2)))
		print_error("err '%s'\n", err);
	assert_non_null(strstr(err, ": "));
	assert_non_null(strstr(err, needle1));
	if (needle2)
		assert_non_null(strstr(err, needle2));
	assert_null(strchr(err, '\n'));
}

static void child_that_returns(void **state)
{
	char err[256] = "";

	assert_int_equal(topo_run_isolated("spec", "fix it", returns, NULL, 10, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(touched, 0); /* it ran in another process */
}

static void child_that_crashes(void **state)
{
	char err[256];

	assert_int_equal(topo_run_isolated("spec", "fix it", segfaults, NULL, 10, err, sizeof(err)),
			 -EINVAL);
	one_line(err, "hwloc crashed reading it (Segmentation fault)", "; fix it");
}

static void child_that_exits_abnormally(void **state)
{
	char err[256];

	assert_int_equal(topo_run_isolated("spec", "fix it", exits_3, NULL, 10, err, sizeof(err)),
			 -EINVAL);
	one_line(err, "exit status 3", "; fix it");
}

static void child_that_hangs(void **state)
{
	char err[256];

	assert_int_equal(topo_run_isolated("spec", "fix it", hangs, NULL, 1, err, sizeof(err)),
			 -ETIMEDOUT);
	one_line(err, "took more than 1 s", NULL);
}

static void real_hwloc_crash(void **state)
{
	char path[] = DATA "broken-machine-no-complete-cpuset.xml";
	char err[256];

	assert_int_equal(topo_run_isolated("spec", "export it again", hwloc_crashes, path, 10, err,
					   sizeof(err)), -EINVAL);
	/* killed by SIGSEGV; or, in an ASan build whose handler stays, its report and exit 1 */
	one_line(err, "reading it", "export it again");
}

static void crash_in_child(void)
{
	raise(SIGSEGV);
}

/* The loaders run hwloc in the child first: a crash there is the loader's error, and the test
 * process lives on. */
static void loaders_isolate_hwloc(void **state)
{
	static const char *const specs[] = { DATA "24em64t-2n6c2t-pci.xml",
					     "synthetic:pack:2 numa:2 pu:2" };

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct ilab_topo *t = NULL;
		char err[512] = "";

		topo_isolate_test_hook = crash_in_child;
		assert_int_equal(ilab_topo_load(specs[i], &t, err, sizeof(err)), -EINVAL);
		topo_isolate_test_hook = NULL;
		assert_null(t);
		one_line(err, "hwloc crashed reading it (Segmentation fault)", specs[i]);
		/* and without the stand-in crash, the same spec loads */
		assert_int_equal(ilab_topo_load(specs[i], &t, err, sizeof(err)), 0);
		ilab_topo_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(child_that_returns),
		cmocka_unit_test(child_that_crashes),
		cmocka_unit_test(child_that_exits_abnormally),
		cmocka_unit_test(child_that_hangs),
		cmocka_unit_test(real_hwloc_crash),
		cmocka_unit_test(loaders_isolate_hwloc),
	};

	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
