/* bare_profile.c — see bare_profile.h. */
#include "support/bare_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int ilab_test_bare_profile(char *path, size_t len)
{
	FILE *f;
	int fd;

	if (snprintf(path, len, "/tmp/ilab-bare-XXXXXX.yaml") >= (int)len)
		return -1;
	fd = mkstemps(path, 5);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	fprintf(f, "name: bare\n"
		   "topology: %s/topologies/" ILAB_TEST_BARE_TOPOLOGY "\n"
		   "memory: { local_ns: 100, line_stream_ns: 6 }\n"
		   "cache: { hit_ns: 2, atomic_local_ns: 8, transfer_local_ns: 50 }\n"
		   "mmio: { read_local_ns: 400, write_local_ns: 50 }\n"
		   "smmu: { command_ns: 30, sync_ns: 50, tlb_lookup_ns: 5 }\n", ILAB_TESTDATA);
	return fclose(f) ? (unlink(path), -1) : 0;
}
