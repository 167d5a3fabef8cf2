/* case_checks.h — the built-in workloads' load-time checks (struct ilab_workload.check, see
 * iommulab/scenario.h): a case that cannot run on the profile's machine, or would take hours,
 * is refused with a one-line reason in msg (-EINVAL). Each calls the workload's own check
 * first. Definitions and the measured costs behind the time limit: case_checks.c.
 */
#ifndef ILAB_EXPERIMENTS_CASE_CHECKS_H
#define ILAB_EXPERIMENTS_CASE_CHECKS_H

#include <stddef.h>

#include "iommulab/scenario.h"

struct ilab_topo;

int ilab_case_check_cmdsync(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			    size_t msglen);
int ilab_case_check_map_bench(const struct ilab_case *c, const struct ilab_topo *topo,
			      char *msg, size_t msglen);
int ilab_case_check_nic_rx(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			   size_t msglen);
int ilab_case_check_nic_throughput(const struct ilab_case *c, const struct ilab_topo *topo,
				   char *msg, size_t msglen);
int ilab_case_check_allreduce(const struct ilab_case *c, const struct ilab_topo *topo,
			      char *msg, size_t msglen);
int ilab_case_check_netperf(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			    size_t msglen);
int ilab_case_check_fio(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			size_t msglen);

/* fio's buffers, numjobs x iodepth x bs in whole pages, fit the simulated memory a run may use
 * (3 of a node's 4 GiB): 0, or -EINVAL naming the combined limit (the fio command's check too). */
int ilab_fio_buffers_check(unsigned jobs, unsigned depth, double bs, char *msg, size_t msglen);

#endif
