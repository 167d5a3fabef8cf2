/* vfio_resv.c — the reserved IOVA regions of a type1 container (Linux vfio_iommu_type1.c's
 * iova_list, built from iommu_get_group_resv_regions): the regions every attached group's IOMMU
 * driver reports (VT-d: the interrupt range 0xFEE00000-0xFEEFFFFF; SMMUv3: its software MSI
 * window), which a user mapping may not overlap, and the check an attaching group's regions
 * make against the mappings already recorded (vfio_iommu_resv_conflict).
 * It is not the map path (vfio_dma.c) nor the attach policy (vfio_type1.c), which call it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfio/vfio_internal.h"

/* Linux's names in /sys/kernel/iommu_groups/N/reserved_regions (both MSI kinds are "msi"). */
const char *vfio_resv_type_name(enum ilab_resv_type type)
{
	switch (type) {
	case ILAB_RESV_MSI:
	case ILAB_RESV_SW_MSI:
		return "msi";
	case ILAB_RESV_RESERVED:
		return "reserved";
	}
	return "?";
}

static int resv_push(struct vfio_resv_list *l, const struct vfio_resv *r)
{
	if (l->n == l->cap) {
		unsigned cap = l->cap ? 2 * l->cap : 8;
		struct vfio_resv *n = realloc(l->r, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->r = n;
		l->cap = cap;
	}
	l->r[l->n++] = *r;
	return 0;
}

/* Append the regions the IOMMU driver reports for each device of the group (Linux
 * iommu_get_group_resv_regions; overlapping regions are not merged: every check below only
 * asks whether a range meets one). On -ENOMEM the list is as it was. */
int vfio_resv_add_group(struct vfio_resv_list *l, struct ilab_vfio_group *g)
{
	struct ilab_iommu_group *ig = g->iommu_group;
	unsigned before = l->n;
	int err = 0;

	plat_spin_lock(&ig->lock);
	for (unsigned k = 0; k < ig->nr_devices && !err; k++) {
		struct ilab_dev *dev = ig->devices[k];
		struct ilab_iommu_resv_region regs[ILAB_IOMMU_RESV_MAX];
		unsigned n = ilab_iommu_get_resv_regions(dev->iommu, dev, regs,
							 ILAB_IOMMU_RESV_MAX);

		for (unsigned i = 0; i < n && !err; i++) {
			struct vfio_resv r = { .start = regs[i].start, .type = regs[i].type };

			/* an empty or wrapping region reserves nothing a mapping could meet */
			if (!regs[i].length || regs[i].start + regs[i].length - 1 < regs[i].start)
				continue;
			r.end = regs[i].start + regs[i].length - 1;
			snprintf(r.dev, sizeof(r.dev), "%s", dev->name);
			err = resv_push(l, &r);
		}
	}
	plat_spin_unlock(&ig->lock);
	if (err)
		l->n = before;
	return err;
}

void vfio_resv_list_free(struct vfio_resv_list *l)
{
	free(l->r);
	memset(l, 0, sizeof(*l));
}

const struct vfio_resv *vfio_resv_overlap(const struct vfio_resv_list *l, uint64_t iova,
					  uint64_t size)
{
	uint64_t last = iova + size - 1;

	for (unsigned i = 0; i < l->n; i++)
		if (l->r[i].start <= last && iova <= l->r[i].end)
			return &l->r[i];
	return NULL;
}

/* Linux vfio_iommu_resv_refresh after a detach: the regions of the groups still attached.
 * On -ENOMEM the old list stays (Linux keeps its old iova_list when the update fails): it is
 * a superset, so it refuses too much, never too little. */
int vfio_resv_rebuild(struct ilab_vfio_container *c)
{
	struct vfio_resv_list l = { 0 };
	int err = 0;

	for (unsigned i = 0; i < c->nr_domains && !err; i++)
		for (unsigned k = 0; k < c->domains[i]->nr_groups && !err; k++)
			err = vfio_resv_add_group(&l, c->domains[i]->groups[k]);
	if (err) {
		vfio_resv_list_free(&l);
		return err;
	}
	vfio_resv_list_free(&c->resv);
	c->resv = l;
	return 0;
}
