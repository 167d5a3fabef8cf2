/* test_case_checks.c — the built-in workloads' load-time checks (src/experiments/
 * case_checks.c) called directly, for what the bad-*.yaml files cannot reach through a
 * built-in profile: a node without CPUs (tests/data/topologies/cpuless-node.xml), and the
 * edges of the memory and host-time limits (at the limit accepted, one step past refused).
 * Not the scenario parser (test_scenario_errors.c runs the same checks through files).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "experiments/case_checks.h"
#include "iommulab/topo.h"

/* A case holding just these parameters: a check reads the others' defaults. */
static void make_case(struct ilab_case *c, const char *const *names, const double *values,
		      unsigned n)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "a");
	for (unsigned i = 0; i < n; i++) {
		snprintf(c->params[i].name, sizeof(c->params[i].name), "%s", names[i]);
		c->params[i].value = values[i];
	}
	c->nr_params = n;
}

static struct ilab_topo *load(const char *spec)
{
	struct ilab_topo *t = NULL;
	char err[512];

	if (ilab_topo_load(spec, &t, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	return t;
}

static void expect(int ret, const char *msg, const char *want)
{
	if (!want) {
		if (ret)
			fail_msg("refused: %s", msg);
		return;
	}
	assert_int_equal(ret, -EINVAL);
	if (!strstr(msg, want))
		fail_msg("'%s' lacks '%s'", msg, want);
}

static void test_cpu_node_without_cpus(void **state)
{
	static const char *const names[] = { "cpu_node", "smmu_node", "iterations" };
	struct ilab_topo *t = load(ILAB_TESTDATA "/topologies/cpuless-node.xml");
	double v[] = { 1, 0, 10 };
	struct ilab_case c;
	char msg[256] = "";

	(void)state;
	make_case(&c, names, v, 3);
	expect(ilab_case_check_cmdsync(&c, t, msg, sizeof(msg)), msg,
	       "cpu_node: node 1 has no CPUs");
	/* node 0 has CPUs: the next check speaks (this machine has no device at all) */
	v[0] = 0;
	make_case(&c, names, v, 3);
	expect(ilab_case_check_cmdsync(&c, t, msg, sizeof(msg)), msg,
	       "smmu_node: ");
	ilab_topo_free(t);
}

/* 1 us per CMD_SYNC, 600 s a case: 6e8 iterations pass, one more does not. */
static void test_host_time_limit_edge(void **state)
{
	static const char *const names[] = { "cpu_node", "smmu_node", "iterations" };
	struct ilab_topo *t = load("kunpeng920");
	double v[] = { 2, 2, 6e8 };
	struct ilab_case c;
	char msg[256] = "";

	(void)state;
	make_case(&c, names, v, 3);
	expect(ilab_case_check_cmdsync(&c, t, msg, sizeof(msg)), msg, NULL);
	v[2] = 6e8 + 1;
	make_case(&c, names, v, 3);
	expect(ilab_case_check_cmdsync(&c, t, msg, sizeof(msg)), msg,
	       "would take about 10 minutes of host time");
	ilab_topo_free(t);
}

/* Queues take the NIC node's 32 CPUs first, then CPUs from 0: 40 queues x 24576 x 4 KiB is
 * 3 GiB on node 2 (the limit) and 0.75 GiB on node 0; one more ring entry is too much. */
static void test_ring_memory_edge_per_node(void **state)
{
	static const char *const names[] = { "processes", "ring_size", "nic_node",
					     "packet_bytes", "duration_us", "warmup_us" };
	struct ilab_topo *t = load("kunpeng920");
	double v[] = { 40, 24576, 2, 64, 1000, 0 };
	struct ilab_case c;
	char msg[256] = "";

	(void)state;
	make_case(&c, names, v, 6);
	expect(ilab_case_check_nic_rx(&c, t, msg, sizeof(msg)), msg, NULL);
	v[1] = 24577;
	make_case(&c, names, v, 6);
	expect(ilab_case_check_nic_rx(&c, t, msg, sizeof(msg)), msg,
	       "the receive rings of 32 queues on node 2");
	/* 8 KiB frames take 8 KiB buffers: half the entries reach the same limit */
	v[1] = 12289;
	v[3] = 8192;
	make_case(&c, names, v, 6);
	expect(ilab_case_check_nic_rx(&c, t, msg, sizeof(msg)), msg, "x 8 KiB buffers");
	ilab_topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_node_without_cpus),
		cmocka_unit_test(test_host_time_limit_edge),
		cmocka_unit_test(test_ring_memory_edge_per_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
