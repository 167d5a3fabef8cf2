/* swiotlb.h — the bounce-buffer pool dma-direct uses when a buffer lies beyond a device's DMA
 * mask (Linux kernel/dma/swiotlb.c), private to src/iommu. Not public API: the statistics are
 * (dma_iommu.h, ilab_dma_swiotlb_stats).
 */
#ifndef ILAB_IOMMU_SWIOTLB_H
#define ILAB_IOMMU_SWIOTLB_H

#include <stdbool.h>
#include <stddef.h>

#include <iommulab/dma_iommu.h>
#include <iommulab/mem.h>

/* Linux IO_TLB_SHIFT / IO_TLB_SEGSIZE / IO_TLB_DEFAULT_SIZE. */
#define ILAB_IO_TLB_SHIFT 11
#define ILAB_IO_TLB_SIZE (1u << ILAB_IO_TLB_SHIFT)
#define ILAB_IO_TLB_SEGSIZE 128u
#define ILAB_IO_TLB_DEFAULT_SIZE (64ull << 20)

struct ilab_swiotlb;

/* The machine's pool, created on the first call (as Linux sets it up at boot) in memory below
 * 4 GiB (ilab_mem_low_reserve); NULL with ilab_iommu_strerror when there is no room. Call at
 * set-up (not thread-safe). ilab_mem_destroy frees it. */
struct ilab_swiotlb *ilab_swiotlb_get(struct ilab_mem *mem);
/* Is pa a bounce slot of the pool (Linux is_swiotlb_buffer)? */
bool ilab_swiotlb_owns(const struct ilab_swiotlb *p, ilab_pa_t pa);
/* Bounce [orig, orig + size): take contiguous slots, copy the buffer in, return their address
 * (ILAB_PA_INVALID, with ilab_iommu_strerror, when size is 0 or beyond one segment, the buffer
 * is not memory, or no slots are free). */
ilab_pa_t ilab_swiotlb_map(struct ilab_swiotlb *p, ilab_pa_t orig, size_t size,
			   enum ilab_dma_dir dir);
/* Copy the slots back for FROM_DEVICE / BIDIRECTIONAL, then free them. */
void ilab_swiotlb_unmap(struct ilab_swiotlb *p, ilab_pa_t tlb, size_t size,
			enum ilab_dma_dir dir);
void ilab_swiotlb_get_stats(struct ilab_swiotlb *p, struct ilab_swiotlb_stats *st);

#endif
