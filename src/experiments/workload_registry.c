/* workload_registry.c — the table of workloads a scenario can name: their parameters (with
 * defaults and ranges, which the scenario parser enforces) and the metrics they report.
 * It is not the workloads' code: each entry's run() lives in src/workloads/ or
 * seed_sim_workloads.c; an entry without one would use not_implemented (-ENOSYS), for which
 * the report says which issue it waits for.
 */
#include <errno.h>
#include <string.h>

#include "iommulab/allreduce.h"
#include "iommulab/netperf.h"
#include "iommulab/nic.h"
#include "iommulab/nvme.h"
#include "iommulab/scenario.h"
#include "experiments/case_checks.h" /* every built-in workload's check */
#include "experiments/sim_env.h" /* cmdsync_latency, dma_map_benchmark */

/* Placeholder until the stack can run the workload (issue 4: the DMA stack; issue 6: the
 * simulator). Measuring nothing is the honest answer. */
static int __attribute__((unused)) not_implemented(const struct ilab_scenario *s, const struct ilab_case *c,
			   struct ilab_case_result *r, char *err, size_t errlen)
{
	(void)s, (void)c, (void)r, (void)err, (void)errlen;
	return -ENOSYS;
}

#define NODE_MAX 63.0
#define ITER_MAX 1e9

/* seed 000: one CPU sends CMD_SYNC into an empty command queue and waits for completion. */
static const struct ilab_workload_param cmdsync_params[] = {
	{ "smmu_node", 2, 0, NODE_MAX, true, "node of the SMMU whose queue is used (seed: node 2)", true },
	{ "cpu_node", 2, 0, NODE_MAX, true, "node of the CPU issuing the CMD_SYNC", true },
	{ "global_cma_node", 0, 0, NODE_MAX, true, "node of the one global CMA area (cma: global)", true },
	{ "iterations", 10000, 1, ITER_MAX, true, "CMD_SYNCs measured (one at a time)", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric cmdsync_metrics[] = {
	{ "cmdsync_wait", "ns", "mean time from the producer-index write to the sync completion" },
	{ "cmdq_node", "node", "node of the command queue's memory" },
	{ NULL, NULL, NULL },
};

/* seed 001: NIC receive of small packets by many processes; every packet mapped and unmapped.
 * The NIC's rates and the network stack's costs are not parameters: they are the machine
 * profile's nic: section, the same for every experiment on the machine (seed 003 too). */
static const struct ilab_workload_param nic_rx_params[] = {
	{ "processes", 128, 1, 1024, true, "receiving processes, one NIC queue and CPU each", false },
	{ "packet_bytes", 64, 64, 65536, true, "IP packet size (small packets)", false },
	{ "duration_us", 20000, 1, 1e7, false, "simulated time measured, µs (after the warm-up)", false },
	{ "warmup_us", 2000, 0, 1e7, false, "simulated traffic before the measurement, µs", false },
	{ "nic_node", 2, 0, NODE_MAX, true, "node of the NIC (the NIC there is used)", true },
	{ "ring_size", 128, 2, 65536, true, "receive descriptors per queue", false },
	{ "cmdq_spinlock", 1, 0, 1, true, "1: Linux <= 5.3 spinlock command queue; 0: lock-free", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric nic_rx_metrics[] = {
	{ "rx_packets_per_s", "packets/s", "packets received per second, all processes" },
	{ NULL, NULL, NULL },
};

/* seed 002: kernel/dma/map_benchmark.c — threads map and unmap granule pages in a loop. */
static const struct ilab_workload_param dma_map_params[] = {
	{ "threads", 1, 1, 1024, true, "dma_map_benchmark -t", false },
	{ "granule", 1, 1, 1024, true, "dma_map_benchmark -g: 4 KiB pages per map", false },
	{ "iterations", 2000, 1, ITER_MAX, true, "map+unmap pairs per thread", false },
	{ "node", 0, 0, NODE_MAX, true, "node whose CPUs run the threads (dma_map_benchmark -n)", true },
	{ "smmu_node", 2, 0, NODE_MAX, true, "node of the SMMU the benchmark device sits behind", true },
	{ "global_cma_node", 0, 0, NODE_MAX, true, "node of the one global CMA area (cma: global)", true },
	{ "dma_trans_ns", 0, 0, 1e7, true, "dma_map_benchmark -x: delay between map and unmap, ns", false },
	{ "fq_size", 0, 0, 1 << 20, true, "lazy: flush-queue entries per ring (0: 256 per CPU, 32768 single)", false },
	{ "fq_timeout_ms", 0, 0, 60000, true, "lazy: flush-queue timeout, ms (0: 10 per CPU, 1000 single)", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric dma_map_metrics[] = {
	{ "map_latency", "us", "mean dma_map_single latency" },
	{ "unmap_latency", "us", "mean dma_unmap_single latency" },
	{ "map_ns", "ns", "mean map latency at ns resolution (not truncated)" },
	{ "unmap_ns", "ns", "mean unmap latency at ns resolution (not truncated)" },
	{ NULL, NULL, NULL },
};

/* seed 003: a 200 Gbit/s NIC receiving on several queues, each buffer mapped and unmapped. */
static const struct ilab_workload_param nic_tput_params[] = {
	{ "nic_queues", 8, 1, 256, true, "NIC queues, one CPU each", false },
	{ "packet_bytes", 1500, 64, 65536, true, "IP packet size (MTU)", false },
	{ "frames_per_buffer", 1, 1, 4096, true, "frames per receive buffer (LRO/GRO), one map each", false },
	{ "duration_us", 2000, 1, 1e7, false, "simulated time measured, µs (after the warm-up)", false },
	{ "warmup_us", 200, 0, 1e7, false, "simulated traffic before the measurement, µs", false },
	{ "nic_node", 2, 0, NODE_MAX, true, "node of the NIC (the NIC there is used)", true },
	{ "ring_size", 64, 2, 65536, true, "receive descriptors per queue", false },
	{ "ecmdq_hw", 1, 0, 1, true, "1: the SMMU has one ECMDQ per CPU, executed serially", false },
	{ "cmdq_spinlock", 0, 0, 1, true, "1: Linux <= 5.3 spinlock command queue; 0: lock-free", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric nic_tput_metrics[] = {
	{ "throughput", "Gbit/s", "received payload rate" },
	{ NULL, NULL, NULL },
};

/* seed 004: NCCL-style ring allreduce between GPUs through NICs with ATS, under VFIO. */
static const struct ilab_workload_param allreduce_params[] = {
	{ "first_node", 0, 0, NODE_MAX, true, "first node whose GPUs and NICs take part", true },
	{ "nr_nodes", 1, 1, 64, true, "consecutive nodes taking part", false },
	{ "gpus_per_node", 4, 1, 64, true, "GPUs used on each node", false },
	{ "nics_per_node", 4, 1, 64, true, "NICs used on each node", false },
	{ "pgtable_node", 1, 0, NODE_MAX, true, "node of the one shared domain's page table", true },
	{ "message_bytes", 1 << 28, 4096, 1e12, true, "allreduce size", false },
	{ "iterations", 5, 1, 1e6, true, "allreduces measured", false },
	{ "hosts", 2, 1, 64, true, "identical hosts in the ring (ranks = hosts x NICs used)", false },
	{ "buffer_bytes", 16 << 20, 4096, 1ull << 34, true,
	  "registered buffer each NIC DMA direction streams through (NCCL staging buffers)", false },
	{ "iommu_page_bytes", 4096, 4096, 2 << 20, true,
	  "the buffers' IOMMU leaves: 4096 (4 KiB-backed, 1 MiB map calls) or 2097152 "
	  "(2 MiB-contiguous backing, one map call)", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric allreduce_metrics[] = {
	{ "algbw", "GB/s", "NCCL algorithm bandwidth: bytes / time per allreduce" },
	{ NULL, NULL, NULL },
};

/* fio on the machine's NVMe: numjobs jobs, one CPU and one queue pair each (the IOMMU mode is
 * the case's mechanisms: mode). Scenario parameters are numbers: rw is fio's rw= as a code.
 * The drive's and the block stack's constants are the profile's nvme: section. */
static const struct ilab_workload_param fio_params[] = {
	{ "numjobs", 8, 1, ILAB_NVME_MAX_JOBS, true, "fio numjobs: jobs, one CPU and queue pair each", false },
	{ "iodepth", 32, 1, 1023, true, "fio iodepth: I/Os in flight per job", false },
	{ "bs", 4096, 512, ILAB_NVME_MAX_BS, true, "fio bs: bytes per I/O (a multiple of 512)", false },
	{ "rw", 0, 0, 3, true, "fio rw: 0 randread, 1 randwrite, 2 read, 3 write", false },
	{ "runtime_us", 20000, 1, 1e7, false, "fio runtime: simulated time measured, µs", false },
	{ "ramp_us", 1000, 0, 1e7, false, "fio ramp_time: simulated I/O before the measurement, µs", false },
	{ "irq_cpu", -1, -1, 65535, true, "CPU every queue's interrupt is affine to (-1: each queue's own vector, on its submitter)", false },
	{ "queues", 0, 0, 65535, true, "I/O queues the drive grants (0: one per CPU); fewer share vectors over groups of CPUs", false },
	{ "rq_affinity", 1, 0, 2, true, "the block queue's rq_affinity: where completion work runs when the interrupt is on another CPU", false },
	{ "hipri", 0, 0, 1, true, "1: polled queues (io_uring hipri): no interrupt, the submitter polls", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric fio_metrics[] = {
	{ "iops", "IOPS", "I/Os completed per second, all jobs" },
	{ "bw", "MB/s", "bytes moved per second (10^6), all jobs" },
	{ "clat_p50", "us", "completion latency, 50th percentile (submission to reap)" },
	{ "clat_p99", "us", "completion latency, 99th percentile" },
	{ "clat_p999", "us", "completion latency, 99.9th percentile" },
	{ "irq_cpu_busy", "%", "busy time of the busiest interrupt CPU that runs no job (0: none)" },
	{ "iova_depot_max", "magazines", "most full IOVA magazines the domain's depot held (any size class)" },
	{ NULL, NULL, NULL },
};

/* netperf on the machine's NIC: one queue pair and CPU per stream (the IOMMU mode is the
 * case's mechanisms: mode). test is netperf's -t as a code. The NIC's, the wire's and the
 * stacks' constants are the profile's nic: section. */
static const struct ilab_workload_param netperf_params[] = {
	{ "test", 0, 0, 5, true, "netperf -t: 0 TCP_STREAM (send), 1 TCP_MAERTS (receive), 2 TCP_RR, 3 UDP_STREAM, 4 UDP_RR, 5 TCP_CRR", false },
	{ "queues", 1, 1, ILAB_NETPERF_MAX_QUEUES, true, "streams, one NIC queue pair and CPU each", false },
	{ "send_bytes", 16384, 1, ILAB_NETPERF_MAX_MSG, true, "STREAM/MAERTS: bytes per send (netperf -m)", false },
	{ "req_bytes", 1, 1, ILAB_NETPERF_TSO_BYTES, true, "RR: request size (netperf -r req,rsp)", false },
	{ "rsp_bytes", 1, 1, ILAB_NETPERF_TSO_BYTES, true, "RR: response size", false },
	{ "ring_size", 64, 2, 4096, true, "TX descriptors and RX buffers per queue", false },
	{ "duration_us", 2000, 1, 1e7, false, "netperf -l: simulated time measured, µs", false },
	{ "warmup_us", 200, 0, 1e7, false, "simulated traffic before the measurement, µs", false },
	{ "nic_node", 2, 0, NODE_MAX, true, "use the NIC on this node (else the machine's first)", false },
	{ "channels", 0, 0, 4096, true, "the NIC's channels (0: the profile's nic.queues)", false },
	{ "irq_shift", 0, 0, 4095, true, "each channel's interrupt this many CPUs on", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric netperf_metrics[] = {
	{ "throughput", "Gbit/s", "STREAM/MAERTS: payload delivered per second, all streams" },
	{ "tps", "transactions/s", "RR: transactions per second, all streams" },
	{ "lat_p50", "us", "RR: transaction latency, 50th percentile" },
	{ "lat_p99", "us", "RR: transaction latency, 99th percentile" },
	{ NULL, NULL, NULL },
};

static const struct ilab_workload builtin[] = {
	{ "cmdsync_latency", ilab_workload_cmdsync_run,
	  "latency of one CMD_SYNC into an empty command queue", NULL, cmdsync_params,
	  cmdsync_metrics, true, ilab_case_check_cmdsync, NULL },
	{ "nic_rx", ilab_workload_nic_rx, "NIC receive of small packets, each mapped and unmapped",
	  NULL, nic_rx_params, nic_rx_metrics, true, ilab_case_check_nic_rx,
	  ilab_workload_nic_check_profile },
	{ "dma_map_benchmark", ilab_workload_map_bench_run, "dma_map_benchmark: map/unmap latency",
	  NULL, dma_map_params, dma_map_metrics, true, ilab_case_check_map_bench, NULL },
	{ "nic_throughput", ilab_workload_nic_throughput,
	  "200 Gbit/s NIC throughput by number of queues", NULL, nic_tput_params,
	  nic_tput_metrics, true, ilab_case_check_nic_throughput, ilab_workload_nic_check_profile },
	{ "allreduce", ilab_allreduce_run, "NCCL-style allreduce over GPUs and NICs with ATS",
	  NULL, allreduce_params, allreduce_metrics, true, ilab_case_check_allreduce,
	  ilab_allreduce_check_profile },
	{ "fio", ilab_workload_fio, "fio on the machine's NVMe: IOPS and completion latency",
	  NULL, fio_params, fio_metrics, true, ilab_case_check_fio,
	  ilab_workload_fio_check_profile },
	{ "netperf", ilab_workload_netperf,
	  "netperf on the machine's NIC: TCP_STREAM/MAERTS throughput, TCP_RR latency", NULL,
	  netperf_params, netperf_metrics, true, ilab_case_check_netperf,
	  ilab_workload_netperf_check_profile },
};

#define NR_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))
#define MAX_REGISTERED 16

/* Registered at run time (tests, later plug-ins); the CLI is single-threaded when it does. */
static const struct ilab_workload *registered[MAX_REGISTERED];
static size_t nr_registered;

const struct ilab_workload *ilab_workload_at(size_t i)
{
	if (i < NR_BUILTIN)
		return &builtin[i];
	i -= NR_BUILTIN;
	return i < nr_registered ? registered[i] : NULL;
}

const struct ilab_workload *ilab_workload_find(const char *name)
{
	const struct ilab_workload *w;

	for (size_t i = 0; name && (w = ilab_workload_at(i)) != NULL; i++)
		if (strcmp(w->name, name) == 0)
			return w;
	return NULL;
}

int ilab_workload_register(const struct ilab_workload *w)
{
	if (!w || !w->name || !*w->name || !w->run)
		return -EINVAL;
	if (ilab_workload_find(w->name))
		return -EEXIST;
	if (nr_registered == MAX_REGISTERED)
		return -ENOSPC;
	registered[nr_registered++] = w;
	return 0;
}

const struct ilab_workload_param *ilab_workload_param_find(const struct ilab_workload *w,
							   const char *name)
{
	for (const struct ilab_workload_param *p = w && w->params ? w->params : NULL; p && p->name;
	     p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

const struct ilab_workload_metric *ilab_workload_metric_find(const struct ilab_workload *w,
							     const char *name)
{
	for (const struct ilab_workload_metric *m = w && w->metrics ? w->metrics : NULL;
	     m && m->name; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}
