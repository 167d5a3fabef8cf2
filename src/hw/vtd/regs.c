/* regs.c — the VT-d register file (VT-d §10.4): ID registers, the GCMD/GSTS handshake, RTADDR,
 * register-based context-cache and IOTLB invalidation, fault and invalidation-event registers,
 * the fault recording registers and MMIO decode. Not the queue consumer (invq.c). */
#include "vtd_internal.h"

void vtd_regs_reset(struct vtd *v)
{
    v->gsts = 0;
    v->rtaddr = v->rta_active = 0;
    v->ccmd = v->iva = v->iotlb_reg = 0;
    v->fsts = 0;
    v->fectl = XCTL_IM; /* §10.4.10: IM is 1 at reset */
    v->fedata = v->feaddr = v->feuaddr = 0;
    v->iqh = v->iqt = v->iqa = v->iqercd = 0;
    v->ics = 0;
    v->iectl = XCTL_IM; /* §10.4.26 */
    v->iedata = v->ieaddr = v->ieuaddr = 0;
    memset(v->frcd, 0, sizeof(*v->frcd) * v->cfg.nfr);
    v->fr_next = 0;
}

/* ---- GCMD (§10.4.4): each command bit sets or clears its GSTS status bit -------------------
 * TE and QIE are persistent: the written value is the wanted state. SRTP is one-shot: it
 * latches RTADDR and sets RTPS. WBF (RWBF = 0), SFL/EAFL (no AFL), IRE/SIRTP/CFI (no IR) are
 * unsupported, their bits reserved: ignored. §10.4.4 asks software to change one field per
 * write; when it changes several, this model performs each. */
static void gcmd_write(struct vtd *v, uint32_t val)
{
    if (val & GCMD_SRTP) {
        v->rta_active = v->rtaddr;
        v->gsts |= GSTS_RTPS;
        vtd_trace(v, "vtd_srtp", v->rta_active, 0);
    }
    if ((val & GCMD_TE) && !(v->gsts & GSTS_TES)) {
        v->gsts |= GSTS_TES;
    } else if (!(val & GCMD_TE) && (v->gsts & GSTS_TES)) {
        v->gsts &= ~(uint32_t)GSTS_TES;
        v->fr_next = 0; /* §7.2.1: the index resets when TES and IRES are both clear */
    }
    if (v->cfg.qi) {
        if ((val & GCMD_QIE) && !(v->gsts & GSTS_QIES))
            v->gsts |= GSTS_QIES;
        else if (!(val & GCMD_QIE) && (v->gsts & GSTS_QIES))
            vtd_iq_disable(v);
    }
}

/* ---- register-based invalidation (§6.5.1, §10.4.7, §10.4.8) -------------------------------
 * §6.5.2: software must not use it while queued invalidation is enabled; this model then
 * ignores the request and reports granularity 00 (the "request not performed" value). */
static void ccmd_exec(struct vtd *v)
{
    unsigned cirg = (unsigned)((v->ccmd >> CCMD_CIRG_SHIFT) & 3);
    unsigned caig = 0;
    if (cirg && !(v->gsts & GSTS_QIES)) {
        vtd_ctxc_inval(v, cirg, (uint16_t)v->ccmd, (uint16_t)(v->ccmd >> 16),
                       (unsigned)(v->ccmd >> 32) & 3);
        caig = cirg;
        v->st.reg_context_invs++;
    }
    v->ccmd &= ~(CCMD_ICC | VMASK(60, 59));
    v->ccmd |= (uint64_t)caig << CCMD_CAIG_SHIFT;
}

static void iotlb_exec(struct vtd *v)
{
    unsigned iirg = (unsigned)((v->iotlb_reg >> IOTLB_IIRG_SHIFT) & 3);
    unsigned am = (unsigned)(v->iva & 0x3F);
    unsigned iaig = 0;
    /* IIRG 00 is reserved; PSI needs CAP.PSI and AM <= MAMV: otherwise the request is
     * "incorrect" and ignored with IAIG = 00 (§10.4.8.1). */
    bool ok = iirg && !(v->gsts & GSTS_QIES) &&
              (iirg != 3 || (v->cfg.psi && am <= v->cfg.mamv));
    if (ok) {
        struct vtd_inv inv = {.all_domains = iirg == 1, .did = (uint16_t)(v->iotlb_reg >> 32)};
        if (iirg == 3) {
            inv.ranged = true;
            inv.lo = v->iva & VMASK(63, 12 + am);
            inv.hi = inv.lo + (VBIT(12 + am) - 1);
            inv.keep_psc = v->iva & VBIT(6);
        }
        vtd_iotlb_inval(v, &inv);
        iaig = iirg;
        v->st.reg_iotlb_invs++;
    }
    v->iotlb_reg &= ~(IOTLB_IVT | VMASK(58, 57));
    v->iotlb_reg |= (uint64_t)iaig << IOTLB_IAIG_SHIFT;
}

/* Store a 32-bit half of a 64-bit register through its writable mask. */
static void put_half(uint64_t *reg, uint64_t off, uint32_t val, uint64_t writable)
{
    unsigned sh = (off & 4) ? 32 : 0;
    uint64_t m = (0xFFFFFFFFULL << sh) & writable;
    *reg = (*reg & ~m) | (((uint64_t)val << sh) & m);
}

static uint32_t half(uint64_t reg, uint64_t off) { return (uint32_t)((off & 4) ? reg >> 32 : reg); }

static uint64_t iro(const struct vtd *v) { return v->cfg.iro_offset; }
static uint64_t fro(const struct vtd *v) { return v->cfg.fro_offset; }

/* IQH..IQERCD: the queued-invalidation and invalidation-event registers, RsvdZ without
 * ECAP.QI (§10.4.22-30): they read 0 and ignore writes then. */
static bool qi_reg(uint64_t base) { return base >= VTD_REG_IQH && base <= VTD_REG_IQERCD; }

uint64_t vtd_reg_read32(struct vtd *v, uint64_t off)
{
    uint64_t base = off & ~7ULL;
    if (!v->cfg.qi && qi_reg(base))
        return 0;
    if (base >= iro(v) && base < iro(v) + 16)
        return base == iro(v) ? half(v->iva, off) : half(v->iotlb_reg, off);
    if (off >= fro(v) && off < fro(v) + (uint64_t)VTD_FRCD_STRIDE * v->cfg.nfr) {
        uint64_t rel = off - fro(v);
        return half(v->frcd[rel / 16][(rel / 8) & 1], off);
    }
    switch (base) {
    case VTD_REG_VER: return (off & 4) ? 0 : v->ver;
    case VTD_REG_CAP: return half(v->cap, off);
    case VTD_REG_ECAP: return half(v->ecap, off);
    case VTD_REG_GCMD: return (off & 4) ? v->gsts : 0; /* GCMD is write-only */
    case VTD_REG_RTADDR: return half(v->rtaddr, off);
    case VTD_REG_CCMD: return half(v->ccmd, off);
    case 0x30: return (off & 4) ? v->fsts : 0;
    case 0x38: return (off & 4) ? v->fedata : v->fectl;
    case 0x40: return (off & 4) ? v->feuaddr : v->feaddr;
    case VTD_REG_IQH: return half(v->iqh, off);
    case VTD_REG_IQT: return half(v->iqt, off);
    case VTD_REG_IQA: return half(v->iqa, off);
    case 0x98: return (off & 4) ? v->ics : 0;
    case 0xA0: return (off & 4) ? v->iedata : v->iectl;
    case 0xA8: return (off & 4) ? v->ieuaddr : v->ieaddr;
    case VTD_REG_IQERCD: return half(v->iqercd, off);
    default: return 0;
    }
}

static void frcd_write(struct vtd *v, uint64_t rel, uint32_t val)
{
    /* Only F (bit 127, bit 31 of the dword at +12) is writable: RW1C (§10.4.14). */
    if ((rel & 15) != 12 || !(val & 0x80000000u))
        return;
    v->frcd[rel / 16][1] &= ~FRCD_F;
    vtd_fault_status_serviced(v);
}

static void fectl_write(struct vtd *v, uint32_t val)
{
    bool was_masked = v->fectl & XCTL_IM;
    v->fectl = (v->fectl & ~(uint32_t)XCTL_IM) | (val & (uint32_t)XCTL_IM);
    if (was_masked && !(val & XCTL_IM))
        vtd_fectl_unmasked(v);
}

static void iectl_write(struct vtd *v, uint32_t val)
{
    bool was_masked = v->iectl & XCTL_IM;
    v->iectl = (v->iectl & ~(uint32_t)XCTL_IM) | (val & (uint32_t)XCTL_IM);
    if (was_masked && !(val & XCTL_IM))
        vtd_iectl_unmasked(v);
}

void vtd_reg_write32(struct vtd *v, uint64_t off, uint32_t val)
{
    uint64_t base = off & ~7ULL;
    uint64_t addr_mask = VMASK(v->cfg.haw - 1, 12);
    if (base >= iro(v) && base < iro(v) + 16) {
        if (base == iro(v)) {
            put_half(&v->iva, off, val, IVA_WRITABLE);
        } else {
            /* DID [47:32]: bits above CAP.ND's width are not implemented (§10.4.8.1) */
            put_half(&v->iotlb_reg, off, val,
                     IOTLB_WRITABLE & ~(VMASK(47, 32) & ~(vtd_did_mask(v) << 32)));
            if (v->iotlb_reg & IOTLB_IVT)
                iotlb_exec(v);
        }
        return;
    }
    if (off >= fro(v) && off < fro(v) + (uint64_t)VTD_FRCD_STRIDE * v->cfg.nfr) {
        frcd_write(v, off - fro(v), val);
        return;
    }
    switch (off) {
    case VTD_REG_GCMD: gcmd_write(v, val); return;
    /* RTADDR (§10.4.6): RTA [HAW-1:12]; TTM [11:10] is reserved without ECAP.SMTS. */
    case VTD_REG_RTADDR: case VTD_REG_RTADDR + 4: put_half(&v->rtaddr, off, val, addr_mask); return;
    case VTD_REG_CCMD: case VTD_REG_CCMD + 4:
        /* DID [15:0]: bits above CAP.ND's width are not implemented (§10.4.7) */
        put_half(&v->ccmd, off, val, CCMD_WRITABLE & ~(VMASK(15, 0) & ~vtd_did_mask(v)));
        if (v->ccmd & CCMD_ICC)
            ccmd_exec(v);
        return;
    case VTD_REG_FSTS:
        if (val & FSTS_W1C) {
            v->fsts &= ~(val & (uint32_t)FSTS_W1C);
            if (val & FSTS_IQE)
                v->iqercd &= ~0xFULL;
            vtd_fault_status_serviced(v);
        }
        return;
    case VTD_REG_FECTL: fectl_write(v, val); return;
    case VTD_REG_FEDATA: v->fedata = val & 0xFFFF; return;
    case VTD_REG_FEADDR: v->feaddr = val & ~3u; return;
    case VTD_REG_FEUADDR: v->feuaddr = val; return;
    }
    if (!v->cfg.qi)
        return; /* the queue registers are RsvdZ without ECAP.QI (qi_reg) */
    switch (off) {
    case VTD_REG_IQT: case VTD_REG_IQT + 4: put_half(&v->iqt, off, val, IQ_IDX_MASK); return;
    case VTD_REG_IQA: case VTD_REG_IQA + 4:
        /* §10.4.24: IQA [HAW-1:12], QS [2:0]; DW (bit 11) is reserved without SMTS. Software
         * must not change it while QIES = 1: ignored then. */
        if (!(v->gsts & GSTS_QIES))
            put_half(&v->iqa, off, val, addr_mask | IQA_QS_MASK);
        return;
    case VTD_REG_ICS:
        if (val & ICS_IWC) { /* RW1C; clearing IWC clears a pending IP (§10.4.26) */
            v->ics = 0;
            v->iectl &= ~(uint32_t)XCTL_IP;
        }
        return;
    case VTD_REG_IECTL: iectl_write(v, val); return;
    case VTD_REG_IEDATA: v->iedata = val & 0xFFFF; return;
    case VTD_REG_IEADDR: v->ieaddr = val & ~3u; return;
    case VTD_REG_IEUADDR: v->ieuaddr = val; return;
    }
}

uint64_t vtd_mmio_read(struct vtd *v, uint64_t offset, unsigned size)
{
    if ((size != 4 && size != 8) || (offset & (size - 1)) || offset > v->mmio_size - size)
        return 0;
    vtd_lock(v);
    uint64_t r = vtd_reg_read32(v, offset);
    if (size == 8)
        r |= vtd_reg_read32(v, offset + 4) << 32;
    vtd_unlock(v);
    return r;
}

void vtd_mmio_write(struct vtd *v, uint64_t offset, uint64_t value, unsigned size)
{
    if ((size != 4 && size != 8) || (offset & (size - 1)) || offset > v->mmio_size - size)
        return;
    vtd_lock(v);
    vtd_reg_write32(v, offset, (uint32_t)value);
    if (size == 8)
        vtd_reg_write32(v, offset + 4, (uint32_t)(value >> 32));
    vtd_unlock(v);
}
