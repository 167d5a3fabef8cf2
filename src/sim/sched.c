/* sched.c — the simulator's scheduler: fibers with virtual clocks, a run queue ordered by
 * (virtual time, insertion sequence), parking and waking, simulated threads and agents, and
 * deadlock detection. It is not the cost model (lines.c, cost.c) nor the plat ops (ops.c).
 *
 * The rule that makes runs deterministic and causal: the fiber that runs is always the one
 * with the smallest virtual time; a running fiber may advance its own clock freely (charges,
 * memory accesses), but before anything another fiber can observe (a tracked access, a poll,
 * a wrote, an MMIO, finishing) it calls sim_sync(), which hands the host CPU to any fiber that
 * is behind it. So every shared interaction happens in virtual-time order. A tie (the earliest
 * runnable fibers at exactly the synchronising fiber's time) is ordered by the seeded stream
 * (sim_tie): one seed repeats byte for byte, another orders same-instant requesters otherwise,
 * as arrival order varies from run to run on a real machine. The set-up fiber (main) keeps
 * its ties, and is never yielded to on one, so set-up does not depend on the seed. Among the
 * queued fibers, equal times keep insertion order. With a lookahead L
 * (ILAB_SIM_LOOKAHEAD_PROFILE; L = 0 by default) tracked accesses, polls and wrotes hand over
 * only when more than L ahead of the earliest runnable fiber (docs/simulation.md, "Lookahead").
 *
 * Switches are direct, fiber to fiber (one context switch per hand-over); the set-up context
 * (the host stack that called ilab_sim_run_threads) is itself a fiber, "main", so waiting from
 * it works the same way, and it is where a deadlock is reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/sim_internal.h"

#if defined(ILAB_ASAN) || defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SIM_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define SIM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct ilab_sim *sim_active;

/* ---- run queue: a sorted ring on (key, seq) ------------------------------------------------- */

/* The queued fibers in (key, seq) order, earliest first, in a ring: taking the earliest out
 * is a step of rq_head. Every insertion gets the newest seq, so a new entry goes after every
 * entry with a key <= its own: its place is a count of keys, and entries with equal keys
 * keep their insertion order, as the binary heap's (key, seq) order did (the same fiber comes
 * out each time: results do not depend on the structure).
 *
 * Why not a heap: at a hand-over the running fiber is re-queued just past the earliest ones
 * (at 128 simulated CPUs it lands among the first four 98% of the time, at 16 CPUs first 79%),
 * so its place is found by four compares without a branch and reached by moving the few
 * entries before it one step; the heap's sift paid a mispredicted exit and a write of heap_idx
 * into every fiber it moved, and a park (pop) sifted a leaf down the whole height. A timer's
 * deadline goes at the far end, found by one compare. Anything else is a binary search, and a
 * move of the shorter side of the ring: up to half the queue, where a heap is O(log n). (In
 * lazy mode at 128 CPUs 7% of the insertions land 8 to 63 places from either end, and the
 * whole costs about what the heap did; a front of the 8 earliest entries over a heap, which
 * bounds it, cost more there: it refilled from the heap too often.)
 *
 * The ring is the binary heap's array, with the same size and realloc pattern: the simulator
 * must not move the simulated program's host heap (which tracked words share a 64-byte line
 * depends on it). */
static inline bool ent_before(const struct sim_heap_ent *a, const struct sim_heap_ent *b)
{
	/* (key, seq) as one 128-bit number: a compare without a branch per field */
	unsigned __int128 x = (unsigned __int128)a->key << 64 | a->seq;
	unsigned __int128 y = (unsigned __int128)b->key << 64 | b->seq;

	return x < y;
}

/* Entry i in order (0: the earliest). */
static inline struct sim_heap_ent *rq_at(struct ilab_sim *s, unsigned i)
{
	return &s->heap[(s->rq_head + i) & (s->heap_cap - 1)];
}

/* Where an entry with this key and the newest seq goes: the number of entries before it, that
 * is the number with a key <= key (the order is sorted). Counted in groups whose compares do
 * not wait for each other, where the entries mostly land: a timer at the end, a hand-over
 * among the first four, and with cache.contention: home (lines.c) at 128 CPUs a request
 * waiting for its service among the last four, and one starting or arriving at its home 4 to
 * 35 places from the front (a binary search there mispredicted half of its steps); anything
 * else by a binary search whose steps are conditional moves. */
static unsigned rq_place(struct ilab_sim *s, uint64_t key)
{
	unsigned n = s->heap_n, lo, len, k;

	if (!n || rq_at(s, n - 1)->key <= key)
		return n;
	if (n < 8) {
		for (lo = k = 0; lo < n - 1; lo++)
			k += rq_at(s, lo)->key <= key;
		return k;
	}
	k = (rq_at(s, 0)->key <= key) + (rq_at(s, 1)->key <= key) + (rq_at(s, 2)->key <= key) +
	    (rq_at(s, 3)->key <= key);
	if (k < 4)
		return k;
	/* entry n - 1 is later: how many of the last four are */
	k = 1 + (rq_at(s, n - 2)->key > key) + (rq_at(s, n - 3)->key > key) +
	    (rq_at(s, n - 4)->key > key);
	if (k < 4)
		return n - k;
	/* entries n - 4 .. n - 1 are later: the place is in [4, n - 4] */
	for (lo = 4; lo + 8 <= n - 4 && lo < 36; lo += 8) {
		k = 0;
		for (unsigned i = 0; i < 8; i++)
			k += rq_at(s, lo + i)->key <= key;
		if (k < 8)
			return lo + k;
	}
	/* the first entry in [lo, n - 4] with a later key; it is in [lo, lo + len] */
	len = n - 4 - lo;
	while (len > 1) {
		unsigned half = len / 2;

		lo = rq_at(s, lo + half - 1)->key <= key ? lo + half : lo;
		len -= half;
	}
	return lo + (len && rq_at(s, lo)->key <= key);
}

/* Insert e at place k, moving the shorter side by one entry. The ring has room: it is larger
 * than the number of fibers. A side of eight entries or more that does not wrap round the
 * ring's end moves with one memmove. */
static void rq_insert(struct ilab_sim *s, unsigned k, struct sim_heap_ent e)
{
	unsigned n = s->heap_n, m = s->heap_cap - 1, h = s->rq_head;

	if (k <= n - k) {
		/* entries [0, k) move down one slot, from ring slots h .. h + k - 1 */
		if (k >= 8 && h >= 1 && h + k <= m + 1)
			memmove(&s->heap[h - 1], &s->heap[h], k * sizeof(*s->heap));
		else
			for (unsigned i = 0; i < k; i++)
				s->heap[(h + i - 1) & m] = s->heap[(h + i) & m];
		s->rq_head = (h - 1) & m;
	} else {
		/* entries [k, n) move up one slot, to ring slots h + k + 1 .. h + n */
		if (n - k >= 8 && h + n <= m)
			memmove(&s->heap[h + k + 1], &s->heap[h + k], (n - k) * sizeof(*s->heap));
		else
			for (unsigned i = n; i > k; i--)
				*rq_at(s, i) = *rq_at(s, i - 1);
	}
	*rq_at(s, k) = e;
	s->heap_n = n + 1;
	e.f->heap_idx = 0;
}

/* Remove the entry at place k, closing the gap from the shorter side. */
static void rq_delete(struct ilab_sim *s, unsigned k)
{
	unsigned n = s->heap_n;

	rq_at(s, k)->f->heap_idx = -1;
	if (k < n - 1 - k) {
		for (unsigned i = k; i > 0; i--)
			*rq_at(s, i) = *rq_at(s, i - 1);
		s->rq_head = (s->rq_head + 1) & (s->heap_cap - 1);
	} else {
		for (unsigned i = k; i + 1 < n; i++)
			*rq_at(s, i) = *rq_at(s, i + 1);
	}
	s->heap_n = n - 1;
}

static inline struct sim_heap_ent heap_ent(struct ilab_sim *s, struct sim_fiber *f)
{
	f->seq = s->next_seq++;
	return (struct sim_heap_ent){ .key = f->key, .seq = f->seq, .f = f };
}

/* The queue has room for every fiber (it grows when fibers are created), so pushing cannot
 * fail. */
static void heap_push(struct ilab_sim *s, struct sim_fiber *f)
{
	rq_insert(s, rq_place(s, f->key), heap_ent(s, f));
}

static struct sim_fiber *heap_pop(struct ilab_sim *s)
{
	struct sim_fiber *top;

	if (!s->heap_n)
		return NULL;
	top = s->heap[s->rq_head].f;
	top->heap_idx = -1;
	s->rq_head = (s->rq_head + 1) & (s->heap_cap - 1);
	s->heap_n--;
	return top;
}

/* Queue f and take the earliest fiber out: the common hand-over of sim_sync. The caller knows
 * the top is strictly before f. When f lands among the four entries after the top, it is one
 * step: those before it move up into the top's slot, f follows them, and the four slots are
 * written without a branch on where f lands (a coin toss between the first three places). */
static struct sim_fiber *heap_replace_top(struct ilab_sim *s, struct sim_fiber *f)
{
	struct sim_heap_ent *q = s->heap, e;
	unsigned m = s->heap_cap - 1, h = s->rq_head, k;
	struct sim_fiber *top = q[h].f;
	uint64_t key = f->key;

	if (s->heap_n < 5)
		goto apart;
	k = (q[(h + 1) & m].key <= key) + (q[(h + 2) & m].key <= key) +
	    (q[(h + 3) & m].key <= key) + (q[(h + 4) & m].key <= key);
	if (k == 4)
		goto apart;
	e = heap_ent(s, f);
	top->heap_idx = -1;
	f->heap_idx = 0;
	for (unsigned i = 0; i < 4; i++) {
		struct sim_heap_ent *dst = &q[(h + i) & m];
		const struct sim_heap_ent *src = i < k ? &q[(h + i + 1) & m] : dst;

		*dst = i == k ? e : *src; /* slots after f's are rewritten unchanged */
	}
	return top;
apart:
	top = heap_pop(s);
	heap_push(s, f);
	return top;
}

void sim_heap_remove(struct ilab_sim *s, struct sim_fiber *f)
{
	struct sim_heap_ent e = { .key = f->key, .seq = f->seq, .f = f };
	unsigned lo = 0, hi = s->heap_n;

	if (f->heap_idx < 0)
		return;
	/* f->key and f->seq are its entry's: the first entry not before it is its own */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (ent_before(rq_at(s, mid), &e))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= s->heap_n || rq_at(s, lo)->f != f) {
		fprintf(stderr, "iommulab sim: run queue out of order\n");
		abort();
	}
	rq_delete(s, lo);
}

static int heap_reserve(struct ilab_sim *s, unsigned n)
{
	struct sim_heap_ent *h;
	unsigned cap, old = s->heap_cap;

	if (n <= s->heap_cap)
		return 0;
	cap = s->heap_cap ? s->heap_cap : 64;
	while (cap < n)
		cap *= 2;
	h = realloc(s->heap, cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	/* the part that wrapped past the old end moves past it in the new ring (cap >= 2 old) */
	if (old && s->rq_head + s->heap_n > old)
		memcpy(h + old, h, (s->rq_head + s->heap_n - old) * sizeof(*h));
	s->heap = h;
	s->heap_cap = cap;
	return 0;
}

/* Make f runnable no earlier than `when` (a parked fiber, or one waiting on a timer whose
 * wake-up comes earlier). */
void sim_make_runnable(struct ilab_sim *s, struct sim_fiber *f, uint64_t when)
{
	uint64_t key = sim_max64(f->pc.t, when);

	if (f->heap_idx >= 0) {
		if (key >= f->key)
			return;
		sim_heap_remove(s, f);
	}
	f->key = key;
	f->state = SIM_RUNNABLE;
	heap_push(s, f);
}

/* ---- switching ------------------------------------------------------------------------------ */

/* Hand the host CPU to the earliest runnable fiber. cur has already been queued or parked.
 * When nothing is runnable, main is resumed with s->stall set (deadlock); when the earliest
 * fiber is past the time limit while main waits, likewise with -ETIME. */
static void sim_schedule(struct ilab_sim *s, struct sim_fiber *cur, bool exiting)
{
	struct sim_fiber *next = heap_pop(s);

	if (!next) {
		s->stall = -EDEADLK;
		next = &s->main;
	} else if (next != &s->main && next->key > s->time_limit &&
		   s->main.state == SIM_PARKED) {
		heap_push(s, next);
		s->stall = -ETIME;
		next = &s->main;
	}
	if (next->key > next->pc.t && !s->stall)
		next->pc.t = next->key;
	next->state = SIM_RUNNING;
	if (next == cur)
		return;
	s->cur = next;
	plat_sim_cur = &next->pc;
	if (__builtin_expect(!(++s->switches & SIM_PROGRESS_MASK), 0))
		sim_progress_tick(next->pc.t);
	if (exiting)
		fiber_arch_exit_to(&cur->ctx, &next->ctx);
	else
		fiber_arch_switch(&cur->ctx, &next->ctx);
}

/* Switch from cur (already queued) to next (already taken out of the queue). */
static inline void sim_switch_to(struct ilab_sim *s, struct sim_fiber *cur, struct sim_fiber *next)
{
	if (next->key > next->pc.t)
		next->pc.t = next->key;
	next->state = SIM_RUNNING;
	s->cur = next;
	plat_sim_cur = &next->pc;
	if (__builtin_expect(!(++s->switches & SIM_PROGRESS_MASK), 0))
		sim_progress_tick(next->pc.t);
	fiber_arch_switch(&cur->ctx, &next->ctx);
}

/* f is at exactly the time of the earliest runnable fiber(s): whether it goes before or after
 * them is drawn from the seeded stream, a fair coin per draw, again after each yield while a
 * fiber is still at that instant. Only ties are drawn, so the draws (and the stream) do not
 * depend on how the run queue is built. main neither draws nor is yielded to: its set-up and
 * its waits keep the order they have without a seed. */
static void sim_tie(struct ilab_sim *s, struct sim_fiber *f)
{
	if (f == &s->main)
		return;
	while (s->heap_n && s->heap[s->rq_head].key == f->pc.t &&
	       s->heap[s->rq_head].f != &s->main && (ilab_sim_rand(s) & 1))
		sim_yield(s, f);
}

/* slack: how far f may be ahead of the earliest runnable fiber and still run on (0, or the
 * lookahead for sim_sync_la). Called when that fiber is at most f's time minus slack. With a
 * lookahead, the fibers within it are not ordered: there is no tie to draw. */
void sim_sync_slow(struct ilab_sim *s, struct sim_fiber *f, uint64_t slack)
{
	if (!s->heap_n)
		return;
	if (s->heap[s->rq_head].key + slack < f->pc.t) {
		if (f == &s->main && s->broken)
			return; /* after a failure, main runs alone */
		f->key = f->pc.t;
		f->state = SIM_RUNNABLE;
		const struct sim_heap_ent *top = &s->heap[s->rq_head];

		if (top->f != &s->main && top->key <= s->time_limit) {
			/* the common hand-over: one step instead of a pop and a push */
			sim_switch_to(s, f, heap_replace_top(s, f));
		} else {
			heap_push(s, f);
			sim_schedule(s, f, false);
		}
		/* back as the earliest: fibers that caught up with f meanwhile tie with it */
		if (!s->heap_n || s->heap[s->rq_head].key != f->pc.t)
			return;
	}
	if (!slack)
		sim_tie(s, f);
}

/* Like sim_sync, but also let fibers at the same virtual time run first. */
void sim_yield(struct ilab_sim *s, struct sim_fiber *f)
{
	if (s->heap_n && s->heap[s->rq_head].key <= f->pc.t) {
		if (f == &s->main && s->broken)
			return;
		f->key = f->pc.t;
		f->state = SIM_RUNNABLE;
		heap_push(s, f);
		sim_schedule(s, f, false);
	}
}

/* Describe every parked fiber into s->err (deterministic order: by creation). */
static void describe_stall(struct ilab_sim *s, int why)
{
	size_t n = 0;
	unsigned shown = 0;
	struct sim_fiber *list[64];
	unsigned nl = 0;

	uint64_t latest = s->main.pc.t;

	for (struct sim_fiber *f = s->all_fibers; f; f = f->next_all)
		if (f->state == SIM_PARKED || f->state == SIM_RUNNABLE) {
			latest = sim_max64(latest, f->pc.t);
			if (f->state == SIM_PARKED && nl < 64)
				list[nl++] = f;
		}
	n += (size_t)snprintf(s->err + n, sizeof(s->err) - n, "%s at %llu ns:",
			      why == -ETIME ? "virtual time limit passed" : "deadlock",
			      (unsigned long long)latest);
	/* all_fibers is newest first: print oldest first */
	for (unsigned i = nl; i-- > 0 && n < sizeof(s->err) - 1;) {
		struct sim_fiber *f = list[i];

		/* "; " between fibers, none after the last: one well-formed line */
		const char *sep = shown ? ";" : "";

		if (f->kind == SIM_AGENT)
			n += (size_t)snprintf(s->err + n, sizeof(s->err) - n, "%s agent '%s'", sep,
					      f->agent->name);
		else
			n += (size_t)snprintf(s->err + n, sizeof(s->err) - n, "%s cpu %d", sep,
					      f->pc.cpu);
		if (n >= sizeof(s->err) - 1)
			break;
		n += (size_t)snprintf(s->err + n, sizeof(s->err) - n, " waits on %s since %llu ns",
				      f->wait_what ? f->wait_what : "?",
				      (unsigned long long)f->pc.t);
		shown++;
	}
	if (!shown && n < sizeof(s->err) - 1)
		snprintf(s->err + n, sizeof(s->err) - n, " nothing can run");
}

/* Park f (not queued, or queued on a timer) until someone makes it runnable. */
void sim_park(struct ilab_sim *s, struct sim_fiber *f)
{
	if (f == &s->main && s->broken)
		return; /* after a failure nothing else runs: the caller sees sim_stalled() */
	if (f->heap_idx < 0)
		f->state = SIM_PARKED;
	sim_schedule(s, f, false);
}

/* After main was resumed: 0, or the error that made it resume (the stall is consumed and
 * becomes the simulator's persistent state). */
int sim_stalled(struct ilab_sim *s, struct sim_fiber *f)
{
	if (f != &s->main)
		return 0;
	if (s->stall) {
		int why = s->stall;

		s->stall = 0;
		s->main.state = SIM_RUNNING;
		if (!s->broken) {
			s->broken = why;
			describe_stall(s, why);
		}
		sim_line_unwait(f);
		sim_heap_remove(s, f);
		return why;
	}
	return s->broken;
}

/* ---- fibers --------------------------------------------------------------------------------- */

static void fiber_entry(void *p);

static struct sim_fiber *fiber_new(struct ilab_sim *s)
{
	struct sim_fiber *f = s->free_fibers;
	int err;

	if (heap_reserve(s, s->nr_fibers + 2))
		return NULL;
	if (f) {
		s->free_fibers = f->next_free;
		SIM_UNPOISON(f->stack, f->stack_map);
		struct fiber_arch_ctx ctx = f->ctx;
		void *stack = f->stack;
		size_t map = f->stack_map;
		struct sim_fiber *next_all = f->next_all;
		unsigned id = f->id;

		memset(f, 0, sizeof(*f));
		f->ctx = ctx;
		f->stack = stack;
		f->stack_map = map;
		f->next_all = next_all;
		f->id = id;
	} else {
		long page = sysconf(_SC_PAGESIZE);
		size_t map = s->stack_bytes + (size_t)page;
		void *stack;

		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		stack = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			     -1, 0);
		if (stack == MAP_FAILED) {
			free(f);
			return NULL;
		}
		/* guard page below the stack: an overflow faults instead of corrupting */
		mprotect(stack, (size_t)page, PROT_NONE);
		f->stack = stack;
		f->stack_map = map;
		f->id = s->nr_fibers++;
		f->next_all = s->all_fibers;
		s->all_fibers = f;
	}
	f->sim = s;
	f->heap_idx = -1;
	f->state = SIM_RUNNABLE;
	{
		long page = sysconf(_SC_PAGESIZE);

		err = fiber_arch_init(&f->ctx, (char *)f->stack + page, f->stack_map - (size_t)page,
				      fiber_entry, f);
	}
	if (err) {
		f->state = SIM_DEAD;
		f->next_free = s->free_fibers;
		s->free_fibers = f;
		return NULL;
	}
	return f;
}

static void fiber_free_all(struct ilab_sim *s)
{
	struct sim_fiber *f = s->all_fibers;

	while (f) {
		struct sim_fiber *next = f->next_all;

		fiber_arch_destroy(&f->ctx);
		SIM_UNPOISON(f->stack, f->stack_map);
		munmap(f->stack, f->stack_map);
		free(f);
		f = next;
	}
	s->all_fibers = NULL;
	s->free_fibers = NULL;
}

/* The end of every fiber: report to whoever waits, then leave for good. */
static void fiber_finish(struct ilab_sim *s, struct sim_fiber *f)
{
	sim_sync(s, f); /* finishing is observable: do it in virtual-time order */
	f->stats->end_ns = sim_max64(f->stats->end_ns, f->pc.t);
	if (f->kind == SIM_THREAD) {
		struct sim_join *j = f->join;

		j->end = sim_max64(j->end, f->pc.t);
		if (--j->left == 0)
			sim_make_runnable(s, j->waiter, j->end);
	} else {
		struct sim_agent *a = f->agent;

		a->done = true;
		a->f = NULL;
		if (a->joiner)
			sim_make_runnable(s, a->joiner, f->pc.t);
	}
	f->state = SIM_DEAD;
	f->next_free = s->free_fibers;
	s->free_fibers = f;
	sim_schedule(s, f, true);
	abort(); /* a dead fiber is never resumed */
}

static void fiber_entry(void *p)
{
	struct sim_fiber *f = p;

	if (f->kind == SIM_THREAD) {
		sim_prof_thread_begin(f->sim, f);
		f->fn(f->idx, f->arg);
		sim_prof_thread_end(f->sim, f);
	} else
		f->agent->fn((struct plat_agent *)f->agent, f->agent->arg);
	fiber_finish(f->sim, f);
}

/* ---- threads and agents (plat_run_threads, plat_agent_*) -------------------------------------- */

static int check_cpus(struct ilab_sim *s, unsigned n, const int *cpus)
{
	unsigned char *seen = calloc(s->nr_cpus, 1);

	if (!seen)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		int cpu = cpus ? cpus[i] : (int)i;

		/* Two threads on one CPU would share its per-CPU data: refuse, as natively. */
		if (cpu < 0 || (unsigned)cpu >= s->nr_cpus || seen[cpu]) {
			free(seen);
			return -EINVAL;
		}
		seen[cpu] = 1;
	}
	free(seen);
	return 0;
}

int ilab_sim_run_threads(unsigned n, const int *cpus, plat_thread_fn fn, void *arg)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *cur;
	struct sim_join join;
	int err;

	if (!s || !fn)
		return -EINVAL;
	cur = s->cur;
	if (cur == &s->main && s->broken)
		return s->broken;
	if (n == 0)
		return 0;
	err = check_cpus(s, n, cpus);
	if (err)
		return err;
	sim_trace_threads(s, cur->pc.t); /* the trace's window opens with the first threads */
	join.left = n;
	join.end = cur->pc.t;
	join.waiter = cur;
	/* all or nothing: create every fiber before queueing any */
	struct sim_fiber **fs = calloc(n, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct sim_fiber *f = fiber_new(s);

		if (!f) {
			for (unsigned k = 0; k < i; k++) {
				fs[k]->state = SIM_DEAD;
				fs[k]->next_free = s->free_fibers;
				s->free_fibers = fs[k];
			}
			free(fs);
			return -ENOMEM;
		}
		f->kind = SIM_THREAD;
		f->pc.cpu = cpus ? cpus[i] : (int)i;
		f->slot = (unsigned)f->pc.cpu;
		f->node = (unsigned)s->cpu_node[f->pc.cpu];
		sim_fiber_set_stats(f, &s->cpu_stats[f->pc.cpu]);
		f->fn = fn;
		f->idx = i;
		f->arg = arg;
		f->join = &join;
		f->pc.t = cur->pc.t;
		fs[i] = f;
	}
	for (unsigned i = 0; i < n; i++) {
		fs[i]->stats->threads++;
		sim_make_runnable(s, fs[i], cur->pc.t);
	}
	free(fs);
	cur->wait_what = "threads to finish";
	while (join.left) {
		sim_park(s, cur);
		err = sim_stalled(s, cur);
		if (err)
			return err;
	}
	cur->wait_what = NULL;
	return 0;
}

int ilab_sim_agent_start(const char *name, int node, plat_agent_fn fn, void *arg,
			 struct plat_agent **out)
{
	struct ilab_sim *s = sim_active;
	struct sim_agent *a;
	struct sim_fiber *f;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!s || !fn || node >= (int)s->nr_nodes)
		return -EINVAL;
	/* No node (-1: a timer, natively an unbound thread): it runs on node 0, as plat does
	 * for code outside a CPU (plat_this_node() is 0 there). */
	if (node < 0)
		node = 0;
	if (s->nr_agents >= SIM_MAX_AGENTS)
		return -ENOSPC;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	f = fiber_new(s);
	if (!f) {
		free(a);
		return -ENOMEM;
	}
	a->fn = fn;
	a->arg = arg;
	a->node = node;
	a->index = s->nr_agents;
	snprintf(a->name, sizeof(a->name), "%s", name ? name : "agent");
	/* two agents with one name get distinct statistics keys */
	for (unsigned i = 0; i < s->nr_agents; i++)
		if (!strcmp(s->agents[i]->name, a->name)) {
			snprintf(a->name, sizeof(a->name), "%.38s#%u", name ? name : "agent",
				 a->index);
			break;
		}
	a->f = f;
	s->agents[s->nr_agents++] = a;
	f->kind = SIM_AGENT;
	f->pc.cpu = -1;
	f->slot = s->nr_cpus + 1 + a->index;
	f->node = (unsigned)node;
	sim_fiber_set_stats(f, &a->stats);
	f->agent = a;
	f->pc.t = s->cur->pc.t;
	sim_make_runnable(s, f, f->pc.t);
	*out = (struct plat_agent *)a;
	return 0;
}

bool ilab_sim_agent_should_stop(const struct plat_agent *agent)
{
	const struct sim_agent *a = (const struct sim_agent *)agent;

	return !a || a->stop;
}

void ilab_sim_agent_wake(struct plat_agent *agent)
{
	struct sim_agent *a = (struct sim_agent *)agent;
	struct ilab_sim *s = sim_active;

	if (!a || !s || !a->f || a->f == s->cur)
		return;
	if (a->f->state == SIM_PARKED && a->f->wait_line) {
		sim_line_unwait(a->f);
		sim_make_runnable(s, a->f, s->cur->pc.t);
	}
}

void ilab_sim_agent_stop(struct plat_agent *agent, const void *wake_addr)
{
	struct sim_agent *a = (struct sim_agent *)agent;
	struct ilab_sim *s = sim_active;
	struct sim_fiber *cur;

	if (!a || !s)
		return;
	cur = s->cur;
	a->stop = true;
	if (wake_addr)
		sim_wrote(s, cur, wake_addr);
	/* An agent parked in plat_poll on something else is woken too: in simulation its poll
	 * returns -ETIMEDOUT once it is asked to stop (see ops.c), so it sees the request. */
	if (a->f && a->f->state == SIM_PARKED && a->f->wait_line) {
		sim_line_unwait(a->f);
		sim_make_runnable(s, a->f, cur->pc.t);
	}
	cur->wait_what = "an agent to stop";
	while (!a->done) {
		a->joiner = cur;
		sim_park(s, cur);
		if (sim_stalled(s, cur))
			break;
	}
	a->joiner = NULL;
	cur->wait_what = NULL;
}

/* ---- set-up ----------------------------------------------------------------------------------- */

int sim_sched_init(struct ilab_sim *s)
{
	int err = fiber_arch_init_main(&s->main.ctx);

	if (err)
		return err;
	s->main.sim = s;
	s->main.kind = SIM_MAIN;
	s->main.state = SIM_RUNNING;
	s->main.heap_idx = -1;
	s->main.pc.cpu = -1;
	s->main.slot = s->nr_cpus;
	s->main.node = (unsigned)s->cpu_node[0];
	sim_fiber_set_stats(&s->main, &s->main_stats);
	s->cur = &s->main;
	return heap_reserve(s, 64);
}

void sim_sched_fini(struct ilab_sim *s)
{
	fiber_free_all(s);
	fiber_arch_destroy(&s->main.ctx);
	free(s->heap);
	s->heap = NULL;
}
