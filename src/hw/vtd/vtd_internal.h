/* vtd_internal.h — private state of the VT-d model: the one struct, register and entry encodings,
 * the cache core. Not public API: only src/hw/vtd includes it (tests type spec constants in). */
#ifndef ILAB_HW_VTD_INTERNAL_H
#define ILAB_HW_VTD_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "iommulab/vtd.h"

#define VBIT(n) (1ULL << (n))
#define VMASK(h, l) ((~0ULL >> (63 - (h))) & (~0ULL << (l)))

static inline uint64_t vtd_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ---- register fields (VT-d §10.4) ------------------------------------------------------ */
#define GCMD_TE VBIT(31)
#define GCMD_SRTP VBIT(30)
#define GCMD_QIE VBIT(26)
#define GSTS_TES VBIT(31)
#define GSTS_RTPS VBIT(30)
#define GSTS_QIES VBIT(26)

#define CCMD_ICC VBIT(63)
#define CCMD_CIRG_SHIFT 61
#define CCMD_CAIG_SHIFT 59
#define CCMD_WRITABLE (VBIT(63) | VMASK(62, 61) | VMASK(33, 0))

#define IOTLB_IVT VBIT(63)
#define IOTLB_IIRG_SHIFT 60
#define IOTLB_IAIG_SHIFT 57
#define IOTLB_WRITABLE (VBIT(63) | VMASK(61, 60) | VMASK(49, 48) | VMASK(47, 32))
#define IVA_WRITABLE (VMASK(63, 12) | VMASK(6, 0))

#define FSTS_PFO VBIT(0)
#define FSTS_PPF VBIT(1)
#define FSTS_IQE VBIT(4)
#define FSTS_ICE VBIT(5)
#define FSTS_ITE VBIT(6)
#define FSTS_FRI_SHIFT 8
#define FSTS_W1C (FSTS_PFO | FSTS_IQE | FSTS_ICE | FSTS_ITE)
#define FSTS_STATUS (FSTS_PFO | FSTS_PPF | FSTS_IQE | FSTS_ICE | FSTS_ITE)

#define XCTL_IM VBIT(31) /* FECTL and IECTL */
#define XCTL_IP VBIT(30)
#define ICS_IWC VBIT(0)

#define IQ_IDX_MASK VMASK(18, 4)
#define IQA_QS_MASK 0x7ULL

/* IQERCD.IQEI (VT-d §10.4.30) */
#define IQEI_NONE 0
#define IQEI_TAIL 1
#define IQEI_FETCH 2
#define IQEI_TYPE 3
#define IQEI_RSVD 4

/* FRCD upper qword (VT-d §10.4.14) */
#define FRCD_F VBIT(63)
#define FRCD_T1 VBIT(62)
#define FRCD_FR_SHIFT 32
#define FRCD_T2 VBIT(28)
#define FRCD_AT_SHIFT 60 /* AT [125:124]: the request's PCIe Address Type */
#define FRCD_AT_TRANSLATION_REQ 1ULL

/* ---- descriptor types (VT-d §6.5.2): qw0 [3:0] and [11:9] ---------------------------- */
#define DESC_CC 0x1
#define DESC_IOTLB 0x2
#define DESC_DEVTLB 0x3
#define DESC_IEC 0x4
#define DESC_WAIT 0x5

/* ---- the cache core (cache.c) --------------------------------------------------------- */
struct vtd_cache {
    uint32_t sets, ways, lines, set_bits;
    uint8_t policy;
    uint8_t *valid;
    uint64_t *age;
    uint64_t clock, rng;
    struct vtd_cache_stats st;
};

int vtd_cache_init(struct vtd_cache *c, const struct vtd_cache_geom *g, uint64_t seed);
void vtd_cache_fini(struct vtd_cache *c);
uint32_t vtd_cache_alloc(struct vtd_cache *c, uint32_t set);

static inline uint32_t vtd_cache_set(const struct vtd_cache *c, uint64_t key)
{
    if (c->set_bits == 0)
        return 0;
    return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - c->set_bits));
}
static inline void vtd_cache_hit(struct vtd_cache *c, uint32_t line)
{
    c->st.hits++;
    if (c->policy == VTD_POLICY_LRU)
        c->age[line] = ++c->clock;
}
static inline void vtd_cache_inval_line(struct vtd_cache *c, uint32_t line)
{
    if (c->valid[line]) {
        c->valid[line] = 0;
        c->st.invalidations++;
    }
}

/* ---- decoded context entry and cached translations (tlb.c) ---------------------------- */
#define CTX_TT_SL 0     /* untranslated requests translated, ATS blocked */
#define CTX_TT_DEVTLB 1 /* also ATS translation requests */
#define CTX_TT_PT 2     /* pass-through */

struct vtd_ctx {
    uint16_t sid, did;
    uint8_t tt, levels; /* levels 3/4/5 (AW 1/2/3) */
    bool fpd;
    uint64_t slptptr;
};

struct vtd_tent {       /* IOTLB: leaf translation; PSC: pointer to the next table */
    uint64_t va;        /* input address base covered (aligned to 2^shift) */
    uint64_t pa;        /* IOTLB: output base; PSC: next-level table */
    uint16_t did;
    uint8_t shift;      /* IOTLB: 12/21/30; PSC: span covered by the entry */
    uint8_t perm;       /* VTD_PERM_* accumulated down to this entry */
};

struct vtd_tcache {
    struct vtd_cache c;
    struct vtd_tent *e;
};

struct vtd_inv {        /* what an IOTLB invalidation selects */
    bool all_domains;
    uint16_t did;
    bool ranged;
    uint64_t lo, hi;    /* inclusive input-address range */
    bool keep_psc;      /* IH = 1: paging-structure caches preserved */
};

/* ---- the model ------------------------------------------------------------------------- */
struct vtd {
    struct vtd_config cfg;
    struct vtd_host_ops ops;
    void *ctx;
    atomic_int lock;

    uint32_t ver;
    uint64_t cap, ecap;
    uint64_t mmio_size;

    /* register file */
    uint32_t gsts;
    uint64_t rtaddr;        /* as written */
    uint64_t rta_active;    /* latched by SRTP */
    uint64_t ccmd, iva, iotlb_reg;
    uint32_t fsts, fectl, fedata, feaddr, feuaddr;
    uint64_t iqh, iqt, iqa, iqercd;
    uint32_t ics, iectl, iedata, ieaddr, ieuaddr;
    uint64_t (*frcd)[2];    /* nfr records: [0] FI, [1] SID/FR/T/F */
    uint16_t fr_next;       /* the internal index of the next record (VT-d §7.2.1) */

    /* caches */
    struct vtd_cache ctxc;
    struct vtd_ctx *ctxe;
    struct vtd_tcache iotlb, psc[4]; /* psc[0] PML5E (level 5) .. psc[3] PDE (level 2) */
    uint64_t iotlb_shifts;  /* bit n: an IOTLB entry of size 2^n may be present */

    struct vtd_stats st;
};

static inline uint64_t vtd_haw_mask(const struct vtd *v) { return VMASK(v->cfg.haw - 1, 0); }

/* CAP.ND: the unit implements 4 + 2 * ND domain-id bits. */
static inline unsigned vtd_did_bits(const struct vtd *v) { return 4 + 2 * v->cfg.nd; }
static inline uint64_t vtd_did_mask(const struct vtd *v) { return VMASK(vtd_did_bits(v) - 1, 0); }

/* regs.c */
uint64_t vtd_reg_read32(struct vtd *v, uint64_t off);
void vtd_reg_write32(struct vtd *v, uint64_t off, uint32_t val);
void vtd_regs_reset(struct vtd *v);

/* events.c: fault recording, fault and invalidation-completion events */
bool vtd_record_fault(struct vtd *v, uint16_t sid, uint64_t iova, uint8_t reason, bool write,
                      bool ats);
void vtd_fault_condition(struct vtd *v, uint32_t new_bit);
void vtd_fault_status_serviced(struct vtd *v);
void vtd_fectl_unmasked(struct vtd *v);
void vtd_inv_complete_event(struct vtd *v);
void vtd_iectl_unmasked(struct vtd *v);

/* tlb.c */
int vtd_caches_init(struct vtd *v);
void vtd_caches_fini(struct vtd *v);
void vtd_caches_flush(struct vtd *v);
bool vtd_ctxc_lookup(struct vtd *v, uint16_t sid, struct vtd_ctx *out);
void vtd_ctxc_fill(struct vtd *v, const struct vtd_ctx *c);
void vtd_ctxc_inval(struct vtd *v, unsigned gran, uint16_t did, uint16_t sid, unsigned fm);
bool vtd_iotlb_lookup(struct vtd *v, uint16_t did, uint64_t iova, struct vtd_tent *out);
void vtd_iotlb_fill(struct vtd *v, const struct vtd_tent *t);
int vtd_psc_lookup(struct vtd *v, uint16_t did, uint64_t iova, unsigned top, struct vtd_tent *out);
void vtd_psc_fill(struct vtd *v, unsigned level, const struct vtd_tent *t);
void vtd_iotlb_inval(struct vtd *v, const struct vtd_inv *inv);

/* invq.c */
void vtd_iq_disable(struct vtd *v);

static inline void vtd_lock(struct vtd *v)
{
    if (!v->cfg.thread_safe)
        return;
    for (;;) {
        if (!atomic_exchange_explicit(&v->lock, 1, memory_order_acquire))
            return;
        while (atomic_load_explicit(&v->lock, memory_order_relaxed))
            ;
    }
}
static inline void vtd_unlock(struct vtd *v)
{
    if (v->cfg.thread_safe)
        atomic_store_explicit(&v->lock, 0, memory_order_release);
}

static inline void vtd_trace(struct vtd *v, const char *what, uint64_t a, uint64_t b)
{
    if (v->ops.trace)
        v->ops.trace(v->ctx, what, a, b);
}

#endif /* ILAB_HW_VTD_INTERNAL_H */
