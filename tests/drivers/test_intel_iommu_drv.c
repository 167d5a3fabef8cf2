/* test_intel_iommu_drv.c — the Intel VT-d driver against the VT-d model, without a board
 * (tests/drivers/intel_rig.h): probe handshakes, map/unmap of 4K/2M/1G leaves checked by the
 * model's own walk, the stale IOTLB entry until the flush, PSI with AM (aligned and widened),
 * DSI above CAP.MAMV, a domain on two units, domain_update_iommu_cap, IQE recovery, device-TLB
 * flushes for ATS, the nid policies, table pages on the domain's node, table freeing, faults,
 * and the DMA API in strict and lazy mode. Expected encodings are the VT-d specification's.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "drivers/intel_rig.h"
#include "iommulab/dma_iommu.h"

#define SZ_4K 0x1000ull
#define SZ_2M 0x200000ull
#define SZ_1G 0x40000000ull
#define SID_A 0x0300 /* bus 3, device 0, function 0 */
#define SID_B 0x0400

static const int RW = ILAB_IOMMU_READ | ILAB_IOMMU_WRITE;

struct fix {
	struct rig *r;
	struct ir_unit *u0, *u1;
	struct ilab_dev *a, *b;
	struct ilab_iommu_domain *dom;
};

/* One unit on node 1 (default model) with device A probed into a DMA default domain, plus an
 * UNMANAGED domain attached to A. */
static struct fix *one_unit(const struct vtd_config *cfg, const struct ilab_intel_iommu_opts *o)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(rig_new(&f->r), 0);
	f->u0 = rig_add_unit(f->r, 1, cfg, o);
	if (!f->u0)
		fail_msg("%s", f->r->err);
	f->a = rig_dev(f->r, 0, f->u0, SID_A, 1);
	assert_int_equal(ilab_iommu_probe_device(f->a, ILAB_DOMAIN_DMA), 0);
	f->dom = ilab_iommu_domain_alloc(f->u0->iommu, ILAB_DOMAIN_UNMANAGED, -1);
	assert_non_null(f->dom);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	return f;
}

static void fix_free(struct fix *f)
{
	if (f->dom) {
		if (f->a && f->a->group)
			ilab_iommu_detach_device(f->dom, f->a);
		if (f->b && f->b->group)
			ilab_iommu_detach_device(f->dom, f->b);
		ilab_iommu_domain_free(f->dom);
	}
	rig_fini(f->r);
	free(f);
}

/* ---- probe ------------------------------------------------------------------------------- */

static void probe_handshakes(void **state)
{
	struct rig *r;
	struct ir_unit *u;
	struct ilab_intel_iommu_info info;
	struct vtd_stats st;

	(void)state;
	assert_int_equal(rig_new(&r), 0);
	u = rig_add_unit(r, 1, NULL, NULL);
	assert_non_null(u);
	assert_int_equal(ilab_intel_iommu_get_info(u->iommu, &info), 0);
	/* the Skylake-SP-like default: SAGAW 48-bit only -> agaw 2, MAMV 18, 16-bit DIDs */
	assert_int_equal(info.agaw, 2);
	assert_int_equal(info.mamv, 18);
	assert_int_equal(info.ndoms, 65536);
	assert_int_equal(info.superpage, 2);
	/* GSTS: translation, root table pointer and queued invalidation all acknowledged */
	uint32_t gsts = (uint32_t)vtd_mmio_read(u->v, IR_GSTS, 4);
	assert_true(gsts & IR_GSTS_TES);
	assert_true(gsts & IR_GSTS_RTPS);
	assert_true(gsts & IR_GSTS_QIES);
	/* RTADDR and IQA hold the driver's tables, on the unit's node */
	assert_int_equal(vtd_mmio_read(u->v, IR_RTADDR, 8) & ~0xfffull, info.root_pa);
	assert_int_equal(vtd_mmio_read(u->v, IR_IQA, 8) & ~0xfffull, info.qi_desc_pa);
	assert_int_equal(vtd_mmio_read(u->v, IR_IQA, 8) & 7, 0); /* QS 0: 256 entries */
	assert_int_equal(ilab_mem_node_of(r->mem, info.root_pa), 1);
	assert_int_equal(ilab_mem_node_of(r->mem, info.qi_desc_pa), 1);
	/* fault event: FEADDR in the interrupt range, unmasked */
	assert_int_equal(vtd_mmio_read(u->v, IR_FEADDR, 4), 0xfee00000u);
	assert_int_equal(vtd_mmio_read(u->v, IR_FECTL, 4) >> 31, 0);
	/* after SRTP: a global context-cache and a global IOTLB invalidation, each waited for */
	assert_true(u->nlog >= 4);
	assert_int_equal(u->log[0].qw0, 0x1ull | (1ull << 4));                 /* CC global */
	assert_int_equal(IR_DESC_TYPE(u->log[1].qw0), 5);                      /* wait */
	assert_int_equal(u->log[1].qw0 & (1ull << 5), 1ull << 5);              /* SW */
	assert_int_equal(u->log[2].qw0, 0x2ull | (1ull << 4) | (1ull << 6) | (1ull << 7)); /* IOTLB global, DW, DR */
	assert_int_equal(IR_DESC_TYPE(u->log[3].qw0), 5);
	vtd_get_stats(u->v, &st);
	assert_int_equal(st.iq_errors, 0);
	assert_int_equal(st.wait_status_writes, 2);
	rig_fini(r);
}

static void probe_refuses_unit_without_qi(void **state)
{
	struct rig *r;
	struct vtd_config c;
	struct ir_unit *u;
	struct ilab_iommu *io = NULL;

	(void)state;
	assert_int_equal(rig_new(&r), 0);
	vtd_config_default(&c);
	c.qi = c.dt = false; /* DT requires QI (ECAP.DT, VT-d §10.4.3) */
	u = rig_add_model(r, 0, &c);
	assert_non_null(u);
	assert_int_equal(ilab_intel_iommu_probe(&u->mmio, r->mem, 0, NULL, &io), -ENODEV);
	assert_null(io);
	assert_non_null(strstr(ilab_intel_iommu_strerror(), "QI"));
	assert_int_equal(ilab_intel_iommu_probe(&u->mmio, r->mem, 7, NULL, &io), -EINVAL);
	rig_fini(r);
}

/* A test whose probe fails and whose assertion on it then fails: cmocka leaves the body by
 * longjmp and runs rig_teardown on the rig the body set up. */
static void failing_probe_body(void **state)
{
	struct rig *r;
	struct vtd_config c;

	(void)state;
	assert_int_equal(rig_new(&r), 0);
	vtd_config_default(&c);
	c.qi = c.dt = false; /* the driver refuses a unit without queued invalidation */
	assert_non_null(rig_add_unit(r, 0, &c, NULL)); /* fails: probe returned -ENODEV */
	rig_fini(r);
}

static bool failing_probe_torn_down;

/* What the teardown's own calls do to the stack the failed body left: overwrite it. Done on
 * purpose so that a rig kept in that frame is found out every time, not by chance. */
static __attribute__((noinline)) void clobber_dead_stack(void)
{
	volatile unsigned char junk[1 << 20];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

static int failing_probe_teardown(void **state)
{
	clobber_dead_stack();
	rig_teardown(state);
	failing_probe_torn_down = true;
	return 0;
}

/* The teardown after a failed probe releases the rig cleanly: run the failing test in a child
 * (its cmocka report discarded), which must exit normally with exactly that one failure and
 * with the teardown run to its end. A crash or a sanitizer report ends it otherwise. */
static void teardown_after_failed_probe(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const struct CMUnitTest t[] = {
			cmocka_unit_test_teardown(failing_probe_body, failing_probe_teardown),
		};
		int devnull = open("/dev/null", O_WRONLY);
		int failed;

		if (devnull >= 0) {
			dup2(devnull, STDOUT_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		failed = cmocka_run_group_tests_name("failing_probe", t, NULL, NULL);
		_exit(failed == 1 && failing_probe_torn_down ? 42 : 43);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
}

/* Firmware left translation on and a fault pending: probe turns translation off first and
 * handles the fault record (dmar_fault before QI is set up). */
static void probe_clears_pending_faults(void **state)
{
	struct rig *r;
	struct ir_unit *u;
	struct ilab_intel_iommu_stats st;
	ilab_pa_t root;

	(void)state;
	assert_int_equal(rig_new(&r), 0);
	u = rig_add_model(r, 0, NULL);
	assert_non_null(u);
	assert_int_equal(ilab_mem_alloc_pages(r->mem, 0, 0, &root), 0);
	vtd_mmio_write(u->v, IR_RTADDR, root, 8);
	vtd_mmio_write(u->v, 0x18, 1u << 30, 4); /* GCMD.SRTP */
	vtd_mmio_write(u->v, 0x18, 1u << 31, 4); /* GCMD.TE */
	assert_int_equal(rig_tr(u, SID_A, 0x1000, false).fault_reason, VTD_FR_ROOT_NOT_PRESENT);
	assert_true(vtd_mmio_read(u->v, IR_FSTS, 4) & IR_FSTS_PPF);
	assert_int_equal(ilab_intel_iommu_probe(&u->mmio, r->mem, 0, NULL, &u->iommu), 0);
	assert_int_equal(vtd_mmio_read(u->v, IR_FSTS, 4) & IR_FSTS_PPF, 0);
	ilab_intel_iommu_get_stats(u->iommu, &st);
	assert_int_equal(st.faults_handled, 1);
	rig_fini(r);
}

/* ---- map and translate ------------------------------------------------------------------------ */

static void check_tr(struct ir_unit *u, uint16_t sid, uint64_t iova, uint64_t pa, unsigned shift,
		     unsigned perm)
{
	struct vtd_txn_rsp rsp = rig_tr(u, sid, iova, false);

	assert_int_equal(rsp.status, VTD_TXN_OK);
	assert_int_equal(rsp.pa, pa);
	assert_int_equal(rsp.page_shift, shift);
	assert_int_equal(rsp.perm, perm);
}

static void map_4k_2m_1g_translate(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	struct vtd_txn_rsp rsp;

	(void)state;
	/* 4 KiB, read-only */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x100000, 0x45678000, SZ_4K, ILAB_IOMMU_READ), 0);
	check_tr(f->u0, SID_A, 0x100123, 0x45678123, 12, VTD_PERM_R);
	rsp = rig_tr(f->u0, SID_A, 0x100000, true);
	assert_int_equal(rsp.status, VTD_TXN_FAULT);
	assert_int_equal(rsp.fault_reason, VTD_FR_WRITE);
	/* 2 MiB, read-write: one leaf at the PDE level */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x40000000, 0x80000000, SZ_2M, RW), 0);
	check_tr(f->u0, SID_A, 0x40000000 + 0x12345, 0x80000000 + 0x12345, 21, VTD_PERM_R | VTD_PERM_W);
	/* 1 GiB: one leaf at the PDPE level */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x4000000000ull, 0xc0000000ull, SZ_1G, RW), 0);
	check_tr(f->u0, SID_A, 0x4000000000ull + 0x3fffffff, 0xc0000000ull + 0x3fffffff, 30,
		 VTD_PERM_R | VTD_PERM_W);
	/* unmapping 4K of a 2M leaf: inside it nothing (no split), at its start the whole leaf
	 * (Linux intel_iommu_unmap's "horrid API" rule) */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x40400000, 0x80400000, SZ_2M, RW), 0);
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x40401000, SZ_4K), 0);
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x40400000, SZ_4K), SZ_2M);
	assert_int_equal(rig_tr(f->u0, SID_A, 0x40500000, false).status, VTD_TXN_FAULT);
	/* iova_to_phys agrees */
	assert_int_equal(ilab_iommu_iova_to_phys(f->dom, 0x40000000 + 0x1000), 0x80001000);
	/* a mapped leaf cannot be mapped again */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x100000, 0x1000, SZ_4K, RW), -EEXIST);
	/* the model saw the context entry the driver wrote: the domain's id */
	rsp = rig_tr(f->u0, SID_A, 0x100000, false);
	assert_int_equal(rsp.did, ilab_intel_domain_did_on(f->dom, f->u0->iommu));
	assert_true(rsp.did >= 1); /* DID 0 is reserved */
	fix_free(f);
}

static void unmap_faults_only_after_flush(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	struct ilab_iotlb_gather g;
	struct vtd_txn_rsp rsp;

	(void)state;
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x200000, 0x46000000, SZ_4K, RW), 0);
	check_tr(f->u0, SID_A, 0x200000, 0x46000000, 12, VTD_PERM_R | VTD_PERM_W); /* IOTLB filled */
	ilab_iotlb_gather_init(&g);
	assert_int_equal(ilab_iommu_unmap_fast(&f->dom->pt, 0x200000, SZ_4K, &g, true), SZ_4K);
	/* PTE cleared, but the IOTLB still holds it: the flush is needed */
	check_tr(f->u0, SID_A, 0x200000, 0x46000000, 12, VTD_PERM_R | VTD_PERM_W);
	f->dom->pt.iotlb_sync(f->dom->pt.priv, &g);
	rsp = rig_tr(f->u0, SID_A, 0x200000, false);
	assert_int_equal(rsp.status, VTD_TXN_FAULT);
	assert_int_equal(rsp.fault_reason, VTD_FR_READ);
	fix_free(f);
}

/* ---- IOTLB flush granularity ------------------------------------------------------------------ */

static const struct ir_desc *last_iotlb(struct ir_unit *u, unsigned from)
{
	const struct ir_desc *d = NULL;

	for (unsigned i = from; i < u->nlog; i++)
		if (IR_DESC_TYPE(u->log[i].qw0) == 2)
			d = &u->log[i];
	return d;
}

static void psi_am_aligned_range(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	uint64_t iova = 0x1000000; /* 16-page aligned */
	unsigned from;
	const struct ir_desc *d;

	(void)state;
	assert_int_equal(ilab_iommu_domain_map(f->dom, iova, 0x47000000, 16 * SZ_4K, RW), 0);
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, iova, 16 * SZ_4K), 16 * SZ_4K);
	assert_int_equal(rig_count(f->u0, from, 2, -1), 1); /* one IOTLB descriptor */
	d = last_iotlb(f->u0, from);
	assert_int_equal(IR_DESC_G(d->qw0), 3);              /* page-selective */
	assert_int_equal(IR_DESC_DID(d->qw0), ilab_intel_domain_did_on(f->dom, f->u0->iommu));
	assert_int_equal(IR_IOTLB_AM(d->qw1), 4);            /* 2^4 pages */
	assert_int_equal(IR_IOTLB_ADDR(d->qw1), iova);
	assert_int_equal(IR_IOTLB_IH(d->qw1), 1);            /* leaves only: the table stays */
	assert_int_equal(IR_DESC_TYPE(f->u0->log[f->u0->nlog - 1].qw0), 5); /* then a wait */
	fix_free(f);
}

/* Linux does not split an unaligned range into several PSIs: it widens AM until one naturally
 * aligned block holds the range (iommu_flush_iotlb_psi's shared_bits). */
static void psi_unaligned_range_widens_am(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	uint64_t iova = 0x1000000 + 3 * SZ_4K; /* pages 3 and 4 of an aligned block */
	unsigned from;
	const struct ir_desc *d;
	struct vtd_txn_rsp rsp;

	(void)state;
	assert_int_equal(ilab_iommu_domain_map(f->dom, iova, 0x47000000, 2 * SZ_4K, RW), 0);
	check_tr(f->u0, SID_A, iova + SZ_4K, 0x47000000 + SZ_4K, 12, VTD_PERM_R | VTD_PERM_W);
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, iova, 2 * SZ_4K), 2 * SZ_4K);
	assert_int_equal(rig_count(f->u0, from, 2, -1), 1);
	d = last_iotlb(f->u0, from);
	assert_int_equal(IR_DESC_G(d->qw0), 3);
	/* pfns 0x1003..0x1004: 2 pages -> mask 1, but 0x1003 is odd; the lowest bit above the
	 * mask where 0x1003 and 0x1004 agree is bit 3: AM 3, the block 0x1000..0x1007 */
	assert_int_equal(IR_IOTLB_AM(d->qw1), 3);
	rsp = rig_tr(f->u0, SID_A, iova + SZ_4K, false);
	assert_int_equal(rsp.status, VTD_TXN_FAULT); /* the cached entry is gone */
	fix_free(f);
}

static void dsi_above_mamv(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	unsigned from;
	const struct ir_desc *d;

	(void)state;
	/* 1 GiB = 2^18 pages: AM 18 = MAMV, still page-selective */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x8000000000ull, 0x40000000ull, SZ_1G, RW), 0);
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x8000000000ull, SZ_1G), SZ_1G);
	d = last_iotlb(f->u0, from);
	assert_int_equal(IR_DESC_G(d->qw0), 3);
	assert_int_equal(IR_IOTLB_AM(d->qw1), 18);
	/* 2 GiB = 2^19 pages: AM 19 > MAMV 18 -> one domain-selective invalidation */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x8000000000ull, 0x40000000ull, 2 * SZ_1G, RW), 0);
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x8000000000ull, 2 * SZ_1G), 2 * SZ_1G);
	assert_int_equal(rig_count(f->u0, from, 2, -1), 1);
	d = last_iotlb(f->u0, from);
	assert_int_equal(IR_DESC_G(d->qw0), 2);
	assert_int_equal(IR_DESC_DID(d->qw0), ilab_intel_domain_did_on(f->dom, f->u0->iommu));
	fix_free(f);
}

static void dsi_small_mamv(void **state)
{
	struct vtd_config c;
	struct fix *f;
	unsigned from;

	(void)state;
	vtd_config_default(&c);
	c.mamv = 2;
	f = one_unit(&c, NULL);
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x100000, 0x47000000, 8 * SZ_4K, RW), 0);
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x100000, 4 * SZ_4K), 4 * SZ_4K);
	assert_int_equal(rig_count(f->u0, from, 2, 3), 1); /* 4 pages: AM 2 = MAMV */
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x104000, 4 * SZ_4K), 4 * SZ_4K);
	assert_int_equal(rig_count(f->u0, from, 2, 3), 1);
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x100000, 0x47000000, 8 * SZ_4K, RW), 0);
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x100000, 8 * SZ_4K), 8 * SZ_4K);
	assert_int_equal(rig_count(f->u0, from, 2, 3), 0); /* 8 pages: AM 3 > 2 */
	assert_int_equal(rig_count(f->u0, from, 2, 2), 1);
	fix_free(f);
}

/* A whole 2 MiB of 4 KiB leaves unmapped at once frees their table (after the flush, with
 * IH 0 since a table went away); the flush_iotlb_all of a lazy domain frees what is pending. */
static void table_freed_after_flush(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	struct ilab_intel_iommu_stats st0, st1;
	struct ilab_iotlb_gather g;
	unsigned from;
	const struct ir_desc *d;

	(void)state;
	/* 512 x 4K: the pa is not 2M aligned, so no superpage */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x600000, 0x47001000, SZ_2M, RW), 0);
	check_tr(f->u0, SID_A, 0x600000, 0x47001000, 12, VTD_PERM_R | VTD_PERM_W);
	ilab_intel_iommu_get_stats(f->u0->iommu, &st0);
	from = f->u0->nlog;
	ilab_iotlb_gather_init(&g);
	assert_int_equal(ilab_iommu_unmap_fast(&f->dom->pt, 0x600000, SZ_2M, &g, true), SZ_2M);
	ilab_intel_iommu_get_stats(f->u0->iommu, &st1);
	assert_int_equal(st1.pgtable_free, st0.pgtable_free); /* not before the flush */
	f->dom->pt.iotlb_sync(f->dom->pt.priv, &g);
	ilab_intel_iommu_get_stats(f->u0->iommu, &st1);
	assert_int_equal(st1.pgtable_free, st0.pgtable_free + 1);
	d = last_iotlb(f->u0, from);
	assert_int_equal(IR_DESC_G(d->qw0), 3);
	assert_int_equal(IR_IOTLB_AM(d->qw1), 9);
	assert_int_equal(IR_IOTLB_IH(d->qw1), 0);
	/* a partial unmap frees nothing */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x600000, 0x47001000, SZ_2M, RW), 0);
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x600000, SZ_2M - SZ_4K), SZ_2M - SZ_4K);
	ilab_intel_iommu_get_stats(f->u0->iommu, &st0);
	assert_int_equal(st0.pgtable_free, st1.pgtable_free);
	fix_free(f);
}

static void drop_ih_option(void **state)
{
	struct ilab_intel_iommu_opts o = { .drop_ih = true };
	struct fix *f = one_unit(NULL, &o);
	unsigned from;

	(void)state;
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x100000, 0x47000000, SZ_4K, RW), 0);
	from = f->u0->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x100000, SZ_4K), SZ_4K);
	assert_int_equal(IR_IOTLB_IH(last_iotlb(f->u0, from)->qw1), 0);
	fix_free(f);
}

/* ---- a domain on two units ------------------------------------------------------------------- */

static struct fix *two_units(const struct vtd_config *c1, const struct ilab_intel_iommu_opts *o)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(rig_new(&f->r), 0);
	f->u0 = rig_add_unit(f->r, 0, NULL, o);
	f->u1 = rig_add_unit(f->r, 1, c1, o);
	if (!f->u0 || !f->u1)
		fail_msg("%s", f->r->err);
	f->a = rig_dev(f->r, 0, f->u0, SID_A, 0);
	f->b = rig_dev(f->r, 1, f->u1, SID_B, 1);
	assert_int_equal(ilab_iommu_probe_device(f->a, ILAB_DOMAIN_DMA), 0);
	assert_int_equal(ilab_iommu_probe_device(f->b, ILAB_DOMAIN_DMA), 0);
	f->dom = ilab_iommu_domain_alloc(f->u0->iommu, ILAB_DOMAIN_UNMANAGED, -1);
	assert_non_null(f->dom);
	return f;
}

static void domain_spans_two_units(void **state)
{
	struct fix *f = two_units(NULL, NULL);
	int did0, did1;
	unsigned from0, from1;
	const struct ir_desc *d0, *d1;
	struct ilab_intel_domain_caps caps;

	(void)state;
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	assert_int_equal(ilab_intel_domain_did_on(f->dom, f->u1->iommu), -ENOENT);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->b), 0);
	did0 = ilab_intel_domain_did_on(f->dom, f->u0->iommu);
	did1 = ilab_intel_domain_did_on(f->dom, f->u1->iommu);
	assert_true(did0 >= 1 && did1 >= 1);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nr_units, 2);
	/* one table, walked by both units */
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x300000, 0x48000000, SZ_4K, RW), 0);
	check_tr(f->u0, SID_A, 0x300000, 0x48000000, 12, VTD_PERM_R | VTD_PERM_W);
	check_tr(f->u1, SID_B, 0x300000, 0x48000000, 12, VTD_PERM_R | VTD_PERM_W);
	assert_int_equal(rig_tr(f->u0, SID_A, 0x300000, false).did, did0);
	assert_int_equal(rig_tr(f->u1, SID_B, 0x300000, false).did, did1);
	from0 = f->u0->nlog;
	from1 = f->u1->nlog;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x300000, SZ_4K), SZ_4K);
	d0 = last_iotlb(f->u0, from0);
	d1 = last_iotlb(f->u1, from1);
	assert_non_null(d0);
	assert_non_null(d1);
	assert_int_equal(IR_DESC_DID(d0->qw0), did0);
	assert_int_equal(IR_DESC_DID(d1->qw0), did1);
	assert_int_equal(rig_tr(f->u0, SID_A, 0x300000, false).status, VTD_TXN_FAULT);
	assert_int_equal(rig_tr(f->u1, SID_B, 0x300000, false).status, VTD_TXN_FAULT);
	/* B leaves: unit 1 drops out of iommu_array, its context is cleared and invalidated */
	from1 = f->u1->nlog;
	ilab_iommu_detach_device(f->dom, f->b);
	assert_int_equal(ilab_intel_domain_did_on(f->dom, f->u1->iommu), -ENOENT);
	assert_true(rig_count(f->u1, from1, 1, 3) >= 1); /* device-selective context-cache */
	assert_int_equal(rig_count(f->u1, from1, 2, 2), 1); /* DSI of the old did */
	fix_free(f);
}

static void update_iommu_cap_intersection(void **state)
{
	struct vtd_config c1;
	struct fix *f;
	struct ilab_intel_domain_caps caps;

	(void)state;
	vtd_config_default(&c1);
	c1.sllps_1g = false;   /* 2M only */
	c1.coherent = false;   /* ECAP.C 0 */
	f = two_units(&c1, NULL);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.superpage, 2);
	assert_true(caps.coherent);
	assert_int_equal(caps.agaw, 2);
	assert_int_equal(caps.pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->b), 0);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.superpage, 1);
	assert_false(caps.coherent);
	/* Linux only ORs sizes into pgsize_bitmap: a 1G request is split into 2M leaves */
	assert_int_equal(caps.pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G);
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x4000000000ull, 0xc0000000ull, SZ_1G, RW), 0);
	check_tr(f->u1, SID_B, 0x4000000000ull + 0x300000, 0xc0300000ull, 21, VTD_PERM_R | VTD_PERM_W);
	check_tr(f->u0, SID_A, 0x4000000000ull + 0x300000, 0xc0300000ull, 21, VTD_PERM_R | VTD_PERM_W);
	/* B leaves: the domain's caps come back to unit 0's */
	ilab_iommu_detach_device(f->dom, f->b);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.superpage, 2);
	assert_true(caps.coherent);
	fix_free(f);
}

static void attach_refuses_unit_without_used_superpage(void **state)
{
	struct vtd_config c1;
	struct fix *f;

	(void)state;
	vtd_config_default(&c1);
	c1.sllps_1g = false;
	f = two_units(&c1, NULL);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x4000000000ull, 0xc0000000ull, SZ_1G, RW), 0);
	assert_int_not_equal(ilab_iommu_attach_device(f->dom, f->b), 0);
	assert_int_equal(ilab_intel_domain_did_on(f->dom, f->u1->iommu), -ENOENT);
	fix_free(f);
}

/* ---- queued invalidation errors ------------------------------------------------------------ */

static void iqe_recovery(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	struct ilab_intel_iommu_stats st;
	struct vtd_stats vs;
	/* an IOTLB PSI with AM 19 > MAMV 18: a reserved-field error (IQEI 4) */
	uint64_t bad[2] = { 0x2ull | (3ull << 4) | (1ull << 16), 0x100000ull | 19 };
	uint64_t good[2] = { 0x2ull | (1ull << 4), 0 };

	(void)state;
	assert_int_equal(ilab_intel_iommu_qi_submit(f->u0->iommu, bad, 1), -EINVAL);
	vtd_get_stats(f->u0->v, &vs);
	assert_int_equal(vs.iq_errors, 1);
	assert_int_equal(vtd_mmio_read(f->u0->v, IR_FSTS, 4) & IR_FSTS_IQE, 0); /* cleared */
	ilab_intel_iommu_get_stats(f->u0->iommu, &st);
	assert_int_equal(st.iqe_recovered, 1);
	/* the queue works again, and mappings still get flushed */
	assert_int_equal(ilab_intel_iommu_qi_submit(f->u0->iommu, good, 1), 0);
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x100000, 0x47000000, SZ_4K, RW), 0);
	check_tr(f->u0, SID_A, 0x100000, 0x47000000, 12, VTD_PERM_R | VTD_PERM_W);
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x100000, SZ_4K), SZ_4K);
	assert_int_equal(rig_tr(f->u0, SID_A, 0x100000, false).status, VTD_TXN_FAULT);
	/* a bad descriptor second in a batch is skipped the same way */
	uint64_t two[4] = { good[0], good[1], bad[0], bad[1] };
	assert_int_equal(ilab_intel_iommu_qi_submit(f->u0->iommu, two, 2), -EINVAL);
	assert_int_equal(ilab_intel_iommu_qi_submit(f->u0->iommu, good, 1), 0);
	vtd_get_stats(f->u0->v, &vs);
	assert_int_equal(vs.iq_errors, 2);
	fix_free(f);
}

/* ---- ATS: device-TLB invalidations ----------------------------------------------------------- */

static void ats_devtlb_flush(void **state)
{
	struct fix *f = one_unit(NULL, NULL);
	struct ilab_intel_domain_caps caps;
	struct vtd_txn_req q = { .sid = SID_A, .iova = 0x500000, .ats = true };
	struct vtd_txn_rsp rsp;
	unsigned n;

	(void)state;
	assert_int_equal(ilab_intel_iommu_set_ats(f->a, true, 8), 0);
	ilab_iommu_detach_device(f->dom, f->a);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0); /* ATS takes effect */
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_true(caps.has_iotlb_device);
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x500000, 0x49000000, 4 * SZ_4K, RW), 0);
	vtd_translate(f->u0->v, &q, &rsp); /* TT 01: ATS translation requests are answered */
	assert_int_equal(rsp.status, VTD_TXN_OK);
	assert_int_equal(rsp.pa, 0x49000000);
	n = f->u0->ndevtlb;
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x500000, 4 * SZ_4K), 4 * SZ_4K);
	assert_int_equal(f->u0->ndevtlb, n + 1);
	assert_int_equal(f->u0->devtlb[n].sid, SID_A);
	assert_int_equal(f->u0->devtlb[n].qdep, 8);
	assert_int_equal(f->u0->devtlb[n].addr, 0x500000);
	assert_int_equal(f->u0->devtlb[n].size_log2, 12 + 2); /* 4 pages */
	/* flush_iotlb_all: the whole address space */
	f->dom->ops->flush_iotlb_all(f->dom);
	assert_int_equal(f->u0->ndevtlb, n + 2);
	assert_int_equal(f->u0->devtlb[n + 1].size_log2, 64);
	/* without ATS, nothing */
	assert_int_equal(ilab_intel_iommu_set_ats(f->a, false, 0), 0);
	ilab_iommu_detach_device(f->dom, f->a);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	n = f->u0->ndevtlb;
	assert_int_equal(ilab_iommu_domain_map(f->dom, 0x500000, 0x49000000, SZ_4K, RW), 0);
	assert_int_equal(ilab_iommu_domain_unmap(f->dom, 0x500000, SZ_4K), SZ_4K);
	assert_int_equal(f->u0->ndevtlb, n);
	fix_free(f);
}

/* ---- nid ------------------------------------------------------------------------------------- */

struct map_arg {
	struct ilab_iommu_domain *dom;
	uint64_t iova;
	int rc;
};

static void map_thread(unsigned idx, void *arg)
{
	struct map_arg *m = arg;

	(void)idx;
	m->rc = ilab_iommu_domain_map(m->dom, m->iova, 0x4a000000, SZ_4K, RW);
}

/* The node of the table page reached through the pgd for iova (level 3 table). */
static int pt_node(struct fix *f, uint64_t iova)
{
	struct ilab_intel_domain_caps caps;
	uint64_t *pgd, pte;

	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	pgd = ilab_mem_va(f->r->mem, caps.pgd, 4096);
	pte = pgd[(iova >> 39) & 0x1ff];
	assert_true(pte & 3);
	return ilab_mem_node_of(f->r->mem, pte & 0x000ffffffffff000ull);
}

static void nid_mainline_cpu_that_maps(void **state)
{
	struct fix *f = two_units(NULL, NULL);
	struct ilab_intel_domain_caps caps;
	struct map_arg m = { .dom = f->dom, .iova = 0x10000000000ull };
	int cpu = plat_node_cpu(1, 0);

	(void)state;
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nid, -1); /* NUMA_NO_NODE after the first attach */
	assert_int_equal(plat_run_threads(1, &cpu, map_thread, &m), 0);
	assert_int_equal(m.rc, 0);
	assert_int_equal(pt_node(f, m.iova), 1); /* where the mapping CPU is */
	/* the second unit's attach: the fallback takes the node of the device on the list (A) */
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->b), 0);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nid, 0);
	assert_int_equal(f->dom->node, 0);
	fix_free(f);
}

struct alloc_arg {
	struct ilab_iommu *iommu;
	struct ilab_iommu_domain *dom;
};

static void alloc_thread(unsigned idx, void *arg)
{
	struct alloc_arg *a = arg;

	(void)idx;
	a->dom = ilab_iommu_domain_alloc(a->iommu, ILAB_DOMAIN_UNMANAGED, -1);
}

/* The pgd of a domain allocated with no node (Linux: domain->nid = NUMA_NO_NODE, so
 * alloc_pgtable_page(NUMA_NO_NODE) -> alloc_pages_node(numa_mem_id())) is on the node of the
 * CPU that allocates the domain, whatever the unit's: seed 004's shared pgd sits where QEMU's
 * thread ran, its lower tables where the nid rule later says. */
static void nid_none_pgd_on_allocating_cpus_node(void **state)
{
	struct fix *f = two_units(NULL, NULL);
	struct ilab_intel_domain_caps caps;

	(void)state;
	for (unsigned node = 0; node < 2; node++) {
		struct alloc_arg a = { .iommu = f->u0->iommu }; /* unit 0 is on node 0 */
		int cpu = plat_node_cpu(node, 1);

		assert_int_equal(plat_run_threads(1, &cpu, alloc_thread, &a), 0);
		assert_non_null(a.dom);
		assert_int_equal(ilab_intel_domain_get_caps(a.dom, &caps), 0);
		assert_int_equal(caps.nid, -1);
		assert_int_equal(ilab_mem_node_of(f->r->mem, caps.pgd), (int)node);
		ilab_iommu_domain_free(a.dom);
	}
	fix_free(f);
}

static void nid_seed004_last_unit_wins(void **state)
{
	struct ilab_intel_iommu_opts o = { .nid_policy = ILAB_INTEL_NID_UNIT_ON_ATTACH };
	struct fix *f = two_units(NULL, &o);
	struct ilab_intel_domain_caps caps;
	struct map_arg m = { .dom = f->dom, .iova = 0x10000000000ull };
	int cpu = plat_node_cpu(0, 0);

	(void)state;
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nid, 0); /* unit 0's node */
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->b), 0);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nid, 1); /* the last unit attached wins */
	/* a CPU of node 0 maps: the new table goes to node 1 anyway */
	assert_int_equal(plat_run_threads(1, &cpu, map_thread, &m), 0);
	assert_int_equal(m.rc, 0);
	assert_int_equal(pt_node(f, m.iova), 1);
	/* unit 1's last device leaves: domain_detach_iommu resets nid to NUMA_NO_NODE and its
	 * domain_update_iommu_cap falls back to the remaining device's node (A, node 0) */
	ilab_iommu_detach_device(f->dom, f->b);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nid, 0);
	/* the last device leaves: no device to fall back on */
	ilab_iommu_detach_device(f->dom, f->a);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nid, -1);
	assert_int_equal(caps.nr_units, 0);
	fix_free(f);
}

static void pgtable_pages_on_domain_node(void **state)
{
	struct ilab_intel_iommu_opts o = { .nid_policy = ILAB_INTEL_NID_HINT };
	struct fix *f = calloc(1, sizeof(*f));
	struct ilab_intel_domain_caps caps;
	struct ilab_intel_iommu_info info;
	uint64_t iova = 0x7000000000ull, *t;
	unsigned level;

	(void)state;
	assert_int_equal(rig_new(&f->r), 0);
	f->u0 = rig_add_unit(f->r, 0, NULL, &o);
	assert_non_null(f->u0);
	f->a = rig_dev(f->r, 0, f->u0, SID_A, 0);
	assert_int_equal(ilab_iommu_probe_device(f->a, ILAB_DOMAIN_DMA), 0);
	f->dom = ilab_iommu_domain_alloc(f->u0->iommu, ILAB_DOMAIN_UNMANAGED, 1);
	assert_non_null(f->dom);
	assert_int_equal(ilab_iommu_attach_device(f->dom, f->a), 0);
	assert_int_equal(ilab_iommu_domain_map(f->dom, iova, 0x4b000000, SZ_4K, RW), 0);
	assert_int_equal(ilab_intel_domain_get_caps(f->dom, &caps), 0);
	assert_int_equal(caps.nid, 1);
	/* every table on the walk is on node 1, the unit's root table on node 0 */
	assert_int_equal(ilab_mem_node_of(f->r->mem, caps.pgd), 1);
	t = ilab_mem_va(f->r->mem, caps.pgd, 4096);
	for (level = 4; level > 1; level--) {
		uint64_t pte = t[(iova >> (12 + 9 * (level - 1))) & 0x1ff];

		assert_true(pte & 3);
		assert_int_equal(ilab_mem_node_of(f->r->mem, pte & 0x000ffffffffff000ull), 1);
		t = ilab_mem_va(f->r->mem, pte & 0x000ffffffffff000ull, 4096);
	}
	assert_int_equal(ilab_intel_iommu_get_info(f->u0->iommu, &info), 0);
	assert_int_equal(ilab_mem_node_of(f->r->mem, info.root_pa), 0);
	fix_free(f);
}

/* ---- faults ------------------------------------------------------------------------------------ */

static void fault_handler_reads_and_clears(void **state)
{
	struct ilab_intel_iommu_opts o = { .fault_msi_data = 0x41 };
	struct fix *f = one_unit(NULL, &o);
	struct ilab_intel_fault rec[4];
	struct vtd_txn_rsp rsp;
	bool ovf = true;

	(void)state;
	rsp = rig_tr(f->u0, SID_A, 0x9000123, true); /* nothing mapped there */
	assert_int_equal(rsp.status, VTD_TXN_FAULT);
	assert_true(rsp.fault_recorded);
	assert_int_equal(f->u0->fault_msis, 1);
	assert_int_equal(f->u0->fault_msi_addr, 0xfee00000u);
	assert_int_equal(f->u0->fault_msi_data, 0x41);
	assert_true(vtd_mmio_read(f->u0->v, IR_FSTS, 4) & IR_FSTS_PPF);
	assert_int_equal(ilab_intel_iommu_handle_fault(f->u0->iommu, rec, 4, &ovf), 1);
	assert_false(ovf);
	assert_int_equal(rec[0].sid, SID_A);
	assert_int_equal(rec[0].reason, VTD_FR_WRITE);
	assert_false(rec[0].read);
	assert_int_equal(rec[0].addr, 0x9000000);
	assert_int_equal(vtd_mmio_read(f->u0->v, IR_FSTS, 4) & IR_FSTS_PPF, 0);
	/* the next fault is recorded and signalled again */
	rig_tr(f->u0, SID_A, 0x9001000, false);
	assert_int_equal(f->u0->fault_msis, 2);
	assert_int_equal(ilab_intel_iommu_handle_fault(f->u0->iommu, rec, 4, NULL), 1);
	assert_true(rec[0].read);
	fix_free(f);
}

/* ---- the DMA API, strict and lazy ------------------------------------------------------------ */

static void dma_api(enum ilab_domain_type type)
{
	struct rig *r;
	struct ir_unit *u;
	struct ilab_dev *d;
	ilab_dma_addr_t a;
	unsigned from;

	assert_int_equal(rig_new(&r), 0);
	u = rig_add_unit(r, 0, NULL, NULL);
	assert_non_null(u);
	d = rig_dev(r, 0, u, SID_A, 0);
	assert_int_equal(ilab_iommu_probe_device(d, type), 0);
	assert_int_equal(ilab_iommu_get_dma_domain(d)->type, type);
	a = ilab_dma_map_page(d, 0x4c000000, 0x10, 256, ILAB_DMA_BIDIRECTIONAL);
	assert_false(ilab_dma_mapping_error(a));
	check_tr(u, SID_A, a, 0x4c000010, 12, VTD_PERM_R | VTD_PERM_W);
	from = u->nlog;
	ilab_dma_unmap_page(d, a, 256, ILAB_DMA_BIDIRECTIONAL);
	if (type == ILAB_DOMAIN_DMA) {
		assert_int_equal(rig_count(u, from, 2, 3), 1); /* strict: a PSI now */
		assert_int_equal(rig_tr(u, SID_A, a, false).status, VTD_TXN_FAULT);
	} else {
		assert_int_equal(rig_count(u, from, 2, -1), 0); /* lazy: nothing yet */
		check_tr(u, SID_A, a, 0x4c000010, 12, VTD_PERM_R | VTD_PERM_W); /* stale */
		ilab_dma_flush_queue_drain(d);
		assert_int_equal(rig_count(u, from, 2, 2), 1); /* the flush queue's DSI */
		assert_int_equal(rig_tr(u, SID_A, a, false).status, VTD_TXN_FAULT);
	}
	rig_fini(r);
}

static void dma_api_strict(void **state)
{
	(void)state;
	dma_api(ILAB_DOMAIN_DMA);
}

static void dma_api_lazy(void **state)
{
	(void)state;
	dma_api(ILAB_DOMAIN_DMA_FQ);
}

static void identity_domain_passthrough(void **state)
{
	struct rig *r;
	struct ir_unit *u;
	struct ilab_dev *d;
	struct vtd_txn_rsp rsp;

	(void)state;
	assert_int_equal(rig_new(&r), 0);
	u = rig_add_unit(r, 0, NULL, NULL);
	assert_non_null(u);
	d = rig_dev(r, 0, u, SID_A, 0);
	assert_int_equal(ilab_iommu_probe_device(d, ILAB_DOMAIN_IDENTITY), 0);
	rsp = rig_tr(u, SID_A, 0x4d000123, true);
	assert_int_equal(rsp.status, VTD_TXN_OK);
	assert_true(rsp.passthrough);
	assert_int_equal(rsp.pa, 0x4d000123);
	rig_fini(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(probe_handshakes, rig_teardown),
		cmocka_unit_test_teardown(probe_refuses_unit_without_qi, rig_teardown),
		cmocka_unit_test_teardown(probe_clears_pending_faults, rig_teardown),
		cmocka_unit_test(teardown_after_failed_probe),
		cmocka_unit_test_teardown(map_4k_2m_1g_translate, rig_teardown),
		cmocka_unit_test_teardown(unmap_faults_only_after_flush, rig_teardown),
		cmocka_unit_test_teardown(psi_am_aligned_range, rig_teardown),
		cmocka_unit_test_teardown(psi_unaligned_range_widens_am, rig_teardown),
		cmocka_unit_test_teardown(dsi_above_mamv, rig_teardown),
		cmocka_unit_test_teardown(dsi_small_mamv, rig_teardown),
		cmocka_unit_test_teardown(table_freed_after_flush, rig_teardown),
		cmocka_unit_test_teardown(drop_ih_option, rig_teardown),
		cmocka_unit_test_teardown(domain_spans_two_units, rig_teardown),
		cmocka_unit_test_teardown(update_iommu_cap_intersection, rig_teardown),
		cmocka_unit_test_teardown(attach_refuses_unit_without_used_superpage, rig_teardown),
		cmocka_unit_test_teardown(iqe_recovery, rig_teardown),
		cmocka_unit_test_teardown(ats_devtlb_flush, rig_teardown),
		cmocka_unit_test_teardown(nid_mainline_cpu_that_maps, rig_teardown),
		cmocka_unit_test_teardown(nid_none_pgd_on_allocating_cpus_node, rig_teardown),
		cmocka_unit_test_teardown(nid_seed004_last_unit_wins, rig_teardown),
		cmocka_unit_test_teardown(pgtable_pages_on_domain_node, rig_teardown),
		cmocka_unit_test_teardown(fault_handler_reads_and_clears, rig_teardown),
		cmocka_unit_test_teardown(dma_api_strict, rig_teardown),
		cmocka_unit_test_teardown(dma_api_lazy, rig_teardown),
		cmocka_unit_test_teardown(identity_domain_passthrough, rig_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
