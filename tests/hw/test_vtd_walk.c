/* test_vtd_walk.c — VT-d model request path in legacy mode: root and context entries, the
 * second-stage walk at each page size and table depth, access rights, pass-through, ATS
 * translation requests, and each fault reason of VT-d §7.1.3 the model implements. Expected
 * values are computed here from the §9 entry formats, never read back from the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_vtd_env.h"

#define SID 0x0108 /* bus 1, device 1, function 0 */
#define DID 3

struct fx {
    struct vt_env e;
    uint64_t pt; /* second-stage table root */
};

/* The walk is tested without caches, so that every request reads the tables as they are
 * now (test_vtd_cache.c covers what the caches keep). */
static int fx_init(void **state, const struct vtd_config *cfg, unsigned aw)
{
    static struct fx f;
    struct vtd_config c;
    if (cfg)
        c = *cfg;
    else
        vtd_config_default(&c);
    c.context_cache.entries = c.iotlb.entries = 0;
    for (unsigned i = 0; i < 4; i++)
        c.psc[i].entries = 0;
    if (vt_init(&f.e, &c))
        return -1;
    vt_bringup(&f.e);
    f.pt = vt_page(&f.e);
    vt_context(&f.e, SID, DID, aw, 0, f.pt, false);
    *state = &f;
    return 0;
}

static int setup(void **state) { return fx_init(state, NULL, 2); }

static int teardown(void **state)
{
    struct fx *f = *state;
    vt_fini(&f->e);
    return 0;
}

static void expect_ok(struct fx *f, uint64_t iova, bool write, uint64_t pa, unsigned shift)
{
    struct vtd_txn_rsp r;
    vt_tr(&f->e, SID, iova, write, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.pa, pa);
    assert_int_equal(r.page_shift, shift);
    assert_int_equal(r.did, DID);
}

static void expect_fault(struct fx *f, uint16_t sid, uint64_t iova, bool write, unsigned reason)
{
    struct vtd_txn_rsp r;
    vt_tr(&f->e, sid, iova, write, &r);
    assert_int_equal(r.status, VTD_TXN_FAULT);
    assert_int_equal(r.fault_reason, reason);
}

static void test_walk_4k_read_write(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x7f1234567000ULL, 0x3456000, 12, VT_R | VT_W);
    expect_ok(f, 0x7f1234567abcULL, false, 0x3456abc, 12);
    expect_ok(f, 0x7f1234567008ULL, true, 0x3456008, 12);
    struct vtd_txn_rsp r;
    vt_tr(&f->e, SID, 0x7f1234567000ULL, false, &r);
    assert_int_equal(r.perm, VTD_PERM_R | VTD_PERM_W);
    assert_false(r.passthrough);
}

static void test_walk_2m_leaf(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x40200000ULL, 0x80000000ULL, 21, VT_R | VT_W);
    expect_ok(f, 0x40200000ULL + 0x1ABCDE, false, 0x80000000ULL + 0x1ABCDE, 21);
}

static void test_walk_1g_leaf(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x8040000000ULL, 0x1C0000000ULL, 30, VT_R);
    expect_ok(f, 0x8040000000ULL + 0x2345678, false, 0x1C0000000ULL + 0x2345678, 30);
}

static void test_walk_3level_aw39(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.sagaw39 = true;
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, 1), 0); /* AW 001: 39-bit, 3-level */
    vt_map(&f->e, f->pt, 3, 0x7FFFFFF000ULL, 0x9000, 12, VT_R | VT_W);
    expect_ok(f, 0x7FFFFFF010ULL, true, 0x9010, 12);
    expect_fault(f, SID, 1ULL << 39, false, VT_FR_ADDR); /* beyond the 39-bit AGAW */
    teardown((void **)&f);
}

static void test_walk_5level_aw57(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.sagaw57 = true;
    c.mgaw = 57;
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, 3), 0); /* AW 011: 57-bit, 5-level */
    uint64_t iova = 0x1ABCDEF0123000ULL;                /* bits above 48 in use */
    vt_map(&f->e, f->pt, 5, iova, 0x2000000, 12, VT_R | VT_W);
    expect_ok(f, iova + 0x44, false, 0x2000044, 12);
    expect_fault(f, SID, 1ULL << 57, false, VT_FR_ADDR);
    teardown((void **)&f);
}

static void test_read_only_page_faults_write(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R);
    expect_ok(f, 0x10000, false, 0x20000, 12);
    expect_fault(f, SID, 0x10000, true, VT_FR_WRITE);
}

static void test_write_only_page_faults_read(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_W);
    expect_ok(f, 0x10000, true, 0x20000, 12);
    expect_fault(f, SID, 0x10000, false, VT_FR_READ);
}

static void test_not_present_leaf_faults_by_access(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R | VT_W);
    expect_fault(f, SID, 0x11000, false, VT_FR_READ);  /* the next PTE is all zero */
    expect_fault(f, SID, 0x11000, true, VT_FR_WRITE);
    expect_fault(f, SID, 0x40000000ULL, false, VT_FR_READ); /* a missing PDPT entry */
}

static void test_table_rights_restrict_leaf(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x200000, 0x30000, 12, VT_R | VT_W);
    /* the PDE that covers 0x200000: R only */
    uint64_t pml4e = vt_get64(&f->e, f->pt) & ~0xFFFULL;
    uint64_t pdpe = vt_get64(&f->e, pml4e) & ~0xFFFULL;
    uint64_t pde_slot = pdpe + 8 * 1;
    vt_put64(&f->e, pde_slot, (vt_get64(&f->e, pde_slot) & ~3ULL) | VT_R);
    expect_ok(f, 0x200000, false, 0x30000, 12);
    expect_fault(f, SID, 0x200000, true, VT_FR_WRITE);
}

static void test_root_not_present(void **state)
{
    struct fx *f = *state;
    expect_fault(f, 0x0208, 0x1000, false, VT_FR_ROOT_P); /* bus 2 has no root entry */
}

static void test_context_not_present(void **state)
{
    struct fx *f = *state;
    expect_fault(f, 0x0110, 0x1000, false, VT_FR_CTX_P); /* bus 1, device 2 */
}

static void test_context_aw_not_in_sagaw(void **state)
{
    struct fx *f = *state;
    static const unsigned aws[] = {0, 1, 3, 4, 7}; /* SAGAW lists only 010 */
    for (unsigned i = 0; i < 5; i++) {
        uint16_t sid = (uint16_t)(0x0120 + i);
        vt_context(&f->e, sid, DID, aws[i], 0, f->pt, false);
        expect_fault(f, sid, 0x1000, false, VT_FR_CTX_INV);
    }
}

static void test_context_tt_invalid(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.dt = c.pt = false;
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, 2), 0);
    vt_context(&f->e, 0x0130, DID, 2, 3, f->pt, false); /* TT 11: reserved */
    vt_context(&f->e, 0x0131, DID, 2, 1, f->pt, false); /* TT 01 without ECAP.DT */
    vt_context(&f->e, 0x0132, DID, 2, 2, 0, false);     /* TT 10 without ECAP.PT */
    expect_fault(f, 0x0130, 0x1000, false, VT_FR_CTX_INV);
    expect_fault(f, 0x0131, 0x1000, false, VT_FR_CTX_INV);
    expect_fault(f, 0x0132, 0x1000, false, VT_FR_CTX_INV);
    teardown((void **)&f);
}

static void test_address_beyond_mgaw(void **state)
{
    struct fx *f = *state;
    expect_fault(f, SID, 1ULL << 48, false, VT_FR_ADDR);
    expect_fault(f, SID, ~0ULL, true, VT_FR_ADDR);
}

static void test_paging_entry_access_error(void **state)
{
    struct fx *f = *state;
    uint64_t leaf = vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R | VT_W);
    f->e.flo = leaf & ~0xFFFULL;
    f->e.fhi = f->e.flo + 0x1000;
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_ACCESS);
    f->e.flo = f->pt; /* the top-level table itself */
    f->e.fhi = f->pt + 0x1000;
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_ACCESS);
}

/* §7.1.3 (rev. 3.0 on): an error reading the second-stage table that the context entry's SLPTPTR
 * names is the paging-entry access error, 7h, like an error at any lower level; it is not
 * 3h (invalid programming of the context entry, the reading of the rev. 1.x-2.x text). */
static void test_slptptr_table_access_error_is_7h(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R | VT_W);
    expect_ok(f, 0x10000, false, 0x20000, 12);
    f->e.flo = f->pt;
    f->e.fhi = f->pt + 0x1000;
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_ACCESS);
}

static void test_root_entry_access_error(void **state)
{
    struct fx *f = *state;
    f->e.flo = f->e.root;
    f->e.fhi = f->e.root + 0x1000;
    expect_fault(f, SID, 0x1000, false, VT_FR_ROOT_ACCESS);
}

static void test_context_entry_access_error(void **state)
{
    struct fx *f = *state;
    uint64_t ctp = vt_get64(&f->e, f->e.root + 16) & ~0xFFFULL;
    f->e.flo = ctp;
    f->e.fhi = ctp + 0x1000;
    expect_fault(f, SID, 0x1000, false, VT_FR_CTX_ACCESS);
}

static void test_root_entry_reserved_bits(void **state)
{
    struct fx *f = *state;
    uint64_t re = f->e.root + 16, lo = vt_get64(&f->e, re);
    static const uint64_t bad[] = {1ULL << 1, 1ULL << 11, 1ULL << 46, 1ULL << 63};
    for (unsigned i = 0; i < 4; i++) {
        vt_put64(&f->e, re, lo | bad[i]);
        expect_fault(f, SID, 0x1000, false, VT_FR_ROOT_RSVD);
    }
    vt_put64(&f->e, re, lo);
    vt_put64(&f->e, re + 8, 1); /* the upper 64 bits are reserved in legacy mode */
    expect_fault(f, SID, 0x1000, false, VT_FR_ROOT_RSVD);
}

static void test_context_entry_reserved_bits(void **state)
{
    struct fx *f = *state;
    uint64_t ce = (vt_get64(&f->e, f->e.root + 16) & ~0xFFFULL) + 16 * (SID & 0xFF);
    uint64_t lo = vt_get64(&f->e, ce), hi = vt_get64(&f->e, ce + 8);
    static const uint64_t bad_lo[] = {1ULL << 4, 1ULL << 11, 1ULL << 46};
    static const uint64_t bad_hi[] = {1ULL << 7, 1ULL << 24, 1ULL << 63};
    for (unsigned i = 0; i < 3; i++) {
        vt_put64(&f->e, ce, lo | bad_lo[i]);
        expect_fault(f, SID, 0x1000, false, VT_FR_CTX_RSVD);
        vt_put64(&f->e, ce, lo);
        vt_put64(&f->e, ce + 8, hi | bad_hi[i]);
        expect_fault(f, SID, 0x1000, false, VT_FR_CTX_RSVD);
        vt_put64(&f->e, ce + 8, hi);
    }
    vt_put64(&f->e, ce + 8, hi | (1ULL << 3)); /* IGN [70:67]: not reserved */
    expect_fault(f, SID, 0x1000, false, VT_FR_READ);
}

static void test_context_domain_id_beyond_nd(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.nd = 2; /* 4 + 2*2 = 8-bit domain ids */
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, 2), 0);
    vt_context(&f->e, 0x0140, 0x100, 2, 0, f->pt, false);
    expect_fault(f, 0x0140, 0x1000, false, VT_FR_CTX_RSVD);
    vt_context(&f->e, 0x0141, 0xFF, 2, 0, f->pt, false);
    expect_fault(f, 0x0141, 0x1000, false, VT_FR_READ); /* valid context, empty table */
    teardown((void **)&f);
}

static void test_paging_entry_reserved_bits(void **state)
{
    struct fx *f = *state;
    uint64_t leaf = vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R | VT_W);
    uint64_t pte = vt_get64(&f->e, leaf);
    vt_put64(&f->e, leaf, pte | (1ULL << 46));   /* address bit at HAW */
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_RSVD);
    vt_put64(&f->e, leaf, pte | (1ULL << 51));
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_RSVD);
    vt_put64(&f->e, leaf, pte | (1ULL << 11) | (1ULL << 62) | (1ULL << 52) | (1ULL << 63));
    expect_ok(f, 0x10000, false, 0x20000, 12); /* SNP (SC), TM (DT), IGN bits: allowed */
    vt_put64(&f->e, leaf, pte);
    uint64_t pml4e = vt_get64(&f->e, f->pt);
    vt_put64(&f->e, f->pt, pml4e | (1ULL << 11)); /* bit 11 of a table entry */
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_RSVD);
    vt_put64(&f->e, f->pt, pml4e | VT_PS);        /* PS is reserved in a PML4E */
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_RSVD);
}

static void test_snp_and_tm_reserved_without_sc_dt(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.sc = c.dt = false;
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, 2), 0);
    uint64_t leaf = vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R | VT_W);
    uint64_t pte = vt_get64(&f->e, leaf);
    vt_put64(&f->e, leaf, pte | (1ULL << 11));
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_RSVD);
    vt_put64(&f->e, leaf, pte | (1ULL << 62));
    expect_fault(f, SID, 0x10000, false, VT_FR_PT_RSVD);
    teardown((void **)&f);
}

static void test_large_leaf_reserved_address_bits(void **state)
{
    struct fx *f = *state;
    uint64_t pde = vt_map(&f->e, f->pt, 4, 0x400000, 0x800000, 21, VT_R | VT_W);
    vt_put64(&f->e, pde, vt_get64(&f->e, pde) | (1ULL << 12)); /* [20:12] of a 2M leaf */
    expect_fault(f, SID, 0x400000, false, VT_FR_PT_RSVD);
    uint64_t pdpe = vt_map(&f->e, f->pt, 4, 0x80000000ULL, 0x40000000ULL, 30, VT_R);
    vt_put64(&f->e, pdpe, vt_get64(&f->e, pdpe) | (1ULL << 29)); /* [29:12] of a 1G leaf */
    expect_fault(f, SID, 0x80000000ULL, false, VT_FR_PT_RSVD);
}

static void test_large_page_without_sllps(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.sllps_1g = false;
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, 2), 0);
    vt_map(&f->e, f->pt, 4, 0x40000000ULL, 0x40000000ULL, 30, VT_R | VT_W);
    expect_fault(f, SID, 0x40000000ULL, false, VT_FR_PT_RSVD);
    vt_map(&f->e, f->pt, 4, 0x200000, 0x200000, 21, VT_R | VT_W); /* 2M still allowed */
    expect_ok(f, 0x200000, false, 0x200000, 21);
    teardown((void **)&f);
}

static void test_not_present_entry_reserved_bits_ignored(void **state)
{
    struct fx *f = *state;
    uint64_t leaf = vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R | VT_W);
    vt_put64(&f->e, leaf, (1ULL << 51) | (1ULL << 11) | 0x20000); /* R = W = 0 */
    expect_fault(f, SID, 0x10000, false, VT_FR_READ);
}

static void test_passthrough_context(void **state)
{
    struct fx *f = *state;
    vt_context(&f->e, 0x0150, 9, 2, 2, 0, false); /* TT 10: pass-through */
    struct vtd_txn_rsp r;
    vt_tr(&f->e, 0x0150, 0x123456789ULL, true, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.pa, 0x123456789ULL);
    assert_true(r.passthrough);
    assert_int_equal(r.did, 9);
}

static void test_translation_disabled_passes_through(void **state)
{
    struct fx *f = *state;
    vt_gcmd(&f->e, 0, VT_GCMD_TE, 0);
    struct vtd_txn_rsp r;
    vt_tr(&f->e, 0x7777, 0xABCDE123ULL, false, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.pa, 0xABCDE123ULL);
    assert_true(r.passthrough);
}

static void test_ats_translation_request(void **state)
{
    struct fx *f = *state;
    vt_context(&f->e, 0x0160, DID, 2, 1, f->pt, false); /* TT 01: device-TLB enabled */
    vt_map(&f->e, f->pt, 4, 0x10000, 0x20000, 12, VT_R);
    struct vtd_txn_req q = {.sid = 0x0160, .iova = 0x10000, .ats = true};
    struct vtd_txn_rsp r;
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.pa, 0x20000);
    assert_int_equal(r.perm, VTD_PERM_R); /* R only: the endpoint learns it */
    q.iova = 0x11000;                      /* not present: a completion granting nothing */
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.perm, 0);
    assert_false(r.fault_recorded);
    q.sid = SID;                           /* TT 00: translation requests blocked */
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_FAULT);
    assert_int_equal(r.fault_reason, VT_FR_TT);
    assert_true(r.fault_recorded);
}

/* §4.2.3: a translation request for an address above 2^X - 1 (X = min(MGAW, AGAW)) completes
 * successfully with R = W = 0; it is not a fault and nothing is recorded. An untranslated
 * request there is still fault 4h. */
static void test_ats_above_mgaw_completes_without_access(void **state)
{
    struct fx *f = *state;
    vt_context(&f->e, 0x0160, DID, 2, 1, f->pt, false); /* TT 01 */
    struct vtd_txn_req q = {.sid = 0x0160, .iova = 1ULL << 48, .ats = true};
    struct vtd_txn_rsp r;
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.perm, 0);
    assert_int_equal(r.fault_reason, 0);
    assert_false(r.fault_recorded);
    q.iova = ~0ULL;
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.perm, 0);
    assert_int_equal(vt_rd(&f->e, VT_FSTS), 0);
    struct vtd_stats st;
    vtd_get_stats(f->e.v, &st);
    assert_int_equal(st.faults, 0);
    expect_fault(f, 0x0160, 1ULL << 48, false, VT_FR_ADDR);
}

/* §3.15 (rev. 4.x): untranslated requests and translation requests that result in an address in
 * the interrupt range 0xFEE0_0000-0xFEEF_FFFF are blocked (LGN.4, fault reason Eh) and
 * recorded. An untranslated request results in one address; a translation request in the
 * whole page it would grant. */
static void test_interrupt_range_mapping_blocked(void **state)
{
    struct fx *f = *state;
    struct vtd_txn_rsp r;
    vt_map(&f->e, f->pt, 4, 0x10000, 0xFEE00000ULL, 12, VT_R | VT_W);
    vt_map(&f->e, f->pt, 4, 0x11000, 0xFEEFF000ULL, 12, VT_R | VT_W);
    vt_map(&f->e, f->pt, 4, 0x12000, 0xFEDFF000ULL, 12, VT_R | VT_W); /* just below */
    vt_map(&f->e, f->pt, 4, 0x13000, 0xFEF00000ULL, 12, VT_R | VT_W); /* just above */
    expect_fault(f, SID, 0x10000, false, VT_FR_INTR);
    expect_fault(f, SID, 0x11FFC, true, VT_FR_INTR);
    vt_tr(&f->e, SID, 0x10000, true, &r);
    assert_true(r.fault_recorded);
    expect_ok(f, 0x12FFF, true, 0xFEDFFFFFULL, 12);
    expect_ok(f, 0x13000, false, 0xFEF00000ULL, 12);
    /* a 1 GiB leaf over 3-4 GiB: blocked only where the address lands in the range */
    vt_map(&f->e, f->pt, 4, 0x40000000ULL, 0xC0000000ULL, 30, VT_R | VT_W);
    expect_ok(f, 0x40001000ULL, false, 0xC0001000ULL, 30);
    expect_fault(f, SID, 0x40000000ULL + 0x3EE12340ULL, false, VT_FR_INTR);
    /* translation requests (TT 01): the granted page must not reach the range */
    vt_context(&f->e, 0x0160, DID, 2, 1, f->pt, false);
    struct vtd_txn_req q = {.sid = 0x0160, .iova = 0x10000, .ats = true};
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_FAULT);
    assert_int_equal(r.fault_reason, VT_FR_INTR);
    q.iova = 0x40001000ULL; /* the 1 GiB page covers the range */
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_FAULT);
    assert_int_equal(r.fault_reason, VT_FR_INTR);
    q.iova = 0x12000;
    vtd_translate(f->e.v, &q, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.pa, 0xFEDFF000ULL);
}

static void test_fpd_suppresses_recording(void **state)
{
    struct fx *f = *state;
    vt_context(&f->e, 0x0170, DID, 2, 0, f->pt, true); /* FPD = 1 */
    struct vtd_txn_rsp r;
    vt_tr(&f->e, 0x0170, 0x99000, false, &r);
    assert_int_equal(r.status, VTD_TXN_FAULT);
    assert_int_equal(r.fault_reason, VT_FR_READ);
    assert_false(r.fault_recorded);
    assert_int_equal(vt_rd(&f->e, VT_FSTS), 0);
    struct vtd_stats st;
    vtd_get_stats(f->e.v, &st);
    assert_int_equal(st.faults_suppressed, 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_walk_4k_read_write),
        T(test_walk_2m_leaf),
        T(test_walk_1g_leaf),
        cmocka_unit_test(test_walk_3level_aw39),
        cmocka_unit_test(test_walk_5level_aw57),
        T(test_read_only_page_faults_write),
        T(test_write_only_page_faults_read),
        T(test_not_present_leaf_faults_by_access),
        T(test_table_rights_restrict_leaf),
        T(test_root_not_present),
        T(test_context_not_present),
        T(test_context_aw_not_in_sagaw),
        cmocka_unit_test(test_context_tt_invalid),
        T(test_address_beyond_mgaw),
        T(test_paging_entry_access_error),
        T(test_slptptr_table_access_error_is_7h),
        T(test_root_entry_access_error),
        T(test_context_entry_access_error),
        T(test_root_entry_reserved_bits),
        T(test_context_entry_reserved_bits),
        cmocka_unit_test(test_context_domain_id_beyond_nd),
        T(test_paging_entry_reserved_bits),
        cmocka_unit_test(test_snp_and_tm_reserved_without_sc_dt),
        T(test_large_leaf_reserved_address_bits),
        cmocka_unit_test(test_large_page_without_sllps),
        T(test_not_present_entry_reserved_bits_ignored),
        T(test_passthrough_context),
        T(test_translation_disabled_passes_through),
        T(test_ats_translation_request),
        T(test_ats_above_mgaw_completes_without_access),
        T(test_interrupt_range_mapping_blocked),
        T(test_fpd_suppresses_recording),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
