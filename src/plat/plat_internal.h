/* plat_internal.h — state shared by the native platform backend's files (src/plat).
 * It is not part of the public API: callers use include/iommulab/plat.h only.
 */
#ifndef IOMMULAB_PLAT_INTERNAL_H
#define IOMMULAB_PLAT_INTERNAL_H

#include <stdbool.h>

#include <hwloc.h>

#include "iommulab/plat.h"

/* The modelled machine's CPUs as plat exposes them, copied out of the topology (or the host)
 * at plat_init() so that the caller may free its topology afterwards. */
struct plat_cpus {
	unsigned nr_cpus;
	unsigned nr_nodes;
	int *cpu_node;           /* [nr_cpus]: node of each CPU */
	unsigned *node_first;    /* [nr_nodes + 1]: node n's CPUs are node_list[first[n]..first[n+1]) */
	unsigned *node_list;     /* [nr_cpus]: CPUs grouped by node, ascending within a node */
};

struct plat_state {
	bool initialised;
	enum plat_engine engine;
	bool bind_threads;
	struct plat_cpus cpus;
	hwloc_topology_t host; /* loaded when needed: host CPUs, or binding; NULL otherwise */
	unsigned host_pus;
};

/* Written only by plat_init()/plat_fini(), which run before and after every plat thread. */
extern struct plat_state plat_state;

/* The calling thread's modelled CPU (-1 outside plat_run_threads threads). */
extern _Thread_local int plat_tls_cpu;

/* In an agent's thread, its stop flag (NULL elsewhere): a poll there gives up once it is set,
 * as in simulation, so that plat_agent_stop() cannot hang on a predicate that does not look. */
extern _Thread_local plat_word32 *plat_tls_agent_stop;

int plat_cpus_setup(const struct ilab_topo *topo, struct plat_state *st);
void plat_cpus_release(struct plat_state *st);
int plat_host_load(struct plat_state *st);
/* Pin the calling thread to host PU (cpu % host PUs). */
int plat_bind_self(unsigned cpu);

#endif /* IOMMULAB_PLAT_INTERNAL_H */
