/* netperf_experiments.c — the scenario workload `netperf`: a case's parameters and mode
 * become a netperf test on the machine (netperf_env.c) and its figures the case's metrics.
 * It chooses no constant: the NIC's, the wire's and the stacks' are the profile's nic:
 * section. Not the model (netperf.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/netperf.h>
#include <iommulab/scenario.h>

#include "workloads/nic_env.h"

static int add(struct ilab_case_result *r, const char *metric, const char *unit, double v,
	       char *err, size_t errlen)
{
	int ret = ilab_case_result_add(r, metric, unit, v);

	if (ret)
		snprintf(err, errlen, "cannot record %s", metric);
	return ret;
}

int ilab_workload_netperf(const struct ilab_scenario *s, const struct ilab_case *c,
			  struct ilab_case_result *r, char *err, size_t errlen)
{
	struct ilab_nic_env e = { 0 };
	struct ilab_netperf_cfg cfg = { 0 };
	struct ilab_netperf_result res;
	char *stats = NULL;
	int ret;

	e.profile = s->profile;
	e.seed = ilab_scenario_seed(s);
	e.nic_node = (int)ilab_case_param(c, "nic_node", 2);
	e.mode = c->mech.mode == ILAB_MODE_LAZY ? ILAB_NIC_ENV_LAZY
		 : c->mech.mode == ILAB_MODE_PASSTHROUGH ? ILAB_NIC_ENV_PASSTHROUGH
							 : ILAB_NIC_ENV_STRICT;
	/* map_pages as the case's kernel had it (docs/kernel-eras.md), else on, as before */
	e.kernel = c->has_kernel ? &c->kernel : NULL;
	e.map_pages = c->has_kernel && !c->mech.map_pages_set ? c->kernel.map_pages : true;
	cfg.test = (enum ilab_netperf_test)ilab_case_param(c, "test", 0);
	cfg.queues = (unsigned)ilab_case_param(c, "queues", 1);
	cfg.send_bytes = (unsigned)ilab_case_param(c, "send_bytes", 16384);
	cfg.req_bytes = (unsigned)ilab_case_param(c, "req_bytes", 1);
	cfg.rsp_bytes = (unsigned)ilab_case_param(c, "rsp_bytes", 1);
	cfg.ring_size = (unsigned)ilab_case_param(c, "ring_size", 64);
	cfg.duration_ns = (uint64_t)(ilab_case_param(c, "duration_us", 2000) * 1000);
	cfg.warmup_ns = (uint64_t)(ilab_case_param(c, "warmup_us", 200) * 1000);
	cfg.channels = (unsigned)ilab_case_param(c, "channels", 0);
	cfg.irq_shift = (unsigned)ilab_case_param(c, "irq_shift", 0);
	ret = ilab_netperf_env_run(&e, &cfg, &res, &stats, NULL, err, errlen);
	if (ret)
		return ret;
	if (cfg.test == ILAB_NETPERF_RR || cfg.test == ILAB_NETPERF_UDP_RR ||
	    cfg.test == ILAB_NETPERF_CRR)
		ret = add(r, "tps", "transactions/s", res.tps, err, errlen) ||
		      add(r, "lat_p50", "us", res.lat_p50_ns / 1e3, err, errlen) ||
		      add(r, "lat_p99", "us", res.lat_p99_ns / 1e3, err, errlen);
	else
		ret = add(r, "throughput", "Gbit/s", res.gbps, err, errlen);
	if (ret) {
		free(stats);
		return -ENOMEM;
	}
	r->stats_json = stats;
	return 0;
}

int ilab_workload_netperf_check_profile(const struct ilab_profile *prof, char *msg,
					size_t msglen)
{
	return ilab_netperf_profile_check(prof, msg, msglen);
}
