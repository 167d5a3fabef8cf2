/* test_sim_smmu_queues.c — the SMMU's per-queue costs in simulation, with ECMDQs (one per
 * CPU, consumed one at a time, as in seed 003; src/hw/smmuv3_timing.c): a CMD_SYNC waits only
 * for the TLBIs of its own queue unless the profile's smmu.sync_waits_all_queues says
 * otherwise; its wait holds its queue, not the command processor, so two queues' CMD_SYNCs
 * overlap; at most smmu.invalidations_in_flight TLBIs are in flight; and an ECMDQ's command
 * fetch reads ahead like SMMU_CMDQ's. Checked against the profile's constants exactly where
 * one CPU runs at a time.
 * Not a test of the driver's ECMDQ protocol (tests/drivers) nor of the model's queues
 * (tests/hw).
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
#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"

/* kunpeng920 with ECMDQs on the node-2 SMMU only; queues in the global CMA area (node 0). */
struct qstack {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	unsigned smmu;
	struct ilab_iommu *iommu;
	int cpu[2]; /* two CPUs of node 2, each with an ECMDQ of its own */
	unsigned queue[2];
};

/* The running test's stack, for the teardown: a failed assertion leaves the test early, and
 * the next test needs plat_init to succeed again. */
static struct qstack *live;

static int qstack_teardown(void **state)
{
	(void)state;
	if (live) {
		ilab_testbed_down(&live->tb);
		live = NULL;
	}
	return 0;
}

/* Up with the profile as loaded, changed by `tweak` (may be NULL) before the board is built. */
static void qstack_up(struct qstack *st, void (*tweak)(struct ilab_profile *))
{
	char err[512];
	struct ilab_testbed_opts to = { .profile = &st->prof, .seed = 1, .cma = ILAB_CMA_GLOBAL,
					.ecmdq_per_cpu = true };
	struct ilab_smmu_drv_ecmdq_info info;

	memset(st, 0, sizeof(*st));
	if (ilab_profile_load(PROFILE, &st->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	if (tweak)
		tweak(&st->prof);
	to.drv.ecmdq = ILAB_SMMU_ECMDQ_ON;
	if (ilab_testbed_load_topology(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	st->smmu = UINT32_MAX;
	for (unsigned i = 0; i < ilab_topo_nr_smmus(st->tb.topo); i++)
		if (ilab_topo_smmu(st->tb.topo, i)->node == 2)
			st->smmu = i;
	assert_true(st->smmu < 64);
	to.smmu_mask = 1ull << st->smmu;
	if (ilab_testbed_up(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	live = st;
	st->iommu = ilab_board_iommu(st->tb.board, st->smmu);
	assert_non_null(st->iommu);
	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(st->iommu, &info), 0);
	assert_true(info.enabled >= 2);
	for (unsigned i = 0; i < 2; i++) {
		int q;

		st->cpu[i] = plat_node_cpu(2, i);
		assert_true(st->cpu[i] >= 0);
		q = ilab_smmu_drv_cpu_queue(st->iommu, (unsigned)st->cpu[i]);
		assert_true(q >= 1); /* an ECMDQ, not the main queue */
		st->queue[i] = (unsigned)q;
	}
	assert_int_not_equal(st->queue[0], st->queue[1]);
}

/* One counter of an agent of the SMMU in the simulator's statistics: its command processor
 * (suffix ""), its MSI write path (".msi"). */
static uint64_t agent_stat_of(struct qstack *st, const char *suffix, const char *key)
{
	json_t *root = ilab_sim_json(st->tb.sim), *agent, *v;
	char name[ILAB_TOPO_NAME_MAX + 8];
	uint64_t n;

	assert_non_null(root);
	snprintf(name, sizeof(name), "%s%s", ilab_topo_smmu(st->tb.topo, st->smmu)->name, suffix);
	agent = json_object_get(json_object_get(root, "agents"), name);
	if (!agent)
		fail_msg("no agent %s in the simulator's statistics", name);
	v = json_object_get(agent, key);
	assert_true(json_is_integer(v));
	n = (uint64_t)json_integer_value(v);
	json_decref(root);
	return n;
}

static uint64_t agent_stat(struct qstack *st, const char *key)
{
	return agent_stat_of(st, "", key);
}

struct issue_arg {
	struct qstack *st;
	unsigned tlbis; /* TLBI_NH_VA commands, then */
	bool sync;      /* a CMD_SYNC, waited for */
	uint64_t settle_ns; /* then wait this long (the SMMU consumes an unsynced batch) */
	int ret;
	uint64_t elapsed;   /* the issue's virtual time on its CPU (settle_ns not counted) */
};

static void tlbi_batch(uint64_t *cmds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ilab_smmu_drv_build_tlbi_va(&cmds[2 * i], 1, 0x100000ull + 0x1000ull * i);
}

static void issue_fn(unsigned idx, void *arg)
{
	struct issue_arg *a = arg;
	uint64_t cmds[2 * 64];

	(void)idx;
	assert_true(a->tlbis <= 64);
	tlbi_batch(cmds, a->tlbis);
	a->elapsed = plat_now_ns();
	a->ret = ilab_smmu_drv_issue_cmds(a->st->iommu, a->tlbis ? cmds : NULL, a->tlbis, a->sync);
	a->elapsed = plat_now_ns() - a->elapsed;
	if (a->settle_ns)
		plat_delay_ns(a->settle_ns);
}

/* Run one issue on CPU i of the stack; returns what the SMMU's agent was charged meanwhile
 * (compute only: command_ns, sync_ns, a TLBI's wait for a slot; memory is counted apart; a
 * CMD_SYNC's wait holds its queue, not the agent), and in *elapsed (may be NULL) the issuing
 * CPU's time for it. */
static uint64_t issue_timed(struct qstack *st, unsigned i, unsigned tlbis, bool sync,
			    uint64_t settle_ns, uint64_t *elapsed)
{
	struct issue_arg a = { .st = st, .tlbis = tlbis, .sync = sync, .settle_ns = settle_ns };
	uint64_t c0 = agent_stat(st, "charged_ns");

	assert_int_equal(plat_run_threads(1, &st->cpu[i], issue_fn, &a), 0);
	assert_int_equal(a.ret, 0);
	if (elapsed)
		*elapsed = a.elapsed;
	return agent_stat(st, "charged_ns") - c0;
}

static uint64_t issue_on(struct qstack *st, unsigned i, unsigned tlbis, bool sync,
			 uint64_t settle_ns)
{
	return issue_timed(st, i, tlbis, sync, settle_ns, NULL);
}

enum { CROSS_TLBIS = 8 };

/* The agent's wake-up at a sync's completion re-reads its doorbell line: a few ns (a cache
 * hit) that a sync with nothing to wait for does not pay. */
#define WAKE_SLACK_NS 20

/* Queue B gets TLBIs and no sync; then a sync on queue A; then B's own sync. Returns what
 * each sync took on its CPU, less what a plain sync (no TLBI before it anywhere) takes there. */
static void cross_queue_syncs(struct qstack *st, uint64_t *a_sync, uint64_t *b_sync)
{
	uint64_t tlbis, charged, plain[2], t;

	/* each queue's lines into its CPU's cache, no TLBI pending anywhere, and then what a
	 * sync with nothing to wait for takes on each CPU */
	for (unsigned i = 0; i < 2; i++) {
		issue_on(st, i, 0, true, 0);
		issue_timed(st, i, 0, true, 0, &plain[i]);
	}
	/* 20 us: the SMMU has long executed B's TLBIs and its engine is idle again */
	tlbis = issue_on(st, 1, CROSS_TLBIS, false, 20000);
	assert_int_equal(tlbis, CROSS_TLBIS * st->prof.smmu_command_ns);
	charged = issue_timed(st, 0, 0, true, 0, &t);
	assert_int_equal(charged, st->prof.smmu_command_ns + st->prof.smmu_sync_ns);
	*a_sync = t - plain[0];
	charged = issue_timed(st, 1, 0, true, 0, &t);
	assert_int_equal(charged, st->prof.smmu_command_ns + st->prof.smmu_sync_ns);
	*b_sync = t - plain[1];
}

static void test_sync_does_not_wait_for_another_queues_tlbis(void **state)
{
	static struct qstack st; /* static: the teardown runs after this frame is gone */
	uint64_t a_sync, b_sync;

	(void)state;
	qstack_up(&st, NULL);
	assert_int_equal(st.prof.smmu_sync_all_queues, 0); /* the default */
	assert_true(st.prof.smmu_tlbi_sync_ns > 0);
	cross_queue_syncs(&st, &a_sync, &b_sync);
	print_message("sync on A after TLBIs on B: +%llu ns; B's own sync: +%llu ns\n",
		      (unsigned long long)a_sync, (unsigned long long)b_sync);
	/* A had no TLBI: no handshake. B's sync follows its TLBIs: the handshake, and only it
	 * (the engine finished them long ago). */
	assert_true(a_sync <= WAKE_SLACK_NS);
	assert_true(b_sync >= st.prof.smmu_tlbi_sync_ns);
	assert_true(b_sync <= st.prof.smmu_tlbi_sync_ns + WAKE_SLACK_NS);
	qstack_teardown(NULL);
}

static void all_queues(struct ilab_profile *p)
{
	p->smmu_sync_all_queues = 1;
}

static void test_switch_makes_a_sync_wait_for_every_queue(void **state)
{
	static struct qstack st;
	uint64_t a_sync, b_sync;

	(void)state;
	qstack_up(&st, all_queues);
	cross_queue_syncs(&st, &a_sync, &b_sync);
	print_message("with sync_waits_all_queues: sync on A +%llu ns, then B's +%llu ns\n",
		      (unsigned long long)a_sync, (unsigned long long)b_sync);
	/* A's sync pays the handshake for B's TLBIs, and the handshake is then done for all:
	 * B's own sync after it pays none (coalesced). */
	assert_true(a_sync >= st.prof.smmu_tlbi_sync_ns);
	assert_true(a_sync <= st.prof.smmu_tlbi_sync_ns + WAKE_SLACK_NS);
	assert_true(b_sync <= WAKE_SLACK_NS);
	qstack_teardown(NULL);
}

/* ---- the processor does not wait out a CMD_SYNC ------------------------------------------ */

struct pair_arg {
	struct issue_arg a[2];
};

static void pair_fn(unsigned idx, void *arg)
{
	issue_fn(0, &((struct pair_arg *)arg)->a[idx]);
}

/* Two CPUs at once, each one TLBI + CMD_SYNC into its own ECMDQ: both syncs wait for the
 * handshake, each holding only its own queue, so the two waits overlap and neither CPU waits
 * for the other's (IHI 0070 §4.7.3: a CMD_SYNC orders its own queue). A processor that waits
 * out each CMD_SYNC (the timing before smmuv3_timing.c) serves them one after the other: the
 * later CPU then waits about two handshakes. */
static void test_two_queues_syncs_overlap(void **state)
{
	static struct qstack st;
	struct pair_arg pa;
	uint64_t plain[2], hs, lo, hi;

	(void)state;
	qstack_up(&st, NULL);
	hs = st.prof.smmu_tlbi_sync_ns;
	for (unsigned i = 0; i < 2; i++) {
		issue_on(&st, i, 0, true, 0);
		issue_timed(&st, i, 0, true, 0, &plain[i]);
	}
	memset(&pa, 0, sizeof(pa));
	for (unsigned i = 0; i < 2; i++)
		pa.a[i] = (struct issue_arg){ .st = &st, .tlbis = 1, .sync = true };
	assert_int_equal(plat_run_threads(2, st.cpu, pair_fn, &pa), 0);
	assert_int_equal(pa.a[0].ret, 0);
	assert_int_equal(pa.a[1].ret, 0);
	lo = pa.a[0].elapsed < pa.a[1].elapsed ? pa.a[0].elapsed : pa.a[1].elapsed;
	hi = pa.a[0].elapsed < pa.a[1].elapsed ? pa.a[1].elapsed : pa.a[0].elapsed;
	print_message("TLBI + CMD_SYNC on two ECMDQs at once: %llu and %llu ns (a plain sync "
		      "%llu / %llu ns, handshake %llu ns)\n", (unsigned long long)pa.a[0].elapsed,
		      (unsigned long long)pa.a[1].elapsed, (unsigned long long)plain[0],
		      (unsigned long long)plain[1], (unsigned long long)hs);
	assert_true(lo >= hs);
	/* the later one waited less than half a handshake for the other's */
	assert_true(hi - lo < hs / 2);
	qstack_teardown(NULL);
}

/* ---- invalidations in flight -------------------------------------------------------------- */

static void one_in_flight(struct ilab_profile *p)
{
	p->smmu_inv_in_flight = 1;
}

/* A batch of TLBIs without a sync: with no bound the processor hands each over in
 * command_ns; with one invalidation in flight it waits for the engine (tlbi_ns each) before
 * each hand-over after the first. */
static void test_inflight_bound_holds_the_processor(void **state)
{
	static struct qstack st;
	uint64_t free_run, bounded;
	const unsigned n = CROSS_TLBIS;

	(void)state;
	qstack_up(&st, NULL);
	assert_int_equal(st.prof.smmu_inv_in_flight, 0); /* kunpeng920 sets no bound */
	issue_on(&st, 0, 0, true, 0);
	free_run = issue_on(&st, 0, n, true, 20000);
	qstack_teardown(NULL);
	qstack_up(&st, one_in_flight);
	issue_on(&st, 0, 0, true, 0);
	bounded = issue_on(&st, 0, n, true, 20000);
	print_message("%u TLBIs + sync, agent charged: %llu ns unbounded, %llu ns with one "
		      "invalidation in flight\n", n, (unsigned long long)free_run,
		      (unsigned long long)bounded);
	assert_int_equal(free_run, (n + 1) * st.prof.smmu_command_ns + st.prof.smmu_sync_ns);
	assert_true(bounded >= free_run + (n - 1) * (st.prof.smmu_tlbi_ns / 2));
	qstack_teardown(NULL);
}

/* ---- the CMD_SYNC's MSI, made by the write path ------------------------------------------ */

/* A CMD_SYNC's MSI is posted (IHI 0070 §3.18, MSI synchronization; smmuv3_msi_path.c): the
 * write path's agent makes it, one memory access per sync, and the command processor makes
 * none (its only access is the fetch of the entries, one read-ahead). The issuing CPU still
 * sees its sync only once the write is made. A processor that makes the write itself (the
 * timing before) has no ".msi" agent and one more access per sync. The hand-over is a signal
 * inside the SMMU: the path's time per sync is the write's alone, as test_sim_stack has it:
 * max(llc(2,h), the CPU's copy invalidated through the queue's home, xfer3 = transfer_local
 * + mem(d(2,h)) - mem(10)) (a hand-over through a memory word would add a transfer). */
static void test_sync_msi_is_made_by_the_write_path(void **state)
{
	static struct qstack st;
	uint64_t p0, w0, wns0, t, p1, w1, wns1, base, mem10, memd, xfer3, llc, msi;
	enum { SYNCS = 4 };
	struct smmu *s;
	int home;

	(void)state;
	qstack_up(&st, NULL);
	issue_on(&st, 0, 0, true, 0); /* the queue's lines into the CPU's cache */
	s = ilab_board_smmu(st.tb.board, st.smmu);
	base = smmu_mmio_read(s, smmu_ecmdq_offset(s, st.queue[0] - 1) + SMMU_ECMDQ_REG_BASE, 8);
	home = ilab_mem_node_of(ilab_board_mem(st.tb.board), base & 0x000fffffffffffe0ull);
	assert_true(home >= 0);
	assert_int_equal(ilab_profile_dist_ns(&st.prof, ILAB_DIST_MEM, 10, &mem10), 0);
	assert_int_equal(ilab_profile_dist_ns(&st.prof, ILAB_DIST_MEM,
					      ilab_topo_distance(st.tb.topo, 2, (unsigned)home),
					      &memd), 0);
	xfer3 = st.prof.transfer.local_ns + (memd - mem10);
	llc = st.prof.llc_local_ns + (memd - mem10);
	msi = llc > xfer3 ? llc : xfer3;
	for (unsigned k = 0; k < SYNCS; k++) {
		p0 = agent_stat(&st, "mem_accesses");
		w0 = agent_stat_of(&st, ".msi", "mem_accesses");
		wns0 = agent_stat_of(&st, ".msi", "mem_ns") + agent_stat_of(&st, ".msi", "transfer_ns");
		issue_timed(&st, 0, 0, true, 0, &t);
		p1 = agent_stat(&st, "mem_accesses");
		w1 = agent_stat_of(&st, ".msi", "mem_accesses");
		wns1 = agent_stat_of(&st, ".msi", "mem_ns") + agent_stat_of(&st, ".msi", "transfer_ns");
		print_message("sync %u: %llu ns on the CPU; accesses: processor %llu, write path "
			      "%llu (%llu ns)\n", k, (unsigned long long)t,
			      (unsigned long long)(p1 - p0), (unsigned long long)(w1 - w0),
			      (unsigned long long)(wns1 - wns0));
		assert_int_equal(w1 - w0, 1);
		assert_int_equal(p1 - p0, 1);
		assert_int_equal(wns1 - wns0, msi);
		assert_true(t > wns1 - wns0);
	}
	qstack_teardown(NULL);
}

/* ---- command read-ahead on an ECMDQ ------------------------------------------------------ */

enum { RA_TLBIS = 63, RA_BATCH = RA_TLBIS + 1 }; /* + CMD_SYNC: 16 lines of 4 entries */

/* PROD index of queue q (1 + n: ECMDQ n) */
static uint32_t ecmdq_prod(struct qstack *st, unsigned q, unsigned entries)
{
	struct smmu *s = ilab_board_smmu(st->tb.board, st->smmu);
	uint64_t off = smmu_ecmdq_offset(s, q - 1);

	return (uint32_t)smmu_mmio_read(s, off + SMMU_ECMDQ_REG_PROD, 4) & (entries - 1);
}

/* The agent's memory time for one batch of 63 TLBIs + CMD_SYNC into CPU 0's ECMDQ, the batch
 * starting on a line (and a batch) boundary of the queue. */
static uint64_t ecmdq_batch_mem_ns(struct qstack *st)
{
	struct ilab_smmu_drv_ecmdq_info info;
	unsigned entries;
	uint32_t p;
	uint64_t m0;

	assert_int_equal(ilab_smmu_drv_get_ecmdq_info(st->iommu, &info), 0);
	entries = 1u << info.log2size;
	assert_true(entries >= 2 * RA_BATCH);
	issue_on(st, 0, 0, true, 0);
	p = ecmdq_prod(st, st->queue[0], entries);
	if (p % RA_BATCH)
		issue_on(st, 0, RA_BATCH - p % RA_BATCH - 1, true, 0);
	p = ecmdq_prod(st, st->queue[0], entries);
	assert_int_equal(p % RA_BATCH, 0);
	m0 = agent_stat(st, "mem_ns");
	issue_on(st, 0, RA_TLBIS, true, 0);
	assert_int_equal(ecmdq_prod(st, st->queue[0], entries), (p + RA_BATCH) % entries);
	return agent_stat(st, "mem_ns") - m0;
}

static void no_readahead(struct ilab_profile *p)
{
	p->smmu_cmd_readahead = 1;
}

static void test_ecmdq_batch_is_one_multi_line_fetch(void **state)
{
	static struct qstack st;
	uint64_t with, without, mem10, memd, xfer3, base;
	unsigned lines = RA_BATCH / 4, d;
	struct smmu *s;
	int home;

	(void)state;
	qstack_up(&st, no_readahead);
	without = ecmdq_batch_mem_ns(&st);
	qstack_teardown(NULL);
	qstack_up(&st, NULL);
	assert_int_equal(st.prof.smmu_cmd_readahead, 64);
	with = ecmdq_batch_mem_ns(&st);
	/* The CPU (node 2) wrote the 16 lines, homed on the queue's node h; the SMMU (node 2)
	 * reads them. One entry at a time, each line's first entry is a home-routed transfer
	 * from the CPU's cache, serially, and the line's 3 other entries hits:
	 *   xfer3 = transfer_local + hop(2,h) + hop(h,2), hop = (mem(d(2,h)) - mem(10)) / 2.
	 * Read ahead, the 16 lines are one access: the first in full, each further one
	 * line_stream_ns, and the 63 later entries hits. The MSI is the same in both, so
	 *   without - with = 15 x (xfer3 - line_stream_ns - hit_ns). */
	s = ilab_board_smmu(st.tb.board, st.smmu);
	base = smmu_mmio_read(s, smmu_ecmdq_offset(s, st.queue[0] - 1) + SMMU_ECMDQ_REG_BASE, 8);
	home = ilab_mem_node_of(ilab_board_mem(st.tb.board), base & 0x000fffffffffffe0ull);
	assert_true(home >= 0);
	d = ilab_topo_distance(st.tb.topo, 2, (unsigned)home);
	assert_int_equal(ilab_profile_dist_ns(&st.prof, ILAB_DIST_MEM, 10, &mem10), 0);
	assert_int_equal(ilab_profile_dist_ns(&st.prof, ILAB_DIST_MEM, d, &memd), 0);
	xfer3 = st.prof.transfer.local_ns + (memd - mem10);
	print_message("queue homed on node %d; ", home);
	print_message("ECMDQ batch of %u commands, SMMU memory time: %llu ns read ahead, %llu ns "
		      "one entry at a time\n", RA_BATCH, (unsigned long long)with,
		      (unsigned long long)without);
	assert_true(with < without);
	assert_int_equal(without - with,
			 (lines - 1) * (xfer3 - st.prof.mem_line_ns - st.prof.cache_hit_ns));
	qstack_teardown(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_two_queues_syncs_overlap, qstack_teardown),
		cmocka_unit_test_teardown(test_inflight_bound_holds_the_processor,
					  qstack_teardown),
		cmocka_unit_test_teardown(test_sync_does_not_wait_for_another_queues_tlbis,
					  qstack_teardown),
		cmocka_unit_test_teardown(test_switch_makes_a_sync_wait_for_every_queue,
					  qstack_teardown),
		cmocka_unit_test_teardown(test_ecmdq_batch_is_one_multi_line_fetch, qstack_teardown),
		cmocka_unit_test_teardown(test_sync_msi_is_made_by_the_write_path, qstack_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
