/* agent.c — background agents (the SMMU model's command consumer, a device): natively, one
 * thread each that runs until asked to stop. Not CPUs: an agent has no plat_cpu_id().
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plat/plat_internal.h"

struct plat_agent {
	plat_word32 stop; /* set by plat_agent_stop(); read by plat_agent_should_stop() */
	pthread_t tid;
	plat_agent_fn fn;
	void *arg;
	int node;
	char name[32];
};

_Thread_local plat_word32 *plat_tls_agent_stop;

static void *agent_main(void *p)
{
	struct plat_agent *a = p;

	plat_tls_agent_stop = &a->stop;
	plat_rcu_register_thread();
	a->fn(a, a->arg);
	plat_rcu_unregister_thread();
	plat_tls_agent_stop = NULL;
	return NULL;
}

int plat_agent_start(const char *name, int node, plat_agent_fn fn, void *arg,
		     struct plat_agent **out)
{
	struct plat_agent *a;
	int err;

	if (!fn || !out)
		return -EINVAL;
	*out = NULL;
	if (plat_sim) /* an agent of the simulator's scheduler; its handle is the sim's own */
		return plat_sim->agent_start(name, node, fn, arg, out);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fn = fn;
	a->arg = arg;
	a->node = node;
	snprintf(a->name, sizeof(a->name), "%s", name ? name : "agent");
	plat_track(&a->stop, "agent.stop");
	err = pthread_create(&a->tid, NULL, agent_main, a);
	if (err) {
		free(a);
		return -err;
	}
	/* Thread names are limited to 15 characters; the name only helps debuggers. */
	char tname[16];
	memcpy(tname, a->name, sizeof(tname) - 1);
	tname[sizeof(tname) - 1] = '\0';
	pthread_setname_np(a->tid, tname);
	*out = a;
	return 0;
}

bool plat_agent_should_stop(const struct plat_agent *agent)
{
	if (!agent)
		return true;
	if (plat_sim)
		return plat_sim->agent_should_stop(agent);
	/* plat_load32 takes a mutable word because the simulator may account the access. */
	return plat_load32((plat_word32 *)&agent->stop) != 0;
}

void plat_agent_stop(struct plat_agent *agent, const void *wake_addr)
{
	if (!agent)
		return;
	if (plat_sim) {
		plat_sim->agent_stop(agent, wake_addr);
		return;
	}
	plat_store32(&agent->stop, 1);
	if (wake_addr)
		plat_wrote(wake_addr);
	pthread_join(agent->tid, NULL);
	free(agent);
}

void plat_agent_wake(struct plat_agent *agent)
{
	if (agent && plat_sim && plat_sim->agent_wake)
		plat_sim->agent_wake(agent);
}
