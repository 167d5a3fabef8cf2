/* test_smmuv3_drv_cmdq_err.c — the main command queue recovers from a bad command as Linux's
 * GERROR handler makes it (arm_smmu_gerror_handler -> arm_smmu_cmdq_skip_err): the illegal
 * command is replaced by a CMD_SYNC, GERRORN acknowledges GERROR, and later CMD_SYNCs, maps and
 * unmaps complete without the 1 s timeout, with both completion modes and both producers
 * (lock-free and the pre-5.4 spinlock one).
 * Expected values come from IHI 0070 (§7.1 CERROR_ILL, §6.3.17-18 GERROR/GERRORN toggling) and
 * from what the test issued, never from the driver's own output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drv_test_util.h"
#include "iommulab/iommu_map.h"

#define SZ_4K 0x1000ull
#define OP_TLBI_NH_VA 0x12
#define OP_CMD_SYNC 0x46
#define OP_ILLEGAL 0x7f /* no command has this opcode: CERROR_ILL (IHI 0070 §4.1.1) */
#define REG_GERROR 0x60
#define REG_GERRORN 0x64
#define REG_CMDQ_CONS 0x9c
#define GERROR_CMDQ_ERR 1u
#define EVT_F_TRANSLATION 0x10

/* One machine per test; the teardown runs even when an assertion failed, so that one failing
 * test does not take the next ones with it. */
static struct dt g_t;
static struct ilab_iommu_domain *g_d;

static int teardown(void **state)
{
	(void)state;
	if (g_d) {
		g_t.iommu->ops->release_device(g_t.iommu, g_t.dev);
		g_d->ops->free(g_d);
		g_d = NULL;
	}
	if (g_t.topo)
		dt_teardown(&g_t);
	return 0;
}

static struct smmu *model(struct dt *t)
{
	return ilab_board_smmu(t->board, t->si);
}

static uint32_t reg(struct dt *t, unsigned off)
{
	return (uint32_t)smmu_mmio_read(model(t), off, 4);
}

static void setup_or_fail(struct dt *t, enum ilab_smmu_sync_mode sync, enum ilab_smmu_cmdq_mode m)
{
	struct ilab_smmu_drv_opts o = { .sync_mode = sync, .cmdq_mode = m,
					.ecmdq = ILAB_SMMU_ECMDQ_OFF };
	int rc = dt_setup(t, ILAB_CMA_PERNUMA, NULL, &o);

	if (rc)
		fail_msg("setup %d: %s", rc, t->err);
}

static void cmdq_stats(struct dt *t, struct smmu_queue_stats *s)
{
	assert_int_equal(smmu_get_cmdq_stats(model(t), 0, s), 0);
}

/* Wait (natively, bounded) until the model has stopped on the bad command. */
static void wait_stopped(struct dt *t)
{
	for (unsigned i = 0; i < 2000; i++) {
		if ((reg(t, REG_GERROR) ^ reg(t, REG_GERRORN)) & GERROR_CMDQ_ERR)
			return;
		plat_native_sleep_ns(100000);
	}
	fail_msg("the SMMU did not report CMDQ_ERR");
}

/* A strict map, a DMA through it, an unmap with its invalidation and CMD_SYNC, a DMA that now
 * faults: the TLBI and its CMD_SYNC really ran after the error. */
static void map_unmap_works(struct dt *t, struct ilab_iommu_domain *d, uint64_t iova)
{
	struct ilab_board_fault f;
	struct ilab_iotlb_gather g;
	uint8_t buf[64];
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_alloc_pages(ilab_board_mem(t->board), 2, 0, &pa), 0);
	assert_int_equal(ilab_iommu_map(&d->pt, iova, pa, SZ_4K, ILAB_IOMMU_READ, true), 0);
	assert_int_equal(ilab_board_dma_read(t->board, t->si, t->dev->sid, 0, false, iova, buf,
					     sizeof(buf), &f), 0);
	ilab_iotlb_gather_init(&g);
	assert_int_equal(ilab_iommu_unmap_fast(&d->pt, iova, SZ_4K, &g, true), SZ_4K);
	d->pt.iotlb_sync(d->pt.priv, &g);
	assert_int_equal(ilab_board_dma_read(t->board, t->si, t->dev->sid, 0, false, iova, buf,
					     sizeof(buf), &f), -EIO);
	assert_int_equal(f.event, EVT_F_TRANSLATION);
	ilab_mem_free_pages(ilab_board_mem(t->board), pa, 0);
}

/* An illegal command issued alone (no CMD_SYNC: nobody waits on it) stops the queue; the next
 * operations' CMD_SYNCs find the error, skip it and complete. */
static void bad_then_good(enum ilab_smmu_sync_mode sync, enum ilab_smmu_cmdq_mode m)
{
	struct ilab_smmu_drv_queue_stats qs;
	struct ilab_smmu_drv_stats st;
	struct smmu_queue_stats m0, m1;
	struct ilab_iommu_domain *d;
	uint64_t bad[2] = { OP_ILLEGAL, 0 }, tlbi[2];
	uint32_t cons;
	struct dt t;

	setup_or_fail(&g_t, sync, m);
	t = g_t;
	d = t.iommu->ops->domain_alloc(t.iommu, ILAB_DOMAIN_DMA, -1);
	assert_non_null(d);
	assert_int_equal(t.iommu->ops->probe_device(t.iommu, t.dev), 0);
	g_d = d;
	assert_int_equal(d->ops->attach_dev(d, t.dev), 0);
	ilab_smmu_drv_clear_stats(t.iommu);
	cmdq_stats(&t, &m0);

	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, bad, 1, false), 0);
	wait_stopped(&t);
	cons = reg(&t, REG_CMDQ_CONS);
	assert_int_equal((cons >> 24) & 0x7f, 1); /* CMDQ_CONS.ERR = CERROR_ILL */

	map_unmap_works(&t, d, 0x40000000);
	map_unmap_works(&t, d, 0x40200000);
	ilab_smmu_drv_build_tlbi_va(tlbi, (uint16_t)ilab_smmu_drv_domain_asid(d), 0x1000);
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, tlbi, 1, true), 0);

	assert_int_equal(ilab_smmu_drv_get_stats(t.iommu, &st), 0);
	assert_int_equal(st.sync_timeouts, 0);
	/* acknowledged: GERRORN caught up with GERROR */
	assert_int_equal((reg(&t, REG_GERROR) ^ reg(&t, REG_GERRORN)) & GERROR_CMDQ_ERR, 0);
	/* one error, an illegal command, seen once by the driver and by the model */
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, 0, &qs), 0);
	assert_int_equal(qs.errors, 1);
	assert_int_equal(qs.err_ill, 1);
	assert_int_equal(qs.err_abt, 0);
	cmdq_stats(&t, &m1);
	assert_int_equal(m1.cerror_ill - m0.cerror_ill, 1);
	/* the bad slot ran as a CMD_SYNC, on top of the ones the driver wrote */
	assert_int_equal(m1.by_opcode[OP_CMD_SYNC] - m0.by_opcode[OP_CMD_SYNC],
			 st.by_opcode[OP_CMD_SYNC] + 1);
	assert_int_equal(m1.by_opcode[OP_TLBI_NH_VA] - m0.by_opcode[OP_TLBI_NH_VA],
			 st.by_opcode[OP_TLBI_NH_VA]);
	assert_true(st.by_opcode[OP_TLBI_NH_VA] >= 3); /* two unmaps and the explicit one */
}

static void test_lockfree_msi(void **state)
{
	(void)state;
	bad_then_good(ILAB_SMMU_SYNC_MSI, ILAB_SMMU_CMDQ_LOCKFREE);
}

static void test_lockfree_cons(void **state)
{
	(void)state;
	bad_then_good(ILAB_SMMU_SYNC_CONS, ILAB_SMMU_CMDQ_LOCKFREE);
}

static void test_spinlock_msi(void **state)
{
	(void)state;
	bad_then_good(ILAB_SMMU_SYNC_MSI, ILAB_SMMU_CMDQ_SPINLOCK);
}

static void test_spinlock_cons(void **state)
{
	(void)state;
	bad_then_good(ILAB_SMMU_SYNC_CONS, ILAB_SMMU_CMDQ_SPINLOCK);
}

/* TLBI, illegal, TLBI and a CMD_SYNC in one issue: the issuer's own CMD_SYNC recovers; both
 * TLBIs ran; two more errors later toggle GERROR back and forth and are each handled. */
static void test_bad_inside_a_batch(void **state)
{
	struct ilab_smmu_drv_queue_stats qs;
	struct smmu_queue_stats m0, m1;
	uint64_t cmds[6];
	struct dt t;

	(void)state;
	setup_or_fail(&g_t, ILAB_SMMU_SYNC_AUTO, ILAB_SMMU_CMDQ_LOCKFREE);
	t = g_t;
	cmdq_stats(&t, &m0);
	ilab_smmu_drv_build_tlbi_va(&cmds[0], 1, 0x1000);
	cmds[2] = OP_ILLEGAL;
	cmds[3] = 0;
	ilab_smmu_drv_build_tlbi_va(&cmds[4], 1, 0x2000);
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, cmds, 3, true), 0);
	cmdq_stats(&t, &m1);
	assert_int_equal(m1.by_opcode[OP_TLBI_NH_VA] - m0.by_opcode[OP_TLBI_NH_VA], 2);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, &cmds[2], 1, true), 0);
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, 0, &qs), 0);
	assert_int_equal(qs.errors, 3);
	assert_int_equal(qs.err_ill, 3);
	assert_int_equal((reg(&t, REG_GERROR) ^ reg(&t, REG_GERRORN)) & GERROR_CMDQ_ERR, 0);
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, &cmds[4], 1, true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lockfree_msi, teardown),
		cmocka_unit_test_teardown(test_lockfree_cons, teardown),
		cmocka_unit_test_teardown(test_spinlock_msi, teardown),
		cmocka_unit_test_teardown(test_spinlock_cons, teardown),
		cmocka_unit_test_teardown(test_bad_inside_a_batch, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
