/* test_smmuv3_cmdqv.c — the Tegra241 CMDQV in the model: PARAM and the window, reset values, the
 * CMDQV / VINTF / VCMDQ enable handshakes, the VCMDQ allocation map and the logical aperture,
 * queue processing by the SMMU's command executor, and each VCMDQ error (CS other than NONE, a
 * guest VINTF's forbidden command, bad BASE, PROD outside the queue, read abort, CONS write-back
 * abort) with the error maps, the interrupt and the GERRORN acknowledgement.
 * Offsets and fields are typed in from Linux's tegra241-cmdqv.c and QEMU's tegra241-cmdqv.h
 * (NVIDIA publishes no specification), never taken from the model's headers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

/* ---- constants from the driver's register map --------------------------------------------- */
#define WIN 0x20000ull                   /* this model's CMDQV window offset */
#define R_CONFIG 0x0
#define R_PARAM 0x4
#define R_STATUS 0x8
#define R_VI_ERR_MAP 0x14
#define R_VI_INT_MASK 0x1C
#define R_CMDQ_ERR_MAP 0x24
#define R_ALLOC(q) (0x200 + 4 * (q))
#define ALLOC(vi, l) (1u | ((uint32_t)(l) << 1) | ((uint32_t)(vi) << 15))
#define R_VINTF(v) (0x1000 + 0x100 * (v))
#define R_LVCMDQ_ERR_MAP 0xC0
#define HYP_OWN (1u << 17)
#define P0(q) (0x10000 + 0x80 * (q))     /* direct aperture */
#define P1(q) (0x20000 + 0x80 * (q))
#define VP0(v, l) (0x30000 + 0x20000 * (v) + 0x80 * (l))
#define VP1(v, l) (VP0(v, l) + 0x10000)
#define Q_CONS 0x0
#define Q_PROD 0x4
#define Q_CONFIG 0x8
#define Q_STATUS 0xC
#define Q_GERROR 0x10
#define Q_GERRORN 0x14
#define Q_BASE 0x0
#define Q_CONS_BASE 0x8
#define ERR(c) (((c) >> 24) & 0x7F)
#define CERROR_ILL 1
#define CERROR_ABT 2
#define CERROR_ILL_ACCESS 4
#define GERR_CMDQ 0x1
#define GERR_DRAM 0x2
#define GERR_INIT 0x4
#define CONS_DRAM_EN (1u << 20)
#define IRQ_CMDQV 4
#define CS_IRQ (1ull << 12)
#define CS_SEV (2ull << 12)

#define NQ 16
#define NVI 4

struct fx {
	struct smt_env e;
	uint64_t qmem[NQ];
	unsigned log2[NQ];
	uint32_t prod[NQ];
};
static struct fx fxs;

static struct fx *fx_cfg(bool guest, unsigned oas)
{
	struct fx *f = &fxs;
	struct smmu_config c;

	memset(f, 0, sizeof(*f));
	smmu_config_default(&c);
	c.thread_safe = false;
	c.cmdqv_vcmdqs = NQ;
	c.cmdqv_vintfs = NVI;
	c.cmdqv_guest = guest;
	if (oas)
		c.oas = (uint8_t)oas;
	assert_int_equal(smt_env_init(&f->e, &c, 4), 0);
	return f;
}
static struct fx *fx_new(void) { return fx_cfg(false, 0); }
static void fx_free(struct fx *f) { smt_env_fini(&f->e); }
static uint32_t rd(struct fx *f, uint64_t off) { return (uint32_t)smmu_mmio_read(f->e.smmu, WIN + off, 4); }
static void wr(struct fx *f, uint64_t off, uint32_t v) { smmu_mmio_write(f->e.smmu, WIN + off, v, 4); }

/* Linux's order: CMDQV on, the ALLOC map, VINTF (HYP_OWN then EN), then each VCMDQ: BASE and
 * CONFIG.EN through the VINTF's logical aperture. VCMDQ q goes to VINTF q / (NQ / NVI). */
static void bring_up(struct fx *f, bool hyp_own, unsigned log2)
{
	wr(f, R_CONFIG, 1);
	for (unsigned q = 0; q < NQ; q++)
		wr(f, R_ALLOC(q), ALLOC(q / (NQ / NVI), q % (NQ / NVI)));
	for (unsigned v = 0; v < NVI; v++) {
		wr(f, R_VINTF(v), hyp_own ? HYP_OWN : 0);
		wr(f, R_VINTF(v), (hyp_own ? HYP_OWN : 0) | 1);
	}
	for (unsigned q = 0; q < NQ; q++) {
		unsigned v = q / (NQ / NVI), l = q % (NQ / NVI);

		f->log2[q] = log2;
		f->qmem[q] = smt_alloc(&f->e.mem, 16ull << log2, 16ull << log2);
		smmu_mmio_write(f->e.smmu, WIN + VP1(v, l) + Q_BASE, f->qmem[q] | log2, 8);
		wr(f, VP0(v, l) + Q_CONFIG, 1);
		assert_int_equal(rd(f, VP0(v, l) + Q_STATUS) & 1, 1);
	}
}

static void put(struct fx *f, unsigned q, uint64_t d0, uint64_t d1)
{
	uint64_t slot = f->qmem[q] + 16ull * (f->prod[q] & ((1u << f->log2[q]) - 1));

	smt_w64(&f->e.mem, slot, d0);
	smt_w64(&f->e.mem, slot + 8, d1);
	f->prod[q] = (f->prod[q] + 1) & ((2u << f->log2[q]) - 1);
	wr(f, P0(q) + Q_PROD, f->prod[q]);
}
static void tlbi_va(struct fx *f, unsigned q) { put(f, q, SMT_OP_TLBI_NH_VA | (1ull << 48), 0x1000); }
static void sync_none(struct fx *f, unsigned q) { put(f, q, SMT_OP_CMD_SYNC, 0); }
static uint32_t cons(struct fx *f, unsigned q) { return rd(f, P0(q) + Q_CONS); }
static uint64_t q_cmds(struct fx *f, unsigned q)
{
	struct smmu_queue_stats st;

	assert_int_equal(smmu_get_cmdq_stats(f->e.smmu, 1 + q, &st), 0);
	return st.commands;
}

/* ---- registers ----------------------------------------------------------------------------- */

static void test_param_and_window(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	/* VER 1 [3:0], NUM_CMDQ_LOG2 [7:4] = log2 16, NUM_VI_LOG2 [11:8] = log2 4 */
	assert_int_equal(rd(f, R_PARAM), 1 | (4 << 4) | (2 << 8));
	assert_int_equal(smmu_mmio_size(f->e.smmu), WIN + 0x30000 + NVI * 0x20000ull);
	assert_int_equal(smmu_cmdqv_offset(f->e.smmu), WIN);
	assert_int_equal(smmu_cmdq_count(f->e.smmu), 1 + NQ);
	/* no ECMDQs: IDR1.ECMDQ stays 0 */
	assert_int_equal(smt_rd(&f->e, SMT_IDR1) >> 31, 0);
	fx_free(f);
}

static void test_config_refused(void **state)
{
	struct smmu_config c;
	struct smmu *s;
	const char *why = NULL;

	(void)state;
	smmu_config_default(&c);
	c.cmdqv_vcmdqs = 12; /* not a power of two */
	c.cmdqv_vintfs = 1;
	assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, &why), -EINVAL);
	c.cmdqv_vcmdqs = 256; /* ALLOC.LVCMDQ has 7 bits */
	assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, &why), -EINVAL);
	c.cmdqv_vcmdqs = 4;
	c.cmdqv_vintfs = 8; /* more VINTFs than VCMDQs */
	assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, &why), -EINVAL);
	c.cmdqv_vintfs = 0;
	assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, &why), -EINVAL);
	c.cmdqv_vintfs = 2;
	c.arch_minor = 3;
	c.ecmdq_count = 4; /* one or the other */
	assert_int_equal(smmu_create(&s, &c, &smt_host_ops, NULL, &why), -EINVAL);
	assert_non_null(strstr(why, "not both"));
}

static void test_reset_values(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	assert_int_equal(rd(f, R_CONFIG), 0);
	assert_int_equal(rd(f, R_STATUS), 0);
	for (unsigned v = 0; v < NVI; v++) {
		assert_int_equal(rd(f, R_VINTF(v)), 0);
		assert_int_equal(rd(f, R_VINTF(v) + 4), 0);
	}
	for (unsigned q = 0; q < NQ; q++) {
		assert_int_equal(rd(f, R_ALLOC(q)), 0);
		for (unsigned r = 0; r < 0x18; r += 4)
			assert_int_equal(rd(f, P0(q) + r), 0);
		assert_int_equal(smmu_mmio_read(f->e.smmu, WIN + P1(q), 8), 0);
	}
	fx_free(f);
}

static void test_cmdqv_enable_handshake(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	wr(f, R_CONFIG, 1);
	assert_int_equal(rd(f, R_STATUS), 1);
	wr(f, R_CONFIG, 0);
	assert_int_equal(rd(f, R_STATUS), 0);
	wr(f, R_PARAM, 0xFFFFFFFF); /* RO */
	assert_int_equal(rd(f, R_PARAM), 1 | (4 << 4) | (2 << 8));
	fx_free(f);
}

static void test_vintf_enable_and_hyp_own(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	wr(f, R_VINTF(1), HYP_OWN | (7u << 1)); /* VMID 7, not enabled */
	assert_int_equal(rd(f, R_VINTF(1) + 4) & 1, 0);
	wr(f, R_VINTF(1), HYP_OWN | (7u << 1) | 1);
	assert_int_equal(rd(f, R_VINTF(1)), HYP_OWN | (7u << 1) | 1);
	assert_int_equal(rd(f, R_VINTF(1) + 4) & 1, 1);
	/* HYP_OWN and VMID keep their values while the VINTF is enabled */
	wr(f, R_VINTF(1), 1);
	assert_int_equal(rd(f, R_VINTF(1)), HYP_OWN | (7u << 1) | 1);
	wr(f, R_VINTF(1), 0);
	assert_int_equal(rd(f, R_VINTF(1) + 4) & 1, 0);
	fx_free(f);
}

static void test_guest_hyp_own_wired_zero(void **state)
{
	struct fx *f = fx_cfg(true, 0);

	(void)state;
	wr(f, R_VINTF(0), HYP_OWN | 1);
	assert_int_equal(rd(f, R_VINTF(0)), 1); /* Linux reads it back to learn hyp_own */
	fx_free(f);
}

static void test_alloc_map_and_alias(void **state)
{
	struct fx *f = fx_new();
	uint64_t mem = smt_alloc(&f->e.mem, 16 << 6, 16 << 6);

	(void)state;
	wr(f, R_ALLOC(5), ALLOC(1, 3));
	assert_int_equal(rd(f, R_ALLOC(5)), ALLOC(1, 3));
	/* BASE written through VINTF 1's LVCMDQ 3 is VCMDQ 5's */
	smmu_mmio_write(f->e.smmu, WIN + VP1(1, 3), mem | 6, 8);
	assert_int_equal(smmu_mmio_read(f->e.smmu, WIN + P1(5), 8), mem | 6);
	wr(f, P0(5) + Q_PROD, 2);
	assert_int_equal(rd(f, VP0(1, 3) + Q_PROD), 2);
	/* VINTF STATUS.VI_NUM_LVCMDQ [23:16] counts the VCMDQs given to it */
	wr(f, R_ALLOC(6), ALLOC(1, 0));
	assert_int_equal((rd(f, R_VINTF(1) + 4) >> 16) & 0xFF, 2);
	assert_int_equal((rd(f, R_VINTF(0) + 4) >> 16) & 0xFF, 0);
	fx_free(f);
}

static void test_unmapped_logical_slot_raz_wi(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	wr(f, VP0(2, 1) + Q_PROD, 5);
	assert_int_equal(rd(f, VP0(2, 1) + Q_PROD), 0);
	for (unsigned q = 0; q < NQ; q++)
		assert_int_equal(rd(f, P0(q) + Q_PROD), 0);
	fx_free(f);
}

static void test_alloc_ignored_while_enabled(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	wr(f, R_ALLOC(0), ALLOC(3, 7));
	assert_int_equal(rd(f, R_ALLOC(0)), ALLOC(0, 0));
	fx_free(f);
}

static void test_vcmdq_enable_handshake_and_guards(void **state)
{
	struct fx *f = fx_new();
	uint64_t b;

	(void)state;
	bring_up(f, true, 4);
	b = smmu_mmio_read(f->e.smmu, WIN + P1(2), 8);
	/* BASE, CONS_INDX_BASE and CONS are read-only while the queue is enabled */
	smmu_mmio_write(f->e.smmu, WIN + P1(2), 0x12345000 | 3, 8);
	assert_int_equal(smmu_mmio_read(f->e.smmu, WIN + P1(2), 8), b);
	smmu_mmio_write(f->e.smmu, WIN + P1(2) + Q_CONS_BASE, 0x5000, 8);
	assert_int_equal(smmu_mmio_read(f->e.smmu, WIN + P1(2) + Q_CONS_BASE, 8), 0);
	wr(f, P0(2) + Q_CONS, 3);
	assert_int_equal(cons(f, 2), 0);
	wr(f, P0(2) + Q_CONFIG, 0);
	assert_int_equal(rd(f, P0(2) + Q_STATUS), 0);
	wr(f, P0(2) + Q_CONS, 3);
	assert_int_equal(cons(f, 2), 3);
	fx_free(f);
}

/* ---- queue processing ------------------------------------------------------------------------ */

static void test_processes_commands(void **state)
{
	struct fx *f = fx_new();
	uint32_t gerror = (uint32_t)smt_rd(&f->e, SMT_GERROR);

	(void)state;
	bring_up(f, true, 4);
	tlbi_va(f, 3);
	put(f, 3, SMT_OP_CFGI_STE | (1ull << 32), 0); /* a hypervisor-owned VINTF takes any */
	sync_none(f, 3);
	assert_int_equal(smt_run(&f->e), 3);
	assert_int_equal(cons(f, 3), 3);
	assert_int_equal(q_cmds(f, 3), 3);
	assert_int_equal(q_cmds(f, 2), 0);
	assert_int_equal(smt_rd(&f->e, SMT_GERROR), gerror);
	fx_free(f);
}

static void test_shares_executor_round_robin(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	for (unsigned i = 0; i < 4; i++) {
		smt_cmd(&f->e, SMT_OP_TLBI_NH_ALL, 0);
		tlbi_va(f, 0);
		tlbi_va(f, 9);
	}
	/* one command from each busy queue in turn: 6 = two from each of the three */
	assert_int_equal(smmu_process_commands(f->e.smmu, 6), 6);
	assert_int_equal(q_cmds(f, 0), 2);
	assert_int_equal(q_cmds(f, 9), 2);
	assert_int_equal(smmu_process_queue(f->e.smmu, 1, 10), -EOPNOTSUPP);
	fx_free(f);
}

static void test_needs_every_enable(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	wr(f, R_CONFIG, 0);
	tlbi_va(f, 0);
	assert_int_equal(smt_run(&f->e), 0);
	wr(f, R_CONFIG, 1);
	wr(f, R_VINTF(0), HYP_OWN); /* VINTF 0 off */
	assert_int_equal(smt_run(&f->e), 0);
	wr(f, R_VINTF(0), HYP_OWN | 1);
	wr(f, P0(0) + Q_CONFIG, 0);
	assert_int_equal(smt_run(&f->e), 0);
	wr(f, P0(0) + Q_CONFIG, 1);
	assert_int_equal(smt_run(&f->e), 1);
	assert_int_equal(cons(f, 0), 1);
	fx_free(f);
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void check_stopped(struct fx *f, unsigned q, unsigned code, uint32_t rd_idx)
{
	unsigned v = q / (NQ / NVI), l = q % (NQ / NVI);

	assert_int_equal(ERR(cons(f, q)), code);
	assert_int_equal(cons(f, q) & 0xFFFFF, rd_idx);
	assert_int_equal(rd(f, P0(q) + Q_GERROR) ^ rd(f, P0(q) + Q_GERRORN), GERR_CMDQ);
	assert_int_equal(rd(f, R_CMDQ_ERR_MAP + 4 * (q / 32)), 1u << (q % 32));
	assert_int_equal(rd(f, R_VI_ERR_MAP), 1u << v);
	assert_int_equal(smmu_mmio_read(f->e.smmu, WIN + R_VINTF(v) + R_LVCMDQ_ERR_MAP, 8), 1ull << l);
	assert_int_equal((rd(f, R_VINTF(v) + 4) >> 1) & 7, 1);
	/* the SMMU's own GERROR is not the VCMDQ's */
	assert_int_equal(smt_rd(&f->e, SMT_GERROR) ^ smt_rd(&f->e, SMT_GERRORN), 0);
}

static void ack(struct fx *f, unsigned q)
{
	wr(f, P0(q) + Q_GERRORN, rd(f, P0(q) + Q_GERROR));
}

static void test_sync_cs_irq_illegal(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	tlbi_va(f, 5);
	put(f, 5, SMT_OP_CMD_SYNC | CS_IRQ, 0x40000000);
	tlbi_va(f, 5);
	assert_int_equal(smt_run(&f->e), 1);
	check_stopped(f, 5, CERROR_ILL, 1);
	assert_int_equal(f->e.mem.nirq[IRQ_CMDQV], 1);
	assert_int_equal(f->e.mem.nmsi, 0);
	/* stays stopped until acknowledged; Linux rewrites the slot as a CS_NONE CMD_SYNC */
	assert_int_equal(smt_run(&f->e), 0);
	smt_w64(&f->e.mem, f->qmem[5] + 16, SMT_OP_CMD_SYNC);
	ack(f, 5);
	assert_int_equal(smt_run(&f->e), 2);
	assert_int_equal(cons(f, 5) & 0xFFFFF, 3);
	assert_int_equal(rd(f, R_VI_ERR_MAP), 0);
	fx_free(f);
}

static void test_sync_cs_sev_illegal(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	put(f, 8, SMT_OP_CMD_SYNC | CS_SEV, 0);
	assert_int_equal(smt_run(&f->e), 0);
	check_stopped(f, 8, CERROR_ILL, 0);
	fx_free(f);
}

static void test_guest_vintf_command_subset(void **state)
{
	struct fx *f = fx_new();
	static const uint64_t ok[] = { SMT_OP_TLBI_NH_VA, SMT_OP_TLBI_NH_ASID, SMT_OP_ATC_INV,
				       SMT_OP_CMD_SYNC };
	static const uint64_t bad[] = { SMT_OP_CFGI_STE, SMT_OP_CFGI_CD, SMT_OP_TLBI_NH_ALL,
					SMT_OP_TLBI_NH_VAA, SMT_OP_TLBI_NSNH_ALL,
					SMT_OP_PREFETCH_CONFIG };

	(void)state;
	bring_up(f, false, 4);
	for (unsigned i = 0; i < 4; i++)
		put(f, 1, ok[i], 0);
	assert_int_equal(smt_run(&f->e), 4);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(f, 1, bad[i], 0);
		assert_int_equal(smt_run(&f->e), 0);
		check_stopped(f, 1, CERROR_ILL, 4 + i);
		smt_w64(&f->e.mem, f->qmem[1] + 16ull * (4 + i), SMT_OP_CMD_SYNC);
		ack(f, 1);
		assert_int_equal(smt_run(&f->e), 1);
	}
	fx_free(f);
}

static void test_bad_log2size_init_err(void **state)
{
	struct fx *f = fx_new();
	uint64_t mem = smt_alloc(&f->e.mem, 4096, 4096);

	(void)state;
	wr(f, R_CONFIG, 1);
	wr(f, R_ALLOC(0), ALLOC(0, 0));
	wr(f, R_VINTF(0), HYP_OWN | 1);
	smmu_mmio_write(f->e.smmu, WIN + P1(0), mem | 20, 8); /* above VCMDQ_LOG2SIZE_MAX 19 */
	wr(f, P0(0) + Q_CONFIG, 1);
	assert_int_equal(rd(f, P0(0) + Q_STATUS), 0);
	assert_int_equal(rd(f, P0(0) + Q_GERROR), GERR_INIT);
	assert_int_equal(f->e.mem.nirq[IRQ_CMDQV], 1);
	/* a good BASE and an acknowledgement let it start */
	wr(f, P0(0) + Q_CONFIG, 0);
	smmu_mmio_write(f->e.smmu, WIN + P1(0), mem | 8, 8);
	ack(f, 0);
	wr(f, P0(0) + Q_CONFIG, 1);
	assert_int_equal(rd(f, P0(0) + Q_STATUS), 1);
	fx_free(f);
}

static void test_base_above_oas_init_err(void **state)
{
	struct fx *f = fx_cfg(false, 40);

	(void)state;
	wr(f, R_CONFIG, 1);
	wr(f, R_ALLOC(0), ALLOC(0, 0));
	wr(f, R_VINTF(0), HYP_OWN | 1);
	smmu_mmio_write(f->e.smmu, WIN + P1(0), (1ull << 44) | 8, 8);
	wr(f, P0(0) + Q_CONFIG, 1);
	assert_int_equal(rd(f, P0(0) + Q_STATUS), 0);
	assert_int_equal(rd(f, P0(0) + Q_GERROR), GERR_INIT);
	fx_free(f);
}

static void test_prod_beyond_queue(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 3); /* 8 entries: WR [2:0] index, bit 3 wrap */
	wr(f, P0(4) + Q_PROD, 1u << 4);
	assert_int_equal(smt_run(&f->e), 0);
	check_stopped(f, 4, CERROR_ILL_ACCESS, 0);
	/* more outstanding than the queue holds: 9 of 8 (wrap set, index 1) */
	wr(f, P0(6) + Q_PROD, (1u << 3) | 1);
	assert_int_equal(smt_run(&f->e), 0);
	assert_int_equal(ERR(cons(f, 6)), CERROR_ILL_ACCESS);
	/* software fixes PROD, acknowledges: the queue runs */
	f->prod[4] = 0;
	wr(f, P0(4) + Q_PROD, 0);
	ack(f, 4);
	tlbi_va(f, 4);
	assert_int_equal(smt_run(&f->e), 1);
	fx_free(f);
}

static void test_read_abort(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	smt_fault_add(&f->e.mem, f->qmem[7], 16, true, false);
	tlbi_va(f, 7);
	assert_int_equal(smt_run(&f->e), 0);
	check_stopped(f, 7, CERROR_ABT, 0);
	smt_fault_clear(&f->e.mem);
	ack(f, 7); /* the fetch is retried */
	assert_int_equal(smt_run(&f->e), 1);
	fx_free(f);
}

static void test_vi_int_mask(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	wr(f, R_VI_INT_MASK, 1u << 2); /* VINTF 2: VCMDQs 8..11 */
	assert_int_equal(rd(f, R_VI_INT_MASK), 1u << 2);
	wr(f, R_VI_INT_MASK, 0xFFFFFFFF);
	assert_int_equal(rd(f, R_VI_INT_MASK), 0xF); /* four VINTFs exist */
	wr(f, R_VI_INT_MASK, 1u << 2);
	put(f, 9, SMT_OP_CMD_SYNC | CS_IRQ, 0);
	smt_run(&f->e);
	assert_int_equal(f->e.mem.nirq[IRQ_CMDQV], 0);
	assert_int_equal(rd(f, R_VI_ERR_MAP), 1u << 2); /* recorded all the same */
	put(f, 12, SMT_OP_CMD_SYNC | CS_IRQ, 0);
	smt_run(&f->e);
	assert_int_equal(f->e.mem.nirq[IRQ_CMDQV], 1);
	fx_free(f);
}

static void test_cons_dram_writeback(void **state)
{
	struct fx *f = fx_new();
	uint64_t w = smt_alloc(&f->e.mem, 64, 64);

	(void)state;
	wr(f, R_CONFIG, 1 | CONS_DRAM_EN);
	wr(f, R_ALLOC(0), ALLOC(0, 0));
	wr(f, R_VINTF(0), HYP_OWN | 1);
	f->log2[0] = 4;
	f->qmem[0] = smt_alloc(&f->e.mem, 256, 256);
	smmu_mmio_write(f->e.smmu, WIN + P1(0), f->qmem[0] | 4, 8);
	smmu_mmio_write(f->e.smmu, WIN + P1(0) + Q_CONS_BASE, w, 8);
	wr(f, P0(0) + Q_CONFIG, 1);
	tlbi_va(f, 0);
	sync_none(f, 0);
	assert_int_equal(smt_run(&f->e), 2);
	assert_int_equal(smt_r32(&f->e.mem, w), 2);
	/* an aborted write-back sets GERROR.CONS_DRAM_WR_ABT_ERR and stops the queue */
	smt_fault_add(&f->e.mem, w, 4, false, true);
	tlbi_va(f, 0);
	tlbi_va(f, 0);
	assert_int_equal(smt_run(&f->e), 1);
	assert_int_equal(rd(f, P0(0) + Q_GERROR), GERR_DRAM);
	assert_int_equal(ERR(cons(f, 0)), 0);
	fx_free(f);
}

static void test_error_is_per_queue(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	put(f, 0, SMT_OP_CMD_SYNC | CS_IRQ, 0);
	tlbi_va(f, 1);
	smt_cmd(&f->e, SMT_OP_TLBI_NH_ALL, 0);
	assert_int_equal(smt_run(&f->e), 2);
	assert_int_equal(cons(f, 1), 1);
	assert_int_equal(smt_rd(&f->e, SMT_CMDQ_CONS) & 0xFFFFF, 1);
	fx_free(f);
}

static void test_reset_clears(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	bring_up(f, true, 4);
	put(f, 0, SMT_OP_CMD_SYNC | CS_IRQ, 0);
	smt_run(&f->e);
	smmu_reset(f->e.smmu);
	assert_int_equal(rd(f, R_STATUS), 0);
	assert_int_equal(rd(f, R_ALLOC(0)), 0);
	assert_int_equal(rd(f, R_VI_ERR_MAP), 0);
	assert_int_equal(rd(f, P0(0) + Q_GERROR), 0);
	assert_int_equal(cons(f, 0), 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_param_and_window),
		cmocka_unit_test(test_config_refused),
		cmocka_unit_test(test_reset_values),
		cmocka_unit_test(test_cmdqv_enable_handshake),
		cmocka_unit_test(test_vintf_enable_and_hyp_own),
		cmocka_unit_test(test_guest_hyp_own_wired_zero),
		cmocka_unit_test(test_alloc_map_and_alias),
		cmocka_unit_test(test_unmapped_logical_slot_raz_wi),
		cmocka_unit_test(test_alloc_ignored_while_enabled),
		cmocka_unit_test(test_vcmdq_enable_handshake_and_guards),
		cmocka_unit_test(test_processes_commands),
		cmocka_unit_test(test_shares_executor_round_robin),
		cmocka_unit_test(test_needs_every_enable),
		cmocka_unit_test(test_sync_cs_irq_illegal),
		cmocka_unit_test(test_sync_cs_sev_illegal),
		cmocka_unit_test(test_guest_vintf_command_subset),
		cmocka_unit_test(test_bad_log2size_init_err),
		cmocka_unit_test(test_base_above_oas_init_err),
		cmocka_unit_test(test_prod_beyond_queue),
		cmocka_unit_test(test_read_abort),
		cmocka_unit_test(test_vi_int_mask),
		cmocka_unit_test(test_cons_dram_writeback),
		cmocka_unit_test(test_error_is_per_queue),
		cmocka_unit_test(test_reset_clears),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
