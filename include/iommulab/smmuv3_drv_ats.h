/* smmuv3_drv_ats.h — PCIe ATS in the SMMUv3 driver (Linux arm_smmu_enable_ats /
 * arm_smmu_atc_inv_domain): which masters may send ATS Translation Requests (STE.EATS), and the
 * ATC invalidations that follow every IOTLB invalidation of their domain.
 * It is not the endpoint's ATC (atc.h) nor the model's ATS responses (smmuv3.h, req.ats).
 */
#ifndef IOMMULAB_SMMUV3_DRV_ATS_H
#define IOMMULAB_SMMUV3_DRV_ATS_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/iommu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declare that a probed device (ilab_iommu_probe_device done) has a PCIe ATS capability behind
 * a root complex that supports ATS — what Linux learns from the PCI capability list and the
 * IORT "ATS attribute" — and enable or disable ATS for it. Takes effect at its next attach:
 * the STE of a paging domain then carries EATS = 0b01 (full ATS), and every invalidation of
 * that domain sends CMD_ATC_INV to the device after the TLB invalidation has completed, then a
 * CMD_SYNC (IHI 0070 §4.5.1 ordering). Returns 0; -ENODEV (not probed by this driver);
 * -EOPNOTSUPP (its SMMU has no IDR0.ATS); -ENOSPC (too many ATS devices: 1024). */
int ilab_smmu_drv_set_ats(struct ilab_dev *dev, bool on);
bool ilab_smmu_drv_ats_enabled(const struct ilab_dev *dev);

/* Counters: CMD_ATC_INV commands written (all SMMUs, since start). */
uint64_t ilab_smmu_drv_atc_inv_count(void);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_SMMUV3_DRV_ATS_H */
