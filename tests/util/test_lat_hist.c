/* test_lat_hist.c — the bounded latency histogram (fio's log-linear buckets and percentile
 * rule) and the tools' size and time parser (fio's units). Expected values come from fio's
 * HOWTO (units, kb_base) and the bucket arithmetic stated in lat_hist.h.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "iommulab/lat_hist.h"
#include "util/units.h"

static struct ilab_lat_hist h, g;

static void test_buckets_exact_below_128_and_within_1_in_128(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 128; v++)
		assert_int_equal(ilab_lat_hist_value(ilab_lat_hist_index(v)), v);
	for (uint64_t v = 128; v < (1ull << 34); v = v * 1.0137 + 1) {
		uint64_t b = ilab_lat_hist_value(ilab_lat_hist_index(v));

		assert_true(fabs((double)b - (double)v) <= (double)v / 128.0);
	}
	/* 2^34 ns and above share the last bucket */
	assert_int_equal(ilab_lat_hist_index(1ull << 40), ILAB_LAT_HIST_NR - 1);
	assert_int_equal(ilab_lat_hist_index(UINT64_MAX), ILAB_LAT_HIST_NR - 1);
}

static void test_percentile_is_fios_rule(void **state)
{
	(void)state;
	ilab_lat_hist_init(&h);
	assert_int_equal(ilab_lat_hist_percentile(&h, 50), 0);
	for (uint64_t v = 1; v <= 100; v++)
		ilab_lat_hist_add(&h, v);
	/* the first value whose running count reaches p % of 100 */
	assert_int_equal(ilab_lat_hist_percentile(&h, 1), 1);
	assert_int_equal(ilab_lat_hist_percentile(&h, 50), 50);
	assert_int_equal(ilab_lat_hist_percentile(&h, 50.5), 51);
	assert_int_equal(ilab_lat_hist_percentile(&h, 99), 99);
	assert_int_equal(ilab_lat_hist_percentile(&h, 99.99), 100);
	assert_int_equal(ilab_lat_hist_percentile(&h, 100), 100);
	assert_int_equal(h.min, 1);
	assert_int_equal(h.max, 100);
	assert_true(fabs(ilab_lat_hist_mean(&h) - 50.5) < 1e-9);
	/* sample standard deviation of 1..100: sqrt(100 * 101 / 12) */
	assert_true(fabs(ilab_lat_hist_stdev(&h) - sqrt(100.0 * 101 / 12)) < 1e-6);
	/* large values: the bucket's midpoint, kept within the exact minimum and maximum */
	ilab_lat_hist_init(&h);
	for (int i = 0; i < 1000; i++)
		ilab_lat_hist_add(&h, 1000000);
	assert_int_not_equal(ilab_lat_hist_value(ilab_lat_hist_index(1000000)), 1000000);
	assert_int_equal(ilab_lat_hist_percentile(&h, 50), 1000000);
	ilab_lat_hist_add(&h, 900000);
	ilab_lat_hist_add(&h, 1100000);
	assert_int_equal(ilab_lat_hist_percentile(&h, 50),
			 ilab_lat_hist_value(ilab_lat_hist_index(1000000)));
	assert_int_equal(ilab_lat_hist_percentile(&h, 0.05), 900000);
	assert_int_equal(ilab_lat_hist_percentile(&h, 100), 1100000);
}

static void test_merge_is_adding_both(void **state)
{
	(void)state;
	ilab_lat_hist_init(&h);
	ilab_lat_hist_init(&g);
	ilab_lat_hist_add(&h, 5);
	ilab_lat_hist_add(&g, 5000);
	ilab_lat_hist_add(&g, 7);
	ilab_lat_hist_merge(&h, &g);
	assert_int_equal(h.n, 3);
	assert_int_equal(h.min, 5);
	assert_int_equal(h.max, 5000);
	assert_int_equal(h.bucket[5], 1);
	assert_int_equal(h.bucket[7], 1);
	assert_int_equal(h.bucket[ilab_lat_hist_index(5000)], 1);
	assert_int_equal(ilab_lat_hist_percentile(&h, 60), 7);
}

static void test_fio_sizes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(ilab_parse_size("4096", ILAB_UNITS_FIO_1024, &v), 0);
	assert_int_equal(v, 4096);
	/* HOWTO, kb_base=1024: 4k = 4kb = 4KB = 4096; 1mi = 1000000 (compatibility mode) */
	assert_int_equal(ilab_parse_size("4k", ILAB_UNITS_FIO_1024, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ilab_parse_size("4KB", ILAB_UNITS_FIO_1024, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ilab_parse_size("1mi", ILAB_UNITS_FIO_1024, &v), 0);
	assert_int_equal(v, 1000000);
	assert_int_equal(ilab_parse_size("1t", ILAB_UNITS_FIO_1024, &v), 0);
	assert_int_equal(v, 1ull << 40);
	/* kb_base=1000: 4KiB = 4096, 1m = 1000000 */
	assert_int_equal(ilab_parse_size("4KiB", ILAB_UNITS_FIO_1000, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ilab_parse_size("1m", ILAB_UNITS_FIO_1000, &v), 0);
	assert_int_equal(v, 1000000);
	assert_int_equal(ilab_parse_size("0x1000", ILAB_UNITS_FIO_1024, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ilab_parse_size("4q", ILAB_UNITS_FIO_1024, &v), -1);
	assert_int_equal(ilab_parse_size("", ILAB_UNITS_FIO_1024, &v), -1);
	assert_int_equal(ilab_parse_size("-4k", ILAB_UNITS_FIO_1024, &v), -1);
	assert_int_equal(ilab_parse_size("99999999999p", ILAB_UNITS_FIO_1024, &v), -1);
}

static void test_fio_times(void **state)
{
	uint64_t ns;

	(void)state;
	assert_int_equal(ilab_parse_time("30", 1000000000ull, &ns), 0);
	assert_int_equal(ns, 30000000000ull);
	assert_int_equal(ilab_parse_time("500ms", 1000000000ull, &ns), 0);
	assert_int_equal(ns, 500000000ull);
	assert_int_equal(ilab_parse_time("2m", 1000000000ull, &ns), 0);
	assert_int_equal(ns, 120000000000ull);
	assert_int_equal(ilab_parse_time("1H", 1000000000ull, &ns), 0);
	assert_int_equal(ns, 3600000000000ull);
	assert_int_equal(ilab_parse_time("10usec", 1000000000ull, &ns), 0);
	assert_int_equal(ns, 10000ull);
	assert_int_equal(ilab_parse_time("5x", 1000000000ull, &ns), -1);
	assert_int_equal(ilab_parse_time("s", 1000000000ull, &ns), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_exact_below_128_and_within_1_in_128),
		cmocka_unit_test(test_percentile_is_fios_rule),
		cmocka_unit_test(test_merge_is_adding_both),
		cmocka_unit_test(test_fio_sizes),
		cmocka_unit_test(test_fio_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
