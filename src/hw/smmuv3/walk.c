/* walk.c — the stage-1 VMSAv8-64 translation table walker (4K/16K/64K granules, 25..48-bit input).
 * Not the TLB (tlb.c) and not CD decoding (strtab.c): it walks one TTBx it is handed. */
#include "smmuv3_internal.h"

/* Span (log2 bytes) of one descriptor at `level` for a granule of 2^p bytes: each level
 * resolves p-3 bits above the page offset (Arm ARM D8.2, "Translation table walks"). */
static inline unsigned lvl_shift(unsigned p, unsigned level) { return p + (p - 3) * (3 - level); }

/* Block descriptors are permitted at level 1 (4K), level 2 (all granules) and, with 52-bit
 * output (FEAT_LPA), level 1 for 64K. Elsewhere bits[1:0] == 0b01 is a Translation fault. */
static bool block_allowed(const struct smmu *s, unsigned p, unsigned level)
{
    if (level == 2)
        return true;
    if (level == 1)
        return p == 12 || (p == 16 && s->cfg.oas == 52);
    return false;
}

uint8_t smmu_xent_perm(const struct smmu_xent *e, bool priv)
{
    uint8_t p = priv ? e->perm : (uint8_t)(e->perm >> 3);
    return (uint8_t)(((p & XP_PR) ? SMMU_PERM_R : 0) | ((p & XP_PW) ? SMMU_PERM_W : 0) |
                     ((p & XP_PX) ? SMMU_PERM_X : 0));
}

/* Stage-1 permissions of a leaf (Arm ARM D8.4): AP[2] read-only, AP[1] EL0 access, UXN/PXN,
 * combined with hierarchical APTable/XNTable limits and CD.WXN. */
static uint8_t leaf_perm(const struct smmu_ctx *ctx, uint64_t d, uint8_t ta, uint8_t *flags)
{
    bool ro = (d & BIT64(7)) || (ta & TA_RO);
    bool el0 = (d & BIT64(6)) && !(ta & TA_NO_EL0);
    bool uxn = (d & BIT64(54)) || (ta & TA_UXN);
    bool pxn = (d & BIT64(53)) || (ta & TA_PXN);
    uint8_t p;
    if (ctx->regime == REGIME_EL2 && !ctx->asid_used) {
        /* EL2 (non-E2H) is a single-privilege regime: AP[1] is RES1 and bit 54 is XN.
         * Every access is treated as privileged; mirror into the unprivileged half. */
        p = XP_PR | (ro ? 0 : XP_PW) | (uxn ? 0 : XP_PX);
        if (ctx->wxn && !ro)
            p &= (uint8_t)~XP_PX;
        *flags = 0;
        return (uint8_t)(p | (p << 3));
    }
    p = XP_PR | (ro ? 0 : XP_PW);
    if (el0)
        p |= XP_UR | (ro ? 0 : XP_UW);
    if (!uxn)
        p |= XP_UX;
    /* Memory writable at EL0 is never privileged-executable in VMSAv8-64. */
    if (!pxn && !(el0 && !ro))
        p |= XP_PX;
    if (ctx->wxn && !ro)
        p &= (uint8_t)~(XP_PX | XP_UX);
    *flags = el0 ? XE_EL0_ACC : 0;
    return p;
}

static inline bool fault(struct walk_fault *f, uint8_t type, uint64_t fetch)
{
    f->type = type;
    f->fetch_addr = fetch;
    return false;
}

bool smmu_walk(struct smmu *s, const struct smmu_ctx *ctx, const struct smmu_tt *tt, uint64_t va,
               struct smmu_xent *out, struct walk_fault *f)
{
    const unsigned p = tt->pshift, ias = 64u - tt->tsz;
    unsigned level = tt->start_level;
    uint64_t table = tt->ttb;
    uint8_t ta = 0;
    const uint64_t ips_over = ctx->eff_ips >= 64 ? 0 : ~0ULL << ctx->eff_ips;

    /* Per-level walk caches, deepest first: a hit at level L hands over the level L+1 table. */
    for (int l = 2; l >= (int)tt->start_level; l--) {
        struct smmu_tcache *wc = &s->walk[l];
        if (!wc->c.lines)
            continue;
        wc->c.st.lookups++;
        struct smmu_xent *e = smmu_tcache_probe(wc, va, lvl_shift(p, (unsigned)l), ctx, false);
        if (e) {
            table = e->pa;
            ta = e->perm;
            level = (unsigned)l + 1;
            break;
        }
        wc->c.st.misses++;
    }

    for (; level <= 3; level++) { /* at most 4 iterations: levels 0..3 */
        const unsigned sh = lvl_shift(p, level);
        const unsigned bits = (level == tt->start_level) ? ias - sh : p - 3;
        const uint64_t idx = (va >> sh) & (BIT64(bits) - 1);
        const uint64_t da = table + idx * 8;
        uint8_t b[8];
        if (smmu_mem_read(s, da, b, sizeof(b)))
            return fault(f, SMMU_EVT_F_WALK_EABT, da);
        uint64_t d = le64(b);
        if (ctx->endi)
            d = __builtin_bswap64(d);
        if (!(d & 1))
            return fault(f, SMMU_EVT_F_TRANSLATION, da);
        uint64_t oa = d & GENMASK64(47, p);
        if (p == 16)
            oa |= fld(d, 15, 12) << 48; /* 64K granule: OA[51:48] in bits [15:12] */

        if (level < 3 && (d & 2)) { /* table descriptor */
            if (oa & ips_over)
                return fault(f, SMMU_EVT_F_ADDR_SIZE, da);
            if (!tt->had) {
                if (d & BIT64(61))
                    ta |= TA_NO_EL0;
                if (d & BIT64(62))
                    ta |= TA_RO;
                if (d & BIT64(60))
                    ta |= TA_UXN;
                if (d & BIT64(59))
                    ta |= TA_PXN;
            }
            if (level < 3 && s->walk[level].c.lines) {
                struct smmu_xent w = {
                    .va = va & ~(BIT64(sh) - 1), .pa = oa, .asid = ctx->asid, .vmid = ctx->vmid,
                    .shift = (uint8_t)sh, .regime = ctx->regime, .perm = ta,
                    .pshift = (uint8_t)p, .level = (uint8_t)level,
                };
                smmu_tcache_insert(&s->walk[level], &w);
            }
            table = oa;
            continue;
        }
        if (level == 3 ? !(d & 2) : !block_allowed(s, p, level))
            return fault(f, SMMU_EVT_F_TRANSLATION, da);

        oa &= ~(BIT64(sh) - 1); /* block: bits below the block size are RES0, ignore them */
        if (oa & ips_over)
            return fault(f, SMMU_EVT_F_ADDR_SIZE, da);
        if (!(d & BIT64(10)) && !ctx->affd) /* AF == 0 and no HTTU: Access flag fault */
            return fault(f, SMMU_EVT_F_ACCESS, da);

        uint8_t flags = 0;
        out->perm = leaf_perm(ctx, d, ta, &flags);
        bool global = !(d & BIT64(11)) || !ctx->asid_used;
        out->flags = (uint8_t)(flags | (global ? XE_GLOBAL : 0));
        out->va = va & ~(BIT64(sh) - 1);
        out->pa = oa;
        out->asid = ctx->asid;
        out->vmid = ctx->vmid;
        out->regime = ctx->regime;
        out->shift = (uint8_t)sh;
        out->attr = (uint8_t)(ctx->mair >> (8 * fld(d, 4, 2)));
        out->sh = (uint8_t)fld(d, 9, 8);
        out->pshift = (uint8_t)p;
        out->level = (uint8_t)level;
        return true;
    }
    return fault(f, SMMU_EVT_F_TRANSLATION, table); /* unreachable: level 3 always returns */
}
