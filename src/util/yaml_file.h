/* yaml_file.h — the two steps every YAML file of iommulab goes through before its own parser
 * sees it (scenarios, machine profiles, sweeps): read the whole file into memory, and load its
 * one document with libyaml, a failure of either as a one-line message in the caller's buffer.
 */
#ifndef ILAB_UTIL_YAML_FILE_H
#define ILAB_UTIL_YAML_FILE_H

#include <stddef.h>
#include <yaml.h>

/* Read the file at path into a malloc'd, NUL-terminated buffer (*text, *len without the NUL;
 * the caller frees it). A file of more than max bytes is refused with "path: too_big", so that
 * /dev/zero is not read until memory runs out. Every failure writes "path: ..." into err and
 * returns -errno of fopen, -ENOMEM, -EIO (read error) or -EFBIG; *text is then NULL. */
int ilab_yaml_read_file(const char *path, size_t max, const char *too_big, char **text,
			size_t *len, char *err, size_t errlen);

/* How a syntax error is worded after its "file:line:column: ". Two forms because the
 * messages the tests and users already know differ: scenarios and sweeps say
 * "YAML syntax error: <problem>", profiles "<problem> <context>". */
enum ilab_yaml_error_form {
	/* "YAML syntax error: did not find expected ',' or '}'" */
	ILAB_YAML_ERROR_SYNTAX,
	/* "did not find expected ',' or '}' while parsing a flow mapping" */
	ILAB_YAML_ERROR_PROBLEM_CONTEXT,
};

/* The failure of yaml_parser_load as "file:line:column: message" in err, at the problem's
 * place (or at its context's when libyaml gives the problem none). Returns -ENOMEM when libyaml
 * ran out of memory, -EINVAL otherwise. */
int ilab_yaml_error(const yaml_parser_t *parser, const char *file,
		    enum ilab_yaml_error_form form, char *err, size_t errlen);

/* Load the first document of text into *doc and check that nothing follows it
 * (ilab_yaml_expect_end; what: "scenario", "profile", ... for its message). On success the
 * caller owns *doc (yaml_document_delete); on failure nothing is left to free. Returns 0,
 * -ENOMEM, or -EINVAL with "file:line:column: message" in err. */
int ilab_yaml_load(const char *text, size_t len, const char *file, const char *what,
		   enum ilab_yaml_error_form form, yaml_document_t *doc, char *err,
		   size_t errlen);

#endif
