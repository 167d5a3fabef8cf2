/* record.c — the calibration record: beside a fitted profile (X.yaml -> X.calibration.json),
 * which experiments its free constants were fitted on and each one's out-of-sample error
 * from the cross-validation, with the source tree it was computed on. `iommulab calibrate`
 * writes it; `iommulab run` reads the one beside the profile a scenario runs on and prints,
 * under that scenario's table, whether its figures were in the calibration set and their
 * out-of-sample error. A profile without a record prints nothing.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibrate/calib.h"
#include "util/errf.h"

#ifndef ILAB_SRCDIR
#define ILAB_SRCDIR "."
#endif

#define RECORD_SCHEMA "iommulab-calibration-record/1"

void ilab_calib_record_path(const char *profile, char *buf, size_t len)
{
	size_t n = strlen(profile);

	if (n > 5 && !strcmp(profile + n - 5, ".yaml"))
		n -= 5;
	snprintf(buf, len, "%.*s.calibration.json", (int)n, profile);
}

/* The source tree the figures came from: git's tree hash of HEAD, "+changes" when the work
 * tree differs from it; "unknown" outside a git checkout. */
void ilab_calib_source_tree(char *buf, size_t len)
{
	char cmd[sizeof(ILAB_SRCDIR) + 128], line[64] = "";
	FILE *p;
	int dirty;

	snprintf(buf, len, "unknown");
	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse 'HEAD^{tree}' 2>/dev/null", ILAB_SRCDIR);
	p = popen(cmd, "r");
	if (!p)
		return;
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	if (pclose(p) != 0 || strlen(line) < 40)
		return;
	line[strcspn(line, "\n")] = '\0';
	snprintf(cmd, sizeof(cmd), "git -C '%s' diff --quiet HEAD -- 2>/dev/null", ILAB_SRCDIR);
	dirty = system(cmd) != 0;
	snprintf(buf, len, "%.12s%s", line, dirty ? "+changes" : "");
}

json_t *ilab_calib_record_json(const struct ilab_calib_report *r)
{
	const struct ilab_calib_set *set = r->set;
	json_t *doc = json_object(), *exps = json_array();
	const char *tree = set->tree;

	for (unsigned e = 0; e < set->nr_exp; e++) {
		json_t *o = json_pack("{s:s, s:b}", "name", set->exp[e]->name, "in_sample", 1);

		for (unsigned k = 0; r->cv && k < r->cv->nr; k++) {
			const struct ilab_calib_cv_exp *x = &r->cv->e[k];

			if (x->exp != e)
				continue;
			json_object_set_new(o, "out_of_sample",
					    json_pack("{s:s, s:i, s:i, s:f, s:s}", "by",
						      x->loeo ? "experiment left out" : "case folds",
						      "figures", x->figures, "within", x->within,
						      "median_abs_log_error",
						      isnan(x->median_abs_log) ? 0 : x->median_abs_log,
						      "held_at_prior", x->pinned_only));
		}
		json_array_append_new(exps, o);
	}
	json_object_set_new(doc, "schema", json_string(RECORD_SCHEMA));
	json_object_set_new(doc, "profile", json_string(set->profile_name));
	json_object_set_new(doc, "fitted_on", json_string(r->fitted_on));
	json_object_set_new(doc, "tree", json_string(tree));
	json_object_set_new(doc, "experiments", exps);
	return doc;
}

int ilab_calib_record_line(const char *profile, const char *scenario, char *line, size_t len)
{
	char path[ILAB_SCN_PATH_MAX + 32];
	const char *tree = "", *on = "", *name;
	json_t *doc, *exps, *e, *oos;
	json_error_t je;
	struct stat st;
	size_t i;

	ilab_calib_record_path(profile, path, sizeof(path));
	if (stat(path, &st) != 0)
		return 0;
	doc = json_load_file(path, 0, &je);
	if (!doc || json_unpack(doc, "{s:s, s:s, s:o}", "tree", &tree, "fitted_on", &on,
				"experiments", &exps) || !json_is_array(exps)) {
		snprintf(line, len, "calibration record %s: unreadable (%s)", path,
			 doc ? "not a calibration record" : je.text);
		json_decref(doc);
		return -EINVAL;
	}
	json_array_foreach(exps, i, e) {
		if (json_unpack(e, "{s:s}", "name", &name) || strcmp(name, scenario))
			continue;
		oos = json_object_get(e, "out_of_sample");
		if (!oos) {
			snprintf(line, len, "calibration: these figures were in the calibration set "
				 "(%s; tree %s); no out-of-sample error (calibrate --cross-validate)",
				 on, tree);
		} else {
			json_int_t fig = 0, within = 0;
			double med = 0;
			const char *by = "", *held = "";

			json_unpack(oos, "{s:s, s:I, s:I, s:F, s:s}", "by", &by, "figures", &fig,
				    "within", &within, "median_abs_log_error", &med,
				    "held_at_prior", &held);
			snprintf(line, len, "calibration: these figures were in the calibration set "
				 "(%s; tree %s); out of sample (%s): %lld of %lld within tolerance, "
				 "median |log error| %.3f (%.1f %%)%s%s", on, tree, by,
				 (long long)within, (long long)fig, med, 100 * (exp(med) - 1),
				 held[0] ? "; held at the prior, pinned only here: " : "", held);
		}
		json_decref(doc);
		return 1;
	}
	snprintf(line, len, "calibration: not in the calibration set (%s; tree %s): these figures "
		 "are predictions of the fitted constants", on, tree);
	json_decref(doc);
	return 1;
}

int ilab_calib_record_in_sample(const char *profile, const char *scenario)
{
	char path[ILAB_SCN_PATH_MAX + 32];
	const char *name;
	json_t *doc, *exps, *e;
	struct stat st;
	size_t i;
	int in = 0;

	ilab_calib_record_path(profile, path, sizeof(path));
	if (stat(path, &st) != 0)
		return -ENOENT;
	doc = json_load_file(path, 0, NULL);
	exps = doc ? json_object_get(doc, "experiments") : NULL;
	if (!json_is_array(exps)) {
		json_decref(doc);
		return -EINVAL;
	}
	json_array_foreach(exps, i, e)
		if (!json_unpack(e, "{s:s}", "name", &name) && !strcmp(name, scenario))
			in = 1;
	json_decref(doc);
	return in;
}

