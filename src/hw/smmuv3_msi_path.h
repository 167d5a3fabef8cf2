/* smmuv3_msi_path.h — an SMMUv3's write path for CMD_SYNC completion MSIs in simulation
 * (smmuv3_msi_path.c; docs/smmuv3-timing.md). The command processor posts the write and goes
 * on; the path makes it, one at a time, on its own clock. It knows nothing of the model or
 * the board: it is given the write to make (deliver) and makes it.
 */
#ifndef ILAB_HW_SMMUV3_MSI_PATH_H
#define ILAB_HW_SMMUV3_MSI_PATH_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/topo.h>

struct plat_agent;

/* Make the write (charged to the path's agent by the memory model) and tell its pollers. */
typedef void (*smmuv3_msi_deliver_fn)(void *ctx, uint64_t pa, uint32_t data);

struct smmuv3_msi_path {
	/* The hand-over and completion words, each on a line of its own: the processor writes
	 * one and polls the other, the path the reverse; neither is memory the CPUs see. */
	_Alignas(64) uint32_t posted; /* writes handed over since the start */
	_Alignas(64) uint32_t done;   /* writes made */
	uint64_t pa;                  /* the one write outstanding */
	uint32_t data;
	struct plat_agent *agent;     /* started at the first post */
	bool failed;                  /* the agent could not start: writes are made in place */
	smmuv3_msi_deliver_fn deliver;
	void *ctx;
	int node;
	char name[ILAB_TOPO_NAME_MAX + 8];
};

void smmuv3_msi_path_init(struct smmuv3_msi_path *p, const char *unit, int node,
			  smmuv3_msi_deliver_fn deliver, void *ctx);
/* The processor: wait until the write outstanding, if any, is made. */
void smmuv3_msi_path_drain(struct smmuv3_msi_path *p);
/* The processor: hand the write over (after draining the previous one). False when the path
 * has no agent (it could not start): the caller makes the write itself. */
bool smmuv3_msi_path_post(struct smmuv3_msi_path *p, uint64_t pa, uint32_t data);
/* Is a write handed over and not made yet? */
bool smmuv3_msi_path_busy(const struct smmuv3_msi_path *p);
/* Make what is outstanding and stop the agent. */
void smmuv3_msi_path_stop(struct smmuv3_msi_path *p);

#endif
