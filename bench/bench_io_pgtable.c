/* bench_io_pgtable.c — native cost of io-pgtable-arm through the IOMMU core loop: ns per 4 KiB
 * page for map+unmap of runs of 1..512 pages, map_pages (one walk per table) vs the old
 * one-call-per-page path. Not a test: it prints figures. Run a Release build:
 * bench_io_pgtable [total pages per point]
 */
#include <stdio.h>
#include <stdlib.h>

#include <iommulab/io_pgtable.h>
#include <iommulab/iommu_map.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>

#define SZ_4K (1ull << 12)
#define SZ_2M (1ull << 21)
#define SZ_1G (1ull << 30)

static double run(struct ilab_iommu_pt_ops *ops, unsigned pages, bool batched, uint64_t total)
{
	uint64_t iters = total / pages, i, t0, t1;
	uint64_t iova = 3 * SZ_1G, pa = SZ_1G + SZ_4K; /* pa offset by 4K: never a block */
	size_t size = pages * SZ_4K;

	if (iters < 10)
		iters = 10;
	/* warm the tables */
	ilab_iommu_map(ops, iova, pa, size, ILAB_IOMMU_READ | ILAB_IOMMU_WRITE, batched);
	ilab_iommu_unmap(ops, iova, size, batched);
	t0 = plat_now_ns();
	for (i = 0; i < iters; i++) {
		if (ilab_iommu_map(ops, iova, pa, size, ILAB_IOMMU_READ | ILAB_IOMMU_WRITE, batched) ||
		    ilab_iommu_unmap(ops, iova, size, batched) != size) {
			fprintf(stderr, "map/unmap failed\n");
			exit(1);
		}
	}
	t1 = plat_now_ns();
	return (double)(t1 - t0) / (double)iters;
}

int main(int argc, char **argv)
{
	uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 0) : 4000000;
	struct ilab_mem_config mc = { .nr_nodes = 1, .node_bytes = 64ull << 20 };
	struct ilab_io_pgtable_cfg cfg = {
		.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G, .ias = 48, .oas = 48, .coherent_walk = true,
		.node = 0,
	};
	struct ilab_io_pgtable *pgt;
	struct ilab_iommu_pt_ops ops;
	struct ilab_mem *mem;
	unsigned pages;

	if (ilab_mem_create(&mc, &mem) || (cfg.mem = mem, ilab_alloc_io_pgtable(
						  ILAB_ARM_64_LPAE_S1, &cfg, &pgt))) {
		fprintf(stderr, "set-up failed\n");
		return 1;
	}
	ilab_io_pgtable_pt_ops(pgt, &ops);
	printf("bench_io_pgtable: 4K granule, 48-bit, map+unmap through the core loop, no TLB ops\n");
	printf("%6s %16s %16s %14s %14s %8s\n", "pages", "map_pages ns/op", "per-page ns/op",
	       "map_pages ns/pg", "per-page ns/pg", "ratio");
	for (pages = 1; pages <= 512; pages *= 2) {
		double a = run(&ops, pages, true, total);
		double b = run(&ops, pages, false, total);

		printf("%6u %16.1f %16.1f %14.1f %14.1f %8.2f\n", pages, a, b, a / pages, b / pages,
		       b / a);
	}
	ilab_free_io_pgtable(pgt);
	ilab_mem_destroy(mem);
	return 0;
}
