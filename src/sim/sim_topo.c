/* sim_topo.c — builds a simulator from a loaded topology (src/topo): reads its CPUs' nodes
 * and SLIT into struct ilab_sim_machine. It is not the topology loader. Kept apart from
 * sim.c so that users of ilab_sim_create() do not pull in src/topo.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "iommulab/sim.h"
#include "iommulab/topo.h"

int ilab_sim_create_topo(const struct ilab_topo *t, const struct ilab_profile *prof,
			 const struct ilab_sim_config *cfg, struct ilab_sim **out, char *err,
			 size_t errlen)
{
	struct ilab_sim_machine m;
	int *cpu_node;
	unsigned *dist;
	int rc;

	if (!t) {
		if (err && errlen)
			snprintf(err, errlen, "no topology");
		return -EINVAL;
	}
	m.nr_nodes = ilab_topo_nr_nodes(t);
	m.nr_cpus = ilab_topo_nr_cpus(t);
	cpu_node = malloc((m.nr_cpus ? m.nr_cpus : 1) * sizeof(*cpu_node));
	dist = malloc(((size_t)m.nr_nodes * m.nr_nodes + 1) * sizeof(*dist));
	if (!cpu_node || !dist) {
		free(cpu_node);
		free(dist);
		return -ENOMEM;
	}
	for (unsigned c = 0; c < m.nr_cpus; c++)
		cpu_node[c] = ilab_topo_cpu_node(t, c);
	for (unsigned a = 0; a < m.nr_nodes; a++)
		for (unsigned b = 0; b < m.nr_nodes; b++)
			dist[a * m.nr_nodes + b] = ilab_topo_distance(t, a, b);
	m.cpu_node = cpu_node;
	m.distance = dist;
	rc = ilab_sim_create(&m, prof, cfg, out, err, errlen);
	free(cpu_node);
	free(dist);
	return rc;
}
