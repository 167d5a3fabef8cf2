/* test_sim_contention_stack.c — the line contention model (cache.contention: home,
 * docs/simulation.md "Line contention model") on the whole stack: dma_map_benchmark threads on
 * the Kunpeng 920 contention profile in strict mode. One CPU claims command-queue space at the
 * first attempt; once enough CPUs contend, some claims take more. The mechanism's own figures
 * are test_sim_contention.c's. The set-up is tests/support/sim_bench_run.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#include "support/sim_bench_run.h"

#define CONTENTION ILAB_TESTDATA "/../../profiles/kunpeng920-contention.yaml"

static uint64_t u64(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	return (uint64_t)json_integer_value(v);
}

/* 1 CPU: every claim succeeds at its first cmpxchg (nobody else writes the llq line). */
static void one_cpu_claims_at_the_first_attempt(void **state)
{
	static struct sim_bench_run r; /* static: the teardown may need it after a failure */

	(void)state;
	sim_bench_run_up(&r, CONTENTION, 1, 200, 2, true);
	assert_int_equal(r.prof.cache_contention, ILAB_CONTENTION_HOME);
	assert_true(u64(r.b, "claims") >= 200);
	assert_int_equal(u64(r.b, "claim_attempts"), u64(r.b, "claims"));
	assert_int_equal(r.drv.cmpxchg_retries, 0);
	sim_bench_run_down(&r);
}

/* 128 CPUs: claims collide at the llq line's home, and the breakdown's attempts agree with
 * the driver's failed cmpxchgs. (How many more than one: docs/simulation.md's table.) */
static void many_cpus_need_more_attempts(void **state)
{
	static struct sim_bench_run r; /* static: the teardown may need it after a failure */
	uint64_t claims, attempts;

	(void)state;
	sim_bench_run_up(&r, CONTENTION, 128, 20, 2, true);
	claims = u64(r.b, "claims");
	attempts = u64(r.b, "claim_attempts");
	print_message("128 CPUs: %lu attempts in %lu claims, %lu failed cmpxchg\n",
		      (unsigned long)attempts, (unsigned long)claims,
		      (unsigned long)r.drv.cmpxchg_retries);
	assert_true(attempts > claims);
	assert_int_equal(attempts - claims, r.drv.cmpxchg_retries);
	sim_bench_run_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(one_cpu_claims_at_the_first_attempt, sim_bench_run_teardown),
		cmocka_unit_test_teardown(many_cpus_need_more_attempts, sim_bench_run_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
