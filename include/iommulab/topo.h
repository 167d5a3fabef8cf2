/* topo.h — the modelled machine's topology: NUMA nodes, CPUs, the node distance matrix (SLIT),
 * and the I/O side (PCIe root ports, SMMU instances, devices with stream IDs), each on a node.
 * It is a description only: no timing, no memory (see plat and mem for those).
 *
 * Sources: built-in presets ("kunpeng920", "a100-2node", "host"), an hwloc XML file (as written
 * by `lstopo file.xml`) or an hwloc synthetic string ("synthetic:<hwloc synthetic description>").
 * docs/topology.md says where every preset fact comes from.
 *
 * Numbering: CPUs are the logical indexes of hwloc PUs, nodes the logical indexes of NUMA nodes
 * (both dense, from 0). Distances are SLIT-style (10 = local, at most 254). A source without a
 * latency matrix gets the default: 10 on the diagonal, 20 between two nodes of the same
 * package, 30 between nodes of different packages (ilab_topo_distances_defaulted() is true).
 * A source with a matrix whose diagonal is not its row's minimum, below 1 or above 254 is
 * rejected ("nonsense distances"). A file that declares no NUMA node is rejected too.
 */
#ifndef IOMMULAB_TOPO_H
#define IOMMULAB_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ILAB_TOPO_NAME_MAX 48
#define ILAB_TOPO_MAX_CPUS 4096
#define ILAB_TOPO_MAX_NODES 64 /* = ILAB_MEM_MAX_NODES */

/* Default SLIT values used when the source has no distance matrix. */
#define ILAB_TOPO_DIST_LOCAL 10
#define ILAB_TOPO_DIST_SAME_PACKAGE 20
#define ILAB_TOPO_DIST_OTHER_PACKAGE 30

enum ilab_dev_kind {
	ILAB_DEV_NIC = 0,
	ILAB_DEV_GPU,
	ILAB_DEV_NVME,
	ILAB_DEV_OTHER,
	ILAB_DEV_STORAGE, /* non-NVMe mass storage: SAS, SATA, RAID controllers */
};

/* "nic", "gpu", "nvme", "other", "storage". */
const char *ilab_dev_kind_name(enum ilab_dev_kind kind);

struct ilab_rootport {
	unsigned id;
	int node;
	unsigned smmu; /* index of the SMMU translating this root port's traffic */
	char name[ILAB_TOPO_NAME_MAX];
};

/* An IOMMU unit (the name predates other architectures than SMMUv3). */
struct ilab_smmu_desc {
	unsigned id;
	int node;
	char name[ILAB_TOPO_NAME_MAX];
	char arch[16];  /* its architecture (iommu_arch.h name): "smmuv3" for every source today */
};

struct ilab_device {
	unsigned id;
	enum ilab_dev_kind kind;
	int node;
	unsigned rootport;
	unsigned smmu;
	uint32_t sid; /* StreamID at its SMMU */
	char name[ILAB_TOPO_NAME_MAX];
};

struct ilab_topo;

/* Load a topology from a preset name, an hwloc XML path or "synthetic:<string>".
 * Returns 0 or a negative errno; on error, err (if not NULL) receives a one-line cause. */
int ilab_topo_load(const char *spec, struct ilab_topo **out, char *err, size_t errlen);
void ilab_topo_free(struct ilab_topo *t);

const char *ilab_topo_name(const struct ilab_topo *t);
unsigned ilab_topo_nr_nodes(const struct ilab_topo *t);
unsigned ilab_topo_nr_cpus(const struct ilab_topo *t);
/* Node of a CPU (CPUs are numbered 0..nr_cpus-1 by logical index), or -1. */
int ilab_topo_cpu_node(const struct ilab_topo *t, unsigned cpu);
/* CPUs of a node, in order; *n receives the count. */
const unsigned *ilab_topo_node_cpus(const struct ilab_topo *t, unsigned node, unsigned *n);
/* SLIT distance (10 = local). */
unsigned ilab_topo_distance(const struct ilab_topo *t, unsigned from, unsigned to);
/* True when the source had no distance matrix and the documented default was used. */
bool ilab_topo_distances_defaulted(const struct ilab_topo *t);
/* Packages (sockets); a source without packages counts as one. Package of a node, or -1. */
unsigned ilab_topo_nr_packages(const struct ilab_topo *t);
int ilab_topo_node_package(const struct ilab_topo *t, unsigned node);

unsigned ilab_topo_nr_rootports(const struct ilab_topo *t);
const struct ilab_rootport *ilab_topo_rootport(const struct ilab_topo *t, unsigned i);
unsigned ilab_topo_nr_smmus(const struct ilab_topo *t);
const struct ilab_smmu_desc *ilab_topo_smmu(const struct ilab_topo *t, unsigned i);
unsigned ilab_topo_nr_devices(const struct ilab_topo *t);
const struct ilab_device *ilab_topo_device(const struct ilab_topo *t, unsigned i);
/* The device with this name, or NULL. */
const struct ilab_device *ilab_topo_find_device(const struct ilab_topo *t, const char *name);
/* Why t has no device called name (NULL: no device at all), and how to get one, as one line
 * into buf (for "no such device" errors): a topology without PCI devices says to export it
 * with lstopo's I/O objects; otherwise it lists the devices t has. Returns buf. */
char *ilab_topo_explain_no_device(const struct ilab_topo *t, const char *name, char *buf,
				  size_t len);

/* Print a human description (nodes, CPUs, distances, root ports, SMMUs, devices). */
int ilab_topo_print(const struct ilab_topo *t, FILE *f);
/* Print the same as one JSON object (sorted keys). */
int ilab_topo_print_json(const struct ilab_topo *t, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_TOPO_H */
