/* kernel_era.h — which Linux version's DMA-mapping path to run: one table (src/iommu/kernel_era.c)
 * maps a version ("4.19", "5.10", "latest") to the behaviours that changed between 4.14 and
 * today, and fills the options each layer already has (SMMUv3 driver, io-pgtable through the
 * driver, dma-iommu, IOVA domain through dma-iommu) from it.
 * It is not a layer: no layer compares versions; each reads only its own options. The table,
 * with each change's commit subject and the files of both sides, is docs/kernel-eras.md.
 */
#ifndef IOMMULAB_KERNEL_ERA_H
#define IOMMULAB_KERNEL_ERA_H

#include <stdbool.h>
#include <stddef.h>

#include <iommulab/dma_iommu.h>
#include <iommulab/intel_iommu_drv.h>
#include <iommulab/iova.h>
#include <iommulab/smmuv3_drv.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ILAB_KERNEL_NAME_MAX 16
/* Versions accepted: 4.14 .. 4.20, 5.0 .. 5.19, 6.0 .. 6.19, 7.0 .. 7.9 ("latest" = the newest
 * behaviours the table knows, which are 7.0's). Older kernels predate the per-CPU IOVA caches
 * in dma-iommu and the flush queue; newer ones are unknown to the table. */
#define ILAB_KERNEL_OLDEST 414u
#define ILAB_KERNEL_NEWEST 709u

struct ilab_kernel_era {
	char name[ILAB_KERNEL_NAME_MAX]; /* as given: "5.10", "latest" */
	unsigned version;                /* major * 100 + minor; latest: ILAB_KERNEL_NEWEST */
	/* SMMUv3 driver (ilab_smmu_drv_opts) */
	bool cmdq_sync_cons;             /* < 4.15: CMD_SYNC completion by polling CONS (no MSI) */
	bool cmdq_sync_unordered;        /* < 4.20: sync number before the lock, no merging */
	bool smmu_non_strict;            /* >= 4.20: the SMMUv3 driver has a lazy (non-strict)
					  * mode; before, lazy on SMMUv3 is a backport */
	enum ilab_smmu_cmdq_mode cmdq_mode; /* SPINLOCK <= 5.3, LOCKFREE from 5.4 */
	unsigned cmdq_log2;              /* 8 <= 5.3 (CMDQ_MAX_SZ_SHIFT); 0: IDR1's size, >= 5.4 */
	bool no_ril;                     /* < 5.7: no range invalidation even if IDR3.RIL */
	bool cmdq_fair_lock;             /* >= 7.0: the fair shared/exclusive queue lock */
	/* io-pgtable-arm (through the driver) */
	bool pgtable_split_blocks;       /* <= 6.12: a partial unmap splits a block */
	/* dma-iommu and its IOVA domain (ilab_dma_options) */
	enum ilab_dma_lookup lookup;     /* REFCOUNT <= 4.18, DIRECT from 4.19 */
	bool map_pages;                  /* >= 5.15: map_pages/unmap_pages */
	bool sac_latch;                  /* >= 6.5: the 32-bit-first attempt is given up once */
	unsigned iova_mag_size;          /* 128 pfns; 127 from 6.0 */
	enum ilab_iova_depot_mode iova_depot; /* FIXED32 <= 6.6, LIST from 6.7 */
	enum ilab_dma_fq_kind fq_kind;   /* PERCPU: an SMMUv3 or VT-d device's lazy domain, every
					  * era (the single queue, 6.7, is for s390's) */
	/* VT-d driver (ilab_intel_iommu_opts) */
	bool vtd_drop_ih;                /* < 6.19: qi_flush_iotlb drops the invalidation hint */
	/* NVMe driver and blk-mq (ilab_nvme_cfg) */
	bool nvme_comp_batch;            /* >= 5.16: completions on the interrupt's CPU finished
					  * as a batch after the CQ walk (io_comp_batch) */
	/* Not switched (no timed path; see docs/kernel-eras.md): */
	bool ste_hitless;                /* >= 6.9: the hitless STE/CD writer (the only one here) */
};

/* Parse "X.Y" or "latest" into *era. 0, or -EINVAL with a one-line message in err
 * ("kernel: '5.a' is not a version (X.Y, e.g. 6.6, or latest)"). */
int ilab_kernel_era_parse(const char *text, struct ilab_kernel_era *era, char *err, size_t errlen);
/* The behaviours of version (major * 100 + minor, assumed in range) or of latest. */
void ilab_kernel_era_at(unsigned version, struct ilab_kernel_era *era);
void ilab_kernel_era_latest(struct ilab_kernel_era *era);

/* Fill the options the era decides (the rest is left as it is). */
void ilab_kernel_era_drv_opts(const struct ilab_kernel_era *era, struct ilab_smmu_drv_opts *o);
void ilab_kernel_era_dma_opts(const struct ilab_kernel_era *era, struct ilab_dma_options *o);
struct ilab_intel_iommu_opts;
void ilab_kernel_era_vtd_opts(const struct ilab_kernel_era *era, struct ilab_intel_iommu_opts *o);
struct ilab_nvme_cfg;
void ilab_kernel_era_nvme_opts(const struct ilab_kernel_era *era, struct ilab_nvme_cfg *c);
/* Whether a lazy (DMA_FQ) domain on an SMMUv3 runs as a backport in this era (< 4.20). */
bool ilab_kernel_era_lazy_is_backport(const struct ilab_kernel_era *era, bool smmuv3);

/* One row of the table: the behaviour, the first version with the new side, the commit. */
struct ilab_kernel_change {
	const char *key;       /* short name: "cmdq", "mag_size", ... */
	const char *behaviour;
	unsigned since;        /* major * 100 + minor */
	const char *commit;    /* subject */
	void (*apply)(struct ilab_kernel_era *era, bool after);
};
/* The rows, oldest first; *n receives their number. */
const struct ilab_kernel_change *ilab_kernel_changes(size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_KERNEL_ERA_H */
