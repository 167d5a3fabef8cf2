/* parts.c — a measurements file's `parts:` entries (from --import lat_mem_rd and
 * core-to-core-latency, or written by hand) applied to the calibrated profile:
 *
 *   parts:
 *     - { part: memory_latency, cpu_node: 0, memory_node: 1, value: 135, unit: ns }
 *     - { part: line_transfer, cpus: [3, 40], value: 80.5, unit: ns }
 *
 * A part's measurement is not a figure the model is fitted to: it is the constant itself
 * (memory.local_ns, memory.latency_by_distance, cache.transfer_local_ns,
 * cache.transfer_by_distance: docs/simulation.md). Each entry is keyed by the nodes it joins
 * on the profile's topology: the same node gives the local constant, two nodes the entry of
 * their SLIT distance. The constant takes the median of its entries (the profile's own
 * transfer figures are medians of core-to-core cells), rounded to whole ns, written in place
 * in the profile text so that the fitted profile carries it beside its sources. A measured
 * part may not also be a free constant of the fit.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "calibrate/calib.h"
#include "iommulab/sim.h"
#include "iommulab/topo.h"
#include "util/errf.h"
#include "util/yaml_util.h"

#define MAX_KEYS 64

static int file_errf(char *err, size_t errlen, const char *file, size_t line, size_t column,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int file_errf(char *err, size_t errlen, const char *file, size_t line, size_t column,
		     const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ilab_file_verrf(err, errlen, file, line, column, fmt, ap);
	va_end(ap);
	return rc;
}

struct part_values {
	char key[ILAB_CALIB_KEY_MAX]; /* "memory.local_ns", "cache.transfer_by_distance.16" */
	unsigned nr, cap;
	double *v;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(struct part_values *p)
{
	qsort(p->v, p->nr, sizeof(*p->v), cmp_double);
	return p->nr % 2 ? p->v[p->nr / 2] : (p->v[p->nr / 2 - 1] + p->v[p->nr / 2]) / 2;
}

static int add_value(struct part_values *keys, unsigned *nr, const char *key, double v)
{
	unsigned i;

	for (i = 0; i < *nr && strcmp(keys[i].key, key); i++)
		;
	if (i == *nr) {
		if (*nr == MAX_KEYS)
			return -ENOSPC;
		snprintf(keys[i].key, sizeof(keys[i].key), "%s", key);
		(*nr)++;
	}
	if (keys[i].nr == keys[i].cap) {
		unsigned cap = keys[i].cap ? 2 * keys[i].cap : 16;
		double *n = realloc(keys[i].v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		keys[i].v = n;
		keys[i].cap = cap;
	}
	keys[i].v[keys[i].nr++] = v;
	return 0;
}

static bool whole(yaml_node_t *n, long *out)
{
	const char *t = ilab_yaml_scalar(n);
	char *end;

	if (!t || !*t)
		return false;
	*out = strtol(t, &end, 10);
	return !*end && *out >= 0;
}

/* The profile key an entry measures, from the nodes it joins: 0, or a message in err. */
static int entry_key(yaml_document_t *doc, yaml_node_t *e, const struct ilab_topo *topo,
		     char *key, size_t keylen, const char **what, char *err, size_t errlen)
{
	const char *part = ilab_yaml_scalar(ilab_yaml_map_get(doc, e, "part"));
	long a, b;
	int na, nb;

	if (part && !strcmp(part, "memory_latency")) {
		if (!whole(ilab_yaml_map_get(doc, e, "cpu_node"), &a) ||
		    !whole(ilab_yaml_map_get(doc, e, "memory_node"), &b))
			return ilab_errf(err, errlen, -EINVAL, "memory_latency needs cpu_node and "
					 "memory_node");
		na = (int)a;
		nb = (int)b;
		if (a >= ilab_topo_nr_nodes(topo) || b >= ilab_topo_nr_nodes(topo))
			return ilab_errf(err, errlen, -EINVAL, "node %ld does not exist on %s",
					 a >= ilab_topo_nr_nodes(topo) ? a : b, ilab_topo_name(topo));
		*what = "memory";
	} else if (part && !strcmp(part, "line_transfer")) {
		yaml_node_t *c = ilab_yaml_map_get(doc, e, "cpus");

		if (!c || c->type != YAML_SEQUENCE_NODE ||
		    c->data.sequence.items.top - c->data.sequence.items.start != 2 ||
		    !whole(yaml_document_get_node(doc, c->data.sequence.items.start[0]), &a) ||
		    !whole(yaml_document_get_node(doc, c->data.sequence.items.start[1]), &b))
			return ilab_errf(err, errlen, -EINVAL, "line_transfer needs cpus: [A, B]");
		if (a >= ilab_topo_nr_cpus(topo) || b >= ilab_topo_nr_cpus(topo))
			return ilab_errf(err, errlen, -EINVAL, "CPU %ld does not exist on %s",
					 a >= ilab_topo_nr_cpus(topo) ? a : b, ilab_topo_name(topo));
		na = ilab_topo_cpu_node(topo, (unsigned)a);
		nb = ilab_topo_cpu_node(topo, (unsigned)b);
		*what = "cache";
	} else {
		return ilab_errf(err, errlen, -EINVAL, "part: memory_latency or line_transfer, not "
				 "'%s'", part ? part : "");
	}
	if (na == nb)
		snprintf(key, keylen, "%s.%s", *what, !strcmp(*what, "memory") ? "local_ns"
									: "transfer_local_ns");
	else
		snprintf(key, keylen, "%s.%s.%u", *what, !strcmp(*what, "memory")
			 ? "latency_by_distance" : "transfer_by_distance",
			 ilab_topo_distance(topo, (unsigned)na, (unsigned)nb));
	return 0;
}

/* key's number replaced in the text: "section.key" on its own `  key: N` line, or
 * "section.map.D" inside the flow mapping `  map: { D: N, ... }`. */
static int set_in_text(char **text, size_t *len, const char *key, long long v, char *err,
		       size_t errlen)
{
	char section[ILAB_CALIB_KEY_MAX], name[ILAB_CALIB_KEY_MAX], entry[32] = "", pat[256];
	const char *dot = strchr(key, '.'), *dot2 = dot ? strchr(dot + 1, '.') : NULL;
	char *p = *text, *line_end, *out;
	bool in = false;
	regex_t re;
	regmatch_t m[4];

	snprintf(section, sizeof(section), "%.*s", (int)(dot - key), key);
	snprintf(name, sizeof(name), "%.*s", dot2 ? (int)(dot2 - dot - 1) : (int)strlen(dot + 1),
		 dot + 1);
	if (dot2)
		snprintf(entry, sizeof(entry), "%s", dot2 + 1);
	if (dot2)
		snprintf(pat, sizeof(pat), "^[[:space:]]+%s:[[:space:]]*\\{(.*,)?[[:space:]]*%s:"
			 "[[:space:]]*([0-9]+)", name, entry);
	else
		snprintf(pat, sizeof(pat), "^[[:space:]]+%s:[[:space:]]*()([0-9]+)", name);
	/* the number is group 2 either way */
	if (regcomp(&re, pat, REG_EXTENDED))
		return -EINVAL;
	for (; p < *text + *len; p = line_end + 1) {
		char saved;

		line_end = memchr(p, '\n', (size_t)(*text + *len - p));
		if (!line_end)
			line_end = *text + *len;
		if (p[0] != ' ' && p[0] != '#' && p[0] != '\n' && p < line_end)
			in = !strncmp(p, section, strlen(section)) && p[strlen(section)] == ':';
		if (!in || p[0] != ' ')
			continue;
		saved = *line_end;
		*line_end = '\0';
		if (regexec(&re, p, 4, m, 0)) {
			*line_end = saved;
			continue;
		}
		*line_end = saved;
		if (asprintf(&out, "%.*s%lld%s", (int)(p - *text + m[2].rm_so), *text, v,
			     p + m[2].rm_eo) < 0) {
			regfree(&re);
			return -ENOMEM;
		}
		regfree(&re);
		free(*text);
		*text = out;
		*len = strlen(out);
		return 0;
	}
	regfree(&re);
	return ilab_errf(err, errlen, -EINVAL, "the profile has no %s to set (%s in its %s: "
			 "section)", key, dot2 ? "a { distance: ns } table with this distance"
			 : "a line 'key: N'", section);
}

int ilab_calib_parts_apply(struct ilab_calib_set *set, const char *file, void *docp,
			   void *listp, char *err, size_t errlen)
{
	yaml_document_t *doc = docp;
	yaml_node_t *list = listp;
	struct part_values keys[MAX_KEYS];
	struct ilab_profile prof;
	struct ilab_topo *topo = NULL;
	unsigned nr = 0, i = 0;
	size_t off = 0;
	int rc;

	memset(keys, 0, sizeof(keys));
	rc = ilab_profile_parse(set->profile_text, set->profile_len, set->profile_path, &prof, err,
				errlen);
	if (!rc)
		rc = ilab_topo_load(prof.topology, &topo, err, errlen);
	for (yaml_node_item_t *it = rc ? NULL : list->data.sequence.items.start;
	     it && it < list->data.sequence.items.top && !rc; it++, i++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it);
		const char *unit, *what, *vt;
		char key[ILAB_CALIB_KEY_MAX], msg[512], *end;
		double v = 0;

		unit = e->type == YAML_MAPPING_NODE ? ilab_yaml_scalar(ilab_yaml_map_get(doc, e,
											 "unit")) : NULL;
		vt = e->type == YAML_MAPPING_NODE ? ilab_yaml_scalar(ilab_yaml_map_get(doc, e,
										       "value")) : NULL;
		if (vt)
			v = strtod(vt, &end);
		if (e->type != YAML_MAPPING_NODE)
			rc = ilab_errf(msg, sizeof(msg), -EINVAL, "expected a mapping (part, value, "
				       "unit, and the nodes or cpus)");
		else if (!vt || *end || !(v > 0) || !isfinite(v) || !unit || strcmp(unit, "ns"))
			rc = ilab_errf(msg, sizeof(msg), -EINVAL, "needs value: a latency > 0 and "
				       "unit: ns");
		else
			rc = entry_key(doc, e, topo, key, sizeof(key), &what, msg, sizeof(msg));
		for (unsigned f = 0; !rc && f < set->nr_free; f++)
			if (!strncmp(set->free[f].key, key, strlen(set->free[f].key)))
				rc = ilab_errf(msg, sizeof(msg), -EINVAL, "%s is measured here and a "
					       "free constant of the fit: drop one", key);
		if (!rc && (rc = add_value(keys, &nr, key, v)))
			snprintf(msg, sizeof(msg), "%s", rc == -ENOSPC ? "too many constants"
								      : "out of memory");
		if (rc)
			rc = file_errf(err, errlen, file, e->start_mark.line + 1,
					    e->start_mark.column + 1, "part %u: %s", i + 1, msg);
	}
	for (unsigned k = 0; !rc && k < nr; k++) {
		double m = median(&keys[k]);

		rc = set_in_text(&set->profile_text, &set->profile_len, keys[k].key, llround(m),
				 err, errlen);
		if (!rc && off < sizeof(set->parts_note))
			off += (size_t)snprintf(set->parts_note + off, sizeof(set->parts_note) - off,
						"%s%s=%lld (median of %u)", off ? ", " : "",
						keys[k].key, llround(m), keys[k].nr);
	}
	if (!rc) {
		char msg[1024];

		if (ilab_profile_parse(set->profile_text, set->profile_len, set->profile_path,
				       &prof, msg, sizeof(msg)))
			rc = ilab_errf(err, errlen, -EINVAL, "%s: the profile with the measured "
				       "parts does not load: %s", file, msg);
	}
	for (unsigned k = 0; k < MAX_KEYS; k++)
		free(keys[k].v);
	ilab_topo_free(topo);
	return rc;
}
