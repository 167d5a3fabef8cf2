/* analyse.c — what a fit's set says about each constant. Each free constant is moved to x0.9
 * and x1.1 of its fitted value (rounded; +-1 where rounding would not move it; within its
 * bounds): the objective's change is its sensitivity, and the change of each active term's
 * log-value over the change of the log-constant is a column of the Jacobian J (d log figure
 * / d log constant). The set cannot separate constants when
 *   - no term responds to one (max |J_ij| < 0.01: +-10 % moves no figure by 0.1 %);
 *   - two columns are near-collinear (|cos| > 0.99): every figure moves with both in the same
 *     proportion, so only a combination of the two is pinned (seed 000's local CMD_SYNC wait
 *     and smmu.command_ns + smmu.sync_ns);
 *   - three or more span a flat direction: the smallest eigenvalue of the columns'
 *     correlation matrix is below 0.001 (Jacobi rotations; n <= 16).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"
#include "util/errf.h"

#define RESPONSE_MIN 0.01
#define COLLINEAR_COS 0.99
#define FLAT_EIGEN 1e-3

static void note(struct ilab_calib_sens *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void note(struct ilab_calib_sens *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nr_notes == sizeof(s->notes) / sizeof(s->notes[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(s->notes[s->nr_notes++], sizeof(s->notes[0]), fmt, ap);
	va_end(ap);
}

/* The eigenvalues (d) and eigenvectors (columns of v) of the symmetric n x n matrix a
 * (destroyed), by cyclic Jacobi rotations. */
static void jacobi(unsigned n, double a[][ILAB_CALIB_MAX_FREE], double *d,
		   double v[][ILAB_CALIB_MAX_FREE])
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++)
			v[i][j] = i == j;
	for (unsigned sweep = 0; sweep < 100; sweep++) {
		double off = 0;

		for (unsigned p = 0; p < n; p++)
			for (unsigned q = p + 1; q < n; q++)
				off += a[p][q] * a[p][q];
		if (off < 1e-22)
			break;
		for (unsigned p = 0; p < n; p++)
			for (unsigned q = p + 1; q < n; q++) {
				double th, t, c, s;

				if (fabs(a[p][q]) < 1e-300)
					continue;
				th = (a[q][q] - a[p][p]) / (2 * a[p][q]);
				t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
				c = 1 / sqrt(t * t + 1);
				s = t * c;
				for (unsigned k = 0; k < n; k++) { /* columns p, q */
					double akp = a[k][p], akq = a[k][q];

					a[k][p] = c * akp - s * akq;
					a[k][q] = s * akp + c * akq;
				}
				for (unsigned k = 0; k < n; k++) { /* rows p, q */
					double apk = a[p][k], aqk = a[q][k];

					a[p][k] = c * apk - s * aqk;
					a[q][k] = s * apk + c * aqk;
				}
				for (unsigned k = 0; k < n; k++) {
					double vkp = v[k][p], vkq = v[k][q];

					v[k][p] = c * vkp - s * vkq;
					v[k][q] = s * vkp + c * vkq;
				}
			}
	}
	for (unsigned i = 0; i < n; i++)
		d[i] = a[i][i];
}

/* Is the pair (a, b) (a == b: the constant alone) reported already? */
static bool reported(const struct ilab_calib_sens *s, unsigned a, unsigned b)
{
	for (unsigned i = 0; i < s->nr_pairs; i++)
		if ((s->pair[i][0] == a && s->pair[i][1] == b) ||
		    (s->pair[i][0] == b && s->pair[i][1] == a))
			return true;
	return false;
}

static void add_pair(struct ilab_calib_sens *s, unsigned a, unsigned b)
{
	s->pair[s->nr_pairs][0] = a;
	s->pair[s->nr_pairs++][1] = b;
}

/* The flat direction of the correlation matrix of the responsive columns, if any. */
static void flat_direction(const struct ilab_calib_set *set, struct ilab_calib_sens *s,
			   double **col, const unsigned *idx, unsigned m)
{
	double a[ILAB_CALIB_MAX_FREE][ILAB_CALIB_MAX_FREE], v[ILAB_CALIB_MAX_FREE][ILAB_CALIB_MAX_FREE];
	double d[ILAB_CALIB_MAX_FREE], len;
	unsigned lo = 0, involved = 0, all_paired = 1;
	char text[200] = "";
	size_t off = 0;

	if (m < 3)
		return; /* two: the pairwise test says it */
	for (unsigned p = 0; p < m; p++)
		for (unsigned q = 0; q < m; q++) {
			double dot = 0, np = 0, nq = 0;

			for (unsigned i = 0; i < set->nr_terms; i++) {
				dot += col[idx[p]][i] * col[idx[q]][i];
				np += col[idx[p]][i] * col[idx[p]][i];
				nq += col[idx[q]][i] * col[idx[q]][i];
			}
			a[p][q] = dot / sqrt(np * nq);
		}
	jacobi(m, a, d, v);
	for (unsigned i = 1; i < m; i++)
		if (d[i] < d[lo])
			lo = i;
	if (d[lo] >= FLAT_EIGEN)
		return;
	len = 0;
	for (unsigned p = 0; p < m; p++)
		len += v[p][lo] * v[p][lo];
	len = sqrt(len);
	for (unsigned p = 0; p < m; p++) {
		double w = v[p][lo] / len;

		if (fabs(w) < 0.3)
			continue;
		for (unsigned q = 0; q < m; q++)
			if (q != p && fabs(v[q][lo] / len) >= 0.3 && !reported(s, idx[p], idx[q]))
				all_paired = 0;
		involved++;
		off += (size_t)snprintf(text + off, off < sizeof(text) ? sizeof(text) - off : 0,
					"%s%+.2f %s", off ? " " : "", w, set->free[idx[p]].key);
	}
	if (involved >= 3 && !all_paired)
		note(s, "cannot separate %u constants: the figures stay put (eigenvalue %.1e of the "
		     "columns' correlation) along the log-direction %s", involved, d[lo], text);
}

int ilab_calib_analyse(struct ilab_calib_set *set, const double *theta, double f0,
		       struct ilab_calib_sens *s, char *err, size_t errlen)
{
	double *col[ILAB_CALIB_MAX_FREE] = { NULL }, *base;
	const double *tv0;
	unsigned idx[ILAB_CALIB_MAX_FREE], m = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	rc = ilab_calib_eval(set, theta, &tv0, err, errlen);
	if (rc)
		return rc;
	base = malloc((set->nr_terms + 1) * sizeof(*base));
	if (!base)
		return -ENOMEM;
	memcpy(base, tv0, set->nr_terms * sizeof(*base));
	for (unsigned j = 0; !rc && j < set->nr_free; j++) {
		double lo[ILAB_CALIB_MAX_FREE], hi[ILAB_CALIB_MAX_FREE], dl;
		const double *tl, *th;
		double *tlc;

		if (set->free[j].fixed)
			continue;
		/* theta holds nr_free values (the caller's array may be no longer) */
		memcpy(lo, theta, set->nr_free * sizeof(*theta));
		memcpy(hi, theta, set->nr_free * sizeof(*theta));
		lo[j] = round(theta[j] * 0.9);
		hi[j] = round(theta[j] * 1.1);
		if (lo[j] >= theta[j])
			lo[j] = theta[j] - 1;
		if (hi[j] <= theta[j])
			hi[j] = theta[j] + 1;
		/* never outside the constant's bounds: they lie within what the profile loader
		 * and the model accept, which x1.1 of a value at its bound need not (a fitted
		 * nic.ats_outstanding of 15 probed at 17 ran out of simulated agents); at a
		 * bound the probe is one-sided */
		if (lo[j] < set->free[j].min)
			lo[j] = set->free[j].min;
		if (hi[j] > set->free[j].max)
			hi[j] = set->free[j].max;
		if (lo[j] < 1)
			lo[j] = 1;
		dl = log(hi[j] / lo[j]);
		rc = ilab_calib_eval(set, lo, &tl, err, errlen);
		if (rc)
			break;
		s->d_minus[j] = ilab_calib_objective(set, tl) - f0;
		tlc = malloc((set->nr_terms + 1) * sizeof(*tlc));
		if (!tlc) {
			rc = -ENOMEM;
			break;
		}
		memcpy(tlc, tl, set->nr_terms * sizeof(*tlc)); /* the cache may move: copy */
		rc = ilab_calib_eval(set, hi, &th, err, errlen);
		if (rc) {
			free(tlc);
			break;
		}
		s->d_plus[j] = ilab_calib_objective(set, th) - f0;
		col[j] = calloc(set->nr_terms + 1, sizeof(double));
		if (!col[j]) {
			free(tlc);
			rc = -ENOMEM;
			break;
		}
		for (unsigned i = 0; i < set->nr_terms; i++) {
			if (!set->terms[i].active || tlc[i] <= 0 || th[i] <= 0)
				continue;
			col[j][i] = log(th[i] / tlc[i]) / dl;
			if (fabs(col[j][i]) > s->norm[j])
				s->norm[j] = fabs(col[j][i]);
		}
		free(tlc);
	}
	for (unsigned j = 0; !rc && j < set->nr_free; j++) {
		if (!col[j])
			continue;
		if (s->norm[j] < RESPONSE_MIN) {
			note(s, "%s: no figure of the set responds to it (x0.9 / x1.1 move none by "
			     "0.1 %%): the set does not pin it", set->free[j].key);
			add_pair(s, j, j);
			continue;
		}
		idx[m++] = j;
	}
	for (unsigned p = 0; !rc && p < m; p++)
		for (unsigned q = p + 1; q < m; q++) {
			double dot = 0, np = 0, nq = 0, cs;

			for (unsigned i = 0; i < set->nr_terms; i++) {
				dot += col[idx[p]][i] * col[idx[q]][i];
				np += col[idx[p]][i] * col[idx[p]][i];
				nq += col[idx[q]][i] * col[idx[q]][i];
			}
			cs = dot / sqrt(np * nq);
			if (fabs(cs) <= COLLINEAR_COS)
				continue;
			note(s, "cannot separate %s and %s: every figure responds to them in the "
			     "same proportion (|cos| = %.4f); the set pins a combination of the two, "
			     "not each", set->free[idx[p]].key, set->free[idx[q]].key, fabs(cs));
			add_pair(s, idx[p], idx[q]);
		}
	if (!rc)
		flat_direction(set, s, col, idx, m);
	for (unsigned j = 0; j < set->nr_free; j++)
		free(col[j]);
	free(base);
	return rc;
}
