/* arm-smmu-v3-ste.c — the stream table (linear or 2-level), STE and CD contents, and the entry
 * writer that updates a live STE or CD without ever showing the SMMU a torn entry.
 * It is not the command queue (arm-smmu-v3-cmdq.c) and not domain policy (arm-smmu-v3.c).
 *
 * The SMMU reads an STE/CD with only 64-bit single-copy atomicity, so an update of several
 * qwords must be ordered. Linux >= 6.9 (arm_smmu_write_entry, reference/linux-dma-path.md §5.7)
 * computes which bits the current configuration actually uses; bits it ignores can be written
 * freely. If only one qword then still differs in used bits, the update is "hitless": write the
 * ignored bits, sync, write that qword (one 64-bit store), sync, clean up, sync. Otherwise break
 * before make: qword 0 with V=0, sync, qwords 1..7, sync, qword 0, sync. A write that changes
 * nothing skips its sync. "sync" = CFGI_STE / CFGI_CD + CMD_SYNC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/arm-smmu-v3.h"
#include "iommulab/plat.h"

/* ---- used bits ----------------------------------------------------------------------------- */

void arm_smmu_get_ste_used(const uint64_t *ent, uint64_t *used)
{
	unsigned cfg = (unsigned)arm_field_get(STRTAB_STE_0_CFG, ent[0]);

	memset(used, 0, ARM_SMMU_ENTRY_QWORDS * sizeof(*used));
	used[0] = STRTAB_STE_0_V;
	if (!(ent[0] & STRTAB_STE_0_V))
		return;
	used[0] |= STRTAB_STE_0_CFG;
	if (cfg & 1) { /* stage 1 translates (CFG 5, 7) */
		used[0] |= STRTAB_STE_0_S1FMT | STRTAB_STE_0_S1CTXPTR_MASK | STRTAB_STE_0_S1CDMAX;
		used[1] |= STRTAB_STE_1_S1DSS | STRTAB_STE_1_S1CIR | STRTAB_STE_1_S1COR |
			   STRTAB_STE_1_S1CSH | STRTAB_STE_1_S1STALLD | STRTAB_STE_1_STRW |
			   STRTAB_STE_1_EATS;
		used[2] |= STRTAB_STE_2_S2VMID;
		/* IHI 0070 §13.5: SHCFG applies to S1DSS-bypassed traffic */
		if (arm_field_get(STRTAB_STE_1_S1DSS, ent[1]) == STRTAB_STE_1_S1DSS_BYPASS)
			used[1] |= STRTAB_STE_1_SHCFG;
	}
	if (cfg & 2) { /* stage 2 translates (CFG 6, 7) */
		used[1] |= STRTAB_STE_1_EATS | STRTAB_STE_1_SHCFG;
		used[2] |= STRTAB_STE_2_S2VMID | STRTAB_STE_2_VTCR | STRTAB_STE_2_S2AA64 |
			   STRTAB_STE_2_S2ENDI | STRTAB_STE_2_S2PTW | STRTAB_STE_2_S2S |
			   STRTAB_STE_2_S2R;
		used[3] |= STRTAB_STE_3_S2TTB_MASK;
	}
	if (cfg == STRTAB_STE_0_CFG_BYPASS)
		used[1] |= STRTAB_STE_1_SHCFG;
}

void arm_smmu_get_cd_used(const uint64_t *ent, uint64_t *used)
{
	memset(used, 0, ARM_SMMU_ENTRY_QWORDS * sizeof(*used));
	used[0] = CTXDESC_CD_0_V;
	if (!(ent[0] & CTXDESC_CD_0_V))
		return;
	memset(used, 0xff, ARM_SMMU_ENTRY_QWORDS * sizeof(*used));
	/* EPD0 makes the TTB0 walk fields IGNORED */
	if (ent[0] & CTXDESC_CD_0_TCR_EPD0) {
		used[0] &= ~(CTXDESC_CD_0_TCR_T0SZ | CTXDESC_CD_0_TCR_TG0 | CTXDESC_CD_0_TCR_IRGN0 |
			     CTXDESC_CD_0_TCR_ORGN0 | CTXDESC_CD_0_TCR_SH0);
		used[1] &= ~CTXDESC_CD_1_TTB0_MASK;
	}
}

/* ---- the writer ---------------------------------------------------------------------------- */

/* Build in unused_update the entry with every bit the current configuration ignores already set
 * to the target, and return a bitmask of the qwords whose used bits still need to change. */
static uint8_t entry_qword_diff(struct arm_smmu_entry_writer *w, const uint64_t *entry,
				const uint64_t *target, uint64_t *unused_update)
{
	uint64_t cur_used[ARM_SMMU_ENTRY_QWORDS], target_used[ARM_SMMU_ENTRY_QWORDS];
	uint8_t diff = 0;

	w->ops->get_used(entry, cur_used);
	w->ops->get_used(target, target_used);
	for (unsigned i = 0; i < ARM_SMMU_ENTRY_QWORDS; i++) {
		/* The target must not set bits its own configuration ignores. */
		unused_update[i] = (entry[i] & cur_used[i]) | (target[i] & ~cur_used[i]);
		if ((unused_update[i] & target_used[i]) != target[i])
			diff |= (uint8_t)(1u << i);
	}
	return diff;
}

/* Store qwords [start, start+len) that differ, each as one 64-bit store; sync if any did. */
static bool entry_set(struct arm_smmu_entry_writer *w, uint64_t *entry, const uint64_t *target,
		      unsigned start, unsigned len)
{
	bool changed = false;

	for (unsigned i = start; len; len--, i++) {
		if (entry[i] != target[i]) {
			plat_store64((plat_word64 *)&entry[i], target[i]);
			changed = true;
		}
	}
	if (changed)
		w->ops->sync(w);
	return changed;
}

void arm_smmu_write_entry(struct arm_smmu_entry_writer *w, uint64_t *entry, const uint64_t *target)
{
	uint64_t unused_update[ARM_SMMU_ENTRY_QWORDS];
	uint8_t diff = entry_qword_diff(w, entry, target, unused_update);

	if (__builtin_popcount(diff) == 1) {
		/* Hitless: only one qword's used bits change; that single store is the switch. */
		unsigned critical = (unsigned)__builtin_ctz(diff);

		unused_update[critical] = entry[critical];
		entry_set(w, entry, unused_update, 0, ARM_SMMU_ENTRY_QWORDS);
		entry_set(w, entry, target, critical, 1);
		entry_set(w, entry, target, 0, ARM_SMMU_ENTRY_QWORDS);
	} else if (diff) {
		/* Break before make: invalid, then the body, then qword 0 (with V). */
		unused_update[0] = 0;
		entry_set(w, entry, unused_update, 0, 1);
		entry_set(w, entry, target, 1, ARM_SMMU_ENTRY_QWORDS - 1);
		entry_set(w, entry, target, 0, 1);
	} else {
		/* Only ignored bits change (e.g. cleaning up): no visible transition. */
		entry_set(w, entry, target, 0, ARM_SMMU_ENTRY_QWORDS);
	}
}

/* ---- entry contents (Linux arm_smmu_make_*_ste / arm_smmu_make_s1_cd) ------------------- */

void arm_smmu_make_abort_ste(uint64_t *ste)
{
	memset(ste, 0, STRTAB_STE_SIZE);
	ste[0] = STRTAB_STE_0_V | arm_field_prep(STRTAB_STE_0_CFG, STRTAB_STE_0_CFG_ABORT);
}

void arm_smmu_make_bypass_ste(uint64_t *ste)
{
	memset(ste, 0, STRTAB_STE_SIZE);
	ste[0] = STRTAB_STE_0_V | arm_field_prep(STRTAB_STE_0_CFG, STRTAB_STE_0_CFG_BYPASS);
	ste[1] = arm_field_prep(STRTAB_STE_1_SHCFG, STRTAB_STE_1_SHCFG_INCOMING);
}

/* Stage 1 through a CD table of one CD (S1CDMAX 0: no SubstreamIDs), NS-EL1 StreamWorld. */
void arm_smmu_make_cdtable_ste(uint64_t *ste, ilab_pa_t cd_pa)
{
	memset(ste, 0, STRTAB_STE_SIZE);
	ste[0] = STRTAB_STE_0_V | arm_field_prep(STRTAB_STE_0_CFG, STRTAB_STE_0_CFG_S1_TRANS) |
		 arm_field_prep(STRTAB_STE_0_S1FMT, 0) | (cd_pa & STRTAB_STE_0_S1CTXPTR_MASK) |
		 arm_field_prep(STRTAB_STE_0_S1CDMAX, 0);
	ste[1] = arm_field_prep(STRTAB_STE_1_S1DSS, STRTAB_STE_1_S1DSS_SSID0) |
		 arm_field_prep(STRTAB_STE_1_S1CIR, STRTAB_STE_1_S1C_CACHE_WBRA) |
		 arm_field_prep(STRTAB_STE_1_S1COR, STRTAB_STE_1_S1C_CACHE_WBRA) |
		 arm_field_prep(STRTAB_STE_1_S1CSH, ARM_SMMU_SH_ISH) |
		 arm_field_prep(STRTAB_STE_1_STRW, 0);
}

void arm_smmu_make_s1_cd(uint64_t *cd, const struct arm_smmu_domain *d, uint16_t asid)
{
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(d->pgtbl);

	memset(cd, 0, CTXDESC_CD_DWORDS * 8);
	cd[0] = arm_field_prep(CTXDESC_CD_0_TCR_T0SZ, cfg->arm_lpae_s1_cfg.tcr.tsz) |
		arm_field_prep(CTXDESC_CD_0_TCR_TG0, cfg->arm_lpae_s1_cfg.tcr.tg) |
		arm_field_prep(CTXDESC_CD_0_TCR_IRGN0, cfg->arm_lpae_s1_cfg.tcr.irgn) |
		arm_field_prep(CTXDESC_CD_0_TCR_ORGN0, cfg->arm_lpae_s1_cfg.tcr.orgn) |
		arm_field_prep(CTXDESC_CD_0_TCR_SH0, cfg->arm_lpae_s1_cfg.tcr.sh) |
		CTXDESC_CD_0_TCR_EPD1 | CTXDESC_CD_0_V |
		arm_field_prep(CTXDESC_CD_0_TCR_IPS, cfg->arm_lpae_s1_cfg.tcr.ips) |
		CTXDESC_CD_0_AA64 | CTXDESC_CD_0_R | CTXDESC_CD_0_A | CTXDESC_CD_0_ASET |
		arm_field_prep(CTXDESC_CD_0_ASID, asid);
	cd[1] = cfg->arm_lpae_s1_cfg.ttbr & CTXDESC_CD_1_TTB0_MASK;
	cd[3] = cfg->arm_lpae_s1_cfg.mair;
}

/* ---- writers bound to a master ---------------------------------------------------------- */

static void ste_writer_sync(struct arm_smmu_entry_writer *w)
{
	struct arm_smmu_master *m = w->master;
	struct arm_smmu_device *smmu = m->smmu;
	struct arm_smmu_cmdq_batch b;
	struct arm_smmu_cmdq_ent cmd = {
		.opcode = CMDQ_OP_CFGI_STE,
		.cfgi = { .sid = m->sid, .leaf = true },
	};

	arm_smmu_cmdq_batch_init(smmu, &b);
	arm_smmu_cmdq_batch_add(smmu, &b, &cmd);
	arm_smmu_cmdq_batch_submit(smmu, &b);
	if (smmu->opts.entry_hook)
		smmu->opts.entry_hook(smmu->opts.entry_hook_ctx, true, m->sid, m->ste);
}

static void cd_writer_sync(struct arm_smmu_entry_writer *w)
{
	struct arm_smmu_master *m = w->master;
	struct arm_smmu_device *smmu = m->smmu;
	struct arm_smmu_cmdq_batch b;
	struct arm_smmu_cmdq_ent cmd = {
		.opcode = CMDQ_OP_CFGI_CD,
		.cfgi = { .sid = m->sid, .ssid = 0, .leaf = true },
	};

	arm_smmu_cmdq_batch_init(smmu, &b);
	arm_smmu_cmdq_batch_add(smmu, &b, &cmd);
	arm_smmu_cmdq_batch_submit(smmu, &b);
	if (smmu->opts.entry_hook)
		smmu->opts.entry_hook(smmu->opts.entry_hook_ctx, false, m->sid, m->cd);
}

static const struct arm_smmu_entry_writer_ops ste_writer_ops = {
	.get_used = arm_smmu_get_ste_used,
	.sync = ste_writer_sync,
};
static const struct arm_smmu_entry_writer_ops cd_writer_ops = {
	.get_used = arm_smmu_get_cd_used,
	.sync = cd_writer_sync,
};

void arm_smmu_write_ste(struct arm_smmu_master *m, const uint64_t *target)
{
	struct arm_smmu_entry_writer w = { .ops = &ste_writer_ops, .master = m };
	struct arm_smmu_device *smmu = m->smmu;

	arm_smmu_write_entry(&w, m->ste, target);
	/* Linux: prefetch the new configuration (a hint; no sync). */
	if (!smmu->opts.skip_prefetch) {
		struct arm_smmu_cmdq_ent cmd = { .opcode = CMDQ_OP_PREFETCH_CFG,
						 .prefetch = { .sid = m->sid } };

		arm_smmu_cmdq_issue_cmd(smmu, &cmd, false);
	}
}

void arm_smmu_write_cd(struct arm_smmu_master *m, const uint64_t *target)
{
	struct arm_smmu_entry_writer w = { .ops = &cd_writer_ops, .master = m };

	arm_smmu_write_entry(&w, m->cd, target);
}

/* ---- the stream table (Linux arm_smmu_init_strtab_{linear,2lvl}) ---------------------------- */

static void init_abort_stes(uint64_t *stes, unsigned n)
{
	/* Linux with disable_bypass (the default): unattached streams abort. */
	for (unsigned i = 0; i < n; i++)
		arm_smmu_make_abort_ste(&stes[i * STRTAB_STE_DWORDS]);
}

int arm_smmu_init_strtab(struct arm_smmu_device *smmu)
{
	size_t bytes;
	int err;

	if (smmu->two_lvl_strtab) {
		/* One L1 descriptor per 256 StreamIDs, at most 2^17 of them; L2 tables come
		 * lazily when a device is probed. */
		unsigned size = smmu->sid_bits - STRTAB_SPLIT;

		if (size > 17)
			size = 17;
		smmu->num_l1_ents = 1u << size;
		bytes = (size_t)smmu->num_l1_ents * 8;
		smmu->strtab_base_cfg =
			arm_field_prep(STRTAB_BASE_CFG_FMT, STRTAB_BASE_CFG_FMT_2LVL) |
			arm_field_prep(STRTAB_BASE_CFG_LOG2SIZE, size + STRTAB_SPLIT) |
			arm_field_prep(STRTAB_BASE_CFG_SPLIT, STRTAB_SPLIT);
		smmu->l1 = plat_zalloc_array(smmu->num_l1_ents, sizeof(*smmu->l1));
		if (!smmu->l1)
			return arm_smmu_set_error(-ENOMEM, "smmuv3: no memory for L1 shadow");
	} else {
		bytes = (size_t)STRTAB_STE_SIZE << smmu->sid_bits;
		smmu->strtab_base_cfg =
			arm_field_prep(STRTAB_BASE_CFG_FMT, STRTAB_BASE_CFG_FMT_LINEAR) |
			arm_field_prep(STRTAB_BASE_CFG_LOG2SIZE, smmu->sid_bits);
	}
	err = ilab_mem_alloc_coherent(smmu->mem, smmu->node, bytes, &smmu->strtab_pa, NULL);
	if (err) {
		free(smmu->l1);
		smmu->l1 = NULL;
		return arm_smmu_set_error(err, "smmuv3: no coherent memory for the stream table");
	}
	smmu->strtab_bytes = bytes;
	smmu->strtab = ilab_mem_va(smmu->mem, smmu->strtab_pa, bytes);
	memset(smmu->strtab, 0, bytes);
	if (!smmu->two_lvl_strtab)
		init_abort_stes(smmu->strtab, 1u << smmu->sid_bits);
	smmu->strtab_base = STRTAB_BASE_RA | (smmu->strtab_pa & STRTAB_BASE_ADDR_MASK);
	plat_spin_init(&smmu->strtab_lock, "smmu.strtab_lock");
	return 0;
}

void arm_smmu_free_strtab(struct arm_smmu_device *smmu)
{
	const size_t l2_bytes = (size_t)STRTAB_STE_SIZE << STRTAB_SPLIT;

	for (unsigned i = 0; smmu->l1 && i < smmu->num_l1_ents; i++)
		if (smmu->l1[i].l2_pa)
			ilab_mem_free_coherent(smmu->mem, smmu->l1[i].l2_pa, l2_bytes);
	free(smmu->l1);
	smmu->l1 = NULL;
	if (smmu->strtab)
		ilab_mem_free_coherent(smmu->mem, smmu->strtab_pa, smmu->strtab_bytes);
	smmu->strtab = NULL;
}

uint64_t *arm_smmu_get_step(struct arm_smmu_device *smmu, uint32_t sid, bool alloc)
{
	const size_t l2_bytes = (size_t)STRTAB_STE_SIZE << STRTAB_SPLIT;
	struct arm_smmu_strtab_l1 *l1;
	uint64_t *l2 = NULL;
	ilab_pa_t pa;

	if (smmu->sid_bits < 32 && (sid >> smmu->sid_bits))
		return NULL;
	if (!smmu->two_lvl_strtab)
		return &smmu->strtab[(size_t)sid * STRTAB_STE_DWORDS];
	if ((sid >> STRTAB_SPLIT) >= smmu->num_l1_ents)
		return NULL;
	l1 = &smmu->l1[sid >> STRTAB_SPLIT];
	plat_spin_lock(&smmu->strtab_lock);
	if (!l1->l2 && alloc &&
	    !ilab_mem_alloc_coherent(smmu->mem, smmu->node, l2_bytes, &pa, NULL)) {
		l2 = ilab_mem_va(smmu->mem, pa, l2_bytes);
		init_abort_stes(l2, 1u << STRTAB_SPLIT);
		l1->l2_pa = pa;
		l1->l2 = l2;
		/* The L1 descriptor was invalid (SPAN 0: C_BAD_STREAMID, never cached), so one
		 * 64-bit store makes the new table reachable; its STEs are written first. */
		plat_mb();
		plat_store64((plat_word64 *)&smmu->strtab[sid >> STRTAB_SPLIT],
			     arm_field_prep(STRTAB_L1_DESC_SPAN, STRTAB_SPLIT + 1) |
				     (pa & STRTAB_L1_DESC_L2PTR_MASK));
	}
	l2 = l1->l2;
	plat_spin_unlock(&smmu->strtab_lock);
	return l2 ? &l2[(size_t)(sid & ((1u << STRTAB_SPLIT) - 1)) * STRTAB_STE_DWORDS] : NULL;
}
