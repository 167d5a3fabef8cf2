/* board_vtd.c — the Intel VT-d architecture of the board (iommu_arch.h): one VT-d model per
 * unit (a DMAR unit, src/hw/vtd/) wired to the board's memory (host ops), its register window,
 * its invalidation-queue consumer, the translation of device DMA by source-id (vtd_translate)
 * and its statistics. Not the model, and not a driver: the VT-d driver (src/drivers/intel-iommu*)
 * does not exist yet, so probe fails with -ENODEV and says so.
 *
 * Timing: the model's memory accesses (root/context/paging entries, queue descriptors, wait
 * status writes) are charged from the unit's node by the simulator's line model, as the SMMUv3
 * adapter's are. The profile has no VT-d section yet: descriptor execution, the wait
 * descriptor and the IOTLB lookup cost nothing beyond those accesses (issue 20, "Timing").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <iommulab/sim.h>
#include <iommulab/vtd.h>

#include "iommulab/iommu_arch.h"
#include "iommulab/plat.h"

#define VTD_PROCESS_BATCH 256 /* descriptors per vtd_process_queue call */

struct board_vtd {
	struct ilab_iommu_unit *unit;
	struct vtd *vtd;
	unsigned batch;
};

/* ---- the model's view of the machine (host ops) --------------------------------------------- */

static int host_mem_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct board_vtd *bv = ctx;

	if (plat_sim) {
		const void *va = ilab_mem_va(bv->unit->mem, pa, len);

		if (va) {
			memcpy(buf, va, len);
			ilab_sim_mem_access(va, len, false);
			return 0;
		}
	}
	return ilab_mem_read(bv->unit->mem, pa, buf, len) ? -1 : 0;
}

static int host_mem_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct board_vtd *bv = ctx;
	struct ilab_mem *mem = bv->unit->mem;

	/* Aligned 32/64-bit writes (a wait descriptor's status) are single-copy atomic: a CPU
	 * may be polling that very word. In simulation it changes when the write arrives. */
	if ((len == 4 || len == 8) && !(pa % len)) {
		void *va = ilab_mem_va(mem, pa, len);
		uint64_t v = 0;

		if (!va)
			return -1;
		memcpy(&v, buf, len);
		ilab_sim_mem_access(va, len, true);
		ilab_sim_sync();
		if (len == 4)
			__atomic_store_n((uint32_t *)va, (uint32_t)v, __ATOMIC_RELEASE);
		else
			__atomic_store_n((uint64_t *)va, v, __ATOMIC_RELEASE);
		return 0;
	}
	if (plat_sim) {
		void *va = ilab_mem_va(mem, pa, len);

		if (va) {
			memcpy(va, buf, len);
			ilab_sim_mem_access(va, len, true);
			return 0;
		}
	}
	return ilab_mem_write(mem, pa, buf, len) ? -1 : 0;
}

/* A wait descriptor's status write landed (through mem_write): wake its simulated pollers. */
static void host_wait_status(void *ctx, uint64_t addr, uint32_t data)
{
	struct board_vtd *bv = ctx;
	void *va = ilab_mem_va(bv->unit->mem, addr, 4);

	(void)data;
	if (va)
		plat_wrote(va);
}

/* A device-TLB invalidate descriptor: the same ATS Invalidation Request as an SMMU's
 * CMD_ATC_INV, to the devices' model (no PASID in legacy mode). */
static void host_devtlb_inv(void *ctx, uint16_t sid, uint16_t pfsid, unsigned qdep,
			    uint64_t addr, unsigned size_log2)
{
	struct board_vtd *bv = ctx;

	(void)pfsid;
	(void)qdep;
	ilab_iommu_unit_atc_inv(bv->unit, sid, 0, false, addr, size_log2, size_log2 >= 64);
}

static const struct vtd_host_ops board_vtd_host_ops = {
	.mem_read = host_mem_read,
	.mem_write = host_mem_write,
	.wait_status = host_wait_status,
	.devtlb_inv = host_devtlb_inv,
};

/* ---- registers, agent, DMA ------------------------------------------------------------------ */

static uint64_t vtd_unit_mmio_size(struct ilab_iommu_unit *u)
{
	return vtd_mmio_size(((struct board_vtd *)u->model)->vtd);
}

static uint64_t vtd_unit_mmio_read(struct ilab_iommu_unit *u, uint64_t off, unsigned size)
{
	return vtd_mmio_read(((struct board_vtd *)u->model)->vtd, off, size);
}

static void vtd_unit_mmio_write(struct ilab_iommu_unit *u, uint64_t off, uint64_t value,
				unsigned size)
{
	vtd_mmio_write(((struct board_vtd *)u->model)->vtd, off, value, size);
}

static void vtd_unit_consume(struct ilab_iommu_unit *u)
{
	struct board_vtd *bv = u->model;

	while (vtd_process_queue(bv->vtd, bv->batch))
		;
}

/* One page by source-id (bus << 8 | devfn): a 16-bit id, so a larger one is a bad request. */
static int vtd_unit_translate(struct ilab_iommu_unit *u, const struct ilab_iommu_dma_req *r,
			      struct ilab_iommu_dma_rsp *out, struct ilab_board_fault *fault)
{
	struct board_vtd *bv = u->model;
	struct vtd_txn_req req = { .sid = (uint16_t)r->sid, .iova = r->iova, .write = r->write };
	struct vtd_txn_rsp rsp;

	if (r->sid > 0xffff)
		return -EINVAL;
	ilab_sim_sync(); /* the walk sees the tables as they are at this virtual time */
	vtd_translate(bv->vtd, &req, &rsp);
	if (rsp.status != VTD_TXN_OK) {
		if (fault) {
			fault->event = rsp.fault_reason;
			fault->recorded = rsp.fault_recorded;
			fault->iova = r->iova;
		}
		return -EIO;
	}
	out->pa = rsp.pa;
	out->page_shift = rsp.page_shift ? rsp.page_shift : 12;
	return 0;
}

/* ---- statistics ----------------------------------------------------------------------------- */

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *caches_json(struct vtd *v)
{
	static const char *const names[VTD_CACHE_COUNT] = { "context", "iotlb", "pml5e",
							    "pml4e", "pdpe", "pde" };
	json_t *o = json_object();

	for (unsigned i = 0; i < VTD_CACHE_COUNT; i++) {
		struct vtd_cache_stats cs;

		if (vtd_get_cache_stats(v, (enum vtd_cache_id)i, &cs)) {
			json_object_set_new(o, names[i], json_null());
			continue;
		}
		json_object_set_new(o, names[i], json_pack(
			"{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "capacity", jint(cs.capacity),
			"lookups", jint(cs.lookups), "hits", jint(cs.hits), "misses",
			jint(cs.misses), "fills", jint(cs.fills), "evictions", jint(cs.evictions),
			"invalidations", jint(cs.invalidations), "hit_rate_ppm",
			jint(cs.lookups ? cs.hits * 1000000 / cs.lookups : 0)));
	}
	return o;
}

static json_t *model_json(struct vtd *v)
{
	struct vtd_stats s;

	vtd_get_stats(v, &s);
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
			 "translations", jint(s.translations), "iotlb_hit_translations",
			 jint(s.iotlb_hit_translations), "passthrough", jint(s.passthrough),
			 "ats_requests", jint(s.ats_requests), "faults", jint(s.faults),
			 "faults_recorded", jint(s.faults_recorded), "faults_lost",
			 jint(s.faults_lost), "descriptors", jint(s.descriptors), "iq_errors",
			 jint(s.iq_errors), "wait_status_writes", jint(s.wait_status_writes),
			 "inv_events", jint(s.inv_events), "devtlb_invs", jint(s.devtlb_invs),
			 "reg_context_invs", jint(s.reg_context_invs), "reg_iotlb_invs",
			 jint(s.reg_iotlb_invs));
}

static struct json_t *vtd_unit_stats_json(struct ilab_iommu_unit *u, struct ilab_iommu *drv)
{
	struct board_vtd *bv = u->model;
	json_t *o = json_object();

	(void)drv; /* no VT-d driver yet: nothing of its own to report */
	json_object_set_new(o, "arch", json_string("vtd"));
	json_object_set_new(o, "node", json_integer(u->node));
	json_object_set_new(o, "caches", caches_json(bv->vtd));
	json_object_set_new(o, "model", model_json(bv->vtd));
	return o;
}

/* ---- lifecycle and driver ------------------------------------------------------------------- */

static void vtd_unit_destroy(struct ilab_iommu_unit *u)
{
	struct board_vtd *bv = u->model;

	if (!bv)
		return;
	vtd_destroy(bv->vtd);
	free(bv);
	u->model = NULL;
}

static int vtd_unit_create(struct ilab_iommu_unit *u, const char **why)
{
	const struct ilab_board_opts *o = u->opts;
	struct board_vtd *bv;
	struct vtd_config cfg;
	int rc;

	if (o->vtd_cfg)
		cfg = *o->vtd_cfg;
	else
		vtd_config_default(&cfg);
	/* one host thread runs every fiber in simulation: no lock (see board_smmuv3.c) */
	cfg.thread_safe = plat_engine_kind() == PLAT_ENGINE_NATIVE;
	bv = calloc(1, sizeof(*bv));
	if (!bv) {
		*why = "out of memory";
		return -ENOMEM;
	}
	u->model = bv;
	bv->unit = u;
	bv->batch = o->process_batch ? o->process_batch : VTD_PROCESS_BATCH;
	rc = vtd_create(&bv->vtd, &cfg, &board_vtd_host_ops, bv, why);
	if (rc && !*why)
		*why = "cannot create the model";
	return rc;
}

static int vtd_unit_probe(struct ilab_iommu_unit *u, struct plat_mmio *mmio, const void *drv_opts,
			  struct ilab_iommu **out, const char **why)
{
	(void)u;
	(void)mmio;
	(void)drv_opts;
	*out = NULL;
	*why = "no VT-d driver yet (src/drivers/intel-iommu*.c, issue 20)";
	return -ENODEV;
}

static void vtd_unit_remove(struct ilab_iommu *iommu)
{
	(void)iommu; /* never probed */
}

const struct ilab_iommu_arch ilab_iommu_arch_vtd = {
	.name = "vtd",
	.unit_kind = "DMAR unit",
	.driver_name = "VT-d",
	.doorbell_name = "board.vtd.doorbell",
	.create = vtd_unit_create,
	.destroy = vtd_unit_destroy,
	.mmio_size = vtd_unit_mmio_size,
	.mmio_read = vtd_unit_mmio_read,
	.mmio_write = vtd_unit_mmio_write,
	.consume = vtd_unit_consume,
	.translate = vtd_unit_translate,
	.stats_json = vtd_unit_stats_json,
	.probe = vtd_unit_probe,
	.remove = vtd_unit_remove,
};
