/* sim_internal.h — the simulator's private data structures, shared by the files of src/sim:
 * fibers and their virtual clocks, the run queue (a sorted ring), tracked cache lines and the
 * cost matrices. It is not an API: only src/sim includes it (the public one is iommulab/sim.h).
 */
#ifndef ILAB_SIM_INTERNAL_H
#define ILAB_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iommulab/plat.h"
#include "iommulab/sim.h"
#include "sim/fiber_arch.h"

#define SIM_MAX_NODES 64
#define SIM_MAX_AGENTS 256
#define SIM_ERR_MAX 1024
#define SIM_HIST_BUCKETS 64
#define SIM_MAX_MEM_RANGES 128
/* Deepest nesting of profiling scopes a fiber keeps (prof.c); deeper ones count as lost. */
#define SIM_PROF_DEPTH 16
/* Direct-mapped cache of recently used lines in front of the line hash table (lines.c): 16 KiB,
 * small enough to stay in the host's L1/L2, where the hash table's slots are not. */
#define SIM_LCACHE_BITS 10

/* Counters of one CPU, one agent or the set-up context. */
struct sim_stats {
	uint64_t threads;      /* fibers that ran here (CPUs) */
	uint64_t reads, writes, rmws;
	uint64_t hits, misses;
	uint64_t rmw_retries;  /* cmpxchg that lost */
	uint64_t excl_retries; /* cache.atomics: llsc: store-exclusives that lost the monitor */
	uint64_t line_wait_ns; /* waiting for a line busy with another CPU's access */
	uint64_t transfer_ns;  /* latency paid to bring lines (misses, invalidations) */
	uint64_t polls, poll_wakeups, poll_timeouts, parked_ns;
	uint64_t charged_ns, delayed_ns;
	uint64_t mem_accesses, mem_bytes_local, mem_bytes_remote, mem_ns;
	uint64_t mmio_reads, mmio_writes, mmio_ns;
	uint64_t end_ns;       /* virtual clock when its last fiber finished */
};

enum sim_fiber_kind { SIM_MAIN, SIM_THREAD, SIM_AGENT };
enum sim_fiber_state { SIM_RUNNING, SIM_RUNNABLE, SIM_PARKED, SIM_DEAD };

struct sim_line;
struct sim_agent;

/* One call path of the breakdown (prof.c): a scope entered from its parent's. Times are
 * simulated ns summed over the CPUs' threads. */
struct sim_prof_node {
	struct sim_prof_node *parent;
	struct sim_prof_node *child[PLAT_SCOPE_NR]; /* created on first entry */
	int id;          /* enum plat_scope; -1 for the root ("other") */
	uint64_t self_ns;  /* while this was the innermost open scope */
	uint64_t total_ns; /* from entry to leave, children included */
	uint64_t calls, events;
};

/* Threads of one ilab_sim_run_threads call: the last to finish wakes the caller. */
struct sim_join {
	unsigned left;
	uint64_t end;
	struct sim_fiber *waiter;
};

struct sim_fiber {
	struct fiber_arch_ctx ctx; /* first: nothing depends on it, but keeps it hot */
	struct ilab_sim *sim;
	/* virtual clock (pc.t), CPU (pc.cpu, -1 for agents and the set-up context) and where its
	 * compute and delays are counted: read and moved inline by plat (plat_sim_cur) */
	struct plat_sim_clock pc;
	uint64_t key;  /* run-queue key: when it may run next */
	uint64_t seq;  /* run-queue tie-break: order of insertion */
	int heap_idx;  /* 0 while in the run queue, -1 when not in it */
	enum sim_fiber_kind kind;
	enum sim_fiber_state state;
	unsigned slot; /* identity in line sharer sets: cpu, or nr_cpus + 1 + agent index */
	unsigned node;
	unsigned id;   /* creation order, for deterministic reports */
	struct sim_stats *stats;

	/* parked in plat_poll: the line watched, doubly linked list of its waiters */
	struct sim_line *wait_line;
	struct sim_fiber *wnext, *wprev;
	const char *wait_what; /* for the deadlock report */

	/* body */
	plat_thread_fn fn;
	unsigned idx;
	void *arg;
	struct sim_join *join;
	struct sim_agent *agent;

	/* profiling (prof.c): the innermost open scope, when the clock was last attributed,
	 * entry times of the open scopes, scopes entered past SIM_PROF_DEPTH */
	struct sim_prof_node *prof_cur;
	uint64_t prof_mark;
	unsigned prof_depth, prof_skip;
	uint64_t prof_enter[SIM_PROF_DEPTH];
	uint32_t trace_open; /* trace.c: bit d = the open scope at depth d has its B written */
	uint64_t trace_wake;        /* trace.c: the flow of the write that woke this poll, 0 none */
	const char *trace_wake_name; /* its name ("release <line>") */

	void *stack; /* mapping (guard page included) */
	size_t stack_map;
	struct sim_fiber *next_free;
	struct sim_fiber *next_all;
};

struct sim_agent {
	struct sim_fiber *f;
	plat_agent_fn fn;
	void *arg;
	bool stop, done;
	unsigned index;
	int node;
	char name[48];
	struct sim_fiber *joiner;
	struct sim_stats stats;
};

/* One tracked 64-byte line of host memory.
 *
 * Field order: what a tracked access touches on every call (retry_slot to sharers) sits at
 * the end, next to the sharer bitset that ends the struct (line_alloc), so that a hit
 * costs two host cache lines of it, not three or four; statistics and what only lookups,
 * reports or misses use come first. 152 bytes on LP64 (asserted below, so that a new field
 * makes whoever adds it re-check this layout; simulated results do not depend on it). */
struct sim_line {
	/* cold: lookups, reports, misses */
	uintptr_t key;        /* address >> 6 */
	const char *name;
	uint64_t rmw_retries, wrote, wait_ns, max_wait_ns, transfers, transfer_ns;
	/* cache.contention: home: when the line's home takes its next request (the end of the
	 * last request's occupancy; FIFO by arrival) */
	uint64_t home_free;
	union {
		uint64_t retry_until; /* flat: see retry_slot */
		uint64_t home_rmws;   /* home: atomic requests served (CAS attempts included) */
	};
	uint64_t sharer_nodes;
	unsigned nr_sharers;
	int home;             /* node of the simulated memory holding it, -1 = host memory
			       * (cache.contention: home gives host memory a home too: lines.c) */
	bool in_llc;          /* (simulated memory, no cached copy) the data sits in the home
			       * node's last-level cache: a device wrote it there */
	int agent_snap;       /* a device (agent slot) holds a snapshot read since the last write */
	/* hot: every access */
	int retry_slot;       /* a cmpxchg by this slot just failed: it keeps the line for its
			       * immediate retry, until retry_until (-1: none) */
	int owner;            /* slot holding it exclusively (M/E), or -1 */
	uint64_t busy_until;  /* end of the last exclusive access: later ones queue behind it */
	uint64_t reads, acquisitions;
	int src_node;         /* node of the freshest copy, -1 = only in memory */
	unsigned version;     /* home: writes and RMWs served (LL/SC's monitor, lines.c) */
	struct sim_fiber *waiters;
	uint64_t sharers[];   /* bitset over slots (sharer_words), in the same allocation: no
			       * pointer to load before the bit */
};
#if defined(__LP64__)
_Static_assert(sizeof(struct sim_line) == 152, "struct sim_line changed: re-check its hot-field layout");
#endif

/* One run-queue entry: the sort key next to the fiber (see sched.c). */
struct sim_heap_ent {
	uint64_t key, seq;
	struct sim_fiber *f;
};

struct sim_line_slot {
	uintptr_t key;
	struct sim_line *line;
};

/* Host memory that backs simulated physical memory of one node (ilab_sim_mem_home). */
struct sim_mem_range {
	uintptr_t lo, hi; /* [lo, hi) */
	int node;
};

struct sim_hist {
	const char *name;
	uint64_t count, sum, min, max;
	uint64_t bucket[SIM_HIST_BUCKETS];
};

struct ilab_sim {
	struct ilab_profile prof;
	unsigned nr_nodes, nr_cpus, nr_slots;
	int broken;         /* persistent error after a deadlock / time limit */
	int *cpu_node;
	unsigned *distance;
	/* cost matrices [from * nr_nodes + to] */
	uint64_t *mem_ns, *xfer_ns, *mmio_rd_ns, *mmio_wr_ns;
	/* one-way interconnect latency beyond the local one: (mem(d) - mem(10)) / 2, and a hit
	 * in the home node's last-level cache from a requester's node */
	uint64_t *hop_ns, *llc_ns;
	/* sim_invalidate_ns precomputed for machines of up to SIM_INV_TABLE_NODES nodes:
	 * [((requester * (nr_nodes + 1) + home + 1) << nr_nodes) | sharer-node mask] (lines.c);
	 * NULL on larger machines, which take the loop */
	uint32_t *inv_ns;
	uint64_t seed, rng, time_limit;
	/* lookahead L (sched.c): a fiber runs on through tracked accesses, polls and wrotes while
	 * its clock is at most L past the earliest runnable fiber's; 0 = strict order */
	uint64_t lookahead;
	size_t stack_bytes;
	void *main_lock_node;  /* the set-up context's plat_spin_lock node (fibers: stack bottom) */

	/* scheduling */
	struct sim_fiber *cur;
	struct sim_fiber main;
	/* run queue (sched.c): heap_n entries in (key, seq) order from heap[rq_head], in a ring of
	 * heap_cap (a power of two) */
	struct sim_heap_ent *heap;
	unsigned heap_n, heap_cap, rq_head;
	uint64_t next_seq;
	uint64_t switches;
	unsigned nr_fibers; /* created, including recycled ones */
	int stall;          /* set when the set-up context is resumed because nothing can run */
	struct sim_fiber *free_fibers;
	struct sim_fiber *all_fibers;

	/* lines */
	struct sim_line_slot *lines;
	unsigned lines_bits, lines_n;
	struct sim_line_slot *lcache; /* 1 << SIM_LCACHE_BITS entries, key ~0 = empty */
	unsigned sharer_words;
	void **line_chunks;
	unsigned nr_line_chunks, chunk_used, chunk_cap;
	/* lines forgotten by sim_lines_forget (their memory was allocated again): out of the
	 * table, still in the statistics */
	struct sim_line **retired;
	unsigned nr_retired, retired_cap;
	char **names; /* interned line names */
	unsigned nr_names;
	struct sim_mem_range mem_ranges[SIM_MAX_MEM_RANGES];
	unsigned nr_mem_ranges;

	/* agents, statistics */
	struct sim_agent *agents[SIM_MAX_AGENTS];
	unsigned nr_agents;
	struct sim_stats *cpu_stats; /* nr_cpus */
	struct sim_stats main_stats;
	struct sim_hist *hists;
	unsigned nr_hists;
	uint64_t serial; /* this simulator's number among all created (ilab_sim_sample_dist) */

	/* the breakdown (prof.c): root = time outside every scope ("other") */
	bool prof_on; /* ilab_sim_breakdown_enable was called */
	struct sim_prof_node prof_root;
	uint64_t prof_unbalanced; /* leaves without an entry, scopes open when a thread ended */
	uint64_t prof_lost;       /* entries past SIM_PROF_DEPTH or without memory for a node */

	/* the timeline trace (trace.c): NULL when not traced */
	struct ilab_trace *trace;
	unsigned trace_pid;
	char trace_name[216];           /* its process's name, for the trace's stop message */
	bool trace_window;              /* CPU threads have started: trace_end_ns is set */
	uint64_t trace_end_ns;          /* nothing that starts later is written */
	unsigned char *trace_cpu_named; /* nr_cpus: its track has its name */
	char **trace_tracks;            /* named tracks (tid nr_cpus + k) */
	unsigned nr_trace_tracks;
	int64_t trace_count[PLAT_COUNT_NR]; /* plat_count_add sums */
	struct sim_trace_flow *trace_flows;  /* flows started, waiting for their end (trace.c) */

	char err[SIM_ERR_MAX];
};

/* The active simulator (ilab_sim_ops) */
extern struct ilab_sim *sim_active;

/* sched.c */
void sim_sync_slow(struct ilab_sim *s, struct sim_fiber *f, uint64_t slack);
void sim_yield(struct ilab_sim *s, struct sim_fiber *f);
void sim_park(struct ilab_sim *s, struct sim_fiber *f);
void sim_make_runnable(struct ilab_sim *s, struct sim_fiber *f, uint64_t when);
void sim_heap_remove(struct ilab_sim *s, struct sim_fiber *f);
int sim_stalled(struct ilab_sim *s, struct sim_fiber *f);
int sim_sched_init(struct ilab_sim *s);
void sim_sched_fini(struct ilab_sim *s);

/* lines.c */
int sim_lines_init(struct ilab_sim *s);
void sim_lines_fini(struct ilab_sim *s);
struct sim_line *sim_line_lookup(struct ilab_sim *s, uintptr_t key);
void sim_line_wrote(struct ilab_sim *s, struct sim_fiber *f, struct sim_line *l);
void sim_line_wake(struct ilab_sim *s, struct sim_line *l, uint64_t when);
void sim_line_unwait(struct sim_fiber *f);
const char *sim_intern(struct ilab_sim *s, const char *name);
int sim_mem_home_of(const struct ilab_sim *s, uintptr_t addr);
void sim_lines_rehome(struct ilab_sim *s);
/* Host memory [addr, addr + bytes) was just allocated for a new object: its lines start
 * without history (see lines.c). */
void sim_lines_forget(struct ilab_sim *s, const void *addr, size_t bytes);
uint64_t sim_invalidate_slow_ns(const struct ilab_sim *s, uint64_t nodes, int home, unsigned n);
int sim_invalidate_table_init(struct ilab_sim *s);
#define SIM_INV_TABLE_NODES 6
/* sim_invalidate_ns, sim_line_access, sim_mem_line_cost: line_proto.h */
/* cache.contention: home: a tracked access served at the line's home (lines.c). */
void sim_line_access_home(struct ilab_sim *s, struct sim_fiber *f, struct sim_line *l,
			  enum plat_access kind);
static inline bool sim_home_mode(const struct ilab_sim *s)
{
	return s->prof.cache_contention == ILAB_CONTENTION_HOME;
}

/* ops.c */
void sim_wrote(struct ilab_sim *s, struct sim_fiber *f, const void *addr);

/* prof.c */
void sim_prof_scope(int what);
void sim_prof_thread_begin(struct ilab_sim *s, struct sim_fiber *f);
void sim_prof_thread_end(struct ilab_sim *s, struct sim_fiber *f);
void sim_prof_fini(struct ilab_sim *s);
struct json_t;
struct json_t *sim_prof_json(const struct ilab_sim *s);
const char *sim_prof_scope_name(int id);

/* trace.c */
void sim_trace_attach(struct ilab_sim *s);
void sim_trace_detach(struct ilab_sim *s);
void sim_trace_threads(struct ilab_sim *s, uint64_t now);
void sim_trace_enter(struct ilab_sim *s, struct sim_fiber *f, int id);
void sim_trace_leave(struct ilab_sim *s, struct sim_fiber *f);
void sim_trace_count(int what, int64_t delta);
void sim_trace_flow_in(uint64_t key);
void sim_trace_wake(struct ilab_sim *s, struct sim_fiber *writer, struct sim_fiber *waiter,
		    const char *line, uint64_t when);
void sim_trace_woken(struct ilab_sim *s, struct sim_fiber *f);
void sim_trace_line(struct ilab_sim *s, const char *line, const char *key, int64_t value);

/* cost.c */
int sim_cost_init(struct ilab_sim *s, char *err, size_t errlen);
uint64_t sim_cost_lookahead_ns(const struct ilab_sim *s);

/* The running fiber, from plat's pointer to its clock: the same as sim_active->cur while a
 * simulator is active (both change together), without the dependent load. */
static inline struct sim_fiber *sim_running(void)
{
	return (struct sim_fiber *)((char *)plat_sim_cur - offsetof(struct sim_fiber, pc));
}

/* Where f's counters go; plat counts its charges and delays there too (plat_sim_clock). */
static inline void sim_fiber_set_stats(struct sim_fiber *f, struct sim_stats *st)
{
	f->stats = st;
	f->pc.charged_ns = &st->charged_ns;
	f->pc.delayed_ns = &st->delayed_ns;
}

static inline uint64_t sim_max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Before anything another fiber can observe: if a runnable fiber is strictly behind f in
 * virtual time, let it run first; if the earliest are at f's very instant, the seeded stream
 * decides whether f goes before or after them (sched.c, sim_sync_slow). The check is inline
 * and one compare: most calls neither switch nor tie. */
static inline void sim_sync(struct ilab_sim *s, struct sim_fiber *f)
{
	if (s->heap_n && s->heap[s->rq_head].key <= f->pc.t)
		sim_sync_slow(s, f, 0);
}

/* The same with the lookahead: before a tracked access, a poll or a wrote, whose effects on
 * another fiber take at least s->lookahead of virtual time to arrive (docs/simulation.md,
 * "Lookahead"), f runs on while it is at most that far ahead of the earliest runnable fiber;
 * past it, the earliest fiber runs first. With L = 0 it is sim_sync, ties drawn included. */
static inline void sim_sync_la(struct ilab_sim *s, struct sim_fiber *f)
{
	if (s->heap_n && s->heap[s->rq_head].key + s->lookahead <= f->pc.t)
		sim_sync_slow(s, f, s->lookahead);
}

/* The line of addr, created on first use: a hit in the recent-lines cache costs one compare;
 * neighbouring lines land in neighbouring entries (the index keeps the low key bits), and
 * the xor folds in the page bits so that per-CPU copies at a power-of-two stride spread. */
static inline unsigned sim_lcache_idx(uintptr_t key)
{
	return (unsigned)(key ^ (key >> SIM_LCACHE_BITS) ^ (key >> (2 * SIM_LCACHE_BITS))) &
	       ((1u << SIM_LCACHE_BITS) - 1);
}

static inline struct sim_line *sim_line_get(struct ilab_sim *s, const void *addr)
{
	uintptr_t key = (uintptr_t)addr >> 6;
	struct sim_line_slot *c = &s->lcache[sim_lcache_idx(key)];

	if (__builtin_expect(c->key == key, 1))
		return c->line;
	return sim_line_lookup(s, key);
}

/* progress.c: the progress hook (ilab_sim_set_progress), looked at every 65536 switches */
#define SIM_PROGRESS_MASK 0xffffull
void sim_progress_tick(uint64_t virtual_ns);

#endif /* ILAB_SIM_INTERNAL_H */
