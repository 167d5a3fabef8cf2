/* topo_print.c — the topology as text for people and as JSON for programs.
 * Not a serialisation that can be read back: a topology is loaded from its source.
 */
#include "topo/topo_internal.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

char *topo_format_cpulist(const unsigned *cpus, unsigned n, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < n && off < len;) {
		unsigned j = i;
		int w;

		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j == i)
			w = snprintf(buf + off, len - off, "%s%u", off ? "," : "", cpus[i]);
		else
			w = snprintf(buf + off, len - off, "%s%u-%u", off ? "," : "", cpus[i], cpus[j]);
		if (w < 0)
			break;
		off += (size_t)w;
		i = j + 1;
	}
	return buf;
}

static void print_distances(const struct ilab_topo *t, FILE *f)
{
	fprintf(f, "distances (SLIT%s):\n",
		t->dist_defaulted ? ", default: the source has none" : "");
	fprintf(f, "%8s", "");
	for (unsigned j = 0; j < t->nr_nodes; j++)
		fprintf(f, " %4u", j);
	fputc('\n', f);
	for (unsigned i = 0; i < t->nr_nodes; i++) {
		fprintf(f, "  node %-2u", i);
		for (unsigned j = 0; j < t->nr_nodes; j++)
			fprintf(f, " %4u", ilab_topo_distance(t, i, j));
		fputc('\n', f);
	}
}

/* How people call one unit of architecture arch: "DMAR unit" for VT-d (Intel's name, and
 * Linux's dmarN), "SMMU" for SMMUv3, else the architecture's name. */
static const char *unit_kind(const char *arch)
{
	if (!strcmp(arch, "vtd"))
		return "DMAR unit";
	if (!arch[0] || !strcmp(arch, "smmuv3"))
		return "SMMU";
	return arch;
}

static const char *unit_arch(const struct ilab_smmu_desc *u)
{
	return u->arch[0] ? u->arch : "smmuv3";
}

/* The name of unit i as its architecture has it (smmu2, dmar0), for a root port or device. */
static const char *unit_name(const struct ilab_topo *t, unsigned i)
{
	return i < t->nr_smmus ? t->smmus[i].name : "none";
}

/* The IOMMU units, each with its kind and architecture. */
static void print_units(const struct ilab_topo *t, FILE *f)
{
	fprintf(f, "IOMMU units: %u\n", t->nr_smmus);
	for (unsigned i = 0; i < t->nr_smmus; i++)
		fprintf(f, "  %-8s node %-2d %s (%s)\n", t->smmus[i].name, t->smmus[i].node,
			unit_kind(unit_arch(&t->smmus[i])), unit_arch(&t->smmus[i]));
}

int ilab_topo_print(const struct ilab_topo *t, FILE *f)
{
	char cpus[8192];

	fprintf(f, "topology %s: %u NUMA node%s, %u CPU%s, %u package%s\n", t->name, t->nr_nodes,
		t->nr_nodes == 1 ? "" : "s", t->nr_cpus, t->nr_cpus == 1 ? "" : "s",
		t->nr_packages, t->nr_packages == 1 ? "" : "s");
	fprintf(f, "nodes:\n");
	for (unsigned n = 0; n < t->nr_nodes; n++) {
		unsigned cnt;
		const unsigned *list = ilab_topo_node_cpus(t, n, &cnt);

		fprintf(f, "  node %-2u package %-2d %4u CPUs: %s\n", n, t->node_package[n], cnt,
			cnt ? topo_format_cpulist(list, cnt, cpus, sizeof(cpus)) : "none");
	}
	print_distances(t, f);
	fprintf(f, "root ports: %u\n", t->nr_rootports);
	for (unsigned i = 0; i < t->nr_rootports; i++)
		fprintf(f, "  rp%-3u %-20s node %-2d %s\n", i, t->rootports[i].name,
			t->rootports[i].node, unit_name(t, t->rootports[i].smmu));
	print_units(t, f);
	fprintf(f, "devices: %u\n", t->nr_devices);
	for (unsigned i = 0; i < t->nr_devices; i++) {
		const struct ilab_device *d = &t->devices[i];

		fprintf(f, "  %-14s %-7s node %-2d rp %-3u %-7s sid 0x%04x\n", d->name,
			ilab_dev_kind_name(d->kind), d->node, d->rootport, unit_name(t, d->smmu),
			d->sid);
	}
	return ferror(f) ? -EIO : 0;
}

/* json_*_set_new steals the reference even on failure, so building never leaks; a NULL
 * anywhere surfaces as a failed dump. */
static json_t *json_nodes(const struct ilab_topo *t)
{
	json_t *arr = json_array();
	char cpus[8192];

	for (unsigned n = 0; n < t->nr_nodes; n++) {
		unsigned cnt;
		const unsigned *list = ilab_topo_node_cpus(t, n, &cnt);
		json_t *o = json_object();
		json_t *cl = json_array();

		for (unsigned i = 0; i < cnt; i++)
			json_array_append_new(cl, json_integer(list[i]));
		json_object_set_new(o, "id", json_integer(n));
		json_object_set_new(o, "package", json_integer(t->node_package[n]));
		json_object_set_new(o, "nr_cpus", json_integer(cnt));
		json_object_set_new(o, "cpus", cl);
		json_object_set_new(o, "cpulist",
				    json_string(topo_format_cpulist(list, cnt, cpus, sizeof(cpus))));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *json_distances(const struct ilab_topo *t)
{
	json_t *m = json_array();

	for (unsigned i = 0; i < t->nr_nodes; i++) {
		json_t *row = json_array();

		for (unsigned j = 0; j < t->nr_nodes; j++)
			json_array_append_new(row, json_integer(ilab_topo_distance(t, i, j)));
		json_array_append_new(m, row);
	}
	return m;
}

static json_t *json_io(const struct ilab_topo *t, const char *what)
{
	json_t *arr = json_array();

	/* a root port's or device's unit by its name (smmu2, dmar0) under "iommu", whatever
	 * the architecture */
	if (strcmp(what, "rootports") == 0) {
		for (unsigned i = 0; i < t->nr_rootports; i++)
			json_array_append_new(arr, json_pack("{s:i, s:s, s:i, s:s}",
				"id", (int)i, "name", t->rootports[i].name,
				"node", t->rootports[i].node,
				"iommu", unit_name(t, t->rootports[i].smmu)));
	} else if (strcmp(what, "iommus") == 0) {
		for (unsigned i = 0; i < t->nr_smmus; i++)
			json_array_append_new(arr, json_pack("{s:i, s:s, s:i, s:s}", "id", (int)i,
				"name", t->smmus[i].name, "node", t->smmus[i].node,
				"arch", unit_arch(&t->smmus[i])));
	} else {
		for (unsigned i = 0; i < t->nr_devices; i++) {
			const struct ilab_device *d = &t->devices[i];

			json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:i, s:i, s:s, s:I}",
				"id", (int)i, "name", d->name, "kind", ilab_dev_kind_name(d->kind),
				"node", d->node, "rootport", (int)d->rootport,
				"iommu", unit_name(t, d->smmu), "sid", (json_int_t)d->sid));
		}
	}
	return arr;
}

int ilab_topo_print_json(const struct ilab_topo *t, FILE *f)
{
	json_t *root = json_object();
	int ret;

	if (!root)
		return -ENOMEM;
	json_object_set_new(root, "name", json_string(t->name));
	json_object_set_new(root, "nr_nodes", json_integer(t->nr_nodes));
	json_object_set_new(root, "nr_cpus", json_integer(t->nr_cpus));
	json_object_set_new(root, "nr_packages", json_integer(t->nr_packages));
	json_object_set_new(root, "nodes", json_nodes(t));
	json_object_set_new(root, "distances", json_distances(t));
	json_object_set_new(root, "distances_defaulted", json_boolean(t->dist_defaulted));
	json_object_set_new(root, "rootports", json_io(t, "rootports"));
	json_object_set_new(root, "iommus", json_io(t, "iommus"));
	json_object_set_new(root, "devices", json_io(t, "devices"));
	ret = json_dumpf(root, f, JSON_SORT_KEYS | JSON_INDENT(2));
	json_decref(root);
	if (ret == 0)
		fputc('\n', f);
	return (ret < 0 || ferror(f)) ? -EIO : 0;
}
