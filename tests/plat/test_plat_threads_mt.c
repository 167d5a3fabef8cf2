/* test_plat_threads_mt.c — plat_run_threads(): each thread is the CPU it was given (cpu id,
 * node), all threads run, bad CPU lists are refused before anything runs, and binding pins
 * modelled CPU i to host PU i % host PUs.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>
#include <hwloc.h>

#include "iommulab/plat.h"
#include "iommulab/topo.h"
#include "support/skip.h"

#define MAX_THREADS 8

struct seen {
	plat_word32 calls;
	plat_word32 cpu[MAX_THREADS];  /* plat_cpu_id() + 1 seen by thread idx (0 = never ran) */
	plat_word32 node[MAX_THREADS]; /* plat_this_node() + 1 */
	plat_word32 host_pu[MAX_THREADS]; /* sched_getcpu() + 1 */
};

static void record(unsigned idx, void *arg)
{
	struct seen *s = arg;

	plat_fetch_add32(&s->calls, 1);
	plat_store32(&s->cpu[idx], (uint32_t)(plat_cpu_id() + 1));
	plat_store32(&s->node[idx], (uint32_t)(plat_this_node() + 1));
	plat_store32(&s->host_pu[idx], (uint32_t)(sched_getcpu() + 1));
}

static int teardown(void **state)
{
	plat_fini();
	return 0;
}

static void cpu_ids_match_the_list(void **state)
{
	struct seen s = { 0 };
	unsigned n = plat_cpu_count() < 2 ? 1 : 2;
	int cpus[2] = { (int)n - 1, 0 }; /* reversed: idx and cpu differ */

	assert_int_equal(plat_init(NULL), 0);
	assert_int_equal(plat_run_threads(n, cpus, record, &s), 0);
	assert_int_equal(plat_load32(&s.calls), n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(plat_load32(&s.cpu[i]), (uint32_t)cpus[i] + 1);
	assert_int_equal(plat_cpu_id(), -1); /* the caller is not a plat CPU */
}

static void null_list_means_cpus_0_to_n(void **state)
{
	struct seen s = { 0 };
	unsigned n = plat_cpu_count() < 2 ? 1 : 2;

	assert_int_equal(plat_init(NULL), 0);
	assert_int_equal(plat_run_threads(n, NULL, record, &s), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(plat_load32(&s.cpu[i]), i + 1);
}

static void bad_lists_run_nothing(void **state)
{
	struct seen s = { 0 };
	int dup[2] = { 0, 0 };
	int neg[1] = { -1 };
	int big[1] = { 0 };

	assert_int_equal(plat_init(NULL), 0);
	big[0] = (int)plat_cpu_count();
	assert_int_equal(plat_run_threads(2, dup, record, &s), -EINVAL);
	assert_int_equal(plat_run_threads(1, neg, record, &s), -EINVAL);
	assert_int_equal(plat_run_threads(1, big, record, &s), -EINVAL);
	assert_int_equal(plat_run_threads(1, NULL, NULL, &s), -EINVAL);
	assert_int_equal(plat_run_threads(0, NULL, record, &s), 0);
	assert_int_equal(plat_load32(&s.calls), 0);
}

static struct ilab_topo *load_kunpeng_or_skip(void)
{
	struct ilab_topo *t = NULL;
	char err[256] = "";
	int rc = ilab_topo_load("kunpeng920", &t, err, sizeof(err));

	if (rc) {
		ILAB_SKIP("ilab_topo_load(kunpeng920) failed (%d: %s)", rc, err);
	}
	return t;
}

/* On a 128-CPU model, thread i of {0, 37, 64, 127} sees that CPU and its node (32 per node). */
static void modelled_cpus_and_nodes(void **state)
{
	struct ilab_topo *t = load_kunpeng_or_skip();
	struct plat_config cfg = { .engine = PLAT_ENGINE_NATIVE, .topo = t };
	int cpus[4] = { 0, 37, 64, 127 };
	struct seen s = { 0 };

	assert_int_equal(plat_init(&cfg), 0);
	ilab_topo_free(t);
	assert_int_equal(plat_run_threads(4, cpus, record, &s), 0);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(plat_load32(&s.cpu[i]), (uint32_t)cpus[i] + 1);
		assert_int_equal(plat_load32(&s.node[i]), (uint32_t)(cpus[i] / 32) + 1);
	}
}

/* Host PU that modelled CPU `cpu` must run on: logical PU cpu % PUs, by its OS index. */
static int expected_host_pu(unsigned cpu)
{
	hwloc_topology_t topo;
	int os;

	assert_int_equal(hwloc_topology_init(&topo), 0);
	assert_int_equal(hwloc_topology_load(topo), 0);
	int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	os = (int)hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, cpu % (unsigned)pus)->os_index;
	hwloc_topology_destroy(topo);
	return os;
}

static void bound_threads_run_on_their_pu(void **state)
{
	struct ilab_topo *t = load_kunpeng_or_skip();
	struct plat_config cfg = { .engine = PLAT_ENGINE_NATIVE, .topo = t, .bind_threads = true };
	int cpus[3] = { 127, 2, 65 };
	struct seen s = { 0 };

	assert_int_equal(plat_init(&cfg), 0);
	ilab_topo_free(t);
	assert_int_equal(plat_run_threads(3, cpus, record, &s), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(plat_load32(&s.host_pu[i]),
				 (uint32_t)expected_host_pu((unsigned)cpus[i]) + 1);
}

static void bound_host_threads(void **state)
{
	struct plat_config cfg = { .engine = PLAT_ENGINE_NATIVE, .bind_threads = true };
	struct seen s = { 0 };
	unsigned n;

	assert_int_equal(plat_init(&cfg), 0);
	n = plat_cpu_count() < MAX_THREADS ? plat_cpu_count() : MAX_THREADS;
	assert_int_equal(plat_run_threads(n, NULL, record, &s), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(plat_load32(&s.host_pu[i]), (uint32_t)expected_host_pu(i) + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(cpu_ids_match_the_list, teardown),
		cmocka_unit_test_teardown(null_list_means_cpus_0_to_n, teardown),
		cmocka_unit_test_teardown(bad_lists_run_nothing, teardown),
		cmocka_unit_test_teardown(modelled_cpus_and_nodes, teardown),
		cmocka_unit_test_teardown(bound_threads_run_on_their_pu, teardown),
		cmocka_unit_test_teardown(bound_host_threads, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
