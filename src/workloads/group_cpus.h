/* group_cpus.h — private: Linux's spreading of a machine's CPUs over a device's queues
 * (group_cpus.c). Not public API.
 */
#ifndef ILAB_WORKLOADS_GROUP_CPUS_H
#define ILAB_WORKLOADS_GROUP_CPUS_H

/* Group CPUs 0..ncpu-1, CPU c on NUMA node cpu_node[c] (0..nnodes-1), into ngroups groups as
 * Linux's group_cpus_evenly does (docs/fio.md "The interrupt's CPU"): group[c] receives CPU
 * c's group, numbered as Linux numbers them (blk_mq_map_queues maps group i to hardware
 * queue i). Returns the number of groups made (ngroups, or ncpu when fewer), or -EINVAL. */
int ilab_group_cpus_evenly(unsigned ngroups, unsigned ncpu, const int *cpu_node,
			   unsigned nnodes, unsigned *group);

#endif
