/* board_stats.c — every modelled unit's statistics as JSON, each from its architecture
 * (iommu_arch.h stats_json), keyed by the unit's topology name. The result JSON of
 * `iommulab run` carries them under a case's stats.smmus (the key predates other
 * architectures). It only reads counters: the caller decides when (agents stopped or idle).
 */
#include <stdio.h>

#include <jansson.h>

#include "hw/board_internal.h"

struct json_t *ilab_board_iommu_json(struct ilab_board *b, unsigned i)
{
	struct board_unit *bu = board_unit_modelled(b, i);

	return bu ? bu->unit.arch->stats_json(&bu->unit, bu->iommu) : NULL;
}

struct json_t *ilab_board_iommus_json(struct ilab_board *b)
{
	json_t *o = json_object();
	char key[ILAB_TOPO_NAME_MAX + 16];

	for (unsigned i = 0; b && i < b->nr_units; i++) {
		json_t *s = ilab_board_iommu_json(b, i);

		if (!s)
			continue; /* not modelled (unit mask) */
		/* topology names are unique in practice; an index keeps a duplicate apart */
		if (json_object_get(o, b->units[i].name))
			snprintf(key, sizeof(key), "%s#%u", b->units[i].name, i);
		else
			snprintf(key, sizeof(key), "%s", b->units[i].name);
		json_object_set_new(o, key, s);
	}
	return o;
}
