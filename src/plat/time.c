/* time.c — native time: the host's monotonic clock, a busy-wait delay and a sleep. The simulator's
 * virtual clock is src/sim's; plat.h dispatches between the two.
 */
#include <time.h>

#include "iommulab/plat.h"

uint64_t plat_native_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A busy-wait, not a sleep: delays model device and compute time measured in ns to µs, far
 * below the scheduler's sleep granularity. */
void plat_native_delay_ns(uint64_t ns)
{
	uint64_t end = plat_native_now_ns() + ns;

	while (plat_native_now_ns() < end)
		plat_cpu_relax();
}

/* A real sleep: long waits (timers of 1 ms and more) must leave the host CPU to the threads
 * that do the work, which a 2-core host cannot spare to a spinner. */
void plat_native_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) != 0)
		; /* interrupted by a signal: sleep for the rest */
}
