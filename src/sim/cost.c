/* cost.c — turns a machine profile and the topology's SLIT into the simulator's cost
 * matrices (memory latency, cache-line transfer, MMIO read and write, for every pair of
 * nodes), the ones derived from them (one-way hops, fills from a home's last-level cache),
 * the invalidation table and the lookahead. It is not where costs are charged (lines.c,
 * ops.c) nor where the per-distance formulas are defined (profile.c, ilab_profile_dist_ns).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

static int fill(struct ilab_sim *s, enum ilab_dist_kind kind, uint64_t *m, const char *what,
		char *err, size_t errlen)
{
	unsigned n = s->nr_nodes;

	for (unsigned a = 0; a < n; a++)
		for (unsigned b = 0; b < n; b++) {
			unsigned d = s->distance[a * n + b];

			if (ilab_profile_dist_ns(&s->prof, kind, d, &m[a * n + b])) {
				if (err)
					snprintf(err, errlen,
						 "%s: %s table has no entry for distance %u "
						 "(nodes %u -> %u)",
						 s->prof.source[0] ? s->prof.source : "profile", what, d,
						 a, b);
				return -EINVAL;
			}
		}
	return 0;
}

int sim_cost_init(struct ilab_sim *s, char *err, size_t errlen)
{
	size_t nn = (size_t)s->nr_nodes * s->nr_nodes;
	int rc;

	s->mem_ns = calloc(nn, sizeof(uint64_t));
	s->xfer_ns = calloc(nn, sizeof(uint64_t));
	s->mmio_rd_ns = calloc(nn, sizeof(uint64_t));
	s->mmio_wr_ns = calloc(nn, sizeof(uint64_t));
	if (!s->mem_ns || !s->xfer_ns || !s->mmio_rd_ns || !s->mmio_wr_ns)
		return -ENOMEM;
	rc = fill(s, ILAB_DIST_MEM, s->mem_ns, "memory latency", err, errlen);
	if (!rc)
		rc = fill(s, ILAB_DIST_TRANSFER, s->xfer_ns, "cache transfer", err, errlen);
	if (!rc)
		rc = fill(s, ILAB_DIST_MMIO_READ, s->mmio_rd_ns, "MMIO read", err, errlen);
	if (!rc)
		rc = fill(s, ILAB_DIST_MMIO_WRITE, s->mmio_wr_ns, "MMIO write", err, errlen);
	if (rc)
		return rc;
	/* One-way interconnect latency beyond local, half of a remote memory round trip's
	 * excess: hop(a, b) = (mem(a, b) - mem(a, a)) / 2. A line in the home node's last-level
	 * cache: llc(a, h) = llc_local + 2 hop(a, h). */
	s->hop_ns = calloc(nn, sizeof(uint64_t));
	s->llc_ns = calloc(nn, sizeof(uint64_t));
	if (!s->hop_ns || !s->llc_ns)
		return -ENOMEM;
	for (unsigned a = 0; a < s->nr_nodes; a++)
		for (unsigned b = 0; b < s->nr_nodes; b++) {
			uint64_t m = s->mem_ns[a * s->nr_nodes + b], l = s->mem_ns[a * s->nr_nodes + a];

			s->hop_ns[a * s->nr_nodes + b] = m > l ? (m - l) / 2 : 0;
			s->llc_ns[a * s->nr_nodes + b] = s->prof.llc_local_ns + (m > l ? m - l : 0);
		}
	return sim_invalidate_table_init(s);
}

/* The model's lookahead: the smallest virtual time in which one agent's access to a line can
 * change what another agent's access costs or sees. Every such path pays one of these before
 * the other agent can observe the result (docs/simulation.md, "Lookahead"): a cache-to-cache
 * transfer or an invalidation (xfer, and the home-routed transfer, which is transfer_local
 * plus non-negative hops), a fill of a line a device wrote into the home's last-level cache
 * (llc), a fill from memory that others then get from the filler's cache (mem). MMIO is not
 * in the list: it is always strictly ordered. */
uint64_t sim_cost_lookahead_ns(const struct ilab_sim *s)
{
	size_t nn = (size_t)s->nr_nodes * s->nr_nodes;
	uint64_t l = s->prof.transfer.local_ns;

	/* cache.contention: home: a request to a home on the requester's node arrives there at
	 * once, and its place in the home's queue is decided on arrival: no lookahead */
	if (sim_home_mode(s))
		return 0;
	for (size_t i = 0; i < nn; i++) {
		l = l < s->xfer_ns[i] ? l : s->xfer_ns[i];
		l = l < s->llc_ns[i] ? l : s->llc_ns[i];
		l = l < s->mem_ns[i] ? l : s->mem_ns[i];
	}
	return l;
}
