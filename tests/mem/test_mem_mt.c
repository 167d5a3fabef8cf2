/* test_mem_mt.c — the allocators under real threads: concurrent page and coherent
 * alloc/free never hand out overlapping memory (each live block keeps its owner's stamp),
 * a node drained by several threads at once yields every page exactly once, and all memory
 * comes back when everything is freed.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/mem.h"
#include "iommulab/plat.h"
#include "iommulab/topo.h"
#include "support/skip.h"

#define MiB (1ull << 20)
#define NTHREADS 4
#define ITERS 3000
#define LIVE 16

struct block {
	ilab_pa_t pa;
	uint64_t bytes;
	unsigned order; /* pages: buddy order; coherent: UINT32_MAX */
	size_t size;
	uint64_t stamp;
};

struct ctx {
	struct ilab_mem *mem;
	unsigned idx;
	int errors;
	ilab_pa_t *drained; /* phase 2 */
	unsigned n_drained;
};

static void stamp_block(struct ilab_mem *mem, const struct block *b)
{
	for (uint64_t off = 0; off < b->bytes; off += 4096)
		ilab_mem_write(mem, b->pa + off, &b->stamp, sizeof(b->stamp));
}

static int check_block(struct ilab_mem *mem, const struct block *b)
{
	for (uint64_t off = 0; off < b->bytes; off += 4096) {
		uint64_t v = 0;
		if (ilab_mem_read(mem, b->pa + off, &v, sizeof(v)) || v != b->stamp)
			return 1;
	}
	return 0;
}

static void release(struct ilab_mem *mem, const struct block *b)
{
	if (b->order == UINT32_MAX)
		ilab_mem_free_coherent(mem, b->pa, b->size);
	else
		ilab_mem_free_pages(mem, b->pa, b->order);
}

static void *churn(void *arg)
{
	struct ctx *c = arg;
	struct block live[LIVE];
	unsigned nlive = 0, seed = 12345u + c->idx;

	for (unsigned it = 0; it < ITERS; it++) {
		if (nlive == LIVE || (nlive && rand_r(&seed) % 3 == 0)) {
			unsigned k = (unsigned)rand_r(&seed) % nlive;
			c->errors += check_block(c->mem, &live[k]);
			release(c->mem, &live[k]);
			live[k] = live[--nlive];
			continue;
		}
		struct block b = { .stamp = ((uint64_t)c->idx << 32) | it };
		int node = (int)((c->idx + it) % 2), ret;
		if (rand_r(&seed) % 2) {
			b.order = (unsigned)rand_r(&seed) % 5;
			b.bytes = 4096ull << b.order;
			ret = ilab_mem_alloc_pages(c->mem, node, b.order, &b.pa);
		} else {
			b.order = UINT32_MAX;
			b.size = 4096 * (1 + (unsigned)rand_r(&seed) % 40);
			b.bytes = b.size;
			ret = ilab_mem_alloc_coherent(c->mem, node, b.size, &b.pa, NULL);
		}
		if (ret == -ENOMEM)
			continue;
		if (ret) {
			c->errors++;
			continue;
		}
		/* Freshly allocated memory is zero: nobody else is still using it. */
		uint64_t first = 1;
		ilab_mem_read(c->mem, b.pa, &first, sizeof(first));
		c->errors += first != 0;
		stamp_block(c->mem, &b);
		live[nlive++] = b;
	}
	while (nlive) {
		c->errors += check_block(c->mem, &live[nlive - 1]);
		release(c->mem, &live[--nlive]);
	}
	return NULL;
}

static void run(void *(*fn)(void *), struct ctx *ctx)
{
	pthread_t th[NTHREADS];
	for (unsigned i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, fn, &ctx[i]), 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
}

/* 2 nodes of 8 MiB with a 2 MiB area each and a 4 MiB global area on node 0. */
static void test_concurrent_alloc_free_no_overlap(void **state)
{
	(void)state;
	struct ilab_mem_config cfg = { .nr_nodes = 2, .node_bytes = 8 * MiB,
				       .cma = ILAB_CMA_PERNUMA, .cma_global_node = 0,
				       .cma_global_bytes = 4 * MiB, .cma_node_bytes = 2 * MiB };
	struct ilab_mem *mem;
	struct ctx ctx[NTHREADS];
	struct ilab_mem_stats st;

	assert_int_equal(ilab_mem_create(&cfg, &mem), 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		ctx[i] = (struct ctx){ .mem = mem, .idx = i };
	run(churn, ctx);
	for (unsigned i = 0; i < NTHREADS; i++)
		assert_int_equal(ctx[i].errors, 0);
	ilab_mem_get_stats(mem, &st);
	assert_int_equal(st.bad_frees, 0);
	assert_int_equal(st.node_pages_free[0], (8 - 4 - 2) * MiB / 4096);
	assert_int_equal(st.node_pages_free[1], (8 - 2) * MiB / 4096);
	assert_int_equal(st.cma_bytes_used[0] + st.cma_bytes_used[1] + st.cma_bytes_used[2], 0);
	assert_true(st.coherent_allocs[ILAB_MEM_SRC_NODE_CMA] > 0);
	ilab_mem_destroy(mem);
}

#define DRAIN_PAGES 2048 /* one 8 MiB node */

static void *drain(void *arg)
{
	struct ctx *c = arg;
	ilab_pa_t pa;
	while (ilab_mem_alloc_pages(c->mem, 0, 0, &pa) == 0)
		c->drained[c->n_drained++] = pa;
	return NULL;
}

static int cmp_pa(const void *a, const void *b)
{
	ilab_pa_t x = *(const ilab_pa_t *)a, y = *(const ilab_pa_t *)b;
	return x < y ? -1 : x > y;
}

/* Four threads drain one node at once: together they get exactly its 2048 pages, each
 * once; freeing them all from other threads than the allocators restores the node. */
static void test_concurrent_drain_gets_each_page_once(void **state)
{
	(void)state;
	struct ilab_mem_config cfg = { .nr_nodes = 1, .node_bytes = 8 * MiB };
	struct ilab_mem *mem;
	struct ctx ctx[NTHREADS];
	ilab_pa_t *all = calloc(DRAIN_PAGES, sizeof(*all));
	unsigned total = 0;

	assert_int_equal(ilab_mem_create(&cfg, &mem), 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		ctx[i] = (struct ctx){ .mem = mem, .idx = i,
				       .drained = calloc(DRAIN_PAGES, sizeof(ilab_pa_t)) };
	run(drain, ctx);
	for (unsigned i = 0; i < NTHREADS; i++) {
		assert_true(total + ctx[i].n_drained <= DRAIN_PAGES);
		memcpy(all + total, ctx[i].drained, ctx[i].n_drained * sizeof(ilab_pa_t));
		total += ctx[i].n_drained;
	}
	assert_int_equal(total, DRAIN_PAGES);
	qsort(all, total, sizeof(*all), cmp_pa);
	for (unsigned i = 1; i < total; i++)
		assert_true(all[i] >= all[i - 1] + 4096);
	for (unsigned i = 0; i < total; i++)
		ilab_mem_free_pages(mem, all[i], 0);
	ilab_pa_t big;
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 10, &big), 0);
	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 10, &big), 0);
	for (unsigned i = 0; i < NTHREADS; i++)
		free(ctx[i].drained);
	free(all);
	ilab_mem_destroy(mem);
}

struct local_ctx {
	struct ilab_mem *mem;
	int want[4], got_pages[4], got_coherent[4];
};

static void alloc_on_this_node(unsigned idx, void *arg)
{
	struct local_ctx *c = arg;
	ilab_pa_t pa;

	c->want[idx] = plat_this_node();
	c->got_pages[idx] = c->got_coherent[idx] = -1;
	if (ilab_mem_alloc_pages(c->mem, -1, 0, &pa) == 0) {
		c->got_pages[idx] = ilab_mem_node_of(c->mem, pa);
		ilab_mem_free_pages(c->mem, pa, 0);
	}
	/* NUMA_NO_NODE device, one page: plain pages of the calling CPU's node. */
	if (ilab_mem_alloc_coherent(c->mem, -1, 4096, &pa, NULL) == 0) {
		c->got_coherent[idx] = ilab_mem_node_of(c->mem, pa);
		ilab_mem_free_coherent(c->mem, pa, 4096);
	}
}

/* node < 0 means the calling CPU's node: a plat thread on the first CPU of node n of the
 * 4-node kunpeng920 model gets pages of node n. */
static void test_negative_node_is_calling_cpus_node(void **state)
{
	(void)state;
	struct ilab_topo *t = NULL;
	struct plat_config pcfg = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_mem_config cfg = { .nr_nodes = 4, .node_bytes = 8 * MiB };
	struct local_ctx c = { 0 };
	int cpus[4];

	if (ilab_topo_load("kunpeng920", &t, NULL, 0))
		ILAB_SKIP("the kunpeng920 preset does not load");
	pcfg.topo = t;
	assert_int_equal(plat_init(&pcfg), 0);
	ilab_topo_free(t);
	assert_int_equal(plat_node_count(), 4);
	assert_int_equal(ilab_mem_create(&cfg, &c.mem), 0);
	for (int n = 0; n < 4; n++)
		cpus[n] = plat_node_cpu((unsigned)n, 0);
	assert_int_equal(plat_run_threads(4, cpus, alloc_on_this_node, &c), 0);
	for (int n = 0; n < 4; n++) {
		assert_int_equal(c.want[n], n);
		assert_int_equal(c.got_pages[n], n);
		assert_int_equal(c.got_coherent[n], n);
	}
	ilab_mem_destroy(c.mem);
	plat_fini();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_alloc_free_no_overlap),
		cmocka_unit_test(test_concurrent_drain_gets_each_page_once),
		cmocka_unit_test(test_negative_node_is_calling_cpus_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
