/* test_smmuv3_drv_ecmdq_mt.c — many threads issue through per-CPU ECMDQs at once: with one
 * queue per CPU (the uncontended path) and with queues shared by two CPUs (the lock-free path),
 * in both CMD_SYNC modes. Every command arrives exactly once in its CPU's queue (the model's
 * per-queue counts), and each CPU's commands were consumed in the order it issued them (the
 * ring the SMMU read, in index order from its CONS). Runs under TSan (label `threads`).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drv_test_util.h"

#define THREADS 8
#ifdef ILAB_TSAN
#define ITERS 600
#else
#define ITERS 4000
#endif
#define OP_TLBI_NH_VA 0x12
#define OP_CMD_SYNC 0x46
#define TLBI_ASID_SHIFT 48

struct run {
	struct dt *t;
	plat_word32 errors;
};

/* Thread idx (its ASID is idx + 1) issues TLBIs with addresses 1, 2, 3, ... (in 4K pages),
 * in lists of 1..3 commands, every other list with a CMD_SYNC. */
static void producer(unsigned idx, void *arg)
{
	struct run *r = arg;
	uint64_t cmds[6];
	unsigned page = 1;

	for (unsigned i = 0; i < ITERS; i++) {
		unsigned n = 1 + i % 3;

		for (unsigned k = 0; k < n; k++)
			ilab_smmu_drv_build_tlbi_va(&cmds[2 * k], (uint16_t)(idx + 1),
						    (uint64_t)page++ << 12);
		if (ilab_smmu_drv_issue_cmds(r->t->iommu, cmds, n, i % 2 == 0 || i == ITERS - 1))
			plat_fetch_add32(&r->errors, 1);
	}
}

static unsigned tlbis_per_thread(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ITERS; i++)
		n += 1 + i % 3;
	return n;
}

static unsigned syncs_per_thread(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ITERS; i++)
		n += i % 2 == 0 || i == ITERS - 1;
	return n;
}

/* Walk the ring of model queue q from its CONS backwards over every slot: going forward in
 * consumption order, each ASID's TLBI addresses must increase by exactly one page (slots
 * overwritten by the next lap are older: we only compare neighbours of the same ASID that
 * are both present). Returns the number of TLBIs compared. */
static unsigned check_ring_order(struct dt *t, unsigned q)
{
	struct smmu *s = ilab_board_smmu(t->board, t->si);
	uint64_t off = smmu_ecmdq_offset(s, q - 1);
	uint64_t base = smmu_mmio_read(s, off, 8);
	uint32_t cons = (uint32_t)smmu_mmio_read(s, off + 0xc, 4);
	unsigned log2 = (unsigned)(base & 0x1f), size = 1u << log2, checked = 0;
	uint64_t pa = base & 0x000fffffffffffe0ull;
	const uint64_t *ring = ilab_mem_va(ilab_board_mem(t->board), pa, (size_t)size * 16);
	uint64_t last[THREADS + 1] = { 0 };

	assert_non_null(ring);
	/* the queue is drained: the oldest entry sits at CONS, the newest just before it */
	for (unsigned k = 0; k < size; k++) {
		unsigned i = (cons + k) & (size - 1);
		uint64_t d0 = ring[2 * i], d1 = ring[2 * i + 1];
		unsigned asid = (unsigned)(d0 >> TLBI_ASID_SHIFT);
		uint64_t page = d1 >> 12;

		if ((d0 & 0xff) != OP_TLBI_NH_VA)
			continue;
		assert_in_range(asid, 1, THREADS);
		if (last[asid])
			assert_int_equal(page, last[asid] + 1);
		last[asid] = page;
		checked++;
	}
	return checked;
}

static void many_cpus(unsigned nq, enum ilab_smmu_sync_mode mode)
{
	/* two CPUs of each kunpeng920 node (32 CPUs each): with 64 queues a node has 16, and
	 * its i-th CPU uses queue i mod 16, so CPUs 0 and 16 share one */
	static const int cpus[THREADS] = { 0, 16, 32, 48, 64, 80, 96, 112 };
	struct ilab_smmu_drv_opts o = { .sync_mode = mode };
	struct smmu_queue_stats before[THREADS], after;
	struct ilab_smmu_drv_queue_stats ds;
	struct smmu_config c;
	struct run r = { 0 };
	unsigned q[THREADS], users[1025] = { 0 };
	bool done[1025] = { false };
	struct dt t;
	int rc;

	smmu_config_default(&c);
	c.arch_minor = 3;
	c.ecmdq_count = nq;
	rc = dt_setup(&t, ILAB_CMA_PERNUMA, &c, &o);
	if (rc)
		fail_msg("setup %d: %s", rc, t.err);
	r.t = &t;
	for (unsigned i = 0; i < THREADS; i++) {
		int v = ilab_smmu_drv_cpu_queue(t.iommu, (unsigned)cpus[i]);

		assert_in_range(v, 1, nq);
		q[i] = (unsigned)v;
		users[q[i]]++;
		smmu_get_cmdq_stats(ilab_board_smmu(t.board, t.si), q[i], &before[i]);
	}
	assert_int_equal(plat_run_threads(THREADS, cpus, producer, &r), 0);
	assert_int_equal(plat_load32(&r.errors), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		unsigned n = users[q[i]]; /* threads on this queue */

		if (done[q[i]])
			continue; /* counted with its queue partner */
		done[q[i]] = true;
		smmu_get_cmdq_stats(ilab_board_smmu(t.board, t.si), q[i], &after);
		/* complete: every TLBI and CMD_SYNC of the queue's threads, once, no errors */
		assert_int_equal(after.by_opcode[OP_TLBI_NH_VA] - before[i].by_opcode[OP_TLBI_NH_VA],
				 n * tlbis_per_thread());
		assert_int_equal(after.by_opcode[OP_CMD_SYNC] - before[i].by_opcode[OP_CMD_SYNC],
				 n * syncs_per_thread());
		assert_int_equal(after.cerror_ill + after.cerror_abt, 0);
		assert_int_equal(ilab_smmu_drv_get_queue_stats(t.iommu, q[i], &ds), 0);
		assert_int_equal(ds.entries, n * (tlbis_per_thread() + syncs_per_thread()));
		assert_int_equal(ds.exclusive, n == 1);
		/* in order, per CPU; the ring held at least a lap of them */
		assert_true(check_ring_order(&t, q[i]) >= (1u << ds.log2size) / 2);
	}
	for (unsigned i = 0; i < THREADS; i++) /* the layout shares as intended */
		assert_int_equal(users[q[i]], nq >= 128 ? 1 : 2);
	dt_teardown(&t);
}

static void test_exclusive_queues_msi(void **state)
{
	(void)state;
	many_cpus(128, ILAB_SMMU_SYNC_MSI);
}

static void test_exclusive_queues_cons(void **state)
{
	(void)state;
	many_cpus(128, ILAB_SMMU_SYNC_CONS);
}

/* 64 queues on 128 CPUs: CPUs 2k and 2k+1 of a node share one (the lock-free path). */
static void test_shared_queues_msi(void **state)
{
	(void)state;
	many_cpus(64, ILAB_SMMU_SYNC_MSI);
}

static void test_shared_queues_cons(void **state)
{
	(void)state;
	many_cpus(64, ILAB_SMMU_SYNC_CONS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exclusive_queues_msi),
		cmocka_unit_test(test_exclusive_queues_cons),
		cmocka_unit_test(test_shared_queues_msi),
		cmocka_unit_test(test_shared_queues_cons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
