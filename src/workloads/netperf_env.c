/* netperf_env.c — netperf on the simulated machine: nic_env.c's machine with the NIC probed
 * in the mode, the test's constants from the profile's nic: section, ilab_netperf_run.
 * Not the model (netperf.c) nor the scenario glue (netperf_experiments.c).
 */
#include <errno.h>
#include <stdio.h>

#include <iommulab/netperf.h>
#include <iommulab/sim.h>

#include "workloads/nic_env.h"

struct netperf_arg {
	const struct ilab_netperf_cfg *cfg;
	struct ilab_netperf_result *res;
};

static int netperf_run(struct ilab_board *board, struct ilab_dev *dev,
		       const struct ilab_profile *prof, void *arg, char *err, size_t errlen)
{
	struct netperf_arg *a = arg;
	struct ilab_netperf_cfg cfg = *a->cfg;
	int ret = ilab_netperf_from_profile(prof, &cfg, err, errlen);

	return ret ? ret : ilab_netperf_run(board, dev, &cfg, a->res, err, errlen);
}

int ilab_netperf_env_run(const struct ilab_nic_env *e, const struct ilab_netperf_cfg *cfg,
			 struct ilab_netperf_result *res, char **stats_json,
			 struct ilab_nic_env_info *info, char *err, size_t errlen)
{
	struct netperf_arg a = { .cfg = cfg, .res = res };
	struct ilab_nic_env env = *e;

	if (!cfg)
		return snprintf(err, errlen, "no netperf configuration"), -EINVAL;
	env.nic_from_profile = false; /* the receive-only check would name the wrong keys */
	return ilab_nic_env_run_fn(&env, true, netperf_run, &a, stats_json, info, err, errlen);
}
