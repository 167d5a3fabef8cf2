/* test_smmuv3_ats.c — the SMMUv3 model's ATS side: ATS Translation Requests allowed or refused
 * per SMMUEN and STE.EATS with the architected completions and events, no data access, and
 * CMD_ATC_INV forwarded to the host with the span IHI 0070 §4.5.1 defines, completed before a
 * following CMD_SYNC. Field positions and event numbers are typed in from IHI 0070. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

#define PABASE 0x41000000ULL
#define SID 3
#define F_BAD_ATS_TREQ 0x05 /* §7.3.6 */
#define STE_EATS_SHIFT 28   /* STE bits [93:92] = dword 1 [29:28] (§5.2) */
#define IDR0_ATS (1u << 10) /* §6.3.1 */

/* What the host saw: ATC invalidations and MSIs, in order. */
struct seen {
    unsigned n;
    char order[16];
    uint32_t sid, ssid;
    bool ssv, global;
    uint64_t addr;
    unsigned size_log2;
};
static struct seen seen;

static void on_atc_inv(void *ctx, uint32_t sid, uint32_t ssid, bool ssv, uint64_t addr,
                       unsigned size_log2, bool global)
{
    (void)ctx;
    if (seen.n < sizeof(seen.order))
        seen.order[seen.n++] = 'A';
    seen.sid = sid, seen.ssid = ssid, seen.ssv = ssv, seen.addr = addr;
    seen.size_log2 = size_log2, seen.global = global;
}

static void on_msi(void *ctx, uint64_t addr, uint32_t data)
{
    if (seen.n < sizeof(seen.order))
        seen.order[seen.n++] = 'S';
    smt_host_ops.msi(ctx, addr, data);
}

struct fx {
    struct smt_env e;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
};

/* smt_env_init, then the model re-created with an atc_inv callback and brought up again the
 * same way (registers as smt_env_init writes them). */
static int setup_cfg(void **state, bool ats)
{
    static struct fx f;
    static struct smmu_host_ops ops;
    struct smmu_config cfg;

    memset(&seen, 0, sizeof(seen));
    smmu_config_default(&cfg);
    cfg.thread_safe = false;
    cfg.ats = ats;
    if (smt_env_init(&f.e, &cfg, 8))
        return -1;
    ops = smt_host_ops;
    ops.atc_inv = on_atc_inv;
    ops.msi = on_msi;
    smmu_destroy(f.e.smmu);
    if (smmu_create(&f.e.smmu, &f.e.cfg, &ops, &f.e.mem, NULL))
        return -1;
    smmu_mmio_write(f.e.smmu, SMT_STRTAB_BASE, f.e.strtab, 8);
    smt_wr(&f.e, SMT_STRTAB_BASE_CFG, f.e.sid_bits);
    smmu_mmio_write(f.e.smmu, SMT_CMDQ_BASE, f.e.cmdq | f.e.cmdq_log2, 8);
    smt_wr(&f.e, SMT_CMDQ_PROD, 0);
    smt_wr(&f.e, SMT_CMDQ_CONS, 0);
    smmu_mmio_write(f.e.smmu, SMT_EVENTQ_BASE, f.e.evtq | f.e.evtq_log2, 8);
    smt_wr(&f.e, SMT_EVENTQ_PROD, 0);
    smt_wr(&f.e, SMT_EVENTQ_CONS, 0);
    smt_wr(&f.e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    smt_simple_stream(&f.e, SID, &f.pt, &f.cd, &f.cdpa);
    *state = &f;
    return 0;
}
static int setup(void **state) { return setup_cfg(state, true); }
static int setup_no_ats(void **state) { return setup_cfg(state, false); }

static int teardown(void **state)
{
    struct fx *f = *state;
    smt_env_fini(&f->e);
    return 0;
}

static void set_eats(struct fx *f, unsigned eats)
{
    uint64_t a = f->e.strtab + 64ULL * SID + 8;
    smt_w64(&f->e.mem, a, (smt_r64(&f->e.mem, a) & ~(3ULL << STE_EATS_SHIFT)) |
                              ((uint64_t)eats << STE_EATS_SHIFT));
    smt_cmd(&f->e, SMT_OP_CFGI_STE | ((uint64_t)SID << 32), 0);
    smt_run(&f->e);
}

static void ats_req(struct fx *f, uint64_t iova, bool write, struct smmu_txn_rsp *r)
{
    struct smmu_txn_req req = {.sid = SID, .iova = iova, .write = write, .ats = true};
    memset(r, 0xA5, sizeof(*r));
    smmu_translate(f->e.smmu, &req, r);
}

static unsigned pop_events(struct fx *f, uint64_t rec[4])
{
    unsigned n = 0;
    uint64_t tmp[4];
    while (smt_evt_pop(&f->e, tmp)) {
        if (!n)
            memcpy(rec, tmp, sizeof(tmp));
        n++;
    }
    return n;
}

static void test_idr0_ats_follows_config(void **state)
{
    struct fx *f = *state;
    assert_int_equal(smt_rd(&f->e, SMT_IDR0) & IDR0_ATS, f->e.cfg.ats ? IDR0_ATS : 0);
}

static void test_request_refused_when_eats_is_zero(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    uint64_t rec[4] = { 0 };
    smt_pt_map(&f->pt, 0x10000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    ats_req(f, 0x10000, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_UR);
    assert_int_equal(pop_events(f, rec), 1);
    assert_int_equal(rec[0] & 0xFF, F_BAD_ATS_TREQ);
    assert_int_equal(rec[0] >> 32, SID);
    assert_int_equal(rec[2], 0x10000);
    /* The same address as an ordinary transaction translates (the event's very point). */
    smt_translate(&f->e, SID, 0x10000, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PABASE);
}

static void test_request_allowed_with_eats_full_no_data_access(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    uint64_t rec[4];
    smt_pt_map(&f->pt, 0x20000, PABASE + 0x3000, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    smt_w64(&f->e.mem, PABASE + 0x3000 + 0x18, 0x1122334455667788ULL);
    set_eats(f, 1);
    uint64_t writes = f->e.mem.writes;
    ats_req(f, 0x20018, true, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_SUCCESS);
    assert_int_equal(r.pa, PABASE + 0x3018);
    assert_int_equal(r.page_shift, 12);
    assert_int_equal(r.perm & (SMMU_PERM_R | SMMU_PERM_W), SMMU_PERM_R | SMMU_PERM_W);
    assert_int_equal(pop_events(f, rec), 0);
    /* Nothing written anywhere (no data access, no event), the data untouched. */
    assert_int_equal(f->e.mem.writes, writes);
    assert_int_equal(smt_r64(&f->e.mem, PABASE + 0x3018), 0x1122334455667788ULL);
}

static void test_read_only_page_grants_read_only(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    smt_pt_map(&f->pt, 0x30000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0 | SMT_PTE_AP_RO);
    set_eats(f, 1);
    ats_req(f, 0x30000, true, &r); /* asks for read + write (NW == 0) */
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_SUCCESS);
    assert_int_equal(r.perm & (SMMU_PERM_R | SMMU_PERM_W), SMMU_PERM_R);
}

static void test_unmapped_page_completes_without_access_or_event(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    uint64_t rec[4];
    set_eats(f, 1);
    /* read-only (NW == 1) and read + write (NW == 0) requests alike */
    for (int w = 0; w < 2; w++) {
        uint64_t writes = f->e.mem.writes;
        ats_req(f, 0x7770000, w, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
        assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_SUCCESS);
        assert_int_equal(r.perm, 0);
        /* no memory written: no data access, no event record */
        assert_int_equal(f->e.mem.writes, writes);
        assert_int_equal(pop_events(f, rec), 0); /* §3.9.1: no fault events for ATS */
    }
}

static void test_bypass_ste_refuses_with_event(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    uint64_t rec[4];
    struct smt_ste ste;
    memset(&ste, 0, sizeof(ste));
    ste.v = true;
    ste.config = 4; /* bypass: effective EATS 0b00 even if the field says otherwise */
    smt_ste_at(&f->e, SID, &ste);
    set_eats(f, 1);
    ats_req(f, 0x1000, false, &r);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_UR);
    assert_int_equal(pop_events(f, rec), 1);
    assert_int_equal(rec[0] & 0xFF, F_BAD_ATS_TREQ);
}

static void test_bad_ste_gives_ca_and_no_event(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    uint64_t rec[4];
    struct smt_ste ste;
    smt_ste_s1(&ste, f->cdpa);
    ste.config = 6; /* stage 2 without S2P: ILLEGAL, C_BAD_STE for a transaction */
    smt_ste_at(&f->e, SID, &ste);
    smt_cmd(&f->e, SMT_OP_CFGI_STE | ((uint64_t)SID << 32), 0);
    smt_run(&f->e);
    ats_req(f, 0x1000, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_CA);
    assert_int_equal(pop_events(f, rec), 0); /* §7.3.6: no C_BAD_STE for a TR */
}

static void test_smmu_disabled_refuses(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    set_eats(f, 1);
    smt_wr(&f->e, SMT_CR0, SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    ats_req(f, 0x1000, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_UR);
}

static void test_no_ats_interface_refuses(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    set_eats(f, 1);
    ats_req(f, 0x1000, false, &r);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_UR);
}

/* CMD_ATC_INV: d0 = 0x40 | Global[9] | SSV[11] | SSID[31:12] | SID[63:32]; d1 = Size[5:0] |
 * Address[63:12] (§4.5.1). */
static void test_atc_inv_forwarded_with_aligned_span(void **state)
{
    struct fx *f = *state;
    /* Size 4: 16 pages (64 KiB), Address 0x123456000 aligned down to 0x123450000. */
    smt_cmd(&f->e, SMT_OP_ATC_INV | ((uint64_t)7 << 32), 0x123456000ULL | 4);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.sid, 7);
    assert_false(seen.ssv);
    assert_false(seen.global);
    assert_int_equal(seen.addr, 0x123450000ULL);
    assert_int_equal(seen.size_log2, 16);
}

static void test_atc_inv_pasid_global_and_all(void **state)
{
    struct fx *f = *state;
    /* SSV with SSID 5 and Global: forwarded as such. */
    smt_cmd(&f->e, SMT_OP_ATC_INV | (1ULL << 9) | (1ULL << 11) | (5ULL << 12) | (9ULL << 32),
            0x8000ULL);
    smt_run(&f->e);
    assert_true(seen.ssv);
    assert_true(seen.global);
    assert_int_equal(seen.ssid, 5);
    assert_int_equal(seen.addr, 0x8000);
    assert_int_equal(seen.size_log2, 12);
    /* Global without SSV is IGNORED; Size 52 is a 2^64-byte span: everything. */
    smt_cmd(&f->e, SMT_OP_ATC_INV | (1ULL << 9) | (9ULL << 32), 0xABC000ULL | 52);
    smt_run(&f->e);
    assert_false(seen.ssv);
    assert_false(seen.global);
    assert_int_equal(seen.size_log2, 64);
    assert_int_equal(seen.addr, 0);
}

static void test_cmd_sync_completes_after_atc_inv(void **state)
{
    struct fx *f = *state;
    uint64_t slot = smt_alloc(&f->e.mem, 64, 64);
    smt_cmd(&f->e, SMT_OP_ATC_INV | ((uint64_t)SID << 32), 0x4000);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (1ULL << 12) | (0xD00DULL << 32), slot); /* MSI */
    assert_int_equal(smt_run(&f->e), 2);
    assert_int_equal(seen.n, 2);
    assert_memory_equal(seen.order, "AS", 2);
    assert_int_equal(smt_r32(&f->e.mem, slot), 0xD00D);
}

static void test_atc_inv_ignored_while_smmu_disabled(void **state)
{
    struct fx *f = *state;
    smt_wr(&f->e, SMT_CR0, SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    smt_cmd(&f->e, SMT_OP_ATC_INV | ((uint64_t)SID << 32), 0x4000);
    assert_int_equal(smt_run(&f->e), 1); /* consumed, no error */
    assert_int_equal(seen.n, 0);
}

static void test_atc_inv_illegal_without_ats(void **state)
{
    struct fx *f = *state;
    smt_cmd(&f->e, SMT_OP_ATC_INV | ((uint64_t)SID << 32), 0x4000);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal((smt_rd(&f->e, SMT_CMDQ_CONS) >> 24) & 0x7F, 1); /* CERROR_ILL */
    assert_int_equal(seen.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idr0_ats_follows_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idr0_ats_follows_config, setup_no_ats, teardown),
        cmocka_unit_test_setup_teardown(test_request_refused_when_eats_is_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_allowed_with_eats_full_no_data_access, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_read_only_page_grants_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmapped_page_completes_without_access_or_event,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_bypass_ste_refuses_with_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_ste_gives_ca_and_no_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_smmu_disabled_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_ats_interface_refuses, setup_no_ats, teardown),
        cmocka_unit_test_setup_teardown(test_atc_inv_forwarded_with_aligned_span, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atc_inv_pasid_global_and_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmd_sync_completes_after_atc_inv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atc_inv_ignored_while_smmu_disabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atc_inv_illegal_without_ats, setup_no_ats, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
