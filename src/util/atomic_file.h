/* atomic_file.h — the one output rule: a file is written whole or not at all. The bytes go to
 * a temporary file in the same directory, renamed over the final name only once every write,
 * the flush and the fsync have succeeded. On any failure the temporary file is removed and the
 * previous file (or none) is left as it was, never a truncated one. Files get 0666 less the
 * umask, as fopen would give. Used for every file iommulab writes (results, sweeps, plots,
 * traces); standard output is checked by the same ilab_stream_close.
 */
#ifndef ILAB_UTIL_ATOMIC_FILE_H
#define ILAB_UTIL_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>

struct ilab_afile {
	FILE *f;    /* write here */
	char *path; /* the final name */
	char *tmp;  /* "<dir>/.<name>.XXXXXX", created by ilab_afile_open */
};

/* Create the temporary file for path. Returns 0, or a negative errno with err =
 * "path: reason". */
int ilab_afile_open(struct ilab_afile *a, const char *path, char *err, size_t errlen);

/* Flush, fsync and close the temporary file, then rename it to the final name. Any error on
 * the way — including a write that failed earlier (ferror) — removes the temporary file and
 * returns a negative errno with err = "path: reason". a is released either way. */
int ilab_afile_commit(struct ilab_afile *a, char *err, size_t errlen);

/* Give up: close and remove the temporary file; the final name is left as it was. */
void ilab_afile_abort(struct ilab_afile *a);

/* A temporary name next to path that does not exist yet (created empty, mode 0666 less the
 * umask) for a file another program writes (gnuplot's PNG): "<dir>/.<name>.XXXXXX" in buf.
 * Returns 0 or a negative errno. */
int ilab_afile_tmpname(const char *path, char *buf, size_t len);

/* Can path be written by the rule above: it is not a directory (-EISDIR) nor another kind of
 * non-regular file (-EINVAL), and a file can be made in its folder. Checked before a command
 * runs anything, so that results are not computed for nowhere. 0, or a negative errno with
 * err = "path: reason". */
int ilab_afile_check(const char *path, char *err, size_t errlen);

/* Finish a stream: a write that failed earlier (ferror) is reported with its reason, then
 * the flush, the fsync when sync, and the close are checked. f is closed either way. Returns
 * 0 or a negative errno. For the temporary files above and for stdout at exit. */
int ilab_stream_close(FILE *f, bool sync);

/* A temporary file still open when TERM, INT or HUP ends the process (Ctrl-C during a long
 * --trace) is removed, then the signal takes its default action; a signal ignored at start
 * stays ignored. For the CLI's main, once. */
void ilab_afile_remove_on_signal(void);
/* Another temporary file (a sweep case's profile) removed the same way until untracked;
 * tmp must stay valid until then. */
void ilab_afile_track(char *tmp);
void ilab_afile_untrack(const char *tmp);
/* Hold TERM, INT and HUP off from a temporary's creation to its ilab_afile_track. */
void ilab_afile_hold_signals(sigset_t *old);
void ilab_afile_release_signals(const sigset_t *old);

/* Standard output under the same rule: stdout becomes a stream over fd 1 that remembers why
 * a write failed (glibc drops the bytes of a large failed write, and its errno with them), so
 * that ilab_stdout_close can name the reason (`--json > /dev/full`: "No space left on
 * device"). Call once, before anything is printed. */
void ilab_stdout_checked(void);
/* Flush and close stdout: 0, or the first failed write's negative errno. Nothing written to
 * a closed stdout is not an error. */
int ilab_stdout_close(void);

#endif
