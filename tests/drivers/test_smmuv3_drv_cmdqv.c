/* test_smmuv3_drv_cmdqv.c — the driver's Tegra241 CMDQV support against the model: probe resets
 * the CMDQV, shares the VCMDQs out to the VINTFs (CMDQ_ALLOC) and enables VINTF0 with its
 * LVCMDQs; CPU c issues to LVCMDQ c % (VCMDQs / VINTFs) with a CS_NONE CMD_SYNC; commands the
 * VCMDQ does not take go to the main queue; an illegal command on a VCMDQ is skipped; the option
 * off, or no CMDQV, leaves every CPU on the main queue; removing the driver acknowledges an
 * error on a VCMDQ that nobody handled.
 * Expected values come from PARAM's counts and Linux's rules (lidx = cpu % per-VINTF count,
 * ALLOC = VINTF << 15 | LVCMDQ << 1 | 1), typed in, never from the driver's own output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "drivers/drv_test_util.h"

#define NQ 16
#define NVI 4
#define PER (NQ / NVI)
#define WIN 0x20000ull
#define OP_CFGI_STE 0x03
#define OP_TLBI_NH_VA 0x12
#define OP_CMD_SYNC 0x46

static void setup_or_fail(struct dt *t, bool cmdqv, bool guest, const struct ilab_smmu_drv_opts *o)
{
	struct smmu_config c;
	int rc;

	smmu_config_default(&c);
	if (cmdqv) {
		c.cmdqv_vcmdqs = NQ;
		c.cmdqv_vintfs = NVI;
		c.cmdqv_guest = guest;
	}
	rc = dt_setup(t, ILAB_CMA_PERNUMA, &c, o);
	if (rc)
		fail_msg("setup %d: %s", rc, t->err);
}

static struct smmu *model(struct dt *t) { return ilab_board_smmu(t->board, t->si); }
static uint32_t rd(struct dt *t, uint64_t off) { return (uint32_t)smmu_mmio_read(model(t), WIN + off, 4); }

static void queue_stats(struct dt *t, unsigned q, struct smmu_queue_stats *s)
{
	assert_int_equal(smmu_get_cmdq_stats(model(t), q, s), 0);
}

struct issue {
	struct dt *t;
	uint64_t cmds[8];
	unsigned n;
	int rc;
};

static void issue_thread(unsigned idx, void *arg)
{
	struct issue *is = arg;

	(void)idx;
	is->rc = ilab_smmu_drv_issue_cmds(is->t->iommu, is->cmds, is->n, true);
}

static int issue_on(struct dt *t, int cpu, const uint64_t *cmds, unsigned n)
{
	struct issue is = { .t = t, .n = n };

	memcpy(is.cmds, cmds, n * 16);
	assert_int_equal(plat_run_threads(1, &cpu, issue_thread, &is), 0);
	return is.rc;
}

static void test_probe_enables_vintf0(void **state)
{
	struct ilab_smmu_drv_cmdqv_info info;
	struct dt t;

	(void)state;
	setup_or_fail(&t, true, false, NULL);
	assert_int_equal(ilab_smmu_drv_get_cmdqv_info(t.iommu, &info), 0);
	assert_int_equal(info.vcmdqs, NQ);
	assert_int_equal(info.vintfs, NVI);
	assert_int_equal(info.lvcmdqs, PER);
	assert_int_equal(info.log2size, 12);
	assert_true(info.hyp_own);
	assert_null(info.why_not);
	assert_int_equal(rd(&t, 0x8) & 1, 1); /* CMDQV STATUS.ENABLED */
	for (unsigned q = 0; q < NQ; q++) /* global VCMDQs in order, PER to each VINTF */
		assert_int_equal(rd(&t, 0x200 + 4 * q), ((q / PER) << 15) | ((q % PER) << 1) | 1);
	assert_int_equal(rd(&t, 0x1004) & 1, 1); /* VINTF0 enabled ... */
	assert_int_equal(rd(&t, 0x1000) >> 17 & 1, 1); /* ... hypervisor-owned */
	for (unsigned v = 1; v < NVI; v++)
		assert_int_equal(rd(&t, 0x1000 + 0x100 * v + 4) & 1, 0);
	for (unsigned q = 0; q < NQ; q++) {
		assert_int_equal(rd(&t, 0x10000 + 0x80 * q + 0xC), q < PER); /* VCMDQ STATUS */
		if (q < PER)
			assert_int_equal(rd(&t, 0x20000 + 0x80 * q) & 0x1F, 12); /* BASE.LOG2SIZE */
	}
	dt_teardown(&t);
}

static void test_cpu_picks_cpu_mod_lvcmdqs(void **state)
{
	struct smmu_queue_stats before0, q0, q;
	uint64_t cmd[2];
	struct dt t;

	(void)state;
	setup_or_fail(&t, true, false, NULL);
	for (unsigned c = 0; c < plat_cpu_count(); c++)
		assert_int_equal(ilab_smmu_drv_cpu_queue(t.iommu, c), 1 + (int)(c % PER));
	queue_stats(&t, 0, &before0);
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	assert_int_equal(issue_on(&t, 6, cmd, 1), 0);
	queue_stats(&t, 1 + 6 % PER, &q);
	assert_int_equal(q.by_opcode[OP_TLBI_NH_VA], 1);
	assert_int_equal(q.by_opcode[OP_CMD_SYNC], 1);
	/* CS_NONE: the sync signalled nothing, the driver polled CONS */
	assert_int_equal(q.syncs_msi + q.syncs_irq + q.syncs_sev, 0);
	queue_stats(&t, 0, &q0);
	assert_int_equal(q0.commands, before0.commands);
	/* CPU 6 + PER shares that queue */
	assert_int_equal(issue_on(&t, 6 + PER, cmd, 1), 0);
	queue_stats(&t, 1 + 6 % PER, &q);
	assert_int_equal(q.by_opcode[OP_TLBI_NH_VA], 2);
	dt_teardown(&t);
}

static void test_unsupported_command_uses_main_queue(void **state)
{
	struct smmu_queue_stats before0, q0, q;
	uint64_t cmd[2] = { OP_CFGI_STE | (1ull << 32), 0 };
	struct dt t;

	(void)state;
	setup_or_fail(&t, true, false, NULL);
	queue_stats(&t, 0, &before0);
	assert_int_equal(issue_on(&t, 3, cmd, 1), 0);
	queue_stats(&t, 0, &q0);
	assert_int_equal(q0.by_opcode[OP_CFGI_STE], before0.by_opcode[OP_CFGI_STE] + 1);
	queue_stats(&t, 1 + 3 % PER, &q);
	assert_int_equal(q.commands, 0);
	dt_teardown(&t);
}

static void test_illegal_command_on_vcmdq_skipped(void **state)
{
	struct ilab_smmu_drv_queue_stats ds;
	struct smmu_queue_stats q;
	uint64_t cmds[4];
	struct dt t;

	(void)state;
	setup_or_fail(&t, true, false, NULL);
	ilab_smmu_drv_build_tlbi_va(cmds, 1, 0x1000);
	cmds[0] |= 1ull << 8; /* a RES0 bit of TLBI_NH_VA: CERROR_ILL in this model */
	ilab_smmu_drv_build_tlbi_va(cmds + 2, 1, 0x2000);
	assert_int_equal(issue_on(&t, 2, cmds, 2), 0);
	queue_stats(&t, 1 + 2, &q);
	assert_int_equal(q.cerror_ill, 1);
	assert_int_equal(q.by_opcode[OP_TLBI_NH_VA], 1); /* completed ones only: the good one */
	assert_int_equal(q.by_opcode[OP_CMD_SYNC], 2);   /* its replacement and ours */
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, 1 + 2, &ds), 0);
	assert_int_equal(ds.err_ill, 1);
	assert_int_equal(rd(&t, 0x10000 + 0x80 * 2 + 0x10), rd(&t, 0x10000 + 0x80 * 2 + 0x14));
	dt_teardown(&t);
}

static void test_option_off_main_queue_only(void **state)
{
	struct ilab_smmu_drv_opts o = { .cmdqv = ILAB_SMMU_CMDQV_OFF };
	struct ilab_smmu_drv_cmdqv_info info;
	struct smmu_queue_stats before0, q0;
	uint64_t cmd[2];
	struct dt t;

	(void)state;
	setup_or_fail(&t, true, false, &o);
	assert_int_equal(ilab_smmu_drv_get_cmdqv_info(t.iommu, &info), 0);
	assert_int_equal(info.vcmdqs, 0);
	assert_non_null(strstr(info.why_not, "off"));
	assert_int_equal(rd(&t, 0x1004) & 1, 0);
	assert_int_equal(ilab_smmu_drv_cpu_queue(t.iommu, 6), 0);
	queue_stats(&t, 0, &before0);
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	assert_int_equal(issue_on(&t, 6, cmd, 1), 0);
	queue_stats(&t, 0, &q0);
	assert_int_equal(q0.commands, before0.commands + 2);
	dt_teardown(&t);
}

static void test_no_cmdqv(void **state)
{
	struct ilab_smmu_drv_opts on = { .cmdqv = ILAB_SMMU_CMDQV_ON };
	struct ilab_smmu_drv_cmdqv_info info;
	struct smmu_config c;
	struct dt t;

	(void)state;
	setup_or_fail(&t, false, false, NULL);
	assert_int_equal(ilab_smmu_drv_get_cmdqv_info(t.iommu, &info), 0);
	assert_int_equal(info.vcmdqs, 0);
	assert_non_null(strstr(info.why_not, "no CMDQV"));
	dt_teardown(&t);
	smmu_config_default(&c);
	assert_int_equal(dt_setup(&t, ILAB_CMA_PERNUMA, &c, &on), -ENODEV);
	dt_teardown(&t);
}

static void test_guest_vintf_not_hyp_own(void **state)
{
	struct ilab_smmu_drv_cmdqv_info info;
	uint64_t cmd[2];
	struct smmu_queue_stats q;
	struct dt t;

	(void)state;
	setup_or_fail(&t, true, true, NULL);
	assert_int_equal(ilab_smmu_drv_get_cmdqv_info(t.iommu, &info), 0);
	assert_false(info.hyp_own);
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	assert_int_equal(issue_on(&t, 1, cmd, 1), 0);
	queue_stats(&t, 1 + 1, &q);
	assert_int_equal(q.commands, 2);
	assert_int_equal(q.cerror_ill, 0);
	dt_teardown(&t);
}

struct issue_nosync {
	struct ilab_iommu *iommu;
	uint64_t cmds[2];
	int rc;
};

static void issue_nosync_thread(unsigned idx, void *arg)
{
	struct issue_nosync *is = arg;

	(void)idx;
	is->rc = ilab_smmu_drv_issue_cmds(is->iommu, is->cmds, 1, false);
}

/* An error on a VCMDQ that no waiter has handled (a command issued without a CMD_SYNC) is
 * acknowledged when the driver removes the VCMDQ: GERRORN = GERROR afterwards, as Linux's
 * tegra241_vcmdq_hw_deinit leaves it. A second driver instance is probed on the same SMMU,
 * makes the error and is removed while the model still runs (as test_smmuv3_drv_ecmdq.c's
 * test_remove_disables_queues does). */
static void test_remove_acknowledges_unhandled_error(void **state)
{
	struct issue_nosync is = { 0 };
	struct ilab_smmu_drv_opts o = { 0 };
	struct ilab_iommu *second = NULL;
	const uint64_t gerror = 0x10000 + 0x80 * 2 + 0x10, gerrorn = gerror + 4;
	int cpu = 2; /* LVCMDQ 2 of VINTF0: global VCMDQ 2 */
	struct dt t;

	(void)state;
	setup_or_fail(&t, true, false, NULL);
	o.cmdqv_offset = smmu_cmdqv_offset(model(&t)); /* firmware's description, as the board's */
	assert_int_equal(ilab_smmu_drv_probe(ilab_board_mmio(t.board, t.si), ilab_board_mem(t.board),
					     2, &o, &second), 0);
	assert_int_equal(ilab_smmu_drv_cpu_queue(second, cpu), 1 + cpu % PER);
	is.iommu = second;
	ilab_smmu_drv_build_tlbi_va(is.cmds, 1, 0x1000);
	is.cmds[0] |= 1ull << 8; /* a RES0 bit of TLBI_NH_VA: CERROR_ILL in this model */
	assert_int_equal(plat_run_threads(1, &cpu, issue_nosync_thread, &is), 0);
	assert_int_equal(is.rc, 0);
	/* the model thread executes it: wait (at most 10 s) for the error to show */
	for (unsigned i = 0; i < 10000 && rd(&t, gerror) == rd(&t, gerrorn); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	assert_int_not_equal(rd(&t, gerror), rd(&t, gerrorn));
	ilab_smmu_drv_remove(second);
	assert_int_equal(rd(&t, gerror), rd(&t, gerrorn));
	dt_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_enables_vintf0),
		cmocka_unit_test(test_cpu_picks_cpu_mod_lvcmdqs),
		cmocka_unit_test(test_unsupported_command_uses_main_queue),
		cmocka_unit_test(test_illegal_command_on_vcmdq_skipped),
		cmocka_unit_test(test_option_off_main_queue_only),
		cmocka_unit_test(test_no_cmdqv),
		cmocka_unit_test(test_guest_vintf_not_hyp_own),
		cmocka_unit_test(test_remove_acknowledges_unhandled_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
