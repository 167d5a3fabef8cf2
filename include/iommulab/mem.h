/* mem.h — the simulated physical address space of the modelled machine: one range per NUMA
 * node, a page allocator per node, and CMA-style contiguous areas for coherent DMA memory.
 * It is not a host allocator: addresses are simulated physical addresses (ilab_pa_t); the
 * host backing is sparse (untouched simulated memory costs no host memory).
 *
 * Every allocation knows its home node: the cost model charges accesses by the distance
 * between the accessing agent and that node, and seed 000 is about exactly that.
 */
#ifndef IOMMULAB_MEM_H
#define IOMMULAB_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t ilab_pa_t;

#define ILAB_PAGE_SHIFT 12
#define ILAB_PAGE_SIZE (1ull << ILAB_PAGE_SHIFT)
#define ILAB_PA_INVALID UINT64_MAX
/* Buddy allocator orders are 0..ILAB_MEM_MAX_ORDER-1 (4 KiB .. 4 MiB), as Linux's MAX_ORDER 11. */
#define ILAB_MEM_MAX_ORDER 11
/* Limits of one node's range (see docs/memory.md). */
#define ILAB_MEM_NODE_ALIGN (2ull << 20)
#define ILAB_MEM_MAX_NODE_BYTES (1ull << 40)

/* Where coherent DMA memory comes from (Linux kernel/dma/contiguous.c). */
enum ilab_cma_mode {
	ILAB_CMA_NONE = 0,    /* no CMA: coherent memory is plain pages of the device's node */
	ILAB_CMA_GLOBAL,      /* one global area on cma_global_node (Linux default: node 0) */
	ILAB_CMA_PERNUMA,     /* one area per node (cma_pernuma=<size>) plus the global area */
	ILAB_CMA_LISTED,      /* areas only on the nodes of cma_nodes_mask (numa_cma=) + global */
};

/* Layout: node n's range is [(n + 1) << S, ((n + 1) << S) + node_bytes) where 2^S is the
 * smallest power of two >= node_bytes; [0, 1 << S) is a hole, so PA 0 is never memory.
 * CMA areas are rounded up to 2 MiB (a pageblock) and carved from the top of their node: the
 * global area topmost, the node's own area just below it. */
struct ilab_mem_config {
	unsigned nr_nodes;        /* 1..ILAB_MEM_MAX_NODES */
	uint64_t node_bytes;      /* size of each node's range, multiple of 2 MiB, <= 1 TiB */
	enum ilab_cma_mode cma;
	int cma_global_node;      /* node of the global area */
	uint64_t cma_global_bytes; /* > 0 for GLOBAL; 0 = no global area for PERNUMA/LISTED */
	uint64_t cma_node_bytes;  /* size of each per-node / listed area (> 0 for those modes) */
	uint64_t cma_nodes_mask;  /* ILAB_CMA_LISTED: bit n = node n has an area */
};

#define ILAB_MEM_MAX_NODES 64

struct ilab_mem;

/* Which source satisfied a coherent allocation. */
enum ilab_mem_source {
	ILAB_MEM_SRC_NODE_CMA = 1, /* the device node's own area */
	ILAB_MEM_SRC_GLOBAL_CMA,   /* the global area */
	ILAB_MEM_SRC_PAGES,        /* plain pages (buddy allocator) */
};

struct ilab_mem_alloc_info {
	int home_node;
	enum ilab_mem_source source;
};

/* Returns 0, -EINVAL (bad configuration; see ilab_mem_strerror) or -ENOMEM (host mapping). */
int ilab_mem_create(const struct ilab_mem_config *cfg, struct ilab_mem **out);
void ilab_mem_destroy(struct ilab_mem *mem);
/* Last error message of this thread (after a negative return). */
const char *ilab_mem_strerror(void);

unsigned ilab_mem_nr_nodes(const struct ilab_mem *mem);
/* First physical address and size of a node's range; -EINVAL for a bad node. */
int ilab_mem_node_range(const struct ilab_mem *mem, int node, ilab_pa_t *base, uint64_t *bytes);
/* Home node of a physical address (node 0 for the low reservation), or -1 if it is outside
 * every node. */
int ilab_mem_node_of(const struct ilab_mem *mem, ilab_pa_t pa);
/* Host pointer to simulated physical memory [pa, pa+len), or NULL if the range is not
 * entirely inside one node (or the low reservation). Like the kernel's phys_to_virt: no cost
 * is charged. */
void *ilab_mem_va(struct ilab_mem *mem, ilab_pa_t pa, size_t len);

/* Memory below 4 GiB reserved at boot for one owner: what Linux's swiotlb takes with memblock
 * in the 32-bit DMA zone. The layout above leaves [0, 1 << S) a hole, so it is carved from the
 * top of that hole below min(1 << S, 4 GiB) (PA 0 stays a hole): outside every node's
 * allocators, home node 0, read and written like node memory. Created by the first call with
 * `bytes` (rounded down to 2 MiB, cut to fit), the same one on later calls; its owner fills
 * owner/release (ilab_mem_destroy calls release(owner)). NULL (ilab_mem_strerror says why)
 * when not even 2 MiB fit. Not thread-safe: call at set-up. */
struct ilab_mem_low {
	ilab_pa_t base;
	uint64_t bytes;
	void *owner;
	void (*release)(void *owner);
};
struct ilab_mem_low *ilab_mem_low_reserve(struct ilab_mem *mem, uint64_t bytes);

/* Page allocator: 2^order contiguous 4 KiB pages on `node`, zeroed. Returns 0, -ENOMEM
 * (node exhausted) or -EINVAL (order >= ILAB_MEM_MAX_ORDER, node without memory).
 * node < 0 means "the calling CPU's node". Freeing a block that is not an allocated block of
 * exactly that order (double free, wrong order, bad address) is ignored and counted in
 * ilab_mem_stats.bad_frees. */
int ilab_mem_alloc_pages(struct ilab_mem *mem, int node, unsigned order, ilab_pa_t *pa);
void ilab_mem_free_pages(struct ilab_mem *mem, ilab_pa_t pa, unsigned order);

/* Coherent DMA allocation for a device on dev_node, in Linux's order: the device node's CMA
 * area, then the global area, then plain pages (of dev_node). size is rounded up to pages.
 * Allocations of one page or less skip CMA, as in Linux. Returns 0, -ENOMEM, or -EINVAL
 * (size 0, dev_node >= nr_nodes). dev_node < 0 is NUMA_NO_NODE: no node area is tried and
 * plain pages come from the calling CPU's node. info may be NULL. Free looks the area up by
 * address (bad frees are ignored and counted, as for pages). */
int ilab_mem_alloc_coherent(struct ilab_mem *mem, int dev_node, size_t size, ilab_pa_t *pa,
			    struct ilab_mem_alloc_info *info);
void ilab_mem_free_coherent(struct ilab_mem *mem, ilab_pa_t pa, size_t size);

/* Checked, cost-charged accesses (the SMMU model's memory callbacks and device DMA use these).
 * Return 0, or -EFAULT if the range is outside simulated memory. */
int ilab_mem_read(struct ilab_mem *mem, ilab_pa_t pa, void *buf, size_t len);
int ilab_mem_write(struct ilab_mem *mem, ilab_pa_t pa, const void *buf, size_t len);

/* Statistics. */
struct ilab_mem_stats {
	uint64_t node_pages_total[ILAB_MEM_MAX_NODES];
	uint64_t node_pages_free[ILAB_MEM_MAX_NODES];
	uint64_t cma_bytes_total[ILAB_MEM_MAX_NODES + 1]; /* [nr_nodes] = global area */
	uint64_t cma_bytes_used[ILAB_MEM_MAX_NODES + 1];
	uint64_t host_bytes_resident; /* host memory backing simulated memory (mincore) */
	uint64_t coherent_allocs[4];  /* successful coherent allocations by enum ilab_mem_source */
	uint64_t alloc_failures;      /* allocations that returned -ENOMEM */
	uint64_t bad_frees;           /* frees ignored because they did not match an allocation */
};
/* Costs a mincore() walk of every node's host mapping: about 0.2 ms per GiB of simulated memory
 * (50 ms for 4 x 64 GiB on the development host). Not for hot paths. */
void ilab_mem_get_stats(struct ilab_mem *mem, struct ilab_mem_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_MEM_H */
