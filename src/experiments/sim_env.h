/* sim_env.h — a simulated machine ready for an experiment, in one call: machine profile ->
 * topology -> simulator -> plat -> board (SMMU models with the profile's costs, CMA placement)
 * -> SMMUv3 driver probe -> one device probed and configured for DMA. It is not a workload:
 * the seed workloads (src/workloads/cmdsync.c, the dma_map_benchmark glue) use it.
 *
 * Free of the scenario and memory headers: the scenario runner's workload entries include
 * this header, and the code behind it includes board.h. Options are plain values.
 */
#ifndef ILAB_EXPERIMENTS_SIM_ENV_H
#define ILAB_EXPERIMENTS_SIM_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/kernel_era.h>

struct ilab_sim_env;

enum ilab_sim_env_mode { ILAB_ENV_STRICT = 0, ILAB_ENV_LAZY, ILAB_ENV_PASSTHROUGH };

struct ilab_sim_env_cfg {
	const char *profile;  /* profile name or file ("kunpeng920") */
	uint64_t seed;
	bool cma_pernuma;     /* coherent memory from the device's node; else one global area */
	int cma_global_node;  /* node of the global area (Linux: 0) */
	int smmu_node;        /* the device used sits behind the SMMU of this node */
	enum ilab_sim_env_mode mode;
	bool map_pages;       /* dma-iommu uses map_pages/unmap_pages */
	bool lookup_refcount; /* refcounted domain lookup (before seed 001's patch) */
	bool ecmdq;           /* the SMMU has one ECMDQ per CPU and the driver uses them */
	bool cmdqv;           /* the driver uses the machine's Tegra241 CMDQV (else it is off) */
	bool fq_single;       /* lazy: one flush queue for all CPUs (Linux >= 6.7 option) */
	unsigned fq_size;     /* lazy: entries per ring; 0 = the kind's (256 / 32768) */
	uint64_t fq_timeout_ns; /* lazy: 0 = the kind's (10 ms / 1 s) */
	bool iova_depot_fixed32; /* the <= 6.6 IOVA depot; else the list (>= 6.7) */
	bool cmdq_fair_lock;  /* SMMUv3 driver: the cmdq lock since the 2026 fairness change */
	/* The kernel's behaviours for the driver and dma-iommu (map_pages above wins);
	 * NULL: today's (kernel_era.h). */
	const struct ilab_kernel_era *kernel;
};

/* Build it. Returns 0 and *out, or a negative errno with a one-line cause in err (-EINVAL for
 * a bad profile or option). The simulator is active until ilab_sim_env_down. */
int ilab_sim_env_up(const struct ilab_sim_env_cfg *cfg, struct ilab_sim_env **out, char *err,
		    size_t errlen);
void ilab_sim_env_down(struct ilab_sim_env *e);

/* The simulator's statistics (JSON text, malloc'd) for a case result's "stats". */
char *ilab_sim_env_stats_json(struct ilab_sim_env *e);
/* Node of the SMMU used, and of its command queue's memory. */
int ilab_sim_env_smmu_node(const struct ilab_sim_env *e);
int ilab_sim_env_cmdq_node(const struct ilab_sim_env *e);

/* ---- the seed workloads on such a machine ------------------------------------------------- */

/* Seed 000: one CPU of cpu_node issues a CMD_SYNC into the empty command queue, `iterations`
 * times one after the other (after one warm-up). Mean wait, ns: from the CPU's write of
 * CMDQ_PROD to its seeing the completion (the driver's sync_wait). */
int ilab_cmdsync_run(struct ilab_sim_env *e, int cpu_node, uint64_t iterations, double *wait_ns,
		     char *err, size_t errlen);

/* Seed 002: dma_map_benchmark (threads bound to node's CPUs, granule pages per map,
 * `iterations` map+unmap pairs each). Figures as the tool prints them (µs, each sample cut to
 * whole 100 ns before averaging) and at ns resolution. */
struct ilab_sim_env_map_result {
	double map_us, unmap_us;       /* the tool's figures */
	double map_ns, unmap_ns;       /* means, ns */
	uint64_t cmpxchg_retries, issues;
};
int ilab_sim_env_map_bench(struct ilab_sim_env *e, unsigned threads, unsigned granule,
			   uint64_t iterations, int node, unsigned dma_trans_ns,
			   struct ilab_sim_env_map_result *r, char *err, size_t errlen);



/* ---- the scenario runner's entries (src/experiments/seed_sim_workloads.c) ------------------ */

struct ilab_scenario;
struct ilab_case;
struct ilab_case_result;
/* workload "cmdsync_latency" (seed 000) and "dma_map_benchmark" (seed 002), in simulation */
int ilab_workload_cmdsync_run(const struct ilab_scenario *s, const struct ilab_case *c,
			      struct ilab_case_result *r, char *err, size_t errlen);
int ilab_workload_map_bench_run(const struct ilab_scenario *s, const struct ilab_case *c,
				struct ilab_case_result *r, char *err, size_t errlen);
/* its struct ilab_workload.check: no more threads than the node has CPUs */
int ilab_workload_map_bench_check(const struct ilab_case *c, const struct ilab_topo *topo,
				  char *msg, size_t msglen);

#endif /* ILAB_EXPERIMENTS_SIM_ENV_H */
