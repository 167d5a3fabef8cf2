/* cache.c — the generic set-associative cache core: geometry, validity, replacement, statistics.
 * Not a cache of anything in particular: STE/CD/TLB/walk caches keep their payload beside it. */
#include <errno.h>
#include <stdlib.h>

#include "smmuv3_internal.h"

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
    uint32_t ways = (g->ways == 0 || g->ways > g->entries) ? g->entries : g->ways;
    uint32_t sets = g->entries / ways;
    /* Round the set count down to a power of two so the index is a shift of a hash. */
    uint32_t bits = 0;
    while ((2u << bits) <= sets && bits < 30)
        bits++;
    sets = 1u << bits;
    c->set_bits = bits;
    c->sets = sets;
    c->ways = ways;
    c->lines = sets * ways;
    c->valid = calloc(c->lines, 1);
    c->age = calloc(c->lines, sizeof(*c->age));
    if (!c->valid || !c->age) {
        smmu_cache_fini(c);
        return -ENOMEM;
    }
    c->st.capacity = c->lines;
    c->st.sets = sets;
    c->st.ways = ways;
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

static uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Pick the line to fill in `set`: an invalid way first, else the policy's victim.
 * Marks the line valid and stamps it; the caller writes the payload. */
uint32_t smmu_cache_alloc(struct smmu_cache *c, uint32_t set)
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
        if (c->policy == SMMU_POLICY_RANDOM) {
            victim = base + (uint32_t)(xorshift64(&c->rng) % c->ways);
        } else { /* LRU and FIFO both evict the smallest stamp; only LRU refreshes on hit */
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
