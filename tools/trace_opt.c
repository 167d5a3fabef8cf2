/* trace_opt.c — `--trace FILE` and `--trace-limit-us N` of `bench` and `run`: their parsing
 * and the trace file's opening and closing with the CLI's messages and exit codes. Not the
 * trace itself (src/sim/trace.c, docs/trace.md).
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/trace.h"
#include "util/output_set.h"

/* The window, in simulated microseconds: 1 .. 10^9 (1000 s, the simulator's time limit). */
int cli_trace_limit(const char *cmd, const char *arg, uint64_t *us)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = (arg[0] >= '0' && arg[0] <= '9') ? strtoull(arg, &end, 10) : 0;
	if (!v || errno || *end || v > 1000000000ull)
		return cli_usage_error(cmd, "--trace-limit-us must be a number in 1..1000000000, "
				       "not '%s'", arg);
	*us = v;
	return 0;
}

int cli_trace_open(const char *cmd, const char *path, uint64_t limit_us,
		   struct ilab_output_set *files, struct ilab_trace **t)
{
	char err[2048];

	*t = NULL;
	if (!path) {
		if (limit_us)
			return cli_usage_error(cmd, "--trace-limit-us needs --trace FILE");
		return 0;
	}
	if (!*path)
		return cli_usage_error(cmd, "--trace needs a file name");
	/* not a directory, not an input, not a result file of the same run */
	if (ilab_output_set_output(files, path, "--trace", err, sizeof(err))) {
		fprintf(stderr, "%s %s: %s%s\n", CLI_PROG, cmd, strncmp(err, "--trace ", 8) ?
			"--trace " : "", err);
		return CLI_EXIT_USAGE;
	}
	if (ilab_trace_open(path, limit_us * 1000, t, err, sizeof(err))) {
		fprintf(stderr, "%s %s: --trace %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int cli_trace_close(const char *cmd, struct ilab_trace *t)
{
	char err[512];

	ilab_trace_use(NULL, NULL);
	if (ilab_trace_close(t, err, sizeof(err))) {
		fprintf(stderr, "%s %s: --trace %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_FAIL;
	}
	return 0;
}
