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
	bool pci;                      /* a PCI device: dma-iommu tries 32-bit IOVAs first (SAC) */
};

/* Domain types (Linux IOMMU_DOMAIN_*). */
enum ilab_domain_type {
	ILAB_DOMAIN_BLOCKED = 0,  /* all DMA aborts */
	ILAB_DOMAIN_IDENTITY,     /* passthrough: IOVA == PA, no translation (STE bypass) */
	ILAB_DOMAIN_UNMANAGED,    /* user-managed (VFIO) */
	ILAB_DOMAIN_DMA,          /* DMA API, strict invalidation */
	ILAB_DOMAIN_DMA_FQ,       /* DMA API, lazy invalidation through a flush queue */
};

/* A range of IOVA space that a driver says is not ordinary DMA space (Linux struct
 * iommu_resv_region and enum iommu_resv_type, the kinds iommulab's drivers report). */
enum ilab_resv_type {
	ILAB_RESV_MSI = 0,    /* IOMMU_RESV_MSI: the hardware's untranslated MSI range (x86:
			       * the interrupt range 0xFEE00000-0xFEEFFFFF) */
	ILAB_RESV_SW_MSI,     /* IOMMU_RESV_SW_MSI: the window software maps MSI doorbells
			       * into (SMMUv3's MSI_IOVA_BASE) */
	ILAB_RESV_RESERVED,   /* IOMMU_RESV_RESERVED: never to be mapped */
};

struct ilab_iommu_resv_region {
	uint64_t start, length;
	enum ilab_resv_type type;
};

#define ILAB_IOMMU_RESV_MAX 8 /* regions one driver reports at most */

/* Linux MSI_IOVA_BASE / MSI_IOVA_LENGTH: the software-MSI window the SMMUv3 driver reports as
 * its reserved region (get_resv_regions), which dma-iommu keeps out of its DMA domains. */
#define ILAB_MSI_IOVA_BASE 0x8000000ull
#define ILAB_MSI_IOVA_LENGTH 0x100000ull

/* What a driver implements for one domain. */
struct ilab_iommu_domain_ops {
	int (*attach_dev)(struct ilab_iommu_domain *domain, struct ilab_dev *dev);
	/* Invalidate every TLB entry of the domain and wait (flush queue, detach). A driver
	 * without it cannot run a DMA_FQ domain: the core falls back to strict DMA. */
	void (*flush_iotlb_all)(struct ilab_iommu_domain *domain);
	void (*free)(struct ilab_iommu_domain *domain);
	/* Optional: the physical address iova translates to (a table walk), 0 if unmapped. */
	ilab_pa_t (*iova_to_phys)(struct ilab_iommu_domain *domain, uint64_t iova);
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
	/* Optional (Linux get_resv_regions): the reserved IOVA regions of dev (NULL: of any
	 * device behind this IOMMU), at most max into regs; returns how many. */
	unsigned (*get_resv_regions)(struct ilab_iommu *iommu, struct ilab_dev *dev,
				     struct ilab_iommu_resv_region *regs, unsigned max);
};

/* One IOMMU instance (an SMMU), registered by its driver. */
struct ilab_iommu {
	const struct ilab_iommu_ops *ops;
	const char *name;
	int node;
	struct ilab_mem *mem;
	void *priv;                    /* the driver's instance (e.g. struct ilab_smmu_drv) */
};

/* ---- groups (Linux struct iommu_group) ---------------------------------------------------- */

/* The devices that the IOMMU cannot tell apart share a group; a group is attached to one
 * domain at a time. The core makes one group per device unless the driver (or board) adds a
 * device to an existing group with ilab_iommu_group_add_device.
 *
 * The group's reference count lives where Linux keeps it: in group->devices_kobj, a struct
 * kobject that iommu_group_alloc() creates by itself (kobject_create_and_add("devices", ...),
 * a 64-byte kmalloc object), so its kref and state_initialized flag sit on a line of their own,
 * apart from the group's domain pointers and mutex. kobject_get/put read state_initialized
 * (the WARN check) and then do the atomic on kref, both on that line. The 2018 lookup
 * iommu_get_domain_for_dev() did that twice on every DMA map and unmap; that shared line is
 * what seed 001 removes. */
struct ilab_iommu_group_kobj {
	plat_word32 kref;              /* 1 for the core + 1 per device + transient lookups */
	plat_word32 state_initialized; /* read by every kobject_get/put before the atomic */
};

struct ilab_iommu_group {
	unsigned id;
	struct ilab_iommu_domain *domain;         /* attached now */
	struct ilab_iommu_domain *default_domain; /* the DMA API's domain (or identity) */
	plat_spinlock lock;            /* Linux group->mutex: attach, detach, membership */
	struct ilab_dev **devices;
	unsigned nr_devices, cap_devices;
	_Alignas(PLAT_CACHELINE) struct ilab_iommu_group_kobj devices_kobj;
};

/* ---- core API (src/iommu/iommu.c) --------------------------------------------------------- */

/* The last error message of this thread, after a negative return from the core or dma-iommu. */
const char *ilab_iommu_strerror(void);

/* Add a device to the IOMMU framework: ops->probe_device, a new group of its own, a default
 * domain of def_type (ILAB_DOMAIN_DMA, ILAB_DOMAIN_DMA_FQ or ILAB_DOMAIN_IDENTITY; DMA_FQ
 * falls back to DMA when the driver has no flush_iotlb_all or the flush queue cannot be set
 * up, as Linux does), attach it, and set up the DMA API state (dma_iommu.h) with default
 * options. dev->iommu must be set. Returns 0, -EINVAL, -ENODEV (the driver's probe_device
 * failed, whatever its error: the message says which), -EBUSY (already probed), -ENOMEM, or
 * the driver's error from attaching the default domain, as it is. */
int ilab_iommu_probe_device(struct ilab_dev *dev, enum ilab_domain_type def_type);
/* The IOMMU's reserved regions (ops->get_resv_regions; 0 when the driver has none), at most
 * max (ILAB_IOMMU_RESV_MAX is always enough). dev may be NULL. */
unsigned ilab_iommu_get_resv_regions(struct ilab_iommu *iommu, struct ilab_dev *dev,
				     struct ilab_iommu_resv_region *regs, unsigned max);
/* Undo probe: block the device's DMA, leave its group (freeing the group and its default
 * domain with the last device), release the driver's per-device state. */
void ilab_iommu_release_device(struct ilab_dev *dev);
/* Probe dev into an existing group (a driver saying "this device aliases that one"): it gets
 * the group's current domain attached. Returns 0 or a negative errno as probe. */
int ilab_iommu_group_add_device(struct ilab_iommu_group *group, struct ilab_dev *dev);

/* Group references (Linux iommu_group_get/put): get returns dev's group with one more
 * reference (NULL if none); put drops it. Each is a read of devices_kobj.state_initialized and
 * one atomic RMW on devices_kobj.kref (Linux kobject_get / kobject_put). */
struct ilab_iommu_group *ilab_iommu_group_get(struct ilab_dev *dev);
void ilab_iommu_group_put(struct ilab_iommu_group *group);
unsigned ilab_iommu_group_refcount(struct ilab_iommu_group *group);
unsigned ilab_iommu_group_id(const struct ilab_iommu_group *group);

/* Domain lookup, the two forms seed 001 compares:
 *  - ilab_iommu_get_domain_for_dev: Linux <= 4.18 iommu_get_domain_for_dev(), used by the DMA
 *    ops on every map and unmap: group get (kobject_get of group->devices_kobj: a read of its
 *    state_initialized, an atomic increment of its kref), read group->domain, group put (the
 *    same read, an atomic decrement). No mutex: 4.18 did not take group->mutex here.
 *  - ilab_iommu_get_dma_domain: Linux >= 4.19 iommu_get_dma_domain(): a plain dereference of
 *    dev->group->default_domain, nothing written.
 * Both return NULL for a device without a group. */
struct ilab_iommu_domain *ilab_iommu_get_domain_for_dev(struct ilab_dev *dev);
struct ilab_iommu_domain *ilab_iommu_get_dma_domain(struct ilab_dev *dev);

/* Allocate a domain through the driver (node < 0: the IOMMU's node). UNMANAGED domains are for
 * VFIO-like users; DMA domains get dma-iommu's cookie. NULL on failure (see strerror). */
struct ilab_iommu_domain *ilab_iommu_domain_alloc(struct ilab_iommu *iommu,
						  enum ilab_domain_type type, int node);
/* Free a domain no group is attached to. */
void ilab_iommu_domain_free(struct ilab_iommu_domain *domain);

/* Attach every device of the group to domain (Linux iommu_attach_group). Only from the
 * default domain: a group already attached elsewhere gives -EBUSY. On a driver failure the
 * devices go back to the previous domain and the error is returned. */
int ilab_iommu_attach_group(struct ilab_iommu_domain *domain, struct ilab_iommu_group *group);
/* Put the group back on its default domain (or blocked, without one). */
void ilab_iommu_detach_group(struct ilab_iommu_domain *domain, struct ilab_iommu_group *group);
/* Single-device forms (Linux iommu_attach_device): the device must be alone in its group. */
int ilab_iommu_attach_device(struct ilab_iommu_domain *domain, struct ilab_dev *dev);
void ilab_iommu_detach_device(struct ilab_iommu_domain *domain, struct ilab_dev *dev);

/* Map/unmap on a domain (Linux iommu_map / iommu_unmap: map_pages path, unmap synced).
 * For UNMANAGED users; the DMA API uses dma_iommu.h. */
int ilab_iommu_domain_map(struct ilab_iommu_domain *domain, uint64_t iova, ilab_pa_t pa,
			  size_t size, int prot);
size_t ilab_iommu_domain_unmap(struct ilab_iommu_domain *domain, uint64_t iova, size_t size);
/* Translate through the domain's tables (0 if unmapped or the driver cannot tell). */
ilab_pa_t ilab_iommu_iova_to_phys(struct ilab_iommu_domain *domain, uint64_t iova);

const char *ilab_domain_type_name(enum ilab_domain_type type);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_IOMMU_H */
