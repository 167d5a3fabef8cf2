/* test_vtd_cache.c — VT-d model caches (§6.2): context-cache, IOTLB and paging-structure caches,
 * their geometry and statistics, and what each invalidation (§6.5: context-cache global, domain,
 * device with function mask; IOTLB global, domain, page-selective with AM and IH; the register
 * interface too) drops. Expected counts follow from the mappings each test makes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_vtd_env.h"

#define SID_A 0x0108
#define SID_B 0x0110
#define DID_A 1
#define DID_B 2

struct fx {
    struct vt_env e;
    uint64_t pta, ptb;
};

static int fx_init(void **state, const struct vtd_config *cfg, bool qi)
{
    static struct fx f;
    if (vt_init(&f.e, cfg))
        return -1;
    vt_bringup(&f.e);
    f.pta = vt_page(&f.e);
    f.ptb = vt_page(&f.e);
    vt_context(&f.e, SID_A, DID_A, 2, 0, f.pta, false);
    vt_context(&f.e, SID_B, DID_B, 2, 0, f.ptb, false);
    for (unsigned i = 0; i < 16; i++) {
        vt_map(&f.e, f.pta, 4, 0x100000 + 0x1000ULL * i, 0x2000000 + 0x1000ULL * i, 12, VT_R | VT_W);
        vt_map(&f.e, f.ptb, 4, 0x100000 + 0x1000ULL * i, 0x3000000 + 0x1000ULL * i, 12, VT_R | VT_W);
    }
    if (qi)
        vt_qi_enable(&f.e, 0);
    *state = &f;
    return 0;
}

static int setup(void **state) { return fx_init(state, NULL, true); }
static int setup_regs(void **state) { return fx_init(state, NULL, false); }

static int teardown(void **state)
{
    struct fx *f = *state;
    vt_fini(&f->e);
    return 0;
}

static struct vtd_cache_stats cs(struct fx *f, enum vtd_cache_id id)
{
    struct vtd_cache_stats s;
    assert_int_equal(vtd_get_cache_stats(f->e.v, id, &s), 0);
    return s;
}

static bool tr_ok(struct fx *f, uint16_t sid, uint64_t iova, uint64_t *pa)
{
    struct vtd_txn_rsp r;
    vt_tr(&f->e, sid, iova, false, &r);
    if (pa)
        *pa = r.pa;
    return r.status == VTD_TXN_OK;
}

static void submit(struct fx *f, uint64_t qw0, uint64_t qw1)
{
    vt_qi_push(&f->e, qw0, qw1);
    assert_int_equal(vtd_process_queue(f->e.v, 16), 1);
}

static void test_default_geometry(void **state)
{
    struct fx *f = *state;
    struct vtd_cache_stats s = cs(f, VTD_CACHE_CONTEXT);
    assert_int_equal(s.capacity, 256);
    assert_int_equal(s.sets, 64);
    assert_int_equal(s.ways, 4);
    s = cs(f, VTD_CACHE_IOTLB);
    assert_int_equal(s.capacity, 128);
    assert_int_equal(s.sets, 16);
    s = cs(f, VTD_CACHE_PML5E);
    assert_int_equal(s.sets, 1);                   /* ways 0: fully associative */
    assert_int_equal(s.ways, 4);
    s = cs(f, VTD_CACHE_PDE);
    assert_int_equal(s.capacity, 128);
    assert_int_equal(s.sets, 32);
    struct vtd_cache_stats x;
    assert_int_equal(vtd_get_cache_stats(f->e.v, VTD_CACHE_COUNT, &x), -22);
}

static void test_sets_round_down_to_power_of_two(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.iotlb = (struct vtd_cache_geom){100, 4, VTD_POLICY_LRU}; /* 25 sets -> 16 */
    struct vt_env e;
    assert_int_equal(vt_init(&e, &c), 0);
    struct vtd_cache_stats s;
    vtd_get_cache_stats(e.v, VTD_CACHE_IOTLB, &s);
    assert_int_equal(s.sets, 16);
    assert_int_equal(s.capacity, 64);
    vt_fini(&e);
}

static void test_iotlb_and_context_hit_after_miss(void **state)
{
    struct fx *f = *state;
    uint64_t pa;
    assert_true(tr_ok(f, SID_A, 0x100123, &pa));
    assert_true(tr_ok(f, SID_A, 0x100456, &pa));
    assert_int_equal(pa, 0x2000456);
    struct vtd_cache_stats t = cs(f, VTD_CACHE_IOTLB), c = cs(f, VTD_CACHE_CONTEXT);
    assert_int_equal(t.lookups, 2);
    assert_int_equal(t.misses, 1);
    assert_int_equal(t.hits, 1);
    assert_int_equal(t.fills, 1);
    assert_int_equal(c.lookups, 2);
    assert_int_equal(c.hits, 1);
    assert_int_equal(c.fills, 1);
    /* the walk filled one entry per table level above the leaf: PML4E, PDPE, PDE */
    assert_int_equal(cs(f, VTD_CACHE_PML4E).fills, 1);
    assert_int_equal(cs(f, VTD_CACHE_PDPE).fills, 1);
    assert_int_equal(cs(f, VTD_CACHE_PDE).fills, 1);
    assert_int_equal(cs(f, VTD_CACHE_PML5E).lookups, 0); /* 4-level table */
    struct vtd_stats st;
    vtd_get_stats(f->e.v, &st);
    assert_int_equal(st.translations, 2);
    assert_int_equal(st.iotlb_hit_translations, 1);
}

static void test_pde_hit_skips_upper_tables(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    f->e.flo = f->pta;                             /* the PML4 table now errors */
    f->e.fhi = f->pta + 0x1000;
    uint64_t pa;
    assert_true(tr_ok(f, SID_A, 0x101000, &pa));   /* IOTLB miss, PDE-cache hit */
    assert_int_equal(pa, 0x2001000);
    assert_int_equal(cs(f, VTD_CACHE_PDE).hits, 1);
    assert_int_equal(cs(f, VTD_CACHE_PDPE).lookups, 1); /* not probed on the PDE hit */
}

static void test_faults_are_not_cached(void **state)
{
    struct fx *f = *state;
    assert_false(tr_ok(f, SID_A, 0x900000, NULL)); /* no mapping */
    assert_false(tr_ok(f, 0x0120, 0x100000, NULL)); /* no context */
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).fills, 0);
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).fills, 1); /* SID_A's valid context only */
}

/* §3.15: a translation blocked because it lands in the interrupt range (Eh) is a fault like
 * any other: the leaf is not cached, so each request walks and faults again. */
static void test_interrupt_range_translation_not_cached(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pta, 4, 0x100000, 0xFEE00000ULL, 12, VT_R | VT_W);
    assert_false(tr_ok(f, SID_A, 0x100000, NULL));
    assert_false(tr_ok(f, SID_A, 0x100000, NULL));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).fills, 0);
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).hits, 0);
}

static void test_iotlb_entry_used_until_invalidated(void **state)
{
    struct fx *f = *state;
    uint64_t pte = vt_map(&f->e, f->pta, 4, 0x100000, 0x2000000, 12, VT_R | VT_W);
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    vt_put64(&f->e, pte, 0);                       /* unmapped in memory only */
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));  /* stale, as the spec allows */
    submit(f, VT_DESC_IOTLB(3, DID_A), VT_DESC_IOTLB_HI(0x100000, 0, 0));
    assert_false(tr_ok(f, SID_A, 0x100000, NULL));
}

static void test_context_global_invalidation(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    assert_true(tr_ok(f, SID_B, 0x100000, NULL));
    uint64_t ce = (vt_get64(&f->e, f->e.root + 16) & ~0xFFFULL) + 16 * (SID_A & 0xFF);
    vt_put64(&f->e, ce, 0);                        /* context not present in memory */
    submit(f, VT_DESC_IOTLB(1, 0), 0);             /* leave only the context cache stale */
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    submit(f, VT_DESC_CC(1, 0, 0, 0), 0);
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).invalidations, 2);
    struct vtd_txn_rsp r;
    vt_tr(&f->e, SID_A, 0x100000, false, &r);
    assert_int_equal(r.fault_reason, VT_FR_CTX_P);
}

static void test_context_domain_selective(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    assert_true(tr_ok(f, SID_B, 0x100000, NULL));
    submit(f, VT_DESC_CC(2, DID_A, 0, 0), 0);
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).invalidations, 1);
    assert_true(tr_ok(f, SID_B, 0x100000, NULL));
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    struct vtd_cache_stats c = cs(f, VTD_CACHE_CONTEXT);
    assert_int_equal(c.hits, 1);                   /* B */
    assert_int_equal(c.misses, 3);                 /* A, B, then A again */
}

static void test_context_device_selective_function_mask(void **state)
{
    struct fx *f = *state;
    for (unsigned fn = 0; fn < 8; fn++) {          /* bus 1, device 1, functions 0..7 */
        vt_context(&f->e, (uint16_t)(SID_A + fn), DID_A, 2, 0, f->pta, false);
        assert_true(tr_ok(f, (uint16_t)(SID_A + fn), 0x100000, NULL));
    }
    submit(f, VT_DESC_CC(3, DID_A, SID_A + 5, 0), 0); /* FM 00: function 5 only */
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).invalidations, 1);
    submit(f, VT_DESC_CC(3, DID_A, SID_A + 4, 1), 0); /* FM 01: bit 2 masked: 0 and 4 */
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).invalidations, 3);
    submit(f, VT_DESC_CC(3, DID_A, SID_A, 3), 0);     /* FM 11: every function left */
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).invalidations, 8);
}

static void test_iotlb_global_drops_everything(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    assert_true(tr_ok(f, SID_B, 0x100000, NULL));
    submit(f, VT_DESC_IOTLB(1, 0), 0);
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).invalidations, 2);
    assert_int_equal(cs(f, VTD_CACHE_PDE).invalidations, 2); /* with the PSCs */
    assert_int_equal(cs(f, VTD_CACHE_PML4E).invalidations, 2);
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).hits, 0);
}

static void test_iotlb_domain_selective(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    assert_true(tr_ok(f, SID_B, 0x100000, NULL));
    submit(f, VT_DESC_IOTLB(2, DID_B), 0);
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).invalidations, 1);
    assert_int_equal(cs(f, VTD_CACHE_PDE).invalidations, 1);
    uint64_t pa;
    assert_true(tr_ok(f, SID_A, 0x100000, &pa));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).hits, 1);
    assert_true(tr_ok(f, SID_B, 0x100000, &pa));
    assert_int_equal(pa, 0x3000000);
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).hits, 1);
}

static void test_iotlb_page_selective_address_mask(void **state)
{
    struct fx *f = *state;
    for (unsigned i = 0; i < 16; i++) {
        assert_true(tr_ok(f, SID_A, 0x100000 + 0x1000ULL * i, NULL));
        assert_true(tr_ok(f, SID_B, 0x100000 + 0x1000ULL * i, NULL));
    }
    /* AM = 2: four pages from 0x104000 (ADDR's low 2 page bits ignored) in domain A */
    submit(f, VT_DESC_IOTLB(3, DID_A), VT_DESC_IOTLB_HI(0x106000, 2, 1));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).invalidations, 4);
    uint64_t hits0 = cs(f, VTD_CACHE_IOTLB).hits;
    for (unsigned i = 0; i < 16; i++)
        assert_true(tr_ok(f, SID_A, 0x100000 + 0x1000ULL * i, NULL));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).hits - hits0, 12);
}

static void test_iotlb_psi_hint_keeps_paging_structure_caches(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    submit(f, VT_DESC_IOTLB(3, DID_A), VT_DESC_IOTLB_HI(0x100000, 0, 1)); /* IH = 1 */
    assert_int_equal(cs(f, VTD_CACHE_PDE).invalidations, 0);
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    assert_int_equal(cs(f, VTD_CACHE_PDE).hits, 1);
    submit(f, VT_DESC_IOTLB(3, DID_A), VT_DESC_IOTLB_HI(0x100000, 0, 0)); /* IH = 0 */
    assert_int_equal(cs(f, VTD_CACHE_PDE).invalidations, 1);
    assert_int_equal(cs(f, VTD_CACHE_PDPE).invalidations, 1);
    assert_int_equal(cs(f, VTD_CACHE_PML4E).invalidations, 1);
}

static void test_iotlb_psi_inside_large_page(void **state)
{
    struct fx *f = *state;
    vt_map(&f->e, f->pta, 4, 0x40000000ULL, 0x80000000ULL, 21, VT_R | VT_W);
    assert_true(tr_ok(f, SID_A, 0x40000000ULL + 0x5000, NULL));
    submit(f, VT_DESC_IOTLB(3, DID_A), VT_DESC_IOTLB_HI(0x40123000ULL, 0, 1));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).invalidations, 1); /* the 2M entry overlaps */
}

static void test_register_invalidation_effects(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    assert_true(tr_ok(f, SID_A, 0x101000, NULL));
    vt_wr64(&f->e, 0x200, 0x101000);                     /* IVA: one page, IH 0 */
    vt_wr64(&f->e, 0x208, (1ULL << 63) | (3ULL << 60) | ((uint64_t)DID_A << 32));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).invalidations, 1);
    assert_int_equal(cs(f, VTD_CACHE_PDE).invalidations, 1);
    vt_wr64(&f->e, VT_CCMD, (1ULL << 63) | (3ULL << 61) | ((uint64_t)SID_A << 16) | DID_A);
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).invalidations, 1);
    vt_wr64(&f->e, 0x208, (1ULL << 63) | (2ULL << 60) | ((uint64_t)DID_A << 32));
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).invalidations, 2);
}

static void test_lru_and_fifo_victims(void **state)
{
    (void)state;
    for (unsigned policy = 0; policy < 2; policy++) {
        struct vtd_config c;
        vtd_config_default(&c);
        c.iotlb = (struct vtd_cache_geom){2, 2, (enum vtd_cache_policy)policy};
        struct fx *f;
        assert_int_equal(fx_init((void **)&f, &c, true), 0);
        assert_true(tr_ok(f, SID_A, 0x100000, NULL));  /* A */
        assert_true(tr_ok(f, SID_A, 0x101000, NULL));  /* B */
        assert_true(tr_ok(f, SID_A, 0x100000, NULL));  /* hit A */
        assert_true(tr_ok(f, SID_A, 0x102000, NULL));  /* C evicts B (LRU) or A (FIFO) */
        assert_int_equal(cs(f, VTD_CACHE_IOTLB).evictions, 1);
        uint64_t h = cs(f, VTD_CACHE_IOTLB).hits;
        assert_true(tr_ok(f, SID_A, 0x100000, NULL));
        assert_int_equal(cs(f, VTD_CACHE_IOTLB).hits - h, policy == 0 ? 1 : 0);
        teardown((void **)&f);
    }
}

static void test_small_cache_evicts(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.iotlb = (struct vtd_cache_geom){4, 2, VTD_POLICY_RANDOM};
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, true), 0);
    for (unsigned i = 0; i < 10; i++)
        assert_true(tr_ok(f, SID_A, 0x100000 + 0x1000ULL * i, NULL));
    struct vtd_cache_stats s = cs(f, VTD_CACHE_IOTLB);
    assert_int_equal(s.capacity, 4);
    assert_int_equal(s.fills, 10);
    assert_int_equal(s.evictions, 6);
    teardown((void **)&f);
}

static void test_no_caches(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    c.context_cache.entries = c.iotlb.entries = 0;
    for (unsigned i = 0; i < 4; i++)
        c.psc[i].entries = 0;
    struct fx *f;
    assert_int_equal(fx_init((void **)&f, &c, true), 0);
    uint64_t pa;
    assert_true(tr_ok(f, SID_A, 0x10F008, &pa));
    assert_int_equal(pa, 0x200F008);
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).lookups, 0);
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).capacity, 0);
    teardown((void **)&f);
}

static void test_clear_stats_keeps_geometry(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    vtd_clear_stats(f->e.v);
    struct vtd_cache_stats s = cs(f, VTD_CACHE_IOTLB);
    assert_int_equal(s.lookups, 0);
    assert_int_equal(s.fills, 0);
    assert_int_equal(s.capacity, 128);
    struct vtd_stats st;
    vtd_get_stats(f->e.v, &st);
    assert_int_equal(st.translations, 0);
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));      /* entries kept: a hit */
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).hits, 1);
}

static void test_reset_invalidates_caches(void **state)
{
    struct fx *f = *state;
    assert_true(tr_ok(f, SID_A, 0x100000, NULL));
    vtd_reset(f->e.v);
    assert_int_equal(cs(f, VTD_CACHE_IOTLB).invalidations, 1);
    assert_int_equal(cs(f, VTD_CACHE_CONTEXT).invalidations, 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_default_geometry),
        cmocka_unit_test(test_sets_round_down_to_power_of_two),
        T(test_iotlb_and_context_hit_after_miss),
        T(test_pde_hit_skips_upper_tables),
        T(test_faults_are_not_cached),
        T(test_interrupt_range_translation_not_cached),
        T(test_iotlb_entry_used_until_invalidated),
        T(test_context_global_invalidation),
        T(test_context_domain_selective),
        T(test_context_device_selective_function_mask),
        T(test_iotlb_global_drops_everything),
        T(test_iotlb_domain_selective),
        T(test_iotlb_page_selective_address_mask),
        T(test_iotlb_psi_hint_keeps_paging_structure_caches),
        T(test_iotlb_psi_inside_large_page),
        cmocka_unit_test_setup_teardown(test_register_invalidation_effects, setup_regs, teardown),
        cmocka_unit_test(test_lru_and_fifo_victims),
        cmocka_unit_test(test_small_cache_evicts),
        cmocka_unit_test(test_no_caches),
        T(test_clear_stats_keeps_geometry),
        T(test_reset_invalidates_caches),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
