/* test_sim_profile.c — machine profiles: the shipped Kunpeng 920 profile loads; malformed
 * ones are refused with "file:line:column: cause"; the distance formulas are those of the
 * documentation; the nic: section is read and checked. Not a test of the simulator's behaviour.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/topo.h"
#include "sim/sim_fixture.h"

static const char good[] =
	"name: t\n"
	"topology: kunpeng920\n"
	"memory:\n"
	"  local_ns: 100\n"
	"  line_stream_ns: 6\n"
	"cache:\n"
	"  hit_ns: 2\n"
	"  atomic_local_ns: 8\n"
	"  transfer_local_ns: 50\n"
	"mmio:\n"
	"  read_local_ns: 400\n"
	"  write_local_ns: 50\n"
	"smmu:\n"
	"  command_ns: 30\n"
	"  sync_ns: 50\n"
	"  tlb_lookup_ns: 5\n";

static void shipped_profile_loads(void **state)
{
	struct ilab_profile p;

	assert_int_equal(fix_load_profile(&p), 0);
	assert_string_equal(p.name, "kunpeng920");
	assert_string_equal(p.topology, "kunpeng920");
	assert_true(p.mem.local_ns > 0);
	assert_true(p.transfer.local_ns > 0);
	assert_true(p.atomic_local_ns > 0);
	assert_true(ilab_profile_compute_ns(&p, "iova_alloc_ns", 0) > 0);
	assert_int_equal(ilab_profile_compute_ns(&p, "no_such_charge", 77), 77);
}

static void formulas_follow_the_documentation(void **state)
{
	struct ilab_profile p;
	char err[256];
	uint64_t ns;

	assert_int_equal(ilab_profile_parse(good, sizeof(good) - 1, "t.yaml", &p, err, sizeof(err)),
			 0);
	/* ACPI SLIT: latency relative to local = 10 */
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 10, &ns), 0);
	assert_int_equal(ns, 100);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 32, &ns), 0);
	assert_int_equal(ns, 320);
	/* transfer: local transfer + remote memory penalty */
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_TRANSFER, 16, &ns), 0);
	assert_int_equal(ns, 50 + 60);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MMIO_READ, 25, &ns), 0);
	assert_int_equal(ns, 400 + 150);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MMIO_WRITE, 25, &ns), 0);
	assert_int_equal(ns, 50 + 75);
	/* smmu.tlbi_sync_ns is optional: without it a sync after TLBIs costs no extra; without
	 * smmu.tlbi_ns a TLBI costs command_ns like any command (no invalidation engine) */
	assert_int_equal(p.smmu_tlbi_sync_ns, 0);
	assert_int_equal(p.smmu_tlbi_ns, 0);
}

static void tlbi_sync_ns_is_read(void **state)
{
	static const char text[] =
		"name: t\ntopology: x\n"
		"memory: {local_ns: 100, line_stream_ns: 6}\n"
		"cache: {hit_ns: 2, atomic_local_ns: 8, transfer_local_ns: 50}\n"
		"mmio: {read_local_ns: 400, write_local_ns: 50}\n"
		"smmu: {command_ns: 30, sync_ns: 50, tlbi_sync_ns: 420, tlbi_ns: 67, tlb_lookup_ns: 5}\n";
	struct ilab_profile p;
	char err[256];

	(void)state;
	assert_int_equal(ilab_profile_parse(text, sizeof(text) - 1, "t.yaml", &p, err, sizeof(err)),
			 0);
	assert_int_equal(p.smmu_tlbi_sync_ns, 420);
	assert_int_equal(p.smmu_tlbi_ns, 67);
	assert_int_equal(p.smmu_sync_ns, 50);
}

static void expect_error(const char *text, const char *where, const char *cause);

/* smmu.cmd_readahead_entries and smmu.sync_waits_all_queues: read when given, 64 and off when
 * not, refused when not a count of commands (1 .. 2^19) or not a boolean. */
static void smmu_queue_keys_are_read_and_checked(void **state)
{
	static const char head[] =
		"name: t\ntopology: x\n"
		"memory: {local_ns: 100, line_stream_ns: 6}\n"
		"cache: {hit_ns: 2, atomic_local_ns: 8, transfer_local_ns: 50}\n"
		"mmio: {read_local_ns: 400, write_local_ns: 50}\n"
		"smmu:\n  command_ns: 30\n  sync_ns: 50\n  tlb_lookup_ns: 5\n";
	static const struct {
		const char *tail, *where, *cause;
	} bad[] = {
		{ "  cmd_readahead_entries: 0\n", "bad.yaml:10:26", "1..524288" },
		{ "  cmd_readahead_entries: 524289\n", "bad.yaml:10:26", "got '524289'" },
		{ "  cmd_readahead_entries: 99999999999999999999999\n", "bad.yaml:10:26", "1..524288" },
		{ "  cmd_readahead_entries: -4\n", "bad.yaml:10:26", "got '-4'" },
		{ "  cmd_readahead_entries: 16k\n", "bad.yaml:10:26", "got '16k'" },
		{ "  cmd_readahead_entries: \"64\"\n", "bad.yaml:10:26", "number of commands" },
		{ "  cmd_readahead_entries: [64]\n", "bad.yaml:10:26", "number of commands" },
		{ "  sync_waits_all_queues: maybe\n", "bad.yaml:10:26", "true or false" },
		{ "  sync_waits_all_queues: true\n  sync_waits_all_queues: false\n", "bad.yaml:11:3",
		  "given twice" },
		{ "  sync_wait_all_queues: true\n", "bad.yaml:10:3", "unknown key" },
		{ "  invalidations_in_flight: 0\n", "bad.yaml:10:28", "0 is out of range: 1..65536" },
		{ "  invalidations_in_flight: 65537\n", "bad.yaml:10:28", "65537 is out of range: 1..65536" },
		/* the Tegra241 CMDQV's counts: powers of two, VINTFs at most the VCMDQs */
		{ "  cmdqv_vcmdqs: 12\n  cmdqv_vintfs: 1\n", "bad.yaml:10:17",
		  "power of two from 1 to 128, got '12'" },
		{ "  cmdqv_vcmdqs: 256\n  cmdqv_vintfs: 1\n", "bad.yaml:10:17", "got '256'" },
		{ "  cmdqv_vintfs: 128\n  cmdqv_vcmdqs: 128\n", "bad.yaml:10:17", "from 1 to 64" },
		{ "  cmdqv_vcmdqs: 4\n  cmdqv_vintfs: 8\n", "bad.yaml:7:3",
		  "cmdqv_vintfs (8) exceeds cmdqv_vcmdqs (4)" },
		{ "  cmdqv_vcmdqs: 4\n", "bad.yaml:7:3", "go together" },
	};
	struct ilab_profile p;
	char text[1024], err[256];

	(void)state;
	assert_int_equal(ilab_profile_parse(head, sizeof(head) - 1, "t.yaml", &p, err, sizeof(err)),
			 0);
	assert_int_equal(p.smmu_cmd_readahead, 64);
	assert_int_equal(p.smmu_sync_all_queues, 0);
	assert_int_equal(p.smmu_inv_in_flight, 0); /* no bound unless the profile says */
	assert_int_equal(p.smmu_cmdqv_vcmdqs, 0); /* no CMDQV unless the profile says */
	snprintf(text, sizeof(text), "%s  cmdqv_vcmdqs: 128\n  cmdqv_vintfs: 64\n", head);
	assert_int_equal(ilab_profile_parse(text, strlen(text), "t.yaml", &p, err, sizeof(err)), 0);
	assert_int_equal(p.smmu_cmdqv_vcmdqs, 128);
	assert_int_equal(p.smmu_cmdqv_vintfs, 64);
	snprintf(text, sizeof(text), "%s  cmd_readahead_entries: 1\n  sync_waits_all_queues: true\n"
		 "  invalidations_in_flight: 16\n", head);
	assert_int_equal(ilab_profile_parse(text, strlen(text), "t.yaml", &p, err, sizeof(err)), 0);
	assert_int_equal(p.smmu_inv_in_flight, 16);
	assert_int_equal(p.smmu_cmd_readahead, 1);
	assert_int_equal(p.smmu_sync_all_queues, 1);
	snprintf(text, sizeof(text), "%s  cmd_readahead_entries: 524288\n"
		 "  sync_waits_all_queues: off\n", head);
	assert_int_equal(ilab_profile_parse(text, strlen(text), "t.yaml", &p, err, sizeof(err)), 0);
	assert_int_equal(p.smmu_cmd_readahead, 524288);
	assert_int_equal(p.smmu_sync_all_queues, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", head, bad[i].tail);
		expect_error(text, bad[i].where, bad[i].cause);
	}
}

/* A number with leading zeros is decimal, in every key, as YAML 1.2's core schema reads
 * [0-9]+ (§10.3.2): 016 is 16, never YAML 1.1's octal 14 (docs/simulation.md, "Profile
 * numbers"). The prefixed forms 0x and 0o are refused with one line. */
static void leading_zeros_are_decimal(void **state)
{
	static const char head[] =
		"name: t\ntopology: x\n"
		"memory: {local_ns: 0100, line_stream_ns: 06}\n"
		"cache: {hit_ns: 2, atomic_local_ns: 8, transfer_local_ns: 50}\n"
		"mmio: {read_local_ns: 400, write_local_ns: 50}\n"
		"smmu:\n  command_ns: 030\n  sync_ns: 50\n  tlb_lookup_ns: 5\n";
	struct ilab_profile p;
	char text[1024], err[256];

	(void)state;
	snprintf(text, sizeof(text), "%s  cmdqv_vcmdqs: 016\n  cmdqv_vintfs: 08\n"
		 "  cmd_readahead_entries: 010\n  invalidations_in_flight: 010\n", head);
	assert_int_equal(ilab_profile_parse(text, strlen(text), "t.yaml", &p, err, sizeof(err)), 0);
	assert_int_equal(p.mem.local_ns, 100);
	assert_int_equal(p.mem_line_ns, 6);
	assert_int_equal(p.smmu_command_ns, 30);
	assert_int_equal(p.smmu_cmdqv_vcmdqs, 16);
	assert_int_equal(p.smmu_cmdqv_vintfs, 8);
	assert_int_equal(p.smmu_cmd_readahead, 10);
	assert_int_equal(p.smmu_inv_in_flight, 10);
	snprintf(text, sizeof(text), "%s  cmdqv_vcmdqs: 0x10\n  cmdqv_vintfs: 1\n", head);
	expect_error(text, "bad.yaml:10:17", "power of two from 1 to 128, got '0x10'");
	snprintf(text, sizeof(text), "%s  invalidations_in_flight: 0o20\n", head);
	expect_error(text, "bad.yaml:10:28", "expected a non-negative integer (ns), got '0o20'");
}

static void tables_override_formulas(void **state)
{
	static const char text[] =
		"name: t\ntopology: x\n"
		"memory: {local_ns: 100, line_stream_ns: 6, latency_by_distance: {16: 130, 32: 210}}\n"
		"cache: {hit_ns: 2, atomic_local_ns: 8, transfer_local_ns: 50}\n"
		"mmio: {read_local_ns: 400, write_local_ns: 50}\n"
		"smmu: {command_ns: 30, sync_ns: 50, tlb_lookup_ns: 5}\n";
	struct ilab_profile p;
	struct ilab_sim_machine m;
	struct ilab_sim *s = NULL;
	int cpu_node[2] = { 0, 1 };
	unsigned slit_ok[4] = { 10, 16, 16, 10 }, slit_bad[4] = { 10, 20, 20, 10 };
	char err[256];
	uint64_t ns;

	assert_int_equal(ilab_profile_parse(text, sizeof(text) - 1, "t.yaml", &p, err, sizeof(err)),
			 0);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 16, &ns), 0);
	assert_int_equal(ns, 130);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_TRANSFER, 32, &ns), 0);
	assert_int_equal(ns, 50 + 110);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 20, &ns), -ENOENT);
	m.nr_nodes = 2;
	m.nr_cpus = 2;
	m.cpu_node = cpu_node;
	m.distance = slit_ok;
	assert_int_equal(ilab_sim_create(&m, &p, NULL, &s, err, sizeof(err)), 0);
	ilab_sim_destroy(s);
	m.distance = slit_bad;
	assert_int_equal(ilab_sim_create(&m, &p, NULL, &s, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "distance 20"));
}

/* text, expected "name:line:col" prefix, a word of the cause */
static void expect_error(const char *text, const char *where, const char *cause)
{
	struct ilab_profile p;
	char err[256];

	assert_int_equal(ilab_profile_parse(text, strlen(text), "bad.yaml", &p, err, sizeof(err)),
			 -EINVAL);
	if (strncmp(err, where, strlen(where)) || !strstr(err, cause))
		fail_msg("got '%s', expected '%s... %s'", err, where, cause);
}

/* The good profile with its first `from` overwritten by `to` (same length) must fail so. */
static void expect_error_edit(const char *from, const char *to, const char *where,
			      const char *cause)
{
	char buf[1024];
	char *at;

	snprintf(buf, sizeof(buf), "%s", good);
	at = strstr(buf, from);
	assert_non_null(at);
	assert_int_equal(strlen(from), strlen(to));
	memcpy(at, to, strlen(to));
	expect_error(buf, where, cause);
}

static void malformed_profiles_name_file_line_column(void **state)
{
	char buf[1024];

	/* YAML syntax: an unclosed flow mapping */
	expect_error("name: t\nmemory: {local_ns: 1\n", "bad.yaml:3:1:", "");
	/* unknown key, on line 4 column 3 */
	expect_error_edit("local_ns", "lokal_ns", "bad.yaml:4:3:", "unknown key 'lokal_ns'");
	/* not an integer */
	expect_error_edit("400", "4e2", "bad.yaml:11:18:", "non-negative integer");
	/* quoted, a number is a string (as in scenarios) */
	expect_error_edit("400", "'4'", "bad.yaml:11:18:", "got the string '4'");
	/* negative */
	expect_error_edit(" 30", " -3", "bad.yaml:14:15:", "non-negative integer");
	/* missing key: reported at its section */
	expect_error("name: t\ntopology: x\nmemory:\n  local_ns: 1\n", "bad.yaml:4:3:",
		     "missing key 'line_stream_ns'");
	/* duplicate key */
	snprintf(buf, sizeof(buf), "%sname: u\n", good);
	expect_error(buf, "bad.yaml:17:1:", "given twice");
	/* a section that is not a mapping */
	expect_error("name: t\ntopology: x\nmemory: 5\n", "bad.yaml:3:9:", "expected a mapping");
	/* empty file */
	expect_error("", "bad.yaml:1:1:", "empty");
	/* an empty name (the CLI printed "profile " and JSON "profile": "") or topology */
	expect_error_edit("name: t", "name:  ", "bad.yaml:1:6:", "name: must not be empty");
	expect_error("name: t\ntopology: ''\n", "bad.yaml:2:11:", "topology: must not be empty");
	/* a latency of 0: simulated time could stand still (a timed bench never ended) */
	expect_error_edit("hit_ns: 2", "hit_ns: 0", "bad.yaml:7:11:", "at least 1 ns");
	expect_error_edit("atomic_local_ns: 8", "atomic_local_ns: 0", "bad.yaml:8:20:",
			  "at least 1 ns");
	expect_error("name: t\ntopology: x\n"
		     "memory: {local_ns: 100, line_stream_ns: 6, latency_by_distance: {16: 0}}\n",
		     "bad.yaml:3:70:", "at least 1 ns");
	/* a compute name nothing reads (a typo would otherwise charge nothing, silently) */
	snprintf(buf, sizeof(buf), "%scompute:\n  iova_alloc_ns: 30\n  iova_aloc_ns: 30\n", good);
	expect_error(buf, "bad.yaml:19:3:", "unknown constant 'iova_aloc_ns'");
	snprintf(buf, sizeof(buf), "%scompute:\n  call_ns: 5\n", good);
	expect_error(buf, "bad.yaml:18:3:", "unknown constant 'call_ns'");
}

/* Every name the simulator reads is accepted in compute:, and read back. */
static void compute_accepts_every_name_read(void **state)
{
	char buf[2048], err[256];
	struct ilab_profile p;
	size_t n;

	n = (size_t)snprintf(buf, sizeof(buf), "%scompute:\n", good);
	for (unsigned i = 0; i < PLAT_CHARGE_NR; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "  %s: %u\n",
				      ilab_sim_charge_name((enum plat_charge)i), 100 + i);
	assert_true(n < sizeof(buf));
	if (ilab_profile_parse(buf, n, "all.yaml", &p, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < PLAT_CHARGE_NR; i++)
		assert_int_equal(ilab_profile_compute_ns(&p, ilab_sim_charge_name((enum plat_charge)i), 0),
				 100 + i);
}

/* The nic: section: every key read back into struct ilab_profile_nic; absent, all zero. */
static void nic_section_is_read(void **state)
{
	static const char nic[] =
		"nic:\n"
		"  model: \"a NIC\"\n"
		"  link_gbps: 200\n"
		"  rx_completions_kps: 1250\n"
		"  rx_buffer_ns: 4998\n"
		"  rx_copy_mbps: 7473\n"
		"  payload_mbps: 24000\n"
		"  ats_round_trip_ns: 500\n"
		"  ats_outstanding: 2\n"
		"  atc_entries: 512\n"
		"  atc_ways: 8\n";
	char buf[1024], err[256];
	struct ilab_profile p;
	int n;

	(void)state;
	assert_int_equal(ilab_profile_parse(good, sizeof(good) - 1, "t.yaml", &p, err, sizeof(err)),
			 0);
	assert_int_equal(p.nic.link_gbps | p.nic.rx_completions_kps | p.nic.rx_buffer_ns |
			 p.nic.rx_copy_mbps | p.nic.payload_mbps | p.nic.ats_round_trip_ns |
			 p.nic.ats_outstanding | p.nic.atc_entries | p.nic.atc_ways, 0);
	n = snprintf(buf, sizeof(buf), "%s%s", good, nic);
	if (ilab_profile_parse(buf, (size_t)n, "t.yaml", &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(p.nic.link_gbps, 200);
	assert_int_equal(p.nic.rx_completions_kps, 1250);
	assert_int_equal(p.nic.rx_buffer_ns, 4998);
	assert_int_equal(p.nic.rx_copy_mbps, 7473);
	assert_int_equal(p.nic.payload_mbps, 24000);
	assert_int_equal(p.nic.ats_round_trip_ns, 500);
	assert_int_equal(p.nic.ats_outstanding, 2);
	assert_int_equal(p.nic.atc_entries, 512);
	assert_int_equal(p.nic.atc_ways, 8);
}

/* A bad or incomplete nic: section is the profile's error, at its line and column, not a
 * zero the run would take for an infinitely fast NIC or a free stack. good has 16 lines, so
 * nic: is line 17. */
static void bad_nic_sections_are_refused(void **state)
{
	static const struct {
		const char *text, *where, *cause;
	} bad[] = {
		{ "nic:\n  rx_buffer_ns: 0\n", "bad.yaml:18:17:", "rx_buffer_ns: must be at least 1" },
		{ "nic:\n  link_gbps: fast\n", "bad.yaml:18:14:", "expected a non-negative integer" },
		{ "nic:\n  link_gbps: \"200\"\n", "bad.yaml:18:14:", "got the string '200'" },
		{ "nic:\n  stack_ns: 310\n", "bad.yaml:18:3:", "nic: unknown key 'stack_ns'" },
		{ "nic:\n  link_gbps: 1\n  link_gbps: 2\n", "bad.yaml:19:3:", "given twice" },
		{ "nic: 3\n", "bad.yaml:17:6:", "nic: expected a mapping" },
		{ "nic:\n  link_gbps: 200\n  rx_buffer_ns: 5000\n", "bad.yaml:18:3:",
		  "needs both rx_buffer_ns and rx_copy_mbps" },
		{ "nic:\n  rx_copy_mbps: 7473\n", "bad.yaml:18:3:",
		  "needs both rx_buffer_ns and rx_copy_mbps" },
		{ "nic:\n  rx_buffer_ns: 5000\n  rx_copy_mbps: 7473\n", "bad.yaml:18:3:",
		  "needs a line rate (link_gbps) or a completion rate" },
		{ "nic:\n  rx_completions_kps: 1250\n", "bad.yaml:18:3:",
		  "needs both rx_buffer_ns and rx_copy_mbps" },
		{ "nic:\n  link_gbps: 10001\n", "bad.yaml:18:14:",
		  "nic.link_gbps: 10001 is out of range: 1..10000 Gbit/s" },
		{ "nic:\n  ats_outstanding: 2\n", "bad.yaml:18:3:",
		  "ATS model needs payload_mbps, ats_round_trip_ns" },
		/* netperf's path: all six keys, and only with the receive stack */
		{ "nic:\n  link_gbps: 200\n  rx_buffer_ns: 5000\n  rx_copy_mbps: 7473\n"
		  "  tx_skb_ns: 2500\n", "bad.yaml:18:3:",
		  "the netperf path needs tx_skb_ns, tx_clean_ns, irq_ns, nic_tx_ns, nic_rx_ns and "
		  "wire_ns" },
		{ "nic: {link_gbps: 200, tx_skb_ns: 1, tx_clean_ns: 1, irq_ns: 1, nic_tx_ns: 1, "
		  "nic_rx_ns: 1, wire_ns: 1}\n", "bad.yaml:17:6:",
		  "the netperf path needs the receive stack too" },
		{ "nic: {link_gbps: 200, rx_buffer_ns: 1, rx_copy_mbps: 1, tx_skb_ns: 1, "
		  "tx_clean_ns: 1, irq_ns: 1, nic_tx_ns: 1, nic_rx_ns: 1, wire_ns: 10000001}\n",
		  "bad.yaml:17:", "nic.wire_ns: 10000001 is out of range: 1..10000000 ns" },
		{ "nic:\n  wire_ns: 0\n", "bad.yaml:18:12:", "wire_ns: must be at least 1" },
		{ "nic: {payload_mbps: 1, ats_round_trip_ns: 1, ats_outstanding: 4097, atc_entries: 8, "
		  "atc_ways: 8}\n", "bad.yaml:17:", "nic.ats_outstanding: 4097 is out of range: 1..4096" },
		{ "nic: {payload_mbps: 1, ats_round_trip_ns: 1, ats_outstanding: 1, atc_entries: 8, "
		  "atc_ways: 16}\n", "bad.yaml:17:6:", "atc_ways 16 exceeds atc_entries 8" },
		{ "nic: {payload_mbps: 1, ats_round_trip_ns: 1, ats_outstanding: 1, "
		  "atc_entries: 1048577, atc_ways: 1}\n", "bad.yaml:17:",
		  "nic.atc_entries: 1048577 is out of range: 1..1048576" },
	};
	char buf[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", good, bad[i].text);
		expect_error(buf, bad[i].where, bad[i].cause);
	}
}

/* The NIC constants compute: once held are refused there, with where they went. */
static void moved_device_constants_say_where(void **state)
{
	static const char *const moved[][2] = {
		{ "nic_link_mbps", "nic: payload_mbps" },
		{ "pcie_ats_round_trip_ns", "nic: ats_round_trip_ns" },
		{ "nic_ats_outstanding", "nic: ats_outstanding" },
		{ "nic_atc_entries", "nic: atc_entries" },
		{ "nic_atc_ways", "nic: atc_ways" },
	};
	char buf[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		snprintf(buf, sizeof(buf), "%scompute:\n  %s: 2\n", good, moved[i][0]);
		expect_error(buf, "bad.yaml:18:3:", moved[i][1]);
	}
}

/* Both shipped profiles describe their NICs: the receive stack on kunpeng920 (seeds 001 and
 * 003), the ATS model on a100-2node (seed 004). */
/* kunpeng920-contention.yaml is kunpeng920.yaml with the line contention model switched on
 * (docs/simulation.md, "Line contention model"): every other value must stay the same, or the
 * two profiles stop comparing the mechanism alone. */
static void contention_profile_differs_only_in_the_contention_model(void **state)
{
	static struct ilab_profile base, cont;
	char err[256];

	(void)state;
	memset(&base, 0, sizeof(base));
	memset(&cont, 0, sizeof(cont));
	if (ilab_profile_open("kunpeng920", &base, err, sizeof(err)))
		fail_msg("%s", err);
	if (ilab_profile_open("kunpeng920-contention", &cont, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(base.cache_contention, ILAB_CONTENTION_FLAT);
	assert_int_equal(cont.cache_contention, ILAB_CONTENTION_HOME);
	memcpy(cont.name, base.name, sizeof(base.name));
	memcpy(cont.source, base.source, sizeof(base.source));
	cont.cache_contention = base.cache_contention;
	cont.cache_atomics = base.cache_atomics;
	cont.home_occupancy_ns = base.home_occupancy_ns;
	if (memcmp(&base, &cont, sizeof(base)))
		fail_msg("kunpeng920-contention.yaml differs from kunpeng920.yaml beyond cache.contention, "
			 "cache.atomics and cache.home_occupancy_ns: bring it in step");
}

static void shipped_profiles_describe_their_nics(void **state)
{
	struct ilab_profile p;
	char err[256];

	(void)state;
	if (ilab_profile_open("kunpeng920", &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(p.nic.link_gbps > 0 && p.nic.rx_completions_kps > 0);
	assert_true(p.nic.rx_buffer_ns > 0 && p.nic.rx_copy_mbps > 0);
	if (ilab_profile_open("a100-2node", &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(p.nic.payload_mbps > 0 && p.nic.ats_outstanding > 0 && p.nic.atc_entries > 0);
	assert_int_equal(ilab_profile_compute_ns(&p, "nic_ats_outstanding", 0), 0);
}

static void missing_file_is_an_error(void **state)
{
	struct ilab_profile p;
	char err[256];

	assert_int_equal(ilab_profile_load("/nonexistent/p.yaml", &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/p.yaml"));
}

/* Only a regular file of a sensible size is read: a device, a FIFO or a directory is refused
 * up front (/dev/zero would be read until memory ran out), and so is a second document. */
static void only_one_profile_document_is_read(void **state)
{
	struct ilab_profile p;
	char err[256], buf[1200];

	assert_int_equal(ilab_profile_load("/dev/zero", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(ilab_profile_load("/", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a directory"));
	snprintf(buf, sizeof(buf), "%s---\nname: other\n", good);
	expect_error(buf, "bad.yaml:", "a second YAML document");
}

/* An empty name is refused with a message (the CLI prints err as is: --profile ''). */
static void empty_name_is_an_error(void **state)
{
	char path[256], err[256];

	memset(err, 'x', sizeof(err));
	assert_int_equal(ilab_profile_resolve("", path, sizeof(path), err, sizeof(err)), -EINVAL);
	assert_non_null(memchr(err, '\0', sizeof(err)));
	assert_non_null(strstr(err, "empty"));
}

/* The shipped profile names a topology that exists, and every distance of its SLIT has a
 * cost: a simulator can be built from them. */
static void shipped_profile_builds_a_simulator(void **state)
{
	struct ilab_profile p;
	struct ilab_topo *t = NULL;
	struct ilab_sim *s = NULL;
	uint64_t expect;
	char err[256];

	assert_int_equal(fix_load_profile(&p), 0);
	if (ilab_topo_load(p.topology, &t, err, sizeof(err)))
		fail_msg("topology %s: %s", p.topology, err);
	if (ilab_sim_create_topo(t, &p, NULL, &s, err, sizeof(err)))
		fail_msg("sim: %s", err);
	/* node 0 -> node 3 is at distance 33 on Kunpeng 920 2P: its table entry if the profile
	 * has a memory table (it must then list 33), else the SLIT formula */
	assert_int_equal(ilab_topo_distance(t, 0, 3), 33);
	expect = (p.mem.local_ns * 33 + 5) / 10;
	for (unsigned i = 0; i < p.mem.nr; i++)
		if (p.mem.distance[i] == 33)
			expect = p.mem.ns[i];
	assert_int_equal(ilab_sim_mem_ns(s, 0, 3), expect);
	ilab_sim_destroy(s);
	ilab_topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shipped_profile_loads),
		cmocka_unit_test(formulas_follow_the_documentation),
		cmocka_unit_test(tlbi_sync_ns_is_read),
		cmocka_unit_test(smmu_queue_keys_are_read_and_checked),
		cmocka_unit_test(leading_zeros_are_decimal),
		cmocka_unit_test(tables_override_formulas),
		cmocka_unit_test(malformed_profiles_name_file_line_column),
		cmocka_unit_test(compute_accepts_every_name_read),
		cmocka_unit_test(nic_section_is_read),
		cmocka_unit_test(bad_nic_sections_are_refused),
		cmocka_unit_test(moved_device_constants_say_where),
		cmocka_unit_test(shipped_profiles_describe_their_nics),
		cmocka_unit_test(contention_profile_differs_only_in_the_contention_model),
		cmocka_unit_test(missing_file_is_an_error),
		cmocka_unit_test(empty_name_is_an_error),
		cmocka_unit_test(only_one_profile_document_is_read),
		cmocka_unit_test(shipped_profile_builds_a_simulator),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
