/* plot.c — a scenario result as a gnuplot script (<dir>/<name>.gp, data inline) rendered to
 * <dir>/<name>.png: one panel per metric, the seed's figures as points and iommulab's as lines,
 * one colour per series. It is not the JSON or the table; without gnuplot it writes the script
 * and says so instead of failing.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iommulab/report.h"
#include "report/gnuplot.h"
#include "util/atomic_file.h"

extern char **environ;

#define MAX_METRICS 8
#define MAX_SERIES 16

struct plot_axes {
	const char *metric[MAX_METRICS];
	const char *unit[MAX_METRICS];
	unsigned nr_metrics;
	const char *series[MAX_SERIES];
	unsigned nr_series;
};

static unsigned index_of(const char **arr, unsigned *nr, unsigned max, const char *s)
{
	for (unsigned i = 0; i < *nr; i++)
		if (strcmp(arr[i], s) == 0)
			return i;
	if (*nr == max)
		return max; /* beyond what one picture shows: left out */
	arr[*nr] = s;
	return (*nr)++;
}

/* gnuplot single-quoted strings: '' stands for one quote. */
void ilab_gnuplot_quoted(FILE *f, const char *s)
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

#define put_quoted ilab_gnuplot_quoted

void ilab_gnuplot_header(FILE *f, unsigned w, unsigned h, const char *png)
{
	/* one script, two pictures: the PNG for viewers, the SVG for the results page */
	fprintf(f, "if (!exists(\"ilab_fmt\")) ilab_fmt = 'png'\n"
		"if (ilab_fmt eq 'svg') {\n"
		"    set terminal svg noenhanced size %u,%u font 'sans,10' background '#ffffff'\n"
		"} else {\n"
		"    set terminal pngcairo noenhanced size %u,%u font ',10'\n"
		"}\n", w, h, w, h);
	/* iommulab renders to a temporary name given with -e and renames it when complete */
	fputs("if (!exists(\"ilab_png\")) ilab_png = ", f);
	put_quoted(f, png);
	fputs("\nset output ilab_png\n", f);
}

void ilab_gnuplot_svg_name(const char *png, char *buf, size_t len)
{
	size_t n = strlen(png);

	if (n > 4 && !strcmp(png + n - 4, ".png"))
		n -= 4;
	snprintf(buf, len, "%.*s.svg", (int)n, png);
}

/* A case without reference figures is drawn by plot.y's metric alone (iommulab's value). */
static const struct ilab_figure *unreferenced(const struct ilab_scenario_result *r, unsigned i)
{
	const struct ilab_scenario *s = r->scenario;

	if (s->cases[i].nr_refs || !s->plot_y[0])
		return NULL;
	return ilab_case_result_find(&r->cases[i], s->plot_y);
}

static bool has_ours(const struct ilab_scenario_result *r)
{
	const struct ilab_scenario *s = r->scenario;

	for (unsigned i = 0; i < s->nr_cases; i++)
		if (unreferenced(r, i))
			return true;
	for (unsigned i = 0; i < s->nr_cases; i++)
		for (unsigned j = 0; j < s->cases[i].nr_refs; j++) {
			struct ilab_comparison c;

			ilab_compare(s, &s->cases[i].refs[j], &r->cases[i], &c);
			if (c.have_ours)
				return true;
		}
	return false;
}

static void collect_axes(const struct ilab_scenario_result *r, struct plot_axes *ax)
{
	const struct ilab_scenario *s = r->scenario;

	memset(ax, 0, sizeof(*ax));
	for (unsigned i = 0; i < s->nr_cases; i++) {
		const struct ilab_case *k = &s->cases[i];
		const struct ilab_figure *fig = unreferenced(r, i);

		index_of(ax->series, &ax->nr_series, MAX_SERIES, k->series);
		if (fig) {
			unsigned m = index_of(ax->metric, &ax->nr_metrics, MAX_METRICS, s->plot_y);

			if (m < MAX_METRICS)
				ax->unit[m] = fig->unit;
		}
		for (unsigned j = 0; j < k->nr_refs; j++) {
			unsigned m = index_of(ax->metric, &ax->nr_metrics, MAX_METRICS,
					      k->refs[j].metric);
			if (m < MAX_METRICS)
				ax->unit[m] = k->refs[j].unit;
		}
	}
}

static void write_block(FILE *f, const struct ilab_scenario_result *r,
			const struct plot_axes *ax, unsigned m, unsigned sr, bool *any, bool *refs)
{
	const struct ilab_scenario *s = r->scenario;

	*any = *refs = false;
	for (unsigned i = 0; i < s->nr_cases; i++) {
		const struct ilab_case *k = &s->cases[i];
		const struct ilab_figure *fig = unreferenced(r, i);

		if (strcmp(k->series, ax->series[sr]) != 0)
			continue;
		if (fig && strcmp(s->plot_y, ax->metric[m]) == 0) {
			/* no published figure: NaN in its column, only our line is drawn */
			if (!*any)
				fprintf(f, "$m%us%u << EOD\n", m, sr);
			*any = true;
			fprintf(f, "%.17g NaN %.17g \"%s\"\n",
				s->plot_x[0] ? ilab_case_param(k, s->plot_x, NAN) : (double)i,
				fig->value, k->label);
		}
		for (unsigned j = 0; j < k->nr_refs; j++) {
			struct ilab_comparison c;
			double x;

			if (strcmp(k->refs[j].metric, ax->metric[m]) != 0)
				continue;
			if (!*any)
				fprintf(f, "$m%us%u << EOD\n", m, sr);
			*any = *refs = true;
			ilab_compare(s, &k->refs[j], &r->cases[i], &c);
			x = s->plot_x[0] ? ilab_case_param(k, s->plot_x, NAN) : (double)i;
			fprintf(f, "%.17g %.17g ", x, k->refs[j].value);
			if (c.have_ours)
				fprintf(f, "%.17g", c.ours_raw);
			else
				fputs("NaN", f);
			fprintf(f, " \"%s\"\n", k->label); /* labels are names: no quotes inside */
		}
	}
	if (*any)
		fputs("EOD\n", f);
}

/* An x axis of whole numbers (threads, pages) gets a whole tic step: 1, 2, 5, 10, 20 ...
 * with at most 10 tics, never the 0.5 gnuplot picks for a short range. 0 when some x is not
 * whole (or the axis is the cases themselves, or logarithmic: its tics are powers of 2). */
static double integer_xtic_step(const struct ilab_scenario *s)
{
	double lo = INFINITY, hi = -INFINITY, step = 1;

	if (!s->plot_x[0] || s->plot_logx)
		return 0;
	for (unsigned i = 0; i < s->nr_cases; i++) {
		double x = ilab_case_param(&s->cases[i], s->plot_x, NAN);

		if (isnan(x))
			continue;
		if (x != floor(x) || fabs(x) > 1e15)
			return 0;
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	if (lo > hi)
		return 0;
	for (unsigned k = 0; (hi - lo) / step > 10; k++)
		step *= k % 3 == 1 ? 2.5 : 2; /* 1, 2, 5, 10, 20, 50 ... */
	return step;
}

static int write_script(FILE *f, const struct ilab_scenario_result *r, const char *png)
{
	const struct ilab_scenario *s = r->scenario;
	struct plot_axes ax;
	bool have[MAX_METRICS][MAX_SERIES], refs[MAX_METRICS][MAX_SERIES];
	char title[512];

	collect_axes(r, &ax);
	fprintf(f, "# %s.gp — written by `iommulab run` from results of scenario %s.\n", s->name,
		s->name);
	fputs("# Points: the seed's published figures. Lines: iommulab's. Re-render: gnuplot <this file>\n",
	      f);
	ilab_gnuplot_header(f, ax.nr_metrics > 1 ? 560 * ax.nr_metrics : 720, 600, png);
	fputs("set datafile missing NaN\nset grid\nset key below\n", f);
	if (s->plot_logx)
		fputs("set logscale x 2\n", f);
	/* room at both ends, no point on the frame: half a step between categories */
	fputs(s->plot_x[0] ? "set offsets graph 0.04, graph 0.04, 0, 0\n"
			   : "set offsets 0.5, 0.5, 0, 0\n", f);
	if (integer_xtic_step(s) > 0)
		fprintf(f, "set xtics %.0f\nset mxtics 1\n", integer_xtic_step(s));
	if (s->plot_logy)
		fputs("set logscale y\n", f);
	for (unsigned m = 0; m < ax.nr_metrics; m++)
		for (unsigned sr = 0; sr < ax.nr_series; sr++)
			write_block(f, r, &ax, m, sr, &have[m][sr], &refs[m][sr]);

	if (strcmp(s->seed, "none"))
		snprintf(title, sizeof(title), "seed %s — %s%s", s->seed, s->title,
			 r->quick ? " (quick run)" : "");
	else
		snprintf(title, sizeof(title), "%s (predictions)%s", s->title,
			 r->quick ? " (quick run)" : "");
	fprintf(f, "set multiplot layout 1,%u title ", ax.nr_metrics ? ax.nr_metrics : 1);
	put_quoted(f, title);
	fputc('\n', f);
	for (unsigned m = 0; m < ax.nr_metrics; m++) {
		bool first = true;

		fputs("set title ", f);
		put_quoted(f, ax.metric[m]);
		fputs("\nset ylabel ", f);
		put_quoted(f, ax.unit[m]);
		fputs("\nset xlabel ", f);
		put_quoted(f, s->plot_xlabel[0] ? s->plot_xlabel : s->plot_x[0] ? s->plot_x : "case");
		fputs("\nplot ", f);
		for (unsigned sr = 0; sr < ax.nr_series; sr++) {
			const char *xcol = s->plot_x[0] ? "1" : "1:2:xtic(4)";
			char name[160];

			if (!have[m][sr])
				continue;
			if (refs[m][sr]) { /* the published points, when there are any */
				snprintf(name, sizeof(name), "seed%s%s",
					 ax.series[sr][0] ? ": " : "", ax.series[sr]);
				fprintf(f, "%s$m%us%u using %s%s with points pt 7 ps 1.3 lc %u title ",
					first ? "" : ", \\\n     ", m, sr, xcol,
					s->plot_x[0] ? ":2" : "", sr + 1);
				put_quoted(f, name);
				first = false;
			}
			snprintf(name, sizeof(name), "iommulab%s%s", ax.series[sr][0] ? ": " : "",
				 ax.series[sr]);
			/* cases without an x parameter are categories: points, never a line
			 * that would read as an interpolation between them */
			fprintf(f, "%s$m%us%u using %s with %s pt 6 ps 1.3 lc %u title ",
				first ? "" : ", \\\n     ", m, sr,
				s->plot_x[0] || refs[m][sr] ? "1:3" : "1:3:xtic(4)",
				s->plot_x[0] ? "linespoints" : "points", sr + 1);
			put_quoted(f, name);
			first = false;
		}
		fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
	return ferror(f) ? -EIO : 0;
}

/* The gnuplot to run: $IOMMULAB_GNUPLOT, else `gnuplot` found in PATH. */
bool ilab_gnuplot_find(char *buf, size_t len)
{
	const char *env = getenv("IOMMULAB_GNUPLOT"), *path = getenv("PATH");

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return strchr(env, '/') ? access(env, X_OK) == 0 : true;
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, len, "%.*s/gnuplot", (int)n, n ? p : ".");
		if (access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* gnuplot -e "ilab_fmt='fmt'; ilab_png='out'" script: the script's format and output name,
 * overridden. */
static int run_gnuplot(const char *prog, const char *script, const char *fmt, const char *out,
		       char *msg, size_t msglen)
{
	char set[2 * ILAB_SCN_PATH_MAX + 100], *p = set;
	char *argv[] = { (char *)prog, "-e", set, (char *)script, NULL };
	pid_t pid;
	int st, ret;

	p += sprintf(p, "ilab_fmt='%s'; ilab_png='", fmt);
	for (; *out && p < set + sizeof(set) - 4; out++) { /* '' stands for one quote */
		if (*out == '\'')
			*p++ = '\'';
		*p++ = *out;
	}
	strcpy(p, "'");

	ret = posix_spawnp(&pid, prog, NULL, NULL, argv, environ);
	if (ret) {
		snprintf(msg, msglen, "cannot start %s: %s", prog, strerror(ret));
		return 1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(msg, msglen, "waiting for %s: %s", prog, strerror(errno));
			return -errno;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(msg, msglen, "%s %s failed (exit status %d)", prog, script,
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -EIO;
	}
	return 0;
}

/* The file ends with tail: without it, gnuplot (or the disk) stopped short. */
static bool ends_with(const char *path, const void *tail, size_t n)
{
	unsigned char buf[16];
	FILE *f = fopen(path, "rb");
	bool ok;

	if (!f)
		return false;
	ok = n <= sizeof(buf) && fseek(f, -(long)n, SEEK_END) == 0 && fread(buf, 1, n, f) == n &&
	     memcmp(buf, tail, n) == 0;
	fclose(f);
	return ok;
}

/* A PNG file ends with its IEND chunk; gnuplot's SVG with its closing tag. */
static bool picture_complete(const char *path, bool svg)
{
	static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D',
						0xae, 0x42, 0x60, 0x82 };

	return svg ? ends_with(path, "</svg>\n", 7) || ends_with(path, "</svg>\n\n", 8)
		   : ends_with(path, iend, sizeof(iend));
}

/* One picture of script into out through a temporary file next to it, renamed when
 * complete. */
static int render_one(const char *prog, const char *script, const char *out, bool svg,
		      char *msg, size_t msglen)
{
	char tmp[ILAB_SCN_PATH_MAX + 100];
	int ret;

	ret = ilab_afile_tmpname(out, tmp, sizeof(tmp));
	if (ret) {
		snprintf(msg, msglen, "%s: %s", out, strerror(-ret));
		return ret;
	}
	ret = run_gnuplot(prog, script, svg ? "svg" : "png", tmp, msg, msglen);
	if (!ret && !picture_complete(tmp, svg)) {
		snprintf(msg, msglen, "%s ran but wrote no complete %s", prog, out);
		ret = -EIO;
	}
	if (!ret && rename(tmp, out) != 0) {
		ret = -errno;
		snprintf(msg, msglen, "%s: %s", out, strerror(-ret));
	}
	if (ret)
		unlink(tmp); /* an older picture stays, as every output's: the error names it */
	return ret;
}

/* Render script into png, then the same picture as SVG beside it. */
int ilab_gnuplot_render(const char *prog, const char *script, const char *png, char *msg,
			size_t msglen)
{
	char svg[ILAB_SCN_PATH_MAX + 100];
	int ret = render_one(prog, script, png, false, msg, msglen);

	if (ret)
		return ret;
	ilab_gnuplot_svg_name(png, svg, sizeof(svg));
	return render_one(prog, script, svg, true, msg, msglen);
}

int ilab_report_plot(const struct ilab_scenario_result *r, const char *dir, char *msg,
		     size_t msglen)
{
	const struct ilab_scenario *s = r->scenario;
	char script[ILAB_SCN_PATH_MAX + 80], png[ILAB_SCN_PATH_MAX + 80], prog[ILAB_SCN_PATH_MAX];
	struct ilab_afile a;
	int ret;

	if (!has_ours(r)) {
		snprintf(msg, msglen, "no plot for %s: iommulab has no figure to compare yet", s->name);
		return 1;
	}
	snprintf(script, sizeof(script), "%s/%s.gp", dir, s->name);
	snprintf(png, sizeof(png), "%s/%s.png", dir, s->name);
	ret = ilab_afile_open(&a, script, msg, msglen);
	if (ret)
		return ret;
	write_script(a.f, r, png); /* a failed write leaves ferror set: commit reports it */
	ret = ilab_afile_commit(&a, msg, msglen);
	if (ret)
		return ret;
	if (!ilab_gnuplot_find(prog, sizeof(prog))) {
		snprintf(msg, msglen,
			 "warning: gnuplot not found, no %s (the script is %s: run gnuplot on it)", png,
			 script);
		return 1;
	}
	ret = ilab_gnuplot_render(prog, script, png, msg, msglen);
	if (ret)
		return ret;
	snprintf(msg, msglen, "%s", png);
	return 0;
}
