/* netperf_omni.h — netperf 2.7's omni output (nettest_omni.c's print_omni_csv, _keyword and
 * _human): the output selectors iommulab has figures for, their header lines and formats,
 * selection lists ("A,B;C D" — blocks separated by ';') and the three layouts.
 * Not the figures themselves (cmd_netperf.c fills them) nor netperf's legacy layouts.
 */
#ifndef ILAB_TOOLS_NETPERF_OMNI_H
#define ILAB_TOOLS_NETPERF_OMNI_H

#include <stdbool.h>
#include <stddef.h>

enum np_omni_mode { NP_OMNI_HUMAN = 0, NP_OMNI_CSV, NP_OMNI_KEYVAL };

#define NP_OMNI_BLOCKS 4   /* NETPERF_MAX_BLOCKS */
#define NP_OMNI_PER_BLOCK 64

struct np_omni_sel {
	unsigned n[NP_OMNI_BLOCKS];
	int id[NP_OMNI_BLOCKS][NP_OMNI_PER_BLOCK];
};

/* An output's value, as netperf formats it (%.2f, %d, %s...): the caller's, by name. A NULL
 * return: the selector has no figure in this test (refused when parsed). */
typedef const char *(*np_omni_value_fn)(const char *name, void *arg);

/* Parse a selection (names case-insensitive, as netperf's strcasecmp). Unknown names and names
 * for which value() returns NULL are refused: 0, or -1 with err naming it. */
int np_omni_parse(const char *spec, struct np_omni_sel *sel, np_omni_value_fn value,
		  void *arg, char *err, size_t errlen);
/* netperf's default list for a test (set_output_list_by_test): stream (send), maerts (recv)
 * or request/response, with or without the CPU figures. */
void np_omni_default(struct np_omni_sel *sel, int kind, bool cpu);
#define NP_OMNI_KIND_SEND 0
#define NP_OMNI_KIND_RECV 1
#define NP_OMNI_KIND_RR 2
void np_omni_print(enum np_omni_mode mode, bool headers, const struct np_omni_sel *sel,
		   np_omni_value_fn value, void *arg);

#endif
