/* test_plat_agent_mt.c — background agents: an agent consumes work that a CPU rings for, is
 * not a modelled CPU, and returns when asked to stop (waking from a poll on its doorbell, or
 * from a poll whose predicate ignores the request).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "iommulab/plat.h"

#define REQUESTS 2000

/* A toy "device": the CPU bumps prod, the agent catches cons up to it. */
struct device {
	plat_word32 prod;
	plat_word32 cons;
	plat_word32 started;
	plat_word32 agent_cpu; /* plat_cpu_id() + 1 inside the agent */
	plat_word32 returned;
	struct plat_agent *self;
};

struct wait_arg {
	struct device *dev;
	uint32_t cons;
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

/* Wake on new work, or on a stop request: the contract of plat_agent_stop(). */
static bool work_or_stop(uint64_t prod, void *arg)
{
	struct wait_arg *w = arg;

	return prod != w->cons || plat_agent_should_stop(w->dev->self);
}

static void consumer(struct plat_agent *agent, void *arg)
{
	struct device *d = arg;

	d->self = agent; /* read only by this thread */
	plat_store32(&d->agent_cpu, (uint32_t)(plat_cpu_id() + 1));
	plat_store32(&d->started, 1);
	while (!plat_agent_should_stop(agent)) {
		struct wait_arg w = { d, plat_load32(&d->cons) };

		plat_poll(&d->prod, 4, work_or_stop, &w, 0);
		plat_store32(&d->cons, plat_load32(&d->prod));
	}
	plat_store32(&d->returned, 1);
}

static bool equals(uint64_t v, void *arg)
{
	return v == *(const uint32_t *)arg;
}

static void agent_consumes_and_stops(void **state)
{
	struct device d = { .self = NULL };
	struct plat_agent *a = NULL;

	assert_int_equal(plat_agent_start("toy-device", 0, consumer, &d, &a), 0);
	assert_non_null(a);
	for (uint32_t i = 1; i <= REQUESTS; i++) {
		plat_fetch_add32(&d.prod, 1);
		if (i % 100 == 0) /* let it drain now and then, as a driver waiting for a sync */
			assert_int_equal(plat_poll(&d.cons, 4, equals, &i, 0), 0);
	}
	uint32_t all = REQUESTS;
	assert_int_equal(plat_poll(&d.cons, 4, equals, &all, 0), 0);
	plat_agent_stop(a, &d.prod);
	assert_int_equal(plat_load32(&d.returned), 1);
	assert_int_equal(plat_load32(&d.started), 1);
	assert_int_equal(plat_load32(&d.agent_cpu), 0); /* -1 + 1: an agent is no CPU */
}

static void stop_wakes_an_idle_agent(void **state)
{
	struct device d = { .self = NULL };
	struct plat_agent *a = NULL;
	uint32_t one = 1;

	assert_int_equal(plat_agent_start("idle", 0, consumer, &d, &a), 0);
	assert_int_equal(plat_poll(&d.started, 4, equals, &one, 0), 0);
	plat_agent_stop(a, &d.prod); /* never rang: the agent is parked in its poll */
	assert_int_equal(plat_load32(&d.returned), 1);
}

static bool never(uint64_t v, void *arg)
{
	return false;
}

/* An agent whose poll predicate ignores the stop request, with no timeout: plat_agent_stop()
 * must still return (the poll gives up with -ETIMEDOUT once the agent is asked to stop). */
static void deaf_agent(struct plat_agent *agent, void *arg)
{
	struct device *d = arg;

	plat_store32(&d->started, 1);
	while (!plat_agent_should_stop(agent))
		if (plat_poll(&d->prod, 4, never, NULL, 0) == -ETIMEDOUT)
			plat_store32(&d->cons, 1);
	plat_store32(&d->returned, 1);
}

static void stop_ends_a_poll_that_ignores_it(void **state)
{
	struct device d = { .self = NULL };
	struct plat_agent *a = NULL;
	uint32_t one = 1;

	assert_int_equal(plat_agent_start("deaf", 0, deaf_agent, &d, &a), 0);
	assert_int_equal(plat_poll(&d.started, 4, equals, &one, 0), 0);
	plat_agent_stop(a, NULL);
	assert_int_equal(plat_load32(&d.returned), 1);
	assert_int_equal(plat_load32(&d.cons), 1); /* its poll said -ETIMEDOUT */
}

static void quick(struct plat_agent *agent, void *arg)
{
	plat_store32(arg, 7);
}

static void agent_may_return_on_its_own(void **state)
{
	plat_word32 w = { 0 };
	struct plat_agent *a = NULL;

	assert_int_equal(plat_agent_start(NULL, 0, quick, &w, &a), 0);
	plat_agent_stop(a, NULL);
	assert_int_equal(plat_load32(&w), 7);
}

static void bad_arguments(void **state)
{
	struct plat_agent *a = (struct plat_agent *)1;

	assert_int_equal(plat_agent_start("x", 0, NULL, NULL, &a), -EINVAL);
	assert_int_equal(plat_agent_start("x", 0, quick, NULL, NULL), -EINVAL);
	assert_true(plat_agent_should_stop(NULL));
	plat_agent_stop(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(agent_may_return_on_its_own),
		cmocka_unit_test(agent_consumes_and_stops),
		cmocka_unit_test(stop_wakes_an_idle_agent),
		cmocka_unit_test(stop_ends_a_poll_that_ignores_it),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
