/* test_swiotlb.c — dma-direct's bounce buffers (Linux kernel/dma/swiotlb.c) for passthrough
 * devices whose DMA mask does not reach their buffers: the pool sits below 4 GiB; a map copies
 * the buffer in (every direction), the device sees the copy, an unmap copies back for
 * FROM_DEVICE and BIDIRECTIONAL only; slots are 2 KiB, runs of at most 128 (256 KiB), page
 * aligned from 4 KiB; a full pool refuses and recovers; scatterlists bounce per entry; devices
 * share the machine's pool; a mask below the pool is refused; nothing leaks.
 * Expected values come from Linux's swiotlb rules (IO_TLB_SHIFT 11, IO_TLB_SEGSIZE 128, 64 MiB
 * default) and the memory layout (docs/memory.md), not from the code's own output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommu/dma_test_util.h"

#define FOUR_G 0x100000000ull
#define SLOT 2048u
#define POOL_BYTES (64ull << 20)
#define MAX_BOUNCE (128u * SLOT)

static struct tu T;
static struct ilab_dev D; /* a passthrough device with a 32-bit mask */

static int setup(void **state)
{
	(void)state;
	if (tu_setup(&T, false))
		return -1;
	tu_dev_init(&T, &D, "nic", 20, 1, 32);
	return ilab_iommu_probe_device(&D, ILAB_DOMAIN_IDENTITY) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	ilab_iommu_release_device(&D);
	tu_teardown(&T);
	return 0;
}

static struct ilab_swiotlb_stats stats(void)
{
	struct ilab_swiotlb_stats st;

	assert_int_equal(ilab_dma_swiotlb_stats(&D, &st), 0);
	return st;
}

/* A buffer above 4 GiB (node 1 starts at 4 GiB with 2 GiB nodes) holding a pattern. */
static ilab_pa_t high_buffer(unsigned order, unsigned seed)
{
	ilab_pa_t pa = tu_buffer(&T, 1, order, seed);

	assert_true(pa >= FOUR_G);
	return pa;
}

static uint8_t *va(ilab_pa_t pa, size_t len)
{
	uint8_t *p = ilab_mem_va(T.mem, pa, len);

	assert_non_null(p);
	return p;
}

/* The pool: 64 MiB of 2 KiB slots at the top of the hole below node 0 ([0, 2 GiB) here). */
static void test_pool_below_4g(void **state)
{
	struct ilab_swiotlb_stats st = stats();

	(void)state;
	assert_int_equal(st.slots, POOL_BYTES / SLOT);
	assert_int_equal(st.base, (2ull << 30) - POOL_BYTES);
	assert_int_equal(ilab_mem_node_of(T.mem, st.base), 0);
	assert_int_equal(st.used, 0);
	assert_true(st.areas >= 1 && (st.areas & (st.areas - 1)) == 0);
	assert_true(st.slots / st.areas >= 128); /* no area smaller than a segment */
}

/* TO_DEVICE: the device reads the copy below 4 GiB; what it writes there is not copied back. */
static void test_to_device_copies_in_only(void **state)
{
	ilab_pa_t pa = high_buffer(0, 1);
	struct ilab_swiotlb_stats s0 = stats(), s1;
	uint8_t want[3000], got[3000], junk[64];
	ilab_dma_addr_t a;

	(void)state;
	memcpy(want, va(pa + 100, sizeof(want)), sizeof(want));
	a = ilab_dma_map_single(&D, pa + 100, sizeof(want), ILAB_DMA_TO_DEVICE);
	assert_false(ilab_dma_mapping_error(a));
	assert_true(a + sizeof(want) - 1 < FOUR_G);
	assert_true(a >= s0.base && a < s0.base + POOL_BYTES);
	assert_int_equal(fake_iommu_dma(T.fake, D.sid, a, got, sizeof(got), false), 0);
	assert_memory_equal(got, want, sizeof(got));
	s1 = stats();
	assert_int_equal(s1.maps - s0.maps, 1);
	assert_int_equal(s1.used - s0.used, 2); /* 3000 bytes: two 2 KiB slots */
	assert_int_equal(s1.bytes_in - s0.bytes_in, sizeof(want));
	memset(junk, 0xee, sizeof(junk));
	assert_int_equal(fake_iommu_dma(T.fake, D.sid, a, junk, sizeof(junk), true), 0);
	ilab_dma_unmap_single(&D, a, sizeof(want), ILAB_DMA_TO_DEVICE);
	assert_memory_equal(va(pa + 100, sizeof(want)), want, sizeof(want)); /* untouched */
	s1 = stats();
	assert_int_equal(s1.used, s0.used);
	assert_int_equal(s1.unmaps - s0.unmaps, 1);
	assert_int_equal(s1.bytes_out, s0.bytes_out);
	ilab_mem_free_pages(T.mem, pa, 0);
}

/* FROM_DEVICE: the device's bytes reach the buffer at unmap; bytes it did not write keep their
 * old value (the pool was filled from the buffer at map). BIDIRECTIONAL does both. */
static void from_device(enum ilab_dma_dir dir)
{
	ilab_pa_t pa = high_buffer(1, 2);
	struct ilab_swiotlb_stats s0 = stats(), s1;
	uint8_t old[8192], put[1000];
	ilab_dma_addr_t a, small;

	memcpy(old, va(pa, sizeof(old)), sizeof(old));
	/* one slot taken first, so that the next free slot is not page-aligned */
	small = ilab_dma_map_single(&D, pa, 100, ILAB_DMA_TO_DEVICE);
	assert_false(ilab_dma_mapping_error(small));
	a = ilab_dma_map_single(&D, pa, sizeof(old), dir);
	assert_false(ilab_dma_mapping_error(a));
	assert_int_equal(a & 0xfff, 0); /* a page or more: page-aligned slots */
	ilab_dma_unmap_single(&D, small, 100, ILAB_DMA_TO_DEVICE);
	s0.maps++; /* the small one */
	s0.bytes_in += 100;
	for (unsigned i = 0; i < sizeof(put); i++)
		put[i] = (uint8_t)(0x5a ^ i);
	assert_int_equal(fake_iommu_dma(T.fake, D.sid, a + 5000, put, sizeof(put), true), 0);
	assert_memory_equal(va(pa, sizeof(old)), old, sizeof(old)); /* not before the unmap */
	ilab_dma_unmap_single(&D, a, sizeof(old), dir);
	assert_memory_equal(va(pa + 5000, sizeof(put)), put, sizeof(put));
	assert_memory_equal(va(pa, 5000), old, 5000);
	assert_memory_equal(va(pa + 6000, sizeof(old) - 6000), old + 6000, sizeof(old) - 6000);
	s1 = stats();
	assert_int_equal(s1.bytes_out - s0.bytes_out, sizeof(old));
	assert_int_equal(s1.bytes_in - s0.bytes_in, sizeof(old)); /* copied in for FROM too */
	assert_int_equal(s1.used, s0.used);
	ilab_mem_free_pages(T.mem, pa, 1);
}

static void test_from_device_copies_back(void **state)
{
	(void)state;
	from_device(ILAB_DMA_FROM_DEVICE);
}

static void test_bidirectional_copies_back(void **state)
{
	(void)state;
	from_device(ILAB_DMA_BIDIRECTIONAL);
}

/* Up to one segment (256 KiB) per mapping; one byte more is refused with nothing taken. */
static void test_largest_bounce(void **state)
{
	ilab_pa_t pa = high_buffer(7, 3); /* 512 KiB */
	struct ilab_swiotlb_stats s0 = stats();
	ilab_dma_addr_t a;

	(void)state;
	a = ilab_dma_map_single(&D, pa, MAX_BOUNCE, ILAB_DMA_TO_DEVICE);
	assert_false(ilab_dma_mapping_error(a));
	assert_int_equal(stats().used - s0.used, 128);
	ilab_dma_unmap_single(&D, a, MAX_BOUNCE, ILAB_DMA_TO_DEVICE);
	assert_true(ilab_dma_mapping_error(ilab_dma_map_single(&D, pa, MAX_BOUNCE + 1,
								ILAB_DMA_TO_DEVICE)));
	assert_int_equal(stats().used, s0.used);
	assert_int_equal(stats().maps - s0.maps, 1);
	ilab_mem_free_pages(T.mem, pa, 7);
}

/* 256 maps of 256 KiB take the whole pool; the next is refused and counted; after every unmap
 * the pool is whole again (the free-run bookkeeping is restored exactly): fill it once more. */
static void test_full_pool_recovers(void **state)
{
	const unsigned n = POOL_BYTES / MAX_BOUNCE;
	ilab_pa_t pa = high_buffer(7, 4);
	ilab_dma_addr_t *a = calloc(n, sizeof(*a));
	struct ilab_swiotlb_stats s0 = stats();

	(void)state;
	assert_non_null(a);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < n; i++) {
			a[i] = ilab_dma_map_single(&D, pa, MAX_BOUNCE, ILAB_DMA_TO_DEVICE);
			assert_false(ilab_dma_mapping_error(a[i]));
		}
		assert_int_equal(stats().used, POOL_BYTES / SLOT);
		assert_true(ilab_dma_mapping_error(ilab_dma_map_single(&D, pa, 100,
									ILAB_DMA_TO_DEVICE)));
		assert_int_equal(stats().full - s0.full, round + 1);
		for (unsigned i = 0; i < n; i++)
			ilab_dma_unmap_single(&D, a[i], MAX_BOUNCE, ILAB_DMA_TO_DEVICE);
		assert_int_equal(stats().used, 0);
	}
	free(a);
	ilab_mem_free_pages(T.mem, pa, 7);
}

/* Small runs freed out of order leave no hole behind: three 2 KiB maps, the middle one freed,
 * then the others; afterwards 256 KiB maps fill the whole pool again. */
static void test_out_of_order_free(void **state)
{
	ilab_pa_t pa = high_buffer(0, 5);
	ilab_dma_addr_t a[3];

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		a[i] = ilab_dma_map_single(&D, pa + i * 100, 100, ILAB_DMA_BIDIRECTIONAL);
		assert_false(ilab_dma_mapping_error(a[i]));
	}
	assert_int_equal(stats().used, 3);
	ilab_dma_unmap_single(&D, a[1], 100, ILAB_DMA_BIDIRECTIONAL);
	ilab_dma_unmap_single(&D, a[0], 100, ILAB_DMA_BIDIRECTIONAL);
	ilab_dma_unmap_single(&D, a[2], 100, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(stats().used, 0);
	ilab_mem_free_pages(T.mem, pa, 0);
	test_full_pool_recovers(state); /* every segment whole again */
}

/* A mask that does not reach the pool either (24 bits: 16 MiB): refused, nothing held. */
static void test_mask_below_pool(void **state)
{
	ilab_pa_t pa = high_buffer(0, 6);
	struct ilab_swiotlb_stats s0 = stats();

	(void)state;
	D.dma_bits = 24;
	assert_true(ilab_dma_mapping_error(ilab_dma_map_single(&D, pa, 64, ILAB_DMA_TO_DEVICE)));
	assert_int_equal(stats().used, s0.used);
	D.dma_bits = 32;
	ilab_mem_free_pages(T.mem, pa, 0);
}

/* Within the mask nothing bounces: the address is the buffer's own. */
static void test_within_mask_is_identity(void **state)
{
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 7); /* node 0: [2 GiB, 4 GiB) */
	struct ilab_swiotlb_stats s0 = stats();

	(void)state;
	assert_true(pa < FOUR_G);
	assert_int_equal(ilab_dma_map_single(&D, pa, 4096, ILAB_DMA_TO_DEVICE), pa);
	ilab_dma_unmap_single(&D, pa, 4096, ILAB_DMA_TO_DEVICE);
	assert_int_equal(stats().maps, s0.maps);
	ilab_mem_free_pages(T.mem, pa, 0);
}

/* A scatterlist bounces entry by entry; unmap copies each back (FROM_DEVICE). */
static void test_sg_bounces_per_entry(void **state)
{
	ilab_pa_t lo = tu_buffer(&T, 0, 0, 8), hi = high_buffer(0, 9);
	struct ilab_scatterlist sg[2] = { { .pa = lo, .length = 512 }, { .pa = hi + 64,
									 .length = 700 } };
	struct ilab_swiotlb_stats s0 = stats();
	uint8_t put[700];

	(void)state;
	assert_int_equal(ilab_dma_map_sg(&D, sg, 2, ILAB_DMA_FROM_DEVICE), 2);
	assert_int_equal(sg[0].dma_address, lo);
	assert_true(sg[1].dma_address < FOUR_G);
	assert_int_equal(sg[1].dma_length, 700);
	assert_int_equal(stats().maps - s0.maps, 1);
	memset(put, 0x3c, sizeof(put));
	assert_int_equal(fake_iommu_dma(T.fake, D.sid, sg[1].dma_address, put, sizeof(put), true),
			 0);
	ilab_dma_unmap_sg(&D, sg, 2, ILAB_DMA_FROM_DEVICE);
	assert_memory_equal(va(hi + 64, sizeof(put)), put, sizeof(put));
	assert_int_equal(stats().used, s0.used);
	/* an entry that cannot bounce (beyond 256 KiB) fails the list and releases the others */
	sg[0] = (struct ilab_scatterlist){ .pa = hi, .length = 100 };
	sg[1] = (struct ilab_scatterlist){ .pa = hi, .length = MAX_BOUNCE + 1, .dma_length = 77 };
	assert_int_equal(ilab_dma_map_sg(&D, sg, 2, ILAB_DMA_TO_DEVICE), -EIO);
	assert_int_equal(stats().used, s0.used);
	/* what was mapped is released; the entry that failed is left as the caller gave it
	 * (Linux dma_direct_map_sg: dma_direct_unmap_sg of the i entries before it) */
	assert_int_equal(sg[0].dma_length, 0);
	assert_int_equal(sg[1].dma_length, 77);
	ilab_mem_free_pages(T.mem, lo, 0);
	ilab_mem_free_pages(T.mem, hi, 0);
}

/* The memory's low reservation: cut to what fits under node 0 (keeping [0, 2 MiB) a hole),
 * the same one on a second call, memory of node 0; none where not even 2 MiB fit. */
static void test_low_reservation_rules(void **state)
{
	struct ilab_mem_config mc = { .nr_nodes = 1, .node_bytes = 64ull << 20 };
	struct ilab_mem *m;
	struct ilab_mem_low *low;
	uint8_t b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, c[8];

	(void)state;
	assert_int_equal(ilab_mem_create(&mc, &m), 0); /* node 0 = [64 MiB, 128 MiB) */
	low = ilab_mem_low_reserve(m, POOL_BYTES);
	assert_non_null(low);
	assert_int_equal(low->base, 2ull << 20);
	assert_int_equal(low->bytes, 62ull << 20);
	assert_ptr_equal(ilab_mem_low_reserve(m, 4ull << 20), low);
	assert_int_equal(ilab_mem_node_of(m, low->base + 5), 0);
	assert_int_equal(ilab_mem_write(m, low->base + low->bytes - 8, b, 8), 0);
	assert_int_equal(ilab_mem_read(m, low->base + low->bytes - 8, c, 8), 0);
	assert_memory_equal(b, c, 8);
	assert_int_equal(ilab_mem_read(m, low->base - 8, c, 8), -EFAULT); /* still a hole */
	assert_int_equal(ilab_mem_node_of(m, low->base - 1), -1);
	ilab_mem_destroy(m);
	mc.node_bytes = 2ull << 20; /* node 0 at 2 MiB: no room */
	assert_int_equal(ilab_mem_create(&mc, &m), 0);
	assert_null(ilab_mem_low_reserve(m, POOL_BYTES));
	assert_non_null(strstr(ilab_mem_strerror(), "below 4 GiB"));
	ilab_mem_destroy(m);
}

/* A second passthrough device uses the same pool. */
static void test_devices_share_the_pool(void **state)
{
	struct ilab_dev e;
	struct ilab_swiotlb_stats a, b;
	ilab_pa_t pa = high_buffer(0, 10);
	ilab_dma_addr_t x;

	(void)state;
	tu_dev_init(&T, &e, "gpu", 21, 2, 32);
	assert_int_equal(ilab_iommu_probe_device(&e, ILAB_DOMAIN_IDENTITY), 0);
	x = ilab_dma_map_single(&e, pa, 64, ILAB_DMA_TO_DEVICE);
	assert_false(ilab_dma_mapping_error(x));
	assert_int_equal(ilab_dma_swiotlb_stats(&e, &a), 0);
	b = stats();
	assert_int_equal(a.base, b.base);
	assert_int_equal(a.used, 1);
	assert_int_equal(b.used, 1);
	ilab_dma_unmap_single(&e, x, 64, ILAB_DMA_TO_DEVICE);
	ilab_iommu_release_device(&e);
	ilab_mem_free_pages(T.mem, pa, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_below_4g),
		cmocka_unit_test(test_to_device_copies_in_only),
		cmocka_unit_test(test_from_device_copies_back),
		cmocka_unit_test(test_bidirectional_copies_back),
		cmocka_unit_test(test_largest_bounce),
		cmocka_unit_test(test_full_pool_recovers),
		cmocka_unit_test(test_out_of_order_free),
		cmocka_unit_test(test_mask_below_pool),
		cmocka_unit_test(test_within_mask_is_identity),
		cmocka_unit_test(test_sg_bounces_per_entry),
		cmocka_unit_test(test_devices_share_the_pool),
		cmocka_unit_test(test_low_reservation_rules),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
