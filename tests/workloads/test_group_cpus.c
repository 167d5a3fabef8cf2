/* test_group_cpus.c — Linux's grouping of CPUs for a device's queues (group_cpus_evenly,
 * src/workloads/group_cpus.c) on small topologies, the expected groups worked by hand from
 * lib/group_cpus.c's rules: whole nodes in turn with no more groups than nodes; else groups
 * shared out from the node with the fewest CPUs up, none across two nodes, a node's CPUs in
 * order, the first groups one CPU larger, numbered in the nodes' sorted order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "workloads/group_cpus.h"

#define MAXC 128

/* ncpu CPUs, node i holding per[i] of them in CPU order. */
static unsigned layout(const unsigned *per, unsigned nnodes, int *node)
{
	unsigned ncpu = 0;

	for (unsigned i = 0; i < nnodes; i++)
		for (unsigned k = 0; k < per[i]; k++)
			node[ncpu++] = (int)i;
	return ncpu;
}

static void expect(const unsigned *group, const unsigned *want, unsigned ncpu)
{
	for (unsigned c = 0; c < ncpu; c++)
		assert_int_equal(group[c], want[c]);
}

/* Nodes of 10, 20 and 10 CPUs, 5 groups: the nodes sort 0, 2, 1 (10, 10, 20; the heapsort
 * leaves the two tens so), node 0 gets max(1, 5 x 10 / 40) = 1 group (group 0), node 2
 * 4 x 10 / 30 = 1 (group 1), node 1 the other 3 (groups 2-4), its 20 CPUs as 7, 7, 6.
 * Killed by contiguous groups over the CPUs in order (8 each, across nodes), by giving
 * the larger node its groups first, or by leaving out the larger first groups. */
static void test_uneven_nodes_share_groups_by_cpus(void **state)
{
	static const unsigned per[] = { 10, 20, 10 };
	int node[MAXC];
	unsigned group[MAXC], want[MAXC], ncpu = layout(per, 3, node);

	(void)state;
	for (unsigned c = 0; c < ncpu; c++)
		want[c] = c < 10 ? 0 : c < 17 ? 2 : c < 24 ? 3 : c < 30 ? 4 : 1;
	assert_int_equal(ilab_group_cpus_evenly(5, ncpu, node, 3, group), 5);
	expect(group, want, ncpu);
}

/* Four equal nodes of 32 (kunpeng920), 6 groups: the heapsort (double-pop lib/sort.c, two roots a
 * time) leaves the equal nodes 1, 3, 2, 0, so nodes 1 and 3 get 6 x 32 / 128 = 1 and
 * 5 x 32 / 96 = 1 groups, nodes 2 and 0 two of 16 CPUs each. Killed by a stable sort (nodes
 * 0, 1, 2, 3: nodes 0 and 1 one group) or contiguous groups of 22 and 21 CPUs. */
static void test_equal_nodes_take_heapsort_order(void **state)
{
	static const unsigned per[] = { 32, 32, 32, 32 };
	int node[MAXC];
	unsigned group[MAXC], want[MAXC], ncpu = layout(per, 4, node);

	(void)state;
	for (unsigned c = 0; c < ncpu; c++)
		want[c] = c < 16 ? 4 : c < 32 ? 5 : c < 64 ? 0 : c < 80 ? 2 : c < 96 ? 3 : 1;
	assert_int_equal(ilab_group_cpus_evenly(6, ncpu, node, 4, group), 6);
	expect(group, want, ncpu);
}

/* No more groups than nodes: whole nodes, in node order, the groups in turn (3 groups on 4
 * nodes: node 3 back in group 0). A node without CPUs takes no group. */
static void test_few_groups_take_whole_nodes(void **state)
{
	static const unsigned per[] = { 2, 3, 1, 2 };
	int node[MAXC];
	unsigned group[MAXC], ncpu = layout(per, 4, node);
	static const unsigned want[] = { 0, 0, 1, 1, 1, 2, 0, 0 };
	static const int holed[] = { 0, 0, 2, 2, 3 }; /* node 1 has no CPU */
	static const unsigned want_holed[] = { 0, 0, 1, 1, 0 };

	(void)state;
	assert_int_equal(ilab_group_cpus_evenly(3, ncpu, node, 4, group), 3);
	expect(group, want, ncpu);
	assert_int_equal(ilab_group_cpus_evenly(2, 5, holed, 4, group), 2);
	expect(group, want_holed, 5);
}

/* More groups than CPUs: one CPU each (alloc_nodes_groups caps the groups at the CPUs). */
static void test_more_groups_than_cpus(void **state)
{
	static const unsigned per[] = { 2, 3 };
	int node[MAXC];
	unsigned group[MAXC], ncpu = layout(per, 2, node);

	(void)state;
	assert_int_equal(ilab_group_cpus_evenly(9, ncpu, node, 2, group), 5);
	for (unsigned c = 1; c < ncpu; c++)
		assert_int_not_equal(group[c], group[c - 1]);
}

static void test_bad_input(void **state)
{
	static const int node[] = { 0, 5 };
	unsigned group[2];

	(void)state;
	assert_int_equal(ilab_group_cpus_evenly(0, 2, node, 2, group), -EINVAL);
	assert_int_equal(ilab_group_cpus_evenly(2, 2, node, 2, group), -EINVAL); /* node 5 */
	assert_int_equal(ilab_group_cpus_evenly(2, 2, NULL, 2, group), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uneven_nodes_share_groups_by_cpus),
		cmocka_unit_test(test_equal_nodes_take_heapsort_order),
		cmocka_unit_test(test_few_groups_take_whole_nodes),
		cmocka_unit_test(test_more_groups_than_cpus),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
