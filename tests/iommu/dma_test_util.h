/* dma_test_util.h — shared set-up for the IOMMU core and dma-iommu tests: plat on the host,
 * a 4-node simulated memory, the fake IOMMU driver (tests/support/fake_iommu.c) and devices.
 * Not a test by itself; header-only so each test executable stays self-contained.
 */
#ifndef ILAB_TESTS_DMA_TEST_UTIL_H
#define ILAB_TESTS_DMA_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "iommulab/dma_iommu.h"
#include "iommulab/iommu.h"
#include "iommulab/mem.h"
#include "iommulab/plat.h"
#include "support/fake_iommu.h"

#define TU_NODES 4
#define TU_NODE_BYTES (2ull << 30) /* sparse: nodes 1.. sit above 4 GiB */

struct tu {
	struct ilab_mem *mem;
	struct fake_iommu *fake;
	struct ilab_iommu *iommu;
};

static inline int tu_setup(struct tu *t, bool no_flush_all)
{
	struct ilab_mem_config mc = {
		.nr_nodes = TU_NODES,
		.node_bytes = TU_NODE_BYTES,
		.cma = ILAB_CMA_PERNUMA,
		.cma_global_node = 0,
		.cma_global_bytes = 16ull << 20,
		.cma_node_bytes = 16ull << 20,
	};
	int ret;

	memset(t, 0, sizeof(*t));
	ret = plat_init(NULL);
	if (ret)
		return ret;
	ret = ilab_mem_create(&mc, &t->mem);
	if (ret)
		return ret;
	ret = fake_iommu_create(t->mem, 0, no_flush_all, &t->fake);
	if (ret)
		return ret;
	t->iommu = fake_iommu_get(t->fake);
	return 0;
}

static inline void tu_teardown(struct tu *t)
{
	fake_iommu_destroy(t->fake);
	ilab_mem_destroy(t->mem);
	plat_fini();
}

static inline void tu_dev_init(struct tu *t, struct ilab_dev *dev, const char *name, uint32_t sid,
			       int node, unsigned dma_bits)
{
	memset(dev, 0, sizeof(*dev));
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	dev->sid = sid;
	dev->node = node;
	dev->dma_bits = dma_bits;
	dev->iommu = t->iommu;
}

/* A buffer of pages on node, filled with a pattern derived from seed. */
static inline ilab_pa_t tu_buffer(struct tu *t, int node, unsigned order, unsigned seed)
{
	ilab_pa_t pa;
	uint8_t *va;
	size_t len = (size_t)ILAB_PAGE_SIZE << order;

	if (ilab_mem_alloc_pages(t->mem, node, order, &pa))
		return 0;
	va = ilab_mem_va(t->mem, pa, len);
	for (size_t i = 0; i < len; i++)
		va[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 12));
	return pa;
}

static inline uint64_t tu_faults(struct tu *t)
{
	struct fake_iommu_stats st;

	fake_iommu_stats(t->fake, &st);
	return st.faults;
}

#endif
