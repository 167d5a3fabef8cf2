/* test_smmuv3_ecmdq.c — SMMUv3.3 Enhanced Command queues in the model: IDR1.ECMDQ/IDR6 and the
 * control-page registers, reset values and access rules, the EN/ENACK handshake, per-queue
 * order, CMD_SYNC scope, ERR/ERRACK error handling and the serial/parallel consumer entry points.
 * Register offsets and fields are IHI 0070 §3.5.6, §6.2.5, §6.3.49-51 and §6.3.107-109, typed in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

/* ---- spec constants ------------------------------------------------------------------------- */
#define IDR1_ECMDQ (1u << 31)
#define REG_IDR6 0x190
#define REG_CP_BASE(n) (0x4000 + 32ULL * (n))
#define REG_CP_CFG(n) (0x4008 + 32ULL * (n))
#define REG_CP_STATUS(n) (0x400C + 32ULL * (n))
#define Q_BASE 0x0
#define Q_PROD 0x8
#define Q_CONS 0xC
#define PROD_EN (1u << 31)
#define PROD_ERRACK (1u << 23)
#define CONS_ENACK (1u << 31)
#define CONS_ERR (1u << 23)
#define CONS_REASON(c) (((c) >> 24) & 7u)
#define CERROR_ILL 1
#define CERROR_ABT 2
#define GERROR_CMDQP_ERR (1u << 9)
#define GENMASK(h, l) ((~0ULL >> (63 - (h))) & (~0ULL << (l)))
#define CS_SIG_IRQ (1ULL << 12)

/* ---- fixture ---------------------------------------------------------------------------------- */
struct ecq {
    uint64_t regs, mem;
    unsigned log2;
    uint32_t prod, errack;
};

struct fx {
    struct smt_env e;
    struct ecq q[8];
    uint64_t msi; /* 64 MSI target words */
};

static struct fx fxs;

static struct fx *fx_new(unsigned n, bool parallel, uint8_t log2max)
{
    struct fx *f = &fxs;
    memset(f, 0, sizeof(*f));
    struct smmu_config c;
    smmu_config_default(&c);
    c.thread_safe = false;
    c.arch_minor = 3;
    c.ecmdq_count = n;
    c.ecmdq_parallel = parallel;
    c.ecmdq_log2size_max = log2max;
    assert_int_equal(smt_env_init(&f->e, &c, 4), 0);
    f->msi = smt_alloc(&f->e.mem, 8 * 64, 64);
    return f;
}

static void fx_free(struct fx *f) { smt_env_fini(&f->e); }

static uint32_t rd(struct fx *f, uint64_t off) { return (uint32_t)smmu_mmio_read(f->e.smmu, off, 4); }
static void wr(struct fx *f, uint64_t off, uint32_t v) { smmu_mmio_write(f->e.smmu, off, v, 4); }

/* Where ECMDQ n's registers are, found as a driver finds them: IDR6.LOG2NUMQ gives the queues
 * per 64K control page (spaced evenly), CMDQ_CONTROL_PAGE_BASEp.ADDR [55:16] the page offset. */
static uint64_t find_ecmdq(struct fx *f, unsigned n)
{
    unsigned lq = (rd(f, REG_IDR6) >> 16) & 0xF;
    unsigned page = n >> lq, i = n & ((1u << lq) - 1);
    uint64_t cp = smmu_mmio_read(f->e.smmu, REG_CP_BASE(page), 8) & GENMASK(55, 16);
    return cp + (uint64_t)i * (0x10000u >> lq);
}

static uint32_t qprod(struct fx *f, unsigned n) { return rd(f, f->q[n].regs + Q_PROD); }
static uint32_t qcons(struct fx *f, unsigned n) { return rd(f, f->q[n].regs + Q_CONS); }

/* Linux-style bring-up: BASE, PROD, CONS, then PROD.EN and poll CONS.ENACK. */
static void ecq_setup(struct fx *f, unsigned n, unsigned log2, bool enable)
{
    struct ecq *q = &f->q[n];
    q->regs = find_ecmdq(f, n);
    q->log2 = log2;
    q->mem = smt_alloc(&f->e.mem, 16ULL << log2, 16ULL << log2);
    q->prod = q->errack = 0;
    smmu_mmio_write(f->e.smmu, q->regs + Q_BASE, q->mem | log2, 8);
    wr(f, q->regs + Q_PROD, 0);
    wr(f, q->regs + Q_CONS, 0);
    if (enable) {
        wr(f, q->regs + Q_PROD, PROD_EN);
        assert_true(qcons(f, n) & CONS_ENACK);
    }
}

static void ecq_cmd(struct fx *f, unsigned n, uint64_t d0, uint64_t d1)
{
    struct ecq *q = &f->q[n];
    uint64_t slot = q->mem + 16ULL * (q->prod & ((1u << q->log2) - 1));
    smt_w64(&f->e.mem, slot, d0);
    smt_w64(&f->e.mem, slot + 8, d1);
    q->prod = (q->prod + 1) & ((2u << q->log2) - 1);
    wr(f, q->regs + Q_PROD, q->prod | PROD_EN | q->errack);
}

/* CMD_SYNC, CS = SIG_IRQ, MSIData = data written to MSI word `w` */
static void ecq_sync(struct fx *f, unsigned n, unsigned w, uint32_t data)
{
    ecq_cmd(f, n, SMT_OP_CMD_SYNC | CS_SIG_IRQ | ((uint64_t)data << 32), f->msi + 8ULL * w);
}
static uint32_t msi_word(struct fx *f, unsigned w) { return smt_r32(&f->e.mem, f->msi + 8ULL * w); }

static bool cmdqp_err_active(struct fx *f)
{
    return ((rd(f, SMT_GERROR) ^ rd(f, SMT_GERRORN)) & GERROR_CMDQP_ERR) != 0;
}

/* ---- ID registers and the control-page directory --------------------------------------------- */
static void test_no_ecmdq_by_default(void **state)
{
    (void)state;
    struct smt_env e;
    assert_int_equal(smt_env_init(&e, NULL, 4), 0);
    assert_int_equal(smt_rd(&e, SMT_IDR1) & IDR1_ECMDQ, 0);
    assert_int_equal(smt_rd(&e, REG_IDR6), 0); /* RES0 without IDR1.ECMDQ */
    assert_int_equal(smmu_mmio_read(e.smmu, REG_CP_BASE(0), 8), 0);
    assert_int_equal(smmu_cmdq_count(e.smmu), 1);
    assert_int_equal(smmu_mmio_size(e.smmu), SMMU_MMIO_SIZE);
    assert_int_equal(smmu_ecmdq_offset(e.smmu, 0), 0);
    /* GERRORN.CMDQP_ERR is RES0 without ECMDQ */
    smt_wr(&e, SMT_GERRORN, GERROR_CMDQP_ERR);
    assert_int_equal(smt_rd(&e, SMT_GERRORN) & GERROR_CMDQP_ERR, 0);
    smt_env_fini(&e);
}

static void test_idr_advertises_queues(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    assert_int_equal(rd(f, SMT_IDR1) & IDR1_ECMDQ, IDR1_ECMDQ);
    uint32_t idr6 = rd(f, REG_IDR6);
    unsigned nump = 1u << ((idr6 >> 24) & 0xF), numq = 1u << ((idr6 >> 16) & 0xF);
    assert_int_equal(nump * numq, 4);
    assert_int_equal(idr6 & ~(GENMASK(27, 24) | GENMASK(19, 16)), 0); /* RES0 bits */
    assert_int_equal(rd(f, SMT_AIDR) & 0xF, 3);                         /* SMMUv3.3 */
    uint64_t cp = smmu_mmio_read(f->e.smmu, REG_CP_BASE(0), 8);
    assert_int_equal(cp & 1, 1);                                         /* PRESET: registers */
    assert_int_equal((cp >> 1) & 3, 1);                                  /* CMDQGS = 64KB */
    assert_int_equal(cp & GENMASK(15, 3), 0);
    assert_true((cp & GENMASK(55, 16)) >= 0x20000); /* not over pages 0 and 1 */
    assert_int_equal(rd(f, REG_CP_CFG(0)), 1);      /* EN RES1 */
    assert_int_equal(rd(f, REG_CP_STATUS(0)), 1);   /* ENACK RES1 */
    assert_int_equal(smmu_mmio_read(f->e.smmu, REG_CP_BASE(1), 8), 0); /* beyond NUMP */
    assert_true(smmu_mmio_size(f->e.smmu) >= (cp & GENMASK(55, 16)) + 0x10000);
    assert_int_equal(smmu_cmdq_count(f->e.smmu), 5);
    for (unsigned n = 0; n < 4; n++)
        assert_int_equal(smmu_ecmdq_offset(f->e.smmu, n), find_ecmdq(f, n));
    assert_int_equal(smmu_ecmdq_offset(f->e.smmu, 4), 0);
    /* ID registers are RO */
    wr(f, REG_IDR6, 0);
    assert_int_equal(rd(f, REG_IDR6), idr6);
    fx_free(f);
}

static void test_idr6_many_pages(void **state)
{
    (void)state;
    struct fx *f = fx_new(512, false, 0);
    uint32_t idr6 = rd(f, REG_IDR6);
    unsigned lp = (idr6 >> 24) & 0xF, lq = (idr6 >> 16) & 0xF;
    assert_int_equal(lp + lq, 9);
    assert_true(lq <= 8 && lp <= 8); /* maximum value 0b1000 each */
    /* pages contiguous, ascending, 64K apart */
    uint64_t p0 = smmu_mmio_read(f->e.smmu, REG_CP_BASE(0), 8) & GENMASK(55, 16);
    for (unsigned p = 1; p < (1u << lp); p++)
        assert_int_equal(smmu_mmio_read(f->e.smmu, REG_CP_BASE(p), 8) & GENMASK(55, 16),
                         p0 + 0x10000ULL * p);
    assert_true(smmu_mmio_size(f->e.smmu) >= p0 + (0x10000ULL << lp));
    /* the last queue works like the first */
    f->q[0].regs = find_ecmdq(f, 511);
    assert_int_equal(smmu_ecmdq_offset(f->e.smmu, 511), f->q[0].regs);
    wr(f, f->q[0].regs + Q_PROD, PROD_EN);
    assert_int_equal(rd(f, f->q[0].regs + Q_CONS) & CONS_ENACK, CONS_ENACK);
    fx_free(f);
}

static void test_config_validation(void **state)
{
    (void)state;
    struct smmu_config c;
    struct smmu *s;
    const char *why = NULL;
    smmu_config_default(&c);
    c.arch_minor = 3;
    c.ecmdq_count = 3; /* NUMP and NUMQ are powers of two */
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, &why), -EINVAL);
    assert_non_null(why);
    c.ecmdq_count = 2048;
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, NULL), -EINVAL);
    c.ecmdq_count = 4;
    c.arch_minor = 2; /* ECMDQ is SMMUv3.3 */
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, NULL), -EINVAL);
    c.arch_minor = 3;
    c.msi = false; /* IDR1.ECMDQ == 1 implies IDR0.MSI == 1 */
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, NULL), -EINVAL);
    c.msi = true;
    c.coherent = false; /* ... and IDR0.COHACC == 1 */
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, NULL), -EINVAL);
    c.coherent = true;
    c.ecmdq_log2size_max = (uint8_t)(c.cmdqs + 1);
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, NULL), -EINVAL);
    c.ecmdq_log2size_max = 0;
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, NULL), 0);
    smmu_destroy(s);
}

/* ---- reset values and access rules -------------------------------------------------------------- */
static void test_reset_values(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    for (unsigned n = 0; n < 4; n++) {
        uint64_t r = find_ecmdq(f, n);
        /* EN, ERRACK, ENACK, ERR reset to 0 (§6.3.108-109) */
        assert_int_equal(rd(f, r + Q_PROD) & (PROD_EN | PROD_ERRACK), 0);
        assert_int_equal(rd(f, r + Q_CONS) & (CONS_ENACK | CONS_ERR), 0);
    }
    /* and again after a reset that follows use */
    ecq_setup(f, 1, 4, true);
    smmu_reset(f->e.smmu);
    assert_int_equal(qprod(f, 1) & PROD_EN, 0);
    assert_int_equal(qcons(f, 1) & CONS_ENACK, 0);
    fx_free(f);
}

static void test_enable_handshake(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 2, 4, false);
    assert_int_equal(qcons(f, 2) & CONS_ENACK, 0);
    wr(f, f->q[2].regs + Q_PROD, PROD_EN);
    assert_int_equal(qcons(f, 2) & CONS_ENACK, CONS_ENACK); /* ENACK follows EN */
    assert_int_equal(qprod(f, 2) & PROD_EN, PROD_EN);
    /* other queues unaffected */
    assert_int_equal(rd(f, find_ecmdq(f, 1) + Q_CONS) & CONS_ENACK, 0);
    wr(f, f->q[2].regs + Q_PROD, 0);
    assert_int_equal(qcons(f, 2) & CONS_ENACK, 0);
    fx_free(f);
}

static void test_base_cons_guarded_by_enable(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 0, 4, true);
    uint64_t r = f->q[0].regs;
    uint64_t base = smmu_mmio_read(f->e.smmu, r + Q_BASE, 8);
    assert_int_equal(base, f->q[0].mem | 4);
    /* BASE and CONS are RO unless EN == ENACK == 0 */
    smmu_mmio_write(f->e.smmu, r + Q_BASE, 0x12340000ULL | 3, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, r + Q_BASE, 8), base);
    wr(f, r + Q_CONS, 7);
    assert_int_equal(qcons(f, 0) & 0xFFFFF, 0);
    /* CR1 (queue attributes) is RO while an ECMDQ is enabled */
    smt_wr(&f->e, SMT_CR0, 0);
    smt_wr(&f->e, SMT_CR1, 0x5);
    assert_int_equal(smt_rd(&f->e, SMT_CR1), 0);
    /* disabled: writable; RES0 bits of BASE (63, 61:56) read 0 */
    wr(f, r + Q_PROD, 0);
    smmu_mmio_write(f->e.smmu, r + Q_BASE, (1ULL << 63) | (1ULL << 62) | 0x12340000ULL | 3, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, r + Q_BASE, 8), (1ULL << 62) | 0x12340000ULL | 3);
    wr(f, r + Q_CONS, 7);
    assert_int_equal(qcons(f, 0) & 0xFFFFF, 7);
    smt_wr(&f->e, SMT_CR1, 0x5);
    assert_int_equal(smt_rd(&f->e, SMT_CR1), 0x5);
    /* PROD RES0 bits [30:24], [22:20] read 0 */
    wr(f, r + Q_PROD, 0x7F700000u | 5);
    assert_int_equal(qprod(f, 0), 5);
    /* offsets between two queues' groups are RAZ/WI */
    wr(f, r + 0x10, 0xFFFFFFFF);
    assert_int_equal(rd(f, r + 0x10), 0);
    /* beyond the window: RAZ */
    assert_int_equal(smmu_mmio_read(f->e.smmu, smmu_mmio_size(f->e.smmu), 4), 0);
    fx_free(f);
}

/* ---- consumption ---------------------------------------------------------------------------------- */
static void test_all_queues_execute_in_order(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    for (unsigned n = 0; n < 4; n++)
        ecq_setup(f, n, 4, true);
    /* queue n: five CMD_SYNCs writing n*100 + i to the same word (the last write wins, and the
     * MSI log keeps the order) */
    for (unsigned i = 1; i <= 5; i++)
        for (unsigned n = 0; n < 4; n++)
            ecq_sync(f, n, n, n * 100 + i);
    assert_int_equal(smt_run(&f->e), 20);
    assert_int_equal(f->e.mem.nmsi, 20);
    unsigned last[4] = {0};
    for (unsigned k = 0; k < 20; k++) {
        unsigned n = (unsigned)((f->e.mem.msi_addr[k] - f->msi) / 8);
        assert_true(n < 4);
        assert_int_equal(f->e.mem.msi_data[k], n * 100 + last[n] + 1); /* per-queue order */
        last[n]++;
    }
    for (unsigned n = 0; n < 4; n++) {
        assert_int_equal(msi_word(f, n), n * 100 + 5);
        assert_int_equal(qcons(f, n) & 0xFFFFF, 5);
        struct smmu_queue_stats qs;
        assert_int_equal(smmu_get_cmdq_stats(f->e.smmu, 1 + n, &qs), 0);
        assert_int_equal(qs.commands, 5);
        assert_int_equal(qs.syncs_msi, 5);
    }
    struct smmu_queue_stats qs;
    assert_int_equal(smmu_get_cmdq_stats(f->e.smmu, 5, &qs), -EINVAL);
    assert_int_equal(smmu_get_cmdq_stats(f->e.smmu, 0, &qs), 0);
    assert_int_equal(qs.commands, 0);
    fx_free(f);
}

static void test_serial_round_robin(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    for (unsigned n = 0; n < 3; n++)
        ecq_setup(f, n, 4, true);
    for (unsigned n = 0; n < 3; n++)
        for (unsigned i = 0; i < 3; i++)
            ecq_sync(f, n, n, n * 10 + i);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | CS_SIG_IRQ | (99ULL << 32), f->msi + 8 * 10);
    /* one consumer, one command at a time from each queue with work */
    assert_int_equal(smmu_process_commands(f->e.smmu, 4), 4);
    for (unsigned n = 0; n < 3; n++)
        assert_int_equal(qcons(f, n) & 0xFFFFF, 1);
    assert_int_equal(smt_rd(&f->e, SMT_CMDQ_CONS) & 0xFFFFF, 1);
    assert_int_equal(smmu_process_commands(f->e.smmu, 3), 3);
    for (unsigned n = 0; n < 3; n++)
        assert_int_equal(qcons(f, n) & 0xFFFFF, 2);
    assert_int_equal(smmu_process_commands(f->e.smmu, 100), 3);
    assert_int_equal(smmu_process_commands(f->e.smmu, 100), 0);
    /* the serial mode has no per-queue consumer */
    assert_int_equal(smmu_process_queue(f->e.smmu, 1, 10), -EOPNOTSUPP);
    fx_free(f);
}

static void test_parallel_per_queue_consumer(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, true, 0);
    for (unsigned n = 0; n < 4; n++)
        ecq_setup(f, n, 4, true);
    for (unsigned n = 0; n < 4; n++)
        for (unsigned i = 0; i < 3; i++)
            ecq_sync(f, n, n, n * 10 + i);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    /* queue index 3 is ECMDQ 2: only it moves */
    assert_int_equal(smmu_process_queue(f->e.smmu, 3, 2), 2);
    assert_int_equal(qcons(f, 2) & 0xFFFFF, 2);
    assert_int_equal(qcons(f, 0) & 0xFFFFF, 0);
    assert_int_equal(qcons(f, 1) & 0xFFFFF, 0);
    assert_int_equal(smmu_process_queue(f->e.smmu, 3, 100), 1);
    assert_int_equal(smmu_process_queue(f->e.smmu, 3, 100), 0);
    assert_int_equal(smt_rd(&f->e, SMT_CMDQ_CONS) & 0xFFFFF, 0);
    assert_int_equal(smmu_process_queue(f->e.smmu, 0, 100), 1); /* SMMU_CMDQ */
    assert_int_equal(smmu_process_queue(f->e.smmu, 5, 100), -EINVAL);
    /* smmu_process_commands still drains everything */
    assert_int_equal(smmu_process_commands(f->e.smmu, 100), 9);
    fx_free(f);
}

static void test_sync_after_own_earlier_commands(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cdpa;
    smt_simple_stream(&f->e, 1, &pt, &cd, &cdpa);
    uint64_t leaf = smt_pt_map(&pt, 0x200000, 0x41000000, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    smt_translate(&f->e, 1, 0x200000, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_w64(&f->e.mem, leaf, 0); /* the TLB still holds the translation */
    ecq_setup(f, 1, 4, true);
    ecq_cmd(f, 1, SMT_OP_TLBI_NH_VA | (1ULL << 48), 0x200000 | 1); /* ASID 1, leaf */
    ecq_sync(f, 1, 0, 0xABCD);
    assert_int_equal(smmu_process_commands(f->e.smmu, 1), 1);
    assert_int_equal(msi_word(f, 0), 0); /* the sync has not completed yet */
    assert_int_equal(smmu_process_commands(f->e.smmu, 1), 1);
    assert_int_equal(msi_word(f, 0), 0xABCD);
    /* by the time the MSI is visible, the TLBI before it on this queue has taken effect */
    smt_translate(&f->e, 1, 0x200000, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, SMT_F_TRANSLATION);
    fx_free(f);
}

static void test_sync_does_not_wait_for_other_queue(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 0, 4, true);
    ecq_setup(f, 1, 4, true);
    ecq_cmd(f, 0, 0xFF, 0); /* illegal opcode: queue 0 stops here */
    ecq_sync(f, 0, 0, 0x1111);
    ecq_cmd(f, 1, SMT_OP_TLBI_NSNH_ALL, 0);
    ecq_sync(f, 1, 1, 0x2222);
    assert_int_equal(smt_run(&f->e), 2);
    assert_int_equal(msi_word(f, 1), 0x2222); /* completes although queue 0 is stuck */
    assert_int_equal(msi_word(f, 0), 0);
    fx_free(f);
}

/* ---- errors ----------------------------------------------------------------------------------- */
static void test_illegal_sets_err_ill_others_continue(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    for (unsigned n = 0; n < 3; n++)
        ecq_setup(f, n, 4, true);
    ecq_cmd(f, 1, SMT_OP_TLBI_NSNH_ALL, 0);
    ecq_cmd(f, 1, SMT_OP_TLBI_NSNH_ALL | (1ULL << 8), 0); /* RES0 bit set */
    ecq_cmd(f, 1, SMT_OP_TLBI_NSNH_ALL, 0);
    for (unsigned i = 0; i < 3; i++) {
        ecq_sync(f, 0, 0, i + 1);
        ecq_sync(f, 2, 2, i + 1);
    }
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 1 + 3 + 3 + 1);
    uint32_t c = qcons(f, 1);
    assert_int_equal(c & CONS_ERR, CONS_ERR);
    assert_int_equal(CONS_REASON(c), CERROR_ILL);
    assert_int_equal(c & 0xFFFFF, 1); /* RD points at the failed command */
    assert_int_equal(qcons(f, 0) & CONS_ERR, 0);
    assert_int_equal(qcons(f, 2) & CONS_ERR, 0);
    assert_int_equal(msi_word(f, 0), 3);
    assert_int_equal(msi_word(f, 2), 3);
    /* GERROR: CMDQP_ERR summarizes it; CMDQ_ERR is SMMU_CMDQ's alone */
    assert_true(cmdqp_err_active(f));
    assert_int_equal((smt_rd(&f->e, SMT_GERROR) ^ smt_rd(&f->e, SMT_GERRORN)) & SMT_GERROR_CMDQ_ERR, 0);
    /* the stopped queue stays stopped; acknowledging GERROR alone does not resume it */
    smt_wr(&f->e, SMT_GERRORN, smt_rd(&f->e, SMT_GERROR));
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(qcons(f, 1) & 0xFFFFF, 1);
    struct smmu_queue_stats qs;
    smmu_get_cmdq_stats(f->e.smmu, 2, &qs);
    assert_int_equal(qs.cerror_ill, 1);
    assert_int_equal(qs.commands, 1);
    smmu_get_cmdq_stats(f->e.smmu, 1, &qs);
    assert_int_equal(qs.cerror_ill, 0);
    fx_free(f);
}

static void test_errack_toggle_resumes(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 0, 4, true);
    ecq_cmd(f, 0, 0x7F, 0); /* Reserved opcode */
    ecq_sync(f, 0, 0, 0x55);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(qcons(f, 0) & CONS_ERR, CONS_ERR);
    /* software replaces the bad command with a CMD_SYNC (CS = NONE), like Linux's skip */
    smt_w64(&f->e.mem, f->q[0].mem, SMT_OP_CMD_SYNC);
    assert_int_equal(smt_run(&f->e), 0); /* still stopped: ERRACK != ERR */
    f->q[0].errack = PROD_ERRACK;
    wr(f, f->q[0].regs + Q_PROD, f->q[0].prod | PROD_EN | f->q[0].errack);
    assert_int_equal(smt_run(&f->e), 2);
    assert_int_equal(msi_word(f, 0), 0x55);
    /* a second error toggles ERR back to 0; the queue stops until ERRACK returns to 0 */
    smt_wr(&f->e, SMT_GERRORN, smt_rd(&f->e, SMT_GERROR));
    ecq_cmd(f, 0, 0x7F, 0);
    ecq_sync(f, 0, 0, 0x66);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(qcons(f, 0) & CONS_ERR, 0);
    assert_int_equal(CONS_REASON(qcons(f, 0)), CERROR_ILL);
    assert_true(cmdqp_err_active(f));
    smt_w64(&f->e.mem, f->q[0].mem + 16 * 2, SMT_OP_CMD_SYNC);
    f->q[0].errack = 0;
    wr(f, f->q[0].regs + Q_PROD, f->q[0].prod | PROD_EN);
    assert_int_equal(smt_run(&f->e), 2);
    assert_int_equal(msi_word(f, 0), 0x66);
    fx_free(f);
}

static void test_fetch_abort_abt(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 3, 4, true);
    ecq_setup(f, 0, 4, true);
    smt_fault_add(&f->e.mem, f->q[3].mem, 16ULL << 4, true, false);
    ecq_sync(f, 3, 3, 1);
    ecq_sync(f, 0, 0, 7);
    assert_int_equal(smt_run(&f->e), 1);
    uint32_t c = qcons(f, 3);
    assert_int_equal(c & CONS_ERR, CONS_ERR);
    assert_int_equal(CONS_REASON(c), CERROR_ABT);
    assert_int_equal(c & 0xFFFFF, 0);
    assert_int_equal(msi_word(f, 0), 7);
    assert_true(cmdqp_err_active(f));
    struct smmu_queue_stats qs;
    smmu_get_cmdq_stats(f->e.smmu, 4, &qs);
    assert_int_equal(qs.cerror_abt, 1);
    /* fix the memory, acknowledge: the fetch is retried */
    smt_fault_clear(&f->e.mem);
    f->q[3].errack = PROD_ERRACK;
    wr(f, f->q[3].regs + Q_PROD, f->q[3].prod | PROD_EN | f->q[3].errack);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(msi_word(f, 3), 1);
    fx_free(f);
}

static void test_sync_msi_abort_reported_in_gerror(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 0, 4, true);
    smt_fault_add(&f->e.mem, f->msi, 8, false, true);
    ecq_sync(f, 0, 0, 1);
    assert_int_equal(smt_run(&f->e), 1); /* the command completes */
    assert_int_equal(smt_rd(&f->e, SMT_GERROR) & SMT_GERROR_MSI_CMDQ_ABT, SMT_GERROR_MSI_CMDQ_ABT);
    assert_int_equal(qcons(f, 0) & CONS_ERR, 0);
    fx_free(f);
}

static void test_main_queue_error_does_not_stop_ecmdq(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 0, 4, true);
    smt_cmd(&f->e, 0xFF, 0); /* GERROR.CMDQ_ERR */
    ecq_sync(f, 0, 0, 9);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal((smt_rd(&f->e, SMT_GERROR) ^ smt_rd(&f->e, SMT_GERRORN)) & SMT_GERROR_CMDQ_ERR,
                     SMT_GERROR_CMDQ_ERR);
    assert_int_equal(msi_word(f, 0), 9);
    assert_false(cmdqp_err_active(f));
    /* and ECMDQs need neither CR0.CMDQEN nor SMMUEN */
    smt_wr(&f->e, SMT_CR0, 0);
    ecq_sync(f, 0, 0, 10);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(msi_word(f, 0), 10);
    fx_free(f);
}

static void test_disabled_queue_ignored(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 1, 4, false);
    /* fill the queue and move PROD while EN == 0 (PROD is RW when disabled) */
    struct ecq *q = &f->q[1];
    smt_w64(&f->e.mem, q->mem, SMT_OP_CMD_SYNC | CS_SIG_IRQ | (5ULL << 32));
    smt_w64(&f->e.mem, q->mem + 8, f->msi);
    q->prod = 1;
    wr(f, q->regs + Q_PROD, 1);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(qcons(f, 1) & 0xFFFFF, 0);
    assert_int_equal(msi_word(f, 0), 0);
    wr(f, q->regs + Q_PROD, 1 | PROD_EN);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(msi_word(f, 0), 5);
    /* disabling stops consumption; CONS stays where it was */
    wr(f, q->regs + Q_PROD, 1);
    ecq_sync(f, 1, 0, 6); /* ecq_cmd sets EN again: undo it, keep the new PROD */
    wr(f, q->regs + Q_PROD, q->prod);
    assert_int_equal(qcons(f, 1) & CONS_ENACK, 0);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(qcons(f, 1) & 0xFFFFF, 1);
    fx_free(f);
}

static void test_log2size_capped(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 4); /* implementation cap: 16 entries */
    ecq_setup(f, 0, 4, false);
    struct ecq *q = &f->q[0];
    /* software asks for 1024 entries; readback keeps it, use is capped (§6.3.107) */
    q->mem = smt_alloc(&f->e.mem, 16ULL << 10, 16ULL << 10);
    smmu_mmio_write(f->e.smmu, q->regs + Q_BASE, q->mem | 10, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, q->regs + Q_BASE, 8) & 0x1F, 10);
    wr(f, q->regs + Q_PROD, PROD_EN);
    /* slot 16 of a 1024-entry queue holds an illegal command: a 16-entry queue never reads it */
    smt_w64(&f->e.mem, q->mem + 16 * 16, 0xFF);
    for (unsigned i = 0; i < 17; i++) {
        ecq_sync(f, 0, 0, i + 1); /* q->log2 = 4: wraps after 16 */
        assert_int_equal(smt_run(&f->e), 1);
    }
    assert_int_equal(msi_word(f, 0), 17);
    assert_int_equal(qcons(f, 0) & 0xFFFFF, 0x10 | 1); /* wrapped once, index 1 */
    assert_int_equal(qcons(f, 0) & CONS_ERR, 0);
    fx_free(f);
}

static void test_log2size_capped_at_cmdqs(void **state)
{
    (void)state;
    struct smmu_config c;
    struct fx *f = &fxs;
    memset(f, 0, sizeof(*f));
    smmu_config_default(&c);
    c.thread_safe = false;
    c.arch_minor = 3;
    c.ecmdq_count = 2;
    c.cmdqs = 3; /* IDR1.CMDQS: 8 entries, the architected cap */
    assert_int_equal(smt_env_init(&f->e, &c, 4), 0);
    f->msi = smt_alloc(&f->e.mem, 8 * 64, 64);
    assert_int_equal((smt_rd(&f->e, SMT_IDR1) >> 21) & 0x1F, 3);
    ecq_setup(f, 1, 3, false);
    smmu_mmio_write(f->e.smmu, f->q[1].regs + Q_BASE, f->q[1].mem | 19, 8);
    wr(f, f->q[1].regs + Q_PROD, PROD_EN);
    smt_w64(&f->e.mem, f->q[1].mem + 16 * 8, 0xFF); /* beyond 8 entries */
    for (unsigned i = 0; i < 9; i++) {
        ecq_sync(f, 1, 1, i + 1);
        assert_int_equal(smt_run(&f->e), 1);
    }
    assert_int_equal(msi_word(f, 1), 9);
    assert_int_equal(rd(f, f->q[1].regs + Q_CONS) & 0xFFFFF, 0x8 | 1);
    fx_free(f);
}

static void test_sev_when_queue_leaves_full(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 0, 2, true); /* 4 entries */
    for (unsigned i = 0; i < 4; i++)
        ecq_cmd(f, 0, SMT_OP_TLBI_NSNH_ALL, 0);
    assert_int_equal(qprod(f, 0) & 0xFFFFF, 0x4); /* full: index 0, wrap 1 */
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_SEV], 0);
    assert_int_equal(smmu_process_commands(f->e.smmu, 1), 1);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_SEV], 1); /* IDR0.SEV: non-full wake-up */
    assert_int_equal(smt_run(&f->e), 3);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_SEV], 1);
    fx_free(f);
}

static void test_gerrorn_cmdqp_ack(void **state)
{
    (void)state;
    struct fx *f = fx_new(4, false, 0);
    ecq_setup(f, 0, 4, true);
    smt_wr(&f->e, SMT_IRQ_CTRL, 1); /* GERROR_IRQEN */
    ecq_cmd(f, 0, 0xFF, 0);
    smt_run(&f->e);
    assert_true(cmdqp_err_active(f));
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_GERROR], 1); /* GERROR interrupt, as other errors */
    /* a second ECMDQ error while CMDQP_ERR is active does not re-toggle it */
    ecq_setup(f, 1, 4, true);
    ecq_cmd(f, 1, 0xFF, 0);
    smt_run(&f->e);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR) & GERROR_CMDQP_ERR, GERROR_CMDQP_ERR);
    assert_int_equal(f->e.mem.nirq[SMMU_IRQ_GERROR], 1);
    smt_wr(&f->e, SMT_GERRORN, smt_rd(&f->e, SMT_GERROR));
    assert_false(cmdqp_err_active(f));
    assert_int_equal(smt_rd(&f->e, SMT_GERRORN) & GERROR_CMDQP_ERR, GERROR_CMDQP_ERR);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_ecmdq_by_default),
        cmocka_unit_test(test_idr_advertises_queues),
        cmocka_unit_test(test_idr6_many_pages),
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test(test_reset_values),
        cmocka_unit_test(test_enable_handshake),
        cmocka_unit_test(test_base_cons_guarded_by_enable),
        cmocka_unit_test(test_all_queues_execute_in_order),
        cmocka_unit_test(test_serial_round_robin),
        cmocka_unit_test(test_parallel_per_queue_consumer),
        cmocka_unit_test(test_sync_after_own_earlier_commands),
        cmocka_unit_test(test_sync_does_not_wait_for_other_queue),
        cmocka_unit_test(test_illegal_sets_err_ill_others_continue),
        cmocka_unit_test(test_errack_toggle_resumes),
        cmocka_unit_test(test_fetch_abort_abt),
        cmocka_unit_test(test_sync_msi_abort_reported_in_gerror),
        cmocka_unit_test(test_main_queue_error_does_not_stop_ecmdq),
        cmocka_unit_test(test_disabled_queue_ignored),
        cmocka_unit_test(test_log2size_capped),
        cmocka_unit_test(test_log2size_capped_at_cmdqs),
        cmocka_unit_test(test_sev_when_queue_leaves_full),
        cmocka_unit_test(test_gerrorn_cmdqp_ack),
    };
    return cmocka_run_group_tests_name("smmuv3_ecmdq", tests, NULL, NULL);
}
