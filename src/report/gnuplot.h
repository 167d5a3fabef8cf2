/* gnuplot.h — running gnuplot on a script the report wrote (plot.c): shared by the scenario
 * plots and the sweep plots (sweep_plot.c). Not a plotting API.
 */
#ifndef ILAB_REPORT_GNUPLOT_H
#define ILAB_REPORT_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The gnuplot to run: $IOMMULAB_GNUPLOT, else `gnuplot` found in PATH. */
bool ilab_gnuplot_find(char *buf, size_t len);
/* The start of every plot script: the terminal and the output. The script draws a PNG
 * (pngcairo) by default, or an SVG when run with -e "ilab_fmt='svg'"; its output is png, or
 * the variable ilab_png when set (-e). w x h pixels. */
void ilab_gnuplot_header(FILE *f, unsigned w, unsigned h, const char *png);
/* gnuplot's single-quoted string ('' stands for one quote; newlines are dropped). */
void ilab_gnuplot_quoted(FILE *f, const char *s);
/* png with its ".png" replaced by ".svg" (appended when it has none): the SVG beside it. */
void ilab_gnuplot_svg_name(const char *png, char *buf, size_t len);
/* Render script (whose start is ilab_gnuplot_header's) into png and the SVG beside it, each
 * through a temporary file renamed when complete. 0, or non-zero with msg. */
int ilab_gnuplot_render(const char *prog, const char *script, const char *png, char *msg,
			size_t msglen);

#endif
