/* bitmap.c — word-at-a-time search and fill over host-memory bitmaps, for the CMA areas.
 * It is not a general bitmap library: just the three operations the allocators need.
 */
#include "mem/mem_internal.h"

/* First index in [start, end) whose bit equals want, or end. */
uint64_t mem_bm_find(const uint64_t *bm, uint64_t start, uint64_t end, int want)
{
	uint64_t flip = want ? 0 : ~0ull; /* search for set bits in (word ^ flip) */
	uint64_t i = start;

	while (i < end) {
		uint64_t w = (bm[i >> 6] ^ flip) >> (i & 63);
		if (w) {
			uint64_t hit = i + (uint64_t)__builtin_ctzll(w);
			return hit < end ? hit : end;
		}
		i = (i | 63) + 1; /* next word */
	}
	return end;
}

/* Set (val != 0) or clear every bit of [start, end). */
void mem_bm_assign(uint64_t *bm, uint64_t start, uint64_t end, int val)
{
	while (start < end) {
		uint64_t word_end = (start | 63) + 1;
		uint64_t stop = end < word_end ? end : word_end;
		unsigned lo = (unsigned)(start & 63), n = (unsigned)(stop - start);
		uint64_t mask = (n == 64 ? ~0ull : ((1ull << n) - 1)) << lo;

		if (val)
			bm[start >> 6] |= mask;
		else
			bm[start >> 6] &= ~mask;
		start = stop;
	}
}
