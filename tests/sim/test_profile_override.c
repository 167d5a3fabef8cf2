/* test_profile_override.c — ilab_profile_override (the sweep's profile.* axes): a value is
 * replaced or a missing key added, and the result parses with the new value and every other
 * value unchanged; a missing section or a section named as a value is an error; values are
 * judged by the profile parser (a quoted number is a string, a zero latency refused), never
 * by the override. Not the sweep file (tests/cli/sweep.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/sim.h"

static const char base[] =
	"name: t\n"
	"topology: kunpeng920\n"
	"memory:\n"
	"  local_ns: 100   # a comment\n"
	"  line_stream_ns: 6\n"
	"cache:\n"
	"  hit_ns: 2\n"
	"  atomic_local_ns: 8\n"
	"  transfer_local_ns: 50\n"
	"mmio:\n"
	"  read_local_ns: 400\n"
	"  write_local_ns: 50\n"
	"smmu:\n"
	"  command_ns: 30\n"
	"  sync_ns: 50\n"
	"  tlb_lookup_ns: 5\n";

/* Override, then parse: 0 and *p, or the parser's (or the override's) error. */
static int apply(const struct ilab_profile_override *o, unsigned n, struct ilab_profile *p,
		 char *err, size_t errlen)
{
	char *text;
	size_t len;
	int ret = ilab_profile_override(base, sizeof(base) - 1, o, n, &text, &len, err, errlen);

	if (ret)
		return ret;
	ret = ilab_profile_parse(text, len, "o.yaml", p, err, errlen);
	free(text);
	return ret;
}

static void replaces_and_adds(void **state)
{
	struct ilab_profile_override o[] = {
		{ "smmu.sync_ns", "900", false },
		{ "memory.local_ns", "123", false },
		{ "smmu.tlbi_sync_ns", "77", false }, /* not in the base: added */
	};
	struct ilab_profile p, ref;
	char err[256];

	(void)state;
	assert_int_equal(ilab_profile_parse(base, sizeof(base) - 1, "b.yaml", &ref, err,
					    sizeof(err)), 0);
	assert_int_equal(apply(o, 3, &p, err, sizeof(err)), 0);
	assert_int_equal(p.smmu_sync_ns, 900);
	assert_int_equal(p.mem.local_ns, 123);
	assert_int_equal(p.smmu_tlbi_sync_ns, 77);
	/* the rest as in the base */
	assert_int_equal(p.smmu_command_ns, ref.smmu_command_ns);
	assert_int_equal(p.mmio_read.local_ns, 400);
	assert_int_equal(p.cache_hit_ns, 2);
	assert_string_equal(p.topology, "kunpeng920");
	assert_int_equal(ref.smmu_tlbi_sync_ns, 0);
}

static void bad_paths_are_errors(void **state)
{
	struct ilab_profile_override nosec = { "nvme.read_iops", "1", false };
	struct ilab_profile_override section = { "smmu", "1", false };
	struct ilab_profile_override below = { "smmu.sync_ns.x", "1", false };
	struct ilab_profile p;
	char err[256];

	(void)state;
	assert_int_equal(apply(&nosec, 1, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the profile has no section 'nvme'"));
	assert_int_equal(apply(&section, 1, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a section, not a value"));
	assert_int_equal(apply(&below, 1, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'sync_ns' is a value, not a section"));
}

/* The override takes any text; the parser judges it as it would in a file. */
static void values_are_the_parsers(void **state)
{
	struct ilab_profile_override quoted = { "smmu.sync_ns", "900", true };
	struct ilab_profile_override zero = { "mmio.read_local_ns", "0", false };
	struct ilab_profile_override unknown = { "smmu.tlb_entries", "64", false };
	struct ilab_profile_override word = { "cache.contention", "home", false };
	struct ilab_profile p;
	char err[256];

	(void)state;
	assert_int_equal(apply(&quoted, 1, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "got the string '900'"));
	assert_int_equal(apply(&zero, 1, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a latency must be at least 1 ns"));
	assert_int_equal(apply(&unknown, 1, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown key 'tlb_entries'"));
	/* home contention without home_occupancy_ns: the parser's cross-key check */
	assert_int_equal(apply(&word, 1, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "home_occupancy_ns"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replaces_and_adds),
		cmocka_unit_test(bad_paths_are_errors),
		cmocka_unit_test(values_are_the_parsers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
