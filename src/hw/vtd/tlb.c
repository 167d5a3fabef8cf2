/* tlb.c — the VT-d model's translation caches (VT-d §6.2): context-cache, IOTLB and the four
 * paging-structure caches, their fill, lookup and invalidation scopes. Not the walk (translate.c). */
#include <errno.h>
#include <stdlib.h>

#include "vtd_internal.h"

static int tcache_init(struct vtd_tcache *t, const struct vtd_cache_geom *g, uint64_t seed)
{
    int rc = vtd_cache_init(&t->c, g, seed);
    if (rc)
        return rc;
    t->e = t->c.lines ? calloc(t->c.lines, sizeof(*t->e)) : NULL;
    if (t->c.lines && !t->e)
        return -ENOMEM;
    return 0;
}

static void tcache_fini(struct vtd_tcache *t)
{
    vtd_cache_fini(&t->c);
    free(t->e);
    t->e = NULL;
}

int vtd_caches_init(struct vtd *v)
{
    int rc = vtd_cache_init(&v->ctxc, &v->cfg.context_cache, v->cfg.seed);
    if (rc)
        return rc;
    v->ctxe = v->ctxc.lines ? calloc(v->ctxc.lines, sizeof(*v->ctxe)) : NULL;
    if (v->ctxc.lines && !v->ctxe)
        return -ENOMEM;
    rc = tcache_init(&v->iotlb, &v->cfg.iotlb, v->cfg.seed + 1);
    for (unsigned i = 0; i < 4 && !rc; i++)
        rc = tcache_init(&v->psc[i], &v->cfg.psc[i], v->cfg.seed + 2 + i);
    return rc;
}

void vtd_caches_fini(struct vtd *v)
{
    vtd_cache_fini(&v->ctxc);
    free(v->ctxe);
    v->ctxe = NULL;
    tcache_fini(&v->iotlb);
    for (unsigned i = 0; i < 4; i++)
        tcache_fini(&v->psc[i]);
}

static void flush_all(struct vtd_cache *c)
{
    for (uint32_t i = 0; i < c->lines; i++)
        vtd_cache_inval_line(c, i);
}

void vtd_caches_flush(struct vtd *v)
{
    flush_all(&v->ctxc);
    flush_all(&v->iotlb.c);
    for (unsigned i = 0; i < 4; i++)
        flush_all(&v->psc[i].c);
    v->iotlb_shifts = 0;
}

/* ---- context-cache (VT-d §6.2.2): tagged by source-id; only present, valid entries ----- */
bool vtd_ctxc_lookup(struct vtd *v, uint16_t sid, struct vtd_ctx *out)
{
    struct vtd_cache *c = &v->ctxc;
    if (!c->lines)
        return false;
    c->st.lookups++;
    uint32_t base = vtd_cache_set(c, sid) * c->ways;
    for (uint32_t w = 0; w < c->ways; w++) {
        uint32_t l = base + w;
        if (c->valid[l] && v->ctxe[l].sid == sid) {
            vtd_cache_hit(c, l);
            *out = v->ctxe[l];
            return true;
        }
    }
    c->st.misses++;
    return false;
}

void vtd_ctxc_fill(struct vtd *v, const struct vtd_ctx *e)
{
    struct vtd_cache *c = &v->ctxc;
    if (!c->lines)
        return;
    v->ctxe[vtd_cache_alloc(c, vtd_cache_set(c, e->sid))] = *e;
}

/* gran: 1 global, 2 domain-selective (did), 3 device-selective (sid with function mask fm:
 * 0 none, 1 bit 2, 2 bits 2:1, 3 bits 2:0 of the function number, VT-d §10.4.7). Device-
 * selective drops the source-ids whatever their domain: over-invalidation is permitted. */
void vtd_ctxc_inval(struct vtd *v, unsigned gran, uint16_t did, uint16_t sid, unsigned fm)
{
    struct vtd_cache *c = &v->ctxc;
    static const uint16_t fmask[4] = {0x0, 0x4, 0x6, 0x7};
    uint16_t keep = (uint16_t)~fmask[fm & 3];
    for (uint32_t l = 0; l < c->lines; l++) {
        if (!c->valid[l])
            continue;
        const struct vtd_ctx *e = &v->ctxe[l];
        if (gran == 1 || (gran == 2 && e->did == did) ||
            (gran == 3 && (e->sid & keep) == (sid & keep)))
            vtd_cache_inval_line(c, l);
    }
}

/* ---- IOTLB (VT-d §6.2.4): leaf translations tagged by domain-id, page number and size ---- */
static uint64_t tkey(uint16_t did, uint64_t va, unsigned shift)
{
    return ((va >> shift) << 22) ^ ((uint64_t)did << 6) ^ shift;
}

bool vtd_iotlb_lookup(struct vtd *v, uint16_t did, uint64_t iova, struct vtd_tent *out)
{
    struct vtd_cache *c = &v->iotlb.c;
    if (!c->lines)
        return false;
    c->st.lookups++;
    static const uint8_t shifts[3] = {12, 21, 30};
    for (unsigned i = 0; i < 3; i++) {
        unsigned sh = shifts[i];
        if (!(v->iotlb_shifts & VBIT(sh)))
            continue;
        uint64_t va = iova & ~VMASK(sh - 1, 0);
        uint32_t base = vtd_cache_set(c, tkey(did, va, sh)) * c->ways;
        for (uint32_t w = 0; w < c->ways; w++) {
            const struct vtd_tent *e = &v->iotlb.e[base + w];
            if (c->valid[base + w] && e->did == did && e->shift == sh && e->va == va) {
                vtd_cache_hit(c, base + w);
                *out = *e;
                return true;
            }
        }
    }
    c->st.misses++;
    return false;
}

void vtd_iotlb_fill(struct vtd *v, const struct vtd_tent *t)
{
    struct vtd_cache *c = &v->iotlb.c;
    if (!c->lines)
        return;
    v->iotlb.e[vtd_cache_alloc(c, vtd_cache_set(c, tkey(t->did, t->va, t->shift)))] = *t;
    v->iotlb_shifts |= VBIT(t->shift);
}

/* ---- paging-structure caches (VT-d §6.2.5): psc[5 - level] holds level-`level` entries ---- */
static unsigned span_of(unsigned level) { return 12 + 9 * (level - 1); }

/* Deepest hit among levels 2..top: returns its level (the walk resumes one below, at the
 * cached table), or 0. */
int vtd_psc_lookup(struct vtd *v, uint16_t did, uint64_t iova, unsigned top, struct vtd_tent *out)
{
    for (unsigned level = 2; level <= top && level <= 5; level++) {
        struct vtd_tcache *t = &v->psc[5 - level];
        struct vtd_cache *c = &t->c;
        if (!c->lines)
            continue;
        unsigned sh = span_of(level);
        uint64_t va = sh >= 64 ? 0 : iova & ~VMASK(sh - 1, 0);
        c->st.lookups++;
        uint32_t base = vtd_cache_set(c, tkey(did, va, sh)) * c->ways;
        for (uint32_t w = 0; w < c->ways; w++) {
            const struct vtd_tent *e = &t->e[base + w];
            if (c->valid[base + w] && e->did == did && e->va == va) {
                vtd_cache_hit(c, base + w);
                *out = *e;
                return (int)level;
            }
        }
        c->st.misses++;
    }
    return 0;
}

void vtd_psc_fill(struct vtd *v, unsigned level, const struct vtd_tent *e)
{
    struct vtd_tcache *t = &v->psc[5 - level];
    if (!t->c.lines)
        return;
    t->e[vtd_cache_alloc(&t->c, vtd_cache_set(&t->c, tkey(e->did, e->va, e->shift)))] = *e;
}

static bool selects(const struct vtd_inv *inv, const struct vtd_tent *e)
{
    if (!inv->all_domains && e->did != inv->did)
        return false;
    if (!inv->ranged)
        return true;
    uint64_t last = e->va + (VBIT(e->shift) - 1);
    return e->va <= inv->hi && last >= inv->lo;
}

static void scan_inval(struct vtd_tcache *t, const struct vtd_inv *inv)
{
    for (uint32_t l = 0; l < t->c.lines; l++)
        if (t->c.valid[l] && selects(inv, &t->e[l]))
            vtd_cache_inval_line(&t->c, l);
}

/* A page-selective invalidation of a few pages probes only the sets that can hold them. */
static void iotlb_inval_ranged(struct vtd *v, const struct vtd_inv *inv)
{
    struct vtd_cache *c = &v->iotlb.c;
    static const uint8_t shifts[3] = {12, 21, 30};
    uint64_t probes = 0;
    for (unsigned i = 0; i < 3; i++)
        if (v->iotlb_shifts & VBIT(shifts[i]))
            probes += ((inv->hi >> shifts[i]) - (inv->lo >> shifts[i]) + 1) * c->ways;
    if (probes >= c->lines) {
        scan_inval(&v->iotlb, inv);
        return;
    }
    for (unsigned i = 0; i < 3; i++) {
        unsigned sh = shifts[i];
        if (!(v->iotlb_shifts & VBIT(sh)))
            continue;
        for (uint64_t p = inv->lo >> sh; p <= inv->hi >> sh; p++) {
            uint32_t base = vtd_cache_set(c, tkey(inv->did, p << sh, sh)) * c->ways;
            for (uint32_t w = 0; w < c->ways; w++)
                if (c->valid[base + w] && selects(inv, &v->iotlb.e[base + w]))
                    vtd_cache_inval_line(c, base + w);
        }
    }
}

void vtd_iotlb_inval(struct vtd *v, const struct vtd_inv *inv)
{
    if (inv->ranged && !inv->all_domains)
        iotlb_inval_ranged(v, inv);
    else
        scan_inval(&v->iotlb, inv);
    if (inv->all_domains && !inv->ranged)
        v->iotlb_shifts = 0;
    if (inv->keep_psc)
        return;
    for (unsigned i = 0; i < 4; i++)
        scan_inval(&v->psc[i], inv);
}
