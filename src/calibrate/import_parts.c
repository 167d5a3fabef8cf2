/* import_parts.c — importers of measurements of a machine's parts (not of an iommulab
 * workload): each becomes a `parts:` entry, which `calibrate --measurements` applies as the
 * profile's constant (parts.c) rather than fitting a figure to it.
 *
 *   lmbench's lat_mem_rd (lmbench3 src/lat_mem_rd.c): on stderr, per stride, a header
 *   `"stride=N` (the quote is xgraph's label syntax), then one line per array size,
 *   printf("%.5f %.3f\n", size in MB, ns per load), and a blank line after each stride when
 *   strides are named. The last line of a stride (its largest array) is the load-to-use
 *   latency of memory: one `memory_latency` entry per stride. The nodes the run was bound to
 *   (numactl --cpunodebind / --membind) are not in the output: the caller gives them.
 *
 *   core-to-core-latency's CSV (github.com/nviennot/core-to-core-latency, src/bench.rs,
 *   `--csv`: the mean of each cell, one row per core, `{}` of each f64 joined by ',', an empty
 *   field for a pair not measured: the diagonal, and the upper triangle of the symmetric CAS
 *   benchmark): cell (i, j) is the one-way latency between the i-th and j-th core of the
 *   run's core list (all cores in id order unless --cores named others), half a CAS round
 *   trip (src/bench/cas.rs). One `line_transfer` entry per measured pair.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calib.h"
#include "util/errf.h"

#define LINE_MAX_CHARS 65536 /* a CSV row of 4096 cores of ~15 characters */

/* One line of f into buf (without its '\n'): 1, 0 at the end, -E2BIG for a longer line. */
static int read_line(FILE *f, char *buf, size_t len)
{
	if (!fgets(buf, (int)len, f))
		return 0;
	if (!strchr(buf, '\n') && !feof(f))
		return -E2BIG;
	buf[strcspn(buf, "\r\n")] = '\0';
	return 1;
}

/* A number and nothing else ("" is not one). */
static bool number(const char *t, double *v)
{
	char *end;

	if (!*t)
		return false;
	errno = 0;
	*v = strtod(t, &end);
	return !errno && end != t && !*end && isfinite(*v);
}

int ilab_calib_import_lat_mem_rd(const char *path, int cpu_node, int memory_node, FILE *out,
				 char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = malloc(LINE_MAX_CHARS), *sp;
	unsigned lineno = 0, stride = 0, entries = 0, points = 0;
	double mb = 0, ns = 0;
	int rc = 0, r;

	if (!f || !line) {
		rc = ilab_errf(err, errlen, f ? -ENOMEM : -errno, "%s: %s", path,
			       strerror(f ? ENOMEM : errno));
		goto out;
	}
	fprintf(out, "# iommulab calibrate --import lat_mem_rd %s --nodes %d,%d\nparts:\n", path,
		cpu_node, memory_node);
	while (!rc) {
		double a, b;

		r = read_line(f, line, LINE_MAX_CHARS);
		lineno += r != 0;
		/* a stride ends at a blank line, a new header or the end: its last point */
		if (r <= 0 || !line[0] || strstr(line, "stride=")) {
			if (points) {
				fprintf(out, "  # stride %u bytes, the largest array: %.5f MB\n"
					"  - part: memory_latency\n    cpu_node: %d\n    memory_node: "
					"%d\n    value: %.3f\n    unit: ns\n", stride, mb, cpu_node,
					memory_node, ns);
				entries++;
			}
			points = 0;
		}
		if (r < 0)
			rc = ilab_errf(err, errlen, -EINVAL, "%s:%u: not lat_mem_rd output: a line "
				       "longer than %d characters", path, lineno, LINE_MAX_CHARS - 2);
		if (r <= 0)
			break;
		if (!line[0])
			continue;
		sp = line + (line[0] == '"');
		if (sscanf(sp, "stride=%u", &stride) == 1 && stride)
			continue;
		{
			char x[64], y[64], extra;

			if (stride && sscanf(line, "%63s %63s %c", x, y, &extra) == 2 &&
			    number(x, &a) && number(y, &b) && a > 0 && b > 0) {
				mb = a;
				ns = b;
				points++;
				continue;
			}
		}
		rc = ilab_errf(err, errlen, -EINVAL, "%s:%u: not lat_mem_rd output: expected %s",
			       path, lineno, stride ? "'SIZE_MB LATENCY_NS' or '\"stride=N'"
						    : "'\"stride=N' first");
	}
	if (!rc && !entries)
		rc = ilab_errf(err, errlen, -EINVAL, "%s:%u: not lat_mem_rd output: no measurement "
			       "in it", path, lineno);
out:
	if (f)
		fclose(f);
	free(line);
	return rc;
}

int ilab_calib_import_core_to_core(const char *path, FILE *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = malloc(LINE_MAX_CHARS);
	unsigned row = 0, cols = 0, entries = 0;
	int rc = 0, r;

	if (!f || !line) {
		rc = ilab_errf(err, errlen, f ? -ENOMEM : -errno, "%s: %s", path,
			       strerror(f ? ENOMEM : errno));
		goto out;
	}
	fprintf(out, "# iommulab calibrate --import core-to-core-latency %s\n# cpus: positions in "
		"the run's core list (its CPU ids unless --cores named others); one-way ns\n"
		"parts:\n", path);
	while (!rc && (r = read_line(f, line, LINE_MAX_CHARS)) != 0) {
		unsigned n = 1, col = 0;
		char *p = line, *comma;

		if (r < 0) {
			rc = ilab_errf(err, errlen, -EINVAL, "%s:%u: not core-to-core-latency CSV: a "
				       "line longer than %d characters", path, row + 1,
				       LINE_MAX_CHARS - 2);
			break;
		}
		for (const char *q = line; *q; q++)
			n += *q == ',';
		if (!row)
			cols = n;
		if (n != cols || n < 2) {
			rc = ilab_errf(err, errlen, -EINVAL, "%s:%u: not core-to-core-latency CSV: "
				       "%u fields, expected %u (one per core, as many as rows)",
				       path, row + 1, n, row ? cols : 2);
			break;
		}
		for (; !rc; p = comma + 1, col++) {
			double v;

			comma = strchr(p, ',');
			if (comma)
				*comma = '\0';
			if (*p && (!number(p, &v) || v <= 0 || col == row))
				rc = ilab_errf(err, errlen, -EINVAL, "%s:%u: not core-to-core-latency "
					       "CSV: field %u, '%.40s': expected empty or a latency in "
					       "ns (> 0; none on the diagonal)", path, row + 1,
					       col + 1, p);
			else if (*p) {
				fprintf(out, "  - { part: line_transfer, cpus: [%u, %u], value: %.3f, "
					"unit: ns }\n", row, col, v);
				entries++;
			}
			if (!comma)
				break;
		}
		row++;
	}
	if (!rc && (row != cols || !entries))
		rc = ilab_errf(err, errlen, -EINVAL, "%s:%u: not core-to-core-latency CSV: %s",
			       path, row, !entries ? "no latency in it"
						   : "not as many rows as columns");
out:
	if (f)
		fclose(f);
	free(line);
	return rc;
}
