/* map_benchmark.h — the dma_map_benchmark experiment (Linux kernel/dma/map_benchmark.c and
 * tools/dma/dma_map_benchmark.c): N threads bound to a node's CPUs map and unmap a buffer in a
 * loop for some seconds; the average and standard deviation of map and unmap latency.
 * It is not a device driver nor the CLI (tools/cmd_bench.c): it drives the DMA API
 * (dma_iommu.h) of a device that the caller has probed and configured.
 *
 * Results come twice: exactly as the kernel computes them (each sample truncated to whole
 * 100 ns units before it is summed, integer average, integer square root of the variance), so
 * they compare with published tables, and at nanosecond resolution.
 */
#ifndef IOMMULAB_MAP_BENCHMARK_H
#define IOMMULAB_MAP_BENCHMARK_H

#include <stdint.h>
#include <stdio.h>

#include <iommulab/dma_iommu.h>
#include <iommulab/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits (include/linux/map_benchmark.h and the tool's checks). */
#define ILAB_MAP_BENCH_MAX_THREADS 1024u
#define ILAB_MAP_BENCH_MAX_SECONDS 300u
#define ILAB_MAP_BENCH_MAX_TRANS_NS (10u * 1000 * 1000)
#define ILAB_MAP_BENCH_MAX_GRANULE 1024u

enum ilab_map_bench_mode {
	ILAB_MAP_BENCH_SINGLE = 0, /* dma_map_single of granule pages */
	ILAB_MAP_BENCH_SG = 1,     /* dma_map_sg of granule one-page entries */
};

struct ilab_map_bench_cfg {
	unsigned threads;         /* -t, 1..1024 (default 1) */
	unsigned seconds;         /* -s, 1..300 (default 20) */
	uint64_t duration_ns;     /* if > 0, run this long instead of `seconds` (short runs) */
	uint64_t iterations;      /* if > 0, each thread does exactly this many map+unmap
				   * iterations instead (the time options are then ignored) */
	uint64_t warmup;          /* map+unmap pairs each thread does first, not measured (the
				   * first map allocates page tables; a 20 s kernel run amortises
				   * that, a short simulated run must skip it) */
	int node;                 /* -n, -1 (NUMA_NO_NODE) or a node: threads bound to its CPUs */
	unsigned dma_bits;        /* -b, 20..64 (default 32): the device's mask for the run */
	enum ilab_dma_dir dir;    /* -d, 0 bidirectional, 1 to device, 2 from device */
	unsigned dma_trans_ns;    /* -x, 0..10 ms: pretend DMA between map and unmap */
	unsigned granule;         /* -g, 1..1024 pages */
	enum ilab_map_bench_mode mode; /* -m */
};
void ilab_map_bench_cfg_default(struct ilab_map_bench_cfg *cfg);

struct ilab_map_bench_result {
	uint64_t loops;
	/* the kernel's figures, in 100 ns units */
	uint64_t avg_map_100ns, map_stddev_100ns, avg_unmap_100ns, unmap_stddev_100ns;
	/* nanosecond resolution (population standard deviation) */
	double map_ns, map_stddev_ns, unmap_ns, unmap_stddev_ns;
	uint64_t map_ns_min, map_ns_max, unmap_ns_min, unmap_ns_max;
	uint64_t map_errors;      /* threads whose map failed: each stops at its first failure,
				   * as the kernel's do (not counted in loops) */
	uint64_t elapsed_ns;      /* wall (or virtual) time of the whole run: the threads' start,
				   * buffer allocation and warm-up included */
};

/* Check a configuration against the limits above and the machine (node, CPUs of the node).
 * Returns 0 or -EINVAL with a one-line cause in err. */
int ilab_map_bench_check(const struct ilab_map_bench_cfg *cfg, char *err, size_t errlen);

/* Run the experiment on dev (probed, DMA API set up), buffers from mem on each thread's node.
 * plat must be initialised. Returns 0, -EINVAL (bad cfg, see err), -ENOMEM, or the error of
 * plat_run_threads; a run where every map failed is -EIO. */
int ilab_map_bench_run(struct ilab_dev *dev, struct ilab_mem *mem,
		       const struct ilab_map_bench_cfg *cfg, struct ilab_map_bench_result *res,
		       char *err, size_t errlen);

/* The tool's output: the mode line, the configuration line and the two result lines in µs
 * ("average map latency(us):%.1f standard deviation:%.1f"), from the 100 ns figures. */
void ilab_map_bench_print_tool(FILE *f, const struct ilab_map_bench_cfg *cfg,
			       const struct ilab_map_bench_result *res);

const char *ilab_dma_dir_name(enum ilab_dma_dir dir);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_MAP_BENCHMARK_H */
