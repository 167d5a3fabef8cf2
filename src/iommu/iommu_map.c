/* iommu_map.c — the IOMMU core's page-size selection and map/unmap loops (Linux iommu.c
 * iommu_pgsize, __iommu_map, __iommu_unmap) and the iotlb gather helpers.
 * It is not a domain: no groups, no locking; the caller owns the IOVA range it maps.
 */
#include <errno.h>

#include <iommulab/iommu_map.h>
#include <iommulab/plat.h>

static inline uint64_t genmask_to(unsigned hi)
{
	return hi >= 63 ? ~0ull : (2ull << hi) - 1;
}

static inline unsigned fls_idx(uint64_t x) /* __fls: index of the highest set bit */
{
	return 63u - (unsigned)__builtin_clzll(x);
}

size_t ilab_iommu_pgsize(uint64_t pgsize_bitmap, uint64_t iova, ilab_pa_t paddr, size_t size,
			 size_t *count)
{
	uint64_t addr_merge = paddr | iova;
	uint64_t pgsizes, pgsize, pgsize_next, offset;
	unsigned idx;

	if (!size)
		return 0;
	/* Supported sizes no larger than size, nor than the alignment of iova|paddr. */
	pgsizes = pgsize_bitmap & genmask_to(fls_idx(size));
	if (addr_merge)
		pgsizes &= genmask_to((unsigned)__builtin_ctzll(addr_merge));
	if (!pgsizes)
		return 0;
	idx = fls_idx(pgsizes);
	pgsize = 1ull << idx;
	if (!count)
		return pgsize;

	/* Stop the run where the next larger page size could take over. */
	pgsizes = pgsize_bitmap & ~genmask_to(idx);
	if (pgsizes) {
		pgsize_next = 1ull << __builtin_ctzll(pgsizes);
		/* Only worth it if iova and paddr are equally offset within the larger page. */
		if (!((iova ^ paddr) & (pgsize_next - 1))) {
			offset = pgsize_next - (addr_merge & (pgsize_next - 1));
			if (offset + pgsize_next <= size)
				size = offset;
		}
	}
	*count = size >> idx;
	return pgsize;
}

static int iommu_map(const struct ilab_iommu_pt_ops *ops, uint64_t iova, ilab_pa_t paddr,
		     size_t size, int prot, bool use_map_pages)
{
	uint64_t orig_iova = iova, min_pagesz;
	size_t done = 0;
	int ret = 0;

	if (!ops || !ops->pgsize_bitmap || !size || iova + size < iova)
		return -EINVAL;
	if (use_map_pages ? !ops->map_pages : !ops->map)
		return -EINVAL;
	min_pagesz = 1ull << __builtin_ctzll(ops->pgsize_bitmap);
	if ((iova | paddr | size) & (min_pagesz - 1))
		return -EINVAL;

	while (done < size) {
		size_t count = 0, mapped = 0;
		size_t pgsize = ilab_iommu_pgsize(ops->pgsize_bitmap, iova, paddr, size - done,
						  &count);

		if (!pgsize) {
			ret = -EINVAL;
			break;
		}
		/* simulation: page-size selection and the call into the page-table code, once
		 * per call: per page before map_pages, per run after */
		plat_charge(PLAT_CHARGE_IOMMU_MAP);
		if (use_map_pages) {
			ret = ops->map_pages(ops->priv, iova, paddr, pgsize, count, prot, &mapped);
		} else {
			ret = ops->map(ops->priv, iova, paddr, pgsize, prot);
			mapped = ret ? 0 : pgsize;
		}
		if (ret)
			break;
		if (!mapped) { /* a broken op must not spin us forever */
			ret = -EIO;
			break;
		}
		done += mapped;
		iova += mapped;
		paddr += mapped;
	}
	/* Unroll what this call mapped. */
	if (ret && done)
		ilab_iommu_unmap(ops, orig_iova, done, use_map_pages);
	return ret;
}

int ilab_iommu_map(const struct ilab_iommu_pt_ops *ops, uint64_t iova, ilab_pa_t paddr,
		   size_t size, int prot, bool use_map_pages)
{
	int ret;

	plat_scope_enter(PLAT_SCOPE_IOMMU_MAP);
	ret = iommu_map(ops, iova, paddr, size, prot, use_map_pages);
	plat_scope_leave();
	return ret;
}

static size_t iommu_unmap(const struct ilab_iommu_pt_ops *ops, uint64_t iova, size_t size,
			  struct ilab_iotlb_gather *gather, bool use_unmap_pages)
{
	uint64_t min_pagesz;
	size_t unmapped = 0;

	if (!ops || !ops->pgsize_bitmap || !size || iova + size < iova)
		return 0;
	if (use_unmap_pages ? !ops->unmap_pages : !ops->unmap)
		return 0;
	min_pagesz = 1ull << __builtin_ctzll(ops->pgsize_bitmap);
	if ((iova | size) & (min_pagesz - 1))
		return 0;

	while (unmapped < size) {
		size_t count = 0, n;
		size_t pgsize = ilab_iommu_pgsize(ops->pgsize_bitmap, iova, iova, size - unmapped,
						  &count);

		if (!pgsize)
			break;
		plat_charge(PLAT_CHARGE_IOMMU_UNMAP); /* simulation: as in ilab_iommu_map */
		n = use_unmap_pages ? ops->unmap_pages(ops->priv, iova, pgsize, count, gather)
				    : ops->unmap(ops->priv, iova, pgsize, gather);
		if (!n)
			break;
		iova += n;
		unmapped += n;
	}
	return unmapped;
}

size_t ilab_iommu_unmap_fast(const struct ilab_iommu_pt_ops *ops, uint64_t iova, size_t size,
			     struct ilab_iotlb_gather *gather, bool use_unmap_pages)
{
	size_t n;

	plat_scope_enter(PLAT_SCOPE_IOMMU_UNMAP);
	n = iommu_unmap(ops, iova, size, gather, use_unmap_pages);
	plat_scope_leave();
	return n;
}

size_t ilab_iommu_unmap(const struct ilab_iommu_pt_ops *ops, uint64_t iova, size_t size,
			bool use_unmap_pages)
{
	struct ilab_iotlb_gather gather;
	size_t n;

	ilab_iotlb_gather_init(&gather);
	n = ilab_iommu_unmap_fast(ops, iova, size, &gather, use_unmap_pages);
	if (ops && ops->iotlb_sync)
		ops->iotlb_sync(ops->priv, &gather);
	return n;
}

void ilab_iotlb_gather_add_range(struct ilab_iotlb_gather *g, uint64_t iova, size_t size)
{
	uint64_t end = iova + size - 1;

	if (g->start > iova)
		g->start = iova;
	if (g->end < end)
		g->end = end;
}

void ilab_iotlb_gather_add_page(struct ilab_iotlb_gather *g, uint64_t iova, size_t size,
				ilab_iotlb_sync_fn sync, void *cookie)
{
	uint64_t end = iova + size - 1;
	bool disjoint = g->end != 0 && (end + 1 < g->start || iova > g->end + 1);

	if ((g->pgsize && g->pgsize != size) || disjoint) {
		bool queued = g->queued;

		if (sync)
			sync(g, cookie);
		ilab_iotlb_gather_init(g);
		g->queued = queued;
	}
	g->pgsize = size;
	ilab_iotlb_gather_add_range(g, iova, size);
}
