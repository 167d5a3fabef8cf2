/* fake_iommu.h — a small stand-in IOMMU driver for the core and dma-iommu tests: it implements
 * struct ilab_iommu_ops over io-pgtable-arm, with a tiny software IOTLB and device DMA that
 * translates through it. It is not the SMMUv3 driver nor the model: no queues, no MMIO; its
 * TLB exists so that strict/lazy invalidation has something observable to invalidate.
 */
#ifndef ILAB_TESTS_FAKE_IOMMU_H
#define ILAB_TESTS_FAKE_IOMMU_H

#include <stdbool.h>
#include <stdint.h>

#include "iommulab/iommu.h"
#include "iommulab/mem.h"

#define FAKE_IOMMU_MAX_SIDS 64
#define FAKE_IOTLB_ENTRIES 64

struct fake_iommu_stats {
	uint64_t tlbi_range;     /* iotlb_sync calls that invalidated a range */
	uint64_t tlbi_all;       /* flush_iotlb_all calls */
	uint64_t tlb_hits, tlb_misses;
	uint64_t faults;         /* F_TRANSLATION-like faults recorded */
	uint64_t last_fault_iova;
	uint32_t last_fault_sid;
};

struct fake_iommu;

/* An IOMMU on node with 4K/2M/1G pages, a 48-bit aperture and (unless no_flush_all) a
 * flush_iotlb_all. Returns 0 or -errno. fake_iommu_get() is its struct ilab_iommu. */
int fake_iommu_create(struct ilab_mem *mem, int node, bool no_flush_all, struct fake_iommu **out);
void fake_iommu_destroy(struct fake_iommu *f);
struct ilab_iommu *fake_iommu_get(struct fake_iommu *f);

/* Device DMA of len bytes at iova through the IOMMU, as the device with stream ID sid:
 * page by page, TLB first, then a table walk that fills the TLB. Returns 0, or -EFAULT after
 * recording a fault (no mapping, blocked stream, or permission). */
int fake_iommu_dma(struct fake_iommu *f, uint32_t sid, uint64_t iova, void *buf, size_t len,
		   bool write);
void fake_iommu_stats(struct fake_iommu *f, struct fake_iommu_stats *st);

#endif
