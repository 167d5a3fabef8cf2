/* test_sim_contention_stack.c — the line contention model (cache.contention: home,
 * docs/simulation.md "Line contention model") on the whole stack: dma_map_benchmark threads on
 * the Kunpeng 920 contention profile in strict mode. One CPU claims command-queue space at the
 * first attempt; once enough CPUs contend, some claims take more. The mechanism's own figures
 * are test_sim_contention.c's. The set-up (run_bench_as) is test_sim_breakdown.c's, with the
 * profile as a parameter.
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

#define CONTENTION ILAB_TESTDATA "/../../profiles/kunpeng920-contention.yaml"

struct run {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	struct ilab_iommu *iommu;
	struct ilab_map_bench_result res;
	struct ilab_smmu_drv_stats drv;
	json_t *sim; /* ilab_sim_json after the run */
	json_t *b;   /* its "breakdown" */
};

/* The run set up and not yet torn down: a failed assertion leaves it to the teardown, so that
 * the next test can set up its own platform. */
static struct run *live;

/* kunpeng920, only the NIC's SMMU, the NIC in a strict DMA domain; run the benchmark, with
 * the breakdown on or off. */
static void run_bench_as(struct run *r, const char *profile, unsigned threads, uint64_t iterations,
			 uint64_t warmup, bool breakdown)
{
	struct ilab_testbed_opts to = { .profile = &r->prof, .seed = 1 };
	const struct ilab_device *td = NULL;
	struct ilab_map_bench_cfg cfg;
	struct ilab_dma_options dopts;
	struct ilab_dev *nic;
	char err[512];

	memset(r, 0, sizeof(*r));
	live = r;
	if (ilab_profile_load(profile, &r->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	if (ilab_testbed_load_topology(&r->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < ilab_topo_nr_devices(r->tb.topo); i++) {
		const struct ilab_device *d = ilab_topo_device(r->tb.topo, i);

		if (d->kind == ILAB_DEV_NIC && d->node == 2)
			td = d;
	}
	assert_non_null(td);
	to.smmu_mask = 1ull << td->smmu;
	if (ilab_testbed_up(&r->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	if (breakdown)
		ilab_sim_breakdown_enable(r->tb.sim);
	r->iommu = ilab_board_iommu(r->tb.board, td->smmu);
	nic = ilab_testbed_dev(&r->tb, td->name);
	assert_non_null(nic);
	nic->pci = true;
	assert_int_equal(ilab_iommu_probe_device(nic, ILAB_DOMAIN_DMA), 0);
	ilab_dma_options_default(&dopts);
	assert_int_equal(ilab_dma_configure(nic, &dopts), 0);

	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = threads;
	cfg.node = -1;
	cfg.iterations = iterations;
	cfg.warmup = warmup;
	/* the driver's counters from here on: set-up issued commands from outside the threads */
	ilab_smmu_drv_clear_stats(r->iommu);
	if (ilab_map_bench_run(nic, ilab_board_mem(r->tb.board), &cfg, &r->res, err, sizeof(err)))
		fail_msg("bench: %s", err);
	assert_int_equal(r->res.loops, threads * iterations);
	assert_int_equal(ilab_smmu_drv_get_stats(r->iommu, &r->drv), 0);
	r->sim = ilab_sim_json(r->tb.sim);
	assert_non_null(r->sim);
	r->b = json_object_get(r->sim, "breakdown");
	if (breakdown)
		assert_non_null(r->b);
	else
		assert_null(r->b);
	ilab_iommu_release_device(nic);
}

static void run_done(struct run *r)
{
	json_decref(r->sim);
	r->sim = NULL;
	ilab_testbed_down(&r->tb);
	live = NULL;
}

static int teardown(void **state)
{
	(void)state;
	if (live)
		run_done(live);
	return 0;
}

static uint64_t u64(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	return (uint64_t)json_integer_value(v);
}

/* 1 CPU: every claim succeeds at its first cmpxchg (nobody else writes the llq line). */
static void one_cpu_claims_at_the_first_attempt(void **state)
{
	static struct run r; /* static: the teardown may need it after a failure */

	(void)state;
	run_bench_as(&r, CONTENTION, 1, 200, 2, true);
	assert_int_equal(r.prof.cache_contention, ILAB_CONTENTION_HOME);
	assert_true(u64(r.b, "claims") >= 200);
	assert_int_equal(u64(r.b, "claim_attempts"), u64(r.b, "claims"));
	assert_int_equal(r.drv.cmpxchg_retries, 0);
	run_done(&r);
}

/* 128 CPUs: claims collide at the llq line's home, and the breakdown's attempts agree with
 * the driver's failed cmpxchgs. (How many more than one: docs/simulation.md's table.) */
static void many_cpus_need_more_attempts(void **state)
{
	static struct run r; /* static: the teardown may need it after a failure */
	uint64_t claims, attempts;

	(void)state;
	run_bench_as(&r, CONTENTION, 128, 20, 2, true);
	claims = u64(r.b, "claims");
	attempts = u64(r.b, "claim_attempts");
	print_message("128 CPUs: %lu attempts in %lu claims, %lu failed cmpxchg\n",
		      (unsigned long)attempts, (unsigned long)claims,
		      (unsigned long)r.drv.cmpxchg_retries);
	assert_true(attempts > claims);
	assert_int_equal(attempts - claims, r.drv.cmpxchg_retries);
	run_done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(one_cpu_claims_at_the_first_attempt, teardown),
		cmocka_unit_test_teardown(many_cpus_need_more_attempts, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
