/* test_sim_breakdown.c — the simulator's breakdown (src/sim/prof.c, docs/breakdown.md) on the
 * whole stack: dma_map_benchmark threads on kunpeng920 in strict mode. The measured map and
 * unmap latencies are exactly the top-level dma_map and dma_unmap time; every node's total is
 * its self time plus its children's; the call graph has the DMA path's parents; attempts per
 * queue claim are counted, are at least one, and their excess is the driver's failed cmpxchgs.
 */
#include <math.h>
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

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"

static void run_bench(struct sim_bench_run *r, unsigned threads, uint64_t iterations,
		      uint64_t warmup)
{
	sim_bench_run_up(r, PROFILE, threads, iterations, warmup, true);
}

static uint64_t u64(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		fail_msg("no integer \"%s\"", k);
	return (uint64_t)json_integer_value(v);
}

static const json_t *fn(const json_t *fns, const char *name)
{
	const json_t *n = json_object_get(fns, name);

	if (!n)
		fail_msg("no function \"%s\" here", name);
	return n;
}

static const json_t *kids(const json_t *node)
{
	return json_object_get(node, "children");
}

/* total = self + children's totals at every node; returns the subtree's self times. */
static uint64_t check_node(const json_t *node, const char *name)
{
	uint64_t self = u64(node, "self_ns"), sum_kids = 0, sum_self = self;
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)kids(node), k, v) {
		sum_self += check_node(v, k);
		sum_kids += u64(v, "total_ns");
	}
	if (u64(node, "total_ns") != self + sum_kids)
		fail_msg("%s: total %llu != self %llu + children %llu", name,
			 (unsigned long long)u64(node, "total_ns"), (unsigned long long)self,
			 (unsigned long long)sum_kids);
	return sum_self;
}

static void test_self_times_sum_to_the_measured_latency(void **state)
{
	enum { THREADS = 8, ITERS = 40, WARMUP = 4 };
	static struct sim_bench_run r; /* static: the teardown may need it after a failure */
	const json_t *fns;
	uint64_t measured_self = 0, all_self = 0;
	double measured;
	const char *k;
	json_t *v;

	(void)state;
	run_bench(&r, THREADS, ITERS, WARMUP);
	fns = json_object_get(r.b, "functions");
	json_object_foreach((json_t *)fns, k, v) {
		uint64_t s = check_node(v, k);

		all_self += s;
		if (!strcmp(k, "dma_map") || !strcmp(k, "dma_unmap"))
			measured_self += s;
	}
	assert_int_equal(all_self, u64(r.b, "cpu_ns"));
	/* the measured windows are exactly the top-level dma_map and dma_unmap calls */
	assert_int_equal(u64(fn(fns, "dma_map"), "calls"), THREADS * ITERS);
	assert_int_equal(u64(fn(fns, "dma_unmap"), "calls"), THREADS * ITERS);
	assert_int_equal(u64(fn(kids(fn(fns, "warmup")), "dma_map"), "calls"), THREADS * WARMUP);
	measured = (r.res.map_ns + r.res.unmap_ns) * (double)r.res.loops;
	assert_true(measured > 0);
	/* within 1 % as asked; in fact exact up to the mean's rounding */
	if (fabs((double)measured_self - measured) > 0.01 * measured)
		fail_msg("self times %llu ns, measured %.0f ns", (unsigned long long)measured_self,
			 measured);
	assert_true(fabs((double)measured_self - measured) <= 1e-9 * measured);
	assert_int_equal(u64(r.b, "unbalanced"), 0);
	assert_int_equal(u64(r.b, "lost"), 0);
	sim_bench_run_down(&r);
}

static void test_the_tree_has_the_dma_paths_parents(void **state)
{
	static struct sim_bench_run r; /* static: the teardown may need it after a failure */
	const json_t *fns, *map, *unmap, *issue;

	(void)state;
	run_bench(&r, 4, 20, 0);
	fns = json_object_get(r.b, "functions");
	map = fn(fns, "dma_map");
	unmap = fn(fns, "dma_unmap");
	fn(kids(fn(kids(map), "iommu_map")), "pgtable_map");
	fn(kids(map), "iova_alloc");
	fn(kids(map), "domain_lookup");
	fn(kids(fn(kids(unmap), "iommu_unmap")), "pgtable_unmap");
	fn(kids(unmap), "iova_free");
	issue = fn(kids(fn(kids(fn(kids(unmap), "iotlb_sync")), "tlb_inv_range")),
		   "issue_cmdlist");
	fn(kids(issue), "cmdq_claim");
	fn(kids(issue), "cmdq_write");
	fn(kids(issue), "cmdq_sync_wait");
	fn(kids(issue), "cmdq_owner_wait");
	fn(kids(issue), "cmdq_doorbell");
	/* strict unmaps sync, maps do not: no command queue under dma_map, nothing at the top
	 * but the two entry points and "other" */
	assert_null(json_object_get(kids(map), "iotlb_sync"));
	assert_null(json_object_get(fns, "issue_cmdlist"));
	assert_int_equal(json_object_size(fns), 3);
	fn(fns, "other");
	sim_bench_run_down(&r);
}

static void test_attempts_per_claim_are_counted(void **state)
{
	static struct sim_bench_run r; /* static: the teardown may need it after a failure */
	uint64_t claims, attempts;

	(void)state;
	run_bench(&r, 32, 20, 0);
	claims = u64(r.b, "claims");
	attempts = u64(r.b, "claim_attempts");
	/* one claim per strict unmap's issue (no batch overflows at one page) */
	assert_int_equal(claims, r.drv.issues);
	assert_true(claims >= 32 * 20);
	assert_true(attempts >= claims); /* attempts per claim >= 1 */
	/* every attempt beyond the first of a claim is a cmpxchg the driver saw fail */
	assert_int_equal(attempts - claims, r.drv.cmpxchg_retries);
	sim_bench_run_down(&r);
}

/* Attribution reads clocks and moves none: with the breakdown on, every simulated figure and
 * statistic is what it is with it off. */
static void test_the_breakdown_charges_no_simulated_time(void **state)
{
	static struct sim_bench_run on, off;
	char *a, *b;

	(void)state;
	sim_bench_run_up(&off, PROFILE, 16, 20, 2, false);
	a = json_dumps(off.sim, JSON_SORT_KEYS | JSON_COMPACT);
	sim_bench_run_down(&off);
	sim_bench_run_up(&on, PROFILE, 16, 20, 2, true);
	json_object_del(on.sim, "breakdown");
	b = json_dumps(on.sim, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(on.res.map_ns == off.res.map_ns);
	assert_true(on.res.unmap_ns == off.res.unmap_ns);
	assert_int_equal(on.res.elapsed_ns, off.res.elapsed_ns);
	assert_string_equal(a, b);
	free(a);
	free(b);
	sim_bench_run_down(&on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_self_times_sum_to_the_measured_latency, sim_bench_run_teardown),
		cmocka_unit_test_teardown(test_the_tree_has_the_dma_paths_parents, sim_bench_run_teardown),
		cmocka_unit_test_teardown(test_attempts_per_claim_are_counted, sim_bench_run_teardown),
		cmocka_unit_test_teardown(test_the_breakdown_charges_no_simulated_time, sim_bench_run_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
