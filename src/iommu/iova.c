/* iova.c — the IOVA allocator: an rbtree of allocated ranges searched top-down from a cached
 * node, and the per-CPU magazine caches (rcaches) with their depots, after Linux iova.c.
 * It is not dma-iommu: it neither maps nor flushes anything; it only hands out pfn ranges.
 *
 * Linux facts followed (see docs/iova.md): natural (power-of-two) alignment from fls(size-1),
 * cached32/cached nodes with the max32_alloc_size fast-fail, a retry above the cached node,
 * 6 cache classes of 127-pfn magazines, loaded/prev per CPU, a depot per class whose policy is
 * the v6.7+ list with delayed reclaim (default) or the <= v6.6 fixed array of 32.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/iova.h>

#include "iommu/rbtree.h"
#include "iommulab/plat.h"

#define IOVA_ANCHOR (~0ull)

/* ---- rcache structures ----------------------------------------------------------------- */

struct iova_magazine {
	union {
		uint64_t size;             /* while in a CPU's hands */
		struct iova_magazine *next; /* while in the depot (then it is full) */
	};
	uint64_t pfns[ILAB_IOVA_MAG_SIZE_MAX];
};
/* Room for the <= 5.19 magazine of 128 pfns; how many are used is the domain's mag_size
 * (127 from Linux 6.0, Feng Tang's "change IOVA_MAG_SIZE to 127 to save memory", which made
 * the magazine exactly 1 KiB). Magazines are host memory: the simulator charges the fast
 * path by name (PLAT_CHARGE_IOVA_*), not by line, so the 8 bytes more change no figure. */
_Static_assert(sizeof(struct iova_magazine) == 8 * (1 + ILAB_IOVA_MAG_SIZE_MAX),
	       "magazine: a header and ILAB_IOVA_MAG_SIZE_MAX pfns");

struct iova_cpu_rcache {
	plat_spinlock lock;
	struct iova_magazine *loaded;
	struct iova_magazine *prev;
	/* statistics, under lock */
	uint64_t hits, misses, frees, free_fallbacks;
};

/* One CPU's caches for all classes (one plat per-CPU element). */
struct iova_cpu_rcaches {
	struct iova_cpu_rcache c[ILAB_IOVA_RANGE_CACHE_MAX_SIZE];
};

struct ilab_iova_rcache {
	plat_spinlock lock;
	struct iova_magazine *depot; /* full magazines, LIFO */
	uint64_t depot_size, depot_max;
	uint64_t next_reclaim_ns;    /* LIST mode: when the emulated delayed work runs; 0 = idle */
	uint64_t reclaims;
};

static inline struct ilab_iova *to_iova(struct ilab_rb_node *n)
{
	return ilab_rb_entry(n, struct ilab_iova, node);
}

/* Simulation: the walk's one dependent load of a tree node (its pfns and links), charged from
 * where the node's line is: a hit if this CPU read it since anyone last wrote it, a transfer
 * if another CPU wrote it last (an insert or erase there), memory on a first fill. One line
 * per node: Linux's iova kmem_cache is SLAB_HWCACHE_ALIGN. The instructions and the writes of
 * insert/erase stay in compute.iova_rbtree_ns; what grows with the tree and with its
 * fragmentation is the number of nodes visited. No-op natively. Nodes come from
 * plat_zalloc_array (line-aligned, and fresh to the simulator): a node must not inherit the
 * line state of whatever host object malloc last put at its address, or its first access
 * would cost what the heap's history makes it and figures would change between runs. */
static inline void visit_node(const struct ilab_rb_node *n)
{
	plat_mem_touch(n, 1, false);
}

static unsigned fls64_(uint64_t x)
{
	return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

/* order_base_2: smallest o with (1 << o) >= n. */
static unsigned order_base_2_(uint64_t n)
{
	return n <= 1 ? 0u : fls64_(n - 1);
}

static uint64_t iova_size(const struct ilab_iova *iova)
{
	return iova->pfn_hi - iova->pfn_lo + 1;
}

/* The size a fast allocation of `size` really takes (alloc_iova_fast rounds small sizes). */
static uint64_t fast_size(uint64_t size)
{
	if (size < (1u << (ILAB_IOVA_RANGE_CACHE_MAX_SIZE - 1)))
		return 1ull << order_base_2_(size);
	return size;
}

/* ---- rbtree part ----------------------------------------------------------------------- */

static struct ilab_rb_node *get_cached_rbnode(struct ilab_iova_domain *iovad, uint64_t limit_pfn)
{
	if (limit_pfn <= iovad->dma_32bit_pfn)
		return iovad->cached32_node;
	return iovad->cached_node;
}

static void cached_rbnode_insert_update(struct ilab_iova_domain *iovad, struct ilab_iova *new)
{
	if (new->pfn_hi < iovad->dma_32bit_pfn)
		iovad->cached32_node = &new->node;
	else
		iovad->cached_node = &new->node;
}

/* A freed node must not stay a search start: move the cache to its successor when the freed
 * range is the cached node or lies above it (so the gap it leaves is seen by later searches). */
static void cached_rbnode_delete_update(struct ilab_iova_domain *iovad, struct ilab_iova *free)
{
	struct ilab_iova *cached = to_iova(iovad->cached32_node);

	if (free == cached ||
	    (free->pfn_hi < iovad->dma_32bit_pfn && free->pfn_lo >= cached->pfn_lo))
		iovad->cached32_node = ilab_rb_next(&free->node);
	if (free->pfn_lo < iovad->dma_32bit_pfn)
		iovad->max32_alloc_size = iovad->dma_32bit_pfn;
	cached = to_iova(iovad->cached_node);
	if (free->pfn_lo >= cached->pfn_lo)
		iovad->cached_node = ilab_rb_next(&free->node);
}

/* Insert by pfn_lo; returns false if a node with the same pfn_lo exists. */
static bool iova_insert_rbtree(struct ilab_rb_root *root, struct ilab_iova *iova)
{
	struct ilab_rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		struct ilab_iova *this = to_iova(*link);

		visit_node(*link);
		parent = *link;
		if (iova->pfn_lo < this->pfn_lo)
			link = &(*link)->left;
		else if (iova->pfn_lo > this->pfn_lo)
			link = &(*link)->right;
		else
			return false;
	}
	ilab_rb_link_node(&iova->node, parent, link);
	ilab_rb_insert_color(&iova->node, root);
	return true;
}

/* First node whose pfn_lo >= limit_pfn (the anchor guarantees one exists). Searching downward
 * from here covers every gap below the limit. */
static struct ilab_rb_node *iova_find_limit(struct ilab_iova_domain *iovad, uint64_t limit_pfn)
{
	struct ilab_rb_node *n = iovad->rbroot.node, *best = &iovad->anchor.node;

	while (n) {
		visit_node(n);
		if (to_iova(n)->pfn_lo >= limit_pfn) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best;
}

/* First node whose pfn_hi >= pfn (ranges are disjoint, so pfn_hi is sorted too). */
static struct ilab_iova *lower_bound_hi(struct ilab_iova_domain *iovad, uint64_t pfn)
{
	struct ilab_rb_node *n = iovad->rbroot.node, *best = NULL;

	while (n) {
		if (to_iova(n)->pfn_hi >= pfn) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best ? to_iova(best) : NULL;
}

static struct ilab_iova *private_find_iova(struct ilab_iova_domain *iovad, uint64_t pfn)
{
	struct ilab_rb_node *n = iovad->rbroot.node;

	while (n) {
		struct ilab_iova *iova = to_iova(n);

		visit_node(n);
		if (pfn < iova->pfn_lo)
			n = n->left;
		else if (pfn > iova->pfn_hi)
			n = n->right;
		else
			return iova;
	}
	return NULL;
}

/* Top-down search for `size` pfns below limit_pfn (exclusive). Called with the tree lock. */
static int alloc_and_insert_iova_range(struct ilab_iova_domain *iovad, uint64_t size,
				       uint64_t limit_pfn, struct ilab_iova *new, bool size_aligned)
{
	struct ilab_rb_node *curr, *prev;
	struct ilab_iova *curr_iova;
	uint64_t high_pfn = limit_pfn, low_pfn = iovad->start_pfn;
	uint64_t new_pfn, retry_pfn;
	uint64_t align_mask = ~0ull;

	if (size_aligned)
		align_mask <<= fls64_(size - 1);

	/* A 32-bit allocation at least as large as one that just failed will fail too. */
	if (limit_pfn <= iovad->dma_32bit_pfn && size >= iovad->max32_alloc_size)
		return -ENOMEM;

	plat_charge(PLAT_CHARGE_IOVA_RBTREE); /* simulation: the search and insert, lock held */
	curr = get_cached_rbnode(iovad, limit_pfn);
	visit_node(curr);
	curr_iova = to_iova(curr);
	retry_pfn = curr_iova->pfn_hi;

retry:
	do {
		if (curr_iova->pfn_lo < high_pfn)
			high_pfn = curr_iova->pfn_lo;
		new_pfn = (high_pfn - size) & align_mask;
		prev = curr;
		curr = ilab_rb_prev(curr);
		curr_iova = curr ? to_iova(curr) : NULL;
		if (curr)
			visit_node(curr); /* each range passed: linear below a fragmented cache */
	} while (curr && new_pfn <= curr_iova->pfn_hi && new_pfn >= low_pfn);

	if (high_pfn < size || new_pfn < low_pfn) {
		/* The cached node may sit below the limit: search once more above it. */
		if (low_pfn == iovad->start_pfn && retry_pfn < limit_pfn) {
			high_pfn = limit_pfn;
			low_pfn = retry_pfn + 1;
			curr = iova_find_limit(iovad, limit_pfn);
			curr_iova = to_iova(curr);
			goto retry;
		}
		iovad->max32_alloc_size = size;
		return -ENOMEM;
	}
	(void)prev; /* Linux uses prev as an insertion hint; we insert from the root */

	new->pfn_lo = new_pfn;
	new->pfn_hi = new_pfn + size - 1;
	new->cached = false;
	plat_mem_touch(new, 1, true); /* simulation: the new node's line is this CPU's */
	iova_insert_rbtree(&iovad->rbroot, new);
	cached_rbnode_insert_update(iovad, new);
	return 0;
}

static void remove_iova(struct ilab_iova_domain *iovad, struct ilab_iova *iova)
{
	cached_rbnode_delete_update(iovad, iova);
	ilab_rb_erase(&iova->node, &iovad->rbroot);
}

struct ilab_iova *ilab_alloc_iova(struct ilab_iova_domain *iovad, uint64_t size_pfns,
				  uint64_t limit_pfn, bool size_aligned)
{
	struct ilab_iova *new;
	int ret;

	if (!iovad || size_pfns == 0 || size_pfns > (1ull << 52) || limit_pfn < iovad->start_pfn)
		return NULL;
	if (limit_pfn >= IOVA_ANCHOR - 1)
		limit_pfn = IOVA_ANCHOR - 2;
	new = plat_zalloc_array(1, sizeof(*new)); /* line-aligned and fresh: iova kmem_cache */
	if (!new)
		return NULL;
	plat_spin_lock(&iovad->iova_rbtree_lock);
	ret = alloc_and_insert_iova_range(iovad, size_pfns, limit_pfn + 1, new, size_aligned);
	if (ret)
		iovad->rbtree_alloc_failures++;
	else
		iovad->rbtree_allocs++;
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	if (ret) {
		free(new);
		return NULL;
	}
	return new;
}

struct ilab_iova *ilab_find_iova(struct ilab_iova_domain *iovad, uint64_t pfn)
{
	struct ilab_iova *iova;

	if (!iovad || pfn == IOVA_ANCHOR)
		return NULL;
	plat_spin_lock(&iovad->iova_rbtree_lock);
	iova = private_find_iova(iovad, pfn);
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	return iova;
}

/* Remove and free the node starting at pfn; tree lock held. `from_cache` is set when the pfn
 * comes out of a magazine (then the node is expected to be marked cached). */
static int free_locked(struct ilab_iova_domain *iovad, uint64_t pfn, bool from_cache)
{
	struct ilab_iova *iova;

	plat_charge(PLAT_CHARGE_IOVA_RBTREE); /* simulation: the lookup and erase, lock held */
	iova = private_find_iova(iovad, pfn);
	if (!iova || iova == &iovad->anchor || iova->pfn_lo != pfn) {
		iovad->free_errors++;
		return -ENOENT;
	}
	if (!from_cache && iova->cached) {
		/* It is in a magazine: freeing it now would let the cache hand it out again. */
		iovad->free_errors++;
		return -EBUSY;
	}
	remove_iova(iovad, iova);
	iovad->rbtree_frees++;
	free(iova);
	return 0;
}

int ilab_free_iova(struct ilab_iova_domain *iovad, uint64_t pfn)
{
	int ret;

	if (!iovad)
		return -EINVAL;
	plat_spin_lock(&iovad->iova_rbtree_lock);
	ret = free_locked(iovad, pfn, false);
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	return ret;
}

int ilab_reserve_iova(struct ilab_iova_domain *iovad, uint64_t pfn_lo, uint64_t pfn_hi)
{
	struct ilab_iova *iova, *next;
	int ret = 0;

	if (!iovad || pfn_lo > pfn_hi || pfn_hi >= IOVA_ANCHOR)
		return -EINVAL;
	iova = plat_zalloc_array(1, sizeof(*iova));
	if (!iova)
		return -ENOMEM;
	iova->pfn_lo = pfn_lo;
	iova->pfn_hi = pfn_hi;
	iova->cached = false;
	plat_spin_lock(&iovad->iova_rbtree_lock);
	next = lower_bound_hi(iovad, pfn_lo);
	if (next && next != &iovad->anchor && next->pfn_lo <= pfn_hi)
		ret = -EBUSY;
	else
		iova_insert_rbtree(&iovad->rbroot, iova);
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	if (ret)
		free(iova);
	return ret;
}

/* ---- magazines --------------------------------------------------------------------------- */

static struct iova_magazine *iova_magazine_alloc(void)
{
	return plat_zalloc_array(1, sizeof(struct iova_magazine));
}

static bool mag_full(const struct ilab_iova_domain *iovad, const struct iova_magazine *mag)
{
	return mag->size == iovad->mag_size;
}

static bool mag_empty(const struct iova_magazine *mag)
{
	return mag->size == 0;
}

/* Take the topmost pfn that still fits below the limit (pfn <= max_pfn); 0 if none. */
static uint64_t mag_pop(struct iova_magazine *mag, uint64_t max_pfn)
{
	uint64_t i, pfn;

	for (i = mag->size; i-- > 0;) {
		if (mag->pfns[i] <= max_pfn) {
			pfn = mag->pfns[i];
			mag->pfns[i] = mag->pfns[--mag->size];
			return pfn;
		}
	}
	return 0;
}

static void mag_push(struct iova_magazine *mag, uint64_t pfn)
{
	mag->pfns[mag->size++] = pfn;
}

/* Return a magazine's pfns to the tree. */
static void mag_free_pfns(struct ilab_iova_domain *iovad, struct iova_magazine *mag)
{
	uint64_t i;

	plat_spin_lock(&iovad->iova_rbtree_lock);
	for (i = 0; i < mag->size; i++)
		free_locked(iovad, mag->pfns[i], true);
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	mag->size = 0;
}

static struct iova_magazine *depot_pop(const struct ilab_iova_domain *iovad,
				       struct ilab_iova_rcache *rcache)
{
	struct iova_magazine *mag = rcache->depot;

	rcache->depot = mag->next;
	mag->size = iovad->mag_size;
	rcache->depot_size--;
	return mag;
}

static void depot_push(struct ilab_iova_rcache *rcache, struct iova_magazine *mag)
{
	mag->next = rcache->depot;
	rcache->depot = mag;
	rcache->depot_size++;
	if (rcache->depot_size > rcache->depot_max)
		rcache->depot_max = rcache->depot_size;
}

static struct iova_cpu_rcache *this_cpu_rcache(struct ilab_iova_domain *iovad, unsigned cls)
{
	struct iova_cpu_rcaches *all = plat_this_cpu_ptr(iovad->cpu_rcaches);

	return &all->c[cls];
}

/* The delayed work of v6.7+ (iova_depot_work_func), run for every period that has passed.
 * Linux arms it (schedule_delayed_work, a no-op while pending) on every push; when it runs it
 * gives one magazine back to the tree if the depot holds more than one per CPU, and then
 * re-arms itself 100 ms later; otherwise it stays idle until the next push. It runs on its
 * timer whether or not anything is pushed: a depot filled by a burst drains one magazine per
 * period while the CPUs only allocate (from the tree) or are idle.
 * Here it runs when its effect can first be seen by the DMA path: at the depot's next push or
 * pop attempt (every allocation that misses both CPU magazines looks at the depot first),
 * with every period due by then, so its cost is the accessing CPU's where Linux charges a
 * kworker. Statistics read in between show the depot as the last access left it. Called with the depot lock held; the magazines taken are
 * chained on *out (full, through next) to be given back after the lock is dropped. */
static void depot_work_catch_up(struct ilab_iova_domain *iovad, struct ilab_iova_rcache *rcache,
				uint64_t now, struct iova_magazine **out)
{
	while (rcache->next_reclaim_ns && now >= rcache->next_reclaim_ns) {
		struct iova_magazine *mag;

		if (rcache->depot_size <= iovad->nr_cpus) {
			rcache->next_reclaim_ns = 0; /* nothing freed: the work is not re-armed */
			break;
		}
		mag = depot_pop(iovad, rcache);
		mag->next = *out;
		*out = mag;
		rcache->reclaims++;
		rcache->next_reclaim_ns += ILAB_IOVA_DEPOT_DELAY_NS; /* the work re-arms */
	}
}

/* Give back what depot_work_catch_up took (no lock held). */
static void depot_work_free(struct ilab_iova_domain *iovad, struct iova_magazine *list)
{
	while (list) {
		struct iova_magazine *mag = list;

		list = mag->next;
		mag->size = iovad->mag_size; /* a depot magazine is full */
		mag_free_pfns(iovad, mag);
		free(mag);
	}
}

/* free_iova_fast's cache part (iova_rcache_insert). Returns false if the pfn must go to the
 * tree instead. */
static bool iova_rcache_insert(struct ilab_iova_domain *iovad, uint64_t pfn, uint64_t size)
{
	unsigned cls = order_base_2_(size);
	struct ilab_iova_rcache *rcache;
	struct iova_cpu_rcache *cpu_rcache;
	struct iova_magazine *to_free = NULL, *reclaimed = NULL;
	bool can_insert = false;

	if (cls >= ILAB_IOVA_RANGE_CACHE_MAX_SIZE || !iovad->rcaches)
		return false;
	rcache = &iovad->rcaches[cls];
	cpu_rcache = this_cpu_rcache(iovad, cls);
	plat_spin_lock(&cpu_rcache->lock);
	if (!mag_full(iovad, cpu_rcache->loaded)) {
		can_insert = true;
	} else if (!mag_full(iovad, cpu_rcache->prev)) {
		struct iova_magazine *t = cpu_rcache->prev;

		cpu_rcache->prev = cpu_rcache->loaded;
		cpu_rcache->loaded = t;
		can_insert = true;
	} else {
		struct iova_magazine *new_mag = iova_magazine_alloc();

		if (new_mag) {
			plat_spin_lock(&rcache->lock);
			if (iovad->depot_mode == ILAB_IOVA_DEPOT_FIXED32 &&
			    rcache->depot_size >= ILAB_IOVA_MAX_GLOBAL_MAGS) {
				to_free = cpu_rcache->loaded; /* depot full: back to the tree */
			} else if (iovad->depot_mode == ILAB_IOVA_DEPOT_LIST) {
				uint64_t now = plat_now_ns();

				depot_work_catch_up(iovad, rcache, now, &reclaimed);
				depot_push(rcache, cpu_rcache->loaded);
				if (!rcache->next_reclaim_ns) /* schedule_delayed_work */
					rcache->next_reclaim_ns = now + ILAB_IOVA_DEPOT_DELAY_NS;
			} else {
				depot_push(rcache, cpu_rcache->loaded);
			}
			plat_spin_unlock(&rcache->lock);
			cpu_rcache->loaded = new_mag;
			can_insert = true;
		}
	}
	if (can_insert) {
		mag_push(cpu_rcache->loaded, pfn);
		cpu_rcache->frees++;
	} else {
		cpu_rcache->free_fallbacks++;
	}
	plat_spin_unlock(&cpu_rcache->lock);
	if (to_free) {
		mag_free_pfns(iovad, to_free);
		free(to_free);
	}
	depot_work_free(iovad, reclaimed);
	return can_insert;
}

/* alloc_iova_fast's cache part (__iova_rcache_get): 0 on a miss. limit_pfn is exclusive. */
static uint64_t iova_rcache_get(struct ilab_iova_domain *iovad, uint64_t size, uint64_t limit_pfn)
{
	unsigned cls = order_base_2_(size);
	struct ilab_iova_rcache *rcache;
	struct iova_cpu_rcache *cpu_rcache;
	struct iova_magazine *reclaimed = NULL;
	bool has_pfn = false;
	uint64_t pfn = 0;

	if (cls >= ILAB_IOVA_RANGE_CACHE_MAX_SIZE || !iovad->rcaches || limit_pfn < size)
		return 0;
	rcache = &iovad->rcaches[cls];
	cpu_rcache = this_cpu_rcache(iovad, cls);
	plat_spin_lock(&cpu_rcache->lock);
	if (!mag_empty(cpu_rcache->loaded)) {
		has_pfn = true;
	} else if (!mag_empty(cpu_rcache->prev)) {
		struct iova_magazine *t = cpu_rcache->prev;

		cpu_rcache->prev = cpu_rcache->loaded;
		cpu_rcache->loaded = t;
		has_pfn = true;
	} else {
		plat_spin_lock(&rcache->lock);
		if (iovad->depot_mode == ILAB_IOVA_DEPOT_LIST)
			depot_work_catch_up(iovad, rcache, plat_now_ns(), &reclaimed);
		if (rcache->depot) {
			free(cpu_rcache->loaded); /* empty */
			cpu_rcache->loaded = depot_pop(iovad, rcache);
			has_pfn = true;
		}
		plat_spin_unlock(&rcache->lock);
	}
	if (has_pfn)
		pfn = mag_pop(cpu_rcache->loaded, limit_pfn - size);
	if (pfn)
		cpu_rcache->hits++;
	else
		cpu_rcache->misses++;
	plat_spin_unlock(&cpu_rcache->lock);
	depot_work_free(iovad, reclaimed);
	return pfn;
}

void ilab_iova_flush_rcaches(struct ilab_iova_domain *iovad)
{
	unsigned cpu, cls;

	if (!iovad || !iovad->rcaches)
		return;
	for (cpu = 0; cpu < iovad->nr_cpus; cpu++) { /* free_cpu_cached_iovas */
		struct iova_cpu_rcaches *all = plat_percpu_ptr(iovad->cpu_rcaches, cpu);

		for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) {
			struct iova_cpu_rcache *c = &all->c[cls];

			plat_spin_lock(&c->lock);
			mag_free_pfns(iovad, c->loaded);
			mag_free_pfns(iovad, c->prev);
			plat_spin_unlock(&c->lock);
		}
	}
	for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) { /* free_global_cached_iovas */
		struct ilab_iova_rcache *rcache = &iovad->rcaches[cls];

		plat_spin_lock(&rcache->lock);
		while (rcache->depot) {
			struct iova_magazine *mag = depot_pop(iovad, rcache);

			mag_free_pfns(iovad, mag);
			free(mag);
		}
		plat_spin_unlock(&rcache->lock);
	}
}

unsigned ilab_iova_depot_reclaim(struct ilab_iova_domain *iovad)
{
	unsigned cls, n = 0;

	if (!iovad || !iovad->rcaches)
		return 0;
	for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) {
		struct ilab_iova_rcache *rcache = &iovad->rcaches[cls];
		struct iova_magazine *mag = NULL;

		plat_spin_lock(&rcache->lock);
		if (rcache->depot_size > iovad->nr_cpus) {
			mag = depot_pop(iovad, rcache);
			rcache->reclaims++;
		}
		plat_spin_unlock(&rcache->lock);
		if (mag) {
			mag_free_pfns(iovad, mag);
			free(mag);
			n++;
		}
	}
	return n;
}

/* ---- fast path ---------------------------------------------------------------------------- */

/* Checked mode: the pfn handed out by a cache is in use again. */
static void mark_uncached(struct ilab_iova_domain *iovad, uint64_t pfn)
{
	struct ilab_iova *iova;

	plat_spin_lock(&iovad->iova_rbtree_lock);
	iova = private_find_iova(iovad, pfn);
	if (iova && iova->pfn_lo == pfn)
		iova->cached = false;
	else
		iovad->free_errors++; /* cannot happen unless memory was corrupted */
	plat_spin_unlock(&iovad->iova_rbtree_lock);
}

static uint64_t alloc_iova_fast(struct ilab_iova_domain *iovad, uint64_t size, uint64_t limit_pfn,
			       bool flush_rcache)
{
	struct ilab_iova *new;
	uint64_t pfn;

	if (!iovad || size == 0 || size > (1ull << 52))
		return 0;
	plat_charge(PLAT_CHARGE_IOVA_ALLOC); /* simulation: the fast path's instructions */
	size = fast_size(size);
	if (limit_pfn >= IOVA_ANCHOR - 1)
		limit_pfn = IOVA_ANCHOR - 2;
	pfn = iova_rcache_get(iovad, size, limit_pfn + 1);
	if (pfn) {
		if (iovad->check_fast_free)
			mark_uncached(iovad, pfn);
		return pfn;
	}
	for (;;) {
		plat_scope_enter(PLAT_SCOPE_IOVA_RBTREE);
		new = ilab_alloc_iova(iovad, size, limit_pfn, true);
		plat_scope_leave();
		if (new)
			return new->pfn_lo;
		if (!flush_rcache)
			return 0;
		/* Try replenishing the tree from every cache, then once more. */
		flush_rcache = false;
		plat_spin_lock(&iovad->iova_rbtree_lock);
		iovad->rcache_flushes++;
		plat_spin_unlock(&iovad->iova_rbtree_lock);
		ilab_iova_flush_rcaches(iovad);
	}
}

uint64_t ilab_alloc_iova_fast(struct ilab_iova_domain *iovad, uint64_t size, uint64_t limit_pfn,
			      bool flush_rcache)
{
	uint64_t pfn;

	plat_scope_enter(PLAT_SCOPE_IOVA_ALLOC);
	pfn = alloc_iova_fast(iovad, size, limit_pfn, flush_rcache);
	plat_scope_leave();
	return pfn;
}

/* Checked mode: is [pfn, pfn+size) exactly one allocated, uncached range? Marks it cached. */
static int check_and_mark_cached(struct ilab_iova_domain *iovad, uint64_t pfn, uint64_t size)
{
	struct ilab_iova *iova;
	int ret = 0;

	plat_spin_lock(&iovad->iova_rbtree_lock);
	iova = private_find_iova(iovad, pfn);
	if (!iova || iova == &iovad->anchor || iova->pfn_lo != pfn)
		ret = -ENOENT;
	else if (iova_size(iova) != fast_size(size))
		ret = -EINVAL;
	else if (iova->cached)
		ret = -EINVAL; /* double free */
	else
		iova->cached = true;
	if (ret)
		iovad->free_errors++;
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	return ret;
}

static int free_iova_fast(struct ilab_iova_domain *iovad, uint64_t pfn, uint64_t size)
{
	int ret;

	if (!iovad || size == 0)
		return -EINVAL;
	plat_charge(PLAT_CHARGE_IOVA_FREE); /* simulation: the fast path's instructions */
	if (iovad->check_fast_free) {
		ret = check_and_mark_cached(iovad, pfn, size);
		if (ret)
			return ret;
	}
	if (iova_rcache_insert(iovad, pfn, size))
		return 0;
	plat_scope_enter(PLAT_SCOPE_IOVA_RBTREE);
	plat_spin_lock(&iovad->iova_rbtree_lock);
	ret = free_locked(iovad, pfn, true);
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	plat_scope_leave();
	return ret;
}

int ilab_free_iova_fast(struct ilab_iova_domain *iovad, uint64_t pfn, uint64_t size)
{
	int ret;

	plat_scope_enter(PLAT_SCOPE_IOVA_FREE);
	ret = free_iova_fast(iovad, pfn, size);
	plat_scope_leave();
	return ret;
}

/* ---- set-up, statistics, checks ----------------------------------------------------------- */

static void free_rcaches(struct ilab_iova_domain *iovad)
{
	unsigned cpu, cls;

	if (iovad->cpu_rcaches) {
		for (cpu = 0; cpu < iovad->nr_cpus; cpu++) {
			struct iova_cpu_rcaches *all = plat_percpu_ptr(iovad->cpu_rcaches, cpu);

			for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) {
				free(all->c[cls].loaded);
				free(all->c[cls].prev);
			}
		}
		plat_percpu_free(iovad->cpu_rcaches);
		iovad->cpu_rcaches = NULL;
	}
	if (iovad->rcaches) {
		for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) {
			struct ilab_iova_rcache *rcache = &iovad->rcaches[cls];

			while (rcache->depot)
				free(depot_pop(iovad, rcache));
		}
		free(iovad->rcaches);
		iovad->rcaches = NULL;
	}
}

static int init_rcaches(struct ilab_iova_domain *iovad)
{
	unsigned cpu, cls;

	iovad->nr_cpus = plat_cpu_count();
	if (iovad->nr_cpus == 0)
		iovad->nr_cpus = 1;
	iovad->rcaches = plat_zalloc_array(ILAB_IOVA_RANGE_CACHE_MAX_SIZE, sizeof(*iovad->rcaches));
	iovad->cpu_rcaches = plat_percpu_alloc(sizeof(struct iova_cpu_rcaches));
	if (!iovad->rcaches || !iovad->cpu_rcaches)
		goto nomem;
	for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++)
		plat_spin_init(&iovad->rcaches[cls].lock, "iova_depot");
	for (cpu = 0; cpu < iovad->nr_cpus; cpu++) {
		struct iova_cpu_rcaches *all = plat_percpu_ptr(iovad->cpu_rcaches, cpu);

		for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) {
			plat_spin_init(&all->c[cls].lock, "iova_cpu_rcache");
			all->c[cls].loaded = iova_magazine_alloc();
			all->c[cls].prev = iova_magazine_alloc();
			if (!all->c[cls].loaded || !all->c[cls].prev)
				goto nomem;
		}
	}
	return 0;
nomem:
	free_rcaches(iovad);
	return -ENOMEM;
}

int ilab_iova_domain_init(struct ilab_iova_domain *iovad, uint64_t granule, uint64_t start_pfn)
{
	if (!iovad || granule < 512 || granule > 65536 || (granule & (granule - 1)) ||
	    start_pfn == 0 || start_pfn >= IOVA_ANCHOR - 1)
		return -EINVAL;
	memset(iovad, 0, sizeof(*iovad));
	plat_spin_init(&iovad->iova_rbtree_lock, "iova_rbtree_lock");
	iovad->granule = granule;
	iovad->granule_shift = (unsigned)__builtin_ctzll(granule);
	iovad->start_pfn = start_pfn;
	iovad->dma_32bit_pfn = (1ull << 32) >> iovad->granule_shift;
	iovad->max32_alloc_size = iovad->dma_32bit_pfn;
	iovad->anchor.pfn_lo = iovad->anchor.pfn_hi = IOVA_ANCHOR;
	iova_insert_rbtree(&iovad->rbroot, &iovad->anchor);
	iovad->cached_node = iovad->cached32_node = &iovad->anchor.node;
	iovad->depot_mode = ILAB_IOVA_DEPOT_LIST;
	iovad->mag_size = ILAB_IOVA_MAG_SIZE;
	iovad->check_fast_free = true;
	return init_rcaches(iovad);
}

void ilab_iova_domain_destroy(struct ilab_iova_domain *iovad)
{
	struct ilab_rb_node *n;

	if (!iovad || !iovad->rbroot.node)
		return;
	free_rcaches(iovad);
	while ((n = ilab_rb_first(&iovad->rbroot)) != NULL) {
		ilab_rb_erase(n, &iovad->rbroot);
		if (n != &iovad->anchor.node)
			free(to_iova(n));
	}
}

void ilab_iova_set_depot_mode(struct ilab_iova_domain *iovad, enum ilab_iova_depot_mode mode)
{
	if (iovad && (mode == ILAB_IOVA_DEPOT_LIST || mode == ILAB_IOVA_DEPOT_FIXED32))
		iovad->depot_mode = mode;
}

int ilab_iova_set_mag_size(struct ilab_iova_domain *iovad, unsigned pfns)
{
	struct ilab_iova_stats st;

	if (!iovad || pfns < 2 || pfns > ILAB_IOVA_MAG_SIZE_MAX)
		return -EINVAL;
	if (pfns == iovad->mag_size)
		return 0;
	/* A magazine filled to the old size would never count as full (or hold too many). */
	ilab_iova_stats(iovad, &st);
	for (unsigned cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++)
		if (st.cached_pfns[cls])
			return -EBUSY;
	iovad->mag_size = pfns;
	return 0;
}

void ilab_iova_set_fast_free_check(struct ilab_iova_domain *iovad, bool on)
{
	if (iovad)
		iovad->check_fast_free = on;
}

static void note_mag(struct ilab_iova_stats *st, unsigned cls, const struct iova_magazine *mag)
{
	st->cached_pfns[cls] += mag->size;
	if (mag->size > st->max_mag_fill)
		st->max_mag_fill = mag->size;
}

void ilab_iova_stats(struct ilab_iova_domain *iovad, struct ilab_iova_stats *st)
{
	struct ilab_rb_node *n;
	unsigned cpu, cls;

	memset(st, 0, sizeof(*st));
	if (!iovad)
		return;
	if (iovad->rcaches) {
		for (cpu = 0; cpu < iovad->nr_cpus; cpu++) {
			struct iova_cpu_rcaches *all = plat_percpu_ptr(iovad->cpu_rcaches, cpu);

			for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) {
				struct iova_cpu_rcache *c = &all->c[cls];

				plat_spin_lock(&c->lock);
				st->cache_hits += c->hits;
				st->cache_misses += c->misses;
				st->cache_frees += c->frees;
				st->cache_free_fallbacks += c->free_fallbacks;
				note_mag(st, cls, c->loaded);
				note_mag(st, cls, c->prev);
				plat_spin_unlock(&c->lock);
			}
		}
		for (cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++) {
			struct ilab_iova_rcache *rcache = &iovad->rcaches[cls];
			struct iova_magazine *m;

			plat_spin_lock(&rcache->lock);
			st->depot_size[cls] = rcache->depot_size;
			st->depot_max[cls] = rcache->depot_max;
			st->depot_reclaims += rcache->reclaims;
			for (m = rcache->depot; m; m = m->next)
				st->cached_pfns[cls] += iovad->mag_size;
			plat_spin_unlock(&rcache->lock);
		}
	}
	plat_spin_lock(&iovad->iova_rbtree_lock);
	st->rbtree_allocs = iovad->rbtree_allocs;
	st->rbtree_alloc_failures = iovad->rbtree_alloc_failures;
	st->rbtree_frees = iovad->rbtree_frees;
	st->free_errors = iovad->free_errors;
	st->rcache_flushes = iovad->rcache_flushes;
	for (n = ilab_rb_first(&iovad->rbroot); n; n = ilab_rb_next(n))
		st->nodes++;
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	st->nodes--; /* the anchor */
}

static bool node_in_tree(struct ilab_iova_domain *iovad, struct ilab_rb_node *node)
{
	struct ilab_iova *iova = to_iova(node);

	return private_find_iova(iovad, iova->pfn_lo) == iova;
}

int ilab_iova_check(struct ilab_iova_domain *iovad)
{
	struct ilab_rb_node *n;
	const struct ilab_iova *last = NULL;
	int ret = 0;

	if (!iovad)
		return -EINVAL;
	plat_spin_lock(&iovad->iova_rbtree_lock);
	if (ilab_rb_check(&iovad->rbroot) < 0)
		ret = -EUCLEAN;
	for (n = ilab_rb_first(&iovad->rbroot); n && !ret; n = ilab_rb_next(n)) {
		const struct ilab_iova *iova = to_iova(n);

		if (iova->pfn_lo > iova->pfn_hi || (last && last->pfn_hi >= iova->pfn_lo))
			ret = -EUCLEAN;
		last = iova;
	}
	if (!ret && (last != &iovad->anchor || !node_in_tree(iovad, iovad->cached_node) ||
		     !node_in_tree(iovad, iovad->cached32_node)))
		ret = -EUCLEAN;
	plat_spin_unlock(&iovad->iova_rbtree_lock);
	return ret;
}
