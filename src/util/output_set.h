/* output_set.h — the files one command reads and the files it will write, gathered before it
 * runs anything, so that an output is never written over one of its inputs nor over another
 * output of the same run (`sweep heat.yaml -o heat.yaml`, `run --trace R/seed000-cmdsync.json
 * --out R`). Two names are one file when they are the same inode (stat: dev and ino, so
 * symbolic and hard links are caught) or, for outputs that do not exist yet, the same name in
 * the same folder (its realpath). Not the writing itself (atomic_file.h).
 */
#ifndef ILAB_UTIL_OUTPUT_SET_H
#define ILAB_UTIL_OUTPUT_SET_H

#include <stdbool.h>
#include <stddef.h>

struct ilab_output_set {
	struct ilab_output_file *v;
	size_t n, cap;
};

#define ILAB_OUTPUT_SET_INIT { NULL, 0, 0 }

/* An input: what says what it is ("the sweep file"). A name that is not an existing file (a
 * profile given by name) is skipped. Returns 0 or -ENOMEM. */
int ilab_output_set_input(struct ilab_output_set *s, const char *path, const char *what);

/* An output (what: "--trace", "the result file"): it must be writable (ilab_afile_check) and
 * none of the inputs or outputs given so far. Returns 0, or a negative errno with err naming
 * both files (-EEXIST when it is one of them). */
int ilab_output_set_output(struct ilab_output_set *s, const char *path, const char *what,
			   char *err, size_t errlen);

void ilab_output_set_free(struct ilab_output_set *s);

#endif
