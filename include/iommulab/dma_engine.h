/* dma_engine.h — a PCIe device's DMA engine with ATS, for the simulator: it moves a number of
 * bytes over an IOVA region at its link's rate, translating each page through its ATC; an ATC
 * miss sends an ATS Translation Request to its IOMMU unit (an SMMU, a DMAR unit: whichever
 * architecture the board has, through iommu_arch.h), and at most max_outstanding of them are in
 * flight, so translation latency becomes bandwidth once the link is not the limit.
 * It is not the ATC (atc.h) nor the IOMMU model, and it does not copy data: it models time.
 *
 * Cost of one ATS Translation Request (virtual time of the engine's slot that issued it):
 *   ats_round_trip_ns (PCIe request + completion, the root complex, excluding the IOMMU)
 *   + what the unit's architecture charges for a translation (its translate op: SMMUv3
 *     smmu_tlb_lookup_ns, VT-d vtd_iotlb_lookup_ns and vtd_walk_ns on a walk)
 *   + the unit's own memory accesses (STE/CD or context entries on a configuration-cache miss,
 *     the table walk on a TLB miss), charged by the simulator's memory latency from `node`
 *     (the unit's node) to the home node of each table — the mechanism behind seed 004.
 * Data of a translated page then takes page_bytes / link rate of the link, in page order;
 * an engine finishes when its last page has crossed the link.
 */
#ifndef IOMMULAB_DMA_ENGINE_H
#define IOMMULAB_DMA_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/atc.h>
#include <iommulab/iommu_arch.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ilab_dma_engine_cfg {
	const char *name;           /* for the simulator's statistics */
	struct ilab_iommu_unit *unit; /* the IOMMU unit the device's root port leads to
				       * (ilab_board_iommu_unit) */
	int node;                   /* the unit's node: the engine's slots run there */
	uint32_t sid;               /* the device's requester id (StreamID, source-id) */
	struct ilab_atc *atc;       /* its ATC (engines of one device may share one) */
	uint64_t iova;              /* region moved, cyclically: page-aligned base ... */
	uint64_t region_bytes;      /* ... and size (a multiple of the page size) */
	uint64_t bytes;             /* total bytes to move (passes over the region) */
	bool write;                 /* device writes memory (receive) or reads it (transmit) */
	unsigned page_shift;        /* translation unit (the ATS STU): 12 for 4 KiB */
	double link_bytes_per_ns;   /* this direction's link rate (GB/s = bytes/ns) */
	unsigned max_outstanding;   /* ATS Translation Requests in flight, >= 1 */
	uint64_t ats_round_trip_ns;
};

struct ilab_dma_engine_result {
	uint64_t start_ns, end_ns;  /* virtual time of the first request and of the last byte */
	uint64_t bytes, pages;
	uint64_t atc_hits, ats_requests;
	uint64_t ats_refused;       /* UR/CA, or a completion without the access asked for */
	uint64_t ats_ns;            /* sum of the requests' latencies */
};

/* Run n engines concurrently in the active simulator, from the set-up context (after
 * plat_init with the sim engine). Each engine uses max_outstanding simulator agents, and the
 * simulator has at most 256 agents in its life (the IOMMU units' included): run many bytes in one
 * call rather than many calls. Returns 0 with res[i] filled; -EINVAL (bad configuration,
 * or not in simulation), -ENOMEM, -ENOSPC (more slot agents than the simulator has left),
 * -EIO (an ATS request was refused: the device would stop; err says which). A simulator failure (deadlock, time limit) shows in ilab_sim_error(). */
int ilab_dma_engines_run(const struct ilab_dma_engine_cfg *cfg, unsigned n,
			 struct ilab_dma_engine_result *res, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_DMA_ENGINE_H */
