/* test_smmuv3_drv_cmdq_fair.c — the command-queue lock before and since Linux's 2026 change
 * "iommu/arm-smmu-v3: Improve CMDQ lock fairness and efficiency" (opts.cmdq_fair_lock), in the
 * simulator (deterministic), near a full queue with many CPUs.
 *
 * The lock: CMD_SYNC issuers take it shared (after reserving their slots, before marking them
 * valid); producers waiting for room try it exclusive to read CONS. Before 2026 the exclusive
 * unlock stores 0, wiping the increment of a shared locker that arrived meanwhile: it must
 * then win a cmpxchg against the space waiters' trylocks, and a waiter that keeps finding no
 * room retakes the lock at once. Meanwhile the shared locker's slots stay invalid, so the
 * batch that holds them is not handed to the SMMU and the queue does not drain: the stream
 * of trylocks goes on. Since 2026 the unlock clears only the sign bit: the waiters' increments
 * become the shared count, every trylock fails until they release, and a shared locker waits
 * at most for the end of the exclusive section it found.
 *
 * The load that makes a shared locker meet an exclusive holder: most CPUs issue 48 TLBIs
 * without a sync (they need 48 free entries of 128, and wait for them trying the lock
 * exclusive whenever no CMD_SYNC is in flight); one CPU in four (or eight) issues 2 TLBIs and
 * a CMD_SYNC, which fit in the gaps the big batches cannot use. (With every CPU syncing, a
 * CMD_SYNC waiter nearly always holds the lock shared and the exclusive side almost never
 * runs; with equal batch sizes the syncing CPU only finds room right after the holder's
 * publish, by which time it has unlocked: no shared locker ever waits then.)
 *
 * The bound of the fair version, from the algorithm: the exclusive section a shared locker
 * finds is one CONS register read, one cmpxchg of the llq line and the unlock's RMW of the
 * lock line, after which the locker holds the lock (no later trylock can win); the lock line
 * may be queued behind one access of every other CPU. So no fair wait exceeds
 * mmio_read(d) + (cpus + 2) x transfer(d), d the largest distance between the CPUs used and the
 * SMMU / the queue's node (kunpeng920, the 32 CPUs of the SMMU's node 2: 400 + 34 x 36 =
 * 1624 ns).
 * The old version has no such bound: the test requires that its longest shared wait exceeds it.
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
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"
#define CMDQ_LOG2 7   /* 128 entries: the smallest queue the driver takes (a batch is 64) */
#define CPUS 32       /* all of node 2, the SMMU's (then node 3's, were there fewer) */
#define ISSUES 20     /* per CPU */
#define BIG 48        /* TLBIs per issue of the CPUs without CMD_SYNC */
#define SMALL 2       /* TLBIs per issue of the CPUs with a CMD_SYNC */

struct run {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	struct ilab_iommu *iommu;
	unsigned sync_every;
	uint64_t lat[CPUS][ISSUES]; /* each issue's latency, simulated ns */
	int ret[CPUS];
};

/* What one version did. */
struct outcome {
	uint64_t excl, waits, wait_ns, wait_max_ns; /* the queue's lock counters */
	uint64_t p50, p999, max;                    /* issue latency, ns */
	uint64_t bound_ns;                          /* the fair version's bound (above) */
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
	uint64_t cmds[2 * BIG];
	bool sync = idx % r->sync_every == 0;
	unsigned n = sync ? SMALL : BIG;

	for (unsigned i = 0; i < n; i++)
		ilab_smmu_drv_build_tlbi_va(&cmds[2 * i], 1, 0x100000ull + 0x1000ull * (idx * BIG + i));
	for (unsigned i = 0; i < ISSUES; i++) {
		uint64_t t0 = plat_now_ns();
		int ret = ilab_smmu_drv_issue_cmds(r->iommu, cmds, n, sync);

		r->lat[idx][i] = plat_now_ns() - t0;
		if (ret && !r->ret[idx])
			r->ret[idx] = ret;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* mmio_read(d) + (CPUS + 2) x transfer(d) at the largest distance d of the run's CPUs to the
 * SMMU's node (the queue is there too: per-NUMA CMA). */
static uint64_t fair_bound(const struct run *r, const int *cpu_ids, int smmu_node)
{
	unsigned d = 10;
	uint64_t rd, xfer;

	for (unsigned c = 0; c < CPUS; c++) {
		unsigned dc = ilab_topo_distance(r->tb.topo, (unsigned)plat_cpu_node((unsigned)cpu_ids[c]),
						 (unsigned)smmu_node);

		d = dc > d ? dc : d;
	}
	assert_int_equal(ilab_profile_dist_ns(&r->prof, ILAB_DIST_MMIO_READ, d, &rd), 0);
	assert_int_equal(ilab_profile_dist_ns(&r->prof, ILAB_DIST_TRANSFER, d, &xfer), 0);
	return rd + (CPUS + 2) * xfer;
}

static void run_lock(bool fair, unsigned sync_every, struct outcome *o)
{
	struct ilab_testbed_opts to = { .seed = 1, .cma = ILAB_CMA_PERNUMA };
	struct ilab_smmu_drv_queue_stats qs;
	uint64_t all[CPUS * ISSUES];
	int cpu_ids[CPUS];
	unsigned smmu = UINT32_MAX, n = 0;
	char err[512];
	struct run *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	live = r;
	r->sync_every = sync_every;
	if (ilab_profile_load(PROFILE, &r->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	to.profile = &r->prof;
	to.drv.cmdq_log2 = CMDQ_LOG2;
	to.drv.cmdq_fair_lock = fair;
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
	for (unsigned node = 2; node < 4 && n < CPUS; node++)
		for (unsigned i = 0; i < plat_node_cpu_count(node) && n < CPUS; i++)
			cpu_ids[n++] = plat_node_cpu(node, i);
	assert_int_equal(n, CPUS);
	assert_int_equal(plat_run_threads(CPUS, cpu_ids, issuer, r), 0);
	for (unsigned c = 0; c < CPUS; c++)
		assert_int_equal(r->ret[c], 0);
	assert_int_equal(ilab_smmu_drv_get_queue_stats(r->iommu, 0, &qs), 0);
	*o = (struct outcome){
		.excl = qs.lock_exclusive,
		.waits = qs.lock_shared_waits,
		.wait_ns = qs.lock_shared_wait_ns,
		.wait_max_ns = qs.lock_shared_wait_max_ns,
		.bound_ns = fair_bound(r, cpu_ids, 2),
	};
	for (unsigned c = 0; c < CPUS; c++)
		memcpy(all + c * ISSUES, r->lat[c], sizeof(r->lat[c]));
	qsort(all, CPUS * ISSUES, sizeof(*all), cmp_u64);
	o->p50 = all[CPUS * ISSUES / 2];
	o->p999 = all[CPUS * ISSUES * 999 / 1000];
	o->max = all[CPUS * ISSUES - 1];
	run_teardown(NULL);
}

static void print_outcome(const char *name, const struct outcome *o)
{
	printf("  %-6s exclusive %5llu, shared waits %3llu (%8llu ns, longest %7llu ns); issue "
	       "p50 %6llu p99.9 %8llu max %8llu ns\n", name, (unsigned long long)o->excl,
	       (unsigned long long)o->waits, (unsigned long long)o->wait_ns,
	       (unsigned long long)o->wait_max_ns, (unsigned long long)o->p50,
	       (unsigned long long)o->p999, (unsigned long long)o->max);
}

static void starvation_and_bound(unsigned sync_every)
{
	struct outcome old, fair;

	run_lock(false, sync_every, &old);
	run_lock(true, sync_every, &fair);
	printf("%u CPUs, 1 in %u with %u TLBIs + CMD_SYNC, the others %u TLBIs, %u-entry queue; "
	       "fair bound %llu ns\n", CPUS, sync_every, SMALL, BIG, 1u << CMDQ_LOG2,
	       (unsigned long long)fair.bound_ns);
	print_outcome("shared", &old);
	print_outcome("fair", &fair);
	/* the situation occurs in both: shared lockers find the lock held exclusive */
	assert_true(old.waits > 0 && fair.waits > 0);
	/* fair: each waits at most for the end of the section it found */
	assert_true(fair.wait_max_ns <= fair.bound_ns);
	/* old: the wiped increment lets the trylocks win again and again, beyond that bound */
	assert_true(old.wait_max_ns > fair.bound_ns);
	/* ... which shows as more exclusive sections: fair ones fail while a locker waits */
	assert_true(old.excl > fair.excl);
}

static void one_sync_cpu_in_four(void **state)
{
	(void)state;
	starvation_and_bound(4);
}

static void one_sync_cpu_in_eight(void **state)
{
	(void)state;
	starvation_and_bound(8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(one_sync_cpu_in_four, run_teardown),
		cmocka_unit_test_teardown(one_sync_cpu_in_eight, run_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
