/* sweep_pool.c — the sweep engine's workers: runs cases k = first, first + step ... < nr in
 * forked worker processes, `jobs` at a time, each case's result sent back through a pipe. A
 * case's result depends on nothing that ran before it in the parent, and a crash fails that
 * case only. `iommulab sweep` (a grid's cases) and `iommulab calibrate` (one evaluation's
 * cases) both run on it: one way to run cases in parallel.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "experiments/sweep.h"

/* What a worker sends back through its pipe. */
struct wire {
	unsigned index;
	int status;
	char message[256];
	unsigned nr_figures;
	struct ilab_figure figures[ILAB_SCN_MAX_FIGURES];
};

struct worker {
	pid_t pid;
	int fd;
	unsigned k;
	double start;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- workers end with their parent ----------------------------------------------------------
 * A pool stopped by TERM, INT or HUP stops its workers before it returns (on_stop), and a
 * parent killed outright takes them with it (PR_SET_PDEATHSIG): a case must not run on for
 * minutes with nobody to take its result. */

static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };
static struct sigaction stop_old[3];
static volatile sig_atomic_t stop_sig;
static struct worker *volatile stop_workers; /* the running ones, for the handler */
static unsigned stop_jobs;

int ilab_pool_stop_signal(void)
{
	return stop_sig;
}

static void stop_all(void)
{
	struct worker *wk = stop_workers;

	for (unsigned j = 0; wk && j < stop_jobs; j++)
		if (wk[j].pid > 0)
			kill(wk[j].pid, SIGTERM);
}

static void on_stop(int sig)
{
	int saved = errno;

	stop_sig = sig;
	stop_all();
	errno = saved;
}

static void stop_handlers(struct worker *wk, unsigned jobs, bool on)
{
	struct sigaction sa = { .sa_handler = on_stop }; /* no SA_RESTART: waitpid returns */

	stop_workers = on ? wk : NULL;
	stop_jobs = jobs;
	for (unsigned i = 0; i < 3; i++) {
		if (!on) {
			sigaction(stop_signals[i], &stop_old[i], NULL);
			continue;
		}
		sigaction(stop_signals[i], NULL, &stop_old[i]);
		/* a signal ignored when we started (INT of a background job) stays ignored */
		if (stop_old[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
	}
}

/* In the new worker: the parent's handlers are not its own (it gets the ones from before the
 * pool, which remove its temporary files), and its parent's death is its: TERM, as the
 * parent's handler sends. */
static void worker_lifetime(pid_t parent)
{
	for (unsigned i = 0; i < 3; i++)
		sigaction(stop_signals[i], &stop_old[i], NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent || stop_sig) /* it died, or was stopped, before prctl */
		_exit(1);
}

/* The child: run case k, send the result, exit. */
static void __attribute__((noreturn)) run_child(ilab_pool_case_fn fn, void *ctx, unsigned k,
						int fd)
{
	struct ilab_case_result r;
	struct wire w = { .index = k };

	memset(&r, 0, sizeof(r));
	fn(ctx, k, &r);
	w.status = (int)r.status;
	snprintf(w.message, sizeof(w.message), "%s", r.message);
	w.nr_figures = r.nr_figures;
	memcpy(w.figures, r.figures, sizeof(w.figures));
	_exit(write(fd, &w, sizeof(w)) == (ssize_t)sizeof(w) ? 0 : 1);
}

static int start(ilab_pool_case_fn fn, void *ctx, unsigned k, struct worker *wk)
{
	pid_t parent = getpid();
	int p[2];

	if (pipe(p) != 0)
		return -errno;
	fflush(NULL); /* the child must not write the parent's buffered output again */
	wk->pid = fork();
	if (wk->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (wk->pid == 0) {
		worker_lifetime(parent);
		close(p[0]);
		run_child(fn, ctx, k, p[1]);
	}
	if (stop_sig) /* the handler ran between fork and the pid's store */
		kill(wk->pid, SIGTERM);
	close(p[1]);
	wk->fd = p[0];
	wk->k = k;
	wk->start = now();
	return 0;
}

/* The finished child's result into r. */
static void collect(struct worker *wk, int st, struct ilab_case_result *r)
{
	struct wire w;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	do
		n = read(wk->fd, &w, sizeof(w));
	while (n < 0 && errno == EINTR);
	close(wk->fd);
	r->host_seconds = now() - wk->start;
	if (n == (ssize_t)sizeof(w) && w.index == wk->k && w.nr_figures <= ILAB_SCN_MAX_FIGURES) {
		r->status = (enum ilab_case_status)w.status;
		memcpy(r->message, w.message, sizeof(r->message));
		r->message[sizeof(r->message) - 1] = '\0';
		r->nr_figures = w.nr_figures;
		memcpy(r->figures, w.figures, sizeof(r->figures));
		return;
	}
	r->status = ILAB_CASE_FAILED;
	if (WIFSIGNALED(st))
		snprintf(r->message, sizeof(r->message), "the worker process died (signal %d)",
			 WTERMSIG(st));
	else
		snprintf(r->message, sizeof(r->message), "the worker process sent no result "
			 "(exit status %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int ilab_pool_run(unsigned nr, unsigned first, unsigned step, unsigned jobs,
		  ilab_pool_case_fn fn, ilab_pool_done_fn done, void *ctx,
		  struct ilab_case_result *res)
{
	struct worker *wk;
	unsigned next = first, running = 0;
	int ret = 0;

	if (!jobs || !step || !fn)
		return -EINVAL;
	wk = calloc(jobs, sizeof(*wk));
	if (!wk)
		return -ENOMEM;
	stop_sig = 0;
	stop_handlers(wk, jobs, true);
	while (next < nr || running) {
		unsigned j;
		int st;
		pid_t pid;

		if ((ret || stop_sig) && !running)
			break;
		if (!ret && !stop_sig && next < nr && running < jobs) {
			for (j = 0; wk[j].pid; j++)
				;
			ret = start(fn, ctx, next, &wk[j]);
			if (!ret) {
				running++;
				next += step;
			}
			continue;
		}
		pid = waitpid(-1, &st, 0);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0) {
			ret = -errno;
			break;
		}
		for (j = 0; j < jobs && wk[j].pid != pid; j++)
			;
		if (j == jobs)
			continue;
		collect(&wk[j], st, &res[wk[j].k]);
		if (done && !stop_sig)
			done(ctx, wk[j].k, &res[wk[j].k]);
		wk[j].pid = 0;
		running--;
	}
	stop_handlers(wk, jobs, false);
	free(wk);
	return stop_sig ? -EINTR : ret;
}
