/* result_json.c — a scenario result as JSON, schema "iommulab-result/1" (docs/result-schema.md):
 * sorted keys, integral numbers as exact JSON integers, no wall-clock times, so the same run
 * gives the same bytes. It is not the table (table.c) and reads nothing back.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/report.h"
#include "util/atomic_file.h"

/* Integral values up to 2^53 are exact in a double and become JSON integers. Other values are
 * rounded to 15 significant digits, the precision the file is written with, so that reading
 * the file back gives exactly the numbers of ilab_result_json() (and 0.1 stays "0.1"). */
static json_t *num(double v)
{
	char buf[32];

	if (!isfinite(v))
		return json_null();
	if (v == floor(v) && fabs(v) <= 9007199254740992.0)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "%.15g", v);
	return json_real(strtod(buf, NULL));
}

/* json_object_set_new that remembers a failure instead of returning it at every call. */
static void put(json_t *o, const char *k, json_t *v, bool *ok)
{
	if (!v || json_object_set_new(o, k, v) != 0)
		*ok = false;
}

static json_t *mechanisms_json(const struct ilab_case *k, bool *ok)
{
	const struct ilab_mechanisms *m = &k->mech;
	json_t *o = json_object();

	if (!o) {
		*ok = false;
		return NULL;
	}
	put(o, "cma", json_string(ilab_cma_policy_name(m->cma)), ok);
	put(o, "lookup", json_string(ilab_domain_lookup_name(ilab_case_lookup(k))), ok); /* as run */
	put(o, "map_pages", json_boolean(ilab_case_map_pages(k)), ok); /* the kernel's if unset */
	put(o, "ecmdq", json_boolean(m->ecmdq), ok);
	/* left out when off, so results from before it existed stay as they were */
	if (m->cmdqv)
		put(o, "cmdqv", json_true(), ok);
	put(o, "mode", json_string(ilab_dma_mode_name(m->mode)), ok);
	put(o, "vfio_attach_group_by_node", json_boolean(m->vfio_attach_group_by_node), ok);
	/* VT-d machines only: left out at its default, so other results stay as they were */
	if (m->intel_iommu_nid != ILAB_INTEL_NID_MECH_MAINLINE)
		put(o, "intel_iommu_nid", json_string(ilab_intel_nid_name(m->intel_iommu_nid)), ok);
	/* issue 21's switches: likewise only when set */
	if (m->fq != ILAB_FQ_MECH_PERCPU)
		put(o, "fq", json_string(ilab_fq_mech_name(m->fq)), ok);
	if (ilab_case_iova_depot(k) != ILAB_DEPOT_MECH_LIST) /* as run: the kernel's if unset */
		put(o, "iova_depot", json_string(ilab_depot_mech_name(ilab_case_iova_depot(k))), ok);
	if (ilab_case_cmdq_fair_lock(k))
		put(o, "cmdq_lock", json_string("fair"), ok);
	return o;
}

static json_t *comparison_json(const struct ilab_comparison *c, bool *ok)
{
	const struct ilab_reference *ref = c->ref;
	json_t *o = json_object();

	if (!o) {
		*ok = false;
		return NULL;
	}
	put(o, "metric", json_string(ref->metric), ok);
	put(o, "unit", json_string(ref->unit), ok);
	put(o, "seed", num(ref->value), ok);
	put(o, "relation", json_string(ilab_ref_relation_name(ref->relation)), ok);
	put(o, "kind", json_string(ilab_ref_kind_name(ref->kind)), ok);
	put(o, "tolerance", num(c->tolerance), ok);
	put(o, "truncate", num(ref->truncate), ok);
	put(o, "ours", c->have_ours ? num(c->ours) : json_null(), ok);
	put(o, "ours_raw", c->have_ours ? num(c->ours_raw) : json_null(), ok);
	put(o, "ratio", c->have_ours ? num(c->ratio) : json_null(), ok);
	put(o, "verdict", json_string(ilab_verdict_name(c->verdict)), ok);
	if (ref->note[0])
		put(o, "note", json_string(ref->note), ok);
	return o;
}

static json_t *case_json(const struct ilab_scenario *s, const struct ilab_case *k,
			 const struct ilab_case_result *r, unsigned *within, unsigned *outside,
			 bool *ok)
{
	json_t *o = json_object(), *params = json_object(), *figs = json_object(),
	       *cmps = json_array();

	if (!o || !params || !figs || !cmps) {
		json_decref(o), json_decref(params), json_decref(figs), json_decref(cmps);
		*ok = false;
		return NULL;
	}
	put(o, "label", json_string(k->label), ok);
	put(o, "series", json_string(k->series), ok);
	put(o, "mechanisms", mechanisms_json(k, ok), ok);
	put(o, "kernel", json_string(k->has_kernel ? k->kernel.name : "latest"), ok);
	if (r->backport_non_strict) /* only when so: other results stay as they were */
		put(o, "backport", json_string("non_strict"), ok);
	for (unsigned i = 0; i < k->nr_params; i++)
		put(params, k->params[i].name, num(k->params[i].value), ok);
	put(o, "params", params, ok);
	put(o, "status", json_string(ilab_case_status_name(r->status)), ok);
	put(o, "message", json_string(r->message), ok);
	for (unsigned i = 0; r->status == ILAB_CASE_OK && i < r->nr_figures; i++) {
		json_t *f = json_object();
		struct ilab_spread sp;

		if (f) {
			put(f, "value", num(r->figures[i].value), ok);
			put(f, "unit", json_string(r->figures[i].unit), ok);
		}
		if (f && ilab_figure_spread(r, i, &sp)) { /* --repeat: value is the mean */
			put(f, "min", num(sp.min), ok);
			put(f, "max", num(sp.max), ok);
			put(f, "sd", num(sp.sd), ok);
		}
		put(figs, r->figures[i].metric, f, ok);
	}
	put(o, "figures", figs, ok);
	for (unsigned i = 0; i < k->nr_refs; i++) {
		struct ilab_comparison c;

		ilab_compare(s, &k->refs[i], r, &c);
		*within += c.verdict == ILAB_VERDICT_WITHIN;
		*outside += c.verdict == ILAB_VERDICT_OUTSIDE;
		if (json_array_append_new(cmps, comparison_json(&c, ok)) != 0)
			*ok = false;
	}
	put(o, "comparisons", cmps, ok);
	if (r->stats_json) {
		json_error_t jerr;
		json_t *st = json_loads(r->stats_json, 0, &jerr);

		/* A workload's malformed statistics are its bug; keep the text rather than lose it. */
		put(o, "stats", st && json_is_object(st) ? st : json_string(r->stats_json), ok);
		if (st && !json_is_object(st))
			json_decref(st);
	}
	return o;
}

static json_t *effect_json(const struct ilab_scenario *s, const struct ilab_effect_comparison *c,
			   bool *ok)
{
	const struct ilab_effect *e = c->effect;
	json_t *o = json_object();

	if (!o) {
		*ok = false;
		return NULL;
	}
	put(o, "label", json_string(e->label), ok);
	put(o, "metric", json_string(e->metric), ok);
	put(o, "from", json_string(s->cases[e->from].label), ok);
	put(o, "to", json_string(s->cases[e->to].label), ok);
	put(o, "seed_change", num(c->seed_change), ok);
	put(o, "seed_change_is_bound", json_boolean(c->bound), ok);
	put(o, "ours_change", c->have_ours ? num(c->ours_change) : json_null(), ok);
	put(o, "verdict", json_string(ilab_effect_verdict_name(c->verdict)), ok);
	put(o, "identical_runs", json_boolean(c->identical_runs), ok);
	if (c->have_spread) {
		put(o, "ours_change_min", num(c->change_min), ok);
		put(o, "ours_change_max", num(c->change_max), ok);
		put(o, "ours_change_sd", num(c->change_sd), ok);
		put(o, "within_spread", json_boolean(c->within_spread), ok);
	}
	return o;
}

json_t *ilab_result_json(const struct ilab_scenario_result *r)
{
	const struct ilab_scenario *s = r->scenario;
	json_t *root = json_object(), *scn = json_object(), *tol = json_object(),
	       *cases = json_array(), *sum = json_object();
	unsigned counts[3] = { 0 }, figures = 0, within = 0, outside = 0, effects_same = 0;
	unsigned effects_identical = 0, effects_spread = 0, effects_same_spread = 0;
	bool ok = true;

	if (!root || !scn || !tol || !cases || !sum) {
		json_decref(root), json_decref(scn), json_decref(tol), json_decref(cases);
		json_decref(sum);
		return NULL;
	}
	put(root, "schema", json_string(ILAB_RESULT_SCHEMA), &ok);
	put(scn, "name", json_string(s->name), &ok);
	put(scn, "seed", json_string(s->seed), &ok);
	put(scn, "title", json_string(s->title), &ok);
	put(scn, "source", json_string(s->source), &ok);
	put(scn, "profile", json_string(r->profile[0] ? r->profile : s->profile), &ok);
	if (r->profile[0]) /* --profile: the scenario's own is kept beside the one used */
		put(scn, "scenario_profile", json_string(s->profile), &ok);
	put(scn, "engine", json_string(ilab_engine_kind_name(s->engine)), &ok);
	put(scn, "workload", json_string(s->workload ? s->workload->name : ""), &ok);
	put(root, "scenario", scn, &ok);
	put(root, "quick", json_boolean(r->quick), &ok);
	/* only when not the default run (seed 1, once): its JSON stays what it always was */
	if (r->seed > 1 || r->repeat > 1) {
		json_t *seeds = json_object();

		if (seeds) {
			put(seeds, "first", num((double)r->seed), &ok);
			put(seeds, "count", json_integer(r->repeat ? r->repeat : 1), &ok);
		}
		put(root, "seeds", seeds, &ok);
	}
	put(tol, "calibration", num(s->tol_calibration), &ok);
	put(tol, "prediction", num(s->tol_prediction), &ok);
	put(root, "tolerance", tol, &ok);
	for (unsigned i = 0; i < r->nr_cases; i++) {
		const struct ilab_case_result *cr = &r->cases[i];

		if ((unsigned)cr->status < 3)
			counts[cr->status]++;
		figures += s->cases[i].nr_refs;
		if (json_array_append_new(cases, case_json(s, &s->cases[i], cr, &within, &outside,
							   &ok)) != 0)
			ok = false;
	}
	put(root, "cases", cases, &ok);
	if (s->nr_effects) {
		json_t *effects = json_array();

		if (!effects)
			ok = false;
		for (unsigned i = 0; effects && i < s->nr_effects; i++) {
			struct ilab_effect_comparison ec;

			ilab_compare_effect(r, &s->effects[i], &ec);
			effects_same += ec.verdict == ILAB_EFFECT_SAME;
			effects_identical += ec.verdict != ILAB_EFFECT_SAME && ec.identical_runs;
			effects_spread += ec.within_spread;
			effects_same_spread += ec.within_spread && ec.verdict == ILAB_EFFECT_SAME;
			if (json_array_append_new(effects, effect_json(s, &ec, &ok)) != 0)
				ok = false;
		}
		put(root, "effects", effects, &ok);
	}
	put(root, "status", json_string(ilab_result_status(r)), &ok);
	put(sum, "cases", json_integer(r->nr_cases), &ok);
	put(sum, "ok", json_integer(counts[ILAB_CASE_OK]), &ok);
	put(sum, "not_implemented", json_integer(counts[ILAB_CASE_NOT_IMPLEMENTED]), &ok);
	put(sum, "failed", json_integer(counts[ILAB_CASE_FAILED]), &ok);
	put(sum, "figures", json_integer(figures), &ok);
	put(sum, "within", json_integer(within), &ok);
	put(sum, "outside", json_integer(outside), &ok);
	put(sum, "no_data", json_integer(figures - within - outside), &ok);
	if (s->nr_effects) {
		put(sum, "effects", json_integer(s->nr_effects), &ok);
		put(sum, "effects_same_direction", json_integer(effects_same), &ok);
		put(sum, "effects_missed_identical_runs", json_integer(effects_identical), &ok);
		if (r->repeat > 1) {
			put(sum, "effects_within_spread", json_integer(effects_spread), &ok);
			put(sum, "effects_same_direction_within_spread",
			    json_integer(effects_same_spread), &ok);
		}
	}
	put(root, "summary", sum, &ok);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* 15 significant digits: 0.1 prints as 0.1, not 0.10000000000000001. */
#define DUMP_FLAGS (JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(15))

int ilab_result_write_json(const struct ilab_scenario_result *r, FILE *f)
{
	json_t *j = ilab_result_json(r);
	int ret;

	if (!j)
		return -ENOMEM;
	ret = json_dumpf(j, f, DUMP_FLAGS) == 0 && fputc('\n', f) != EOF ? 0 : -EIO;
	json_decref(j);
	return ret;
}

int ilab_result_save_json(const struct ilab_scenario_result *r, const char *path, char *err,
			  size_t errlen)
{
	struct ilab_afile a;
	int ret;

	/* whole or not at all: a full disk must not leave a truncated JSON behind */
	ret = ilab_afile_open(&a, path, err, errlen);
	if (ret)
		return ret;
	ret = ilab_result_write_json(r, a.f);
	if (ret && !ferror(a.f)) { /* nothing to ask the file: say what failed */
		ilab_afile_abort(&a);
		snprintf(err, errlen, "%s: %s", path,
			 ret == -ENOMEM ? "out of memory" : "write error");
		return ret;
	}
	/* a failed write has set ferror: commit removes the file and names the reason */
	return ilab_afile_commit(&a, err, errlen);
}
