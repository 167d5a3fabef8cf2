/* vtd.c — the VT-d model's top level: default configuration, validation, the ID registers,
 * create/reset/destroy and statistics. Not any architected behaviour (regs.c, translate.c,
 * invq.c, events.c, tlb.c). */
#include <errno.h>
#include <stdlib.h>

#include "vtd_internal.h"

void vtd_config_default(struct vtd_config *c)
{
    memset(c, 0, sizeof(*c));
    c->ver_major = 1;
    c->ver_minor = 0;
    c->nd = 6;
    c->sagaw48 = true;
    c->mgaw = 48;
    c->haw = 46;
    c->sllps_2m = c->sllps_1g = true;
    c->psi = true;
    c->mamv = 18;
    c->nfr = 8;
    c->fro_offset = 0x100;
    c->zlr = true;
    c->drain = true;
    c->qi = c->dt = c->pt = c->sc = c->coherent = true;
    c->iro_offset = 0x200;
    c->context_cache = (struct vtd_cache_geom){256, 4, VTD_POLICY_LRU};
    /* Intel publishes no sizes. docs/journal.md (issue 20 research): the IOTLB holds ~117-126
     * 4 KiB translations on Xeon E5 v1-v4 (derived from pcie-bench latency sweeps, A9), the
     * PDE cache is "likely" 64-128 entries (F&S, SOSP'24, A8). */
    c->iotlb = (struct vtd_cache_geom){128, 8, VTD_POLICY_LRU};
    c->psc[0] = (struct vtd_cache_geom){4, 0, VTD_POLICY_LRU};   /* PML5E */
    c->psc[1] = (struct vtd_cache_geom){8, 0, VTD_POLICY_LRU};   /* PML4E */
    c->psc[2] = (struct vtd_cache_geom){32, 4, VTD_POLICY_LRU};  /* PDPE */
    c->psc[3] = (struct vtd_cache_geom){128, 4, VTD_POLICY_LRU}; /* PDE */
    c->seed = 1;
    c->thread_safe = true;
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

/* Values no VT-d unit may report (VT-d §10.4.1-3) are refused, not modelled. */
static const char *validate(const struct vtd_config *c, const struct vtd_host_ops *ops)
{
    if (!ops || !ops->mem_read || !ops->mem_write)
        return "host ops mem_read and mem_write are required";
    if (c->ver_major < 1 || c->ver_major > 5 || c->ver_minor > 15)
        return "ver_major must be 1..5: register-based invalidation, which this model has, "
               "is not supported from major version 6 (VT-d §6.5)";
    if (c->dt && !c->qi)
        return "dt needs qi: a unit reporting ECAP.DT must also report ECAP.QI (device-TLB "
               "invalidation is queued only, VT-d §10.4.3)";
    if (c->nd > 6)
        return "nd must be 0..6 (CAP.ND, VT-d §10.4.2)";
    if (!c->sagaw39 && !c->sagaw48 && !c->sagaw57)
        return "at least one of sagaw39/48/57 (CAP.SAGAW)";
    unsigned widest = c->sagaw57 ? 57 : c->sagaw48 ? 48 : 39;
    if (c->mgaw < 39 || c->mgaw > widest)
        return "mgaw must be 39 .. the widest SAGAW width (CAP.MGAW)";
    if (c->haw < 32 || c->haw > 52)
        return "haw must be 32..52";
    if (c->psi && c->mamv > 51)
        return "mamv must be 0..51: an address mask covers 2^(12 + AM) bytes of the 64-bit "
               "input space (CAP.MAMV)";
    if (c->nfr < 1 || c->nfr > 256)
        return "nfr must be 1..256 (CAP.NFR is NFR - 1 in 8 bits)";
    if ((c->fro_offset & 15) || c->fro_offset < 0x100 || c->fro_offset / 16 > 0x3FF)
        return "fro_offset must be a multiple of 16, 0x100..0x3FF0 (CAP.FRO), past the fixed "
               "registers";
    if ((c->iro_offset & 15) || c->iro_offset < 0x100 || c->iro_offset / 16 > 0x3FF)
        return "iro_offset must be a multiple of 16, 0x100..0x3FF0 (ECAP.IRO)";
    if (overlaps(c->fro_offset, 16ULL * c->nfr, c->iro_offset, 16))
        return "the fault recording registers overlap the IOTLB registers";
    return NULL;
}

static void compute_ids(struct vtd *v)
{
    const struct vtd_config *c = &v->cfg;
    v->ver = (uint32_t)(c->ver_major << 4 | c->ver_minor);
    v->cap = (uint64_t)c->nd | (c->sagaw39 ? VBIT(9) : 0) | (c->sagaw48 ? VBIT(10) : 0) |
             (c->sagaw57 ? VBIT(11) : 0) | ((uint64_t)(c->mgaw - 1) << 16) |
             (c->zlr ? VBIT(22) : 0) | ((uint64_t)(c->fro_offset / 16) << 24) |
             (c->sllps_2m ? VBIT(34) : 0) | (c->sllps_1g ? VBIT(35) : 0) |
             (c->psi ? VBIT(39) : 0) | ((uint64_t)(c->nfr - 1) << 40) |
             (c->psi ? (uint64_t)c->mamv << 48 : 0) | (c->drain ? VBIT(54) | VBIT(55) : 0);
    v->ecap = (c->coherent ? VBIT(0) : 0) | (c->qi ? VBIT(1) : 0) | (c->dt ? VBIT(2) : 0) |
              (c->pt ? VBIT(6) : 0) | (c->sc ? VBIT(7) : 0) |
              ((uint64_t)(c->iro_offset / 16) << 8);
    uint64_t end = c->fro_offset + 16ULL * c->nfr;
    if (c->iro_offset + 16ULL > end)
        end = c->iro_offset + 16ULL;
    v->mmio_size = (end + 0xFFF) & ~0xFFFULL;
}

int vtd_create(struct vtd **out, const struct vtd_config *cfg, const struct vtd_host_ops *ops,
               void *ctx, const char **err_msg)
{
    const char *msg = validate(cfg, ops);
    *out = NULL;
    if (msg) {
        if (err_msg)
            *err_msg = msg;
        return -EINVAL;
    }
    struct vtd *v = calloc(1, sizeof(*v));
    if (!v)
        return -ENOMEM;
    v->cfg = *cfg;
    v->ops = *ops;
    v->ctx = ctx;
    v->frcd = calloc(cfg->nfr, sizeof(*v->frcd));
    int rc = v->frcd ? vtd_caches_init(v) : -ENOMEM;
    if (rc) {
        if (err_msg)
            *err_msg = rc == -EINVAL ? "a cache geometry is invalid (policy or > 2^24 entries)"
                                     : "out of memory";
        vtd_destroy(v);
        return rc;
    }
    compute_ids(v);
    vtd_regs_reset(v);
    *out = v;
    return 0;
}

void vtd_destroy(struct vtd *v)
{
    if (!v)
        return;
    vtd_caches_fini(v);
    free(v->frcd);
    free(v);
}

void vtd_reset(struct vtd *v)
{
    vtd_regs_reset(v);
    vtd_caches_flush(v);
}

const struct vtd_config *vtd_get_config(const struct vtd *v) { return &v->cfg; }

uint64_t vtd_mmio_size(const struct vtd *v) { return v->mmio_size; }

void vtd_get_stats(struct vtd *v, struct vtd_stats *out)
{
    vtd_lock(v);
    *out = v->st;
    vtd_unlock(v);
}

static struct vtd_cache *cache_of(struct vtd *v, enum vtd_cache_id id)
{
    switch (id) {
    case VTD_CACHE_CONTEXT: return &v->ctxc;
    case VTD_CACHE_IOTLB: return &v->iotlb.c;
    case VTD_CACHE_PML5E: case VTD_CACHE_PML4E: case VTD_CACHE_PDPE: case VTD_CACHE_PDE:
        return &v->psc[id - VTD_CACHE_PML5E].c;
    default: return NULL;
    }
}

int vtd_get_cache_stats(struct vtd *v, enum vtd_cache_id id, struct vtd_cache_stats *out)
{
    struct vtd_cache *c = cache_of(v, id);
    if (!c)
        return -EINVAL;
    vtd_lock(v);
    *out = c->st;
    vtd_unlock(v);
    return 0;
}

void vtd_clear_stats(struct vtd *v)
{
    vtd_lock(v);
    memset(&v->st, 0, sizeof(v->st));
    for (unsigned id = 0; id < VTD_CACHE_COUNT; id++) {
        struct vtd_cache *c = cache_of(v, (enum vtd_cache_id)id);
        struct vtd_cache_stats keep = c->st;
        memset(&c->st, 0, sizeof(c->st));
        c->st.capacity = keep.capacity;
        c->st.sets = keep.sets;
        c->st.ways = keep.ways;
    }
    vtd_unlock(v);
}
