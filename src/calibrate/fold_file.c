/* fold_file.c — a cross-validated calibration as separate folds (a Slurm array task each,
 * scripts/slurm/calibrate.sbatch) and their merge. Each fold's result file holds what the
 * one-process run keeps of that fold — fold 0: the fit of the whole set, its analysis and the
 * model's values there; fold k: the left-out terms' predictions and the constants held at
 * their prior — plus the points it evaluated (so the merge counts the distinct evaluations a
 * single process sharing one cache would have run) and what it was run on (profile, tree,
 * free set, sizes, set, seed, starts, steps, folds). The merge refuses a missing, duplicate
 * or mismatched fold, then assembles the same cross-validation (crossval.c) as one run, so
 * the report, record and correlator come out byte for byte the same.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"
#include "util/errf.h"

#define FOLD_SCHEMA "iommulab-calibrate-fold/1"

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

void ilab_calib_fold_path(const char *dir, const char *profile, unsigned k, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s/calibrate-%s-fold-%u.json", dir, profile, k);
}

/* What a fold was run on: every fold of one merge must carry the same. */
static json_t *identity(const struct ilab_calib_set *set, const struct ilab_calib_fold_id *id)
{
	const char *tree = set->tree;
	char hex[32], line[ILAB_CALIB_KEY_MAX + 96];
	json_t *free_set = json_array();
	uint64_t h = 0xcbf29ce484222325ull;

	for (unsigned j = 0; j < set->nr_free; j++) {
		const struct ilab_calib_free *c = &set->free[j];

		snprintf(line, sizeof(line), "%s=%.0f:%.0f prior %.0f", c->key, c->min, c->max,
			 c->prior);
		json_array_append_new(free_set, json_string(line));
	}
	for (unsigned i = 0; i < set->nr_terms; i++)
		h = fnv1a(h, set->terms[i].label, strlen(set->terms[i].label) + 1);
	snprintf(line, sizeof(line), "%u experiments, %u cases, %u terms (labels %016llx)%s",
		 set->nr_exp, set->nr_cases, set->nr_terms, (unsigned long long)h,
		 set->weights == ILAB_CALIB_WEIGH_EXPERIMENTS ? ", weighted by experiment" : "");
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)fnv1a(0xcbf29ce484222325ull,
			set->profile_text, set->profile_len));
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:I, s:i, s:i, s:i, s:i}",
			 "profile", set->profile_name, "profile_text", hex, "tree", tree,
			 "free", free_set, "sizes", set->quick ? "quick" : "full", "set", line,
			 "seed", (json_int_t)id->seed, "starts", (int)id->starts, "max_evals",
			 (int)id->max_evals, "case_folds", (int)id->folds, "folds",
			 (int)ilab_calib_cv_nr_folds(set, id->folds));
}

/* Doubles exactly (17 digits when dumped), a NaN as null. */
static json_t *num(double v)
{
	return isnan(v) ? json_null() : isinf(v) ? json_string(v > 0 ? "inf" : "-inf")
						 : json_real(v);
}

static double get_num(const json_t *j, bool *bad)
{
	const char *s = json_string_value(j);

	if (json_is_null(j))
		return NAN;
	if (json_is_number(j))
		return json_number_value(j);
	if (s && !strcmp(s, "inf"))
		return INFINITY;
	if (s && !strcmp(s, "-inf"))
		return -INFINITY;
	*bad = true;
	return NAN;
}

static json_t *nums(const double *v, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, num(v[i]));
	return a;
}

/* n doubles of array a into v: false when a is not an array of n numbers. */
static bool get_nums(const json_t *a, double *v, unsigned n)
{
	bool bad = false;

	if (!json_is_array(a) || json_array_size(a) != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		v[i] = get_num(json_array_get(a, i), &bad);
	return !bad;
}

json_t *ilab_calib_fold_json(const struct ilab_calib_set *set,
			     const struct ilab_calib_fold_id *id, unsigned k,
			     const struct ilab_calib_fold_result *res)
{
	json_t *doc = json_object(), *evald = json_array();
	char name[ILAB_SCN_NAME_MAX + 64];

	ilab_calib_cv_fold_name(set, id->folds, k, name, sizeof(name));
	json_object_set_new(doc, "schema", json_string(FOLD_SCHEMA));
	json_object_set_new(doc, "fold", json_integer(k));
	json_object_set_new(doc, "name", json_string(name));
	json_object_set_new(doc, "run_on", identity(set, id));
	for (unsigned i = 0; i < ilab_calib_cache_nr(set); i++) {
		const long long *iv = ilab_calib_cache_key(set, i);
		json_t *p = json_array();

		for (unsigned j = 0; j < set->nr_free; j++)
			json_array_append_new(p, json_integer(iv[j]));
		json_array_append_new(evald, p);
	}
	json_object_set_new(doc, "evaluated", evald);
	json_object_set_new(doc, "values", nums(res->values, set->nr_terms));
	if (k) {
		json_object_set_new(doc, "pinned", json_string(res->pinned));
		return doc;
	}
	{
		const struct ilab_calib_fit *f = &res->fit;
		const struct ilab_calib_sens *s = &res->sens;
		json_t *notes = json_array(), *pairs = json_array();

		json_object_set_new(doc, "fit", json_pack("{s:o, s:o, s:o, s:i, s:i, s:i}",
				"theta", nums(f->theta, set->nr_free), "objective", num(f->objective),
				"prior_objective", num(f->prior_objective), "starts", f->starts,
				"evals", f->evals, "nlopt_result", f->nlopt_result));
		for (unsigned i = 0; i < s->nr_notes; i++)
			json_array_append_new(notes, json_string(s->notes[i]));
		for (unsigned i = 0; i < s->nr_pairs; i++)
			json_array_append_new(pairs, json_pack("[i, i]", s->pair[i][0],
							       s->pair[i][1]));
		json_object_set_new(doc, "analysis", json_pack("{s:o, s:o, s:o, s:o, s:o}",
				"d_minus", nums(s->d_minus, set->nr_free), "d_plus",
				nums(s->d_plus, set->nr_free), "norm", nums(s->norm, set->nr_free),
				"notes", notes, "pairs", pairs));
	}
	return doc;
}

/* The first field of want that got differs in, as "free (A; here B)". */
static void first_difference(const json_t *want, const json_t *got, char *buf, size_t len)
{
	const char *key;
	json_t *w;

	json_object_foreach((json_t *)want, key, w) {
		json_t *g = json_object_get(got, key);
		char *a, *b;

		if (g && json_equal(w, g))
			continue;
		a = g ? json_dumps(g, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		b = json_dumps(w, JSON_COMPACT | JSON_ENCODE_ANY);
		snprintf(buf, len, "%s (%s; here %s)", key, a ? a : "none", b ? b : "?");
		free(a);
		free(b);
		return;
	}
	snprintf(buf, len, "run (an unknown field)");
}

/* Fold 0's fit and analysis from its document into res. */
static bool read_fold0(const struct ilab_calib_set *set, json_t *doc,
		       struct ilab_calib_fold_result *res)
{
	json_t *fit = json_object_get(doc, "fit"), *an = json_object_get(doc, "analysis");
	json_t *notes = json_object_get(an, "notes"), *pairs = json_object_get(an, "pairs");
	bool bad = false;
	int starts, evals, nl;
	size_t i;
	json_t *x;

	if (!fit || !an || json_unpack(fit, "{s:i, s:i, s:i}", "starts", &starts, "evals", &evals,
				       "nlopt_result", &nl) ||
	    !get_nums(json_object_get(fit, "theta"), res->fit.theta, set->nr_free) ||
	    !get_nums(json_object_get(an, "d_minus"), res->sens.d_minus, set->nr_free) ||
	    !get_nums(json_object_get(an, "d_plus"), res->sens.d_plus, set->nr_free) ||
	    !get_nums(json_object_get(an, "norm"), res->sens.norm, set->nr_free) ||
	    !json_is_array(notes) || json_array_size(notes) > 2 * ILAB_CALIB_MAX_FREE ||
	    !json_is_array(pairs) ||
	    json_array_size(pairs) > ILAB_CALIB_MAX_FREE * ILAB_CALIB_MAX_FREE)
		return false;
	res->fit.objective = get_num(json_object_get(fit, "objective"), &bad);
	res->fit.prior_objective = get_num(json_object_get(fit, "prior_objective"), &bad);
	res->fit.starts = (unsigned)starts;
	res->fit.evals = (unsigned)evals;
	res->fit.nlopt_result = nl;
	res->sens.nr_notes = 0;
	json_array_foreach(notes, i, x) {
		if (!json_is_string(x))
			return false;
		snprintf(res->sens.notes[res->sens.nr_notes++], sizeof(res->sens.notes[0]), "%s",
			 json_string_value(x));
	}
	res->sens.nr_pairs = 0;
	json_array_foreach(pairs, i, x) {
		int a, b;

		if (json_unpack(x, "[i, i]", &a, &b) || a < 0 || b < 0 ||
		    (unsigned)a >= set->nr_free || (unsigned)b >= set->nr_free)
			return false;
		res->sens.pair[res->sens.nr_pairs][0] = (unsigned)a;
		res->sens.pair[res->sens.nr_pairs++][1] = (unsigned)b;
	}
	return !bad;
}

/* A point's evaluation, added to the merge's distinct set. */
struct points {
	unsigned nr, cap, width;
	long long *v;
};

static int add_points(struct points *p, const json_t *evald)
{
	size_t i;
	json_t *x;

	if (!json_is_array(evald))
		return -EINVAL;
	json_array_foreach(evald, i, x) {
		long long row[ILAB_CALIB_MAX_FREE];

		if (!json_is_array(x) || json_array_size(x) != p->width)
			return -EINVAL;
		for (unsigned j = 0; j < p->width; j++) {
			if (!json_is_integer(json_array_get(x, j)))
				return -EINVAL;
			row[j] = json_integer_value(json_array_get(x, j));
		}
		if (p->nr == p->cap) {
			unsigned cap = p->cap ? 2 * p->cap : 256;
			long long *v = realloc(p->v, (size_t)cap * (p->width + 1) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			p->v = v;
			p->cap = cap;
		}
		memcpy(p->v + (size_t)p->nr++ * (p->width + 1), row, p->width * sizeof(*row));
	}
	return 0;
}

static unsigned cmp_width;

static int cmp_point(const void *a, const void *b)
{
	return memcmp(a, b, cmp_width * sizeof(long long));
}

/* Distinct points among p's. */
static unsigned distinct(struct points *p)
{
	size_t w = p->width + 1;
	unsigned n = 0;

	if (!p->nr)
		return 0;
	cmp_width = p->width;
	qsort(p->v, p->nr, w * sizeof(long long), cmp_point);
	for (unsigned i = 0; i < p->nr; i++)
		n += !i || memcmp(p->v + i * w, p->v + (i - 1) * w, p->width * sizeof(long long));
	return n;
}

/* Fold k's file name in dir: "calibrate-NAME-fold-K.json" gives K, else -1. */
static long fold_of_name(const char *file, const char *profile)
{
	char prefix[ILAB_SCN_NAME_MAX + 32], *end;
	size_t pl;
	long k;

	pl = (size_t)snprintf(prefix, sizeof(prefix), "calibrate-%s-fold-", profile);
	if (strncmp(file, prefix, pl) || file[pl] < '0' || file[pl] > '9')
		return -1;
	k = strtol(file + pl, &end, 10);
	return strcmp(end, ".json") || k > 1000000 ? -1 : k;
}

/* A fold file of the merge's directory: its fold number and its name. */
struct fold_name {
	long k;
	char *name;
};

static int by_fold(const void *a, const void *b)
{
	const struct fold_name *x = a, *y = b;

	return x->k != y->k ? (x->k < y->k ? -1 : 1) : strcmp(x->name, y->name);
}

/* The directory's fold files of this profile, by fold number then name: readdir's order is
 * the file system's, and of several bad files the merge names the first it reads. */
static int fold_files(DIR *d, const char *profile, struct fold_name **out, size_t *nr)
{
	struct fold_name *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	while ((de = readdir(d))) {
		long k = fold_of_name(de->d_name, profile);

		if (k < 0)
			continue;
		if (n == cap) {
			struct fold_name *w = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!w)
				goto nomem;
			v = w;
		}
		v[n].k = k;
		if (!(v[n].name = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_fold);
	*out = v;
	*nr = n;
	return 0;
nomem:
	while (n)
		free(v[--n].name);
	free(v);
	return -ENOMEM;
}

void ilab_calib_merged_free(struct ilab_calib_merged *m)
{
	free(m->whole.values);
	ilab_calib_cv_free(&m->cv);
	m->whole.values = NULL;
}

int ilab_calib_fold_merge(struct ilab_calib_set *set, const struct ilab_calib_fold_id *id,
			  const char *dir, struct ilab_calib_merged *m, char *err, size_t errlen)
{
	unsigned nf = ilab_calib_cv_nr_folds(set, id->folds), n = set->nr_terms;
	json_t **docs = calloc(nf, sizeof(*docs)), *want = identity(set, id);
	char (*files)[1024] = calloc(nf, sizeof(*files));
	double **pred = calloc(nf, sizeof(*pred));
	const char **pinned = calloc(nf, sizeof(*pinned));
	struct points pts = { .width = set->nr_free };
	char path[1024], diff[1024], missing[256] = "";
	struct fold_name *names = NULL;
	size_t nr_names = 0;
	DIR *d = NULL;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	if (!docs || !files || !pred || !pinned || !want) {
		rc = ilab_errf(err, errlen, -ENOMEM, "out of memory");
		goto done;
	}
	d = opendir(dir);
	if (!d) {
		rc = ilab_errf(err, errlen, -EINVAL, "--merge %s: %s", dir, strerror(errno));
		goto done;
	}
	rc = fold_files(d, set->profile_name, &names, &nr_names);
	if (rc) {
		rc = ilab_errf(err, errlen, rc, "--merge %s: %s", dir, strerror(-rc));
		goto done;
	}
	for (size_t i = 0; !rc && i < nr_names; i++) {
		long k = names[i].k;
		json_error_t je;
		json_int_t inner;
		json_t *doc;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i].name);
		doc = json_load_file(path, 0, &je);
		if (!doc || json_unpack(doc, "{s:I}", "fold", &inner) ||
		    strcmp(json_string_value(json_object_get(doc, "schema")) ?: "", FOLD_SCHEMA)) {
			rc = ilab_errf(err, errlen, -EINVAL, "%s: not a fold of calibrate (%s)", path,
				       doc ? "no " FOLD_SCHEMA " fold" : je.text);
		} else if (inner != k) {
			rc = ilab_errf(err, errlen, -EINVAL, "%s: its name says fold %ld, it holds "
				       "fold %lld", path, k, (long long)inner);
		} else if (!json_equal(want, json_object_get(doc, "run_on"))) {
			first_difference(want, json_object_get(doc, "run_on"), diff, sizeof(diff));
			rc = ilab_errf(err, errlen, -EINVAL, "%s: fold %ld was run on another %s", path,
				       k, diff);
		} else if ((unsigned long)k >= nf) {
			rc = ilab_errf(err, errlen, -EINVAL, "%s: fold %ld, but there are %u folds",
				       path, k, nf);
		} else if (docs[k]) {
			rc = ilab_errf(err, errlen, -EINVAL, "%s: fold %ld twice (also %s)", path, k,
				       files[k]);
		}
		if (rc) {
			json_decref(doc);
			break;
		}
		docs[k] = doc;
		snprintf(files[k], sizeof(files[k]), "%s", path);
	}
	for (unsigned k = 0, off = 0; !rc && k < nf; k++)
		if (!docs[k] && off < sizeof(missing))
			off += (unsigned)snprintf(missing + off, sizeof(missing) - off, "%s%u",
						  off ? ", " : "", k);
	if (!rc && missing[0])
		rc = ilab_errf(err, errlen, -EINVAL, "--merge %s: fold(s) %s of %u missing (no "
			       "calibrate-%s-fold-K.json): run them with --fold K", dir, missing,
			       nf, set->profile_name);
	for (unsigned k = 0; !rc && k < nf; k++) {
		const char *p = json_string_value(json_object_get(docs[k], "pinned"));

		pred[k] = malloc((n + 1) * sizeof(**pred));
		rc = pred[k] ? add_points(&pts, json_object_get(docs[k], "evaluated")) : -ENOMEM;
		if (!rc && (!get_nums(json_object_get(docs[k], "values"), pred[k], n) ||
			    (k ? !p : !read_fold0(set, docs[k], &m->whole))))
			rc = -EINVAL;
		if (rc == -EINVAL)
			ilab_errf(err, errlen, rc, "%s: not a fold of calibrate (its values do not "
				  "fit the set)", files[k]);
		else if (rc)
			ilab_errf(err, errlen, rc, "out of memory");
		pinned[k] = p;
	}
	if (!rc)
		rc = ilab_calib_cv_assemble(set, id->folds, (const double *const *)pred + 1,
					    pinned + 1, &m->cv, err, errlen);
	if (!rc) {
		m->whole.values = pred[0];
		pred[0] = NULL;
		set->nr_evals = distinct(&pts);
	}
done:
	if (d)
		closedir(d);
	for (size_t i = 0; i < nr_names; i++)
		free(names[i].name);
	free(names);
	for (unsigned k = 0; docs && k < nf; k++) {
		json_decref(docs[k]);
		if (pred)
			free(pred[k]);
	}
	free(docs);
	free(files);
	free(pred);
	free(pinned);
	free(pts.v);
	json_decref(want);
	return rc;
}
