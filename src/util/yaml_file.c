/* yaml_file.c — read a YAML file whole and load its one document (see yaml_file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/errf.h"
#include "util/yaml_file.h"
#include "util/yaml_util.h"

/* The first buffer; doubled as the file turns out longer. Our YAML files are a few KiB. */
#define YAML_FILE_CHUNK 8192

int ilab_yaml_read_file(const char *path, size_t max, const char *too_big, char **text,
			size_t *len, char *err, size_t errlen)
{
	size_t n = 0, cap = 0;
	char *buf = NULL;
	struct stat st;
	FILE *f;
	int ret = 0;

	*text = NULL;
	f = fopen(path, "rb");
	if (!f)
		return ilab_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
	/* fopen opens a directory for reading; only the first read fails (EISDIR) */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return ilab_errf(err, errlen, -EISDIR, "%s: %s", path, strerror(EISDIR));
	}
	/* read until EOF or one byte past max: that byte tells a file of max bytes from a
	 * longer one */
	while (!ret && n <= max) {
		size_t got;

		if (n + 1 >= cap) { /* room for one more byte and the NUL */
			size_t ncap = cap ? cap * 2 : YAML_FILE_CHUNK;
			char *nb;

			if (ncap > max + 2)
				ncap = max + 2; /* max bytes, the byte past them, the NUL */
			nb = realloc(buf, ncap);
			if (!nb) {
				ret = ilab_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
				break;
			}
			buf = nb;
			cap = ncap;
		}
		got = fread(buf + n, 1, cap - 1 - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (!ret && ferror(f))
		ret = ilab_errf(err, errlen, -EIO, "%s: read error: %s", path, strerror(errno));
	else if (!ret && n > max)
		ret = ilab_errf(err, errlen, -EFBIG, "%s: %s", path, too_big);
	fclose(f);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

int ilab_yaml_error(const yaml_parser_t *parser, const char *file,
		    enum ilab_yaml_error_form form, char *err, size_t errlen)
{
	/* libyaml leaves problem_mark at 0:0 when it has no place for the problem */
	const yaml_mark_t *m = parser->problem_mark.line || parser->problem_mark.column
				       ? &parser->problem_mark
				       : &parser->context_mark;
	int ret = parser->error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;

	if (form == ILAB_YAML_ERROR_SYNTAX)
		return ilab_errf(err, errlen, ret, "%s:%zu:%zu: YAML syntax error: %s", file,
				 m->line + 1, m->column + 1,
				 parser->problem ? parser->problem : "unreadable");
	return ilab_errf(err, errlen, ret, "%s:%zu:%zu: %s%s%s", file, m->line + 1,
			 m->column + 1, parser->problem ? parser->problem : "malformed YAML",
			 parser->context ? " " : "", parser->context ? parser->context : "");
}

int ilab_yaml_load(const char *text, size_t len, const char *file, const char *what,
		   enum ilab_yaml_error_form form, yaml_document_t *doc, char *err,
		   size_t errlen)
{
	yaml_parser_t parser;
	int ret;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, doc)) {
		ret = ilab_yaml_error(&parser, file, form, err, errlen);
		yaml_parser_delete(&parser);
		return ret;
	}
	ret = ilab_yaml_expect_end(&parser, err, errlen, file, what);
	yaml_parser_delete(&parser);
	if (ret)
		yaml_document_delete(doc);
	return ret;
}
