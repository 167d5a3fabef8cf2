/* errf.c — ilab_errf: a formatted one-line error into a caller's buffer (see errf.h).
 * Not a logger.
 */
#include <stdarg.h>
#include <stdio.h>

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
