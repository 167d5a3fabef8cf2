/* cmdsync.c — seed 000's measurement: one CPU sends a CMD_SYNC into an empty command queue and
 * waits for its completion, again and again, one at a time. It is not the driver's insertion
 * code (arm-smmu-v3-cmdq.c) nor the machine's assembly (src/experiments/sim_env.c).
 *
 * What is timed is what the post describes ("after sending a CMD_SYNC in an empty command
 * queue, we have to wait ... for the completion"): the driver's wait, from its write of
 * CMDQ_PROD to its seeing the MSI over the CMD_SYNC's slot (its sync_wait statistic), averaged
 * over the iterations. One unmeasured CMD_SYNC first brings the queue's shared words into the
 * CPU's cache, as on a machine that has been issuing commands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/board.h>
#include <iommulab/plat.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>

#include "experiments/sim_env.h"
#include "experiments/sim_env_internal.h"
#include "util/errf.h"

struct cmdsync_run {
	struct ilab_iommu *iommu;
	struct smmu *model;
	uint64_t iterations;
	int ret;
};

static void cmdsync_thread(unsigned idx, void *arg)
{
	struct cmdsync_run *r = arg;

	(void)idx;
	r->ret = ilab_smmu_drv_issue_cmds(r->iommu, NULL, 0, true); /* warm-up */
	if (r->ret)
		return;
	/* the driver's and the model's counters then cover the measured syncs alone (the model's
	 * are host-side counters: clearing them costs no simulated time) */
	ilab_smmu_drv_clear_stats(r->iommu);
	if (r->model)
		smmu_clear_stats(r->model);
	for (uint64_t i = 0; i < r->iterations && !r->ret; i++)
		r->ret = ilab_smmu_drv_issue_cmds(r->iommu, NULL, 0, true);
}

int ilab_cmdsync_run(struct ilab_sim_env *e, int cpu_node, uint64_t iterations, double *wait_ns,
		     char *err, size_t errlen)
{
	struct cmdsync_run r = { .iommu = e->iommu,
				 .model = ilab_board_smmu(e->tb.board, e->smmu),
				 .iterations = iterations };
	struct ilab_smmu_drv_stats *ds;
	int cpu = plat_node_cpu((unsigned)cpu_node, 0), ret;

	if (cpu < 0 || !iterations) {
		snprintf(err, errlen, "node %d has no CPU (or no iterations)", cpu_node);
		return -EINVAL;
	}
	ret = plat_run_threads(1, &cpu, cmdsync_thread, &r);
	if (ret || r.ret) {
		/* the driver's reason if it gave one, then the simulator's */
		snprintf(err, errlen, "CMD_SYNC failed (%d)", ret ? ret : r.ret);
		if (strcmp(ilab_smmu_drv_strerror(), "no error"))
			ilab_errf_cause(err, errlen, 0, ilab_smmu_drv_strerror());
		ilab_errf_cause(err, errlen, 0, ilab_testbed_sim_error(&e->tb));
		return ret ? ret : r.ret;
	}
	ds = plat_zalloc_array(1, sizeof(*ds));
	if (!ds)
		return -ENOMEM;
	ret = ilab_smmu_drv_get_stats(e->iommu, ds);
	if (!ret && ds->syncs != iterations)
		ret = -EIO;
	if (ret)
		snprintf(err, errlen, "driver statistics: %llu CMD_SYNCs for %llu iterations",
			 (unsigned long long)ds->syncs, (unsigned long long)iterations);
	else
		*wait_ns = (double)ds->sync_wait_ns / (double)ds->syncs;
	free(ds);
	return ret;
}
