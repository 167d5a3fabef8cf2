/* line_proto.h — the hot half of the cache-line protocol of lines.c (see there for the
 * protocol itself): a tracked access (sim_line_access) and one line of an access to simulated
 * memory (sim_mem_line_cost), inline so that ops.c's plat hooks, which run them tens of times
 * per simulated DMA map+unmap, do not pay a call, its register saves and a reload of the
 * fiber's fields for each. Only lines.c and ops.c include it. */
#ifndef ILAB_SIM_LINE_PROTO_H
#define ILAB_SIM_LINE_PROTO_H

#include "sim/sim_internal.h"

static inline bool sharer_test(const struct sim_line *l, unsigned slot)
{
	return (l->sharers[slot >> 6] >> (slot & 63)) & 1;
}

static inline void sharer_set(struct sim_line *l, unsigned slot)
{
	l->sharers[slot >> 6] |= 1ull << (slot & 63);
}

/* A cache-to-cache transfer to node r of a line whose freshest copy is at node o. For a line
 * of simulated memory the request goes through the home node's directory (r -> h, forwarded
 * h -> o, data o -> r): transfer_local + hop(r,h) + hop(h,o) + hop(o,r), where hop is the
 * one-way latency beyond the local one. When h is r or o this is the two-party xfer(o, r),
 * which is also what a host-memory line (no home) pays. */
static inline uint64_t xfer3_ns(const struct ilab_sim *s, unsigned r, unsigned o, int home)
{
	unsigned nn = s->nr_nodes, h;

	if (home < 0 || (unsigned)home == r || (unsigned)home == o)
		return s->xfer_ns[o * nn + r];
	h = (unsigned)home;
	return s->prof.transfer.local_ns + s->hop_ns[r * nn + h] + s->hop_ns[h * nn + o] +
	       s->hop_ns[o * nn + r];
}

/* Time for node n to invalidate every other copy of l (lines.c). */
static inline uint64_t sim_invalidate_ns(const struct ilab_sim *s, const struct sim_line *l,
					 unsigned n)
{
	unsigned nn = s->nr_nodes;

	if (s->inv_ns)
		return s->inv_ns[((n * (nn + 1) + (unsigned)(l->home + 1)) << nn) | l->sharer_nodes];
	return sim_invalidate_slow_ns(s, l->sharer_nodes, l->home, n);
}

/* Cost of bringing a copy of l to node n: from the cache holding the freshest copy, else
 * from the home node's last-level cache (a device wrote it there), else from the home's
 * DRAM (a host-memory line counts as local memory). */
static inline uint64_t fetch_ns(const struct ilab_sim *s, const struct sim_line *l, unsigned n)
{
	unsigned nn = s->nr_nodes;

	if (l->src_node >= 0)
		return xfer3_ns(s, n, (unsigned)l->src_node, l->home);
	if (l->home < 0) /* left in the L3 by a far atomic (sim_far_rmw), else memory */
		return (l->in_llc ? s->llc_ns : s->mem_ns)[n * nn + n];
	if (l->in_llc)
		return s->llc_ns[n * nn + (unsigned)l->home];
	return s->mem_ns[n * nn + (unsigned)l->home];
}

/* Empty the sharer bitset. A plain loop: the set is a few words (slots = CPUs + agents), and a
 * memset call per ownership change was a visible share of the host time. */
static inline void sharer_bits_clear(const struct ilab_sim *s, struct sim_line *l)
{
	uint64_t *w = l->sharers;

	for (unsigned i = 0, n = s->sharer_words; i < n; i++) {
		w[i] = 0;
		__asm__("" ::: "memory"); /* keep it a loop (no memset call) */
	}
}

static inline void sharers_clear(struct ilab_sim *s, struct sim_line *l)
{
	sharer_bits_clear(s, l);
	l->nr_sharers = 0;
	l->sharer_nodes = 0;
}

/* CPU `slot` of node n now holds the line exclusively (its write, or its RMW): every other copy
 * is gone, and the freshest data is in its cache. */
static inline void line_make_owner(struct ilab_sim *s, struct sim_line *l, unsigned slot,
				   unsigned n)
{
	sharer_bits_clear(s, l);
	sharer_set(l, slot);
	l->nr_sharers = 1;
	l->sharer_nodes = 1ull << n;
	l->owner = (int)slot;
	l->src_node = (int)n;
	l->in_llc = false;
}

/* Does slot hold l unique: its exclusive owner (M), or its only copy (E: a read miss on a line
 * no other cache held, which the flat model does not mark as owned)? */
static inline bool sim_holds_unique(const struct sim_line *l, unsigned slot)
{
	return l->owner == (int)slot || (l->nr_sharers == 1 && sharer_test(l, slot));
}

/* cache.atomics: does an RMW by slot execute at the line's home (its L3 slice) rather than in
 * the requester's L1? lse_far: always; lse_unique_near: unless the requester already holds
 * the line unique; lse_near and llsc: never. Both line models follow it (flat here and in
 * sim_line_access, home in lines.c). */
static inline bool sim_rmw_far(const struct ilab_sim *s, const struct sim_line *l, unsigned slot)
{
	int a = s->prof.cache_atomics;

	return a == ILAB_ATOMICS_LSE_FAR ||
	       (a == ILAB_ATOMICS_LSE_UNIQUE_NEAR && !sim_holds_unique(l, slot));
}

/* Flat model, a far atomic by a CPU of node n starting at `start`: every copy is recalled to
 * the home h (a dirty one written back; a line no cache holds comes from memory), the ALU
 * there executes and the old value goes back to the requester, who keeps no copy: the line
 * stays in the home's L3, nobody owns it. The home is the line's node, or for host memory the
 * requester's (flat counts host memory as local memory; homing it where it is first used, as
 * the home model does, put seed 001 further off: 78 of 113 figures against 79). The line is
 * busy until the ALU is done; the answer's trip back does not hold it. Returns the
 * requester's cost. */
static inline uint64_t sim_far_rmw(struct ilab_sim *s, struct sim_line *l, unsigned n,
				   uint64_t start)
{
	unsigned nn = s->nr_nodes, h = l->home >= 0 ? (unsigned)l->home : n;
	uint64_t c;

	if (l->nr_sharers)
		c = sim_invalidate_ns(s, l, h);
	else
		c = l->src_node < 0 && !l->in_llc ? s->mem_ns[h * nn + h] : 0;
	c += s->prof.atomic_local_ns;
	l->busy_until = start + c;
	sharer_bits_clear(s, l);
	l->nr_sharers = 0;
	l->sharer_nodes = 0;
	l->owner = -1;
	l->src_node = -1;
	l->in_llc = true;
	return c + s->llc_ns[n * nn + h];
}

static inline void sim_line_access(struct ilab_sim *s, struct sim_fiber *f, struct sim_line *l,
				   enum plat_access kind)
{
	struct sim_stats *st = f->stats;
	unsigned slot = f->slot, n = f->node;
	uint64_t start, wait, cost;

	if (l->retry_slot >= 0) {
		/* the immediate retry of this slot's failed cmpxchg does not queue behind its own
		 * hold; anyone else's access comes after the hold (busy_until) and ends it */
		start = l->retry_slot == (int)slot && f->pc.t <= l->retry_until
				? f->pc.t : sim_max64(f->pc.t, l->busy_until);
		l->retry_slot = -1;
	} else {
		start = sim_max64(f->pc.t, l->busy_until);
	}
	wait = start - f->pc.t;

	if (kind == PLAT_ACC_READ) {
		st->reads++;
		l->reads++;
		if (sharer_test(l, slot)) {
			st->hits++;
			cost = s->prof.cache_hit_ns;
		} else {
			st->misses++;
			cost = fetch_ns(s, l, n);
			st->transfer_ns += cost;
			l->transfer_ns += cost;
			l->transfers++;
			sharer_set(l, slot);
			l->nr_sharers++;
			l->sharer_nodes |= 1ull << n;
			l->owner = -1; /* M/E -> S */
		}
		f->pc.t = start + cost;
		if (l->src_node < 0) {
			/* first fill from memory: others reading it meanwhile get it from this
			 * cache once it has arrived, not before */
			l->src_node = (int)n;
			l->busy_until = f->pc.t;
		}
	} else {
		if (kind == PLAT_ACC_RMW) {
			st->rmws++;
		} else {
			st->writes++;
		}
		l->acquisitions++;
		l->agent_snap = -1; /* a device's snapshot of the line is stale now */
		if (kind == PLAT_ACC_RMW && sim_rmw_far(s, l, slot)) {
			st->misses++;
			cost = sim_far_rmw(s, l, n, start);
			st->transfer_ns += cost;
			l->transfer_ns += cost;
			l->transfers++;
			f->pc.t = start + cost;
			goto waited;
		}
		if (l->owner == (int)slot) {
			st->hits++;
			cost = kind == PLAT_ACC_RMW ? s->prof.atomic_local_ns : s->prof.cache_hit_ns;
		} else {
			bool have = sharer_test(l, slot);

			st->misses++;
			cost = have ? 0 : fetch_ns(s, l, n);
			if (l->nr_sharers > (have ? 1u : 0u)) {
				uint64_t inv = sim_invalidate_ns(s, l, n);

				if (inv > cost)
					cost = inv;
			}
			st->transfer_ns += cost;
			l->transfer_ns += cost;
			l->transfers++;
			line_make_owner(s, l, slot, n);
		}
		f->pc.t = start + cost;
		l->busy_until = f->pc.t;
	}
waited:
	if (wait) {
		st->line_wait_ns += wait;
		l->wait_ns += wait;
		if (wait > l->max_wait_ns)
			l->max_wait_ns = wait;
	}
}

/* One line of an access to simulated memory (ilab_sim_mem_access) by fiber f: updates where
 * the line's copies are and returns what this line costs. Plain memory is not a tracked word:
 * no serialisation (busy_until) and no scheduling point; the line only remembers its copies,
 * so that a CPU re-reading what it holds pays a hit and whoever reads what another agent wrote
 * pays the transfer from it. The protocol (CHI-like, a directory at the home node):
 *  - CPU read: hit if it holds a copy; else a copy from the cache holding the freshest one
 *    (through the home), from the home's last-level cache, or from the home's DRAM; it
 *    becomes a sharer (an exclusive owner elsewhere is downgraded);
 *  - CPU write: hit if it owns the line; else fetch (unless a sharer) and invalidate every
 *    other copy, whichever is longer; it becomes the exclusive owner;
 *  - device (agent) read, e.g. the SMMU fetching a command or walking a table: a snapshot
 *    (ReadOnce): the same fetch cost, no change to the CPUs' copies; the device keeps the
 *    snapshot until someone writes the line (reading the next entry of a line it just read
 *    costs a hit);
 *  - device write (an MSI, an event record): every cached copy is invalidated and the data
 *    goes to the home node's last-level cache (WriteUnique): the larger of reaching the
 *    home's cache and invalidating the farthest copy. */
static inline uint64_t sim_mem_line_cost(struct ilab_sim *s, struct sim_fiber *f,
					 struct sim_line *l, bool write)
{
	struct sim_stats *st = f->stats;
	unsigned slot = f->slot, n = f->node, nn = s->nr_nodes;
	uint64_t cost;

	if (f->kind == SIM_AGENT) {
		if (!write) {
			if (l->agent_snap == (int)slot) {
				st->hits++;
				return s->prof.cache_hit_ns;
			}
			st->misses++;
			l->agent_snap = (int)slot;
			return fetch_ns(s, l, n);
		}
		cost = l->home >= 0 ? s->llc_ns[n * nn + (unsigned)l->home] : s->prof.cache_hit_ns;
		if (l->nr_sharers)
			cost = sim_max64(cost, sim_invalidate_ns(s, l, n));
		sharers_clear(s, l);
		l->owner = -1;
		l->src_node = -1;
		l->in_llc = true;
		l->agent_snap = -1;
		st->misses++;
		return cost;
	}
	if (!write) {
		if (sharer_test(l, slot)) {
			st->hits++;
			return s->prof.cache_hit_ns;
		}
		st->misses++;
		cost = fetch_ns(s, l, n);
		sharer_set(l, slot);
		l->nr_sharers++;
		l->sharer_nodes |= 1ull << n;
		if (l->src_node < 0)
			l->src_node = (int)n;
		l->owner = -1;
		return cost;
	}
	l->agent_snap = -1;
	if (l->owner == (int)slot) {
		st->hits++;
		return s->prof.cache_hit_ns;
	}
	st->misses++;
	{
		bool have = sharer_test(l, slot);

		cost = have ? 0 : fetch_ns(s, l, n);
		if (l->nr_sharers > (have ? 1u : 0u))
			cost = sim_max64(cost, sim_invalidate_ns(s, l, n));
	}
	line_make_owner(s, l, slot, n);
	return cost;
}

#endif /* ILAB_SIM_LINE_PROTO_H */
