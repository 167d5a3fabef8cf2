/* netperf_omni.c — netperf 2.7's omni output selectors and layouts (netperf_omni.h).
 * Facts from netperf's src/nettest_omni.c (set_output_elt's header lines and formats,
 * set_output_list_by_test's default lists, print_omni_csv/_keyword/_human's layouts); no
 * code of it.
 */
#include "netperf_omni.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct omni_out {
	const char *name;
	const char *line[4];
};

/* The selectors iommulab has figures for, with netperf's four header lines each. */
static const struct omni_out outs[] = {
	{ "PROTOCOL", { "Protocol", "", "", "" } },
	{ "DIRECTION", { "Direction", "", "", "" } },
	{ "ELAPSED_TIME", { "Elapsed", "Time", "(sec)", "" } },
	{ "THROUGHPUT", { "Throughput", "", "", "" } },
	{ "THROUGHPUT_UNITS", { "Throughput", "Units", "", "" } },
	{ "LOCAL_SEND_THROUGHPUT", { "Local", "Send", "Throughput", "" } },
	{ "REMOTE_RECV_THROUGHPUT", { "Remote", "Recv", "Throughput", "" } },
	{ "RT_LATENCY", { "Round", "Trip", "Latency", "usec/tran" } },
	{ "TRANSACTION_RATE", { "Transaction", "Rate", "Tran/s", "" } },
	{ "TRANSPORT_MSS", { "Transport", "MSS", "bytes", "" } },
	{ "REQUEST_SIZE", { "Request", "Size", "Bytes", "" } },
	{ "RESPONSE_SIZE", { "Response", "Size", "Bytes", "" } },
	{ "LSS_SIZE_END", { "Local", "Send Socket", "Size", "Final" } },
	{ "LSR_SIZE_END", { "Local", "Recv Socket", "Size", "Final" } },
	{ "RSS_SIZE_END", { "Remote", "Send Socket", "Size", "Final" } },
	{ "RSR_SIZE_END", { "Remote", "Recv Socket", "Size", "Final" } },
	{ "LOCAL_SEND_SIZE", { "Local", "Send", "Size", "" } },
	{ "REMOTE_SEND_SIZE", { "Remote", "Send", "Size", "" } },
	{ "LOCAL_CPU_UTIL", { "Local", "CPU", "Util", "%" } },
	{ "LOCAL_CPU_PERCENT_USER", { "Local", "CPU", "User", "%" } },
	{ "LOCAL_CPU_PERCENT_SYSTEM", { "Local", "CPU", "System", "%" } },
	{ "LOCAL_CPU_PERCENT_IOWAIT", { "Local", "CPU", "I/O", "%" } },
	{ "LOCAL_CPU_PERCENT_IRQ", { "Local", "CPU", "IRQ", "%" } },
	{ "LOCAL_CPU_PERCENT_SWINTR", { "Local", "CPU", "swintr", "%" } },
	{ "LOCAL_CPU_METHOD", { "Local", "CPU", "Util", "Method" } },
	{ "REMOTE_CPU_UTIL", { "Remote", "CPU", "Util", "%" } },
	{ "REMOTE_CPU_PERCENT_USER", { "Remote", "CPU", "User", "%" } },
	{ "REMOTE_CPU_PERCENT_SYSTEM", { "Remote", "CPU", "System", "%" } },
	{ "REMOTE_CPU_PERCENT_IOWAIT", { "Remote", "CPU", "I/O", "%" } },
	{ "REMOTE_CPU_PERCENT_IRQ", { "Remote", "CPU", "IRQ", "%" } },
	{ "REMOTE_CPU_PERCENT_SWINTR", { "Remote", "CPU", "swintr", "%" } },
	{ "REMOTE_CPU_METHOD", { "Remote", "CPU", "Util", "Method" } },
	{ "LOCAL_CPU_BIND", { "Local", "CPU", "Bind", "" } },
	{ "REMOTE_CPU_BIND", { "Remote", "CPU", "Bind", "" } },
	{ "LOCAL_SD", { "Local", "Service", "Demand", "" } },
	{ "REMOTE_SD", { "Remote", "Service", "Demand", "" } },
	{ "SD_UNITS", { "Service", "Demand", "Units", "" } },
	{ "MIN_LATENCY", { "Minimum", "Latency", "Microseconds", "" } },
	{ "MAX_LATENCY", { "Maximum", "Latency", "Microseconds", "" } },
	{ "P50_LATENCY", { "50th", "Percentile", "Latency", "Microseconds" } },
	{ "P90_LATENCY", { "90th", "Percentile", "Latency", "Microseconds" } },
	{ "P99_LATENCY", { "99th", "Percentile", "Latency", "Microseconds" } },
	{ "MEAN_LATENCY", { "Mean", "Latency", "Microseconds", "" } },
};
#define NR_OUTS (int)(sizeof(outs) / sizeof(outs[0]))

static int find(const char *name)
{
	for (int i = 0; i < NR_OUTS; i++)
		if (!strcasecmp(outs[i].name, name))
			return i;
	return -1;
}

/* One block (a line of the selection): names separated by spaces or commas. */
static int parse_block(char *list, unsigned b, struct np_omni_sel *sel, np_omni_value_fn value,
		       void *arg, char *err, size_t errlen)
{
	char *save = NULL;

	for (char *tok = strtok_r(list, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
		int id = find(tok);

		if (id < 0 || !value(outs[id].name, arg)) {
			snprintf(err, errlen, "output selector '%s' is %s", tok,
				 id < 0 ? "not supported (docs/netperf.md lists those that are)"
					: "not measured in this test");
			return -1;
		}
		if (sel->n[b] == NP_OMNI_PER_BLOCK) {
			snprintf(err, errlen, "more than %d output selectors on one line",
				 NP_OMNI_PER_BLOCK);
			return -1;
		}
		sel->id[b][sel->n[b]++] = id;
	}
	return 0;
}

int np_omni_parse(const char *spec, struct np_omni_sel *sel, np_omni_value_fn value,
		  void *arg, char *err, size_t errlen)
{
	char *copy = strdup(spec), *save = NULL;
	unsigned b = 0;
	int ret = 0;

	memset(sel, 0, sizeof(*sel));
	if (!copy)
		return snprintf(err, errlen, "out of memory"), -1;
	if (!strchr(spec, ',') && !strchr(spec, ';') && find(spec) < 0) {
		/* netperf reads a name that is not a selector as a file of selections */
		snprintf(err, errlen, "'%s': a file of output selections is not supported; give "
			 "the list (THROUGHPUT,MEAN_LATENCY)", spec);
		free(copy);
		return -1;
	}
	for (char *blk = strtok_r(copy, ";", &save); blk && !ret; blk = strtok_r(NULL, ";", &save)) {
		if (b == NP_OMNI_BLOCKS) {
			snprintf(err, errlen, "more than %d output lines (';')", NP_OMNI_BLOCKS);
			ret = -1;
			break;
		}
		ret = parse_block(blk, b++, sel, value, arg, err, errlen);
	}
	free(copy);
	return ret;
}

void np_omni_default(struct np_omni_sel *sel, int kind, bool cpu)
{
	static const char *const send[] = { "LSS_SIZE_END", "RSR_SIZE_END", "LOCAL_SEND_SIZE" };
	static const char *const recv[] = { "RSS_SIZE_END", "LSR_SIZE_END", "REMOTE_SEND_SIZE" };
	static const char *const rr[] = { "LSS_SIZE_END", "LSR_SIZE_END", "RSR_SIZE_END",
					  "RSS_SIZE_END", "REQUEST_SIZE", "RESPONSE_SIZE" };
	static const char *const tput[] = { "ELAPSED_TIME", "THROUGHPUT", "THROUGHPUT_UNITS" };
	static const char *const cpus[] = {
		"LOCAL_CPU_UTIL", "LOCAL_CPU_PERCENT_USER", "LOCAL_CPU_PERCENT_SYSTEM",
		"LOCAL_CPU_PERCENT_IOWAIT", "LOCAL_CPU_PERCENT_IRQ", "LOCAL_CPU_PERCENT_SWINTR",
		"LOCAL_CPU_METHOD", "REMOTE_CPU_UTIL", "REMOTE_CPU_PERCENT_USER",
		"REMOTE_CPU_PERCENT_SYSTEM", "REMOTE_CPU_PERCENT_IOWAIT", "REMOTE_CPU_PERCENT_IRQ",
		"REMOTE_CPU_PERCENT_SWINTR", "REMOTE_CPU_METHOD", "LOCAL_SD", "REMOTE_SD",
		"SD_UNITS" };
	const char *const *first = kind == NP_OMNI_KIND_RR ? rr : kind ? recv : send;
	unsigned nfirst = kind == NP_OMNI_KIND_RR ? 6 : 3;

	memset(sel, 0, sizeof(*sel));
	for (unsigned i = 0; i < nfirst; i++)
		sel->id[0][sel->n[0]++] = find(first[i]);
	for (unsigned i = 0; i < 3; i++)
		sel->id[0][sel->n[0]++] = find(tput[i]);
	for (unsigned i = 0; cpu && i < sizeof(cpus) / sizeof(cpus[0]); i++)
		sel->id[0][sel->n[0]++] = find(cpus[i]);
}

static void print_keyval(const struct np_omni_sel *sel, np_omni_value_fn value, void *arg)
{
	for (unsigned b = 0; b < NP_OMNI_BLOCKS; b++)
		for (unsigned j = 0; j < sel->n[b]; j++)
			printf("%s=%s\n", outs[sel->id[b][j]].name,
			       value(outs[sel->id[b][j]].name, arg));
}

/* CSV: every block on one line; a header is an output's non-empty header lines joined by
 * spaces; outputs separated by commas */
static void print_csv(bool headers, const struct np_omni_sel *sel, np_omni_value_fn value,
		      void *arg)
{
	bool first = true;

	if (headers) {
		for (unsigned b = 0; b < NP_OMNI_BLOCKS; b++)
			for (unsigned j = 0; j < sel->n[b]; j++) {
				const struct omni_out *o = &outs[sel->id[b][j]];

				printf("%s", first ? "" : ",");
				first = false;
				for (unsigned k = 0; k < 4 && o->line[k][0]; k++)
					printf("%s%s", k ? " " : "", o->line[k]);
			}
		printf("\n");
	}
	first = true;
	for (unsigned b = 0; b < NP_OMNI_BLOCKS; b++)
		for (unsigned j = 0; j < sel->n[b]; j++) {
			printf("%s%s", first ? "" : ",", value(outs[sel->id[b][j]].name, arg));
			first = false;
		}
	printf("\n");
}

/* Human: per block, four header lines and the values, each output in a column as wide as its
 * longest header line or its value and one more, plus a space; blocks apart by a blank line */
static void print_human(bool headers, const struct np_omni_sel *sel, np_omni_value_fn value,
			void *arg)
{
	bool any = false;

	for (unsigned b = 0; b < NP_OMNI_BLOCKS; b++) {
		size_t w[NP_OMNI_PER_BLOCK];

		if (!sel->n[b])
			continue;
		for (unsigned j = 0; j < sel->n[b]; j++) {
			const struct omni_out *o = &outs[sel->id[b][j]];
			size_t v = strlen(value(o->name, arg)) + 1;

			w[j] = v;
			for (unsigned k = 0; k < 4; k++)
				if (strlen(o->line[k]) > w[j])
					w[j] = strlen(o->line[k]);
		}
		if (any)
			printf("\n");
		any = true;
		for (unsigned k = 0; headers && k < 4; k++) {
			for (unsigned j = 0; j < sel->n[b]; j++)
				printf("%-*s", (int)w[j] + 1, outs[sel->id[b][j]].line[k]);
			printf("\n");
		}
		for (unsigned j = 0; j < sel->n[b]; j++)
			printf("%-*s", (int)w[j] + 1, value(outs[sel->id[b][j]].name, arg));
		printf("\n");
	}
}

void np_omni_print(enum np_omni_mode mode, bool headers, const struct np_omni_sel *sel,
		   np_omni_value_fn value, void *arg)
{
	if (mode == NP_OMNI_KEYVAL)
		print_keyval(sel, value, arg);
	else if (mode == NP_OMNI_CSV)
		print_csv(headers, sel, value, arg);
	else
		print_human(headers, sel, value, arg);
}
