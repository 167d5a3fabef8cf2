/* table.c — the human table of a scenario result: a header naming the seed and the setup, then
 * one row per published figure with the seed's figure, iommulab's, their ratio and the verdict;
 * then, when the scenario lists published effects, one row per effect with both changes.
 * It is not the JSON (result_json.c); columns are padded by display width (UTF-8 aware).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/report.h"

#define NR_COLS 7
#define CELL 320
#define DASH "—"

struct row {
	char cell[NR_COLS][CELL];
};

static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80; /* count code points, not bytes */
	return w;
}

static void pad(FILE *f, const char *s, size_t width, bool last)
{
	fputs(s, f);
	if (last)
		return;
	for (size_t w = display_width(s); w < width + 2; w++)
		fputc(' ', f);
}

static const char *relation_prefix(enum ilab_ref_relation r)
{
	return r == ILAB_REL_GT ? "> " : r == ILAB_REL_LT ? "< " : "";
}

/* One row: a published figure (ref) and ours; or, for a case without any, the scenario's
 * plot.y figure, or without plot.y one of the figures the case reported (own). */
static void fill_row(const struct ilab_scenario *s, const struct ilab_case *k,
		     const struct ilab_case_result *cr, const struct ilab_reference *ref,
		     const struct ilab_figure *own, struct row *row)
{
	struct ilab_comparison c;
	char num[64];

	snprintf(row->cell[0], CELL, "%s", k->label);
	if (!ref) {
		/* the scenario's plot.y metric, iommulab's alone: a prediction nobody measured */
		const struct ilab_figure *fig = s->plot_y[0] ? ilab_case_result_find(cr, s->plot_y)
							     : NULL;

		snprintf(row->cell[2], CELL, "(no published figure)");
		if (own)
			fig = own; /* no plot.y: each figure the case reported, a row each */
		snprintf(row->cell[1], CELL, "%s", fig ? fig->metric : DASH);
		if (fig) {
			ilab_report_format_number(fig->value, num, sizeof(num));
			snprintf(row->cell[3], CELL, "%s %s", num, fig->unit);
		} else {
			snprintf(row->cell[3], CELL, DASH);
		}
		snprintf(row->cell[4], CELL, DASH);
		snprintf(row->cell[5], CELL, DASH);
		snprintf(row->cell[6], CELL, "%s", cr->status == ILAB_CASE_OK ? "ran" : cr->message);
		return;
	}
	ilab_compare(s, ref, cr, &c);
	snprintf(row->cell[1], CELL, "%s", ref->metric);
	ilab_report_format_number(ref->value, num, sizeof(num));
	snprintf(row->cell[2], CELL, "%s%s %s", relation_prefix(ref->relation), num, ref->unit);
	if (c.have_ours) {
		const struct ilab_figure *fig = ilab_case_result_find(cr, ref->metric);
		struct ilab_spread sp;

		ilab_report_format_number(c.ours, num, sizeof(num));
		snprintf(row->cell[3], CELL, "%s %s", num, ref->unit);
		if (ilab_figure_spread(cr, (unsigned)(fig - cr->figures), &sp)) {
			/* --repeat: the mean, ± the standard deviation across seeds */
			ilab_report_format_number(sp.sd, num, sizeof(num));
			snprintf(row->cell[3] + strlen(row->cell[3]), CELL - strlen(row->cell[3]),
				 " ± %s", num);
		}
		snprintf(row->cell[4], CELL, "%.2f", c.ratio);
	} else {
		snprintf(row->cell[3], CELL, DASH);
		snprintf(row->cell[4], CELL, DASH);
	}
	snprintf(row->cell[5], CELL, "%s", ilab_ref_kind_name(ref->kind));
	if (c.have_ours)
		snprintf(row->cell[6], CELL, "%s ±%.0f%%",
			 c.verdict == ILAB_VERDICT_WITHIN ? "within" : "OUTSIDE", c.tolerance * 100);
	else if (cr->status != ILAB_CASE_OK)
		snprintf(row->cell[6], CELL, "%s", cr->message);
	else
		snprintf(row->cell[6], CELL, "no %s figure reported", ref->metric);
}

static const char *effect_verdict_text(enum ilab_effect_verdict v)
{
	switch (v) {
	case ILAB_EFFECT_SAME: return "same direction";
	case ILAB_EFFECT_OPPOSITE: return "OPPOSITE";
	case ILAB_EFFECT_MISSING: return "NOT REPRODUCED";
	case ILAB_EFFECT_SPURIOUS: return "SPURIOUS";
	default: return "no data";
	}
}

#define NR_ECOLS 5

/* The published effects, one row each: the seed's change from one case to another, ours, and
 * whether they agree in direction. */

/* The kernel the cases ran as (docs/kernel-eras.md): one name, or "per case". */
static void print_kernel(FILE *f, const struct ilab_scenario *s)
{
	const char *first = NULL;

	for (unsigned i = 0; i < s->nr_cases; i++) {
		const struct ilab_case *k = &s->cases[i];
		const char *name = k->has_kernel ? k->kernel.name : "latest";

		if (first && strcmp(first, name)) {
			fprintf(f, ", kernel per case");
			return;
		}
		first = name;
	}
	if (first)
		fprintf(f, ", kernel %s", first);
}
static int effects_table(const struct ilab_scenario_result *r, FILE *f)
{
	static const char *const head[NR_ECOLS] = { "effect (from -> to)", "metric", "seed",
						    "iommulab", "direction" };
	const struct ilab_scenario *s = r->scenario;
	char (*cells)[NR_ECOLS][CELL] = calloc(s->nr_effects, sizeof(*cells));
	size_t width[NR_ECOLS];

	if (!cells)
		return -ENOMEM;
	for (unsigned i = 0; i < s->nr_effects; i++) {
		const struct ilab_effect *e = &s->effects[i];
		struct ilab_effect_comparison c;

		ilab_compare_effect(r, e, &c);
		snprintf(cells[i][0], CELL, "%s (%s -> %s)", e->label, s->cases[e->from].label,
			 s->cases[e->to].label);
		snprintf(cells[i][1], CELL, "%s", e->metric);
		snprintf(cells[i][2], CELL, "%+.1f%%%s", c.seed_change * 100,
			 c.bound ? " (bound)" : "");
		if (c.have_ours)
			snprintf(cells[i][3], CELL, "%+.1f%%", c.ours_change * 100);
		else
			snprintf(cells[i][3], CELL, DASH);
		if (c.have_spread) /* --repeat: the change's spread across seeds */
			snprintf(cells[i][3] + strlen(cells[i][3]), CELL - strlen(cells[i][3]),
				 " ± %.1f%%", c.change_sd * 100);
		snprintf(cells[i][4], CELL, "%s%s%s", effect_verdict_text(c.verdict),
			 c.identical_runs && c.verdict != ILAB_EFFECT_SAME ? " (identical runs)" : "",
			 c.within_spread ? " (within spread)" : "");
	}
	for (int c = 0; c < NR_ECOLS; c++) {
		width[c] = display_width(head[c]);
		for (unsigned i = 0; i < s->nr_effects; i++) {
			size_t w = display_width(cells[i][c]);

			width[c] = w > width[c] ? w : width[c];
		}
	}
	fputc('\n', f);
	for (int c = 0; c < NR_ECOLS; c++)
		pad(f, head[c], width[c], c == NR_ECOLS - 1);
	fputc('\n', f);
	for (unsigned i = 0; i < s->nr_effects; i++) {
		for (int c = 0; c < NR_ECOLS; c++)
			pad(f, cells[i][c], width[c], c == NR_ECOLS - 1);
		fputc('\n', f);
	}
	free(cells);
	return 0;
}

int ilab_report_table(const struct ilab_scenario_result *r, FILE *f)
{
	static const char *const head[NR_COLS] = { "case", "metric", "seed figure", "iommulab",
						   "ratio", "kind", "verdict" };
	const struct ilab_scenario *s = r->scenario;
	size_t nr = 0, width[NR_COLS];
	struct row *rows;

	for (unsigned i = 0; i < s->nr_cases; i++)
		nr += s->cases[i].nr_refs ? s->cases[i].nr_refs
		      : !s->plot_y[0] && r->cases[i].nr_figures ? r->cases[i].nr_figures : 1;
	rows = calloc(nr ? nr : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	nr = 0;
	for (unsigned i = 0; i < s->nr_cases; i++) {
		const struct ilab_case *k = &s->cases[i];

		const struct ilab_case_result *cr = &r->cases[i];

		bool each = !k->nr_refs && !s->plot_y[0] && cr->nr_figures;

		if (!k->nr_refs && !each)
			fill_row(s, k, cr, NULL, NULL, &rows[nr++]);
		for (unsigned j = 0; each && j < cr->nr_figures; j++)
			fill_row(s, k, cr, NULL, &cr->figures[j], &rows[nr++]);
		for (unsigned j = 0; j < k->nr_refs; j++)
			fill_row(s, k, cr, &k->refs[j], NULL, &rows[nr++]);
	}
	for (int c = 0; c < NR_COLS; c++) {
		width[c] = display_width(head[c]);
		for (size_t i = 0; i < nr; i++) {
			size_t w = display_width(rows[i].cell[c]);

			width[c] = w > width[c] ? w : width[c];
		}
	}

	if (strcmp(s->seed, "none"))
		fprintf(f, "seed %s — %s\n", s->seed, s->title);
	else /* predictions only: no seed, no published figure */
		fprintf(f, "%s (predictions, no published figures)\n", s->title);
	fprintf(f, "scenario %s, profile %s, engine %s, workload %s%s", s->name,
		r->profile[0] ? r->profile : s->profile, ilab_engine_kind_name(s->engine),
		s->workload ? s->workload->name : "?", r->quick ? " (quick)" : "");
	print_kernel(f, s);
	if (r->repeat > 1)
		fprintf(f, ", seeds %llu-%llu (mean ± sd)", (unsigned long long)r->seed,
			(unsigned long long)(r->seed + r->repeat - 1));
	else if (r->seed > 1)
		fprintf(f, ", seed %llu", (unsigned long long)r->seed);
	fputc('\n', f);
	for (int c = 0; c < NR_COLS; c++)
		pad(f, head[c], width[c], c == NR_COLS - 1);
	fputc('\n', f);
	for (size_t i = 0; i < nr; i++) {
		for (int c = 0; c < NR_COLS; c++)
			pad(f, rows[i].cell[c], width[c], c == NR_COLS - 1);
		fputc('\n', f);
	}
	free(rows);
	/* a paragraph of its own after the table: readers of the table stop at the blank line */
	for (unsigned i = 0, n = 0; i < r->nr_cases && i < s->nr_cases; i++)
		if (r->cases[i].backport_non_strict)
			fprintf(f, "%sbackport: %s runs 4.20's SMMUv3 non-strict (lazy) mode on kernel "
				"%s, whose driver was strict only\n", n++ ? "" : "\n",
				s->cases[i].label, s->cases[i].kernel.name);
	if (s->nr_effects && effects_table(r, f))
		return -ENOMEM;
	return ferror(f) ? -EIO : 0;
}
