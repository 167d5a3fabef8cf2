/* iommu_map.h — the IOMMU core's map/unmap loop (Linux iommu.c __iommu_map/__iommu_unmap with
 * iommu_pgsize) and the iotlb gather (include/linux/iommu.h iommu_iotlb_gather).
 * It is not a domain or a driver: it calls whatever page-table ops it is given, either the
 * batched map_pages/unmap_pages (Linux >= 5.15) or the older one-page map/unmap (seed 002).
 */
#ifndef IOMMULAB_IOMMU_MAP_H
#define IOMMULAB_IOMMU_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Protection flags (Linux include/linux/iommu.h values). */
#define ILAB_IOMMU_READ (1 << 0)
#define ILAB_IOMMU_WRITE (1 << 1)
#define ILAB_IOMMU_CACHE (1 << 2)  /* DMA cache coherency: Normal WB memory, inner-shareable */
#define ILAB_IOMMU_NOEXEC (1 << 3)
#define ILAB_IOMMU_MMIO (1 << 4)   /* Device memory */
#define ILAB_IOMMU_PRIV (1 << 5)   /* privileged-only access */

/* What an unmap left to invalidate: the range [start, end] (inclusive) of leaves of one page
 * size. Contiguous unmaps of the same size coalesce; `queued` means a flush queue will
 * invalidate the whole context later, so leaves are not recorded (lazy mode). */
struct ilab_iotlb_gather {
	uint64_t start;
	uint64_t end;
	size_t pgsize;
	bool queued;
};

static inline void ilab_iotlb_gather_init(struct ilab_iotlb_gather *g)
{
	g->start = UINT64_MAX;
	g->end = 0;
	g->pgsize = 0;
	g->queued = false;
}

static inline bool ilab_iotlb_gather_empty(const struct ilab_iotlb_gather *g)
{
	return g->end == 0 && g->start == UINT64_MAX;
}

/* The driver's "issue what is gathered" (Linux ops->iotlb_sync); must re-init the gather. */
typedef void (*ilab_iotlb_sync_fn)(struct ilab_iotlb_gather *gather, void *cookie);

/* iommu_iotlb_gather_add_page: if the page has another size than the gathered ones, or is
 * neither adjacent to nor overlapping the gathered range, sync first (sync may be NULL: then
 * the gather is simply re-initialised, dropping nothing that the caller did not ask to drop).
 * Then widen the range. Drivers call this from their tlb_add_page hook. */
void ilab_iotlb_gather_add_page(struct ilab_iotlb_gather *gather, uint64_t iova, size_t size,
				ilab_iotlb_sync_fn sync, void *cookie);
/* Widen the range without the size/disjoint checks (iommu_iotlb_gather_add_range). */
void ilab_iotlb_gather_add_range(struct ilab_iotlb_gather *gather, uint64_t iova, size_t size);

/* The page-table operations a domain offers to the core (a Linux iommu_domain_ops subset).
 * map_pages/unmap_pages may be NULL when only the old path exists, and vice versa. */
struct ilab_iommu_pt_ops {
	uint64_t pgsize_bitmap;
	void *priv;
	int (*map_pages)(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize, size_t pgcount,
			 int prot, size_t *mapped);
	size_t (*unmap_pages)(void *priv, uint64_t iova, size_t pgsize, size_t pgcount,
			      struct ilab_iotlb_gather *gather);
	int (*map)(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize, int prot);
	size_t (*unmap)(void *priv, uint64_t iova, size_t pgsize, struct ilab_iotlb_gather *gather);
	/* Issue and wait for the gathered invalidation (optional; NULL = nothing to do). */
	void (*iotlb_sync)(void *priv, struct ilab_iotlb_gather *gather);
};

/* iommu_pgsize: the largest supported page size that fits the alignment of iova|paddr and
 * the size; *count = how many such pages to map before a larger size becomes possible.
 * Returns 0 if no supported size fits (misaligned input). */
size_t ilab_iommu_pgsize(uint64_t pgsize_bitmap, uint64_t iova, ilab_pa_t paddr, size_t size,
			 size_t *count);

/* Map [iova, iova+size) to [paddr, ...). use_map_pages picks map_pages with counts, else one
 * map() per page. On failure everything this call mapped is unmapped again. Returns 0,
 * -EINVAL (misaligned, no ops), or the page-table error (-EEXIST, -ENOMEM, -ERANGE). */
int ilab_iommu_map(const struct ilab_iommu_pt_ops *ops, uint64_t iova, ilab_pa_t paddr,
		   size_t size, int prot, bool use_map_pages);
/* Unmap without syncing (iommu_unmap_fast): returns bytes unmapped; the caller syncs gather. */
size_t ilab_iommu_unmap_fast(const struct ilab_iommu_pt_ops *ops, uint64_t iova, size_t size,
			     struct ilab_iotlb_gather *gather, bool use_unmap_pages);
/* Unmap and sync (iommu_unmap). */
size_t ilab_iommu_unmap(const struct ilab_iommu_pt_ops *ops, uint64_t iova, size_t size,
			bool use_unmap_pages);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_IOMMU_MAP_H */
