/* vfio_internal.h — the type1 container's private state, shared by the files of src/vfio: the user
 * address space model, user mappings (Linux struct vfio_dma), domains (struct vfio_domain) and
 * groups. Not public API (include/iommulab/vfio.h).
 */
#ifndef ILAB_VFIO_INTERNAL_H
#define ILAB_VFIO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iommulab/iommu.h"
#include "iommulab/mem.h"
#include "iommulab/plat.h"
#include "iommulab/vfio.h"

#define VFIO_PAGE ILAB_PAGE_SIZE
/* Linux's dma_entry_limit default: at most this many user mappings per container. */
#define VFIO_DMA_ENTRY_LIMIT 65535u

/* ---- user address space (vfio_mm.c) ---------------------------------------------------------- */

/* One registered virtual range: a physical page and a pin count per 4 KiB page. */
struct vfio_mm_range {
	uint64_t vaddr;
	uint64_t npages;
	ilab_pa_t *pa;
	unsigned *pins;
	bool owned;              /* pages allocated by ilab_vfio_mm_alloc: freed with the mm */
};

struct ilab_vfio_mm {
	struct ilab_mem *mem;
	struct vfio_mm_range *r; /* sorted by vaddr, disjoint */
	unsigned n, cap;
};

int vfio_mm_create(struct ilab_mem *mem, struct ilab_vfio_mm **out);
void vfio_mm_destroy(struct ilab_vfio_mm *mm);
/* The physically contiguous run of backed pages starting at vaddr, at most max_pages long:
 * *pa its first page, *npages its length. pin: add one pin to each page of the run.
 * Returns 0 or -EFAULT (vaddr not backed). */
int vfio_mm_run(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t max_pages, bool pin,
		ilab_pa_t *pa, uint64_t *npages);
/* Drop one pin from each of npages pages from vaddr (pages not backed or not pinned are
 * skipped: unpinning only ever follows a successful pin). */
void vfio_mm_unpin(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t npages);

/* ---- container ------------------------------------------------------------------------------ */

/* A user mapping: iova → the user pages of [vaddr, vaddr + size). */
struct vfio_dma {
	uint64_t iova, vaddr, size;
	int prot;                /* ILAB_IOMMU_READ / WRITE */
	bool pinned;             /* pinned and mapped (false only while there is no domain) */
};

struct vfio_domain {
	struct ilab_iommu_domain *domain;
	int node;                /* where its page tables were asked to live */
	struct ilab_vfio_group **groups;
	unsigned nr_groups, cap_groups;
	uint64_t nr_mappings, mapped_bytes;
};

struct ilab_vfio_group {
	struct ilab_iommu_group *iommu_group; /* a reference, dropped at close */
	struct ilab_dev *dev;                 /* the device it was opened from */
	int node;
	struct ilab_vfio_container *container;
	struct vfio_domain *domain;
};

/* One reserved IOVA region of an attached group (a hole in Linux's iova_list). */
struct vfio_resv {
	uint64_t start, end;     /* inclusive */
	enum ilab_resv_type type;
	char dev[48];            /* the device whose IOMMU driver reported it */
};

struct vfio_resv_list {
	struct vfio_resv *r;
	unsigned n, cap;
};

struct ilab_vfio_container {
	struct ilab_mem *mem;
	struct ilab_vfio_container_opts opts;
	struct ilab_vfio_mm *mm;
	plat_spinlock lock;      /* Linux iommu->lock: every container operation */
	struct vfio_domain **domains;
	unsigned nr_domains, cap_domains;
	struct vfio_dma *dmas;   /* sorted by iova, disjoint (Linux: an rb-tree) */
	size_t nr_dmas, cap_dmas;
	uint64_t pinned_pages, replays;
	/* the reserved regions of every attached group: no mapping may overlap one */
	struct vfio_resv_list resv;
};

int vfio_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* vfio_dma.c */
/* The first mapping that meets [first, last] (inclusive, first <= last), or NULL. */
const struct vfio_dma *vfio_find_dma_range(const struct ilab_vfio_container *c, uint64_t first,
					   uint64_t last);
/* Smallest page size every domain supports (4 KiB without domains). */
uint64_t vfio_min_pgsize(const struct ilab_vfio_container *c);
/* Map every mapping into a new domain, pinning those not pinned yet. On failure nothing of
 * it stays mapped in vd or pinned by this call. Called with the lock held. */
int vfio_replay(struct ilab_vfio_container *c, struct vfio_domain *vd);
/* Unmap every mapping from every domain and unpin it; the list is emptied. Lock held. */
void vfio_unmap_unpin_all(struct ilab_vfio_container *c);

/* vfio_resv.c */
const char *vfio_resv_type_name(enum ilab_resv_type type);
/* Append the group's devices' reserved regions to l. 0 or -ENOMEM (l unchanged). */
int vfio_resv_add_group(struct vfio_resv_list *l, struct ilab_vfio_group *g);
void vfio_resv_list_free(struct vfio_resv_list *l);
/* The first region of l that [iova, iova + size) overlaps (size > 0, no wrap), or NULL. */
const struct vfio_resv *vfio_resv_overlap(const struct vfio_resv_list *l, uint64_t iova,
					  uint64_t size);
/* c->resv from the groups attached now. 0 or -ENOMEM (c->resv unchanged). Lock held. */
int vfio_resv_rebuild(struct ilab_vfio_container *c);

#endif
