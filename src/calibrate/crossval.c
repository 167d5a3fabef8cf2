/* crossval.c — the out-of-sample error of a calibration. Each experiment is left out in turn
 * (its figures and effects leave the objective), the rest fitted, and its figures predicted;
 * then k folds over the cases of every experiment (case k in fold k mod K) the same way. A
 * constant that no remaining term responds to (the analysis's response test on the fitted
 * point) is held at its prior rather than left to wander within its bounds, and the report
 * names it with the prior used: seed 000 is the only experiment pinning smmu.sync_ns, so its
 * out-of-sample error is that of the prior, not of a fit. A set of one experiment gets the
 * case folds only.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"
#include "util/errf.h"

#define RESPONSE_MIN 0.01 /* as analyse.c */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Fit with the terms where out[i] is set left out; their predictions into pred (figures).
 * Constants nothing left in pins are held at their prior, listed in pinned. */
static int fit_without(struct ilab_calib_set *set, const bool *out, const double *theta0,
		       uint64_t seed, unsigned starts, unsigned max_evals, double *pred,
		       char *pinned, size_t plen, char *err, size_t errlen)
{
	struct ilab_calib_sens s;
	struct ilab_calib_fit fit;
	const double *tv;
	size_t off = 0;
	int rc;

	pinned[0] = '\0';
	for (unsigned i = 0; i < set->nr_terms; i++)
		set->terms[i].active = !out[i];
	rc = ilab_calib_analyse(set, theta0, 0, &s, err, errlen);
	for (unsigned j = 0; !rc && j < set->nr_free; j++) {
		set->free[j].fixed = s.norm[j] < RESPONSE_MIN;
		if (set->free[j].fixed && off < plen)
			off += (size_t)snprintf(pinned + off, plen - off, "%s%s=%.0f", off ? ", " : "",
						set->free[j].key, set->free[j].prior);
	}
	if (!rc)
		rc = ilab_calib_fit(set, seed, starts, max_evals, &fit, err, errlen);
	if (!rc)
		rc = ilab_calib_eval(set, fit.theta, &tv, err, errlen);
	for (unsigned i = 0; !rc && i < set->nr_terms; i++)
		if (out[i])
			pred[i] = tv[i];
	for (unsigned i = 0; i < set->nr_terms; i++)
		set->terms[i].active = true;
	for (unsigned j = 0; j < set->nr_free; j++)
		set->free[j].fixed = false;
	return rc;
}

/* Figures of experiment e (e = ~0u: all) among the terms with a prediction. */
static void score(const struct ilab_calib_set *set, const double *pred, unsigned e,
		  unsigned *figures, unsigned *within, double *med)
{
	double *v = malloc((set->nr_terms + 1) * sizeof(*v));
	unsigned n = 0;

	*figures = *within = 0;
	for (unsigned i = 0; v && i < set->nr_terms; i++) {
		const struct ilab_calib_term *t = &set->terms[i];

		if (t->kind != ILAB_CALIB_FIGURE || isnan(pred[i]) || (e != ~0u && t->exp != e))
			continue;
		(*figures)++;
		*within += ilab_calib_term_within(t, pred[i]);
		v[n++] = fabs(ilab_calib_residual(t, pred[i]));
	}
	*med = v ? median(v, n) : NAN;
	free(v);
}

unsigned ilab_calib_cv_nr_folds(const struct ilab_calib_set *set, unsigned folds)
{
	return 1 + (set->nr_exp > 1 ? set->nr_exp : 0) + folds;
}

int ilab_calib_cv_fold_name(const struct ilab_calib_set *set, unsigned folds, unsigned k,
			    char *buf, size_t len)
{
	unsigned loeo = set->nr_exp > 1 ? set->nr_exp : 0;

	if (k >= ilab_calib_cv_nr_folds(set, folds))
		return -EINVAL;
	if (k == 0)
		snprintf(buf, len, "the whole set (the fit and its analysis)");
	else if (k <= loeo)
		snprintf(buf, len, "%s left out", set->exp[k - 1]->name);
	else
		snprintf(buf, len, "case fold %u of %u", k - 1 - loeo, folds);
	return 0;
}

int ilab_calib_cv_fold(struct ilab_calib_set *set, unsigned folds, unsigned k, uint64_t seed,
		       unsigned starts, unsigned max_evals, double *pred, char *pinned,
		       size_t plen, char *err, size_t errlen)
{
	unsigned n = set->nr_terms, loeo = set->nr_exp > 1 ? set->nr_exp : 0;
	bool *out = calloc(n + 1, sizeof(*out));
	double theta0[ILAB_CALIB_MAX_FREE];
	int rc;

	if (!out)
		return ilab_errf(err, errlen, -ENOMEM, "out of memory");
	for (unsigned j = 0; j < set->nr_free; j++)
		theta0[j] = round(fmin(fmax(set->free[j].prior, set->free[j].min), set->free[j].max));
	for (unsigned i = 0; i < n; i++) {
		const struct ilab_calib_term *t = &set->terms[i];
		unsigned f = k - 1 - loeo;

		pred[i] = NAN;
		out[i] = k <= loeo ? t->exp == k - 1 : t->c % folds == f || t->from % folds == f;
	}
	rc = fit_without(set, out, theta0, seed, starts, max_evals, pred, pinned, plen, err,
			 errlen);
	free(out);
	return rc;
}

int ilab_calib_cv_assemble(const struct ilab_calib_set *set, unsigned folds,
			   const double *const *pred, const char *const *pinned,
			   struct ilab_calib_cv *cv, char *err, size_t errlen)
{
	unsigned n = set->nr_terms, loeo = set->nr_exp > 1 ? set->nr_exp : 0;
	double *lo = malloc((n + 1) * sizeof(*lo)), *fold = malloc((n + 1) * sizeof(*fold));
	int rc = 0;

	memset(cv, 0, sizeof(*cv));
	cv->oos = malloc((n + 1) * sizeof(*cv->oos));
	cv->oos_loeo = calloc(n + 1, sizeof(*cv->oos_loeo));
	if (!lo || !fold || !cv->oos || !cv->oos_loeo) {
		rc = ilab_errf(err, errlen, -ENOMEM, "out of memory");
		ilab_calib_cv_free(cv);
		goto done;
	}
	/* in fold order: an effect left out by two case folds keeps the later's value, as
	 * one process running them in turn did (effects have no out-of-sample figure) */
	for (unsigned i = 0; i < n; i++) {
		lo[i] = fold[i] = NAN;
		for (unsigned k = 0; k < loeo; k++)
			if (!isnan(pred[k][i]))
				lo[i] = pred[k][i];
		for (unsigned f = 0; f < folds; f++)
			if (!isnan(pred[loeo + f][i]))
				fold[i] = pred[loeo + f][i];
	}
	cv->nr = set->nr_exp;
	cv->folds = folds;
	for (unsigned e = 0; e < loeo; e++)
		snprintf(cv->e[e].pinned_only, sizeof(cv->e[e].pinned_only), "%s", pinned[e]);
	score(set, fold, ~0u, &cv->fold_figures, &cv->fold_within, &cv->fold_median_abs_log);
	for (unsigned e = 0; e < set->nr_exp; e++) {
		struct ilab_calib_cv_exp *x = &cv->e[e];

		x->exp = e;
		x->loeo = set->nr_exp > 1;
		score(set, x->loeo ? lo : fold, e, &x->figures, &x->within, &x->median_abs_log);
	}
	for (unsigned i = 0; i < n; i++) {
		bool l = set->terms[i].kind == ILAB_CALIB_FIGURE && !isnan(lo[i]);

		cv->oos[i] = set->terms[i].kind != ILAB_CALIB_FIGURE ? NAN : l ? lo[i] : fold[i];
		cv->oos_loeo[i] = l;
	}
done:
	free(lo);
	free(fold);
	return rc;
}

int ilab_calib_crossval(struct ilab_calib_set *set, uint64_t seed, unsigned starts,
			unsigned max_evals, unsigned folds, struct ilab_calib_cv *cv, char *err,
			size_t errlen)
{
	unsigned nf = ilab_calib_cv_nr_folds(set, folds) - 1, n = set->nr_terms;
	double **pred = calloc(nf + 1, sizeof(*pred));
	char (*pinned)[256] = calloc(nf + 1, sizeof(*pinned));
	const char **pp = calloc(nf + 1, sizeof(*pp));
	int rc = 0;

	memset(cv, 0, sizeof(*cv));
	if (!pred || !pinned || !pp)
		rc = ilab_errf(err, errlen, -ENOMEM, "out of memory");
	/* folds 1.. in turn, as an array of single folds would run them (the fit of the whole
	 * set, fold 0, is the caller's) */
	for (unsigned k = 0; !rc && k < nf; k++) {
		pred[k] = malloc((n + 1) * sizeof(**pred));
		pp[k] = pinned[k];
		rc = pred[k] ? ilab_calib_cv_fold(set, folds, k + 1, seed, starts, max_evals,
						   pred[k], pinned[k], sizeof(pinned[k]), err,
						   errlen)
			     : ilab_errf(err, errlen, -ENOMEM, "out of memory");
	}
	if (!rc)
		rc = ilab_calib_cv_assemble(set, folds, (const double *const *)pred, pp, cv, err,
					    errlen);
	for (unsigned k = 0; pred && k < nf; k++)
		free(pred[k]);
	free(pred);
	free(pinned);
	free(pp);
	return rc;
}

void ilab_calib_cv_free(struct ilab_calib_cv *cv)
{
	free(cv->oos);
	free(cv->oos_loeo);
	cv->oos = NULL;
	cv->oos_loeo = NULL;
}
