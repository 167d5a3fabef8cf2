/* msi.c — interrupt delivery: MSI writes (IRQ_CFG0/1), wired IRQ fallback, GERROR activation.
 * Not the queues that decide when to interrupt (evtq.c, cmdq.c). */
#include "smmuv3_internal.h"

/* MSI write of a 32-bit little-endian payload through host memory (IHI 0070 §3.18). An MSI
 * address beyond the OAS is truncated to the OAS, as queue addresses are (§3.4.3). */
bool smmu_msi_write(struct smmu *s, uint64_t addr, uint32_t data)
{
    addr &= ~(~0ULL << s->cfg.oas);
    uint8_t b[4] = {(uint8_t)data, (uint8_t)(data >> 8), (uint8_t)(data >> 16),
                    (uint8_t)(data >> 24)};
    if (smmu_mem_write(s, addr, b, sizeof(b)))
        return false;
    s->st.msi_writes++;
    if (s->ops.msi)
        s->ops.msi(s->ctx, addr, data);
    return true;
}

static void pulse(struct smmu *s, enum smmu_irq_line line)
{
    s->st.irq_pulses++;
    if (s->ops.irq)
        s->ops.irq(s->ctx, line);
}

/* An interrupt source uses MSI when IDR0.MSI is set and its IRQ_CFG0.ADDR is non-zero,
 * otherwise the wired line (§3.18.1). */
void smmu_signal_irq(struct smmu *s, enum smmu_irq_src src)
{
    uint64_t addr = src == IRQ_SRC_EVENTQ ? s->eventq_irq_cfg0 : s->gerror_irq_cfg0;
    uint32_t data = src == IRQ_SRC_EVENTQ ? s->eventq_irq_cfg1 : s->gerror_irq_cfg1;
    addr &= IRQ_CFG0_ADDR_MASK;
    if (s->cfg.msi && addr) {
        if (!smmu_msi_write(s, addr, data)) {
            if (src == IRQ_SRC_EVENTQ)
                smmu_gerror_raise(s, GERROR_MSI_EVENTQ_ABT_ERR);
            else if (!((s->gerror ^ s->gerrorn) & GERROR_MSI_GERROR_ABT_ERR))
                /* No GERROR interrupt for a failed GERROR MSI: that would recurse. */
                s->gerror ^= (uint32_t)GERROR_MSI_GERROR_ABT_ERR, s->st.gerrors++;
        }
        return;
    }
    pulse(s, src == IRQ_SRC_EVENTQ ? SMMU_IRQ_EVENTQ : SMMU_IRQ_GERROR);
}

/* Activate a GERROR condition: toggle the bit only if it is not already active
 * (GERROR[x] == GERRORN[x]), then interrupt if IRQ_CTRL.GERROR_IRQEN (§6.3.17). */
void smmu_gerror_raise(struct smmu *s, uint32_t bit)
{
    if ((s->gerror ^ s->gerrorn) & bit)
        return;
    s->gerror ^= bit;
    s->st.gerrors++;
    smmu_trace(s, "gerror", bit, s->gerror);
    if (s->irq_ctrl & IRQ_CTRL_GERROR_IRQEN)
        smmu_signal_irq(s, IRQ_SRC_GERROR);
}
