/* fuzz_topology.c — libFuzzer target for the topology loader users feed files and strings to:
 * hwloc XML text (first input byte even) and synthetic descriptions (odd), through the same
 * checks, crash isolation and conversion as `iommulab topo --topology`. Any input must give a
 * topology or a negative errno with a one-line error naming its source — never a crash, an
 * assert or a leak (ASan). A topology that loads must be consistent: every CPU on a node, every
 * distance in the SLIT range. Not a test. Seeds: fuzz/corpus/topology. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/topo.h"
#include "topo/topo_internal.h"

/* Leaks that libhwloc makes on its own error paths (objects of a half-parsed file) are not
 * ours to fix; leaks of what iommulab allocates still fail the run. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libhwloc.so\n";
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* hwloc's built-in XML parser, which every hwloc has: the libxml2 one (a plugin that
	 * hwloc unloads, so its leaks cannot even be attributed) is fuzzed by its own project */
	setenv("HWLOC_LIBXML", "0", 1);
	setenv("HWLOC_HIDE_ERRORS", "2", 1);
	return 0;
}

/* Synthetic strings longer than this say nothing new and slow every run down */
#define SYNTHETIC_MAX 256

static void check_error(const char *err, const char *name)
{
	/* every failure names its source first, on one line */
	if (!*err || strncmp(err, name, strlen(name)) != 0 || strchr(err, '\n'))
		abort();
}

static void check_topo(const struct ilab_topo *t)
{
	unsigned nodes = ilab_topo_nr_nodes(t), cpus = ilab_topo_nr_cpus(t), sum = 0;

	if (!nodes || nodes > ILAB_TOPO_MAX_NODES || !cpus || cpus > ILAB_TOPO_MAX_CPUS)
		abort();
	for (unsigned c = 0; c < cpus; c++)
		if (ilab_topo_cpu_node(t, c) < 0 || (unsigned)ilab_topo_cpu_node(t, c) >= nodes)
			abort();
	for (unsigned n = 0; n < nodes; n++) {
		unsigned k;

		ilab_topo_node_cpus(t, n, &k);
		sum += k;
		for (unsigned m = 0; m < nodes; m++) {
			unsigned d = ilab_topo_distance(t, n, m);

			if (d < 1 || d > 254 || d < ilab_topo_distance(t, n, n))
				abort();
		}
	}
	if (sum != cpus)
		abort();
	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++)
		if (ilab_topo_device(t, i)->smmu >= ilab_topo_nr_smmus(t))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ilab_topo *t = NULL;
	char err[512], *text, name[16];
	bool synthetic;
	int ret;

	if (size < 1)
		return 0;
	synthetic = data[0] & 1;
	data++, size--;
	if (synthetic && size > SYNTHETIC_MAX)
		return 0;
	/* the loaders take NUL-terminated text: a copy with the NUL, and "synthetic:" in front */
	text = malloc(size + 11);
	if (!text)
		return 0;
	memcpy(text, "synthetic:", 10);
	memcpy(text + 10, data, size);
	text[10 + size] = '\0';
	err[0] = '\0';
	if (synthetic) {
		if (strlen(text) != size + 10) { /* a NUL inside: not a string anyone can pass */
			free(text);
			return 0;
		}
		snprintf(name, sizeof(name), "synthetic:");
		ret = ilab_topo_load(text, &t, err, sizeof(err));
	} else {
		snprintf(name, sizeof(name), "f.xml");
		ret = topo_load_hwloc_xml_buffer(name, text + 10, size, &t, err, sizeof(err));
	}
	if (ret) {
		check_error(err, name);
		if (ret >= 0 || t)
			abort(); /* a failed load returns nothing */
	} else {
		check_topo(t);
		ilab_topo_free(t);
	}
	free(text);
	return 0;
}
