/* sweep_result.h — a sweep's result file (schema "iommulab-sweep/1", docs/sweep.md): the
 * sweep's description (name, hash, axes, metrics) and one entry per case, by case index.
 * Shard files are the same with a "shard" member and only their cases; merging shards gives
 * the bytes an unsharded run writes. Also the sweep's plots (sweep_plot.c).
 */
#ifndef ILAB_REPORT_SWEEP_RESULT_H
#define ILAB_REPORT_SWEEP_RESULT_H

#include <jansson.h>
#include <stdbool.h>

#include "experiments/sweep.h"

#define ILAB_SWEEP_SCHEMA "iommulab-sweep/1"

/* Everything but the cases: what shards of one sweep have in common. */
json_t *ilab_sweep_header_json(const struct ilab_sweep *sw);
/* Case k's entry: its index, its axis values, status and figures. */
json_t *ilab_sweep_case_json(const struct ilab_sweep *sw, unsigned k,
			     const struct ilab_case_result *r);
/* header + "cases" (an array, taken over) [+ "shard": {index, count} when count > 0]. */
json_t *ilab_sweep_doc(json_t *header, json_t *cases, unsigned shard, unsigned count);
/* Write doc to path, whole or not at all, in the one stable format (sorted keys, 17
 * significant digits). Returns 0 or a negative errno with err. */
int ilab_sweep_doc_save(const json_t *doc, const char *path, char *err, size_t errlen);
/* doc, read from file, is a sweep result or shard as the writer makes them: every field
 * present with its type and range, each case's values the grid's at its index, a shard's
 * cases its own (sweep_schema.c). Returns 0, or -EINVAL with err = "file: field: problem". */
int ilab_sweep_result_check(const json_t *doc, const char *file, char *err, size_t errlen);
/* Merge shard files into the whole result: they must be of one sweep (the same header) and
 * hold every case exactly once. Returns 0 and *out, or -EINVAL with err naming the file. */
int ilab_sweep_merge(char *const *paths, unsigned n, json_t **out, char *err, size_t errlen);

/* The plots of a result: <base>-<axis path>.png per axis (each metric against it, a line per
 * combination of the other axes when few) and <base>-heatmap.png with two axes. Returns 0, 1
 * with a warning in msg (no gnuplot: the scripts are written), or a negative errno. */
int ilab_sweep_plot(const json_t *doc, const char *base, char *msg, size_t msglen);
/* The files ilab_sweep_plot may write (doc: a result, or just its header), one per i from 0:
 * its name in buf, false past the last. */
bool ilab_sweep_plot_file(const json_t *doc, const char *base, unsigned i, char *buf,
			  size_t len);

#endif
