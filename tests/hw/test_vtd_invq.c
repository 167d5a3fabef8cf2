/* test_vtd_invq.c — VT-d model queued invalidation (§6.5.2): each legacy descriptor type, the wait
 * descriptor's status write and completion event (IWC, IECTL.IM/IP), device-TLB invalidations to
 * the host, queue errors (IQE with IQH left on the descriptor, IQERCD.IQEI), the stop until
 * software clears IQE, tail beyond the queue, fetch errors, wrap. Encodings typed in from §6.5.2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_vtd_env.h"

#define STATUS_PA 0x8000ULL

static int setup(void **state)
{
    static struct vt_env e;
    if (vt_init(&e, NULL))
        return -1;
    vt_bringup(&e);
    vt_qi_enable(&e, 0); /* 256 entries */
    vt_wr(&e, VT_IEADDR, 0xFEE01000);
    vt_wr(&e, VT_IEDATA, 0x52);
    *state = &e;
    return 0;
}

static int teardown(void **state)
{
    vt_fini(*state);
    return 0;
}

static uint32_t status_word(struct vt_env *e)
{
    return (uint32_t)vt_get64(e, STATUS_PA);
}

static unsigned iqh(struct vt_env *e) { return (unsigned)(vt_rd64(e, VT_IQH) >> 4); }
static unsigned iqei(struct vt_env *e) { return (unsigned)(vt_rd64(e, VT_IQERCD) & 0xF); }

static void test_wait_status_write(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_WAIT(1, 0, 0, 0xCAFEF00D), STATUS_PA);
    assert_int_equal(vtd_process_queue(e->v, 16), 1);
    assert_int_equal(status_word(e), 0xCAFEF00D);
    assert_int_equal(e->mem[STATUS_PA + 4], 0);      /* a 32-bit write only */
    assert_int_equal(e->wait_status_calls, 1);
    assert_int_equal(iqh(e), 1);
    assert_int_equal(vt_rd(e, VT_ICS), 0);            /* IF = 0: no completion event */
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 0);
}

static void test_wait_interrupt_sets_iwc_and_sends(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_IECTL, 0);
    vt_qi_push(e, VT_DESC_WAIT(0, 1, 0, 0), 0);
    assert_int_equal(vtd_process_queue(e->v, 16), 1);
    assert_int_equal(vt_rd(e, VT_ICS), 1);            /* IWC */
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 1);
    assert_int_equal(e->msi_addr[VTD_EVENT_INV_COMPLETE], 0xFEE01000);
    assert_int_equal(e->msi_data[VTD_EVENT_INV_COMPLETE], 0x52);
    assert_int_equal(vt_rd(e, VT_IECTL), 0);          /* IP clear */
    assert_int_equal(e->wait_status_calls, 0);
}

static void test_wait_interrupt_not_repeated_while_iwc(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_IECTL, 0);
    vt_qi_push(e, VT_DESC_WAIT(0, 1, 0, 0), 0);
    vt_qi_push(e, VT_DESC_WAIT(0, 1, 0, 0), 0);
    assert_int_equal(vtd_process_queue(e->v, 16), 2);
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 1);
    vt_wr(e, VT_ICS, 1);                              /* RW1C */
    assert_int_equal(vt_rd(e, VT_ICS), 0);
    vt_qi_push(e, VT_DESC_WAIT(0, 1, 0, 0), 0);
    vtd_process_queue(e->v, 16);
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 2);
}

static void test_wait_interrupt_masked_pends(void **state)
{
    struct vt_env *e = *state;                        /* IECTL.IM = 1 from reset */
    vt_qi_push(e, VT_DESC_WAIT(0, 1, 0, 0), 0);
    vtd_process_queue(e->v, 16);
    assert_int_equal(vt_rd(e, VT_IECTL), VT_IM | VT_IP);
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 0);
    vt_wr(e, VT_IECTL, 0);
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 1);
    assert_int_equal(vt_rd(e, VT_IECTL), 0);
}

static void test_clearing_iwc_clears_pending_ip(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_WAIT(0, 1, 0, 0), 0);
    vtd_process_queue(e->v, 16);
    vt_wr(e, VT_ICS, 1);
    assert_int_equal(vt_rd(e, VT_IECTL), VT_IM);
    vt_wr(e, VT_IECTL, 0);
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 0);
}

static void test_wait_status_and_interrupt_together(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_IECTL, 0);
    vt_qi_push(e, VT_DESC_WAIT(1, 1, 1, 7), STATUS_PA);
    vtd_process_queue(e->v, 16);
    assert_int_equal(status_word(e), 7);
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 1);
}

static void test_fenced_wait_after_invalidations(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_CC(1, 0, 0, 0), 0);
    vt_qi_push(e, VT_DESC_IOTLB(1, 0), 0);
    vt_qi_push(e, VT_DESC_WAIT(1, 0, 1, 1), STATUS_PA);
    assert_int_equal(vtd_process_queue(e->v, 16), 3);
    assert_int_equal(status_word(e), 1);
    struct vtd_stats st;
    vtd_get_stats(e->v, &st);
    assert_int_equal(st.descriptors, 3);
    assert_int_equal(st.by_type[1], 1);
    assert_int_equal(st.by_type[2], 1);
    assert_int_equal(st.by_type[5], 1);
    assert_int_equal(e->desc_execs, 3);
}

static void test_context_cache_descriptor_granularities(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_CC(1, 0, 0, 0), 0);
    vt_qi_push(e, VT_DESC_CC(2, 5, 0, 0), 0);
    vt_qi_push(e, VT_DESC_CC(3, 5, 0x0108, 3), 0);
    assert_int_equal(vtd_process_queue(e->v, 16), 3);
    vt_qi_push(e, VT_DESC_CC(0, 5, 0, 0), 0);           /* G = 00 is reserved */
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_IQE, VT_FSTS_IQE);
    assert_int_equal(iqei(e), 4);
    assert_int_equal(iqh(e), 3);
}

static void test_iotlb_descriptor_granularities(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_IOTLB(1, 0), 0);
    vt_qi_push(e, VT_DESC_IOTLB(2, 9), 0);
    vt_qi_push(e, VT_DESC_IOTLB(3, 9) | 0xC0 /* DR, DW */, VT_DESC_IOTLB_HI(0x40000, 18, 1));
    assert_int_equal(vtd_process_queue(e->v, 16), 3);
    vt_qi_push(e, VT_DESC_IOTLB(0, 9), 0);
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(iqei(e), 4);
}

static void test_iotlb_descriptor_am_beyond_mamv(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_IOTLB(3, 1), VT_DESC_IOTLB_HI(0, 19, 0)); /* MAMV is 18 */
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_IQE, VT_FSTS_IQE);
    assert_int_equal(iqei(e), 4);
    assert_int_equal(iqh(e), 0);
}

static void test_devtlb_descriptor_to_host(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_DEVTLB(0x0208, 0x0200, 32 - 1), 0x1234000);       /* S = 0: 4K */
    vt_qi_push(e, VT_DESC_DEVTLB(0x0209, 0x0ABC, 0), 0x1234000 | 1);       /* bit 12 = 0 */
    vt_qi_push(e, VT_DESC_DEVTLB(0x020A, 0, 0), 0x1233000 | 1);            /* 12, 13 = 1 */
    vt_qi_push(e, VT_DESC_DEVTLB(0x020B, 0, 0), 0x7FFFFFFFFFFFF000ULL | 1); /* everything */
    assert_int_equal(vtd_process_queue(e->v, 16), 4);
    assert_int_equal(e->ndevtlb, 4);
    assert_int_equal(e->devtlb[0].sid, 0x0208);
    assert_int_equal(e->devtlb[0].pfsid, 0x0200);
    assert_int_equal(e->devtlb[0].qdep, 31);
    assert_int_equal(e->devtlb[0].addr, 0x1234000);
    assert_int_equal(e->devtlb[0].size_log2, 12);
    assert_int_equal(e->devtlb[1].pfsid, 0x0ABC);
    assert_int_equal(e->devtlb[1].addr, 0x1234000);
    assert_int_equal(e->devtlb[1].size_log2, 13);   /* 8 KiB */
    assert_int_equal(e->devtlb[2].addr, 0x1230000);
    assert_int_equal(e->devtlb[2].size_log2, 15);   /* 32 KiB: lowest 0 bit is 14 */
    assert_int_equal(e->devtlb[3].size_log2, 64);
    struct vtd_stats st;
    vtd_get_stats(e->v, &st);
    assert_int_equal(st.devtlb_invs, 4);
    assert_int_equal(st.by_type[3], 4);
}

static void test_devtlb_descriptor_invalid_without_dt(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.dt = false;
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    vt_qi_enable(&e, 0);
    vt_qi_push(&e, VT_DESC_DEVTLB(0x0208, 0, 0), 0);
    assert_int_equal(vtd_process_queue(e.v, 16), 0);
    assert_int_equal(vt_rd64(&e, VT_IQERCD) & 0xF, 3);
    assert_int_equal(e.ndevtlb, 0);
    vt_fini(&e);
}

static void test_invalid_types_give_iqe(void **state)
{
    struct vt_env *e = *state;
    /* 0, interrupt entry cache (no ECAP.IR), PASID-based types 6/7/8, page group response 9,
     * and type 1 with a high type bit [11:9] set */
    static const uint64_t qw0[] = {0x0, 0x4, 0x6, 0x7, 0x8, 0x9, 0xF, 0x1 | (1ULL << 9)};
    for (unsigned i = 0; i < sizeof(qw0) / sizeof(qw0[0]); i++) {
        vt_qi_push(e, qw0[i] | 0x10, 0);
        assert_int_equal(vtd_process_queue(e->v, 16), 0);
        assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_IQE, VT_FSTS_IQE);
        assert_int_equal(iqei(e), 3);
        assert_int_equal(iqh(e), i);                   /* left on the bad descriptor */
        /* software replaces it with a no-op wait and clears IQE */
        vt_put64(e, e->iq + 16 * i, VT_DESC_WAIT(0, 0, 0, 0));
        vt_wr(e, VT_FSTS, VT_FSTS_IQE);
        assert_int_equal(vtd_process_queue(e->v, 16), 1);
    }
}

struct bad { uint64_t qw0, qw1; };

static void test_reserved_fields_give_iqe(void **state)
{
    struct vt_env *e = *state;
    static const struct bad bad[] = {
        {VT_DESC_CC(1, 0, 0, 0) | (1ULL << 6), 0},          /* CC: [15:6] */
        {VT_DESC_CC(1, 0, 0, 0) | (1ULL << 50), 0},         /* CC: [63:50] */
        {VT_DESC_CC(1, 0, 0, 0), 1},                        /* CC: qw1 */
        {VT_DESC_IOTLB(1, 0) | (1ULL << 8), 0},             /* IOTLB: [15:8] */
        {VT_DESC_IOTLB(1, 0) | (1ULL << 32), 0},            /* IOTLB: [63:32] */
        {VT_DESC_IOTLB(3, 0), 1ULL << 7},                   /* IOTLB: qw1 [11:7] */
        {VT_DESC_DEVTLB(1, 0, 0) | (1ULL << 4), 0},         /* device-TLB: [11:4] */
        {VT_DESC_DEVTLB(1, 0, 0) | (1ULL << 21), 0},        /* [31:21] */
        {VT_DESC_DEVTLB(1, 0, 0) | (1ULL << 48), 0},        /* [51:48] */
        {VT_DESC_DEVTLB(1, 0, 0), 1ULL << 1},               /* qw1 [11:1] */
        {VT_DESC_WAIT(0, 0, 0, 0) | (1ULL << 7), 0},        /* wait: PD without ECAP.PDS */
        {VT_DESC_WAIT(0, 0, 0, 0) | (1ULL << 31), 0},       /* wait: [31:8] */
        {VT_DESC_WAIT(1, 0, 0, 0), STATUS_PA | 1},          /* wait: qw1 [1:0] */
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        vt_qi_push(e, bad[i].qw0, bad[i].qw1);
        assert_int_equal(vtd_process_queue(e->v, 16), 0);
        assert_int_equal(iqei(e), 4);
        assert_int_equal(iqh(e), i);
        vt_put64(e, e->iq + 16 * i, VT_DESC_WAIT(0, 0, 0, 0));
        vt_put64(e, e->iq + 16 * i + 8, 0);
        vt_wr(e, VT_FSTS, VT_FSTS_IQE);
        assert_int_equal(vtd_process_queue(e->v, 16), 1);
    }
    assert_int_equal(e->ndevtlb, 0);
}

static void test_queue_stops_until_iqe_cleared(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_WAIT(1, 0, 0, 1), STATUS_PA);
    vt_qi_push(e, 0x0, 0);                              /* bad */
    vt_qi_push(e, VT_DESC_WAIT(1, 0, 0, 2), STATUS_PA);
    assert_int_equal(vtd_process_queue(e->v, 16), 1);
    assert_int_equal(iqh(e), 1);
    assert_int_equal(vtd_process_queue(e->v, 16), 0);   /* stopped */
    assert_int_equal(status_word(e), 1);
    vt_wr(e, VT_FSTS, VT_FSTS_IQE);                     /* cleared but not fixed: again */
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_IQE, VT_FSTS_IQE);
    vt_put64(e, e->iq + 16, VT_DESC_WAIT(0, 0, 0, 0));
    vt_wr(e, VT_FSTS, VT_FSTS_IQE);
    assert_int_equal(vtd_process_queue(e->v, 16), 2);
    assert_int_equal(status_word(e), 2);
    struct vtd_stats st;
    vtd_get_stats(e->v, &st);
    assert_int_equal(st.iq_errors, 2);
}

static void test_iqe_raises_fault_event(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_FEADDR, 0xFEE00000);
    vt_wr(e, VT_FECTL, 0);
    vt_qi_push(e, 0x0, 0);
    vtd_process_queue(e->v, 16);
    assert_int_equal(e->msi_count[VTD_EVENT_FAULT], 1);
    assert_int_equal(vt_rd(e, VT_FSTS), VT_FSTS_IQE);
}

static void test_tail_beyond_queue(void **state)
{
    struct vt_env *e = *state;
    vt_wr64(e, VT_IQT, 300ULL << 4);                    /* 256 entries with QS = 0 */
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_IQE, VT_FSTS_IQE);
    assert_int_equal(iqei(e), 1);                       /* invalid tail pointer */
    assert_int_equal(iqh(e), 0);
}

static void test_descriptor_fetch_error(void **state)
{
    struct vt_env *e = *state;
    e->flo = e->iq;
    e->fhi = e->iq + 0x1000;
    vt_qi_push(e, VT_DESC_WAIT(0, 0, 0, 0), 0);
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(iqei(e), 2);
    assert_int_equal(iqh(e), 0);
}

static void test_status_write_error(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_WAIT(1, 0, 0, 5), VT_MEM_SIZE + 0x1000ULL); /* no memory there */
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_IQE, VT_FSTS_IQE);
    assert_int_equal(iqh(e), 0);
}

static void test_queue_wraps(void **state)
{
    struct vt_env *e = *state;
    unsigned done = 0;
    for (unsigned batch = 0; batch < 3; batch++) {
        for (unsigned i = 0; i < 100; i++)
            vt_qi_push(e, VT_DESC_WAIT(1, 0, 0, batch * 100 + i), STATUS_PA);
        done += vtd_process_queue(e->v, 1000);
    }
    assert_int_equal(done, 300);
    assert_int_equal(iqh(e), 300 % 256);
    assert_int_equal(status_word(e), 299);
}

static void test_process_respects_max(void **state)
{
    struct vt_env *e = *state;
    for (unsigned i = 0; i < 5; i++)
        vt_qi_push(e, VT_DESC_WAIT(0, 0, 0, 0), 0);
    assert_int_equal(vtd_process_queue(e->v, 2), 2);
    assert_int_equal(iqh(e), 2);
    assert_int_equal(vtd_process_queue(e->v, 100), 3);
    assert_int_equal(vtd_process_queue(e->v, 100), 0);  /* empty: IQH == IQT */
}

static void test_disabled_queue_fetches_nothing(void **state)
{
    struct vt_env *e = *state;
    vt_qi_push(e, VT_DESC_WAIT(1, 0, 0, 9), STATUS_PA);
    vt_gcmd(e, 0, VT_GCMD_QIE, 0);
    assert_int_equal(vtd_process_queue(e->v, 16), 0);
    assert_int_equal(status_word(e), 0);
}

static void test_largest_queue_size(void **state)
{
    struct vt_env *e = *state;
    vt_gcmd(e, 0, VT_GCMD_QIE, 0);
    vt_qi_enable(e, 7);                                 /* QS 7: 2^15 entries, QT [18:4] full */
    vt_wr64(e, VT_IQT, 0x7FFFULL << 4);                 /* the last entry: a valid tail */
    assert_int_equal(vtd_process_queue(e->v, 1), 0);    /* slot 0 is zero: invalid type */
    assert_int_equal(iqei(e), 3);                       /* not 1: the tail was accepted */
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_wait_status_write),
        T(test_wait_interrupt_sets_iwc_and_sends),
        T(test_wait_interrupt_not_repeated_while_iwc),
        T(test_wait_interrupt_masked_pends),
        T(test_clearing_iwc_clears_pending_ip),
        T(test_wait_status_and_interrupt_together),
        T(test_fenced_wait_after_invalidations),
        T(test_context_cache_descriptor_granularities),
        T(test_iotlb_descriptor_granularities),
        T(test_iotlb_descriptor_am_beyond_mamv),
        T(test_devtlb_descriptor_to_host),
        cmocka_unit_test(test_devtlb_descriptor_invalid_without_dt),
        T(test_invalid_types_give_iqe),
        T(test_reserved_fields_give_iqe),
        T(test_queue_stops_until_iqe_cleared),
        T(test_iqe_raises_fault_event),
        T(test_tail_beyond_queue),
        T(test_descriptor_fetch_error),
        T(test_status_write_error),
        T(test_queue_wraps),
        T(test_process_respects_max),
        T(test_disabled_queue_fetches_nothing),
        T(test_largest_queue_size),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
