/* cpu.c — CPU identity: how many CPUs and nodes the modelled machine has, and which node each
 * CPU is on, taken from an ilab_topo or from the host (hwloc). It does not create threads;
 * plat_bind_self() pins the calling one to its host PU.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "iommulab/topo.h"
#include "plat/plat_internal.h"

/* Turn a per-CPU node array into per-node CPU lists (a counting sort, stable in CPU order). */
static int cpus_index_nodes(struct plat_cpus *c)
{
	unsigned cpu, node;

	c->node_first = calloc(c->nr_nodes + 1, sizeof(*c->node_first));
	c->node_list = calloc(c->nr_cpus, sizeof(*c->node_list));
	if (!c->node_first || !c->node_list)
		return -ENOMEM;
	for (cpu = 0; cpu < c->nr_cpus; cpu++)
		c->node_first[c->cpu_node[cpu] + 1]++;
	for (node = 0; node < c->nr_nodes; node++)
		c->node_first[node + 1] += c->node_first[node];

	unsigned *fill = calloc(c->nr_nodes, sizeof(*fill));
	if (!fill)
		return -ENOMEM;
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		node = (unsigned)c->cpu_node[cpu];
		c->node_list[c->node_first[node] + fill[node]++] = cpu;
	}
	free(fill);
	return 0;
}

static int cpus_from_topo(const struct ilab_topo *t, struct plat_cpus *c)
{
	c->nr_cpus = ilab_topo_nr_cpus(t);
	c->nr_nodes = ilab_topo_nr_nodes(t);
	if (!c->nr_cpus || !c->nr_nodes)
		return -EINVAL;
	c->cpu_node = calloc(c->nr_cpus, sizeof(*c->cpu_node));
	if (!c->cpu_node)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < c->nr_cpus; cpu++) {
		int node = ilab_topo_cpu_node(t, cpu);

		if (node < 0 || (unsigned)node >= c->nr_nodes)
			return -EINVAL; /* a CPU on no node: the topology is inconsistent */
		c->cpu_node[cpu] = node;
	}
	return cpus_index_nodes(c);
}

int plat_host_load(struct plat_state *st)
{
	if (st->host)
		return 0;
	if (hwloc_topology_init(&st->host) < 0) {
		st->host = NULL;
		return -ENOMEM;
	}
	if (hwloc_topology_load(st->host) < 0) {
		hwloc_topology_destroy(st->host);
		st->host = NULL;
		return -EIO;
	}
	int pus = hwloc_get_nbobjs_by_type(st->host, HWLOC_OBJ_PU);
	st->host_pus = pus > 0 ? (unsigned)pus : 0;
	return st->host_pus ? 0 : -ENODEV;
}

/* The host as hwloc sees it: PUs by logical index, on their NUMA nodes (one node if none). */
static int cpus_from_host(struct plat_state *st)
{
	struct plat_cpus *c = &st->cpus;
	int err = plat_host_load(st);

	if (err)
		return err;
	int nodes = hwloc_get_nbobjs_by_type(st->host, HWLOC_OBJ_NUMANODE);
	c->nr_cpus = st->host_pus;
	c->nr_nodes = nodes > 0 ? (unsigned)nodes : 1;
	c->cpu_node = calloc(c->nr_cpus, sizeof(*c->cpu_node));
	if (!c->cpu_node)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < c->nr_cpus; cpu++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(st->host, HWLOC_OBJ_PU, cpu);

		for (int n = 0; n < nodes; n++) {
			hwloc_obj_t node = hwloc_get_obj_by_type(st->host, HWLOC_OBJ_NUMANODE, n);

			if (hwloc_bitmap_intersects(pu->cpuset, node->cpuset)) {
				c->cpu_node[cpu] = n;
				break;
			}
		}
	}
	return cpus_index_nodes(c);
}

int plat_cpus_setup(const struct ilab_topo *topo, struct plat_state *st)
{
	return topo ? cpus_from_topo(topo, &st->cpus) : cpus_from_host(st);
}

void plat_cpus_release(struct plat_state *st)
{
	free(st->cpus.cpu_node);
	free(st->cpus.node_first);
	free(st->cpus.node_list);
	st->cpus = (struct plat_cpus){ 0 };
	if (st->host)
		hwloc_topology_destroy(st->host);
	st->host = NULL;
	st->host_pus = 0;
}

/* Before plat_init() (a unit test, a tool), plat is a one-node machine with the host's CPUs. */
static unsigned host_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned)n : 1;
}

unsigned plat_cpu_count(void)
{
	return plat_state.initialised ? plat_state.cpus.nr_cpus : host_cpu_count();
}

unsigned plat_node_count(void)
{
	return plat_state.initialised ? plat_state.cpus.nr_nodes : 1;
}

int plat_cpu_node(unsigned cpu)
{
	if (cpu >= plat_cpu_count())
		return -1;
	return plat_state.initialised ? plat_state.cpus.cpu_node[cpu] : 0;
}

unsigned plat_node_cpu_count(unsigned node)
{
	const struct plat_cpus *c = &plat_state.cpus;

	if (node >= plat_node_count())
		return 0;
	if (!plat_state.initialised)
		return host_cpu_count();
	return c->node_first[node + 1] - c->node_first[node];
}

int plat_node_cpu(unsigned node, unsigned i)
{
	if (i >= plat_node_cpu_count(node))
		return -1;
	if (!plat_state.initialised)
		return (int)i;
	return (int)plat_state.cpus.node_list[plat_state.cpus.node_first[node] + i];
}

/* Modelled CPU i runs on host PU i % host PUs: a 128-CPU model on a 2-PU host folds onto it. */
int plat_bind_self(unsigned cpu)
{
	hwloc_topology_t host = plat_state.host;

	if (!host || !plat_state.host_pus)
		return -ENODEV;
	hwloc_obj_t pu = hwloc_get_obj_by_type(host, HWLOC_OBJ_PU, cpu % plat_state.host_pus);
	if (!pu)
		return -ENODEV;
	if (hwloc_set_cpubind(host, pu->cpuset, HWLOC_CPUBIND_THREAD) < 0)
		return errno ? -errno : -EIO;
	return 0;
}
