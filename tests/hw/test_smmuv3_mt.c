/* test_smmuv3_mt.c — SMMUv3 model threading contract: a producer thread writing CMDQ_PROD, a model
 * thread calling smmu_process_commands and device threads calling smmu_translate, concurrently. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

static struct smt_env env;
static struct smt_pt pt;
static atomic_bool stop;
static atomic_ulong translated;

static void *model_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        smmu_process_commands(env.smmu, 64);
    return NULL;
}

static void *device_thread(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    struct smmu_txn_req q = {.sid = 1};
    struct smmu_txn_rsp r;
    while (!atomic_load(&stop)) {
        q.iova = 0x100000 + 0x1000 * ((id * 7 + atomic_load(&translated)) % 64);
        smmu_translate(env.smmu, &q, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
        atomic_fetch_add(&translated, 1);
    }
    return NULL;
}

static void test_concurrent_producer_model_devices(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.thread_safe = true;
    assert_int_equal(smt_env_init(&env, &c, 4), 0);
    struct smt_cd cd;
    uint64_t cdpa;
    smt_simple_stream(&env, 1, &pt, &cd, &cdpa);
    for (unsigned i = 0; i < 64; i++)
        smt_pt_map(&pt, 0x100000 + 0x1000ULL * i, 0x41000000, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    pthread_t m, d[2];
    pthread_create(&m, NULL, model_thread, NULL);
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&d[i], NULL, device_thread, (void *)i);
    /* producer (this thread): TLBIs, a CMD_SYNC every 16, waiting for CONS to pass it */
    for (unsigned i = 0; i < 2000; i++) {
        /* wait for space: at most 128 outstanding of 256 */
        while (((env.prod - (uint32_t)smmu_mmio_read(env.smmu, SMT_CMDQ_CONS, 4)) & 511) > 128)
            ;
        smt_cmd(&env, SMT_OP_TLBI_NH_VA | (1ULL << 48), (0x100000 + 0x1000ULL * (i % 64)) | 1);
        if (i % 16 == 15) {
            smt_cmd(&env, SMT_OP_CMD_SYNC | (2ULL << 12), 0); /* SEV: poll CONS like Linux */
            while (((uint32_t)smmu_mmio_read(env.smmu, SMT_CMDQ_CONS, 4) & 511) != env.prod)
                ;
        }
    }
    /* On a loaded machine the producer can finish before a device thread has run at all:
     * let them translate at least once, so the check below tests the model, not the scheduler. */
    while (atomic_load(&translated) == 0)
        sched_yield();
    atomic_store(&stop, true);
    pthread_join(m, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(d[i], NULL);
    smmu_process_commands(env.smmu, 1000);
    struct smmu_queue_stats qs;
    smmu_get_cmdq_stats(env.smmu, 0, &qs);
    assert_int_equal(qs.commands, 2000 + 125);
    assert_int_equal(qs.cerror_ill + qs.cerror_abt, 0);
    assert_true(atomic_load(&translated) > 0);
    smt_env_fini(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_producer_model_devices),
    };
    return cmocka_run_group_tests_name("smmuv3_mt", tests, NULL, NULL);
}
