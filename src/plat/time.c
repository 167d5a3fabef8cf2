/* time.c — native time: the host's monotonic clock and a busy-wait delay. The simulator's
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
