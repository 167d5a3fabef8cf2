/* buddy.c — the page allocator of one node: a binary buddy system over 4 KiB pages, orders
 * 0..ILAB_MEM_MAX_ORDER-1, like Linux's mm/page_alloc.c without zones, migratetypes or pcp
 * lists. It is not the node's address space: it deals in page indexes relative to the node,
 * and keeps all its metadata in host memory (never in the simulated memory it manages).
 *
 * Metadata is sparse: per-page arrays are mapped MAP_NORESERVE and only the entries of block
 * heads are ever written; pages above the watermark `wm` have never been handed out and are
 * implicitly free, so a 64 GiB node costs no host memory until it is used.
 */
#include <errno.h>
#include <string.h>

#include "mem/mem_internal.h"

#define BUDDY_FREE 0x40u
#define BUDDY_ALLOC 0x80u
#define BUDDY_ORDER_MASK 0x3fu
#define TOP_ORDER (ILAB_MEM_MAX_ORDER - 1)

static void list_push(struct buddy *b, uint64_t idx, unsigned order)
{
	uint32_t h = b->head[order];

	b->next[idx] = h;
	b->prev[idx] = BUDDY_NIL;
	if (h != BUDDY_NIL)
		b->prev[h] = (uint32_t)idx;
	b->head[order] = (uint32_t)idx;
	b->tag[idx] = (uint8_t)(BUDDY_FREE | order);
}

static void list_del(struct buddy *b, uint64_t idx, unsigned order)
{
	uint32_t n = b->next[idx], p = b->prev[idx];

	if (p != BUDDY_NIL)
		b->next[p] = n;
	else
		b->head[order] = n;
	if (n != BUDDY_NIL)
		b->prev[n] = p;
	b->tag[idx] = 0;
}

int buddy_init(struct buddy *b, uint64_t npages)
{
	memset(b, 0, sizeof(*b));
	for (unsigned o = 0; o < ILAB_MEM_MAX_ORDER; o++)
		b->head[o] = BUDDY_NIL;
	b->npages = npages;
	b->nr_free = npages;
	if (pthread_mutex_init(&b->lock, NULL))
		return -ENOMEM;
	if (!npages)
		return 0;
	b->next = mem_host_map(npages * sizeof(uint32_t));
	b->prev = mem_host_map(npages * sizeof(uint32_t));
	b->tag = mem_host_map(npages);
	if (!b->next || !b->prev || !b->tag) {
		buddy_fini(b);
		return -ENOMEM;
	}
	return 0;
}

void buddy_fini(struct buddy *b)
{
	mem_host_unmap(b->next, b->npages * sizeof(uint32_t));
	mem_host_unmap(b->prev, b->npages * sizeof(uint32_t));
	mem_host_unmap(b->tag, b->npages);
	b->next = b->prev = NULL;
	b->tag = NULL;
	pthread_mutex_destroy(&b->lock);
}

/* Move pages from the implicit region into the free lists: one top-order block while one
 * fits, then the tail as the largest aligned blocks (Linux frees boot memory the same way). */
static bool grow(struct buddy *b)
{
	uint64_t top = 1ull << TOP_ORDER;

	if (b->wm >= b->npages)
		return false;
	if (b->npages - b->wm >= top) {
		list_push(b, b->wm, TOP_ORDER);
		b->wm += top;
		return true;
	}
	while (b->wm < b->npages) {
		unsigned o = TOP_ORDER;
		while ((b->wm & ((1ull << o) - 1)) || b->wm + (1ull << o) > b->npages)
			o--;
		list_push(b, b->wm, o);
		b->wm += 1ull << o;
	}
	return true;
}

int64_t buddy_alloc(struct buddy *b, unsigned order)
{
	int64_t got = -1;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		unsigned o = order;
		while (o < ILAB_MEM_MAX_ORDER && b->head[o] == BUDDY_NIL)
			o++;
		if (o < ILAB_MEM_MAX_ORDER) {
			uint64_t idx = b->head[o];
			list_del(b, idx, o);
			/* Keep the lower half, give back the upper halves (Linux's expand()). */
			while (o > order) {
				o--;
				list_push(b, idx + (1ull << o), o);
			}
			b->tag[idx] = (uint8_t)(BUDDY_ALLOC | order);
			b->nr_free -= 1ull << order;
			got = (int64_t)idx;
			break;
		}
		if (!grow(b))
			break;
	}
	pthread_mutex_unlock(&b->lock);
	return got;
}

int buddy_free(struct buddy *b, uint64_t idx, unsigned order)
{
	if (order >= ILAB_MEM_MAX_ORDER || idx >= b->npages || (idx & ((1ull << order) - 1)))
		return -EINVAL;

	pthread_mutex_lock(&b->lock);
	/* Only the head of a live block of exactly this order carries this tag: a double free,
	 * a wrong order or a pointer into the middle of a block all fail here. */
	if (b->tag[idx] != (BUDDY_ALLOC | order)) {
		pthread_mutex_unlock(&b->lock);
		return -EINVAL;
	}
	b->tag[idx] = 0;
	b->nr_free += 1ull << order;
	while (order < TOP_ORDER) {
		uint64_t buddy = idx ^ (1ull << order);
		if (buddy >= b->wm || b->tag[buddy] != (BUDDY_FREE | order))
			break;
		list_del(b, buddy, order);
		idx &= ~(1ull << order);
		order++;
	}
	list_push(b, idx, order);
	pthread_mutex_unlock(&b->lock);
	return 0;
}

uint64_t buddy_nr_free(struct buddy *b)
{
	pthread_mutex_lock(&b->lock);
	uint64_t n = b->nr_free;
	pthread_mutex_unlock(&b->lock);
	return n;
}
