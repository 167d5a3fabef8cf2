/* board.h — the machine assembled from a topology: simulated memory (one range per NUMA node,
 * CMA areas), one SMMUv3 model per topology SMMU with its MMIO window and its polling agent,
 * device DMA through the models, and the ilab_dev of every topology device.
 * It is not a driver: the SMMUv3 driver is probed on top of it (ilab_board_probe_iommus is a
 * convenience that does exactly what a platform's probe would), and not a scheduler (agents are
 * plat agents: threads natively).
 */
#ifndef IOMMULAB_BOARD_H
#define IOMMULAB_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/iommu.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/topo.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ilab_board_opts {
	uint64_t node_bytes;        /* per node; 0 = 4 GiB (sparse: untouched memory is free) */
	enum ilab_cma_mode cma;     /* coherent memory placement (seed 000) */
	int cma_global_node;        /* node of the global area (Linux: 0) */
	uint64_t cma_global_bytes;  /* 0 = 64 MiB when cma != NONE */
	uint64_t cma_node_bytes;    /* 0 = 64 MiB for PERNUMA / LISTED */
	uint64_t cma_nodes_mask;    /* LISTED */
	const struct smmu_config *smmu_cfg; /* NULL = smmu_config_default() */
	unsigned process_batch;     /* commands per smmu_process_commands call; 0 = 256 */
	uint64_t smmu_mask;         /* 0 = every topology SMMU; else only those with bit i set get
				     * a model, an agent and a driver (others read as absent) */
	/* What the model's work costs in simulation (plat_charge_ns: nothing natively, where the
	 * model's code takes real time). From the machine profile's smmu: section. */
	uint64_t smmu_command_ns;   /* each command consumed, once its entry has been read */
	uint64_t smmu_sync_ns;      /* extra per CMD_SYNC, before its completion is signalled */
	uint64_t smmu_tlbi_sync_ns; /* least wait of a CMD_SYNC with TLBIs since the previous one */
	uint64_t smmu_tlbi_ns;      /* each TLBI in the invalidation engine (0: none, see sim.h) */
	uint64_t smmu_tlbi_scan_ns; /* a TLBI by ASID/VMID/all or range there; 0 = smmu_tlbi_ns */
	uint64_t smmu_tlbi_entry_ns;/* + each TLB or walk-cache entry a TLBI invalidated */
	uint64_t smmu_tlb_lookup_ns;/* each page translated for device DMA */
	unsigned smmu_cmd_readahead; /* entries one command-queue read fetches (up to PROD); 0 = 64 */
	bool smmu_sync_all_queues;  /* a CMD_SYNC waits for every queue's TLBIs, not its own's */
};

struct ilab_board;

/* Build the machine for `topo` (which must outlive the board). Agents are not running yet.
 * Returns 0, -EINVAL (bad options; err names the cause) or -ENOMEM. */
int ilab_board_create(const struct ilab_topo *topo, const struct ilab_board_opts *opts,
		      struct ilab_board **out, char *err, size_t errlen);
/* Start one model agent per SMMU (on the SMMU's node): it waits on its doorbell and consumes
 * commands. Idempotent. Returns 0 or a negative errno (e.g. -ENOSYS from plat). */
int ilab_board_start(struct ilab_board *b);
/* Stop the agents (idempotent). */
void ilab_board_stop(struct ilab_board *b);
/* Stop, remove probed drivers, free everything. NULL is fine. */
void ilab_board_destroy(struct ilab_board *b);

struct ilab_mem *ilab_board_mem(struct ilab_board *b);
const struct ilab_topo *ilab_board_topo(const struct ilab_board *b);
unsigned ilab_board_nr_smmus(const struct ilab_board *b);
/* SMMU i's model and MMIO window: NULL for a bad index or an SMMU that smmu_mask left out. */
struct smmu *ilab_board_smmu(struct ilab_board *b, unsigned i);
struct plat_mmio *ilab_board_mmio(struct ilab_board *b, unsigned i);
/* SMMU i's node (modelled or not), or -EINVAL for a bad index. */
int ilab_board_smmu_node(const struct ilab_board *b, unsigned i);

/* Statistics of SMMU i as a jansson object (new reference; NULL for a bad index or an SMMU
 * that is not modelled): node, caches (per cache: capacity, lookups, hits, misses, fills,
 * evictions, invalidations, hit_rate_ppm), cmdq and ecmdqs (commands consumed, by opcode),
 * model (translations, TLB hits, faults, events, ATS), driver (what the driver issued).
 * Read it with the agents idle. docs/result-schema.md lists the keys. */
struct json_t;
struct json_t *ilab_board_smmu_json(struct ilab_board *b, unsigned i);
/* The same for every modelled SMMU, keyed by its topology name ("smmu2"). */
struct json_t *ilab_board_smmus_json(struct ilab_board *b);

/* Probe the SMMUv3 driver on every modelled SMMU (the board must be started: probe issues
 * commands). Returns 0, -EINVAL (NULL board), -EAGAIN (the board is not started) or the first
 * probe error (already probed ones stay). */
int ilab_board_probe_iommus(struct ilab_board *b, const struct ilab_smmu_drv_opts *opts);
struct ilab_iommu *ilab_board_iommu(struct ilab_board *b, unsigned i);

/* The devices of the topology, one struct ilab_dev each (name, node, sid, dma_bits 48, iommu =
 * its SMMU's driver instance once probed). The array belongs to the board. */
int ilab_board_devices(struct ilab_board *b, struct ilab_dev **devs, unsigned *n);
/* The SMMU index of a board device, or -EINVAL. */
int ilab_board_dev_smmu(const struct ilab_board *b, const struct ilab_dev *dev);

/* What stopped a DMA. */
struct ilab_board_fault {
	uint8_t event;        /* enum smmu_event_type; SMMU_EVT_NONE for a silent abort */
	bool recorded;        /* the event reached the event queue */
	uint64_t iova;        /* address that faulted */
};

/* Device DMA of len bytes at iova by StreamID sid (and SubstreamID ssid if ssv) behind SMMU
 * smmu_index: translated page by page with smmu_translate, copied with ilab_mem_read/write.
 * Returns 0; -EIO when the SMMU aborted the transaction (fault filled in if non-NULL);
 * -EFAULT when the output address is not memory; -ENODEV when that SMMU is not modelled
 * (smmu_mask); -EINVAL for bad arguments. Bytes before the
 * faulting page have been transferred. */
int ilab_board_dma_read(struct ilab_board *b, unsigned smmu_index, uint32_t sid, uint32_t ssid,
			bool ssv, uint64_t iova, void *buf, size_t len,
			struct ilab_board_fault *fault);
int ilab_board_dma_write(struct ilab_board *b, unsigned smmu_index, uint32_t sid, uint32_t ssid,
			 bool ssv, uint64_t iova, const void *buf, size_t len,
			 struct ilab_board_fault *fault);

/* ATS: where the SMMUs' CMD_ATC_INV go. The board forwards each ATS Invalidation Request
 * (IHI 0070 §4.5.1) to fn with the SMMU index and the request's fields, synchronously while the
 * command executes, so a later CMD_SYNC completes only after the devices' ATCs dropped the
 * range. size_log2 is the span's log2 (64: everything). Without a handler ATC_INV does
 * nothing (a device without an ATC). One handler per board; NULL unregisters. Call it before
 * ilab_board_start (the agents read it without a lock). */
typedef void (*ilab_board_atc_inv_fn)(void *ctx, unsigned smmu_index, uint32_t sid,
				      uint32_t ssid, bool ssv, uint64_t addr, unsigned size_log2,
				      bool global);
void ilab_board_set_atc_inv(struct ilab_board *b, ilab_board_atc_inv_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_BOARD_H */
