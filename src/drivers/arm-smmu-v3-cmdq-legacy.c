/* arm-smmu-v3-cmdq-legacy.c — the SMMUv3 command-queue producer as Linux had it before the
 * lock-free rewrite of v5.4 (opts.cmdq_mode = ILAB_SMMU_CMDQ_SPINLOCK): every command inserted
 * alone under one spinlock with its own CMDQ_PROD write, and CMD_SYNC completion signalled by an
 * MSI to one shared counter that the waiters poll outside the lock.
 * It is not the current algorithm (arm-smmu-v3-cmdq.c) and not used for ECMDQs.
 *
 * Facts (Linux v4.20-v5.3 drivers/iommu/arm-smmu-v3.c, read through the search corpus):
 * - arm_smmu_cmdq_issue_cmd takes cmdq.lock (spin_lock_irqsave) around
 *   arm_smmu_cmdq_insert_cmd for each single command; batches did not exist, so a range
 *   invalidation took the lock once per TLBI.
 * - insert: while queue_insert_raw finds the queue full (by the software copy of cons),
 *   queue_poll_cons re-reads CMDQ_CONS (WFE with SEV); then the 16-byte entry is written and
 *   queue_inc_prod writes CMDQ_PROD with writel (a barrier, then the MMIO write).
 * - __arm_smmu_cmdq_issue_sync_msi: under the lock, msidata = ++sync_nr ("Fix unexpected
 *   CMD_SYNC timeout", 0f02477d1698, 4.20: the 4.19-stable AUTOSEL backport of November 2019
 *   shows 4.19 still taking it with atomic_inc_return_relaxed before the lock) and the
 *   CMD_SYNC goes in with CS=SIG_IRQ and MSIADDR = the physical address of
 *   smmu->sync_count; if the previous command inserted was already a CMD_SYNC its number is
 *   reused and nothing is inserted ("Avoid back-to-back CMD_SYNC operations", 57afa2225ea1,
 *   merged with 4.20's non-strict series). After unlocking, the waiter spins (smp_cond_load_acquire) until
 *   (int)(sync_count - msidata) >= 0: every waiter polls the same word.
 * - Without MSI (__arm_smmu_cmdq_issue_sync): the CMD_SYNC (CS=SIG_SEV) is inserted and the
 *   issuer polls CMDQ_CONS until the queue is empty, still holding the lock.
 * - The queue then had CMDQ_MAX_SZ_SHIFT 8 (256 entries); callers wanting that size set
 *   opts.cmdq_log2 = 8.
 * - Earlier eras (opts, set by the kernel-era table, docs/kernel-eras.md): 4.15-4.19
 *   (opts.cmdq_sync_unordered) took msidata with atomic_inc_return_relaxed(&smmu->sync_nr)
 *   before the lock and inserted every CMD_SYNC, back-to-back or not; 4.14 had no MSI
 *   completion at all (opts.sync_mode CONS: the drain under the lock below).
 *
 * Layout: the lock, the software prod|cons, sync_nr and the last opcode share one cache line
 * (struct arm_smmu_cmdq.legacy_*), as the 4.x struct arm_smmu_cmdq did, so the simulator
 * charges one line transfer per hand-over of the lock. sync_count is a word of its own in
 * simulated memory on the SMMU's node (the SMMU must be able to write it).
 */
#include <errno.h>
#include <string.h>

#include "drivers/arm-smmu-v3.h"

/* arm64's spinlock then (a ticket lock until 4.19 switched to queued spinlocks; both are FIFO):
 * take a ticket with one atomic, then wait with loads until it is served. Waiters never write
 * the line, so a hand-over costs one transfer, not one failed RMW per waiter. */
static bool ticket_served(uint64_t v, void *arg)
{
	return (uint32_t)v == *(const uint32_t *)arg;
}

static void legacy_lock(struct arm_smmu_cmdq *cmdq)
{
	uint32_t my;

	plat_scope_enter(PLAT_SCOPE_SPIN_LOCK);
	my = plat_fetch_add32(&cmdq->legacy_next, 1);
	if (plat_load32(&cmdq->legacy_owner) != my)
		plat_poll(&cmdq->legacy_owner, 4, ticket_served, &my, 0);
	plat_scope_leave();
}

static void legacy_unlock(struct arm_smmu_cmdq *cmdq)
{
	/* only the holder writes owner */
	plat_store32(&cmdq->legacy_owner, plat_load_relaxed32(&cmdq->legacy_owner) + 1);
}

static inline uint32_t lq_mask(const struct arm_smmu_cmdq *cmdq)
{
	return (2u << cmdq->q.max_n_shift) - 1; /* index and wrap */
}

static bool lq_full(const struct arm_smmu_cmdq *cmdq, uint32_t prod, uint32_t cons)
{
	uint32_t n = 1u << cmdq->q.max_n_shift;

	return ((prod - cons) & lq_mask(cmdq)) == n;
}

/* The counter the CMD_SYNC MSIs write: one page of the SMMU's node, taken under the lock the
 * first time (the 4.x driver had it in its device structure). */
static int legacy_sync_count(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	ilab_pa_t pa;

	if (cmdq->legacy_sync_count)
		return 0;
	if (ilab_mem_alloc_pages(smmu->mem, smmu->node, 0, &pa))
		return arm_smmu_set_error(-ENOMEM, "smmuv3: no memory for sync_count");
	cmdq->legacy_sync_count = ilab_mem_va(smmu->mem, pa, sizeof(uint32_t));
	if (!cmdq->legacy_sync_count) {
		ilab_mem_free_pages(smmu->mem, pa, 0);
		return arm_smmu_set_error(-EFAULT, "smmuv3: sync_count has no host view");
	}
	*cmdq->legacy_sync_count = 0;
	cmdq->legacy_sync_count_pa = pa;
	plat_track(&cmdq->legacy_next, "smmu.cmdq.legacy_lock");
	plat_track(cmdq->legacy_sync_count, "smmu.sync_count");
	return 0;
}

void arm_smmu_cmdq_legacy_free(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	if (cmdq->legacy_sync_count)
		ilab_mem_free_pages(smmu->mem, cmdq->legacy_sync_count_pa, 0);
	cmdq->legacy_sync_count = NULL;
}

/* Linux arm_smmu_cmdq_insert_cmd, with the lock held: wait for a free slot (re-reading CONS
 * only when the software copy says full), write the entry, then CMDQ_PROD. */
static int legacy_insert(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
			 const uint64_t cmd[2])
{
	uint64_t pc = plat_load64(&cmdq->legacy_pc), deadline = 0, check = 0;
	uint32_t prod = (uint32_t)pc, cons = (uint32_t)(pc >> 32);
	uint64_t *ent;

	while (lq_full(cmdq, prod, cons)) {
		if (!deadline) {
			deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
			check = plat_now_ns() + CMDQ_ERR_CHECK_NS;
		}
		cons = plat_mmio_read32(smmu->mmio, cmdq->q.cons_reg) & lq_mask(cmdq);
		if (!lq_full(cmdq, prod, cons))
			break;
		/* A full queue stopped on a bad command: the 4.x GERROR interrupt would skip it. */
		if (plat_now_ns() >= check) {
			check = plat_now_ns() + CMDQ_ERR_CHECK_NS;
			if (arm_smmu_gerror_handler(smmu))
				deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
		}
		if (plat_now_ns() >= deadline)
			return arm_smmu_set_error(-ETIMEDOUT, "smmuv3: CMDQ timeout (spinlock mode)");
		plat_yield(); /* Linux: wfe() with SEV, else cpu_relax/udelay back-off */
	}
	ent = cmdq->q.base + (size_t)(prod & ((1u << cmdq->q.max_n_shift) - 1)) * CMDQ_ENT_DWORDS;
	ent[0] = cmd[0];
	ent[1] = cmd[1];
	plat_mem_access(cmdq->q.home_node, CMDQ_ENT_DWORDS * 8, true);
	prod = (prod + 1) & lq_mask(cmdq);
	plat_store64(&cmdq->legacy_pc, prod | ((uint64_t)cons << 32));
	/* 4.20 remembers the opcode for its back-to-back CMD_SYNC test; 4.14-4.19 had no such
	 * field, and a store there would cost every hold one more invalidation of the waiters'
	 * copies of this line. */
	if (!smmu->opts.cmdq_sync_unordered)
		plat_store32(&cmdq->legacy_prev_op, (uint32_t)(cmd[0] & 0xff));
	plat_mb(); /* writel: the entry before the doorbell */
	plat_mmio_write32(smmu->mmio, cmdq->q.prod_reg, prod);
	arm_smmu_stat_add(&cmdq->st_entries, 1);
	arm_smmu_stat_add(&cmdq->st_prod_writes, 1);
	return 0;
}

static bool sync_reached(uint64_t v, void *arg)
{
	return (int32_t)((uint32_t)v - *(const uint32_t *)arg) >= 0;
}

static bool queue_drained(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq, uint32_t prod)
{
	uint32_t cons = plat_mmio_read32(smmu->mmio, cmdq->q.cons_reg) & lq_mask(cmdq);

	return cons == prod;
}

/* A CMD_SYNC written to the queue (a piggy-backed one is not). */
static void count_sync(struct arm_smmu_device *smmu)
{
	struct arm_smmu_pcpu_stats *st = arm_smmu_this_stats(smmu);

	arm_smmu_stat_add(&st->cmds, 1);
	arm_smmu_stat_add(&st->batches, 1);
	arm_smmu_stat_add(&st->syncs, 1);
	arm_smmu_stat_add(&st->by_opcode[CMDQ_OP_CMD_SYNC], 1);
}

/* Wait until sync_count has reached nr. A queue stopped on a bad command never gets there:
 * every CMDQ_ERR_CHECK_NS the waiter does what the GERROR interrupt did in 4.x (skip it). */
static int legacy_wait_count(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq, uint32_t nr)
{
	uint64_t deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
	int ret;

	plat_scope_enter(PLAT_SCOPE_CMDQ_SYNC_WAIT);
	for (;;) {
		ret = plat_poll(cmdq->legacy_sync_count, 4, sync_reached, &nr, CMDQ_ERR_CHECK_NS);
		if (!ret)
			break;
		if (arm_smmu_gerror_handler(smmu))
			deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
		else if (plat_now_ns() >= deadline)
			break;
	}
	plat_scope_leave();
	return ret;
}

/* The CMD_SYNC: MSI mode waits outside the lock on sync_count; SEV mode drains the queue with
 * the lock held (Linux queue_poll_cons(q, true, wfe)). */
static int legacy_sync(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	struct arm_smmu_cmdq_ent ent = { .opcode = CMDQ_OP_CMD_SYNC };
	uint64_t cmd[CMDQ_ENT_DWORDS], deadline;
	uint32_t nr;
	int ret;

	bool unordered = smmu->opts.cmdq_sync_unordered;

	/* 4.15-4.19: msidata = atomic_inc_return_relaxed(&smmu->sync_nr), before the lock, so
	 * two CMD_SYNCs can enter the queue out of number order (what 4.20 fixed) */
	nr = smmu->msipoll && unordered ? plat_fetch_add32(&cmdq->legacy_sync_nr_atomic, 1) + 1 : 0;
	legacy_lock(cmdq);
	if (smmu->msipoll) {
		ret = legacy_sync_count(smmu, cmdq);
		if (ret) {
			legacy_unlock(cmdq);
			return ret;
		}
		/* 4.20: piggy-back on a CMD_SYNC that is still the last command in the queue. */
		if (!unordered && plat_load32(&cmdq->legacy_prev_op) == CMDQ_OP_CMD_SYNC) {
			nr = plat_load32(&cmdq->legacy_sync_nr);
		} else {
			if (!unordered) {
				nr = plat_load32(&cmdq->legacy_sync_nr) + 1;
				plat_store32(&cmdq->legacy_sync_nr, nr);
			}
			ent.sync.msiaddr = cmdq->legacy_sync_count_pa;
			arm_smmu_cmdq_build_cmd(cmd, &ent);
			cmd[0] |= arm_field_prep(CMDQ_SYNC_0_MSIDATA, nr);
			ret = legacy_insert(smmu, cmdq, cmd);
			if (ret) {
				legacy_unlock(cmdq);
				return ret;
			}
			count_sync(smmu);
		}
		legacy_unlock(cmdq);
		return legacy_wait_count(smmu, cmdq, nr);
	}
	arm_smmu_cmdq_build_cmd(cmd, &ent);
	ret = legacy_insert(smmu, cmdq, cmd);
	if (!ret) {
		uint32_t prod = (uint32_t)plat_load64(&cmdq->legacy_pc);
		uint64_t check = plat_now_ns() + CMDQ_ERR_CHECK_NS;

		count_sync(smmu);
		deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
		while (!queue_drained(smmu, cmdq, prod)) {
			if (plat_now_ns() >= check) {
				check = plat_now_ns() + CMDQ_ERR_CHECK_NS;
				if (arm_smmu_gerror_handler(smmu))
					deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
			}
			if (plat_now_ns() >= deadline) {
				ret = -ETIMEDOUT;
				break;
			}
			plat_yield();
		}
		/* what we read is the newest cons: keep it for the next full check */
		if (!ret)
			plat_store64(&cmdq->legacy_pc, prod | ((uint64_t)prod << 32));
	}
	legacy_unlock(cmdq);
	return ret;
}

static void legacy_count(struct arm_smmu_device *smmu, const uint64_t *cmds, unsigned n)
{
	struct arm_smmu_pcpu_stats *st = arm_smmu_this_stats(smmu);

	arm_smmu_stat_add(&st->issues, 1);
	arm_smmu_stat_add(&st->cmds, n);
	arm_smmu_stat_add(&st->batches, n);
	for (unsigned i = 0; i < n; i++)
		arm_smmu_stat_add(&st->by_opcode[cmds[2 * i] & 0xff], 1);
}

int arm_smmu_cmdq_issue_cmdlist_legacy(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
				       const uint64_t *cmds, unsigned n, bool sync)
{
	unsigned done = 0;
	int ret = 0;

	/* One lock hold per command, as arm_smmu_cmdq_issue_cmd was called per command. */
	for (; done < n && !ret; done++) {
		legacy_lock(cmdq);
		ret = legacy_insert(smmu, cmdq, &cmds[2 * done]);
		legacy_unlock(cmdq);
	}
	legacy_count(smmu, cmds, ret ? done - 1 : done);
	if (ret) {
		/* no room within the timeout: this command and the rest were not written */
		struct arm_smmu_pcpu_stats *st = arm_smmu_this_stats(smmu);

		arm_smmu_stat_add(&st->space_timeouts, 1);
		arm_smmu_stat_add(&st->cmds_refused, n - (done - 1) + sync);
	}
	if (ret || !sync)
		return ret;
	{
		uint64_t t0 = plat_now_ns();
		struct arm_smmu_pcpu_stats *st;

		ret = legacy_sync(smmu, cmdq);
		st = arm_smmu_this_stats(smmu);
		arm_smmu_stat_add(&st->sync_wait_ns, plat_now_ns() - t0);
		if (ret) {
			arm_smmu_stat_add(&st->sync_timeouts, 1);
			return arm_smmu_set_error(ret, "smmuv3: CMD_SYNC timeout (spinlock mode)");
		}
	}
	return 0;
}
