/* sweep_plot.c — a sweep result's pictures, as gnuplot scripts (data inline) rendered to PNG:
 * per axis, each metric against that axis's values (a line per combination of the other axes
 * when there are at most MAX_LINES, else their mean with min-max bars), and with two axes a
 * heat map of each metric. Reads the result JSON, so shards merged and an unsharded run draw
 * the same pictures. Without gnuplot it writes the scripts and says so.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/gnuplot.h"
#include "report/sweep_result.h"
#include "util/atomic_file.h"

#define MAX_LINES 8
#define MAX_METRICS 8

struct grid {
	const json_t *doc, *axes, *metrics, *cases;
	unsigned nr_axes, nr_metrics, size[ILAB_SWEEP_MAX_AXES];
};

static void put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		if (*s != '\n')
			fputc(*s, f);
	}
	fputc('\'', f);
}

static const char *axis_path(const struct grid *g, unsigned a)
{
	return json_string_value(json_object_get(json_array_get(g->axes, a), "path"));
}

static const char *axis_value(const struct grid *g, unsigned a, unsigned i)
{
	return json_string_value(json_array_get(json_object_get(json_array_get(g->axes, a),
								"values"), i));
}

static const char *metric_field(const struct grid *g, unsigned m, const char *field)
{
	return json_string_value(json_object_get(json_array_get(g->metrics, m), field));
}

/* Metric m of the case at idx (row-major: first axis slowest), NaN when it has none. */
static double value_at(const struct grid *g, const unsigned *idx, unsigned m)
{
	size_t k = 0;
	json_t *v;

	for (unsigned a = 0; a < g->nr_axes; a++)
		k = k * g->size[a] + idx[a];
	v = json_object_get(json_object_get(json_array_get(g->cases, k), "figures"),
			    metric_field(g, m, "name"));
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* idx of the other axes than a from their combination number o (row-major) */
static void other_idx(const struct grid *g, unsigned a, unsigned o, unsigned *idx)
{
	for (int b = (int)g->nr_axes - 1; b >= 0; b--) {
		if ((unsigned)b == a)
			continue;
		idx[b] = o % g->size[b];
		o /= g->size[b];
	}
}

static void put_tics(FILE *f, const struct grid *g, const char *which, unsigned a)
{
	fprintf(f, "set %s (", which);
	for (unsigned i = 0; i < g->size[a]; i++) {
		fputs(i ? ", " : "", f);
		put_quoted(f, axis_value(g, a, i));
		fprintf(f, " %u", i);
	}
	fprintf(f, ")\nset %srange [-0.5:%u.5]\n", which[0] == 'x' ? "x" : "y", g->size[a] - 1);
}

static void put_num(FILE *f, double v)
{
	if (isnan(v))
		fputs(" NaN", f);
	else
		fprintf(f, " %.17g", v);
}

static void line_title(FILE *f, const struct grid *g, unsigned a, const unsigned *idx)
{
	char t[512];
	size_t off = 0;

	t[0] = '\0';
	for (unsigned b = 0; b < g->nr_axes && off < sizeof(t); b++)
		if (b != a)
			off += (size_t)snprintf(t + off, sizeof(t) - off, "%s%s=%s", off ? ", " : "",
						axis_path(g, b), axis_value(g, b, idx[b]));
	put_quoted(f, off ? t : "iommulab");
}

static void write_axis_plot(FILE *f, const struct grid *g, unsigned a, const char *png)
{
	unsigned others = 1, idx[ILAB_SWEEP_MAX_AXES] = { 0 };
	bool lines;

	for (unsigned b = 0; b < g->nr_axes; b++)
		others *= b == a ? 1 : g->size[b];
	lines = others <= MAX_LINES;
	fprintf(f, "# written by iommulab sweep/merge from sweep %s. Re-render: gnuplot <this file>\n",
		json_string_value(json_object_get(g->doc, "sweep")));
	fprintf(f, "set terminal pngcairo noenhanced size %u,560 font ',10'\n",
		g->nr_metrics > 1 ? 520 * g->nr_metrics : 720);
	fputs("if (!exists(\"ilab_png\")) ilab_png = ", f);
	put_quoted(f, png);
	fputs("\nset output ilab_png\nset datafile missing NaN\nset grid\nset key below\n", f);
	for (unsigned m = 0; m < g->nr_metrics; m++)
		for (unsigned o = 0; o < (lines ? others : 1); o++) {
			fprintf(f, "$m%uo%u << EOD\n", m, o);
			for (unsigned i = 0; i < g->size[a]; i++) {
				double lo = INFINITY, hi = -INFINITY, sum = 0;
				unsigned n = 0;

				for (unsigned p = lines ? o : 0; p < (lines ? o + 1 : others); p++) {
					double v;

					other_idx(g, a, p, idx);
					idx[a] = i;
					v = value_at(g, idx, m);
					if (isnan(v))
						continue;
					sum += v, n++;
					lo = v < lo ? v : lo;
					hi = v > hi ? v : hi;
				}
				fprintf(f, "%u", i);
				put_num(f, n ? sum / n : NAN);
				put_num(f, n ? lo : NAN);
				put_num(f, n ? hi : NAN);
				fputc('\n', f);
			}
			fputs("EOD\n", f);
		}
	fprintf(f, "set multiplot layout 1,%u title ", g->nr_metrics);
	put_quoted(f, json_string_value(json_object_get(g->doc, "sweep")));
	fputc('\n', f);
	put_tics(f, g, "xtics", a);
	fputs("set xlabel ", f);
	put_quoted(f, axis_path(g, a));
	fputc('\n', f);
	for (unsigned m = 0; m < g->nr_metrics; m++) {
		fputs("set title ", f);
		put_quoted(f, metric_field(g, m, "name"));
		fputs("\nset ylabel ", f);
		put_quoted(f, metric_field(g, m, "unit"));
		fputs("\nplot ", f);
		for (unsigned o = 0; o < (lines ? others : 1); o++) {
			fprintf(f, "%s$m%uo%u ", o ? ", \\\n     " : "", m, o);
			if (lines) {
				other_idx(g, a, o, idx);
				fprintf(f, "using 1:2 with linespoints pt 7 lc %u title ", o + 1);
				line_title(f, g, a, idx);
			} else {
				fprintf(f, "using 1:2:3:4 with yerrorlines pt 7 title 'mean of %u "
					"cases (bars: min to max)'", others);
			}
		}
		fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
}

static void write_heatmap(FILE *f, const struct grid *g, const char *png)
{
	unsigned idx[2];

	fputs("# written by iommulab sweep/merge. Re-render: gnuplot <this file>\n", f);
	fprintf(f, "set terminal pngcairo noenhanced size %u,560 font ',10'\n",
		g->nr_metrics > 1 ? 560 * g->nr_metrics : 720);
	fputs("if (!exists(\"ilab_png\")) ilab_png = ", f);
	put_quoted(f, png);
	fputs("\nset output ilab_png\nset datafile missing NaN\nunset key\n"
	      "set palette rgbformulae 33,13,10\n", f);
	for (unsigned m = 0; m < g->nr_metrics; m++) {
		fprintf(f, "$h%u << EOD\n", m);
		for (idx[0] = 0; idx[0] < g->size[0]; idx[0]++)
			for (idx[1] = 0; idx[1] < g->size[1]; idx[1]++) {
				fprintf(f, "%u %u", idx[1], idx[0]);
				put_num(f, value_at(g, idx, m));
				fputc('\n', f);
			}
		fputs("EOD\n", f);
	}
	fputs("set multiplot layout 1,", f);
	fprintf(f, "%u title ", g->nr_metrics);
	put_quoted(f, json_string_value(json_object_get(g->doc, "sweep")));
	fputc('\n', f);
	put_tics(f, g, "xtics", 1);
	put_tics(f, g, "ytics", 0);
	fputs("set xlabel ", f);
	put_quoted(f, axis_path(g, 1));
	fputs("\nset ylabel ", f);
	put_quoted(f, axis_path(g, 0));
	fputc('\n', f);
	for (unsigned m = 0; m < g->nr_metrics; m++) {
		fputs("set title ", f);
		put_quoted(f, metric_field(g, m, "name"));
		fputs("\nset cblabel ", f);
		put_quoted(f, metric_field(g, m, "unit"));
		fprintf(f, "\nplot $h%u using 1:2:3 with image, $h%u using 1:2:(sprintf('%%.3g', "
			"$3)) with labels font ',8'\n", m, m);
	}
	fputs("unset multiplot\n", f);
}

/* Only the metrics some case reported (a workload may report fewer than it declares). */
static unsigned metrics_present(const struct grid *g, const json_t **keep)
{
	unsigned n = 0;
	size_t i;
	json_t *m;

	json_array_foreach(g->metrics, i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		size_t k;
		json_t *c;

		json_array_foreach(g->cases, k, c)
			if (json_is_number(json_object_get(json_object_get(c, "figures"), name)))
				break;
		if (k < json_array_size(g->cases) && n < MAX_METRICS)
			keep[n++] = m;
	}
	return n;
}

/* <base>-<axis path>.<ext>, or <base>-heatmap.<ext> for axis -1 */
static void plot_name(const json_t *axes, int axis, const char *base, const char *ext,
		      char *buf, size_t len)
{
	const char *what = axis < 0 ? "heatmap" : json_string_value(json_object_get(
		json_array_get(axes, (size_t)axis), "path"));

	snprintf(buf, len, "%s-%s.%s", base, what ? what : "", ext);
}

bool ilab_sweep_plot_file(const json_t *doc, const char *base, unsigned i, char *buf,
			  size_t len)
{
	const json_t *axes = json_object_get(doc, "axes");
	unsigned n = (unsigned)json_array_size(axes);
	unsigned plots = n + (n == 2); /* each axis, and the heat map of two */

	if (i >= 2 * plots)
		return false;
	plot_name(axes, i / 2 < n ? (int)(i / 2) : -1, base, i % 2 ? "png" : "gp", buf, len);
	return true;
}

static int one_plot(const struct grid *g, int axis, const char *base, const char *prog,
		    char *msg, size_t msglen)
{
	char script[ILAB_SCN_PATH_MAX + 200], png[ILAB_SCN_PATH_MAX + 200];
	struct ilab_afile af;
	int ret;

	plot_name(g->axes, axis, base, "gp", script, sizeof(script));
	plot_name(g->axes, axis, base, "png", png, sizeof(png));
	ret = ilab_afile_open(&af, script, msg, msglen);
	if (ret)
		return ret;
	if (axis < 0)
		write_heatmap(af.f, g, png);
	else
		write_axis_plot(af.f, g, (unsigned)axis, png);
	ret = ilab_afile_commit(&af, msg, msglen);
	if (!ret && prog)
		ret = ilab_gnuplot_render(prog, script, png, msg, msglen);
	return ret;
}

int ilab_sweep_plot(const json_t *doc, const char *base, char *msg, size_t msglen)
{
	struct grid g = { .doc = doc };
	const json_t *keep[MAX_METRICS];
	json_t *metrics = json_array();
	char prog[ILAB_SCN_PATH_MAX];
	bool have = ilab_gnuplot_find(prog, sizeof(prog));
	int ret = 0;

	g.axes = json_object_get(doc, "axes");
	g.cases = json_object_get(doc, "cases");
	g.metrics = json_object_get(doc, "metrics");
	g.nr_axes = (unsigned)json_array_size(g.axes);
	for (unsigned a = 0; a < g.nr_axes && a < ILAB_SWEEP_MAX_AXES; a++)
		g.size[a] = (unsigned)json_array_size(json_object_get(json_array_get(g.axes, a),
								      "values"));
	g.nr_metrics = metrics_present(&g, keep);
	for (unsigned m = 0; m < g.nr_metrics; m++)
		json_array_append(metrics, (json_t *)keep[m]);
	g.metrics = metrics;
	if (!g.nr_metrics) {
		json_decref(metrics);
		snprintf(msg, msglen, "no plots: no case reported a figure");
		return 1;
	}
	for (unsigned a = 0; !ret && a < g.nr_axes; a++)
		ret = one_plot(&g, (int)a, base, have ? prog : NULL, msg, msglen);
	if (!ret && g.nr_axes == 2)
		ret = one_plot(&g, -1, base, have ? prog : NULL, msg, msglen);
	json_decref(metrics);
	if (!ret && !have) {
		snprintf(msg, msglen, "warning: gnuplot not found: no PNG plots (the scripts are "
			 "%s-*.gp: run gnuplot on them)", base);
		return 1;
	}
	if (!ret)
		snprintf(msg, msglen, "%s-*.png", base);
	return ret;
}
