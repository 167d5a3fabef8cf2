/* correlator.c — model against measured over many figures (Accel-Sim's correlator): its points
 * as JSON, and the gnuplot script that draws them on log-log axes with y = x and +-30 % bands,
 * a colour per experiment, filled markers in-sample and hollow ones out-of-sample. One drawing
 * for `iommulab calibrate` (its fit and cross-validation) and `iommulab run` (each seed
 * figure of the run, in or out of its profile's calibration set).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"
#include "report/gnuplot.h"
#include "util/atomic_file.h"

void ilab_correlator_init(struct ilab_correlator *c, const char *title, const char *command)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->title, sizeof(c->title), "%s", title);
	snprintf(c->command, sizeof(c->command), "%s", command);
}

void ilab_correlator_free(struct ilab_correlator *c)
{
	for (unsigned i = 0; i < c->nr; i++) {
		free(c->pts[i].label);
		free(c->pts[i].unit);
		free(c->pts[i].held_out_by);
	}
	for (unsigned e = 0; e < c->nr_exp; e++)
		free(c->exp[e]);
	free(c->pts);
	free(c->exp);
	memset(c, 0, sizeof(*c));
}

/* The index of experiment name, added in order of first appearance (its colour). */
static int exp_index(struct ilab_correlator *c, const char *name)
{
	char **e;

	for (unsigned i = 0; i < c->nr_exp; i++)
		if (!strcmp(c->exp[i], name))
			return (int)i;
	e = realloc(c->exp, (c->nr_exp + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	c->exp = e;
	if (!(c->exp[c->nr_exp] = strdup(name)))
		return -ENOMEM;
	return (int)c->nr_exp++;
}

int ilab_correlator_add(struct ilab_correlator *c, const char *experiment, const char *label,
			const char *unit, double measured, double model, const char *held_out_by)
{
	struct ilab_correlator_point *p;
	int e;

	if (!(measured > 0) || !(model > 0) || isinf(model))
		return 0; /* nowhere on log axes: a zero or failed figure is in the tables */
	e = exp_index(c, experiment);
	if (e < 0)
		return e;
	if (c->nr == c->cap) {
		unsigned cap = c->cap ? 2 * c->cap : 64;

		p = realloc(c->pts, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->pts = p;
		c->cap = cap;
	}
	p = &c->pts[c->nr];
	*p = (struct ilab_correlator_point){ .exp = (unsigned)e, .measured = measured,
					     .model = model };
	p->label = strdup(label);
	p->unit = strdup(unit);
	p->held_out_by = held_out_by ? strdup(held_out_by) : NULL;
	c->nr++;
	if (!p->label || !p->unit || (held_out_by && !p->held_out_by))
		return -ENOMEM;
	return 0;
}

json_t *ilab_correlator_json(const struct ilab_correlator *c)
{
	json_t *pts = json_array();

	for (unsigned i = 0; pts && i < c->nr; i++) {
		const struct ilab_correlator_point *p = &c->pts[i];
		json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:b, s:s}", "label", p->label,
				      "experiment", c->exp[p->exp], "measured", p->measured,
				      "model", p->model, "in_sample", !p->held_out_by, "unit",
				      p->unit);

		if (o && p->held_out_by)
			json_object_set_new(o, "held_out_by", json_string(p->held_out_by));
		json_array_append_new(pts, o);
	}
	return pts;
}

static void put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* Does experiment e have a point in (in) or out of sample? gnuplot refuses an empty series. */
static bool has_points(const struct ilab_correlator *c, unsigned e, bool in)
{
	for (unsigned i = 0; i < c->nr; i++)
		if (c->pts[i].exp == e && (c->pts[i].held_out_by == NULL) == in)
			return true;
	return false;
}

void ilab_correlator_script(const struct ilab_correlator *c, const char *png, FILE *f)
{
	double lo = INFINITY, hi = 0;

	fprintf(f, "# Correlator of `%s`: model against measured. Filled: in-sample (fitted), "
		"hollow: out-of-sample. Re-render: gnuplot <this file>\n", c->command);
	ilab_gnuplot_header(f, 800, 720, png);
	fputs("set logscale xy\nset grid\nset key top left\n"
	      "set xlabel 'measured (published figure, its own unit)'\n"
	      "set ylabel 'model (iommulab)'\n", f);
	fputs("set title ", f);
	put_quoted(f, c->title);
	fputc('\n', f);
	for (unsigned e = 0; e < c->nr_exp; e++)
		for (unsigned in = 0; in < 2; in++) {
			if (!has_points(c, e, in))
				continue;
			fprintf(f, "$e%u%s << EOD\n", e, in ? "in" : "out");
			for (unsigned i = 0; i < c->nr; i++) {
				const struct ilab_correlator_point *p = &c->pts[i];

				if (p->exp != e || (p->held_out_by == NULL) != in)
					continue;
				fprintf(f, "%.17g %.17g\n", p->measured, p->model);
				lo = fmin(lo, fmin(p->measured, p->model));
				hi = fmax(hi, fmax(p->measured, p->model));
			}
			fputs("EOD\n", f);
		}
	if (!(hi > 0))
		lo = 1, hi = 10;
	fprintf(f, "set xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n", lo / 2, hi * 2, lo / 2,
		hi * 2);
	fputs("plot x with lines lc rgb 'black' title 'y = x', "
	      "1.3*x with lines dt 2 lc rgb 'gray40' title '+30 %', "
	      "0.7*x with lines dt 2 lc rgb 'gray40' title '-30 %'", f);
	for (unsigned e = 0; e < c->nr_exp; e++) {
		char oos_title[ILAB_SCN_NAME_MAX + 32];

		if (has_points(c, e, true)) {
			fprintf(f, ", \\\n     $e%uin using 1:2 with points pt 7 ps 1.2 lc %u title ",
				e, e + 1);
			put_quoted(f, c->exp[e]);
		}
		if (has_points(c, e, false)) {
			fprintf(f, ", \\\n     $e%uout using 1:2 with points pt 6 ps 1.4 lc %u title ",
				e, e + 1);
			snprintf(oos_title, sizeof(oos_title), "%s, out-of-sample", c->exp[e]);
			put_quoted(f, oos_title);
		}
	}
	fputc('\n', f);
}

/* text (len bytes) into path, whole or not at all. */
static int save_text(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
	struct ilab_afile a;
	int rc = ilab_afile_open(&a, path, err, errlen);

	if (rc)
		return rc;
	fwrite(text, 1, len, a.f);
	return ilab_afile_commit(&a, err, errlen);
}

int ilab_correlator_save(const struct ilab_correlator *c, const char *json_path,
			 const char *gp_path, const char *png_path, char *msg, size_t msglen)
{
	char *text = NULL, prog[4096];
	size_t len = 0;
	FILE *f;
	int rc = 0;

	if (json_path) {
		json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "schema", "iommulab-correlator/1",
					"title", c->title, "command", c->command, "points",
					ilab_correlator_json(c));

		text = doc ? json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(2) |
					     JSON_REAL_PRECISION(17)) : NULL;
		json_decref(doc);
		if (!text) {
			snprintf(msg, msglen, "%s: out of memory", json_path);
			return -ENOMEM;
		}
		len = strlen(text);
		rc = save_text(json_path, text, len, msg, msglen);
		free(text);
		if (rc)
			return rc;
	}
	f = open_memstream(&text, &len);
	if (!f) {
		snprintf(msg, msglen, "%s: out of memory", gp_path);
		return -ENOMEM;
	}
	ilab_correlator_script(c, png_path, f);
	fclose(f);
	rc = save_text(gp_path, text, len, msg, msglen);
	free(text);
	if (rc)
		return rc;
	if (!ilab_gnuplot_find(prog, sizeof(prog))) {
		snprintf(msg, msglen, "gnuplot not found, no %s (the script is %s)", png_path,
			 gp_path);
		return 1;
	}
	return ilab_gnuplot_render(prog, gp_path, png_path, msg, msglen) ? -EIO : 0;
}

