/* arm-smmu-v3-tlb.c — TLB invalidation for stage-1 domains: per granule (TLBI_NH_VA), by range
 * with SMMUv3.2 RIL (TG/SCALE/NUM/TTL), or the whole ASID (TLBI_NH_ASID); the io-pgtable flush
 * hooks and iotlb_sync. Not the queue (arm-smmu-v3-cmdq.c): commands go out through a batch.
 * Algorithm: Linux __arm_smmu_tlb_inv_range (reference/linux-dma-path.md §5.6).
 */
#include <errno.h>

#include "drivers/arm-smmu-v3.h"

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

int arm_smmu_tlb_inv_range_domain(struct arm_smmu_domain *d, uint64_t iova, size_t size,
				  size_t granule, bool leaf)
{
	return tlb_inv_range(d->smmu, d->asid, d->domain.pgsize_bitmap, iova, size, granule, leaf);
}

int arm_smmu_tlb_inv_asid(struct arm_smmu_device *smmu, uint16_t asid)
{
	struct arm_smmu_cmdq_ent cmd = { .opcode = CMDQ_OP_TLBI_NH_ASID, .tlbi = { .asid = asid } };

	return arm_smmu_cmdq_issue_cmd(smmu, &cmd, true);
}

/* ---- io-pgtable hooks (Linux arm_smmu_flush_ops) ------------------------------------------- */

static void tlb_flush_all(void *cookie)
{
	struct arm_smmu_domain *d = cookie;

	arm_smmu_tlb_inv_asid(d->smmu, d->asid);
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
	gather_sync(gather, cfg->cookie);
}
