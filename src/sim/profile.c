/* profile.c — loads a machine profile (YAML, see profiles/kunpeng920.yaml) into struct
 * ilab_profile, strictly: unknown keys, duplicates, missing keys and non-integer costs are
 * errors reported as "file:line:column: message". It also defines the distance formulas.
 * It is not the topology loader (src/topo) and holds no cost logic beyond the formulas.
 *
 * Parsed with libyaml's document API, whose nodes keep their source position.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "iommulab/iommu_arch.h"
#include "iommulab/profile_range.h"
#include "iommulab/sim.h"
#include "util/yaml_file.h"
#include "util/yaml_util.h"

#ifndef ILAB_SRCDIR
#define ILAB_SRCDIR "."
#endif
#ifndef ILAB_DATADIR
#define ILAB_DATADIR "/usr/local/share/iommulab"
#endif

/* Costs above this are certainly typos (about 11.5 days). */
#define PROFILE_NS_MAX 1000000000000000ull

struct pctx {
	yaml_document_t *doc;
	const char *file;
	const char *section; /* of the key being parsed: its range is "section.key" */
	char *err;
	size_t errlen;
};

static int perr(struct pctx *c, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct pctx *c, const yaml_node_t *at, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = ilab_yaml_verrf(c->err, c->errlen, c->file, at, fmt, ap);
	va_end(ap);
	return ret;
}

/* A non-negative integer, up to PROFILE_NS_MAX: the syntax only (a SLIT distance, or a value
 * whose range get_u64 then checks). */
static int get_u64_raw(struct pctx *c, const yaml_node_t *n, const char *key, uint64_t *out)
{
	const char *v = ilab_yaml_scalar(n);
	uint64_t x = 0;

	if (!v || !*v)
		return perr(c, n, "%s: expected a non-negative integer (ns)", key);
	if (!ilab_yaml_is_plain(n)) /* as in scenarios: a quoted value is a string */
		return perr(c, n, "%s: expected a non-negative integer (ns), got the string '%s'",
			    key, v);
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			return perr(c, n, "%s: expected a non-negative integer (ns), got '%s'",
				    key, v);
		x = x * 10 + (uint64_t)(*p - '0');
		if (x > PROFILE_NS_MAX)
			return perr(c, n, "%s: value %s is out of range", key, v);
	}
	*out = x;
	return 0;
}

/* A value in the range of its key (profile_range.c): out of it is a load error at the value,
 * not a run that fails (or crawls) later. */
static int check_range(struct pctx *c, const yaml_node_t *n, const char *key, uint64_t x)
{
	const struct ilab_profile_range *r;
	char full[96];

	snprintf(full, sizeof(full), "%s.%s", c->section ? c->section : "", key);
	r = ilab_profile_range_find(full);
	if (r && (x < r->min || x > r->max))
		return perr(c, n, "%s: %" PRIu64 " is out of range: %" PRIu64 "..%" PRIu64 " %s "
			    "(docs/simulation.md, \"Profile ranges\")", full, x, r->min, r->max,
			    r->unit);
	return 0;
}

static int get_u64(struct pctx *c, const yaml_node_t *n, const char *key, uint64_t *out)
{
	int rc = get_u64_raw(c, n, key, out);

	return rc ? rc : check_range(c, n, key, *out);
}

static int get_str(struct pctx *c, const yaml_node_t *n, const char *key, char *out, size_t sz)
{
	const char *v = ilab_yaml_scalar(n);

	if (!v)
		return perr(c, n, "%s: expected a string", key);
	if (strlen(v) >= sz)
		return perr(c, n, "%s: longer than %zu characters", key, sz - 1);
	snprintf(out, sz, "%s", v);
	return 0;
}

/* One key of a mapping section. */
struct field {
	const char *key;
	bool required;
	int (*parse)(struct pctx *c, const yaml_node_t *v, const char *key, void *dst);
	void *dst;
	bool seen;
};

static int parse_u64(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return get_u64(c, v, key, dst);
}

/* A latency (as opposed to an extra cost such as sync_ns): 0 ns lets a simulated loop run
 * without virtual time advancing, and a timed run (bench -s) then never ends. */
static int get_latency(struct pctx *c, const yaml_node_t *n, const char *key, uint64_t *out)
{
	int rc = get_u64_raw(c, n, key, out);

	if (!rc && *out == 0)
		return perr(c, n, "%s: a latency must be at least 1 ns", key);
	return rc ? rc : check_range(c, n, key, *out);
}

static int parse_latency(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return get_latency(c, v, key, dst);
}

/* A hardware unit's number of servers (TLBIs in flight, page walkers, request slots): a count
 * from 1 (its range, profile_range.c); the key left out means no limit. */
static int parse_pool(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return get_u64(c, v, key, dst);
}

static int parse_table(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_dist_cost *t = dst;

	if (v->type != YAML_MAPPING_NODE)
		return perr(c, v, "%s: expected a mapping 'distance: ns'", key);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *val = yaml_document_get_node(c->doc, p->value);
		uint64_t d = 0, ns = 0; /* set by get_u64 and get_latency on success */
		int rc;

		rc = get_u64_raw(c, k, key, &d);
		if (rc)
			return rc;
		if (d < 10 || d > 255)
			return perr(c, k, "%s: distance %" PRIu64 " is not a SLIT value (10..255)",
				    key, d);
		for (unsigned i = 0; i < t->nr; i++)
			if (t->distance[i] == d)
				return perr(c, k, "%s: distance %" PRIu64 " listed twice", key, d);
		if (t->nr == ILAB_PROFILE_MAX_DIST)
			return perr(c, k, "%s: more than %d distances", key, ILAB_PROFILE_MAX_DIST);
		rc = get_latency(c, val, key, &ns);
		if (rc)
			return rc;
		t->distance[t->nr] = (unsigned)d;
		t->ns[t->nr] = ns;
		t->nr++;
	}
	return 0;
}

static int parse_fields_in(struct pctx *c, const yaml_node_t *map, const char *section,
			   struct field *f, unsigned nf);

/* The keys of section, with c->section naming it while they are parsed. */
static int parse_fields(struct pctx *c, const yaml_node_t *map, const char *section,
			struct field *f, unsigned nf)
{
	const char *outer = c->section;
	int rc;

	c->section = section;
	rc = parse_fields_in(c, map, section, f, nf);
	c->section = outer;
	return rc;
}

static int parse_fields_in(struct pctx *c, const yaml_node_t *map, const char *section,
			   struct field *f, unsigned nf)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return perr(c, map, "%s: expected a mapping", section);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *name = ilab_yaml_scalar(k);
		unsigned i;
		int rc;

		if (!name)
			return perr(c, k, "%s: keys must be plain words", section);
		for (i = 0; i < nf; i++)
			if (!strcmp(f[i].key, name))
				break;
		if (i == nf)
			return perr(c, k, "%s: unknown key '%s'", section, name);
		if (f[i].seen)
			return perr(c, k, "%s: key '%s' given twice", section, name);
		f[i].seen = true;
		rc = f[i].parse(c, v, name, f[i].dst);
		if (rc)
			return rc;
	}
	for (unsigned i = 0; i < nf; i++)
		if (f[i].required && !f[i].seen)
			return perr(c, map, "%s: missing key '%s'", section, f[i].key);
	return 0;
}

static int parse_memory(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile *p = dst;
	struct field f[] = {
		{ "local_ns", true, parse_latency, &p->mem.local_ns, false },
		{ "line_stream_ns", true, parse_u64, &p->mem_line_ns, false },
		{ "latency_by_distance", false, parse_table, &p->mem, false },
	};

	return parse_fields(c, v, key, f, sizeof(f) / sizeof(f[0]));
}

/* A word out of a fixed list into an int: the word's index in `words`. */
static int parse_word(struct pctx *c, const yaml_node_t *v, const char *key, int *out,
		      const char *const *words, unsigned n, const char *expect)
{
	const char *t = ilab_yaml_scalar(v);

	for (unsigned i = 0; t && i < n; i++)
		if (!strcmp(t, words[i])) {
			*out = (int)i;
			return 0;
		}
	return perr(c, v, "%s: expected %s, got '%s'", key, expect, t ? t : "");
}

/* cache.contention: flat | home (ILAB_CONTENTION_*, in that order) */
static int parse_contention(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	static const char *const w[] = { "flat", "home" };

	return parse_word(c, v, key, dst, w, 2, "flat or home");
}

/* cache.atomics: lse_near | lse_far | llsc | lse_unique_near (ILAB_ATOMICS_*, in that order) */
static int parse_atomics(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	static const char *const w[] = { "lse_near", "lse_far", "llsc", "lse_unique_near" };

	return parse_word(c, v, key, dst, w, 4, "lse_far, lse_near, lse_unique_near or llsc");
}

static int parse_cache(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile *p = dst;
	struct field f[] = {
		{ "hit_ns", true, parse_latency, &p->cache_hit_ns, false },
		{ "atomic_local_ns", true, parse_latency, &p->atomic_local_ns, false },
		{ "transfer_local_ns", true, parse_latency, &p->transfer.local_ns, false },
		{ "transfer_by_distance", false, parse_table, &p->transfer, false },
		{ "llc_local_ns", false, parse_latency, &p->llc_local_ns, false },
		{ "line_hit_stream_ns", false, parse_u64, &p->line_hit_stream_ns, false },
		{ "retry_hold_ns", false, parse_u64, &p->retry_hold_ns, false },
		{ "contention", false, parse_contention, &p->cache_contention, false },
		{ "atomics", false, parse_atomics, &p->cache_atomics, false },
		{ "home_occupancy_ns", false, parse_u64, &p->home_occupancy_ns, false },
	};

	return parse_fields(c, v, key, f, sizeof(f) / sizeof(f[0]));
}

static int parse_mmio(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile *p = dst;
	struct field f[] = {
		{ "read_local_ns", true, parse_latency, &p->mmio_read.local_ns, false },
		{ "write_local_ns", true, parse_latency, &p->mmio_write.local_ns, false },
		{ "read_by_distance", false, parse_table, &p->mmio_read, false },
		{ "write_by_distance", false, parse_table, &p->mmio_write, false },
	};

	return parse_fields(c, v, key, f, sizeof(f) / sizeof(f[0]));
}

/* yes/no, true/false, on/off, 1/0 into an int (-1 until given) */
static int parse_bool(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	const char *t = ilab_yaml_scalar(v);
	int *out = dst;

	if (t && (!strcmp(t, "true") || !strcmp(t, "yes") || !strcmp(t, "on") || !strcmp(t, "1")))
		*out = 1;
	else if (t && (!strcmp(t, "false") || !strcmp(t, "no") || !strcmp(t, "off") ||
		       !strcmp(t, "0")))
		*out = 0;
	else
		return perr(c, v, "%s: expected true or false", key);
	return 0;
}

/* The largest command queue has 2^19 entries (IDR1.CMDQS is at most 19, IHI 0070 §6.3.2):
 * a read-ahead beyond it means nothing. */
#define PROFILE_READAHEAD_MAX (1u << 19)

/* smmu.cmd_readahead_entries: a count of 16-byte commands, 1 (one per read) .. 2^19. */
static int parse_readahead(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	const char *t = ilab_yaml_scalar(v);
	uint64_t *out = dst, x = 0;

	if (!t || !*t || !ilab_yaml_is_plain(v))
		return perr(c, v, "%s: expected a number of commands (1..%u)", key,
			    PROFILE_READAHEAD_MAX);
	for (const char *p = t; *p; p++) {
		if (*p < '0' || *p > '9' || x > PROFILE_READAHEAD_MAX)
			return perr(c, v, "%s: expected a number of commands (1..%u), got '%s'",
				    key, PROFILE_READAHEAD_MAX, t);
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (x < 1 || x > PROFILE_READAHEAD_MAX)
		return perr(c, v, "%s: expected a number of commands (1..%u), got '%s'", key,
			    PROFILE_READAHEAD_MAX, t);
	*out = x;
	return 0;
}

/* smmu.cmdqv_vcmdqs (1..128) and cmdqv_vintfs (1..64): powers of two, as the PARAM
 * register's log2 fields give them. */
static int parse_pow2(struct pctx *c, const yaml_node_t *v, const char *key, void *dst,
		      uint64_t max)
{
	const char *t = ilab_yaml_scalar(v);
	uint64_t *out = dst, x = 0;

	for (const char *p = t; t && *p && x <= max; p++)
		x = *p >= '0' && *p <= '9' ? x * 10 + (uint64_t)(*p - '0') : max + 1;
	if (!t || !*t || !ilab_yaml_is_plain(v) || !x || x > max || (x & (x - 1)))
		return perr(c, v, "%s: expected a power of two from 1 to %llu, got '%s'", key,
			    (unsigned long long)max, t ? t : "");
	*out = x;
	return 0;
}

static int parse_vcmdqs(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return parse_pow2(c, v, key, dst, 128);
}

static int parse_vintfs(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return parse_pow2(c, v, key, dst, 64);
}

static int parse_smmu(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile *p = dst;
	struct field f[] = {
		{ "command_ns", true, parse_u64, &p->smmu_command_ns, false },
		{ "sync_ns", true, parse_u64, &p->smmu_sync_ns, false },
		{ "tlbi_sync_ns", false, parse_u64, &p->smmu_tlbi_sync_ns, false },
		{ "tlbi_ns", false, parse_u64, &p->smmu_tlbi_ns, false },
		/* at least 1: 0 stands for "not given" (a scan then costs tlbi_ns) */
		{ "tlbi_scan_ns", false, parse_latency, &p->smmu_tlbi_scan_ns, false },
		{ "tlbi_entry_ns", false, parse_u64, &p->smmu_tlbi_entry_ns, false },
		{ "tlb_lookup_ns", true, parse_u64, &p->smmu_tlb_lookup_ns, false },
		{ "range_invalidation", false, parse_bool, &p->smmu_ril, false },
		{ "cmd_readahead_entries", false, parse_readahead, &p->smmu_cmd_readahead, false },
		{ "sync_waits_all_queues", false, parse_bool, &p->smmu_sync_all_queues, false },
		{ "invalidations_in_flight", false, parse_pool, &p->smmu_inv_in_flight, false },
		{ "cmdqv_vcmdqs", false, parse_vcmdqs, &p->smmu_cmdqv_vcmdqs, false },
		{ "cmdqv_vintfs", false, parse_vintfs, &p->smmu_cmdqv_vintfs, false },
	};
	int rc = parse_fields(c, v, key, f, sizeof(f) / sizeof(f[0]));

	if (!rc && !p->smmu_cmdqv_vcmdqs != !p->smmu_cmdqv_vintfs)
		return perr(c, v, "%s: cmdqv_vcmdqs and cmdqv_vintfs go together", key);
	if (!rc && p->smmu_cmdqv_vintfs > p->smmu_cmdqv_vcmdqs)
		return perr(c, v, "%s: cmdqv_vintfs (%llu) exceeds cmdqv_vcmdqs (%llu): every VINTF "
			    "needs a VCMDQ", key, (unsigned long long)p->smmu_cmdqv_vintfs,
			    (unsigned long long)p->smmu_cmdqv_vcmdqs);
	return rc;
}

/* vtd: what a VT-d unit's work costs beyond its memory accesses (board_vtd.c reads each). */
static int parse_vtd(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile *p = dst;
	struct field f[] = {
		{ "desc_ns", true, parse_u64, &p->vtd_desc_ns, false },
		{ "wait_ns", false, parse_u64, &p->vtd_wait_ns, false },
		{ "iotlb_lookup_ns", true, parse_u64, &p->vtd_iotlb_lookup_ns, false },
		{ "walk_ns", true, parse_u64, &p->vtd_walk_ns, false },
		{ "walkers", false, parse_pool, &p->vtd_walkers, false },
		{ "entry_read_fetches", false, parse_pool, &p->vtd_entry_read_fetches, false },
		{ "outstanding_requests", false, parse_pool, &p->vtd_outstanding, false },
		{ "iotlb_entries", false, parse_pool, &p->vtd_iotlb_entries, false },
		{ "iotlb_ways", false, parse_pool, &p->vtd_iotlb_ways, false },
		{ "pml4e_cache_entries", false, parse_pool, &p->vtd_pml4e_entries, false },
		{ "pdpe_cache_entries", false, parse_pool, &p->vtd_pdpe_entries, false },
		{ "pde_cache_entries", false, parse_pool, &p->vtd_pde_entries, false },
	};

	return parse_fields(c, v, key, f, sizeof(f) / sizeof(f[0]));
}

/* The compute: names something reads: the driver and core charges (plat_charge, named in
 * ops.c). Any other name is a typo or a constant nothing reads: an error, not a silent zero
 * (a misspelt iova_alloc_ns would have charged nothing). */
static bool compute_name_known(const char *name)
{
	for (unsigned i = 0; i < PLAT_CHARGE_NR; i++)
		if (!strcmp(name, ilab_sim_charge_name((enum plat_charge)i)))
			return true;
	return false;
}

/* "a, b, c" of every known compute name, for the error message. */
static void compute_names(char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < PLAT_CHARGE_NR && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "",
				      ilab_sim_charge_name((enum plat_charge)i));
}

/* Device constants that compute: held before the nic: section existed: a profile written
 * then is told where they went. */
static const char *const moved_to_nic[][2] = {
	{ "nic_link_mbps", "payload_mbps" },
	{ "pcie_ats_round_trip_ns", "ats_round_trip_ns" },
	{ "nic_ats_outstanding", "ats_outstanding" },
	{ "nic_atc_entries", "atc_entries" },
	{ "nic_atc_ways", "atc_ways" },
};

static const char *moved_name(const char *name)
{
	for (size_t i = 0; i < sizeof(moved_to_nic) / sizeof(moved_to_nic[0]); i++)
		if (!strcmp(name, moved_to_nic[i][0]))
			return moved_to_nic[i][1];
	return NULL;
}

/* compute: "name: ns" pairs of known names (above), looked up by name at run time. */
static int parse_compute(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile *p = dst;

	if (v->type != YAML_MAPPING_NODE)
		return perr(c, v, "%s: expected a mapping 'name: ns'", key);
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
		yaml_node_t *val = yaml_document_get_node(c->doc, pr->value);
		const char *name = ilab_yaml_scalar(k);
		struct ilab_compute_cost *cc;
		int rc;

		if (!name || !*name)
			return perr(c, k, "%s: keys must be plain words", key);
		if (moved_name(name))
			return perr(c, k, "%s: '%s' is a property of the NIC: nic: %s", key, name,
				    moved_name(name));
		if (!compute_name_known(name)) {
			char known[400];

			compute_names(known, sizeof(known));
			return perr(c, k, "%s: unknown constant '%s' (known: %s)", key, name, known);
		}
		for (unsigned i = 0; i < p->nr_compute; i++)
			if (!strcmp(p->compute[i].name, name))
				return perr(c, k, "%s: key '%s' given twice", key, name);
		if (p->nr_compute == ILAB_PROFILE_MAX_COMPUTE)
			return perr(c, k, "%s: more than %d entries", key, ILAB_PROFILE_MAX_COMPUTE);
		cc = &p->compute[p->nr_compute];
		rc = get_str(c, k, key, cc->name, sizeof(cc->name));
		if (!rc) {
			const char *outer = c->section;

			c->section = "compute"; /* the range of "compute.*" */
			rc = get_u64(c, val, name, &cc->ns);
			c->section = outer;
		}
		if (rc)
			return rc;
		p->nr_compute++;
	}
	return 0;
}

/* name and topology: required, so an empty value is as good as missing */
static int get_word(struct pctx *c, const yaml_node_t *v, const char *key, char *out, size_t sz)
{
	const char *t = ilab_yaml_scalar(v);

	if (t && !*t)
		return perr(c, v, "%s: must not be empty", key);
	return get_str(c, v, key, out, sz);
}

static int parse_name(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return get_word(c, v, key, dst, ILAB_PROFILE_NAME_MAX);
}

static int parse_path(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return get_word(c, v, key, dst, ILAB_PROFILE_PATH_MAX);
}

static int parse_ignored(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	return ilab_yaml_scalar(v) ? 0 : perr(c, v, "%s: expected a string", key);
}

/* A count or a rate of the nic: section: 0 would be no device at all, so absent is the way to
 * say "not modelled". */
static int parse_positive(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	int rc = get_u64_raw(c, v, key, dst);

	if (!rc && *(uint64_t *)dst == 0)
		return perr(c, v, "%s: must be at least 1 (leave it out if the NIC has none)", key);
	return rc ? rc : check_range(c, v, key, *(uint64_t *)dst);
}

/* Each model that reads the section needs all of its keys: a partial set is a load error here,
 * not a zero that the run would take for "infinitely fast". */
static int check_nic(struct pctx *c, const yaml_node_t *v, const char *key,
		     const struct ilab_profile_nic *n)
{
	bool rx = n->rx_buffer_ns || n->rx_copy_mbps || n->rx_completions_kps;
	bool ats = n->payload_mbps || n->ats_round_trip_ns || n->ats_outstanding ||
		   n->atc_entries || n->atc_ways;

	bool np = n->tx_skb_ns || n->tx_clean_ns || n->irq_ns || n->nic_tx_ns || n->nic_rx_ns ||
		  n->wire_ns;

	if (np && (!n->tx_skb_ns || !n->tx_clean_ns || !n->irq_ns || !n->nic_tx_ns ||
		   !n->nic_rx_ns || !n->wire_ns))
		return perr(c, v, "%s: the netperf path needs tx_skb_ns, tx_clean_ns, irq_ns, "
			    "nic_tx_ns, nic_rx_ns and wire_ns", key);
	if (np && !rx)
		return perr(c, v, "%s: the netperf path needs the receive stack too (rx_buffer_ns, "
			    "rx_copy_mbps)", key);
	if (rx && (!n->rx_buffer_ns || !n->rx_copy_mbps))
		return perr(c, v, "%s: the receive stack needs both rx_buffer_ns and rx_copy_mbps",
			    key);
	if (rx && !n->link_gbps && !n->rx_completions_kps)
		return perr(c, v, "%s: the NIC needs a line rate (link_gbps) or a completion rate "
			    "(rx_completions_kps)", key);
	if (ats && (!n->payload_mbps || !n->ats_round_trip_ns || !n->ats_outstanding ||
		    !n->atc_entries || !n->atc_ways))
		return perr(c, v, "%s: the ATS model needs payload_mbps, ats_round_trip_ns, "
			    "ats_outstanding, atc_entries and atc_ways", key);
	/* each key's own range (the device models' limits) is checked as it is read */
	if (n->atc_ways > n->atc_entries)
		return perr(c, v, "%s: atc_ways %llu exceeds atc_entries %llu (a set-associative "
			    "cache has at most as many ways as entries)", key,
			    (unsigned long long)n->atc_ways, (unsigned long long)n->atc_entries);
	return 0;
}

static int parse_nic(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile_nic *n = &((struct ilab_profile *)dst)->nic;
	struct field f[] = {
		{ "model", false, parse_ignored, NULL, false },
		{ "link_gbps", false, parse_positive, &n->link_gbps, false },
		{ "rx_completions_kps", false, parse_positive, &n->rx_completions_kps, false },
		{ "rx_buffer_ns", false, parse_positive, &n->rx_buffer_ns, false },
		{ "rx_copy_mbps", false, parse_positive, &n->rx_copy_mbps, false },
		{ "payload_mbps", false, parse_positive, &n->payload_mbps, false },
		{ "ats_round_trip_ns", false, parse_positive, &n->ats_round_trip_ns, false },
		{ "ats_outstanding", false, parse_positive, &n->ats_outstanding, false },
		{ "atc_entries", false, parse_positive, &n->atc_entries, false },
		{ "atc_ways", false, parse_positive, &n->atc_ways, false },
		{ "tx_skb_ns", false, parse_positive, &n->tx_skb_ns, false },
		{ "tx_clean_ns", false, parse_positive, &n->tx_clean_ns, false },
		{ "irq_ns", false, parse_positive, &n->irq_ns, false },
		{ "nic_tx_ns", false, parse_positive, &n->nic_tx_ns, false },
		{ "nic_rx_ns", false, parse_positive, &n->nic_rx_ns, false },
		{ "wire_ns", false, parse_positive, &n->wire_ns, false },
		{ "queues", false, parse_positive, &n->queues, false },
	};
	int rc = parse_fields(c, v, key, f, sizeof(f) / sizeof(f[0]));

	return rc ? rc : check_nic(c, v, key, n);
}

static int parse_nvme_positive(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	int rc = get_u64_raw(c, v, key, dst);

	if (!rc && *(uint64_t *)dst == 0)
		return perr(c, v, "%s: must be at least 1", key);
	return rc ? rc : check_range(c, v, key, *(uint64_t *)dst);
}

/* nvme: every key but model and the trim pair (trim jobs are refused without them): a missing one is an error
 * here, not a zero the run would take for an infinitely fast drive or a free stack. The rates
 * are bounded so that the model's picosecond arithmetic never overflows. */
static int parse_nvme(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	struct ilab_profile_nvme *n = &((struct ilab_profile *)dst)->nvme;
	struct field f[] = {
		{ "model", false, parse_ignored, NULL, false },
		{ "read_latency_ns", true, parse_nvme_positive, &n->read_latency_ns, false },
		{ "write_latency_ns", true, parse_nvme_positive, &n->write_latency_ns, false },
		{ "read_iops", true, parse_nvme_positive, &n->read_iops, false },
		{ "write_iops", true, parse_nvme_positive, &n->write_iops, false },
		{ "trim_latency_ns", false, parse_nvme_positive, &n->trim_latency_ns, false },
		{ "trim_iops", false, parse_nvme_positive, &n->trim_iops, false },
		{ "read_mbps", true, parse_nvme_positive, &n->read_mbps, false },
		{ "write_mbps", true, parse_nvme_positive, &n->write_mbps, false },
		{ "submit_ns", true, parse_u64, &n->submit_ns, false },
		{ "complete_ns", true, parse_u64, &n->complete_ns, false },
		{ "irq_ns", true, parse_u64, &n->irq_ns, false },
	};
	/* each value's range (the drive model's picosecond arithmetic) is checked as it is read */
	return parse_fields(c, v, key, f, sizeof(f) / sizeof(f[0]));
}

_Static_assert(sizeof(((struct ilab_profile *)0)->iommu_arch) == ILAB_IOMMU_ARCH_NAME_MAX,
	       "profile iommu_arch holds any registered architecture name");

/* iommu: an architecture the board can build (the registry, src/hw/iommu_arch.c) */
static int parse_iommu_arch(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	const char *t = ilab_yaml_scalar(v);
	char names[64];

	if (!t || !ilab_iommu_arch_find(t))
		return perr(c, v, "%s: expected %s, got '%s'", key,
			    ilab_iommu_arch_names(names, sizeof(names), " or "), t ? t : "");
	snprintf(dst, ILAB_IOMMU_ARCH_NAME_MAX, "%s", t);
	return 0;
}

/* free: the constants `iommulab calibrate` may fit, with their bounds (docs/calibration.md).
 * Nothing the simulation reads: its contents are checked by calibrate (src/calibrate/free.c). */
static int parse_free(struct pctx *c, const yaml_node_t *v, const char *key, void *dst)
{
	(void)dst;
	return v->type == YAML_MAPPING_NODE ? 0 : perr(c, v, "%s: expected a mapping "
						       "'section: { key: { min: N, max: N } }'",
						       key);
}

static bool field_seen(const struct field *f, unsigned nf, const char *key)
{
	for (unsigned i = 0; i < nf; i++)
		if (!strcmp(f[i].key, key))
			return f[i].seen;
	return false;
}

static int parse_root(struct pctx *c, struct ilab_profile *p)
{
	yaml_node_t *root = yaml_document_get_root_node(c->doc);
	struct field f[] = {
		{ "name", true, parse_name, p->name, false },
		{ "description", false, parse_ignored, NULL, false },
		{ "topology", true, parse_path, p->topology, false },
		{ "iommu", false, parse_iommu_arch, p->iommu_arch, false },
		{ "memory", true, parse_memory, p, false },
		{ "cache", true, parse_cache, p, false },
		{ "mmio", true, parse_mmio, p, false },
		{ "smmu", false, parse_smmu, p, false },
		{ "vtd", false, parse_vtd, p, false },
		{ "compute", false, parse_compute, p, false },
		{ "nic", false, parse_nic, p, false },
		{ "nvme", false, parse_nvme, p, false },
		{ "free", false, parse_free, NULL, false },
	};
	const unsigned nf = sizeof(f) / sizeof(f[0]);
	int rc;

	if (!root)
		return perr(c, NULL, "empty profile");
	rc = parse_fields(c, root, "profile", f, nf);
	if (rc)
		return rc;
	/* The section of the machine's architecture is required (its costs are never a silent
	 * zero); the other one may be there too, for a what-if run on the other architecture. */
	if (!strcmp(p->iommu_arch, "smmuv3") && !field_seen(f, nf, "smmu"))
		return perr(c, root, "profile: missing key 'smmu'");
	if (!strcmp(p->iommu_arch, "vtd") && !field_seen(f, nf, "vtd"))
		return perr(c, root, "profile: missing key 'vtd' (the costs of iommu: vtd)");
	return 0;
}

int ilab_profile_parse(const char *text, size_t len, const char *name, struct ilab_profile *prof,
		       char *err, size_t errlen)
{
	yaml_document_t doc;
	struct pctx c = { .doc = &doc, .file = name ? name : "<profile>", .err = err,
			  .errlen = errlen };
	struct ilab_profile p;
	int rc;

	if (!text || !prof)
		return -EINVAL;
	if (err && errlen)
		err[0] = '\0';
	memset(&p, 0, sizeof(p));
	p.llc_local_ns = p.line_hit_stream_ns = p.retry_hold_ns = UINT64_MAX; /* not given */
	p.smmu_ril = -1;
	snprintf(p.iommu_arch, sizeof(p.iommu_arch), "smmuv3");
	p.home_occupancy_ns = UINT64_MAX; /* not given */
	rc = ilab_yaml_check_depth(text, len, c.file, "machine profile", err, errlen);
	if (rc)
		return rc;
	rc = ilab_yaml_load(text, len, c.file, "profile", ILAB_YAML_ERROR_PROBLEM_CONTEXT, &doc,
			    err, errlen);
	if (rc)
		return rc;
	rc = parse_root(&c, &p);
	yaml_document_delete(&doc);
	if (rc)
		return rc;
	/* defaults of the optional cache keys (see iommulab/sim.h) */
	if (p.llc_local_ns == UINT64_MAX)
		p.llc_local_ns = p.transfer.local_ns;
	if (p.line_hit_stream_ns == UINT64_MAX)
		p.line_hit_stream_ns = 1;
	if (p.retry_hold_ns == UINT64_MAX)
		p.retry_hold_ns = p.atomic_local_ns;
	if (p.home_occupancy_ns == UINT64_MAX) {
		/* the home model has no physics without it: no silent default */
		if (p.cache_contention == ILAB_CONTENTION_HOME) {
			if (err && errlen)
				snprintf(err, errlen, "%s: cache.contention: home needs "
					 "cache.home_occupancy_ns", c.file);
			return -EINVAL;
		}
		p.home_occupancy_ns = 0;
	}
	if (!p.smmu_cmd_readahead)
		p.smmu_cmd_readahead = ILAB_PROFILE_READAHEAD_DEFAULT;
	snprintf(p.source, sizeof(p.source), "%s", c.file);
	*prof = p;
	return 0;
}

/* A machine profile is a page or two of YAML: anything past this is not one (and /dev/zero
 * would otherwise be read until memory runs out). */
#define PROFILE_MAX_BYTES (1u << 20)

int ilab_profile_load(const char *path, struct ilab_profile *prof, char *err, size_t errlen)
{
	struct stat st;
	char *text;
	size_t len;
	int rc;

	if (!path || !prof)
		return -EINVAL;
	/* a FIFO would block, a device never end, a directory fail obscurely */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: not a machine profile (%s)", path,
				 S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		return -EINVAL;
	}
	rc = ilab_yaml_read_file(path, PROFILE_MAX_BYTES,
				 "larger than 1 MiB: not a machine profile", &text, &len, err,
				 errlen);
	if (rc)
		return rc;
	rc = ilab_profile_parse(text, len, path, prof, err, errlen);
	free(text);
	return rc;
}

uint64_t ilab_profile_compute_ns(const struct ilab_profile *prof, const char *name, uint64_t dflt)
{
	if (!prof || !name)
		return dflt;
	for (unsigned i = 0; i < prof->nr_compute; i++)
		if (!strcmp(prof->compute[i].name, name))
			return prof->compute[i].ns;
	return dflt;
}

/* Table entry for d; distance 10 falls back to local_ns. */
static int table_ns(const struct ilab_dist_cost *t, unsigned d, uint64_t *ns)
{
	for (unsigned i = 0; i < t->nr; i++)
		if (t->distance[i] == d) {
			*ns = t->ns[i];
			return 0;
		}
	if (d == 10) {
		*ns = t->local_ns;
		return 0;
	}
	return -ENOENT;
}

/* mem(d): a table, or local * d / 10 — ACPI defines SLIT entries as memory latency relative
 * to the local node's, which is 10. Rounded to the nearest ns. */
static int mem_ns(const struct ilab_profile *p, unsigned d, uint64_t *ns)
{
	if (p->mem.nr)
		return table_ns(&p->mem, d, ns);
	*ns = (p->mem.local_ns * d + 5) / 10;
	return 0;
}

int ilab_profile_dist_ns(const struct ilab_profile *p, enum ilab_dist_kind kind, unsigned d,
			 uint64_t *ns)
{
	const struct ilab_dist_cost *t;
	uint64_t m, m10, extra;
	int rc;

	if (!p || !ns)
		return -EINVAL;
	switch (kind) {
	case ILAB_DIST_MEM:
		return mem_ns(p, d, ns);
	case ILAB_DIST_TRANSFER:
		t = &p->transfer;
		break;
	case ILAB_DIST_MMIO_READ:
		t = &p->mmio_read;
		break;
	case ILAB_DIST_MMIO_WRITE:
		t = &p->mmio_write;
		break;
	default:
		return -EINVAL;
	}
	if (t->nr)
		return table_ns(t, d, ns);
	/* Formula: the local cost plus the interconnect's extra round trip at distance d, which
	 * is what remote memory costs beyond local memory: mem(d) - mem(10). */
	rc = mem_ns(p, d, &m);
	if (!rc)
		rc = mem_ns(p, 10, &m10);
	if (rc)
		return rc;
	extra = m > m10 ? m - m10 : 0;
	if (kind == ILAB_DIST_MMIO_WRITE)
		extra /= 2; /* posted: one way only */
	*ns = t->local_ns + extra;
	return 0;
}

/* ---- finding a profile by name ---------------------------------------------------------- */

static bool path_is(const char *p, bool dir)
{
	struct stat st;

	return stat(p, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* The same search order as the built-in scenarios (ilab_scenario_dir in src/experiments):
 * $IOMMULAB_DATADIR (an explicit override, not second-guessed), the source tree, the install
 * prefix. */
int ilab_profile_dir(char *buf, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("IOMMULAB_DATADIR");

	if (env && *env) {
		snprintf(buf, len, "%s/profiles", env);
		if (path_is(buf, true))
			return 0;
		if (err && errlen)
			snprintf(err, errlen, "IOMMULAB_DATADIR=%s: no profiles/ directory there", env);
		return -ENOENT;
	}
	snprintf(buf, len, "%s/profiles", ILAB_SRCDIR);
	if (path_is(buf, true))
		return 0;
	snprintf(buf, len, "%s/profiles", ILAB_DATADIR);
	if (path_is(buf, true))
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "no machine profiles: looked in %s/profiles and %s/profiles "
			 "(set IOMMULAB_DATADIR)", ILAB_SRCDIR, ILAB_DATADIR);
	return -ENOENT;
}

int ilab_profile_resolve(const char *what, char *path, size_t len, char *err, size_t errlen)
{
	char dir[ILAB_PROFILE_PATH_MAX];
	int rc;

	if (!path || !len)
		return -EINVAL;
	if (!what || !*what)
		return ilab_errf(err, errlen, -EINVAL, "empty machine profile name");
	/* A path (or an existing file) is taken as is; a bare name is looked up. */
	if (strchr(what, '/') || path_is(what, false)) {
		snprintf(path, len, "%s", what);
		return 0;
	}
	rc = ilab_profile_dir(dir, sizeof(dir), err, errlen);
	if (rc)
		return rc;
	if ((size_t)snprintf(path, len, "%s/%s.yaml", dir, what) >= len)
		return ilab_errf(err, errlen, -ENAMETOOLONG, "machine profile name too long: '%s'",
				 what);
	if (path_is(path, false))
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "no machine profile '%s' (no %s)", what, path);
	return -ENOENT;
}

int ilab_profile_open(const char *what, struct ilab_profile *prof, char *err, size_t errlen)
{
	char path[ILAB_PROFILE_PATH_MAX];
	int rc = ilab_profile_resolve(what, path, sizeof(path), err, errlen);

	return rc ? rc : ilab_profile_load(path, prof, err, errlen);
}
