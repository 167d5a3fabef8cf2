/* stats.c — the simulator's statistics as JSON (jansson): per CPU, per agent, per named
 * tracked line, named distributions, and the scheduler's counters. It is not a report
 * formatter (src/report renders tables and plots from this).
 *
 * Determinism: nothing here depends on host addresses or host time. Lines are aggregated by
 * their plat_track() name (sums and maxima do not depend on the hash table's order), and
 * keys are sorted when dumped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sim/sim_internal.h"

static void put(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

static json_t *stats_json(const struct ilab_sim *s, const struct sim_stats *st)
{
	json_t *o = json_object();

	if (sim_home_mode(s)) /* only there: flat runs keep their JSON byte for byte */
		put(o, "excl_retries", st->excl_retries);

	put(o, "reads", st->reads);
	put(o, "writes", st->writes);
	put(o, "rmws", st->rmws);
	put(o, "hits", st->hits);
	put(o, "misses", st->misses);
	put(o, "rmw_retries", st->rmw_retries);
	put(o, "line_wait_ns", st->line_wait_ns);
	put(o, "transfer_ns", st->transfer_ns);
	put(o, "polls", st->polls);
	put(o, "poll_wakeups", st->poll_wakeups);
	put(o, "poll_timeouts", st->poll_timeouts);
	put(o, "parked_ns", st->parked_ns);
	put(o, "charged_ns", st->charged_ns);
	put(o, "delayed_ns", st->delayed_ns);
	put(o, "mem_accesses", st->mem_accesses);
	put(o, "mem_bytes_local", st->mem_bytes_local);
	put(o, "mem_bytes_remote", st->mem_bytes_remote);
	put(o, "mem_ns", st->mem_ns);
	put(o, "mmio_reads", st->mmio_reads);
	put(o, "mmio_writes", st->mmio_writes);
	put(o, "mmio_ns", st->mmio_ns);
	put(o, "end_ns", st->end_ns);
	return o;
}

static void add_line(const struct ilab_sim *s, json_t *lines, const struct sim_line *l)
{
	const char *name = l->name ? l->name : "(unnamed)";
	json_t *o = json_object_get(lines, name);

	if (!o) {
		o = json_object();
		put(o, "lines", 0);
		put(o, "reads", 0);
		put(o, "acquisitions", 0);
		put(o, "transfers", 0);
		put(o, "transfer_ns", 0);
		put(o, "rmw_retries", 0);
		put(o, "wrote", 0);
		put(o, "wait_ns", 0);
		put(o, "max_wait_ns", 0);
		if (sim_home_mode(s)) {
			/* atomic requests served at or by the line (CAS attempts among them;
			 * rmw_retries are the CAS failures); wait_ns is the time requests
			 * queued at its home, so wait_ns / virtual time is the mean queue */
			put(o, "atomics", 0);
			put(o, "home_nodes", 0);
		}
		json_object_set_new(lines, name, o);
	}
#define ADD(k, v) put(o, k, (uint64_t)json_integer_value(json_object_get(o, k)) + (v))
	ADD("lines", 1);
	ADD("reads", l->reads);
	ADD("acquisitions", l->acquisitions);
	ADD("transfers", l->transfers);
	ADD("transfer_ns", l->transfer_ns);
	ADD("rmw_retries", l->rmw_retries);
	ADD("wrote", l->wrote);
	ADD("wait_ns", l->wait_ns);
	if (sim_home_mode(s)) {
		uint64_t m = (uint64_t)json_integer_value(json_object_get(o, "home_nodes"));

		ADD("atomics", l->home_rmws);
		/* a mask, not the first line's node: the table's order depends on host addresses */
		if (l->home >= 0 && l->home < 63)
			put(o, "home_nodes", m | 1ull << l->home);
	}
#undef ADD
	if (l->max_wait_ns > (uint64_t)json_integer_value(json_object_get(o, "max_wait_ns")))
		put(o, "max_wait_ns", l->max_wait_ns);
}

static json_t *hist_json(const struct sim_hist *h)
{
	json_t *o = json_object(), *b = json_array();
	unsigned last = 0;

	put(o, "count", h->count);
	put(o, "sum", h->sum);
	put(o, "min", h->count ? h->min : 0);
	put(o, "max", h->max);
	/* log2 buckets: entry i counts values in [2^(i-1), 2^i), entry 0 counts zeros */
	for (unsigned i = 0; i < SIM_HIST_BUCKETS; i++)
		if (h->bucket[i])
			last = i;
	for (unsigned i = 0; i <= last; i++)
		json_array_append_new(b, json_integer((json_int_t)h->bucket[i]));
	json_object_set_new(o, "log2_buckets", b);
	return o;
}

json_t *ilab_sim_json(const struct ilab_sim *s)
{
	json_t *root, *cpus, *agents, *lines, *dists, *sched, *o;
	uint64_t end = s->main.pc.t;

	root = json_object();
	json_object_set_new(root, "engine", json_string("sim"));
	json_object_set_new(root, "profile", json_string(s->prof.name));
	put(root, "seed", s->seed);
	put(root, "nodes", s->nr_nodes);
	put(root, "cpus_modelled", s->nr_cpus);

	cpus = json_array();
	for (unsigned c = 0; c < s->nr_cpus; c++) {
		const struct sim_stats *st = &s->cpu_stats[c];

		if (!st->threads)
			continue;
		o = stats_json(s, st);
		put(o, "cpu", c);
		put(o, "node", (uint64_t)s->cpu_node[c]);
		put(o, "threads", st->threads);
		json_array_append_new(cpus, o);
		end = sim_max64(end, st->end_ns);
	}
	json_object_set_new(root, "cpus", cpus);

	agents = json_object();
	for (unsigned i = 0; i < s->nr_agents; i++) {
		const struct sim_agent *a = s->agents[i];

		o = stats_json(s, &a->stats);
		put(o, "node", (uint64_t)a->node);
		json_object_set_new(o, "running", json_boolean(!a->done));
		json_object_set_new(agents, a->name, o);
	}
	json_object_set_new(root, "agents", agents);
	json_object_set_new(root, "setup", stats_json(s, &s->main_stats));

	lines = json_object();
	for (size_t i = 0; i < ((size_t)1 << s->lines_bits); i++)
		if (s->lines[i].line)
			add_line(s, lines, s->lines[i].line);
	for (unsigned i = 0; i < s->nr_retired; i++)
		add_line(s, lines, s->retired[i]);
	json_object_set_new(root, "lines", lines);

	dists = json_object();
	for (unsigned i = 0; i < s->nr_hists; i++)
		json_object_set_new(dists, s->hists[i].name, hist_json(&s->hists[i]));
	json_object_set_new(root, "distributions", dists);

	sched = json_object();
	put(sched, "switches", s->switches);
	put(sched, "fibers", s->nr_fibers);
	json_object_set_new(sched, "error", json_string(s->err));
	json_object_set_new(root, "scheduler", sched);
	put(root, "virtual_time_ns", end);
	if (s->prof_on)
		json_object_set_new(root, "breakdown", sim_prof_json(s));
	return root;
}

char *ilab_sim_json_dumps(const struct ilab_sim *s)
{
	json_t *j;
	char *out;

	if (!s)
		return NULL;
	j = ilab_sim_json(s);
	if (!j)
		return NULL;
	out = json_dumps(j, JSON_SORT_KEYS | JSON_INDENT(2));
	json_decref(j);
	return out;
}

int ilab_sim_json_write(const struct ilab_sim *s, FILE *f)
{
	char *txt = ilab_sim_json_dumps(s);
	int rc = 0;

	if (!txt)
		return -ENOMEM;
	if (fputs(txt, f) < 0 || fputc('\n', f) < 0)
		rc = -EIO;
	free(txt);
	return rc;
}
