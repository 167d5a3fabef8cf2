/* arm-smmu-v3-cmdq.c — the SMMUv3 command queue, software side: queue memory, command encoding,
 * Linux's lock-free multi-producer insertion (arm_smmu_cmdq_issue_cmdlist), CMD_SYNC completion
 * by MSI write-back or CONS polling, the 64-command batch, and the GERROR handler that skips a
 * command the main queue stopped on.
 * It is not the consumer (the model in src/hw/smmuv3 executes the commands) and not the policy
 * of which commands to send (arm-smmu-v3-tlb.c, arm-smmu-v3-ste.c).
 *
 * The algorithm follows Linux drivers/iommu/arm/arm-smmu-v3/arm-smmu-v3.c (unchanged since
 * v5.4; reference/linux-dma-path.md §5.4): one 64-bit word holds the shared prod and cons and is
 * updated with one cmpxchg per reservation; bit 31 of prod is the "owned" flag; a valid bitmap
 * with one bit per slot, whose "valid" polarity flips each lap, tells the owner when the slots
 * of the producers it gathered are written; the owner writes the PROD register once for the
 * whole batch and hands over through owner_prod. CMD_SYNC waiters hold a shared lock so that
 * the queue cannot wrap twice under them; the exclusive side only refreshes cons from hardware.
 * The lock comes in two versions (opts.cmdq_fair_lock), before and since Linux's 2026 change
 * "iommu/arm-smmu-v3: Improve CMDQ lock fairness and efficiency": see "the cmdq lock" below.
 *
 * The same object is an ECMDQ (arm-smmu-v3-ecmdq.c, reference §6): a shared ECMDQ runs this
 * algorithm with PROD.EN|ERRACK in its PROD writes; an ECMDQ that is one CPU's alone takes the
 * uncontended path (cmdq_issue_exclusive), as RFC patch 7 of the Zhen Lei series did.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>


#include "drivers/arm-smmu-v3.h"
#include <iommulab/plat.h>

/* ---- queue pointer arithmetic (Linux Q_IDX/Q_WRP/queue_has_space/queue_inc_prod_n) ---- */

static inline uint32_t q_idx(const struct arm_smmu_ll_queue *q, uint32_t p)
{
	return p & ((1u << q->max_n_shift) - 1);
}
static inline uint32_t q_wrp(const struct arm_smmu_ll_queue *q, uint32_t p)
{
	return p & (1u << q->max_n_shift);
}
static inline uint32_t q_ovf(uint32_t p)
{
	return p & Q_OVERFLOW_FLAG;
}

static bool queue_has_space(const struct arm_smmu_ll_queue *q, uint32_t n)
{
	uint32_t prod = q_idx(q, q->prod), cons = q_idx(q, q->cons), space;

	if (q_wrp(q, q->prod) == q_wrp(q, q->cons))
		space = (1u << q->max_n_shift) - (prod - cons);
	else
		space = cons - prod;
	return space >= n;
}

/* Has the consumer moved past `prod` (wrap-aware)? */
static bool queue_consumed(const struct arm_smmu_ll_queue *q, uint32_t prod)
{
	return (q_wrp(q, q->cons) == q_wrp(q, prod) && q_idx(q, q->cons) > q_idx(q, prod)) ||
	       (q_wrp(q, q->cons) != q_wrp(q, prod) && q_idx(q, q->cons) <= q_idx(q, prod));
}

static uint32_t queue_inc_prod_n(const struct arm_smmu_ll_queue *q, uint32_t n)
{
	uint32_t prod = (q_wrp(q, q->prod) | q_idx(q, q->prod)) + n;

	return q_ovf(q->prod) | q_wrp(q, prod) | q_idx(q, prod);
}

static inline uint64_t *queue_ent(const struct arm_smmu_queue *q, const struct arm_smmu_ll_queue *l,
				  uint32_t p)
{
	return q->base + (size_t)q_idx(l, p) * q->ent_dwords;
}

/* Simulation: building `count` commands and storing them into the slots from llq->prod, charged
 * line by line from where the queue's lines are (a line the SMMU's MSI left in the home
 * node's cache, or one this CPU still holds); two runs when the slots wrap. */
static void cmdq_charge_slots(const struct arm_smmu_queue *q, const struct arm_smmu_ll_queue *llq,
			      unsigned count)
{
	struct arm_smmu_ll_queue at = *llq;

	if (!plat_sim)
		return;
	plat_charge_n(PLAT_CHARGE_CMD_BUILD, count);
	while (count) {
		uint32_t idx = q_idx(&at, at.prod);
		unsigned run = (1u << at.max_n_shift) - idx;

		if (run > count)
			run = count;
		plat_mem_touch(queue_ent(q, &at, at.prod), (size_t)run * q->ent_dwords * 8, true);
		at.prod = queue_inc_prod_n(&at, run);
		count -= run;
	}
}

/* ---- queue memory -------------------------------------------------------------------------- */

/* Linux arm_smmu_init_one_queue: coherent memory from the SMMU's node, so CMA placement decides
 * where it lives; halve the size on failure, down to one page. */
int arm_smmu_queue_alloc(struct arm_smmu_device *smmu, struct arm_smmu_queue *q, unsigned log2,
			 unsigned ent_dwords, uint64_t prod_reg, uint64_t cons_reg)
{
	struct ilab_mem_alloc_info info;
	int err = -ENOMEM;

	memset(q, 0, sizeof(*q));
	for (;;) {
		size_t bytes = ((size_t)ent_dwords * 8) << log2;

		err = ilab_mem_alloc_coherent(smmu->mem, smmu->node, bytes, &q->base_pa, &info);
		if (!err) {
			q->bytes = bytes;
			break;
		}
		if (bytes <= ILAB_PAGE_SIZE)
			return arm_smmu_set_error(err, "smmuv3: no coherent memory for a queue");
		log2--;
	}
	q->base = ilab_mem_va(smmu->mem, q->base_pa, q->bytes);
	if (!q->base) {
		ilab_mem_free_coherent(smmu->mem, q->base_pa, q->bytes);
		return arm_smmu_set_error(-EFAULT, "smmuv3: queue memory has no host view");
	}
	memset(q->base, 0, q->bytes);
	q->home_node = info.home_node;
	q->max_n_shift = log2;
	q->ent_dwords = ent_dwords;
	q->prod_reg = prod_reg;
	q->cons_reg = cons_reg;
	q->q_base = Q_BASE_RWA | (q->base_pa & Q_BASE_ADDR_MASK) |
		    arm_field_prep(Q_BASE_LOG2SIZE, log2);
	plat_store64(&q->llq, 0);
	return 0;
}

void arm_smmu_queue_free(struct arm_smmu_device *smmu, struct arm_smmu_queue *q)
{
	if (q->base)
		ilab_mem_free_coherent(smmu->mem, q->base_pa, q->bytes);
	q->base = NULL;
}

int arm_smmu_cmdq_init(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	unsigned nents = 1u << cmdq->q.max_n_shift;

	/* The bitmap trick needs whole 64-bit words, and a batch must fit (Linux: probe fails
	 * if the queue is not larger than CMDQ_BATCH_ENTRIES). */
	if (nents <= CMDQ_BATCH_ENTRIES)
		return arm_smmu_set_error(-ENODEV, "smmuv3: command queue of %u entries is too small",
					  nents);
	cmdq->valid_words = nents / 64;
	cmdq->valid_map = plat_zalloc_array(cmdq->valid_words, sizeof(plat_word64));
	if (!cmdq->valid_map)
		return arm_smmu_set_error(-ENOMEM, "smmuv3: no memory for the valid bitmap");
	plat_store32(&cmdq->owner_prod, 0);
	plat_store32(&cmdq->lock, 0);
	cmdq->fair_lock = smmu->opts.cmdq_fair_lock;
	for (unsigned i = 0; i < cmdq->valid_words; i++)
		plat_store64(&cmdq->valid_map[i], 0);
	plat_stat_set64(&cmdq->st_entries, 0);
	plat_stat_set64(&cmdq->st_prod_writes, 0);
	plat_track(&cmdq->q.llq, cmdq->ecmdq ? "smmu.ecmdq.llq" : "smmu.cmdq.llq");
	plat_track(&cmdq->owner_prod, cmdq->ecmdq ? "smmu.ecmdq.owner_prod" : "smmu.cmdq.owner_prod");
	plat_track(&cmdq->lock, cmdq->ecmdq ? "smmu.ecmdq.lock" : "smmu.cmdq.lock");
	for (unsigned i = 0; i < cmdq->valid_words; i++)
		plat_track(&cmdq->valid_map[i],
			   cmdq->ecmdq ? "smmu.ecmdq.valid_map" : "smmu.cmdq.valid_map");
	(void)smmu;
	return 0;
}

void arm_smmu_cmdq_free(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	arm_smmu_cmdq_legacy_free(smmu, cmdq);
	free(cmdq->valid_map);
	cmdq->valid_map = NULL;
	arm_smmu_queue_free(smmu, &cmdq->q);
}

struct arm_smmu_pcpu_stats *arm_smmu_this_stats(struct arm_smmu_device *smmu)
{
	return plat_this_cpu_ptr(smmu->stats);
}

/* ---- command encoding (Linux arm_smmu_cmdq_build_cmd) ------------------------------------ */

int arm_smmu_cmdq_build_cmd(uint64_t cmd[2], const struct arm_smmu_cmdq_ent *ent)
{
	cmd[0] = arm_field_prep(CMDQ_0_OP, ent->opcode);
	cmd[1] = 0;

	switch (ent->opcode) {
	case CMDQ_OP_TLBI_EL2_ALL:
	case CMDQ_OP_TLBI_NSNH_ALL:
		break;
	case CMDQ_OP_PREFETCH_CFG:
		cmd[0] |= arm_field_prep(CMDQ_PREFETCH_0_SID, ent->prefetch.sid);
		break;
	case CMDQ_OP_CFGI_CD:
		cmd[0] |= arm_field_prep(CMDQ_CFGI_0_SSID, ent->cfgi.ssid);
		/* fallthrough */
	case CMDQ_OP_CFGI_STE:
		cmd[0] |= arm_field_prep(CMDQ_CFGI_0_SID, ent->cfgi.sid);
		cmd[1] |= ent->cfgi.leaf ? CMDQ_CFGI_1_LEAF : 0;
		break;
	case CMDQ_OP_CFGI_CD_ALL:
		cmd[0] |= arm_field_prep(CMDQ_CFGI_0_SID, ent->cfgi.sid);
		break;
	case CMDQ_OP_CFGI_ALL:
		/* Cover the whole StreamID space: RANGE 31 (§4.3.2). */
		cmd[1] |= arm_field_prep(CMDQ_CFGI_1_RANGE, 31);
		break;
	case CMDQ_OP_TLBI_NH_VA:
		cmd[0] |= arm_field_prep(CMDQ_TLBI_0_NUM, ent->tlbi.num);
		cmd[0] |= arm_field_prep(CMDQ_TLBI_0_SCALE, ent->tlbi.scale);
		cmd[0] |= arm_field_prep(CMDQ_TLBI_0_VMID, ent->tlbi.vmid);
		cmd[0] |= arm_field_prep(CMDQ_TLBI_0_ASID, ent->tlbi.asid);
		cmd[1] |= ent->tlbi.leaf ? CMDQ_TLBI_1_LEAF : 0;
		cmd[1] |= arm_field_prep(CMDQ_TLBI_1_TTL, ent->tlbi.ttl);
		cmd[1] |= arm_field_prep(CMDQ_TLBI_1_TG, ent->tlbi.tg);
		cmd[1] |= ent->tlbi.addr & CMDQ_TLBI_1_VA_MASK;
		break;
	case CMDQ_OP_TLBI_NH_ASID:
		cmd[0] |= arm_field_prep(CMDQ_TLBI_0_ASID, ent->tlbi.asid);
		cmd[0] |= arm_field_prep(CMDQ_TLBI_0_VMID, ent->tlbi.vmid);
		break;
	case CMDQ_OP_CMD_SYNC:
		if (ent->sync.msiaddr) {
			cmd[0] |= arm_field_prep(CMDQ_SYNC_0_CS, CMDQ_SYNC_0_CS_IRQ);
			cmd[1] |= ent->sync.msiaddr & CMDQ_SYNC_1_MSIADDR_MASK;
		} else {
			cmd[0] |= arm_field_prep(CMDQ_SYNC_0_CS, CMDQ_SYNC_0_CS_SEV);
		}
		cmd[0] |= arm_field_prep(CMDQ_SYNC_0_MSH, ARM_SMMU_SH_ISH);
		cmd[0] |= arm_field_prep(CMDQ_SYNC_0_MSIATTR, ARM_SMMU_MEMATTR_OIWB);
		/* MSIDATA stays 0: completion is the first word of the command becoming 0. */
		break;
	default:
		return -ENOENT;
	}
	return 0;
}

static void build_sync_cmd(uint64_t cmd[2], struct arm_smmu_device *smmu,
			   const struct arm_smmu_cmdq *cmdq, const struct arm_smmu_ll_queue *l,
			   uint32_t prod)
{
	const struct arm_smmu_queue *q = &cmdq->q;
	struct arm_smmu_cmdq_ent ent = { .opcode = CMDQ_OP_CMD_SYNC };

	/* MSI polling: the SMMU writes MSIDATA (0) over this very slot when the sync completes. */
	if (smmu->msipoll)
		ent.sync.msiaddr = q->base_pa + (uint64_t)q_idx(l, prod) * q->ent_dwords * 8;
	arm_smmu_cmdq_build_cmd(cmd, &ent);
	/* A queue that signals nothing (a Tegra241 VCMDQ): CS = SIG_NONE, CONS is polled
	 * (Linux arm_smmu_cmdq_needs_busy_polling). */
	if (cmdq->busy_poll)
		cmd[0] &= ~CMDQ_SYNC_0_CS;
}

/* ---- the cmdq lock: shared for CMD_SYNC waiters, exclusive to refresh cons --------------
 *
 * One int: > 0 shared holders, INT_MIN (+ N) exclusive (with N shared lockers waiting). A
 * CMD_SYNC issuer takes it shared, after reserving its slots and before marking them valid;
 * a producer waiting for space near a full queue tries it exclusive to read CONS.
 *
 * Before 2026 (fair_lock false): the exclusive unlock stores 0, wiping the N increments of the
 * waiting shared lockers, which must then win a cmpxchg from a non-negative value against
 * every space waiter's exclusive trylock (cmpxchg 0 -> INT_MIN). Near a full queue there is a
 * stream of such trylocks, so a shared locker may lose again and again; while it waits its
 * slots stay invalid, the batch owner cannot ring the doorbell, the queue cannot drain, and
 * more producers pile up waiting for space: the soft lockups the change reports.
 * Since (fair_lock true): the exclusive unlock clears only the sign bit, so the waiters'
 * increments become the shared count at once (they hold the lock, an exclusive trylock fails
 * until they release it), and a shared locker just waits for the value to turn positive. */

static bool lock_nonneg(uint64_t v, void *arg)
{
	(void)arg;
	return (int32_t)(uint32_t)v >= 0;
}

static bool lock_positive(uint64_t v, void *arg)
{
	(void)arg;
	return (int32_t)(uint32_t)v > 0;
}

static void cmdq_shared_lock_slow(struct arm_smmu_cmdq *cmdq)
{
	if (cmdq->fair_lock) {
		/* the unlock keeps our increment: we hold the lock once the sign bit is gone */
		plat_poll(&cmdq->lock, 4, lock_positive, NULL, 0);
		return;
	}
	/* the unlock wiped our increment: take the lock again, racing the trylocks */
	for (;;) {
		uint32_t v;

		plat_poll(&cmdq->lock, 4, lock_nonneg, NULL, 0);
		v = plat_load32(&cmdq->lock);
		if ((int32_t)v >= 0 && plat_cmpxchg32(&cmdq->lock, &v, v + 1))
			return;
	}
}

static void cmdq_shared_lock(struct arm_smmu_cmdq *cmdq)
{
	uint64_t t0, waited;

	/* An exclusive holder set INT_MIN: our increment keeps the value negative. */
	if ((int32_t)plat_fetch_add32(&cmdq->lock, 1) >= 0)
		return;
	t0 = plat_now_ns();
	cmdq_shared_lock_slow(cmdq);
	waited = plat_now_ns() - t0;
	plat_stat_add64(&cmdq->st_lock_shared_waits, 1);
	plat_stat_add64(&cmdq->st_lock_shared_wait_ns, waited);
	if (waited > plat_stat_read64(&cmdq->st_lock_shared_wait_max_ns))
		plat_stat_set64(&cmdq->st_lock_shared_wait_max_ns, waited);
}

static void cmdq_shared_unlock(struct arm_smmu_cmdq *cmdq)
{
	plat_fetch_sub32(&cmdq->lock, 1);
}

/* Fails when we are the last holder: then the caller may publish its view of cons. */
static bool cmdq_shared_tryunlock(struct arm_smmu_cmdq *cmdq)
{
	if (plat_load32(&cmdq->lock) == 1)
		return false;
	cmdq_shared_unlock(cmdq);
	return true;
}

static bool cmdq_exclusive_trylock(struct arm_smmu_cmdq *cmdq)
{
	uint32_t zero = 0;

	if (!plat_cmpxchg32(&cmdq->lock, &zero, (uint32_t)INT32_MIN))
		return false;
	plat_stat_add64(&cmdq->st_lock_exclusive, 1);
	return true;
}

static void cmdq_exclusive_unlock(struct arm_smmu_cmdq *cmdq)
{
	if (cmdq->fair_lock)
		plat_fetch_and32(&cmdq->lock, (uint32_t)INT32_MAX); /* clear the sign bit only */
	else
		plat_store32(&cmdq->lock, 0);
}

/* Linux does WRITE_ONCE(llq.cons): a 32-bit store into half of the word others cmpxchg. With
 * one tracked 64-bit word the same effect is a cmpxchg loop that only replaces the cons half. */
static void cmdq_publish_cons(struct arm_smmu_cmdq *cmdq, uint32_t cons)
{
	uint64_t old = plat_load64(&cmdq->q.llq);

	while (!plat_cmpxchg64(&cmdq->q.llq, &old, (old & 0xffffffffull) | ((uint64_t)cons << 32)))
		;
}

/* ---- waiting for space (Linux arm_smmu_cmdq_poll_until_not_full, with the 2025 fix: wait for
 * room for n entries, one deadline per issue) ------------------------------------------------ */

struct space_arg {
	unsigned shift;
	uint32_t n;
};

static bool llq_has_space(uint64_t v, void *arg)
{
	const struct space_arg *a = arg;
	struct arm_smmu_ll_queue l = { .max_n_shift = a->shift };

	llq_set(&l, v);
	return queue_has_space(&l, a->n);
}

/* The hardware CONS (index and wrap). An ECMDQ whose CONS.ERR differs from our ERRACK has
 * stopped on a bad command: skip it (arm-smmu-v3-ecmdq.c) so that the queue moves on. */
static uint32_t read_hw_cons(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	const struct arm_smmu_queue *q = &cmdq->q;
	uint32_t cons = plat_mmio_read32(smmu->mmio, q->cons_reg);

	if (cmdq->ecmdq && (cons & ECMDQ_CONS_ERR) != plat_load_relaxed32(&cmdq->errack) &&
	    arm_smmu_ecmdq_skip_err(smmu, cmdq))
		cons = plat_mmio_read32(smmu->mmio, q->cons_reg);
	return cons & ((2u << q->max_n_shift) - 1); /* index and wrap; not CONS.ERR */
}

/* Advance the hardware. An ECMDQ's PROD also holds EN (kept set) and ERRACK, which must keep
 * the value of the last acknowledged error: writing it back to an older value would stop the
 * queue again. On a shared ECMDQ the recovery of another CPU may change ERRACK at any time,
 * hence the lock (one uncontended lock per batch: owners are already serialized). */
static void cmdq_write_prod(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq, uint32_t prod)
{
	if (!cmdq->ecmdq) {
		plat_mmio_write32(smmu->mmio, cmdq->q.prod_reg, prod);
		return;
	}
	if (!cmdq->exclusive)
		plat_spin_lock(&cmdq->prod_lock);
	plat_mmio_write32(smmu->mmio, cmdq->q.prod_reg,
			  prod | (uint32_t)ECMDQ_PROD_EN | plat_load_relaxed32(&cmdq->errack));
	if (!cmdq->exclusive)
		plat_spin_unlock(&cmdq->prod_lock);
}

static int cmdq_wait_for_space(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
			       struct arm_smmu_ll_queue *llq, uint32_t n, uint64_t deadline)
{
	struct space_arg a = { .shift = cmdq->q.max_n_shift, .n = n };
	uint64_t check = plat_now_ns() + CMDQ_ERR_CHECK_NS;

	for (;;) {
		if (cmdq_exclusive_trylock(cmdq)) {
			cmdq_publish_cons(cmdq, read_hw_cons(smmu, cmdq));
			cmdq_exclusive_unlock(cmdq);
		} else {
			/* Somebody else refreshes cons (the exclusive holder, or the last CMD_SYNC
			 * waiter): watch the shared word for a while, then retry the lock. */
			plat_poll(&cmdq->q.llq, 8, llq_has_space, &a, 2000);
		}
		llq_set(llq, plat_load64(&cmdq->q.llq));
		if (queue_has_space(llq, n))
			return 0;
		/* A full queue stopped on an error: nobody else may be waiting to notice. */
		if (!cmdq->ecmdq && plat_now_ns() >= check) {
			check = plat_now_ns() + CMDQ_ERR_CHECK_NS;
			arm_smmu_cmdq_recover(smmu, cmdq);
		}
		if (plat_now_ns() >= deadline)
			return -ETIMEDOUT;
		plat_yield();
	}
}

/* ---- the valid bitmap (Linux __arm_smmu_cmdq_poll_set_valid_map) --------------------------- */

struct valid_arg {
	uint64_t mask, valid;
};

static bool valid_bits_set(uint64_t v, void *arg)
{
	const struct valid_arg *a = arg;

	return (v & a->mask) == a->valid;
}

static void cmdq_poll_set_valid_map(struct arm_smmu_cmdq *cmdq, uint32_t sprod, uint32_t eprod,
				    bool set)
{
	struct arm_smmu_ll_queue l = { .max_n_shift = cmdq->q.max_n_shift, .prod = sprod };
	uint32_t ewidx = q_idx(&l, eprod) / 64, ebidx = q_idx(&l, eprod) % 64;

	while (l.prod != eprod) {
		uint32_t swidx = q_idx(&l, l.prod) / 64, sbidx = q_idx(&l, l.prod) % 64;
		uint32_t limit = 64;
		plat_word64 *w = &cmdq->valid_map[swidx];
		uint64_t mask;
		bool wrap = q_wrp(&l, l.prod) != 0;

		if (swidx == ewidx && sbidx < ebidx)
			limit = ebidx;
		mask = (limit == 64 ? ~0ull : ((1ull << limit) - 1)) & ~((1ull << sbidx) - 1);

		/* Valid is the inverse of the wrap bit: a zeroed map is invalid, and flipping the
		 * bits each lap makes them invalid again. The bits of [sprod, eprod) belong to us
		 * alone this lap, so Linux's XOR is an OR on even laps and an AND-NOT on odd ones. */
		if (set) {
			if (!wrap)
				plat_fetch_or64(w, mask);
			else
				plat_fetch_and64(w, ~mask);
		} else {
			struct valid_arg a = { .mask = mask, .valid = wrap ? 0 : mask };

			plat_poll(w, 8, valid_bits_set, &a, 0);
		}
		l.prod = queue_inc_prod_n(&l, limit - sbidx);
	}
}

/* ---- CMD_SYNC completion (Linux arm_smmu_cmdq_poll_until_sync) --------------------------- */

static bool word_is_zero(uint64_t v, void *arg)
{
	(void)arg;
	return v == 0;
}

/* MSI write-back: the SMMU writes MSIDATA = 0 over the first 32 bits of our CMD_SYNC. A queue
 * stopped on a bad command never gets there: every CMDQ_ERR_CHECK_NS the waiter looks for the
 * error and recovers it, which restarts the clock, as the queue moves again. */
static int poll_until_msi(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
			  struct arm_smmu_ll_queue *llq)
{
	const uint32_t *slot = (const uint32_t *)queue_ent(&cmdq->q, llq, llq->prod);
	uint64_t deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
	int ret;

	for (;;) {
		ret = plat_poll(slot, 4, word_is_zero, NULL, CMDQ_ERR_CHECK_NS);
		if (!ret)
			break;
		if (arm_smmu_cmdq_recover(smmu, cmdq))
			deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
		else if (plat_now_ns() >= deadline)
			break;
	}
	/* On a timeout Linux (__arm_smmu_cmdq_poll_until_msi) sets cons = prod, as if the SMMU
	 * had read up to our CMD_SYNC, and the last shared holder publishes it: then producers
	 * overwrite slots the SMMU has not read yet (their commands are lost, or run twice) and
	 * prod may pass the real CONS by more than a lap, which queue_has_space cannot see.
	 * Linux treats a timeout as a broken SMMU; here it is usually a host that did not run
	 * the model's thread for a second, so a timed-out waiter takes the CONS register instead:
	 * only slots the SMMU has read are reused (test_smmuv3_drv_cmdq_timeout). */
	llq->cons = ret ? read_hw_cons(smmu, cmdq) : queue_inc_prod_n(llq, 1);
	return ret;
}

/* CONS polling: read the CONS register until it has passed our CMD_SYNC. The readl matters:
 * our later shared_tryunlock must see a cons at least this new. */
static int poll_until_consumed(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
			       struct arm_smmu_ll_queue *llq)
{
	uint32_t prod = llq->prod;
	uint64_t now = plat_now_ns(), deadline = now + ARM_SMMU_POLL_TIMEOUT_NS;
	uint64_t check = now + CMDQ_ERR_CHECK_NS;
	unsigned spins = 0;

	llq_set(llq, plat_load64(&cmdq->q.llq));
	llq->prod = prod;
	for (;;) {
		if (queue_consumed(llq, prod))
			return 0;
		/* Linux queue_poll: cpu_relax for ARM_SMMU_POLL_SPIN_COUNT (10), then back off;
		 * here the back-off gives the host CPU to the model thread. */
		if (++spins > 10) {
			now = plat_now_ns();
			/* An ECMDQ's error is seen in each CONS read; the main queue's in GERROR,
			 * a VCMDQ's in its own GERROR. */
			if (!cmdq->ecmdq && now >= check) {
				check = now + CMDQ_ERR_CHECK_NS;
				if (arm_smmu_cmdq_recover(smmu, cmdq))
					deadline = now + ARM_SMMU_POLL_TIMEOUT_NS;
			}
			if (now >= deadline)
				return -ETIMEDOUT;
			plat_yield();
		} else {
			plat_cpu_relax();
		}
		llq->cons = read_hw_cons(smmu, cmdq);
	}
}

/* Linux __arm_smmu_cmdq_poll_until_sync: MSI polling unless the queue needs busy polling.
 * llq->prod is our CMD_SYNC. The simulator's trace draws the wait's end from that CMD_SYNC,
 * which the board names by its entry's address (board_smmuv3_trace_cmd): not Linux's. */
static int poll_until_sync(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
			   struct arm_smmu_ll_queue *llq)
{
	uint64_t entry = cmdq->q.base_pa + (uint64_t)q_idx(llq, llq->prod) * cmdq->q.ent_dwords * 8;
	int ret;

	if (smmu->msipoll && !cmdq->busy_poll)
		ret = poll_until_msi(smmu, cmdq, llq);
	else
		ret = poll_until_consumed(smmu, cmdq, llq);
	if (!ret)
		plat_trace_flow_in(entry);
	return ret;
}

/* ---- insertion (Linux arm_smmu_cmdq_issue_cmdlist) ------------------------------------------ */

static void count_issue(struct arm_smmu_device *smmu, const uint64_t *cmds, unsigned n, bool sync,
			bool owner, unsigned retries, bool waited)
{
	struct arm_smmu_pcpu_stats *st = arm_smmu_this_stats(smmu);

	arm_smmu_stat_add(&st->issues, 1);
	arm_smmu_stat_add(&st->cmds, n + sync);
	for (unsigned i = 0; i < n; i++)
		arm_smmu_stat_add(&st->by_opcode[cmds[2 * i] & 0xff], 1);
	if (sync) {
		arm_smmu_stat_add(&st->syncs, 1);
		arm_smmu_stat_add(&st->by_opcode[CMDQ_OP_CMD_SYNC], 1);
	}
	if (owner)
		arm_smmu_stat_add(&st->batches, 1);
	if (retries)
		arm_smmu_stat_add(&st->cmpxchg_retries, retries);
	if (waited)
		arm_smmu_stat_add(&st->queue_full_waits, 1);
}

/* An issue that found no room before its deadline: none of its commands was written. Linux
 * returns -ETIMEDOUT and its batch_add ignores that, so they are dropped; counted here so that
 * a caller can tell a dropped command from a lost one. */
static void count_refused(struct arm_smmu_device *smmu, unsigned n, bool sync)
{
	struct arm_smmu_pcpu_stats *st = arm_smmu_this_stats(smmu);

	arm_smmu_stat_add(&st->space_timeouts, 1);
	arm_smmu_stat_add(&st->cmds_refused, n + sync);
}

/* Per-queue counters: only the owner of a batch writes them (see struct arm_smmu_cmdq). */
static void count_batch(struct arm_smmu_cmdq *cmdq, uint32_t start, uint32_t end)
{
	uint32_t m = (2u << cmdq->q.max_n_shift) - 1; /* index and wrap */

	arm_smmu_stat_add(&cmdq->st_entries, (end - start) & m);
	arm_smmu_stat_add(&cmdq->st_prod_writes, 1);
}

/* The uncontended path (Zhen Lei RFC patch 7, arm_smmu_ecmdq_issue_cmdlist): the queue is this
 * CPU's alone, so nobody else reserves slots, writes entries or rings PROD: no cmpxchg, valid
 * bitmap, owner hand-over or shared lock. The queue's llq word is our private copy of prod and
 * cons (one tracked line that stays in our cache). Assumption: a CPU is one thread at a time
 * (plat binds each thread to its CPU and the simulator runs one fiber per CPU), and nothing
 * preempts it between the read of llq and its update — Linux disables preemption for that. */
static int cmdq_issue_exclusive(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
				const uint64_t *cmds, unsigned n, bool sync)
{
	struct arm_smmu_ll_queue llq = { .max_n_shift = cmdq->q.max_n_shift };
	uint64_t cmd_sync[CMDQ_ENT_DWORDS], deadline = 0;
	uint32_t start, end;
	bool waited = false;
	int ret = 0;

	llq_set(&llq, plat_load_relaxed64(&cmdq->q.llq));
	while (!queue_has_space(&llq, n + sync)) {
		if (!waited)
			deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
		waited = true;
		llq.cons = read_hw_cons(smmu, cmdq); /* also skips a command in error */
		if (queue_has_space(&llq, n + sync))
			break;
		if (plat_now_ns() >= deadline) {
			count_issue(smmu, cmds, 0, false, false, 0, waited);
			count_refused(smmu, n, sync);
			return arm_smmu_set_error(-ETIMEDOUT, "smmuv3: ECMDQ %u timeout", cmdq->index);
		}
		plat_yield();
	}
	start = llq.prod;
	plat_scope_enter(PLAT_SCOPE_CMDQ_WRITE);
	for (unsigned i = 0; i < n; i++) {
		uint64_t *ent = queue_ent(&cmdq->q, &llq, queue_inc_prod_n(&llq, i));

		ent[0] = cmds[2 * i];
		ent[1] = cmds[2 * i + 1];
	}
	if (sync) {
		uint64_t *ent;

		llq.prod = queue_inc_prod_n(&llq, n);
		build_sync_cmd(cmd_sync, smmu, cmdq, &llq, llq.prod);
		ent = queue_ent(&cmdq->q, &llq, llq.prod);
		ent[0] = cmd_sync[0];
		ent[1] = cmd_sync[1];
		llq.prod = start;
	}
	cmdq_charge_slots(&cmdq->q, &llq, n + sync);
	/* The entries before the doorbell (the model reads PROD with acquire semantics). */
	plat_mb();
	plat_scope_leave();
	end = queue_inc_prod_n(&llq, n + sync);
	plat_scope_enter(PLAT_SCOPE_CMDQ_DOORBELL);
	cmdq_write_prod(smmu, cmdq, end);
	count_batch(cmdq, start, end);
	plat_scope_leave();

	if (sync) {
		uint64_t t0 = plat_now_ns();
		uint32_t cons = llq.cons;
		struct arm_smmu_pcpu_stats *st;

		llq.prod = queue_inc_prod_n(&llq, n); /* our CMD_SYNC */
		plat_scope_enter(PLAT_SCOPE_CMDQ_SYNC_WAIT);
		ret = poll_until_sync(smmu, cmdq, &llq);
		plat_scope_leave();
		st = arm_smmu_this_stats(smmu);
		arm_smmu_stat_add(&st->sync_wait_ns, plat_now_ns() - t0);
		if (ret) {
			arm_smmu_stat_add(&st->sync_timeouts, 1);
			arm_smmu_set_error(ret, "smmuv3: CMD_SYNC timeout (ECMDQ %u, prod 0x%x)",
					   cmdq->index, llq.prod);
			llq.cons = cons; /* what we know was consumed: never reuse unread slots */
		}
	}
	llq.prod = end;
	plat_store64(&cmdq->q.llq, llq_val(&llq));
	count_issue(smmu, cmds, n, sync, true, 0, waited);
	return ret;
}

static bool owner_prod_is(uint64_t v, void *arg)
{
	return (uint32_t)v == *(const uint32_t *)arg;
}

static int issue_cmdlist(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
			 const uint64_t *cmds, unsigned n, bool sync)
{
	struct arm_smmu_ll_queue llq = { .max_n_shift = cmdq->q.max_n_shift }, head = llq;
	uint64_t cmd_sync[CMDQ_ENT_DWORDS], deadline = 0;
	unsigned retries = 0;
	bool owner, waited = false;
	uint32_t prod;
	int ret = 0;

	if (n + sync == 0)
		return 0;
	if (n + sync > (1u << llq.max_n_shift))
		return -EINVAL;
	if (cmdq->exclusive)
		return cmdq_issue_exclusive(smmu, cmdq, cmds, n, sync);
	if (smmu->opts.cmdq_mode == ILAB_SMMU_CMDQ_SPINLOCK && !cmdq->ecmdq)
		return arm_smmu_cmdq_issue_cmdlist_legacy(smmu, cmdq, cmds, n, sync);

	/* 1. Reserve n + sync slots with one cmpxchg on prod+cons. */
	plat_scope_enter(PLAT_SCOPE_CMDQ_CLAIM);
	llq_set(&llq, plat_load64(&cmdq->q.llq));
	for (;;) {
		uint64_t old;

		while (!queue_has_space(&llq, n + sync)) {
			if (!waited)
				deadline = plat_now_ns() + ARM_SMMU_POLL_TIMEOUT_NS;
			waited = true;
			if (cmdq_wait_for_space(smmu, cmdq, &llq, n + sync, deadline)) {
				plat_scope_leave();
				count_issue(smmu, cmds, 0, false, false, retries, waited);
				count_refused(smmu, n, sync);
				return arm_smmu_set_error(-ETIMEDOUT, "smmuv3: CMDQ timeout");
			}
		}
		head.cons = llq.cons;
		head.prod = queue_inc_prod_n(&llq, n + sync) | CMDQ_PROD_OWNED_FLAG;
		old = llq_val(&llq);
		plat_scope_event(); /* one attempt */
		if (plat_cmpxchg64(&cmdq->q.llq, &old, llq_val(&head)))
			break;
		llq_set(&llq, old);
		retries++;
	}
	plat_scope_leave();
	/* We own the queue iff nobody was gathering when we appended. */
	owner = !(llq.prod & CMDQ_PROD_OWNED_FLAG);
	head.prod &= ~CMDQ_PROD_OWNED_FLAG;
	llq.prod &= ~CMDQ_PROD_OWNED_FLAG;

	/* 2. Write the commands (plain stores: only we own these slots until they are valid). */
	plat_scope_enter(PLAT_SCOPE_CMDQ_WRITE);
	for (unsigned i = 0; i < n; i++) {
		uint64_t *ent = queue_ent(&cmdq->q, &llq, queue_inc_prod_n(&llq, i));

		ent[0] = cmds[2 * i];
		ent[1] = cmds[2 * i + 1];
	}
	if (sync) {
		uint64_t *ent;

		prod = queue_inc_prod_n(&llq, n);
		build_sync_cmd(cmd_sync, smmu, cmdq, &llq, prod);
		ent = queue_ent(&cmdq->q, &llq, prod);
		ent[0] = cmd_sync[0];
		ent[1] = cmd_sync[1];
		/* The queue must not wrap twice while we wait for our CMD_SYNC: hold the lock
		 * shared before our slots become valid. */
		cmdq_shared_lock(cmdq);
	}

	cmdq_charge_slots(&cmdq->q, &llq, n + sync);
	/* 3. Publish: commands first (the RMW on the bitmap orders them), then valid bits. */
	plat_mb();
	cmdq_poll_set_valid_map(cmdq, llq.prod, head.prod, true);
	plat_scope_leave();

	/* 4. The owner gathers everything appended since, and rings the doorbell once. */
	if (owner) {
		uint32_t start = llq.prod;

		plat_scope_enter(PLAT_SCOPE_CMDQ_OWNER_WAIT);
		/* a. wait for the previous owner to finish writing PROD */
		plat_poll(&cmdq->owner_prod, 4, owner_prod_is, &start, 0);
		/* b. stop gathering: clear the owned flag; what we get back is the batch's end */
		prod = (uint32_t)plat_fetch_and64(&cmdq->q.llq, ~(uint64_t)CMDQ_PROD_OWNED_FLAG);
		prod &= ~CMDQ_PROD_OWNED_FLAG;
		/* c. wait until every producer of the batch has written its slots */
		cmdq_poll_set_valid_map(cmdq, llq.prod, prod, false);
		plat_scope_leave();
		plat_scope_enter(PLAT_SCOPE_CMDQ_DOORBELL);
		/* d. advance the hardware */
		cmdq_write_prod(smmu, cmdq, prod);
		count_batch(cmdq, start, prod);
		/* e. hand over to the next owner */
		plat_store32(&cmdq->owner_prod, prod);
		plat_scope_leave();
	}

	/* 5. Wait for our CMD_SYNC. */
	if (sync) {
		uint64_t t0 = plat_now_ns();
		struct arm_smmu_pcpu_stats *st;

		plat_scope_enter(PLAT_SCOPE_CMDQ_SYNC_WAIT);

		llq.prod = queue_inc_prod_n(&llq, n);
		ret = poll_until_sync(smmu, cmdq, &llq);
		st = arm_smmu_this_stats(smmu);
		arm_smmu_stat_add(&st->sync_wait_ns, plat_now_ns() - t0);
		if (ret) {
			arm_smmu_stat_add(&st->sync_timeouts, 1);
			arm_smmu_set_error(ret, "smmuv3: CMD_SYNC timeout (prod 0x%x)", llq.prod);
		}
		/* Last shared holder: nobody can be waiting on an older cons, publish ours. */
		if (!cmdq_shared_tryunlock(cmdq)) {
			cmdq_publish_cons(cmdq, llq.cons);
			cmdq_shared_unlock(cmdq);
		}
		plat_scope_leave();
	}
	count_issue(smmu, cmds, n, sync, owner, retries, waited);
	return ret;
}

int arm_smmu_cmdq_issue_cmdlist(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
				const uint64_t *cmds, unsigned n, bool sync)
{
	int ret;

	plat_scope_enter(PLAT_SCOPE_ISSUE_CMDLIST);
	ret = issue_cmdlist(smmu, cmdq, cmds, n, sync);
	plat_scope_leave();
	return ret;
}

int arm_smmu_cmdq_issue_cmd(struct arm_smmu_device *smmu, const struct arm_smmu_cmdq_ent *ent,
			    bool sync)
{
	uint64_t cmd[CMDQ_ENT_DWORDS];

	if (arm_smmu_cmdq_build_cmd(cmd, ent))
		return arm_smmu_set_error(-EINVAL, "smmuv3: unknown opcode 0x%x", ent->opcode);
	return arm_smmu_cmdq_issue_cmdlist(smmu, arm_smmu_get_cmdq_for(smmu, ent->opcode), cmd, 1,
					   sync);
}

/* ---- batches (Linux arm_smmu_cmdq_batch_*) ----------------------------------------------- */

void arm_smmu_cmdq_batch_init(struct arm_smmu_device *smmu, struct arm_smmu_cmdq_batch *b)
{
	/* Bound to this CPU's queue for the whole set: a CMD_SYNC orders its own queue only. With
	 * a secondary-queue implementation the queue depends on the first command (Linux 6.12
	 * arm_smmu_cmdq_batch_init(smmu, cmds, ent)): chosen when it is added. */
	b->num = 0;
	b->cmdq = smmu->impl_ops ? NULL : arm_smmu_get_cmdq(smmu);
}

void arm_smmu_cmdq_batch_add(struct arm_smmu_device *smmu, struct arm_smmu_cmdq_batch *b,
			     const struct arm_smmu_cmdq_ent *ent)
{
	if (!b->cmdq)
		b->cmdq = arm_smmu_get_cmdq_for(smmu, ent->opcode);
	/* A command this queue cannot take: what is batched goes out with its CMD_SYNC, and the
	 * batch starts again on the queue the command can use (Linux's unsupported_cmd). */
	if (!arm_smmu_cmdq_supports(b->cmdq, ent->opcode)) {
		if (b->num)
			arm_smmu_cmdq_issue_cmdlist(smmu, b->cmdq, b->cmds, b->num, true);
		b->num = 0;
		b->cmdq = arm_smmu_get_cmdq_for(smmu, ent->opcode);
	}
	/* A full batch goes out without a sync; the final submit adds the one CMD_SYNC. */
	if (b->num == CMDQ_BATCH_ENTRIES) {
		arm_smmu_cmdq_issue_cmdlist(smmu, b->cmdq, b->cmds, b->num, false);
		b->num = 0;
	}
	if (arm_smmu_cmdq_build_cmd(&b->cmds[b->num * CMDQ_ENT_DWORDS], ent)) {
		arm_smmu_set_error(-EINVAL, "smmuv3: skipping unknown opcode 0x%x", ent->opcode);
		return;
	}
	b->num++;
}

int arm_smmu_cmdq_batch_submit(struct arm_smmu_device *smmu, struct arm_smmu_cmdq_batch *b)
{
	int ret;

	if (!b->cmdq)
		b->cmdq = arm_smmu_get_cmdq_for(smmu, CMDQ_OP_CMD_SYNC);
	ret = arm_smmu_cmdq_issue_cmdlist(smmu, b->cmdq, b->cmds, b->num, true);

	b->num = 0;
	return ret;
}

/* ---- errors of the main queue (Linux arm_smmu_gerror_handler, arm_smmu_cmdq_skip_err) ------ */

/* GERROR.CMDQ_ERR is active: the SMMU stopped with CONS on the command it could not process
 * and CONS.ERR saying why (§7.1). Called with gerror_lock held, before the acknowledgement
 * that lets the queue resume at CONS. As Linux does:
 *  - CERROR_ILL (and any code this driver does not know): the command can never succeed, so
 *    its slot is overwritten with a CMD_SYNC that signals nothing, and the queue goes on; the
 *    CMD_SYNC of whoever issued the bad command still follows it;
 *  - CERROR_ABT: reading the command failed; the same slot is read again;
 *  - CERROR_ATC_INV_SYNC: an ATC invalidation did not complete, CONS is on the CMD_SYNC that
 *    waited for it; that CMD_SYNC runs again (and may fail again).
 * Producers own the slots before CONS no longer, and none writes the slot at CONS, so the
 * shared queue state (llq) is not touched. True if a command was skipped: only then is the
 * queue sure to move on, and may a waiter start its timeout again (a retried fetch or ATC
 * invalidation can fail forever, and must still end in the timeout rather than a hang). */
static bool cmdq_skip_err(struct arm_smmu_device *smmu)
{
	struct arm_smmu_cmdq *cmdq = &smmu->cmdq;
	struct arm_smmu_queue *q = &cmdq->q;
	uint32_t cons = plat_mmio_read32(smmu->mmio, q->cons_reg);
	unsigned reason = (unsigned)arm_field_get(CMDQ_CONS_ERR, cons);
	uint32_t rd = cons & ((1u << q->max_n_shift) - 1);
	struct arm_smmu_cmdq_ent sync = { .opcode = CMDQ_OP_CMD_SYNC };
	uint64_t cmd[CMDQ_ENT_DWORDS], *ent = q->base + (size_t)rd * q->ent_dwords;

	arm_smmu_stat_add(&cmdq->st_errors, 1);
	switch (reason) {
	case CMDQ_ERR_CERROR_NONE:
		return false;
	case CMDQ_ERR_CERROR_ABT:
		arm_smmu_stat_add(&cmdq->st_err_abt, 1);
		arm_smmu_set_error(-EIO, "smmuv3: CMDQ error (cons 0x%08x): abort on command "
				   "fetch, retrying", cons);
		return false;
	case CMDQ_ERR_CERROR_ATC_INV_SYNC:
		arm_smmu_set_error(-EIO, "smmuv3: CMDQ error (cons 0x%08x): ATC invalidation "
				   "timeout, repeating the CMD_SYNC", cons);
		return false;
	default:
		break;
	}
	arm_smmu_set_error(-EIO, "smmuv3: CMDQ error (cons 0x%08x): illegal command 0x%016llx "
			   "0x%016llx at index %u skipped", cons, (unsigned long long)ent[0],
			   (unsigned long long)ent[1], rd);
	arm_smmu_cmdq_build_cmd(cmd, &sync);
	ent[0] = cmd[0];
	ent[1] = cmd[1];
	plat_mem_touch(ent, CMDQ_ENT_DWORDS * 8, true);
	arm_smmu_stat_add(&cmdq->st_err_ill, 1);
	return true;
}

bool arm_smmu_gerror_handler(struct arm_smmu_device *smmu)
{
	uint32_t gerror, gerrorn, active;
	bool skipped = false;

	/* Like the interrupt, a look costs two register reads and no lock: waiters that find
	 * nothing do not contend. Whoever finds an error takes the lock and looks again. */
	gerror = plat_mmio_read32(smmu->mmio, ARM_SMMU_GERROR);
	gerrorn = plat_mmio_read32(smmu->mmio, ARM_SMMU_GERRORN);
	if (!((gerror ^ gerrorn) & GERROR_ERR_MASK))
		return false;
	plat_track(&smmu->gerror_lock, "smmu.gerror_lock");
	plat_spin_lock(&smmu->gerror_lock);
	gerror = plat_mmio_read32(smmu->mmio, ARM_SMMU_GERROR);
	gerrorn = plat_mmio_read32(smmu->mmio, ARM_SMMU_GERRORN);
	active = (gerror ^ gerrorn) & GERROR_ERR_MASK;
	if (active) {
		/* Linux also reports SFM (and disables the SMMU), aborted MSIs and queue aborts;
		 * the only condition with something to repair here is a stopped command queue. */
		if (active & GERROR_CMDQ_ERR)
			skipped = cmdq_skip_err(smmu);
		else
			arm_smmu_set_error(-EIO, "smmuv3: global error 0x%08x acknowledged", active);
		/* The replacement command before the acknowledgement that restarts the queue. */
		plat_mb();
		plat_mmio_write32(smmu->mmio, ARM_SMMU_GERRORN, gerror);
	}
	plat_spin_unlock(&smmu->gerror_lock);
	return skipped;
}

bool arm_smmu_cmdq_recover(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	if (cmdq->vcmdq)
		return tegra241_vcmdq_skip_err(smmu, cmdq);
	return cmdq->ecmdq ? arm_smmu_ecmdq_skip_err(smmu, cmdq) : arm_smmu_gerror_handler(smmu);
}
