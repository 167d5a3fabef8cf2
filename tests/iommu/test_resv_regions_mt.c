/* test_resv_regions_mt.c — the reserved IOVA regions come from each IOMMU's driver (Linux
 * get_resv_regions) and dma-iommu keeps them out of its DMA domains: on SMMUv3 the software
 * MSI window (MSI_IOVA_BASE, 1 MiB at 128 MiB), on VT-d the x86 interrupt range
 * 0xFEE00000-0xFEEFFFFF (intel_iommu_get_resv_regions, IOAPIC_RANGE_START/END), and each
 * architecture's domains use the other's range as ordinary IOVA space. Native boards
 * (kunpeng920 with SMMUv3, icelake-2s-a100 with VT-d; the units' agents are threads: _mt).
 * Not a test of the IOVA allocator (test_iova.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/iommu.h>
#include <iommulab/plat.h>
#include <iommulab/topo.h>

/* Typed in from Linux (drivers/iommu/arm/arm-smmu-v3: MSI_IOVA_BASE 0x8000000, MSI_IOVA_LENGTH
 * 0x100000; drivers/iommu/intel: IOAPIC_RANGE_START 0xfee00000, IOAPIC_RANGE_END 0xfeefffff),
 * not from iommulab's headers. */
#define SMMU_MSI_BASE 0x8000000ull
#define SMMU_MSI_LEN 0x100000ull
#define X86_IRQ_BASE 0xfee00000ull
#define X86_IRQ_LEN (0xfeefffffull - 0xfee00000ull + 1)

#define CHUNK (1ull << 20) /* 1 MiB maps: aligned to their size, so they tile the space */

struct rig {
	struct ilab_topo *topo;
	struct ilab_board *board;
	struct ilab_dev *dev;
	ilab_pa_t buf;
};

/* A native board of `topo` with only its first device's unit modelled (architecture `arch`),
 * the driver probed, the device (not PCI: no 32-bit-first attempt) with a dma_bits mask in a
 * strict DMA domain. */
static void rig_up(struct rig *r, const char *topo, const char *arch, unsigned dma_bits)
{
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_board_opts bo = { .node_bytes = 256ull << 20, .iommu_arch = arch };
	struct ilab_dev *devs;
	unsigned n;
	char err[256];

	memset(r, 0, sizeof(*r));
	assert_int_equal(ilab_topo_load(topo, &r->topo, err, sizeof(err)), 0);
	bo.iommu_mask = 1ull << ilab_topo_device(r->topo, 0)->smmu;
	pc.topo = r->topo;
	assert_int_equal(plat_init(&pc), 0);
	assert_int_equal(ilab_board_create(r->topo, &bo, &r->board, err, sizeof(err)), 0);
	assert_int_equal(ilab_board_start(r->board), 0);
	assert_int_equal(ilab_board_probe_drivers(r->board, arch, NULL), 0);
	assert_int_equal(ilab_board_devices(r->board, &devs, &n), 0);
	r->dev = &devs[0];
	assert_non_null(r->dev->iommu);
	r->dev->pci = false;
	r->dev->dma_bits = dma_bits;
	assert_int_equal(ilab_iommu_probe_device(r->dev, ILAB_DOMAIN_DMA), 0);
	assert_int_equal(ilab_mem_alloc_pages(ilab_board_mem(r->board), 0, 8, &r->buf), 0);
}

static void rig_down(struct rig *r)
{
	ilab_iommu_release_device(r->dev);
	ilab_board_destroy(r->board);
	plat_fini();
	ilab_topo_free(r->topo);
}

static void expect_one_region(struct ilab_iommu *iommu, uint64_t start, uint64_t len,
			      enum ilab_resv_type type)
{
	struct ilab_iommu_resv_region regs[ILAB_IOMMU_RESV_MAX];

	assert_int_equal(ilab_iommu_get_resv_regions(iommu, NULL, regs, ILAB_IOMMU_RESV_MAX), 1);
	assert_int_equal(regs[0].start, start);
	assert_int_equal(regs[0].length, len);
	assert_int_equal(regs[0].type, type);
}

/* Map CHUNK after CHUNK (never unmapped: each takes new IOVA space, top-down from the mask)
 * until one lands below `lo`. Returns whether any overlapped [lo, lo + len); *below is the
 * first one under lo, *above the last one above the range. */
static bool walk_down_past(struct rig *r, uint64_t lo, uint64_t len, uint64_t *above,
			   uint64_t *below)
{
	bool overlapped = false;

	*above = *below = 0;
	for (unsigned i = 0; i < 4096; i++) {
		ilab_dma_addr_t a = ilab_dma_map_single(r->dev, r->buf, CHUNK, ILAB_DMA_TO_DEVICE);

		assert_true(a != ILAB_DMA_MAPPING_ERROR);
		if (a < lo + len && a + CHUNK > lo)
			overlapped = true;
		if (a >= lo + len)
			*above = a;
		if (a < lo) {
			*below = a;
			break;
		}
	}
	return overlapped;
}

static void test_smmuv3_reserves_its_msi_window(void **state)
{
	uint64_t above, below;
	struct rig r;

	(void)state;
	rig_up(&r, "kunpeng920", "smmuv3", 28); /* top-down from 256 MiB to the window */
	expect_one_region(r.dev->iommu, SMMU_MSI_BASE, SMMU_MSI_LEN, ILAB_RESV_SW_MSI);
	assert_false(walk_down_past(&r, SMMU_MSI_BASE, SMMU_MSI_LEN, &above, &below));
	/* the allocations step over the window: just above it, then just below it */
	assert_int_equal(above, SMMU_MSI_BASE + SMMU_MSI_LEN);
	assert_int_equal(below, SMMU_MSI_BASE - CHUNK);
	rig_down(&r);
}

static void test_smmuv3_maps_the_x86_interrupt_range(void **state)
{
	uint64_t above, below;
	struct rig r;

	(void)state;
	rig_up(&r, "kunpeng920", "smmuv3", 32);
	assert_true(walk_down_past(&r, X86_IRQ_BASE, X86_IRQ_LEN, &above, &below));
	rig_down(&r);
}

static void test_vtd_reserves_the_x86_interrupt_range(void **state)
{
	uint64_t above, below;
	struct rig r;

	(void)state;
	rig_up(&r, "icelake-2s-a100", "vtd", 32); /* top-down from 4 GiB to 0xFEF00000 */
	expect_one_region(r.dev->iommu, X86_IRQ_BASE, X86_IRQ_LEN, ILAB_RESV_MSI);
	assert_false(walk_down_past(&r, X86_IRQ_BASE, X86_IRQ_LEN, &above, &below));
	assert_int_equal(above, X86_IRQ_BASE + X86_IRQ_LEN);
	assert_int_equal(below, X86_IRQ_BASE - CHUNK);
	rig_down(&r);
}

static void test_vtd_maps_the_smmu_msi_window(void **state)
{
	uint64_t above, below;
	struct rig r;

	(void)state;
	rig_up(&r, "icelake-2s-a100", "vtd", 28);
	assert_true(walk_down_past(&r, SMMU_MSI_BASE, SMMU_MSI_LEN, &above, &below));
	rig_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smmuv3_reserves_its_msi_window),
		cmocka_unit_test(test_smmuv3_maps_the_x86_interrupt_range),
		cmocka_unit_test(test_vtd_reserves_the_x86_interrupt_range),
		cmocka_unit_test(test_vtd_maps_the_smmu_msi_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
