/* test_smmuv3_drv_ecmdq.c — the driver's ECMDQ support against the model: probe enables the queues
 * (EN/ENACK, BASE.LOG2SIZE), CPUs are assigned to queues (one each, or by node groups), a CPU's
 * commands reach its own queue, the main queue serves everyone without ECMDQs or with the
 * option off, an illegal command is skipped and later commands proceed, and a CMD_SYNC on one
 * ECMDQ does not wait for another queue held in error.
 * Expected values come from IHI 0070 (register bits), the topology (CPUs per node) and the
 * series' sizing rule (2^(8 + log2 CPUs per queue)), never from the driver's own output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drv_test_util.h"

#define OP_TLBI_NH_VA 0x12
#define OP_CMD_SYNC 0x46
#define OP_ILLEGAL 0x7f /* no command has this opcode: CERROR_ILL (IHI 0070 §4.1.1) */
#define ECMDQ_PROD_EN (1u << 31)
#define ECMDQ_PROD_ERRACK (1u << 23)
#define ECMDQ_CONS_ENACK (1u << 31)
#define ECMDQ_CONS_ERR (1u << 23)
#define KP920_CPUS 128u

static void ecmdq_cfg(struct smmu_config *c, unsigned count)
{
	smmu_config_default(c);
	c->arch_minor = 3; /* ECMDQ is SMMUv3.3 */
	c->ecmdq_count = count;
}

static void setup_or_fail(struct dt *t, unsigned count, const struct ilab_smmu_drv_opts *o)
{
	struct smmu_config c;
	int rc;

	ecmdq_cfg(&c, count);
	rc = dt_setup(t, ILAB_CMA_PERNUMA, count ? &c : NULL, o);
	if (rc)
		fail_msg("setup %d: %s", rc, t->err);
}

static struct smmu *model(struct dt *t)
{
	return ilab_board_smmu(t->board, t->si);
}

static uint32_t ecmdq_reg(struct dt *t, unsigned n, unsigned reg)
{
	return (uint32_t)smmu_mmio_read(model(t), smmu_ecmdq_offset(model(t), n) + reg, 4);
}

/* ---- probe and assignment ---------------------------------------------------------------- */

/* Every queue n < used is enabled with BASE.LOG2SIZE = log2; the others stay off. */
static void check_enabled(struct dt *t, unsigned hw, unsigned used, unsigned log2)
{
	for (unsigned n = 0; n < hw; n++) {
		uint64_t base = smmu_mmio_read(model(t), smmu_ecmdq_offset(model(t), n), 8);

		if (n < used) {
			assert_true(ecmdq_reg(t, n, 0x8) & ECMDQ_PROD_EN);
			assert_true(ecmdq_reg(t, n, 0xc) & ECMDQ_CONS_ENACK);
			assert_int_equal(base & 0x1f, log2);
		} else {
			assert_false(ecmdq_reg(t, n, 0x8) & ECMDQ_PROD_EN);
			assert_false(ecmdq_reg(t, n, 0xc) & ECMDQ_CONS_ENACK);
		}
	}
}

static void test_probe_128_queues_one_per_cpu(void **state)
{
	struct ilab_smmu_drv_ecmdq_info info;
	struct ilab_smmu_drv_queue_stats qs;
	bool seen[KP920_CPUS] = { false };
	struct dt t;

	(void)state;
	setup_or_fail(&t, 128, NULL);
	assert_int_equal(plat_cpu_count(), KP920_CPUS);
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(t.iommu, &info), 0);
	assert_int_equal(info.hw_count, 128);
	assert_int_equal(info.enabled, 128);
	assert_false(info.shared);
	assert_int_equal(info.log2size, 8); /* 256 entries: one CPU per queue */
	assert_null(info.why_not);
	check_enabled(&t, 128, 128, 8);
	for (unsigned c = 0; c < KP920_CPUS; c++) {
		int q = ilab_smmu_drv_cpu_queue(t.iommu, c);

		assert_in_range(q, 1, 128);
		assert_false(seen[q - 1]); /* no two CPUs share */
		seen[q - 1] = true;
		assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, (unsigned)q, &qs), 0);
		assert_int_equal(qs.cpus, 1);
		assert_true(qs.exclusive);
	}
	assert_int_equal(ilab_smmu_drv_cpu_queue(t.iommu, KP920_CPUS), -EINVAL);
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, 129, &qs), -EINVAL);
	dt_teardown(&t);
}

/* Fewer queues than CPUs: CPUs share queues, never across nodes, evenly within a node. */
static void check_node_groups(struct dt *t, unsigned nq, unsigned cpus_per_queue)
{
	unsigned per_q[1024] = { 0 };
	int node_of_q[1024];

	for (unsigned i = 0; i < nq; i++)
		node_of_q[i] = -1;
	for (unsigned c = 0; c < KP920_CPUS; c++) {
		int q = ilab_smmu_drv_cpu_queue(t->iommu, c);

		assert_in_range(q, 1, nq);
		per_q[q - 1]++;
		if (node_of_q[q - 1] < 0)
			node_of_q[q - 1] = plat_cpu_node(c);
		assert_int_equal(node_of_q[q - 1], plat_cpu_node(c));
	}
	for (unsigned i = 0; i < nq; i++) {
		struct ilab_smmu_drv_queue_stats qs;

		assert_int_equal(per_q[i], cpus_per_queue);
		assert_int_equal(ilab_smmu_drv_get_queue_stats(t->iommu, 1 + i, &qs), 0);
		assert_int_equal(qs.cpus, cpus_per_queue);
		assert_false(qs.exclusive);
	}
}

static void test_probe_4_queues_one_per_node(void **state)
{
	struct ilab_smmu_drv_ecmdq_info info;
	struct dt t;

	(void)state;
	setup_or_fail(&t, 4, NULL);
	assert_int_equal(plat_node_count(), 4);
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(t.iommu, &info), 0);
	assert_int_equal(info.enabled, 4);
	assert_true(info.shared);
	assert_int_equal(info.log2size, 8 + 5); /* 32 CPUs per queue */
	check_enabled(&t, 4, 4, 13);
	check_node_groups(&t, 4, 32);
	dt_teardown(&t);
}

static void test_probe_64_queues_two_cpus_each(void **state)
{
	struct ilab_smmu_drv_ecmdq_info info;
	struct dt t;

	(void)state;
	setup_or_fail(&t, 64, NULL);
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(t.iommu, &info), 0);
	assert_int_equal(info.enabled, 64);
	assert_int_equal(info.log2size, 9);
	check_enabled(&t, 64, 64, 9);
	check_node_groups(&t, 64, 2);
	dt_teardown(&t);
}

static void test_probe_more_queues_than_cpus(void **state)
{
	struct ilab_smmu_drv_ecmdq_info info;
	struct dt t;

	(void)state;
	setup_or_fail(&t, 512, NULL); /* two control pages of 256 */
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(t.iommu, &info), 0);
	assert_int_equal(info.hw_count, 512);
	assert_int_equal(info.enabled, 128);
	check_enabled(&t, 512, 128, 8);
	dt_teardown(&t);
}

static void test_queue_size_option(void **state)
{
	struct ilab_smmu_drv_opts o = { .ecmdq_log2 = 7 };
	struct ilab_smmu_drv_ecmdq_info info;
	struct dt t;

	(void)state;
	setup_or_fail(&t, 4, &o);
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(t.iommu, &info), 0);
	assert_int_equal(info.log2size, 7);
	check_enabled(&t, 4, 4, 7);
	dt_teardown(&t);
}

/* ---- which queue commands reach ------------------------------------------------------------- */

struct issue {
	struct dt *t;
	uint64_t cmds[8];
	unsigned n;
	bool sync;
	int rc;
};

static void issue_thread(unsigned idx, void *arg)
{
	struct issue *is = arg;

	(void)idx;
	is->rc = ilab_smmu_drv_issue_cmds(is->t->iommu, is->cmds, is->n, is->sync);
}

static int issue_on(struct dt *t, int cpu, const uint64_t *cmds, unsigned n, bool sync)
{
	struct issue is = { .t = t, .n = n, .sync = sync };

	memcpy(is.cmds, cmds, n * 16);
	assert_int_equal(plat_run_threads(1, &cpu, issue_thread, &is), 0);
	return is.rc;
}

static void queue_stats(struct dt *t, unsigned q, struct smmu_queue_stats *s)
{
	assert_int_equal(smmu_get_cmdq_stats(model(t), q, s), 0);
}

static void test_cpu_commands_reach_its_queue(void **state)
{
	struct smmu_queue_stats before0, q0, q6, q7;
	struct ilab_smmu_drv_queue_stats ds;
	uint64_t cmd[2];
	struct dt t;

	(void)state;
	setup_or_fail(&t, 128, NULL);
	queue_stats(&t, 0, &before0);
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	assert_int_equal(ilab_smmu_drv_cpu_queue(t.iommu, 5), 6);
	assert_int_equal(issue_on(&t, 5, cmd, 1, true), 0);
	queue_stats(&t, 6, &q6);
	queue_stats(&t, 7, &q7);
	queue_stats(&t, 0, &q0);
	/* by the time the CMD_SYNC completed, the TLBI before it had executed (§4.7) */
	assert_int_equal(q6.by_opcode[OP_TLBI_NH_VA], 1);
	assert_int_equal(q6.by_opcode[OP_CMD_SYNC], 1);
	assert_int_equal(q7.commands, 0);
	assert_int_equal(q0.commands, before0.commands); /* the main queue saw nothing */
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, 6, &ds), 0);
	assert_int_equal(ds.entries, 2);
	assert_int_equal(ds.prod_writes, 1);
	/* a thread that is not a CPU of the machine uses the main queue */
	assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, cmd, 1, true), 0);
	queue_stats(&t, 0, &q0);
	assert_int_equal(q0.commands, before0.commands + 2);
	dt_teardown(&t);
}

/* A shared queue (4 queues: node groups) goes through the lock-free path. */
static void test_shared_queue_commands(void **state)
{
	struct smmu_queue_stats qs;
	struct ilab_smmu_drv_queue_stats ds;
	uint64_t cmds[6];
	struct dt t;
	int q;

	(void)state;
	setup_or_fail(&t, 4, NULL);
	for (unsigned i = 0; i < 3; i++)
		ilab_smmu_drv_build_tlbi_va(&cmds[2 * i], 1, 0x1000 * (i + 1));
	q = ilab_smmu_drv_cpu_queue(t.iommu, 40);
	assert_in_range(q, 1, 4);
	assert_int_equal(issue_on(&t, 40, cmds, 3, true), 0);
	queue_stats(&t, (unsigned)q, &qs);
	assert_int_equal(qs.by_opcode[OP_TLBI_NH_VA], 3);
	assert_int_equal(qs.by_opcode[OP_CMD_SYNC], 1);
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, (unsigned)q, &ds), 0);
	assert_int_equal(ds.entries, 4);
	dt_teardown(&t);
}

static void check_main_queue_only(struct dt *t)
{
	struct smmu_queue_stats q0a, q0b, q1;
	uint64_t cmd[2];

	for (unsigned c = 0; c < plat_cpu_count(); c++)
		assert_int_equal(ilab_smmu_drv_cpu_queue(t->iommu, c), 0);
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	queue_stats(t, 0, &q0a);
	assert_int_equal(issue_on(t, 7, cmd, 1, true), 0);
	queue_stats(t, 0, &q0b);
	assert_int_equal(q0b.by_opcode[OP_TLBI_NH_VA] - q0a.by_opcode[OP_TLBI_NH_VA], 1);
	if (smmu_cmdq_count(model(t)) > 1) {
		queue_stats(t, 1, &q1);
		assert_int_equal(q1.commands, 0);
	}
}

static void test_fallback_without_hardware(void **state)
{
	struct ilab_smmu_drv_ecmdq_info info;
	struct dt t;

	(void)state;
	setup_or_fail(&t, 0, NULL);
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(t.iommu, &info), 0);
	assert_int_equal(info.hw_count, 0);
	assert_int_equal(info.enabled, 0);
	assert_non_null(info.why_not);
	check_main_queue_only(&t);
	dt_teardown(&t);
}

static void test_fallback_option_off(void **state)
{
	struct ilab_smmu_drv_opts o = { .ecmdq = ILAB_SMMU_ECMDQ_OFF };
	struct ilab_smmu_drv_ecmdq_info info;
	struct dt t;

	(void)state;
	setup_or_fail(&t, 4, &o);
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(t.iommu, &info), 0);
	assert_int_equal(info.hw_count, 4);
	assert_int_equal(info.enabled, 0);
	check_enabled(&t, 4, 0, 0);
	check_main_queue_only(&t);
	dt_teardown(&t);
}

static void test_option_on_without_hardware_fails(void **state)
{
	struct ilab_smmu_drv_opts o = { .ecmdq = ILAB_SMMU_ECMDQ_ON };
	struct dt t;

	(void)state;
	assert_int_equal(dt_setup(&t, ILAB_CMA_PERNUMA, NULL, &o), -ENODEV);
	dt_teardown(&t);
}

/* Remove disables every queue (EN and ENACK back to 0). A second driver instance is probed
 * on the same SMMU (re-enabling the queues on its own memory) and removed; the board's
 * instance is only torn down afterwards. */
static void test_remove_disables_queues(void **state)
{
	struct ilab_iommu *second = NULL;
	struct dt t;

	(void)state;
	setup_or_fail(&t, 4, NULL);
	assert_int_equal(ilab_smmu_drv_probe(ilab_board_mmio(t.board, t.si),
					     ilab_board_mem(t.board), 2, NULL, &second), 0);
	check_enabled(&t, 4, 4, 13);
	ilab_smmu_drv_remove(second);
	check_enabled(&t, 4, 0, 0);
	dt_teardown(&t);
}

/* ---- errors -------------------------------------------------------------------------------- */

static void build_illegal(uint64_t cmd[2])
{
	cmd[0] = OP_ILLEGAL;
	cmd[1] = 0;
}

/* TLBI, illegal, TLBI + CMD_SYNC in one issue: the SYNC completes once the bad command has
 * been skipped; both TLBIs executed; the error is counted; the queue works afterwards. */
static void error_skipped(unsigned count, enum ilab_smmu_sync_mode mode)
{
	struct ilab_smmu_drv_opts o = { .sync_mode = mode };
	struct ilab_smmu_drv_queue_stats ds;
	struct smmu_queue_stats qs;
	uint64_t cmds[6];
	struct dt t;
	int q;

	setup_or_fail(&t, count, &o);
	ilab_smmu_drv_build_tlbi_va(&cmds[0], 1, 0x1000);
	build_illegal(&cmds[2]);
	ilab_smmu_drv_build_tlbi_va(&cmds[4], 1, 0x2000);
	q = ilab_smmu_drv_cpu_queue(t.iommu, 3);
	assert_in_range(q, 1, count);
	assert_int_equal(issue_on(&t, 3, cmds, 3, true), 0);
	queue_stats(&t, (unsigned)q, &qs);
	assert_int_equal(qs.cerror_ill, 1);
	assert_int_equal(qs.by_opcode[OP_TLBI_NH_VA], 2);
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, (unsigned)q, &ds), 0);
	assert_int_equal(ds.errors, 1);
	assert_int_equal(ds.err_ill, 1);
	/* acknowledged: PROD.ERRACK == CONS.ERR (both toggled once from 0) */
	assert_true(ecmdq_reg(&t, (unsigned)q - 1, 0xc) & ECMDQ_CONS_ERR);
	assert_true(ecmdq_reg(&t, (unsigned)q - 1, 0x8) & ECMDQ_PROD_ERRACK);
	assert_true(ecmdq_reg(&t, (unsigned)q - 1, 0x8) & ECMDQ_PROD_EN);
	/* later commands proceed, and a second error toggles back */
	assert_int_equal(issue_on(&t, 3, &cmds[4], 1, true), 0);
	assert_int_equal(issue_on(&t, 3, &cmds[2], 1, true), 0);
	assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, (unsigned)q, &ds), 0);
	assert_int_equal(ds.errors, 2);
	assert_false(ecmdq_reg(&t, (unsigned)q - 1, 0x8) & ECMDQ_PROD_ERRACK);
	queue_stats(&t, (unsigned)q, &qs);
	assert_int_equal(qs.by_opcode[OP_TLBI_NH_VA], 3);
	assert_int_equal(qs.cerror_ill, 2);
	dt_teardown(&t);
}

static void test_error_skipped_exclusive_msi(void **state)
{
	(void)state;
	error_skipped(128, ILAB_SMMU_SYNC_MSI);
}

static void test_error_skipped_exclusive_cons(void **state)
{
	(void)state;
	error_skipped(128, ILAB_SMMU_SYNC_CONS);
}

static void test_error_skipped_shared_msi(void **state)
{
	(void)state;
	error_skipped(4, ILAB_SMMU_SYNC_MSI);
}

static void test_error_skipped_shared_cons(void **state)
{
	(void)state;
	error_skipped(4, ILAB_SMMU_SYNC_CONS);
}

static bool cons_err_set(uint64_t v, void *arg)
{
	(void)arg;
	return v & ECMDQ_CONS_ERR;
}

/* Queue A holds an unacknowledged error (nobody waits on it); a CMD_SYNC on queue B completes
 * regardless, and A stays stopped until its own CPU issues and skips the bad command. */
static void sync_scope(unsigned count)
{
	struct smmu_queue_stats a0, a1;
	uint64_t bad[2], tlbi[2];
	uint32_t cons;
	struct dt t;
	int qa, qb, cpu_a = 0, cpu_b = 64; /* different nodes: different queues in both layouts */

	setup_or_fail(&t, count, NULL);
	qa = ilab_smmu_drv_cpu_queue(t.iommu, (unsigned)cpu_a);
	qb = ilab_smmu_drv_cpu_queue(t.iommu, (unsigned)cpu_b);
	assert_int_not_equal(qa, qb);
	build_illegal(bad);
	ilab_smmu_drv_build_tlbi_va(tlbi, 1, 0x1000);
	/* illegal command then a TLBI, no sync: A stops at the illegal one */
	assert_int_equal(issue_on(&t, cpu_a, bad, 1, false), 0);
	assert_int_equal(issue_on(&t, cpu_a, tlbi, 1, false), 0);
	for (unsigned i = 0; i < 1000; i++) {
		cons = ecmdq_reg(&t, (unsigned)qa - 1, 0xc);
		if (cons_err_set(cons, NULL))
			break;
		plat_native_sleep_ns(100000);
	}
	assert_true(cons & ECMDQ_CONS_ERR);
	assert_int_equal((cons >> 24) & 7, 1); /* ERR_REASON = CERROR_ILL */
	queue_stats(&t, (unsigned)qa, &a0);
	/* B's CMD_SYNC does not wait for A */
	assert_int_equal(issue_on(&t, cpu_b, tlbi, 1, true), 0);
	queue_stats(&t, (unsigned)qa, &a1);
	assert_int_equal(a1.commands, a0.commands); /* A did not move */
	assert_false(ecmdq_reg(&t, (unsigned)qa - 1, 0x8) & ECMDQ_PROD_ERRACK); /* not acked */
	/* A's own CMD_SYNC skips the error and everything before it completes */
	assert_int_equal(issue_on(&t, cpu_a, tlbi, 1, true), 0);
	queue_stats(&t, (unsigned)qa, &a1);
	assert_int_equal(a1.by_opcode[OP_TLBI_NH_VA] - a0.by_opcode[OP_TLBI_NH_VA], 2);
	assert_int_equal(a1.cerror_ill, 1);
	dt_teardown(&t);
}

static void test_sync_scope_exclusive(void **state)
{
	(void)state;
	sync_scope(128);
}

static void test_sync_scope_shared(void **state)
{
	(void)state;
	sync_scope(4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_128_queues_one_per_cpu),
		cmocka_unit_test(test_probe_4_queues_one_per_node),
		cmocka_unit_test(test_probe_64_queues_two_cpus_each),
		cmocka_unit_test(test_probe_more_queues_than_cpus),
		cmocka_unit_test(test_queue_size_option),
		cmocka_unit_test(test_cpu_commands_reach_its_queue),
		cmocka_unit_test(test_shared_queue_commands),
		cmocka_unit_test(test_fallback_without_hardware),
		cmocka_unit_test(test_fallback_option_off),
		cmocka_unit_test(test_option_on_without_hardware_fails),
		cmocka_unit_test(test_remove_disables_queues),
		cmocka_unit_test(test_error_skipped_exclusive_msi),
		cmocka_unit_test(test_error_skipped_exclusive_cons),
		cmocka_unit_test(test_error_skipped_shared_msi),
		cmocka_unit_test(test_error_skipped_shared_cons),
		cmocka_unit_test(test_sync_scope_exclusive),
		cmocka_unit_test(test_sync_scope_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
