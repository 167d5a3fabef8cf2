/* report.h — turning a scenario result into what people read: the comparison of each published
 * figure with ours (ratio, tolerance, verdict), the human table, the result JSON (schema
 * "iommulab-result/1", docs/result-schema.md) and a gnuplot plot.
 * It is not the runner (scenario.h) and measures nothing.
 */
#ifndef IOMMULAB_REPORT_H
#define IOMMULAB_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "iommulab/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ILAB_RESULT_SCHEMA "iommulab-result/1"

enum ilab_verdict {
	ILAB_VERDICT_NO_DATA = 0, /* we have no figure for this metric (not run, failed) */
	ILAB_VERDICT_WITHIN,
	ILAB_VERDICT_OUTSIDE,
};

struct ilab_comparison {
	const struct ilab_reference *ref;
	bool have_ours;
	double ours_raw; /* as measured */
	double ours;     /* truncated to the reference's resolution, if it has one */
	double ratio;    /* ours / seed figure */
	double tolerance;
	enum ilab_verdict verdict;
};

/* The tolerance a reference is judged with: its own, else by kind (calibration: the
 * scenario's calibration bound; prediction and undecided: the prediction bound). */
double ilab_reference_tolerance(const struct ilab_scenario *s, const struct ilab_reference *ref);
/* Compare one published figure with a case's result (r may be NULL: no data).
 * eq: within when |ours/seed - 1| <= tol; gt ("> seed"): within when ours >= seed*(1-tol);
 * lt: within when ours <= seed*(1+tol). */
void ilab_compare(const struct ilab_scenario *s, const struct ilab_reference *ref,
		  const struct ilab_case_result *r, struct ilab_comparison *out);

/* A published effect (struct ilab_effect) judged by direction: the seed's change of a metric
 * from one case to another against ours (to / from - 1, each side compared as in
 * ilab_compare, so with the same truncation). A change within ±ILAB_EFFECT_FLAT counts as no
 * change: the posts' figures carry no more precision than that. */
#define ILAB_EFFECT_FLAT 0.02

enum ilab_effect_verdict {
	ILAB_EFFECT_NO_DATA = 0, /* one of our two figures is missing, or ours for `from` is 0 */
	ILAB_EFFECT_SAME,        /* same direction, or no change on either side */
	ILAB_EFFECT_OPPOSITE,    /* both change, in opposite directions */
	ILAB_EFFECT_MISSING,     /* the seed's figures change, ours do not */
	ILAB_EFFECT_SPURIOUS,    /* ours change, the seed's do not */
};

struct ilab_effect_comparison {
	const struct ilab_effect *effect;
	bool have_ours;
	double seed_change; /* seed to / seed from - 1 */
	double ours_change; /* ours to / ours from - 1 (when have_ours) */
	bool bound;         /* a published side is a bound ("> 550"): seed_change is a limit */
	/* Both cases ran and their engine statistics are byte-identical: the mechanism the
	 * effect switches does not act in this case of the model (for example one page, or one
	 * block mapping, where map_pages and per-page make the same call), so ours_change is 0
	 * by construction and a published change is not the mechanism's. */
	bool identical_runs;
	/* With --repeat: ours_change of each seed's runs (each side truncated as in
	 * ilab_compare), their min, max and sample standard deviation; ours_change itself is
	 * from the means. within_spread: |ours_change| < change_sd, the model's change is smaller
	 * than its run-to-run spread, so its direction is not established (never with sd 0). */
	bool have_spread;
	double change_min, change_max, change_sd;
	bool within_spread;
	enum ilab_effect_verdict verdict;
};

void ilab_compare_effect(const struct ilab_scenario_result *r, const struct ilab_effect *e,
			 struct ilab_effect_comparison *out);
/* "no_data", "same", "opposite", "missing", "spurious" */
const char *ilab_effect_verdict_name(enum ilab_effect_verdict v);

/* A figure across a case's runs (--repeat). */
struct ilab_spread {
	unsigned n;
	double mean, min, max, sd; /* sd: sample standard deviation (n - 1) */
};

/* The spread of figure i (index into r->figures) over r's runs; false when r has fewer than
 * two runs (no --repeat) or is not ok. */
bool ilab_figure_spread(const struct ilab_case_result *r, unsigned i, struct ilab_spread *out);
/* The sample standard deviation of n values with a stride, and their mean, min and max. */
void ilab_spread_of(const double *v, unsigned n, unsigned stride, struct ilab_spread *out);

const char *ilab_case_status_name(enum ilab_case_status st); /* "ok", "not_implemented", "failed" */
const char *ilab_verdict_name(enum ilab_verdict v);          /* "no_data", "within", "outside" */
/* "ok", "partial", "not_implemented" or "failed" for the whole scenario. */
const char *ilab_result_status(const struct ilab_scenario_result *r);

/* The result as a JSON object (new reference; NULL when out of memory). Deterministic: no
 * wall-clock times, numbers that are integral are JSON integers. */
json_t *ilab_result_json(const struct ilab_scenario_result *r);
/* Write it with sorted keys and a trailing newline. Returns 0 or -EIO/-ENOMEM. */
int ilab_result_write_json(const struct ilab_scenario_result *r, FILE *f);
/* Write it to path. Returns 0, or a negative errno with err = "path: reason". */
int ilab_result_save_json(const struct ilab_scenario_result *r, const char *path, char *err,
			  size_t errlen);

/* The human table: one row per published figure — case, metric, seed figure, iommulab's,
 * ratio, kind, verdict (or why there is no figure). */
int ilab_report_table(const struct ilab_scenario_result *r, FILE *f);
/* Format a figure the way the table does: integral values exactly, others with 3-4 significant
 * digits ("240", "1215539", "0.1", "241.4"; from 1000 up, rounded to an integer). */
void ilab_report_format_number(double v, char *buf, size_t len);

/* Write <dir>/<scenario>.gp and render <dir>/<scenario>.png with gnuplot ($IOMMULAB_GNUPLOT or
 * `gnuplot` from PATH). Returns 0 (msg: the PNG's path), 1 when it skipped (msg says why: no
 * figure to plot, or gnuplot missing — the script is still written when there is data), or a
 * negative errno (msg says what failed). */
int ilab_report_plot(const struct ilab_scenario_result *r, const char *dir, char *msg,
		     size_t msglen);

#ifdef __cplusplus
}
#endif

#endif /* IOMMULAB_REPORT_H */
