/* skip.c — see skip.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "skip.h"

bool ilab_test_in_ci(void)
{
	const char *ci = getenv("CI");

	return ci && *ci && strcmp(ci, "0") != 0 && strcmp(ci, "false") != 0;
}

bool ilab_test_note_skip(const char *fmt, ...)
{
	bool ci = ilab_test_in_ci();
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	print_message("%s: %s\n", ci ? "NOT SKIPPED (CI is set)" : "SKIPPED", why);
	return ci;
}
