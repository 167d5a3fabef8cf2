/* mem_internal.h — the private shape of the simulated physical memory (src/mem only).
 * It is not an API: other layers use include/iommulab/mem.h.
 */
#ifndef IOMMULAB_MEM_INTERNAL_H
#define IOMMULAB_MEM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "iommulab/mem.h"

/* Bitmap helpers shared by the allocators (host memory, 64-bit words). */
uint64_t mem_bm_find(const uint64_t *bm, uint64_t start, uint64_t end, int want);
void mem_bm_assign(uint64_t *bm, uint64_t start, uint64_t end, int val);
static inline int mem_bm_test(const uint64_t *bm, uint64_t i)
{
	return (int)((bm[i >> 6] >> (i & 63)) & 1);
}

/* Host memory that costs nothing until touched (metadata and simulated RAM alike). */
void *mem_host_map(uint64_t bytes);
void mem_host_unmap(void *p, uint64_t bytes);

/* ---- buddy allocator of one node (buddy.c) --------------------------------------------- */

#define BUDDY_NIL UINT32_MAX

struct buddy {
	pthread_mutex_t lock;
	uint64_t npages;                   /* pages managed: [0, npages) relative to the node */
	uint64_t wm;                       /* [wm, npages) never handed out: implicitly free */
	uint64_t nr_free;                  /* free pages, including the implicit ones */
	uint32_t head[ILAB_MEM_MAX_ORDER]; /* free lists, LIFO, linked by page index */
	uint32_t *next, *prev;             /* per page; only block heads are meaningful */
	uint8_t *tag;                      /* per page: BUDDY_FREE/BUDDY_ALLOC | order on heads */
};

int buddy_init(struct buddy *b, uint64_t npages);
void buddy_fini(struct buddy *b);
/* Index of the first page of a 2^order block, or -1 when the node is exhausted. */
int64_t buddy_alloc(struct buddy *b, unsigned order);
/* 0, or -EINVAL when [idx, 2^order) is not an allocated block of that order (then nothing
 * changes). */
int buddy_free(struct buddy *b, uint64_t idx, unsigned order);
uint64_t buddy_nr_free(struct buddy *b);

/* ---- CMA area (cma.c) ---------------------------------------------------------------------- */

struct cma_area {
	pthread_mutex_t lock;
	char name[24];       /* Linux's names: "reserved" (global), "pernuma<n>", "numa<n>" */
	int node;
	ilab_pa_t base;
	uint64_t npages;
	uint64_t used;       /* pages */
	uint64_t *bitmap;    /* one bit per page: allocated */
	uint64_t *heads;     /* one bit per page: first page of an allocation */
};

int cma_area_init(struct cma_area *a, const char *name, int node, ilab_pa_t base,
		  uint64_t bytes);
void cma_area_fini(struct cma_area *a);
static inline int cma_area_contains(const struct cma_area *a, ilab_pa_t pa)
{
	return a && pa >= a->base && pa - a->base < (a->npages << ILAB_PAGE_SHIFT);
}
/* First page of count pages aligned to 2^align_order pages, or ILAB_PA_INVALID. */
ilab_pa_t cma_area_alloc(struct cma_area *a, uint64_t count, unsigned align_order);
/* 0, or -EINVAL if [pa, count) is not exactly one allocation of this area. */
int cma_area_release(struct cma_area *a, ilab_pa_t pa, uint64_t count);
uint64_t cma_area_used_bytes(struct cma_area *a);

/* ---- the address space (mem.c) ----------------------------------------------------------- */

struct mem_node {
	uint8_t *host;          /* host backing of the whole range (node_bytes) */
	ilab_pa_t base;
	struct buddy buddy;     /* manages [base, base + buddy.npages pages) */
	struct cma_area *area;  /* the node's own area (pernuma / listed), or NULL */
	bool buddy_ready;
};

struct ilab_mem {
	unsigned nr_nodes;
	unsigned shift;          /* node n's range starts at (n + 1) << shift */
	uint64_t node_bytes;
	uint64_t host_page;      /* host page size: madvise/mincore granule */
	struct ilab_mem_config cfg;
	struct cma_area *global; /* the default area, or NULL */
	struct mem_node node[ILAB_MEM_MAX_NODES];
	struct ilab_mem_low low;  /* bytes 0: none (ilab_mem_low_reserve) */
	uint8_t *low_host;
	_Atomic uint64_t coherent_allocs[4];
	_Atomic uint64_t alloc_failures;
	_Atomic uint64_t bad_frees;
};

/* Record this thread's error message; returns err so callers can `return mem_error(...)`. */
int mem_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Node index of pa, or -1 (no locks: the read/write fast path). */
static inline int mem_node_index(const struct ilab_mem *mem, ilab_pa_t pa)
{
	uint64_t slot = pa >> mem->shift;
	if (slot == 0 || slot > mem->nr_nodes)
		return -1;
	if ((pa & ((1ull << mem->shift) - 1)) >= mem->node_bytes)
		return -1;
	return (int)(slot - 1);
}

/* Zero freshly allocated simulated memory and charge the write to its home node. */
void mem_zero(struct ilab_mem *mem, ilab_pa_t pa, uint64_t bytes);
/* Page allocator internals shared with coherent.c (no statistics counted here). */
int mem_pages_alloc(struct ilab_mem *mem, int node, unsigned order, ilab_pa_t *pa);
int mem_pages_free(struct ilab_mem *mem, ilab_pa_t pa, unsigned order);
/* Resolve "node < 0 = calling CPU's node" and check the node exists. */
int mem_pick_node(const struct ilab_mem *mem, int node);

#endif /* IOMMULAB_MEM_INTERNAL_H */
