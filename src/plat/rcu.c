/* rcu.c — RCU for native runs: liburcu's urcu-memb flavour, with per-thread registration that
 * is idempotent and undone at thread exit. In simulation every call is a no-op (see below).
 *
 * Why no-ops in simulation: the simulator runs all CPUs as fibers on one host thread, and
 * liburcu would see a single reader thread; synchronize_rcu() from a fiber would wait for its
 * own host thread's read section, which may belong to another (parked) fiber: a deadlock.
 * Fibers switch only at plat calls, so a read section without plat calls is atomic there; one
 * that contains plat calls (tracked loads, polls) is NOT protected against a concurrent
 * synchronize + free in simulation. The sim backend must add grace periods if it needs them.
 */
#include <pthread.h>
#include <urcu/urcu-memb.h>

#include "iommulab/plat.h"

/* TSan cannot see the ordering liburcu provides (it is not instrumented): tell it that all a
 * reader did before leaving its section happens before the end of a later grace period. */
#if defined(ILAB_TSAN) || defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char rcu_tsan_grace;
#define rcu_tsan_reader_done() __tsan_release(&rcu_tsan_grace)
#define rcu_tsan_grace_done() __tsan_acquire(&rcu_tsan_grace)
#else
#define rcu_tsan_reader_done() ((void)0)
#define rcu_tsan_grace_done() ((void)0)
#endif

static _Thread_local bool rcu_registered;
static pthread_key_t rcu_exit_key;
static pthread_once_t rcu_key_once = PTHREAD_ONCE_INIT;

/* A thread that exits while registered would leave liburcu a dangling reader: unregister it
 * from a thread-exit destructor. */
static void rcu_thread_exit(void *unused)
{
	plat_rcu_unregister_thread();
}

static void rcu_make_key(void)
{
	pthread_key_create(&rcu_exit_key, rcu_thread_exit);
}

void plat_rcu_register_thread(void)
{
	if (plat_sim || rcu_registered)
		return;
	pthread_once(&rcu_key_once, rcu_make_key);
	urcu_memb_register_thread();
	rcu_registered = true;
	pthread_setspecific(rcu_exit_key, &rcu_registered);
}

void plat_rcu_unregister_thread(void)
{
	if (!rcu_registered)
		return;
	urcu_memb_unregister_thread();
	rcu_registered = false;
	pthread_setspecific(rcu_exit_key, NULL);
}

void plat_rcu_read_lock(void)
{
	if (plat_sim)
		return;
	/* An unregistered reader is invisible to synchronize_rcu(): register it rather than let
	 * a writer free memory under it. */
	if (!rcu_registered)
		plat_rcu_register_thread();
	urcu_memb_read_lock();
}

void plat_rcu_read_unlock(void)
{
	if (plat_sim)
		return;
	rcu_tsan_reader_done();
	urcu_memb_read_unlock();
}

void plat_synchronize_rcu(void)
{
	if (plat_sim)
		return;
	urcu_memb_synchronize_rcu();
	rcu_tsan_grace_done();
}
