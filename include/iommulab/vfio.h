/* vfio.h — VFIO type1 (Linux drivers/vfio/vfio_iommu_type1.c): a container of IOMMU groups,
 * user DMA map/unmap that pins pages of a modelled process address space, and the policy that
 * decides which groups share an IOMMU domain (Linux's "one domain for every compatible group",
 * or seed 004's attach_group_by_node: one domain per NUMA node, page tables on that node).
 * It is not the IOMMU core (iommu.h: groups, domains, attach) nor the DMA API (dma_iommu.h),
 * and not the VFIO device/group file interface: no ioctls, no fds, no mdev/emulated groups.
 */
#ifndef IOMMULAB_VFIO_H
#define IOMMULAB_VFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/iommu.h>
#include <iommulab/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Protection of a user mapping, from the device's point of view (VFIO_DMA_MAP_FLAG_READ/WRITE;
 * the same bits as ILAB_IOMMU_READ/WRITE). At least one is required. */
#define ILAB_VFIO_DMA_READ (1 << 0)
#define ILAB_VFIO_DMA_WRITE (1 << 1)

/* ---- the user address space (Linux: the mm of the process that maps) --------------------- */

/* A table of user virtual ranges backed by simulated physical pages, with a pin count per
 * page. Pages registered with add belong to the caller; pages of alloc belong to the mm and are
 * freed with it. A range with a pinned page cannot be removed (-EBUSY). */
struct ilab_vfio_mm;

/* Back [vaddr, vaddr + bytes) with the physically contiguous [pa, pa + bytes). vaddr, pa and
 * bytes are 4 KiB aligned, bytes > 0, no overlap with a registered range. Returns 0, -EINVAL
 * (alignment, zero size, wrap, or pa outside simulated memory), -EEXIST (overlap), -ENOMEM. */
int ilab_vfio_mm_add(struct ilab_vfio_mm *mm, uint64_t vaddr, ilab_pa_t pa, uint64_t bytes);
/* Allocate bytes / 4K pages on node one by one (ilab_mem_alloc_pages order 0, so physically
 * contiguous only by chance) and back [vaddr, vaddr + bytes) with them. Errors as add, plus
 * -ENOMEM when the node is exhausted (nothing is kept). */
int ilab_vfio_mm_alloc(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t bytes, int node);
/* Forget [vaddr, vaddr + bytes), which must be exactly one range registered by add or alloc
 * (-EINVAL for part of one, or more than one), with no page pinned. Returns 0, -EINVAL,
 * -EFAULT (vaddr is not backed) or -EBUSY (a page is pinned: nothing removed). */
int ilab_vfio_mm_remove(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t bytes);
/* The physical page behind vaddr (any offset in it) and its pin count. -EFAULT if unbacked. */
int ilab_vfio_mm_lookup(struct ilab_vfio_mm *mm, uint64_t vaddr, ilab_pa_t *pa, unsigned *pins);

/* ---- containers and groups ---------------------------------------------------------------- */

struct ilab_vfio_container_opts {
	/* Seed 004: a group joins only a domain of its own node (the node of the device it was
	 * opened from), and
	 * each domain's page tables are allocated on that node. Off: Linux's policy, one domain
	 * for every group whose IOMMU driver matches and whose attach succeeds. */
	bool attach_group_by_node;
	/* Shared-domain policy only: where a new domain's page tables go. By default (false), the
	 * node of the group whose attach creates the domain (Linux allocates them where the
	 * allocating side lives; seed 004 found them on node 1). true: on pgtable_node.
	 * Giving it together with attach_group_by_node is -EINVAL. */
	bool force_pgtable_node;
	int pgtable_node;
	/* Map with the pre-5.15 one-page-per-call path instead of map_pages (seed 002). */
	bool no_map_pages;
};

struct ilab_vfio_container;
struct ilab_vfio_group;

/* The last error message of this thread, after a negative return. */
const char *ilab_vfio_strerror(void);

/* A container on the machine's memory, with an empty user address space (mm) of its own.
 * opts may be NULL (Linux's defaults). Returns 0, -EINVAL or -ENOMEM. */
int ilab_vfio_container_create(struct ilab_mem *mem, const struct ilab_vfio_container_opts *opts,
			       struct ilab_vfio_container **out);
/* Unmap and unpin everything, detach every group, free domains and the mm. NULL is fine. */
void ilab_vfio_container_destroy(struct ilab_vfio_container *c);
struct ilab_vfio_mm *ilab_vfio_container_mm(struct ilab_vfio_container *c);

/* The VFIO group of a device (its IOMMU group; the device must have been probed into the IOMMU
 * core with ilab_iommu_probe_device). Returns 0, -EINVAL (NULL) or -ENODEV (no IOMMU group). */
int ilab_vfio_group_open(struct ilab_dev *dev, struct ilab_vfio_group **out);
/* The group must be detached first (-EBUSY otherwise, nothing freed). NULL is fine. */
int ilab_vfio_group_close(struct ilab_vfio_group *g);
/* The node the group counts as: that of the device it was opened from. */
int ilab_vfio_group_node(const struct ilab_vfio_group *g);

/* vfio_iommu_type1_attach_group: join an existing domain (same IOMMU driver; with
 * attach_group_by_node also the same node; and the IOMMU core's attach must succeed, i.e. the
 * driver finds the domain compatible) or get a new UNMANAGED domain into which every existing
 * mapping is replayed (pinning pages that were never pinned). Returns 0; -EINVAL (NULL, the
 * group is already in a container, a recorded mapping lies outside the new domain's
 * aperture, or a recorded mapping overlaps one of the group's reserved regions: nothing
 * changes; Linux vfio_iommu_aper_conflict / vfio_iommu_resv_conflict); -ENODEV (the group
 * has no IOMMU or no device); -EBUSY (the group is attached to another domain outside VFIO);
 * -EFAULT (a replayed mapping's user memory is not backed: nothing changes); -ENOMEM; or the
 * driver's error. */
int ilab_vfio_attach_group(struct ilab_vfio_container *c, struct ilab_vfio_group *g);
/* vfio_iommu_type1_detach_group: the group goes back to its default domain and its reserved
 * regions stop counting (unless another attached group reports them); the last group of
 * a domain frees it; when the last domain goes, every mapping is unmapped, unpinned and
 * removed from the container, so a later attach replays nothing (Linux: "group ownership
 * provides privilege"). Returns 0 or -EINVAL (not in this container). */
int ilab_vfio_detach_group(struct ilab_vfio_container *c, struct ilab_vfio_group *g);

/* vfio_dma_do_map: map [iova, iova + size) to the user pages behind [vaddr, vaddr + size) in
 * every domain of the container, pinning each page once more. Returns 0, or with nothing
 * changed: -EINVAL (prot without READ/WRITE or with other bits; size 0; iova, vaddr or size
 * not a multiple of the container's smallest page size; iova or vaddr range wrapping; iova
 * beyond a domain's aperture; the range overlaps a reserved region of an attached group, the
 * regions its IOMMU driver reports with ilab_iommu_get_resv_regions: VT-d's interrupt range
 * 0xFEE00000-0xFEEFFFFF, SMMUv3's MSI window; the message names the region), -EEXIST (overlaps an existing mapping), -ENOSPC (65535
 * mappings, Linux's dma_entry_limit), -EFAULT (user memory not backed), -ENOMEM, or the
 * page-table error. With no domain yet the mapping is only recorded (no pin, no check of the
 * user memory): it is pinned and mapped by the replay of the first attach, as in Linux. */
int ilab_vfio_dma_map(struct ilab_vfio_container *c, uint64_t vaddr, uint64_t iova,
		      uint64_t size, int prot);
/* vfio_dma_do_unmap (type1 v2): remove every mapping inside [iova, iova + size) from every
 * domain (each domain's IOTLB invalidated and synced) and unpin its pages; *unmapped = bytes
 * removed (0 when no mapping lies in the range: that is success). Returns 0; -EINVAL (size 0,
 * iova or size unaligned, range wrapping, or the range bisects a mapping: nothing removed). */
int ilab_vfio_dma_unmap(struct ilab_vfio_container *c, uint64_t iova, uint64_t size,
			uint64_t *unmapped);

/* ---- statistics ---------------------------------------------------------------------------- */

struct ilab_vfio_domain_info {
	struct ilab_iommu_domain *domain;
	int node;                  /* the node its page tables were allocated on */
	unsigned nr_groups;
	unsigned nr_iommus;        /* distinct IOMMU instances (SMMUs) of its groups' devices */
	uint64_t nr_mappings;      /* user mappings (vfio_dma) mirrored in it */
	uint64_t mapped_bytes;
};

struct ilab_vfio_stats {
	unsigned nr_domains;
	unsigned nr_groups;
	uint64_t nr_mappings;      /* vfio_dma entries */
	uint64_t mapped_bytes;
	uint64_t pinned_pages;     /* pins held by the container (a page mapped twice counts 2) */
	uint64_t replays;          /* mappings replayed into new domains */
};

int ilab_vfio_get_stats(struct ilab_vfio_container *c, struct ilab_vfio_stats *st);
/* Domain i (0 .. nr_domains - 1, in creation order). -EINVAL for a bad index. */
int ilab_vfio_domain_info(struct ilab_vfio_container *c, unsigned i,
			  struct ilab_vfio_domain_info *info);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_VFIO_H */
