/* test_sim_fiber.c — the fiber context switch and the scheduler's ordering: many fibers with
 * deep stacks keep their locals across thousands of switches, and fibers run in virtual-time
 * order. Not a test of costs (test_sim_model.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim_fixture.h"

#define DEPTH 64
#define NFIB 128

struct deep {
	plat_word64 shared;
	unsigned bad[NFIB];
	uint64_t sums[NFIB];
};

/* Recurse with a local array per frame and a scheduling point at each level; on the way back
 * every frame checks that its locals (integers and doubles, in registers and on the stack)
 * are what it left there. */
static uint64_t dive(struct deep *d, unsigned idx, unsigned level)
{
	volatile uint64_t frame[16];
	double x = (double)idx * 1.5 + level;
	uint64_t r = 0;

	for (unsigned i = 0; i < 16; i++)
		frame[i] = ((uint64_t)idx << 32) ^ ((uint64_t)level << 8) ^ i;
	plat_fetch_add64(&d->shared, 1); /* may switch */
	plat_yield();                      /* switches when others are level */
	if (level < DEPTH)
		r = dive(d, idx, level + 1);
	plat_charge_ns(idx % 7);
	plat_yield();
	for (unsigned i = 0; i < 16; i++)
		if (frame[i] != (((uint64_t)idx << 32) ^ ((uint64_t)level << 8) ^ i))
			d->bad[idx]++;
	if (x != (double)idx * 1.5 + level)
		d->bad[idx]++;
	return r + frame[level % 16];
}

static void deep_fn(unsigned idx, void *arg)
{
	struct deep *d = arg;

	d->sums[idx] = dive(d, idx, 0);
}

static void many_fibers_keep_their_locals(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	static struct deep d;

	assert_non_null(s);
	memset(&d, 0, sizeof(d));
	assert_int_equal(ilab_sim_run_threads(NFIB, NULL, deep_fn, &d), 0);
	assert_int_equal(d.shared.v, (uint64_t)NFIB * (DEPTH + 1));
	for (unsigned i = 0; i < NFIB; i++) {
		uint64_t want = 0;

		for (unsigned level = 0; level <= DEPTH; level++)
			want += ((uint64_t)i << 32) ^ ((uint64_t)level << 8) ^ (level % 16);
		assert_int_equal(d.bad[i], 0);
		assert_int_equal(d.sums[i], want);
	}
	/* reuse of finished fibers' stacks */
	assert_int_equal(ilab_sim_run_threads(NFIB, NULL, deep_fn, &d), 0);
	assert_int_equal(d.shared.v, 2ull * NFIB * (DEPTH + 1));
	fix_sim_done(s);
}

/* Fibers record the virtual time at which they pass a synchronising call: the order of the
 * records must be the order of the times. */
struct order {
	plat_word64 log_n;
	uint64_t when[1024];
};

static void order_fn(unsigned idx, void *arg)
{
	struct order *o = arg;

	for (unsigned i = 0; i < 8; i++) {
		plat_charge_ns((idx * 37 + i * 11) % 50 + 1);
		plat_yield();
		/* plat_yield synchronised us: now record our time (a host write, no cost) */
		o->when[o->log_n.v++] = plat_now_ns();
	}
}

static void fibers_run_in_virtual_time_order(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	static struct order o;

	assert_non_null(s);
	memset(&o, 0, sizeof(o));
	assert_int_equal(ilab_sim_run_threads(64, NULL, order_fn, &o), 0);
	assert_int_equal(o.log_n.v, 64 * 8);
	for (unsigned i = 1; i < 64 * 8; i++)
		if (o.when[i] < o.when[i - 1])
			fail_msg("record %u at %llu ns follows one at %llu ns", i,
				 (unsigned long long)o.when[i], (unsigned long long)o.when[i - 1]);
	fix_sim_done(s);
}

/* The run queue under churn: fibers re-queued at spread-out times, timed polls woken before
 * their deadline (taken out of the queue early), and agents created while most fibers are
 * queued (the queue grows past its first 64 entries then). Every record must still come in
 * virtual-time order, every poll must see its writer, and every fiber must finish. */
#define CHURN_THREADS 48
#define CHURN_ROUNDS 12

struct churn {
	plat_word64 flag[CHURN_THREADS / 2];
	struct {
		_Alignas(64) plat_word64 w;
	} priv[CHURN_THREADS];
	plat_word64 agent_yields;
	struct plat_agent *agent[CHURN_THREADS];
	unsigned log_n, polls_ok;
	uint64_t when[CHURN_THREADS * CHURN_ROUNDS * 2 + 16];
};

/* Right after plat_yield, which synchronises after charging: a host write, no cost. */
static void churn_log(struct churn *c)
{
	c->when[c->log_n++] = plat_now_ns();
}

static void churn_agent(struct plat_agent *a, void *arg)
{
	struct churn *c = arg;

	(void)a;
	for (unsigned i = 0; i < 3; i++) {
		plat_fetch_add64(&c->agent_yields, 1);
		plat_charge_ns(30);
		plat_yield();
	}
}

static bool nonzero(uint64_t v, void *arg)
{
	(void)arg;
	return v != 0;
}

static void churn_fn(unsigned idx, void *arg)
{
	struct churn *c = arg;
	plat_word64 *flag = &c->flag[idx / 2];

	for (unsigned i = 0; i < CHURN_ROUNDS; i++) {
		/* a tracked access hands over to whoever is behind (the scheduler's common path),
		 * a yield to whoever is level too */
		for (unsigned j = 0; j < 4; j++) {
			plat_charge_ns((idx * 37 + i * 11 + j * 5) % 200 + 1);
			plat_fetch_add64(&c->priv[idx].w, 1);
		}
		plat_yield();
		churn_log(c);
		if (i == 2)
			assert_int_equal(plat_agent_start("churn", -1, churn_agent, c,
							  &c->agent[idx]), 0);
		if (i == 5) {
			if (idx % 2 == 0) {
				/* woken by the odd partner long before the deadline */
				if (plat_poll(flag, 8, nonzero, NULL, 1000000) == 0)
					c->polls_ok++;
			} else {
				plat_charge_ns(500 + idx);
				plat_store64(flag, 1);
			}
			plat_yield(); /* the access's own cost came after its sync */
			churn_log(c);
		}
	}
	plat_agent_stop(c->agent[idx], NULL);
}

static void run_queue_keeps_order_under_churn(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	static struct churn c;

	assert_non_null(s);
	memset(&c, 0, sizeof(c));
	assert_int_equal(ilab_sim_run_threads(CHURN_THREADS, NULL, churn_fn, &c), 0);
	assert_int_equal(c.log_n, CHURN_THREADS * (CHURN_ROUNDS + 1));
	assert_int_equal(c.polls_ok, CHURN_THREADS / 2);
	assert_int_equal(c.agent_yields.v, 3 * CHURN_THREADS);
	for (unsigned i = 0; i < CHURN_THREADS; i++)
		assert_int_equal(c.priv[i].w.v, 4 * CHURN_ROUNDS);
	for (unsigned i = 1; i < c.log_n; i++)
		if (c.when[i] < c.when[i - 1])
			fail_msg("record %u at %llu ns follows one at %llu ns", i,
				 (unsigned long long)c.when[i], (unsigned long long)c.when[i - 1]);
	fix_sim_done(s);
}

static void nested(unsigned idx, void *arg)
{
	plat_word64 *w = arg;

	plat_fetch_add64(w, 1);
}

static void spawner(unsigned idx, void *arg)
{
	plat_word64 *w = arg;
	int cpus[2] = { 10 + (int)idx * 2, 11 + (int)idx * 2 };

	/* a simulated thread may itself run threads (a workload's helper) */
	assert_int_equal(ilab_sim_run_threads(2, cpus, nested, w), 0);
}

static void threads_can_run_threads(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	static plat_word64 w;

	assert_non_null(s);
	w.v = 0;
	assert_int_equal(ilab_sim_run_threads(3, NULL, spawner, &w), 0);
	assert_int_equal(w.v, 6);
	fix_sim_done(s);
}

/* plat_spin_lock's queue node: one line per simulated context at a fixed address, whatever
 * the stack depth of the call (a node on the stack made results depend on frame layout). */
struct nodes {
	uintptr_t shallow[8], deep[8];
};

static uintptr_t node_at_depth(unsigned depth)
{
	volatile char pad[256];

	pad[0] = (char)depth;
	if (depth)
		return node_at_depth(depth - 1) + (uintptr_t)pad[0] * 0;
	return (uintptr_t)plat_sim->lock_node();
}

static void node_fn(unsigned idx, void *arg)
{
	struct nodes *n = arg;

	n->shallow[idx] = (uintptr_t)plat_sim->lock_node();
	plat_yield();
	n->deep[idx] = node_at_depth(20);
}

static void lock_nodes_are_fixed_per_context(void **state)
{
	struct ilab_sim *s = fix_sim(4, 1);
	static struct nodes n;

	assert_non_null(s);
	memset(&n, 0, sizeof(n));
	assert_int_equal(ilab_sim_run_threads(8, NULL, node_fn, &n), 0);
	for (unsigned i = 0; i < 8; i++) {
		assert_true(n.shallow[i] != 0);
		assert_int_equal(n.shallow[i] % PLAT_LOCK_NODE_BYTES, 0);
		assert_int_equal(n.shallow[i], n.deep[i]);
		for (unsigned j = 0; j < i; j++)
			assert_true(n.shallow[i] / PLAT_LOCK_NODE_BYTES !=
				    n.shallow[j] / PLAT_LOCK_NODE_BYTES);
	}
	/* the set-up context has its own */
	assert_int_equal((uintptr_t)plat_sim->lock_node() % PLAT_LOCK_NODE_BYTES, 0);
	for (unsigned i = 0; i < 8; i++)
		assert_true((uintptr_t)plat_sim->lock_node() != n.shallow[i]);
	fix_sim_done(s);
}

static void bad_cpu_lists_are_refused(void **state)
{
	struct ilab_sim *s = fix_sim(1, 1);
	static plat_word64 w;
	int dup[2] = { 3, 3 }, out[1] = { FIX_CPUS };

	assert_non_null(s);
	assert_int_equal(ilab_sim_run_threads(2, dup, nested, &w), -EINVAL);
	assert_int_equal(ilab_sim_run_threads(1, out, nested, &w), -EINVAL);
	assert_int_equal(ilab_sim_run_threads(1, NULL, NULL, &w), -EINVAL);
	assert_int_equal(w.v, 0);
	fix_sim_done(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_fibers_keep_their_locals),
		cmocka_unit_test(fibers_run_in_virtual_time_order),
		cmocka_unit_test(run_queue_keeps_order_under_churn),
		cmocka_unit_test(threads_can_run_threads),
		cmocka_unit_test(bad_cpu_lists_are_refused),
		cmocka_unit_test(lock_nodes_are_fixed_per_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
