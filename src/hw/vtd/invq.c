/* invq.c — the queued invalidation interface (VT-d §6.5.2): fetch from IQH towards IQT, the
 * 128-bit legacy descriptors (context-cache, IOTLB, device-TLB, invalidation wait), their
 * reserved-field checks and the invalidation queue errors of §6.5.2.10. Not the caches (tlb.c). */
#include "vtd_internal.h"

/* §10.4.22: IQH resets to 0 whenever queued invalidation is disabled. */
void vtd_iq_disable(struct vtd *v)
{
    v->gsts &= ~(uint32_t)GSTS_QIES;
    v->iqh = 0;
}

/* §6.5.2.10: IQE is set, IQH stays on the descriptor, nothing more is fetched until software
 * clears IQE; IQERCD.IQEI says why (§10.4.30). */
static void iq_error(struct vtd *v, unsigned iqei)
{
    v->iqercd = (v->iqercd & ~0xFULL) | iqei;
    v->st.iq_errors++;
    vtd_trace(v, "vtd_iqe", iqei, v->iqh);
    vtd_fault_condition(v, FSTS_IQE);
}

static unsigned desc_type(uint64_t qw0)
{
    return (unsigned)((qw0 & 0xF) | (((qw0 >> 9) & 7) << 4));
}

/* Returns IQEI_NONE when the descriptor may execute, else the error. */
static unsigned check(const struct vtd *v, uint64_t qw0, uint64_t qw1)
{
    unsigned g = (unsigned)((qw0 >> 4) & 3);
    switch (desc_type(qw0)) {
    case DESC_CC: /* §6.5.2.1: G [5:4] (00 reserved), DID [31:16], SID [47:32], FM [49:48] */
        return (!g || (qw0 & (VMASK(15, 6) | VMASK(63, 50))) || qw1) ? IQEI_RSVD : IQEI_NONE;
    case DESC_IOTLB: /* §6.5.2.3: G, DW [6], DR [7], DID; AM [69:64], IH [70], ADDR [127:76] */
        if (!g || (qw0 & (VMASK(15, 8) | VMASK(63, 32))) || (qw1 & VMASK(11, 7)))
            return IQEI_RSVD;
        if (g == 3 && v->cfg.psi && (qw1 & 0x3F) > v->cfg.mamv)
            return IQEI_RSVD; /* an address mask beyond CAP.MAMV: this model's choice */
        return IQEI_NONE;
    case DESC_DEVTLB: /* §6.5.2.5: PFSID [15:12]+[63:52], MIP [20:16], SID; S [64], ADDR */
        if (!v->cfg.dt)
            return IQEI_TYPE;
        return ((qw0 & (VMASK(11, 4) | VMASK(31, 21) | VMASK(51, 48))) || (qw1 & VMASK(11, 1)))
                   ? IQEI_RSVD : IQEI_NONE;
    case DESC_WAIT: /* §6.5.2.8: IF [4], SW [5], FN [6]; PD [7] reserved without ECAP.PDS */
        return ((qw0 & VMASK(31, 7)) || (qw1 & 3)) ? IQEI_RSVD : IQEI_NONE;
    default: /* 0, interrupt-entry-cache (no ECAP.IR), PASID-based types (scalable mode only) */
        return IQEI_TYPE;
    }
}

static void exec_iotlb(struct vtd *v, uint64_t qw0, uint64_t qw1)
{
    unsigned g = (unsigned)((qw0 >> 4) & 3);
    unsigned am = (unsigned)(qw1 & 0x3F);
    struct vtd_inv inv = {.all_domains = g == 1, .did = (uint16_t)(qw0 >> 16)};
    if (g == 3 && v->cfg.psi) { /* without CAP.PSI a page request is served domain-wide */
        inv.ranged = true;
        inv.lo = qw1 & VMASK(63, 12 + am); /* ADDR's low AM bits are ignored */
        inv.hi = inv.lo + (VBIT(12 + am) - 1);
        inv.keep_psc = qw1 & VBIT(6);      /* IH: leaf entries only (§6.5.2.3) */
    }
    vtd_iotlb_inval(v, &inv);
}

/* §6.5.2.5: S = 0 is one 4 KiB page; with S = 1 the lowest 0 bit of ADDR[63:12] at position
 * 12 + n gives a size of 2^(13 + n) bytes (ADDR[63:12] all ones but bit 63: everything). */
static void exec_devtlb(struct vtd *v, uint64_t qw0, uint64_t qw1)
{
    uint64_t addr = qw1 & VMASK(63, 12);
    unsigned size = 12;
    if (qw1 & 1) {
        unsigned n = 0;
        while (n < 52 && ((addr >> (12 + n)) & 1))
            n++;
        size = 13 + n;
    }
    if (size >= 64) {
        size = 64;
        addr = 0;
    } else {
        addr &= VMASK(63, size);
    }
    uint16_t pfsid = (uint16_t)(((qw0 >> 12) & 0xF) | (((qw0 >> 52) & 0xFFF) << 4));
    v->st.devtlb_invs++;
    if (v->ops.devtlb_inv)
        v->ops.devtlb_inv(v->ctx, (uint16_t)(qw0 >> 32), pfsid, (unsigned)(qw0 >> 16) & 0x1F, addr,
                          size);
}

/* §6.5.2.8: the status write (SW) and the completion event (IF). Every earlier descriptor has
 * completed when this one runs (the model executes in order, synchronously), which is what
 * FN asks for: the fence holds by construction. A failed status write is an invalidation
 * queue error (this model's choice; IQEI 0, no detail). */
static bool exec_wait(struct vtd *v, uint64_t qw0, uint64_t qw1)
{
    if (qw0 & VBIT(5)) {
        uint32_t data = (uint32_t)(qw0 >> 32);
        uint8_t b[4] = {(uint8_t)data, (uint8_t)(data >> 8), (uint8_t)(data >> 16),
                        (uint8_t)(data >> 24)};
        uint64_t addr = qw1 & VMASK(63, 2);
        if (v->ops.mem_write(v->ctx, addr, b, 4))
            return false;
        v->st.wait_status_writes++;
        if (v->ops.wait_status)
            v->ops.wait_status(v->ctx, addr, data);
    }
    if (qw0 & VBIT(4))
        vtd_inv_complete_event(v);
    return true;
}

static bool execute(struct vtd *v, uint64_t qw0, uint64_t qw1)
{
    switch (desc_type(qw0)) {
    case DESC_CC:
        vtd_ctxc_inval(v, (unsigned)(qw0 >> 4) & 3, (uint16_t)(qw0 >> 16), (uint16_t)(qw0 >> 32),
                       (unsigned)(qw0 >> 48) & 3);
        return true;
    case DESC_IOTLB: exec_iotlb(v, qw0, qw1); return true;
    case DESC_DEVTLB: exec_devtlb(v, qw0, qw1); return true;
    default: return exec_wait(v, qw0, qw1);
    }
}

static unsigned process(struct vtd *v, unsigned max_desc)
{
    if (!(v->gsts & GSTS_QIES) || (v->fsts & FSTS_IQE))
        return 0;
    uint64_t qsize = 256ULL << (v->iqa & IQA_QS_MASK); /* 2^(QS + 8) entries (§10.4.24) */
    uint64_t qt = (v->iqt & IQ_IDX_MASK) >> 4;
    if (qt >= qsize) { /* a tail beyond the queue */
        iq_error(v, IQEI_TAIL);
        return 0;
    }
    uint64_t base = v->iqa & VMASK(v->cfg.haw - 1, 12);
    unsigned n = 0;
    while (n < max_desc) {
        uint64_t qh = ((v->iqh & IQ_IDX_MASK) >> 4) % qsize;
        if (qh == qt)
            break;
        uint64_t q[2];
        uint8_t b[16];
        if (v->ops.mem_read(v->ctx, base + 16 * qh, b, 16)) {
            iq_error(v, IQEI_FETCH);
            break;
        }
        q[0] = vtd_le64(b);
        q[1] = vtd_le64(b + 8);
        unsigned err = check(v, q[0], q[1]);
        if (err) {
            iq_error(v, err);
            break;
        }
        if (v->ops.desc_exec)
            v->ops.desc_exec(v->ctx, q[0], q[1]);
        if (!execute(v, q[0], q[1])) {
            iq_error(v, IQEI_NONE);
            break;
        }
        v->st.descriptors++;
        v->st.by_type[desc_type(q[0]) & 15]++;
        v->iqh = ((qh + 1) % qsize) << 4; /* the queue wraps at its end */
        n++;
    }
    return n;
}

unsigned vtd_process_queue(struct vtd *v, unsigned max_desc)
{
    vtd_lock(v);
    unsigned n = process(v, max_desc);
    vtd_unlock(v);
    return n;
}
