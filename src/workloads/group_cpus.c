/* group_cpus.c — Linux's spreading of a machine's CPUs over a device's queues
 * (lib/group_cpus.c, group_cpus_evenly, read for the facts; before Linux 6.3
 * kernel/irq/affinity.c): what blk_mq_map_queues, and the nvme driver's managed MSI-X
 * vectors through blk_mq_pci_map_queues, map each CPU's hardware queue by.
 *
 * With no more groups than NUMA nodes with CPUs, each node's CPUs go whole to one group, the
 * nodes in order taking the groups in turn (so a group may hold several nodes). With more,
 * no group spans two nodes: each node gets groups in proportion to its CPUs (at least one),
 * the nodes taken from the fewest CPUs up, each given its share of the groups still to give
 * over the CPUs still to cover, rounded down (alloc_groups_to_nodes); then a node's CPUs, in
 * CPU order, split into its groups, the first ncpus % ngroups of them one CPU larger
 * (assign_cpus_to_groups), the groups numbered in the nodes' sorted order.
 *
 * Left out: SMT siblings taken first into a group (the profiles' CPUs have none) and, in the
 * newest Linux (__try_group_cluster_cpus), a node's groups spread over its CPU clusters when
 * it gets at least as many groups as it has clusters (the topology does not give clusters).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "workloads/group_cpus.h"

/* One node's entry of the sort (struct node_groups): its CPUs (UINT32_MAX: none), then its
 * groups. */
struct node_share {
	unsigned id;
	uint32_t ncpus;
	unsigned ngroups;
};

/* ncpus_cmp_func: the CPU counts' difference, computed unsigned and returned as an int, so
 * that a node without CPUs (UINT32_MAX) sorts below one with some, as in Linux. */
static int share_cmp(const struct node_share *l, const struct node_share *r)
{
	uint32_t d = l->ncpus - r->ncpus;

	return d > INT32_MAX ? -(int)(UINT32_MAX - d) - 1 : (int)d;
}

static void share_swap(struct node_share *v, unsigned i, unsigned j)
{
	struct node_share t = v[i];

	v[i] = v[j];
	v[j] = t;
}

/* lib/sort.c's heapsort sift-down, the bottom-up variant: the path of larger children (the
 * left one on a tie) down to a leaf, then back up to where v[a] belongs, which it is rotated
 * to, the path's elements each one level up. */
static void sift_down(struct node_share *v, unsigned a, unsigned n)
{
	unsigned b = a, c, d;

	for (;;) {
		c = 2 * b + 1;
		d = c + 1;
		if (d >= n)
			break;
		b = share_cmp(&v[c], &v[d]) >= 0 ? c : d;
	}
	if (d == n) /* the last leaf, without a sibling */
		b = c;
	while (b != a && share_cmp(&v[a], &v[b]) >= 0)
		b = (b - 1) / 2;
	for (c = b; b != a;) {
		b = (b - 1) / 2;
		share_swap(v, b, c);
	}
}

/* Linux's sort() of the nodes (alloc_groups_to_nodes): a heapsort, not stable, so equal nodes
 * end in the order its moves leave them; since "lib/sort: optimize heapsort with double-pop
 * variation" (2024) it takes the two largest off the heap at a time. Four nodes of equal CPUs
 * end 1, 3, 2, 0 (before that change: 1, 2, 3, 0). */
static void sort_shares(struct node_share *v, unsigned num)
{
	unsigned n = num, a = num / 2, shift = 0;

	if (!a)
		return;
	for (;;) {
		if (a) {
			a -= 1u << shift; /* building the heap, or back to its root */
		} else if (n > 3) { /* the root, then the larger of its children */
			share_swap(v, 0, --n);
			shift = share_cmp(&v[1], &v[2]) <= 0;
			a = 1u << shift;
			share_swap(v, a, --n);
		} else if (n > 1) {
			share_swap(v, 0, --n);
		} else {
			break;
		}
		sift_down(v, a, n);
	}
}

/* alloc_groups_to_nodes: from the node with the fewest CPUs up, each its share of the groups
 * left over the CPUs left, rounded down, at least one. */
static void share_groups(struct node_share *v, unsigned nnodes, unsigned ngroups, unsigned ncpu)
{
	uint64_t left = ncpu;

	sort_shares(v, nnodes);
	for (unsigned i = 0; i < nnodes; i++) {
		uint64_t g;

		if (v[i].ncpus == UINT32_MAX)
			continue;
		g = (uint64_t)ngroups * v[i].ncpus / left;
		v[i].ngroups = g ? (unsigned)g : 1;
		left -= v[i].ncpus;
		ngroups -= v[i].ngroups;
	}
}

/* assign_cpus_to_groups: node v's CPUs in CPU order into its groups from *grp on, the first
 * ncpus % ngroups one CPU larger. */
static void fill_groups(const struct node_share *v, unsigned ncpu, const int *cpu_node,
			unsigned *group, unsigned *grp)
{
	unsigned per = v->ncpus / v->ngroups, extra = v->ncpus % v->ngroups, in = 0;

	for (unsigned c = 0; c < ncpu; c++) {
		if (cpu_node[c] != (int)v->id)
			continue;
		group[c] = *grp;
		if (++in == per + (extra != 0)) {
			in = 0;
			extra -= extra != 0;
			++*grp;
		}
	}
}

int ilab_group_cpus_evenly(unsigned ngroups, unsigned ncpu, const int *cpu_node,
			   unsigned nnodes, unsigned *group)
{
	struct node_share *v;
	unsigned nodes = 0, grp = 0;

	if (!ngroups || !ncpu || !cpu_node || !nnodes || !group)
		return -EINVAL;
	v = calloc(nnodes, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned i = 0; i < nnodes; i++)
		v[i] = (struct node_share){ .id = i, .ncpus = UINT32_MAX };
	for (unsigned c = 0; c < ncpu; c++) {
		if (cpu_node[c] < 0 || (unsigned)cpu_node[c] >= nnodes) {
			free(v);
			return -EINVAL;
		}
		if (v[cpu_node[c]].ncpus == UINT32_MAX) {
			v[cpu_node[c]].ncpus = 0;
			nodes++;
		}
		v[cpu_node[c]].ncpus++;
	}
	if (ngroups <= nodes) { /* whole nodes, in node order, the groups in turn */
		for (unsigned i = 0; i < nnodes; i++) {
			if (v[i].ncpus == UINT32_MAX)
				continue;
			for (unsigned c = 0; c < ncpu; c++)
				if (cpu_node[c] == (int)i)
					group[c] = grp;
			grp = (grp + 1) % ngroups;
		}
		free(v);
		return (int)ngroups;
	}
	share_groups(v, nnodes, ngroups < ncpu ? ngroups : ncpu, ncpu);
	for (unsigned i = 0; i < nnodes; i++)
		if (v[i].ncpus != UINT32_MAX)
			fill_groups(&v[i], ncpu, cpu_node, group, &grp);
	free(v);
	return (int)grp;
}
