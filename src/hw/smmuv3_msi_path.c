/* smmuv3_msi_path.c — an SMMUv3's write path for CMD_SYNC completion MSIs, in simulation:
 *
 *   command processor --(posts the MSI, goes on)--> write path: one write outstanding,
 *        |                                          made on its own clock (the memory model
 *        |                                          charges it the line: the polling CPU's)
 *        +-- the next CMD_SYNC completes only once that write is made
 *
 * Why the processor does not make the write itself: IHI 0070 §3.18 orders a CMD_SYNC's MSI
 * after its completion ("if the interrupt is visible, the CMD_SYNC's completion must be
 * visible" in CONS) and says when it must have been made — "CMD_SYNC ensures completion of
 * MSIs that originate from the completion of prior CMD_SYNCs from the same Command queue"
 * (§3.18, "MSI synchronization"): the commands between two CMD_SYNCs need not wait for it.
 * In Arm's parts the TCU makes such writes itself, with a limit and no stall of the command
 * processor stated ("only one write transaction can be outstanding at a time", MMU-600 TRM
 * Table 2-4): hence one write at a time here, and a CMD_SYNC that finds the previous write
 * still going waits for it (for every queue: with one write outstanding, the order of the
 * writes is the order of the syncs).
 *
 * An agent of its own (a fiber on the SMMU's node) makes the write, so the line's transfer
 * from the CPU polling it is charged to the path, not to the processor, and the write lands
 * when the memory model says: a lone CMD_SYNC is seen when it was before; only the
 * processor's next command starts earlier. The hand-over is inside the SMMU, no memory: the
 * processor stores `posted` plainly and wakes the path (plat_agent_wake), whose re-read is
 * its own line's, free of any transfer. The way back (`done`, with plat_wrote) costs the
 * processor a transfer only when it had to wait for a write still going.
 */
#include "hw/smmuv3_msi_path.h"

#include <stdio.h>

#include "iommulab/plat.h"

void smmuv3_msi_path_init(struct smmuv3_msi_path *p, const char *unit, int node,
			  smmuv3_msi_deliver_fn deliver, void *ctx)
{
	p->posted = 0;
	p->done = 0;
	p->agent = NULL;
	p->failed = false;
	p->deliver = deliver;
	p->ctx = ctx;
	p->node = node;
	snprintf(p->name, sizeof(p->name), "%s.msi", unit);
}

static bool word_differs(uint64_t v, void *arg)
{
	return (uint32_t)v != *(const uint32_t *)arg;
}

static bool word_is(uint64_t v, void *arg)
{
	return (uint32_t)v == *(const uint32_t *)arg;
}

bool smmuv3_msi_path_busy(const struct smmuv3_msi_path *p)
{
	return __atomic_load_n(&p->posted, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
}

/* The path: make each write handed over, in order; on a stop, what is outstanding first. */
static void path_run(struct plat_agent *agent, void *arg)
{
	struct smmuv3_msi_path *p = arg;

	for (;;) {
		uint32_t done = __atomic_load_n(&p->done, __ATOMIC_RELAXED);

		if (__atomic_load_n(&p->posted, __ATOMIC_ACQUIRE) != done) {
			p->deliver(p->ctx, p->pa, p->data);
			__atomic_store_n(&p->done, done + 1, __ATOMIC_RELEASE);
			plat_wrote(&p->done);
			continue;
		}
		if (plat_agent_should_stop(agent))
			return;
		plat_poll(&p->posted, 4, word_differs, &done, 0);
	}
}

void smmuv3_msi_path_drain(struct smmuv3_msi_path *p)
{
	uint32_t posted = __atomic_load_n(&p->posted, __ATOMIC_ACQUIRE);

	/* A processor asked to stop gets -ETIMEDOUT here: post then refuses (made in place). */
	if (p->agent && smmuv3_msi_path_busy(p))
		plat_poll(&p->done, 4, word_is, &posted, 0);
}

bool smmuv3_msi_path_post(struct smmuv3_msi_path *p, uint64_t pa, uint32_t data)
{
	if (p->failed)
		return false;
	if (!p->agent && plat_agent_start(p->name, p->node, path_run, p, &p->agent)) {
		p->agent = NULL;
		p->failed = true;
		return false;
	}
	smmuv3_msi_path_drain(p);
	if (smmuv3_msi_path_busy(p))
		return false;
	p->pa = pa;
	p->data = data;
	__atomic_store_n(&p->posted, p->posted + 1, __ATOMIC_RELEASE);
	plat_agent_wake(p->agent); /* inside the SMMU: no memory line between the two */
	return true;
}

void smmuv3_msi_path_stop(struct smmuv3_msi_path *p)
{
	if (!p->agent)
		return;
	plat_agent_stop(p->agent, &p->posted);
	p->agent = NULL;
}
