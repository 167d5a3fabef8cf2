/* fio_experiments.c — the scenario workload `fio`: a case's mode and parameters become a
 * machine (nvme_env.c) and a job description (nvme.c); IOPS, bandwidth and the completion
 * latency percentiles go into the case result. Plus its load-time checks against the topology
 * (an NVMe, CPUs for the jobs) and the profile (an nvme: section).
 * It is not the NVMe model and chooses no constant: the drive's and the block stack's are the
 * profile's nvme: section.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/nvme.h>
#include <iommulab/scenario.h>
#include <iommulab/sim.h>
#include <iommulab/topo.h>

#include "workloads/nvme_env.h"

static int add(struct ilab_case_result *r, const char *metric, const char *unit, double v,
	       char *err, size_t errlen)
{
	int ret = ilab_case_result_add(r, metric, unit, v);

	if (ret)
		snprintf(err, errlen, "cannot record %s", metric);
	return ret;
}

int ilab_workload_fio(const struct ilab_scenario *s, const struct ilab_case *c,
		      struct ilab_case_result *r, char *err, size_t errlen)
{
	struct ilab_nvme_env e = { .profile = s->profile, .seed = ilab_scenario_seed(s),
				   .drive_from_profile = true };
	struct ilab_nvme_cfg cfg = { 0 };
	struct ilab_nvme_result res;
	char *stats = NULL;
	int ret, irq_cpu, *irq_cpus = NULL;

	e.kernel = c->has_kernel ? &c->kernel : NULL;
	e.mode = c->mech.mode == ILAB_MODE_LAZY ? ILAB_NVME_ENV_LAZY
		 : c->mech.mode == ILAB_MODE_PASSTHROUGH ? ILAB_NVME_ENV_PASSTHROUGH
							 : ILAB_NVME_ENV_STRICT;
	cfg.numjobs = (unsigned)ilab_case_param(c, "numjobs", 8);
	cfg.iodepth = (unsigned)ilab_case_param(c, "iodepth", 32);
	cfg.bs = (unsigned)ilab_case_param(c, "bs", 4096);
	cfg.rw = (enum ilab_fio_rw)(int)ilab_case_param(c, "rw", 0);
	cfg.runtime_ns = (uint64_t)(ilab_case_param(c, "runtime_us", 20000) * 1000);
	cfg.ramp_ns = (uint64_t)(ilab_case_param(c, "ramp_us", 1000) * 1000);
	cfg.seed = e.seed;
	/* where completions run (docs/fio.md): the checks below refused values out of range */
	cfg.nr_queues = (unsigned)ilab_case_param(c, "queues", 0);
	cfg.hipri = ilab_case_param(c, "hipri", 0) != 0;
	ilab_nvme_rq_affinity_from_sysfs((int)ilab_case_param(c, "rq_affinity", 1),
					 &cfg.rq_affinity);
	irq_cpu = (int)ilab_case_param(c, "irq_cpu", -1);
	if (irq_cpu >= 0) { /* every queue's vector on that CPU (its smp_affinity) */
		irq_cpus = calloc(cfg.numjobs ? cfg.numjobs : 1, sizeof(*irq_cpus));
		if (!irq_cpus)
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
		for (unsigned i = 0; i < cfg.numjobs; i++)
			irq_cpus[i] = irq_cpu;
		cfg.irq_cpus = irq_cpus;
	}
	ret = ilab_nvme_env_run(&e, &cfg, &res, &stats, NULL, err, errlen);
	free(irq_cpus);
	if (ret)
		return ret;
	ret = add(r, "iops", "IOPS", res.iops, err, errlen);
	if (!ret)
		ret = add(r, "bw", "MB/s", res.bw_mbps, err, errlen);
	if (!ret)
		ret = add(r, "clat_p50", "us", res.clat_p50_ns / 1000.0, err, errlen);
	if (!ret)
		ret = add(r, "clat_p99", "us", res.clat_p99_ns / 1000.0, err, errlen);
	if (!ret)
		ret = add(r, "clat_p999", "us", res.clat_p999_ns / 1000.0, err, errlen);
	if (!ret) /* the busiest CPU that takes interrupts and runs no job (0: none) */
		ret = add(r, "irq_cpu_busy", "%", res.irq_cpu_busy * 100, err, errlen);
	if (!ret)
		ret = add(r, "iova_depot_max", "magazines", (double)res.iova_depot_max, err, errlen);
	if (ret) {
		free(stats);
		return ret;
	}
	r->stats_json = stats;
	return 0;
}

/* The machine must have an NVMe (the topology's devices are the machine's: an NVMe there is
 * an NVMe), CPUs for the jobs, and queues deeper than iodepth. */
int ilab_workload_fio_check(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			    size_t msglen)
{
	unsigned jobs = (unsigned)ilab_case_param(c, "numjobs", 8);
	unsigned depth = (unsigned)ilab_case_param(c, "iodepth", 32);
	double bs = ilab_case_param(c, "bs", 4096);
	double irq_cpu = ilab_case_param(c, "irq_cpu", -1), queues = ilab_case_param(c, "queues", 0);
	double rq_aff = ilab_case_param(c, "rq_affinity", 1), hipri = ilab_case_param(c, "hipri", 0);

	if (!ilab_nvme_env_pick(topo, NULL, msg, msglen))
		return -EINVAL;
	if (jobs > ilab_topo_nr_cpus(topo)) {
		snprintf(msg, msglen, "numjobs: %u need a CPU each; %s has %u", jobs,
			 ilab_topo_name(topo), ilab_topo_nr_cpus(topo));
		return -EINVAL;
	}
	if (depth >= ILAB_NVME_DEFAULT_QUEUE) {
		snprintf(msg, msglen, "iodepth: %u does not fit a queue of %u entries (at most %u "
			 "in flight)", depth, ILAB_NVME_DEFAULT_QUEUE, ILAB_NVME_DEFAULT_QUEUE - 1);
		return -EINVAL;
	}
	if (!(irq_cpu >= -1 && irq_cpu < ilab_topo_nr_cpus(topo)) || irq_cpu != (int)irq_cpu) {
		snprintf(msg, msglen, "irq_cpu: %g is not -1 (each queue's own vector) or a CPU of "
			 "%s (0..%u)", irq_cpu, ilab_topo_name(topo), ilab_topo_nr_cpus(topo) - 1);
		return -EINVAL;
	}
	if (!(queues >= 0 && queues <= 65535) || queues != (unsigned)queues) {
		snprintf(msg, msglen, "queues: %g is not 0 (one per CPU) or a queue count 1..65535",
			 queues);
		return -EINVAL;
	}
	if (rq_aff != 0 && rq_aff != 1 && rq_aff != 2) {
		snprintf(msg, msglen, "rq_affinity: %g is not 0, 1 or 2 (Linux's sysfs values)",
			 rq_aff);
		return -EINVAL;
	}
	if (hipri != 0 && hipri != 1) {
		snprintf(msg, msglen, "hipri: %g is not 0 or 1", hipri);
		return -EINVAL;
	}
	if ((unsigned)bs % 512) {
		snprintf(msg, msglen, "bs: %.0f is not a multiple of 512", bs);
		return -EINVAL;
	}
	return 0;
}

/* The machine first: a topology without an NVMe is the reason, whatever its profile says. */
int ilab_workload_fio_check_profile(const struct ilab_profile *prof, char *msg, size_t msglen)
{
	struct ilab_topo *t = NULL;
	char err[256];

	if (ilab_topo_load(prof->topology, &t, err, sizeof(err)) == 0) {
		bool has = ilab_nvme_env_pick(t, NULL, msg, msglen) != NULL;

		ilab_topo_free(t);
		if (!has)
			return -EINVAL;
	} /* else the scenario's own topology check says what is wrong with it */
	return ilab_nvme_env_profile_check(prof, msg, msglen);
}
