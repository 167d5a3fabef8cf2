/* cmdq.c — the command-queue consumer: a queue object (base, size, PROD/CONS, error state) for
 * SMMU_CMDQ and each SMMUv3.3 ECMDQ, the serial/parallel schedulers, and the decode/execute of
 * every command (IHI 0070 chapter 4, §3.5.6). Not the register file (regs.c). */
#include <errno.h>

#include "smmuv3_internal.h"

/* ---- the queue object ------------------------------------------------------------------------
 * Everything kind-specific is behind these helpers: SMMU_CMDQ is gated by CR0.CMDQEN and
 * stopped by GERROR.CMDQ_ERR; an ECMDQ is gated by its own PROD.EN/CONS.ENACK and stopped while
 * its CONS.ERR differs from PROD.ERRACK (§3.5.6.2-3), independently of every other queue. */
static bool q_enabled(const struct smmu *s, const struct smmu_cmdq *q)
{
    if (q->kind == CMDQ_KIND_MAIN)
        return s->cr0 & CR0_CMDQEN;
    if (q->kind == CMDQ_KIND_VCMDQ)
        return smmu_vcmdq_enabled(s, q);
    return (atomic_load_explicit(&q->prod, memory_order_relaxed) & ECMDQ_PROD_EN) &&
           (atomic_load_explicit(&q->cons, memory_order_relaxed) & ECMDQ_CONS_ENACK);
}

static bool q_error_active(const struct smmu *s, const struct smmu_cmdq *q)
{
    if (q->kind == CMDQ_KIND_MAIN)
        return (s->gerror ^ s->gerrorn) & GERROR_CMDQ_ERR;
    if (q->kind == CMDQ_KIND_VCMDQ)
        return smmu_vcmdq_error_active(s, q);
    /* Also stops on a mismatch software made itself: CONSTRAINED UNPREDICTABLE (§3.5.6.3),
     * and not consuming is one of the permitted behaviours. */
    uint32_t p = atomic_load_explicit(&q->prod, memory_order_acquire);
    uint32_t c = atomic_load_explicit(&q->cons, memory_order_relaxed);
    return (p ^ c) & ECMDQ_CONS_ERR;
}

static void q_raise_error(struct smmu *s, struct smmu_cmdq *q, unsigned code)
{
    if (q->kind == CMDQ_KIND_VCMDQ) { /* its own CONS.ERR and GERROR (cmdqv.c) */
        if (code == CERROR_ABT)
            q->st.cerror_abt++;
        else
            q->st.cerror_ill++;
        smmu_vcmdq_raise(s, q, code, 0x1 /* VCMDQ GERROR.CMDQ_ERR */);
        return;
    }
    uint32_t c = atomic_load_explicit(&q->cons, memory_order_relaxed);
    if (q->kind == CMDQ_KIND_MAIN)
        c = (c & ~CMDQ_CONS_ERR_MASK) | ((uint32_t)code << CMDQ_CONS_ERR_SHIFT);
    else /* toggle ERR, record ERR_REASON; RD stays on the failed command */
        c = ((c ^ (uint32_t)ECMDQ_CONS_ERR) & ~ECMDQ_CONS_REASON_MASK) |
            ((uint32_t)code << ECMDQ_CONS_REASON_SHIFT);
    atomic_store_explicit(&q->cons, c, memory_order_release);
    if (code == CERROR_ILL)
        q->st.cerror_ill++;
    else
        q->st.cerror_abt++;
    smmu_trace(s, "cmdq_error", q->index, code);
    /* ECMDQ errors are additionally summarized in GERROR.CMDQP_ERR when it is inactive; it has
     * no effect on any queue. GERROR.CMDQ_ERR belongs to SMMU_CMDQ alone (§3.5.6.3). */
    smmu_gerror_raise(s, q->kind == CMDQ_KIND_MAIN ? GERROR_CMDQ_ERR : GERROR_CMDQP_ERR);
}

bool smmu_ecmdq_any_enabled(const struct smmu *s)
{
    for (unsigned i = 1; i <= s->cfg.ecmdq_count; i++)
        if ((atomic_load_explicit(&s->cmdq[i].prod, memory_order_relaxed) & ECMDQ_PROD_EN) ||
            (atomic_load_explicit(&s->cmdq[i].cons, memory_order_relaxed) & ECMDQ_CONS_ENACK))
            return true;
    return false;
}

static unsigned q_log2(const struct smmu_cmdq *q)
{
    unsigned l = (unsigned)(q->base & Q_BASE_LOG2SIZE_MASK);
    return l > q->max_log2 ? q->max_log2 : l; /* capped at IDR1.CMDQS (§6.3.25) */
}

void smmu_cmdq_reset(struct smmu *s)
{
    const uint8_t emax = s->cfg.ecmdq_log2size_max ? s->cfg.ecmdq_log2size_max : s->cfg.cmdqs;
    for (unsigned i = 0; i < s->ncmdq; i++) {
        struct smmu_cmdq *q = &s->cmdq[i];
        q->kind = !i ? CMDQ_KIND_MAIN : i <= s->cfg.ecmdq_count ? CMDQ_KIND_ECMDQ : CMDQ_KIND_VCMDQ;
        q->index = i;
        q->base = 0;
        /* A VCMDQ's LOG2SIZE above 19 never gets enabled (cmdqv.c). */
        q->max_log2 = !i ? s->cfg.cmdqs : q->kind == CMDQ_KIND_ECMDQ ? emax : 19;
        /* ECMDQ: EN, ERRACK, ENACK, ERR reset to 0; WR, RD, ERR_REASON, BASE are UNKNOWN at
         * reset (§6.3.107-109): this model picks 0. */
        atomic_store(&q->prod, 0);
        atomic_store(&q->cons, 0);
    }
    s->rr_next = 0;
    for (unsigned w = 0; w < s->npending; w++)
        atomic_store(&s->pending[w], 0);
}

/* The producer side of the pending bitmap: PROD has been stored (release) before this, so a
 * consumer that takes the bit sees the new PROD. */
void smmu_cmdq_kick(struct smmu *s, unsigned queue)
{
    if (queue && queue < s->ncmdq)
        atomic_fetch_or_explicit(&s->pending[queue / 64], 1ull << (queue % 64),
                                 memory_order_release);
}

/* ---- command fields (§4.1.6, §4.3–4.7) -------------------------------------------------------- */
#define C_OP GENMASK64(7, 0)
#define C_GLOBAL BIT64(9)
#define C_SSV BIT64(11)
#define C_SSID GENMASK64(31, 12)
#define C_SID GENMASK64(63, 32)
#define C_VMID GENMASK64(47, 32)
#define C_ASID GENMASK64(63, 48)
#define C_NUM GENMASK64(16, 12)
#define C_SCALE GENMASK64(24, 20) /* bit 25 RES0 when IDR5.DS == 0 */
#define C_LEAF BIT64(0)
#define C_TTL GENMASK64(9, 8)
#define C_TG GENMASK64(11, 10)
#define C_ADDR GENMASK64(63, 12)

enum {
    OP_PREFETCH_CONFIG = 0x01,
    OP_PREFETCH_ADDR = 0x02,
    OP_CFGI_STE = 0x03,
    OP_CFGI_STE_RANGE = 0x04,
    OP_CFGI_CD = 0x05,
    OP_CFGI_CD_ALL = 0x06,
    OP_TLBI_NH_ALL = 0x10,
    OP_TLBI_NH_ASID = 0x11,
    OP_TLBI_NH_VA = 0x12,
    OP_TLBI_NH_VAA = 0x13,
    OP_TLBI_EL2_ALL = 0x20,
    OP_TLBI_EL2_ASID = 0x21,
    OP_TLBI_EL2_VA = 0x22,
    OP_TLBI_EL2_VAA = 0x23,
    OP_TLBI_NSNH_ALL = 0x30,
    OP_ATC_INV = 0x40,
    OP_CMD_SYNC = 0x46,
};

/* The defined (non-RES0) bits of each command this model accepts. §4.1.5 lets an
 * implementation either ignore Reserved fields or detect them as malformed; this model
 * detects them, so every RES0 bit set gives CERROR_ILL. SSec (bit 10) is never listed: on the
 * Non-secure queue SSec == 1 is ILLEGAL (§4.1.6). Opcodes absent here — Reserved, EL3, stage 2
 * (no S2P), PRI_RESP (no PRI), RESUME/STALL_TERM (no stalls), CFGI_VMS_PIDM, IMPLEMENTATION
 * DEFINED — are CERROR_ILL. */
static bool cmd_fields(const struct smmu *s, unsigned op, uint64_t *m0, uint64_t *m1)
{
    const uint64_t rng0 = s->cfg.ril ? (C_NUM | C_SCALE) : 0;
    const uint64_t rng1 = s->cfg.ril ? (C_TTL | C_TG) : 0;
    switch (op) {
    case OP_PREFETCH_CONFIG:
        *m0 = C_OP | C_SSV | C_SSID | C_SID, *m1 = 0;
        return true;
    case OP_PREFETCH_ADDR: /* Size [4:0], Stride [9:5], Address [63:12] */
        *m0 = C_OP | C_SSV | C_SSID | C_SID, *m1 = GENMASK64(9, 0) | C_ADDR;
        return true;
    case OP_CFGI_STE:
        *m0 = C_OP | C_SID, *m1 = C_LEAF;
        return true;
    case OP_CFGI_STE_RANGE:
        *m0 = C_OP | C_SID, *m1 = GENMASK64(4, 0);
        return true;
    case OP_CFGI_CD:
        *m0 = C_OP | C_SSID | C_SID, *m1 = C_LEAF;
        return true;
    case OP_CFGI_CD_ALL:
        *m0 = C_OP | C_SID, *m1 = 0;
        return true;
    case OP_TLBI_NH_ALL:
        *m0 = C_OP | C_VMID, *m1 = 0;
        return true;
    case OP_TLBI_NH_ASID:
        *m0 = C_OP | C_VMID | C_ASID, *m1 = 0;
        return true;
    case OP_TLBI_NH_VA:
        *m0 = C_OP | rng0 | C_VMID | C_ASID, *m1 = C_LEAF | rng1 | C_ADDR;
        return true;
    case OP_TLBI_NH_VAA:
        *m0 = C_OP | rng0 | C_VMID, *m1 = C_LEAF | rng1 | C_ADDR;
        return true;
    case OP_TLBI_EL2_ALL:
        *m0 = C_OP, *m1 = 0;
        return s->cfg.hyp;
    case OP_TLBI_EL2_ASID:
        *m0 = C_OP | C_ASID, *m1 = 0;
        return s->cfg.hyp;
    case OP_TLBI_EL2_VA:
        *m0 = C_OP | rng0 | C_ASID, *m1 = C_LEAF | rng1 | C_ADDR;
        return s->cfg.hyp;
    case OP_TLBI_EL2_VAA:
        *m0 = C_OP | rng0, *m1 = C_LEAF | rng1 | C_ADDR;
        return s->cfg.hyp;
    case OP_TLBI_NSNH_ALL:
        *m0 = C_OP, *m1 = 0;
        return true;
    case OP_ATC_INV: /* Global bit 9, SSV, SSID, SID; Size [5:0], Address [63:12] */
        *m0 = C_OP | C_GLOBAL | C_SSV | C_SSID | C_SID, *m1 = GENMASK64(5, 0) | C_ADDR;
        return s->cfg.ats;
    case OP_CMD_SYNC: /* CS [13:12], MSH [23:22], MSIAttr [27:24], MSIData [63:32]; MSIAddr [51:2] */
        *m0 = C_OP | GENMASK64(13, 12) | GENMASK64(23, 22) | GENMASK64(27, 24) | GENMASK64(63, 32);
        *m1 = GENMASK64(51, 2);
        return true;
    default:
        return false;
    }
}

/* Address-based TLBI scope (§4.4.1.1): without TG, the one address (any entry containing it);
 * with TG, Range = (NUM+1) * 2^SCALE granules starting at Address. TTL only narrows the
 * required scope, so ignoring it over-invalidates, which §4.4 permits. The address is taken
 * as given: the range it implies is UNPREDICTABLE when it is not aligned to TTL's level. */
static int tlbi_va_scope(const struct smmu *s, uint64_t d0, uint64_t d1, struct smmu_inv *m)
{
    uint64_t addr = canon(d1 & C_ADDR);
    unsigned tg = (unsigned)fld(d1, 11, 10), ttl = (unsigned)fld(d1, 9, 8);
    unsigned num = (unsigned)fld(d0, 16, 12), scale = (unsigned)fld(d0, 24, 20);
    m->ranged = true;
    m->leaf_only = d1 & C_LEAF;
    if (!s->cfg.ril || tg == 0) {
        if (num || scale || ttl)
            return CERROR_ILL; /* RES0 when TG == 0 */
        m->lo = m->hi = addr;
        return CERROR_NONE;
    }
    if (tg == 2 && ttl == 1)
        ttl = 0; /* 16K level-1 leaf needs IDR5.DS: Reserved, treated as 0b00 (§4.4.1.1) */
    if (num == 0 && scale == 0 && ttl == 0)
        return CERROR_ILL; /* a granule with neither a range nor a level: Reserved */
    unsigned tgshift = tg == 1 ? 12 : tg == 2 ? 14 : 16;
    unsigned shift = scale + tgshift; /* <= 24 + 16 */
    uint64_t span = (uint64_t)(num + 1) << shift;
    m->lo = addr;
    m->hi = addr + span - 1;
    if (m->hi < m->lo)
        m->hi = UINT64_MAX; /* no wrap into the bottom of the address space */
    return CERROR_NONE;
}

/* Execute one command; *dropped: the TLB and walk-cache entries a TLBI invalidated (0 for
 * any other command); *signal: a CMD_SYNC whose completion signal is still to be sent
 * (signal_sync). */
static int exec_cmd(struct smmu *s, uint64_t d0, uint64_t d1, uint32_t *dropped, bool *signal)
{
    unsigned op = (unsigned)(d0 & 0xFF);
    uint64_t m0, m1;
    if (!cmd_fields(s, op, &m0, &m1) || (d0 & ~m0) || (d1 & ~m1))
        return CERROR_ILL;
    const uint32_t sid = (uint32_t)(d0 >> 32);
    struct smmu_inv m = {.any_vmid = true, .amode = INV_ASID_ANY};
    const uint16_t asid = (uint16_t)fld(d0, 63, 48);
    int rc;

    switch (op) {
    case OP_PREFETCH_CONFIG:
    case OP_PREFETCH_ADDR:
        /* Prefetch is a hint (§4.2): legal, no effect. */
        break;
    case OP_ATC_INV:
        /* Forwarded to the endpoint (host ops atc_inv) and completed before CONS moves past
         * it, so a later CMD_SYNC completes after the invalidation (§4.5.1). */
        smmu_atc_inv_cmd(s, d0, d1);
        break;
    case OP_CFGI_STE:
        smmu_cfg_inv_ste_range(s, sid, sid);
        break;
    case OP_CFGI_STE_RANGE: {
        /* §4.3.2: 2^(Range+1) StreamIDs from StreamID aligned down; Range 31 = CFGI_ALL. */
        unsigned n = (unsigned)fld(d1, 4, 0) + 1;
        uint32_t mask = n >= 32 ? UINT32_MAX : ((1u << n) - 1);
        smmu_cfg_inv_ste_range(s, sid & ~mask, (sid & ~mask) | mask);
        break;
    }
    case OP_CFGI_CD:
        smmu_cfg_inv_cd(s, sid, false, (uint32_t)fld(d0, 31, 12));
        break;
    case OP_CFGI_CD_ALL:
        smmu_cfg_inv_cd(s, sid, true, 0);
        break;
    case OP_TLBI_NH_ALL:
        m.regime = REGIME_EL1;
        *dropped = smmu_tlbi(s, &m);
        break;
    case OP_TLBI_NH_ASID:
        m.regime = REGIME_EL1;
        m.amode = INV_ASID_NONGLOBAL; /* global entries are not ASID-scoped */
        m.asid = asid;
        *dropped = smmu_tlbi(s, &m);
        break;
    case OP_TLBI_NH_VA:
    case OP_TLBI_NH_VAA:
    case OP_TLBI_EL2_VA:
    case OP_TLBI_EL2_VAA:
        m.regime = (op == OP_TLBI_NH_VA || op == OP_TLBI_NH_VAA) ? REGIME_EL1 : REGIME_EL2;
        /* VMID is not a tag in a stage-1-only SMMU: every entry has VMID 0 whatever the
         * command says, so match any (over-invalidation is permitted, §4.4). */
        m.any_vmid = false;
        m.vmid = 0;
        if (op == OP_TLBI_NH_VA || op == OP_TLBI_EL2_VA) {
            m.amode = INV_ASID_OR_GLOBAL;
            m.asid = asid;
        }
        rc = tlbi_va_scope(s, d0, d1, &m);
        if (rc)
            return rc;
        *dropped = smmu_tlbi(s, &m);
        break;
    case OP_TLBI_EL2_ALL:
        m.regime = REGIME_EL2;
        *dropped = smmu_tlbi(s, &m);
        break;
    case OP_TLBI_EL2_ASID:
        m.regime = REGIME_EL2;
        m.amode = INV_ASID_NONGLOBAL;
        m.asid = asid;
        *dropped = smmu_tlbi(s, &m);
        break;
    case OP_TLBI_NSNH_ALL:
        m.any_regime = true;
        *dropped = smmu_tlbi(s, &m);
        break;
    case OP_CMD_SYNC:
        /* Everything before the CMD_SYNC has completed: this model executes each command to
         * completion before CONS moves past it (§4.7.3). Its signal is consume()'s, once CONS
         * has moved past it. */
        if (fld(d0, 13, 12) == 3)
            return CERROR_ILL; /* CS 0b11: Reserved */
        *signal = true;
        break;
    }
    return CERROR_NONE;
}

/* The completion signal of a CMD_SYNC (§4.7.3), sent after CONS has moved past it: a CMD_SYNC
 * whose MSI (or interrupt, or SEV) is observable is consumed (§3.18). Software relies on that:
 * Linux's MSI waiter takes the CMD_SYNC's slot + 1 as the queue's cons
 * (__arm_smmu_cmdq_poll_until_msi), which a producer waiting for space may then replace by
 * the CONS register (arm_smmu_cmdq_poll_until_not_full). A CONS still on the CMD_SYNC there
 * takes the driver's cons back by one: on a full queue prod is then a lap and one ahead,
 * which queue_has_space reads as room, and producers overwrite entries not yet read
 * (test_sync_signal_after_cons). */
static void signal_sync(struct smmu *s, struct smmu_cmdq *q, uint64_t d0, uint64_t d1)
{
    unsigned cs = (unsigned)fld(d0, 13, 12);
    if (cs == 1) { /* SIG_IRQ */
        uint64_t msiaddr = d1 & GENMASK64(51, 2);
        if (s->cfg.msi && msiaddr) {
            if (!smmu_msi_write(s, msiaddr, (uint32_t)(d0 >> 32)))
                smmu_gerror_raise(s, GERROR_MSI_CMDQ_ABT_ERR);
            q->st.syncs_msi++;
        } else {
            s->st.irq_pulses++;
            if (s->ops.irq)
                s->ops.irq(s->ctx, SMMU_IRQ_CMD_SYNC);
            q->st.syncs_irq++;
        }
    } else if (cs == 2 && s->cfg.sev) { /* SIG_SEV; without IDR0.SEV it is SIG_NONE */
        s->st.irq_pulses++;
        if (s->ops.irq)
            s->ops.irq(s->ctx, SMMU_IRQ_SEV);
        q->st.syncs_sev++;
    }
}

/* Consume up to `max` commands of queue `q`. Called with the model lock held. */
static unsigned consume(struct smmu *s, struct smmu_cmdq *q, unsigned max)
{
    unsigned n = 0;
    while (n < max) {
        if (!q_enabled(s, q) || q_error_active(s, q))
            break;
        const unsigned log2 = q_log2(q);
        const uint32_t m = (2u << log2) - 1; /* index + wrap bit */
        const uint32_t rawprod = atomic_load_explicit(&q->prod, memory_order_acquire);
        const uint32_t prod = rawprod & m;
        const uint32_t consv = atomic_load_explicit(&q->cons, memory_order_relaxed);
        const uint32_t c = consv & m;
        if (q->kind == CMDQ_KIND_VCMDQ && smmu_vcmdq_prod_bad(q, log2, rawprod, c)) {
            q_raise_error(s, q, 4 /* CERROR_ILL_ACCESS */);
            break;
        }
        if (prod == c)
            break;
        const bool was_full = (prod ^ c) == (1u << log2);
        const uint64_t qbytes = (uint64_t)16 << log2;
        const uint64_t base = q->base & Q_BASE_ADDR_MASK & ~(qbytes - 1);
        uint8_t b[16];
        if (smmu_mem_read(s, base + (uint64_t)(c & (m >> 1)) * 16, b, sizeof(b))) {
            q_raise_error(s, q, CERROR_ABT);
            break;
        }
        const uint64_t d0 = le64(b), d1 = le64(b + 8);
        if (s->ops.cmd_defer && s->ops.cmd_defer(s->ctx, q->index, d0, d1))
            break; /* not yet: the queue waits, CONS stays on this command */
        smmu_trace(s, "cmd", d0, d1);
        if (s->ops.cmd_exec)
            s->ops.cmd_exec(s->ctx, q->index, d0, d1);
        uint32_t dropped = 0;
        bool signal = false;
        int err = q->kind == CMDQ_KIND_VCMDQ ? (int)smmu_vcmdq_check_cmd(s, q, d0) : 0;
        if (!err)
            err = exec_cmd(s, d0, d1, &dropped, &signal);
        if (err) {
            q_raise_error(s, q, (unsigned)err);
            break;
        }
        /* CONS advances only after the command completed (§4.1.4); the bits above the index
         * (main: ERR; ECMDQ: ENACK, ERR, ERR_REASON) are kept. Nothing else writes CONS while
         * the queue is enabled, and every writer holds the model lock. */
        uint32_t nc = ((c + 1) & m) | (consv & ~Q_IDX_MASK);
        atomic_store_explicit(&q->cons, nc, memory_order_release);
        /* then a CMD_SYNC's signal: whoever observes it finds CONS past the CMD_SYNC */
        if (signal)
            signal_sync(s, q, d0, d1);
        if (s->ops.cmd_done)
            s->ops.cmd_done(s->ctx, q->index, d0, d1, dropped);
        if (q->kind == CMDQ_KIND_VCMDQ)
            smmu_vcmdq_cons_written(s, q);
        q->st.commands++;
        q->st.by_opcode[d0 & 0xFF]++;
        n++;
        /* With IDR0.SEV, an ECMDQ leaving the full state is a WFE wake-up event (§3.5.6.1). */
        if (was_full && q->kind == CMDQ_KIND_ECMDQ && s->cfg.sev) {
            s->st.irq_pulses++;
            if (s->ops.irq)
                s->ops.irq(s->ctx, SMMU_IRQ_SEV);
        }
    }
    return n;
}

/* Lock-free: does queue q hold commands? (It may still be disabled or in error.) */
static bool q_nonempty(const struct smmu_cmdq *q)
{
    uint32_t p = atomic_load_explicit(&q->prod, memory_order_acquire);
    uint32_t c = atomic_load_explicit(&q->cons, memory_order_acquire);
    return ((p ^ c) & Q_IDX_MASK) != 0;
}

#define CMDQ_CHUNK 32u

/* Drain one queue in chunks of CMDQ_CHUNK commands per lock hold. */
static unsigned drain_queue(struct smmu *s, struct smmu_cmdq *q, unsigned max_cmds)
{
    unsigned total = 0;
    /* Lock-free idle check: a polling model thread costs two loads when nothing is queued. */
    if (!q_nonempty(q))
        return 0;
    while (total < max_cmds) {
        unsigned chunk = max_cmds - total < CMDQ_CHUNK ? max_cmds - total : CMDQ_CHUNK;
        smmu_lock(s);
        unsigned k = consume(s, q, chunk);
        smmu_unlock(s);
        total += k;
        if (k < chunk)
            break;
    }
    return total;
}

/* The serial consumer, one lock hold: list the queues with work once (starting at rr_next, so
 * no queue is favoured), then take one command from each in turn, dropping a queue from the
 * list when it empties, stops or fails. The list is rebuilt only when it drains, so a single
 * busy queue among many costs one scan per `budget` commands, not one per command. The list
 * comes from SMMU_CMDQ plus the ECMDQs whose pending bit was set (taken with an exchange), so
 * its cost is that of the active queues, not of every queue; a queue left non-empty (budget
 * spent, stopped, disabled) gets its bit back for the next call. */
static unsigned take_pending(struct smmu *s)
{
    unsigned nact = 0;
    for (unsigned w = 0; w < s->npending; w++)
        s->pending_taken[w] = atomic_exchange_explicit(&s->pending[w], 0, memory_order_acq_rel);
    /* queues rr_next.. first, then 0..rr_next-1: the order the full scan had */
    for (unsigned pass = 0; pass < 2; pass++) {
        unsigned lo = pass ? 0 : s->rr_next, hi = pass ? s->rr_next : s->ncmdq;
        for (unsigned qi = lo; qi < hi; qi++) {
            bool cand = qi == 0 || (s->pending_taken[qi / 64] >> (qi % 64) & 1);
            if (!cand) {
                if (!s->pending_taken[qi / 64]) /* skip an empty word in one step */
                    qi = (qi | 63) < hi ? (qi | 63) : hi - 1;
                continue;
            }
            if (q_nonempty(&s->cmdq[qi]))
                s->rr_active[nact++] = qi;
        }
    }
    return nact;
}

static void give_back_pending(struct smmu *s)
{
    for (unsigned w = 0; w < s->npending; w++) {
        uint64_t bits = s->pending_taken[w];
        while (bits) {
            unsigned qi = w * 64 + (unsigned)__builtin_ctzll(bits);
            bits &= bits - 1;
            if (q_nonempty(&s->cmdq[qi]))
                smmu_cmdq_kick(s, qi);
        }
    }
}

static unsigned round_robin(struct smmu *s, unsigned budget)
{
    unsigned nact = take_pending(s), k = 0;
    while (k < budget && nact) {
        unsigned keep = 0;
        for (unsigned j = 0; j < nact; j++) {
            unsigned qi = s->rr_active[j];
            if (k < budget && consume(s, &s->cmdq[qi], 1)) {
                k++;
                s->rr_active[keep++] = qi;
                s->rr_next = (qi + 1) % s->ncmdq;
            } else if (k >= budget) {
                s->rr_active[keep++] = qi;
            }
        }
        nact = k < budget ? keep : 0;
    }
    give_back_pending(s);
    return k;
}

static bool any_pending(struct smmu *s)
{
    if (q_nonempty(&s->cmdq[0]))
        return true;
    for (unsigned w = 0; w < s->npending; w++)
        if (atomic_load_explicit(&s->pending[w], memory_order_acquire))
            return true;
    return false;
}

unsigned smmu_process_commands(struct smmu *s, unsigned max_cmds)
{
    if (s->ncmdq == 1)
        return drain_queue(s, &s->cmdq[0], max_cmds);
    unsigned total = 0;
    while (total < max_cmds) {
        if (!any_pending(s)) /* lock-free idle check: one word per 64 queues */
            break;
        unsigned chunk = max_cmds - total < CMDQ_CHUNK ? max_cmds - total : CMDQ_CHUNK;
        smmu_lock(s);
        unsigned k = round_robin(s, chunk);
        smmu_unlock(s);
        total += k;
        if (k < chunk)
            break;
    }
    return total;
}

int smmu_process_queue(struct smmu *s, unsigned queue, unsigned max_cmds)
{
    if (queue >= s->ncmdq)
        return -EINVAL;
    if (!s->cfg.ecmdq_parallel)
        return -EOPNOTSUPP;
    return (int)drain_queue(s, &s->cmdq[queue], max_cmds > INT32_MAX ? INT32_MAX : max_cmds);
}
