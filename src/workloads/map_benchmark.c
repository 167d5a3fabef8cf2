/* map_benchmark.c — the dma_map_benchmark experiment (Linux kernel/dma/map_benchmark.c): bound
 * threads map/unmap a buffer in a loop; latencies summed into shared counters.
 * It is not a DMA API implementation (dma-iommu.c) and knows nothing of SMMUs or drivers.
 *
 * Faithful details: threads start one wake-up apart, as the kernel wakes them in a loop; each
 * allocates its buffer after being bound (so on its node); before each map it dirties the
 * buffer with 0x66 unless the direction is FROM_DEVICE (natively; see the loop for
 * simulation); each map and unmap time is cut to whole 100 ns units before being added to
 * five shared 64-bit counters (sums, sums of squares, loops): that cross-CPU traffic is part
 * of what the kernel measures, so it is part of what we measure. Nanosecond figures are kept
 * per thread (no extra shared line) and combined at the end.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/map_benchmark.h>
#include <iommulab/plat.h>

void ilab_map_bench_cfg_default(struct ilab_map_bench_cfg *cfg)
{
	*cfg = (struct ilab_map_bench_cfg){
		.threads = 1,
		.seconds = 20,
		.node = -1,
		.dma_bits = 32,
		.dir = ILAB_DMA_BIDIRECTIONAL,
		.dma_trans_ns = 0,
		.granule = 1,
		.mode = ILAB_MAP_BENCH_SINGLE,
	};
}

const char *ilab_dma_dir_name(enum ilab_dma_dir dir)
{
	switch (dir) {
	case ILAB_DMA_BIDIRECTIONAL: return "BIDIRECTIONAL";
	case ILAB_DMA_TO_DEVICE: return "TO_DEVICE";
	case ILAB_DMA_FROM_DEVICE: return "FROM_DEVICE";
	}
	return "?";
}

int ilab_map_bench_check(const struct ilab_map_bench_cfg *c, char *err, size_t errlen)
{
#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)
	if (!c)
		return BAD("no configuration");
	if (c->threads < 1 || c->threads > ILAB_MAP_BENCH_MAX_THREADS)
		return BAD("threads must be 1..%u, not %u", ILAB_MAP_BENCH_MAX_THREADS, c->threads);
	if (!c->duration_ns && !c->iterations && (c->seconds < 1 || c->seconds > ILAB_MAP_BENCH_MAX_SECONDS))
		return BAD("seconds must be 1..%u, not %u", ILAB_MAP_BENCH_MAX_SECONDS, c->seconds);
	if (c->dma_bits < 20 || c->dma_bits > 64)
		return BAD("dma_bits must be 20..64, not %u", c->dma_bits);
	if (c->dir > ILAB_DMA_FROM_DEVICE)
		return BAD("dir must be 0 (bidirectional), 1 (to device) or 2 (from device)");
	if (c->dma_trans_ns > ILAB_MAP_BENCH_MAX_TRANS_NS)
		return BAD("dma_trans_ns must be at most %u", ILAB_MAP_BENCH_MAX_TRANS_NS);
	if (c->granule < 1 || c->granule > ILAB_MAP_BENCH_MAX_GRANULE)
		return BAD("granule must be 1..%u pages, not %u", ILAB_MAP_BENCH_MAX_GRANULE,
			   c->granule);
	if (c->mode != ILAB_MAP_BENCH_SINGLE && c->mode != ILAB_MAP_BENCH_SG)
		return BAD("mode must be single or sg");
	if (c->node < -1 || (c->node >= 0 && (unsigned)c->node >= plat_node_count()))
		return BAD("node %d does not exist (the machine has %u)", c->node,
			   plat_node_count());
	if (c->node >= 0 && c->threads > plat_node_cpu_count((unsigned)c->node))
		return BAD("node %d has %u CPUs, fewer than %u threads", c->node,
			   plat_node_cpu_count((unsigned)c->node), c->threads);
	if (c->node < 0 && c->threads > plat_cpu_count())
		return BAD("the machine has %u CPUs, fewer than %u threads", plat_cpu_count(),
			   c->threads);
	return 0;
#undef BAD
}

/* The five shared counters of map_benchmark_data: adjacent, as in the kernel. */
struct shared_sums {
	plat_word64 sum_map_100ns, sum_unmap_100ns, sum_sq_map, sum_sq_unmap, loops;
};

/* What one thread keeps to itself. */
struct thread_sums {
	uint64_t loops, errors;
	double map_ns, map_sq, unmap_ns, unmap_sq; /* sums */
	uint64_t map_min, map_max, unmap_min, unmap_max;
	int alloc_failed;
	char first_error[120]; /* the first map failure's cause (errors are per thread) */
} __attribute__((aligned(PLAT_CACHELINE)));

struct bench {
	struct ilab_dev *dev;
	struct ilab_mem *mem;
	const struct ilab_map_bench_cfg *cfg;
	uint64_t duration_ns;
	struct shared_sums sums __attribute__((aligned(PLAT_CACHELINE)));
	struct thread_sums *ts;
};

static unsigned order_for(unsigned pages)
{
	unsigned o = 0;

	while ((1u << o) < pages)
		o++;
	return o;
}

static void account(struct bench *b, struct thread_sums *t, uint64_t map_ns, uint64_t unmap_ns)
{
	/* The kernel's arithmetic: whole 100 ns units, then sums and sums of squares. */
	uint64_t m100 = map_ns / 100, u100 = unmap_ns / 100;

	plat_fetch_add64(&b->sums.sum_map_100ns, m100);
	plat_fetch_add64(&b->sums.sum_unmap_100ns, u100);
	plat_fetch_add64(&b->sums.sum_sq_map, m100 * m100);
	plat_fetch_add64(&b->sums.sum_sq_unmap, u100 * u100);
	plat_fetch_add64(&b->sums.loops, 1);

	t->loops++;
	t->map_ns += (double)map_ns;
	t->map_sq += (double)map_ns * (double)map_ns;
	t->unmap_ns += (double)unmap_ns;
	t->unmap_sq += (double)unmap_ns * (double)unmap_ns;
	if (map_ns < t->map_min)
		t->map_min = map_ns;
	if (map_ns > t->map_max)
		t->map_max = map_ns;
	if (unmap_ns < t->unmap_min)
		t->unmap_min = unmap_ns;
	if (unmap_ns > t->unmap_max)
		t->unmap_max = unmap_ns;
}

static void bench_thread(unsigned idx, void *arg)
{
	struct bench *b = arg;
	const struct ilab_map_bench_cfg *c = b->cfg;
	struct thread_sums *t = &b->ts[idx];
	size_t size = (size_t)c->granule * ILAB_PAGE_SIZE;
	unsigned order = order_for(c->granule);
	struct ilab_scatterlist *sg = NULL;
	ilab_pa_t pa;
	void *va;
	uint64_t end, now;

	t->map_min = t->unmap_min = UINT64_MAX;
	/* The kernel creates the threads, then wakes them one by one (wake_up_process in a loop):
	 * thread i starts i wake-ups after thread 0. In simulation that stagger matters: threads
	 * that start at one instant can stay in lock-step phase patterns a real machine's noise
	 * breaks up (docs/experiments.md, seed 002, "Thread start"). Natively the host wakes them
	 * as it does. */
	if (plat_sim)
		plat_delay_ns(plat_charge_table[PLAT_CHARGE_THREAD_WAKE] * idx);
	/* Allocated after binding: on this thread's node (alloc_pages_exact). */
	if (ilab_mem_alloc_pages(b->mem, plat_this_node(), order, &pa)) {
		t->alloc_failed = 1;
		return;
	}
	va = ilab_mem_va(b->mem, pa, size);
	if (c->mode == ILAB_MAP_BENCH_SG) {
		sg = plat_zalloc_array(c->granule, sizeof(*sg));
		if (!sg) {
			t->alloc_failed = 1;
			ilab_mem_free_pages(b->mem, pa, order);
			return;
		}
	}
	now = plat_now_ns();
	end = now + b->duration_ns;
	/* the last timestamp decides: no extra clock read per loop */
	for (uint64_t it = 0; c->iterations ? it < c->iterations + c->warmup : now < end; it++) {
		uint64_t t0, t1, t2, t3;
		ilab_dma_addr_t dma = 0;
		int nents = 0;
		bool warm = it < c->warmup;

		/* the breakdown keeps the warm-up apart: its dma_map and dma_unmap at the top level
		 * are then exactly the measured ones */
		if (warm)
			plat_scope_enter(PLAT_SCOPE_WARMUP);

		/* Dirty the buffer so that a non-coherent sync would cost what it costs. Natively
		 * only: in simulation the memset is not charged (outside both timed windows,
		 * nothing simulated reads the bytes), so running it was host time alone (~4% of a
		 * simulated map+unmap's). Not charging it is a simplification, not a fact: on the
		 * real machine it is time each thread spends away from the IOMMU, which matters
		 * at t=10 (docs/experiments.md, seed 002, "Not modelled ... memset"). */
		if (c->dir != ILAB_DMA_FROM_DEVICE && !plat_sim)
			memset(va, 0x66, size);
		if (sg)
			for (unsigned i = 0; i < c->granule; i++)
				sg[i] = (struct ilab_scatterlist){
					.pa = pa + (uint64_t)i * ILAB_PAGE_SIZE,
					.length = ILAB_PAGE_SIZE,
				};

		t0 = plat_now_ns();
		if (sg)
			nents = ilab_dma_map_sg(b->dev, sg, c->granule, c->dir);
		else
			dma = ilab_dma_map_single(b->dev, pa, size, c->dir);
		t1 = plat_now_ns();
		now = t1;
		/* The kernel's thread stops at its first failed map ("dma_map_single failed").
		 * Going on would also never end a timed run in simulation where a failure costs
		 * no simulated time (passthrough's DMA-mask check). */
		if (sg ? nents <= 0 : ilab_dma_mapping_error(dma)) {
			t->errors++;
			snprintf(t->first_error, sizeof(t->first_error), "%s", ilab_iommu_strerror());
			if (warm)
				plat_scope_leave();
			break;
		}
		/* Pretend the device does DMA. */
		if (c->dma_trans_ns)
			plat_delay_ns(c->dma_trans_ns);
		t2 = plat_now_ns();
		if (sg)
			ilab_dma_unmap_sg(b->dev, sg, c->granule, c->dir);
		else
			ilab_dma_unmap_single(b->dev, dma, size, c->dir);
		t3 = plat_now_ns();
		now = t3;
		if (it >= c->warmup)
			account(b, t, t1 - t0, t3 - t2);
		else if (!c->iterations)
			end = now + b->duration_ns; /* the measured time starts after the warm-up */
		if (warm)
			plat_scope_leave();
	}
	free(sg);
	ilab_mem_free_pages(b->mem, pa, order);
}

static uint64_t int_sqrt64(uint64_t x)
{
	uint64_t r = (uint64_t)sqrt((double)x);

	while (r * r > x)
		r--;
	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

static double stddev(double sum, double sq, uint64_t n)
{
	double mean, var;

	if (!n)
		return 0;
	mean = sum / (double)n;
	var = sq / (double)n - mean * mean;
	return var > 0 ? sqrt(var) : 0;
}

static void combine(struct bench *b, unsigned n, struct ilab_map_bench_result *r)
{
	uint64_t loops = plat_load64(&b->sums.loops);
	double ms = 0, msq = 0, us = 0, usq = 0;

	r->loops = loops;
	r->map_ns_min = r->unmap_ns_min = UINT64_MAX;
	for (unsigned i = 0; i < n; i++) {
		struct thread_sums *t = &b->ts[i];

		ms += t->map_ns;
		msq += t->map_sq;
		us += t->unmap_ns;
		usq += t->unmap_sq;
		r->map_errors += t->errors;
		if (t->loops) {
			r->map_ns_min = t->map_min < r->map_ns_min ? t->map_min : r->map_ns_min;
			r->unmap_ns_min = t->unmap_min < r->unmap_ns_min ? t->unmap_min
									 : r->unmap_ns_min;
			r->map_ns_max = t->map_max > r->map_ns_max ? t->map_max : r->map_ns_max;
			r->unmap_ns_max = t->unmap_max > r->unmap_ns_max ? t->unmap_max
									 : r->unmap_ns_max;
		}
	}
	if (!loops) {
		r->map_ns_min = r->unmap_ns_min = 0;
		return;
	}
	/* The kernel: avg = sum / loops; stddev = int_sqrt(sum_sq / loops - avg^2). */
	r->avg_map_100ns = plat_load64(&b->sums.sum_map_100ns) / loops;
	r->avg_unmap_100ns = plat_load64(&b->sums.sum_unmap_100ns) / loops;
	r->map_stddev_100ns = int_sqrt64(plat_load64(&b->sums.sum_sq_map) / loops -
					 r->avg_map_100ns * r->avg_map_100ns);
	r->unmap_stddev_100ns = int_sqrt64(plat_load64(&b->sums.sum_sq_unmap) / loops -
					   r->avg_unmap_100ns * r->avg_unmap_100ns);
	r->map_ns = ms / (double)loops;
	r->unmap_ns = us / (double)loops;
	r->map_stddev_ns = stddev(ms, msq, loops);
	r->unmap_stddev_ns = stddev(us, usq, loops);
}

int ilab_map_bench_run(struct ilab_dev *dev, struct ilab_mem *mem,
		       const struct ilab_map_bench_cfg *cfg, struct ilab_map_bench_result *res,
		       char *err, size_t errlen)
{
	struct bench *b;
	int *cpus, ret;
	unsigned saved_bits, alloc_failed = 0;
	uint64_t t0;

	if (!dev || !mem || !res) {
		snprintf(err, errlen, "no device, memory or result");
		return -EINVAL;
	}
	ret = ilab_map_bench_check(cfg, err, errlen);
	if (ret)
		return ret;
	*res = (struct ilab_map_bench_result){ 0 };
	b = plat_zalloc_array(1, sizeof(*b));
	cpus = plat_zalloc_array(cfg->threads, sizeof(*cpus));
	if (!b || !cpus) {
		free(b);
		free(cpus);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->ts = plat_zalloc_array(cfg->threads, sizeof(*b->ts));
	if (!b->ts) {
		free(b);
		free(cpus);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->dev = dev;
	b->mem = mem;
	b->cfg = cfg;
	b->duration_ns = cfg->duration_ns ? cfg->duration_ns : cfg->seconds * 1000000000ull;
	plat_track(&b->sums, "map_benchmark.sums");
	/* kthread_create_on_node + bind to cpumask_of_node: here thread i is the node's i-th CPU */
	for (unsigned i = 0; i < cfg->threads; i++)
		cpus[i] = cfg->node >= 0 ? plat_node_cpu((unsigned)cfg->node, i) : (int)i;

	/* The kernel sets the DMA mask to dma_bits for the run and restores it afterwards. */
	saved_bits = dev->dma_bits;
	dev->dma_bits = cfg->dma_bits;
	t0 = plat_now_ns();
	ret = plat_run_threads(cfg->threads, cpus, bench_thread, b);
	res->elapsed_ns = plat_now_ns() - t0;
	dev->dma_bits = saved_bits;
	if (ret) {
		snprintf(err, errlen, "cannot run %u threads (%d)", cfg->threads, ret);
	} else {
		for (unsigned i = 0; i < cfg->threads; i++)
			alloc_failed += b->ts[i].alloc_failed;
		combine(b, cfg->threads, res);
		if (alloc_failed) {
			snprintf(err, errlen, "%u threads could not allocate their buffer",
				 alloc_failed);
			ret = -ENOMEM;
		} else if (!res->loops) {
			snprintf(err, errlen, "every map failed: %s", b->ts[0].first_error);
			ret = -EIO;
		}
	}
	free(b->ts);
	free(b);
	free(cpus);
	return ret;
}

void ilab_map_bench_print_tool(FILE *f, const struct ilab_map_bench_cfg *c,
			       const struct ilab_map_bench_result *r)
{
	fprintf(f, "dma mapping mode: %s\n",
		c->mode == ILAB_MAP_BENCH_SG ? "DMA_MAP_BENCH_SG_MODE" : "DMA_MAP_BENCH_SINGLE_MODE");
	/* The tool's header names how long the run was; a run by iterations or by a short
	 * duration says that, not the default -s it did not use. */
	fprintf(f, "dma mapping benchmark: threads:%u ", c->threads);
	if (c->iterations)
		fprintf(f, "iterations:%llu", (unsigned long long)c->iterations);
	else if (c->duration_ns)
		fprintf(f, "seconds:%g", (double)c->duration_ns / 1e9);
	else
		fprintf(f, "seconds:%u", c->seconds);
	fprintf(f, " node:%d dir:%s granule: %u\n", c->node, ilab_dma_dir_name(c->dir), c->granule);
	fprintf(f, "average map latency(us):%.1f standard deviation:%.1f\n",
		r->avg_map_100ns / 10.0, r->map_stddev_100ns / 10.0);
	fprintf(f, "average unmap latency(us):%.1f standard deviation:%.1f\n",
		r->avg_unmap_100ns / 10.0, r->unmap_stddev_100ns / 10.0);
}
