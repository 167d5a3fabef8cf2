/* intel-iommu-cache.c — what the Intel driver invalidates and how (Linux 6.3
 * drivers/iommu/intel/iommu.c iommu_flush_iotlb_psi, iommu_flush_dev_iotlb,
 * intel_flush_iotlb_all, intel_iommu_tlb_sync; dmar.c qi_flush_context, qi_flush_iotlb,
 * qi_flush_dev_iotlb; since 6.10 the same rules live in cache.c). A page-selective IOTLB
 * invalidation covers the range rounded up to a naturally aligned power of two (AM); it
 * becomes domain-selective when the unit has no PSI or the mask exceeds CAP.MAMV. Every flush
 * goes to each unit of the domain's iommu_array with that unit's domain id. It is not the
 * queue (intel-iommu-dmar.c).
 */
#include <stdlib.h>

#include "drivers/intel-iommu.h"

/* qi_flush_context: a context-cache invalidation descriptor, waited for. */
void qi_flush_context(struct intel_iommu *iommu, uint16_t did, uint16_t sid, uint8_t fm,
		      uint64_t gran)
{
	struct qi_desc desc = {
		.qw0 = QI_CC_FM(fm) | QI_CC_SID(sid) | QI_CC_DID(did) | QI_CC_GRAN(gran) |
		       QI_CC_TYPE,
		.qw1 = 0,
	};

	qi_submit_sync(iommu, &desc, 1);
}

/* qi_flush_iotlb: DR/DW as the unit drains, granularity, and for a PSI the address, IH and
 * AM. Linux before 6b38a108eeb3 built the descriptor with ih = 0 (opts.drop_ih). */
void qi_flush_iotlb(struct intel_iommu *iommu, uint16_t did, uint64_t addr, unsigned size_order,
		    uint64_t gran, bool ih)
{
	struct qi_desc desc;

	if (iommu->opts.drop_ih)
		ih = false;
	desc.qw0 = QI_IOTLB_DID(did) | QI_IOTLB_DR(cap_read_drain(iommu->cap)) |
		   QI_IOTLB_DW(cap_write_drain(iommu->cap)) | QI_IOTLB_GRAN(gran) | QI_IOTLB_TYPE;
	desc.qw1 = gran == QI_GRAN_PAGE ? QI_IOTLB_ADDR(addr) | QI_IOTLB_IH(ih) |
					  QI_IOTLB_AM(size_order)
					: 0;
	plat_scope_enter(PLAT_SCOPE_QI_FLUSH_IOTLB);
	if (gran == QI_GRAN_PAGE) {
		INTEL_STAT_ADD(iommu, psi, 1);
		if (ih)
			INTEL_STAT_ADD(iommu, psi_ih, 1);
	} else if (gran == QI_GRAN_DOMAIN) {
		INTEL_STAT_ADD(iommu, dsi, 1);
	} else {
		INTEL_STAT_ADD(iommu, global, 1);
	}
	qi_submit_sync(iommu, &desc, 1);
	plat_scope_leave();
}

/* qi_flush_dev_iotlb: a device-TLB invalidation for [addr, addr + 2^(12 + mask)): with a mask
 * the size is encoded in the low address bits (S = 1, VT-d §6.5.2.5); qdep >= 32 is sent as
 * 0 (Linux QI_DEV_IOTLB_MAX_INVS). */
static void qi_flush_dev_iotlb(struct intel_iommu *iommu, uint16_t sid, uint16_t pfsid,
			       unsigned qdep, uint64_t addr, unsigned mask)
{
	struct qi_desc desc;

	plat_scope_enter(PLAT_SCOPE_QI_FLUSH_DEV_IOTLB);
	if (mask) {
		addr |= (1ull << (VTD_PAGE_SHIFT + mask - 1)) - 1;
		desc.qw1 = QI_DEV_IOTLB_ADDR(addr) | QI_DEV_IOTLB_SIZE;
	} else {
		desc.qw1 = QI_DEV_IOTLB_ADDR(addr);
	}
	if (qdep >= QI_DEV_IOTLB_MAX_INVS)
		qdep = 0;
	desc.qw0 = QI_DEV_IOTLB_SID(sid) | QI_DEV_IOTLB_QDEP(qdep) | QI_DIOTLB_TYPE |
		   QI_DEV_IOTLB_PFSID(pfsid);
	INTEL_STAT_ADD(iommu, devtlb, 1);
	qi_submit_sync(iommu, &desc, 1);
	plat_scope_leave();
}

/* __iommu_flush_dev_iotlb: one ATS-enabled device, through its own unit. */
void intel_flush_dev_iotlb_one(struct device_domain_info *info, uint64_t addr, unsigned mask)
{
	if (!info || !info->ats_enabled)
		return;
	qi_flush_dev_iotlb(info->iommu, info->sid, info->pfsid, info->ats_qdep, addr, mask);
}

/* iommu_flush_dev_iotlb: every ATS device of the domain, under domain->lock (Linux 6.3). It
 * is called once per unit of the domain, so a domain on K units sends K device-TLB
 * invalidations per ATS device and flush (replaced by per-(unit, device) cache tags in 6.10). */
void iommu_flush_dev_iotlb(struct dmar_domain *domain, uint64_t addr, unsigned mask)
{
	if (!plat_load32(&domain->has_iotlb_device))
		return;
	plat_spin_lock(&domain->lock);
	for (unsigned i = 0; i < domain->nr_devices; i++)
		intel_flush_dev_iotlb_one(domain->devices[i], addr, mask);
	plat_spin_unlock(&domain->lock);
}

static uint16_t domain_id_iommu(struct dmar_domain *domain, struct intel_iommu *iommu)
{
	return (uint16_t)plat_load32(&domain->iommu_array[iommu->seq_id].did);
}

static unsigned ilog2_u64(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

static uint64_t roundup_pow_of_two(uint64_t v)
{
	return v <= 1 ? 1 : 1ull << (ilog2_u64(v - 1) + 1);
}

/* iommu_flush_iotlb_psi: `pages` pages from `pfn`. mask = log2 of the page count rounded up
 * to a power of two; if pfn is not aligned to it, widen the mask until one naturally aligned
 * block holds [pfn, pfn + pages): the lowest bit above the mask where pfn and the last pfn
 * agree (shared_bits), i.e. the block that a carry out of the mask still stays inside. No
 * PSI, or a mask above CAP.MAMV: one domain-selective invalidation instead. The device-TLBs
 * follow (not on map: only caching-mode units need that, and then not the device-TLB). */
void iommu_flush_iotlb_psi(struct intel_iommu *iommu, struct dmar_domain *domain,
			   uint64_t pfn, uint64_t pages, bool ih, bool map)
{
	uint64_t aligned_pages = roundup_pow_of_two(pages ? pages : 1);
	unsigned mask = ilog2_u64(aligned_pages);
	uint64_t addr = pfn << VTD_PAGE_SHIFT;
	uint16_t did = domain_id_iommu(domain, iommu);
	uint64_t bitmask = aligned_pages - 1;

	plat_scope_enter(PLAT_SCOPE_INTEL_FLUSH_PSI);
	if (bitmask & pfn) {
		uint64_t end_pfn = pfn + pages - 1;
		uint64_t shared_bits = ~(pfn ^ end_pfn) & ~bitmask;

		mask = shared_bits ? (unsigned)__builtin_ctzll(shared_bits) : 64;
	}
	if (!cap_pgsel_inv(iommu->cap) || mask > cap_max_amask_val(iommu->cap))
		qi_flush_iotlb(iommu, did, 0, 0, QI_GRAN_DOMAIN, false);
	else
		qi_flush_iotlb(iommu, did, addr, mask, QI_GRAN_PAGE, ih);
	if (!cap_caching_mode(iommu->cap) || !map)
		iommu_flush_dev_iotlb(domain, addr, mask);
	plat_scope_leave();
}

/* Each unit of the domain, as intel_iommu_tlb_sync walks iommu_array. */
void intel_domain_flush_range_all_units(struct dmar_domain *domain, uint64_t pfn,
					uint64_t pages, bool ih)
{
	for (unsigned i = 0; i < INTEL_MAX_UNITS; i++) {
		struct intel_iommu *iommu =
			(struct intel_iommu *)(uintptr_t)plat_load64(&domain->iommu_array[i].iommu);

		if (iommu)
			iommu_flush_iotlb_psi(iommu, domain, pfn, pages, ih, false);
	}
}

/* intel_iommu_tlb_sync (the core's iotlb_sync): the gathered range on every unit, IH = 1 when
 * the unmap changed leaves only (no table page was unlinked in the range), then the table
 * pages unlinked in the range go back to the allocator (Linux: put_pages_list(freelist)). A
 * queued gather (flush queue) has nothing recorded: flush_iotlb_all does the work later. */
void intel_iommu_tlb_sync(void *priv, struct ilab_iotlb_gather *gather)
{
	struct dmar_domain *domain = priv;
	struct intel_freed_table *freed;
	uint64_t start_pfn, nrpages;

	if (!gather)
		return;
	if (gather->queued || ilab_iotlb_gather_empty(gather)) {
		bool queued = gather->queued;

		ilab_iotlb_gather_init(gather);
		gather->queued = queued;
		return;
	}
	plat_scope_enter(PLAT_SCOPE_IOTLB_SYNC);
	start_pfn = gather->start >> VTD_PAGE_SHIFT;
	nrpages = (gather->end >> VTD_PAGE_SHIFT) - start_pfn + 1;
	freed = intel_take_pending_tables(domain, gather->start, gather->end, false);
	intel_domain_flush_range_all_units(domain, start_pfn, nrpages, freed == NULL);
	intel_free_table_list(domain, freed);
	ilab_iotlb_gather_init(gather);
	plat_scope_leave();
}

/* intel_flush_iotlb_all (the flush queue's and detach's flush): a domain-selective
 * invalidation on every unit, each followed by the device-TLBs (whole address space). Table
 * pages unlinked before it started are free after it. */
void intel_iommu_flush_iotlb_all(struct ilab_iommu_domain *d)
{
	struct dmar_domain *domain = to_dmar_domain(d);
	struct intel_freed_table *freed;

	if (!domain)
		return;
	plat_scope_enter(PLAT_SCOPE_INTEL_FLUSH_ALL);
	freed = intel_take_pending_tables(domain, 0, UINT64_MAX, true);
	for (unsigned i = 0; i < INTEL_MAX_UNITS; i++) {
		struct intel_iommu *iommu =
			(struct intel_iommu *)(uintptr_t)plat_load64(&domain->iommu_array[i].iommu);

		if (!iommu)
			continue;
		qi_flush_iotlb(iommu, domain_id_iommu(domain, iommu), 0, 0, QI_GRAN_DOMAIN, false);
		if (!cap_caching_mode(iommu->cap))
			iommu_flush_dev_iotlb(domain, 0, MAX_AGAW_PFN_WIDTH);
	}
	intel_free_table_list(domain, freed);
	plat_scope_leave();
}
