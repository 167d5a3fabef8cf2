/* ops.c — the plat backend of the simulator: each plat_sim_ops hook charges the calling
 * fiber's virtual clock from the cost model and, for anything another fiber can observe,
 * first lets every fiber that is behind in virtual time run (sim_sync; with a lookahead,
 * sim_sync_la: only those more than L behind). It is not the
 * scheduler (sched.c) nor the line protocol (lines.c).
 *
 * Where a fiber may be switched out: tracked accesses, plat_poll, plat_wrote, MMIO, yield,
 * thread exit. Not on plat_charge_ns / plat_delay_ns / plat_mem_access / now / cpu_id: those
 * only move the fiber's own clock; the next synchronising call puts it back in order.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/line_proto.h"

static __attribute__((noinline)) void op_access_slow(const void *addr, enum plat_access kind)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = s->cur;
	struct sim_line *l = sim_line_get(s, addr);

	if (sim_home_mode(s)) {
		sim_line_access_home(s, f, l, kind);
		if (kind != PLAT_ACC_READ && l->waiters)
			sim_line_wake(s, l, f->pc.t);
		return;
	}
	/* The immediate retry of a failed cmpxchg: this CPU still holds the line (a failed LSE
	 * CAS obtains it in a unique state) and nobody else can touch it before retry_until
	 * (busy_until covers it), so the retry happens now, before the fibers behind us. */
	if (!(l->retry_slot == (int)f->slot && f->pc.t <= l->retry_until))
		sim_sync_la(s, f); /* lines never move: l stays valid across the switch */
	sim_line_access(s, f, l, kind);
	/* The host store happens right after we return, before any other fiber runs: pollers
	 * woken now see it when they re-check. */
	if (kind != PLAT_ACC_READ && l->waiters)
		sim_line_wake(s, l, f->pc.t);
}

/* A tracked access, fast path first: most accesses (all but a few at 1 simulated CPU, about
 * half at 128) find their line in the recent-lines cache, need no hand-over, wait for nobody
 * and hit (a read by a sharer, a write or RMW by the exclusive owner). That case is exactly
 * sim_line_access's with start = f's clock and no miss, done here without the full
 * function's register saves; anything else goes to op_access_slow, unchanged. */
static void op_access(const void *addr, enum plat_access kind)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = sim_running();
	uintptr_t key = (uintptr_t)addr >> 6;
	const struct sim_line_slot *c = &s->lcache[sim_lcache_idx(key)];
	struct sim_stats *st;
	struct sim_line *l;
	uint64_t t = f->pc.t;

	if (__builtin_expect(c->key != key, 0))
		goto slow;
	l = c->line;
	if (l->retry_slot >= 0 || l->busy_until > t ||
	    (s->heap_n && s->heap[s->rq_head].key + s->lookahead <= t))
		goto slow;
	st = f->stats;
	if (kind == PLAT_ACC_READ) {
		if (!sharer_test(l, f->slot) || l->src_node < 0)
			goto slow;
		st->reads++;
		l->reads++;
		st->hits++;
		f->pc.t = t + s->prof.cache_hit_ns;
		return;
	}
	if (l->owner != (int)f->slot || l->waiters)
		goto slow;
	if (kind == PLAT_ACC_RMW) {
		/* home: served by lines.c; lse_far: executes at the home even for the owner */
		if (s->prof.cache_contention || s->prof.cache_atomics == ILAB_ATOMICS_LSE_FAR)
			goto slow;
		st->rmws++;
		t += s->prof.atomic_local_ns;
	} else {
		st->writes++;
		t += s->prof.cache_hit_ns;
	}
	l->acquisitions++;
	l->agent_snap = -1;
	st->hits++;
	f->pc.t = t;
	l->busy_until = t;
	return;
slow:
	op_access_slow(addr, kind);
}

static void op_rmw_failed(const void *addr)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = s->cur;
	struct sim_line *l = sim_line_get(s, addr);

	l->rmw_retries++;
	f->stats->rmw_retries++;
	if (s->trace)
		sim_trace_line(s, l->name, "failed cmpxchg", (int64_t)l->rmw_retries);
	/* cache.contention: home has no such bypass: a far CAS leaves nothing at the requester,
	 * and a near one keeps the line only until the home forwards the next request (lines.c) */
	if (sim_home_mode(s))
		return;
	/* The atomics rule (cache.atomics): only a CAS that executed near brought the line here
	 * in a unique state; one that executed at the home (lse_far, or lse_unique_near on a line
	 * it did not hold) left nothing here, and its retry queues like anyone's. */
	if (l->owner != (int)f->slot)
		return;
	/* The near CAS that lost keeps the line for the immediate retry (recompute and CAS
	 * again: cache.retry_hold_ns) instead of joining the back of the queue with everyone
	 * else, as a real CPU does. */
	l->retry_slot = (int)f->slot;
	l->retry_until = f->pc.t + s->prof.retry_hold_ns;
	l->busy_until = sim_max64(l->busy_until, l->retry_until);
}

static uint64_t op_now_ns(void)
{
	return sim_active->cur->pc.t;
}

static void op_charge_ns(uint64_t ns)
{
	struct sim_fiber *f = sim_active->cur;

	f->pc.t += ns;
	f->stats->charged_ns += ns;
}

static void op_delay_ns(uint64_t ns)
{
	struct sim_fiber *f = sim_active->cur;

	f->pc.t += ns;
	f->stats->delayed_ns += ns;
}

static int op_cpu_id(void)
{
	return sim_active->cur->pc.cpu;
}

static uint64_t read_word(const void *addr, unsigned size)
{
	if (size == 4)
		return atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)addr,
					    memory_order_acquire);
	return atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)addr, memory_order_acquire);
}

static int op_poll(const void *addr, unsigned size, plat_poll_pred pred, void *arg,
		   uint64_t timeout_ns)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = s->cur;
	struct sim_line *l;
	uint64_t deadline;
	int err;

	if (!addr || (size != 4 && size != 8) || ((uintptr_t)addr & (size - 1)) || !pred)
		return -EINVAL;
	sim_sync_la(s, f);
	f->stats->polls++;
	deadline = timeout_ns && f->pc.t + timeout_ns > f->pc.t ? f->pc.t + timeout_ns : UINT64_MAX;
	for (;;) {
		uint64_t parked_at;

		/* every check is a read of the line: a re-check after a write pays the transfer
		 * from the writer's node */
		l = sim_line_get(s, addr);
		if (sim_home_mode(s))
			sim_line_access_home(s, f, l, PLAT_ACC_READ);
		else
			sim_line_access(s, f, l, PLAT_ACC_READ);
		if (pred(read_word(addr, size), arg))
			return 0;
		if (f->pc.t >= deadline)
			break;
		/* A stopping agent must get back to its loop to see plat_agent_should_stop(). */
		if (f->kind == SIM_AGENT && f->agent->stop)
			break;
		if (f == &s->main && s->broken)
			return s->broken;
		parked_at = f->pc.t;
		f->wait_line = l;
		f->wprev = NULL;
		f->wnext = l->waiters;
		if (l->waiters)
			l->waiters->wprev = f;
		l->waiters = f;
		f->wait_what = l->name ? l->name : "an unnamed word";
		if (deadline != UINT64_MAX) {
			f->key = deadline;
			f->state = SIM_RUNNABLE;
			sim_make_runnable(s, f, deadline);
		}
		sim_park(s, f);
		err = sim_stalled(s, f);
		sim_line_unwait(f); /* still listed when the timer woke us */
		if (f->trace_wake)
			sim_trace_woken(s, f);
		f->wait_what = NULL;
		f->stats->parked_ns += f->pc.t - parked_at;
		if (err)
			return err;
		f->stats->poll_wakeups++;
	}
	f->stats->poll_timeouts++;
	return -ETIMEDOUT;
}

void sim_wrote(struct ilab_sim *s, struct sim_fiber *f, const void *addr)
{
	struct sim_line *l;

	sim_sync_la(s, f);
	l = sim_line_get(s, addr);
	sim_line_wrote(s, f, l);
	if (l->waiters)
		sim_line_wake(s, l, f->pc.t);
}

static void op_wrote(const void *addr)
{
	sim_wrote(sim_active, sim_active->cur, addr);
}

static void op_mem_access(int home_node, size_t bytes, bool write)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = s->cur;
	unsigned home = home_node >= 0 && (unsigned)home_node < s->nr_nodes ? (unsigned)home_node
									       : f->node;
	uint64_t lines, cost;

	if (!bytes)
		return;
	/* One latency for the first line, then streaming: the next lines are fetched while the
	 * first is in flight (memory.line_stream_ns each). Writes cost the same as reads: the
	 * line is fetched for ownership before it is written. */
	lines = (bytes + 63) / 64;
	cost = s->mem_ns[f->node * s->nr_nodes + home] + (lines - 1) * s->prof.mem_line_ns;
	f->pc.t += cost;
	f->stats->mem_accesses++;
	f->stats->mem_ns += cost;
	if (home == f->node)
		f->stats->mem_bytes_local += bytes;
	else
		f->stats->mem_bytes_remote += bytes;
	(void)write;
}

/* An access to simulated memory with its host address: charged line by line from where each
 * line's copies are (lines.c, sim_mem_line_cost). A multi-line access pays its slowest line in
 * full and every further line at streaming cost: memory.line_stream_ns when it missed,
 * cache.line_hit_stream_ns when it hit. Not a scheduling point (like plat_mem_access). */
static __attribute__((noinline)) void mem_access_slow(struct ilab_sim *s, const void *va,
						      size_t bytes, bool write)
{
	struct sim_fiber *f = s->cur;
	uintptr_t a, end;
	uint64_t worst = 0, stream = 0, total;
	bool first = true;

	a = (uintptr_t)va & ~(uintptr_t)63;
	end = (uintptr_t)va + bytes;
	for (; a < end; a += 64) {
		struct sim_line *l = sim_line_get(s, (const void *)a);
		uint64_t c = sim_mem_line_cost(s, f, l, write);

		if (c > worst)
			worst = c;
		if (!first)
			stream += c > s->prof.cache_hit_ns ? s->prof.mem_line_ns
							  : s->prof.line_hit_stream_ns;
		first = false;
		if (l->home >= 0) {
			if ((unsigned)l->home == f->node)
				f->stats->mem_bytes_local += 64;
			else
				f->stats->mem_bytes_remote += 64;
		}
	}
	total = worst + stream;
	f->pc.t += total;
	f->stats->mem_accesses++;
	f->stats->mem_ns += total;
}

/* Fast path first: most calls touch one line that the caller already holds (a CPU re-reading
 * or rewriting its queue entry or PTE line, the SMMU re-reading the command line it has a
 * snapshot of); that costs a hit, exactly as in mem_access_slow, without its register saves. */
void ilab_sim_mem_access(const void *va, size_t bytes, bool write)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f;
	const struct sim_line_slot *c;
	struct sim_stats *st;
	struct sim_line *l;
	uintptr_t key;
	uint64_t hit;
	bool held;

	if (!s || !plat_sim || !bytes || !va)
		return;
	key = (uintptr_t)va >> 6;
	c = &s->lcache[sim_lcache_idx(key)];
	if (((uintptr_t)va & 63) + bytes > 64 || c->key != key)
		goto slow;
	f = sim_running();
	l = c->line;
	if (f->kind == SIM_AGENT)
		held = !write && l->agent_snap == (int)f->slot;
	else if (!write)
		held = sharer_test(l, f->slot);
	else
		held = l->owner == (int)f->slot;
	if (!held)
		goto slow;
	if (write)
		l->agent_snap = -1;
	st = f->stats;
	st->hits++;
	if (l->home >= 0) {
		if ((unsigned)l->home == f->node)
			st->mem_bytes_local += 64;
		else
			st->mem_bytes_remote += 64;
	}
	hit = s->prof.cache_hit_ns;
	f->pc.t += hit;
	st->mem_accesses++;
	st->mem_ns += hit;
	return;
slow:
	mem_access_slow(s, va, bytes, write);
}

static void op_mmio(const struct plat_mmio *m, bool write)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = s->cur;
	unsigned dev = m && m->node >= 0 && (unsigned)m->node < s->nr_nodes ? (unsigned)m->node : 0;
	uint64_t cost;

	sim_sync(s, f);
	cost = (write ? s->mmio_wr_ns : s->mmio_rd_ns)[f->node * s->nr_nodes + dev];
	f->pc.t += cost;
	f->stats->mmio_ns += cost;
	if (write)
		f->stats->mmio_writes++;
	else
		f->stats->mmio_reads++;
}

static void op_track(const void *addr, const char *name)
{
	struct ilab_sim *s = sim_active;
	struct sim_line *l = sim_line_get(s, addr);

	char both[160];

	if (!name)
		return;
	/* Two named words in one line: the line carries both names, which makes the false
	 * sharing visible in the statistics. */
	if (l->name && strcmp(l->name, name) && !strstr(l->name, name)) {
		snprintf(both, sizeof(both), "%s|%s", l->name, name);
		name = both;
	}
	l->name = sim_intern(s, name);
}

static void op_fresh(const void *addr, size_t bytes)
{
	sim_lines_forget(sim_active, addr, bytes);
}

/* A scheduling point: let every fiber at or before this time run. The fiber pays a cache hit
 * so that a loop of yields advances virtual time instead of spinning at one instant. */
static void op_yield(void)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = s->cur;

	f->pc.t += s->prof.cache_hit_ns ? s->prof.cache_hit_ns : 1;
	sim_yield(s, f);
}

/* plat_spin_lock's queue node of the running context: the lowest line of a fiber's stack
 * mapping above its guard page (the far end from where the stack starts, so never reached by
 * a stack that fits), or the set-up context's own line. Fixed per fiber, so the simulated
 * cost of a lock hand-over does not depend on stack-frame layout. */
static void *op_lock_node(void)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f = s->cur;

	if (!f->stack)
		return s->main_lock_node;
	return (char *)f->stack + (f->stack_map - s->stack_bytes);
}

static const struct plat_sim_ops sim_ops = {
	.access = op_access,
	.rmw_failed = op_rmw_failed,
	.now_ns = op_now_ns,
	.charge_ns = op_charge_ns,
	.delay_ns = op_delay_ns,
	.cpu_id = op_cpu_id,
	.poll = op_poll,
	.wrote = op_wrote,
	.mem_access = op_mem_access,
	.mem_touch = ilab_sim_mem_access,
	.mmio = op_mmio,
	.track = op_track,
	.yield = op_yield,
	.run_threads = ilab_sim_run_threads,
	.agent_start = ilab_sim_agent_start,
	.agent_should_stop = ilab_sim_agent_should_stop,
	.agent_stop = ilab_sim_agent_stop,
	.agent_wake = ilab_sim_agent_wake,
	.lock_node = op_lock_node,
	.fresh = op_fresh,
};

/* ---- named compute charges ---------------------------------------------------------------- */

static const char *const charge_names[PLAT_CHARGE_NR] = {
	[PLAT_CHARGE_IOVA_ALLOC] = "iova_alloc_ns",
	[PLAT_CHARGE_IOVA_FREE] = "iova_free_ns",
	[PLAT_CHARGE_PTE_WRITE] = "pte_write_ns",
	[PLAT_CHARGE_CMD_BUILD] = "cmd_build_ns",
	[PLAT_CHARGE_PGTABLE_WALK_LEVEL] = "pgtable_walk_level_ns",
	[PLAT_CHARGE_DMA_MAP] = "dma_map_ns",
	[PLAT_CHARGE_DMA_UNMAP] = "dma_unmap_ns",
	[PLAT_CHARGE_IOMMU_MAP] = "iommu_map_ns",
	[PLAT_CHARGE_IOMMU_UNMAP] = "iommu_unmap_ns",
	[PLAT_CHARGE_IOVA_RBTREE] = "iova_rbtree_ns",
	[PLAT_CHARGE_THREAD_WAKE] = "thread_wake_ns",
	[PLAT_CHARGE_DMA_DIRECT_MAP] = "dma_direct_map_ns",
	[PLAT_CHARGE_DMA_DIRECT_UNMAP] = "dma_direct_unmap_ns",
};

const char *ilab_sim_charge_name(enum plat_charge c)
{
	return (unsigned)c < PLAT_CHARGE_NR ? charge_names[c] : "?";
}

const struct plat_sim_ops *ilab_sim_ops(struct ilab_sim *s)
{
	if (!s)
		return NULL;
	sim_active = s;
	plat_sim_cur = &s->cur->pc; /* and at every switch (sched.c) */
	/* the trace hangs on the breakdown's scopes (trace.c) */
	plat_scope_fn = s->prof_on || s->trace ? sim_prof_scope : NULL;
	plat_count_fn = s->trace ? sim_trace_count : NULL;
	plat_flow_fn = s->trace ? sim_trace_flow_in : NULL;
	/* Looked up once here, so that a charge in driver code is an array read. A name the
	 * profile does not give charges nothing. */
	for (unsigned i = 0; i < PLAT_CHARGE_NR; i++)
		plat_charge_table[i] = ilab_profile_compute_ns(&s->prof, charge_names[i], 0);
	return &sim_ops;
}
