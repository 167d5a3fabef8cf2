/* fuzz_scenario.c — libFuzzer target for the two YAML parsers users feed files to: the scenario
 * parser (first input byte even) and the machine-profile parser (odd). Any input must give 0 or
 * a negative errno with a "name:line:column: message" or "name: message" error — never a crash,
 * an assert or a leak (ASan). When a scenario parses, its effects must point at valid cases.
 * Not a test. Seeds: fuzz/corpus/scenario (the shipped scenarios and profiles). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/scenario.h"
#include "iommulab/sim.h"

static void check_error(const char *err, const char *name)
{
	/* every failure names its source first */
	if (strncmp(err, name, strlen(name)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	bool profile;

	if (size < 1)
		return 0;
	profile = data[0] & 1;
	data++, size--;
	err[0] = '\0';
	if (profile) {
		struct ilab_profile p;

		if (ilab_profile_parse((const char *)data, size, "f.yaml", &p, err, sizeof(err)))
			check_error(err, "f.yaml");
	} else {
		struct ilab_scenario *s = NULL;

		if (ilab_scenario_parse((const char *)data, size, "f.yaml", &s, err, sizeof(err))) {
			check_error(err, "f.yaml");
			if (s)
				abort(); /* a failed parse returns nothing */
			return 0;
		}
		for (unsigned i = 0; i < s->nr_effects; i++) {
			const struct ilab_effect *e = &s->effects[i];

			if (e->from >= s->nr_cases || e->to >= s->nr_cases ||
			    e->from_ref >= s->cases[e->from].nr_refs ||
			    e->to_ref >= s->cases[e->to].nr_refs)
				abort();
		}
		ilab_scenario_free(s);
	}
	return 0;
}
