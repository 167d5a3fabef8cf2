/* test_sim_determinism.c — the same workload with the same seed gives byte-identical JSON,
 * and a different seed (which drives the workload's random think times) gives different
 * JSON, so the comparison can fail. Not a test of the numbers themselves. Requesters that
 * reach a synchronising point at the same instant go in an order drawn from the seed: the
 * same for one seed, another for another seed. Also: named distributions land where their
 * name says, by name or through a handle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "sim/sim_fixture.h"

struct work {
	struct ilab_sim *sim;
	_Alignas(64) plat_spinlock lock;
	_Alignas(64) plat_word64 counter;
	_Alignas(64) plat_word64 hits[4];
	_Alignas(64) plat_word32 flag;
	uint64_t shared_plain;
};

static bool flag_set(uint64_t v, void *arg)
{
	return v != 0;
}

/* A mix of everything: lock, contended and per-node counters, memory accesses by node, a poll
 * on a flag set half-way, random think times from the seeded generator. */
static void work_fn(unsigned idx, void *arg)
{
	struct work *w = arg;
	int node = plat_cpu_id() / (FIX_CPUS / 4);

	for (unsigned i = 0; i < 40; i++) {
		plat_spin_lock(&w->lock);
		w->shared_plain++;
		plat_mem_access((node + 1) % 4, 256, true);
		plat_spin_unlock(&w->lock);
		plat_fetch_add64(&w->counter, 1);
		plat_fetch_add64(&w->hits[node], 1);
		plat_charge_ns(ilab_sim_rand(w->sim) % 500);
		if (i == 20 && idx == 0)
			plat_store32(&w->flag, 1);
	}
	plat_poll(&w->flag, 4, flag_set, NULL, 0);
	ilab_sim_sample("work.end_ns", plat_now_ns());
}

static char *run_once(uint64_t seed)
{
	struct ilab_sim *s = fix_sim(4, seed);
	struct work *w = aligned_alloc(64, sizeof(*w));
	int cpus[32];
	char *json;

	assert_non_null(s);
	assert_non_null(w);
	memset(w, 0, sizeof(*w));
	w->sim = s;
	plat_spin_init(&w->lock, "work.lock");
	plat_track(&w->counter, "work.counter");
	plat_track(&w->flag, "work.flag");
	for (unsigned i = 0; i < 32; i++)
		cpus[i] = (int)(i * 4 + i / 8); /* spread over the 4 nodes */
	assert_int_equal(ilab_sim_run_threads(32, cpus, work_fn, w), 0);
	assert_int_equal(w->counter.v, 32 * 40);
	assert_int_equal(w->shared_plain, 32 * 40);
	json = ilab_sim_json_dumps(s);
	assert_non_null(json);
	free(w);
	fix_sim_done(s);
	return json;
}

static void same_seed_same_bytes(void **state)
{
	char *a = run_once(42), *b = run_once(42), *c = run_once(43);

	assert_string_equal(a, b);
	assert_true(strcmp(a, c) != 0);
	assert_non_null(strstr(a, "\"work.lock\""));
	assert_non_null(strstr(a, "\"seed\": 42"));
	free(a);
	free(b);
	free(c);
}

#define TIE_THREADS 4

struct tie {
	_Alignas(64) plat_word64 ticket;
	unsigned order[TIE_THREADS]; /* order[k]: the thread that took ticket k */
};

/* Every thread does the same work, so all reach the tracked RMW at the same virtual instant;
 * the ticket each one draws is its place in the order of arrival. */
static void tie_fn(unsigned idx, void *arg)
{
	struct tie *t = arg;

	plat_delay_ns(1000);
	t->order[plat_fetch_add64(&t->ticket, 1)] = idx;
}

/* The order of arrival of TIE_THREADS threads tying on one word, as a number in base
 * TIE_THREADS (order[0] the most significant digit). */
static unsigned tie_order(uint64_t seed)
{
	struct ilab_sim *s = fix_sim(1, seed);
	struct tie *t = aligned_alloc(64, sizeof(*t));
	int cpus[TIE_THREADS];
	unsigned code = 0, seen = 0;

	assert_non_null(s);
	assert_non_null(t);
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < TIE_THREADS; i++)
		cpus[i] = (int)i;
	assert_int_equal(ilab_sim_run_threads(TIE_THREADS, cpus, tie_fn, t), 0);
	assert_int_equal(t->ticket.v, TIE_THREADS);
	for (unsigned k = 0; k < TIE_THREADS; k++) {
		seen |= 1u << t->order[k];
		code = code * TIE_THREADS + t->order[k];
	}
	assert_int_equal(seen, (1u << TIE_THREADS) - 1); /* each thread took one ticket */
	free(t);
	fix_sim_done(s);
	return code;
}

/* One seed repeats its order; over seeds 1-64 every thread arrives first at least once (with
 * ties broken by the queue's insertion order, one order would come out for every seed). */
static void same_instant_order_follows_seed(void **state)
{
	unsigned first = 0, orders = 0, prev = ~0u;

	for (uint64_t seed = 1; seed <= 64; seed++) {
		unsigned code = tie_order(seed);

		assert_int_equal(tie_order(seed), code);
		first |= 1u << (code / (TIE_THREADS * TIE_THREADS * TIE_THREADS));
		orders += code != prev;
		prev = code;
	}
	assert_int_equal(first, (1u << TIE_THREADS) - 1);
	assert_true(orders > 1);
}

/* count and sum of distribution `name` in s's JSON (-1, -1 when absent) */
static void dist_of(struct ilab_sim *s, const char *name, long long *count, long long *sum)
{
	json_t *j = ilab_sim_json(s);
	json_t *d = json_object_get(json_object_get(j, "distributions"), name);

	*count = d ? json_integer_value(json_object_get(d, "count")) : -1;
	*sum = d ? json_integer_value(json_object_get(d, "sum")) : -1;
	json_decref(j);
}

/* An ilab_sim_dist is bound to the simulator it was first used with: in a second simulator
 * (whose distributions sit at other indices) its samples still go to its own name. */
static void distribution_handle_follows_its_simulator(void **state)
{
	struct ilab_sim_dist d = { 0 };
	struct ilab_sim *s = fix_sim(1, 1);
	long long n, sum;

	assert_non_null(s);
	ilab_sim_sample("a.first", 1);
	ilab_sim_sample_dist(&d, "x.ns", 5); /* x.ns is the second distribution here */
	ilab_sim_sample_dist(&d, "x.ns", 7);
	ilab_sim_sample("x.ns", 9);          /* by name: the same distribution */
	dist_of(s, "x.ns", &n, &sum);
	assert_int_equal(n, 3);
	assert_int_equal(sum, 21);
	dist_of(s, "a.first", &n, &sum);
	assert_int_equal(n, 1);
	fix_sim_done(s);

	s = fix_sim(1, 1); /* may well reuse the freed simulator's address */
	assert_non_null(s);
	ilab_sim_sample("b.first", 100);
	ilab_sim_sample("b.second", 200); /* index 1: where the stale handle points */
	ilab_sim_sample_dist(&d, "x.ns", 11);
	dist_of(s, "x.ns", &n, &sum);
	assert_int_equal(n, 1);
	assert_int_equal(sum, 11);
	dist_of(s, "b.second", &n, &sum);
	assert_int_equal(n, 1);
	assert_int_equal(sum, 200);
	fix_sim_done(s);

	ilab_sim_sample_dist(&d, "x.ns", 13); /* no simulator active: nothing, no crash */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_seed_same_bytes),
		cmocka_unit_test(same_instant_order_follows_seed),
		cmocka_unit_test(distribution_handle_follows_its_simulator),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
