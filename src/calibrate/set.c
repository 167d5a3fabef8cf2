/* set.c — the measurement set of a calibration: the scenarios' cases that have published
 * figures, one term per figure, and one per published effect (the ratio of two cases'
 * figures), so that a fit cannot get the sizes right and the directions wrong. Default: the
 * built-in seed scenarios whose profile is the one calibrated (kunpeng920: seeds 000-003,
 * icelake-2s-a100: seed 004).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"
#include "iommulab/report.h"
#include "iommulab/sim.h"
#include "util/errf.h"
#include "util/yaml_file.h"

#define PROFILE_MAX_BYTES (1u << 20)

bool ilab_calib_term_within(const struct ilab_calib_term *t, double v)
{
	if (t->rel == ILAB_REL_GT)
		return v > t->measured * (1 - t->tolerance);
	if (t->rel == ILAB_REL_LT)
		return v < t->measured * (1 + t->tolerance);
	return v >= t->measured * (1 - t->tolerance) && v <= t->measured * (1 + t->tolerance);
}

static double ref_tolerance(const struct ilab_scenario *s, const struct ilab_reference *r)
{
	if (r->tolerance > 0)
		return r->tolerance;
	return r->kind == ILAB_REF_CALIBRATION ? s->tol_calibration : s->tol_prediction;
}

/* The published figure as a number to fit: a truncated one ("0.1 us" from a tool printing
 * whole 100 ns units) stands for the middle of its step. */
static double ref_measured(const struct ilab_reference *r)
{
	return r->relation == ILAB_REL_EQ && r->truncate > 0 ? r->value + r->truncate / 2
							       : r->value;
}

/* A truncated figure ("0.1 us": the tool prints whole 100 ns units) moves in steps, and a fit
 * sees a staircase; the workloads that truncate also report the figure whole, which is what
 * the fit reads (the published value stands for the middle of its step, ref_measured). */
static const struct {
	const char *metric, *raw;
	double scale;
} raw_figures[] = {
	{ "map_latency", "map_ns", 1e-3 },     /* dma_map_benchmark: us truncated to 0.1 */
	{ "unmap_latency", "unmap_ns", 1e-3 },
};

static void set_raw(struct ilab_calib_term *t, const struct ilab_reference *ref)
{
	snprintf(t->raw, sizeof(t->raw), "%s", t->metric);
	t->raw_scale = 1;
	for (size_t i = 0; ref->truncate > 0 && i < sizeof(raw_figures) / sizeof(raw_figures[0]);
	     i++)
		if (!strcmp(raw_figures[i].metric, t->metric)) {
			snprintf(t->raw, sizeof(t->raw), "%s", raw_figures[i].raw);
			t->raw_scale = raw_figures[i].scale;
		}
}

/* An effect's direction as `iommulab run` judges it (compare.c: the published change beyond
 * ±ILAB_EFFECT_FLAT), and the margin its model log ratio must keep on that side. The fit reads
 * untruncated figures but run compares truncated ones: truncating the two figures can move
 * their ratio by up to one step of each (q / x), so two cases 0.05 % apart read 3.8 and
 * 3.8 us, a tie. The margin is the flat band plus those steps, so that a model change beyond
 * it keeps its side after truncation, but never more than the published change itself (a
 * fit is not asked for more than the seed shows). A flat effect must stay within the band
 * less the steps (0 when the steps fill it: equal figures truncate equally). */
void ilab_calib_effect_direction(struct ilab_calib_term *t, double from, double to,
				 double from_step, double to_step)
{
	double change = to / from - 1;
	double steps = from_step / from + to_step / to;
	double published = fabs(log(to / from));

	t->direction = change > ILAB_EFFECT_FLAT ? 1 : change < -ILAB_EFFECT_FLAT ? -1 : 0;
	if (!t->direction) {
		t->margin = log(1 + ILAB_EFFECT_FLAT) - steps;
		t->margin = t->margin > 0 ? t->margin : 0;
		return;
	}
	t->margin = (t->direction > 0 ? log(1 + ILAB_EFFECT_FLAT) : -log(1 - ILAB_EFFECT_FLAT)) +
		    steps;
	t->margin = t->margin < published ? t->margin : published;
}

static void set_direction(struct ilab_calib_term *t, const struct ilab_reference *from,
			  const struct ilab_reference *to)
{
	/* the change as run judges it: the published figures as printed; the steps relative
	 * to the figures they truncate (the middles, ref_measured) */
	ilab_calib_effect_direction(t, from->value, to->value,
				    from->truncate * from->value / ref_measured(from),
				    to->truncate * to->value / ref_measured(to));
}

static int grow(void **arr, unsigned nr, size_t size)
{
	void *p = realloc(*arr, (nr + 1) * size);

	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

/* Scenario s's cases with figures and its terms into the set. */
static int add_experiment(struct ilab_calib_set *set, struct ilab_scenario *s)
{
	unsigned e = set->nr_exp;
	unsigned *map = calloc(s->nr_cases ? s->nr_cases : 1, sizeof(*map));

	if (!map)
		return -ENOMEM;
	set->exp[set->nr_exp++] = s;
	for (unsigned i = 0; i < s->nr_cases; i++) {
		const struct ilab_case *c = &s->cases[i];
		struct ilab_calib_case *cc;

		map[i] = ~0u;
		if (!c->nr_refs)
			continue;
		if (grow((void **)&set->cases, set->nr_cases, sizeof(*set->cases)))
			goto nomem;
		cc = &set->cases[set->nr_cases];
		cc->scn = s;
		cc->exp = e;
		ilab_case_effective(s, c, set->quick, &cc->c);
		map[i] = set->nr_cases++;
		for (unsigned r = 0; r < c->nr_refs; r++) {
			const struct ilab_reference *ref = &c->refs[r];
			struct ilab_calib_term *t;

			if (grow((void **)&set->terms, set->nr_terms, sizeof(*set->terms)))
				goto nomem;
			t = &set->terms[set->nr_terms++];
			memset(t, 0, sizeof(*t));
			t->kind = ILAB_CALIB_FIGURE;
			t->exp = e;
			t->c = t->from = map[i];
			snprintf(t->metric, sizeof(t->metric), "%s", ref->metric);
			snprintf(t->unit, sizeof(t->unit), "%s", ref->unit);
			snprintf(t->label, sizeof(t->label), "%s/%s/%s", s->name, c->label,
				 ref->metric);
			t->measured = ref_measured(ref);
			set_raw(t, ref);
			t->rel = ref->relation;
			t->tolerance = ref_tolerance(s, ref);
			t->active = true;
		}
	}
	for (unsigned i = 0; i < s->nr_effects; i++) {
		const struct ilab_effect *ef = &s->effects[i];
		const struct ilab_reference *a = &s->cases[ef->from].refs[ef->from_ref];
		const struct ilab_reference *b = &s->cases[ef->to].refs[ef->to_ref];
		struct ilab_calib_term *t;

		/* a bound ("> 550 ns") has no ratio to match */
		if (a->relation != ILAB_REL_EQ || b->relation != ILAB_REL_EQ)
			continue;
		if (grow((void **)&set->terms, set->nr_terms, sizeof(*set->terms)))
			goto nomem;
		t = &set->terms[set->nr_terms++];
		memset(t, 0, sizeof(*t));
		t->kind = ILAB_CALIB_EFFECT;
		t->exp = e;
		t->c = map[ef->to];
		t->from = map[ef->from];
		snprintf(t->metric, sizeof(t->metric), "%s", ef->metric);
		snprintf(t->unit, sizeof(t->unit), "ratio");
		snprintf(t->label, sizeof(t->label), "%s/effect %s -> %s/%s", s->name,
			 s->cases[ef->from].label, s->cases[ef->to].label, ef->metric);
		t->measured = ref_measured(b) / ref_measured(a);
		set_direction(t, a, b);
		set_raw(t, b);
		t->rel = ILAB_REL_EQ;
		t->tolerance = 0;
		t->active = true;
	}
	free(map);
	return 0;
nomem:
	free(map);
	return -ENOMEM;
}

/* The scenario is of this profile's machine: its own profile has the same topology. */
static int same_machine(const struct ilab_calib_set *set, const struct ilab_profile *prof,
			const struct ilab_scenario *s, char *err, size_t errlen)
{
	struct ilab_profile other;
	char msg[512];

	if (ilab_profile_open(s->profile, &other, msg, sizeof(msg)))
		return ilab_errf(err, errlen, -EINVAL, "%s: %s", s->path, msg);
	if (strcmp(other.topology, prof->topology))
		return ilab_errf(err, errlen, -EINVAL, "%s: not the machine of profile %s (topology "
				 "%s, not %s): the published figures belong to that machine",
				 s->path, set->profile_name, other.topology, prof->topology);
	return 0;
}

static int load_scenario(struct ilab_calib_set *set, const struct ilab_profile *prof,
			 const char *path, bool check_machine, char *err, size_t errlen)
{
	struct ilab_scenario *s;
	int rc;

	if (set->nr_exp == ILAB_CALIB_MAX_EXP)
		return ilab_errf(err, errlen, -EINVAL, "more than %d scenarios", ILAB_CALIB_MAX_EXP);
	rc = ilab_scenario_load(path, &s, err, errlen);
	if (rc)
		return rc;
	if (check_machine && (rc = same_machine(set, prof, s, err, errlen))) {
		ilab_scenario_free(s);
		return rc;
	}
	rc = add_experiment(set, s);
	if (rc) {
		ilab_scenario_free(s); /* not in set->exp: add_experiment fails before or after */
		set->exp[--set->nr_exp] = NULL;
		return ilab_errf(err, errlen, rc, "out of memory");
	}
	return 0;
}

int ilab_calib_set_add_scenario(struct ilab_calib_set *set, struct ilab_scenario *s)
{
	int rc;

	if (set->nr_exp == ILAB_CALIB_MAX_EXP)
		return -ENOSPC;
	rc = add_experiment(set, s);
	if (rc)
		set->exp[--set->nr_exp] = NULL;
	return rc;
}

/* The built-in scenarios that reproduce a seed on this profile. */
static int default_scenarios(struct ilab_calib_set *set, const struct ilab_profile *prof,
			     char *err, size_t errlen)
{
	char **list;
	int n = ilab_scenario_builtin_list(&list, err, errlen), rc = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n && !rc; i++) {
		struct ilab_scenario *s;

		if (ilab_scenario_load(list[i], &s, err, errlen))
			continue; /* `iommulab run` reports a broken built-in; not ours to */
		bool mine = strcmp(s->seed, "none") && !strcmp(s->profile, prof->name);

		ilab_scenario_free(s);
		if (mine)
			rc = load_scenario(set, prof, list[i], false, err, errlen);
	}
	free(list);
	if (!rc && !set->nr_exp)
		rc = ilab_errf(err, errlen, -EINVAL, "no built-in seed scenario runs on profile %s: "
			       "name the scenarios", prof->name);
	return rc;
}

int ilab_calib_set_open(struct ilab_calib_set **out, const char *profile,
			const char *const *scenarios, unsigned nr, bool quick, char *err,
			size_t errlen)
{
	struct ilab_calib_set *set = calloc(1, sizeof(*set));
	struct ilab_profile prof;
	int rc;

	*out = NULL;
	if (!set)
		return -ENOMEM;
	set->quick = quick;
	set->jobs = 1;
	ilab_calib_source_tree(set->tree, sizeof(set->tree));
	rc = ilab_profile_resolve(profile, set->profile_path, sizeof(set->profile_path), err,
				  errlen);
	if (!rc)
		rc = ilab_yaml_read_file(set->profile_path, PROFILE_MAX_BYTES,
					 "larger than 1 MiB: not a machine profile",
					 &set->profile_text, &set->profile_len, err, errlen);
	if (!rc)
		rc = ilab_profile_parse(set->profile_text, set->profile_len, set->profile_path,
					&prof, err, errlen);
	if (!rc) {
		snprintf(set->profile_name, sizeof(set->profile_name), "%s", prof.name);
		rc = ilab_calib_free_from_profile(set, err, errlen);
	}
	if (!rc && !scenarios)
		rc = default_scenarios(set, &prof, err, errlen);
	for (unsigned i = 0; !rc && i < nr; i++) {
		char path[ILAB_SCN_PATH_MAX];

		rc = ilab_scenario_resolve(scenarios[i], path, sizeof(path), err, errlen);
		if (!rc)
			rc = load_scenario(set, &prof, path, true, err, errlen);
	}
	if (rc) {
		ilab_calib_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

int ilab_calib_set_only_cases(struct ilab_calib_set *set, const char *const *labels,
			      unsigned nr, char *err, size_t errlen)
{
	unsigned *map = malloc((set->nr_cases + 1) * sizeof(*map)), n = 0, t = 0;

	if (!map)
		return -ENOMEM;
	for (unsigned l = 0; l < nr; l++) {
		bool found = false;

		for (unsigned i = 0; i < set->nr_cases; i++)
			found |= !strcmp(set->cases[i].c.label, labels[l]);
		if (!found) {
			free(map);
			return ilab_errf(err, errlen, -EINVAL, "--case %s: no case of that label "
					 "with published figures in the set", labels[l]);
		}
	}
	for (unsigned i = 0; i < set->nr_cases; i++) {
		bool keep = false;

		for (unsigned l = 0; l < nr; l++)
			keep |= !strcmp(set->cases[i].c.label, labels[l]);
		map[i] = keep ? n : ~0u;
		if (keep)
			set->cases[n++] = set->cases[i];
	}
	set->nr_cases = n;
	for (unsigned i = 0; i < set->nr_terms; i++) {
		struct ilab_calib_term x = set->terms[i];

		if (map[x.c] == ~0u || map[x.from] == ~0u)
			continue;
		x.c = map[x.c];
		x.from = map[x.from];
		set->terms[t++] = x;
	}
	set->nr_terms = t;
	free(map);
	return 0;
}

void ilab_calib_cache_free(struct ilab_calib_cache *c);

void ilab_calib_set_free(struct ilab_calib_set *set)
{
	if (!set)
		return;
	for (unsigned i = 0; i < set->nr_exp; i++)
		ilab_scenario_free(set->exp[i]);
	ilab_calib_cache_free(set->cache);
	free(set->cases);
	free(set->terms);
	free(set->profile_text);
	free(set);
}
