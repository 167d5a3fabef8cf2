/* yaml_util.h — the two libyaml helpers both YAML parsers (scenario_parse.c, profile.c) use:
 * a node's plain text, and an error message positioned at a node. Header-only; not a parser.
 */
#ifndef ILAB_UTIL_YAML_UTIL_H
#define ILAB_UTIL_YAML_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <yaml.h>

#include "util/errf.h"

/* The text of a scalar node, or NULL for a mapping, a list or no node. */
static inline const char *ilab_yaml_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* "file:line:column: message" at node `at` (1:1 without a node); returns -EINVAL. */
static inline int ilab_yaml_verrf(char *err, size_t errlen, const char *file,
				  const yaml_node_t *at, const char *fmt, va_list ap)
{
	return ilab_file_verrf(err, errlen, file, at ? at->start_mark.line + 1 : 1,
			       at ? at->start_mark.column + 1 : 1, fmt, ap);
}

#endif
