/* sweep_schema.c — what a sweep result or shard file must hold before `merge` uses it: every
 * field merge and the plots read, with its type, its range and its agreement with the rest
 * (a case's values are the grid's at its index, a shard's cases are its own). A file edited
 * by hand or cut short is refused with the file and the field named, rather than merged as
 * "ok". The layout is the writer's (sweep_result.c, docs/sweep.md); nothing else is allowed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/sweep_result.h"
#include "util/errf.h"

struct check {
	const char *file;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 3, 4)))
bad(const struct check *c, const char *field, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ilab_errf(c->err, c->errlen, -EINVAL, "%s: %s: %s", c->file, field, msg);
}

static const char *type_of(json_type t)
{
	switch (t) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static const char *type_name(const json_t *v)
{
	return type_of(v ? json_typeof(v) : JSON_NULL);
}

/* obj.key of type t (JSON_TRUE: a boolean), present: the member, else NULL with err set */
static json_t *member(const struct check *c, const json_t *obj, const char *at, const char *key,
		      json_type t, int *ret)
{
	json_t *v = json_object_get(obj, key);
	char field[160];

	snprintf(field, sizeof(field), "%s%s%s", at, *at ? "." : "", key);
	if (!v) {
		*ret = bad(c, field, "missing");
		return NULL;
	}
	if (t == JSON_TRUE ? !json_is_boolean(v) : json_typeof(v) != t) {
		*ret = bad(c, field, "expected %s, got %s", type_of(t), type_name(v));
		return NULL;
	}
	return v;
}

/* No member but those named: another program's or a newer version's file is not merged. */
static int only_keys(const struct check *c, const json_t *obj, const char *at,
		     const char *const *keys)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		const char *const *k;

		for (k = keys; *k && strcmp(*k, key); k++)
			;
		if (!*k) {
			char field[160];

			snprintf(field, sizeof(field), "%s%s%s", at, *at ? "." : "", key);
			return bad(c, field, "unknown field");
		}
	}
	return 0;
}

static int integer_in(const struct check *c, const json_t *v, const char *field, json_int_t lo,
		      json_int_t hi)
{
	json_int_t n = json_integer_value(v);

	if (n < lo || n > hi)
		return bad(c, field, "%lld is not from %lld to %lld", (long long)n, (long long)lo,
			   (long long)hi);
	return 0;
}

static int check_axes(const struct check *c, const json_t *axes, json_int_t nr_cases)
{
	static const char *const keys[] = { "path", "kind", "values", NULL };
	static const char *const kinds[] = { "param", "mechanism", "profile", NULL };
	json_int_t product = 1;
	char at[64];
	size_t a, i;
	json_t *ax, *v;
	int ret = 0;

	if (!json_array_size(axes) || json_array_size(axes) > ILAB_SWEEP_MAX_AXES)
		return bad(c, "axes", "%zu axes, not 1 to %d", json_array_size(axes),
			   ILAB_SWEEP_MAX_AXES);
	json_array_foreach(axes, a, ax) {
		const json_t *vals, *kind;
		const char *const *k;

		snprintf(at, sizeof(at), "axes[%zu]", a);
		if (!json_is_object(ax))
			return bad(c, at, "expected an object, got %s", type_name(ax));
		if ((ret = only_keys(c, ax, at, keys)) ||
		    !member(c, ax, at, "path", JSON_STRING, &ret) ||
		    !(kind = member(c, ax, at, "kind", JSON_STRING, &ret)) ||
		    !(vals = member(c, ax, at, "values", JSON_ARRAY, &ret)))
			return ret;
		for (k = kinds; *k && strcmp(*k, json_string_value(kind)); k++)
			;
		if (!*k)
			return bad(c, at, "kind '%s' is not param, mechanism or profile",
				   json_string_value(kind));
		if (!json_array_size(vals) || json_array_size(vals) > ILAB_SWEEP_MAX_VALUES)
			return bad(c, at, "%zu values, not 1 to %d", json_array_size(vals),
				   ILAB_SWEEP_MAX_VALUES);
		json_array_foreach(vals, i, v)
			if (!json_is_string(v))
				return bad(c, at, "values[%zu]: expected a string, got %s", i,
					   type_name(v));
		product *= (json_int_t)json_array_size(vals);
		if (product > ILAB_SWEEP_MAX_CASES)
			break;
	}
	if (product != nr_cases)
		return bad(c, "nr_cases", "%lld, but the axes make %lld cases", (long long)nr_cases,
			   (long long)product);
	return 0;
}

static int check_metrics(const struct check *c, const json_t *metrics)
{
	static const char *const keys[] = { "name", "unit", NULL };
	char at[64];
	size_t m;
	json_t *x;
	int ret = 0;

	json_array_foreach(metrics, m, x) {
		snprintf(at, sizeof(at), "metrics[%zu]", m);
		if (!json_is_object(x))
			return bad(c, at, "expected an object, got %s", type_name(x));
		if ((ret = only_keys(c, x, at, keys)) ||
		    !member(c, x, at, "name", JSON_STRING, &ret) ||
		    !member(c, x, at, "unit", JSON_STRING, &ret))
			return ret;
	}
	return 0;
}

/* Case entry j: its index (in nr_cases, and the shard's own), its values (the grid's at that
 * index), a known status with a message unless ok, and its figures numbers or null. */
static int check_case(const struct check *c, const json_t *cs, size_t j, const json_t *axes,
		      json_int_t nr_cases, json_int_t shard, json_int_t count)
{
	static const char *const keys[] = { "case", "values", "status", "message", "figures",
					    NULL };
	static const char *const status[] = { "ok", "not_implemented", "failed", NULL };
	const json_t *k, *vals, *st, *figs, *v;
	const char *const *s, *key;
	char at[64], field[160];
	json_int_t n, stride = nr_cases;
	size_t a;
	int ret = 0;

	snprintf(at, sizeof(at), "cases[%zu]", j);
	if (!json_is_object(cs))
		return bad(c, at, "expected an object, got %s", type_name(cs));
	if ((ret = only_keys(c, cs, at, keys)) ||
	    !(k = member(c, cs, at, "case", JSON_INTEGER, &ret)) ||
	    !(vals = member(c, cs, at, "values", JSON_ARRAY, &ret)) ||
	    !(st = member(c, cs, at, "status", JSON_STRING, &ret)) ||
	    !(figs = member(c, cs, at, "figures", JSON_OBJECT, &ret)))
		return ret;
	n = json_integer_value(k);
	snprintf(field, sizeof(field), "%s.case", at);
	if ((ret = integer_in(c, k, field, 0, nr_cases - 1)))
		return ret;
	if (count && n % count != shard)
		return bad(c, field, "case %lld is not in shard %lld of %lld (k mod %lld = %lld)",
			   (long long)n, (long long)shard, (long long)count, (long long)count,
			   (long long)(n % count));
	snprintf(field, sizeof(field), "%s.values", at);
	if (json_array_size(vals) != json_array_size(axes))
		return bad(c, field, "%zu value%s for %zu axes", json_array_size(vals),
			   json_array_size(vals) == 1 ? "" : "s", json_array_size(axes));
	/* first axis slowest: the grid's value of axis a at index n */
	json_array_foreach(vals, a, v) {
		const json_t *want = json_object_get(json_array_get(axes, a), "values");
		size_t size = json_array_size(want);
		const char *w;

		stride /= (json_int_t)size;
		w = json_string_value(json_array_get(want, (size_t)(n / stride % (json_int_t)size)));
		if (!json_is_string(v) || strcmp(json_string_value(v), w))
			return bad(c, field, "value %zu is %s%s%s, but case %lld has %s = '%s'", a,
				   json_is_string(v) ? "'" : "",
				   json_is_string(v) ? json_string_value(v) : type_name(v),
				   json_is_string(v) ? "'" : "", (long long)n,
				   json_string_value(json_object_get(json_array_get(axes, a),
								     "path")), w);
	}
	for (s = status; *s && strcmp(*s, json_string_value(st)); s++)
		;
	snprintf(field, sizeof(field), "%s.status", at);
	if (!*s)
		return bad(c, field, "'%s' is not ok, not_implemented or failed",
			   json_string_value(st));
	if (strcmp(*s, "ok") && !member(c, cs, at, "message", JSON_STRING, &ret))
		return ret;
	if (!strcmp(*s, "ok") && json_object_get(cs, "message"))
		return bad(c, field, "ok, with a message");
	json_object_foreach((json_t *)figs, key, v)
		if (!json_is_number(v) && !json_is_null(v)) {
			snprintf(field, sizeof(field), "%s.figures.%s", at, key);
			return bad(c, field, "expected a number, got %s", type_name(v));
		}
	return 0;
}

int ilab_sweep_result_check(const json_t *doc, const char *file, char *err, size_t errlen)
{
	static const char *const keys[] = { "schema", "sweep", "hash", "workload", "seed",
					    "quick", "nr_cases", "axes", "metrics", "cases",
					    "shard", NULL };
	static const char *const shard_keys[] = { "index", "count", NULL };
	const struct check c = { file, err, errlen };
	const json_t *nr, *axes, *metrics, *cases, *seed, *sh, *idx, *cnt, *cs;
	json_int_t shard = 0, count = 0;
	size_t j;
	int ret = 0;

	if (!json_is_object(doc))
		return ilab_errf(err, errlen, -EINVAL, "%s: expected an object, got %s", file,
				 type_name(doc));
	if ((ret = only_keys(&c, doc, "", keys)) ||
	    !member(&c, doc, "", "sweep", JSON_STRING, &ret) ||
	    !member(&c, doc, "", "hash", JSON_STRING, &ret) ||
	    !member(&c, doc, "", "workload", JSON_STRING, &ret) ||
	    !(seed = member(&c, doc, "", "seed", JSON_INTEGER, &ret)) ||
	    !member(&c, doc, "", "quick", JSON_TRUE, &ret) ||
	    !(nr = member(&c, doc, "", "nr_cases", JSON_INTEGER, &ret)) ||
	    !(axes = member(&c, doc, "", "axes", JSON_ARRAY, &ret)) ||
	    !(metrics = member(&c, doc, "", "metrics", JSON_ARRAY, &ret)) ||
	    !(cases = member(&c, doc, "", "cases", JSON_ARRAY, &ret)))
		return ret;
	if ((ret = integer_in(&c, seed, "seed", 1, (json_int_t)1 << 53)) ||
	    (ret = integer_in(&c, nr, "nr_cases", 1, ILAB_SWEEP_MAX_CASES)) ||
	    (ret = check_axes(&c, axes, json_integer_value(nr))) ||
	    (ret = check_metrics(&c, metrics)))
		return ret;
	sh = json_object_get(doc, "shard");
	if (sh) {
		if (!json_is_object(sh))
			return bad(&c, "shard", "expected an object, got %s", type_name(sh));
		if ((ret = only_keys(&c, sh, "shard", shard_keys)) ||
		    !(idx = member(&c, sh, "shard", "index", JSON_INTEGER, &ret)) ||
		    !(cnt = member(&c, sh, "shard", "count", JSON_INTEGER, &ret)))
			return ret;
		count = json_integer_value(cnt);
		shard = json_integer_value(idx);
		if ((ret = integer_in(&c, cnt, "shard.count", 1, ILAB_SWEEP_MAX_CASES)) ||
		    (ret = integer_in(&c, idx, "shard.index", 0, count - 1)))
			return ret;
	}
	json_array_foreach(cases, j, cs)
		if ((ret = check_case(&c, cs, j, axes, json_integer_value(nr), shard, count)))
			return ret;
	return 0;
}
