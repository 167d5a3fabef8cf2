/* board_iommu.c — what a platform's firmware tables and bus probing do for the board: probe
 * each unit's driver (the architecture's probe, iommu_arch.h) and hand out the devices with
 * their IOMMU. Not a driver (src/drivers/) and not the IOMMU core (groups, attach: src/iommu).
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "hw/board_internal.h"

static _Thread_local const char *probe_why;

int ilab_board_probe_drivers(struct ilab_board *b, const char *arch, const void *drv_opts)
{
	probe_why = NULL;
	if (!b)
		return -EINVAL;
	for (unsigned i = 0; i < b->nr_units; i++) {
		struct board_unit *bu = board_unit_modelled(b, i);
		const struct ilab_iommu_arch *a;
		const char *why = NULL;
		int rc;

		if (!bu || bu->iommu)
			continue;
		if (!bu->agent)
			return -EAGAIN; /* nothing would consume the probe's commands */
		a = bu->unit.arch;
		rc = a->probe(&bu->unit, &bu->mmio,
			      arch && !strcmp(arch, a->name) ? drv_opts : NULL, &bu->iommu, &why);
		if (rc) {
			bu->iommu = NULL;
			probe_why = why;
			return rc;
		}
		atomic_store(&bu->irq_drv, bu->iommu); /* request_irq */
		if (atomic_load(&bu->irq_pending)) /* raised during probe: the agent takes it now */
			ilab_iommu_unit_raise_irq(&bu->unit, 0);
	}
	for (unsigned i = 0; i < b->nr_devs; i++)
		b->devs[i].iommu = b->units[b->dev_unit[i]].iommu;
	return 0;
}

const char *ilab_board_probe_strerror(void)
{
	return probe_why ? probe_why : "no error";
}

struct ilab_iommu *ilab_board_iommu(struct ilab_board *b, unsigned i)
{
	return b && i < b->nr_units ? b->units[i].iommu : NULL;
}

void board_remove_iommus(struct ilab_board *b)
{
	for (unsigned i = 0; b->units && i < b->nr_units; i++) {
		if (!b->units[i].iommu)
			continue;
		/* free_irq: no handler from now on, and none still running */
		atomic_store(&b->units[i].irq_drv, NULL);
		while (atomic_load(&b->units[i].in_irq))
			plat_yield();
		b->units[i].unit.arch->remove(b->units[i].iommu); /* registers only: no commands */
		b->units[i].iommu = NULL;
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

struct ilab_dev *ilab_board_find_dev(struct ilab_board *b, const char *name)
{
	if (!b || !name)
		return NULL;
	for (unsigned i = 0; i < b->nr_devs; i++)
		if (!strcmp(b->devs[i].name, name))
			return &b->devs[i];
	return NULL;
}

int ilab_board_dev_iommu(const struct ilab_board *b, const struct ilab_dev *dev)
{
	if (!b || !dev || dev < b->devs || dev >= b->devs + b->nr_devs)
		return -EINVAL;
	return (int)b->dev_unit[dev - b->devs];
}
