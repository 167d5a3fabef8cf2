/* smmuv3_internal.h — private state of the SMMUv3 model: the one struct, field encodings, helpers.
 * Not public API: only the files of src/hw/smmuv3 include it (tests hard-code spec constants instead). */
#ifndef ILAB_HW_SMMUV3_INTERNAL_H
#define ILAB_HW_SMMUV3_INTERNAL_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "iommulab/smmuv3.h"

/* ---- bit helpers --------------------------------------------------------------------------- */
#define BIT64(n) (1ULL << (n))
#define GENMASK64(h, l) ((~0ULL >> (63 - (h))) & (~0ULL << (l)))
static inline uint64_t fld(uint64_t v, unsigned h, unsigned l) { return (v & GENMASK64(h, l)) >> l; }

static inline uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- register fields (IHI 0070 §6.3) --------------------------------------------------------- */
#define CR0_SMMUEN BIT64(0)
#define CR0_EVENTQEN BIT64(2)
#define CR0_CMDQEN BIT64(3)
#define CR0_ATSCHK BIT64(4)

#define CR2_E2H BIT64(0)
#define CR2_RECINVSID BIT64(1)
#define CR2_PTM BIT64(2)

#define GBPA_UPDATE BIT64(31)
#define GBPA_ABORT BIT64(20)
#define GBPA_FIELDS (GENMASK64(20, 16) | GENMASK64(13, 8) | GENMASK64(4, 0))

#define IRQ_CTRL_GERROR_IRQEN BIT64(0)
#define IRQ_CTRL_EVENTQ_IRQEN BIT64(2)

#define GERROR_CMDQ_ERR BIT64(0)
#define GERROR_EVENTQ_ABT_ERR BIT64(2)
#define GERROR_MSI_CMDQ_ABT_ERR BIT64(4)
#define GERROR_MSI_EVENTQ_ABT_ERR BIT64(5)
#define GERROR_MSI_GERROR_ABT_ERR BIT64(7)
#define GERROR_CMDQP_ERR BIT64(9) /* some ECMDQ reported an error (§3.5.6.3) */
#define GERROR_IMPLEMENTED (GERROR_CMDQ_ERR | GERROR_EVENTQ_ABT_ERR | GERROR_MSI_CMDQ_ABT_ERR | \
                            GERROR_MSI_EVENTQ_ABT_ERR | GERROR_MSI_GERROR_ABT_ERR)

#define Q_BASE_ADDR_MASK GENMASK64(51, 5)
#define Q_BASE_LOG2SIZE_MASK GENMASK64(4, 0)
#define Q_BASE_RWA BIT64(62)
#define Q_IDX_MASK 0xFFFFFu /* WR / RD fields [19:0] */
#define Q_OVF BIT64(31)
#define CMDQ_CONS_ERR_SHIFT 24
#define CMDQ_CONS_ERR_MASK (0x7Fu << 24)

/* ECMDQ control-page registers (§6.3.107-109) */
#define ECMDQ_PROD_EN BIT64(31)
#define ECMDQ_PROD_ERRACK BIT64(23)
#define ECMDQ_CONS_ENACK BIT64(31)
#define ECMDQ_CONS_REASON_SHIFT 24
#define ECMDQ_CONS_REASON_MASK (0x7u << 24)
#define ECMDQ_CONS_ERR BIT64(23)
#define IDR1_ECMDQ BIT64(31)
#define CMDQ_CP_PRESET BIT64(0)
#define CMDQ_CP_CMDQGS_64K (1ULL << 1) /* CMDQGS [2:1] = 0b01 */
#define ECMDQ_MAX 1024u

#define CERROR_NONE 0
#define CERROR_ILL 1
#define CERROR_ABT 2

#define STRTAB_BASE_MASK (BIT64(62) | GENMASK64(51, 6))
#define IRQ_CFG0_ADDR_MASK GENMASK64(51, 2)

/* ---- generic set-associative cache core (cache.c) ----------------------------------------- */
struct smmu_cache {
    uint32_t sets, ways, lines;
    uint32_t set_bits;
    uint8_t policy;
    uint8_t *valid;   /* per line */
    uint64_t *age;    /* LRU: last use; FIFO: insertion time */
    uint64_t clock;
    uint64_t rng;
    struct smmu_cache_stats st;
};

int smmu_cache_init(struct smmu_cache *c, const struct smmu_cache_geom *g, uint64_t seed);
void smmu_cache_fini(struct smmu_cache *c);
void smmu_cache_flush(struct smmu_cache *c);
uint32_t smmu_cache_alloc(struct smmu_cache *c, uint32_t set);

static inline uint32_t smmu_cache_set(const struct smmu_cache *c, uint64_t key)
{
    /* multiplicative hashing: the top set_bits of key * golden ratio */
    if (c->set_bits == 0)
        return 0;
    return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - c->set_bits));
}
static inline void smmu_cache_hit(struct smmu_cache *c, uint32_t line)
{
    c->st.hits++;
    if (c->policy == SMMU_POLICY_LRU)
        c->age[line] = ++c->clock;
}
static inline void smmu_cache_inval_line(struct smmu_cache *c, uint32_t line)
{
    if (c->valid[line]) {
        c->valid[line] = 0;
        c->st.invalidations++;
    }
}

/* ---- decoded configuration (strtab.c) ------------------------------------------------------ */
#define STE_CFG_ABORT 0
#define STE_CFG_BYPASS 4
#define STE_CFG_S1 5

struct smmu_ste {
    uint32_t sid;
    uint8_t config;     /* STE.Config */
    uint8_t s1fmt;
    uint8_t s1cdmax;
    uint8_t s1dss;
    uint8_t strw;
    uint8_t privcfg, instcfg;
    uint16_t vmid;      /* tag for S1-only translations: 0 (no stage 2 in this model) */
    uint8_t eats;       /* STE.EATS [93:92] as written (ATS Translation Requests) */
    uint64_t s1ctxptr;
};

/* Translation regimes that tag TLB entries. */
#define REGIME_EL1 0
#define REGIME_EL2 1

struct smmu_tt {        /* one translation table base (TTB0 or TTB1) */
    bool disabled;      /* EPDx */
    bool tbi;
    bool had;
    bool e0pd;          /* CD.E0PDx: unprivileged accesses fault (F_TRANSLATION) */
    uint8_t tsz;
    uint8_t pshift;     /* 12, 14 or 16 */
    uint8_t start_level;
    uint64_t ttb;       /* aligned table base */
};

struct smmu_ctx {       /* a decoded CD plus the STE-derived tags it is used with */
    uint32_t sid, ssid;
    uint16_t asid, vmid;
    uint8_t regime;     /* REGIME_EL1 / REGIME_EL2 */
    bool asid_used;     /* false for EL2 without E2H: entries behave as global */
    uint8_t eff_ips;    /* effective output size in bits */
    bool endi, affd, wxn, pan, a, r, s;
    uint8_t privcfg, instcfg;
    uint8_t eats;       /* the STE's EATS, copied with PRIVCFG/INSTCFG */
    uint64_t mair;
    struct smmu_tt tt[2];
};

/* ---- translation cache entries (tlb.c): TLB and per-level walk caches share one layout ---- */
#define XE_GLOBAL 0x01
#define XE_EL0_ACC 0x02 /* the page is accessible at EL0 (PAN check) */

/* permission bits stored in an entry */
#define XP_PR 0x01
#define XP_PW 0x02
#define XP_PX 0x04
#define XP_UR 0x08
#define XP_UW 0x10
#define XP_UX 0x20

struct smmu_xent {
    uint64_t va;        /* TLB: canonical VA base of the translation; walk: VA base covered */
    uint64_t pa;        /* TLB: output base; walk: next-level table base */
    uint16_t asid, vmid;
    uint8_t shift;      /* log2 of the span covered */
    uint8_t regime;
    uint8_t flags;
    uint8_t perm;       /* TLB: XP_*; walk: accumulated table attributes (TA_*) */
    uint8_t attr, sh;
    uint8_t pshift;     /* granule the entry was inserted with */
    uint8_t level;
};

/* hierarchical table attributes accumulated during a walk */
#define TA_NO_EL0 0x01  /* APTable[0] */
#define TA_RO 0x02      /* APTable[1] */
#define TA_UXN 0x04
#define TA_PXN 0x08

struct smmu_tcache {
    struct smmu_cache c;
    struct smmu_xent *e;
    uint64_t shifts;    /* bit n set: some entry of span 2^n may be present */
};

struct smmu_inv {       /* what a TLBI command selects */
    bool any_regime;
    uint8_t regime;
    bool any_vmid;
    uint16_t vmid;
    enum { INV_ASID_ANY, INV_ASID_NONGLOBAL, INV_ASID_OR_GLOBAL } amode;
    uint16_t asid;
    bool ranged;
    uint64_t lo, hi;    /* inclusive VA range */
    bool leaf_only;     /* Leaf == 1: walk caches need not be touched */
};

/* ---- command queue object (cmdq.c) ----------------------------------------------------------- */
enum smmu_cmdq_kind {
    CMDQ_KIND_MAIN = 0, /* SMMU_CMDQ: CR0.CMDQEN, GERROR.CMDQ_ERR, CONS.ERR [30:24] */
    CMDQ_KIND_ECMDQ,    /* PROD.EN/CONS.ENACK, CONS.ERR vs PROD.ERRACK, ERR_REASON [26:24] */
    CMDQ_KIND_VCMDQ,    /* Tegra241 CMDQV (cmdqv.c): CONFIG/STATUS, its own GERROR/GERRORN */
};

struct smmu_cmdq {
    enum smmu_cmdq_kind kind;
    unsigned index;
    uint64_t base;               /* *_BASE register as written */
    _Atomic uint32_t prod;       /* written lock-free by software */
    _Atomic uint32_t cons;       /* main: RD | ERR << 24; ECMDQ: RD | ERR | REASON | ENACK */
    uint8_t max_log2;            /* IDR1.CMDQS (ECMDQ: or the implementation's lower cap) */
    struct smmu_queue_stats st;
};

/* ---- Tegra241 CMDQV (cmdqv.c) ---------------------------------------------------------------- */
struct smmu_vcmdq {             /* what a VCMDQ has beyond the queue object (cmdq[1 + n]) */
    uint32_t config, status, gerror, gerrorn, alloc;
    uint64_t cons_indx_base;
};

struct smmu_cmdqv {
    unsigned nvcmdq, nvintf, log2q, log2vi;
    uint32_t config;             /* global CONFIG; STATUS.ENABLED follows EN */
    uint32_t vi_int_mask[2];
    uint32_t vintf_config[64], vintf_status[64];
    struct smmu_vcmdq *vq;       /* nvcmdq */
    /* (VINTF, logical index) -> 1 + VCMDQ, 0 = none: rebuilt under the model lock when an
     * ALLOC register changes, read lock-free by the PROD/CONS fast path. */
    _Atomic uint16_t *lmap;      /* nvintf * 128 */
};

/* ---- the model ------------------------------------------------------------------------------- */

struct smmu {
    struct smmu_config cfg;
    struct smmu_host_ops ops;
    void *ctx;
    atomic_int lock;

    /* ID registers, computed once from cfg */
    uint32_t idr[6], iidr, aidr, idr6;

    /* register file */
    uint32_t cr0, cr1, cr2, gbpa, irq_ctrl, gerror, gerrorn;
    uint64_t gerror_irq_cfg0;
    uint32_t gerror_irq_cfg1, gerror_irq_cfg2;
    uint64_t strtab_base;
    uint32_t strtab_base_cfg;
    uint64_t eventq_base;
    _Atomic uint32_t eventq_prod, eventq_cons;
    uint64_t eventq_irq_cfg0;
    uint32_t eventq_irq_cfg1, eventq_irq_cfg2;

    /* cmdq[0] is SMMU_CMDQ, cmdq[1 + n] is ECMDQ n; ncmdq = 1 + cfg.ecmdq_count */
    struct smmu_cmdq *cmdq;
    unsigned ncmdq;
    unsigned ecmdq_log2numq;     /* IDR6.CMDQ_CONTROL_PAGE_LOG2NUMQ */
    unsigned ecmdq_log2nump;     /* IDR6.CMDQ_CONTROL_PAGE_LOG2NUMP */
    uint64_t mmio_size;
    unsigned rr_next;            /* serial consumer: queue to serve first next time */
    unsigned *rr_active;         /* serial consumer scratch: queues with work, ncmdq entries */
    /* ECMDQs written since the serial consumer last looked (bit q = cmdq[q]): set by PROD
     * writes after the store of PROD, taken by the consumer with an exchange, so a scan costs
     * the active queues only. SMMU_CMDQ (q = 0) is always looked at. */
    _Atomic uint64_t *pending;
    uint64_t *pending_taken;     /* serial consumer scratch */
    unsigned npending;           /* words of both */

    /* caches */
    struct smmu_cache ste_c, cd_c;
    struct smmu_ste *ste_e;
    struct smmu_ctx *cd_e;
    struct smmu_tcache tlb;
    struct smmu_tcache walk[3];

    /* Last-context register: the CD-cache line used by the previous translation, valid while
     * cfg_gen is unchanged (any config-cache fill or invalidation bumps it). It skips the two
     * hashed probes for back-to-back transactions of one stream, like a TBU's context latch. */
    uint64_t cfg_gen, last_gen;
    uint32_t last_sid, last_ssid;
    bool last_ssv;
    const struct smmu_ctx *last_ctx;

    struct smmu_cmdqv *cmdqv;    /* NULL without cfg.cmdqv_vcmdqs */

    struct smmu_stats st;
};

static inline void smmu_lock(struct smmu *s)
{
    if (!s->cfg.thread_safe)
        return;
    unsigned spins = 0;
    while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire)) {
        while (atomic_load_explicit(&s->lock, memory_order_relaxed)) {
            if (++spins > 256) {
                sched_yield();
                spins = 0;
            }
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#elif defined(__aarch64__)
            __asm__ __volatile__("yield");
#endif
        }
    }
}
static inline void smmu_unlock(struct smmu *s)
{
    if (s->cfg.thread_safe)
        atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static inline void smmu_trace(struct smmu *s, const char *what, uint64_t a, uint64_t b)
{
    if (s->ops.trace)
        s->ops.trace(s->ctx, what, a, b);
}

static inline int smmu_mem_read(struct smmu *s, uint64_t pa, void *buf, size_t len)
{
    /* Fetches above the OAS are out of range (IHI 0070 §3.4.3): treated as an abort. */
    if (s->cfg.oas < 64 && ((pa >> s->cfg.oas) || ((pa + len - 1) >> s->cfg.oas)))
        return -1;
    return s->ops.mem_read(s->ctx, pa, buf, len);
}
static inline int smmu_mem_write(struct smmu *s, uint64_t pa, const void *buf, size_t len)
{
    if (s->cfg.oas < 64 && ((pa >> s->cfg.oas) || ((pa + len - 1) >> s->cfg.oas)))
        return -1;
    return s->ops.mem_write(s->ctx, pa, buf, len);
}

/* regs.c */
void smmu_regs_reset(struct smmu *s);
void smmu_regs_compute_idr(struct smmu *s);

/* msi.c */
void smmu_gerror_raise(struct smmu *s, uint32_t bit);
enum smmu_irq_src { IRQ_SRC_EVENTQ, IRQ_SRC_GERROR };
void smmu_signal_irq(struct smmu *s, enum smmu_irq_src src);
/* CMD_SYNC completion signal: returns false if the MSI write aborted */
bool smmu_msi_write(struct smmu *s, uint64_t addr, uint32_t data);

/* evtq.c */
bool smmu_evtq_record(struct smmu *s, const uint64_t rec[4]);

/* strtab.c */
enum cfg_result { CFG_TRANSLATE, CFG_BYPASS, CFG_ABORT_SILENT, CFG_FAULT };
enum cfg_result smmu_cfg_lookup(struct smmu *s, const struct smmu_txn_req *req,
                                const struct smmu_ctx **ctx, struct smmu_ste *ste_out,
                                uint64_t evt[4]);
void smmu_cfg_inv_ste_range(struct smmu *s, uint32_t lo, uint32_t hi);
void smmu_cfg_inv_cd(struct smmu *s, uint32_t sid, bool all_ssid, uint32_t ssid);
void smmu_cfg_inv_all(struct smmu *s);

/* tlb.c */
int smmu_tcache_init(struct smmu_tcache *t, const struct smmu_cache_geom *g, uint64_t seed);
void smmu_tcache_fini(struct smmu_tcache *t);
void smmu_tcache_flush(struct smmu_tcache *t);
struct smmu_xent *smmu_tcache_insert(struct smmu_tcache *t, const struct smmu_xent *e);
uint32_t smmu_tcache_invalidate(struct smmu_tcache *t, const struct smmu_inv *m, bool is_walk);
uint32_t smmu_tlbi(struct smmu *s, const struct smmu_inv *m); /* entries dropped */

static inline uint64_t xent_key(uint64_t va, unsigned shift, uint16_t vmid, uint8_t regime)
{
    return (va >> shift) ^ ((uint64_t)vmid << 40) ^ ((uint64_t)regime << 58) ^
           ((uint64_t)shift << 59);
}

/* Lookup in a translation cache of an entry of span 2^shift containing va. */
static inline struct smmu_xent *smmu_tcache_probe(struct smmu_tcache *t, uint64_t va,
                                                  unsigned shift, const struct smmu_ctx *ctx,
                                                  bool want_global)
{
    struct smmu_cache *c = &t->c;
    uint32_t line = smmu_cache_set(c, xent_key(va, shift, ctx->vmid, ctx->regime)) * c->ways;
    for (uint32_t w = 0; w < c->ways; w++, line++) {
        struct smmu_xent *e = &t->e[line];
        if (!c->valid[line] || e->shift != shift || ((va ^ e->va) >> shift) ||
            e->vmid != ctx->vmid || e->regime != ctx->regime)
            continue;
        if (e->asid != ctx->asid && !(want_global && (e->flags & XE_GLOBAL)))
            continue;
        smmu_cache_hit(c, line);
        return e;
    }
    return NULL;
}

/* Sign-extend bit 55 over the top byte: the address the TLB is tagged with when TBI ignores
 * VA[63:56] (§3.4.1). */
static inline uint64_t canon(uint64_t va)
{
    return (va & BIT64(55)) ? (va | GENMASK64(63, 56)) : (va & ~GENMASK64(63, 56));
}

/* TxSZ range check (§3.4.1): VA[63 (55 with TBI) : IAS] must all equal the region-select bit. */
static inline bool smmu_va_in_range(const struct smmu_tt *tt, uint64_t va)
{
    const uint64_t hi = GENMASK64(tt->tbi ? 55 : 63, 64u - tt->tsz);
    return (va & hi) == (((va >> 55) & 1) ? hi : 0);
}

/* Look cva up in the TLB at every page size in use (the TLB holds leaves of several spans);
 * counts the lookup, and a hit or a miss. NULL on a miss or without a TLB. */
static inline struct smmu_xent *smmu_tlb_lookup(struct smmu *s, const struct smmu_ctx *ctx,
                                                uint64_t cva)
{
    struct smmu_tcache *tlb = &s->tlb;
    struct smmu_xent *e = NULL;
    if (!tlb->c.lines)
        return NULL;
    tlb->c.st.lookups++;
    for (uint64_t m = tlb->shifts; m; m &= m - 1) {
        e = smmu_tcache_probe(tlb, cva, (unsigned)__builtin_ctzll(m), ctx, true);
        if (e)
            break;
    }
    if (e)
        s->st.tlb_hit_translations++;
    else
        tlb->c.st.misses++;
    return e;
}

/* walk.c */
struct walk_fault {
    uint8_t type;       /* SMMU_EVT_F_* */
    uint64_t fetch_addr;
};
bool smmu_walk(struct smmu *s, const struct smmu_ctx *ctx, const struct smmu_tt *tt, uint64_t va,
               struct smmu_xent *out, struct walk_fault *f);
uint8_t smmu_xent_perm(const struct smmu_xent *e, bool priv); /* SMMU_PERM_* */

/* ats.c */
void smmu_ats_translate(struct smmu *s, const struct smmu_txn_req *req, struct smmu_txn_rsp *rsp);
void smmu_atc_inv_cmd(struct smmu *s, uint64_t d0, uint64_t d1);

/* cmdq.c */
void smmu_cmdq_reset(struct smmu *s);
void smmu_cmdq_kick(struct smmu *s, unsigned queue); /* after a PROD write of cmdq[queue] */
bool smmu_ecmdq_any_enabled(const struct smmu *s);

/* cmdqv.c */
int smmu_cmdqv_init(struct smmu *s);
void smmu_cmdqv_fini(struct smmu *s);
void smmu_cmdqv_reset(struct smmu *s);
/* A VCMDQ's register at window offset off (the CMDQV window, either aperture), or NULL; *reg
 * is its offset in page0 (VCMDQ_*), or 0x1000 + its offset in page1. Lock-free. */
struct smmu_cmdq *smmu_cmdqv_vcmdq_at(struct smmu *s, uint64_t off, unsigned *reg);
bool smmu_cmdqv_window(const struct smmu *s, uint64_t off);
uint32_t smmu_cmdqv_read(struct smmu *s, uint64_t off);
void smmu_cmdqv_write(struct smmu *s, uint64_t off, uint32_t v);
bool smmu_vcmdq_enabled(const struct smmu *s, const struct smmu_cmdq *q);
bool smmu_vcmdq_error_active(const struct smmu *s, const struct smmu_cmdq *q);
void smmu_vcmdq_raise(struct smmu *s, struct smmu_cmdq *q, unsigned code, uint32_t gerror_bit);
/* Before executing d0 from VCMDQ q: CERROR_NONE, or the error it gives (a CMD_SYNC whose CS is
 * not SIG_NONE; in a guest-owned VINTF, anything but TLBI_NH_ASID/VA, ATC_INV, CMD_SYNC). */
unsigned smmu_vcmdq_check_cmd(const struct smmu *s, const struct smmu_cmdq *q, uint64_t d0);
/* PROD outside the queue (bits above the wrap bit, or more entries than the queue holds). */
bool smmu_vcmdq_prod_bad(const struct smmu_cmdq *q, unsigned log2, uint32_t prod, uint32_t cons);
/* After CONS moved: its copy in memory when CONFIG.CONS_DRAM_EN. */
void smmu_vcmdq_cons_written(struct smmu *s, struct smmu_cmdq *q);

#endif
