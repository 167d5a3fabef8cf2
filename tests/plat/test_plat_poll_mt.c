/* test_plat_poll_mt.c — plat_poll(): returns once another thread makes the predicate true
 * (32- and 64-bit words), times out when nobody does, and refuses malformed requests.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "iommulab/plat.h"
#include "support/skip.h"

#define MS 1000000ull

struct mailbox {
	plat_word32 w32;
	plat_word64 w64;
	uint64_t payload;        /* plain, published by the store the poller waits for */
	plat_word32 rc32, rc64;  /* poll results + 100 (0 = not polled yet) */
	uint64_t payload_seen;
};

static int setup(void **state)
{
	return plat_init(NULL);
}

static int teardown(void **state)
{
	plat_fini();
	return 0;
}

static bool equals(uint64_t v, void *arg)
{
	return v == *(const uint64_t *)arg;
}

static const uint64_t want32 = 42;
static const uint64_t want64 = 0x1234567890abcdefull;

/* Thread 0 waits (forever, then with a generous timeout); thread 1 writes after a while. */
static void pair(unsigned idx, void *arg)
{
	struct mailbox *m = arg;

	if (idx == 0) {
		int rc = plat_poll(&m->w32, 4, equals, (void *)&want32, 0);

		plat_store32(&m->rc32, (uint32_t)(rc + 100));
		m->payload_seen = m->payload; /* ordered after the store by acquire/release */
		rc = plat_poll(&m->w64, 8, equals, (void *)&want64, 60000 * MS);
		plat_store32(&m->rc64, (uint32_t)(rc + 100));
	} else {
		plat_delay_ns(2 * MS);
		m->payload = 0xfeed;
		plat_store32(&m->w32, 41); /* not yet */
		plat_delay_ns(1 * MS);
		plat_store32(&m->w32, 42);
		plat_delay_ns(2 * MS);
		plat_store64(&m->w64, want64);
	}
}

static void poll_sees_another_threads_store(void **state)
{
	struct mailbox m = { .payload = 0 };
	unsigned n = 2;

	if (plat_cpu_count() < 2)
		ILAB_SKIP("one CPU: no second thread to store");
	assert_int_equal(plat_run_threads(n, NULL, pair, &m), 0);
	assert_int_equal(plat_load32(&m.rc32), 100);
	assert_int_equal(plat_load32(&m.rc64), 100);
	assert_int_equal(m.payload_seen, 0xfeed);
}

static void poll_times_out(void **state)
{
	plat_word32 w = { 0 };
	uint64_t t0 = plat_now_ns();

	assert_int_equal(plat_poll(&w, 4, equals, (void *)&want32, 5 * MS), -ETIMEDOUT);
	assert_true(plat_now_ns() - t0 >= 5 * MS);
}

static void poll_returns_at_once_when_already_true(void **state)
{
	plat_word64 w = { want64 };

	assert_int_equal(plat_poll(&w, 8, equals, (void *)&want64, 1), 0);
	assert_int_equal(plat_poll(&w, 8, equals, (void *)&want64, 0), 0);
}

static void malformed_polls_are_refused(void **state)
{
	plat_word64 w[2] = { { 0 }, { 0 } };

	assert_int_equal(plat_poll(NULL, 4, equals, (void *)&want32, 1), -EINVAL);
	assert_int_equal(plat_poll(&w[0], 4, NULL, NULL, 1), -EINVAL);
	assert_int_equal(plat_poll(&w[0], 2, equals, (void *)&want32, 1), -EINVAL);
	assert_int_equal(plat_poll((char *)&w[0] + 4, 8, equals, (void *)&want64, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(poll_returns_at_once_when_already_true),
		cmocka_unit_test(poll_times_out),
		cmocka_unit_test(malformed_polls_are_refused),
		cmocka_unit_test(poll_sees_another_threads_store),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
