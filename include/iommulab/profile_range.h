/* profile_range.h — the range of every numeric key of a machine profile (profiles/NAME.yaml):
 * the loader refuses a value outside it at file:line:column, so a typo (sync_ns: 1000000000000)
 * fails at load instead of every case failing at run time. docs/simulation.md ("Profile
 * ranges") lists the same table; a calibration's search bounds belong inside these.
 */
#ifndef IOMMULAB_PROFILE_RANGE_H
#define IOMMULAB_PROFILE_RANGE_H

#include <stdint.h>

struct ilab_profile_range {
	const char *key;   /* "smmu.sync_ns"; "compute.*" stands for every compute: name */
	uint64_t min, max; /* inclusive */
	const char *unit;  /* "ns", "MB/s", "commands" ... */
};

/* The table, in the order of the docs' table; *nr receives its length. */
const struct ilab_profile_range *ilab_profile_ranges(unsigned *nr);

/* The range of a dotted key ("smmu.sync_ns", "compute.iova_alloc_ns",
 * "memory.latency_by_distance" for that table's values), or NULL if the key is not numeric. */
const struct ilab_profile_range *ilab_profile_range_find(const char *key);

#endif /* IOMMULAB_PROFILE_RANGE_H */
