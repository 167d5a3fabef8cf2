/* units.c — sizes and times as the tools' users write them (units.h). */
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int parse_number(const char *s, unsigned long long *v, char **end)
{
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!isxdigit((unsigned char)*s))
			return -1;
	} else if (!isdigit((unsigned char)*s)) {
		return -1;
	}
	errno = 0;
	*v = strtoull(s, end, base);
	return errno ? -1 : 0;
}

int ilab_parse_size(const char *s, enum ilab_size_units u, uint64_t *out)
{
	static const char prefixes[] = "kmgtp";
	unsigned long long v;
	uint64_t mul = 1;
	char *end;
	const char *p;

	if (parse_number(s, &v, &end))
		return -1;
	p = *end ? strchr(prefixes, tolower((unsigned char)*end)) : NULL;
	if (p) {
		/* "k" is the power of two with kb_base=1024 and "ki" the power of ten; kb_base=1000
		 * swaps them */
		bool iec = tolower((unsigned char)end[1]) == 'i';
		bool pow2 = (u == ILAB_UNITS_FIO_1024) != iec;
		uint64_t step = pow2 ? 1024 : 1000;

		for (long i = 0; i <= p - prefixes; i++)
			mul *= step;
		end += iec ? 2 : 1;
	}
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end || (mul > 1 && v > UINT64_MAX / mul))
		return -1;
	*out = v * mul;
	return 0;
}

int ilab_parse_time(const char *s, uint64_t default_ns, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "d", 86400000000000ull }, { "h", 3600000000000ull }, { "m", 60000000000ull },
		{ "s", 1000000000ull }, { "sec", 1000000000ull }, { "ms", 1000000ull },
		{ "msec", 1000000ull }, { "us", 1000ull }, { "usec", 1000ull },
	};
	unsigned long long v;
	uint64_t mul = 0;
	char *end;

	if (parse_number(s, &v, &end))
		return -1;
	if (!*end)
		mul = default_ns;
	for (unsigned i = 0; !mul && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(end, units[i].unit))
			mul = units[i].ns;
	if (!mul || v > UINT64_MAX / mul)
		return -1;
	*ns = v * mul;
	return 0;
}
