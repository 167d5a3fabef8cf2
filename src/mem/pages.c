/* pages.c — the public page allocator: picks the node, asks its buddy allocator, zeroes the
 * block and counts failures and bad frees. It is not the buddy system itself (buddy.c) and
 * knows nothing of CMA (coherent.c).
 */
#include <errno.h>

#include "mem/mem_internal.h"

int mem_pages_alloc(struct ilab_mem *mem, int node, unsigned order, ilab_pa_t *pa)
{
	int64_t idx = buddy_alloc(&mem->node[node].buddy, order);

	if (idx < 0)
		return mem_error(-ENOMEM, "mem: node %d has no free block of order %u", node,
				 order);
	*pa = mem->node[node].base + ((uint64_t)idx << ILAB_PAGE_SHIFT);
	/* Zeroed outside the node lock: the block is ours alone now. */
	mem_zero(mem, *pa, ILAB_PAGE_SIZE << order);
	return 0;
}

int mem_pages_free(struct ilab_mem *mem, ilab_pa_t pa, unsigned order)
{
	int n = mem_node_index(mem, pa);

	if (n < 0 || (pa & (ILAB_PAGE_SIZE - 1)) ||
	    buddy_free(&mem->node[n].buddy, (pa - mem->node[n].base) >> ILAB_PAGE_SHIFT, order))
		return mem_error(-EINVAL,
				 "mem: free of PA 0x%llx order %u matches no allocated block",
				 (unsigned long long)pa, order);
	return 0;
}

int ilab_mem_alloc_pages(struct ilab_mem *mem, int node, unsigned order, ilab_pa_t *pa)
{
	int ret;

	if (!mem || !pa)
		return mem_error(-EINVAL, "mem: NULL argument to alloc_pages");
	*pa = ILAB_PA_INVALID;
	if (order >= ILAB_MEM_MAX_ORDER)
		return mem_error(-EINVAL, "mem: order %u is not below MAX_ORDER %d", order,
				 ILAB_MEM_MAX_ORDER);
	node = mem_pick_node(mem, node);
	if (node < 0)
		return node;
	ret = mem_pages_alloc(mem, node, order, pa);
	if (ret)
		atomic_fetch_add(&mem->alloc_failures, 1);
	return ret;
}

void ilab_mem_free_pages(struct ilab_mem *mem, ilab_pa_t pa, unsigned order)
{
	if (mem && mem_pages_free(mem, pa, order))
		atomic_fetch_add(&mem->bad_frees, 1);
}
