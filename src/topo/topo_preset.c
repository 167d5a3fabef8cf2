/* topo_preset.c — the built-in machines ("kunpeng920", "a100-2node", "icelake-2s-a100",
 * "grace") as
 * plain tables.
 * Not a parser: hwloc sources live in topo_hwloc.c. Where each fact comes from is in
 * docs/topology.md; tests/topo checks the kunpeng920 table against the hwloc XML it summarises.
 */
#include "topo/topo_internal.h"

#include <errno.h>
#include <string.h>

struct preset_rootport {
	const char *name;
	int node;
	unsigned smmu;
};

struct preset_device {
	const char *name;
	enum ilab_dev_kind kind;
	unsigned rootport;
	uint32_t sid; /* PCI requester ID (bus << 8 | dev << 3 | fn), as IORT maps RID to StreamID */
};

struct preset {
	const char *name;
	unsigned nr_nodes;
	unsigned cpus_per_node;      /* node n owns CPUs [n * cpus_per_node, (n + 1) * cpus_per_node) */
	const int *node_package;
	const unsigned *slit;        /* nr_nodes x nr_nodes */
	const int *smmu_node;        /* one entry per SMMU */
	unsigned nr_smmus;
	const struct preset_rootport *rootports;
	unsigned nr_rootports;
	const struct preset_device *devices;
	unsigned nr_devices;
	const char *iommu_arch;      /* every unit's architecture; NULL = "smmuv3" */
	const char *unit_prefix;     /* units are named <prefix>0, <prefix>1...; NULL = "smmu" */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define RID(bus, dev, fn) (((uint32_t)(bus) << 8) | ((dev) << 3) | (fn))

/* Kunpeng 920, 2 packages x 2 dies: tests/data/topologies/kunpeng920-2p4n128c.xml (hwloc test
 * suite) has 4 NUMA nodes of 32 PUs each, nodes 0-1 in one package and 2-3 in the other, and
 * this NUMALatency matrix. One SMMU and one root port per node: seed 000 places the NIC's SMMU
 * on node 2; the per-node I/O layout is our model of the four dies' I/O. */
static const int kp920_package[] = { 0, 0, 1, 1 };
static const unsigned kp920_slit[] = {
	10, 16, 32, 33,
	16, 10, 25, 32,
	32, 25, 10, 16,
	33, 32, 16, 10,
};
static const int kp920_smmu_node[] = { 0, 1, 2, 3 };
static const struct preset_rootport kp920_rootports[] = {
	{ "n0-rp0", 0, 0 }, { "n1-rp0", 1, 1 }, { "n2-rp0", 2, 2 }, { "n3-rp0", 3, 3 },
};
static const struct preset_device kp920_devices[] = {
	/* Seed 000/001: a Hi1822-class PCIe NIC behind the node-2 SMMU (second package's buses). */
	{ "nic0", ILAB_DEV_NIC, 2, RID(0x82, 0, 0) },
	/* Seed 001's storage test: a SAS controller (24 SAS SSDs) on node 0. */
	{ "sas0", ILAB_DEV_STORAGE, 0, RID(0x74, 2, 0) },
	/* The fio workload's drive: a U.2 NVMe SSD in a front bay, cabled to a PCIe root port of
	 * the first socket's I/O die (node 0). Placement and bus are our model, not a published
	 * lspci (docs/topology.md says why node 0); listed last so that the seeds' device
	 * choices (first match) are unchanged. */
	{ "nvme0", ILAB_DEV_NVME, 0, RID(0x04, 0, 0) },
};

/* Seed 004's host: 2 nodes, each with 2 PCIe root ports, each with 2 A100 GPUs and 2 CX6 NICs.
 * One IOMMU per root port. CPU count (32 per node) and the 10/20 SLIT are assumptions: the seed
 * gives neither; 20 is what two-socket x86 firmware commonly reports. */
static const int a100_package[] = { 0, 1 };
static const unsigned a100_slit[] = {
	10, 20,
	20, 10,
};
static const int a100_smmu_node[] = { 0, 0, 1, 1 };
static const struct preset_rootport a100_rootports[] = {
	{ "n0-rp0", 0, 0 }, { "n0-rp1", 0, 1 }, { "n1-rp0", 1, 2 }, { "n1-rp1", 1, 3 },
};
static const struct preset_device a100_devices[] = {
	{ "gpu0", ILAB_DEV_GPU, 0, RID(1, 0, 0) }, { "gpu1", ILAB_DEV_GPU, 0, RID(2, 0, 0) },
	{ "nic0", ILAB_DEV_NIC, 0, RID(3, 0, 0) }, { "nic1", ILAB_DEV_NIC, 0, RID(4, 0, 0) },
	{ "gpu2", ILAB_DEV_GPU, 1, RID(1, 0, 0) }, { "gpu3", ILAB_DEV_GPU, 1, RID(2, 0, 0) },
	{ "nic2", ILAB_DEV_NIC, 1, RID(3, 0, 0) }, { "nic3", ILAB_DEV_NIC, 1, RID(4, 0, 0) },
	{ "gpu4", ILAB_DEV_GPU, 2, RID(1, 0, 0) }, { "gpu5", ILAB_DEV_GPU, 2, RID(2, 0, 0) },
	{ "nic4", ILAB_DEV_NIC, 2, RID(3, 0, 0) }, { "nic5", ILAB_DEV_NIC, 2, RID(4, 0, 0) },
	{ "gpu6", ILAB_DEV_GPU, 3, RID(1, 0, 0) }, { "gpu7", ILAB_DEV_GPU, 3, RID(2, 0, 0) },
	{ "nic6", ILAB_DEV_NIC, 3, RID(3, 0, 0) }, { "nic7", ILAB_DEV_NIC, 3, RID(4, 0, 0) },
	/* The fio workload's drive: a U.2 NVMe SSD behind the first root port's switch, as the
	 * HGX/DGX A100 servers carry their data drives (docs/topology.md); listed last so that the
	 * seeds' device choices (first match) are unchanged. */
	{ "nvme0", ILAB_DEV_NVME, 0, RID(5, 0, 0) },
};

/* Seed 004's host as the research has it (docs/journal.md, "public measurements for issue 20",
 * §1, docs/topology.md): a 2-socket Ice Lake-SP (Xeon Scalable 3rd gen, PCIe Gen4) HGX-A100
 * server, one NUMA node per socket. Four x16 root ports (the uplinks of the baseboard's four
 * PCIe switches), two per socket; from Skylake-SP on, each x16 IIO stack is a PCI host bridge
 * with its own DMAR unit (DRHD), whose node is the socket's (the ACPI RHSA entry), so each
 * root port sits behind its own VT-d unit. 32 cores per socket (assumption: the seed names no
 * CPU; 32 is the smallest and most common count of the Xeon Platinum 83xx parts, and the
 * 8375C's, whose core-to-core latency the profile uses); SMT siblings are not modelled. SLIT
 * 10/20 (assumption, as a100-2node: the seed gives none; the profile lists its costs at 20). The
 * real machine has more DMAR units (each socket's DMI/CBDMA catch-all unit, unused stacks):
 * none of them translates a device of the seed, so they are left out. Buses are illustrative:
 * each stack's switch at its first bus, the GPUs and NICs on the next four (unique on the one
 * PCI segment; the source-id is bus << 8 | devfn). */
static const int icx_package[] = { 0, 1 };
static const unsigned icx_slit[] = {
	10, 20,
	20, 10,
};
static const int icx_dmar_node[] = { 0, 0, 1, 1 };
static const struct preset_rootport icx_rootports[] = {
	{ "n0-rp0", 0, 0 }, { "n0-rp1", 0, 1 }, { "n1-rp0", 1, 2 }, { "n1-rp1", 1, 3 },
};
static const struct preset_device icx_devices[] = {
	{ "gpu0", ILAB_DEV_GPU, 0, RID(0x19, 0, 0) }, { "gpu1", ILAB_DEV_GPU, 0, RID(0x1a, 0, 0) },
	{ "nic0", ILAB_DEV_NIC, 0, RID(0x1b, 0, 0) }, { "nic1", ILAB_DEV_NIC, 0, RID(0x1c, 0, 0) },
	{ "gpu2", ILAB_DEV_GPU, 1, RID(0x52, 0, 0) }, { "gpu3", ILAB_DEV_GPU, 1, RID(0x53, 0, 0) },
	{ "nic2", ILAB_DEV_NIC, 1, RID(0x54, 0, 0) }, { "nic3", ILAB_DEV_NIC, 1, RID(0x55, 0, 0) },
	{ "gpu4", ILAB_DEV_GPU, 2, RID(0x99, 0, 0) }, { "gpu5", ILAB_DEV_GPU, 2, RID(0x9a, 0, 0) },
	{ "nic4", ILAB_DEV_NIC, 2, RID(0x9b, 0, 0) }, { "nic5", ILAB_DEV_NIC, 2, RID(0x9c, 0, 0) },
	{ "gpu6", ILAB_DEV_GPU, 3, RID(0xd2, 0, 0) }, { "gpu7", ILAB_DEV_GPU, 3, RID(0xd3, 0, 0) },
	{ "nic6", ILAB_DEV_NIC, 3, RID(0xd4, 0, 0) }, { "nic7", ILAB_DEV_NIC, 3, RID(0xd5, 0, 0) },
	/* The fio workload's drive: a U.2 NVMe SSD behind the first stack's switch (n0-rp0,
	 * dmar0), as the HGX/DGX A100 servers carry their data drives (docs/topology.md); listed
	 * last so that the seeds' device choices (first match) are unchanged. Bus illustrative. */
	{ "nvme0", ILAB_DEV_NVME, 0, RID(0x1d, 0, 0) },
};

/* NVIDIA Grace CPU Superchip: two Grace CPUs of 72 Neoverse V2 cores, one NUMA node each
 * (NVIDIA Grace Performance Tuning Guide; "one Grace CPU = one NUMA node"). SLIT 10/40: what
 * numactl reports on a Grace Superchip (assumption from published `numactl -H` listings; the
 * profile gives its costs by latency, not from the SLIT). Each Grace CPU has several SMMUv3s
 * (one per PCIe root complex, each with a Tegra241 CMDQV); modelled: one per socket, with one
 * root port and one PCIe NIC behind it (a simplification; the bus numbers are illustrative). */
static const int grace_package[] = { 0, 1 };
static const unsigned grace_slit[] = {
	10, 40,
	40, 10,
};
static const int grace_smmu_node[] = { 0, 1 };
static const struct preset_rootport grace_rootports[] = {
	{ "n0-rp0", 0, 0 }, { "n1-rp0", 1, 1 },
};
static const struct preset_device grace_devices[] = {
	{ "nic0", ILAB_DEV_NIC, 0, RID(0x01, 0, 0) },
	{ "nic1", ILAB_DEV_NIC, 1, RID(0x81, 0, 0) },
	/* The fio workload's drive: an NVMe SSD on a root port of the first Grace, behind its SMMU
	 * (modelled on n0-rp0, the one root port of the node; docs/topology.md); listed last so
	 * that the seeds' and scenarios' device choices (first match) are unchanged. */
	{ "nvme0", ILAB_DEV_NVME, 0, RID(0x02, 0, 0) },
};

static const struct preset presets[] = {
	{ "kunpeng920", 4, 32, kp920_package, kp920_slit, kp920_smmu_node,
	  ARRAY_SIZE(kp920_smmu_node), kp920_rootports, ARRAY_SIZE(kp920_rootports),
	  kp920_devices, ARRAY_SIZE(kp920_devices), NULL, NULL },
	{ "a100-2node", 2, 32, a100_package, a100_slit, a100_smmu_node,
	  ARRAY_SIZE(a100_smmu_node), a100_rootports, ARRAY_SIZE(a100_rootports),
	  a100_devices, ARRAY_SIZE(a100_devices), NULL, NULL },
	{ "icelake-2s-a100", 2, 32, icx_package, icx_slit, icx_dmar_node,
	  ARRAY_SIZE(icx_dmar_node), icx_rootports, ARRAY_SIZE(icx_rootports),
	  icx_devices, ARRAY_SIZE(icx_devices), "vtd", "dmar" },
	{ "grace", 2, 72, grace_package, grace_slit, grace_smmu_node,
	  ARRAY_SIZE(grace_smmu_node), grace_rootports, ARRAY_SIZE(grace_rootports),
	  grace_devices, ARRAY_SIZE(grace_devices), NULL, NULL },
};

static const struct preset *find_preset(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}

bool topo_is_preset(const char *name)
{
	return find_preset(name) != NULL;
}

static int build(const struct preset *p, struct ilab_topo *t, char *err, size_t errlen)
{
	int cpu_node[ILAB_TOPO_MAX_CPUS];
	unsigned nr_cpus = p->nr_nodes * p->cpus_per_node;
	int ret;

	for (unsigned c = 0; c < nr_cpus; c++)
		cpu_node[c] = (int)(c / p->cpus_per_node);
	ret = topo_set_cpus(t, p->nr_nodes, nr_cpus, cpu_node, err, errlen);
	if (ret)
		return ret;
	t->nr_packages = 0;
	for (unsigned n = 0; n < p->nr_nodes; n++) {
		t->node_package[n] = p->node_package[n];
		if ((unsigned)p->node_package[n] + 1 > t->nr_packages)
			t->nr_packages = (unsigned)p->node_package[n] + 1;
	}
	ret = topo_set_distances(t, p->slit, err, errlen);
	if (ret)
		return ret;
	for (unsigned i = 0; i < p->nr_smmus; i++) {
		char name[ILAB_TOPO_NAME_MAX];
		int id;

		snprintf(name, sizeof(name), "%s%u", p->unit_prefix ? p->unit_prefix : "smmu", i);
		id = topo_add_smmu(t, p->smmu_node[i], name);
		if (id < 0)
			return topo_fail(err, errlen, ENOMEM, "%s: out of memory", p->name);
		if (p->iommu_arch)
			snprintf(t->smmus[id].arch, sizeof(t->smmus[id].arch), "%s", p->iommu_arch);
	}
	for (unsigned i = 0; i < p->nr_rootports; i++)
		if (topo_add_rootport(t, p->rootports[i].node, p->rootports[i].smmu,
				      p->rootports[i].name) < 0)
			return topo_fail(err, errlen, ENOMEM, "%s: out of memory", p->name);
	for (unsigned i = 0; i < p->nr_devices; i++)
		if (topo_add_device(t, p->devices[i].kind, p->devices[i].rootport, p->devices[i].sid,
				    p->devices[i].name) < 0)
			return topo_fail(err, errlen, ENOMEM, "%s: out of memory", p->name);
	return topo_check(t, err, errlen);
}

int topo_load_preset(const char *name, struct ilab_topo **out, char *err, size_t errlen)
{
	const struct preset *p = find_preset(name);
	struct ilab_topo *t;
	int ret;

	if (!p)
		return topo_fail(err, errlen, ENOENT, "%s: no such preset", name);
	t = topo_alloc(name);
	if (!t)
		return topo_fail(err, errlen, ENOMEM, "%s: out of memory", name);
	ret = build(p, t, err, errlen);
	if (ret) {
		ilab_topo_free(t);
		return ret;
	}
	*out = t;
	return 0;
}
