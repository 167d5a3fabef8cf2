/* test_smmuv3_config.c — SMMUv3 model configuration: STE/CD validity, every misconfiguration's
 * event record, substreams, 2-level stream and CD tables. Spec values (IHI 0070 §5, §7.3) only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hw/smmuv3/smmuv3_internal.h"
#include "support/smmu_tables.h"

#define SID 5
#define IOVA 0x12345000ULL
#define PA 0x41000000ULL

struct fx {
    struct smt_env e;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cd_pa;
    struct smt_ste ste;
};

static int setup(void **state)
{
    static struct fx f;
    if (smt_env_init(&f.e, NULL, 8))
        return -1;
    smt_simple_stream(&f.e, SID, &f.pt, &f.cd, &f.cd_pa);
    smt_pt_map(&f.pt, IOVA, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    smt_ste_s1(&f.ste, f.cd_pa);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    smt_env_fini(&f->e);
    return 0;
}

static void xlate(struct fx *f, uint32_t sid, bool ssv, uint32_t ssid, struct smmu_txn_rsp *r)
{
    struct smmu_txn_req q = {.sid = sid, .ssv = ssv, .ssid = ssid, .iova = IOVA};
    smmu_translate(f->e.smmu, &q, r);
}

/* The fault path: abort, the expected event in the queue with type [7:0] and SID [63:32]. */
static void expect_event(struct fx *f, uint32_t sid, bool ssv, uint32_t ssid, unsigned type,
                         uint64_t rec[4])
{
    struct smmu_txn_rsp r;
    xlate(f, sid, ssv, ssid, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, type);
    assert_true(smt_evt_pop(&f->e, rec));
    assert_int_equal(rec[0] & 0xFF, type);
    assert_int_equal(rec[0] >> 32, sid);
    uint64_t more[4];
    assert_false(smt_evt_pop(&f->e, more));
}

static void rewrite_ste(struct fx *f)
{
    smt_ste_at(&f->e, SID, &f->ste);
    smt_cmd(&f->e, SMT_OP_CFGI_STE | ((uint64_t)SID << 32), 1);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
}

static void rewrite_cd(struct fx *f)
{
    smt_cd_write(&f->e.mem, f->cd_pa, &f->cd);
    smt_cmd(&f->e, SMT_OP_CFGI_CD | ((uint64_t)SID << 32), 1);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
}

static void test_s1_translation_ok(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    xlate(f, SID, false, 0, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PA);
    assert_int_equal(r.page_shift, 12);
    assert_int_equal(r.mem_attr, 0xFF); /* AttrIndx 1 -> MAIR byte 1 */
    assert_int_equal(r.sh, 3);
}

static void test_ste_invalid(void **state)
{
    struct fx *f = *state;
    f->ste.v = false;
    rewrite_ste(f);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_C_BAD_STE, rec);
    assert_int_equal(rec[0] & (1u << 11), 0); /* SSV */
    assert_int_equal(rec[1] | rec[2] | rec[3], 0);
}

/* Config 0b11x needs stage 2: ILLEGAL without S2P. (0b001..0b011: see the conformance test.) */
static void test_ste_reserved_config(void **state)
{
    struct fx *f = *state;
    const unsigned bad_cfg[] = {6, 7};
    for (unsigned i = 0; i < 2; i++) {
        f->ste.config = bad_cfg[i];
        rewrite_ste(f);
        uint64_t rec[4];
        expect_event(f, SID, false, 0, SMT_C_BAD_STE, rec);
    }
}

static void test_ste_abort_silent(void **state)
{
    struct fx *f = *state;
    f->ste.config = 0;
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xlate(f, SID, false, 0, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, 0);
    uint64_t rec[4];
    assert_false(smt_evt_pop(&f->e, rec));
}

static void test_ste_bypass(void **state)
{
    struct fx *f = *state;
    f->ste.config = 4;
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xlate(f, SID, false, 0, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_true(r.bypass);
    assert_int_equal(r.pa, IOVA);
    /* a SubstreamID with stage 1 disabled: C_BAD_SUBSTREAMID */
    uint64_t rec[4];
    expect_event(f, SID, true, 3, SMT_C_BAD_SUBSTREAMID, rec);
    assert_int_equal((rec[0] >> 12) & 0xFFFFF, 3);
}

static void test_ste_s1cdmax_too_big(void **state)
{
    struct fx *f = *state;
    f->ste.s1cdmax = 21; /* > IDR1.SSIDSIZE (20) */
    rewrite_ste(f);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_C_BAD_STE, rec);
}

/* S1Fmt 0b11 is Reserved and behaves as 0b00 (§5.2): CD 0 of a linear table at S1ContextPtr. */
static void test_ste_s1fmt_reserved(void **state)
{
    struct fx *f = *state;
    f->ste.s1cdmax = 4;
    f->ste.s1dss = 2;
    f->ste.s1fmt = 3;
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xlate(f, SID, false, 0, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PA);
}

/* S1DSS 0b11 is Reserved and behaves as 0b00 (§5.2): terminate, F_STREAM_DISABLED. */
static void test_ste_s1dss_reserved(void **state)
{
    struct fx *f = *state;
    f->ste.s1cdmax = 4;
    f->ste.s1dss = 3;
    rewrite_ste(f);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_F_STREAM_DISABLED, rec);
}

/* The configuration lookup writes every word of the event it returns: its callers pass an
 * uninitialised stack array and queue all four words, so a word left alone would put stack
 * garbage into a RES0 field of the record (§7.3.7: F_STREAM_DISABLED carries only the
 * StreamID). The buffer is filled with ones first to see any word left alone. */
static void test_stream_disabled_record_whole(void **state)
{
    struct fx *f = *state;
    f->ste.s1cdmax = 4;
    f->ste.s1dss = 3;
    rewrite_ste(f);
    struct smmu_txn_req q = {.sid = SID, .iova = IOVA};
    const struct smmu_ctx *ctx = NULL;
    struct smmu_ste ste;
    uint64_t evt[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL};
    assert_int_equal(smmu_cfg_lookup(f->e.smmu, &q, &ctx, &ste, evt), CFG_FAULT);
    assert_int_equal(evt[0], SMT_F_STREAM_DISABLED | ((uint64_t)SID << 32));
    for (unsigned w = 1; w < 4; w++)
        assert_int_equal(evt[w], 0);
}

static void test_ste_s1stalld_without_stall(void **state)
{
    struct fx *f = *state;
    f->ste.s1stalld = true; /* STALL_MODEL != 0b00 makes S1STALLD ILLEGAL (§5.5) */
    rewrite_ste(f);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_C_BAD_STE, rec);
}

static void test_ste_ctxptr_beyond_oas(void **state)
{
    struct fx *f = *state;
    f->ste.ctxptr = 1ULL << 50;
    rewrite_ste(f);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_C_BAD_STE, rec);
}

static void test_bad_streamid_recinvsid(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    uint64_t rec[4];
    xlate(f, 256, false, 0, &r); /* >= 2^LOG2SIZE: RECINVSID == 0 -> not recorded */
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, SMT_C_BAD_STREAMID);
    assert_false(r.event_recorded);
    assert_false(smt_evt_pop(&f->e, rec));
    smt_wr(&f->e, SMT_CR0, 0);
    smt_wr(&f->e, SMT_CR2, 2); /* RECINVSID */
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    expect_event(f, 256, true, 9, SMT_C_BAD_STREAMID, rec);
    assert_int_equal(rec[0] & (1u << 11), 1u << 11);
    assert_int_equal((rec[0] >> 12) & 0xFFFFF, 9);
}

static void test_ste_fetch_abort(void **state)
{
    struct fx *f = *state;
    uint64_t ste_pa = f->e.strtab + SID * 64;
    smt_fault_add(&f->e.mem, ste_pa, 64, true, false);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_F_STE_FETCH, rec);
    assert_int_equal(rec[3], ste_pa); /* FetchAddr [55:3] in dword 3 */
}

static void test_cd_invalid(void **state)
{
    struct fx *f = *state;
    f->cd.v = false;
    rewrite_cd(f);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_C_BAD_CD, rec);
}

/* Each ILLEGAL CD field value from §5.4 gives C_BAD_CD. */
static void test_cd_illegal_fields(void **state)
{
    struct fx *f = *state;
    struct smt_cd good = f->cd;
    for (int k = 0; k < 10; k++) {
        f->cd = good;
        switch (k) {
        case 0: f->cd.aa64 = false; break;          /* AArch32 tables unsupported */
        case 1: f->cd.t0sz = 15; break;             /* below 16 without VAX */
        case 2: f->cd.t0sz = 40; break;             /* above 39 without STT */
        case 3: f->cd.tg0 = 3; break;               /* Reserved granule */
        case 4: f->cd.ha = true; break;             /* HTTU not implemented */
        case 5: f->cd.hd = true; break;
        case 6: f->cd.s = true; break;              /* stall with STALL_MODEL 0b01 */
        case 7: f->cd.ttb0 = 1ULL << 48; break;     /* TTB0 outside eff. IPS */
        case 8: f->cd.epd1 = false; f->cd.tg1 = 0; f->cd.t1sz = 16; break; /* TG1 Reserved */
        case 9: f->cd.ips = 2; f->cd.ttb0 = 1ULL << 41; break; /* outside 40-bit IPS */
        }
        rewrite_cd(f);
        uint64_t rec[4];
        expect_event(f, SID, false, 0, SMT_C_BAD_CD, rec);
    }
}

static void test_cd_a0_with_term_model(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.term_model = true;
    c.thread_safe = false;
    struct fx f;
    assert_int_equal(smt_env_init(&f.e, &c, 8), 0);
    smt_simple_stream(&f.e, SID, &f.pt, &f.cd, &f.cd_pa);
    f.cd.a = false;
    smt_cd_write(&f.e.mem, f.cd_pa, &f.cd);
    uint64_t rec[4];
    expect_event(&f, SID, false, 0, SMT_C_BAD_CD, rec);
    smt_env_fini(&f.e);
}

static void test_cd_unsupported_granule(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.gran16k = false;
    c.thread_safe = false;
    struct fx f;
    assert_int_equal(smt_env_init(&f.e, &c, 8), 0);
    smt_simple_stream(&f.e, SID, &f.pt, &f.cd, &f.cd_pa);
    f.cd.tg0 = 2; /* 16K */
    smt_cd_write(&f.e.mem, f.cd_pa, &f.cd);
    uint64_t rec[4];
    expect_event(&f, SID, false, 0, SMT_C_BAD_CD, rec);
    smt_env_fini(&f.e);
}

/* Without the 64K granule (IDR5.GRAN64K = 0) a 4K-granule CD still translates; a 64K one is
 * ILLEGAL (§5.4: a TG0 the SMMU does not support). */
static void test_cd_64k_granule_off(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.gran64k = false;
    c.oas = 48; /* a 52-bit OAS needs the 64K granule */
    c.thread_safe = false;
    struct fx f;
    assert_int_equal(smt_env_init(&f.e, &c, 8), 0);
    smt_simple_stream(&f.e, SID, &f.pt, &f.cd, &f.cd_pa);
    smt_pt_map(&f.pt, IOVA, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    xlate(&f, SID, false, 0, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PA);
    smt_env_fini(&f.e);
    assert_int_equal(smt_env_init(&f.e, &c, 8), 0); /* nothing cached */
    smt_simple_stream(&f.e, SID, &f.pt, &f.cd, &f.cd_pa);
    f.cd.tg0 = 1; /* 64K */
    smt_cd_write(&f.e.mem, f.cd_pa, &f.cd);
    uint64_t rec[4];
    expect_event(&f, SID, false, 0, SMT_C_BAD_CD, rec);
    smt_env_fini(&f.e);
}

static void test_cd_asid16_off(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.asid16 = false;
    c.thread_safe = false;
    struct fx f;
    assert_int_equal(smt_env_init(&f.e, &c, 8), 0);
    smt_simple_stream(&f.e, SID, &f.pt, &f.cd, &f.cd_pa);
    f.cd.asid = 0x100;
    smt_cd_write(&f.e.mem, f.cd_pa, &f.cd);
    uint64_t rec[4];
    expect_event(&f, SID, false, 0, SMT_C_BAD_CD, rec);
    smt_env_fini(&f.e);
}

static void test_cd_fetch_abort(void **state)
{
    struct fx *f = *state;
    smt_fault_add(&f->e.mem, f->cd_pa, 64, true, false);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_F_CD_FETCH, rec);
    assert_int_equal(rec[3], f->cd_pa);
}

/* A linear CD table with 16 substreams: S1DSS handling and SubstreamID checks. */
static void make_cd_table(struct fx *f, unsigned s1dss)
{
    uint64_t tab = smt_alloc(&f->e.mem, 64 * 16, 1024);
    for (unsigned i = 0; i < 16; i++) {
        struct smt_cd cd = f->cd;
        cd.asid = (uint16_t)(10 + i);
        smt_cd_write(&f->e.mem, tab + 64 * i, &cd);
    }
    f->ste.ctxptr = tab;
    f->ste.s1cdmax = 4;
    f->ste.s1dss = s1dss;
    f->ste.s1fmt = 0;
    rewrite_ste(f);
}

static void test_substream_linear(void **state)
{
    struct fx *f = *state;
    make_cd_table(f, 2);
    struct smmu_txn_rsp r;
    xlate(f, SID, true, 7, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PA);
    xlate(f, SID, false, 0, &r); /* S1DSS = 0b10: CD 0 */
    assert_int_equal(r.status, SMMU_TXN_OK);
    uint64_t rec[4];
    expect_event(f, SID, true, 16, SMT_C_BAD_SUBSTREAMID, rec); /* >= 2^S1CDMax */
    assert_int_equal((rec[0] >> 12) & 0xFFFFF, 16);
    /* SubstreamID 0 with S1DSS == 0b10 is F_STREAM_DISABLED (§7.3.7) */
    expect_event(f, SID, true, 0, SMT_F_STREAM_DISABLED, rec);
}

static void test_s1dss_terminate_and_bypass(void **state)
{
    struct fx *f = *state;
    make_cd_table(f, 0);
    uint64_t rec[4];
    expect_event(f, SID, false, 0, SMT_F_STREAM_DISABLED, rec);
    assert_int_equal(rec[0], SMT_F_STREAM_DISABLED | ((uint64_t)SID << 32));
    f->ste.s1dss = 1;
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xlate(f, SID, false, 0, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_true(r.bypass);
    assert_int_equal(r.pa, IOVA);
}

static void test_ssid_without_substreams(void **state)
{
    struct fx *f = *state;
    uint64_t rec[4];
    expect_event(f, SID, true, 1, SMT_C_BAD_SUBSTREAMID, rec); /* S1CDMax == 0 */
}

static void test_two_level_cd_table(void **state)
{
    struct fx *f = *state;
    const unsigned fmts[] = {1, 2}; /* 4KB leaves (64 CDs), 64KB leaves (1024 CDs) */
    for (unsigned k = 0; k < 2; k++) {
        unsigned leaf_bits = fmts[k] == 1 ? 6 : 10;
        uint32_t ssid = (3u << leaf_bits) | 5;
        uint64_t l1 = smt_alloc(&f->e.mem, 8 * 64, 64);
        uint64_t leaf = smt_alloc(&f->e.mem, 64ULL << leaf_bits, 4096);
        smt_cd_write(&f->e.mem, leaf + 64 * 5, &f->cd);
        smt_w64(&f->e.mem, l1 + 3 * 8, leaf | 1); /* L1CD: L2Ptr [51:12], V bit 0 */
        f->ste.ctxptr = l1;
        f->ste.s1cdmax = 16;
        f->ste.s1dss = 2;
        f->ste.s1fmt = fmts[k];
        rewrite_ste(f);
        struct smmu_txn_rsp r;
        xlate(f, SID, true, ssid, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
        assert_int_equal(r.pa, PA);
        uint64_t rec[4];
        /* L1CD.V == 0 -> C_BAD_SUBSTREAMID */
        expect_event(f, SID, true, ssid + (1u << leaf_bits), SMT_C_BAD_SUBSTREAMID, rec);
        /* fault on the L1CD fetch -> F_CD_FETCH with its address */
        smt_fault_add(&f->e.mem, l1 + 3 * 8, 8, true, false);
        smt_cmd(&f->e, SMT_OP_CFGI_CD_ALL | ((uint64_t)SID << 32), 0);
        smt_run(&f->e);
        expect_event(f, SID, true, ssid, SMT_F_CD_FETCH, rec);
        assert_int_equal(rec[3], l1 + 3 * 8);
        smt_fault_clear(&f->e.mem);
    }
}

static void test_two_level_stream_table(void **state)
{
    struct fx *f = *state;
    const unsigned splits[] = {6, 8, 10};
    for (unsigned k = 0; k < 3; k++) {
        unsigned split = splits[k];
        /* the SMMU aligns STRTAB_BASE to the L1 table's size (§6.3.24): so does software */
        uint64_t l1 = smt_alloc(&f->e.mem, 8ULL << (16 - split), 8ULL << (16 - split));
        uint64_t l2 = smt_alloc(&f->e.mem, 64ULL << split, 64ULL << split);
        uint32_t sid = (2u << split) | 3;
        smt_ste_write(&f->e.mem, l2 + 3 * 64, &f->ste);
        smt_w64(&f->e.mem, l1 + 2 * 8, l2 | (split + 1)); /* L1STD: L2Ptr [51:6], Span [4:0] */
        smt_wr(&f->e, SMT_CR0, 0);
        smmu_mmio_write(f->e.smmu, SMT_STRTAB_BASE, l1, 8);
        smt_wr(&f->e, SMT_STRTAB_BASE_CFG, (1u << 16) | (split << 6) | 16);
        smt_wr(&f->e, SMT_CR2, 2);
        smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
        smt_cmd(&f->e, SMT_OP_CFGI_STE_RANGE, 31); /* CFGI_ALL */
        smt_run(&f->e);
        struct smmu_txn_rsp r;
        xlate(f, sid, false, 0, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
        assert_int_equal(r.pa, PA);
        uint64_t rec[4];
        /* Span == 0 (L1 index 1 never written) -> C_BAD_STREAMID */
        expect_event(f, (1u << split) | 3, false, 0, SMT_C_BAD_STREAMID, rec);
        /* StreamID[SPLIT-1:0] >= 2^(Span-1) -> C_BAD_STREAMID */
        smt_w64(&f->e.mem, l1 + 2 * 8, l2 | 2); /* Span 2: two STEs */
        smt_cmd(&f->e, SMT_OP_CFGI_STE | ((uint64_t)sid << 32), 0);
        smt_run(&f->e);
        expect_event(f, sid, false, 0, SMT_C_BAD_STREAMID, rec);
        /* fetch abort on the L1 descriptor -> F_STE_FETCH */
        smt_w64(&f->e.mem, l1 + 2 * 8, l2 | (split + 1));
        smt_fault_add(&f->e.mem, l1 + 2 * 8, 8, true, false);
        expect_event(f, sid, false, 0, SMT_F_STE_FETCH, rec);
        assert_int_equal(rec[3], l1 + 2 * 8);
        smt_fault_clear(&f->e.mem);
    }
}

static void test_cd_r_suppression(void **state)
{
    struct fx *f = *state;
    f->cd.r = false;
    rewrite_cd(f);
    struct smmu_txn_req q = {.sid = SID, .iova = 0x777000};
    struct smmu_txn_rsp r;
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, SMT_F_TRANSLATION);
    assert_false(r.event_recorded);
    uint64_t rec[4];
    assert_false(smt_evt_pop(&f->e, rec));
    struct smmu_stats st;
    smmu_get_stats(f->e.smmu, &st);
    assert_int_equal(st.events_suppressed, 1);
    /* CD.A == 0 terminates RAZ/WI (TERM_MODEL == 0) */
    f->cd.a = false;
    rewrite_cd(f);
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_RAZWI);
}

static void test_privcfg_instcfg_override(void **state)
{
    struct fx *f = *state;
    /* a privileged-only, privileged-execute-never page: AP = 0b00, PXN */
    smt_pt_map(&f->pt, 0x50000000, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_PXN);
    struct smmu_txn_req q = {.sid = SID, .iova = 0x50000000, .priv = false};
    struct smmu_txn_rsp r;
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.event, SMT_F_PERMISSION);
    uint64_t rec[4];
    assert_true(smt_evt_pop(&f->e, rec));
    assert_int_equal((rec[1] >> 33) & 1, 0); /* PnU post override */
    f->ste.privcfg = 3;                      /* privileged */
    rewrite_ste(f);
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_OK); /* PXN does not stop a data read */
    /* INSTCFG = 0b11 makes the same data read an instruction fetch: PXN faults it */
    f->ste.instcfg = 3;
    rewrite_ste(f);
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, SMT_F_PERMISSION);
    assert_true(smt_evt_pop(&f->e, rec));
    assert_int_equal(rec[0] & 0xFF, SMT_F_PERMISSION);
    assert_int_equal((rec[1] >> 33) & 1, 1); /* PnU: privileged */
    assert_int_equal((rec[1] >> 34) & 1, 1); /* InD: instruction */
    /* an incoming instruction fetch with INSTCFG = 0b00 (use incoming) faults too ... */
    q.exec = true;
    f->ste.instcfg = 0;
    rewrite_ste(f);
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.event, SMT_F_PERMISSION);
    assert_true(smt_evt_pop(&f->e, rec));
    /* ... and INSTCFG = 0b10 makes that same fetch a data read: allowed */
    f->ste.instcfg = 2;
    rewrite_ste(f);
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_false(smt_evt_pop(&f->e, rec));
}

static void test_config_cache_hits_and_cfgi(void **state)
{
    struct fx *f = *state;
    struct smmu_txn_rsp r;
    xlate(f, SID, false, 0, &r);
    xlate(f, SID, false, 0, &r);
    struct smmu_cache_stats ste, cd;
    smmu_get_cache_stats(f->e.smmu, SMMU_CACHE_STE, &ste);
    smmu_get_cache_stats(f->e.smmu, SMMU_CACHE_CD, &cd);
    assert_int_equal(ste.misses, 1);
    assert_int_equal(ste.hits, 1);
    assert_int_equal(cd.hits, 1);
    /* without CFGI the cached STE stays in use even after memory changes */
    f->ste.v = false;
    smt_ste_at(&f->e, SID, &f->ste);
    xlate(f, SID, false, 0, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_cmd(&f->e, SMT_OP_CFGI_STE | ((uint64_t)SID << 32), 1);
    smt_run(&f->e);
    xlate(f, SID, false, 0, &r);
    assert_int_equal(r.event, SMT_C_BAD_STE);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_s1_translation_ok),
        T(test_ste_invalid),
        T(test_ste_reserved_config),
        T(test_ste_abort_silent),
        T(test_ste_bypass),
        T(test_ste_s1cdmax_too_big),
        T(test_ste_s1fmt_reserved),
        T(test_ste_s1dss_reserved),
        T(test_stream_disabled_record_whole),
        T(test_ste_s1stalld_without_stall),
        T(test_ste_ctxptr_beyond_oas),
        T(test_bad_streamid_recinvsid),
        T(test_ste_fetch_abort),
        T(test_cd_invalid),
        T(test_cd_illegal_fields),
        cmocka_unit_test(test_cd_a0_with_term_model),
        cmocka_unit_test(test_cd_unsupported_granule),
        cmocka_unit_test(test_cd_64k_granule_off),
        cmocka_unit_test(test_cd_asid16_off),
        T(test_cd_fetch_abort),
        T(test_substream_linear),
        T(test_s1dss_terminate_and_bypass),
        T(test_ssid_without_substreams),
        T(test_two_level_cd_table),
        T(test_two_level_stream_table),
        T(test_cd_r_suppression),
        T(test_privcfg_instcfg_override),
        T(test_config_cache_hits_and_cfgi),
    };
    return cmocka_run_group_tests_name("smmuv3_config", tests, NULL, NULL);
}
