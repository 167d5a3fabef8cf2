/* regs.c — the SMMUv3 register file: ID registers from the config, reset values, MMIO decode and
 * the access rules of each register (IHI 0070 chapter 6). Not the queues' processing logic. */
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
                ((uint32_t)(c->eventqs & 0x1F) << 16) | ((uint32_t)(c->cmdqs & 0x1F) << 21);
    s->idr[2] = 0;
    /* IDR3 (§6.3.4): HAD bit 2, RIL bit 10. */
    s->idr[3] = ((uint32_t)c->had << 2) | ((uint32_t)c->ril << 10);
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
}

static inline uint32_t lo32(uint64_t v) { return (uint32_t)v; }
static inline uint32_t hi32(uint64_t v) { return (uint32_t)(v >> 32); }
static inline void set_half(uint64_t *r, bool high, uint32_t v, uint64_t mask)
{
    uint64_t n = high ? ((*r & 0xFFFFFFFFULL) | ((uint64_t)v << 32)) : ((*r & ~0xFFFFFFFFULL) | v);
    *r = n & mask;
}

static bool lockfree_reg(uint64_t off)
{
    return off == SMMU_REG_CMDQ_PROD || off == SMMU_REG_CMDQ_CONS ||
           off == SMMU_REG_EVENTQ_PROD || off == SMMU_REG_EVENTQ_CONS;
}

static uint32_t read32(struct smmu *s, uint64_t off)
{
    const bool msi = s->cfg.msi;
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
    default: return 0; /* STATUSR, AGBPA, PRIQ_*, GATOS_*, IDR6, unknown: RAZ */
    }
}

static void write32(struct smmu *s, uint64_t off, uint32_t v)
{
    const bool smmuen = s->cr0 & CR0_SMMUEN;
    const bool msi = s->cfg.msi;
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
        /* Table/queue attributes may only change while everything using them is off. */
        if (!(s->cr0 & (CR0_SMMUEN | CR0_EVENTQEN | CR0_CMDQEN)))
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
        s->gerrorn = v & (uint32_t)GERROR_IMPLEMENTED;
        break;
    case SMMU_REG_GERROR_IRQ_CFG0:
    case SMMU_REG_GERROR_IRQ_CFG0 + 4:
        if (msi)
            set_half(&s->gerror_irq_cfg0, off & 4, v, IRQ_CFG0_ADDR_MASK);
        break;
    case SMMU_REG_GERROR_IRQ_CFG1:
        if (msi)
            s->gerror_irq_cfg1 = v;
        break;
    case SMMU_REG_GERROR_IRQ_CFG2:
        if (msi)
            s->gerror_irq_cfg2 = v & 0x3Fu;
        break;
    case SMMU_REG_STRTAB_BASE:
    case SMMU_REG_STRTAB_BASE + 4:
        if (!smmuen) /* CONSTRAINED UNPREDICTABLE while enabled: this model ignores it */
            set_half(&s->strtab_base, off & 4, v, STRTAB_BASE_MASK);
        break;
    case SMMU_REG_STRTAB_BASE_CFG:
        if (!smmuen)
            s->strtab_base_cfg = v & (uint32_t)(GENMASK64(17, 16) | GENMASK64(10, 0));
        break;
    case SMMU_REG_CMDQ_BASE:
    case SMMU_REG_CMDQ_BASE + 4:
        if (!(s->cr0 & CR0_CMDQEN))
            set_half(&s->cmdq[0].base, off & 4, v,
                     Q_BASE_RWA | Q_BASE_ADDR_MASK | Q_BASE_LOG2SIZE_MASK);
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
                     Q_BASE_RWA | Q_BASE_ADDR_MASK | Q_BASE_LOG2SIZE_MASK);
        break;
    case SMMU_REG_EVENTQ_IRQ_CFG0:
    case SMMU_REG_EVENTQ_IRQ_CFG0 + 4:
        if (msi)
            set_half(&s->eventq_irq_cfg0, off & 4, v, IRQ_CFG0_ADDR_MASK);
        break;
    case SMMU_REG_EVENTQ_IRQ_CFG1:
        if (msi)
            s->eventq_irq_cfg1 = v;
        break;
    case SMMU_REG_EVENTQ_IRQ_CFG2:
        if (msi)
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

static bool access_ok(uint64_t off, unsigned size)
{
    return (size == 4 || size == 8) && !(off & (size - 1)) && off < SMMU_MMIO_SIZE;
}

uint64_t smmu_mmio_read(struct smmu *s, uint64_t off, unsigned size)
{
    if (!access_ok(off, size))
        return 0;
    if (size == 4 && lockfree_reg(off))
        return read32(s, off);
    smmu_lock(s);
    uint64_t v = read32(s, off);
    if (size == 8)
        v |= (uint64_t)read32(s, off + 4) << 32;
    smmu_unlock(s);
    return v;
}

void smmu_mmio_write(struct smmu *s, uint64_t off, uint64_t value, unsigned size)
{
    if (!access_ok(off, size))
        return;
    if (size == 4 && (off == SMMU_REG_CMDQ_PROD || off == SMMU_REG_EVENTQ_CONS)) {
        write32(s, off, (uint32_t)value);
        return;
    }
    smmu_lock(s);
    write32(s, off, (uint32_t)value);
    if (size == 8)
        write32(s, off + 4, (uint32_t)(value >> 32));
    smmu_unlock(s);
}
