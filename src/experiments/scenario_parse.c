/* scenario_parse.c — reads a scenario file (YAML) into struct ilab_scenario, strictly: syntax
 * errors, unknown or duplicate keys, wrong types, missing fields, values out of range, unknown
 * workloads, parameters, metrics and units are all reported as "file:line:column: message".
 * It is not the runner (runner.c) and knows of workloads only what the registry declares.
 *
 * Parsed with libyaml's document API, whose nodes keep their source position (0-based marks,
 * printed 1-based). The format is described in docs/experiments.md.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "iommulab/scenario.h"
#include "iommulab/sim.h"
#include "iommulab/topo.h"
#include "util/yaml_file.h"
#include "util/yaml_util.h"

#define SCENARIO_FILE_MAX (1u << 20) /* a scenario is a page of text; refuse anything huge */
#define MAX_KEYS 16

struct sctx {
	yaml_document_t *doc;
	const char *file;
	char *err;
	size_t errlen;
	const struct ilab_workload *wl;
};

static int serr(struct sctx *c, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int serr(struct sctx *c, const yaml_node_t *at, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = ilab_yaml_verrf(c->err, c->errlen, c->file, at, fmt, ap);
	va_end(ap);
	return ret;
}

static yaml_node_t *node_at(struct sctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n ? n->type : YAML_NO_NODE) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

/* ---- mappings: known keys, duplicates, required keys ---------------------------------------- */

/* keys: NULL-terminated; a leading '!' marks a required key. vals[i] receives the value node of
 * keys[i] (NULL when absent). */
static int collect(struct sctx *c, const yaml_node_t *map, const char *what,
		   const char *const *keys, yaml_node_t **vals)
{
	size_t nr = 0;

	while (keys[nr])
		nr++;
	for (size_t i = 0; i < nr; i++)
		vals[i] = NULL;
	if (!map || map->type != YAML_MAPPING_NODE)
		return serr(c, map, "%s: expected a mapping, got %s", what, node_kind(map));

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node_at(c, p->key), *v = node_at(c, p->value);
		const char *key = ilab_yaml_scalar(k);
		size_t i;

		if (!key)
			return serr(c, k, "%s: a key must be a plain name", what);
		for (i = 0; i < nr; i++)
			if (strcmp(keys[i] + (keys[i][0] == '!'), key) == 0)
				break;
		if (i == nr) {
			char known[256] = "";
			size_t off = 0;

			for (size_t j = 0; j < nr && off < sizeof(known); j++)
				off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
							j ? ", " : "", keys[j] + (keys[j][0] == '!'));
			return serr(c, k, "unknown key '%s' in %s (known: %s)", key, what, known);
		}
		if (vals[i])
			return serr(c, k, "duplicate key '%s' in %s", key, what);
		vals[i] = v;
	}
	for (size_t i = 0; i < nr; i++)
		if (keys[i][0] == '!' && !vals[i])
			return serr(c, map, "%s: missing required key '%s'", what, keys[i] + 1);
	return 0;
}

/* ---- scalar values -------------------------------------------------------------------------- */

static int get_text(struct sctx *c, const yaml_node_t *v, const char *key, char *out, size_t sz)
{
	const char *s = ilab_yaml_scalar(v);

	if (!s)
		return serr(c, v, "%s: expected a string, got %s", key, node_kind(v));
	if (!*s)
		return serr(c, v, "%s: must not be empty", key);
	if (strlen(s) >= sz)
		return serr(c, v, "%s: longer than %zu characters", key, sz - 1);
	snprintf(out, sz, "%s", s);
	return 0;
}

/* Text shown on one line (a table header, a plot title or axis): no line breaks or other
 * control characters, which would break the table or be dropped from the plot in silence. */
static int get_line(struct sctx *c, const yaml_node_t *v, const char *key, char *out, size_t sz)
{
	int ret = get_text(c, v, key, out, sz);

	if (ret)
		return ret;
	for (const char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return serr(c, v, "%s: one line of text expected (a control character at "
				    "offset %zu)", key, (size_t)(p - out));
	return 0;
}

/* Names that end up in file names, JSON keys and gnuplot titles: [A-Za-z0-9][A-Za-z0-9_.=+-]*. */
static int get_ident(struct sctx *c, const yaml_node_t *v, const char *key, char *out, size_t sz)
{
	int ret = get_text(c, v, key, out, sz);

	if (ret)
		return ret;
	for (const char *p = out; *p; p++) {
		bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9');

		if (!alnum && (p == out || !strchr("_.=+-", *p)))
			return serr(c, v,
				    "%s: '%s' is not a name (letters, digits and _.=+- only, starting with a letter or digit)",
				    key, out);
	}
	return 0;
}

static int get_number(struct sctx *c, const yaml_node_t *v, const char *key, double min,
		      double max, bool integer, double *out)
{
	const char *s = ilab_yaml_scalar(v);
	char *end;
	double d;

	if (!s)
		return serr(c, v, "%s: expected a number, got %s", key, node_kind(v));
	if (!ilab_yaml_is_plain(v) || !*s || strspn(s, "0123456789+-.eE") != strlen(s))
		return serr(c, v, "%s: expected a number, got '%s'", key, s);
	errno = 0;
	d = strtod(s, &end);
	if (!*end && end != s && (errno == ERANGE || !isfinite(d))) /* 1e-320, 1e999 */
		return serr(c, v, "%s: %s is too small or too large for a double", key, s);
	if (*end || end == s)
		return serr(c, v, "%s: expected a number, got '%s'", key, s);
	if (integer && d != floor(d))
		return serr(c, v, "%s: expected an integer, got '%s'", key, s);
	if (d < min || d > max)
		return serr(c, v, "%s: %s is out of range [%g, %g]", key, s, min, max);
	*out = d;
	return 0;
}

static int get_choice(struct sctx *c, const yaml_node_t *v, const char *key,
		      const char *const *names, int *out)
{
	const char *s = ilab_yaml_scalar(v);
	char known[128] = "";
	size_t off = 0;

	if (!s)
		return serr(c, v, "%s: expected a string, got %s", key, node_kind(v));
	for (int i = 0; names[i]; i++) {
		if (strcmp(names[i], s) == 0) {
			*out = i;
			return 0;
		}
		off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s", i ? "|" : "",
					names[i]);
	}
	return serr(c, v, "%s: '%s' is not one of %s", key, s, known);
}

static int get_onoff(struct sctx *c, const yaml_node_t *v, const char *key, bool *out)
{
	static const char *const names[] = { "off", "on", "false", "true", NULL };
	const char *s = ilab_yaml_scalar(v);
	int i;

	if (!s)
		return serr(c, v, "%s: expected on or off, got %s", key, node_kind(v));
	if (get_choice(c, v, key, names, &i))
		return serr(c, v, "%s: expected on or off, got '%s'", key, s);
	*out = i & 1;
	return 0;
}

/* ---- names of the enums (shared with the report) -------------------------------------------- */

static const char *const engine_names[] = { "sim", "native", NULL };
static const char *const cma_names[] = { "global", "pernuma", NULL };
static const char *const lookup_names[] = { "refcount", "direct", NULL };
static const char *const mode_names[] = { "strict", "lazy", "passthrough", NULL };
static const char *const intel_nid_names[] = { "mainline", "unit_on_attach", "hint", NULL };
static const char *const fq_names[] = { "percpu", "single", NULL };
static const char *const depot_names[] = { "list", "fixed32", NULL };
static const char *const cmdq_lock_names[] = { "shared", "fair", NULL };
static const char *const kind_names[] = { "undecided", "calibration", "prediction", NULL };
static const char *const relation_names[] = { "eq", "gt", "lt", NULL };

#define NAME_OF(tbl, i) ((unsigned)(i) < sizeof(tbl) / sizeof(tbl[0]) - 1 ? tbl[i] : "?")

const char *ilab_engine_kind_name(enum ilab_engine_kind e) { return NAME_OF(engine_names, e); }
const char *ilab_cma_policy_name(enum ilab_cma_policy p) { return NAME_OF(cma_names, p); }
const char *ilab_domain_lookup_name(enum ilab_domain_lookup l) { return NAME_OF(lookup_names, l); }
const char *ilab_dma_mode_name(enum ilab_dma_mode m) { return NAME_OF(mode_names, m); }
const char *ilab_intel_nid_name(enum ilab_intel_nid n) { return NAME_OF(intel_nid_names, n); }
const char *ilab_fq_mech_name(enum ilab_fq_mech f) { return NAME_OF(fq_names, f); }
const char *ilab_depot_mech_name(enum ilab_depot_mech d) { return NAME_OF(depot_names, d); }
const char *ilab_ref_kind_name(enum ilab_ref_kind k) { return NAME_OF(kind_names, k); }
const char *ilab_ref_relation_name(enum ilab_ref_relation r) { return NAME_OF(relation_names, r); }

/* ---- sections ------------------------------------------------------------------------------ */

static int parse_mechanisms(struct sctx *c, const yaml_node_t *map, const char *what,
			    struct ilab_mechanisms *m)
{
	static const char *const keys[] = { "cma", "lookup", "map_pages", "ecmdq", "mode",
					    "vfio_attach_group_by_node", "intel_iommu_nid", "cmdqv",
					    "fq", "iova_depot", "cmdq_lock", NULL };
	yaml_node_t *v[MAX_KEYS];
	int ret, i;

	if ((ret = collect(c, map, what, keys, v)))
		return ret;
	if (v[0] && !(ret = get_choice(c, v[0], "cma", cma_names, &i)))
		m->cma = (enum ilab_cma_policy)i;
	if (!ret && v[1] && !(ret = get_choice(c, v[1], "lookup", lookup_names, &i))) {
		m->lookup = (enum ilab_domain_lookup)i;
		m->lookup_set = true;
	}
	if (!ret && v[2]) {
		ret = get_onoff(c, v[2], "map_pages", &m->map_pages);
		m->map_pages_set = true;
	}
	if (!ret && v[3])
		ret = get_onoff(c, v[3], "ecmdq", &m->ecmdq);
	if (!ret && v[4] && !(ret = get_choice(c, v[4], "mode", mode_names, &i)))
		m->mode = (enum ilab_dma_mode)i;
	if (!ret && v[5])
		ret = get_onoff(c, v[5], "vfio_attach_group_by_node", &m->vfio_attach_group_by_node);
	if (!ret && v[6] && !(ret = get_choice(c, v[6], "intel_iommu_nid", intel_nid_names, &i)))
		m->intel_iommu_nid = (enum ilab_intel_nid)i;
	if (!ret && v[7])
		ret = get_onoff(c, v[7], "cmdqv", &m->cmdqv);
	if (!ret && v[8] && !(ret = get_choice(c, v[8], "fq", fq_names, &i)))
		m->fq = (enum ilab_fq_mech)i;
	if (!ret && v[9] && !(ret = get_choice(c, v[9], "iova_depot", depot_names, &i))) {
		m->iova_depot = (enum ilab_depot_mech)i;
		m->iova_depot_set = true;
	}
	if (!ret && v[10] && !(ret = get_choice(c, v[10], "cmdq_lock", cmdq_lock_names, &i))) {
		m->cmdq_fair_lock = i == 1;
		m->cmdq_lock_set = true;
	}
	return ret;
}

/* One mechanism from its text, with the names parse_mechanisms takes (keep the two in step):
 * for iommulab sweep's mechanisms.* axes, which have no YAML node of a scenario to report at. */
int ilab_mechanism_set(struct ilab_mechanisms *m, const char *name, const char *value,
		       char *msg, size_t msglen)
{
	static const char *const onoff[] = { "off", "on", "false", "true", NULL };
	static const struct {
		const char *key;
		const char *const *names;
	} tbl[] = {
		{ "cma", cma_names }, { "lookup", lookup_names }, { "map_pages", onoff },
		{ "ecmdq", onoff }, { "mode", mode_names }, { "vfio_attach_group_by_node", onoff },
		{ "intel_iommu_nid", intel_nid_names }, { "cmdqv", onoff }, { "fq", fq_names },
		{ "iova_depot", depot_names }, { "cmdq_lock", cmdq_lock_names },
	};
	const size_t nr = sizeof(tbl) / sizeof(tbl[0]);
	char known[256] = "";
	size_t k, off = 0;
	int i;

	for (k = 0; k < nr && strcmp(tbl[k].key, name); k++)
		;
	if (k == nr) {
		for (size_t j = 0; j < nr; j++)
			off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
						j ? ", " : "", tbl[j].key);
		snprintf(msg, msglen, "unknown mechanism '%s' (known: %s)", name, known);
		return -EINVAL;
	}
	for (i = 0; tbl[k].names[i] && strcmp(tbl[k].names[i], value); i++)
		;
	if (!tbl[k].names[i]) {
		for (int j = 0; tbl[k].names[j] && (tbl[k].names != onoff || j < 2); j++)
			off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
						j ? "|" : "", tbl[k].names[j]);
		snprintf(msg, msglen, "'%s' is not one of %s", value, known);
		return -EINVAL;
	}
	switch (k) {
	case 0: m->cma = (enum ilab_cma_policy)i; break;
	case 1: m->lookup = (enum ilab_domain_lookup)i; m->lookup_set = true; break;
	case 2: m->map_pages = i & 1; m->map_pages_set = true; break;
	case 3: m->ecmdq = i & 1; break;
	case 4: m->mode = (enum ilab_dma_mode)i; break;
	case 5: m->vfio_attach_group_by_node = i & 1; break;
	case 6: m->intel_iommu_nid = (enum ilab_intel_nid)i; break;
	case 7: m->cmdqv = i & 1; break;
	case 8: m->fq = (enum ilab_fq_mech)i; break;
	case 9: m->iova_depot = (enum ilab_depot_mech)i; m->iova_depot_set = true; break;
	default: m->cmdq_fair_lock = i == 1; m->cmdq_lock_set = true; break;
	}
	return 0;
}

static void known_params(const struct ilab_workload *w, char *buf, size_t sz)
{
	size_t off = 0;

	buf[0] = '\0';
	for (const struct ilab_workload_param *p = w->params; p && p->name && off < sz; p++)
		off += (size_t)snprintf(buf + off, sz - off, "%s%s", p == w->params ? "" : ", ",
					p->name);
}

/* Set name = value in arr; at (may be NULL: the workload's default) is where the file says so. */
static void set_param(struct ilab_param *arr, unsigned *nr, const char *name, double value,
		      const yaml_node_t *at)
{
	unsigned i;

	for (i = 0; i < *nr; i++)
		if (strcmp(arr[i].name, name) == 0)
			break;
	if (i == *nr) {
		if (*nr >= ILAB_SCN_MAX_PARAMS)
			return;
		snprintf(arr[i].name, sizeof(arr[i].name), "%s", name);
		(*nr)++;
	}
	arr[i].value = value;
	arr[i].line = at ? (unsigned)at->start_mark.line + 1 : 0;
	arr[i].column = at ? (unsigned)at->start_mark.column + 1 : 0;
}

/* A mapping of workload parameters; each is set in arr (overriding what is there). */
static int parse_params(struct sctx *c, const yaml_node_t *map, const char *what,
			struct ilab_param *arr, unsigned *nr)
{
	if (map->type != YAML_MAPPING_NODE)
		return serr(c, map, "%s: expected a mapping, got %s", what, node_kind(map));
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node_at(c, p->key), *v = node_at(c, p->value);
		const struct ilab_workload_param *spec;
		const char *key = ilab_yaml_scalar(k);
		double d;
		int ret;

		if (!key)
			return serr(c, k, "%s: a key must be a plain name", what);
		spec = ilab_workload_param_find(c->wl, key);
		if (!spec) {
			char known[256];

			known_params(c->wl, known, sizeof(known));
			return serr(c, k, "unknown parameter '%s' for workload '%s' (known: %s)", key,
				    c->wl->name, known);
		}
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
			if (strcmp(ilab_yaml_scalar(node_at(c, q->key)), key) == 0)
				return serr(c, k, "duplicate key '%s' in %s", key, what);
		if ((ret = get_number(c, v, key, spec->min, spec->max, spec->integer, &d)))
			return ret;
		set_param(arr, nr, key, d, v);
	}
	return 0;
}

static int parse_reference(struct sctx *c, const yaml_node_t *map, struct ilab_reference *r)
{
	static const char *const keys[] = { "!metric", "!value", "!unit", "!kind", "relation",
					    "truncate", "tolerance", "note", NULL };
	const struct ilab_workload_metric *m;
	yaml_node_t *v[MAX_KEYS];
	int ret, i;

	if ((ret = collect(c, map, "reference figure", keys, v)))
		return ret;
	if ((ret = get_ident(c, v[0], "metric", r->metric, sizeof(r->metric))))
		return ret;
	m = ilab_workload_metric_find(c->wl, r->metric);
	if (!m) {
		char known[128] = "";
		size_t off = 0;

		for (const struct ilab_workload_metric *x = c->wl->metrics; x && x->name; x++)
			off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
						x == c->wl->metrics ? "" : ", ", x->name);
		return serr(c, v[0], "unknown metric '%s' for workload '%s' (known: %s)", r->metric,
			    c->wl->name, known);
	}
	/* A ratio is meaningless unless both figures are in the same unit. */
	if ((ret = get_number(c, v[1], "value", 1e-300, 1e18, false, &r->value)))
		return ret;
	if ((ret = get_line(c, v[2], "unit", r->unit, sizeof(r->unit))))
		return ret;
	if (strcmp(r->unit, m->unit) != 0)
		return serr(c, v[2], "unit '%s' does not match metric '%s', which is in %s", r->unit,
			    m->name, m->unit);
	if ((ret = get_choice(c, v[3], "kind", kind_names, &i)))
		return ret;
	r->kind = (enum ilab_ref_kind)i;
	if (v[4]) {
		if ((ret = get_choice(c, v[4], "relation", relation_names, &i)))
			return ret;
		r->relation = (enum ilab_ref_relation)i;
	}
	if (v[5] && (ret = get_number(c, v[5], "truncate", 0, 1e18, false, &r->truncate)))
		return ret;
	if (v[6] && (ret = get_number(c, v[6], "tolerance", 1e-6, 1, false, &r->tolerance)))
		return ret;
	if (v[7] && (ret = get_text(c, v[7], "note", r->note, sizeof(r->note))))
		return ret;
	return 0;
}

/* kernel: "X.Y" or latest (kernel_era.h). A YAML number such as 5.10 is read as its text. */
static int parse_kernel(struct sctx *c, const yaml_node_t *v, struct ilab_kernel_era *era)
{
	const char *s = ilab_yaml_scalar(v);
	char msg[160];

	if (!s)
		return serr(c, v, "kernel: expected a version (X.Y or latest), got %s", node_kind(v));
	if (ilab_kernel_era_parse(s, era, msg, sizeof(msg)))
		return serr(c, v, "%s", msg);
	return 0;
}

static int parse_case(struct sctx *c, const struct ilab_scenario *s, const yaml_node_t *map,
		      struct ilab_case *k)
{
	static const char *const keys[] = { "!label", "series", "mechanisms", "params",
					    "reference", "kernel", NULL };
	yaml_node_t *v[MAX_KEYS];
	int ret;

	if ((ret = collect(c, map, "case", keys, v)))
		return ret;
	k->line = (unsigned)map->start_mark.line + 1;
	if ((ret = get_ident(c, v[0], "label", k->label, sizeof(k->label))))
		return ret;
	for (unsigned i = 0; i < s->nr_cases; i++)
		if (strcmp(s->cases[i].label, k->label) == 0)
			return serr(c, v[0], "duplicate case label '%s' (first at line %u)", k->label,
				    s->cases[i].line);
	if (v[1] && (ret = get_line(c, v[1], "series", k->series, sizeof(k->series))))
		return ret;
	if (v[2] && (ret = parse_mechanisms(c, v[2], "case mechanisms", &k->mech)))
		return ret;
	if (v[3] && (ret = parse_params(c, v[3], "case params", k->params, &k->nr_params)))
		return ret;
	if (v[5]) {
		if ((ret = parse_kernel(c, v[5], &k->kernel)))
			return ret;
		k->has_kernel = true;
	}
	if (v[4]) {
		const yaml_node_t *seq = v[4];

		if (seq->type != YAML_SEQUENCE_NODE)
			return serr(c, seq, "reference: expected a list, got %s", node_kind(seq));
		for (yaml_node_item_t *it = seq->data.sequence.items.start;
		     it < seq->data.sequence.items.top; it++) {
			if (k->nr_refs == ILAB_SCN_MAX_REFS)
				return serr(c, node_at(c, *it), "reference: more than %d figures",
					    ILAB_SCN_MAX_REFS);
			if ((ret = parse_reference(c, node_at(c, *it), &k->refs[k->nr_refs])))
				return ret;
			k->nr_refs++;
		}
	}
	return 0;
}

static int parse_workload(struct sctx *c, struct ilab_scenario *s, const yaml_node_t *map,
			  struct ilab_param *defaults, unsigned *nr_defaults)
{
	static const char *const keys[] = { "!type", "params", "quick", NULL };
	yaml_node_t *v[MAX_KEYS];
	char type[ILAB_SCN_NAME_MAX];
	int ret;

	if ((ret = collect(c, map, "workload", keys, v)))
		return ret;
	if ((ret = get_text(c, v[0], "type", type, sizeof(type))))
		return ret;
	c->wl = s->workload = ilab_workload_find(type);
	if (!c->wl) {
		char known[256] = "";
		size_t off = 0;
		const struct ilab_workload *w;

		for (size_t i = 0; (w = ilab_workload_at(i)) != NULL && off < sizeof(known); i++)
			off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
						i ? ", " : "", w->name);
		return serr(c, v[0], "unknown workload '%s' (known: %s)", type, known);
	}
	/* Every parameter starts at the workload's documented default. */
	for (const struct ilab_workload_param *p = c->wl->params; p && p->name; p++)
		set_param(defaults, nr_defaults, p->name, p->dflt, NULL);
	if (v[1] && (ret = parse_params(c, v[1], "workload params", defaults, nr_defaults)))
		return ret;
	if (v[2] && (ret = parse_params(c, v[2], "workload quick", s->quick, &s->nr_quick)))
		return ret;
	return 0;
}

static int parse_tolerance(struct sctx *c, struct ilab_scenario *s, const yaml_node_t *map)
{
	static const char *const keys[] = { "calibration", "prediction", NULL };
	yaml_node_t *v[MAX_KEYS];
	int ret;

	if ((ret = collect(c, map, "tolerance", keys, v)))
		return ret;
	if (v[0] && (ret = get_number(c, v[0], "calibration", 1e-6, 1, false, &s->tol_calibration)))
		return ret;
	if (v[1] && (ret = get_number(c, v[1], "prediction", 1e-6, 1, false, &s->tol_prediction)))
		return ret;
	return 0;
}

static int parse_plot(struct sctx *c, struct ilab_scenario *s, const yaml_node_t *map)
{
	static const char *const keys[] = { "x", "xlabel", "logx", "logy", "y", NULL };
	yaml_node_t *v[MAX_KEYS];
	int ret;

	if ((ret = collect(c, map, "plot", keys, v)))
		return ret;
	if (v[0]) {
		if ((ret = get_ident(c, v[0], "x", s->plot_x, sizeof(s->plot_x))))
			return ret;
		if (!ilab_workload_param_find(s->workload, s->plot_x))
			return serr(c, v[0], "x: '%s' is not a parameter of workload '%s'",
				    s->plot_x, s->workload->name);
	}
	if (v[1] && (ret = get_line(c, v[1], "xlabel", s->plot_xlabel, sizeof(s->plot_xlabel))))
		return ret;
	if (v[2] && (ret = get_onoff(c, v[2], "logx", &s->plot_logx)))
		return ret;
	if (v[3] && (ret = get_onoff(c, v[3], "logy", &s->plot_logy)))
		return ret;
	if (v[4]) {
		if ((ret = get_ident(c, v[4], "y", s->plot_y, sizeof(s->plot_y))))
			return ret;
		if (!ilab_workload_metric_find(s->workload, s->plot_y))
			return serr(c, v[4], "y: '%s' is not a metric of workload '%s'", s->plot_y,
				    s->workload->name);
	}
	return 0;
}

/* The case labelled by v's text, by index; an error names the known labels' file lines. */
static int find_case(struct sctx *c, const struct ilab_scenario *s, const yaml_node_t *v,
		     const char *key, unsigned *idx)
{
	char label[ILAB_SCN_NAME_MAX];
	int ret;

	if ((ret = get_ident(c, v, key, label, sizeof(label))))
		return ret;
	for (unsigned i = 0; i < s->nr_cases; i++)
		if (strcmp(s->cases[i].label, label) == 0) {
			*idx = i;
			return 0;
		}
	return serr(c, v, "%s: no case is labelled '%s'", key, label);
}

/* The index of case k's published figure for metric, or an error at v. */
static int find_ref(struct sctx *c, const struct ilab_case *k, const yaml_node_t *v,
		    const char *metric, unsigned *idx)
{
	for (unsigned i = 0; i < k->nr_refs; i++)
		if (strcmp(k->refs[i].metric, metric) == 0) {
			*idx = i;
			return 0;
		}
	return serr(c, v, "case '%s' has no published figure for metric '%s'", k->label, metric);
}

static int parse_effect(struct sctx *c, const struct ilab_scenario *s, const yaml_node_t *map,
			struct ilab_effect *e)
{
	static const char *const keys[] = { "!label", "!metric", "!from", "!to", NULL };
	yaml_node_t *v[MAX_KEYS];
	int ret;

	if ((ret = collect(c, map, "effect", keys, v)))
		return ret;
	e->line = (unsigned)map->start_mark.line + 1;
	if ((ret = get_line(c, v[0], "label", e->label, sizeof(e->label))))
		return ret;
	if ((ret = get_ident(c, v[1], "metric", e->metric, sizeof(e->metric))))
		return ret;
	if ((ret = find_case(c, s, v[2], "from", &e->from)) ||
	    (ret = find_case(c, s, v[3], "to", &e->to)))
		return ret;
	if (e->from == e->to)
		return serr(c, v[3], "to: the same case as from ('%s')", s->cases[e->to].label);
	if ((ret = find_ref(c, &s->cases[e->from], v[2], e->metric, &e->from_ref)) ||
	    (ret = find_ref(c, &s->cases[e->to], v[3], e->metric, &e->to_ref)))
		return ret;
	return 0;
}

static int parse_effects(struct sctx *c, struct ilab_scenario *s, const yaml_node_t *seq)
{
	size_t n;
	int ret;

	if (seq->type != YAML_SEQUENCE_NODE)
		return serr(c, seq, "effects: expected a list, got %s", node_kind(seq));
	n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	if (n > ILAB_SCN_MAX_EFFECTS)
		return serr(c, seq, "effects: more than %d effects", ILAB_SCN_MAX_EFFECTS);
	if (n == 0)
		return 0;
	s->effects = calloc(n, sizeof(*s->effects));
	if (!s->effects)
		return -ENOMEM;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		if ((ret = parse_effect(c, s, node_at(c, *it), &s->effects[s->nr_effects])))
			return ret;
		s->nr_effects++;
	}
	return 0;
}

enum { K_NAME, K_SEED, K_TITLE, K_DESC, K_SOURCE, K_PROFILE, K_ENGINE, K_TOL, K_MECH, K_WORKLOAD,
       K_PLOT, K_CASES, K_NOTES, K_EFFECTS, K_KERNEL };

static int parse_root(struct sctx *c, struct ilab_scenario *s, const yaml_node_t *root)
{
	static const char *const keys[] = { "!name", "!seed", "!title", "description", "source",
					    "!profile", "engine", "tolerance", "mechanisms",
					    "!workload", "plot", "!cases", "notes", "effects",
					    "kernel", NULL };
	yaml_node_t *v[MAX_KEYS];
	struct ilab_mechanisms mech = { 0 };
	struct ilab_kernel_era kernel;
	bool has_kernel = false;
	struct ilab_param defaults[ILAB_SCN_MAX_PARAMS];
	unsigned nr_defaults = 0;
	char notes[ILAB_SCN_TEXT_MAX * 4];
	int ret, i;

	if ((ret = collect(c, root, "scenario", keys, v)))
		return ret;
	if ((ret = get_ident(c, v[K_NAME], "name", s->name, sizeof(s->name))))
		return ret;
	if ((ret = get_text(c, v[K_SEED], "seed", s->seed, sizeof(s->seed))))
		return ret;
	/* "none": a scenario that reproduces no seed (its cases are predictions only) */
	if (strcmp(s->seed, "none") &&
	    (strlen(s->seed) != 3 || strspn(s->seed, "0123456789") != 3))
		return serr(c, v[K_SEED], "seed: expected three digits (the seed file's number) or "
			    "none, got '%s'", s->seed);
	if ((ret = get_line(c, v[K_TITLE], "title", s->title, sizeof(s->title))))
		return ret;
	if (v[K_DESC] && (ret = get_text(c, v[K_DESC], "description", s->description,
					 sizeof(s->description))))
		return ret;
	if (v[K_SOURCE] && (ret = get_text(c, v[K_SOURCE], "source", s->source, sizeof(s->source))))
		return ret;
	if ((ret = get_ident(c, v[K_PROFILE], "profile", s->profile, sizeof(s->profile))))
		return ret;
	s->profile_line = (unsigned)v[K_PROFILE]->start_mark.line + 1;
	s->profile_column = (unsigned)v[K_PROFILE]->start_mark.column + 1;
	if (v[K_ENGINE]) {
		if ((ret = get_choice(c, v[K_ENGINE], "engine", engine_names, &i)))
			return ret;
		s->engine = (enum ilab_engine_kind)i;
	}
	if (v[K_TOL] && (ret = parse_tolerance(c, s, v[K_TOL])))
		return ret;
	if (v[K_MECH] && (ret = parse_mechanisms(c, v[K_MECH], "mechanisms", &mech)))
		return ret;
	if (v[K_KERNEL]) {
		if ((ret = parse_kernel(c, v[K_KERNEL], &kernel)))
			return ret;
		has_kernel = true;
	}
	if ((ret = parse_workload(c, s, v[K_WORKLOAD], defaults, &nr_defaults)))
		return ret;
	if (s->engine == ILAB_ENGINE_KIND_NATIVE && s->workload->sim_only)
		return serr(c, v[K_ENGINE], "engine: workload %s runs only in simulation (engine: sim)",
			    s->workload->name);
	if (v[K_PLOT] && (ret = parse_plot(c, s, v[K_PLOT])))
		return ret;
	if (v[K_NOTES] && (ret = get_text(c, v[K_NOTES], "notes", notes, sizeof(notes))))
		return ret;

	const yaml_node_t *seq = v[K_CASES];
	size_t n;

	if (seq->type != YAML_SEQUENCE_NODE)
		return serr(c, seq, "cases: expected a list, got %s", node_kind(seq));
	n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	if (n == 0)
		return serr(c, seq, "cases: the list is empty");
	if (n > ILAB_SCN_MAX_CASES)
		return serr(c, seq, "cases: more than %d cases", ILAB_SCN_MAX_CASES);
	s->cases = calloc(n, sizeof(*s->cases));
	if (!s->cases)
		return -ENOMEM;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		struct ilab_case *k = &s->cases[s->nr_cases];

		/* The case starts from the scenario's mechanisms and parameters. */
		k->mech = mech;
		k->has_kernel = has_kernel;
		if (has_kernel)
			k->kernel = kernel;
		memcpy(k->params, defaults, sizeof(defaults));
		k->nr_params = nr_defaults;
		if ((ret = parse_case(c, s, node_at(c, *it), k)))
			return ret;
		s->nr_cases++;
	}
	if (v[K_EFFECTS] && (ret = parse_effects(c, s, v[K_EFFECTS])))
		return ret;
	return 0;
}

int ilab_scenario_parse(const char *text, size_t len, const char *name,
			struct ilab_scenario **out, char *err, size_t errlen)
{
	struct sctx c = { .file = name ? name : "<scenario>", .err = err, .errlen = errlen };
	yaml_document_t doc;
	struct ilab_scenario *s;
	yaml_node_t *root;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	ret = ilab_yaml_check_depth(text, len, c.file, "scenario", err, errlen);
	if (ret)
		return ret;
	ret = ilab_yaml_load(text, len, c.file, "scenario", ILAB_YAML_ERROR_SYNTAX, &doc, err,
			     errlen);
	if (ret)
		return ret;
	c.doc = &doc;

	root = yaml_document_get_root_node(&doc);
	s = calloc(1, sizeof(*s));
	if (!s) {
		yaml_document_delete(&doc);
		return -ENOMEM;
	}
	snprintf(s->path, sizeof(s->path), "%s", c.file);
	s->tol_calibration = ILAB_TOL_CALIBRATION;
	s->tol_prediction = ILAB_TOL_PREDICTION;
	if (!root)
		ret = serr(&c, NULL, "the file is empty (expected a scenario mapping)");
	else
		ret = parse_root(&c, s, root);
	yaml_document_delete(&doc);
	if (ret) {
		if (ret == -ENOMEM && err && errlen)
			snprintf(err, errlen, "%s: out of memory", c.file);
		ilab_scenario_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

/* A parameter that names a NUMA node must name one of the machine's: said here, at the
 * parameter, rather than by every case failing at run time. */
static int check_param_nodes(const char *path, const struct ilab_scenario *s,
			     const struct ilab_param *arr, unsigned nr, unsigned case_line,
			     unsigned nodes, const char *machine, char *err, size_t errlen)
{
	for (unsigned i = 0; i < nr; i++) {
		const struct ilab_workload_param *spec = ilab_workload_param_find(s->workload,
										   arr[i].name);

		if (!spec || !spec->node || arr[i].value < nodes)
			continue;
		snprintf(err, errlen, "%s:%u:%u: %s: node %.0f does not exist on %s (nodes 0-%u)%s",
			 path, arr[i].line ? arr[i].line : case_line, arr[i].line ? arr[i].column : 1,
			 arr[i].name, arr[i].value, machine, nodes - 1,
			 arr[i].line ? "" : " (the workload's default)");
		return -EINVAL;
	}
	return 0;
}

/* The profile names a file: a wrong name is the scenario's error, found before anything runs
 * (not by every case failing), as is a node number its machine does not have. Here, not in
 * ilab_scenario_parse, which reads no files. */
static int check_profile(const char *path, struct ilab_scenario **out, char *err, size_t errlen)
{
	char msg[ILAB_PROFILE_PATH_MAX + 128];
	const struct ilab_scenario *s = *out;
	struct ilab_profile *prof = NULL;
	struct ilab_topo *topo = NULL;
	int ret = -EINVAL;

	prof = malloc(sizeof(*prof));
	if (!prof) {
		snprintf(err, errlen, "%s: out of memory", path);
		ret = -ENOMEM;
		goto out;
	}
	if (ilab_profile_open(s->profile, prof, msg, sizeof(msg)) ||
	    (s->workload->check_profile && s->workload->check_profile(prof, msg, sizeof(msg))) ||
	    ilab_topo_load(prof->topology, &topo, msg, sizeof(msg)))
		goto bad_profile;
	ret = check_param_nodes(path, s, s->quick, s->nr_quick, 1, ilab_topo_nr_nodes(topo),
				ilab_topo_name(topo), err, errlen);
	for (unsigned i = 0; !ret && i < s->nr_cases; i++)
		ret = check_param_nodes(path, s, s->cases[i].params, s->cases[i].nr_params,
					s->cases[i].line, ilab_topo_nr_nodes(topo),
					ilab_topo_name(topo), err, errlen);
	/* cmdqv: on needs a machine whose SMMU has one (the profile's smmu.cmdqv_vcmdqs) */
	for (unsigned i = 0; !ret && i < s->nr_cases; i++) {
		struct ilab_case eff;

		ilab_case_effective(s, &s->cases[i], 0, &eff);
		if (eff.mech.cmdqv && !prof->smmu_cmdqv_vcmdqs) {
			snprintf(err, errlen, "%s:%u:1: case '%s': cmdqv: on, but profile %s's SMMU "
				 "has no Tegra241 CMDQV (no smmu.cmdqv_vcmdqs)", path,
				 s->cases[i].line, s->cases[i].label, prof->name);
			ret = -EINVAL;
		}
	}
	for (unsigned i = 0; !ret && s->workload->check && i < s->nr_cases; i++)
		for (int quick = 0; !ret && quick <= (s->nr_quick > 0); quick++) {
			struct ilab_case eff;

			ilab_case_effective(s, &s->cases[i], quick, &eff);
			if (!s->workload->check(&eff, topo, msg, sizeof(msg)))
				continue;
			snprintf(err, errlen, "%s:%u:1: case '%s'%s on %s: %s", path,
				 s->cases[i].line, s->cases[i].label,
				 quick ? " with the quick: overrides" : "", ilab_topo_name(topo), msg);
			ret = -EINVAL;
		}
	goto out;
bad_profile:
	snprintf(err, errlen, "%s:%u:%u: profile: %s", path, s->profile_line, s->profile_column,
		 msg);
out:
	ilab_topo_free(topo);
	free(prof);
	if (ret) {
		ilab_scenario_free(*out);
		*out = NULL;
	}
	return ret;
}

int ilab_scenario_load(const char *path, struct ilab_scenario **out, char *err, size_t errlen)
{
	char too_big[64];
	char *text;
	size_t len;
	int ret;

	*out = NULL;
	snprintf(too_big, sizeof(too_big), "larger than %u bytes; not a scenario",
		 SCENARIO_FILE_MAX);
	ret = ilab_yaml_read_file(path, SCENARIO_FILE_MAX, too_big, &text, &len, err, errlen);
	if (ret)
		return ret;
	ret = ilab_scenario_parse(text, len, path, out, err, errlen);
	free(text);
	if (!ret)
		ret = check_profile(path, out, err, errlen);
	return ret;
}

void ilab_scenario_free(struct ilab_scenario *s)
{
	if (!s)
		return;
	free(s->cases);
	free(s->effects);
	free(s);
}

void ilab_case_effective(const struct ilab_scenario *s, const struct ilab_case *in, bool quick,
			 struct ilab_case *out)
{
	*out = *in;
	if (!quick)
		return;
	for (unsigned q = 0; q < s->nr_quick; q++)
		for (unsigned i = 0; i < out->nr_params; i++)
			if (strcmp(out->params[i].name, s->quick[q].name) == 0)
				out->params[i].value = s->quick[q].value;
}

double ilab_case_param(const struct ilab_case *c, const char *name, double dflt)
{
	for (unsigned i = 0; c && i < c->nr_params; i++)
		if (strcmp(c->params[i].name, name) == 0)
			return c->params[i].value;
	return dflt;
}

bool ilab_case_param_set(const struct ilab_case *c, const char *name)
{
	for (unsigned i = 0; c && i < c->nr_params; i++)
		if (strcmp(c->params[i].name, name) == 0)
			return c->params[i].line != 0;
	return false;
}

enum ilab_domain_lookup ilab_case_lookup(const struct ilab_case *c)
{
	if (c->mech.lookup_set || !c->has_kernel)
		return c->mech.lookup;
	return c->kernel.lookup == ILAB_DMA_LOOKUP_REFCOUNT ? ILAB_LOOKUP_REFCOUNT
							    : ILAB_LOOKUP_DIRECT;
}

bool ilab_case_map_pages(const struct ilab_case *c)
{
	if (c->mech.map_pages_set || !c->has_kernel)
		return c->mech.map_pages;
	return c->kernel.map_pages;
}

enum ilab_depot_mech ilab_case_iova_depot(const struct ilab_case *c)
{
	if (c->mech.iova_depot_set || !c->has_kernel)
		return c->mech.iova_depot;
	return c->kernel.iova_depot == ILAB_IOVA_DEPOT_FIXED32 ? ILAB_DEPOT_MECH_FIXED32
							       : ILAB_DEPOT_MECH_LIST;
}

bool ilab_case_cmdq_fair_lock(const struct ilab_case *c)
{
	if (c->mech.cmdq_lock_set || !c->has_kernel)
		return c->mech.cmdq_fair_lock;
	return c->kernel.cmdq_fair_lock;
}
