/* test_plat_percpu_mt.c — per-CPU data: one zeroed, cache-line aligned element per CPU of the
 * modelled machine, and real threads each touching only their own element without races.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "iommulab/plat.h"
#include "iommulab/topo.h"
#include "support/skip.h"

#define ITERS 200000

/* A plain (non-atomic) counter: if two threads shared an element, TSan would report it and the
 * totals would be off. The canaries sit at both ends of the element. */
struct pcpu_stat {
	uint64_t head_canary;
	uint64_t count;
	char pad[40];
	uint64_t tail_canary;
};

static int teardown(void **state)
{
	plat_fini();
	return 0;
}

static void check_layout(void *base, size_t elem, unsigned n)
{
	size_t stride = plat_percpu_stride(base);

	assert_non_null(base);
	assert_int_equal((uintptr_t)base % PLAT_CACHELINE, 0);
	assert_int_equal(stride % PLAT_CACHELINE, 0);
	assert_true(stride >= elem);
	assert_true(stride < elem + PLAT_CACHELINE); /* padded to the next line, no more */
	for (unsigned cpu = 0; cpu < n; cpu++) {
		const unsigned char *p = plat_percpu_ptr(base, cpu);

		assert_int_equal((uintptr_t)p % PLAT_CACHELINE, 0);
		for (size_t i = 0; i < stride; i++) /* zeroed, and (ASan) inside the allocation */
			assert_int_equal(p[i], 0);
	}
}

static void layout_for_several_sizes(void **state)
{
	static const size_t sizes[] = { 1, 8, 63, 64, 65, 200 };

	assert_int_equal(plat_init(NULL), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *base = plat_percpu_alloc(sizes[i]);

		check_layout(base, sizes[i], plat_cpu_count());
		plat_percpu_free(base);
	}
	plat_percpu_free(NULL);
	assert_int_equal(plat_percpu_stride(NULL), 0);
}

static void zero_and_huge_sizes(void **state)
{
	void *base = plat_percpu_alloc(0);

	check_layout(base, 1, plat_cpu_count());
	plat_percpu_free(base);
	assert_null(plat_percpu_alloc(SIZE_MAX));
	assert_null(plat_percpu_alloc(SIZE_MAX / 2));
}

static void uninitialised_uses_host_cpu_count(void **state)
{
	void *base = plat_percpu_alloc(sizeof(struct pcpu_stat));

	/* Outside plat threads, plat_this_cpu_ptr is CPU 0's element. */
	assert_ptr_equal(plat_this_cpu_ptr(base), base);
	check_layout(base, sizeof(struct pcpu_stat), plat_cpu_count());
	plat_percpu_free(base);
}

static void bump_own(unsigned idx, void *arg)
{
	struct pcpu_stat *mine = plat_this_cpu_ptr(arg);

	mine->head_canary = 0xC0FFEE00u + (unsigned)plat_cpu_id();
	for (int i = 0; i < ITERS; i++)
		mine->count++;
	mine->tail_canary = 0xC0FFEE00u + (unsigned)plat_cpu_id();
}

static void threads_touch_only_their_element(void **state)
{
	struct ilab_topo *t = NULL;
	char err[256] = "";
	struct plat_config cfg = { .engine = PLAT_ENGINE_NATIVE };
	int cpus[4] = { 3, 0, 2, 1 };

	/* Prefer the 128-CPU model: it proves the array is sized by the model, not the host. */
	if (ilab_topo_load("kunpeng920", &t, err, sizeof(err)) == 0) {
		cpus[0] = 127;
		cpus[2] = 64;
	} else {
		ILAB_SKIP_CHECK("kunpeng920 unavailable (%s): the array's sizing by the model is "
				"not checked; using the host", err);
		t = NULL;
	}
	cfg.topo = t;
	assert_int_equal(plat_init(&cfg), 0);
	ilab_topo_free(t);

	struct pcpu_stat *base = plat_percpu_alloc(sizeof(*base));
	unsigned n = plat_cpu_count() < 4 ? plat_cpu_count() : 4;
	assert_non_null(base);
	assert_int_equal(plat_run_threads(n, cpus, bump_own, base), 0);

	for (unsigned cpu = 0; cpu < plat_cpu_count(); cpu++) {
		struct pcpu_stat *e = plat_percpu_ptr(base, cpu);
		bool used = false;

		for (unsigned i = 0; i < n; i++)
			used |= cpus[i] == (int)cpu;
		assert_int_equal(e->count, used ? ITERS : 0);
		assert_int_equal(e->head_canary, used ? 0xC0FFEE00u + cpu : 0);
		assert_int_equal(e->tail_canary, used ? 0xC0FFEE00u + cpu : 0);
	}
	plat_percpu_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uninitialised_uses_host_cpu_count),
		cmocka_unit_test_teardown(layout_for_several_sizes, teardown),
		cmocka_unit_test_teardown(zero_and_huge_sizes, teardown),
		cmocka_unit_test_teardown(threads_touch_only_their_element, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
