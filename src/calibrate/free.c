/* free.c — which constants of a profile a calibration fits, and within what bounds. A
 * profile marks them in a top-level free: section that mirrors its own sections:
 *
 *   free:
 *     smmu:
 *       sync_ns: { min: 10, max: 2000 }
 *       tlbi_ns: { min: 5, max: 500, value: 67, fitted_on: "..." }   (written by calibrate)
 *
 * so every other constant keeps its cited source, and the profile loader only has to step
 * over one more section. `--free smmu.sync_ns=10:2000` adds one on the command line. The
 * bounds must lie within what the loader accepts for the key: checked by loading the profile
 * with each bound in place (check_loadable), which is the loader's own range check whatever
 * table it uses.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "calibrate/calib.h"
#include "iommulab/sim.h"
#include "util/yaml_file.h"
#include "util/yaml_util.h"

/* Bounds above this are certainly typos (and keep whole numbers exact in a double). */
#define FREE_BOUND_MAX 1e12

static int ferr(char *err, size_t errlen, const char *file, const yaml_node_t *at,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int ferr(char *err, size_t errlen, const char *file, const yaml_node_t *at,
		const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = ilab_yaml_verrf(err, errlen, file, at, fmt, ap);
	va_end(ap);
	return ret;
}

/* A whole number >= 1 and <= FREE_BOUND_MAX written plainly: 0, or -1. */
static int whole(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtod(s, &end);
	if (*end || v < 1 || v > FREE_BOUND_MAX || v != floor(v))
		return -1;
	*out = v;
	return 0;
}

static struct ilab_calib_free *find(struct ilab_calib_set *set, const char *key)
{
	for (unsigned i = 0; i < set->nr_free; i++)
		if (!strcmp(set->free[i].key, key))
			return &set->free[i];
	return NULL;
}

static struct ilab_calib_free *add(struct ilab_calib_set *set, const char *key)
{
	struct ilab_calib_free *f = find(set, key);

	if (f)
		return f;
	if (set->nr_free == ILAB_CALIB_MAX_FREE)
		return NULL;
	f = &set->free[set->nr_free++];
	memset(f, 0, sizeof(*f));
	snprintf(f->key, sizeof(f->key), "%s", key);
	return f;
}

/* One entry { min: A, max: B [, value: V] [, fitted_on: "..."] }. */
static int parse_entry(struct ilab_calib_set *set, yaml_document_t *doc, yaml_node_t *v,
		       const char *key)
{
	struct ilab_calib_free *f;
	bool have_min = false, have_max = false;
	double lo = 0, hi = 0;

	if (v->type != YAML_MAPPING_NODE)
		return -EINVAL;
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++) {
		const char *k = ilab_yaml_scalar(yaml_document_get_node(doc, p->key));
		yaml_node_t *x = yaml_document_get_node(doc, p->value);

		if (k && !strcmp(k, "min")) {
			if (!ilab_yaml_is_plain(x) || whole(ilab_yaml_scalar(x), &lo))
				return -ERANGE;
			have_min = true;
		} else if (k && !strcmp(k, "max")) {
			if (!ilab_yaml_is_plain(x) || whole(ilab_yaml_scalar(x), &hi))
				return -ERANGE;
			have_max = true;
		} else if (!k || (strcmp(k, "value") && strcmp(k, "fitted_on"))) {
			return -ENOENT;
		}
	}
	if (!have_min || !have_max)
		return -ENODATA;
	if (lo >= hi)
		return -EDOM;
	f = add(set, key);
	if (!f)
		return -ENOSPC;
	f->min = lo;
	f->max = hi;
	return 0;
}

static int entry_error(int rc, const char *file, const yaml_node_t *at, const char *key,
		       char *err, size_t errlen)
{
	switch (rc) {
	case -ERANGE:
		return ferr(err, errlen, file, at, "free: %s: min and max must be whole numbers "
			    "from 1 to 1e12", key);
	case -ENOENT:
		return ferr(err, errlen, file, at, "free: %s: expected the keys min, max (and "
			    "value, fitted_on, written by iommulab calibrate)", key);
	case -ENODATA:
		return ferr(err, errlen, file, at, "free: %s: needs both min and max", key);
	case -EDOM:
		return ferr(err, errlen, file, at, "free: %s: min must be below max", key);
	case -ENOSPC:
		return ferr(err, errlen, file, at, "free: more than %d free constants",
			    ILAB_CALIB_MAX_FREE);
	default:
		return ferr(err, errlen, file, at, "free: %s: expected { min: N, max: N }", key);
	}
}

int ilab_calib_free_from_profile(struct ilab_calib_set *set, char *err, size_t errlen)
{
	const char *file = set->profile_path;
	yaml_document_t doc;
	yaml_node_t *root, *fr;
	int rc;

	rc = ilab_yaml_load(set->profile_text, set->profile_len, file, "profile",
			    ILAB_YAML_ERROR_PROBLEM_CONTEXT, &doc, err, errlen);
	if (rc)
		return rc;
	root = yaml_document_get_root_node(&doc);
	fr = ilab_yaml_map_get(&doc, root, "free");
	if (fr && fr->type != YAML_MAPPING_NODE)
		rc = ferr(err, errlen, file, fr, "free: expected a mapping 'section: { key: "
			  "{ min: N, max: N } }'");
	for (yaml_node_pair_t *s = fr && !rc ? fr->data.mapping.pairs.start : NULL;
	     s && s < fr->data.mapping.pairs.top && !rc; s++) {
		yaml_node_t *sk = yaml_document_get_node(&doc, s->key);
		yaml_node_t *sv = yaml_document_get_node(&doc, s->value);
		const char *section = ilab_yaml_scalar(sk);

		if (!section || sv->type != YAML_MAPPING_NODE) {
			rc = ferr(err, errlen, file, sk, "free: expected 'section: { key: { min: N, "
				  "max: N } }'");
			break;
		}
		for (yaml_node_pair_t *p = sv->data.mapping.pairs.start;
		     p < sv->data.mapping.pairs.top && !rc; p++) {
			yaml_node_t *kn = yaml_document_get_node(&doc, p->key);
			const char *k = ilab_yaml_scalar(kn);
			char key[ILAB_CALIB_KEY_MAX];

			if (!k || snprintf(key, sizeof(key), "%s.%s", section, k) >=
					  (int)sizeof(key)) {
				rc = ferr(err, errlen, file, kn, "free: a key must be a word");
				break;
			}
			if (find(set, key)) {
				rc = ferr(err, errlen, file, kn, "free: %s given twice", key);
				break;
			}
			rc = parse_entry(set, &doc, yaml_document_get_node(&doc, p->value), key);
			if (rc)
				rc = entry_error(rc, file, yaml_document_get_node(&doc, p->value),
						 key, err, errlen);
		}
	}
	yaml_document_delete(&doc);
	return rc;
}

int ilab_calib_free_add_arg(struct ilab_calib_set *set, const char *arg, char *err,
			    size_t errlen)
{
	char key[ILAB_CALIB_KEY_MAX], lo[32], hi[32];
	const char *eq = strchr(arg, '='), *colon = eq ? strchr(eq, ':') : NULL;
	struct ilab_calib_free *f;
	double a, b;

	if (!eq || !colon || eq == arg || (size_t)(eq - arg) >= sizeof(key) ||
	    (size_t)(colon - eq - 1) >= sizeof(lo) || strlen(colon + 1) >= sizeof(hi) ||
	    !memchr(arg, '.', (size_t)(eq - arg)))
		return ilab_errf(err, errlen, -EINVAL, "--free %s: expected SECTION.KEY=MIN:MAX "
				 "(smmu.sync_ns=10:2000)", arg);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
	snprintf(lo, sizeof(lo), "%.*s", (int)(colon - eq - 1), eq + 1);
	snprintf(hi, sizeof(hi), "%s", colon + 1);
	if (whole(lo, &a) || whole(hi, &b))
		return ilab_errf(err, errlen, -EINVAL, "--free %s: MIN and MAX must be whole "
				 "numbers from 1 to 1e12", arg);
	if (a >= b)
		return ilab_errf(err, errlen, -EINVAL, "--free %s: MIN must be below MAX", arg);
	f = add(set, key);
	if (!f)
		return ilab_errf(err, errlen, -EINVAL, "--free %s: more than %d free constants",
				 arg, ILAB_CALIB_MAX_FREE);
	f->min = a;
	f->max = b;
	return 0;
}

/* The constant's value as the profile gives it (a plain whole number), into *v. */
static int profile_value(const struct ilab_calib_set *set, const char *key, double *v,
			 char *err, size_t errlen)
{
	char section[ILAB_CALIB_KEY_MAX];
	const char *dot = strchr(key, '.');
	yaml_document_t doc;
	yaml_node_t *n;
	int rc;

	rc = ilab_yaml_load(set->profile_text, set->profile_len, set->profile_path, "profile",
			    ILAB_YAML_ERROR_PROBLEM_CONTEXT, &doc, err, errlen);
	if (rc)
		return rc;
	snprintf(section, sizeof(section), "%.*s", dot ? (int)(dot - key) : 0, key);
	n = ilab_yaml_map_get(&doc, yaml_document_get_root_node(&doc), section);
	n = ilab_yaml_map_get(&doc, n, dot ? dot + 1 : "");
	if (!n)
		rc = ilab_errf(err, errlen, -EINVAL, "%s: free constant %s: the profile has no "
			       "such key", set->profile_path, key);
	else if (!ilab_yaml_is_plain(n) || whole(ilab_yaml_scalar(n), v))
		rc = ferr(err, errlen, set->profile_path, n, "free constant %s: its value '%s' is "
			  "not a whole number >= 1", key,
			  ilab_yaml_scalar(n) ? ilab_yaml_scalar(n) : "");
	yaml_document_delete(&doc);
	return rc;
}

/* Does the loader accept the profile with key = v? Today it judges each key by its parser
 * (non-negative integers, latencies >= 1 ...); a table of ranges per key, when the loader has
 * one, is applied the same way. This is the one place bounds are judged. */
static int check_loadable(const struct ilab_calib_set *set, const char *key, double v,
			  const char *which, char *err, size_t errlen)
{
	struct ilab_profile_override o = { .key = key };
	struct ilab_profile prof;
	char val[32], msg[512], *text = NULL;
	size_t len;
	int rc;

	snprintf(val, sizeof(val), "%.0f", v);
	o.value = val;
	rc = ilab_profile_override(set->profile_text, set->profile_len, &o, 1, &text, &len, msg,
				   sizeof(msg));
	if (!rc)
		rc = ilab_profile_parse(text, len, set->profile_path, &prof, msg, sizeof(msg));
	free(text);
	if (rc)
		return ilab_errf(err, errlen, -EINVAL, "free constant %s: its %s %s is outside what "
				 "the profile loader accepts (%s)", key, which, val, msg);
	return 0;
}

int ilab_calib_free_check(struct ilab_calib_set *set, char *err, size_t errlen)
{
	if (!set->nr_terms)
		return ilab_errf(err, errlen, -EINVAL, "the measurement set has no published "
				 "figures to fit");
	if (!set->nr_free)
		return ilab_errf(err, errlen, -EINVAL, "%s: no free constants (a free: section in "
				 "the profile, or --free SECTION.KEY=MIN:MAX)", set->profile_path);
	for (unsigned i = 0; i < set->nr_free; i++) {
		struct ilab_calib_free *f = &set->free[i];
		int rc = profile_value(set, f->key, &f->prior, err, errlen);

		if (!rc)
			rc = check_loadable(set, f->key, f->min, "min", err, errlen);
		if (!rc)
			rc = check_loadable(set, f->key, f->max, "max", err, errlen);
		if (rc)
			return rc;
		f->value = f->prior;
	}
	return 0;
}
