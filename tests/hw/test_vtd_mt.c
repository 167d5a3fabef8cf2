/* test_vtd_mt.c — VT-d model with cfg.thread_safe under real threads: two device threads
 * translate while a driver thread submits invalidations and waits on their status words, and
 * processes the queue itself (as the board's consumer would). Checks results and counters, and
 * gives TSan (CI's threads label) the model's locking to look at. Not a performance test. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_vtd_env.h"

#define SID 0x0108
#define PAGES 64
#define ROUNDS 2000
#define STATUS_PA 0x9000ULL

static struct vt_env env;
static _Atomic unsigned bad_translations;

static void *device(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        uint64_t page = (seed >> 8) % PAGES;
        struct vtd_txn_req q = {.sid = SID, .iova = 0x400000 + 0x1000 * page + 8, .write = i & 1};
        struct vtd_txn_rsp r;
        vtd_translate(env.v, &q, &r);
        if (r.status != VTD_TXN_OK || r.pa != 0x800000 + 0x1000 * page + 8)
            bad_translations++;
    }
    return NULL;
}

static void test_translate_while_invalidating(void **state)
{
    (void)state;
    struct vtd_config c;
    vtd_config_default(&c);
    assert_true(c.thread_safe);
    assert_int_equal(vt_init(&env, &c), 0);
    vt_bringup(&env);
    uint64_t pt = vt_page(&env);
    vt_context(&env, SID, 1, 2, 0, pt, false);
    for (unsigned i = 0; i < PAGES; i++)
        vt_map(&env, pt, 4, 0x400000 + 0x1000ULL * i, 0x800000 + 0x1000ULL * i, 12, VT_R | VT_W);
    vt_qi_enable(&env, 0);
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, device, (void *)(i + 1)), 0);
    unsigned done = 0;
    for (unsigned i = 0; i < ROUNDS / 4; i++) {
        vt_qi_push(&env, VT_DESC_IOTLB(i & 1 ? 2 : 3, 1), VT_DESC_IOTLB_HI(0x400000, 6, 0));
        vt_qi_push(&env, VT_DESC_WAIT(1, 0, 1, i + 1), STATUS_PA);
        done += vtd_process_queue(env.v, 8);
        assert_int_equal((uint32_t)vt_get64(&env, STATUS_PA), i + 1);
    }
    for (unsigned i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(bad_translations, 0);
    assert_int_equal(done, ROUNDS / 2);
    struct vtd_stats st;
    vtd_get_stats(env.v, &st);
    assert_int_equal(st.translations, 2 * ROUNDS);
    assert_int_equal(st.descriptors, ROUNDS / 2);
    assert_int_equal(st.faults, 0);
    vt_fini(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_translate_while_invalidating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
