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

#define put_quoted ilab_gnuplot_quoted

static const char *axis_path(const struct grid *g, unsigned a)
{
	return json_string_value(json_object_get(json_array_get(g->axes, a), "path"));
}

static const char *axis_value(const struct grid *g, unsigned a, unsigned i)
{
	return json_string_value(json_array_get(json_object_get(json_array_get(g->axes, a),
								"values"), i));
}

/* An axis's name for a reader: "params.threads" is "threads", "profile.smmu.tlbi_sync_ns"
 * "smmu tlbi sync (ns)", "mechanisms.cma" "cma"; the path is in the result file. */
static void axis_name(const struct grid *g, unsigned a, char *buf, size_t len)
{
	const char *path = axis_path(g, a), *p, *unit = NULL;
	size_t n, off = 0;

	if (!path)
		path = "";
	p = strchr(path, '.') ? strchr(path, '.') + 1 : path; /* without params./profile. */
	n = strlen(p);
	if (n > 3 && !strcmp(p + n - 3, "_ns"))
		unit = "ns", n -= 3;
	else if (n > 3 && !strcmp(p + n - 3, "_us"))
		unit = "us", n -= 3;
	for (size_t i = 0; i < n && off + 1 < len; i++)
		buf[off++] = p[i] == '_' || p[i] == '.' ? ' ' : p[i];
	buf[off] = '\0';
	if (unit)
		snprintf(buf + off, len - off, " (%s)", unit);
}

/* A categorical axis (a mechanism's value names, or any value that is not a number): its
 * cases are not points of a line, so they are drawn as points only. */
static bool axis_categorical(const struct grid *g, unsigned a)
{
	for (unsigned i = 0; i < g->size[a]; i++) {
		const char *v = axis_value(g, a, i);
		char *end;

		if (!v || !*v)
			return true;
		strtod(v, &end);
		if (*end)
			return true;
	}
	return false;
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
		if (b != a) {
			char name[128];

			axis_name(g, b, name, sizeof(name));
			off += (size_t)snprintf(t + off, sizeof(t) - off, "%s%s=%s", off ? ", " : "",
						name, axis_value(g, b, idx[b]));
		}
	put_quoted(f, off ? t : "iommulab");
}

static void write_axis_plot(FILE *f, const struct grid *g, unsigned a, const char *png)
{
	unsigned others = 1, idx[ILAB_SWEEP_MAX_AXES] = { 0 };
	bool lines, cat = axis_categorical(g, a);
	char name[128];

	for (unsigned b = 0; b < g->nr_axes; b++)
		others *= b == a ? 1 : g->size[b];
	lines = others <= MAX_LINES;
	fprintf(f, "# written by iommulab sweep/merge from sweep %s. Re-render: gnuplot <this file>\n",
		json_string_value(json_object_get(g->doc, "sweep")));
	ilab_gnuplot_header(f, g->nr_metrics > 1 ? 520 * g->nr_metrics : 720, 560, png);
	fputs("set datafile missing NaN\nset grid\nset key below\n", f);
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
	axis_name(g, a, name, sizeof(name));
	fputs("set xlabel ", f);
	put_quoted(f, name);
	fputc('\n', f);
	for (unsigned m = 0; m < g->nr_metrics; m++) {
		fputs("set title ", f);
		put_quoted(f, metric_field(g, m, "name"));
		fputs("\nset ylabel ", f);
		put_quoted(f, metric_field(g, m, "unit"));
		fputs("\nplot ", f);
		for (unsigned o = 0; o < (lines ? others : 1); o++) {
			fprintf(f, "%s$m%uo%u ", o ? ", \\\n     " : "", m, o);
			/* categories are not joined: a line would read as interpolation */
			if (lines) {
				other_idx(g, a, o, idx);
				fprintf(f, "using 1:2 with %s pt 7 ps 1.3 lc %u title ",
					cat ? "points" : "linespoints", o + 1);
				line_title(f, g, a, idx);
			} else {
				fprintf(f, "using 1:2:3:4 with %s pt 7 title 'mean of %u "
					"cases (bars: min to max)'", cat ? "yerrorbars" : "yerrorlines",
					others);
			}
		}
		fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
}

/* A heat map cell's label: whole numbers from 100 up ("1220", not "1.22e+03"), three
 * significant digits below. */
static void cell_label(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

/* Viridis (matplotlib's perceptually uniform map, also readable in grey): 9 of its stops. */
static const char viridis[] =
	"set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', "
	"4 '#21908d', 5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')\n";

static void metric_range(const struct grid *g, unsigned m, double *lo, double *hi)
{
	unsigned idx[2];

	*lo = INFINITY, *hi = -INFINITY;
	for (idx[0] = 0; idx[0] < g->size[0]; idx[0]++)
		for (idx[1] = 0; idx[1] < g->size[1]; idx[1]++) {
			double v = value_at(g, idx, m);

			if (!isnan(v))
				*lo = v < *lo ? v : *lo, *hi = v > *hi ? v : *hi;
		}
}

static void write_heatmap(FILE *f, const struct grid *g, const char *png)
{
	unsigned idx[2];
	char name[128], label[64];

	fputs("# written by iommulab sweep/merge. Re-render: gnuplot <this file>\n", f);
	ilab_gnuplot_header(f, g->nr_metrics > 1 ? 560 * g->nr_metrics : 720, 560, png);
	fputs("set datafile missing NaN\nunset key\n", f);
	fputs(viridis, f);
	for (unsigned m = 0; m < g->nr_metrics; m++) {
		double lo, hi;

		metric_range(g, m, &lo, &hi);
		fprintf(f, "$h%u << EOD\n", m);
		for (idx[0] = 0; idx[0] < g->size[0]; idx[0]++)
			for (idx[1] = 0; idx[1] < g->size[1]; idx[1]++) {
				double v = value_at(g, idx, m);
				/* dark text on viridis' light (green-yellow) end, white elsewhere */
				bool light = hi > lo && (v - lo) / (hi - lo) > 0.6;

				cell_label(v, label, sizeof(label));
				fprintf(f, "%u %u", idx[1], idx[0]);
				put_num(f, v);
				fprintf(f, " \"%s\" %d\n", label, light ? 0 : 0xffffff);
			}
		fputs("EOD\n", f);
	}
	fputs("set multiplot layout 1,", f);
	fprintf(f, "%u title ", g->nr_metrics);
	put_quoted(f, json_string_value(json_object_get(g->doc, "sweep")));
	fputc('\n', f);
	put_tics(f, g, "xtics", 1);
	put_tics(f, g, "ytics", 0);
	axis_name(g, 1, name, sizeof(name));
	fputs("set xlabel ", f);
	put_quoted(f, name);
	axis_name(g, 0, name, sizeof(name));
	fputs("\nset ylabel ", f);
	put_quoted(f, name);
	fputc('\n', f);
	for (unsigned m = 0; m < g->nr_metrics; m++) {
		double lo, hi;

		metric_range(g, m, &lo, &hi);
		fputs("set title ", f);
		put_quoted(f, metric_field(g, m, "name"));
		fputs("\nset cblabel ", f);
		put_quoted(f, metric_field(g, m, "unit"));
		fputc('\n', f);
		/* one value everywhere: a colour scale would explain nothing; the cells are one
		 * mid colour and their labels say the value */
		if (lo == hi)
			fprintf(f, "unset colorbox\nset cbrange [%.17g:%.17g]\n", lo - 1, hi + 1);
		else
			fputs("set colorbox\nset cbrange [*:*]\n", f);
		/* pixels: a rectangle per cell; a bitmap would be smoothed by browsers in the SVG */
		fprintf(f, "plot $h%u using 1:2:3 with image pixels, $h%u using 1:2:4:5 with labels "
			"font ',9' tc rgb variable\n", m, m);
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

	static const char *const ext[] = { "gp", "png", "svg" };

	if (i >= 3 * plots)
		return false;
	plot_name(axes, i / 3 < n ? (int)(i / 3) : -1, base, ext[i % 3], buf, len);
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
