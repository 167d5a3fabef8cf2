/* report.c — a calibration's report: the fitted constants with their bounds and
 * sensitivity, what the set cannot separate, and the residual of every figure and effect
 * (text for people, JSON with sorted keys and no host time for tools); and the correlator's
 * points of the fit (drawn by correlator.c).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"

/* A number, or null where there is none (an experiment without out-of-sample figures):
 * JSON has no NaN. */
static json_t *num(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static const char *rel_name(enum ilab_ref_relation r)
{
	return r == ILAB_REL_GT ? "> " : r == ILAB_REL_LT ? "< " : "";
}

/* A figure: within its tolerance or not; an effect: whether the model keeps the published
 * direction with its margin (what survives the benchmark's truncation), or falls short. */
static const char *verdict(const struct ilab_calib_term *t, double v)
{
	if (t->kind == ILAB_CALIB_FIGURE)
		return ilab_calib_term_within(t, v) ? "within" : "OUTSIDE";
	if (ilab_calib_direction_shortfall(t, v) > 0)
		return t->direction ? "effect, SHORT of its direction" : "effect, NOT FLAT";
	return t->direction ? "effect, its direction" : "effect, flat";
}

/* Out-of-sample value of term i, or NAN. */
static double oos(const struct ilab_calib_report *r, unsigned i)
{
	return r->cv && r->cv->oos ? r->cv->oos[i] : NAN;
}

void ilab_calib_report_text(const struct ilab_calib_report *r, FILE *f)
{
	const struct ilab_calib_set *set = r->set;
	unsigned nf = 0, ne = 0, within = 0;

	for (unsigned i = 0; i < set->nr_terms; i++)
		if (set->terms[i].active)
			set->terms[i].kind == ILAB_CALIB_FIGURE ? nf++ : ne++;
	fprintf(f, "calibrate %s on %s\n", set->profile_name, r->fitted_on);
	fprintf(f, "%u free constants, %u cases, %u figures and %u effects in the objective "
		"(soft-L1 on log(model / measured), scale log 1.1; weighted by %s)\n",
		set->nr_free, set->nr_cases, nf, ne,
		set->weights == ILAB_CALIB_WEIGH_EXPERIMENTS ? "experiment, each the same"
							     : "term");
	if (set->parts_note[0])
		fprintf(f, "measured parts (set, not fitted): %s\n", set->parts_note);
	fprintf(f, "objective %.6g at the priors, %.6g fitted; %u starts (seed %llu), %u "
		"optimiser steps, %u evaluations\n\n", r->fit->prior_objective, r->fit->objective,
		r->fit->starts, (unsigned long long)r->seed, r->fit->evals, set->nr_evals);
	fprintf(f, "%-32s %10s %10s %21s %11s %11s %9s\n", "constant", "prior", "fitted",
		"bounds", "dF(x0.9)", "dF(x1.1)", "response");
	for (unsigned j = 0; j < set->nr_free; j++) {
		const struct ilab_calib_free *c = &set->free[j];
		char b[48];

		snprintf(b, sizeof(b), "[%.0f, %.0f]", c->min, c->max);
		if (c->fixed)
			fprintf(f, "%-32s %10.0f %10.0f %21s   (held at its prior)\n", c->key,
				c->prior, r->fit->theta[j], b);
		else
			fprintf(f, "%-32s %10.0f %10.0f %21s %+11.4g %+11.4g %9.3f\n", c->key,
				c->prior, r->fit->theta[j], b, r->sens->d_minus[j],
				r->sens->d_plus[j], r->sens->norm[j]);
	}
	fputc('\n', f);
	if (!r->sens->nr_notes)
		fprintf(f, "separability: the set pins every free constant apart from the others\n");
	for (unsigned i = 0; i < r->sens->nr_notes; i++)
		fprintf(f, "NOT SEPARATED: %s\n", r->sens->notes[i]);
	fprintf(f, "\n%-72s %12s %12s %8s %s\n", "figure / effect", "measured", "model", "error",
		"verdict");
	for (unsigned i = 0; i < set->nr_terms; i++) {
		const struct ilab_calib_term *t = &set->terms[i];
		double e = exp(ilab_calib_residual(t, r->tv[i])) - 1;
		bool in = t->kind == ILAB_CALIB_FIGURE && ilab_calib_term_within(t, r->tv[i]);

		within += in;
		fprintf(f, "%-72.72s %s%11.5g %12.5g %+7.1f%% %s%s\n", t->label, rel_name(t->rel),
			t->measured, r->tv[i], 100 * e, verdict(t, r->tv[i]),
			t->active ? "" : " (not in the objective)");
	}
	fprintf(f, "\n%u of %u figures within tolerance at the fit\n", within, nf);
	if (r->cv) {
		fprintf(f, "\ncross-validation (out-of-sample):\n");
		for (unsigned k = 0; k < r->cv->nr; k++) {
			const struct ilab_calib_cv_exp *e = &r->cv->e[k];

			fprintf(f, "  %-28s %s: %u of %u figures within tolerance, median |log error| "
				"%.3f (%.1f %%)%s%s\n", set->exp[e->exp]->name,
				e->loeo ? "left out" : "case folds only (one experiment)",
				e->within, e->figures, e->median_abs_log,
				100 * (exp(e->median_abs_log) - 1),
				e->pinned_only[0] ? "; only it pins (held at the prior): " : "",
				e->pinned_only);
		}
		fprintf(f, "  %u-fold over cases: %u of %u figures within tolerance, median |log "
			"error| %.3f (%.1f %%)\n", r->cv->folds, r->cv->fold_within,
			r->cv->fold_figures, r->cv->fold_median_abs_log,
			100 * (exp(r->cv->fold_median_abs_log) - 1));
	}
}

int ilab_calib_correlator(const struct ilab_calib_report *r, struct ilab_correlator *c)
{
	const struct ilab_calib_set *set = r->set;
	char cmd[128];
	int rc = 0;

	snprintf(cmd, sizeof(cmd), "iommulab calibrate %s", set->profile_name);
	ilab_correlator_init(c, set->profile_name, cmd);
	for (unsigned i = 0; !rc && i < set->nr_terms; i++) {
		const struct ilab_calib_term *t = &set->terms[i];
		const char *name = set->exp[t->exp]->name;

		if (t->kind != ILAB_CALIB_FIGURE)
			continue;
		rc = ilab_correlator_add(c, name, t->label, t->unit, t->measured, r->tv[i], NULL);
		if (!rc && !isnan(oos(r, i)))
			rc = ilab_correlator_add(c, name, t->label, t->unit, t->measured, oos(r, i),
						 r->cv->oos_loeo[i] ? "experiment" : "case fold");
	}
	return rc;
}

json_t *ilab_calib_correlator_json(const struct ilab_calib_report *r)
{
	struct ilab_correlator c;
	json_t *j = ilab_calib_correlator(r, &c) ? NULL : ilab_correlator_json(&c);

	ilab_correlator_free(&c);
	return j;
}

json_t *ilab_calib_report_json(const struct ilab_calib_report *r)
{
	const struct ilab_calib_set *set = r->set;
	json_t *doc = json_object(), *fr = json_array(), *terms = json_array(),
	       *notes = json_array(), *exps = json_array();

	for (unsigned e = 0; e < set->nr_exp; e++)
		json_array_append_new(exps, json_string(set->exp[e]->name));
	for (unsigned j = 0; j < set->nr_free; j++) {
		const struct ilab_calib_free *c = &set->free[j];
		json_t *o = json_pack("{s:s, s:f, s:f, s:f, s:f, s:b}", "key", c->key, "min",
				      c->min, "max", c->max, "prior", c->prior, "value",
				      r->fit->theta[j], "fixed", c->fixed);

		if (!c->fixed) {
			json_object_set_new(o, "objective_change_x0_9", json_real(r->sens->d_minus[j]));
			json_object_set_new(o, "objective_change_x1_1", json_real(r->sens->d_plus[j]));
			json_object_set_new(o, "response", json_real(r->sens->norm[j]));
		}
		json_array_append_new(fr, o);
	}
	for (unsigned i = 0; i < r->sens->nr_notes; i++)
		json_array_append_new(notes, json_string(r->sens->notes[i]));
	for (unsigned i = 0; i < set->nr_terms; i++) {
		const struct ilab_calib_term *t = &set->terms[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:b}", "label", t->label,
				      "experiment", set->exp[t->exp]->name, "kind",
				      t->kind == ILAB_CALIB_FIGURE ? "figure" : "effect", "relation",
				      ilab_ref_relation_name(t->rel), "measured", t->measured,
				      "model", r->tv[i], "log_error",
				      ilab_calib_residual(t, r->tv[i]), "in_objective", t->active);

		if (t->kind == ILAB_CALIB_FIGURE) {
			json_object_set_new(o, "within", json_boolean(ilab_calib_term_within(t,
											     r->tv[i])));
			json_object_set_new(o, "tolerance", json_real(t->tolerance));
		}
		if (t->kind == ILAB_CALIB_EFFECT) {
			json_object_set_new(o, "direction", json_integer(t->direction));
			json_object_set_new(o, "margin", json_real(t->margin));
			json_object_set_new(o, "direction_shortfall",
					    json_real(ilab_calib_direction_shortfall(t, r->tv[i])));
		}
		if (!isnan(oos(r, i)))
			json_object_set_new(o, "out_of_sample", json_real(oos(r, i)));
		json_array_append_new(terms, o);
	}
	json_object_set_new(doc, "schema", json_string("iommulab-calibrate/1"));
	json_object_set_new(doc, "profile", json_string(set->profile_name));
	json_object_set_new(doc, "experiments", exps);
	json_object_set_new(doc, "fitted_on", json_string(r->fitted_on));
	json_object_set_new(doc, "quick", json_boolean(set->quick));
	json_object_set_new(doc, "weights", json_string(set->weights == ILAB_CALIB_WEIGH_EXPERIMENTS
							? "experiments" : "terms"));
	json_object_set_new(doc, "seed", json_integer((json_int_t)r->seed));
	json_object_set_new(doc, "starts", json_integer(r->fit->starts));
	json_object_set_new(doc, "evaluations", json_integer(set->nr_evals));
	json_object_set_new(doc, "loss", json_pack("{s:s, s:f, s:s}", "kind", "soft_l1", "scale",
						   ILAB_CALIB_LOSS_SCALE, "residual",
						   "log(model / measured)"));
	json_object_set_new(doc, "objective", json_pack("{s:f, s:f}", "prior",
							r->fit->prior_objective, "fitted",
							r->fit->objective));
	json_object_set_new(doc, "free", fr);
	json_object_set_new(doc, "not_separated", notes);
	json_object_set_new(doc, "terms", terms);
	json_object_set_new(doc, "correlator", ilab_calib_correlator_json(r));
	if (r->cv) {
		json_t *cv = json_array();

		for (unsigned k = 0; k < r->cv->nr; k++) {
			const struct ilab_calib_cv_exp *e = &r->cv->e[k];

			json_array_append_new(cv, json_pack("{s:s, s:b, s:i, s:i, s:o, s:s}",
							    "experiment", set->exp[e->exp]->name,
							    "left_out", e->loeo, "figures",
							    e->figures, "within", e->within,
							    "median_abs_log_error",
							    num(e->median_abs_log),
							    "pinned_only_by_it_held_at_prior",
							    e->pinned_only));
		}
		json_object_set_new(doc, "cross_validation",
				    json_pack("{s:o, s:i, s:i, s:i, s:o}", "experiments", cv,
					      "case_folds", r->cv->folds, "fold_figures",
					      r->cv->fold_figures, "fold_within", r->cv->fold_within,
					      "fold_median_abs_log_error",
					      num(r->cv->fold_median_abs_log)));
	}
	return doc;
}
