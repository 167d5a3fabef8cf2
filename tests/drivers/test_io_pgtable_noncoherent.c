/* test_io_pgtable_noncoherent.c — io-pgtable-arm for a walker that does not snoop CPU caches
 * (coherent_walk false, SMMU IDR0.COHACC 0): the TCR attributes, and PTEs cleaned to the point
 * of coherency exactly where Linux io-pgtable-arm.c does it — each new table whole
 * (__arm_lpae_alloc_pages: dma_map_single), each installed table descriptor once and marked
 * ARM_LPAE_PTE_SW_SYNC (arm_lpae_install_table), a descriptor someone else installed but did not
 * mark (__arm_lpae_map's "kick"), each map run (__arm_lpae_init_pte), each unmap run and each
 * removed table descriptor (__arm_lpae_clear_pte) — counted, with the lines each clean covers.
 * A coherent table does none of it. The SMMU model reads the one copy of simulated memory, so
 * it cannot show a PTE that is missing before its clean: the counts are the check.
 * Expected counts are worked out from the Linux functions named above and the LPAE geometry.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/io_pgtable.h>
#include <iommulab/mem.h>

#define SZ_4K (1ull << 12)
#define SZ_2M (1ull << 21)
#define SZ_1G (1ull << 30)
#define MiB (1ull << 20)
#define SW_SYNC (1ull << 55) /* Linux ARM_LPAE_PTE_SW_SYNC: a software bit the walker ignores */
#define LINES_PER_TABLE (SZ_4K / 64)
#define RW (ILAB_IOMMU_READ | ILAB_IOMMU_WRITE)

static struct ilab_mem *g_mem;

static int setup_mem(void **state)
{
	struct ilab_mem_config mc = { .nr_nodes = 2, .node_bytes = 64 * MiB };

	(void)state;
	return ilab_mem_create(&mc, &g_mem);
}

static int teardown_mem(void **state)
{
	(void)state;
	ilab_mem_destroy(g_mem);
	return 0;
}

/* 4K granule, 48-bit input: four levels, the pgd one 4 KiB page. */
static struct ilab_io_pgtable *make(bool coherent)
{
	struct ilab_io_pgtable_cfg cfg = {
		.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G, .ias = 48, .oas = 48,
		.coherent_walk = coherent, .mem = g_mem, .node = 1,
	};
	struct ilab_io_pgtable *pgt = NULL;

	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), 0);
	return pgt;
}

/* The descriptor of `iova` at level lvl (0..3), read from memory as the walker would. */
static uint64_t desc_at(struct ilab_io_pgtable *pgt, uint64_t iova, unsigned lvl, ilab_pa_t *where)
{
	ilab_pa_t table = ilab_io_pgtable_cfg(pgt)->arm_lpae_s1_cfg.ttbr, pa = 0;
	uint64_t d = 0;

	for (unsigned l = 0; l <= lvl; l++) {
		pa = table + ((iova >> (12 + 9 * (3 - l))) & 511) * 8;
		assert_int_equal(ilab_mem_read(g_mem, pa, &d, 8), 0);
		table = d & 0x0000fffffffff000ull;
	}
	if (where)
		*where = pa;
	return d;
}

/* What changed since `before`. */
struct delta {
	uint64_t syncs, tables, lines;
};

static struct delta since(struct ilab_io_pgtable *pgt, const struct ilab_io_pgtable_stats *before)
{
	struct ilab_io_pgtable_stats now;
	struct delta d;

	ilab_io_pgtable_stats(pgt, &now);
	d.syncs = now.pte_syncs - before->pte_syncs;
	d.tables = now.table_cleans - before->table_cleans;
	d.lines = now.lines_cleaned - before->lines_cleaned;
	return d;
}

static void expect(struct ilab_io_pgtable *pgt, const struct ilab_io_pgtable_stats *before,
		   uint64_t syncs, uint64_t tables, uint64_t lines)
{
	struct delta d = since(pgt, before);

	assert_int_equal(d.syncs, syncs);
	assert_int_equal(d.tables, tables);
	assert_int_equal(d.lines, lines);
}

static int map(struct ilab_io_pgtable *pgt, uint64_t iova, ilab_pa_t pa, size_t size, size_t n)
{
	size_t mapped = 0;

	return ilab_io_pgtable_map_pages(pgt, iova, pa, size, n, RW, &mapped);
}

/* The pgd is cleaned when allocated; the TCR says outer-shareable, non-cacheable walks. */
static void test_alloc_cleans_pgd(void **state)
{
	struct ilab_io_pgtable_stats s;
	struct ilab_io_pgtable *pgt = make(false);
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(pgt);

	(void)state;
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(s.table_cleans, 1);
	assert_int_equal(s.lines_cleaned, LINES_PER_TABLE);
	assert_int_equal(s.pte_syncs, 0);
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.sh, 2);   /* outer shareable */
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.irgn, 0); /* non-cacheable */
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.orgn, 0);
	ilab_free_io_pgtable(pgt);
}

static void test_map_cleans_tables_and_leaves(void **state)
{
	struct ilab_io_pgtable_stats s;
	struct ilab_io_pgtable *pgt = make(false);
	const uint64_t iova = 5 * SZ_1G + 3 * SZ_2M + 5 * SZ_4K;

	(void)state;
	/* first page: three new tables (levels 1-3), each cleaned whole; each installed
	 * descriptor cleaned once (3 syncs of one line) and the leaf (1 sync, 1 line) */
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(map(pgt, iova, SZ_1G, SZ_4K, 1), 0);
	expect(pgt, &s, 4, 3, 3 * LINES_PER_TABLE + 4);
	for (unsigned l = 0; l < 3; l++)
		assert_true(desc_at(pgt, iova, l, NULL) & SW_SYNC); /* cleaned, marked */
	assert_false(desc_at(pgt, iova, 3, NULL) & SW_SYNC);        /* leaves carry no mark */
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, iova + 42), SZ_1G + 42);

	/* a neighbour in the same last-level table: the marked path is not cleaned again */
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(map(pgt, iova + SZ_4K, SZ_1G, SZ_4K, 1), 0);
	expect(pgt, &s, 1, 0, 1);

	/* three PTEs at indexes 7-9 straddle a 64-byte line (8 PTEs each): one sync, two lines */
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(map(pgt, iova - 5 * SZ_4K + 7 * SZ_4K, SZ_1G, SZ_4K, 3), 0);
	expect(pgt, &s, 1, 0, 2);

	/* a full run of 512 PTEs in a new last-level table: the table, its descriptor, the run */
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(map(pgt, 5 * SZ_1G + 8 * SZ_2M, SZ_1G, SZ_4K, 512), 0);
	expect(pgt, &s, 2, 1, LINES_PER_TABLE + 1 + LINES_PER_TABLE);
	ilab_free_io_pgtable(pgt);
}

static void test_unmap_cleans_runs_and_removed_tables(void **state)
{
	struct ilab_io_pgtable_stats s;
	struct ilab_io_pgtable *pgt = make(false);
	const uint64_t base = 2 * SZ_1G;

	(void)state;
	assert_int_equal(map(pgt, base, SZ_1G, SZ_4K, 512), 0);
	/* one leaf: one clean of one line */
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, base + 9 * SZ_4K, SZ_4K, 1, NULL), SZ_4K);
	expect(pgt, &s, 1, 0, 1);
	/* sixteen leaves from index 16: two lines */
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, base + 16 * SZ_4K, SZ_4K, 16, NULL),
			 16 * SZ_4K);
	expect(pgt, &s, 1, 0, 2);
	/* the whole 2M as one entry: the table descriptor is cleared and cleaned, then the run
	 * of one entry again (Linux __arm_lpae_unmap: clear_pte(&ptep[i], 1), then (ptep, i)) */
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, base, SZ_2M, 1, NULL), SZ_2M);
	expect(pgt, &s, 2, 0, 2);
	/* a 2M block where an (empty) table was: the table goes (2 syncs), the block (1 sync) */
	assert_int_equal(map(pgt, base, SZ_1G, SZ_4K, 1), 0);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, base, SZ_4K, 1, NULL), SZ_4K);
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(map(pgt, base, SZ_1G, SZ_2M, 1), 0);
	expect(pgt, &s, 3, 0, 3);
	ilab_free_io_pgtable(pgt);
}

/* A table descriptor without the mark (installed by a CPU that has not cleaned it yet): every
 * walk through it cleans it, and does not mark it (only its installer does). */
static void test_unmarked_descriptor_is_kicked(void **state)
{
	struct ilab_io_pgtable_stats s;
	struct ilab_io_pgtable *pgt = make(false);
	const uint64_t iova = 3 * SZ_1G;
	ilab_pa_t where;
	uint64_t d;

	(void)state;
	assert_int_equal(map(pgt, iova, SZ_1G, SZ_4K, 1), 0);
	d = desc_at(pgt, iova, 2, &where);
	assert_true(d & SW_SYNC);
	d &= ~SW_SYNC;
	assert_int_equal(ilab_mem_write(g_mem, where, &d, 8), 0);
	for (unsigned i = 1; i <= 2; i++) {
		ilab_io_pgtable_stats(pgt, &s);
		assert_int_equal(map(pgt, iova + i * SZ_4K, SZ_1G, SZ_4K, 1), 0);
		expect(pgt, &s, 2, 0, 2); /* the kick and the leaf */
		assert_false(desc_at(pgt, iova, 2, NULL) & SW_SYNC);
	}
	ilab_free_io_pgtable(pgt);
}

/* A coherent walker: no clean anywhere, no mark in any descriptor, cacheable walks. */
static void test_coherent_cleans_nothing(void **state)
{
	struct ilab_io_pgtable_stats s;
	struct ilab_io_pgtable *pgt = make(true);
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(pgt);

	(void)state;
	assert_int_equal(map(pgt, SZ_1G, SZ_1G, SZ_4K, 512), 0);
	assert_int_equal(map(pgt, 2 * SZ_1G, SZ_1G, SZ_2M, 1), 0);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, SZ_1G, SZ_2M, 1, NULL), SZ_2M);
	ilab_io_pgtable_stats(pgt, &s);
	assert_int_equal(s.pte_syncs, 0);
	assert_int_equal(s.table_cleans, 0);
	assert_int_equal(s.lines_cleaned, 0);
	for (unsigned l = 0; l < 2; l++)
		assert_false(desc_at(pgt, 2 * SZ_1G, l, NULL) & SW_SYNC);
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.sh, 3);   /* inner shareable */
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.irgn, 1); /* write-back */
	ilab_free_io_pgtable(pgt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_cleans_pgd),
		cmocka_unit_test(test_map_cleans_tables_and_leaves),
		cmocka_unit_test(test_unmap_cleans_runs_and_removed_tables),
		cmocka_unit_test(test_unmarked_descriptor_is_kicked),
		cmocka_unit_test(test_coherent_cleans_nothing),
	};

	return cmocka_run_group_tests(tests, setup_mem, teardown_mem);
}
