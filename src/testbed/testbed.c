/* testbed.c — assembles the modelled machine (topology, simulator, plat, board with the
 * profile's IOMMU architecture, unit agents, each unit's driver) from a loaded profile and
 * tears it down (include/iommulab/testbed.h). The one place where a profile's iommu: key and
 * its smmu: and vtd: sections become board options. It is not a workload: devices, domains and DMA
 * options are the callers'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/iommu_arch.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/trace.h>
#include <iommulab/topo.h>

#include "util/errf.h"

#define TB_MSG_MAX 512
#define TB_ECMDQ_MAX 1024 /* IDR6 allows at most 2^10 ECMDQs per SMMU */

int ilab_testbed_load_topology(struct ilab_testbed *tb, const struct ilab_testbed_opts *o,
			       char *err, size_t errlen)
{
	const char *spec;
	char msg[TB_MSG_MAX];
	int ret;

	if (!tb || !o)
		return ilab_errf(err, errlen, -EINVAL, "testbed: no testbed or options");
	if (tb->topo)
		return 0;
	spec = o->topology ? o->topology : o->profile ? o->profile->topology : NULL;
	if (!spec)
		return ilab_errf(err, errlen, -EINVAL, "testbed: no topology and no profile");
	ret = ilab_topo_load(spec, &tb->topo, msg, sizeof(msg));
	if (ret < 0) {
		tb->topo = NULL;
		return ilab_errf(err, errlen, ret, "topology: %s", msg);
	}
	return 0;
}

void ilab_testbed_board_opts(const struct ilab_testbed_opts *o, const struct ilab_topo *topo,
			     struct ilab_board_opts *bo, struct smmu_config *scfg)
{
	const struct ilab_profile *p = o->profile;

	smmu_config_default(scfg);
	scfg->seed = o->seed; /* only a RANDOM cache policy draws from it */
	if (p && p->smmu_ril >= 0) /* the profile's machine: e.g. no range invalidation */
		scfg->ril = p->smmu_ril;
	if (o->ecmdq_per_cpu) {
		/* SMMUv3.3; the model's consumer scans the queues serially (ecmdq_parallel off) */
		scfg->arch_minor = 3;
		scfg->ecmdq_count = 1;
		while (topo && scfg->ecmdq_count < ilab_topo_nr_cpus(topo) &&
		       scfg->ecmdq_count < TB_ECMDQ_MAX)
			scfg->ecmdq_count *= 2;
		scfg->ecmdq_parallel = false;
	} else if (p && p->smmu_cmdqv_vcmdqs) {
		/* the machine's Tegra241 CMDQV (an SMMU here has it or ECMDQs, not both) */
		scfg->cmdqv_vcmdqs = (unsigned)p->smmu_cmdqv_vcmdqs;
		scfg->cmdqv_vintfs = (unsigned)p->smmu_cmdqv_vintfs;
	}
	/* RIL is mandatory from SMMUv3.2 (IHI 0070 §6.3.4), so a machine without it is v3.1; with
	 * ECMDQs (v3.3) the SMMU has RIL and the driver is told not to use it (ilab_testbed_up). */
	if (!scfg->ril) {
		if (scfg->arch_minor >= 3)
			scfg->ril = true;
		else
			scfg->arch_minor = 1;
	}
	memset(bo, 0, sizeof(*bo));
	bo->smmu_cfg = scfg;
	bo->cma = o->cma;
	bo->cma_global_node = o->cma_global_node;
	bo->iommu_mask = o->iommu_mask;
	bo->process_batch = o->process_batch;
	if (o->iommu_arch && o->iommu_arch[0])
		bo->iommu_arch = o->iommu_arch; /* asked for (natively: no profile to say it) */
	else if (p && p->iommu_arch[0])
		bo->iommu_arch = p->iommu_arch; /* the profile's iommu: key, for every unit */
	if (p) {
		/* What the model's work costs: every smmu: cost of the profile, here and only
		 * here (natively plat_charge_ns charges nothing). */
		bo->smmu_command_ns = p->smmu_command_ns;
		bo->smmu_sync_ns = p->smmu_sync_ns;
		bo->smmu_tlbi_sync_ns = p->smmu_tlbi_sync_ns;
		bo->smmu_tlbi_ns = p->smmu_tlbi_ns;
		bo->smmu_tlbi_scan_ns = p->smmu_tlbi_scan_ns;
		bo->smmu_tlbi_entry_ns = p->smmu_tlbi_entry_ns;
		bo->smmu_tlb_lookup_ns = p->smmu_tlb_lookup_ns;
		bo->smmu_cmd_readahead = (unsigned)p->smmu_cmd_readahead;
		bo->smmu_sync_all_queues = p->smmu_sync_all_queues > 0;
		bo->smmu_inv_in_flight = (unsigned)p->smmu_inv_in_flight;
		/* and every vtd: cost, for VT-d units */
		bo->vtd_desc_ns = p->vtd_desc_ns;
		bo->vtd_wait_ns = p->vtd_wait_ns;
		bo->vtd_iotlb_lookup_ns = p->vtd_iotlb_lookup_ns;
		bo->vtd_walk_ns = p->vtd_walk_ns;
		bo->vtd_walkers = (unsigned)p->vtd_walkers;
		bo->vtd_entry_read_fetches = (unsigned)p->vtd_entry_read_fetches;
		bo->vtd_outstanding = (unsigned)p->vtd_outstanding;
		bo->vtd_iotlb_entries = (unsigned)p->vtd_iotlb_entries;
		bo->vtd_iotlb_ways = (unsigned)p->vtd_iotlb_ways;
		bo->vtd_pml4e_entries = (unsigned)p->vtd_pml4e_entries;
		bo->vtd_pdpe_entries = (unsigned)p->vtd_pdpe_entries;
		bo->vtd_pde_entries = (unsigned)p->vtd_pde_entries;
	}
}

static int testbed_sim_plat(struct ilab_testbed *tb, const struct ilab_testbed_opts *o,
			    char *err, size_t errlen)
{
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE, .topo = tb->topo };
	char msg[TB_MSG_MAX];
	int ret;

	if (o->native) {
		pc.bind_threads = true;
	} else {
		struct ilab_sim *sim = NULL;

		ret = ilab_sim_create_topo(tb->topo, o->profile,
					   &(struct ilab_sim_config){ .seed = o->seed,
								      .lookahead = o->lookahead },
					   &sim, msg, sizeof(msg));
		if (ret)
			return ilab_errf(err, errlen, ret, "simulator: %s", msg);
		tb->sim = sim;
		pc.engine = PLAT_ENGINE_SIM;
		pc.sim = ilab_sim_ops(sim);
	}
	ret = plat_init(&pc);
	if (ret)
		return ilab_errf(err, errlen, ret, "cannot set up the platform (%d)", ret);
	tb->plat_up = true;
	return 0;
}

/* The driver that failed to probe, for the message: the first modelled unit left without
 * one (the board probes in unit order and stops at the first failure). */
static const char *unprobed_driver_name(struct ilab_board *b)
{
	for (unsigned i = 0; i < ilab_board_nr_iommus(b); i++)
		if (ilab_board_iommu_unit(b, i) && !ilab_board_iommu(b, i))
			return ilab_board_iommu_arch(b, i)->driver_name;
	return "IOMMU";
}

int ilab_testbed_up(struct ilab_testbed *tb, const struct ilab_testbed_opts *o, char *err,
		    size_t errlen)
{
	struct ilab_board_opts bo;
	struct smmu_config scfg;
	struct ilab_board *board = NULL;
	int ret;

	if (!tb || !o)
		return ilab_errf(err, errlen, -EINVAL, "testbed: no testbed or options");
	if (tb->sim || tb->plat_up || tb->board)
		return ilab_errf(err, errlen, -EINVAL, "testbed: already up");
	if (!o->native && !o->profile)
		return ilab_errf(err, errlen, -EINVAL, "testbed: simulation needs a profile");
	tb->profile = o->profile;
	if (o->ecmdq_per_cpu && o->drv.cmdqv == ILAB_SMMU_CMDQV_ON)
		return ilab_errf(err, errlen, -EINVAL, "testbed: ecmdq and cmdqv both on: an SMMU "
				 "has ECMDQs (SMMUv3.3) or a Tegra241 CMDQV, not both");
	if (o->drv.cmdqv == ILAB_SMMU_CMDQV_ON && (!o->profile || !o->profile->smmu_cmdqv_vcmdqs))
		return ilab_errf(err, errlen, -EINVAL, "testbed: cmdqv on, but the profile's SMMU "
				 "has no CMDQV (%s sets no smmu.cmdqv_vcmdqs)",
				 o->profile ? o->profile->name : "no profile");
	if ((ret = ilab_testbed_load_topology(tb, o, err, errlen)) ||
	    (ret = testbed_sim_plat(tb, o, err, errlen)))
		return ret;
	ilab_testbed_board_opts(o, tb->topo, &bo, &scfg);
	ret = ilab_board_create(tb->topo, &bo, &board, err, errlen); /* err: "board: ..." */
	if (ret)
		return ret;
	tb->board = board;
	ret = ilab_board_start(board);
	if (ret)
		return ilab_errf(err, errlen, ret, "cannot start the IOMMU models (%d)%s%s", ret,
				 *ilab_testbed_sim_error(tb) ? ": " : "", ilab_testbed_sim_error(tb));
	if (o->no_driver)
		return 0;
	struct ilab_smmu_drv_opts dopts = o->drv;
	if (o->profile && o->profile->smmu_ril == 0)
		dopts.no_ril = true; /* the machine has no range invalidation, whatever its IDR3 */
	/* the driver options of the machine's architecture (the profile's iommu:) */
	if (bo.iommu_arch && !strcmp(bo.iommu_arch, "vtd"))
		ret = ilab_board_probe_drivers(board, "vtd", &o->vtd_drv);
	else
		ret = ilab_board_probe_drivers(board, "smmuv3", &dopts);
	if (ret)
		return ilab_errf(err, errlen, ret, "%s driver probe (%d): %s%s%s",
				 unprobed_driver_name(board), ret, ilab_board_probe_strerror(),
				 *ilab_testbed_sim_error(tb) ? " " : "", ilab_testbed_sim_error(tb));
	return 0;
}

void ilab_testbed_down(struct ilab_testbed *tb)
{
	if (!tb)
		return;
	ilab_board_destroy(tb->board); /* stops the agents, removes the drivers */
	if (tb->plat_up)
		plat_fini();
	ilab_sim_destroy(tb->sim);
	ilab_topo_free(tb->topo);
	memset(tb, 0, sizeof(*tb));
}

struct ilab_dev *ilab_testbed_dev(struct ilab_testbed *tb, const char *name)
{
	return tb ? ilab_board_find_dev(tb->board, name) : NULL;
}

const char *ilab_testbed_sim_error(const struct ilab_testbed *tb)
{
	return tb && tb->sim ? ilab_sim_error(tb->sim) : "";
}

char *ilab_testbed_stats_json(const struct ilab_testbed *tb)
{
	json_t *root;
	char *out;

	if (!tb || !tb->sim)
		return NULL;
	ilab_sim_trace_end(tb->sim); /* the trace ends where the statistics are taken */
	root = ilab_sim_json(tb->sim);
	if (!root)
		return NULL;
	if (tb->board)
		/* every unit's, whatever its architecture, keyed by its name (smmu2, dmar0) */
		json_object_set_new(root, "iommus", ilab_board_iommus_json(tb->board));
	out = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2));
	json_decref(root);
	return out;
}
