/* bench_sim.c — the simulator's own speed: host ns per fiber switch (raw and through the
 * scheduler), host ns per simulated tracked atomic at 1, 16 and 128 simulated CPUs
 * (contended and private lines), and simulated seconds per host second. It prints figures;
 * it is not a test. Usage: bench_sim [profile.yaml]   (default: profiles/kunpeng920.yaml)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "iommulab/plat.h"
#include "iommulab/sim.h"
#include "sim/fiber_arch.h"

#define NCPUS 128

static uint64_t host_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- raw context switch: two contexts bouncing -------------------------------------------- */

static struct fiber_arch_ctx main_ctx, fib_ctx;
static volatile uint64_t bounces;

static void bouncer(void *arg)
{
	for (;;) {
		bounces++;
		fiber_arch_switch(&fib_ctx, &main_ctx);
	}
}

static void bench_raw_switch(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	const uint64_t n = 10000000;
	uint64_t t0, t1;

	fiber_arch_init_main(&main_ctx);
	fiber_arch_init(&fib_ctx, stack, sizeof(stack), bouncer, NULL);
	t0 = host_ns();
	for (uint64_t i = 0; i < n; i++)
		fiber_arch_switch(&main_ctx, &fib_ctx);
	t1 = host_ns();
	printf("raw fiber switch (%s):            %6.1f ns per switch\n", fiber_arch_name,
	       (double)(t1 - t0) / (2.0 * (double)n));
	fiber_arch_destroy(&fib_ctx);
	fiber_arch_destroy(&main_ctx);
}

/* ---- workloads ----------------------------------------------------------------------------- */

struct wl {
	_Alignas(64) plat_word64 shared;
	struct {
		_Alignas(64) plat_word64 w;
	} priv[NCPUS];
	unsigned k;
};

static void yield_fn(unsigned idx, void *arg)
{
	struct wl *w = arg;

	for (unsigned i = 0; i < w->k; i++)
		plat_yield();
}

static void shared_fn(unsigned idx, void *arg)
{
	struct wl *w = arg;

	for (unsigned i = 0; i < w->k; i++)
		plat_fetch_add64(&w->shared, 1);
}

static void private_fn(unsigned idx, void *arg)
{
	struct wl *w = arg;

	for (unsigned i = 0; i < w->k; i++) {
		plat_fetch_add64(&w->priv[idx].w, 1);
		plat_charge_ns(20);
	}
}

static struct ilab_profile prof;
static int cpu_node[NCPUS];
static const unsigned slit[16] = { 10, 16, 32, 33, 16, 10, 25, 32,
				   32, 25, 10, 16, 33, 32, 16, 10 };

static struct ilab_sim *make_sim(void)
{
	struct ilab_sim_machine m = { 4, NCPUS, cpu_node, slit };
	struct ilab_sim *s;
	char err[256];

	for (unsigned c = 0; c < NCPUS; c++)
		cpu_node[c] = (int)(c / (NCPUS / 4));
	if (ilab_sim_create(&m, &prof, &(struct ilab_sim_config){ .seed = 1 }, &s, err,
			    sizeof(err))) {
		fprintf(stderr, "bench_sim: %s\n", err);
		exit(1);
	}
	plat_sim = ilab_sim_ops(s);
	return s;
}

static uint64_t switches_of(struct ilab_sim *s)
{
	json_t *j = ilab_sim_json(s);
	uint64_t n = (uint64_t)json_integer_value(
		json_object_get(json_object_get(j, "scheduler"), "switches"));

	json_decref(j);
	return n;
}

static void run(const char *what, plat_thread_fn fn, unsigned n, unsigned k, bool per_switch)
{
	struct ilab_sim *s = make_sim();
	struct wl *w = aligned_alloc(64, sizeof(*w));
	uint64_t t0, t1, ops = (uint64_t)n * k, sw, vt;

	memset(w, 0, sizeof(*w));
	w->k = k;
	t0 = host_ns();
	if (ilab_sim_run_threads(n, NULL, fn, w)) {
		fprintf(stderr, "bench_sim: %s\n", ilab_sim_error(s));
		exit(1);
	}
	t1 = host_ns();
	sw = switches_of(s);
	vt = ilab_sim_now_ns(s);
	if (per_switch)
		printf("%-28s %3u CPUs: %6.1f ns per scheduler switch (%" PRIu64 " switches)\n",
		       what, n, (double)(t1 - t0) / (double)(sw ? sw : 1), sw);
	else
		printf("%-28s %3u CPUs: %6.1f host ns per atomic, %5.2f switches per atomic, "
		       "%8.4f simulated s per host s\n",
		       what, n, (double)(t1 - t0) / (double)ops, (double)sw / (double)ops,
		       ((double)vt / 1e9) / ((double)(t1 - t0) / 1e9));
	free(w);
	plat_sim = NULL;
	ilab_sim_destroy(s);
}

int main(int argc, char **argv)
{
	char err[256], def[1024];
	const char *path = def;

	/* default: the profile next to this source file (CMake compiles it by absolute path) */
	snprintf(def, sizeof(def), "%s", __FILE__);
	if (strstr(def, "bench/bench_sim.c"))
		snprintf(strstr(def, "bench/bench_sim.c"), sizeof(def) - (size_t)(strstr(def, "bench/bench_sim.c") - def),
			 "profiles/kunpeng920.yaml");
	else
		snprintf(def, sizeof(def), "profiles/kunpeng920.yaml");
	if (argc > 1)
		path = argv[1];
	static const unsigned ns[] = { 1, 16, 128 };

	if (ilab_profile_load(path, &prof, err, sizeof(err))) {
		fprintf(stderr, "bench_sim: %s\n", err);
		return 2;
	}
	bench_raw_switch();
	run("yield ping-pong", yield_fn, 2, 2000000, true);
	run("yield round-robin", yield_fn, 128, 20000, true);
	for (unsigned i = 0; i < 3; i++)
		run("fetch_add, one shared line", shared_fn, ns[i], 2000000 / ns[i], false);
	for (unsigned i = 0; i < 3; i++)
		run("fetch_add, private lines", private_fn, ns[i], 2000000 / ns[i], false);
	return 0;
}
