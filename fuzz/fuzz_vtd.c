/* fuzz_vtd.c — libFuzzer target for the VT-d model: the input is a program of register writes and
 * reads, memory writes (tables, queue contents), error windows, invalidation descriptors pushed
 * at the tail, translations, queue processing and resets. Not a test. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/vtd.h"

#define MEM_SIZE (1u << 20)
#define ROOT 0x10000ULL
#define CTX 0x11000ULL
#define PT 0x12000ULL
#define IQ 0x20000ULL

struct fmem {
    uint8_t buf[MEM_SIZE];
    uint64_t flo, fhi; /* reads/writes in [flo, fhi) fail */
    uint64_t sink;
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

static void msi(void *ctx, enum vtd_event ev, uint64_t addr, uint32_t data)
{
    ((struct fmem *)ctx)->sink += ev + addr + data;
}

static void devtlb(void *ctx, uint16_t sid, uint16_t pfsid, unsigned qdep, uint64_t addr,
                   unsigned size_log2)
{
    ((struct fmem *)ctx)->sink += sid + pfsid + qdep + addr + size_log2;
}

static const struct vtd_host_ops ops = {.mem_read = rd, .mem_write = wr, .msi = msi,
                                        .devtlb_inv = devtlb};

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

static void put64(struct fmem *m, uint64_t pa, uint64_t v)
{
    if (pa + 8 <= MEM_SIZE)
        memcpy(m->buf + pa, &v, 8); /* little-endian host */
}

/* Offsets worth hitting often (op 1 reaches the whole window). */
static const uint32_t hot[] = {0x18, 0x20, 0x24, 0x28, 0x2C, 0x34, 0x38, 0x3C, 0x40, 0x44,
                               0x88, 0x90, 0x94, 0x9C, 0xA0, 0xA4, 0xA8, 0x200, 0x204, 0x208,
                               0x20C, 0x10C, 0x11C, 0x12C, 0x17C};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fmem *m;
    if (!m)
        m = calloc(1, sizeof(*m));
    memset(m->buf, 0, sizeof(m->buf));
    m->flo = m->fhi = 0;
    struct in in = {data, size};
    struct vtd_config cfg;
    vtd_config_default(&cfg);
    cfg.thread_safe = false;
    uint8_t knobs = (uint8_t)take(&in, 1);
    if (knobs & 1) { /* tiny caches with every policy: evictions */
        cfg.context_cache = (struct vtd_cache_geom){2, 1, VTD_POLICY_FIFO};
        cfg.iotlb = (struct vtd_cache_geom){4, 2, VTD_POLICY_RANDOM};
        cfg.psc[3] = (struct vtd_cache_geom){3, 2, VTD_POLICY_LRU};
    }
    if (knobs & 2) { /* 3-, 4- and 5-level tables */
        cfg.sagaw39 = cfg.sagaw57 = true;
        cfg.mgaw = 57;
    }
    if (knobs & 4) { /* fewer capabilities: their fields become reserved */
        cfg.dt = cfg.pt = cfg.sc = false;
        cfg.sllps_1g = false;
        cfg.psi = false;
    }
    if (knobs & 8)
        cfg.nfr = 1;
    if (knobs & 16)
        cfg.haw = 39;
    struct vtd *v;
    if (vtd_create(&v, &cfg, &ops, m, NULL))
        return 0;
    /* a working start so inputs reach the walk and the queue quickly: bus 0 -> context table,
     * devfn 0 -> DID 1, AW 48-bit, table at PT; queue of 256 entries at IQ, enabled */
    put64(m, ROOT, CTX | 1);
    put64(m, CTX, PT | 1);
    put64(m, CTX + 8, 2 | (1 << 8));
    vtd_mmio_write(v, 0x20, ROOT, 8);
    vtd_mmio_write(v, 0x18, 1u << 30, 4);
    vtd_mmio_write(v, 0x18, 1u << 31, 4);
    vtd_mmio_write(v, 0x90, IQ, 8);
    vtd_mmio_write(v, 0x18, (1u << 31) | (1u << 26), 4);
    vtd_mmio_write(v, 0x38, 0, 4);
    vtd_mmio_write(v, 0xA0, 0, 4);
    const uint64_t window = vtd_mmio_size(v);
    uint64_t tail = 0;

    unsigned steps = 0;
    while (in.n && steps++ < 256) {
        switch ((unsigned)take(&in, 1) % 9) {
        case 0: { /* hot register write */
            uint32_t off = hot[take(&in, 1) % (sizeof(hot) / sizeof(hot[0]))];
            unsigned sz = (take(&in, 1) & 1) && !(off & 7) ? 8 : 4;
            vtd_mmio_write(v, off, take(&in, 8), sz);
            break;
        }
        case 1: { /* any register access, any size */
            uint64_t off = take(&in, 2) % (window + 16);
            if (take(&in, 1) & 1)
                vtd_mmio_write(v, off, take(&in, 8), (unsigned)take(&in, 1) % 9);
            else
                (void)vtd_mmio_read(v, off, (unsigned)take(&in, 1) % 9);
            break;
        }
        case 2: { /* memory bytes */
            uint64_t pa = take(&in, 3) % MEM_SIZE;
            unsigned len = (unsigned)take(&in, 1) % 64;
            for (unsigned i = 0; i < len && pa + i < MEM_SIZE; i++)
                m->buf[pa + i] = (uint8_t)take(&in, 1);
            break;
        }
        case 3: /* an aligned word: entries of the tables near the start */
            put64(m, (take(&in, 3) % MEM_SIZE) & ~7ULL, take(&in, 8));
            break;
        case 4: { /* translate */
            struct vtd_txn_req q = {0};
            q.sid = (uint16_t)take(&in, 2);
            uint8_t fl = (uint8_t)take(&in, 1);
            q.write = fl & 1;
            q.ats = fl & 2;
            q.iova = take(&in, 8);
            if (fl & 4)
                q.iova &= 0xFFFFFF; /* mostly low addresses: the tables at PT */
            struct vtd_txn_rsp r;
            vtd_translate(v, &q, &r);
            break;
        }
        case 5:
            vtd_process_queue(v, (unsigned)take(&in, 1));
            break;
        case 6: /* error window */
            m->flo = take(&in, 3) % MEM_SIZE;
            m->fhi = m->flo + take(&in, 2);
            break;
        case 7:
            if (take(&in, 1) == 0x5A)
                vtd_reset(v);
            break;
        case 8: { /* a descriptor at the software tail, then IQT */
            uint64_t qw0 = take(&in, 8), qw1 = take(&in, 8);
            put64(m, IQ + 16 * tail, qw0);
            put64(m, IQ + 16 * tail + 8, qw1);
            tail = (tail + 1) % 256;
            vtd_mmio_write(v, 0x88, tail << 4, 8);
            break;
        }
        }
    }
    struct vtd_stats st;
    vtd_get_stats(v, &st);
    vtd_destroy(v);
    return 0;
}
