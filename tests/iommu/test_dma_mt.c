/* test_dma_mt.c — dma-iommu under real threads: every host CPU maps and unmaps at once (strict
 * with direct and refcounted lookup, lazy with the flush-queue timer, per-CPU or single) and
 * each mapping
 * translates to its own thread's buffer; in lazy mode the stale-translation window after an
 * unmap is measured and must end within the flush timeout (plus scheduling margin).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "iommu/dma_test_util.h"

#define ITERS 1500
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
	ilab_pa_t buf[MAX_THREADS];
	plat_word32 errors;
};

static void worker(unsigned idx, void *arg)
{
	struct run *r = arg;
	struct ilab_iommu_domain *dom = ilab_iommu_get_dma_domain(r->dev);
	ilab_pa_t pa = r->buf[idx];
	uint64_t want, got;

	want = *(uint64_t *)ilab_mem_va(T.mem, pa + 64 * idx, 8);
	for (unsigned i = 0; i < ITERS; i++) {
		size_t size = 4096u << (i % 3); /* 4, 8, 16 KiB: three size classes */
		ilab_dma_addr_t a = ilab_dma_map_single(r->dev, pa, size, ILAB_DMA_BIDIRECTIONAL);

		if (ilab_dma_mapping_error(a) ||
		    ilab_iommu_iova_to_phys(dom, a + size - 1) != pa + size - 1) {
			plat_fetch_add32(&r->errors, 1);
			continue;
		}
		if (i % 16 == 0 &&
		    (fake_iommu_dma(T.fake, r->dev->sid, a + 64 * idx, &got, 8, false) ||
		     got != want))
			plat_fetch_add32(&r->errors, 1);
		ilab_dma_unmap_single(r->dev, a, size, ILAB_DMA_BIDIRECTIONAL);
	}
}

static void run_all_cpus_fq(enum ilab_domain_type type, enum ilab_dma_lookup lookup,
			    enum ilab_dma_fq_kind fq_kind, enum ilab_iova_depot_mode depot)
{
	struct ilab_dev d;
	struct ilab_dma_options o;
	struct ilab_dma_stats st;
	struct run r = { .dev = &d };
	unsigned n = plat_cpu_count(), refs;

	if (n > MAX_THREADS)
		n = MAX_THREADS;
	tu_dev_init(&T, &d, "mt", 30, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&d, type), 0);
	ilab_dma_options_default(&o);
	o.lookup = lookup;
	o.check_iova_free = true;
	/* the single ring small enough to fill many times: full flushes under its shared lock */
	if (fq_kind == ILAB_DMA_FQ_SINGLE) {
		o.fq_kind = fq_kind;
		o.fq_size = 64;
		o.fq_timer = false; /* the unmaps check the deadline: the ring's count, shared */
	}
	o.iova_depot = depot;
	assert_int_equal(ilab_dma_configure(&d, &o), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_not_equal(r.buf[i] = tu_buffer(&T, 0, 2, 40 + i), 0);
	refs = ilab_iommu_group_refcount(d.group);
	assert_int_equal(plat_run_threads(n, NULL, worker, &r), 0);
	assert_int_equal(plat_load32(&r.errors), 0);
	assert_int_equal(ilab_iommu_group_refcount(d.group), refs);
	ilab_dma_flush_queue_drain(&d);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_int_equal(st.maps, (uint64_t)n * ITERS);
	assert_int_equal(st.unmaps, (uint64_t)n * ITERS);
	assert_int_equal(st.map_errors + st.unmap_errors, 0);
	if (type == ILAB_DOMAIN_DMA_FQ) {
		assert_int_equal(st.fq_queued, (uint64_t)n * ITERS);
		/* a 64-entry ring holds 63: at least one flush per 63 unmaps, whatever the timer did */
		if (fq_kind == ILAB_DMA_FQ_SINGLE)
			assert_true(st.fq_flushes >= (uint64_t)n * ITERS / 63);
		assert_int_equal(st.fq_freed, st.fq_queued);
		assert_int_equal(st.iotlb_syncs, 0);
	} else {
		assert_int_equal(st.iotlb_syncs, (uint64_t)n * ITERS);
	}
	if (lookup == ILAB_DMA_LOOKUP_REFCOUNT)
		assert_int_equal(st.refcount_lookups, 2ull * n * ITERS);
	ilab_iommu_release_device(&d);
	for (unsigned i = 0; i < n; i++)
		ilab_mem_free_pages(T.mem, r.buf[i], 2);
}

static void run_all_cpus(enum ilab_domain_type type, enum ilab_dma_lookup lookup)
{
	run_all_cpus_fq(type, lookup, ILAB_DMA_FQ_PERCPU, ILAB_IOVA_DEPOT_LIST);
}

static void concurrent_strict_direct(void **state)
{
	(void)state;
	run_all_cpus(ILAB_DOMAIN_DMA, ILAB_DMA_LOOKUP_DIRECT);
}

static void concurrent_strict_refcount(void **state)
{
	(void)state;
	run_all_cpus(ILAB_DOMAIN_DMA, ILAB_DMA_LOOKUP_REFCOUNT);
}

static void concurrent_lazy(void **state)
{
	(void)state;
	run_all_cpus(ILAB_DOMAIN_DMA_FQ, ILAB_DMA_LOOKUP_DIRECT);
}

/* every CPU queues on the one ring: its lock, the full flushes, the fixed depot */
static void concurrent_lazy_single_fq(void **state)
{
	(void)state;
	run_all_cpus_fq(ILAB_DOMAIN_DMA_FQ, ILAB_DMA_LOOKUP_DIRECT, ILAB_DMA_FQ_SINGLE,
			ILAB_IOVA_DEPOT_FIXED32);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* map, DMA, unmap, then keep accessing: the stale TLB entry may keep translating, but only
 * until the flush-queue timer fires, timeout after the unmap armed it. */
static void lazy_stale_window_is_bounded_by_the_timeout(void **state)
{
	const uint64_t timeout = ILAB_DMA_FQ_TIMEOUT_NS;
	const uint64_t margin = 200ull * 1000 * 1000; /* a loaded 2-core CI host */
	struct ilab_dev d;
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 50);
	struct ilab_dma_stats st;
	uint64_t t_unmap, t_fault = 0, stale_hits = 0;
	uint8_t b[8];
	ilab_dma_addr_t a;

	(void)state;
	tu_dev_init(&T, &d, "lazy", 31, 0, 48);
	assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA_FQ), 0);
	a = ilab_dma_map_single(&d, pa, 4096, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(fake_iommu_dma(T.fake, d.sid, a, b, sizeof(b), false), 0);
	ilab_dma_unmap_single(&d, a, 4096, ILAB_DMA_BIDIRECTIONAL);
	t_unmap = now_ns();
	while (now_ns() - t_unmap < timeout + margin) {
		if (fake_iommu_dma(T.fake, d.sid, a, b, sizeof(b), false)) {
			t_fault = now_ns();
			break;
		}
		stale_hits++;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 }, NULL);
	}
	assert_int_not_equal(t_fault, 0); /* it did end */
	print_message("lazy stale-translation window: %.2f ms (timeout %.0f ms, %llu stale "
		      "accesses succeeded)\n", (t_fault - t_unmap) / 1e6, timeout / 1e6,
		      (unsigned long long)stale_hits);
	/* the queue was idle, so this unmap armed the timer: no flush before the timeout */
	assert_true(t_fault - t_unmap >= timeout - 1000000);
	assert_true(stale_hits > 0);
	assert_int_equal(ilab_dma_stats(&d, &st), 0);
	assert_true(st.fq_timeouts >= 1);
	assert_int_equal(st.fq_freed, 1);
	ilab_iommu_release_device(&d);
	ilab_mem_free_pages(T.mem, pa, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(concurrent_strict_direct),
		cmocka_unit_test(concurrent_strict_refcount),
		cmocka_unit_test(concurrent_lazy),
		cmocka_unit_test(concurrent_lazy_single_fq),
		cmocka_unit_test(lazy_stale_window_is_bounded_by_the_timeout),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
