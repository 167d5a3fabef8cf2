/* cli.h — what the iommulab command-line front end's pieces share: the command table entry,
 * exit codes and the one-line error helpers. Not library API (that is include/iommulab/).
 */
#ifndef ILAB_TOOLS_CLI_H
#define ILAB_TOOLS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#ifndef ILAB_VERSION
#define ILAB_VERSION "0.1.0" /* keep in step with project(VERSION) in CMakeLists.txt */
#endif

#define CLI_PROG "iommulab"

enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,  /* the command ran and something went wrong */
	CLI_EXIT_USAGE = 2, /* bad command line or bad input (topology, scenario...) */
};

struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the command name */
	const char *synopsis;             /* "topo [--topology X] [--json]" */
	const char *summary;              /* one line for the command list */
	const char *help;                 /* options, one per line, for `<command> --help` */
};

const struct cli_command *cli_find_command(const char *name);
/* Print `usage: iommulab <synopsis>` and the command's help text. */
void cli_print_command_help(const struct cli_command *c, FILE *f);
/* Print "iommulab[ cmd]: <message>" and a hint line to stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report getopt's complaint about argv (opterr = 0, optstring starting with ':'). */
int cli_bad_option(const char *cmd, int opt, int argc, char **argv);

/* bench --breakdown: the simulator's JSON (ilab_sim_json) as a call-graph table and the
 * hottest cache lines (tools/breakdown.c). */
struct json_t;
void cli_print_breakdown(FILE *f, struct json_t *sim);

/* --trace FILE, --trace-limit-us N and --trace-limit-mb M (tools/trace_opt.c): each returns 0
 * or a CLI exit code after printing why. Open with no path does nothing (no limit may then be
 * set); otherwise the path joins files, the run's inputs and outputs, and must be none of them
 * (exit 2). Close stops tracing new simulators, closes the trace (NULL is fine) and says so on
 * stderr when the file reached its size bound. */
#include <stdint.h>
#include <iommulab/trace.h>
struct ilab_trace;
struct ilab_output_set;
struct cli_trace_opt {
	const char *path;   /* --trace */
	uint64_t limit_us;  /* --trace-limit-us: the window; 0 = the whole run */
	uint64_t max_bytes; /* --trace-limit-mb in bytes; 0 = no bound */
	bool limit_set;     /* either limit was given */
};
#define CLI_TRACE_OPT_INIT { .max_bytes = ILAB_TRACE_MAX_BYTES }
int cli_trace_limit(const char *cmd, const char *arg, struct cli_trace_opt *o);
int cli_trace_limit_mb(const char *cmd, const char *arg, struct cli_trace_opt *o);
int cli_trace_open(const char *cmd, const struct cli_trace_opt *o,
		   struct ilab_output_set *files, struct ilab_trace **t);
int cli_trace_close(const char *cmd, const struct cli_trace_opt *o, struct ilab_trace *t);
int cli_trace_own_opt(const char *cmd, const char *key, const char *val, struct cli_trace_opt *o);
/* netperf's and iperf3's host-time check (tools/cmd_netperf.c) of `runs` runs of cfg (netperf's
 * -i repeats it): 0 or CLI_EXIT_USAGE. */
struct ilab_netperf_cfg;
int cli_netperf_check_time(const char *cmd, const struct ilab_netperf_cfg *cfg, unsigned runs,
			   const char *shorten, double *estimate_s, uint64_t *sim_ns);
int cli_trace_start(const char *cmd, const struct cli_trace_opt *o, const char *profile,
		    const char *label, struct ilab_trace **t);

/* The progress line of a long simulated run (tools/cli_progress.c): start before the run with
 * its host-time estimate (no line unless it is at least CLI_PROGRESS_MIN_S) and the virtual
 * time it ends at (0: not known, e.g. a count of iterations); end after it, also on failure. */
#define CLI_PROGRESS_MIN_S 5.0
#define CLI_PROGRESS_PERIOD_S 2.0
struct cli_progress {
	const char *cmd;
	uint64_t total_ns;
	double t0;
	bool tty, on, shown;
};
void cli_progress_start(struct cli_progress *p, const char *cmd, double estimate_s,
			uint64_t total_ns);
void cli_progress_end(struct cli_progress *p);

/* --seed of every command (bench, fio, netperf, run; a sweep file's seed:): 1 .. 2^53. 2^53
 * because result files keep seeds as exact JSON integers; not 0, which many generators take
 * for "no seed / random" and which would be one more seed value that means nothing else. */
#define CLI_SEED_MAX (1ull << 53)

/* A decimal count in lo..hi, digits only: 0, or -1 (tools/cli_util.c). */
int cli_parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* Print root as indented JSON with sorted keys, with the simulator's statistics (JSON text,
 * may be NULL) under "stats"; consumes root (NULL: prints nothing). */
void cli_print_result_json(struct json_t *root, const char *stats);

int cmd_topo(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_fio(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_netperf(int argc, char **argv);
int cmd_iperf3(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_help(int argc, char **argv);

/* sweep and merge: write a sweep result (and its plots, next to it when plot); returns a CLI
 * exit code after saying what it wrote (tools/cmd_sweep.c). */
struct json_t;
int cli_sweep_save(const char *cmd, const struct json_t *doc, const char *out, bool plot);
/* The plots cli_sweep_save would draw for doc (a result or its header) next to out join
 * files; 0, or CLI_EXIT_USAGE after saying which one is an input or another output. */
int cli_sweep_plot_outputs(const char *cmd, struct ilab_output_set *files,
			   const struct json_t *doc, const char *out);

#endif /* ILAB_TOOLS_CLI_H */
