/* results_page.c — <dir>/index.html: one plain HTML page (no script, no network) of every
 * result in a results directory, read back from the files the commands wrote there: each
 * scenario result (<name>.json, iommulab-result/1) with its comparison and effect tables, its
 * verdicts and its plot; the correlator (correlator.json); each whole sweep result
 * (iommulab-sweep/1, not a shard) with its case table and plots. Pictures are the SVGs beside
 * the PNGs, as <img> (the PNG when there is no SVG). Written whole or not at all
 * (atomic_file.c). Not the tables' text (table.c) nor the plots (plot.c, sweep_plot.c).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ilab_tree.h" /* ILAB_TREE: build/generated, cmake/tree.cmake */
#include "report/results_page.h"
#include "report/sweep_result.h"
#include "util/atomic_file.h"

#ifndef ILAB_TREE
#define ILAB_TREE "unknown"
#endif

static void put_html(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* A figure as the tables print it: up to 4 significant digits, "—" for none. */
static void put_num(FILE *f, const json_t *v)
{
	double d;

	if (!json_is_number(v)) {
		fputs("—", f);
		return;
	}
	d = json_number_value(v);
	if (fabs(d) >= 1000 && fabs(d) < 1e15)
		fprintf(f, "%.0f", d);
	else
		fprintf(f, "%.4g", d);
}

static void td_num(FILE *f, const json_t *v)
{
	fputs("<td class=n>", f);
	put_num(f, v);
	fputs("</td>", f);
}

static void td(FILE *f, const char *s)
{
	fputs("<td>", f);
	put_html(f, s);
	fputs("</td>", f);
}

/* <img> of <dir>/<name>.svg, else .png, when either is there; nothing otherwise. */
static void put_picture(FILE *f, const char *dir, const char *name, const char *alt)
{
	static const char *const ext[] = { "svg", "png" };
	char path[4096];

	for (unsigned i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext[i]);
		if (access(path, R_OK))
			continue;
		fputs("<p><img src=\"", f);
		put_html(f, name);
		fprintf(f, ".%s\" alt=\"", ext[i]);
		put_html(f, alt);
		fputs("\"></p>\n", f);
		return;
	}
}

static void scenario_comparisons(FILE *f, const json_t *doc)
{
	const json_t *c, *cmp, *fig;
	size_t i, j;
	const char *key;

	fputs("<table class=comparisons>\n<tr><th>case</th><th>metric</th><th>unit</th>"
	      "<th>published</th><th>iommulab</th><th>ratio</th><th>verdict</th></tr>\n", f);
	json_array_foreach(json_object_get(doc, "cases"), i, c) {
		const json_t *cmps = json_object_get(c, "comparisons");

		json_array_foreach(cmps, j, cmp) {
			fputs("<tr>", f);
			td(f, str(c, "label"));
			td(f, str(cmp, "metric"));
			td(f, str(cmp, "unit"));
			fputs("<td class=n>", f);
			fputs(!strcmp(str(cmp, "relation"), "gt") ? "&gt; " :
			      !strcmp(str(cmp, "relation"), "lt") ? "&lt; " : "", f);
			put_num(f, json_object_get(cmp, "seed"));
			fputs("</td>", f);
			td_num(f, json_object_get(cmp, "ours"));
			td_num(f, json_object_get(cmp, "ratio"));
			fprintf(f, "<td class=%s>", str(cmp, "verdict"));
			put_html(f, str(cmp, "verdict"));
			fputs("</td></tr>\n", f);
		}
		if (json_array_size(cmps))
			continue;
		/* no published figure: what iommulab measured, or why the case has nothing */
		json_object_foreach(json_object_get(c, "figures"), key, fig) {
			fputs("<tr>", f);
			td(f, str(c, "label"));
			td(f, key);
			td(f, str(fig, "unit"));
			fputs("<td class=n>—</td>", f);
			td_num(f, json_object_get(fig, "value"));
			fputs("<td class=n>—</td><td>prediction</td></tr>\n", f);
		}
		if (!json_object_size(json_object_get(c, "figures"))) {
			fputs("<tr>", f);
			td(f, str(c, "label"));
			fputs("<td colspan=5></td>", f);
			td(f, *str(c, "message") ? str(c, "message") : str(c, "status"));
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}

static void scenario_effects(FILE *f, const json_t *doc)
{
	const json_t *e, *effects = json_object_get(doc, "effects");
	size_t i;

	if (!json_array_size(effects))
		return;
	fputs("<table class=effects>\n<tr><th>effect</th><th>metric</th><th>from</th><th>to</th>"
	      "<th>published change</th><th>iommulab's change</th><th>verdict</th></tr>\n", f);
	json_array_foreach(effects, i, e) {
		const json_t *ours = json_object_get(e, "ours_change");

		fputs("<tr>", f);
		td(f, str(e, "label"));
		td(f, str(e, "metric"));
		td(f, str(e, "from"));
		td(f, str(e, "to"));
		fprintf(f, "<td class=n>%+.1f %%</td>",
			100 * json_number_value(json_object_get(e, "seed_change")));
		if (json_is_number(ours))
			fprintf(f, "<td class=n>%+.1f %%</td>", 100 * json_number_value(ours));
		else
			fputs("<td class=n>—</td>", f);
		fprintf(f, "<td class=%s>", str(e, "verdict"));
		put_html(f, str(e, "verdict"));
		if (json_is_true(json_object_get(e, "identical_runs")))
			fputs(" (identical runs)", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static json_int_t summary(const json_t *doc, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(doc, "summary"), key));
}

static void scenario_section(FILE *f, const char *dir, const char *name, const json_t *doc)
{
	const json_t *s = json_object_get(doc, "scenario");

	fputs("<section class=scenario>\n<h2 id=\"", f);
	put_html(f, name);
	fputs("\">", f);
	put_html(f, str(s, "name"));
	fputs(" — ", f);
	put_html(f, str(s, "title"));
	fputs("</h2>\n<p class=meta>", f);
	if (strcmp(str(s, "seed"), "none")) {
		fputs("seed ", f);
		put_html(f, str(s, "seed"));
		fputs(" · ", f);
	}
	fputs("profile <b>", f);
	put_html(f, str(s, "profile"));
	fputs("</b> · engine ", f);
	put_html(f, str(s, "engine"));
	fputs(" · workload ", f);
	put_html(f, str(s, "workload"));
	fprintf(f, "%s · <a href=\"", json_is_true(json_object_get(doc, "quick")) ?
		" · quick run" : "");
	put_html(f, name);
	fputs(".json\">result file</a></p>\n<p class=verdict>", f);
	fprintf(f, "status %s: %lld of %lld cases run, %lld failed; %lld of %lld published "
		"figures within tolerance", str(doc, "status"), (long long)summary(doc, "ok"),
		(long long)summary(doc, "cases"), (long long)summary(doc, "failed"),
		(long long)summary(doc, "within"), (long long)summary(doc, "figures"));
	if (summary(doc, "effects"))
		fprintf(f, "; %lld of %lld published effects in the same direction",
			(long long)summary(doc, "effects_same_direction"),
			(long long)summary(doc, "effects"));
	fputs("</p>\n", f);
	scenario_comparisons(f, doc);
	scenario_effects(f, doc);
	put_picture(f, dir, name, str(s, "name"));
	fputs("</section>\n", f);
}

static void correlator_section(FILE *f, const char *dir, const char *name, const json_t *doc)
{
	const json_t *p;
	size_t i;

	fputs("<section class=correlator>\n<h2 id=correlator>Correlator — ", f);
	put_html(f, str(doc, "title"));
	fputs("</h2>\n<p class=meta>every published figure against iommulab's (in-sample: "
	      "fitted by the calibration; out-of-sample: predicted)</p>\n", f);
	put_picture(f, dir, name, "correlator");
	fputs("<table class=correlator>\n<tr><th>figure</th><th>unit</th><th>measured</th>"
	      "<th>model</th><th>sample</th></tr>\n", f);
	json_array_foreach(json_object_get(doc, "points"), i, p) {
		fputs("<tr>", f);
		td(f, str(p, "label"));
		td(f, str(p, "unit"));
		td_num(f, json_object_get(p, "measured"));
		td_num(f, json_object_get(p, "model"));
		td(f, json_is_true(json_object_get(p, "in_sample")) ? "in" : "out");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

static void sweep_section(FILE *f, const char *dir, const char *name, const json_t *doc)
{
	const json_t *axes = json_object_get(doc, "axes"), *metrics = json_object_get(doc, "metrics");
	const json_t *a, *m, *c;
	char path[4096], base[4096];
	size_t i, j;
	unsigned ok = 0, failed = 0;

	json_array_foreach(json_object_get(doc, "cases"), i, c) {
		ok += !strcmp(str(c, "status"), "ok");
		failed += !strcmp(str(c, "status"), "failed");
	}
	fputs("<section class=sweep>\n<h2 id=\"", f);
	put_html(f, name);
	fputs("\">sweep ", f);
	put_html(f, str(doc, "sweep"));
	fputs("</h2>\n<p class=meta>workload ", f);
	put_html(f, str(doc, "workload"));
	fprintf(f, " · seed %lld%s · inputs ", (long long)json_integer_value(json_object_get(doc,
		"seed")), json_is_true(json_object_get(doc, "quick")) ? " · quick" : "");
	put_html(f, str(doc, "hash"));
	fputs(" · <a href=\"", f);
	put_html(f, name);
	fputs(".json\">result file</a></p>\n", f);
	fprintf(f, "<p class=verdict>%zu cases: %u ok, %u failed</p>\n",
		json_array_size(json_object_get(doc, "cases")), ok, failed);
	fputs("<table class=sweep>\n<tr><th>case</th>", f);
	json_array_foreach(axes, i, a) {
		fputs("<th>", f);
		put_html(f, str(a, "path"));
		fputs("</th>", f);
	}
	json_array_foreach(metrics, i, m) {
		fputs("<th>", f);
		put_html(f, str(m, "name"));
		fputs(" (", f);
		put_html(f, str(m, "unit"));
		fputs(")</th>", f);
	}
	fputs("<th>status</th></tr>\n", f);
	json_array_foreach(json_object_get(doc, "cases"), i, c) {
		fprintf(f, "<tr><td class=n>%lld</td>",
			(long long)json_integer_value(json_object_get(c, "case")));
		json_array_foreach(json_object_get(c, "values"), j, a)
			td(f, json_string_value(a));
		json_array_foreach(metrics, j, m)
			td_num(f, json_object_get(json_object_get(c, "figures"), str(m, "name")));
		fprintf(f, "<td class=%s>", str(c, "status"));
		put_html(f, *str(c, "message") ? str(c, "message") : str(c, "status"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	/* the plots sweep_plot.c draws, by the names it gives them */
	snprintf(base, sizeof(base), "%s/%s", dir, name);
	for (unsigned k = 0; ilab_sweep_plot_file(doc, base, k, path, sizeof(path)); k++) {
		size_t n = strlen(path), d = strlen(dir) + 1;

		if (k % 3 != 1 || n < d + 4) /* the PNG's name: put_picture prefers its SVG */
			continue;
		path[n - 4] = '\0';
		put_picture(f, dir, path + d, path + d);
	}
	fputs("</section>\n", f);
}

static const char style[] =
	"<style>\n"
	"body{font-family:sans-serif;margin:1.5em;max-width:110em}\n"
	"table{border-collapse:collapse;margin:.5em 0}\n"
	"th,td{border:1px solid #bbb;padding:.2em .5em;text-align:left}\n"
	"th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	".within,.same,.ok{color:#1a7f37}.outside,.opposite,.missing,.spurious,.failed{color:#b00}\n"
	"img{max-width:100%;border:1px solid #ddd}.meta{color:#555}\n"
	"</style>\n";

static bool sweep_ok(const json_t *doc)
{
	char err[512];

	return ilab_sweep_result_check(doc, "", err, sizeof(err)) == 0;
}

enum kind { NONE, SCENARIO, CORRELATOR, SWEEP };

static enum kind kind_of(const json_t *doc)
{
	const char *schema = str(doc, "schema");

	if (!strcmp(schema, "iommulab-result/1") && json_is_object(json_object_get(doc, "scenario")))
		return SCENARIO;
	if (!strcmp(schema, "iommulab-correlator/1"))
		return CORRELATOR;
	/* a whole sweep: a shard's cases are in its merged file */
	if (!strcmp(schema, "iommulab-sweep/1") && !json_object_get(doc, "shard") &&
	    sweep_ok(doc))
		return SWEEP;
	return NONE;
}

static int json_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".json");
}

/* Sections of one kind, in name order. */
static unsigned write_sections(FILE *f, const char *dir, struct dirent **names, int nr,
			       enum kind want, bool toc)
{
	unsigned count = 0;

	for (int i = 0; i < nr; i++) {
		char path[4096], name[256];
		json_t *doc;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		snprintf(name, sizeof(name), "%.*s", (int)strlen(names[i]->d_name) - 5,
			 names[i]->d_name);
		doc = json_load_file(path, 0, NULL);
		if (!doc || kind_of(doc) != want) {
			json_decref(doc);
			continue;
		}
		count++;
		if (toc) {
			fputs("<li><a href=\"#", f);
			put_html(f, want == CORRELATOR ? "correlator" : name);
			fputs("\">", f);
			put_html(f, want == SWEEP ? str(doc, "sweep") : name);
			fputs("</a></li>\n", f);
		} else if (want == SCENARIO) {
			scenario_section(f, dir, name, doc);
		} else if (want == CORRELATOR) {
			correlator_section(f, dir, name, doc);
		} else {
			sweep_section(f, dir, name, doc);
		}
		json_decref(doc);
	}
	return count;
}

static void write_page(FILE *f, const char *dir, struct dirent **names, int nr)
{
	static const enum kind order[] = { SCENARIO, CORRELATOR, SWEEP };

	fputs("<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
	      "<title>iommulab results</title>\n", f);
	fputs(style, f);
	fputs("</head>\n<body>\n<h1>iommulab results</h1>\n<p class=meta>Every result in "
	      "this directory, as the files beside this page hold it; written by iommulab "
	      "built from tree <b>", f);
	put_html(f, ILAB_TREE);
	fputs("</b>. Each scenario names the profile it ran on; a sweep's inputs (sweep file, "
	      "base scenario, profile) are named by their hash, as in its result file.</p>\n"
	      "<ul class=toc>\n", f);
	for (unsigned k = 0; k < 3; k++)
		write_sections(f, dir, names, nr, order[k], true);
	fputs("</ul>\n", f);
	for (unsigned k = 0; k < 3; k++)
		write_sections(f, dir, names, nr, order[k], false);
	fputs("</body>\n</html>\n", f);
}

void ilab_results_page_path(const char *dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/index.html", dir);
}

int ilab_results_page(const char *dir, char *msg, size_t msglen)
{
	struct dirent **names = NULL;
	char path[4096];
	struct ilab_afile a;
	int nr, ret;

	nr = scandir(dir, &names, json_file, alphasort);
	if (nr < 0) {
		ret = -errno;
		snprintf(msg, msglen, "%s: %s", dir, strerror(errno));
		return ret;
	}
	ilab_results_page_path(dir, path, sizeof(path));
	ret = ilab_afile_open(&a, path, msg, msglen);
	if (!ret) {
		write_page(a.f, dir, names, nr); /* a failed write leaves ferror: commit says */
		ret = ilab_afile_commit(&a, msg, msglen);
	}
	for (int i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	if (!ret)
		snprintf(msg, msglen, "%s", path);
	return ret;
}
