/* sim_bench_run.c — see sim_bench_run.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/plat.h>
#include <iommulab/topo.h>

#include "sim_bench_run.h"

/* The run set up and not yet torn down: a failed assertion leaves it to the teardown, so that
 * the next test can set up its own platform. */
static struct sim_bench_run *live;

/* kunpeng920, only the NIC's SMMU, the NIC in a strict DMA domain; run the benchmark, with
 * the breakdown on or off. */
void sim_bench_run_up(struct sim_bench_run *r, const char *profile, unsigned threads,
		      uint64_t iterations, uint64_t warmup, bool breakdown)
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

void sim_bench_run_down(struct sim_bench_run *r)
{
	json_decref(r->sim);
	r->sim = NULL;
	ilab_testbed_down(&r->tb);
	live = NULL;
}

int sim_bench_run_teardown(void **state)
{
	(void)state;
	if (live)
		sim_bench_run_down(live);
	return 0;
}

