/* cache.c — the VT-d model's set-associative cache core: geometry, validity, replacement, counters.
 * Not a cache of anything in particular: the context cache, IOTLB and PSCs keep payloads beside it. */
#include <errno.h>
#include <stdlib.h>

#include "hw/sa_cache.h"

#include "vtd_internal.h"

_Static_assert(VTD_POLICY_LRU == SA_POLICY_LRU && VTD_POLICY_FIFO == SA_POLICY_FIFO &&
               VTD_POLICY_RANDOM == SA_POLICY_RANDOM, "sa_cache.h numbers the policies alike");

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
    sa_cache_geometry(g->entries, g->ways, &c->sets, &c->ways, &c->set_bits);
    c->lines = c->sets * c->ways;
    c->valid = calloc(c->lines, 1);
    c->age = calloc(c->lines, sizeof(*c->age));
    if (!c->valid || !c->age) {
        vtd_cache_fini(c);
        return -ENOMEM;
    }
    c->st.capacity = c->lines;
    c->st.sets = c->sets;
    c->st.ways = c->ways;
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

/* The line to fill in `set`: an invalid way first, else the policy's victim (counted as an
 * eviction). The line is marked valid and stamped; the caller writes the payload. */
uint32_t vtd_cache_alloc(struct vtd_cache *c, uint32_t set)
{
    bool evicted;
    uint32_t victim = sa_cache_victim(c->valid, c->age, set * c->ways, c->ways, c->policy,
                                      &c->rng, &evicted);

    if (evicted)
        c->st.evictions++;
    c->valid[victim] = 1;
    c->age[victim] = ++c->clock;
    c->st.fills++;
    return victim;
}
