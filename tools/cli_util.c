/* cli_util.c — small pieces the workload commands (fio, netperf) share: a strict decimal count
 * and the printing of a result object with the simulator's statistics attached.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

int cli_parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* strtoull would take blanks and a sign ("-1" is 2^64 - 1): a count starts with a digit */
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

void cli_print_result_json(struct json_t *root, const char *stats)
{
	char *s;

	if (root && stats) {
		json_t *st = json_loads(stats, 0, NULL);

		if (st)
			json_object_set_new(root, "stats", st);
	}
	s = root ? json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2)) : NULL;
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(root);
}
