/* measurements.c — a user's own measurements as a calibration's set (`iommulab calibrate
 * --measurements FILE.yaml`, docs/calibration.md):
 *
 *   measurements:
 *     - workload: dma_map_benchmark          # what ran: a workload of the registry ...
 *       params: { threads: 4, granule: 16 }  # ... with its parameters and mechanisms
 *       mechanisms: { map_pages: on }
 *       metric: map_latency                  # what was measured, in the metric's unit
 *       value: 1.3
 *       unit: us
 *       truncate: 0.1                        # optional: the tool's resolution
 *
 * Each entry becomes a one-case scenario with one published figure (kind calibration: the
 * report marks it in-sample), loaded by the scenario parser itself on the profile being
 * calibrated, so an entry is accepted exactly when a scenario file holding it would be. And
 * the importer of dma_map_benchmark's output (tools/testing/selftests/dma, the format
 * iommulab bench prints too: docs/dma-bench.md) into such entries.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "calibrate/calib.h"
#include "iommulab/sim.h"
#include "iommulab/topo.h"
#include "util/errf.h"
#include "util/yaml_file.h"
#include "util/yaml_util.h"

#define MEASUREMENTS_MAX_BYTES (1u << 20)

static int file_errf(char *err, size_t errlen, const char *file, size_t line,
			  size_t column, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* "file:line:column: message"; returns -EINVAL. */
static int file_errf(char *err, size_t errlen, const char *file, size_t line,
			  size_t column, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ilab_file_verrf(err, errlen, file, line, column, fmt, ap);
	va_end(ap);
	return rc;
}

/* A flat mapping of plain words as "{ k: v, ... }"; -1 when it is not one. */
static int flow_map(FILE *f, yaml_document_t *doc, yaml_node_t *map)
{
	const char *sep = "";

	if (map->type != YAML_MAPPING_NODE)
		return -1;
	fputs("{ ", f);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = ilab_yaml_scalar(yaml_document_get_node(doc, p->key));
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *t = ilab_yaml_scalar(v);

		if (!k || !t || !ilab_yaml_is_plain(v) || strpbrk(k, ",:{}[]#\"'\n") ||
		    strpbrk(t, ",:{}[]#\"'\n"))
			return -1;
		fprintf(f, "%s%s: %s", sep, k, t);
		sep = ", ";
	}
	fputs(" }", f);
	return 0;
}

static const char *plain(yaml_node_t *n)
{
	const char *t = ilab_yaml_scalar(n);

	return t && ilab_yaml_is_plain(n) && !strpbrk(t, ",:{}[]#\"'\n") ? t : NULL;
}

/* Entry i as a scenario file's text; -EINVAL with err at the entry. */
static int entry_text(const char *file, yaml_document_t *doc, yaml_node_t *e, unsigned i,
		      const char *profile, char **text, size_t *len, char *err, size_t errlen)
{
	static const char *const keys[] = { "workload", "params", "mechanisms", "metric", "value",
					    "unit", "truncate", "label", NULL };
	yaml_node_t *wl, *pa, *me, *tr, *lb;
	const char *metric, *value, *unit;
	FILE *f;
	int bad = 0;

	if (e->type != YAML_MAPPING_NODE)
		return file_errf(err, errlen, file, e->start_mark.line + 1,
				      e->start_mark.column + 1, "measurement %u: expected a mapping "
				      "(workload, params, metric, value, unit)", i + 1);
	for (yaml_node_pair_t *p = e->data.mapping.pairs.start; p < e->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = yaml_document_get_node(doc, p->key);
		const char *k = ilab_yaml_scalar(kn);
		unsigned j;

		for (j = 0; k && keys[j] && strcmp(keys[j], k); j++)
			;
		if (!k || !keys[j])
			return file_errf(err, errlen, file, kn->start_mark.line + 1,
					      kn->start_mark.column + 1, "measurement %u: unknown "
					      "key '%s'", i + 1, k ? k : "");
	}
	wl = ilab_yaml_map_get(doc, e, "workload");
	metric = plain(ilab_yaml_map_get(doc, e, "metric"));
	value = plain(ilab_yaml_map_get(doc, e, "value"));
	unit = plain(ilab_yaml_map_get(doc, e, "unit"));
	if (!wl || !plain(wl) || !metric || !value || !unit)
		return file_errf(err, errlen, file, e->start_mark.line + 1,
				      e->start_mark.column + 1, "measurement %u: needs workload, "
				      "metric, value and unit, each a plain word or number", i + 1);
	pa = ilab_yaml_map_get(doc, e, "params");
	me = ilab_yaml_map_get(doc, e, "mechanisms");
	tr = ilab_yaml_map_get(doc, e, "truncate");
	lb = ilab_yaml_map_get(doc, e, "label");
	f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	/* the profile is set after parsing (a file may be one): the scenario format takes names */
	fprintf(f, "name: measurement-%u\nseed: none\ntitle: \"%s, measurement %u\"\n"
		"profile: calibrated\nworkload:\n  type: %s\n", i + 1, "user measurements", i + 1,
		plain(wl));
	(void)profile;
	if (pa) {
		fputs("  params: ", f);
		bad |= flow_map(f, doc, pa);
		fputc('\n', f);
	}
	fprintf(f, "cases:\n  - label: %s\n", lb && plain(lb) ? plain(lb) : "measured");
	bad |= lb && !plain(lb);
	if (me) {
		fputs("    mechanisms: ", f);
		bad |= flow_map(f, doc, me);
		fputc('\n', f);
	}
	fprintf(f, "    reference:\n      - { metric: %s, value: %s, unit: %s, kind: calibration",
		metric, value, unit);
	if (tr) {
		bad |= !plain(tr);
		fprintf(f, ", truncate: %s", plain(tr) ? plain(tr) : "0");
	}
	fputs(" }\n", f);
	if (fclose(f)) {
		free(*text);
		return -ENOMEM;
	}
	if (bad) {
		free(*text);
		return file_errf(err, errlen, file, e->start_mark.line + 1,
				      e->start_mark.column + 1, "measurement %u: params, mechanisms "
				      "and label take plain words and numbers only", i + 1);
	}
	return 0;
}

/* "tmp:line:column: message" -> "message" */
static const char *strip_position(const char *msg)
{
	const char *p = strstr(msg, ".yaml:");

	if (!p)
		return msg;
	p += 6;
	p += strspn(p, "0123456789");
	p += *p == ':';
	p += strspn(p, "0123456789");
	return *p == ':' && p[1] == ' ' ? p + 2 : msg;
}

/* The checks ilab_scenario_load makes against the machine, on the calibrated profile: what
 * the workload needs of the profile, node numbers, the workload's own check of the case. */
static int check_on_machine(const struct ilab_calib_set *set, const struct ilab_scenario *s,
			    char *msg, size_t msglen)
{
	const struct ilab_workload *w = s->workload;
	struct ilab_case c;
	struct ilab_profile prof;
	struct ilab_topo *topo = NULL;
	int rc;

	rc = ilab_profile_parse(set->profile_text, set->profile_len, set->profile_path, &prof,
				msg, msglen);
	if (!rc)
		rc = ilab_topo_load(prof.topology, &topo, msg, msglen);
	if (!rc && w->check_profile && w->check_profile(&prof, msg, msglen))
		rc = -EINVAL;
	ilab_case_effective(s, &s->cases[0], set->quick, &c);
	for (unsigned i = 0; !rc && i < c.nr_params; i++) {
		const struct ilab_workload_param *spec = ilab_workload_param_find(w,
										   c.params[i].name);

		if (spec && spec->node && c.params[i].value >= ilab_topo_nr_nodes(topo))
			rc = ilab_errf(msg, msglen, -EINVAL, "%s: node %.0f does not exist on %s",
				       c.params[i].name, c.params[i].value, ilab_topo_name(topo));
	}
	if (!rc && w->check && w->check(&c, topo, msg, msglen))
		rc = -EINVAL;
	ilab_topo_free(topo);
	return rc;
}

static int load_entry(struct ilab_calib_set *set, const char *file, const yaml_node_t *e,
		      unsigned i, const char *text, size_t len, char *err, size_t errlen)
{
	char msg[1024];
	struct ilab_scenario *s;
	int rc;

	rc = ilab_scenario_parse(text, len, "measurement.yaml", &s, msg, sizeof(msg));
	if (!rc) {
		snprintf(s->profile, sizeof(s->profile), "%s", set->profile_path);
		rc = check_on_machine(set, s, msg, sizeof(msg));
		if (rc)
			ilab_scenario_free(s);
	}
	if (rc)
		return file_errf(err, errlen, file, e->start_mark.line + 1,
				 e->start_mark.column + 1, "measurement %u: %s", i + 1,
				 strip_position(msg));
	rc = ilab_calib_set_add_scenario(set, s);
	if (rc) {
		ilab_scenario_free(s);
		return ilab_errf(err, errlen, rc, "%s: too many measurements", file);
	}
	return 0;
}

static bool nonempty_list(const yaml_node_t *n)
{
	return n->type == YAML_SEQUENCE_NODE &&
	       n->data.sequence.items.start != n->data.sequence.items.top;
}

int ilab_calib_measurements_add(struct ilab_calib_set *set, const char *path, char *err,
				size_t errlen)
{
	yaml_document_t doc;
	yaml_node_t *root, *list, *parts;
	char *text = NULL, *entry;
	size_t len, elen;
	int rc;

	rc = ilab_yaml_read_file(path, MEASUREMENTS_MAX_BYTES, "larger than 1 MiB: not a "
				 "measurements file", &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = ilab_yaml_check_depth(text, len, path, "measurements file", err, errlen);
	if (!rc)
		rc = ilab_yaml_load(text, len, path, "measurements", ILAB_YAML_ERROR_SYNTAX, &doc,
				    err, errlen);
	free(text);
	if (rc)
		return rc;
	root = yaml_document_get_root_node(&doc);
	list = root && root->type == YAML_MAPPING_NODE ? ilab_yaml_map_get(&doc, root, "measurements") : NULL;
	parts = root && root->type == YAML_MAPPING_NODE ? ilab_yaml_map_get(&doc, root, "parts") : NULL;
	if ((!list && !parts) || (list && !nonempty_list(list)) || (parts && !nonempty_list(parts)) ||
	    root->data.mapping.pairs.top - root->data.mapping.pairs.start != !!list + !!parts)
		rc = file_errf(err, errlen, path, root ? root->start_mark.line + 1 : 1,
				    root ? root->start_mark.column + 1 : 1, "expected the keys "
				    "measurements: and/or parts:, each a non-empty list "
				    "(docs/calibration.md)");
	/* the parts first: the measurements' cases are checked on the profile with them */
	if (!rc && parts)
		rc = ilab_calib_parts_apply(set, path, &doc, parts, err, errlen);
	if (!list) {
		yaml_document_delete(&doc);
		return rc;
	}
	for (yaml_node_item_t *it = rc ? NULL : list->data.sequence.items.start;
	     it && it < list->data.sequence.items.top && !rc; it++) {
		yaml_node_t *e = yaml_document_get_node(&doc, *it);
		unsigned i = (unsigned)(it - list->data.sequence.items.start);

		rc = entry_text(path, &doc, e, i, set->profile_path, &entry, &elen, err, errlen);
		if (!rc) {
			rc = load_entry(set, path, e, i, entry, elen, err, errlen);
			free(entry);
		}
	}
	yaml_document_delete(&doc);
	return rc;
}

/* ---- importers ---- */

/* dma_map_benchmark's report (tools/testing/selftests/dma/dma_map_benchmark.c; iommulab bench
 * prints the same lines, src/workloads/map_benchmark.c):
 *   dma mapping mode: DMA_MAP_BENCH_SINGLE_MODE                    (newer kernels)
 *   dma mapping benchmark: threads:1 seconds:20 node:-1 dir:BIDIRECTIONAL granule: 1
 *   average map latency(us):0.7 standard deviation:1.1
 *   average unmap latency(us):0.8 standard deviation:1.1
 * One report or several, one after the other. Each gives two entries; a latency of 0.0 (below
 * the tool's 0.1 us) gives none, as a comment: nothing to fit a logarithm to. */
int ilab_calib_import_dma_map_benchmark(const char *path, FILE *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[512], dir[64];
	unsigned threads = 0, seconds = 0, granule = 0, lineno = 0, reports = 0, want = 0;
	int node = 0;
	double lat, sd;

	if (!f)
		return ilab_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
	fprintf(out, "# iommulab calibrate --import dma_map_benchmark %s\nmeasurements:\n", path);
	while (fgets(line, sizeof(line), f)) {
		char which[8];

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) { /* a line this long is not the tool's */
			fclose(f);
			return ilab_errf(err, errlen, -EINVAL, "%s:%u: not dma_map_benchmark output: "
					 "a line of more than %zu characters", path, lineno,
					 sizeof(line) - 2);
		}
		line[strcspn(line, "\n")] = '\0';
		/* newer kernels print the mapping mode first (single or scatter-gather), as bench does */
		if (!line[0] || (want == 0 && !strncmp(line, "dma mapping mode: ", 18)))
			continue;
		if (want == 0 && sscanf(line, "dma mapping benchmark: threads:%u seconds:%u node:%d "
					"dir:%63s granule: %u", &threads, &seconds, &node, dir,
					&granule) == 5 && threads && granule) {
			want = 1;
			continue;
		}
		if (want && sscanf(line, "average %7s latency(us):%lf standard deviation:%lf", which,
				   &lat, &sd) == 3 && !strcmp(which, want == 1 ? "map" : "unmap") &&
		    lat >= 0 && sd >= 0) {
			if (lat > 0) {
				fprintf(out, "  - workload: dma_map_benchmark\n    params: { threads: "
					"%u, granule: %u", threads, granule);
				if (node >= 0) /* -1: no node given; the workload's default node */
					fprintf(out, ", node: %d", node);
				fprintf(out, " }\n    metric: %s_latency\n    value: %.1f\n    unit: "
					"us\n    truncate: 0.1\n", which, lat);
			} else {
				fprintf(out, "  # %s latency 0.0 us (threads %u, granule %u): below the "
					"tool's 0.1 us, no entry\n", which, threads, granule);
			}
			want = want == 1 ? 2 : 0;
			reports += want == 0;
			continue;
		}
		fclose(f);
		return ilab_errf(err, errlen, -EINVAL, "%s:%u: not dma_map_benchmark output: "
				 "expected '%s'", path, lineno, want == 0 ?
				 "dma mapping benchmark: threads:N seconds:N node:N dir:D granule: N"
				 : want == 1 ? "average map latency(us):X standard deviation:Y"
					     : "average unmap latency(us):X standard deviation:Y");
	}
	fclose(f);
	if (!reports || want)
		return ilab_errf(err, errlen, -EINVAL, "%s:%u: not dma_map_benchmark output: %s",
				 path, lineno, reports ? "a report cut short"
						       : "no report in it");
	return 0;
}

/* fio's size: "4096", "4k", "128K", "1m" (fio's k is 1024). 0 when it is not one. */
static double fio_size(const char *t)
{
	char *end;
	double v = t ? strtod(t, &end) : 0;

	if (!t || end == t || v <= 0)
		return 0;
	if (!*end)
		return v;
	if (end[1] && strcasecmp(end + 1, "ib") && strcasecmp(end + 1, "b"))
		return 0;
	switch (*end) {
	case 'k': case 'K': return v * 1024;
	case 'm': case 'M': return v * 1024 * 1024;
	default: return 0;
	}
}

/* An option of the job, else of the global section. */
static const char *fio_option(json_t *job, json_t *global, const char *name)
{
	json_t *v = json_object_get(json_object_get(job, "job options"), name);

	if (!v)
		v = json_object_get(global, name);
	return json_string_value(v);
}

static void fio_entry(FILE *out, const char *params, const char *metric, double v,
		      const char *unit)
{
	fprintf(out, "  - workload: fio\n    params: %s\n    metric: %s\n    value: %.10g\n"
		"    unit: %s\n", params, metric, v, unit);
}

/* fio --output-format=json (fio's HOWTO, "JSON output"): per job of "jobs", the options of
 * "job options" over "global options" (rw, bs, iodepth, numjobs) and the read or write side's
 * iops, bw_bytes (or bw, KiB/s) and clat_ns percentiles 50, 99, 99.9. With group_reporting
 * the one job is the group. Random and sequential reads and writes only (fio's workload). */
int ilab_calib_import_fio(const char *path, FILE *out, char *err, size_t errlen)
{
	static const char *const rws[] = { "randread", "randwrite", "read", "write", NULL };
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je), *jobs, *global, *job;
	size_t i;

	if (!doc)
		return ilab_errf(err, errlen, -EINVAL, "%s:%d: not fio JSON output: %s", path,
				 je.line, je.text);
	jobs = json_object_get(doc, "jobs");
	global = json_object_get(doc, "global options");
	if (!json_is_array(jobs) || !json_array_size(jobs)) {
		json_decref(doc);
		return ilab_errf(err, errlen, -EINVAL, "%s: not fio JSON output: no \"jobs\" list",
				 path);
	}
	fprintf(out, "# iommulab calibrate --import fio %s\nmeasurements:\n", path);
	json_array_foreach(jobs, i, job) {
		const char *rw = fio_option(job, global, "rw");
		const char *dir;
		double bs = fio_size(fio_option(job, global, "bs"));
		const char *depth = fio_option(job, global, "iodepth");
		const char *nj = fio_option(job, global, "numjobs");
		json_t *side, *pct;
		char params[256];
		unsigned r;

		for (r = 0; rw && rws[r] && strcmp(rws[r], rw); r++)
			;
		if (!rw || !rws[r] || !bs) {
			/* the message first: the strings are the document's */
			ilab_errf(err, errlen, -EINVAL, "%s: job %zu: rw '%s' and bs '%s': not fio's "
				  "randread, randwrite, read or write with a size", path, i,
				  rw ? rw : "", fio_option(job, global, "bs") ?
				  fio_option(job, global, "bs") : "");
			json_decref(doc);
			return -EINVAL;
		}
		dir = r == 0 || r == 2 ? "read" : "write";
		side = json_object_get(job, dir);
		if (!json_is_number(json_object_get(side, "iops"))) {
			json_decref(doc);
			return ilab_errf(err, errlen, -EINVAL, "%s: job %zu: no %s.iops", path, i,
					 dir);
		}
		snprintf(params, sizeof(params), "{ rw: %u, bs: %.0f, iodepth: %s, numjobs: %s }",
			 r, bs, depth && strspn(depth, "0123456789") == strlen(depth) && *depth
			 ? depth : "1", nj && strspn(nj, "0123456789") == strlen(nj) && *nj ? nj
			 : "1");
		fio_entry(out, params, "iops", json_number_value(json_object_get(side, "iops")),
			  "IOPS");
		if (json_is_number(json_object_get(side, "bw_bytes")))
			fio_entry(out, params, "bw", json_number_value(json_object_get(side,
									"bw_bytes")) / 1e6, "MB/s");
		else if (json_is_number(json_object_get(side, "bw")))
			fio_entry(out, params, "bw", json_number_value(json_object_get(side, "bw")) *
				  1024 / 1e6, "MB/s");
		pct = json_object_get(json_object_get(side, "clat_ns"), "percentile");
		if (json_is_number(json_object_get(pct, "50.000000")))
			fio_entry(out, params, "clat_p50", json_number_value(json_object_get(pct,
								"50.000000")) / 1e3, "us");
		if (json_is_number(json_object_get(pct, "99.000000")))
			fio_entry(out, params, "clat_p99", json_number_value(json_object_get(pct,
								"99.000000")) / 1e3, "us");
		if (json_is_number(json_object_get(pct, "99.900000")))
			fio_entry(out, params, "clat_p999", json_number_value(json_object_get(pct,
								"99.900000")) / 1e3, "us");
	}
	json_decref(doc);
	return 0;
}
