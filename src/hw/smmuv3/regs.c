/* regs.c — the SMMUv3 register file: ID registers from the config, reset values, MMIO decode and
 * the access rules of each register (IHI 0070 chapter 6). Not the queues' processing logic. */
#include "iommulab/tegra241_cmdqv.h"
#include "smmuv3_internal.h"

static uint32_t oas_encoding(unsigned bits)
{
    switch (bits) {
    case 32: return 0;
    case 36: return 1;
    case 40: return 2;
    case 42: return 3;
    case 44: return 4;
    case 48: return 5;
    default: return 6; /* 52 */
    }
}

void smmu_regs_compute_idr(struct smmu *s)
{
    const struct smmu_config *c = &s->cfg;
    /* IDR0 (§6.3.1): S1P only, TTF = AArch64, no HTTU/BTM/PRI/ATOS, STALL_MODEL = 0b01 (no
     * stall), ST_LEVEL = 2-level when supported. */
    s->idr[0] = (1u << 1) | (2u << 2) | ((uint32_t)c->coherent << 4) | ((uint32_t)c->hyp << 9) |
                ((uint32_t)c->ats << 10) | ((uint32_t)c->asid16 << 12) |
                ((uint32_t)c->msi << 13) | ((uint32_t)c->sev << 14) |
                ((uint32_t)c->vmid16 << 18) | ((uint32_t)c->cd2l << 19) |
                ((uint32_t)(c->ttendian & 3) << 21) | (1u << 24) |
                ((uint32_t)c->term_model << 26) | ((uint32_t)c->strtab_2lvl << 27);
    /* IDR1 (§6.3.2): SIDSIZE [5:0], SSIDSIZE [10:6], EVENTQS [20:16], CMDQS [25:21]. */
    s->idr[1] = (uint32_t)(c->sidsize & 0x3F) | ((uint32_t)(c->ssidsize & 0x1F) << 6) |
                ((uint32_t)(c->eventqs & 0x1F) << 16) | ((uint32_t)(c->cmdqs & 0x1F) << 21) |
                (c->ecmdq_count ? (uint32_t)IDR1_ECMDQ : 0) |
                ((uint32_t)c->attr_perms_ovr << 26); /* ATTR_PERMS_OVR */
    /* IDR6 (offset 0x190, §3.5.6): CMDQ_CONTROL_PAGE_LOG2NUMP [27:24], LOG2NUMQ [19:16]. Up to
     * 256 queues share one control page; more queues use more pages of 256. RES0 without
     * IDR1.ECMDQ. */
    s->ecmdq_log2numq = s->ecmdq_log2nump = 0;
    s->mmio_size = SMMU_MMIO_SIZE;
    s->idr6 = 0;
    if (c->ecmdq_count) {
        unsigned l = 0;
        while ((1u << l) < c->ecmdq_count)
            l++;
        s->ecmdq_log2numq = l > 8 ? 8 : l;
        s->ecmdq_log2nump = l - s->ecmdq_log2numq;
        s->idr6 = ((uint32_t)s->ecmdq_log2nump << 24) | ((uint32_t)s->ecmdq_log2numq << 16);
        s->mmio_size = SMMU_ECMDQ_CP_OFFSET + ((uint64_t)SMMU_ECMDQ_CP_SIZE << s->ecmdq_log2nump);
    }
    /* The Tegra241 CMDQV window takes the ECMDQ control pages' place (cmdqv.c). */
    if (c->cmdqv_vcmdqs)
        s->mmio_size = SMMU_ECMDQ_CP_OFFSET + CMDQV_WINDOW_SIZE(c->cmdqv_vintfs);
    s->idr[2] = 0;
    /* IDR3 (§6.3.4): HAD bit 2, FWB bit 8, RIL bit 10, BBML [12:11], E0PD bit 13. From v3.2
     * FWB is 1 and BBML is level 1 or 2: the model never raises a TLB conflict (an overlapping
     * pair of entries yields one of them), which is level 2. From v3.3 E0PD is 1 (CD.E0PDx). */
    s->idr[3] = ((uint32_t)c->had << 2) | ((uint32_t)c->ril << 10);
    if (c->arch_minor >= 2)
        s->idr[3] |= (1u << 8) | (2u << 11);
    if (c->arch_minor >= 3)
        s->idr[3] |= 1u << 13;
    s->idr[4] = 0;
    /* IDR5 (§6.3.6): OAS [2:0], GRAN4K bit 4, GRAN16K bit 5, GRAN64K bit 6. */
    s->idr[5] = oas_encoding(c->oas) | ((uint32_t)c->gran4k << 4) | ((uint32_t)c->gran16k << 5) |
                ((uint32_t)c->gran64k << 6);
    s->iidr = c->iidr;
    s->aidr = c->arch_minor & 0xF; /* ArchMajorRev 0 = SMMUv3, ArchMinorRev = .x */
}

void smmu_regs_reset(struct smmu *s)
{
    s->cr0 = s->cr1 = s->cr2 = 0;
    /* GBPA resets with SHCFG = 0b01 (use incoming) and ABORT as the implementation chose. */
    s->gbpa = 0x1000u | (s->cfg.gbpa_abort_at_reset ? (uint32_t)GBPA_ABORT : 0);
    s->irq_ctrl = 0;
    s->gerror = s->gerrorn = 0;
    s->gerror_irq_cfg0 = 0;
    s->gerror_irq_cfg1 = s->gerror_irq_cfg2 = 0;
    s->strtab_base = 0;
    s->strtab_base_cfg = 0;
    s->eventq_base = 0;
    atomic_store(&s->eventq_prod, 0);
    atomic_store(&s->eventq_cons, 0);
    s->eventq_irq_cfg0 = 0;
    s->eventq_irq_cfg1 = s->eventq_irq_cfg2 = 0;
    smmu_cmdq_reset(s);
    smmu_cmdqv_reset(s);
}

static inline uint32_t lo32(uint64_t v) { return (uint32_t)v; }
static inline uint32_t hi32(uint64_t v) { return (uint32_t)(v >> 32); }
/* *_BASE.ADDR bits above IDR5.OAS are RES0 and need not be stored (§6.3.24, 26, 29): this model
 * does not store them, so they read as zero and never reach an access. */
static inline uint64_t below_oas(const struct smmu *s, uint64_t mask)
{
    return (mask & ~(~0ULL << s->cfg.oas)) | (mask & BIT64(62));
}

static inline void set_half(uint64_t *r, bool high, uint32_t v, uint64_t mask)
{
    uint64_t n = high ? ((*r & 0xFFFFFFFFULL) | ((uint64_t)v << 32)) : ((*r & ~0xFFFFFFFFULL) | v);
    *r = n & mask;
}

/* ---- ECMDQ control pages (§6.2.5) -------------------------------------------------------------
 * Control page p sits at SMMU_ECMDQ_CP_OFFSET + 64K * p; its queues are spaced 64K >> LOG2NUMQ
 * apart, and queue i of page p is ECMDQ p * 2^LOG2NUMQ + i (model index 1 + that). */
static struct smmu_cmdq *ecmdq_at(struct smmu *s, uint64_t off, unsigned *reg)
{
    if (!s->cfg.ecmdq_count || off < SMMU_ECMDQ_CP_OFFSET || off >= s->mmio_size)
        return NULL;
    uint64_t rel = off - SMMU_ECMDQ_CP_OFFSET;
    unsigned page = (unsigned)(rel >> 16);
    unsigned in_page = (unsigned)(rel & 0xFFFF);
    unsigned shift = 16 - s->ecmdq_log2numq;
    unsigned n = (page << s->ecmdq_log2numq) + (in_page >> shift);
    if (n >= s->ncmdq - 1)
        return NULL;
    *reg = in_page & ((1u << shift) - 1);
    return &s->cmdq[1 + n];
}

uint64_t smmu_mmio_size(const struct smmu *s) { return s->mmio_size; }

uint64_t smmu_ecmdq_offset(const struct smmu *s, unsigned n)
{
    if (n >= s->cfg.ecmdq_count)
        return 0;
    unsigned page = n >> s->ecmdq_log2numq, i = n & ((1u << s->ecmdq_log2numq) - 1);
    return SMMU_ECMDQ_CP_OFFSET + (uint64_t)SMMU_ECMDQ_CP_SIZE * page +
           ((uint64_t)i << (16 - s->ecmdq_log2numq));
}

static bool ecmdq_disabled(const struct smmu_cmdq *q)
{
    return !(atomic_load_explicit(&q->prod, memory_order_relaxed) & ECMDQ_PROD_EN) &&
           !(atomic_load_explicit(&q->cons, memory_order_relaxed) & ECMDQ_CONS_ENACK);
}

static uint32_t ecmdq_read(struct smmu_cmdq *q, unsigned reg)
{
    switch (reg) {
    case SMMU_ECMDQ_REG_BASE: return lo32(q->base);
    case SMMU_ECMDQ_REG_BASE + 4: return hi32(q->base);
    case SMMU_ECMDQ_REG_PROD: return atomic_load_explicit(&q->prod, memory_order_acquire);
    case SMMU_ECMDQ_REG_CONS: return atomic_load_explicit(&q->cons, memory_order_acquire);
    default: return 0;
    }
}

/* PROD is RW in both steady states (§6.3.108); enables are acknowledged at once, as CR0ACK is,
 * so ENACK follows EN within the write. Disabling stops consumption with CONS stable. */
static void ecmdq_write_prod(struct smmu *s, struct smmu_cmdq *q, uint32_t v)
{
    v &= (uint32_t)(ECMDQ_PROD_EN | ECMDQ_PROD_ERRACK) | Q_IDX_MASK;
    uint32_t old = atomic_load_explicit(&q->prod, memory_order_relaxed);
    atomic_store_explicit(&q->prod, v, memory_order_release);
    if ((old ^ v) & ECMDQ_PROD_EN) {
        uint32_t c = atomic_load_explicit(&q->cons, memory_order_relaxed);
        c = (v & ECMDQ_PROD_EN) ? (c | (uint32_t)ECMDQ_CONS_ENACK) : (c & ~(uint32_t)ECMDQ_CONS_ENACK);
        atomic_store_explicit(&q->cons, c, memory_order_release);
        smmu_trace(s, "ecmdq_en", q->index, !!(v & ECMDQ_PROD_EN));
    }
}

static void ecmdq_write(struct smmu *s, struct smmu_cmdq *q, unsigned reg, uint32_t v)
{
    switch (reg) {
    case SMMU_ECMDQ_REG_BASE:
    case SMMU_ECMDQ_REG_BASE + 4:
        if (ecmdq_disabled(q)) /* RO unless EN == ENACK == 0 (§6.3.107) */
            set_half(&q->base, reg & 4, v,
                     below_oas(s, Q_BASE_RWA | Q_BASE_ADDR_MASK | Q_BASE_LOG2SIZE_MASK));
        break;
    case SMMU_ECMDQ_REG_PROD:
        ecmdq_write_prod(s, q, v);
        smmu_cmdq_kick(s, q->index);
        break;
    case SMMU_ECMDQ_REG_CONS:
        if (ecmdq_disabled(q)) /* RD, ERR, ERR_REASON; ENACK is the SMMU's */
            atomic_store_explicit(&q->cons,
                                  v & (Q_IDX_MASK | (uint32_t)ECMDQ_CONS_ERR | ECMDQ_CONS_REASON_MASK),
                                  memory_order_release);
        break;
    default:
        break;
    }
}

/* Page-0 ECMDQ description registers: IDR6 and the CMDQ_CONTROL_PAGE_{BASE,CFG,STATUS}n. */
static uint32_t ecmdq_page0_read(const struct smmu *s, uint64_t off)
{
    if (!s->cfg.ecmdq_count)
        return 0; /* IDR6 and the control-page registers are RES0 without IDR1.ECMDQ */
    if (off == SMMU_REG_IDR6)
        return s->idr6;
    uint64_t rel = off - SMMU_REG_CMDQ_CP_BASE;
    unsigned n = (unsigned)(rel / SMMU_CMDQ_CP_REG_STRIDE), r = (unsigned)(rel % SMMU_CMDQ_CP_REG_STRIDE);
    if (n >= (1u << s->ecmdq_log2nump))
        return 0;
    uint64_t base = (SMMU_ECMDQ_CP_OFFSET + (uint64_t)SMMU_ECMDQ_CP_SIZE * n) | CMDQ_CP_CMDQGS_64K |
                    CMDQ_CP_PRESET; /* ADDR [55:16] is an offset from page 0 (§6.3.49) */
    switch (r) {
    case 0: return lo32(base);
    case 4: return hi32(base);
    case 8: return 1;  /* CFG.EN, RES1 */
    case 12: return 1; /* STATUS.ENACK, RES1 */
    default: return 0;
    }
}

static bool ecmdq_page0_reg(uint64_t off)
{
    return off == SMMU_REG_IDR6 ||
           (off >= SMMU_REG_CMDQ_CP_BASE && off < SMMU_REG_CMDQ_CP_BASE + 256 * SMMU_CMDQ_CP_REG_STRIDE);
}


static bool lockfree_reg(uint64_t off)
{
    return off == SMMU_REG_CMDQ_PROD || off == SMMU_REG_CMDQ_CONS ||
           off == SMMU_REG_EVENTQ_PROD || off == SMMU_REG_EVENTQ_CONS;
}

/* GERRORN keeps only GERROR's defined fields: the MSI_*_ABT_ERR bits need IDR0.MSI, CMDQP_ERR
 * IDR1.ECMDQ; otherwise they are RES0 (§6.3.20). */
static uint32_t gerror_fields(const struct smmu *s)
{
    uint32_t f = (uint32_t)GERROR_IMPLEMENTED;
    if (!s->cfg.msi)
        f &= ~(uint32_t)(GERROR_MSI_CMDQ_ABT_ERR | GERROR_MSI_EVENTQ_ABT_ERR |
                         GERROR_MSI_GERROR_ABT_ERR);
    if (s->cfg.ecmdq_count)
        f |= (uint32_t)GERROR_CMDQP_ERR;
    return f;
}

static uint32_t read32(struct smmu *s, uint64_t off)
{
    const bool msi = s->cfg.msi;
    unsigned ereg;
    if (smmu_cmdqv_window(s, off))
        return smmu_cmdqv_read(s, off);
    struct smmu_cmdq *eq = ecmdq_at(s, off, &ereg);
    if (eq)
        return ecmdq_read(eq, ereg);
    if (ecmdq_page0_reg(off))
        return ecmdq_page0_read(s, off);
    switch (off) {
    case SMMU_REG_IDR0: return s->idr[0];
    case SMMU_REG_IDR1: return s->idr[1];
    case SMMU_REG_IDR2: return s->idr[2];
    case SMMU_REG_IDR3: return s->idr[3];
    case SMMU_REG_IDR4: return s->idr[4];
    case SMMU_REG_IDR5: return s->idr[5];
    case SMMU_REG_IIDR: return s->iidr;
    case SMMU_REG_AIDR: return s->aidr;
    case SMMU_REG_CR0:
    case SMMU_REG_CR0ACK: return s->cr0; /* updates complete instantly */
    case SMMU_REG_CR1: return s->cr1;
    case SMMU_REG_CR2: return s->cr2;
    case SMMU_REG_GBPA: return s->gbpa; /* UPDATE reads 0: the update has completed */
    case SMMU_REG_IRQ_CTRL:
    case SMMU_REG_IRQ_CTRLACK: return s->irq_ctrl;
    case SMMU_REG_GERROR: return s->gerror;
    case SMMU_REG_GERRORN: return s->gerrorn;
    case SMMU_REG_GERROR_IRQ_CFG0: return msi ? lo32(s->gerror_irq_cfg0) : 0;
    case SMMU_REG_GERROR_IRQ_CFG0 + 4: return msi ? hi32(s->gerror_irq_cfg0) : 0;
    case SMMU_REG_GERROR_IRQ_CFG1: return msi ? s->gerror_irq_cfg1 : 0;
    case SMMU_REG_GERROR_IRQ_CFG2: return msi ? s->gerror_irq_cfg2 : 0;
    case SMMU_REG_STRTAB_BASE: return lo32(s->strtab_base);
    case SMMU_REG_STRTAB_BASE + 4: return hi32(s->strtab_base);
    case SMMU_REG_STRTAB_BASE_CFG: return s->strtab_base_cfg;
    case SMMU_REG_CMDQ_BASE: return lo32(s->cmdq[0].base);
    case SMMU_REG_CMDQ_BASE + 4: return hi32(s->cmdq[0].base);
    case SMMU_REG_CMDQ_PROD: return atomic_load_explicit(&s->cmdq[0].prod, memory_order_acquire);
    case SMMU_REG_CMDQ_CONS: return atomic_load_explicit(&s->cmdq[0].cons, memory_order_acquire);
    case SMMU_REG_EVENTQ_BASE: return lo32(s->eventq_base);
    case SMMU_REG_EVENTQ_BASE + 4: return hi32(s->eventq_base);
    case SMMU_REG_EVENTQ_IRQ_CFG0: return msi ? lo32(s->eventq_irq_cfg0) : 0;
    case SMMU_REG_EVENTQ_IRQ_CFG0 + 4: return msi ? hi32(s->eventq_irq_cfg0) : 0;
    case SMMU_REG_EVENTQ_IRQ_CFG1: return msi ? s->eventq_irq_cfg1 : 0;
    case SMMU_REG_EVENTQ_IRQ_CFG2: return msi ? s->eventq_irq_cfg2 : 0;
    case SMMU_REG_EVENTQ_PROD: return atomic_load_explicit(&s->eventq_prod, memory_order_acquire);
    case SMMU_REG_EVENTQ_CONS: return atomic_load_explicit(&s->eventq_cons, memory_order_acquire);
    default: return 0; /* STATUSR, AGBPA, PRIQ_*, GATOS_*, unknown: RAZ */
    }
}

/* The *_IRQ_CFGn registers exist only with IDR0.MSI and are guarded by their source's
 * IRQ_CTRL.*_IRQEN (IRQ_CTRLACK is the same field here). From SMMUv3.2 a write while the enable
 * is 1 is IGNORED (§6.3.21-23, §6.3.30-32); in v3.0/v3.1 it is CONSTRAINED UNPREDICTABLE and
 * this model takes the written value, one of the permitted behaviours. */
static bool irq_cfg_writable(const struct smmu *s, uint64_t irqen)
{
    return s->cfg.msi && (s->cfg.arch_minor < 2 || !(s->irq_ctrl & irqen));
}

static void write32(struct smmu *s, uint64_t off, uint32_t v)
{
    const bool smmuen = s->cr0 & CR0_SMMUEN;
    const bool gerror_cfg = irq_cfg_writable(s, IRQ_CTRL_GERROR_IRQEN);
    const bool eventq_cfg = irq_cfg_writable(s, IRQ_CTRL_EVENTQ_IRQEN);
    unsigned ereg;
    if (smmu_cmdqv_window(s, off)) {
        smmu_cmdqv_write(s, off, v);
        return;
    }
    struct smmu_cmdq *eq = ecmdq_at(s, off, &ereg);
    if (eq) {
        ecmdq_write(s, eq, ereg, v);
        return;
    }
    switch (off) {
    case SMMU_REG_CR0: {
        uint32_t mask = (uint32_t)(CR0_SMMUEN | CR0_EVENTQEN | CR0_CMDQEN);
        if (s->cfg.ats)
            mask |= (uint32_t)CR0_ATSCHK;
        s->cr0 = v & mask;
        smmu_trace(s, "cr0", s->cr0, 0);
        break;
    }
    case SMMU_REG_CR1:
        /* Table/queue attributes may only change while everything using them is off, ECMDQs
         * included (§3.5.6.1). */
        if (!(s->cr0 & (CR0_SMMUEN | CR0_EVENTQEN | CR0_CMDQEN)) && !smmu_ecmdq_any_enabled(s))
            s->cr1 = v & 0xFFFu;
        break;
    case SMMU_REG_CR2:
        if (!smmuen)
            s->cr2 = v & (uint32_t)(CR2_RECINVSID | (s->cfg.hyp ? CR2_E2H : 0));
        break;
    case SMMU_REG_GBPA:
        if (v & GBPA_UPDATE) /* a write without UPDATE has no effect (§6.3.14) */
            s->gbpa = v & (uint32_t)GBPA_FIELDS;
        break;
    case SMMU_REG_IRQ_CTRL:
        s->irq_ctrl = v & (uint32_t)(IRQ_CTRL_GERROR_IRQEN | IRQ_CTRL_EVENTQ_IRQEN);
        break;
    case SMMU_REG_GERRORN:
        s->gerrorn = v & gerror_fields(s);
        break;
    case SMMU_REG_GERROR_IRQ_CFG0:
    case SMMU_REG_GERROR_IRQ_CFG0 + 4:
        if (gerror_cfg)
            set_half(&s->gerror_irq_cfg0, off & 4, v, IRQ_CFG0_ADDR_MASK);
        break;
    case SMMU_REG_GERROR_IRQ_CFG1:
        if (gerror_cfg)
            s->gerror_irq_cfg1 = v;
        break;
    case SMMU_REG_GERROR_IRQ_CFG2:
        if (gerror_cfg)
            s->gerror_irq_cfg2 = v & 0x3Fu;
        break;
    case SMMU_REG_STRTAB_BASE:
    case SMMU_REG_STRTAB_BASE + 4:
        if (!smmuen) /* CONSTRAINED UNPREDICTABLE while enabled: this model ignores it */
            set_half(&s->strtab_base, off & 4, v, below_oas(s, STRTAB_BASE_MASK));
        break;
    case SMMU_REG_STRTAB_BASE_CFG:
        if (!smmuen)
            s->strtab_base_cfg = v & (uint32_t)(GENMASK64(17, 16) | GENMASK64(10, 0));
        break;
    case SMMU_REG_CMDQ_BASE:
    case SMMU_REG_CMDQ_BASE + 4:
        if (!(s->cr0 & CR0_CMDQEN))
            set_half(&s->cmdq[0].base, off & 4, v,
                     below_oas(s, Q_BASE_RWA | Q_BASE_ADDR_MASK | Q_BASE_LOG2SIZE_MASK));
        break;
    case SMMU_REG_CMDQ_PROD:
        atomic_store_explicit(&s->cmdq[0].prod, v & Q_IDX_MASK, memory_order_release);
        break;
    case SMMU_REG_CMDQ_CONS:
        if (!(s->cr0 & CR0_CMDQEN)) /* RO while the queue is enabled */
            atomic_store_explicit(&s->cmdq[0].cons, v & (Q_IDX_MASK | CMDQ_CONS_ERR_MASK),
                                  memory_order_release);
        break;
    case SMMU_REG_EVENTQ_BASE:
    case SMMU_REG_EVENTQ_BASE + 4:
        if (!(s->cr0 & CR0_EVENTQEN))
            set_half(&s->eventq_base, off & 4, v,
                     below_oas(s, Q_BASE_RWA | Q_BASE_ADDR_MASK | Q_BASE_LOG2SIZE_MASK));
        break;
    case SMMU_REG_EVENTQ_IRQ_CFG0:
    case SMMU_REG_EVENTQ_IRQ_CFG0 + 4:
        if (eventq_cfg)
            set_half(&s->eventq_irq_cfg0, off & 4, v, IRQ_CFG0_ADDR_MASK);
        break;
    case SMMU_REG_EVENTQ_IRQ_CFG1:
        if (eventq_cfg)
            s->eventq_irq_cfg1 = v;
        break;
    case SMMU_REG_EVENTQ_IRQ_CFG2:
        if (eventq_cfg)
            s->eventq_irq_cfg2 = v & 0x3Fu;
        break;
    case SMMU_REG_EVENTQ_PROD:
        if (!(s->cr0 & CR0_EVENTQEN)) /* the SMMU owns PROD while the queue is enabled */
            atomic_store_explicit(&s->eventq_prod, v & (Q_IDX_MASK | (uint32_t)Q_OVF),
                                  memory_order_release);
        break;
    case SMMU_REG_EVENTQ_CONS:
        atomic_store_explicit(&s->eventq_cons, v & (Q_IDX_MASK | (uint32_t)Q_OVF),
                              memory_order_release);
        break;
    default:
        break; /* read-only or unknown: WI */
    }
}

static bool access_ok(const struct smmu *s, uint64_t off, unsigned size)
{
    return (size == 4 || size == 8) && !(off & (size - 1)) && off < s->mmio_size;
}

uint64_t smmu_mmio_read(struct smmu *s, uint64_t off, unsigned size)
{
    if (!access_ok(s, off, size))
        return 0;
    if (size == 4 && lockfree_reg(off))
        return read32(s, off);
    unsigned ereg;
    struct smmu_cmdq *eq;
    if (size == 4 && (eq = ecmdq_at(s, off, &ereg)) &&
        (ereg == SMMU_ECMDQ_REG_PROD || ereg == SMMU_ECMDQ_REG_CONS))
        return ecmdq_read(eq, ereg); /* polled by drivers: lock-free like CMDQ_CONS */
    if (size == 4 && (eq = smmu_cmdqv_vcmdq_at(s, off, &ereg)) &&
        (ereg == VCMDQ_PROD || ereg == VCMDQ_CONS))
        return ereg == VCMDQ_PROD ? atomic_load_explicit(&eq->prod, memory_order_acquire)
                                  : atomic_load_explicit(&eq->cons, memory_order_acquire);
    smmu_lock(s);
    uint64_t v = read32(s, off);
    if (size == 8)
        v |= (uint64_t)read32(s, off + 4) << 32;
    smmu_unlock(s);
    return v;
}

void smmu_mmio_write(struct smmu *s, uint64_t off, uint64_t value, unsigned size)
{
    if (!access_ok(s, off, size))
        return;
    if (size == 4 && (off == SMMU_REG_CMDQ_PROD || off == SMMU_REG_EVENTQ_CONS)) {
        write32(s, off, (uint32_t)value);
        return;
    }
    /* An ECMDQ_PROD write that keeps EN is a plain release store (the per-CPU fast path);
     * one that flips EN also updates CONS.ENACK, under the lock. */
    unsigned ereg;
    struct smmu_cmdq *eq;
    if (size == 4 && (eq = ecmdq_at(s, off, &ereg)) && ereg == SMMU_ECMDQ_REG_PROD &&
        !((atomic_load_explicit(&eq->prod, memory_order_relaxed) ^ (uint32_t)value) & ECMDQ_PROD_EN)) {
        atomic_store_explicit(&eq->prod,
                              (uint32_t)value & ((uint32_t)(ECMDQ_PROD_EN | ECMDQ_PROD_ERRACK) | Q_IDX_MASK),
                              memory_order_release);
        smmu_cmdq_kick(s, eq->index);
        return;
    }
    /* A VCMDQ's PROD (either aperture) is the same lock-free store. */
    if (size == 4 && (eq = smmu_cmdqv_vcmdq_at(s, off, &ereg)) && ereg == VCMDQ_PROD) {
        atomic_store_explicit(&eq->prod, (uint32_t)value & Q_IDX_MASK, memory_order_release);
        smmu_cmdq_kick(s, eq->index);
        return;
    }
    smmu_lock(s);
    write32(s, off, (uint32_t)value);
    if (size == 8)
        write32(s, off + 4, (uint32_t)(value >> 32));
    smmu_unlock(s);
}
