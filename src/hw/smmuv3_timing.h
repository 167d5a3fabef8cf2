/* smmuv3_timing.h — what an SMMUv3's command path costs in simulation, built from its
 * structure (smmuv3_timing.c; docs/smmuv3-timing.md draws it). The board (board_smmuv3.c)
 * asks it; it knows nothing of registers, memory or the model.
 */
#ifndef ILAB_HW_SMMUV3_TIMING_H
#define ILAB_HW_SMMUV3_TIMING_H

#include <stdbool.h>
#include <stdint.h>

/* One command queue (SMMU_CMDQ, an ECMDQ, a VCMDQ) as the timing sees it. */
struct smmuv3_timing_queue {
	bool tlbi_since_sync; /* a TLBI of this queue was handed over since its last CMD_SYNC */
	uint64_t inv_done;    /* when the invalidation engine finishes this queue's TLBIs */
	bool sync_timed;      /* the CMD_SYNC at its head has been issued: it completes at */
	uint64_t sync_ready;  /* ...this time (the queue begins nothing after it until then) */
};

struct smmuv3_timing {
	/* the profile's smmu: constants */
	uint64_t command_ns;  /* the command processor's occupancy per command */
	uint64_t sync_ns;     /* ...plus this for a CMD_SYNC */
	uint64_t sync_ack_ns; /* a CMD_SYNC after TLBIs: the completion handshake (tlbi_sync_ns) */
	uint64_t tlbi_ns, tlbi_scan_ns, tlbi_entry_ns; /* the invalidation engine */
	unsigned inv_slots;   /* TLBIs in flight at most (0: unbounded) */
	bool sync_all_queues; /* a CMD_SYNC waits for every queue's TLBIs */
	/* state */
	struct smmuv3_timing_queue *q;
	unsigned nq;
	uint64_t engine_done; /* when the engine finishes every TLBI it was given */
	bool tlbi_any_queue;  /* a TLBI since the last CMD_SYNC of any queue */
	uint64_t *inv_ring;   /* completion times of the last inv_slots TLBIs handed over */
	unsigned inv_next;
	unsigned deferred;    /* queues whose head CMD_SYNC is issued and not complete */
};

int smmuv3_timing_init(struct smmuv3_timing *t, unsigned nq);
void smmuv3_timing_fini(struct smmuv3_timing *t);

/* The processor takes a command of queue qi at `now`: how long it is busy with it. For a
 * TLBI this includes waiting for an invalidation slot. Not for a CMD_SYNC (sync_issue). */
uint64_t smmuv3_timing_cmd(struct smmuv3_timing *t, unsigned qi, bool tlbi, uint64_t now);
/* A TLBI of queue qi handed to the engine at `now`: its scope (scan: every entry, else one
 * lookup) and the entries it dropped. Returns when the engine starts it (for the trace). */
uint64_t smmuv3_timing_tlbi(struct smmuv3_timing *t, unsigned qi, bool scan, uint32_t dropped,
			    uint64_t now, uint64_t *cost);
/* The CMD_SYNC at the head of queue qi: issued the first time it is asked (the processor's
 * occupancy, *busy, from `now`), then the time it completes (IHI 0070 §4.7.3). */
uint64_t smmuv3_timing_sync(struct smmuv3_timing *t, unsigned qi, uint64_t now, uint64_t *busy);
/* That CMD_SYNC has completed (CONS moves past it): the queue may begin its next command. */
void smmuv3_timing_sync_done(struct smmuv3_timing *t, unsigned qi);
/* The earliest completion among the queues' issued CMD_SYNCs, 0 when none is waiting. */
uint64_t smmuv3_timing_next_sync(const struct smmuv3_timing *t);

#endif
