/* sim_env_internal.h — what an assembled simulated machine holds (struct ilab_sim_env), for
 * the workloads that run on it (src/workloads/cmdsync.c). It is not an API: include it only
 * from files that may include board.h (not from scenario-side code: see sim_env.h).
 */
#ifndef ILAB_EXPERIMENTS_SIM_ENV_INTERNAL_H
#define ILAB_EXPERIMENTS_SIM_ENV_INTERNAL_H

#include <iommulab/board.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

struct ilab_sim_env {
	struct ilab_profile prof;
	struct ilab_testbed tb;   /* topology, simulator, plat, board: include/iommulab/testbed.h */
	unsigned smmu;            /* index of the SMMU used */
	struct ilab_iommu *iommu;
	struct ilab_dev *dev;
	bool dev_probed;
};

#endif /* ILAB_EXPERIMENTS_SIM_ENV_INTERNAL_H */
