/* test_smmuv3_drv_multi.c — one SMMUv3 paging domain attached to devices behind two SMMU
 * instances (a100-2node: the node-0 and node-1 root ports' SMMUs): compatibility, one page
 * table walked by both, an ASID per SMMU, DMA from both, and invalidation fanned out to both.
 * Not a VFIO test (tests/vfio/ uses this through the type1 container).
 * Expected values come from IHI 0070 (CD.TTB0/ASID, F_TRANSLATION) and the driver's contract.
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
#include "iommulab/iommu_map.h"
#include "iommulab/plat.h"
#include "iommulab/smmuv3_drv.h"
#include "iommulab/topo.h"

#define SZ_4K 0x1000ull
#define EVT_F_TRANSLATION 0x10
#define OP_TLBI_NH_VA 0x12
#define OP_TLBI_NH_ASID 0x11
#define OP_CMD_SYNC 0x46
#define IOVA 0x40000000ull

struct mt {
	struct ilab_topo *topo;
	struct ilab_board *board;
	struct ilab_dev *dev[2];     /* gpu0 (node 0, SMMU 0) and gpu4 (node 1, SMMU 2) */
	unsigned si[2];
	struct ilab_iommu *iommu[2];
	char err[160];
};

static void mt_setup(struct mt *t)
{
	struct ilab_board_opts bo = { .node_bytes = 1ull << 30 };
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	const char *names[2] = { "gpu0", "gpu4" };

	memset(t, 0, sizeof(*t));
	assert_int_equal(ilab_topo_load("a100-2node", &t->topo, t->err, sizeof(t->err)), 0);
	pc.topo = t->topo;
	assert_int_equal(plat_init(&pc), 0);
	bo.smmu_mask = (1ull << 0) | (1ull << 2); /* one SMMU per node: two model agents */
	assert_int_equal(ilab_board_create(t->topo, &bo, &t->board, t->err, sizeof(t->err)), 0);
	assert_int_equal(ilab_board_start(t->board), 0);
	assert_int_equal(ilab_board_probe_iommus(t->board, NULL), 0);
	for (int i = 0; i < 2; i++) {
		t->dev[i] = ilab_board_find_dev(t->board, names[i]);
		assert_non_null(t->dev[i]);
		t->si[i] = (unsigned)ilab_board_dev_smmu(t->board, t->dev[i]);
		t->iommu[i] = ilab_board_iommu(t->board, t->si[i]);
		assert_non_null(t->iommu[i]);
		assert_int_equal(t->iommu[i]->ops->probe_device(t->iommu[i], t->dev[i]), 0);
	}
	/* The preset: gpu0 behind n0-rp0's SMMU 0 on node 0, gpu4 behind n1-rp0's SMMU 2. */
	assert_int_equal(t->si[0], 0);
	assert_int_equal(t->si[1], 2);
	assert_int_equal(t->iommu[0]->node, 0);
	assert_int_equal(t->iommu[1]->node, 1);
}

static void mt_teardown(struct mt *t, struct ilab_iommu_domain *d)
{
	for (int i = 0; i < 2; i++)
		t->iommu[i]->ops->release_device(t->iommu[i], t->dev[i]);
	if (d)
		d->ops->free(d);
	ilab_board_destroy(t->board);
	plat_fini();
	ilab_topo_free(t->topo);
}

static ilab_pa_t page_with_pattern(struct mt *t, int node, uint8_t seed)
{
	uint8_t buf[SZ_4K];
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_alloc_pages(ilab_board_mem(t->board), node, 0, &pa), 0);
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(seed + i * 13);
	assert_int_equal(ilab_mem_write(ilab_board_mem(t->board), pa, buf, sizeof(buf)), 0);
	return pa;
}

static int dma_read(struct mt *t, int i, uint64_t iova, void *buf, size_t len,
		    struct ilab_board_fault *f)
{
	return ilab_board_dma_read(t->board, t->si[i], t->dev[i]->sid, 0, false, iova, buf, len, f);
}

static void expect_pattern(struct mt *t, int i, uint64_t iova, uint8_t seed)
{
	uint8_t buf[256];
	struct ilab_board_fault f;

	assert_int_equal(dma_read(t, i, iova, buf, sizeof(buf), &f), 0);
	for (unsigned k = 0; k < sizeof(buf); k++)
		assert_int_equal(buf[k], (uint8_t)(seed + k * 13));
}

static void expect_fault(struct mt *t, int i, uint64_t iova)
{
	uint8_t buf[64];
	struct ilab_board_fault f;

	memset(&f, 0, sizeof(f));
	assert_int_equal(dma_read(t, i, iova, buf, sizeof(buf), &f), -EIO);
	assert_int_equal(f.event, EVT_F_TRANSLATION);
}

/* The CD an SMMU uses for a StreamID: STE.S1ContextPtr → CD (IHI 0070 §5.2, §5.4). */
static void read_cd(struct mt *t, int i, uint64_t cd[8])
{
	uint64_t ste[9]; /* one word more: the read copies the STE's 8 and no further */
	ilab_pa_t cd_pa;

	ste[8] = 0x5a5a5a5a5a5a5a5aull;
	assert_int_equal(ilab_smmu_drv_read_ste(t->iommu[i], t->dev[i]->sid, ste), 0);
	assert_int_equal(ste[8], 0x5a5a5a5a5a5a5a5aull);
	assert_int_equal((ste[0] >> 1) & 7, 5); /* Config = S1 translate */
	cd_pa = ste[0] & 0x000ffffffffffffc0ull;
	assert_int_equal(ilab_mem_read(ilab_board_mem(t->board), cd_pa, cd, 64), 0);
}

static uint64_t opcode_count(struct ilab_iommu *iommu, unsigned op)
{
	struct ilab_smmu_drv_stats st;

	assert_int_equal(ilab_smmu_drv_get_stats(iommu, &st), 0);
	return st.by_opcode[op];
}

/* A paging domain of SMMU 0 attached to gpu0 (SMMU 0) and gpu4 (SMMU 2). */
static struct ilab_iommu_domain *shared_domain(struct mt *t, int node)
{
	struct ilab_iommu_domain *d =
		t->iommu[0]->ops->domain_alloc(t->iommu[0], ILAB_DOMAIN_UNMANAGED, node);

	assert_non_null(d);
	for (int i = 0; i < 2; i++)
		assert_int_equal(d->ops->attach_dev(d, t->dev[i]), 0);
	return d;
}

static void test_compatible_across_instances(void **state)
{
	struct ilab_iommu_domain *d, *ident;
	struct mt t;

	(void)state;
	mt_setup(&t);
	d = t.iommu[0]->ops->domain_alloc(t.iommu[0], ILAB_DOMAIN_UNMANAGED, -1);
	ident = t.iommu[0]->ops->domain_alloc(t.iommu[0], ILAB_DOMAIN_IDENTITY, -1);
	assert_non_null(d);
	assert_non_null(ident);
	/* Both SMMUs are the same default model: same granules, OAS 48, coherent. */
	assert_true(t.iommu[0]->ops->domain_compatible(d, t.iommu[0]));
	assert_true(t.iommu[0]->ops->domain_compatible(d, t.iommu[1]));
	/* A non-paging domain has no page table to share: it stays on its SMMU. */
	assert_true(t.iommu[0]->ops->domain_compatible(ident, t.iommu[0]));
	assert_false(t.iommu[0]->ops->domain_compatible(ident, t.iommu[1]));
	assert_int_equal(ident->ops->attach_dev(ident, t.dev[1]), -EINVAL);
	assert_false(t.iommu[0]->ops->domain_compatible(d, NULL));
	ident->ops->free(ident);
	mt_teardown(&t, d);
}

static void test_one_table_two_smmus(void **state)
{
	struct ilab_iommu_domain *d;
	uint64_t cd0[8], cd1[8];
	ilab_pa_t pa, ttbr;
	int asid0, asid1;
	struct mt t;

	(void)state;
	mt_setup(&t);
	d = shared_domain(&t, 1); /* page table on node 1, as seed 004 found it */
	ttbr = ilab_smmu_drv_domain_ttbr(d);
	assert_true(ttbr != 0);
	assert_int_equal(ilab_mem_node_of(ilab_board_mem(t.board), ttbr), 1);
	assert_int_equal(ilab_smmu_drv_domain_nr_smmus(d), 2);

	/* Each SMMU's CD: TTB0 = the one table, ASID = that SMMU's own ASID for the domain. */
	asid0 = ilab_smmu_drv_domain_asid_on(d, t.iommu[0]);
	asid1 = ilab_smmu_drv_domain_asid_on(d, t.iommu[1]);
	assert_true(asid0 > 0);
	assert_true(asid1 > 0);
	assert_int_equal(asid0, ilab_smmu_drv_domain_asid(d));
	read_cd(&t, 0, cd0);
	read_cd(&t, 1, cd1);
	assert_int_equal(cd0[1] & 0x000ffffffffffff0ull, ttbr);
	assert_int_equal(cd1[1] & 0x000ffffffffffff0ull, ttbr);
	assert_int_equal(cd0[0] >> 48, (uint64_t)asid0);
	assert_int_equal(cd1[0] >> 48, (uint64_t)asid1);

	/* One map is seen by both devices. */
	pa = page_with_pattern(&t, 0, 0x31);
	assert_int_equal(ilab_iommu_map(&d->pt, IOVA, pa, SZ_4K, ILAB_IOMMU_READ | ILAB_IOMMU_WRITE,
					true), 0);
	expect_pattern(&t, 0, IOVA, 0x31);
	expect_pattern(&t, 1, IOVA, 0x31);
	mt_teardown(&t, d);
}

static void test_unmap_sync_faults_on_both(void **state)
{
	struct ilab_iommu_domain *d;
	uint64_t va0, va1, sync0, sync1;
	ilab_pa_t pa;
	struct mt t;

	(void)state;
	mt_setup(&t);
	d = shared_domain(&t, -1);
	pa = page_with_pattern(&t, 0, 0x77);
	assert_int_equal(ilab_iommu_map(&d->pt, IOVA, pa, SZ_4K, ILAB_IOMMU_READ, true), 0);
	/* Fill both SMMUs' TLBs: without an invalidation on each, the stale entry would
	 * still translate after the PTE is cleared. */
	expect_pattern(&t, 0, IOVA, 0x77);
	expect_pattern(&t, 1, IOVA, 0x77);
	va0 = opcode_count(t.iommu[0], OP_TLBI_NH_VA);
	va1 = opcode_count(t.iommu[1], OP_TLBI_NH_VA);
	sync0 = opcode_count(t.iommu[0], OP_CMD_SYNC);
	sync1 = opcode_count(t.iommu[1], OP_CMD_SYNC);

	assert_int_equal(ilab_iommu_unmap(&d->pt, IOVA, SZ_4K, true), SZ_4K);
	expect_fault(&t, 0, IOVA);
	expect_fault(&t, 1, IOVA);
	/* One TLBI (one 4K page) and one CMD_SYNC on each SMMU. */
	assert_int_equal(opcode_count(t.iommu[0], OP_TLBI_NH_VA) - va0, 1);
	assert_int_equal(opcode_count(t.iommu[1], OP_TLBI_NH_VA) - va1, 1);
	assert_int_equal(opcode_count(t.iommu[0], OP_CMD_SYNC) - sync0, 1);
	assert_int_equal(opcode_count(t.iommu[1], OP_CMD_SYNC) - sync1, 1);

	/* flush_iotlb_all reaches both too: one TLBI_NH_ASID each. */
	va0 = opcode_count(t.iommu[0], OP_TLBI_NH_ASID);
	va1 = opcode_count(t.iommu[1], OP_TLBI_NH_ASID);
	d->ops->flush_iotlb_all(d);
	assert_int_equal(opcode_count(t.iommu[0], OP_TLBI_NH_ASID) - va0, 1);
	assert_int_equal(opcode_count(t.iommu[1], OP_TLBI_NH_ASID) - va1, 1);
	mt_teardown(&t, d);
}

static void test_detach_releases_instance(void **state)
{
	struct ilab_iommu_domain *d, *d2;
	uint64_t asid_cmds;
	ilab_pa_t pa;
	int asid1;
	struct mt t;

	(void)state;
	mt_setup(&t);
	d = shared_domain(&t, -1);
	asid1 = ilab_smmu_drv_domain_asid_on(d, t.iommu[1]);
	assert_true(asid1 > 0);
	pa = page_with_pattern(&t, 1, 0x05);
	assert_int_equal(ilab_iommu_map(&d->pt, IOVA, pa, SZ_4K, ILAB_IOMMU_READ, true), 0);
	expect_pattern(&t, 1, IOVA, 0x05);

	/* gpu4 leaves: its SMMU's ASID is invalidated there and released. */
	asid_cmds = opcode_count(t.iommu[1], OP_TLBI_NH_ASID);
	assert_int_equal(t.iommu[1]->ops->block_dev(t.iommu[1], t.dev[1]), 0);
	assert_int_equal(opcode_count(t.iommu[1], OP_TLBI_NH_ASID) - asid_cmds, 1);
	assert_int_equal(ilab_smmu_drv_domain_asid_on(d, t.iommu[1]), -ENOENT);
	assert_int_equal(ilab_smmu_drv_domain_nr_smmus(d), 1);
	{
		/* STE.Config = abort: the transaction is terminated without an event
		 * (IHI 0070 §5.2, Config 0b000). */
		uint8_t buf[64];
		struct ilab_board_fault f;

		memset(&f, 0xff, sizeof(f));
		assert_int_equal(dma_read(&t, 1, IOVA, buf, sizeof(buf), &f), -EIO);
		assert_int_equal(f.event, 0);
	}
	expect_pattern(&t, 0, IOVA, 0x05);

	/* An unmap now invalidates only SMMU 0. */
	asid_cmds = opcode_count(t.iommu[1], OP_TLBI_NH_VA);
	assert_int_equal(ilab_iommu_unmap(&d->pt, IOVA, SZ_4K, true), SZ_4K);
	assert_int_equal(opcode_count(t.iommu[1], OP_TLBI_NH_VA), asid_cmds);
	expect_fault(&t, 0, IOVA);

	/* The released ASID is free again on SMMU 2: a domain allocated there gets it (the
	 * lowest free one, as the allocator's bitmap search gives). */
	d2 = t.iommu[1]->ops->domain_alloc(t.iommu[1], ILAB_DOMAIN_UNMANAGED, -1);
	assert_non_null(d2);
	assert_int_equal(ilab_smmu_drv_domain_asid(d2), asid1);
	d2->ops->free(d2);
	mt_teardown(&t, d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compatible_across_instances),
		cmocka_unit_test(test_one_table_two_smmus),
		cmocka_unit_test(test_unmap_sync_faults_on_both),
		cmocka_unit_test(test_detach_releases_instance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
