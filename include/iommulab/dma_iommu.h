/* dma_iommu.h — the DMA API on top of an IOMMU domain (Linux drivers/iommu/dma-iommu.c):
 * map/unmap of a page, a single buffer and a scatter-gather list, coherent allocation, with
 * strict, lazy (flush queue) and passthrough modes, and the IOVA allocation policy.
 * It is not the IOMMU core (iommu.h: groups, domains, attach) nor a driver; it calls the
 * domain's page-table ops (iommu_map.h), its flush_iotlb_all and the IOVA allocator (iova.h).
 *
 * Concurrency: map/unmap calls may run concurrently on any plat threads, as in Linux.
 */
#ifndef IOMMULAB_DMA_IOMMU_H
#define IOMMULAB_DMA_IOMMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/iommu.h>
#include <iommulab/iova.h>
#include <iommulab/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t ilab_dma_addr_t;
#define ILAB_DMA_MAPPING_ERROR (~(ilab_dma_addr_t)0)

/* Linux enum dma_data_direction values (map_benchmark's -d uses them). */
enum ilab_dma_dir {
	ILAB_DMA_BIDIRECTIONAL = 0,
	ILAB_DMA_TO_DEVICE = 1,
	ILAB_DMA_FROM_DEVICE = 2,
};

/* How each map/unmap finds the device's domain (seed 001). */
enum ilab_dma_lookup {
	ILAB_DMA_LOOKUP_DIRECT = 0,   /* >= 4.19: iommu_get_dma_domain, a plain dereference */
	ILAB_DMA_LOOKUP_REFCOUNT = 1, /* <= 4.18: iommu_get_domain_for_dev, group get + put */
};

/* Flush-queue constants (Linux IOVA_DEFAULT_FQ_SIZE / IOVA_DEFAULT_FQ_TIMEOUT). */
#define ILAB_DMA_FQ_SIZE 256u
#define ILAB_DMA_FQ_TIMEOUT_NS (10ull * 1000 * 1000)

/* Which flush queue a DMA_FQ domain uses (Linux >= 6.7, "iommu/dma: Allow a single FQ in
 * addition to per-CPU FQs"; "iommu/dma: Use a large flush queue and timeout for
 * shadow_on_flush" gives the single queue Linux's IOVA_SINGLE_FQ_SIZE / _TIMEOUT below and
 * picks it only for IOMMUs that set shadow_on_flush, s390 and virtio-iommu-like ones whose
 * flush re-syncs a shadow table; SMMUv3 and VT-d keep the per-CPU queues on every kernel). */
enum ilab_dma_fq_kind {
	ILAB_DMA_FQ_PERCPU = 0, /* one ring per CPU, each under its own lock (Linux's default) */
	ILAB_DMA_FQ_SINGLE,     /* one ring shared by all CPUs under one lock */
};
#define ILAB_DMA_FQ_SINGLE_SIZE 32768u
#define ILAB_DMA_FQ_SINGLE_TIMEOUT_NS (1000ull * 1000 * 1000)
/* Linux dma_get_max_seg_size() default when a device sets none. */
#define ILAB_DMA_MAX_SEG_SIZE 65536u

/* Options of one device's DMA path. ilab_dma_options_default gives Linux's current choices. */
struct ilab_dma_options {
	bool use_map_pages;            /* map_pages/unmap_pages (>= 5.15) vs one call per page */
	enum ilab_dma_lookup lookup;   /* default DIRECT */
	bool forcedac;                 /* iommu.forcedac=1: no 32-bit-first attempt for PCI */
	bool check_iova_free;          /* validate each fast IOVA free (tests); Linux trusts */
	bool fq_timer;                 /* lazy: a timer agent flushes fq_timeout_ns after the
					* first unmap on an idle queue (Linux's timer); false: the
					* unmaps check the deadline themselves (see flush_queue.c) */
	unsigned fq_size;              /* entries per ring (per CPU, or of the single
					* ring), power of two >= 2 */
	uint64_t fq_timeout_ns;
	uint32_t max_seg_size;         /* DMA segment merge limit for map_sg */
	enum ilab_dma_fq_kind fq_kind; /* lazy: per-CPU rings (default) or one shared ring */
	enum ilab_iova_depot_mode iova_depot; /* IOVA rcache depot: LIST (default, >= 6.7) or
					       * FIXED32 */
	/* Behaviours that changed between kernel versions (kernel_era.h fills them with the
	 * fields above; the default is today's): */
	bool sac_latch;                /* PCI 32-bit-first attempt: true (>= 6.5) gives it up for
					* the device after its first failure; false: every
					* allocation tries below 4 GiB first */
	unsigned iova_mag_size;        /* IOVA magazine: 127 (>= 6.0) or 128 pfns */
};
void ilab_dma_options_default(struct ilab_dma_options *o);
/* Choose the flush queue kind with Linux's size and timeout for it (256 entries and 10 ms per
 * CPU; 32768 entries and 1 s for the single queue). */
void ilab_dma_options_set_fq_kind(struct ilab_dma_options *o, enum ilab_dma_fq_kind kind);

/* Set the options of a probed device (and of its DMA domain: map-pages, flush queue size and
 * timer). Call while the device has no mapping. Returns 0, -EINVAL (bad option), -ENODEV (not
 * probed), -EBUSY (mappings exist), -ENOMEM. */
int ilab_dma_configure(struct ilab_dev *dev, const struct ilab_dma_options *o);
/* The options in force. */
int ilab_dma_get_options(struct ilab_dev *dev, struct ilab_dma_options *o);
/* Whether use_map_pages = false is possible: the device's DMA domain has the per-page ops
 * (true too when there is no DMA domain, where the option is not used). */
bool ilab_dma_has_per_page_path(struct ilab_dev *dev);

/* Streaming DMA. The returned address is ILAB_DMA_MAPPING_ERROR on failure (errno-style cause
 * in ilab_iommu_strerror). Addresses are simulated physical addresses (mem.h). In a passthrough
 * domain (dma-direct) a buffer beyond the device's DMA mask is bounced through the swiotlb
 * (ilab_dma_swiotlb_stats): up to 256 KiB per mapping; -ERANGE when no pool exists or its
 * slots are beyond the mask too, -ENOMEM when it is full. Unmap with the same size and
 * direction (FROM_DEVICE and BIDIRECTIONAL copy the bounce slots back). */
ilab_dma_addr_t ilab_dma_map_page(struct ilab_dev *dev, ilab_pa_t page, size_t offset,
				  size_t size, enum ilab_dma_dir dir);
void ilab_dma_unmap_page(struct ilab_dev *dev, ilab_dma_addr_t addr, size_t size,
			 enum ilab_dma_dir dir);
ilab_dma_addr_t ilab_dma_map_single(struct ilab_dev *dev, ilab_pa_t pa, size_t size,
				    enum ilab_dma_dir dir);
void ilab_dma_unmap_single(struct ilab_dev *dev, ilab_dma_addr_t addr, size_t size,
			   enum ilab_dma_dir dir);
static inline bool ilab_dma_mapping_error(ilab_dma_addr_t addr)
{
	return addr == ILAB_DMA_MAPPING_ERROR;
}

/* A scatterlist entry: the CPU side (pa, length) in, the DMA side out. */
struct ilab_scatterlist {
	ilab_pa_t pa;
	uint32_t length;
	ilab_dma_addr_t dma_address; /* out */
	uint32_t dma_length;         /* out; 0 past the last DMA segment */
};

/* Map nents entries into ONE contiguous IOVA range (Linux iommu_dma_map_sg): every segment
 * starts at its own offset within a granule and is padded to the granule, so the device sees
 * the segments back to back at granule boundaries; adjacent segments are then merged into DMA
 * segments of at most max_seg_size. Returns the number of DMA segments (>= 1) or a negative
 * errno: -ENODEV (the device is not set up for DMA), -EINVAL, -ENOSPC (no IOVA left), or the
 * page table's (-ENOMEM, -EEXIST, …). In a passthrough domain each entry is its own DMA
 * segment at its physical address, or bounced as by ilab_dma_map_page when beyond the mask
 * (nents returned, nothing merged; -EIO, as Linux, when one cannot be mapped: the entries
 * already bounced are released). */
int ilab_dma_map_sg(struct ilab_dev *dev, struct ilab_scatterlist *sg, unsigned nents,
		    enum ilab_dma_dir dir);
/* nents is what was passed to map (not the returned count), as in Linux. */
void ilab_dma_unmap_sg(struct ilab_dev *dev, struct ilab_scatterlist *sg, unsigned nents,
		       enum ilab_dma_dir dir);

/* Coherent memory (Linux dma_alloc_coherent through iommu_dma_alloc with contiguous pages):
 * ilab_mem_alloc_coherent on the device's node (CMA per mem.h's policy), then mapped
 * read/write. info (may be NULL) tells where the memory came from. Returns 0 or -errno. */
int ilab_dma_alloc_coherent(struct ilab_dev *dev, size_t size, ilab_pa_t *pa,
			    ilab_dma_addr_t *dma, struct ilab_mem_alloc_info *info);
void ilab_dma_free_coherent(struct ilab_dev *dev, size_t size, ilab_pa_t pa,
			    ilab_dma_addr_t dma);

/* Counters of one DMA domain (summed over CPUs). */
struct ilab_dma_stats {
	uint64_t maps, unmaps;             /* successful map / unmap calls (page, single, sg) */
	uint64_t map_errors, unmap_errors; /* failures, unmaps of nothing or of the wrong size */
	uint64_t iotlb_syncs;              /* strict: gathered invalidations issued */
	uint64_t fq_queued;                /* lazy: IOVAs put on a flush queue */
	uint64_t fq_flushes;               /* lazy: flush_iotlb_all calls */
	uint64_t fq_full_flushes;          /* ... of which because a queue was full */
	uint64_t fq_timeouts;              /* ... of which from the timer */
	uint64_t fq_freed;                 /* IOVAs freed after their flush */
	uint64_t iova_cache_hits;          /* from the IOVA allocator: rcache hits */
	uint64_t iova_cache_misses;
	uint64_t iova_max_mag_fill;        /* fullest IOVA magazine now (<= iova_mag_size) */
	uint64_t iova_depot_max;           /* most full magazines a depot held (any class) */
	uint64_t dac_fallbacks;            /* 32-bit-first attempts given up (>32-bit used) */
	uint64_t refcount_lookups;         /* domain lookups through the group refcount */
	uint64_t direct_lookups;
};
/* Stats of the DMA domain of dev (zeroes for passthrough). -ENODEV if not set up. */
int ilab_dma_stats(struct ilab_dev *dev, struct ilab_dma_stats *st);

/* The bounce-buffer pool (Linux swiotlb) of the machine a passthrough device is on: 64 MiB of
 * 2 KiB slots below 4 GiB (ilab_mem_low_reserve), set up with the first passthrough device and
 * shared by all; areas with a lock each, the calling CPU's first. */
struct ilab_swiotlb_stats {
	ilab_pa_t base;           /* the pool is [base, base + slots x 2 KiB) */
	uint64_t slots;
	unsigned areas;
	uint64_t used;            /* slots in use */
	uint64_t maps, unmaps;    /* bounced maps and their unmaps */
	uint64_t full;            /* maps refused: no free run of slots in any area */
	uint64_t bytes_in;        /* copied into the pool on map (every direction, Linux >= 5.19) */
	uint64_t bytes_out;       /* copied back on unmap (FROM_DEVICE, BIDIRECTIONAL) */
};
/* -ENODEV: dev is not a passthrough device with a pool. */
int ilab_dma_swiotlb_stats(struct ilab_dev *dev, struct ilab_swiotlb_stats *st);
/* Flush the lazy queues now (tests, teardown): invalidate, then free every queued IOVA. */
void ilab_dma_flush_queue_drain(struct ilab_dev *dev);

/* ---- used by the IOMMU core (iommu.c) ----------------------------------------------------- */

/* Give a DMA / DMA_FQ domain its cookie (IOVA domain over its aperture and granule, the
 * driver's reserved regions (ops->get_resv_regions) kept out, flush queue for DMA_FQ). -ENOMEM / -EINVAL; an FQ failure turns the domain into
 * ILAB_DOMAIN_DMA (strict) and returns 0, as Linux. */
int ilab_dma_domain_init(struct ilab_iommu_domain *domain);
void ilab_dma_domain_destroy(struct ilab_iommu_domain *domain);
/* Per-device state after the device's default domain is attached; passthrough when the
 * default domain is IDENTITY (dma address == physical address, no IOMMU calls). */
int ilab_dma_setup_dev(struct ilab_dev *dev);
void ilab_dma_teardown_dev(struct ilab_dev *dev);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_DMA_IOMMU_H */
