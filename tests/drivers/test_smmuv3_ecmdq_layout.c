/* test_smmuv3_ecmdq_layout.c — the CPU → ECMDQ assignment (arm_smmu_ecmdq_layout) on synthetic
 * topologies: the series' rules on a consistent machine (one queue per CPU, per node, shared in
 * proportion, k mod N), and topologies it must survive — nodes that together hold fewer CPUs
 * than the machine has, a CPU listed by two nodes or beyond the machine, nodes without CPUs,
 * more than 64 nodes: the layout ends, every CPU gets a queue below the count it returns, and
 * every counted queue has a CPU.
 * Expected values are worked out from the rules in docs/smmuv3-driver.md "CPU → queue".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/arm-smmu-v3.h"

#define MAX_CPUS 256
#define MAX_NODES 80

/* The synthetic machine: node k lists cpu_of[k][0 .. n_of[k]). */
static unsigned n_of[MAX_NODES];
static int cpu_of[MAX_NODES][MAX_CPUS];

static unsigned node_cpu_count(unsigned node)
{
	return node < MAX_NODES ? n_of[node] : 0;
}

static int node_cpu(unsigned node, unsigned i)
{
	return node < MAX_NODES && i < n_of[node] ? cpu_of[node][i] : -1;
}

static struct arm_smmu_ecmdq_topo machine(unsigned cpus, unsigned nodes)
{
	struct arm_smmu_ecmdq_topo t = { .cpus = cpus, .nodes = nodes,
					 .node_cpu_count = node_cpu_count, .node_cpu = node_cpu };
	return t;
}

static void clear_nodes(void)
{
	memset(n_of, 0, sizeof(n_of));
}

/* Node k gets CPUs first, first + 1, ..., first + n - 1. */
static void node_range(unsigned k, unsigned first, unsigned n)
{
	n_of[k] = n;
	for (unsigned i = 0; i < n; i++)
		cpu_of[k][i] = (int)(first + i);
}

/* What holds for any input: at least one queue and at most nq, every CPU on a counted queue,
 * every counted queue used by some CPU. Returns the count. */
static unsigned layout_checked(const struct arm_smmu_ecmdq_topo *t, unsigned nq, unsigned *map)
{
	unsigned used, users[MAX_CPUS] = { 0 };

	for (unsigned c = 0; c < t->cpus; c++)
		map[c] = 0xdeadbeef;
	used = arm_smmu_ecmdq_layout(t, nq, map);
	assert_in_range(used, 1, nq);
	for (unsigned c = 0; c < t->cpus; c++) {
		assert_in_range(map[c], 0, used - 1);
		users[map[c]]++;
	}
	for (unsigned q = 0; q < used; q++)
		assert_true(users[q] > 0);
	return used;
}

/* ---- a consistent machine: kunpeng920's shape, 4 nodes x 32 CPUs --------------------------- */

static void four_by_32(void)
{
	clear_nodes();
	for (unsigned k = 0; k < 4; k++)
		node_range(k, 32 * k, 32);
}

static void test_one_queue_per_cpu(void **state)
{
	struct arm_smmu_ecmdq_topo t;
	unsigned map[MAX_CPUS];

	(void)state;
	four_by_32();
	t = machine(128, 4);
	assert_int_equal(layout_checked(&t, 128, map), 128);
	for (unsigned c = 0; c < 128; c++)
		assert_int_equal(map[c], c);
	assert_int_equal(layout_checked(&t, 512, map), 128); /* the extra queues stay off */
}

static void test_shared_in_proportion(void **state)
{
	struct arm_smmu_ecmdq_topo t;
	unsigned map[MAX_CPUS];

	(void)state;
	four_by_32();
	t = machine(128, 4);
	/* 64 queues: 16 per node, the i-th CPU of node k on queue 16k + i mod 16 */
	assert_int_equal(layout_checked(&t, 64, map), 64);
	for (unsigned c = 0; c < 128; c++)
		assert_int_equal(map[c], 16 * (c / 32) + (c % 32) % 16);
	/* 4 queues: one per node */
	assert_int_equal(layout_checked(&t, 4, map), 4);
	for (unsigned c = 0; c < 128; c++)
		assert_int_equal(map[c], c / 32);
	/* fewer queues than nodes: node k on queue k mod 2 */
	assert_int_equal(layout_checked(&t, 2, map), 2);
	for (unsigned c = 0; c < 128; c++)
		assert_int_equal(map[c], (c / 32) % 2);
}

/* ---- topologies the layout must survive ------------------------------------------------------ */

/* 8 CPUs, but the two nodes hold only CPUs 0-1 and 2-3. With 6 queues each node could use 3
 * by proportion, but has only 2 CPUs: 2 queues each (4 used), and CPUs 4-7, on no node, share
 * those round robin (c mod 4). */
static void test_nodes_hold_fewer_cpus(void **state)
{
	struct arm_smmu_ecmdq_topo t;
	unsigned map[MAX_CPUS];

	(void)state;
	clear_nodes();
	node_range(0, 0, 2);
	node_range(1, 2, 2);
	t = machine(8, 2);
	assert_int_equal(layout_checked(&t, 6, map), 4);
	for (unsigned c = 0; c < 8; c++)
		assert_int_equal(map[c], c % 4);
	/* 3 queues: node 0 gets 1 + 2·1/4 = 1, node 1 the same, one leftover goes to node 0 */
	assert_int_equal(layout_checked(&t, 3, map), 3);
	assert_int_equal(map[0], 0);
	assert_int_equal(map[1], 1);
	assert_int_equal(map[2], 2);
	assert_int_equal(map[3], 2);
}

/* A CPU both nodes list counts for the first; a CPU beyond the machine is ignored. */
static void test_cpu_listed_twice_or_beyond(void **state)
{
	struct arm_smmu_ecmdq_topo t;
	unsigned map[MAX_CPUS];

	(void)state;
	clear_nodes();
	node_range(0, 0, 4);
	node_range(1, 0, 4);
	cpu_of[1][n_of[1]++] = 9; /* the machine has 4 CPUs */
	cpu_of[1][n_of[1]++] = -3;
	t = machine(4, 2);
	/* node 0 holds all 4 CPUs, node 1 none: 3 queues, all node 0's */
	assert_int_equal(layout_checked(&t, 3, map), 3);
	assert_int_equal(map[0], 0);
	assert_int_equal(map[1], 1);
	assert_int_equal(map[2], 2);
	assert_int_equal(map[3], 0);
}

static void test_no_node_has_cpus(void **state)
{
	struct arm_smmu_ecmdq_topo t;
	unsigned map[MAX_CPUS];

	(void)state;
	clear_nodes();
	t = machine(6, 3);
	assert_int_equal(layout_checked(&t, 4, map), 4);
	for (unsigned c = 0; c < 6; c++)
		assert_int_equal(map[c], c % 4);
}

/* More nodes than the layout groups (64): CPUs take c mod N, no grouping. */
static void test_too_many_nodes(void **state)
{
	struct arm_smmu_ecmdq_topo t;
	unsigned map[MAX_CPUS];

	(void)state;
	clear_nodes();
	for (unsigned k = 0; k < 65; k++)
		node_range(k, 2 * k, 2);
	t = machine(130, 65);
	assert_int_equal(layout_checked(&t, 16, map), 16);
	for (unsigned c = 0; c < 130; c++)
		assert_int_equal(map[c], c % 16);
}

static void test_nothing_to_lay_out(void **state)
{
	struct arm_smmu_ecmdq_topo t;
	unsigned map[4];

	(void)state;
	clear_nodes();
	t = machine(0, 1);
	assert_int_equal(arm_smmu_ecmdq_layout(&t, 4, map), 0);
	t = machine(4, 1);
	assert_int_equal(arm_smmu_ecmdq_layout(&t, 0, map), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_queue_per_cpu),
		cmocka_unit_test(test_shared_in_proportion),
		cmocka_unit_test(test_nodes_hold_fewer_cpus),
		cmocka_unit_test(test_cpu_listed_twice_or_beyond),
		cmocka_unit_test(test_no_node_has_cpus),
		cmocka_unit_test(test_too_many_nodes),
		cmocka_unit_test(test_nothing_to_lay_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
