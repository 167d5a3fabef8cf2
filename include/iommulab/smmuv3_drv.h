/* smmuv3_drv.h — the Arm SMMUv3 driver (Linux drivers/iommu/arm/arm-smmu-v3): probe from the ID
 * registers, stream table / CD / queues in coherent memory, the lock-free command-queue producer,
 * TLB invalidation, and the ilab_iommu_ops that the IOMMU core calls.
 * It is not the hardware model (smmuv3.h) and not the IOMMU core (iommu.h): it meets the model
 * only through MMIO (struct plat_mmio) and simulated physical memory (struct ilab_mem).
 */
#ifndef IOMMULAB_SMMUV3_DRV_H
#define IOMMULAB_SMMUV3_DRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/iommu.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a CMD_SYNC's completion is detected (Linux §5.3). */
enum ilab_smmu_sync_mode {
	ILAB_SMMU_SYNC_AUTO = 0, /* MSI polling if IDR0.MSI and IDR0.COHACC, else CONS polling */
	ILAB_SMMU_SYNC_MSI,      /* CS=SIG_IRQ, MSI written over the CMD_SYNC's own slot */
	ILAB_SMMU_SYNC_CONS,     /* CS=SIG_SEV, poll the CMDQ_CONS register */
};

/* Whether to use SMMUv3.3 Enhanced Command queues (IDR1.ECMDQ), the Zhen Lei series (§6). */
enum ilab_smmu_ecmdq_mode {
	ILAB_SMMU_ECMDQ_AUTO = 0, /* use them when the SMMU has them, else the main queue */
	ILAB_SMMU_ECMDQ_ON,       /* use them; probe fails with -ENODEV when they are unusable */
	ILAB_SMMU_ECMDQ_OFF,      /* main queue only, even if the SMMU has ECMDQs */
};

/* Whether to use an NVIDIA Tegra241 CMDQV (Linux 6.12 tegra241-cmdqv.c). */
enum ilab_smmu_cmdqv_mode {
	ILAB_SMMU_CMDQV_AUTO = 0, /* use it when firmware describes one (cmdqv_offset), else not */
	ILAB_SMMU_CMDQV_ON,       /* use it; probe fails with -ENODEV when there is none */
	ILAB_SMMU_CMDQV_OFF,      /* main queue only (Linux's disable_cmdqv / bypass_vcmdq) */
};

/* How commands are inserted into the main command queue (seed 001 was measured before 5.4). */
enum ilab_smmu_cmdq_mode {
	ILAB_SMMU_CMDQ_LOCKFREE = 0, /* Linux >= 5.4: lock-free multi-producer insertion (§5.4) */
	ILAB_SMMU_CMDQ_SPINLOCK,     /* Linux <= 5.3: one command at a time under cmdq.lock, a PROD
				      * write per command; CMD_SYNC completion by an MSI to one
				      * shared sync_count word, polled outside the lock */
};

/* Called after every sync of the hitless entry writer (CFGI + CMD_SYNC completed), with the
 * entry as the SMMU may now see it. For tests: translate between the steps. */
typedef void (*ilab_smmu_entry_hook)(void *ctx, bool is_ste, uint32_t sid, const uint64_t ent[8]);

struct ilab_smmu_drv_opts {
	unsigned cmdq_log2;     /* 0: Linux's choice, min(IDR1.CMDQS, 16); else min(this, CMDQS,
				 * 16); a queue of 2^6 entries or fewer fails probe (-ENODEV: a
				 * batch must fit), more than 19 is -EINVAL */
	unsigned evtq_log2;     /* 0: min(IDR1.EVENTQS, 15); else min(this, EVENTQS, 15) */
	enum ilab_smmu_sync_mode sync_mode;
	bool no_ril;            /* do not use range invalidation even if IDR3.RIL */
	bool skip_prefetch;     /* no CMD_PREFETCH_CONFIG after STE writes (Hi161x quirk) */
	ilab_smmu_entry_hook entry_hook;
	void *entry_hook_ctx;
	enum ilab_smmu_ecmdq_mode ecmdq;
	unsigned ecmdq_log2;    /* 0: the series' size, 2^(8 + log2 CPUs per queue) capped by
				 * IDR1.CMDQS; else min(this, CMDQS), at least 7 */
	enum ilab_smmu_cmdq_mode cmdq_mode; /* main queue only; ECMDQs always lock-free */
	enum ilab_smmu_cmdqv_mode cmdqv;
	uint64_t cmdqv_offset;  /* where the CMDQV's registers are in the MMIO window, as firmware
				 * (ACPI NVDA200C) says; 0: no CMDQV. The board fills it in. */
	unsigned cmdqv_log2;    /* entries of each VCMDQ, log2; 0: 12 (Linux asks for 19) */
	bool cmdq_fair_lock;    /* the cmdq shared/exclusive lock as Linux since 2026-01 ("Improve
				 * CMDQ lock fairness and efficiency"); false: as before */
	bool pgtable_split_blocks; /* io-pgtable cfg.split_blocks: a partial unmap of a block
				    * splits it (Linux <= 6.12); false: refused (>= 6.13) */
	/* Spinlock queue only (cmdq_mode SPINLOCK): the CMD_SYNC of Linux 4.15-4.19, whose MSI
	 * number was taken with an atomic before the queue lock and which was inserted even
	 * when the previous command was a CMD_SYNC; false: 4.20-5.3's (number under the lock,
	 * back-to-back CMD_SYNCs merged). Linux 4.14 had no MSI completion: sync_mode CONS. */
	bool cmdq_sync_unordered;
};

/* Probe the SMMU behind `mmio` (registers as in smmuv3.h), allocate its tables and queues with
 * ilab_mem_alloc_coherent(mem, node, ...), reset and enable it, and return the IOMMU instance.
 * opts may be NULL (defaults). Returns 0, -EINVAL (bad arguments), -ENODEV (the ID registers
 * describe an SMMU this driver cannot use), -ENOMEM, or -ETIMEDOUT (no CR0ACK).
 * ilab_smmu_drv_strerror() names the cause. */
int ilab_smmu_drv_probe(struct plat_mmio *mmio, struct ilab_mem *mem, int node,
			const struct ilab_smmu_drv_opts *opts, struct ilab_iommu **out);
/* Disable the SMMU and free everything. Domains and devices must have been released. */
void ilab_smmu_drv_remove(struct ilab_iommu *iommu);
const char *ilab_smmu_drv_strerror(void);

/* What probe found and chose. */
struct ilab_smmu_drv_info {
	unsigned sid_bits, ssid_bits, asid_bits, oas, ias;
	uint64_t pgsize_bitmap;
	bool ril, msi, sev, coherent, strtab_2lvl;
	unsigned cmdq_log2, evtq_log2;
	enum ilab_smmu_sync_mode sync_mode; /* resolved: MSI or CONS */
	ilab_pa_t cmdq_pa, evtq_pa, strtab_pa;
};
int ilab_smmu_drv_get_info(struct ilab_iommu *iommu, struct ilab_smmu_drv_info *info);

/* Counters, summed over CPUs. */
struct ilab_smmu_drv_stats {
	uint64_t cmds;            /* commands written to the queue (CMD_SYNCs included) */
	uint64_t issues;          /* arm_smmu_cmdq_issue_cmdlist calls */
	uint64_t batches;         /* owner batches: CMDQ_PROD register writes */
	uint64_t syncs;           /* CMD_SYNCs */
	uint64_t sync_wait_ns;    /* time spent waiting for CMD_SYNC completion */
	uint64_t cmpxchg_retries; /* failed reservations of queue space */
	uint64_t queue_full_waits;/* times a producer had to wait for space */
	uint64_t sync_timeouts;
	uint64_t space_timeouts;  /* issues that found no room within the timeout: nothing of
				   * them was written (Linux returns -ETIMEDOUT, and its batch_add
				   * ignores that: those commands are dropped) */
	uint64_t cmds_refused;    /* the commands of those issues, CMD_SYNCs included */
	uint64_t by_opcode[256];  /* commands written, per opcode */
};
int ilab_smmu_drv_get_stats(struct ilab_iommu *iommu, struct ilab_smmu_drv_stats *st);
void ilab_smmu_drv_clear_stats(struct ilab_iommu *iommu);

/* Issue raw commands (2 dwords each) through the producer, optionally followed by a CMD_SYNC
 * that is waited for. For tests and benchmarks of the queue itself. Returns 0, -EINVAL or
 * -ETIMEDOUT. */
int ilab_smmu_drv_issue_cmds(struct ilab_iommu *iommu, const uint64_t *cmds, unsigned n,
			     bool sync);
/* Build a TLBI_NH_VA (leaf, one granule, no range) or TLBI_NH_ASID command, for the same. */
void ilab_smmu_drv_build_tlbi_va(uint64_t cmd[2], uint16_t asid, uint64_t iova);
void ilab_smmu_drv_build_tlbi_asid(uint64_t cmd[2], uint16_t asid);

/* Invalidate [iova, iova+size) of a paging domain, leaf granule `granule`, then CMD_SYNC (what
 * iotlb_sync does with a gather). Returns 0 or a negative errno. */
int ilab_smmu_drv_inv_range(struct ilab_iommu_domain *domain, uint64_t iova, size_t size,
			    size_t granule);
/* The ASID of a paging domain on the SMMU that allocated it, or -EINVAL. */
int ilab_smmu_drv_domain_asid(const struct ilab_iommu_domain *domain);

/* A paging domain may be attached to devices behind several SMMUs of this driver when
 * ops->domain_compatible says so (same memory, page sizes, ias/oas that fit, coherent walks):
 * every SMMU's CD points at the domain's one page table, each SMMU with an ASID of its own,
 * and every invalidation of the domain goes to each of them with its own CMD_SYNC.
 * asid_on: the domain's ASID on `iommu` (-ENOENT: not attached there — the allocating SMMU
 * always has one, attached or not; -EINVAL: not ours).
 * ttbr: the physical address of the page table's root (0 if not an SMMUv3 paging domain).
 * nr_smmus: the SMMUs that have at least one master attached to the domain. */
int ilab_smmu_drv_domain_asid_on(const struct ilab_iommu_domain *domain,
				 const struct ilab_iommu *iommu);
ilab_pa_t ilab_smmu_drv_domain_ttbr(const struct ilab_iommu_domain *domain);
unsigned ilab_smmu_drv_domain_nr_smmus(const struct ilab_iommu_domain *domain);

/* Event queue: copy up to max records (4 dwords each) and consume them. Returns the number
 * read; *lost (may be NULL) is set when the SMMU reported an overflow since the last call. */
unsigned ilab_smmu_drv_read_events(struct ilab_iommu *iommu, uint64_t (*recs)[4], unsigned max,
				   bool *lost);

/* ECMDQs (docs/smmuv3-driver.md "Enhanced command queues"). Queues are numbered like the
 * model's smmu_get_cmdq_stats: 0 = SMMU_CMDQ, 1 + n = ECMDQ n. */
struct ilab_smmu_drv_ecmdq_info {
	unsigned hw_count;       /* ECMDQs the SMMU has (2^(IDR6.LOG2NUMP + LOG2NUMQ)), 0: none */
	unsigned enabled;        /* ECMDQs the driver enabled (0: every CPU uses the main queue) */
	unsigned log2size;       /* entries of each enabled ECMDQ, log2 */
	bool shared;             /* some ECMDQ serves several CPUs (fewer queues than CPUs) */
	const char *why_not;     /* when enabled == 0: why (option off, no hardware, ...) */
};
int ilab_smmu_drv_get_ecmdq_info(struct ilab_iommu *iommu, struct ilab_smmu_drv_ecmdq_info *info);
/* Tegra241 CMDQV (docs/smmuv3-driver.md "Tegra241 CMDQV"). VCMDQ n is queue 1 + n of the
 * model's smmu_get_cmdq_stats. */
struct ilab_smmu_drv_cmdqv_info {
	unsigned vcmdqs, vintfs; /* what PARAM reports; 0: no CMDQV in use */
	unsigned lvcmdqs;        /* VCMDQs given to VINTF0, the kernel's: vcmdqs / vintfs */
	unsigned log2size;
	bool hyp_own;            /* VINTF0.HYP_OWN as read back */
	const char *why_not;     /* when not in use: why */
};
int ilab_smmu_drv_get_cmdqv_info(struct ilab_iommu *iommu, struct ilab_smmu_drv_cmdqv_info *info);

/* The queue CPU `cpu` issues a TLBI_NH_VA to: 0 (the main queue) or 1 + n (ECMDQ n, or with a
 * CMDQV the VCMDQ n); -EINVAL for a bad argument. */
int ilab_smmu_drv_cpu_queue(struct ilab_iommu *iommu, unsigned cpu);

struct ilab_smmu_drv_queue_stats {
	unsigned cpus;           /* CPUs assigned (main queue: those without an ECMDQ) */
	bool exclusive;          /* one CPU's alone: uncontended insertion */
	unsigned log2size;
	uint64_t entries;        /* entries made visible to the SMMU (CMD_SYNCs included) */
	uint64_t prod_writes;    /* PROD register writes */
	uint64_t errors;         /* command errors handled: an ECMDQ's CONS.ERR toggles, the main
				  * queue's GERROR.CMDQ_ERR (docs/smmuv3-driver.md) */
	uint64_t err_ill, err_abt; /* of which CERROR_ILL (command skipped), CERROR_ABT (retried) */
	uint64_t lock_exclusive;   /* the cmdq lock taken exclusive (to read CONS near full) */
	uint64_t lock_shared_waits; /* a CMD_SYNC issuer found it held exclusive and waited */
	uint64_t lock_shared_wait_ns, lock_shared_wait_max_ns; /* ... how long: sum, longest */
};
/* Counters of queue q (0 = main, 1 + n = ECMDQ n); -EINVAL for a bad queue. */
int ilab_smmu_drv_get_queue_stats(struct ilab_iommu *iommu, unsigned q,
				  struct ilab_smmu_drv_queue_stats *st);

/* Read back the STE of a StreamID as the SMMU would (8 dwords); -ENOENT if not reachable. */
int ilab_smmu_drv_read_ste(struct ilab_iommu *iommu, uint32_t sid, uint64_t ste[8]);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_SMMUV3_DRV_H */
