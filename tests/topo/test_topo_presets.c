/* test_topo_presets.c — the built-in machines: kunpeng920 against the facts of its hwloc XML
 * and seed 000, a100-2node against seed 004's drawing. Not the hwloc sources (test_topo_hwloc.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <iommulab/topo.h>
#include <string.h>

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

/* Every CPU's node agrees with the node CPU lists, which partition 0..nr_cpus-1. */
static void assert_cpu_partition(const struct ilab_topo *t)
{
	unsigned total = 0;

	for (unsigned n = 0; n < ilab_topo_nr_nodes(t); n++) {
		unsigned cnt;
		const unsigned *cpus = ilab_topo_node_cpus(t, n, &cnt);

		for (unsigned i = 0; i < cnt; i++) {
			assert_int_equal(ilab_topo_cpu_node(t, cpus[i]), (int)n);
			if (i)
				assert_true(cpus[i] > cpus[i - 1]);
		}
		total += cnt;
	}
	assert_int_equal(total, ilab_topo_nr_cpus(t));
	assert_int_equal(ilab_topo_cpu_node(t, ilab_topo_nr_cpus(t)), -1);
}

/* From kunpeng920-2p4n128c.xml's <distances2> (also docs/topology.md). */
static const unsigned kp920_slit[4][4] = {
	{ 10, 16, 32, 33 },
	{ 16, 10, 25, 32 },
	{ 32, 25, 10, 16 },
	{ 33, 32, 16, 10 },
};

static void kunpeng920_has_4_nodes_of_32_cpus(void **state)
{
	struct ilab_topo *t = load_ok("kunpeng920");

	assert_string_equal(ilab_topo_name(t), "kunpeng920");
	assert_int_equal(ilab_topo_nr_nodes(t), 4);
	assert_int_equal(ilab_topo_nr_cpus(t), 128);
	assert_int_equal(ilab_topo_nr_packages(t), 2);
	for (unsigned n = 0; n < 4; n++) {
		unsigned cnt;
		const unsigned *cpus = ilab_topo_node_cpus(t, n, &cnt);

		assert_int_equal(cnt, 32);
		assert_int_equal(cpus[0], 32 * n);
		assert_int_equal(cpus[31], 32 * n + 31);
		/* nodes 0-1 share the first package, 2-3 the second */
		assert_int_equal(ilab_topo_node_package(t, n), (int)(n / 2));
	}
	assert_cpu_partition(t);
	ilab_topo_free(t);
}

static void kunpeng920_distances_are_the_real_slit(void **state)
{
	struct ilab_topo *t = load_ok("kunpeng920");

	assert_false(ilab_topo_distances_defaulted(t));
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = 0; j < 4; j++)
			assert_int_equal(ilab_topo_distance(t, i, j), kp920_slit[i][j]);
	assert_int_equal(ilab_topo_distance(t, 4, 0), 0);
	ilab_topo_free(t);
}

static void kunpeng920_nic_sits_behind_the_node2_smmu(void **state)
{
	struct ilab_topo *t = load_ok("kunpeng920");
	const struct ilab_device *nic = NULL;

	/* one SMMU and one root port per node */
	assert_int_equal(ilab_topo_nr_smmus(t), 4);
	assert_int_equal(ilab_topo_nr_rootports(t), 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(ilab_topo_smmu(t, i)->node, (int)i);
		assert_int_equal(ilab_topo_rootport(t, i)->node, (int)i);
		assert_int_equal(ilab_topo_smmu(t, ilab_topo_rootport(t, i)->smmu)->node, (int)i);
	}
	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++)
		if (ilab_topo_device(t, i)->kind == ILAB_DEV_NIC)
			nic = ilab_topo_device(t, i);
	/* seed 000: the NIC's SMMU is on node 2 */
	assert_non_null(nic);
	assert_int_equal(nic->node, 2);
	assert_int_equal(ilab_topo_smmu(t, nic->smmu)->node, 2);
	assert_int_equal(ilab_topo_rootport(t, nic->rootport)->node, 2);
	assert_ptr_equal(ilab_topo_find_device(t, nic->name), nic);
	ilab_topo_free(t);
}

static void kunpeng920_storage_on_node0(void **state)
{
	struct ilab_topo *t = load_ok("kunpeng920");
	unsigned found = 0;

	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);

		if (d->kind != ILAB_DEV_STORAGE && d->kind != ILAB_DEV_NVME)
			continue;
		found++;
		assert_int_equal(d->node, 0);
		assert_int_equal(ilab_topo_smmu(t, d->smmu)->node, 0);
	}
	assert_int_equal(found, 2); /* sas0 (seed 001) and nvme0 (the fio workload) */
	ilab_topo_free(t);
}

/* The built-in table must say what the XML it summarises says. */
static void kunpeng920_table_agrees_with_its_xml(void **state)
{
	struct ilab_topo *p = load_ok("kunpeng920");
	struct ilab_topo *x = load_ok(ILAB_TESTDATA "/topologies/kunpeng920-2p4n128c.xml");

	assert_int_equal(ilab_topo_nr_nodes(x), ilab_topo_nr_nodes(p));
	assert_int_equal(ilab_topo_nr_cpus(x), ilab_topo_nr_cpus(p));
	assert_int_equal(ilab_topo_nr_packages(x), ilab_topo_nr_packages(p));
	assert_false(ilab_topo_distances_defaulted(x));
	for (unsigned c = 0; c < ilab_topo_nr_cpus(p); c++)
		assert_int_equal(ilab_topo_cpu_node(x, c), ilab_topo_cpu_node(p, c));
	for (unsigned i = 0; i < ilab_topo_nr_nodes(p); i++) {
		assert_int_equal(ilab_topo_node_package(x, i), ilab_topo_node_package(p, i));
		for (unsigned j = 0; j < ilab_topo_nr_nodes(p); j++)
			assert_int_equal(ilab_topo_distance(x, i, j), ilab_topo_distance(p, i, j));
	}
	/* the XML was made without I/O discovery: no PCI, so no SMMU either */
	assert_int_equal(ilab_topo_nr_smmus(x), 0);
	assert_int_equal(ilab_topo_nr_devices(x), 0);
	ilab_topo_free(x);
	ilab_topo_free(p);
}

static void a100_2node_matches_seed_004(void **state)
{
	struct ilab_topo *t = load_ok("a100-2node");
	unsigned gpus[2] = { 0 }, nics[2] = { 0 };
	unsigned per_rp_gpu[4] = { 0 }, per_rp_nic[4] = { 0 };

	assert_int_equal(ilab_topo_nr_nodes(t), 2);
	assert_int_equal(ilab_topo_nr_cpus(t), 64); /* documented assumption: 32 per node */
	assert_cpu_partition(t);
	assert_int_equal(ilab_topo_distance(t, 0, 0), 10);
	assert_int_equal(ilab_topo_distance(t, 0, 1), 20);
	assert_int_equal(ilab_topo_distance(t, 1, 0), 20);
	assert_int_equal(ilab_topo_distance(t, 1, 1), 10);
	/* 2 root ports per node, one IOMMU per root port, on its node */
	assert_int_equal(ilab_topo_nr_rootports(t), 4);
	assert_int_equal(ilab_topo_nr_smmus(t), 4);
	unsigned rp_per_node[2] = { 0 };
	for (unsigned i = 0; i < 4; i++) {
		const struct ilab_rootport *rp = ilab_topo_rootport(t, i);

		rp_per_node[rp->node]++;
		assert_int_equal(ilab_topo_smmu(t, rp->smmu)->node, rp->node);
		for (unsigned j = 0; j < i; j++)
			assert_int_not_equal(ilab_topo_rootport(t, j)->smmu, rp->smmu);
	}
	assert_int_equal(rp_per_node[0], 2);
	assert_int_equal(rp_per_node[1], 2);
	/* each root port: 2 A100 + 2 CX6; then the fio workload's NVMe, last, on n0-rp0 */
	assert_int_equal(ilab_topo_nr_devices(t), 17);
	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);

		assert_int_equal(d->node, ilab_topo_rootport(t, d->rootport)->node);
		assert_int_equal(d->smmu, ilab_topo_rootport(t, d->rootport)->smmu);
		if (d->kind == ILAB_DEV_NVME) {
			assert_int_equal(i, 16);
			assert_int_equal(d->rootport, 0);
		} else if (d->kind == ILAB_DEV_GPU) {
			gpus[d->node]++;
			per_rp_gpu[d->rootport]++;
		} else {
			assert_int_equal(d->kind, ILAB_DEV_NIC);
			nics[d->node]++;
			per_rp_nic[d->rootport]++;
		}
	}
	assert_int_equal(gpus[0] + gpus[1], 8);
	assert_int_equal(nics[0] + nics[1], 8);
	assert_int_equal(gpus[0], 4);
	assert_int_equal(nics[1], 4);
	for (unsigned r = 0; r < 4; r++) {
		assert_int_equal(per_rp_gpu[r], 2);
		assert_int_equal(per_rp_nic[r], 2);
	}
	ilab_topo_free(t);
}

/* StreamIDs identify a device at its SMMU, so two devices behind one SMMU never share one. */
static void stream_ids_are_unique_per_smmu(void **state)
{
	const char *presets[] = { "kunpeng920", "a100-2node" };

	for (size_t p = 0; p < 2; p++) {
		struct ilab_topo *t = load_ok(presets[p]);

		for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++)
			for (unsigned j = 0; j < i; j++) {
				const struct ilab_device *a = ilab_topo_device(t, i);
				const struct ilab_device *b = ilab_topo_device(t, j);

				if (a->smmu == b->smmu)
					assert_int_not_equal(a->sid, b->sid);
			}
		ilab_topo_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kunpeng920_has_4_nodes_of_32_cpus),
		cmocka_unit_test(kunpeng920_distances_are_the_real_slit),
		cmocka_unit_test(kunpeng920_nic_sits_behind_the_node2_smmu),
		cmocka_unit_test(kunpeng920_storage_on_node0),
		cmocka_unit_test(kunpeng920_table_agrees_with_its_xml),
		cmocka_unit_test(a100_2node_matches_seed_004),
		cmocka_unit_test(stream_ids_are_unique_per_smmu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
