/* dma_engine.c — a device DMA engine with ATS in the simulator (see include/iommulab/dma_engine.h):
 * max_outstanding "slots" per engine, each a simulator agent on the SMMU's node, take the next
 * page, look it up in the ATC, on a miss send an ATS Translation Request to the IOMMU unit
 * (its architecture's translate op), fill the ATC, and book the page's transfer on the engine's
 * link. Not the IOMMU (its lookup and walk costs are its architecture's and the simulator's
 * memory model's) and not data movement (no bytes are copied).
 *
 * The slots of every engine are fibers of one host thread: they share the engine's state (next
 * page, link booking, ATC) through plain fields, always after ilab_sim_sync(), so they touch it
 * in virtual-time order — a device's internal state is not a CPU cache line and costs nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/dma_engine.h"
#include "iommulab/plat.h"
#include "iommulab/sim.h"
#include "util/errf.h"

struct engine {
	const struct ilab_dma_engine_cfg *cfg;
	struct ilab_dma_engine_result *res;
	uint64_t npages, next;      /* pages to move; next to take */
	uint64_t region_pages;
	uint64_t page_ps;           /* link time of one page, picoseconds */
	uint64_t link_free_ps;      /* when the link can start the next page */
	bool started;
	int error;
	char errmsg[160];
};

struct slot {
	struct engine *e;
	struct plat_agent *agent;
};

/* One ATS Translation Request for iova. Returns true when the access is granted. */
static bool ats_request(struct engine *e, uint64_t iova, struct ilab_atc_xlate *x)
{
	const struct ilab_dma_engine_cfg *c = e->cfg;
	const struct ilab_iommu_dma_req req = { .sid = c->sid, .iova = iova, .write = c->write,
						.ats = true };
	struct ilab_iommu_dma_rsp rsp = { 0 };
	struct ilab_board_fault fault = { 0 };
	uint64_t t0 = plat_now_ns();
	int ret;

	/* The request crosses the link and the root complex to the unit; the unit looks up its
	 * TLB and walks on a miss (its architecture charges the lookup and the walk's fixed
	 * part; the memory model charges its reads from this fiber's node, the unit's), and
	 * the completion comes back. */
	plat_delay_ns(c->ats_round_trip_ns / 2);
	ret = c->unit->arch->translate(c->unit, &req, &rsp, &fault);
	plat_delay_ns(c->ats_round_trip_ns - c->ats_round_trip_ns / 2);
	ilab_sim_sync();
	e->res->ats_requests++;
	e->res->ats_ns += plat_now_ns() - t0;
	if (ret || !(c->write ? rsp.write : rsp.read)) {
		e->res->ats_refused++;
		if (!e->error) {
			e->error = -EIO;
			snprintf(e->errmsg, sizeof(e->errmsg),
				 "%s: ATS request for 0x%llx refused (%s, perm %s%s, fault 0x%x)",
				 c->name ? c->name : "engine", (unsigned long long)iova,
				 ret ? "UR/CA" : "success", rsp.read ? "r" : "-",
				 rsp.write ? "w" : "-", fault.event);
		}
		return false;
	}
	*x = (struct ilab_atc_xlate){ .pa = rsp.pa, .shift = rsp.page_shift,
				      .read = rsp.read, .write = rsp.write };
	return true;
}

/* Book page transfer on the link: in page order, not before its translation is known. */
static void book_link(struct engine *e)
{
	uint64_t now_ps = plat_now_ns() * 1000;
	uint64_t start = e->link_free_ps > now_ps ? e->link_free_ps : now_ps;

	e->link_free_ps = start + e->page_ps;
	e->res->pages++;
}

static void slot_main(struct plat_agent *agent, void *arg)
{
	struct slot *s = arg;
	struct engine *e = s->e;
	const struct ilab_dma_engine_cfg *c = e->cfg;
	const uint64_t psize = 1ull << c->page_shift;

	(void)agent;
	for (;;) {
		struct ilab_atc_xlate x;
		uint64_t p, iova;

		ilab_sim_sync();
		if (e->error || e->next >= e->npages)
			break;
		if (!e->started) {
			e->started = true;
			e->res->start_ns = plat_now_ns();
		}
		p = e->next++;
		iova = c->iova + (p % e->region_pages) * psize;
		if (!ilab_atc_lookup(c->atc, 0, false, iova, c->write, &x)) {
			if (!ats_request(e, iova, &x))
				break;
			ilab_atc_fill(c->atc, 0, false, iova, &x);
		} else {
			e->res->atc_hits++;
		}
		book_link(e);
	}
}

static int check(const struct ilab_dma_engine_cfg *c, unsigned i, char *err, size_t errlen)
{
	if (!c->unit || !c->unit->arch || !c->unit->arch->translate || !c->atc || c->node < 0 || c->page_shift < 12 || c->page_shift > 30 ||
	    !c->max_outstanding || c->max_outstanding > 4096 || !(c->link_bytes_per_ns > 0) ||
	    !c->region_bytes || (c->region_bytes | c->iova) & ((1ull << c->page_shift) - 1))
		return ilab_errf(err, errlen, -EINVAL, "dma engine %u (%s): bad configuration", i,
			    c->name ? c->name : "?");
	return 0;
}

int ilab_dma_engines_run(const struct ilab_dma_engine_cfg *cfg, unsigned n,
			 struct ilab_dma_engine_result *res, char *err, size_t errlen)
{
	struct engine *eng;
	struct slot *slots;
	unsigned nslots = 0, k = 0;
	int ret = 0;

	if (!cfg || !res || !n)
		return ilab_errf(err, errlen, -EINVAL, "dma engines: nothing to run");
	if (!plat_sim)
		return ilab_errf(err, errlen, -EINVAL, "dma engines: the simulator is not active");
	for (unsigned i = 0; i < n; i++) {
		if ((ret = check(&cfg[i], i, err, errlen)))
			return ret;
		nslots += cfg[i].max_outstanding;
	}
	eng = plat_zalloc_array(n, sizeof(*eng));
	slots = plat_zalloc_array(nslots, sizeof(*slots));
	if (!eng || !slots) {
		free(eng);
		free(slots);
		return ilab_errf(err, errlen, -ENOMEM, "dma engines: out of memory");
	}
	for (unsigned i = 0; i < n; i++) {
		const struct ilab_dma_engine_cfg *c = &cfg[i];
		uint64_t psize = 1ull << c->page_shift;

		memset(&res[i], 0, sizeof(res[i]));
		eng[i].cfg = c;
		eng[i].res = &res[i];
		eng[i].npages = (c->bytes + psize - 1) / psize;
		eng[i].region_pages = c->region_bytes / psize;
		eng[i].page_ps = (uint64_t)((double)psize / c->link_bytes_per_ns * 1000.0 + 0.5);
		res[i].bytes = c->bytes;
	}
	for (unsigned i = 0; i < n && !ret; i++)
		for (unsigned j = 0; j < cfg[i].max_outstanding && !ret; j++, k++) {
			slots[k].e = &eng[i];
			ret = plat_agent_start(cfg[i].name ? cfg[i].name : "dma-engine", cfg[i].node,
					       slot_main, &slots[k], &slots[k].agent);
			if (ret)
				ilab_errf(err, errlen, ret, "dma engine %u: cannot start a slot agent", i);
		}
	/* Wait for every slot to run out of pages (plat_agent_stop joins a finished agent). */
	for (unsigned i = 0; i < k; i++)
		plat_agent_stop(slots[i].agent, NULL);
	for (unsigned i = 0; i < n && !ret; i++) {
		if (eng[i].error) {
			ret = ilab_errf(err, errlen, eng[i].error, "%s", eng[i].errmsg);
			break;
		}
		res[i].end_ns = (eng[i].link_free_ps + 999) / 1000;
	}
	free(eng);
	free(slots);
	return ret;
}
