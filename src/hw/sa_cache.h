/* sa_cache.h — the set-associative bookkeeping both IOMMU models' caches share: how (entries,
 * ways) becomes a power-of-two number of sets, and which way a fill takes. Each model keeps
 * its own cache struct, statistics and payloads (src/hw/smmuv3/cache.c, src/hw/vtd/cache.c);
 * this is only the arithmetic, so the two cannot drift apart.
 */
#ifndef ILAB_HW_SA_CACHE_H
#define ILAB_HW_SA_CACHE_H

#include <stdbool.h>
#include <stdint.h>

/* Replacement policies, numbered as SMMU_POLICY_* and VTD_POLICY_* are. */
#define SA_POLICY_LRU 0
#define SA_POLICY_FIFO 1
#define SA_POLICY_RANDOM 2

/* Geometry of a cache of `entries` (> 0) in `ways` (0 or more than entries: fully
 * associative): the set count is rounded down to a power of two, so that the set index is a
 * shift of a hash. */
static inline void sa_cache_geometry(uint32_t entries, uint32_t ways, uint32_t *out_sets,
				     uint32_t *out_ways, uint32_t *out_set_bits)
{
	uint32_t w = (ways == 0 || ways > entries) ? entries : ways;
	uint32_t sets = entries / w, bits = 0;

	while ((2u << bits) <= sets && bits < 30)
		bits++;
	*out_sets = 1u << bits;
	*out_ways = w;
	*out_set_bits = bits;
}

static inline uint64_t sa_cache_xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* The line a fill of the set starting at line `base` takes: an invalid way first, else the
 * policy's victim (*evicted set). LRU and FIFO both evict the smallest stamp in age[]; only
 * LRU refreshes it on a hit (the caller's business). */
static inline uint32_t sa_cache_victim(const uint8_t *valid, const uint64_t *age, uint32_t base,
				       uint32_t ways, unsigned policy, uint64_t *rng,
				       bool *evicted)
{
	uint32_t victim = base;
	uint64_t best = UINT64_MAX;

	*evicted = false;
	for (uint32_t w = 0; w < ways; w++)
		if (!valid[base + w])
			return base + w;
	*evicted = true;
	if (policy == SA_POLICY_RANDOM)
		return base + (uint32_t)(sa_cache_xorshift64(rng) % ways);
	for (uint32_t w = 0; w < ways; w++) {
		if (age[base + w] < best) {
			best = age[base + w];
			victim = base + w;
		}
	}
	return victim;
}

#endif /* ILAB_HW_SA_CACHE_H */
