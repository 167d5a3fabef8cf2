/* eval.c — one evaluation of a calibration: the profile with the free constants set (whole
 * numbers: the loader takes integers) is written once, and every case of the set runs on it
 * in the sweep engine's workers (src/experiments/sweep_pool.c), `jobs` at a time. The model's
 * value of every term is cached by the constants' values: the optimiser's steps, the
 * sensitivity's x0.9/x1.1 and the cross-validation's fits revisit points, and a simulation
 * is deterministic. Also the robust objective over those values.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate/calib.h"
#include "experiments/sweep.h"
#include "iommulab/report.h"
#include "iommulab/sim.h"
#include "util/errf.h"

struct cache_entry {
	long long iv[ILAB_CALIB_MAX_FREE];
	double *tv;
};

struct ilab_calib_cache {
	unsigned nr, cap;
	struct cache_entry *e;
};

void ilab_calib_cache_free(struct ilab_calib_cache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nr; i++)
		free(c->e[i].tv);
	free(c->e);
	free(c);
}

static void to_ints(const struct ilab_calib_set *set, const double *theta, long long *iv)
{
	memset(iv, 0, ILAB_CALIB_MAX_FREE * sizeof(*iv));
	for (unsigned i = 0; i < set->nr_free; i++)
		iv[i] = llround(theta[i]) < 1 ? 1 : llround(theta[i]);
}

static double *lookup(const struct ilab_calib_set *set, const long long *iv)
{
	const struct ilab_calib_cache *c = set->cache;

	for (unsigned i = 0; c && i < c->nr; i++)
		if (!memcmp(c->e[i].iv, iv, sizeof(c->e[i].iv)))
			return c->e[i].tv;
	return NULL;
}

unsigned ilab_calib_cache_nr(const struct ilab_calib_set *set)
{
	return set->cache ? set->cache->nr : 0;
}

const long long *ilab_calib_cache_key(const struct ilab_calib_set *set, unsigned i)
{
	return set->cache->e[i].iv;
}

static int insert(struct ilab_calib_set *set, const long long *iv, double *tv)
{
	struct ilab_calib_cache *c = set->cache;

	if (!c && !(c = set->cache = calloc(1, sizeof(*c))))
		return -ENOMEM;
	if (c->nr == c->cap) {
		unsigned cap = c->cap ? 2 * c->cap : 64;
		struct cache_entry *e = realloc(c->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		c->e = e;
		c->cap = cap;
	}
	memcpy(c->e[c->nr].iv, iv, sizeof(c->e[c->nr].iv));
	c->e[c->nr++].tv = tv;
	return 0;
}

int ilab_calib_profile_text(const struct ilab_calib_set *set, const double *theta,
			    char **out, size_t *outlen, char *err, size_t errlen)
{
	struct ilab_profile_override o[ILAB_CALIB_MAX_FREE];
	char val[ILAB_CALIB_MAX_FREE][32];
	long long iv[ILAB_CALIB_MAX_FREE];

	to_ints(set, theta, iv);
	for (unsigned i = 0; i < set->nr_free; i++) {
		snprintf(val[i], sizeof(val[i]), "%lld", iv[i]);
		o[i] = (struct ilab_profile_override){ .key = set->free[i].key, .value = val[i] };
	}
	return ilab_profile_override(set->profile_text, set->profile_len, o, set->nr_free, out,
				     outlen, err, errlen);
}

static int write_temp(const char *text, size_t len, char *path, size_t pathlen)
{
	const char *dir = getenv("TMPDIR");
	int fd, ret = 0;

	snprintf(path, pathlen, "%s/iommulab-calibrate-XXXXXX.yaml", dir && *dir ? dir : "/tmp");
	fd = mkstemps(path, 5);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		ret = -EIO;
	if (close(fd) != 0 && !ret)
		ret = -errno;
	if (ret)
		unlink(path);
	return ret;
}

struct run_ctx {
	const struct ilab_calib_set *set;
	const char *profile;
};

static void run_one(void *ctx, unsigned k, struct ilab_case_result *r)
{
	const struct run_ctx *rc = ctx;
	const struct ilab_calib_case *cc = &rc->set->cases[k];

	/* seed 1: the figures `iommulab run` compares with the published ones */
	ilab_case_run_alone(cc->scn, &cc->c, rc->profile, 1, r);
}

/* A case's figure; 0 (nothing got through) is kept finite and positive, so that its log
 * and an effect's ratio stay numbers the objective and the JSON can hold. */
static double figure(const struct ilab_case_result *r, const char *metric)
{
	const struct ilab_figure *f = ilab_case_result_find(r, metric);

	if (!f || !isfinite(f->value))
		return NAN;
	return f->value > 1e-30 ? f->value : 1e-30;
}

/* Run every case on the profile text; the terms' values into tv. */
static int run_cases(struct ilab_calib_set *set, const char *text, size_t len, double *tv,
		     char *err, size_t errlen)
{
	struct ilab_case_result *res = calloc(set->nr_cases, sizeof(*res));
	char path[ILAB_SCN_PATH_MAX];
	struct run_ctx ctx = { .set = set, .profile = path };
	int rc;

	if (!res)
		return -ENOMEM;
	rc = write_temp(text, len, path, sizeof(path));
	if (rc) {
		free(res);
		return ilab_errf(err, errlen, rc, "cannot write the evaluation's profile: %s",
				 strerror(-rc));
	}
	rc = ilab_pool_run(set->nr_cases, 0, 1, set->jobs ? set->jobs : 1, run_one, NULL, &ctx,
			   res);
	unlink(path);
	if (rc)
		rc = ilab_errf(err, errlen, rc, "cannot run the cases: %s", strerror(-rc));
	for (unsigned k = 0; !rc && k < set->nr_cases; k++)
		if (res[k].status != ILAB_CASE_OK)
			rc = ilab_errf(err, errlen, -EIO, "%s/%s: %s", set->cases[k].scn->name,
				       set->cases[k].c.label, res[k].status == ILAB_CASE_FAILED
				       ? res[k].message : "not implemented");
	for (unsigned i = 0; !rc && i < set->nr_terms; i++) {
		const struct ilab_calib_term *t = &set->terms[i];

		tv[i] = figure(&res[t->c], t->raw) * t->raw_scale;
		if (t->kind == ILAB_CALIB_EFFECT)
			tv[i] /= figure(&res[t->from], t->raw) * t->raw_scale;
		if (isnan(tv[i]))
			rc = ilab_errf(err, errlen, -EIO, "%s: the case reported no %s", t->label,
				       t->raw);
	}
	free(res);
	return rc;
}

static void progress(const struct ilab_calib_set *set, const long long *iv)
{
	if (!set->progress)
		return;
	fprintf(set->progress, "[calibrate %s] evaluation %u:", set->profile_name,
		set->nr_evals);
	for (unsigned i = 0; i < set->nr_free; i++)
		fprintf(set->progress, " %s=%lld", set->free[i].key, iv[i]);
	fputc('\n', set->progress);
	fflush(set->progress);
}

int ilab_calib_eval(struct ilab_calib_set *set, const double *theta, const double **tv,
		    char *err, size_t errlen)
{
	long long iv[ILAB_CALIB_MAX_FREE];
	double vals[ILAB_CALIB_MAX_FREE], *out;
	char *text = NULL;
	size_t len;
	int rc;

	to_ints(set, theta, iv);
	*tv = lookup(set, iv);
	if (*tv)
		return 0;
	for (unsigned i = 0; i < set->nr_free; i++)
		vals[i] = (double)iv[i];
	out = calloc(set->nr_terms ? set->nr_terms : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	rc = ilab_calib_profile_text(set, vals, &text, &len, err, errlen);
	set->nr_evals++;
	progress(set, iv);
	if (!rc)
		rc = run_cases(set, text, len, out, err, errlen);
	free(text);
	if (!rc)
		rc = insert(set, iv, out);
	if (rc) {
		free(out);
		return rc;
	}
	*tv = out;
	return 0;
}

double ilab_calib_residual(const struct ilab_calib_term *t, double v)
{
	double r = log((v > 1e-300 ? v : 1e-300) / t->measured);

	if (t->rel == ILAB_REL_GT)
		return r < 0 ? r : 0;
	if (t->rel == ILAB_REL_LT)
		return r > 0 ? r : 0;
	return r;
}

double ilab_calib_direction_shortfall(const struct ilab_calib_term *t, double v)
{
	double l = log(v > 1e-300 ? v : 1e-300), h;

	if (t->kind != ILAB_CALIB_EFFECT)
		return 0;
	h = t->direction ? t->margin - t->direction * l : fabs(l) - t->margin;
	return h > 0 ? h : 0;
}

/* The size term alone lets a direction go for a little size elsewhere. A shortfall h costs
 * W 2s m (1 - exp(-h / m)), m the margin (at least the flat band, log 1.02): as steep as W
 * far soft-L1 terms where the direction is just missed (a tie), saturating at W 2s m where
 * it is far out of reach, so that effects the free constants cannot turn (map_pages at g=1,
 * where the model's two cases are the same) do not drag every figure after them. */
static double direction_loss(const struct ilab_calib_term *t, double v)
{
	double h = ilab_calib_direction_shortfall(t, v);
	double w = ILAB_CALIB_DIRECTION_WEIGHT * 2 * ILAB_CALIB_LOSS_SCALE;
	double m = t->margin > log(1 + ILAB_EFFECT_FLAT) ? t->margin : log(1 + ILAB_EFFECT_FLAT);

	return h > 0 ? w * m * (1 - exp(-h / m)) : 0;
}

/* Active terms per experiment into per_exp; the number of experiments that have one. */
static unsigned active_terms(const struct ilab_calib_set *set, unsigned *per_exp,
			     unsigned *active)
{
	unsigned exps = 0;

	*active = 0;
	memset(per_exp, 0, ILAB_CALIB_MAX_EXP * sizeof(*per_exp));
	for (unsigned i = 0; i < set->nr_terms; i++)
		if (set->terms[i].active) {
			exps += !per_exp[set->terms[i].exp]++;
			(*active)++;
		}
	return exps;
}

double ilab_calib_objective(const struct ilab_calib_set *set, const double *tv)
{
	const double s = ILAB_CALIB_LOSS_SCALE;
	unsigned per_exp[ILAB_CALIB_MAX_EXP], active, exps = active_terms(set, per_exp, &active);
	double sum = 0;

	for (unsigned i = 0; i < set->nr_terms; i++) {
		const struct ilab_calib_term *t = &set->terms[i];
		double z, w = 1;

		if (!t->active)
			continue;
		if (set->weights == ILAB_CALIB_WEIGH_EXPERIMENTS)
			w = (double)active / ((double)exps * per_exp[t->exp]);
		z = ilab_calib_residual(t, tv[i]) / s;
		sum += w * (s * s * 2 * (sqrt(1 + z * z) - 1) + direction_loss(t, tv[i]));
	}
	return sum;
}
