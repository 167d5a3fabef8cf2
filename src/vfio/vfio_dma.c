/* vfio_dma.c — user DMA mappings of a type1 container (Linux vfio_dma_do_map,
 * vfio_dma_do_unmap, vfio_pin_map_dma, vfio_iommu_replay): argument checks, pinning user
 * pages, mirroring every mapping in every domain, unmapping from all of them with each one's
 * IOTLB sync, and replaying the mappings into a new domain.
 * It is not the attach policy (vfio_type1.c) and not the user address space (vfio_mm.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfio/vfio_internal.h"

uint64_t vfio_min_pgsize(const struct ilab_vfio_container *c)
{
	/* Linux: iommu->pgsize_bitmap starts as PAGE_MASK and is narrowed by every domain. */
	uint64_t bitmap = ~(VFIO_PAGE - 1);

	for (unsigned i = 0; i < c->nr_domains; i++)
		bitmap &= c->domains[i]->domain->pgsize_bitmap;
	return bitmap ? bitmap & -bitmap : VFIO_PAGE;
}

/* ---- the sorted mapping list ------------------------------------------------------------------ */

/* First mapping whose end is above iova (the first that can overlap [iova, ...)). */
static size_t first_at_or_after(const struct ilab_vfio_container *c, uint64_t iova)
{
	size_t lo = 0, hi = c->nr_dmas;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct vfio_dma *d = &c->dmas[mid];

		if (d->iova + d->size - 1 < iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping containing iova, or NULL. */
static struct vfio_dma *find_dma(struct ilab_vfio_container *c, uint64_t iova)
{
	size_t i = first_at_or_after(c, iova);

	return i < c->nr_dmas && c->dmas[i].iova <= iova ? &c->dmas[i] : NULL;
}

const struct vfio_dma *vfio_find_dma_range(const struct ilab_vfio_container *c, uint64_t first,
					   uint64_t last)
{
	size_t i = first_at_or_after(c, first);

	return i < c->nr_dmas && c->dmas[i].iova <= last ? &c->dmas[i] : NULL;
}

static int insert_dma(struct ilab_vfio_container *c, const struct vfio_dma *dma)
{
	size_t at;

	if (c->nr_dmas == c->cap_dmas) {
		size_t cap = c->cap_dmas ? 2 * c->cap_dmas : 16;
		struct vfio_dma *n = realloc(c->dmas, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->dmas = n;
		c->cap_dmas = cap;
	}
	at = first_at_or_after(c, dma->iova);
	memmove(&c->dmas[at + 1], &c->dmas[at], (c->nr_dmas - at) * sizeof(*dma));
	c->dmas[at] = *dma;
	c->nr_dmas++;
	return 0;
}

/* ---- one domain ------------------------------------------------------------------------------ */

static int domain_map(struct ilab_vfio_container *c, struct vfio_domain *vd, uint64_t iova,
		      ilab_pa_t pa, uint64_t size, int prot)
{
	struct ilab_iommu_domain *d = vd->domain;
	bool use_map_pages = !c->opts.no_map_pages && d->pt.map_pages;

	/* Linux always adds IOMMU_CACHE: type1 mappings are cache-coherent. */
	return ilab_iommu_map(&d->pt, iova, pa, (size_t)size, prot | ILAB_IOMMU_CACHE,
			      use_map_pages);
}

/* Unmap [iova, iova + size) from one domain and sync its IOTLB (iommu_unmap). */
static uint64_t domain_unmap(struct ilab_vfio_container *c, struct vfio_domain *vd, uint64_t iova,
			     uint64_t size)
{
	struct ilab_iommu_domain *d = vd->domain;
	bool use_unmap_pages = !c->opts.no_map_pages && d->pt.unmap_pages;

	return ilab_iommu_unmap(&d->pt, iova, (size_t)size, use_unmap_pages);
}

static bool in_aperture(const struct ilab_iommu_domain *d, uint64_t iova, uint64_t size)
{
	return iova >= d->aperture_start && iova + size - 1 <= d->aperture_end;
}

/* ---- map ------------------------------------------------------------------------------------- */

/* Pin [vaddr, +size) run by run and map each run into every domain; on failure undo all. */
static int pin_map(struct ilab_vfio_container *c, const struct vfio_dma *dma)
{
	uint64_t done = 0;
	int err = 0;

	while (done < dma->size) {
		ilab_pa_t pa;
		uint64_t n;
		unsigned i;

		err = vfio_mm_run(c->mm, dma->vaddr + done, (dma->size - done) / VFIO_PAGE, true,
				  &pa, &n);
		if (err) {
			vfio_set_error(-EFAULT, "vfio: user address %#llx is not backed",
				       (unsigned long long)(dma->vaddr + done));
			break;
		}
		for (i = 0; i < c->nr_domains; i++) {
			err = domain_map(c, c->domains[i], dma->iova + done, pa, n * VFIO_PAGE,
					 dma->prot);
			if (err)
				break;
		}
		if (err) {
			vfio_set_error(err, "vfio: mapping iova %#llx failed in domain %u (%d)",
				       (unsigned long long)(dma->iova + done), i, err);
			while (i--)
				domain_unmap(c, c->domains[i], dma->iova + done, n * VFIO_PAGE);
			vfio_mm_unpin(c->mm, dma->vaddr + done, n);
			break;
		}
		done += n * VFIO_PAGE;
	}
	if (err && done) {
		for (unsigned i = 0; i < c->nr_domains; i++)
			domain_unmap(c, c->domains[i], dma->iova, done);
		vfio_mm_unpin(c->mm, dma->vaddr, done / VFIO_PAGE);
	}
	return err;
}

int ilab_vfio_dma_map(struct ilab_vfio_container *c, uint64_t vaddr, uint64_t iova,
		      uint64_t size, int prot)
{
	struct vfio_dma dma = { iova, vaddr, size, 0, false };
	const struct vfio_resv *resv;
	uint64_t pgsize;
	int err;

	if (!c)
		return vfio_set_error(-EINVAL, "vfio map: no container");
	if (!(prot & (ILAB_VFIO_DMA_READ | ILAB_VFIO_DMA_WRITE)) ||
	    (prot & ~(ILAB_VFIO_DMA_READ | ILAB_VFIO_DMA_WRITE)))
		return vfio_set_error(-EINVAL, "vfio map: prot %#x is not READ and/or WRITE", prot);
	dma.prot = ((prot & ILAB_VFIO_DMA_READ) ? ILAB_IOMMU_READ : 0) |
		   ((prot & ILAB_VFIO_DMA_WRITE) ? ILAB_IOMMU_WRITE : 0);

	plat_spin_lock(&c->lock);
	pgsize = vfio_min_pgsize(c);
	if (!size || (size | iova | vaddr) & (pgsize - 1)) {
		err = vfio_set_error(-EINVAL, "vfio map: size %#llx, iova %#llx or vaddr %#llx is "
				     "zero or not a multiple of %#llx", (unsigned long long)size,
				     (unsigned long long)iova, (unsigned long long)vaddr,
				     (unsigned long long)pgsize);
		goto out;
	}
	if (iova + size - 1 < iova || vaddr + size - 1 < vaddr) {
		err = vfio_set_error(-EINVAL, "vfio map: [iova %#llx | vaddr %#llx, +%#llx) wraps",
				     (unsigned long long)iova, (unsigned long long)vaddr,
				     (unsigned long long)size);
		goto out;
	}
	if (vfio_find_dma_range(c, iova, iova + size - 1)) {
		err = vfio_set_error(-EEXIST, "vfio map: [%#llx, +%#llx) overlaps a mapping",
				     (unsigned long long)iova, (unsigned long long)size);
		goto out;
	}
	if (c->nr_dmas >= VFIO_DMA_ENTRY_LIMIT) {
		err = vfio_set_error(-ENOSPC, "vfio map: %u mappings (dma_entry_limit)",
				     VFIO_DMA_ENTRY_LIMIT);
		goto out;
	}
	for (unsigned i = 0; i < c->nr_domains; i++) {
		if (!in_aperture(c->domains[i]->domain, iova, size)) {
			err = vfio_set_error(-EINVAL, "vfio map: [%#llx, +%#llx) is outside the "
					     "IOVA aperture of domain %u",
					     (unsigned long long)iova, (unsigned long long)size, i);
			goto out;
		}
	}
	/* Linux vfio_iommu_iova_dma_valid: the range lies in one valid range of the iova_list,
	 * i.e. inside the apertures (above) and clear of every attached group's reserved
	 * regions. With no group attached there are none, and the attach checks instead. */
	resv = vfio_resv_overlap(&c->resv, iova, size);
	if (resv) {
		err = vfio_set_error(-EINVAL, "vfio map: [%#llx, +%#llx) overlaps the reserved "
				     "region [%#llx, %#llx] (%s) of %s's IOMMU",
				     (unsigned long long)iova, (unsigned long long)size,
				     (unsigned long long)resv->start, (unsigned long long)resv->end,
				     vfio_resv_type_name(resv->type), resv->dev);
		goto out;
	}
	/* Linux: with no IOMMU domain yet, record only; the first attach pins and maps. */
	if (c->nr_domains) {
		err = pin_map(c, &dma);
		if (err)
			goto out;
		dma.pinned = true;
	}
	err = insert_dma(c, &dma);
	if (err) {
		if (dma.pinned) {
			for (unsigned i = 0; i < c->nr_domains; i++)
				domain_unmap(c, c->domains[i], iova, size);
			vfio_mm_unpin(c->mm, vaddr, size / VFIO_PAGE);
		}
		err = vfio_set_error(-ENOMEM, "vfio map: out of memory");
		goto out;
	}
	if (dma.pinned) {
		c->pinned_pages += size / VFIO_PAGE;
		for (unsigned i = 0; i < c->nr_domains; i++) {
			c->domains[i]->nr_mappings++;
			c->domains[i]->mapped_bytes += size;
		}
	}
out:
	plat_spin_unlock(&c->lock);
	return err;
}

/* ---- unmap ----------------------------------------------------------------------------------- */

/* Remove c->dmas[i]: out of every domain (each synced), unpinned, out of the list. */
static void remove_dma(struct ilab_vfio_container *c, size_t i)
{
	struct vfio_dma *dma = &c->dmas[i];

	if (dma->pinned) {
		for (unsigned k = 0; k < c->nr_domains; k++) {
			domain_unmap(c, c->domains[k], dma->iova, dma->size);
			c->domains[k]->nr_mappings--;
			c->domains[k]->mapped_bytes -= dma->size;
		}
		vfio_mm_unpin(c->mm, dma->vaddr, dma->size / VFIO_PAGE);
		c->pinned_pages -= dma->size / VFIO_PAGE;
	}
	memmove(dma, dma + 1, (c->nr_dmas - i - 1) * sizeof(*dma));
	c->nr_dmas--;
}

int ilab_vfio_dma_unmap(struct ilab_vfio_container *c, uint64_t iova, uint64_t size,
			uint64_t *unmapped)
{
	struct vfio_dma *dma;
	uint64_t pgsize, done = 0;
	size_t i;
	int err = 0;

	if (unmapped)
		*unmapped = 0;
	if (!c)
		return vfio_set_error(-EINVAL, "vfio unmap: no container");
	plat_spin_lock(&c->lock);
	pgsize = vfio_min_pgsize(c);
	if (iova & (pgsize - 1) || !size || size & (pgsize - 1) || iova + size - 1 < iova) {
		err = vfio_set_error(-EINVAL, "vfio unmap: [%#llx, +%#llx) is empty, wraps, or is "
				     "not a multiple of %#llx", (unsigned long long)iova,
				     (unsigned long long)size, (unsigned long long)pgsize);
		goto out;
	}
	/* Type1 v2: the range must not bisect a mapping at either end. */
	dma = find_dma(c, iova);
	if (dma && dma->iova != iova) {
		err = vfio_set_error(-EINVAL, "vfio unmap: %#llx is inside the mapping [%#llx, "
				     "+%#llx)", (unsigned long long)iova,
				     (unsigned long long)dma->iova, (unsigned long long)dma->size);
		goto out;
	}
	dma = find_dma(c, iova + size - 1);
	if (dma && dma->iova + dma->size != iova + size) {
		err = vfio_set_error(-EINVAL, "vfio unmap: the range ends inside the mapping "
				     "[%#llx, +%#llx)", (unsigned long long)dma->iova,
				     (unsigned long long)dma->size);
		goto out;
	}
	i = first_at_or_after(c, iova);
	while (i < c->nr_dmas && c->dmas[i].iova <= iova + size - 1) {
		done += c->dmas[i].size;
		remove_dma(c, i);
	}
out:
	plat_spin_unlock(&c->lock);
	if (unmapped)
		*unmapped = done;
	return err;
}

void vfio_unmap_unpin_all(struct ilab_vfio_container *c)
{
	while (c->nr_dmas)
		remove_dma(c, c->nr_dmas - 1);
}

/* ---- replay into a new domain -------------------------------------------------------------- */

/* Undo the replay of dmas [0, upto) and of `partial` bytes of dma upto. */
static void replay_unwind(struct ilab_vfio_container *c, struct vfio_domain *vd, size_t upto,
			  uint64_t partial)
{
	for (size_t i = 0; i <= upto && i < c->nr_dmas; i++) {
		struct vfio_dma *dma = &c->dmas[i];
		uint64_t len = i < upto ? dma->size : partial;

		if (!len)
			continue;
		domain_unmap(c, vd, dma->iova, len);
		if (!dma->pinned)
			vfio_mm_unpin(c->mm, dma->vaddr, len / VFIO_PAGE);
	}
}

int vfio_replay(struct ilab_vfio_container *c, struct vfio_domain *vd)
{
	for (size_t i = 0; i < c->nr_dmas; i++) {
		struct vfio_dma *dma = &c->dmas[i];
		uint64_t done = 0;

		if (!in_aperture(vd->domain, dma->iova, dma->size)) {
			replay_unwind(c, vd, i, 0);
			return vfio_set_error(-EINVAL, "vfio attach: mapping [%#llx, +%#llx) is "
					      "outside the new domain's aperture",
					      (unsigned long long)dma->iova,
					      (unsigned long long)dma->size);
		}
		while (done < dma->size) {
			ilab_pa_t pa;
			uint64_t n;
			/* Pinned mappings: their pages cannot change, just look them up. */
			int err = vfio_mm_run(c->mm, dma->vaddr + done, (dma->size - done) / VFIO_PAGE,
					      !dma->pinned, &pa, &n);

			if (err) {
				replay_unwind(c, vd, i, done);
				return vfio_set_error(-EFAULT, "vfio attach: replaying iova %#llx: "
						      "user address %#llx is not backed",
						      (unsigned long long)(dma->iova + done),
						      (unsigned long long)(dma->vaddr + done));
			}
			err = domain_map(c, vd, dma->iova + done, pa, n * VFIO_PAGE, dma->prot);
			if (err) {
				if (!dma->pinned)
					vfio_mm_unpin(c->mm, dma->vaddr + done, n);
				replay_unwind(c, vd, i, done);
				return vfio_set_error(err, "vfio attach: replaying iova %#llx (%d)",
						      (unsigned long long)(dma->iova + done), err);
			}
			done += n * VFIO_PAGE;
		}
	}
	for (size_t i = 0; i < c->nr_dmas; i++) {
		struct vfio_dma *dma = &c->dmas[i];

		if (!dma->pinned) {
			dma->pinned = true;
			c->pinned_pages += dma->size / VFIO_PAGE;
			/* Mirrored in the domains that already exist: none (pinned implies a
			 * domain), so only the new one counts it below. */
		}
		vd->nr_mappings++;
		vd->mapped_bytes += dma->size;
	}
	c->replays += c->nr_dmas;
	return 0;
}
