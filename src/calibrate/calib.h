/* calib.h — `iommulab calibrate` (docs/calibration.md): one joint fit of a machine profile's
 * free constants to a measurement set (published figures of scenario cases, and the effects
 * between them), with the analysis of what the set pins. The pieces:
 *   free.c        the free constants: a profile's free: section or the command line, bounds
 *                 checked against what the profile loader accepts;
 *   set.c         the measurement set: scenarios' cases with published figures, and effects;
 *   eval.c        one evaluation: every case run on the profile with the constants set (the
 *                 sweep engine's workers), cached by value; the robust objective;
 *   fit.c         NLopt's bounded derivative-free optimiser, several seeded starting points;
 *   analyse.c     each constant's sensitivity, and the constants the set cannot separate;
 *   crossval.c    leave-one-experiment-out and k-fold over cases;
 *   profile_out.c the fitted profile (comments and sources kept, values replaced in place);
 *   report.c      the text and JSON report;
 *   correlator.c  model against measured, drawn (also by `iommulab run`).
 * It is not the command line (tools/cmd_calibrate.c).
 */
#ifndef ILAB_CALIBRATE_CALIB_H
#define ILAB_CALIBRATE_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iommulab/scenario.h"

struct json_t;

#define ILAB_CALIB_MAX_FREE 16
#define ILAB_CALIB_KEY_MAX 96
#define ILAB_CALIB_MAX_EXP 32
/* The robust loss: soft-L1 on log(model / measured) with this scale, log(1.10): a residual
 * within the calibration tolerance (±10 %) counts about as its square, a larger one grows
 * only linearly, so one figure the model cannot reach does not drive the fit. */
#define ILAB_CALIB_LOSS_SCALE 0.0953101798043249 /* log(1.1) */
/* The direction of an effect: `iommulab run` counts an effect when the model's change, from
 * the truncated figures, lies beyond ±ILAB_EFFECT_FLAT on the published side (compare.c). The
 * size term above scores |log(model ratio / published ratio)| whatever the side, so a fit can
 * trade a direction away for a little size elsewhere. Each effect also pays for the model's
 * (untruncated) log ratio falling short of its margin on that side
 * (ilab_calib_direction_shortfall), at first WEIGHT times as steeply as a figure far out of
 * tolerance, saturating when far out of reach (eval.c, direction_loss). */
#define ILAB_CALIB_DIRECTION_WEIGHT 10.0

struct ilab_calib_free {
	char key[ILAB_CALIB_KEY_MAX]; /* "smmu.sync_ns": section.key of the profile */
	double min, max;              /* bounds, whole numbers >= 1 */
	double prior;                 /* the profile's value before the fit */
	double value;                 /* the fitted value (a whole number) */
	bool fixed;                   /* held at prior: the set does not pin it (cross-validation) */
};

enum ilab_calib_term_kind { ILAB_CALIB_FIGURE, ILAB_CALIB_EFFECT };

/* How the objective weighs its terms. By term, an experiment counts as many times as it has
 * figures and effects: seed 002's 132 terms outweigh seed 000's 3 by 44 to 1, so a joint
 * fit gives seed 000's one CMD_SYNC wait away for a little on seed 002's many correlated
 * sizes. By experiment, each experiment with an active term weighs the same in all: its
 * terms are each multiplied by (active terms) / (experiments x its active terms), which keeps
 * the objective's total weight the number of active terms. */
enum ilab_calib_weights { ILAB_CALIB_WEIGH_TERMS, ILAB_CALIB_WEIGH_EXPERIMENTS };

/* One term of the objective: a published figure, or an effect (the ratio of two cases'
 * published figures of one metric). */
struct ilab_calib_term {
	enum ilab_calib_term_kind kind;
	unsigned exp;     /* its experiment (scenario) */
	unsigned c, from; /* the case (set index); an effect: c is `to`, from its baseline */
	char metric[ILAB_SCN_KEY_MAX];
	char raw[ILAB_SCN_KEY_MAX]; /* the figure the model's value is read from: metric, or its
				     * untruncated companion (map_latency -> map_ns) */
	double raw_scale;           /* raw's value times this is in metric's unit */
	char label[320];  /* "seed002-map-pages/t1-g256-per-page/unmap_latency" */
	char unit[ILAB_SCN_UNIT_MAX];
	double measured;  /* a figure: as published (the middle of its truncation step); an
			   * effect: the ratio to / from */
	enum ilab_ref_relation rel;
	double tolerance; /* a figure's own bound (by kind when it gives none) */
	int direction;    /* an effect: the published change's side, -1, 0 (flat) or +1, as
			   * `iommulab run` judges it (beyond ±ILAB_EFFECT_FLAT) */
	double margin;    /* an effect: the log ratio the model must reach on that side (for a
			   * flat one: stay within) so that the truncated figures still show it */
	bool active;      /* in the objective (cross-validation leaves some out) */
};

struct ilab_calib_case {
	const struct ilab_scenario *scn;
	unsigned exp;
	struct ilab_case c; /* effective: quick overrides applied */
};

struct ilab_calib_cache; /* eval.c */

struct ilab_calib_set {
	char profile_name[ILAB_SCN_NAME_MAX];
	char profile_path[ILAB_SCN_PATH_MAX];
	char *profile_text;
	size_t profile_len;
	unsigned nr_exp;
	struct ilab_scenario *exp[ILAB_CALIB_MAX_EXP];
	unsigned nr_cases;
	struct ilab_calib_case *cases;
	unsigned nr_terms;
	struct ilab_calib_term *terms;
	unsigned nr_free;
	struct ilab_calib_free free[ILAB_CALIB_MAX_FREE];
	bool quick;
	enum ilab_calib_weights weights;
	unsigned jobs;               /* cases of one evaluation run at once */
	FILE *progress;              /* a line per evaluation, NULL: quiet */
	unsigned nr_evals;           /* evaluations run (cache misses) */
	char parts_note[512];        /* the measured parts applied (parts.c), "" for none */
	char tree[64];               /* the source tree when the set was opened (record.c): a fit
				      * of an hour outlives the HEAD it started on */
	struct ilab_calib_cache *cache;
};

/* ---- free.c ---- */
/* The free: section of the set's profile text into set->free (with each constant's value as
 * its prior). Returns 0 or -EINVAL with err "file:line:column: message". */
int ilab_calib_free_from_profile(struct ilab_calib_set *set, char *err, size_t errlen);
/* "smmu.sync_ns=10:2000" (the command line's --free): added, or replacing the profile's. */
int ilab_calib_free_add_arg(struct ilab_calib_set *set, const char *arg, char *err,
			    size_t errlen);
/* Each free constant names a whole-number key of the profile, and its bounds lie within what
 * the profile loader accepts for that key. */
int ilab_calib_free_check(struct ilab_calib_set *set, char *err, size_t errlen);

/* ---- set.c ---- */
/* A set on profile (a name or file) with the given scenarios (names or files; scenarios
 * NULL: the built-in scenarios with a seed whose profile is this one; non-NULL with nr 0:
 * none, for --measurements alone). */
int ilab_calib_set_open(struct ilab_calib_set **out, const char *profile,
			const char *const *scenarios, unsigned nr, bool quick, char *err,
			size_t errlen);
void ilab_calib_set_free(struct ilab_calib_set *set);
/* Keep only the cases whose label is in labels (and the terms on them). */
int ilab_calib_set_only_cases(struct ilab_calib_set *set, const char *const *labels,
			      unsigned nr, char *err, size_t errlen);
/* An effect's direction and margin (ilab_calib_term) from its two figures, from -> to, and
 * the truncation step of each (0: none): the direction as `iommulab run` judges it, beyond
 * ±ILAB_EFFECT_FLAT; the margin, that band plus both steps relative to their figures (so that
 * a model change beyond it keeps its side after truncation), never more than the change
 * itself. A flat effect: within the band less the steps (0 when they fill it). */
void ilab_calib_effect_direction(struct ilab_calib_term *t, double from, double to,
				 double from_step, double to_step);
/* A figure's term: in tolerance (its relation and bound) for the model's value v. */
bool ilab_calib_term_within(const struct ilab_calib_term *t, double v);

/* ---- eval.c ---- */
/* The model's value of every term at theta (one value per free constant, rounded to whole
 * numbers: profile constants are integers): *tv points at nr_terms values, owned by the
 * cache. Returns 0, or a negative errno with err when a case failed. */
int ilab_calib_eval(struct ilab_calib_set *set, const double *theta, const double **tv,
		    char *err, size_t errlen);
/* The points evaluated so far (the cache's keys, one whole number per free constant). */
unsigned ilab_calib_cache_nr(const struct ilab_calib_set *set);
const long long *ilab_calib_cache_key(const struct ilab_calib_set *set, unsigned i);
/* Term i's residual log(model / measured) for model value v (one-sided for gt/lt). */
double ilab_calib_residual(const struct ilab_calib_term *t, double v);
/* An effect's shortfall of direction for model ratio v: how far log(v) falls short of the
 * term's margin on its published side (a flat effect: how far |log v| exceeds its margin);
 * 0 for a figure and for an effect safely in its direction. */
double ilab_calib_direction_shortfall(const struct ilab_calib_term *t, double v);
/* The objective over the active terms: sum of s^2 * 2 (sqrt(1 + (r/s)^2) - 1), plus, per
 * effect, the loss on its direction shortfall (eval.c, direction_loss). */
double ilab_calib_objective(const struct ilab_calib_set *set, const double *tv);
/* The profile text with the free constants set to theta (rounded); *out malloc'd. */
int ilab_calib_profile_text(const struct ilab_calib_set *set, const double *theta,
			    char **out, size_t *outlen, char *err, size_t errlen);

/* ---- fit.c ---- */
struct ilab_calib_fit {
	double theta[ILAB_CALIB_MAX_FREE]; /* best values (whole numbers) */
	double objective;
	double prior_objective;            /* at the priors (clamped to the bounds) */
	unsigned starts, evals;            /* evaluations asked by the optimiser (cache hits too) */
	int nlopt_result;                  /* of the best start */
};
/* Fit the non-fixed free constants (fixed ones stay at their prior) from `starts` starting
 * points: the priors (clamped to the bounds), then points drawn log-uniformly in the bounds
 * from a stream seeded with seed. Deterministic for a given seed. max_evals per start
 * (0: 40 per constant + 20). */
int ilab_calib_fit(struct ilab_calib_set *set, uint64_t seed, unsigned starts,
		   unsigned max_evals, struct ilab_calib_fit *fit, char *err, size_t errlen);

/* ---- analyse.c ---- */
struct ilab_calib_sens {
	double d_minus[ILAB_CALIB_MAX_FREE], d_plus[ILAB_CALIB_MAX_FREE]; /* objective change at
									   * x0.9 and x1.1 */
	double norm[ILAB_CALIB_MAX_FREE]; /* |d log(figure) / d log(constant)| over active terms */
	unsigned nr_notes;
	char notes[2 * ILAB_CALIB_MAX_FREE][256]; /* what the set cannot separate, in words */
	/* the pairs (a, b) reported as inseparable; b == a: a constant nothing responds to */
	unsigned nr_pairs;
	unsigned pair[ILAB_CALIB_MAX_FREE * ILAB_CALIB_MAX_FREE][2];
};
/* Around theta (objective f0): sensitivity and separability from the evaluations at x0.9 and
 * x1.1 of each constant (the Jacobian of log-figures w.r.t. log-constants by central
 * differences): a constant no active term responds to (max |d log f / d log c| < 0.01), two
 * whose columns are near-collinear (|cos| > 0.99), and a flat direction of three or more
 * (smallest eigenvalue of the columns' correlation matrix < 0.001). */
int ilab_calib_analyse(struct ilab_calib_set *set, const double *theta, double f0,
		       struct ilab_calib_sens *s, char *err, size_t errlen);

/* ---- crossval.c ---- */
struct ilab_calib_cv_exp {
	unsigned exp;
	bool loeo;                /* predicted by a fit without it (else: by case folds only) */
	unsigned figures, within; /* out-of-sample figures of this experiment, in tolerance */
	double median_abs_log;    /* median |log(model / measured)| of them */
	char pinned_only[256];    /* constants only it pins, held at their prior: "a=87, b=3" */
};
struct ilab_calib_cv {
	unsigned nr;
	struct ilab_calib_cv_exp e[ILAB_CALIB_MAX_EXP];
	unsigned folds;               /* k of the k-fold over cases */
	unsigned fold_figures, fold_within;
	double fold_median_abs_log;
	double *oos;                  /* per term: the out-of-sample model value of its figure
				       * (leave-one-experiment-out where there is one, else its
				       * fold), NAN for effects */
	bool *oos_loeo;               /* per term: oos came from the leave-one-experiment-out fit */
};
/* Each fit of the cross-validation as the main one: starts, max_evals (0: the default). */
int ilab_calib_crossval(struct ilab_calib_set *set, uint64_t seed, unsigned starts,
			unsigned max_evals, unsigned folds, struct ilab_calib_cv *cv, char *err,
			size_t errlen);
void ilab_calib_cv_free(struct ilab_calib_cv *cv);
/* The cross-validation as separate folds (a Slurm array runs one each; fold_file.c keeps
 * their results): fold 0 is the fit of the whole set with its analysis (the caller's), folds
 * 1..E leave out experiment k-1 (E = nr_exp when there are two or more, else 0), then the K
 * case folds. ilab_calib_crossval runs folds 1.. in turn and assembles them. */
unsigned ilab_calib_cv_nr_folds(const struct ilab_calib_set *set, unsigned folds);
/* "seed000-cmdsync left out", "case fold 1 of 3", ...; -EINVAL past the last fold. */
int ilab_calib_cv_fold_name(const struct ilab_calib_set *set, unsigned folds, unsigned k,
			    char *buf, size_t len);
/* Fold k >= 1: pred[i] the left-out term i's model value at that fold's fit, NAN for the
 * terms it kept; pinned the constants held at their prior ("a=87, b=3"). */
int ilab_calib_cv_fold(struct ilab_calib_set *set, unsigned folds, unsigned k, uint64_t seed,
		       unsigned starts, unsigned max_evals, double *pred, char *pinned,
		       size_t plen, char *err, size_t errlen);
/* The cross-validation from folds 1..N-1's predictions and pinned lists (pred[k - 1] is fold
 * k's), in fold order. */
int ilab_calib_cv_assemble(const struct ilab_calib_set *set, unsigned folds,
			   const double *const *pred, const char *const *pinned,
			   struct ilab_calib_cv *cv, char *err, size_t errlen);

/* ---- fold_file.c: the cross-validation's folds run apart (a Slurm array) and merged ---- */
struct ilab_calib_fold_id { /* the options a fold's result depends on, beside the set */
	uint64_t seed;
	unsigned starts, max_evals, folds;
};
struct ilab_calib_fold_result {
	struct ilab_calib_fit fit;   /* fold 0: the fit of the whole set */
	struct ilab_calib_sens sens; /* fold 0: its analysis */
	double *values;              /* fold 0: the model's values at the fit; fold k: the
				      * left-out terms' predictions (NAN for the others) */
	char pinned[256];            /* fold k: constants held at their prior */
};
struct ilab_calib_merged {
	struct ilab_calib_fold_result whole; /* fold 0 (values malloc'd) */
	struct ilab_calib_cv cv;
};
/* <dir>/calibrate-<profile>-fold-<k>.json */
void ilab_calib_fold_path(const char *dir, const char *profile, unsigned k, char *buf,
			  size_t len);
/* Fold k's result file: the result, the points evaluated (the set's cache) and what it ran
 * on. */
struct json_t *ilab_calib_fold_json(const struct ilab_calib_set *set,
				    const struct ilab_calib_fold_id *id, unsigned k,
				    const struct ilab_calib_fold_result *res);
/* Every fold file of dir for this set and options, merged: fold 0's fit, analysis and values,
 * the cross-validation assembled as one run does, and set->nr_evals the distinct points
 * evaluated over all folds (one run's shared cache). -EINVAL with err (one line) for a
 * missing, duplicate, unreadable or mismatched fold. */
int ilab_calib_fold_merge(struct ilab_calib_set *set, const struct ilab_calib_fold_id *id,
			  const char *dir, struct ilab_calib_merged *m, char *err, size_t errlen);
void ilab_calib_merged_free(struct ilab_calib_merged *m);

/* ---- profile_out.c ---- */
/* The set's profile text with each free constant's value replaced in place by theta's (its
 * comments and every other constant's source kept) and the free: section rewritten to carry
 * each constant's bounds, value and the set it was fitted on (fitted_on). Checked: the result
 * loads, and holds exactly theta's values. */
int ilab_calib_fitted_profile(const struct ilab_calib_set *set, const double *theta,
			      const char *fitted_on, char **out, size_t *outlen, char *err,
			      size_t errlen);

/* ---- correlator.c ---- */
/* Model against measured, log-log, y = x and +-30 % bands, a colour per experiment, filled
 * markers in-sample and hollow ones out-of-sample: `calibrate` and `run` draw the same. */
struct ilab_correlator_point {
	unsigned exp;       /* index into exp: its colour */
	char *label, *unit;
	double measured, model;
	char *held_out_by;  /* NULL: in-sample; else how it was kept out ("experiment", ...) */
};
struct ilab_correlator {
	char title[ILAB_SCN_NAME_MAX + 64];
	char command[256];  /* what drew it, for the script's first line */
	unsigned nr_exp;
	char **exp;         /* experiment names, in order of first appearance */
	unsigned nr, cap;
	struct ilab_correlator_point *pts;
};
void ilab_correlator_init(struct ilab_correlator *c, const char *title, const char *command);
void ilab_correlator_free(struct ilab_correlator *c);
/* One point (strings copied). A figure that is not positive on either axis is left out (log
 * axes): 0. -ENOMEM. */
int ilab_correlator_add(struct ilab_correlator *c, const char *experiment, const char *label,
			const char *unit, double measured, double model, const char *held_out_by);
/* The points: [{label, experiment, measured, model, in_sample, unit, held_out_by?}]. */
struct json_t *ilab_correlator_json(const struct ilab_correlator *c);
/* The gnuplot script (data inline) drawing into png, or the variable ilab_png when set
 * (report/gnuplot.h renders it). */
void ilab_correlator_script(const struct ilab_correlator *c, const char *png, FILE *f);
/* Write the points (json_path; NULL: not), the script (gp_path) and the PNG, each whole or
 * not at all. 0; 1 when gnuplot is not found (no PNG; msg says so); negative with msg. */
int ilab_correlator_save(const struct ilab_correlator *c, const char *json_path,
			 const char *gp_path, const char *png_path, char *msg, size_t msglen);

/* ---- report.c ---- */
struct ilab_calib_report {
	const struct ilab_calib_set *set;
	const struct ilab_calib_fit *fit;
	const struct ilab_calib_sens *sens;
	const double *tv;              /* the model's values at the fit */
	const struct ilab_calib_cv *cv; /* NULL: no cross-validation */
	uint64_t seed;
	const char *fitted_on;
};
void ilab_calib_report_text(const struct ilab_calib_report *r, FILE *f);
struct json_t *ilab_calib_report_json(const struct ilab_calib_report *r);
/* The correlator of this report (correlator.c): every figure at the fit (in-sample) and,
 * with cross-validation, out-of-sample. Its points as JSON. */
int ilab_calib_correlator(const struct ilab_calib_report *r, struct ilab_correlator *c);
struct json_t *ilab_calib_correlator_json(const struct ilab_calib_report *r);

/* ---- measurements.c ---- */
/* A user's measurements (docs/calibration.md): each entry a one-case scenario on the set's
 * profile with one figure. 0, or -EINVAL with err "file:line:column: message". */
int ilab_calib_measurements_add(struct ilab_calib_set *set, const char *path, char *err,
				size_t errlen);
/* dma_map_benchmark's output as measurement entries (YAML) on out. 0, or -EINVAL with err
 * "file:line: not dma_map_benchmark output: ..." (out then holds a part: write it to memory). */
int ilab_calib_import_dma_map_benchmark(const char *path, FILE *out, char *err, size_t errlen);
/* fio --output-format=json as entries of the fio workload (iops, bw, clat percentiles). */
int ilab_calib_import_fio(const char *path, FILE *out, char *err, size_t errlen);
/* ---- parts.c ---- */
/* A measurements file's parts: list (a yaml_document_t * and its sequence node) applied to
 * the set's profile text: each constant the median of its entries. 0, or -EINVAL with err
 * "file:line:column: part N: reason". */
int ilab_calib_parts_apply(struct ilab_calib_set *set, const char *file, void *doc,
			   void *list, char *err, size_t errlen);

/* ---- import_parts.c: measurements of parts, as `parts:` entries ---- */
/* lmbench lat_mem_rd's output, run bound to cpu_node's CPUs and memory_node's memory: one
 * memory_latency entry per stride (its largest array). -EINVAL: "file:line: not lat_mem_rd
 * output: ...". */
int ilab_calib_import_lat_mem_rd(const char *path, int cpu_node, int memory_node, FILE *out,
				 char *err, size_t errlen);
/* core-to-core-latency --csv: one line_transfer entry per measured pair of cores. */
int ilab_calib_import_core_to_core(const char *path, FILE *out, char *err, size_t errlen);

/* Scenario s (owned by the set from now on, unless this fails) into the set. */
int ilab_calib_set_add_scenario(struct ilab_calib_set *set, struct ilab_scenario *s);

/* ---- record.c ---- */
/* git's tree hash of the source tree (12 digits, "+changes" when the work tree differs),
 * "unknown" outside a checkout. */
void ilab_calib_source_tree(char *buf, size_t len);
/* X.yaml -> X.calibration.json: where a profile's calibration record is. */
void ilab_calib_record_path(const char *profile, char *buf, size_t len);
/* The record of this fit (its set, the cross-validation when r->cv, the source tree). */
struct json_t *ilab_calib_record_json(const struct ilab_calib_report *r);
/* The line `iommulab run` prints under scenario's table for the profile file it ran on: 1
 * (line set), 0 (no record beside the profile: nothing to print) or -EINVAL (line says why). */
int ilab_calib_record_line(const char *profile, const char *scenario, char *line, size_t len);
/* Was scenario in the calibration set of the profile file's record: 1 yes, 0 no, -ENOENT no
 * record, -EINVAL an unreadable one (record_line says why). */
int ilab_calib_record_in_sample(const char *profile, const char *scenario);

#endif /* ILAB_CALIBRATE_CALIB_H */
