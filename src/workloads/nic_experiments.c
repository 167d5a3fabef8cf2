/* nic_experiments.c — the scenario workloads `nic_rx` (seed 001) and `nic_throughput` (seed
 * 003): a case's mechanisms and parameters become a machine (nic_env.c) and a NIC
 * configuration (nic.c); the figures go into the case result.
 * It is not the NIC model and does not choose any tunable constant: the NIC's rates and the
 * network stack's costs are the machine profile's (nic: section, one description for every
 * experiment on the machine), everything else comes from the case (fixed here: one frame per
 * buffer for nic_rx) and the run's simulator seed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/nic.h>
#include <iommulab/scenario.h>

#include "workloads/nic_env.h"

static void env_from_case(const struct ilab_scenario *s, const struct ilab_case *c,
			  struct ilab_nic_env *e)
{
	memset(e, 0, sizeof(*e));
	e->profile = s->profile;
	e->seed = ilab_scenario_seed(s);
	e->nic_node = (int)ilab_case_param(c, "nic_node", 0);
	e->cma_pernuma = c->mech.cma == ILAB_CMA_POLICY_PERNUMA;
	e->mode = c->mech.mode == ILAB_MODE_LAZY ? ILAB_NIC_ENV_LAZY
		  : c->mech.mode == ILAB_MODE_PASSTHROUGH ? ILAB_NIC_ENV_PASSTHROUGH
							  : ILAB_NIC_ENV_STRICT;
	e->map_pages = ilab_case_map_pages(c);
	e->lookup_refcount = ilab_case_lookup(c) == ILAB_LOOKUP_REFCOUNT;
	e->kernel = c->has_kernel ? &c->kernel : NULL;
	e->ecmdq_use = c->mech.ecmdq;
	e->nic_from_profile = true;
}

/* The cmdq_spinlock parameter when the file sets it or names no kernel (then the workload's
 * default), else the kernel's queue (kernel_era.h). */
static bool cmdq_spinlock(const struct ilab_case *c, double dflt)
{
	if (c->has_kernel && !ilab_case_param_set(c, "cmdq_spinlock"))
		return false; /* the era's cmdq_mode, applied by nic_env */
	return ilab_case_param(c, "cmdq_spinlock", dflt) != 0;
}

static int finish(struct ilab_case_result *r, const char *metric, const char *unit, double v,
		  char *stats, char *err, size_t errlen)
{
	int ret = ilab_case_result_add(r, metric, unit, v);

	if (ret) {
		free(stats);
		snprintf(err, errlen, "cannot record %s", metric);
		return ret;
	}
	r->stats_json = stats;
	return 0;
}

int ilab_workload_nic_rx(const struct ilab_scenario *s, const struct ilab_case *c,
			 struct ilab_case_result *r, char *err, size_t errlen)
{
	struct ilab_nic_env e;
	struct ilab_nic_cfg cfg = { 0 };
	struct ilab_nic_result res;
	char *stats = NULL;
	int ret;

	env_from_case(s, c, &e);
	e.cmdq_spinlock = cmdq_spinlock(c, 1);
	cfg.queues = (unsigned)ilab_case_param(c, "processes", 128);
	cfg.packet_bytes = (unsigned)ilab_case_param(c, "packet_bytes", 64);
	cfg.frames_per_buffer = 1;
	cfg.ring_size = (unsigned)ilab_case_param(c, "ring_size", 128);
	cfg.duration_ns = (uint64_t)(ilab_case_param(c, "duration_us", 20000) * 1000);
	cfg.warmup_ns = (uint64_t)(ilab_case_param(c, "warmup_us", 2000) * 1000);
	ret = ilab_nic_env_run(&e, &cfg, &res, &stats, err, errlen);
	if (ret)
		return ret;
	return finish(r, "rx_packets_per_s", "packets/s", res.pps, stats, err, errlen);
}

int ilab_workload_nic_throughput(const struct ilab_scenario *s, const struct ilab_case *c,
				 struct ilab_case_result *r, char *err, size_t errlen)
{
	struct ilab_nic_env e;
	struct ilab_nic_cfg cfg = { 0 };
	struct ilab_nic_result res;
	char *stats = NULL;
	int ret;

	env_from_case(s, c, &e);
	e.ecmdq_hw = ilab_case_param(c, "ecmdq_hw", 1) != 0;
	e.cmdq_spinlock = cmdq_spinlock(c, 0);
	if (e.ecmdq_use && !e.ecmdq_hw) {
		snprintf(err, errlen, "ecmdq: on needs ecmdq_hw: 1");
		return -EINVAL;
	}
	cfg.queues = (unsigned)ilab_case_param(c, "nic_queues", 8);
	cfg.packet_bytes = (unsigned)ilab_case_param(c, "packet_bytes", 1500);
	cfg.frames_per_buffer = (unsigned)ilab_case_param(c, "frames_per_buffer", 1);
	cfg.ring_size = (unsigned)ilab_case_param(c, "ring_size", 64);
	cfg.duration_ns = (uint64_t)(ilab_case_param(c, "duration_us", 2000) * 1000);
	cfg.warmup_ns = (uint64_t)(ilab_case_param(c, "warmup_us", 200) * 1000);
	ret = ilab_nic_env_run(&e, &cfg, &res, &stats, err, errlen);
	if (ret)
		return ret;
	return finish(r, "throughput", "Gbit/s", res.goodput_gbps, stats, err, errlen);
}

/* Both NIC workloads read the profile's receive stack: a profile without one is the scenario's
 * error at load, not a FAILED case per run. */
int ilab_workload_nic_check_profile(const struct ilab_profile *prof, char *msg, size_t msglen)
{
	return ilab_nic_env_profile_check(prof, msg, msglen);
}

/* The NIC writes a buffer's frames with one DMA of at most 4 MiB (nic.c): a larger LRO buffer
 * is refused here, at load, rather than by the run. */
int ilab_workload_nic_check(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			    size_t msglen)
{
	double bytes = ilab_case_param(c, "frames_per_buffer", 1) *
		       ilab_case_param(c, "packet_bytes", 64);

	(void)topo;
	if (bytes <= 4 << 20)
		return 0;
	snprintf(msg, msglen, "frames_per_buffer x packet_bytes is %.0f bytes; a receive buffer "
		 "holds at most 4 MiB", bytes);
	return -EINVAL;
}
