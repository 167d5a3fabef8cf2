/* test_skip_policy.c — tests/support/skip.h: a test that skips for want of something on the
 * host skips (and an unchecked part is passed over) unless the environment variable CI is set,
 * when it fails instead. Each case runs a small cmocka group in a child process with CI set or
 * not, and reads its failure count and how far the test got. Not the shell tests' skips
 * (tests/cli/skip_policy.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/skip.h"

static bool reached;

static void skips(void **state)
{
	(void)state;
	ILAB_SKIP("no such tool (a test of the skip policy)");
	reached = true;
}

static void skips_one_check(void **state)
{
	(void)state;
	ILAB_SKIP_CHECK("no such tool: one check not made (a test of the skip policy)");
	reached = true;
}

/* Run fn as a one-test group in a child with CI set to ci (NULL: unset); return the child's
 * failure count, and whether the test ran past the skip. */
static int run_child(void (*fn)(void **), const char *ci, bool *ran_on)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const struct CMUnitTest one[] = { cmocka_unit_test(fn) };
		int failed;

		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(100);
		if (ci)
			setenv("CI", ci, 1);
		else
			unsetenv("CI");
		reached = false;
		failed = cmocka_run_group_tests(one, NULL, NULL);
		_exit(failed * 2 + reached);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	*ran_on = WEXITSTATUS(status) & 1;
	return WEXITSTATUS(status) / 2;
}

static void test_skip_outside_ci(void **state)
{
	const char *not_ci[] = { NULL, "", "0", "false" };
	bool on;

	(void)state;
	for (size_t i = 0; i < sizeof(not_ci) / sizeof(not_ci[0]); i++) {
		assert_int_equal(run_child(skips, not_ci[i], &on), 0);
		assert_false(on);
		assert_int_equal(run_child(skips_one_check, not_ci[i], &on), 0);
		assert_true(on);
	}
}

static void test_fail_in_ci(void **state)
{
	const char *ci[] = { "true", "1", "yes" };
	bool on;

	(void)state;
	for (size_t i = 0; i < sizeof(ci) / sizeof(ci[0]); i++) {
		assert_int_equal(run_child(skips, ci[i], &on), 1);
		assert_false(on);
		assert_int_equal(run_child(skips_one_check, ci[i], &on), 1);
		assert_false(on);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skip_outside_ci),
		cmocka_unit_test(test_fail_in_ci),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
