/* test_plat_time.c — native time: plat_now_ns() never goes backwards and plat_delay_ns()
 * waits at least as long as asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "iommulab/plat.h"

static void now_is_monotonic(void **state)
{
	uint64_t prev = plat_now_ns();

	for (int i = 0; i < 100000; i++) {
		uint64_t t = plat_now_ns();

		assert_true(t >= prev);
		prev = t;
	}
}

static void now_follows_clock_monotonic(void **state)
{
	struct timespec ts;

	uint64_t before = plat_now_ns();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t after = plat_now_ns();
	uint64_t ref = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;

	assert_true(before <= ref);
	assert_true(ref <= after);
}

static void delay_waits_at_least_as_asked(void **state)
{
	static const uint64_t delays[] = { 0, 100, 10000, 1000000 };

	for (size_t i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
		uint64_t t0 = plat_now_ns();

		plat_delay_ns(delays[i]);
		assert_true(plat_now_ns() - t0 >= delays[i]);
	}
}

/* A sleep lasts at least as asked and, unlike a delay, leaves the host CPU idle: the
 * thread's CPU time stays far below the wall time slept. */
static void sleep_waits_and_leaves_the_cpu(void **state)
{
	struct timespec c0, c1;
	uint64_t t0 = plat_now_ns();

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	plat_sleep_ns(20000000); /* 20 ms */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	assert_true(plat_now_ns() - t0 >= 20000000);
	uint64_t cpu = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000u +
		       (uint64_t)(c1.tv_nsec - c0.tv_nsec);
	assert_true(cpu < 10000000); /* a busy-wait would have used ~20 ms of CPU */
}

static void charge_is_free_natively(void **state)
{
	uint64_t t0 = plat_now_ns();

	plat_charge_ns(1000000000ull); /* one simulated second: no real wait */
	assert_true(plat_now_ns() - t0 < 500000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(now_is_monotonic),
		cmocka_unit_test(now_follows_clock_monotonic),
		cmocka_unit_test(delay_waits_at_least_as_asked),
		cmocka_unit_test(sleep_waits_and_leaves_the_cpu),
		cmocka_unit_test(charge_is_free_natively),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
