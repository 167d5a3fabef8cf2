/* test_smmuv3_cmdq.c — SMMUv3 model command queue: each command's effect, range-invalidation
 * arithmetic, CMD_SYNC completion modes, CERROR_ILL sweeps (opcodes and RES0 bits), CERROR_ABT,
 * stop-until-GERRORN. Field positions are IHI 0070 chapter 4, typed in here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

#define PABASE 0x41000000ULL
#define GENMASK(h, l) ((~0ULL >> (63 - (h))) & (~0ULL << (l)))

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
    smt_simple_stream(&f.e, 1, &f.pt, &f.cd, &f.cdpa);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    smt_env_fini(&f->e);
    return 0;
}

static uint32_t cons(struct fx *f) { return (uint32_t)smt_rd(&f->e, SMT_CMDQ_CONS); }
static unsigned cons_err(struct fx *f) { return (cons(f) >> 24) & 0x7F; }
static bool cmdq_err_active(struct fx *f)
{
    return ((smt_rd(&f->e, SMT_GERROR) ^ smt_rd(&f->e, SMT_GERRORN)) & SMT_GERROR_CMDQ_ERR) != 0;
}
static void ack_gerror(struct fx *f) { smt_wr(&f->e, SMT_GERRORN, smt_rd(&f->e, SMT_GERROR)); }

static bool tx_ok(struct fx *f, uint32_t sid, uint64_t va)
{
    struct smmu_txn_rsp r;
    smt_translate(&f->e, sid, va, false, &r);
    uint64_t rec[4];
    while (smt_evt_pop(&f->e, rec))
        ;
    return r.status == SMMU_TXN_OK;
}

/* Map n pages at va, translate each (filling the TLB), then clear the PTEs in memory: a page
 * still translating afterwards is served from a (now stale) TLB entry. */
static void map_cache_unmap(struct fx *f, uint64_t va, unsigned n)
{
    uint64_t da[64];
    for (unsigned i = 0; i < n; i++)
        da[i] = smt_pt_map(&f->pt, va + 4096ULL * i, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    for (unsigned i = 0; i < n; i++)
        assert_true(tx_ok(f, 1, va + 4096ULL * i));
    for (unsigned i = 0; i < n; i++)
        smt_w64(&f->e.mem, da[i], 0);
}

static void test_sync_none_advances_cons(void **state)
{
    struct fx *f = *state;
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(cons(f), 0);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(cons(f), 1);
    assert_int_equal(f->e.mem.nmsi, 0);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_CMD_SYNC], 0);
}

static void test_sync_msi_linux_style(void **state)
{
    struct fx *f = *state;
    /* Linux: CS = SIG_IRQ, MSH = IS, MSIAttr = WB, MSIAddr = the CMD_SYNC's own slot,
     * MSIData = 0; it then polls the first word of the command for 0. */
    uint64_t slot = f->e.cmdq + 16ULL * (f->e.prod & 255);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (1ULL << 12) | (3ULL << 22) | (0xFULL << 24), slot);
    assert_int_not_equal(smt_r32(&f->e.mem, slot), 0);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(smt_r32(&f->e.mem, slot), 0);
    assert_int_equal(f->e.mem.nmsi, 1);
    assert_int_equal(f->e.mem.msi_addr[0], slot);
    /* MSIData [63:32] written little-endian to MSIAddr [51:2] */
    uint64_t buf = smt_alloc(&f->e.mem, 64, 64);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (1ULL << 12) | (0xCAFEF00DULL << 32), buf + 4);
    smt_run(&f->e);
    assert_int_equal(smt_r32(&f->e.mem, buf + 4), 0xCAFEF00D);
    assert_int_equal(f->e.mem.msi_data[1], 0xCAFEF00D);
    struct smmu_queue_stats qs;
    assert_int_equal(smmu_get_cmdq_stats(f->e.smmu, 0, &qs), 0);
    assert_int_equal(qs.syncs_msi, 2);
}

static void test_sync_irq_wired(void **state)
{
    struct fx *f = *state;
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (1ULL << 12), 0); /* MSIAddr 0: wired CMD_SYNC IRQ */
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_CMD_SYNC], 1);
    assert_int_equal(f->e.mem.nmsi, 0);
}

static void test_sync_sev(void **state)
{
    struct fx *f = *state;
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (2ULL << 12), 0);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_SEV], 1);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (3ULL << 12), 0); /* CS 0b11 Reserved */
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(cons_err(f), 1);
}

/* A CMD_SYNC's completion signal is observable only once CONS has moved past it (IHI 0070
 * §3.18, §4.7.3). Linux depends on it: an MSI waiter takes its CMD_SYNC's slot + 1 as the
 * queue's cons, which a producer waiting for space may then replace by the CONS register. A
 * CONS still on the CMD_SYNC there took the driver's cons back by one; on a full queue prod
 * was then a lap and one ahead, which queue_has_space read as room, and the producers
 * overwrote entries the SMMU had not read (test_smmuv3_drv_mt lost a lap of TLBIs, rarely). */
static void test_sync_signal_after_cons(void **state)
{
    struct fx *f = *state;
    uint64_t slot;

    f->e.mem.smmu = f->e.smmu; /* CONS recorded at each signal */
    for (unsigned lap = 0; lap < 2; lap++) { /* the second lap: CONS's wrap bit set */
        smt_cmd(&f->e, SMT_OP_TLBI_NH_ALL, 0);
        slot = f->e.cmdq + 16ULL * (f->e.prod & 255);
        smt_cmd(&f->e, SMT_OP_CMD_SYNC | (1ULL << 12), slot); /* MSI to its own slot */
        smt_cmd(&f->e, SMT_OP_CMD_SYNC | (1ULL << 12), 0);    /* wired CMD_SYNC interrupt */
        smt_cmd(&f->e, SMT_OP_CMD_SYNC | (2ULL << 12), 0);    /* SEV */
        uint32_t sync = (f->e.prod - 3) & 511;                /* the first CMD_SYNC */
        assert_int_equal(smt_run(&f->e), 4);
        assert_int_equal(f->e.mem.nmsi, lap + 1);
        assert_int_equal(f->e.mem.msi_cons[lap], (sync + 1) & 511);
        assert_int_equal(f->e.mem.irq_cons[SMMU_IRQ_CMD_SYNC], (sync + 2) & 511);
        assert_int_equal(f->e.mem.irq_cons[SMMU_IRQ_SEV], (sync + 3) & 511);
        /* on to the next lap: 252 commands that signal nothing */
        for (unsigned i = 0; lap == 0 && i < 252; i++)
            smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
        smt_run(&f->e);
    }
    assert_int_equal(cons(f), 256 | 4); /* wrap bit, index 4 */
}

static void test_sync_msi_abort(void **state)
{
    struct fx *f = *state;
    uint64_t buf = smt_alloc(&f->e.mem, 64, 64);
    smt_fault_add(&f->e.mem, buf, 64, false, true);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (1ULL << 12), buf);
    assert_int_equal(smt_run(&f->e), 1); /* the command still completes */
    assert_int_equal(smt_rd(&f->e, SMT_GERROR) & SMT_GERROR_MSI_CMDQ_ABT, SMT_GERROR_MSI_CMDQ_ABT);
    assert_int_equal(cons(f), 1);
}

static bool legal_opcode(unsigned op)
{
    /* No TLBI_EL2_* (0x20-0x23): an SMMU without stage 2 has no Hyp (§6.3.1). */
    static const unsigned legal[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10,
                                     0x11, 0x12, 0x13, 0x30, 0x40, 0x46};
    for (unsigned i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
        if (legal[i] == op)
            return true;
    return false;
}

/* Enqueue one command expected to be ILLEGAL: processing stops with CONS on it, CONS.ERR =
 * CERROR_ILL (1), GERROR.CMDQ_ERR active; then the slot is patched to CMD_SYNC (as Linux does),
 * GERRORN acknowledges and processing resumes. */
static void expect_ill(struct fx *f, uint64_t d0, uint64_t d1)
{
    uint32_t before = cons(f) & 0xFFFFF;
    uint32_t slot_idx = f->e.prod & 255;
    smt_cmd(&f->e, d0, d1);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(cons(f) & 0xFFFFF, before);
    assert_int_equal(cons_err(f), 1);
    assert_true(cmdq_err_active(f));
    assert_int_equal(smt_run(&f->e), 0); /* stays stopped */
    smt_w64(&f->e.mem, f->e.cmdq + 16ULL * slot_idx, SMT_OP_CMD_SYNC);
    smt_w64(&f->e.mem, f->e.cmdq + 16ULL * slot_idx + 8, 0);
    ack_gerror(f);
    assert_false(cmdq_err_active(f));
    assert_int_equal(smt_run(&f->e), 1);
}

static void expect_ok(struct fx *f, uint64_t d0, uint64_t d1)
{
    smt_cmd(&f->e, d0, d1);
    assert_int_equal(smt_run(&f->e), 1);
    assert_false(cmdq_err_active(f));
}

static void test_illegal_opcodes_sweep(void **state)
{
    struct fx *f = *state;
    unsigned ill = 0;
    for (unsigned op = 0; op < 256; op++) {
        if (legal_opcode(op)) {
            continue;
        }
        expect_ill(f, op, 0);
        ill++;
    }
    assert_int_equal(ill, 256 - 13);
    struct smmu_queue_stats qs;
    smmu_get_cmdq_stats(f->e.smmu, 0, &qs);
    assert_int_equal(qs.cerror_ill, 256 - 13);
}

static void test_legal_opcodes_accepted(void **state)
{
    struct fx *f = *state;
    for (unsigned op = 0; op < 256; op++)
        if (legal_opcode(op))
            expect_ok(f, op, 0);
    struct smmu_queue_stats qs;
    smmu_get_cmdq_stats(f->e.smmu, 0, &qs);
    assert_int_equal(qs.commands, 13);
    assert_int_equal(qs.by_opcode[0x46], 1);
    assert_int_equal(qs.by_opcode[0x12], 1);
    assert_int_equal(smmu_cmdq_count(f->e.smmu), 1);
}

/* RES0 bit positions of each command (everything outside the fields of IHI 0070 §4.2–4.7).
 * SSec (bit 10) is included: it must be 0 on the Non-secure queue. */
struct res0 {
    unsigned op;
    uint64_t r0, r1;
};
static const struct res0 res0_tab[] = {
    {0x01, GENMASK(10, 8), ~0ULL},
    {0x02, GENMASK(10, 8), GENMASK(11, 10)},
    {0x03, GENMASK(31, 8), GENMASK(63, 1)},
    {0x04, GENMASK(31, 8), GENMASK(63, 5)},
    {0x05, GENMASK(11, 8), GENMASK(63, 1)},
    {0x06, GENMASK(31, 8), ~0ULL},
    {0x10, GENMASK(31, 8) | GENMASK(63, 48), ~0ULL},
    {0x11, GENMASK(31, 8), ~0ULL},
    {0x12, GENMASK(11, 8) | GENMASK(19, 17) | GENMASK(31, 25), GENMASK(7, 1)},
    {0x13, GENMASK(11, 8) | GENMASK(19, 17) | GENMASK(31, 25) | GENMASK(63, 48), GENMASK(7, 1)},
    {0x20, GENMASK(63, 8), ~0ULL},
    {0x21, GENMASK(47, 8), ~0ULL},
    {0x22, GENMASK(11, 8) | GENMASK(19, 17) | GENMASK(47, 25), GENMASK(7, 1)},
    {0x23, GENMASK(11, 8) | GENMASK(19, 17) | GENMASK(63, 25), GENMASK(7, 1)},
    {0x30, GENMASK(63, 8), ~0ULL},
    {0x40, (1ULL << 8) | (1ULL << 10), GENMASK(11, 6)},
    {0x46, GENMASK(11, 8) | GENMASK(21, 14) | GENMASK(31, 28), GENMASK(1, 0) | GENMASK(63, 52)},
};

static void test_reserved_fields_sweep(void **state)
{
    struct fx *f = *state;
    unsigned swept = 0;
    for (unsigned i = 0; i < sizeof(res0_tab) / sizeof(res0_tab[0]); i++) {
        for (unsigned b = 8; b < 64; b++)
            if (res0_tab[i].r0 & (1ULL << b)) {
                expect_ill(f, res0_tab[i].op | (1ULL << b), 0);
                swept++;
            }
        for (unsigned b = 0; b < 64; b++)
            if (res0_tab[i].r1 & (1ULL << b)) {
                expect_ill(f, res0_tab[i].op, 1ULL << b);
                swept++;
            }
    }
    assert_true(swept > 600);
}

static void test_range_fields_need_tg(void **state)
{
    struct fx *f = *state;
    expect_ill(f, SMT_OP_TLBI_NH_VA | (1ULL << 12), 0);  /* NUM with TG == 0 */
    expect_ill(f, SMT_OP_TLBI_NH_VA | (1ULL << 20), 0);  /* SCALE with TG == 0 */
    expect_ill(f, SMT_OP_TLBI_NH_VA, 1ULL << 8);         /* TTL with TG == 0 */
    /* 16K with TTL 1 without DS is treated as TTL 0: with NUM = SCALE = 0, Reserved */
    expect_ill(f, SMT_OP_TLBI_NH_VA, (2ULL << 10) | (1ULL << 8));
    expect_ok(f, SMT_OP_TLBI_NH_VA | (31ULL << 12) | (31ULL << 20), (1ULL << 10) | (3ULL << 8));
}

static void test_range_fields_without_ril(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.ril = false;
    c.arch_minor = 1; /* no RIL: an SMMUv3.1 (RIL is mandatory from v3.2) */
    c.hyp = false;
    c.ats = false;
    c.thread_safe = false;
    struct fx f;
    assert_int_equal(smt_env_init(&f.e, &c, 4), 0);
    expect_ill(&f, SMT_OP_TLBI_NH_VA, 1ULL << 10);        /* TG RES0 without RIL */
    expect_ill(&f, SMT_OP_TLBI_NH_VAA | (1ULL << 20), 0); /* SCALE RES0 */
    expect_ill(&f, SMT_OP_TLBI_EL2_ALL, 0);               /* no HYP */
    expect_ill(&f, SMT_OP_ATC_INV, 0);                    /* no ATS */
    expect_ok(&f, SMT_OP_TLBI_NH_VA, 0x1000);
    smt_env_fini(&f.e);
}

static void test_cerror_abt_on_queue_read(void **state)
{
    struct fx *f = *state;
    uint64_t slot = f->e.cmdq + 16ULL * (f->e.prod & 255);
    smt_fault_add(&f->e.mem, slot, 16, true, false);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(cons_err(f), 2); /* CERROR_ABT */
    assert_true(cmdq_err_active(f));
    ack_gerror(f); /* the fault persists: the same fetch aborts again */
    assert_int_equal(smt_run(&f->e), 0);
    assert_true(cmdq_err_active(f));
    smt_fault_clear(&f->e.mem);
    ack_gerror(f);
    assert_int_equal(smt_run(&f->e), 1);
    struct smmu_queue_stats qs;
    smmu_get_cmdq_stats(f->e.smmu, 0, &qs);
    assert_int_equal(qs.cerror_abt, 2);
}

static void test_stop_until_gerrorn_then_resume(void **state)
{
    struct fx *f = *state;
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    smt_cmd(&f->e, 0x00, 0); /* illegal */
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(cons(f) & 0xFFFFF, 1);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR) & 1, 1);
    /* acknowledging without fixing re-executes the same illegal command */
    ack_gerror(f);
    assert_int_equal(smt_run(&f->e), 0);
    assert_true(cmdq_err_active(f));
    smt_w64(&f->e.mem, f->e.cmdq + 16, SMT_OP_CMD_SYNC);
    ack_gerror(f);
    assert_int_equal(smt_run(&f->e), 3);
    assert_int_equal(cons(f) & 0xFFFFF, 4);
    assert_int_equal(cons_err(f), 1); /* ERR keeps the last error code */
}

static void test_bounded_work_per_call(void **state)
{
    struct fx *f = *state;
    for (int i = 0; i < 10; i++)
        smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smmu_process_commands(f->e.smmu, 3), 3);
    assert_int_equal(cons(f), 3);
    assert_int_equal(smmu_process_commands(f->e.smmu, 0), 0);
    assert_int_equal(smmu_process_commands(f->e.smmu, 100), 7);
    assert_int_equal(smmu_process_commands(f->e.smmu, 100), 0);
}

static void test_disabled_queue_not_processed(void **state)
{
    struct fx *f = *state;
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 0);
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    assert_int_equal(smt_run(&f->e), 1);
}

static void test_queue_wrap_and_log2size_cap(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.cmdqs = 4; /* at most 16 entries */
    c.thread_safe = false;
    struct fx f;
    assert_int_equal(smt_env_init(&f.e, &c, 4), 0);
    /* the env programmed LOG2SIZE 8: any use is capped at IDR1.CMDQS = 4 */
    f.e.cmdq_log2 = 4;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 10; i++)
            smt_cmd(&f.e, SMT_OP_CMD_SYNC, 0);
        assert_int_equal(smt_run(&f.e), 10);
    }
    assert_int_equal(smt_rd(&f.e, SMT_CMDQ_CONS), 50 & 31); /* index + wrap bit */
    smt_env_fini(&f.e);
}

static void test_cfgi_ste_range_arithmetic(void **state)
{
    struct fx *f = *state;
    struct smt_ste ste;
    smt_ste_s1(&ste, f->cdpa);
    smt_pt_map(&f->pt, 0x1000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    for (uint32_t sid = 0; sid < 16; sid++) {
        smt_ste_at(&f->e, sid, &ste);
        assert_true(tx_ok(f, sid, 0x1000));
    }
    ste.v = false;
    for (uint32_t sid = 0; sid < 16; sid++)
        smt_ste_at(&f->e, sid, &ste);
    /* StreamID 5, Range 1: 2^(1+1) = 4 StreamIDs from 4 */
    expect_ok(f, SMT_OP_CFGI_STE_RANGE | (5ULL << 32), 1);
    for (uint32_t sid = 0; sid < 16; sid++)
        assert_int_equal(tx_ok(f, sid, 0x1000), !(sid >= 4 && sid <= 7));
    expect_ok(f, SMT_OP_CFGI_STE | (9ULL << 32), 1);
    assert_false(tx_ok(f, 9, 0x1000));
    assert_true(tx_ok(f, 8, 0x1000));
    expect_ok(f, SMT_OP_CFGI_STE_RANGE, 31); /* CFGI_ALL */
    for (uint32_t sid = 0; sid < 16; sid++)
        assert_false(tx_ok(f, sid, 0x1000));
}

static void test_cfgi_cd_and_cd_all(void **state)
{
    struct fx *f = *state;
    smt_pt_map(&f->pt, 0x1000, PABASE, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    assert_true(tx_ok(f, 1, 0x1000));
    f->cd.v = false;
    smt_cd_write(&f->e.mem, f->cdpa, &f->cd);
    assert_true(tx_ok(f, 1, 0x1000)); /* cached CD */
    expect_ok(f, SMT_OP_CFGI_CD | (1ULL << 32) | (7ULL << 12), 1); /* another SSID */
    assert_true(tx_ok(f, 1, 0x1000));
    expect_ok(f, SMT_OP_CFGI_CD_ALL | (1ULL << 32), 0);
    assert_false(tx_ok(f, 1, 0x1000));
    f->cd.v = true;
    smt_cd_write(&f->e.mem, f->cdpa, &f->cd);
    expect_ok(f, SMT_OP_CFGI_CD | (1ULL << 32), 1);
    assert_true(tx_ok(f, 1, 0x1000));
}

static void test_tlbi_nh_all_asid_va(void **state)
{
    struct fx *f = *state;
    map_cache_unmap(f, 0x100000, 4);
    assert_true(tx_ok(f, 1, 0x100000)); /* stale entries still used */
    expect_ok(f, SMT_OP_TLBI_NH_ASID | (2ULL << 48), 0); /* other ASID: no effect */
    assert_true(tx_ok(f, 1, 0x100000));
    expect_ok(f, SMT_OP_TLBI_NH_VA | (1ULL << 48), 0x101000 | 1);
    assert_false(tx_ok(f, 1, 0x101000));
    assert_true(tx_ok(f, 1, 0x100000));
    expect_ok(f, SMT_OP_TLBI_NH_ASID | (1ULL << 48), 0);
    assert_false(tx_ok(f, 1, 0x100000));
    map_cache_unmap(f, 0x200000, 2);
    expect_ok(f, SMT_OP_TLBI_NH_ALL, 0);
    assert_false(tx_ok(f, 1, 0x200000));
    assert_false(tx_ok(f, 1, 0x201000));
    map_cache_unmap(f, 0x300000, 2);
    expect_ok(f, SMT_OP_TLBI_NSNH_ALL, 0);
    assert_false(tx_ok(f, 1, 0x300000));
}

/* Range = (NUM+1) * 2^SCALE granules from Address (§4.4.1.1). */
static void range_case(struct fx *f, uint64_t base, unsigned npages, unsigned num, unsigned scale,
                       unsigned tg, uint64_t start, uint64_t len)
{
    /* NUM = SCALE = TTL = 0 with a TG is Reserved (§4.4.1.1): a single granule names its
     * level, here 3 (the pages are 4K leaves) */
    uint64_t ttl = (num == 0 && scale == 0) ? 3ULL << 8 : 0;
    map_cache_unmap(f, base, npages);
    expect_ok(f, SMT_OP_TLBI_NH_VA | ((uint64_t)num << 12) | ((uint64_t)scale << 20) | (1ULL << 48),
              start | ((uint64_t)tg << 10) | ttl | 1);
    for (unsigned i = 0; i < npages; i++) {
        uint64_t va = base + 4096ULL * i;
        bool inside = va >= start && va < start + len;
        assert_int_equal(tx_ok(f, 1, va), !inside);
    }
    expect_ok(f, SMT_OP_TLBI_NH_ALL, 0);
}

static void test_range_invalidation_arithmetic(void **state)
{
    struct fx *f = *state;
    /* 4K: NUM 2, SCALE 1 -> 3 * 2 = 6 pages from page 4 */
    range_case(f, 0x400000, 16, 2, 1, 1, 0x404000, 6 * 4096);
    /* NUM 0, SCALE 0: a single granule */
    range_case(f, 0x500000, 8, 0, 0, 1, 0x503000, 4096);
    /* NUM 31, SCALE 0: 32 pages */
    range_case(f, 0x600000, 40, 31, 0, 1, 0x602000, 32 * 4096);
    /* 64K granule units: NUM 1, SCALE 0 -> 128K */
    range_case(f, 0x800000, 40, 1, 0, 3, 0x810000, 2 * 65536);
    /* Linux: 2 MiB of 4K pages = NUM 0, SCALE 9 */
    range_case(f, 0xA00000, 8, 0, 9, 1, 0xA00000, 2 << 20);
}

static void test_tlbi_va_on_block(void **state)
{
    struct fx *f = *state;
    uint64_t da = smt_pt_map(&f->pt, 0x40000000, 0x80000000ULL, 2, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    assert_true(tx_ok(f, 1, 0x40000000));
    assert_true(tx_ok(f, 1, 0x40123000));
    smt_w64(&f->e.mem, da, 0);
    /* a non-range TLBI of any address inside the 2M block removes it */
    expect_ok(f, SMT_OP_TLBI_NH_VA | (1ULL << 48), 0x401FF000 | 1);
    assert_false(tx_ok(f, 1, 0x40000000));
}

static void test_prefetch_and_atc_inv_noops(void **state)
{
    struct fx *f = *state;
    expect_ok(f, SMT_OP_PREFETCH_CONFIG | (1ULL << 32), 0);
    expect_ok(f, SMT_OP_PREFETCH_ADDR | (1ULL << 32), 0x1000 | 3);
    expect_ok(f, SMT_OP_ATC_INV | (1ULL << 32) | (1ULL << 11) | (5ULL << 12), 52);
    struct smmu_stats st;
    smmu_get_stats(f->e.smmu, &st);
    assert_int_equal(st.events_written, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_sync_none_advances_cons),
        T(test_sync_msi_linux_style),
        T(test_sync_irq_wired),
        T(test_sync_sev),
        T(test_sync_msi_abort),
        T(test_sync_signal_after_cons),
        T(test_illegal_opcodes_sweep),
        T(test_legal_opcodes_accepted),
        T(test_reserved_fields_sweep),
        T(test_range_fields_need_tg),
        cmocka_unit_test(test_range_fields_without_ril),
        T(test_cerror_abt_on_queue_read),
        T(test_stop_until_gerrorn_then_resume),
        T(test_bounded_work_per_call),
        T(test_disabled_queue_not_processed),
        cmocka_unit_test(test_queue_wrap_and_log2size_cap),
        T(test_cfgi_ste_range_arithmetic),
        T(test_cfgi_cd_and_cd_all),
        T(test_tlbi_nh_all_asid_va),
        T(test_range_invalidation_arithmetic),
        T(test_tlbi_va_on_block),
        T(test_prefetch_and_atc_inv_noops),
    };
    return cmocka_run_group_tests_name("smmuv3_cmdq", tests, NULL, NULL);
}
