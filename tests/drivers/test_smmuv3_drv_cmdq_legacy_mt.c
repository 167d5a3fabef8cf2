/* test_smmuv3_drv_cmdq_legacy_mt.c — several threads issue through the spinlock command queue
 * (cmdq_mode SPINLOCK) at once, with CMD_SYNCs that may piggy-back on each other: every TLBI
 * reaches the SMMU exactly once, every sync returns, and the driver's counts equal the model's.
 * Runs under TSan (label `threads`).
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

#define THREADS 6
#ifdef ILAB_TSAN
#define ITERS 300
#else
#define ITERS 2000
#endif
#define OP_TLBI_NH_VA 0x12
#define OP_CMD_SYNC 0x46

struct run {
	struct dt *t;
	plat_word32 errors;
};

static void producer(unsigned idx, void *arg)
{
	struct run *r = arg;
	uint64_t cmds[4];

	for (unsigned i = 0; i < ITERS; i++) {
		unsigned n = 1 + i % 2;

		for (unsigned k = 0; k < n; k++)
			ilab_smmu_drv_build_tlbi_va(&cmds[2 * k], (uint16_t)(idx + 1),
						    (uint64_t)(i * 2 + k + 1) << 12);
		if (ilab_smmu_drv_issue_cmds(r->t->iommu, cmds, n, i % 3 != 1))
			plat_fetch_add32(&r->errors, 1);
	}
	/* a final sync: everything this thread issued has completed when it returns */
	if (ilab_smmu_drv_issue_cmds(r->t->iommu, NULL, 0, true))
		plat_fetch_add32(&r->errors, 1);
}

static void run_threads(enum ilab_smmu_sync_mode sync)
{
	struct ilab_smmu_drv_opts o = { .cmdq_mode = ILAB_SMMU_CMDQ_SPINLOCK, .cmdq_log2 = 8,
					.sync_mode = sync };
	struct ilab_smmu_drv_stats *st = calloc(1, sizeof(*st));
	struct smmu_queue_stats *b = calloc(1, sizeof(*b)), *a = calloc(1, sizeof(*a));
	struct dt t;
	struct run r = { .t = &t };
	int cpus[THREADS], rc;
	unsigned expect = 0;

	rc = dt_setup(&t, ILAB_CMA_GLOBAL, NULL, &o);
	if (rc)
		fail_msg("setup: %d %s", rc, t.err);
	for (unsigned i = 0; i < THREADS; i++)
		cpus[i] = plat_node_cpu(i % 4, i / 4); /* spread over the nodes */
	for (unsigned i = 0; i < ITERS; i++)
		expect += 1 + i % 2;
	ilab_smmu_drv_clear_stats(t.iommu);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(t.board, t.si), 0, b), 0);
	assert_int_equal(plat_run_threads(THREADS, cpus, producer, &r), 0);
	assert_int_equal(plat_load32(&r.errors), 0);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(t.board, t.si), 0, a), 0);
	assert_int_equal(ilab_smmu_drv_get_stats(t.iommu, st), 0);
	assert_int_equal(a->by_opcode[OP_TLBI_NH_VA] - b->by_opcode[OP_TLBI_NH_VA],
			 (uint64_t)expect * THREADS);
	assert_int_equal(st->by_opcode[OP_TLBI_NH_VA], (uint64_t)expect * THREADS);
	assert_int_equal(a->by_opcode[OP_CMD_SYNC] - b->by_opcode[OP_CMD_SYNC],
			 st->by_opcode[OP_CMD_SYNC]);
	assert_int_equal(st->sync_timeouts, 0);
	free(st);
	free(a);
	free(b);
	dt_teardown(&t);
}

static void test_threads_msi(void **state)
{
	(void)state;
	run_threads(ILAB_SMMU_SYNC_MSI);
}

static void test_threads_cons(void **state)
{
	(void)state;
	run_threads(ILAB_SMMU_SYNC_CONS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_msi),
		cmocka_unit_test(test_threads_cons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
