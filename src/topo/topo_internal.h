/* topo_internal.h — the topology object's layout and the builder the loaders share.
 * Not public API: callers outside src/topo use include/iommulab/topo.h only.
 */
#ifndef ILAB_TOPO_INTERNAL_H
#define ILAB_TOPO_INTERNAL_H

#include <iommulab/topo.h>

struct ilab_topo {
	char name[256];            /* the spec it was loaded from */
	unsigned nr_nodes;
	unsigned nr_cpus;
	unsigned nr_packages;
	int *cpu_node;             /* [nr_cpus] */
	unsigned *node_cpus;       /* all CPUs, grouped by node, ascending within a node */
	unsigned node_first[ILAB_TOPO_MAX_NODES + 1]; /* node n's CPUs: node_cpus[first[n]..first[n+1]) */
	int node_package[ILAB_TOPO_MAX_NODES];
	unsigned *dist;            /* [nr_nodes * nr_nodes], row = from */
	bool dist_defaulted;

	unsigned nr_rootports, nr_smmus, nr_devices;
	unsigned cap_rootports, cap_smmus, cap_devices;
	struct ilab_rootport *rootports;
	struct ilab_smmu_desc *smmus;
	struct ilab_device *devices;
};

/* Formats the one-line cause into err (if any) and returns -errnum (errnum > 0). */
int topo_fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Allocate an empty topology named name. */
struct ilab_topo *topo_alloc(const char *name);

/* Give the topology its CPUs: cpu_node[c] is CPU c's node (all < nr_nodes). The node CPU lists
 * are derived from it. Copies cpu_node. */
int topo_set_cpus(struct ilab_topo *t, unsigned nr_nodes, unsigned nr_cpus, const int *cpu_node,
		  char *err, size_t errlen);

/* Distances: either a full matrix (copied) or NULL for the documented default, which uses
 * node_package[] (set it first). Validates the matrix. */
int topo_set_distances(struct ilab_topo *t, const unsigned *matrix, char *err, size_t errlen);

/* Add I/O objects; they return the new object's index or a negative errno. */
int topo_add_smmu(struct ilab_topo *t, int node, const char *name);
int topo_add_rootport(struct ilab_topo *t, int node, unsigned smmu, const char *name);
int topo_add_device(struct ilab_topo *t, enum ilab_dev_kind kind, unsigned rootport, uint32_t sid,
		    const char *name);

/* Final consistency check: every I/O object on a valid node, StreamIDs unique per SMMU. */
int topo_check(const struct ilab_topo *t, char *err, size_t errlen);

/* Loaders (spec already classified). */
int topo_load_preset(const char *name, struct ilab_topo **out, char *err, size_t errlen);
bool topo_is_preset(const char *name);
int topo_load_hwloc_host(struct ilab_topo **out, char *err, size_t errlen);
int topo_load_hwloc_xml(const char *path, struct ilab_topo **out, char *err, size_t errlen);
int topo_load_hwloc_synthetic(const char *desc, struct ilab_topo **out, char *err, size_t errlen);

/* The hwloc XML text buf (buf[len] == '\0'), named name in messages; the loader of a file after
 * reading it, and the fuzzer's entry (fuzz/fuzz_topology.c). */
int topo_load_hwloc_xml_buffer(const char *name, const char *buf, size_t len,
			       struct ilab_topo **out, char *err, size_t errlen);

/* The largest NUMA node memory we accept: 2^52 bytes, a 52-bit physical address space. */
#define TOPO_MAX_NODE_MEMORY (1ull << 52)

/* Check an hwloc XML text (NUL-terminated) for what crashes libhwloc or what it misreads:
 * an object's cpuset without complete_cpuset (nodeset without complete_nodeset), a local_memory
 * that is no size, too many NUMA nodes. Errors are "name:line: cause". */
int topo_check_xml_objects(const char *name, const char *buf, char *err, size_t errlen);

/* Run fn(arg) in a child process, killed after timeout_s. 0 when it returns; a negative errno
 * and "name: hwloc crashed reading it (signal); fix" when it crashes, or -ETIMEDOUT. */
int topo_run_isolated(const char *name, const char *fix, void (*fn)(void *), void *arg,
		      unsigned timeout_s, char *err, size_t errlen);

/* Tests only: when set, the child calls it before fn, to stand in for a crash in hwloc. */
extern void (*topo_isolate_test_hook)(void);

/* "0-31,64-95" for a sorted CPU list; returns buf. */
char *topo_format_cpulist(const unsigned *cpus, unsigned n, char *buf, size_t len);

#endif /* ILAB_TOPO_INTERNAL_H */
