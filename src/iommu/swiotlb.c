/* swiotlb.c — bounce buffers for dma-direct (Linux kernel/dma/swiotlb.c): a pool of 2 KiB slots
 * below 4 GiB, allocated in runs of at most one 128-slot segment, split into areas with a lock
 * each (the calling CPU's area first), with the copy in on map and back on unmap.
 * It is not dma-direct itself (dma-iommu.c decides when to bounce) and has no dynamic pools,
 * no per-device restricted pools and no min_align_mask (no device here sets one).
 *
 * Slot bookkeeping, as Linux keeps it: list[i] is the number of free slots from i to the end of
 * i's segment when i is free, 0 when it is in use, so a run of n free slots starting at i exists
 * iff list[i] >= n. Taking or freeing a run rewrites the run and the free slots just before it
 * in the same segment. The bookkeeping is host memory (kernel data whose cost the simulator
 * does not model); the area lock is a plat spinlock and the copies are simulated memory
 * accesses, both charged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iommu/iommu_internal.h"
#include "iommu/swiotlb.h"
#include "iommulab/plat.h"

/* One independently locked part of the pool (Linux struct io_tlb_area). */
struct swiotlb_area {
	_Alignas(PLAT_CACHELINE) plat_spinlock lock;
	unsigned index;            /* where the next search starts (relative to the area) */
	uint64_t used;             /* slots in use */
	uint64_t maps, unmaps, full, bytes_in, bytes_out; /* under the lock */
	int named;                 /* the lock's line named for the simulator's statistics */
};

struct slot {
	ilab_pa_t orig;            /* the bounced buffer's address, for this slot's 2 KiB */
	uint32_t list;             /* free slots from here to the segment's end; 0: in use */
	uint32_t alloc_size;       /* first slot of a run: the bytes mapped */
};

struct ilab_swiotlb {
	struct ilab_mem *mem;
	ilab_pa_t base;
	uint64_t nslabs;
	unsigned nareas, area_nslabs;
	struct slot *slots;
	struct swiotlb_area *areas;
};

/* Counters are written under their area's lock and read without it (statistics, no simulated
 * cost): relaxed atomics keep the unlocked reads defined. */
static inline void stat_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline uint64_t stat_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static unsigned nr_slots(uint64_t bytes)
{
	return (unsigned)((bytes + ILAB_IO_TLB_SIZE - 1) >> ILAB_IO_TLB_SHIFT);
}

static ilab_pa_t slot_pa(const struct ilab_swiotlb *p, uint64_t i)
{
	return p->base + (i << ILAB_IO_TLB_SHIFT);
}

/* ---- the pool ---------------------------------------------------------------------------- */

static void pool_free(void *owner)
{
	struct ilab_swiotlb *p = owner;

	if (!p)
		return;
	free(p->slots);
	free(p->areas);
	free(p);
}

/* Linux swiotlb_adjust_nareas: one area per CPU (a power of two), but no area smaller than one
 * segment. */
static unsigned pick_nareas(uint64_t nslabs)
{
	unsigned cpus = plat_cpu_count(), n = 1;

	while (n < cpus)
		n <<= 1;
	while (n > 1 && nslabs / n < ILAB_IO_TLB_SEGSIZE)
		n >>= 1;
	return n;
}

struct ilab_swiotlb *ilab_swiotlb_get(struct ilab_mem *mem)
{
	struct ilab_mem_low *low = ilab_mem_low_reserve(mem, ILAB_IO_TLB_DEFAULT_SIZE);
	struct ilab_swiotlb *p;

	if (!low) {
		ilab_iommu_set_error(-ENOSPC, "swiotlb: %s", ilab_mem_strerror());
		return NULL;
	}
	if (low->owner)
		return low->release == pool_free ? low->owner : NULL;
	p = plat_zalloc(sizeof(*p));
	if (!p)
		goto nomem;
	p->mem = mem;
	p->base = low->base;
	p->nslabs = low->bytes >> ILAB_IO_TLB_SHIFT; /* whole segments: bytes is 2 MiB-aligned */
	p->nareas = pick_nareas(p->nslabs);
	p->area_nslabs = (unsigned)(p->nslabs / p->nareas);
	p->slots = plat_zalloc_array(p->nslabs, sizeof(*p->slots));
	p->areas = plat_zalloc_array(p->nareas, sizeof(*p->areas)); /* their spinlocks: tracked */
	if (!p->slots || !p->areas) {
		pool_free(p);
		goto nomem;
	}
	for (uint64_t i = 0; i < p->nslabs; i++) {
		p->slots[i].orig = ILAB_PA_INVALID;
		p->slots[i].list = ILAB_IO_TLB_SEGSIZE - (unsigned)(i % ILAB_IO_TLB_SEGSIZE);
	}
	low->owner = p;
	low->release = pool_free;
	return p;
nomem:
	ilab_iommu_set_error(-ENOMEM, "swiotlb: out of host memory");
	return NULL;
}

bool ilab_swiotlb_owns(const struct ilab_swiotlb *p, ilab_pa_t pa)
{
	return p && pa - p->base < (p->nslabs << ILAB_IO_TLB_SHIFT);
}

/* ---- slots --------------------------------------------------------------------------------- */

static unsigned seg_start(uint64_t i)
{
	return (unsigned)(i - i % ILAB_IO_TLB_SEGSIZE);
}

/* The free slots just before `first` in its segment now end at `first`'s run: renumber them
 * counting on from `count`. */
static void relink_before(struct ilab_swiotlb *p, uint64_t first, uint32_t count)
{
	for (uint64_t i = first; i > seg_start(first) && p->slots[i - 1].list; i--)
		p->slots[i - 1].list = ++count;
}

/* Look for n free slots in area a (lock held), page-aligned for a buffer of a page or more
 * (Linux aligns those to PAGE_SIZE). Returns the first slot's index, or -1. */
static int64_t area_find(struct ilab_swiotlb *p, unsigned a, unsigned n, bool page_aligned)
{
	struct swiotlb_area *ar = &p->areas[a];
	uint64_t base = (uint64_t)a * p->area_nslabs;
	unsigned idx = ar->index, checked = 0, align = page_aligned ? ILAB_PAGE_SIZE >>
								      ILAB_IO_TLB_SHIFT : 1;

	if (n > p->area_nslabs - ar->used)
		return -1;
	while (checked < p->area_nslabs) {
		uint64_t i = base + idx;

		if (i % align) {
			idx = (idx + 1) % p->area_nslabs;
			checked++;
			continue;
		}
		if (p->slots[i].list >= n)
			return (int64_t)i;
		idx = (idx + align) % p->area_nslabs;
		checked += align;
	}
	return -1;
}

static void area_take(struct ilab_swiotlb *p, unsigned a, uint64_t first, unsigned n,
		      ilab_pa_t orig, size_t size)
{
	struct swiotlb_area *ar = &p->areas[a];

	for (unsigned k = 0; k < n; k++) {
		p->slots[first + k].list = 0;
		p->slots[first + k].orig = orig + ((uint64_t)k << ILAB_IO_TLB_SHIFT);
		p->slots[first + k].alloc_size = 0;
	}
	p->slots[first].alloc_size = (uint32_t)size;
	relink_before(p, first, 0);
	ar->index = (unsigned)((first - (uint64_t)a * p->area_nslabs + n) % p->area_nslabs);
	stat_add(&ar->used, n);
}

static void area_release(struct ilab_swiotlb *p, unsigned a, uint64_t first, unsigned n)
{
	uint64_t end = first + n;
	uint32_t count = end < seg_start(first) + ILAB_IO_TLB_SEGSIZE ? p->slots[end].list : 0;

	for (uint64_t i = end; i > first; i--) {
		p->slots[i - 1].list = ++count;
		p->slots[i - 1].orig = ILAB_PA_INVALID;
		p->slots[i - 1].alloc_size = 0;
	}
	relink_before(p, first, count);
	stat_add(&p->areas[a].used, (uint64_t)-(int64_t)n);
}

static void area_lock(struct swiotlb_area *ar)
{
	if (!__atomic_load_n(&ar->named, __ATOMIC_RELAXED)) {
		/* named on first use: a pool nobody bounces through leaves no line behind */
		plat_track(&ar->lock, "swiotlb.area_lock");
		__atomic_store_n(&ar->named, 1, __ATOMIC_RELAXED);
	}
	plat_spin_lock(&ar->lock);
}

/* ---- the copies (Linux swiotlb_bounce), charged like any CPU copy in simulated memory -------- */

static int bounce(struct ilab_swiotlb *p, ilab_pa_t dst, ilab_pa_t src, size_t size)
{
	void *d = ilab_mem_va(p->mem, dst, size), *s = ilab_mem_va(p->mem, src, size);

	if (!d || !s)
		return -EFAULT;
	memcpy(d, s, size);
	plat_mem_touch(s, size, false);
	plat_mem_touch(d, size, true);
	return 0;
}

/* ---- map / unmap (Linux swiotlb_tbl_map_single / swiotlb_tbl_unmap_single) ---------------- */

ilab_pa_t ilab_swiotlb_map(struct ilab_swiotlb *p, ilab_pa_t orig, size_t size,
			   enum ilab_dma_dir dir)
{
	unsigned n = nr_slots(size), start;
	int64_t first = -1;

	(void)dir;
	if (!size || n > ILAB_IO_TLB_SEGSIZE) {
		ilab_iommu_set_error(-EINVAL, "swiotlb: %zu bytes: a bounce holds 1 to %u bytes",
				     size, ILAB_IO_TLB_SEGSIZE * ILAB_IO_TLB_SIZE);
		return ILAB_PA_INVALID;
	}
	if (!ilab_mem_va(p->mem, orig, size)) {
		ilab_iommu_set_error(-EFAULT, "swiotlb: [%#llx, +%zu) is not memory",
				     (unsigned long long)orig, size);
		return ILAB_PA_INVALID;
	}
	start = plat_cpu_id() < 0 ? 0 : (unsigned)plat_cpu_id() & (p->nareas - 1);
	for (unsigned k = 0; k < p->nareas && first < 0; k++) {
		unsigned a = (start + k) & (p->nareas - 1);

		area_lock(&p->areas[a]);
		first = area_find(p, a, n, size >= ILAB_PAGE_SIZE);
		if (first >= 0) {
			area_take(p, a, (uint64_t)first, n, orig, size);
			stat_add(&p->areas[a].maps, 1);
			stat_add(&p->areas[a].bytes_in, size);
		}
		plat_spin_unlock(&p->areas[a].lock);
	}
	if (first < 0) {
		area_lock(&p->areas[start]);
		stat_add(&p->areas[start].full, 1);
		plat_spin_unlock(&p->areas[start].lock);
		ilab_iommu_set_error(-ENOMEM, "swiotlb: no %u free contiguous slots for %zu bytes",
				     n, size);
		return ILAB_PA_INVALID;
	}
	/* Every direction copies in (Linux >= 5.19): a device that writes only part of a
	 * FROM_DEVICE buffer must not leave stale pool bytes to be copied back over it. */
	bounce(p, slot_pa(p, (uint64_t)first), orig, size);
	return slot_pa(p, (uint64_t)first);
}

void ilab_swiotlb_unmap(struct ilab_swiotlb *p, ilab_pa_t tlb, size_t size,
			enum ilab_dma_dir dir)
{
	uint64_t first;
	unsigned a, n;
	size_t mapped;
	ilab_pa_t orig;

	if (!ilab_swiotlb_owns(p, tlb))
		return;
	first = (tlb - p->base) >> ILAB_IO_TLB_SHIFT;
	a = (unsigned)(first / p->area_nslabs);
	area_lock(&p->areas[a]);
	mapped = p->slots[first].alloc_size;
	orig = p->slots[first].orig;
	if (!mapped || orig == ILAB_PA_INVALID) {
		plat_spin_unlock(&p->areas[a].lock);
		ilab_iommu_set_error(-ENOENT, "swiotlb: unmap of %#llx, which is not mapped",
				     (unsigned long long)tlb);
		return;
	}
	if (size != mapped) /* Linux warns and uses what was mapped */
		ilab_iommu_set_error(-EINVAL, "swiotlb: unmap of %zu bytes at %#llx mapped as %zu",
				     size, (unsigned long long)tlb, mapped);
	n = nr_slots(mapped);
	stat_add(&p->areas[a].unmaps, 1);
	if (dir == ILAB_DMA_FROM_DEVICE || dir == ILAB_DMA_BIDIRECTIONAL)
		stat_add(&p->areas[a].bytes_out, mapped);
	plat_spin_unlock(&p->areas[a].lock);
	/* Copy back before the slots are free: until then nobody else can take them. */
	if (dir == ILAB_DMA_FROM_DEVICE || dir == ILAB_DMA_BIDIRECTIONAL)
		bounce(p, orig, tlb, mapped);
	area_lock(&p->areas[a]);
	area_release(p, a, first, n);
	plat_spin_unlock(&p->areas[a].lock);
}

void ilab_swiotlb_get_stats(struct ilab_swiotlb *p, struct ilab_swiotlb_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->base = p->base;
	st->slots = p->nslabs;
	st->areas = p->nareas;
	for (unsigned a = 0; a < p->nareas; a++) {
		struct swiotlb_area *ar = &p->areas[a];

		st->used += stat_read(&ar->used);
		st->maps += stat_read(&ar->maps);
		st->unmaps += stat_read(&ar->unmaps);
		st->full += stat_read(&ar->full);
		st->bytes_in += stat_read(&ar->bytes_in);
		st->bytes_out += stat_read(&ar->bytes_out);
	}
}
