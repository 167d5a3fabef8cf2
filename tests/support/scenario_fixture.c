/* scenario_fixture.c — see scenario_fixture.h. */
#include <stdio.h>
#include <string.h>

#include "scenario_fixture.h"

int scenario_fixture_up(struct scenario_fixture *f, const struct ilab_workload *wl,
			const char *text, const char *name)
{
	char err[1024];

	if (!ilab_workload_find(wl->name) && ilab_workload_register(wl) != 0)
		return -1;
	if (ilab_scenario_parse(text, strlen(text), name, &f->s, err, sizeof(err)) < 0 ||
	    ilab_scenario_run(f->s, NULL, &f->r, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		return -1;
	}
	return 0;
}

void scenario_fixture_down(struct scenario_fixture *f)
{
	ilab_scenario_result_free(f->r);
	ilab_scenario_free(f->s);
	f->r = NULL;
	f->s = NULL;
}
