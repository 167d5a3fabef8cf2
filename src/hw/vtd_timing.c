/* vtd_timing.c — a VT-d unit's translation timing in simulation, from its structure:
 *
 *   device requests (ATS translation requests, untranslated DMA)
 *        |
 *        v
 *   [ request slots: vtd.outstanding_requests ]   a request holds one from arrival to its
 *        |   (queue here when all are held)        completion (lookup, wait, walk)
 *        v
 *   IOTLB + paging-structure caches (iotlb_lookup_ns) --hit--> done
 *        | miss
 *        v
 *   [ page walkers: vtd.walkers ]                  a walk holds one for walk_ns plus its
 *        (queue here when all are busy)            entry reads (the memory model's charge,
 *                                                  from the unit to each table line's home,
 *                                                  vtd.entry_read_fetches times per entry:
 *                                                  vtd_timing_entry_read_extra)
 *
 * Both are pools of servers taken first come, first served. Intel publishes neither size
 * (the VT-d specification leaves them to the implementation): both are FREE constants of
 * the profile (docs/vtd-timing.md), 0 meaning no limit, the model before they existed.
 * The wait is charged to the translating fiber after the walk's reads were charged: the same
 * total, and the reads see the tables as they were at arrival (an approximation by the wait).
 */
#include <stdlib.h>

#include "hw/vtd_timing.h"

static int pool_init(struct vtd_pool *p, unsigned n)
{
	p->n = n;
	p->free = n ? calloc(n, sizeof(*p->free)) : NULL;
	return n && !p->free ? -1 : 0;
}

/* The server free earliest, and when (0 for a pool without limit). */
static unsigned pool_earliest(const struct vtd_pool *p, uint64_t *when)
{
	unsigned best = 0;

	*when = 0;
	for (unsigned i = 0; i < p->n; i++)
		if (p->free[i] < p->free[best])
			best = i;
	if (p->n)
		*when = p->free[best];
	return best;
}

int vtd_timing_init(struct vtd_timing *t, unsigned requests, unsigned walkers)
{
	if (pool_init(&t->requests, requests) || pool_init(&t->walkers, walkers)) {
		vtd_timing_fini(t);
		return -1;
	}
	return 0;
}

void vtd_timing_fini(struct vtd_timing *t)
{
	free(t->requests.free);
	free(t->walkers.free);
	t->requests.free = t->walkers.free = NULL;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* An entry read from the unit is not one CPU load: the public figures give it the cost of
 * about 2.4 memory latencies (F&S, SOSP'24: 197 ns per walk read on Cascade Lake, whose cores
 * read DRAM in 81 ns) and Ice Lake-SP's IIO counts 4-5 memory fetches per IOTLB miss whose
 * walk needed one entry (icelakex UNC_IIO_IOMMU0 event 0x41/0x40; docs/vtd-timing.md). Each
 * fetch goes to the entry's home, so a remote table pays the socket crossing once per fetch,
 * not once per entry. */
uint64_t vtd_timing_entry_read_extra(const struct vtd_timing *t, uint64_t one_fetch_ns)
{
	return t->entry_fetches > 1 ? (uint64_t)(t->entry_fetches - 1) * one_fetch_ns : 0;
}

uint64_t vtd_timing_translate(struct vtd_timing *t, uint64_t arrive, int walked,
			      uint64_t walk_mem_ns)
{
	uint64_t slot_at, walker_at, start, end;
	unsigned slot = pool_earliest(&t->requests, &slot_at), walker;

	start = max64(arrive, slot_at);
	end = start + t->iotlb_lookup_ns;
	if (walked) {
		walker = pool_earliest(&t->walkers, &walker_at);
		end = max64(end, walker_at) + t->walk_ns + walk_mem_ns;
		if (t->walkers.n)
			t->walkers.free[walker] = end;
	}
	if (t->requests.n)
		t->requests.free[slot] = end;
	return end;
}
