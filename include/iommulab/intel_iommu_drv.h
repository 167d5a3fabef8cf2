/* intel_iommu_drv.h — the Intel VT-d IOMMU driver (Linux drivers/iommu/intel/: iommu.c, dmar.c,
 * and the flush policy that moved to cache.c in 6.10), legacy (second-stage) mode: probe of one
 * DMAR unit, root/context tables, domains with a domain id per unit (iommu_array),
 * domain_update_iommu_cap, second-stage page tables, qi_submit_sync, page- and
 * domain-selective IOTLB flushes, device-TLB flushes for ATS devices, and the fault handler.
 * It is not the hardware model (vtd.h): it meets the unit only through MMIO (struct plat_mmio)
 * and simulated physical memory (struct ilab_mem). See docs/intel-iommu-driver.md.
 */
#ifndef IOMMULAB_INTEL_IOMMU_DRV_H
#define IOMMULAB_INTEL_IOMMU_DRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/iommu.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a domain's page-table pages go (its nid). */
enum ilab_intel_nid_policy {
	/* Linux 6.3 (default): nid starts as NUMA_NO_NODE, so page-table pages come from the
	 * node of the CPU that allocates them (the one that maps); domain_update_iommu_cap falls
	 * back to the node of a device already on the domain's list, which it only sees from
	 * the second unit's attach on; a unit's last detach resets nid to NUMA_NO_NODE. The
	 * node argument of domain_alloc is ignored, as Linux's domain_alloc has none. */
	ILAB_INTEL_NID_MAINLINE = 0,
	/* Seed 004's patch: as mainline, plus domain_attach_iommu sets nid = iommu->node on
	 * every new (domain, unit) attach: the last unit attached wins. */
	ILAB_INTEL_NID_UNIT_ON_ATTACH,
	/* iommulab's domain_alloc contract: the node argument (< 0: the allocating unit's node),
	 * never changed afterwards. Not Linux 6.3; Linux >= 6.11 paging_domain_alloc is close
	 * (nid = the first device's node). */
	ILAB_INTEL_NID_HINT,
};

struct ilab_intel_iommu_opts {
	enum ilab_intel_nid_policy nid_policy;
	bool no_superpage;      /* intel_iommu=sp_off: 4 KiB leaves only */
	/* Linux before upstream 6b38a108eeb3 (Oct 2025): qi_flush_iotlb masked the IH bit out
	 * of the descriptor's address, so a leaf-only unmap also dropped the unit's
	 * paging-structure caches. Off: IH reaches the descriptor (current Linux). */
	bool drop_ih;
	uint64_t fault_msi_addr;   /* FEADDR (0: 0xFEE00000, the x86 interrupt range) */
	uint32_t fault_msi_data;   /* FEDATA (the vector) */
	uint64_t qi_poll_slice_ns; /* qi_submit_sync: how long one poll of the status word
				    * waits before FSTS is read again (0: 1000 ns) */
	uint64_t qi_timeout_ns;    /* give up (-ETIMEDOUT) after this (0: 1 s) */
	/* Where dmar_fault's reports go (Linux pr_err with "DMAR: "): one line each, without
	 * the prefix and newline; NULL: stderr, prefixed. They are ratelimited as Linux's: at
	 * most fault_ratelimit_burst (0: 10) calls pass per fault_ratelimit_ns (0: 5 s). */
	void (*fault_report)(void *ctx, const char *line);
	void *fault_report_ctx;
	unsigned fault_ratelimit_burst;
	uint64_t fault_ratelimit_ns;
};

/* Probe the DMAR unit behind `mmio` (registers as in vtd.h): read VER/CAP/ECAP, enable queued
 * invalidation (a 256-entry queue on `node`), set up the domain-id bitmap, allocate the root
 * table on `node`, SRTP, global context-cache and IOTLB invalidation, fault interrupt (FEDATA,
 * FEADDR, FECTL unmasked), then TE. opts may be NULL. Returns 0, -EINVAL, -ENODEV (a unit this
 * driver cannot use: no QI, no usable SAGAW, MGAW < 39), -ENOMEM or -ETIMEDOUT (a GSTS
 * handshake did not complete). ilab_intel_iommu_strerror() names the cause. */
int ilab_intel_iommu_probe(struct plat_mmio *mmio, struct ilab_mem *mem, int node,
			   const struct ilab_intel_iommu_opts *opts, struct ilab_iommu **out);
/* Disable translation and QI and free the unit. Devices must have been released. */
void ilab_intel_iommu_remove(struct ilab_iommu *iommu);
const char *ilab_intel_iommu_strerror(void);
bool ilab_intel_iommu_is_ours(const struct ilab_iommu *iommu);

struct ilab_intel_iommu_info {
	uint32_t ver;
	uint64_t cap, ecap;
	unsigned seq_id;          /* index in every domain's iommu_array */
	unsigned agaw, msagaw;    /* Linux iommu->agaw / msagaw: 1 = 39, 2 = 48, 3 = 57 bits */
	unsigned mgaw, ndoms, mamv, nfr;
	unsigned superpage;       /* levels above 4K: 0, 1 (2M), 2 (2M and 1G) */
	bool coherent, psi, dev_iotlb, pass_through;
	ilab_pa_t root_pa, qi_desc_pa, qi_status_pa;
	unsigned qi_entries;
	uint32_t gsts;
};
int ilab_intel_iommu_get_info(struct ilab_iommu *iommu, struct ilab_intel_iommu_info *info);

struct ilab_intel_iommu_stats {
	uint64_t qi_submits;      /* qi_submit_sync calls */
	uint64_t descs[16];       /* descriptors submitted, by type (wait descriptors included) */
	uint64_t iotlb_psi, iotlb_dsi, iotlb_global; /* IOTLB invalidations by granularity */
	uint64_t psi_ih;          /* of the PSIs, those with IH = 1 */
	uint64_t devtlb_invs;     /* device-TLB invalidate descriptors */
	uint64_t iqe_recovered;   /* invalidation queue errors seen and cleared */
	uint64_t faults_handled;  /* fault records read and cleared by the fault handler */
	uint64_t fault_irqs;      /* fault event interrupts taken (ilab_intel_iommu_fault_irq) */
	uint64_t fault_overflows; /* handler calls that found FSTS.PFO (records were lost) */
	uint64_t fault_reports;   /* lines reported (status lines and records) */
	uint64_t fault_reports_missed; /* ratelimit refusals */
	uint64_t pgtable_alloc, pgtable_free; /* page-table pages */
};
int ilab_intel_iommu_get_stats(struct ilab_iommu *iommu, struct ilab_intel_iommu_stats *st);
void ilab_intel_iommu_clear_stats(struct ilab_iommu *iommu);

/* qi_submit_sync for tests: n 128-bit descriptors (2 qwords each) followed by a wait
 * descriptor, waited for. Returns 0, -EINVAL (an invalidation queue error hit one of them:
 * it was replaced by the wait descriptor and IQE cleared, as Linux does) or -ETIMEDOUT. */
int ilab_intel_iommu_qi_submit(struct ilab_iommu *iommu, const uint64_t *descs, unsigned n);

/* The fault handler (Linux dmar_fault): report FSTS, read every pending fault record from
 * FSTS.FRI on, clear each (F) and report it, then clear PFO/PPF; reports are ratelimited
 * (opts). Copies up to max records (recs may be NULL) and returns the number handled;
 * *overflow (may be NULL) reports FSTS.PFO. */
struct ilab_intel_fault {
	uint16_t sid;
	uint8_t reason;   /* VT-d fault reason (vtd.h enum vtd_fault_reason) */
	bool read;        /* T1: a read request */
	uint64_t addr;    /* faulting page address */
};
unsigned ilab_intel_iommu_handle_fault(struct ilab_iommu *iommu, struct ilab_intel_fault *recs,
				       unsigned max, bool *overflow);
/* The fault event's interrupt handler: the board calls it when the unit's fault event
 * message (FEADDR in the x86 interrupt range, FEDATA the vector) arrives. dmar_fault. */
void ilab_intel_iommu_fault_irq(struct ilab_iommu *iommu);

/* Declare that a probed device has a PCIe ATS capability (Linux info->ats_supported: the PCI
 * capability, the ACPI ATSR/SATC and ECAP.DT) with an invalidate queue depth qdep (0: 32),
 * and enable or disable it. Takes effect at its next attach: the context entry then carries
 * TT = 01 and every IOTLB flush of its domain is followed by a device-TLB invalidation.
 * Returns 0, -ENODEV (not probed by this driver), -EOPNOTSUPP (the unit has no ECAP.DT). */
int ilab_intel_iommu_set_ats(struct ilab_dev *dev, bool on, unsigned qdep);

/* A domain's view (tests). did_on: its domain id on `iommu` (-ENOENT: not attached there,
 * -EINVAL: not ours). nid: -1 for NUMA_NO_NODE. */
struct ilab_intel_domain_caps {
	unsigned agaw, gaw;        /* levels - 2 and address width */
	unsigned superpage;        /* 0, 1 (2M), 2 (2M + 1G) */
	bool coherent;
	uint64_t pgsize_bitmap;
	uint64_t aperture_end;
	unsigned nr_units;
	bool has_iotlb_device;
	int nid;
	ilab_pa_t pgd;
};
int ilab_intel_domain_get_caps(const struct ilab_iommu_domain *domain,
			       struct ilab_intel_domain_caps *caps);
int ilab_intel_domain_did_on(const struct ilab_iommu_domain *domain,
			     const struct ilab_iommu *iommu);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_INTEL_IOMMU_DRV_H */
