/* test_vfio.c — VFIO type1 on the a100-2node board (SMMU 0 on node 0, SMMU 2 on node 1
 * modelled): map, unmap, attach, detach; where page tables live with Linux's shared domain and
 * with attach_group_by_node (seed 004); DMA through the SMMU models from devices on both nodes;
 * replay on late attach; bad user input rejected with nothing changed.
 * Expected values come from Linux vfio_iommu_type1.c's documented semantics (type1 v2 unmap,
 * map checks) and from the seed's description, never from this code's output.
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
#include "iommulab/smmuv3_drv.h"
#include "iommulab/topo.h"
#include "iommulab/vfio.h"

#define SZ_4K 0x1000ull
#define EVT_F_TRANSLATION 0x10
#define VA 0x7f0000000000ull
#define IOVA 0x100000000ull
#define RW (ILAB_VFIO_DMA_READ | ILAB_VFIO_DMA_WRITE)

enum { GPU0, NIC0, GPU4, NR_DEVS };

struct vt {
	struct ilab_topo *topo;
	struct ilab_board *board;
	struct ilab_mem *mem;
	struct ilab_dev *dev[NR_DEVS];
	unsigned si[NR_DEVS];
	struct ilab_vfio_group *grp[NR_DEVS];
	struct ilab_vfio_container *c;
	char err[160];
};

static void vt_setup(struct vt *t, const struct ilab_vfio_container_opts *opts)
{
	struct ilab_board_opts bo = { .node_bytes = 1ull << 30 };
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	/* gpu0 and nic0 share n0-rp0 (SMMU 0, node 0); gpu4 is on n1-rp0 (SMMU 2, node 1). */
	const char *names[NR_DEVS] = { "gpu0", "nic0", "gpu4" };

	memset(t, 0, sizeof(*t));
	assert_int_equal(ilab_topo_load("a100-2node", &t->topo, t->err, sizeof(t->err)), 0);
	pc.topo = t->topo;
	assert_int_equal(plat_init(&pc), 0);
	bo.smmu_mask = (1ull << 0) | (1ull << 2);
	assert_int_equal(ilab_board_create(t->topo, &bo, &t->board, t->err, sizeof(t->err)), 0);
	assert_int_equal(ilab_board_start(t->board), 0);
	assert_int_equal(ilab_board_probe_iommus(t->board, NULL), 0);
	t->mem = ilab_board_mem(t->board);
	for (int i = 0; i < NR_DEVS; i++) {
		t->dev[i] = ilab_board_find_dev(t->board, names[i]);
		assert_non_null(t->dev[i]);
		t->si[i] = (unsigned)ilab_board_dev_smmu(t->board, t->dev[i]);
		assert_int_equal(ilab_iommu_probe_device(t->dev[i], ILAB_DOMAIN_DMA), 0);
		assert_int_equal(ilab_vfio_group_open(t->dev[i], &t->grp[i]), 0);
	}
	assert_int_equal(t->dev[GPU0]->node, 0);
	assert_int_equal(t->dev[GPU4]->node, 1);
	assert_int_equal(ilab_vfio_container_create(t->mem, opts, &t->c), 0);
}

static void vt_teardown(struct vt *t)
{
	ilab_vfio_container_destroy(t->c);
	for (int i = 0; i < NR_DEVS; i++) {
		assert_int_equal(ilab_vfio_group_close(t->grp[i]), 0);
		ilab_iommu_release_device(t->dev[i]);
	}
	ilab_board_destroy(t->board);
	plat_fini();
	ilab_topo_free(t->topo);
}

/* User memory of npages pages on node, filled with a pattern from seed. */
static void user_pages(struct vt *t, uint64_t va, unsigned npages, int node, uint8_t seed)
{
	struct ilab_vfio_mm *mm = ilab_vfio_container_mm(t->c);

	assert_int_equal(ilab_vfio_mm_alloc(mm, va, npages * SZ_4K, node), 0);
	for (unsigned p = 0; p < npages; p++) {
		uint8_t buf[SZ_4K];
		ilab_pa_t pa;

		assert_int_equal(ilab_vfio_mm_lookup(mm, va + p * SZ_4K, &pa, NULL), 0);
		assert_int_equal(ilab_mem_node_of(t->mem, pa), node);
		for (unsigned k = 0; k < sizeof(buf); k++)
			buf[k] = (uint8_t)(seed + p * 3 + k * 11);
		assert_int_equal(ilab_mem_write(t->mem, pa, buf, sizeof(buf)), 0);
	}
}

static int dma_read(struct vt *t, int d, uint64_t iova, void *buf, size_t len,
		    struct ilab_board_fault *f)
{
	return ilab_board_dma_read(t->board, t->si[d], t->dev[d]->sid, 0, false, iova, buf, len, f);
}

static void expect_bytes(struct vt *t, int d, uint64_t iova, unsigned page, uint8_t seed)
{
	uint8_t buf[SZ_4K];
	struct ilab_board_fault f;

	assert_int_equal(dma_read(t, d, iova, buf, sizeof(buf), &f), 0);
	for (unsigned k = 0; k < sizeof(buf); k++)
		assert_int_equal(buf[k], (uint8_t)(seed + page * 3 + k * 11));
}

static void expect_fault(struct vt *t, int d, uint64_t iova)
{
	uint8_t buf[64];
	struct ilab_board_fault f;

	memset(&f, 0, sizeof(f));
	assert_int_equal(dma_read(t, d, iova, buf, sizeof(buf), &f), -EIO);
	assert_int_equal(f.event, EVT_F_TRANSLATION);
}

static unsigned pins(struct vt *t, uint64_t va)
{
	unsigned n = ~0u;

	assert_int_equal(ilab_vfio_mm_lookup(ilab_vfio_container_mm(t->c), va, NULL, &n), 0);
	return n;
}

static struct ilab_vfio_domain_info dinfo(struct vt *t, unsigned i)
{
	struct ilab_vfio_domain_info info;

	assert_int_equal(ilab_vfio_domain_info(t->c, i, &info), 0);
	return info;
}

static int pgtable_node(struct vt *t, const struct ilab_vfio_domain_info *info)
{
	ilab_pa_t root = ilab_smmu_drv_domain_ttbr(info->domain);

	assert_true(root != 0);
	return ilab_mem_node_of(t->mem, root);
}

static struct ilab_vfio_stats stats(struct vt *t)
{
	struct ilab_vfio_stats st;

	assert_int_equal(ilab_vfio_get_stats(t->c, &st), 0);
	return st;
}

/* ---- Linux's policy: one shared domain ----------------------------------------------------- */

static void test_shared_domain_both_nodes(void **state)
{
	struct ilab_vfio_domain_info di;
	struct ilab_board_fault f;
	uint64_t unmapped = 0;
	uint8_t w[64];
	struct vt t;

	(void)state;
	vt_setup(&t, NULL);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU4]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[NIC0]), 0);
	/* Every group joins the one domain: same driver, and the driver accepts it. */
	assert_int_equal(stats(&t).nr_domains, 1);
	di = dinfo(&t, 0);
	assert_int_equal(di.nr_groups, 3);
	assert_int_equal(di.nr_iommus, 2);
	/* Default: page tables on the node of the group that created the domain (gpu0: 0). */
	assert_int_equal(di.node, 0);
	assert_int_equal(pgtable_node(&t, &di), 0);
	assert_int_equal(ilab_smmu_drv_domain_nr_smmus(di.domain), 2);

	user_pages(&t, VA, 2, 1, 0x40);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, 2 * SZ_4K, RW), 0);
	assert_int_equal(pins(&t, VA), 1);
	assert_int_equal(pins(&t, VA + SZ_4K), 1);
	for (int d = 0; d < NR_DEVS; d++) {
		expect_bytes(&t, d, IOVA, 0, 0x40);
		expect_bytes(&t, d, IOVA + SZ_4K, 1, 0x40);
	}
	/* A write by the node-1 GPU is read back by the node-0 GPU. */
	memset(w, 0xa5, sizeof(w));
	assert_int_equal(ilab_board_dma_write(t.board, t.si[GPU4], t.dev[GPU4]->sid, 0, false,
					      IOVA + 64, w, sizeof(w), &f), 0);
	{
		uint8_t r[64];

		assert_int_equal(dma_read(&t, GPU0, IOVA + 64, r, sizeof(r), &f), 0);
		assert_memory_equal(r, w, sizeof(w));
	}
	assert_int_equal(dinfo(&t, 0).nr_mappings, 1);
	assert_int_equal(dinfo(&t, 0).mapped_bytes, 2 * SZ_4K);

	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA, 2 * SZ_4K, &unmapped), 0);
	assert_int_equal(unmapped, 2 * SZ_4K);
	for (int d = 0; d < NR_DEVS; d++)
		expect_fault(&t, d, IOVA + SZ_4K);
	assert_int_equal(pins(&t, VA), 0);
	assert_int_equal(stats(&t).nr_mappings, 0);
	assert_int_equal(stats(&t).pinned_pages, 0);
	assert_int_equal(dinfo(&t, 0).nr_mappings, 0);
	vt_teardown(&t);
}

static void test_shared_domain_forced_node1(void **state)
{
	/* Seed 004's starting point: one shared domain whose page tables sit on node 1, even
	 * though the first group (gpu0) is on node 0. */
	struct ilab_vfio_container_opts o = { .force_pgtable_node = true, .pgtable_node = 1 };
	struct ilab_vfio_domain_info di;
	struct vt t;

	(void)state;
	vt_setup(&t, &o);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU4]), 0);
	assert_int_equal(stats(&t).nr_domains, 1);
	di = dinfo(&t, 0);
	assert_int_equal(di.node, 1);
	assert_int_equal(pgtable_node(&t, &di), 1);
	user_pages(&t, VA, 1, 0, 0x10);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, SZ_4K, ILAB_VFIO_DMA_READ), 0);
	expect_bytes(&t, GPU0, IOVA, 0, 0x10);
	expect_bytes(&t, GPU4, IOVA, 0, 0x10);
	vt_teardown(&t);
}

/* ---- seed 004: one domain per node ------------------------------------------------------------ */

static void test_by_node_domains(void **state)
{
	struct ilab_vfio_container_opts o = { .attach_group_by_node = true };
	struct ilab_vfio_domain_info d0, d1;
	uint64_t unmapped = 0;
	struct vt t;

	(void)state;
	vt_setup(&t, &o);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU4]), 0); /* node 1 first */
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[NIC0]), 0);
	assert_int_equal(stats(&t).nr_domains, 2);
	assert_int_equal(stats(&t).nr_groups, 3);
	d1 = dinfo(&t, 0);
	d0 = dinfo(&t, 1);
	assert_int_equal(d1.node, 1);
	assert_int_equal(d0.node, 0);
	assert_int_equal(pgtable_node(&t, &d1), 1);
	assert_int_equal(pgtable_node(&t, &d0), 0);
	assert_int_equal(d1.nr_groups, 1);
	assert_int_equal(d0.nr_groups, 2); /* gpu0 and nic0: same node, same domain */
	assert_int_equal(d0.nr_iommus, 1);
	assert_true(d0.domain != d1.domain);

	user_pages(&t, VA, 3, 0, 0x77);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, 3 * SZ_4K, RW), 0);
	/* Every domain mirrors the mapping; each page is pinned once per mapping. */
	assert_int_equal(dinfo(&t, 0).nr_mappings, 1);
	assert_int_equal(dinfo(&t, 1).nr_mappings, 1);
	assert_int_equal(pins(&t, VA + 2 * SZ_4K), 1);
	assert_int_equal(stats(&t).pinned_pages, 3);
	for (int d = 0; d < NR_DEVS; d++)
		for (unsigned p = 0; p < 3; p++)
			expect_bytes(&t, d, IOVA + p * SZ_4K, p, 0x77);

	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA, 3 * SZ_4K, &unmapped), 0);
	assert_int_equal(unmapped, 3 * SZ_4K);
	for (int d = 0; d < NR_DEVS; d++)
		expect_fault(&t, d, IOVA);
	assert_int_equal(dinfo(&t, 0).nr_mappings, 0);
	assert_int_equal(dinfo(&t, 1).nr_mappings, 0);
	assert_int_equal(pins(&t, VA), 0);
	vt_teardown(&t);
}

/* ---- replay, detach ------------------------------------------------------------------------- */

static void test_replay_on_late_attach(void **state)
{
	struct ilab_vfio_container_opts o = { .attach_group_by_node = true };
	struct vt t;

	(void)state;
	vt_setup(&t, &o);
	user_pages(&t, VA, 2, 1, 0x21);
	/* Linux: no IOMMU domain yet, so the mapping is recorded but not pinned. */
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, 2 * SZ_4K, RW), 0);
	assert_int_equal(stats(&t).nr_mappings, 1);
	assert_int_equal(pins(&t, VA), 0);
	assert_int_equal(stats(&t).nr_domains, 0);

	/* The first attach replays it (and pins); the second node's domain replays it too. */
	assert_int_equal(stats(&t).pinned_pages, 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(pins(&t, VA), 1);
	assert_int_equal(stats(&t).pinned_pages, 2); /* the replay's pins are counted */
	expect_bytes(&t, GPU0, IOVA + SZ_4K, 1, 0x21);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU4]), 0);
	assert_int_equal(stats(&t).nr_domains, 2);
	assert_int_equal(pins(&t, VA), 1); /* pinned once per mapping, not per domain */
	assert_int_equal(stats(&t).pinned_pages, 2);
	assert_int_equal(dinfo(&t, 1).nr_mappings, 1);
	assert_int_equal(stats(&t).replays, 2);
	expect_bytes(&t, GPU4, IOVA, 0, 0x21);
	expect_bytes(&t, GPU4, IOVA + SZ_4K, 1, 0x21);
	vt_teardown(&t);
}

static void test_replay_of_unbacked_memory_fails_cleanly(void **state)
{
	struct vt t;

	(void)state;
	vt_setup(&t, NULL);
	user_pages(&t, VA, 1, 0, 0x01);
	/* Second page never backed: accepted while there is no domain (Linux does not pin). */
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, 2 * SZ_4K, RW), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), -EFAULT);
	assert_non_null(strstr(ilab_vfio_strerror(), "not backed"));
	assert_int_equal(stats(&t).nr_domains, 0);
	assert_int_equal(pins(&t, VA), 0);
	/* The group is back on its own DMA domain, free to join a container again. */
	assert_int_equal(ilab_iommu_get_domain_for_dev(t.dev[GPU0]),
			 ilab_iommu_get_dma_domain(t.dev[GPU0]));
	expect_fault(&t, GPU0, IOVA);
	vt_teardown(&t);
}

static void test_detach(void **state)
{
	struct ilab_vfio_container_opts o = { .attach_group_by_node = true };
	struct ilab_vfio_mm *mm;
	struct vt t;

	(void)state;
	vt_setup(&t, &o);
	mm = ilab_vfio_container_mm(t.c);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU4]), 0);
	user_pages(&t, VA, 1, 0, 0x99);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, SZ_4K, RW), 0);
	/* Pinned pages cannot leave the address space. */
	assert_int_equal(ilab_vfio_mm_remove(mm, VA, SZ_4K), -EBUSY);

	/* gpu4 leaves: its node's domain goes (last group), the mapping stays for gpu0. */
	assert_int_equal(ilab_vfio_detach_group(t.c, t.grp[GPU4]), 0);
	assert_int_equal(stats(&t).nr_domains, 1);
	assert_int_equal(stats(&t).nr_mappings, 1);
	assert_int_equal(dinfo(&t, 0).node, 0);
	expect_fault(&t, GPU4, IOVA);   /* back on its DMA domain, which has no such IOVA */
	expect_bytes(&t, GPU0, IOVA, 0, 0x99);
	assert_int_equal(ilab_vfio_detach_group(t.c, t.grp[GPU4]), -EINVAL);

	/* The last group: the last domain goes and, as in Linux, every mapping with it. */
	assert_int_equal(ilab_vfio_detach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(stats(&t).nr_domains, 0);
	assert_int_equal(stats(&t).nr_mappings, 0);
	assert_int_equal(pins(&t, VA), 0);
	expect_fault(&t, GPU0, IOVA);
	assert_int_equal(ilab_vfio_mm_remove(mm, VA, SZ_4K), 0);
	vt_teardown(&t);
}

/* ---- bad input: a clear error and nothing changed ----------------------------------------- */

static void expect_unchanged(struct vt *t)
{
	struct ilab_vfio_stats st = stats(t);

	assert_int_equal(st.nr_mappings, 1);
	assert_int_equal(st.mapped_bytes, 2 * SZ_4K);
	assert_int_equal(st.pinned_pages, 2);
	assert_int_equal(dinfo(t, 0).nr_mappings, 1);
	assert_int_equal(pins(t, VA), 1);
	assert_int_equal(pins(t, VA + SZ_4K), 1);
	expect_bytes(t, GPU0, IOVA, 0, 0x55);
	expect_bytes(t, GPU4, IOVA + SZ_4K, 1, 0x55);
}

static void test_bad_map_input(void **state)
{
	struct vt t;

	(void)state;
	vt_setup(&t, NULL);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU4]), 0);
	user_pages(&t, VA, 4, 0, 0x55);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, 2 * SZ_4K, RW), 0);
	expect_unchanged(&t);

	/* Overlaps: the same range, its second page, one page before running into it. */
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA, 2 * SZ_4K, RW), -EEXIST);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA + SZ_4K, SZ_4K, RW), -EEXIST);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA - SZ_4K, 2 * SZ_4K, RW),
			 -EEXIST);
	assert_non_null(strstr(ilab_vfio_strerror(), "overlaps"));
	expect_unchanged(&t);
	/* Alignment to the 4K page, zero size, no READ/WRITE, unknown prot bits. */
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA + 0x10000 + 8, SZ_4K, RW),
			 -EINVAL);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K + 8, IOVA + 0x10000, SZ_4K, RW),
			 -EINVAL);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA + 0x10000, SZ_4K + 1, RW),
			 -EINVAL);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA + 0x10000, 0, RW), -EINVAL);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA + 0x10000, SZ_4K, 0), -EINVAL);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, IOVA + 0x10000, SZ_4K, 0x10),
			 -EINVAL);
	/* Wrapping iova or vaddr ranges; an iova beyond the 48-bit aperture. */
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, UINT64_MAX - SZ_4K + 1, 2 * SZ_4K,
					   RW), -EINVAL);
	assert_int_equal(ilab_vfio_dma_map(t.c, UINT64_MAX - SZ_4K + 1, IOVA + 0x10000, 2 * SZ_4K,
					   RW), -EINVAL);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 2 * SZ_4K, 1ull << 48, SZ_4K, RW), -EINVAL);
	expect_unchanged(&t);
	/* User memory backed for the first page only: -EFAULT, the first page is not left
	 * pinned or mapped. */
	assert_int_equal(ilab_vfio_dma_map(t.c, VA + 3 * SZ_4K, IOVA + 0x10000, 2 * SZ_4K, RW),
			 -EFAULT);
	assert_int_equal(pins(&t, VA + 3 * SZ_4K), 0);
	expect_fault(&t, GPU0, IOVA + 0x10000);
	expect_fault(&t, GPU4, IOVA + 0x10000);
	expect_unchanged(&t);
	vt_teardown(&t);
}

static void test_bad_unmap_input(void **state)
{
	uint64_t unmapped = 1;
	struct vt t;

	(void)state;
	vt_setup(&t, NULL);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU4]), 0);
	user_pages(&t, VA, 2, 1, 0x55);
	assert_int_equal(ilab_vfio_dma_map(t.c, VA, IOVA, 2 * SZ_4K, RW), 0);

	/* Type1 v2: a range with no mapping is success with 0 bytes unmapped. */
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA + 0x100000, SZ_4K, &unmapped), 0);
	assert_int_equal(unmapped, 0);
	/* Bisecting the mapping at its start or end is -EINVAL, nothing removed. */
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA + SZ_4K, SZ_4K, &unmapped), -EINVAL);
	assert_int_equal(unmapped, 0);
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA, SZ_4K, &unmapped), -EINVAL);
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA - SZ_4K, 2 * SZ_4K, &unmapped), -EINVAL);
	/* Unaligned, empty, wrapping. */
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA + 8, 2 * SZ_4K, &unmapped), -EINVAL);
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA, 2 * SZ_4K - 8, &unmapped), -EINVAL);
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA, 0, &unmapped), -EINVAL);
	assert_int_equal(ilab_vfio_dma_unmap(t.c, UINT64_MAX - SZ_4K + 1, 2 * SZ_4K, &unmapped),
			 -EINVAL);
	assert_int_equal(unmapped, 0);
	expect_unchanged(&t);
	/* A range covering the mapping and more removes exactly it. */
	assert_int_equal(ilab_vfio_dma_unmap(t.c, IOVA - SZ_4K, 8 * SZ_4K, &unmapped), 0);
	assert_int_equal(unmapped, 2 * SZ_4K);
	vt_teardown(&t);
}

static void test_bad_group_input(void **state)
{
	struct ilab_vfio_container_opts both = { .attach_group_by_node = true,
						 .force_pgtable_node = true, .pgtable_node = 1 };
	struct ilab_vfio_container_opts far = { .force_pgtable_node = true, .pgtable_node = 7 };
	struct ilab_vfio_container *c2;
	struct ilab_vfio_group *g;
	struct vt t;

	(void)state;
	vt_setup(&t, NULL);
	/* gpu2 sits behind SMMU 1, which this board does not model: no IOMMU, no group. */
	assert_int_equal(ilab_vfio_group_open(ilab_board_find_dev(t.board, "gpu2"), &g), -ENODEV);
	assert_int_equal(ilab_vfio_group_open(NULL, &g), -EINVAL);
	assert_int_equal(ilab_vfio_container_create(t.mem, &both, &c2), -EINVAL);
	assert_int_equal(ilab_vfio_container_create(t.mem, &far, &c2), -EINVAL);

	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), 0);
	assert_int_equal(ilab_vfio_attach_group(t.c, t.grp[GPU0]), -EINVAL);
	assert_int_equal(ilab_vfio_detach_group(t.c, t.grp[GPU4]), -EINVAL);
	assert_int_equal(ilab_vfio_group_close(t.grp[GPU0]), -EBUSY);
	/* A group in one container cannot join another. */
	assert_int_equal(ilab_vfio_container_create(t.mem, NULL, &c2), 0);
	assert_int_equal(ilab_vfio_attach_group(c2, t.grp[GPU0]), -EINVAL);
	ilab_vfio_container_destroy(c2);
	assert_int_equal(stats(&t).nr_domains, 1);
	assert_int_equal(stats(&t).nr_groups, 1);
	vt_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_domain_both_nodes),
		cmocka_unit_test(test_shared_domain_forced_node1),
		cmocka_unit_test(test_by_node_domains),
		cmocka_unit_test(test_replay_on_late_attach),
		cmocka_unit_test(test_replay_of_unbacked_memory_fails_cleanly),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_bad_map_input),
		cmocka_unit_test(test_bad_unmap_input),
		cmocka_unit_test(test_bad_group_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
