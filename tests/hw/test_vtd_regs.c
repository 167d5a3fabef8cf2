/* test_vtd_regs.c — VT-d model register file: VER/CAP/ECAP encodings, the GCMD/GSTS handshake,
 * RTADDR latching, register masks, register-based invalidation (CCMD, IOTLB), access rules.
 * Expected values are VT-d §10.4 encodings typed in here, never read back from the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_vtd_env.h"

static int setup(void **state)
{
    static struct vt_env e;
    if (vt_init(&e, NULL))
        return -1;
    *state = &e;
    return 0;
}

static int teardown(void **state)
{
    vt_fini(*state);
    return 0;
}

static uint64_t bits(uint64_t v, unsigned h, unsigned l)
{
    return (v >> l) & ((h - l == 63) ? ~0ULL : ((1ULL << (h - l + 1)) - 1));
}

static void test_ver_cap_ecap_default(void **state)
{
    struct vt_env *e = *state;
    assert_int_equal(vt_rd(e, VT_VER), 0x10); /* Max 1, Min 0 */
    uint64_t cap = vt_rd64(e, VT_CAP);
    assert_int_equal(bits(cap, 2, 0), 6);      /* ND: 16-bit domain ids */
    assert_int_equal(bits(cap, 3, 3), 0);      /* AFL */
    assert_int_equal(bits(cap, 4, 4), 0);      /* RWBF */
    assert_int_equal(bits(cap, 7, 7), 0);      /* CM */
    assert_int_equal(bits(cap, 12, 8), 0x4);   /* SAGAW: 48-bit, 4-level only */
    assert_int_equal(bits(cap, 21, 16), 47);   /* MGAW = 48 - 1 */
    assert_int_equal(bits(cap, 22, 22), 1);    /* ZLR */
    assert_int_equal(bits(cap, 33, 24), 0x10); /* FRO: 0x100 / 16 */
    assert_int_equal(bits(cap, 37, 34), 0x3);  /* SLLPS: 2M and 1G */
    assert_int_equal(bits(cap, 39, 39), 1);    /* PSI */
    assert_int_equal(bits(cap, 47, 40), 7);    /* NFR = 8 - 1 */
    assert_int_equal(bits(cap, 53, 48), 18);   /* MAMV */
    assert_int_equal(bits(cap, 55, 54), 3);    /* DWD, DRD */
    uint64_t ecap = vt_rd64(e, VT_ECAP);
    assert_int_equal(bits(ecap, 0, 0), 1);     /* C */
    assert_int_equal(bits(ecap, 1, 1), 1);     /* QI */
    assert_int_equal(bits(ecap, 2, 2), 1);     /* DT */
    assert_int_equal(bits(ecap, 3, 3), 0);     /* IR: not modelled */
    assert_int_equal(bits(ecap, 6, 6), 1);     /* PT */
    assert_int_equal(bits(ecap, 7, 7), 1);     /* SC */
    assert_int_equal(bits(ecap, 17, 8), 0x20); /* IRO: 0x200 / 16 */
    assert_int_equal(bits(ecap, 43, 43), 0);   /* SMTS: legacy mode only */
    /* the same through two 32-bit reads */
    assert_int_equal(vt_rd(e, VT_CAP) | ((uint64_t)vt_rd(e, VT_CAP + 4) << 32), cap);
}

static void test_cap_from_config(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.sagaw39 = c.sagaw57 = true;
    c.mgaw = 57;
    c.nd = 2;
    c.nfr = 4;
    c.fro_offset = 0x300;
    c.iro_offset = 0x380;
    c.sllps_1g = false;
    c.psi = false;
    c.dt = c.pt = c.sc = false;
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    uint64_t cap = vt_rd64(&e, VT_CAP), ecap = vt_rd64(&e, VT_ECAP);
    assert_int_equal(bits(cap, 2, 0), 2);
    assert_int_equal(bits(cap, 12, 8), 0xE);   /* 39, 48, 57 */
    assert_int_equal(bits(cap, 21, 16), 56);
    assert_int_equal(bits(cap, 33, 24), 0x30);
    assert_int_equal(bits(cap, 37, 34), 0x1);
    assert_int_equal(bits(cap, 39, 39), 0);
    assert_int_equal(bits(cap, 47, 40), 3);
    assert_int_equal(bits(cap, 53, 48), 0);    /* MAMV is 0 without PSI */
    assert_int_equal(bits(ecap, 2, 2), 0);
    assert_int_equal(bits(ecap, 7, 6), 0);
    assert_int_equal(bits(ecap, 17, 8), 0x38);
    assert_int_equal(vtd_mmio_size(e.v), 0x1000);
    vt_fini(&e);
}

static void test_invalid_config_rejected(void **state)
{
    (void)state;
    struct vtd_config c;
    struct vtd *v;
    const char *msg = NULL;
#define REJECT(stmt)                                                   \
    do {                                                               \
        vtd_config_default(&c);                                        \
        stmt;                                                          \
        msg = NULL;                                                    \
        assert_int_equal(vtd_create(&v, &c, &vt_ops, NULL, &msg), -22); \
        assert_non_null(msg);                                          \
        assert_null(v);                                                \
    } while (0)
    REJECT(c.nd = 7);
    REJECT(c.sagaw48 = false);
    REJECT(c.mgaw = 57);             /* wider than the widest SAGAW (48) */
    REJECT(c.mgaw = 38);
    REJECT(c.haw = 53);
    REJECT(c.nfr = 0);
    REJECT(c.nfr = 257);
    REJECT(c.fro_offset = 0x104);    /* not a multiple of 16 */
    REJECT(c.fro_offset = 0x80);     /* over the fixed registers */
    REJECT(c.iro_offset = 0x110);    /* inside the 8 fault records at 0x100 */
    REJECT(c.mamv = 52);
    REJECT(c.ver_major = 6);         /* v6+ has no register-based invalidation */
    REJECT(c.iotlb.policy = (enum vtd_cache_policy)7);
    vtd_config_default(&c);
    struct vtd_host_ops none = {0};
    assert_int_equal(vtd_create(&v, &c, &none, NULL, &msg), -22);
#undef REJECT
}

static void test_reset_values(void **state)
{
    struct vt_env *e = *state;
    assert_int_equal(vt_rd(e, VT_GSTS), 0);
    assert_int_equal(vt_rd(e, VT_GCMD), 0);       /* write-only */
    assert_int_equal(vt_rd64(e, VT_RTADDR), 0);
    assert_int_equal(vt_rd(e, VT_FSTS), 0);
    assert_int_equal(vt_rd(e, VT_FECTL), VT_IM);  /* IM set at reset */
    assert_int_equal(vt_rd(e, VT_IECTL), VT_IM);
    assert_int_equal(vt_rd64(e, VT_IQH), 0);
    assert_int_equal(vt_rd64(e, VT_IQT), 0);
    assert_int_equal(vt_rd(e, VT_ICS), 0);
}

static void test_te_sets_tes_and_clears_it(void **state)
{
    struct vt_env *e = *state;
    vt_gcmd(e, VT_GCMD_TE, 0, 0);
    assert_int_equal(vt_rd(e, VT_GSTS) & VT_GSTS_TES, VT_GSTS_TES);
    vt_gcmd(e, 0, VT_GCMD_TE, 0);
    assert_int_equal(vt_rd(e, VT_GSTS) & VT_GSTS_TES, 0);
}

static void test_srtp_sets_rtps_and_latches_rtaddr(void **state)
{
    struct vt_env *e = *state;
    vt_bringup(e); /* root table A latched, TE on */
    assert_int_equal(vt_rd(e, VT_GSTS), VT_GSTS_TES | VT_GSTS_RTPS);
    uint64_t pt = vt_page(e);
    vt_map(e, pt, 4, 0x5000, 0x77000, 12, VT_R | VT_W);
    vt_context(e, 0x0108, 1, 2, 0, pt, false);
    /* a second, empty root table written to RTADDR but not latched: A stays in use */
    uint64_t other = vt_page(e);
    vt_wr64(e, VT_RTADDR, other);
    struct vtd_txn_rsp r;
    vt_tr(e, 0x0108, 0x5123, false, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    assert_int_equal(r.pa, 0x77123);
    vt_gcmd(e, 0, 0, VT_GCMD_SRTP); /* now B: its root entry is not present */
    assert_int_equal(vt_rd(e, VT_GSTS) & VT_GSTS_RTPS, VT_GSTS_RTPS);
    /* §10.4.4: software must invalidate the context-cache and IOTLB globally after SRTP;
     * until then the cached context may still be used */
    vt_tr(e, 0x0108, 0x5123, false, &r);
    assert_int_equal(r.status, VTD_TXN_OK);
    vt_wr64(e, VT_CCMD, (1ULL << 63) | (1ULL << 61));
    vt_wr64(e, 0x208, (1ULL << 63) | (1ULL << 60));
    vt_tr(e, 0x0108, 0x5123, false, &r);
    assert_int_equal(r.status, VTD_TXN_FAULT);
    assert_int_equal(r.fault_reason, VT_FR_ROOT_P);
}

static void test_qie_sets_qies_and_disable_resets_iqh(void **state)
{
    struct vt_env *e = *state;
    vt_qi_enable(e, 0);
    assert_int_equal(vt_rd(e, VT_GSTS) & VT_GSTS_QIES, VT_GSTS_QIES);
    vt_qi_push(e, VT_DESC_WAIT(0, 0, 0, 0), 0);
    vt_qi_push(e, VT_DESC_WAIT(0, 0, 0, 0), 0);
    assert_int_equal(vtd_process_queue(e->v, 16), 2);
    assert_int_equal(vt_rd64(e, VT_IQH), 2 << 4);
    vt_gcmd(e, 0, VT_GCMD_QIE, 0);
    assert_int_equal(vt_rd(e, VT_GSTS) & VT_GSTS_QIES, 0);
    assert_int_equal(vt_rd64(e, VT_IQH), 0); /* §10.4.22: reset when QI is disabled */
}

static void test_qie_ignored_without_qi(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.qi = c.dt = false;
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    vt_gcmd(&e, VT_GCMD_QIE, 0, 0);
    assert_int_equal(vt_rd(&e, VT_GSTS), 0);
    vt_wr64(&e, VT_IQA, 0x10000);          /* RsvdZ without ECAP.QI */
    assert_int_equal(vt_rd64(&e, VT_IQA), 0);
    vt_fini(&e);
}

/* §10.4.3 ECAP.DT: a unit reporting DT must also report QI (device-TLB invalidation exists only
 * as a queued descriptor). A configuration with DT and without QI is refused, not advertised. */
static void test_create_dt_needs_qi(void **state)
{
    (void)state;
    struct vtd_config c;
    struct vtd *v = NULL;
    const char *msg = NULL;
    vtd_config_default(&c);
    c.qi = false; /* dt stays 1 */
    assert_int_equal(vtd_create(&v, &c, &vt_ops, NULL, &msg), -22);
    assert_null(v);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "qi"));
    c.dt = false;
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    assert_int_equal(vt_rd64(&e, VT_ECAP) & 0x6, 0); /* ECAP.QI (bit 1), DT (bit 2) */
    vt_fini(&e);
}

/* §10.4.22-30: without ECAP.QI the queue and invalidation-event registers (IQH, IQT, IQA, ICS,
 * IECTL, IEDATA, IEADDR, IEUADDR, IQERCD) are reserved: they read 0 (IECTL.IM included) and
 * writes are ignored. */
static void test_qi_registers_reserved_zero_without_qi(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.qi = c.dt = false;
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    const uint64_t regs[] = {VT_IQH, VT_IQT, VT_IQA, VT_ICS - 4, VT_IECTL, VT_IEADDR, VT_IQERCD};
    for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
        assert_int_equal(vt_rd64(&e, regs[i]), 0);
    vt_wr(&e, VT_IECTL, 0);
    vt_wr(&e, VT_IEDATA, 0x1234);
    vt_wr(&e, VT_IEADDR, 0xFEE00000);
    vt_wr(&e, VT_IEUADDR, 7);
    vt_wr64(&e, VT_IQT, 0x100);
    for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
        assert_int_equal(vt_rd64(&e, regs[i]), 0);
    vt_fini(&e);
}

/* §10.4.7 CCMD.DID and §10.4.8.1 IOTLB_REG.DID: hardware need not implement the domain-id bits
 * above the width CAP.ND reports (4 + 2 * ND): they read back 0. */
static void test_did_bits_beyond_nd_not_implemented(void **state)
{
    (void)state;
    const uint64_t iotlb = 0x200 + 8; /* ECAP.IRO * 16 + 8 */
    for (unsigned nd = 0; nd <= 6; nd += 3) {
        struct vtd_config c;
        vtd_config_default(&c);
        c.nd = (uint8_t)nd;
        struct vt_env e;
        assert_int_equal(vt_init(&e, &c), 0);
        uint64_t did_mask = (1ULL << (4 + 2 * nd)) - 1;
        vt_wr64(&e, VT_CCMD, 0xFFFF);                  /* ICC = 0: stored, not performed */
        assert_int_equal(vt_rd64(&e, VT_CCMD), did_mask);
        vt_wr64(&e, iotlb, 0xFFFFULL << 32);           /* IVT = 0 */
        assert_int_equal(vt_rd64(&e, iotlb), did_mask << 32);
        vt_fini(&e);
    }
}

static void test_rtaddr_mask(void **state)
{
    struct vt_env *e = *state;
    vt_wr64(e, VT_RTADDR, ~0ULL);
    /* RTA [HAW-1:12] with HAW 46; TTM [11:10] reserved without scalable mode */
    assert_int_equal(vt_rd64(e, VT_RTADDR), ((1ULL << 46) - 1) & ~0xFFFULL);
}

static void test_iqa_mask_and_dw_reserved(void **state)
{
    struct vt_env *e = *state;
    vt_wr64(e, VT_IQA, ~0ULL);
    assert_int_equal(vt_rd64(e, VT_IQA), (((1ULL << 46) - 1) & ~0xFFFULL) | 0x7);
}

static void test_iqa_write_ignored_while_enabled(void **state)
{
    struct vt_env *e = *state;
    vt_qi_enable(e, 0);
    uint64_t iqa = vt_rd64(e, VT_IQA);
    vt_wr64(e, VT_IQA, 0x300000 | 2);
    assert_int_equal(vt_rd64(e, VT_IQA), iqa);
}

static void test_iqt_mask_iqh_read_only(void **state)
{
    struct vt_env *e = *state;
    vt_wr64(e, VT_IQT, ~0ULL);
    assert_int_equal(vt_rd64(e, VT_IQT), 0x7FFF0); /* QT [18:4] */
    vt_wr64(e, VT_IQH, 0x40);
    assert_int_equal(vt_rd64(e, VT_IQH), 0);
}

static void test_event_data_address_masks(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_FEDATA, ~0u);
    vt_wr(e, VT_FEADDR, ~0u);
    vt_wr(e, VT_FEUADDR, ~0u);
    assert_int_equal(vt_rd(e, VT_FEDATA), 0xFFFF);     /* IMD [15:0] */
    assert_int_equal(vt_rd(e, VT_FEADDR), 0xFFFFFFFC); /* MA [31:2] */
    assert_int_equal(vt_rd(e, VT_FEUADDR), 0xFFFFFFFF);
    vt_wr(e, VT_IEDATA, ~0u);
    vt_wr(e, VT_IEADDR, ~0u);
    assert_int_equal(vt_rd(e, VT_IEDATA), 0xFFFF);
    assert_int_equal(vt_rd(e, VT_IEADDR), 0xFFFFFFFC);
    vt_wr(e, VT_FECTL, ~0u);                            /* only IM writable; IP RO */
    assert_int_equal(vt_rd(e, VT_FECTL), VT_IM);
    vt_wr(e, VT_FECTL, 0);
    assert_int_equal(vt_rd(e, VT_FECTL), 0);
}

static void test_fsts_status_bits_not_settable(void **state)
{
    struct vt_env *e = *state;
    vt_wr(e, VT_FSTS, ~0u);
    assert_int_equal(vt_rd(e, VT_FSTS), 0);
}

static void test_ro_registers_ignore_writes(void **state)
{
    struct vt_env *e = *state;
    uint64_t cap = vt_rd64(e, VT_CAP);
    vt_wr64(e, VT_CAP, 0);
    vt_wr64(e, VT_ECAP, 0);
    vt_wr(e, VT_VER, 0);
    vt_wr(e, VT_GSTS, ~0u);
    assert_int_equal(vt_rd64(e, VT_CAP), cap);
    assert_int_equal(vt_rd(e, VT_VER), 0x10);
    assert_int_equal(vt_rd(e, VT_GSTS), 0);
}

static void test_bad_access_size_or_alignment(void **state)
{
    struct vt_env *e = *state;
    assert_int_equal(vtd_mmio_read(e->v, VT_VER, 2), 0);
    assert_int_equal(vtd_mmio_read(e->v, VT_VER + 1, 4), 0);
    assert_int_equal(vtd_mmio_read(e->v, VT_CAP + 4, 8), 0); /* misaligned 8-byte */
    assert_int_equal(vtd_mmio_read(e->v, 0x1000, 4), 0);     /* beyond the window */
    assert_int_equal(vtd_mmio_read(e->v, ~0ULL - 3, 4), 0);
    vtd_mmio_write(e->v, VT_FEDATA + 1, 0xFF, 1);
    vtd_mmio_write(e->v, VT_RTADDR + 4, 0x12345000, 8);
    assert_int_equal(vt_rd(e, VT_FEDATA), 0);
    assert_int_equal(vt_rd64(e, VT_RTADDR), 0);
    assert_int_equal(vt_rd(e, 0x60), 0); /* an unimplemented offset */
}

static void test_ccmd_global_clears_icc_reports_caig(void **state)
{
    struct vt_env *e = *state;
    vt_wr64(e, VT_CCMD, (1ULL << 63) | (1ULL << 61));     /* ICC, CIRG = 01 global */
    uint64_t r = vt_rd64(e, VT_CCMD);
    assert_int_equal(r >> 63, 0);                          /* ICC cleared: done */
    assert_int_equal(bits(r, 60, 59), 1);                  /* CAIG = global */
    vt_wr64(e, VT_CCMD, (1ULL << 63) | (2ULL << 61) | 5);   /* domain 5 */
    assert_int_equal(bits(vt_rd64(e, VT_CCMD), 60, 59), 2);
    vt_wr64(e, VT_CCMD, (1ULL << 63) | (3ULL << 61) | (0x0108ULL << 16) | 5); /* device */
    assert_int_equal(bits(vt_rd64(e, VT_CCMD), 60, 59), 3);
    struct vtd_stats st;
    vtd_get_stats(e->v, &st);
    assert_int_equal(st.reg_context_invs, 3);
}

static void test_ccmd_reserved_cirg_not_performed(void **state)
{
    struct vt_env *e = *state;
    vt_wr64(e, VT_CCMD, 1ULL << 63);                       /* CIRG = 00: reserved */
    uint64_t r = vt_rd64(e, VT_CCMD);
    assert_int_equal(r >> 63, 0);
    assert_int_equal(bits(r, 60, 59), 0);
    struct vtd_stats st;
    vtd_get_stats(e->v, &st);
    assert_int_equal(st.reg_context_invs, 0);
}

static void test_iotlb_reg_granularities(void **state)
{
    struct vt_env *e = *state;
    const uint64_t iotlb = 0x200 + 8, iva = 0x200;
    for (unsigned g = 1; g <= 3; g++) {
        vt_wr64(e, iva, 0x40000 | 2);                       /* ADDR, AM = 2 */
        vt_wr64(e, iotlb, (1ULL << 63) | ((uint64_t)g << 60) | (7ULL << 32));
        uint64_t r = vt_rd64(e, iotlb);
        assert_int_equal(r >> 63, 0);                       /* IVT cleared */
        assert_int_equal(bits(r, 58, 57), g);               /* IAIG = IIRG */
        assert_int_equal(bits(r, 47, 32), 7);               /* DID kept */
    }
    assert_int_equal(vt_rd64(e, iva), 0x40002);
}

static void test_iotlb_reg_psi_beyond_mamv_not_performed(void **state)
{
    struct vt_env *e = *state;
    vt_wr64(e, 0x200, 19);                                  /* AM 19 > MAMV 18 */
    vt_wr64(e, 0x208, (1ULL << 63) | (3ULL << 60));
    uint64_t r = vt_rd64(e, 0x208);
    assert_int_equal(r >> 63, 0);
    assert_int_equal(bits(r, 58, 57), 0);                   /* incorrect request: ignored */
    vt_wr64(e, 0x208, 1ULL << 63);                          /* IIRG 00: reserved */
    assert_int_equal(bits(vt_rd64(e, 0x208), 58, 57), 0);
}

static void test_register_invalidation_ignored_while_qi(void **state)
{
    struct vt_env *e = *state;
    vt_qi_enable(e, 0);
    vt_wr64(e, VT_CCMD, (1ULL << 63) | (1ULL << 61));
    assert_int_equal(bits(vt_rd64(e, VT_CCMD), 60, 59), 0);
    vt_wr64(e, 0x208, (1ULL << 63) | (1ULL << 60));
    assert_int_equal(bits(vt_rd64(e, 0x208), 58, 57), 0);
}

static void test_iotlb_registers_follow_iro(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.iro_offset = 0x1500;                                  /* ECAP.IRO = 0x150 */
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    assert_int_equal(bits(vt_rd64(&e, VT_ECAP), 17, 8), 0x150);
    assert_int_equal(vtd_mmio_size(e.v), 0x2000);
    vt_wr64(&e, 0x1500, 0xABC000 | 0x43);                  /* IVA: ADDR, IH, AM = 3 */
    assert_int_equal(vt_rd64(&e, 0x1500), 0xABC043);
    vt_wr64(&e, 0x1508, (1ULL << 63) | (1ULL << 60));
    assert_int_equal(bits(vt_rd64(&e, 0x1508), 58, 57), 1);
    assert_int_equal(vt_rd64(&e, 0x200), 0);                /* nothing at the default */
    vt_fini(&e);
}

static void test_frcd_read_only_but_f(void **state)
{
    struct vt_env *e = *state;
    for (unsigned i = 0; i < 8; i++) {
        vt_wr64(e, 0x100 + 16 * i, ~0ULL);
        vt_wr64(e, 0x108 + 16 * i, ~0ULL);
        assert_int_equal(vt_rd64(e, 0x100 + 16 * i), 0);
        assert_int_equal(vt_rd64(e, 0x108 + 16 * i), 0);
    }
}

static void test_reset_restores_registers(void **state)
{
    struct vt_env *e = *state;
    vt_bringup(e);
    vt_wr(e, VT_FECTL, 0);
    vt_wr(e, VT_FEDATA, 0x44);
    vtd_reset(e->v);
    assert_int_equal(vt_rd(e, VT_GSTS), 0);
    assert_int_equal(vt_rd64(e, VT_RTADDR), 0);
    assert_int_equal(vt_rd(e, VT_FECTL), VT_IM);
    assert_int_equal(vt_rd(e, VT_FEDATA), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ver_cap_ecap_default, setup, teardown),
        cmocka_unit_test(test_cap_from_config),
        cmocka_unit_test(test_invalid_config_rejected),
        cmocka_unit_test_setup_teardown(test_reset_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_te_sets_tes_and_clears_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_srtp_sets_rtps_and_latches_rtaddr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_qie_sets_qies_and_disable_resets_iqh, setup, teardown),
        cmocka_unit_test(test_qie_ignored_without_qi),
        cmocka_unit_test(test_create_dt_needs_qi),
        cmocka_unit_test(test_qi_registers_reserved_zero_without_qi),
        cmocka_unit_test(test_did_bits_beyond_nd_not_implemented),
        cmocka_unit_test_setup_teardown(test_rtaddr_mask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iqa_mask_and_dw_reserved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iqa_write_ignored_while_enabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iqt_mask_iqh_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_data_address_masks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fsts_status_bits_not_settable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ro_registers_ignore_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_access_size_or_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ccmd_global_clears_icc_reports_caig, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ccmd_reserved_cirg_not_performed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iotlb_reg_granularities, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iotlb_reg_psi_beyond_mamv_not_performed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_invalidation_ignored_while_qi, setup, teardown),
        cmocka_unit_test(test_iotlb_registers_follow_iro),
        cmocka_unit_test_setup_teardown(test_frcd_read_only_but_f, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_restores_registers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
