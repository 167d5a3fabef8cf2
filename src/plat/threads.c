/* threads.c — plat_run_threads(): run a function on n real threads (the simulator's fibers when
 * one is active), each one CPU of the modelled machine (its plat_cpu_id()), optionally pinned
 * with hwloc. Not the agents (agent.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "plat/plat_internal.h"

_Thread_local int plat_tls_cpu = -1;

int plat_native_cpu_id(void)
{
	return plat_tls_cpu;
}

/* All threads are created and pinned before any runs fn: a failure anywhere means nobody runs
 * (plat_run_threads is all or nothing), and contention tests start together. */
enum { GATE_WAIT = 0, GATE_RUN = 1, GATE_ABORT = 2 };

struct run {
	plat_thread_fn fn;
	void *arg;
	plat_word32 ready; /* threads that have set themselves up */
	plat_word32 gate;  /* GATE_* */
	plat_word32 err;   /* first set-up error, as a positive errno */
};

struct run_slot {
	struct run *run;
	unsigned idx;
	int cpu;
	pthread_t tid;
};

static bool gate_open(uint64_t v, void *arg)
{
	return v != GATE_WAIT;
}

static bool all_ready(uint64_t v, void *arg)
{
	return v == *(const unsigned *)arg;
}

static void *run_one(void *p)
{
	struct run_slot *slot = p;
	struct run *run = slot->run;
	int err = 0;

	plat_tls_cpu = slot->cpu;
	if (plat_state.bind_threads)
		err = plat_bind_self((unsigned)slot->cpu);
	if (err) {
		uint32_t none = 0;

		plat_cmpxchg32(&run->err, &none, (uint32_t)-err);
	}
	plat_fetch_add32(&run->ready, 1);
	plat_native_poll(&run->gate, 4, gate_open, NULL, 0);
	if (plat_load32(&run->gate) == GATE_RUN) {
		plat_rcu_register_thread();
		run->fn(slot->idx, run->arg);
		plat_rcu_unregister_thread();
	}
	plat_tls_cpu = -1;
	return NULL;
}

static int check_cpus(unsigned n, const int *cpus)
{
	unsigned nr = plat_cpu_count();
	unsigned char *seen = calloc(nr, 1);

	if (!seen)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		int cpu = cpus ? cpus[i] : (int)i;

		/* Two threads on one CPU would share its per-CPU data: refuse. */
		if (cpu < 0 || (unsigned)cpu >= nr || seen[cpu]) {
			free(seen);
			return -EINVAL;
		}
		seen[cpu] = 1;
	}
	free(seen);
	return 0;
}

int plat_run_threads(unsigned n, const int *cpus, plat_thread_fn fn, void *arg)
{
	struct run run = { .fn = fn, .arg = arg };
	unsigned created;
	int err;

	if (!fn)
		return -EINVAL;
	if (plat_sim) /* simulated CPUs are fibers of the simulator */
		return plat_sim->run_threads(n, cpus, fn, arg);
	if (n == 0)
		return 0;
	err = check_cpus(n, cpus);
	if (err)
		return err;

	struct run_slot *slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (created = 0; created < n; created++) {
		struct run_slot *s = &slots[created];

		s->run = &run;
		s->idx = created;
		s->cpu = cpus ? cpus[created] : (int)created;
		err = pthread_create(&s->tid, NULL, run_one, s);
		if (err) {
			err = -err;
			break;
		}
	}
	if (!err) {
		plat_native_poll(&run.ready, 4, all_ready, &n, 0);
		err = -(int)plat_load32(&run.err);
	}
	plat_store32(&run.gate, err ? GATE_ABORT : GATE_RUN);
	for (unsigned i = 0; i < created; i++)
		pthread_join(slots[i].tid, NULL);
	free(slots);
	return err;
}
