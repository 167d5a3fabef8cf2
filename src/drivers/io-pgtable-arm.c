/* io-pgtable-arm.c — Arm LPAE stage-1 I/O page tables (Linux drivers/iommu/io-pgtable-arm.c):
 * geometry from the granule and ias, prot-to-PTE, map_pages/unmap_pages (one walk, many PTEs),
 * the old one-page map/unmap, iova_to_phys, freeing. It is not the SMMU's walker (src/hw) and
 * issues no invalidation itself: it calls the driver's flush ops.
 *
 * PTEs live in simulated physical memory and are written through ilab_mem_va() host pointers,
 * as the kernel writes them through its linear map. Each access is charged to the simulator
 * with plat_mem_touch() (line by line, from where the lines are): one 8-byte read per level walked, one charge per run of stores (bytes =
 * 8 x entries), so a 512-PTE map_pages is one 4 KiB charge and 512 one-page maps are 512 walks.
 * PTEs are accessed with __atomic builtins on those host pointers (they are not plat words:
 * a PTE belongs to the table's memory, whose cost mem_access already models).
 *
 * A walker that does not snoop CPU caches (cfg.coherent_walk false: SMMU IDR0.COHACC 0) reads
 * memory, so every PTE the CPU writes is cleaned to the point of coherency where Linux does it:
 * a new table whole (dma_map_single), the leaves of a map or unmap run and a cleared table
 * descriptor (__arm_lpae_sync_pte), an installed table descriptor once (ARM_LPAE_PTE_SW_SYNC
 * marks it done). The simulated memory is one copy, so the clean changes no data here; it is
 * counted (pte_syncs, table_cleans, lines_cleaned) and charged as the write-back it is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/plat.h>

#include "drivers/io-pgtable-arm.h"

#define SZ_4K (1ull << 12)
#define SZ_16K (1ull << 14)
#define SZ_64K (1ull << 16)
#define SZ_2M (1ull << 21)
#define SZ_32M (1ull << 25)
#define SZ_512M (1ull << 29)
#define SZ_1G (1ull << 30)

/* ---- geometry ---------------------------------------------------------------------------- */

static inline unsigned lvl_shift(const struct ilab_io_pgtable *d, unsigned lvl)
{
	return (ARM_LPAE_MAX_LEVELS - lvl) * d->bits_per_level + 3;
}

static inline uint64_t block_size(const struct ilab_io_pgtable *d, unsigned lvl)
{
	return 1ull << lvl_shift(d, lvl);
}

static inline unsigned lvl_bits(const struct ilab_io_pgtable *d, unsigned lvl)
{
	return lvl == d->start_level ? d->pgd_bits : d->bits_per_level;
}

static inline uint64_t lvl_entries(const struct ilab_io_pgtable *d, unsigned lvl)
{
	return 1ull << lvl_bits(d, lvl);
}

static inline uint64_t lvl_idx(const struct ilab_io_pgtable *d, uint64_t iova, unsigned lvl)
{
	return (iova >> lvl_shift(d, lvl)) & (lvl_entries(d, lvl) - 1);
}

static inline uint64_t granule(const struct ilab_io_pgtable *d)
{
	return 1ull << d->pg_shift;
}

static inline bool pte_leaf(uint64_t pte, unsigned lvl)
{
	if (lvl == ARM_LPAE_MAX_LEVELS - 1)
		return (pte & ARM_LPAE_PTE_TYPE_MASK) == ARM_LPAE_PTE_TYPE_PAGE;
	return (pte & ARM_LPAE_PTE_TYPE_MASK) == ARM_LPAE_PTE_TYPE_BLOCK;
}

static inline bool pte_table(uint64_t pte, unsigned lvl)
{
	return lvl < ARM_LPAE_MAX_LEVELS - 1 &&
	       (pte & ARM_LPAE_PTE_TYPE_MASK) == ARM_LPAE_PTE_TYPE_TABLE;
}

static inline ilab_pa_t pte_addr(uint64_t pte)
{
	return pte & ARM_LPAE_PTE_ADDR_MASK;
}

/* ---- memory ------------------------------------------------------------------------------ */

static inline uint64_t pte_load(uint64_t *ptep)
{
	return __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
}

static inline void pte_store(uint64_t *ptep, uint64_t pte)
{
	__atomic_store_n(ptep, pte, __ATOMIC_RELAXED);
}

/* Simulation: charge the access to the PTEs at va line by line (a CPU re-walking the table it
 * just walked hits its cache; a line the SMMU or another CPU touched costs a transfer). */
static inline void charge(const void *va, size_t bytes, bool write)
{
	if (plat_unlikely(plat_sim))
		plat_mem_touch(va, bytes, write);
}

static struct ilab_io_pgtable_stats *this_stats(struct ilab_io_pgtable *d)
{
	return plat_this_cpu_ptr(d->stats);
}

/* Each CPU writes only its own slot, so a relaxed load+store is enough (no locked RMW on the
 * fast path); threads outside plat share slot 0 and may lose counts: statistics only. */
static inline void stat_add(uint64_t *ctr, uint64_t n)
{
	__atomic_store_n(ctr, __atomic_load_n(ctr, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}
#define STAT_ADD(d, field, n) stat_add(&this_stats(d)->field, (n))

/* Host pointer of the table whose descriptor is pte. */
static uint64_t *table_va(struct ilab_io_pgtable *d, uint64_t pte)
{
	return ilab_mem_va(d->mem, pte_addr(pte), granule(d));
}

/* Clean the lines of [pa, pa + bytes) to the point of coherency (arm64 dcache_clean_poc: DC CVAC
 * per line, then DSB). The write-backs overlap and the DSB waits for the last one, so the
 * simulator charges one write of those lines to the table's home memory: the first line at the
 * memory latency, the others at memory.line_stream_ns (the profile's own figures, no constant
 * of its own). The lines stay valid in the CPU's cache. */
static void clean_poc(struct ilab_io_pgtable *d, ilab_pa_t pa, size_t bytes)
{
	uint64_t first = pa & ~63ull, lines = (pa + bytes - first + 63) / 64;

	STAT_ADD(d, lines_cleaned, lines);
	if (plat_unlikely(plat_sim))
		plat_mem_access(ilab_mem_node_of(d->mem, pa), lines * 64, true);
}

/* Linux __arm_lpae_sync_pte: n PTEs just written, made visible to a non-coherent walker. */
static inline void sync_pte(struct ilab_io_pgtable *d, ilab_pa_t ptep_pa, uint64_t n)
{
	if (d->cfg.coherent_walk || !n)
		return;
	STAT_ADD(d, pte_syncs, 1);
	clean_poc(d, ptep_pa, n * sizeof(uint64_t));
}

static uint64_t *alloc_table(struct ilab_io_pgtable *d, unsigned order, ilab_pa_t *pa)
{
	uint64_t *va;

	if (ilab_mem_alloc_pages(d->mem, d->node, order, pa))
		return NULL;
	va = ilab_mem_va(d->mem, *pa, ILAB_PAGE_SIZE << order);
	if (!va) {
		ilab_mem_free_pages(d->mem, *pa, order);
		return NULL;
	}
	STAT_ADD(d, tables_alloc, 1);
	/* Linux __arm_lpae_alloc_pages: dma_map_single(DMA_TO_DEVICE) of the zeroed table. */
	if (!d->cfg.coherent_walk) {
		STAT_ADD(d, table_cleans, 1);
		clean_poc(d, *pa, ILAB_PAGE_SIZE << order);
	}
	return va;
}

static void free_table(struct ilab_io_pgtable *d, ilab_pa_t pa, unsigned order)
{
	ilab_mem_free_pages(d->mem, pa, order);
	STAT_ADD(d, tables_free, 1);
}

/* Free the table at pa (level lvl) and every table below it. */
static void free_pgtable(struct ilab_io_pgtable *d, unsigned lvl, ilab_pa_t pa, uint64_t *table,
			 uint64_t entries, unsigned order)
{
	uint64_t i;

	if (lvl < ARM_LPAE_MAX_LEVELS - 1) {
		for (i = 0; i < entries; i++) {
			uint64_t pte = pte_load(&table[i]);

			if (pte_table(pte, lvl))
				free_pgtable(d, lvl + 1, pte_addr(pte), table_va(d, pte),
					     1ull << d->bits_per_level, d->tbl_order);
		}
	}
	free_table(d, pa, order);
}

/* ---- prot ---------------------------------------------------------------------------------- */

static uint64_t prot_to_pte(int prot)
{
	uint64_t pte = ARM_LPAE_PTE_nG | ARM_LPAE_PTE_AF;

	if (!(prot & ILAB_IOMMU_WRITE) && (prot & ILAB_IOMMU_READ))
		pte |= ARM_LPAE_PTE_AP_RDONLY;
	if (!(prot & ILAB_IOMMU_PRIV))
		pte |= ARM_LPAE_PTE_AP_UNPRIV;
	if (prot & ILAB_IOMMU_MMIO)
		pte |= (uint64_t)ARM_LPAE_MAIR_ATTR_IDX_DEV << ARM_LPAE_PTE_ATTRINDX_SHIFT;
	else if (prot & ILAB_IOMMU_CACHE)
		pte |= (uint64_t)ARM_LPAE_MAIR_ATTR_IDX_CACHE << ARM_LPAE_PTE_ATTRINDX_SHIFT;
	/* else AttrIndx 0: Normal non-cacheable */
	pte |= (prot & ILAB_IOMMU_CACHE) ? ARM_LPAE_PTE_SH_IS : ARM_LPAE_PTE_SH_OS;
	if (prot & ILAB_IOMMU_NOEXEC)
		pte |= ARM_LPAE_PTE_XN;
	return pte;
}

/* ---- unmap ------------------------------------------------------------------------------- */

static void flush_walk(struct ilab_io_pgtable *d, uint64_t iova, size_t size)
{
	if (d->cfg.tlb && d->cfg.tlb->tlb_flush_walk)
		d->cfg.tlb->tlb_flush_walk(iova, size, granule(d), d->cfg.cookie);
}

static void add_page(struct ilab_io_pgtable *d, struct ilab_iotlb_gather *gather, uint64_t iova,
		     size_t size)
{
	if (d->cfg.tlb && d->cfg.tlb->tlb_add_page)
		d->cfg.tlb->tlb_add_page(gather, iova, size, d->cfg.cookie);
}

/* Clear up to n entries of size `size` at ptep (level lvl), stopping at an empty one. Tables
 * found there are removed with a synchronous walk flush; leaves go into the gather. */
static size_t clear_entries(struct ilab_io_pgtable *d, struct ilab_iotlb_gather *gather,
			    uint64_t iova, size_t size, uint64_t n, unsigned lvl, uint64_t *ptep,
			    ilab_pa_t ptep_pa)
{
	uint64_t i, j;

	for (i = 0; i < n; i++) {
		uint64_t pte = pte_load(&ptep[i]);

		if (!pte)
			break;
		if (!pte_leaf(pte, lvl)) {
			pte_store(&ptep[i], 0);
			sync_pte(d, ptep_pa + i * 8, 1);
			flush_walk(d, iova + i * size, size);
			free_pgtable(d, lvl + 1, pte_addr(pte), table_va(d, pte),
				     1ull << d->bits_per_level, d->tbl_order);
		}
	}
	for (j = 0; j < i; j++)
		pte_store(&ptep[j], 0);
	if (i) {
		charge(ptep, i * sizeof(uint64_t), true);
		plat_charge_n(PLAT_CHARGE_PTE_WRITE, i);
		STAT_ADD(d, pte_clears, i);
		sync_pte(d, ptep_pa, i);
	}
	if (gather && !gather->queued)
		for (j = 0; j < i; j++)
			add_page(d, gather, iova + j * size, size);
	return i * size;
}

static size_t unmap_from(struct ilab_io_pgtable *d, struct ilab_iotlb_gather *gather,
			 uint64_t iova, size_t size, size_t pgcount, unsigned lvl, uint64_t *table,
			 ilab_pa_t table_pa);

/* Linux <= 6.12 (arm_lpae_split_blk_unmap; cfg.split_blocks): part of the block blk_pte at
 * ptep (level lvl) is unmapped. The block is replaced by a table of next-level leaves that
 * map the rest of it; when the unmap is of that next level's size its entries are simply not
 * written (and go into the gather), else the unmap continues in the new table, which splits
 * again. Returns the bytes unmapped, 0 if another CPU changed the entry meanwhile. */
static size_t split_blk_unmap(struct ilab_io_pgtable *d, struct ilab_iotlb_gather *gather,
			      uint64_t iova, size_t size, size_t pgcount, unsigned lvl,
			      uint64_t *ptep, ilab_pa_t ptep_pa, uint64_t blk_pte)
{
	uint64_t split = block_size(d, lvl + 1), n = lvl_entries(d, lvl + 1);
	uint64_t blk_start = iova & ~(block_size(d, lvl) - 1);
	uint64_t attrs = blk_pte & ~(ARM_LPAE_PTE_ADDR_MASK | ARM_LPAE_PTE_TYPE_MASK);
	uint64_t type = lvl + 1 == ARM_LPAE_MAX_LEVELS - 1 ? ARM_LPAE_PTE_TYPE_PAGE
							  : ARM_LPAE_PTE_TYPE_BLOCK;
	uint64_t first = n, count = 0, i, *tbl;
	ilab_pa_t tbl_pa, blk_pa = pte_addr(blk_pte);

	if (size == split) {
		first = lvl_idx(d, iova, lvl + 1);
		count = n - first < pgcount ? n - first : pgcount;
	}
	tbl = alloc_table(d, d->tbl_order, &tbl_pa);
	if (!tbl)
		return 0;
	for (i = 0; i < n; i++)
		if (i < first || i >= first + count)
			tbl[i] = attrs | type | ((blk_pa + i * split) & ARM_LPAE_PTE_ADDR_MASK);
	charge(tbl, n * sizeof(uint64_t), true);
	plat_charge_n(PLAT_CHARGE_PTE_WRITE, n - count);
	STAT_ADD(d, pte_stores, n - count);
	sync_pte(d, tbl_pa, n);
	if (!__atomic_compare_exchange_n(ptep, &blk_pte, (tbl_pa & ARM_LPAE_PTE_ADDR_MASK) |
					 ARM_LPAE_PTE_TYPE_TABLE, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED)) {
		free_table(d, tbl_pa, d->tbl_order);
		return 0;
	}
	charge(ptep, 8, true);
	sync_pte(d, ptep_pa, 1);
	STAT_ADD(d, block_splits, 1);
	if (size != split)
		return unmap_from(d, gather, iova, size, pgcount, lvl + 1, tbl, tbl_pa);
	if (gather && !gather->queued)
		for (i = 0; i < count; i++)
			add_page(d, gather, blk_start + (first + i) * split, split);
	return count * split;
}

/* The unmap walk from table (level lvl) down. */
static size_t unmap_from(struct ilab_io_pgtable *d, struct ilab_iotlb_gather *gather,
			 uint64_t iova, size_t size, size_t pgcount, unsigned lvl, uint64_t *table,
			 ilab_pa_t table_pa)
{
	for (; lvl < ARM_LPAE_MAX_LEVELS; lvl++) {
		uint64_t idx = lvl_idx(d, iova, lvl);
		uint64_t *ptep = &table[idx];
		uint64_t pte = pte_load(ptep);

		charge(ptep, 8, false);
		plat_charge(PLAT_CHARGE_PGTABLE_WALK_LEVEL);
		if (!pte)
			return 0;
		if (size == block_size(d, lvl)) {
			uint64_t n = lvl_entries(d, lvl) - idx;

			if (pgcount < n)
				n = pgcount;
			return clear_entries(d, gather, iova, size, n, lvl, ptep, table_pa + idx * 8);
		}
		if (pte_leaf(pte, lvl)) {
			/* part of a larger block: refused (Linux >= 6.13), or split (<= 6.12) */
			if (!d->cfg.split_blocks)
				return 0;
			return split_blk_unmap(d, gather, iova, size, pgcount, lvl, ptep,
					       table_pa + idx * 8, pte);
		}
		table_pa = pte_addr(pte);
		table = table_va(d, pte);
	}
	return 0;
}

static size_t do_unmap(struct ilab_io_pgtable *d, struct ilab_iotlb_gather *gather, uint64_t iova,
		       size_t size, size_t pgcount)
{
	STAT_ADD(d, walks, 1);
	return unmap_from(d, gather, iova, size, pgcount, d->start_level, d->pgd, d->pgd_pa);
}

static bool size_ok(const struct ilab_io_pgtable *d, size_t pgsize)
{
	return pgsize && !(pgsize & (pgsize - 1)) && (pgsize & d->cfg.pgsize_bitmap) == pgsize;
}

size_t ilab_io_pgtable_unmap_pages(struct ilab_io_pgtable *d, uint64_t iova, size_t pgsize,
				   size_t pgcount, struct ilab_iotlb_gather *gather)
{
	if (!d || !size_ok(d, pgsize) || !pgcount || (iova & (pgsize - 1)) || (iova >> d->cfg.ias))
		return 0;
	return do_unmap(d, gather, iova, pgsize, pgcount);
}

size_t ilab_io_pgtable_unmap_one(struct ilab_io_pgtable *d, uint64_t iova, size_t size,
				 struct ilab_iotlb_gather *gather)
{
	return ilab_io_pgtable_unmap_pages(d, iova, size, 1, gather);
}

/* ---- map --------------------------------------------------------------------------------- */

/* Fill n leaves at ptep (level lvl); nothing is written if any slot already holds a leaf. */
static int init_ptes(struct ilab_io_pgtable *d, uint64_t iova, ilab_pa_t paddr, uint64_t attrs,
		     unsigned lvl, uint64_t n, uint64_t *ptep, ilab_pa_t ptep_pa)
{
	uint64_t size = block_size(d, lvl);
	uint64_t type = lvl == ARM_LPAE_MAX_LEVELS - 1 ? ARM_LPAE_PTE_TYPE_PAGE
						     : ARM_LPAE_PTE_TYPE_BLOCK;
	uint64_t i;

	for (i = 0; i < n; i++)
		if (pte_leaf(pte_load(&ptep[i]), lvl))
			return -EEXIST;
	/* A block replacing a table: unmap and free the table first (Linux does the same). */
	for (i = 0; i < n; i++)
		if (pte_table(pte_load(&ptep[i]), lvl) &&
		    clear_entries(d, NULL, iova + i * size, size, 1, lvl, &ptep[i],
				  ptep_pa + i * 8) != size)
			return -EINVAL;
	for (i = 0; i < n; i++)
		pte_store(&ptep[i], attrs | type | ((paddr + i * size) & ARM_LPAE_PTE_ADDR_MASK));
	charge(ptep, n * sizeof(uint64_t), true);
	plat_charge_n(PLAT_CHARGE_PTE_WRITE, n);
	STAT_ADD(d, pte_stores, n);
	sync_pte(d, ptep_pa, n);
	return 0;
}

/* The end of Linux arm_lpae_install_table for a non-coherent walker: the table descriptor at
 * ptep (now pte; ours if `won`) is cleaned unless its installer already did (SW_SYNC) — even
 * another CPU's, as there is no point waiting for it — and ours is marked done, unless it has
 * changed since. A coherent walker needs neither (and its descriptors stay without the bit). */
static uint64_t install_sync(struct ilab_io_pgtable *d, uint64_t *ptep, ilab_pa_t ptep_pa,
			     uint64_t pte, bool won)
{
	uint64_t cur = pte;

	if (d->cfg.coherent_walk || (pte & ARM_LPAE_PTE_SW_SYNC))
		return pte;
	sync_pte(d, ptep_pa, 1);
	if (won && __atomic_compare_exchange_n(ptep, &cur, pte | ARM_LPAE_PTE_SW_SYNC, false,
					       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return pte | ARM_LPAE_PTE_SW_SYNC;
	return pte;
}

static int do_map(struct ilab_io_pgtable *d, uint64_t iova, ilab_pa_t paddr, size_t size,
		  size_t pgcount, uint64_t attrs, size_t *mapped)
{
	uint64_t *table = d->pgd;
	ilab_pa_t table_pa = d->pgd_pa;
	unsigned lvl;

	STAT_ADD(d, walks, 1);
	for (lvl = d->start_level; lvl < ARM_LPAE_MAX_LEVELS; lvl++) {
		uint64_t idx = lvl_idx(d, iova, lvl);
		uint64_t *ptep = &table[idx];
		uint64_t pte;

		if (size == block_size(d, lvl)) {
			uint64_t n = lvl_entries(d, lvl) - idx;
			int ret;

			if (pgcount < n)
				n = pgcount;
			ret = init_ptes(d, iova, paddr, attrs, lvl, n, ptep, table_pa + idx * 8);
			if (!ret)
				*mapped += n * size;
			return ret;
		}
		if (lvl == ARM_LPAE_MAX_LEVELS - 1)
			break;
		pte = pte_load(ptep);
		charge(ptep, 8, false);
		plat_charge(PLAT_CHARGE_PGTABLE_WALK_LEVEL);
		if (!pte) {
			ilab_pa_t new_pa;
			uint64_t expected = 0, new_pte;

			if (!alloc_table(d, d->tbl_order, &new_pa))
				return -ENOMEM;
			new_pte = (new_pa & ARM_LPAE_PTE_ADDR_MASK) | ARM_LPAE_PTE_TYPE_TABLE;
			/* Release: the zeroed table is visible before the pointer to it. */
			if (__atomic_compare_exchange_n(ptep, &expected, new_pte, false,
							__ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
				pte = new_pte;
			} else {
				free_table(d, new_pa, d->tbl_order); /* another CPU won */
				STAT_ADD(d, install_races, 1);
				pte = expected;
			}
			charge(ptep, 8, true);
			pte = install_sync(d, ptep, table_pa + idx * 8, pte, !expected);
		} else if (!d->cfg.coherent_walk && !(pte & ARM_LPAE_PTE_SW_SYNC)) {
			/* installed by another CPU that has not cleaned it yet: do it ourselves */
			sync_pte(d, table_pa + idx * 8, 1);
		}
		if (!pte_table(pte, lvl))
			return -EEXIST; /* a block covers this range: unmap first */
		table_pa = pte_addr(pte);
		table = table_va(d, pte);
	}
	return -EINVAL;
}

int ilab_io_pgtable_map_pages(struct ilab_io_pgtable *d, uint64_t iova, ilab_pa_t paddr,
			      size_t pgsize, size_t pgcount, int prot, size_t *mapped)
{
	int ret;

	if (!d || !mapped || !size_ok(d, pgsize) || !pgcount)
		return -EINVAL;
	if ((iova | paddr) & (pgsize - 1))
		return -EINVAL;
	if ((iova >> d->cfg.ias) || (paddr >> d->cfg.oas))
		return -ERANGE;
	if (!(prot & (ILAB_IOMMU_READ | ILAB_IOMMU_WRITE)))
		return -EINVAL;
	/* Linux ends with wmb() so the PTEs are visible before a later doorbell. Here whatever
	 * hands the mapping to another agent (a queue's prod word, a device doorbell) is a plat
	 * release store or RMW, which already orders every earlier store in C11; no fence (which
	 * TSan builds also reject). */
	ret = do_map(d, iova, paddr, pgsize, pgcount, prot_to_pte(prot), mapped);
	return ret;
}

int ilab_io_pgtable_map_one(struct ilab_io_pgtable *d, uint64_t iova, ilab_pa_t paddr,
			    size_t size, int prot)
{
	size_t mapped = 0;

	return ilab_io_pgtable_map_pages(d, iova, paddr, size, 1, prot, &mapped);
}

ilab_pa_t ilab_io_pgtable_iova_to_phys(struct ilab_io_pgtable *d, uint64_t iova)
{
	uint64_t *table;
	unsigned lvl;

	if (!d || (iova >> d->cfg.ias))
		return 0;
	table = d->pgd;
	for (lvl = d->start_level; lvl < ARM_LPAE_MAX_LEVELS; lvl++) {
		uint64_t pte = pte_load(&table[lvl_idx(d, iova, lvl)]);

		if (!pte)
			return 0;
		if (pte_leaf(pte, lvl))
			return pte_addr(pte) | (iova & (block_size(d, lvl) - 1));
		if (!pte_table(pte, lvl))
			return 0;
		table = table_va(d, pte);
	}
	return 0;
}

/* ---- allocation ------------------------------------------------------------------------- */

/* arm_lpae_restrict_pgsizes with a 4 KiB CPU page: the granule is 4K if offered, else the
 * smallest larger one; then only the block sizes that granule allows (48-bit OA). */
static uint64_t restrict_pgsizes(uint64_t bitmap)
{
	uint64_t g;

	if (bitmap & SZ_4K)
		g = SZ_4K;
	else if (bitmap & ~(SZ_4K - 1))
		g = 1ull << __builtin_ctzll(bitmap & ~(SZ_4K - 1));
	else
		return 0;
	if (g == SZ_4K)
		return bitmap & (SZ_4K | SZ_2M | SZ_1G);
	if (g == SZ_16K)
		return bitmap & (SZ_16K | SZ_32M);
	if (g == SZ_64K)
		return bitmap & (SZ_64K | SZ_512M);
	return 0;
}

static int ips_of(unsigned oas)
{
	switch (oas) {
	case 32: return 0;
	case 36: return 1;
	case 40: return 2;
	case 42: return 3;
	case 44: return 4;
	case 48: return 5;
	default: return -1;
	}
}

int ilab_alloc_io_pgtable(enum ilab_io_pgtable_fmt fmt, const struct ilab_io_pgtable_cfg *cfg,
			  struct ilab_io_pgtable **out)
{
	struct ilab_io_pgtable *d;
	unsigned va_bits, levels, pgd_bytes;
	uint64_t bitmap;
	int ips;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (fmt != ILAB_ARM_64_LPAE_S1 || !cfg || !cfg->mem)
		return -EINVAL;
	bitmap = restrict_pgsizes(cfg->pgsize_bitmap);
	ips = ips_of(cfg->oas);
	if (!bitmap || ips < 0 || cfg->ias < 32 || cfg->ias > ARM_LPAE_MAX_ADDR_BITS)
		return -EINVAL;

	d = plat_zalloc_array(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = *cfg;
	d->cfg.pgsize_bitmap = bitmap;
	d->mem = cfg->mem;
	d->node = cfg->node;
	d->pg_shift = (unsigned)__builtin_ctzll(bitmap);
	d->bits_per_level = d->pg_shift - 3;
	va_bits = cfg->ias - d->pg_shift;
	levels = (va_bits + d->bits_per_level - 1) / d->bits_per_level;
	d->start_level = ARM_LPAE_MAX_LEVELS - levels;
	d->pgd_bits = va_bits - d->bits_per_level * (levels - 1);
	d->tbl_order = d->pg_shift - ILAB_PAGE_SHIFT;
	pgd_bytes = 8u << d->pgd_bits;
	d->pgd_order = pgd_bytes <= ILAB_PAGE_SIZE ? 0 : (unsigned)__builtin_ctz(pgd_bytes) - 12;
	d->stats = plat_percpu_alloc(sizeof(struct ilab_io_pgtable_stats));
	if (!d->stats) {
		free(d);
		return -ENOMEM;
	}
	d->pgd = alloc_table(d, d->pgd_order, &d->pgd_pa);
	if (!d->pgd) {
		plat_percpu_free(d->stats);
		free(d);
		return -ENOMEM;
	}

	/* What the CD needs (Linux arm_64_lpae_alloc_pgtable_s1). */
	d->cfg.arm_lpae_s1_cfg.ttbr = d->pgd_pa;
	d->cfg.arm_lpae_s1_cfg.tcr.sh = cfg->coherent_walk ? ARM_LPAE_TCR_SH_IS : ARM_LPAE_TCR_SH_OS;
	d->cfg.arm_lpae_s1_cfg.tcr.irgn =
		cfg->coherent_walk ? ARM_LPAE_TCR_RGN_WBWA : ARM_LPAE_TCR_RGN_NC;
	d->cfg.arm_lpae_s1_cfg.tcr.orgn = d->cfg.arm_lpae_s1_cfg.tcr.irgn;
	d->cfg.arm_lpae_s1_cfg.tcr.tg = d->pg_shift == 12   ? ARM_LPAE_TCR_TG0_4K
					: d->pg_shift == 14 ? ARM_LPAE_TCR_TG0_16K
							    : ARM_LPAE_TCR_TG0_64K;
	d->cfg.arm_lpae_s1_cfg.tcr.tsz = 64 - cfg->ias;
	d->cfg.arm_lpae_s1_cfg.tcr.ips = (unsigned)ips;
	d->cfg.arm_lpae_s1_cfg.mair =
		(ARM_LPAE_MAIR_ATTR_NC << (8 * ARM_LPAE_MAIR_ATTR_IDX_NC)) |
		(ARM_LPAE_MAIR_ATTR_WBRWA << (8 * ARM_LPAE_MAIR_ATTR_IDX_CACHE)) |
		(ARM_LPAE_MAIR_ATTR_DEVICE << (8 * ARM_LPAE_MAIR_ATTR_IDX_DEV)) |
		(ARM_LPAE_MAIR_ATTR_INC_OWBRWA << (8 * ARM_LPAE_MAIR_ATTR_IDX_INC_OCACHE));
	*out = d;
	return 0;
}

void ilab_free_io_pgtable(struct ilab_io_pgtable *d)
{
	if (!d)
		return;
	free_pgtable(d, d->start_level, d->pgd_pa, d->pgd, 1ull << d->pgd_bits, d->pgd_order);
	plat_percpu_free(d->stats);
	free(d);
}

const struct ilab_io_pgtable_cfg *ilab_io_pgtable_cfg(const struct ilab_io_pgtable *d)
{
	return d ? &d->cfg : NULL;
}

void ilab_io_pgtable_geometry(const struct ilab_io_pgtable *d, struct ilab_io_pgtable_geometry *g)
{
	g->granule_shift = d->pg_shift;
	g->bits_per_level = d->bits_per_level;
	g->start_level = d->start_level;
	g->levels = ARM_LPAE_MAX_LEVELS - d->start_level;
	g->pgd_bits = d->pgd_bits;
}

void ilab_io_pgtable_stats(struct ilab_io_pgtable *d, struct ilab_io_pgtable_stats *st)
{
	unsigned cpu, n = plat_cpu_count();

	memset(st, 0, sizeof(*st));
	for (cpu = 0; cpu < n; cpu++) {
		struct ilab_io_pgtable_stats *s = plat_percpu_ptr(d->stats, cpu);

		st->walks += __atomic_load_n(&s->walks, __ATOMIC_RELAXED);
		st->pte_stores += __atomic_load_n(&s->pte_stores, __ATOMIC_RELAXED);
		st->pte_clears += __atomic_load_n(&s->pte_clears, __ATOMIC_RELAXED);
		st->tables_alloc += __atomic_load_n(&s->tables_alloc, __ATOMIC_RELAXED);
		st->tables_free += __atomic_load_n(&s->tables_free, __ATOMIC_RELAXED);
		st->install_races += __atomic_load_n(&s->install_races, __ATOMIC_RELAXED);
		st->block_splits += __atomic_load_n(&s->block_splits, __ATOMIC_RELAXED);
		st->pte_syncs += __atomic_load_n(&s->pte_syncs, __ATOMIC_RELAXED);
		st->table_cleans += __atomic_load_n(&s->table_cleans, __ATOMIC_RELAXED);
		st->lines_cleaned += __atomic_load_n(&s->lines_cleaned, __ATOMIC_RELAXED);
	}
}

/* ---- core-loop glue ---------------------------------------------------------------------- */

static int pt_map_pages(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize, size_t pgcount,
			int prot, size_t *mapped)
{
	int ret;

	plat_scope_enter(PLAT_SCOPE_PGTABLE_MAP);
	ret = ilab_io_pgtable_map_pages(priv, iova, paddr, pgsize, pgcount, prot, mapped);
	plat_scope_leave();
	return ret;
}

static size_t pt_unmap_pages(void *priv, uint64_t iova, size_t pgsize, size_t pgcount,
			     struct ilab_iotlb_gather *gather)
{
	size_t n;

	plat_scope_enter(PLAT_SCOPE_PGTABLE_UNMAP);
	n = ilab_io_pgtable_unmap_pages(priv, iova, pgsize, pgcount, gather);
	plat_scope_leave();
	return n;
}

static int pt_map(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize, int prot)
{
	int ret;

	plat_scope_enter(PLAT_SCOPE_PGTABLE_MAP);
	ret = ilab_io_pgtable_map_one(priv, iova, paddr, pgsize, prot);
	plat_scope_leave();
	return ret;
}

static size_t pt_unmap(void *priv, uint64_t iova, size_t pgsize, struct ilab_iotlb_gather *gather)
{
	size_t n;

	plat_scope_enter(PLAT_SCOPE_PGTABLE_UNMAP);
	n = ilab_io_pgtable_unmap_one(priv, iova, pgsize, gather);
	plat_scope_leave();
	return n;
}

void ilab_io_pgtable_pt_ops(struct ilab_io_pgtable *d, struct ilab_iommu_pt_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->pgsize_bitmap = d->cfg.pgsize_bitmap;
	ops->priv = d;
	ops->map_pages = pt_map_pages;
	ops->unmap_pages = pt_unmap_pages;
	ops->map = pt_map;
	ops->unmap = pt_unmap;
}
