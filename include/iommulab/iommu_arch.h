/* iommu_arch.h — the seam between the board and an IOMMU architecture: one ops table per
 * architecture ("smmuv3", "vtd") says how the board makes a unit's hardware model, exposes its
 * register window, runs its queue consumer, translates device DMA through it, reports its
 * statistics and probes its driver; a registry finds a table by name.
 * It is not the IOMMU core's driver interface (iommu.h: struct ilab_iommu_ops, what the core
 * calls on a probed driver): an architecture's probe returns the struct ilab_iommu the core uses.
 *
 * Linux has the same split: iommu_ops for the core, and per-architecture platform glue (ACPI
 * IORT / DMAR parsing) that instantiates each unit. The board keeps what no architecture owns:
 * memory, CMA, devices, one agent and one doorbell per unit, and which unit translates which
 * device. Adding an architecture (AMD-Vi, RISC-V IOMMU) is its model's folder, an adapter that
 * fills one struct ilab_iommu_arch (src/hw/board_<arch>.c) and one line in src/hw/iommu_arch.c.
 */
#ifndef IOMMULAB_IOMMU_ARCH_H
#define IOMMULAB_IOMMU_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/board.h>
#include <iommulab/iommu.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ILAB_IOMMU_ARCH_NAME_MAX 16 /* "smmuv3", "vtd", with room */

/* One IOMMU unit of a board (an SMMU, a DMAR unit), as the architecture sees it. The board
 * fills everything but model before create; create sets model, destroy frees it. */
struct ilab_iommu_unit {
	struct ilab_board *board;
	struct ilab_mem *mem;          /* the board's simulated physical memory */
	const struct ilab_board_opts *opts; /* the board's options, for create only */
	const struct ilab_iommu_arch *arch;
	unsigned index;                /* in the topology's list of IOMMU units */
	int node;                      /* where the unit sits (its agent runs there) */
	const char *name;              /* topology name, e.g. "smmu2" */
	void *model;                   /* the architecture's per-unit state */
};

/* One page of device DMA for translate: the requester's id at its unit (SMMUv3 StreamID and
 * SubstreamID; VT-d source-id, ssid ignored) and the input address. */
struct ilab_iommu_dma_req {
	uint32_t sid;
	uint32_t ssid;
	bool ssv;
	uint64_t iova;
	bool write;
	/* a PCIe ATS Translation Request (SMMUv3 IHI 0070 §3.9.1, VT-d §4.2.3): the unit
	 * answers with the translation and its permissions and accesses nothing */
	bool ats;
};

/* Where that page goes: the output address and the log2 size of the translation that covers
 * it (12 when the architecture does not say, e.g. bypass). */
struct ilab_iommu_dma_rsp {
	uint64_t pa;
	unsigned page_shift;
	bool read, write;  /* what the translation permits (ATS: may be neither) */
};

struct json_t;

struct ilab_iommu_arch {
	const char *name;        /* registry and profile name: "smmuv3", "vtd" */
	const char *unit_kind;   /* how messages name one unit: "SMMU", "DMAR unit" */
	const char *driver_name; /* how messages name its driver: "SMMUv3", "VT-d" */
	const char *doorbell_name; /* the simulator's name of a unit's doorbell line */

	/* Make the unit's hardware model (u->model) from the board's options, wired to u->mem
	 * through host callbacks. 0, or a negative errno with *why naming the cause. */
	int (*create)(struct ilab_iommu_unit *u, const char **why);
	/* Free the model (after the agent stopped and the driver was removed). */
	void (*destroy)(struct ilab_iommu_unit *u);

	/* The register window: its size, and a CPU's access (offset within it, size 4 or 8).
	 * After each write the board rings the unit's doorbell, so the agent looks again. */
	uint64_t (*mmio_size)(struct ilab_iommu_unit *u);
	uint64_t (*mmio_read)(struct ilab_iommu_unit *u, uint64_t off, unsigned size);
	void (*mmio_write)(struct ilab_iommu_unit *u, uint64_t off, uint64_t value, unsigned size);

	/* The agent's work, run by the board's per-unit agent after every doorbell: consume
	 * whatever the unit's command / invalidation queues hold, until they are empty. */
	void (*consume)(struct ilab_iommu_unit *u);

	/* The board's DMA path: translate one page for a device (charging the lookup in
	 * simulation). 0 with rsp filled, or -EIO with fault filled (fault may be NULL). */
	int (*translate)(struct ilab_iommu_unit *u, const struct ilab_iommu_dma_req *req,
			 struct ilab_iommu_dma_rsp *rsp, struct ilab_board_fault *fault);

	/* The unit's statistics as a new JSON object (model counters, and the driver's when
	 * drv is not NULL). Read with the agent idle. */
	struct json_t *(*stats_json)(struct ilab_iommu_unit *u, struct ilab_iommu *drv);

	/* Probe the architecture's driver on the unit through its register window, as
	 * platform code would: drv_opts is the driver's own options struct (NULL: its
	 * defaults). 0 with *out set, or a negative errno with *why naming the cause. */
	int (*probe)(struct ilab_iommu_unit *u, struct plat_mmio *mmio, const void *drv_opts,
		     struct ilab_iommu **out, const char **why);
	/* Undo probe: registers only, no commands. */
	void (*remove)(struct ilab_iommu *iommu);

	/* Optional: the unit's interrupts reach its driver (Linux: the handlers its driver
	 * requested). The board's agent calls it, outside the model, after the adapter raised
	 * them with ilab_iommu_unit_raise_irq; `pending` is the OR of the raised bits (the
	 * adapter's own numbering). Only once the driver is probed (drv), never during remove. */
	void (*irq)(struct ilab_iommu_unit *u, struct ilab_iommu *drv, uint32_t pending);
};

/* The registered architecture called name, or NULL. */
const struct ilab_iommu_arch *ilab_iommu_arch_find(const char *name);
/* The registered architectures in order (i < ilab_iommu_arch_count()). */
unsigned ilab_iommu_arch_count(void);
const struct ilab_iommu_arch *ilab_iommu_arch_at(unsigned i);
/* Their names joined by sep ("smmuv3|vtd"), into buf; returns buf. For messages. */
char *ilab_iommu_arch_names(char *buf, size_t len, const char *sep);

/* A unit's write into the board's memory (a queue entry, an MSI, a wait status), for the
 * architectures' host callbacks: aligned 32/64-bit writes are single-copy atomic, as on a
 * real interconnect, since a CPU may be polling that very word, and in simulation the word
 * changes when the write arrives, not before any fiber behind that time has run; other writes
 * are charged by the line model and copied. Returns 0, or -1 when pa is not memory. */
int ilab_iommu_unit_mem_write(const struct ilab_iommu_unit *u, uint64_t pa, const void *buf,
			      size_t len);

/* An interrupt message from unit u arrived (bits: the adapter's numbering, e.g. which event):
 * remembered and the unit's agent woken, which hands it to arch->irq. Safe from any host
 * callback, with the model's lock held: nothing runs here. */
void ilab_iommu_unit_raise_irq(struct ilab_iommu_unit *u, uint32_t bits);

/* For an adapter's consume (arch->consume) that leaves work for later (a queue waiting on a
 * completion time): the unit's doorbell count now, and a wait until it moves past `seen` (a
 * register write) or until time `until` (plat_now_ns), whichever comes first. */
uint32_t ilab_iommu_unit_doorbell(struct ilab_iommu_unit *u);
void ilab_iommu_unit_idle_until(struct ilab_iommu_unit *u, uint32_t seen, uint64_t until);

/* The board's side, for adapters: forward an ATS / device-TLB invalidation from unit u to the
 * handler the board's user registered (ilab_board_set_atc_inv), synchronously. */
void ilab_iommu_unit_atc_inv(const struct ilab_iommu_unit *u, uint32_t sid, uint32_t ssid,
			     bool ssv, uint64_t addr, unsigned size_log2, bool global);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_IOMMU_ARCH_H */
