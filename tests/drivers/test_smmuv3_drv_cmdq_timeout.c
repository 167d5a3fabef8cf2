/* test_smmuv3_drv_cmdq_timeout.c — the command queue after CMD_SYNC timeouts, in the simulator
 * (deterministic): an SMMU slower than the driver's 1 s timeout, which is what a host that
 * does not run the native model's thread for a second looks like to the driver.
 *
 * Linux's __arm_smmu_cmdq_poll_until_msi sets llq->cons = llq->prod when its CMD_SYNC times
 * out, and the last shared holder publishes that cons, as if the SMMU had read up to the
 * CMD_SYNC. It has not: producers then reserve slots it has not read yet, overwrite their
 * commands (lost, without an error to anybody) and push prod more than a lap ahead of the
 * real CONS, which queue_has_space cannot see. The driver takes the CONS register instead
 * (arm-smmu-v3-cmdq.c poll_until_msi). Without that, this run loses 233 of 2152 TLBIs written
 * and 23 of 270 CMD_SYNCs (measured before the change, tree 20af67e).
 *
 * The SMMU: 20 ms per command (profile smmu.command_ns, overridden), so a CMD_SYNC with more
 * than 50 commands ahead of it times out. 8 CPUs issue 40 x (8 TLBIs + CMD_SYNC) each through
 * a 128-entry queue. The checks, after a final CMD_SYNC that completes: the SMMU executed
 * every command the driver wrote, once; the driver wrote or refused (counted) every command
 * asked for; there were timeouts (or the test tests nothing).
 *
 * Single host thread (every simulated CPU and agent is a fiber): not an _mt test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/board.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"
#define CMDQ_LOG2 7        /* 128 entries */
#define CPUS 8
#ifdef ILAB_ASAN
/* ASan's swapcontext interceptor makes each fiber switch ~300x dearer (40 issues: over 10
 * min): the same checks on a run too short to lose commands with Linux's cons (~20 s). */
#define ISSUES 2
#else
#define ISSUES 40          /* per CPU */
#endif
#define TLBIS 8            /* per issue, then a CMD_SYNC */
#define COMMAND_NS 20000000ull /* 20 ms: 50 commands take the whole 1 s timeout */
#define OP_TLBI_NH_VA 0x12
#define OP_CMD_SYNC 0x46

struct run {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	struct ilab_iommu *iommu;
	unsigned failed[CPUS];
	int drained;
};

static struct run *live;

static int run_teardown(void **state)
{
	(void)state;
	if (live) {
		ilab_testbed_down(&live->tb);
		free(live);
		live = NULL;
	}
	return 0;
}

static void issuer(unsigned idx, void *arg)
{
	struct run *r = arg;
	uint64_t cmds[2 * TLBIS];

	for (unsigned i = 0; i < TLBIS; i++)
		ilab_smmu_drv_build_tlbi_va(&cmds[2 * i], 1, 0x100000ull + 0x1000ull * (idx * TLBIS + i));
	for (unsigned i = 0; i < ISSUES; i++)
		if (ilab_smmu_drv_issue_cmds(r->iommu, cmds, TLBIS, true))
			r->failed[idx]++;
}

/* One CMD_SYNC that completes: what was written before it has been executed. */
static void drainer(unsigned idx, void *arg)
{
	struct run *r = arg;

	(void)idx;
	for (unsigned i = 0; i < 10 && !r->drained; i++)
		r->drained = !ilab_smmu_drv_issue_cmds(r->iommu, NULL, 0, true);
}

static void slower_than_the_timeout(void **state)
{
	struct ilab_testbed_opts to = { .seed = 1, .cma = ILAB_CMA_PERNUMA };
	struct ilab_smmu_drv_stats st, all;
	struct smmu_queue_stats before, qs;
	int cpu_ids[CPUS];
	unsigned smmu = UINT32_MAX, n = 0, failed = 0;
	const uint64_t asked_tlbis = (uint64_t)CPUS * ISSUES * TLBIS, asked_syncs = CPUS * ISSUES;
	char err[512];
	struct run *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	live = r;
	if (ilab_profile_load(PROFILE, &r->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	r->prof.smmu_command_ns = COMMAND_NS;
	to.profile = &r->prof;
	to.drv.cmdq_log2 = CMDQ_LOG2;
	to.drv.cmdq_fair_lock = true;
	if (ilab_testbed_load_topology(&r->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < ilab_topo_nr_smmus(r->tb.topo); i++)
		if (ilab_topo_smmu(r->tb.topo, i)->node == 2)
			smmu = i;
	assert_true(smmu < 64);
	to.smmu_mask = 1ull << smmu;
	if (ilab_testbed_up(&r->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	r->iommu = ilab_board_iommu(r->tb.board, smmu);
	assert_non_null(r->iommu);
	for (unsigned i = 0; i < plat_node_cpu_count(2) && n < CPUS; i++)
		cpu_ids[n++] = plat_node_cpu(2, i);
	assert_int_equal(n, CPUS);
	/* the probe's commands (completed) are not the run's */
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(r->tb.board, smmu), 0, &before), 0);
	ilab_smmu_drv_clear_stats(r->iommu);
	assert_int_equal(plat_run_threads(CPUS, cpu_ids, issuer, r), 0);
	assert_int_equal(ilab_smmu_drv_get_stats(r->iommu, &st), 0);
	assert_int_equal(plat_run_threads(1, cpu_ids, drainer, r), 0);
	assert_true(r->drained);
	assert_int_equal(ilab_smmu_drv_get_stats(r->iommu, &all), 0);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(r->tb.board, smmu), 0, &qs), 0);
	qs.commands -= before.commands;
	qs.by_opcode[OP_TLBI_NH_VA] -= before.by_opcode[OP_TLBI_NH_VA];
	qs.by_opcode[OP_CMD_SYNC] -= before.by_opcode[OP_CMD_SYNC];
	for (unsigned c = 0; c < CPUS; c++)
		failed += r->failed[c];
	printf("  %llu TLBIs + %llu CMD_SYNCs asked; written %llu + %llu, refused %llu commands "
	       "(%llu issues), CMD_SYNC timeouts %llu; executed %llu + %llu\n",
	       (unsigned long long)asked_tlbis, (unsigned long long)asked_syncs,
	       (unsigned long long)st.by_opcode[OP_TLBI_NH_VA], (unsigned long long)st.syncs,
	       (unsigned long long)st.cmds_refused, (unsigned long long)st.space_timeouts,
	       (unsigned long long)st.sync_timeouts,
	       (unsigned long long)qs.by_opcode[OP_TLBI_NH_VA],
	       (unsigned long long)qs.by_opcode[OP_CMD_SYNC]);
	/* the situation arose: CMD_SYNCs timed out */
	assert_true(st.sync_timeouts > 0);
	/* executed = written (the drain's CMD_SYNC included): none lost, none run twice */
	assert_int_equal(qs.by_opcode[OP_TLBI_NH_VA], all.by_opcode[OP_TLBI_NH_VA]);
	assert_int_equal(qs.by_opcode[OP_CMD_SYNC], all.by_opcode[OP_CMD_SYNC]);
	assert_int_equal(qs.commands, all.cmds);
	/* written + refused = asked; each failed call is a timeout the driver counted */
	assert_int_equal(st.cmds + st.cmds_refused, asked_tlbis + asked_syncs);
	assert_int_equal(failed, st.sync_timeouts + st.space_timeouts);
	run_teardown(NULL);
}

/* The pre-5.4 producer (cmdq_mode SPINLOCK) draining its queue for a CMD_SYNC (CONS polling):
 * a bad command handled by the waiter restarts the 1 s timeout, as Linux 4.x's GERROR
 * interrupt handler skipped it and the poll went on. 45 TLBIs, an illegal command and 10 TLBIs
 * at 20 ms each, then the CMD_SYNC: the queue stops on the bad command at ~0.9 s, is skipped,
 * and drains at ~1.14 s, past the first deadline and well before the restarted one. The call
 * succeeds, without a timeout. */
#define BEFORE_BAD 45
#define AFTER_BAD 10

struct one_issue {
	struct ilab_iommu *iommu;
	uint64_t cmds[2 * (BEFORE_BAD + 1 + AFTER_BAD)];
	int rc;
	uint64_t t0, t1;
};

static void one_issuer(unsigned idx, void *arg)
{
	struct one_issue *is = arg;

	(void)idx;
	is->t0 = plat_now_ns();
	is->rc = ilab_smmu_drv_issue_cmds(is->iommu, is->cmds, BEFORE_BAD + 1 + AFTER_BAD, true);
	is->t1 = plat_now_ns();
}

static void error_handled_near_the_deadline_restarts_it(void **state)
{
	struct ilab_testbed_opts to = { .seed = 1, .cma = ILAB_CMA_PERNUMA };
	struct ilab_smmu_drv_stats st;
	struct smmu_queue_stats before, qs;
	struct one_issue is;
	unsigned smmu = UINT32_MAX;
	int cpu;
	char err[512];
	struct run *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	live = r;
	if (ilab_profile_load(PROFILE, &r->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	r->prof.smmu_command_ns = COMMAND_NS;
	to.profile = &r->prof;
	to.drv.cmdq_log2 = 8;
	to.drv.cmdq_mode = ILAB_SMMU_CMDQ_SPINLOCK;
	to.drv.sync_mode = ILAB_SMMU_SYNC_CONS;
	if (ilab_testbed_load_topology(&r->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < ilab_topo_nr_smmus(r->tb.topo); i++)
		if (ilab_topo_smmu(r->tb.topo, i)->node == 2)
			smmu = i;
	assert_true(smmu < 64);
	to.smmu_mask = 1ull << smmu;
	if (ilab_testbed_up(&r->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	is.iommu = r->iommu = ilab_board_iommu(r->tb.board, smmu);
	assert_non_null(r->iommu);
	for (unsigned i = 0; i < BEFORE_BAD + 1 + AFTER_BAD; i++)
		ilab_smmu_drv_build_tlbi_va(&is.cmds[2 * i], 1, 0x100000ull + 0x1000ull * i);
	is.cmds[2 * BEFORE_BAD] |= 1ull << 8; /* a RES0 bit of TLBI_NH_VA: CERROR_ILL here */
	ilab_smmu_drv_clear_stats(r->iommu);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(r->tb.board, smmu), 0, &before), 0);
	cpu = plat_node_cpu(2, 0);
	assert_int_equal(plat_run_threads(1, &cpu, one_issuer, &is), 0);
	assert_int_equal(ilab_smmu_drv_get_stats(r->iommu, &st), 0);
	printf("  the issue took %.3f s; CMD_SYNC timeouts %llu\n", (is.t1 - is.t0) / 1e9,
	       (unsigned long long)st.sync_timeouts);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(r->tb.board, smmu), 0, &qs), 0);
	/* the situation arose: one bad command, skipped, and the queue drained (every good
	 * TLBI executed) after the first deadline */
	assert_int_equal(qs.cerror_ill - before.cerror_ill, 1);
	assert_int_equal(qs.by_opcode[OP_TLBI_NH_VA] - before.by_opcode[OP_TLBI_NH_VA],
			 BEFORE_BAD + AFTER_BAD);
	assert_true(is.t1 - is.t0 > 1000000000ull);
	assert_int_equal(is.rc, 0);
	assert_int_equal(st.sync_timeouts, 0);
	run_teardown(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(slower_than_the_timeout, run_teardown),
		cmocka_unit_test_teardown(error_handled_near_the_deadline_restarts_it, run_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
