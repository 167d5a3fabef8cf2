/* test_dma.c — dma-iommu on the fake driver: a device reads and writes exactly the mapped bytes;
 * a strict unmap makes the next access fault; a device of another group never reaches the
 * domain; a scatterlist becomes one contiguous IOVA range; passthrough is the identity (or a
 * bounce beyond the mask);
 * coherent memory lives on the device's node; the PCI 32-bit-first policy; the old per-page
 * map path; a lazy unmap keeps the IOVA out of circulation until the flush; the single flush
 * queue is one ring for every CPU, per-CPU queues one ring each.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "iommu/dma_test_util.h"
#include "support/skip.h"

static struct tu T;

static int setup(void **state)
{
	(void)state;
	return tu_setup(&T, false) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_teardown(&T);
	return 0;
}

static void probe(struct ilab_dev *d, const char *name, uint32_t sid, enum ilab_domain_type type)
{
	tu_dev_init(&T, d, name, sid, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(d, type), 0);
}

static void device_reads_and_writes_mapped_bytes(void **state)
{
	struct ilab_dev d;
	ilab_pa_t pa = tu_buffer(&T, 1, 1, 3); /* 8 KiB on node 1 */
	uint8_t *va = ilab_mem_va(T.mem, pa, 8192);
	uint8_t got[5000], put[300];
	ilab_dma_addr_t a;

	(void)state;
	probe(&d, "nic", 10, ILAB_DOMAIN_DMA);
	/* a buffer that starts mid-page and crosses a page boundary */
	a = ilab_dma_map_single(&d, pa + 0x123, 5000, ILAB_DMA_BIDIRECTIONAL);
	assert_false(ilab_dma_mapping_error(a));
	assert_int_equal(a & 0xfff, 0x123); /* the offset within the granule is kept */
	assert_int_not_equal(a, pa + 0x123); /* translated, not the identity */
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, a, got, sizeof(got), false), 0);
	assert_memory_equal(got, va + 0x123, sizeof(got));
	for (unsigned i = 0; i < sizeof(put); i++)
		put[i] = (uint8_t)(0xa5 ^ i);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, a + 4000, put, sizeof(put), true), 0);
	assert_memory_equal(va + 0x123 + 4000, put, sizeof(put));
	/* past the mapped pages: fault */
	assert_int_not_equal(fake_iommu_dma(T.fake, d.sid, a - 0x123 + 8192, got, 8, false), 0);
	ilab_dma_unmap_single(&d, a, 5000, ILAB_DMA_BIDIRECTIONAL);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 1);
}

static void strict_unmap_then_access_faults(void **state)
{
	struct ilab_dev d;
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 4);
	uint8_t b[64];
	struct fake_iommu_stats fs;
	struct ilab_dma_stats st;
	ilab_dma_addr_t a;
	uint64_t faults;

	(void)state;
	probe(&d, "nic", 11, ILAB_DOMAIN_DMA);
	a = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_FROM_DEVICE);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, a, b, sizeof(b), true), 0); /* TLB filled */
	ilab_dma_unmap_single(&d, a, 4096, ILAB_DMA_FROM_DEVICE);
	faults = tu_faults(&T);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, a, b, sizeof(b), true), -EFAULT);
	fake_iommu_stats(T.fake, &fs);
	assert_int_equal(fs.faults, faults + 1);
	assert_int_equal(fs.last_fault_iova, a);
	assert_int_equal(fs.last_fault_sid, d.sid);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.iotlb_syncs, 1);
	assert_int_equal(st.fq_queued, 0);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 0);
}

static void other_group_never_reaches_the_domain(void **state)
{
	struct ilab_dev a, b;
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 5);
	uint8_t buf[32];
	ilab_dma_addr_t ia;

	(void)state;
	probe(&a, "a", 12, ILAB_DOMAIN_DMA);
	probe(&b, "b", 13, ILAB_DOMAIN_DMA);
	ia = ilab_dma_map_single(&a, pa, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(fake_iommu_dma(T.fake, a.sid, ia, buf, sizeof(buf), false), 0);
	/* b's domain has nothing at that IOVA: read and write both fault, memory untouched */
	assert_int_equal(fake_iommu_dma(T.fake, b.sid, ia, buf, sizeof(buf), false), -EFAULT);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(fake_iommu_dma(T.fake, b.sid, ia, buf, sizeof(buf), true), -EFAULT);
	assert_int_not_equal(*(uint8_t *)ilab_mem_va(T.mem, pa, 1), 0xee);
	/* and the physical address itself is not a way in either */
	assert_int_equal(fake_iommu_dma(T.fake, b.sid, pa, buf, sizeof(buf), false), -EFAULT);
	ilab_dma_unmap_single(&a, ia, 4096, ILAB_DMA_BIDIRECTIONAL);
	ilab_iommu_release_device(&a);
	ilab_iommu_release_device(&b);
	ilab_mem_free_pages(T.mem, pa, 0);
}

static void sg_is_one_contiguous_range(void **state)
{
	struct ilab_dev d;
	ilab_pa_t p0 = tu_buffer(&T, 0, 2, 6), p1 = tu_buffer(&T, 0, 0, 7), p2 = tu_buffer(&T, 0, 1, 8);
	struct ilab_scatterlist sg[4] = {
		{ .pa = p0, .length = 3 * 4096 },            /* whole pages: merge with next */
		{ .pa = p0 + 3 * 4096, .length = 4096 },     /* physically contiguous with sg[0] */
		{ .pa = p1 + 0x200, .length = 0x300 },       /* offset and short: new segment */
		{ .pa = p2, .length = 8192 },                /* previous ended mid-granule */
	};
	uint8_t *want = malloc(4 * 4096), *got = malloc(4 * 4096);
	int n;

	(void)state;
	probe(&d, "nvme", 14, ILAB_DOMAIN_DMA);
	n = ilab_dma_map_sg(&d, sg, 4, ILAB_DMA_TO_DEVICE);
	/* sg[0]+sg[1] merge (16 KiB <= 64 KiB); sg[2] starts at an offset; sg[3] cannot follow
	 * a segment that ended mid-granule. */
	assert_int_equal(n, 3);
	assert_int_equal(sg[0].dma_length, 4 * 4096);
	assert_int_equal(sg[1].dma_address, sg[0].dma_address + 4 * 4096 + 0x200);
	assert_int_equal(sg[1].dma_length, 0x300);
	assert_int_equal(sg[2].dma_address, sg[0].dma_address + 5 * 4096);
	assert_int_equal(sg[2].dma_length, 8192);
	assert_int_equal(sg[3].dma_length, 0);
	/* the device reads each DMA segment and sees the CPU-side bytes */
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, sg[0].dma_address, got, 4 * 4096, false), 0);
	assert_memory_equal(got, ilab_mem_va(T.mem, p0, 4 * 4096), 4 * 4096);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, sg[1].dma_address, got, 0x300, false), 0);
	assert_memory_equal(got, ilab_mem_va(T.mem, p1 + 0x200, 0x300), 0x300);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, sg[2].dma_address, got, 8192, false), 0);
	memcpy(want, ilab_mem_va(T.mem, p2, 8192), 8192);
	assert_memory_equal(got, want, 8192);
	ilab_dma_unmap_sg(&d, sg, 4, ILAB_DMA_TO_DEVICE);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, sg[0].dma_address, got, 8, false), -EFAULT);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, sg[2].dma_address + 4096, got, 8, false),
			 -EFAULT);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, p0, 2);
	ilab_mem_free_pages(T.mem, p1, 0);
	ilab_mem_free_pages(T.mem, p2, 1);
	free(want);
	free(got);
}

static void sg_merge_respects_max_seg_size(void **state)
{
	struct ilab_dev d;
	ilab_pa_t p = tu_buffer(&T, 0, 5, 9); /* 128 KiB */
	struct ilab_scatterlist sg[32];
	int n;

	(void)state;
	probe(&d, "nvme", 15, ILAB_DOMAIN_DMA);
	for (unsigned i = 0; i < 32; i++)
		sg[i] = (struct ilab_scatterlist){ .pa = p + i * 4096ull, .length = 4096 };
	n = ilab_dma_map_sg(&d, sg, 32, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(n, 2); /* 128 KiB in 64 KiB (Linux default max_seg_size) segments */
	assert_int_equal(sg[0].dma_length, 65536);
	assert_int_equal(sg[1].dma_address, sg[0].dma_address + 65536);
	assert_int_equal(sg[1].dma_length, 65536);
	ilab_dma_unmap_sg(&d, sg, 32, ILAB_DMA_BIDIRECTIONAL);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, p, 5);
}

static void passthrough_is_identity(void **state)
{
	struct ilab_dev d;
	ilab_pa_t pa = tu_buffer(&T, 2, 0, 10);
	struct ilab_scatterlist sg[1] = { { .pa = pa + 16, .length = 100 } };
	uint8_t b[100];
	struct ilab_dma_stats st;
	struct fake_iommu_stats before, after;

	(void)state;
	probe(&d, "gpu", 16, ILAB_DOMAIN_IDENTITY);
	fake_iommu_stats(T.fake, &before);
	assert_int_equal(ilab_dma_map_single(&d, pa + 5, 100, ILAB_DMA_TO_DEVICE), pa + 5);
	assert_int_equal(ilab_dma_map_sg(&d, sg, 1, ILAB_DMA_TO_DEVICE), 1);
	assert_int_equal(sg[0].dma_address, pa + 16);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, pa + 5, b, 100, false), 0);
	assert_memory_equal(b, ilab_mem_va(T.mem, pa + 5, 100), 100);
	ilab_dma_unmap_single(&d, pa + 5, 100, ILAB_DMA_TO_DEVICE);
	fake_iommu_stats(T.fake, &after);
	assert_int_equal(after.tlbi_range, before.tlbi_range); /* no IOMMU calls */
	assert_int_equal(after.tlbi_all, before.tlbi_all);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.maps, 0);
	/* a 32-bit device cannot reach memory above 4 GiB: dma-direct bounces it through the
	 * swiotlb, below 4 GiB (tests/iommu/test_swiotlb.c has the details) */
	d.dma_bits = 32;
	assert_true(pa > 0xffffffffull);
	{
		ilab_dma_addr_t a = ilab_dma_map_single(&d, pa, 64, ILAB_DMA_TO_DEVICE);

		assert_false(ilab_dma_mapping_error(a));
		assert_true(a + 63 <= 0xffffffffull);
		ilab_dma_unmap_single(&d, a, 64, ILAB_DMA_TO_DEVICE);
	}
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 0);
}

static void coherent_memory_is_on_the_device_node(void **state)
{
	struct ilab_dev d;
	struct ilab_mem_alloc_info info;
	ilab_pa_t pa, base;
	ilab_dma_addr_t dma;
	uint64_t bytes;
	uint8_t b[64], zero[64] = { 0 };

	(void)state;
	tu_dev_init(&T, &d, "nic2", 17, 2, 48);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
	assert_int_equal(ilab_dma_alloc_coherent(&d, 64 * 1024, &pa, &dma, &info), 0);
	assert_int_equal(info.home_node, 2);
	assert_int_equal(info.source, ILAB_MEM_SRC_NODE_CMA); /* pernuma CMA: the node's area */
	assert_int_equal(ilab_mem_node_range(T.mem, 2, &base, &bytes), 0);
	assert_true(pa >= base && pa + 64 * 1024 <= base + bytes);
	assert_int_equal(ilab_mem_node_of(T.mem, pa), 2);
	/* zeroed and reachable by the device at dma, read and write */
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, dma + 60 * 1024, b, 64, false), 0);
	assert_memory_equal(b, zero, 64);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, dma, "hello", 5, true), 0);
	assert_memory_equal(ilab_mem_va(T.mem, pa, 5), "hello", 5);
	ilab_dma_free_coherent(&d, 64 * 1024, pa, dma);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, dma, b, 8, false), -EFAULT);
	ilab_iommu_release_device(&d);
}

static void pci_devices_get_32bit_iovas_first(void **state)
{
	struct ilab_dev d;
	struct ilab_dma_options o;
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 11);
	ilab_dma_addr_t a;

	(void)state;
	probe(&d, "pci", 18, ILAB_DOMAIN_DMA);
	/* not PCI: top-down from the 48-bit mask */
	a = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_TO_DEVICE);
	assert_true(a > 0xffffffffull && a < (1ull << 48));
	ilab_dma_unmap_single(&d, a, 4096, ILAB_DMA_TO_DEVICE);
	ilab_iommu_release_device(&d);

	tu_dev_init(&T, &d, "pci", 18, 0, 48);
	d.pci = true;
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
	a = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_TO_DEVICE);
	assert_true(a <= 0xffffffffull); /* SAC first */
	assert_true(a < ILAB_MSI_IOVA_BASE || a >= ILAB_MSI_IOVA_BASE + ILAB_MSI_IOVA_LENGTH);
	ilab_dma_unmap_single(&d, a, 4096, ILAB_DMA_TO_DEVICE);
	ilab_dma_options_default(&o);
	o.forcedac = true; /* iommu.forcedac=1 */
	assert_int_equal(ilab_dma_configure(&d, &o), 0);
	/* (another size class: the per-CPU cache would rightly hand back the freed 32-bit
	 * IOVA, which is below any limit) */
	a = ilab_dma_map_single(&d, pa, 8192, ILAB_DMA_TO_DEVICE);
	assert_true(a > 0xffffffffull);
	ilab_dma_unmap_single(&d, a, 8192, ILAB_DMA_TO_DEVICE);
	/* a 32-bit mask is a 32-bit mask whatever the policy */
	d.dma_bits = 32;
	a = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_TO_DEVICE);
	assert_true(a <= 0xffffffffull);
	ilab_dma_unmap_single(&d, a, 4096, ILAB_DMA_TO_DEVICE);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 0);
}

/* Counting wrappers around a DMA domain's page-table ops: they forward to the driver's ops and
 * tell which path the core took (one map() per page, or map_pages() per run). */
static struct {
	struct ilab_iommu_pt_ops orig;
	unsigned map, map_pages, unmap, unmap_pages;
} PT;

static int pt_count_map(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize, int prot)
{
	PT.map++;
	return PT.orig.map(priv, iova, paddr, pgsize, prot);
}

static int pt_count_map_pages(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize,
			      size_t pgcount, int prot, size_t *mapped)
{
	PT.map_pages++;
	return PT.orig.map_pages(priv, iova, paddr, pgsize, pgcount, prot, mapped);
}

static size_t pt_count_unmap(void *priv, uint64_t iova, size_t pgsize,
			     struct ilab_iotlb_gather *gather)
{
	PT.unmap++;
	return PT.orig.unmap(priv, iova, pgsize, gather);
}

static size_t pt_count_unmap_pages(void *priv, uint64_t iova, size_t pgsize, size_t pgcount,
				   struct ilab_iotlb_gather *gather)
{
	PT.unmap_pages++;
	return PT.orig.unmap_pages(priv, iova, pgsize, pgcount, gather);
}

/* Configure the path, map 64 KiB at pa, check what the device and the table see, unmap. */
static void map_64k_pass(struct ilab_dev *d, struct ilab_iommu_domain *dom, ilab_pa_t pa,
			 uint8_t *got, bool use_map_pages)
{
	struct ilab_dma_options o;
	ilab_dma_addr_t a;

	ilab_dma_options_default(&o);
	o.use_map_pages = use_map_pages;
	assert_int_equal(ilab_dma_configure(d, &o), 0);
	PT.map = PT.map_pages = PT.unmap = PT.unmap_pages = 0;
	a = ilab_dma_map_single(d, pa, 65536, ILAB_DMA_TO_DEVICE);
	assert_false(ilab_dma_mapping_error(a));
	/* every 4 KiB page translates to its own page of the buffer, whichever path wrote it */
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(ilab_iommu_iova_to_phys(dom, a + i * 4096ull), pa + i * 4096ull);
	assert_int_equal(fake_iommu_dma(T.fake, d->sid, a, got, 65536, false), 0);
	assert_memory_equal(got, ilab_mem_va(T.mem, pa, 65536), 65536);
	ilab_dma_unmap_single(d, a, 65536, ILAB_DMA_TO_DEVICE);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(ilab_iommu_iova_to_phys(dom, a + i * 4096ull), 0);
	assert_int_equal(fake_iommu_dma(T.fake, d->sid, a + 32768, got, 8, false), -EFAULT);
}

static void per_page_map_path_gives_the_same_result(void **state)
{
	struct ilab_dev d;
	struct ilab_iommu_domain *dom;
	ilab_pa_t pa = tu_buffer(&T, 0, 4, 12); /* 64 KiB */
	uint8_t *got = malloc(65536);

	(void)state;
	probe(&d, "old", 19, ILAB_DOMAIN_DMA);
	dom = ilab_iommu_get_dma_domain(&d);
	assert_non_null(dom);
	PT.orig = dom->pt;
	dom->pt.map = pt_count_map;
	dom->pt.map_pages = pt_count_map_pages;
	dom->pt.unmap = pt_count_unmap;
	dom->pt.unmap_pages = pt_count_unmap_pages;
	/* the old path: one map() and one unmap() per 4 KiB page, never the batched ops */
	map_64k_pass(&d, dom, pa, got, false);
	assert_int_equal(PT.map, 16);
	assert_int_equal(PT.unmap, 16);
	assert_int_equal(PT.map_pages, 0);
	assert_int_equal(PT.unmap_pages, 0);
	/* the same buffer through map_pages: one call each for the whole 16-page run (it sits
	 * in one last-level table), never the per-page ops; the checks above give the same
	 * translations and bytes */
	map_64k_pass(&d, dom, pa, got, true);
	assert_int_equal(PT.map, 0);
	assert_int_equal(PT.unmap, 0);
	assert_int_equal(PT.map_pages, 1);
	assert_int_equal(PT.unmap_pages, 1);
	dom->pt = PT.orig;
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 4);
	free(got);
}

static void lazy_unmap_defers_the_free(void **state)
{
	struct ilab_dev d;
	struct ilab_dma_options o;
	struct ilab_dma_stats st;
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 13);
	uint8_t b[16];
	ilab_dma_addr_t a, first;

	(void)state;
	probe(&d, "lazy", 20, ILAB_DOMAIN_DMA_FQ);
	ilab_dma_options_default(&o);
	o.fq_timer = false; /* only full queues and the explicit drain flush here */
	o.fq_size = 8;
	assert_int_equal(ilab_dma_configure(&d, &o), 0);
	first = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, first, b, sizeof(b), false), 0);
	ilab_dma_unmap_single(&d, first, 4096, ILAB_DMA_BIDIRECTIONAL);
	/* no invalidation yet: the stale TLB entry still translates (the lazy trade-off) */
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, first, b, sizeof(b), false), 0);
	/* and the IOVA is not reused while it may be stale */
	a = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_not_equal(a, first);
	ilab_dma_unmap_single(&d, a, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.fq_queued, 2);
	assert_int_equal(st.fq_flushes, 0);
	assert_int_equal(st.iotlb_syncs, 0);
	/* 8-entry rings hold 7: the 8th unmap on this CPU flushes synchronously */
	for (unsigned i = 0; i < 6; i++)
		ilab_dma_unmap_single(&d, ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_BIDIRECTIONAL),
				      4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.fq_full_flushes, 1);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, first, b, sizeof(b), false), -EFAULT);
	ilab_dma_flush_queue_drain(&d);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.fq_freed, 8);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 0);
}

struct on_cpu {
	struct ilab_dev *dev;
	ilab_pa_t pa;
	unsigned n;
};

static void map_unmap_n(unsigned idx, void *arg)
{
	struct on_cpu *w = arg;

	(void)idx;
	for (unsigned i = 0; i < w->n; i++)
		ilab_dma_unmap_single(w->dev, ilab_dma_map_single(w->dev, w->pa, 4096,
								  ILAB_DMA_BIDIRECTIONAL),
				      4096, ILAB_DMA_BIDIRECTIONAL);
}

/* n map+unmap pairs as CPU cpu (one plat thread, so the flush queue sees that CPU). */
static void unmaps_on(struct ilab_dev *d, ilab_pa_t pa, int cpu, unsigned n)
{
	struct on_cpu w = { .dev = d, .pa = pa, .n = n };

	assert_int_equal(plat_run_threads(1, &cpu, map_unmap_n, &w), 0);
}

/* An 8-entry ring holds 7 entries. Per-CPU: 7 unmaps on CPU 0 and 7 on CPU 1 fill two rings
 * and flush nothing. Single: the same 7 fill the one ring, and CPU 1's first unmap finds it
 * full and flushes, freeing all 7 of CPU 0's entries. */
static void fq_kind_run(enum ilab_dma_fq_kind kind, uint64_t *flushes, uint64_t *freed)
{
	struct ilab_dev d;
	struct ilab_dma_options o;
	struct ilab_dma_stats st;
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 15);

	probe(&d, kind == ILAB_DMA_FQ_SINGLE ? "single" : "percpu", 23, ILAB_DOMAIN_DMA_FQ);
	ilab_dma_options_default(&o);
	o.fq_timer = false;
	o.fq_kind = kind;
	o.fq_size = 8;
	assert_int_equal(ilab_dma_configure(&d, &o), 0);
	unmaps_on(&d, pa, 0, 7);
	unmaps_on(&d, pa, 1, 7);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.fq_queued, 14);
	*flushes = st.fq_full_flushes;
	*freed = st.fq_freed;
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 0);
}

static void single_fq_is_one_ring_for_all_cpus(void **state)
{
	struct ilab_dma_options o;
	uint64_t flushes, freed;

	(void)state;
	if (plat_cpu_count() < 2)
		ILAB_SKIP("one CPU: per-CPU and single flush queues are the same ring");
	fq_kind_run(ILAB_DMA_FQ_PERCPU, &flushes, &freed);
	assert_int_equal(flushes, 0);
	assert_int_equal(freed, 0);
	fq_kind_run(ILAB_DMA_FQ_SINGLE, &flushes, &freed);
	assert_int_equal(flushes, 1);
	assert_int_equal(freed, 7);
	/* Linux's constants for each kind (dma-iommu.c IOVA_{DEFAULT,SINGLE}_FQ_{SIZE,TIMEOUT}) */
	ilab_dma_options_default(&o);
	assert_int_equal(o.fq_kind, ILAB_DMA_FQ_PERCPU);
	assert_int_equal(o.iova_depot, ILAB_IOVA_DEPOT_LIST);
	ilab_dma_options_set_fq_kind(&o, ILAB_DMA_FQ_SINGLE);
	assert_int_equal(o.fq_size, 32768);
	assert_int_equal(o.fq_timeout_ns, 1000000000ull);
	ilab_dma_options_set_fq_kind(&o, ILAB_DMA_FQ_PERCPU);
	assert_int_equal(o.fq_size, 256);
	assert_int_equal(o.fq_timeout_ns, 10000000ull);
}

static void bad_fq_and_depot_options_are_refused(void **state)
{
	struct ilab_dev d;
	struct ilab_dma_options o;

	(void)state;
	probe(&d, "badfq", 24, ILAB_DOMAIN_DMA_FQ);
	ilab_dma_options_default(&o);
	o.fq_kind = (enum ilab_dma_fq_kind)2;
	assert_int_equal(ilab_dma_configure(&d, &o), -EINVAL);
	ilab_dma_options_default(&o);
	o.iova_depot = (enum ilab_iova_depot_mode)2;
	assert_int_equal(ilab_dma_configure(&d, &o), -EINVAL);
	ilab_dma_options_set_fq_kind(&o, ILAB_DMA_FQ_SINGLE);
	o.iova_depot = ILAB_IOVA_DEPOT_FIXED32;
	o.fq_size = 3 * 1024;
	assert_int_equal(ilab_dma_configure(&d, &o), -EINVAL);
	o.fq_size = 4096;
	assert_int_equal(ilab_dma_configure(&d, &o), 0);
	ilab_iommu_release_device(&d);
}

static void bad_calls_do_not_crash(void **state)
{
	struct ilab_dev d, unprobed;
	struct ilab_dma_stats st;
	struct ilab_scatterlist sg[1] = { { .pa = 0x1000, .length = 0 } };
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 14), cpa;
	ilab_dma_addr_t a, cdma;

	(void)state;
	probe(&d, "bad", 21, ILAB_DOMAIN_DMA);
	tu_dev_init(&T, &unprobed, "unprobed", 22, 0, 48);
	assert_true(ilab_dma_mapping_error(ilab_dma_map_single(&unprobed, pa, 4096, 0)));
	assert_true(ilab_dma_mapping_error(ilab_dma_map_single(&d, pa, 0, 0)));
	assert_true(ilab_dma_mapping_error(ilab_dma_map_single(&d, pa, 4096,
								(enum ilab_dma_dir)9)));
	assert_true(ilab_dma_mapping_error(ilab_dma_map_single(NULL, pa, 4096, 0)));
	assert_int_equal(ilab_dma_map_sg(&d, sg, 1, 0), -EINVAL);
	assert_int_equal(ilab_dma_map_sg(&d, NULL, 1, 0), -EINVAL);
	assert_int_equal(ilab_dma_alloc_coherent(&unprobed, 4096, &cpa, &cdma, NULL), -ENODEV);
	ilab_dma_unmap_single(&d, 0xdead000, 4096, 0); /* never mapped */
	a = ilab_dma_map_single(&d, pa, 4096, 0);
	ilab_dma_unmap_single(&d, a, 4096, 0);
	ilab_dma_unmap_single(&d, a, 4096, 0); /* double unmap */
	ilab_dma_unmap_single(&unprobed, a, 4096, 0);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.unmap_errors, 2);
	assert_int_equal(st.unmaps, 1);
	/* the allocator is still sound: a new map works and is reachable */
	a = ilab_dma_map_single(&d, pa, 4096, 0);
	assert_false(ilab_dma_mapping_error(a));
	ilab_dma_unmap_single(&d, a, 4096, 0);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 0);
}

/* A reserved region is kept out of the IOVA space to its last byte, also when that byte is
 * the only one of its granule: the region [0xFFFFDFFF, 0xFFFFF001) takes pages 0xFFFFD to
 * 0xFFFFF (its last byte, 0xFFFFF000, alone in the top page), the top of a 32-bit device's
 * space, where its first allocations go (top-down): none of four one-page maps may touch it. */
#define EDGE_START 0xFFFFDFFFull
#define EDGE_END 0xFFFFF001ull
static unsigned edge_resv_regions(struct ilab_iommu *iommu, struct ilab_dev *dev,
				  struct ilab_iommu_resv_region *regs, unsigned max)
{
	(void)iommu;
	(void)dev;
	if (!max)
		return 0;
	regs[0] = (struct ilab_iommu_resv_region){ .start = EDGE_START,
						   .length = EDGE_END - EDGE_START,
						   .type = ILAB_RESV_RESERVED };
	return 1;
}

static void reserved_region_ends_at_its_last_byte(void **state)
{
	const struct ilab_iommu_ops *fake_ops = T.iommu->ops;
	struct ilab_iommu_ops edge_ops = *fake_ops;
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 5);
	struct ilab_dev d;
	ilab_dma_addr_t a[4];

	(void)state;
	edge_ops.get_resv_regions = edge_resv_regions;
	T.iommu->ops = &edge_ops;
	tu_dev_init(&T, &d, "edge", 12, 0, 32);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
	for (unsigned i = 0; i < 4; i++) {
		a[i] = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_TO_DEVICE);
		assert_false(ilab_dma_mapping_error(a[i]));
		assert_true(a[i] + 4096 <= EDGE_START || a[i] >= EDGE_END);
	}
	for (unsigned i = 0; i < 4; i++)
		ilab_dma_unmap_single(&d, a[i], 4096, ILAB_DMA_TO_DEVICE);
	ilab_iommu_release_device(&d);
	T.iommu->ops = fake_ops;
	ilab_mem_free_pages(T.mem, pa, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(device_reads_and_writes_mapped_bytes),
		cmocka_unit_test(strict_unmap_then_access_faults),
		cmocka_unit_test(other_group_never_reaches_the_domain),
		cmocka_unit_test(sg_is_one_contiguous_range),
		cmocka_unit_test(sg_merge_respects_max_seg_size),
		cmocka_unit_test(passthrough_is_identity),
		cmocka_unit_test(coherent_memory_is_on_the_device_node),
		cmocka_unit_test(pci_devices_get_32bit_iovas_first),
		cmocka_unit_test(per_page_map_path_gives_the_same_result),
		cmocka_unit_test(lazy_unmap_defers_the_free),
		cmocka_unit_test(single_fq_is_one_ring_for_all_cpus),
		cmocka_unit_test(bad_fq_and_depot_options_are_refused),
		cmocka_unit_test(bad_calls_do_not_crash),
		cmocka_unit_test(reserved_region_ends_at_its_last_byte),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
