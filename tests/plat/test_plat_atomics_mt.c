/* test_plat_atomics_mt.c — tracked-word atomics under real threads: fetch_add/sub totals,
 * a cmpxchg counter, exchange hand-offs and fetch_or/and bit sets are exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "iommulab/plat.h"
#include "iommulab/topo.h"

#define NTHREADS 4
#define ITERS 50000

struct shared {
	plat_word32 w32;
	plat_word64 w64;
	plat_word64 sub;
	plat_word32 cas_retries;
	plat_word64 bits;
	plat_word32 errors;
	unsigned char *got; /* xchg: how often each token came back */
};

/* The 128-CPU model lets 4 threads run on this 2-PU host (more threads than cores: preemption
 * inside the RMW loops); the host alone is the fallback. */
static int setup(void **state)
{
	struct ilab_topo *t = NULL;
	struct plat_config cfg = { .engine = PLAT_ENGINE_NATIVE };
	int err;

	if (ilab_topo_load("kunpeng920", &t, NULL, 0) == 0)
		cfg.topo = t;
	err = plat_init(&cfg);
	ilab_topo_free(t);
	return err;
}

static int teardown(void **state)
{
	plat_fini();
	return 0;
}

static unsigned nthreads(void)
{
	return plat_cpu_count() < NTHREADS ? plat_cpu_count() : NTHREADS;
}

static void adders(unsigned idx, void *arg)
{
	struct shared *s = arg;

	for (int i = 0; i < ITERS; i++) {
		plat_fetch_add32(&s->w32, 1);
		plat_fetch_add64(&s->w64, 3);
		plat_fetch_sub64(&s->sub, 2);
	}
}

static void fetch_add_totals_are_exact(void **state)
{
	struct shared s = { 0 };
	unsigned n = nthreads();

	plat_store64(&s.sub, 2ull * n * ITERS);
	assert_int_equal(plat_run_threads(n, NULL, adders, &s), 0);
	assert_int_equal(plat_load32(&s.w32), n * ITERS);
	assert_int_equal(plat_load64(&s.w64), 3ull * n * ITERS);
	assert_int_equal(plat_load64(&s.sub), 0);
}

static void cas_incrementers(unsigned idx, void *arg)
{
	struct shared *s = arg;

	for (int i = 0; i < ITERS; i++) {
		uint64_t old = plat_load_relaxed64(&s->w64);

		/* On failure cmpxchg stores the current value in old: retry from it. */
		while (!plat_cmpxchg64(&s->w64, &old, old + 1))
			plat_fetch_add32(&s->cas_retries, 1);
	}
}

static void cmpxchg_counter_is_exact(void **state)
{
	struct shared s = { 0 };
	unsigned n = nthreads();

	assert_int_equal(plat_run_threads(n, NULL, cas_incrementers, &s), 0);
	assert_int_equal(plat_load64(&s.w64), (uint64_t)n * ITERS);
}

static void cmpxchg_reports_the_current_value(void **state)
{
	plat_word32 w = { 7 };
	uint32_t expected = 5;

	assert_false(plat_cmpxchg32(&w, &expected, 9));
	assert_int_equal(expected, 7);
	assert_int_equal(plat_load32(&w), 7);
	assert_true(plat_cmpxchg32(&w, &expected, 9));
	assert_int_equal(plat_load32(&w), 9);
}

/* Each thread swaps in unique tokens (1 + idx * ITERS + i); every token put in must come out
 * exactly once, either from some xchg or as the final value. Token 0 is the initial value. */
static void swappers(unsigned idx, void *arg)
{
	struct shared *s = arg;

	for (uint32_t i = 0; i < ITERS; i++) {
		uint32_t old = plat_xchg32(&s->w32, 1 + idx * ITERS + i);

		/* Each token is returned to exactly one thread, so this byte has one writer. */
		s->got[old]++;
	}
}

static void exchange_hands_each_token_once(void **state)
{
	struct shared s = { 0 };
	unsigned n = nthreads();
	size_t tokens = (size_t)n * ITERS + 1;

	s.got = calloc(tokens, 1);
	assert_non_null(s.got);
	assert_int_equal(plat_run_threads(n, NULL, swappers, &s), 0);
	s.got[plat_load32(&s.w32)]++;
	for (size_t t = 0; t < tokens; t++)
		assert_int_equal(s.got[t], 1);
	free(s.got);
}

/* Thread idx owns bits idx, idx + 8, idx + 16, ...: it sets them (fetch_or must show each clear
 * before), then clears them (fetch_and must show each set before). */
static void bit_owners(unsigned idx, void *arg)
{
	struct shared *s = arg;

	for (int round = 0; round < ITERS / 64; round++) {
		for (unsigned b = idx; b < 64; b += 8) {
			uint64_t m = 1ull << b;

			if (plat_fetch_or64(&s->bits, m) & m)
				plat_fetch_add32(&s->errors, 1);
		}
		for (unsigned b = idx; b < 64; b += 8) {
			uint64_t m = 1ull << b;

			if (!(plat_fetch_and64(&s->bits, ~m) & m))
				plat_fetch_add32(&s->errors, 1);
		}
	}
	for (unsigned b = idx; b < 64; b += 8)
		plat_fetch_or64(&s->bits, 1ull << b);
}

static void fetch_or_and_keep_bits_exact(void **state)
{
	struct shared s = { 0 };
	unsigned n = nthreads();
	uint64_t expect = 0;

	assert_int_equal(plat_run_threads(n, NULL, bit_owners, &s), 0);
	assert_int_equal(plat_load32(&s.errors), 0);
	for (unsigned idx = 0; idx < n; idx++)
		for (unsigned b = idx; b < 64; b += 8)
			expect |= 1ull << b;
	assert_int_equal(plat_load64(&s.bits), expect);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fetch_add_totals_are_exact),
		cmocka_unit_test(cmpxchg_counter_is_exact),
		cmocka_unit_test(cmpxchg_reports_the_current_value),
		cmocka_unit_test(exchange_hands_each_token_once),
		cmocka_unit_test(fetch_or_and_keep_bits_exact),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
