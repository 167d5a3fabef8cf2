/* test_topo_errors.c — bad topology input: each gives a negative errno and a one-line cause
 * naming the source, never a crash. Not the good paths (test_topo_presets.c, test_topo_hwloc.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <iommulab/topo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA ILAB_TESTDATA "/topologies/"

/* Load spec, expect -want_errno, a one-line message containing spec and every needle. */
static void expect_error(const char *spec, int want_errno, const char *needle1, const char *needle2)
{
	struct ilab_topo *t = (struct ilab_topo *)0x1;
	char err[512];
	int ret;

	memset(err, 'x', sizeof(err));
	ret = ilab_topo_load(spec, &t, err, sizeof(err));
	if (ret != -want_errno || (needle1 && !strstr(err, needle1)) ||
	    (needle2 && !strstr(err, needle2)))
		print_error("%s: ret %d, err '%s'\n", spec, ret, err);
	assert_int_equal(ret, -want_errno);
	assert_null(t);
	assert_non_null(memchr(err, '\0', sizeof(err)));
	assert_true(strlen(err) > 0);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, spec));
	if (needle1)
		assert_non_null(strstr(err, needle1));
	if (needle2)
		assert_non_null(strstr(err, needle2));
}

static void missing_file(void **state)
{
	expect_error("/nonexistent/dir/machine.xml", ENOENT, "No such file", NULL);
}

static void directory_instead_of_file(void **state)
{
	expect_error(ILAB_TESTDATA "/topologies", EISDIR, "cannot read", NULL);
}

static void truncated_xml(void **state)
{
	expect_error(DATA "broken-truncated.xml", EINVAL, "truncated", NULL);
}

static void garbage_text(void **state)
{
	expect_error(DATA "broken-garbage.xml", EINVAL, "not an hwloc XML", NULL);
}

/* hwloc refuses a topology without NUMA nodes; so do we, with that reason. */
static void no_numa_node(void **state)
{
	expect_error(DATA "broken-no-numa.xml", EINVAL, "no NUMA node", NULL);
}

/* A matrix whose values do not add up to the nodes is malformed XML for hwloc. */
static void distance_matrix_with_missing_values(void **state)
{
	expect_error(DATA "broken-distances-count.xml", EINVAL, "cannot parse hwloc XML", NULL);
}

static void distances_diagonal_not_minimum(void **state)
{
	expect_error(DATA "broken-distances-diagonal.xml", EINVAL, "nonsense distances", "[0][1]");
}

static void distances_above_slit_range(void **state)
{
	expect_error(DATA "broken-distances-range.xml", EINVAL, "nonsense distances", "[0][1] = 300");
}

static void distances_zero_diagonal(void **state)
{
	expect_error(DATA "broken-distances-zero.xml", EINVAL, "nonsense distances", "[1][1] = 0");
}

/* Each of these single-attribute deletions made libhwloc 2.9 crash (SIGSEGV) in
 * hwloc_topology_load; found by deleting every attribute of the Machine, Package, NUMANode and
 * PU objects in turn. Now the file is refused before hwloc sees it, naming the line. */
static void missing_complete_sets(void **state)
{
	expect_error(DATA "broken-machine-no-complete-cpuset.xml", EINVAL,
		     "xml:4: Machine object has a cpuset but no complete_cpuset", NULL);
	expect_error(DATA "broken-numa-no-complete-nodeset.xml", EINVAL,
		     "xml:26: NUMANode object has a nodeset but no complete_nodeset", NULL);
	expect_error(DATA "broken-pu-no-complete-cpuset.xml", EINVAL,
		     "xml:34: PU object has a cpuset but no complete_cpuset", NULL);
}

/* A PU without os_index used to read "CPU 0 is in no NUMA node"; a node without one loaded
 * (or, with a distance matrix, read "the matrix covers 3 of 4 NUMA nodes"). */
static void missing_os_index(void **state)
{
	expect_error(DATA "broken-pu-no-os-index.xml", EINVAL, "PU L#0 has no os_index", NULL);
	expect_error(DATA "broken-numa-no-os-index.xml", EINVAL, "NUMA node L#1 has no os_index",
		     NULL);
}

/* Two PUs with os_index 0 loaded as two CPUs. */
static void duplicate_pu_os_index(void **state)
{
	expect_error(DATA "broken-pu-duplicate-os-index.xml", EINVAL,
		     "PUs L#0 and L#1 have the same os_index 0", NULL);
}

/* hwloc reads local_memory="-1" as 2^64-1 bytes and "16GB" as 16 bytes, and loaded both. */
static void nonsense_local_memory(void **state)
{
	expect_error(DATA "broken-local-memory.xml", EINVAL, "local_memory=\"-1\" is not a size",
		     NULL);
}

/* Write text to a fresh temporary .xml file; returns its path (caller unlinks). */
static char *temp_xml(const char *text)
{
	char *path = strdup("/tmp/ilab-topo-test-XXXXXX.xml");
	int fd = mkstemps(path, 4);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void empty_file(void **state)
{
	char *path = temp_xml("");

	expect_error(path, EINVAL, "empty", NULL);
	unlink(path);
	free(path);
}

/* Closed properly but broken inside: hwloc's parser must reject it. */
static void malformed_xml(void **state)
{
	char *path = temp_xml("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
			      "<object type=\"Machine\" os_index=\"0\"\n"
			      "<object type=\"NUMANode\"/></object></topology>\n");

	expect_error(path, EINVAL, "hwloc XML", NULL);
	unlink(path);
	free(path);
}

/* A copy of 24em64t-2n6c2t-pci.xml with one attribute value of the first object of type
 * replaced: returns a temporary file's path (caller unlinks and frees). */
static char *edited_copy(const char *type, const char *attr, const char *value)
{
	char *text, *tag, *at, *end, *out, *path;
	FILE *f = fopen(DATA "24em64t-2n6c2t-pci.xml", "rb");
	char needle[64];
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	snprintf(needle, sizeof(needle), "<object type=\"%s\"", type);
	tag = strstr(text, needle);
	assert_non_null(tag);
	snprintf(needle, sizeof(needle), " %s=\"", attr);
	at = strstr(tag, needle);
	assert_non_null(at);
	at += strlen(needle);
	end = strchr(at, '"');
	out = calloc(1, (size_t)len + strlen(value) + 1);
	memcpy(out, text, (size_t)(at - text));
	strcat(out, value);
	strcat(out, end);
	path = temp_xml(out);
	free(out);
	free(text);
	return path;
}

static void local_memory_values(void **state)
{
	static const struct {
		const char *value, *needle;
	} bad[] = {
		{ "16GB", "local_memory=\"16GB\" is not a size" },
		{ "", "local_memory=\"\" is not a size" },
		{ "0x1000", "is not a size" },
		{ "4503599627370497", "more than 4 PiB" },           /* 2^52 + 1 */
		{ "99999999999999999999999999", "more than 4 PiB" }, /* no overflow */
	};
	static const char *const good[] = { "0", "4503599627370496" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *path = edited_copy("NUMANode", "local_memory", bad[i].value);

		expect_error(path, EINVAL, bad[i].needle, ":26: NUMANode");
		unlink(path);
		free(path);
	}
	/* a memoryless node, and the largest size: accepted */
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *path = edited_copy("NUMANode", "local_memory", good[i]);
		struct ilab_topo *t = NULL;
		char err[512];

		if (ilab_topo_load(path, &t, err, sizeof(err)))
			print_error("%s: %s\n", good[i], err);
		assert_non_null(t);
		ilab_topo_free(t);
		unlink(path);
		free(path);
	}
}

/* A broken attribute (here the Package's cpuset value ends early: cpuset="0x00555555" 0100").
 * hwloc's built-in parser reads on past one; with more damage around it, that crashed hwloc
 * under the fuzzer. The tag is refused, with its line, before hwloc reads it. */
static void broken_attribute_syntax(void **state)
{
	char *path = edited_copy("Package", "cpuset", "0x00555555\" 0100");

	expect_error(path, EINVAL, ":25: cannot parse hwloc XML (an <object> tag", NULL);
	unlink(path);
	free(path);
}

/* The same limit after the load, for every source: a synthetic node of 2^53 bytes. */
static void node_memory_above_limit(void **state)
{
	expect_error("synthetic:numa:2(memory=9007199254740992) pu:1", EINVAL,
		     "NUMA node L#0 has 9007199254740992 bytes", "more than 4 PiB");
}

/* A PU whose cpuset is not its os_index (hwloc's own invariant), and a NUMA node likewise. */
static void os_index_not_its_set(void **state)
{
	char *path = edited_copy("PU", "os_index", "40");

	expect_error(path, EINVAL, "PU L#0: its cpuset is not exactly its os_index 40", NULL);
	unlink(path);
	free(path);
	path = edited_copy("NUMANode", "os_index", "7");
	expect_error(path, EINVAL, "NUMA node L#0: its nodeset is not exactly its os_index 7", NULL);
	unlink(path);
	free(path);
}

/* An hwloc XML file of nodes NUMA nodes with one PU each, as lstopo writes it. */
static char *many_nodes_xml(unsigned nodes)
{
	size_t cap = 4096 + nodes * 512;
	char *text = calloc(1, cap), *path;
	size_t n = 0;

	n += (size_t)snprintf(text + n, cap - n,
			      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
			      "<topology version=\"2.0\">\n"
			      "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x0\" complete_cpuset=\"0x0\" nodeset=\"0x0\" complete_nodeset=\"0x0\" gp_index=\"1\">\n");
	for (unsigned i = 0; i < nodes; i++)
		n += (size_t)snprintf(text + n, cap - n,
				      "    <object type=\"NUMANode\" os_index=\"%u\" local_memory=\"1073741824\" gp_index=\"%u\"/>\n",
				      i, 2 + i);
	snprintf(text + n, cap - n, "  </object>\n</topology>\n");
	path = temp_xml(text);
	free(text);
	return path;
}

/* The limit is the reason given, checked before hwloc reads the file. hwloc refuses this one
 * for another reason (NUMA nodes without cpusets), which used to read "cannot parse hwloc XML
 * (hwloc: Invalid argument)" and hid the real limit. */
static void too_many_nodes_xml(void **state)
{
	char *path = many_nodes_xml(65);

	expect_error(path, E2BIG, "65 NUMA nodes, at most 64 are supported", NULL);
	unlink(path);
	free(path);
}

/* A newline in the spec (found by the fuzzer) does not make the message two lines. */
static void newline_in_spec(void **state)
{
	struct ilab_topo *t = NULL;
	char err[512];

	assert_int_equal(ilab_topo_load("synthetic:pack:2\nbogus:1", &t, err, sizeof(err)), -EINVAL);
	assert_null(t);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "synthetic:pack:2 bogus:1: "));
}

/* "No such device" says how to get one: lstopo's I/O export, or the names there are. */
static void explain_no_device(void **state)
{
	struct ilab_topo *t;
	char buf[512];

	assert_int_equal(ilab_topo_load("synthetic:pack:2 numa:2 pu:2", &t, buf, sizeof(buf)), 0);
	assert_string_equal(ilab_topo_explain_no_device(t, NULL, buf, sizeof(buf)),
			    "topology synthetic:pack:2 numa:2 pu:2 has no PCI devices: export the machine with its I/O objects (`lstopo --of xml FILE`, without --no-io), or use a topology with devices (kunpeng920, a100-2node)");
	ilab_topo_free(t);
	assert_int_equal(ilab_topo_load("kunpeng920", &t, buf, sizeof(buf)), 0);
	assert_string_equal(ilab_topo_explain_no_device(t, "nic9", buf, sizeof(buf)),
			    "no device nic9 in topology kunpeng920; it has: nic0 sas0 nvme0");
	/* a list that does not fit is cut, and says so */
	assert_string_equal(ilab_topo_explain_no_device(t, "nic9", buf, 44),
			    "no device nic9 in topology kunpeng920; i...");
	assert_null(ilab_topo_explain_no_device(t, "nic9", NULL, 0));
	ilab_topo_free(t);
}

static void unknown_name(void **state)
{
	expect_error("kunpeng921", ENOENT, "unknown topology", NULL);
}

static void bad_synthetic(void **state)
{
	expect_error("synthetic:pack:two", EINVAL, "synthetic", NULL);
}

static void too_many_nodes(void **state)
{
	expect_error("synthetic:numa:65 pu:1", E2BIG, "at most 64", NULL);
}

static void too_many_cpus(void **state)
{
	expect_error("synthetic:pack:2 pu:2049", E2BIG, "at most 4096", NULL);
	/* counted before hwloc builds it (which for these took minutes), and without overflow */
	expect_error("synthetic:pu:100000", E2BIG, "100000 CPUs", NULL);
	expect_error("synthetic:pack:99999999999 numa:99999999999 pu:99999999999", E2BIG,
		     "over 4096 CPUs", NULL);
}

/* A FIFO (or a device) is no topology file: refused before reading, not waited on. */
static void not_a_regular_file(void **state)
{
	char path[] = "/tmp/ilab-topo-fifo-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_error(path, EINVAL, "not a regular file", NULL);
	unlink(path);
	expect_error("/dev/zero", EINVAL, "not a regular file", NULL);
}

static void null_and_empty_arguments(void **state)
{
	struct ilab_topo *t;
	char err[64];

	assert_int_equal(ilab_topo_load(NULL, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(ilab_topo_load("", &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(ilab_topo_load("kunpeng920", NULL, err, sizeof(err)), -EINVAL);
	/* no message buffer: still an error, still no crash */
	assert_int_equal(ilab_topo_load(DATA "broken-truncated.xml", &t, NULL, 0), -EINVAL);
	/* a tiny buffer truncates the message safely */
	assert_int_equal(ilab_topo_load(DATA "broken-truncated.xml", &t, err, 8), -EINVAL);
	assert_int_equal(strlen(err), 7);
	ilab_topo_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_file),
		cmocka_unit_test(directory_instead_of_file),
		cmocka_unit_test(truncated_xml),
		cmocka_unit_test(garbage_text),
		cmocka_unit_test(no_numa_node),
		cmocka_unit_test(distance_matrix_with_missing_values),
		cmocka_unit_test(distances_diagonal_not_minimum),
		cmocka_unit_test(distances_above_slit_range),
		cmocka_unit_test(distances_zero_diagonal),
		cmocka_unit_test(empty_file),
		cmocka_unit_test(malformed_xml),
		cmocka_unit_test(unknown_name),
		cmocka_unit_test(bad_synthetic),
		cmocka_unit_test(not_a_regular_file),
		cmocka_unit_test(too_many_nodes),
		cmocka_unit_test(too_many_cpus),
		cmocka_unit_test(null_and_empty_arguments),
		cmocka_unit_test(missing_complete_sets),
		cmocka_unit_test(missing_os_index),
		cmocka_unit_test(duplicate_pu_os_index),
		cmocka_unit_test(nonsense_local_memory),
		cmocka_unit_test(local_memory_values),
		cmocka_unit_test(os_index_not_its_set),
		cmocka_unit_test(node_memory_above_limit),
		cmocka_unit_test(broken_attribute_syntax),
		cmocka_unit_test(explain_no_device),
		cmocka_unit_test(newline_in_spec),
		cmocka_unit_test(too_many_nodes_xml),
	};

	/* hwloc's own complaints would only clutter the test log */
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
