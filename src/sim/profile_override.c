/* profile_override.c — a machine profile's YAML text with some of its values replaced
 * ("smmu.tlbi_sync_ns" = 900): the text is loaded, the scalars set (a key missing from an
 * existing section is added), and the document emitted again. It does not judge the values:
 * the caller parses the result with ilab_profile_parse, so an override passes exactly the
 * checks a profile file's value would (iommulab sweep's profile.* axes). Comments are lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "iommulab/sim.h"
#include "util/errf.h"
#include "util/yaml_util.h"

/* The pair of mapping node map_id whose key is name, or NULL. */
static yaml_node_pair_t *find_pair(yaml_document_t *doc, int map_id, const char *name)
{
	yaml_node_t *map = yaml_document_get_node(doc, map_id);

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = ilab_yaml_scalar(yaml_document_get_node(doc, p->key));

		if (k && !strcmp(k, name))
			return p;
	}
	return NULL;
}

/* Set key path (dot-separated) to value in doc. */
static int set_one(yaml_document_t *doc, const struct ilab_profile_override *o, char *err,
		   size_t errlen)
{
	char path[ILAB_PROFILE_OVERRIDE_KEY_MAX], *save = NULL, *name, *next, *prev = NULL;
	yaml_scalar_style_t style = o->quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
					      : YAML_PLAIN_SCALAR_STYLE;
	int map_id = 1; /* the root node */

	if (snprintf(path, sizeof(path), "%s", o->key) >= (int)sizeof(path) || !*path)
		return ilab_errf(err, errlen, -EINVAL, "profile key '%s': empty or too long", o->key);
	name = strtok_r(path, ".", &save);
	for (; name; name = next) {
		yaml_node_t *map = yaml_document_get_node(doc, map_id);
		yaml_node_pair_t *p;
		int id;

		next = strtok_r(NULL, ".", &save);
		if (!map || map->type != YAML_MAPPING_NODE)
			return ilab_errf(err, errlen, -EINVAL, "profile key '%s': '%s' is a value, "
					 "not a section", o->key, prev ? prev : "");
		p = find_pair(doc, map_id, name);
		if (next && !p)
			return ilab_errf(err, errlen, -EINVAL, "profile key '%s': the profile has "
					 "no section '%s'", o->key, name);
		if (next) {
			map_id = p->value;
			prev = name;
			continue;
		}
		if (p && yaml_document_get_node(doc, p->value)->type != YAML_SCALAR_NODE)
			return ilab_errf(err, errlen, -EINVAL, "profile key '%s': a section, not a "
					 "value", o->key);
		/* adding nodes may move the node array: ids, not pointers, across the calls */
		id = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)o->value, -1, style);
		if (!id)
			return -ENOMEM;
		p = find_pair(doc, map_id, name);
		if (p) {
			p->value = id; /* the old scalar is left unreferenced: not emitted */
			return 0;
		}
		int key = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)name, -1,
						   YAML_PLAIN_SCALAR_STYLE);

		if (!key || !yaml_document_append_mapping_pair(doc, map_id, key, id))
			return -ENOMEM;
		return 0;
	}
	return ilab_errf(err, errlen, -EINVAL, "profile key '%s': empty", o->key);
}

static int write_handler(void *data, unsigned char *buf, size_t size)
{
	return fwrite(buf, 1, size, data) == size;
}

int ilab_profile_override(const char *text, size_t len, const struct ilab_profile_override *o,
			  unsigned nr, char **out, size_t *outlen, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_emitter_t em;
	yaml_document_t doc;
	FILE *f;
	int ret = 0;

	*out = NULL;
	*outlen = 0;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_parser_delete(&parser);
		return ilab_errf(err, errlen, -EINVAL, "the profile is not valid YAML");
	}
	yaml_parser_delete(&parser);
	if (!yaml_document_get_root_node(&doc) ||
	    yaml_document_get_root_node(&doc)->type != YAML_MAPPING_NODE)
		ret = ilab_errf(err, errlen, -EINVAL, "the profile is not a mapping");
	for (unsigned i = 0; !ret && i < nr; i++)
		ret = set_one(&doc, &o[i], err, errlen);
	if (ret) {
		yaml_document_delete(&doc);
		return ret;
	}
	f = open_memstream(out, outlen);
	if (!f || !yaml_emitter_initialize(&em)) {
		if (f)
			fclose(f);
		yaml_document_delete(&doc);
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	yaml_emitter_set_output(&em, write_handler, f);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	/* yaml_emitter_dump deletes the document, whether it succeeds or not */
	if (!yaml_emitter_open(&em) || !yaml_emitter_dump(&em, &doc) || !yaml_emitter_close(&em))
		ret = ilab_errf(err, errlen, -EIO, "cannot write the profile: %s",
				em.problem ? em.problem : "emitter error");
	yaml_emitter_delete(&em);
	if (fclose(f) != 0 && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(*out);
		*out = NULL;
		*outlen = 0;
	}
	return ret;
}
