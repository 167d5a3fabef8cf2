/* vfio_type1.c — the type1 container (Linux vfio_iommu_type1.c): groups, the attach policy that
 * decides which groups share an IOMMU domain (Linux's shared domain, or seed 004's
 * attach_group_by_node), detach, and statistics.
 * It is not the mapping code (vfio_dma.c), the user address space (vfio_mm.c) or the IOMMU
 * core's attach (src/iommu/iommu.c), which it calls.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfio/vfio_internal.h"
#include "iommulab/plat.h"

static _Thread_local char vfio_err[200];

int vfio_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vfio_err, sizeof(vfio_err), fmt, ap);
	va_end(ap);
	return err;
}

const char *ilab_vfio_strerror(void)
{
	return vfio_err[0] ? vfio_err : "no error";
}

/* ---- containers ---------------------------------------------------------------------------- */

int ilab_vfio_container_create(struct ilab_mem *mem, const struct ilab_vfio_container_opts *opts,
			       struct ilab_vfio_container **out)
{
	struct ilab_vfio_container *c;
	int err;

	if (!out)
		return vfio_set_error(-EINVAL, "vfio: no output pointer");
	*out = NULL;
	if (!mem)
		return vfio_set_error(-EINVAL, "vfio: no memory");
	if (opts && opts->force_pgtable_node) {
		if (opts->attach_group_by_node)
			return vfio_set_error(-EINVAL, "vfio: pgtable_node and attach_group_by_node "
					      "both choose the page-table node");
		if (opts->pgtable_node < 0 || (unsigned)opts->pgtable_node >= ilab_mem_nr_nodes(mem))
			return vfio_set_error(-EINVAL, "vfio: pgtable_node %d is not a memory node",
					      opts->pgtable_node);
	}
	c = plat_zalloc_array(1, sizeof(*c));
	if (!c)
		return vfio_set_error(-ENOMEM, "vfio: out of memory");
	err = vfio_mm_create(mem, &c->mm);
	if (err) {
		free(c);
		return vfio_set_error(err, "vfio: out of memory");
	}
	c->mem = mem;
	if (opts)
		c->opts = *opts;
	plat_spin_init(&c->lock, "vfio_iommu.lock");
	*out = c;
	return 0;
}

struct ilab_vfio_mm *ilab_vfio_container_mm(struct ilab_vfio_container *c)
{
	return c ? c->mm : NULL;
}

/* ---- groups ---------------------------------------------------------------------------------- */

int ilab_vfio_group_open(struct ilab_dev *dev, struct ilab_vfio_group **out)
{
	struct ilab_vfio_group *g;

	if (!out)
		return vfio_set_error(-EINVAL, "vfio group: no output pointer");
	*out = NULL;
	if (!dev)
		return vfio_set_error(-EINVAL, "vfio group: no device");
	if (!dev->iommu || !dev->group)
		return vfio_set_error(-ENODEV, "vfio group: %s has no IOMMU group (not probed)",
				      dev->name);
	g = plat_zalloc_array(1, sizeof(*g));
	if (!g)
		return vfio_set_error(-ENOMEM, "vfio group: out of memory");
	g->iommu_group = ilab_iommu_group_get(dev);
	g->dev = dev;
	g->node = dev->node;
	*out = g;
	return 0;
}

int ilab_vfio_group_close(struct ilab_vfio_group *g)
{
	if (!g)
		return 0;
	if (g->container)
		return vfio_set_error(-EBUSY, "vfio group: %s is still in a container",
				      g->dev->name);
	ilab_iommu_group_put(g->iommu_group);
	free(g);
	return 0;
}

int ilab_vfio_group_node(const struct ilab_vfio_group *g)
{
	return g ? g->node : -EINVAL;
}

/* ---- domains --------------------------------------------------------------------------------- */

static int domain_add_group(struct vfio_domain *vd, struct ilab_vfio_group *g)
{
	if (vd->nr_groups == vd->cap_groups) {
		unsigned cap = vd->cap_groups ? 2 * vd->cap_groups : 4;
		struct ilab_vfio_group **n = realloc(vd->groups, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		vd->groups = n;
		vd->cap_groups = cap;
	}
	vd->groups[vd->nr_groups++] = g;
	g->domain = vd;
	return 0;
}

static void domain_remove_group(struct vfio_domain *vd, struct ilab_vfio_group *g)
{
	for (unsigned i = 0; i < vd->nr_groups; i++) {
		if (vd->groups[i] == g) {
			memmove(&vd->groups[i], &vd->groups[i + 1],
				(vd->nr_groups - i - 1) * sizeof(g));
			vd->nr_groups--;
			break;
		}
	}
	g->domain = NULL;
}

static int container_add_domain(struct ilab_vfio_container *c, struct vfio_domain *vd)
{
	if (c->nr_domains == c->cap_domains) {
		unsigned cap = c->cap_domains ? 2 * c->cap_domains : 4;
		struct vfio_domain **n = realloc(c->domains, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->domains = n;
		c->cap_domains = cap;
	}
	c->domains[c->nr_domains++] = vd;
	return 0;
}

static void container_remove_domain(struct ilab_vfio_container *c, struct vfio_domain *vd)
{
	for (unsigned i = 0; i < c->nr_domains; i++) {
		if (c->domains[i] == vd) {
			memmove(&c->domains[i], &c->domains[i + 1],
				(c->nr_domains - i - 1) * sizeof(vd));
			c->nr_domains--;
			break;
		}
	}
}

static void vfio_domain_free(struct vfio_domain *vd)
{
	ilab_iommu_domain_free(vd->domain);
	free(vd->groups);
	free(vd);
}

static bool group_in_container(struct ilab_vfio_container *c, struct ilab_iommu_group *ig)
{
	for (unsigned i = 0; i < c->nr_domains; i++)
		for (unsigned k = 0; k < c->domains[i]->nr_groups; k++)
			if (c->domains[i]->groups[k]->iommu_group == ig)
				return true;
	return false;
}

/* Linux: join the first domain whose iommu_ops match and whose iommu_attach_group succeeds
 * (the driver refuses an incompatible domain). Linux allocates the new domain first and moves
 * the group; without attach_group_by_node we try the existing ones first, with the same
 * outcome and no throwaway domain. */
static struct vfio_domain *join_existing(struct ilab_vfio_container *c, struct ilab_vfio_group *g)
{
	const struct ilab_iommu_ops *ops = g->dev->iommu->ops;

	for (unsigned i = 0; i < c->nr_domains; i++) {
		struct vfio_domain *vd = c->domains[i];

		if (!vd->domain->iommu || vd->domain->iommu->ops != ops)
			continue;
		if (ilab_iommu_attach_group(vd->domain, g->iommu_group) == 0)
			return vd;
	}
	return NULL;
}

/* Seed 004's condition, as its patch has it: the group is first attached to a new domain,
 * so that the driver sets that domain's nid (VT-d: domain_attach_iommu, nid = the unit's
 * node, with the patch's iommu.c change; SMMUv3: the node asked for, the group's); it then
 * moves to an existing domain only if d->domain->nid == domain->domain->nid (the driver's
 * ilab_iommu_domain.node), else it keeps the new one. 0 and *moved set when it moved (nd is
 * then freed), or a negative errno (nd freed). */
static int join_same_node(struct ilab_vfio_container *c, struct ilab_vfio_group *g,
			  struct vfio_domain *nd, struct vfio_domain **moved)
{
	const struct ilab_iommu_ops *ops = g->dev->iommu->ops;
	int err;

	*moved = NULL;
	for (unsigned i = 0; i < c->nr_domains; i++) {
		struct vfio_domain *vd = c->domains[i];

		if (!vd->domain->iommu || vd->domain->iommu->ops != ops ||
		    vd->domain->node != nd->domain->node)
			continue;
		ilab_iommu_detach_group(nd->domain, g->iommu_group);
		if (ilab_iommu_attach_group(vd->domain, g->iommu_group) == 0) {
			vfio_domain_free(nd);
			*moved = vd;
			return 0;
		}
		if ((err = ilab_iommu_attach_group(nd->domain, g->iommu_group))) {
			vfio_domain_free(nd);
			return vfio_set_error(err, "vfio attach: %s: %s", g->dev->name,
					      ilab_iommu_strerror());
		}
	}
	return 0;
}

static int new_domain(struct ilab_vfio_container *c, struct ilab_vfio_group *g,
		      struct vfio_domain **out)
{
	struct vfio_domain *vd = plat_zalloc_array(1, sizeof(*vd));
	struct vfio_domain *moved;
	int node, err;

	if (!vd)
		return vfio_set_error(-ENOMEM, "vfio attach: out of memory");
	if (c->opts.attach_group_by_node)
		node = g->node;
	else if (c->opts.force_pgtable_node)
		node = c->opts.pgtable_node;
	else
		node = g->node; /* the group whose attach creates the shared domain */
	vd->node = node;
	vd->domain = ilab_iommu_domain_alloc(g->dev->iommu, ILAB_DOMAIN_UNMANAGED, node);
	if (!vd->domain) {
		free(vd);
		return vfio_set_error(-ENOMEM, "vfio attach: no domain for %s: %s", g->dev->name,
				      ilab_iommu_strerror());
	}
	err = ilab_iommu_attach_group(vd->domain, g->iommu_group);
	if (err) {
		vfio_domain_free(vd);
		return vfio_set_error(err, "vfio attach: %s: %s", g->dev->name,
				      ilab_iommu_strerror());
	}
	if (c->opts.attach_group_by_node) {
		if ((err = join_same_node(c, g, vd, &moved)))
			return err;
		if (moved) {
			*out = moved;
			return 0;
		}
	}
	err = vfio_replay(c, vd);
	if (!err)
		err = container_add_domain(c, vd);
	if (err) {
		/* vfio_replay left nothing mapped or pinned; its message stands. */
		if (err == -ENOMEM)
			vfio_set_error(err, "vfio attach: out of memory");
		ilab_iommu_detach_group(vd->domain, g->iommu_group);
		vd->nr_mappings = 0;
		vfio_domain_free(vd);
		return err;
	}
	*out = vd;
	return 0;
}

/* Linux vfio_iommu_resv_conflict: append the group's reserved regions to the container's and
 * refuse (-EINVAL, the list as it was) if a recorded mapping overlaps one of them. The
 * caller truncates the list back to *before if the attach fails later. */
static int add_group_resv(struct ilab_vfio_container *c, struct ilab_vfio_group *g,
			  unsigned *before)
{
	*before = c->resv.n;
	if (vfio_resv_add_group(&c->resv, g))
		return vfio_set_error(-ENOMEM, "vfio attach: out of memory");
	for (unsigned i = *before; i < c->resv.n; i++) {
		const struct vfio_resv *r = &c->resv.r[i];
		const struct vfio_dma *dma = vfio_find_dma_range(c, r->start, r->end);

		if (dma) {
			c->resv.n = *before;
			return vfio_set_error(-EINVAL, "vfio attach: %s's reserved region [%#llx, "
					      "%#llx] (%s) overlaps the mapping [%#llx, +%#llx)",
					      g->dev->name, (unsigned long long)r->start,
					      (unsigned long long)r->end,
					      vfio_resv_type_name(r->type),
					      (unsigned long long)dma->iova,
					      (unsigned long long)dma->size);
		}
	}
	return 0;
}

int ilab_vfio_attach_group(struct ilab_vfio_container *c, struct ilab_vfio_group *g)
{
	struct vfio_domain *vd;
	unsigned nr_resv;
	int err = 0;

	if (!c || !g)
		return vfio_set_error(-EINVAL, "vfio attach: no container or group");
	if (!g->iommu_group || !g->dev->iommu || !g->iommu_group->nr_devices)
		return vfio_set_error(-ENODEV, "vfio attach: %s has no IOMMU group", g->dev->name);
	plat_spin_lock(&c->lock);
	if (g->container || group_in_container(c, g->iommu_group)) {
		err = vfio_set_error(-EINVAL, "vfio attach: group of %s is already in a container",
				     g->dev->name);
		goto out;
	}
	err = add_group_resv(c, g, &nr_resv);
	if (err)
		goto out;
	vd = c->opts.attach_group_by_node ? NULL : join_existing(c, g);
	if (!vd) {
		err = new_domain(c, g, &vd);
		if (err)
			goto out_resv;
	}
	err = domain_add_group(vd, g);
	if (err) {
		ilab_iommu_detach_group(vd->domain, g->iommu_group);
		if (!vd->nr_groups) {
			/* Only a domain created just now can be empty; its mappings go. */
			for (size_t i = 0; i < c->nr_dmas; i++)
				ilab_iommu_unmap(&vd->domain->pt, c->dmas[i].iova,
						 (size_t)c->dmas[i].size, vd->domain->pt.unmap_pages);
			container_remove_domain(c, vd);
			if (!c->nr_domains)
				vfio_unmap_unpin_all(c);
			vfio_domain_free(vd);
		}
		err = vfio_set_error(-ENOMEM, "vfio attach: out of memory");
		goto out_resv;
	}
	g->container = c;
	goto out;
out_resv:
	c->resv.n = nr_resv;
out:
	plat_spin_unlock(&c->lock);
	return err;
}

int ilab_vfio_detach_group(struct ilab_vfio_container *c, struct ilab_vfio_group *g)
{
	struct vfio_domain *vd;

	if (!c || !g)
		return vfio_set_error(-EINVAL, "vfio detach: no container or group");
	plat_spin_lock(&c->lock);
	if (g->container != c || !g->domain) {
		plat_spin_unlock(&c->lock);
		return vfio_set_error(-EINVAL, "vfio detach: group of %s is not in this container",
				      g->dev->name);
	}
	vd = g->domain;
	ilab_iommu_detach_group(vd->domain, g->iommu_group);
	domain_remove_group(vd, g);
	g->container = NULL;
	if (!vd->nr_groups) {
		/* Group ownership provides privilege: with the last domain, the mappings go. */
		if (c->nr_domains == 1)
			vfio_unmap_unpin_all(c);
		container_remove_domain(c, vd);
		vfio_domain_free(vd);
	}
	/* Its reserved regions may be IOVA space again (vfio_iommu_resv_refresh). */
	vfio_resv_rebuild(c);
	plat_spin_unlock(&c->lock);
	return 0;
}

void ilab_vfio_container_destroy(struct ilab_vfio_container *c)
{
	if (!c)
		return;
	plat_spin_lock(&c->lock);
	vfio_unmap_unpin_all(c);
	while (c->nr_domains) {
		struct vfio_domain *vd = c->domains[c->nr_domains - 1];

		while (vd->nr_groups) {
			struct ilab_vfio_group *g = vd->groups[vd->nr_groups - 1];

			ilab_iommu_detach_group(vd->domain, g->iommu_group);
			domain_remove_group(vd, g);
			g->container = NULL;
		}
		c->nr_domains--;
		vfio_domain_free(vd);
	}
	plat_spin_unlock(&c->lock);
	free(c->domains);
	free(c->dmas);
	vfio_resv_list_free(&c->resv);
	vfio_mm_destroy(c->mm);
	free(c);
}

/* ---- statistics ------------------------------------------------------------------------------ */

int ilab_vfio_get_stats(struct ilab_vfio_container *c, struct ilab_vfio_stats *st)
{
	if (!c || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	plat_spin_lock(&c->lock);
	st->nr_domains = c->nr_domains;
	for (unsigned i = 0; i < c->nr_domains; i++)
		st->nr_groups += c->domains[i]->nr_groups;
	st->nr_mappings = c->nr_dmas;
	for (size_t i = 0; i < c->nr_dmas; i++)
		st->mapped_bytes += c->dmas[i].size;
	st->pinned_pages = c->pinned_pages;
	st->replays = c->replays;
	plat_spin_unlock(&c->lock);
	return 0;
}

/* Distinct IOMMU instances behind the domain's groups' devices. */
static unsigned count_iommus(const struct vfio_domain *vd)
{
	const struct ilab_iommu *seen[64];
	unsigned n = 0;

	for (unsigned i = 0; i < vd->nr_groups; i++) {
		struct ilab_iommu_group *ig = vd->groups[i]->iommu_group;

		plat_spin_lock(&ig->lock);
		for (unsigned k = 0; k < ig->nr_devices; k++) {
			const struct ilab_iommu *iommu = ig->devices[k]->iommu;
			unsigned j = 0;

			while (j < n && seen[j] != iommu)
				j++;
			if (j == n && n < 64)
				seen[n++] = iommu;
		}
		plat_spin_unlock(&ig->lock);
	}
	return n;
}

int ilab_vfio_domain_info(struct ilab_vfio_container *c, unsigned i,
			  struct ilab_vfio_domain_info *info)
{
	struct vfio_domain *vd;

	if (!c || !info)
		return -EINVAL;
	plat_spin_lock(&c->lock);
	if (i >= c->nr_domains) {
		plat_spin_unlock(&c->lock);
		return vfio_set_error(-EINVAL, "vfio: no domain %u", i);
	}
	vd = c->domains[i];
	info->domain = vd->domain;
	info->node = vd->node;
	info->nr_groups = vd->nr_groups;
	info->nr_iommus = count_iommus(vd);
	info->nr_mappings = vd->nr_mappings;
	info->mapped_bytes = vd->mapped_bytes;
	plat_spin_unlock(&c->lock);
	return 0;
}
