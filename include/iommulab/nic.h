/* nic.h — a receive-only NIC device model for the DMA experiments (seeds 001 and 003): one
 * receive ring per NIC queue, filled by the NIC at its line rate through the board's SMMU, and
 * the driver side on one CPU per queue (unmap the filled buffer, the network stack's cost, map a
 * fresh buffer, post it back). Plus the two scenario workloads built on it.
 * It is not a network stack, not a packet format and not an Ethernet MAC: frames are bytes with
 * a wire size, and the stack is a compute charge per frame.
 */
#ifndef IOMMULAB_NIC_H
#define IOMMULAB_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Forward declarations only: users of the NIC model need neither the scenario nor the board
 * headers. */
struct ilab_board;
struct ilab_dev;
struct ilab_scenario;
struct ilab_case;
struct ilab_case_result;

#ifdef __cplusplus
extern "C" {
#endif

/* Ethernet framing: the wire carries header 14 + FCS 4 + preamble/SFD 8 + inter-frame gap 12
 * bytes beyond the IP packet; TCP goodput (what iperf reports) excludes IPv4 20 + TCP 20 +
 * timestamp option 12 bytes. 200 Gbit/s x 1448 / 1538 = 188.3 Gbit/s of goodput at MTU 1500. */
#define ILAB_NIC_WIRE_OVERHEAD 38u
#define ILAB_NIC_TCPIP_HEADERS 52u
#define ILAB_NIC_MAX_QUEUES 1024u

struct ilab_nic_cfg {
	unsigned queues;           /* receive queues, one CPU each (1..ILAB_NIC_MAX_QUEUES) */
	const int *cpus;           /* CPU of queue i; NULL: the NIC node's CPUs in order, then the
				    * other nodes' CPUs from CPU 0 up */
	double link_gbps;          /* line rate; 0 = no line limit */
	double max_mpps;           /* the NIC's own packet-rate limit (all queues); 0 = none */
	double max_buffers_mps;    /* receive buffers (completions) the NIC delivers, M/s, all
				    * queues; 0 = none. With frames_per_buffer > 1 (LRO) it limits
				    * the frame rate to max_buffers_mps x frames_per_buffer */
	unsigned packet_bytes;     /* IP packet (frame payload) size, >= 64 */
	unsigned frames_per_buffer;/* frames the NIC places in one receive buffer (LRO/GRO); 1 =
				    * one buffer, one map and one unmap per packet */
	unsigned ring_size;        /* descriptors per queue, >= 2 */
	/* CPU cost of the network stack per buffer: stack_ns per frame + stack_buffer_ns + the
	 * copy of its TCP payload (packet_bytes - 52 per frame) at copy_mbps MB/s (0: no copy
	 * cost), rounded to the ns as one charge */
	uint64_t stack_ns;
	uint64_t stack_buffer_ns;
	uint64_t copy_mbps;
	uint64_t duration_ns;      /* measured window, after the warm-up */
	uint64_t warmup_ns;        /* traffic before the window (not counted) */
	/* Per interval, when report_interval_ns: frames queue q finished in the window's i-th
	 * interval go to interval_frames[q * intervals + i] (zeroed by the caller) */
	uint64_t report_interval_ns;
	unsigned intervals;
	uint64_t *interval_frames;
};

struct ilab_nic_result {
	uint64_t frames_arrived;   /* frames on the wire, whole run */
	uint64_t frames_dropped;   /* arrived with no buffer posted */
	uint64_t frames;           /* frames the CPUs finished within the window */
	uint64_t buffers;          /* buffers the CPUs finished within the window */
	uint64_t window_ns;
	double pps;                /* frames / window */
	double goodput_gbps;       /* frames x (packet_bytes - 52) x 8 / window */
	double line_gbps;          /* goodput the line allows (0: no line limit) */
	uint64_t dma_faults;       /* NIC writes the SMMU aborted (a bug if non-zero) */
	uint64_t map_errors;
};

/* Run traffic on `dev` (a device of `board`, probed, its DMA options set) with plat threads on
 * the queues' CPUs and one plat agent per queue on the device's node. Returns 0, -EINVAL (bad
 * configuration; err says which), -ENOMEM, -EIO (DMA faults or map errors; err says how many),
 * or the error of plat_run_threads or plat_agent_start. */
int ilab_nic_run(struct ilab_board *board, struct ilab_dev *dev, const struct ilab_nic_cfg *cfg,
		 struct ilab_nic_result *res, char *err, size_t errlen);

/* The scenario workloads (src/experiments/workload_registry.c names them). */
int ilab_workload_nic_rx(const struct ilab_scenario *s, const struct ilab_case *c,
			 struct ilab_case_result *r, char *err, size_t errlen);
int ilab_workload_nic_throughput(const struct ilab_scenario *s, const struct ilab_case *c,
				 struct ilab_case_result *r, char *err, size_t errlen);
/* Their struct ilab_workload.check: a receive buffer (frames_per_buffer x packet_bytes) fits
 * the NIC's 4 MiB. The NIC's rates are the profile's, checked when it is loaded. */
struct ilab_topo;
int ilab_workload_nic_check(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			    size_t msglen);
/* Their struct ilab_workload.check_profile: the profile's nic: section has a receive stack. */
struct ilab_profile;
int ilab_workload_nic_check_profile(const struct ilab_profile *prof, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_NIC_H */
