/* board_smmuv3_stats.c — the statistics of an SMMUv3 unit as JSON (iommu_arch.h stats_json): its
 * caches (entries, lookups, hits, evictions, invalidations, hit rate), its command queues
 * (what the model consumed, by opcode), the model's translation and event counters, and what
 * the driver instance issued. `iommulab bench --json` prints one SMMU's object; the result
 * JSON of `iommulab run` carries every SMMU's under a case's stats.smmus.
 * It only reads counters: the caller decides when (after a run, with the agents stopped or
 * idle, so that the model's and the driver's opcode tables agree). */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>

#include "hw/board_smmuv3.h"

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *ppm(uint64_t part, uint64_t whole)
{
	return jint(whole ? part * 1000000 / whole : 0);
}

/* One cache of the model: its counters and the hit rate in parts per million. */
static json_t *cache_json(struct smmu *m, enum smmu_cache_id id)
{
	struct smmu_cache_stats cs;

	if (smmu_get_cache_stats(m, id, &cs))
		return json_null();
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "capacity", jint(cs.capacity),
			 "lookups", jint(cs.lookups), "hits", jint(cs.hits), "misses",
			 jint(cs.misses), "fills", jint(cs.fills), "evictions", jint(cs.evictions),
			 "invalidations", jint(cs.invalidations), "hit_rate_ppm",
			 ppm(cs.hits, cs.lookups));
}

static json_t *caches_json(struct smmu *m)
{
	static const char *const names[SMMU_CACHE_COUNT] = { "ste", "cd", "tlb", "walk_l0",
							     "walk_l1", "walk_l2" };
	json_t *o = json_object();

	for (unsigned i = 0; i < SMMU_CACHE_COUNT; i++)
		json_object_set_new(o, names[i], cache_json(m, (enum smmu_cache_id)i));
	return o;
}

static json_t *opcodes_json(const uint64_t *by_opcode)
{
	json_t *o = json_object();
	char k[8];

	for (unsigned i = 0; i < 256; i++)
		if (by_opcode[i]) {
			snprintf(k, sizeof(k), "0x%02x", i);
			json_object_set_new(o, k, jint(by_opcode[i]));
		}
	return o;
}

static json_t *queue_json(const struct smmu_queue_stats *qs)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "commands", jint(qs->commands),
			 "by_opcode", opcodes_json(qs->by_opcode), "syncs_msi",
			 jint(qs->syncs_msi), "syncs_sev", jint(qs->syncs_sev), "syncs_irq",
			 jint(qs->syncs_irq), "cerror_ill", jint(qs->cerror_ill), "cerror_abt",
			 jint(qs->cerror_abt));
}

/* SMMU_CMDQ as "cmdq"; the ECMDQs (if the model has any) summed in "ecmdqs" (Tegra241
 * VCMDQs in "vcmdqs"), with how many
 * of them consumed at least one command. One scratch buffer: the stats are 2 KiB each. */
static void queues_json(json_t *o, struct smmu *m)
{
	struct smmu_queue_stats *qs = calloc(2, sizeof(*qs)), *sum = qs + 1;
	unsigned n = smmu_cmdq_count(m), used = 0;

	if (!qs)
		return;
	if (!smmu_get_cmdq_stats(m, 0, qs))
		json_object_set_new(o, "cmdq", queue_json(qs));
	for (unsigned q = 1; q < n; q++) {
		if (smmu_get_cmdq_stats(m, q, qs))
			continue;
		used += qs->commands != 0;
		sum->commands += qs->commands;
		for (unsigned i = 0; i < 256; i++)
			sum->by_opcode[i] += qs->by_opcode[i];
		sum->cerror_ill += qs->cerror_ill;
		sum->cerror_abt += qs->cerror_abt;
		sum->syncs_msi += qs->syncs_msi;
		sum->syncs_sev += qs->syncs_sev;
		sum->syncs_irq += qs->syncs_irq;
	}
	if (n > 1) {
		json_t *e = queue_json(sum);

		json_object_set_new(e, "queues", jint(n - 1));
		json_object_set_new(e, "queues_used", jint(used));
		json_object_set_new(o, smmu_cmdqv_offset(m) ? "vcmdqs" : "ecmdqs", e);
	}
	free(qs);
}

static json_t *model_json(struct smmu *m)
{
	struct smmu_stats ms;

	smmu_get_stats(m, &ms);
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "translations",
			 jint(ms.translations), "tlb_hit_translations",
			 jint(ms.tlb_hit_translations), "tlb_hit_rate_ppm",
			 ppm(ms.tlb_hit_translations, ms.translations), "bypassed",
			 jint(ms.bypassed), "faults", jint(ms.faults), "msi_writes",
			 jint(ms.msi_writes), "events_written", jint(ms.events_written),
			 "events_lost", jint(ms.events_lost), "gerrors", jint(ms.gerrors),
			 "ats_requests", jint(ms.ats_requests), "ats_refused",
			 jint(ms.ats_refused), "atc_invs", jint(ms.atc_invs));
}

/* The main queue's lock (docs/smmuv3-driver.md: its two versions). */
static json_t *lock_json(struct ilab_iommu *iommu)
{
	struct ilab_smmu_drv_queue_stats qs;

	if (ilab_smmu_drv_get_queue_stats(iommu, 0, &qs))
		return json_object();
	return json_pack("{s:o,s:o,s:o,s:o}", "exclusive", jint(qs.lock_exclusive), "shared_waits",
			 jint(qs.lock_shared_waits), "shared_wait_ns",
			 jint(qs.lock_shared_wait_ns), "shared_wait_max_ns",
			 jint(qs.lock_shared_wait_max_ns));
}

static json_t *driver_json(struct ilab_iommu *iommu)
{
	struct ilab_smmu_drv_stats *ds = calloc(1, sizeof(*ds));
	json_t *o = NULL;

	if (ds && !ilab_smmu_drv_get_stats(iommu, ds))
		o = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "cmds", jint(ds->cmds),
			      "issues", jint(ds->issues), "batches", jint(ds->batches), "syncs",
			      jint(ds->syncs), "sync_wait_ns", jint(ds->sync_wait_ns),
			      "cmpxchg_retries", jint(ds->cmpxchg_retries), "queue_full_waits",
			      jint(ds->queue_full_waits), "by_opcode",
			      opcodes_json(ds->by_opcode));
	if (o)
		json_object_set_new(o, "cmdq_lock", lock_json(iommu));
	free(ds);
	return o;
}

/* One SMMU's object (docs/result-schema.md): node, caches, command queues, model counters,
 * and the driver's when probed. */
struct json_t *board_smmuv3_stats_json(struct ilab_iommu_unit *u, struct ilab_iommu *drv)
{
	struct board_smmuv3 *bs = u->model;
	struct smmu *m = bs->smmu;
	json_t *o, *d;

	o = json_object();
	json_object_set_new(o, "node", json_integer(u->node));
	json_object_set_new(o, "caches", caches_json(m));
	queues_json(o, m);
	json_object_set_new(o, "model", model_json(m));
	d = drv ? driver_json(drv) : NULL;
	if (d)
		json_object_set_new(o, "driver", d);
	return o;
}
