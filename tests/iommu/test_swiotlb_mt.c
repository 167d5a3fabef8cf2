/* test_swiotlb_mt.c — the swiotlb under real threads: eight host threads, all starting their
 * search in the same area, bounce their own buffers at once (each holding a few mappings of
 * mixed sizes and directions); the device sees each thread's own bytes at each bounce address,
 * each FROM_DEVICE unmap brings back exactly what the device wrote there, and the pool ends
 * empty with every map matched by an unmap.
 * Runs under TSan in CI (the area locks, the slot bookkeeping, the unlocked statistics).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>

#include <cmocka.h>

#include "iommu/dma_test_util.h"

#define ITERS 5000
#define HELD 4
#define MAX_THREADS 16

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

struct run {
	struct ilab_dev *dev;
	ilab_pa_t buf[MAX_THREADS]; /* 16 KiB each, above 4 GiB */
	plat_word32 errors;
};

struct held {
	ilab_dma_addr_t a;
	size_t size;
	enum ilab_dma_dir dir;
	uint64_t mark;          /* what the device wrote at the start of the bounce copy */
};

static void fail_one(struct run *r)
{
	plat_fetch_add32(&r->errors, 1);
}

/* Unmap h; for a FROM_DEVICE / BIDIRECTIONAL mapping the buffer now starts with its mark. */
static void release(struct run *r, ilab_pa_t pa, const struct held *h)
{
	ilab_dma_unmap_single(r->dev, h->a, h->size, h->dir);
	if (h->dir != ILAB_DMA_TO_DEVICE && *(uint64_t *)ilab_mem_va(T.mem, pa, 8) != h->mark)
		fail_one(r);
}

static void worker(unsigned idx, void *arg)
{
	struct run *r = arg;
	ilab_pa_t pa = r->buf[idx];
	struct held h[HELD] = { 0 };
	uint64_t want = *(uint64_t *)ilab_mem_va(T.mem, pa + 8, 8), got;

	for (unsigned i = 0; i < ITERS; i++) {
		struct held *s = &h[i % HELD];

		if (s->a)
			release(r, pa, s);
		s->size = 3000u * (1 + i % 5); /* 2 to 8 slots, page-aligned from 4 KiB */
		s->dir = (enum ilab_dma_dir)(i % 3);
		s->mark = ((uint64_t)idx << 32) | i;
		s->a = ilab_dma_map_single(r->dev, pa, s->size, s->dir);
		if (ilab_dma_mapping_error(s->a) || s->a + s->size > 0x100000000ull) {
			fail_one(r);
			s->a = 0;
			continue;
		}
		/* the copy in: this thread's bytes (nobody else's), then the device's write */
		if (fake_iommu_dma(T.fake, r->dev->sid, s->a + 8, &got, 8, false) || got != want)
			fail_one(r);
		if (fake_iommu_dma(T.fake, r->dev->sid, s->a, &s->mark, 8, true))
			fail_one(r);
	}
	for (unsigned k = 0; k < HELD; k++)
		if (h[k].a)
			release(r, pa, &h[k]);
}

/* Plain host threads, not CPUs of the machine (plat_cpu_id -1): all of them start their
 * search in area 0, so they contend for its lock, which threads on distinct CPUs (one area
 * each) would not. */
struct targ {
	unsigned idx;
	struct run *r;
};

static void *thread_main(void *p)
{
	struct targ *t = p;

	worker(t->idx, t->r);
	return NULL;
}

static void concurrent_bounces(void **state)
{
	struct ilab_swiotlb_stats s0, s1;
	struct ilab_dev d;
	struct run r = { .dev = &d };
	const unsigned n = 8;
	struct targ ta[8];
	pthread_t th[8];

	(void)state;
	tu_dev_init(&T, &d, "mt", 31, 1, 32);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_IDENTITY), 0);
	for (unsigned i = 0; i < n; i++) {
		r.buf[i] = tu_buffer(&T, 1, 2, 60 + i);
		assert_true(r.buf[i] >= 0x100000000ull);
	}
	assert_int_equal(ilab_dma_swiotlb_stats(&d, &s0), 0);
	for (unsigned i = 0; i < n; i++) {
		ta[i] = (struct targ){ .idx = i, .r = &r };
		assert_int_equal(pthread_create(&th[i], NULL, thread_main, &ta[i]), 0);
	}
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	assert_int_equal(plat_load32(&r.errors), 0);
	assert_int_equal(ilab_dma_swiotlb_stats(&d, &s1), 0);
	assert_int_equal(s1.maps - s0.maps, (uint64_t)n * ITERS);
	assert_int_equal(s1.unmaps - s0.unmaps, (uint64_t)n * ITERS);
	assert_int_equal(s1.used, 0);
	assert_int_equal(s1.full, s0.full);
	ilab_iommu_release_device(&d);
	for (unsigned i = 0; i < n; i++)
		ilab_mem_free_pages(T.mem, r.buf[i], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(concurrent_bounces),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
