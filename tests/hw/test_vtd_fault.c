/* test_vtd_fault.c — VT-d model primary fault logging (§7.2.1): record fields (§10.4.14), PPF and
 * FRI, the internal index and its wrap, overflow (PFO), and the fault event through FECTL.IM/IP
 * (§10.4.10). Expected values are the spec's encodings typed in here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_vtd_env.h"

#define SID 0x0310 /* bus 3, device 2, function 0: an empty table, every access faults */
#define FRO 0x100  /* the default CAP.FRO * 16 */
#define NFR 8

static int setup(void **state)
{
    static struct vt_env e;
    struct vtd_config c;
    vtd_config_default(&c);
    c.context_cache.entries = c.iotlb.entries = 0;
    if (vt_init(&e, &c))
        return -1;
    vt_bringup(&e);
    vt_context(&e, SID, 4, 2, 0, vt_page(&e), false);
    vt_wr(&e, VT_FEADDR, 0xFEE00000);
    vt_wr(&e, VT_FEUADDR, 0);
    vt_wr(&e, VT_FEDATA, 0x41);
    *state = &e;
    return 0;
}

static int teardown(void **state)
{
    vt_fini(*state);
    return 0;
}

static void fault(struct vt_env *e, uint64_t iova, bool write)
{
    struct vtd_txn_rsp r;
    vt_tr(e, SID, iova, write, &r);
    assert_int_equal(r.status, VTD_TXN_FAULT);
}

static uint64_t frcd_lo(struct vt_env *e, unsigned i) { return vt_rd64(e, FRO + 16 * i); }
static uint64_t frcd_hi(struct vt_env *e, unsigned i) { return vt_rd64(e, FRO + 16 * i + 8); }
static void clear_f(struct vt_env *e, unsigned i) { vt_wr(e, FRO + 16 * i + 12, 1u << 31); }
static unsigned fri(struct vt_env *e) { return (vt_rd(e, VT_FSTS) >> 8) & 0xFF; }

static void test_record_fields_read(void **state)
{
    struct vt_env *e = *state;
    fault(e, 0x12345678, false);
    assert_int_equal(frcd_lo(e, 0), 0x12345000);           /* FI: the page address */
    uint64_t hi = frcd_hi(e, 0);
    assert_int_equal(hi >> 63, 1);                         /* F */
    assert_int_equal((hi >> 62) & 1, 1);                   /* T1 = 1: read */
    assert_int_equal((hi >> 32) & 0xFF, VT_FR_READ);       /* FR */
    assert_int_equal(hi & 0xFFFF, SID);                    /* SID */
    assert_int_equal((hi >> 28) & 1, 0);                   /* T2 */
    assert_int_equal(vt_rd(e, VT_FSTS), VT_FSTS_PPF);      /* PPF, FRI 0 */
}

static void test_record_fields_write(void **state)
{
    struct vt_env *e = *state;
    fault(e, 0xABC000, true);
    uint64_t hi = frcd_hi(e, 0);
    assert_int_equal((hi >> 62) & 1, 0);                   /* T1 = 0: write */
    assert_int_equal((hi >> 32) & 0xFF, VT_FR_WRITE);
}

static void test_fault_info_above_mgaw_is_zero(void **state)
{
    struct vt_env *e = *state;
    uint64_t iova = 0xFFFF123456789ABCULL;                 /* beyond MGAW 48: reason 4h */
    fault(e, iova, false);
    assert_int_equal(frcd_lo(e, 0), iova & ((1ULL << 48) - 1) & ~0xFFFULL);
    assert_int_equal((frcd_hi(e, 0) >> 32) & 0xFF, VT_FR_ADDR);
}

static void test_ats_fault_marks_translation_request(void **state)
{
    struct vt_env *e = *state;
    struct vtd_txn_req q = {.sid = SID, .iova = 0x5000, .ats = true}; /* TT 00: blocked */
    struct vtd_txn_rsp r;
    vtd_translate(e->v, &q, &r);
    uint64_t hi = frcd_hi(e, 0);
    assert_int_equal((hi >> 32) & 0xFF, VT_FR_TT);
    assert_int_equal((hi >> 28) & 1, 1);                   /* T2 */
    assert_int_equal((hi >> 62) & 1, 0);                   /* T1 */
}

/* §10.4.14 FRCD.AT [125:124] (qword 1 [61:60]): the Address Type of the faulted request, 01b for
 * a translation request, whether the context blocks it (TT 00: Dh) or the root entry is not
 * present (1h); 00b for an untranslated request. RsvdZ without ECAP.DT. */
static void test_ats_fault_records_at_translation_request(void **state)
{
    struct vt_env *e = *state;
    struct vtd_txn_req q = {.sid = SID, .iova = 0x5000, .ats = true};
    struct vtd_txn_rsp r;
    vtd_translate(e->v, &q, &r);
    q.sid = 0x0900; /* bus 9: no root entry */
    vtd_translate(e->v, &q, &r);
    fault(e, 0x6000, false);
    assert_int_equal((frcd_hi(e, 0) >> 32) & 0xFF, VT_FR_TT);
    assert_int_equal((frcd_hi(e, 0) >> 60) & 3, 1);
    assert_int_equal((frcd_hi(e, 1) >> 32) & 0xFF, VT_FR_ROOT_P);
    assert_int_equal((frcd_hi(e, 1) >> 60) & 3, 1);
    assert_int_equal((frcd_hi(e, 2) >> 60) & 3, 0);
    struct vtd_config c;
    vtd_config_default(&c);
    c.dt = false;
    struct vt_env e2;
    assert_int_equal(vt_init(&e2, &c), 0);
    vt_bringup(&e2);
    q.sid = 0x0900;
    vtd_translate(e2.v, &q, &r);
    assert_true(r.fault_recorded);
    assert_int_equal((frcd_hi(&e2, 0) >> 60) & 3, 0);
    vt_fini(&e2);
}

static void test_fault_event_sent_when_unmasked(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_FECTL, 0);
    fault(e, 0x1000, false);
    assert_int_equal(e->msi_count[VTD_EVENT_FAULT], 1);
    assert_int_equal(e->msi_addr[VTD_EVENT_FAULT], 0xFEE00000);
    assert_int_equal(e->msi_data[VTD_EVENT_FAULT], 0x41);
    assert_int_equal(vt_rd(e, VT_FECTL), 0);               /* IP clear: message sent */
    assert_int_equal(e->msi_count[VTD_EVENT_INV_COMPLETE], 0);
}

static void test_no_new_event_while_fault_pending(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_FECTL, 0);
    fault(e, 0x1000, false);
    fault(e, 0x2000, true);
    assert_int_equal(e->msi_count[VTD_EVENT_FAULT], 1);    /* PPF was already set */
    assert_int_equal(frcd_hi(e, 1) >> 63, 1);              /* but the fault is recorded */
    assert_int_equal(frcd_lo(e, 1), 0x2000);
    assert_int_equal(fri(e), 0);                           /* FRI names the first */
}

static void test_masked_event_pends_until_unmasked(void **state)
{
    struct vt_env *e = *state;
    fault(e, 0x1000, false);                               /* IM = 1 from reset */
    assert_int_equal(e->msi_count[VTD_EVENT_FAULT], 0);
    assert_int_equal(vt_rd(e, VT_FECTL), VT_IM | VT_IP);
    vt_wr(e, VT_FECTL, 0);
    assert_int_equal(e->msi_count[VTD_EVENT_FAULT], 1);
    assert_int_equal(vt_rd(e, VT_FECTL), 0);
}

static void test_servicing_status_clears_pending_ip(void **state)
{
    struct vt_env *e = *state;
    fault(e, 0x1000, false);
    assert_int_equal(vt_rd(e, VT_FECTL) & VT_IP, VT_IP);
    clear_f(e, 0);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_PPF, 0);
    assert_int_equal(vt_rd(e, VT_FECTL), VT_IM);           /* IP cleared */
    vt_wr(e, VT_FECTL, 0);
    assert_int_equal(e->msi_count[VTD_EVENT_FAULT], 0);    /* nothing left to send */
}

static void test_ppf_is_or_of_f_fields(void **state)
{
    struct vt_env *e = *state;
    fault(e, 0x1000, false);
    fault(e, 0x2000, false);
    clear_f(e, 0);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_PPF, VT_FSTS_PPF);
    clear_f(e, 1);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_PPF, 0);
    assert_int_equal(frcd_hi(e, 1) >> 63, 0);
}

static void test_new_event_after_service(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_FECTL, 0);
    fault(e, 0x1000, false);
    clear_f(e, 0);
    fault(e, 0x2000, false);                               /* PPF 0 -> 1 again */
    assert_int_equal(e->msi_count[VTD_EVENT_FAULT], 2);
    assert_int_equal(fri(e), 1);                           /* recorded at the next index */
}

static void test_internal_index_wraps(void **state)
{
    struct vt_env *e = *state;
    for (unsigned i = 0; i < NFR; i++) {
        fault(e, 0x1000ULL * (i + 1), false);
        clear_f(e, i);
    }
    fault(e, 0x99000, false);                              /* index NFR wraps to 0 */
    assert_int_equal(frcd_lo(e, 0), 0x99000);
    assert_int_equal(fri(e), 0);
}

static void test_overflow_sets_pfo(void **state)
{
    struct vt_env *e = *state;
    for (unsigned i = 0; i < NFR; i++)
        fault(e, 0x1000ULL * (i + 1), false);
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_PFO, 0);
    fault(e, 0x77000, false);                              /* record 0 still holds a fault */
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_PFO, VT_FSTS_PFO);
    assert_int_equal(frcd_lo(e, 0), 0x1000);               /* not overwritten */
    fault(e, 0x78000, false);
    struct vtd_stats st;
    vtd_get_stats(e->v, &st);
    assert_int_equal(st.faults_recorded, NFR);
    assert_int_equal(st.faults_lost, 2);
    assert_int_equal(st.fault_overflows, 1);               /* PFO was already set */
    clear_f(e, 0);                                         /* PFO still blocks recording */
    fault(e, 0x79000, false);
    assert_int_equal(frcd_hi(e, 0) >> 63, 0);
    vt_wr(e, VT_FSTS, VT_FSTS_PFO);                        /* RW1C */
    assert_int_equal(vt_rd(e, VT_FSTS) & VT_FSTS_PFO, 0);
    fault(e, 0x7A000, false);
    assert_int_equal(frcd_lo(e, 0), 0x7A000);
}

static void test_index_resets_when_translation_disabled(void **state)
{
    struct vt_env *e = *state;
    fault(e, 0x1000, false);
    fault(e, 0x2000, false);
    clear_f(e, 0);
    clear_f(e, 1);
    vt_gcmd(e, 0, VT_GCMD_TE, 0);                          /* TES and IRES both clear */
    vt_gcmd(e, VT_GCMD_TE, 0, 0);
    fault(e, 0x3000, false);
    assert_int_equal(frcd_lo(e, 0), 0x3000);
}

static void test_single_fault_record(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.nfr = 1;
    c.context_cache.entries = 0;
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    vt_bringup(&e);
    vt_context(&e, SID, 4, 2, 0, vt_page(&e), false);
    assert_int_equal((vt_rd64(&e, VT_CAP) >> 40) & 0xFF, 0);
    fault(&e, 0x1000, false);
    fault(&e, 0x2000, false);
    assert_int_equal(vt_rd(&e, VT_FSTS) & (VT_FSTS_PFO | VT_FSTS_PPF), VT_FSTS_PFO | VT_FSTS_PPF);
    vt_fini(&e);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_record_fields_read),
        T(test_record_fields_write),
        T(test_fault_info_above_mgaw_is_zero),
        T(test_ats_fault_marks_translation_request),
        T(test_ats_fault_records_at_translation_request),
        T(test_fault_event_sent_when_unmasked),
        T(test_no_new_event_while_fault_pending),
        T(test_masked_event_pends_until_unmasked),
        T(test_servicing_status_clears_pending_ip),
        T(test_ppf_is_or_of_f_fields),
        T(test_new_event_after_service),
        T(test_internal_index_wraps),
        T(test_overflow_sets_pfo),
        T(test_index_resets_when_translation_disabled),
        cmocka_unit_test(test_single_fault_record),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
