/* allreduce.h — seed 004's workload: an NCCL-style ring allreduce whose inter-host traffic is
 * carried by NICs doing GPUDirect RDMA through their IOMMU with ATS, under VFIO type1 with one
 * shared domain or one domain per node (docs/experiments.md "seed 004").
 * It is not the DMA engine (dma_engine.h) nor VFIO (vfio.h): it builds the machine, attaches
 * the devices, maps the buffers and runs the engines in the simulator.
 */
#ifndef IOMMULAB_ALLREDUCE_H
#define IOMMULAB_ALLREDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ilab_kernel_era;

struct ilab_allreduce_cfg {
	const char *profile;        /* profile name or file; its topology is the machine */
	uint64_t seed;              /* the simulator's seed (0 = 1) */
	unsigned first_node, nr_nodes;        /* nodes whose devices take part */
	unsigned gpus_per_node, nics_per_node; /* equal: one GPU per NIC */
	int pgtable_node;           /* shared domain: where its page table is forced */
	bool attach_group_by_node;  /* VFIO: one domain per node (seed 004's patch) */
	int intel_nid_policy;       /* VT-d machines: the Intel driver's enum
				     * ilab_intel_nid_policy (0: Linux 6.3's); else must be 0 */
	bool cma_pernuma;           /* coherent memory (queues, tables) per node, else node 0 */
	double message_bytes;       /* S */
	unsigned iterations;        /* allreduces run back to back; algbw is their mean */
	unsigned hosts;             /* identical hosts in the ring (ranks = hosts x NICs) */
	uint64_t buffer_bytes;      /* buffer each NIC direction streams through */
	uint64_t iommu_page_bytes;  /* the buffers' IOMMU leaves: 4096 (0: the same) or 2 MiB */
	const struct ilab_kernel_era *kernel; /* the SMMUv3 driver's era; NULL: today's */
};

struct ilab_allreduce_result {
	double algbw;               /* GB/s: S / time of one allreduce */
	double time_ns;             /* of one allreduce (mean) */
	unsigned engines;           /* NIC DMA directions */
	uint64_t pages, atc_hits, ats_requests, ats_refused, ats_mean_ns;
};

/* Build the machine, run the allreduce, tear down. Returns 0 or a negative errno with err. */
int ilab_allreduce_measure(const struct ilab_allreduce_cfg *cfg, struct ilab_allreduce_result *out,
			   char *err, size_t errlen);

/* The scenario runner's entry (struct ilab_workload.run) for workload "allreduce": adds the
 * figure "algbw" (GB/s) and statistics (stats_json). Needs engine: sim. */
struct ilab_scenario;
struct ilab_case;
struct ilab_case_result;
int ilab_allreduce_run(const struct ilab_scenario *s, const struct ilab_case *c,
		       struct ilab_case_result *r, char *err, size_t errlen);
/* Its struct ilab_workload.check: the nodes first_node .. first_node + nr_nodes - 1 exist. */
struct ilab_topo;
int ilab_allreduce_check(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			 size_t msglen);
/* Its struct ilab_workload.check_profile: the profile's nic: section has the NICs' ATS model
 * (payload_mbps, ats_round_trip_ns, ats_outstanding, atc_entries, atc_ways). 0 or -EINVAL. */
struct ilab_profile;
int ilab_allreduce_check_profile(const struct ilab_profile *p, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_ALLREDUCE_H */
