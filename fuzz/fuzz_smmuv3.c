/* fuzz_smmuv3.c — libFuzzer target for the SMMUv3 model: the input is a program of register
 * writes/reads, memory writes, fault windows, translations and command processing (SMMU_CMDQ and,
 * with knob 0x08, four ECMDQs, consumed in parallel with knob 0x10). Not a test. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/smmuv3.h"

#define MEM_BASE 0x0ULL
#define MEM_SIZE (1u << 20)

struct fmem {
    uint8_t buf[MEM_SIZE];
    uint64_t flo, fhi; /* reads/writes in [flo, fhi) abort */
};

static int rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
    struct fmem *m = ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa || (pa < m->fhi && pa + len > m->flo))
        return -1;
    memcpy(buf, m->buf + pa, len);
    return 0;
}

static int wr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    struct fmem *m = ctx;
    if (pa >= MEM_SIZE || len > MEM_SIZE - pa || (pa < m->fhi && pa + len > m->flo))
        return -1;
    memcpy(m->buf + pa, buf, len);
    return 0;
}

static const struct smmu_host_ops ops = {.mem_read = rd, .mem_write = wr};

struct in {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v |= (uint64_t)in->p[0] << (8 * i);
    return v;
}

/* Register offsets worth hitting often (the rest of the 128K space is reached by op 1). */
static const uint32_t hot[] = {0x20, 0x28, 0x2C, 0x44, 0x50, 0x64, 0x68, 0x70, 0x80, 0x84,
                               0x88, 0x90, 0x94, 0x98, 0x9C, 0xA0, 0xA4, 0xB0, 0xB8, 0x100A8,
                               0x100AC};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fmem *m;
    if (!m)
        m = calloc(1, sizeof(*m));
    memset(m->buf, 0, sizeof(m->buf));
    m->flo = m->fhi = 0;
    struct in in = {data, size};
    struct smmu_config cfg;
    smmu_config_default(&cfg);
    cfg.thread_safe = false;
    uint8_t knobs = (uint8_t)take(&in, 1);
    if (knobs & 1) { /* tiny caches with other policies exercise eviction */
        cfg.tlb = (struct smmu_cache_geom){4, 2, SMMU_POLICY_RANDOM};
        cfg.ste_cache = (struct smmu_cache_geom){2, 1, SMMU_POLICY_FIFO};
        cfg.cd_cache = (struct smmu_cache_geom){2, 0, SMMU_POLICY_LRU};
        cfg.walk_cache[2] = (struct smmu_cache_geom){3, 2, SMMU_POLICY_FIFO};
    }
    if ((knobs & 2) && !(knobs & 8)) { /* an SMMUv3.1: no RIL (mandatory from v3.2) */
        cfg.ril = false;
        cfg.arch_minor = 1;
    }
    if (knobs & 4)
        cfg.oas = 40;
    if (knobs & 8) { /* SMMUv3.3 ECMDQs */
        cfg.arch_minor = 3;
        cfg.ecmdq_count = 4;
        cfg.ecmdq_parallel = knobs & 0x10;
        cfg.ecmdq_log2size_max = (knobs & 0x20) ? 3 : 0;
    }
    cfg.cmdqs = 8;
    cfg.eventqs = 5;
    struct smmu *s;
    if (smmu_create(&s, &cfg, &ops, m, NULL))
        return 0;
    /* a sane starting point so inputs reach translation and commands quickly */
    smmu_mmio_write(s, 0x80, 0x10000, 8);
    smmu_mmio_write(s, 0x88, 8, 4);
    smmu_mmio_write(s, 0x90, 0x20000 | 6, 8);
    smmu_mmio_write(s, 0xA0, 0x30000 | 4, 8);
    smmu_mmio_write(s, 0x2C, 2, 4);
    smmu_mmio_write(s, 0x20, 0xD, 4);
    /* ECMDQ n: queue memory at 0x40000 + 4K * n, 16 entries, enabled (PROD.EN, bit 31) */
    uint32_t ehot[4 * 4];
    const unsigned nehot = cfg.ecmdq_count ? 16 : 0;
    for (unsigned n = 0; n < cfg.ecmdq_count; n++) {
        uint64_t r = smmu_ecmdq_offset(s, n);
        smmu_mmio_write(s, r, 0x40000 + 0x1000ULL * n + 4, 8);
        smmu_mmio_write(s, r + 8, 1u << 31, 4);
        ehot[4 * n] = (uint32_t)r, ehot[4 * n + 1] = (uint32_t)r + 4;
        ehot[4 * n + 2] = (uint32_t)r + 8, ehot[4 * n + 3] = (uint32_t)r + 0xC;
    }
    const uint64_t window = smmu_mmio_size(s);

    unsigned steps = 0;
    while (in.n && steps++ < 256) {
        unsigned op = (unsigned)take(&in, 1) % 8;
        switch (op) {
        case 0: { /* hot register write (ECMDQ registers too when present) */
            const unsigned nhot = sizeof(hot) / sizeof(hot[0]);
            unsigned h = (unsigned)take(&in, 1) % (nhot + nehot);
            uint32_t off = h < nhot ? hot[h] : ehot[h - nhot];
            smmu_mmio_write(s, off, take(&in, 8), (take(&in, 1) & 1) ? 8 : 4);
            break;
        }
        case 1: { /* any register access */
            uint64_t off = take(&in, 3) % window;
            if (take(&in, 1) & 1)
                smmu_mmio_write(s, off, take(&in, 8), (unsigned)take(&in, 1) % 9);
            else
                (void)smmu_mmio_read(s, off, (unsigned)take(&in, 1) % 9);
            break;
        }
        case 2: { /* memory bytes (tables, queue contents) */
            uint64_t pa = take(&in, 3) % MEM_SIZE;
            unsigned len = (unsigned)take(&in, 1) % 64;
            for (unsigned i = 0; i < len && pa + i < MEM_SIZE; i++)
                m->buf[pa + i] = (uint8_t)take(&in, 1);
            break;
        }
        case 3: { /* a 64-bit word, aligned: descriptors and commands */
            uint64_t pa = (take(&in, 3) % MEM_SIZE) & ~7ULL;
            uint64_t v = take(&in, 8);
            memcpy(m->buf + pa, &v, 8);
            break;
        }
        case 4: { /* translate */
            struct smmu_txn_req q = { 0 }; /* every field set: the model may read them all */
            q.sid = (uint32_t)take(&in, 2);
            q.ssid = (uint32_t)take(&in, 3);
            uint8_t fl = (uint8_t)take(&in, 1);
            q.ssv = fl & 1;
            q.write = fl & 2;
            q.exec = fl & 4;
            q.priv = fl & 8;
            q.ats = fl & 16; /* an ATS Translation Request */
            q.iova = take(&in, 8);
            struct smmu_txn_rsp r;
            smmu_translate(s, &q, &r);
            break;
        }
        case 5:
            if (cfg.ecmdq_parallel) { /* one queue's consumer, or everything */
                unsigned q = (unsigned)take(&in, 1) % 6;
                unsigned max = (unsigned)take(&in, 1);
                if (q < 5)
                    (void)smmu_process_queue(s, q, max);
                else
                    smmu_process_commands(s, max);
            } else {
                smmu_process_commands(s, (unsigned)take(&in, 1));
            }
            break;
        case 6: { /* fault window */
            m->flo = take(&in, 3) % MEM_SIZE;
            m->fhi = m->flo + take(&in, 2);
            break;
        }
        case 7:
            if (take(&in, 1) == 0x5A)
                smmu_reset(s);
            break;
        }
    }
    struct smmu_stats st;
    smmu_get_stats(s, &st);
    smmu_destroy(s);
    return 0;
}
