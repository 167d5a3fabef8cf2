/* flush_queue.c — lazy invalidation for DMA_FQ domains (Linux dma-iommu's flush queue): per-CPU
 * rings of unmapped IOVAs whose TLB entries may still be live, freed only after one
 * domain-wide invalidation has completed since they were queued.
 * It is not a TLB or an IOVA allocator: it calls the domain's flush-all and the IOVA free
 * it is given. Until an entry is freed its IOVA cannot be reused, so a stale TLB entry can
 * only ever point at the buffer that was unmapped (the "lazy" trade-off), never at a new one.
 *
 * The timer. Linux arms a 10 ms timer when the first entry is queued on an idle queue; its
 * handler flushes once and reclaims every CPU's ring. Here the timer is, by default, a plat
 * agent: it sleeps in ticks of at most 1 ms until the queue is armed, then sleeps until the
 * deadline, then flushes. So the stale-translation window of an IOVA is bounded by the timeout
 * plus one flush, or less when its CPU's ring fills first (a full ring flushes synchronously).
 * Without the agent (timer == false) the deadline is checked by the unmaps themselves, every
 * FQ_CHECK_EVERY-th entry a CPU queues: cheaper natively (no polling thread competing for the
 * host's cores), but then the window is bounded only while unmaps keep coming; an idle device
 * keeps its last stale entries until its next unmaps or a full ring.
 *
 * The single queue (Linux >= 6.7, for IOMMUs whose invalidation shadows the page table, where a
 * flush costs so much that it should be rare: 32768 entries, 1 s): one ring shared by every
 * CPU under its one lock instead of one ring per CPU. Each queue then takes the shared lock and
 * its cache line, but a flush happens only when the whole ring is full, so the flush count per
 * unmap no longer grows with the number of CPUs.
 */
#include <errno.h>
#include <stdlib.h>

#include <iommulab/plat.h>

#include "iommu/iommu_internal.h"

struct fq_entry {
	uint64_t pfn;
	uint64_t pages;
	uint64_t counter; /* flush_start_cnt when queued: freeable once finish_cnt passes it */
};

/* One CPU's ring. head == tail: empty; (tail + 1) & mask == head: full. */
struct fq_ring {
	plat_spinlock lock;
	unsigned head, tail;
	uint64_t queued, freed; /* under lock */
	struct fq_entry e[];
};

struct ilab_fq {
	void *rings;             /* per-CPU struct fq_ring + size entries; NULL if single */
	struct fq_ring *single;  /* the one ring of a single queue; NULL if per-CPU */
	unsigned size, mask, nr_rings;
	uint64_t timeout_ns;
	const struct ilab_fq_ops *ops;
	void *ctx;
	plat_word64 flush_start_cnt, flush_finish_cnt;
	plat_word32 timer_on;     /* Linux fq_timer_on: read first, then xchg, to spare the line */
	plat_word64 deadline;     /* 0 = timer idle; else when it fires (plat_now_ns) */
	plat_word32 stop;         /* destroy asks the timer agent to return */
	struct plat_agent *timer;
	plat_word64 flushes, full_flushes, timeouts;
};

/* Ring number i (0 .. nr_rings - 1). */
static struct fq_ring *ring_of(struct ilab_fq *fq, unsigned i)
{
	return fq->single ? fq->single : plat_percpu_ptr(fq->rings, i);
}

static struct fq_ring *this_ring(struct ilab_fq *fq)
{
	return fq->single ? fq->single : plat_this_cpu_ptr(fq->rings);
}

static bool ring_full(const struct ilab_fq *fq, const struct fq_ring *r)
{
	return ((r->tail + 1) & fq->mask) == r->head;
}

/* Free the entries whose flush has completed (ring lock held). */
static void ring_reclaim(struct ilab_fq *fq, struct fq_ring *r)
{
	uint64_t done = plat_load64(&fq->flush_finish_cnt);

	while (r->head != r->tail) {
		struct fq_entry *e = &r->e[r->head];

		if (e->counter >= done)
			break;
		fq->ops->free_iova(fq->ctx, e->pfn, e->pages);
		r->freed++;
		plat_count_add(PLAT_COUNT_FQ_DEPTH, -1);
		r->head = (r->head + 1) & fq->mask;
	}
}

/* One domain-wide invalidation; everything queued before its start is then safe to free. */
static void fq_flush_iotlb(struct ilab_fq *fq)
{
	plat_scope_enter(PLAT_SCOPE_FQ_FLUSH);
	plat_fetch_add64(&fq->flush_start_cnt, 1);
	fq->ops->flush_all(fq->ctx);
	plat_fetch_add64(&fq->flush_finish_cnt, 1);
	plat_fetch_add64(&fq->flushes, 1);
	plat_scope_leave();
}

static void reclaim_all(struct ilab_fq *fq)
{
	for (unsigned i = 0; i < fq->nr_rings; i++) {
		struct fq_ring *r = ring_of(fq, i);

		plat_spin_lock(&r->lock);
		ring_reclaim(fq, r);
		plat_spin_unlock(&r->lock);
	}
}

static void fq_timeout(struct ilab_fq *fq);

/* Without a timer agent, the deadline is checked on every FQ_CHECK_EVERY-th entry queued on a
 * ring, a CPU's or the single one (a clock read on each would cost more than the rest of the
 * unmap). */
#define FQ_CHECK_EVERY 32

static void fq_check_deadline(struct ilab_fq *fq)
{
	uint64_t deadline = plat_load_relaxed64(&fq->deadline);

	/* Only one CPU wins the right to flush: the one that swaps the armed deadline out. */
	if (deadline && plat_now_ns() >= deadline && plat_cmpxchg64(&fq->deadline, &deadline, 0))
		fq_timeout(fq);
}

void ilab_fq_queue(struct ilab_fq *fq, uint64_t pfn, uint64_t pages)
{
	struct fq_ring *r = this_ring(fq);
	uint64_t queued;

	plat_scope_enter(PLAT_SCOPE_FQ_QUEUE);
	/* The PTE clears must be visible before this entry can be seen as flushable. */
	plat_mb();
	plat_spin_lock(&r->lock);
	ring_reclaim(fq, r);
	if (ring_full(fq, r)) {
		fq_flush_iotlb(fq);
		plat_fetch_add64(&fq->full_flushes, 1);
		ring_reclaim(fq, r);
	}
	r->e[r->tail] = (struct fq_entry){
		.pfn = pfn,
		.pages = pages,
		.counter = plat_load64(&fq->flush_start_cnt),
	};
	r->tail = (r->tail + 1) & fq->mask;
	queued = ++r->queued; /* read under the lock: the single ring's is every CPU's */
	plat_count_add(PLAT_COUNT_FQ_DEPTH, 1);
	plat_spin_unlock(&r->lock);

	/* Arm the timer unless it is already on; reading first avoids bouncing the line. */
	if (!plat_load_relaxed32(&fq->timer_on) && !plat_xchg32(&fq->timer_on, 1))
		plat_store64(&fq->deadline, plat_now_ns() + fq->timeout_ns);
	else if (!fq->timer && (queued & (FQ_CHECK_EVERY - 1)) == 0)
		fq_check_deadline(fq);
	plat_scope_leave();
}

void ilab_fq_drain(struct ilab_fq *fq)
{
	if (!fq)
		return;
	fq_flush_iotlb(fq);
	reclaim_all(fq);
}

/* ---- the timer agent ------------------------------------------------------------------- */

/* How often an idle timer looks for an armed deadline: well below the 10 ms timeout, so a
 * deadline is never missed by more than this, and long enough that an idle timer costs the
 * host nothing (it sleeps, where a poll would spin and yield against the SMMU model's thread
 * on a 2-core host). */
#define FQ_TIMER_TICK_NS 1000000ull

static void fq_timer_fn(struct plat_agent *agent, void *arg)
{
	struct ilab_fq *fq = arg;

	while (!plat_agent_should_stop(agent) && !plat_load32(&fq->stop)) {
		uint64_t deadline = plat_load64(&fq->deadline);
		uint64_t now = plat_now_ns();

		if (!deadline || now < deadline) {
			uint64_t wait = deadline ? deadline - now : FQ_TIMER_TICK_NS;

			plat_sleep_ns(wait < FQ_TIMER_TICK_NS ? wait : FQ_TIMER_TICK_NS);
			continue;
		}
		plat_store64(&fq->deadline, 0);
		fq_timeout(fq);
	}
}

/* fq_flush_timeout (deadline already cleared): disarm, so that a later queue re-arms a fresh
 * deadline, then one flush and a reclaim of every CPU's ring. */
static void fq_timeout(struct ilab_fq *fq)
{
	plat_store32(&fq->timer_on, 0);
	fq_flush_iotlb(fq);
	plat_fetch_add64(&fq->timeouts, 1);
	reclaim_all(fq);
}

/* ---- life cycle ------------------------------------------------------------------------ */

static void fq_free_rings(struct ilab_fq *fq)
{
	if (fq->single)
		free(fq->single);
	else
		plat_percpu_free(fq->rings);
}

int ilab_fq_create(unsigned size, uint64_t timeout_ns, bool timer, bool single,
		   const struct ilab_fq_ops *ops, void *ctx, struct ilab_fq **out)
{
	size_t ring_size = sizeof(struct fq_ring) + size * sizeof(struct fq_entry);
	struct ilab_fq *fq;
	int ret;

	if (!out || !ops || !ops->flush_all || !ops->free_iova || size < 2 ||
	    (size & (size - 1)) || !timeout_ns)
		return -EINVAL;
	fq = plat_zalloc_array(1, sizeof(*fq));
	if (!fq)
		return -ENOMEM;
	fq->size = size;
	fq->mask = size - 1;
	fq->timeout_ns = timeout_ns;
	fq->ops = ops;
	fq->ctx = ctx;
	if (single) {
		fq->nr_rings = 1;
		fq->single = plat_zalloc_array(1, ring_size);
	} else {
		fq->nr_rings = plat_cpu_count();
		fq->rings = plat_percpu_alloc(ring_size);
	}
	if (!fq->single && !fq->rings) {
		free(fq);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < fq->nr_rings; i++)
		plat_spin_init(&ring_of(fq, i)->lock, single ? "fq.single.lock" : "fq.lock");
	plat_track(&fq->flush_start_cnt, "fq.flush_start_cnt");
	plat_track(&fq->flush_finish_cnt, "fq.flush_finish_cnt");
	plat_track(&fq->timer_on, "fq.timer_on");
	if (timer) {
		ret = plat_agent_start("fq-timer", -1, fq_timer_fn, fq, &fq->timer);
		if (ret) {
			fq_free_rings(fq);
			free(fq);
			return ret;
		}
	}
	*out = fq;
	return 0;
}

void ilab_fq_destroy(struct ilab_fq *fq)
{
	if (!fq)
		return;
	if (fq->timer) {
		plat_store32(&fq->stop, 1);
		plat_agent_stop(fq->timer, &fq->deadline);
	}
	ilab_fq_drain(fq);
	fq_free_rings(fq);
	free(fq);
}

void ilab_fq_stats(struct ilab_fq *fq, struct ilab_fq_stats *st)
{
	*st = (struct ilab_fq_stats){ 0 };
	if (!fq)
		return;
	for (unsigned i = 0; i < fq->nr_rings; i++) {
		struct fq_ring *r = ring_of(fq, i);

		plat_spin_lock(&r->lock);
		st->queued += r->queued;
		st->freed += r->freed;
		plat_spin_unlock(&r->lock);
	}
	st->flushes = plat_load64(&fq->flushes);
	st->full_flushes = plat_load64(&fq->full_flushes);
	st->timeouts = plat_load64(&fq->timeouts);
}
