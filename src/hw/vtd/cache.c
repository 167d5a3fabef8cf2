/* cache.c — the VT-d model's set-associative cache core: geometry, validity, replacement, counters.
 * Not a cache of anything in particular: the context cache, IOTLB and PSCs keep payloads beside it. */
#include <errno.h>
#include <stdlib.h>

#include "vtd_internal.h"

/* VT-d §6.2 leaves the caches' organisation to the implementation (only invalidation is
 * architected), so each is a free (entries, ways, policy) parameter. */
int vtd_cache_init(struct vtd_cache *c, const struct vtd_cache_geom *g, uint64_t seed)
{
    memset(c, 0, sizeof(*c));
    if (g->policy > VTD_POLICY_RANDOM || g->entries > (1u << 24))
        return -EINVAL;
    c->policy = (uint8_t)g->policy;
    c->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
    if (g->entries == 0)
        return 0;
    uint32_t ways = (g->ways == 0 || g->ways > g->entries) ? g->entries : g->ways;
    uint32_t sets = g->entries / ways, bits = 0;
    while ((2u << bits) <= sets && bits < 30)
        bits++;
    c->set_bits = bits;
    c->sets = 1u << bits;
    c->ways = ways;
    c->lines = c->sets * ways;
    c->valid = calloc(c->lines, 1);
    c->age = calloc(c->lines, sizeof(*c->age));
    if (!c->valid || !c->age) {
        vtd_cache_fini(c);
        return -ENOMEM;
    }
    c->st.capacity = c->lines;
    c->st.sets = c->sets;
    c->st.ways = ways;
    return 0;
}

void vtd_cache_fini(struct vtd_cache *c)
{
    free(c->valid);
    free(c->age);
    c->valid = NULL;
    c->age = NULL;
    c->lines = c->sets = c->ways = 0;
}

static uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* The line to fill in `set`: an invalid way first, else the policy's victim (counted as an
 * eviction). The line is marked valid and stamped; the caller writes the payload. */
uint32_t vtd_cache_alloc(struct vtd_cache *c, uint32_t set)
{
    uint32_t base = set * c->ways, victim = base;
    bool found = false;
    for (uint32_t w = 0; w < c->ways; w++) {
        if (!c->valid[base + w]) {
            victim = base + w;
            found = true;
            break;
        }
    }
    if (!found) {
        if (c->policy == VTD_POLICY_RANDOM) {
            victim = base + (uint32_t)(xorshift64(&c->rng) % c->ways);
        } else { /* LRU and FIFO evict the oldest stamp; only LRU refreshes it on a hit */
            uint64_t best = UINT64_MAX;
            for (uint32_t w = 0; w < c->ways; w++) {
                if (c->age[base + w] < best) {
                    best = c->age[base + w];
                    victim = base + w;
                }
            }
        }
        c->st.evictions++;
    }
    c->valid[victim] = 1;
    c->age[victim] = ++c->clock;
    c->st.fills++;
    return victim;
}
