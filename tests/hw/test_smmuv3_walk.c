/* test_smmuv3_walk.c — SMMUv3 model stage-1 walks: every granule and input size, blocks, faults
 * (translation, address size, access flag, permission, walk external abort at each level), TBI,
 * TTB1, TLB and walk-cache behaviour. Expected values come from VMSAv8-64 and IHI 0070 §7.3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

#define PABASE 0x41000000ULL

static int setup(void **state)
{
    static struct smt_env e;
    if (smt_env_init(&e, NULL, 8))
        return -1;
    *state = &e;
    return 0;
}

static int teardown(void **state)
{
    smt_env_fini(*state);
    return 0;
}

/* A stream `sid` with one CD translating through a fresh table of granule 2^p and IAS bits. */
static void mkctx(struct smt_env *e, uint32_t sid, unsigned p, unsigned ias, uint16_t asid,
                  struct smt_pt *pt, struct smt_cd *cd, uint64_t *cdpa)
{
    smt_pt_init(pt, &e->mem, p, ias);
    *cdpa = smt_alloc(&e->mem, 64, 64);
    smt_cd_init(cd, pt->root, 64 - ias, smt_tg0(p));
    cd->asid = asid;
    smt_cd_write(&e->mem, *cdpa, cd);
    struct smt_ste ste;
    smt_ste_s1(&ste, *cdpa);
    smt_ste_at(e, sid, &ste);
}

static void tx(struct smt_env *e, uint32_t sid, uint64_t va, bool wr, bool priv, bool exec,
               struct smmu_txn_rsp *r)
{
    struct smmu_txn_req q = {.sid = sid, .iova = va, .write = wr, .priv = priv, .exec = exec};
    smmu_translate(e->smmu, &q, r);
}

static void flush_all(struct smt_env *e)
{
    smt_cmd(e, SMT_OP_TLBI_NSNH_ALL, 0);
    smt_cmd(e, SMT_OP_CFGI_STE_RANGE, 31);
    smt_cmd(e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(e), 3);
}

static void expect_fault(struct smt_env *e, uint32_t sid, uint64_t va, bool wr, bool priv,
                         bool exec, unsigned type, uint64_t rec[4])
{
    struct smmu_txn_rsp r;
    tx(e, sid, va, wr, priv, exec, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, type);
    assert_true(smt_evt_pop(e, rec));
    assert_int_equal(rec[0] & 0xFF, type);
    assert_int_equal(rec[0] >> 32, sid);
    assert_int_equal(rec[2], va); /* InputAddr */
}

/* Every input size 25..48 for one granule: the last page below 2^IAS translates and the first
 * address at 2^IAS is a Translation fault. */
static void sweep_granule(struct smt_env *e, unsigned p)
{
    uint32_t sid = 1;
    for (unsigned ias = 25; ias <= 48; ias++, sid++) {
        struct smt_pt pt;
        struct smt_cd cd;
        uint64_t cdpa;
        mkctx(e, sid, p, ias, (uint16_t)(100 + sid), &pt, &cd, &cdpa);
        uint64_t va = (1ULL << ias) - (1ULL << p);
        uint64_t pa = PABASE + ((uint64_t)sid << 20);
        pa &= ~((1ULL << p) - 1);
        smt_pt_map(&pt, va, pa, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
        struct smmu_txn_rsp r;
        tx(e, sid, va + 0x18, false, false, false, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
        assert_int_equal(r.pa, pa + 0x18);
        assert_int_equal(r.page_shift, p);
        uint64_t rec[4];
        expect_fault(e, sid, 1ULL << ias, false, false, false, SMT_F_TRANSLATION, rec);
        assert_int_equal((rec[1] >> 40) & 3, 2); /* CLASS = IN */
    }
}

static void test_granule_4k_all_sizes(void **state) { sweep_granule(*state, 12); }
static void test_granule_16k_all_sizes(void **state) { sweep_granule(*state, 14); }
static void test_granule_64k_all_sizes(void **state) { sweep_granule(*state, 16); }

static void test_block_mappings(void **state)
{
    struct smt_env *e = *state;
    struct {
        unsigned p, level, shift;
    } cases[] = {{12, 1, 30}, {12, 2, 21}, {14, 2, 25}, {16, 2, 29}};
    for (unsigned i = 0; i < 4; i++) {
        struct smt_pt pt;
        struct smt_cd cd;
        uint64_t cdpa;
        uint32_t sid = 10 + i;
        mkctx(e, sid, cases[i].p, 48, (uint16_t)sid, &pt, &cd, &cdpa);
        uint64_t blk = 1ULL << cases[i].shift;
        uint64_t va = 5 * blk, pa = 3 * blk; /* PA beyond fake memory is fine: not accessed */
        smt_pt_map(&pt, va, pa, cases[i].level, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
        struct smmu_txn_rsp r;
        uint64_t off = blk - 8;
        tx(e, sid, va + off, true, false, false, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
        assert_int_equal(r.pa, pa + off);
        assert_int_equal(r.page_shift, cases[i].shift);
        tx(e, sid, va + 4096, false, false, false, &r); /* TLB hit inside the block */
        assert_int_equal(r.pa, pa + 4096);
    }
}

static void test_block_at_illegal_level(void **state)
{
    struct smt_env *e = *state;
    struct {
        unsigned p, level;
    } cases[] = {{12, 0}, {14, 1}, {16, 1}}; /* no L0 blocks; 16K/64K L1 need DS/LPA */
    for (unsigned i = 0; i < 3; i++) {
        struct smt_pt pt;
        struct smt_cd cd;
        uint64_t cdpa;
        uint32_t sid = 20 + i;
        mkctx(e, sid, cases[i].p, 48, (uint16_t)sid, &pt, &cd, &cdpa);
        uint64_t va = 1ULL << 47;
        smt_pt_map(&pt, va, 0, cases[i].level, SMT_PTE_DEFAULT);
        uint64_t rec[4];
        expect_fault(e, sid, va, false, true, false, SMT_F_TRANSLATION, rec);
    }
    /* Level 3 with bits[1:0] == 0b01 is Reserved: Translation fault */
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 30, 12, 48, 30, &pt, &cd, &cdpa);
    uint64_t da = smt_pt_map(&pt, 0x1000, PABASE, 3, SMT_PTE_DEFAULT);
    smt_w64(&e->mem, da, (smt_r64(&e->mem, da) & ~3ULL) | 1);
    uint64_t rec[4];
    expect_fault(e, 30, 0x1000, false, true, false, SMT_F_TRANSLATION, rec);
}

static void test_fault_record_fields(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 7, 12, 48, 7, &pt, &cd, &cdpa);
    uint64_t rec[4];
    /* write, privileged, unmapped: RnW = 0, PnU = 1, InD = 0, CLASS = IN, S2 = 0 */
    expect_fault(e, 7, 0xABCDE123ULL, true, true, false, SMT_F_TRANSLATION, rec);
    assert_int_equal((rec[1] >> 35) & 1, 0);
    assert_int_equal((rec[1] >> 33) & 1, 1);
    assert_int_equal((rec[1] >> 34) & 1, 0);
    assert_int_equal((rec[1] >> 40) & 3, 2);
    assert_int_equal((rec[1] >> 39) & 1, 0);
    assert_int_equal(rec[0] & (1u << 11), 0);
    /* instruction read, unprivileged: RnW = 1, InD = 1, PnU = 0 */
    expect_fault(e, 7, 0x5000, false, false, true, SMT_F_TRANSLATION, rec);
    assert_int_equal((rec[1] >> 35) & 1, 1);
    assert_int_equal((rec[1] >> 34) & 1, 1);
    assert_int_equal((rec[1] >> 33) & 1, 0);
    /* a write marked as an instruction access is a data access (§13.1.2: InD = 0) */
    expect_fault(e, 7, 0x6000, true, false, true, SMT_F_TRANSLATION, rec);
    assert_int_equal((rec[1] >> 35) & 1, 0);
    assert_int_equal((rec[1] >> 34) & 1, 0);
}

static void test_walk_eabt_each_level(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 8, 12, 48, 8, &pt, &cd, &cdpa);
    uint64_t va = 0x0000123456789000ULL;
    smt_pt_map(&pt, va, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    for (unsigned level = 0; level <= 3; level++) {
        flush_all(e);
        uint64_t da = smt_pt_desc_addr(&pt, va, level);
        smt_fault_add(&e->mem, da, 8, true, false);
        uint64_t rec[4];
        expect_fault(e, 8, va, false, false, false, SMT_F_WALK_EABT, rec);
        assert_int_equal(rec[3], da);              /* FetchAddr [55:3] */
        assert_int_equal((rec[1] >> 40) & 3, 1);   /* CLASS = TT */
        smt_fault_clear(&e->mem);
    }
    struct smmu_txn_rsp r;
    tx(e, 8, va, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
}

static void test_walk_eabt_not_suppressed_by_r(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 9, 12, 48, 9, &pt, &cd, &cdpa);
    cd.r = false;
    smt_cd_write(&e->mem, cdpa, &cd);
    smt_fault_add(&e->mem, pt.root, 4096, true, false);
    uint64_t rec[4];
    expect_fault(e, 9, 0x1000, false, false, false, SMT_F_WALK_EABT, rec);
}

static void test_address_size_faults(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 11, 12, 39, 11, &pt, &cd, &cdpa);
    cd.ips = 2; /* 40 bits */
    smt_cd_write(&e->mem, cdpa, &cd);
    smt_pt_map(&pt, 0x2000, 1ULL << 41, 3, SMT_PTE_DEFAULT); /* leaf OA beyond 40 bits */
    uint64_t rec[4];
    expect_fault(e, 11, 0x2000, false, true, false, SMT_F_ADDR_SIZE, rec);
    /* a table descriptor pointing beyond 40 bits */
    smt_pt_map(&pt, 0x40000000, PABASE, 3, SMT_PTE_DEFAULT);
    uint64_t l1 = smt_pt_desc_addr(&pt, 0x40000000, 1);
    smt_w64(&e->mem, l1, smt_r64(&e->mem, l1) | (1ULL << 44));
    expect_fault(e, 11, 0x40000000, false, true, false, SMT_F_ADDR_SIZE, rec);
}

static void test_access_flag(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 12, 12, 48, 12, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0x3000, PABASE, 3, SMT_PTE_DEFAULT & ~SMT_PTE_AF);
    uint64_t rec[4];
    expect_fault(e, 12, 0x3000, false, true, false, SMT_F_ACCESS, rec);
    assert_int_equal((rec[1] >> 40) & 3, 2);
    cd.affd = true; /* AF considered 1 */
    smt_cd_write(&e->mem, cdpa, &cd);
    smt_cmd(e, SMT_OP_CFGI_CD | (12ULL << 32), 0);
    smt_run(e);
    struct smmu_txn_rsp r;
    tx(e, 12, 0x3000, false, true, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
}

/* AP[2:1] x privilege x access (Arm ARM D8.4.1, stage 1 EL1&0). */
static void test_permission_matrix(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 13, 12, 48, 13, &pt, &cd, &cdpa);
    /* ap: 0 = EL1 RW; 1 = EL1 RW + EL0 RW; 2 = EL1 RO; 3 = EL1 RO + EL0 RO */
    static const bool allow[4][4] = {
        /* priv read, priv write, unpriv read, unpriv write */
        {true, true, false, false},
        {true, true, true, true},
        {true, false, false, false},
        {true, false, true, false},
    };
    for (unsigned ap = 0; ap < 4; ap++) {
        uint64_t va = 0x100000ULL * (ap + 1);
        smt_pt_map(&pt, va, PABASE, 3, SMT_PTE_DEFAULT | ((uint64_t)ap << 6));
        for (unsigned k = 0; k < 4; k++) {
            bool priv = k < 2, wr = k & 1;
            struct smmu_txn_rsp r;
            tx(e, 13, va, wr, priv, false, &r);
            if (allow[ap][k]) {
                assert_int_equal(r.status, SMMU_TXN_OK);
            } else {
                assert_int_equal(r.event, SMT_F_PERMISSION);
                uint64_t rec[4];
                assert_true(smt_evt_pop(e, rec));
                assert_int_equal(rec[0] & 0xFF, SMT_F_PERMISSION);
                assert_int_equal((rec[1] >> 35) & 1, !wr);
                assert_int_equal((rec[1] >> 33) & 1, priv);
            }
        }
    }
}

static void test_execute_never(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 14, 12, 48, 14, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0x10000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0 | SMT_PTE_AP_RO | SMT_PTE_UXN);
    smt_pt_map(&pt, 0x20000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0 | SMT_PTE_AP_RO | SMT_PTE_PXN);
    smt_pt_map(&pt, 0x30000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0); /* EL0-writable */
    struct smmu_txn_rsp r;
    uint64_t rec[4];
    expect_fault(e, 14, 0x10000, false, false, true, SMT_F_PERMISSION, rec);
    assert_int_equal((rec[1] >> 34) & 1, 1); /* InD */
    tx(e, 14, 0x10000, false, true, true, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    expect_fault(e, 14, 0x20000, false, true, true, SMT_F_PERMISSION, rec);
    tx(e, 14, 0x20000, false, false, true, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    /* memory writable at EL0 is never privileged-executable */
    expect_fault(e, 14, 0x30000, false, true, true, SMT_F_PERMISSION, rec);
    tx(e, 14, 0x30000, false, false, true, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
}

static void test_wxn_and_pan(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 15, 12, 48, 15, &pt, &cd, &cdpa);
    cd.wxn = true;
    cd.pan = true;
    smt_cd_write(&e->mem, cdpa, &cd);
    smt_pt_map(&pt, 0x10000, PABASE, 3, SMT_PTE_DEFAULT);                 /* EL1 RW */
    smt_pt_map(&pt, 0x20000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0 | SMT_PTE_AP_RO);
    uint64_t rec[4];
    expect_fault(e, 15, 0x10000, false, true, true, SMT_F_PERMISSION, rec); /* WXN */
    expect_fault(e, 15, 0x20000, false, true, false, SMT_F_PERMISSION, rec); /* PAN */
    struct smmu_txn_rsp r;
    tx(e, 15, 0x20000, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
}

static void test_hierarchical_ap_table(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 16, 12, 48, 16, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0x40000000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    uint64_t l1 = smt_pt_desc_addr(&pt, 0x40000000, 1);
    smt_w64(&e->mem, l1, smt_r64(&e->mem, l1) | (1ULL << 62)); /* APTable[1]: no writes */
    uint64_t rec[4];
    expect_fault(e, 16, 0x40000000, true, true, false, SMT_F_PERMISSION, rec);
    /* CD.HAD0 (IDR3.HAD) disables the hierarchical attributes */
    cd.had0 = true;
    smt_cd_write(&e->mem, cdpa, &cd);
    flush_all(e);
    struct smmu_txn_rsp r;
    tx(e, 16, 0x40000000, true, true, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
}

static void test_tbi_and_range_check(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 17, 12, 48, 17, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0x7000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    uint64_t tagged = 0x5A00000000007000ULL;
    uint64_t rec[4];
    expect_fault(e, 17, tagged, false, false, false, SMT_F_TRANSLATION, rec);
    assert_int_equal(rec[2], tagged); /* InputAddr keeps bits [63:56] */
    cd.tbi0 = true;
    smt_cd_write(&e->mem, cdpa, &cd);
    smt_cmd(e, SMT_OP_CFGI_CD | (17ULL << 32), 0);
    smt_run(e);
    struct smmu_txn_rsp r;
    tx(e, 17, tagged + 4, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PABASE + 4);
}

static void test_ttb1_region_and_epd(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt0, pt1;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 18, 12, 48, 18, &pt0, &cd, &cdpa);
    smt_pt_init(&pt1, &e->mem, 16, 42);
    cd.epd1 = false;
    cd.t1sz = 22;
    cd.tg1 = 3; /* TG1 encoding: 64K */
    cd.ttb1 = pt1.root;
    smt_cd_write(&e->mem, cdpa, &cd);
    uint64_t va = 0xFFFFFFC000010000ULL; /* top 22 bits ones */
    smt_pt_map(&pt1, va, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    tx(e, 18, va + 0x44, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PABASE + 0x44);
    assert_int_equal(r.page_shift, 16);
    uint64_t rec[4];
    expect_fault(e, 18, 0xFFFF800000000000ULL, false, false, false, SMT_F_TRANSLATION, rec);
    cd.epd0 = true; /* TTB0 walks disabled */
    smt_cd_write(&e->mem, cdpa, &cd);
    smt_pt_map(&pt0, 0x1000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    flush_all(e);
    expect_fault(e, 18, 0x1000, false, false, false, SMT_F_TRANSLATION, rec);
}

static void test_tlb_hit_and_global(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 19, 12, 48, 19, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0x9000, PABASE, 3, (SMT_PTE_DEFAULT & ~SMT_PTE_NG) | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    tx(e, 19, 0x9000, false, false, false, &r);
    uint64_t reads = e->mem.reads;
    tx(e, 19, 0x9008, false, false, false, &r);
    assert_int_equal(e->mem.reads, reads); /* TLB hit: no memory access */
    assert_int_equal(r.pa, PABASE + 8);
    /* A second context (ASID 99) whose tables do not map 0x9000 still hits the global entry */
    struct smt_pt pt2;
    struct smt_cd cd2;
    uint64_t cdpa2;
    mkctx(e, 20, 12, 48, 99, &pt2, &cd2, &cdpa2);
    tx(e, 20, 0x9000, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    /* TLBI_NH_ASID does not remove global entries (§4.4.2.2: it invalidates the non-global
     * entries of that ASID), neither for another ASID nor for the ASID the entry was cached
     * under (19): the stale global entry still serves the context that no longer maps it */
    smt_cmd(e, SMT_OP_TLBI_NH_ASID | (99ULL << 48), 0);
    smt_run(e);
    tx(e, 20, 0x9000, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_cmd(e, SMT_OP_TLBI_NH_ASID | (19ULL << 48), 0);
    smt_run(e);
    tx(e, 20, 0x9000, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    /* ... and TLBI_NH_VAA does */
    smt_cmd(e, SMT_OP_TLBI_NH_VAA, 0x9000);
    smt_run(e);
    tx(e, 20, 0x9000, false, false, false, &r);
    assert_int_equal(r.event, SMT_F_TRANSLATION);
}

/* TLBI_NH_VA invalidates the ASID's entries for the address and the global ones of every ASID
 * (§4.4.2.3): a global entry cached under ASID 22 goes with a TLBI_NH_VA naming ASID 98. */
static void test_tlbi_nh_va_removes_global_of_other_asid(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt, pt2;
    struct smt_cd cd, cd2;
    uint64_t cdpa, cdpa2;
    struct smmu_txn_rsp r;
    mkctx(e, 22, 12, 48, 22, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0xA000, PABASE, 3, (SMT_PTE_DEFAULT & ~SMT_PTE_NG) | SMT_PTE_AP_EL0);
    tx(e, 22, 0xA000, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    mkctx(e, 23, 12, 48, 98, &pt2, &cd2, &cdpa2); /* does not map 0xA000 */
    tx(e, 23, 0xA000, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK); /* the global entry */
    /* another address: the global entry stays */
    smt_cmd(e, SMT_OP_TLBI_NH_VA | (98ULL << 48), 0xB000);
    smt_run(e);
    tx(e, 23, 0xA000, false, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_cmd(e, SMT_OP_TLBI_NH_VA | (98ULL << 48), 0xA000);
    smt_run(e);
    uint64_t rec[4];
    expect_fault(e, 23, 0xA000, false, false, false, SMT_F_TRANSLATION, rec);
}

static void test_walk_cache_saves_reads(void **state)
{
    struct smt_env *e = *state;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(e, 21, 12, 48, 21, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0x200000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    smt_pt_map(&pt, 0x201000, PABASE + 0x1000, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    tx(e, 21, 0x200000, false, false, false, &r);
    uint64_t reads = e->mem.reads;
    tx(e, 21, 0x201000, false, false, false, &r); /* L2 walk-cache hit: one leaf read */
    assert_int_equal(e->mem.reads - reads, 1);
    assert_int_equal(r.pa, PABASE + 0x1000);
    struct smmu_cache_stats w2;
    smmu_get_cache_stats(e->smmu, SMMU_CACHE_WALK_L2, &w2);
    assert_int_equal(w2.hits, 1);
    /* a leaf-only VA invalidation keeps the walk cache; Leaf = 0 drops it */
    smt_cmd(e, SMT_OP_TLBI_NH_VA | (21ULL << 48), 0x201000 | 1);
    smt_run(e);
    reads = e->mem.reads;
    tx(e, 21, 0x201000, false, false, false, &r);
    assert_int_equal(e->mem.reads - reads, 1);
    smt_cmd(e, SMT_OP_TLBI_NH_VA | (21ULL << 48), 0x201000);
    smt_run(e);
    reads = e->mem.reads;
    tx(e, 21, 0x201000, false, false, false, &r);
    assert_int_equal(e->mem.reads - reads, 4);
}

static void policy_run(enum smmu_cache_policy pol, bool retouch, bool expect_hit)
{
    struct smmu_config c;
    smmu_config_default(&c);
    c.thread_safe = false;
    c.tlb = (struct smmu_cache_geom){4, 0, pol};
    struct smt_env e;
    assert_int_equal(smt_env_init(&e, &c, 4), 0);
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(&e, 1, 12, 48, 1, &pt, &cd, &cdpa);
    for (unsigned i = 0; i < 5; i++)
        smt_pt_map(&pt, 0x1000ULL * (i + 1), PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    for (unsigned i = 0; i < 4; i++)
        tx(&e, 1, 0x1000ULL * (i + 1), false, false, false, &r);
    if (retouch)
        tx(&e, 1, 0x1000, false, false, false, &r);
    tx(&e, 1, 0x5000, false, false, false, &r); /* one eviction */
    struct smmu_cache_stats st;
    smmu_get_cache_stats(e.smmu, SMMU_CACHE_TLB, &st);
    assert_int_equal(st.capacity, 4);
    assert_int_equal(st.evictions, 1);
    uint64_t hits = st.hits;
    tx(&e, 1, 0x1000, false, false, false, &r);
    smmu_get_cache_stats(e.smmu, SMMU_CACHE_TLB, &st);
    assert_int_equal(st.hits - hits, expect_hit ? 1 : 0);
    smt_env_fini(&e);
}

static void test_tlb_policy_lru_fifo(void **state)
{
    (void)state;
    policy_run(SMMU_POLICY_FIFO, true, false); /* FIFO ignores the re-touch */
    policy_run(SMMU_POLICY_LRU, true, true);   /* LRU keeps the re-touched entry */
    policy_run(SMMU_POLICY_LRU, false, false);
}

static void test_no_caches(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.thread_safe = false;
    c.ste_cache.entries = c.cd_cache.entries = c.tlb.entries = 0;
    for (int l = 0; l < 3; l++)
        c.walk_cache[l].entries = 0;
    struct smt_env e;
    assert_int_equal(smt_env_init(&e, &c, 4), 0);
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    mkctx(&e, 1, 12, 48, 1, &pt, &cd, &cdpa);
    smt_pt_map(&pt, 0x1000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    for (int i = 0; i < 2; i++) {
        uint64_t reads = e.mem.reads;
        tx(&e, 1, 0x1000, false, false, false, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
        assert_int_equal(e.mem.reads - reads, 6); /* STE + CD + 4 levels, every time */
    }
    smt_env_fini(&e);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_granule_4k_all_sizes),
        T(test_granule_16k_all_sizes),
        T(test_granule_64k_all_sizes),
        T(test_block_mappings),
        T(test_block_at_illegal_level),
        T(test_fault_record_fields),
        T(test_walk_eabt_each_level),
        T(test_walk_eabt_not_suppressed_by_r),
        T(test_address_size_faults),
        T(test_access_flag),
        T(test_permission_matrix),
        T(test_execute_never),
        T(test_wxn_and_pan),
        T(test_hierarchical_ap_table),
        T(test_tbi_and_range_check),
        T(test_ttb1_region_and_epd),
        T(test_tlb_hit_and_global),
        T(test_tlbi_nh_va_removes_global_of_other_asid),
        T(test_walk_cache_saves_reads),
        cmocka_unit_test(test_tlb_policy_lru_fifo),
        cmocka_unit_test(test_no_caches),
    };
    return cmocka_run_group_tests_name("smmuv3_walk", tests, NULL, NULL);
}
