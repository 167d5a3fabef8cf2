/* smmu_invariants.h — the invariants fuzz_smmuv3.c and fuzz_cmdqv.c check after every step of an
 * input, abort() on a violation (libFuzzer reports it as a crash, with the input):
 *
 *  1. No stale translation after a completed invalidation. A shadow of the invalidations the
 *     model executed (host ops cmd_done) per queue, completed by that queue's next CMD_SYNC.
 *     A translation is checked when everything it depends on is older than the completed
 *     invalidations that cover it: CFGI_ALL and TLBI_NH_ALL / TLBI_NSNH_ALL / TLBI_NH_VAA (Leaf
 *     = 0, one page) of its address, no register write that configures translation, no fault
 *     window change and no other translation or prefetch since the invalidations executed (a
 *     fill from another context with the same ASID could legally serve it), and every memory
 *     word a table walk reads now written before the invalidation (a per-word write clock).
 *     Then the model must agree with a second model without any cache, configured from the
 *     first one's registers, that walks the current tables.
 *  2. Queue pointers stay within their size: CMDQ_CONS and each ECMDQ's CONS never pass PROD and
 *     keep their index below 2 x the effective size; EVENTQ_PROD, written by the model, too.
 *  3. Every fault is recorded or counted as lost: one event per faulting translation, either
 *     written at the old PROD (the record in memory is the one built), or lost on a full queue
 *     with PROD.OVFLG != CONS.OVACKFLG afterwards, or discarded with the queue disabled or
 *     EVENTQ_ABT_ERR active, or suppressed by CD.R (translation-class faults only); only
 *     C_BAD_STREAMID with CR2.RECINVSID == 0 is not recorded at all (§7.3.3).
 *  4. Registers read back only their implemented bits: a mask per register (IHI 0070 §6.3),
 *     computed from the model's ID registers (IDR0 features, IDR5.OAS, IDR1.ECMDQ).
 *
 * Header-only: each fuzzer is a single translation unit. */
#ifndef ILAB_FUZZ_SMMU_INVARIANTS_H
#define ILAB_FUZZ_SMMU_INVARIANTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/smmuv3.h"

#define MEM_SIZE (1u << 20)
#define INV_NQ 24  /* SMMU_CMDQ + up to 23 ECMDQs/VCMDQs tracked (more: never credited) */
#define INV_NVAA 16

struct fmem {
    uint8_t buf[MEM_SIZE];
    uint64_t flo, fhi; /* reads/writes in [flo, fhi) abort */
    uint64_t wclock[MEM_SIZE / 8]; /* clock of each 8-byte word's last write (never reset) */
};

struct inv_set {
    uint64_t cfg_all, tlb_all; /* clock when executed; 0 = none */
    uint64_t vaa_page[INV_NVAA], vaa_clock[INV_NVAA];
    unsigned nvaa;
};

struct inv {
    struct smmu *s, *ref;
    struct fmem *m;
    uint64_t reg_clock;   /* last write to a register that configures translation, or reset */
    uint64_t fault_clock; /* last change of the fault window */
    uint64_t fill_clock;  /* last translation or prefetch (a possible cache fill) */
    uint64_t ref_read_max;
    struct inv_set pend[INV_NQ]; /* executed, waiting for their queue's CMD_SYNC */
    struct inv_set done;         /* completed */
    unsigned vaa_next;
    uint64_t checked;            /* translations compared with the cacheless model */
};

#define INV_FAIL(...)                                                                            \
    do {                                                                                       \
        fprintf(stderr, "invariant violated: " __VA_ARGS__);                                   \
        fputc('\n', stderr);                                                                   \
        abort();                                                                               \
    } while (0)

/* Monotonic across inputs, so the word clocks need no reset between them. */
static uint64_t inv_clock_global;

static void inv_mem_written(struct inv *v, uint64_t pa, uint64_t len)
{
    if (!len || pa >= MEM_SIZE)
        return;
    uint64_t end = pa + len > MEM_SIZE ? MEM_SIZE : pa + len;
    uint64_t c = ++inv_clock_global;
    for (uint64_t w = pa / 8; w <= (end - 1) / 8; w++)
        v->m->wclock[w] = c;
}

static bool in_window(const struct fmem *m, uint64_t pa, size_t len)
{
    return pa < m->fhi && pa + len > m->flo;
}

static int inv_rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
    struct inv *v = ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa || in_window(v->m, pa, len))
        return -1;
    memcpy(buf, v->m->buf + pa, len);
    return 0;
}

static int inv_wr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    struct inv *v = ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa || in_window(v->m, pa, len))
        return -1;
    memcpy(v->m->buf + pa, buf, len);
    inv_mem_written(v, pa, len);
    return 0;
}

/* The cacheless model reads the same memory (and window) and records how recent the words it
 * read are; its writes (access flag updates) are dropped: it must not change what it checks. */
static int ref_rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
    struct inv *v = ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa || in_window(v->m, pa, len))
        return -1;
    memcpy(buf, v->m->buf + pa, len);
    for (uint64_t w = pa / 8; len && w <= (pa + len - 1) / 8; w++)
        if (v->m->wclock[w] > v->ref_read_max)
            v->ref_read_max = v->m->wclock[w];
    return 0;
}

static int ref_wr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    (void)ctx, (void)pa, (void)buf, (void)len;
    return 0;
}

static void inv_cmd_exec(void *ctx, unsigned queue, uint64_t d0, uint64_t d1)
{
    struct inv *v = ctx;
    unsigned op = (unsigned)(d0 & 0xFF);
    (void)queue, (void)d1;
    if (op == 0x01 || op == 0x02) /* PREFETCH_CONFIG / PREFETCH_ADDR may fill caches */
        v->fill_clock = ++inv_clock_global;
}

static void set_merge(struct inv *v, const struct inv_set *p)
{
    if (p->cfg_all > v->done.cfg_all)
        v->done.cfg_all = p->cfg_all;
    if (p->tlb_all > v->done.tlb_all)
        v->done.tlb_all = p->tlb_all;
    for (unsigned i = 0; i < p->nvaa; i++) {
        unsigned k = v->vaa_next++ % INV_NVAA;
        v->done.vaa_page[k] = p->vaa_page[i];
        v->done.vaa_clock[k] = p->vaa_clock[i];
        if (v->done.nvaa < INV_NVAA)
            v->done.nvaa++;
    }
}

static void inv_cmd_done(void *ctx, unsigned queue, uint64_t d0, uint64_t d1, uint32_t dropped)
{
    struct inv *v = ctx;
    unsigned op = (unsigned)(d0 & 0xFF);
    (void)dropped;
    if (queue >= INV_NQ)
        return; /* not tracked: never credited (conservative) */
    struct inv_set *p = &v->pend[queue];
    switch (op) {
    case 0x04: /* CFGI_STE_RANGE, Range 31 = CFGI_ALL (§4.3.3): every STE and CD */
        if ((d1 & 31) == 31)
            p->cfg_all = ++inv_clock_global;
        break;
    case 0x10: /* TLBI_NH_ALL: every EL1 entry, the only regime without IDR0.Hyp */
    case 0x30: /* TLBI_NSNH_ALL */
        p->tlb_all = ++inv_clock_global;
        break;
    case 0x13: /* TLBI_NH_VAA, credited only as one page: Leaf = 0, no range (TG = 0) */
        if (!(d1 & 1) && !((d1 >> 10) & 3) && p->nvaa < INV_NVAA) {
            p->vaa_page[p->nvaa] = d1 >> 12;
            p->vaa_clock[p->nvaa++] = ++inv_clock_global;
        }
        break;
    case 0x46: /* CMD_SYNC: everything its queue executed before it has completed */
        set_merge(v, p);
        memset(p, 0, sizeof(*p));
        break;
    }
}

/* Any register write that may change how a transaction is translated (the queue pointers,
 * IRQ and GERRORN registers, ECMDQ and CMDQV pages may not). */
static bool reg_configures_translation(uint64_t off, unsigned size)
{
    if (off >= 0x10000) /* page 1 (queue pointers), ECMDQ control pages, CMDQV window */
        return false;
    for (uint64_t o = off & ~3ULL; o < off + (size ? size : 1); o += 4) {
        switch (o) {
        case 0x50: case 0x64: case 0x68: case 0x6C: case 0x70: case 0x74:
        case 0x98: case 0x9C: case 0xA8: case 0xAC: case 0xB0: case 0xB4: case 0xB8: case 0xBC:
            break;
        default:
            return true;
        }
    }
    return false;
}

static void inv_mmio_write(struct inv *v, uint64_t off, uint64_t val, unsigned size)
{
    if (reg_configures_translation(off, size))
        v->reg_clock = ++inv_clock_global;
    smmu_mmio_write(v->s, off, val, size);
}

static void inv_reset(struct inv *v)
{
    v->reg_clock = ++inv_clock_global;
    memset(v->pend, 0, sizeof(v->pend));
    smmu_reset(v->s);
}

static void inv_fault_window(struct inv *v, uint64_t lo, uint64_t hi)
{
    v->fault_clock = ++inv_clock_global;
    v->m->flo = lo;
    v->m->fhi = hi;
}

static const struct smmu_host_ops inv_ops = {.mem_read = inv_rd, .mem_write = inv_wr,
                                             .cmd_exec = inv_cmd_exec, .cmd_done = inv_cmd_done};
static const struct smmu_host_ops ref_ops = {.mem_read = ref_rd, .mem_write = ref_wr};

/* Create the model and its cacheless twin; 0 on success. */
static int inv_create(struct inv *v, struct fmem *m, const struct smmu_config *cfg)
{
    memset(v, 0, sizeof(*v));
    v->m = m;
    if (smmu_create(&v->s, cfg, &inv_ops, v, NULL))
        return -1;
    struct smmu_config rc = *cfg;
    rc.ste_cache.entries = rc.cd_cache.entries = rc.tlb.entries = 0;
    for (int l = 0; l < 3; l++)
        rc.walk_cache[l].entries = 0;
    rc.ecmdq_count = 0;
    rc.ecmdq_parallel = false;
    rc.cmdqv_vcmdqs = rc.cmdqv_vintfs = 0;
    rc.cmdqv_guest = false;
    if (smmu_create(&v->ref, &rc, &ref_ops, v, NULL)) {
        smmu_destroy(v->s);
        return -1;
    }
    v->reg_clock = ++inv_clock_global;
    return 0;
}

static void inv_destroy(struct inv *v)
{
    smmu_destroy(v->ref);
    smmu_destroy(v->s);
}

/* ---- 4: implemented bits ------------------------------------------------------------------- */

static uint64_t genmask(unsigned h, unsigned l) { return (~0ULL >> (63 - h)) & (~0ULL << l); }

static unsigned idr_oas_bits(uint32_t idr5)
{
    static const unsigned bits[8] = {32, 36, 40, 42, 44, 48, 52, 48};
    return bits[idr5 & 7];
}

struct reg_mask {
    uint32_t off;
    unsigned size;
    uint64_t mask;
};

/* IHI 0070 §6.3: the fields of each read/write register, those of an absent feature RES0. */
static unsigned smmu_reg_masks(struct smmu *s, struct reg_mask *t)
{
    uint32_t idr0 = (uint32_t)smmu_mmio_read(s, SMMU_REG_IDR0, 4);
    uint32_t idr1 = (uint32_t)smmu_mmio_read(s, SMMU_REG_IDR1, 4);
    uint32_t idr5 = (uint32_t)smmu_mmio_read(s, SMMU_REG_IDR5, 4);
    bool hyp = idr0 & (1u << 9), ats = idr0 & (1u << 10), msi = idr0 & (1u << 13);
    bool pri = idr0 & (1u << 16), vmw = idr0 & (1u << 17), st2 = (idr0 >> 27) & 3;
    bool ecmdq = idr1 & (1u << 31);
    unsigned oas = idr_oas_bits(idr5);
    uint64_t addr = genmask(oas - 1, 0);
    uint64_t cr0 = 0x1 | 0x4 | 0x8 | (pri ? 0x2 : 0) | (ats ? 0x10 : 0) | (vmw ? 0x1C0 : 0);
    uint64_t irq = 0x1 | 0x4 | (pri ? 0x2 : 0);
    uint64_t gerr = 0x1 | 0x4 | 0x100 | (msi ? 0x90 | 0x20 : 0) | (pri ? 0x8 | (msi ? 0x40 : 0) : 0) |
                    (ecmdq ? 0x200 : 0);
    unsigned n = 0;
#define M(o, sz, mk) (t[n++] = (struct reg_mask){(o), (sz), (mk)})
    M(SMMU_REG_CR0, 4, cr0);
    M(SMMU_REG_CR0ACK, 4, cr0);
    M(SMMU_REG_CR1, 4, 0xFFF);
    M(SMMU_REG_CR2, 4, 0xE | (hyp ? 1 : 0));
    M(SMMU_REG_GBPA, 4, 0x801F3F1FULL);
    M(SMMU_REG_IRQ_CTRL, 4, irq);
    M(SMMU_REG_IRQ_CTRLACK, 4, irq);
    M(SMMU_REG_GERROR, 4, gerr);
    M(SMMU_REG_GERRORN, 4, gerr);
    /* IRQ_CFG0.ADDR keeps [51:2]: the model truncates an MSI address to the OAS when it
     * writes (docs/smmuv3-conformance.md rule 184), where *_BASE.ADDR stores no bit above it */
    M(SMMU_REG_GERROR_IRQ_CFG0, 8, msi ? genmask(51, 2) : 0);
    M(SMMU_REG_GERROR_IRQ_CFG1, 4, msi ? 0xFFFFFFFFULL : 0);
    M(SMMU_REG_GERROR_IRQ_CFG2, 4, msi ? 0x3F : 0);
    M(SMMU_REG_STRTAB_BASE, 8, (1ULL << 62) | (addr & genmask(51, 6)));
    M(SMMU_REG_STRTAB_BASE_CFG, 4, 0x3F | (0x1F << 6) | (st2 ? 0x30000 : 0));
    M(SMMU_REG_CMDQ_BASE, 8, (1ULL << 62) | (addr & genmask(51, 5)) | 0x1F);
    M(SMMU_REG_CMDQ_PROD, 4, 0xFFFFF);
    M(SMMU_REG_CMDQ_CONS, 4, 0x7F0FFFFF);
    M(SMMU_REG_EVENTQ_BASE, 8, (1ULL << 62) | (addr & genmask(51, 5)) | 0x1F);
    M(SMMU_REG_EVENTQ_PROD, 4, 0x800FFFFF);
    M(SMMU_REG_EVENTQ_CONS, 4, 0x800FFFFF);
    M(SMMU_REG_EVENTQ_IRQ_CFG0, 8, msi ? genmask(51, 2) : 0);
    M(SMMU_REG_EVENTQ_IRQ_CFG1, 4, msi ? 0xFFFFFFFFULL : 0);
    M(SMMU_REG_EVENTQ_IRQ_CFG2, 4, msi ? 0x3F : 0);
#undef M
    return n;
}

static void check_reg_masks(struct smmu *s)
{
    struct reg_mask t[32];
    unsigned n = smmu_reg_masks(s, t);
    for (unsigned i = 0; i < n; i++) {
        uint64_t val = smmu_mmio_read(s, t[i].off, t[i].size);
        if (val & ~t[i].mask)
            INV_FAIL("register %#x reads %#llx: bits %#llx are not implemented", t[i].off,
                     (unsigned long long)val, (unsigned long long)(val & ~t[i].mask));
    }
}

/* ---- 2: queue pointers ----------------------------------------------------------------------- */

static unsigned q_log2(uint64_t base, unsigned cap)
{
    unsigned l = (unsigned)(base & 0x1F);
    return l > cap ? cap : l;
}

/* CONS moved from c0 to c1 with PROD p: it moved forward by no more than PROD was ahead, and
 * its index and wrap bits fit 2^log2. */
static void check_consumer(const char *what, uint32_t c0, uint32_t c1, uint32_t p, unsigned log2)
{
    uint32_t span = 2u << log2, m = span - 1;
    if (!((c0 ^ c1) & 0xFFFFF))
        return; /* only ERR moved: the index is still the one software wrote */
    if ((c1 & 0xFFFFF) & ~m)
        INV_FAIL("%s CONS %#x: index beyond 2 x 2^%u", what, c1, log2);
    uint32_t moved = ((c1 & m) - (c0 & m)) & m, ahead = ((p & m) - (c0 & m)) & m;
    if (moved > ahead)
        INV_FAIL("%s CONS %#x -> %#x passed PROD %#x (2^%u entries)", what, c0, c1, p, log2);
}

struct qsnap {
    uint32_t cmdq_cons, cmdq_prod, evtq_prod;
    uint32_t ecmdq_cons[8], ecmdq_prod[8];
};

static void q_snap(struct smmu *s, struct qsnap *q, unsigned necmdq)
{
    q->cmdq_cons = (uint32_t)smmu_mmio_read(s, SMMU_REG_CMDQ_CONS, 4);
    q->cmdq_prod = (uint32_t)smmu_mmio_read(s, SMMU_REG_CMDQ_PROD, 4);
    q->evtq_prod = (uint32_t)smmu_mmio_read(s, SMMU_REG_EVENTQ_PROD, 4);
    for (unsigned n = 0; n < necmdq && n < 8; n++) {
        uint64_t r = smmu_ecmdq_offset(s, n);
        q->ecmdq_prod[n] = (uint32_t)smmu_mmio_read(s, r + SMMU_ECMDQ_REG_PROD, 4);
        q->ecmdq_cons[n] = (uint32_t)smmu_mmio_read(s, r + SMMU_ECMDQ_REG_CONS, 4);
    }
}

/* After a step that was not a register write: the pointers the model owns moved legally. */
static void check_queue_pointers(struct smmu *s, const struct qsnap *a, unsigned necmdq)
{
    struct qsnap b;
    uint32_t idr1 = (uint32_t)smmu_mmio_read(s, SMMU_REG_IDR1, 4);
    unsigned cmdqs = (idr1 >> 21) & 0x1F, evtqs = (idr1 >> 16) & 0x1F;
    q_snap(s, &b, necmdq);
    if (b.cmdq_cons != a->cmdq_cons)
        check_consumer("CMDQ", a->cmdq_cons, b.cmdq_cons, a->cmdq_prod,
                       q_log2(smmu_mmio_read(s, SMMU_REG_CMDQ_BASE, 8), cmdqs));
    for (unsigned n = 0; n < necmdq && n < 8; n++)
        if (b.ecmdq_cons[n] != a->ecmdq_cons[n])
            check_consumer("ECMDQ", a->ecmdq_cons[n], b.ecmdq_cons[n], a->ecmdq_prod[n],
                           q_log2(smmu_mmio_read(s, smmu_ecmdq_offset(s, n), 8), cmdqs));
    if ((b.evtq_prod & 0xFFFFF) != (a->evtq_prod & 0xFFFFF)) {
        unsigned l = q_log2(smmu_mmio_read(s, SMMU_REG_EVENTQ_BASE, 8), evtqs);
        if ((b.evtq_prod & 0xFFFFF) & ~((2u << l) - 1))
            INV_FAIL("EVENTQ PROD %#x: index beyond 2 x 2^%u", b.evtq_prod, l);
    }
}

/* ---- 1 and 3: a translation ------------------------------------------------------------------- */

static uint64_t covered_since(const struct inv *v, uint64_t va)
{
    uint64_t t = v->done.tlb_all;
    for (unsigned i = 0; i < v->done.nvaa; i++)
        if (v->done.vaa_page[i] == va >> 12 && v->done.vaa_clock[i] > t)
            t = v->done.vaa_clock[i];
    return t < v->done.cfg_all ? t : v->done.cfg_all;
}

/* Give the cacheless model the registers that configure translation, queues off. */
static void ref_configure(struct inv *v)
{
    struct smmu *s = v->s, *r = v->ref;
    uint32_t cr0 = (uint32_t)smmu_mmio_read(s, SMMU_REG_CR0ACK, 4);
    smmu_mmio_write(r, SMMU_REG_CR0, 0, 4);
    smmu_mmio_write(r, SMMU_REG_STRTAB_BASE, smmu_mmio_read(s, SMMU_REG_STRTAB_BASE, 8), 8);
    smmu_mmio_write(r, SMMU_REG_STRTAB_BASE_CFG, smmu_mmio_read(s, SMMU_REG_STRTAB_BASE_CFG, 4), 4);
    smmu_mmio_write(r, SMMU_REG_CR1, smmu_mmio_read(s, SMMU_REG_CR1, 4), 4);
    smmu_mmio_write(r, SMMU_REG_CR2, smmu_mmio_read(s, SMMU_REG_CR2, 4), 4);
    smmu_mmio_write(r, SMMU_REG_GBPA, smmu_mmio_read(s, SMMU_REG_GBPA, 4) | (1u << 31), 4);
    smmu_mmio_write(r, SMMU_REG_CR0, cr0 & ~0xEu, 4); /* no queues: it records nothing */
}

static bool evtq_full(uint32_t prod, uint32_t cons, unsigned log2)
{
    uint32_t m = (2u << log2) - 1, idx = (1u << log2) - 1;
    return ((prod & m) & idx) == ((cons & m) & idx) && (prod & m) != (cons & m);
}

static void inv_translate(struct inv *v, const struct smmu_txn_req *q)
{
    struct smmu *s = v->s;
    struct smmu_txn_rsp r, rr;
    struct smmu_stats a, b;
    uint32_t idr1 = (uint32_t)smmu_mmio_read(s, SMMU_REG_IDR1, 4);
    unsigned log2 = q_log2(smmu_mmio_read(s, SMMU_REG_EVENTQ_BASE, 8), (idr1 >> 16) & 0x1F);
    uint32_t prod0 = (uint32_t)smmu_mmio_read(s, SMMU_REG_EVENTQ_PROD, 4);
    uint32_t cons0 = (uint32_t)smmu_mmio_read(s, SMMU_REG_EVENTQ_CONS, 4);
    uint32_t cr0 = (uint32_t)smmu_mmio_read(s, SMMU_REG_CR0ACK, 4);
    uint32_t gerr0 = (uint32_t)(smmu_mmio_read(s, SMMU_REG_GERROR, 4) ^
                                smmu_mmio_read(s, SMMU_REG_GERRORN, 4));
    uint64_t qbase = smmu_mmio_read(s, SMMU_REG_EVENTQ_BASE, 8) & genmask(51, 5);
    bool check = false;

    uint64_t fresh = q->ats ? 0 : covered_since(v, q->iova);
    if (fresh && fresh > v->reg_clock && fresh > v->fault_clock && fresh > v->fill_clock) {
        ref_configure(v);
        v->ref_read_max = 0;
        smmu_translate(v->ref, q, &rr);
        check = v->ref_read_max < fresh;
    }
    smmu_get_stats(s, &a);
    smmu_translate(s, q, &r);
    smmu_get_stats(s, &b);
    v->fill_clock = ++inv_clock_global;

    if (check) {
        v->checked++;
        bool ok = r.status == SMMU_TXN_OK, rok = rr.status == SMMU_TXN_OK;
        if (ok != rok || (ok && (r.pa != rr.pa || r.perm != rr.perm)))
            INV_FAIL("sid %u va %#llx after a completed invalidation: status %d pa %#llx perm %u, "
                     "the current tables give status %d pa %#llx perm %u",
                     q->sid, (unsigned long long)q->iova, r.status, (unsigned long long)r.pa,
                     r.perm, rr.status, (unsigned long long)rr.pa, rr.perm);
    }

    /* 3: the fault's record */
    uint64_t w = b.events_written - a.events_written, l = b.events_lost - a.events_lost;
    uint64_t d = b.events_discarded - a.events_discarded;
    uint64_t sp = b.events_suppressed - a.events_suppressed;
    uint64_t events = w + l + d + sp;
    /* C_BAD_STREAMID is recorded only with CR2.RECINVSID (§7.3.3) */
    bool unrecorded = r.event == SMMU_EVT_C_BAD_STREAMID &&
                      !(smmu_mmio_read(s, SMMU_REG_CR2, 4) & 2);
    if (!q->ats && events != (r.event != SMMU_EVT_NONE && !unrecorded))
        INV_FAIL("fault %#x: %llu events accounted (written %llu lost %llu discarded %llu "
                 "suppressed %llu)", r.event, (unsigned long long)events, (unsigned long long)w,
                 (unsigned long long)l, (unsigned long long)d, (unsigned long long)sp);
    if (events > 1)
        INV_FAIL("one translation accounted %llu events", (unsigned long long)events);
    uint32_t prod1 = (uint32_t)smmu_mmio_read(s, SMMU_REG_EVENTQ_PROD, 4);
    uint32_t cons1 = (uint32_t)smmu_mmio_read(s, SMMU_REG_EVENTQ_CONS, 4);
    uint32_t m = (2u << log2) - 1;
    if (w) {
        uint8_t rec[32];
        if (!r.event_recorded)
            INV_FAIL("event %#x written but not reported recorded", r.event);
        if (((prod0 + 1) & m) != (prod1 & m))
            INV_FAIL("event written: PROD %#x -> %#x (2^%u entries)", prod0, prod1, log2);
        uint64_t qbytes = 32ULL << log2, pa = (qbase & ~(qbytes - 1)) + 32ULL * (prod0 & (m >> 1));
        if (pa + 32 <= MEM_SIZE) {
            memcpy(rec, v->m->buf + pa, 32);
            for (int i = 0; i < 4; i++) {
                uint64_t x;
                memcpy(&x, rec + 8 * i, 8);
                if (x != r.evt[i])
                    INV_FAIL("event record word %d at %#llx: %#llx, built %#llx", i,
                             (unsigned long long)pa, (unsigned long long)x,
                             (unsigned long long)r.evt[i]);
            }
        }
    } else if (r.event_recorded) {
        INV_FAIL("event %#x reported recorded, none written", r.event);
    } else if ((prod0 & m) != (prod1 & m)) {
        INV_FAIL("no event written but PROD moved %#x -> %#x", prod0, prod1);
    }
    if (l) {
        if (!evtq_full(prod0, cons0, log2))
            INV_FAIL("event lost on a queue that was not full (PROD %#x CONS %#x)", prod0, cons0);
        if (((prod1 ^ cons1) & 0x80000000u) == 0)
            INV_FAIL("event lost with no overflow flagged (PROD %#x CONS %#x)", prod1, cons1);
    }
    if (d && (cr0 & 4) && !(gerr0 & 4) &&
        !((smmu_mmio_read(s, SMMU_REG_GERROR, 4) ^ smmu_mmio_read(s, SMMU_REG_GERRORN, 4)) & 4))
        INV_FAIL("event %#x discarded with the queue enabled and no EVENTQ_ABT_ERR", r.event);
    if (sp && (r.event < SMMU_EVT_F_TRANSLATION || r.event > SMMU_EVT_F_PERMISSION))
        INV_FAIL("event %#x suppressed: only translation-class faults obey CD.R", r.event);
}

/* ---- a working start shared by the fuzzers ------------------------------------------------ */

#define STRTAB 0x10000ULL
#define CMDQ 0x20000ULL
#define EVTQ 0x30000ULL
#define CDS 0x50000ULL
#define PTS 0x60000ULL
#define NSTREAMS 4

static void put64(struct inv *v, uint64_t pa, uint64_t val)
{
    memcpy(v->m->buf + pa, &val, 8);
    inv_mem_written(v, pa, 8);
}

/* Streams 0..3: stage-1 STEs, one CD each (ASID 1 + sid, 48-bit 4K tables, A = R = 1), 4-level
 * tables mapping the first 16 pages: a start from which inputs reach the TLB at once. */
static void working_streams(struct inv *v)
{
    for (uint64_t sid = 0; sid < NSTREAMS; sid++) {
        uint64_t cd = CDS + 64 * sid, t = PTS + 0x4000 * sid;
        put64(v, STRTAB + 64 * sid, 1 | (5u << 1) | cd);
        put64(v, cd, 16 | (1ULL << 30) | (1ULL << 31) | (5ULL << 32) | (1ULL << 41) |
                         (1ULL << 45) | (1ULL << 46) | ((sid + 1) << 48));
        put64(v, cd + 8, t);
        put64(v, cd + 24, 0x0004FF44ULL);
        for (unsigned l = 0; l < 3; l++)
            put64(v, t + 0x1000 * l, (t + 0x1000 * (l + 1)) | 3);
        for (uint64_t pg = 0; pg < 16; pg++) /* AF, nG (pages 0..7), SH, AttrIndx 1, EL0 */
            put64(v, t + 0x3000 + 8 * pg, (0x800000 + (sid << 16) + (pg << 12)) | 3 | (1 << 10) |
                                              (pg < 8 ? 1 << 11 : 0) | (3 << 8) | (1 << 2) |
                                              (1 << 6));
    }
}

/* A command at a queue's PROD (BASE and PROD registers at base_off / prod_off, LOG2SIZE capped
 * at cap), then PROD moved past it. The commands an invalidating driver uses most, so inputs
 * reach "invalidate, sync, translate" quickly; raw words otherwise. */
static void append_cmd_q(struct inv *v, uint64_t base_off, uint64_t prod_off, unsigned cap,
                         unsigned kind, uint64_t arg, uint64_t raw0, uint64_t raw1)
{
    struct smmu *s = v->s;
    uint64_t base = smmu_mmio_read(s, base_off, 8);
    unsigned log2 = q_log2(base, cap);
    uint32_t prod = (uint32_t)smmu_mmio_read(s, prod_off, 4);
    uint64_t qbytes = 16ULL << log2, pa = (base & genmask(51, 5) & ~(qbytes - 1)) +
                                          16ULL * (prod & ((1u << log2) - 1));
    uint64_t d0, d1 = 0;
    switch (kind % 10) {
    case 0: d0 = 0x04, d1 = 31; break;                      /* CFGI_ALL */
    case 1: d0 = 0x10; break;                               /* TLBI_NH_ALL */
    case 2: d0 = 0x30; break;                               /* TLBI_NSNH_ALL */
    case 3: d0 = 0x13, d1 = (arg & 0xFFFF) << 12; break;    /* TLBI_NH_VAA, Leaf 0 */
    case 4: d0 = 0x46; break;                               /* CMD_SYNC, CS = none */
    case 5: d0 = 0x11 | ((arg & 7) << 48); break;           /* TLBI_NH_ASID */
    case 6: d0 = 0x12 | ((arg & 7) << 48), d1 = (arg >> 3 & 0xFFFF) << 12; break; /* NH_VA */
    case 7: d0 = 0x03 | ((arg & 3) << 32), d1 = 0; break;   /* CFGI_STE */
    case 8: d0 = 0x06 | ((arg & 3) << 32); break;           /* CFGI_CD_ALL */
    default: d0 = raw0, d1 = raw1; break;
    }
    if (pa + 16 <= MEM_SIZE) {
        put64(v, pa, d0);
        put64(v, pa + 8, d1);
    }
    uint32_t span = 2u << log2;
    inv_mmio_write(v, prod_off, (prod & ~0xFFFFFu) | (((prod & 0xFFFFF) + 1) & (span - 1)), 4);
}

#endif
