/* nvme_env.c — the simulated machine the fio workload runs on: profile -> topology -> simulator
 * -> plat -> board (only the drive's IOMMU modelled) -> driver -> the topology's NVMe probed in
 * the case's mode (strict: DMA domain, lazy: DMA_FQ, passthrough: identity) -> ilab_nvme_run.
 * The machine itself is a testbed (include/iommulab/testbed.h).
 * It is not the NVMe model (nvme.c) nor the scenario glue (fio_experiments.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/nvme.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#include "workloads/nvme_env.h"
#include "util/errf.h"

int ilab_nvme_env_profile_check(const struct ilab_profile *p, char *err, size_t errlen)
{
	if (p->nvme.read_latency_ns) /* the loader saw to the rest: every key is required */
		return 0;
	snprintf(err, errlen, "profile %s describes no NVMe drive: it needs an nvme: section "
		 "(docs/fio.md)", p->name);
	return -EINVAL;
}

void ilab_nvme_env_drive_from_profile(const struct ilab_profile *p, struct ilab_nvme_cfg *c)
{
	const struct ilab_profile_nvme *n = &p->nvme;

	c->read_latency_ns = n->read_latency_ns;
	c->write_latency_ns = n->write_latency_ns;
	c->read_iops = n->read_iops;
	c->write_iops = n->write_iops;
	c->trim_latency_ns = n->trim_latency_ns;
	c->trim_iops = n->trim_iops;
	c->read_mbps = n->read_mbps;
	c->write_mbps = n->write_mbps;
	c->submit_ns = n->submit_ns;
	c->complete_ns = n->complete_ns;
	c->irq_ns = n->irq_ns;
}

const struct ilab_device *ilab_nvme_env_pick(const struct ilab_topo *t, const char *name,
					     char *err, size_t errlen)
{
	size_t off = 0;

	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);

		if (d->kind == ILAB_DEV_NVME && (!name || !strcmp(d->name, name)))
			return d;
	}
	if (!name) {
		snprintf(err, errlen, "topology %s has no NVMe device (an hwloc XML export lists "
			 "one as PCI class 0108)", ilab_topo_name(t));
		return NULL;
	}
	off = (size_t)snprintf(err, errlen, "no NVMe device %s in topology %s; its NVMe devices: ",
			       name, ilab_topo_name(t));
	for (unsigned i = 0, k = 0; i < ilab_topo_nr_devices(t) && off < errlen; i++)
		if (ilab_topo_device(t, i)->kind == ILAB_DEV_NVME)
			off += (size_t)snprintf(err + off, errlen - off, "%s%s", k++ ? " " : "",
						ilab_topo_device(t, i)->name);
	return NULL;
}

static enum ilab_domain_type domain_type(enum ilab_nvme_env_mode m)
{
	return m == ILAB_NVME_ENV_LAZY ? ILAB_DOMAIN_DMA_FQ
	       : m == ILAB_NVME_ENV_PASSTHROUGH ? ILAB_DOMAIN_IDENTITY : ILAB_DOMAIN_DMA;
}

/* The drive on the board, probed in the mode, its DMA options Linux's. */
static int probe(struct ilab_testbed *tb, const struct ilab_device *td,
		 enum ilab_nvme_env_mode mode, const struct ilab_kernel_era *kernel,
		 struct ilab_dev **out, char *err, size_t errlen)
{
	enum ilab_domain_type type = domain_type(mode);
	struct ilab_dma_options dopts;
	struct ilab_dev *dev = ilab_testbed_dev(tb, td->name);

	*out = NULL;
	if (!dev || !dev->iommu)
		return snprintf(err, errlen, "device %s has no IOMMU on the board", td->name),
		       -ENODEV;
	dev->pci = true;
	if (ilab_iommu_probe_device(dev, type))
		return snprintf(err, errlen, "%s", ilab_iommu_strerror()), -ENODEV;
	*out = dev;
	if (type == ILAB_DOMAIN_IDENTITY)
		return 0;
	ilab_dma_options_default(&dopts);
	if (kernel)
		ilab_kernel_era_dma_opts(kernel, &dopts);
	if (!dopts.use_map_pages && !ilab_dma_has_per_page_path(dev))
		dopts.use_map_pages = true; /* a driver with map_pages only (VT-d) */
	if (ilab_dma_configure(dev, &dopts))
		return snprintf(err, errlen, "%s", ilab_iommu_strerror()), -EINVAL;
	return 0;
}

int ilab_nvme_env_run(const struct ilab_nvme_env *e, const struct ilab_nvme_cfg *cfg_in,
		      struct ilab_nvme_result *res, char **stats_json,
		      struct ilab_nvme_env_info *info, char *err, size_t errlen)
{
	struct ilab_profile *prof = plat_zalloc_array(1, sizeof(*prof));
	struct ilab_testbed tb = { 0 };
	struct ilab_testbed_opts to = { .seed = e->seed, .cma = ILAB_CMA_GLOBAL };
	struct ilab_nvme_cfg cfg;
	const struct ilab_device *td;
	struct ilab_dev *dev = NULL;
	int ret;

	if (stats_json)
		*stats_json = NULL;
	if (!prof)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	if (!cfg_in) {
		free(prof);
		return snprintf(err, errlen, "no fio configuration"), -EINVAL;
	}
	cfg = *cfg_in;
	ret = ilab_profile_open(e->profile, prof, err, errlen);
	to.profile = prof;
	if (!ret)
		ret = ilab_testbed_load_topology(&tb, &to, err, errlen);
	if (ret)
		goto out;
	td = ilab_nvme_env_pick(tb.topo, e->device, err, errlen);
	if (!td) {
		ret = -EINVAL;
		goto out;
	}
	if (e->drive_from_profile) { /* the machine has the drive: does its profile say what? */
		ret = ilab_nvme_env_profile_check(prof, err, errlen);
		if (ret)
			goto out;
		ilab_nvme_env_drive_from_profile(prof, &cfg);
	}
	if (info) {
		snprintf(info->profile, sizeof(info->profile), "%s", prof->name);
		snprintf(info->device, sizeof(info->device), "%s", td->name);
		info->node = td->node;
		info->iommu = td->smmu;
	}
	to.smmu_mask = 1ull << td->smmu;
	if (e->kernel) {
		ilab_kernel_era_nvme_opts(e->kernel, &cfg);
		ilab_kernel_era_drv_opts(e->kernel, &to.drv);
		ilab_kernel_era_vtd_opts(e->kernel, &to.vtd_drv);
	}
	ret = ilab_testbed_up(&tb, &to, err, errlen);
	if (ret)
		goto out;
	ilab_sim_breakdown_enable(tb.sim);
	ret = probe(&tb, td, e->mode, e->kernel, &dev, err, errlen);
	if (!ret)
		ret = ilab_nvme_run(tb.board, dev, &cfg, res, err, errlen);
	if (ret && ret != -EIO)
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
