/* board_smmuv3.c — the SMMUv3 architecture of the board (iommu_arch.h): one SMMUv3 model per
 * unit wired to the board's memory (host ops), its register window, its command consumer, the
 * translation of device DMA by StreamID (smmu_translate), and the SMMUv3 driver's probe.
 * Not the model (src/hw/smmuv3/), not the driver (src/drivers/arm-smmu-v3*.c), and not the
 * board's own bookkeeping (board.c: memory, devices, agents, doorbells).
 *
 * In simulation the agent is a fiber on the SMMU's node: the model's memory accesses (queue
 * reads, table walks, MSI writes) are charged from that node by the simulator's line model
 * (ilab_sim_mem_access: from where each line's copies are), each command costs
 * smmu_command_ns (+ smmu_sync_ns for a CMD_SYNC) charged when the model starts executing it
 * (its entry read ahead with the published ones after it, in every queue: cmd_fetch_len),
 * TLBIs go on to one invalidation engine per SMMU (smmu_tlbi_ns by address, smmu_tlbi_scan_ns
 * by ASID/VMID/all or range, + smmu_tlbi_entry_ns per entry dropped) that a later CMD_SYNC
 * of the same queue waits for, and the board records the SMMU's CMD_SYNC latency (PROD write
 * that published it -> its completion) and command-queue occupancy as simulator distributions.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/sim.h>
#include <iommulab/smmuv3_drv.h>

#include "hw/board_smmuv3.h"
#include "iommulab/plat.h"

/* ---- the model's view of the machine (host ops) --------------------------------------------- */

#define CMDQ_OP_SYNC 0x46 /* IHI 0070 §4.7.3 */
/* Every CMD_TLBI_* opcode lies in 0x10 (NH_ALL) .. 0x30 (NSNH_ALL) (IHI 0070 §4.4); codes in
 * between that are not TLBIs are illegal and never reach execution. */
#define CMDQ_OP_TLBI_FIRST 0x10
#define CMDQ_OP_TLBI_LAST 0x30

/* ---- the model's view of the machine (host ops) --------------------------------------------- */

/* Command fetch read-ahead (simulation): how many bytes from pa the SMMU reads at once. A
 * command queue's consumer knows PROD, so it need not fetch one 16-byte entry per round trip:
 * it may issue the reads of the published entries ahead of the one it executes, several lines
 * in flight, and execute the next commands out of its fetch buffer. Modelled for every queue,
 * SMMU_CMDQ and each ECMDQ alike: a read of an entry charges the span up to that queue's PROD
 * (not past the end of the queue, at most bs->cmd_readahead entries) as one multi-line access:
 * the slowest line in full, each further line at streaming cost (sim ops.c); the next entries
 * of those lines then cost a hit, until a CPU writes the line again. The depth is the
 * profile's smmu.cmd_readahead_entries (64 by default, an assumption: Arm's MMU-600 reads one
 * command at a time, and Hi1620's prefetch is not published); 1 reads each entry on its own. */

/* Which queue's entry is at pa: one that has had commands published. The queue of the last
 * entry read is tried first (with one queue, or one busy queue, the only compare). */
static struct board_cmdq_track *fetch_queue(struct board_sim_track *tr, uint64_t pa)
{
	for (unsigned k = 0, i = tr->last_hit; k < tr->nfetching; k++, i++) {
		struct board_cmdq_track *q;

		if (i == tr->nfetching)
			i = 0;
		q = &tr->q[tr->fetching[i]];
		if (q->q_base && pa >= q->q_base && pa < q->q_base + (16ull << q->q_log2)) {
			tr->last_hit = i;
			return q;
		}
	}
	return NULL;
}

static size_t cmd_fetch_len(struct board_smmuv3 *bs, uint64_t pa, size_t len)
{
	struct board_cmdq_track *q;
	uint64_t entries, idx, prod, n;

	if (len != 16)
		return len;
	q = fetch_queue(&bs->sim, pa);
	if (!q || (pa - q->q_base) % 16)
		return len;
	bs->sim.last_entry = q;
	bs->sim.last_entry_pa = pa;
	if (q->held_pa == pa + 1) { /* a CMD_SYNC that waited: still in the fetch buffer */
		q->held_pa = 0;
		return 0;
	}
	/* Entries are read in order, once each: inside the last read-ahead this one is already
	 * in the fetch buffer (charged as its line: a hit, or a re-fetch if a CPU wrote it). */
	if (q->fetch_seq++ < q->fetched_end)
		return len;
	entries = 1ull << q->q_log2;
	idx = (pa - q->q_base) / 16;
	prod = q->last_prod & (entries - 1);
	n = prod > idx ? prod - idx : entries - idx; /* up to PROD or the end of the queue */
	if (n > bs->cmd_readahead)
		n = bs->cmd_readahead;
	q->fetched_end = q->fetch_seq - 1 + n;
	return (size_t)n * 16;
}

static int host_mem_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct board_smmuv3 *bs = ctx;

	if (plat_sim) {
		/* Simulation: charged line by line from where the lines are (a command the CPU
		 * just wrote comes from its cache, a PTE from the CPU that stored it). */
		size_t span = cmd_fetch_len(bs, pa, len);
		const void *va = ilab_mem_va(bs->unit->mem, pa, span);

		if (!span && (va = ilab_mem_va(bs->unit->mem, pa, len))) {
			memcpy(buf, va, len); /* held by the processor: no read */
			return 0;
		}
		if (va) {
			memcpy(buf, va, len);
			ilab_sim_mem_access(va, span, false);
			return 0;
		}
		va = ilab_mem_va(bs->unit->mem, pa, len);
		if (va) {
			memcpy(buf, va, len);
			ilab_sim_mem_access(va, len, false);
			return 0;
		}
	}
	return ilab_mem_read(bs->unit->mem, pa, buf, len) ? -1 : 0;
}

/* In simulation a CMD_SYNC's MSI (its only 4-byte write) goes to the SMMU's write path
 * (smmuv3_msi_path.c): the processor goes on, the path makes it. */
static int host_mem_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct board_smmuv3 *bs = ctx;

	if (plat_sim && bs->sim.in_sync && len == 4 && ilab_mem_va(bs->unit->mem, pa, 4)) {
		const uint8_t *b = buf;
		uint32_t data = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
				(uint32_t)b[3] << 24;

		if (smmuv3_msi_path_post(&bs->msi, pa, data)) {
			bs->sim.msi_posted = true;
			return 0;
		}
	}
	return ilab_iommu_unit_mem_write(bs->unit, pa, buf, len);
}

/* ---- simulation: costs and measurements ---------------------------------------------------- */

static void sync_done(struct board_smmuv3 *bs)
{
	struct board_sim_track *tr = &bs->sim;

	if (!tr->sync_pending)
		return;
	tr->sync_pending = false;
	ilab_sim_sample_dist(&tr->sync_dist, tr->sync_name, plat_now_ns() - tr->sync_pub_t);
}

static void host_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct board_smmuv3 *bs = ctx;
	void *va = ilab_mem_va(bs->unit->mem, addr, 4);

	(void)data;
	if (bs->sim.msi_posted) { /* the write path makes it, and then says so (msi_written) */
		bs->sim.msi_posted = false;
		return;
	}
	if (plat_sim)
		sync_done(bs); /* the MSI is the CMD_SYNC's completion signal */
	if (va)
		plat_wrote(va); /* wake simulated pollers of that word */
}

/* The write path made a posted MSI: the write (charged to the path by the memory model),
 * then what host_msi does for one made in place. */
static void msi_written(void *ctx, uint64_t pa, uint32_t data)
{
	struct board_smmuv3 *bs = ctx;
	uint8_t b[4] = { (uint8_t)data, (uint8_t)(data >> 8), (uint8_t)(data >> 16),
			 (uint8_t)(data >> 24) };

	ilab_iommu_unit_mem_write(bs->unit, pa, b, sizeof(b));
	host_msi(bs, pa, data);
}

/* Entries between cons and prod (index + wrap bit each) of a queue of 2^log2 entries. */
static uint32_t queue_used(uint32_t prod, uint32_t cons, unsigned log2)
{
	return (prod - cons) & ((2u << log2) - 1);
}

/* A CPU wrote queue qi's PROD (simulation): where that queue is and how far it is published
 * (its command fetch reads ahead up to there). For SMMU_CMDQ also when these commands were
 * published, and how full the queue is now (published, not yet consumed). */
static void prod_written(struct board_smmuv3 *bs, unsigned qi, uint32_t prod)
{
	struct board_sim_track *tr = &bs->sim;
	struct board_cmdq_track *q = &tr->q[qi];
	uint64_t base = smmu_mmio_read(bs->smmu, smmu_cmdq_base_reg(bs->smmu, qi), 8);
	unsigned log2 = (unsigned)(base & 0x1f);
	uint32_t m = (2u << log2) - 1;
	uint32_t delta = ((prod & m) - q->last_prod) & m;
	struct board_prod_mark *mk;
	uint32_t cons;

	if (!q->listed) { /* its first PROD write: from now on its entries are looked for */
		q->listed = true;
		tr->fetching[tr->nfetching++] = qi;
	}
	q->last_prod = prod & m;
	/* *_BASE.ADDR is bits [51:5], aligned to the queue's size (IHI 0070 §6.3.22, §6.3.107) */
	q->q_base = base & 0x000ffffffffffffe0ull & ~((16ull << log2) - 1);
	q->q_log2 = log2;
	board_smmuv3_trace_queue(bs, qi);
	if (!delta || qi) /* the measurements below are SMMU_CMDQ's */
		return;
	cons = (uint32_t)smmu_mmio_read(bs->smmu, SMMU_REG_CMDQ_CONS, 4);
	ilab_sim_sample_dist(&tr->used_dist, tr->used_name, queue_used(prod & m, cons & m, log2));
	tr->published += delta;
	if (tr->count == BOARD_PROD_MARKS) { /* too many in flight: forget the oldest */
		tr->head = (tr->head + 1) % BOARD_PROD_MARKS;
		tr->count--;
	}
	mk = &tr->marks[(tr->head + tr->count++) % BOARD_PROD_MARKS];
	mk->end = tr->published;
	mk->t = plat_now_ns();
}

/* Which queue's PROD is at register offset off: 0 for SMMU_CMDQ_PROD, 1 + n for ECMDQ n's
 * (their groups are evenly spaced from ECMDQ 0's, smmu_ecmdq_offset), -1 for anything else. */
static int prod_reg_queue(const struct board_smmuv3 *bs, uint64_t off)
{
	const struct board_sim_track *tr = &bs->sim;
	uint64_t rel, n;

	if (off == SMMU_REG_CMDQ_PROD)
		return 0;
	if (smmu_cmdqv_offset(bs->smmu)) /* a Tegra241 VCMDQ's, through either aperture */
		return smmu_cmdq_prod_reg_queue(bs->smmu, off);
	if (tr->nq < 2 || off < tr->ecmdq_off)
		return -1;
	rel = off - tr->ecmdq_off;
	n = rel / tr->ecmdq_stride;
	return n < tr->nq - 1 && rel % tr->ecmdq_stride == SMMU_ECMDQ_REG_PROD ? (int)(n + 1) : -1;
}

/* When was command number seq published? The first mark that covers it. */
static uint64_t published_at(struct board_sim_track *tr, uint64_t seq)
{
	while (tr->count && tr->marks[tr->head].end <= seq) {
		tr->head = (tr->head + 1) % BOARD_PROD_MARKS;
		tr->count--;
	}
	return tr->count ? tr->marks[tr->head].t : plat_now_ns();
}

/* Does this TLBI make the engine look at every entry? By VA or IPA (TLBI_NH_VA, NH_VAA,
 * EL2_VA, EL2_VAA, S2_IPA) it looks up the set(s) the address indexes; by ASID, VMID or
 * everything (NH_ALL, NH_ASID, EL2_ALL, EL2_ASID, S12_VMALL, NSNH_ALL) no index exists and it
 * reads every TLB and walk-cache entry. The range form of an address TLBI (RIL: TG != 0 with
 * NUM or SCALE, IHI 0070 §4.4.1.1) covers more than one granule: one set per page would be
 * NUM+1 << SCALE lookups, and an implementation scans instead, once per command. A range of
 * one granule (NUM = SCALE = 0, TTL set) is one lookup, like a plain VA. */
static bool tlbi_scans(const struct board_smmuv3 *b, uint64_t d0, uint64_t d1)
{
	unsigned op = (unsigned)(d0 & 0xff);
	unsigned tg = (unsigned)((d1 >> 10) & 3);
	bool num_or_scale = (d0 >> 12) & 0x1f || (d0 >> 20) & 0x1f;

	switch (op) {
	case 0x12: /* TLBI_NH_VA */
	case 0x13: /* TLBI_NH_VAA */
	case 0x22: /* TLBI_EL2_VA */
	case 0x23: /* TLBI_EL2_VAA */
	case 0x2a: /* TLBI_S2_IPA */
		return b->ril && tg && num_or_scale;
	default:
		return true;
	}
}

/* ---- simulation: the command path's timing (smmuv3_timing.c) -------------------------------- */

static bool is_tlbi(unsigned op)
{
	return op >= CMDQ_OP_TLBI_FIRST && op <= CMDQ_OP_TLBI_LAST;
}

static unsigned queue_index(const struct board_sim_track *tr, unsigned qi)
{
	return qi < tr->nq ? qi : 0;
}

/* May the command at the head of queue qi begin? Only a CMD_SYNC may have to wait: the first
 * time it is asked the processor issues it (its occupancy charged) and the timing says when
 * it completes; until then the queue begins nothing more (IHI 0070 §4.7.3) and the model
 * leaves it at the head. With one queue nothing else could use the processor meanwhile: the
 * agent waits here. The processor keeps the entry: the model's second read of it is free. */
static bool host_cmd_defer(void *ctx, unsigned qi, uint64_t d0, uint64_t d1)
{
	struct board_smmuv3 *bs = ctx;
	struct board_sim_track *tr = &bs->sim;
	unsigned i = queue_index(tr, qi);
	uint64_t busy, ready, now;

	(void)d1;
	if ((unsigned)(d0 & 0xff) != CMDQ_OP_SYNC)
		return false;
	if (!bs->timing.q[i].sync_timed)
		tr->cmd_start = plat_now_ns();
	ready = smmuv3_timing_sync(&bs->timing, i, plat_now_ns(), &busy);
	plat_charge_ns(busy);
	now = plat_now_ns();
	if (ready <= now)
		return false;
	if (tr->nq == 1) {
		plat_charge_ns(ready - now); /* the queue waits, and it is the only one */
		return false;
	}
	if (tr->last_entry == &tr->q[i]) /* the model asks for it again: no second read */
		tr->q[i].held_pa = tr->last_entry_pa + 1;
	return true;
}

/* The model starts executing a command of queue qi (its entry has been read and charged):
 * charge the processor's occupancy before its effects (CONS, MSI) become visible. A CMD_SYNC
 * was issued in host_cmd_defer and completes now. */
static void host_cmd(void *ctx, unsigned qi, uint64_t d0, uint64_t d1)
{
	struct board_smmuv3 *bs = ctx;
	struct board_sim_track *tr = &bs->sim;
	unsigned op = (unsigned)(d0 & 0xff), i = queue_index(tr, qi);
	bool sync = op == CMDQ_OP_SYNC;

	(void)d1;
	tr->in_sync = sync;
	if (sync) {
		/* the MSI of the CMD_SYNC before, if still going, is made first (§3.18) */
		smmuv3_msi_path_drain(&bs->msi);
		smmuv3_timing_sync_done(&bs->timing, i);
	} else {
		tr->cmd_start = plat_now_ns();
		plat_charge_ns(smmuv3_timing_cmd(&bs->timing, i, is_tlbi(op), tr->cmd_start));
	}
	/* Its effects (CONS, invalidations, the MSI) happen now in virtual time: let every
	 * fiber behind us run first, or a CPU could see them before they happen. */
	ilab_sim_sync();
	if (tr->nq == 1) { /* with ECMDQs the order is not one sequence */
		uint64_t pub = published_at(tr, tr->consumed++);

		if (sync) {
			sync_done(bs); /* a previous one without MSI */
			tr->sync_pending = true;
			tr->sync_pub_t = pub;
		}
	}
}

/* The model has executed a command of queue qi (simulation): a TLBI goes to the invalidation
 * engine now that the entries it dropped are known. No virtual time has passed since
 * host_cmd charged its execution. Only the timing is deferred: the model dropped the entries
 * at execution, which the architecture allows (an invalidation may take effect at any time
 * before the CMD_SYNC after it completes). */
static void host_cmd_done(void *ctx, unsigned qi, uint64_t d0, uint64_t d1, uint32_t dropped)
{
	struct board_smmuv3 *bs = ctx;
	struct board_sim_track *tr = &bs->sim;
	unsigned op = (unsigned)(d0 & 0xff);

	tr->in_sync = false;
	if (is_tlbi(op)) {
		uint64_t cost, start;

		start = smmuv3_timing_tlbi(&bs->timing, queue_index(tr, qi), tlbi_scans(bs, d0, d1),
					   dropped, plat_now_ns(), &cost);
		if (cost)
			board_smmuv3_trace_engine(bs, op, start, cost);
	}
	board_smmuv3_trace_cmd(bs, qi, op, tr->cmd_start, tr->last_entry_pa);
	board_smmuv3_trace_queue(bs, queue_index(tr, qi));
}

/* CMD_ATC_INV: an ATS Invalidation Request to the endpoint; the devices' model answers it. */
static void host_atc_inv(void *ctx, uint32_t sid, uint32_t ssid, bool ssv, uint64_t addr,
			 unsigned size_log2, bool global)
{
	struct board_smmuv3 *bs = ctx;

	ilab_iommu_unit_atc_inv(bs->unit, sid, ssid, ssv, addr, size_log2, global);
}

static const struct smmu_host_ops board_host_ops = {
	.mem_read = host_mem_read,
	.mem_write = host_mem_write,
	.msi = host_msi,
	.atc_inv = host_atc_inv,
};

/* In simulation: the same, plus the per-command charge and measurements. */
static const struct smmu_host_ops board_host_ops_sim = {
	.mem_read = host_mem_read,
	.mem_write = host_mem_write,
	.msi = host_msi,
	.atc_inv = host_atc_inv,
	.cmd_defer = host_cmd_defer,
	.cmd_exec = host_cmd,
	.cmd_done = host_cmd_done,
};

/* ---- the CPUs' view of the model (MMIO) ----------------------------------------------------- */

static uint64_t smmuv3_mmio_size(struct ilab_iommu_unit *u)
{
	struct board_smmuv3 *bs = u->model;

	return smmu_mmio_size(bs->smmu);
}

static uint64_t smmuv3_mmio_read(struct ilab_iommu_unit *u, uint64_t off, unsigned size)
{
	struct board_smmuv3 *bs = u->model;

	return smmu_mmio_read(bs->smmu, off, size);
}

/* The board rings the doorbell after this. In simulation a PROD write also tells the
 * accounting where that queue is and how far it is published. */
static void smmuv3_mmio_write(struct ilab_iommu_unit *u, uint64_t off, uint64_t value,
			      unsigned size)
{
	struct board_smmuv3 *bs = u->model;

	smmu_mmio_write(bs->smmu, off, value, size);
	if (plat_sim) {
		int qi = prod_reg_queue(bs, off);

		if (qi >= 0)
			prod_written(bs, (unsigned)qi, (uint32_t)value);
	}
}

/* ---- the agent's work ------------------------------------------------------------------------ */

static void smmuv3_consume(struct ilab_iommu_unit *u)
{
	struct board_smmuv3 *bs = u->model;

	for (;;) {
		/* with one queue no CMD_SYNC is left waiting (host_cmd_defer): no doorbell read */
		bool waits = plat_sim && bs->sim.nq > 1;
		uint32_t seen = waits ? ilab_iommu_unit_doorbell(u) : 0;
		uint64_t next;

		while (smmu_process_commands(bs->smmu, bs->process_batch))
			;
		if (!waits)
			break;
		/* Queues waiting on a CMD_SYNC: back when the first completes, or earlier when
		 * a register write brings other work. */
		next = smmuv3_timing_next_sync(&bs->timing);
		if (!next)
			break;
		ilab_iommu_unit_idle_until(u, seen, next);
	}
	/* a CMD_SYNC without MSI completes when CONS passes it; one whose MSI is still in the
	 * write path completes when the path has made it (msi_written) */
	if (plat_sim && !smmuv3_msi_path_busy(&bs->msi))
		sync_done(bs);
}

/* ---- device DMA ------------------------------------------------------------------------------ */

/* One page by StreamID: the TLB lookup costs smmu_tlb_lookup_ns; a walk's reads are charged by
 * the memory model as the walker makes them. */
static int smmuv3_translate(struct ilab_iommu_unit *u, const struct ilab_iommu_dma_req *r,
			    struct ilab_iommu_dma_rsp *out, struct ilab_board_fault *fault)
{
	struct board_smmuv3 *bs = u->model;
	struct smmu_txn_req req = { .sid = r->sid, .ssid = r->ssid, .ssv = r->ssv,
				    .iova = r->iova, .write = r->write, .ats = r->ats };
	struct smmu_txn_rsp rsp;

	plat_charge_ns(bs->tlb_lookup_ns); /* the lookup; a walk's reads are charged by mem */
	ilab_sim_sync(); /* the walk sees the tables as they are at this virtual time */
	smmu_translate(bs->smmu, &req, &rsp);
	if (rsp.status != SMMU_TXN_OK) {
		if (fault) {
			fault->event = rsp.event;
			fault->recorded = rsp.event_recorded;
			fault->iova = req.iova;
		}
		return -EIO;
	}
	out->pa = rsp.pa;
	out->page_shift = rsp.page_shift ? rsp.page_shift : 12;
	out->read = rsp.perm & SMMU_PERM_R;
	out->write = rsp.perm & SMMU_PERM_W;
	return 0;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* Per command queue state of the simulation's accounting (board_cmdq_track): SMMU_CMDQ and
 * every ECMDQ the model has, and where the ECMDQs' PROD registers are. */
static int make_queue_tracks(struct board_smmuv3 *bs)
{
	struct board_sim_track *tr = &bs->sim;
	unsigned nq = smmu_cmdq_count(bs->smmu);

	tr->q = plat_zalloc_array(nq, sizeof(*tr->q));
	tr->fetching = plat_zalloc_array(nq, sizeof(*tr->fetching));
	if (!tr->q || !tr->fetching)
		return -ENOMEM;
	tr->nq = nq;
	if (smmuv3_timing_init(&bs->timing, nq))
		return -ENOMEM;
	tr->ecmdq_off = smmu_ecmdq_offset(bs->smmu, 0);
	tr->ecmdq_stride = nq > 2 ? smmu_ecmdq_offset(bs->smmu, 1) - tr->ecmdq_off
				  : SMMU_ECMDQ_CP_SIZE;
	return 0;
}

/* The board options' smmu_* costs, as this SMMU charges them. */
static void take_costs(struct board_smmuv3 *bs, const struct ilab_board_opts *o)
{
	struct smmuv3_timing *t = &bs->timing;

	bs->process_batch = o->process_batch ? o->process_batch : 256;
	t->command_ns = o->smmu_command_ns;
	t->sync_ns = o->smmu_sync_ns;
	t->sync_ack_ns = o->smmu_tlbi_sync_ns;
	t->tlbi_ns = o->smmu_tlbi_ns;
	t->tlbi_scan_ns = o->smmu_tlbi_scan_ns ? o->smmu_tlbi_scan_ns : o->smmu_tlbi_ns;
	t->tlbi_entry_ns = o->smmu_tlbi_entry_ns;
	t->inv_slots = o->smmu_inv_in_flight;
	t->sync_all_queues = o->smmu_sync_all_queues;
	bs->tlb_lookup_ns = o->smmu_tlb_lookup_ns;
	bs->cmd_readahead = o->smmu_cmd_readahead ? o->smmu_cmd_readahead : 64;
}

static void smmuv3_destroy(struct ilab_iommu_unit *u)
{
	struct board_smmuv3 *bs = u->model;

	if (!bs)
		return;
	if (bs->smmu)
		smmu_destroy(bs->smmu);
	smmuv3_msi_path_stop(&bs->msi);
	free(bs->sim.q);
	free(bs->sim.fetching);
	smmuv3_timing_fini(&bs->timing);
	free(bs);
	u->model = NULL;
}

static int smmuv3_create(struct ilab_iommu_unit *u, const char **why)
{
	const struct ilab_board_opts *o = u->opts;
	struct board_smmuv3 *bs;
	struct smmu_config cfg;
	int rc;

	if (o->smmu_cfg)
		cfg = *o->smmu_cfg;
	else
		smmu_config_default(&cfg);
	/* Natively CPUs and the agent thread call the model concurrently. In simulation one host
	 * thread runs every fiber, and a host callback may switch fibers (plat_wrote after an
	 * MSI) while the model would hold its lock: another fiber entering the model would spin
	 * on that lock forever. */
	cfg.thread_safe = plat_engine_kind() == PLAT_ENGINE_NATIVE;
	bs = plat_zalloc(sizeof(*bs)); /* line-aligned: the MSI path's words each have their own */
	if (!bs) {
		*why = "out of memory";
		return -ENOMEM;
	}
	u->model = bs;
	bs->unit = u;
	bs->ril = cfg.ril; /* the range form of a TLBI is a scan (invalidation_engine_take) */
	take_costs(bs, o);
	smmuv3_msi_path_init(&bs->msi, u->name, u->node, msi_written, bs);
	snprintf(bs->sim.sync_name, sizeof(bs->sim.sync_name), "%s.cmd_sync_ns", u->name);
	snprintf(bs->sim.used_name, sizeof(bs->sim.used_name), "%s.cmdq_used", u->name);
	rc = smmu_create(&bs->smmu, &cfg, plat_sim ? &board_host_ops_sim : &board_host_ops, bs,
			 why);
	if (rc) {
		if (!*why)
			*why = "cannot create the model";
		return rc;
	}
	rc = make_queue_tracks(bs);
	if (rc)
		*why = "out of memory";
	return rc;
}

/* ---- the driver ------------------------------------------------------------------------------ */

static int smmuv3_probe(struct ilab_iommu_unit *u, struct plat_mmio *mmio, const void *drv_opts,
			struct ilab_iommu **out, const char **why)
{
	const struct board_smmuv3 *bs = u->model;
	struct ilab_smmu_drv_opts o = { 0 };
	int rc;

	/* Firmware's description of the unit: where its Tegra241 CMDQV is (ACPI NVDA200C). */
	if (drv_opts)
		o = *(const struct ilab_smmu_drv_opts *)drv_opts;
	o.cmdqv_offset = smmu_cmdqv_offset(bs->smmu);
	rc = ilab_smmu_drv_probe(mmio, u->mem, u->node, &o, out);

	if (rc)
		*why = ilab_smmu_drv_strerror();
	return rc;
}

const struct ilab_iommu_arch ilab_iommu_arch_smmuv3 = {
	.name = "smmuv3",
	.unit_kind = "SMMU",
	.driver_name = "SMMUv3",
	.doorbell_name = "board.smmu.doorbell",
	.create = smmuv3_create,
	.destroy = smmuv3_destroy,
	.mmio_size = smmuv3_mmio_size,
	.mmio_read = smmuv3_mmio_read,
	.mmio_write = smmuv3_mmio_write,
	.consume = smmuv3_consume,
	.translate = smmuv3_translate,
	.stats_json = board_smmuv3_stats_json,
	.probe = smmuv3_probe,
	.remove = ilab_smmu_drv_remove,
};
