/* profile_out.c — the fitted profile: the input profile's text with each free constant's
 * value replaced where it stands (`  sync_ns: 87` -> `  sync_ns: 93`, the line's comment and
 * every comment around it kept: each other constant keeps its cited source), and the free:
 * section rewritten at the end with each constant's bounds, value and the set it was fitted
 * on. A text edit, not a YAML round trip, because libyaml's emitter drops comments; the result
 * is checked by loading it, and by comparing it with the YAML round trip of the same values.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"
#include "iommulab/sim.h"
#include "util/errf.h"

/* Lines of text, each without its '\n'. */
struct lines {
	unsigned nr;
	char **l;
};

static int split(const char *text, size_t len, struct lines *ls)
{
	const char *p = text, *end = text + len;

	ls->nr = 0;
	ls->l = NULL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char **l = realloc(ls->l, (ls->nr + 1) * sizeof(*l));

		if (!l)
			return -ENOMEM;
		ls->l = l;
		if (!(ls->l[ls->nr] = strndup(p, n)))
			return -ENOMEM;
		ls->nr++;
		p += n + (nl ? 1 : 0);
	}
	return 0;
}

static void lines_free(struct lines *ls)
{
	for (unsigned i = 0; i < ls->nr; i++)
		free(ls->l[i]);
	free(ls->l);
}

static bool top_level(const char *l)
{
	return (l[0] >= 'a' && l[0] <= 'z') || (l[0] >= 'A' && l[0] <= 'Z') || l[0] == '_';
}

/* Replace section.key's value in ls with v. */
static int set_value(struct lines *ls, const char *key, long long v, char *err, size_t errlen)
{
	char section[ILAB_CALIB_KEY_MAX], pat[2 * ILAB_CALIB_KEY_MAX];
	const char *dot = strchr(key, '.');
	regex_t sec, kv;
	regmatch_t m[4];
	int in = 0, rc = -ENOENT;

	snprintf(section, sizeof(section), "%.*s", (int)(dot - key), key);
	snprintf(pat, sizeof(pat), "^%s:[[:space:]]*(#.*)?$", section);
	if (regcomp(&sec, pat, REG_EXTENDED))
		return -EINVAL;
	snprintf(pat, sizeof(pat), "^([[:space:]]+%s:[[:space:]]*)([0-9]+)([[:space:]]*(#.*)?)$",
		 dot + 1);
	if (regcomp(&kv, pat, REG_EXTENDED)) {
		regfree(&sec);
		return -EINVAL;
	}
	for (unsigned i = 0; i < ls->nr && rc == -ENOENT; i++) {
		char *nl;

		if (top_level(ls->l[i])) {
			in = !regexec(&sec, ls->l[i], 0, NULL, 0);
			continue;
		}
		if (!in || regexec(&kv, ls->l[i], 4, m, 0))
			continue;
		if (asprintf(&nl, "%.*s%lld%s", (int)m[1].rm_eo, ls->l[i], v,
			     ls->l[i] + m[2].rm_eo) < 0) {
			rc = -ENOMEM;
			break;
		}
		free(ls->l[i]);
		ls->l[i] = nl;
		rc = 0;
	}
	regfree(&sec);
	regfree(&kv);
	if (rc == -ENOENT)
		return ilab_errf(err, errlen, -EINVAL, "%s: cannot write the fitted profile: no "
				 "line '  %s: N' in its section %s: (a free constant must be "
				 "written as its own key: value line)", key, dot + 1, section);
	return rc;
}

/* Drop the free: section (from its line to the next top-level line) and the comment lines
 * just above it, which describe it. */
static void drop_free(struct lines *ls)
{
	unsigned i, j, k;

	for (i = 0; i < ls->nr && strncmp(ls->l[i], "free:", 5); i++)
		;
	if (i == ls->nr)
		return;
	for (j = i + 1; j < ls->nr && !top_level(ls->l[j]); j++)
		;
	for (k = i; k > 0 && ls->l[k - 1][0] == '#'; k--)
		;
	for (unsigned x = k; x < j; x++)
		free(ls->l[x]);
	memmove(&ls->l[k], &ls->l[j], (ls->nr - j) * sizeof(*ls->l));
	ls->nr -= j - k;
}

static int append_free(FILE *f, const struct ilab_calib_set *set, const double *theta,
		       const char *fitted_on)
{
	char section[ILAB_CALIB_KEY_MAX];

	fprintf(f, "# Free constants (iommulab calibrate, docs/calibration.md): the bounds each was "
		"fitted within,\n# its value (also set in its section above) and the set it was "
		"fitted on.\nfree:\n");
	for (unsigned pass = 0; pass < set->nr_free; pass++) {
		const struct ilab_calib_free *c = &set->free[pass];
		const char *dot = strchr(c->key, '.');
		bool seen = false;

		snprintf(section, sizeof(section), "%.*s", (int)(dot - c->key), c->key);
		for (unsigned q = 0; q < pass; q++)
			seen |= !strncmp(set->free[q].key, c->key, (size_t)(dot - c->key) + 1);
		if (seen)
			continue; /* printed with its section */
		fprintf(f, "  %s:\n", section);
		for (unsigned q = pass; q < set->nr_free; q++) {
			const struct ilab_calib_free *e = &set->free[q];

			if (strncmp(e->key, c->key, (size_t)(dot - c->key) + 1))
				continue;
			fprintf(f, "    %s: { min: %.0f, max: %.0f, value: %lld, fitted_on: \"%s\" }\n",
				e->key + (dot - c->key) + 1, e->min, e->max, llround(theta[q]),
				e->fixed ? "(not fitted: held at its prior)" : fitted_on);
		}
	}
	return ferror(f) ? -EIO : 0;
}

int ilab_calib_fitted_profile(const struct ilab_calib_set *set, const double *theta,
			      const char *fitted_on, char **out, size_t *outlen, char *err,
			      size_t errlen)
{
	struct lines ls;
	struct ilab_profile prof;
	char *a = NULL, *b = NULL, msg[512];
	size_t alen, blen;
	FILE *f;
	int rc = split(set->profile_text, set->profile_len, &ls);

	*out = NULL;
	for (unsigned i = 0; !rc && i < set->nr_free; i++)
		rc = set_value(&ls, set->free[i].key, llround(theta[i]), err, errlen);
	if (rc) {
		lines_free(&ls);
		return rc;
	}
	drop_free(&ls);
	while (ls.nr && !ls.l[ls.nr - 1][0])
		free(ls.l[--ls.nr]); /* one blank line before the section */
	f = open_memstream(out, outlen);
	if (!f) {
		lines_free(&ls);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < ls.nr; i++)
		fprintf(f, "%s\n", ls.l[i]);
	fputc('\n', f);
	rc = append_free(f, set, theta, fitted_on);
	if (fclose(f) && !rc)
		rc = -ENOMEM;
	lines_free(&ls);
	/* the check: it loads, and the values in it are exactly theta's (the YAML round trip of
	 * the result with theta's values set again is that of the result alone) */
	if (!rc && ilab_profile_parse(*out, *outlen, set->profile_path, &prof, msg, sizeof(msg)))
		rc = ilab_errf(err, errlen, -EINVAL, "the fitted profile does not load: %s", msg);
	if (!rc) {
		struct ilab_calib_set s = *set;

		s.profile_text = *out;
		s.profile_len = *outlen;
		rc = ilab_calib_profile_text(&s, theta, &a, &alen, err, errlen);
		if (!rc)
			rc = ilab_profile_override(*out, *outlen, NULL, 0, &b, &blen, err, errlen);
		if (!rc && (alen != blen || memcmp(a, b, alen)))
			rc = ilab_errf(err, errlen, -EINVAL, "the fitted profile does not hold the "
				       "fitted values (a key given twice?)");
	}
	free(a);
	free(b);
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}
