/* percpu.c — per-CPU data: one zeroed allocation holding plat_cpu_count() elements, each on its
 * own cache line(s) so CPUs never share a line. Not a general allocator.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/plat.h"

/* The header sits in the cache line just before the first element; plat_percpu_stride() reads
 * it, which is why the stride is not an argument of plat_percpu_ptr(). */
struct percpu_hdr {
	size_t stride;
	unsigned count;
};

#define PERCPU_HDR_SPACE PLAT_CACHELINE

_Static_assert(sizeof(struct percpu_hdr) <= PERCPU_HDR_SPACE, "header fits its line");
/* plat_percpu_ptr() (plat.h) reads the stride inline at base - PLAT_CACHELINE */
_Static_assert(offsetof(struct percpu_hdr, stride) == 0 && PERCPU_HDR_SPACE == PLAT_CACHELINE,
	       "plat_percpu_ptr's view of the header");

static struct percpu_hdr *percpu_hdr(const void *base)
{
	return (struct percpu_hdr *)((char *)base - PERCPU_HDR_SPACE);
}

void *plat_percpu_alloc(size_t elem_size)
{
	size_t stride = elem_size ? elem_size : 1;
	unsigned n = plat_cpu_count();

	if (stride > SIZE_MAX - PLAT_CACHELINE)
		return NULL;
	stride = (stride + PLAT_CACHELINE - 1) & ~(size_t)(PLAT_CACHELINE - 1);
	if (stride > (SIZE_MAX - PERCPU_HDR_SPACE) / n)
		return NULL;

	size_t bytes = PERCPU_HDR_SPACE + stride * n;
	char *raw = aligned_alloc(PLAT_CACHELINE, bytes);
	if (!raw)
		return NULL;
	memset(raw, 0, bytes);
	if (plat_unlikely(plat_sim) && plat_sim->fresh)
		plat_sim->fresh(raw, bytes); /* as plat_zalloc: no history from a freed block */
	struct percpu_hdr *h = (struct percpu_hdr *)raw;
	h->stride = stride;
	h->count = n;
	return raw + PERCPU_HDR_SPACE;
}

void plat_percpu_free(void *base)
{
	if (base)
		free(percpu_hdr(base));
}

size_t plat_percpu_stride(const void *base)
{
	return base ? percpu_hdr(base)->stride : 0;
}
