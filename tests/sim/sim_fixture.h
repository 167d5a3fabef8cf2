/* sim_fixture.h — shared set-up for the simulator tests: the Kunpeng 920 profile from
 * profiles/, a 4-node machine with that machine's SLIT, and a one-node machine. It is not a
 * test itself, and not linked anywhere else (header-only, static functions).
 */
#ifndef ILAB_TESTS_SIM_FIXTURE_H
#define ILAB_TESTS_SIM_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "iommulab/plat.h"
#include "iommulab/sim.h"

#define FIX_PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"
#define FIX_CPUS 128

/* Kunpeng 920 2P SLIT, as in tests/data/topologies/kunpeng920-2p4n128c.xml */
static const unsigned fix_slit4[16] = {
	10, 16, 32, 33,
	16, 10, 25, 32,
	32, 25, 10, 16,
	33, 32, 16, 10,
};
static const unsigned fix_slit1[1] = { 10 };

static int fix_cpu_node4[FIX_CPUS];
static int fix_cpu_node1[FIX_CPUS];

/* The lookahead of the simulators fix_sim creates: tests of exact timings run with both. */
static enum ilab_sim_lookahead fix_lookahead;

static inline int fix_load_profile(struct ilab_profile *p)
{
	char err[256];
	int rc = ilab_profile_load(FIX_PROFILE, p, err, sizeof(err));

	if (rc)
		fprintf(stderr, "profile: %s\n", err);
	return rc;
}

/* A simulator on 4 nodes (32 CPUs each) or 1 node (all CPUs), made active as plat's
 * backend. Tests set plat_sim directly: they exercise the engine, not plat_init(). */
static inline struct ilab_sim *fix_sim(unsigned nodes, uint64_t seed)
{
	struct ilab_profile p;
	struct ilab_sim_machine m;
	struct ilab_sim_config cfg = { .seed = seed, .lookahead = fix_lookahead };
	struct ilab_sim *s = NULL;
	char err[256];

	if (fix_load_profile(&p))
		return NULL;
	for (unsigned c = 0; c < FIX_CPUS; c++) {
		fix_cpu_node4[c] = (int)(c / (FIX_CPUS / 4));
		fix_cpu_node1[c] = 0;
	}
	m.nr_nodes = nodes;
	m.nr_cpus = FIX_CPUS;
	m.cpu_node = nodes == 4 ? fix_cpu_node4 : fix_cpu_node1;
	m.distance = nodes == 4 ? fix_slit4 : fix_slit1;
	if (ilab_sim_create(&m, &p, &cfg, &s, err, sizeof(err))) {
		fprintf(stderr, "sim: %s\n", err);
		return NULL;
	}
	plat_sim = ilab_sim_ops(s);
	return s;
}

static inline void fix_sim_done(struct ilab_sim *s)
{
	plat_sim = NULL;
	ilab_sim_destroy(s);
}

/* The first CPU of node n on the 4-node machine. */
static inline int fix_cpu_of_node(unsigned n)
{
	return (int)(n * (FIX_CPUS / 4));
}

#endif
