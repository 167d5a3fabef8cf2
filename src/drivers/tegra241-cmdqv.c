/* tegra241-cmdqv.c — NVIDIA Tegra241 CMDQV, driver side, as Linux 6.12's
 * drivers/iommu/arm/arm-smmu-v3/tegra241-cmdqv.c does it: read PARAM, reset the CMDQV, give every
 * VINTF its share of the VCMDQs (CMDQ_ALLOC), enable VINTF0 (the kernel's, HYP_OWN read back)
 * with its logical VCMDQs, and hook get_secondary_cmdq: CPU c issues to VINTF0's LVCMDQ
 * c % (VCMDQs per VINTF) the commands that queue takes; the rest go to the main queue.
 * It is not the producer (arm-smmu-v3-cmdq.c inserts into a VCMDQ as into the main queue, with
 * CS_NONE syncs and CONS polling) nor the hardware (src/hw/smmuv3/cmdqv.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/arm-smmu-v3.h"
#include "iommulab/plat.h"
#include "iommulab/tegra241_cmdqv.h"

#define CMDQV_DEFAULT_LOG2 12

struct tegra241_cmdqv {
	uint64_t base;           /* the CMDQV window in smmu->mmio */
	unsigned num_vintfs, num_vcmdqs, per_vintf;
	bool hyp_own;
	plat_word32 vintf0_enabled;
	struct arm_smmu_cmdq *lvcmdqs; /* VINTF0's, per_vintf of them, cache-line aligned */
	unsigned nr;             /* of which allocated */
};

/* ---- registers --------------------------------------------------------------------------- */

static uint32_t cmdqv_rd(struct arm_smmu_device *smmu, uint64_t off)
{
	return plat_mmio_read32(smmu->mmio, smmu->cmdqv->base + off);
}

static void cmdqv_wr(struct arm_smmu_device *smmu, uint64_t off, uint32_t v)
{
	plat_mmio_write32(smmu->mmio, smmu->cmdqv->base + off, v);
}

/* Linux tegra241_cmdqv_write_config: write CONFIG, poll STATUS bit 0 until it follows EN. */
static int write_config(struct arm_smmu_device *smmu, uint64_t config, uint64_t status,
			uint32_t val, const char *what)
{
	bool en = val & 1;

	cmdqv_wr(smmu, config, val);
	for (unsigned i = 0; i < 100000; i++) { /* bounded: one-time, at probe and remove */
		if (!!(cmdqv_rd(smmu, status) & 1) == en)
			return 0;
		plat_yield();
	}
	return arm_smmu_set_error(-ETIMEDOUT, "tegra241-cmdqv: %s failed to %sable (status 0x%x)",
				  what, en ? "en" : "dis", cmdqv_rd(smmu, status));
}

/* VINTF0's logical VCMDQ l: its page0 in the VINTF aperture (page1 is 64 KiB on). */
static uint64_t lvcmdq_page0(unsigned l) { return CMDQV_VINTF_PAGES + CMDQV_VCMDQ_STRIDE * l; }

/* ---- commands a VCMDQ takes ------------------------------------------------------------------ */

/* Linux tegra241_guest_vcmdq_supports_cmd. Upstream installs it on every VCMDQ it builds at
 * probe, which is before VINTF0's HYP_OWN is read back, so the kernel's VCMDQs get this subset
 * too: CFGI_*, TLBI_NH_ALL, TLBI_NSNH_ALL, PREFETCH and a lone CMD_SYNC use the main queue. */
static bool guest_supports(unsigned opcode)
{
	return opcode == CMDQ_OP_TLBI_NH_ASID || opcode == CMDQ_OP_TLBI_NH_VA || opcode == 0x40;
}

/* Linux tegra241_cmdqv_get_cmdq: smp_processor_id() % LVCMDQs per VINTF. A thread that is not
 * a CPU of the modelled machine uses the main queue. */
static struct arm_smmu_cmdq *get_secondary_cmdq(struct arm_smmu_device *smmu, unsigned opcode)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;
	struct arm_smmu_cmdq *q;
	int cpu = plat_cpu_id();

	if (!cmdqv || !plat_load_relaxed32(&cmdqv->vintf0_enabled) || cpu < 0)
		return NULL;
	q = &cmdqv->lvcmdqs[(unsigned)cpu % cmdqv->per_vintf];
	if (!arm_smmu_cmdq_supports(q, opcode))
		return NULL;
	return q;
}

static const struct arm_smmu_impl_ops tegra241_impl_ops = {
	.get_secondary_cmdq = get_secondary_cmdq,
	.device_remove = tegra241_cmdqv_remove,
};

/* ---- reset (Linux tegra241_cmdqv_hw_reset and the vintf/vcmdq hw_init/deinit) ------------- */

static void vcmdq_hw_deinit(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *q)
{
	uint64_t p0 = q->vcmdq_regs, p1 = p0 + 0x10000;
	uint32_t gerror, gerrorn;

	write_config(smmu, p0 + VCMDQ_CONFIG, p0 + VCMDQ_STATUS, 0, "VCMDQ");
	cmdqv_wr(smmu, p0 + VCMDQ_PROD, 0);
	cmdqv_wr(smmu, p0 + VCMDQ_CONS, 0);
	plat_mmio_write64(smmu->mmio, smmu->cmdqv->base + p1 + VCMDQ_BASE, 0);
	plat_mmio_write64(smmu->mmio, smmu->cmdqv->base + p1 + VCMDQ_CONS_INDX_BASE, 0);
	gerrorn = cmdqv_rd(smmu, p0 + VCMDQ_GERRORN);
	gerror = cmdqv_rd(smmu, p0 + VCMDQ_GERROR);
	if (gerror != gerrorn) /* an uncleared error: acknowledged, as Linux does */
		cmdqv_wr(smmu, p0 + VCMDQ_GERRORN, gerror);
}

static int vcmdq_hw_init(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *q)
{
	uint64_t p0 = q->vcmdq_regs;

	vcmdq_hw_deinit(smmu, q);
	plat_mmio_write64(smmu->mmio, smmu->cmdqv->base + p0 + 0x10000 + VCMDQ_BASE, q->q.q_base);
	return write_config(smmu, p0 + VCMDQ_CONFIG, p0 + VCMDQ_STATUS, VCMDQ_CONFIG_EN, "VCMDQ");
}

static void vintf0_hw_deinit(struct arm_smmu_device *smmu)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;

	plat_store32(&cmdqv->vintf0_enabled, 0); /* every CPU back on the main queue first */
	for (unsigned l = 0; l < cmdqv->nr; l++)
		vcmdq_hw_deinit(smmu, &cmdqv->lvcmdqs[l]);
	write_config(smmu, CMDQV_VINTF(0) + VINTF_CONFIG, CMDQV_VINTF(0) + VINTF_STATUS, 0,
		     "VINTF0");
}

static int vintf0_hw_init(struct arm_smmu_device *smmu)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;
	int err;

	vintf0_hw_deinit(smmu);
	cmdqv_wr(smmu, CMDQV_VINTF(0) + VINTF_CONFIG, VINTF_CONFIG_HYP_OWN);
	err = write_config(smmu, CMDQV_VINTF(0) + VINTF_CONFIG, CMDQV_VINTF(0) + VINTF_STATUS,
			   VINTF_CONFIG_HYP_OWN | VINTF_CONFIG_EN, "VINTF0");
	if (err)
		return err;
	/* HYP_OWN is wired to 0 in a guest: what was kept says who we are. */
	cmdqv->hyp_own = cmdqv_rd(smmu, CMDQV_VINTF(0) + VINTF_CONFIG) & VINTF_CONFIG_HYP_OWN;
	for (unsigned l = 0; l < cmdqv->nr; l++) {
		err = vcmdq_hw_init(smmu, &cmdqv->lvcmdqs[l]);
		if (err) {
			vintf0_hw_deinit(smmu);
			return err;
		}
	}
	plat_store32(&cmdqv->vintf0_enabled, 1);
	return 0;
}

static int cmdqv_hw_reset(struct arm_smmu_device *smmu)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;
	uint32_t config = cmdqv_rd(smmu, CMDQV_CONFIG);
	unsigned q = 0;
	int err;

	err = write_config(smmu, CMDQV_CONFIG, CMDQV_STATUS, config & ~CMDQV_CONFIG_EN, "CMDQV");
	if (!err)
		err = write_config(smmu, CMDQV_CONFIG, CMDQV_STATUS, config | CMDQV_CONFIG_EN,
				   "CMDQV");
	if (err)
		return err;
	/* The global VCMDQs, in order, to each VINTF as its logical VCMDQs 0 .. per_vintf - 1. */
	for (unsigned v = 0; v < cmdqv->num_vintfs; v++)
		for (unsigned l = 0; l < cmdqv->per_vintf; l++)
			cmdqv_wr(smmu, CMDQV_CMDQ_ALLOC(q++),
				 v << CMDQV_ALLOC_VINTF_SHIFT | l << CMDQV_ALLOC_LVCMDQ_SHIFT |
				 CMDQV_ALLOC_ALLOCATED);
	return vintf0_hw_init(smmu);
}

/* ---- probe / remove --------------------------------------------------------------------------- */

static void free_lvcmdqs(struct arm_smmu_device *smmu)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;

	for (unsigned l = 0; cmdqv->lvcmdqs && l < cmdqv->nr; l++)
		arm_smmu_cmdq_free(smmu, &cmdqv->lvcmdqs[l]);
	free(cmdqv->lvcmdqs);
	cmdqv->lvcmdqs = NULL;
	cmdqv->nr = 0;
}

/* Linux tegra241_vcmdq_alloc_smmu_cmdq: the common queue, with VCMDQ_BASE's layout. */
static int alloc_lvcmdqs(struct arm_smmu_device *smmu, unsigned log2)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;
	size_t bytes = ((size_t)cmdqv->per_vintf * sizeof(struct arm_smmu_cmdq) + PLAT_CACHELINE - 1) /
		       PLAT_CACHELINE * PLAT_CACHELINE;
	int err;

	cmdqv->lvcmdqs = plat_zalloc_array(1, bytes);
	if (!cmdqv->lvcmdqs)
		return -ENOMEM;
	memset(cmdqv->lvcmdqs, 0, bytes);
	for (unsigned l = 0; l < cmdqv->per_vintf; l++) {
		struct arm_smmu_cmdq *q = &cmdqv->lvcmdqs[l];
		uint64_t p0 = cmdqv->base + lvcmdq_page0(l);

		err = arm_smmu_queue_alloc(smmu, &q->q, log2, CMDQ_ENT_DWORDS, p0 + VCMDQ_PROD,
					   p0 + VCMDQ_CONS);
		cmdqv->nr = l + 1;
		if (!err && q->q.max_n_shift <= 6) /* halved below a batch on allocation failure */
			err = -ENOMEM;
		if (err)
			return err;
		q->q.q_base = (q->q.base_pa & VCMDQ_BASE_ADDR_MASK) | q->q.max_n_shift;
		q->vcmdq = true;
		q->busy_poll = true;
		q->supports = guest_supports;
		q->index = l; /* VINTF0's VCMDQs are the global ones 0 .. per_vintf - 1 */
		q->vcmdq_regs = lvcmdq_page0(l);
		q->nr_cpus = plat_cpu_count() / cmdqv->per_vintf +
			     (l < plat_cpu_count() % cmdqv->per_vintf);
		err = arm_smmu_cmdq_init(smmu, q);
		if (err)
			return err;
	}
	return 0;
}

static int probe_fail(struct arm_smmu_device *smmu, int err, const char *why)
{
	if (smmu->cmdqv) {
		free_lvcmdqs(smmu);
		free(smmu->cmdqv);
		smmu->cmdqv = NULL;
	}
	smmu->impl_ops = NULL;
	smmu->cmdqv_why = why;
	if (smmu->opts.cmdqv == ILAB_SMMU_CMDQV_ON)
		return arm_smmu_set_error(err ? err : -ENODEV, "tegra241-cmdqv: %s", why);
	return 0; /* Linux: "Falling back to standard SMMU CMDQ" */
}

int tegra241_cmdqv_probe(struct arm_smmu_device *smmu)
{
	struct tegra241_cmdqv *cmdqv;
	uint32_t param;
	unsigned log2;
	int err;

	if (smmu->opts.cmdqv == ILAB_SMMU_CMDQV_OFF) {
		smmu->cmdqv_why = "CMDQV switched off (option cmdqv off)";
		return 0;
	}
	if (!smmu->opts.cmdqv_offset)
		return probe_fail(smmu, -ENODEV, "firmware describes no CMDQV");
	cmdqv = calloc(1, sizeof(*cmdqv));
	if (!cmdqv)
		return probe_fail(smmu, -ENOMEM, "out of memory");
	smmu->cmdqv = cmdqv;
	cmdqv->base = smmu->opts.cmdqv_offset;
	param = cmdqv_rd(smmu, CMDQV_PARAM);
	cmdqv->num_vintfs = 1u << ((param >> CMDQV_PARAM_NUM_VINTF_LOG2_SHIFT) & 0xF);
	cmdqv->num_vcmdqs = 1u << ((param >> CMDQV_PARAM_NUM_VCMDQ_LOG2_SHIFT) & 0xF);
	if ((param & 0xF) == 0 || cmdqv->num_vcmdqs < cmdqv->num_vintfs ||
	    cmdqv->num_vcmdqs > CMDQV_MAX_VCMDQS)
		return probe_fail(smmu, -ENODEV, "CMDQV PARAM describes no usable VCMDQ");
	cmdqv->per_vintf = cmdqv->num_vcmdqs / cmdqv->num_vintfs;
	log2 = smmu->opts.cmdqv_log2 ? smmu->opts.cmdqv_log2 : CMDQV_DEFAULT_LOG2;
	if (log2 > VCMDQ_LOG2SIZE_MAX)
		log2 = VCMDQ_LOG2SIZE_MAX;
	if (log2 <= 6)
		return probe_fail(smmu, -ENODEV, "VCMDQs too small for a batch (cmdqv_log2)");
	err = alloc_lvcmdqs(smmu, log2);
	if (err)
		return probe_fail(smmu, err, "no coherent memory for a VCMDQ");
	err = cmdqv_hw_reset(smmu);
	if (err)
		return probe_fail(smmu, err, "the CMDQV, VINTF0 or a VCMDQ did not enable");
	smmu->impl_ops = &tegra241_impl_ops;
	smmu->cmdqv_why = NULL;
	return 0;
}

void tegra241_cmdqv_remove(struct arm_smmu_device *smmu)
{
	if (!smmu->cmdqv)
		return;
	vintf0_hw_deinit(smmu);
	smmu->impl_ops = NULL;
	free_lvcmdqs(smmu);
	free(smmu->cmdqv);
	smmu->cmdqv = NULL;
}

/* ---- errors (Linux tegra241_vintf0_handle_error, run by a waiter instead of the ISR) ---------- */

bool tegra241_vcmdq_skip_err(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	struct arm_smmu_queue *q = &cmdq->q;
	uint64_t p0 = cmdq->vcmdq_regs;
	uint32_t gerror, gerrorn, cons;
	unsigned reason, rd;
	bool done = false;

	gerror = cmdqv_rd(smmu, p0 + VCMDQ_GERROR);
	gerrorn = cmdqv_rd(smmu, p0 + VCMDQ_GERRORN);
	if (gerror == gerrorn)
		return false;
	plat_track(&smmu->gerror_lock, "smmu.gerror_lock");
	plat_spin_lock(&smmu->gerror_lock); /* one recovery at a time, as one ISR would */
	gerror = cmdqv_rd(smmu, p0 + VCMDQ_GERROR);
	gerrorn = cmdqv_rd(smmu, p0 + VCMDQ_GERRORN);
	if (gerror != gerrorn) {
		cons = plat_mmio_read32(smmu->mmio, q->cons_reg);
		reason = (cons & VCMDQ_CONS_ERR_MASK) >> VCMDQ_CONS_ERR_SHIFT;
		rd = cons & ((1u << q->max_n_shift) - 1);
		arm_smmu_stat_add(&cmdq->st_errors, 1);
		if ((gerror ^ gerrorn) & VCMDQ_GERROR_CMDQ_ERR && reason != VCMDQ_CERROR_ABT &&
		    reason != VCMDQ_CERROR_ATC_INV_SYNC) {
			/* __arm_smmu_cmdq_skip_err: the refused command becomes a CMD_SYNC, and on
			 * this queue one with CS = SIG_NONE. */
			struct arm_smmu_cmdq_ent sync = { .opcode = CMDQ_OP_CMD_SYNC };
			uint64_t cmd[CMDQ_ENT_DWORDS], *ent = q->base + (size_t)rd * q->ent_dwords;

			arm_smmu_cmdq_build_cmd(cmd, &sync);
			cmd[0] &= ~CMDQ_SYNC_0_CS;
			ent[0] = cmd[0];
			ent[1] = cmd[1];
			plat_mem_touch(ent, CMDQ_ENT_DWORDS * 8, true);
			arm_smmu_stat_add(&cmdq->st_err_ill, 1);
			done = true;
		} else if (reason == VCMDQ_CERROR_ABT) {
			arm_smmu_stat_add(&cmdq->st_err_abt, 1); /* the read is retried */
		}
		plat_mb();
		cmdqv_wr(smmu, p0 + VCMDQ_GERRORN, gerror);
		arm_smmu_set_error(-EIO, "tegra241-cmdqv: VCMDQ %u: error 0x%x (CONS.ERR %u) at "
				   "index %u %s", cmdq->index, gerror ^ gerrorn, reason, rd,
				   done ? "skipped" : "acknowledged");
	}
	plat_spin_unlock(&smmu->gerror_lock);
	return done;
}

/* ---- public queries ---------------------------------------------------------------------------- */

int ilab_smmu_drv_get_cmdqv_info(struct ilab_iommu *iommu, struct ilab_smmu_drv_cmdqv_info *info)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);
	struct tegra241_cmdqv *cmdqv;

	if (!smmu || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->why_not = smmu->cmdqv_why;
	cmdqv = smmu->cmdqv;
	if (!cmdqv)
		return 0;
	info->vcmdqs = cmdqv->num_vcmdqs;
	info->vintfs = cmdqv->num_vintfs;
	info->lvcmdqs = cmdqv->per_vintf;
	info->log2size = cmdqv->lvcmdqs[0].q.max_n_shift;
	info->hyp_own = cmdqv->hyp_own;
	return 0;
}

/* The VCMDQ CPU `cpu` would use for a TLBI_NH_VA (1 + its index), 0 for the main queue. */
int tegra241_cmdqv_cpu_queue(struct arm_smmu_device *smmu, unsigned cpu)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;

	if (!cmdqv || !plat_load_relaxed32(&cmdqv->vintf0_enabled))
		return 0;
	return 1 + (int)(cpu % cmdqv->per_vintf);
}

struct arm_smmu_cmdq *tegra241_cmdqv_queue(struct arm_smmu_device *smmu, unsigned n)
{
	struct tegra241_cmdqv *cmdqv = smmu->cmdqv;

	return cmdqv && n < cmdqv->nr ? &cmdqv->lvcmdqs[n] : NULL;
}
