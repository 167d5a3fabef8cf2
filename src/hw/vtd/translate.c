/* translate.c — the legacy-mode request path (VT-d §3.4.2): root entry (§9.1), context entry
 * (§9.3), second-stage walk (§3.7, §9.8) with 3/4/5-level tables and 2M/1G leaves, the fault
 * conditions of §7.1.3 and their recording. Not scalable mode, nor first-stage tables. */
#include "vtd_internal.h"

struct walk {
    struct vtd *v;
    const struct vtd_txn_req *req;
    struct vtd_txn_rsp *rsp;
    bool fpd; /* the context entry's Fault Processing Disable, once it is known valid */
};

static void fault(struct walk *w, uint8_t reason)
{
    struct vtd *v = w->v;
    w->rsp->status = VTD_TXN_FAULT;
    w->rsp->fault_reason = reason;
    v->st.faults++;
    if (w->fpd) { /* §9.3: FPD suppresses recording of faults of requests it governs */
        v->st.faults_suppressed++;
        return;
    }
    w->rsp->fault_recorded =
        vtd_record_fault(v, w->req->sid, w->req->iova, reason, w->req->write, w->req->ats);
}

static int read16(struct vtd *v, uint64_t pa, uint64_t q[2])
{
    uint8_t b[16];
    if (v->ops.mem_read(v->ctx, pa, b, 16))
        return -1;
    q[0] = vtd_le64(b);
    q[1] = vtd_le64(b + 8);
    return 0;
}

/* Root entry (§9.1) then context entry (§9.3) for the request's source-id. Returns 0 with *c
 * filled, or the fault reason. */
static uint8_t fetch_context(struct vtd *v, uint16_t sid, struct vtd_ctx *c)
{
    uint64_t addr_rsvd = VMASK(63, v->cfg.haw);
    uint64_t re[2], ce[2];
    uint64_t rta = v->rta_active & VMASK(v->cfg.haw - 1, 12);
    if (read16(v, rta + 16ULL * (sid >> 8), re))
        return VTD_FR_ROOT_ACCESS;
    if (!(re[0] & 1))
        return VTD_FR_ROOT_NOT_PRESENT;
    if ((re[0] & (VMASK(11, 1) | addr_rsvd)) || re[1])
        return VTD_FR_ROOT_RSVD;
    if (read16(v, (re[0] & VMASK(63, 12)) + 16ULL * (sid & 0xFF), ce))
        return VTD_FR_CTX_ACCESS;
    if (!(ce[0] & 1))
        return VTD_FR_CTX_NOT_PRESENT;
    c->sid = sid;
    c->fpd = ce[0] & 2;
    c->tt = (uint8_t)((ce[0] >> 2) & 3);
    c->slptptr = ce[0] & VMASK(63, 12);
    c->did = (uint16_t)(ce[1] >> 8);
    unsigned aw = (unsigned)(ce[1] & 7);
    /* Reserved: lo [11:4], SLPTPTR above HAW (ignored with TT = 10); hi bit 7 and [63:24];
     * domain-id bits beyond CAP.ND's width. */
    uint64_t lo_rsvd = VMASK(11, 4) | (c->tt == CTX_TT_PT ? 0 : addr_rsvd);
    unsigned did_bits = 4 + 2 * v->cfg.nd;
    uint64_t hi_rsvd = VBIT(7) | VMASK(63, 24) | (did_bits < 16 ? VMASK(23, 8 + did_bits) : 0);
    if ((ce[0] & lo_rsvd) || (ce[1] & hi_rsvd))
        return VTD_FR_CTX_RSVD;
    /* Invalid programming (§7.1.3, 3h): TT 11, TT 01 without ECAP.DT, TT 10 without ECAP.PT,
     * or (when translating) an AW that CAP.SAGAW does not list. */
    if (c->tt == 3 || (c->tt == CTX_TT_DEVTLB && !v->cfg.dt) || (c->tt == CTX_TT_PT && !v->cfg.pt))
        return VTD_FR_CTX_INVALID;
    c->levels = (uint8_t)(aw + 2);
    if (c->tt != CTX_TT_PT && (aw < 1 || aw > 3 || !(v->cap & VBIT(8 + aw))))
        return VTD_FR_CTX_INVALID;
    return 0;
}

/* Reserved bits of a present second-stage entry at `level` (§9.8). leaf: a PTE, or a PDE /
 * PDPE with PS = 1 that CAP.SLLPS allows. */
static uint64_t pte_rsvd(const struct vtd *v, unsigned level, bool leaf)
{
    uint64_t r = VMASK(51, v->cfg.haw);
    if (!leaf)
        return r | VBIT(11) | VBIT(62) | (level >= 4 ? VBIT(7) : 0);
    if (!v->cfg.sc)
        r |= VBIT(11); /* SNP */
    if (!v->cfg.dt)
        r |= VBIT(62); /* TM */
    if (level > 1)
        r |= VMASK(12 + 9 * (level - 1) - 1, 12);
    return r;
}

static bool large_ok(const struct vtd *v, unsigned level)
{
    return (level == 2 && v->cfg.sllps_2m) || (level == 3 && v->cfg.sllps_1g);
}

static uint8_t need(const struct vtd_txn_req *req)
{
    return req->ats ? VTD_PERM_R : (req->write ? VTD_PERM_W : VTD_PERM_R);
}

static uint8_t perm_fault(const struct vtd_txn_req *req)
{
    return req->write && !req->ats ? VTD_FR_WRITE : VTD_FR_READ;
}

/* The second-stage walk from the deepest paging-structure-cache hit. Returns 0 and the leaf
 * in *leaf, or a fault reason. An ATS translation request is not blocked by missing
 * permissions: it returns what the entries grant (possibly nothing). */
static uint8_t walk(struct vtd *v, const struct vtd_txn_req *req, const struct vtd_ctx *c,
                    struct vtd_tent *leaf)
{
    struct vtd_tent pe;
    uint64_t table = c->slptptr;
    uint8_t perm = VTD_PERM_R | VTD_PERM_W;
    unsigned level = c->levels;
    int hit = vtd_psc_lookup(v, c->did, req->iova, c->levels, &pe);
    if (hit) {
        table = pe.pa;
        perm = pe.perm;
        level = (unsigned)hit - 1;
    }
    for (; level >= 1; level--) {
        unsigned sh = 12 + 9 * (level - 1);
        uint64_t pa = table + 8 * ((req->iova >> sh) & 0x1FF);
        uint8_t b[8];
        /* 7h at every level, the table SLPTPTR names included: rev. 3.0 on, §7.1.3 lists an
         * error reading a second-stage entry referenced through SLPTPTR or through a previous
         * entry as one condition (7h). Rev. 1.x-2.x put the top table's error under 3h
         * ("invalid programming of a context-entry"); this model follows the current text. */
        if (v->ops.mem_read(v->ctx, pa, b, 8))
            return VTD_FR_PT_ACCESS;
        uint64_t e = vtd_le64(b);
        uint8_t rw = (uint8_t)(e & 3);
        if (!rw && !req->ats) /* not present: the access is not granted (§3.7.1) */
            return perm_fault(req);
        if (!rw) { /* ATS: a completion granting nothing for this page */
            *leaf = (struct vtd_tent){.va = req->iova & VMASK(63, sh), .shift = (uint8_t)sh};
            return 0;
        }
        bool ps = level > 1 && (e & VBIT(7));
        if (ps && level <= 3 && !large_ok(v, level))
            return VTD_FR_PT_RSVD; /* PS where SLLPS has no such page size is reserved */
        bool is_leaf = level == 1 || ps;
        if (e & pte_rsvd(v, level, is_leaf))
            return VTD_FR_PT_RSVD;
        perm &= rw;
        if (!(perm & need(req)) && !req->ats)
            return perm_fault(req);
        if (is_leaf) {
            leaf->va = req->iova & VMASK(63, sh);
            leaf->pa = e & VMASK(v->cfg.haw - 1, sh);
            leaf->shift = (uint8_t)sh;
            leaf->perm = perm;
            leaf->did = c->did;
            return 0;
        }
        table = e & VMASK(v->cfg.haw - 1, 12);
        struct vtd_tent t = {.va = req->iova & VMASK(63, sh), .pa = table, .did = c->did,
                             .shift = (uint8_t)sh, .perm = perm};
        vtd_psc_fill(v, level, &t);
    }
    return VTD_FR_PT_RSVD; /* unreachable: level 1 is always a leaf */
}

/* §3.15 (rev. 4.x; §3.14 in 3.x): software must not map anything onto the interrupt address
 * range; untranslated requests and translation requests that result in an address in it are
 * blocked (condition LGN.4, fault reason Eh). An untranslated request results in one address;
 * a translation request in the whole page its completion grants. */
#define INTERRUPT_RANGE_FIRST 0xFEE00000ULL
#define INTERRUPT_RANGE_LAST 0xFEEFFFFFULL

static bool results_in_interrupt_range(const struct vtd_txn_req *req, const struct vtd_tent *t,
                                       uint64_t pa)
{
    uint64_t lo = req->ats ? t->pa : pa;
    uint64_t hi = req->ats ? t->pa + (VBIT(t->shift) - 1) : pa;
    return lo <= INTERRUPT_RANGE_LAST && hi >= INTERRUPT_RANGE_FIRST;
}

static bool context_for(struct walk *w, struct vtd_ctx *c)
{
    struct vtd *v = w->v;
    if (vtd_ctxc_lookup(v, w->req->sid, c))
        return true;
    uint8_t fr = fetch_context(v, w->req->sid, c);
    if (fr) {
        fault(w, fr);
        return false;
    }
    vtd_ctxc_fill(v, c); /* only present, valid entries are cached (CM = 0, §6.1) */
    return true;
}

static void translate(struct vtd *v, const struct vtd_txn_req *req, struct vtd_txn_rsp *rsp)
{
    struct walk w = {.v = v, .req = req, .rsp = rsp};
    struct vtd_ctx c;
    v->st.translations++;
    if (req->ats)
        v->st.ats_requests++;
    if (!(v->gsts & GSTS_TES)) {
        /* Remapping disabled: untranslated requests pass through; a translation request has
         * no translation agent to answer it (UR, nothing recorded). */
        if (req->ats) {
            rsp->status = VTD_TXN_FAULT;
            rsp->fault_reason = VTD_FR_TT_BLOCKED;
            v->st.faults++;
            return;
        }
        rsp->pa = req->iova;
        rsp->perm = VTD_PERM_R | VTD_PERM_W;
        rsp->passthrough = true;
        v->st.passthrough++;
        return;
    }
    if (!context_for(&w, &c))
        return;
    rsp->did = c.did;
    w.fpd = c.fpd;
    if (req->ats && c.tt != CTX_TT_DEVTLB) {
        fault(&w, VTD_FR_TT_BLOCKED); /* §4.2.3: translation requests need TT = 01 */
        return;
    }
    if (c.tt == CTX_TT_PT) {
        rsp->pa = req->iova;
        rsp->perm = VTD_PERM_R | VTD_PERM_W;
        rsp->passthrough = true;
        v->st.passthrough++;
        return;
    }
    unsigned aw_bits = 30 + 9 * (c.levels - 2);
    unsigned x = aw_bits < v->cfg.mgaw ? aw_bits : v->cfg.mgaw;
    if (x < 64 && (req->iova >> x)) {
        /* §4.2.3: a translation request above 2^X - 1 is not a fault: it completes
         * successfully with R = W = 0, and nothing is recorded. */
        if (req->ats) {
            rsp->page_shift = 12;
            return;
        }
        fault(&w, VTD_FR_ADDR_BEYOND_AW);
        return;
    }
    struct vtd_tent t;
    bool hit = vtd_iotlb_lookup(v, c.did, req->iova, &t);
    if (hit) {
        v->st.iotlb_hit_translations++;
    } else {
        uint8_t fr = walk(v, req, &c, &t);
        if (fr) {
            fault(&w, fr);
            return;
        }
    }
    uint64_t pa = t.pa | (req->iova & VMASK(t.shift - 1, 0));
    if (t.perm && results_in_interrupt_range(req, &t, pa)) {
        fault(&w, VTD_FR_INTERRUPT_ADDR); /* not cached: only valid translations are */
        return;
    }
    if (!hit && t.perm) /* entries granting nothing are not cached */
        vtd_iotlb_fill(v, &t);
    if (!(t.perm & need(req)) && !req->ats) {
        fault(&w, perm_fault(req));
        return;
    }
    rsp->page_shift = t.shift;
    rsp->perm = t.perm;
    rsp->pa = pa;
}

void vtd_translate(struct vtd *v, const struct vtd_txn_req *req, struct vtd_txn_rsp *rsp)
{
    memset(rsp, 0, sizeof(*rsp));
    vtd_lock(v);
    translate(v, req, rsp);
    vtd_unlock(v);
}
