/* drv_test_util.h — set-up shared by the SMMUv3 driver tests: plat on the kunpeng920 topology,
 * a board with only the NIC's SMMU (node 2) modelled, the driver probed on it, and nic0.
 * Not a test by itself; header-only so each test executable stays self-contained.
 */
#ifndef ILAB_TESTS_DRV_TEST_UTIL_H
#define ILAB_TESTS_DRV_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "iommulab/board.h"
#include "iommulab/iommu.h"
#include "iommulab/plat.h"
#include "iommulab/smmuv3_drv.h"
#include "iommulab/topo.h"

struct dt {
	struct ilab_topo *topo;
	struct ilab_board *board;
	struct ilab_iommu *iommu;
	struct ilab_dev *dev; /* nic0 */
	unsigned si;          /* its SMMU */
	char err[160];
};

/* 0 or a negative errno; on error t->err says where. */
static inline int dt_setup(struct dt *t, enum ilab_cma_mode cma, const struct smmu_config *cfg,
			   const struct ilab_smmu_drv_opts *opts)
{
	struct ilab_board_opts bo = { .node_bytes = 1ull << 30, .cma = cma };
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_dev *devs;
	unsigned n;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = ilab_topo_load("kunpeng920", &t->topo, t->err, sizeof(t->err));
	if (rc)
		return rc;
	pc.topo = t->topo;
	rc = plat_init(&pc);
	if (rc) {
		snprintf(t->err, sizeof(t->err), "plat_init %d", rc);
		return rc;
	}
	bo.smmu_cfg = cfg;
	bo.smmu_mask = 1ull << 2; /* nic0's SMMU: one model thread is enough for these tests */
	rc = ilab_board_create(t->topo, &bo, &t->board, t->err, sizeof(t->err));
	if (rc)
		return rc;
	rc = ilab_board_start(t->board);
	if (rc) {
		snprintf(t->err, sizeof(t->err), "board start %d", rc);
		return rc;
	}
	rc = ilab_board_probe_iommus(t->board, opts);
	if (rc) {
		snprintf(t->err, sizeof(t->err), "probe %d: %s", rc, ilab_smmu_drv_strerror());
		return rc;
	}
	ilab_board_devices(t->board, &devs, &n);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(devs[i].name, "nic0"))
			t->dev = &devs[i];
	if (!t->dev) {
		snprintf(t->err, sizeof(t->err), "no nic0");
		return -ENOENT;
	}
	t->si = (unsigned)ilab_board_dev_smmu(t->board, t->dev);
	t->iommu = ilab_board_iommu(t->board, t->si);
	return t->iommu ? 0 : -ENODEV;
}

static inline void dt_teardown(struct dt *t)
{
	ilab_board_destroy(t->board);
	plat_fini();
	ilab_topo_free(t->topo);
	memset(t, 0, sizeof(*t));
}

#endif
