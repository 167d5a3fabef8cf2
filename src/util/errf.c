/* errf.c — ilab_errf: a formatted one-line error into a caller's buffer (see errf.h).
 * Not a logger.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/errf.h"

int ilab_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

int ilab_file_verrf(char *err, size_t errlen, const char *file, size_t line, size_t column,
		    const char *fmt, va_list ap)
{
	size_t n;

	if (!err || !errlen)
		return -EINVAL;
	n = (size_t)snprintf(err, errlen, "%s:%zu:%zu: ", file, line, column);
	if (n < errlen)
		vsnprintf(err + n, errlen - n, fmt, ap);
	return -EINVAL;
}

int ilab_errf_cause(char *err, size_t errlen, int code, const char *cause)
{
	size_t n;

	if (!err || !errlen || !cause || !*cause)
		return code;
	n = strnlen(err, errlen);
	if (n >= errlen - 1)
		return code;
	snprintf(err + n, errlen - n, "%s%s", n ? ": " : "", cause);
	return code;
}
