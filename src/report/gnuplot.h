/* gnuplot.h — running gnuplot on a script the report wrote (plot.c): shared by the scenario
 * plots and the sweep plots (sweep_plot.c). Not a plotting API.
 */
#ifndef ILAB_REPORT_GNUPLOT_H
#define ILAB_REPORT_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>

/* The gnuplot to run: $IOMMULAB_GNUPLOT, else `gnuplot` found in PATH. */
bool ilab_gnuplot_find(char *buf, size_t len);
/* Render script (which reads the variable ilab_png as its output name) into png, through a
 * temporary file renamed when complete. 0, or non-zero with msg. */
int ilab_gnuplot_render(const char *prog, const char *script, const char *png, char *msg,
			size_t msglen);

#endif
