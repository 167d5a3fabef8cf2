/* test_vfio_resv.c — VFIO type1 and the reserved IOVA regions of its groups, on both
 * architectures: a user mapping that overlaps a region an attached group's IOMMU driver
 * reports is refused with -EINVAL (Linux vfio_dma_do_map: vfio_iommu_iova_dma_valid), at its
 * edges and by a single page, and a group whose regions overlap a mapping already recorded is
 * refused on attach (vfio_iommu_resv_conflict); detaching a group gives its regions back.
 * The regions are Linux's, written here as Linux defines them, not read from this code:
 * SMMUv3's software MSI window MSI_IOVA_BASE 0x8000000, MSI_IOVA_LENGTH 0x100000
 * (arm-smmu-v3.h), VT-d's interrupt range IOAPIC_RANGE_START 0xfee00000 ..
 * IOAPIC_RANGE_END 0xfeefffff (intel/iommu.h; VT-d spec §3.14: requests there are interrupts).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/board.h"
#include "iommulab/iommu.h"
#include "iommulab/plat.h"
#include "iommulab/topo.h"
#include "iommulab/vfio.h"

#define SZ_4K 0x1000ull
#define VA 0x7f0000000000ull
#define RW (ILAB_VFIO_DMA_READ | ILAB_VFIO_DMA_WRITE)

/* One machine per architecture: two devices on different units (and nodes). */
struct arch_case {
	const char *topo;
	const char *dev[2];
	uint64_t resv_start, resv_last; /* the driver's region, inclusive */
	const char *resv_text;          /* how the error message writes its start */
};

static const struct arch_case smmuv3 = {
	"a100-2node", { "gpu0", "gpu4" }, 0x8000000ull, 0x8000000ull + 0x100000ull - 1,
	"0x8000000",
};

static const struct arch_case vtd = {
	"icelake-2s-a100", { "gpu0", "gpu4" }, 0xfee00000ull, 0xfeefffffull, "0xfee00000",
};

struct rig {
	const struct arch_case *ac;
	struct ilab_topo *topo;
	struct ilab_board *board;
	struct ilab_dev *dev[2];
	struct ilab_vfio_group *grp[2];
	struct ilab_vfio_container *c;
	char err[256];
};

static void rig_up(struct rig *r, const struct arch_case *ac)
{
	struct ilab_board_opts bo = { .node_bytes = 1ull << 30 };
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };

	memset(r, 0, sizeof(*r));
	r->ac = ac;
	assert_int_equal(ilab_topo_load(ac->topo, &r->topo, r->err, sizeof(r->err)), 0);
	pc.topo = r->topo;
	assert_int_equal(plat_init(&pc), 0);
	assert_int_equal(ilab_board_create(r->topo, &bo, &r->board, r->err, sizeof(r->err)), 0);
	assert_int_equal(ilab_board_start(r->board), 0);
	assert_int_equal(ilab_board_probe_drivers(r->board, NULL, NULL), 0);
	for (int i = 0; i < 2; i++) {
		r->dev[i] = ilab_board_find_dev(r->board, ac->dev[i]);
		assert_non_null(r->dev[i]);
		assert_int_equal(ilab_iommu_probe_device(r->dev[i], ILAB_DOMAIN_DMA), 0);
		assert_int_equal(ilab_vfio_group_open(r->dev[i], &r->grp[i]), 0);
	}
	assert_true(r->dev[0]->iommu != r->dev[1]->iommu);
	assert_int_equal(ilab_vfio_container_create(ilab_board_mem(r->board), NULL, &r->c), 0);
	/* user memory for every mapping below (16 pages, on node 0) */
	assert_int_equal(ilab_vfio_mm_alloc(ilab_vfio_container_mm(r->c), VA, 16 * SZ_4K, 0), 0);
}

static void rig_down(struct rig *r)
{
	ilab_vfio_container_destroy(r->c);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ilab_vfio_group_close(r->grp[i]), 0);
		ilab_iommu_release_device(r->dev[i]);
	}
	ilab_board_destroy(r->board);
	plat_fini();
	ilab_topo_free(r->topo);
}

static struct ilab_vfio_stats stats(struct rig *r)
{
	struct ilab_vfio_stats st;

	assert_int_equal(ilab_vfio_get_stats(r->c, &st), 0);
	return st;
}

/* A refused map: -EINVAL, nothing recorded or pinned, and the message names the region. */
static void expect_refused(struct rig *r, uint64_t iova, uint64_t size)
{
	struct ilab_vfio_stats before = stats(r), after;

	assert_int_equal(ilab_vfio_dma_map(r->c, VA, iova, size, RW), -EINVAL);
	assert_non_null(strstr(ilab_vfio_strerror(), "reserved region"));
	assert_non_null(strstr(ilab_vfio_strerror(), r->ac->resv_text));
	assert_non_null(strstr(ilab_vfio_strerror(), "(msi)"));
	after = stats(r);
	assert_int_equal(after.nr_mappings, before.nr_mappings);
	assert_int_equal(after.pinned_pages, before.pinned_pages);
}

static void expect_mapped_and_unmap(struct rig *r, uint64_t iova, uint64_t size)
{
	uint64_t unmapped;

	assert_int_equal(ilab_vfio_dma_map(r->c, VA, iova, size, RW), 0);
	assert_int_equal(stats(r).pinned_pages, size / SZ_4K);
	assert_int_equal(ilab_vfio_dma_unmap(r->c, iova, size, &unmapped), 0);
	assert_int_equal(unmapped, size);
}

/* Inside the region, its first and last page, and a range covering it: refused. Just below
 * its start and just above its end: mapped. One page over either edge: refused. */
static void map_checks(const struct arch_case *ac)
{
	const uint64_t lo = ac->resv_start, hi = ac->resv_last + 1; /* [lo, hi) */
	struct rig r;

	rig_up(&r, ac);
	assert_int_equal(ilab_vfio_attach_group(r.c, r.grp[0]), 0);
	expect_refused(&r, lo, SZ_4K);
	expect_refused(&r, lo + 0x10000, 4 * SZ_4K);
	expect_refused(&r, hi - SZ_4K, SZ_4K);
	expect_refused(&r, lo - SZ_4K, hi - lo + 2 * SZ_4K);
	expect_mapped_and_unmap(&r, lo - 4 * SZ_4K, 4 * SZ_4K); /* ends at lo - 1 */
	expect_mapped_and_unmap(&r, hi, 4 * SZ_4K);              /* starts at hi */
	expect_refused(&r, lo - 4 * SZ_4K, 5 * SZ_4K);           /* one page into it */
	expect_refused(&r, hi - SZ_4K, 5 * SZ_4K);               /* its last page and on */
	assert_int_equal(stats(&r).nr_mappings, 0);
	assert_int_equal(ilab_vfio_detach_group(r.c, r.grp[0]), 0);
	rig_down(&r);
}

static void test_smmuv3_map_respects_the_msi_window(void **state)
{
	(void)state;
	map_checks(&smmuv3);
}

static void test_vtd_map_respects_the_interrupt_range(void **state)
{
	(void)state;
	map_checks(&vtd);
}

/* Before any attach a mapping is only recorded (Linux: an empty iova_list refuses nothing);
 * a group whose region it overlaps is then refused with nothing changed; once the mapping
 * is gone the same group attaches, and the mapping is refused again. */
static void attach_checks(const struct arch_case *ac)
{
	struct ilab_vfio_stats st;
	uint64_t unmapped;
	struct rig r;

	rig_up(&r, ac);
	assert_int_equal(ilab_vfio_dma_map(r.c, VA, ac->resv_last + 1 - SZ_4K, 2 * SZ_4K, RW), 0);
	assert_int_equal(ilab_vfio_attach_group(r.c, r.grp[0]), -EINVAL);
	assert_non_null(strstr(ilab_vfio_strerror(), "reserved region"));
	assert_non_null(strstr(ilab_vfio_strerror(), ac->dev[0]));
	st = stats(&r);
	assert_int_equal(st.nr_domains, 0);
	assert_int_equal(st.nr_groups, 0);
	assert_int_equal(st.nr_mappings, 1);
	assert_int_equal(st.pinned_pages, 0); /* the attach replayed nothing */
	assert_int_equal(ilab_vfio_detach_group(r.c, r.grp[0]), -EINVAL); /* not attached */

	assert_int_equal(ilab_vfio_dma_unmap(r.c, ac->resv_last + 1 - SZ_4K, 2 * SZ_4K,
					     &unmapped), 0);
	assert_int_equal(ilab_vfio_attach_group(r.c, r.grp[0]), 0);
	expect_refused(&r, ac->resv_start, SZ_4K);

	/* a mapping next to the region does not stop a second group */
	assert_int_equal(ilab_vfio_dma_map(r.c, VA, ac->resv_start - SZ_4K, SZ_4K, RW), 0);
	assert_int_equal(ilab_vfio_attach_group(r.c, r.grp[1]), 0);
	assert_int_equal(stats(&r).nr_groups, 2);
	assert_int_equal(ilab_vfio_detach_group(r.c, r.grp[1]), 0);
	assert_int_equal(ilab_vfio_detach_group(r.c, r.grp[0]), 0);
	rig_down(&r);
}

static void test_smmuv3_attach_refused_over_a_mapping(void **state)
{
	(void)state;
	attach_checks(&smmuv3);
}

static void test_vtd_attach_refused_over_a_mapping(void **state)
{
	(void)state;
	attach_checks(&vtd);
}

/* Detaching one of two groups keeps the other's regions (both report the same range: Linux
 * rebuilds the list from the groups left, vfio_iommu_resv_refresh); detaching the last one
 * frees the range, and a mapping there is then recorded, but an attach over it refused. */
static void detach_checks(const struct arch_case *ac)
{
	struct rig r;

	rig_up(&r, ac);
	assert_int_equal(ilab_vfio_attach_group(r.c, r.grp[0]), 0);
	assert_int_equal(ilab_vfio_attach_group(r.c, r.grp[1]), 0);
	assert_int_equal(ilab_vfio_detach_group(r.c, r.grp[0]), 0);
	expect_refused(&r, ac->resv_start, SZ_4K);
	assert_int_equal(ilab_vfio_detach_group(r.c, r.grp[1]), 0);
	assert_int_equal(ilab_vfio_dma_map(r.c, VA, ac->resv_start, SZ_4K, RW), 0);
	assert_int_equal(ilab_vfio_attach_group(r.c, r.grp[1]), -EINVAL);
	assert_int_equal(stats(&r).nr_groups, 0);
	rig_down(&r);
}

static void test_smmuv3_detach_gives_the_window_back(void **state)
{
	(void)state;
	detach_checks(&smmuv3);
}

static void test_vtd_detach_gives_the_range_back(void **state)
{
	(void)state;
	detach_checks(&vtd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smmuv3_map_respects_the_msi_window),
		cmocka_unit_test(test_vtd_map_respects_the_interrupt_range),
		cmocka_unit_test(test_smmuv3_attach_refused_over_a_mapping),
		cmocka_unit_test(test_vtd_attach_refused_over_a_mapping),
		cmocka_unit_test(test_smmuv3_detach_gives_the_window_back),
		cmocka_unit_test(test_vtd_detach_gives_the_range_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
