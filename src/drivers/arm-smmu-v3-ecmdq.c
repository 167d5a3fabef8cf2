/* arm-smmu-v3-ecmdq.c — SMMUv3.3 Enhanced Command queues, driver side: discovery (IDR1.ECMDQ,
 * IDR6, the control pages), enabling each queue, assigning queues to CPUs (one each, or shared
 * by node groups when there are fewer queues than CPUs), skipping a command in error, and the
 * public queries. Follows the Zhen Lei series (reference/linux-dma-path.md §6).
 * It is not the producer (arm-smmu-v3-cmdq.c inserts commands into an ECMDQ like into the main
 * queue) and not the consumer (the model, src/hw/smmuv3/cmdq.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/arm-smmu-v3.h"
#include "iommulab/plat.h"

/* ---- CPU → queue assignment (the series' arm_smmu_ecmdq_layout) --------------------------- */

/* map[] holds, while the nodes are read, NODE_TAG | the node that owns the CPU (UNPLACED: none
 * yet); then the queue index. Queue indexes stay below 2^31, node numbers below 64. */
#define NODE_TAG (1u << 31)
#define UNPLACED (~0u)
#define LAYOUT_MAX_NODES 64

/* Claim each CPU for the first node that lists it; return how many it got. CPUs beyond the
 * machine and CPUs another node listed first are not counted, so the shares below never sum
 * to more CPUs than there are. */
static unsigned layout_claim(const struct arm_smmu_ecmdq_topo *t, unsigned k, unsigned *map)
{
	unsigned n = t->node_cpu_count(k), got = 0;

	for (unsigned i = 0; i < n; i++) {
		int c = t->node_cpu(k, i);

		if (c >= 0 && (unsigned)c < t->cpus && map[c] == UNPLACED) {
			map[c] = NODE_TAG | k;
			got++;
		}
	}
	return got;
}

/* Give node k's CPUs (in the node's order) queues first .. first + share - 1, round robin. */
static void layout_assign(const struct arm_smmu_ecmdq_topo *t, unsigned k, unsigned first,
			  unsigned share, unsigned *map)
{
	unsigned n = t->node_cpu_count(k), j = 0;

	for (unsigned i = 0; i < n; i++) {
		int c = t->node_cpu(k, i);

		if (c >= 0 && (unsigned)c < t->cpus && map[c] == (NODE_TAG | k))
			map[c] = first + j++ % share;
	}
}

/* Fill map[cpu] with a queue index for every CPU; return how many queues are used (≤ nq), and
 * every map[cpu] is below that count.
 *  - nq ≥ CPUs: CPU c gets queue c, alone (v2/V3 of the series, and RFC patch 5).
 *  - nodes ≤ nq < CPUs (RFC patch 8, "less than one ECMDQ per core"): every node with CPUs
 *    gets one queue, the other nq − nodes are shared out in proportion to the nodes' CPU
 *    counts (leftovers one by one to nodes that still have more CPUs than queues), and the
 *    i-th CPU of a node uses the node's queue i mod (its queues). Queues never cross nodes.
 *    The patch computes each node's share from the running remainder (later nodes get less:
 *    21/17/14/12 of 64 queues for 4 × 32 CPUs); we use the fixed total it names in its
 *    comment (NR_ECMDQS_PER_CPU), which gives 16 each.
 *  - nq < nodes: the patch refuses (-ENOSPC, main queue only); we let node k use queue
 *    k mod nq, so the queues still group CPUs by node.
 * A topology whose nodes hold fewer CPUs than the machine has (or list a CPU twice, or one
 * beyond the machine) must not make this loop forever or index past the queues: shares come
 * from the CPUs the nodes really hold, queues no node can use stay unused, and a CPU on no
 * node shares the used queues round robin. */
unsigned arm_smmu_ecmdq_layout(const struct arm_smmu_ecmdq_topo *t, unsigned nq, unsigned *map)
{
	unsigned cpus = t->cpus, nodes = t->nodes, with_cpus = 0, placed = 0, next = 0, left;
	unsigned held[LAYOUT_MAX_NODES] = { 0 }, share[LAYOUT_MAX_NODES] = { 0 };
	bool grew;

	if (!cpus || !nq)
		return 0;
	if (nq >= cpus) {
		for (unsigned c = 0; c < cpus; c++)
			map[c] = c;
		return cpus;
	}
	for (unsigned c = 0; c < cpus; c++)
		map[c] = UNPLACED;
	if (nodes > LAYOUT_MAX_NODES)
		nodes = 0; /* no grouping: every CPU takes c mod nq below */
	for (unsigned k = 0; k < nodes; k++) {
		held[k] = layout_claim(t, k, map);
		placed += held[k];
		with_cpus += held[k] ? 1 : 0;
	}
	if (!with_cpus) {
		next = nq;
	} else if (nq < with_cpus) {
		for (unsigned k = 0, g = 0; k < nodes; k++)
			if (held[k])
				layout_assign(t, k, g++ % nq, 1, map);
		next = nq;
	} else {
		left = nq - with_cpus;
		for (unsigned k = 0; k < nodes; k++) {
			if (held[k]) {
				/* Σ held·(nq − with_cpus)/placed ≤ nq − with_cpus: no underflow */
				share[k] = 1 + (unsigned)((uint64_t)held[k] * (nq - with_cpus) / placed);
				if (share[k] > held[k]) /* only when CPUs are on no node */
					share[k] = held[k];
				left -= share[k] - 1;
			}
		}
		/* The rounding leftovers, while some node has more CPUs than queues. */
		do {
			grew = false;
			for (unsigned k = 0; k < nodes && left; k++) {
				if (share[k] && share[k] < held[k]) {
					share[k]++;
					left--;
					grew = true;
				}
			}
		} while (left && grew);
		for (unsigned k = 0; k < nodes; k++) {
			if (!share[k])
				continue;
			layout_assign(t, k, next, share[k], map);
			next += share[k];
		}
	}
	for (unsigned c = 0; c < cpus; c++)
		if (map[c] == UNPLACED)
			map[c] = c % next;
	return next;
}

static unsigned plat_topo_node_cpu_count(unsigned node)
{
	return plat_node_cpu_count(node);
}

static int plat_topo_node_cpu(unsigned node, unsigned i)
{
	return plat_node_cpu(node, i);
}

/* ---- enabling and disabling one queue (§3.5.6.1: PROD.EN, then CONS.ENACK follows) -------- */

static int ecmdq_set_enable(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq, bool en)
{
	uint32_t prod = plat_mmio_read32(smmu->mmio, cmdq->q.prod_reg) & ~(uint32_t)ECMDQ_PROD_EN;

	plat_mmio_write32(smmu->mmio, cmdq->q.prod_reg, prod | (en ? (uint32_t)ECMDQ_PROD_EN : 0));
	for (unsigned i = 0; i < 100000; i++) { /* bounded, like CR0ACK: one-time, at probe */
		uint32_t cons = plat_mmio_read32(smmu->mmio, cmdq->q.cons_reg);

		if (!!(cons & ECMDQ_CONS_ENACK) == en)
			return 0;
		plat_yield();
	}
	return arm_smmu_set_error(-ETIMEDOUT, "smmuv3: ECMDQ %u: CONS.ENACK did not follow EN = %d",
				  cmdq->index, en);
}

/* BASE, PROD and CONS are written while the queue is off, then EN. */
static int ecmdq_enable(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	int err;

	if (plat_mmio_read32(smmu->mmio, cmdq->q.prod_reg) & ECMDQ_PROD_EN) {
		err = ecmdq_set_enable(smmu, cmdq, false); /* left on by a previous owner */
		if (err)
			return err;
	}
	plat_mmio_write64(smmu->mmio, cmdq->regs + ARM_SMMU_ECMDQ_BASE, cmdq->q.q_base);
	plat_mmio_write32(smmu->mmio, cmdq->q.prod_reg, 0);
	plat_mmio_write32(smmu->mmio, cmdq->q.cons_reg, 0);
	plat_store32(&cmdq->errack, 0);
	return ecmdq_set_enable(smmu, cmdq, true);
}

static void ecmdq_free_all(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *qs, unsigned n,
			   bool disable)
{
	for (unsigned i = 0; qs && i < n; i++) {
		if (disable && qs[i].q.base)
			ecmdq_set_enable(smmu, &qs[i], false);
		arm_smmu_cmdq_free(smmu, &qs[i]);
	}
	free(qs);
}

/* ---- probe / remove --------------------------------------------------------------------------- */

static unsigned ceil_log2(unsigned v)
{
	unsigned l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

/* Queue n's register group, from its control page's BASE register. */
static int ecmdq_regs(struct arm_smmu_device *smmu, unsigned n, unsigned log2numq, uint64_t *regs)
{
	uint64_t cp = plat_mmio_read64(smmu->mmio, ARM_SMMU_ECMDQ_CP_BASE +
						       (uint64_t)ECMDQ_CP_STRIDE * (n >> log2numq));

	if (!(cp & ECMDQ_CP_PRESET) || arm_field_get(ECMDQ_CP_CMDQGS, cp) != 1)
		return arm_smmu_set_error(-ENODEV, "smmuv3: ECMDQ control page %u is not a 64 KiB "
					  "page in register mode", n >> log2numq);
	*regs = (cp & ECMDQ_CP_ADDR) +
		(uint64_t)(n & ((1u << log2numq) - 1)) * (ECMDQ_CP_SIZE >> log2numq);
	return 0;
}

/* Allocate, enable and assign; on failure everything is undone and *why says what failed. */
static int ecmdq_setup(struct arm_smmu_device *smmu, unsigned log2numq, unsigned hw,
		       const char **why)
{
	const struct arm_smmu_ecmdq_topo topo = {
		.cpus = plat_cpu_count(), .nodes = plat_node_count(),
		.node_cpu_count = plat_topo_node_cpu_count, .node_cpu = plat_topo_node_cpu,
	};
	unsigned cpus = topo.cpus, nq, most = 0, log2, cmdqs;
	unsigned *map = plat_zalloc_array(cpus ? cpus : 1, sizeof(*map)), *count = NULL;
	struct arm_smmu_cmdq *qs = NULL, **cpu_cmdq = NULL;
	size_t bytes;
	unsigned done = 0;
	int err = -ENOMEM;

	*why = "out of memory";
	if (!map || !cpus)
		goto fail;
	nq = arm_smmu_ecmdq_layout(&topo, hw, map);
	if (!nq)
		goto fail;
	count = plat_zalloc_array(nq, sizeof(*count));
	cpu_cmdq = plat_zalloc_array(cpus, sizeof(*cpu_cmdq));
	bytes = ((size_t)nq * sizeof(*qs) + PLAT_CACHELINE - 1) / PLAT_CACHELINE * PLAT_CACHELINE;
	qs = plat_zalloc_array(1, bytes);
	if (!count || !cpu_cmdq || !qs)
		goto fail;
	memset(qs, 0, bytes);
	for (unsigned c = 0; c < cpus; c++)
		count[map[c]]++;
	for (unsigned i = 0; i < nq; i++)
		most = count[i] > most ? count[i] : most;

	/* The series: 256 entries times the CPUs that share the queue, within IDR1.CMDQS (the
	 * architected cap of ECMDQ_BASE.LOG2SIZE too). */
	cmdqs = (unsigned)arm_field_get(IDR1_CMDQS, plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR1));
	log2 = smmu->opts.ecmdq_log2 ? smmu->opts.ecmdq_log2 : ECMDQ_MAX_SZ_SHIFT + ceil_log2(most);
	if (log2 > cmdqs)
		log2 = cmdqs;
	if (log2 <= 6) { /* must hold a batch (CMDQ_BATCH_ENTRIES) */
		*why = "ECMDQs too small for a batch (IDR1.CMDQS)";
		err = -ENODEV;
		goto fail;
	}
	for (unsigned n = 0; n < nq; n++) {
		struct arm_smmu_cmdq *q = &qs[n];
		uint64_t regs = 0;

		err = ecmdq_regs(smmu, n, log2numq, &regs);
		if (err) {
			*why = "a control page is not in register mode";
			goto fail;
		}
		err = arm_smmu_queue_alloc(smmu, &q->q, log2, CMDQ_ENT_DWORDS,
					   regs + ARM_SMMU_ECMDQ_PROD, regs + ARM_SMMU_ECMDQ_CONS);
		done = n + 1;
		if (err) {
			*why = "no coherent memory for an ECMDQ";
			goto fail;
		}
		if (q->q.max_n_shift <= 6) { /* halved below a batch on allocation failure */
			err = -ENOMEM;
			*why = "no coherent memory for an ECMDQ";
			goto fail;
		}
		q->ecmdq = true;
		q->index = n;
		q->regs = regs;
		q->nr_cpus = count[n];
		q->exclusive = count[n] == 1;
		plat_spin_init(&q->prod_lock, "smmu.ecmdq.prod_lock");
		err = arm_smmu_cmdq_init(smmu, q);
		if (!err)
			err = ecmdq_enable(smmu, q);
		if (err) {
			*why = "an ECMDQ did not enable (CONS.ENACK)";
			goto fail;
		}
	}
	for (unsigned c = 0; c < cpus; c++)
		cpu_cmdq[c] = &qs[map[c]];
	smmu->ecmdqs = qs;
	smmu->nr_ecmdq = nq;
	smmu->cpu_cmdq = cpu_cmdq;
	smmu->nr_cpu_cmdq = cpus;
	free(map);
	free(count);
	return 0;
fail:
	ecmdq_free_all(smmu, qs, done, true);
	free(cpu_cmdq);
	free(map);
	free(count);
	return err;
}

int arm_smmu_ecmdq_probe(struct arm_smmu_device *smmu)
{
	enum ilab_smmu_ecmdq_mode mode = smmu->opts.ecmdq;
	uint32_t idr1, idr6;
	unsigned log2numq;
	int err;

	if (mode == ILAB_SMMU_ECMDQ_OFF) {
		smmu->ecmdq_why = "ECMDQs switched off (option ecmdq off)";
		idr1 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR1);
		if (idr1 & IDR1_ECMDQ) {
			idr6 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR6);
			smmu->ecmdq_hw = 1u << (arm_field_get(IDR6_LOG2NUMP, idr6) +
						arm_field_get(IDR6_LOG2NUMQ, idr6));
		}
		return 0;
	}
	idr1 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR1);
	if (!(idr1 & IDR1_ECMDQ)) {
		smmu->ecmdq_why = "the SMMU has no ECMDQ (IDR1.ECMDQ 0)";
		return mode == ILAB_SMMU_ECMDQ_ON
			       ? arm_smmu_set_error(-ENODEV, "smmuv3: ecmdq on, but IDR1.ECMDQ is 0")
			       : 0;
	}
	idr6 = plat_mmio_read32(smmu->mmio, ARM_SMMU_IDR6);
	log2numq = (unsigned)arm_field_get(IDR6_LOG2NUMQ, idr6);
	smmu->ecmdq_hw = 1u << (arm_field_get(IDR6_LOG2NUMP, idr6) + log2numq);
	err = ecmdq_setup(smmu, log2numq, smmu->ecmdq_hw, &smmu->ecmdq_why);
	if (!err) {
		smmu->ecmdq_why = NULL;
		return 0;
	}
	if (mode == ILAB_SMMU_ECMDQ_ON)
		return arm_smmu_set_error(err, "smmuv3: ECMDQs unusable: %s", smmu->ecmdq_why);
	return 0; /* AUTO: the main queue serves every CPU */
}

void arm_smmu_ecmdq_remove(struct arm_smmu_device *smmu)
{
	struct arm_smmu_cmdq *qs = smmu->ecmdqs, **cpu_cmdq = smmu->cpu_cmdq;

	smmu->cpu_cmdq = NULL; /* every CPU back on the main queue */
	smmu->nr_cpu_cmdq = 0;
	free(cpu_cmdq);
	ecmdq_free_all(smmu, qs, smmu->nr_ecmdq, true);
	smmu->ecmdqs = NULL;
	smmu->nr_ecmdq = 0;
}

/* ---- errors (the series' GERROR.CMDQP_ERR handling, Linux __arm_smmu_cmdq_skip_err) -------- */

bool arm_smmu_ecmdq_skip_err(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq)
{
	struct arm_smmu_queue *q = &cmdq->q;
	uint32_t cons, errack, prod;
	bool done = false;

	/* On a shared queue several waiters may notice the error; one recovers, under the lock
	 * that also orders every PROD write against the ERRACK change. */
	if (!cmdq->exclusive)
		plat_spin_lock(&cmdq->prod_lock);
	cons = plat_mmio_read32(smmu->mmio, q->cons_reg);
	errack = plat_load_relaxed32(&cmdq->errack);
	if ((cons & ECMDQ_CONS_ERR) != errack) {
		unsigned reason = (unsigned)arm_field_get(ECMDQ_CONS_ERR_REASON, cons);
		uint32_t rd = cons & ((1u << q->max_n_shift) - 1);

		arm_smmu_stat_add(&cmdq->st_errors, 1);
		if (reason == CMDQ_ERR_CERROR_ILL) {
			/* Linux: the command the SMMU refused becomes a CMD_SYNC (no signal), so
			 * the queue goes on and later CMD_SYNCs complete. */
			struct arm_smmu_cmdq_ent sync = { .opcode = CMDQ_OP_CMD_SYNC };
			uint64_t cmd[CMDQ_ENT_DWORDS], *ent = q->base + (size_t)rd * q->ent_dwords;

			arm_smmu_cmdq_build_cmd(cmd, &sync);
			ent[0] = cmd[0];
			ent[1] = cmd[1];
			plat_mem_access(q->home_node, CMDQ_ENT_DWORDS * 8, true);
			arm_smmu_stat_add(&cmdq->st_err_ill, 1);
			done = true;
		} else if (reason == CMDQ_ERR_CERROR_ABT) {
			arm_smmu_stat_add(&cmdq->st_err_abt, 1); /* the read failed: retry it */
		}
		/* Acknowledge: PROD.ERRACK = CONS.ERR, same WR and EN; the queue resumes at RD. */
		plat_mb();
		errack = cons & (uint32_t)ECMDQ_CONS_ERR;
		plat_store32(&cmdq->errack, errack);
		prod = plat_mmio_read32(smmu->mmio, q->prod_reg) & ~(uint32_t)ECMDQ_PROD_ERRACK;
		plat_mmio_write32(smmu->mmio, q->prod_reg, prod | errack);
		arm_smmu_set_error(-EIO, "smmuv3: ECMDQ %u: command error %u at index %u %s",
				   cmdq->index, reason, rd, done ? "skipped" : "retried");
	}
	if (!cmdq->exclusive)
		plat_spin_unlock(&cmdq->prod_lock);
	return done;
}

/* ---- public queries ------------------------------------------------------------------------ */

int ilab_smmu_drv_get_ecmdq_info(struct ilab_iommu *iommu, struct ilab_smmu_drv_ecmdq_info *info)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);

	if (!smmu || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->hw_count = smmu->ecmdq_hw;
	info->enabled = smmu->nr_ecmdq;
	info->why_not = smmu->ecmdq_why;
	if (smmu->nr_ecmdq)
		info->log2size = smmu->ecmdqs[0].q.max_n_shift;
	for (unsigned i = 0; i < smmu->nr_ecmdq; i++)
		if (!smmu->ecmdqs[i].exclusive)
			info->shared = true;
	return 0;
}

int ilab_smmu_drv_cpu_queue(struct ilab_iommu *iommu, unsigned cpu)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);

	if (!smmu || cpu >= plat_cpu_count())
		return -EINVAL;
	if (smmu->cmdqv)
		return tegra241_cmdqv_cpu_queue(smmu, cpu);
	if (!smmu->cpu_cmdq || cpu >= smmu->nr_cpu_cmdq)
		return 0;
	return 1 + (int)smmu->cpu_cmdq[cpu]->index;
}

int ilab_smmu_drv_get_queue_stats(struct ilab_iommu *iommu, unsigned qi,
				  struct ilab_smmu_drv_queue_stats *st)
{
	struct arm_smmu_device *smmu = to_smmu(iommu);
	struct arm_smmu_cmdq *cmdq;

	if (!smmu || !st)
		return -EINVAL;
	if (smmu->cmdqv) /* VCMDQs are shared by CPU number modulo their count */
		cmdq = qi ? tegra241_cmdqv_queue(smmu, qi - 1) : &smmu->cmdq;
	else if (qi > smmu->nr_ecmdq)
		return -EINVAL;
	else
		cmdq = qi ? &smmu->ecmdqs[qi - 1] : &smmu->cmdq;
	if (!cmdq)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->cpus = qi ? cmdq->nr_cpus : (smmu->nr_ecmdq ? 0 : plat_cpu_count());
	st->exclusive = cmdq->exclusive;
	st->log2size = cmdq->q.max_n_shift;
	st->entries = plat_stat_read64(&cmdq->st_entries);
	st->prod_writes = plat_stat_read64(&cmdq->st_prod_writes);
	st->errors = plat_stat_read64(&cmdq->st_errors);
	st->err_ill = plat_stat_read64(&cmdq->st_err_ill);
	st->err_abt = plat_stat_read64(&cmdq->st_err_abt);
	st->lock_exclusive = plat_stat_read64(&cmdq->st_lock_exclusive);
	st->lock_shared_waits = plat_stat_read64(&cmdq->st_lock_shared_waits);
	st->lock_shared_wait_ns = plat_stat_read64(&cmdq->st_lock_shared_wait_ns);
	st->lock_shared_wait_max_ns = plat_stat_read64(&cmdq->st_lock_shared_wait_max_ns);
	return 0;
}
