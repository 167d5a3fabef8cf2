/* board.c — the machine: memory for the topology's nodes, one SMMUv3 model per topology SMMU
 * that smmu_mask selects (all by default) wired to that memory (host ops) and to the CPUs (an
 * MMIO window with a doorbell), and one plat agent per model that consumes commands whenever
 * the doorbell rings.
 * Not device DMA (board_dma.c) and not the drivers (board_iommu.c probes them).
 *
 * In simulation the agent is a fiber on the SMMU's node: the model's memory accesses (queue
 * reads, table walks, MSI writes) are charged from that node by the simulator's line model
 * (ilab_sim_mem_access: from where each line's copies are), each command costs
 * smmu_command_ns (+ smmu_sync_ns for a CMD_SYNC) charged when the model starts executing it
 * (its entry read ahead with the published ones after it, in every queue: cmd_fetch_len),
 * TLBIs go on to one invalidation engine per SMMU (smmu_tlbi_ns by address, smmu_tlbi_scan_ns
 * by ASID/VMID/all or range, + smmu_tlbi_entry_ns per entry dropped) that a later CMD_SYNC
 * of the same queue waits for, and the board records the SMMU's CMD_SYNC latency (PROD write that published it -> its
 * completion) and command-queue occupancy as simulator distributions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/sim.h>

#include "hw/board_internal.h"
#include "util/errf.h"
#include "iommulab/plat.h"

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
 * (not past the end of the queue, at most b->cmd_readahead entries) as one multi-line access:
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

static size_t cmd_fetch_len(struct board_smmu *bs, uint64_t pa, size_t len)
{
	struct board_cmdq_track *q;
	uint64_t entries, idx, prod, n;

	if (len != 16)
		return len;
	q = fetch_queue(&bs->sim, pa);
	if (!q || (pa - q->q_base) % 16)
		return len;
	/* Entries are read in order, once each: inside the last read-ahead this one is already
	 * in the fetch buffer (charged as its line: a hit, or a re-fetch if a CPU wrote it). */
	if (q->fetch_seq++ < q->fetched_end)
		return len;
	entries = 1ull << q->q_log2;
	idx = (pa - q->q_base) / 16;
	prod = q->last_prod & (entries - 1);
	n = prod > idx ? prod - idx : entries - idx; /* up to PROD or the end of the queue */
	if (n > bs->board->cmd_readahead)
		n = bs->board->cmd_readahead;
	q->fetched_end = q->fetch_seq - 1 + n;
	return (size_t)n * 16;
}

static int host_mem_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct board_smmu *bs = ctx;

	if (plat_sim) {
		/* Simulation: charged line by line from where the lines are (a command the CPU
		 * just wrote comes from its cache, a PTE from the CPU that stored it). */
		size_t span = cmd_fetch_len(bs, pa, len);
		const void *va = ilab_mem_va(bs->board->mem, pa, span);

		if (va) {
			memcpy(buf, va, len);
			ilab_sim_mem_access(va, span, false);
			return 0;
		}
		va = ilab_mem_va(bs->board->mem, pa, len);
		if (va) {
			memcpy(buf, va, len);
			ilab_sim_mem_access(va, len, false);
			return 0;
		}
	}
	return ilab_mem_read(bs->board->mem, pa, buf, len) ? -1 : 0;
}

static int host_mem_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct board_smmu *bs = ctx;
	struct ilab_mem *mem = bs->board->mem;

	/* Aligned 32/64-bit writes (MSIs, single-word updates) are single-copy atomic, as on a
	 * real interconnect: a CPU may be polling that very word. */
	if ((len == 4 || len == 8) && !(pa % len)) {
		void *va = ilab_mem_va(mem, pa, len);
		uint64_t v = 0;

		if (!va)
			return -1;
		memcpy(&v, buf, len);
		/* Simulation: the word changes when the write arrives, and not before any fiber
		 * behind that time has run (a poller must not see it early). */
		ilab_sim_mem_access(va, len, true);
		ilab_sim_sync();
		if (len == 4)
			__atomic_store_n((uint32_t *)va, (uint32_t)v, __ATOMIC_RELEASE);
		else
			__atomic_store_n((uint64_t *)va, v, __ATOMIC_RELEASE);
		return 0;
	}
	if (plat_sim) {
		void *va = ilab_mem_va(mem, pa, len);

		if (va) {
			memcpy(va, buf, len);
			ilab_sim_mem_access(va, len, true);
			return 0;
		}
	}
	return ilab_mem_write(mem, pa, buf, len) ? -1 : 0;
}

/* ---- simulation: costs and measurements ---------------------------------------------------- */

static void sync_done(struct board_smmu *bs)
{
	struct board_sim_track *tr = &bs->sim;

	if (!tr->sync_pending)
		return;
	tr->sync_pending = false;
	ilab_sim_sample_dist(&tr->sync_dist, tr->sync_name, plat_now_ns() - tr->sync_pub_t);
}

static void host_msi(void *ctx, uint64_t addr, uint32_t data)
{
	struct board_smmu *bs = ctx;
	void *va = ilab_mem_va(bs->board->mem, addr, 4);

	(void)data;
	if (plat_sim)
		sync_done(bs); /* the MSI is the CMD_SYNC's completion signal */
	if (va)
		plat_wrote(va); /* wake simulated pollers of that word */
}

/* Entries between cons and prod (index + wrap bit each) of a queue of 2^log2 entries. */
static uint32_t queue_used(uint32_t prod, uint32_t cons, unsigned log2)
{
	return (prod - cons) & ((2u << log2) - 1);
}

/* A CPU wrote queue qi's PROD (simulation): where that queue is and how far it is published
 * (its command fetch reads ahead up to there). For SMMU_CMDQ also when these commands were
 * published, and how full the queue is now (published, not yet consumed). */
static void prod_written(struct board_smmu *bs, unsigned qi, uint32_t prod)
{
	struct board_sim_track *tr = &bs->sim;
	struct board_cmdq_track *q = &tr->q[qi];
	uint64_t base = smmu_mmio_read(bs->smmu, qi ? tr->ecmdq_off + (qi - 1) * tr->ecmdq_stride +
						       SMMU_ECMDQ_REG_BASE
						     : SMMU_REG_CMDQ_BASE, 8);
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
static int prod_reg_queue(const struct board_smmu *bs, uint64_t off)
{
	const struct board_sim_track *tr = &bs->sim;
	uint64_t rel, n;

	if (off == SMMU_REG_CMDQ_PROD)
		return 0;
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
static bool tlbi_scans(const struct ilab_board *b, uint64_t d0, uint64_t d1)
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

/* A TLBI the command processor has dispatched from queue q. With smmu_tlbi_ns the
 * invalidation itself is done by an engine behind the command processor (the TLB and
 * walk-cache scan; on a distributed SMMU, the TBUs), one TLBI after another in arrival order,
 * whichever queue it came from, while the processor goes on with the next commands: only a
 * CMD_SYNC waits for it. There is one engine per SMMU (it is the SMMU's TLB), so TLBIs of
 * other queues that arrived earlier delay this one's completion. Without it the TLBI cost its
 * command_ns. Only the timing is deferred: the model drops the cached entries at dispatch,
 * which the architecture allows (an invalidation may take effect at any time before the
 * CMD_SYNC that follows it completes). Its time there depends on its scope and on what it
 * found: smmu_tlbi_ns for a lookup by address, smmu_tlbi_scan_ns for a scan of every entry
 * (tlbi_scans), plus smmu_tlbi_entry_ns for each of the `dropped` entries the model
 * invalidated (each cleared entry is a write of its set). */
static void invalidation_engine_take(const struct ilab_board *b, struct board_sim_track *tr,
				     struct board_cmdq_track *q, uint64_t d0, uint64_t d1,
				     uint32_t dropped)
{
	uint64_t now = plat_now_ns();
	uint64_t cost = (tlbi_scans(b, d0, d1) ? b->tlbi_scan_ns : b->tlbi_ns) +
			(uint64_t)dropped * b->tlbi_entry_ns;

	q->tlbi_since_sync = true;
	tr->tlbi_any_queue = true;
	if (!cost)
		return;
	tr->engine_done = (tr->engine_done > now ? tr->engine_done : now) + cost;
	q->inv_done = tr->engine_done; /* the engine serves in order: this queue's last TLBI */
}

/* How long a CMD_SYNC waits before it completes. A CMD_SYNC completes once the commands
 * before it in its own queue have (IHI 0070 §4.7.3); after TLBIs that means their completion
 * handshake, at least smmu_tlbi_sync_ns (every agent caching translations acknowledging
 * them), and the invalidation engine having done them. The two overlap: a few TLBIs cost the
 * handshake alone, many cost the engine's time (seed 002's t=10 unmaps: flat ~0.6 us per
 * TLBI+sync up to 8 pages, then ~75 ns per page). A sync into an idle queue (seed 000), or
 * into a queue with no TLBI since its last sync, pays neither: other queues' TLBIs are not its
 * business. With smmu.sync_waits_all_queues (b->sync_all_queues), a sync instead waits for
 * every TLBI the engine was given, from any queue, and pays the handshake if any queue had
 * one since the last sync of any queue (cross-queue coalescing: the behaviour before queues
 * were told apart). */
static uint64_t sync_wait_ns(const struct ilab_board *b, struct board_sim_track *tr,
			     struct board_cmdq_track *q)
{
	uint64_t now = plat_now_ns(), done, engine;

	if (b->sync_all_queues ? !tr->tlbi_any_queue : !q->tlbi_since_sync)
		return 0;
	done = b->sync_all_queues ? tr->engine_done : q->inv_done;
	q->tlbi_since_sync = false;
	if (b->sync_all_queues)
		tr->tlbi_any_queue = false;
	engine = done > now ? done - now : 0;
	return engine > b->tlbi_sync_ns ? engine : b->tlbi_sync_ns;
}

/* The model starts executing a command of queue qi (its entry has been read and charged):
 * charge the execution before its effects (CONS, MSI) become visible. */
static void host_cmd(void *ctx, unsigned qi, uint64_t d0, uint64_t d1)
{
	struct board_smmu *bs = ctx;
	struct ilab_board *b = bs->board;
	struct board_sim_track *tr = &bs->sim;
	struct board_cmdq_track *q = &tr->q[qi < tr->nq ? qi : 0];
	unsigned op = (unsigned)(d0 & 0xff);
	bool sync = op == CMDQ_OP_SYNC;

	(void)d1;
	plat_charge_ns(b->command_ns + (sync ? b->sync_ns : 0));
	if (sync)
		plat_charge_ns(sync_wait_ns(b, tr, q));
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
 * host_cmd charged its execution. */
static void host_cmd_done(void *ctx, unsigned qi, uint64_t d0, uint64_t d1, uint32_t dropped)
{
	struct board_smmu *bs = ctx;
	struct board_sim_track *tr = &bs->sim;
	unsigned op = (unsigned)(d0 & 0xff);

	if (op >= CMDQ_OP_TLBI_FIRST && op <= CMDQ_OP_TLBI_LAST)
		invalidation_engine_take(bs->board, tr, &tr->q[qi < tr->nq ? qi : 0], d0, d1,
					 dropped);
}

/* CMD_ATC_INV: an ATS Invalidation Request to the endpoint; the devices' model answers it. */
static void host_atc_inv(void *ctx, uint32_t sid, uint32_t ssid, bool ssv, uint64_t addr,
			 unsigned size_log2, bool global)
{
	struct board_smmu *bs = ctx;
	struct ilab_board *b = bs->board;

	if (b->atc_inv)
		b->atc_inv(b->atc_inv_ctx, bs->index, sid, ssid, ssv, addr, size_log2, global);
}

void ilab_board_set_atc_inv(struct ilab_board *b, ilab_board_atc_inv_fn fn, void *ctx)
{
	if (!b)
		return;
	b->atc_inv = fn;
	b->atc_inv_ctx = ctx;
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
	.cmd_exec = host_cmd,
	.cmd_done = host_cmd_done,
};

/* ---- the CPUs' view of the model (MMIO) ----------------------------------------------------- */

static uint64_t board_mmio_read(void *ctx, uint64_t off, unsigned size)
{
	struct board_smmu *bs = ctx;

	return smmu_mmio_read(bs->smmu, off, size);
}

static void board_mmio_write(void *ctx, uint64_t off, uint64_t value, unsigned size)
{
	struct board_smmu *bs = ctx;

	smmu_mmio_write(bs->smmu, off, value, size);
	if (plat_sim) {
		int qi = prod_reg_queue(bs, off);

		if (qi >= 0)
			prod_written(bs, (unsigned)qi, (uint32_t)value);
	}
	/* Ring the doorbell: the agent re-checks the queues (any write may enable one). Not a
	 * tracked RMW: the doorbell is the register write itself, whose cost plat_mmio already
	 * charged the CPU; plat_wrote wakes the simulated agent. */
	atomic_fetch_add_explicit(&bs->doorbell.v, 1, memory_order_release);
	plat_wrote(&bs->doorbell);
}

static const struct plat_mmio_ops board_mmio_ops = {
	.read = board_mmio_read,
	.write = board_mmio_write,
};

/* ---- the model's agent --------------------------------------------------------------------- */

struct agent_wait {
	struct plat_agent *agent;
	uint32_t seen;
};

static bool doorbell_rang(uint64_t v, void *arg)
{
	const struct agent_wait *w = arg;

	return (uint32_t)v != w->seen || plat_agent_should_stop(w->agent);
}

static void smmu_agent(struct plat_agent *agent, void *arg)
{
	struct board_smmu *bs = arg;
	struct agent_wait w = { .agent = agent };

	for (;;) {
		/* Read the doorbell before looking at the queue: a PROD write after our last
		 * look has rung it again, so the poll below cannot miss it. */
		w.seen = plat_load32(&bs->doorbell);
		while (smmu_process_commands(bs->smmu, bs->board->process_batch))
			;
		if (plat_sim)
			sync_done(bs); /* a CMD_SYNC without MSI completes when CONS passes it */
		if (plat_agent_should_stop(agent))
			return;
		plat_poll(&bs->doorbell, 4, doorbell_rang, &w, 0);
	}
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* Tell the simulator which host memory is which node's (polled words in simulated memory, e.g.
 * a CMD_SYNC's MSI slot, are then re-read from their home node), or forget it. */
static void declare_mem_homes(struct ilab_board *b, bool declare)
{
	unsigned n = ilab_topo_nr_nodes(b->topo);

	if (!plat_sim || declare == b->mem_homes)
		return;
	for (unsigned i = 0; i < n; i++) {
		ilab_pa_t base;
		uint64_t bytes;
		void *va;

		if (ilab_mem_node_range(b->mem, (int)i, &base, &bytes) || !bytes)
			continue;
		va = ilab_mem_va(b->mem, base, 0);
		if (va)
			ilab_sim_mem_home(va, bytes, declare ? (int)i : -1);
	}
	b->mem_homes = declare;
}

#define DEFAULT_NODE_BYTES (4ull << 30)
#define DEFAULT_CMA_BYTES (64ull << 20)

static int make_mem(struct ilab_board *b, const struct ilab_board_opts *o, char *err, size_t errlen)
{
	struct ilab_mem_config mc = { 0 };
	int rc;

	mc.nr_nodes = ilab_topo_nr_nodes(b->topo);
	mc.node_bytes = o->node_bytes ? o->node_bytes : DEFAULT_NODE_BYTES;
	mc.cma = o->cma;
	mc.cma_global_node = o->cma_global_node;
	if (o->cma != ILAB_CMA_NONE) {
		mc.cma_global_bytes = o->cma_global_bytes ? o->cma_global_bytes : DEFAULT_CMA_BYTES;
		if (o->cma != ILAB_CMA_GLOBAL)
			mc.cma_node_bytes = o->cma_node_bytes ? o->cma_node_bytes : DEFAULT_CMA_BYTES;
		mc.cma_nodes_mask = o->cma_nodes_mask;
	}
	rc = ilab_mem_create(&mc, &b->mem);
	if (rc)
		return ilab_errf(err, errlen, rc, "board: memory: %s", ilab_mem_strerror());
	declare_mem_homes(b, true);
	return 0;
}

/* Per command queue state of the simulation's accounting (board_cmdq_track): SMMU_CMDQ and
 * every ECMDQ the model has, and where the ECMDQs' PROD registers are. */
static int make_queue_tracks(struct board_smmu *bs)
{
	struct board_sim_track *tr = &bs->sim;
	unsigned nq = smmu_cmdq_count(bs->smmu);

	tr->q = plat_zalloc_array(nq, sizeof(*tr->q));
	tr->fetching = plat_zalloc_array(nq, sizeof(*tr->fetching));
	if (!tr->q || !tr->fetching)
		return -ENOMEM;
	tr->nq = nq;
	tr->ecmdq_off = smmu_ecmdq_offset(bs->smmu, 0);
	tr->ecmdq_stride = nq > 2 ? smmu_ecmdq_offset(bs->smmu, 1) - tr->ecmdq_off
				  : SMMU_ECMDQ_CP_SIZE;
	return 0;
}

static int make_smmus(struct ilab_board *b, const struct ilab_board_opts *o, char *err,
		      size_t errlen)
{
	struct smmu_config cfg;

	if (o->smmu_cfg)
		cfg = *o->smmu_cfg;
	else
		smmu_config_default(&cfg);
	/* Natively CPUs and the agent thread call the model concurrently. In simulation one host
	 * thread runs every fiber, and a host callback may switch fibers (plat_wrote after an
	 * MSI) while the model would hold its lock: another fiber entering the model would spin
	 * on that lock forever. */
	cfg.thread_safe = plat_engine_kind() == PLAT_ENGINE_NATIVE;
	b->ril = cfg.ril; /* the range form of a TLBI is a scan (invalidation_engine_take) */

	b->nr_smmus = ilab_topo_nr_smmus(b->topo);
	if (!b->nr_smmus)
		return 0;
	b->smmus = aligned_alloc(PLAT_CACHELINE, b->nr_smmus * sizeof(*b->smmus));
	if (!b->smmus)
		return ilab_errf(err, errlen, -ENOMEM, "board: out of memory");
	memset(b->smmus, 0, b->nr_smmus * sizeof(*b->smmus));
	for (unsigned i = 0; i < b->nr_smmus; i++) {
		const struct ilab_smmu_desc *d = ilab_topo_smmu(b->topo, i);
		struct board_smmu *bs = &b->smmus[i];
		const char *why = NULL;
		int rc;

		bs->board = b;
		bs->index = i;
		bs->node = d->node < 0 ? 0 : d->node;
		snprintf(bs->name, sizeof(bs->name), "%s", d->name[0] ? d->name : "smmu");
		if (o->smmu_mask && (i >= 64 || !(o->smmu_mask & (1ull << i))))
			continue; /* left out of this board */
		snprintf(bs->sim.sync_name, sizeof(bs->sim.sync_name), "%s.cmd_sync_ns", bs->name);
		snprintf(bs->sim.used_name, sizeof(bs->sim.used_name), "%s.cmdq_used", bs->name);
		rc = smmu_create(&bs->smmu, &cfg, plat_sim ? &board_host_ops_sim : &board_host_ops,
				 bs, &why);
		if (rc)
			return ilab_errf(err, errlen, rc, "board: SMMU %u: %s", i,
					 why ? why : "cannot create the model");
		rc = make_queue_tracks(bs);
		if (rc)
			return ilab_errf(err, errlen, rc, "board: out of memory");
		bs->mmio.ops = &board_mmio_ops;
		bs->mmio.ctx = bs;
		bs->mmio.node = bs->node;
		bs->mmio.name = bs->name;
		plat_store32(&bs->doorbell, 0);
		plat_track(&bs->doorbell, "board.smmu.doorbell");
	}
	return 0;
}

static int make_devices(struct ilab_board *b, char *err, size_t errlen)
{
	b->nr_devs = ilab_topo_nr_devices(b->topo);
	if (!b->nr_devs)
		return 0;
	b->devs = plat_zalloc_array(b->nr_devs, sizeof(*b->devs));
	b->dev_smmu = plat_zalloc_array(b->nr_devs, sizeof(*b->dev_smmu));
	if (!b->devs || !b->dev_smmu)
		return ilab_errf(err, errlen, -ENOMEM, "board: out of memory");
	for (unsigned i = 0; i < b->nr_devs; i++) {
		const struct ilab_device *d = ilab_topo_device(b->topo, i);

		snprintf(b->devs[i].name, sizeof(b->devs[i].name), "%s", d->name);
		b->devs[i].node = d->node;
		b->devs[i].sid = d->sid;
		b->devs[i].dma_bits = 48;
		b->dev_smmu[i] = d->smmu;
		if (d->smmu >= b->nr_smmus)
			return ilab_errf(err, errlen, -EINVAL, "board: device %s: no SMMU %u",
					 d->name, d->smmu);
	}
	return 0;
}

int ilab_board_create(const struct ilab_topo *topo, const struct ilab_board_opts *opts,
		      struct ilab_board **out, char *err, size_t errlen)
{
	struct ilab_board_opts defaults = { 0 };
	struct ilab_board *b;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return ilab_errf(err, errlen, -EINVAL, "board: no output pointer");
	*out = NULL;
	if (!topo)
		return ilab_errf(err, errlen, -EINVAL, "board: no topology");
	if (!opts)
		opts = &defaults;
	if (opts->cma_global_node < 0 || (unsigned)opts->cma_global_node >= ilab_topo_nr_nodes(topo))
		return ilab_errf(err, errlen, -EINVAL, "board: CMA global node %d is not a node",
				 opts->cma_global_node);
	b = plat_zalloc_array(1, sizeof(*b));
	if (!b)
		return ilab_errf(err, errlen, -ENOMEM, "board: out of memory");
	b->topo = topo;
	b->process_batch = opts->process_batch ? opts->process_batch : 256;
	b->command_ns = opts->smmu_command_ns;
	b->sync_ns = opts->smmu_sync_ns;
	b->tlbi_sync_ns = opts->smmu_tlbi_sync_ns;
	b->tlbi_ns = opts->smmu_tlbi_ns;
	b->tlbi_scan_ns = opts->smmu_tlbi_scan_ns ? opts->smmu_tlbi_scan_ns : opts->smmu_tlbi_ns;
	b->tlbi_entry_ns = opts->smmu_tlbi_entry_ns;
	b->tlb_lookup_ns = opts->smmu_tlb_lookup_ns;
	b->cmd_readahead = opts->smmu_cmd_readahead ? opts->smmu_cmd_readahead : 64;
	b->sync_all_queues = opts->smmu_sync_all_queues;
	rc = make_mem(b, opts, err, errlen);
	if (!rc)
		rc = make_smmus(b, opts, err, errlen);
	if (!rc)
		rc = make_devices(b, err, errlen);
	if (rc) {
		ilab_board_destroy(b);
		return rc;
	}
	*out = b;
	return 0;
}

int ilab_board_start(struct ilab_board *b)
{
	if (!b)
		return -EINVAL;
	for (unsigned i = 0; i < b->nr_smmus; i++) {
		struct board_smmu *bs = &b->smmus[i];
		int rc;

		if (bs->agent || !bs->smmu)
			continue;
		rc = plat_agent_start(bs->name, bs->node, smmu_agent, bs, &bs->agent);
		if (rc) {
			ilab_board_stop(b);
			return rc;
		}
	}
	return 0;
}

void ilab_board_stop(struct ilab_board *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < b->nr_smmus; i++) {
		struct board_smmu *bs = &b->smmus[i];

		if (bs->agent)
			plat_agent_stop(bs->agent, &bs->doorbell);
		bs->agent = NULL;
	}
}

void ilab_board_destroy(struct ilab_board *b)
{
	if (!b)
		return;
	/* Drivers issue commands while they remove: the agents must still run. */
	board_remove_iommus(b);
	ilab_board_stop(b);
	for (unsigned i = 0; b->smmus && i < b->nr_smmus; i++) {
		if (b->smmus[i].smmu)
			smmu_destroy(b->smmus[i].smmu);
		free(b->smmus[i].sim.q);
		free(b->smmus[i].sim.fetching);
	}
	free(b->smmus);
	free(b->devs);
	free(b->dev_smmu);
	if (b->mem)
		declare_mem_homes(b, false);
	ilab_mem_destroy(b->mem);
	free(b);
}

struct ilab_mem *ilab_board_mem(struct ilab_board *b)
{
	return b ? b->mem : NULL;
}

const struct ilab_topo *ilab_board_topo(const struct ilab_board *b)
{
	return b ? b->topo : NULL;
}

unsigned ilab_board_nr_smmus(const struct ilab_board *b)
{
	return b ? b->nr_smmus : 0;
}

struct smmu *ilab_board_smmu(struct ilab_board *b, unsigned i)
{
	return b && i < b->nr_smmus ? b->smmus[i].smmu : NULL;
}

struct plat_mmio *ilab_board_mmio(struct ilab_board *b, unsigned i)
{
	/* an SMMU that smmu_mask left out has no model behind its window: absent */
	return b && i < b->nr_smmus && b->smmus[i].smmu ? &b->smmus[i].mmio : NULL;
}

int ilab_board_smmu_node(const struct ilab_board *b, unsigned i)
{
	return b && i < b->nr_smmus ? b->smmus[i].node : -EINVAL;
}
