/* test_smmuv3_cmdqv_mt.c — Tegra241 VCMDQs under real threads: one producer per VCMDQ writing
 * PROD lock-free through its VINTF's logical aperture and polling CONS for its CS_NONE CMD_SYNC
 * (as Linux does on a VCMDQ), one model thread consuming every queue. Every command arrives, in
 * per-queue order, and no queue stops. Not a benchmark. Offsets typed in from the Linux driver. */
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
#define NVI 2
#define LOG2 5               /* 32-entry queues */
#define NSETS 1500           /* per producer: TLBI_NH_VA + CMD_SYNC */
#define MEM_SIZE (1u << 20)
#define QMEM(n) (0x10000ull * (1 + (n)))

#define WIN 0x20000ull
#define R_CONFIG 0x0
#define R_ALLOC(q) (0x200 + 4 * (q))
#define R_VINTF(v) (0x1000 + 0x100 * (v))
#define VP0(v, l) (0x30000 + 0x20000 * (v) + 0x80 * (l))
#define VP1(v, l) (VP0(v, l) + 0x10000)
#define HYP_OWN (1u << 17)
#define OP_TLBI_NH_VA 0x12ull
#define OP_CMD_SYNC 0x46ull

static uint8_t *mem;
static struct smmu *smmu;
static atomic_uint next_seq[NQ];
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

/* Each TLBI carries its producer's sequence number in the address: queue 1 + n must see them
 * in order. */
static void cmd_exec(void *ctx, unsigned queue, uint64_t d0, uint64_t d1)
{
	(void)ctx;
	if ((d0 & 0xFF) != OP_TLBI_NH_VA)
		return;
	if (queue < 1 || queue > NQ || (unsigned)(d1 >> 12) != atomic_load(&next_seq[queue - 1]))
		atomic_fetch_add(&order_errors, 1);
	else
		atomic_fetch_add(&next_seq[queue - 1], 1);
}

static uint64_t vp0(unsigned n) { return WIN + VP0(n / (NQ / NVI), n % (NQ / NVI)); }

static void put(unsigned n, uint32_t *prod, uint64_t d0, uint64_t d1)
{
	uint8_t *slot = mem + QMEM(n) + 16 * (*prod & ((1u << LOG2) - 1));

	memcpy(slot, &d0, 8);
	memcpy(slot + 8, &d1, 8);
	*prod = (*prod + 1) & ((2u << LOG2) - 1);
}

static void *producer(void *arg)
{
	unsigned n = (unsigned)(uintptr_t)arg;
	uint32_t prod = 0;

	for (unsigned i = 0; i < NSETS; i++) {
		put(n, &prod, OP_TLBI_NH_VA | (1ull << 48), (uint64_t)i << 12);
		put(n, &prod, OP_CMD_SYNC, 0); /* CS = SIG_NONE */
		smmu_mmio_write(smmu, vp0(n) + 0x4, prod, 4);
		/* CONS polling: the sync is done when CONS reaches PROD */
		while ((smmu_mmio_read(smmu, vp0(n) + 0x0, 4) & ((2u << LOG2) - 1)) != prod) {
			if (smmu_mmio_read(smmu, vp0(n) + 0x0, 4) >> 24) /* CONS.ERR: stopped */
				return NULL;
			sched_yield();
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		if (!smmu_process_commands(smmu, 64))
			sched_yield();
	return NULL;
}

static void test_producers_per_vcmdq(void **state)
{
	struct smmu_config c;
	struct smmu_host_ops ops = { .mem_read = mrd, .mem_write = mwr, .cmd_exec = cmd_exec };
	pthread_t p[NQ], m;

	(void)state;
	mem = calloc(1, MEM_SIZE);
	assert_non_null(mem);
	smmu_config_default(&c);
	c.thread_safe = true;
	c.cmdqv_vcmdqs = NQ;
	c.cmdqv_vintfs = NVI;
	assert_int_equal(smmu_create(&smmu, &c, &ops, NULL, NULL), 0);
	smmu_mmio_write(smmu, WIN + R_CONFIG, 1, 4);
	for (unsigned n = 0; n < NQ; n++)
		smmu_mmio_write(smmu, WIN + R_ALLOC(n),
				1u | ((n % (NQ / NVI)) << 1) | ((n / (NQ / NVI)) << 15), 4);
	for (unsigned v = 0; v < NVI; v++)
		smmu_mmio_write(smmu, WIN + R_VINTF(v), HYP_OWN | 1, 4);
	for (unsigned n = 0; n < NQ; n++) {
		smmu_mmio_write(smmu, vp0(n) + 0x10000, QMEM(n) | LOG2, 8);
		smmu_mmio_write(smmu, vp0(n) + 0x8, 1, 4);
		assert_int_equal(smmu_mmio_read(smmu, vp0(n) + 0xC, 4), 1);
	}
	atomic_store(&stop, false);
	pthread_create(&m, NULL, consumer, NULL);
	for (unsigned n = 0; n < NQ; n++)
		pthread_create(&p[n], NULL, producer, (void *)(uintptr_t)n);
	for (unsigned n = 0; n < NQ; n++)
		pthread_join(p[n], NULL);
	atomic_store(&stop, true);
	pthread_join(m, NULL);

	assert_int_equal(atomic_load(&order_errors), 0);
	for (unsigned n = 0; n < NQ; n++) {
		struct smmu_queue_stats st;

		assert_int_equal(atomic_load(&next_seq[n]), NSETS);
		assert_int_equal(smmu_get_cmdq_stats(smmu, 1 + n, &st), 0);
		assert_int_equal(st.commands, 2 * NSETS);
		assert_int_equal(st.cerror_ill + st.cerror_abt, 0);
	}
	smmu_destroy(smmu);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_producers_per_vcmdq),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
