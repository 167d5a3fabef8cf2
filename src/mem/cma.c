/* cma.c — one contiguous memory area, as Linux's mm/cma.c: a range carved out of a node at
 * creation and handed out by a first-fit bitmap of pages (order_per_bit = 0, as DMA areas use).
 * It is not the placement policy (coherent.c decides which area to try) and it never touches
 * the simulated memory it manages: both bitmaps live in host memory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mem/mem_internal.h"

static uint64_t bitmap_bytes(uint64_t npages)
{
	return ((npages + 63) / 64) * sizeof(uint64_t);
}

int cma_area_init(struct cma_area *a, const char *name, int node, ilab_pa_t base,
		  uint64_t bytes)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->node = node;
	a->base = base;
	a->npages = bytes >> ILAB_PAGE_SHIFT;
	if (pthread_mutex_init(&a->lock, NULL))
		return -ENOMEM;
	a->bitmap = mem_host_map(bitmap_bytes(a->npages));
	a->heads = mem_host_map(bitmap_bytes(a->npages));
	if (!a->bitmap || !a->heads) {
		cma_area_fini(a);
		return -ENOMEM;
	}
	return 0;
}

void cma_area_fini(struct cma_area *a)
{
	mem_host_unmap(a->bitmap, bitmap_bytes(a->npages));
	mem_host_unmap(a->heads, bitmap_bytes(a->npages));
	a->bitmap = a->heads = NULL;
	pthread_mutex_destroy(&a->lock);
}

/* Like cma_alloc(): the first run of `count` free pages whose start is a multiple of
 * 2^align_order pages. The area's base is 2 MiB aligned (order 9 >= CONFIG_CMA_ALIGNMENT 8),
 * so aligning the index within the area aligns the physical address too. */
ilab_pa_t cma_area_alloc(struct cma_area *a, uint64_t count, unsigned align_order)
{
	uint64_t mask = (1ull << align_order) - 1, n = a->npages, s = 0;
	ilab_pa_t pa = ILAB_PA_INVALID;

	if (!count || count > n)
		return ILAB_PA_INVALID;
	pthread_mutex_lock(&a->lock);
	for (;;) {
		s = mem_bm_find(a->bitmap, s, n, 0);
		s = (s + mask) & ~mask;
		if (s >= n || n - s < count)
			break;
		uint64_t busy = mem_bm_find(a->bitmap, s, s + count, 1);
		if (busy == s + count) {
			mem_bm_assign(a->bitmap, s, s + count, 1);
			mem_bm_assign(a->heads, s, s + 1, 1);
			a->used += count;
			pa = a->base + (s << ILAB_PAGE_SHIFT);
			break;
		}
		s = busy + 1;
	}
	pthread_mutex_unlock(&a->lock);
	return pa;
}

/* Like cma_release(), but strict: the range must be exactly one live allocation (its head
 * bit set, every page allocated, no other allocation starting inside it, and the allocation
 * not continuing past its end). Anything else changes nothing. */
int cma_area_release(struct cma_area *a, ilab_pa_t pa, uint64_t count)
{
	int ret = -EINVAL;

	if (!cma_area_contains(a, pa) || (pa & (ILAB_PAGE_SIZE - 1)) || !count)
		return -EINVAL;
	uint64_t s = (pa - a->base) >> ILAB_PAGE_SHIFT, e = s + count;
	if (count > a->npages - s)
		return -EINVAL;

	pthread_mutex_lock(&a->lock);
	if (mem_bm_test(a->heads, s) && mem_bm_find(a->bitmap, s, e, 0) == e &&
	    mem_bm_find(a->heads, s + 1, e, 1) == e &&
	    (e == a->npages || !mem_bm_test(a->bitmap, e) || mem_bm_test(a->heads, e))) {
		mem_bm_assign(a->bitmap, s, e, 0);
		mem_bm_assign(a->heads, s, s + 1, 0);
		a->used -= count;
		ret = 0;
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

uint64_t cma_area_used_bytes(struct cma_area *a)
{
	pthread_mutex_lock(&a->lock);
	uint64_t used = a->used;
	pthread_mutex_unlock(&a->lock);
	return used << ILAB_PAGE_SHIFT;
}
