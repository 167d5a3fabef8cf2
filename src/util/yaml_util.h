/* yaml_util.h — the libyaml helpers the YAML parsers (scenario_parse.c, profile.c,
 * sweep_parse.c) use: a node's plain text, an error message positioned at a node, and the check
 * that a file holds one document. Header-only; not a parser (reading and loading a file:
 * yaml_file.h).
 */
#ifndef ILAB_UTIL_YAML_UTIL_H
#define ILAB_UTIL_YAML_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "util/errf.h"

/* The text of a scalar node, or NULL for a mapping, a list or no node. */
static inline const char *ilab_yaml_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value of key `name` in mapping `map`, or NULL (no such key, or map is not a mapping). */
static inline yaml_node_t *ilab_yaml_map_get(yaml_document_t *doc, yaml_node_t *map,
					     const char *name)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = ilab_yaml_scalar(yaml_document_get_node(doc, p->key));

		if (k && !strcmp(k, name))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/* A scalar written without quotes: what a number must be ("10" is the string 10 in YAML). */
static inline bool ilab_yaml_is_plain(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE &&
	       (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ||
		n->data.scalar.style == YAML_ANY_SCALAR_STYLE);
}

/* "file:line:column: message" at node `at` (1:1 without a node); returns -EINVAL. */
static inline int ilab_yaml_verrf(char *err, size_t errlen, const char *file,
				  const yaml_node_t *at, const char *fmt, va_list ap)
{
	return ilab_file_verrf(err, errlen, file, at ? at->start_mark.line + 1 : 1,
			       at ? at->start_mark.column + 1 : 1, fmt, ap);
}

/* Lists and mappings nested deeper than this are refused. Scenarios and profiles nest four
 * levels at most; libyaml's loader takes time quadratic in the depth (a 400 KB file of '['
 * would run for minutes), so the limit must hold before it builds anything. */
#define ILAB_YAML_MAX_DEPTH 64

/* Read text as a stream of events, without building a document, and refuse it with
 * "file:line:column: message" at the first list or mapping that opens level
 * ILAB_YAML_MAX_DEPTH + 1. Returns 0 when the nesting is within the limit, and also on a
 * syntax error: the loader that runs next reports that at its place. -ENOMEM when libyaml
 * runs out of memory. */
static inline int ilab_yaml_check_depth(const char *text, size_t len, const char *file,
					const char *what, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	unsigned depth = 0;
	int ret = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR)
				ret = -ENOMEM;
			break;
		}
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > ILAB_YAML_MAX_DEPTH) {
				if (err && errlen)
					snprintf(err, errlen, "%s:%zu:%zu: lists and mappings nested "
						 "more than %d deep: not a %s", file,
						 ev.start_mark.line + 1, ev.start_mark.column + 1,
						 ILAB_YAML_MAX_DEPTH, what);
				ret = -EINVAL;
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT ||
			   ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		if (ret || ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return ret;
}

/* After the first document: the rest of the stream must be empty. A second document (or
 * broken YAML after the first) would otherwise be ignored in silence. Returns 0, or -EINVAL
 * with "file:line:column: message" in err. */
static inline int ilab_yaml_expect_end(yaml_parser_t *parser, char *err, size_t errlen,
				       const char *file, const char *what)
{
	yaml_document_t next;
	yaml_node_t *root;
	int ret = 0;

	if (!yaml_parser_load(parser, &next)) {
		if (err && errlen)
			snprintf(err, errlen, "%s:%zu:%zu: YAML syntax error after the %s: %s", file,
				 parser->problem_mark.line + 1, parser->problem_mark.column + 1, what,
				 parser->problem ? parser->problem : "unreadable");
		return parser->error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
	}
	root = yaml_document_get_root_node(&next);
	if (root) {
		if (err && errlen)
			snprintf(err, errlen, "%s:%zu:%zu: a second YAML document: a %s file holds "
				 "one", file, root->start_mark.line + 1, root->start_mark.column + 1,
				 what);
		ret = -EINVAL;
	}
	yaml_document_delete(&next);
	return ret;
}

#endif
