/* iommu.h — the IOMMU core's objects (Linux drivers/iommu/iommu.c): devices, IOMMU instances,
 * groups, domains, attach/detach, and the driver interface an IOMMU driver implements.
 * It is not the DMA API (dma_iommu.h) and not a driver (the SMMUv3 driver implements
 * struct ilab_iommu_ops); the page-table map/unmap loop lives in iommu_map.h.
 */
#ifndef IOMMULAB_IOMMU_H
#define IOMMULAB_IOMMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/iommu_map.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ilab_iommu;
struct ilab_iommu_group;
struct ilab_iommu_domain;

/* A DMA-capable device (Linux struct device, the parts the IOMMU path needs). */
struct ilab_dev {
	char name[48];
	int node;                      /* NUMA node of the device */
	uint32_t sid;                  /* StreamID at its IOMMU */
	unsigned dma_bits;             /* DMA mask width (e.g. 32, 48) */
	struct ilab_iommu *iommu;      /* the IOMMU instance translating it (NULL: none) */
	struct ilab_iommu_group *group;/* set by ilab_iommu_probe_device */
	void *iommu_priv;              /* the driver's per-device state (its "master") */
	void *dma_priv;                /* dma-iommu's per-device state */
};

/* Domain types (Linux IOMMU_DOMAIN_*). */
enum ilab_domain_type {
	ILAB_DOMAIN_BLOCKED = 0,  /* all DMA aborts */
	ILAB_DOMAIN_IDENTITY,     /* passthrough: IOVA == PA, no translation (STE bypass) */
	ILAB_DOMAIN_UNMANAGED,    /* user-managed (VFIO) */
	ILAB_DOMAIN_DMA,          /* DMA API, strict invalidation */
	ILAB_DOMAIN_DMA_FQ,       /* DMA API, lazy invalidation through a flush queue */
};

/* What a driver implements for one domain. */
struct ilab_iommu_domain_ops {
	int (*attach_dev)(struct ilab_iommu_domain *domain, struct ilab_dev *dev);
	/* Invalidate every TLB entry of the domain and wait (flush queue, detach). */
	void (*flush_iotlb_all)(struct ilab_iommu_domain *domain);
	void (*free)(struct ilab_iommu_domain *domain);
};

struct ilab_iommu_domain {
	enum ilab_domain_type type;
	const struct ilab_iommu_domain_ops *ops;
	struct ilab_iommu_pt_ops pt;   /* map/unmap and iotlb_sync (iommu_map.h) */
	uint64_t pgsize_bitmap;
	uint64_t aperture_start, aperture_end; /* usable IOVA range (inclusive) */
	int node;                      /* where its page tables live */
	struct ilab_iommu *iommu;      /* the instance that allocated it */
	void *iova_cookie;             /* dma-iommu's state (IOVA domain, flush queue) */
	void *priv;                    /* the driver's */
};

/* An IOMMU driver (Linux struct iommu_ops). */
struct ilab_iommu_ops {
	const char *name;
	/* Allocate a domain of `type` whose page tables live on `node` (< 0: the IOMMU's node).
	 * Returns NULL on failure. */
	struct ilab_iommu_domain *(*domain_alloc)(struct ilab_iommu *iommu,
						  enum ilab_domain_type type, int node);
	/* Check the device is translated by this IOMMU and set up its per-device state. */
	int (*probe_device)(struct ilab_iommu *iommu, struct ilab_dev *dev);
	void (*release_device)(struct ilab_iommu *iommu, struct ilab_dev *dev);
	/* Put the device back to blocking DMA (detach). */
	int (*block_dev)(struct ilab_iommu *iommu, struct ilab_dev *dev);
	/* Can domains of `a` be attached to devices of `b`? (VFIO's domain sharing test.) */
	bool (*domain_compatible)(struct ilab_iommu_domain *domain, struct ilab_iommu *other);
};

/* One IOMMU instance (an SMMU), registered by its driver. */
struct ilab_iommu {
	const struct ilab_iommu_ops *ops;
	const char *name;
	int node;
	struct ilab_mem *mem;
	void *priv;                    /* the driver's instance (e.g. struct ilab_smmu_drv) */
};

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_IOMMU_H */
