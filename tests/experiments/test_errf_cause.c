/* test_errf_cause.c — ilab_errf_cause (src/util/errf.c), how a set-up adds the simulator's or
 * the driver's reason to its message: "message: cause", the cause alone when there is no
 * message (never "iommulab netperf: : virtual time ..."), nothing for an empty cause, and never
 * past the buffer. Not the messages themselves (each command's tests).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "util/errf.h"

static void cause_follows_the_message(void **state)
{
	char err[64] = "CMD_SYNC failed (-62)";

	(void)state;
	assert_int_equal(ilab_errf_cause(err, sizeof(err), -ETIME, "virtual time limit passed"),
			 -ETIME);
	assert_string_equal(err, "CMD_SYNC failed (-62): virtual time limit passed");
}

static void cause_alone_without_a_message(void **state)
{
	char err[64] = "";

	(void)state;
	ilab_errf_cause(err, sizeof(err), -ETIME, "deadlock at 5 ns: nothing can run");
	assert_string_equal(err, "deadlock at 5 ns: nothing can run");
}

static void empty_cause_adds_nothing(void **state)
{
	char err[64] = "no CPU";

	(void)state;
	ilab_errf_cause(err, sizeof(err), -EINVAL, "");
	ilab_errf_cause(err, sizeof(err), -EINVAL, NULL);
	assert_string_equal(err, "no CPU");
}

static void cut_at_the_buffer(void **state)
{
	char err[12] = "abcdef";

	(void)state;
	ilab_errf_cause(err, sizeof(err), -EIO, "0123456789");
	assert_string_equal(err, "abcdef: 012");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cause_follows_the_message),
		cmocka_unit_test(cause_alone_without_a_message),
		cmocka_unit_test(empty_cause_adds_nothing),
		cmocka_unit_test(cut_at_the_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
