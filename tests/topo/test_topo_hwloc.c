/* test_topo_hwloc.c — topologies hwloc builds: an lstopo XML with PCI devices, synthetic
 * strings, this host. Not the presets (test_topo_presets.c) or bad input (test_topo_errors.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <iommulab/topo.h>
#include <string.h>

#define XML_24EM64T ILAB_TESTDATA "/topologies/24em64t-2n6c2t-pci.xml"

static struct ilab_topo *load_ok(const char *spec)
{
	struct ilab_topo *t = NULL;
	char err[256] = "";
	int ret = ilab_topo_load(spec, &t, err, sizeof(err));

	if (ret)
		print_error("loading %s: %s\n", spec, err);
	assert_int_equal(ret, 0);
	assert_non_null(t);
	return t;
}

static void assert_cpu_partition(const struct ilab_topo *t)
{
	unsigned total = 0;

	for (unsigned n = 0; n < ilab_topo_nr_nodes(t); n++) {
		unsigned cnt;
		const unsigned *cpus = ilab_topo_node_cpus(t, n, &cnt);

		for (unsigned i = 0; i < cnt; i++)
			assert_int_equal(ilab_topo_cpu_node(t, cpus[i]), (int)n);
		total += cnt;
	}
	assert_int_equal(total, ilab_topo_nr_cpus(t));
}

/* 2 packages x 6 cores x 2 threads, one NUMA node per package (the file's name says so, its
 * objects agree), and a 10/20 NUMALatency matrix. */
static void xml_24em64t_cpus_and_nodes(void **state)
{
	struct ilab_topo *t = load_ok(XML_24EM64T);

	assert_int_equal(ilab_topo_nr_nodes(t), 2);
	assert_int_equal(ilab_topo_nr_cpus(t), 24);
	assert_int_equal(ilab_topo_nr_packages(t), 2);
	for (unsigned n = 0; n < 2; n++) {
		unsigned cnt;

		ilab_topo_node_cpus(t, n, &cnt);
		assert_int_equal(cnt, 12);
		assert_int_equal(ilab_topo_node_package(t, n), (int)n);
	}
	assert_cpu_partition(t);
	assert_false(ilab_topo_distances_defaulted(t));
	assert_int_equal(ilab_topo_distance(t, 0, 0), 10);
	assert_int_equal(ilab_topo_distance(t, 0, 1), 20);
	assert_int_equal(ilab_topo_distance(t, 1, 0), 20);
	assert_int_equal(ilab_topo_distance(t, 1, 1), 10);
	ilab_topo_free(t);
}

/* The file has two PCI host bridges (buses 00-0f under package 0, 10-1f under package 1), so
 * two SMMUs and two root ports, one on each node. */
static void xml_24em64t_one_smmu_per_host_bridge(void **state)
{
	struct ilab_topo *t = load_ok(XML_24EM64T);

	assert_int_equal(ilab_topo_nr_smmus(t), 2);
	assert_int_equal(ilab_topo_nr_rootports(t), 2);
	assert_int_equal(ilab_topo_smmu(t, 0)->node, 0);
	assert_int_equal(ilab_topo_smmu(t, 1)->node, 1);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(ilab_topo_smmu(t, ilab_topo_rootport(t, i)->smmu)->node,
				 ilab_topo_rootport(t, i)->node);
	ilab_topo_free(t);
}

/* The file's nine PCI functions: 04:00.0/.1 Ethernet (0200), 05:00.0 InfiniBand (0c06),
 * 06:00.0 3D (0302), 01:03.0 VGA (0300), 00:1f.2/.5 IDE (0101) under the first host bridge;
 * 14:00.0 and 11:00.0 3D (0302) under the second. StreamID = bus << 8 | dev << 3 | fn. */
static void xml_24em64t_devices(void **state)
{
	static const struct {
		const char *name;
		enum ilab_dev_kind kind;
		int node;
		uint32_t sid;
	} want[] = {
		{ "0000:04:00.0", ILAB_DEV_NIC, 0, 0x0400 },
		{ "0000:04:00.1", ILAB_DEV_NIC, 0, 0x0401 },
		{ "0000:05:00.0", ILAB_DEV_NIC, 0, 0x0500 },
		{ "0000:06:00.0", ILAB_DEV_GPU, 0, 0x0600 },
		{ "0000:01:03.0", ILAB_DEV_GPU, 0, 0x0118 },
		{ "0000:00:1f.2", ILAB_DEV_STORAGE, 0, 0x00fa },
		{ "0000:00:1f.5", ILAB_DEV_STORAGE, 0, 0x00fd },
		{ "0000:14:00.0", ILAB_DEV_GPU, 1, 0x1400 },
		{ "0000:11:00.0", ILAB_DEV_GPU, 1, 0x1100 },
	};
	struct ilab_topo *t = load_ok(XML_24EM64T);

	assert_int_equal(ilab_topo_nr_devices(t), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ilab_device *d = ilab_topo_find_device(t, want[i].name);

		if (!d)
			print_error("device %s missing\n", want[i].name);
		assert_non_null(d);
		assert_int_equal(d->kind, want[i].kind);
		assert_int_equal(d->node, want[i].node);
		assert_int_equal(d->sid, want[i].sid);
		assert_int_equal(ilab_topo_smmu(t, d->smmu)->node, want[i].node);
		assert_int_equal(ilab_topo_rootport(t, d->rootport)->smmu, d->smmu);
	}
	ilab_topo_free(t);
}

/* 2 packages x 2 nodes x 4 cores: no matrix in a synthetic string, so the default applies:
 * 10 local, 20 within a package, 30 across packages. */
static void synthetic_two_packages_default_distances(void **state)
{
	struct ilab_topo *t = load_ok("synthetic:pack:2 numa:2 core:4 pu:1");
	static const unsigned want[4][4] = {
		{ 10, 20, 30, 30 },
		{ 20, 10, 30, 30 },
		{ 30, 30, 10, 20 },
		{ 30, 30, 20, 10 },
	};

	assert_int_equal(ilab_topo_nr_nodes(t), 4);
	assert_int_equal(ilab_topo_nr_cpus(t), 16);
	assert_int_equal(ilab_topo_nr_packages(t), 2);
	assert_cpu_partition(t);
	for (unsigned n = 0; n < 4; n++) {
		unsigned cnt;
		const unsigned *cpus = ilab_topo_node_cpus(t, n, &cnt);

		assert_int_equal(cnt, 4);
		assert_int_equal(cpus[0], 4 * n);
	}
	assert_true(ilab_topo_distances_defaulted(t));
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = 0; j < 4; j++)
			assert_int_equal(ilab_topo_distance(t, i, j), want[i][j]);
	/* a synthetic machine has no PCI */
	assert_int_equal(ilab_topo_nr_smmus(t), 0);
	assert_int_equal(ilab_topo_nr_devices(t), 0);
	ilab_topo_free(t);
}

/* hwloc gives a synthetic description without numa: one node holding the whole machine. */
static void synthetic_without_numa_is_one_node(void **state)
{
	struct ilab_topo *t = load_ok("synthetic:pack:2 core:2 pu:2");

	assert_int_equal(ilab_topo_nr_nodes(t), 1);
	assert_int_equal(ilab_topo_nr_cpus(t), 8);
	assert_int_equal(ilab_topo_distance(t, 0, 0), 10);
	assert_true(ilab_topo_distances_defaulted(t));
	ilab_topo_free(t);
}

/* Whatever this machine is, the result must be self-consistent. */
static void host_is_consistent(void **state)
{
	struct ilab_topo *t = load_ok("host");
	unsigned n = ilab_topo_nr_nodes(t);

	assert_true(n >= 1 && n <= ILAB_TOPO_MAX_NODES);
	assert_true(ilab_topo_nr_cpus(t) >= 1);
	assert_cpu_partition(t);
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++)
			assert_true(ilab_topo_distance(t, i, j) >= ilab_topo_distance(t, i, i));
	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);

		assert_true(d->node >= 0 && (unsigned)d->node < n);
		assert_int_equal(ilab_topo_smmu(t, d->smmu)->node, d->node);
	}
	ilab_topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xml_24em64t_cpus_and_nodes),
		cmocka_unit_test(xml_24em64t_one_smmu_per_host_bridge),
		cmocka_unit_test(xml_24em64t_devices),
		cmocka_unit_test(synthetic_two_packages_default_distances),
		cmocka_unit_test(synthetic_without_numa_is_one_node),
		cmocka_unit_test(host_is_consistent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
