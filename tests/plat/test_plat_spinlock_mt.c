/* test_plat_spinlock_mt.c — plat_spinlock: mutual exclusion under real threads (a plain counter
 * it protects stays exact, and nobody is ever inside with someone else), trylock semantics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "iommulab/plat.h"
#include "iommulab/topo.h"

#define NTHREADS 4
#define ITERS 20000

struct guarded {
	plat_spinlock lock;
	uint64_t counter;     /* plain: only the lock makes this safe */
	plat_word32 inside;   /* threads in the critical section right now */
	plat_word32 overlaps; /* times a thread found another one inside */
};

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

static void contend(unsigned idx, void *arg)
{
	struct guarded *g = arg;

	for (int i = 0; i < ITERS; i++) {
		plat_spin_lock(&g->lock);
		if (plat_fetch_add32(&g->inside, 1) != 0)
			plat_fetch_add32(&g->overlaps, 1);
		g->counter++;
		plat_fetch_sub32(&g->inside, 1);
		plat_spin_unlock(&g->lock);
	}
}

static void lock_excludes(void **state)
{
	struct guarded g = { .counter = 0 };
	unsigned n = plat_cpu_count() < NTHREADS ? plat_cpu_count() : NTHREADS;

	plat_spin_init(&g.lock, "test.lock");
	assert_int_equal(plat_run_threads(n, NULL, contend, &g), 0);
	assert_int_equal(g.counter, (uint64_t)n * ITERS);
	assert_int_equal(plat_load32(&g.overlaps), 0);
}

static void try_only(unsigned idx, void *arg)
{
	struct guarded *g = arg;

	for (int i = 0; i < ITERS; i++) {
		if (!plat_spin_trylock(&g->lock))
			continue;
		g->counter++;
		plat_spin_unlock(&g->lock);
		plat_fetch_add32(&g->inside, 1); /* here: successful acquisitions */
	}
}

static void trylock_excludes(void **state)
{
	struct guarded g = { .counter = 0 };
	unsigned n = plat_cpu_count() < NTHREADS ? plat_cpu_count() : NTHREADS;

	plat_spin_init(&g.lock, "test.trylock");
	assert_int_equal(plat_run_threads(n, NULL, try_only, &g), 0);
	assert_int_equal(g.counter, plat_load32(&g.inside));
	assert_true(g.counter > 0);
}

static void trylock_fails_while_held(void **state)
{
	plat_spinlock l = PLAT_SPINLOCK_INIT;

	assert_true(plat_spin_trylock(&l));
	assert_false(plat_spin_trylock(&l));
	plat_spin_unlock(&l);
	assert_true(plat_spin_trylock(&l));
	plat_spin_unlock(&l);
	plat_spin_lock(&l);
	assert_false(plat_spin_trylock(&l));
	plat_spin_unlock(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trylock_fails_while_held),
		cmocka_unit_test(lock_excludes),
		cmocka_unit_test(trylock_excludes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
