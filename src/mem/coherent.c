/* coherent.c — where coherent DMA memory comes from, in the order of Linux's
 * dma_alloc_contiguous() (kernel/dma/contiguous.c) and __dma_direct_alloc_pages()
 * (kernel/dma/direct.c): the device node's CMA area, the global area, then plain pages.
 * It is not an allocator of its own: cma.c and buddy.c hold the memory.
 */
#include <errno.h>

#include "mem/mem_internal.h"

/* Linux's CONFIG_CMA_ALIGNMENT default: CMA allocations align to at most 2^8 pages. */
#define CMA_ALIGNMENT 8

/* get_order(): the smallest order whose block holds `pages` pages. */
static unsigned pages_order(uint64_t pages)
{
	unsigned o = 0;
	while ((1ull << o) < pages)
		o++;
	return o;
}

/* cma_alloc_aligned(): align = min(get_order(size), CONFIG_CMA_ALIGNMENT). */
static ilab_pa_t try_area(struct cma_area *a, uint64_t pages)
{
	unsigned align = pages_order(pages);
	if (!a)
		return ILAB_PA_INVALID;
	return cma_area_alloc(a, pages, align < CMA_ALIGNMENT ? align : CMA_ALIGNMENT);
}

static int done(struct ilab_mem *mem, ilab_pa_t got, enum ilab_mem_source src, ilab_pa_t *pa,
		struct ilab_mem_alloc_info *info, uint64_t bytes)
{
	if (src != ILAB_MEM_SRC_PAGES)
		mem_zero(mem, got, bytes); /* pages were zeroed by the page allocator */
	*pa = got;
	if (info) {
		info->home_node = mem_node_index(mem, got);
		info->source = src;
	}
	atomic_fetch_add(&mem->coherent_allocs[src], 1);
	return 0;
}

int ilab_mem_alloc_coherent(struct ilab_mem *mem, int dev_node, size_t size, ilab_pa_t *pa,
			    struct ilab_mem_alloc_info *info)
{
	if (!mem || !pa)
		return mem_error(-EINVAL, "mem: NULL argument to alloc_coherent");
	*pa = ILAB_PA_INVALID;
	if (!size)
		return mem_error(-EINVAL, "mem: coherent allocation of 0 bytes");
	if (dev_node >= 0 && (unsigned)dev_node >= mem->nr_nodes)
		return mem_error(-EINVAL, "mem: device node %d does not exist (%u nodes)", dev_node,
				 mem->nr_nodes);
	uint64_t pages = (size >> ILAB_PAGE_SHIFT) + ((size & (ILAB_PAGE_SIZE - 1)) != 0);
	uint64_t bytes = pages << ILAB_PAGE_SHIFT;
	ilab_pa_t got;

	/* "if (size <= PAGE_SIZE) return NULL": single pages never come from CMA. */
	if (pages > 1) {
		/* The node's own area (pernuma<n> or numa<n>) only for a device with a node. */
		if (dev_node >= 0) {
			got = try_area(mem->node[dev_node].area, pages);
			if (got != ILAB_PA_INVALID)
				return done(mem, got, ILAB_MEM_SRC_NODE_CMA, pa, info, bytes);
		}
		got = try_area(mem->global, pages);
		if (got != ILAB_PA_INVALID)
			return done(mem, got, ILAB_MEM_SRC_GLOBAL_CMA, pa, info, bytes);
	}
	/* alloc_pages_node(dev_to_node(dev), gfp, get_order(size)); NUMA_NO_NODE means the
	 * calling CPU's node. Orders >= MAX_ORDER fail there as here. */
	unsigned order = pages_order(pages);
	int node = mem_pick_node(mem, dev_node);
	int ret = node;
	if (node >= 0) {
		if (order >= ILAB_MEM_MAX_ORDER)
			ret = mem_error(-ENOMEM,
					"mem: no CMA for %llu bytes and order %u exceeds the page "
					"allocator's MAX_ORDER %d",
					(unsigned long long)bytes, order, ILAB_MEM_MAX_ORDER);
		else
			ret = mem_pages_alloc(mem, node, order, &got);
		if (!ret)
			return done(mem, got, ILAB_MEM_SRC_PAGES, pa, info, bytes);
	}
	if (ret == -ENOMEM)
		atomic_fetch_add(&mem->alloc_failures, 1);
	return ret;
}

/* dma_free_contiguous(): the area that holds the address, else the page allocator. */
void ilab_mem_free_coherent(struct ilab_mem *mem, ilab_pa_t pa, size_t size)
{
	if (!mem)
		return;
	uint64_t pages = (size >> ILAB_PAGE_SHIFT) + ((size & (ILAB_PAGE_SIZE - 1)) != 0);
	int n = mem_node_index(mem, pa), ret;

	if (n < 0 || !size)
		ret = mem_error(-EINVAL, "mem: coherent free of PA 0x%llx size %zu is outside memory",
				(unsigned long long)pa, size);
	else if (cma_area_contains(mem->node[n].area, pa))
		ret = cma_area_release(mem->node[n].area, pa, pages);
	else if (cma_area_contains(mem->global, pa))
		ret = cma_area_release(mem->global, pa, pages);
	else if (pages_order(pages) >= ILAB_MEM_MAX_ORDER)
		ret = -EINVAL;
	else
		ret = mem_pages_free(mem, pa, pages_order(pages));
	if (ret) {
		mem_error(-EINVAL, "mem: coherent free of PA 0x%llx size %zu matches no allocation",
			  (unsigned long long)pa, size);
		atomic_fetch_add(&mem->bad_frees, 1);
	}
}
