/* engine.c — plat_init()/plat_fini(): choose the backend (native or sim) and the machine whose
 * CPUs plat exposes. It is not the simulator: src/sim supplies the ops when engine == SIM.
 */
#include <errno.h>
#include <string.h>

#include "plat/plat_internal.h"

const struct plat_sim_ops *plat_sim;
/* Written by the simulator (see plat.h); plat only reads it. */
struct plat_sim_clock *plat_sim_cur;
struct plat_state plat_state;

/* A sim backend with a missing hook would crash the first caller that reaches it: refuse it. */
/* ns per named compute charge (plat_charge): filled by the simulator when it is activated,
 * read only while plat_sim is set. */
uint64_t plat_charge_table[PLAT_CHARGE_NR];
/* The simulator's profiler (plat_scope_enter): set when it is activated, cleared here. */
void (*plat_scope_fn)(int what);
/* The simulator's timeline trace (plat_count_add): set when a traced simulator is active. */
void (*plat_count_fn)(int what, int64_t delta);
void (*plat_flow_fn)(uint64_t key);

static bool sim_ops_complete(const struct plat_sim_ops *s)
{
	return s->access && s->rmw_failed && s->now_ns && s->charge_ns && s->delay_ns &&
	       s->cpu_id && s->poll && s->wrote && s->mem_access && s->mem_touch && s->mmio && s->track &&
	       s->yield && s->run_threads && s->agent_start && s->agent_should_stop &&
	       s->agent_stop && s->lock_node;
}

int plat_init(const struct plat_config *cfg)
{
	static const struct plat_config host_defaults = { .engine = PLAT_ENGINE_NATIVE };
	struct plat_state st = { 0 };
	int err;

	if (!cfg)
		cfg = &host_defaults;
	if (plat_state.initialised)
		return -EBUSY;
	switch (cfg->engine) {
	case PLAT_ENGINE_NATIVE:
		if (cfg->sim)
			return -EINVAL;
		break;
	case PLAT_ENGINE_SIM:
		if (!cfg->sim || !sim_ops_complete(cfg->sim))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}

	st.engine = cfg->engine;
	st.bind_threads = cfg->bind_threads && cfg->engine == PLAT_ENGINE_NATIVE;
	err = plat_cpus_setup(cfg->topo, &st);
	if (!err && st.bind_threads)
		err = plat_host_load(&st);
	if (err) {
		plat_cpus_release(&st);
		return err;
	}
	st.initialised = true;
	plat_state = st;
	plat_sim = cfg->engine == PLAT_ENGINE_SIM ? cfg->sim : NULL;
	return 0;
}

void plat_fini(void)
{
	if (!plat_state.initialised)
		return;
	plat_cpus_release(&plat_state);
	memset(&plat_state, 0, sizeof(plat_state));
	plat_sim = NULL;
	plat_scope_fn = NULL;
	plat_count_fn = NULL;
	plat_flow_fn = NULL;
}

enum plat_engine plat_engine_kind(void)
{
	return plat_state.initialised ? plat_state.engine : PLAT_ENGINE_NATIVE;
}
