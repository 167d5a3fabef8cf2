/* test_mem.c — the simulated address space: configuration checks, the documented layout
 * (node n at (n + 1) << S), bounds of va/read/write at node edges and holes, and sparse host
 * backing (untouched simulated memory costs no host memory).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "iommulab/mem.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static struct ilab_mem *make(unsigned nodes, uint64_t node_bytes)
{
	struct ilab_mem_config cfg = { .nr_nodes = nodes, .node_bytes = node_bytes };
	struct ilab_mem *mem = NULL;

	assert_int_equal(ilab_mem_create(&cfg, &mem), 0);
	assert_non_null(mem);
	return mem;
}

/* ---- configuration ------------------------------------------------------------------------ */

static void expect_einval(const struct ilab_mem_config *cfg, const char *word)
{
	struct ilab_mem *mem = (struct ilab_mem *)0x1;

	assert_int_equal(ilab_mem_create(cfg, &mem), -EINVAL);
	assert_null(mem);
	if (!strstr(ilab_mem_strerror(), word))
		fail_msg("message \"%s\" does not mention \"%s\"", ilab_mem_strerror(), word);
}

static void test_config_rejects_bad_nodes_and_sizes(void **state)
{
	(void)state;
	struct ilab_mem_config c = { .nr_nodes = 0, .node_bytes = 64 * MiB };
	expect_einval(&c, "nr_nodes");
	c.nr_nodes = 65;
	expect_einval(&c, "nr_nodes");
	c.nr_nodes = 2;
	c.node_bytes = 0;
	expect_einval(&c, "node_bytes");
	c.node_bytes = 3 * MiB; /* not a multiple of 2 MiB */
	expect_einval(&c, "node_bytes");
	c.node_bytes = (1ull << 40) + 2 * MiB;
	expect_einval(&c, "node_bytes");
	assert_int_equal(ilab_mem_create(NULL, NULL), -EINVAL);
}

static void test_config_rejects_bad_cma(void **state)
{
	(void)state;
	struct ilab_mem_config c = { .nr_nodes = 4, .node_bytes = 64 * MiB, .cma = ILAB_CMA_GLOBAL };
	expect_einval(&c, "cma_global_bytes"); /* global mode without a size */
	c.cma_global_bytes = 16 * MiB;
	c.cma_global_node = 4;
	expect_einval(&c, "cma_global_node");
	c.cma_global_node = -1;
	expect_einval(&c, "cma_global_node");
	c.cma_global_node = 0;
	c.cma = ILAB_CMA_PERNUMA;
	expect_einval(&c, "cma_node_bytes");
	c.cma = ILAB_CMA_LISTED;
	c.cma_node_bytes = 8 * MiB;
	expect_einval(&c, "node list"); /* empty mask */
	c.cma_nodes_mask = 1u << 5;
	expect_einval(&c, "cma_nodes_mask");
	c.cma = (enum ilab_cma_mode)42;
	expect_einval(&c, "mode");
	/* Node 0 holds global (48 MiB) + its own area (24 MiB) = 72 MiB > 64 MiB. */
	c.cma = ILAB_CMA_PERNUMA;
	c.cma_global_bytes = 48 * MiB;
	c.cma_node_bytes = 24 * MiB;
	expect_einval(&c, "node 0");
	c.cma_global_bytes = UINT64_MAX; /* must not wrap when rounded */
	expect_einval(&c, "larger");
}

/* Areas that exactly fill a node are accepted; that node's page allocator is then empty.
 * Area sizes are rounded up to 2 MiB (a pageblock). */
static void test_config_exact_fit_and_rounding(void **state)
{
	(void)state;
	struct ilab_mem_config c = { .nr_nodes = 2, .node_bytes = 64 * MiB,
				     .cma = ILAB_CMA_PERNUMA, .cma_global_node = 0,
				     .cma_global_bytes = 48 * MiB, .cma_node_bytes = 15 * MiB + 1 };
	struct ilab_mem *mem;
	struct ilab_mem_stats st;
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_create(&c, &mem), 0);
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.cma_bytes_total[0], 16 * MiB);
	assert_int_equal(st.cma_bytes_total[1], 16 * MiB);
	assert_int_equal(st.cma_bytes_total[2], 48 * MiB); /* [nr_nodes] = global */
	assert_int_equal(st.node_pages_total[0], 0);
	assert_int_equal(st.node_pages_total[1], (64 - 16) * MiB / 4096);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 0, &pa), -ENOMEM);
	assert_int_equal(pa, ILAB_PA_INVALID);
	ilab_mem_destroy(mem);
}

/* ---- layout ------------------------------------------------------------------------------ */

/* 96 MiB nodes: the stride is the next power of two, 128 MiB (S = 27). */
static void test_layout_bases_and_holes(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(3, 96 * MiB);
	ilab_pa_t base;
	uint64_t bytes;

	assert_int_equal(ilab_mem_nr_nodes(mem), 3);
	for (int n = 0; n < 3; n++) {
		ilab_pa_t want = (ilab_pa_t)(n + 1) * 128 * MiB;
		assert_int_equal(ilab_mem_node_range(mem, n, &base, &bytes), 0);
		assert_int_equal(base, want);
		assert_int_equal(bytes, 96 * MiB);
		assert_int_equal(ilab_mem_node_of(mem, want), n);
		assert_int_equal(ilab_mem_node_of(mem, want + 96 * MiB - 1), n);
		assert_int_equal(ilab_mem_node_of(mem, want + 96 * MiB), -1); /* hole */
		assert_int_equal(ilab_mem_node_of(mem, want - 1), -1);
	}
	assert_int_equal(ilab_mem_node_of(mem, 0), -1); /* PA 0 is never memory */
	assert_int_equal(ilab_mem_node_of(mem, 4 * 128 * MiB), -1);
	assert_int_equal(ilab_mem_node_of(mem, UINT64_MAX), -1);
	assert_int_equal(ilab_mem_node_range(mem, 3, &base, &bytes), -EINVAL);
	assert_int_equal(ilab_mem_node_range(mem, -1, &base, &bytes), -EINVAL);
	ilab_mem_destroy(mem);
}

/* ---- bounds ------------------------------------------------------------------------------ */

static void test_read_write_bounds_at_node_edges(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(2, 96 * MiB);
	ilab_pa_t b0 = 128 * MiB, end0 = b0 + 96 * MiB;
	uint8_t buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[8] = { 0 };

	assert_int_equal(ilab_mem_write(mem, b0, buf, 8), 0);
	assert_int_equal(ilab_mem_read(mem, b0, out, 8), 0);
	assert_memory_equal(buf, out, 8);
	assert_int_equal(ilab_mem_write(mem, end0 - 4, buf, 4), 0); /* last 4 bytes */
	assert_int_equal(ilab_mem_read(mem, end0 - 4, out, 4), 0);
	assert_int_equal(ilab_mem_write(mem, end0 - 4, buf, 5), -EFAULT);
	assert_int_equal(ilab_mem_read(mem, end0 - 4, out, 5), -EFAULT);
	assert_non_null(strstr(ilab_mem_strerror(), "outside"));
	assert_int_equal(ilab_mem_read(mem, b0 - 1, out, 1), -EFAULT);
	assert_int_equal(ilab_mem_read(mem, end0, out, 1), -EFAULT);
	assert_int_equal(ilab_mem_read(mem, 0, out, 1), -EFAULT);
	assert_int_equal(ilab_mem_read(mem, b0, out, SIZE_MAX), -EFAULT); /* no wrap-around */
	assert_int_equal(ilab_mem_read(mem, UINT64_MAX, out, 1), -EFAULT);
	assert_null(ilab_mem_va(mem, end0 - 4, 5));
	assert_null(ilab_mem_va(mem, 0, 1));
	assert_int_equal(ilab_mem_read(NULL, b0, out, 1), -EFAULT);
	assert_int_equal(ilab_mem_write(NULL, b0, buf, 1), -EFAULT);
	assert_null(ilab_mem_va(NULL, b0, 1));

	/* va and read/write see the same bytes. */
	uint8_t *p = ilab_mem_va(mem, b0 + 4096, 8);
	assert_non_null(p);
	memcpy(p, buf, 8);
	assert_int_equal(ilab_mem_read(mem, b0 + 4096, out, 8), 0);
	assert_memory_equal(buf, out, 8);
	ilab_mem_destroy(mem);
}

/* 64 MiB nodes are contiguous (stride = size): an access may not straddle two nodes. */
static void test_access_across_node_boundary_faults(void **state)
{
	(void)state;
	struct ilab_mem *mem = make(2, 64 * MiB);
	ilab_pa_t boundary = 2 * 64 * MiB; /* end of node 0 = start of node 1 */
	uint8_t buf[8] = { 0 };

	assert_int_equal(ilab_mem_node_of(mem, boundary - 1), 0);
	assert_int_equal(ilab_mem_node_of(mem, boundary), 1);
	assert_int_equal(ilab_mem_read(mem, boundary - 4, buf, 8), -EFAULT);
	assert_int_equal(ilab_mem_write(mem, boundary - 4, buf, 8), -EFAULT);
	assert_null(ilab_mem_va(mem, boundary - 4, 8));
	assert_int_equal(ilab_mem_read(mem, boundary - 4, buf, 4), 0);
	assert_int_equal(ilab_mem_read(mem, boundary, buf, 8), 0);
	assert_int_equal(ilab_mem_read(mem, 3 * 64 * MiB - 8, buf, 9), -EFAULT); /* past last */
	ilab_mem_destroy(mem);
}

/* ---- sparse host backing ----------------------------------------------------------------- */

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* 4 nodes x 64 GiB = 256 GiB simulated. Touching 10 pages per node must cost exactly 40 host
 * pages of simulated memory (mincore), and the process must not grow by more than a few MiB
 * (the allocators' metadata is sparse too). */
static void test_untouched_memory_costs_no_host_memory(void **state)
{
	(void)state;
	uint64_t hp = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t rss0 = rss_bytes();
	struct ilab_mem *mem = make(4, 64 * GiB);
	struct ilab_mem_stats st;
	uint64_t one = 1;

	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.host_bytes_resident, 0);
	assert_int_equal(st.node_pages_total[3], 64 * GiB / 4096);
	assert_int_equal(st.node_pages_free[3], 64 * GiB / 4096);
	for (int n = 0; n < 4; n++) {
		ilab_pa_t base;
		assert_int_equal(ilab_mem_node_range(mem, n, &base, NULL), 0);
		/* 10 distinct host pages, spread over the node, away from the first (allocated) MiBs */
		for (int i = 0; i < 10; i++)
			assert_int_equal(ilab_mem_write(mem, base + ((uint64_t)i * 6 + 1) * GiB, &one, 8), 0);
	}
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.host_bytes_resident, 40 * hp);

	/* Allocating pages touches only what is zeroed (small blocks are memset; a 4 MiB block
	 * is zeroed by discarding its host pages and costs nothing). */
	ilab_pa_t pa;
	assert_int_equal(ilab_mem_alloc_pages(mem, 2, 10, &pa), 0);
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.host_bytes_resident, 40 * hp);
	assert_int_equal(ilab_mem_alloc_pages(mem, 2, 0, &pa), 0);
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.host_bytes_resident, 41 * hp); /* one more host page */

	uint64_t grown = rss_bytes() - rss0;
	if (grown > 16 * MiB)
		fail_msg("RSS grew by %llu bytes for 40 touched pages",
			 (unsigned long long)grown);
	ilab_mem_destroy(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_rejects_bad_nodes_and_sizes),
		cmocka_unit_test(test_config_rejects_bad_cma),
		cmocka_unit_test(test_config_exact_fit_and_rounding),
		cmocka_unit_test(test_layout_bases_and_holes),
		cmocka_unit_test(test_read_write_bounds_at_node_edges),
		cmocka_unit_test(test_access_across_node_boundary_faults),
		cmocka_unit_test(test_untouched_memory_costs_no_host_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
