/* seed_sim_workloads.c — the scenario runner's entries for seed 000 (cmdsync_latency) and seed
 * 002 (dma_map_benchmark): read a case's mechanisms and parameters, build the simulated machine
 * (sim_env), run the measurement, report the figures. It is not the measurement code
 * (src/workloads/cmdsync.c, map_benchmark.c) nor the machine's assembly (sim_env.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "iommulab/scenario.h"
#include "iommulab/topo.h"

#include "experiments/sim_env.h"

static int need_sim(const struct ilab_scenario *s, char *err, size_t errlen)
{
	if (s->engine == ILAB_ENGINE_KIND_SIM)
		return 0;
	snprintf(err, errlen, "workload %s runs only with engine: sim", s->workload->name);
	return -EINVAL;
}

static void env_cfg(const struct ilab_scenario *s, const struct ilab_case *c,
		    struct ilab_sim_env_cfg *cfg, int smmu_node)
{
	*cfg = (struct ilab_sim_env_cfg){
		.profile = s->profile,
		.seed = ilab_scenario_seed(s),
		.cma_pernuma = c->mech.cma == ILAB_CMA_POLICY_PERNUMA,
		.cma_global_node = (int)ilab_case_param(c, "global_cma_node", 0),
		.smmu_node = smmu_node,
		.mode = c->mech.mode == ILAB_MODE_LAZY ? ILAB_ENV_LAZY
			: c->mech.mode == ILAB_MODE_PASSTHROUGH ? ILAB_ENV_PASSTHROUGH
								 : ILAB_ENV_STRICT,
		.map_pages = ilab_case_map_pages(c),
		.lookup_refcount = ilab_case_lookup(c) == ILAB_LOOKUP_REFCOUNT,
		.ecmdq = c->mech.ecmdq,
		.cmdqv = c->mech.cmdqv,
		.fq_single = c->mech.fq == ILAB_FQ_MECH_SINGLE,
		.fq_size = (unsigned)ilab_case_param(c, "fq_size", 0),
		.fq_timeout_ns = (uint64_t)ilab_case_param(c, "fq_timeout_ms", 0) * 1000000ull,
		.iova_depot_fixed32 = ilab_case_iova_depot(c) == ILAB_DEPOT_MECH_FIXED32,
		.cmdq_fair_lock = ilab_case_cmdq_fair_lock(c),
		.kernel = c->has_kernel ? &c->kernel : NULL,
	};
}

int ilab_workload_cmdsync_run(const struct ilab_scenario *s, const struct ilab_case *c,
			      struct ilab_case_result *r, char *err, size_t errlen)
{
	struct ilab_sim_env_cfg cfg;
	struct ilab_sim_env *e;
	double wait = 0;
	int ret = need_sim(s, err, errlen);

	if (ret)
		return ret;
	env_cfg(s, c, &cfg, (int)ilab_case_param(c, "smmu_node", 2));
	ret = ilab_sim_env_up(&cfg, &e, err, errlen);
	if (ret)
		return ret;
	ret = ilab_cmdsync_run(e, (int)ilab_case_param(c, "cpu_node", 2),
			       (uint64_t)ilab_case_param(c, "iterations", 1000), &wait, err, errlen);
	if (!ret) {
		ret = ilab_case_result_add(r, "cmdsync_wait", "ns", wait);
		if (!ret)
			ret = ilab_case_result_add(r, "cmdq_node", "node", ilab_sim_env_cmdq_node(e));
		if (!ret)
			r->stats_json = ilab_sim_env_stats_json(e);
	}
	ilab_sim_env_down(e);
	return ret;
}

int ilab_workload_map_bench_run(const struct ilab_scenario *s, const struct ilab_case *c,
				struct ilab_case_result *r, char *err, size_t errlen)
{
	struct ilab_sim_env_cfg cfg;
	struct ilab_sim_env_map_result mr;
	struct ilab_sim_env *e;
	int ret = need_sim(s, err, errlen);

	if (ret)
		return ret;
	env_cfg(s, c, &cfg, (int)ilab_case_param(c, "smmu_node", 2));
	ret = ilab_sim_env_up(&cfg, &e, err, errlen);
	if (ret)
		return ret;
	ret = ilab_sim_env_map_bench(e, (unsigned)ilab_case_param(c, "threads", 1),
				     (unsigned)ilab_case_param(c, "granule", 1),
				     (uint64_t)ilab_case_param(c, "iterations", 100),
				     (int)ilab_case_param(c, "node", 2),
				     (unsigned)ilab_case_param(c, "dma_trans_ns", 0), &mr, err, errlen);
	if (!ret)
		ret = ilab_case_result_add(r, "map_latency", "us", mr.map_us);
	if (!ret)
		ret = ilab_case_result_add(r, "unmap_latency", "us", mr.unmap_us);
	if (!ret)
		ret = ilab_case_result_add(r, "map_ns", "ns", mr.map_ns);
	if (!ret)
		ret = ilab_case_result_add(r, "unmap_ns", "ns", mr.unmap_ns);
	if (!ret)
		r->stats_json = ilab_sim_env_stats_json(e);
	ilab_sim_env_down(e);
	return ret;
}

/* dma_map_benchmark binds its threads to the node's CPUs (-n), one each: more threads than the
 * node has CPUs cannot run (the kernel module refuses them too). */
int ilab_workload_map_bench_check(const struct ilab_case *c, const struct ilab_topo *topo,
				  char *msg, size_t msglen)
{
	unsigned node = (unsigned)ilab_case_param(c, "node", 0), n = 0;
	unsigned threads = (unsigned)ilab_case_param(c, "threads", 1);

	ilab_topo_node_cpus(topo, node, &n);
	if (threads <= n)
		return 0;
	snprintf(msg, msglen, "threads: %u, but node %u has %u CPUs", threads, node, n);
	return -EINVAL;
}
