/* iommu_arch.c — the registry of IOMMU architectures (iommu_arch.h): one line per
 * architecture the board can build. Adding one is its adapter (src/hw/board_<arch>.c, which
 * defines the table) and one line in `arches` below. Not the adapters themselves.
 */
#include <stdio.h>
#include <string.h>

#include <iommulab/iommu_arch.h>

extern const struct ilab_iommu_arch ilab_iommu_arch_smmuv3; /* board_smmuv3.c */
extern const struct ilab_iommu_arch ilab_iommu_arch_vtd;    /* board_vtd.c */

static const struct ilab_iommu_arch *const arches[] = {
	&ilab_iommu_arch_smmuv3,
	&ilab_iommu_arch_vtd,
};

#define NR_ARCHES (sizeof(arches) / sizeof(arches[0]))

const struct ilab_iommu_arch *ilab_iommu_arch_find(const char *name)
{
	for (unsigned i = 0; name && i < NR_ARCHES; i++)
		if (!strcmp(arches[i]->name, name))
			return arches[i];
	return NULL;
}

unsigned ilab_iommu_arch_count(void)
{
	return NR_ARCHES;
}

const struct ilab_iommu_arch *ilab_iommu_arch_at(unsigned i)
{
	return i < NR_ARCHES ? arches[i] : NULL;
}

char *ilab_iommu_arch_names(char *buf, size_t len, const char *sep)
{
	size_t off = 0;

	if (!buf || !len)
		return buf;
	buf[0] = '\0';
	for (unsigned i = 0; i < NR_ARCHES && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? sep : "", arches[i]->name);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}
