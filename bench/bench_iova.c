/* bench_iova.c — native cost of the IOVA allocator: ns per alloc+free pair on the per-CPU cache
 * (hot magazine), on the rbtree with N live ranges, and with fast-free checking on/off.
 * Not a test: it prints figures. Run a Release build: bench_iova [iterations]
 */
#include <stdio.h>
#include <stdlib.h>

#include <iommulab/iova.h>
#include <iommulab/plat.h>

#define LIMIT ((1ull << 20) - 1)

static double ns_per(uint64_t t0, uint64_t t1, uint64_t n)
{
	return (double)(t1 - t0) / (double)n;
}

static void fast_pairs(const char *name, bool check, uint64_t size, unsigned iters)
{
	struct ilab_iova_domain d;
	uint64_t t0, t1, pfn;
	unsigned i;

	ilab_iova_domain_init(&d, 4096, 1);
	ilab_iova_set_fast_free_check(&d, check);
	pfn = ilab_alloc_iova_fast(&d, size, LIMIT, true); /* warm: one magazine entry */
	ilab_free_iova_fast(&d, pfn, size);
	t0 = plat_now_ns();
	for (i = 0; i < iters; i++) {
		pfn = ilab_alloc_iova_fast(&d, size, LIMIT, true);
		ilab_free_iova_fast(&d, pfn, size);
	}
	t1 = plat_now_ns();
	printf("%-44s %8.1f ns/pair\n", name, ns_per(t0, t1, iters));
	ilab_iova_domain_destroy(&d);
}

/* The tree path with `live` other ranges allocated first (the search starts at the cached
 * node, so the free hole is found right away: this is the common, not the worst, case). */
static void tree_pairs(unsigned live, unsigned iters)
{
	struct ilab_iova_domain d;
	uint64_t t0, t1;
	unsigned i;
	char name[64];

	ilab_iova_domain_init(&d, 4096, 1);
	for (i = 0; i < live; i++)
		ilab_alloc_iova(&d, 1, LIMIT, true);
	t0 = plat_now_ns();
	for (i = 0; i < iters; i++) {
		struct ilab_iova *v = ilab_alloc_iova(&d, 1, LIMIT, true);

		ilab_free_iova(&d, v->pfn_lo);
	}
	t1 = plat_now_ns();
	snprintf(name, sizeof(name), "rbtree alloc_iova+free_iova, %u live", live);
	printf("%-44s %8.1f ns/pair\n", name, ns_per(t0, t1, iters));
	ilab_iova_domain_destroy(&d);
}

/* A fragmented space (every other pfn of `live` freed) and 2-pfn requests that fit in none of
 * the 1-pfn holes. After the first search the cached node sits below the holes, so this shows
 * the steady state, not the first (linear) search. */
static void tree_fragmented(unsigned live, unsigned iters)
{
	struct ilab_iova_domain d;
	uint64_t t0, t1, *p = malloc(sizeof(uint64_t) * live);
	unsigned i;
	char name[64];

	ilab_iova_domain_init(&d, 4096, 1);
	for (i = 0; i < live; i++)
		p[i] = ilab_alloc_iova(&d, 1, LIMIT, true)->pfn_lo;
	for (i = 0; i < live; i += 2)
		ilab_free_iova(&d, p[i]);
	t0 = plat_now_ns();
	for (i = 0; i < iters; i++) {
		struct ilab_iova *v = ilab_alloc_iova(&d, 2, LIMIT, true);

		ilab_free_iova(&d, v->pfn_lo);
	}
	t1 = plat_now_ns();
	snprintf(name, sizeof(name), "rbtree 2-pfn, %u 1-pfn holes above", live);
	printf("%-44s %8.1f ns/pair\n", name, ns_per(t0, t1, iters));
	ilab_iova_domain_destroy(&d);
	free(p);
}

int main(int argc, char **argv)
{
	unsigned iters = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 2000000;

	printf("bench_iova: single thread, 4 KiB granule, %u iterations\n", iters);
	fast_pairs("alloc_fast+free_fast 1 pfn, cache hot", false, 1, iters);
	fast_pairs("alloc_fast+free_fast 8 pfn, cache hot", false, 8, iters);
	fast_pairs("alloc_fast+free_fast 1 pfn, hot, checked", true, 1, iters);
	fast_pairs("alloc_fast+free_fast 64 pfn (uncached)", false, 64, iters / 4);
	tree_pairs(0, iters);
	tree_pairs(10000, iters);
	tree_fragmented(2000, iters / 100);
	return 0;
}
