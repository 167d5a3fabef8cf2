/* test_public_headers.c — every public header of include/iommulab/ compiles in one translation
 * unit with the others (embedders include several; two enums once shared enumerator names),
 * in C11 with the project's warnings. The checks below only prove the names are distinct. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <iommulab/allreduce.h>
#include <iommulab/atc.h>
#include <iommulab/board.h>
#include <iommulab/dma_engine.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/intel_iommu_drv.h>
#include <iommulab/io_pgtable.h>
#include <iommulab/iommu.h>
#include <iommulab/iommu_arch.h>
#include <iommulab/iommu_map.h>
#include <iommulab/iova.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/mem.h>
#include <iommulab/nic.h>
#include <iommulab/nvme.h>
#include <iommulab/plat.h>
#include <iommulab/report.h>
#include <iommulab/scenario.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/smmuv3_drv_ats.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>
#include <iommulab/vfio.h>

static void cma_names_are_distinct(void **state)
{
	(void)state;
	/* the scenario's switch and the memory model's placement are different enums */
	assert_int_equal(ILAB_CMA_POLICY_GLOBAL, 0);
	assert_int_equal(ILAB_CMA_POLICY_PERNUMA, 1);
	assert_int_not_equal(ILAB_CMA_PERNUMA, ILAB_CMA_GLOBAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cma_names_are_distinct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
