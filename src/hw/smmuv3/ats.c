/* ats.c — the SMMU side of PCIe ATS (IHI 0070 §3.9.1): answering an endpoint's ATS Translation
 * Request (a translation for its ATC, no data access) and CMD_ATC_INV's forwarding to the host.
 * Not ordinary translation (translate.c), and not the endpoint's ATC (src/hw/atc.c).
 */
#include "smmuv3_internal.h"

/* UR completion: the request was not allowed (§7.3.6). F_BAD_ATS_TREQ carries StreamID,
 * SubstreamID/SSV and InputAddr; the requested R/W/X/PRIV and Span fields are left 0. */
static void refuse_ur(struct smmu *s, const struct smmu_txn_req *req, struct smmu_txn_rsp *rsp,
                      bool record)
{
    rsp->status = SMMU_TXN_ABORT;
    rsp->pa = 0;
    rsp->ats_cpl = SMMU_ATS_CPL_UR;
    s->st.ats_refused++;
    if (!record)
        return;
    uint64_t *e = rsp->evt;
    e[0] = SMMU_EVT_F_BAD_ATS_TREQ | ((uint64_t)req->sid << 32);
    if (req->ssv)
        e[0] |= BIT64(11) | ((uint64_t)(req->ssid & 0xFFFFF) << 12);
    e[1] = 0;
    e[2] = req->iova;
    e[3] = 0;
    rsp->event = SMMU_EVT_F_BAD_ATS_TREQ;
    s->st.faults++;
    rsp->event_recorded = smmu_evtq_record(s, e);
}

/* CA completion: a configuration error or an external abort on the walk. "Translation Requests
 * do not cause other events (such as C_BAD_STE) to be recorded" (§7.3.6). */
static void refuse_ca(struct smmu *s, struct smmu_txn_rsp *rsp)
{
    rsp->status = SMMU_TXN_ABORT;
    rsp->pa = 0;
    rsp->ats_cpl = SMMU_ATS_CPL_CA;
    s->st.ats_refused++;
}

/* Called by smmu_translate with the lock held and rsp's common fields reset. */
void smmu_ats_translate(struct smmu *s, const struct smmu_txn_req *req, struct smmu_txn_rsp *rsp)
{
    s->st.ats_requests++;
    if (!s->cfg.ats) {
        refuse_ur(s, req, rsp, false); /* no ATS interface: nothing to record it against */
        return;
    }
    if (!(s->cr0 & CR0_SMMUEN)) {
        refuse_ur(s, req, rsp, true);
        return;
    }
    const struct smmu_ctx *ctx = NULL;
    struct smmu_ste ste;
    uint64_t evt[4];
    switch (smmu_cfg_lookup(s, req, &ctx, &ste, evt)) {
    case CFG_ABORT_SILENT: /* STE.Config == 0b000: terminated, no event (§7.3.7) */
        refuse_ur(s, req, rsp, false);
        return;
    case CFG_BYPASS:
        /* Config == 0b100 makes the effective EATS 0b00 (§7.3.6). An S1DSS-bypassed
         * substream-less request of a translating STE is treated the same way here. */
        refuse_ur(s, req, rsp, true);
        return;
    case CFG_FAULT:
        refuse_ca(s, rsp);
        return;
    case CFG_TRANSLATE:
        break;
    }
    if (ctx->eats != 1) {
        /* 0b00: ATS disabled for the stream (0b11, Reserved without DPT, was decoded as
         * 0b00; 0b10, split-stage, makes the STE ILLEGAL without stage 2). */
        refuse_ur(s, req, rsp, true);
        return;
    }

    /* A PCIe request without PASID is unprivileged data (§13.7); with PASID this model has no
     * Execute/Privileged request bits, so the same. STE overrides apply as for transactions. */
    bool priv = ctx->privcfg == 3;
    struct walk_fault f = {0, 0};
    const uint64_t va = req->iova;
    const struct smmu_tt *tt = &ctx->tt[(va >> 55) & 1];
    if (tt->disabled)
        goto no_access;
    if (!smmu_va_in_range(tt, va) || (tt->e0pd && !priv))
        goto no_access;
    const uint64_t cva = tt->tbi ? canon(va) : va;
    struct smmu_xent *e = smmu_tlb_lookup(s, ctx, cva), tmp;
    struct smmu_tcache *tlb = &s->tlb;
    if (!e) {
        if (!smmu_walk(s, ctx, tt, cva, &tmp, &f)) {
            if (f.type == SMMU_EVT_F_WALK_EABT) {
                refuse_ca(s, rsp);
                return;
            }
            goto no_access;
        }
        /* An ATS request may fill the SMMU's TLB (§3.9.1): a later request or an untranslated
         * access of the same page hits. */
        e = smmu_tcache_insert(tlb, &tmp);
        if (!e)
            e = &tmp;
    }
    /* Success: grant what the descriptor allows of read (always requested) and write (when
     * asked for); execute is never requested without PASID. */
    uint8_t perm = smmu_xent_perm(e, priv) & (uint8_t)(SMMU_PERM_R | (req->write ? SMMU_PERM_W : 0));
    rsp->status = SMMU_TXN_OK;
    rsp->ats_cpl = SMMU_ATS_CPL_SUCCESS;
    rsp->pa = e->pa | (cva & (BIT64(e->shift) - 1));
    rsp->page_shift = e->shift;
    rsp->perm = perm;
    rsp->mem_attr = e->attr;
    rsp->sh = e->sh;
    return;

no_access:
    /* A translation fault: a successful completion with R = W = 0 and no event (§3.9.1). */
    rsp->status = SMMU_TXN_OK;
    rsp->ats_cpl = SMMU_ATS_CPL_SUCCESS;
    rsp->pa = 0;
    rsp->perm = 0;
}

/* CMD_ATC_INV (§4.5.1), fields already checked by the decoder. IGNORED with SMMUEN == 0. */
void smmu_atc_inv_cmd(struct smmu *s, uint64_t d0, uint64_t d1)
{
    if (!(s->cr0 & CR0_SMMUEN))
        return;
    s->st.atc_invs++;
    if (!s->ops.atc_inv)
        return;
    unsigned size = (unsigned)fld(d1, 5, 0);
    /* Sizes above 52 may give an UNKNOWN span: this model invalidates everything, the one
     * choice that can never leave a stale entry. */
    unsigned log2 = size >= 52 ? 64 : 12 + size;
    uint64_t addr = log2 >= 64 ? 0 : (d1 & GENMASK64(63, 12)) & ~(BIT64(log2) - 1);
    bool ssv = d0 & BIT64(11);
    uint32_t ssid = ssv ? (uint32_t)fld(d0, 31, 12) : 0;
    bool global = ssv && (d0 & BIT64(9)); /* IGNORED without SSV */
    s->ops.atc_inv(s->ctx, (uint32_t)(d0 >> 32), ssid, ssv, addr, log2, global);
}
