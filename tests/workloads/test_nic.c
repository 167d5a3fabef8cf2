/* test_nic.c — the NIC model and the two NIC workloads on the simulated kunpeng920: the line
 * rate, the packet-rate and buffer-rate limits give the goodput and packet rate their formulas
 * predict, the stack's cost per buffer adds up as documented, the profile's nic: section drives
 * the seed workloads, the
 * IOMMU modes order as they must when the CPUs are the bottleneck, bad configurations are
 * refused, and the seed 001 / 003 scenarios parse and run at reduced size.
 * Expected values come from the Ethernet framing arithmetic and from the configuration.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "iommulab/nic.h"
#include "iommulab/scenario.h"
#include "iommulab/sim.h"
#include "support/scenario_fixture.h"
#include "support/bare_profile.h"
#include "workloads/nic_env.h"

static struct ilab_nic_env env(enum ilab_nic_env_mode mode)
{
	return (struct ilab_nic_env){ .profile = "kunpeng920", .seed = 1, .nic_node = 2,
				      .mode = mode };
}

static void run_ok(const struct ilab_nic_env *e, const struct ilab_nic_cfg *c,
		   struct ilab_nic_result *r)
{
	char err[512] = "";
	int rc = ilab_nic_env_run(e, c, r, NULL, err, sizeof(err));

	if (rc)
		fail_msg("nic run: %d %s", rc, err);
	assert_int_equal(r->dma_faults, 0);
	assert_int_equal(r->map_errors, 0);
}

/* Passthrough, fast CPUs: the goodput is the line's, 10 x 1448 / 1538 Gbit/s at MTU 1500. */
static void test_passthrough_reaches_line_rate(void **state)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_PASSTHROUGH);
	struct ilab_nic_cfg c = { .queues = 2, .link_gbps = 10, .packet_bytes = 1500,
				  .frames_per_buffer = 1, .ring_size = 16, .stack_ns = 100,
				  .duration_ns = 400000, .warmup_ns = 50000 };
	struct ilab_nic_result r;
	double line = 10.0 * 1448 / 1538;

	(void)state;
	run_ok(&e, &c, &r);
	assert_true(fabs(r.line_gbps - line) < 1e-9);
	assert_true(fabs(r.goodput_gbps - line) / line < 0.02);
	assert_int_equal(r.frames_dropped, 0);
}

/* A NIC packet-rate limit below the line: 0.5 Mpps is what the CPUs receive (lazy mode). */
static void test_packet_rate_limit(void **state)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_LAZY);
	struct ilab_nic_cfg c = { .queues = 4, .max_mpps = 0.5, .packet_bytes = 64,
				  .frames_per_buffer = 1, .ring_size = 16, .stack_ns = 500,
				  .duration_ns = 400000, .warmup_ns = 50000 };
	struct ilab_nic_result r;

	(void)state;
	run_ok(&e, &c, &r);
	assert_true(fabs(r.pps - 5e5) / 5e5 < 0.02);
}

/* A limit on receive buffers (completions), not frames: with LRO (4 frames a buffer) the same
 * 0.25 M buffers/s carry 4x the frames. */
static void test_buffer_rate_limit_counts_buffers(void **state)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_LAZY);
	struct ilab_nic_cfg c = { .queues = 4, .max_buffers_mps = 0.25, .packet_bytes = 64,
				  .frames_per_buffer = 1, .ring_size = 16, .stack_ns = 100,
				  .duration_ns = 400000, .warmup_ns = 50000 };
	struct ilab_nic_result one, four;

	(void)state;
	run_ok(&e, &c, &one);
	c.frames_per_buffer = 4;
	run_ok(&e, &c, &four);
	print_message("0.25 M buffers/s: %.0f frames/s at 1 frame a buffer, %.0f at 4\n", one.pps,
		      four.pps);
	assert_true(fabs(one.pps - 2.5e5) / 2.5e5 < 0.02);
	assert_true(fabs(four.pps - 1e6) / 1e6 < 0.02);
}

/* The stack's cost per buffer is stack_ns per frame + stack_buffer_ns + the payload copy at
 * copy_mbps, rounded once: 4998 + 43 x 1448 B at 7473 MB/s (8332 ns) is 13,330 ns, the same
 * charge as 310 ns per frame, so a CPU-bound run gives the same statistics to the last ns
 * (each CPU's charged_ns: 1 ns less per buffer would show); a copy twice as fast does not. */
static void test_stack_cost_per_buffer_and_copy(void **state)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_PASSTHROUGH);
	struct ilab_nic_cfg c = { .queues = 2, .link_gbps = 200, .packet_bytes = 1500,
				  .frames_per_buffer = 43, .ring_size = 16, .stack_ns = 310,
				  .duration_ns = 400000, .warmup_ns = 50000 };
	struct ilab_nic_result per_frame, split, fast;
	char *st_frame = NULL, *st_split = NULL, err[512] = "";

	(void)state;
	if (ilab_nic_env_run(&e, &c, &per_frame, &st_frame, err, sizeof(err)))
		fail_msg("%s", err);
	c.stack_ns = 0;
	c.stack_buffer_ns = 4998;
	c.copy_mbps = 7473;
	if (ilab_nic_env_run(&e, &c, &split, &st_split, err, sizeof(err)))
		fail_msg("%s", err);
	c.copy_mbps = 2 * 7473;
	run_ok(&e, &c, &fast);
	print_message("goodput %.3f / %.3f / %.3f Gbit/s (line %.1f)\n", per_frame.goodput_gbps,
		      split.goodput_gbps, fast.goodput_gbps, per_frame.line_gbps);
	assert_true(per_frame.goodput_gbps < per_frame.line_gbps * 0.9); /* CPU-bound */
	assert_non_null(st_frame);
	assert_non_null(strstr(st_frame, "\"charged_ns\""));
	assert_string_equal(st_split, st_frame);
	assert_true(split.goodput_gbps == per_frame.goodput_gbps);
	assert_true(fast.goodput_gbps > split.goodput_gbps * 1.2);
	free(st_frame);
	free(st_split);
}

/* With nic_from_profile the NIC and the stack are the profile's nic: section, whatever the cfg
 * says: kunpeng920's completion rate (nic.rx_completions_kps, read here from the profile)
 * bounds a lazy small-packet run that the cfg alone would refuse (no rate at all); a profile
 * without a receive stack is refused by name. */
static void test_nic_from_profile(void **state)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_LAZY);
	struct ilab_nic_cfg c = { .queues = 32, .packet_bytes = 64, .frames_per_buffer = 1,
				  .ring_size = 16, .duration_ns = 400000, .warmup_ns = 50000 };
	struct ilab_nic_result r;
	struct ilab_profile prof;
	char err[512] = "";
	char bare[96], path[512];
	double rate;

	(void)state;
	assert_int_equal(ilab_profile_resolve(e.profile, path, sizeof(path), err, sizeof(err)), 0);
	assert_int_equal(ilab_profile_load(path, &prof, err, sizeof(err)), 0);
	rate = prof.nic.rx_completions_kps * 1e3;
	assert_true(rate > 0);
	assert_int_equal(ilab_nic_env_run(&e, &c, &r, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rate"));
	e.nic_from_profile = true;
	run_ok(&e, &c, &r);
	print_message("kunpeng920's NIC: %.0f packets/s (profile: %.0f)\n", r.pps, rate);
	assert_true(fabs(r.pps - rate) / rate < 0.02);
	assert_int_equal(ilab_test_bare_profile(bare, sizeof(bare)), 0);
	e.profile = bare; /* NICs, but no nic: section: no receive stack */
	assert_int_equal(ilab_nic_env_run(&e, &c, &r, NULL, err, sizeof(err)), -EINVAL);
	unlink(bare);
	if (!strstr(err, "profile bare") || !strstr(err, "describes no receive stack"))
		fail_msg("got '%s'", err);
}

/* CPUs slower than the line: every IOMMU cost shows, passthrough > lazy > strict. */
static void test_modes_order_when_cpu_bound(void **state)
{
	struct ilab_nic_cfg c = { .queues = 2, .link_gbps = 100, .packet_bytes = 1500,
				  .frames_per_buffer = 4, .ring_size = 16, .stack_ns = 400,
				  .duration_ns = 300000, .warmup_ns = 50000 };
	struct ilab_nic_result pt, lazy, strict;
	struct ilab_nic_env e;

	(void)state;
	e = env(ILAB_NIC_ENV_PASSTHROUGH);
	run_ok(&e, &c, &pt);
	e = env(ILAB_NIC_ENV_LAZY);
	run_ok(&e, &c, &lazy);
	e = env(ILAB_NIC_ENV_STRICT);
	run_ok(&e, &c, &strict);
	assert_true(pt.goodput_gbps < pt.line_gbps); /* really CPU-bound */
	assert_true(pt.goodput_gbps > lazy.goodput_gbps);
	assert_true(lazy.goodput_gbps > strict.goodput_gbps);
	assert_true(strict.frames_dropped > 0); /* the rings overflow */
}

static void test_bad_configuration_is_refused(void **state)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_LAZY);
	struct ilab_nic_cfg c = { .queues = 0, .link_gbps = 10, .packet_bytes = 1500,
				  .frames_per_buffer = 1, .ring_size = 16, .duration_ns = 1000 };
	struct ilab_nic_result r;
	char err[256] = "";

	(void)state;
	assert_int_equal(ilab_nic_env_run(&e, &c, &r, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "queues"));
	c.queues = 1;
	c.link_gbps = 0;
	assert_int_equal(ilab_nic_env_run(&e, &c, &r, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rate"));
}

/* A profile without a receive stack is the scenario's error when it is loaded, at its
 * profile: key (exit 2), not a FAILED case per run. */
static void test_profile_without_stack_is_a_load_error(void **state)
{
	char err[1024] = "";

	(void)state;
	assert_int_equal(scenario_load_without_nic("kunpeng920", "nic_rx", err, sizeof(err)), -EINVAL);
	if (!strstr(err, "s.yaml:4:10: profile: profile kunpeng920 describes no receive stack"))
		fail_msg("got '%s'", err);
	assert_int_equal(scenario_load_without_nic("kunpeng920", "nic_throughput", err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, "s.yaml:4:10: profile: profile kunpeng920 describes no receive stack"))
		fail_msg("got '%s'", err);
}

static void set_param(struct ilab_case *c, const char *name, double v)
{
	for (unsigned i = 0; i < c->nr_params; i++)
		if (!strcmp(c->params[i].name, name)) {
			c->params[i].value = v;
			return;
		}
	fail_msg("case has no parameter %s", name);
}

/* seed 003 at --quick size: every case runs and stays under the 200 Gbit/s line, and with 6
 * queues (CPU-bound) strict invalidation costs throughput against passthrough. At this size
 * one buffer (43 frames) is 2.5 Gbit/s of the 200 µs window: too coarse for finer claims. */
static void test_seed003_scenario_runs_quick(void **state)
{
	struct ilab_scenario *s = NULL;
	struct ilab_scenario_result *res;
	char err[512];

	(void)state;
	char path[1024];

	if (ilab_scenario_resolve("003", path, sizeof(path), err, sizeof(err)) ||
	    ilab_scenario_load(path, &s, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(s->workload->name, "nic_throughput");
	assert_int_equal(s->nr_cases, 8);
	assert_int_equal(ilab_scenario_run(s, &(struct ilab_run_options){ .quick = true }, &res,
					   err, sizeof(err)), 0);
	double q6_pt = -1, q6_strict = -1;

	for (unsigned i = 0; i < res->nr_cases; i++) {
		const struct ilab_figure *f = ilab_case_result_find(&res->cases[i], "throughput");

		if (res->cases[i].status != ILAB_CASE_OK)
			fail_msg("%s: %s", s->cases[i].label, res->cases[i].message);
		assert_non_null(f);
		assert_true(f->value > 0 && f->value < 200);
		if (!strcmp(s->cases[i].label, "q6-passthrough"))
			q6_pt = f->value;
		if (!strcmp(s->cases[i].label, "q6-strict-cmdq"))
			q6_strict = f->value;
	}
	assert_true(q6_pt > 0 && q6_strict > 0);
	if (q6_pt < q6_strict + 5) /* two buffers' worth: more than the window's granularity */
		fail_msg("6 queues: passthrough %.1f Gbit/s, strict %.1f", q6_pt, q6_strict);
	ilab_scenario_result_free(res);
	ilab_scenario_free(s);
}

/* seed 001, one case at a reduced size (8 processes, 1 ms): strict direct lookup runs and
 * reports a packet rate below the NIC's limit. */
static void test_seed001_case_runs_reduced(void **state)
{
	struct ilab_scenario *s = NULL;
	struct ilab_case_result r = { 0 };
	struct ilab_case c;
	char err[512] = "";

	(void)state;
	char path[1024];

	if (ilab_scenario_resolve("001", path, sizeof(path), err, sizeof(err)) ||
	    ilab_scenario_load(path, &s, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(s->workload->name, "nic_rx");
	assert_int_equal(s->nr_cases, 3);
	assert_string_equal(s->cases[1].label, "direct-strict");
	c = s->cases[1];
	set_param(&c, "processes", 8);
	set_param(&c, "duration_us", 1000);
	set_param(&c, "warmup_us", 200);
	if (s->workload->run(s, &c, &r, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(r.nr_figures, 1);
	assert_string_equal(r.figures[0].metric, "rx_packets_per_s");
	assert_true(r.figures[0].value > 0 && r.figures[0].value < 1.25e6 * 1.01);
	free(r.stats_json);
	ilab_scenario_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passthrough_reaches_line_rate),
		cmocka_unit_test(test_packet_rate_limit),
		cmocka_unit_test(test_buffer_rate_limit_counts_buffers),
		cmocka_unit_test(test_stack_cost_per_buffer_and_copy),
		cmocka_unit_test(test_nic_from_profile),
		cmocka_unit_test(test_profile_without_stack_is_a_load_error),
		cmocka_unit_test(test_modes_order_when_cpu_bound),
		cmocka_unit_test(test_bad_configuration_is_refused),
		cmocka_unit_test(test_seed003_scenario_runs_quick),
		cmocka_unit_test(test_seed001_case_runs_reduced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
