/* scenario_fixture.c — see scenario_fixture.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The shipped profile, copied up to its nic: line, and a one-case scenario naming it. */
static int write_scratch(const char *profile, const char *workload)
{
	char src[1024], line[512];
	FILE *in, *out;
	int ok;

	snprintf(src, sizeof(src), "%s/../../profiles/%s.yaml", ILAB_TESTDATA, profile);
	in = fopen(src, "r");
	out = fopen("nonic.yaml", "w");
	ok = in && out;
	while (ok && fgets(line, sizeof(line), in) && strncmp(line, "nic:", 4))
		fputs(line, out);
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = 0;
	out = ok ? fopen("s.yaml", "w") : NULL;
	if (!out)
		return -1;
	fprintf(out, "name: t\nseed: \"001\"\ntitle: \"t\"\nprofile: nonic.yaml\n"
		     "workload: { type: %s }\ncases:\n  - label: a\n", workload);
	return fclose(out) ? -1 : 0;
}

int scenario_load_without_nic(const char *profile, const char *workload, char *err,
			      size_t errlen)
{
	char dir[] = "/tmp/ilab-nonic-XXXXXX", cwd[1024];
	struct ilab_scenario *s = NULL;
	int rc = -EIO;

	if (!getcwd(cwd, sizeof(cwd)) || !mkdtemp(dir)) {
		snprintf(err, errlen, "scratch directory: %s", strerror(errno));
		return -EIO;
	}
	if (chdir(dir) == 0) {
		if (write_scratch(profile, workload) == 0)
			rc = ilab_scenario_load("s.yaml", &s, err, errlen);
		else
			snprintf(err, errlen, "scratch files in %s: %s", dir, strerror(errno));
		ilab_scenario_free(s);
		unlink("s.yaml");
		unlink("nonic.yaml");
		if (chdir(cwd))
			rc = -EIO;
	}
	rmdir(dir);
	return rc;
}
