/* board_smmu_names.c — the board's SMMU-named API (board.h, "SMMU-named"), kept as thin
 * wrappers over the architecture-neutral one while callers move over. Not new behaviour:
 * each is its neutral twin, except ilab_board_smmu, which is NULL for a unit that is not an
 * SMMUv3.
 */
#include "hw/board_internal.h"
#include "hw/board_smmuv3.h"

unsigned ilab_board_nr_smmus(const struct ilab_board *b)
{
	return ilab_board_nr_iommus(b);
}

struct smmu *ilab_board_smmu(struct ilab_board *b, unsigned i)
{
	struct ilab_iommu_unit *u = ilab_board_iommu_unit(b, i);

	if (!u || u->arch != &ilab_iommu_arch_smmuv3)
		return NULL;
	return ((struct board_smmuv3 *)u->model)->smmu;
}

int ilab_board_smmu_node(const struct ilab_board *b, unsigned i)
{
	return ilab_board_iommu_node(b, i);
}

int ilab_board_dev_smmu(const struct ilab_board *b, const struct ilab_dev *dev)
{
	return ilab_board_dev_iommu(b, dev);
}

struct json_t *ilab_board_smmu_json(struct ilab_board *b, unsigned i)
{
	return ilab_board_iommu_json(b, i);
}

struct json_t *ilab_board_smmus_json(struct ilab_board *b)
{
	return ilab_board_iommus_json(b);
}

int ilab_board_probe_iommus(struct ilab_board *b, const struct ilab_smmu_drv_opts *opts)
{
	return ilab_board_probe_drivers(b, "smmuv3", opts);
}
