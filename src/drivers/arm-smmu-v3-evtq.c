/* arm-smmu-v3-evtq.c — the event queue, software side: drain the records the SMMU wrote and
 * acknowledge an overflow (Linux arm_smmu_evtq_thread, without the IRQ: callers poll).
 * It does not interpret events beyond copying them; fault reporting is the caller's.
 */
#include "drivers/arm-smmu-v3.h"

unsigned ilab_smmu_drv_read_events(struct ilab_iommu *iommu, uint64_t (*recs)[4], unsigned max,
				   bool *lost)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);
	struct arm_smmu_queue *q;
	uint32_t prod, cons, mask;
	unsigned n = 0;

	if (lost)
		*lost = false;
	if (!smmu)
		return 0;
	q = &smmu->evtq;
	mask = (2u << q->max_n_shift) - 1; /* index and wrap */
	prod = plat_mmio_read32(smmu->mmio, q->prod_reg);
	cons = plat_mmio_read32(smmu->mmio, q->cons_reg);
	if (lost)
		*lost = ((prod ^ cons) & Q_OVERFLOW_FLAG) != 0;
	while ((cons & mask) != (prod & mask) && n < max) {
		const uint64_t *ent = q->base + (size_t)(cons & (mask >> 1)) * q->ent_dwords;

		if (recs)
			for (unsigned i = 0; i < 4; i++)
				recs[n][i] = ent[i];
		n++;
		cons = (cons & ~mask) | ((cons + 1) & mask);
	}
	/* Consuming also acknowledges an overflow: copy PROD's flag into CONS. */
	cons = (cons & mask) | (prod & Q_OVERFLOW_FLAG);
	plat_mmio_write32(smmu->mmio, q->cons_reg, cons);
	return n;
}
