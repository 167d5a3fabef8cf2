/* mem.c — the simulated physical address space: one range per NUMA node with sparse host
 * backing, config validation, CMA carve-out at creation, and the bounds-checked accessors.
 * It is not an allocator: pages.c and coherent.c hand out memory, buddy.c and cma.c keep
 * the books.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "iommulab/plat.h"
#include "mem/mem_internal.h"

/* Allocations at least this big are zeroed by dropping their host pages (they read back as
 * zero, and cost no host memory until touched) instead of memset. */
#define ZERO_BY_DISCARD_BYTES (256u << 10)

static _Thread_local char mem_errmsg[256];

int mem_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mem_errmsg, sizeof(mem_errmsg), fmt, ap);
	va_end(ap);
	return err;
}

const char *ilab_mem_strerror(void)
{
	return mem_errmsg[0] ? mem_errmsg : "no error";
}

void *mem_host_map(uint64_t bytes)
{
	if (!bytes)
		bytes = 1;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* With THP "always", one touched byte could cost a 2 MiB host page: keep the promise
	 * that untouched simulated memory costs nothing at 4 KiB granularity. */
	madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

void mem_host_unmap(void *p, uint64_t bytes)
{
	if (p)
		munmap(p, bytes ? bytes : 1);
}

static uint64_t host_page_size(void)
{
	long v = sysconf(_SC_PAGESIZE);
	return v > 0 ? (uint64_t)v : 4096;
}

/* ---- configuration --------------------------------------------------------------------- */

static uint64_t round_pageblock(uint64_t bytes)
{
	return (bytes + ILAB_MEM_NODE_ALIGN - 1) & ~(ILAB_MEM_NODE_ALIGN - 1);
}

static bool node_has_own_area(const struct ilab_mem_config *c, unsigned n)
{
	if (c->cma == ILAB_CMA_PERNUMA)
		return true;
	return c->cma == ILAB_CMA_LISTED && ((c->cma_nodes_mask >> n) & 1);
}

static bool has_global_area(const struct ilab_mem_config *c)
{
	return c->cma != ILAB_CMA_NONE && c->cma_global_bytes > 0;
}

static int validate(const struct ilab_mem_config *c)
{
	if (c->nr_nodes < 1 || c->nr_nodes > ILAB_MEM_MAX_NODES)
		return mem_error(-EINVAL, "mem: nr_nodes %u is not in 1..%d", c->nr_nodes,
				 ILAB_MEM_MAX_NODES);
	if (!c->node_bytes || c->node_bytes % ILAB_MEM_NODE_ALIGN ||
	    c->node_bytes > ILAB_MEM_MAX_NODE_BYTES)
		return mem_error(-EINVAL,
				 "mem: node_bytes %llu must be a non-zero multiple of 2 MiB, at "
				 "most 1 TiB",
				 (unsigned long long)c->node_bytes);
	switch (c->cma) {
	case ILAB_CMA_NONE:
		return 0;
	case ILAB_CMA_GLOBAL:
		if (!c->cma_global_bytes)
			return mem_error(-EINVAL, "mem: CMA mode global needs cma_global_bytes > 0");
		break;
	case ILAB_CMA_PERNUMA:
	case ILAB_CMA_LISTED:
		if (!c->cma_node_bytes)
			return mem_error(-EINVAL, "mem: CMA mode %s needs cma_node_bytes > 0",
					 c->cma == ILAB_CMA_PERNUMA ? "pernuma" : "listed");
		break;
	default:
		return mem_error(-EINVAL, "mem: unknown CMA mode %d", (int)c->cma);
	}
	if (c->cma == ILAB_CMA_LISTED) {
		uint64_t valid = c->nr_nodes == 64 ? ~0ull : (1ull << c->nr_nodes) - 1;
		if (!c->cma_nodes_mask)
			return mem_error(-EINVAL, "mem: CMA mode listed needs a non-empty node list");
		if (c->cma_nodes_mask & ~valid)
			return mem_error(-EINVAL,
					 "mem: cma_nodes_mask 0x%llx names a node >= nr_nodes %u",
					 (unsigned long long)c->cma_nodes_mask, c->nr_nodes);
	}
	if (has_global_area(c) &&
	    (c->cma_global_node < 0 || (unsigned)c->cma_global_node >= c->nr_nodes))
		return mem_error(-EINVAL, "mem: cma_global_node %d is not in 0..%u",
				 c->cma_global_node, c->nr_nodes - 1);
	/* Sizes are compared before rounding too, so a huge value cannot wrap around. */
	if (c->cma_global_bytes > c->node_bytes ||
	    (c->cma != ILAB_CMA_GLOBAL && c->cma_node_bytes > c->node_bytes))
		return mem_error(-EINVAL, "mem: a CMA area is larger than a node (%llu bytes)",
				 (unsigned long long)c->node_bytes);
	for (unsigned n = 0; n < c->nr_nodes; n++) {
		uint64_t need = 0;
		if (has_global_area(c) && (unsigned)c->cma_global_node == n)
			need += round_pageblock(c->cma_global_bytes);
		if (node_has_own_area(c, n))
			need += round_pageblock(c->cma_node_bytes);
		if (need > c->node_bytes)
			return mem_error(-EINVAL,
					 "mem: CMA areas on node %u need %llu bytes, the node has %llu",
					 n, (unsigned long long)need,
					 (unsigned long long)c->node_bytes);
	}
	return 0;
}

/* ---- creation ------------------------------------------------------------------------------ */

static int add_area(struct cma_area **slot, const char *name, int node, ilab_pa_t base,
		    uint64_t bytes)
{
	struct cma_area *a = calloc(1, sizeof(*a));

	if (!a || cma_area_init(a, name, node, base, bytes)) {
		free(a);
		return mem_error(-ENOMEM, "mem: no host memory for CMA area %s", name);
	}
	*slot = a;
	return 0;
}

/* Carve the node's areas from its top, global area topmost (Linux reserves CMA top-down
 * with memblock), and give the rest to the buddy allocator. */
static int setup_node(struct ilab_mem *mem, unsigned n)
{
	const struct ilab_mem_config *c = &mem->cfg;
	struct mem_node *node = &mem->node[n];
	ilab_pa_t top = node->base + mem->node_bytes;
	uint64_t carved = 0;
	char name[24];
	int ret;

	node->host = mem_host_map(mem->node_bytes);
	if (!node->host)
		return mem_error(-ENOMEM, "mem: cannot map %llu bytes of host address space for "
					  "node %u",
				 (unsigned long long)mem->node_bytes, n);
	if (has_global_area(c) && (unsigned)c->cma_global_node == n) {
		carved += round_pageblock(c->cma_global_bytes);
		ret = add_area(&mem->global, "reserved", (int)n, top - carved,
			       round_pageblock(c->cma_global_bytes));
		if (ret)
			return ret;
	}
	if (node_has_own_area(c, n)) {
		uint64_t sz = round_pageblock(c->cma_node_bytes);
		carved += sz;
		snprintf(name, sizeof(name), "%s%u", c->cma == ILAB_CMA_PERNUMA ? "pernuma" : "numa",
			 n);
		ret = add_area(&node->area, name, (int)n, top - carved, sz);
		if (ret)
			return ret;
	}
	if (buddy_init(&node->buddy, (mem->node_bytes - carved) >> ILAB_PAGE_SHIFT))
		return mem_error(-ENOMEM, "mem: no host memory for node %u's page allocator", n);
	node->buddy_ready = true;
	return 0;
}

int ilab_mem_create(const struct ilab_mem_config *cfg, struct ilab_mem **out)
{
	struct ilab_mem *mem;
	int ret;

	if (!cfg || !out)
		return mem_error(-EINVAL, "mem: NULL config or result pointer");
	*out = NULL;
	ret = validate(cfg);
	if (ret)
		return ret;
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return mem_error(-ENOMEM, "mem: out of host memory");
	mem->cfg = *cfg;
	mem->nr_nodes = cfg->nr_nodes;
	mem->node_bytes = cfg->node_bytes;
	mem->host_page = host_page_size();
	mem->shift = 21;
	while ((1ull << mem->shift) < cfg->node_bytes)
		mem->shift++;
	for (unsigned n = 0; n < mem->nr_nodes; n++)
		mem->node[n].base = (ilab_pa_t)(n + 1) << mem->shift;
	for (unsigned n = 0; n < mem->nr_nodes; n++) {
		ret = setup_node(mem, n);
		if (ret) {
			/* Keep the message of the failure, not of the clean-up. */
			ilab_mem_destroy(mem);
			return ret;
		}
	}
	*out = mem;
	return 0;
}

void ilab_mem_destroy(struct ilab_mem *mem)
{
	if (!mem)
		return;
	for (unsigned n = 0; n < mem->nr_nodes; n++) {
		struct mem_node *node = &mem->node[n];
		if (node->buddy_ready)
			buddy_fini(&node->buddy);
		if (node->area) {
			cma_area_fini(node->area);
			free(node->area);
		}
		mem_host_unmap(node->host, mem->node_bytes);
	}
	if (mem->global) {
		cma_area_fini(mem->global);
		free(mem->global);
	}
	if (mem->low.release)
		mem->low.release(mem->low.owner);
	mem_host_unmap(mem->low_host, mem->low.bytes);
	free(mem);
}

struct ilab_mem_low *ilab_mem_low_reserve(struct ilab_mem *mem, uint64_t bytes)
{
	const uint64_t four_g = 1ull << 32;
	uint64_t top, room;

	if (!mem) {
		mem_error(-EINVAL, "mem: NULL memory");
		return NULL;
	}
	if (mem->low.bytes)
		return &mem->low;
	top = (1ull << mem->shift) < four_g ? 1ull << mem->shift : four_g;
	room = top - ILAB_MEM_NODE_ALIGN; /* keep [0, 2 MiB) a hole */
	if (bytes > room)
		bytes = room;
	bytes &= ~(ILAB_MEM_NODE_ALIGN - 1);
	if (!bytes) {
		mem_error(-ENOSPC, "mem: no room below 4 GiB for a low reservation (node 0 starts "
				   "at 0x%llx)", (unsigned long long)(1ull << mem->shift));
		return NULL;
	}
	mem->low_host = mem_host_map(bytes);
	if (!mem->low_host) {
		mem_error(-ENOMEM, "mem: cannot map %llu bytes of host address space below 4 GiB",
			  (unsigned long long)bytes);
		return NULL;
	}
	mem->low.base = top - bytes;
	mem->low.bytes = bytes;
	return &mem->low;
}

/* ---- address space queries and accessors ------------------------------------------------ */

unsigned ilab_mem_nr_nodes(const struct ilab_mem *mem)
{
	return mem ? mem->nr_nodes : 0;
}

int ilab_mem_node_range(const struct ilab_mem *mem, int node, ilab_pa_t *base, uint64_t *bytes)
{
	if (!mem || node < 0 || (unsigned)node >= mem->nr_nodes)
		return mem_error(-EINVAL, "mem: no node %d", node);
	if (base)
		*base = mem->node[node].base;
	if (bytes)
		*bytes = mem->node_bytes;
	return 0;
}

static inline bool in_low(const struct ilab_mem *mem, ilab_pa_t pa)
{
	return pa - mem->low.base < mem->low.bytes; /* false while there is none (bytes 0) */
}

int ilab_mem_node_of(const struct ilab_mem *mem, ilab_pa_t pa)
{
	if (mem && plat_unlikely(in_low(mem, pa)))
		return 0;
	return mem ? mem_node_index(mem, pa) : -1;
}

/* Host pointer for [pa, pa + len) if it lies inside one node (or the low reservation), else
 * NULL. len 0 asks only whether pa itself is memory. */
static inline uint8_t *range_va(struct ilab_mem *mem, ilab_pa_t pa, size_t len, int *node)
{
	int n = mem_node_index(mem, pa);
	if (plat_unlikely(n < 0)) {
		uint64_t off = pa - mem->low.base;

		if (!in_low(mem, pa) || len > mem->low.bytes - off)
			return NULL;
		*node = 0;
		return mem->low_host + off;
	}
	uint64_t off = pa - mem->node[n].base;
	if (len > mem->node_bytes - off)
		return NULL;
	*node = n;
	return mem->node[n].host + off;
}

void *ilab_mem_va(struct ilab_mem *mem, ilab_pa_t pa, size_t len)
{
	int node = -1;
	return mem ? range_va(mem, pa, len, &node) : NULL;
}

int ilab_mem_read(struct ilab_mem *mem, ilab_pa_t pa, void *buf, size_t len)
{
	int node = -1;
	uint8_t *src = plat_unlikely(!mem) ? NULL : range_va(mem, pa, len, &node);

	if (plat_unlikely(!src))
		return mem_error(-EFAULT, "mem: read of %zu bytes at PA 0x%llx is outside memory",
				 len, (unsigned long long)pa);
	memcpy(buf, src, len);
	plat_mem_access(node, len, false);
	return 0;
}

int ilab_mem_write(struct ilab_mem *mem, ilab_pa_t pa, const void *buf, size_t len)
{
	int node = -1;
	uint8_t *dst = plat_unlikely(!mem) ? NULL : range_va(mem, pa, len, &node);

	if (plat_unlikely(!dst))
		return mem_error(-EFAULT, "mem: write of %zu bytes at PA 0x%llx is outside memory",
				 len, (unsigned long long)pa);
	memcpy(dst, buf, len);
	plat_mem_access(node, len, true);
	return 0;
}

/* ---- shared helpers for the allocators ------------------------------------------------- */

void mem_zero(struct ilab_mem *mem, ilab_pa_t pa, uint64_t bytes)
{
	int node = mem_node_index(mem, pa);
	uint8_t *p = mem->node[node].host + (pa - mem->node[node].base);
	uint64_t hp = mem->host_page;

	/* MADV_DONTNEED on a private anonymous mapping makes the range read back as zeros and
	 * releases its host pages; it needs host-page alignment (64 KiB pages on some hosts). */
	if (bytes < ZERO_BY_DISCARD_BYTES || ((uintptr_t)p | bytes) & (hp - 1) ||
	    madvise(p, bytes, MADV_DONTNEED))
		memset(p, 0, bytes);
	/* The modelled kernel clears the memory: a write of every byte to the home node. */
	plat_mem_access(node, bytes, true);
}

int mem_pick_node(const struct ilab_mem *mem, int node)
{
	if (node < 0)
		node = plat_this_node();
	if (node < 0 || (unsigned)node >= mem->nr_nodes)
		return mem_error(-EINVAL, "mem: node %d has no memory (%u nodes)", node,
				 mem->nr_nodes);
	return node;
}

/* ---- statistics -------------------------------------------------------------------------- */

/* Host pages resident in [p, p + bytes), by mincore() in chunks. */
static uint64_t resident_bytes(const uint8_t *p, uint64_t bytes, uint64_t hp)
{
	enum { VEC = 64 * 1024 };
	static _Thread_local unsigned char vec[VEC];
	uint64_t total = 0;

	for (uint64_t off = 0; off < bytes;) {
		uint64_t len = bytes - off;
		if (len > (uint64_t)VEC * hp)
			len = (uint64_t)VEC * hp;
		if (mincore((void *)(p + off), len, vec) == 0) {
			uint64_t pages = (len + hp - 1) / hp;
			for (uint64_t i = 0; i < pages; i++)
				total += vec[i] & 1;
		}
		off += len;
	}
	return total * hp;
}

void ilab_mem_get_stats(struct ilab_mem *mem, struct ilab_mem_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!mem)
		return;
	for (unsigned n = 0; n < mem->nr_nodes; n++) {
		struct mem_node *node = &mem->node[n];
		st->node_pages_total[n] = node->buddy.npages;
		st->node_pages_free[n] = buddy_nr_free(&node->buddy);
		if (node->area) {
			st->cma_bytes_total[n] = node->area->npages << ILAB_PAGE_SHIFT;
			st->cma_bytes_used[n] = cma_area_used_bytes(node->area);
		}
		st->host_bytes_resident += resident_bytes(node->host, mem->node_bytes, mem->host_page);
	}
	if (mem->global) {
		st->cma_bytes_total[mem->nr_nodes] = mem->global->npages << ILAB_PAGE_SHIFT;
		st->cma_bytes_used[mem->nr_nodes] = cma_area_used_bytes(mem->global);
	}
	for (int i = 0; i < 4; i++)
		st->coherent_allocs[i] = atomic_load(&mem->coherent_allocs[i]);
	st->alloc_failures = atomic_load(&mem->alloc_failures);
	st->bad_frees = atomic_load(&mem->bad_frees);
}
