/* test_plat_cpu.c — plat_init/plat_fini and CPU identity: the host (hwloc), a modelled
 * topology (kunpeng920), bad configurations, and the sim dispatch of the inline helpers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "iommulab/plat.h"
#include "iommulab/topo.h"
#include "support/skip.h"

/* Every CPU is listed exactly once, under its own node, in ascending order. */
static void check_node_lists_consistent(void)
{
	unsigned total = 0;

	for (unsigned node = 0; node < plat_node_count(); node++) {
		int prev = -1;

		for (unsigned i = 0; i < plat_node_cpu_count(node); i++) {
			int cpu = plat_node_cpu(node, i);

			assert_true(cpu > prev);
			assert_int_equal(plat_cpu_node((unsigned)cpu), (int)node);
			prev = cpu;
		}
		total += plat_node_cpu_count(node);
	}
	assert_int_equal(total, plat_cpu_count());
}

static void host_exposes_its_pus(void **state)
{
	assert_int_equal(plat_init(NULL), 0);
	assert_int_equal(plat_engine_kind(), PLAT_ENGINE_NATIVE);
	assert_null(plat_sim);
	assert_true(plat_cpu_count() >= 1);
	/* hwloc shows the PUs this process may use; never more than the system has. */
	assert_true(plat_cpu_count() <= (unsigned)sysconf(_SC_NPROCESSORS_CONF));
	assert_true(plat_node_count() >= 1);
	check_node_lists_consistent();
	plat_fini();
}

static void kunpeng920_has_4_nodes_of_32(void **state)
{
	struct ilab_topo *t = NULL;
	char err[256] = "";
	int rc = ilab_topo_load("kunpeng920", &t, err, sizeof(err));

	if (rc) {
		ILAB_SKIP("ilab_topo_load(kunpeng920) failed (%d: %s)", rc, err);
	}
	struct plat_config cfg = { .engine = PLAT_ENGINE_NATIVE, .topo = t };
	assert_int_equal(plat_init(&cfg), 0);
	/* The topology may go once plat has copied what it needs. */
	ilab_topo_free(t);

	assert_int_equal(plat_cpu_count(), 128);
	assert_int_equal(plat_node_count(), 4);
	assert_int_equal(plat_cpu_node(0), 0);
	assert_int_equal(plat_cpu_node(127), 3);
	for (unsigned node = 0; node < 4; node++)
		assert_int_equal(plat_node_cpu_count(node), 32);
	check_node_lists_consistent();
	assert_int_equal(plat_cpu_node(128), -1);
	assert_int_equal(plat_node_cpu(4, 0), -1);
	assert_int_equal(plat_node_cpu(0, 32), -1);
	assert_int_equal(plat_node_cpu_count(4), 0);
	plat_fini();
}

static void bad_configs_are_refused(void **state)
{
	struct plat_config sim_without_ops = { .engine = PLAT_ENGINE_SIM };
	struct plat_config bogus_engine = { .engine = (enum plat_engine)7 };
	struct plat_sim_ops half = { 0 };
	struct plat_config native_with_ops = { .engine = PLAT_ENGINE_NATIVE, .sim = &half };
	struct plat_config sim_incomplete = { .engine = PLAT_ENGINE_SIM, .sim = &half };

	assert_int_equal(plat_init(&sim_without_ops), -EINVAL);
	assert_int_equal(plat_init(&bogus_engine), -EINVAL);
	assert_int_equal(plat_init(&native_with_ops), -EINVAL);
	assert_int_equal(plat_init(&sim_incomplete), -EINVAL);
	assert_null(plat_sim);

	assert_int_equal(plat_init(NULL), 0);
	assert_int_equal(plat_init(NULL), -EBUSY);
	plat_fini();
	plat_fini(); /* twice is harmless */
	assert_int_equal(plat_init(NULL), 0);
	plat_fini();
}

static void uninitialised_plat_is_one_node_host(void **state)
{
	long host = sysconf(_SC_NPROCESSORS_CONF);

	assert_int_equal(plat_cpu_count(), (unsigned)host);
	assert_int_equal(plat_node_count(), 1);
	assert_int_equal(plat_cpu_node(0), 0);
	assert_int_equal(plat_node_cpu(0, 0), 0);
	assert_int_equal(plat_native_cpu_id(), -1);
	assert_int_equal(plat_cpu_id(), -1);
	assert_int_equal(plat_this_node(), 0);
}

/* ---- a fake simulator: checks that the inline helpers and the spinlock dispatch to it ---- */

static unsigned n_access, n_track, n_poll, n_yield;
static uint64_t fake_clock = 1000;

static void fake_access(const void *a, enum plat_access k) { n_access++; }
static void fake_rmw_failed(const void *a) {}
static uint64_t fake_now(void) { return fake_clock; }
static void fake_charge(uint64_t ns) { fake_clock += ns; }
static void fake_delay(uint64_t ns) { fake_clock += ns; }
static int fake_cpu(void) { return 5; }
static int fake_poll(const void *a, unsigned s, plat_poll_pred p, void *arg, uint64_t t)
{
	n_poll++;
	return -ETIMEDOUT;
}
static void fake_wrote(const void *a) {}
static void fake_mem(int node, size_t bytes, bool w) {}
static void fake_touch(const void *va, size_t bytes, bool w) {}
static void fake_mmio(const struct plat_mmio *m, bool w) {}
static void fake_track(const void *a, const char *name) { n_track++; }
static void fake_yield(void) { n_yield++; }
static int n_run, n_agent;
static int fake_run(unsigned n, const int *cpus, plat_thread_fn fn, void *arg)
{
	n_run++;
	return -EXDEV; /* a value only the fake returns: proves plat forwarded the call */
}
static int fake_agent_start(const char *name, int node, plat_agent_fn fn, void *arg,
			    struct plat_agent **out)
{
	n_agent++;
	return -EXDEV;
}
static bool fake_agent_should_stop(const struct plat_agent *a) { return true; }
static void fake_agent_stop(struct plat_agent *a, const void *w) {}
static _Alignas(PLAT_CACHELINE) unsigned char fake_node[PLAT_LOCK_NODE_BYTES];
static void *fake_lock_node(void) { return fake_node; }

static const struct plat_sim_ops fake_sim = {
	.access = fake_access, .rmw_failed = fake_rmw_failed, .now_ns = fake_now,
	.charge_ns = fake_charge, .delay_ns = fake_delay, .cpu_id = fake_cpu,
	.poll = fake_poll, .wrote = fake_wrote, .mem_access = fake_mem, .mem_touch = fake_touch,
	.mmio = fake_mmio,
	.track = fake_track, .yield = fake_yield, .run_threads = fake_run,
	.agent_start = fake_agent_start, .agent_should_stop = fake_agent_should_stop,
	.agent_stop = fake_agent_stop, .lock_node = fake_lock_node,
};

static void never_thread(unsigned idx, void *arg) { fail(); }
static void never_agent(struct plat_agent *a, void *arg) { fail(); }

static void sim_engine_dispatches_to_its_ops(void **state)
{
	struct plat_config cfg = { .engine = PLAT_ENGINE_SIM, .sim = &fake_sim };
	plat_spinlock l;
	struct plat_agent *agent = (struct plat_agent *)&l;

	assert_int_equal(plat_init(&cfg), 0);
	assert_int_equal(plat_engine_kind(), PLAT_ENGINE_SIM);
	assert_ptr_equal(plat_sim, &fake_sim);
	assert_int_equal(plat_cpu_id(), 5);
	plat_charge_ns(250);
	plat_delay_ns(750);
	assert_int_equal(plat_now_ns(), 2000);
	plat_yield();
	assert_int_equal(n_yield, 1);

	plat_spin_init(&l, "test.lock");
	assert_int_equal(n_track, 1);
	plat_spin_lock(&l);
	assert_false(plat_spin_trylock(&l));
	plat_spin_unlock(&l);
	assert_true(n_access >= 4); /* init store, lock cmpxchg, trylock cmpxchg, unlock store */
	assert_int_equal(n_poll, 0); /* the lock was free: no wait */

	/* RCU is a no-op in simulation: a synchronize inside a read section must not block. */
	plat_rcu_read_lock();
	plat_synchronize_rcu();
	plat_rcu_read_unlock();

	/* Threads and agents go to the simulator, never to native pthreads. */
	int cpus[1] = { 0 };
	assert_int_equal(plat_run_threads(1, cpus, never_thread, NULL), -EXDEV);
	assert_int_equal(n_run, 1);
	agent = (struct plat_agent *)1;
	assert_int_equal(plat_agent_start("x", 0, never_agent, NULL, &agent), -EXDEV);
	assert_int_equal(n_agent, 1);
	assert_null(agent);
	plat_fini();
	assert_null(plat_sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uninitialised_plat_is_one_node_host),
		cmocka_unit_test(host_exposes_its_pus),
		cmocka_unit_test(kunpeng920_has_4_nodes_of_32),
		cmocka_unit_test(bad_configs_are_refused),
		cmocka_unit_test(sim_engine_dispatches_to_its_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
