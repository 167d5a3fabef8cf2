/* board_internal.h — the board's private state, shared by src/hw/board*.c.
 * Not public API (include/iommulab/board.h).
 */
#ifndef ILAB_HW_BOARD_INTERNAL_H
#define ILAB_HW_BOARD_INTERNAL_H

#include "iommulab/board.h"

struct ilab_board;

struct board_smmu {
	_Alignas(PLAT_CACHELINE) plat_word32 doorbell; /* bumped after every MMIO write */
	_Alignas(PLAT_CACHELINE) struct ilab_board *board;
	struct smmu *smmu;
	struct plat_mmio mmio;
	struct plat_agent *agent;
	struct ilab_iommu *iommu;    /* the driver instance, once probed */
	unsigned index;
	int node;
	char name[ILAB_TOPO_NAME_MAX];
};

struct ilab_board {
	const struct ilab_topo *topo;
	struct ilab_mem *mem;
	struct board_smmu *smmus;
	unsigned nr_smmus;
	unsigned process_batch;
	struct ilab_dev *devs;
	unsigned *dev_smmu;
	unsigned nr_devs;
};

void board_remove_iommus(struct ilab_board *b);

#endif
