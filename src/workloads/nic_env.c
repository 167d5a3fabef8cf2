/* nic_env.c — the simulated machine the NIC workloads run on: profile -> topology -> simulator
 * -> plat -> board (SMMU model with the profile's costs, optional ECMDQs) -> SMMUv3 driver
 * (optional spinlock command queue) -> the NIC probed in the case's mode -> ilab_nic_run.
 * The machine itself is a testbed (include/iommulab/testbed.h).
 * It is not the NIC model (nic.c) nor the scenario glue (nic_experiments.c): the machine's
 * set-up stays apart from both.
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
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#include "workloads/nic_env.h"
#include "util/errf.h"

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

int ilab_nic_env_profile_check(const struct ilab_profile *p, char *err, size_t errlen)
{
	if (p->nic.rx_buffer_ns && p->nic.rx_copy_mbps)
		return 0; /* the loader saw to the rest: a rate, the ranges */
	snprintf(err, errlen, "profile %s describes no receive stack: its nic: section needs "
		 "rx_buffer_ns, rx_copy_mbps and link_gbps or rx_completions_kps", p->name);
	return -EINVAL;
}

/* The machine's NIC and network stack, as its profile describes them (nic: section): one
 * description serves every experiment on the machine. */
static int nic_from_profile(const struct ilab_profile *p, struct ilab_nic_cfg *c, char *err,
			    size_t errlen)
{
	const struct ilab_profile_nic *n = &p->nic;
	int ret = ilab_nic_env_profile_check(p, err, errlen);

	if (ret)
		return ret;
	c->link_gbps = (double)n->link_gbps;
	c->max_mpps = 0;
	c->max_buffers_mps = (double)n->rx_completions_kps / 1000.0;
	c->stack_ns = 0;
	c->stack_buffer_ns = n->rx_buffer_ns;
	c->copy_mbps = n->rx_copy_mbps;
	return 0;
}

/* The seeds' run on the machine: the NIC model with the profile's rates and costs. */
struct nic_run_arg {
	const struct ilab_nic_env *e;
	const struct ilab_nic_cfg *cfg;
	struct ilab_nic_result *res;
};

static int nic_run(struct ilab_board *board, struct ilab_dev *dev,
		   const struct ilab_profile *prof, void *arg, char *err, size_t errlen)
{
	struct nic_run_arg *a = arg;
	struct ilab_nic_cfg cfg = *a->cfg;
	int ret = 0;

	if (a->e->nic_from_profile)
		ret = nic_from_profile(prof, &cfg, err, errlen);
	return ret ? ret : ilab_nic_run(board, dev, &cfg, a->res, err, errlen);
}

int ilab_nic_env_run(const struct ilab_nic_env *e, const struct ilab_nic_cfg *cfg,
		     struct ilab_nic_result *res, char **stats_json, char *err, size_t errlen)
{
	struct nic_run_arg a = { .e = e, .cfg = cfg, .res = res };

	if (stats_json)
		*stats_json = NULL;
	if (!cfg)
		return snprintf(err, errlen, "no NIC configuration"), -EINVAL;
	return ilab_nic_env_run_fn(e, false, nic_run, &a, stats_json, NULL, err, errlen);
}

int ilab_nic_env_run_fn(const struct ilab_nic_env *e, bool need_nic, ilab_nic_env_fn fn,
			void *arg, char **stats_json, struct ilab_nic_env_info *info, char *err,
			size_t errlen)
{
	struct ilab_profile *prof = plat_zalloc_array(1, sizeof(*prof));
	struct ilab_testbed tb = { 0 };
	struct ilab_testbed_opts to = { .seed = e->seed, .cma = ILAB_CMA_GLOBAL };
	struct ilab_dma_options dopts;
	const struct ilab_device *td;
	struct ilab_dev *dev = NULL;
	enum ilab_domain_type type;
	int ret;

	if (stats_json)
		*stats_json = NULL;
	if (!prof)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	ret = ilab_profile_open(e->profile, prof, err, errlen);
	if (!ret && e->nic_from_profile)
		ret = ilab_nic_env_profile_check(prof, err, errlen);
	to.profile = prof;
	if (!ret)
		ret = ilab_testbed_load_topology(&tb, &to, err, errlen);
	if (ret)
		goto out;
	td = pick_nic(tb.topo, e->nic_node);
	if (!td || (need_nic && td->kind != ILAB_DEV_NIC)) {
		if (need_nic)
			snprintf(err, errlen, "topology %s has no NIC device",
				 ilab_topo_name(tb.topo));
		else
			ilab_topo_explain_no_device(tb.topo, NULL, err, errlen); /* none at all */
		ret = -EINVAL;
		goto out;
	}
	if (info) {
		snprintf(info->profile, sizeof(info->profile), "%s", prof->name);
		snprintf(info->device, sizeof(info->device), "%s", td->name);
		info->node = td->node;
		info->iommu = (unsigned)td->smmu;
	}
	to.smmu_mask = 1ull << td->smmu;
	if (e->cma_pernuma)
		to.cma = ILAB_CMA_PERNUMA;
	to.ecmdq_per_cpu = e->ecmdq_hw; /* seed 003's hardware */
	to.drv.ecmdq = e->ecmdq_use ? ILAB_SMMU_ECMDQ_ON : ILAB_SMMU_ECMDQ_OFF;
	if (e->kernel) {
		ilab_kernel_era_drv_opts(e->kernel, &to.drv);
		ilab_kernel_era_vtd_opts(e->kernel, &to.vtd_drv);
	}
	if (e->cmdq_spinlock) {
		to.drv.cmdq_mode = ILAB_SMMU_CMDQ_SPINLOCK;
		to.drv.cmdq_log2 = 8; /* Linux <= 5.3 CMDQ_MAX_SZ_SHIFT */
	}
	ret = ilab_testbed_up(&tb, &to, err, errlen);
	if (ret)
		goto out;
	ilab_sim_breakdown_enable(tb.sim); /* every case's stats carry it */
	dev = ilab_testbed_dev(&tb, td->name);
	if (!dev || !dev->iommu) {
		snprintf(err, errlen, "device %s has no IOMMU on the board", td->name);
		ret = -ENODEV;
		dev = NULL;
		goto out;
	}
	dev->pci = true;
	type = e->mode == ILAB_NIC_ENV_LAZY ? ILAB_DOMAIN_DMA_FQ
	       : e->mode == ILAB_NIC_ENV_PASSTHROUGH ? ILAB_DOMAIN_IDENTITY : ILAB_DOMAIN_DMA;
	ret = ilab_iommu_probe_device(dev, type);
	if (ret) {
		snprintf(err, errlen, "%s", ilab_iommu_strerror());
		dev = NULL;
		goto out;
	}
	if (type != ILAB_DOMAIN_IDENTITY) {
		ilab_dma_options_default(&dopts);
		if (e->kernel)
			ilab_kernel_era_dma_opts(e->kernel, &dopts);
		dopts.use_map_pages = e->map_pages;
		dopts.lookup = e->lookup_refcount ? ILAB_DMA_LOOKUP_REFCOUNT : ILAB_DMA_LOOKUP_DIRECT;
		ret = ilab_dma_configure(dev, &dopts);
		if (ret) {
			snprintf(err, errlen, "%s", ilab_iommu_strerror());
			goto out;
		}
	}
	ret = fn(tb.board, dev, prof, arg, err, errlen);
	if (ret)
		ilab_errf_cause(err, errlen, ret, ilab_testbed_sim_error(&tb));
	if (!ret && stats_json)
		*stats_json = ilab_testbed_stats_json(&tb);
out:
	if (dev)
		ilab_iommu_release_device(dev);
	ilab_testbed_down(&tb);
	free(prof);
	return ret;
}
