/* test_intel_iommu_drv_mt.c — the Intel VT-d driver under real threads (label "threads": runs
 * under TSan in CI): CPUs of both nodes map, check through the model, unmap with strict
 * flushes and check again, in one shared UNMANAGED domain on a unit shared by all, so that
 * table installs race (cmpxchg), qi_submit_sync's q_lock and slot reclaim are contended, and
 * table pages are unlinked and freed while other CPUs walk neighbouring ranges. A second
 * round does the same through the DMA API (strict and lazy domains).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "drivers/intel_rig.h"
#include "iommulab/dma_iommu.h"

#define NTHREADS 4
#define ITERS 200
#define SID_A 0x0300
#define SZ_4K 0x1000ull
#define SZ_2M 0x200000ull

struct mt {
	struct rig *r;
	struct ir_unit *u;
	struct ilab_dev *dev[NTHREADS];
	struct ilab_iommu_domain *dom;
	_Atomic unsigned bad, unmaps;
};

static void domain_worker(unsigned idx, void *arg)
{
	struct mt *m = arg;
	/* each thread its own 1 GiB region; neighbours share the upper tables */
	uint64_t base = 0x100000000ull + (uint64_t)idx * 0x40000000ull;
	ilab_pa_t pa = 0x44000000ull + (uint64_t)idx * 0x1000000ull + SZ_4K;

	for (unsigned i = 0; i < ITERS; i++) {
		uint64_t iova = base + (uint64_t)(i % 64) * SZ_2M;
		uint64_t size = i % 4 == 0 ? SZ_2M : (uint64_t)(1 + i % 7) * SZ_4K;
		struct vtd_txn_rsp rsp;

		if (ilab_iommu_domain_map(m->dom, iova, pa, size, ILAB_IOMMU_READ | ILAB_IOMMU_WRITE)) {
			m->bad++;
			continue;
		}
		rsp = rig_tr(m->u, SID_A, iova + size - SZ_4K, true);
		if (rsp.status != VTD_TXN_OK || rsp.pa != pa + size - SZ_4K)
			m->bad++;
		if (ilab_iommu_domain_unmap(m->dom, iova, size) != size)
			m->bad++;
		m->unmaps++;
		rsp = rig_tr(m->u, SID_A, iova, false);
		if (rsp.status != VTD_TXN_FAULT)
			m->bad++;
	}
}

static void mt_map_unmap_shared_domain(void **state)
{
	struct mt *m = calloc(1, sizeof(*m));
	struct ilab_intel_iommu_stats st;
	struct vtd_stats vs;
	int cpus[NTHREADS];

	(void)state;
	assert_non_null(m);
	assert_int_equal(rig_new(&m->r), 0);
	m->u = rig_add_unit(m->r, 0, NULL, NULL);
	assert_non_null(m->u);
	m->dev[0] = rig_dev(m->r, 0, m->u, SID_A, 0);
	assert_int_equal(ilab_iommu_probe_device(m->dev[0], ILAB_DOMAIN_DMA), 0);
	ilab_intel_iommu_clear_stats(m->u->iommu);
	m->dom = ilab_iommu_domain_alloc(m->u->iommu, ILAB_DOMAIN_UNMANAGED, -1);
	assert_non_null(m->dom);
	assert_int_equal(ilab_iommu_attach_device(m->dom, m->dev[0]), 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		cpus[i] = plat_node_cpu(i % 2, i / 2);
	assert_int_equal(plat_run_threads(NTHREADS, cpus, domain_worker, m), 0);
	assert_int_equal(m->bad, 0);
	assert_int_equal(m->unmaps, NTHREADS * ITERS);
	ilab_intel_iommu_get_stats(m->u->iommu, &st);
	/* one strict flush per unmap (2M runs of 4K leaves are one unmap each: one PSI) */
	assert_int_equal(st.iotlb_psi + st.iotlb_dsi - 1, NTHREADS * ITERS); /* + attach's DSI */
	assert_int_equal(st.descs[5], st.qi_submits); /* one wait descriptor per submission */
	vtd_get_stats(m->u->v, &vs);
	assert_int_equal(vs.iq_errors, 0);
	ilab_iommu_detach_device(m->dom, m->dev[0]);
	ilab_iommu_domain_free(m->dom);
	ilab_intel_iommu_get_stats(m->u->iommu, &st);
	assert_int_equal(st.pgtable_alloc, st.pgtable_free); /* every table page came back */
	rig_fini(m->r);
	free(m);
}

static void dma_worker(unsigned idx, void *arg)
{
	struct mt *m = arg;
	struct ilab_dev *d = m->dev[idx];

	for (unsigned i = 0; i < ITERS; i++) {
		ilab_pa_t pa = 0x48000000ull + (uint64_t)(i % 32) * SZ_4K;
		ilab_dma_addr_t a = ilab_dma_map_page(d, pa, 0, 512, ILAB_DMA_BIDIRECTIONAL);
		struct vtd_txn_rsp rsp;

		if (ilab_dma_mapping_error(a)) {
			m->bad++;
			continue;
		}
		rsp = rig_tr(m->u, (uint16_t)d->sid, a, true);
		if (rsp.status != VTD_TXN_OK || rsp.pa != pa)
			m->bad++;
		ilab_dma_unmap_page(d, a, 512, ILAB_DMA_BIDIRECTIONAL);
	}
}

static void mt_dma_api_strict_and_lazy(void **state)
{
	struct mt *m = calloc(1, sizeof(*m));
	int cpus[NTHREADS];

	(void)state;
	assert_non_null(m);
	assert_int_equal(rig_new(&m->r), 0);
	m->u = rig_add_unit(m->r, 1, NULL, NULL);
	assert_non_null(m->u);
	for (unsigned i = 0; i < NTHREADS; i++) {
		m->dev[i] = rig_dev(m->r, i, m->u, (uint16_t)(0x0500 + (i << 3)), 1);
		assert_int_equal(ilab_iommu_probe_device(m->dev[i],
							 i % 2 ? ILAB_DOMAIN_DMA_FQ : ILAB_DOMAIN_DMA), 0);
		cpus[i] = plat_node_cpu(i % 2, i / 2);
	}
	assert_int_equal(plat_run_threads(NTHREADS, cpus, dma_worker, m), 0);
	assert_int_equal(m->bad, 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		ilab_dma_flush_queue_drain(m->dev[i]);
	rig_fini(m->r);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(mt_map_unmap_shared_domain, rig_teardown),
		cmocka_unit_test_teardown(mt_dma_api_strict_and_lazy, rig_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
