/* test_smmuv3_evtq.c — SMMUv3 model event queue and interrupts: overflow (PROD.OVFLG), disabled
 * queue, write aborts (GERROR.EVENTQ_ABT_ERR), wired and MSI interrupts, GERROR interrupt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

#define GERROR_MSI_EVENTQ_ABT 0x20u /* GERROR[5] MSI_EVENTQ_ABT_ERR (§6.3.17) */

struct fx {
    struct smt_env e;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
};

static int setup(void **state)
{
    static struct fx f;
    if (smt_env_init(&f.e, NULL, 8))
        return -1;
    smt_simple_stream(&f.e, 3, &f.pt, &f.cd, &f.cdpa);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    smt_env_fini(&f->e);
    return 0;
}

static void fault_once(struct fx *f, uint64_t va)
{
    struct smmu_txn_rsp r;
    smt_translate(&f->e, 3, va, false, &r);
    assert_int_equal(r.event, 0x10);
}

static void test_overflow_toggles_ovflg(void **state)
{
    struct fx *f = *state;
    for (unsigned i = 0; i < 64; i++) /* 2^6 entries: fills the queue */
        fault_once(f, 0x1000ULL * i);
    uint32_t prod = (uint32_t)smt_rd(&f->e, SMT_EVENTQ_PROD);
    assert_int_equal(prod, 64); /* index 0, wrap bit set: full */
    fault_once(f, 0xF0000);
    prod = (uint32_t)smt_rd(&f->e, SMT_EVENTQ_PROD);
    assert_int_equal(prod, 0x80000040u); /* OVFLG toggled, WR unchanged */
    fault_once(f, 0xF1000);                /* still overflowed: no second toggle */
    assert_int_equal(smt_rd(&f->e, SMT_EVENTQ_PROD), 0x80000040u);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR), 0); /* not an abort */
    struct smmu_stats st;
    smmu_get_stats(f->e.smmu, &st);
    assert_int_equal(st.events_lost, 2);
    assert_int_equal(st.event_overflows, 1);
    uint64_t rec[4];
    for (unsigned i = 0; i < 64; i++) {
        assert_true(smt_evt_pop(&f->e, rec)); /* also copies OVFLG into OVACKFLG */
        assert_int_equal(rec[2], 0x1000ULL * i);
    }
    assert_int_equal(smt_rd(&f->e, SMT_EVENTQ_CONS) >> 31, 1);
    fault_once(f, 0x2000);
    /* the next record leaves OVFLG as it was: only a new overflow toggles it (§7.4.1) */
    assert_int_equal(smt_rd(&f->e, SMT_EVENTQ_PROD), 0x80000041u);
    assert_true(smt_evt_pop(&f->e, rec));
    assert_int_equal(rec[2], 0x2000);
}

static void test_disabled_eventq_discards(void **state)
{
    struct fx *f = *state;
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_CMDQEN);
    uint64_t writes = f->e.mem.writes;
    struct smmu_txn_rsp r;
    smt_translate(&f->e, 3, 0x1000, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_false(r.event_recorded);
    assert_int_equal(f->e.mem.writes, writes);
    assert_int_equal(smt_rd(&f->e, SMT_EVENTQ_PROD), 0);
}

static void test_eventq_write_abort(void **state)
{
    struct fx *f = *state;
    smt_fault_add(&f->e.mem, f->e.evtq, 32, false, true);
    fault_once(f, 0x1000);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR) & SMT_GERROR_EVENTQ_ABT, SMT_GERROR_EVENTQ_ABT);
    smt_fault_clear(&f->e.mem);
    fault_once(f, 0x2000); /* discarded while the error is active */
    assert_int_equal(smt_rd(&f->e, SMT_EVENTQ_PROD), 0);
    smt_wr(&f->e, SMT_GERRORN, smt_rd(&f->e, SMT_GERROR));
    fault_once(f, 0x3000);
    uint64_t rec[4];
    assert_true(smt_evt_pop(&f->e, rec));
    assert_int_equal(rec[2], 0x3000);
}

static void test_eventq_irq_wired_and_msi(void **state)
{
    struct fx *f = *state;
    fault_once(f, 0x1000);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_EVENTQ], 0); /* IRQ_CTRL.EVENTQ_IRQEN off */
    smt_wr(&f->e, SMT_IRQ_CTRL, 4);
    fault_once(f, 0x2000);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_EVENTQ], 1);
    uint64_t doorbell = smt_alloc(&f->e.mem, 64, 64);
    smt_wr(&f->e, SMT_IRQ_CTRL, 0); /* IRQ_CFGn are IGNORED while EVENTQ_IRQEN (v3.2) */
    smmu_mmio_write(f->e.smmu, SMT_EVENTQ_IRQ_CFG0, doorbell, 8);
    smt_wr(&f->e, SMT_EVENTQ_IRQ_CFG1, 0x1234);
    smt_wr(&f->e, SMT_IRQ_CTRL, 4);
    fault_once(f, 0x3000);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_EVENTQ], 1);
    assert_int_equal(smt_r32(&f->e.mem, doorbell), 0x1234);
    assert_int_equal(f->e.mem.nmsi, 1);
}

static void test_gerror_irq(void **state)
{
    struct fx *f = *state;
    smt_wr(&f->e, SMT_IRQ_CTRL, 1);
    smt_cmd(&f->e, 0xFF, 0);
    smt_run(&f->e);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_GERROR], 1);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR), SMT_GERROR_CMDQ_ERR);
    /* While CMDQ_ERR is active, an event queue MSI write abort (another source) activates
     * MSI_EVENTQ_ABT_ERR: its own bit toggles, CMDQ_ERR stays active, and it interrupts. */
    uint64_t evdb = smt_alloc(&f->e.mem, 64, 64);
    smt_fault_add(&f->e.mem, evdb, 4, false, true);
    smmu_mmio_write(f->e.smmu, SMT_EVENTQ_IRQ_CFG0, evdb, 8);
    smt_wr(&f->e, SMT_IRQ_CTRL, 1 | 4); /* GERROR_IRQEN | EVENTQ_IRQEN */
    fault_once(f, 0x1000);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR), SMT_GERROR_CMDQ_ERR | GERROR_MSI_EVENTQ_ABT);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_GERROR], 2);
    /* the same source failing again while active does not toggle it again nor interrupt */
    fault_once(f, 0x2000);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR), SMT_GERROR_CMDQ_ERR | GERROR_MSI_EVENTQ_ABT);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_GERROR], 2);
    smt_wr(&f->e, SMT_IRQ_CTRL, 0); /* IRQ_CFGn are IGNORED while GERROR_IRQEN (v3.2) */
    smt_fault_clear(&f->e.mem);
    uint64_t doorbell = smt_alloc(&f->e.mem, 64, 64);
    smmu_mmio_write(f->e.smmu, SMT_GERROR_IRQ_CFG0, doorbell, 8);
    smt_wr(&f->e, SMT_GERROR_IRQ_CFG1, 77);
    smt_wr(&f->e, SMT_IRQ_CTRL, 1);
    /* ack both: the illegal command fails again, GERROR.CMDQ_ERR toggles (1 -> 0) */
    smt_wr(&f->e, SMT_GERRORN, smt_rd(&f->e, SMT_GERROR));
    smt_run(&f->e);
    assert_int_equal(smt_r32(&f->e.mem, doorbell), 77);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_GERROR], 2); /* MSI now, not the wire */
    assert_int_equal(smt_rd(&f->e, SMT_GERROR), GERROR_MSI_EVENTQ_ABT);
}

static void test_eventq_log2size_capped(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.eventqs = 2; /* 4 entries at most; the env programs LOG2SIZE 6 */
    c.thread_safe = false;
    struct fx f;
    assert_int_equal(smt_env_init(&f.e, &c, 8), 0);
    smt_simple_stream(&f.e, 3, &f.pt, &f.cd, &f.cdpa);
    for (unsigned i = 0; i < 5; i++)
        fault_once(&f, 0x1000ULL * i);
    assert_int_equal(smt_rd(&f.e, SMT_EVENTQ_PROD), 0x80000004u);
    smt_env_fini(&f.e);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_overflow_toggles_ovflg),
        T(test_disabled_eventq_discards),
        T(test_eventq_write_abort),
        T(test_eventq_irq_wired_and_msi),
        T(test_gerror_irq),
        cmocka_unit_test(test_eventq_log2size_capped),
    };
    return cmocka_run_group_tests_name("smmuv3_evtq", tests, NULL, NULL);
}
