/* strtab.c — configuration: Stream table (linear, 2-level) and CD table (linear, 2-level) lookup,
 * STE and CD fetch, validity checks and decode, and the STE/CD configuration caches.
 * Not translation (translate.c / walk.c) and not the command decoder that invalidates it. */
#include "smmuv3_internal.h"

static void evt_hdr(uint64_t evt[4], uint8_t type, const struct smmu_txn_req *req)
{
    evt[0] = type | ((uint64_t)req->sid << 32);
    if (req->ssv)
        evt[0] |= BIT64(11) | ((uint64_t)(req->ssid & 0xFFFFF) << 12);
    evt[1] = evt[2] = evt[3] = 0;
}

/* IHI 0070 §7.3.4 / §7.3.10: FetchAddr[55:3] lives in bits [247:195], i.e. dword 3 [55:3]. */
static enum cfg_result fetch_fault(uint64_t evt[4], uint8_t type, const struct smmu_txn_req *req,
                                   uint64_t addr)
{
    evt_hdr(evt, type, req);
    evt[3] = addr & GENMASK64(55, 3);
    return CFG_FAULT;
}

static enum cfg_result bad(uint64_t evt[4], uint8_t type, const struct smmu_txn_req *req)
{
    evt_hdr(evt, type, req);
    return CFG_FAULT;
}

/* C_BAD_SUBSTREAMID (§7.3.9): SubstreamID is always valid in this record, there is no SSV. */
static enum cfg_result bad_ssid(uint64_t evt[4], const struct smmu_txn_req *req, uint32_t ssid)
{
    evt[0] = SMMU_EVT_C_BAD_SUBSTREAMID | ((uint64_t)(ssid & 0xFFFFF) << 12) |
             ((uint64_t)req->sid << 32);
    evt[1] = evt[2] = evt[3] = 0;
    return CFG_FAULT;
}

/* F_STREAM_DISABLED (§7.3.7) carries only the StreamID. */
static enum cfg_result stream_disabled(uint64_t evt[4], const struct smmu_txn_req *req)
{
    evt[0] = SMMU_EVT_F_STREAM_DISABLED | ((uint64_t)req->sid << 32);
    evt[1] = evt[2] = evt[3] = 0;
    return CFG_FAULT;
}

/* ---- STE decode (IHI 0070 §5.2) ------------------------------------------------------------ */
static bool ste_decode(const struct smmu *s, const uint8_t raw[64], struct smmu_ste *ste)
{
    uint64_t d0 = le64(raw), d1 = le64(raw + 8);
    if (!(d0 & 1))
        return false; /* V == 0 */
    ste->config = (uint8_t)fld(d0, 3, 1);
    ste->s1fmt = (uint8_t)fld(d0, 5, 4);
    ste->s1ctxptr = d0 & GENMASK64(51, 6);
    ste->s1cdmax = (uint8_t)fld(d0, 63, 59);
    ste->s1dss = (uint8_t)fld(d1, 1, 0);
    ste->strw = (uint8_t)fld(d1, 31, 30);
    ste->privcfg = (uint8_t)fld(d1, 49, 48);
    ste->instcfg = (uint8_t)fld(d1, 51, 50);
    ste->eats = (uint8_t)fld(d1, 29, 28); /* only ATS Translation Requests look at it */
    ste->vmid = 0; /* S2P == 0: stage-1-only translations carry no VMID tag */
    if (!s->cfg.attr_perms_ovr) /* RES0 without IDR1.ATTR_PERMS_OVR (§5.2) */
        ste->privcfg = ste->instcfg = 0;
    /* EATS is IGNORED without IDR0.ATS; 0b11 is Reserved without IDR3.DPT and behaves as
     * 0b00 (§5.2). */
    if (!s->cfg.ats || ste->eats == 3)
        ste->eats = 0;

    switch (ste->config) {
    case STE_CFG_BYPASS:
        return true;
    case STE_CFG_S1:
        break;
    case 6:
    case 7:
        return false; /* 0b11x needs stage 2: ILLEGAL with S2P == 0 */
    default:
        ste->config = STE_CFG_ABORT; /* 0b001..0b011 Reserved, behave as 0b000 (§5.2) */
        return true;                 /* other fields IGNORED */
    }
    /* §5.5: STALL_MODEL != 0b00 (this model: 0b01, no stall) makes S1STALLD ILLEGAL. */
    if (d1 & BIT64(27))
        return false;
    /* S1CDMax, S1Fmt and S1DSS are IGNORED without substreams (IDR1.SSIDSIZE == 0); S1Fmt and
     * S1DSS also when S1CDMax == 0 (§5.2). */
    if (s->cfg.ssidsize == 0)
        ste->s1cdmax = 0;
    if (ste->s1cdmax > s->cfg.ssidsize)
        return false;
    if (ste->s1cdmax) {
        if (ste->s1fmt == 3)
            ste->s1fmt = 0; /* Reserved, behaves as 0b00 (linear) */
        if (ste->s1fmt && !s->cfg.cd2l)
            return false;
        if (ste->s1dss == 3)
            ste->s1dss = 0; /* Reserved, behaves as 0b00 (terminate) */
    } else {
        ste->s1fmt = ste->s1dss = 0;
    }
    /* Split-stage ATS (EATS 0b10) is ILLEGAL unless Config == 0b111 (§5.2). */
    if (ste->eats == 2)
        return false;
    if (s->cfg.oas < 64 && (ste->s1ctxptr >> s->cfg.oas))
        return false;
    /* STRW is RES0 without IDR0.Hyp (§5.2): every stream is NS-EL1. With Hyp, 0b00 NS-EL1,
     * 0b10 EL2/EL2-E2H; 0b01 (EL3) and 0b11 are ILLEGAL for a Non-secure stream. */
    if (!s->cfg.hyp)
        ste->strw = 0;
    if (ste->strw == 1 || ste->strw == 3)
        return false;
    return true;
}

/* ---- CD decode (IHI 0070 §5.4) ------------------------------------------------------------- */
static uint8_t ips_bits(const struct smmu *s, unsigned ips)
{
    static const uint8_t bits[8] = {32, 36, 40, 42, 44, 48, 52, 52};
    uint8_t b = bits[ips & 7];
    if (s->cfg.arch_minor == 0 && b > 48)
        b = 48; /* v3.0: 0b110/0b111 Reserved, behave as 0b101 */
    return b < s->cfg.oas ? b : s->cfg.oas; /* eff_IPS = MIN(CD.IPS, IDR5.OAS) */
}

static bool tt_decode(const struct smmu *s, struct smmu_tt *tt, unsigned tsz, unsigned tg,
                      bool tg1_encoding, uint64_t ttb_field, uint8_t eff_ips)
{
    unsigned p;
    if (!tg1_encoding)
        p = tg == 0 ? 12 : tg == 1 ? 16 : tg == 2 ? 14 : 0;
    else
        p = tg == 2 ? 12 : tg == 3 ? 16 : tg == 1 ? 14 : 0;
    if (p == 0 || (p == 12 && !s->cfg.gran4k) || (p == 14 && !s->cfg.gran16k) ||
        (p == 16 && !s->cfg.gran64k))
        return false; /* Reserved or unsupported granule: ILLEGAL */
    if (tsz < 16 || tsz > 39)
        return false; /* IDR3.STT == 0, no VAX: valid TxSZ is 16..39 (v3.1+ ILLEGAL) */
    uint64_t ttb = ttb_field & GENMASK64(51, 4);
    if (eff_ips < 64 && (ttb >> eff_ips))
        return false;
    if (p < 16 && (ttb >> 48))
        return false;
    unsigned ias = 64 - tsz;
    tt->tsz = (uint8_t)tsz;
    tt->pshift = (uint8_t)p;
    tt->start_level = (uint8_t)(3 - (ias - 1 - p) / (p - 3));
    unsigned top_shift = p + (p - 3) * (3u - tt->start_level);
    uint64_t align = BIT64(ias - top_shift + 3); /* bytes of the starting-level table */
    if (align < 8)
        align = 8;
    if (eff_ips == 52 && align < 64)
        align = 64;
    tt->ttb = ttb & ~(align - 1);
    tt->disabled = false;
    return true;
}

static bool cd_decode(const struct smmu *s, const struct smmu_ste *ste, const uint8_t raw[64],
                      struct smmu_ctx *ctx)
{
    uint64_t d0 = le64(raw), d1 = le64(raw + 8), d2 = le64(raw + 16), d3 = le64(raw + 24);
    if (!(d0 & BIT64(31)))
        return false; /* V == 0 */
    if (!(d0 & BIT64(41)))
        return false; /* AA64 == 0: VMSAv8-32 LPAE not supported (IDR0.TTF == 0b10) */
    if (d0 & (BIT64(42) | BIT64(43)))
        return false; /* HD/HA with IDR0.HTTU == 0 */
    if (d0 & BIT64(44))
        return false; /* S == 1 with STALL_MODEL == 0b01 */
    bool a = d0 & BIT64(46);
    if (!a && s->cfg.term_model)
        return false; /* §5.5: abort-only termination makes CD.A == 0 ILLEGAL */
    uint16_t asid = (uint16_t)fld(d0, 63, 48);
    if (!s->cfg.asid16 && (asid >> 8))
        return false;

    bool el2 = ste->strw == 2;
    bool e2h = el2 && (s->cr2 & CR2_E2H);
    ctx->regime = el2 ? REGIME_EL2 : REGIME_EL1;
    ctx->asid_used = !el2 || e2h;
    ctx->asid = ctx->asid_used ? asid : 0;
    ctx->vmid = ste->vmid;
    ctx->eff_ips = ips_bits(s, (unsigned)fld(d0, 34, 32));
    ctx->affd = d0 & BIT64(35);
    ctx->wxn = d0 & BIT64(36);
    ctx->pan = (d0 & BIT64(40)) && ctx->asid_used; /* PAN IGNORED for any-EL2 without E2H */
    ctx->endi = d0 & BIT64(15);
    ctx->a = a;
    ctx->r = d0 & BIT64(45);
    ctx->s = false;
    ctx->mair = d3;
    ctx->privcfg = ste->privcfg;
    ctx->instcfg = ste->instcfg;
    ctx->eats = ste->eats;

    /* EPDx are IGNORED (effective 0) for StreamWorld any-EL2; EL2 without E2H has one VA
     * range, so the TTB1 half does not exist (treated as disabled). */
    bool epd0 = (d0 & BIT64(14)) && !(el2 && !e2h);
    bool epd1 = (d0 & BIT64(30)) || (el2 && !e2h);
    bool had = s->cfg.had;
    ctx->tt[0].disabled = ctx->tt[1].disabled = true;
    if (!epd0 && !tt_decode(s, &ctx->tt[0], (unsigned)fld(d0, 5, 0), (unsigned)fld(d0, 7, 6),
                            false, d1, ctx->eff_ips))
        return false;
    if (!epd1 && !tt_decode(s, &ctx->tt[1], (unsigned)fld(d0, 21, 16), (unsigned)fld(d0, 23, 22),
                            true, d2, ctx->eff_ips))
        return false;
    ctx->tt[0].disabled = epd0;
    ctx->tt[1].disabled = epd1;
    ctx->tt[0].tbi = d0 & BIT64(38);
    ctx->tt[1].tbi = d0 & BIT64(39);
    ctx->tt[0].had = had && (d1 & BIT64(1));
    ctx->tt[1].had = had && (d2 & BIT64(1));
    /* E0PD0/1 (bits 66, 130): RES0 before SMMUv3.3 (IDR3.E0PD) and for EL2 (§5.4). */
    bool e0pd = s->cfg.arch_minor >= 3 && ctx->asid_used;
    ctx->tt[0].e0pd = e0pd && (d1 & BIT64(2));
    ctx->tt[1].e0pd = e0pd && (d2 & BIT64(2));
    if (!(epd0 && epd1)) {
        if (s->cfg.ttendian == 2 && ctx->endi)
            return false;
        if (s->cfg.ttendian == 3 && !ctx->endi)
            return false;
    }
    return true;
}

/* ---- STE location (§3.3.2, §6.3.23) --------------------------------------------------------- */
static enum cfg_result ste_fetch(struct smmu *s, const struct smmu_txn_req *req,
                                 struct smmu_ste *ste, uint64_t evt[4])
{
    uint32_t cfg = s->strtab_base_cfg;
    unsigned log2size = (unsigned)fld(cfg, 5, 0);
    if (log2size > s->cfg.sidsize)
        log2size = s->cfg.sidsize; /* capped at IDR1.SIDSIZE */
    if (log2size < 32 && (req->sid >> log2size))
        return bad(evt, SMMU_EVT_C_BAD_STREAMID, req);
    uint64_t base = s->strtab_base & GENMASK64(51, 6);
    const unsigned lit_log2 = (unsigned)fld(cfg, 5, 0); /* alignment uses the literal value */
    uint64_t addr;
    unsigned fmt = (unsigned)fld(cfg, 17, 16);
    if (fmt == 1 && s->cfg.strtab_2lvl) {
        unsigned split = (unsigned)fld(cfg, 10, 6);
        /* SPLIT values other than 6, 8, 10 are Reserved and behave as 6 (§6.3.25). */
        if (split != 6 && split != 8 && split != 10)
            split = 6;
        /* The SMMU aligns the base to the larger of 64 bytes and the L1 table:
         * ADDR[MAX(5, LOG2SIZE - SPLIT - 1 + 3):0] = 0 (§6.3.24). */
        int top = (int)lit_log2 - (int)split + 2;
        base &= ~(BIT64(top > 5 ? top + 1 : 6) - 1);
        uint64_t l1a = base + (uint64_t)(req->sid >> split) * 8;
        uint8_t b[8];
        if (smmu_mem_read(s, l1a, b, 8))
            return fetch_fault(evt, SMMU_EVT_F_STE_FETCH, req, l1a);
        uint64_t l1 = le64(b);
        unsigned span = (unsigned)fld(l1, 4, 0);
        uint32_t l2idx = req->sid & ((1u << split) - 1);
        /* Span 12..31 is Reserved and behaves as 0 (invalid); beyond SPLIT + 1 is out of
         * range (§5.1). */
        if (span == 0 || span >= 12 || span > split + 1 || l2idx >= (1u << (span - 1)))
            return bad(evt, SMMU_EVT_C_BAD_STREAMID, req);
        /* The L2 array is aligned to its size: L2Ptr[5 + Span - 1:0] taken as 0 (§5.1). */
        addr = (l1 & GENMASK64(51, 6) & ~(BIT64(span + 5) - 1)) + (uint64_t)l2idx * 64;
    } else {
        /* FMT Reserved, or 2-level without IDR0.ST_LEVEL support (RES0): behave as linear.
         * The base is aligned to the table size, ADDR[LOG2SIZE + 5:0] = 0 (§6.3.24). */
        base &= lit_log2 + 6 >= 64 ? 0 : ~(BIT64(lit_log2 + 6) - 1);
        addr = base + (uint64_t)req->sid * 64;
    }
    uint8_t raw[64];
    if (smmu_mem_read(s, addr, raw, sizeof(raw)))
        return fetch_fault(evt, SMMU_EVT_F_STE_FETCH, req, addr);
    if (!ste_decode(s, raw, ste))
        return bad(evt, SMMU_EVT_C_BAD_STE, req);
    ste->sid = req->sid;
    return CFG_TRANSLATE;
}

static enum cfg_result cd_fetch(struct smmu *s, const struct smmu_txn_req *req,
                                const struct smmu_ste *ste, uint32_t ssid, struct smmu_ctx *ctx,
                                uint64_t evt[4])
{
    uint64_t addr;
    if (ste->s1cdmax == 0) {
        addr = ste->s1ctxptr;
    } else if (ste->s1fmt == 0) {
        addr = ste->s1ctxptr + (uint64_t)ssid * 64;
    } else {
        /* 2-level: S1Fmt 1 = 4KB leaf tables (64 CDs), 2 = 64KB leaf tables (1024 CDs). */
        unsigned leaf_bits = ste->s1fmt == 1 ? 6 : 10;
        uint64_t l1a = ste->s1ctxptr + (uint64_t)(ssid >> leaf_bits) * 8;
        uint8_t b[8];
        if (smmu_mem_read(s, l1a, b, 8))
            return fetch_fault(evt, SMMU_EVT_F_CD_FETCH, req, l1a);
        uint64_t l1 = le64(b);
        uint64_t l2 = l1 & GENMASK64(51, 12);
        if (!(l1 & 1) || (s->cfg.oas < 64 && (l2 >> s->cfg.oas)))
            return bad_ssid(evt, req, ssid);
        addr = l2 + (uint64_t)(ssid & ((1u << leaf_bits) - 1)) * 64;
    }
    uint8_t raw[64];
    if (smmu_mem_read(s, addr, raw, sizeof(raw)))
        return fetch_fault(evt, SMMU_EVT_F_CD_FETCH, req, addr);
    if (!cd_decode(s, ste, raw, ctx))
        return bad(evt, SMMU_EVT_C_BAD_CD, req);
    return CFG_TRANSLATE;
}

static inline uint64_t cd_key(uint32_t sid, uint32_t ssid)
{
    return ((uint64_t)sid << 20) ^ ssid;
}

enum cfg_result smmu_cfg_lookup(struct smmu *s, const struct smmu_txn_req *req,
                                const struct smmu_ctx **ctxp, struct smmu_ste *ste_out,
                                uint64_t evt[4])
{
    if (s->last_ctx && s->last_gen == s->cfg_gen && s->last_sid == req->sid &&
        s->last_ssv == req->ssv && (!req->ssv || s->last_ssid == req->ssid)) {
        /* Same stream as last time and no configuration change since: both caches would hit. */
        s->ste_c.st.lookups++;
        s->ste_c.st.hits++;
        s->cd_c.st.lookups++;
        s->cd_c.st.hits++;
        *ctxp = s->last_ctx;
        return CFG_TRANSLATE;
    }
    const struct smmu_ste *ste = NULL;
    struct smmu_cache *sc = &s->ste_c;
    if (sc->lines) {
        sc->st.lookups++;
        uint32_t line = smmu_cache_set(sc, req->sid) * sc->ways;
        for (uint32_t w = 0; w < sc->ways; w++) {
            if (sc->valid[line + w] && s->ste_e[line + w].sid == req->sid) {
                smmu_cache_hit(sc, line + w);
                ste = &s->ste_e[line + w];
                break;
            }
        }
        if (!ste)
            sc->st.misses++;
    }
    if (!ste) {
        enum cfg_result r = ste_fetch(s, req, ste_out, evt);
        if (r != CFG_TRANSLATE)
            return r;
        s->cfg_gen++;
        if (sc->lines) {
            uint32_t line = smmu_cache_alloc(sc, smmu_cache_set(sc, req->sid));
            s->ste_e[line] = *ste_out;
        }
        ste = ste_out;
    }
    (void)ste_out;

    switch (ste->config) {
    case STE_CFG_ABORT:
        return CFG_ABORT_SILENT; /* §7.3.7: terminated without recording an event */
    case STE_CFG_BYPASS:
        if (req->ssv)
            return bad_ssid(evt, req, req->ssid); /* Config 0b1x0 with a SubstreamID */
        return CFG_BYPASS;
    default:
        break;
    }

    uint32_t ssid = 0;
    if (req->ssv) {
        if (s->cfg.ssidsize == 0 || ste->s1cdmax == 0 || (req->ssid >> ste->s1cdmax))
            return bad_ssid(evt, req, req->ssid);
        if (ste->s1dss == 2 && req->ssid == 0)
            return stream_disabled(evt, req); /* CD 0 is reserved for non-substream traffic */
        ssid = req->ssid;
    } else if (ste->s1cdmax) {
        if (ste->s1dss == 0)
            return stream_disabled(evt, req);
        if (ste->s1dss == 1)
            return CFG_BYPASS;
        ssid = 0; /* S1DSS == 0b10: use CD 0 */
    }

    struct smmu_cache *cc = &s->cd_c;
    if (cc->lines) {
        cc->st.lookups++;
        uint32_t line = smmu_cache_set(cc, cd_key(req->sid, ssid)) * cc->ways;
        for (uint32_t w = 0; w < cc->ways; w++) {
            const struct smmu_ctx *c = &s->cd_e[line + w];
            if (cc->valid[line + w] && c->sid == req->sid && c->ssid == ssid) {
                smmu_cache_hit(cc, line + w);
                *ctxp = c;
                goto remember;
            }
        }
        cc->st.misses++;
    }
    /* Miss (or no CD cache): decode into a cache line, or into the scratch context. */
    static _Thread_local struct smmu_ctx scratch;
    struct smmu_ctx tmp;
    memset(&tmp, 0, sizeof(tmp));
    enum cfg_result r = cd_fetch(s, req, ste, ssid, &tmp, evt);
    if (r != CFG_TRANSLATE)
        return r;
    tmp.sid = req->sid;
    tmp.ssid = ssid;
    s->cfg_gen++;
    if (cc->lines) {
        uint32_t line = smmu_cache_alloc(cc, smmu_cache_set(cc, cd_key(req->sid, ssid)));
        s->cd_e[line] = tmp;
        *ctxp = &s->cd_e[line];
    } else {
        scratch = tmp;
        *ctxp = &scratch;
        return CFG_TRANSLATE;
    }
remember:
    s->last_gen = s->cfg_gen;
    s->last_sid = req->sid;
    s->last_ssid = req->ssid;
    s->last_ssv = req->ssv;
    s->last_ctx = *ctxp;
    return CFG_TRANSLATE;
}

/* ---- invalidation (CMD_CFGI_*, §4.3) --------------------------------------------------------- */
/* CFGI_STE also drops CDs cached for that StreamID: over-invalidation is always permitted and
 * a changed S1ContextPtr must never be paired with a stale CD. */
void smmu_cfg_inv_ste_range(struct smmu *s, uint32_t lo, uint32_t hi)
{
    s->cfg_gen++;
    for (uint32_t i = 0; i < s->ste_c.lines; i++)
        if (s->ste_c.valid[i] && s->ste_e[i].sid >= lo && s->ste_e[i].sid <= hi)
            smmu_cache_inval_line(&s->ste_c, i);
    for (uint32_t i = 0; i < s->cd_c.lines; i++)
        if (s->cd_c.valid[i] && s->cd_e[i].sid >= lo && s->cd_e[i].sid <= hi)
            smmu_cache_inval_line(&s->cd_c, i);
}

void smmu_cfg_inv_cd(struct smmu *s, uint32_t sid, bool all_ssid, uint32_t ssid)
{
    s->cfg_gen++;
    if (!all_ssid && s->cd_c.lines) {
        uint32_t line = smmu_cache_set(&s->cd_c, cd_key(sid, ssid)) * s->cd_c.ways;
        for (uint32_t w = 0; w < s->cd_c.ways; w++)
            if (s->cd_c.valid[line + w] && s->cd_e[line + w].sid == sid &&
                s->cd_e[line + w].ssid == ssid)
                smmu_cache_inval_line(&s->cd_c, line + w);
        return;
    }
    for (uint32_t i = 0; i < s->cd_c.lines; i++)
        if (s->cd_c.valid[i] && s->cd_e[i].sid == sid)
            smmu_cache_inval_line(&s->cd_c, i);
}

void smmu_cfg_inv_all(struct smmu *s)
{
    s->cfg_gen++;
    smmu_cache_flush(&s->ste_c);
    smmu_cache_flush(&s->cd_c);
}
