/* io_pgtable.h — I/O page tables in the Arm LPAE (VMSAv8-64 long-descriptor) stage-1 format,
 * as the SMMUv3 walks them (Linux drivers/iommu/io-pgtable-arm.c): 4K, 16K and 64K granules,
 * ias 32..48, oas one of 32, 36, 40, 42, 44, 48 (the TCR.IPS encodings); tables live in simulated physical memory (mem.h) on cfg->node.
 * It is not the SMMU: it only writes PTEs and reports, through the flush ops, what the driver
 * must invalidate. Stage 2, 52-bit addresses and dirty tracking are not implemented.
 *
 * Concurrency (as Linux): map/unmap of disjoint IOVA ranges may run concurrently; new tables are
 * installed with a compare-and-swap on the parent PTE. Overlapping calls are the caller's bug.
 */
#ifndef IOMMULAB_IO_PGTABLE_H
#define IOMMULAB_IO_PGTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/iommu_map.h>
#include <iommulab/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Linux struct iommu_flush_ops. cookie is the cfg's cookie. */
struct ilab_iommu_flush_ops {
	/* Invalidate the whole context (ASID). */
	void (*tlb_flush_all)(void *cookie);
	/* Synchronously invalidate walk caches (and leaves) for [iova, iova+size): a table was
	 * removed. */
	void (*tlb_flush_walk)(uint64_t iova, size_t size, size_t granule, void *cookie);
	/* Record one leaf in the gather (may sync on its own, see ilab_iotlb_gather_add_page). */
	void (*tlb_add_page)(struct ilab_iotlb_gather *gather, uint64_t iova, size_t granule,
			     void *cookie);
};

enum ilab_io_pgtable_fmt {
	ILAB_ARM_64_LPAE_S1 = 0,
};

struct ilab_io_pgtable_cfg {
	uint64_t pgsize_bitmap;  /* in: sizes the IOMMU supports; out: the sizes in use */
	unsigned ias, oas;       /* input / output address bits */
	bool coherent_walk;      /* the SMMU snoops CPU caches when it walks (IDR0.COHACC); false:
				  * TCR outer-shareable non-cacheable, and every PTE written is
				  * cleaned to the point of coherency where Linux does it (counted in
				  * pte_syncs, table_cleans, lines_cleaned; charged in simulation) */
	bool split_blocks;       /* unmapping part of a block splits it into a table of smaller
				  * leaves (Linux <= 6.12); false: refused (>= 6.13) */
	const struct ilab_iommu_flush_ops *tlb; /* may be NULL (no invalidation needed) */
	void *cookie;            /* passed to tlb ops */
	struct ilab_mem *mem;    /* where tables live */
	int node;                /* NUMA node for tables (the SMMU's); < 0 = caller's node */
	/* out: what the driver writes into the Context Descriptor */
	struct {
		ilab_pa_t ttbr;
		struct {
			unsigned sh, irgn, orgn, tg, tsz, ips; /* TCR fields, CD encodings */
		} tcr;
		uint64_t mair;
	} arm_lpae_s1_cfg;
};

struct ilab_io_pgtable;

/* Allocate an empty table. Returns 0, -EINVAL (bad ias/oas/bitmap/mem), or -ENOMEM. */
int ilab_alloc_io_pgtable(enum ilab_io_pgtable_fmt fmt, const struct ilab_io_pgtable_cfg *cfg,
			  struct ilab_io_pgtable **out);
/* Free every table page (does not invalidate: the caller has detached the context). */
void ilab_free_io_pgtable(struct ilab_io_pgtable *pgt);
/* The configuration as completed at allocation (pgsize_bitmap restricted, ttbr/tcr/mair). */
const struct ilab_io_pgtable_cfg *ilab_io_pgtable_cfg(const struct ilab_io_pgtable *pgt);

/* map_pages: map pgcount pages of pgsize from iova to paddr, up to the end of the last-level
 * table reached in one walk; *mapped += bytes mapped (callers loop). Returns 0, -EINVAL (bad
 * size/alignment/prot), -ERANGE (iova or paddr out of range), -EEXIST (a leaf already maps some
 * of the run: nothing of this call's run is written), or -ENOMEM. A next-level table where a
 * block goes is not refused: it is unmapped and freed with every mapping in it, as Linux does. */
int ilab_io_pgtable_map_pages(struct ilab_io_pgtable *pgt, uint64_t iova, ilab_pa_t paddr,
			      size_t pgsize, size_t pgcount, int prot, size_t *mapped);
/* unmap_pages: clear up to pgcount leaves of pgsize (stops at the end of the table, or at an
 * empty entry); returns bytes unmapped. Leaves are recorded with tlb_add_page into gather
 * (unless gather is NULL or queued); removed tables are flushed with tlb_flush_walk at once.
 * Unmapping part of a larger block is refused (returns 0), as in Linux >= 6.13, unless
 * cfg.split_blocks: then the block is split as Linux <= 6.12 did (counted in block_splits). */
size_t ilab_io_pgtable_unmap_pages(struct ilab_io_pgtable *pgt, uint64_t iova, size_t pgsize,
				   size_t pgcount, struct ilab_iotlb_gather *gather);
/* The pre-5.15 ops: one walk per page. */
int ilab_io_pgtable_map_one(struct ilab_io_pgtable *pgt, uint64_t iova, ilab_pa_t paddr,
			    size_t size, int prot);
size_t ilab_io_pgtable_unmap_one(struct ilab_io_pgtable *pgt, uint64_t iova, size_t size,
				 struct ilab_iotlb_gather *gather);
/* Translate; 0 if unmapped. */
ilab_pa_t ilab_io_pgtable_iova_to_phys(struct ilab_io_pgtable *pgt, uint64_t iova);

/* Core-loop ops backed by this table (priv = pgt; iotlb_sync left NULL for the driver). */
void ilab_io_pgtable_pt_ops(struct ilab_io_pgtable *pgt, struct ilab_iommu_pt_ops *ops);

/* Counters (summed over CPUs). */
struct ilab_io_pgtable_stats {
	uint64_t walks;          /* descents from the root (one per map/unmap call) */
	uint64_t pte_stores;     /* leaf PTEs written */
	uint64_t pte_clears;     /* PTEs cleared */
	uint64_t tables_alloc;   /* table pages allocated (including the pgd) */
	uint64_t tables_free;
	uint64_t install_races;  /* tables freed because another CPU installed one first */
	uint64_t block_splits;   /* blocks replaced by a table on a partial unmap (split_blocks) */
	/* non-coherent walk only (all 0 when coherent_walk): */
	uint64_t pte_syncs;      /* PTE runs cleaned after writing (Linux __arm_lpae_sync_pte) */
	uint64_t table_cleans;   /* new tables cleaned whole (Linux dma_map_single at allocation) */
	uint64_t lines_cleaned;  /* 64-byte lines cleaned to the point of coherency by both */
};
void ilab_io_pgtable_stats(struct ilab_io_pgtable *pgt, struct ilab_io_pgtable_stats *st);

/* Geometry, for tests and the driver. */
struct ilab_io_pgtable_geometry {
	unsigned granule_shift;   /* pg_shift */
	unsigned bits_per_level;
	unsigned start_level;     /* 0..3 */
	unsigned levels;
	unsigned pgd_bits;        /* index bits of the top table */
};
void ilab_io_pgtable_geometry(const struct ilab_io_pgtable *pgt,
			      struct ilab_io_pgtable_geometry *g);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_IO_PGTABLE_H */
