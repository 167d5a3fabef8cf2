/* sim_env.c — a simulated machine for an experiment: the profile, the testbed built from it
 * (include/iommulab/testbed.h) and one DMA device probed on it; plus the glue that runs the
 * dma_map_benchmark workload on it. It is not the workloads' measurement code
 * (src/workloads/map_benchmark.c, cmdsync.c) nor the scenario runner.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/kernel_era.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#include "experiments/sim_env.h"
#include "experiments/sim_env_internal.h"
#include "util/errf.h"

static int env_err(char *err, size_t errlen, int code, const char *what, const char *why)
{
	snprintf(err, errlen, "%s%s%s", what, why && *why ? ": " : "", why ? why : "");
	return code;
}

/* The device behind the SMMU of smmu_node: a NIC first, else any. */
static const struct ilab_device *pick_device(const struct ilab_topo *t, int smmu_node)
{
	const struct ilab_device *best = NULL;
	int best_score = -1;

	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);
		const struct ilab_smmu_desc *si = ilab_topo_smmu(t, d->smmu);
		int score;

		if (!si || si->node != smmu_node)
			continue;
		score = d->kind == ILAB_DEV_NIC;
		if (score > best_score) {
			best = d;
			best_score = score;
		}
	}
	return best;
}

int ilab_sim_env_up(const struct ilab_sim_env_cfg *cfg, struct ilab_sim_env **out, char *err,
		    size_t errlen)
{
	struct ilab_sim_env *e;
	struct ilab_testbed_opts to = { .seed = cfg->seed };
	struct ilab_dma_options dopts;
	const struct ilab_device *td;
	char msg[600];
	int ret;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return env_err(err, errlen, -ENOMEM, "out of memory", NULL);
	ret = ilab_profile_open(cfg->profile ? cfg->profile : "kunpeng920", &e->prof, msg,
				sizeof(msg));
	if (ret) {
		free(e);
		return env_err(err, errlen, -EINVAL, "profile", msg);
	}
	to.profile = &e->prof;
	if (ilab_testbed_load_topology(&e->tb, &to, err, errlen)) {
		ret = -EINVAL;
		goto fail;
	}
	td = pick_device(e->tb.topo, cfg->smmu_node);
	if (!td) {
		if (!ilab_topo_nr_devices(e->tb.topo))
			ilab_topo_explain_no_device(e->tb.topo, NULL, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "no device behind an IOMMU unit on node %d",
				 cfg->smmu_node);
		ret = env_err(err, errlen, -EINVAL, msg, NULL);
		goto fail;
	}
	e->smmu = td->smmu;
	to.smmu_mask = 1ull << e->smmu;
	to.cma = cfg->cma_pernuma ? ILAB_CMA_PERNUMA : ILAB_CMA_GLOBAL;
	to.cma_global_node = cfg->cma_global_node;
	if (cfg->kernel) {
		ilab_kernel_era_drv_opts(cfg->kernel, &to.drv);
		ilab_kernel_era_vtd_opts(cfg->kernel, &to.vtd_drv);
	}
	to.ecmdq_per_cpu = cfg->ecmdq;
	to.drv.ecmdq = cfg->ecmdq ? ILAB_SMMU_ECMDQ_ON : ILAB_SMMU_ECMDQ_OFF;
	to.drv.cmdqv = cfg->cmdqv ? ILAB_SMMU_CMDQV_ON : ILAB_SMMU_CMDQV_OFF;
	to.drv.cmdq_fair_lock = cfg->cmdq_fair_lock;
	ret = ilab_testbed_up(&e->tb, &to, err, errlen);
	if (ret)
		goto fail;
	ilab_sim_breakdown_enable(e->tb.sim); /* every case's stats carry it */
	e->iommu = ilab_board_iommu(e->tb.board, e->smmu);
	e->dev = ilab_testbed_dev(&e->tb, td->name);
	if (!e->dev || !e->dev->iommu || !e->iommu) {
		ret = env_err(err, errlen, -ENODEV, "the device has no IOMMU on the board", NULL);
		goto fail;
	}
	e->dev->pci = td->kind != ILAB_DEV_OTHER;
	ret = ilab_iommu_probe_device(e->dev, cfg->mode == ILAB_ENV_LAZY ? ILAB_DOMAIN_DMA_FQ
					      : cfg->mode == ILAB_ENV_PASSTHROUGH ? ILAB_DOMAIN_IDENTITY
										  : ILAB_DOMAIN_DMA);
	if (ret) {
		env_err(err, errlen, ret, "probe", ilab_iommu_strerror());
		goto fail;
	}
	e->dev_probed = true;
	ilab_dma_options_default(&dopts);
	if (cfg->kernel)
		ilab_kernel_era_dma_opts(cfg->kernel, &dopts);
	dopts.use_map_pages = cfg->map_pages;
	dopts.lookup = cfg->lookup_refcount ? ILAB_DMA_LOOKUP_REFCOUNT : ILAB_DMA_LOOKUP_DIRECT;
	ilab_dma_options_set_fq_kind(&dopts, cfg->fq_single ? ILAB_DMA_FQ_SINGLE
							  : ILAB_DMA_FQ_PERCPU);
	if (cfg->fq_size)
		dopts.fq_size = cfg->fq_size;
	if (cfg->fq_timeout_ns)
		dopts.fq_timeout_ns = cfg->fq_timeout_ns;
	dopts.iova_depot = cfg->iova_depot_fixed32 ? ILAB_IOVA_DEPOT_FIXED32 : ILAB_IOVA_DEPOT_LIST;
	ret = ilab_dma_configure(e->dev, &dopts);
	if (ret) {
		env_err(err, errlen, ret, "DMA set-up", ilab_iommu_strerror());
		goto fail;
	}
	*out = e;
	return 0;
fail:
	ilab_sim_env_down(e);
	return ret;
}

void ilab_sim_env_down(struct ilab_sim_env *e)
{
	if (!e)
		return;
	if (e->dev_probed)
		ilab_iommu_release_device(e->dev);
	ilab_testbed_down(&e->tb);
	free(e);
}

char *ilab_sim_env_stats_json(struct ilab_sim_env *e)
{
	return e ? ilab_testbed_stats_json(&e->tb) : NULL;
}

int ilab_sim_env_smmu_node(const struct ilab_sim_env *e)
{
	return ilab_board_smmu_node(e->tb.board, e->smmu);
}

int ilab_sim_env_cmdq_node(const struct ilab_sim_env *e)
{
	struct ilab_smmu_drv_info info;

	if (ilab_smmu_drv_get_info(e->iommu, &info))
		return -1;
	return ilab_mem_node_of(ilab_board_mem(e->tb.board), info.cmdq_pa);
}

int ilab_sim_env_map_bench(struct ilab_sim_env *e, unsigned threads, unsigned granule,
			   uint64_t iterations, int node, unsigned dma_trans_ns,
			   struct ilab_sim_env_map_result *r, char *err, size_t errlen)
{
	struct ilab_map_bench_cfg cfg;
	struct ilab_map_bench_result res;
	struct ilab_smmu_drv_stats *ds = calloc(1, sizeof(*ds));
	int ret;

	if (!ds)
		return env_err(err, errlen, -ENOMEM, "out of memory", NULL);
	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = threads;
	cfg.granule = granule;
	cfg.iterations = iterations;
	cfg.warmup = 2; /* page tables allocated, IOVA caches filled, queue lines in place */
	cfg.node = node;
	cfg.dma_trans_ns = dma_trans_ns;
	ilab_smmu_drv_clear_stats(e->iommu);
	ret = ilab_map_bench_run(e->dev, ilab_board_mem(e->tb.board), &cfg, &res, err, errlen);
	if (!ret) {
		*r = (struct ilab_sim_env_map_result){
			.map_us = (double)res.avg_map_100ns / 10.0,
			.unmap_us = (double)res.avg_unmap_100ns / 10.0,
			.map_ns = res.map_ns,
			.unmap_ns = res.unmap_ns,
		};
		if (!ilab_smmu_drv_get_stats(e->iommu, ds)) {
			r->cmpxchg_retries = ds->cmpxchg_retries;
			r->issues = ds->issues;
		}
	} else {
		ilab_errf_cause(err, errlen, ret, ilab_testbed_sim_error(&e->tb));
	}
	free(ds);
	return ret;
}
