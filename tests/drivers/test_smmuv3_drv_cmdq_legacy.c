/* test_smmuv3_drv_cmdq_legacy.c — the Linux <= 5.3 command-queue producer (cmdq_mode
 * SPINLOCK): commands reach the SMMU and complete, the driver's per-opcode counts equal what the
 * model executed, the 256-entry queue wraps many times, back-to-back CMD_SYNCs share one entry
 * (4.20-5.3) or not (4.15-4.19), and the CONS-polling variant (4.14's) works too. Expected values come from the commands issued.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drv_test_util.h"
#include "iommulab/kernel_era.h"

#define OP_TLBI_NH_VA 0x12
#define OP_CMD_SYNC 0x46

static void setup_mode(struct dt *t, enum ilab_smmu_sync_mode sync)
{
	struct ilab_smmu_drv_opts o = { .cmdq_mode = ILAB_SMMU_CMDQ_SPINLOCK, .cmdq_log2 = 8,
					.sync_mode = sync };
	int rc = dt_setup(t, ILAB_CMA_GLOBAL, NULL, &o);

	if (rc)
		fail_msg("setup: %d %s", rc, t->err);
}

/* What the model executed so far, per opcode, on the main queue. */
static uint64_t model_ops(struct dt *t, unsigned op)
{
	struct smmu_queue_stats qs;

	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(t->board, t->si), 0, &qs), 0);
	return qs.by_opcode[op];
}

static void issue_many(struct dt *t, unsigned lists, unsigned per_list)
{
	uint64_t cmds[2 * 8];

	for (unsigned i = 0; i < lists; i++) {
		for (unsigned k = 0; k < per_list; k++)
			ilab_smmu_drv_build_tlbi_va(&cmds[2 * k], 1, (uint64_t)(i * 8 + k + 1) << 12);
		assert_int_equal(ilab_smmu_drv_issue_cmds(t->iommu, cmds, per_list, true), 0);
	}
}

static void test_commands_complete_and_counts_match_msi(void **state)
{
	struct dt t;
	struct ilab_smmu_drv_stats *st = calloc(1, sizeof(*st));
	struct ilab_smmu_drv_info info;
	uint64_t tlbi0, sync0;

	(void)state;
	setup_mode(&t, ILAB_SMMU_SYNC_MSI);
	assert_int_equal(ilab_smmu_drv_get_info(t.iommu, &info), 0);
	assert_int_equal(info.cmdq_log2, 8); /* Linux 4.x CMDQ_MAX_SZ_SHIFT */
	ilab_smmu_drv_clear_stats(t.iommu);
	tlbi0 = model_ops(&t, OP_TLBI_NH_VA);
	sync0 = model_ops(&t, OP_CMD_SYNC);
	/* 300 lists of 3 TLBIs + a sync: 1200 entries, more than four laps of 256 */
	issue_many(&t, 300, 3);
	assert_int_equal(ilab_smmu_drv_get_stats(t.iommu, st), 0);
	/* every sync returned only after completion, so the model has executed all of them */
	assert_int_equal(model_ops(&t, OP_TLBI_NH_VA) - tlbi0, 900);
	assert_int_equal(st->by_opcode[OP_TLBI_NH_VA], 900);
	assert_int_equal(model_ops(&t, OP_CMD_SYNC) - sync0, st->by_opcode[OP_CMD_SYNC]);
	/* one thread, a TLBI before every sync: no sync can piggy-back */
	assert_int_equal(st->syncs, 300);
	assert_int_equal(st->cmds, 1200);
	assert_int_equal(st->batches, 1200); /* one PROD write per command */
	assert_int_equal(st->sync_timeouts, 0);
	free(st);
	dt_teardown(&t);
}

static void test_back_to_back_syncs_share_one_entry(void **state)
{
	struct dt t;
	struct ilab_smmu_drv_stats st;
	uint64_t cmd[2];

	(void)state;
	setup_mode(&t, ILAB_SMMU_SYNC_MSI);
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, cmd, 1, true), 0);
	ilab_smmu_drv_clear_stats(t.iommu);
	/* the last command in the queue is a CMD_SYNC: a sync alone re-uses its number */
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, NULL, 0, true), 0);
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, NULL, 0, true), 0);
	assert_int_equal(ilab_smmu_drv_get_stats(t.iommu, &st), 0);
	assert_int_equal(st.by_opcode[OP_CMD_SYNC], 0);
	assert_int_equal(st.cmds, 0);
	dt_teardown(&t);
}

/* Linux 4.15-4.19 (opts.cmdq_sync_unordered, set by the eras before 4.20): every CMD_SYNC is
 * inserted, even right after another, each with its own number taken before the lock; all
 * complete. The options come from the era table, so the test also fails if 4.19 lost them. */
static void test_unordered_syncs_4_19_each_inserted(void **state)
{
	struct ilab_kernel_era era;
	struct ilab_smmu_drv_opts o = { 0 };
	struct ilab_smmu_drv_stats st;
	struct ilab_smmu_drv_info info;
	struct dt t;
	uint64_t cmd[2], sync0;
	int rc;

	(void)state;
	ilab_kernel_era_at(419, &era);
	ilab_kernel_era_drv_opts(&era, &o);
	assert_true(o.cmdq_sync_unordered);
	rc = dt_setup(&t, ILAB_CMA_GLOBAL, NULL, &o);
	if (rc)
		fail_msg("setup: %d %s", rc, t.err);
	assert_int_equal(ilab_smmu_drv_get_info(t.iommu, &info), 0);
	assert_int_equal(info.sync_mode, ILAB_SMMU_SYNC_MSI); /* MSI completion since 4.15 */
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, cmd, 1, true), 0);
	ilab_smmu_drv_clear_stats(t.iommu);
	sync0 = model_ops(&t, OP_CMD_SYNC);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, NULL, 0, true), 0);
	assert_int_equal(ilab_smmu_drv_get_stats(t.iommu, &st), 0);
	assert_int_equal(st.by_opcode[OP_CMD_SYNC], 3);
	assert_int_equal(model_ops(&t, OP_CMD_SYNC) - sync0, 3);
	assert_int_equal(st.sync_timeouts, 0);
	dt_teardown(&t);
}

/* Linux 4.14 had no MSI completion: its era asks for CONS polling on an MSI-capable SMMU. */
static void test_era_4_14_polls_cons(void **state)
{
	struct ilab_kernel_era era;
	struct ilab_smmu_drv_opts o = { 0 };
	struct ilab_smmu_drv_info info;
	struct dt t;
	int rc;

	(void)state;
	ilab_kernel_era_at(414, &era);
	ilab_kernel_era_drv_opts(&era, &o);
	rc = dt_setup(&t, ILAB_CMA_GLOBAL, NULL, &o);
	if (rc)
		fail_msg("setup: %d %s", rc, t.err);
	assert_int_equal(ilab_smmu_drv_get_info(t.iommu, &info), 0);
	assert_true(info.msi); /* the model could: the era does not */
	assert_int_equal(info.sync_mode, ILAB_SMMU_SYNC_CONS);
	issue_many(&t, 10, 2);
	dt_teardown(&t);
}

static void test_cons_polling_variant(void **state)
{
	struct dt t;
	struct ilab_smmu_drv_stats st;
	uint64_t tlbi0;

	(void)state;
	setup_mode(&t, ILAB_SMMU_SYNC_CONS);
	ilab_smmu_drv_clear_stats(t.iommu);
	tlbi0 = model_ops(&t, OP_TLBI_NH_VA);
	issue_many(&t, 100, 5);
	assert_int_equal(model_ops(&t, OP_TLBI_NH_VA) - tlbi0, 500);
	assert_int_equal(ilab_smmu_drv_get_stats(t.iommu, &st), 0);
	assert_int_equal(st.syncs, 100); /* SEV mode never piggy-backs */
	dt_teardown(&t);
}

static void test_lockfree_default_unchanged(void **state)
{
	struct dt t;
	struct ilab_smmu_drv_stats st;
	uint64_t cmds[6];
	int rc;

	(void)state;
	rc = dt_setup(&t, ILAB_CMA_GLOBAL, NULL, NULL);
	if (rc)
		fail_msg("setup: %d %s", rc, t.err);
	ilab_smmu_drv_clear_stats(t.iommu);
	for (unsigned k = 0; k < 3; k++)
		ilab_smmu_drv_build_tlbi_va(&cmds[2 * k], 1, (uint64_t)(k + 1) << 12);
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, cmds, 3, true), 0);
	assert_int_equal(ilab_smmu_drv_get_stats(t.iommu, &st), 0);
	assert_int_equal(st.batches, 1); /* one PROD write for the whole list */
	assert_int_equal(st.cmds, 4);
	dt_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_complete_and_counts_match_msi),
		cmocka_unit_test(test_back_to_back_syncs_share_one_entry),
		cmocka_unit_test(test_cons_polling_variant),
		cmocka_unit_test(test_unordered_syncs_4_19_each_inserted),
		cmocka_unit_test(test_era_4_14_polls_cons),
		cmocka_unit_test(test_lockfree_default_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
