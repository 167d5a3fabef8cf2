/* testbed.h — the modelled machine an experiment runs on, assembled in one place: topology ->
 * simulator (from a loaded machine profile) -> plat -> board (IOMMU units of the profile's
 * architecture, `iommu: smmuv3|vtd`; SMMUv3 models configured and costed from the profile's
 * smmu: section, CMA placement, optional ECMDQs) -> unit agents started -> each unit's driver
 * probed; and torn down in reverse. Natively (opts.native) the same
 * without a simulator: real threads, bound to host PUs.
 *
 * It stops at the board: which device to use, its domain type and its dma-iommu options are
 * the caller's (ilab_testbed_dev finds a board device by its topology name).
 *
 *   struct ilab_testbed tb = { 0 };
 *   struct ilab_testbed_opts o = { .profile = &prof, .seed = 1, .cma = ILAB_CMA_GLOBAL };
 *
 *   ret = ilab_testbed_load_topology(&tb, &o, err, errlen);  (only to choose SMMUs first)
 *   o.smmu_mask = 1ull << ilab_topo_find_device(tb.topo, "nic0")->smmu;
 *   ret = ret ? ret : ilab_testbed_up(&tb, &o, err, errlen);
 *   ... ilab_iommu_probe_device(ilab_testbed_dev(&tb, "nic0"), ...) ...
 *   ilab_testbed_down(&tb);  (after the caller released its devices; safe after any failure)
 *
 * Not a workload and not the scenario runner: the seed workloads (src/experiments/sim_env.c,
 * src/workloads/nic_env.c, allreduce.c), `iommulab bench` and bench_sim_dma use it.
 */
#ifndef IOMMULAB_TESTBED_H
#define IOMMULAB_TESTBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/board.h>
#include <iommulab/sim.h>
#include <iommulab/intel_iommu_drv.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ilab_testbed_opts {
	bool native;                        /* real threads, no simulator (iommulab bench's
					     * default engine); else simulated */
	const struct ilab_profile *profile; /* loaded by the caller, outlives the testbed;
					     * required in simulation. Its smmu: section
					     * configures the models in either engine */
	const char *topology;               /* topology spec; NULL = the profile's */
	const char *iommu_arch;             /* every unit's architecture ("smmuv3", "vtd");
					     * NULL = the profile's iommu:, else the
					     * topology's (natively without a profile) */
	uint64_t seed;                      /* the simulator's, and the SMMU caches' RANDOM
					     * replacement policy's */
	enum ilab_sim_lookahead lookahead;  /* the simulator's (0 = its default) */
	union {                             /* which topology IOMMU units get a model, an
					     * agent and a driver: bit i = unit i; 0 = all */
		uint64_t iommu_mask;
		uint64_t smmu_mask;         /* its older name */
	};
	enum ilab_cma_mode cma;             /* coherent memory placement */
	int cma_global_node;                /* node of the global area (Linux: 0) */
	bool ecmdq_per_cpu;                 /* SMMUv3.3 with one ECMDQ per CPU (the CPU count
					     * rounded up to a power of two, at most 1024),
					     * consumed one queue at a time (seed 003) */
	unsigned process_batch;             /* board: commands per model call; 0 = its default */
	struct ilab_smmu_drv_opts drv;      /* SMMUv3 driver probe options (zero: Linux's).
					     * drv.cmdqv: the profile's smmu.cmdqv_* give the
					     * SMMUs a Tegra241 CMDQV (not with ecmdq_per_cpu);
					     * ON without one, or with ecmdq_per_cpu, is -EINVAL */
	struct ilab_intel_iommu_opts vtd_drv; /* VT-d driver probe options (zero: Linux 6.3's) */
	bool no_driver;                     /* build and start the machine, probe no driver: for
					     * tests that drive a model's registers directly */
};

/* What an assembled testbed holds. Zero-initialise it before the first call. */
struct ilab_testbed {
	const struct ilab_profile *profile; /* opts.profile (NULL natively without one) */
	struct ilab_topo *topo;
	struct ilab_sim *sim;               /* NULL natively */
	struct ilab_board *board;
	bool plat_up;                       /* plat_init succeeded: down calls plat_fini */
};

/* Stage one, for callers that choose SMMUs (smmu_mask) from the topology: load opts.topology
 * (else the profile's) into tb->topo. Returns 0, or a negative errno with a one-line cause in
 * err ("topology: ..."). Calling it again once loaded does nothing. */
int ilab_testbed_load_topology(struct ilab_testbed *tb, const struct ilab_testbed_opts *o,
			       char *err, size_t errlen);

/* Everything else (and stage one if not done): simulator, plat, board, agents, driver probe.
 * The simulator is active and plat is up until ilab_testbed_down. Returns 0, or a negative
 * errno with a one-line cause in err (-EINVAL: bad options or profile values; the stages
 * already done stay, for ilab_testbed_down to undo). */
int ilab_testbed_up(struct ilab_testbed *tb, const struct ilab_testbed_opts *o, char *err,
		    size_t errlen);

/* Undo whatever was set up, in reverse; tb is zeroed. Devices the caller probed must have been
 * released (ilab_iommu_release_device) first. A zeroed or partly set-up tb is fine. */
void ilab_testbed_down(struct ilab_testbed *tb);

/* The board options and SMMU model configuration ilab_testbed_up uses, for tests that build a
 * board by hand but want the profile's machine: the single place where the profile's iommu:
 * key and smmu: section become board options (bo->iommu_arch points into the profile).
 * bo->smmu_cfg points at *scfg. topo sizes the ECMDQs (may be NULL without ecmdq_per_cpu). */
void ilab_testbed_board_opts(const struct ilab_testbed_opts *o, const struct ilab_topo *topo,
			     struct ilab_board_opts *bo, struct smmu_config *scfg);

/* The board's device of that topology name, or NULL. */
struct ilab_dev *ilab_testbed_dev(struct ilab_testbed *tb, const char *name);

/* The simulator's last error (deadlock report, time limit), "" natively or when none: for
 * callers' messages after a failed run. */
const char *ilab_testbed_sim_error(const struct ilab_testbed *tb);

/* The run's statistics as JSON text (malloc'd; NULL natively or without memory): the
 * simulator's (ilab_sim_json: per CPU, agent, line, lock, distribution) with every modelled
 * unit's under "iommus", keyed by the unit's name: smmu2, dmar0 (ilab_board_iommus_json).
 * Call it after the run, before ilab_testbed_down. */
char *ilab_testbed_stats_json(const struct ilab_testbed *tb);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_TESTBED_H */
