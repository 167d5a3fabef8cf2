/* test_iova.c — the IOVA allocator against Linux iova.c facts: top-down size-aligned allocation
 * below a limit, 32-bit fast-fail, magazine caches, depots, flush-and-retry, and long random
 * alloc/free sequences checked against a shadow bitmap. Not a performance or threads test
 * (see test_iova_mt.c and bench_iova.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/iova.h>
#include <iommulab/plat.h>
#include <iommulab/topo.h>

#define GRANULE 4096u
#define PFN_32BIT (1ull << 20) /* 4 GiB / 4 KiB */

static struct ilab_iova_domain *new_domain(void)
{
	struct ilab_iova_domain *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	assert_int_equal(ilab_iova_domain_init(d, GRANULE, 1), 0);
	return d;
}

static void del_domain(struct ilab_iova_domain *d)
{
	ilab_iova_domain_destroy(d);
	free(d);
}

static void test_init_bad_input(void **state)
{
	struct ilab_iova_domain d;

	(void)state;
	assert_int_equal(ilab_iova_domain_init(&d, 0, 1), -EINVAL);
	assert_int_equal(ilab_iova_domain_init(&d, 3000, 1), -EINVAL);
	assert_int_equal(ilab_iova_domain_init(&d, 1u << 20, 1), -EINVAL);
	assert_int_equal(ilab_iova_domain_init(&d, GRANULE, 0), -EINVAL);
	assert_int_equal(ilab_iova_domain_init(NULL, GRANULE, 1), -EINVAL);
	assert_null(ilab_alloc_iova(NULL, 1, 100, true));
	assert_int_equal(ilab_free_iova(NULL, 1), -EINVAL);
	assert_int_equal(ilab_alloc_iova_fast(NULL, 1, 100, true), 0);
}

static void test_top_down_aligned(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova *a, *b, *c;

	(void)state;
	assert_int_equal(d->dma_32bit_pfn, PFN_32BIT);
	/* limit is inclusive: the first 1-pfn range is the limit itself */
	a = ilab_alloc_iova(d, 1, 0xfffff, true);
	assert_non_null(a);
	assert_int_equal(a->pfn_lo, 0xfffff);
	assert_int_equal(a->pfn_hi, 0xfffff);
	/* 3 pfns aligned to 4: [0xffffc, 0xffffe] fits right below the first */
	b = ilab_alloc_iova(d, 3, 0xfffff, true);
	assert_non_null(b);
	assert_int_equal(b->pfn_lo, 0xffffc);
	assert_int_equal(b->pfn_hi, 0xffffe);
	/* unaligned request packs right below */
	c = ilab_alloc_iova(d, 3, 0xfffff, false);
	assert_non_null(c);
	assert_int_equal(c->pfn_lo, 0xffff9);
	/* aligned again: 0xffff9 - 4 = 0xffff5, down to a multiple of 4 */
	assert_int_equal(ilab_alloc_iova(d, 4, 0xfffff, true)->pfn_lo, 0xffff4);
	assert_ptr_equal(ilab_find_iova(d, 0xffffd), b);
	assert_null(ilab_find_iova(d, 0xffff8));
	/* freeing b re-opens its hole for the next search (the cached node moves above it) */
	assert_int_equal(ilab_free_iova(d, 0xffffc), 0);
	b = ilab_alloc_iova(d, 2, 0xfffff, true);
	assert_non_null(b);
	assert_int_equal(b->pfn_lo, 0xffffc);
	assert_int_equal(ilab_iova_check(d), 0);
	del_domain(d);
}

static void test_limit_and_fast_fail(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	uint64_t i;

	(void)state;
	/* 64-pfn space [1, 64]: 64 single pfns fit, the 65th fails */
	for (i = 0; i < 64; i++) {
		struct ilab_iova *v = ilab_alloc_iova(d, 1, 64, true);

		assert_non_null(v);
		assert_int_equal(v->pfn_lo, 64 - i);
	}
	assert_null(ilab_alloc_iova(d, 1, 64, true));
	/* the failure was recorded: any size >= 1 below 4 GiB fails fast, even with room */
	assert_int_equal(d->max32_alloc_size, 1);
	assert_null(ilab_alloc_iova(d, 1, 1000, true));
	/* above 4 GiB the shortcut does not apply */
	assert_non_null(ilab_alloc_iova(d, 1, PFN_32BIT * 4, true));
	/* a free below 4 GiB resets it */
	assert_int_equal(ilab_free_iova(d, 10), 0);
	assert_int_equal(d->max32_alloc_size, PFN_32BIT);
	assert_non_null(ilab_alloc_iova(d, 1, 1000, true));
	/* limit below start_pfn */
	assert_null(ilab_alloc_iova(d, 1, 0, true));
	ilab_iova_stats(d, &st);
	assert_int_equal(st.rbtree_alloc_failures, 2);
	assert_int_equal(ilab_iova_check(d), 0);
	del_domain(d);
}

static void test_retry_above_cached(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova *lo, *hi;

	(void)state;
	/* an allocation under a low limit moves cached32 low; a later request with a higher
	 * limit must still find the space above it (the retry path) */
	hi = ilab_alloc_iova(d, 1, 1000, true);
	lo = ilab_alloc_iova(d, 1, 100, true);
	assert_non_null(hi);
	assert_non_null(lo);
	assert_int_equal(lo->pfn_lo, 100);
	/* fill [1, 99] so nothing is left below the cached node */
	while (ilab_alloc_iova(d, 1, 99, true))
		;
	d->max32_alloc_size = PFN_32BIT; /* undo the fast-fail the loop's end recorded */
	hi = ilab_alloc_iova(d, 1, 500, true);
	assert_non_null(hi);
	assert_int_equal(hi->pfn_lo, 500);
	assert_int_equal(ilab_iova_check(d), 0);
	del_domain(d);
}

static void test_free_unknown(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	struct ilab_iova *v;

	(void)state;
	v = ilab_alloc_iova(d, 4, 0xfffff, true);
	assert_non_null(v);
	assert_int_equal(ilab_free_iova(d, 12345), -ENOENT);
	assert_int_equal(ilab_free_iova(d, v->pfn_lo + 1), -ENOENT); /* not its start */
	assert_int_equal(ilab_free_iova(d, ~0ull), -ENOENT);         /* the anchor */
	assert_int_equal(ilab_free_iova(d, 0xffffc), 0);
	assert_int_equal(ilab_free_iova(d, 0xffffc), -ENOENT);       /* double free */
	ilab_iova_stats(d, &st);
	assert_int_equal(st.free_errors, 4);
	assert_int_equal(st.nodes, 0);
	assert_int_equal(ilab_iova_check(d), 0);
	del_domain(d);
}

static void test_reserve(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova *v;

	(void)state;
	assert_int_equal(ilab_reserve_iova(d, 0x800, 0x8ff), 0);
	assert_int_equal(ilab_reserve_iova(d, 0x8f0, 0x900), -EBUSY);
	assert_int_equal(ilab_reserve_iova(d, 10, 5), -EINVAL);
	v = ilab_alloc_iova(d, 0x100, 0x8ff, true);
	assert_non_null(v);
	assert_true(v->pfn_hi < 0x800);
	del_domain(d);
}

static void test_fast_hit_lifo(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	uint64_t a, b;

	(void)state;
	a = ilab_alloc_iova_fast(d, 1, 0xfffff, true);
	assert_int_equal(a, 0xfffff);
	assert_int_equal(ilab_free_iova_fast(d, a, 1), 0);
	b = ilab_alloc_iova_fast(d, 1, 0xfffff, true);
	assert_int_equal(b, a);
	ilab_iova_stats(d, &st);
	assert_int_equal(st.cache_hits, 1);
	assert_int_equal(st.cache_misses, 1);
	assert_int_equal(st.rbtree_allocs, 1);
	/* small sizes round up to a power of two */
	a = ilab_alloc_iova_fast(d, 3, 0xfffff, true);
	assert_int_equal(ilab_find_iova(d, a)->pfn_hi - a + 1, 4);
	assert_int_equal(a & 3, 0);
	/* a cached pfn above a new, lower limit is not handed out */
	assert_int_equal(ilab_free_iova_fast(d, a, 3), 0);
	b = ilab_alloc_iova_fast(d, 3, 0x7ffff, true);
	assert_true(b + 3 <= 0x7ffff);
	assert_true(b != a);
	/* the cached range must END below the limit, not just start below it: a limit two pfns
	 * into the cached 4-pfn range (a <= limit < a + 3) must not hand it out (a magazine pop
	 * checking `limit` instead of `limit - size` would) */
	a = ilab_alloc_iova_fast(d, 4, 0xfffff, true);
	assert_int_equal(ilab_free_iova_fast(d, a, 4), 0);
	b = ilab_alloc_iova_fast(d, 4, a + 2, true);
	assert_true(b != 0);
	assert_true(b + 3 <= a + 2);
	/* 33+ pfns bypass the caches */
	a = ilab_alloc_iova_fast(d, 33, 0xfffff, true);
	assert_int_equal(ilab_find_iova(d, a)->pfn_hi - a + 1, 33);
	assert_int_equal(ilab_free_iova_fast(d, a, 33), 0);
	assert_null(ilab_find_iova(d, a));
	del_domain(d);
}

static void test_fast_free_checks(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	uint64_t a, b;

	(void)state;
	a = ilab_alloc_iova_fast(d, 2, 0xfffff, true);
	assert_int_equal(ilab_free_iova_fast(d, 777, 2), -ENOENT);  /* unknown */
	assert_int_equal(ilab_free_iova_fast(d, a, 1), -EINVAL);    /* wrong size */
	assert_int_equal(ilab_free_iova_fast(d, a + 1, 1), -ENOENT); /* inside */
	assert_int_equal(ilab_free_iova_fast(d, a, 2), 0);
	assert_int_equal(ilab_free_iova_fast(d, a, 2), -EINVAL);    /* double free */
	assert_int_equal(ilab_free_iova(d, a), -EBUSY);             /* it is cached */
	assert_int_equal(ilab_free_iova_fast(d, a, 0), -EINVAL);
	ilab_iova_stats(d, &st);
	assert_int_equal(st.free_errors, 5);
	/* nothing was corrupted: the cache holds a once, then fresh ranges follow */
	b = ilab_alloc_iova_fast(d, 2, 0xfffff, true);
	assert_int_equal(b, a);
	b = ilab_alloc_iova_fast(d, 2, 0xfffff, true);
	assert_true(b != a);
	assert_int_equal(ilab_iova_check(d), 0);
	del_domain(d);
}

/* Linux iova_rcache_insert: loaded fills (127), swaps with the empty prev, fills again (254);
 * the 255th free pushes the full loaded magazine to the depot. */
static void test_magazines_and_depot(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	uint64_t *pfns = calloc(2000, sizeof(*pfns));
	unsigned i;

	(void)state;
	for (i = 0; i < 2000; i++)
		pfns[i] = ilab_alloc_iova_fast(d, 1, 0xfffff, true);
	for (i = 0; i < 254; i++)
		assert_int_equal(ilab_free_iova_fast(d, pfns[i], 1), 0);
	ilab_iova_stats(d, &st);
	assert_int_equal(st.depot_size[0], 0);
	assert_int_equal(st.cached_pfns[0], 254);
	assert_int_equal(ilab_free_iova_fast(d, pfns[254], 1), 0);
	ilab_iova_stats(d, &st);
	assert_int_equal(st.depot_size[0], 1);
	assert_int_equal(st.max_mag_fill, ILAB_IOVA_MAG_SIZE);
	/* 255 pfns still allocated in the tree (cached), the others too */
	assert_int_equal(st.nodes, 2000);

	/* allocations drain loaded, then prev, then take the depot's magazine */
	for (i = 0; i < 255; i++)
		assert_true(ilab_alloc_iova_fast(d, 1, 0xfffff, false) != 0);
	ilab_iova_stats(d, &st);
	assert_int_equal(st.depot_size[0], 0);
	assert_int_equal(st.cache_hits, 255);
	assert_int_equal(st.rbtree_allocs, 2000);
	free(pfns);
	del_domain(d);
}

static void fill_depot(struct ilab_iova_domain *d, unsigned mags)
{
	unsigned i, n = (mags + 2) * ILAB_IOVA_MAG_SIZE;
	uint64_t *p = calloc(n, sizeof(*p));

	for (i = 0; i < n; i++) {
		p[i] = ilab_alloc_iova_fast(d, 1, PFN_32BIT * 16, false);
		assert_true(p[i] != 0);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(ilab_free_iova_fast(d, p[i], 1), 0);
	free(p);
}

static void test_depot_fixed32(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;

	(void)state;
	ilab_iova_set_depot_mode(d, ILAB_IOVA_DEPOT_FIXED32);
	fill_depot(d, 40);
	ilab_iova_stats(d, &st);
	/* <= v6.6: never more than 32 magazines; the surplus went back to the tree */
	assert_int_equal(st.depot_size[0], ILAB_IOVA_MAX_GLOBAL_MAGS);
	assert_int_equal(st.depot_max[0], ILAB_IOVA_MAX_GLOBAL_MAGS);
	assert_int_equal(st.nodes, st.cached_pfns[0]);
	assert_true(st.nodes < 42u * ILAB_IOVA_MAG_SIZE);
	del_domain(d);
}

/* test_depot_list_reclaim runs on a modelled machine of RECLAIM_CPUS CPUs, not on the host's:
 * reclaim keeps nr_cpus magazines, so on a host with 40 or more CPUs it would have nothing to
 * do with the 40 filled here. Native plat, no thread binding: only the count changes (the
 * synthetic topology below has RECLAIM_CPUS PUs). */
#define RECLAIM_CPUS 4u

static struct ilab_topo *reclaim_topo;

static int reclaim_cpus_setup(void **state)
{
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	char err[256];

	(void)state;
	if (ilab_topo_load("synthetic:pack:1 core:4 pu:1", &reclaim_topo, err, sizeof(err)))
		return -1;
	pc.topo = reclaim_topo;
	return plat_init(&pc) ? -1 : 0;
}

static int reclaim_cpus_teardown(void **state)
{
	(void)state;
	plat_fini();
	ilab_topo_free(reclaim_topo);
	reclaim_topo = NULL;
	return 0;
}

static void test_depot_list_reclaim(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	uint64_t size, work_reclaims, nodes;
	unsigned n = 0, r;

	(void)state;
	assert_int_equal(d->nr_cpus, RECLAIM_CPUS);
	fill_depot(d, 40);
	ilab_iova_stats(d, &st);
	/* v6.7+: the list grows until the work runs (it may have run if the fill took longer
	 * than its 100 ms delay); loaded and prev hold 2 of the 42 magazines, the other
	 * 40 went to the depot */
	assert_true(st.depot_size[0] >= 39);
	assert_int_equal(st.depot_size[0] + st.depot_reclaims, 40);
	size = st.depot_size[0];
	work_reclaims = st.depot_reclaims;
	nodes = st.nodes;
	/* the delayed work pops one magazine per run while the depot has > nr_cpus */
	while ((r = ilab_iova_depot_reclaim(d)) != 0) {
		assert_int_equal(r, 1); /* only the 1-pfn class has a depot */
		n++;
	}
	ilab_iova_stats(d, &st);
	assert_int_equal(n, size - RECLAIM_CPUS);
	assert_int_equal(st.depot_size[0], RECLAIM_CPUS);
	assert_int_equal(st.depot_reclaims, work_reclaims + n);
	/* each reclaimed magazine gave its 127 pfns back to the tree */
	assert_int_equal(st.nodes, nodes - (uint64_t)n * ILAB_IOVA_MAG_SIZE);
	assert_int_equal(st.nodes, st.cached_pfns[0]);
	del_domain(d);
}

/* The v6.7 depot's reclaim is a delayed work on its own timer: once armed by a push it gives
 * one magazine per 100 ms back to the tree while the depot holds more than one per CPU,
 * whether or not anything is pushed again. Here nothing is pushed after the fill; the CPU
 * only allocates, and the first allocation that reaches the depot (both CPU magazines empty)
 * finds the periods that passed already worked off. Before, the work ran only on a push. */
static void test_depot_reclaim_runs_on_its_timer(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	struct timespec nap = { 0, 350 * 1000 * 1000 }; /* three periods and a half */
	uint64_t size0;

	(void)state;
	fill_depot(d, 40);
	ilab_iova_stats(d, &st);
	size0 = st.depot_size[0] + st.depot_reclaims; /* 40: what was pushed */
	assert_int_equal(size0, 40);
	nanosleep(&nap, NULL);
	/* empty loaded and prev (full after the fill), then one allocation from the depot */
	for (unsigned i = 0; i < 2 * ILAB_IOVA_MAG_SIZE + 1; i++)
		assert_true(ilab_alloc_iova_fast(d, 1, PFN_32BIT * 16, false) != 0);
	ilab_iova_stats(d, &st);
	assert_true(st.depot_reclaims >= 3);          /* at least 100, 200, 300 ms */
	assert_true(st.depot_reclaims <= 40 - RECLAIM_CPUS);
	assert_int_equal(st.depot_size[0], size0 - st.depot_reclaims - 1); /* and the pop */
	del_domain(d);
}

static void test_flush_and_retry(void **state)
{
	struct ilab_iova_domain *d = new_domain();
	struct ilab_iova_stats st;
	uint64_t p[64];
	unsigned i;

	(void)state;
	for (i = 0; i < 64; i++)
		p[i] = ilab_alloc_iova_fast(d, 1, 64, true);
	for (i = 0; i < 64; i++)
		assert_int_equal(ilab_free_iova_fast(d, p[i], 1), 0);
	/* every pfn sits in a cache: the tree is full for a 2-pfn request */
	assert_int_equal(ilab_alloc_iova_fast(d, 2, 64, false), 0);
	d->max32_alloc_size = PFN_32BIT;
	assert_true(ilab_alloc_iova_fast(d, 2, 64, true) != 0);
	ilab_iova_stats(d, &st);
	assert_int_equal(st.rcache_flushes, 1);
	assert_int_equal(st.cached_pfns[0], 0);
	assert_int_equal(st.nodes, 1);
	del_domain(d);
}

/* ---- long random sequences ------------------------------------------------------------------ */

#define SPACE (1ull << 22) /* pfns covered by the shadow bitmap */

struct live {
	uint64_t pfn, size, alloc_size;
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void mark(uint8_t *bm, uint64_t pfn, uint64_t n, bool set)
{
	uint64_t i;

	for (i = pfn; i < pfn + n; i++) {
		bool was = bm[i >> 3] & (1u << (i & 7));

		assert_true(was != set); /* overlap on alloc / missing on free */
		bm[i >> 3] ^= (uint8_t)(1u << (i & 7));
	}
}

static void random_run(bool fast, bool check, enum ilab_iova_depot_mode mode, unsigned ops)
{
	struct ilab_iova_domain *d = new_domain();
	uint8_t *bm = calloc(SPACE / 8, 1);
	struct live *lv = calloc(4096, sizeof(*lv));
	static const uint64_t limits[] = { PFN_32BIT - 1, PFN_32BIT / 2, SPACE - 1, 50000 };
	struct ilab_iova_stats st;
	uint64_t x = 0x1234567887654321ull;
	unsigned n = 0, i, fails = 0;

	ilab_iova_set_depot_mode(d, mode);
	ilab_iova_set_fast_free_check(d, check);
	for (i = 0; i < ops; i++) {
		uint64_t r = rnd(&x);

		if (n == 4096 || (n && (r & 1))) {
			unsigned k = (unsigned)((r >> 8) % n);

			mark(bm, lv[k].pfn, lv[k].alloc_size, false);
			if (fast)
				assert_int_equal(ilab_free_iova_fast(d, lv[k].pfn, lv[k].size), 0);
			else
				assert_int_equal(ilab_free_iova(d, lv[k].pfn), 0);
			lv[k] = lv[--n];
		} else {
			uint64_t size = 1 + (r >> 12) % ((r >> 40) & 1 ? 64 : 4);
			uint64_t limit = limits[(r >> 50) % 4];
			uint64_t pfn, asize = size, align;

			if (fast) {
				pfn = ilab_alloc_iova_fast(d, size, limit, true);
				if (size < 32)
					while (asize & (asize - 1))
						asize++;
			} else {
				struct ilab_iova *v = ilab_alloc_iova(d, size, limit, true);

				pfn = v ? v->pfn_lo : 0;
			}
			if (!pfn) {
				fails++;
				continue;
			}
			align = 1;
			while (align < size)
				align <<= 1;
			assert_int_equal(pfn & (align - 1), 0);      /* size-aligned */
			assert_true(pfn >= 1 && pfn + asize - 1 <= limit); /* limit respected */
			mark(bm, pfn, asize, true);                  /* no overlap */
			lv[n++] = (struct live){ pfn, size, asize };
		}
		if (i % 20000 == 0) {
			unsigned c;

			assert_int_equal(ilab_iova_check(d), 0);
			ilab_iova_stats(d, &st);
			assert_true(st.max_mag_fill <= ILAB_IOVA_MAG_SIZE);
			for (c = 0; c < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; c++)
				if (mode == ILAB_IOVA_DEPOT_FIXED32)
					assert_true(st.depot_size[c] <= ILAB_IOVA_MAX_GLOBAL_MAGS);
			assert_int_equal(st.free_errors, 0);
		}
	}
	assert_int_equal(fails, 0); /* the space never runs out at this load */
	/* every IOVA comes back */
	for (i = 0; i < n; i++) {
		mark(bm, lv[i].pfn, lv[i].alloc_size, false);
		if (fast)
			assert_int_equal(ilab_free_iova_fast(d, lv[i].pfn, lv[i].size), 0);
		else
			assert_int_equal(ilab_free_iova(d, lv[i].pfn), 0);
	}
	ilab_iova_flush_rcaches(d);
	ilab_iova_stats(d, &st);
	assert_int_equal(st.nodes, 0);
	assert_int_equal(st.free_errors, 0);
	if (fast)
		assert_true(st.cache_hits > ops / 8);
	assert_int_equal(ilab_iova_check(d), 0);
	free(bm);
	free(lv);
	del_domain(d);
}

static void test_random_rbtree(void **state)
{
	(void)state;
	random_run(false, true, ILAB_IOVA_DEPOT_LIST, 200000);
}

static void test_random_fast_checked(void **state)
{
	(void)state;
	random_run(true, true, ILAB_IOVA_DEPOT_LIST, 200000);
}

static void test_random_fast_unchecked_fixed32(void **state)
{
	(void)state;
	random_run(true, false, ILAB_IOVA_DEPOT_FIXED32, 200000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_bad_input),
		cmocka_unit_test(test_top_down_aligned),
		cmocka_unit_test(test_limit_and_fast_fail),
		cmocka_unit_test(test_retry_above_cached),
		cmocka_unit_test(test_free_unknown),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_fast_hit_lifo),
		cmocka_unit_test(test_fast_free_checks),
		cmocka_unit_test(test_magazines_and_depot),
		cmocka_unit_test(test_depot_fixed32),
		cmocka_unit_test_setup_teardown(test_depot_list_reclaim, reclaim_cpus_setup,
						reclaim_cpus_teardown),
		cmocka_unit_test_setup_teardown(test_depot_reclaim_runs_on_its_timer,
						reclaim_cpus_setup, reclaim_cpus_teardown),
		cmocka_unit_test(test_flush_and_retry),
		cmocka_unit_test(test_random_rbtree),
		cmocka_unit_test(test_random_fast_checked),
		cmocka_unit_test(test_random_fast_unchecked_fixed32),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
