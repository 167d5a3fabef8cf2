/* alloc.c — plat_zalloc: zeroed, cache-line-aligned allocations for kernel-side objects (the
 * role of kzalloc). Not a per-CPU allocator (percpu.c) and not simulated physical memory.
 *
 * Why aligned: whether two tracked words share a cache line must follow from the struct
 * layout, as in the kernel (arm64 kmalloc objects are at least 64-byte aligned), not from
 * where malloc happened to put the object. With malloc's 16-byte alignment, the same run
 * could put a group's lock and refcount in one line or in two, and the simulator's results
 * (false sharing) changed from one process to the next.
 * In simulation the block's lines are also made fresh (plat_sim->fresh): which freed block
 * malloc hands back must not matter either.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/plat.h"

void *plat_zalloc_array(size_t n, size_t size)
{
	size_t bytes;

	if (size && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	if (bytes > SIZE_MAX - PLAT_CACHELINE)
		return NULL;
	bytes = (bytes + PLAT_CACHELINE - 1) & ~(size_t)(PLAT_CACHELINE - 1);
	if (!bytes)
		bytes = PLAT_CACHELINE;
	void *p = aligned_alloc(PLAT_CACHELINE, bytes);
	if (p) {
		memset(p, 0, bytes);
		if (plat_unlikely(plat_sim) && plat_sim->fresh)
			plat_sim->fresh(p, bytes);
	}
	return p;
}

void *plat_zalloc(size_t size)
{
	return plat_zalloc_array(1, size);
}
