/* allreduce.c — seed 004: NCCL ring allreduce over GPUs and ConnectX NICs with ATS, on a
 * 2-node A100 machine of either IOMMU architecture (icelake-2s-a100: VT-d, the seed's; a100-2node:
 * SMMUv3), with VFIO's one shared domain or attach_group_by_node (one domain per node, page
 * tables local).
 * It is not NCCL: only the NICs' DMA is modelled (dma_engine.c), because that is where the
 * IOMMU sits on the data path; GPU kernels, NVLink and the network are taken as faster.
 *
 * The model (docs/experiments.md "seed 004"):
 *  - K = nr_nodes * nics_per_node NICs, each paired with one GPU (GPUDirect RDMA). The
 *    allreduce runs between `hosts` identical hosts, so the ring has n = hosts * K ranks
 *    (assumed: 2 hosts; a single-host NCCL ring cannot exceed one NIC's line rate in algbw,
 *    and the seed reports 32 and 63 GB/s). NCCL gives each NIC its own channels ("rails"), so
 *    each NIC carries 1/K of the data: a ring allreduce sends and receives 2 (n - 1) / n * S
 *    bytes per rank, hence per NIC and direction bytes = 2 (n - 1) / n * S / K.
 *  - Each NIC has a transmit engine (DMA reads of its GPU's send buffer) and a receive engine
 *    (DMA writes into its GPU's receive buffer), each streaming cyclically over a registered
 *    buffer of buffer_bytes (NCCL's staging buffers), translating every 4 KiB page through the
 *    NIC's ATC and, on a miss, an ATS Translation Request to its root port's IOMMU unit.
 *  - The ring moves at the pace of its slowest link: time = the latest engine's finish, and
 *    algbw = S / time, as nccl-tests reports it.
 *  - The peer host is symmetric: its NICs do the same DMA on its side at the same time.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/allreduce.h"
#include "iommulab/atc.h"
#include "iommulab/board.h"
#include "iommulab/dma_engine.h"
#include "iommulab/intel_iommu_drv.h"
#include "iommulab/iommu.h"
#include "iommulab/iommu_arch.h"
#include "iommulab/sim.h"
#include "iommulab/kernel_era.h"
#include "iommulab/smmuv3_drv.h"
#include "iommulab/smmuv3_drv_ats.h"
#include "iommulab/testbed.h"
#include "iommulab/topo.h"
#include "iommulab/vfio.h"
#include "util/errf.h"
#include "iommulab/plat.h"

#define SZ_4K 4096ull
#define MAP_CHUNK (1ull << 20) /* VFIO_IOMMU_MAP_DMA size: 1 MiB (4 KiB PTEs, see run_case) */
#define IOVA_BASE (1ull << 32)
#define MAX_DEVS 64

/* What one case needs, gathered so that teardown is one function. */
struct ar {
	struct ilab_profile prof;
	struct ilab_testbed tb;   /* topology, simulator, plat, board (testbed.h) */
	struct ilab_vfio_container *ctr;
	struct ilab_dev *devs;
	unsigned ndev;
	struct ilab_vfio_group *grp[MAX_DEVS];
	bool probed[MAX_DEVS];
	struct ilab_atc *atc[MAX_DEVS];
};

static void ar_down(struct ar *a)
{
	if (a->ctr)
		ilab_vfio_container_destroy(a->ctr); /* detaches every group, unmaps, unpins */
	for (unsigned i = 0; i < a->ndev && i < MAX_DEVS; i++) {
		if (a->grp[i])
			ilab_vfio_group_close(a->grp[i]);
		if (a->probed[i])
			ilab_iommu_release_device(&a->devs[i]);
		ilab_atc_destroy(a->atc[i]);
	}
	ilab_testbed_down(&a->tb);
}

/* GPUDirect RDMA pairs each NIC with a GPU: a machine without both cannot run the workload,
 * whatever its nic: section says, and that is the first thing to tell (kunpeng920, grace). */
static int check_gpus_and_nics(const struct ilab_profile *p, char *msg, size_t msglen)
{
	struct ilab_topo *t;
	unsigned gpus = 0, nics = 0;
	int ret = ilab_topo_load(p->topology, &t, msg, msglen);

	if (ret)
		return ret;
	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		gpus += ilab_topo_device(t, i)->kind == ILAB_DEV_GPU;
		nics += ilab_topo_device(t, i)->kind == ILAB_DEV_NIC;
	}
	ilab_topo_free(t);
	if (gpus && nics)
		return 0;
	return ilab_errf(msg, msglen, -EINVAL, "topology %s has %u GPUs and %u NICs: the allreduce "
			 "workload pairs each NIC with a GPU (GPUDirect RDMA), so it needs both "
			 "(a100-2node and icelake-2s-a100 have them)", p->topology, gpus, nics);
}

int ilab_allreduce_check_profile(const struct ilab_profile *p, char *msg, size_t msglen)
{
	int ret = check_gpus_and_nics(p, msg, msglen);

	if (ret)
		return ret;
	if (p->nic.payload_mbps && p->nic.ats_outstanding && p->nic.atc_entries)
		return 0; /* the loader saw to the rest of the set and the ranges */
	return ilab_errf(msg, msglen, -EINVAL, "profile %s has no ATS model of its NICs: its nic: "
			 "section needs payload_mbps, ats_round_trip_ns, ats_outstanding, "
			 "atc_entries and atc_ways", p->name);
}

static int ar_up(struct ar *a, const struct ilab_allreduce_cfg *c, char *err, size_t errlen)
{
	char msg[512];
	struct ilab_testbed_opts to = {
		.profile = &a->prof,
		.seed = c->seed ? c->seed : 1,
		.cma = c->cma_pernuma ? ILAB_CMA_PERNUMA : ILAB_CMA_GLOBAL,
		.cma_global_node = 0,
	};
	int ret;

	if ((ret = ilab_profile_open(c->profile ? c->profile : "a100-2node", &a->prof, msg,
				     sizeof(msg))))
		return ilab_errf(err, errlen, ret, "profile: %s", msg);
	if (c->intel_nid_policy && strcmp(a->prof.iommu_arch, "vtd"))
		return ilab_errf(err, errlen, -EINVAL, "intel_iommu_nid is the Intel VT-d driver's; "
				 "profile %s has iommu: %s", a->prof.name, a->prof.iommu_arch);
	if (c->intel_nid_policy < ILAB_INTEL_NID_MAINLINE || c->intel_nid_policy > ILAB_INTEL_NID_HINT)
		return ilab_errf(err, errlen, -EINVAL, "bad intel_nid_policy %d", c->intel_nid_policy);
	to.vtd_drv.nid_policy = (enum ilab_intel_nid_policy)c->intel_nid_policy;
	if (c->kernel) {
		ilab_kernel_era_drv_opts(c->kernel, &to.drv);
		ilab_kernel_era_vtd_opts(c->kernel, &to.vtd_drv);
	}
	if ((ret = ilab_testbed_up(&a->tb, &to, err, errlen)))
		return ret;
	ilab_board_devices(a->tb.board, &a->devs, &a->ndev);
	if (a->ndev > MAX_DEVS)
		return ilab_errf(err, errlen, -E2BIG, "more than %d devices", MAX_DEVS);
	return 0;
}

/* Declare the device's ATS capability and enable it, through the driver of its unit's
 * architecture, before its first attach (VT-d puts TT = 01 in the context entry then). */
static int enable_ats(struct ar *a, struct ilab_dev *d, char *err, size_t errlen)
{
	int ui = ilab_board_dev_iommu(a->tb.board, d);
	const struct ilab_iommu_arch *arch = ui < 0 ? NULL :
		ilab_board_iommu_arch(a->tb.board, (unsigned)ui);
	int ret;

	if (!arch)
		return ilab_errf(err, errlen, -ENODEV, "%s: no IOMMU unit", d->name);
	if (!strcmp(arch->name, "smmuv3")) {
		if ((ret = ilab_smmu_drv_set_ats(d, true)))
			return ilab_errf(err, errlen, ret, "%s: %s", d->name,
					 ilab_smmu_drv_strerror());
		return 0;
	}
	if (!strcmp(arch->name, "vtd")) {
		if ((ret = ilab_intel_iommu_set_ats(d, true, 0)))
			return ilab_errf(err, errlen, ret, "%s: %s", d->name,
					 ilab_intel_iommu_strerror());
		return 0;
	}
	return ilab_errf(err, errlen, -EOPNOTSUPP, "%s: ATS on a %s unit is not modelled",
			 d->name, arch->name);
}

/* Every GPU and NIC of the machine goes to the VM (the seed passes all 16 through), each
 * ATS-capable NIC with ATS on; the container's policy is the case's. */
static int attach_all(struct ar *a, const struct ilab_allreduce_cfg *c, char *err, size_t errlen)
{
	struct ilab_vfio_container_opts vo = { 0 };
	int ret;

	vo.attach_group_by_node = c->attach_group_by_node;
	vo.force_pgtable_node = !vo.attach_group_by_node;
	vo.pgtable_node = c->pgtable_node;
	if ((ret = ilab_vfio_container_create(ilab_board_mem(a->tb.board), &vo, &a->ctr)))
		return ilab_errf(err, errlen, ret, "VFIO container: %s", ilab_vfio_strerror());
	for (unsigned i = 0; i < a->ndev; i++) {
		const struct ilab_device *td = ilab_topo_find_device(a->tb.topo, a->devs[i].name);
		struct ilab_dev *d = &a->devs[i];

		if (!td || !d->iommu || (td->kind != ILAB_DEV_GPU && td->kind != ILAB_DEV_NIC))
			continue;
		d->pci = true;
		if ((ret = ilab_iommu_probe_device(d, ILAB_DOMAIN_DMA)))
			return ilab_errf(err, errlen, ret, "%s: %s", d->name, ilab_iommu_strerror());
		a->probed[i] = true;
		/* ConnectX-6: ATS capability, enabled (the seed: "CX6 ATS feature is enabled"). */
		if (td->kind == ILAB_DEV_NIC && (ret = enable_ats(a, d, err, errlen)))
			return ret;
		if ((ret = ilab_vfio_group_open(d, &a->grp[i])) ||
		    (ret = ilab_vfio_attach_group(a->ctr, a->grp[i])))
			return ilab_errf(err, errlen, ret, "%s: VFIO: %s", d->name, ilab_vfio_strerror());
	}
	return 0;
}

/* ---- the page tables' steady state ------------------------------------------------------
 * The seed's tables were written when the VM booted, long before the allreduce: their lines
 * are in no CPU's cache, and an IOMMU walk fetches them from their home node. The simulator
 * keeps a line where its last writer left it (the CPU that ran the VFIO map), with no capacity
 * eviction, so an agent "writes back" every table page once before the run: each line is then
 * held only at its home node, and a walk pays the distance from the SMMU to that home. */

struct age_root {
	ilab_pa_t pa;
	unsigned levels;  /* of the table: 4 (VMSAv8-64 48-bit), 4 or 5 (VT-d second stage) */
	bool vtd;         /* the entries' format: VT-d second stage, else VMSAv8-64 */
};

struct age_arg {
	struct ilab_mem *mem;
	struct age_root roots[MAX_DEVS];
	unsigned nr_roots;
	uint64_t pages;
};

/* The next table an entry points to, or 0 (a leaf, or not present). 4 KiB granule, 512
 * entries per table. VMSAv8-64: a table descriptor has bits[1:0] == 0b11, its bits [47:12]
 * give the next table. VT-d second stage (spec §9.8): present when R or W (bits 1:0) is set,
 * a leaf above the last level when PS (bit 7) is, address bits [51:12]. */
static ilab_pa_t next_table(const struct age_root *r, uint64_t e)
{
	if (r->vtd)
		return (e & 3) && !(e & (1ull << 7)) ? e & 0x000FFFFFFFFFF000ull : 0;
	return (e & 3) == 3 ? e & 0x0000FFFFFFFFF000ull : 0;
}

static void age_table(struct age_arg *g, const struct age_root *r, ilab_pa_t table,
		      unsigned level)
{
	uint64_t *t = ilab_mem_va(g->mem, table, SZ_4K);

	if (!t)
		return;
	plat_mem_touch(t, SZ_4K, true);
	g->pages++;
	if (level + 1 == r->levels)
		return;
	for (unsigned i = 0; i < 512; i++) {
		ilab_pa_t next = next_table(r, t[i]);

		if (next)
			age_table(g, r, next, level + 1);
	}
}

static void age_agent(struct plat_agent *agent, void *arg)
{
	struct age_arg *g = arg;

	(void)agent;
	for (unsigned i = 0; i < g->nr_roots; i++)
		age_table(g, &g->roots[i], g->roots[i].pa, 0);
}

/* The root of a VFIO domain's page table, by its driver: false if neither knows it. */
static bool domain_root(const struct ilab_iommu_domain *d, struct age_root *r)
{
	struct ilab_intel_domain_caps caps;

	if ((r->pa = ilab_smmu_drv_domain_ttbr(d))) {
		r->levels = 4;
		r->vtd = false;
		return true;
	}
	if (!ilab_intel_domain_get_caps(d, &caps) && caps.pgd) {
		r->pa = caps.pgd;
		r->levels = caps.agaw + 2;
		r->vtd = true;
		return true;
	}
	return false;
}

static int age_page_tables(struct ar *a, char *err, size_t errlen)
{
	struct age_arg g = { .mem = ilab_board_mem(a->tb.board) };
	struct ilab_vfio_stats st;
	struct plat_agent *agent;
	int ret;

	if ((ret = ilab_vfio_get_stats(a->ctr, &st)))
		return ilab_errf(err, errlen, ret, "VFIO stats: %s", ilab_vfio_strerror());
	for (unsigned i = 0; i < st.nr_domains && g.nr_roots < MAX_DEVS; i++) {
		struct ilab_vfio_domain_info di;

		if (!ilab_vfio_domain_info(a->ctr, i, &di) && domain_root(di.domain, &g.roots[g.nr_roots]))
			g.nr_roots++;
	}
	if ((ret = plat_agent_start("pgtable-writeback", 0, age_agent, &g, &agent)))
		return ilab_errf(err, errlen, ret, "cannot start the write-back agent");
	plat_agent_stop(agent, NULL);
	return 0;
}

/* Back [iova, iova + bytes) with pages of `node` and map it for DMA in 1 MiB calls: no call
 * covers an aligned 2 MiB, so the tables hold 4 KiB pages (GPU BAR memory of the VM, mapped
 * 4 KiB-granular: an assumption, stated in the docs). */
static int map_buffer(struct ar *a, uint64_t iova, uint64_t bytes, int node, char *err,
		      size_t errlen)
{
	struct ilab_vfio_mm *mm = ilab_vfio_container_mm(a->ctr);
	int ret = ilab_vfio_mm_alloc(mm, iova, bytes, node);

	if (ret)
		return ilab_errf(err, errlen, ret, "buffer memory on node %d: %s", node,
			    ilab_vfio_strerror());
	for (uint64_t off = 0; off < bytes; off += MAP_CHUNK) {
		uint64_t len = bytes - off < MAP_CHUNK ? bytes - off : MAP_CHUNK;

		ret = ilab_vfio_dma_map(a->ctr, iova + off, iova + off, len,
					ILAB_VFIO_DMA_READ | ILAB_VFIO_DMA_WRITE);
		if (ret)
			return ilab_errf(err, errlen, ret, "VFIO map: %s", ilab_vfio_strerror());
	}
	return 0;
}

int ilab_allreduce_measure(const struct ilab_allreduce_cfg *ac, struct ilab_allreduce_result *out,
			   char *err, size_t errlen)
{
	const unsigned first = ac->first_node, nr_nodes = ac->nr_nodes;
	const unsigned nics_per_node = ac->nics_per_node, gpus_per_node = ac->gpus_per_node;
	const int pgtable_node = ac->pgtable_node;
	const double msg = ac->message_bytes;
	const unsigned iters = ac->iterations ? ac->iterations : 1;
	const unsigned hosts = ac->hosts;
	const uint64_t buf = ac->buffer_bytes & ~(SZ_4K - 1);
	struct ilab_dma_engine_cfg *cfg = NULL;
	struct ilab_dma_engine_result *res = NULL;
	struct ar a;
	unsigned k = 0, ranks, nic_idx[MAX_DEVS], gpu_idx[MAX_DEVS], ngpu = 0;
	uint64_t per_engine, link_mbps, rt, outstanding, atc_entries, atc_ways, ats_fail = 0;
	double worst_ns; /* one allreduce */
	int ret;

	memset(&a, 0, sizeof(a));
	if ((ret = ar_up(&a, ac, err, errlen)))
		goto out;
	if (first + nr_nodes > ilab_topo_nr_nodes(a.tb.topo) ||
	    pgtable_node >= (int)ilab_topo_nr_nodes(a.tb.topo) || !buf || !hosts) {
		ret = ilab_errf(err, errlen, -EINVAL, "nodes %u..%u or pgtable_node %d not in %s", first,
			   first + nr_nodes - 1, pgtable_node, ilab_topo_name(a.tb.topo));
		goto out;
	}
	/* The NICs and GPUs taking part: the first nics/gpus_per_node of each node, in order. */
	for (unsigned n = first; n < first + nr_nodes; n++) {
		unsigned nn = 0, ng = 0;

		for (unsigned i = 0; i < a.ndev; i++) {
			const struct ilab_device *td = ilab_topo_find_device(a.tb.topo, a.devs[i].name);

			if (!td || td->node != (int)n)
				continue;
			if (td->kind == ILAB_DEV_NIC && nn < nics_per_node)
				nic_idx[k++] = i, nn++;
			else if (td->kind == ILAB_DEV_GPU && ng < gpus_per_node)
				gpu_idx[ngpu++] = i, ng++;
		}
		if (nn < nics_per_node || ng < gpus_per_node || nn != ng) {
			ret = ilab_errf(err, errlen, -EINVAL, "node %u has %u NICs and %u GPUs; asked for "
				   "%u and %u, one GPU per NIC", n, nn, ng, nics_per_node,
				   gpus_per_node);
			goto out;
		}
	}
	if ((ret = attach_all(&a, ac, err, errlen)))
		goto out;

	/* the NICs' constants: the profile's nic: section, whose loader checked them against the
	 * device model's limits (dma_engine.c, atc.c) */
	if ((ret = ilab_allreduce_check_profile(&a.prof, err, errlen)))
		goto out;
	link_mbps = a.prof.nic.payload_mbps;
	rt = a.prof.nic.ats_round_trip_ns;
	outstanding = a.prof.nic.ats_outstanding;
	atc_entries = a.prof.nic.atc_entries;
	atc_ways = a.prof.nic.atc_ways;
	ranks = hosts * k;
	if (ranks < 2) {
		ret = ilab_errf(err, errlen, -EINVAL, "a ring needs at least 2 ranks (hosts x NICs = %u)",
			   ranks);
		goto out;
	}
	/* 2 (n - 1) / n of the message per rank and direction, spread over the K NICs. */
	per_engine = (uint64_t)(2.0 * (ranks - 1) / ranks * msg / k + 0.5);
	cfg = plat_zalloc_array(2 * k, sizeof(*cfg));
	res = plat_zalloc_array(2 * k, sizeof(*res));
	if (!cfg || !res) {
		ret = ilab_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < k; i++) {
		struct ilab_dev *nic = &a.devs[nic_idx[i]];
		const struct ilab_device *gpu = ilab_topo_find_device(a.tb.topo,
								      a.devs[gpu_idx[i]].name);
		int si = ilab_board_dev_iommu(a.tb.board, nic);
		uint64_t tx = IOVA_BASE + (uint64_t)(2 * i) * (buf + MAP_CHUNK);
		uint64_t rx = tx + buf + MAP_CHUNK;

		ret = ilab_atc_create(&(struct ilab_atc_config){ .entries = (uint32_t)atc_entries,
								 .ways = (uint32_t)atc_ways },
				      &a.atc[nic_idx[i]]);
		if (ret || si < 0) {
			ret = ilab_errf(err, errlen, ret ? ret : -ENODEV, "%s: no ATC or IOMMU unit",
					nic->name);
			goto out;
		}
		/* Send and receive buffers live in the paired GPU's memory (its node). */
		if ((ret = map_buffer(&a, tx, buf, gpu->node, err, errlen)) ||
		    (ret = map_buffer(&a, rx, buf, gpu->node, err, errlen)))
			goto out;
		for (unsigned d = 0; d < 2; d++) {
			struct ilab_dma_engine_cfg *e = &cfg[2 * i + d];

			e->name = nic->name;
			e->unit = ilab_board_iommu_unit(a.tb.board, (unsigned)si);
			e->node = ilab_board_iommu_node(a.tb.board, (unsigned)si);
			e->sid = nic->sid;
			e->atc = a.atc[nic_idx[i]];
			e->iova = d ? rx : tx;
			e->region_bytes = buf;
			e->bytes = per_engine;
			e->write = d == 1;
			e->page_shift = 12;
			e->link_bytes_per_ns = (double)link_mbps / 1000.0;
			e->max_outstanding = (unsigned)outstanding;
			e->ats_round_trip_ns = rt;
		}
	}
	if ((ret = age_page_tables(&a, err, errlen)))
		goto out;
	/* The iterations back to back, as nccl-tests runs them: one run of the engines with
	 * iters times the bytes (the simulator's agents are not reused, so one set of slots
	 * serves them all); algbw is the mean over them, as nccl-tests reports. The ring's
	 * pace is its slowest link: the time is the latest engine's finish. */
	{
		uint64_t t0 = UINT64_MAX, t1 = 0;

		for (unsigned i = 0; i < 2 * k; i++)
			cfg[i].bytes = per_engine * iters;
		ret = ilab_dma_engines_run(cfg, 2 * k, res, err, errlen);
		if (!ret && *ilab_testbed_sim_error(&a.tb))
			ret = ilab_errf(err, errlen, -EDEADLK, "simulator: %s",
					ilab_testbed_sim_error(&a.tb));
		if (ret)
			goto out;
		for (unsigned i = 0; i < 2 * k; i++) {
			t0 = res[i].start_ns < t0 ? res[i].start_ns : t0;
			t1 = res[i].end_ns > t1 ? res[i].end_ns : t1;
			ats_fail += res[i].ats_refused;
		}
		worst_ns = t1 > t0 ? (double)(t1 - t0) / iters : 0;
	}
	if (!(worst_ns > 0)) {
		ret = ilab_errf(err, errlen, -EINVAL, "nothing was transferred");
		goto out;
	}
	memset(out, 0, sizeof(*out));
	out->algbw = msg / worst_ns; /* bytes per ns = GB/s */
	out->time_ns = worst_ns;
	out->engines = 2 * k;
	out->ats_refused = ats_fail;
	for (unsigned i = 0; i < 2 * k; i++) {
		out->pages += res[i].pages;
		out->atc_hits += res[i].atc_hits;
		out->ats_requests += res[i].ats_requests;
		out->ats_mean_ns += res[i].ats_ns;
	}
	if (out->ats_requests)
		out->ats_mean_ns /= out->ats_requests;
out:
	free(cfg);
	free(res);
	ar_down(&a);
	return ret;
}
