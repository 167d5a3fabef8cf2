/* test_io_pgtable.c — io-pgtable-arm (LPAE stage 1) against facts: Linux's built-in selftest
 * cases, descriptor bits per the Arm ARM, page-size selection, gather recording, placement.
 * Not a performance test. Expected PTEs are read with this file's own table walker, written
 * from the Arm ARM VMSAv8-64 descriptor formats, never with the module's walker.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/io_pgtable.h>
#include <iommulab/iommu_map.h>
#include <iommulab/mem.h>

#define SZ_4K (1ull << 12)
#define SZ_16K (1ull << 14)
#define SZ_64K (1ull << 16)
#define SZ_2M (1ull << 21)
#define SZ_32M (1ull << 25)
#define SZ_512M (1ull << 29)
#define SZ_1G (1ull << 30)
#define MiB (1ull << 20)

static struct ilab_mem *g_mem;

/* ---- recording flush ops (Linux selftest's dummy ops check the cookie and sizes) ---------- */

struct rec {
	uint64_t bitmap;
	unsigned flush_all, flush_walk, add_page, syncs, bad;
	uint64_t last_walk_iova, last_walk_size;
};

static void rec_flush_all(void *cookie)
{
	((struct rec *)cookie)->flush_all++;
}

static void rec_flush_walk(uint64_t iova, size_t size, size_t granule, void *cookie)
{
	struct rec *r = cookie;

	r->flush_walk++;
	r->last_walk_iova = iova;
	r->last_walk_size = size;
	if (!(size & r->bitmap) || !(granule & r->bitmap))
		r->bad++;
}

static void rec_sync(struct ilab_iotlb_gather *g, void *cookie)
{
	(void)g;
	((struct rec *)cookie)->syncs++;
}

static void rec_add_page(struct ilab_iotlb_gather *g, uint64_t iova, size_t granule, void *cookie)
{
	struct rec *r = cookie;

	r->add_page++;
	if (!(granule & r->bitmap))
		r->bad++;
	if (g)
		ilab_iotlb_gather_add_page(g, iova, granule, rec_sync, cookie);
}

static const struct ilab_iommu_flush_ops rec_ops = {
	.tlb_flush_all = rec_flush_all,
	.tlb_flush_walk = rec_flush_walk,
	.tlb_add_page = rec_add_page,
};

/* ---- independent spec walker ------------------------------------------------------------- */

struct walk {
	uint64_t pte;      /* the leaf or invalid descriptor where the walk stopped */
	int level;         /* its level, -1 if the walk could not read memory */
	uint64_t oa;       /* output address (leaf only) */
	bool leaf;
	ilab_pa_t tables[4]; /* table addresses visited per level */
};

/* Arm ARM: grain from TG0 (0:4K 1:64K 2:16K); stride = grain - 3; initial lookup level from
 * the input size 64 - T0SZ: enough levels of `stride` bits to cover ias - grain bits. */
static struct walk spec_walk(const struct ilab_io_pgtable_cfg *cfg, uint64_t iova)
{
	struct walk w = { .level = -1 };
	unsigned tg = cfg->arm_lpae_s1_cfg.tcr.tg;
	unsigned grain = tg == 0 ? 12 : tg == 1 ? 16 : 14;
	unsigned stride = grain - 3;
	unsigned ias = 64 - cfg->arm_lpae_s1_cfg.tcr.tsz;
	unsigned levels = (ias - grain + stride - 1) / stride;
	int lvl = 4 - (int)levels;
	ilab_pa_t table = cfg->arm_lpae_s1_cfg.ttbr;

	for (; lvl <= 3; lvl++) {
		unsigned shift = grain + (unsigned)(3 - lvl) * stride;
		unsigned bits = (lvl == 4 - (int)levels) ? ias - shift : stride;
		uint64_t idx = (iova >> shift) & ((1ull << bits) - 1);
		uint64_t d;

		w.tables[lvl] = table;
		if (ilab_mem_read(g_mem, table + idx * 8, &d, 8))
			return w;
		w.pte = d;
		w.level = lvl;
		if (!(d & 1))
			return w; /* invalid */
		if (lvl == 3 || !(d & 2)) {
			/* page (level 3, bits 0b11) or block (bits 0b01) */
			if (lvl == 3 && (d & 3) != 3)
				return w;
			w.leaf = true;
			w.oa = (d & 0x0000fffffffff000ull & ~((1ull << shift) - 1)) |
			       (iova & ((1ull << shift) - 1));
			return w;
		}
		table = d & 0x0000fffffffff000ull;
	}
	return w;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static int setup_mem(void **state)
{
	struct ilab_mem_config mc = { .nr_nodes = 2, .node_bytes = 256 * MiB };

	(void)state;
	return ilab_mem_create(&mc, &g_mem);
}

static int teardown_mem(void **state)
{
	(void)state;
	ilab_mem_destroy(g_mem);
	return 0;
}

static struct ilab_io_pgtable *make(uint64_t bitmap, unsigned ias, unsigned oas, int node,
				    struct rec *r)
{
	struct ilab_io_pgtable_cfg cfg = {
		.pgsize_bitmap = bitmap, .ias = ias, .oas = oas, .coherent_walk = true,
		.tlb = &rec_ops, .cookie = r, .mem = g_mem, .node = node,
	};
	struct ilab_io_pgtable *pgt = NULL;

	memset(r, 0, sizeof(*r));
	r->bitmap = bitmap;
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), 0);
	assert_non_null(pgt);
	return pgt;
}

static int map1(struct ilab_io_pgtable *pgt, uint64_t iova, uint64_t pa, uint64_t size, int prot)
{
	size_t mapped = 0;
	int ret = ilab_io_pgtable_map_pages(pgt, iova, pa, size, 1, prot, &mapped);

	if (!ret)
		assert_int_equal(mapped, size);
	return ret;
}

/* ---- Linux selftest cases ------------------------------------------------------------------- */

static const unsigned addr_bits[] = { 32, 36, 40, 42, 44, 48 };
static const uint64_t bitmaps[] = { SZ_4K | SZ_2M | SZ_1G, SZ_16K | SZ_32M, SZ_64K | SZ_512M };

static void selftest_one(uint64_t bitmap, unsigned ias, unsigned oas)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(bitmap, ias, oas, 0, &r);
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(pgt);
	uint64_t iova, size, b;

	assert_int_equal(cfg->pgsize_bitmap, bitmap);
	/* 1. an empty table translates nothing */
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 42), 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, SZ_1G + 42), 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 2 * SZ_1G + 42), 0);

	/* 2. every page size at its own GiB, identity-mapped; overlapping map refused */
	iova = 0;
	for (b = bitmap; b; b &= b - 1) {
		size = b & -b;
		assert_int_equal(map1(pgt, iova, iova, size,
				      ILAB_IOMMU_READ | ILAB_IOMMU_WRITE | ILAB_IOMMU_NOEXEC |
					      ILAB_IOMMU_CACHE), 0);
		assert_int_equal(map1(pgt, iova, iova + size, size,
				      ILAB_IOMMU_READ | ILAB_IOMMU_NOEXEC), -EEXIST);
		assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, iova + 42), iova + 42);
		/* cross-check with the spec walker: a leaf of exactly this size */
		struct walk w = spec_walk(cfg, iova + 42);
		assert_true(w.leaf);
		assert_int_equal(w.oa, iova + 42);
		assert_int_equal(w.pte & (1ull << 10), 1ull << 10);       /* AF */
		assert_int_equal((w.pte >> 2) & 7, 1);                     /* AttrIndx: WB */
		assert_int_equal((w.pte >> 8) & 3, 3);                     /* SH: inner */
		assert_int_equal(w.pte & (1ull << 7), 0);                  /* AP[2]: writable */
		assert_int_equal(w.pte & (3ull << 53), 3ull << 53);        /* XN */
		iova += SZ_1G;
	}

	/* 4. full unmap and remap */
	iova = 0;
	for (b = bitmap; b; b &= b - 1) {
		size = b & -b;
		assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova, size, 1, NULL), size);
		assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, iova + 42), 0);
		assert_int_equal(map1(pgt, iova, iova, size, ILAB_IOMMU_WRITE), 0);
		assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, iova + 42), iova + 42);
		iova += SZ_1G;
	}

	/* 5. the largest page at the very top of the input range */
	size = 1ull << (63 - __builtin_clzll(bitmap));
	iova = (1ull << ias) - size;
	{
		size_t mapped = 0;

		assert_int_equal(ilab_io_pgtable_map_pages(pgt, iova, 0, size, 1,
							   ILAB_IOMMU_READ, &mapped), 0);
		assert_int_equal(mapped, size);
		assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, iova + 42), 42);
		assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova, size, 1, NULL), size);
	}
	assert_int_equal(r.bad, 0);
	ilab_free_io_pgtable(pgt);
}

static void test_linux_selftest_configs(void **state)
{
	unsigned i, j, k, n = 0;

	(void)state;
	for (k = 0; k < 3; k++)
		for (i = 0; i < 6; i++)
			for (j = 0; j < 6; j++)
				if (addr_bits[i] <= addr_bits[j]) {
					selftest_one(bitmaps[k], addr_bits[i], addr_bits[j]);
					n++;
				}
	assert_int_equal(n, 63); /* 3 page-size sets x 21 (ias <= oas) pairs */
}

/* ---- geometry and CD fields ------------------------------------------------------------- */

static void check_geom(uint64_t bitmap, unsigned ias, unsigned start, unsigned pgd_entries,
		       unsigned tg)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(bitmap, ias, 48, 0, &r);
	struct ilab_io_pgtable_geometry g;
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(pgt);

	ilab_io_pgtable_geometry(pgt, &g);
	assert_int_equal(g.start_level, start);
	assert_int_equal(1u << g.pgd_bits, pgd_entries);
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.tg, tg);
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.tsz, 64 - ias);
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.ips, 5); /* 48-bit PA */
	assert_int_equal(cfg->arm_lpae_s1_cfg.tcr.sh, 3);
	assert_int_equal(cfg->arm_lpae_s1_cfg.mair, 0xf404ff44ull);
	assert_int_equal(cfg->arm_lpae_s1_cfg.ttbr & 0xfff, 0);
	ilab_free_io_pgtable(pgt);
}

static void test_geometry(void **state)
{
	(void)state;
	/* reference §2.1 */
	check_geom(SZ_4K | SZ_2M | SZ_1G, 48, 0, 512, 0);
	check_geom(SZ_4K | SZ_2M | SZ_1G, 32, 1, 4, 0);
	check_geom(SZ_4K | SZ_2M | SZ_1G, 39, 1, 512, 0);
	check_geom(SZ_16K | SZ_32M, 48, 0, 2, 2);
	check_geom(SZ_64K | SZ_512M, 48, 1, 64, 1);
	check_geom(SZ_64K | SZ_512M, 42, 2, 8192, 1); /* 16+13+13 bits: two full levels */
}

static void test_restrict_pgsizes(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *pgt;

	(void)state;
	/* 4K wins when offered; 16K/64K sizes are dropped */
	pgt = make(SZ_4K | SZ_16K | SZ_64K | SZ_2M | SZ_32M | SZ_1G, 48, 48, 0, &r);
	assert_int_equal(ilab_io_pgtable_cfg(pgt)->pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G);
	ilab_free_io_pgtable(pgt);
	/* without 4K, the smallest larger granule */
	pgt = make(SZ_16K | SZ_64K | SZ_32M | SZ_512M, 48, 48, 0, &r);
	assert_int_equal(ilab_io_pgtable_cfg(pgt)->pgsize_bitmap, SZ_16K | SZ_32M);
	ilab_free_io_pgtable(pgt);
}

static void test_bad_config(void **state)
{
	struct ilab_io_pgtable_cfg cfg = {
		.pgsize_bitmap = SZ_4K, .ias = 48, .oas = 48, .mem = g_mem,
	};
	struct ilab_io_pgtable *pgt = (void *)1;

	(void)state;
	cfg.ias = 49;
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), -EINVAL);
	assert_null(pgt);
	cfg.ias = 48;
	cfg.oas = 50;
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), -EINVAL);
	cfg.oas = 48;
	cfg.pgsize_bitmap = 0;
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), -EINVAL);
	cfg.pgsize_bitmap = SZ_2M; /* no granule */
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), -EINVAL);
	cfg.pgsize_bitmap = SZ_4K;
	cfg.mem = NULL;
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), -EINVAL);
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, NULL, &pgt), -EINVAL);
	ilab_free_io_pgtable(NULL);
}

static void test_bad_map_args(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(SZ_4K | SZ_2M | SZ_1G, 40, 40, 0, &r);
	size_t mapped = 0;

	(void)state;
	assert_int_equal(map1(pgt, 0x1000 + 1, 0x1000, SZ_4K, ILAB_IOMMU_READ), -EINVAL);
	assert_int_equal(map1(pgt, 0x1000, 0x1800, SZ_4K, ILAB_IOMMU_READ), -EINVAL);
	assert_int_equal(map1(pgt, 0x1000, 0x1000, SZ_16K, ILAB_IOMMU_READ), -EINVAL);
	assert_int_equal(map1(pgt, 0x1000, 0x1000, SZ_4K | SZ_2M, ILAB_IOMMU_READ), -EINVAL);
	assert_int_equal(map1(pgt, 1ull << 40, 0x1000, SZ_4K, ILAB_IOMMU_READ), -ERANGE);
	assert_int_equal(map1(pgt, 0x1000, 1ull << 40, SZ_4K, ILAB_IOMMU_READ), -ERANGE);
	assert_int_equal(map1(pgt, 0x1000, 0x1000, SZ_4K, ILAB_IOMMU_NOEXEC), -EINVAL);
	assert_int_equal(ilab_io_pgtable_map_pages(pgt, 0x1000, 0x1000, SZ_4K, 0,
						   ILAB_IOMMU_READ, &mapped), -EINVAL);
	assert_int_equal(ilab_io_pgtable_map_pages(NULL, 0, 0, SZ_4K, 1, ILAB_IOMMU_READ, &mapped),
			 -EINVAL);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, 0x1000, SZ_4K, 1, NULL), 0); /* empty */
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, 1ull << 40, SZ_4K, 1, NULL), 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 1ull << 40), 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(NULL, 0), 0);
	ilab_free_io_pgtable(pgt);
}

/* ---- descriptor bits ---------------------------------------------------------------------- */

static uint64_t leaf_pte(struct ilab_io_pgtable *pgt, uint64_t iova)
{
	struct walk w = spec_walk(ilab_io_pgtable_cfg(pgt), iova);

	assert_true(w.leaf);
	return w.pte;
}

static void test_permissions(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(SZ_4K | SZ_2M | SZ_1G, 48, 48, 0, &r);
	uint64_t pte;

	(void)state;
	assert_int_equal(map1(pgt, 0x10000, 0x20000, SZ_4K, ILAB_IOMMU_READ), 0);
	pte = leaf_pte(pgt, 0x10000);
	assert_int_equal(pte & 3, 3);                  /* level-3 page descriptor */
	assert_int_equal(pte & (1ull << 7), 1ull << 7); /* AP[2] read-only */
	assert_int_equal(pte & (1ull << 6), 1ull << 6); /* AP[1] unprivileged */
	assert_int_equal(pte & (1ull << 11), 1ull << 11); /* nG */
	assert_int_equal((pte >> 2) & 7, 0);           /* Normal non-cacheable */
	assert_int_equal((pte >> 8) & 3, 2);           /* outer-shareable without CACHE */
	assert_int_equal(pte & (3ull << 53), 0);       /* executable */
	assert_int_equal(pte & 0x0000fffffffff000ull, 0x20000);

	assert_int_equal(map1(pgt, 0x11000, 0x21000, SZ_4K,
			      ILAB_IOMMU_READ | ILAB_IOMMU_WRITE | ILAB_IOMMU_PRIV), 0);
	pte = leaf_pte(pgt, 0x11000);
	assert_int_equal(pte & (1ull << 7), 0);
	assert_int_equal(pte & (1ull << 6), 0);

	assert_int_equal(map1(pgt, 0x12000, 0x22000, SZ_4K, ILAB_IOMMU_WRITE | ILAB_IOMMU_MMIO), 0);
	pte = leaf_pte(pgt, 0x12000);
	assert_int_equal((pte >> 2) & 7, 2);           /* Device */
	assert_int_equal(pte & (1ull << 7), 0);        /* write-only is not read-only */

	assert_int_equal(map1(pgt, 0x13000, 0x23000, SZ_4K,
			      ILAB_IOMMU_READ | ILAB_IOMMU_CACHE | ILAB_IOMMU_NOEXEC), 0);
	pte = leaf_pte(pgt, 0x13000);
	assert_int_equal((pte >> 2) & 7, 1);
	assert_int_equal((pte >> 8) & 3, 3);
	assert_int_equal(pte & (3ull << 53), 3ull << 53);

	/* a 2 MiB block: descriptor type 0b01 at level 2 */
	assert_int_equal(map1(pgt, SZ_1G, 4 * SZ_2M, SZ_2M, ILAB_IOMMU_READ), 0);
	{
		struct walk w = spec_walk(ilab_io_pgtable_cfg(pgt), SZ_1G + 0x1234);

		assert_true(w.leaf);
		assert_int_equal(w.level, 2);
		assert_int_equal(w.pte & 3, 1);
		assert_int_equal(w.oa, 4 * SZ_2M + 0x1234);
	}
	ilab_free_io_pgtable(pgt);
}

/* ---- the core loop: page-size selection, block choice, old vs new path ------------------ */

struct counting {
	struct ilab_iommu_pt_ops inner;
	unsigned map_pages_calls, map_calls, unmap_pages_calls, unmap_calls;
	size_t sizes[16], counts[16];
};

static int c_map_pages(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize, size_t pgcount,
		       int prot, size_t *mapped)
{
	struct counting *c = priv;

	if (c->map_pages_calls < 16) {
		c->sizes[c->map_pages_calls] = pgsize;
		c->counts[c->map_pages_calls] = pgcount;
	}
	c->map_pages_calls++;
	return c->inner.map_pages(c->inner.priv, iova, paddr, pgsize, pgcount, prot, mapped);
}

static int c_map(void *priv, uint64_t iova, ilab_pa_t paddr, size_t pgsize, int prot)
{
	struct counting *c = priv;

	c->map_calls++;
	return c->inner.map(c->inner.priv, iova, paddr, pgsize, prot);
}

static size_t c_unmap_pages(void *priv, uint64_t iova, size_t pgsize, size_t pgcount,
			    struct ilab_iotlb_gather *g)
{
	struct counting *c = priv;

	c->unmap_pages_calls++;
	return c->inner.unmap_pages(c->inner.priv, iova, pgsize, pgcount, g);
}

static size_t c_unmap(void *priv, uint64_t iova, size_t pgsize, struct ilab_iotlb_gather *g)
{
	struct counting *c = priv;

	c->unmap_calls++;
	return c->inner.unmap(c->inner.priv, iova, pgsize, g);
}

static void counting_ops(struct counting *c, struct ilab_io_pgtable *pgt,
			 struct ilab_iommu_pt_ops *ops)
{
	memset(c, 0, sizeof(*c));
	ilab_io_pgtable_pt_ops(pgt, &c->inner);
	*ops = c->inner;
	ops->priv = c;
	ops->map_pages = c_map_pages;
	ops->map = c_map;
	ops->unmap_pages = c_unmap_pages;
	ops->unmap = c_unmap;
}

static void test_pgsize_selection(void **state)
{
	const uint64_t bm = SZ_4K | SZ_2M | SZ_1G;
	size_t count = 0;

	(void)state;
	/* aligned 2 MiB: one 2M page */
	assert_int_equal(ilab_iommu_pgsize(bm, SZ_2M, 4 * SZ_2M, SZ_2M, &count), SZ_2M);
	assert_int_equal(count, 1);
	/* 8K below a 2M boundary with enough size beyond it: two 4K pages, then the block */
	assert_int_equal(ilab_iommu_pgsize(bm, SZ_2M - 8192, SZ_2M - 8192, 8192 + SZ_2M, &count),
			 SZ_4K);
	assert_int_equal(count, 2);
	/* same but iova and paddr differently offset in 2M: all 4K pages */
	assert_int_equal(ilab_iommu_pgsize(bm, SZ_2M - 8192, SZ_4K, 8192 + SZ_2M, &count), SZ_4K);
	assert_int_equal(count, (8192 + SZ_2M) / SZ_4K);
	/* remaining size too small for another block: all 4K */
	assert_int_equal(ilab_iommu_pgsize(bm, SZ_2M - 8192, SZ_2M - 8192, 8192 + SZ_4K, &count),
			 SZ_4K);
	assert_int_equal(count, 3);
	/* misaligned: nothing fits */
	assert_int_equal(ilab_iommu_pgsize(bm, 0x800, 0, SZ_4K, &count), 0);
}

static void test_block_chosen_and_paths(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *a = make(SZ_4K | SZ_2M | SZ_1G, 48, 48, 0, &r);
	struct ilab_io_pgtable *b = make(SZ_4K | SZ_2M | SZ_1G, 48, 48, 0, &r);
	struct ilab_iommu_pt_ops oa, ob;
	struct counting ca, cb;
	const uint64_t iova = 64 * SZ_2M - 8192, size = 8192 + SZ_2M + 8192;
	uint64_t off;

	(void)state;
	counting_ops(&ca, a, &oa);
	counting_ops(&cb, b, &ob);
	assert_int_equal(ilab_iommu_map(&oa, iova, iova, size, ILAB_IOMMU_READ, true), 0);
	assert_int_equal(ilab_iommu_map(&ob, iova, iova, size, ILAB_IOMMU_READ, false), 0);
	/* map_pages: (4K x2) (2M x1) (4K x2); the old path: one call per page */
	assert_int_equal(ca.map_pages_calls, 3);
	assert_int_equal(ca.sizes[0], SZ_4K);
	assert_int_equal(ca.counts[0], 2);
	assert_int_equal(ca.sizes[1], SZ_2M);
	assert_int_equal(ca.counts[1], 1);
	assert_int_equal(ca.sizes[2], SZ_4K);
	assert_int_equal(ca.counts[2], 2);
	assert_int_equal(cb.map_calls, 5);
	assert_int_equal(ca.map_calls + cb.map_pages_calls, 0);
	/* the 2M in the middle is a level-2 block in both tables */
	assert_int_equal(spec_walk(ilab_io_pgtable_cfg(a), 64 * SZ_2M).level, 2);
	assert_int_equal(spec_walk(ilab_io_pgtable_cfg(b), 64 * SZ_2M).level, 2);
	/* identical descriptors everywhere */
	for (off = 0; off < size; off += SZ_4K) {
		struct walk wa = spec_walk(ilab_io_pgtable_cfg(a), iova + off);
		struct walk wb = spec_walk(ilab_io_pgtable_cfg(b), iova + off);

		assert_true(wa.leaf && wb.leaf);
		assert_int_equal(wa.pte, wb.pte);
		assert_int_equal(wa.level, wb.level);
		assert_int_equal(wa.oa, iova + off);
	}
	assert_int_equal(ilab_iommu_unmap(&oa, iova, size, true), size);
	assert_int_equal(ilab_iommu_unmap(&ob, iova, size, false), size);
	assert_int_equal(ca.unmap_pages_calls, 3);
	assert_int_equal(cb.unmap_calls, 5);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(a, 64 * SZ_2M), 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(b, iova), 0);
	ilab_free_io_pgtable(a);
	ilab_free_io_pgtable(b);
}

/* Random ranges mapped both ways give the same tables. */
static void test_map_pages_equals_per_page(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *a = make(SZ_4K | SZ_2M | SZ_1G, 44, 44, 0, &r);
	struct ilab_io_pgtable *b = make(SZ_4K | SZ_2M | SZ_1G, 44, 44, 0, &r);
	struct ilab_iommu_pt_ops oa, ob;
	uint64_t x = 0x9e3779b97f4a7c15ull, base = 0;
	int i;

	(void)state;
	ilab_io_pgtable_pt_ops(a, &oa);
	ilab_io_pgtable_pt_ops(b, &ob);
	for (i = 0; i < 40; i++) {
		uint64_t pages, pa, off;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		pages = 1 + x % 1500;
		/* half of the runs share the iova's 2M offset so blocks become possible */
		pa = (i & 1) ? base + SZ_1G : (x >> 20) % 4096 * SZ_4K + SZ_1G;
		assert_int_equal(ilab_iommu_map(&oa, base, pa, pages * SZ_4K,
						ILAB_IOMMU_READ | ILAB_IOMMU_WRITE, true), 0);
		assert_int_equal(ilab_iommu_map(&ob, base, pa, pages * SZ_4K,
						ILAB_IOMMU_READ | ILAB_IOMMU_WRITE, false), 0);
		for (off = 0; off < pages * SZ_4K; off += SZ_4K) {
			struct walk wa = spec_walk(ilab_io_pgtable_cfg(a), base + off);
			struct walk wb = spec_walk(ilab_io_pgtable_cfg(b), base + off);

			assert_true(wa.leaf);
			assert_int_equal(wa.pte, wb.pte);
			assert_int_equal(wa.oa, pa + off);
		}
		base += (pages + 1 + x % 700) * SZ_4K;
	}
	ilab_free_io_pgtable(a);
	ilab_free_io_pgtable(b);
}

/* ---- gather and walks ------------------------------------------------------------------------ */

static void test_gather_run(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(SZ_4K | SZ_2M | SZ_1G, 48, 48, 0, &r);
	struct ilab_io_pgtable_stats s0, s1;
	struct ilab_iotlb_gather g;
	const uint64_t iova = 16 * SZ_2M, pa = SZ_1G + SZ_4K; /* pa offset: no block possible */
	size_t mapped = 0;
	unsigned i;

	(void)state;
	/* map_pages: 512 PTEs of one table in one walk */
	ilab_io_pgtable_stats(pgt, &s0);
	assert_int_equal(ilab_io_pgtable_map_pages(pgt, iova, pa, SZ_4K, 512, ILAB_IOMMU_READ,
						   &mapped), 0);
	assert_int_equal(mapped, SZ_2M);
	ilab_io_pgtable_stats(pgt, &s1);
	assert_int_equal(s1.walks - s0.walks, 1);
	assert_int_equal(s1.pte_stores - s0.pte_stores, 512);

	/* unmap_pages: one walk; every leaf reported to tlb_add_page, which coalesces them into
	 * one range of 4K pages without any intermediate sync */
	ilab_iotlb_gather_init(&g);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova, SZ_4K, 512, &g), SZ_2M);
	ilab_io_pgtable_stats(pgt, &s0);
	assert_int_equal(s0.walks - s1.walks, 1);
	assert_int_equal(r.add_page, 512);
	assert_int_equal(r.syncs, 0);
	assert_int_equal(g.start, iova);
	assert_int_equal(g.end, iova + SZ_2M - 1);
	assert_int_equal(g.pgsize, SZ_4K);
	assert_int_equal(r.flush_walk, 0); /* leaves only: no table was removed */

	/* the old path: one walk per page, same gather outcome */
	for (i = 0; i < 512; i++)
		assert_int_equal(ilab_io_pgtable_map_one(pgt, iova + i * SZ_4K, pa + i * SZ_4K,
							 SZ_4K, ILAB_IOMMU_READ), 0);
	ilab_iotlb_gather_init(&g);
	r.add_page = 0;
	for (i = 0; i < 512; i++)
		assert_int_equal(ilab_io_pgtable_unmap_one(pgt, iova + i * SZ_4K, SZ_4K, &g), SZ_4K);
	ilab_io_pgtable_stats(pgt, &s1);
	assert_int_equal(s1.walks - s0.walks, 1024);
	assert_int_equal(r.add_page, 512);
	assert_int_equal(g.start, iova);
	assert_int_equal(g.end, iova + SZ_2M - 1);

	/* a queued gather (lazy mode) records nothing */
	assert_int_equal(map1(pgt, iova, pa, SZ_4K, ILAB_IOMMU_READ), 0);
	ilab_iotlb_gather_init(&g);
	g.queued = true;
	r.add_page = 0;
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova, SZ_4K, 1, &g), SZ_4K);
	assert_int_equal(r.add_page, 0);
	assert_true(ilab_iotlb_gather_empty(&g));

	/* disjoint pages force a sync between them; a different size too */
	ilab_iotlb_gather_init(&g);
	r.syncs = 0;
	ilab_iotlb_gather_add_page(&g, 0x10000, SZ_4K, rec_sync, &r);
	ilab_iotlb_gather_add_page(&g, 0x11000, SZ_4K, rec_sync, &r); /* adjacent */
	ilab_iotlb_gather_add_page(&g, 0xf000, SZ_4K, rec_sync, &r);  /* adjacent below */
	assert_int_equal(r.syncs, 0);
	ilab_iotlb_gather_add_page(&g, 0x20000, SZ_4K, rec_sync, &r); /* disjoint */
	assert_int_equal(r.syncs, 1);
	assert_int_equal(g.start, 0x20000);
	ilab_iotlb_gather_add_page(&g, 0x21000, SZ_2M, rec_sync, &r); /* other size */
	assert_int_equal(r.syncs, 2);
	ilab_free_io_pgtable(pgt);
}

/* Linux keeps empty intermediate tables after leaf unmaps; only unmapping a whole table-sized
 * block removes a table (with a synchronous walk flush). */
static void test_table_lifetime(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(SZ_4K | SZ_2M | SZ_1G, 48, 48, 0, &r);
	struct ilab_io_pgtable_stats s0, s1;
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(pgt);
	const uint64_t iova = 8 * SZ_2M;
	struct walk w;
	size_t mapped = 0;

	(void)state;
	assert_int_equal(ilab_io_pgtable_map_pages(pgt, iova, SZ_1G + SZ_4K, SZ_4K, 512,
						   ILAB_IOMMU_READ, &mapped), 0);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova, SZ_4K, 512, NULL), SZ_2M);
	w = spec_walk(cfg, iova);
	assert_int_equal(w.level, 3);  /* the level-3 table is still there, empty */
	assert_int_equal(w.pte, 0);

	/* refill it and unmap it as one 2M "page": the table goes, flushed by walk */
	assert_int_equal(ilab_io_pgtable_map_pages(pgt, iova, SZ_1G + SZ_4K, SZ_4K, 512,
						   ILAB_IOMMU_READ, &mapped), 0);
	ilab_io_pgtable_stats(pgt, &s0);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova, SZ_2M, 1, NULL), SZ_2M);
	ilab_io_pgtable_stats(pgt, &s1);
	assert_int_equal(r.flush_walk, 1);
	assert_int_equal(r.last_walk_iova, iova);
	assert_int_equal(r.last_walk_size, SZ_2M);
	assert_int_equal(s1.tables_free - s0.tables_free, 1);
	w = spec_walk(cfg, iova);
	assert_int_equal(w.level, 2);
	assert_int_equal(w.pte, 0);

	/* a block replacing a table: the old (empty) table is unmapped and freed first */
	assert_int_equal(map1(pgt, iova, SZ_1G, SZ_4K, ILAB_IOMMU_READ), 0);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova, SZ_4K, 1, NULL), SZ_4K);
	r.flush_walk = 0;
	assert_int_equal(map1(pgt, iova, SZ_1G, SZ_2M, ILAB_IOMMU_READ), 0);
	assert_int_equal(r.flush_walk, 1);
	assert_int_equal(spec_walk(cfg, iova).level, 2);
	assert_true(spec_walk(cfg, iova).leaf);

	/* unmapping part of a block is refused and changes nothing (Linux >= 6.13) */
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova + SZ_4K, SZ_4K, 1, NULL), 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, iova + SZ_4K), SZ_1G + SZ_4K);
	/* a 4K map inside the block is an overlap */
	assert_int_equal(map1(pgt, iova + SZ_4K, 0, SZ_4K, ILAB_IOMMU_READ), -EEXIST);
	ilab_free_io_pgtable(pgt);
}

/* Linux <= 6.12 (cfg.split_blocks): a partial unmap of a 2M block replaces it by a table of
 * 4K pages without the unmapped ones; of a 1G block, a table of 2M blocks and one of those
 * split in turn. Every other byte keeps its translation (checked by the spec walker). */
static void test_split_blocks_on_partial_unmap(void **state)
{
	struct ilab_io_pgtable_cfg cfg = {
		.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G, .ias = 48, .oas = 48,
		.coherent_walk = true, .split_blocks = true, .tlb = &rec_ops, .mem = g_mem,
	};
	struct ilab_io_pgtable *pgt = NULL;
	struct ilab_io_pgtable_stats st;
	struct rec r = { .bitmap = SZ_4K | SZ_2M | SZ_1G };
	const uint64_t iova = 4 * SZ_1G, pa = SZ_1G;
	struct walk w;

	(void)state;
	cfg.cookie = &r;
	assert_int_equal(ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &pgt), 0);
	/* 2M block: unmap pages 3 and 4 of it */
	assert_int_equal(map1(pgt, iova, pa, SZ_2M, ILAB_IOMMU_READ), 0);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, iova + 3 * SZ_4K, SZ_4K, 2, NULL),
			 2 * SZ_4K);
	for (uint64_t off = 0; off < SZ_2M; off += SZ_4K) {
		w = spec_walk(ilab_io_pgtable_cfg(pgt), iova + off + 7);
		if (off == 3 * SZ_4K || off == 4 * SZ_4K) {
			assert_false(w.leaf);
			continue;
		}
		assert_true(w.leaf);
		assert_int_equal(w.level, 3);
		assert_int_equal(w.oa, pa + off + 7);
	}
	ilab_io_pgtable_stats(pgt, &st);
	assert_int_equal(st.block_splits, 1);
	/* 1G block: one 4K page out of its second 2M: two splits */
	assert_int_equal(map1(pgt, 8 * SZ_1G, 0, SZ_1G, ILAB_IOMMU_READ), 0);
	assert_int_equal(ilab_io_pgtable_unmap_pages(pgt, 8 * SZ_1G + SZ_2M, SZ_4K, 1, NULL),
			 SZ_4K);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 8 * SZ_1G + SZ_2M), 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 8 * SZ_1G + SZ_2M + SZ_4K),
			 SZ_2M + SZ_4K);
	w = spec_walk(ilab_io_pgtable_cfg(pgt), 8 * SZ_1G + 5 * SZ_2M);
	assert_true(w.leaf);
	assert_int_equal(w.level, 2); /* the rest of the 1G stays 2M blocks */
	assert_int_equal(w.oa, 5 * SZ_2M);
	ilab_io_pgtable_stats(pgt, &st);
	assert_int_equal(st.block_splits, 3);
	ilab_free_io_pgtable(pgt);
}

/* map_pages stops at the end of the last-level table: the core loop continues. */
static void test_run_stops_at_table_end(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(SZ_4K | SZ_2M | SZ_1G, 48, 48, 0, &r);
	size_t mapped = 0;

	(void)state;
	assert_int_equal(ilab_io_pgtable_map_pages(pgt, SZ_2M - 3 * SZ_4K, SZ_4K, SZ_4K, 10,
						   ILAB_IOMMU_READ, &mapped), 0);
	assert_int_equal(mapped, 3 * SZ_4K);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, SZ_2M), 0);
	/* an overlap inside the run writes nothing of it */
	assert_int_equal(map1(pgt, 0x100000, 0x5000, SZ_4K, ILAB_IOMMU_READ), 0);
	mapped = 0;
	assert_int_equal(ilab_io_pgtable_map_pages(pgt, 0x100000 - 2 * SZ_4K, 0x3000, SZ_4K, 4,
						   ILAB_IOMMU_READ, &mapped), -EEXIST);
	assert_int_equal(mapped, 0);
	assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 0x100000 - 2 * SZ_4K), 0);
	/* the core loop unrolls a partial map on failure */
	{
		struct ilab_iommu_pt_ops ops;

		ilab_io_pgtable_pt_ops(pgt, &ops);
		assert_int_equal(ilab_iommu_map(&ops, 0x100000 - 4 * SZ_4K, 0x40000, 8 * SZ_4K,
						ILAB_IOMMU_READ, true), -EEXIST);
		assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 0x100000 - 4 * SZ_4K), 0);
		assert_int_equal(ilab_io_pgtable_iova_to_phys(pgt, 0x100000), 0x5000);
		assert_int_equal(ilab_iommu_map(&ops, 0x1001, 0, SZ_4K, ILAB_IOMMU_READ, true),
				 -EINVAL);
		assert_int_equal(ilab_iommu_unmap(&ops, 0x1001, SZ_4K, true), 0);
	}
	ilab_free_io_pgtable(pgt);
}

/* ---- placement: every table on cfg->node ---------------------------------------------------- */

static void test_tables_on_node(void **state)
{
	struct rec r;
	struct ilab_io_pgtable *pgt = make(SZ_4K | SZ_2M | SZ_1G, 48, 48, 1, &r);
	const struct ilab_io_pgtable_cfg *cfg = ilab_io_pgtable_cfg(pgt);
	struct walk w;
	int l;

	(void)state;
	assert_int_equal(map1(pgt, 0x7f0000001000ull, 0x1000, SZ_4K, ILAB_IOMMU_READ), 0);
	w = spec_walk(cfg, 0x7f0000001000ull);
	assert_true(w.leaf);
	assert_int_equal(w.level, 3);
	for (l = 0; l <= 3; l++)
		assert_int_equal(ilab_mem_node_of(g_mem, w.tables[l]), 1);
	ilab_free_io_pgtable(pgt);
}

/* Freeing the whole table returns every page to the allocator. */
static void test_free_returns_pages(void **state)
{
	struct rec r;
	struct ilab_mem_stats m0, m1;
	struct ilab_io_pgtable *pgt;
	struct ilab_io_pgtable_stats s;
	struct ilab_iommu_pt_ops ops;

	(void)state;
	ilab_mem_get_stats(g_mem, &m0);
	pgt = make(SZ_16K | SZ_32M, 48, 48, 0, &r);
	ilab_io_pgtable_pt_ops(pgt, &ops);
	assert_int_equal(ilab_iommu_map(&ops, 0x12340000ull & ~(SZ_16K - 1), 0, 100 * SZ_32M,
					ILAB_IOMMU_READ, true), 0);
	assert_int_equal(ilab_iommu_map(&ops, 0x7000000000ull, 0x4000, 300 * SZ_16K,
					ILAB_IOMMU_READ, true), 0);
	ilab_io_pgtable_stats(pgt, &s);
	assert_true(s.tables_alloc > 3);
	ilab_free_io_pgtable(pgt);
	ilab_mem_get_stats(g_mem, &m1);
	assert_int_equal(m1.node_pages_free[0], m0.node_pages_free[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux_selftest_configs),
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_restrict_pgsizes),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_bad_map_args),
		cmocka_unit_test(test_permissions),
		cmocka_unit_test(test_pgsize_selection),
		cmocka_unit_test(test_block_chosen_and_paths),
		cmocka_unit_test(test_map_pages_equals_per_page),
		cmocka_unit_test(test_gather_run),
		cmocka_unit_test(test_table_lifetime),
		cmocka_unit_test(test_run_stops_at_table_end),
		cmocka_unit_test(test_split_blocks_on_partial_unmap),
		cmocka_unit_test(test_tables_on_node),
		cmocka_unit_test(test_free_returns_pages),
	};

	return cmocka_run_group_tests(tests, setup_mem, teardown_mem);
}
