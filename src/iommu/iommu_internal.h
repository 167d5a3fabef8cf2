/* iommu_internal.h — what iommu.c, dma-iommu.c and flush_queue.c share privately: the error
 * message helper and the flush queue's interface. Not public API (see include/iommulab/).
 */
#ifndef ILAB_IOMMU_INTERNAL_H
#define ILAB_IOMMU_INTERNAL_H

#include <stdint.h>

#include <iommulab/plat.h>

/* Record the message returned by ilab_iommu_strerror() for this thread; returns err. */
int ilab_iommu_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- flush queue (flush_queue.c): Linux dma-iommu's deferred-invalidation rings ------------ */

struct ilab_fq;

/* What the flush queue calls: invalidate the whole domain and wait; free one IOVA range. */
struct ilab_fq_ops {
	void (*flush_all)(void *ctx);
	void (*free_iova)(void *ctx, uint64_t pfn, uint64_t pages);
};

struct ilab_fq_stats {
	uint64_t queued, flushes, full_flushes, timeouts, freed;
};

/* size: entries per ring (power of two >= 2); timeout_ns > 0; with timer, an agent flushes
 * timeout_ns after the first entry is queued on an idle timer; single: one ring shared by all
 * CPUs instead of one per CPU. Returns 0 or -errno. */
int ilab_fq_create(unsigned size, uint64_t timeout_ns, bool timer, bool single,
		   const struct ilab_fq_ops *ops, void *ctx, struct ilab_fq **out);
/* Flush and free everything, stop the timer, free the queue. */
void ilab_fq_destroy(struct ilab_fq *fq);
/* Defer the free of [pfn, pfn + pages) until the next flush has completed. */
void ilab_fq_queue(struct ilab_fq *fq, uint64_t pfn, uint64_t pages);
/* Flush now and free every queued entry (teardown, tests). */
void ilab_fq_drain(struct ilab_fq *fq);
void ilab_fq_stats(struct ilab_fq *fq, struct ilab_fq_stats *st);

#endif /* ILAB_IOMMU_INTERNAL_H */
