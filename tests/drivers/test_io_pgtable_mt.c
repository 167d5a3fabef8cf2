/* test_io_pgtable_mt.c — concurrent map/unmap of disjoint IOVA ranges that share page tables:
 * threads race to install the same missing tables (compare-and-swap; the loser frees its page)
 * and fill/clear interleaved PTEs of one table. Not a benchmark; runs under TSan in CI.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/io_pgtable.h>
#include <iommulab/iommu_map.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>

#define SZ_4K (1ull << 12)
#define SZ_2M (1ull << 21)
#define SZ_1G (1ull << 30)
#define MAX_THREADS 8
#define ROUNDS 40
#define REGIONS 16 /* 2 MiB regions, each under a fresh L1/L2 path per round */

struct ctx {
	struct ilab_io_pgtable *pgt;
	struct ilab_iommu_pt_ops ops;
	unsigned nthreads;
	unsigned errors[MAX_THREADS];
	uint64_t round_base;
};

/* Thread t owns every page i of each region with i % nthreads == t. */
static void mapper(unsigned t, void *arg)
{
	struct ctx *c = arg;
	unsigned r, i;

	for (r = 0; r < REGIONS; r++) {
		uint64_t base = c->round_base + r * SZ_1G; /* a new L2 table per region */

		for (i = t; i < 512; i += c->nthreads) {
			uint64_t iova = base + i * SZ_4K;
			bool batch = (i / c->nthreads) & 1;

			if (ilab_iommu_map(&c->ops, iova, iova & (SZ_1G - 1), SZ_4K,
					   ILAB_IOMMU_READ | ILAB_IOMMU_WRITE, batch))
				c->errors[t]++;
		}
	}
}

static void checker_unmapper(unsigned t, void *arg)
{
	struct ctx *c = arg;
	struct ilab_iotlb_gather g;
	unsigned r, i;

	ilab_iotlb_gather_init(&g);
	for (r = 0; r < REGIONS; r++) {
		uint64_t base = c->round_base + r * SZ_1G;

		for (i = t; i < 512; i += c->nthreads) {
			uint64_t iova = base + i * SZ_4K;

			if (ilab_io_pgtable_iova_to_phys(c->pgt, iova + 7) != (iova & (SZ_1G - 1)) + 7)
				c->errors[t]++;
			if (ilab_io_pgtable_unmap_pages(c->pgt, iova, SZ_4K, 1, &g) != SZ_4K)
				c->errors[t]++;
		}
	}
}

static void test_concurrent_disjoint(void **state)
{
	struct ilab_mem_config mc = { .nr_nodes = 1, .node_bytes = 256ull << 20 };
	struct ilab_io_pgtable_cfg cfg = {
		.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G, .ias = 48, .oas = 48, .coherent_walk = true,
		.node = 0,
	};
	struct ilab_io_pgtable_stats st;
	struct ilab_mem *mem;
	struct ctx c = { 0 };
	int cpus[MAX_THREADS];
	unsigned i, round;

	(void)state;
	assert_int_equal(ilab_mem_create(&mc, &mem), 0);
	cfg.mem = mem;
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &c.pgt), 0);
	ilab_io_pgtable_pt_ops(c.pgt, &c.ops);
	c.nthreads = plat_cpu_count() < MAX_THREADS ? plat_cpu_count() : MAX_THREADS;
	if (c.nthreads < 2)
		c.nthreads = 1;
	for (i = 0; i < c.nthreads; i++)
		cpus[i] = (int)i;
	for (round = 0; round < ROUNDS; round++) {
		/* a fresh 512 GiB slot each round: every level's table is missing again */
		c.round_base = (uint64_t)(round + 1) << 39;
		assert_int_equal(plat_run_threads(c.nthreads, cpus, mapper, &c), 0);
		assert_int_equal(plat_run_threads(c.nthreads, cpus, checker_unmapper, &c), 0);
		for (i = 0; i < c.nthreads; i++)
			assert_int_equal(c.errors[i], 0);
		for (i = 0; i < 512; i += 37)
			assert_int_equal(ilab_io_pgtable_iova_to_phys(c.pgt, c.round_base + i * SZ_4K),
					 0);
	}
	ilab_io_pgtable_stats(c.pgt, &st);
	/* one pgd + per round: one L1, REGIONS L2 and REGIONS L3 tables survive the races */
	assert_int_equal(st.tables_alloc - st.install_races,
			 1 + ROUNDS * (1 + 2 * REGIONS));
	assert_int_equal(st.pte_stores, (uint64_t)ROUNDS * REGIONS * 512);
	assert_int_equal(st.pte_clears, (uint64_t)ROUNDS * REGIONS * 512);
	ilab_free_io_pgtable(c.pgt);
	ilab_mem_destroy(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_disjoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
