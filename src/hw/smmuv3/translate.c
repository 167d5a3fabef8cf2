/* translate.c — the transaction path: SMMUEN/GBPA, configuration lookup, STE attribute overrides,
 * TTB selection, TLB lookup, walk on miss, permission checks and fault reporting (IHI 0070 §3).
 * Not the walker itself (walk.c) nor STE/CD decoding (strtab.c). */
#include "smmuv3_internal.h"

static void finish_abort(struct smmu_txn_rsp *rsp)
{
    rsp->status = SMMU_TXN_ABORT;
    rsp->pa = 0;
}

/* Record a configuration or fetch event (never suppressed by CD.R). */
static void cfg_event(struct smmu *s, const uint64_t evt[4], struct smmu_txn_rsp *rsp)
{
    memcpy(rsp->evt, evt, sizeof(rsp->evt));
    rsp->event = (uint8_t)evt[0];
    s->st.faults++;
    /* C_BAD_STREAMID is recorded only when CR2.RECINVSID == 1 (§7.3.3). */
    if (rsp->event == SMMU_EVT_C_BAD_STREAMID && !(s->cr2 & CR2_RECINVSID))
        return;
    rsp->event_recorded = smmu_evtq_record(s, evt);
}

/* Stage-1 translation-related fault (§3.12, §5.5): F_TRANSLATION, F_ADDR_SIZE, F_ACCESS and
 * F_PERMISSION honour CD.R (record) and CD.A (abort vs RAZ/WI); F_WALK_EABT is always recorded
 * and always aborts. CLASS is IN for the former, TT for a walk external abort (§7.3.12). */
static void xlate_fault(struct smmu *s, const struct smmu_txn_req *req, const struct smmu_ctx *ctx,
                        bool priv, bool instr, const struct walk_fault *f,
                        struct smmu_txn_rsp *rsp)
{
    uint64_t *e = rsp->evt;
    bool eabt = f->type == SMMU_EVT_F_WALK_EABT;
    e[0] = f->type | ((uint64_t)req->sid << 32);
    if (req->ssv)
        e[0] |= BIT64(11) | ((uint64_t)(req->ssid & 0xFFFFF) << 12);
    e[1] = ((uint64_t)priv << 33) | ((uint64_t)instr << 34) | ((uint64_t)!req->write << 35) |
           ((uint64_t)(eabt ? 1 : 2) << 40);
    e[2] = req->iova;
    e[3] = eabt ? (f->fetch_addr & GENMASK64(55, 3)) : 0;
    rsp->event = f->type;
    s->st.faults++;
    if (eabt || ctx->r)
        rsp->event_recorded = smmu_evtq_record(s, e);
    else
        s->st.events_suppressed++;
    if (!eabt && !ctx->a) {
        rsp->status = SMMU_TXN_RAZWI;
        rsp->pa = 0;
    } else {
        finish_abort(rsp);
    }
}

void smmu_translate(struct smmu *s, const struct smmu_txn_req *req, struct smmu_txn_rsp *rsp)
{
    rsp->status = SMMU_TXN_OK;
    rsp->event = SMMU_EVT_NONE;
    rsp->event_recorded = false;
    rsp->bypass = false;
    rsp->perm = 0;
    rsp->mem_attr = 0;
    rsp->sh = 0;
    rsp->page_shift = 12;
    rsp->ats_cpl = SMMU_ATS_CPL_SUCCESS;

    smmu_lock(s);
    if (req->ats) {
        smmu_ats_translate(s, req, rsp); /* ats.c: a translation for the ATC, no access */
        smmu_unlock(s);
        return;
    }
    s->st.translations++;
    if (!(s->cr0 & CR0_SMMUEN)) {
        /* SMMU disabled: GBPA decides between global abort and global bypass (§3.3.5). */
        if (s->gbpa & GBPA_ABORT) {
            finish_abort(rsp);
        } else {
            rsp->pa = req->iova;
            rsp->bypass = true;
            rsp->perm = SMMU_PERM_R | SMMU_PERM_W | SMMU_PERM_X;
            s->st.bypassed++;
        }
        smmu_unlock(s);
        return;
    }

    const struct smmu_ctx *ctx = NULL;
    struct smmu_ste ste;
    uint64_t evt[4];
    switch (smmu_cfg_lookup(s, req, &ctx, &ste, evt)) {
    case CFG_ABORT_SILENT:
        finish_abort(rsp);
        smmu_unlock(s);
        return;
    case CFG_BYPASS:
        rsp->pa = req->iova;
        rsp->bypass = true;
        rsp->perm = SMMU_PERM_R | SMMU_PERM_W | SMMU_PERM_X;
        s->st.bypassed++;
        smmu_unlock(s);
        return;
    case CFG_FAULT:
        cfg_event(s, evt, rsp);
        finish_abort(rsp);
        smmu_unlock(s);
        return;
    case CFG_TRANSLATE:
        break;
    }

    /* STE.PRIVCFG / INSTCFG override the incoming attributes (§5.2: 0b0x use incoming,
     * 0b10 unprivileged/data, 0b11 privileged/instruction). A write is never an instruction
     * access (§13.1.2). */
    bool priv = ctx->privcfg == 2 ? false : ctx->privcfg == 3 ? true : req->priv;
    bool instr = ctx->instcfg == 2 ? false : ctx->instcfg == 3 ? true : req->exec;
    if (req->write)
        instr = false;

    struct walk_fault f = {0, 0};
    const uint64_t va = req->iova;
    const unsigned region = (unsigned)((va >> 55) & 1);
    const struct smmu_tt *tt = &ctx->tt[region];
    if (tt->disabled) {
        f.type = SMMU_EVT_F_TRANSLATION; /* EPDx == 1, or no TTB1 range in this regime */
        goto fault;
    }
    if (!smmu_va_in_range(tt, va) || (tt->e0pd && !priv)) {
        f.type = SMMU_EVT_F_TRANSLATION; /* E0PD: an unprivileged access faults (§5.4) */
        goto fault;
    }
    const uint64_t cva = tt->tbi ? canon(va) : va;

    struct smmu_xent *e = smmu_tlb_lookup(s, ctx, cva), tmp;
    struct smmu_tcache *tlb = &s->tlb;
    if (!e) {
        if (!smmu_walk(s, ctx, tt, cva, &tmp, &f))
            goto fault;
        e = smmu_tcache_insert(tlb, &tmp);
        if (!e)
            e = &tmp;
    }

    /* Permission check (Arm ARM D8.4) with PAN for privileged data accesses. */
    uint8_t pbits = priv ? (e->perm & 7) : ((e->perm >> 3) & 7);
    uint8_t need = req->write ? XP_PW : instr ? XP_PX : XP_PR;
    if (!(pbits & need) || (priv && ctx->pan && !instr && (e->flags & XE_EL0_ACC))) {
        f.type = SMMU_EVT_F_PERMISSION;
        goto fault;
    }
    rsp->pa = e->pa | (cva & (BIT64(e->shift) - 1));
    rsp->page_shift = e->shift;
    rsp->perm = smmu_xent_perm(e, priv);
    rsp->mem_attr = e->attr;
    rsp->sh = e->sh;
    smmu_unlock(s);
    return;

fault:
    xlate_fault(s, req, ctx, priv, instr, &f, rsp);
    smmu_unlock(s);
}
