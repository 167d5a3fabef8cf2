/* test_smmuv3_drv.c — the SMMUv3 driver against the SMMUv3 model on a board: probe, DMA through
 * a DMA domain, unmap + invalidation faults, identity and blocked domains, hitless STE updates
 * observed by translating at every sync, both CMD_SYNC completion modes, RIL vs per-page
 * invalidation counts, and where CMA puts the queues.
 * Expected values come from IHI 0070 and from Linux's documented behaviour, not from the code.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/arm-smmu-v3.h"
#include "drivers/drv_test_util.h"
#include "iommulab/io_pgtable.h"
#include "iommulab/iommu_map.h"

#define SZ_4K 0x1000ull
#define SZ_2M 0x200000ull
#define SZ_1G 0x40000000ull
#define EVT_F_TRANSLATION 0x10
#define OP_TLBI_NH_VA 0x12
#define OP_TLBI_NH_ASID 0x11
#define OP_CMD_SYNC 0x46

static void setup_or_fail(struct dt *t, enum ilab_cma_mode cma, const struct smmu_config *cfg,
			  const struct ilab_smmu_drv_opts *opts)
{
	int rc = dt_setup(t, cma, cfg, opts);

	if (rc)
		fail_msg("setup: %d %s", rc, t->err);
}

static struct ilab_iommu_domain *attach_new(struct dt *t, enum ilab_domain_type type)
{
	struct ilab_iommu_domain *d = t->iommu->ops->domain_alloc(t->iommu, type, -1);

	assert_non_null(d);
	if (!t->dev->iommu_priv)
		assert_int_equal(t->iommu->ops->probe_device(t->iommu, t->dev), 0);
	assert_int_equal(d->ops->attach_dev(d, t->dev), 0);
	return d;
}

static void release(struct dt *t, struct ilab_iommu_domain *d)
{
	t->iommu->ops->release_device(t->iommu, t->dev);
	if (d)
		d->ops->free(d);
}

static ilab_pa_t page_with_pattern(struct dt *t, int node, uint8_t seed)
{
	uint8_t buf[SZ_4K];
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_alloc_pages(ilab_board_mem(t->board), node, 0, &pa), 0);
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(seed + i * 7);
	assert_int_equal(ilab_mem_write(ilab_board_mem(t->board), pa, buf, sizeof(buf)), 0);
	return pa;
}

static int dma_read(struct dt *t, uint64_t iova, void *buf, size_t len, struct ilab_board_fault *f)
{
	return ilab_board_dma_read(t->board, t->si, t->dev->sid, 0, false, iova, buf, len, f);
}

/* ---- probe ---------------------------------------------------------------------------------- */

static void test_probe_reads_id_registers(void **state)
{
	struct smmu_config cfg;
	struct ilab_smmu_drv_info info;
	struct dt t;

	(void)state;
	smmu_config_default(&cfg);
	cfg.sidsize = 16;
	cfg.cmdqs = 19;
	cfg.eventqs = 19;
	setup_or_fail(&t, ILAB_CMA_NONE, &cfg, NULL);
	assert_int_equal(ilab_smmu_drv_get_info(t.iommu, &info), 0);
	assert_int_equal(info.sid_bits, 16);
	/* Linux: 2-level stream table when supported and SIDSIZE > STRTAB_SPLIT (8). */
	assert_true(info.strtab_2lvl);
	/* Linux: queue = min(IDR1.CMDQS, CMDQ_MAX_SZ_SHIFT = 12 + 8 - 4 = 16). */
	assert_int_equal(info.cmdq_log2, 16);
	assert_int_equal(info.evtq_log2, 15);
	assert_true(info.ril);
	assert_int_equal(info.oas, 48);
	/* 4K (+2M, 1G), 16K (+32M), 64K (+512M) granules */
	assert_int_equal(info.pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G | 0x4000 | 0x2000000 | 0x10000 |
						     0x20000000);
	/* MSI polling needs IDR0.MSI and coherency, both in the default model */
	assert_int_equal(info.sync_mode, ILAB_SMMU_SYNC_MSI);
	dt_teardown(&t);
}

static void test_probe_small_sid_space_is_linear(void **state)
{
	struct smmu_config cfg;
	struct ilab_smmu_drv_info info;
	struct ilab_smmu_drv_opts o = { .cmdq_log2 = 8 };
	struct dt t;
	struct ilab_board_opts bo = { .node_bytes = 1ull << 30 };
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_iommu *iommu;

	(void)state;
	smmu_config_default(&cfg);
	cfg.sidsize = 8;
	memset(&t, 0, sizeof(t));
	assert_int_equal(ilab_topo_load("kunpeng920", &t.topo, t.err, sizeof(t.err)), 0);
	pc.topo = t.topo;
	assert_int_equal(plat_init(&pc), 0);
	bo.smmu_cfg = &cfg;
	bo.smmu_mask = 1;
	assert_int_equal(ilab_board_create(t.topo, &bo, &t.board, t.err, sizeof(t.err)), 0);
	assert_int_equal(ilab_board_start(t.board), 0);
	assert_int_equal(ilab_smmu_drv_probe(ilab_board_mmio(t.board, 0), ilab_board_mem(t.board), 0,
					     &o, &iommu),
			 0);
	assert_int_equal(ilab_smmu_drv_get_info(iommu, &info), 0);
	assert_false(info.strtab_2lvl);
	assert_int_equal(info.cmdq_log2, 8);
	ilab_smmu_drv_remove(iommu);
	dt_teardown(&t);
}

static void test_probe_rejects_tiny_queue_and_bad_args(void **state)
{
	struct smmu_config cfg;
	struct ilab_smmu_drv_opts o = { .cmdq_log2 = 6 };
	struct ilab_iommu *iommu = (void *)1;
	struct dt t;

	(void)state;
	smmu_config_default(&cfg);
	setup_or_fail(&t, ILAB_CMA_NONE, &cfg, NULL);
	/* 64 entries: not larger than a batch (Linux refuses it) */
	assert_int_equal(ilab_smmu_drv_probe(ilab_board_mmio(t.board, t.si), ilab_board_mem(t.board),
					     2, &o, &iommu),
			 -ENODEV);
	assert_null(iommu);
	assert_int_equal(ilab_smmu_drv_probe(NULL, ilab_board_mem(t.board), 2, NULL, &iommu), -EINVAL);
	assert_int_equal(ilab_smmu_drv_probe(ilab_board_mmio(t.board, t.si), ilab_board_mem(t.board),
					     99, NULL, &iommu),
			 -EINVAL);
	dt_teardown(&t);
}

/* ---- DMA domains -------------------------------------------------------------------------- */

static void test_dma_domain_translates_mapped_page(void **state)
{
	struct ilab_iommu_domain *d;
	struct ilab_board_fault f;
	uint8_t want[SZ_4K], got[SZ_4K], wbuf[64];
	ilab_pa_t pa;
	const uint64_t iova = 0x12345000;
	struct dt t;

	(void)state;
	setup_or_fail(&t, ILAB_CMA_PERNUMA, NULL, NULL);
	d = attach_new(&t, ILAB_DOMAIN_DMA);
	pa = page_with_pattern(&t, 2, 3);
	assert_int_equal(ilab_mem_read(ilab_board_mem(t.board), pa, want, sizeof(want)), 0);
	assert_int_equal(ilab_iommu_map(&d->pt, iova, pa, SZ_4K, ILAB_IOMMU_READ | ILAB_IOMMU_WRITE,
					true),
			 0);
	assert_int_equal(dma_read(&t, iova, got, sizeof(got), &f), 0);
	assert_memory_equal(got, want, sizeof(want));

	/* A device write lands in the mapped page at the same offset. */
	memset(wbuf, 0xA5, sizeof(wbuf));
	assert_int_equal(ilab_board_dma_write(t.board, t.si, t.dev->sid, 0, false, iova + 0x100,
					      wbuf, sizeof(wbuf), &f),
			 0);
	assert_int_equal(ilab_mem_read(ilab_board_mem(t.board), pa + 0x100, got, sizeof(wbuf)), 0);
	assert_memory_equal(got, wbuf, sizeof(wbuf));

	/* The next page is not mapped: F_TRANSLATION at exactly that address. */
	assert_int_equal(dma_read(&t, iova + SZ_4K, got, 8, &f), -EIO);
	assert_int_equal(f.event, EVT_F_TRANSLATION);
	assert_int_equal(f.iova, iova + SZ_4K);
	release(&t, d);
	dt_teardown(&t);
}

/* An SMMU without IDR0.COHACC: the domain's table is walked non-coherently (Linux
 * arm_smmu_domain_finalise: coherent_walk = ARM_SMMU_FEAT_COHERENCY), so the CD's TCR says
 * outer-shareable non-cacheable, the PTEs are cleaned (three new tables and their descriptors,
 * then the leaf: tests/drivers/test_io_pgtable_noncoherent.c has the rules), the sync mode
 * falls back to CONS polling, and DMA translates through the marked descriptors. */
static void test_noncoherent_smmu_cleans_ptes(void **state)
{
	struct ilab_smmu_drv_info info;
	struct ilab_io_pgtable_stats s0, s1;
	struct ilab_iommu_domain *d;
	struct ilab_io_pgtable *pgt;
	struct ilab_board_fault f;
	struct smmu_config cfg;
	uint8_t want[64], got[64];
	const uint64_t iova = 0x40000000;
	ilab_pa_t pa;
	struct dt t;

	(void)state;
	smmu_config_default(&cfg);
	cfg.coherent = false;
	setup_or_fail(&t, ILAB_CMA_PERNUMA, &cfg, NULL);
	assert_int_equal(ilab_smmu_drv_get_info(t.iommu, &info), 0);
	assert_false(info.coherent);
	assert_int_equal(info.sync_mode, ILAB_SMMU_SYNC_CONS);
	d = attach_new(&t, ILAB_DOMAIN_DMA);
	pgt = to_smmu_domain(d)->pgtbl;
	assert_false(ilab_io_pgtable_cfg(pgt)->coherent_walk);
	assert_int_equal(ilab_io_pgtable_cfg(pgt)->arm_lpae_s1_cfg.tcr.sh, 2);
	assert_int_equal(ilab_io_pgtable_cfg(pgt)->arm_lpae_s1_cfg.tcr.irgn, 0);
	ilab_io_pgtable_stats(pgt, &s0);
	assert_int_equal(s0.table_cleans, 1); /* the pgd */
	pa = page_with_pattern(&t, 2, 7);
	assert_int_equal(ilab_mem_read(ilab_board_mem(t.board), pa, want, sizeof(want)), 0);
	assert_int_equal(ilab_iommu_map(&d->pt, iova, pa, SZ_4K, ILAB_IOMMU_READ, true), 0);
	ilab_io_pgtable_stats(pgt, &s1);
	assert_int_equal(s1.table_cleans - s0.table_cleans, 3);
	assert_int_equal(s1.pte_syncs - s0.pte_syncs, 4);
	assert_int_equal(dma_read(&t, iova, got, sizeof(got), &f), 0);
	assert_memory_equal(got, want, sizeof(want));
	release(&t, d);
	dt_teardown(&t);
}

static void test_unmap_and_sync_makes_next_dma_fault(void **state)
{
	struct ilab_iommu_domain *d;
	struct ilab_iotlb_gather g;
	struct ilab_board_fault f;
	uint64_t recs[8][4];
	uint8_t buf[64];
	const uint64_t iova = 0x40000000;
	ilab_pa_t pa;
	unsigned n;
	bool lost;
	struct dt t;

	(void)state;
	setup_or_fail(&t, ILAB_CMA_PERNUMA, NULL, NULL);
	d = attach_new(&t, ILAB_DOMAIN_DMA);
	pa = page_with_pattern(&t, 2, 9);
	assert_int_equal(ilab_iommu_map(&d->pt, iova, pa, SZ_4K, ILAB_IOMMU_READ, true), 0);
	assert_int_equal(dma_read(&t, iova, buf, sizeof(buf), &f), 0); /* fills the TLB */

	ilab_iotlb_gather_init(&g);
	assert_int_equal(ilab_iommu_unmap_fast(&d->pt, iova, SZ_4K, &g, true), SZ_4K);
	/* Before the invalidation the SMMU may still use its TLB entry: the model does. This
	 * is why strict mode must sync before the IOVA is reused. */
	assert_int_equal(dma_read(&t, iova, buf, sizeof(buf), &f), 0);
	d->pt.iotlb_sync(d->pt.priv, &g);
	assert_true(ilab_iotlb_gather_empty(&g));
	assert_int_equal(dma_read(&t, iova, buf, sizeof(buf), &f), -EIO);
	assert_int_equal(f.event, EVT_F_TRANSLATION);
	assert_true(f.recorded);

	/* The record in the event queue: ID 0x10, StreamID in [63:32], input address dword 2. */
	n = ilab_smmu_drv_read_events(t.iommu, recs, 8, &lost);
	assert_int_equal(n, 1);
	assert_false(lost);
	assert_int_equal(recs[0][0] & 0xff, EVT_F_TRANSLATION);
	assert_int_equal(recs[0][0] >> 32, t.dev->sid);
	assert_int_equal(recs[0][2], iova);
	assert_int_equal(ilab_smmu_drv_read_events(t.iommu, recs, 8, NULL), 0);
	release(&t, d);
	dt_teardown(&t);
}

static void test_identity_domain_passes_through(void **state)
{
	struct ilab_iommu_domain *d;
	struct ilab_board_fault f;
	uint8_t want[256], got[256];
	ilab_pa_t pa;
	struct dt t;

	(void)state;
	setup_or_fail(&t, ILAB_CMA_NONE, NULL, NULL);
	d = attach_new(&t, ILAB_DOMAIN_IDENTITY);
	pa = page_with_pattern(&t, 1, 77);
	assert_int_equal(ilab_mem_read(ilab_board_mem(t.board), pa, want, sizeof(want)), 0);
	assert_int_equal(dma_read(&t, pa, got, sizeof(got), &f), 0);
	assert_memory_equal(got, want, sizeof(want));
	release(&t, d);
	dt_teardown(&t);
}

static void test_blocked_domain_aborts(void **state)
{
	struct ilab_iommu_domain *d;
	struct ilab_board_fault f;
	uint8_t got[16];
	ilab_pa_t pa;
	struct dt t;

	(void)state;
	setup_or_fail(&t, ILAB_CMA_NONE, NULL, NULL);
	pa = page_with_pattern(&t, 1, 5);
	/* A probed but unattached stream aborts too (Linux: disable_bypass). */
	assert_int_equal(t.iommu->ops->probe_device(t.iommu, t.dev), 0);
	assert_int_equal(dma_read(&t, pa, got, sizeof(got), &f), -EIO);
	d = attach_new(&t, ILAB_DOMAIN_BLOCKED);
	assert_int_equal(dma_read(&t, pa, got, sizeof(got), &f), -EIO);
	/* STE.Config abort terminates without an event (IHI 0070 §5.2). */
	assert_int_equal(f.event, 0);
	assert_int_equal(ilab_smmu_drv_read_events(t.iommu, NULL, 8, NULL), 0);
	release(&t, d);
	dt_teardown(&t);
}

/* ---- hitless STE/CD updates, observed at every sync ----------------------------------------- */

struct watch {
	struct dt *t;
	uint64_t iova;          /* mapped to pa_dma in the DMA domain; also a PA for bypass */
	ilab_pa_t pa_dma;
	unsigned ste_syncs, cd_syncs;
	unsigned bad;           /* translations that matched no allowed outcome */
	unsigned invalid_seen;  /* syncs at which the STE was invalid (break-before-make) */
};

static void watch_hook(void *ctx, bool is_ste, uint32_t sid, const uint64_t ent[8])
{
	struct watch *w = ctx;
	struct smmu_txn_req req = { .sid = sid, .iova = w->iova };
	struct smmu_txn_rsp rsp;

	if (is_ste)
		w->ste_syncs++;
	else
		w->cd_syncs++;
	if (is_ste && !(ent[0] & 1))
		w->invalid_seen++;
	smmu_translate(ilab_board_smmu(w->t->board, w->t->si), &req, &rsp);
	/* Allowed: bypass (pa == iova), translated (pa_dma), abort without an event. Never a
	 * C_BAD_STE/C_BAD_CD, which a torn entry would give. */
	if (rsp.status == SMMU_TXN_OK && (rsp.pa == w->iova || rsp.pa == w->pa_dma))
		return;
	if (rsp.status == SMMU_TXN_ABORT && rsp.event == 0)
		return;
	w->bad++;
}

static void test_ste_updates_never_torn(void **state)
{
	struct ilab_smmu_drv_opts o = { 0 };
	struct ilab_iommu_domain *id, *dma, *blk;
	struct watch w = { 0 };
	struct ilab_board_fault f;
	uint8_t b[8];
	struct dt t;

	(void)state;
	o.entry_hook = watch_hook;
	o.entry_hook_ctx = &w;
	setup_or_fail(&t, ILAB_CMA_NONE, NULL, &o);
	w.t = &t;
	w.iova = page_with_pattern(&t, 2, 1);
	w.pa_dma = page_with_pattern(&t, 2, 2);

	id = attach_new(&t, ILAB_DOMAIN_IDENTITY);
	dma = t.iommu->ops->domain_alloc(t.iommu, ILAB_DOMAIN_DMA, -1);
	blk = t.iommu->ops->domain_alloc(t.iommu, ILAB_DOMAIN_BLOCKED, -1);
	assert_non_null(dma);
	assert_non_null(blk);
	assert_int_equal(ilab_iommu_map(&dma->pt, w.iova, w.pa_dma, SZ_4K, ILAB_IOMMU_READ, true), 0);
	assert_int_equal(dma_read(&t, w.iova, b, sizeof(b), &f), 0); /* cache the bypass STE */

	/* abort -> bypass: Linux KUnit expects 2 syncs, hitless */
	assert_int_equal(w.ste_syncs, 2);
	w.ste_syncs = w.cd_syncs = 0;
	/* bypass -> S1 CD table: CD empty -> S1 (2 syncs), STE bypass -> cdtable (3, hitless) */
	assert_int_equal(dma->ops->attach_dev(dma, t.dev), 0);
	assert_int_equal(w.cd_syncs, 2);
	assert_int_equal(w.ste_syncs, 3);
	w.ste_syncs = w.cd_syncs = 0;
	/* cdtable -> abort: 2 syncs (then the CD is cleared: 2 CD syncs) */
	assert_int_equal(blk->ops->attach_dev(blk, t.dev), 0);
	assert_int_equal(w.ste_syncs, 2);
	assert_int_equal(w.cd_syncs, 2);
	w.ste_syncs = w.cd_syncs = 0;
	/* abort -> bypass: 2 */
	assert_int_equal(id->ops->attach_dev(id, t.dev), 0);
	assert_int_equal(w.ste_syncs, 2);
	/* All of these are hitless: the STE was never made invalid. */
	assert_int_equal(w.invalid_seen, 0);
	assert_int_equal(w.bad, 0);
	release(&t, dma);
	id->ops->free(id);
	blk->ops->free(blk);
	dt_teardown(&t);
}

/* ---- CMD_SYNC completion modes ------------------------------------------------------------ */

static void sync_mode_case(enum ilab_smmu_sync_mode mode)
{
	struct ilab_smmu_drv_opts o = { .sync_mode = mode, .cmdq_log2 = 7 };
	struct smmu_queue_stats before, after;
	struct ilab_smmu_drv_info info;
	uint64_t cmd[2];
	struct dt t;

	setup_or_fail(&t, ILAB_CMA_NONE, NULL, &o);
	assert_int_equal(ilab_smmu_drv_get_info(t.iommu, &info), 0);
	assert_int_equal(info.sync_mode, mode);
	ilab_smmu_drv_build_tlbi_va(cmd, 5, 0x1000);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(t.board, t.si), 0, &before), 0);
	/* 300 round trips through a 128-entry queue: it wraps. */
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(ilab_smmu_drv_issue_cmds(t.iommu, cmd, 1, true), 0);
	assert_int_equal(smmu_get_cmdq_stats(ilab_board_smmu(t.board, t.si), 0, &after), 0);
	assert_int_equal(after.by_opcode[OP_TLBI_NH_VA] - before.by_opcode[OP_TLBI_NH_VA], 300);
	assert_int_equal(after.by_opcode[OP_CMD_SYNC] - before.by_opcode[OP_CMD_SYNC], 300);
	if (mode == ILAB_SMMU_SYNC_MSI) {
		assert_int_equal(after.syncs_msi - before.syncs_msi, 300);
	} else {
		/* CS=SEV (the model has IDR0.SEV) */
		assert_int_equal(after.syncs_sev - before.syncs_sev, 300);
		assert_int_equal(after.syncs_msi - before.syncs_msi, 0);
	}
	assert_int_equal(after.cerror_ill, 0);
	dt_teardown(&t);
}

static void test_cmd_sync_msi_polling(void **state)
{
	(void)state;
	sync_mode_case(ILAB_SMMU_SYNC_MSI);
}

static void test_cmd_sync_cons_polling(void **state)
{
	(void)state;
	sync_mode_case(ILAB_SMMU_SYNC_CONS);
}

/* ---- invalidation by range ------------------------------------------------------------------ */

static uint64_t tlbi_count(struct dt *t, int domain_unused, struct ilab_iommu_domain *d,
			   uint64_t iova, size_t size, uint64_t *syncs)
{
	struct smmu_queue_stats a, b;

	(void)domain_unused;
	smmu_get_cmdq_stats(ilab_board_smmu(t->board, t->si), 0, &a);
	assert_int_equal(ilab_smmu_drv_inv_range(d, iova, size, SZ_4K), 0);
	smmu_get_cmdq_stats(ilab_board_smmu(t->board, t->si), 0, &b);
	*syncs = b.by_opcode[OP_CMD_SYNC] - a.by_opcode[OP_CMD_SYNC];
	assert_int_equal(b.cerror_ill, 0);
	return b.by_opcode[OP_TLBI_NH_VA] - a.by_opcode[OP_TLBI_NH_VA];
}

static void test_ril_vs_per_page_invalidation(void **state)
{
	struct ilab_smmu_drv_opts o = { 0 };
	struct ilab_iommu_domain *d;
	uint64_t syncs;
	struct dt t;

	(void)state;
	setup_or_fail(&t, ILAB_CMA_NONE, NULL, &o);
	d = attach_new(&t, ILAB_DOMAIN_DMA);
	/* 1 MiB = 256 pages = 1 << 8: SCALE 8, NUM 0 — one command. */
	assert_int_equal(tlbi_count(&t, 0, d, 0x100000, 1 << 20, &syncs), 1);
	assert_int_equal(syncs, 1);
	/* 291 pages = 0b1_0010_0011: 3 pages at SCALE 0, then 9 << 5: two commands. */
	assert_int_equal(tlbi_count(&t, 0, d, 0x100000, 291 * SZ_4K, &syncs), 2);
	/* 2 MiB of 4K pages: 512 = 1 << 9, one command (reference §5.6). */
	assert_int_equal(tlbi_count(&t, 0, d, 0x200000, SZ_2M, &syncs), 1);
	release(&t, d);
	dt_teardown(&t);

	o.no_ril = true;
	setup_or_fail(&t, ILAB_CMA_NONE, NULL, &o);
	d = attach_new(&t, ILAB_DOMAIN_DMA);
	/* Without RIL one TLBI per 4K page, in batches of 64, and a single CMD_SYNC. */
	assert_int_equal(tlbi_count(&t, 0, d, 0x100000, 1 << 20, &syncs), 256);
	assert_int_equal(syncs, 1);
	release(&t, d);
	dt_teardown(&t);
}

/* The range command really covers the range: after unmap + RIL sync, every page faults. */
static void test_ril_range_invalidates_every_page(void **state)
{
	struct ilab_iommu_domain *d;
	struct ilab_iotlb_gather g;
	struct ilab_board_fault f;
	const unsigned pages = 291;
	const uint64_t iova = 0x80000000;
	ilab_pa_t pa;
	uint8_t b[8];
	struct dt t;

	(void)state;
	setup_or_fail(&t, ILAB_CMA_NONE, NULL, NULL);
	d = attach_new(&t, ILAB_DOMAIN_DMA);
	assert_int_equal(ilab_mem_alloc_pages(ilab_board_mem(t.board), 2, 9, &pa), 0);
	assert_int_equal(ilab_iommu_map(&d->pt, iova, pa, pages * SZ_4K, ILAB_IOMMU_READ, true), 0);
	for (unsigned i = 0; i < pages; i++)
		assert_int_equal(dma_read(&t, iova + i * SZ_4K, b, sizeof(b), &f), 0);
	ilab_iotlb_gather_init(&g);
	assert_int_equal(ilab_iommu_unmap_fast(&d->pt, iova, pages * SZ_4K, &g, true), pages * SZ_4K);
	d->pt.iotlb_sync(d->pt.priv, &g);
	for (unsigned i = 0; i < pages; i++) {
		assert_int_equal(dma_read(&t, iova + i * SZ_4K, b, sizeof(b), &f), -EIO);
		assert_int_equal(f.event, EVT_F_TRANSLATION);
	}
	release(&t, d);
	dt_teardown(&t);
}

/* ---- queue placement (seed 000) ------------------------------------------------------------- */

static void placement_case(enum ilab_cma_mode cma, int want_node)
{
	struct ilab_smmu_drv_info info;
	struct dt t;

	setup_or_fail(&t, cma, NULL, NULL);
	assert_int_equal(ilab_board_smmu_node(t.board, t.si), 2);
	assert_int_equal(ilab_smmu_drv_get_info(t.iommu, &info), 0);
	assert_int_equal(ilab_mem_node_of(ilab_board_mem(t.board), info.cmdq_pa), want_node);
	assert_int_equal(ilab_mem_node_of(ilab_board_mem(t.board), info.evtq_pa), want_node);
	dt_teardown(&t);
}

static void test_queue_placement_global_cma_on_node0(void **state)
{
	(void)state;
	placement_case(ILAB_CMA_GLOBAL, 0);
}

static void test_queue_placement_pernuma_cma_local(void **state)
{
	(void)state;
	placement_case(ILAB_CMA_PERNUMA, 2);
}

/* ---- board errors ----------------------------------------------------------------------------- */

static void test_board_bad_input_is_an_error(void **state)
{
	struct ilab_board_opts bo = { .cma_global_node = 9 };
	struct ilab_board *b = (void *)1;
	struct ilab_topo *topo;
	char err[128];
	uint8_t x;

	(void)state;
	assert_int_equal(ilab_topo_load("kunpeng920", &topo, err, sizeof(err)), 0);
	assert_int_equal(plat_init(&(struct plat_config){ .topo = topo }), 0);
	assert_int_equal(ilab_board_create(NULL, NULL, &b, err, sizeof(err)), -EINVAL);
	assert_null(b);
	assert_int_equal(ilab_board_create(topo, &bo, &b, err, sizeof(err)), -EINVAL);
	bo.cma_global_node = 0;
	bo.smmu_mask = 1;
	bo.node_bytes = 1ull << 30;
	assert_int_equal(ilab_board_create(topo, &bo, &b, err, sizeof(err)), 0);
	/* probing needs running agents; DMA on an absent SMMU or a bad index fails cleanly */
	assert_int_equal(ilab_board_probe_iommus(b, NULL), -EAGAIN);
	assert_int_equal(ilab_board_dma_read(b, 3, 0, 0, false, 0, &x, 1, NULL), -ENODEV);
	assert_int_equal(ilab_board_dma_read(b, 99, 0, 0, false, 0, &x, 1, NULL), -EINVAL);
	ilab_board_destroy(b);
	plat_fini();
	ilab_topo_free(topo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_reads_id_registers),
		cmocka_unit_test(test_probe_small_sid_space_is_linear),
		cmocka_unit_test(test_probe_rejects_tiny_queue_and_bad_args),
		cmocka_unit_test(test_dma_domain_translates_mapped_page),
		cmocka_unit_test(test_noncoherent_smmu_cleans_ptes),
		cmocka_unit_test(test_unmap_and_sync_makes_next_dma_fault),
		cmocka_unit_test(test_identity_domain_passes_through),
		cmocka_unit_test(test_blocked_domain_aborts),
		cmocka_unit_test(test_ste_updates_never_torn),
		cmocka_unit_test(test_cmd_sync_msi_polling),
		cmocka_unit_test(test_cmd_sync_cons_polling),
		cmocka_unit_test(test_ril_vs_per_page_invalidation),
		cmocka_unit_test(test_ril_range_invalidates_every_page),
		cmocka_unit_test(test_queue_placement_global_cma_on_node0),
		cmocka_unit_test(test_queue_placement_pernuma_cma_local),
		cmocka_unit_test(test_board_bad_input_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
