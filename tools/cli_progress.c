/* cli_progress.c — the progress line of bench --engine sim, fio and netperf (cli.h): shown on
 * stderr only for a run estimated to take more than a few seconds of host time, every 2 s of
 * it; on a terminal one line rewritten in place and cleared at the end, elsewhere (a log) one
 * line each time. The simulator's hook (ilab_sim_set_progress) calls it; the result on stdout
 * is unchanged.
 */
#include "cli.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <iommulab/sim.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void show(uint64_t virtual_ns, void *arg)
{
	struct cli_progress *p = arg;
	double sim_s = virtual_ns / 1e9, host = now_s() - p->t0;

	if (p->total_ns)
		fprintf(stderr, "%s%s %s: %.3f of %.3f simulated s (%.0f%%), %.0f s of host time%s",
			p->tty ? "\r" : "", CLI_PROG, p->cmd, sim_s, p->total_ns / 1e9,
			sim_s * 1e9 < p->total_ns ? 100.0 * virtual_ns / p->total_ns : 100.0, host,
			p->tty ? "\033[K" : "\n");
	else
		fprintf(stderr, "%s%s %s: %.3f simulated s, %.0f s of host time%s",
			p->tty ? "\r" : "", CLI_PROG, p->cmd, sim_s, host, p->tty ? "\033[K" : "\n");
	fflush(stderr);
	p->shown = true;
}

void cli_progress_start(struct cli_progress *p, const char *cmd, double estimate_s,
			uint64_t total_ns)
{
	*p = (struct cli_progress){ .cmd = cmd, .total_ns = total_ns, .t0 = now_s(),
				    .tty = isatty(2) };
	p->on = estimate_s >= CLI_PROGRESS_MIN_S;
	if (p->on)
		ilab_sim_set_progress(show, p, CLI_PROGRESS_PERIOD_S);
}

void cli_progress_end(struct cli_progress *p)
{
	if (!p->on)
		return;
	ilab_sim_set_progress(NULL, NULL, 0);
	if (p->tty && p->shown)
		fprintf(stderr, "\r\033[K");
	p->on = false;
}
