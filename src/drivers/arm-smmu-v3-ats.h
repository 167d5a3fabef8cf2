/* arm-smmu-v3-ats.h — the driver's ATS hooks, called from the attach path and the TLB
 * invalidation path. Not public API (include/iommulab/smmuv3_drv_ats.h).
 */
#ifndef ILAB_DRIVERS_ARM_SMMU_V3_ATS_H
#define ILAB_DRIVERS_ARM_SMMU_V3_ATS_H

#include "drivers/arm-smmu-v3.h"

/* Set STE.EATS in a translating STE being built for m when ATS is enabled for it. */
void arm_smmu_ats_ste(struct arm_smmu_master *m, uint64_t *ste);
/* The master is going away: forget it. */
void arm_smmu_ats_release(struct arm_smmu_master *m);
/* After the TLB invalidation of [iova, iova + size) (size 0: everything) has completed:
 * CMD_ATC_INV to every ATS-enabled master of d, then CMD_SYNC, per SMMU. Returns 0 or the
 * first error. */
int arm_smmu_atc_inv_domain(struct arm_smmu_domain *d, uint64_t iova, size_t size);

#endif
