/* iommu.c — the IOMMU core (Linux drivers/iommu/iommu.c): device probe, groups, default
 * domains by type, attach/detach, and the two domain lookups that seed 001 compares.
 * It is not the DMA API (dma-iommu.c) nor a driver (drivers implement struct ilab_iommu_ops);
 * the page-size loop it uses for UNMANAGED map/unmap is iommu_map.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/dma_iommu.h>
#include <iommulab/iommu.h>

#include "iommu/iommu_internal.h"
#include "iommulab/plat.h"

/* ---- errors ---------------------------------------------------------------------------- */

static _Thread_local char iommu_err[160];

int ilab_iommu_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(iommu_err, sizeof(iommu_err), fmt, ap);
	va_end(ap);
	return err;
}

const char *ilab_iommu_strerror(void)
{
	return iommu_err[0] ? iommu_err : "no error";
}

const char *ilab_domain_type_name(enum ilab_domain_type type)
{
	switch (type) {
	case ILAB_DOMAIN_BLOCKED: return "blocked";
	case ILAB_DOMAIN_IDENTITY: return "identity";
	case ILAB_DOMAIN_UNMANAGED: return "unmanaged";
	case ILAB_DOMAIN_DMA: return "DMA";
	case ILAB_DOMAIN_DMA_FQ: return "DMA-FQ";
	}
	return "?";
}

/* ---- groups ---------------------------------------------------------------------------- */

/* A line of its own: which static words share a line must not depend on the linker. */
static _Alignas(PLAT_CACHELINE) plat_word32 next_group_id;

static struct ilab_iommu_group *group_alloc(void)
{
	struct ilab_iommu_group *g = plat_zalloc_array(1, sizeof(*g));

	if (!g)
		return NULL;
	g->id = plat_fetch_add32(&next_group_id, 1);
	/* kobject_init: the core's own reference, dropped with the last device */
	plat_store32(&g->devices_kobj.kref, 1);
	plat_store32(&g->devices_kobj.state_initialized, 1);
	plat_spin_init(&g->lock, "iommu_group.mutex");
	plat_track(&g->devices_kobj.kref, "iommu_group.devices_kobj");
	return g;
}

/* Linux kobject_get / kobject_put on group->devices_kobj: the state_initialized check is a
 * load of the kobject's line before the atomic on its kref. Under contention the load misses
 * (another CPU's atomic took the line) and the atomic then needs the line unique again: two
 * coherence requests per call, not one. */
static void devices_kobj_get(struct ilab_iommu_group_kobj *k)
{
	(void)plat_load_relaxed32(&k->state_initialized);
	plat_fetch_add32(&k->kref, 1);
}

static bool devices_kobj_put(struct ilab_iommu_group_kobj *k)
{
	(void)plat_load_relaxed32(&k->state_initialized);
	return plat_fetch_sub32(&k->kref, 1) == 1;
}

struct ilab_iommu_group *ilab_iommu_group_get(struct ilab_dev *dev)
{
	struct ilab_iommu_group *g = dev ? dev->group : NULL;

	plat_scope_enter(PLAT_SCOPE_REFCOUNT_GET);
	if (g)
		devices_kobj_get(&g->devices_kobj);
	plat_scope_leave();
	return g;
}

void ilab_iommu_group_put(struct ilab_iommu_group *g)
{
	bool last;

	if (!g)
		return;
	plat_scope_enter(PLAT_SCOPE_REFCOUNT_PUT);
	last = devices_kobj_put(&g->devices_kobj);
	plat_scope_leave();
	if (last) {
		free(g->devices);
		free(g);
	}
}

unsigned ilab_iommu_group_refcount(struct ilab_iommu_group *g)
{
	return g ? plat_load32(&g->devices_kobj.kref) : 0;
}

unsigned ilab_iommu_group_id(const struct ilab_iommu_group *g)
{
	return g ? g->id : 0;
}

static int group_add(struct ilab_iommu_group *g, struct ilab_dev *dev)
{
	if (g->nr_devices == g->cap_devices) {
		unsigned cap = g->cap_devices ? 2 * g->cap_devices : 4;
		struct ilab_dev **d = realloc(g->devices, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		g->devices = d;
		g->cap_devices = cap;
	}
	g->devices[g->nr_devices++] = dev;
	plat_fetch_add32(&g->devices_kobj.kref, 1); /* the device's reference */
	dev->group = g;
	return 0;
}

/* Returns true when the group became empty. The device's reference is dropped by the caller. */
static bool group_remove(struct ilab_iommu_group *g, struct ilab_dev *dev)
{
	for (unsigned i = 0; i < g->nr_devices; i++) {
		if (g->devices[i] == dev) {
			g->devices[i] = g->devices[--g->nr_devices];
			break;
		}
	}
	dev->group = NULL;
	return g->nr_devices == 0;
}

/* ---- lookups (seed 001) ---------------------------------------------------------------- */

struct ilab_iommu_domain *ilab_iommu_get_domain_for_dev(struct ilab_dev *dev)
{
	struct ilab_iommu_group *g = ilab_iommu_group_get(dev);
	struct ilab_iommu_domain *d;

	if (!g)
		return NULL;
	d = g->domain;
	ilab_iommu_group_put(g);
	return d;
}

struct ilab_iommu_domain *ilab_iommu_get_dma_domain(struct ilab_dev *dev)
{
	return dev && dev->group ? dev->group->default_domain : NULL;
}

/* ---- domains --------------------------------------------------------------------------- */

static bool is_dma_type(enum ilab_domain_type t)
{
	return t == ILAB_DOMAIN_DMA || t == ILAB_DOMAIN_DMA_FQ;
}

struct ilab_iommu_domain *ilab_iommu_domain_alloc(struct ilab_iommu *iommu,
						  enum ilab_domain_type type, int node)
{
	struct ilab_iommu_domain *d;

	if (!iommu || !iommu->ops || !iommu->ops->domain_alloc) {
		ilab_iommu_set_error(-EINVAL, "domain_alloc: no IOMMU driver");
		return NULL;
	}
	if (type > ILAB_DOMAIN_DMA_FQ) {
		ilab_iommu_set_error(-EINVAL, "domain_alloc: bad domain type %d", (int)type);
		return NULL;
	}
	d = iommu->ops->domain_alloc(iommu, type, node);
	/* Lazy invalidation needs the driver's flush-all; Linux falls back to strict. */
	if (type == ILAB_DOMAIN_DMA_FQ && (!d || !d->ops || !d->ops->flush_iotlb_all)) {
		if (d && d->ops && d->ops->free)
			d->ops->free(d);
		type = ILAB_DOMAIN_DMA;
		d = iommu->ops->domain_alloc(iommu, type, node);
	}
	if (!d) {
		ilab_iommu_set_error(-ENOMEM, "%s: cannot allocate a %s domain",
				     iommu->name ? iommu->name : "iommu", ilab_domain_type_name(type));
		return NULL;
	}
	d->type = type;
	d->iommu = iommu;
	if (is_dma_type(type)) {
		int ret = ilab_dma_domain_init(d);

		if (ret) {
			if (d->ops && d->ops->free)
				d->ops->free(d);
			ilab_iommu_set_error(ret, "cannot set up the DMA domain's IOVA space (%d)",
					     ret);
			return NULL;
		}
	}
	return d;
}

unsigned ilab_iommu_get_resv_regions(struct ilab_iommu *iommu, struct ilab_dev *dev,
				     struct ilab_iommu_resv_region *regs, unsigned max)
{
	unsigned n;

	if (!iommu || !iommu->ops || !iommu->ops->get_resv_regions || !regs)
		return 0;
	n = iommu->ops->get_resv_regions(iommu, dev, regs, max);
	return n < max ? n : max;
}

void ilab_iommu_domain_free(struct ilab_iommu_domain *d)
{
	if (!d)
		return;
	if (d->iova_cookie)
		ilab_dma_domain_destroy(d);
	if (d->ops && d->ops->free)
		d->ops->free(d);
}

/* ---- attach / detach ------------------------------------------------------------------- */

static int attach_devs(struct ilab_iommu_domain *d, struct ilab_iommu_group *g)
{
	for (unsigned i = 0; i < g->nr_devices; i++) {
		int ret = d->ops && d->ops->attach_dev ? d->ops->attach_dev(d, g->devices[i])
						       : -ENODEV;
		if (ret)
			return ret;
	}
	return 0;
}

static void block_devs(struct ilab_iommu_group *g)
{
	for (unsigned i = 0; i < g->nr_devices; i++) {
		struct ilab_iommu *iommu = g->devices[i]->iommu;

		if (iommu && iommu->ops->block_dev)
			iommu->ops->block_dev(iommu, g->devices[i]);
	}
}

int ilab_iommu_attach_group(struct ilab_iommu_domain *d, struct ilab_iommu_group *g)
{
	struct ilab_iommu_domain *old;
	int ret;

	if (!d || !g)
		return ilab_iommu_set_error(-EINVAL, "attach: no domain or group");
	plat_spin_lock(&g->lock);
	old = g->domain;
	if (old == d) {
		plat_spin_unlock(&g->lock);
		return 0;
	}
	if (old != g->default_domain) {
		plat_spin_unlock(&g->lock);
		return ilab_iommu_set_error(-EBUSY, "attach: group %u already attached to a "
					    "non-default domain", g->id);
	}
	ret = attach_devs(d, g);
	if (ret) {
		/* Put every device back where it was (some may have moved). */
		if (old)
			attach_devs(old, g);
		else
			block_devs(g);
		plat_spin_unlock(&g->lock);
		return ilab_iommu_set_error(ret, "attach: the driver refused group %u (%d)",
					    g->id, ret);
	}
	g->domain = d;
	plat_spin_unlock(&g->lock);
	return 0;
}

void ilab_iommu_detach_group(struct ilab_iommu_domain *d, struct ilab_iommu_group *g)
{
	if (!d || !g)
		return;
	plat_spin_lock(&g->lock);
	if (g->domain == d && d != g->default_domain) {
		if (g->default_domain && attach_devs(g->default_domain, g) == 0) {
			g->domain = g->default_domain;
		} else {
			block_devs(g);
			g->domain = NULL;
		}
	}
	plat_spin_unlock(&g->lock);
}

int ilab_iommu_attach_device(struct ilab_iommu_domain *d, struct ilab_dev *dev)
{
	if (!dev || !dev->group)
		return ilab_iommu_set_error(-ENODEV, "attach: device not probed");
	if (dev->group->nr_devices != 1)
		return ilab_iommu_set_error(-EINVAL, "attach: %s shares its group", dev->name);
	return ilab_iommu_attach_group(d, dev->group);
}

void ilab_iommu_detach_device(struct ilab_iommu_domain *d, struct ilab_dev *dev)
{
	if (dev && dev->group)
		ilab_iommu_detach_group(d, dev->group);
}

/* ---- probe / release ------------------------------------------------------------------- */

static int probe_common(struct ilab_dev *dev)
{
	int ret;

	if (!dev || !dev->iommu || !dev->iommu->ops)
		return ilab_iommu_set_error(-EINVAL, "probe: device without an IOMMU");
	if (dev->group)
		return ilab_iommu_set_error(-EBUSY, "probe: %s is already probed", dev->name);
	if (dev->iommu->ops->probe_device) {
		ret = dev->iommu->ops->probe_device(dev->iommu, dev);
		if (ret)
			return ilab_iommu_set_error(-ENODEV, "probe: %s refused %s (%d)",
						    dev->iommu->name ? dev->iommu->name : "iommu",
						    dev->name, ret);
	}
	return 0;
}

static void unprobe(struct ilab_dev *dev)
{
	if (dev->iommu->ops->release_device)
		dev->iommu->ops->release_device(dev->iommu, dev);
}

int ilab_iommu_probe_device(struct ilab_dev *dev, enum ilab_domain_type def_type)
{
	struct ilab_iommu_group *g;
	struct ilab_iommu_domain *d;
	int ret;

	if (def_type != ILAB_DOMAIN_DMA && def_type != ILAB_DOMAIN_DMA_FQ &&
	    def_type != ILAB_DOMAIN_IDENTITY)
		return ilab_iommu_set_error(-EINVAL, "probe: a default domain is DMA, DMA-FQ or "
					    "identity, not %s", ilab_domain_type_name(def_type));
	ret = probe_common(dev);
	if (ret)
		return ret;
	g = group_alloc();
	if (!g) {
		unprobe(dev);
		return ilab_iommu_set_error(-ENOMEM, "probe: no memory for a group");
	}
	d = ilab_iommu_domain_alloc(dev->iommu, def_type, -1);
	if (!d) {
		ret = -ENOMEM;
		goto err_group;
	}
	g->default_domain = g->domain = d;
	ret = group_add(g, dev);
	if (ret)
		goto err_domain;
	ret = d->ops && d->ops->attach_dev ? d->ops->attach_dev(d, dev) : -ENODEV;
	if (ret) {
		ilab_iommu_set_error(ret, "probe: cannot attach %s to its default domain (%d)",
				     dev->name, ret);
		goto err_member;
	}
	ret = ilab_dma_setup_dev(dev);
	if (ret)
		goto err_member;
	return 0;

err_member:
	group_remove(g, dev);
	plat_fetch_sub32(&g->devices_kobj.kref, 1);
	if (dev->iommu->ops->block_dev)
		dev->iommu->ops->block_dev(dev->iommu, dev);
err_domain:
	ilab_iommu_domain_free(d);
err_group:
	ilab_iommu_group_put(g);
	unprobe(dev);
	return ret;
}

int ilab_iommu_group_add_device(struct ilab_iommu_group *g, struct ilab_dev *dev)
{
	int ret;

	if (!g)
		return ilab_iommu_set_error(-EINVAL, "group_add_device: no group");
	ret = probe_common(dev);
	if (ret)
		return ret;
	plat_spin_lock(&g->lock);
	ret = group_add(g, dev);
	if (!ret && g->domain) {
		ret = g->domain->ops && g->domain->ops->attach_dev
			      ? g->domain->ops->attach_dev(g->domain, dev) : -ENODEV;
		if (ret) {
			group_remove(g, dev);
			plat_fetch_sub32(&g->devices_kobj.kref, 1);
		}
	}
	plat_spin_unlock(&g->lock);
	if (!ret)
		ret = ilab_dma_setup_dev(dev);
	if (ret) {
		unprobe(dev);
		return ilab_iommu_set_error(ret, "group_add_device: cannot add %s to group %u (%d)",
					    dev->name, g->id, ret);
	}
	return 0;
}

void ilab_iommu_release_device(struct ilab_dev *dev)
{
	struct ilab_iommu_group *g;
	bool empty;

	if (!dev || !dev->group)
		return;
	g = dev->group;
	ilab_dma_teardown_dev(dev);
	plat_spin_lock(&g->lock);
	if (dev->iommu->ops->block_dev)
		dev->iommu->ops->block_dev(dev->iommu, dev);
	empty = group_remove(g, dev);
	plat_spin_unlock(&g->lock);
	if (empty) {
		/* A non-default domain still attached belongs to its allocator (VFIO). */
		ilab_iommu_domain_free(g->default_domain);
		g->default_domain = g->domain = NULL;
		ilab_iommu_group_put(g); /* the core's reference */
	}
	ilab_iommu_group_put(g);         /* the device's */
	unprobe(dev);
}

/* ---- UNMANAGED map/unmap --------------------------------------------------------------- */

int ilab_iommu_domain_map(struct ilab_iommu_domain *d, uint64_t iova, ilab_pa_t pa,
			  size_t size, int prot)
{
	if (!d || d->type == ILAB_DOMAIN_IDENTITY || d->type == ILAB_DOMAIN_BLOCKED)
		return ilab_iommu_set_error(-EINVAL, "map: not a paging domain");
	if (iova < d->aperture_start || iova + size - 1 > d->aperture_end || iova + size < iova)
		return ilab_iommu_set_error(-ERANGE, "map: [%#llx, +%#zx) outside the aperture",
					    (unsigned long long)iova, size);
	return ilab_iommu_map(&d->pt, iova, pa, size, prot, d->pt.map_pages != NULL);
}

size_t ilab_iommu_domain_unmap(struct ilab_iommu_domain *d, uint64_t iova, size_t size)
{
	if (!d || d->type == ILAB_DOMAIN_IDENTITY || d->type == ILAB_DOMAIN_BLOCKED)
		return 0;
	return ilab_iommu_unmap(&d->pt, iova, size, d->pt.unmap_pages != NULL);
}

ilab_pa_t ilab_iommu_iova_to_phys(struct ilab_iommu_domain *d, uint64_t iova)
{
	if (!d)
		return 0;
	if (d->type == ILAB_DOMAIN_IDENTITY)
		return iova;
	return d->ops && d->ops->iova_to_phys ? d->ops->iova_to_phys(d, iova) : 0;
}
