/* lines.c — the cache-line model of tracked shared words: a hash table keyed by address >> 6,
 * each line with its owner, sharers, where its freshest copy is, and until when it is busy, so
 * that contending accesses serialise and pay transfer latency by NUMA distance. Also the
 * waiters parked on a line by plat_poll. It is not a cache simulator: only tracked words,
 * polled words and the lines of simulated memory accessed through ilab_sim_mem_access (queue
 * entries, PTEs, MSI slots) have lines; capacity and associativity are not modelled.
 *
 * The protocol, per access by CPU (or agent) c on node n at virtual time t:
 *  - every access starts at max(t, busy_until): a line being transferred or atomically updated
 *    is not available to anyone else before that ends;
 *  - read: a hit (c holds a copy) costs cache_hit_ns; a miss costs the transfer from the node
 *    of the freshest copy, or the local memory latency for a line no cache holds yet (that
 *    first fill holds the line until it arrives); c becomes a sharer and an exclusive owner
 *    is downgraded. Other reads do not extend busy_until: sharers read in parallel;
 *  - write / RMW: if c owns the line exclusively, it costs cache_hit_ns (write) or
 *    atomic_local_ns (RMW). Otherwise c needs the data (transfer, as for a read miss, unless it
 *    is a sharer) and every other copy invalidated (the farthest sharer's transfer latency):
 *    it pays the larger of the two, becomes the exclusive owner, and the line is busy until
 *    the access completes. So N CPUs hammering one line get one access per transfer latency.
 *
 * Lines of simulated physical memory (host ranges registered with ilab_sim_mem_home) have a
 * home node: a fill from memory costs the latency from the reader's node to that home, and a
 * write by an agent (a device's DMA or MSI: plat_wrote from an agent) goes to the home node's
 * last-level cache (WriteUnique), so every cached copy is invalidated and the next reader pays
 * the fill from there (llc_ns). Other lines (host heap: locks, counters) count as local memory
 * on a first fill.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/sim_internal.h"
#include "sim/line_proto.h"

#define LINE_CHUNK 256
#define SIM_LCACHE_BYTES ((size_t)sizeof(struct sim_line_slot) << SIM_LCACHE_BITS)

/* Four neighbouring lines (a queue's consecutive entries, a PTE table's) hash to four
 * neighbouring slots, one host cache line of the table: a queue walking into lines it has not
 * touched for a while misses there once per four lines, not once per line. (The table's
 * order is not visible in any result: statistics aggregate by name.) */
static inline unsigned line_hash(uintptr_t key, unsigned bits)
{
	return (unsigned)(((uint64_t)(key >> 2) * 0x9E3779B97F4A7C15ull) >> (64 - (bits - 2))) << 2 |
	       (unsigned)(key & 3);
}

static int lines_grow(struct ilab_sim *s)
{
	unsigned bits = s->lines_bits + 1;
	size_t n = (size_t)1 << bits;
	struct sim_line_slot *t = calloc(n, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < ((size_t)1 << s->lines_bits); i++) {
		struct sim_line_slot *o = &s->lines[i];
		unsigned h;

		if (!o->line)
			continue;
		h = line_hash(o->key, bits);
		while (t[h].line)
			h = (h + 1) & (unsigned)(n - 1);
		t[h] = *o;
	}
	free(s->lines);
	s->lines = t;
	s->lines_bits = bits;
	return 0;
}

static struct sim_line *line_alloc(struct ilab_sim *s)
{
	size_t sz = sizeof(struct sim_line) + s->sharer_words * sizeof(uint64_t);
	struct sim_line *l;

	sz = (sz + 15) & ~(size_t)15;
	if (!s->nr_line_chunks || s->chunk_used == LINE_CHUNK) {
		void **chunks = realloc(s->line_chunks, (s->nr_line_chunks + 1) * sizeof(*chunks));
		void *c;

		if (!chunks)
			return NULL;
		s->line_chunks = chunks;
		c = calloc(LINE_CHUNK, sz);
		if (!c)
			return NULL;
		s->line_chunks[s->nr_line_chunks++] = c;
		s->chunk_used = 0;
	}
	l = (struct sim_line *)((char *)s->line_chunks[s->nr_line_chunks - 1] + sz * s->chunk_used++);
	l->owner = -1;
	l->src_node = -1;
	l->home = -1;
	l->retry_slot = -1;
	l->agent_snap = -1;
	return l;
}

/* The line with this key (address >> 6), created on first use, and remembered in the
 * recent-lines cache (sim_line_get looks there first). Running out of host memory here cannot
 * be reported through plat (its accesses return no error): the process aborts with a message. */
struct sim_line *sim_line_lookup(struct ilab_sim *s, uintptr_t key)
{
	struct sim_line_slot *c = &s->lcache[sim_lcache_idx(key)];
	unsigned mask, h;
	struct sim_line *l;

	mask = (1u << s->lines_bits) - 1;
	h = line_hash(key, s->lines_bits);
	while (s->lines[h].line) {
		if (s->lines[h].key == key) {
			l = s->lines[h].line;
			goto found;
		}
		h = (h + 1) & mask;
	}
	l = line_alloc(s);
	if (!l)
		goto oom;
	l->key = key;
	l->home = s->nr_mem_ranges ? sim_mem_home_of(s, key << 6) : -1;
	s->lines[h].key = key;
	s->lines[h].line = l;
	if (++s->lines_n * 2 > (1u << s->lines_bits) && lines_grow(s))
		goto oom;
found:
	c->key = key;
	c->line = l;
	return l;
oom:
	fprintf(stderr, "iommulab sim: out of memory tracking cache lines\n");
	abort();
}

/* ---- forgetting the lines of reallocated memory ------------------------------------------ */

static int line_find_slot(const struct ilab_sim *s, uintptr_t key)
{
	unsigned mask = (1u << s->lines_bits) - 1, h = line_hash(key, s->lines_bits);

	while (s->lines[h].line) {
		if (s->lines[h].key == key)
			return (int)h;
		h = (h + 1) & mask;
	}
	return -1;
}

/* Remove slot i from the open-addressing table: later entries of its probe run move back so
 * that every remaining key is still found from its hash. */
static void line_slot_delete(struct ilab_sim *s, unsigned i)
{
	unsigned mask = (1u << s->lines_bits) - 1, j = i;

	for (;;) {
		unsigned k;

		j = (j + 1) & mask;
		if (!s->lines[j].line)
			break;
		k = line_hash(s->lines[j].key, s->lines_bits);
		/* the entry at j stays when its home slot k lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		s->lines[i] = s->lines[j];
		i = j;
	}
	s->lines[i].line = NULL;
	s->lines[i].key = 0;
	s->lines_n--;
}

/* Move the line in slot i out of the table, into the retired list. */
static void line_retire_slot(struct ilab_sim *s, unsigned i)
{
	uintptr_t key = s->lines[i].key;
	struct sim_line_slot *c = &s->lcache[sim_lcache_idx(key)];
	struct sim_line *l = s->lines[i].line;

	if (s->nr_retired == s->retired_cap) {
		unsigned cap = s->retired_cap ? 2 * s->retired_cap : 64;
		struct sim_line **r = realloc(s->retired, cap * sizeof(*r));

		if (!r) {
			fprintf(stderr, "iommulab sim: out of memory tracking cache lines\n");
			abort();
		}
		s->retired = r;
		s->retired_cap = cap;
	}
	s->retired[s->nr_retired++] = l;
	line_slot_delete(s, i);
	if (c->key == key)
		c->key = ~(uintptr_t)0;
}

/* A line someone is parked on stays: polling freed memory is a bug the deadlock report will
 * show, and its waiters must stay reachable. */
static bool line_retirable(const struct ilab_sim *s, unsigned i, uintptr_t first, uintptr_t last)
{
	return s->lines[i].line && s->lines[i].key >= first && s->lines[i].key <= last &&
	       !s->lines[i].line->waiters;
}

/* A new object's memory: kzalloc'd memory on a real machine may well be in some cache, but
 * here the host's malloc decides which addresses come back, and a line that kept the history
 * of a freed object (its owner, sharers, busy time, name) would make the simulated results
 * depend on that choice — on the size of unrelated host structures (measured: 32 bytes more
 * in struct ilab_sim changed a lazy-mode run's loop count, because a re-created flush queue
 * landed on its predecessor's lines). So the lines of freshly allocated memory start as
 * never-touched ones; the old line objects keep their statistics. */
void sim_lines_forget(struct ilab_sim *s, const void *addr, size_t bytes)
{
	uintptr_t first, last;

	if (!s || !bytes || !s->lines_n)
		return;
	first = (uintptr_t)addr >> 6;
	last = ((uintptr_t)addr + bytes - 1) >> 6;
	if (last - first >= (uintptr_t)1 << s->lines_bits) {
		/* a large block: look through the table instead of every line of the block */
		for (unsigned i = 0; i < 1u << s->lines_bits; i++)
			while (line_retirable(s, i, first, last))
				line_retire_slot(s, i); /* may move another entry to i */
		return;
	}
	for (uintptr_t k = first; k <= last; k++) {
		int i = line_find_slot(s, k);

		if (i >= 0 && line_retirable(s, (unsigned)i, first, last))
			line_retire_slot(s, (unsigned)i);
	}
}

/* Largest transfer latency from any node of `nodes` (a mask) to node n, for a line homed on
 * `home` (-1: host memory): the time to invalidate every copy (the acknowledgements come
 * back in parallel). */
uint64_t sim_invalidate_slow_ns(const struct ilab_sim *s, uint64_t nodes, int home, unsigned n)
{
	uint64_t worst = 0;

	while (nodes) {
		unsigned m = (unsigned)__builtin_ctzll(nodes);
		uint64_t c = xfer3_ns(s, n, m, home);

		nodes &= nodes - 1;
		if (c > worst)
			worst = c;
	}
	return worst;
}

/* The same for every (requester, home, sharer-node set) of a small machine, so that the
 * protocol's invalidations, tens per simulated map+unmap at 128 CPUs, are one load: 4 nodes
 * make 320 entries, 6 nodes 2 688. Costs are profile latencies, far below 2^32 ns. */
int sim_invalidate_table_init(struct ilab_sim *s)
{
	unsigned nn = s->nr_nodes, masks = 1u << nn;

	if (nn > SIM_INV_TABLE_NODES)
		return 0;
	s->inv_ns = calloc((size_t)nn * (nn + 1) * masks, sizeof(*s->inv_ns));
	if (!s->inv_ns)
		return -ENOMEM;
	for (unsigned n = 0; n < nn; n++)
		for (unsigned h = 0; h <= nn; h++)
			for (unsigned m = 0; m < masks; m++) {
				uint64_t c = sim_invalidate_slow_ns(s, m, (int)h - 1, n);

				if (c > UINT32_MAX)
					c = UINT32_MAX; /* never: profile latencies are checked */
				s->inv_ns[((n * (nn + 1) + h) << nn) | m] = (uint32_t)c;
			}
	return 0;
}

/* Someone wrote a word of l by other means than a tracked store (a device model, an MMIO
 * register, a plain memory write): the writer already paid for the write itself; the line now
 * lives with the writer, so pollers pay the transfer from the writer's node when they re-read. */
void sim_line_wrote(struct ilab_sim *s, struct sim_fiber *f, struct sim_line *l)
{
	if (f->kind == SIM_AGENT && l->home >= 0) {
		/* A device writes simulated memory, not a cache: the line is only in memory now
		 * (the writer paid for the write with plat_mem_access). */
		sharer_bits_clear(s, l);
		l->nr_sharers = 0;
		l->sharer_nodes = 0;
		l->owner = -1;
		l->src_node = -1;
		l->in_llc = true; /* a device's write allocates in the home's last-level cache */
		l->agent_snap = -1;
		l->busy_until = sim_max64(l->busy_until, f->pc.t);
		l->wrote++;
		return;
	}
	sharer_bits_clear(s, l);
	sharer_set(l, f->slot);
	l->nr_sharers = 1;
	l->sharer_nodes = 1ull << f->node;
	l->owner = (int)f->slot;
	l->src_node = (int)f->node;
	l->in_llc = false;
	l->agent_snap = -1;
	l->busy_until = sim_max64(l->busy_until, f->pc.t);
	l->wrote++;
}

/* Wake every fiber parked on l: they become runnable at `when` (the write's time) and their
 * re-read pays the transfer from the writer. */
void sim_line_wake(struct ilab_sim *s, struct sim_line *l, uint64_t when)
{
	struct sim_fiber *w = l->waiters;

	l->waiters = NULL;
	while (w) {
		struct sim_fiber *next = w->wnext;

		if (s->trace)
			sim_trace_wake(s, s->cur, w, l->name, when);
		w->wait_line = NULL;
		w->wnext = w->wprev = NULL;
		sim_make_runnable(s, w, when);
		w = next;
	}
}

void sim_line_unwait(struct sim_fiber *f)
{
	struct sim_line *l = f->wait_line;

	if (!l)
		return;
	if (f->wprev)
		f->wprev->wnext = f->wnext;
	else
		l->waiters = f->wnext;
	if (f->wnext)
		f->wnext->wprev = f->wprev;
	f->wait_line = NULL;
	f->wnext = f->wprev = NULL;
}

/* ---- cache.contention: home ------------------------------------------------------------- *
 *
 * The line's home (its directory / L3 slice) serves the requests that miss one at a time, in
 * the order they arrive there; each occupies it for cache.home_occupancy_ns (a write or a near
 * RMW until its requester has the line: the home blocks the line until the CompAck). A
 * request's state change is decided when the home accepts it (arrival), and its host-level
 * effect (the value a load returns, a CAS's compare, a store) happens at its service there:
 * the caller does the host operation right after this returns, with every fiber behind the
 * service time already run. So a CAS whose expected value went stale while it queued fails,
 * and N readers of one line are served one after the other. Hits (a sharer's read, the
 * owner's write or near RMW) do not visit the home. Requests that arrive at the same instant
 * are ordered by the simulator's seeded stream (sim_sync's rule for ties, sched.c).
 * docs/simulation.md, "Line contention model". */

static void home_wait_stats(struct sim_stats *st, struct sim_line *l, uint64_t wait)
{
	if (!wait)
		return;
	st->line_wait_ns += wait;
	l->wait_ns += wait;
	if (wait > l->max_wait_ns)
		l->max_wait_ns = wait;
	if (sim_active && sim_active->trace)
		sim_trace_line(sim_active, l->name, "queued ns", (int64_t)wait);
}

/* A hit: no home visit. Returns false when the access misses. */
static bool home_hit(struct ilab_sim *s, struct sim_fiber *f, struct sim_line *l,
		     enum plat_access kind)
{
	struct sim_stats *st = f->stats;

	if (kind == PLAT_ACC_READ) {
		if (!sharer_test(l, f->slot) || l->src_node < 0)
			return false;
		st->reads++;
		l->reads++;
		st->hits++;
		f->pc.t += s->prof.cache_hit_ns;
		return true;
	}
	if (l->owner != (int)f->slot)
		return false;
	if (kind == PLAT_ACC_RMW && sim_rmw_far(s, l, f->slot))
		return false; /* lse_far: executes at the home whatever the requester holds */
	/* the owner holds the line unique, so its atomic executes in its L1 */
	st->hits++;
	l->acquisitions++;
	l->agent_snap = -1;
	if (kind == PLAT_ACC_RMW) {
		st->rmws++;
		l->home_rmws++;
		f->pc.t += s->prof.atomic_local_ns;
	} else {
		st->writes++;
		f->pc.t += s->prof.cache_hit_ns;
	}
	if (kind != PLAT_ACC_RMW || s->prof.cache_atomics != ILAB_ATOMICS_LLSC)
		l->version++; /* LL/SC: the store-exclusive counts it (sim_line_access_home) */
	return true;
}

/* Is this access a miss whatever the fibers behind f do? A read by a non-sharer, a write by a
 * non-owner, a far RMW. (A hit may still become a miss: others can take the line away.) */
static bool home_certain_miss(const struct ilab_sim *s, const struct sim_fiber *f,
			      const struct sim_line *l, enum plat_access kind)
{
	if (kind == PLAT_ACC_READ)
		return !sharer_test(l, f->slot);
	return l->owner != (int)f->slot || (kind == PLAT_ACC_RMW && sim_rmw_far(s, l, f->slot));
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A miss accepted by home h at time `serve` (the home is free): the line's new state and the
 * time the requester is done. Costs: the flat model's transfer (fetch, invalidation) less the
 * request's leg to the home (already travelled), plus the occupancy; a far atomic instead
 * gathers the line at the home, executes there and answers. */
static uint64_t home_serve(struct ilab_sim *s, struct sim_fiber *f, struct sim_line *l,
			   enum plat_access kind, unsigned h, uint64_t hop, uint64_t serve)
{
	struct sim_stats *st = f->stats;
	unsigned slot = f->slot, n = f->node, nn = s->nr_nodes;
	uint64_t occ = s->prof.home_occupancy_ns, c, done;

	st->misses++;
	if (kind == PLAT_ACC_READ) {
		st->reads++;
		l->reads++;
		c = fetch_ns(s, l, n);
		sharer_set(l, slot);
		l->nr_sharers++;
		l->sharer_nodes |= 1ull << n;
		/* no other copy: granted unique (MESI's Exclusive), so a later write or atomic of
		 * this requester is a hit; with other copies the line is shared */
		l->owner = l->nr_sharers == 1 ? (int)slot : -1;
		if (l->src_node < 0)
			l->src_node = (int)n;
		done = serve + occ + sat_sub(c, hop);
		l->home_free = serve + occ;
	} else if (kind == PLAT_ACC_RMW && sim_rmw_far(s, l, slot)) {
		/* every copy is recalled to the home (a dirty one written back), the ALU there
		 * executes, the old value goes back to the requester; nobody holds the line after */
		st->rmws++;
		l->home_rmws++;
		l->acquisitions++;
		c = l->nr_sharers ? sim_invalidate_ns(s, l, h)
				  : (l->src_node < 0 && !l->in_llc ? s->mem_ns[h * nn + h] : 0);
		l->home_free = serve + occ + c + s->prof.atomic_local_ns;
		done = l->home_free + sat_sub(s->llc_ns[n * nn + h], hop);
		sharers_clear(s, l);
		l->owner = -1;
		l->src_node = -1;
		l->in_llc = true;
		l->agent_snap = -1;
		l->version++;
	} else {
		bool have = sharer_test(l, slot);

		c = have ? 0 : fetch_ns(s, l, n);
		if (l->nr_sharers > (have ? 1u : 0u))
			c = sim_max64(c, sim_invalidate_ns(s, l, n));
		done = serve + occ + sat_sub(c, hop);
		l->acquisitions++;
		l->agent_snap = -1;
		if (kind == PLAT_ACC_RMW) {
			st->rmws++;
			l->home_rmws++;
			done += s->prof.atomic_local_ns;
		} else {
			st->writes++;
		}
		if (kind != PLAT_ACC_RMW || s->prof.cache_atomics != ILAB_ATOMICS_LLSC)
			l->version++;
		line_make_owner(s, l, slot, n);
		l->home_free = done; /* blocked until the requester has it */
	}
	st->transfer_ns += c;
	l->transfer_ns += c;
	l->transfers++;
	return done;
}

void sim_line_access_home(struct ilab_sim *s, struct sim_fiber *f, struct sim_line *l,
			  enum plat_access kind)
{
	bool llsc = kind == PLAT_ACC_RMW && s->prof.cache_atomics == ILAB_ATOMICS_LLSC;
	unsigned n = f->node, h, ver;
	uint64_t hop, serve, done;

	for (;;) {
		/* A certain miss goes straight to the home and synchronises once, at its arrival
		 * there: whether this fiber holds a copy (or the line unique) changes only by its
		 * own requests, so no fiber behind it can turn the miss into a hit. (A host line
		 * with no home yet waits: who first misses on it decides where it is homed.) */
		if (!(l->home >= 0 && home_certain_miss(s, f, l, kind)))
			sim_sync(s, f);
		if (home_hit(s, f, l, kind)) {
			if (!llsc)
				return;
			ver = l->version;
		} else {
			/* host memory: homed where a simulated CPU or device first misses on it
			 * (the set-up context's initialisation does not decide: docs/simulation.md) */
			if (l->home < 0 && f != &s->main)
				l->home = (int)n;
			h = l->home >= 0 ? (unsigned)l->home : n;
			hop = s->hop_ns[n * s->nr_nodes + h];
			/* travel to the home; whoever arrives there first is accepted first */
			f->pc.t += hop;
			sim_sync(s, f); /* a tie at the home is drawn there (sched.c) */
			serve = sim_max64(f->pc.t, l->home_free);
			home_wait_stats(f->stats, l, serve - f->pc.t);
			done = home_serve(s, f, l, kind, h, hop, serve);
			ver = l->version;
			/* The host effect (the caller's load, compare or store) happens now, at the
			 * acceptance, and stands for the service at `serve`: the home serves in
			 * acceptance order, the line's next state was decided at the acceptance (no
			 * fiber can hit on it before `serve` in a way that changes its value: a write
			 * or RMW took every other copy, a read changes no value), and every later
			 * request is accepted, so takes effect, after this one. That closed form
			 * replaces a synchronisation at `serve`, the costliest of an attempt's three
			 * (a queued request's wait is a switch every time). */
			f->pc.t = done;
			if (!llsc)
				return;
		}
		/* LL/SC: the load-exclusive above; the store-exclusive after the compare succeeds
		 * only if no other write or RMW to the line was accepted in between */
		f->pc.t += s->prof.atomic_local_ns;
		sim_sync(s, f);
		if (l->version == ver) {
			l->version++;
			return;
		}
		f->stats->excl_retries++;
	}
}

const char *sim_intern(struct ilab_sim *s, const char *name)
{
	char **names, *copy;

	for (unsigned i = 0; i < s->nr_names; i++)
		if (!strcmp(s->names[i], name))
			return s->names[i];
	names = realloc(s->names, (s->nr_names + 1) * sizeof(*names));
	if (!names)
		return NULL;
	s->names = names;
	copy = strdup(name);
	if (!copy)
		return NULL;
	s->names[s->nr_names++] = copy;
	return copy;
}

int sim_mem_home_of(const struct ilab_sim *s, uintptr_t addr)
{
	for (unsigned i = 0; i < s->nr_mem_ranges; i++)
		if (addr >= s->mem_ranges[i].lo && addr < s->mem_ranges[i].hi)
			return s->mem_ranges[i].node;
	return -1;
}

/* After the ranges changed: every existing line looks its home up again. */
void sim_lines_rehome(struct ilab_sim *s)
{
	for (size_t i = 0; i < ((size_t)1 << s->lines_bits); i++)
		if (s->lines[i].line) {
			int h = sim_mem_home_of(s, s->lines[i].key << 6);

			/* the home model's host-memory homes (first touch) stay */
			if (h >= 0 || !sim_home_mode(s))
				s->lines[i].line->home = h;
		}
}

int sim_lines_init(struct ilab_sim *s)
{
	s->sharer_words = (s->nr_slots + 63) / 64;
	/* Mapped, not malloc'd: which tracked words share a 64-byte line depends on where the
	 * host heap puts the simulated program's structures, and the simulator's own buffers
	 * must not move them (a 16 KiB malloc here shifted later allocations and so changed
	 * simulated results). */
	s->lcache = mmap(NULL, SIM_LCACHE_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->lcache == MAP_FAILED) {
		s->lcache = NULL;
		return -ENOMEM;
	}
	/* no address >> 6 has its top bits set: ~0 marks an empty cache entry */
	for (unsigned i = 0; i < (1u << SIM_LCACHE_BITS); i++)
		s->lcache[i].key = ~(uintptr_t)0;
	s->lines_bits = 10;
	s->lines = calloc((size_t)1 << s->lines_bits, sizeof(*s->lines));
	return s->lines ? 0 : -ENOMEM;
}

void sim_lines_fini(struct ilab_sim *s)
{
	for (unsigned i = 0; i < s->nr_line_chunks; i++)
		free(s->line_chunks[i]);
	free(s->line_chunks);
	free(s->retired);
	s->retired = NULL;
	s->nr_retired = s->retired_cap = 0;
	free(s->lines);
	if (s->lcache)
		munmap(s->lcache, SIM_LCACHE_BYTES);
	s->lcache = NULL;
	for (unsigned i = 0; i < s->nr_names; i++)
		free(s->names[i]);
	free(s->names);
	s->line_chunks = NULL;
	s->lines = NULL;
	s->names = NULL;
}
