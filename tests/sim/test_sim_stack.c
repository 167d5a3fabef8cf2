/* test_sim_stack.c — the whole DMA stack (board with SMMUv3 models and their agents, SMMUv3
 * driver, IOMMU core, dma-iommu, flush queue) run in the simulator, checked against first
 * principles. Not a test of the engine alone (test_sim_model.c) nor of the driver natively.
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
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"
#define OP_TLBI_NH_VA 0x12
#define OP_TLBI_NH_ASID 0x11
#define OP_CMD_SYNC 0x46

/* One simulated machine: kunpeng920, its profile, the testbed with only the NIC's SMMU. */
struct stack {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	unsigned smmu;       /* index of the NIC's SMMU */
	int smmu_node;
	struct ilab_iommu *iommu;
	struct ilab_dev *nic;
};

static void stack_up(struct stack *st, enum ilab_cma_mode cma)
{
	char err[512];
	struct ilab_testbed_opts to = { .profile = &st->prof, .seed = 1, .cma = cma,
					.cma_global_node = 0 /* Linux: node 0 */ };
	const struct ilab_device *td = NULL;

	memset(st, 0, sizeof(*st));
	if (ilab_profile_load(PROFILE, &st->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	if (ilab_testbed_load_topology(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < ilab_topo_nr_devices(st->tb.topo); i++) {
		const struct ilab_device *d = ilab_topo_device(st->tb.topo, i);

		if (d->kind == ILAB_DEV_NIC && d->node == 2)
			td = d;
	}
	assert_non_null(td); /* kunpeng920: a NIC on node 2 */
	st->smmu = td->smmu;
	to.smmu_mask = 1ull << st->smmu;
	if (ilab_testbed_up(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	st->smmu_node = ilab_board_smmu_node(st->tb.board, st->smmu);
	assert_int_equal(st->smmu_node, 2);
	st->iommu = ilab_board_iommu(st->tb.board, st->smmu);
	assert_non_null(st->iommu);
	st->nic = ilab_testbed_dev(&st->tb, td->name);
	assert_non_null(st->nic);
	st->nic->pci = true;
}

static void stack_down(struct stack *st)
{
	/* the board first: stopping its agents must not leave the simulator an error either */
	ilab_board_destroy(st->tb.board);
	st->tb.board = NULL;
	assert_string_equal(ilab_testbed_sim_error(&st->tb), "");
	ilab_testbed_down(&st->tb);
}

/* The machine with the benchmark device probed into a domain of this type and dma-iommu's
 * default options: what the map/unmap tests start from. */
static void stack_dma_up(struct stack *st, enum ilab_domain_type type)
{
	struct ilab_dma_options dopts;

	stack_up(st, ILAB_CMA_GLOBAL);
	assert_int_equal(ilab_iommu_probe_device(st->nic, type), 0);
	ilab_dma_options_default(&dopts);
	assert_int_equal(ilab_dma_configure(st->nic, &dopts), 0);
}

/* ---- (a) CMD_SYNC: queue on the SMMU's node vs remote ------------------------------------ */

struct sync_arg {
	struct ilab_iommu *iommu;
	uint64_t ns;
	int ret;
};

static void one_sync(unsigned idx, void *arg)
{
	struct sync_arg *a = arg;
	uint64_t t0;

	(void)idx;
	/* The first brings the queue's shared words (prod/cons, lock, valid bitmap, owner),
	 * last touched by the probe on node 0, into this CPU's cache; the queue is empty again
	 * when it returns, and the second is the one measured. */
	a->ret = ilab_smmu_drv_issue_cmds(a->iommu, NULL, 0, true);
	if (a->ret)
		return;
	t0 = plat_now_ns();
	a->ret = ilab_smmu_drv_issue_cmds(a->iommu, NULL, 0, true);
	a->ns = plat_now_ns() - t0;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Issue a CMD_SYNC into the empty queue from the first CPU of node 2 (the SMMU's node);
 * returns its latency (virtual ns) and the node of the queue. */
static uint64_t sync_latency(enum ilab_cma_mode cma, int *queue_node)
{
	struct stack st;
	struct ilab_smmu_drv_info info;
	struct sync_arg a;
	int cpu;

	stack_up(&st, cma);
	assert_int_equal(ilab_smmu_drv_get_info(st.iommu, &info), 0);
	assert_int_equal(info.sync_mode, ILAB_SMMU_SYNC_MSI); /* MSI written into the slot */
	*queue_node = ilab_mem_node_of(ilab_board_mem(st.tb.board), info.cmdq_pa);
	a = (struct sync_arg){ .iommu = st.iommu };
	cpu = plat_node_cpu(2, 0);
	assert_true(cpu >= 0);
	assert_int_equal(plat_run_threads(1, &cpu, one_sync, &a), 0);
	assert_int_equal(a.ret, 0);
	if (getenv("STACK_DEBUG"))
		ilab_sim_json_write(st.tb.sim, stderr);
	stack_down(&st);
	return a.ns;
}

static void test_cmd_sync_remote_queue_costs_the_modelled_difference(void **state)
{
	struct ilab_profile prof;
	struct ilab_topo *topo;
	char err[256];
	int qnode_global, qnode_local;
	uint64_t remote, local, mem_local, mem_far, excess, hop, expected;
	unsigned d;

	(void)state;
	remote = sync_latency(ILAB_CMA_GLOBAL, &qnode_global);
	local = sync_latency(ILAB_CMA_PERNUMA, &qnode_local);
	assert_int_equal(qnode_global, 0);
	assert_int_equal(qnode_local, 2);

	/* First principles (docs/simulation.md, lines of simulated memory). CPU (node 2), SMMU
	 * (node 2), the queue homed on node q. Of everything a CMD_SYNC does, four accesses touch
	 * the queue's line:
	 *  1. the CPU writes the command into its slot. The warm-up's CPU re-read the previous
	 *     slot (same line) after its MSI, so the CPU holds the line alone (exclusive-clean):
	 *     the write is a hit whatever q is;
	 *  2. the SMMU reads the command from the CPU's cache through the home's directory:
	 *     transfer_local + hop(2,q) + hop(q,2) + hop(2,2);
	 *  3. the SMMU's MSI write invalidates the CPU's copy through the home and lands in the
	 *     home's last-level cache: max(llc(2,q), the same three-hop transfer);
	 *  4. the CPU's poll re-reads the line from the home's last-level cache: llc(2,q).
	 * With hop(a,b) = (mem(a,b) - mem(10)) / 2 (integer ns) and llc(a,h) = llc_local +
	 * mem(a,h) - mem(10), for q = 0 rather than q = 2: 2 costs 2 hop more, 3 costs
	 * max(llc_local + excess, transfer_local + 2 hop) - max(llc_local, transfer_local) more and
	 * 4 the excess, mem(d(2,q)) - mem(10). Everything else (the shared queue words, the valid
	 * bitmap and the lock, the PROD MMIO write, the doorbell, the SMMU's command and sync
	 * costs) does not depend on q. */
	assert_int_equal(ilab_profile_load(PROFILE, &prof, err, sizeof(err)), 0);
	assert_true(ilab_topo_load(prof.topology, &topo, err, sizeof(err)) >= 0);
	d = ilab_topo_distance(topo, 2, 0);
	assert_int_equal(d, 32); /* the Kunpeng 920 SLIT */
	ilab_topo_free(topo);
	assert_int_equal(ilab_profile_dist_ns(&prof, ILAB_DIST_MEM, 10, &mem_local), 0);
	assert_int_equal(ilab_profile_dist_ns(&prof, ILAB_DIST_MEM, d, &mem_far), 0);
	excess = mem_far - mem_local;
	hop = excess / 2;
	expected = 2 * hop +
		   max_u64(prof.llc_local_ns + excess, prof.transfer.local_ns + 2 * hop) -
		   max_u64(prof.llc_local_ns, prof.transfer.local_ns) + excess;
	print_message("CMD_SYNC into an empty queue: queue on node 0 %llu ns, on node 2 %llu ns "
		      "(difference %llu, expected %llu)\n", (unsigned long long)remote,
		      (unsigned long long)local, (unsigned long long)(remote - local),
		      (unsigned long long)expected);
	assert_true(remote > local);
	assert_int_equal(remote - local, expected);
}

/* ---- (b) command fetch read-ahead: a remote batch costs one round trip, not one per line -- */

enum { RA_TLBIS = 63, RA_BATCH = RA_TLBIS + 1 }; /* + CMD_SYNC: one batch, 16 lines of 4 */

/* The stack of the running read-ahead test, for its teardown: a failed assertion leaves the
 * test early, and the next tests need plat_init to succeed again. */
static struct stack *ra_live;

static int readahead_teardown(void **state)
{
	(void)state;
	if (ra_live) {
		ilab_testbed_down(&ra_live->tb);
		ra_live = NULL;
	}
	return 0;
}

struct readahead_arg {
	struct stack *st;
	unsigned entries; /* the command queue's size */
	uint32_t start;   /* queue index of the batch's first entry */
	int ret;
};

static uint32_t cmdq_prod_index(struct stack *st, unsigned entries)
{
	struct smmu *s = ilab_board_smmu(st->tb.board, st->smmu);

	return (uint32_t)smmu_mmio_read(s, SMMU_REG_CMDQ_PROD, 4) & (entries - 1);
}

static void tlbi_batch(uint64_t *cmds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ilab_smmu_drv_build_tlbi_va(&cmds[2 * i], 1, 0x100000ull + 0x1000ull * i);
}

/* Bring the queue to an index that is a multiple of the batch size, so that the measured batch
 * fills exactly 16 whole lines and ends before the queue's end (the queue's size is a power of
 * two >= 128, so a multiple of 64). */
static void readahead_setup(unsigned idx, void *arg)
{
	struct readahead_arg *a = arg;
	uint64_t cmds[2 * RA_BATCH];
	uint32_t p;

	(void)idx;
	a->ret = ilab_smmu_drv_issue_cmds(a->st->iommu, NULL, 0, true);
	if (a->ret)
		return;
	p = cmdq_prod_index(a->st, a->entries);
	if (p % RA_BATCH) {
		unsigned pad = RA_BATCH - p % RA_BATCH - 1; /* + its CMD_SYNC */

		tlbi_batch(cmds, pad);
		a->ret = ilab_smmu_drv_issue_cmds(a->st->iommu, cmds, pad, true);
		if (a->ret)
			return;
	}
	a->start = cmdq_prod_index(a->st, a->entries);
}

static void readahead_batch(unsigned idx, void *arg)
{
	struct readahead_arg *a = arg;
	uint64_t cmds[2 * RA_TLBIS];

	(void)idx;
	tlbi_batch(cmds, RA_TLBIS);
	a->ret = ilab_smmu_drv_issue_cmds(a->st->iommu, cmds, RA_TLBIS, true);
}

/* One counter of an agent of the SMMU in the simulator's statistics: its command processor
 * (suffix ""), its MSI write path (".msi", src/hw/smmuv3_msi_path.c). */
static uint64_t agent_stat_of(struct stack *st, const char *suffix, const char *key)
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

static uint64_t agent_stat(struct stack *st, const char *key)
{
	return agent_stat_of(st, "", key);
}

static void test_remote_batch_is_read_ahead_in_one_round_trip(void **state)
{
	static struct stack st; /* static: the teardown runs after this frame is gone */
	struct ilab_smmu_drv_info info;
	struct readahead_arg a = { .st = &st };
	uint64_t mem0, charged0, mem_ns, charged_ns, mem10, mem32, hop, xfer3, llc, msi;
	uint64_t path0, path_ns;
	uint64_t read_ahead, per_line;
	unsigned lines = RA_BATCH / 4;
	int cpu;

	(void)state;
	stack_up(&st, ILAB_CMA_GLOBAL); /* the queue on node 0; the SMMU and the CPU on node 2 */
	ra_live = &st;
	assert_int_equal(ilab_smmu_drv_get_info(st.iommu, &info), 0);
	assert_int_equal(info.sync_mode, ILAB_SMMU_SYNC_MSI);
	assert_int_equal(ilab_mem_node_of(ilab_board_mem(st.tb.board), info.cmdq_pa), 0);
	a.entries = 1u << info.cmdq_log2;
	assert_true(a.entries >= 2 * RA_BATCH);
	cpu = plat_node_cpu(2, 0);
	assert_true(cpu >= 0);
	assert_int_equal(plat_run_threads(1, &cpu, readahead_setup, &a), 0);
	assert_int_equal(a.ret, 0);
	assert_int_equal(a.start % RA_BATCH, 0);

	/* The measured span: the SMMU's agent's memory time (mem_ns: its accesses to simulated
	 * memory only; the doorbell is a tracked word, counted apart, and command_ns/sync_ns are
	 * compute, charged_ns) while it consumes the batch. */
	mem0 = agent_stat(&st, "mem_ns");
	path0 = agent_stat_of(&st, ".msi", "mem_ns"); /* the set-up's syncs started the path */
	charged0 = agent_stat(&st, "charged_ns");
	assert_int_equal(plat_run_threads(1, &cpu, readahead_batch, &a), 0);
	assert_int_equal(a.ret, 0);
	assert_int_equal(cmdq_prod_index(&st, a.entries), a.start + RA_BATCH);
	mem_ns = agent_stat(&st, "mem_ns") - mem0;
	path_ns = agent_stat_of(&st, ".msi", "mem_ns") - path0;
	charged_ns = agent_stat(&st, "charged_ns") - charged0;

	/* First principles (docs/simulation.md: "Command fetch read-ahead", "Lines of simulated
	 * memory"; profiles/kunpeng920.yaml). The CPU (node 2) wrote the 64 entries, 16 whole
	 * lines homed on node 0, then wrote PROD once; the SMMU (node 2) reads them. Each line is
	 * in the CPU's cache, so a device read of it is the home-routed transfer
	 *   xfer3 = transfer_local + hop(2,0) + hop(0,2) + hop(2,2),  hop(a,b) = (mem(a,b) - mem(10))/2
	 * (hop(2,2) = 0). Reading the first entry past the last read-ahead fetches every published
	 * entry up to PROD (64 <= the limit, and the batch ends before the queue's end) as one
	 * multi-line access: the slowest line in full, each further missing line line_stream_ns;
	 * the 63 later entry reads are hits in the device's snapshot (hit_ns each: no CPU writes
	 * those lines meanwhile, its poll of the CMD_SYNC slot is a read). TLBI_NH_VA touches no
	 * memory. Last, the CMD_SYNC's MSI write into its slot, made by the SMMU's write path
	 * (its own agent), not the processor: max(llc(2,0), invalidating the CPU's copy through
	 * the home = xfer3), llc(2,0) = llc_local + mem(2,0) - mem(10).
	 * Without the read-ahead each line's first entry would pay xfer3, serially.
	 * Every cost is an integer sum in the model (no randomness, no contention: one CPU, one
	 * batch), so the comparison is exact. */
	assert_int_equal(ilab_topo_distance(st.tb.topo, 2, 0), 32);
	assert_int_equal(ilab_profile_dist_ns(&st.prof, ILAB_DIST_MEM, 10, &mem10), 0);
	assert_int_equal(ilab_profile_dist_ns(&st.prof, ILAB_DIST_MEM, 32, &mem32), 0);
	hop = (mem32 - mem10) / 2;
	xfer3 = st.prof.transfer.local_ns + 2 * hop;
	llc = st.prof.llc_local_ns + mem32 - mem10;
	msi = llc > xfer3 ? llc : xfer3;
	read_ahead = xfer3 + (lines - 1) * st.prof.mem_line_ns +
		     (RA_BATCH - 1) * st.prof.cache_hit_ns;
	per_line = lines * xfer3 + (RA_BATCH - lines) * st.prof.cache_hit_ns;
	print_message("SMMU memory time for %u TLBI + CMD_SYNC (queue on node 0, SMMU on node 2): "
		      "processor %llu ns, expected with read-ahead %llu ns, one fetch per line "
		      "%llu ns; MSI write path %llu ns, expected %llu ns\n", RA_TLBIS,
		      (unsigned long long)mem_ns, (unsigned long long)read_ahead,
		      (unsigned long long)per_line, (unsigned long long)path_ns,
		      (unsigned long long)msi);
	assert_true(read_ahead < per_line);
	assert_int_equal(mem_ns, read_ahead);
	assert_int_equal(path_ns, msi);
	/* ... and the agent executed exactly the batch: 64 commands, one of them a CMD_SYNC that
	 * follows TLBIs, so it also waits for their completion. The command processor dispatches
	 * TLBI k at t0 + k * c (c = its entry read, a snapshot hit, + command_ns) to the
	 * invalidation engine, which takes tlbi_ns for each, one after another; the sync,
	 * dispatched at t0 + n * c + sync_ns, waits until both the handshake (tlbi_sync_ns) and
	 * the engine are done: max(tlbi_sync_ns, engine end - its dispatch). */
	assert_true(st.prof.smmu_tlbi_sync_ns > 0 && st.prof.smmu_tlbi_ns > 0);
	{
		uint64_t c = st.prof.cache_hit_ns + st.prof.smmu_command_ns, n = RA_TLBIS;
		uint64_t engine_end = st.prof.smmu_tlbi_ns >= c ? n * st.prof.smmu_tlbi_ns
								: (n - 1) * c + st.prof.smmu_tlbi_ns;
		uint64_t dispatched = n * c + st.prof.smmu_sync_ns;
		uint64_t wait = engine_end > dispatched ? engine_end - dispatched : 0;

		if (wait < st.prof.smmu_tlbi_sync_ns)
			wait = st.prof.smmu_tlbi_sync_ns;
		/* with kunpeng920's constants the engine, not the handshake, decides: the test
		 * covers the overlap, not only the handshake's floor */
		assert_true(wait > st.prof.smmu_tlbi_sync_ns);
		assert_int_equal(charged_ns, RA_BATCH * st.prof.smmu_command_ns +
						     st.prof.smmu_sync_ns + wait);
	}
	ra_live = NULL;
	stack_down(&st);
}

/* ---- (c) strict map/unmap on 16 CPUs: the model executed what the driver issued ----------- */

static void test_strict_16_cpus_model_executes_what_the_driver_issued(void **state)
{
	enum { THREADS = 16, ITERS = 25 };
	struct stack st;
	struct ilab_map_bench_cfg cfg;
	struct ilab_map_bench_result res;
	struct ilab_smmu_drv_stats *ds = calloc(1, sizeof(*ds));
	struct smmu_queue_stats *qs = calloc(1, sizeof(*qs));
	struct ilab_dma_stats dst;
	char err[256];

	(void)state;
	assert_non_null(ds);
	assert_non_null(qs);
	stack_dma_up(&st, ILAB_DOMAIN_DMA);
	/* Set-up's last commands (a CMD_PREFETCH_CONFIG after the STE write) need no CMD_SYNC,
	 * so the model may not have consumed them yet: drain the queue with one before both sets
	 * of counters are cleared, or the model counts a command the driver counted earlier. */
	assert_int_equal(ilab_smmu_drv_issue_cmds(st.iommu, NULL, 0, true), 0);
	ilab_smmu_drv_clear_stats(st.iommu);
	smmu_clear_stats(ilab_board_smmu(st.tb.board, st.smmu));

	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = THREADS;
	cfg.node = -1; /* CPUs 0..15: nodes 0 */
	cfg.iterations = ITERS;
	assert_int_equal(ilab_map_bench_run(st.nic, ilab_board_mem(st.tb.board), &cfg, &res, err,
					    sizeof(err)),
			 0);
	assert_int_equal(res.loops, THREADS * ITERS);
	assert_int_equal(res.map_errors, 0);

	assert_int_equal(ilab_smmu_drv_get_stats(st.iommu, ds), 0);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(st.tb.board, st.smmu), 0, qs), 0);
	/* Strict, one 4 KiB page per unmap: one leaf TLBI by VA and one CMD_SYNC each (no other
	 * command: the domain and the device were set up before the counters were cleared). */
	assert_int_equal(ds->by_opcode[OP_TLBI_NH_VA], THREADS * ITERS);
	assert_int_equal(ds->by_opcode[OP_CMD_SYNC], THREADS * ITERS);
	assert_int_equal(ds->cmds, 2 * THREADS * ITERS);
	/* ... and the model completed exactly those, opcode by opcode */
	for (unsigned op = 0; op < 256; op++)
		assert_int_equal(qs->by_opcode[op], ds->by_opcode[op]);
	assert_int_equal(qs->commands, ds->cmds);
	assert_int_equal(qs->syncs_msi, ds->syncs);
	assert_int_equal(ilab_dma_stats(st.nic, &dst), 0);
	assert_int_equal(dst.iotlb_syncs, THREADS * ITERS);
	/* every thread ran on its own simulated CPU (0..15, one thread each), and time passed for
	 * each: the simulator's per-CPU statistics list exactly those CPUs, each with work done */
	assert_true(res.elapsed_ns > 0);
	{
		json_t *j = ilab_sim_json(st.tb.sim), *cpus = json_object_get(j, "cpus"), *o;
		size_t i;

		assert_int_equal(json_array_size(cpus), THREADS);
		json_array_foreach(cpus, i, o) {
			assert_int_equal(json_integer_value(json_object_get(o, "cpu")), i);
			assert_int_equal(json_integer_value(json_object_get(o, "threads")), 1);
			assert_true(json_integer_value(json_object_get(o, "charged_ns")) > 0);
			assert_true(json_integer_value(json_object_get(o, "end_ns")) > 0);
		}
		json_decref(j);
	}

	ilab_iommu_release_device(st.nic);
	stack_down(&st);
	free(ds);
	free(qs);
}

/* dma_map_benchmark wakes its threads one after another, so in simulation thread i starts
 * i x compute.thread_wake_ns after thread 0 (a time it spends delayed, not computing): the
 * simulated threads do not all start at one instant. */
static void test_benchmark_threads_start_one_wake_up_apart(void **state)
{
	enum { THREADS = 4 };
	struct stack st;
	struct ilab_map_bench_cfg cfg;
	struct ilab_map_bench_result res;
	uint64_t wake;
	json_t *root, *cpus;
	char err[256];

	(void)state;
	stack_dma_up(&st, ILAB_DOMAIN_DMA);
	wake = ilab_profile_compute_ns(&st.prof, "thread_wake_ns", 0);
	assert_true(wake > 0);
	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = THREADS;
	cfg.node = -1; /* CPUs 0..3 */
	cfg.iterations = 2;
	assert_int_equal(ilab_map_bench_run(st.nic, ilab_board_mem(st.tb.board), &cfg, &res, err,
					    sizeof(err)),
			 0);
	assert_int_equal(res.loops, THREADS * 2);
	root = ilab_sim_json(st.tb.sim);
	assert_non_null(root);
	cpus = json_object_get(root, "cpus");
	assert_true(json_is_array(cpus));
	for (unsigned i = 0; i < THREADS; i++) {
		json_t *c = json_array_get(cpus, i);

		assert_int_equal(json_integer_value(json_object_get(c, "cpu")), i);
		assert_int_equal(json_integer_value(json_object_get(c, "delayed_ns")), i * wake);
	}
	json_decref(root);
	ilab_iommu_release_device(st.nic);
	stack_down(&st);
}

/* Passthrough with a 20-bit mask: every buffer is above 4 GiB and even the swiotlb's bounce
 * slots (below 4 GiB, above 1 MiB) are beyond the mask, so every map fails (a 32-bit mask
 * bounces: tests/iommu/test_swiotlb_sim.c). Each thread stops at its first failure, as the
 * kernel's does; going on, a timed run never ended (its clock never reached the end). */
static void test_failed_maps_stop_the_thread(void **state)
{
	enum { THREADS = 2 };
	struct stack st;
	struct ilab_map_bench_cfg cfg;
	struct ilab_map_bench_result res;
	char err[256];

	(void)state;
	stack_dma_up(&st, ILAB_DOMAIN_IDENTITY);
	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = THREADS;
	cfg.node = 2;
	cfg.dma_bits = 20;
	cfg.iterations = 5;
	assert_int_equal(ilab_map_bench_run(st.nic, ilab_board_mem(st.tb.board), &cfg, &res, err,
					    sizeof(err)),
			 -EIO);
	assert_int_equal(res.loops, 0);
	assert_int_equal(res.map_errors, THREADS); /* one per thread, not one per iteration */
	assert_non_null(strstr(err, "every map failed"));
	cfg.iterations = 0;
	cfg.duration_ns = 1000000;
	assert_int_equal(ilab_map_bench_run(st.nic, ilab_board_mem(st.tb.board), &cfg, &res, err,
					    sizeof(err)),
			 -EIO);
	assert_int_equal(res.map_errors, THREADS);
	ilab_iommu_release_device(st.nic);
	stack_down(&st);
}

/* ---- (d) lazy mode: the flush queue's 10 ms timer fires in virtual time ------------------- */

struct lazy_arg {
	struct stack *st;
	ilab_pa_t pa;
	uint64_t t_unmap;
	struct ilab_dma_stats start, before, at_9ms, at_11ms;
	uint64_t asid_tlbis_9ms, asid_tlbis_11ms;
	int map_failed;
};

static uint64_t asid_tlbis(struct stack *st)
{
	struct smmu_queue_stats *qs = calloc(1, sizeof(*qs));
	uint64_t n;

	assert_non_null(qs);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(st->tb.board, st->smmu), 0, qs), 0);
	n = qs->by_opcode[OP_TLBI_NH_ASID];
	free(qs);
	return n;
}

static void lazy_thread(unsigned idx, void *arg)
{
	struct lazy_arg *a = arg;
	ilab_dma_addr_t dma;

	(void)idx;
	ilab_dma_stats(a->st->nic, &a->start);
	dma = ilab_dma_map_single(a->st->nic, a->pa, ILAB_PAGE_SIZE, ILAB_DMA_BIDIRECTIONAL);
	if (ilab_dma_mapping_error(dma)) {
		a->map_failed = 1;
		return;
	}
	ilab_dma_unmap_single(a->st->nic, dma, ILAB_PAGE_SIZE, ILAB_DMA_BIDIRECTIONAL);
	a->t_unmap = plat_now_ns();
	ilab_dma_stats(a->st->nic, &a->before);
	/* Idle: the timer armed by the unmap's queueing (10 ms) must flush on its own. */
	plat_sleep_ns(9000000);
	ilab_dma_stats(a->st->nic, &a->at_9ms);
	a->asid_tlbis_9ms = asid_tlbis(a->st);
	plat_sleep_ns(2000000);
	ilab_dma_stats(a->st->nic, &a->at_11ms);
	a->asid_tlbis_11ms = asid_tlbis(a->st);
}

static void test_lazy_flush_timer_fires_after_10ms_of_virtual_time(void **state)
{
	struct stack st;
	struct ilab_dma_options dopts;
	struct lazy_arg a = { .st = &st };
	uint64_t tlbis0;
	int cpu;

	(void)state;
	stack_up(&st, ILAB_CMA_PERNUMA);
	assert_int_equal(ilab_iommu_probe_device(st.nic, ILAB_DOMAIN_DMA_FQ), 0);
	ilab_dma_options_default(&dopts);
	dopts.fq_timer = true; /* the timer is an agent: in simulation a fiber */
	assert_int_equal(ilab_dma_configure(st.nic, &dopts), 0);
	assert_int_equal(ilab_mem_alloc_pages(ilab_board_mem(st.tb.board), 2, 0, &a.pa), 0);
	tlbis0 = asid_tlbis(&st);
	cpu = plat_node_cpu(2, 0);
	assert_int_equal(plat_run_threads(1, &cpu, lazy_thread, &a), 0);
	assert_false(a.map_failed);

	assert_int_equal(a.before.fq_queued - a.start.fq_queued, 1);
	assert_int_equal(a.before.fq_flushes, a.start.fq_flushes);
	/* 9 ms after the unmap: nothing flushed, the IOVA still waits */
	assert_int_equal(a.at_9ms.fq_timeouts, a.start.fq_timeouts);
	assert_int_equal(a.at_9ms.fq_freed, a.start.fq_freed);
	assert_int_equal(a.asid_tlbis_9ms, tlbis0);
	/* 11 ms after: exactly one timer flush, one ASID-wide invalidation reached the SMMU,
	 * and the IOVA has been freed */
	assert_int_equal(a.at_11ms.fq_timeouts - a.start.fq_timeouts, 1);
	assert_int_equal(a.at_11ms.fq_flushes - a.start.fq_flushes, 1);
	assert_int_equal(a.asid_tlbis_11ms, tlbis0 + 1);
	assert_int_equal(a.at_11ms.fq_freed - a.start.fq_freed, 1);

	ilab_mem_free_pages(ilab_board_mem(st.tb.board), a.pa, 0);
	ilab_iommu_release_device(st.nic);
	stack_down(&st);
}

/* ---- determinism of the whole stack ------------------------------------------------------- */

static char *bench_json(unsigned threads, enum ilab_domain_type type)
{
	struct stack st;
	struct ilab_map_bench_cfg cfg;
	struct ilab_map_bench_result res;
	char err[256], *json;

	stack_dma_up(&st, type);
	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = threads;
	cfg.node = 2;
	cfg.iterations = 20;
	assert_int_equal(ilab_map_bench_run(st.nic, ilab_board_mem(st.tb.board), &cfg, &res, err,
					    sizeof(err)),
			 0);
	json = ilab_sim_json_dumps(st.tb.sim);
	assert_non_null(json);
	ilab_iommu_release_device(st.nic);
	stack_down(&st);
	return json;
}

/* Run bench_json in a child process: every run starts from the same host heap (the parent's,
 * copied by fork), as two runs of the CLI do. Within one process a second run would find the
 * heap rearranged by the first, and tracked words that share a cache line there differ
 * (docs/simulation.md, "Statistics and determinism"). Both children are forked before the
 * parent allocates anything to read their output, so they start from the same heap. */
struct child {
	int fd;
	pid_t pid;
};

static struct child bench_json_fork(unsigned threads, enum ilab_domain_type type)
{
	int fds[2];
	struct child c;

	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		char *json = bench_json(threads, type);
		size_t n = strlen(json), off = 0;

		close(fds[0]);
		while (off < n) {
			ssize_t w = write(fds[1], json + off, n - off);

			if (w <= 0)
				_exit(3);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	c.fd = fds[0];
	return c;
}

static char *bench_json_collect(struct child c)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int status;

	for (;;) {
		ssize_t r;

		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = read(c.fd, buf + len, cap - len - 1);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(c.fd);
	buf[len] = '\0';
	assert_int_equal(waitpid(c.pid, &status, 0), c.pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(len > 100);
	return buf;
}

static void test_same_run_twice_gives_identical_statistics(void **state)
{
	static const enum ilab_domain_type types[] = { ILAB_DOMAIN_DMA, ILAB_DOMAIN_DMA_FQ };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct child ca = bench_json_fork(8, types[i]);
		struct child cb = bench_json_fork(8, types[i]);
		char *a = bench_json_collect(ca);
		char *b = bench_json_collect(cb);

		if (strcmp(a, b) && getenv("STACK_DEBUG")) {
			FILE *fa = fopen("/tmp/stack_a.json", "w"), *fb = fopen("/tmp/stack_b.json", "w");

			if (fa && fb) {
				fputs(a, fa);
				fputs(b, fb);
			}
			if (fa)
				fclose(fa);
			if (fb)
				fclose(fb);
		}
		assert_string_equal(a, b);
		assert_non_null(strstr(a, "cmd_sync_ns")); /* the SMMU's distribution is there */
		free(a);
		free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmd_sync_remote_queue_costs_the_modelled_difference),
		cmocka_unit_test_teardown(test_remote_batch_is_read_ahead_in_one_round_trip,
					  readahead_teardown),
		cmocka_unit_test(test_strict_16_cpus_model_executes_what_the_driver_issued),
		cmocka_unit_test(test_benchmark_threads_start_one_wake_up_apart),
		cmocka_unit_test(test_failed_maps_stop_the_thread),
		cmocka_unit_test(test_lazy_flush_timer_fires_after_10ms_of_virtual_time),
		cmocka_unit_test(test_same_run_twice_gives_identical_statistics),
	};

	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
