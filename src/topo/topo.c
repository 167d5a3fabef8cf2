/* topo.c — the topology object: building it, checking it, answering questions about it, and
 * picking the loader for a spec. Not a loader itself (see topo_preset.c, topo_hwloc.c).
 */
#include "topo/topo_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int topo_fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

const char *ilab_dev_kind_name(enum ilab_dev_kind kind)
{
	switch (kind) {
	case ILAB_DEV_NIC: return "nic";
	case ILAB_DEV_GPU: return "gpu";
	case ILAB_DEV_NVME: return "nvme";
	case ILAB_DEV_STORAGE: return "storage";
	case ILAB_DEV_OTHER: break;
	}
	return "other";
}

struct ilab_topo *topo_alloc(const char *name)
{
	struct ilab_topo *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->nr_packages = 1;
	return t;
}

void ilab_topo_free(struct ilab_topo *t)
{
	if (!t)
		return;
	free(t->cpu_node);
	free(t->node_cpus);
	free(t->dist);
	free(t->rootports);
	free(t->smmus);
	free(t->devices);
	free(t);
}

int topo_set_cpus(struct ilab_topo *t, unsigned nr_nodes, unsigned nr_cpus, const int *cpu_node,
		  char *err, size_t errlen)
{
	if (nr_nodes == 0)
		return topo_fail(err, errlen, EINVAL, "%s: no NUMA node", t->name);
	if (nr_nodes > ILAB_TOPO_MAX_NODES)
		return topo_fail(err, errlen, E2BIG, "%s: %u NUMA nodes, at most %d are supported",
				 t->name, nr_nodes, ILAB_TOPO_MAX_NODES);
	if (nr_cpus == 0)
		return topo_fail(err, errlen, EINVAL, "%s: no CPU", t->name);
	if (nr_cpus > ILAB_TOPO_MAX_CPUS)
		return topo_fail(err, errlen, E2BIG, "%s: %u CPUs, at most %d are supported",
				 t->name, nr_cpus, ILAB_TOPO_MAX_CPUS);

	t->cpu_node = malloc(nr_cpus * sizeof(*t->cpu_node));
	t->node_cpus = malloc(nr_cpus * sizeof(*t->node_cpus));
	if (!t->cpu_node || !t->node_cpus)
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
	t->nr_nodes = nr_nodes;
	t->nr_cpus = nr_cpus;
	memcpy(t->cpu_node, cpu_node, nr_cpus * sizeof(*cpu_node));

	/* Counting sort by node keeps CPUs ascending inside each node. */
	unsigned count[ILAB_TOPO_MAX_NODES] = { 0 };
	for (unsigned c = 0; c < nr_cpus; c++) {
		if (cpu_node[c] < 0 || (unsigned)cpu_node[c] >= nr_nodes)
			return topo_fail(err, errlen, EINVAL, "%s: CPU %u is in no NUMA node",
					 t->name, c);
		count[cpu_node[c]]++;
	}
	t->node_first[0] = 0;
	for (unsigned n = 0; n < nr_nodes; n++)
		t->node_first[n + 1] = t->node_first[n] + count[n];
	unsigned fill[ILAB_TOPO_MAX_NODES];
	memcpy(fill, t->node_first, sizeof(fill));
	for (unsigned c = 0; c < nr_cpus; c++)
		t->node_cpus[fill[cpu_node[c]]++] = c;
	return 0;
}

static unsigned default_distance(const struct ilab_topo *t, unsigned a, unsigned b)
{
	if (a == b)
		return ILAB_TOPO_DIST_LOCAL;
	if (t->node_package[a] == t->node_package[b])
		return ILAB_TOPO_DIST_SAME_PACKAGE;
	return ILAB_TOPO_DIST_OTHER_PACKAGE;
}

/* SLIT rules (ACPI 6.5 §5.2.17): a node is nearest to itself, 255 means "unreachable", which a
 * model of a single coherent machine cannot use. */
static int check_distances(const struct ilab_topo *t, const unsigned *d, char *err, size_t errlen)
{
	unsigned n = t->nr_nodes;

	for (unsigned i = 0; i < n; i++) {
		unsigned self = d[i * n + i];

		if (self < 1)
			return topo_fail(err, errlen, EINVAL,
					 "%s: nonsense distances: [%u][%u] = %u, must be at least 1",
					 t->name, i, i, self);
		for (unsigned j = 0; j < n; j++) {
			unsigned v = d[i * n + j];

			if (v > 254)
				return topo_fail(err, errlen, EINVAL,
						 "%s: nonsense distances: [%u][%u] = %u, above 254 (SLIT range)",
						 t->name, i, j, v);
			if (v < self)
				return topo_fail(err, errlen, EINVAL,
						 "%s: nonsense distances: [%u][%u] = %u is less than the diagonal [%u][%u] = %u",
						 t->name, i, j, v, i, i, self);
		}
	}
	return 0;
}

int topo_set_distances(struct ilab_topo *t, const unsigned *matrix, char *err, size_t errlen)
{
	unsigned n = t->nr_nodes;

	free(t->dist);
	t->dist = malloc((size_t)n * n * sizeof(*t->dist));
	if (!t->dist)
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", t->name);
	if (!matrix) {
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++)
				t->dist[i * n + j] = default_distance(t, i, j);
		t->dist_defaulted = true;
		return 0;
	}
	int ret = check_distances(t, matrix, err, errlen);
	if (ret)
		return ret;
	memcpy(t->dist, matrix, (size_t)n * n * sizeof(*t->dist));
	t->dist_defaulted = false;
	return 0;
}

/* Grow an array of elem-sized items to hold one more. */
static int grow(void **arr, unsigned *cap, unsigned nr, size_t elem)
{
	if (nr < *cap)
		return 0;
	unsigned ncap = *cap ? *cap * 2 : 8;
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

int topo_add_smmu(struct ilab_topo *t, int node, const char *name)
{
	if (grow((void **)&t->smmus, &t->cap_smmus, t->nr_smmus, sizeof(*t->smmus)))
		return -ENOMEM;
	struct ilab_smmu_desc *s = &t->smmus[t->nr_smmus];
	memset(s, 0, sizeof(*s));
	s->id = t->nr_smmus;
	s->node = node;
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->arch, sizeof(s->arch), "smmuv3"); /* every source models SMMUv3 today */
	return (int)t->nr_smmus++;
}

int topo_add_rootport(struct ilab_topo *t, int node, unsigned smmu, const char *name)
{
	if (grow((void **)&t->rootports, &t->cap_rootports, t->nr_rootports, sizeof(*t->rootports)))
		return -ENOMEM;
	struct ilab_rootport *r = &t->rootports[t->nr_rootports];
	memset(r, 0, sizeof(*r));
	r->id = t->nr_rootports;
	r->node = node;
	r->smmu = smmu;
	snprintf(r->name, sizeof(r->name), "%s", name);
	return (int)t->nr_rootports++;
}

/* A device sits on its root port's node and behind the root port's SMMU. */
int topo_add_device(struct ilab_topo *t, enum ilab_dev_kind kind, unsigned rootport, uint32_t sid,
		    const char *name)
{
	if (rootport >= t->nr_rootports)
		return -EINVAL;
	if (grow((void **)&t->devices, &t->cap_devices, t->nr_devices, sizeof(*t->devices)))
		return -ENOMEM;
	struct ilab_device *d = &t->devices[t->nr_devices];
	memset(d, 0, sizeof(*d));
	d->id = t->nr_devices;
	d->kind = kind;
	d->rootport = rootport;
	d->node = t->rootports[rootport].node;
	d->smmu = t->rootports[rootport].smmu;
	d->sid = sid;
	snprintf(d->name, sizeof(d->name), "%s", name);
	return (int)t->nr_devices++;
}

int topo_check(const struct ilab_topo *t, char *err, size_t errlen)
{
	for (unsigned i = 0; i < t->nr_smmus; i++)
		if (t->smmus[i].node < 0 || (unsigned)t->smmus[i].node >= t->nr_nodes)
			return topo_fail(err, errlen, EINVAL, "%s: SMMU %s on no node", t->name,
					 t->smmus[i].name);
	for (unsigned i = 0; i < t->nr_rootports; i++)
		if (t->rootports[i].smmu >= t->nr_smmus)
			return topo_fail(err, errlen, EINVAL, "%s: root port %s has no SMMU", t->name,
					 t->rootports[i].name);
	for (unsigned i = 0; i < t->nr_devices; i++)
		for (unsigned j = 0; j < i; j++)
			if (t->devices[i].smmu == t->devices[j].smmu &&
			    t->devices[i].sid == t->devices[j].sid)
				return topo_fail(err, errlen, EINVAL,
						 "%s: devices %s and %s share StreamID 0x%x on SMMU %u",
						 t->name, t->devices[j].name, t->devices[i].name,
						 t->devices[i].sid, t->devices[i].smmu);
	return 0;
}

/* A spec is a file when it looks like one (".xml") or names an existing file; the check keeps
 * a typo in a preset name from being reported as "no such file". */
static bool looks_like_file(const char *spec)
{
	size_t len = strlen(spec);
	struct stat st;

	if (len >= 4 && strcasecmp(spec + len - 4, ".xml") == 0)
		return true;
	return stat(spec, &st) == 0;
}

static int load_spec(const char *spec, struct ilab_topo **out, char *err, size_t errlen);

/* The cause is one line even when the spec (a synthetic description, a path) holds a newline. */
int ilab_topo_load(const char *spec, struct ilab_topo **out, char *err, size_t errlen)
{
	int ret = load_spec(spec, out, err, errlen);

	if (ret && err)
		for (char *p = err; p < err + errlen && *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	return ret;
}

static int load_spec(const char *spec, struct ilab_topo **out, char *err, size_t errlen)
{
	static const char synth[] = "synthetic:";

	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return topo_fail(err, errlen, EINVAL, "no place to put the topology");
	*out = NULL;
	if (!spec || !*spec)
		return topo_fail(err, errlen, EINVAL, "empty topology name");
	if (topo_is_preset(spec))
		return topo_load_preset(spec, out, err, errlen);
	if (strcmp(spec, "host") == 0)
		return topo_load_hwloc_host(out, err, errlen);
	if (strncmp(spec, synth, sizeof(synth) - 1) == 0)
		return topo_load_hwloc_synthetic(spec + sizeof(synth) - 1, out, err, errlen);
	if (looks_like_file(spec))
		return topo_load_hwloc_xml(spec, out, err, errlen);
	return topo_fail(err, errlen, ENOENT,
			 "%s: unknown topology (expected kunpeng920, a100-2node, icelake-2s-a100, grace, host, an hwloc XML file or synthetic:<description>)",
			 spec);
}

const char *ilab_topo_name(const struct ilab_topo *t) { return t->name; }
unsigned ilab_topo_nr_nodes(const struct ilab_topo *t) { return t->nr_nodes; }
unsigned ilab_topo_nr_cpus(const struct ilab_topo *t) { return t->nr_cpus; }
bool ilab_topo_distances_defaulted(const struct ilab_topo *t) { return t->dist_defaulted; }
unsigned ilab_topo_nr_packages(const struct ilab_topo *t) { return t->nr_packages; }
unsigned ilab_topo_nr_rootports(const struct ilab_topo *t) { return t->nr_rootports; }
unsigned ilab_topo_nr_smmus(const struct ilab_topo *t) { return t->nr_smmus; }
unsigned ilab_topo_nr_devices(const struct ilab_topo *t) { return t->nr_devices; }

int ilab_topo_cpu_node(const struct ilab_topo *t, unsigned cpu)
{
	return cpu < t->nr_cpus ? t->cpu_node[cpu] : -1;
}

const unsigned *ilab_topo_node_cpus(const struct ilab_topo *t, unsigned node, unsigned *n)
{
	if (node >= t->nr_nodes) {
		if (n)
			*n = 0;
		return NULL;
	}
	if (n)
		*n = t->node_first[node + 1] - t->node_first[node];
	return &t->node_cpus[t->node_first[node]];
}

/* Out-of-range nodes get 0, which no valid distance is, so a caller's bug shows. */
unsigned ilab_topo_distance(const struct ilab_topo *t, unsigned from, unsigned to)
{
	if (from >= t->nr_nodes || to >= t->nr_nodes)
		return 0;
	return t->dist[from * t->nr_nodes + to];
}

int ilab_topo_node_package(const struct ilab_topo *t, unsigned node)
{
	return node < t->nr_nodes ? t->node_package[node] : -1;
}

const struct ilab_rootport *ilab_topo_rootport(const struct ilab_topo *t, unsigned i)
{
	return i < t->nr_rootports ? &t->rootports[i] : NULL;
}

const struct ilab_smmu_desc *ilab_topo_smmu(const struct ilab_topo *t, unsigned i)
{
	return i < t->nr_smmus ? &t->smmus[i] : NULL;
}

const struct ilab_device *ilab_topo_device(const struct ilab_topo *t, unsigned i)
{
	return i < t->nr_devices ? &t->devices[i] : NULL;
}

const struct ilab_device *ilab_topo_find_device(const struct ilab_topo *t, const char *name)
{
	for (unsigned i = 0; i < t->nr_devices; i++)
		if (strcmp(t->devices[i].name, name) == 0)
			return &t->devices[i];
	return NULL;
}

char *ilab_topo_explain_no_device(const struct ilab_topo *t, const char *name, char *buf,
				  size_t len)
{
	size_t n;

	if (!buf || !len)
		return buf;
	if (t->nr_devices == 0) {
		/* XML from `lstopo --no-io`, or a synthetic description: hwloc has no PCI there */
		snprintf(buf, len,
			 "topology %s has no PCI devices: export the machine with its I/O objects (`lstopo --of xml FILE`, without --no-io), or use a topology with devices (kunpeng920, a100-2node)",
			 t->name);
		return buf;
	}
	if (name)
		n = (size_t)snprintf(buf, len, "no device %s in topology %s; it has:", name,
				     t->name);
	else
		n = (size_t)snprintf(buf, len, "no suitable device in topology %s; it has:",
				     t->name);
	for (unsigned i = 0; i < t->nr_devices && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " %s", t->devices[i].name);
	if (n >= len && len > 4)
		memcpy(buf + len - 4, "...", 4); /* the list is cut short, and says so */
	return buf;
}
