/* iova.h — the IOVA allocator of a DMA domain (Linux drivers/iommu/iova.c): a red-black tree of
 * allocated ranges with top-down, size-aligned allocation below a limit, plus per-CPU range
 * caches ("rcaches", Bonwick magazines) and a per-size-class depot for the DMA fast path.
 * It is not a page-table manager and knows nothing of devices: it hands out page frame numbers
 * (pfns) in units of the domain's granule; dma-iommu turns them into addresses.
 *
 * Locking: every function may be called concurrently from plat threads, except init/destroy.
 * Lock order: per-CPU rcache lock -> depot lock -> rbtree lock.
 */
#ifndef IOMMULAB_IOVA_H
#define IOMMULAB_IOVA_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/plat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Intrusive red-black tree node and root (operations in src/iommu/rbtree.h). */
struct ilab_rb_node {
	struct ilab_rb_node *parent, *left, *right;
	int color;
};
struct ilab_rb_root {
	struct ilab_rb_node *node;
};

/* One allocated range [pfn_lo, pfn_hi] (inclusive, in granule units). */
struct ilab_iova {
	struct ilab_rb_node node;
	uint64_t pfn_hi;
	uint64_t pfn_lo;
	bool cached; /* sits in an rcache magazine (only with fast-free checking) */
};

/* Per-CPU cache: IOVA_RANGE_CACHE_MAX_SIZE = 6 size classes (1..32 pages), magazines of
 * mag_size pfns: ILAB_IOVA_MAG_SIZE (127, Linux >= 6.0) by default, 128 before (set by the
 * kernel era, kernel_era.h, through ilab_iova_set_mag_size). */
#define ILAB_IOVA_RANGE_CACHE_MAX_SIZE 6
#define ILAB_IOVA_MAG_SIZE 127
#define ILAB_IOVA_MAG_SIZE_MAX 128
/* Depot policies (Linux history, see docs/iova.md). */
enum ilab_iova_depot_mode {
	/* v6.7+: unbounded list of full magazines; a "delayed work" (100 ms) returns one magazine
	 * to the rbtree while the depot holds more magazines than there are CPUs. */
	ILAB_IOVA_DEPOT_LIST = 0,
	/* <= v6.6: fixed array of 32 magazines; a full magazine that does not fit is freed
	 * straight into the rbtree. */
	ILAB_IOVA_DEPOT_FIXED32 = 1,
};
#define ILAB_IOVA_MAX_GLOBAL_MAGS 32
#define ILAB_IOVA_DEPOT_DELAY_NS (100ull * 1000 * 1000)

struct ilab_iova_rcache; /* private to src/iommu/iova.c */

struct ilab_iova_domain {
	plat_spinlock iova_rbtree_lock; /* protects the tree, cached nodes, max32_alloc_size */
	struct ilab_rb_root rbroot;
	struct ilab_rb_node *cached_node;   /* search start for limits above 4 GiB */
	struct ilab_rb_node *cached32_node; /* search start for limits at or below 4 GiB */
	uint64_t granule;                   /* bytes, power of two */
	uint64_t start_pfn;                 /* lowest pfn ever handed out */
	uint64_t dma_32bit_pfn;             /* 4 GiB >> log2(granule) */
	uint64_t max32_alloc_size;          /* size of the last failed 32-bit allocation */
	struct ilab_iova anchor;            /* pfn ~0: always in the tree, above all space */
	unsigned granule_shift;
	/* rcaches */
	struct ilab_iova_rcache *rcaches;   /* [ILAB_IOVA_RANGE_CACHE_MAX_SIZE], NULL = none */
	void *cpu_rcaches;                  /* plat per-CPU array */
	enum ilab_iova_depot_mode depot_mode;
	unsigned mag_size;                  /* pfns per full magazine (2..ILAB_IOVA_MAG_SIZE_MAX) */
	unsigned nr_cpus;
	bool check_fast_free; /* validate each free_iova_fast against the tree (default on) */
	/* statistics protected by iova_rbtree_lock */
	uint64_t rbtree_allocs, rbtree_alloc_failures, rbtree_frees, free_errors;
	uint64_t rcache_flushes;
};

/* Statistics snapshot (ilab_iova_stats). */
struct ilab_iova_stats {
	uint64_t rbtree_allocs;         /* successful tree allocations (alloc_iova) */
	uint64_t rbtree_alloc_failures;
	uint64_t rbtree_frees;
	uint64_t nodes;                 /* ranges in the tree now, anchor excluded */
	uint64_t cache_hits;            /* alloc_iova_fast served by an rcache */
	uint64_t cache_misses;          /* cacheable (<= 32 pfn) alloc_iova_fast that missed */
	uint64_t cache_frees;           /* free_iova_fast kept in an rcache */
	uint64_t cache_free_fallbacks;  /* free_iova_fast that went to the tree */
	uint64_t free_errors;           /* frees of unknown / mismatched / already-freed IOVAs */
	uint64_t rcache_flushes;        /* flush-and-retry events */
	uint64_t depot_reclaims;        /* magazines returned from a depot to the tree */
	uint64_t depot_size[ILAB_IOVA_RANGE_CACHE_MAX_SIZE];     /* full magazines in each depot */
	uint64_t depot_max[ILAB_IOVA_RANGE_CACHE_MAX_SIZE];      /* high-water mark */
	uint64_t cached_pfns[ILAB_IOVA_RANGE_CACHE_MAX_SIZE];    /* ranges held in all caches
								   * (magazine entries, each of
								   * 2^class pfns) */
	uint64_t max_mag_fill;          /* largest magazine size seen (<= the domain's mag_size) */
};

/* Initialise a domain: granule in bytes (power of two, 512 B .. 64 KiB: the IOMMU's smallest
 * page), start_pfn >= 1 is the lowest allocatable pfn (Linux uses 1 so pfn 0 means failure). Also sets up the rcaches (needs plat for per-CPU data).
 * Returns 0, -EINVAL for a bad granule/start_pfn, or -ENOMEM. */
int ilab_iova_domain_init(struct ilab_iova_domain *iovad, uint64_t granule, uint64_t start_pfn);
/* Release every range, magazine and the rcaches. The domain must be idle. */
void ilab_iova_domain_destroy(struct ilab_iova_domain *iovad);
/* Policy knobs (call before use). */
void ilab_iova_set_depot_mode(struct ilab_iova_domain *iovad, enum ilab_iova_depot_mode mode);
void ilab_iova_set_fast_free_check(struct ilab_iova_domain *iovad, bool on);
/* Magazine size in pfns (2..ILAB_IOVA_MAG_SIZE_MAX). 0, -EINVAL, or -EBUSY when a cache holds
 * pfns (only an idle domain's magazines may change size). */
int ilab_iova_set_mag_size(struct ilab_iova_domain *iovad, unsigned pfns);

/* rbtree allocation of size_pfns pfns ending at or below limit_pfn (inclusive, as in Linux);
 * size_aligned aligns pfn_lo to the power of two >= size. NULL if no room (or bad input). */
struct ilab_iova *ilab_alloc_iova(struct ilab_iova_domain *iovad, uint64_t size_pfns,
				  uint64_t limit_pfn, bool size_aligned);
/* The range containing pfn, or NULL. The pointer is valid until that range is freed. */
struct ilab_iova *ilab_find_iova(struct ilab_iova_domain *iovad, uint64_t pfn);
/* Free the range starting at pfn. Returns 0, -EINVAL (NULL), -ENOENT if no range starts
 * there, or -EBUSY if that range sits in an rcache magazine (freeing it would let the cache
 * hand it out again);
 * both counted in free_errors, nothing changed. */
int ilab_free_iova(struct ilab_iova_domain *iovad, uint64_t pfn);
/* Reserve [pfn_lo, pfn_hi] so it is never allocated (MSI windows, PCI holes). 0 or -errno. */
int ilab_reserve_iova(struct ilab_iova_domain *iovad, uint64_t pfn_lo, uint64_t pfn_hi);

/* DMA fast path: per-CPU cache first, then the tree; on failure with flush_rcache, return all
 * cached pfns to the tree and retry once. Sizes below 32 pfns are rounded up to a power of two.
 * Returns pfn_lo, or 0 on failure. */
uint64_t ilab_alloc_iova_fast(struct ilab_iova_domain *iovad, uint64_t size, uint64_t limit_pfn,
			      bool flush_rcache);
/* Free a range obtained from ilab_alloc_iova_fast with the same size. Returns 0, or -ENOENT /
 * -EINVAL (unknown pfn, wrong size, double free: counted, nothing corrupted) when checking is
 * on. With checking off, trusts the caller exactly like Linux. */
int ilab_free_iova_fast(struct ilab_iova_domain *iovad, uint64_t pfn, uint64_t size);
/* Return every cached pfn (all CPUs and depots) to the tree. */
void ilab_iova_flush_rcaches(struct ilab_iova_domain *iovad);
/* Run the v6.7+ depot reclaim work once now (what the 100 ms delayed work does): pops one
 * magazine from each depot that holds more than nr_cpus. Returns magazines reclaimed. */
unsigned ilab_iova_depot_reclaim(struct ilab_iova_domain *iovad);

void ilab_iova_stats(struct ilab_iova_domain *iovad, struct ilab_iova_stats *st);

/* Debug: check tree invariants (ordering, no overlap, red-black rules, cached nodes in the
 * tree). Returns 0 or a negative errno; takes the tree lock. */
int ilab_iova_check(struct ilab_iova_domain *iovad);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_IOVA_H */
