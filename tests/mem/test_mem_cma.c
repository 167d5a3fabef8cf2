/* test_mem_cma.c — coherent DMA memory placement, checked against Linux's rules
 * (kernel/dma/contiguous.c, kernel/dma/direct.c): the device node's area, then the global
 * area, then plain pages of the device's node; one page or less never uses CMA; alignment is
 * min(get_order(size), CONFIG_CMA_ALIGNMENT = 8) pages; exhaustion ends in -ENOMEM.
 *
 * Machine: 4 nodes of 64 MiB; global area 16 MiB on node 0 (the top 16 MiB of node 0);
 * node areas 8 MiB, just below the global area on node 0, at the top of the other nodes.
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
#define KiB (1ull << 10)
#define NODE (64 * MiB)
#define GLOBAL_BYTES (16 * MiB)
#define AREA_BYTES (8 * MiB)

/* Node n starts at (n + 1) << 26 (64 MiB is already a power of two). */
static ilab_pa_t node_base(int n)
{
	return (ilab_pa_t)(n + 1) * NODE;
}

static struct ilab_mem *make(enum ilab_cma_mode mode, uint64_t mask)
{
	struct ilab_mem_config cfg = { .nr_nodes = 4, .node_bytes = NODE, .cma = mode,
				       .cma_global_node = 0, .cma_global_bytes = GLOBAL_BYTES,
				       .cma_node_bytes = AREA_BYTES, .cma_nodes_mask = mask };
	struct ilab_mem *mem = NULL;

	if (mode == ILAB_CMA_NONE)
		cfg.cma_global_bytes = cfg.cma_node_bytes = 0;
	if (mode == ILAB_CMA_GLOBAL)
		cfg.cma_node_bytes = 0;
	assert_int_equal(ilab_mem_create(&cfg, &mem), 0);
	return mem;
}

static bool in_range(ilab_pa_t pa, uint64_t bytes, ilab_pa_t lo, ilab_pa_t hi)
{
	return pa >= lo && pa + bytes <= hi;
}

static bool in_global(ilab_pa_t pa, uint64_t bytes)
{
	return in_range(pa, bytes, node_base(0) + NODE - GLOBAL_BYTES, node_base(0) + NODE);
}

/* The node's own area: top of the node, or just below the global area on node 0. */
static bool in_node_area(int n, ilab_pa_t pa, uint64_t bytes)
{
	ilab_pa_t top = node_base(n) + NODE - (n == 0 ? GLOBAL_BYTES : 0);
	return in_range(pa, bytes, top - AREA_BYTES, top);
}

static void alloc_expect(struct ilab_mem *mem, int dev_node, size_t size, int home,
			 enum ilab_mem_source src, ilab_pa_t *out)
{
	struct ilab_mem_alloc_info info = { -2, 0 };
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_alloc_coherent(mem, dev_node, size, &pa, &info), 0);
	assert_int_equal(info.home_node, home);
	assert_int_equal(info.source, src);
	assert_int_equal(ilab_mem_node_of(mem, pa), home);
	if (src == ILAB_MEM_SRC_GLOBAL_CMA)
		assert_true(in_global(pa, size));
	else if (src == ILAB_MEM_SRC_NODE_CMA)
		assert_true(in_node_area(home, pa, size));
	else
		assert_false(in_global(pa, size) || in_node_area(home, pa, 1));
	if (out)
		*out = pa;
	else
		ilab_mem_free_coherent(mem, pa, size);
}

static void test_none_gives_plain_pages_of_device_node(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_NONE, 0);
	for (int n = 0; n < 4; n++)
		alloc_expect(mem, n, 64 * KiB, n, ILAB_MEM_SRC_PAGES, NULL);
	ilab_pa_t pa;
	/* 8 MiB is order 11 >= MAX_ORDER: without CMA it cannot be satisfied. */
	assert_int_equal(ilab_mem_alloc_coherent(mem, 1, 8 * MiB, &pa, NULL), -ENOMEM);
	ilab_mem_destroy(mem);
}

/* Linux's default: every device's coherent memory lands on node 0. */
static void test_global_area_is_on_node0_for_every_device(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_GLOBAL, 0);
	for (int n = 0; n < 4; n++)
		alloc_expect(mem, n, 64 * KiB, 0, ILAB_MEM_SRC_GLOBAL_CMA, NULL);
	/* Larger than MAX_ORDER pages is fine from CMA. */
	alloc_expect(mem, 3, 8 * MiB, 0, ILAB_MEM_SRC_GLOBAL_CMA, NULL);
	ilab_mem_destroy(mem);
}

static void test_pernuma_keeps_memory_local(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_PERNUMA, 0);
	for (int n = 0; n < 4; n++)
		alloc_expect(mem, n, 64 * KiB, n, ILAB_MEM_SRC_NODE_CMA, NULL);
	/* NUMA_NO_NODE: no node area is tried, the global area is. */
	alloc_expect(mem, -1, 64 * KiB, 0, ILAB_MEM_SRC_GLOBAL_CMA, NULL);
	ilab_mem_destroy(mem);
}

/* numa_cma=1:...,3:...: listed nodes get their own area, the others fall back to global. */
static void test_listed_nodes_only(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_LISTED, (1u << 1) | (1u << 3));
	struct ilab_mem_stats st;

	alloc_expect(mem, 0, 64 * KiB, 0, ILAB_MEM_SRC_GLOBAL_CMA, NULL);
	alloc_expect(mem, 1, 64 * KiB, 1, ILAB_MEM_SRC_NODE_CMA, NULL);
	alloc_expect(mem, 2, 64 * KiB, 0, ILAB_MEM_SRC_GLOBAL_CMA, NULL);
	alloc_expect(mem, 3, 64 * KiB, 3, ILAB_MEM_SRC_NODE_CMA, NULL);
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.cma_bytes_total[0], 0);
	assert_int_equal(st.cma_bytes_total[1], AREA_BYTES);
	assert_int_equal(st.cma_bytes_total[2], 0);
	assert_int_equal(st.cma_bytes_total[3], AREA_BYTES);
	assert_int_equal(st.cma_bytes_total[4], GLOBAL_BYTES);
	assert_int_equal(st.node_pages_total[0], (NODE - GLOBAL_BYTES) / 4096);
	assert_int_equal(st.node_pages_total[1], (NODE - AREA_BYTES) / 4096);
	assert_int_equal(st.node_pages_total[2], NODE / 4096);
	assert_int_equal(st.coherent_allocs[ILAB_MEM_SRC_NODE_CMA], 2);
	assert_int_equal(st.coherent_allocs[ILAB_MEM_SRC_GLOBAL_CMA], 2);
	ilab_mem_destroy(mem);
}

/* "if (size <= PAGE_SIZE) return NULL": one page (or less) is plain pages in every mode. */
static void test_one_page_or_less_skips_cma(void **state)
{
	(void)state;
	enum ilab_cma_mode modes[] = { ILAB_CMA_NONE, ILAB_CMA_GLOBAL, ILAB_CMA_PERNUMA,
				       ILAB_CMA_LISTED };
	for (unsigned m = 0; m < 4; m++) {
		struct ilab_mem *mem = make(modes[m], 0xf);
		for (int n = 0; n < 4; n++) {
			alloc_expect(mem, n, 4096, n, ILAB_MEM_SRC_PAGES, NULL);
			alloc_expect(mem, n, 1, n, ILAB_MEM_SRC_PAGES, NULL);
		}
		/* One byte more than a page is two pages: CMA again (except with NONE). */
		alloc_expect(mem, 2, 4097, modes[m] == ILAB_CMA_NONE ? 2 :
					   modes[m] == ILAB_CMA_GLOBAL ? 0 : 2,
			     modes[m] == ILAB_CMA_NONE     ? ILAB_MEM_SRC_PAGES :
			     modes[m] == ILAB_CMA_GLOBAL ? ILAB_MEM_SRC_GLOBAL_CMA :
							     ILAB_MEM_SRC_NODE_CMA,
			     NULL);
		ilab_mem_destroy(mem);
	}
}

/* Allocations of 1 MiB (256 pages, aligned to 2^8 pages) for a device on node 2: 8 come from
 * node 2's area, 16 from the global area, then 56 MiB of plain pages on node 2 (order 8
 * blocks), then -ENOMEM. Freeing everything empties every area again. */
static void test_exhaustion_falls_back_in_order(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_PERNUMA, 0);
	enum { N_AREA = 8, N_GLOBAL = 16, N_PAGES = 56, N = N_AREA + N_GLOBAL + N_PAGES };
	ilab_pa_t pa[N], extra;
	struct ilab_mem_stats st;
	int i = 0;

	for (; i < N_AREA; i++)
		alloc_expect(mem, 2, MiB, 2, ILAB_MEM_SRC_NODE_CMA, &pa[i]);
	for (; i < N_AREA + N_GLOBAL; i++)
		alloc_expect(mem, 2, MiB, 0, ILAB_MEM_SRC_GLOBAL_CMA, &pa[i]);
	for (; i < N; i++)
		alloc_expect(mem, 2, MiB, 2, ILAB_MEM_SRC_PAGES, &pa[i]);
	assert_int_equal(ilab_mem_alloc_coherent(mem, 2, MiB, &extra, NULL), -ENOMEM);
	assert_int_equal(extra, ILAB_PA_INVALID);
	/* Other nodes are unaffected: node 1 still gets its own area. */
	alloc_expect(mem, 1, MiB, 1, ILAB_MEM_SRC_NODE_CMA, NULL);

	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.cma_bytes_used[2], AREA_BYTES);
	assert_int_equal(st.cma_bytes_used[4], GLOBAL_BYTES);
	assert_int_equal(st.node_pages_free[2], 0);
	assert_int_equal(st.alloc_failures, 1);

	/* Returned to where each came from: a freed global chunk is reused by the next call. */
	ilab_mem_free_coherent(mem, pa[N_AREA + 3], MiB);
	alloc_expect(mem, 2, MiB, 0, ILAB_MEM_SRC_GLOBAL_CMA, &pa[N_AREA + 3]);
	for (i = 0; i < N; i++)
		ilab_mem_free_coherent(mem, pa[i], MiB);
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.cma_bytes_used[2], 0);
	assert_int_equal(st.cma_bytes_used[4], 0);
	assert_int_equal(st.node_pages_free[2], (NODE - AREA_BYTES) / 4096);
	assert_int_equal(st.bad_frees, 0);
	ilab_mem_destroy(mem);
}

/* Alignment is min(get_order(size), 8) pages: 2 pages at area offset 0, then 3 pages
 * (order 2: 4-page aligned) at page 4, then 2 MiB (order 9, capped to 8: 256-page aligned)
 * at page 256 — not at page 512, which alignment 9 would give. */
static void test_cma_alignment_is_capped_at_order_8(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_PERNUMA, 0);
	ilab_pa_t area = node_base(3) + NODE - AREA_BYTES, a, b, c;

	alloc_expect(mem, 3, 2 * 4096, 3, ILAB_MEM_SRC_NODE_CMA, &a);
	alloc_expect(mem, 3, 3 * 4096, 3, ILAB_MEM_SRC_NODE_CMA, &b);
	alloc_expect(mem, 3, 2 * MiB, 3, ILAB_MEM_SRC_NODE_CMA, &c);
	assert_int_equal(a - area, 0);
	assert_int_equal(b - area, 4 * 4096);
	assert_int_equal(c - area, 256 * 4096);
	ilab_mem_free_coherent(mem, a, 2 * 4096);
	ilab_mem_free_coherent(mem, b, 3 * 4096);
	ilab_mem_free_coherent(mem, c, 2 * MiB);
	ilab_mem_destroy(mem);
}

/* Coherent memory is zeroed, wherever it comes from. */
static void test_coherent_memory_is_zeroed(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_PERNUMA, 0);
	size_t sizes[] = { 100, 3 * 4096, 512 * KiB };
	for (unsigned s = 0; s < 3; s++) {
		for (int round = 0; round < 2; round++) {
			ilab_pa_t pa;
			assert_int_equal(ilab_mem_alloc_coherent(mem, 1, sizes[s], &pa, NULL), 0);
			uint8_t *p = ilab_mem_va(mem, pa, sizes[s]);
			assert_non_null(p);
			for (size_t i = 0; i < sizes[s]; i++)
				if (p[i])
					fail_msg("size %zu byte %zu not zero", sizes[s], i);
			memset(p, 0x5a, sizes[s]);
			ilab_mem_free_coherent(mem, pa, sizes[s]);
		}
	}
	ilab_mem_destroy(mem);
}

/* Frees that match no allocation are ignored and counted; the allocation survives. */
static void test_bad_coherent_frees_are_ignored(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_PERNUMA, 0);
	struct ilab_mem_stats st;
	ilab_pa_t a, b, p;

	alloc_expect(mem, 1, 64 * KiB, 1, ILAB_MEM_SRC_NODE_CMA, &a);
	alloc_expect(mem, 1, 64 * KiB, 1, ILAB_MEM_SRC_NODE_CMA, &b);
	alloc_expect(mem, 1, 4096, 1, ILAB_MEM_SRC_PAGES, &p);
	ilab_mem_free_coherent(mem, a, 32 * KiB);        /* too short */
	ilab_mem_free_coherent(mem, a, 128 * KiB);       /* too long: runs into b */
	ilab_mem_free_coherent(mem, a + 4096, 60 * KiB); /* not the start */
	ilab_mem_free_coherent(mem, a, 0);
	ilab_mem_free_coherent(mem, 0, 4096);
	ilab_mem_free_coherent(mem, p, 8192);            /* wrong size for a page block */
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.bad_frees, 6);
	assert_int_equal(st.cma_bytes_used[1], 128 * KiB);
	ilab_mem_free_coherent(mem, a, 64 * KiB);
	ilab_mem_free_coherent(mem, a, 64 * KiB);        /* double free */
	ilab_mem_free_coherent(mem, b, 64 * KiB);
	ilab_mem_free_coherent(mem, p, 4096);
	ilab_mem_free_coherent(mem, p, 4096);            /* double free */
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.bad_frees, 8);
	assert_int_equal(st.cma_bytes_used[1], 0);
	assert_int_equal(st.node_pages_free[1], (NODE - AREA_BYTES) / 4096);
	ilab_mem_destroy(mem);
}

static void test_coherent_bad_arguments(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(ILAB_CMA_GLOBAL, 0);
	ilab_pa_t pa;
	assert_int_equal(ilab_mem_alloc_coherent(mem, 4, 8192, &pa, NULL), -EINVAL);
	assert_int_equal(ilab_mem_alloc_coherent(mem, 0, 0, &pa, NULL), -EINVAL);
	assert_int_equal(ilab_mem_alloc_coherent(NULL, 0, 8192, &pa, NULL), -EINVAL);
	assert_int_equal(ilab_mem_alloc_coherent(mem, 0, SIZE_MAX, &pa, NULL), -ENOMEM);
	ilab_mem_destroy(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_gives_plain_pages_of_device_node),
		cmocka_unit_test(test_global_area_is_on_node0_for_every_device),
		cmocka_unit_test(test_pernuma_keeps_memory_local),
		cmocka_unit_test(test_listed_nodes_only),
		cmocka_unit_test(test_one_page_or_less_skips_cma),
		cmocka_unit_test(test_exhaustion_falls_back_in_order),
		cmocka_unit_test(test_cma_alignment_is_capped_at_order_8),
		cmocka_unit_test(test_coherent_memory_is_zeroed),
		cmocka_unit_test(test_bad_coherent_frees_are_ignored),
		cmocka_unit_test(test_coherent_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
