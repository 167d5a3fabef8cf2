/* fuzz_vtd.c — libFuzzer target for the VT-d model: the input is a program of register writes and
 * reads, memory writes (tables, queue contents), error windows, invalidation descriptors pushed
 * at the tail, translations, queue processing and resets. After every step it checks, and
 * aborts on a violation:
 *  1. no translation returns a stale entry after a completed invalidation: a shadow of the
 *     context-cache and IOTLB descriptors the model executed (desc_exec), completed by the next
 *     invalidation wait descriptor; a translation whose inputs (every memory word it reads, the
 *     root pointer, TE, the error window) are older than completed invalidations covering its
 *     source-id, domain and page, with no other translation since, must agree with a cacheless
 *     twin walking the current tables;
 *  2. IQH stays inside the queue and never passes IQT;
 *  3. every fault is recorded in a fault recording register (F, SID, FR, FI checked, PPF set),
 *     suppressed by FPD, or counted as lost with FSTS.PFO set;
 *  4. registers read back only their defined fields (VT-d §10.4), from CAP/ECAP (ND, NFR, FRO,
 *     IRO, QI) and the configured HAW/MGAW.
 * Not a test. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/vtd.h"

#define MEM_SIZE (1u << 20)
#define ROOT 0x10000ULL
#define CTX 0x11000ULL
#define PT 0x12000ULL
#define IQ 0x20000ULL
#define NINV 32

#define INV_FAIL(...)                                                                            \
    do {                                                                                       \
        fprintf(stderr, "invariant violated: " __VA_ARGS__);                                   \
        fputc('\n', stderr);                                                                   \
        abort();                                                                               \
    } while (0)

struct fmem {
    uint8_t buf[MEM_SIZE];
    uint64_t flo, fhi; /* reads/writes in [flo, fhi) fail */
    uint64_t sink;
    uint64_t wclock[MEM_SIZE / 8]; /* clock of each 8-byte word's last write (never reset) */
};

/* An invalidation the model executed: what it covers and when. */
enum inv_kind { CTX_ALL, CTX_DID, CTX_SID, TLB_ALL, TLB_DID, TLB_PAGES };
struct inv_rec {
    enum inv_kind kind;
    uint32_t key;         /* DID or source-id */
    uint64_t lo, hi;      /* TLB_PAGES: [lo, hi) */
    uint64_t clock;
};

/* The fuzzer's shadow (see the invariants in the comment at the top). */
struct shadow {
    struct vtd *v, *ref;
    struct fmem *m;
    uint64_t reg_clock, fault_clock, fill_clock, ref_read_max;
    uint64_t rta_latched; /* RTADDR as the last SRTP latched it */
    struct inv_rec pend[NINV], done[NINV];
    unsigned npend, ndone;
    uint64_t checked;
};

/* Monotonic across inputs, so the word clocks need no reset between them. */
static uint64_t clk;

static void mem_written(struct fmem *m, uint64_t pa, uint64_t len)
{
    if (!len || pa >= MEM_SIZE)
        return;
    uint64_t end = pa + len > MEM_SIZE ? MEM_SIZE : pa + len, c = ++clk;
    for (uint64_t w = pa / 8; w <= (end - 1) / 8; w++)
        m->wclock[w] = c;
}

static bool in_window(const struct fmem *m, uint64_t pa, size_t len)
{
    return pa < m->fhi && pa + len > m->flo;
}

static int rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
    struct shadow *sh = ctx;
    struct fmem *m = sh->m;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa || in_window(m, pa, len))
        return -1;
    memcpy(buf, m->buf + pa, len);
    return 0;
}

static int wr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    struct shadow *sh = ctx;
    struct fmem *m = sh->m;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa || in_window(m, pa, len))
        return -1;
    memcpy(m->buf + pa, buf, len);
    mem_written(m, pa, len);
    return 0;
}

/* The cacheless twin reads the same memory and window, notes how recent the words it read
 * are, and writes nothing. */
static int ref_rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
    struct shadow *sh = ctx;
    if (rd(ctx, pa, buf, len))
        return -1;
    for (uint64_t w = pa / 8; len && w <= (pa + len - 1) / 8; w++)
        if (sh->m->wclock[w] > sh->ref_read_max)
            sh->ref_read_max = sh->m->wclock[w];
    return 0;
}

static int ref_wr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    (void)ctx, (void)pa, (void)buf, (void)len;
    return 0;
}

static void msi(void *ctx, enum vtd_event ev, uint64_t addr, uint32_t data)
{
    ((struct shadow *)ctx)->m->sink += ev + addr + data;
}

static void devtlb(void *ctx, uint16_t sid, uint16_t pfsid, unsigned qdep, uint64_t addr,
                   unsigned size_log2)
{
    ((struct shadow *)ctx)->m->sink += sid + pfsid + qdep + addr + size_log2;
}

static void pend(struct shadow *sh, enum inv_kind k, uint32_t key, uint64_t lo, uint64_t hi)
{
    if (sh->npend < NINV)
        sh->pend[sh->npend++] = (struct inv_rec){k, key, lo, hi, ++clk};
}

/* Legacy-mode descriptors (VT-d §6.5.2): context-cache (1), IOTLB (2), wait (5). The model
 * calls desc_exec after a descriptor's checks, executes it whole, and a wait descriptor runs
 * after everything before it completed (§6.5.2.8): it completes the pending ones. */
static void desc_exec(void *ctx, uint64_t qw0, uint64_t qw1)
{
    struct shadow *sh = ctx;
    unsigned g = (unsigned)(qw0 >> 4) & 3;
    uint32_t did = (uint32_t)(qw0 >> 16) & 0xFFFF;
    switch (qw0 & 0xF) {
    case 1:
        if (g == 1)
            pend(sh, CTX_ALL, 0, 0, 0);
        else if (g == 2)
            pend(sh, CTX_DID, did, 0, 0);
        else if (g == 3 && !((qw0 >> 48) & 3)) /* FM = 0: exactly that source-id */
            pend(sh, CTX_SID, (uint32_t)(qw0 >> 32) & 0xFFFF, 0, 0);
        break;
    case 2:
        if (g == 1)
            pend(sh, TLB_ALL, 0, 0, 0);
        else if (g == 2)
            pend(sh, TLB_DID, did, 0, 0);
        else if (g == 3 && !(qw1 & 0x40)) { /* IH = 0: the paging-structure caches too */
            unsigned am = (unsigned)(qw1 & 0x3F);
            uint64_t span = 4096ULL << am, lo = (qw1 & ~0xFFFULL) & ~(span - 1);
            pend(sh, TLB_PAGES, did, lo, lo + span);
        }
        break;
    case 5:
        for (unsigned i = 0; i < sh->npend; i++) {
            sh->done[sh->ndone % NINV] = sh->pend[i];
            sh->ndone++;
        }
        sh->npend = 0;
        break;
    }
}

static const struct vtd_host_ops ops = {.mem_read = rd, .mem_write = wr, .msi = msi,
                                        .devtlb_inv = devtlb, .desc_exec = desc_exec};
static const struct vtd_host_ops ref_ops = {.mem_read = ref_rd, .mem_write = ref_wr};

static uint64_t genmask(unsigned h, unsigned l) { return (~0ULL >> (63 - h)) & (~0ULL << l); }

/* The newest completed invalidations that cover a request of `sid` to `iova` in domain `did`:
 * the older of the context-cache one and the IOTLB one (0: none). */
static uint64_t covered_since(const struct shadow *sh, uint16_t sid, uint16_t did, uint64_t iova)
{
    uint64_t c = 0, t = 0;
    unsigned n = sh->ndone < NINV ? sh->ndone : NINV;
    for (unsigned i = 0; i < n; i++) {
        const struct inv_rec *r = &sh->done[i];
        bool ctx = r->kind == CTX_ALL || (r->kind == CTX_DID && r->key == did) ||
                   (r->kind == CTX_SID && r->key == sid);
        bool tlb = r->kind == TLB_ALL || (r->kind == TLB_DID && r->key == did) ||
                   (r->kind == TLB_PAGES && r->key == did && iova >= r->lo && iova < r->hi);
        if (ctx && r->clock > c)
            c = r->clock;
        if (tlb && r->clock > t)
            t = r->clock;
    }
    return c < t ? c : t;
}

/* Registers whose writes cannot change a translation: fault and invalidation-event registers,
 * the queue, the invalidation registers (they only drop cache entries), the fault records. */
static bool reg_configures_translation(struct shadow *sh, uint64_t off, unsigned size)
{
    const struct vtd_config *c = vtd_get_config(sh->v);
    for (uint64_t o = off & ~3ULL; o < off + (size ? size : 1); o += 4) {
        if (o >= c->fro_offset && o < c->fro_offset + 16ULL * c->nfr)
            continue;
        if (o >= c->iro_offset && o < c->iro_offset + 16)
            continue;
        if ((o >= 0x28 && o < 0x48) || (o >= 0x80 && o < 0xB8))
            continue;
        if (o == 0x18 || o == 0x20 || o == 0x24)
            return true;
    }
    return false;
}

static void sh_mmio_write(struct shadow *sh, uint64_t off, uint64_t val, unsigned size)
{
    if (reg_configures_translation(sh, off, size))
        sh->reg_clock = ++clk;
    vtd_mmio_write(sh->v, off, val, size);
    if (off == 0x18 && (size == 4 || size == 8) && (val & (1u << 30))) /* SRTP latched */
        sh->rta_latched = vtd_mmio_read(sh->v, 0x20, 8);
}

/* ---- registers read back only their defined fields (VT-d §10.4) ----------------------------- */

struct reg_mask {
    uint32_t off;
    unsigned size;
    uint64_t mask;
};

static void check_reg_masks(struct shadow *sh)
{
    struct vtd *v = sh->v;
    const struct vtd_config *c = vtd_get_config(v);
    uint64_t cap = vtd_mmio_read(v, 0x08, 8), ecap = vtd_mmio_read(v, 0x10, 8);
    bool qi = ecap & 2;
    unsigned didbits = 4 + 2 * (unsigned)(cap & 7), nfr = (unsigned)((cap >> 40) & 0xFF) + 1;
    uint64_t fro = ((cap >> 24) & 0x3FF) * 16, iro = ((ecap >> 8) & 0x3FF) * 16;
    uint64_t did = genmask(didbits - 1, 0), addr = genmask(c->haw - 1, 12);
    struct reg_mask t[24 + 2 * 256];
    unsigned n = 0;
#define M(o, sz, mk) (t[n++] = (struct reg_mask){(uint32_t)(o), (sz), (mk)})
    M(0x18, 4, 0);                                       /* GCMD: write-only */
    M(0x1C, 4, 0xC0000000u | (qi ? 1u << 26 : 0));      /* GSTS: TES, RTPS, QIES */
    M(0x20, 8, addr);                                    /* RTADDR (TTM needs SMTS) */
    M(0x28, 8, (1ULL << 63) | (3ULL << 61) | (3ULL << 59) | (3ULL << 32) | (0xFFFFULL << 16) | did);
    M(0x34, 4, 0xFF00 | 0x3 | (qi ? 0x70 : 0));          /* FSTS: FRI, PPF, PFO, IQE/ICE/ITE */
    M(0x38, 4, 0xC0000000u);                             /* FECTL: IM, IP */
    M(0x3C, 4, 0xFFFF);                                  /* FEDATA (EIMD needs EIM) */
    M(0x40, 4, 0xFFFFFFFCu);
    M(0x80, 8, qi ? genmask(18, 4) : 0);                 /* IQH */
    M(0x88, 8, qi ? genmask(18, 4) : 0);                 /* IQT */
    M(0x90, 8, qi ? addr | 7 : 0);                       /* IQA: address, QS */
    M(0x9C, 4, qi ? 1 : 0);                              /* ICS: IWC */
    M(0xA0, 4, qi ? 0xC0000000u : 0);                    /* IECTL */
    M(0xA4, 4, qi ? 0xFFFF : 0);
    M(0xA8, 4, qi ? 0xFFFFFFFCu : 0);
    M(0xB0, 8, qi ? genmask(63, 32) | 0xF : 0);          /* IQERCD */
    M(iro, 8, genmask(63, 12) | 0x7F);                   /* IVA: ADDR, IH, AM */
    M(iro + 8, 8, (1ULL << 63) | (3ULL << 60) | (3ULL << 57) | (3ULL << 48) | (did << 32));
    for (unsigned i = 0; i < nfr && i < 256; i++) {      /* FRCD: FI; F, T1, FR, T2, SID */
        M(fro + 16 * i, 8, genmask(c->mgaw - 1, 12));
        M(fro + 16 * i + 8, 8, genmask(63, 60) | genmask(39, 28) | 0xFFFF);
    }
#undef M
    for (unsigned i = 0; i < n; i++) {
        uint64_t val = vtd_mmio_read(v, t[i].off, t[i].size);
        if (val & ~t[i].mask)
            INV_FAIL("register %#x reads %#llx: bits %#llx are not defined", t[i].off,
                     (unsigned long long)val, (unsigned long long)(val & ~t[i].mask));
    }
    uint32_t fsts = (uint32_t)vtd_mmio_read(v, 0x34, 4);
    if (((fsts >> 8) & 0xFF) >= nfr)
        INV_FAIL("FSTS.FRI %u with %u fault recording registers", (fsts >> 8) & 0xFF, nfr);
}

/* ---- the invalidation queue's head ---------------------------------------------------------- */

static void check_iqh(struct shadow *sh, uint64_t h0, uint64_t t0)
{
    uint64_t iqa = vtd_mmio_read(sh->v, 0x90, 8), h1 = vtd_mmio_read(sh->v, 0x80, 8);
    uint64_t entries = 256ULL << (iqa & 7);
    if (h1 == h0)
        return;
    if ((h1 >> 4) >= entries)
        INV_FAIL("IQH %#llx beyond the queue's %llu entries", (unsigned long long)h1,
                 (unsigned long long)entries);
    uint64_t moved = ((h1 >> 4) - (h0 >> 4)) % entries, ahead = ((t0 >> 4) - (h0 >> 4)) % entries;
    if ((h0 >> 4) < entries && (t0 >> 4) < entries && moved > ahead)
        INV_FAIL("IQH %#llx -> %#llx passed IQT %#llx", (unsigned long long)h0,
                 (unsigned long long)h1, (unsigned long long)t0);
}

/* ---- a translation: stale entries and fault records ---------------------------------------- */

static void ref_configure(struct shadow *sh)
{
    uint32_t gsts = (uint32_t)vtd_mmio_read(sh->v, 0x1C, 4);
    vtd_mmio_write(sh->ref, 0x18, 0, 4); /* TE off */
    vtd_mmio_write(sh->ref, 0x20, sh->rta_latched, 8);
    vtd_mmio_write(sh->ref, 0x18, 1u << 30, 4);
    vtd_mmio_write(sh->ref, 0x18, gsts & (1u << 31), 4);
}

static void sh_translate(struct shadow *sh, const struct vtd_txn_req *q)
{
    struct vtd *v = sh->v;
    struct vtd_txn_rsp r, rr;
    struct vtd_stats a, b;
    bool check = false;

    if (!q->ats) {
        ref_configure(sh);
        sh->ref_read_max = 0;
        vtd_translate(sh->ref, q, &rr);
        uint64_t fresh = covered_since(sh, q->sid, rr.did, q->iova);
        check = fresh && fresh > sh->reg_clock && fresh > sh->fault_clock &&
                fresh > sh->fill_clock && fresh > sh->ref_read_max;
    }
    vtd_get_stats(v, &a);
    uint32_t fsts0 = (uint32_t)vtd_mmio_read(v, 0x34, 4);
    vtd_translate(v, q, &r);
    vtd_get_stats(v, &b);
    sh->fill_clock = ++clk;

    if (check) {
        sh->checked++;
        bool ok = r.status == VTD_TXN_OK, rok = rr.status == VTD_TXN_OK;
        if (ok != rok || (ok && (r.pa != rr.pa || r.perm != rr.perm)))
            INV_FAIL("sid %#x iova %#llx after a completed invalidation: status %d pa %#llx perm "
                     "%u, the current tables give status %d pa %#llx perm %u", q->sid,
                     (unsigned long long)q->iova, r.status, (unsigned long long)r.pa, r.perm,
                     rr.status, (unsigned long long)rr.pa, rr.perm);
    }
    if (q->ats)
        return;
    /* every fault is recorded, suppressed by FPD or counted as lost with PFO set */
    uint64_t rec = b.faults_recorded - a.faults_recorded, lost = b.faults_lost - a.faults_lost;
    uint64_t sup = b.faults_suppressed - a.faults_suppressed;
    bool faulted = r.status == VTD_TXN_FAULT;
    if (rec + lost + sup != faulted)
        INV_FAIL("status %d reason %#x: recorded %llu lost %llu suppressed %llu", r.status,
                 r.fault_reason, (unsigned long long)rec, (unsigned long long)lost,
                 (unsigned long long)sup);
    if (rec != r.fault_recorded)
        INV_FAIL("fault reason %#x: recorded %llu, reported %d", r.fault_reason,
                 (unsigned long long)rec, r.fault_recorded);
    if (lost && !(vtd_mmio_read(v, 0x34, 4) & 1))
        INV_FAIL("fault reason %#x lost with FSTS.PFO clear (FSTS %#x before)", r.fault_reason,
                 fsts0);
    if (rec) {
        const struct vtd_config *c = vtd_get_config(v);
        bool found = false;
        for (unsigned i = 0; i < c->nfr && !found; i++) {
            uint64_t hi = vtd_mmio_read(v, c->fro_offset + 16 * i + 8, 8);
            uint64_t lo = vtd_mmio_read(v, c->fro_offset + 16 * i, 8);
            found = (hi >> 63) && (hi & 0xFFFF) == q->sid && ((hi >> 32) & 0xFF) == r.fault_reason &&
                    lo == (q->iova & genmask(c->mgaw - 1, 12));
        }
        if (!found)
            INV_FAIL("fault reason %#x of sid %#x recorded in no fault recording register",
                     r.fault_reason, q->sid);
        if (!(vtd_mmio_read(v, 0x34, 4) & 2))
            INV_FAIL("fault recorded with FSTS.PPF clear");
    }
}

struct in {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v |= (uint64_t)in->p[0] << (8 * i);
    return v;
}

static void put64(struct fmem *m, uint64_t pa, uint64_t v)
{
    if (pa + 8 <= MEM_SIZE) {
        memcpy(m->buf + pa, &v, 8); /* little-endian host */
        mem_written(m, pa, 8);
    }
}

/* Offsets worth hitting often (op 1 reaches the whole window). */
static const uint32_t hot[] = {0x18, 0x20, 0x24, 0x28, 0x2C, 0x34, 0x38, 0x3C, 0x40, 0x44,
                               0x88, 0x90, 0x94, 0x9C, 0xA0, 0xA4, 0xA8, 0x200, 0x204, 0x208,
                               0x20C, 0x10C, 0x11C, 0x12C, 0x17C};

/* A descriptor at the software tail, then IQT. */
static void push_desc(struct shadow *sh, uint64_t *tail, uint64_t qw0, uint64_t qw1)
{
    put64(sh->m, IQ + 16 * *tail, qw0);
    put64(sh->m, IQ + 16 * *tail + 8, qw1);
    *tail = (*tail + 1) % 256;
    sh_mmio_write(sh, 0x88, *tail << 4, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fmem *m;
    static struct shadow sh;
    if (!m)
        m = calloc(1, sizeof(*m));
    memset(m->buf, 0, sizeof(m->buf));
    m->flo = m->fhi = 0;
    struct in in = {data, size};
    struct vtd_config cfg;
    vtd_config_default(&cfg);
    cfg.thread_safe = false;
    uint8_t knobs = (uint8_t)take(&in, 1);
    if (knobs & 1) { /* tiny caches with every policy: evictions */
        cfg.context_cache = (struct vtd_cache_geom){2, 1, VTD_POLICY_FIFO};
        cfg.iotlb = (struct vtd_cache_geom){4, 2, VTD_POLICY_RANDOM};
        cfg.psc[3] = (struct vtd_cache_geom){3, 2, VTD_POLICY_LRU};
    }
    if (knobs & 2) { /* 3-, 4- and 5-level tables */
        cfg.sagaw39 = cfg.sagaw57 = true;
        cfg.mgaw = 57;
    }
    if (knobs & 4) { /* fewer capabilities: their fields become reserved */
        cfg.dt = cfg.pt = cfg.sc = false;
        cfg.sllps_1g = false;
        cfg.psi = false;
    }
    if (knobs & 8)
        cfg.nfr = 1;
    if (knobs & 16)
        cfg.haw = 39;
    if (knobs & 32) /* 4-bit domain-ids */
        cfg.nd = 0;
    if (knobs & 64) /* register-based invalidation only: the queue registers are reserved */
        cfg.qi = cfg.dt = false;
    memset(&sh, 0, sizeof(sh));
    sh.m = m;
    if (vtd_create(&sh.v, &cfg, &ops, &sh, NULL))
        return 0;
    struct vtd_config rc = cfg;
    rc.context_cache.entries = rc.iotlb.entries = 0;
    for (int l = 0; l < 4; l++)
        rc.psc[l].entries = 0;
    if (vtd_create(&sh.ref, &rc, &ref_ops, &sh, NULL)) {
        vtd_destroy(sh.v);
        return 0;
    }
    struct vtd *v = sh.v;
    sh.reg_clock = ++clk;
    /* a working start so inputs reach the walk and the queue quickly: bus 0 -> context table,
     * devfn 0 -> DID 1 and devfn 1 -> DID 2, both AW 48-bit on 4-level tables at PT that map
     * the first 16 pages read/write; queue of 256 entries at IQ, enabled */
    put64(m, ROOT, CTX | 1);
    put64(m, CTX, PT | 1);
    put64(m, CTX + 8, 2 | (1 << 8));
    put64(m, CTX + 16, PT | 1);
    put64(m, CTX + 24, 2 | (2 << 8));
    for (unsigned l = 0; l < 3; l++)
        put64(m, PT + 0x1000 * l, (PT + 0x1000 * (l + 1)) | 3);
    for (uint64_t pg = 0; pg < 16; pg++)
        put64(m, PT + 0x3000 + 8 * pg, (0x800000 + (pg << 12)) | 3);
    sh_mmio_write(&sh, 0x20, ROOT, 8);
    sh_mmio_write(&sh, 0x18, 1u << 30, 4);
    sh_mmio_write(&sh, 0x18, 1u << 31, 4);
    sh_mmio_write(&sh, 0x90, IQ, 8);
    sh_mmio_write(&sh, 0x18, (1u << 31) | (1u << 26), 4);
    sh_mmio_write(&sh, 0x38, 0, 4);
    sh_mmio_write(&sh, 0xA0, 0, 4);
    const uint64_t window = vtd_mmio_size(v);
    uint64_t tail = 0;
    check_reg_masks(&sh);

    unsigned steps = 0;
    while (in.n && steps++ < 256) {
        uint64_t h0 = vtd_mmio_read(v, 0x80, 8), t0 = vtd_mmio_read(v, 0x88, 8);
        bool regwrite = false;
        switch ((unsigned)take(&in, 1) % 11) {
        case 0: { /* hot register write */
            uint32_t off = hot[take(&in, 1) % (sizeof(hot) / sizeof(hot[0]))];
            unsigned sz = (take(&in, 1) & 1) && !(off & 7) ? 8 : 4;
            sh_mmio_write(&sh, off, take(&in, 8), sz);
            regwrite = true;
            break;
        }
        case 1: { /* any register access, any size */
            uint64_t off = take(&in, 2) % (window + 16);
            if (take(&in, 1) & 1) {
                uint64_t val = take(&in, 8);
                sh_mmio_write(&sh, off, val, (unsigned)take(&in, 1) % 9);
                regwrite = true;
            } else {
                (void)vtd_mmio_read(v, off, (unsigned)take(&in, 1) % 9);
            }
            break;
        }
        case 2: { /* memory bytes */
            uint64_t pa = take(&in, 3) % MEM_SIZE;
            unsigned len = (unsigned)take(&in, 1) % 64;
            for (unsigned i = 0; i < len && pa + i < MEM_SIZE; i++)
                m->buf[pa + i] = (uint8_t)take(&in, 1);
            mem_written(m, pa, len);
            break;
        }
        case 3: /* an aligned word: entries of the tables near the start */
            put64(m, (take(&in, 3) % MEM_SIZE) & ~7ULL, take(&in, 8));
            break;
        case 4: { /* translate */
            struct vtd_txn_req q = {0};
            q.sid = (uint16_t)take(&in, 2);
            uint8_t fl = (uint8_t)take(&in, 1);
            q.write = fl & 1;
            q.ats = fl & 2;
            q.iova = take(&in, 8);
            if (fl & 4)
                q.iova &= 0xFFFFFF; /* mostly low addresses: the tables at PT */
            if (fl & 8) { /* the working devices' pages */
                q.sid &= 1;
                q.iova &= 0xFFFF;
            }
            sh_translate(&sh, &q);
            break;
        }
        case 5:
            vtd_process_queue(v, (unsigned)take(&in, 1));
            break;
        case 6: /* error window */
            sh.fault_clock = ++clk;
            m->flo = take(&in, 3) % MEM_SIZE;
            m->fhi = m->flo + take(&in, 2);
            break;
        case 7:
            if (take(&in, 1) == 0x5A) {
                sh.reg_clock = ++clk;
                sh.npend = 0;
                sh.rta_latched = 0;
                vtd_reset(v);
                regwrite = true;
            }
            break;
        case 8: { /* a descriptor at the software tail, then IQT */
            uint64_t qw0 = take(&in, 8), qw1 = take(&in, 8);
            push_desc(&sh, &tail, qw0, qw1);
            regwrite = true;
            break;
        }
        case 9: /* a word of the working tables */
            put64(m, PT + 8 * (take(&in, 2) % 0x800), take(&in, 8));
            break;
        case 10: { /* a driver's cycle: an IOTLB and a context-cache invalidation of some
                    * granularity, a wait descriptor, run the queue, translate the page */
            uint8_t k = (uint8_t)take(&in, 1);
            uint64_t pg = take(&in, 1) & 0xF, dev = (k >> 5) & 1, did = dev + 1;
            static const uint64_t g[3] = {1, 2, 3};
            uint64_t ig = g[(k & 3) % 3], cg = g[((k >> 2) & 3) % 3];
            push_desc(&sh, &tail, 2 | ig << 4 | did << 16, ig == 3 ? pg << 12 : 0);
            push_desc(&sh, &tail, 1 | cg << 4 | did << 16 | dev << 32, 0);
            push_desc(&sh, &tail, 5, 0);
            h0 = vtd_mmio_read(v, 0x80, 8), t0 = vtd_mmio_read(v, 0x88, 8);
            vtd_process_queue(v, 255);
            check_iqh(&sh, h0, t0);
            check_reg_masks(&sh);
            struct vtd_txn_req q = {.sid = (uint16_t)dev, .iova = pg << 12, .write = k & 0x80};
            sh_translate(&sh, &q);
            regwrite = true;
            break;
        }
        }
        if (!regwrite)
            check_iqh(&sh, h0, t0);
        check_reg_masks(&sh);
    }
    struct vtd_stats st;
    vtd_get_stats(v, &st);
    vtd_destroy(sh.ref);
    vtd_destroy(v);
    return 0;
}
