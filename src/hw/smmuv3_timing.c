/* smmuv3_timing.c — the SMMUv3 command path's timing in simulation, from its structure:
 *
 *   queues (SMMU_CMDQ, ECMDQs, VCMDQs)   one command processor          invalidation engine
 *   [q0: T T S T S ...] --+             (round robin, one command     (TLB and walk-cache
 *   [q1: T S ...]      ---+---------->   per queue with work;  ---->   scan, one TLBI at a
 *   [qn: ...]          --+               command_ns each,              time, arrival order:
 *        ^                               + sync_ns a CMD_SYNC)         tlbi_ns / scan_ns
 *        | a queue whose head CMD_SYNC        |  at most inv_slots      + entry_ns each)
 *        | is issued begins nothing more      |  TLBIs in flight             |
 *        +---- until it completes: max(issue + sync_ack_ns, its TLBIs done) <+
 *
 * - The processor's occupancy (fetch is the memory model's; decode and per-command work
 *   command_ns, + sync_ns for a CMD_SYNC) is what it spends on each command. It does not
 *   wait out a CMD_SYNC: the sync's completion is the queue's business.
 * - A TLBI is handed to the engine and the processor goes on with the next command; at most
 *   inv_slots TLBIs are in flight (handed over, not finished): past that the processor waits
 *   for the oldest. The engine scans one TLBI at a time (it is the SMMU's TLB).
 * - A CMD_SYNC completes once every command before it in its own queue has completed (IHI
 *   0070 §4.7.3: it "provides a synchronization mechanism for ... preceding commands that
 *   were issued to the same Command queue"), after the completion handshake with everything
 *   that caches translations (sync_ack_ns, overlapping the engine's work: max, not sum), and
 *   "Commands in the Command queue that are more recent than a CMD_SYNC do not begin
 *   processing until the CMD_SYNC completes" (§4.7.3): its queue stops, the others do not.
 *   Its completion is made observable before CONS passes it and before its MSI (§4.7.3), so
 *   the board executes it in the model at that time. A CMD_SYNC with no TLBI before it since
 *   the last one pays no handshake (MMU-600 TRM §2.2.1 says the same of its DVM Sync).
 *   CMD_SYNCs of one queue complete in order (§4.7.3, the table's last row).
 * - With sync_all_queues a CMD_SYNC waits for every TLBI the engine was given, from any
 *   queue (an implementation that coalesces completion across queues).
 */
#include <stdlib.h>

#include "hw/smmuv3_timing.h"

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

int smmuv3_timing_init(struct smmuv3_timing *t, unsigned nq)
{
	t->q = calloc(nq ? nq : 1, sizeof(*t->q));
	t->nq = nq;
	t->inv_ring = t->inv_slots ? calloc(t->inv_slots, sizeof(*t->inv_ring)) : NULL;
	if (!t->q || (t->inv_slots && !t->inv_ring)) {
		smmuv3_timing_fini(t);
		return -1;
	}
	return 0;
}

void smmuv3_timing_fini(struct smmuv3_timing *t)
{
	free(t->q);
	free(t->inv_ring);
	t->q = NULL;
	t->inv_ring = NULL;
}

/* When an invalidation slot is free: the oldest of the last inv_slots TLBIs is done. */
static uint64_t slot_free_at(const struct smmuv3_timing *t)
{
	return t->inv_slots ? t->inv_ring[t->inv_next] : 0;
}

uint64_t smmuv3_timing_cmd(struct smmuv3_timing *t, unsigned qi, bool tlbi, uint64_t now)
{
	uint64_t wait = 0;

	(void)qi;
	if (tlbi && slot_free_at(t) > now)
		wait = slot_free_at(t) - now; /* every slot busy: the hand-over waits */
	return wait + t->command_ns;
}

uint64_t smmuv3_timing_tlbi(struct smmuv3_timing *t, unsigned qi, bool scan, uint32_t dropped,
			    uint64_t now, uint64_t *cost)
{
	struct smmuv3_timing_queue *q = &t->q[qi < t->nq ? qi : 0];
	uint64_t c = (scan ? t->tlbi_scan_ns : t->tlbi_ns) + (uint64_t)dropped * t->tlbi_entry_ns;
	uint64_t start = max64(t->engine_done, now);

	q->tlbi_since_sync = true;
	t->tlbi_any_queue = true;
	*cost = c;
	if (!c)
		return start;
	t->engine_done = start + c;
	q->inv_done = t->engine_done; /* the engine serves in order: this queue's last TLBI */
	if (t->inv_slots) {
		t->inv_ring[t->inv_next] = t->engine_done;
		t->inv_next = (t->inv_next + 1) % t->inv_slots;
	}
	return start;
}

uint64_t smmuv3_timing_sync(struct smmuv3_timing *t, unsigned qi, uint64_t now, uint64_t *busy)
{
	struct smmuv3_timing_queue *q = &t->q[qi < t->nq ? qi : 0];
	uint64_t issued, done;
	bool handshake;

	*busy = 0;
	if (q->sync_timed)
		return q->sync_ready;
	*busy = t->command_ns + t->sync_ns;
	issued = now + *busy;
	handshake = t->sync_all_queues ? t->tlbi_any_queue : q->tlbi_since_sync;
	done = issued;
	if (handshake) {
		uint64_t engine = t->sync_all_queues ? t->engine_done : q->inv_done;

		done = max64(issued + t->sync_ack_ns, engine);
	}
	q->tlbi_since_sync = false;
	if (t->sync_all_queues)
		t->tlbi_any_queue = false;
	q->sync_timed = true;
	q->sync_ready = done;
	t->deferred++;
	return done;
}

void smmuv3_timing_sync_done(struct smmuv3_timing *t, unsigned qi)
{
	struct smmuv3_timing_queue *q = &t->q[qi < t->nq ? qi : 0];

	if (!q->sync_timed)
		return;
	q->sync_timed = false;
	t->deferred--;
}

uint64_t smmuv3_timing_next_sync(const struct smmuv3_timing *t)
{
	uint64_t best = 0;

	if (!t->deferred)
		return 0;
	for (unsigned i = 0; i < t->nq; i++)
		if (t->q[i].sync_timed && (!best || t->q[i].sync_ready < best))
			best = t->q[i].sync_ready;
	return best;
}
