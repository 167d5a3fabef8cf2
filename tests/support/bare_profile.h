/* bare_profile.h — a machine profile with the costs only: no nic: and no nvme: section, on a
 * test topology (hwloc XML with NICs, GPUs and SATA storage, no NVMe). Every shipped profile
 * runs every workload (tests/cli/profiles.sh), so the refusals of a machine that lacks a device
 * or a section are tested on this one. */
#ifndef ILAB_TEST_BARE_PROFILE_H
#define ILAB_TEST_BARE_PROFILE_H

#include <stddef.h>

/* The topology it names, for the messages that quote it. */
#define ILAB_TEST_BARE_TOPOLOGY "24em64t-2n6c2t-pci.xml"

/* Writes the profile (name "bare") to a new temporary file; its path goes to path (len bytes,
 * at least 64). Returns 0, or -1 with nothing written. The caller unlinks it. */
int ilab_test_bare_profile(char *path, size_t len);

#endif
