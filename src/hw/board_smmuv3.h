/* board_smmuv3.h — the SMMUv3 adapter's per-unit state (iommu_arch.h), shared by
 * board_smmuv3.c (model, costs, DMA, driver), board_smmuv3_stats.c (its JSON) and
 * board_smmuv3_trace.c (the timeline trace). Not public API, and nothing else reads it.
 */
#ifndef ILAB_HW_BOARD_SMMUV3_H
#define ILAB_HW_BOARD_SMMUV3_H

#include "iommulab/iommu_arch.h"
#include "iommulab/sim.h"
#include "iommulab/smmuv3.h"
#include "hw/smmuv3_msi_path.h"
#include "hw/smmuv3_timing.h"

/* A CMDQ_PROD write seen in simulation: commands [.., end) were published at time t. */
struct board_prod_mark {
	uint64_t end, t;
};
#define BOARD_PROD_MARKS 64

/* One command queue of an SMMU in simulation (SMMU_CMDQ, or an ECMDQ): what its command
 * fetch and its CMD_SYNCs need. */
struct board_cmdq_track {
	uint32_t last_prod;   /* PROD as last written (index + wrap) */
	uint64_t q_base;      /* the queue's base PA and log2 of its entries, as of that write */
	unsigned q_log2;      /* (for the command fetch's read-ahead) */
	uint64_t fetch_seq;   /* entries of this queue the model has read so far */
	uint64_t fetched_end; /* ...and how far (same count) its last read-ahead reached */
	bool listed;          /* in board_sim_track.fetching (PROD written at least once) */
	uint64_t held_pa;     /* + 1: the entry of a CMD_SYNC waiting at the head (0: none) */
};

/* What the board measures of one SMMU in simulation (CMD_SYNC latency, queue occupancy):
 * touched only by fibers of the one host thread, so plain fields. */
struct board_sim_track {
	struct board_cmdq_track *q; /* per queue: [0] SMMU_CMDQ, [1 + n] ECMDQ n */
	unsigned nq;
	unsigned *fetching;   /* queues that have had commands published (their indices) */
	unsigned nfetching, last_hit; /* ...and which of them the last entry read hit */
	struct board_cmdq_track *last_entry; /* the queue and PA of the last entry read */
	uint64_t last_entry_pa;
	uint64_t ecmdq_off, ecmdq_stride; /* ECMDQ 0's register group, and the spacing */
	uint64_t published;   /* commands published by PROD writes since the start */
	uint64_t consumed;    /* commands the model has started executing */
	struct board_prod_mark marks[BOARD_PROD_MARKS];
	unsigned head, count;
	bool sync_pending;    /* a CMD_SYNC executed, its completion not yet sampled */
	uint64_t sync_pub_t;  /* when that CMD_SYNC was published */
	char sync_name[ILAB_TOPO_NAME_MAX + 16], used_name[ILAB_TOPO_NAME_MAX + 16];
	struct ilab_sim_dist sync_dist, used_dist; /* where those two are in the simulator */
	/* the timeline trace (board_smmuv3_trace.c) */
	bool trace_ready;     /* its tracks were asked for */
	int trace_cmds, trace_engine; /* track ids, -1 when not traced */
	uint64_t cmd_start;   /* when the command being executed started */
	bool in_sync;         /* the command being executed is a CMD_SYNC */
	bool msi_posted;      /* ...and its MSI went to the write path (host_msi: not yet) */
};

/* One SMMU: its model, what its work costs in simulation (the board options' smmu_*), and
 * the simulation's accounting. */
struct board_smmuv3 {
	struct ilab_iommu_unit *unit;
	struct smmu *smmu;
	unsigned process_batch; /* commands per smmu_process_commands call */
	uint64_t tlb_lookup_ns;
	struct smmuv3_timing timing; /* the command path's costs (simulation) */
	struct smmuv3_msi_path msi;  /* CMD_SYNC MSIs, written apart from the processor (sim) */
	bool ril;               /* the model implements range invalidation (IDR3.RIL) */
	unsigned cmd_readahead; /* entries per command-queue read */
	struct board_sim_track sim; /* simulation only */
};

extern const struct ilab_iommu_arch ilab_iommu_arch_smmuv3;

struct json_t *board_smmuv3_stats_json(struct ilab_iommu_unit *u, struct ilab_iommu *drv);

/* board_smmuv3_trace.c: the timeline trace; no-ops when the simulation is not traced */
void board_smmuv3_trace_cmd(struct board_smmuv3 *bs, unsigned qi, unsigned op, uint64_t start,
			    uint64_t entry_pa);
void board_smmuv3_trace_engine(struct board_smmuv3 *bs, unsigned op, uint64_t start,
			       uint64_t dur);
void board_smmuv3_trace_queue(struct board_smmuv3 *bs, unsigned qi);

#endif
