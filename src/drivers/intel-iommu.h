/* intel-iommu.h — the Intel VT-d driver's private state and register encodings (Linux
 * drivers/iommu/intel/iommu.h): struct intel_iommu (one DMAR unit), struct q_inval, struct
 * dmar_domain with its iommu_array, struct device_domain_info. Shared by intel-iommu.c (probe,
 * domains, attach), intel-iommu-dmar.c (queued invalidation, faults), intel-iommu-pgtable.c
 * (second-stage tables) and intel-iommu-cache.c (IOTLB and device-TLB flushes). Encodings are
 * the VT-d specification's (rev. 4.x, §9, §10.4, §6.5.2).
 */
#ifndef ILAB_DRIVERS_INTEL_IOMMU_H
#define ILAB_DRIVERS_INTEL_IOMMU_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "iommulab/intel_iommu_drv.h"
#include "iommulab/iommu.h"
#include "iommulab/mem.h"
#include "iommulab/plat.h"

#define NUMA_NO_NODE (-1)
#define VTD_PAGE_SHIFT 12
#define VTD_PAGE_SIZE (1ull << VTD_PAGE_SHIFT)
#define VTD_STRIDE_SHIFT 9
#define VTD_STRIDE_MASK (~0ull << VTD_STRIDE_SHIFT)
#define DEFAULT_DOMAIN_ADDRESS_WIDTH 57
#define MAX_AGAW_PFN_WIDTH 52 /* 64 - VTD_PAGE_SHIFT */

/* ---- registers (VT-d §10.4) ------------------------------------------------------------- */
#define DMAR_VER_REG 0x00
#define DMAR_CAP_REG 0x08
#define DMAR_ECAP_REG 0x10
#define DMAR_GCMD_REG 0x18
#define DMAR_GSTS_REG 0x1c
#define DMAR_RTADDR_REG 0x20
#define DMAR_CCMD_REG 0x28
/* The x86 interrupt address range (Linux IOAPIC_RANGE_START/END): never DMA space. */
#define IOAPIC_RANGE_START 0xfee00000ull
#define IOAPIC_RANGE_END 0xfeefffffull

#define DMAR_FSTS_REG 0x34
#define DMAR_FECTL_REG 0x38
#define DMAR_FEDATA_REG 0x3c
#define DMAR_FEADDR_REG 0x40
#define DMAR_FEUADDR_REG 0x44
#define DMAR_IQH_REG 0x80
#define DMAR_IQT_REG 0x88
#define DMAR_IQA_REG 0x90
#define DMAR_IQER_REG 0xb0

#define cap_nd(c) ((unsigned)((c) & 7))
#define cap_ndoms(c) (1u << (4 + 2 * cap_nd(c)))
#define cap_caching_mode(c) (((c) >> 7) & 1)
#define cap_sagaw(c) ((unsigned)(((c) >> 8) & 0x1f))
#define cap_mgaw(c) ((unsigned)(((c) >> 16) & 0x3f) + 1)
#define cap_fault_reg_offset(c) ((unsigned)(((c) >> 24) & 0x3ff) * 16)
#define cap_super_page_val(c) ((unsigned)(((c) >> 34) & 0xf))
#define cap_pgsel_inv(c) (((c) >> 39) & 1)
#define cap_num_fault_regs(c) ((unsigned)(((c) >> 40) & 0xff) + 1)
#define cap_max_amask_val(c) ((unsigned)(((c) >> 48) & 0x3f))
#define cap_write_drain(c) (((c) >> 54) & 1)
#define cap_read_drain(c) (((c) >> 55) & 1)
#define ecap_coherent(e) ((e) & 1)
#define ecap_qis(e) (((e) >> 1) & 1)
#define ecap_dev_iotlb_support(e) (((e) >> 2) & 1)
#define ecap_pass_through(e) (((e) >> 6) & 1)

#define DMA_GCMD_TE (1u << 31)
#define DMA_GCMD_SRTP (1u << 30)
#define DMA_GCMD_QIE (1u << 26)
#define DMA_GSTS_TES (1u << 31)
#define DMA_GSTS_RTPS (1u << 30)
#define DMA_GSTS_QIES (1u << 26)
/* GSTS bits that are one-shot commands, not states to carry in GCMD writes. */
#define DMA_GSTS_ONESHOT_MASK 0x96ffffffu

#define DMA_FSTS_PFO (1u << 0)
#define DMA_FSTS_PPF (1u << 1)
#define DMA_FSTS_IQE (1u << 4)
#define DMA_FSTS_ICE (1u << 5)
#define DMA_FSTS_ITE (1u << 6)
#define dma_fsts_fault_record_index(s) (((s) >> 8) & 0xff)
#define DMA_FECTL_IM (1u << 31)
#define DMA_FRCD_F (1u << 31)
#define dma_frcd_type(d) (((d) >> 30) & 1)
#define dma_frcd_fault_reason(d) ((d) & 0xff)
#define dma_frcd_source_id(d) ((d) & 0xffff)
#define PRIMARY_FAULT_REG_LEN 16

/* ---- descriptors (VT-d §6.5.2), 128-bit (legacy mode) ------------------------------------ */
#define QI_CC_TYPE 0x1ull
#define QI_IOTLB_TYPE 0x2ull
#define QI_DIOTLB_TYPE 0x3ull
#define QI_IWD_TYPE 0x5ull
#define QI_GRAN_GLOBAL 1ull
#define QI_GRAN_DOMAIN 2ull
#define QI_GRAN_PAGE 3ull   /* IOTLB: page-selective; context cache: device-selective */
#define QI_CC_GRAN(g) ((uint64_t)(g) << 4)
#define QI_CC_DID(d) ((uint64_t)(d) << 16)
#define QI_CC_SID(s) ((uint64_t)(s) << 32)
#define QI_CC_FM(m) ((uint64_t)(m) << 48)
#define QI_IOTLB_GRAN(g) ((uint64_t)(g) << 4)
#define QI_IOTLB_DW(x) ((uint64_t)(x) << 6)
#define QI_IOTLB_DR(x) ((uint64_t)(x) << 7)
#define QI_IOTLB_DID(d) ((uint64_t)(d) << 16)
#define QI_IOTLB_ADDR(a) ((uint64_t)(a) & ~0xfffull)
#define QI_IOTLB_IH(ih) ((uint64_t)(ih) << 6)
#define QI_IOTLB_AM(am) ((uint64_t)(am))
#define QI_DEV_IOTLB_SID(s) ((uint64_t)(s) << 32)
#define QI_DEV_IOTLB_QDEP(q) ((uint64_t)((q) & 0x1f) << 16)
#define QI_DEV_IOTLB_ADDR(a) ((uint64_t)(a) & ~0xfffull)
#define QI_DEV_IOTLB_SIZE 1ull
#define QI_DEV_IOTLB_PFSID(p) (((uint64_t)((p) & 0xf) << 12) | ((uint64_t)(((p) >> 4) & 0xfff) << 52))
#define QI_DEV_IOTLB_MAX_INVS 32
#define QI_IWD_STATUS_DATA(d) ((uint64_t)(d) << 32)
#define QI_IWD_STATUS_WRITE (1ull << 5)

#define QI_LENGTH 256 /* descriptors in the queue (Linux QI_LENGTH): one 4 KiB page */
enum { QI_FREE = 0, QI_IN_USE = 1, QI_DONE = 2, QI_ABORT = 3 };

/* ---- root, context and second-stage entries (VT-d §9.1, §9.3, §9.8) ---------------------- */
#define CONTEXT_TT_MULTI_LEVEL 0
#define CONTEXT_TT_DEV_IOTLB 1
#define CONTEXT_TT_PASS_THROUGH 2
#define DMA_PTE_READ 1ull
#define DMA_PTE_WRITE 2ull
#define DMA_PTE_LARGE_PAGE (1ull << 7)
#define DMA_PTE_ADDR_MASK 0x000ffffffffff000ull

struct qi_desc {
	uint64_t qw0, qw1;
};

/* Linux struct q_inval: the queue, its per-slot status words, and the free-slot accounting.
 * desc_status lives in simulated memory because the unit writes it (the wait descriptor's
 * status write); Linux keeps it in kzalloc'd memory of the boot CPU's node. */
struct q_inval {
	plat_spinlock q_lock;
	struct qi_desc *desc;         /* host view of desc_pa */
	ilab_pa_t desc_pa;
	plat_word32 *desc_status;     /* QI_LENGTH words, host view of status_pa */
	ilab_pa_t status_pa;
	unsigned free_head, free_tail, free_cnt; /* under q_lock */
};

struct intel_iommu_stats_pcpu {
	plat_word64 qi_submits, descs[16], psi, dsi, global, psi_ih, devtlb, iqe, faults;
	plat_word64 pt_alloc, pt_free;
	plat_word64 fault_irqs, fault_overflows, fault_reports, fault_missed;
};

/* dmar_fault's ratelimit state (Linux struct ratelimit_state), under register_lock. */
struct intel_fault_rs {
	bool started;
	uint64_t begin;               /* plat_now_ns of the interval's start */
	unsigned printed;
};

/* One DMAR unit (Linux struct intel_iommu). */
struct intel_iommu {
	struct ilab_iommu iommu;
	struct plat_mmio *mmio;
	struct ilab_mem *mem;
	int node;
	unsigned seq_id;
	struct ilab_intel_iommu_opts opts;
	uint32_t ver;
	uint64_t cap, ecap;
	uint32_t gcmd;                /* persistent GCMD bits, under register_lock */
	plat_spinlock register_lock;
	int agaw, msagaw;
	plat_spinlock lock;           /* Linux iommu->lock: context tables, domain ids */
	uint64_t *domain_ids;         /* cap_ndoms bits */
	uint64_t *root_entry;         /* 256 x 16 bytes: lo, hi */
	ilab_pa_t root_pa;
	struct q_inval qi;
	struct intel_fault_rs fault_rs;
	struct intel_iommu_stats_pcpu *stats; /* plat_percpu_alloc */
};

#define INTEL_MAX_UNITS 16 /* iommu_array slots: seq_ids 0..15 */

/* Linux struct iommu_domain_info: the domain on one unit. Published through plain words so
 * that flushes read the array without a lock (Linux: an xarray under RCU). */
struct iommu_domain_info {
	plat_word64 iommu;            /* struct intel_iommu *, 0: the slot is free */
	plat_word32 did;
	unsigned refcnt;              /* under dmar_domain.lock */
};

/* Table pages unlinked by an unmap, freed once an invalidation covering their range has
 * completed (Linux: gather->freelist, freed by intel_iommu_tlb_sync; see pgtable.c). */
struct intel_freed_table {
	struct intel_freed_table *next;
	uint64_t start, last;         /* IOVA range whose walk went through the page */
	ilab_pa_t pa;
};

/* Linux struct dmar_domain (second-stage, legacy mode). */
struct dmar_domain {
	struct ilab_iommu_domain domain;
	struct intel_iommu *alloc_iommu; /* the unit domain_alloc was called on */
	int nid;                       /* NUMA_NO_NODE or a node (see the nid policy) */
	int gaw, agaw;
	uint64_t *pgd;
	ilab_pa_t pgd_pa;
	uint64_t max_addr;
	bool iommu_coherency;
	unsigned iommu_superpage;      /* 0, 1, 2 */
	plat_word32 has_iotlb_device;
	uint64_t used_pgsizes;         /* leaf sizes ever mapped (attach refuses a unit without) */
	plat_spinlock lock;            /* Linux domain->lock: iommu_array refcounts, devices */
	struct iommu_domain_info iommu_array[INTEL_MAX_UNITS];
	struct device_domain_info **devices;
	unsigned nr_devices, cap_devices;
	plat_spinlock free_lock;       /* the pending table pages */
	struct intel_freed_table *freelist;
};

/* Linux struct device_domain_info: a device behind a unit. */
struct device_domain_info {
	struct ilab_dev *dev;
	struct intel_iommu *iommu;
	uint8_t bus, devfn;
	uint16_t sid, pfsid;
	unsigned ats_qdep;
	bool ats_supported, ats_enabled;
	struct dmar_domain *domain;
};

static inline struct intel_iommu *to_intel_iommu(const struct ilab_iommu *iommu)
{
	return iommu ? (struct intel_iommu *)iommu->priv : NULL;
}

static inline struct dmar_domain *to_dmar_domain(const struct ilab_iommu_domain *d)
{
	return d ? (struct dmar_domain *)d->priv : NULL;
}

static inline unsigned agaw_to_level(int agaw) { return (unsigned)agaw + 2; }
static inline int agaw_to_width(int agaw) { return 30 + agaw * VTD_STRIDE_SHIFT; }
static inline int width_to_agaw(int width) { return (width - 30 + VTD_STRIDE_SHIFT - 1) / VTD_STRIDE_SHIFT; }
static inline unsigned level_to_offset_bits(unsigned level) { return (level - 1) * VTD_STRIDE_SHIFT; }
static inline uint64_t lvl_to_nr_pages(unsigned level) { return 1ull << level_to_offset_bits(level); }

#define INTEL_STAT_ADD(iommu, field, n) \
	plat_stat_add64(&((struct intel_iommu_stats_pcpu *)plat_this_cpu_ptr((iommu)->stats))->field, (n))

int intel_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* intel-iommu-dmar.c: queued invalidation and faults (Linux dmar.c) */
int intel_dmar_enable_qi(struct intel_iommu *iommu);
void intel_dmar_disable_qi(struct intel_iommu *iommu);
void intel_dmar_free_qi(struct intel_iommu *iommu);
int qi_submit_sync(struct intel_iommu *iommu, struct qi_desc *desc, unsigned count);
int intel_wait_gsts(struct intel_iommu *iommu, uint32_t mask, bool set);
void intel_dmar_set_interrupt(struct intel_iommu *iommu);

/* intel-iommu-cache.c: invalidation policy (Linux iommu.c <= 6.9, cache.c since) */
void qi_flush_context(struct intel_iommu *iommu, uint16_t did, uint16_t sid, uint8_t fm,
		      uint64_t gran);
void qi_flush_iotlb(struct intel_iommu *iommu, uint16_t did, uint64_t addr, unsigned size_order,
		    uint64_t gran, bool ih);
void iommu_flush_iotlb_psi(struct intel_iommu *iommu, struct dmar_domain *domain,
			   uint64_t pfn, uint64_t pages, bool ih, bool map);
void iommu_flush_dev_iotlb(struct dmar_domain *domain, uint64_t addr, unsigned mask);
void intel_flush_dev_iotlb_one(struct device_domain_info *info, uint64_t addr, unsigned mask);
void intel_iommu_flush_iotlb_all(struct ilab_iommu_domain *domain);
void intel_iommu_tlb_sync(void *priv, struct ilab_iotlb_gather *gather);
void intel_domain_flush_range_all_units(struct dmar_domain *domain, uint64_t pfn,
					uint64_t pages, bool ih);

/* intel-iommu-pgtable.c: second-stage tables (Linux iommu.c pfn_to_dma_pte, __domain_mapping,
 * domain_unmap) */
int intel_domain_pgd_alloc(struct dmar_domain *domain);
void intel_domain_pgtable_free(struct dmar_domain *domain);
void intel_domain_knock_out_levels(struct dmar_domain *domain, int agaw);
int intel_iommu_map_pages(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize,
			  size_t pgcount, int prot, size_t *mapped);
size_t intel_iommu_unmap_pages(void *priv, uint64_t iova, size_t pgsize, size_t pgcount,
			       struct ilab_iotlb_gather *gather);
ilab_pa_t intel_iommu_iova_to_phys(struct ilab_iommu_domain *domain, uint64_t iova);
/* Table pages an unmap unlinked wait on the domain's pending list until an invalidation
 * covering them has completed. take: detach those inside [start, last] (all: every one);
 * free: give a detached list back to the page allocator. */
struct intel_freed_table *intel_take_pending_tables(struct dmar_domain *domain, uint64_t start,
						    uint64_t last, bool all);
void intel_free_table_list(struct dmar_domain *domain, struct intel_freed_table *list);

#endif
