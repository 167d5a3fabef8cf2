/* test_sim_iova.c — what the IOVA allocator costs in simulated time (kunpeng920 profile): an
 * allocation or free that goes to the rbtree pays the tree's work (compute.iova_rbtree_ns)
 * under iova_rbtree_lock on top of the fast path's own charge; one the per-CPU caches serve
 * does not; and the tree's walk pays one dependent load per node it visits, so a search that
 * passes many ranges below a fragmented cached node, or a descent into a big tree, costs more
 * than one that does not. Not a test of the allocator's logic (tests/iommu/test_iova.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "iommulab/iova.h"
#include "sim_fixture.h"

#define BIG 64   /* pages: above the per-CPU caches' largest size (32 pages) */
#define LIMIT ((1ull << 32) >> 12)

struct iova_costs {
	uint64_t big_alloc, big_free, small_first_alloc, small_free, small_cached_alloc;
	int rc;
};

/* The simulated time one call took. */
#define TIMED(out, call)                                                                      \
	do {                                                                                  \
		uint64_t t0_ = plat_now_ns();                                                 \
		call;                                                                         \
		(out) = plat_now_ns() - t0_;                                                  \
	} while (0)

static void iova_costs_fn(unsigned idx, void *arg)
{
	struct iova_costs *c = arg;
	struct ilab_iova_domain iovad;
	uint64_t pfn = 0, small = 0;
	int rc = 0;

	(void)idx;
	c->rc = ilab_iova_domain_init(&iovad, 4096, 1);
	if (c->rc)
		return;
	/* warm-up: the locks' and the caches' lines are this CPU's from now on */
	pfn = ilab_alloc_iova_fast(&iovad, BIG, LIMIT, true);
	rc |= ilab_free_iova_fast(&iovad, pfn, BIG);

	TIMED(c->big_alloc, pfn = ilab_alloc_iova_fast(&iovad, BIG, LIMIT, true));
	TIMED(c->big_free, rc |= ilab_free_iova_fast(&iovad, pfn, BIG));
	TIMED(c->small_first_alloc, small = ilab_alloc_iova_fast(&iovad, 1, LIMIT, true));
	TIMED(c->small_free, rc |= ilab_free_iova_fast(&iovad, small, 1));
	TIMED(c->small_cached_alloc, pfn = ilab_alloc_iova_fast(&iovad, 1, LIMIT, true));
	if (!pfn || pfn != small || !small)
		rc = -1; /* the cache hands back what was just freed */
	rc |= ilab_free_iova_fast(&iovad, pfn, 1);
	ilab_iova_domain_destroy(&iovad);
	c->rc = rc;
}

static void tree_operations_pay_the_tree_work_cached_ones_do_not(void **state)
{
	struct ilab_profile p;
	struct ilab_sim *s;
	struct iova_costs c = { 0 };
	uint64_t tree, alloc, fre;

	(void)state;
	assert_int_equal(fix_load_profile(&p), 0);
	tree = ilab_profile_compute_ns(&p, "iova_rbtree_ns", 0);
	alloc = ilab_profile_compute_ns(&p, "iova_alloc_ns", 0);
	fre = ilab_profile_compute_ns(&p, "iova_free_ns", 0);
	assert_true(tree > 0);
	s = fix_sim(1, 1);
	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(1, NULL, iova_costs_fn, &c), 0);
	fix_sim_done(s);
	assert_int_equal(c.rc, 0);
	/* tree allocations and frees: the fast path's charge, the tree's, the lock */
	if (c.big_alloc < alloc + tree || c.big_free < fre + tree || c.small_first_alloc < alloc + tree)
		fail_msg("tree operations %llu / %llu / %llu ns, expected >= %llu / %llu",
			 (unsigned long long)c.big_alloc, (unsigned long long)c.big_free,
			 (unsigned long long)c.small_first_alloc,
			 (unsigned long long)(alloc + tree), (unsigned long long)(fre + tree));
	/* served by this CPU's magazines: no tree work (only warm lines and the fast path) */
	if (c.small_free >= fre + tree || c.small_cached_alloc >= alloc + tree)
		fail_msg("cached free %llu / alloc %llu ns paid the tree's %llu ns",
			 (unsigned long long)c.small_free, (unsigned long long)c.small_cached_alloc,
			 (unsigned long long)tree);
	assert_true(c.small_cached_alloc >= alloc);
}

/* ---- nodes visited ---------------------------------------------------------------------- */

#define HOLES 1000 /* 1-pfn holes a 2-pfn allocation has to walk past */

struct walk_costs {
	uint64_t short_walk, long_walk, small_free, big_free;
	int rc;
};

/* A 2-pfn allocation on a domain with one range (the walk stops at once), then one below
 * HOLES 1-pfn holes (allocate 2 x HOLES single pfns top-down, free every other one from the
 * top: the cached node stays near the top and the walk passes every range left). And the
 * free of a range in a 1-node tree against one in a 2 x HOLES-node tree (a longer descent). */
static void walk_costs_fn(unsigned idx, void *arg)
{
	struct walk_costs *c = arg;
	struct ilab_iova_domain a, b;
	struct ilab_iova *r, *lone, *small[2 * HOLES];
	int rc = 0;

	(void)idx;
	if (ilab_iova_domain_init(&a, 4096, 1) || ilab_iova_domain_init(&b, 4096, 1)) {
		c->rc = -1;
		return;
	}
	lone = ilab_alloc_iova(&a, 1, LIMIT - 1, true);
	TIMED(c->short_walk, r = ilab_alloc_iova(&a, 2, LIMIT - 1, true));
	rc |= !lone || !r;
	if (r)
		rc |= ilab_free_iova(&a, r->pfn_lo);
	for (unsigned i = 0; i < 2 * HOLES; i++) {
		small[i] = ilab_alloc_iova(&b, 1, LIMIT - 1, true);
		rc |= !small[i];
	}
	for (unsigned i = 0; i < 2 * HOLES && !rc; i += 2)
		rc |= ilab_free_iova(&b, small[i]->pfn_lo); /* top first */
	TIMED(c->long_walk, r = ilab_alloc_iova(&b, 2, LIMIT - 1, true));
	rc |= !r;
	if (!rc)
		rc |= r->pfn_lo >= small[2 * HOLES - 1]->pfn_lo; /* it went below every hole */
	TIMED(c->small_free, rc |= lone ? ilab_free_iova(&a, lone->pfn_lo) : -1);
	TIMED(c->big_free, rc |= ilab_free_iova(&b, small[HOLES + 1]->pfn_lo));
	rc |= ilab_iova_check(&b);
	ilab_iova_domain_destroy(&a);
	ilab_iova_domain_destroy(&b);
	c->rc = rc;
}

static void tree_walks_pay_each_node_they_visit(void **state)
{
	struct ilab_profile p;
	struct ilab_sim *s;
	struct walk_costs c = { 0 };
	uint64_t hit;

	(void)state;
	assert_int_equal(fix_load_profile(&p), 0);
	s = fix_sim(1, 1);
	assert_non_null(s);
	hit = p.cache_hit_ns;
	assert_true(hit > 0);
	assert_int_equal(ilab_sim_run_threads(1, NULL, walk_costs_fn, &c), 0);
	fix_sim_done(s);
	assert_int_equal(c.rc, 0);
	/* the walk passes HOLES ranges, each at least a hit (all are this CPU's lines); half of
	 * that leaves room for the short walk's own first fills. A flat cost per operation
	 * gives both the same. */
	if (c.long_walk < c.short_walk + HOLES / 2 * hit)
		fail_msg("walk past %u ranges %llu ns, one range %llu ns: expected >= %llu ns more",
			 HOLES, (unsigned long long)c.long_walk, (unsigned long long)c.short_walk,
			 (unsigned long long)(HOLES / 2 * hit));
	/* the descent: ~log2(3 x HOLES / 2) = 10 levels against 1 */
	if (c.big_free < c.small_free + 8 * hit)
		fail_msg("free in a %u-node tree %llu ns, in a 1-node tree %llu ns: expected >= %llu "
			 "ns more", 3 * HOLES / 2, (unsigned long long)c.big_free,
			 (unsigned long long)c.small_free, (unsigned long long)(8 * hit));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_operations_pay_the_tree_work_cached_ones_do_not),
		cmocka_unit_test(tree_walks_pay_each_node_they_visit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
