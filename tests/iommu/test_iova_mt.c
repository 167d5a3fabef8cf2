/* test_iova_mt.c — alloc_iova_fast/free_iova_fast from several plat threads at once (per-CPU
 * magazines, shared depot, tree fallback, cross-CPU frees). Ownership of every pfn is tracked
 * in a shared bitmap with atomic test-and-set, so two threads ever holding the same pfn fails.
 * Not a benchmark; runs under TSan in CI.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/iova.h>
#include <iommulab/plat.h>

#define LIMIT ((1ull << 20) - 1) /* 4 GiB of 4K pfns */
#define MAX_THREADS 8
#define LIVE 96

struct held {
	uint64_t pfn, size, asize;
};

struct ctx {
	struct ilab_iova_domain iovad;
	uint64_t *owner;   /* bit per pfn, updated with atomics */
	unsigned ops;
	struct held left[MAX_THREADS][LIVE]; /* ranges kept for another CPU to free */
	unsigned nleft[MAX_THREADS];
	unsigned errors[MAX_THREADS];
	unsigned nthreads;
};

static bool claim(struct ctx *c, uint64_t pfn, uint64_t n, bool set)
{
	uint64_t i;
	bool ok = true;

	for (i = pfn; i < pfn + n; i++) {
		uint64_t bit = 1ull << (i & 63), old;

		if (set)
			old = __atomic_fetch_or(&c->owner[i >> 6], bit, __ATOMIC_RELAXED);
		else
			old = __atomic_fetch_and(&c->owner[i >> 6], ~bit, __ATOMIC_RELAXED);
		if (!!(old & bit) == set)
			ok = false;
	}
	return ok;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void worker(unsigned idx, void *arg)
{
	struct ctx *c = arg;
	struct held h[LIVE];
	unsigned n = 0, i;
	uint64_t x = 0x9e3779b97f4a7c15ull * (idx + 1);

	for (i = 0; i < c->ops; i++) {
		uint64_t r = rnd(&x);

		if (n == LIVE || (n && (r & 1))) {
			unsigned k = (unsigned)((r >> 8) % n);

			if (!claim(c, h[k].pfn, h[k].asize, false) ||
			    ilab_free_iova_fast(&c->iovad, h[k].pfn, h[k].size))
				c->errors[idx]++;
			h[k] = h[--n];
		} else {
			uint64_t size = 1 + (r >> 16) % ((r >> 40) % 8 ? 4 : 40);
			uint64_t asize = size;
			uint64_t pfn = ilab_alloc_iova_fast(&c->iovad, size, LIMIT, true);

			if (size < 32)
				while (asize & (asize - 1))
					asize++;
			if (!pfn || pfn + asize - 1 > LIMIT || !claim(c, pfn, asize, true)) {
				c->errors[idx]++;
				continue;
			}
			h[n++] = (struct held){ pfn, size, asize };
		}
	}
	memcpy(c->left[idx], h, n * sizeof(h[0]));
	c->nleft[idx] = n;
}

/* Second phase: each CPU frees what its neighbour kept (cross-CPU frees, as when a completion
 * runs on another CPU than the submission). */
static void neighbour_free(unsigned idx, void *arg)
{
	struct ctx *c = arg;
	unsigned from = (idx + 1) % c->nthreads, i;

	for (i = 0; i < c->nleft[from]; i++) {
		struct held *h = &c->left[from][i];

		if (!claim(c, h->pfn, h->asize, false) ||
		    ilab_free_iova_fast(&c->iovad, h->pfn, h->size))
			c->errors[idx]++;
	}
}

static void run(bool check, enum ilab_iova_depot_mode mode)
{
	struct ctx *c = calloc(1, sizeof(*c));
	int cpus[MAX_THREADS];
	struct ilab_iova_stats st;
	unsigned i, n = plat_cpu_count();

	assert_non_null(c);
	if (n > MAX_THREADS)
		n = MAX_THREADS;
	if (n < 2)
		n = 2 <= plat_cpu_count() ? 2 : 1;
	for (i = 0; i < n; i++)
		cpus[i] = (int)i;
	c->nthreads = n;
	c->ops = 30000;
	c->owner = calloc((LIMIT + 64) / 64 + 1, sizeof(uint64_t));
	assert_int_equal(ilab_iova_domain_init(&c->iovad, 4096, 1), 0);
	ilab_iova_set_fast_free_check(&c->iovad, check);
	ilab_iova_set_depot_mode(&c->iovad, mode);

	assert_int_equal(plat_run_threads(n, cpus, worker, c), 0);
	assert_int_equal(plat_run_threads(n, cpus, neighbour_free, c), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(c->errors[i], 0);

	ilab_iova_flush_rcaches(&c->iovad);
	ilab_iova_stats(&c->iovad, &st);
	assert_int_equal(st.nodes, 0);      /* every IOVA returned */
	assert_int_equal(st.free_errors, 0);
	assert_true(st.cache_hits > 0);
	assert_true(st.max_mag_fill <= ILAB_IOVA_MAG_SIZE);
	assert_int_equal(ilab_iova_check(&c->iovad), 0);
	ilab_iova_domain_destroy(&c->iovad);
	free(c->owner);
	free(c);
}

static void test_fast_concurrent_checked(void **state)
{
	(void)state;
	run(true, ILAB_IOVA_DEPOT_LIST);
}

static void test_fast_concurrent_unchecked(void **state)
{
	(void)state;
	run(false, ILAB_IOVA_DEPOT_FIXED32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_concurrent_checked),
		cmocka_unit_test(test_fast_concurrent_unchecked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
