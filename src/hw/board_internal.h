/* board_internal.h — the board's private state, shared by src/hw/board*.c: per-unit
 * bookkeeping (doorbell, agent, register window, driver instance) around an architecture's
 * model (iommu_arch.h). Not public API (include/iommulab/board.h), and nothing in it knows an
 * architecture: board_smmuv3.c and board_vtd.c keep their own state behind unit.model.
 */
#ifndef ILAB_HW_BOARD_INTERNAL_H
#define ILAB_HW_BOARD_INTERNAL_H

#include "iommulab/board.h"
#include "iommulab/iommu_arch.h"

struct board_unit {
	_Alignas(PLAT_CACHELINE) plat_word32 doorbell; /* bumped after every MMIO write */
	_Alignas(PLAT_CACHELINE) struct ilab_iommu_unit unit; /* unit.model: NULL if left out */
	struct plat_mmio mmio;
	struct plat_agent *agent;
	struct ilab_iommu *iommu;    /* the driver instance, once probed */
	char name[ILAB_TOPO_NAME_MAX];
	/* interrupts (arch->irq): raised, not yet handed over (C11 atomics, not tracked lines:
	 * no simulated cost, and the agent reads it every round); the driver they go to, set
	 * once probed and cleared before remove (Linux request_irq / free_irq); whether the
	 * agent is inside the handler (remove waits for it to leave) */
	_Atomic uint32_t irq_pending;
	_Atomic(struct ilab_iommu *) irq_drv;
	_Atomic uint32_t in_irq;
};

struct ilab_board {
	const struct ilab_topo *topo;
	struct ilab_mem *mem;
	struct board_unit *units;
	unsigned nr_units;
	bool mem_homes;     /* node ranges declared to the simulator */
	struct ilab_dev *devs;
	unsigned *dev_unit;
	unsigned nr_devs;
	ilab_board_atc_inv_fn atc_inv; /* devices' ATCs (ATS), NULL if none registered */
	void *atc_inv_ctx;
};

/* Unit i if it has a model (not left out by the unit mask), else NULL. */
struct board_unit *board_unit_modelled(const struct ilab_board *b, unsigned i);
void board_remove_iommus(struct ilab_board *b);

#endif
