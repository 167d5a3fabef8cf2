/* errf.h — format a one-line error message into a caller's buffer and return an error code:
 * the convention of every set-up function that takes (char *err, size_t errlen).
 * Not a logging facility: nothing is printed.
 */
#ifndef ILAB_UTIL_ERRF_H
#define ILAB_UTIL_ERRF_H

#include <stdarg.h>
#include <stddef.h>

/* Write the message into err (if err and errlen are non-zero) and return code unchanged. */
int ilab_errf(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The same for a position in a file: "file:line:column: message" (line and column from 1),
 * the form every scenario and profile error takes. Returns -EINVAL. */
int ilab_file_verrf(char *err, size_t errlen, const char *file, size_t line, size_t column,
		    const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* Add a cause to the message in err: "message: cause", or the cause alone when err is empty
 * (a message never starts with ": "), nothing when the cause is empty. Returns code. */
int ilab_errf_cause(char *err, size_t errlen, int code, const char *cause);

#endif
