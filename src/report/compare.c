/* compare.c — judges one published figure against ours: truncation to the published tool's
 * resolution, ratio, tolerance by kind and the verdict; plus the status names the report uses.
 * It is not the table or the JSON (table.c, result_json.c) and never changes a figure's value.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iommulab/report.h"

double ilab_reference_tolerance(const struct ilab_scenario *s, const struct ilab_reference *ref)
{
	if (ref->tolerance > 0)
		return ref->tolerance;
	/* Undecided figures are held to the looser bound until someone calibrates with them. */
	return ref->kind == ILAB_REF_CALIBRATION ? s->tol_calibration : s->tol_prediction;
}

/* dma_map_benchmark prints whole 100 ns units: 0.199 µs shows as 0.1. A relative epsilon keeps
 * values like 0.3 (0.29999...) from falling into the unit below. */
static double truncate_to(double v, double unit)
{
	if (unit <= 0)
		return v;
	return floor(v / unit * (1 + 1e-12)) * unit;
}

void ilab_compare(const struct ilab_scenario *s, const struct ilab_reference *ref,
		  const struct ilab_case_result *r, struct ilab_comparison *out)
{
	const struct ilab_figure *f = NULL;

	memset(out, 0, sizeof(*out));
	out->ref = ref;
	out->tolerance = ilab_reference_tolerance(s, ref);
	if (r && r->status == ILAB_CASE_OK)
		f = ilab_case_result_find(r, ref->metric);
	if (!f || !isfinite(f->value)) {
		out->verdict = ILAB_VERDICT_NO_DATA;
		return;
	}
	out->have_ours = true;
	out->ours_raw = f->value;
	out->ours = truncate_to(f->value, ref->truncate);
	out->ratio = out->ours / ref->value;
	switch (ref->relation) {
	case ILAB_REL_GT:
		out->verdict = out->ratio >= 1 - out->tolerance ? ILAB_VERDICT_WITHIN
								: ILAB_VERDICT_OUTSIDE;
		break;
	case ILAB_REL_LT:
		out->verdict = out->ratio <= 1 + out->tolerance ? ILAB_VERDICT_WITHIN
								: ILAB_VERDICT_OUTSIDE;
		break;
	default:
		out->verdict = fabs(out->ratio - 1) <= out->tolerance ? ILAB_VERDICT_WITHIN
								      : ILAB_VERDICT_OUTSIDE;
		break;
	}
}

void ilab_spread_of(const double *v, unsigned n, unsigned stride, struct ilab_spread *out)
{
	double d = 0, ss = 0;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	out->min = out->max = v[0];
	for (unsigned k = 1; k < n; k++) {
		double x = v[k * stride];

		d += x - v[0];
		out->min = x < out->min ? x : out->min;
		out->max = x > out->max ? x : out->max;
	}
	/* v[0] + mean offset: exactly v[0] when all are equal (the runner's mean does the same) */
	out->mean = v[0] + d / n;
	for (unsigned k = 0; k < n; k++)
		ss += (v[k * stride] - out->mean) * (v[k * stride] - out->mean);
	out->sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
}

bool ilab_figure_spread(const struct ilab_case_result *r, unsigned i, struct ilab_spread *out)
{
	memset(out, 0, sizeof(*out));
	if (!r || r->status != ILAB_CASE_OK || r->nr_runs < 2 || !r->runs || i >= r->nr_figures)
		return false;
	ilab_spread_of(&r->runs[i], r->nr_runs, ILAB_SCN_MAX_FIGURES, out);
	return true;
}

/* The change of each seed's runs, from -> to, with the same truncation as the means; their
 * spread into out. False when a side has no runs or a seed's `from` figure is 0. */
static bool change_spread(const struct ilab_case_result *a, const struct ilab_reference *ra,
			  const struct ilab_case_result *b, const struct ilab_reference *rb,
			  struct ilab_spread *out)
{
	const struct ilab_figure *fa = ilab_case_result_find(a, ra->metric);
	const struct ilab_figure *fb = ilab_case_result_find(b, rb->metric);
	double ch[ILAB_RUN_REPEAT_MAX];
	unsigned n = a->nr_runs, ia, ib;

	if (!fa || !fb || n < 2 || b->nr_runs != n || !a->runs || !b->runs ||
	    n > sizeof(ch) / sizeof(ch[0]))
		return false;
	ia = (unsigned)(fa - a->figures);
	ib = (unsigned)(fb - b->figures);
	for (unsigned k = 0; k < n; k++) {
		double x = truncate_to(a->runs[k * ILAB_SCN_MAX_FIGURES + ia], ra->truncate);
		double y = truncate_to(b->runs[k * ILAB_SCN_MAX_FIGURES + ib], rb->truncate);

		if (x == 0)
			return false;
		ch[k] = y / x - 1;
	}
	ilab_spread_of(ch, n, 1, out);
	return true;
}

/* -1, 0 or +1: the direction of a relative change, flat within ±ILAB_EFFECT_FLAT. */
static int direction(double change)
{
	return change > ILAB_EFFECT_FLAT ? 1 : change < -ILAB_EFFECT_FLAT ? -1 : 0;
}

/* Two runs that left the same statistics (every counter, distribution and line of the engine)
 * did the same work: a case whose workload gives no statistics never counts as identical. */
static bool identical_runs(const struct ilab_case_result *a, const struct ilab_case_result *b)
{
	return a->status == ILAB_CASE_OK && b->status == ILAB_CASE_OK && a->stats_json &&
	       b->stats_json && strcmp(a->stats_json, b->stats_json) == 0;
}

void ilab_compare_effect(const struct ilab_scenario_result *r, const struct ilab_effect *e,
			 struct ilab_effect_comparison *out)
{
	const struct ilab_scenario *s = r->scenario;
	const struct ilab_reference *rf = &s->cases[e->from].refs[e->from_ref];
	const struct ilab_reference *rt = &s->cases[e->to].refs[e->to_ref];
	struct ilab_comparison cf, ct;
	int ds, dours;

	memset(out, 0, sizeof(*out));
	out->effect = e;
	out->seed_change = rt->value / rf->value - 1;
	out->bound = rf->relation != ILAB_REL_EQ || rt->relation != ILAB_REL_EQ;
	ilab_compare(s, rf, &r->cases[e->from], &cf);
	ilab_compare(s, rt, &r->cases[e->to], &ct);
	if (!cf.have_ours || !ct.have_ours || cf.ours == 0) {
		out->verdict = ILAB_EFFECT_NO_DATA;
		return;
	}
	out->have_ours = true;
	out->ours_change = ct.ours / cf.ours - 1;
	out->identical_runs = identical_runs(&r->cases[e->from], &r->cases[e->to]);
	{
		struct ilab_spread sp;

		out->have_spread = change_spread(&r->cases[e->from], rf, &r->cases[e->to], rt,
						 &sp);
		if (out->have_spread) {
			out->change_min = sp.min;
			out->change_max = sp.max;
			out->change_sd = sp.sd;
			out->within_spread = fabs(out->ours_change) < sp.sd;
		}
	}
	ds = direction(out->seed_change);
	dours = direction(out->ours_change);
	if (ds == dours)
		out->verdict = ILAB_EFFECT_SAME;
	else if (ds && dours)
		out->verdict = ILAB_EFFECT_OPPOSITE;
	else
		out->verdict = ds ? ILAB_EFFECT_MISSING : ILAB_EFFECT_SPURIOUS;
}

const char *ilab_effect_verdict_name(enum ilab_effect_verdict v)
{
	switch (v) {
	case ILAB_EFFECT_SAME: return "same";
	case ILAB_EFFECT_OPPOSITE: return "opposite";
	case ILAB_EFFECT_MISSING: return "missing";
	case ILAB_EFFECT_SPURIOUS: return "spurious";
	default: return "no_data";
	}
}

const char *ilab_case_status_name(enum ilab_case_status st)
{
	switch (st) {
	case ILAB_CASE_OK: return "ok";
	case ILAB_CASE_NOT_IMPLEMENTED: return "not_implemented";
	default: return "failed";
	}
}

const char *ilab_verdict_name(enum ilab_verdict v)
{
	switch (v) {
	case ILAB_VERDICT_WITHIN: return "within";
	case ILAB_VERDICT_OUTSIDE: return "outside";
	default: return "no_data";
	}
}

const char *ilab_result_status(const struct ilab_scenario_result *r)
{
	unsigned ok = 0, failed = 0;

	/* Cases neither ok nor failed are not implemented yet. */
	for (unsigned i = 0; i < r->nr_cases; i++) {
		ok += r->cases[i].status == ILAB_CASE_OK;
		failed += r->cases[i].status == ILAB_CASE_FAILED;
	}
	if (failed)
		return "failed";
	if (ok == r->nr_cases)
		return "ok";
	return ok ? "partial" : "not_implemented";
}

void ilab_report_format_number(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, len, "%s", "—");
	else if (v == floor(v) && a < 1e15)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 1000)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}
