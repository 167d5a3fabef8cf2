/* spinlock.c — a test-and-set lock on a tracked word, waiting with plat_poll(): natively a
 * spin-then-yield lock, in simulation a parked waiter. Not fair and not a queued lock.
 */
#include "iommulab/plat.h"

static bool lock_free(uint64_t v, void *arg)
{
	return v == 0;
}

void plat_spin_init(plat_spinlock *l, const char *name)
{
	plat_store32(&l->locked, 0);
	plat_track(&l->locked, name);
}

bool plat_spin_trylock(plat_spinlock *l)
{
	uint32_t expected = 0;

	return plat_cmpxchg32(&l->locked, &expected, 1);
}

void plat_spin_lock(plat_spinlock *l)
{
	/* Wait with loads, not with failed cmpxchgs: a waiter should not steal the line from the
	 * holder over and over (and the simulator parks it until the word changes). */
	while (!plat_spin_trylock(l))
		plat_poll(&l->locked, sizeof(l->locked), lock_free, NULL, 0);
}

void plat_spin_unlock(plat_spinlock *l)
{
	plat_store32(&l->locked, 0);
}
