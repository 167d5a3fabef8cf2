/* output_set.c — an output is never an input or another output of the same run (see
 * output_set.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/atomic_file.h"
#include "util/errf.h"
#include "util/output_set.h"

struct ilab_output_file {
	char *path, *what;
	char *canon;  /* realpath of its folder + "/" + its name; NULL when the folder is not */
	bool exists;  /* then dev and ino say which file it is */
	bool output;
	dev_t dev;
	ino_t ino;
};

/* "<realpath of the folder>/<name>": the same for every spelling of one name, whether the
 * file exists or not (an output usually does not yet). */
static char *canonical(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], *real, *out = NULL;

	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path == 0 ? 1 : slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	real = realpath(dir, NULL);
	if (real && asprintf(&out, "%s/%s", real, slash ? slash + 1 : path) < 0)
		out = NULL;
	free(real);
	return out;
}

static bool same_file(const struct ilab_output_file *a, const struct ilab_output_file *b)
{
	if (a->exists && b->exists && a->dev == b->dev && a->ino == b->ino)
		return true;
	return a->canon && b->canon && !strcmp(a->canon, b->canon);
}

static int add(struct ilab_output_set *s, const char *path, const char *what, bool output,
	       struct ilab_output_file **out)
{
	struct ilab_output_file *f;
	struct stat st;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		void *v = realloc(s->v, cap * sizeof(*s->v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	f = &s->v[s->n];
	memset(f, 0, sizeof(*f));
	f->exists = stat(path, &st) == 0;
	if (f->exists) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
	}
	f->output = output;
	f->path = strdup(path);
	f->what = strdup(what);
	f->canon = canonical(path);
	if (!f->path || !f->what) {
		free(f->path);
		free(f->what);
		free(f->canon);
		return -ENOMEM;
	}
	s->n++;
	*out = f;
	return 0;
}

int ilab_output_set_input(struct ilab_output_set *s, const char *path, const char *what)
{
	struct ilab_output_file *f;
	struct stat st;

	/* a name that is no file (a built-in profile's name) cannot be overwritten */
	if (!path || !*path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	return add(s, path, what, false, &f);
}

int ilab_output_set_output(struct ilab_output_set *s, const char *path, const char *what,
			   char *err, size_t errlen)
{
	struct ilab_output_file *f;
	int ret = ilab_afile_check(path, err, errlen);

	if (ret)
		return ret;
	ret = add(s, path, what, true, &f);
	if (ret)
		return ilab_errf(err, errlen, ret, "%s: %s", path, strerror(-ret));
	for (size_t i = 0; i + 1 < s->n; i++) {
		const struct ilab_output_file *o = &s->v[i];

		if (!same_file(o, f))
			continue;
		if (o->output)
			return ilab_errf(err, errlen, -EEXIST, "%s %s is also %s %s of this run: "
					 "one would overwrite the other", what, path, o->what,
					 o->path);
		return ilab_errf(err, errlen, -EEXIST, "%s %s is %s %s: an output is never "
				 "written over an input", what, path, o->what, o->path);
	}
	return 0;
}

void ilab_output_set_free(struct ilab_output_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].what);
		free(s->v[i].canon);
	}
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
