/* test_smmuv3_ecmdq_mt.c — ECMDQs under real threads: one producer per ECMDQ writing PROD
 * lock-free, consumed either by one model thread (serial mode) or by one thread per queue (parallel
 * mode); every command arrives, in per-queue order. Not a benchmark. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iommulab/smmuv3.h"

#define NQ 4
#define LOG2 6               /* 64-entry queues */
#define NCMD 3000            /* per producer */
#define MEM_SIZE (1u << 20)
#define QMEM(n) (0x10000ULL * (1 + (n)))
#define MSI_BASE 0x80000ULL

/* spec constants (IHI 0070 §6.3.108-109) */
#define PROD_EN (1u << 31)
#define CONS_ERR (1u << 23)

static uint8_t *mem;
static struct smmu *smmu;
static uint64_t qregs[NQ];
static atomic_uint last_seq[NQ];
static atomic_uint order_errors;
static atomic_bool stop;

static int mrd(void *ctx, uint64_t pa, void *buf, size_t len)
{
    (void)ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa)
        return -1;
    memcpy(buf, mem + pa, len);
    return 0;
}

static int mwr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    (void)ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa)
        return -1;
    memcpy(mem + pa, buf, len);
    return 0;
}

/* Each CMD_SYNC of queue n writes its sequence number to MSI word n: they must come in order. */
static void msi(void *ctx, uint64_t addr, uint32_t data)
{
    (void)ctx;
    unsigned n = (unsigned)((addr - MSI_BASE) / 8);
    if (n >= NQ || data != atomic_load(&last_seq[n]) + 1)
        atomic_fetch_add(&order_errors, 1);
    if (n < NQ)
        atomic_store(&last_seq[n], data);
}

static const struct smmu_host_ops ops = {.mem_read = mrd, .mem_write = mwr, .msi = msi};

static void *producer(void *arg)
{
    unsigned n = (unsigned)(uintptr_t)arg;
    uint32_t prod = 0;
    const uint32_t wrap = (2u << LOG2) - 1;
    for (unsigned i = 1; i <= NCMD; i++) {
        /* wait for a free slot: (prod - cons) < entries, in wrap arithmetic */
        while (((prod - (uint32_t)smmu_mmio_read(smmu, qregs[n] + 0xC, 4)) & wrap) >= (1u << LOG2))
            sched_yield(); /* 2-core CI machines: let the consumers run */
        uint64_t cmd[2];
        if (i % 4 == 0) { /* CMD_SYNC, CS = SIG_IRQ, MSIData = i / 4 */
            cmd[0] = 0x46 | (1ULL << 12) | ((uint64_t)(i / 4) << 32);
            cmd[1] = MSI_BASE + 8ULL * n;
        } else { /* TLBI_NH_ASID, ASID = n */
            cmd[0] = 0x11 | ((uint64_t)n << 48);
            cmd[1] = 0;
        }
        memcpy(mem + QMEM(n) + 16ULL * (prod & ((1u << LOG2) - 1)), cmd, 16);
        prod = (prod + 1) & wrap;
        smmu_mmio_write(smmu, qregs[n] + 0x8, prod | PROD_EN, 4); /* release */
    }
    return NULL;
}

static void *serial_consumer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        smmu_process_commands(smmu, 64);
    return NULL;
}

static void *queue_consumer(void *arg)
{
    unsigned q = (unsigned)(uintptr_t)arg;
    while (!atomic_load(&stop))
        if (smmu_process_queue(smmu, q, 32) < 0)
            atomic_fetch_add(&order_errors, 1);
    return NULL;
}

static void run(bool parallel)
{
    mem = calloc(1, MEM_SIZE);
    assert_non_null(mem);
    struct smmu_config c;
    smmu_config_default(&c);
    c.thread_safe = true;
    c.arch_minor = 3;
    c.ecmdq_count = NQ;
    c.ecmdq_parallel = parallel;
    assert_int_equal(smmu_create(&smmu, &c, &ops, NULL, NULL), 0);
    atomic_store(&stop, false);
    atomic_store(&order_errors, 0);
    for (unsigned n = 0; n < NQ; n++) {
        atomic_store(&last_seq[n], 0);
        qregs[n] = smmu_ecmdq_offset(smmu, n);
        smmu_mmio_write(smmu, qregs[n], QMEM(n) | LOG2, 8);
        smmu_mmio_write(smmu, qregs[n] + 0x8, PROD_EN, 4);
    }
    pthread_t p[NQ], m[NQ + 1];
    unsigned nm = parallel ? NQ : 1;
    for (unsigned i = 0; i < nm; i++)
        pthread_create(&m[i], NULL, parallel ? queue_consumer : serial_consumer,
                       (void *)(uintptr_t)(i + 1));
    for (unsigned n = 0; n < NQ; n++)
        pthread_create(&p[n], NULL, producer, (void *)(uintptr_t)n);
    for (unsigned n = 0; n < NQ; n++)
        pthread_join(p[n], NULL);
    for (unsigned n = 0; n < NQ; n++) /* wait until every queue is drained */
        while ((smmu_mmio_read(smmu, qregs[n] + 0xC, 4) & 0xFFFFF) !=
               (smmu_mmio_read(smmu, qregs[n] + 0x8, 4) & 0xFFFFF))
            sched_yield();
    atomic_store(&stop, true);
    for (unsigned i = 0; i < nm; i++)
        pthread_join(m[i], NULL);
    assert_int_equal(atomic_load(&order_errors), 0);
    for (unsigned n = 0; n < NQ; n++) {
        assert_int_equal(atomic_load(&last_seq[n]), NCMD / 4);
        assert_int_equal(smmu_mmio_read(smmu, qregs[n] + 0xC, 4) & CONS_ERR, 0);
        struct smmu_queue_stats qs;
        assert_int_equal(smmu_get_cmdq_stats(smmu, 1 + n, &qs), 0);
        assert_int_equal(qs.commands, NCMD);
        assert_int_equal(qs.syncs_msi, NCMD / 4);
    }
    smmu_destroy(smmu);
    free(mem);
}

static void test_serial_consumer_many_producers(void **state)
{
    (void)state;
    run(false);
}

static void test_parallel_consumers_many_producers(void **state)
{
    (void)state;
    run(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serial_consumer_many_producers),
        cmocka_unit_test(test_parallel_consumers_many_producers),
    };
    return cmocka_run_group_tests_name("smmuv3_ecmdq_mt", tests, NULL, NULL);
}
