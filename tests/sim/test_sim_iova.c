/* test_sim_iova.c — what the IOVA allocator costs in simulated time (kunpeng920 profile): an
 * allocation or free that goes to the rbtree pays the tree's work (compute.iova_rbtree_ns)
 * under iova_rbtree_lock on top of the fast path's own charge; one the per-CPU caches serve
 * does not. Not a test of the allocator's logic (tests/iommu/test_iova.c).
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_operations_pay_the_tree_work_cached_ones_do_not),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
