/* test_mem_pages.c — the per-node buddy page allocator: home node and natural alignment of
 * every order, zeroing, exhaustion and recovery, coalescing back to top-order blocks, a node
 * whose size is not a multiple of 4 MiB, and bad frees that are ignored without corruption.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/mem.h"

#define MiB (1ull << 20)
#define NODE_BYTES (8 * MiB)
#define NODE_PAGES (NODE_BYTES / 4096) /* 2048 */

static int setup(void **state)
{
	struct ilab_mem_config cfg = { .nr_nodes = 2, .node_bytes = NODE_BYTES };
	struct ilab_mem *mem;

	if (ilab_mem_create(&cfg, &mem))
		return -1;
	*state = mem;
	return 0;
}

static int teardown(void **state)
{
	ilab_mem_destroy(*state);
	return 0;
}

static uint64_t free_pages(struct ilab_mem *mem, int node)
{
	struct ilab_mem_stats st;
	ilab_mem_get_stats(mem, &st);
	return st.node_pages_free[node];
}

static uint64_t bad_frees(struct ilab_mem *mem)
{
	struct ilab_mem_stats st;
	ilab_mem_get_stats(mem, &st);
	return st.bad_frees;
}

/* A buddy block of order k starts at a multiple of 4 KiB << k (node bases are 8 MiB
 * aligned here), lies inside its node and reads back as zero. */
static void test_every_order_home_node_alignment_zeroed(void **state)
{
	struct ilab_mem *mem = *state;

	for (int node = 0; node < 2; node++) {
		for (unsigned order = 0; order < ILAB_MEM_MAX_ORDER; order++) {
			ilab_pa_t pa;
			uint64_t bytes = 4096ull << order;
			assert_int_equal(ilab_mem_alloc_pages(mem, node, order, &pa), 0);
			assert_int_equal(ilab_mem_node_of(mem, pa), node);
			assert_int_equal(ilab_mem_node_of(mem, pa + bytes - 1), node);
			assert_int_equal(pa % bytes, 0);
			uint8_t *p = ilab_mem_va(mem, pa, bytes);
			assert_non_null(p);
			for (uint64_t i = 0; i < bytes; i++)
				if (p[i])
					fail_msg("order %u byte %llu not zero", order,
						 (unsigned long long)i);
			memset(p, 0xa5, bytes); /* dirty it for the next allocation */
			ilab_mem_free_pages(mem, pa, order);
		}
		assert_int_equal(free_pages(mem, node), NODE_PAGES);
	}
	/* Dirty memory comes back zeroed. */
	ilab_pa_t pa;
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 3, &pa), 0);
	uint8_t *p = ilab_mem_va(mem, pa, 4096 * 8);
	for (int i = 0; i < 4096 * 8; i++)
		assert_int_equal(p[i], 0);
	ilab_mem_free_pages(mem, pa, 3);
	assert_int_equal(bad_frees(mem), 0);
}

/* Outside plat threads the calling CPU is unknown and Linux's numa_node_id() fallback is
 * node 0; a missing node or an order >= MAX_ORDER is -EINVAL, not exhaustion. */
static void test_node_choice_and_bad_arguments(void **state)
{
	struct ilab_mem *mem = *state;
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_alloc_pages(mem, -1, 0, &pa), 0);
	assert_int_equal(ilab_mem_node_of(mem, pa), 0);
	ilab_mem_free_pages(mem, pa, 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 2, 0, &pa), -EINVAL);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, ILAB_MEM_MAX_ORDER, &pa), -EINVAL);
	assert_non_null(strstr(ilab_mem_strerror(), "MAX_ORDER"));
	assert_int_equal(pa, ILAB_PA_INVALID);
	assert_int_equal(ilab_mem_alloc_pages(NULL, 0, 0, &pa), -EINVAL);
}

/* 2048 order-0 pages fit in an 8 MiB node, the 2049th fails, and one free makes room. Then
 * everything is freed and must coalesce back into two order-10 (4 MiB) blocks. */
static void test_exhaustion_recovery_and_coalescing(void **state)
{
	struct ilab_mem *mem = *state;
	ilab_pa_t *pa = calloc(NODE_PAGES + 1, sizeof(*pa));
	struct ilab_mem_stats st;

	for (unsigned i = 0; i < NODE_PAGES; i++)
		assert_int_equal(ilab_mem_alloc_pages(mem, 1, 0, &pa[i]), 0);
	assert_int_equal(free_pages(mem, 1), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 1, 0, &pa[NODE_PAGES]), -ENOMEM);
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.alloc_failures, 1);
	assert_int_equal(st.node_pages_free[0], NODE_PAGES); /* the other node is untouched */

	ilab_mem_free_pages(mem, pa[100], 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 1, 0, &pa[100]), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 1, 0, &pa[NODE_PAGES]), -ENOMEM);

	/* Free in an interleaved order (odd pages first) so merging happens at every level. */
	for (unsigned i = 1; i < NODE_PAGES; i += 2)
		ilab_mem_free_pages(mem, pa[i], 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 1, 1, &pa[NODE_PAGES]), -ENOMEM);
	for (unsigned i = 0; i < NODE_PAGES; i += 2)
		ilab_mem_free_pages(mem, pa[i], 0);
	assert_int_equal(free_pages(mem, 1), NODE_PAGES);
	assert_int_equal(bad_frees(mem), 0);

	ilab_pa_t big[3];
	assert_int_equal(ilab_mem_alloc_pages(mem, 1, 10, &big[0]), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 1, 10, &big[1]), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 1, 10, &big[2]), -ENOMEM);
	ilab_mem_free_pages(mem, big[0], 10);
	ilab_mem_free_pages(mem, big[1], 10);
	assert_int_equal(free_pages(mem, 1), NODE_PAGES);
	free(pa);
}

/* Every bad free is counted and changes nothing: afterwards exactly NODE_PAGES pages can
 * still be allocated, none twice. */
static void test_bad_frees_are_ignored(void **state)
{
	struct ilab_mem *mem = *state;
	ilab_pa_t a, b, base;

	assert_int_equal(ilab_mem_node_range(mem, 0, &base, NULL), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 2, &a), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 0, &b), 0);
	ilab_mem_free_pages(mem, a, 1);            /* wrong order */
	ilab_mem_free_pages(mem, a + 4096, 0);     /* inside a block */
	ilab_mem_free_pages(mem, a + 1, 2);        /* unaligned */
	ilab_mem_free_pages(mem, 0, 0);            /* not memory */
	ilab_mem_free_pages(mem, base + NODE_BYTES - 4096, 0); /* never allocated */
	ilab_mem_free_pages(mem, a, ILAB_MEM_MAX_ORDER);        /* impossible order */
	assert_int_equal(bad_frees(mem), 6);
	assert_int_equal(free_pages(mem, 0), NODE_PAGES - 5);
	ilab_mem_free_pages(mem, a, 2);
	ilab_mem_free_pages(mem, a, 2);            /* double free */
	ilab_mem_free_pages(mem, b, 0);
	ilab_mem_free_pages(mem, b, 0);            /* double free */
	assert_int_equal(bad_frees(mem), 8);
	assert_int_equal(free_pages(mem, 0), NODE_PAGES);

	/* No corruption: all pages are distinct and there are exactly NODE_PAGES of them. */
	uint8_t *seen = calloc(NODE_PAGES, 1);
	ilab_pa_t *pa = calloc(NODE_PAGES, sizeof(*pa));
	for (unsigned i = 0; i < NODE_PAGES; i++) {
		assert_int_equal(ilab_mem_alloc_pages(mem, 0, 0, &pa[i]), 0);
		uint64_t idx = (pa[i] - base) / 4096;
		assert_true(idx < NODE_PAGES);
		assert_int_equal(seen[idx], 0);
		seen[idx] = 1;
	}
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 0, &b), -ENOMEM);
	for (unsigned i = 0; i < NODE_PAGES; i++)
		ilab_mem_free_pages(mem, pa[i], 0);
	assert_int_equal(bad_frees(mem), 8);
	free(seen);
	free(pa);
}

/* A 6 MiB node is one 4 MiB block plus a 2 MiB (order 9) tail. */
static void test_node_not_multiple_of_top_order(void **state)
{
	(void)state;
	struct ilab_mem_config cfg = { .nr_nodes = 1, .node_bytes = 6 * MiB };
	struct ilab_mem *mem;
	ilab_pa_t a, b, c;

	assert_int_equal(ilab_mem_create(&cfg, &mem), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 10, &a), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 10, &b), -ENOMEM);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 9, &b), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 0, &c), -ENOMEM);
	ilab_mem_free_pages(mem, b, 9);
	ilab_mem_free_pages(mem, a, 10);
	assert_int_equal(free_pages(mem, 0), 6 * MiB / 4096);
	/* The tail never merges with memory past the node's end. */
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 10, &a), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 10, &b), -ENOMEM);
	ilab_mem_free_pages(mem, a, 10);
	assert_int_equal(bad_frees(mem), 0);
	ilab_mem_destroy(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_order_home_node_alignment_zeroed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_node_choice_and_bad_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exhaustion_recovery_and_coalescing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_frees_are_ignored, setup, teardown),
		cmocka_unit_test(test_node_not_multiple_of_top_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
