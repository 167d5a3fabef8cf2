/* smmu_tables.c — test-side builder for the SMMUv3 model (fake memory, STE/CD/page-table writers).
 * Not a driver and not part of the library: linked only into test executables. */
#include "smmu_tables.h"

#include <stdlib.h>
#include <string.h>

int smt_mem_init(struct smt_mem *m, uint64_t base, uint64_t size)
{
    memset(m, 0, sizeof(*m));
    m->buf = calloc(1, size);
    if (!m->buf)
        return -1;
    m->base = base;
    m->size = size;
    m->next = base;
    return 0;
}

void smt_mem_fini(struct smt_mem *m)
{
    free(m->buf);
    m->buf = NULL;
}

uint64_t smt_alloc(struct smt_mem *m, uint64_t size, uint64_t align)
{
    if (align < 8)
        align = 8;
    uint64_t pa = (m->next + align - 1) & ~(align - 1);
    if (pa + size > m->base + m->size)
        abort(); /* a test bug, not a model outcome */
    m->next = pa + size;
    memset(m->buf + (pa - m->base), 0, size);
    return pa;
}

static bool faulted(struct smt_mem *m, uint64_t pa, size_t len, bool wr)
{
    for (unsigned i = 0; i < m->nfault; i++)
        if ((wr ? m->fault[i].wr : m->fault[i].rd) && pa <= m->fault[i].hi &&
            pa + len - 1 >= m->fault[i].lo)
            return true;
    return false;
}

static bool in_range(struct smt_mem *m, uint64_t pa, size_t len)
{
    return pa >= m->base && len <= m->size && pa - m->base <= m->size - len;
}

void smt_w64(struct smt_mem *m, uint64_t pa, uint64_t v)
{
    if (!in_range(m, pa, 8))
        abort();
    for (int i = 0; i < 8; i++)
        m->buf[pa - m->base + (uint64_t)i] = (uint8_t)(v >> (8 * i));
}

uint64_t smt_r64(struct smt_mem *m, uint64_t pa)
{
    if (!in_range(m, pa, 8))
        abort();
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | m->buf[pa - m->base + (uint64_t)i];
    return v;
}

uint32_t smt_r32(struct smt_mem *m, uint64_t pa) { return (uint32_t)smt_r64(m, pa); }

void smt_fault_add(struct smt_mem *m, uint64_t pa, uint64_t len, bool rd, bool wr)
{
    if (m->nfault < SMT_MAX_FAULTS) {
        m->fault[m->nfault].lo = pa;
        m->fault[m->nfault].hi = pa + len - 1;
        m->fault[m->nfault].rd = rd;
        m->fault[m->nfault].wr = wr;
        m->nfault++;
    }
}

void smt_fault_clear(struct smt_mem *m) { m->nfault = 0; }

static int host_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
    struct smt_mem *m = ctx;
    m->reads++;
    if (!in_range(m, pa, len) || faulted(m, pa, len, false))
        return -1;
    memcpy(buf, m->buf + (pa - m->base), len);
    return 0;
}

static int host_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    struct smt_mem *m = ctx;
    m->writes++;
    if (!in_range(m, pa, len) || faulted(m, pa, len, true))
        return -1;
    memcpy(m->buf + (pa - m->base), buf, len);
    return 0;
}

/* CMDQ_CONS now (a lock-free register: callable from inside the model's command processing) */
static uint32_t cmdq_cons_now(struct smt_mem *m)
{
    return m->smmu ? (uint32_t)smmu_mmio_read(m->smmu, SMT_CMDQ_CONS, 4) : 0;
}

/* Called by the model right after it wrote the MSI's data (smmu_msi_write). */
static void host_msi(void *ctx, uint64_t addr, uint32_t data)
{
    struct smt_mem *m = ctx;
    if (m->nmsi < 64) {
        m->msi_addr[m->nmsi] = addr;
        m->msi_data[m->nmsi] = data;
        m->msi_cons[m->nmsi] = cmdq_cons_now(m);
    }
    m->nmsi++;
}

static void host_irq(void *ctx, enum smmu_irq_line line)
{
    struct smt_mem *m = ctx;
    if ((unsigned)line < 8) {
        m->nirq[line]++;
        m->irq_cons[line] = cmdq_cons_now(m);
    }
}

const struct smmu_host_ops smt_host_ops = {
    .mem_read = host_read, .mem_write = host_write, .msi = host_msi, .irq = host_irq,
};

/* ---- STE (IHI 0070 §5.2) ------------------------------------------------------------------------ */
void smt_ste_s1(struct smt_ste *ste, uint64_t ctxptr)
{
    memset(ste, 0, sizeof(*ste));
    ste->v = true;
    ste->config = 5;
    ste->ctxptr = ctxptr;
}

void smt_ste_write(struct smt_mem *m, uint64_t pa, const struct smt_ste *ste)
{
    uint64_t d0 = (uint64_t)ste->v | ((uint64_t)(ste->config & 7) << 1) |
                  ((uint64_t)(ste->s1fmt & 3) << 4) | (ste->ctxptr & 0x000FFFFFFFFFFFC0ULL) |
                  ((uint64_t)(ste->s1cdmax & 31) << 59);
    uint64_t d1 = (uint64_t)(ste->s1dss & 3) | ((uint64_t)ste->s1stalld << 27) |
                  ((uint64_t)(ste->strw & 3) << 30) | ((uint64_t)(ste->privcfg & 3) << 48) |
                  ((uint64_t)(ste->instcfg & 3) << 50);
    smt_w64(m, pa, d0);
    smt_w64(m, pa + 8, d1);
    for (int i = 2; i < 8; i++)
        smt_w64(m, pa + 8 * (uint64_t)i, 0);
}

/* ---- CD (IHI 0070 §5.4) ------------------------------------------------------------------------- */
void smt_cd_init(struct smt_cd *cd, uint64_t ttb0, unsigned t0sz, unsigned tg0)
{
    memset(cd, 0, sizeof(*cd));
    cd->v = cd->aa64 = cd->a = cd->r = cd->epd1 = true;
    cd->ttb0 = ttb0;
    cd->t0sz = t0sz;
    cd->tg0 = tg0;
    cd->ips = 5;
    cd->asid = 1;
    cd->mair = 0x0004FF44ULL;
}

void smt_cd_write(struct smt_mem *m, uint64_t pa, const struct smt_cd *cd)
{
    uint64_t d0 = (uint64_t)(cd->t0sz & 63) | ((uint64_t)(cd->tg0 & 3) << 6) |
                  ((uint64_t)cd->epd0 << 14) | ((uint64_t)cd->endi << 15) |
                  ((uint64_t)(cd->t1sz & 63) << 16) | ((uint64_t)(cd->tg1 & 3) << 22) |
                  ((uint64_t)cd->epd1 << 30) | ((uint64_t)cd->v << 31) |
                  ((uint64_t)(cd->ips & 7) << 32) | ((uint64_t)cd->affd << 35) |
                  ((uint64_t)cd->wxn << 36) | ((uint64_t)cd->tbi0 << 38) |
                  ((uint64_t)cd->tbi1 << 39) | ((uint64_t)cd->pan << 40) |
                  ((uint64_t)cd->aa64 << 41) | ((uint64_t)cd->hd << 42) | ((uint64_t)cd->ha << 43) |
                  ((uint64_t)cd->s << 44) | ((uint64_t)cd->r << 45) | ((uint64_t)cd->a << 46) |
                  ((uint64_t)cd->asid << 48);
    smt_w64(m, pa, d0);
    smt_w64(m, pa + 8, (cd->ttb0 & 0x000FFFFFFFFFFFF0ULL) | ((uint64_t)cd->had0 << 1));
    smt_w64(m, pa + 16, cd->ttb1 & 0x000FFFFFFFFFFFF0ULL);
    smt_w64(m, pa + 24, cd->mair);
    for (int i = 4; i < 8; i++)
        smt_w64(m, pa + 8 * (uint64_t)i, 0);
}

/* ---- VMSAv8-64 page tables (Arm ARM D8) ------------------------------------------------------- */
static unsigned lvl_shift(unsigned p, unsigned l) { return p + (p - 3) * (3 - l); }

unsigned smt_tg0(unsigned pshift) { return pshift == 12 ? 0 : pshift == 16 ? 1 : 2; }

void smt_pt_init(struct smt_pt *pt, struct smt_mem *m, unsigned pshift, unsigned ias)
{
    pt->m = m;
    pt->pshift = pshift;
    pt->ias = ias;
    pt->start = 3 - (ias - 1 - pshift) / (pshift - 3);
    uint64_t bytes = 8ULL << (ias - lvl_shift(pshift, pt->start));
    if (bytes < 64)
        bytes = 64;
    pt->root = smt_alloc(m, bytes, bytes);
}

static uint64_t table_at(struct smt_pt *pt, uint64_t va, unsigned level, bool create)
{
    unsigned p = pt->pshift;
    uint64_t table = pt->root;
    for (unsigned l = pt->start; l < level; l++) {
        unsigned sh = lvl_shift(p, l);
        unsigned bits = l == pt->start ? pt->ias - sh : p - 3;
        uint64_t da = table + ((va >> sh) & ((1ULL << bits) - 1)) * 8;
        uint64_t d = smt_r64(pt->m, da);
        if (!(d & 1)) {
            if (!create)
                return 0;
            uint64_t nt = smt_alloc(pt->m, 1ULL << p, 1ULL << p);
            d = nt | 3;
            smt_w64(pt->m, da, d);
        }
        table = d & 0x0000FFFFFFFFF000ULL & ~((1ULL << p) - 1);
    }
    return table;
}

uint64_t smt_pt_desc_addr(struct smt_pt *pt, uint64_t va, unsigned level)
{
    uint64_t table = table_at(pt, va, level, false);
    unsigned sh = lvl_shift(pt->pshift, level);
    unsigned bits = level == pt->start ? pt->ias - sh : pt->pshift - 3;
    return table + ((va >> sh) & ((1ULL << bits) - 1)) * 8;
}

uint64_t smt_pt_map(struct smt_pt *pt, uint64_t va, uint64_t pa, unsigned level, uint64_t attrs)
{
    uint64_t table = table_at(pt, va, level, true);
    unsigned sh = lvl_shift(pt->pshift, level);
    unsigned bits = level == pt->start ? pt->ias - sh : pt->pshift - 3;
    uint64_t da = table + ((va >> sh) & ((1ULL << bits) - 1)) * 8;
    uint64_t oa = pa & 0x0000FFFFFFFFFFFFULL & ~((1ULL << sh) - 1);
    smt_w64(pt->m, da, oa | attrs | (level == 3 ? 3 : 1));
    return da;
}

/* ---- bring-up -------------------------------------------------------------------------------------- */
uint64_t smt_rd(struct smt_env *e, uint64_t off) { return smmu_mmio_read(e->smmu, off, 4); }
void smt_wr(struct smt_env *e, uint64_t off, uint64_t v) { smmu_mmio_write(e->smmu, off, v, 4); }

int smt_env_init(struct smt_env *e, const struct smmu_config *cfg, unsigned sid_bits)
{
    memset(e, 0, sizeof(*e));
    if (cfg) {
        e->cfg = *cfg;
    } else {
        smmu_config_default(&e->cfg);
        e->cfg.thread_safe = false;
    }
    if (smt_mem_init(&e->mem, 0x40000000ULL, 32ULL << 20))
        return -1;
    if (smmu_create(&e->smmu, &e->cfg, &smt_host_ops, &e->mem, NULL))
        return -1;
    e->sid_bits = sid_bits;
    e->cmdq_log2 = 8;
    e->evtq_log2 = 6;
    e->strtab = smt_alloc(&e->mem, 64ULL << sid_bits, 64ULL << sid_bits);
    e->cmdq = smt_alloc(&e->mem, 16ULL << e->cmdq_log2, 16ULL << e->cmdq_log2);
    e->evtq = smt_alloc(&e->mem, 32ULL << e->evtq_log2, 32ULL << e->evtq_log2);
    smmu_mmio_write(e->smmu, SMT_STRTAB_BASE, e->strtab, 8);
    smt_wr(e, SMT_STRTAB_BASE_CFG, sid_bits); /* FMT linear, LOG2SIZE */
    smmu_mmio_write(e->smmu, SMT_CMDQ_BASE, e->cmdq | e->cmdq_log2, 8);
    smt_wr(e, SMT_CMDQ_PROD, 0);
    smt_wr(e, SMT_CMDQ_CONS, 0);
    smmu_mmio_write(e->smmu, SMT_EVENTQ_BASE, e->evtq | e->evtq_log2, 8);
    smt_wr(e, SMT_EVENTQ_PROD, 0);
    smt_wr(e, SMT_EVENTQ_CONS, 0);
    smt_wr(e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    return 0;
}

void smt_env_fini(struct smt_env *e)
{
    smmu_destroy(e->smmu);
    smt_mem_fini(&e->mem);
}

void smt_cmd(struct smt_env *e, uint64_t d0, uint64_t d1)
{
    uint32_t mask = (1u << e->cmdq_log2) - 1;
    uint64_t slot = e->cmdq + (uint64_t)(e->prod & mask) * 16;
    smt_w64(&e->mem, slot, d0);
    smt_w64(&e->mem, slot + 8, d1);
    e->prod = (e->prod + 1) & ((2u << e->cmdq_log2) - 1);
    smt_wr(e, SMT_CMDQ_PROD, e->prod);
}

unsigned smt_run(struct smt_env *e) { return smmu_process_commands(e->smmu, 1000); }

int smt_evt_pop(struct smt_env *e, uint64_t rec[4])
{
    uint32_t prod = (uint32_t)smt_rd(e, SMT_EVENTQ_PROD);
    uint32_t wrapmask = (2u << e->evtq_log2) - 1;
    if ((prod & wrapmask) == (e->evcons & wrapmask))
        return 0;
    uint64_t slot = e->evtq + (uint64_t)(e->evcons & ((1u << e->evtq_log2) - 1)) * 32;
    for (int i = 0; i < 4; i++)
        rec[i] = smt_r64(&e->mem, slot + 8 * (uint64_t)i);
    e->evcons = ((e->evcons + 1) & wrapmask) | (prod & 0x80000000u);
    smt_wr(e, SMT_EVENTQ_CONS, e->evcons);
    return 1;
}

void smt_ste_at(struct smt_env *e, uint32_t sid, const struct smt_ste *ste)
{
    smt_ste_write(&e->mem, e->strtab + (uint64_t)sid * 64, ste);
}

void smt_simple_stream(struct smt_env *e, uint32_t sid, struct smt_pt *pt, struct smt_cd *cd,
                       uint64_t *cd_pa)
{
    smt_pt_init(pt, &e->mem, 12, 48);
    uint64_t cdp = smt_alloc(&e->mem, 64, 64);
    smt_cd_init(cd, pt->root, 16, 0);
    smt_cd_write(&e->mem, cdp, cd);
    struct smt_ste ste;
    smt_ste_s1(&ste, cdp);
    smt_ste_at(e, sid, &ste);
    if (cd_pa)
        *cd_pa = cdp;
}

void smt_translate(struct smt_env *e, uint32_t sid, uint64_t iova, bool write,
                   struct smmu_txn_rsp *rsp)
{
    struct smmu_txn_req req = {.sid = sid, .iova = iova, .write = write, .priv = false};
    smmu_translate(e->smmu, &req, rsp);
}
