/* sim.c — creating and destroying a simulator, and its small queries (clock, error, random
 * numbers, costs between nodes, named distributions). It is not the scheduler (sched.c), the
 * plat hooks (ops.c) nor the statistics output (stats.c).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#if defined(ILAB_ASAN) || defined(__SANITIZE_ADDRESS__)
#define SIM_DEFAULT_STACK (1024 * 1024)
#else
#define SIM_DEFAULT_STACK (256 * 1024)
#endif
#define SIM_DEFAULT_TIME_LIMIT 1000000000000ull /* 1000 s */

static _Atomic uint64_t sim_serials;

static int bad(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return -EINVAL;
}

static int check_machine(const struct ilab_sim_machine *m, char *err, size_t errlen)
{
	if (!m->nr_nodes || m->nr_nodes > SIM_MAX_NODES)
		return bad(err, errlen, "1 to 64 NUMA nodes are supported");
	if (!m->nr_cpus || m->nr_cpus > 65536 || !m->cpu_node || !m->distance)
		return bad(err, errlen, "machine needs CPUs, their nodes and distances");
	for (unsigned c = 0; c < m->nr_cpus; c++)
		if (m->cpu_node[c] < 0 || (unsigned)m->cpu_node[c] >= m->nr_nodes)
			return bad(err, errlen, "a CPU is on a node that does not exist");
	for (unsigned i = 0; i < m->nr_nodes * m->nr_nodes; i++)
		if (m->distance[i] < 10 || m->distance[i] > 255)
			return bad(err, errlen, "SLIT distances must be 10..255");
	return 0;
}

int ilab_sim_create(const struct ilab_sim_machine *m, const struct ilab_profile *prof,
		    const struct ilab_sim_config *cfg, struct ilab_sim **out, char *err,
		    size_t errlen)
{
	static const struct ilab_sim_config defaults;
	struct ilab_sim *s;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!m || !prof)
		return bad(err, errlen, "machine and profile are required");
	if (!cfg)
		cfg = &defaults;
	rc = check_machine(m, err, errlen);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->prof = *prof;
	/* never 0, never reused: an ilab_sim_dist bound to a freed simulator cannot match a new
	 * one allocated at the same address */
	s->serial = atomic_fetch_add_explicit(&sim_serials, 1, memory_order_relaxed) + 1;
	s->nr_nodes = m->nr_nodes;
	s->nr_cpus = m->nr_cpus;
	s->nr_slots = m->nr_cpus + 1 + SIM_MAX_AGENTS;
	s->seed = cfg->seed;
	s->rng = cfg->seed;
	s->stack_bytes = cfg->stack_bytes ? (cfg->stack_bytes + 4095) & ~(size_t)4095
					  : SIM_DEFAULT_STACK;
	if (s->stack_bytes < 16384)
		s->stack_bytes = 16384;
	s->time_limit = cfg->time_limit_ns ? cfg->time_limit_ns : SIM_DEFAULT_TIME_LIMIT;
	s->main_lock_node = aligned_alloc(PLAT_LOCK_NODE_BYTES, PLAT_LOCK_NODE_BYTES);
	s->cpu_node = malloc(m->nr_cpus * sizeof(int));
	s->distance = malloc((size_t)m->nr_nodes * m->nr_nodes * sizeof(unsigned));
	s->cpu_stats = calloc(m->nr_cpus, sizeof(*s->cpu_stats));
	if (!s->main_lock_node || !s->cpu_node || !s->distance || !s->cpu_stats) {
		rc = -ENOMEM;
		goto fail;
	}
	memcpy(s->cpu_node, m->cpu_node, m->nr_cpus * sizeof(int));
	memcpy(s->distance, m->distance, (size_t)m->nr_nodes * m->nr_nodes * sizeof(unsigned));
	rc = sim_cost_init(s, err, errlen);
	if (!rc && cfg->lookahead == ILAB_SIM_LOOKAHEAD_PROFILE)
		s->lookahead = sim_cost_lookahead_ns(s);
	if (!rc)
		rc = sim_lines_init(s);
	if (!rc)
		rc = sim_sched_init(s);
	if (rc)
		goto fail;
	sim_trace_attach(s); /* ilab_trace_use: this simulator is a process of that trace */
	*out = s;
	return 0;
fail:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	ilab_sim_destroy(s);
	return rc;
}

void ilab_sim_destroy(struct ilab_sim *s)
{
	if (!s)
		return;
	if (sim_active == s) {
		sim_active = NULL;
		plat_sim_cur = NULL;
		plat_scope_fn = NULL;
		plat_count_fn = NULL;
		plat_flow_fn = NULL;
	}
	sim_trace_detach(s);
	sim_prof_fini(s);
	if (s->heap || s->all_fibers)
		sim_sched_fini(s);
	sim_lines_fini(s);
	for (unsigned i = 0; i < s->nr_agents; i++)
		free(s->agents[i]);
	free(s->hists);
	free(s->mem_ns);
	free(s->xfer_ns);
	free(s->mmio_rd_ns);
	free(s->mmio_wr_ns);
	free(s->hop_ns);
	free(s->llc_ns);
	free(s->inv_ns);
	free(s->cpu_stats);
	free(s->distance);
	free(s->cpu_node);
	free(s->main_lock_node);
	free(s);
}

uint64_t ilab_sim_now_ns(const struct ilab_sim *s)
{
	return s ? s->main.pc.t : 0;
}

const char *ilab_sim_error(const struct ilab_sim *s)
{
	return s ? s->err : "";
}

uint64_t ilab_sim_rand(struct ilab_sim *s)
{
	uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static unsigned clamp_node(const struct ilab_sim *s, unsigned n)
{
	return n < s->nr_nodes ? n : 0;
}

uint64_t ilab_sim_mem_ns(const struct ilab_sim *s, unsigned from, unsigned home)
{
	return s->mem_ns[clamp_node(s, from) * s->nr_nodes + clamp_node(s, home)];
}

uint64_t ilab_sim_transfer_ns(const struct ilab_sim *s, unsigned from, unsigned to)
{
	return s->xfer_ns[clamp_node(s, from) * s->nr_nodes + clamp_node(s, to)];
}

uint64_t ilab_sim_mmio_ns(const struct ilab_sim *s, unsigned cpu_node, unsigned dev_node,
			  bool write)
{
	const uint64_t *m = write ? s->mmio_wr_ns : s->mmio_rd_ns;

	return m[clamp_node(s, cpu_node) * s->nr_nodes + clamp_node(s, dev_node)];
}

uint64_t ilab_sim_lookahead_ns(const struct ilab_sim *s)
{
	return s ? s->lookahead : 0;
}

const struct ilab_profile *ilab_sim_profile(const struct ilab_sim *s)
{
	return s ? &s->prof : NULL;
}

/* The distribution called `name` in s, created empty if new; NULL when out of memory. */
static struct sim_hist *hist_find(struct ilab_sim *s, const char *name)
{
	struct sim_hist *h, *nh;

	for (unsigned i = 0; i < s->nr_hists; i++)
		if (s->hists[i].name == name || !strcmp(s->hists[i].name, name))
			return &s->hists[i];
	nh = realloc(s->hists, (s->nr_hists + 1) * sizeof(*nh));
	if (!nh)
		return NULL;
	s->hists = nh;
	name = sim_intern(s, name); /* the caller's string may not outlive us */
	if (!name)
		return NULL;
	h = &s->hists[s->nr_hists++];
	memset(h, 0, sizeof(*h));
	h->name = name;
	h->min = UINT64_MAX;
	return h;
}

static void hist_add(struct sim_hist *h, uint64_t value)
{
	unsigned b;

	h->count++;
	h->sum += value;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
	b = value ? 64 - (unsigned)__builtin_clzll(value) : 0; /* bucket b: [2^(b-1), 2^b) */
	h->bucket[b < SIM_HIST_BUCKETS ? b : SIM_HIST_BUCKETS - 1]++;
}

void ilab_sim_sample(const char *name, uint64_t value)
{
	struct ilab_sim *s = sim_active;
	struct sim_hist *h;

	if (!s || !name)
		return;
	h = hist_find(s, name);
	if (h) /* statistics only: losing a sample is better than failing */
		hist_add(h, value);
}

void ilab_sim_sample_dist(struct ilab_sim_dist *d, const char *name, uint64_t value)
{
	struct ilab_sim *s = sim_active;
	struct sim_hist *h;

	if (!s || !d || !name)
		return;
	if (d->sim_serial == s->serial && d->idx < s->nr_hists) {
		h = &s->hists[d->idx];
	} else {
		h = hist_find(s, name);
		if (!h)
			return;
		d->sim_serial = s->serial;
		d->idx = (unsigned)(h - s->hists);
	}
	hist_add(h, value);
}

void ilab_sim_mem_home(const void *va, size_t len, int node)
{
	struct ilab_sim *s = sim_active;
	uintptr_t lo = (uintptr_t)va, hi = lo + len;
	unsigned keep = 0;

	if (!s || !va || !len || hi < lo)
		return;
	if (node >= (int)s->nr_nodes)
		node = -1;
	/* Drop what overlaps the new range, then add it (node < 0 only removes). */
	for (unsigned i = 0; i < s->nr_mem_ranges; i++) {
		const struct sim_mem_range *r = &s->mem_ranges[i];

		if (r->hi <= lo || r->lo >= hi)
			s->mem_ranges[keep++] = *r;
	}
	s->nr_mem_ranges = keep;
	if (node >= 0 && s->nr_mem_ranges < SIM_MAX_MEM_RANGES)
		s->mem_ranges[s->nr_mem_ranges++] = (struct sim_mem_range){ lo, hi, node };
	sim_lines_rehome(s);
}

void ilab_sim_sync(void)
{
	struct ilab_sim *s = sim_active;

	if (plat_sim && s && s->cur)
		sim_sync(s, s->cur);
}
