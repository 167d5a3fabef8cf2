/* poll.c — native polling: wait for a predicate on a shared word, spinning briefly and then
 * yielding the host CPU. Not a sleep/wake mechanism: nobody signals a poller, it re-reads.
 * In an agent's thread it also gives up (-ETIMEDOUT) once the agent is asked to stop.
 */
#include <errno.h>
#include <sched.h>

#include "plat/plat_internal.h"

/* Spin this many times before yielding: long enough to catch a writer that is running on the
 * other core, short enough that on an oversubscribed host (2 cores, SMMU model polling in its
 * own thread) a poller gives the CPU to the thread it waits for within a few µs. */
#define POLL_SPINS 128
/* While spinning, look at the clock only every so often (a vDSO call costs ~20 ns). */
#define POLL_CLOCK_EVERY 16

static uint64_t poll_read(const void *addr, unsigned size)
{
	if (size == 4)
		return atomic_load_explicit((_Atomic uint32_t *)addr, memory_order_acquire);
	return atomic_load_explicit((_Atomic uint64_t *)addr, memory_order_acquire);
}

int plat_native_poll(const void *addr, unsigned size, plat_poll_pred pred, void *arg,
		     uint64_t timeout_ns)
{
	uint64_t deadline = 0;

	if (!addr || !pred || (size != 4 && size != 8) || (uintptr_t)addr % size)
		return -EINVAL;
	if (timeout_ns)
		deadline = plat_native_now_ns() + timeout_ns;

	for (unsigned i = 0;; i++) {
		if (pred(poll_read(addr, size), arg))
			return 0;
		if (i < POLL_SPINS) {
			plat_cpu_relax();
			if (i % POLL_CLOCK_EVERY)
				continue;
		} else {
			sched_yield();
		}
		if (timeout_ns && plat_native_now_ns() >= deadline)
			return pred(poll_read(addr, size), arg) ? 0 : -ETIMEDOUT;
		/* an agent asked to stop must get back to its loop (as in simulation) */
		if (plat_tls_agent_stop &&
		    atomic_load_explicit(&plat_tls_agent_stop->v, memory_order_acquire))
			return pred(poll_read(addr, size), arg) ? 0 : -ETIMEDOUT;
	}
}

void plat_native_yield(void)
{
	sched_yield();
}
