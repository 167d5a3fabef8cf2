/* arm-smmu-v3.c — the SMMUv3 driver's device: probe from the ID registers, reset and enable,
 * remove, and the IOMMU-core interface (domains, devices, attach). Linux
 * drivers/iommu/arm/arm-smmu-v3/arm-smmu-v3.c: arm_smmu_device_hw_probe, arm_smmu_device_reset,
 * arm_smmu_domain_alloc, arm_smmu_attach_dev (reference/linux-dma-path.md §5).
 * It is not the command queue (arm-smmu-v3-cmdq.c), the entry writer (arm-smmu-v3-ste.c), the
 * invalidation policy (arm-smmu-v3-tlb.c) or the event queue (arm-smmu-v3-evtq.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/arm-smmu-v3.h"
#include "drivers/arm-smmu-v3-ats.h"
#include "iommulab/plat.h"

static _Thread_local char err_msg[160];

int arm_smmu_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
	va_end(ap);
	return err;
}

const char *ilab_smmu_drv_strerror(void)
{
	return err_msg[0] ? err_msg : "no error";
}

static const struct ilab_iommu_ops arm_smmu_ops;

/* ---- ID registers (Linux arm_smmu_device_hw_probe) ----------------------------------------- */

static int hw_probe(struct arm_smmu_device *smmu)
{
	static const unsigned oas_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 0 };
	uint32_t idr0 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR0);
	uint32_t idr1 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR1);
	uint32_t idr3 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR3);
	uint32_t idr5 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR5);
	unsigned ttf = (unsigned)arm_field_get(IDR0_TTF, idr0), cmdqs, evtqs;

	if (!(idr0 & IDR0_S1P))
		return arm_smmu_set_error(-ENODEV, "smmuv3: no stage-1 translation (IDR0.S1P 0)");
	if (ttf != IDR0_TTF_AARCH64 && ttf != IDR0_TTF_AARCH32_64)
		return arm_smmu_set_error(-ENODEV, "smmuv3: no AArch64 table format (IDR0.TTF %u)",
					  ttf);
	if (arm_field_get(IDR0_TTENDIAN, idr0) == 3)
		return arm_smmu_set_error(-ENODEV, "smmuv3: big-endian-only table walks");
	smmu->two_lvl_strtab = arm_field_get(IDR0_ST_LVL, idr0) == IDR0_ST_LVL_2LVL;
	smmu->hyp = idr0 & IDR0_HYP;
	smmu->msi = idr0 & IDR0_MSI;
	smmu->sev = idr0 & IDR0_SEV;
	smmu->coherent = idr0 & IDR0_COHACC;
	smmu->asid_bits = (idr0 & IDR0_ASID16) ? 16 : 8;

	if (idr1 & (IDR1_TABLES_PRESET | IDR1_QUEUES_PRESET))
		return arm_smmu_set_error(-ENODEV, "smmuv3: embedded implementation not supported");
	cmdqs = (unsigned)arm_field_get(IDR1_CMDQS, idr1);
	evtqs = (unsigned)arm_field_get(IDR1_EVTQS, idr1);
	/* Linux takes the largest queue the hardware and the allocator allow. */
	smmu->cmdq.q.max_n_shift = cmdqs < CMDQ_MAX_SZ_SHIFT ? cmdqs : CMDQ_MAX_SZ_SHIFT;
	if (smmu->opts.cmdq_log2 && smmu->opts.cmdq_log2 < smmu->cmdq.q.max_n_shift)
		smmu->cmdq.q.max_n_shift = smmu->opts.cmdq_log2;
	if (smmu->cmdq.q.max_n_shift <= 6) /* ilog2(CMDQ_BATCH_ENTRIES) */
		return arm_smmu_set_error(-ENODEV, "smmuv3: command queue of 2^%u entries is too small",
					  smmu->cmdq.q.max_n_shift);
	smmu->evtq.max_n_shift = evtqs < EVTQ_MAX_SZ_SHIFT ? evtqs : EVTQ_MAX_SZ_SHIFT;
	if (smmu->opts.evtq_log2 && smmu->opts.evtq_log2 < smmu->evtq.max_n_shift)
		smmu->evtq.max_n_shift = smmu->opts.evtq_log2;
	smmu->ssid_bits = (unsigned)arm_field_get(IDR1_SSIDSIZE, idr1);
	smmu->sid_bits = (unsigned)arm_field_get(IDR1_SIDSIZE, idr1);
	/* Linux: a small StreamID space is always a linear table. */
	if (smmu->sid_bits <= STRTAB_SPLIT)
		smmu->two_lvl_strtab = false;

	smmu->ril = (idr3 & IDR3_RIL) && !smmu->opts.no_ril;

	if (idr5 & IDR5_GRAN4K)
		smmu->pgsize_bitmap |= (1ull << 12) | (1ull << 21) | (1ull << 30);
	if (idr5 & IDR5_GRAN16K)
		smmu->pgsize_bitmap |= (1ull << 14) | (1ull << 25);
	if (idr5 & IDR5_GRAN64K)
		smmu->pgsize_bitmap |= (1ull << 16) | (1ull << 29);
	if (!smmu->pgsize_bitmap)
		return arm_smmu_set_error(-ENODEV, "smmuv3: no translation granule in IDR5");
	smmu->oas = oas_bits[arm_field_get(IDR5_OAS, idr5)];
	if (!smmu->oas)
		return arm_smmu_set_error(-ENODEV, "smmuv3: reserved IDR5.OAS");
	if (smmu->oas > 48) /* io-pgtable-arm here has no 52-bit output */
		smmu->oas = 48;
	smmu->ias = 48; /* VA_BITS of a 48-bit kernel; no VAX */

	switch (smmu->opts.sync_mode) {
	case ILAB_SMMU_SYNC_MSI:
		if (!smmu->msi)
			return arm_smmu_set_error(-EINVAL, "smmuv3: MSI polling needs IDR0.MSI");
		smmu->msipoll = true;
		break;
	case ILAB_SMMU_SYNC_CONS:
		smmu->msipoll = false;
		break;
	default: /* Linux ARM_SMMU_OPT_MSIPOLL: MSI-capable and coherent */
		smmu->msipoll = smmu->msi && smmu->coherent;
		break;
	}
	return 0;
}

/* ---- reset (Linux arm_smmu_device_reset) ------------------------------------------------------ */

/* Write CR0 and wait for CR0ACK to match: a bounded MMIO read loop (one-time, at probe). */
static int write_cr0_sync(struct arm_smmu_device *smmu, uint32_t val)
{
	plat_mmio_write32(smmu->mmio, ARM_SMMU_CR0, val);
	for (unsigned i = 0; i < 100000; i++) {
		if (plat_mmio_read32(smmu->mmio, ARM_SMMU_CR0ACK) == val)
			return 0;
		plat_yield();
	}
	return arm_smmu_set_error(-ETIMEDOUT, "smmuv3: CR0ACK did not follow CR0 = 0x%x", val);
}

static int device_reset(struct arm_smmu_device *smmu)
{
	struct arm_smmu_cmdq_ent cmd = { 0 };
	uint32_t enables;
	int err;

	if (plat_mmio_read32(smmu->mmio, ARM_SMMU_CR0) & CR0_SMMUEN) {
		err = write_cr0_sync(smmu, 0);
		if (err)
			return err;
	}
	/* Tables and queues: inner-shareable write-back (coherent SMMU). */
	plat_mmio_write32(smmu->mmio, ARM_SMMU_CR1,
			  (uint32_t)(arm_field_prep(CR1_TABLE_SH, ARM_SMMU_SH_ISH) |
				     arm_field_prep(CR1_TABLE_OC, CR1_CACHE_WB) |
				     arm_field_prep(CR1_TABLE_IC, CR1_CACHE_WB) |
				     arm_field_prep(CR1_QUEUE_SH, ARM_SMMU_SH_ISH) |
				     arm_field_prep(CR1_QUEUE_OC, CR1_CACHE_WB) |
				     arm_field_prep(CR1_QUEUE_IC, CR1_CACHE_WB)));
	plat_mmio_write32(smmu->mmio, ARM_SMMU_CR2, (uint32_t)(CR2_PTM | CR2_RECINVSID));

	plat_mmio_write64(smmu->mmio, ARM_SMMU_STRTAB_BASE, smmu->strtab_base);
	plat_mmio_write32(smmu->mmio, ARM_SMMU_STRTAB_BASE_CFG, (uint32_t)smmu->strtab_base_cfg);

	plat_mmio_write64(smmu->mmio, ARM_SMMU_CMDQ_BASE, smmu->cmdq.q.q_base);
	plat_mmio_write32(smmu->mmio, ARM_SMMU_CMDQ_PROD, 0);
	plat_mmio_write32(smmu->mmio, ARM_SMMU_CMDQ_CONS, 0);
	enables = CR0_CMDQEN;
	err = write_cr0_sync(smmu, enables);
	if (err)
		return err;

	/* Forget anything cached from before: configuration, then TLBs. */
	cmd.opcode = CMDQ_OP_CFGI_ALL;
	err = arm_smmu_cmdq_issue_cmd(smmu, &cmd, true);
	if (!err && smmu->hyp) {
		cmd.opcode = CMDQ_OP_TLBI_EL2_ALL;
		err = arm_smmu_cmdq_issue_cmd(smmu, &cmd, false);
	}
	if (!err) {
		cmd.opcode = CMDQ_OP_TLBI_NSNH_ALL;
		err = arm_smmu_cmdq_issue_cmd(smmu, &cmd, true);
	}
	if (err)
		return arm_smmu_set_error(err, "smmuv3: the command queue does not complete CMD_SYNC");

	plat_mmio_write64(smmu->mmio, ARM_SMMU_EVTQ_BASE, smmu->evtq.q_base);
	plat_mmio_write32(smmu->mmio, ARM_SMMU_EVTQ_PROD, 0);
	plat_mmio_write32(smmu->mmio, ARM_SMMU_EVTQ_CONS, 0);
	enables |= CR0_EVTQEN;
	err = write_cr0_sync(smmu, enables);
	if (err)
		return err;

	enables |= CR0_SMMUEN;
	return write_cr0_sync(smmu, enables);
}

/* ---- probe / remove -------------------------------------------------------------------------- */

static void device_free(struct arm_smmu_device *smmu)
{
	tegra241_cmdqv_remove(smmu); /* VCMDQs do not depend on CR0 either */
	arm_smmu_ecmdq_remove(smmu); /* disables them: ECMDQs do not depend on CR0 */
	arm_smmu_free_strtab(smmu);
	arm_smmu_cmdq_free(smmu, &smmu->cmdq);
	arm_smmu_queue_free(smmu, &smmu->evtq);
	free(smmu->asid_map);
	if (smmu->stats)
		plat_percpu_free(smmu->stats);
	free(smmu);
}

int ilab_smmu_drv_probe(struct plat_mmio *mmio, struct ilab_mem *mem, int node,
			const struct ilab_smmu_drv_opts *opts, struct ilab_iommu **out)
{
	struct arm_smmu_device *smmu;
	unsigned cmdq_shift, evtq_shift;
	int err;

	if (!out)
		return arm_smmu_set_error(-EINVAL, "smmuv3: no output pointer");
	*out = NULL;
	if (!mmio || !mmio->ops || !mmio->ops->read || !mmio->ops->write || !mem)
		return arm_smmu_set_error(-EINVAL, "smmuv3: missing MMIO window or memory");
	if (node < 0 || (unsigned)node >= ilab_mem_nr_nodes(mem))
		return arm_smmu_set_error(-EINVAL, "smmuv3: node %d is not a memory node", node);
	if (opts && opts->cmdq_log2 > 19)
		return arm_smmu_set_error(-EINVAL, "smmuv3: cmdq_log2 %u > 19", opts->cmdq_log2);
	smmu = plat_zalloc_array(1, sizeof(*smmu));
	if (!smmu)
		return arm_smmu_set_error(-ENOMEM, "smmuv3: out of memory");
	memset(smmu, 0, sizeof(*smmu));
	smmu->mmio = mmio;
	smmu->mem = mem;
	smmu->node = node;
	if (opts)
		smmu->opts = *opts;
	plat_spin_init(&smmu->asid_lock, "smmu.asid_lock");

	err = hw_probe(smmu);
	if (err)
		goto fail;
	smmu->stats = plat_percpu_alloc(sizeof(struct arm_smmu_pcpu_stats));
	smmu->asid_map = plat_zalloc_array(((size_t)1 << smmu->asid_bits) / 64, sizeof(uint64_t));
	if (!smmu->stats || !smmu->asid_map) {
		err = arm_smmu_set_error(-ENOMEM, "smmuv3: out of memory");
		goto fail;
	}
	smmu->asid_map[0] = 1; /* ASID 0 is reserved */

	cmdq_shift = smmu->cmdq.q.max_n_shift;
	evtq_shift = smmu->evtq.max_n_shift;
	err = arm_smmu_queue_alloc(smmu, &smmu->cmdq.q, cmdq_shift, CMDQ_ENT_DWORDS,
				   ARM_SMMU_CMDQ_PROD, ARM_SMMU_CMDQ_CONS);
	if (!err)
		err = arm_smmu_cmdq_init(smmu, &smmu->cmdq);
	if (!err)
		err = arm_smmu_queue_alloc(smmu, &smmu->evtq, evtq_shift, EVTQ_ENT_DWORDS,
					   ARM_SMMU_EVTQ_PROD, ARM_SMMU_EVTQ_CONS);
	if (!err)
		err = arm_smmu_init_strtab(smmu);
	if (!err)
		err = device_reset(smmu);
	if (!err) /* after CR1: it is read-only while an ECMDQ is enabled */
		err = arm_smmu_ecmdq_probe(smmu);
	if (!err) /* Linux: the implementation's device_reset, at the end of the SMMU's */
		err = tegra241_cmdqv_probe(smmu);
	if (err)
		goto fail;

	smmu->iommu.ops = &arm_smmu_ops;
	smmu->iommu.name = mmio->name ? mmio->name : "smmuv3";
	smmu->iommu.node = node;
	smmu->iommu.mem = mem;
	smmu->iommu.priv = smmu;
	*out = &smmu->iommu;
	return 0;
fail:
	if (smmu->strtab || smmu->cmdq.q.base) {
		/* Leave the hardware off before its memory goes away. */
		plat_mmio_write32(mmio, ARM_SMMU_CR0, 0);
	}
	device_free(smmu);
	return err;
}

void ilab_smmu_drv_remove(struct ilab_iommu *iommu)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);

	if (!smmu)
		return;
	write_cr0_sync(smmu, 0);
	device_free(smmu);
}

int ilab_smmu_drv_get_info(struct ilab_iommu *iommu, struct ilab_smmu_drv_info *info)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);

	if (!smmu || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->sid_bits = smmu->sid_bits;
	info->ssid_bits = smmu->ssid_bits;
	info->asid_bits = smmu->asid_bits;
	info->oas = smmu->oas;
	info->ias = smmu->ias;
	info->pgsize_bitmap = smmu->pgsize_bitmap;
	info->ril = smmu->ril;
	info->msi = smmu->msi;
	info->sev = smmu->sev;
	info->coherent = smmu->coherent;
	info->strtab_2lvl = smmu->two_lvl_strtab;
	info->cmdq_log2 = smmu->cmdq.q.max_n_shift;
	info->evtq_log2 = smmu->evtq.max_n_shift;
	info->sync_mode = smmu->msipoll ? ILAB_SMMU_SYNC_MSI : ILAB_SMMU_SYNC_CONS;
	info->cmdq_pa = smmu->cmdq.q.base_pa;
	info->evtq_pa = smmu->evtq.base_pa;
	info->strtab_pa = smmu->strtab_pa;
	return 0;
}

int ilab_smmu_drv_get_stats(struct ilab_iommu *iommu, struct ilab_smmu_drv_stats *st)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);

	if (!smmu || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (unsigned cpu = 0; cpu < plat_cpu_count(); cpu++) {
		struct arm_smmu_pcpu_stats *p = plat_percpu_ptr(smmu->stats, cpu);

		st->cmds += plat_stat_read64(&p->cmds);
		st->issues += plat_stat_read64(&p->issues);
		st->batches += plat_stat_read64(&p->batches);
		st->syncs += plat_stat_read64(&p->syncs);
		st->sync_wait_ns += plat_stat_read64(&p->sync_wait_ns);
		st->cmpxchg_retries += plat_stat_read64(&p->cmpxchg_retries);
		st->queue_full_waits += plat_stat_read64(&p->queue_full_waits);
		st->sync_timeouts += plat_stat_read64(&p->sync_timeouts);
		st->space_timeouts += plat_stat_read64(&p->space_timeouts);
		st->cmds_refused += plat_stat_read64(&p->cmds_refused);
		for (unsigned op = 0; op < 256; op++)
			st->by_opcode[op] += plat_stat_read64(&p->by_opcode[op]);
	}
	return 0;
}

void ilab_smmu_drv_clear_stats(struct ilab_iommu *iommu)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);

	if (!smmu)
		return;
	for (unsigned cpu = 0; cpu < plat_cpu_count(); cpu++)
		memset(plat_percpu_ptr(smmu->stats, cpu), 0, sizeof(struct arm_smmu_pcpu_stats));
}

int ilab_smmu_drv_issue_cmds(struct ilab_iommu *iommu, const uint64_t *cmds, unsigned n, bool sync)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);
	struct arm_smmu_cmdq *cmdq;

	if (!smmu || (n && !cmds))
		return -EINVAL;
	/* The queue the first command's opcode gets; a secondary queue only if it takes them all. */
	cmdq = arm_smmu_get_cmdq_for(smmu, n ? (unsigned)(cmds[0] & 0xFF) : CMDQ_OP_CMD_SYNC);
	for (unsigned i = 0; i < n; i++)
		if (!arm_smmu_cmdq_supports(cmdq, (unsigned)(cmds[2 * i] & 0xFF)))
			cmdq = &smmu->cmdq;
	return arm_smmu_cmdq_issue_cmdlist(smmu, cmdq, cmds, n, sync);
}

void ilab_smmu_drv_build_tlbi_va(uint64_t cmd[2], uint16_t asid, uint64_t iova)
{
	struct arm_smmu_cmdq_ent ent = { .opcode = CMDQ_OP_TLBI_NH_VA,
					 .tlbi = { .asid = asid, .leaf = true, .addr = iova } };

	arm_smmu_cmdq_build_cmd(cmd, &ent);
}

void ilab_smmu_drv_build_tlbi_asid(uint64_t cmd[2], uint16_t asid)
{
	struct arm_smmu_cmdq_ent ent = { .opcode = CMDQ_OP_TLBI_NH_ASID, .tlbi = { .asid = asid } };

	arm_smmu_cmdq_build_cmd(cmd, &ent);
}

int ilab_smmu_drv_read_ste(struct ilab_iommu *iommu, uint32_t sid, uint64_t ste[8])
{
	struct arm_smmu_device *smmu = to_smmu(iommu);
	uint64_t *step;

	if (!smmu || !ste)
		return -EINVAL;
	step = arm_smmu_get_step(smmu, sid, false);
	if (!step)
		return -ENOENT;
	for (unsigned i = 0; i < STRTAB_STE_DWORDS; i++)
		ste[i] = plat_load64((plat_word64 *)&step[i]);
	return 0;
}

/* ---- ASIDs ---------------------------------------------------------------------------------- */

static int asid_alloc(struct arm_smmu_device *smmu)
{
	size_t words = ((size_t)1 << smmu->asid_bits) / 64;
	int asid = -ENOSPC;

	plat_spin_lock(&smmu->asid_lock);
	for (size_t i = 0; i < words; i++) {
		if (smmu->asid_map[i] != ~0ull) {
			unsigned bit = (unsigned)__builtin_ctzll(~smmu->asid_map[i]);

			smmu->asid_map[i] |= 1ull << bit;
			asid = (int)(i * 64 + bit);
			break;
		}
	}
	plat_spin_unlock(&smmu->asid_lock);
	return asid;
}

static void asid_free(struct arm_smmu_device *smmu, uint16_t asid)
{
	if (!asid)
		return;
	plat_spin_lock(&smmu->asid_lock);
	smmu->asid_map[asid / 64] &= ~(1ull << (asid % 64));
	plat_spin_unlock(&smmu->asid_lock);
}

/* ---- domains ------------------------------------------------------------------------------ */

static bool is_paging(enum ilab_domain_type t)
{
	return t == ILAB_DOMAIN_DMA || t == ILAB_DOMAIN_DMA_FQ || t == ILAB_DOMAIN_UNMANAGED;
}

static int attach_dev(struct ilab_iommu_domain *domain, struct ilab_dev *dev);
static bool domain_compatible(struct ilab_iommu_domain *domain, struct ilab_iommu *other);
static void flush_iotlb_all(struct ilab_iommu_domain *domain);
static void domain_free(struct ilab_iommu_domain *domain);

static const struct ilab_iommu_domain_ops arm_smmu_domain_ops = {
	.attach_dev = attach_dev,
	.flush_iotlb_all = flush_iotlb_all,
	.free = domain_free,
};

static struct ilab_iommu_domain *domain_alloc(struct ilab_iommu *iommu, enum ilab_domain_type type,
					      int node)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);
	struct ilab_io_pgtable_cfg cfg;
	const struct ilab_io_pgtable_cfg *out;
	struct arm_smmu_domain *d;
	int asid, err;

	if (!smmu || type > ILAB_DOMAIN_DMA_FQ) {
		arm_smmu_set_error(-EINVAL, "smmuv3: bad domain type %d", (int)type);
		return NULL;
	}
	if (node >= 0 && (unsigned)node >= ilab_mem_nr_nodes(smmu->mem)) {
		arm_smmu_set_error(-EINVAL, "smmuv3: node %d has no memory", node);
		return NULL;
	}
	d = plat_zalloc_array(1, sizeof(*d));
	if (!d) {
		arm_smmu_set_error(-ENOMEM, "smmuv3: out of memory");
		return NULL;
	}
	d->smmu = smmu;
	d->domain.type = type;
	d->domain.ops = &arm_smmu_domain_ops;
	d->domain.iommu = iommu;
	d->domain.node = node < 0 ? smmu->node : node;
	d->domain.priv = d;
	if (!is_paging(type))
		return &d->domain;

	asid = asid_alloc(smmu);
	if (asid < 0) {
		free(d);
		arm_smmu_set_error(-ENOSPC, "smmuv3: no free ASID");
		return NULL;
	}
	d->asid = (uint16_t)asid;
	/* Slot 0: the allocating SMMU, for the domain's whole life. */
	plat_spin_init(&d->inst_lock, "smmu_domain.inst_lock");
	plat_store64(&d->insts[0].smmu, (uint64_t)(uintptr_t)smmu);
	plat_store32(&d->insts[0].asid, d->asid);
	plat_store32(&d->nr_insts, 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.pgsize_bitmap = smmu->pgsize_bitmap;
	cfg.ias = smmu->ias;
	cfg.oas = smmu->oas;
	/* Linux arm_smmu_domain_finalise: ARM_SMMU_FEAT_COHERENCY, i.e. IDR0.COHACC. */
	cfg.coherent_walk = smmu->coherent;
	cfg.split_blocks = smmu->opts.pgtable_split_blocks;
	cfg.tlb = &arm_smmu_flush_ops;
	cfg.cookie = d;
	cfg.mem = smmu->mem;
	cfg.node = d->domain.node;
	err = ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &d->pgtbl);
	if (err) {
		asid_free(smmu, d->asid);
		free(d);
		arm_smmu_set_error(err, "smmuv3: io-pgtable allocation failed (%d)", err);
		return NULL;
	}
	out = ilab_io_pgtable_cfg(d->pgtbl);
	d->domain.pgsize_bitmap = out->pgsize_bitmap;
	d->domain.aperture_start = 0;
	d->domain.aperture_end = (1ull << smmu->ias) - 1;
	ilab_io_pgtable_pt_ops(d->pgtbl, &d->domain.pt);
	d->domain.pt.iotlb_sync = arm_smmu_iotlb_sync;
	return &d->domain;
}

static void domain_free(struct ilab_iommu_domain *domain)
{
	struct arm_smmu_domain *d = to_smmu_domain(domain);

	if (!d)
		return;
	if (d->pgtbl) {
		/* The ASIDs will be reused: nothing of this domain may stay in any TLB. Other
		 * SMMUs' slots are normally gone with their last master; free any left. */
		arm_smmu_tlb_inv_domain(d);
		for (unsigned i = 1; i < ARM_SMMU_DOMAIN_MAX_INSTS; i++) {
			struct arm_smmu_device *o =
				(struct arm_smmu_device *)(uintptr_t)plat_load64(&d->insts[i].smmu);

			if (o)
				asid_free(o, (uint16_t)plat_load32(&d->insts[i].asid));
		}
		ilab_free_io_pgtable(d->pgtbl);
		asid_free(d->smmu, d->asid);
	}
	free(d);
}

static void flush_iotlb_all(struct ilab_iommu_domain *domain)
{
	struct arm_smmu_domain *d = to_smmu_domain(domain);

	if (d && d->pgtbl)
		arm_smmu_tlb_inv_domain(d);
}

int ilab_smmu_drv_inv_range(struct ilab_iommu_domain *domain, uint64_t iova, size_t size,
			    size_t granule)
{
	struct arm_smmu_domain *d = to_smmu_domain(domain);

	if (!d || !d->pgtbl || !granule)
		return -EINVAL;
	return arm_smmu_tlb_inv_range_domain(d, iova, size, granule, true);
}

int ilab_smmu_drv_domain_asid(const struct ilab_iommu_domain *domain)
{
	const struct arm_smmu_domain *d = to_smmu_domain(domain);

	return d && d->pgtbl ? d->asid : -EINVAL;
}

/* Our domain, or NULL for another driver's (whose priv we must not interpret). */
static struct arm_smmu_domain *our_domain(const struct ilab_iommu_domain *domain)
{
	return domain && domain->ops == &arm_smmu_domain_ops ? to_smmu_domain(domain) : NULL;
}

int ilab_smmu_drv_domain_asid_on(const struct ilab_iommu_domain *domain,
				 const struct ilab_iommu *iommu)
{
	struct arm_smmu_domain *d = our_domain(domain);

	if (!d || !d->pgtbl || !iommu)
		return -EINVAL;
	for (unsigned i = 0; i < ARM_SMMU_DOMAIN_MAX_INSTS; i++)
		if (plat_load64(&d->insts[i].smmu) == (uint64_t)(uintptr_t)iommu->priv)
			return (int)plat_load32(&d->insts[i].asid);
	return -ENOENT;
}

ilab_pa_t ilab_smmu_drv_domain_ttbr(const struct ilab_iommu_domain *domain)
{
	struct arm_smmu_domain *d = our_domain(domain);

	return d && d->pgtbl ? ilab_io_pgtable_cfg(d->pgtbl)->arm_lpae_s1_cfg.ttbr : 0;
}

unsigned ilab_smmu_drv_domain_nr_smmus(const struct ilab_iommu_domain *domain)
{
	struct arm_smmu_domain *d = our_domain(domain);
	unsigned n = 0;

	if (!d || !d->pgtbl)
		return 0;
	plat_spin_lock(&d->inst_lock);
	for (unsigned i = 0; i < ARM_SMMU_DOMAIN_MAX_INSTS; i++)
		if (plat_load64(&d->insts[i].smmu) && d->insts[i].nr_masters)
			n++;
	plat_spin_unlock(&d->inst_lock);
	return n;
}

/* ---- devices and attach --------------------------------------------------------------------- */

static int probe_device(struct ilab_iommu *iommu, struct ilab_dev *dev)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);
	struct arm_smmu_master *m;
	int err;

	if (!smmu || !dev || dev->iommu != iommu)
		return -ENODEV;
	if (dev->iommu_priv)
		return -EEXIST;
	if (smmu->sid_bits < 32 && (dev->sid >> smmu->sid_bits))
		return arm_smmu_set_error(-ERANGE, "smmuv3: StreamID 0x%x beyond SIDSIZE %u",
					  dev->sid, smmu->sid_bits);
	m = plat_zalloc_array(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->smmu = smmu;
	m->dev = dev;
	m->sid = dev->sid;
	m->ste = arm_smmu_get_step(smmu, dev->sid, true);
	if (!m->ste) {
		free(m);
		return arm_smmu_set_error(-ENOMEM, "smmuv3: no stream table for SID 0x%x", dev->sid);
	}
	/* The CD table: one CD (no PASIDs), in coherent memory of the SMMU's node. */
	err = ilab_mem_alloc_coherent(smmu->mem, smmu->node, CTXDESC_CD_DWORDS * 8, &m->cd_pa, NULL);
	if (err) {
		free(m);
		return arm_smmu_set_error(err, "smmuv3: no memory for a CD table");
	}
	m->cd = ilab_mem_va(smmu->mem, m->cd_pa, CTXDESC_CD_DWORDS * 8);
	memset(m->cd, 0, CTXDESC_CD_DWORDS * 8);
	dev->iommu_priv = m;
	return 0;
}

/* ---- per-SMMU instances of a domain (see struct arm_smmu_domain_inst) ----------------------- */

/* One more master of d behind smmu: find or claim smmu's slot, allocating an ASID from smmu's
 * space for a new one. Returns the ASID the CD must carry, or -ENOSPC. */
static int inst_get(struct arm_smmu_domain *d, struct arm_smmu_device *smmu)
{
	uint64_t key = (uint64_t)(uintptr_t)smmu;
	unsigned n, free_slot = ARM_SMMU_DOMAIN_MAX_INSTS;
	int asid;

	plat_spin_lock(&d->inst_lock);
	n = plat_load32(&d->nr_insts);
	for (unsigned i = 0; i < n; i++) {
		uint64_t cur = plat_load64(&d->insts[i].smmu);

		if (cur == key) {
			d->insts[i].nr_masters++;
			asid = (int)plat_load32(&d->insts[i].asid);
			plat_spin_unlock(&d->inst_lock);
			return asid;
		}
		if (!cur && free_slot == ARM_SMMU_DOMAIN_MAX_INSTS)
			free_slot = i;
	}
	if (free_slot == ARM_SMMU_DOMAIN_MAX_INSTS)
		free_slot = n;
	if (free_slot >= ARM_SMMU_DOMAIN_MAX_INSTS) {
		plat_spin_unlock(&d->inst_lock);
		return arm_smmu_set_error(-ENOSPC, "smmuv3: domain already on %u SMMUs",
					  ARM_SMMU_DOMAIN_MAX_INSTS);
	}
	asid = asid_alloc(smmu);
	if (asid < 0) {
		plat_spin_unlock(&d->inst_lock);
		return arm_smmu_set_error(-ENOSPC, "smmuv3: no free ASID on %s", smmu->iommu.name);
	}
	d->insts[free_slot].nr_masters = 1;
	plat_store32(&d->insts[free_slot].asid, (uint32_t)asid);
	plat_store64(&d->insts[free_slot].smmu, key); /* publish: invalidations now reach it */
	if (free_slot == n)
		plat_store32(&d->nr_insts, n + 1);
	plat_spin_unlock(&d->inst_lock);
	return asid;
}

/* One master fewer: the last one behind a non-allocating SMMU releases its slot, after which
 * the ASID is invalidated there and freed. The master's STE no longer points at our CD. */
static void inst_put(struct arm_smmu_domain *d, struct arm_smmu_device *smmu)
{
	uint64_t key = (uint64_t)(uintptr_t)smmu;
	unsigned n;
	int release_asid = -1;

	plat_spin_lock(&d->inst_lock);
	n = plat_load32(&d->nr_insts);
	for (unsigned i = 0; i < n; i++) {
		if (plat_load64(&d->insts[i].smmu) != key)
			continue;
		if (d->insts[i].nr_masters && --d->insts[i].nr_masters == 0 && i != 0) {
			release_asid = (int)plat_load32(&d->insts[i].asid);
			plat_store64(&d->insts[i].smmu, 0);
		}
		break;
	}
	plat_spin_unlock(&d->inst_lock);
	if (release_asid >= 0) {
		arm_smmu_tlb_inv_asid(smmu, (uint16_t)release_asid);
		asid_free(smmu, (uint16_t)release_asid);
	}
}

static void set_master_domain(struct arm_smmu_master *m, struct arm_smmu_domain *d)
{
	struct arm_smmu_domain *old = m->domain;

	m->domain = d;
	if (d)
		plat_fetch_add32(&d->nr_masters, 1);
	if (old) {
		plat_fetch_sub32(&old->nr_masters, 1);
		if (old->pgtbl)
			inst_put(old, m->smmu);
	}
}

/* Leave translation: STE first (the SMMU stops reading the CD), then clear the CD. */
static void install_non_paging(struct arm_smmu_master *m, bool bypass)
{
	uint64_t ste[STRTAB_STE_DWORDS], cd[CTXDESC_CD_DWORDS] = { 0 };

	if (bypass)
		arm_smmu_make_bypass_ste(ste);
	else
		arm_smmu_make_abort_ste(ste);
	arm_smmu_write_ste(m, ste);
	if (m->cd[0] & CTXDESC_CD_0_V)
		arm_smmu_write_cd(m, cd);
}

static int block_dev(struct ilab_iommu *iommu, struct ilab_dev *dev)
{
	struct arm_smmu_master *m = dev ? dev->iommu_priv : NULL;

	if (!m || dev->iommu != iommu)
		return -ENODEV;
	install_non_paging(m, false);
	set_master_domain(m, NULL);
	return 0;
}

static void release_device(struct ilab_iommu *iommu, struct ilab_dev *dev)
{
	struct arm_smmu_master *m = dev ? dev->iommu_priv : NULL;

	if (!m || dev->iommu != iommu)
		return;
	install_non_paging(m, false);
	set_master_domain(m, NULL);
	arm_smmu_ats_release(m);
	ilab_mem_free_coherent(m->smmu->mem, m->cd_pa, CTXDESC_CD_DWORDS * 8);
	free(m);
	dev->iommu_priv = NULL;
}

static int attach_dev(struct ilab_iommu_domain *domain, struct ilab_dev *dev)
{
	struct arm_smmu_domain *d = to_smmu_domain(domain);
	struct arm_smmu_master *m = dev ? dev->iommu_priv : NULL;
	uint64_t ent[8];
	int asid;

	if (!d || !m)
		return arm_smmu_set_error(-ENODEV, "smmuv3: device not probed");
	if (domain->iommu != dev->iommu && !domain_compatible(domain, dev->iommu))
		return arm_smmu_set_error(-EINVAL, "smmuv3: %s cannot use a domain of %s",
					  m->smmu->iommu.name,
					  domain->iommu && domain->iommu->name ? domain->iommu->name
									       : "?");
	switch (domain->type) {
	case ILAB_DOMAIN_IDENTITY:
		install_non_paging(m, true);
		break;
	case ILAB_DOMAIN_BLOCKED:
		install_non_paging(m, false);
		break;
	default:
		/* This SMMU's ASID for the domain (allocated on its first master here). */
		asid = inst_get(d, m->smmu);
		if (asid < 0)
			return asid;
		/* The CD first (the STE may already point at it), then the STE. */
		arm_smmu_make_s1_cd(ent, d, (uint16_t)asid);
		arm_smmu_write_cd(m, ent);
		arm_smmu_make_cdtable_ste(ent, m->cd_pa);
		arm_smmu_ats_ste(m, ent); /* STE.EATS for an ATS-enabled master */
		arm_smmu_write_ste(m, ent);
		break;
	}
	set_master_domain(m, d);
	return 0;
}

/* Can devices behind `other` use this domain? Its own SMMU always; another SMMUv3 of this
 * driver when it can walk the same page table: same memory, every page size of the table,
 * input and output address sizes at least the table's, and coherent table walks on both (a
 * non-coherent SMMU's table is cleaned after each write; sharing is kept to tables that need
 * no cache maintenance). Identity/blocked domains stay on their SMMU. ASIDs
 * are per SMMU (inst_get), so ASID width does not matter. */
static bool domain_compatible(struct ilab_iommu_domain *domain, struct ilab_iommu *other)
{
	struct arm_smmu_domain *d = our_domain(domain);
	struct arm_smmu_device *o;
	const struct ilab_io_pgtable_cfg *cfg;

	if (!d || !other || other->ops != &arm_smmu_ops)
		return false;
	if (domain->iommu == other)
		return true;
	o = to_smmu(other);
	if (!o || !d->pgtbl || o->mem != d->smmu->mem)
		return false;
	cfg = ilab_io_pgtable_cfg(d->pgtbl);
	return (o->pgsize_bitmap & cfg->pgsize_bitmap) == cfg->pgsize_bitmap &&
	       o->ias >= cfg->ias && o->oas >= cfg->oas && o->coherent && d->smmu->coherent;
}

/* arm_smmu_get_resv_regions: the software-managed MSI window (Linux also adds the firmware's
 * hardware MSI regions, iommu_dma_get_resv_regions: none on the modelled machines). */
static unsigned get_resv_regions(struct ilab_iommu *iommu, struct ilab_dev *dev,
				 struct ilab_iommu_resv_region *regs, unsigned max)
{
	(void)iommu;
	(void)dev;
	if (!max)
		return 0;
	regs[0] = (struct ilab_iommu_resv_region){ .start = ILAB_MSI_IOVA_BASE,
						   .length = ILAB_MSI_IOVA_LENGTH,
						   .type = ILAB_RESV_SW_MSI };
	return 1;
}

static const struct ilab_iommu_ops arm_smmu_ops = {
	.name = "arm-smmu-v3",
	.domain_alloc = domain_alloc,
	.probe_device = probe_device,
	.release_device = release_device,
	.block_dev = block_dev,
	.domain_compatible = domain_compatible,
	.get_resv_regions = get_resv_regions,
};
