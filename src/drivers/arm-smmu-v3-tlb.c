/* arm-smmu-v3-tlb.c — TLB invalidation for stage-1 domains: per granule (TLBI_NH_VA), by range
 * with SMMUv3.2 RIL (TG/SCALE/NUM/TTL), or the whole ASID (TLBI_NH_ASID); the io-pgtable flush
 * hooks and iotlb_sync. Not the queue (arm-smmu-v3-cmdq.c): commands go out through a batch.
 * Algorithm: Linux __arm_smmu_tlb_inv_range (reference/linux-dma-path.md §5.6). A domain
 * attached to several SMMUs is invalidated on each of them, with each one's ASID and CMD_SYNC.
 */
#include <errno.h>

#include "drivers/arm-smmu-v3.h"
#include "drivers/arm-smmu-v3-ats.h"

static unsigned ilog2_u64(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

/* Invalidate [iova, iova+size) of `asid`; `granule` is the leaf size (or the walk granule when
 * !leaf). One batch: up to 64 commands per issue, one CMD_SYNC at the end. */
static int tlb_inv_range(struct arm_smmu_device *smmu, uint16_t asid, uint64_t pgsize_bitmap,
			 uint64_t iova, size_t size, size_t granule, bool leaf)
{
	struct arm_smmu_cmdq_ent cmd = {
		.opcode = CMDQ_OP_TLBI_NH_VA,
		.tlbi = { .asid = asid, .leaf = leaf },
	};
	struct arm_smmu_cmdq_batch b;
	uint64_t end = iova + size, num_pages = 0, inv_range = granule;
	unsigned tg = 0;

	if (!size || !granule)
		return 0;
	if (smmu->ril) {
		/* The leaf page size of the domain: TG = (log2 - 10) / 2 → 4K 1, 16K 2, 64K 3. */
		tg = (unsigned)__builtin_ctzll(pgsize_bitmap);
		num_pages = size >> tg;
		cmd.tlbi.tg = (uint8_t)((tg - 10) / 2);
		/* TTL: the level of the leaf (4K pages: 4K → 3, 2M → 2, 1G → 1). Walk flushes
		 * pass a nominal granule, so they leave TTL 0 — and avoid the one encoding where
		 * SCALE and NUM would both be 0 with a single page left. */
		if (leaf)
			cmd.tlbi.ttl = (uint8_t)(4 - ((ilog2_u64(granule) - 3) / (tg - 3)));
		else if ((num_pages & CMDQ_TLBI_RANGE_NUM_MAX) == 1)
			num_pages++;
	}
	arm_smmu_cmdq_batch_init(smmu, &b);
	while (iova < end) {
		if (smmu->ril) {
			/* Each command takes up to 5 bits of the remaining page count: NUM+1 chunks
			 * of 2^SCALE pages from the lowest set bit. */
			unsigned scale = (unsigned)__builtin_ctzll(num_pages);
			uint64_t num = (num_pages >> scale) & CMDQ_TLBI_RANGE_NUM_MAX;

			cmd.tlbi.scale = (uint8_t)scale;
			cmd.tlbi.num = (uint8_t)(num - 1);
			inv_range = num << (scale + tg);
			num_pages -= num << scale;
		}
		cmd.tlbi.addr = iova;
		arm_smmu_cmdq_batch_add(smmu, &b, &cmd);
		iova += inv_range;
	}
	return arm_smmu_cmdq_batch_submit(smmu, &b);
}

/* ---- fan-out to every SMMU of a domain ------------------------------------------------------ */

void arm_smmu_domain_for_each_inst(struct arm_smmu_domain *d, arm_smmu_inst_fn fn, void *arg)
{
	unsigned n;

	/* The allocating SMMU's slot never changes: the common single-SMMU case reads nothing
	 * shared beyond the slot count. */
	fn(d->smmu, d->asid, arg);
	/* The PTE stores of the unmap must be visible before we look for SMMUs that may have
	 * walked them: an SMMU attached concurrently publishes its slot before its STE, so either
	 * we see the slot or its walks see the cleared PTEs (Linux orders its ATS-master count
	 * read after the TLBI the same way, with smp_mb()). */
	plat_mb();
	n = plat_load32(&d->nr_insts);
	for (unsigned i = 1; i < n && i < ARM_SMMU_DOMAIN_MAX_INSTS; i++) {
		struct arm_smmu_device *smmu =
			(struct arm_smmu_device *)(uintptr_t)plat_load64(&d->insts[i].smmu);

		if (smmu)
			fn(smmu, (uint16_t)plat_load32(&d->insts[i].asid), arg);
	}
}

struct inv_range_args {
	uint64_t pgsize_bitmap, iova;
	size_t size, granule;
	bool leaf;
	int err;
};

static void inv_range_one(struct arm_smmu_device *smmu, uint16_t asid, void *arg)
{
	struct inv_range_args *a = arg;
	/* Each SMMU gets its own batch and its own CMD_SYNC: a sync only covers its queue. */
	int err = tlb_inv_range(smmu, asid, a->pgsize_bitmap, a->iova, a->size, a->granule,
				a->leaf);

	if (err && !a->err)
		a->err = err;
}

int arm_smmu_tlb_inv_range_domain(struct arm_smmu_domain *d, uint64_t iova, size_t size,
				  size_t granule, bool leaf)
{
	struct inv_range_args a = { d->domain.pgsize_bitmap, iova, size, granule, leaf, 0 };

	plat_scope_enter(PLAT_SCOPE_TLB_INV_RANGE);
	arm_smmu_domain_for_each_inst(d, inv_range_one, &a);
	/* Then the ATCs of the domain's ATS masters, once the TLBs no longer hold the range
	 * (IHI 0070 §4.5.1): a Translation Request after this sees the new tables. */
	if (!a.err && size)
		a.err = arm_smmu_atc_inv_domain(d, iova, size);
	plat_scope_leave();
	return a.err;
}

static void inv_asid_one(struct arm_smmu_device *smmu, uint16_t asid, void *arg)
{
	int err = arm_smmu_tlb_inv_asid(smmu, asid);
	int *first = arg;

	if (err && !*first)
		*first = err;
}

int arm_smmu_tlb_inv_domain(struct arm_smmu_domain *d)
{
	int err = 0;

	arm_smmu_domain_for_each_inst(d, inv_asid_one, &err);
	if (!err)
		err = arm_smmu_atc_inv_domain(d, 0, 0); /* ATCs after the TLBs, everything */
	return err;
}

int arm_smmu_tlb_inv_asid(struct arm_smmu_device *smmu, uint16_t asid)
{
	struct arm_smmu_cmdq_ent cmd = { .opcode = CMDQ_OP_TLBI_NH_ASID, .tlbi = { .asid = asid } };

	return arm_smmu_cmdq_issue_cmd(smmu, &cmd, true);
}

/* ---- io-pgtable hooks (Linux arm_smmu_flush_ops) ------------------------------------------- */

static void tlb_flush_all(void *cookie)
{
	arm_smmu_tlb_inv_domain(cookie);
}

static void tlb_flush_walk(uint64_t iova, size_t size, size_t granule, void *cookie)
{
	arm_smmu_tlb_inv_range_domain(cookie, iova, size, granule, false);
}

static void gather_sync(struct ilab_iotlb_gather *gather, void *cookie)
{
	struct arm_smmu_domain *d = cookie;

	if (!ilab_iotlb_gather_empty(gather))
		arm_smmu_tlb_inv_range_domain(d, gather->start, gather->end - gather->start + 1,
					      gather->pgsize, true);
	ilab_iotlb_gather_init(gather);
}

static void tlb_add_page(struct ilab_iotlb_gather *gather, uint64_t iova, size_t granule,
			 void *cookie)
{
	/* A queued gather (lazy mode) is invalidated ASID-wide by the flush queue. */
	if (!gather || gather->queued)
		return;
	ilab_iotlb_gather_add_page(gather, iova, granule, gather_sync, cookie);
}

const struct ilab_iommu_flush_ops arm_smmu_flush_ops = {
	.tlb_flush_all = tlb_flush_all,
	.tlb_flush_walk = tlb_flush_walk,
	.tlb_add_page = tlb_add_page,
};

/* iotlb_sync: priv is the io-pgtable (ilab_io_pgtable_pt_ops), whose cookie is our domain. */
void arm_smmu_iotlb_sync(void *priv, struct ilab_iotlb_gather *gather)
{
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(priv);

	if (!gather)
		return;
	if (gather->queued) {
		ilab_iotlb_gather_init(gather);
		return;
	}
	plat_scope_enter(PLAT_SCOPE_IOTLB_SYNC);
	gather_sync(gather, cfg->cookie);
	plat_scope_leave();
}
