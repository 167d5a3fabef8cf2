/* host_time.c — the host-time estimate's one rule (see host_time.h): the per-unit costs are
 * the header's, each command multiplies its own units. Not a timer: nothing here is measured
 * at run time.
 */
#include <errno.h>
#include <stdio.h>

#include "experiments/host_time.h"

double ilab_host_s_map_timed(unsigned threads, int passthrough, double sim_us)
{
	if (passthrough)
		return threads * sim_us * ILAB_HOST_S_MAP_PT_US_PER_THREAD;
	if (threads > ILAB_HOST_S_MAP_THREADS_MAX)
		threads = ILAB_HOST_S_MAP_THREADS_MAX;
	return threads * sim_us * ILAB_HOST_S_MAP_US_PER_THREAD;
}

double ilab_host_s_fio(unsigned jobs, unsigned iodepth, double sim_us)
{
	return jobs * sim_us * ILAB_HOST_S_FIO_JOB * (iodepth > 32 ? iodepth / 32.0 : 1);
}

int ilab_host_time_check(double seconds, const char *work, const char *what,
			 const char *shorten, char *msg, size_t msglen)
{
	if (seconds <= ILAB_HOST_SECONDS_MAX)
		return 0;
	snprintf(msg, msglen, "%s would take about %.0f minutes of host time (more than the %.0f "
		 "minutes a %s may take): %s", work, seconds / 60, ILAB_HOST_SECONDS_MAX / 60,
		 what, shorten);
	return -EINVAL;
}
