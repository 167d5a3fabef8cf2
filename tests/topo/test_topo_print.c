/* test_topo_print.c — the text and JSON renderings of a topology carry its facts.
 * Not a loader test: the facts themselves are checked in the other test_topo_* files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <iommulab/topo.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Render with fn into a heap string. */
static char *render(const char *spec, int (*fn)(const struct ilab_topo *, FILE *))
{
	struct ilab_topo *t;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(ilab_topo_load(spec, &t, err, sizeof(err)), 0);
	assert_int_equal(fn(t, f), 0);
	fclose(f);
	ilab_topo_free(t);
	return buf;
}

static void text_lists_nodes_distances_and_io(void **state)
{
	char *s = render("kunpeng920", ilab_topo_print);

	assert_non_null(strstr(s, "4 NUMA nodes, 128 CPUs"));
	assert_non_null(strstr(s, "0-31"));
	assert_non_null(strstr(s, "96-127"));
	assert_non_null(strstr(s, "10   16   32   33")); /* row 0 of the SLIT */
	assert_non_null(strstr(s, "smmu2"));
	assert_non_null(strstr(s, "nic0"));
	assert_non_null(strstr(s, "sid 0x8200"));
	free(s);
}

static void text_says_when_distances_are_defaulted(void **state)
{
	char *s = render("synthetic:numa:2 pu:2", ilab_topo_print);

	assert_non_null(strstr(s, "default"));
	free(s);
}

static void json_has_sorted_keys_and_the_facts(void **state)
{
	char *s = render("a100-2node", ilab_topo_print_json);
	json_error_t jerr;
	json_t *root = json_loads(s, 0, &jerr);

	assert_non_null(root);
	/* sorted keys: "devices" is the first key of the top-level object */
	assert_non_null(strstr(s, "\"devices\""));
	assert_true(strstr(s, "\"devices\"") < strstr(s, "\"distances\""));
	assert_true(strstr(s, "\"distances\"") < strstr(s, "\"nodes\""));
	assert_int_equal(json_integer_value(json_object_get(root, "nr_nodes")), 2);
	assert_int_equal(json_integer_value(json_object_get(root, "nr_cpus")), 64);
	assert_int_equal(json_array_size(json_object_get(root, "nodes")), 2);
	/* 8 GPUs, 8 NICs and the NVMe */
	assert_int_equal(json_array_size(json_object_get(root, "devices")), 17);
	assert_int_equal(json_array_size(json_object_get(root, "iommus")), 4);
	assert_null(json_object_get(root, "smmus"));
	assert_int_equal(json_array_size(json_object_get(root, "rootports")), 4);
	json_t *row1 = json_array_get(json_object_get(root, "distances"), 1);
	assert_int_equal(json_integer_value(json_array_get(row1, 0)), 20);
	assert_int_equal(json_integer_value(json_array_get(row1, 1)), 10);
	assert_true(json_is_false(json_object_get(root, "distances_defaulted")));
	json_t *node1 = json_array_get(json_object_get(root, "nodes"), 1);
	assert_string_equal(json_string_value(json_object_get(node1, "cpulist")), "32-63");
	assert_int_equal(json_array_size(json_object_get(node1, "cpus")), 32);
	json_decref(root);
	free(s);
}

static json_t *member(json_t *root, const char *array, const char *name)
{
	json_t *arr = json_object_get(root, array), *o;
	size_t i;

	json_array_foreach(arr, i, o)
		if (!strcmp(json_string_value(json_object_get(o, "name")), name))
			return o;
	return NULL;
}

/* Every unit is named as its architecture names it, in the units' list, the root ports' and
 * devices' column and the JSON's "iommu" keys: dmarN on VT-d (icelake-2s-a100), smmuN on
 * SMMUv3 (kunpeng920); "smmu" appears nowhere on the VT-d machine. */
static void units_are_named_by_their_architecture(void **state)
{
	char *s = render("icelake-2s-a100", ilab_topo_print);
	char *k = render("kunpeng920", ilab_topo_print);
	char *j = render("icelake-2s-a100", ilab_topo_print_json);
	char *kj = render("kunpeng920", ilab_topo_print_json);
	json_t *root, *units;

	(void)state;
	assert_non_null(strstr(s, "IOMMU units: 4\n"));
	assert_non_null(strstr(s, "  dmar0    node 0  DMAR unit (vtd)\n"));
	assert_non_null(strstr(s, "  dmar3    node 1  DMAR unit (vtd)\n"));
	assert_non_null(strstr(s, "  rp2   n1-rp0               node 1  dmar2\n"));
	assert_non_null(strstr(s, "nic0           nic     node 0  rp 0   dmar0   sid 0x1b00"));
	assert_null(strstr(s, "SMMU"));
	assert_null(strstr(s, "smmu"));
	assert_non_null(strstr(k, "IOMMU units: 4\n  smmu0    node 0  SMMU (smmuv3)\n"));
	assert_non_null(strstr(k, "node 2  smmu2\n"));
	assert_non_null(strstr(k, "rp 2   smmu2   sid 0x8200"));
	assert_null(strstr(k, "SMMUs:"));

	root = json_loads(j, 0, NULL);
	assert_non_null(root);
	assert_null(strstr(j, "smmu"));
	units = json_object_get(root, "iommus");
	assert_int_equal(json_array_size(units), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(units, 2), "arch")),
			    "vtd");
	assert_string_equal(json_string_value(json_object_get(json_array_get(units, 2), "name")),
			    "dmar2");
	assert_string_equal(json_string_value(json_object_get(member(root, "rootports", "n1-rp0"),
							      "iommu")), "dmar2");
	assert_string_equal(json_string_value(json_object_get(member(root, "devices", "nic0"),
							      "iommu")), "dmar0");
	json_decref(root);

	root = json_loads(kj, 0, NULL);
	assert_non_null(root);
	units = json_object_get(root, "iommus");
	assert_string_equal(json_string_value(json_object_get(json_array_get(units, 0), "arch")),
			    "smmuv3");
	assert_string_equal(json_string_value(json_object_get(member(root, "devices", "nic0"),
							      "iommu")), "smmu2");
	json_decref(root);
	free(s);
	free(k);
	free(j);
	free(kj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_lists_nodes_distances_and_io),
		cmocka_unit_test(text_says_when_distances_are_defaulted),
		cmocka_unit_test(json_has_sorted_keys_and_the_facts),
		cmocka_unit_test(units_are_named_by_their_architecture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
