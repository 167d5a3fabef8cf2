/* test_sim_pgtable.c — what io-pgtable's block split costs in simulated time: a partial unmap
 * of a 2M block (cfg.split_blocks, Linux <= 6.12) writes the new table's entries except the
 * unmapped ones, one compute.pte_write_ns charge each. Measured as the difference between two
 * identical runs whose pte_write_ns differ: everything else (lines, allocation) is the same.
 * Not a test of the split's result (tests/drivers/test_io_pgtable.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "iommulab/io_pgtable.h"
#include "iommulab/iommu_map.h"
#include "iommulab/mem.h"
#include "sim_fixture.h"

#define SZ_4K 0x1000ull
#define SZ_2M 0x200000ull
#define UNMAPPED 2 /* pages of the block */
#define ENTRIES 512 /* of the 4K table that replaces the 2M block */

struct split_run {
	struct ilab_mem *mem;
	uint64_t unmap_ns;
	size_t unmapped;
	int rc;
};

static void nop_flush_all(void *cookie)
{
	(void)cookie;
}

static void nop_flush_walk(uint64_t iova, size_t size, size_t granule, void *cookie)
{
	(void)iova, (void)size, (void)granule, (void)cookie;
}

static const struct ilab_iommu_flush_ops nop_ops = {
	.tlb_flush_all = nop_flush_all,
	.tlb_flush_walk = nop_flush_walk,
};

static void split_fn(unsigned idx, void *arg)
{
	struct split_run *r = arg;
	struct ilab_io_pgtable_cfg cfg = {
		.pgsize_bitmap = SZ_4K | SZ_2M, .ias = 48, .oas = 48, .coherent_walk = true,
		.split_blocks = true, .tlb = &nop_ops, .mem = r->mem,
	};
	struct ilab_io_pgtable *pgt = NULL;
	size_t mapped = 0;
	uint64_t t0;

	(void)idx;
	r->rc = ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt);
	if (r->rc)
		return;
	r->rc = ilab_io_pgtable_map_pages(pgt, 4 * SZ_2M, SZ_2M, SZ_2M, 1, ILAB_IOMMU_READ,
					  &mapped);
	t0 = plat_now_ns();
	r->unmapped = ilab_io_pgtable_unmap_pages(pgt, 4 * SZ_2M + 3 * SZ_4K, SZ_4K, UNMAPPED,
						  NULL);
	r->unmap_ns = plat_now_ns() - t0;
	ilab_free_io_pgtable(pgt);
}

/* The unmap's simulated time with pte_write_ns = ns, on a fresh simulator and memory. */
static uint64_t split_unmap_ns(uint64_t ns)
{
	struct ilab_mem_config mc = { .nr_nodes = 1, .node_bytes = 64ull << 20 };
	struct split_run r = { 0 };
	struct ilab_sim *s;

	assert_int_equal(ilab_mem_create(&mc, &r.mem), 0);
	s = fix_sim(1, 1);
	assert_non_null(s);
	plat_charge_table[PLAT_CHARGE_PTE_WRITE] = ns;
	assert_int_equal(ilab_sim_run_threads(1, NULL, split_fn, &r), 0);
	fix_sim_done(s);
	ilab_mem_destroy(r.mem);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.unmapped, UNMAPPED * SZ_4K);
	return r.unmap_ns;
}

static void split_charges_one_pte_write_per_entry_written(void **state)
{
	const uint64_t base = split_unmap_ns(10), more = split_unmap_ns(10 + 1000);

	(void)state;
	/* 1000 ns more per PTE write: (512 - 2) entries written, the two unmapped ones not */
	assert_int_equal(more - base, (ENTRIES - UNMAPPED) * 1000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_charges_one_pte_write_per_entry_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
