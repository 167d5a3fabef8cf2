/* board.h — the machine assembled from a topology: simulated memory (one range per NUMA node,
 * CMA areas), one IOMMU unit per topology IOMMU (its architecture's model, iommu_arch.h:
 * SMMUv3 or VT-d) with its MMIO window and its polling agent, device DMA through the models,
 * and the ilab_dev of every topology device.
 * It is not a driver: each unit's driver is probed on top of it (ilab_board_probe_drivers is a
 * convenience that does exactly what a platform's probe would), and not a scheduler (agents are
 * plat agents: threads natively).
 *
 * Units are numbered as the topology's IOMMU list (topo.h, still called its SMMUs). The
 * functions named after SMMUs (ilab_board_nr_smmus, _smmu, _smmu_node, _dev_smmu, _smmu_json,
 * _smmus_json, _probe_iommus) are thin wrappers over the neutral ones, kept for their callers.
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
	/* Which architecture every unit has (an ilab_iommu_arch_find name: "smmuv3", "vtd"; the
	 * profile's iommu: key); NULL or "" = each unit's own (topology: ilab_smmu_desc.arch). */
	const char *iommu_arch;
	union { /* 0 = every topology unit; else only those with bit i set get a model, an agent
		 * and a driver (others read as absent) */
		uint64_t iommu_mask;
		uint64_t smmu_mask; /* its older name */
	};
	unsigned process_batch;     /* commands per queue-consumer call; 0 = 256 */

	/* ---- SMMUv3 units (board_smmuv3.c) ---- */
	const struct smmu_config *smmu_cfg; /* NULL = smmu_config_default() */
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
	unsigned smmu_inv_in_flight; /* TLBIs handed to the invalidation engine, at most; 0 = any */

	/* ---- VT-d units (board_vtd.c) ---- */
	const struct vtd_config *vtd_cfg; /* NULL = vtd_config_default() */
	/* What its work costs in simulation beyond its memory accesses, from the profile's vtd:
	 * section (plat_charge_ns: nothing natively). */
	uint64_t vtd_desc_ns;         /* each invalidation descriptor, as it starts executing */
	uint64_t vtd_wait_ns;         /* + each wait descriptor, before its status write */
	uint64_t vtd_iotlb_lookup_ns; /* each request translated */
	uint64_t vtd_walk_ns;         /* + each IOTLB miss that walks the tables */
	unsigned vtd_walkers;         /* page walkers per unit; 0 = no limit */
	unsigned vtd_entry_read_fetches; /* serial memory fetches per paging-entry read; 0 = 1 */
	unsigned vtd_outstanding;     /* translation requests a unit holds at once; 0 = no limit */
	/* its IOTLB and paging-structure caches (entries; ways for the IOTLB), over vtd_cfg's
	 * (or the default's); 0 = as there */
	unsigned vtd_iotlb_entries, vtd_iotlb_ways, vtd_pml4e_entries, vtd_pdpe_entries,
		 vtd_pde_entries;
};

struct ilab_board;
struct ilab_iommu_arch;
struct ilab_iommu_unit;
struct vtd_config;

/* Build the machine for `topo` (which must outlive the board). Agents are not running yet.
 * Returns 0, -EINVAL (bad options; err names the cause) or -ENOMEM. */
int ilab_board_create(const struct ilab_topo *topo, const struct ilab_board_opts *opts,
		      struct ilab_board **out, char *err, size_t errlen);
/* Start one agent per modelled unit (on the unit's node): it waits on its doorbell and runs
 * the architecture's queue consumer. Idempotent. Returns 0 or a negative errno (e.g. -ENOSYS
 * from plat). */
int ilab_board_start(struct ilab_board *b);
/* Stop the agents (idempotent). */
void ilab_board_stop(struct ilab_board *b);
/* Stop, remove probed drivers, free everything. NULL is fine. */
void ilab_board_destroy(struct ilab_board *b);

struct ilab_mem *ilab_board_mem(struct ilab_board *b);
const struct ilab_topo *ilab_board_topo(const struct ilab_board *b);
/* ---- IOMMU units, whatever their architecture ---- */

/* The topology's IOMMU units, modelled or not. */
unsigned ilab_board_nr_iommus(const struct ilab_board *b);
/* Unit i (its architecture, node, name and model state), NULL for a bad index or a unit the
 * mask left out. */
struct ilab_iommu_unit *ilab_board_iommu_unit(struct ilab_board *b, unsigned i);
/* Unit i's architecture (modelled or not), NULL for a bad index. */
const struct ilab_iommu_arch *ilab_board_iommu_arch(const struct ilab_board *b, unsigned i);
/* Unit i's node (modelled or not), or -EINVAL for a bad index. */
int ilab_board_iommu_node(const struct ilab_board *b, unsigned i);
/* Unit i's MMIO window and its size: NULL / 0 for a bad index or a unit left out. */
struct plat_mmio *ilab_board_mmio(struct ilab_board *b, unsigned i);
uint64_t ilab_board_mmio_size(struct ilab_board *b, unsigned i);

/* Statistics of unit i as a jansson object from its architecture (new reference; NULL for a
 * bad index or a unit that is not modelled). For an SMMUv3: node, caches (per cache:
 * capacity, lookups, hits, misses, fills, evictions, invalidations, hit_rate_ppm), cmdq and
 * ecmdqs (commands consumed, by opcode), model (translations, TLB hits, faults, events, ATS),
 * driver (what the driver issued). Read it with the agents idle. docs/result-schema.md lists
 * the keys. */
struct json_t;
struct json_t *ilab_board_iommu_json(struct ilab_board *b, unsigned i);
/* The same for every modelled unit, keyed by its topology name ("smmu2"). */
struct json_t *ilab_board_iommus_json(struct ilab_board *b);

/* Probe each modelled unit's driver (its architecture's probe; the board must be started:
 * probe issues commands). drv_opts is the driver options struct of architecture `arch`
 * (struct ilab_smmu_drv_opts for "smmuv3") and goes to that architecture's units only; the
 * others probe with their driver's defaults. Returns 0, -EINVAL (NULL board), -EAGAIN (the
 * board is not started) or the first probe error (already probed ones stay), whose cause
 * ilab_board_probe_strerror() names. */
int ilab_board_probe_drivers(struct ilab_board *b, const char *arch, const void *drv_opts);
const char *ilab_board_probe_strerror(void);
/* Unit i's driver instance once probed, else NULL. */
struct ilab_iommu *ilab_board_iommu(struct ilab_board *b, unsigned i);

/* ---- the SMMU-named forms (wrappers, board_smmu_names.c) ---- */

unsigned ilab_board_nr_smmus(const struct ilab_board *b);          /* nr_iommus */
/* SMMU i's model: NULL for a bad index, a unit left out, or a unit that is not an SMMUv3. */
struct smmu *ilab_board_smmu(struct ilab_board *b, unsigned i);
int ilab_board_smmu_node(const struct ilab_board *b, unsigned i);  /* iommu_node */
struct json_t *ilab_board_smmu_json(struct ilab_board *b, unsigned i); /* iommu_json */
struct json_t *ilab_board_smmus_json(struct ilab_board *b);        /* iommus_json */
/* ilab_board_probe_drivers(b, "smmuv3", opts) */
int ilab_board_probe_iommus(struct ilab_board *b, const struct ilab_smmu_drv_opts *opts);

/* The devices of the topology, one struct ilab_dev each (name, node, sid, dma_bits 48, iommu =
 * its unit's driver instance once probed). The array belongs to the board. */
int ilab_board_devices(struct ilab_board *b, struct ilab_dev **devs, unsigned *n);
/* The board device with this topology name ("nic0", "gpu2"), or NULL. */
struct ilab_dev *ilab_board_find_dev(struct ilab_board *b, const char *name);
/* The unit index of a board device, or -EINVAL (ilab_board_dev_smmu: its older name). */
int ilab_board_dev_iommu(const struct ilab_board *b, const struct ilab_dev *dev);
int ilab_board_dev_smmu(const struct ilab_board *b, const struct ilab_dev *dev);

/* What stopped a DMA: the architecture's own code for it, whether the unit recorded it, and
 * where. */
struct ilab_board_fault {
	uint8_t event;        /* SMMUv3: enum smmu_event_type (SMMU_EVT_NONE for a silent
			       * abort); VT-d: enum vtd_fault_reason */
	bool recorded;        /* SMMUv3: reached the event queue; VT-d: a fault record */
	uint64_t iova;        /* address that faulted */
};

/* Device DMA of len bytes at iova by requester id sid (SMMUv3: StreamID, and SubstreamID ssid
 * if ssv; VT-d: source-id) behind unit `unit`: translated page by page by its architecture,
 * copied with ilab_mem_read/write. Returns 0; -EIO when the unit aborted the transaction
 * (fault filled in if non-NULL); -EFAULT when the output address is not memory; -ENODEV when
 * that unit is not modelled (mask); -EINVAL for bad arguments. Bytes before the faulting page
 * have been transferred. */
int ilab_board_dma_read(struct ilab_board *b, unsigned unit, uint32_t sid, uint32_t ssid,
			bool ssv, uint64_t iova, void *buf, size_t len,
			struct ilab_board_fault *fault);
int ilab_board_dma_write(struct ilab_board *b, unsigned unit, uint32_t sid, uint32_t ssid,
			 bool ssv, uint64_t iova, const void *buf, size_t len,
			 struct ilab_board_fault *fault);

/* ATS: where the units' ATC invalidations go (SMMUv3 CMD_ATC_INV, VT-d device-TLB invalidate
 * descriptors). The board forwards each ATS Invalidation Request (IHI 0070 §4.5.1) to fn with
 * the unit index and the request's fields, synchronously while the command executes, so a
 * later CMD_SYNC (wait descriptor) completes only after the devices' ATCs dropped the range.
 * size_log2 is the span's log2 (64: everything). Without a handler ATC_INV does
 * nothing (a device without an ATC). One handler per board; NULL unregisters. Call it before
 * ilab_board_start (the agents read it without a lock). */
typedef void (*ilab_board_atc_inv_fn)(void *ctx, unsigned unit, uint32_t sid,
				      uint32_t ssid, bool ssv, uint64_t addr, unsigned size_log2,
				      bool global);
void ilab_board_set_atc_inv(struct ilab_board *b, ilab_board_atc_inv_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_BOARD_H */
