/* trace_opt.c — `--trace FILE`, `--trace-limit-us N` and `--trace-limit-mb M` of `bench` and
 * `run`: their parsing
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
int cli_trace_limit(const char *cmd, const char *arg, struct cli_trace_opt *o)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = (arg[0] >= '0' && arg[0] <= '9') ? strtoull(arg, &end, 10) : 0;
	if (!v || errno || *end || v > 1000000000ull)
		return cli_usage_error(cmd, "--trace-limit-us must be a number in 1..1000000000, "
				       "not '%s'", arg);
	o->limit_us = v;
	o->limit_set = true;
	return 0;
}

/* The size bound in MiB: 0 (none) .. 1 TiB. */
int cli_trace_limit_mb(const char *cmd, const char *arg, struct cli_trace_opt *o)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = (arg[0] >= '0' && arg[0] <= '9') ? strtoull(arg, &end, 10) : ~0ull;
	if (v == ~0ull || errno || *end || v > (1ull << 20))
		return cli_usage_error(cmd, "--trace-limit-mb must be a number in 0..1048576 "
				       "(0: no bound), not '%s'", arg);
	o->max_bytes = v << 20;
	o->limit_set = true;
	return 0;
}

int cli_trace_open(const char *cmd, const struct cli_trace_opt *o,
		   struct ilab_output_set *files, struct ilab_trace **t)
{
	const char *path = o->path;
	char err[2048];

	*t = NULL;
	if (!path) {
		if (o->limit_set)
			return cli_usage_error(cmd, "--trace-limit-us and --trace-limit-mb need "
					       "--trace FILE");
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
	if (ilab_trace_open(path, o->limit_us * 1000, o->max_bytes, t, err, sizeof(err))) {
		fprintf(stderr, "%s %s: --trace %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int cli_trace_close(const char *cmd, const struct cli_trace_opt *o, struct ilab_trace *t)
{
	char err[512];

	ilab_trace_use(NULL, NULL);
	if (ilab_trace_stopped(t, err, sizeof(err)))
		fprintf(stderr, "%s %s: --trace %s: stopped at %llu MiB in %s; the run went on "
			"(--trace-limit-us N writes a shorter window, --trace-limit-mb M a longer "
			"file, 0 none)\n", CLI_PROG, cmd, o->path,
			(unsigned long long)(o->max_bytes >> 20), err);
	if (ilab_trace_close(t, err, sizeof(err))) {
		fprintf(stderr, "%s %s: --trace %s\n", CLI_PROG, cmd, err);
		return CLI_EXIT_FAIL;
	}
	return 0;
}

/* The trace's three options in a tool's own "--key=value" style (fio, netperf, iperf3): 0 when
 * taken, CLI_EXIT_USAGE after one line, 1 when key is not one of them. */
int cli_trace_own_opt(const char *cmd, const char *key, const char *val, struct cli_trace_opt *o)
{
	if (!strcmp(key, "trace")) {
		if (!val || !*val)
			return cli_usage_error(cmd, "--trace needs a file name");
		o->path = val;
		return 0;
	}
	if (!strcmp(key, "trace-limit-us"))
		return cli_trace_limit(cmd, val ? val : "", o) ? CLI_EXIT_USAGE : 0;
	if (!strcmp(key, "trace-limit-mb"))
		return cli_trace_limit_mb(cmd, val ? val : "", o) ? CLI_EXIT_USAGE : 0;
	return 1;
}

/* fio, netperf, iperf3: open the trace (never over the profile file) and trace the simulator
 * the run creates next as one process named label. 0 or a CLI exit code. */
int cli_trace_start(const char *cmd, const struct cli_trace_opt *o, const char *profile,
		    const char *label, struct ilab_trace **t)
{
	struct ilab_output_set files = ILAB_OUTPUT_SET_INIT;
	int ret;

	ilab_output_set_input(&files, profile, "the profile");
	ret = cli_trace_open(cmd, o, &files, t);
	ilab_output_set_free(&files);
	if (!ret && *t)
		ilab_trace_use(*t, label);
	return ret;
}
