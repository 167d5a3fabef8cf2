/* evtq.c — the Event queue producer: writes 32-byte records, overflow (PROD.OVFLG), EVENTQ IRQ.
 * Not event construction (strtab.c / translate.c build records) and not register decoding. */
#include "smmuv3_internal.h"

/* Write one record (IHI 0070 §3.5.2, §7.4). Returns true if it reached memory. */
bool smmu_evtq_record(struct smmu *s, const uint64_t rec[4])
{
    smmu_trace(s, "evtq_record", rec[0], rec[2]);
    if (!(s->cr0 & CR0_EVENTQEN) || ((s->gerror ^ s->gerrorn) & GERROR_EVENTQ_ABT_ERR)) {
        /* A disabled queue, or one whose last write aborted and is not yet acknowledged,
         * silently discards events. */
        s->st.events_discarded++;
        return false;
    }
    unsigned log2 = (unsigned)(s->eventq_base & Q_BASE_LOG2SIZE_MASK);
    if (log2 > s->cfg.eventqs)
        log2 = s->cfg.eventqs; /* LOG2SIZE capped at IDR1.EVENTQS */
    const uint32_t idx_mask = (1u << log2) - 1, wrap = 1u << log2;
    uint32_t prod = atomic_load_explicit(&s->eventq_prod, memory_order_relaxed);
    uint32_t cons = atomic_load_explicit(&s->eventq_cons, memory_order_acquire);
    uint32_t pw = prod & (wrap | idx_mask), cw = cons & (wrap | idx_mask);
    if ((pw & idx_mask) == (cw & idx_mask) && (pw & wrap) != (cw & wrap)) {
        /* Full: the event is lost. OVFLG toggles only when no overflow is pending, i.e. when
         * PROD.OVFLG == CONS.OVACKFLG (§7.4.1); it is not an abort. */
        s->st.events_lost++;
        if ((prod & Q_OVF) == (cons & Q_OVF)) {
            atomic_store_explicit(&s->eventq_prod, prod ^ (uint32_t)Q_OVF, memory_order_release);
            s->st.event_overflows++;
        }
        return false;
    }
    /* Effective base is aligned to the larger of the queue size and 32 bytes. */
    uint64_t qbytes = (uint64_t)32 << log2;
    uint64_t base = s->eventq_base & Q_BASE_ADDR_MASK & ~(qbytes - 1);
    uint8_t b[32];
    for (int i = 0; i < 4; i++)
        put_le64(b + 8 * i, rec[i]);
    if (smmu_mem_write(s, base + (uint64_t)(pw & idx_mask) * 32, b, sizeof(b))) {
        smmu_gerror_raise(s, GERROR_EVENTQ_ABT_ERR);
        s->st.events_discarded++;
        return false;
    }
    uint32_t np = ((pw + 1) & (wrap | idx_mask)) | (prod & (uint32_t)Q_OVF);
    atomic_store_explicit(&s->eventq_prod, np, memory_order_release);
    s->st.events_written++;
    if (s->irq_ctrl & IRQ_CTRL_EVENTQ_IRQEN)
        smmu_signal_irq(s, IRQ_SRC_EVENTQ);
    return true;
}
