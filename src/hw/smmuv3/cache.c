/* cache.c — the generic set-associative cache core: geometry, validity, replacement, statistics.
 * Not a cache of anything in particular: STE/CD/TLB/walk caches keep their payload beside it. */
#include <errno.h>
#include <stdlib.h>

#include "hw/sa_cache.h"

#include "smmuv3_internal.h"

_Static_assert(SMMU_POLICY_LRU == SA_POLICY_LRU && SMMU_POLICY_FIFO == SA_POLICY_FIFO &&
               SMMU_POLICY_RANDOM == SA_POLICY_RANDOM, "sa_cache.h numbers the policies alike");

/* IHI 0070 makes caching invisible to software except through invalidation (§3.21), so the
 * geometry is a free implementation choice: model it as (entries, ways, policy) like gem5. */
int smmu_cache_init(struct smmu_cache *c, const struct smmu_cache_geom *g, uint64_t seed)
{
    memset(c, 0, sizeof(*c));
    if (g->policy > SMMU_POLICY_RANDOM)
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
        smmu_cache_fini(c);
        return -ENOMEM;
    }
    c->st.capacity = c->lines;
    c->st.sets = c->sets;
    c->st.ways = c->ways;
    return 0;
}

void smmu_cache_fini(struct smmu_cache *c)
{
    free(c->valid);
    free(c->age);
    c->valid = NULL;
    c->age = NULL;
    c->lines = c->sets = c->ways = 0;
}

void smmu_cache_flush(struct smmu_cache *c)
{
    for (uint32_t i = 0; i < c->lines; i++)
        smmu_cache_inval_line(c, i);
}

/* Pick the line to fill in `set`: an invalid way first, else the policy's victim.
 * Marks the line valid and stamps it; the caller writes the payload. */
uint32_t smmu_cache_alloc(struct smmu_cache *c, uint32_t set)
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
