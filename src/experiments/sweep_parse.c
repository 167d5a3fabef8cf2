/* sweep_parse.c — reads a sweep file (docs/sweep.md) into struct ilab_sweep, strictly: unknown
 * keys, an unknown parameter path, an empty axis, a value of the wrong type or out of range,
 * a grid over ILAB_SWEEP_MAX_CASES cases, and any case its machine cannot run are reported as
 * "file:line:column: message" before anything runs. Profile values are checked by the profile
 * parser itself, on each case's profile text. It is not the runner (sweep_case.c).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "experiments/sweep.h"
#include "iommulab/sim.h"
#include "iommulab/topo.h"
#include "util/yaml_file.h"
#include "util/yaml_util.h"

#define SWEEP_FILE_MAX (1u << 20)

struct wctx {
	yaml_document_t *doc;
	const char *file;
	char *err;
	size_t errlen;
};

static int werr(struct wctx *c, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int werr(struct wctx *c, const yaml_node_t *at, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = ilab_yaml_verrf(c->err, c->errlen, c->file, at, fmt, ap);
	va_end(ap);
	return ret;
}

static yaml_node_t *node_at(struct wctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

/* A whole file (the sweep, its scenario, its profile) into a malloc'd, NUL-terminated
 * buffer. */
static int read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	return ilab_yaml_read_file(path, SWEEP_FILE_MAX, "larger than 1 MiB", buf, len, err,
				   errlen);
}

/* FNV-1a, 64 bits: tells two different inputs apart (shards of another sweep), not a
 * cryptographic digest. */
static uint64_t fnv1a(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- values --------------------------------------------------------------------------------- */

/* A workload parameter from text, with the scenario parser's rules. msg: why not. */
static int set_param(struct ilab_case *k, const struct ilab_workload *w, const char *name,
		     const char *text, bool quoted, char *msg, size_t msglen)
{
	const struct ilab_workload_param *spec = ilab_workload_param_find(w, name);
	char *end;
	double d;

	if (!spec) {
		size_t off = (size_t)snprintf(msg, msglen, "unknown parameter '%s' for workload "
					      "'%s' (known:", name, w->name);

		for (const struct ilab_workload_param *p = w->params; p && p->name && off < msglen;
		     p++)
			off += (size_t)snprintf(msg + off, msglen - off, " %s", p->name);
		if (off < msglen)
			snprintf(msg + off, msglen - off, ")");
		return -EINVAL;
	}
	errno = 0;
	d = strtod(text, &end);
	if (quoted || !*text || *end || strspn(text, "0123456789+-.eE") != strlen(text) ||
	    errno == ERANGE || !isfinite(d))
		return ilab_errf(msg, msglen, -EINVAL, "expected a number, got '%s'", text);
	if (spec->integer && d != floor(d))
		return ilab_errf(msg, msglen, -EINVAL, "expected an integer, got '%s'", text);
	if (d < spec->min || d > spec->max)
		return ilab_errf(msg, msglen, -EINVAL, "%s is out of range [%g, %g]", text,
				 spec->min, spec->max);
	for (unsigned i = 0; i < k->nr_params; i++)
		if (!strcmp(k->params[i].name, name)) {
			k->params[i].value = d;
			return 0;
		}
	if (k->nr_params == ILAB_SCN_MAX_PARAMS)
		return ilab_errf(msg, msglen, -EINVAL, "too many parameters");
	snprintf(k->params[k->nr_params].name, sizeof(k->params[0].name), "%s", name);
	k->params[k->nr_params++].value = d;
	return 0;
}

/* "@:12:3: message" (the profile parser's message about generated text) -> "message" */
static const char *strip_position(const char *msg)
{
	const char *p = msg;

	if (strncmp(p, "@:", 2))
		return strncmp(p, "@: ", 3) ? msg : msg + 3;
	p += 2;
	p += strspn(p, "0123456789");
	if (*p++ != ':')
		return msg;
	p += strspn(p, "0123456789");
	return *p == ':' && p[1] == ' ' ? p + 2 : msg;
}

/* The base profile with the profile axes' values of case k, checked by the profile parser.
 * Returns 0 (*text NULL when nothing is overridden); msg: why not. */
static int case_profile(const struct ilab_sweep *sw, const unsigned *idx, char **text,
			size_t *len, struct ilab_profile *prof, char *msg, size_t msglen)
{
	struct ilab_profile_override o[ILAB_SWEEP_MAX_AXES];
	char pmsg[ILAB_PROFILE_PATH_MAX + 256];
	unsigned n = 0;
	int ret;

	*text = NULL;
	*len = 0;
	for (unsigned a = 0; a < sw->nr_axes; a++) {
		const struct ilab_sweep_axis *ax = &sw->axes[a];

		if (ax->kind != ILAB_SWEEP_PROFILE || idx[a] == ~0u)
			continue;
		o[n].key = ax->name;
		o[n].value = ax->values[idx[a]].text;
		o[n++].quoted = ax->values[idx[a]].quoted;
	}
	if (!n)
		return prof ? ilab_profile_parse(sw->profile_text, sw->profile_len, "@", prof,
						 msg, msglen) : 0;
	ret = ilab_profile_override(sw->profile_text, sw->profile_len, o, n, text, len, msg,
				    msglen);
	if (ret == -EINVAL)
		ret = -ENOENT; /* the path's fault, not the value's */
	if (!ret && prof) {
		ret = ilab_profile_parse(*text, *len, "@", prof, pmsg, sizeof(pmsg));
		if (ret)
			snprintf(msg, msglen, "%s", strip_position(pmsg));
	}
	if (ret) {
		free(*text);
		*text = NULL;
	}
	return ret;
}

/* Case k, or (idx with ~0u entries) the base with only some axes applied. */
static int build_case(const struct ilab_sweep *sw, const unsigned *idx, struct ilab_case *c,
		      unsigned *bad_axis, char *msg, size_t msglen)
{
	int ret = 0;

	*c = sw->scn->cases[0];
	for (unsigned a = 0; !ret && a < sw->nr_axes; a++) {
		const struct ilab_sweep_axis *ax = &sw->axes[a];
		const struct ilab_sweep_value *v;

		if (idx[a] == ~0u)
			continue;
		v = &ax->values[idx[a]];
		*bad_axis = a;
		if (ax->kind == ILAB_SWEEP_PARAM)
			ret = set_param(c, sw->scn->workload, ax->name, v->text, v->quoted, msg,
					msglen);
		else if (ax->kind == ILAB_SWEEP_MECH)
			ret = ilab_mechanism_set(&c->mech, ax->name, v->text, msg, msglen);
	}
	return ret;
}

unsigned ilab_sweep_value_index(const struct ilab_sweep *sw, unsigned k, unsigned a)
{
	unsigned stride = 1;

	for (unsigned b = a + 1; b < sw->nr_axes; b++)
		stride *= sw->axes[b].nr_values;
	return (k / stride) % sw->axes[a].nr_values;
}

int ilab_sweep_case(const struct ilab_sweep *sw, unsigned k, struct ilab_case *c,
		    char **profile, size_t *profile_len, char *err, size_t errlen)
{
	unsigned idx[ILAB_SWEEP_MAX_AXES], bad;
	int ret;

	for (unsigned a = 0; a < sw->nr_axes; a++)
		idx[a] = ilab_sweep_value_index(sw, k, a);
	ret = build_case(sw, idx, c, &bad, err, errlen);
	if (!ret)
		ret = case_profile(sw, idx, profile, profile_len, NULL, err, errlen);
	return ret;
}

/* ---- the file ------------------------------------------------------------------------------ */

/* keys: NULL-terminated; vals[i] the value of keys[i] or NULL. */
static int collect(struct wctx *c, const yaml_node_t *map, const char *what,
		   const char *const *keys, yaml_node_t **vals)
{
	unsigned nr = 0;

	while (keys[nr])
		vals[nr++] = NULL;
	if (!map || map->type != YAML_MAPPING_NODE)
		return werr(c, map, "%s: expected a mapping", what);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node_at(c, p->key);
		const char *key = ilab_yaml_scalar(k);
		unsigned i;

		for (i = 0; key && i < nr && strcmp(keys[i], key); i++)
			;
		if (!key || i == nr) {
			char known[256] = "";
			size_t off = 0;

			for (unsigned j = 0; j < nr; j++)
				off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
							j ? ", " : "", keys[j]);
			return werr(c, k, "unknown key '%s' in %s (known: %s)", key ? key : "?",
				    what, known);
		}
		if (vals[i])
			return werr(c, k, "duplicate key '%s' in %s", key, what);
		vals[i] = node_at(c, p->value);
	}
	return 0;
}

static int get_text(struct wctx *c, const yaml_node_t *v, const char *key, char *out, size_t sz)
{
	const char *s = ilab_yaml_scalar(v);

	if (!s || !*s)
		return werr(c, v, "%s: expected a non-empty string", key);
	if (strlen(s) >= sz)
		return werr(c, v, "%s: longer than %zu characters", key, sz - 1);
	snprintf(out, sz, "%s", s);
	return 0;
}

static int get_ident(struct wctx *c, const yaml_node_t *v, const char *key, char *out, size_t sz)
{
	int ret = get_text(c, v, key, out, sz);

	if (!ret && (strspn(out, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_.=+-") != strlen(out) || strchr("_.=+-", out[0])))
		return werr(c, v, "%s: '%s' is not a name (letters, digits and _.=+- only, "
			    "starting with a letter or digit)", key, out);
	return ret;
}

/* base params: / mechanisms: mappings, with the axes' own setters */
static int parse_base_map(struct wctx *c, struct ilab_sweep *sw, const yaml_node_t *map,
			  bool params)
{
	struct ilab_case *k = &sw->scn->cases[0];
	char msg[512];

	if (map->type != YAML_MAPPING_NODE)
		return werr(c, map, "%s: expected a mapping", params ? "params" : "mechanisms");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = node_at(c, p->key), *vn = node_at(c, p->value);
		const char *key = ilab_yaml_scalar(kn), *val = ilab_yaml_scalar(vn);
		int ret;

		if (!key || !val)
			return werr(c, key ? vn : kn, "expected 'name: value'");
		ret = params ? set_param(k, sw->scn->workload, key, val, !ilab_yaml_is_plain(vn),
					 msg, sizeof(msg))
			     : ilab_mechanism_set(&k->mech, key, val, msg, sizeof(msg));
		if (ret)
			return werr(c, ret && (strstr(msg, "unknown") == msg) ? kn : vn, "%s: %s",
				    key, msg);
	}
	return 0;
}

/* The base from scenario: (a file or built-in name) and case: (a label). */
static int base_scenario(struct wctx *c, struct ilab_sweep *sw, yaml_node_t *scn_node,
			 yaml_node_t *case_node, char **scn_text, size_t *scn_len)
{
	char what[ILAB_SCN_PATH_MAX], path[ILAB_SCN_PATH_MAX], label[ILAB_SCN_NAME_MAX];
	char msg[1024];
	struct ilab_scenario *s;
	struct ilab_case base;
	unsigned i = 0;
	int ret;

	if ((ret = get_text(c, scn_node, "scenario", what, sizeof(what))))
		return ret;
	if (ilab_scenario_resolve(what, path, sizeof(path), msg, sizeof(msg)) < 0)
		return werr(c, scn_node, "scenario: %s", msg);
	if (ilab_scenario_load(path, &s, msg, sizeof(msg)) < 0)
		return werr(c, scn_node, "scenario: %s", msg);
	sw->scn = s;
	if ((ret = read_file(path, scn_text, scn_len, c->err, c->errlen)))
		return ret;
	if (!case_node && s->nr_cases > 1)
		return werr(c, scn_node, "scenario %s has %u cases: say which with case: LABEL "
			    "(first: %s)", s->name, s->nr_cases, s->cases[0].label);
	if (case_node) {
		if ((ret = get_text(c, case_node, "case", label, sizeof(label))))
			return ret;
		for (i = 0; i < s->nr_cases && strcmp(s->cases[i].label, label); i++)
			;
		if (i == s->nr_cases)
			return werr(c, case_node, "case: scenario %s has no case '%s'", s->name,
				    label);
	}
	/* the quick: overrides are applied once, here: the axes' values come after them */
	ilab_case_effective(s, &s->cases[i], sw->quick, &base);
	base.nr_refs = 0;
	s->cases[0] = base;
	s->nr_cases = 1;
	s->nr_quick = 0;
	free(s->effects);
	s->effects = NULL;
	s->nr_effects = 0;
	return 0;
}

/* The base from workload: and profile: (a scenario of one case, made here). */
static int base_workload(struct wctx *c, struct ilab_sweep *sw, yaml_node_t *wl_node,
			 yaml_node_t *prof_node)
{
	char type[ILAB_SCN_NAME_MAX];
	struct ilab_scenario *s;
	int ret;

	if ((ret = get_text(c, wl_node, "workload", type, sizeof(type))))
		return ret;
	if (!prof_node)
		return werr(c, wl_node, "workload: needs profile: (a machine profile name or file)");
	s = sw->scn = calloc(1, sizeof(*s));
	if (!s || !(s->cases = calloc(1, sizeof(*s->cases))))
		return -ENOMEM;
	s->workload = ilab_workload_find(type);
	if (!s->workload)
		return werr(c, wl_node, "workload: unknown workload '%s'", type);
	if ((ret = get_text(c, prof_node, "profile", s->profile, sizeof(s->profile))))
		return ret;
	{ /* found here, at its key: load_profile_text then reads the file */
		char path[ILAB_PROFILE_PATH_MAX], msg[ILAB_PROFILE_PATH_MAX + 128];

		if (ilab_profile_resolve(s->profile, path, sizeof(path), msg, sizeof(msg)))
			return werr(c, prof_node, "profile: %s", msg);
	}
	snprintf(s->name, sizeof(s->name), "%s", sw->name);
	snprintf(s->path, sizeof(s->path), "%s", sw->file);
	snprintf(s->seed, sizeof(s->seed), "none"); /* reproduces no seed */
	snprintf(s->title, sizeof(s->title), "%s", sw->name);
	s->engine = ILAB_ENGINE_KIND_SIM;
	s->tol_calibration = ILAB_TOL_CALIBRATION;
	s->tol_prediction = ILAB_TOL_PREDICTION;
	s->nr_cases = 1;
	snprintf(s->cases[0].label, sizeof(s->cases[0].label), "base");
	for (const struct ilab_workload_param *p = s->workload->params; p && p->name; p++) {
		struct ilab_param *q = &s->cases[0].params[s->cases[0].nr_params++];

		snprintf(q->name, sizeof(q->name), "%s", p->name);
		q->value = p->dflt;
	}
	return 0;
}

static int parse_axis(struct wctx *c, struct ilab_sweep *sw, const yaml_node_t *map,
		      struct ilab_sweep_axis *ax)
{
	static const char *const keys[] = { "param", "values", NULL };
	yaml_node_t *v[3];
	const yaml_node_t *seq;
	int ret;

	if ((ret = collect(c, map, "grid axis", keys, v)))
		return ret;
	if (!v[0] || !v[1])
		return werr(c, map, "grid axis: needs param: PATH and values: [...]");
	if ((ret = get_text(c, v[0], "param", ax->path, sizeof(ax->path))))
		return ret;
	ax->line = (unsigned)v[0]->start_mark.line + 1;
	ax->column = (unsigned)v[0]->start_mark.column + 1;
	if (!strncmp(ax->path, "params.", 7))
		ax->kind = ILAB_SWEEP_PARAM, ax->name = ax->path + 7;
	else if (!strncmp(ax->path, "mechanisms.", 11))
		ax->kind = ILAB_SWEEP_MECH, ax->name = ax->path + 11;
	else if (!strncmp(ax->path, "profile.", 8))
		ax->kind = ILAB_SWEEP_PROFILE, ax->name = ax->path + 8;
	else
		return werr(c, v[0], "param: '%s' is not params.NAME, mechanisms.NAME or "
			    "profile.SECTION.KEY", ax->path);
	if (!*ax->name)
		return werr(c, v[0], "param: '%s' names nothing after its prefix", ax->path);
	if (ax->kind == ILAB_SWEEP_PARAM || ax->kind == ILAB_SWEEP_MECH) {
		struct ilab_case k = sw->scn->cases[0];
		char msg[512];

		/* a known name takes its base value back: only an unknown name fails here */
		if (ax->kind == ILAB_SWEEP_PARAM &&
		    set_param(&k, sw->scn->workload, ax->name, "0", false, msg, sizeof(msg)) &&
		    strstr(msg, "unknown") == msg)
			return werr(c, v[0], "param: %s", msg);
		if (ax->kind == ILAB_SWEEP_MECH &&
		    ilab_mechanism_set(&k.mech, ax->name, "", msg, sizeof(msg)) &&
		    strstr(msg, "unknown") == msg)
			return werr(c, v[0], "param: %s", msg);
	}
	for (struct ilab_sweep_axis *o = sw->axes; o < ax; o++)
		if (!strcmp(o->path, ax->path))
			return werr(c, v[0], "param: %s is already an axis (line %u)", ax->path,
				    o->line);
	seq = v[1];
	if (seq->type != YAML_SEQUENCE_NODE)
		return werr(c, seq, "values: expected a list");
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *n = node_at(c, *it);
		struct ilab_sweep_value *val = &ax->values[ax->nr_values];

		if (ax->nr_values == ILAB_SWEEP_MAX_VALUES)
			return werr(c, n, "values: more than %d", ILAB_SWEEP_MAX_VALUES);
		if (!ilab_yaml_scalar(n))
			return werr(c, n, "values: expected a scalar value");
		if ((ret = get_text(c, n, ax->path, val->text, sizeof(val->text))))
			return ret;
		val->quoted = !ilab_yaml_is_plain(n);
		val->line = (unsigned)n->start_mark.line + 1;
		val->column = (unsigned)n->start_mark.column + 1;
		for (unsigned j = 0; j < ax->nr_values; j++)
			if (!strcmp(ax->values[j].text, val->text))
				return werr(c, n, "values: '%s' given twice", val->text);
		ax->nr_values++;
	}
	if (!ax->nr_values)
		return werr(c, seq, "values: the list is empty");
	return 0;
}

static int parse_grid(struct wctx *c, struct ilab_sweep *sw, const yaml_node_t *seq)
{
	uint64_t n = 1;
	int ret;

	if (seq->type != YAML_SEQUENCE_NODE)
		return werr(c, seq, "grid: expected a list of axes");
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		if (sw->nr_axes == ILAB_SWEEP_MAX_AXES)
			return werr(c, node_at(c, *it), "grid: more than %d axes",
				    ILAB_SWEEP_MAX_AXES);
		if ((ret = parse_axis(c, sw, node_at(c, *it), &sw->axes[sw->nr_axes])))
			return ret;
		n *= sw->axes[sw->nr_axes++].nr_values;
		if (n > ILAB_SWEEP_MAX_CASES)
			return werr(c, seq, "grid: more than %d cases (%llu so far): split the "
				    "sweep", ILAB_SWEEP_MAX_CASES, (unsigned long long)n);
	}
	if (!sw->nr_axes)
		return werr(c, seq, "grid: the list is empty");
	sw->nr_cases = (unsigned)n;
	return 0;
}

static int parse_root(struct wctx *c, struct ilab_sweep *sw, const yaml_node_t *root,
		      char **scn_text, size_t *scn_len)
{
	enum { NAME, SCN, CASE, WL, PROF, PARAMS, MECH, QUICK, SEED, GRID, NR };
	static const char *const keys[] = { "name", "scenario", "case", "workload", "profile",
					    "params", "mechanisms", "quick", "seed", "grid", NULL };
	yaml_node_t *v[NR + 1];
	int ret;

	if (!root)
		return werr(c, NULL, "the file is empty (expected a sweep mapping)");
	if ((ret = collect(c, root, "sweep", keys, v)))
		return ret;
	if (!v[NAME] || !v[GRID])
		return werr(c, root, "sweep: missing required key '%s'", v[NAME] ? "grid" : "name");
	if ((ret = get_ident(c, v[NAME], "name", sw->name, sizeof(sw->name))))
		return ret;
	if (v[QUICK]) {
		const char *q = ilab_yaml_scalar(v[QUICK]);

		if (!q || (strcmp(q, "on") && strcmp(q, "off") && strcmp(q, "true") &&
			   strcmp(q, "false")))
			return werr(c, v[QUICK], "quick: expected on or off");
		sw->quick = !strcmp(q, "on") || !strcmp(q, "true");
	}
	sw->seed = 1;
	if (v[SEED]) {
		const char *s = ilab_yaml_scalar(v[SEED]);
		char *end;

		errno = 0;
		if (!s || !ilab_yaml_is_plain(v[SEED]) || *s < '1' || *s > '9' ||
		    (sw->seed = strtoull(s, &end, 10), errno) || *end || sw->seed > 1ull << 53)
			return werr(c, v[SEED], "seed: expected a whole number from 1 to 2^53");
	}
	if (!!v[SCN] == !!v[WL])
		return werr(c, root, "sweep: give either scenario: (and case:) or workload: "
			    "(and profile:)");
	if (v[SCN] && v[PROF])
		return werr(c, v[PROF], "profile: goes with workload:; a scenario has its own");
	if (v[WL] && v[CASE])
		return werr(c, v[CASE], "case: goes with scenario:");
	ret = v[SCN] ? base_scenario(c, sw, v[SCN], v[CASE], scn_text, scn_len)
		     : base_workload(c, sw, v[WL], v[PROF]);
	if (!ret && v[PARAMS])
		ret = parse_base_map(c, sw, v[PARAMS], true);
	if (!ret && v[MECH])
		ret = parse_base_map(c, sw, v[MECH], false);
	if (!ret)
		ret = parse_grid(c, sw, v[GRID]);
	return ret;
}

/* ---- checks before anything runs ----------------------------------------------------------- */

static int value_err(const struct ilab_sweep *sw, const struct ilab_sweep_axis *ax,
		     const struct ilab_sweep_value *v, const char *msg, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s:%u:%u: %s: %s", sw->file, v->line, v->column, ax->path, msg);
	return -EINVAL;
}

/* Each value alone on the base: its own line in the message. */
static int check_values(const struct ilab_sweep *sw, char *err, size_t errlen)
{
	unsigned idx[ILAB_SWEEP_MAX_AXES], bad;
	struct ilab_profile *prof = malloc(sizeof(*prof));
	struct ilab_case k;
	char msg[1024], *text;
	size_t len;
	int ret = 0;

	if (!prof)
		return -ENOMEM;
	for (unsigned a = 0; a < sw->nr_axes; a++)
		idx[a] = ~0u;
	for (unsigned a = 0; !ret && a < sw->nr_axes; a++) {
		const struct ilab_sweep_axis *ax = &sw->axes[a];

		for (unsigned i = 0; !ret && i < ax->nr_values; i++) {
			idx[a] = i;
			if (ax->kind == ILAB_SWEEP_PROFILE)
				ret = case_profile(sw, idx, &text, &len, prof, msg, sizeof(msg));
			else
				ret = build_case(sw, idx, &k, &bad, msg, sizeof(msg));
			/* a path the profile does not have is the path's error, not its value's */
			if (ret == -ENOENT || (ret && strstr(msg, "unknown key")))
				ret = ilab_errf(err, errlen, -EINVAL, "%s:%u:%u: %s: %s", sw->file,
						ax->line, ax->column, ax->path, msg);
			else if (ret)
				ret = value_err(sw, ax, &ax->values[i], msg, err, errlen);
			else if (ax->kind == ILAB_SWEEP_PROFILE)
				free(text);
		}
		idx[a] = ~0u;
	}
	free(prof);
	return ret;
}

/* "case 5 (params.threads=2, mechanisms.mode=lazy)" */
static void case_name(const struct ilab_sweep *sw, unsigned k, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "case %u (", k);

	for (unsigned a = 0; a < sw->nr_axes && off < len; a++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", a ? ", " : "",
					sw->axes[a].path,
					sw->axes[a].values[ilab_sweep_value_index(sw, k, a)].text);
	if (off < len)
		snprintf(buf + off, len - off, ")");
}

/* A NUMA-node parameter beyond the machine, or the workload's own check of the case. */
static int check_on_machine(const struct ilab_sweep *sw, const struct ilab_case *k,
			    const struct ilab_profile *prof, const struct ilab_topo *topo,
			    char *msg, size_t msglen)
{
	const struct ilab_workload *w = sw->scn->workload;

	if (w->check_profile && w->check_profile(prof, msg, msglen))
		return -EINVAL;
	if (k->mech.cmdqv && !prof->smmu_cmdqv_vcmdqs)
		return ilab_errf(msg, msglen, -EINVAL, "cmdqv: on, but profile %s's SMMU has no "
				 "Tegra241 CMDQV (no smmu.cmdqv_vcmdqs)", prof->name);
	for (unsigned i = 0; i < k->nr_params; i++) {
		const struct ilab_workload_param *spec = ilab_workload_param_find(w,
										   k->params[i].name);

		if (spec && spec->node && k->params[i].value >= ilab_topo_nr_nodes(topo))
			return ilab_errf(msg, msglen, -EINVAL, "%s: node %.0f does not exist on "
					 "%s", k->params[i].name, k->params[i].value,
					 ilab_topo_name(topo));
	}
	return w->check && w->check(k, topo, msg, msglen) ? -EINVAL : 0;
}

/* Every case as it will run: its profile parsed, its machine loaded, the workload's checks. */
static int check_cases(const struct ilab_sweep *sw, char *err, size_t errlen)
{
	struct ilab_profile *prof = malloc(sizeof(*prof));
	struct ilab_topo *topo = NULL;
	char topo_name[ILAB_PROFILE_PATH_MAX] = "", msg[1024], what[512];
	int ret = 0;

	if (!prof)
		return -ENOMEM;
	for (unsigned k = 0; !ret && k < sw->nr_cases; k++) {
		unsigned idx[ILAB_SWEEP_MAX_AXES], bad;
		struct ilab_case c;
		char *text = NULL;
		size_t len;

		for (unsigned a = 0; a < sw->nr_axes; a++)
			idx[a] = ilab_sweep_value_index(sw, k, a);
		ret = build_case(sw, idx, &c, &bad, msg, sizeof(msg));
		if (!ret)
			ret = case_profile(sw, idx, &text, &len, prof, msg, sizeof(msg));
		free(text);
		if (!ret && strcmp(topo_name, prof->topology)) {
			ilab_topo_free(topo);
			topo = NULL;
			topo_name[0] = '\0';
			ret = ilab_topo_load(prof->topology, &topo, msg, sizeof(msg));
			if (!ret)
				snprintf(topo_name, sizeof(topo_name), "%s", prof->topology);
		}
		if (!ret)
			ret = check_on_machine(sw, &c, prof, topo, msg, sizeof(msg));
		if (ret) {
			case_name(sw, k, what, sizeof(what));
			snprintf(err, errlen, "%s:%u:%u: %s: %s", sw->file, sw->axes[0].line,
				 sw->axes[0].column, what, msg);
			ret = -EINVAL;
		}
	}
	ilab_topo_free(topo);
	free(prof);
	return ret;
}

static int load_profile_text(struct ilab_sweep *sw, char *err, size_t errlen)
{
	char path[ILAB_PROFILE_PATH_MAX];
	int ret = ilab_profile_resolve(sw->scn->profile, path, sizeof(path), err, errlen);

	return ret ? ret : read_file(path, &sw->profile_text, &sw->profile_len, err, errlen);
}

int ilab_sweep_load(const char *path, struct ilab_sweep **out, char *err, size_t errlen)
{
	struct ilab_sweep *sw = calloc(1, sizeof(*sw));
	struct wctx c = { .file = path, .err = err, .errlen = errlen };
	char *text = NULL, *scn_text = NULL;
	size_t len = 0, scn_len = 0;
	yaml_document_t doc;
	uint64_t h;
	int ret;

	*out = NULL;
	if (!sw)
		return ilab_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
	snprintf(sw->file, sizeof(sw->file), "%s", path);
	ret = read_file(path, &text, &len, err, errlen);
	if (!ret)
		ret = ilab_yaml_check_depth(text, len, path, "sweep", err, errlen);
	if (ret)
		goto out;
	ret = ilab_yaml_load(text, len, path, "sweep", ILAB_YAML_ERROR_SYNTAX, &doc, err, errlen);
	if (ret)
		goto out;
	c.doc = &doc;
	ret = parse_root(&c, sw, yaml_document_get_root_node(&doc), &scn_text, &scn_len);
	yaml_document_delete(&doc);
	if (!ret)
		ret = load_profile_text(sw, err, errlen);
	if (!ret)
		ret = check_values(sw, err, errlen);
	if (!ret)
		ret = check_cases(sw, err, errlen);
	if (ret)
		goto out;
	h = fnv1a(0xcbf29ce484222325ull, text, len + 1);
	h = fnv1a(h, scn_text ? scn_text : "", scn_text ? scn_len + 1 : 1);
	h = fnv1a(h, sw->profile_text, sw->profile_len);
	snprintf(sw->hash, sizeof(sw->hash), "fnv1a64:%016llx", (unsigned long long)h);
out:
	free(text);
	free(scn_text);
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(err, errlen, "%s: out of memory", path);
		ilab_sweep_free(sw);
		return ret;
	}
	*out = sw;
	return 0;
}

void ilab_sweep_free(struct ilab_sweep *sw)
{
	if (!sw)
		return;
	ilab_scenario_free(sw->scn);
	free(sw->profile_text);
	free(sw);
}
