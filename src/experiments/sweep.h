/* sweep.h — design sweeps (iommulab sweep, docs/sweep.md): a sweep file names a base (a
 * scenario's case, or a workload on a profile) and a grid of axes, each a parameter path
 * (params.NAME, mechanisms.NAME or profile.SECTION.KEY) with its values. Its cases are the
 * grid's Cartesian product, first axis slowest. This is the model, its strict parser and one
 * case's run; not the parallel driver (tools/cmd_sweep.c) nor the result file
 * (src/report/sweep_result.c).
 */
#ifndef ILAB_EXPERIMENTS_SWEEP_H
#define ILAB_EXPERIMENTS_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iommulab/scenario.h"

#define ILAB_SWEEP_MAX_AXES 8
#define ILAB_SWEEP_MAX_VALUES 64
#define ILAB_SWEEP_MAX_CASES 4096 /* a grid larger than this is refused (docs/sweep.md) */
#define ILAB_SWEEP_VALUE_MAX 64
#define ILAB_SWEEP_PATH_MAX 96

enum ilab_sweep_kind { ILAB_SWEEP_PARAM, ILAB_SWEEP_MECH, ILAB_SWEEP_PROFILE };

struct ilab_sweep_value {
	char text[ILAB_SWEEP_VALUE_MAX]; /* as written in the sweep file */
	bool quoted;                     /* written in quotes: a string, never a number */
	unsigned line, column;
};

struct ilab_sweep_axis {
	char path[ILAB_SWEEP_PATH_MAX]; /* "params.threads", "profile.smmu.tlbi_sync_ns" */
	enum ilab_sweep_kind kind;
	const char *name;               /* path after its prefix */
	unsigned line, column;          /* of the path */
	unsigned nr_values;
	struct ilab_sweep_value values[ILAB_SWEEP_MAX_VALUES];
};

struct ilab_sweep {
	char file[ILAB_SCN_PATH_MAX];
	char name[ILAB_SCN_NAME_MAX];
	char hash[32];                  /* of the sweep file, base scenario and profile texts */
	struct ilab_scenario *scn;      /* the base: its first case is the one swept */
	char *profile_text;             /* the base profile's YAML */
	size_t profile_len;
	bool quick;
	uint64_t seed;
	unsigned nr_axes;
	struct ilab_sweep_axis axes[ILAB_SWEEP_MAX_AXES];
	unsigned nr_cases;
};

/* Parse and check a sweep file: every value and every case is checked (parameter ranges,
 * mechanism names, the profile parser on each case's profile, the workload's check of each
 * case against its machine) before anything runs. Returns 0 and *out (free with
 * ilab_sweep_free), or -EINVAL with err = "file:line:column: message", or another negative
 * errno with err = "file: reason". */
int ilab_sweep_load(const char *path, struct ilab_sweep **out, char *err, size_t errlen);
void ilab_sweep_free(struct ilab_sweep *sw);

/* The value index of axis a in case k. */
unsigned ilab_sweep_value_index(const struct ilab_sweep *sw, unsigned k, unsigned a);

/* Case k's workload case (base with the axes' values) and, when a profile axis exists, its
 * profile text (*profile malloc'd, else NULL: the base profile). */
int ilab_sweep_case(const struct ilab_sweep *sw, unsigned k, struct ilab_case *c,
		    char **profile, size_t *profile_len, char *err, size_t errlen);

/* Run case k (its profile written to a temporary file under $TMPDIR when it has one). The
 * result's status and message say whether it ran; stats_json and runs are not kept. */
void ilab_sweep_run_case(const struct ilab_sweep *sw, unsigned k, struct ilab_case_result *r);

/* Run case c of scenario s (c already effective: quick overrides applied) on the profile file
 * profile (NULL: the scenario's) with simulator seed seed, alone: no effects, no spread. The
 * result's status and message say whether it ran; stats_json and runs are not kept. */
void ilab_case_run_alone(const struct ilab_scenario *s, const struct ilab_case *c,
			 const char *profile, uint64_t seed, struct ilab_case_result *r);

/* ---- the workers (sweep_pool.c) ---- */

/* Run case k into r (in a worker process). */
typedef void (*ilab_pool_case_fn)(void *ctx, unsigned k, struct ilab_case_result *r);
/* Case k finished (in the parent): r is its result, host_seconds set. */
typedef void (*ilab_pool_done_fn)(void *ctx, unsigned k, const struct ilab_case_result *r);

/* Run the cases k = first, first + step ... < nr into res[k], each in its own forked worker,
 * jobs at a time; done (may be NULL) after each. A worker that dies or sends nothing fails its
 * case (status FAILED, message says why). Returns 0, or a negative errno when workers could
 * not be started (the cases already started are waited for), or -EINTR when TERM, INT or HUP
 * stopped the pool: its workers are stopped and waited for, and done is not called after the
 * signal. Workers die with the process that started them (PR_SET_PDEATHSIG). */
int ilab_pool_run(unsigned nr, unsigned first, unsigned step, unsigned jobs,
		  ilab_pool_case_fn fn, ilab_pool_done_fn done, void *ctx,
		  struct ilab_case_result *res);

/* The signal that stopped the last ilab_pool_run (0 if none). */
int ilab_pool_stop_signal(void);

#endif /* ILAB_EXPERIMENTS_SWEEP_H */
