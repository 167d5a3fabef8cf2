/* test_scenario_errors.c — every malformed scenario in tests/data/scenarios/bad-*.yaml is
 * rejected with -EINVAL and "file:line:column: message", at the position worked out by hand
 * from the file (1-based line and column of the offending token). Not the valid scenarios.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/scenario.h"

#define BAD_DIR ILAB_TESTDATA "/scenarios"

struct expect {
	const char *file;
	unsigned line, column;
	const char *message; /* a substring of what follows "file:line:column: " */
};

/* Positions: counted in the files; a mapping's position is its first key (or its '{'). */
static const struct expect expected[] = {
	{ "bad-syntax.yaml", 2, 14, "mapping values are not allowed" },
	{ "bad-unknown-key.yaml", 5, 1, "unknown key 'profil' in scenario" },
	{ "bad-type-onoff.yaml", 10, 18, "map_pages: expected on or off, got 'maybe'" },
	{ "bad-kernel-text.yaml", 6, 9, "kernel: '5.a' is not a version (X.Y, e.g. 6.6, or latest)" },
	{ "bad-kernel-range.yaml", 9, 13, "kernel: 5.20 is not a Linux release from 4.14 to 7.x" },
	{ "bad-kernel-list.yaml", 6, 9, "kernel: expected a version (X.Y or latest), got a list" },
	{ "bad-type-cases.yaml", 7, 8, "cases: expected a list, got a scalar" },
	{ "bad-missing-label.yaml", 9, 5, "case: missing required key 'label'" },
	{ "bad-missing-unit.yaml", 10, 9, "reference figure: missing required key 'unit'" },
	{ "bad-missing-profile.yaml", 2, 1, "scenario: missing required key 'profile'" },
	{ "bad-unknown-profile.yaml", 5, 10, "profile: no machine profile 'nosuchprofile'" },
	{ "bad-range-granule.yaml", 9, 36, "granule: 2048 is out of range [1, 1024]" },
	{ "bad-range-tolerance.yaml", 7, 16, "calibration: 10 is out of range" },
	{ "bad-integer.yaml", 9, 14, "threads: expected an integer, got '2.5'" },
	{ "bad-workload.yaml", 7, 9, "unknown workload 'dma_map_bench'" },
	{ "bad-native-engine.yaml", 6, 9,
	  "engine: workload dma_map_benchmark runs only in simulation (engine: sim)" },
	{ "bad-param.yaml", 9, 27, "unknown parameter 'nic_queues' for workload 'dma_map_benchmark'" },
	{ "bad-node.yaml", 9, 33, "node: node 4 does not exist on kunpeng920 (nodes 0-3)" },
	{ "bad-node-default.yaml", 9, 1,
	  "smmu_node: node 2 does not exist on a100-2node (nodes 0-1) (the workload's default)" },
	{ "bad-metric.yaml", 10, 17, "unknown metric 'latency' for workload 'dma_map_benchmark'" },
	{ "bad-unit.yaml", 12, 15, "unit 'ns' does not match metric 'map_latency'" },
	{ "bad-kind.yaml", 10, 61, "kind: 'guess' is not one of undecided|calibration|prediction" },
	{ "bad-intel-nid.yaml", 8, 48,
	  "intel_iommu_nid: 'patched' is not one of mainline|unit_on_attach|hint" },
	{ "bad-quoted-number.yaml", 10, 40, "value: expected a number, got '240'" },
	{ "bad-duplicate-label.yaml", 10, 12, "duplicate case label 'a' (first at line 8)" },
	{ "bad-duplicate-key.yaml", 5, 1, "duplicate key 'seed' in scenario" },
	{ "bad-seed.yaml", 3, 7, "seed: expected three digits" },
	{ "bad-empty-cases.yaml", 7, 8, "cases: the list is empty" },
	{ "bad-empty.yaml", 1, 1, "the file is empty" },
	{ "bad-not-mapping.yaml", 2, 1, "scenario: expected a mapping, got a list" },
	{ "bad-plot-x.yaml", 8, 6, "x: 'size' is not a parameter of workload 'dma_map_benchmark'" },
	{ "bad-effect-case.yaml", 13, 54, "to: no case is labelled 'c'" },
	{ "bad-effect-noref.yaml", 12, 54, "case 'b' has no published figure for metric 'cmdsync_wait'" },
	{ "bad-effect-same.yaml", 14, 9, "to: the same case as from ('a')" },
	{ "bad-effect-missing-to.yaml", 11, 5, "effect: missing required key 'to'" },
	{ "bad-two-documents.yaml", 12, 1, "a second YAML document: a scenario file holds one" },
	{ "bad-title-lines.yaml", 4, 8, "title: one line of text expected" },
	{ "bad-number-double.yaml", 10, 40, "value: 1e999 is too small or too large for a double" },
	/* workloads' own checks of a case against the machine (struct ilab_workload.check) */
	{ "bad-threads-node.yaml", 9, 1,
	  "case 'a' on kunpeng920: threads: 33, but node 2 has 32 CPUs" },
	{ "bad-nic-buffer.yaml", 8, 1,
	  "case 'a' on kunpeng920: frames_per_buffer x packet_bytes is 6144000 bytes; a receive "
	  "buffer holds at most 4 MiB" },
	{ "bad-allreduce-nodes.yaml", 9, 1,
	  "first_node 1 and nr_nodes 2 need nodes 1-2, the machine has 0-1" },
	/* the same, in src/experiments/case_checks.c: devices, CPUs, memory, host time */
	{ "bad-nic-node.yaml", 9, 1,
	  "case 'a' on kunpeng920: nic_node: kunpeng920 has no NIC on node 0 (NICs on nodes: 2)" },
	{ "bad-smmu-device.yaml", 9, 1,
	  "smmu_node: kunpeng920 has no device behind an IOMMU unit on node 1 (there are on "
	  "nodes: 0, 2)" },
	{ "bad-nic-queues.yaml", 9, 1, "nic_queues: 256 need a CPU each; kunpeng920 has 128" },
	{ "bad-nic-ring-memory.yaml", 9, 1,
	  "the receive rings of 32 queues on node 2 (ring_size 65536 x 4 KiB buffers) need 8.0 GiB "
	  "of simulated memory; a case may use 3 GiB of the node's 4 GiB" },
	{ "bad-allreduce-gpus.yaml", 9, 1,
	  "node 0 of a100-2node has 4 NICs and 4 GPUs; the case uses 8 of each" },
	{ "bad-allreduce-buffer.yaml", 9, 1,
	  "buffer_bytes: 2 x 4 NICs x 17179869184 bytes is 128.0 GiB of simulated memory on each node" },
	{ "bad-ecmdq-no-hw.yaml", 10, 1, "ecmdq: on needs ecmdq_hw: 1" },
	{ "bad-nic-rx-ecmdq.yaml", 9, 1, "ecmdq: on, but nic_rx's SMMU has no ECMDQs" },
	{ "bad-unused-mechanism.yaml", 9, 1,
	  "mechanisms: mode: lazy has no effect on workload allreduce, which does not model it" },
	{ "bad-fio-mechanism.yaml", 8, 1,
	  "mechanisms: ecmdq: on has no effect on workload fio, which does not model it" },
	{ "bad-cmdqv-no-hw.yaml", 8, 1,
	  "case 'a': cmdqv: on, but profile kunpeng920's SMMU has no Tegra241 CMDQV" },
	{ "bad-cmdqv-and-ecmdq.yaml", 8, 1,
	  "case 'a' on grace: ecmdq: on and cmdqv: on: an SMMU has ECMDQs (SMMUv3.3) or a "
	  "Tegra241 CMDQV, not both" },
	{ "bad-cmdqv-unused.yaml", 8, 1,
	  "mechanisms: cmdqv: on has no effect on workload cmdsync_latency" },
	{ "bad-plot-y.yaml", 7, 12, "y: 'latency' is not a metric of workload 'dma_map_benchmark'" },
	{ "bad-fq-strict.yaml", 9, 1, "mechanisms: fq: single needs mode: lazy" },
	{ "bad-fq-size.yaml", 8, 1, "params: fq_size: 3000 is not a power of two >= 2" },
	{ "bad-fq-kind.yaml", 6, 31, "fq: 'global' is not one of percpu|single" },
	{ "bad-fq-unused.yaml", 9, 1,
	  "mechanisms: iova_depot: fixed32 has no effect on workload cmdsync_latency" },
	{ "bad-iterations-hours.yaml", 9, 1,
	  "iterations: 1000000000 CMD_SYNCs would take about 17 minutes of host time (more than the "
	  "10 minutes a case may take)" },
};

#define NR_EXPECTED (sizeof(expected) / sizeof(expected[0]))

static void check_one(const struct expect *e)
{
	char path[512], err[1024], prefix[600];
	struct ilab_scenario *s = (void *)1;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", BAD_DIR, e->file);
	ret = ilab_scenario_load(path, &s, err, sizeof(err));
	if (ret != -EINVAL)
		fail_msg("%s: returned %d, want -EINVAL (err: %s)", e->file, ret, err);
	assert_null(s);
	snprintf(prefix, sizeof(prefix), "%s:%u:%u: ", path, e->line, e->column);
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fail_msg("%s: message '%s' does not start with '%s'", e->file, err, prefix);
	if (!strstr(err + strlen(prefix), e->message))
		fail_msg("%s: message '%s' lacks '%s'", e->file, err, e->message);
}

static void test_each_bad_file_gives_its_position_and_message(void **state)
{
	(void)state;
	for (size_t i = 0; i < NR_EXPECTED; i++)
		check_one(&expected[i]);
}

/* A new bad-*.yaml without an expectation here would go untested: refuse it. */
static void test_every_bad_file_has_an_expectation(void **state)
{
	DIR *d = opendir(BAD_DIR);
	struct dirent *e;
	unsigned seen = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		bool found = false;

		if (strncmp(e->d_name, "bad-", 4) != 0)
			continue;
		for (size_t i = 0; i < NR_EXPECTED; i++)
			found |= strcmp(expected[i].file, e->d_name) == 0;
		if (!found)
			fail_msg("%s has no expected error in this test", e->d_name);
		seen++;
	}
	closedir(d);
	assert_int_equal(seen, NR_EXPECTED);
}

static void test_missing_file_is_enoent_with_the_path(void **state)
{
	struct ilab_scenario *s;
	char err[512];

	(void)state;
	assert_int_equal(ilab_scenario_load(BAD_DIR "/no-such-file.yaml", &s, err, sizeof(err)),
			 -ENOENT);
	assert_null(s);
	assert_non_null(strstr(err, "no-such-file.yaml: "));
}

/* Bad input from memory: a name stands for the file, and no byte sequence crashes the parser. */
static void test_parse_from_memory_names_the_source(void **state)
{
	static const char *const texts[] = {
		"name: [unclosed\n",
		"\t- tab\n",
		"cases: !!binary AAAA\n",
		("name: x\nseed: \"000\"\ntitle: t\nprofile: p\nworkload: { type: cmdsync_latency }\n"
		 "cases:\n  - label: a\n    reference: {}\n"),
		"\xff\xfe\x00garbage",
	};
	struct ilab_scenario *s;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		int ret = ilab_scenario_parse(texts[i], strlen(texts[i]) + (i == 4 ? 3 : 0),
					      "mem.yaml", &s, err, sizeof(err));

		assert_int_equal(ret, -EINVAL);
		assert_null(s);
		assert_int_equal(strncmp(err, "mem.yaml:", 9), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_bad_file_gives_its_position_and_message),
		cmocka_unit_test(test_every_bad_file_has_an_expectation),
		cmocka_unit_test(test_missing_file_is_enoent_with_the_path),
		cmocka_unit_test(test_parse_from_memory_names_the_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
