/* units.h — the one parser of sizes and times for the tools iommulab speaks, each with its own
 * units: fio's (HOWTO "int": K, M, G, T, P with an optional i and B, case-insensitive; with
 * kb_base=1024, the default, "k" is 1024 and "ki" 1000 — fio's compatibility mode —, with
 * kb_base=1000 the other way round; a 0x prefix for hexadecimal) and fio's times (d, h, m, s,
 * sec, ms, msec, us, usec, case-insensitive, seconds without a unit).
 */
#ifndef ILAB_UTIL_UNITS_H
#define ILAB_UTIL_UNITS_H

#include <stdint.h>

enum ilab_size_units {
	ILAB_UNITS_FIO_1024,  /* fio, kb_base=1024 (its default) */
	ILAB_UNITS_FIO_1000,  /* fio, kb_base=1000 */
};

/* A size in bytes: 0 and *out, or -1 (not a number with those units, or overflow). */
int ilab_parse_size(const char *s, enum ilab_size_units u, uint64_t *out);

/* A time in ns, a bare number in units of default_ns (fio: seconds). 0 or -1. */
int ilab_parse_time(const char *s, uint64_t default_ns, uint64_t *ns);

#endif /* ILAB_UTIL_UNITS_H */
