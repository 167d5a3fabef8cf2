/* test_dma_board_mt.c — dma-iommu end to end on the real stack: the kunpeng920 board (SMMUv3
 * model in its polling agent), the SMMUv3 driver, the IOMMU core. A device reads and writes
 * exactly the mapped bytes; after a strict unmap its next access aborts with F_TRANSLATION; a
 * device of another group cannot reach the domain; a scatterlist is one contiguous IOVA range;
 * passthrough is the identity; in lazy mode the stale-translation window ends within the flush
 * timeout (measured and printed).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "iommulab/board.h"
#include "iommulab/dma_iommu.h"
#include "iommulab/plat.h"
#include "iommulab/topo.h"

static struct {
	struct ilab_topo *topo;
	struct ilab_board *board;
	struct ilab_mem *mem;
	struct ilab_dev *nic;
	unsigned smmu;
} B;

static int setup(void **state)
{
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_board_opts bo = { .cma = ILAB_CMA_PERNUMA };
	struct ilab_dev *devs;
	unsigned n;
	char err[256];

	(void)state;
	if (ilab_topo_load("kunpeng920", &B.topo, err, sizeof(err)))
		return -1;
	pc.topo = B.topo;
	if (plat_init(&pc))
		return -1;
	B.smmu = ilab_topo_find_device(B.topo, "nic0")->smmu;
	bo.smmu_mask = 1ull << B.smmu;
	if (ilab_board_create(B.topo, &bo, &B.board, err, sizeof(err))) {
		fprintf(stderr, "board: %s\n", err);
		return -1;
	}
	if (ilab_board_start(B.board) || ilab_board_probe_iommus(B.board, NULL))
		return -1;
	B.mem = ilab_board_mem(B.board);
	ilab_board_devices(B.board, &devs, &n);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(devs[i].name, "nic0"))
			B.nic = &devs[i];
	return B.nic && B.nic->iommu ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ilab_board_destroy(B.board);
	plat_fini();
	ilab_topo_free(B.topo);
	return 0;
}

static int dma(struct ilab_dev *d, uint64_t iova, void *buf, size_t len, bool write,
	       struct ilab_board_fault *f)
{
	return write ? ilab_board_dma_write(B.board, B.smmu, d->sid, 0, false, iova, buf, len, f)
		     : ilab_board_dma_read(B.board, B.smmu, d->sid, 0, false, iova, buf, len, f);
}

static ilab_pa_t buffer(int node, unsigned order, unsigned seed)
{
	ilab_pa_t pa;
	uint8_t *va;
	size_t len = (size_t)ILAB_PAGE_SIZE << order;

	assert_int_equal(ilab_mem_alloc_pages(B.mem, node, order, &pa), 0);
	va = ilab_mem_va(B.mem, pa, len);
	for (size_t i = 0; i < len; i++)
		va[i] = (uint8_t)(seed + i * 13 + (i >> 12));
	return pa;
}

static void nic_probe(enum ilab_domain_type type)
{
	assert_int_equal(ilab_iommu_probe_device(B.nic, type), 0);
}

static void device_sees_exactly_the_mapped_bytes(void **state)
{
	ilab_pa_t pa = buffer(2, 1, 1);
	uint8_t *va = ilab_mem_va(B.mem, pa, 8192);
	uint8_t got[6000], put[512];
	struct ilab_board_fault f;
	ilab_dma_addr_t a;
	uint64_t lo, hi;

	(void)state;
	nic_probe(ILAB_DOMAIN_DMA);
	a = ilab_dma_map_single(B.nic, pa + 0x40, 6000, ILAB_DMA_BIDIRECTIONAL);
	assert_false(ilab_dma_mapping_error(a));
	assert_int_equal(a & 0xfff, 0x40);
	assert_int_equal(dma(B.nic, a, got, sizeof(got), false, &f), 0);
	assert_memory_equal(got, va + 0x40, sizeof(got));
	for (unsigned i = 0; i < sizeof(put); i++)
		put[i] = (uint8_t)(i * 3 + 1);
	assert_int_equal(dma(B.nic, a + 5000, put, sizeof(put), true, &f), 0);
	assert_memory_equal(va + 0x40 + 5000, put, sizeof(put));
	/* Nothing beyond: the SMMU maps whole 4 KiB pages, so the mapping is the two pages
	 * [lo, hi) under the 6000 bytes, and nothing else is mapped next to them. The page below and
	 * the page above abort with F_TRANSLATION at the address asked for... */
	lo = a & ~0xfffull;
	hi = lo + 8192;
	memset(&f, 0, sizeof(f));
	assert_int_equal(dma(B.nic, lo - 8, got, 8, false, &f), -EIO);
	assert_int_equal(f.event, SMMU_EVT_F_TRANSLATION);
	assert_int_equal(f.iova, lo - 8);
	memset(&f, 0, sizeof(f));
	assert_int_equal(dma(B.nic, hi, put, 8, true, &f), -EIO);
	assert_int_equal(f.event, SMMU_EVT_F_TRANSLATION);
	assert_int_equal(f.iova, hi);
	/* ...and a read across the end translates up to the last mapped byte and faults on the
	 * first unmapped one */
	memset(&f, 0, sizeof(f));
	assert_int_equal(dma(B.nic, hi - 16, got, 32, false, &f), -EIO);
	assert_int_equal(f.event, SMMU_EVT_F_TRANSLATION);
	assert_int_equal(f.iova, hi);
	assert_memory_equal(got, va + 8192 - 16, 16);
	ilab_dma_unmap_single(B.nic, a, 6000, ILAB_DMA_BIDIRECTIONAL);
	ilab_iommu_release_device(B.nic);
	ilab_mem_free_pages(B.mem, pa, 1);
}

static void strict_unmap_faults_with_f_translation(void **state)
{
	ilab_pa_t pa = buffer(2, 0, 2);
	struct ilab_board_fault f;
	uint8_t b[64];
	ilab_dma_addr_t a;

	(void)state;
	nic_probe(ILAB_DOMAIN_DMA);
	a = ilab_dma_map_single(B.nic, pa, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(dma(B.nic, a, b, sizeof(b), false, &f), 0); /* the TLB now holds it */
	ilab_dma_unmap_single(B.nic, a, 4096, ILAB_DMA_BIDIRECTIONAL);
	memset(&f, 0, sizeof(f));
	assert_int_equal(dma(B.nic, a, b, sizeof(b), false, &f), -EIO);
	assert_int_equal(f.event, SMMU_EVT_F_TRANSLATION);
	assert_int_equal(f.iova, a);
	ilab_iommu_release_device(B.nic);
	ilab_mem_free_pages(B.mem, pa, 0);
}

static void another_group_cannot_reach_the_domain(void **state)
{
	ilab_pa_t pa = buffer(2, 0, 3);
	struct ilab_dev other = *B.nic;
	struct ilab_board_fault f;
	uint8_t b[64];
	ilab_dma_addr_t a, oa;

	(void)state;
	snprintf(other.name, sizeof(other.name), "nic0-vf");
	other.sid = B.nic->sid + 1;
	other.group = NULL;
	other.iommu_priv = other.dma_priv = NULL;
	nic_probe(ILAB_DOMAIN_DMA);
	assert_int_equal(ilab_iommu_probe_device(&other, ILAB_DOMAIN_DMA), 0);
	assert_ptr_not_equal(other.group, B.nic->group);
	a = ilab_dma_map_single(B.nic, pa, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(dma(B.nic, a, b, sizeof(b), false, &f), 0);
	/* same IOVA, other stream: its own (empty) domain translates nothing there */
	assert_int_equal(dma(&other, a, b, sizeof(b), false, &f), -EIO);
	assert_int_equal(f.event, SMMU_EVT_F_TRANSLATION);
	memset(b, 0xee, sizeof(b));
	assert_int_equal(dma(&other, a, b, sizeof(b), true, &f), -EIO);
	assert_int_not_equal(*(uint8_t *)ilab_mem_va(B.mem, pa, 1), 0xee);
	/* and its own mapping of the same page lives at its own IOVA, in its own domain */
	oa = ilab_dma_map_single(&other, pa, 4096, ILAB_DMA_TO_DEVICE);
	assert_false(ilab_dma_mapping_error(oa));
	assert_int_equal(dma(&other, oa, b, sizeof(b), false, &f), 0);
	ilab_dma_unmap_single(&other, oa, 4096, ILAB_DMA_TO_DEVICE);
	ilab_dma_unmap_single(B.nic, a, 4096, ILAB_DMA_BIDIRECTIONAL);
	ilab_iommu_release_device(&other);
	ilab_iommu_release_device(B.nic);
	ilab_mem_free_pages(B.mem, pa, 0);
}

static void sg_list_is_contiguous_for_the_device(void **state)
{
	ilab_pa_t p0 = buffer(2, 0, 4), p1 = buffer(2, 0, 5), p2 = buffer(2, 0, 6);
	struct ilab_scatterlist sg[3] = {
		{ .pa = p0, .length = 4096 }, { .pa = p1, .length = 4096 }, { .pa = p2, .length = 4096 },
	};
	uint8_t *got = malloc(3 * 4096);
	struct ilab_board_fault f;
	int n;

	(void)state;
	nic_probe(ILAB_DOMAIN_DMA);
	n = ilab_dma_map_sg(B.nic, sg, 3, ILAB_DMA_TO_DEVICE);
	assert_int_equal(n, 1); /* three whole pages: one DMA segment of 12 KiB */
	assert_int_equal(sg[0].dma_length, 3 * 4096);
	assert_int_equal(dma(B.nic, sg[0].dma_address, got, 3 * 4096, false, &f), 0);
	assert_memory_equal(got, ilab_mem_va(B.mem, p0, 4096), 4096);
	assert_memory_equal(got + 4096, ilab_mem_va(B.mem, p1, 4096), 4096);
	assert_memory_equal(got + 8192, ilab_mem_va(B.mem, p2, 4096), 4096);
	ilab_dma_unmap_sg(B.nic, sg, 3, ILAB_DMA_TO_DEVICE);
	assert_int_equal(dma(B.nic, sg[0].dma_address + 8192, got, 8, false, &f), -EIO);
	ilab_iommu_release_device(B.nic);
	ilab_mem_free_pages(B.mem, p0, 0);
	ilab_mem_free_pages(B.mem, p1, 0);
	ilab_mem_free_pages(B.mem, p2, 0);
	free(got);
}

static void passthrough_dma_is_physical(void **state)
{
	ilab_pa_t pa = buffer(2, 0, 7);
	struct ilab_board_fault f;
	uint8_t b[32];

	(void)state;
	nic_probe(ILAB_DOMAIN_IDENTITY);
	B.nic->dma_bits = 64;
	assert_int_equal(ilab_dma_map_single(B.nic, pa + 8, 32, ILAB_DMA_TO_DEVICE), pa + 8);
	assert_int_equal(dma(B.nic, pa + 8, b, sizeof(b), false, &f), 0);
	assert_memory_equal(b, ilab_mem_va(B.mem, pa + 8, 32), 32);
	B.nic->dma_bits = 48;
	ilab_iommu_release_device(B.nic);
	ilab_mem_free_pages(B.mem, pa, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lazy_stale_window_is_bounded(void **state)
{
	const uint64_t timeout = ILAB_DMA_FQ_TIMEOUT_NS, margin = 200ull * 1000 * 1000;
	ilab_pa_t pa = buffer(2, 0, 8);
	struct ilab_board_fault f;
	uint64_t t_unmap, t_fault = 0, stale = 0;
	uint8_t b[8];
	ilab_dma_addr_t a;

	(void)state;
	nic_probe(ILAB_DOMAIN_DMA_FQ);
	a = ilab_dma_map_single(B.nic, pa, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(dma(B.nic, a, b, sizeof(b), false, &f), 0);
	ilab_dma_unmap_single(B.nic, a, 4096, ILAB_DMA_BIDIRECTIONAL);
	t_unmap = now_ns();
	while (now_ns() - t_unmap < timeout + margin) {
		if (dma(B.nic, a, b, sizeof(b), false, &f)) {
			t_fault = now_ns();
			break;
		}
		stale++;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 }, NULL);
	}
	assert_int_not_equal(t_fault, 0);
	assert_int_equal(f.event, SMMU_EVT_F_TRANSLATION);
	print_message("SMMUv3 lazy stale-translation window: %.2f ms (timeout %.0f ms, %llu stale "
		      "reads succeeded)\n", (t_fault - t_unmap) / 1e6, timeout / 1e6,
		      (unsigned long long)stale);
	assert_true(t_fault - t_unmap >= timeout - 1000000);
	ilab_iommu_release_device(B.nic);
	ilab_mem_free_pages(B.mem, pa, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(device_sees_exactly_the_mapped_bytes),
		cmocka_unit_test(strict_unmap_faults_with_f_translation),
		cmocka_unit_test(another_group_cannot_reach_the_domain),
		cmocka_unit_test(sg_list_is_contiguous_for_the_device),
		cmocka_unit_test(passthrough_dma_is_physical),
		cmocka_unit_test(lazy_stale_window_is_bounded),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
