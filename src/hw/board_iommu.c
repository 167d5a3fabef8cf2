/* board_iommu.c — what a platform's firmware tables and bus probing do for the board: probe the
 * SMMUv3 driver on every SMMU and hand out the devices with their IOMMU. Not the driver itself
 * (src/drivers/arm-smmu-v3*.c) and not the IOMMU core (groups, attach: src/iommu).
 */
#include <errno.h>

#include "hw/board_internal.h"

int ilab_board_probe_iommus(struct ilab_board *b, const struct ilab_smmu_drv_opts *opts)
{
	if (!b)
		return -EINVAL;
	for (unsigned i = 0; i < b->nr_smmus; i++) {
		struct board_smmu *bs = &b->smmus[i];
		int rc;

		if (bs->iommu || !bs->smmu)
			continue;
		if (!bs->agent)
			return -EAGAIN; /* nothing would consume the probe's commands */
		rc = ilab_smmu_drv_probe(&bs->mmio, b->mem, bs->node, opts, &bs->iommu);
		if (rc)
			return rc;
	}
	for (unsigned i = 0; i < b->nr_devs; i++)
		b->devs[i].iommu = b->smmus[b->dev_smmu[i]].iommu;
	return 0;
}

struct ilab_iommu *ilab_board_iommu(struct ilab_board *b, unsigned i)
{
	return b && i < b->nr_smmus ? b->smmus[i].iommu : NULL;
}

void board_remove_iommus(struct ilab_board *b)
{
	for (unsigned i = 0; b->smmus && i < b->nr_smmus; i++) {
		if (!b->smmus[i].iommu)
			continue;
		ilab_smmu_drv_remove(b->smmus[i].iommu); /* registers only: no commands */
		b->smmus[i].iommu = NULL;
	}
	for (unsigned i = 0; i < b->nr_devs; i++)
		b->devs[i].iommu = NULL;
}

int ilab_board_devices(struct ilab_board *b, struct ilab_dev **devs, unsigned *n)
{
	if (!b || !devs || !n)
		return -EINVAL;
	*devs = b->devs;
	*n = b->nr_devs;
	return 0;
}

int ilab_board_dev_smmu(const struct ilab_board *b, const struct ilab_dev *dev)
{
	if (!b || !dev || dev < b->devs || dev >= b->devs + b->nr_devs)
		return -EINVAL;
	return (int)b->dev_smmu[dev - b->devs];
}
