/* atc.h — a PCIe endpoint's Address Translation Cache (ATS): a set-associative cache of the
 * translations an SMMU returned to ATS Translation Requests, looked up by the device's DMA
 * engine, filled from Translation Completions, invalidated by range (ATS Invalidation Requests
 * that CMD_ATC_INV sends), with statistics.
 * It is not the SMMU's TLB (src/hw/smmuv3) and not a DMA engine (src/workloads/dma_engine.c);
 * it has no notion of time and no locking (one device owns it, like the hardware).
 */
#ifndef IOMMULAB_ATC_H
#define IOMMULAB_ATC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ilab_atc_policy {
	ILAB_ATC_LRU = 0,  /* replace the least recently used way of the set */
	ILAB_ATC_FIFO,     /* replace the oldest fill of the set */
};

struct ilab_atc_config {
	uint32_t entries;  /* >= 1, at most 1 << 20 */
	uint32_t ways;     /* 0 or >= entries: fully associative. Sets = entries / ways rounded
			    * down to a power of two, so capacity may be below entries. */
	enum ilab_atc_policy policy;
};

/* A translation as the Translation Completion gave it. */
struct ilab_atc_xlate {
	uint64_t pa;       /* output address of iova (offset included on lookup) */
	uint8_t shift;     /* log2 of the translation's size: 12 for 4 KiB, 21 for 2 MiB */
	bool read, write;  /* access granted */
};

struct ilab_atc_stats {
	uint32_t capacity, sets, ways;
	uint64_t lookups, hits, misses;   /* a write to a read-only entry is a miss */
	uint64_t fills, evictions;        /* evictions: valid entries replaced by a fill */
	uint64_t inv_requests;            /* ilab_atc_invalidate calls */
	uint64_t invalidated;             /* entries they removed */
};

struct ilab_atc;

/* Returns 0, -EINVAL (entries 0 or too large, unknown policy) or -ENOMEM. */
int ilab_atc_create(const struct ilab_atc_config *cfg, struct ilab_atc **out);
void ilab_atc_destroy(struct ilab_atc *atc); /* NULL is fine */

/* Look up the translation of iova for a read or a write, under PASID ssid when ssv. A hit
 * fills *out (pa = the entry's base plus iova's offset in it) and returns true. */
bool ilab_atc_lookup(struct ilab_atc *atc, uint32_t ssid, bool ssv, uint64_t iova, bool write,
		     struct ilab_atc_xlate *out);
/* Insert the translation of the 2^x->shift bytes containing iova (x->pa is the output of iova
 * or of the span's base: only bits above shift are kept). An entry for the same span replaces
 * the old one. A completion granting nothing (no read, no write) is not cached.
 * Returns 0, or -EINVAL for a shift outside 12..63. */
int ilab_atc_fill(struct ilab_atc *atc, uint32_t ssid, bool ssv, uint64_t iova,
		  const struct ilab_atc_xlate *x);
/* An ATS Invalidation Request: remove every entry overlapping [addr, addr + 2^size_log2)
 * (size_log2 >= 64: everything) of PASID ssid when ssv — and, with global, of every PASID —
 * or, without ssv, the entries filled without PASID. Returns the number removed. */
uint64_t ilab_atc_invalidate(struct ilab_atc *atc, uint32_t ssid, bool ssv, uint64_t addr,
			     unsigned size_log2, bool global);
/* Remove everything (ATS disabled, function reset). */
void ilab_atc_flush(struct ilab_atc *atc);
void ilab_atc_get_stats(const struct ilab_atc *atc, struct ilab_atc_stats *st);
/* Valid entries right now. */
uint32_t ilab_atc_occupancy(const struct ilab_atc *atc);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_ATC_H */
