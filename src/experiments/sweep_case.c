/* sweep_case.c — runs one case of a sweep: the base scenario with the case's parameters and
 * mechanisms, on the case's profile (written to a temporary file when a profile axis changed
 * it, since the workloads open their profile by name or file). Through ilab_scenario_run, so a
 * sweep case measures exactly what a scenario case with the same settings would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/sweep.h"
#include "util/atomic_file.h"

/* The profile text in a new file under $TMPDIR; its name in path. */
static int write_profile(const char *text, size_t len, char *path, size_t pathlen)
{
	const char *dir = getenv("TMPDIR");
	int fd, ret = 0;
	ssize_t n;
	sigset_t held;

	snprintf(path, pathlen, "%s/iommulab-sweep-XXXXXX.yaml", dir && *dir ? dir : "/tmp");
	ilab_afile_hold_signals(&held);
	fd = mkstemps(path, 5);
	if (fd < 0) {
		ret = -errno;
		ilab_afile_release_signals(&held);
		return ret;
	}
	ilab_afile_track(path); /* a stopped sweep's worker removes it (TERM) */
	ilab_afile_release_signals(&held);
	n = write(fd, text, len);
	if (n != (ssize_t)len) /* a full $TMPDIR: say so, not "Input/output error" */
		ret = n < 0 ? -errno : -ENOSPC;
	if (close(fd) != 0 && !ret)
		ret = -errno;
	if (ret) {
		unlink(path);
		ilab_afile_untrack(path);
	}
	return ret;
}

static void fail(struct ilab_case_result *r, const char *what)
{
	r->status = ILAB_CASE_FAILED;
	r->nr_figures = 0;
	snprintf(r->message, sizeof(r->message), "%.250s", what);
}

void ilab_case_run_alone(const struct ilab_scenario *scn, const struct ilab_case *c,
			 const char *profile, uint64_t seed, struct ilab_case_result *r)
{
	struct ilab_run_options ro = { .seed = seed };
	struct ilab_scenario_result *res = NULL;
	struct ilab_scenario s = *scn; /* shares nothing it frees: cases points at c */
	char msg[512];

	memset(r, 0, sizeof(*r));
	if (profile)
		snprintf(s.profile, sizeof(s.profile), "%s", profile);
	s.cases = (struct ilab_case *)c;
	s.nr_cases = 1;
	s.effects = NULL;
	s.nr_effects = 0;
	if (ilab_scenario_run(&s, &ro, &res, msg, sizeof(msg)) < 0) {
		fail(r, msg);
		return;
	}
	*r = res->cases[0];
	free(r->stats_json);
	free(r->runs);
	r->stats_json = NULL;
	r->runs = NULL;
	res->nr_cases = 0; /* its one case's pointers are freed above */
	ilab_scenario_result_free(res);
}

void ilab_sweep_run_case(const struct ilab_sweep *sw, unsigned k, struct ilab_case_result *r)
{
	struct ilab_case c;
	char msg[512], path[ILAB_SCN_PATH_MAX] = "", *text = NULL;
	size_t len;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = ilab_sweep_case(sw, k, &c, &text, &len, msg, sizeof(msg));
	if (ret) {
		fail(r, msg);
		return;
	}
	if (text) {
		ret = write_profile(text, len, path, sizeof(path));
		free(text);
		if (ret) {
			snprintf(msg, sizeof(msg), "cannot write the case's profile: %s",
				 strerror(-ret));
			fail(r, msg);
			return;
		}
	}
	ilab_case_run_alone(sw->scn, &c, path[0] ? path : NULL, sw->seed, r);
	if (path[0]) {
		unlink(path);
		ilab_afile_untrack(path);
	}
}
