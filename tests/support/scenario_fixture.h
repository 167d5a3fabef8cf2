/* scenario_fixture.h — a scenario given as text, parsed and run once for a test group: the
 * set-up the report tests share. Not a test itself.
 */
#ifndef ILAB_TESTS_SCENARIO_FIXTURE_H
#define ILAB_TESTS_SCENARIO_FIXTURE_H

#include <stddef.h>

#include "iommulab/scenario.h"

struct scenario_fixture {
	struct ilab_scenario *s;
	struct ilab_scenario_result *r;
};

/* Register wl (unless a workload of its name already is), parse text as file `name`, run
 * every case with default options. Returns 0, or -1 with the error on stderr. */
int scenario_fixture_up(struct scenario_fixture *f, const struct ilab_workload *wl,
			const char *text, const char *name);
void scenario_fixture_down(struct scenario_fixture *f);

/* Load a scenario of `workload` whose profile is the shipped `profile` without its nic:
 * section (the file's last), from a scratch directory (a profile: key names a file there).
 * Returns ilab_scenario_load's result, its message in err; -EIO if the scratch files could not
 * be made. */
int scenario_load_without_nic(const char *profile, const char *workload, char *err,
			      size_t errlen);

#endif
