/* bench_smmuv3.c — benchmark of the SMMUv3 model: ns per translate on a TLB hit, on a full 4-level
 * walk (TLB miss), with walk caches, and ns per command consumed (SMMU_CMDQ, and ECMDQs through
 * the serial round-robin consumer or per-queue consumers). Prints figures; not a test. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iommulab/smmuv3.h"

#define MEM_SIZE (64u << 20)
static uint8_t *mem;
static uint64_t next_free = 0x100000;

static int rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
    (void)ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa)
        return -1;
    memcpy(buf, mem + pa, len);
    return 0;
}
static int wr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    (void)ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa)
        return -1;
    memcpy(mem + pa, buf, len);
    return 0;
}
static const struct smmu_host_ops ops = {.mem_read = rd, .mem_write = wr};

static uint64_t alloc(uint64_t sz)
{
    uint64_t pa = (next_free + sz - 1) & ~(sz - 1);
    next_free = pa + sz;
    memset(mem + pa, 0, sz);
    return pa;
}
static void w64(uint64_t pa, uint64_t v) { memcpy(mem + pa, &v, 8); }
static uint64_t r64(uint64_t pa)
{
    uint64_t v;
    memcpy(&v, mem + pa, 8);
    return v;
}

/* 4K granule, 48-bit VA: map one page (descriptor encodings from VMSAv8-64). */
static void map4k(uint64_t root, uint64_t va, uint64_t pa)
{
    uint64_t t = root;
    for (int l = 0; l < 3; l++) {
        uint64_t da = t + ((va >> (39 - 9 * l)) & 511) * 8;
        if (!(r64(da) & 1))
            w64(da, alloc(4096) | 3);
        t = r64(da) & 0x0000FFFFFFFFF000ULL;
    }
    w64(t + ((va >> 12) & 511) * 8, pa | (1ULL << 10) | (1ULL << 11) | (3ULL << 8) | (1 << 6) | 3);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct rig {
    struct smmu *s;
    uint64_t cmdq;
    uint32_t prod;
};

static void setup(struct rig *g, const struct smmu_config *cfg, uint64_t root)
{
    if (smmu_create(&g->s, cfg, &ops, NULL, NULL)) {
        fprintf(stderr, "smmu_create failed\n");
        exit(1);
    }
    uint64_t strtab = alloc(64 * 16), cd = alloc(64);
    g->cmdq = alloc(16 << 12);
    uint64_t evtq = alloc(32 << 6);
    /* CD: T0SZ 16, TG0 4K, EPD1, V, IPS 48, AA64, R, A, ASID 1; TTB0; MAIR */
    w64(cd, 16 | (1ULL << 30) | (1ULL << 31) | (5ULL << 32) | (1ULL << 41) | (1ULL << 45) |
                (1ULL << 46) | (1ULL << 48));
    w64(cd + 8, root);
    w64(cd + 24, 0x0004FF44);
    /* STE 1: V, Config = S1 translate, S1ContextPtr */
    w64(strtab + 64, 1 | (5 << 1) | cd);
    smmu_mmio_write(g->s, 0x80, strtab, 8);
    smmu_mmio_write(g->s, 0x88, 4, 4);
    smmu_mmio_write(g->s, 0x90, g->cmdq | 12, 8);
    smmu_mmio_write(g->s, 0xA0, evtq | 6, 8);
    smmu_mmio_write(g->s, 0x20, 0xD, 4);
    g->prod = 0;
}

static double bench_translate(struct rig *g, unsigned pages, unsigned iters)
{
    struct smmu_txn_req q = {.sid = 1};
    struct smmu_txn_rsp r;
    uint64_t sink = 0;
    for (unsigned i = 0; i < pages; i++) { /* warm */
        q.iova = 0x10000000ULL + 4096ULL * i;
        smmu_translate(g->s, &q, &r);
    }
    double t0 = now_ns();
    for (unsigned it = 0; it < iters; it++) {
        q.iova = 0x10000000ULL + 4096ULL * (it % pages) + (it & 0xFF8);
        smmu_translate(g->s, &q, &r);
        sink += r.pa;
    }
    double t1 = now_ns();
    if (sink == 1)
        puts("");
    return (t1 - t0) / iters;
}

static double bench_commands(struct rig *g, unsigned rounds)
{
    const uint32_t n = 4000, size = 1u << 12;
    double total = 0;
    uint64_t done = 0;
    for (unsigned rr = 0; rr < rounds; rr++) {
        for (uint32_t i = 0; i < n; i++) {
            uint64_t slot = g->cmdq + 16ULL * (g->prod & (size - 1));
            if (i == n - 1) {
                w64(slot, 0x46); /* CMD_SYNC, CS = NONE */
                w64(slot + 8, 0);
            } else {
                w64(slot, 0x12 | (1ULL << 48)); /* TLBI_NH_VA ASID 1, leaf */
                w64(slot + 8, (0x10000000ULL + 4096ULL * (i % 512)) | 1);
            }
            g->prod = (g->prod + 1) & (2 * size - 1);
        }
        smmu_mmio_write(g->s, 0x98, g->prod, 4);
        double t0 = now_ns();
        done += smmu_process_commands(g->s, n);
        total += now_ns() - t0;
    }
    return total / (double)done;
}

/* ns per command with `busy` of `nq` ECMDQs loaded with TLBI_NH_VA: the serial consumer
 * (smmu_process_commands, round-robin) or the parallel mode's per-queue smmu_process_queue. */
static double bench_ecmdq(const struct smmu_config *base, unsigned nq, unsigned busy, bool parallel,
                          unsigned rounds)
{
    struct smmu_config c = *base;
    c.arch_minor = 3;
    c.ecmdq_count = nq;
    c.ecmdq_parallel = parallel;
    struct smmu *s;
    if (smmu_create(&s, &c, &ops, NULL, NULL))
        return -1;
    enum { LOG2 = 10, PER = 1000 };
    const uint32_t size = 1u << LOG2;
    uint64_t qmem[8], regs[8];
    uint32_t prod[8] = {0};
    for (unsigned q = 0; q < busy && q < 8; q++) {
        qmem[q] = alloc(16ULL * size);
        regs[q] = smmu_ecmdq_offset(s, q * (nq / busy)); /* spread over the queue space */
        smmu_mmio_write(s, regs[q], qmem[q] | LOG2, 8);
        smmu_mmio_write(s, regs[q] + 8, 1u << 31, 4);
    }
    double total = 0;
    uint64_t done = 0;
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned q = 0; q < busy; q++) {
            for (uint32_t i = 0; i < PER; i++) {
                uint64_t slot = qmem[q] + 16ULL * (prod[q] & (size - 1));
                w64(slot, 0x12 | (1ULL << 48));
                w64(slot + 8, (0x10000000ULL + 4096ULL * (i % 512)) | 1);
                prod[q] = (prod[q] + 1) & (2 * size - 1);
            }
            smmu_mmio_write(s, regs[q] + 8, prod[q] | (1u << 31), 4);
        }
        double t0 = now_ns();
        if (parallel)
            for (unsigned q = 0; q < busy; q++)
                done += (uint64_t)smmu_process_queue(s, 1 + q * (nq / busy), PER);
        else
            done += smmu_process_commands(s, PER * busy);
        total += now_ns() - t0;
    }
    smmu_destroy(s);
    return done ? total / (double)done : -1;
}

int main(void)
{
    mem = calloc(1, MEM_SIZE);
    uint64_t root = alloc(4096);
    const unsigned pages = 16384; /* 64 MiB of IOVA spread over 32 leaf tables */
    for (unsigned i = 0; i < pages; i++)
        map4k(root, 0x10000000ULL + 4096ULL * i, 0x200000 + 4096ULL * (i % 1024));

    struct smmu_config cfg;
    smmu_config_default(&cfg);
    struct rig g;

    setup(&g, &cfg, root);
    double hit = bench_translate(&g, 256, 20000000);
    smmu_destroy(g.s);

    cfg.thread_safe = false;
    setup(&g, &cfg, root);
    double hit_nolock = bench_translate(&g, 256, 20000000);
    smmu_destroy(g.s);
    cfg.thread_safe = true;

    struct smmu_config miss = cfg;
    miss.tlb.entries = 0;
    miss.walk_cache[0].entries = miss.walk_cache[1].entries = miss.walk_cache[2].entries = 0;
    setup(&g, &miss, root);
    double full_walk = bench_translate(&g, pages, 5000000);
    smmu_destroy(g.s);

    struct smmu_config wc = cfg;
    wc.tlb.entries = 0;
    setup(&g, &wc, root);
    double walk_cached = bench_translate(&g, pages, 5000000);
    smmu_destroy(g.s);

    setup(&g, &cfg, root);
    double miss_default = bench_translate(&g, pages, 5000000); /* 16K pages > 2048-entry TLB */
    double cmd = bench_commands(&g, 200);
    struct smmu_cache_stats tlb;
    smmu_get_cache_stats(g.s, SMMU_CACHE_TLB, &tlb);
    smmu_destroy(g.s);

    printf("smmuv3 model benchmark (host memory callback = memcpy from a host array)\n");
    printf("translate, TLB hit (256 pages, thread_safe)       : %7.1f ns\n", hit);
    printf("translate, TLB hit (256 pages, no lock)           : %7.1f ns\n", hit_nolock);
    printf("translate, TLB miss, full 4-level walk (no caches): %7.1f ns\n", full_walk);
    printf("translate, TLB miss, walk-cache hit (leaf read)   : %7.1f ns\n", walk_cached);
    printf("translate, default caches, 16384-page sweep       : %7.1f ns\n", miss_default);
    printf("command consumed (TLBI_NH_VA leaf, 2048-entry TLB): %7.1f ns\n", cmd);
    printf("  (TLB after the sweep: %u sets x %u ways)\n", tlb.sets, tlb.ways);
    printf("command consumed, 4 of 4 ECMDQs, serial RR, empty TLB: %7.1f ns\n",
           bench_ecmdq(&cfg, 4, 4, false, 200));
    printf("command consumed, 1 of 64 ECMDQs, serial RR, empty TLB: %7.1f ns\n",
           bench_ecmdq(&cfg, 64, 1, false, 200));
    printf("command consumed, 4 of 4 ECMDQs, per-queue, empty TLB: %7.1f ns\n",
           bench_ecmdq(&cfg, 4, 4, true, 200));
    free(mem);
    return 0;
}
