/* test_plat_rcu_mt.c — RCU (liburcu natively): synchronize waits for a reader already inside its
 * section, and readers never see an object that a writer replaced, synchronized and freed
 * (the poison check catches it natively, ASan and TSan catch it under sanitizers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "iommulab/plat.h"
#include "support/skip.h"

#define MS 1000000ull
#define LIVE 0x11FE11FE11FE11FEull
#define DEAD 0xDEADDEADDEADDEADull
#define GENERATIONS 300

struct obj {
	uint64_t magic;
	uint64_t gen;
};

struct world {
	plat_word64 ptr;      /* struct obj *, published with a release store */
	plat_word32 done;
	plat_word32 bad;      /* reads that saw a dead object */
	plat_word64 reads;
	plat_word32 in, left; /* for the ordering test */
	plat_word32 left_seen_by_writer;
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

static struct obj *obj_new(uint64_t gen)
{
	struct obj *o = malloc(sizeof(*o));

	assert_non_null(o);
	o->magic = LIVE;
	o->gen = gen;
	return o;
}

static void reader(struct world *w)
{
	while (!plat_load32(&w->done)) {
		plat_rcu_read_lock();
		struct obj *o = (struct obj *)(uintptr_t)plat_load64(&w->ptr);
		uint64_t m1 = o->magic;
		plat_cpu_relax(); /* widen the window a little */
		uint64_t m2 = o->magic;
		plat_rcu_read_unlock();
		if (m1 != LIVE || m2 != LIVE)
			plat_fetch_add32(&w->bad, 1);
		plat_fetch_add64(&w->reads, 1);
	}
}

static bool more_than(uint64_t v, void *arg)
{
	return v > *(const uint64_t *)arg;
}

static void writer(struct world *w)
{
	for (uint64_t gen = 1; gen <= GENERATIONS; gen++) {
		/* Let the reader get at least one read in per generation, so they really overlap
		 * even when the scheduler favours one thread. */
		uint64_t seen = plat_load64(&w->reads);
		plat_poll(&w->reads, 8, more_than, &seen, 0);

		struct obj *old = (struct obj *)(uintptr_t)plat_xchg64(&w->ptr,
								       (uintptr_t)obj_new(gen));
		plat_synchronize_rcu();
		old->magic = DEAD; /* a reader still holding old would see this (or TSan would) */
		free(old);
	}
	plat_store32(&w->done, 1);
}

static void role(unsigned idx, void *arg)
{
	if (idx == 0)
		writer(arg);
	else
		reader(arg);
}

static void readers_never_see_freed_objects(void **state)
{
	struct world w = { .ptr = { 0 } };
	unsigned n = plat_cpu_count() < 2 ? 0 : 2;

	if (!n)
		ILAB_SKIP("one CPU: no second thread to race with");
	plat_store64(&w.ptr, (uintptr_t)obj_new(0));
	assert_int_equal(plat_run_threads(n, NULL, role, &w), 0);
	assert_int_equal(plat_load32(&w.bad), 0);
	assert_true(plat_load64(&w.reads) >= GENERATIONS);
	struct obj *last = (struct obj *)(uintptr_t)plat_load64(&w.ptr);
	assert_int_equal(last->gen, GENERATIONS);
	free(last);
}

static bool is_one(uint64_t v, void *arg)
{
	return v == 1;
}

/* Thread 1 is inside a read section for 20 ms; thread 0's synchronize, started meanwhile, may
 * only return after thread 1 has left. */
static void ordering(unsigned idx, void *arg)
{
	struct world *w = arg;

	if (idx == 1) {
		plat_rcu_read_lock();
		plat_store32(&w->in, 1);
		plat_delay_ns(20 * MS);
		plat_store32(&w->left, 1);
		plat_rcu_read_unlock();
	} else {
		plat_poll(&w->in, 4, is_one, NULL, 0);
		plat_synchronize_rcu();
		plat_store32(&w->left_seen_by_writer, plat_load32(&w->left));
	}
}

static void synchronize_waits_for_a_reader_inside(void **state)
{
	struct world w = { .ptr = { 0 } };

	if (plat_cpu_count() < 2)
		ILAB_SKIP("one CPU: no second thread to race with");
	assert_int_equal(plat_run_threads(2, NULL, ordering, &w), 0);
	assert_int_equal(plat_load32(&w.left_seen_by_writer), 1);
}

/* The main thread is no plat thread: registration is idempotent, and reading registers it. */
static void registration_is_idempotent(void **state)
{
	struct world w = { .ptr = { 0 } };

	plat_rcu_register_thread();
	plat_rcu_register_thread();
	plat_rcu_read_lock();
	plat_rcu_read_unlock();
	plat_synchronize_rcu();
	plat_rcu_unregister_thread();
	plat_rcu_unregister_thread();
	plat_rcu_read_lock(); /* unregistered: registers itself */
	plat_rcu_read_unlock();
	plat_rcu_unregister_thread();
	plat_synchronize_rcu(); /* no readers at all */
	/* A second register or unregister that reached liburcu would trip its assertion or,
	 * without asserts, corrupt its reader registry (a node added or unlinked twice): after
	 * the calls above, the registry must still make a writer wait for a reader inside its
	 * section (a corrupted one crashes, hangs into ctest's timeout, or lets it through). */
	if (plat_cpu_count() < 2)
		ILAB_SKIP("one CPU: no second thread to race with");
	assert_int_equal(plat_run_threads(2, NULL, ordering, &w), 0);
	assert_int_equal(plat_load32(&w.left_seen_by_writer), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registration_is_idempotent),
		cmocka_unit_test(synchronize_waits_for_a_reader_inside),
		cmocka_unit_test(readers_never_see_freed_objects),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
