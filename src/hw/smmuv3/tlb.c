/* tlb.c — translation caches: the TLB (leaf entries) and the per-level walk caches (table entries),
 * their fill and their invalidation by TLBI scope. Not the walker (walk.c) nor the cache core. */
#include <stdlib.h>

#include "smmuv3_internal.h"

int smmu_tcache_init(struct smmu_tcache *t, const struct smmu_cache_geom *g, uint64_t seed)
{
    memset(t, 0, sizeof(*t));
    int rc = smmu_cache_init(&t->c, g, seed);
    if (rc)
        return rc;
    if (t->c.lines) {
        t->e = calloc(t->c.lines, sizeof(*t->e));
        if (!t->e) {
            smmu_cache_fini(&t->c);
            return -12; /* ENOMEM */
        }
    }
    return 0;
}

void smmu_tcache_fini(struct smmu_tcache *t)
{
    smmu_cache_fini(&t->c);
    free(t->e);
    t->e = NULL;
}

void smmu_tcache_flush(struct smmu_tcache *t)
{
    smmu_cache_flush(&t->c);
    t->shifts = 0;
}

struct smmu_xent *smmu_tcache_insert(struct smmu_tcache *t, const struct smmu_xent *n)
{
    struct smmu_cache *c = &t->c;
    if (!c->lines)
        return NULL;
    uint32_t set = smmu_cache_set(c, xent_key(n->va, n->shift, n->vmid, n->regime));
    uint32_t line = set * c->ways;
    /* Replace an entry with the same tag rather than holding duplicates (duplicates would be
     * a TLB conflict, IHI 0070 §3.21.3 — an implementation choice to avoid them). */
    for (uint32_t w = 0; w < c->ways; w++) {
        struct smmu_xent *e = &t->e[line + w];
        if (c->valid[line + w] && e->shift == n->shift && e->va == n->va &&
            e->vmid == n->vmid && e->regime == n->regime && e->asid == n->asid) {
            *e = *n;
            return e;
        }
    }
    line = smmu_cache_alloc(c, set);
    t->e[line] = *n;
    t->shifts |= BIT64(n->shift);
    return &t->e[line];
}

static bool inv_matches(const struct smmu_inv *m, const struct smmu_xent *e)
{
    if (!m->any_regime && e->regime != m->regime)
        return false;
    if (!m->any_vmid && e->vmid != m->vmid)
        return false;
    switch (m->amode) {
    case INV_ASID_ANY:
        break;
    case INV_ASID_NONGLOBAL:
        if (e->asid != m->asid || (e->flags & XE_GLOBAL))
            return false;
        break;
    case INV_ASID_OR_GLOBAL:
        if (e->asid != m->asid && !(e->flags & XE_GLOBAL))
            return false;
        break;
    }
    if (m->ranged) {
        uint64_t last = e->va + ((BIT64(e->shift) - 1));
        if (last < m->lo || e->va > m->hi)
            return false;
    }
    return true;
}

/* Invalidate every entry selected by `m`. Ranged invalidations probe only the sets that can
 * hold an affected entry (one probe per span size present and per aligned block) unless that
 * costs more than scanning the whole cache. How the model finds the entries is not how long
 * hardware takes (a host charges that, by the command's scope): only the count of entries
 * dropped, from the cache's statistics, is returned. */
static void tcache_drop(struct smmu_tcache *t, const struct smmu_inv *m);

uint32_t smmu_tcache_invalidate(struct smmu_tcache *t, const struct smmu_inv *m, bool is_walk)
{
    uint64_t before = t->c.st.invalidations;
    (void)is_walk;
    tcache_drop(t, m);
    return (uint32_t)(t->c.st.invalidations - before);
}

static void tcache_drop(struct smmu_tcache *t, const struct smmu_inv *m)
{
    struct smmu_cache *c = &t->c;
    if (!c->lines || !t->shifts)
        return;
    if (m->ranged && !m->any_vmid && !m->any_regime) {
        uint64_t budget = c->lines, cost = 0;
        for (unsigned sh = 0; sh < 64; sh++) {
            if (!(t->shifts & BIT64(sh)))
                continue;
            uint64_t n = (m->hi >> sh) - (m->lo >> sh) + 1;
            cost += n * c->ways;
            if (n == 0 || cost > budget)
                goto full_scan;
        }
        for (unsigned sh = 0; sh < 64; sh++) {
            if (!(t->shifts & BIT64(sh)))
                continue;
            uint64_t b0 = m->lo >> sh, b1 = m->hi >> sh;
            for (uint64_t b = b0;; b++) {
                uint32_t line =
                    smmu_cache_set(c, xent_key(b << sh, sh, m->vmid, m->regime)) * c->ways;
                for (uint32_t w = 0; w < c->ways; w++)
                    if (c->valid[line + w] && t->e[line + w].shift == sh &&
                        inv_matches(m, &t->e[line + w]))
                        smmu_cache_inval_line(c, line + w);
                if (b == b1)
                    break;
            }
        }
        return;
    }
full_scan:
    for (uint32_t i = 0; i < c->lines; i++)
        if (c->valid[i] && inv_matches(m, &t->e[i]))
            smmu_cache_inval_line(c, i);
}

/* Returns the number of TLB and walk-cache entries dropped. */
uint32_t smmu_tlbi(struct smmu *s, const struct smmu_inv *m)
{
    uint32_t n = smmu_tcache_invalidate(&s->tlb, m, false);
    if (m->leaf_only)
        return n; /* Leaf == 1: only last-level entries are in scope (IHI 0070 §4.4.2) */
    for (int l = 0; l < 3; l++)
        n += smmu_tcache_invalidate(&s->walk[l], m, true);
    return n;
}
