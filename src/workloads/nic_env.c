/* nic_env.c — the simulated machine the NIC workloads run on: profile -> topology -> simulator
 * -> plat -> board (SMMU model with the profile's costs, optional ECMDQs) -> SMMUv3 driver
 * (optional spinlock command queue) -> the NIC probed in the case's mode -> ilab_nic_run.
 * It is not the NIC model (nic.c) nor the scenario glue (nic_experiments.c); it exists apart
 * from them because scenario.h and mem.h cannot be included together (both name ILAB_CMA_*).
 * (src/experiments/sim_env.c may later offer this set-up; it has no ECMDQ or cmdq_mode knob yet.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/nic.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/topo.h>

#include "workloads/nic_env.h"

static const struct ilab_device *pick_nic(const struct ilab_topo *t, int node)
{
	const struct ilab_device *best = NULL;
	int best_score = -1;

	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);
		int score = (d->kind == ILAB_DEV_NIC) * 2 + (d->node == node);

		if (score > best_score) {
			best = d;
			best_score = score;
		}
	}
	return best;
}

int ilab_nic_env_run(const struct ilab_nic_env *e, const struct ilab_nic_cfg *cfg,
		     struct ilab_nic_result *res, char **stats_json, char *err, size_t errlen)
{
	struct ilab_profile *prof = plat_zalloc_array(1, sizeof(*prof));
	struct ilab_topo *topo = NULL;
	struct ilab_sim *sim = NULL;
	struct ilab_board *board = NULL;
	struct ilab_board_opts bo = { 0 };
	struct smmu_config scfg;
	struct ilab_smmu_drv_opts dro = { 0 };
	struct ilab_dma_options dopts;
	const struct ilab_device *td;
	struct ilab_dev *devs, *dev = NULL;
	enum ilab_domain_type type;
	char path[ILAB_PROFILE_PATH_MAX];
	unsigned ndev;
	int ret;

	if (stats_json)
		*stats_json = NULL;
	if (!prof)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	ret = ilab_profile_resolve(e->profile, path, sizeof(path), err, errlen);
	if (!ret)
		ret = ilab_profile_load(path, prof, err, errlen);
	if (!ret)
		ret = ilab_topo_load(prof->topology, &topo, err, errlen);
	if (ret)
		goto out_prof;
	td = pick_nic(topo, e->nic_node);
	if (!td) {
		snprintf(err, errlen, "topology %s has no device", prof->topology);
		ret = -EINVAL;
		goto out_topo;
	}
	ret = ilab_sim_create_topo(topo, prof, &(struct ilab_sim_config){ .seed = e->seed }, &sim,
				   err, errlen);
	if (ret)
		goto out_topo;
	ret = plat_init(&(struct plat_config){ .engine = PLAT_ENGINE_SIM, .topo = topo,
					       .sim = ilab_sim_ops(sim) });
	if (ret) {
		snprintf(err, errlen, "cannot set up the platform (%d)", ret);
		goto out_sim;
	}
	smmu_config_default(&scfg);
	scfg.seed = e->seed;
	if (prof->smmu_ril >= 0) /* the machine's SMMU, the same for every experiment on it */
		scfg.ril = prof->smmu_ril;
	if (e->ecmdq_hw) {
		/* SMMUv3.3 with one ECMDQ per CPU, executed one at a time (seed 003's hardware) */
		scfg.arch_minor = 3;
		scfg.ecmdq_count = 1;
		while (scfg.ecmdq_count < ilab_topo_nr_cpus(topo) && scfg.ecmdq_count < 1024)
			scfg.ecmdq_count *= 2;
		scfg.ecmdq_parallel = false;
	}
	bo.smmu_cfg = &scfg;
	bo.cma = e->cma_pernuma ? ILAB_CMA_PERNUMA : ILAB_CMA_GLOBAL;
	bo.smmu_mask = 1ull << td->smmu;
	bo.smmu_command_ns = prof->smmu_command_ns;
	bo.smmu_sync_ns = prof->smmu_sync_ns;
	bo.smmu_tlbi_sync_ns = prof->smmu_tlbi_sync_ns;
	bo.smmu_tlb_lookup_ns = prof->smmu_tlb_lookup_ns;
	ret = ilab_board_create(topo, &bo, &board, err, errlen);
	if (ret)
		goto out_plat;
	dro.ecmdq = e->ecmdq_use ? ILAB_SMMU_ECMDQ_ON : ILAB_SMMU_ECMDQ_OFF;
	if (e->cmdq_spinlock) {
		dro.cmdq_mode = ILAB_SMMU_CMDQ_SPINLOCK;
		dro.cmdq_log2 = 8; /* Linux <= 5.3 CMDQ_MAX_SZ_SHIFT */
	}
	if ((ret = ilab_board_start(board)) || (ret = ilab_board_probe_iommus(board, &dro))) {
		snprintf(err, errlen, "cannot start the SMMU (%d): %s %s", ret,
			 ilab_smmu_drv_strerror(), ilab_sim_error(sim));
		goto out_board;
	}
	ilab_board_devices(board, &devs, &ndev);
	for (unsigned i = 0; i < ndev; i++)
		if (!strcmp(devs[i].name, td->name))
			dev = &devs[i];
	if (!dev || !dev->iommu) {
		snprintf(err, errlen, "device %s has no IOMMU on the board", td->name);
		ret = -ENODEV;
		goto out_board;
	}
	dev->pci = true;
	type = e->mode == ILAB_NIC_ENV_LAZY ? ILAB_DOMAIN_DMA_FQ
	       : e->mode == ILAB_NIC_ENV_PASSTHROUGH ? ILAB_DOMAIN_IDENTITY : ILAB_DOMAIN_DMA;
	ret = ilab_iommu_probe_device(dev, type);
	if (ret) {
		snprintf(err, errlen, "%s", ilab_iommu_strerror());
		goto out_board;
	}
	if (type != ILAB_DOMAIN_IDENTITY) {
		ilab_dma_options_default(&dopts);
		dopts.use_map_pages = e->map_pages;
		dopts.lookup = e->lookup_refcount ? ILAB_DMA_LOOKUP_REFCOUNT : ILAB_DMA_LOOKUP_DIRECT;
		ret = ilab_dma_configure(dev, &dopts);
		if (ret) {
			snprintf(err, errlen, "%s", ilab_iommu_strerror());
			goto out_dev;
		}
	}
	ret = ilab_nic_run(board, dev, cfg, res, err, errlen);
	if (ret && *ilab_sim_error(sim)) {
		size_t l = strlen(err);

		snprintf(err + l, errlen > l ? errlen - l : 0, ": %s", ilab_sim_error(sim));
	}
	if (!ret && stats_json)
		*stats_json = ilab_sim_json_dumps(sim);
out_dev:
	ilab_iommu_release_device(dev);
out_board:
	ilab_board_destroy(board);
out_plat:
	plat_fini();
out_sim:
	ilab_sim_destroy(sim);
out_topo:
	ilab_topo_free(topo);
out_prof:
	free(prof);
	return ret;
}
