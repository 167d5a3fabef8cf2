/* board_vtd.c — the Intel VT-d architecture of the board (iommu_arch.h): one VT-d model per
 * unit (a DMAR unit, src/hw/vtd/) wired to the board's memory (host ops), its register window,
 * its invalidation-queue consumer, the translation of device DMA by source-id (vtd_translate),
 * its statistics and the probe of the VT-d driver (src/drivers/intel-iommu*.c) on it. Not the
 * model, and not the driver. Interrupt messages (the fault event, the invalidation completion
 * event) addressed to the x86 interrupt range 0xFEE00000-0xFEEFFFFF are interrupts: raised on
 * the board (ilab_iommu_unit_raise_irq), whose agent then runs the driver's handler (a fault
 * event: dmar_fault); elsewhere they are the 32-bit memory write that they are on the bus.
 *
 * Timing (simulation): the model's memory accesses (root/context/paging entries, queue
 * descriptors, wait status writes) are charged by the simulator's line model from the fiber
 * that makes them (the unit's agent for the queue; the translating fiber for a walk) to each
 * line's home, as the SMMUv3 adapter's are. On top of them, from the profile's vtd: section:
 * vtd_desc_ns per descriptor as it starts executing (+ vtd_wait_ns for a wait descriptor,
 * before its status write), and the translation's timing (src/hw/vtd_timing.c: the IOTLB
 * lookup, a walk's fixed part for a request that read at least one 8-byte paging entry —
 * root and context entries are 16 bytes —, and the waits for a request slot and a walker). Register reads and writes are charged by plat_mmio from the
 * profile's mmio: section, by the CPU's and the unit's nodes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <iommulab/intel_iommu_drv.h>
#include <iommulab/sim.h>
#include <iommulab/topo.h>
#include <iommulab/trace.h>
#include <iommulab/vtd.h>

#include "hw/vtd_timing.h"
#include "iommulab/iommu_arch.h"
#include "iommulab/plat.h"

#define VTD_PROCESS_BATCH 256 /* descriptors per vtd_process_queue call */

/* Descriptor type, bits [3:0] and [11:9] of its first quadword (VT-d §6.5.2): 5 = wait. */
#define VTD_DESC_TYPE(qw0) (((qw0) & 0xf) | (((qw0) >> 5) & 0x70))
#define VTD_DESC_WAIT 0x5

struct board_vtd {
	struct ilab_iommu_unit *unit;
	struct vtd *vtd;
	unsigned batch;
	/* costs (simulation), from the board options */
	uint64_t desc_ns, wait_ns;
	struct vtd_timing timing; /* translation: lookup, request slots, walkers (vtd_timing.c) */
	/* paging-entry reads of the request being translated: a walk when not 0 */
	bool translating;
	unsigned entry_reads;
	/* the timeline trace (docs/trace.md): the unit's track, made on its first descriptor */
	bool trace_ready;
	int trace_track;
};

/* ---- the model's view of the machine (host ops) --------------------------------------------- */

static int host_mem_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct board_vtd *bv = ctx;

	if (bv->translating && len == 8)
		bv->entry_reads++; /* a paging entry (root and context entries are 16 bytes) */
	if (plat_sim) {
		const void *va = ilab_mem_va(bv->unit->mem, pa, len);

		if (va) {
			uint64_t t0 = plat_now_ns();

			memcpy(buf, va, len);
			ilab_sim_mem_access(va, len, false);
			if (bv->translating && len == 8) /* the entry's further fetches */
				plat_charge_ns(vtd_timing_entry_read_extra(&bv->timing,
									   plat_now_ns() - t0));
			return 0;
		}
	}
	return ilab_mem_read(bv->unit->mem, pa, buf, len) ? -1 : 0;
}

static int host_mem_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct board_vtd *bv = ctx;

	return ilab_iommu_unit_mem_write(bv->unit, pa, buf, len);
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

/* The x86 interrupt address range (Intel SDM vol. 3 §11.11.1: MSI address 0xFEExxxxx; VT-d
 * §5.1.1 treats writes there as interrupt requests). */
#define X86_MSI_BASE 0xfee00000ull
#define X86_MSI_END 0xfeefffffull

/* Interrupts raised on the board, by event (enum vtd_event). */
#define VTD_IRQ_BIT(ev) (1u << (ev))

/* An interrupt message (VT-d §5.1.6: a DWORD write of FEDATA/IEDATA to FEADDR/IEADDR). Runs with
 * the model's lock held: only remember it and wake the agent. */
static void host_msi(void *ctx, enum vtd_event ev, uint64_t addr, uint32_t data)
{
	struct board_vtd *bv = ctx;

	if (addr >= X86_MSI_BASE && addr <= X86_MSI_END)
		ilab_iommu_unit_raise_irq(bv->unit, VTD_IRQ_BIT(ev));
	else
		ilab_iommu_unit_mem_write(bv->unit, addr, &data, sizeof(data));
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

/* ---- the timeline trace (docs/trace.md; simulation only) ------------------------------------ */

/* Descriptor types (VT-d §6.5.2; Linux's QI_*_TYPE); the rest print as their number. */
static const char *desc_name(unsigned type, char *buf, size_t len)
{
	static const char *const names[16] = {
		[1] = "CC_INV",     [2] = "IOTLB_INV",   [3] = "DEVTLB_INV", [4] = "IEC_INV",
		[5] = "INV_WAIT",   [6] = "PIOTLB_INV",  [7] = "PC_INV",     [8] = "PDEVTLB_INV",
	};

	if (type < 16 && names[type])
		return names[type];
	snprintf(buf, len, "DESC_0x%02x", type);
	return buf;
}

static bool trace_track(struct board_vtd *bv)
{
	char name[ILAB_TOPO_NAME_MAX + 32];

	if (!ilab_sim_tracing())
		return false;
	if (!bv->trace_ready) {
		snprintf(name, sizeof(name), "%s descriptors", bv->unit->name);
		bv->trace_track = ilab_sim_trace_track(name);
		bv->trace_ready = true;
	}
	return bv->trace_track >= 0;
}

/* Descriptors between IQH and IQT (128-bit ones: the index is bits [18:4], §10.4.22-24), less
 * `executing` (the one being executed has not moved IQH yet). Read from the model: no cost. */
static void trace_queue(struct board_vtd *bv, unsigned executing)
{
	uint64_t qsize = 256ull << (vtd_mmio_read(bv->vtd, VTD_REG_IQA, 8) & 7);
	uint64_t h = (vtd_mmio_read(bv->vtd, VTD_REG_IQH, 8) >> 4) & 0x7fff;
	uint64_t t = (vtd_mmio_read(bv->vtd, VTD_REG_IQT, 8) >> 4) & 0x7fff;
	uint64_t used = (t + qsize - h % qsize) % qsize;
	char name[ILAB_TOPO_NAME_MAX + 32];

	snprintf(name, sizeof(name), "%s iq", bv->unit->name);
	ilab_sim_trace_counter(name, "entries", (int64_t)(used >= executing ? used - executing : 0));
}

/* A descriptor starts executing (fetched and checked; simulation only): charge its work
 * before its effects (invalidations, the wait descriptor's status write, IQH) happen, and let
 * every fiber behind this time run first, so that none sees them early. */
static void host_desc_exec(void *ctx, uint64_t qw0, uint64_t qw1)
{
	struct board_vtd *bv = ctx;
	uint64_t start = plat_now_ns();
	char buf[16];

	(void)qw1;
	plat_charge_ns(bv->desc_ns + (VTD_DESC_TYPE(qw0) == VTD_DESC_WAIT ? bv->wait_ns : 0));
	ilab_sim_sync();
	if (trace_track(bv)) {
		ilab_sim_trace_slice(bv->trace_track,
				     desc_name((unsigned)VTD_DESC_TYPE(qw0), buf, sizeof(buf)),
				     start, plat_now_ns() - start, NULL, 0);
		trace_queue(bv, 1);
	}
}

static const struct vtd_host_ops board_vtd_host_ops = {
	.mem_read = host_mem_read,
	.mem_write = host_mem_write,
	.msi = host_msi,
	.wait_status = host_wait_status,
	.devtlb_inv = host_devtlb_inv,
};

/* In simulation: the same, plus the per-descriptor charge. */
static const struct vtd_host_ops board_vtd_host_ops_sim = {
	.mem_read = host_mem_read,
	.mem_write = host_mem_write,
	.msi = host_msi,
	.wait_status = host_wait_status,
	.devtlb_inv = host_devtlb_inv,
	.desc_exec = host_desc_exec,
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
	struct board_vtd *bv = u->model;

	vtd_mmio_write(bv->vtd, off, value, size);
	if (off == VTD_REG_IQT && plat_sim && trace_track(bv))
		trace_queue(bv, 0);
}

static void vtd_unit_consume(struct ilab_iommu_unit *u)
{
	struct board_vtd *bv = u->model;

	while (vtd_process_queue(bv->vtd, bv->batch))
		;
}

/* The trace's device rows: each translation request from its arrival to its answer, and the
 * part of it a walker was busy (its fixed cost and entry reads, ending with the answer). */
static void trace_translation(struct board_vtd *bv, uint64_t arrive, uint64_t end,
			      uint64_t walk_ns, bool ats)
{
	char name[ILAB_TOPO_NAME_MAX + 32];

	if (!ilab_sim_tracing())
		return;
	snprintf(name, sizeof(name), "%s %s", bv->unit->name,
		 ats ? "ATS translation request" : "translation");
	ilab_sim_trace_async(name, arrive, end - arrive, NULL, 0);
	if (walk_ns && walk_ns <= end - arrive) {
		snprintf(name, sizeof(name), "%s walk", bv->unit->name);
		ilab_sim_trace_async(name, end - walk_ns, walk_ns, NULL, 0);
	}
}

/* One page by source-id (bus << 8 | devfn): a 16-bit id, so a larger one is a bad request.
 * The IOTLB lookup costs vtd_iotlb_lookup_ns; a walk's entry reads are charged by the memory
 * model as the model makes them, and a walk's fixed part (vtd_walk_ns) once it is known that
 * the request walked. */
static int vtd_unit_translate(struct ilab_iommu_unit *u, const struct ilab_iommu_dma_req *r,
			      struct ilab_iommu_dma_rsp *out, struct ilab_board_fault *fault)
{
	struct board_vtd *bv = u->model;
	struct vtd_txn_req req = { .sid = (uint16_t)r->sid, .iova = r->iova, .write = r->write,
				   .ats = r->ats };
	struct vtd_txn_rsp rsp;

	if (r->sid > 0xffff)
		return -EINVAL;
	if (plat_sim) {
		uint64_t arrive = plat_now_ns(), t1, end, walk_mem;

		/* one host thread runs every fiber, and none switches inside the walk (memory
		 * accesses are not scheduling points): the count is this request's */
		plat_charge_ns(bv->timing.iotlb_lookup_ns);
		ilab_sim_sync(); /* the walk sees the tables as they are at this virtual time */
		bv->translating = true;
		bv->entry_reads = 0;
		t1 = plat_now_ns();
		vtd_translate(bv->vtd, &req, &rsp);
		bv->translating = false;
		walk_mem = plat_now_ns() - t1;
		end = vtd_timing_translate(&bv->timing, arrive, bv->entry_reads > 0, walk_mem);
		if (bv->entry_reads)
			plat_charge_ns(bv->timing.walk_ns);
		if (end > plat_now_ns()) /* queued for a request slot or a walker */
			plat_delay_ns(end - plat_now_ns());
		trace_translation(bv, arrive, end,
				  bv->entry_reads ? bv->timing.walk_ns + walk_mem : 0, r->ats);
	} else {
		vtd_translate(bv->vtd, &req, &rsp);
	}
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
	out->read = rsp.perm & VTD_PERM_R;
	out->write = rsp.perm & VTD_PERM_W;
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

/* What the driver issued: queued-invalidation submits and descriptors, IOTLB invalidations
 * by granularity, device-TLB invalidations, faults handled, page-table pages. */
static json_t *driver_json(struct ilab_iommu *drv)
{
	struct ilab_intel_iommu_stats st;

	if (ilab_intel_iommu_get_stats(drv, &st))
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "qi_submits",
			 (json_int_t)st.qi_submits, "iotlb_psi", (json_int_t)st.iotlb_psi,
			 "fault_irqs", (json_int_t)st.fault_irqs, "fault_overflows",
			 (json_int_t)st.fault_overflows, "fault_reports",
			 (json_int_t)st.fault_reports,
			 "iotlb_dsi", (json_int_t)st.iotlb_dsi, "iotlb_global",
			 (json_int_t)st.iotlb_global, "psi_ih", (json_int_t)st.psi_ih,
			 "devtlb_invs", (json_int_t)st.devtlb_invs, "iqe_recovered",
			 (json_int_t)st.iqe_recovered, "faults_handled",
			 (json_int_t)st.faults_handled, "pgtable_alloc",
			 (json_int_t)st.pgtable_alloc, "pgtable_free", (json_int_t)st.pgtable_free);
}

static struct json_t *vtd_unit_stats_json(struct ilab_iommu_unit *u, struct ilab_iommu *drv)
{
	struct board_vtd *bv = u->model;
	json_t *o = json_object();

	json_object_set_new(o, "arch", json_string("vtd"));
	json_object_set_new(o, "node", json_integer(u->node));
	json_object_set_new(o, "caches", caches_json(bv->vtd));
	json_object_set_new(o, "model", model_json(bv->vtd));
	if (drv && ilab_intel_iommu_is_ours(drv))
		json_object_set_new(o, "driver", driver_json(drv));
	return o;
}

/* ---- lifecycle and driver ------------------------------------------------------------------- */

static void vtd_unit_destroy(struct ilab_iommu_unit *u)
{
	struct board_vtd *bv = u->model;

	if (!bv)
		return;
	vtd_destroy(bv->vtd);
	vtd_timing_fini(&bv->timing);
	free(bv);
	u->model = NULL;
}

/* The profile's cache sizes over the configuration's (VT-d §6.2 leaves them to the
 * implementation: the profile says where each comes from). */
static void set_if(uint32_t *field, unsigned v)
{
	if (v)
		*field = v;
}

static void cache_sizes(struct vtd_config *cfg, const struct ilab_board_opts *o)
{
	set_if(&cfg->iotlb.entries, o->vtd_iotlb_entries);
	set_if(&cfg->iotlb.ways, o->vtd_iotlb_ways);
	set_if(&cfg->psc[1].entries, o->vtd_pml4e_entries);
	set_if(&cfg->psc[2].entries, o->vtd_pdpe_entries);
	set_if(&cfg->psc[3].entries, o->vtd_pde_entries);
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
	cache_sizes(&cfg, o);
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
	bv->desc_ns = o->vtd_desc_ns;
	bv->wait_ns = o->vtd_wait_ns;
	bv->timing.iotlb_lookup_ns = o->vtd_iotlb_lookup_ns;
	bv->timing.walk_ns = o->vtd_walk_ns;
	bv->timing.entry_fetches = o->vtd_entry_read_fetches;
	if (vtd_timing_init(&bv->timing, o->vtd_outstanding, o->vtd_walkers)) {
		*why = "out of memory";
		return -ENOMEM;
	}
	rc = vtd_create(&bv->vtd, &cfg, plat_sim ? &board_vtd_host_ops_sim : &board_vtd_host_ops,
			bv, why);
	if (rc && !*why)
		*why = "cannot create the model";
	return rc;
}

static int vtd_unit_probe(struct ilab_iommu_unit *u, struct plat_mmio *mmio, const void *drv_opts,
			  struct ilab_iommu **out, const char **why)
{
	int rc = ilab_intel_iommu_probe(mmio, u->mem, u->node, drv_opts, out);

	if (rc)
		*why = ilab_intel_iommu_strerror();
	return rc;
}

static void vtd_unit_remove(struct ilab_iommu *iommu)
{
	ilab_intel_iommu_remove(iommu);
}

/* The driver's interrupt handlers: the fault event's (dmar_fault). Linux 6.3 requests no
 * interrupt for the invalidation completion event in legacy mode (qi_submit_sync polls). */
static void vtd_unit_irq(struct ilab_iommu_unit *u, struct ilab_iommu *drv, uint32_t pending)
{
	(void)u;
	if ((pending & VTD_IRQ_BIT(VTD_EVENT_FAULT)) && ilab_intel_iommu_is_ours(drv))
		ilab_intel_iommu_fault_irq(drv);
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
	.irq = vtd_unit_irq,
};
