/* test_testbed.c — the one machine set-up (include/iommulab/testbed.h): every smmu: cost and
 * the range-invalidation setting of a profile reach the board options, the ECMDQ count follows
 * the CPU count, a simulated testbed comes up with its device, and every failure returns a
 * message and leaves a testbed that ilab_testbed_down undoes (plat can be set up again), and
 * the run's statistics carry every modelled SMMU's counters.
 * Not a test of the board (tests/hw) nor of the simulator's costs (test_sim_stack.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"

static struct ilab_profile prof; /* kunpeng920, loaded once */

static int load_profile(void **state)
{
	char err[512];

	(void)state;
	if (ilab_profile_load(PROFILE, &prof, err, sizeof(err))) {
		print_error("profile: %s\n", err);
		return -1;
	}
	return 0;
}

/* Distinct values for every cost, so that a cost copied into the wrong field shows. */
static void test_board_opts_take_every_smmu_cost_of_the_profile(void **state)
{
	struct ilab_profile p = { .smmu_command_ns = 11, .smmu_sync_ns = 22,
				  .smmu_tlbi_sync_ns = 33, .smmu_tlb_lookup_ns = 44,
				  .smmu_tlbi_ns = 55,
				  .smmu_ril = 0 };
	struct ilab_testbed_opts o = { .profile = &p, .seed = 7, .smmu_mask = 4,
				       .cma = ILAB_CMA_PERNUMA, .cma_global_node = 1,
				       .process_batch = 16 };
	struct ilab_board_opts bo;
	struct smmu_config scfg;

	(void)state;
	ilab_testbed_board_opts(&o, NULL, &bo, &scfg);
	assert_int_equal(bo.smmu_command_ns, 11);
	assert_int_equal(bo.smmu_sync_ns, 22);
	assert_int_equal(bo.smmu_tlbi_sync_ns, 33);
	assert_int_equal(bo.smmu_tlb_lookup_ns, 44);
	assert_int_equal(bo.smmu_tlbi_ns, 55);
	assert_ptr_equal(bo.smmu_cfg, &scfg);
	assert_false(scfg.ril); /* the profile says: no range invalidation */
	assert_int_equal(scfg.seed, 7);
	assert_int_equal(scfg.ecmdq_count, 0);
	assert_int_equal(bo.smmu_mask, 4);
	assert_int_equal(bo.cma, ILAB_CMA_PERNUMA);
	assert_int_equal(bo.cma_global_node, 1);
	assert_int_equal(bo.process_batch, 16);

	p.smmu_ril = -1; /* the profile does not say: the model's default (RIL implemented) */
	ilab_testbed_board_opts(&o, NULL, &bo, &scfg);
	assert_true(scfg.ril);
}

/* kunpeng920 has 128 CPUs: 128 ECMDQs, SMMUv3.3, consumed serially. */
static void test_ecmdq_per_cpu_rounds_the_cpu_count_to_a_power_of_two(void **state)
{
	struct ilab_testbed_opts o = { .profile = &prof, .ecmdq_per_cpu = true };
	struct ilab_board_opts bo;
	struct smmu_config scfg;
	struct ilab_topo *t;
	char err[256];

	(void)state;
	assert_int_equal(ilab_topo_load("synthetic:pack:2 core:3 pu:1", &t, err, sizeof(err)), 0);
	ilab_testbed_board_opts(&o, t, &bo, &scfg);
	assert_int_equal(scfg.ecmdq_count, 8); /* 6 CPUs */
	assert_int_equal(scfg.arch_minor, 3);
	assert_false(scfg.ecmdq_parallel);
	ilab_topo_free(t);
}

/* Up with only nic0's SMMU modelled; returns nic0's topology entry. */
static const struct ilab_device *up_with_nic0(struct ilab_testbed *tb, struct ilab_testbed_opts *o)
{
	const struct ilab_device *td;
	char err[512] = "";

	assert_int_equal(ilab_testbed_load_topology(tb, o, err, sizeof(err)), 0);
	td = ilab_topo_find_device(tb->topo, "nic0");
	assert_non_null(td);
	o->smmu_mask = 1ull << td->smmu;
	if (ilab_testbed_up(tb, o, err, sizeof(err)))
		fail_msg("up: %s", err);
	return td;
}

static void test_simulated_testbed_comes_up_with_its_device(void **state)
{
	struct ilab_testbed tb = { 0 };
	struct ilab_testbed_opts o = { .profile = &prof, .seed = 1, .cma = ILAB_CMA_GLOBAL };
	const struct ilab_device *td;
	struct ilab_dev *dev;
	char err[512] = "";

	(void)state;
	td = up_with_nic0(&tb, &o);
	assert_non_null(tb.sim);
	assert_true(tb.plat_up);
	assert_int_equal(plat_engine_kind(), PLAT_ENGINE_SIM);
	dev = ilab_testbed_dev(&tb, "nic0");
	assert_non_null(dev);
	assert_non_null(dev->iommu); /* the driver was probed on its SMMU */
	assert_null(ilab_board_iommu(tb.board, td->smmu == 0 ? 1 : 0)); /* only that one */
	/* an SMMU left out of the board reads as absent: no model, no MMIO window */
	assert_non_null(ilab_board_mmio(tb.board, td->smmu));
	assert_null(ilab_board_smmu(tb.board, td->smmu == 0 ? 1 : 0));
	assert_null(ilab_board_mmio(tb.board, td->smmu == 0 ? 1 : 0));
	assert_null(ilab_board_mmio(tb.board, ilab_board_nr_smmus(tb.board)));
	assert_null(ilab_testbed_dev(&tb, "nosuchdev"));
	assert_string_equal(ilab_testbed_sim_error(&tb), "");
	/* up twice is refused, and leaves the testbed as it was */
	assert_int_equal(ilab_testbed_up(&tb, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "already up"));
	ilab_testbed_down(&tb);
	assert_null(tb.board);
	assert_null(tb.sim);
	assert_false(tb.plat_up);
}

/* Each failure: an error code, a message, and a down that lets the next set-up succeed. */
static void expect_failure(const struct ilab_testbed_opts *o, const char *what)
{
	struct ilab_testbed tb = { 0 };
	char err[512] = "";

	assert_true(ilab_testbed_up(&tb, o, err, sizeof(err)) < 0);
	if (!strstr(err, what))
		fail_msg("error '%s' does not mention '%s'", err, what);
	ilab_testbed_down(&tb);
	assert_null(tb.topo);
	assert_false(tb.plat_up);
}

static void test_every_failure_has_a_message_and_down_undoes_it(void **state)
{
	struct ilab_testbed_opts none = { .seed = 1 };
	struct ilab_testbed_opts bad_topo = { .profile = &prof, .topology = "/nonexistent.xml" };
	struct ilab_testbed_opts bad_node = { .profile = &prof, .cma = ILAB_CMA_GLOBAL,
					      .cma_global_node = 99 };
	struct ilab_testbed_opts bad_drv = { .profile = &prof, .smmu_mask = 1,
					     .drv.cmdq_log2 = 20 };
	struct ilab_testbed tb = { 0 };
	char err[512] = "";

	(void)state;
	expect_failure(&none, "needs a profile");
	expect_failure(&bad_topo, "topology");
	expect_failure(&bad_node, "CMA global node 99");  /* after plat_init: plat undone */
	expect_failure(&bad_drv, "SMMUv3 driver probe"); /* after the agents started */
	assert_int_equal(ilab_testbed_up(NULL, &none, err, sizeof(err)), -EINVAL);
	/* plat and the simulator were released every time: a good set-up still works */
	bad_node.cma_global_node = 0;
	if (ilab_testbed_up(&tb, &bad_node, err, sizeof(err)))
		fail_msg("up after failures: %s", err);
	ilab_testbed_down(&tb);
	ilab_testbed_down(&tb); /* twice: a zeroed testbed is fine */
	ilab_testbed_down(NULL);
}

static json_int_t jget(json_t *root, const char *path)
{
	json_t *v = root;
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = json_object_get(v, k);
	if (!json_is_integer(v))
		fail_msg("%s: not an integer", path);
	return json_integer_value(v);
}

/* The statistics JSON: the simulator's sections plus one object per modelled SMMU (and only
 * those), named as in the topology, whose queue counters agree with what the driver issued. */
static void test_stats_json_has_each_modelled_smmu(void **state)
{
	struct ilab_testbed tb = { 0 };
	struct ilab_testbed_opts o = { .profile = &prof, .seed = 1, .cma = ILAB_CMA_GLOBAL };
	const struct ilab_device *td;
	json_t *root, *smmus, *smmu;
	char *text;
	const char *name;

	(void)state;
	assert_null(ilab_testbed_stats_json(&tb)); /* nothing up: no statistics */
	td = up_with_nic0(&tb, &o);
	text = ilab_testbed_stats_json(&tb);
	assert_non_null(text);
	root = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(root);
	assert_non_null(json_object_get(root, "cpus"));   /* the simulator's part */
	assert_null(json_object_get(root, "smmus")); /* the key before VT-d */
	smmus = json_object_get(root, "iommus");
	assert_int_equal(json_object_size(smmus), 1);     /* only the modelled SMMU */
	name = json_object_iter_key(json_object_iter(smmus));
	/* keyed by the unit's topology name: kunpeng920's are smmu0..smmu3 */
	assert_true(!strncmp(name, "smmu", 4) && name[4] == (char)('0' + td->smmu) && !name[5]);
	smmu = json_object_get(smmus, name);
	assert_non_null(smmu);
	assert_int_equal(jget(smmu, "node"), ilab_board_smmu_node(tb.board, td->smmu));
	assert_true(jget(smmu, "caches.tlb.capacity") > 0);
	/* probing translates nothing: no STE looked up yet (a counter is never negative, so the
	 * bound that stood here could not fail) */
	assert_int_equal(jget(smmu, "caches.ste.lookups"), 0);
	assert_int_equal(jget(smmu, "caches.ste.misses"), 0);
	/* the probe issued commands and waited for them: model and driver agree */
	assert_true(jget(smmu, "driver.cmds") > 0);
	assert_int_equal(jget(smmu, "cmdq.commands"), jget(smmu, "driver.cmds"));
	assert_int_equal(jget(smmu, "cmdq.by_opcode.0x46"), jget(smmu, "driver.syncs")); /* CMD_SYNC */
	assert_null(json_object_get(smmu, "ecmdqs")); /* the profile's SMMU has none */
	json_decref(root);
	ilab_testbed_down(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_board_opts_take_every_smmu_cost_of_the_profile),
		cmocka_unit_test(test_ecmdq_per_cpu_rounds_the_cpu_count_to_a_power_of_two),
		cmocka_unit_test(test_simulated_testbed_comes_up_with_its_device),
		cmocka_unit_test(test_every_failure_has_a_message_and_down_undoes_it),
		cmocka_unit_test(test_stats_json_has_each_modelled_smmu),
	};

	return cmocka_run_group_tests(tests, load_profile, NULL);
}
