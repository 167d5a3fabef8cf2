/* bench_sim_dma.c — the simulator's speed on the whole DMA stack: host ns per simulated strict
 * 4 KiB dma_map_single + dma_unmap_single (kunpeng920 board, SMMUv3 model agent, driver,
 * dma-iommu) at 1, 16 and 128 simulated CPUs, simulated seconds per host second, and whether
 * host cost is linear in the number of operations. It prints figures; it is not a test.
 *
 * This host is shared and noisy: each configuration runs ROUNDS times, the configurations
 * interleaved so that a noisy moment hits all of them alike, and the best and the median are
 * printed. Each figure is a whole run's host time (fibers, warm-up and tear-down included)
 * over its operations; the linearity part separates the per-run fixed cost from the marginal
 * cost of one more operation (10k, 100k and 1M operations at 128 CPUs).
 *
 * Usage: bench_sim_dma [profile name or file [cpus [ops]]]   (default: kunpeng920; with cpus,
 * one run of that configuration only: handy under perf or callgrind).
 *        bench_sim_dma --compare FLAT HOME [cpus [ops [rounds]]]   (two profiles' host cost
 * per simulated atomic in one run, and attempts per claim: compare() below).
 * ILAB_SIM_LOOKAHEAD=none|profile in the environment picks the simulator's lookahead.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

static uint64_t host_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct figure {
	uint64_t ops, host_ns, sim_ns, lookahead_ns;
	/* --compare: the run's host CPU time, simulated atomics (every CPU's and agent's RMWs,
	 * CAS attempts included), CAS failures on the command queue's llq, fiber switches */
	uint64_t cpu_ns, rmws, llq_fails, switches;
};

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t json_u64(json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

/* The simulator's counts for --compare (its JSON: the figures a run reports anyway). */
static void count_atomics(const struct ilab_sim *s, struct figure *fig)
{
	json_t *root = ilab_sim_json(s), *v;
	const char *name;
	size_t i;

	fig->rmws = fig->llq_fails = fig->switches = 0;
	if (!root)
		return;
	json_array_foreach(json_object_get(root, "cpus"), i, v)
		fig->rmws += json_u64(v, "rmws");
	json_object_foreach(json_object_get(root, "agents"), name, v)
		fig->rmws += json_u64(v, "rmws");
	v = json_object_get(json_object_get(root, "lines"), "smmu.cmdq.llq");
	fig->llq_fails = v ? json_u64(v, "rmw_retries") : 0;
	fig->switches = json_u64(json_object_get(root, "scheduler"), "switches");
	json_decref(root);
}

static enum ilab_sim_lookahead lookahead_mode = ILAB_SIM_LOOKAHEAD_DEFAULT;

/* The NIC on node 2 (kunpeng920's), or NULL. */
static const struct ilab_device *node2_nic(const struct ilab_topo *topo)
{
	const struct ilab_device *nic = NULL;

	for (unsigned i = 0; i < ilab_topo_nr_devices(topo); i++) {
		const struct ilab_device *d = ilab_topo_device(topo, i);

		if (d->kind == ILAB_DEV_NIC && d->node == 2)
			nic = d;
	}
	return nic;
}

/* One complete run: fresh simulator, board, driver and device, `threads` CPUs (0..n-1, so
 * 128 spans the four nodes), each doing ops/threads strict map+unmap iterations. */
static int run(const struct ilab_profile *prof, unsigned threads, uint64_t ops,
	       struct figure *fig)
{
	struct ilab_testbed tb = { 0 };
	struct ilab_testbed_opts to = { .profile = prof, .seed = 1, .lookahead = lookahead_mode,
					.cma = ILAB_CMA_GLOBAL };
	const struct ilab_device *td;
	struct ilab_map_bench_cfg cfg;
	struct ilab_map_bench_result res;
	struct ilab_dma_options dopts;
	struct ilab_dev *nic = NULL;
	char err[512] = "";
	uint64_t t0, c0;
	int rc = -1;

	if (ilab_testbed_load_topology(&tb, &to, err, sizeof(err)))
		goto out;
	td = node2_nic(tb.topo);
	if (!td) {
		snprintf(err, sizeof(err), "no NIC on node 2");
		goto out;
	}
	to.smmu_mask = 1ull << td->smmu;
	if (ilab_testbed_up(&tb, &to, err, sizeof(err)))
		goto out;
	fig->lookahead_ns = ilab_sim_lookahead_ns(tb.sim);
	nic = ilab_testbed_dev(&tb, td->name);
	if (!nic || !nic->iommu) {
		snprintf(err, sizeof(err), "%s has no IOMMU", td->name);
		nic = NULL;
		goto out;
	}
	nic->pci = true;
	if (ilab_iommu_probe_device(nic, ILAB_DOMAIN_DMA)) {
		snprintf(err, sizeof(err), "probe: %s", ilab_iommu_strerror());
		nic = NULL;
		goto out;
	}
	ilab_dma_options_default(&dopts);
	if (ilab_dma_configure(nic, &dopts)) {
		snprintf(err, sizeof(err), "DMA set-up: %s", ilab_iommu_strerror());
		goto out;
	}
	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = threads;
	cfg.node = -1;
	cfg.iterations = ops / threads;
	t0 = host_ns();
	c0 = cpu_ns();
	if (ilab_map_bench_run(nic, ilab_board_mem(tb.board), &cfg, &res, err, sizeof(err)))
		goto out;
	fig->cpu_ns = cpu_ns() - c0;
	fig->host_ns = host_ns() - t0;
	count_atomics(tb.sim, fig);
	fig->ops = res.loops;
	fig->sim_ns = res.elapsed_ns;
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "bench_sim_dma: %u CPUs: %s %s\n", threads, err,
			ilab_testbed_sim_error(&tb));
	if (nic)
		ilab_iommu_release_device(nic);
	ilab_testbed_down(&tb);
	return rc;
}

#ifndef ILAB_BUILD_DESC
#define ILAB_BUILD_DESC "unknown build"
#endif

enum { ROUNDS = 5 };

static double ns_per_op(const struct figure *f)
{
	return (double)f->host_ns / (double)f->ops;
}

static void print(unsigned cpus, const struct figure *f)
{
	printf("%4u CPUs %7" PRIu64 " ops: %8.1f host ns per map+unmap, simulated %.6f s in "
	       "%.3f host s = %.4f simulated s per host s (lookahead %" PRIu64 " ns)\n",
	       cpus, f->ops, ns_per_op(f), f->sim_ns / 1e9, f->host_ns / 1e9,
	       (double)f->sim_ns / (double)f->host_ns, f->lookahead_ns);
}

static int by_cost(const void *a, const void *b)
{
	double x = ns_per_op(a), y = ns_per_op(b);

	return (x > y) - (x < y);
}

/* Best and median of one configuration's rounds (sorted in place). */
static void print_rounds(unsigned cpus, struct figure *r, unsigned n)
{
	qsort(r, n, sizeof(*r), by_cost);
	printf("%4u CPUs %7" PRIu64 " ops: %8.1f host ns per map+unmap best, %8.1f median of %u; "
	       "%.4f simulated s per host s at best (simulated %.6f s, lookahead %" PRIu64 " ns)\n",
	       cpus, r[0].ops, ns_per_op(&r[0]), ns_per_op(&r[n / 2]), n,
	       (double)r[0].sim_ns / (double)r[0].host_ns, r[0].sim_ns / 1e9, r[0].lookahead_ns);
}

/* Host time of a run = fixed + marginal * ops: the marginal cost between two run sizes. */
static double marginal_ns(const struct figure *small, const struct figure *big)
{
	return ((double)big->host_ns - (double)small->host_ns) /
	       ((double)big->ops - (double)small->ops);
}

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static int by_cpu_per_rmw(const void *a, const void *b)
{
	const struct figure *x = a, *y = b;
	double p = per(x->cpu_ns, x->rmws), q = per(y->cpu_ns, y->rmws);

	return (p > q) - (p < q);
}

/* --compare FLAT HOME [cpus [ops [rounds]]]: the two profiles' runs interleaved, `rounds`
 * each; per profile the best round's host CPU time per map+unmap and per simulated atomic,
 * CAS attempts per command-queue claim (one claim per strict unmap: (claims + llq CAS
 * failures) / claims) and fiber switches per atomic; then the ratio of host CPU time per
 * simulated atomic, second profile over first (issue 32's bound: 1.5). Host CPU time, not
 * wall time: this host is shared, and the simulator runs on one host thread. */
static int compare(int argc, char **argv)
{
	enum { MAX_ROUNDS = 15 };
	struct ilab_profile prof[2];
	struct figure r[2][MAX_ROUNDS];
	unsigned cpus = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 0) : 64;
	uint64_t ops = argc > 5 ? strtoull(argv[5], NULL, 0) : 64000;
	unsigned rounds = argc > 6 ? (unsigned)strtoul(argv[6], NULL, 0) : 3;
	char path[ILAB_PROFILE_PATH_MAX], err[600];

	if (argc < 4 || cpus < 1 || cpus > 1024 || ops < cpus || rounds < 1 ||
	    rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_sim_dma --compare FLAT HOME [cpus [ops [rounds "
				"(1-%d)]]]\n", MAX_ROUNDS);
		return 2;
	}
	for (unsigned p = 0; p < 2; p++)
		if (ilab_profile_resolve(argv[2 + p], path, sizeof(path), err, sizeof(err)) ||
		    ilab_profile_load(path, &prof[p], err, sizeof(err))) {
			fprintf(stderr, "bench_sim_dma: %s\n", err);
			return 2;
		}
	ops -= ops % cpus;
	printf("strict 4 KiB dma_map_single + unmap, %u CPUs, %" PRIu64 " map+unmap per run "
	       "(%" PRIu64 " per CPU), best of %u interleaved rounds by host CPU ns per atomic\n",
	       cpus, ops, ops / cpus, rounds);
	printf("build: %s\n", ILAB_BUILD_DESC);
	for (unsigned i = 0; i < rounds; i++)
		for (unsigned p = 0; p < 2; p++)
			if (run(&prof[p], cpus, ops, &r[p][i]))
				return 1;
	for (unsigned p = 0; p < 2; p++) {
		const struct figure *f = &r[p][0];

		qsort(r[p], rounds, sizeof(r[p][0]), by_cpu_per_rmw);
		printf("%-24s simulated %.6f s; %.1f atomics per map+unmap; attempts per claim "
		       "%.3f; %.2f switches per atomic; host CPU %.1f ns per map+unmap, %.1f ns per "
		       "atomic\n",
		       prof[p].name, f->sim_ns / 1e9, per(f->rmws, f->ops),
		       per(f->ops + f->llq_fails, f->ops), per(f->switches, f->rmws),
		       per(f->cpu_ns, f->ops), per(f->cpu_ns, f->rmws));
	}
	printf("host CPU ns per simulated atomic, %s / %s: %.2f\n", prof[1].name, prof[0].name,
	       per(r[1][0].cpu_ns, r[1][0].rmws) / per(r[0][0].cpu_ns, r[0][0].rmws));
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned cpus[] = { 1, 16, 128 };
	enum { NCFG = sizeof(cpus) / sizeof(cpus[0]) };
	static const uint64_t lin_ops[] = { 10112, 100096, 1000064 }; /* multiples of 128 */
	enum { NLIN = sizeof(lin_ops) / sizeof(lin_ops[0]) };
	struct ilab_profile prof;
	char path[ILAB_PROFILE_PATH_MAX], err[600];
	struct figure f, rounds[NCFG][ROUNDS], lin[NLIN][ROUNDS];

	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	if (argc > 1 && !strcmp(argv[1], "--compare"))
		return compare(argc, argv);
	if (ilab_profile_resolve(argc > 1 ? argv[1] : "kunpeng920", path, sizeof(path), err,
				 sizeof(err)) ||
	    ilab_profile_load(path, &prof, err, sizeof(err))) {
		fprintf(stderr, "bench_sim_dma: %s\n", err);
		return 1;
	}
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	/* ILAB_SIM_LOOKAHEAD=none|profile: compare the strict order with the lookahead */
	if (getenv("ILAB_SIM_LOOKAHEAD"))
		lookahead_mode = !strcmp(getenv("ILAB_SIM_LOOKAHEAD"), "none")
					 ? ILAB_SIM_LOOKAHEAD_NONE
					 : ILAB_SIM_LOOKAHEAD_PROFILE;
	printf("strict 4 KiB dma_map_single + unmap, simulated %s (profile %s), one SMMU\n",
	       prof.topology, path);
	printf("build: %s\n", ILAB_BUILD_DESC);
	if (argc > 2) {
		unsigned n = (unsigned)strtoul(argv[2], NULL, 0);
		uint64_t ops = argc > 3 ? strtoull(argv[3], NULL, 0) : 100000;

		if (n < 1 || n > 1024 || ops < n) {
			fprintf(stderr, "bench_sim_dma: bad cpus or ops\n");
			return 1;
		}
		if (run(&prof, n, ops - ops % n, &f))
			return 1;
		print(n, &f);
		return 0;
	}
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned i = 0; i < NCFG; i++)
			if (run(&prof, cpus[i], 100000 - 100000 % cpus[i], &rounds[i][r]))
				return 1;
	for (unsigned i = 0; i < NCFG; i++)
		print_rounds(cpus[i], rounds[i], ROUNDS);

	printf("linearity at 128 CPUs (host time = fixed + marginal x ops; best of %u each):\n",
	       ROUNDS);
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned i = 0; i < NLIN; i++)
			if (run(&prof, 128, lin_ops[i], &lin[i][r]))
				return 1;
	for (unsigned i = 0; i < NLIN; i++)
		print_rounds(128, lin[i], ROUNDS); /* sorts: [0] is the best */
	{
		double m1 = marginal_ns(&lin[0][0], &lin[1][0]);
		double m2 = marginal_ns(&lin[1][0], &lin[2][0]);
		double fixed = (double)lin[2][0].host_ns - m2 * (double)lin[2][0].ops;

		printf("marginal host ns per map+unmap: %.1f from 10k to 100k ops, %.1f from 100k to "
		       "1M (ratio %.2f: 1.00 is linear); fixed cost per run %.2f ms\n",
		       m1, m2, m2 / m1, fixed / 1e6);
	}
	return 0;
}
