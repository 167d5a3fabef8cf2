/* errf.h — format a one-line error message into a caller's buffer and return an error code:
 * the convention of every set-up function that takes (char *err, size_t errlen).
 * Not a logging facility: nothing is printed.
 */
#ifndef ILAB_UTIL_ERRF_H
#define ILAB_UTIL_ERRF_H

#include <stddef.h>

/* Write the message into err (if err and errlen are non-zero) and return code unchanged. */
int ilab_errf(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
