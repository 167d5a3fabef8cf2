/* skip.h — a test that cannot run for want of something on the host (a preset, a tool, a
 * second CPU) says so and skips; when the environment variable CI is set it fails instead,
 * since CI must run every check (CI=true bash .ci/run). Not for checks that do not apply by
 * design. Include after <cmocka.h>.
 */
#ifndef ILAB_TESTS_SKIP_H
#define ILAB_TESTS_SKIP_H

#include <stdbool.h>

/* CI is set, non-empty, and neither "0" nor "false". */
bool ilab_test_in_ci(void);
/* Print "SKIPPED: <why>" (or the failure's reason under CI); true under CI. */
bool ilab_test_note_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Skip the running test, or fail it under CI. */
#define ILAB_SKIP(...)                                                           \
	do {                                                                     \
		if (ilab_test_note_skip(__VA_ARGS__))                            \
			fail_msg("CI is set: a test may not be skipped there"); \
		skip();                                                          \
	} while (0)

/* Go on without one check of the running test, or fail it under CI. */
#define ILAB_SKIP_CHECK(...)                                                     \
	do {                                                                     \
		if (ilab_test_note_skip(__VA_ARGS__))                            \
			fail_msg("CI is set: a check may not be skipped there"); \
	} while (0)

#endif
