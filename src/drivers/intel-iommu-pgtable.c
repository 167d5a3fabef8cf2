/* intel-iommu-pgtable.c — the domain's second-stage page table (VT-d §9.8; Linux 6.3
 * drivers/iommu/intel/iommu.c: pfn_to_dma_pte, __domain_mapping with hardware_largepage_caps and
 * switch_to_super_page, intel_iommu_map_pages, intel_iommu_unmap_pages with domain_unmap,
 * dma_pte_clear_level and dma_pte_list_pagetables, the agaw knock-out of
 * prepare_domain_attach_device, domain_exit). Table pages come from the domain's nid
 * (NUMA_NO_NODE: the node of the CPU that allocates them, as alloc_pages_node does).
 *
 * Freeing: like Linux, an unmap frees only the tables its range covers entirely (the entry
 * above is cleared); partially emptied tables stay until the domain dies. Unlinked pages wait
 * on the domain's pending list, tagged with the range they translated, until an invalidation
 * covering that range has completed (iotlb_sync for that range, or flush_iotlb_all): Linux
 * carries them in gather->freelist, which iommulab's gather has no room for.
 */
#include <stdlib.h>
#include <string.h>

#include "drivers/intel-iommu.h"

static inline uint64_t pte_load(uint64_t *ptep)
{
	plat_mem_touch(ptep, 8, false);
	return __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
}

static inline void pte_store(uint64_t *ptep, uint64_t v)
{
	plat_mem_touch(ptep, 8, true);
	__atomic_store_n(ptep, v, __ATOMIC_RELEASE);
}

static inline bool dma_pte_present(uint64_t pte) { return (pte & 3) != 0; }
static inline bool dma_pte_superpage(uint64_t pte) { return pte & DMA_PTE_LARGE_PAGE; }
static inline ilab_pa_t dma_pte_addr(uint64_t pte) { return pte & DMA_PTE_ADDR_MASK; }
static inline bool first_pte_in_page(const uint64_t *ptep) { return !((uintptr_t)ptep & 0xfff); }

static inline unsigned pfn_level_offset(uint64_t pfn, unsigned level)
{
	return (unsigned)(pfn >> level_to_offset_bits(level)) & 0x1ff;
}

static inline uint64_t level_mask(unsigned level) { return ~0ull << level_to_offset_bits(level); }
static inline uint64_t level_size(unsigned level) { return 1ull << level_to_offset_bits(level); }

static struct ilab_mem *dmem(struct dmar_domain *d) { return d->alloc_iommu->mem; }

static uint64_t *phys_to_virt(struct dmar_domain *d, ilab_pa_t pa)
{
	return ilab_mem_va(dmem(d), pa, VTD_PAGE_SIZE);
}

/* domain_flush_cache: a non-coherent unit walks memory, so the CPU writes the lines back
 * (clflush); charged as a write of those lines to the table's home memory. */
static void domain_flush_cache(struct dmar_domain *d, const void *va, size_t bytes)
{
	if (d->iommu_coherency || !bytes)
		return;
	if (plat_unlikely(plat_sim))
		plat_mem_access(d->nid < 0 ? plat_this_node() : d->nid, (bytes + 63) / 64 * 64, true);
}

/* alloc_pgtable_page(domain->nid): a zeroed page of the domain's node. */
static uint64_t *alloc_pgtable_page(struct dmar_domain *d, ilab_pa_t *pa)
{
	uint64_t *va;

	if (ilab_mem_alloc_pages(dmem(d), d->nid, 0, pa))
		return NULL;
	va = phys_to_virt(d, *pa);
	if (!va) {
		ilab_mem_free_pages(dmem(d), *pa, 0);
		return NULL;
	}
	INTEL_STAT_ADD(d->alloc_iommu, pt_alloc, 1);
	domain_flush_cache(d, va, VTD_PAGE_SIZE);
	return va;
}

static void free_pgtable_page(struct dmar_domain *d, ilab_pa_t pa)
{
	ilab_mem_free_pages(dmem(d), pa, 0);
	INTEL_STAT_ADD(d->alloc_iommu, pt_free, 1);
}

int intel_domain_pgd_alloc(struct dmar_domain *d)
{
	d->pgd = alloc_pgtable_page(d, &d->pgd_pa);
	return d->pgd ? 0 : -ENOMEM;
}

/* ---- the pending list of unlinked table pages ------------------------------------------- */

static void add_pending(struct dmar_domain *d, ilab_pa_t pa, uint64_t start_pfn, uint64_t last_pfn,
			struct intel_freed_table **list)
{
	struct intel_freed_table *f = malloc(sizeof(*f));

	if (!f) /* cannot track it: leak the page rather than free it under the walker */
		return;
	f->pa = pa;
	f->start = start_pfn << VTD_PAGE_SHIFT;
	f->last = (last_pfn << VTD_PAGE_SHIFT) | (VTD_PAGE_SIZE - 1);
	f->next = *list;
	*list = f;
}

static void publish_pending(struct dmar_domain *d, struct intel_freed_table *list)
{
	struct intel_freed_table *tail = list;

	if (!list)
		return;
	while (tail->next)
		tail = tail->next;
	plat_spin_lock(&d->free_lock);
	tail->next = d->freelist;
	d->freelist = list;
	plat_spin_unlock(&d->free_lock);
}

struct intel_freed_table *intel_take_pending_tables(struct dmar_domain *d, uint64_t start,
						    uint64_t last, bool all)
{
	struct intel_freed_table *taken = NULL, **pp;

	plat_spin_lock(&d->free_lock);
	pp = &d->freelist;
	while (*pp) {
		struct intel_freed_table *f = *pp;

		if (all || (f->start >= start && f->last <= last)) {
			*pp = f->next;
			f->next = taken;
			taken = f;
		} else {
			pp = &f->next;
		}
	}
	plat_spin_unlock(&d->free_lock);
	return taken;
}

void intel_free_table_list(struct dmar_domain *d, struct intel_freed_table *list)
{
	while (list) {
		struct intel_freed_table *next = list->next;

		free_pgtable_page(d, list->pa);
		free(list);
		list = next;
	}
}

/* ---- walking --------------------------------------------------------------------------- */

/* pfn_to_dma_pte: the entry for pfn at *target_level, allocating missing tables (a racing CPU
 * may install the same table: cmpxchg, and the loser frees its page). *target_level 0: stop
 * at the first leaf or non-present entry and report its level. NULL: out of memory, no pgd,
 * or a leaf above the target level (the caller must not write through it). */
static uint64_t *pfn_to_dma_pte(struct dmar_domain *d, uint64_t pfn, unsigned *target_level,
				bool alloc)
{
	unsigned level = agaw_to_level(d->agaw);
	uint64_t *parent = d->pgd, *ptep = NULL;

	if (!parent)
		return NULL;
	for (;;) {
		uint64_t pte;

		plat_charge(PLAT_CHARGE_PGTABLE_WALK_LEVEL);
		ptep = &parent[pfn_level_offset(pfn, level)];
		pte = pte_load(ptep);
		if (!*target_level && (dma_pte_superpage(pte) || !dma_pte_present(pte)))
			break;
		if (level == *target_level)
			break;
		if (dma_pte_superpage(pte))
			return NULL;
		if (!dma_pte_present(pte)) {
			ilab_pa_t pa;
			uint64_t expected = 0, val;

			if (!alloc || !alloc_pgtable_page(d, &pa))
				return NULL;
			val = pa | DMA_PTE_READ | DMA_PTE_WRITE;
			plat_mem_touch(ptep, 8, true);
			if (!__atomic_compare_exchange_n(ptep, &expected, val, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE)) {
				free_pgtable_page(d, pa); /* someone else's table: use theirs */
				pte = expected;
			} else {
				pte = val;
				domain_flush_cache(d, ptep, 8);
			}
		}
		if (level == 1)
			break;
		parent = phys_to_virt(d, dma_pte_addr(pte));
		if (!parent)
			return NULL;
		level--;
	}
	if (!*target_level)
		*target_level = level;
	return ptep;
}

/* ---- map ----------------------------------------------------------------------------------- */

/* hardware_largepage_caps: the highest level whose page both pfns are aligned to and that the
 * remaining count fills, within the domain's superpage support. */
static unsigned hardware_largepage_caps(struct dmar_domain *d, uint64_t iov_pfn, uint64_t phy_pfn,
					uint64_t pages)
{
	unsigned support = d->iommu_superpage, level = 1;
	uint64_t pfnmerge = iov_pfn | phy_pfn;

	while (support && !(pfnmerge & ~VTD_STRIDE_MASK)) {
		pages >>= VTD_STRIDE_SHIFT;
		if (!pages)
			break;
		pfnmerge >>= VTD_STRIDE_SHIFT;
		level++;
		support--;
	}
	return level;
}

static void dma_pte_clear_level(struct dmar_domain *d, unsigned level, uint64_t *table,
				uint64_t pfn, uint64_t start_pfn, uint64_t last_pfn,
				struct intel_freed_table **freelist);

/* switch_to_super_page: before superpages go where tables were (an earlier mapping of small
 * pages, since unmapped), unlink each such table, invalidate its range on every unit (IH 0:
 * the walk caches must forget it), and only then free the pages (Linux frees first). */
static void switch_to_super_page(struct dmar_domain *d, uint64_t start_pfn, uint64_t end_pfn,
				 unsigned level)
{
	uint64_t lvl_pages = lvl_to_nr_pages(level);

	while (start_pfn <= end_pfn) {
		unsigned lvl = level;
		uint64_t *ptep = pfn_to_dma_pte(d, start_pfn, &lvl, true);

		if (ptep && dma_pte_present(pte_load(ptep)) && !dma_pte_superpage(pte_load(ptep))) {
			struct intel_freed_table *freed = NULL;

			dma_pte_clear_level(d, level, ptep - pfn_level_offset(start_pfn, level),
					    start_pfn & level_mask(level + 1), start_pfn,
					    start_pfn + lvl_pages - 1, &freed);
			intel_domain_flush_range_all_units(d, start_pfn, lvl_pages, false);
			intel_free_table_list(d, freed);
		}
		start_pfn += lvl_pages;
	}
}

static void domain_unmap(struct dmar_domain *d, uint64_t start_pfn, uint64_t last_pfn,
			 struct intel_freed_table **freelist);

/* __domain_mapping: runs of leaves at the largest level hardware_largepage_caps allows; an
 * occupied leaf is an error (Linux warns and goes on; iommulab's core expects -EEXIST): what
 * this call mapped is then unmapped, invalidated and freed again. */
static int domain_mapping(struct dmar_domain *d, uint64_t iov_pfn, uint64_t phys_pfn,
			  uint64_t nr_pages, uint64_t attr)
{
	uint64_t start_pfn = iov_pfn, pteval = (phys_pfn << VTD_PAGE_SHIFT) | attr;
	uint64_t *first_pte = NULL, *ptep = NULL, lvl_pages = 1;
	unsigned largepage_lvl = 1;

	while (nr_pages > 0) {
		uint64_t expected = 0;

		if (!ptep) {
			largepage_lvl = hardware_largepage_caps(d, iov_pfn, phys_pfn, nr_pages);
			ptep = pfn_to_dma_pte(d, iov_pfn, &largepage_lvl, true);
			if (!ptep)
				goto fail;
			first_pte = ptep;
			lvl_pages = lvl_to_nr_pages(largepage_lvl);
			if (largepage_lvl > 1) {
				uint64_t left = (VTD_PAGE_SIZE - ((uintptr_t)ptep & 0xfff)) / 8;
				uint64_t to_remove = nr_pages < left * lvl_pages ? nr_pages
										   : left * lvl_pages;

				pteval |= DMA_PTE_LARGE_PAGE;
				switch_to_super_page(d, iov_pfn, iov_pfn + to_remove - 1,
						     largepage_lvl);
			} else {
				pteval &= ~DMA_PTE_LARGE_PAGE;
			}
			__atomic_fetch_or(&d->used_pgsizes,
					  VTD_PAGE_SIZE << level_to_offset_bits(largepage_lvl),
					  __ATOMIC_RELAXED);
		}
		plat_charge(PLAT_CHARGE_PTE_WRITE);
		plat_mem_touch(ptep, 8, true);
		if (!__atomic_compare_exchange_n(ptep, &expected, pteval, false, __ATOMIC_RELEASE,
						 __ATOMIC_RELAXED))
			goto fail;
		nr_pages -= lvl_pages;
		iov_pfn += lvl_pages;
		phys_pfn += lvl_pages;
		pteval += lvl_pages * VTD_PAGE_SIZE;
		ptep++;
		if (!nr_pages || first_pte_in_page(ptep) ||
		    (largepage_lvl > 1 && nr_pages < lvl_pages)) {
			domain_flush_cache(d, first_pte, (size_t)((char *)ptep - (char *)first_pte));
			ptep = NULL;
		}
	}
	return 0;
fail:
	if (iov_pfn > start_pfn) {
		struct intel_freed_table *freed = NULL;

		domain_unmap(d, start_pfn, iov_pfn - 1, &freed);
		intel_domain_flush_range_all_units(d, start_pfn, iov_pfn - start_pfn, freed == NULL);
		intel_free_table_list(d, freed);
	}
	return ptep ? -EEXIST : -ENOMEM;
}

/* intel_iommu_map_pages / intel_iommu_map: alignment, rights (R/W; SNP is not used: no
 * enforce_cache_coherency), the address width (max_addr), then the mapping. */
int intel_iommu_map_pages(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize,
			  size_t pgcount, int prot, size_t *mapped)
{
	struct dmar_domain *d = priv;
	uint64_t size = (uint64_t)pgsize * pgcount, attr = 0, max_addr, cur;
	int ret;

	if (!pgsize || !pgcount || ((iova | paddr) & (pgsize - 1)) || (pgsize & (VTD_PAGE_SIZE - 1)))
		return -EINVAL;
	if (prot & ILAB_IOMMU_READ)
		attr |= DMA_PTE_READ;
	if (prot & ILAB_IOMMU_WRITE)
		attr |= DMA_PTE_WRITE;
	if (!attr)
		return -EINVAL;
	max_addr = iova + size;
	if (max_addr < iova || max_addr - 1 > d->domain.aperture_end)
		return -EFAULT;
	plat_scope_enter(PLAT_SCOPE_INTEL_MAP_PAGES);
	cur = __atomic_load_n(&d->max_addr, __ATOMIC_RELAXED);
	while (cur < max_addr &&
	       !__atomic_compare_exchange_n(&d->max_addr, &cur, max_addr, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	ret = domain_mapping(d, iova >> VTD_PAGE_SHIFT, paddr >> VTD_PAGE_SHIFT,
			     size >> VTD_PAGE_SHIFT, attr);
	plat_scope_leave();
	if (!ret && mapped)
		*mapped = size;
	return ret;
}

/* ---- unmap ------------------------------------------------------------------------------- */

/* dma_pte_list_pagetables: the table under ptep (at `level`) and every table below it. */
static void dma_pte_list_pagetables(struct dmar_domain *d, unsigned level, uint64_t pte,
				    uint64_t level_pfn, struct intel_freed_table **freelist)
{
	uint64_t *table = phys_to_virt(d, dma_pte_addr(pte));

	add_pending(d, dma_pte_addr(pte), level_pfn, level_pfn + level_size(level + 1) - 1,
		    freelist);
	if (level == 1 || !table)
		return;
	for (unsigned i = 0; i < 512; i++) {
		uint64_t sub = pte_load(&table[i]);

		if (dma_pte_present(sub) && !dma_pte_superpage(sub))
			dma_pte_list_pagetables(d, level - 1, sub, level_pfn + i * level_size(level),
						freelist);
	}
}

/* dma_pte_clear_level: clear the entries of `table` (at `level`, translating from pfn) that
 * [start_pfn, last_pfn] covers: an entry covered whole is cleared and the tables under it
 * listed for freeing; one covered in part is recursed into. */
static void dma_pte_clear_level(struct dmar_domain *d, unsigned level, uint64_t *table,
				uint64_t pfn, uint64_t start_pfn, uint64_t last_pfn,
				struct intel_freed_table **freelist)
{
	uint64_t *first = NULL, *last = NULL;
	uint64_t *ptep;

	pfn = pfn > start_pfn ? pfn : start_pfn;
	ptep = &table[pfn_level_offset(pfn, level)];
	do {
		uint64_t level_pfn = pfn & level_mask(level);
		uint64_t pte = pte_load(ptep);

		if (dma_pte_present(pte)) {
			if (start_pfn <= level_pfn && last_pfn >= level_pfn + level_size(level) - 1) {
				if (level > 1 && !dma_pte_superpage(pte))
					dma_pte_list_pagetables(d, level - 1, pte, level_pfn,
								freelist);
				pte_store(ptep, 0);
				if (!first)
					first = ptep;
				last = ptep;
			} else if (level > 1 && !dma_pte_superpage(pte)) {
				uint64_t *sub = phys_to_virt(d, dma_pte_addr(pte));

				if (sub)
					dma_pte_clear_level(d, level - 1, sub, level_pfn, start_pfn,
							    last_pfn, freelist);
			}
		}
		pfn = level_pfn + level_size(level);
		ptep++;
	} while (!first_pte_in_page(ptep) && pfn <= last_pfn);
	if (first)
		domain_flush_cache(d, first, (size_t)((char *)(last + 1) - (char *)first));
}

static void domain_unmap(struct dmar_domain *d, uint64_t start_pfn, uint64_t last_pfn,
			 struct intel_freed_table **freelist)
{
	if (d->pgd)
		dma_pte_clear_level(d, agaw_to_level(d->agaw), d->pgd, 0, start_pfn, last_pfn,
				    freelist);
}

static void gather_sync(struct ilab_iotlb_gather *gather, void *cookie)
{
	intel_iommu_tlb_sync(cookie, gather);
}

/* intel_iommu_unmap_pages -> intel_iommu_unmap: a leaf bigger than asked is unmapped whole
 * (and its size returned), as the core's API requires. Nothing mapped at iova: 0 (Linux
 * returns the size anyway; 0 lets the core see a double unmap). The range goes into the
 * gather (not for a flush queue: flush_iotlb_all will cover it). */
size_t intel_iommu_unmap_pages(void *priv, uint64_t iova, size_t pgsize, size_t pgcount,
			       struct ilab_iotlb_gather *gather)
{
	struct dmar_domain *d = priv;
	struct intel_freed_table *freed = NULL;
	uint64_t size = (uint64_t)pgsize * pgcount, leaf;
	unsigned level = 0;
	uint64_t *ptep;

	if (!pgsize || !pgcount || (iova & (VTD_PAGE_SIZE - 1)))
		return 0;
	plat_scope_enter(PLAT_SCOPE_INTEL_UNMAP_PAGES);
	ptep = pfn_to_dma_pte(d, iova >> VTD_PAGE_SHIFT, &level, false);
	if (!ptep || !dma_pte_present(pte_load(ptep))) {
		plat_scope_leave();
		return 0;
	}
	leaf = VTD_PAGE_SIZE << level_to_offset_bits(level);
	if (iova & (leaf - 1)) { /* inside a superpage: splitting is not supported (Linux) */
		plat_scope_leave();
		return 0;
	}
	if (size < leaf)
		size = leaf;
	domain_unmap(d, iova >> VTD_PAGE_SHIFT, (iova + size - 1) >> VTD_PAGE_SHIFT, &freed);
	publish_pending(d, freed);
	if (gather && !gather->queued)
		ilab_iotlb_gather_add_page(gather, iova, size, gather_sync, d);
	plat_scope_leave();
	return size;
}

ilab_pa_t intel_iommu_iova_to_phys(struct ilab_iommu_domain *domain, uint64_t iova)
{
	struct dmar_domain *d = to_dmar_domain(domain);
	unsigned level = 0;
	uint64_t *ptep, pte, off;

	if (!d || !d->pgd)
		return 0;
	ptep = pfn_to_dma_pte(d, iova >> VTD_PAGE_SHIFT, &level, false);
	if (!ptep)
		return 0;
	pte = pte_load(ptep);
	if (!dma_pte_present(pte))
		return 0;
	off = iova & ((VTD_PAGE_SIZE << level_to_offset_bits(level)) - 1);
	return dma_pte_addr(pte) + off;
}

/* prepare_domain_attach_device's knock-out: a unit with fewer levels walks from a lower table,
 * so drop top levels (the first entry's table becomes the pgd; nothing is mapped above it,
 * which max_addr guaranteed). */
void intel_domain_knock_out_levels(struct dmar_domain *d, int agaw)
{
	while (d->agaw > agaw) {
		uint64_t pte = pte_load(&d->pgd[0]);

		if (dma_pte_present(pte)) {
			ilab_pa_t old = d->pgd_pa;

			d->pgd_pa = dma_pte_addr(pte);
			d->pgd = phys_to_virt(d, d->pgd_pa);
			free_pgtable_page(d, old);
		}
		d->agaw--;
	}
}

/* domain_exit: every table page, including those still pending (no unit uses the domain any
 * more: detach invalidated it everywhere). */
void intel_domain_pgtable_free(struct dmar_domain *d)
{
	struct intel_freed_table *freed = NULL;

	if (!d->pgd)
		return;
	dma_pte_clear_level(d, agaw_to_level(d->agaw), d->pgd, 0, 0, ~0ull >> VTD_PAGE_SHIFT,
			    &freed);
	intel_free_table_list(d, freed);
	intel_free_table_list(d, intel_take_pending_tables(d, 0, UINT64_MAX, true));
	free_pgtable_page(d, d->pgd_pa);
	d->pgd = NULL;
}
