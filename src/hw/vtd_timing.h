/* vtd_timing.h — what a VT-d unit's translation of device requests costs in simulation,
 * built from its structure (vtd_timing.c; docs/vtd-timing.md draws it). The board
 * (board_vtd.c) asks it; it knows nothing of registers, tables or the model.
 */
#ifndef ILAB_HW_VTD_TIMING_H
#define ILAB_HW_VTD_TIMING_H

#include <stdint.h>

/* n servers, each busy until free[i]: requests take the one free earliest, in arrival order
 * (first come, first served); n == 0 is a pool without limit. */
struct vtd_pool {
	unsigned n;
	uint64_t *free;
};

struct vtd_timing {
	uint64_t iotlb_lookup_ns; /* per request translated */
	uint64_t walk_ns;         /* per IOTLB miss that walks, beyond its entry reads */
	unsigned entry_fetches;   /* memory fetches per paging-entry read, serial (0 = 1) */
	struct vtd_pool requests; /* translation requests the unit holds at once (ATS and not) */
	struct vtd_pool walkers;  /* page walkers */
};

int vtd_timing_init(struct vtd_timing *t, unsigned requests, unsigned walkers);
void vtd_timing_fini(struct vtd_timing *t);

/* A request arrived at `arrive`; its IOTLB lookup and, if it missed (walked), a walk of
 * walk_mem_ns of entry reads (already charged by the memory model) plus walk_ns. Takes a
 * request slot and a walker as they come free and returns when the request completes. */
uint64_t vtd_timing_translate(struct vtd_timing *t, uint64_t arrive, int walked,
			      uint64_t walk_mem_ns);

/* What one paging-entry read of a walk costs beyond its first fetch (one_fetch_ns, charged by
 * the memory model from the unit to the entry's home node): entry_fetches - 1 more fetches
 * of the same line, one after the other, each as dear as the first. */
uint64_t vtd_timing_entry_read_extra(const struct vtd_timing *t, uint64_t one_fetch_ns);

#endif
