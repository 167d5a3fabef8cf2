/* sweep_result.c — a sweep's result file: built from the sweep and its case results, written
 * in one stable format, and merged from shard files. No host times, paths or dates go in, so
 * the bytes depend only on the sweep and the simulator (docs/sweep.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "report/sweep_result.h"
#include "util/atomic_file.h"
#include "util/errf.h"

#define DUMP_FLAGS (JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(17))

static const char *kind_name(enum ilab_sweep_kind k)
{
	return k == ILAB_SWEEP_PARAM ? "param" : k == ILAB_SWEEP_MECH ? "mechanism" : "profile";
}

json_t *ilab_sweep_header_json(const struct ilab_sweep *sw)
{
	json_t *h = json_object(), *axes = json_array(), *metrics = json_array();
	const struct ilab_workload *w = sw->scn->workload;

	for (unsigned a = 0; a < sw->nr_axes; a++) {
		json_t *ax = json_object(), *vals = json_array();

		for (unsigned i = 0; i < sw->axes[a].nr_values; i++)
			json_array_append_new(vals, json_string(sw->axes[a].values[i].text));
		json_object_set_new(ax, "path", json_string(sw->axes[a].path));
		json_object_set_new(ax, "kind", json_string(kind_name(sw->axes[a].kind)));
		json_object_set_new(ax, "values", vals);
		json_array_append_new(axes, ax);
	}
	for (const struct ilab_workload_metric *m = w->metrics; m && m->name; m++)
		json_array_append_new(metrics, json_pack("{s:s, s:s}", "name", m->name, "unit",
							 m->unit));
	json_object_set_new(h, "schema", json_string(ILAB_SWEEP_SCHEMA));
	json_object_set_new(h, "sweep", json_string(sw->name));
	json_object_set_new(h, "hash", json_string(sw->hash));
	json_object_set_new(h, "workload", json_string(w->name));
	json_object_set_new(h, "seed", json_integer((json_int_t)sw->seed));
	json_object_set_new(h, "quick", json_boolean(sw->quick));
	json_object_set_new(h, "nr_cases", json_integer(sw->nr_cases));
	json_object_set_new(h, "axes", axes);
	json_object_set_new(h, "metrics", metrics);
	return h;
}

json_t *ilab_sweep_case_json(const struct ilab_sweep *sw, unsigned k,
			     const struct ilab_case_result *r)
{
	static const char *const status[] = { "ok", "not_implemented", "failed" };
	json_t *c = json_object(), *vals = json_array(), *figs = json_object();

	for (unsigned a = 0; a < sw->nr_axes; a++)
		json_array_append_new(vals, json_string(
			sw->axes[a].values[ilab_sweep_value_index(sw, k, a)].text));
	for (unsigned i = 0; i < r->nr_figures; i++)
		json_object_set_new(figs, r->figures[i].metric,
				    isfinite(r->figures[i].value) ? json_real(r->figures[i].value)
								   : json_null());
	json_object_set_new(c, "case", json_integer(k));
	json_object_set_new(c, "values", vals);
	json_object_set_new(c, "status", json_string(status[r->status <= 2 ? r->status : 2]));
	if (r->status != ILAB_CASE_OK)
		json_object_set_new(c, "message", json_string(r->message));
	json_object_set_new(c, "figures", figs);
	return c;
}

json_t *ilab_sweep_doc(json_t *header, json_t *cases, unsigned shard, unsigned count)
{
	json_t *d = json_deep_copy(header);

	json_object_set_new(d, "cases", cases);
	if (count)
		json_object_set_new(d, "shard", json_pack("{s:i, s:i}", "index", (json_int_t)shard,
							  "count", (json_int_t)count));
	return d;
}

int ilab_sweep_doc_save(const json_t *doc, const char *path, char *err, size_t errlen)
{
	struct ilab_afile a;
	int ret = ilab_afile_open(&a, path, err, errlen);

	if (ret)
		return ret;
	if (json_dumpf(doc, a.f, DUMP_FLAGS) == 0)
		fputc('\n', a.f);
	else
		fputc('\0', a.f), ret = -EIO;
	if (ret) {
		ilab_afile_abort(&a);
		return ilab_errf(err, errlen, ret, "%s: cannot write the JSON", path);
	}
	return ilab_afile_commit(&a, err, errlen);
}

/* ---- merging -------------------------------------------------------------------------------- */

/* The shard's header: the document without its cases and shard number. */
static json_t *header_of(const json_t *doc)
{
	json_t *h = json_deep_copy(doc);

	json_object_del(h, "cases");
	json_object_del(h, "shard");
	return h;
}

/* Put the cases of shard file i into slots (one per case index); from[] says which file. */
static int take_cases(json_t *doc, const char *path, char *const *paths, json_t **slots,
		      int *from, int i, json_int_t nr, char *err, size_t errlen)
{
	json_t *cases = json_object_get(doc, "cases"), *c;
	size_t j;

	if (!json_is_array(cases))
		return ilab_errf(err, errlen, -EINVAL, "%s: no cases array: not a sweep result",
				 path);
	json_array_foreach(cases, j, c) {
		json_t *k = json_object_get(c, "case");
		json_int_t n = json_is_integer(k) ? json_integer_value(k) : -1;

		if (n < 0 || n >= nr)
			return ilab_errf(err, errlen, -EINVAL, "%s: cases[%zu]: no case number "
					 "from 0 to %lld", path, j, (long long)nr - 1);
		if (slots[n])
			return ilab_errf(err, errlen, -EINVAL, "case %lld is in %s and in %s: "
					 "shards overlap", (long long)n, paths[from[n]], path);
		slots[n] = json_incref(c);
		from[n] = i;
	}
	return 0;
}

static json_t *load_shard(const char *path, char *err, size_t errlen)
{
	json_error_t je;
	/* a key given twice would be read as its last value: refused as any other edit */
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *s;

	if (!doc) {
		ilab_errf(err, errlen, -EINVAL, "%s:%d:%d: not JSON: %s", path, je.line, je.column,
			  je.text);
		return NULL;
	}
	s = json_object_get(doc, "schema");
	if (!json_is_string(s) || strcmp(json_string_value(s), ILAB_SWEEP_SCHEMA)) {
		ilab_errf(err, errlen, -EINVAL, "%s: not a sweep result (schema %s)", path,
			  ILAB_SWEEP_SCHEMA);
		json_decref(doc);
		return NULL;
	}
	if (ilab_sweep_result_check(doc, path, err, errlen)) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* v as compact JSON, at most 60 characters */
static void brief(const json_t *v, char *buf, size_t len)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);

	if (!s)
		snprintf(buf, len, "?");
	else if (strlen(s) > 60)
		snprintf(buf, len, "%.57s...", s);
	else
		snprintf(buf, len, "%s", s);
	free(s);
}

/* Two shards' headers differ: which fields, and each one's two values. */
static int header_differs(const json_t *a, const char *pa, const json_t *b, const char *pb,
			  char *err, size_t errlen)
{
	char list[1024] = "", va[64], vb[64];
	size_t used = 0;
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)a, key, v) {
		const json_t *w = json_object_get(b, key);

		if (w && json_equal(v, w))
			continue;
		brief(v, va, sizeof(va));
		brief(w, vb, sizeof(vb));
		used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0,
					 "%s%s %s in %s, %s in %s", used ? "; " : "", key, va, pa,
					 w ? vb : "none", pb);
		if (used >= sizeof(list))
			break;
	}
	json_object_foreach((json_t *)b, key, v)
		if (!json_object_get(a, key) && used < sizeof(list)) {
			brief(v, vb, sizeof(vb));
			used += (size_t)snprintf(list + used, sizeof(list) - used,
						 "%s%s none in %s, %s in %s", used ? "; " : "", key,
						 pa, vb, pb);
		}
	return ilab_errf(err, errlen, -EINVAL, "%s is not a shard of the sweep of %s: %s", pb, pa,
			 list);
}

int ilab_sweep_merge(char *const *paths, unsigned n, json_t **out, char *err, size_t errlen)
{
	json_t *first = NULL, **slots = NULL, *cases;
	json_int_t nr = 0;
	int *from = NULL, ret = 0;

	*out = NULL;
	for (unsigned i = 0; !ret && i < n; i++) {
		json_t *doc = load_shard(paths[i], err, errlen), *h;

		if (!doc) {
			ret = -EINVAL;
			break;
		}
		h = header_of(doc);
		if (!first) {
			first = h;
			nr = json_integer_value(json_object_get(h, "nr_cases"));
			slots = nr > 0 && nr <= ILAB_SWEEP_MAX_CASES ? calloc((size_t)nr, sizeof(*slots))
								     : NULL;
			from = slots ? calloc((size_t)nr, sizeof(*from)) : NULL;
			if (!from)
				ret = ilab_errf(err, errlen, -EINVAL, "%s: nr_cases %lld: not 1 to %d",
						paths[i], (long long)nr, ILAB_SWEEP_MAX_CASES);
		} else if (!json_equal(first, h)) {
			ret = header_differs(first, paths[0], h, paths[i], err, errlen);
		}
		if (h != first)
			json_decref(h);
		if (!ret)
			ret = take_cases(doc, paths[i], paths, slots, from, (int)i, nr, err, errlen);
		json_decref(doc);
	}
	for (json_int_t k = 0; !ret && k < nr; k++)
		if (!slots[k]) {
			json_int_t missing = 0;

			for (json_int_t j = k; j < nr; j++)
				missing += !slots[j];
			ret = ilab_errf(err, errlen, -EINVAL, "case %lld is in none of the shards "
					"(%lld of %lld cases missing: a shard left out?)",
					(long long)k, (long long)missing, (long long)nr);
		}
	if (!ret) {
		cases = json_array();
		for (json_int_t k = 0; k < nr; k++)
			json_array_append(cases, slots[k]);
		*out = ilab_sweep_doc(first, cases, 0, 0);
	}
	for (json_int_t k = 0; slots && k < nr; k++)
		json_decref(slots[k]);
	free(slots);
	free(from);
	json_decref(first);
	return ret;
}
