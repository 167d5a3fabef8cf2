/* atomic_file.h — write a file whole or not at all: the bytes go to a temporary file in the
 * same directory, renamed over the final name only once every write, the flush and the fsync
 * have succeeded. On any failure the temporary file is removed, so a full disk or a size limit
 * leaves the previous file (or none), never a truncated one. Used for every results file.
 */
#ifndef ILAB_UTIL_ATOMIC_FILE_H
#define ILAB_UTIL_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

struct ilab_afile {
	FILE *f;    /* write here */
	char *path; /* the final name */
	char *tmp;  /* "<dir>/.<name>.XXXXXX", created by ilab_afile_open */
};

/* Create the temporary file for path (mode 0666 less the umask, as fopen would). Returns 0,
 * or a negative errno with err = "path: reason". */
int ilab_afile_open(struct ilab_afile *a, const char *path, char *err, size_t errlen);

/* Flush, fsync and close the temporary file, then rename it to the final name. Any error on
 * the way — including a write that failed earlier (ferror) — removes the temporary file and
 * returns a negative errno with err = "path: reason". a is released either way. */
int ilab_afile_commit(struct ilab_afile *a, char *err, size_t errlen);

/* Give up: close and remove the temporary file; the final name is left as it was. */
void ilab_afile_abort(struct ilab_afile *a);

/* A temporary name next to path that does not exist yet (created empty, mode 0600) for a
 * file another program writes: "<dir>/.<name>.XXXXXX" in buf. Returns 0 or a negative errno. */
int ilab_afile_tmpname(const char *path, char *buf, size_t len);

#endif
