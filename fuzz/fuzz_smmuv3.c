/* fuzz_smmuv3.c — libFuzzer target for the SMMUv3 model: the input is a program of register
 * writes/reads, memory writes, fault windows, translations and command processing (SMMU_CMDQ and,
 * with knob 0x08, four ECMDQs, consumed in parallel with knob 0x10). After every step it checks
 * the invariants of smmu_invariants.h (stale translations, queue pointers, fault records,
 * implemented register bits) and aborts on a violation. Not a test. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/smmuv3.h"
#include "smmu_invariants.h"

static void append_cmd(struct inv *v, unsigned kind, uint64_t arg, uint64_t raw0, uint64_t raw1)
{
    uint32_t idr1 = (uint32_t)smmu_mmio_read(v->s, SMMU_REG_IDR1, 4);
    append_cmd_q(v, SMMU_REG_CMDQ_BASE, SMMU_REG_CMDQ_PROD, (idr1 >> 21) & 0x1F, kind, arg, raw0,
                 raw1);
}

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
    static struct inv v;
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
    if (knobs & 0x40) /* no MSI: the IRQ_CFG registers are RES0 */
        cfg.msi = false, cfg.ecmdq_count = 0, cfg.ecmdq_parallel = false;
    cfg.cmdqs = 8;
    cfg.eventqs = 5;
    if (inv_create(&v, m, &cfg))
        return 0;
    struct smmu *s = v.s;
    working_streams(&v);
    /* a sane starting point so inputs reach translation and commands quickly */
    inv_mmio_write(&v, 0x80, STRTAB, 8);
    inv_mmio_write(&v, 0x88, 8, 4);
    inv_mmio_write(&v, 0x90, CMDQ | 6, 8);
    inv_mmio_write(&v, 0xA0, EVTQ | 4, 8);
    inv_mmio_write(&v, 0x2C, 2, 4);
    inv_mmio_write(&v, 0x20, 0xD, 4);
    /* ECMDQ n: queue memory at 0x40000 + 4K * n, 16 entries, enabled (PROD.EN, bit 31) */
    uint32_t ehot[4 * 4];
    const unsigned nehot = cfg.ecmdq_count ? 16 : 0;
    for (unsigned n = 0; n < cfg.ecmdq_count; n++) {
        uint64_t r = smmu_ecmdq_offset(s, n);
        inv_mmio_write(&v, r, 0x40000 + 0x1000ULL * n + 4, 8);
        inv_mmio_write(&v, r + 8, 1u << 31, 4);
        ehot[4 * n] = (uint32_t)r, ehot[4 * n + 1] = (uint32_t)r + 4;
        ehot[4 * n + 2] = (uint32_t)r + 8, ehot[4 * n + 3] = (uint32_t)r + 0xC;
    }
    const uint64_t window = smmu_mmio_size(s);
    check_reg_masks(s);

    unsigned steps = 0;
    while (in.n && steps++ < 256) {
        unsigned op = (unsigned)take(&in, 1) % 12;
        struct qsnap qs;
        q_snap(s, &qs, cfg.ecmdq_count);
        bool regwrite = false;
        switch (op) {
        case 0: { /* hot register write (ECMDQ registers too when present) */
            const unsigned nhot = sizeof(hot) / sizeof(hot[0]);
            unsigned h = (unsigned)take(&in, 1) % (nhot + nehot);
            uint32_t off = h < nhot ? hot[h] : ehot[h - nhot];
            uint64_t val = take(&in, 8);
            inv_mmio_write(&v, off, val, (take(&in, 1) & 1) ? 8 : 4);
            regwrite = true;
            break;
        }
        case 1: { /* any register access */
            uint64_t off = take(&in, 3) % window;
            if (take(&in, 1) & 1) {
                uint64_t val = take(&in, 8);
                inv_mmio_write(&v, off, val, (unsigned)take(&in, 1) % 9);
                regwrite = true;
            } else {
                (void)smmu_mmio_read(s, off, (unsigned)take(&in, 1) % 9);
            }
            break;
        }
        case 2: { /* memory bytes (tables, queue contents) */
            uint64_t pa = take(&in, 3) % MEM_SIZE;
            unsigned len = (unsigned)take(&in, 1) % 64;
            for (unsigned i = 0; i < len && pa + i < MEM_SIZE; i++)
                m->buf[pa + i] = (uint8_t)take(&in, 1);
            inv_mem_written(&v, pa, len);
            break;
        }
        case 3: { /* a 64-bit word, aligned: descriptors and commands */
            uint64_t pa = (take(&in, 3) % MEM_SIZE) & ~7ULL;
            put64(&v, pa, take(&in, 8));
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
            if (fl & 32) { /* the working streams' pages */
                q.sid %= NSTREAMS;
                q.ssv = false;
                q.iova &= 0xFFFF;
            }
            inv_translate(&v, &q);
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
            uint64_t lo = take(&in, 3) % MEM_SIZE;
            inv_fault_window(&v, lo, lo + take(&in, 2));
            break;
        }
        case 7:
            if (take(&in, 1) == 0x5A) {
                inv_reset(&v);
                regwrite = true;
            }
            break;
        case 8: { /* a command at SMMU_CMDQ's PROD */
            unsigned kind = (unsigned)take(&in, 1);
            uint64_t arg = take(&in, 3);
            uint64_t r0 = kind % 10 == 9 ? take(&in, 8) : 0, r1 = kind % 10 == 9 ? take(&in, 8) : 0;
            append_cmd(&v, kind, arg, r0, r1);
            regwrite = true;
            break;
        }
        case 9: /* a table entry of a working stream (PTE, table or CD word) */
            put64(&v, PTS + 8 * (take(&in, 2) % (NSTREAMS * 0x800)), take(&in, 8));
            break;
        case 10: { /* what a driver does after changing a table: a TLBI and a CFGI of some
                    * kind, CMD_SYNC, run the queue, then a translation of that page */
            uint8_t k = (uint8_t)take(&in, 1);
            uint64_t pg = take(&in, 1) & 0xF;
            static const unsigned tlbi[] = {1, 2, 3, 5, 6}, cfgi[] = {0, 7, 8};
            unsigned kind = tlbi[(k & 7) % 5], sid = (k >> 6) & 3;
            uint64_t asid = (k & 0x20) ? sid : sid + 1; /* the stream's ASID, or another */
            append_cmd(&v, kind, kind == 3 ? pg : (pg << 3) | asid, 0, 0);
            append_cmd(&v, cfgi[((k >> 3) & 3) % 3], sid, 0, 0);
            append_cmd(&v, 4, 0, 0, 0);
            q_snap(s, &qs, cfg.ecmdq_count);
            smmu_process_commands(s, 255);
            check_queue_pointers(s, &qs, cfg.ecmdq_count);
            check_reg_masks(s);
            struct smmu_txn_req q = {.sid = sid, .iova = pg << 12};
            inv_translate(&v, &q);
            regwrite = true;
            break;
        }
        case 11: { /* the driver drains the event queue: CONS = PROD, OVACKFLG = OVFLG */
            uint32_t p = (uint32_t)smmu_mmio_read(s, SMMU_REG_EVENTQ_PROD, 4);
            inv_mmio_write(&v, SMMU_REG_EVENTQ_CONS, p, 4);
            regwrite = true;
            break;
        }
        }
        if (!regwrite)
            check_queue_pointers(s, &qs, cfg.ecmdq_count);
        check_reg_masks(s);
    }
    struct smmu_stats st;
    smmu_get_stats(s, &st);
    inv_destroy(&v);
    return 0;
}
