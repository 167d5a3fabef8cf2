/* events.c — primary fault logging (VT-d §7.2.1) into the fault recording registers, the fault
 * event (§7.3, FECTL §10.4.10) and the invalidation completion event (§6.5.2.9, IECTL §10.4.26).
 * Not the detection of faults (translate.c) nor of queue errors (invq.c). */
#include "vtd_internal.h"

static void send_fault_event(struct vtd *v)
{
    v->fectl &= ~(uint32_t)XCTL_IP;
    v->st.fault_events++;
    if (v->ops.msi)
        v->ops.msi(v->ctx, VTD_EVENT_FAULT, ((uint64_t)v->feuaddr << 32) | v->feaddr, v->fedata);
}

/* A status field of FSTS is being set (PPF by a record, PFO, IQE). §10.4.10: it is an interrupt
 * condition only if no status field was set already; the message goes out unless IM holds
 * it pending in IP. */
void vtd_fault_condition(struct vtd *v, uint32_t new_bit)
{
    bool already = v->fsts & FSTS_STATUS;
    v->fsts |= new_bit;
    if (already)
        return;
    v->fectl |= XCTL_IP;
    if (!(v->fectl & XCTL_IM))
        send_fault_event(v);
}

/* Software cleared an F field or an FSTS status bit: PPF is the OR of every F (§10.4.9), and
 * IP is cleared once every status field has been serviced (§10.4.10). */
void vtd_fault_status_serviced(struct vtd *v)
{
    bool any = false;
    for (unsigned i = 0; i < v->cfg.nfr; i++)
        any |= (v->frcd[i][1] & FRCD_F) != 0;
    if (!any)
        v->fsts &= ~(uint32_t)FSTS_PPF;
    if (!(v->fsts & FSTS_STATUS))
        v->fectl &= ~(uint32_t)XCTL_IP;
}

void vtd_fectl_unmasked(struct vtd *v)
{
    if (v->fectl & XCTL_IP)
        send_fault_event(v);
}

/* §7.2.1: PFO set -> not recorded; the record at the internal index still holds a fault ->
 * PFO, not recorded; else record, set F, advance the index (wrapping at NFR), and set PPF with
 * FRI = this index if no fault was pending. This model does not compress faults of one
 * source-id (optional in the architecture). */
bool vtd_record_fault(struct vtd *v, uint16_t sid, uint64_t iova, uint8_t reason, bool write,
                      bool ats)
{
    if (v->fsts & FSTS_PFO) {
        v->st.faults_lost++;
        return false;
    }
    unsigned idx = v->fr_next;
    if (v->frcd[idx][1] & FRCD_F) {
        v->st.faults_lost++;
        v->st.fault_overflows++;
        vtd_fault_condition(v, FSTS_PFO);
        return false;
    }
    /* §10.4.14: FI holds the page address, bits above MGAW reserved (0). T2:T1 = 00 write,
     * 01 read; this model marks ATS translation requests with T2 = 1. AT is the request's
     * Address Type, 01b for a translation request; RsvdZ without ECAP.DT. */
    uint64_t at = ats && v->cfg.dt ? FRCD_AT_TRANSLATION_REQ << FRCD_AT_SHIFT : 0;
    v->frcd[idx][0] = iova & VMASK(v->cfg.mgaw - 1, 12);
    v->frcd[idx][1] = FRCD_F | ((uint64_t)reason << FRCD_FR_SHIFT) | sid | at |
                      (ats ? FRCD_T2 : 0) | (!write && !ats ? FRCD_T1 : 0);
    v->fr_next = (uint16_t)((idx + 1) % v->cfg.nfr);
    v->st.faults_recorded++;
    vtd_trace(v, "vtd_fault", sid, ((uint64_t)reason << 56) | (iova & VMASK(55, 0)));
    if (v->fsts & FSTS_PPF)
        return true;
    v->fsts = (v->fsts & ~(uint32_t)VMASK(15, 8)) | (uint32_t)(idx << FSTS_FRI_SHIFT);
    vtd_fault_condition(v, FSTS_PPF);
    return true;
}

/* §6.5.2.9: a wait descriptor with IF = 1 completed. If IWC is already set this is not a new
 * interrupt condition; else IWC and IP are set and the message goes out unless IM is set. */
void vtd_inv_complete_event(struct vtd *v)
{
    if (v->ics & ICS_IWC)
        return;
    v->ics |= ICS_IWC;
    v->iectl |= XCTL_IP;
    if (!(v->iectl & XCTL_IM))
        vtd_iectl_unmasked(v);
}

void vtd_iectl_unmasked(struct vtd *v)
{
    if (!(v->iectl & XCTL_IP))
        return;
    v->iectl &= ~(uint32_t)XCTL_IP;
    v->st.inv_events++;
    if (v->ops.msi)
        v->ops.msi(v->ctx, VTD_EVENT_INV_COMPLETE, ((uint64_t)v->ieuaddr << 32) | v->ieaddr,
                   v->iedata);
}
