/* topo_hwloc.c — topologies that hwloc discovers: this host, an hwloc XML file, a synthetic
 * description; and the I/O side derived from their PCI host bridges.
 * Not the presets (topo_preset.c), which need no hwloc at all.
 */
#include "topo/topo_internal.h"

#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XML_MAX_BYTES (256u << 20) /* no lstopo output is near this; bounds a bad path */
/* lstopo reads a 4096-CPU machine's XML in well under a second; a minute is a hang */
#define TOPO_LOAD_TIMEOUT_S 60

/* Node of a NUMA object: its logical index. */
static int numa_logical(hwloc_topology_t h, unsigned os_index)
{
	hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(h, os_index);

	return n ? (int)n->logical_index : -1;
}

struct os_idx {
	unsigned os, logical;
};

static int cmp_os_idx(const void *a, const void *b)
{
	const struct os_idx *x = a, *y = b;

	if (x->os != y->os)
		return x->os < y->os ? -1 : 1;
	return x->logical < y->logical ? -1 : x->logical > y->logical;
}

/* hwloc's own invariant (what its topology check asserts): a PU's cpuset, and a NUMA node's
 * nodeset, is exactly its os_index. hwloc loads a file that breaks it, and the breakage would
 * only show later as a CPU "in no NUMA node" or a short distance matrix: name it here. */
static int check_os_indexes(hwloc_topology_t h, struct ilab_topo *t, hwloc_obj_type_t type,
			    int nr, char *err, size_t errlen)
{
	const char *what = type == HWLOC_OBJ_PU ? "PU" : "NUMA node";
	struct os_idx *idx = calloc((size_t)nr, sizeof(*idx));
	int ret = 0;

	if (!idx)
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
	for (int i = 0; i < nr && !ret; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(h, type, (unsigned)i);

		idx[i].os = o->os_index;
		idx[i].logical = (unsigned)i;
		if (o->os_index == HWLOC_UNKNOWN_INDEX)
			ret = topo_fail(err, errlen, EINVAL, "%s: %s L#%d has no os_index", t->name,
					what, i);
	}
	qsort(idx, (size_t)nr, sizeof(*idx), cmp_os_idx);
	for (int i = 1; i < nr && !ret; i++)
		if (idx[i].os == idx[i - 1].os)
			ret = topo_fail(err, errlen, EINVAL, "%s: %ss L#%u and L#%u have the same os_index %u",
					t->name, what, idx[i - 1].logical, idx[i].logical, idx[i].os);
	for (int i = 0; i < nr && !ret; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(h, type, (unsigned)i);
		hwloc_const_bitmap_t set = type == HWLOC_OBJ_PU ? o->cpuset : o->nodeset;

		if (!set || hwloc_bitmap_weight(set) != 1 ||
		    hwloc_bitmap_first(set) != (int)o->os_index)
			ret = topo_fail(err, errlen, EINVAL,
					"%s: %s L#%d: its %s is not exactly its os_index %u", t->name,
					what, i, type == HWLOC_OBJ_PU ? "cpuset" : "nodeset",
					o->os_index);
	}
	free(idx);
	return ret;
}

/* More memory than a 52-bit physical address space is a misread size (hwloc reads an XML
 * local_memory="-1" as 2^64-1), not a machine. */
static int check_node_memory(hwloc_topology_t h, struct ilab_topo *t, int nr_nodes, char *err,
			     size_t errlen)
{
	for (int n = 0; n < nr_nodes; n++) {
		hwloc_obj_t node = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)n);
		unsigned long long mem = node->attr ? node->attr->numanode.local_memory : 0;

		if (mem > TOPO_MAX_NODE_MEMORY)
			return topo_fail(err, errlen, EINVAL,
					 "%s: NUMA node L#%d has %llu bytes of memory, more than 4 PiB (2^52 bytes, a 52-bit physical address space)",
					 t->name, n, mem);
	}
	return 0;
}

static int load_cpus(hwloc_topology_t h, struct ilab_topo *t, char *err, size_t errlen)
{
	int nr_nodes = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
	int nr_pus = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);

	if (nr_nodes <= 0)
		return topo_fail(err, errlen, EINVAL, "%s: declares no NUMA node", t->name);
	if (nr_pus <= 0)
		return topo_fail(err, errlen, EINVAL, "%s: declares no CPU (PU)", t->name);
	if (nr_nodes > ILAB_TOPO_MAX_NODES)
		return topo_fail(err, errlen, E2BIG, "%s: %d NUMA nodes, at most %d are supported",
				 t->name, nr_nodes, ILAB_TOPO_MAX_NODES);
	if (nr_pus > ILAB_TOPO_MAX_CPUS)
		return topo_fail(err, errlen, E2BIG, "%s: %d CPUs, at most %d are supported",
				 t->name, nr_pus, ILAB_TOPO_MAX_CPUS);
	int ret = check_os_indexes(h, t, HWLOC_OBJ_PU, nr_pus, err, errlen);
	if (!ret)
		ret = check_os_indexes(h, t, HWLOC_OBJ_NUMANODE, nr_nodes, err, errlen);
	if (!ret)
		ret = check_node_memory(h, t, nr_nodes, err, errlen);
	if (ret)
		return ret;

	/* A PU inside several nodes' cpusets (e.g. DRAM + HBM nodes) belongs to the first. */
	int *map = calloc((size_t)nr_pus, sizeof(*map));
	if (!map)
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
	for (int c = 0; c < nr_pus; c++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)c);

		map[c] = -1;
		for (int n = 0; n < nr_nodes; n++) {
			hwloc_obj_t node = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)n);

			if (node->cpuset && hwloc_bitmap_isset(node->cpuset, pu->os_index)) {
				map[c] = n;
				break;
			}
		}
		if (map[c] < 0) {
			free(map);
			return topo_fail(err, errlen, EINVAL,
					 "%s: PU L#%d (os_index %u) is in no NUMA node's cpuset",
					 t->name, c, pu->os_index);
		}
	}
	ret = topo_set_cpus(t, (unsigned)nr_nodes, (unsigned)nr_pus, map, err, errlen);
	free(map);
	if (ret)
		return ret;

	int nr_packages = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE);
	t->nr_packages = nr_packages > 0 ? (unsigned)nr_packages : 1;
	for (int n = 0; n < nr_nodes; n++) {
		hwloc_obj_t node = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, (unsigned)n);
		hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, node);

		t->node_package[n] = pkg ? (int)pkg->logical_index : 0;
	}
	return 0;
}

/* The NUMA latency matrix if the source has one, else the documented default. */
static int load_distances(hwloc_topology_t h, struct ilab_topo *t, char *err, size_t errlen)
{
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1, n = t->nr_nodes;
	int ret;

	if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d,
					HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0 || nr == 0)
		return topo_set_distances(t, NULL, err, errlen);

	unsigned *m = calloc((size_t)n * n, sizeof(*m));
	if (!m) {
		hwloc_distances_release(h, d);
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
	}
	if (d->nbobjs != n) {
		ret = topo_fail(err, errlen, EINVAL,
				"%s: nonsense distances: the matrix covers %u of %u NUMA nodes",
				t->name, d->nbobjs, n);
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		for (unsigned j = 0; j < n; j++) {
			unsigned a = d->objs[i]->logical_index, b = d->objs[j]->logical_index;
			hwloc_uint64_t v = d->values[i * n + j];

			if (v > 254) {
				ret = topo_fail(err, errlen, EINVAL,
						"%s: nonsense distances: [%u][%u] = %llu, above 254 (SLIT range)",
						t->name, a, b, (unsigned long long)v);
				goto out;
			}
			m[a * n + b] = (unsigned)v;
		}
	}
	ret = topo_set_distances(t, m, err, errlen);
out:
	free(m);
	hwloc_distances_release(h, d);
	return ret;
}

/* Where a PCI host bridge (or a bridgeless device) sits: the first node of its nearest
 * non-I/O ancestor, node 0 when that ancestor spans no node. */
static int io_node(hwloc_topology_t h, hwloc_obj_t obj)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(h, obj);
	int first = (anc && anc->nodeset) ? hwloc_bitmap_first(anc->nodeset) : -1;
	int node = first >= 0 ? numa_logical(h, (unsigned)first) : -1;

	return node >= 0 ? node : 0;
}

static bool is_host_bridge(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_BRIDGE && o->attr &&
	       o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

static enum ilab_dev_kind pci_kind(unsigned class_id)
{
	if (class_id == 0x0108)
		return ILAB_DEV_NVME;
	if ((class_id >> 8) == 0x01)
		return ILAB_DEV_STORAGE;
	if ((class_id >> 8) == 0x02 || class_id == 0x0c06) /* network, InfiniBand */
		return ILAB_DEV_NIC;
	if ((class_id >> 8) == 0x03)
		return ILAB_DEV_GPU;
	return ILAB_DEV_OTHER;
}

/* One SMMU and one root port per PCI host bridge, on the bridge's node. A device hwloc shows
 * without a host bridge above it gets one per node, made on first use. */
struct io_map {
	hwloc_obj_t bridge[256];
	unsigned nr_bridges;
	int node_rootport[ILAB_TOPO_MAX_NODES]; /* bridgeless devices' root port, -1 if none */
};

static int add_bridge(struct ilab_topo *t, int node, const char *label)
{
	char name[ILAB_TOPO_NAME_MAX];
	int smmu;

	snprintf(name, sizeof(name), "smmu%u", t->nr_smmus);
	smmu = topo_add_smmu(t, node, name);
	if (smmu < 0)
		return smmu;
	return topo_add_rootport(t, node, (unsigned)smmu, label);
}

static int rootport_of(hwloc_topology_t h, struct ilab_topo *t, struct io_map *io, hwloc_obj_t dev)
{
	hwloc_obj_t o;

	for (o = dev->parent; o && !is_host_bridge(o); o = o->parent)
		;
	if (o) {
		for (unsigned i = 0; i < io->nr_bridges; i++)
			if (io->bridge[i] == o)
				return (int)i;
	}
	int node = io_node(h, dev);
	if (io->node_rootport[node] < 0) {
		char label[ILAB_TOPO_NAME_MAX];

		snprintf(label, sizeof(label), "node%d-pci", node);
		io->node_rootport[node] = add_bridge(t, node, label);
	}
	return io->node_rootport[node];
}

static int load_io(hwloc_topology_t h, struct ilab_topo *t, char *err, size_t errlen)
{
	struct io_map io = { .nr_bridges = 0 };
	hwloc_obj_t o = NULL;

	for (unsigned n = 0; n < ILAB_TOPO_MAX_NODES; n++)
		io.node_rootport[n] = -1;
	/* Host bridges first, so their root ports are numbered 0..nr_bridges-1. */
	while ((o = hwloc_get_next_bridge(h, o))) {
		char label[ILAB_TOPO_NAME_MAX];

		if (!is_host_bridge(o))
			continue;
		if (io.nr_bridges == sizeof(io.bridge) / sizeof(io.bridge[0]))
			return topo_fail(err, errlen, E2BIG, "%s: more than %zu PCI host bridges",
					 t->name, sizeof(io.bridge) / sizeof(io.bridge[0]));
		snprintf(label, sizeof(label), "pci%04x:[%02x-%02x]",
			 o->attr->bridge.downstream.pci.domain,
			 o->attr->bridge.downstream.pci.secondary_bus,
			 o->attr->bridge.downstream.pci.subordinate_bus);
		if (add_bridge(t, io_node(h, o), label) < 0)
			return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
		io.bridge[io.nr_bridges++] = o;
	}
	for (o = NULL; (o = hwloc_get_next_pcidev(h, o));) {
		struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;
		char name[ILAB_TOPO_NAME_MAX];
		int rp = rootport_of(h, t, &io, o);

		if (rp < 0)
			return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
		snprintf(name, sizeof(name), "%04x:%02x:%02x.%x", p->domain, p->bus, p->dev, p->func);
		/* StreamID = PCI requester ID, the identity mapping IORT gives most root complexes. */
		if (topo_add_device(t, pci_kind(p->class_id), (unsigned)rp,
				    ((uint32_t)p->bus << 8) | ((uint32_t)p->dev << 3) | p->func,
				    name) < 0)
			return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
	}
	return topo_check(t, err, errlen);
}

/* Turn a loaded hwloc topology into ours. */
static int convert(hwloc_topology_t h, const char *name, struct ilab_topo **out, char *err,
		   size_t errlen)
{
	struct ilab_topo *t = topo_alloc(name);
	int ret;

	if (!t)
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", name);
	ret = load_cpus(h, t, err, errlen);
	if (!ret)
		ret = load_distances(h, t, err, errlen);
	if (!ret)
		ret = load_io(h, t, err, errlen);
	if (ret) {
		ilab_topo_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

static int init_hwloc(hwloc_topology_t *h, const char *name, char *err, size_t errlen)
{
	if (hwloc_topology_init(h) < 0)
		return topo_fail(err, errlen, ENOMEM, "%s: cannot initialise hwloc", name);
	/* PCI devices and the bridges above them; "important" drops the uninteresting ones. */
	hwloc_topology_set_io_types_filter(*h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	/* On Linux hwloc finds PCI in sysfs by itself; its libpciaccess plugin ("pci") finds the
	 * same devices but leaks memory on every load (LeakSanitizer fails the ASan tests). */
	hwloc_topology_set_components(*h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
	return 0;
}

static int load_and_convert(hwloc_topology_t h, const char *name, struct ilab_topo **out,
			    char *err, size_t errlen, const char *what)
{
	int ret;

	if (hwloc_topology_load(h) < 0) {
		int e = errno ? errno : EINVAL;

		ret = topo_fail(err, errlen, e, "%s: %s (hwloc: %s)", name, what, strerror(e));
	} else {
		ret = convert(h, name, out, err, errlen);
	}
	hwloc_topology_destroy(h);
	return ret;
}

int topo_load_hwloc_host(struct ilab_topo **out, char *err, size_t errlen)
{
	hwloc_topology_t h;
	int ret = init_hwloc(&h, "host", err, errlen);

	if (ret)
		return ret;
	return load_and_convert(h, "host", out, err, errlen, "cannot discover this machine's topology");
}

/* The number of PUs a synthetic description asks for: the product of its levels' arities
 * ("pack:2 numa:2 core:4 pu:2" is 32), saturating. Tokens it cannot read (memory children in
 * brackets, a level without a count) count 1: hwloc judges the syntax. hwloc builds the whole
 * tree before we could count it, which for "pu:100000" takes minutes: refuse those first. */
static unsigned long long synthetic_pus(const char *desc)
{
	unsigned long long pus = 1;

	for (const char *p = desc; *p;) {
		const char *colon, *end;

		while (isspace((unsigned char)*p))
			p++;
		end = p;
		while (*end && !isspace((unsigned char)*end))
			end++;
		colon = memchr(p, ':', (size_t)(end - p));
		if (*p != '[' && colon && isdigit((unsigned char)colon[1])) {
			unsigned long long n = strtoull(colon + 1, NULL, 10);

			pus = n && pus > ULLONG_MAX / n ? ULLONG_MAX : pus * n;
		}
		p = end;
	}
	return pus;
}

struct synthetic_job {
	const char *name, *desc;
};

static int synthetic_load(const struct synthetic_job *j, struct ilab_topo **out, char *err,
			  size_t errlen)
{
	hwloc_topology_t h;
	int ret = init_hwloc(&h, j->name, err, errlen);

	if (ret)
		return ret;
	if (hwloc_topology_set_synthetic(h, j->desc) < 0) {
		hwloc_topology_destroy(h);
		return topo_fail(err, errlen, EINVAL, "%s: invalid hwloc synthetic description",
				 j->name);
	}
	return load_and_convert(h, j->name, out, err, errlen, "cannot build the synthetic topology");
}

/* In the child of topo_run_isolated: only whether it comes back matters. */
static void synthetic_trial(void *arg)
{
	struct ilab_topo *t = NULL;
	char err[8];

	synthetic_load(arg, &t, err, sizeof(err));
}

int topo_load_hwloc_synthetic(const char *desc, struct ilab_topo **out, char *err, size_t errlen)
{
	char name[256];
	struct synthetic_job job = { .name = name, .desc = desc };
	unsigned long long pus;
	int ret;

	snprintf(name, sizeof(name), "synthetic:%s", desc);
	pus = synthetic_pus(desc);
	if (pus > ILAB_TOPO_MAX_CPUS)
		return topo_fail(err, errlen, E2BIG, "%s: %s%llu CPUs, at most %d are supported", name,
				 pus == ULLONG_MAX ? "over " : "",
				 pus == ULLONG_MAX ? (unsigned long long)ILAB_TOPO_MAX_CPUS : pus,
				 ILAB_TOPO_MAX_CPUS);
	ret = topo_run_isolated(name, "check the description against hwloc's synthetic syntax",
				synthetic_trial, &job, TOPO_LOAD_TIMEOUT_S, err, errlen);
	if (ret)
		return ret;
	return synthetic_load(&job, out, err, errlen);
}

/* Read a whole file, NUL-terminated. */
static int read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	size_t cap = 1 << 16, n = 0;
	struct stat sb;
	FILE *f;
	char *b;

	/* a FIFO or a device would block or never end: only regular files are topologies */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return S_ISDIR(sb.st_mode)
			       ? topo_fail(err, errlen, EISDIR, "%s: cannot read (a directory)", path)
			       : topo_fail(err, errlen, EINVAL, "%s: not a regular file", path);
	f = fopen(path, "rb");
	if (!f)
		return topo_fail(err, errlen, errno, "%s: cannot read (%s)", path, strerror(errno));
	b = malloc(cap);
	while (b) {
		n += fread(b + n, 1, cap - 1 - n, f);
		if (ferror(f) || n < cap - 1)
			break;
		if (cap >= XML_MAX_BYTES) {
			fclose(f);
			free(b);
			return topo_fail(err, errlen, EFBIG, "%s: larger than %u MiB", path,
					 XML_MAX_BYTES >> 20);
		}
		char *nb = realloc(b, cap * 2);
		if (!nb) {
			free(b);
			b = NULL;
			break;
		}
		b = nb;
		cap *= 2;
	}
	if (!b) {
		fclose(f);
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", path);
	}
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		fclose(f);
		free(b);
		return topo_fail(err, errlen, e, "%s: cannot read (%s)", path, strerror(e));
	}
	fclose(f);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* hwloc's own parse errors say little, so say what is wrong with the text first. */
static int check_xml_text(const char *path, const char *buf, size_t len, char *err, size_t errlen)
{
	if (len == 0)
		return topo_fail(err, errlen, EINVAL, "%s: empty file", path);
	if (strlen(buf) != len)
		return topo_fail(err, errlen, EINVAL, "%s: not an hwloc XML topology (binary data)",
				 path);
	if (!strstr(buf, "<topology"))
		return topo_fail(err, errlen, EINVAL,
				 "%s: not an hwloc XML topology (no <topology> element)", path);
	if (!strstr(buf, "</topology>"))
		return topo_fail(err, errlen, EINVAL,
				 "%s: truncated hwloc XML (no closing </topology>)", path);
	if (!strstr(buf, "\"NUMANode\""))
		return topo_fail(err, errlen, EINVAL, "%s: declares no NUMA node", path);
	return 0;
}

struct xml_job {
	const char *name, *buf;
	size_t len;
};

static int xml_load(const struct xml_job *j, struct ilab_topo **out, char *err, size_t errlen)
{
	hwloc_topology_t h;
	int ret = init_hwloc(&h, j->name, err, errlen);

	if (ret)
		return ret;
	/* The file describes a whole machine, not what some process on it was allowed to use. */
	hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	if (hwloc_topology_set_xmlbuffer(h, j->buf, (int)j->len + 1) < 0) {
		hwloc_topology_destroy(h);
		return topo_fail(err, errlen, EINVAL, "%s: cannot parse hwloc XML (malformed)",
				 j->name);
	}
	return load_and_convert(h, j->name, out, err, errlen, "cannot parse hwloc XML");
}

/* In the child of topo_run_isolated: only whether it comes back matters. */
static void xml_trial(void *arg)
{
	struct ilab_topo *t = NULL;
	char err[8];

	xml_load(arg, &t, err, sizeof(err));
}

int topo_load_hwloc_xml_buffer(const char *name, const char *buf, size_t len,
			       struct ilab_topo **out, char *err, size_t errlen)
{
	struct xml_job job = { .name = name, .buf = buf, .len = len };
	int ret;

	if (len >= XML_MAX_BYTES)
		return topo_fail(err, errlen, EFBIG, "%s: larger than %u MiB", name,
				 XML_MAX_BYTES >> 20);
	ret = check_xml_text(name, buf, len, err, errlen);
	if (!ret)
		ret = topo_check_xml_objects(name, buf, err, errlen);
	/* the checks above catch the crashes we know of; the child catches those we do not */
	if (!ret)
		ret = topo_run_isolated(name, "the file is damaged or hand-edited: export it again with lstopo",
					xml_trial, &job, TOPO_LOAD_TIMEOUT_S, err, errlen);
	if (!ret)
		ret = xml_load(&job, out, err, errlen);
	return ret;
}

int topo_load_hwloc_xml(const char *path, struct ilab_topo **out, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int ret;

	ret = read_file(path, &buf, &len, err, errlen);
	if (ret)
		return ret;
	ret = topo_load_hwloc_xml_buffer(path, buf, len, out, err, errlen);
	free(buf);
	return ret;
}
