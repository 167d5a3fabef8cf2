/* atomic_file.c — write a file whole or not at all (see atomic_file.h): a temporary file
 * next to the final name, renamed over it when complete. Rename within one directory is
 * atomic on POSIX file systems, so a reader sees the old file or the new, never a part.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
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
	mode_t mask;
	int fd, ret = 0;

	base = base ? base + 1 : path;
	if (!*base)
		return -EISDIR;
	/* hidden, so that a glob for the results (*.json) does not pick it up */
	if (snprintf(buf, len, "%.*s.%s.XXXXXX", dirlen, path, base) >= (int)len)
		return -ENAMETOOLONG;
	fd = mkstemp(buf);
	if (fd < 0)
		return -errno;
	/* mkstemp's 0600 would make results private once renamed: give what fopen would */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0)
		ret = -errno;
	close(fd);
	if (ret)
		unlink(buf);
	return ret;
}

int ilab_afile_check(const char *path, char *err, size_t errlen)
{
	char probe[4096];
	struct stat st;
	int ret = 0;

	if (stat(path, &st) == 0) {
		/* rename would fail on a directory only after the run, and would replace a
		 * device or a FIFO (root may rename over /dev/null) */
		if (S_ISDIR(st.st_mode))
			ret = -EISDIR;
		else if (!S_ISREG(st.st_mode))
			return ilab_errf(err, errlen, -EINVAL, "%s: not a regular file", path);
	} else if (errno != ENOENT) {
		ret = -errno;
	}
	if (!ret)
		ret = ilab_afile_tmpname(path, probe, sizeof(probe));
	if (ret)
		return ilab_errf(err, errlen, ret, "%s: %s", path, strerror(-ret));
	unlink(probe);
	return 0;
}

int ilab_stream_close(FILE *f, bool sync)
{
	bool pending = __fpending(f) != 0;
	int ret = 0;

	/* A write that failed earlier left its bytes in the buffer: flushing again says why
	 * (EFBIG, ENOSPC); if that now succeeds, bytes were still lost: EIO. */
	if (ferror(f)) {
		clearerr(f);
		ret = fflush(f) != 0 ? -errno : -EIO;
		pending = true;
	}
	if (!ret && fflush(f) != 0)
		ret = -errno;
	if (!ret && sync && fsync(fileno(f)) != 0)
		ret = -errno;
	/* a closed stdout that nothing was written to is not an error (as coreutils) */
	if (fclose(f) != 0 && !ret && (pending || errno != EBADF))
		ret = -errno;
	return ret;
}

/* ---- temporaries removed when a signal ends the process ---------------------------------- */

#define LIVE_MAX 16 /* open at once: a trace, a result, a plot script */
static char *volatile live_tmp[LIVE_MAX];

static void live_add(char *tmp)
{
	for (unsigned i = 0; i < LIVE_MAX; i++)
		if (!live_tmp[i]) {
			live_tmp[i] = tmp;
			return;
		}
}

static void live_del(const char *tmp)
{
	for (unsigned i = 0; i < LIVE_MAX; i++)
		if (live_tmp[i] == tmp)
			live_tmp[i] = NULL;
}

/* TERM, INT and HUP held off between a temporary's creation and its tracking: a signal in
 * between would end the process with the file left behind (seen: a TERM just after the
 * trace's temporary appeared left it about one run in four). */
void ilab_afile_hold_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

void ilab_afile_release_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

void ilab_afile_track(char *tmp)
{
	live_add(tmp);
}

void ilab_afile_untrack(const char *tmp)
{
	live_del(tmp);
}

static void on_fatal(int sig)
{
	for (unsigned i = 0; i < LIVE_MAX; i++)
		if (live_tmp[i])
			unlink(live_tmp[i]);
	raise(sig); /* SA_RESETHAND: the default action, once this handler returns */
}

void ilab_afile_remove_on_signal(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa = { .sa_handler = on_fatal, .sa_flags = SA_RESETHAND }, old;

	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

int ilab_afile_open(struct ilab_afile *a, const char *path, char *err, size_t errlen)
{
	size_t len = strlen(path) + 16;
	char *tmp = malloc(len);
	sigset_t held;
	int ret;

	a->f = NULL;
	a->tmp = NULL; /* abort removes only a file this call created */
	a->path = strdup(path);
	ilab_afile_hold_signals(&held);
	ret = !a->path || !tmp ? -ENOMEM : ilab_afile_tmpname(path, tmp, len);
	if (ret) {
		ilab_afile_release_signals(&held);
		free(tmp);
		goto fail;
	}
	a->tmp = tmp;
	live_add(tmp);
	ilab_afile_release_signals(&held);
	if (!(a->f = fopen(a->tmp, "w"))) {
		ret = -errno;
		goto fail;
	}
	return 0;
fail:
	ilab_errf(err, errlen, ret, "%s: %s", path, strerror(-ret));
	ilab_afile_abort(a);
	return ret;
}

/* Why a write to our temporary file failed earlier. Bytes still buffered say it when flushed
 * again; glibc drops those of a large write, and its errno with them: then one more byte to
 * the file (ours, removed right after) meets the same full disk or size limit. */
static int earlier_error(FILE *f)
{
	clearerr(f);
	if (fflush(f) != 0)
		return -errno;
	return write(fileno(f), "\n", 1) < 0 ? -errno : -EIO;
}

int ilab_afile_commit(struct ilab_afile *a, char *err, size_t errlen)
{
	int ret;

	if (ferror(a->f)) {
		ret = earlier_error(a->f);
		fclose(a->f);
	} else {
		ret = ilab_stream_close(a->f, true);
	}
	a->f = NULL;
	if (!ret && rename(a->tmp, a->path) != 0)
		ret = -errno;
	if (ret) {
		ilab_errf(err, errlen, ret, "%s: %s", a->path, strerror(-ret));
		ilab_afile_abort(a);
		return ret;
	}
	live_del(a->tmp);
	free(a->tmp);
	free(a->path);
	a->tmp = a->path = NULL;
	return 0;
}

void ilab_afile_abort(struct ilab_afile *a)
{
	if (a->f)
		fclose(a->f);
	if (a->tmp) {
		unlink(a->tmp);
		live_del(a->tmp);
	}
	free(a->tmp);
	free(a->path);
	a->f = NULL;
	a->tmp = a->path = NULL;
}

/* ---- standard output ------------------------------------------------------------------------ */

static int stdout_errno; /* the first failed write's */

static ssize_t stdout_write(void *cookie, const char *buf, size_t n)
{
	size_t done = 0;

	(void)cookie;
	while (done < n) {
		ssize_t w = write(STDOUT_FILENO, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!stdout_errno)
				stdout_errno = w < 0 ? errno : EIO;
			return -1; /* stdio sets ferror */
		}
		done += (size_t)w;
	}
	return (ssize_t)n;
}

static int stdout_close(void *cookie)
{
	(void)cookie;
	return close(STDOUT_FILENO);
}

void ilab_stdout_checked(void)
{
	static const cookie_io_functions_t io = { .write = stdout_write, .close = stdout_close };
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return; /* then the plain stdout: its errors are still seen, as EIO */
	/* as glibc's own stdout: a line at a time on a terminal */
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	stdout = f;
}

int ilab_stdout_close(void)
{
	int ret = ilab_stream_close(stdout, false);

	return ret == -EIO && stdout_errno ? -stdout_errno : ret;
}
