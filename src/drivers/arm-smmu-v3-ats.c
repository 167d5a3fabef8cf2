/* arm-smmu-v3-ats.c — PCIe ATS in the SMMUv3 driver: the set of ATS-enabled masters, STE.EATS
 * for them, and ATC invalidation of a domain's ATS masters after its TLB invalidation, as
 * Linux's arm_smmu_atc_inv_domain does (TLBI + CMD_SYNC first, then CMD_ATC_INV + CMD_SYNC,
 * the order IHI 0070 §4.5.1 requires). Not the command queue (arm-smmu-v3-cmdq.c) nor the
 * STE writer (arm-smmu-v3-ste.c).
 *
 * The set is a small table of masters under one lock: ATS devices are few (NICs, GPUs) and the
 * table is read by invalidations (which then talk to the SMMU anyway), when an STE is built
 * and by the ATS query, none of them a hot path.
 */
#include <errno.h>
#include <string.h>

#include "drivers/arm-smmu-v3-ats.h"
#include "iommulab/smmuv3_drv_ats.h"

#define CMDQ_OP_ATC_INV 0x40
#define ATC_INV_SIZE_ALL 52 /* Size 52: a 2^64-byte span (§4.5.1) */

/* This CPU's queue for ATC invalidations (a Tegra241 VCMDQ takes them). */
static struct arm_smmu_cmdq *atc_cmdq(struct arm_smmu_device *smmu)
{
	return arm_smmu_get_cmdq_for(smmu, CMDQ_OP_ATC_INV);
}
#define MAX_ATS_MASTERS 1024
#define CMDS_PER_ISSUE 64

/* Tracked words in static storage get a line each: otherwise the linker decides which of them
 * share a 64-byte line (gcc's LTO moved one), and simulated results would follow the link. */
static _Alignas(PLAT_CACHELINE) plat_spinlock ats_lock;
static struct arm_smmu_master *ats_masters[MAX_ATS_MASTERS];
static unsigned nr_ats_masters;    /* under ats_lock */
static _Alignas(PLAT_CACHELINE) plat_word32 ats_enabled; /* = nr_ats_masters, lock-free check */
static _Alignas(PLAT_CACHELINE) plat_word64 atc_inv_cmds;

static int find_locked(const struct arm_smmu_master *m)
{
	for (unsigned i = 0; i < nr_ats_masters; i++)
		if (ats_masters[i] == m)
			return (int)i;
	return -1;
}

static bool master_ats(const struct arm_smmu_master *m)
{
	bool on;

	if (!plat_load32(&ats_enabled))
		return false;
	plat_spin_lock(&ats_lock);
	on = find_locked(m) >= 0;
	plat_spin_unlock(&ats_lock);
	return on;
}

static struct arm_smmu_master *our_master(const struct ilab_dev *dev)
{
	if (!dev || !dev->iommu || !dev->iommu_priv || !dev->iommu->ops || !dev->iommu->ops->name ||
	    strcmp(dev->iommu->ops->name, "arm-smmu-v3"))
		return NULL;
	return dev->iommu_priv;
}

int ilab_smmu_drv_set_ats(struct ilab_dev *dev, bool on)
{
	struct arm_smmu_master *m = our_master(dev);
	int i, ret = 0;

	if (!m)
		return arm_smmu_set_error(-ENODEV, "smmuv3: ATS: device not probed by this driver");
	/* IDR0.ATS: the SMMU has an ATS interface (Linux ARM_SMMU_FEAT_ATS). */
	if (on && !(plat_mmio_read32(m->smmu->mmio, ARM_SMMU_IDR0) & IDR0_ATS))
		return arm_smmu_set_error(-EOPNOTSUPP, "smmuv3: ATS: %s has no IDR0.ATS",
					  m->smmu->iommu.name ? m->smmu->iommu.name : "SMMU");
	plat_spin_lock(&ats_lock);
	i = find_locked(m);
	if (on && i < 0) {
		if (nr_ats_masters == MAX_ATS_MASTERS)
			ret = arm_smmu_set_error(-ENOSPC, "smmuv3: ATS: more than %d devices",
						 MAX_ATS_MASTERS);
		else
			ats_masters[nr_ats_masters++] = m;
	} else if (!on && i >= 0) {
		ats_masters[i] = ats_masters[--nr_ats_masters];
	}
	plat_store32(&ats_enabled, nr_ats_masters);
	plat_spin_unlock(&ats_lock);
	return ret;
}

bool ilab_smmu_drv_ats_enabled(const struct ilab_dev *dev)
{
	const struct arm_smmu_master *m = our_master(dev);

	return m && master_ats(m);
}

uint64_t ilab_smmu_drv_atc_inv_count(void)
{
	return plat_load64(&atc_inv_cmds);
}

void arm_smmu_ats_ste(struct arm_smmu_master *m, uint64_t *ste)
{
	if (master_ats(m))
		ste[1] |= arm_field_prep(STRTAB_STE_1_EATS, 1); /* 0b01: full ATS */
}

void arm_smmu_ats_release(struct arm_smmu_master *m)
{
	int i;

	plat_spin_lock(&ats_lock);
	i = find_locked(m);
	if (i >= 0)
		ats_masters[i] = ats_masters[--nr_ats_masters];
	plat_store32(&ats_enabled, nr_ats_masters);
	plat_spin_unlock(&ats_lock);
}

/* The smallest naturally aligned span of 4 KiB pages that covers [iova, iova + size): the ATS
 * Invalidation Request carries one address and a power-of-two size (§4.5.1). size 0: all. */
static void atc_inv_cmd(uint64_t cmd[2], uint32_t sid, uint64_t iova, size_t size)
{
	unsigned log2_span = ATC_INV_SIZE_ALL;
	uint64_t addr = 0;

	if (size) {
		uint64_t first = iova >> 12, last = (iova + size - 1) >> 12;
		uint64_t diff = first ^ last;

		log2_span = diff ? 64u - (unsigned)__builtin_clzll(diff) : 0;
		if (log2_span >= ATC_INV_SIZE_ALL) {
			log2_span = ATC_INV_SIZE_ALL;
		} else {
			first &= ~((1ull << log2_span) - 1);
			addr = first << 12;
		}
	}
	cmd[0] = CMDQ_OP_ATC_INV | ((uint64_t)sid << 32); /* SSV 0: no PASIDs in this driver */
	cmd[1] = addr | log2_span;
}

int arm_smmu_atc_inv_domain(struct arm_smmu_domain *d, uint64_t iova, size_t size)
{
	struct arm_smmu_master *todo[MAX_ATS_MASTERS];
	unsigned n = 0;
	int err = 0;

	/* Like Linux's nr_ats_masters check: without ATS devices an invalidation pays one load
	 * of a line nobody writes (a cache hit after the first), never the lock. The unmap's PTE
	 * stores were ordered before this by the TLBI's CMD_SYNC. */
	if (!plat_load32(&ats_enabled))
		return 0;
	plat_spin_lock(&ats_lock);
	for (unsigned i = 0; i < nr_ats_masters; i++)
		if (ats_masters[i]->domain == d)
			todo[n++] = ats_masters[i];
	plat_spin_unlock(&ats_lock);

	/* One batch per SMMU (the first master not yet done picks it), ended by a CMD_SYNC
	 * that covers its ATC_INVs; at most CMDS_PER_ISSUE commands per issue. */
	for (unsigned i = 0; i < n; i++) {
		struct arm_smmu_device *smmu;
		uint64_t cmds[CMDS_PER_ISSUE * 2];
		unsigned k = 0;
		int e;

		if (!todo[i])
			continue;
		smmu = todo[i]->smmu;
		for (unsigned j = i; j < n; j++) {
			if (!todo[j] || todo[j]->smmu != smmu)
				continue;
			atc_inv_cmd(&cmds[2 * k], todo[j]->sid, iova, size);
			todo[j] = NULL;
			plat_fetch_add64(&atc_inv_cmds, 1);
			if (++k == CMDS_PER_ISSUE) {
				e = arm_smmu_cmdq_issue_cmdlist(smmu, atc_cmdq(smmu), cmds, k,
								false);
				if (e && !err)
					err = e;
				k = 0;
			}
		}
		e = arm_smmu_cmdq_issue_cmdlist(smmu, atc_cmdq(smmu), cmds, k, true);
		if (e && !err)
			err = e;
	}
	return err;
}
