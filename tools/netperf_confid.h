/* netperf_confid.h — netperf's confidence intervals (-i max,min and -I level,width): the
 * test is repeated (here with seeds seed, seed + 1, ...) until the width of the confidence
 * interval of its result, and of its CPU utilisations, is within `width` of their means, or
 * max runs; at least min. The figures are the runs' means. Student's t, two-sided, 95 or
 * 99 %, from a standard table; netlib.c's calculate_confidence is the rule (facts only).
 */
#ifndef ILAB_TOOLS_NETPERF_CONFID_H
#define ILAB_TOOLS_NETPERF_CONFID_H

#include <stdbool.h>

enum { NP_CONF_RESULT = 0, NP_CONF_LCPU, NP_CONF_RCPU, NP_CONF_LSD, NP_CONF_RSD, NP_CONF_TIME,
       NP_CONF_N };

struct np_confid {
	int level;          /* 95 or 99; 0: no confidence intervals */
	double interval;    /* the width wanted, a fraction of the mean (0.05) */
	unsigned it_min, it_max;
	unsigned n;
	double sum[NP_CONF_N], sq[NP_CONF_N];
};

/* netperf's -i "max[,min]" and -I "level[,width]" (netsh.c's rules: each clamped to 3..30,
 * -I alone runs 3 to 10, level 95 or 99). 0, or -1 with err. */
int np_confid_parse_i(struct np_confid *c, const char *arg, char *err, unsigned long errlen);
int np_confid_parse_I(struct np_confid *c, const char *arg, char *err, unsigned long errlen);
bool np_confid_on(const struct np_confid *c);
void np_confid_add(struct np_confid *c, const double v[NP_CONF_N]);
double np_confid_mean(const struct np_confid *c, int k);
/* interval - the achieved width (netperf's *_confid): >= 0 when within */
double np_confid_margin(const struct np_confid *c, int k);
/* min(result, local CPU, remote CPU) margins: netperf's `confidence` */
double np_confid_confidence(const struct np_confid *c);
/* another run? */
bool np_confid_again(const struct np_confid *c);

#endif
