/* board.c — the machine: memory for the topology's nodes, one IOMMU unit per topology IOMMU
 * that the unit mask selects (all by default), each with the model its architecture makes
 * (iommu_arch.h: SMMUv3, VT-d), an MMIO window with a doorbell, and one plat agent per unit
 * that runs the architecture's queue consumer whenever the doorbell rings.
 * Not device DMA (board_dma.c), not the drivers (board_iommu.c probes them), and nothing
 * architecture-specific: register layouts, commands and their costs are the adapters'
 * (board_smmuv3.c, board_vtd.c).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/sim.h>

#include "hw/board_internal.h"
#include "util/errf.h"
#include "iommulab/plat.h"

/* ---- the device side: ATS invalidations to the devices' ATCs --------------------------------- */

void ilab_board_set_atc_inv(struct ilab_board *b, ilab_board_atc_inv_fn fn, void *ctx)
{
	if (!b)
		return;
	b->atc_inv = fn;
	b->atc_inv_ctx = ctx;
}

void ilab_iommu_unit_atc_inv(const struct ilab_iommu_unit *u, uint32_t sid, uint32_t ssid,
			     bool ssv, uint64_t addr, unsigned size_log2, bool global)
{
	struct ilab_board *b = u->board;

	if (b->atc_inv)
		b->atc_inv(b->atc_inv_ctx, u->index, sid, ssid, ssv, addr, size_log2, global);
}

int ilab_iommu_unit_mem_write(const struct ilab_iommu_unit *u, uint64_t pa, const void *buf,
			      size_t len)
{
	struct ilab_mem *mem = u->mem;
	void *va;

	if ((len == 4 || len == 8) && !(pa % len)) {
		uint64_t v = 0;

		va = ilab_mem_va(mem, pa, len);
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
		va = ilab_mem_va(mem, pa, len);
		if (va) {
			memcpy(va, buf, len);
			ilab_sim_mem_access(va, len, true);
			return 0;
		}
	}
	return ilab_mem_write(mem, pa, buf, len) ? -1 : 0;
}

/* ---- the CPUs' view of a unit (MMIO) --------------------------------------------------------- */

static uint64_t board_mmio_read(void *ctx, uint64_t off, unsigned size)
{
	struct board_unit *bu = ctx;

	return bu->unit.arch->mmio_read(&bu->unit, off, size);
}

static void board_mmio_write(void *ctx, uint64_t off, uint64_t value, unsigned size)
{
	struct board_unit *bu = ctx;

	bu->unit.arch->mmio_write(&bu->unit, off, value, size);
	/* Ring the doorbell: the agent re-checks the queues (any write may enable one). Not a
	 * tracked RMW: the doorbell is the register write itself, whose cost plat_mmio already
	 * charged the CPU; plat_wrote wakes the simulated agent. */
	atomic_fetch_add_explicit(&bu->doorbell.v, 1, memory_order_release);
	plat_wrote(&bu->doorbell);
}

static const struct plat_mmio_ops board_mmio_ops = {
	.read = board_mmio_read,
	.write = board_mmio_write,
};

/* ---- the unit's agent ------------------------------------------------------------------------ */

struct agent_wait {
	struct plat_agent *agent;
	uint32_t seen;
};

static bool doorbell_rang(uint64_t v, void *arg)
{
	const struct agent_wait *w = arg;

	return (uint32_t)v != w->seen || plat_agent_should_stop(w->agent);
}

/* Hand the raised interrupts to the driver's handler once one is registered (until then they
 * stay pending, as a latched interrupt: the probe registers it and rings the doorbell).
 * in_irq brackets the handler for board_remove_iommus. */
static void unit_irqs(struct board_unit *bu)
{
	uint32_t pending;
	struct ilab_iommu *drv;

	if (!atomic_load_explicit(&bu->irq_pending, memory_order_relaxed))
		return;
	atomic_store(&bu->in_irq, 1);
	drv = atomic_load(&bu->irq_drv);
	if (drv && bu->unit.arch->irq) {
		pending = atomic_exchange(&bu->irq_pending, 0);
		if (pending)
			bu->unit.arch->irq(&bu->unit, drv, pending);
	}
	atomic_store(&bu->in_irq, 0);
}

void ilab_iommu_unit_raise_irq(struct ilab_iommu_unit *u, uint32_t bits)
{
	struct board_unit *bu = (struct board_unit *)((char *)u - offsetof(struct board_unit, unit));

	atomic_fetch_or(&bu->irq_pending, bits);
	atomic_fetch_add_explicit(&bu->doorbell.v, 1, memory_order_release);
	plat_wrote(&bu->doorbell);
}

static struct board_unit *unit_of(struct ilab_iommu_unit *u)
{
	return (struct board_unit *)((char *)u - offsetof(struct board_unit, unit));
}

uint32_t ilab_iommu_unit_doorbell(struct ilab_iommu_unit *u)
{
	return plat_load32(&unit_of(u)->doorbell);
}

void ilab_iommu_unit_idle_until(struct ilab_iommu_unit *u, uint32_t seen, uint64_t until)
{
	struct board_unit *bu = unit_of(u);
	struct agent_wait w = { .agent = bu->agent, .seen = seen };
	uint64_t now = plat_now_ns();

	if (until <= now)
		return;
	/* a stopping agent's poll returns at once: let the time pass instead */
	if (!bu->agent || plat_agent_should_stop(bu->agent) ||
	    plat_poll(&bu->doorbell, 4, doorbell_rang, &w, until - now) == -ETIMEDOUT)
		if (plat_now_ns() < until)
			plat_delay_ns(until - plat_now_ns());
}

static void unit_agent(struct plat_agent *agent, void *arg)
{
	struct board_unit *bu = arg;
	struct agent_wait w = { .agent = agent };

	for (;;) {
		/* Read the doorbell before looking at the queues: a tail write after our last
		 * look has rung it again, so the poll below cannot miss it. */
		w.seen = plat_load32(&bu->doorbell);
		bu->unit.arch->consume(&bu->unit);
		unit_irqs(bu);
		if (plat_agent_should_stop(agent))
			return;
		plat_poll(&bu->doorbell, 4, doorbell_rang, &w, 0);
	}
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* Tell the simulator which host memory is which node's (polled words in simulated memory, e.g.
 * a CMD_SYNC's MSI slot, are then re-read from their home node), or forget it. */
static void declare_mem_homes(struct ilab_board *b, bool declare)
{
	unsigned n = ilab_topo_nr_nodes(b->topo);

	if (!plat_sim || declare == b->mem_homes)
		return;
	for (unsigned i = 0; i < n; i++) {
		ilab_pa_t base;
		uint64_t bytes;
		void *va;

		if (ilab_mem_node_range(b->mem, (int)i, &base, &bytes) || !bytes)
			continue;
		va = ilab_mem_va(b->mem, base, 0);
		if (va)
			ilab_sim_mem_home(va, bytes, declare ? (int)i : -1);
	}
	b->mem_homes = declare;
}

#define DEFAULT_NODE_BYTES (4ull << 30)
#define DEFAULT_CMA_BYTES (64ull << 20)

static int make_mem(struct ilab_board *b, const struct ilab_board_opts *o, char *err, size_t errlen)
{
	struct ilab_mem_config mc = { 0 };
	int rc;

	mc.nr_nodes = ilab_topo_nr_nodes(b->topo);
	mc.node_bytes = o->node_bytes ? o->node_bytes : DEFAULT_NODE_BYTES;
	mc.cma = o->cma;
	mc.cma_global_node = o->cma_global_node;
	if (o->cma != ILAB_CMA_NONE) {
		mc.cma_global_bytes = o->cma_global_bytes ? o->cma_global_bytes : DEFAULT_CMA_BYTES;
		if (o->cma != ILAB_CMA_GLOBAL)
			mc.cma_node_bytes = o->cma_node_bytes ? o->cma_node_bytes : DEFAULT_CMA_BYTES;
		mc.cma_nodes_mask = o->cma_nodes_mask;
	}
	rc = ilab_mem_create(&mc, &b->mem);
	if (rc)
		return ilab_errf(err, errlen, rc, "board: memory: %s", ilab_mem_strerror());
	declare_mem_homes(b, true);
	return 0;
}

/* Which architecture unit i has: the board options' iommu_arch for every unit (the profile's
 * iommu: key), else the topology's for that unit. */
static const char *unit_arch_name(const struct ilab_smmu_desc *d,
				  const struct ilab_board_opts *o)
{
	if (o->iommu_arch && o->iommu_arch[0])
		return o->iommu_arch;
	return d->arch[0] ? d->arch : "smmuv3";
}

/* Unit i's model, register window and doorbell; nothing for a unit the mask leaves out (its
 * window reads as absent). */
static int make_unit(struct ilab_board *b, const struct ilab_board_opts *o, unsigned i,
		     char *err, size_t errlen)
{
	const struct ilab_smmu_desc *d = ilab_topo_smmu(b->topo, i);
	struct board_unit *bu = &b->units[i];
	const char *arch = unit_arch_name(d, o);
	const char *why = NULL;
	char names[64];
	int rc;

	snprintf(bu->name, sizeof(bu->name), "%s", d->name[0] ? d->name : "smmu");
	bu->unit.board = b;
	bu->unit.mem = b->mem;
	bu->unit.index = i;
	bu->unit.node = d->node < 0 ? 0 : d->node;
	bu->unit.name = bu->name;
	bu->unit.arch = ilab_iommu_arch_find(arch);
	if (!bu->unit.arch)
		return ilab_errf(err, errlen, -EINVAL,
				 "board: IOMMU %u (%s): no architecture '%s' (known: %s)", i,
				 bu->name, arch, ilab_iommu_arch_names(names, sizeof(names), ", "));
	if (o->smmu_mask && (i >= 64 || !(o->smmu_mask & (1ull << i))))
		return 0; /* left out of this board */
	bu->unit.opts = o;
	rc = bu->unit.arch->create(&bu->unit, &why);
	bu->unit.opts = NULL; /* the caller's: not kept past create */
	if (rc)
		return ilab_errf(err, errlen, rc, "board: %s %u: %s", bu->unit.arch->unit_kind, i,
				 why ? why : "cannot create the model");
	bu->mmio.ops = &board_mmio_ops;
	bu->mmio.ctx = bu;
	bu->mmio.node = bu->unit.node;
	bu->mmio.name = bu->name;
	plat_store32(&bu->doorbell, 0);
	plat_track(&bu->doorbell, bu->unit.arch->doorbell_name);
	return 0;
}

static int make_units(struct ilab_board *b, const struct ilab_board_opts *o, char *err,
		      size_t errlen)
{
	b->nr_units = ilab_topo_nr_smmus(b->topo);
	if (!b->nr_units)
		return 0;
	b->units = plat_zalloc_array(b->nr_units, sizeof(*b->units));
	if (!b->units)
		return ilab_errf(err, errlen, -ENOMEM, "board: out of memory");
	memset(b->units, 0, b->nr_units * sizeof(*b->units));
	for (unsigned i = 0; i < b->nr_units; i++) {
		int rc = make_unit(b, o, i, err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

static int make_devices(struct ilab_board *b, char *err, size_t errlen)
{
	b->nr_devs = ilab_topo_nr_devices(b->topo);
	if (!b->nr_devs)
		return 0;
	b->devs = plat_zalloc_array(b->nr_devs, sizeof(*b->devs));
	b->dev_unit = plat_zalloc_array(b->nr_devs, sizeof(*b->dev_unit));
	if (!b->devs || !b->dev_unit)
		return ilab_errf(err, errlen, -ENOMEM, "board: out of memory");
	for (unsigned i = 0; i < b->nr_devs; i++) {
		const struct ilab_device *d = ilab_topo_device(b->topo, i);

		snprintf(b->devs[i].name, sizeof(b->devs[i].name), "%s", d->name);
		b->devs[i].node = d->node;
		b->devs[i].sid = d->sid;
		b->devs[i].dma_bits = 48;
		b->dev_unit[i] = d->smmu;
		if (d->smmu >= b->nr_units)
			return ilab_errf(err, errlen, -EINVAL, "board: device %s: no SMMU %u",
					 d->name, d->smmu);
	}
	return 0;
}

int ilab_board_create(const struct ilab_topo *topo, const struct ilab_board_opts *opts,
		      struct ilab_board **out, char *err, size_t errlen)
{
	struct ilab_board_opts defaults = { 0 };
	struct ilab_board *b;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return ilab_errf(err, errlen, -EINVAL, "board: no output pointer");
	*out = NULL;
	if (!topo)
		return ilab_errf(err, errlen, -EINVAL, "board: no topology");
	if (!opts)
		opts = &defaults;
	if (opts->cma_global_node < 0 || (unsigned)opts->cma_global_node >= ilab_topo_nr_nodes(topo))
		return ilab_errf(err, errlen, -EINVAL, "board: CMA global node %d is not a node",
				 opts->cma_global_node);
	b = plat_zalloc_array(1, sizeof(*b));
	if (!b)
		return ilab_errf(err, errlen, -ENOMEM, "board: out of memory");
	b->topo = topo;
	rc = make_mem(b, opts, err, errlen);
	if (!rc)
		rc = make_units(b, opts, err, errlen);
	if (!rc)
		rc = make_devices(b, err, errlen);
	if (rc) {
		ilab_board_destroy(b);
		return rc;
	}
	*out = b;
	return 0;
}

int ilab_board_start(struct ilab_board *b)
{
	if (!b)
		return -EINVAL;
	for (unsigned i = 0; i < b->nr_units; i++) {
		struct board_unit *bu = &b->units[i];
		int rc;

		if (bu->agent || !bu->unit.model)
			continue;
		rc = plat_agent_start(bu->name, bu->unit.node, unit_agent, bu, &bu->agent);
		if (rc) {
			ilab_board_stop(b);
			return rc;
		}
	}
	return 0;
}

void ilab_board_stop(struct ilab_board *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < b->nr_units; i++) {
		struct board_unit *bu = &b->units[i];

		if (bu->agent)
			plat_agent_stop(bu->agent, &bu->doorbell);
		bu->agent = NULL;
	}
}

void ilab_board_destroy(struct ilab_board *b)
{
	if (!b)
		return;
	/* Drivers issue commands while they remove: the agents must still run. */
	board_remove_iommus(b);
	ilab_board_stop(b);
	for (unsigned i = 0; b->units && i < b->nr_units; i++)
		if (b->units[i].unit.model)
			b->units[i].unit.arch->destroy(&b->units[i].unit);
	free(b->units);
	free(b->devs);
	free(b->dev_unit);
	if (b->mem)
		declare_mem_homes(b, false);
	ilab_mem_destroy(b->mem);
	free(b);
}

/* ---- accessors ------------------------------------------------------------------------------ */

struct board_unit *board_unit_modelled(const struct ilab_board *b, unsigned i)
{
	return b && i < b->nr_units && b->units[i].unit.model ? &b->units[i] : NULL;
}

struct ilab_mem *ilab_board_mem(struct ilab_board *b)
{
	return b ? b->mem : NULL;
}

const struct ilab_topo *ilab_board_topo(const struct ilab_board *b)
{
	return b ? b->topo : NULL;
}

unsigned ilab_board_nr_iommus(const struct ilab_board *b)
{
	return b ? b->nr_units : 0;
}

struct ilab_iommu_unit *ilab_board_iommu_unit(struct ilab_board *b, unsigned i)
{
	struct board_unit *bu = board_unit_modelled(b, i);

	return bu ? &bu->unit : NULL;
}

const struct ilab_iommu_arch *ilab_board_iommu_arch(const struct ilab_board *b, unsigned i)
{
	return b && i < b->nr_units ? b->units[i].unit.arch : NULL;
}

int ilab_board_iommu_node(const struct ilab_board *b, unsigned i)
{
	return b && i < b->nr_units ? b->units[i].unit.node : -EINVAL;
}

struct plat_mmio *ilab_board_mmio(struct ilab_board *b, unsigned i)
{
	/* a unit that the mask left out has no model behind its window: absent */
	struct board_unit *bu = board_unit_modelled(b, i);

	return bu ? &bu->mmio : NULL;
}

uint64_t ilab_board_mmio_size(struct ilab_board *b, unsigned i)
{
	struct board_unit *bu = board_unit_modelled(b, i);

	return bu ? bu->unit.arch->mmio_size(&bu->unit) : 0;
}
