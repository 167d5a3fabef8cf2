/* results_page.h — <dir>/index.html, the page of every result in a results directory
 * (results_page.c; docs/results-page.md).
 */
#ifndef ILAB_REPORT_RESULTS_PAGE_H
#define ILAB_REPORT_RESULTS_PAGE_H

#include <stddef.h>

/* The page's name in dir: "<dir>/index.html". */
void ilab_results_page_path(const char *dir, char *buf, size_t len);
/* Write <dir>/index.html from the result files in dir, whole or not at all. 0 with msg = the
 * page's name, or a negative errno with msg = "file: reason". */
int ilab_results_page(const char *dir, char *msg, size_t msglen);

#endif
