/* test_sim_model.c — the simulator's cost model against first principles: each expected time
 * is computed here from the profile's constants and the documented rules (its per-distance
 * tables, else the ACPI SLIT ratio and transfer = local transfer + remote memory penalty),
 * never from the simulator's own output. Not a test of the profile parser (test_sim_profile.c)
 * nor of fibers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "sim/sim_fixture.h"

static struct ilab_profile P;

static int setup(void **state)
{
	return fix_load_profile(&P);
}

/* The rule of docs/simulation.md, restated independently of src/sim: a profile's
 * per-distance table entry for d if it has a table (distance 10 is the local value),
 * else the formula. The shipped kunpeng920 profile has tables (measured latencies). */
static bool table_ns(const struct ilab_dist_cost *c, unsigned d, uint64_t *ns)
{
	if (d == 10) {
		*ns = c->local_ns;
		return c->nr > 0;
	}
	for (unsigned i = 0; i < c->nr; i++)
		if (c->distance[i] == d) {
			*ns = c->ns[i];
			return true;
		}
	return false;
}

static uint64_t mem_d(unsigned d)
{
	uint64_t ns;

	if (table_ns(&P.mem, d, &ns))
		return ns;
	return (P.mem.local_ns * d + 5) / 10;
}

static uint64_t xfer_d(unsigned d)
{
	uint64_t ns;

	if (table_ns(&P.transfer, d, &ns))
		return ns;
	return P.transfer.local_ns + mem_d(d) - mem_d(10);
}

/* ---- one CPU's uncontended atomic --------------------------------------------------------- */

struct uncontended {
	plat_word64 w;
	uint64_t t_first, t_last;
	unsigned k;
};

static void uncontended_fn(unsigned idx, void *arg)
{
	struct uncontended *u = arg;

	plat_fetch_add64(&u->w, 1); /* cold miss: brings the line in */
	u->t_first = plat_now_ns();
	for (unsigned i = 0; i < u->k; i++)
		plat_fetch_add64(&u->w, 1);
	u->t_last = plat_now_ns();
}

static void uncontended_atomic_costs_local_latency(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	struct uncontended u = { .k = 1000 };
	int cpu = 5;

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(1, &cpu, uncontended_fn, &u), 0);
	assert_int_equal(u.w.v, 1001);
	/* the first access of a line no cache holds comes from local memory */
	assert_int_equal(u.t_first, mem_d(10));
	assert_int_equal(u.t_last - u.t_first, (uint64_t)u.k * P.atomic_local_ns);
	fix_sim_done(s);
}

/* ---- N CPUs hammering one line ------------------------------------------------------------ */

struct hammer {
	plat_word64 w;
	unsigned k;
	uint64_t t0;
};

static void hammer_fn(unsigned idx, void *arg)
{
	struct hammer *h = arg;

	for (unsigned i = 0; i < h->k; i++)
		plat_fetch_add64(&h->w, 1);
}

/* Aggregate rate in operations per microsecond * 1000 (integer arithmetic). */
static uint64_t hammer_rate_milli(unsigned nodes, unsigned n, const int *cpus, unsigned k,
				  uint64_t *ops)
{
	struct ilab_sim *s = fix_sim(nodes, 1);
	struct hammer h = { .k = k };
	uint64_t t;

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(n, cpus, hammer_fn, &h), 0);
	t = ilab_sim_now_ns(s);
	*ops = h.w.v;
	fix_sim_done(s);
	/* ops per ns * 1e6 */
	return (uint64_t)h.w.v * 1000000 / t;
}

static void hammer_rate_is_one_per_transfer_whatever_n(void **state)
{
	static const unsigned ns[] = { 2, 16, 128 };
	uint64_t expect = 1000000 / xfer_d(10); /* one op per local transfer */

	for (unsigned i = 0; i < 3; i++) {
		unsigned n = ns[i], k = 25600 / n;
		uint64_t ops, rate = hammer_rate_milli(1, n, NULL, k, &ops);

		assert_int_equal(ops, (uint64_t)n * k);
		/* within 10% */
		if (rate * 10 < expect * 9 || rate * 10 > expect * 11)
			fail_msg("N=%u: rate %llu (x1e-6/ns), expected %llu +- 10%%", n,
				 (unsigned long long)rate, (unsigned long long)expect);
	}
}

static void hammer_across_nodes_pays_remote_transfer(void **state)
{
	/* node 0 and node 2 are at distance 32 */
	int cpus[2] = { fix_cpu_of_node(0), fix_cpu_of_node(2) };
	uint64_t ops, rate = hammer_rate_milli(4, 2, cpus, 2000, &ops);
	uint64_t expect = 1000000 / xfer_d(32);

	assert_int_equal(ops, 4000);
	if (rate * 10 < expect * 9 || rate * 10 > expect * 11)
		fail_msg("rate %llu, expected %llu", (unsigned long long)rate,
			 (unsigned long long)expect);
}

/* ---- cmpxchg loops: losers retry and pay again -------------------------------------------- */

struct casloop {
	plat_word64 w;
	unsigned k;
};

static void casloop_fn(unsigned idx, void *arg)
{
	struct casloop *c = arg;

	for (unsigned i = 0; i < c->k; i++) {
		uint64_t old = plat_load64(&c->w);

		plat_charge_ns(20); /* compute the new value */
		while (!plat_cmpxchg64(&c->w, &old, old + 1))
			plat_charge_ns(20);
	}
}

static void cmpxchg_losers_retry_and_pay(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	struct casloop c = { .k = 200 };
	json_t *j, *cpus;
	uint64_t retries = 0, t;

	assert_non_null(s);
	plat_track(&c.w, "casloop.word");
	assert_int_equal(ilab_sim_run_threads(8, NULL, casloop_fn, &c), 0);
	assert_int_equal(c.w.v, 8 * 200);
	j = ilab_sim_json(s);
	cpus = json_object_get(j, "cpus");
	for (size_t i = 0; i < json_array_size(cpus); i++)
		retries += (uint64_t)json_integer_value(
			json_object_get(json_array_get(cpus, i), "rmw_retries"));
	assert_true(retries > 0);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(json_object_get(j, "lines"), "casloop.word"),
				 "rmw_retries")),
			 (json_int_t)retries);
	/* every attempt (success or not) needed the line exclusive, each for at least one
	 * local transfer while others contend: the run cannot be shorter than that. */
	t = ilab_sim_now_ns(s);
	assert_true(t >= (8 * 200 + retries) * xfer_d(10) / 2);
	json_decref(j);
	fix_sim_done(s);
}

/* ---- polling: parked until written, woken at write time + transfer ------------------------- */

struct pollw {
	plat_word32 w;
	uint64_t t_write_done, t_woken;
	int rc;
};

static bool is_one(uint64_t v, void *arg)
{
	return v == 1;
}

static void poll_fn(unsigned idx, void *arg)
{
	struct pollw *p = arg;

	if (idx == 0) {
		p->rc = plat_poll(&p->w, 4, is_one, NULL, 0);
		p->t_woken = plat_now_ns();
	} else {
		plat_delay_ns(1000);
		plat_store32(&p->w, 1);
		p->t_write_done = plat_now_ns();
	}
}

static void poll_wakes_at_write_time_plus_transfer(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	struct pollw p = { .rc = -1 };
	int cpus[2] = { fix_cpu_of_node(0), fix_cpu_of_node(2) };

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(2, cpus, poll_fn, &p), 0);
	assert_int_equal(p.rc, 0);
	assert_true(p.t_write_done > 1000);
	/* the re-read brings the line from the writer's node (distance 32) */
	assert_int_equal(p.t_woken, p.t_write_done + xfer_d(32));
	fix_sim_done(s);
}

/* A device-style writer: synchronise, a plain store, then plat_wrote(). */
static void wrote_fn(unsigned idx, void *arg)
{
	struct pollw *p = arg;

	if (idx == 0) {
		p->rc = plat_poll(&p->w, 4, is_one, NULL, 0);
		p->t_woken = plat_now_ns();
	} else {
		plat_delay_ns(5000);
		ilab_sim_sync(); /* as a device model does: the store at its virtual time */
		atomic_store(&p->w.v, 1);
		plat_wrote(&p->w);
		p->t_write_done = plat_now_ns();
	}
}

static void wrote_wakes_poller(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	struct pollw p = { .rc = -1 };
	int cpus[2] = { fix_cpu_of_node(1), fix_cpu_of_node(3) }; /* distance 32 */

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(2, cpus, wrote_fn, &p), 0);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.t_write_done, 5000);
	assert_int_equal(p.t_woken, 5000 + xfer_d(32));
	fix_sim_done(s);
}

struct tmo {
	plat_word32 w;
	int rc;
	uint64_t t;
};

static void timeout_fn(unsigned idx, void *arg)
{
	struct tmo *t = arg;

	if (idx == 0) {
		t->rc = plat_poll(&t->w, 4, is_one, NULL, 500);
		t->t = plat_now_ns();
	} else {
		plat_delay_ns(100000); /* someone else alive, but never writing */
	}
}

static void poll_times_out(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	struct tmo t = { .rc = 1 };

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(2, NULL, timeout_fn, &t), 0);
	assert_int_equal(t.rc, -ETIMEDOUT);
	/* woken at the deadline, then one more (cached) check */
	assert_int_equal(t.t, 500 + P.cache_hit_ns);
	fix_sim_done(s);
}

/* A malformed poll is refused with -EINVAL in simulation as natively, not dereferenced. */
static void malformed_fn(unsigned idx, void *arg)
{
	int *rc = arg;
	_Alignas(8) plat_word64 w = { 0 };

	rc[0] = plat_poll(NULL, 4, is_one, NULL, 0);
	rc[1] = plat_poll(&w, 2, is_one, NULL, 0);
	rc[2] = plat_poll((char *)&w + 4, 8, is_one, NULL, 0);
	rc[3] = plat_poll(&w, 8, NULL, NULL, 0);
}

static void poll_refuses_malformed_requests(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	int rc[4] = { 1, 1, 1, 1 };

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(1, NULL, malformed_fn, rc), 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(rc[i], -EINVAL);
	fix_sim_done(s);
}

/* ---- the progress hook (a command's progress line) ------------------------------------------ */

struct progress_seen {
	unsigned calls;
	uint64_t last_ns;
	bool backwards;
};

static void progress_cb(uint64_t virtual_ns, void *arg)
{
	struct progress_seen *p = arg;

	p->backwards |= virtual_ns < p->last_ns;
	p->last_ns = virtual_ns;
	p->calls++;
}

/* Two CPUs hammering a line for k operations each: the end time, and the hook's calls. */
static uint64_t hammer_with_progress(bool hook, struct progress_seen *seen)
{
	struct ilab_sim *s = fix_sim(1, 1);
	struct hammer h = { .k = 200000 };
	uint64_t t;

	assert_non_null(s);
	if (hook)
		ilab_sim_set_progress(progress_cb, seen, 0); /* period 0: at every check */
	assert_int_equal(ilab_sim_run_threads(2, NULL, hammer_fn, &h), 0);
	ilab_sim_set_progress(NULL, NULL, 0);
	t = ilab_sim_now_ns(s);
	assert_int_equal(h.w.v, 400000);
	fix_sim_done(s);
	return t;
}

/* The hook is called as the run goes (every 65536 switches, once its period has passed), with
 * virtual times that never go back, and the run is the same with it or without it. */
static void progress_hook_reports_without_changing_the_run(void **state)
{
	struct progress_seen seen = { 0 }, none = { 0 };
	uint64_t with, without;

	(void)state;
	with = hammer_with_progress(true, &seen);
	without = hammer_with_progress(false, &none);
	assert_true(seen.calls >= 2);
	assert_false(seen.backwards);
	assert_true(seen.last_ns > 0 && seen.last_ns <= with);
	assert_int_equal(none.calls, 0);
	assert_int_equal(with, without);
}

/* ---- deadlock detection -------------------------------------------------------------------- */

struct dl {
	_Alignas(64) plat_word32 a;
	_Alignas(64) plat_word32 b;
};

static void deadlock_fn(unsigned idx, void *arg)
{
	struct dl *d = arg;

	plat_poll(idx ? &d->a : &d->b, 4, is_one, NULL, 0);
}

static void deadlock_is_reported(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	static struct dl d; /* abandoned fibers keep pointers to it */
	int rc;

	assert_non_null(s);
	plat_track(&d.a, "dl.a");
	plat_track(&d.b, "dl.b");
	rc = ilab_sim_run_threads(2, NULL, deadlock_fn, &d);
	assert_int_equal(rc, -EDEADLK);
	fprintf(stderr, "%s\n", ilab_sim_error(s));
	assert_non_null(strstr(ilab_sim_error(s), "deadlock"));
	assert_non_null(strstr(ilab_sim_error(s), "dl.a"));
	assert_non_null(strstr(ilab_sim_error(s), "dl.b"));
	/* one well-formed line (issue 28): the waits separated by "; ", none dangling at the end */
	{
		const char *e = ilab_sim_error(s);
		size_t n = strlen(e);

		assert_true(n > 0 && e[n - 1] != ';' && !strchr(e, '\n'));
		assert_non_null(strstr(e, " ns; cpu 1 waits on dl.a since "));
	}
	/* the simulator refuses to go on */
	assert_int_equal(ilab_sim_run_threads(1, NULL, deadlock_fn, &d), -EDEADLK);
	fix_sim_done(s);
}

/* The stall is dated by the fibers that wait (or could still run), never by one that has
 * finished: a thread that worked 1 ms and returned does not move a deadlock of two threads
 * parked after 10 us to 1 ms. */
static void late_finisher_fn(unsigned idx, void *arg)
{
	struct dl *d = arg;

	if (idx == 2) {
		plat_delay_ns(1000000);
		return;
	}
	plat_delay_ns(10000);
	plat_poll(idx ? &d->a : &d->b, 4, is_one, NULL, 0);
}

static void deadlock_dated_by_the_waiters(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	static struct dl d; /* abandoned fibers keep pointers to it */
	unsigned long long at = 0;
	const char *e;

	(void)state;
	assert_non_null(s);
	plat_track(&d.a, "late.a");
	plat_track(&d.b, "late.b");
	assert_int_equal(ilab_sim_run_threads(3, NULL, late_finisher_fn, &d), -EDEADLK);
	e = ilab_sim_error(s);
	assert_non_null(strstr(e, "deadlock at "));
	assert_int_equal(sscanf(strstr(e, "deadlock at "), "deadlock at %llu ns", &at), 1);
	assert_true(at >= 10000);
	assert_true(at < 1000000);
	fix_sim_done(s);
}

/* ---- memory and MMIO costs ----------------------------------------------------------------- */

struct memc {
	uint64_t local, remote, page, mmio_w_local, mmio_r_remote;
};

static uint64_t elapsed(void (*f)(void *), void *a)
{
	uint64_t t0 = plat_now_ns();

	f(a);
	return plat_now_ns() - t0;
}

static void acc_local(void *a)
{
	plat_mem_access(0, 64, false);
}
static void acc_remote(void *a)
{
	plat_mem_access(3, 8, true);
}
static void acc_page(void *a)
{
	plat_mem_access(0, 4096, false);
}

static uint64_t dummy_read(void *ctx, uint64_t off, unsigned size)
{
	return 0;
}
static void dummy_write(void *ctx, uint64_t off, uint64_t v, unsigned size)
{
}
static const struct plat_mmio_ops dummy_ops = { dummy_read, dummy_write };
static struct plat_mmio dev_node0 = { &dummy_ops, NULL, 0, "dev0" };
static struct plat_mmio dev_node2 = { &dummy_ops, NULL, 2, "dev2" };

static void mmio_w(void *a)
{
	plat_mmio_write32(&dev_node0, 0, 1);
}
static void mmio_r(void *a)
{
	(void)plat_mmio_read32(&dev_node2, 0);
}

static void memc_fn(unsigned idx, void *arg)
{
	struct memc *m = arg;

	m->local = elapsed(acc_local, NULL);
	m->remote = elapsed(acc_remote, NULL);
	m->page = elapsed(acc_page, NULL);
	m->mmio_w_local = elapsed(mmio_w, NULL);
	m->mmio_r_remote = elapsed(mmio_r, NULL);
}

static void memory_and_mmio_costs_follow_distance(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	struct memc m;
	int cpu = fix_cpu_of_node(0);

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(1, &cpu, memc_fn, &m), 0);
	assert_int_equal(m.local, mem_d(10));
	assert_int_equal(m.remote, mem_d(33)); /* node 0 -> node 3 */
	assert_int_equal(m.page, mem_d(10) + 63 * P.mem_line_ns);
	assert_int_equal(m.mmio_w_local, P.mmio_write.local_ns);
	assert_int_equal(m.mmio_r_remote, P.mmio_read.local_ns + mem_d(32) - mem_d(10));
	assert_true(m.remote > m.local);
	assert_int_equal(ilab_sim_mem_ns(s, 0, 3), mem_d(33));
	assert_int_equal(ilab_sim_transfer_ns(s, 1, 2), xfer_d(25));
	fix_sim_done(s);
}

/* ---- agents: a device on another node, doorbell and completion ---------------------------- */

struct dev {
	_Alignas(64) plat_word32 doorbell;
	_Alignas(64) plat_word32 done;
	unsigned handled;
	uint64_t t_cpu_done;
};

static bool nonzero(uint64_t v, void *arg)
{
	return v != *(const uint32_t *)arg;
}

static void dev_agent(struct plat_agent *a, void *arg)
{
	struct dev *d = arg;
	uint32_t seen = 0;

	while (!ilab_sim_agent_should_stop(a)) {
		if (plat_poll(&d->doorbell, 4, nonzero, &seen, 0))
			continue;
		seen = plat_load32(&d->doorbell);
		plat_charge_ns(P.smmu_command_ns);
		d->handled++;
		plat_store32(&d->done, seen);
	}
}

static void dev_cpu(unsigned idx, void *arg)
{
	struct dev *d = arg;
	uint32_t want = 1;

	plat_store32(&d->doorbell, 1);
	plat_poll(&d->done, 4, is_one, &want, 0);
	d->t_cpu_done = plat_now_ns();
}

static void agent_serves_and_stops(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	static struct dev d;
	struct plat_agent *a;
	int cpu = fix_cpu_of_node(0);
	json_t *j, *ag;
	int rc;

	assert_non_null(s);
	memset(&d, 0, sizeof(d));
	assert_int_equal(ilab_sim_agent_start("dev", 2, dev_agent, &d, &a), 0);
	rc = ilab_sim_run_threads(1, &cpu, dev_cpu, &d);
	if (rc) fprintf(stderr, "%s\n", ilab_sim_error(s));
	assert_int_equal(rc, 0);
	assert_int_equal(d.handled, 1);
	/* at least: doorbell to the device and completion back, across distance 32 */
	assert_true(d.t_cpu_done >= 2 * xfer_d(32) + P.smmu_command_ns);
	ilab_sim_agent_stop(a, &d.doorbell);
	assert_string_equal(ilab_sim_error(s), "");
	j = ilab_sim_json(s);
	ag = json_object_get(json_object_get(j, "agents"), "dev");
	assert_non_null(ag);
	assert_int_equal(json_integer_value(json_object_get(ag, "node")), 2);
	assert_true(json_is_false(json_object_get(ag, "running")));
	json_decref(j);
	fix_sim_done(s);
}

/* The lookahead is the smallest cross-agent latency of the profile (docs/simulation.md,
 * "Lookahead"): for the test profile, a read of a line a device left in the home's last-level
 * cache (cache.llc_local_ns = 35) is quicker than a local cache-to-cache transfer (50) or a
 * local memory fill (100). Strict order is L = 0. */
static void lookahead_is_the_smallest_cross_agent_latency(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	const struct ilab_profile *p;

	(void)state;
	assert_non_null(s);
	p = ilab_sim_profile(s);
	if (fix_lookahead == ILAB_SIM_LOOKAHEAD_PROFILE) {
		uint64_t l = p->transfer.local_ns;

		if (p->llc_local_ns < l)
			l = p->llc_local_ns;
		if (p->mem.local_ns < l)
			l = p->mem.local_ns;
		assert_int_equal(ilab_sim_lookahead_ns(s), l);
		assert_int_equal(ilab_sim_lookahead_ns(s), 35);
	} else {
		assert_int_equal(ilab_sim_lookahead_ns(s), 0);
	}
	fix_sim_done(s);
}

/* ---- fresh memory: a reallocated block has no cache history ------------------------------ */

struct fresh_obj {
	plat_word64 w;
	uint64_t t_cost;
};

static void fresh_touch_fn(unsigned idx, void *arg)
{
	struct fresh_obj **objs = arg;
	uint64_t t0;

	(void)idx;
	for (unsigned i = 0; i < 2; i++) {
		t0 = plat_now_ns();
		plat_fetch_add64(&objs[i]->w, 1);
		objs[i]->t_cost = plat_now_ns() - t0;
	}
}

/* A CPU of node 3 owns both objects' lines; then object 0's memory is handed out again
 * (plat_sim->fresh, what plat_zalloc calls) and a CPU of node 0 updates both: object 0's word
 * comes from local memory like a never-touched line, object 1's still from node 3's cache.
 * The retired line keeps its statistics. Without this, results depended on which freed block
 * the host's malloc reused. */
static void fresh_memory_has_no_cache_history(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	struct fresh_obj *objs[2];
	int far = fix_cpu_of_node(3), near = fix_cpu_of_node(0);
	json_t *j, *line;

	(void)state;
	assert_non_null(s);
	for (unsigned i = 0; i < 2; i++) {
		objs[i] = plat_zalloc(sizeof(*objs[i]));
		assert_non_null(objs[i]);
		plat_track(&objs[i]->w, i ? "fresh.kept" : "fresh.renewed");
	}
	assert_int_equal(ilab_sim_run_threads(1, &far, fresh_touch_fn, objs), 0);
	assert_non_null(plat_sim->fresh);
	plat_sim->fresh(objs[0], sizeof(*objs[0]));
	plat_track(&objs[0]->w, "fresh.renewed");
	assert_int_equal(ilab_sim_run_threads(1, &near, fresh_touch_fn, objs), 0);
	assert_int_equal(objs[0]->t_cost, mem_d(10));
	assert_int_equal(objs[1]->t_cost, xfer_d(33));
	j = ilab_sim_json(s);
	line = json_object_get(json_object_get(j, "lines"), "fresh.renewed");
	assert_int_equal(json_integer_value(json_object_get(line, "lines")), 2);
	assert_int_equal(json_integer_value(json_object_get(line, "acquisitions")), 2);
	line = json_object_get(json_object_get(j, "lines"), "fresh.kept");
	assert_int_equal(json_integer_value(json_object_get(line, "lines")), 1);
	json_decref(j);
	fix_sim_done(s);
	free(objs[0]);
	free(objs[1]);
}

/* iommulab's own statistics counters (plat_stat_*) are not part of the modelled program: a
 * CPU that bumps one a thousand times, on a line another node's CPU bumped last, spends no
 * virtual time and nothing is recorded on the counter's line; the same bumps through
 * tracked accesses (the driver's counters before they became plat_stat_*) cost a remote
 * transfer, then hits. The counts themselves are exact. */
struct stat_obj {
	plat_word64 counter;
	_Alignas(PLAT_CACHELINE) plat_word64 tracked;
	uint64_t t_stat, t_tracked;
};

static void stat_bump_fn(unsigned idx, void *arg)
{
	struct stat_obj *o = arg;
	uint64_t t0 = plat_now_ns();

	(void)idx;
	for (unsigned i = 0; i < 1000; i++)
		plat_stat_add64(&o->counter, 1);
	o->t_stat = plat_now_ns() - t0;
	t0 = plat_now_ns();
	for (unsigned i = 0; i < 1000; i++)
		plat_store64(&o->tracked, plat_load_relaxed64(&o->tracked) + 1);
	o->t_tracked = plat_now_ns() - t0;
}

static void statistics_counters_cost_no_simulated_time(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	struct stat_obj *o;
	int far = fix_cpu_of_node(3), near = fix_cpu_of_node(0);
	json_t *j, *lines;

	(void)state;
	assert_non_null(s);
	o = plat_zalloc(sizeof(*o));
	assert_non_null(o);
	plat_track(&o->counter, "stat.counter");
	plat_track(&o->tracked, "stat.tracked");
	assert_int_equal(ilab_sim_run_threads(1, &far, stat_bump_fn, o), 0);
	assert_int_equal(ilab_sim_run_threads(1, &near, stat_bump_fn, o), 0);
	assert_int_equal(o->t_stat, 0);
	/* first read: a transfer from node 3's cache; the write upgrades; 1999 hits follow */
	assert_true(o->t_tracked >= xfer_d(33));
	assert_int_equal(plat_stat_read64(&o->counter), 2000);
	assert_int_equal(plat_stat_read64(&o->tracked), 2000);
	j = ilab_sim_json(s);
	lines = json_object_get(j, "lines");
	/* named, so the line is listed, but nothing was reported on it */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(lines, "stat.counter"),
							    "reads")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(lines, "stat.counter"),
							    "acquisitions")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(lines, "stat.tracked"),
							    "acquisitions")), 2000);
	json_decref(j);
	fix_sim_done(s);
	free(o);
}

/* Forgetting lines removes them from the simulator's hash table (open addressing: later
 * entries of a probe run move back); every line left must still be found. One CPU reads 6000
 * lines scattered over a 16 MiB block (scattered, so that their hashes collide as real
 * addresses do), some are made fresh, then a second pass costs a hit per kept line and a
 * local memory fill per forgotten one. Both paths of sim_lines_forget: line by line, and a
 * range larger than the table. */
#define SWEEP_SPAN (16u << 20)
#define SWEEP_N 6000

struct sweep {
	char *base;
	uint32_t line[SWEEP_N]; /* distinct line indices into base */
	uint64_t t;
};

static void sweep_fn(unsigned idx, void *arg)
{
	struct sweep *w = arg;
	uint64_t t0 = plat_now_ns();

	(void)idx;
	for (size_t i = 0; i < SWEEP_N; i++)
		(void)plat_load64((plat_word64 *)(w->base + 64 * (size_t)w->line[i]));
	w->t = plat_now_ns() - t0;
}

static void forgotten_lines_leave_the_others_found(void **state)
{
	static struct sweep w;
	static uint8_t used[SWEEP_SPAN / 64];
	struct ilab_sim *s = fix_sim(1, 1);
	uint64_t x = 12345, forgot = 0;
	int cpu = 0;

	(void)state;
	assert_non_null(s);
	w.base = plat_zalloc(SWEEP_SPAN);
	assert_non_null(w.base);
	memset(used, 0, sizeof(used));
	for (size_t i = 0; i < SWEEP_N;) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t k = (uint32_t)(x >> 33) % (SWEEP_SPAN / 64);

		if (!used[k]) {
			used[k] = 1;
			w.line[i++] = k;
		}
	}
	assert_int_equal(ilab_sim_run_threads(1, &cpu, sweep_fn, &w), 0);
	assert_int_equal(ilab_sim_run_threads(1, &cpu, sweep_fn, &w), 0);
	assert_int_equal(w.t, SWEEP_N * P.cache_hit_ns); /* all hits now */
	for (size_t i = 0; i < SWEEP_N; i += 3) { /* every third line, one by one */
		plat_sim->fresh(w.base + 64 * (size_t)w.line[i] + 8, 16);
		used[w.line[i]] = 2;
	}
	/* the last quarter of the block at once: more lines than the table has slots */
	plat_sim->fresh(w.base + SWEEP_SPAN / 4 * 3, SWEEP_SPAN / 4);
	for (size_t k = SWEEP_SPAN / 64 / 4 * 3; k < SWEEP_SPAN / 64; k++)
		if (used[k])
			used[k] = 2;
	for (size_t k = 0; k < SWEEP_SPAN / 64; k++)
		forgot += used[k] == 2;
	assert_true(forgot > SWEEP_N / 3 && forgot < SWEEP_N);
	assert_int_equal(ilab_sim_run_threads(1, &cpu, sweep_fn, &w), 0);
	assert_int_equal(w.t, (SWEEP_N - forgot) * P.cache_hit_ns + forgot * mem_d(10));
	fix_sim_done(s);
	free(w.base);
}

static void sample_fn(unsigned idx, void *arg)
{
	static const uint64_t v[] = { 0, 1, 3, 1000 };

	(void)idx;
	(void)arg;
	for (unsigned i = 0; i < 4; i++)
		ilab_sim_sample("model.dist", v[i]);
}

/* A distribution's JSON: log2 buckets (0 for zeros, b for [2^(b-1), 2^b)) up to the last one
 * used, which holds the largest sample: 0, 1, 3 and 1000 fill buckets 0, 1, 2 and 10. */
static void distribution_json_has_every_bucket(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	json_t *j, *d, *b;
	uint64_t want[11] = { [0] = 1, [1] = 1, [2] = 1, [10] = 1 };

	(void)state;
	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(1, NULL, sample_fn, NULL), 0);
	j = ilab_sim_json(s);
	d = json_object_get(json_object_get(j, "distributions"), "model.dist");
	assert_non_null(d);
	assert_int_equal(json_integer_value(json_object_get(d, "count")), 4);
	assert_int_equal(json_integer_value(json_object_get(d, "max")), 1000);
	b = json_object_get(d, "log2_buckets");
	assert_int_equal(json_array_size(b), 11);
	for (size_t i = 0; i < 11; i++)
		assert_int_equal(json_integer_value(json_array_get(b, i)), want[i]);
	json_decref(j);
	fix_sim_done(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uncontended_atomic_costs_local_latency),
		cmocka_unit_test(hammer_rate_is_one_per_transfer_whatever_n),
		cmocka_unit_test(hammer_across_nodes_pays_remote_transfer),
		cmocka_unit_test(cmpxchg_losers_retry_and_pay),
		cmocka_unit_test(poll_wakes_at_write_time_plus_transfer),
		cmocka_unit_test(wrote_wakes_poller),
		cmocka_unit_test(poll_times_out),
		cmocka_unit_test(poll_refuses_malformed_requests),
		cmocka_unit_test(deadlock_is_reported),
		cmocka_unit_test(deadlock_dated_by_the_waiters),
		cmocka_unit_test(progress_hook_reports_without_changing_the_run),
		cmocka_unit_test(memory_and_mmio_costs_follow_distance),
		cmocka_unit_test(agent_serves_and_stops),
		cmocka_unit_test(lookahead_is_the_smallest_cross_agent_latency),
		cmocka_unit_test(fresh_memory_has_no_cache_history),
		cmocka_unit_test(forgotten_lines_leave_the_others_found),
		cmocka_unit_test(statistics_counters_cost_no_simulated_time),
		cmocka_unit_test(distribution_json_has_every_bucket),
	};
	int failed;

	/* Every expectation here holds in strict order and with the profile's lookahead. */
	fix_lookahead = ILAB_SIM_LOOKAHEAD_NONE;
	failed = cmocka_run_group_tests_name("strict order (L = 0)", tests, setup, NULL);
	fix_lookahead = ILAB_SIM_LOOKAHEAD_PROFILE;
	failed += cmocka_run_group_tests_name("lookahead L", tests, setup, NULL);
	return failed;
}
