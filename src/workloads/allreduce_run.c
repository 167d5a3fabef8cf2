/* allreduce_run.c — the scenario runner's side of the allreduce workload: a case's parameters
 * and mechanisms in, the "algbw" figure and statistics out. Not the model (allreduce.c), which
 * knows nothing of scenario files.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "iommulab/allreduce.h"
#include "iommulab/scenario.h"
#include "iommulab/topo.h"

int ilab_allreduce_run(const struct ilab_scenario *s, const struct ilab_case *c,
		       struct ilab_case_result *r, char *err, size_t errlen)
{
	struct ilab_allreduce_cfg cfg = {
		.profile = s->profile,
		.seed = ilab_scenario_seed(s),
		.first_node = (unsigned)ilab_case_param(c, "first_node", 0),
		.nr_nodes = (unsigned)ilab_case_param(c, "nr_nodes", 1),
		.gpus_per_node = (unsigned)ilab_case_param(c, "gpus_per_node", 4),
		.nics_per_node = (unsigned)ilab_case_param(c, "nics_per_node", 4),
		.pgtable_node = (int)ilab_case_param(c, "pgtable_node", 1),
		.attach_group_by_node = c->mech.vfio_attach_group_by_node,
		.intel_nid_policy = (int)c->mech.intel_iommu_nid,
		.cma_pernuma = c->mech.cma == ILAB_CMA_POLICY_PERNUMA,
		.message_bytes = ilab_case_param(c, "message_bytes", 1 << 28),
		.iterations = (unsigned)ilab_case_param(c, "iterations", 1),
		.hosts = (unsigned)ilab_case_param(c, "hosts", 2),
		.buffer_bytes = (uint64_t)ilab_case_param(c, "buffer_bytes", 16 << 20),
		.iommu_page_bytes = (uint64_t)ilab_case_param(c, "iommu_page_bytes", 4096),
		.kernel = c->has_kernel ? &c->kernel : NULL,
	};
	struct ilab_allreduce_result res;
	int ret;

	if (s->engine != ILAB_ENGINE_KIND_SIM) {
		snprintf(err, errlen, "allreduce runs in simulation only (engine: sim)");
		return -EINVAL;
	}
	ret = ilab_allreduce_measure(&cfg, &res, err, errlen);
	if (ret)
		return ret;
	ret = ilab_case_result_add(r, "algbw", "GB/s", res.algbw);
	if (ret)
		return ret;
	if (asprintf(&r->stats_json,
		     "{\"ats_mean_ns\": %" PRIu64 ", \"ats_refused\": %" PRIu64
		     ", \"ats_requests\": %" PRIu64 ", \"atc_hits\": %" PRIu64 ", \"engines\": %u"
		     ", \"pages\": %" PRIu64 ", \"time_ns\": %" PRIu64 "}",
		     res.ats_mean_ns, res.ats_refused, res.ats_requests, res.atc_hits, res.engines,
		     res.pages, (uint64_t)res.time_ns) < 0)
		r->stats_json = NULL;
	return 0;
}

int ilab_allreduce_check(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			 size_t msglen)
{
	unsigned first = (unsigned)ilab_case_param(c, "first_node", 0);
	unsigned nr = (unsigned)ilab_case_param(c, "nr_nodes", 1);
	unsigned nodes = ilab_topo_nr_nodes(topo);

	if (first + nr <= nodes)
		return 0;
	snprintf(msg, msglen, "first_node %u and nr_nodes %u need nodes %u-%u, the machine has 0-%u",
		 first, nr, first, first + nr - 1, nodes - 1);
	return -EINVAL;
}
