/* test_profile_ranges.c — every numeric profile key's range (src/sim/profile_range.c) is
 * enforced when a profile is loaded: one past the maximum (and 0 below a minimum of 1) is
 * refused at the value's file:line:column, naming the key and its range; the maximum itself
 * loads. The docs' table (docs/simulation.md, "Profile ranges") is the C table, row for row.
 * Not the shipped profiles' values (test_sim_profile.c, tests/cli/profiles.sh).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>

#include "iommulab/profile_range.h"
#include "iommulab/sim.h"
#include "util/yaml_file.h"

/* The shipped profile a key is tried on: one that has its section. */
static const char *base_profile(const char *key)
{
	if (!strncmp(key, "vtd.", 4))
		return "icelake-2s-a100";
	if (!strcmp(key, "nic.payload_mbps") || !strncmp(key, "nic.at", 6))
		return "a100-2node"; /* the ATS model */
	return "kunpeng920";
}

/* The shipped profile's text into *text (malloc'd). */
static void load_text(const char *name, char **text, size_t *len)
{
	char path[ILAB_PROFILE_PATH_MAX], err[512];

	if (ilab_profile_resolve(name, path, sizeof(path), err, sizeof(err)) ||
	    ilab_yaml_read_file(path, 1u << 20, "too big", text, len, err, sizeof(err)))
		fail_msg("%s", err);
}

/* A key of the range the override can set: a compute: name for "compute.*", distance 16 of
 * a table (kunpeng920's memory and cache tables have it). NULL: tried by hand below. */
static const char *settable_key(const char *key, char *buf, size_t len)
{
	if (!strcmp(key, "compute.*"))
		return "compute.iova_alloc_ns";
	if (!strcmp(key, "mmio.read_by_distance") || !strcmp(key, "mmio.write_by_distance"))
		return NULL; /* kunpeng920 has no mmio tables */
	if (strstr(key, "_by_distance")) {
		snprintf(buf, len, "%s.16", key);
		return buf;
	}
	return key;
}

/* Parse base with key = value: 0, or the parser's error in err (the text in *out). */
static int try_value(const char *base, const char *key, uint64_t value, char **out, char *err,
		     size_t errlen)
{
	char v[32], *text = NULL, *btext = NULL;
	size_t blen, len;
	struct ilab_profile_override o = { key, v, false };
	static struct ilab_profile p;
	int ret;

	load_text(base, &btext, &blen);
	snprintf(v, sizeof(v), "%" PRIu64, value);
	ret = ilab_profile_override(btext, blen, &o, 1, &text, &len, err, errlen);
	free(btext);
	if (ret)
		fail_msg("override %s: %s", key, err);
	ret = ilab_profile_parse(text, len, "t.yaml", &p, err, errlen);
	*out = text;
	return ret;
}

/* err is "t.yaml:L:C: ..." and line L of text has value at column C. */
static void assert_at_value(const char *err, const char *text, uint64_t value)
{
	unsigned line, col;
	const char *l = text;
	char v[32];

	if (sscanf(err, "t.yaml:%u:%u:", &line, &col) != 2)
		fail_msg("no file:line:column in '%s'", err);
	for (unsigned i = 1; i < line && l; i++) {
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	snprintf(v, sizeof(v), "%" PRIu64, value);
	if (!l || strlen(l) < col || strncmp(l + col - 1, v, strlen(v)))
		fail_msg("'%s' does not point at the value %s", err, v);
}

/* Keys with a rule beyond their range: their maximum alone does not load. */
static bool max_needs_more(const char *key)
{
	return !strcmp(key, "smmu.cmdqv_vcmdqs") || !strcmp(key, "smmu.cmdqv_vintfs") ||
	       !strcmp(key, "nic.atc_ways");
}

static void every_range_is_checked_at_the_value(void **state)
{
	unsigned nr;
	const struct ilab_profile_range *r = ilab_profile_ranges(&nr);
	char buf[128], err[512], *text;
	unsigned tried = 0;

	(void)state;
	assert_true(nr > 40);
	for (unsigned i = 0; i < nr; i++) {
		const char *key = settable_key(r[i].key, buf, sizeof(buf));

		if (!key)
			continue;
		/* one past the maximum: refused at the value, naming the key's range */
		assert_int_equal(try_value(base_profile(r[i].key), key, r[i].max + 1, &text, err,
					   sizeof(err)), -EINVAL);
		assert_at_value(err, text, r[i].max + 1);
		free(text);
		if (!strstr(r[i].key, "cmdqv") && !strstr(r[i].key, "readahead")) {
			char want[160];

			snprintf(want, sizeof(want), ": %" PRIu64 " is out of range: %" PRIu64
				 "..%" PRIu64 " %s", r[i].max + 1, r[i].min, r[i].max, r[i].unit);
			if (!strstr(err, want) ||
			    !strstr(err, strcmp(r[i].key, "compute.*") ? r[i].key : "compute."))
				fail_msg("%s: '%s' does not say '%s'", key, err, want);
		}
		/* below a minimum of 1: refused too */
		if (r[i].min == 1) {
			assert_int_equal(try_value(base_profile(r[i].key), key, 0, &text, err,
						   sizeof(err)), -EINVAL);
			assert_at_value(err, text, 0);
			free(text);
		}
		/* the maximum loads */
		if (!max_needs_more(r[i].key)) {
			if (try_value(base_profile(r[i].key), key, r[i].max, &text, err, sizeof(err)))
				fail_msg("%s = %" PRIu64 " (its maximum) refused: %s", key, r[i].max,
					 err);
			free(text);
		}
		tried++;
	}
	assert_int_equal(tried, nr - 2);
}

/* The mmio tables, which no shipped profile has: an entry past the range is refused. */
static void mmio_tables_are_checked(void **state)
{
	static const char *const keys[] = { "read_by_distance", "write_by_distance" };
	static struct ilab_profile p;
	const struct ilab_profile_range *r = ilab_profile_range_find("mmio.read_by_distance");
	size_t blen, len;
	char *base = NULL, *text, err[512];
	const char *line = "\n  write_local_ns: 50\n";
	size_t at; /* the table goes after mmio.write_local_ns */

	(void)state;
	load_text("kunpeng920", &base, &blen);
	assert_non_null(r);
	assert_non_null(strstr(base, line));
	at = (size_t)(strstr(base, line) - base) + strlen(line);
	for (unsigned i = 0; i < 2; i++) {
		text = malloc(blen + 128);
		assert_non_null(text);
		len = (size_t)sprintf(text, "%.*s  %s: { 16: %" PRIu64 " }\n%s", (int)at, base,
				      keys[i], r->max + 1, base + at);
		assert_int_equal(ilab_profile_parse(text, len, "t.yaml", &p, err, sizeof(err)),
				 -EINVAL);
		assert_at_value(err, text, r->max + 1);
		assert_non_null(strstr(err, "is out of range"));
		free(text);
	}
	free(base);
}

/* "  key: 123   # comment": the key and the value (what scripts/sensitivity.py varies). */
static bool constant_line(const char *l, char *key, size_t keylen, long long *v)
{
	const char *p = l;
	size_t n = 0;
	char *end;

	if (*p != ' ')
		return false;
	while (*p == ' ')
		p++;
	while ((islower((unsigned char)p[n]) || p[n] == '_') && n + 1 < keylen)
		n++;
	if (!n || p[n] != ':')
		return false;
	memcpy(key, p, n);
	key[n] = '\0';
	p += n + 1;
	while (*p == ' ')
		p++;
	if (!(isdigit((unsigned char)*p) || *p == '-'))
		return false;
	*v = strtoll(p, &end, 10);
	while (*end == ' ')
		end++;
	return !*end || *end == '#';
}

/* Every numeric constant of every shipped profile has a range, and scripts/sensitivity.py's
 * x0.8 and x1.2 of it (rounded; +-1 when that changes nothing) are inside, but for the rules
 * that are not ranges: a power of two (cmdqv_*), and 0 rounded down from a latency of 1. */
static void shipped_profiles_and_their_variants_are_inside(void **state)
{
	char dir[ILAB_PROFILE_PATH_MAX], err[256], section[64] = "", key[64], full[160];
	struct dirent *de;
	unsigned seen = 0;
	DIR *d;

	(void)state;
	if (ilab_profile_dir(dir, sizeof(dir), err, sizeof(err)))
		fail_msg("%s", err);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		char *text = NULL, *save = NULL;
		size_t len;

		if (!strstr(de->d_name, ".yaml"))
			continue;
		*strstr(de->d_name, ".yaml") = '\0';
		load_text(de->d_name, &text, &len);
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			const struct ilab_profile_range *r;
			long long v;

			if (islower((unsigned char)l[0]) && strchr(l, ':')) {
				snprintf(section, sizeof(section), "%.*s", (int)(strchr(l, ':') - l), l);
				continue;
			}
			if (!constant_line(l, key, sizeof(key), &v))
				continue;
			snprintf(full, sizeof(full), "%s.%s", section, key);
			r = ilab_profile_range_find(full);
			if (!r)
				fail_msg("%s: %s has no range", de->d_name, full);
			for (int sign = -1; sign <= 1; sign += 2) {
				long long x = llround((double)v * (1 + sign * 0.2));

				if (x == v)
					x = v + sign;
				if (x < 0 || strstr(full, "cmdqv") || (x == 0 && r->min == 1))
					continue;
				if ((uint64_t)x < r->min || (uint64_t)x > r->max)
					fail_msg("%s: %s = %lld (x%.1f of %lld) is outside %" PRIu64
						 "..%" PRIu64, de->d_name, full, x, 1 + sign * 0.2, v,
						 r->min, r->max);
			}
			seen++;
		}
		free(text);
	}
	closedir(d);
	assert_true(seen > 200); /* five profiles of ~50 constants */
}

/* A key outside the table has no range; a compute name has compute.*'s. */
static void find_knows_its_keys(void **state)
{
	(void)state;
	assert_non_null(ilab_profile_range_find("smmu.sync_ns"));
	assert_int_equal(ilab_profile_range_find("smmu.sync_ns")->max, 1000000);
	assert_string_equal(ilab_profile_range_find("compute.thread_wake_ns")->key, "compute.*");
	assert_null(ilab_profile_range_find("smmu.nosuch"));
	assert_null(ilab_profile_range_find("name"));
	assert_null(ilab_profile_range_find("computex.a"));
}

/* docs/simulation.md's table is the C table, row for row. */
static void docs_table_is_the_c_table(void **state)
{
	unsigned nr, rows = 0;
	const struct ilab_profile_range *r = ilab_profile_ranges(&nr);
	char *doc, err[256], row[256];
	size_t len;

	(void)state;
	if (ilab_yaml_read_file(ILAB_TESTDATA "/../../docs/simulation.md", 1u << 22, "too big",
				&doc, &len, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < nr; i++) {
		snprintf(row, sizeof(row), "\n| `%s` | %" PRIu64 " | %" PRIu64 " | %s |\n", r[i].key,
			 r[i].min, r[i].max, r[i].unit);
		if (!strstr(doc, row))
			fail_msg("docs/simulation.md has no row%s", row);
	}
	/* no other row in the section */
	const char *sec = strstr(doc, "### Profile ranges"), *end = sec ? strstr(sec, "\n#") : NULL;

	assert_non_null(sec);
	for (const char *p = sec; (p = strstr(p, "\n| `")) && (!end || p < end); p++)
		rows++;
	free(doc);
	assert_int_equal(rows, nr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_range_is_checked_at_the_value),
		cmocka_unit_test(mmio_tables_are_checked),
		cmocka_unit_test(find_knows_its_keys),
		cmocka_unit_test(shipped_profiles_and_their_variants_are_inside),
		cmocka_unit_test(docs_table_is_the_c_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
