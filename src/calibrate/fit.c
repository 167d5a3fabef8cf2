/* fit.c — the joint fit: NLopt's BOBYQA (bounded, derivative-free; Powell's quadratic trust
 * region) on the logarithm of each free constant, from several starting points: the priors
 * first, then points drawn log-uniformly within the bounds from a splitmix64 stream seeded by
 * the caller. Everything the optimiser sees is deterministic (the simulation, the rounding to
 * whole numbers, the stream), so one seed gives one result. The optimiser runs sequentially;
 * the cases of each evaluation run in parallel (eval.c).
 */
#include <errno.h>
#include <math.h>
#include <nlopt.h>
#include <stdio.h>
#include <string.h>

#include "calibrate/calib.h"
#include "util/errf.h"

/* Not worth more: a step below 0.1 % in log space is under the whole-number rounding of
 * every constant worth fitting (>= 10 ns). */
#define FIT_XTOL 1e-3
#define FIT_HUGE 1e30

struct fit_ctx {
	struct ilab_calib_set *set;
	unsigned map[ILAB_CALIB_MAX_FREE]; /* optimiser variable -> free constant */
	unsigned n;
	double theta[ILAB_CALIB_MAX_FREE]; /* every free constant (the fixed at their prior) */
	unsigned evals;
	nlopt_opt opt;
	int failed;
	char *err;
	size_t errlen;
};

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
	return (double)(splitmix64(s) >> 11) / 9007199254740992.0; /* [0, 1) */
}

static double objective(unsigned n, const double *x, double *grad, void *data)
{
	struct fit_ctx *c = data;
	const double *tv;

	(void)grad; /* derivative-free */
	for (unsigned j = 0; j < n; j++)
		c->theta[c->map[j]] = exp(x[j]);
	c->evals++;
	if (ilab_calib_eval(c->set, c->theta, &tv, c->err, c->errlen)) {
		c->failed = 1;
		nlopt_force_stop(c->opt);
		return FIT_HUGE;
	}
	return ilab_calib_objective(c->set, tv);
}

/* One start from x (log space); the best point stays in x, its objective in *f. */
static int one_start(struct fit_ctx *c, double *x, const double *lb, const double *ub,
		     unsigned max_evals, double *f)
{
	nlopt_opt opt;
	double step[ILAB_CALIB_MAX_FREE];
	int res;

	/* BOBYQA needs two variables or more; one is a line search, SBPLX's case */
	opt = nlopt_create(c->n >= 2 ? NLOPT_LN_BOBYQA : NLOPT_LN_SBPLX, c->n);
	if (!opt)
		return -ENOMEM;
	for (unsigned j = 0; j < c->n; j++) {
		/* a quarter of the range, at most a factor e^0.5: steps the rounding can see */
		step[j] = fmin(0.5, (ub[j] - lb[j]) / 4);
	}
	c->opt = opt;
	nlopt_set_lower_bounds(opt, lb);
	nlopt_set_upper_bounds(opt, ub);
	nlopt_set_min_objective(opt, objective, c);
	nlopt_set_xtol_abs1(opt, FIT_XTOL);
	nlopt_set_maxeval(opt, (int)max_evals);
	nlopt_set_initial_step(opt, step);
	res = nlopt_optimize(opt, x, f);
	nlopt_destroy(opt);
	c->opt = NULL;
	if (c->failed)
		return -EIO;
	return res;
}

/* The simulated objective is not smooth at small scales (whole-number constants, discrete
 * events), and BOBYQA's trust region can shrink on a step of it and stop short. Check the
 * point's neighbours at x0.9 and x1.1 of each constant (the analysis's points, so they cost
 * nothing later): if one is better, the optimiser starts again from it (at most FIT_POLISH
 * times per start). Returns 1 (moved: x and *f updated), 0, or a negative errno. */
#define FIT_POLISH 4

static int compass(struct fit_ctx *c, double *x, const double *lb, const double *ub, double *f)
{
	double best = *f, bx[ILAB_CALIB_MAX_FREE];
	int moved = 0;

	memcpy(bx, x, sizeof(bx));
	for (unsigned j = 0; j < c->n; j++)
		for (int d = -1; d <= 1; d += 2) {
			double y[ILAB_CALIB_MAX_FREE], g;

			memcpy(y, x, sizeof(y));
			y[j] = fmin(fmax(x[j] + d * log(1.1), lb[j]), ub[j]);
			if (y[j] == x[j])
				continue;
			g = objective(c->n, y, NULL, c);
			if (c->failed)
				return -EIO;
			if (g < best) {
				best = g;
				memcpy(bx, y, sizeof(bx));
				moved = 1;
			}
		}
	memcpy(x, bx, sizeof(bx));
	*f = best;
	return moved;
}

int ilab_calib_fit(struct ilab_calib_set *set, uint64_t seed, unsigned starts,
		   unsigned max_evals, struct ilab_calib_fit *fit, char *err, size_t errlen)
{
	struct fit_ctx c = { .set = set, .err = err, .errlen = errlen };
	double lb[ILAB_CALIB_MAX_FREE], ub[ILAB_CALIB_MAX_FREE], x[ILAB_CALIB_MAX_FREE];
	uint64_t stream = seed;
	const double *tv;
	int rc;

	memset(fit, 0, sizeof(*fit));
	for (unsigned i = 0; i < set->nr_free; i++) {
		const struct ilab_calib_free *f = &set->free[i];

		c.theta[i] = fmin(fmax(f->prior, f->min), f->max);
		if (f->fixed)
			continue;
		lb[c.n] = log(f->min);
		ub[c.n] = log(f->max);
		c.map[c.n++] = i;
	}
	if (!max_evals)
		max_evals = 40 * c.n + 20;
	/* the priors, as they are: the reference the fit must beat */
	rc = ilab_calib_eval(set, c.theta, &tv, err, errlen);
	if (rc)
		return rc;
	fit->objective = fit->prior_objective = ilab_calib_objective(set, tv);
	memcpy(fit->theta, c.theta, sizeof(fit->theta));
	for (unsigned i = 0; i < set->nr_free; i++)
		fit->theta[i] = round(fit->theta[i]);
	for (unsigned s = 0; c.n && s < starts; s++) {
		double f = FIT_HUGE;

		for (unsigned j = 0; j < c.n; j++) {
			double p = log(fmin(fmax(set->free[c.map[j]].prior,
						 set->free[c.map[j]].min),
					    set->free[c.map[j]].max));

			x[j] = s == 0 ? p : lb[j] + uniform(&stream) * (ub[j] - lb[j]);
		}
		for (unsigned round = 0; round <= FIT_POLISH; round++) {
			rc = one_start(&c, x, lb, ub, max_evals, &f);
			if (rc == -EIO || rc == -ENOMEM)
				return rc == -EIO ? -EIO : ilab_errf(err, errlen, rc, "out of memory");
			/* the optimiser's best point, re-read from the cache at its rounded values */
			for (unsigned j = 0; j < c.n; j++)
				c.theta[c.map[j]] = exp(x[j]);
			if (ilab_calib_eval(set, c.theta, &tv, err, errlen))
				return -EIO;
			f = ilab_calib_objective(set, tv);
			if (f < fit->objective) {
				fit->objective = f;
				fit->nlopt_result = rc;
				for (unsigned i = 0; i < set->nr_free; i++)
					fit->theta[i] = (double)llround(c.theta[i]);
			}
			rc = compass(&c, x, lb, ub, &f);
			if (rc < 0)
				return rc;
			if (!rc)
				break; /* no neighbour better: a minimum at the step the data resolve */
			if (f < fit->objective) { /* kept should the rounds end here */
				fit->objective = f;
				for (unsigned j = 0; j < c.n; j++)
					fit->theta[c.map[j]] = (double)llround(exp(x[j]));
			}
		}
		fit->starts++;
	}
	fit->evals = c.evals;
	return 0;
}
