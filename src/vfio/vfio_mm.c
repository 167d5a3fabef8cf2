/* vfio_mm.c — the modelled user address space VFIO pins from: registered virtual ranges, the
 * simulated physical page behind each 4 KiB virtual page, and a pin count per page (Linux:
 * the process's page tables and pin_user_pages' reference on each page).
 * It is not an MMU (nothing translates CPU accesses) and not the container (vfio_type1.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfio/vfio_internal.h"
#include "iommulab/plat.h"

int vfio_mm_create(struct ilab_mem *mem, struct ilab_vfio_mm **out)
{
	struct ilab_vfio_mm *mm = plat_zalloc_array(1, sizeof(*mm));

	if (!mm)
		return -ENOMEM;
	mm->mem = mem;
	*out = mm;
	return 0;
}

static void range_free(struct ilab_vfio_mm *mm, struct vfio_mm_range *r)
{
	if (r->owned)
		for (uint64_t i = 0; i < r->npages; i++)
			ilab_mem_free_pages(mm->mem, r->pa[i], 0);
	free(r->pa);
	free(r->pins);
}

void vfio_mm_destroy(struct ilab_vfio_mm *mm)
{
	if (!mm)
		return;
	for (unsigned i = 0; i < mm->n; i++)
		range_free(mm, &mm->r[i]);
	free(mm->r);
	free(mm);
}

/* Index of the range containing vaddr, or -1. */
static int find_range(const struct ilab_vfio_mm *mm, uint64_t vaddr)
{
	unsigned lo = 0, hi = mm->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		const struct vfio_mm_range *r = &mm->r[mid];

		if (vaddr < r->vaddr)
			hi = mid;
		else if (vaddr - r->vaddr >= r->npages * VFIO_PAGE)
			lo = mid + 1;
		else
			return (int)mid;
	}
	return -1;
}

static bool overlaps(const struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t bytes)
{
	for (unsigned i = 0; i < mm->n; i++) {
		const struct vfio_mm_range *r = &mm->r[i];

		if (vaddr < r->vaddr + r->npages * VFIO_PAGE && r->vaddr < vaddr + bytes)
			return true;
	}
	return false;
}

static int check_range(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t bytes)
{
	if (!mm)
		return vfio_set_error(-EINVAL, "vfio mm: no address space");
	if (!bytes || (vaddr | bytes) & (VFIO_PAGE - 1))
		return vfio_set_error(-EINVAL, "vfio mm: [%#llx, +%#llx) is empty or not 4K aligned",
				      (unsigned long long)vaddr, (unsigned long long)bytes);
	if (vaddr + bytes - 1 < vaddr)
		return vfio_set_error(-EINVAL, "vfio mm: range at %#llx wraps",
				      (unsigned long long)vaddr);
	if (overlaps(mm, vaddr, bytes))
		return vfio_set_error(-EEXIST, "vfio mm: [%#llx, +%#llx) overlaps a registered range",
				      (unsigned long long)vaddr, (unsigned long long)bytes);
	return 0;
}

/* Insert a range whose pa[] is filled; takes ownership of pa. */
static int insert(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t npages, ilab_pa_t *pa,
		  bool owned)
{
	struct vfio_mm_range r = { vaddr, npages, pa, plat_zalloc_array(npages, sizeof(unsigned)), owned };
	unsigned at = 0;

	if (!r.pins)
		return -ENOMEM;
	if (mm->n == mm->cap) {
		unsigned cap = mm->cap ? 2 * mm->cap : 8;
		struct vfio_mm_range *nr = realloc(mm->r, cap * sizeof(*nr));

		if (!nr) {
			free(r.pins);
			return -ENOMEM;
		}
		mm->r = nr;
		mm->cap = cap;
	}
	while (at < mm->n && mm->r[at].vaddr < vaddr)
		at++;
	memmove(&mm->r[at + 1], &mm->r[at], (mm->n - at) * sizeof(r));
	mm->r[at] = r;
	mm->n++;
	return 0;
}

int ilab_vfio_mm_add(struct ilab_vfio_mm *mm, uint64_t vaddr, ilab_pa_t pa, uint64_t bytes)
{
	uint64_t npages;
	ilab_pa_t *pages;
	int err = check_range(mm, vaddr, bytes);

	if (err)
		return err;
	if (pa & (VFIO_PAGE - 1) || !ilab_mem_va(mm->mem, pa, (size_t)bytes))
		return vfio_set_error(-EINVAL, "vfio mm: [%#llx, +%#llx) is not simulated memory "
				      "of one node", (unsigned long long)pa, (unsigned long long)bytes);
	npages = bytes / VFIO_PAGE;
	pages = malloc(npages * sizeof(*pages));
	if (!pages)
		return -ENOMEM;
	for (uint64_t i = 0; i < npages; i++)
		pages[i] = pa + i * VFIO_PAGE;
	err = insert(mm, vaddr, npages, pages, false);
	if (err)
		free(pages);
	return err;
}

int ilab_vfio_mm_alloc(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t bytes, int node)
{
	uint64_t npages, i;
	ilab_pa_t *pages;
	int err = check_range(mm, vaddr, bytes);

	if (err)
		return err;
	npages = bytes / VFIO_PAGE;
	pages = malloc(npages * sizeof(*pages));
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		err = ilab_mem_alloc_pages(mm->mem, node, 0, &pages[i]);
		if (err)
			break;
	}
	if (!err)
		err = insert(mm, vaddr, npages, pages, true);
	if (err) {
		while (i--)
			ilab_mem_free_pages(mm->mem, pages[i], 0);
		free(pages);
		return vfio_set_error(err, "vfio mm: cannot allocate %llu pages on node %d",
				      (unsigned long long)npages, node);
	}
	return 0;
}

int ilab_vfio_mm_remove(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t bytes)
{
	int idx;
	struct vfio_mm_range *r;

	if (!mm || !bytes || (vaddr | bytes) & (VFIO_PAGE - 1))
		return vfio_set_error(-EINVAL, "vfio mm: bad range to remove");
	/* Only whole registered ranges: enough for a model of munmap in tests. */
	idx = find_range(mm, vaddr);
	if (idx < 0)
		return vfio_set_error(-EFAULT, "vfio mm: %#llx is not backed",
				      (unsigned long long)vaddr);
	r = &mm->r[idx];
	if (r->vaddr != vaddr || r->npages * VFIO_PAGE != bytes)
		return vfio_set_error(-EINVAL, "vfio mm: remove covers part of a range");
	for (uint64_t i = 0; i < r->npages; i++)
		if (r->pins[i])
			return vfio_set_error(-EBUSY, "vfio mm: page %#llx is pinned",
					      (unsigned long long)(vaddr + i * VFIO_PAGE));
	range_free(mm, r);
	memmove(r, r + 1, (mm->n - (unsigned)idx - 1) * sizeof(*r));
	mm->n--;
	return 0;
}

int ilab_vfio_mm_lookup(struct ilab_vfio_mm *mm, uint64_t vaddr, ilab_pa_t *pa, unsigned *pins)
{
	int idx = mm ? find_range(mm, vaddr) : -1;
	uint64_t i;

	if (idx < 0)
		return -EFAULT;
	i = (vaddr - mm->r[idx].vaddr) / VFIO_PAGE;
	if (pa)
		*pa = mm->r[idx].pa[i] + (vaddr & (VFIO_PAGE - 1));
	if (pins)
		*pins = mm->r[idx].pins[i];
	return 0;
}

int vfio_mm_run(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t max_pages, bool pin,
		ilab_pa_t *pa, uint64_t *npages)
{
	int idx = find_range(mm, vaddr);
	struct vfio_mm_range *r;
	uint64_t i, n = 0;

	if (idx < 0 || !max_pages)
		return -EFAULT;
	r = &mm->r[idx];
	i = (vaddr - r->vaddr) / VFIO_PAGE;
	*pa = r->pa[i];
	/* A run stops at the end of the range: the next range may be contiguous in both spaces,
	 * but one more lookup costs less than the code to merge them. */
	while (n < max_pages && i + n < r->npages && r->pa[i + n] == *pa + n * VFIO_PAGE)
		n++;
	if (pin)
		for (uint64_t k = 0; k < n; k++)
			r->pins[i + k]++;
	*npages = n;
	return 0;
}

void vfio_mm_unpin(struct ilab_vfio_mm *mm, uint64_t vaddr, uint64_t npages)
{
	for (uint64_t k = 0; k < npages; k++) {
		int idx = find_range(mm, vaddr + k * VFIO_PAGE);

		if (idx >= 0) {
			struct vfio_mm_range *r = &mm->r[idx];
			uint64_t i = (vaddr + k * VFIO_PAGE - r->vaddr) / VFIO_PAGE;

			if (r->pins[i])
				r->pins[i]--;
		}
	}
}
