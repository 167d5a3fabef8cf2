/* atomic_file.c — write a file whole or not at all (see atomic_file.h): a temporary file
 * next to the final name, renamed over it when complete. Rename within one directory is
 * atomic on POSIX file systems, so a reader sees the old file or the new, never a part.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "util/errf.h"

int ilab_afile_tmpname(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	int dirlen = base ? (int)(base - path + 1) : 0;
	int fd;

	base = base ? base + 1 : path;
	if (!*base)
		return -EISDIR;
	/* hidden, so that a glob for the results (*.json) does not pick it up */
	if (snprintf(buf, len, "%.*s.%s.XXXXXX", dirlen, path, base) >= (int)len)
		return -ENAMETOOLONG;
	fd = mkstemp(buf);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int ilab_afile_open(struct ilab_afile *a, const char *path, char *err, size_t errlen)
{
	size_t len = strlen(path) + 16;
	char *tmp = malloc(len);
	mode_t mask;
	int ret;

	a->f = NULL;
	a->tmp = NULL; /* abort removes only a file this call created */
	a->path = strdup(path);
	ret = !a->path || !tmp ? -ENOMEM : ilab_afile_tmpname(path, tmp, len);
	if (ret) {
		free(tmp);
		goto fail;
	}
	a->tmp = tmp;
	/* mkstemp's 0600 would make results private; give what fopen would */
	mask = umask(0);
	umask(mask);
	if (chmod(a->tmp, 0666 & ~mask) != 0 || !(a->f = fopen(a->tmp, "w"))) {
		ret = -errno;
		goto fail;
	}
	return 0;
fail:
	ilab_errf(err, errlen, ret, "%s: %s", path, strerror(-ret));
	ilab_afile_abort(a);
	return ret;
}

int ilab_afile_commit(struct ilab_afile *a, char *err, size_t errlen)
{
	int ret = 0, saved = errno;

	/* A write that failed earlier left its bytes in the buffer: flushing again says why
	 * (EFBIG, ENOSPC). Otherwise errno is still the failed write's, else plain EIO. */
	if (ferror(a->f)) {
		clearerr(a->f);
		errno = 0;
		ret = fflush(a->f) != 0 && errno ? -errno : saved ? -saved : -EIO;
	}
	if (!ret && (fflush(a->f) != 0 || fsync(fileno(a->f)) != 0))
		ret = -errno;
	if (fclose(a->f) != 0 && !ret)
		ret = -errno;
	a->f = NULL;
	if (!ret && rename(a->tmp, a->path) != 0)
		ret = -errno;
	if (ret) {
		ilab_errf(err, errlen, ret, "%s: %s", a->path, strerror(-ret));
		ilab_afile_abort(a);
		return ret;
	}
	free(a->tmp);
	free(a->path);
	a->tmp = a->path = NULL;
	return 0;
}

void ilab_afile_abort(struct ilab_afile *a)
{
	if (a->f)
		fclose(a->f);
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	a->f = NULL;
	a->tmp = a->path = NULL;
}
