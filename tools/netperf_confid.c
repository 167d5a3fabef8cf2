/* netperf_confid.c — netperf's confidence intervals (netperf_confid.h). */
#include "netperf_confid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Student's t, two-sided, for 1..30 degrees of freedom (any statistics table) */
static const double t95[31] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
				2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
				2.052, 2.048, 2.045, 2.042 };
static const double t99[31] = { 0, 63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355,
				3.250, 3.169, 3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898,
				2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779,
				2.771, 2.763, 2.756, 2.750 };

static unsigned clamp(long v)
{
	return v < 3 ? 3 : v > 30 ? 30 : (unsigned)v;
}

/* "a[,b]": the numbers given (0 if absent); -1 when malformed */
static int two(const char *arg, long *a, long *b, double *bf)
{
	char *end;

	*a = *b = 0;
	*bf = 0;
	if (*arg != ',') {
		*a = strtol(arg, &end, 10);
		if (end == arg || (*end && *end != ','))
			return -1;
		arg = end;
	}
	if (*arg == ',' && arg[1]) {
		*bf = strtod(arg + 1, &end);
		*b = (long)*bf;
		if (end == arg + 1 || *end)
			return -1;
	}
	return 0;
}

int np_confid_parse_i(struct np_confid *c, const char *arg, char *err, unsigned long errlen)
{
	long mx, mn;
	double f;

	if (two(arg, &mx, &mn, &f) || mx < 0 || mn < 0)
		return snprintf(err, errlen, "-i must be MAX[,MIN] iterations, not '%s'", arg), -1;
	if (mx)
		c->it_max = (unsigned)(mx > 1000 ? 1000 : mx);
	if (mn)
		c->it_min = (unsigned)(mn > 1000 ? 1000 : mn);
	if (c->it_max < c->it_min)
		c->it_max = c->it_min;
	c->it_max = clamp(c->it_max);
	c->it_min = clamp(c->it_min);
	if (!c->level)
		c->level = 99;
	if (c->interval == 0)
		c->interval = 0.05;
	return 0;
}

int np_confid_parse_I(struct np_confid *c, const char *arg, char *err, unsigned long errlen)
{
	long lvl, w;
	double width;

	if (two(arg, &lvl, &w, &width) || (lvl && lvl != 95 && lvl != 99) || width < 0 ||
	    (!lvl && !c->level))
		return snprintf(err, errlen, "-I must be LEVEL[,WIDTH]: a level of 95 or 99 %% and "
				"a width in %% of the mean, not '%s'", arg), -1;
	if (lvl)
		c->level = (int)lvl;
	if (width > 0)
		c->interval = width / 100.0;
	if (c->it_min <= 1)
		c->it_min = 3;
	if (c->it_max <= 1)
		c->it_max = 10;
	if (c->interval == 0)
		c->interval = 0.05;
	return 0;
}

bool np_confid_on(const struct np_confid *c)
{
	return c->level && c->it_max > 1;
}

void np_confid_add(struct np_confid *c, const double v[NP_CONF_N])
{
	c->n++;
	for (int k = 0; k < NP_CONF_N; k++) {
		c->sum[k] += v[k];
		c->sq[k] += v[k] * v[k];
	}
}

double np_confid_mean(const struct np_confid *c, int k)
{
	return c->n ? c->sum[k] / c->n : 0;
}

double np_confid_margin(const struct np_confid *c, int k)
{
	double mean = np_confid_mean(c, k), var;
	unsigned df = c->n - 1;

	if (c->n < 2)
		return -1;
	var = c->sq[k] / c->n - mean * mean;
	if (var <= 0) /* identical runs (or rounding below zero): no width at all */
		return c->interval;
	if (df > 30)
		df = 30;
	return c->interval - 2.0 * (c->level == 95 ? t95[df] : t99[df]) *
				     sqrt(var / (c->n - 1.0)) / mean;
}

double np_confid_confidence(const struct np_confid *c)
{
	double r = np_confid_margin(c, NP_CONF_RESULT), l = np_confid_margin(c, NP_CONF_LCPU);
	double m = np_confid_margin(c, NP_CONF_RCPU);

	return fmin(fmin(r, l), m);
}

bool np_confid_again(const struct np_confid *c)
{
	return (np_confid_confidence(c) < 0 && c->n + 1 <= c->it_max) || c->n + 1 <= c->it_min;
}
