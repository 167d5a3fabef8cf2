/* progress.c — the hook behind a command's progress line (ilab_sim_set_progress in
 * iommulab/sim.h): the scheduler calls sim_progress_tick every 65536 context switches, and it
 * calls the hook when period_s of host time have passed. Host time is read only here, so the
 * simulation itself never depends on it. Not the line's format: that is the command's.
 */
#include <time.h>

#include "iommulab/sim.h"
#include "sim_internal.h"

static ilab_sim_progress_fn progress_fn;
static void *progress_arg;
static double progress_period_s, progress_next_s;

static double host_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void ilab_sim_set_progress(ilab_sim_progress_fn fn, void *arg, double period_s)
{
	progress_fn = fn;
	progress_arg = arg;
	progress_period_s = period_s > 0 ? period_s : 0;
	progress_next_s = host_now_s() + progress_period_s;
}

void sim_progress_tick(uint64_t virtual_ns)
{
	double now;

	if (!progress_fn)
		return;
	now = host_now_s();
	if (now < progress_next_s)
		return;
	progress_next_s = now + progress_period_s;
	progress_fn(virtual_ns, progress_arg);
}
