/* test_vtd_env.h — test-side rig for the VT-d model: fake physical memory with an error window,
 * root/context/second-stage table writers, bring-up through MMIO and a queue submitter. Not
 * cmocka-dependent, and it never uses the model's private encodings: every offset and field
 * position below is typed in from the VT-d specification (rev. 4.x). */
#ifndef ILAB_TESTS_VTD_ENV_H
#define ILAB_TESTS_VTD_ENV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/vtd.h"

/* ---- spec constants (VT-d §10.4) ---------------------------------------------------------- */
#define VT_VER 0x000
#define VT_CAP 0x008
#define VT_ECAP 0x010
#define VT_GCMD 0x018
#define VT_GSTS 0x01C
#define VT_RTADDR 0x020
#define VT_CCMD 0x028
#define VT_FSTS 0x034
#define VT_FECTL 0x038
#define VT_FEDATA 0x03C
#define VT_FEADDR 0x040
#define VT_FEUADDR 0x044
#define VT_IQH 0x080
#define VT_IQT 0x088
#define VT_IQA 0x090
#define VT_ICS 0x09C
#define VT_IECTL 0x0A0
#define VT_IEDATA 0x0A4
#define VT_IEADDR 0x0A8
#define VT_IEUADDR 0x0AC
#define VT_IQERCD 0x0B0

#define VT_GCMD_TE (1u << 31)
#define VT_GCMD_SRTP (1u << 30)
#define VT_GCMD_QIE (1u << 26)
#define VT_GSTS_TES (1u << 31)
#define VT_GSTS_RTPS (1u << 30)
#define VT_GSTS_QIES (1u << 26)

#define VT_FSTS_PFO 0x1u
#define VT_FSTS_PPF 0x2u
#define VT_FSTS_IQE 0x10u
#define VT_IM (1u << 31)
#define VT_IP (1u << 30)

/* fault reasons (VT-d §7.1.3) */
#define VT_FR_ROOT_P 0x1
#define VT_FR_CTX_P 0x2
#define VT_FR_CTX_INV 0x3
#define VT_FR_ADDR 0x4
#define VT_FR_WRITE 0x5
#define VT_FR_READ 0x6
#define VT_FR_PT_ACCESS 0x7
#define VT_FR_ROOT_ACCESS 0x8
#define VT_FR_CTX_ACCESS 0x9
#define VT_FR_ROOT_RSVD 0xA
#define VT_FR_CTX_RSVD 0xB
#define VT_FR_PT_RSVD 0xC
#define VT_FR_TT 0xD
#define VT_FR_INTR 0xE /* LGN.4: translated address in the interrupt range (§3.15) */

/* second-stage entry bits (VT-d §9.8) */
#define VT_R 0x1ULL
#define VT_W 0x2ULL
#define VT_PS 0x80ULL

/* descriptor encodings (VT-d §6.5.2) */
#define VT_DESC_CC(g, did, sid, fm) \
    (0x1ULL | ((uint64_t)(g) << 4) | ((uint64_t)(did) << 16) | ((uint64_t)(sid) << 32) | \
     ((uint64_t)(fm) << 48))
#define VT_DESC_IOTLB(g, did) (0x2ULL | ((uint64_t)(g) << 4) | ((uint64_t)(did) << 16))
#define VT_DESC_IOTLB_HI(addr, am, ih) (((addr) & ~0xFFFULL) | (am) | ((ih) ? 0x40ULL : 0))
#define VT_DESC_WAIT(sw, iflag, fn, data) \
    (0x5ULL | ((iflag) ? 0x10ULL : 0) | ((sw) ? 0x20ULL : 0) | ((fn) ? 0x40ULL : 0) | \
     ((uint64_t)(data) << 32))
#define VT_DESC_DEVTLB(sid, pfsid, mip) \
    (0x3ULL | ((uint64_t)((pfsid) & 0xF) << 12) | ((uint64_t)(mip) << 16) | \
     ((uint64_t)(sid) << 32) | ((uint64_t)(((pfsid) >> 4) & 0xFFF) << 52))

#define VT_MEM_SIZE (8u << 20)
#define VT_HEAP_BASE 0x100000ULL

struct vt_devtlb {
    uint16_t sid, pfsid;
    unsigned qdep, size_log2;
    uint64_t addr;
};

struct vt_env {
    struct vtd *v;
    uint8_t *mem;
    uint64_t flo, fhi;          /* reads and writes in [flo, fhi) fail */
    uint64_t heap;              /* next free 4 KiB page */
    uint64_t root;
    uint32_t gcmd;              /* persistent command bits, as a driver keeps them */
    uint64_t iq, iq_tail;       /* queue base; software tail index */
    unsigned iq_entries;
    unsigned msi_count[2];
    uint64_t msi_addr[2];
    uint32_t msi_data[2];
    unsigned wait_status_calls, desc_execs;
    unsigned ndevtlb;
    struct vt_devtlb devtlb[8];
};

static inline int vt_rd_cb(void *ctx, uint64_t pa, void *buf, size_t len)
{
    struct vt_env *e = ctx;
    if (pa >= VT_MEM_SIZE || len > VT_MEM_SIZE - pa || (pa < e->fhi && pa + len > e->flo))
        return -1;
    memcpy(buf, e->mem + pa, len);
    return 0;
}

static inline int vt_wr_cb(void *ctx, uint64_t pa, const void *buf, size_t len)
{
    struct vt_env *e = ctx;
    if (pa >= VT_MEM_SIZE || len > VT_MEM_SIZE - pa || (pa < e->fhi && pa + len > e->flo))
        return -1;
    memcpy(e->mem + pa, buf, len);
    return 0;
}

static inline void vt_msi_cb(void *ctx, enum vtd_event ev, uint64_t addr, uint32_t data)
{
    struct vt_env *e = ctx;
    e->msi_count[ev & 1]++;
    e->msi_addr[ev & 1] = addr;
    e->msi_data[ev & 1] = data;
}

static inline void vt_wait_cb(void *ctx, uint64_t addr, uint32_t data)
{
    (void)addr;
    (void)data;
    ((struct vt_env *)ctx)->wait_status_calls++;
}

static inline void vt_devtlb_cb(void *ctx, uint16_t sid, uint16_t pfsid, unsigned qdep,
                                uint64_t addr, unsigned size_log2)
{
    struct vt_env *e = ctx;
    if (e->ndevtlb < 8)
        e->devtlb[e->ndevtlb++] = (struct vt_devtlb){sid, pfsid, qdep, size_log2, addr};
}

static inline void vt_exec_cb(void *ctx, uint64_t qw0, uint64_t qw1)
{
    (void)qw0;
    (void)qw1;
    ((struct vt_env *)ctx)->desc_execs++;
}

static const struct vtd_host_ops vt_ops = {
    .mem_read = vt_rd_cb, .mem_write = vt_wr_cb, .msi = vt_msi_cb, .wait_status = vt_wait_cb,
    .devtlb_inv = vt_devtlb_cb, .desc_exec = vt_exec_cb,
};

/* cfg NULL: vtd_config_default. Returns 0 or the vtd_create error. */
static inline int vt_init(struct vt_env *e, const struct vtd_config *cfg)
{
    memset(e, 0, sizeof(*e));
    e->mem = calloc(1, VT_MEM_SIZE);
    if (!e->mem)
        return -1;
    e->heap = VT_HEAP_BASE;
    struct vtd_config c;
    if (!cfg) {
        vtd_config_default(&c);
        cfg = &c;
    }
    return vtd_create(&e->v, cfg, &vt_ops, e, NULL);
}

static inline void vt_fini(struct vt_env *e)
{
    vtd_destroy(e->v);
    free(e->mem);
    e->mem = NULL;
}

static inline uint32_t vt_rd(struct vt_env *e, uint64_t off) { return (uint32_t)vtd_mmio_read(e->v, off, 4); }
static inline uint64_t vt_rd64(struct vt_env *e, uint64_t off) { return vtd_mmio_read(e->v, off, 8); }
static inline void vt_wr(struct vt_env *e, uint64_t off, uint32_t val) { vtd_mmio_write(e->v, off, val, 4); }
static inline void vt_wr64(struct vt_env *e, uint64_t off, uint64_t val) { vtd_mmio_write(e->v, off, val, 8); }

static inline uint64_t vt_get64(struct vt_env *e, uint64_t pa)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | e->mem[pa + i];
    return v;
}

static inline void vt_put64(struct vt_env *e, uint64_t pa, uint64_t val)
{
    for (int i = 0; i < 8; i++)
        e->mem[pa + i] = (uint8_t)(val >> (8 * i));
}

static inline uint64_t vt_page(struct vt_env *e)
{
    uint64_t pa = e->heap;
    e->heap += 0x1000;
    memset(e->mem + pa, 0, 0x1000);
    return pa;
}

/* The driver's GCMD protocol (VT-d §10.4.4): persistent bits plus the one being changed. */
static inline void vt_gcmd(struct vt_env *e, uint32_t set, uint32_t clear, uint32_t oneshot)
{
    e->gcmd = (e->gcmd | set) & ~clear;
    vt_wr(e, VT_GCMD, e->gcmd | oneshot);
}

/* Root table, SRTP, TE. */
static inline void vt_bringup(struct vt_env *e)
{
    e->root = vt_page(e);
    vt_wr64(e, VT_RTADDR, e->root);
    vt_gcmd(e, 0, 0, VT_GCMD_SRTP);
    vt_gcmd(e, VT_GCMD_TE, 0, 0);
}

/* A context entry for sid (VT-d §9.3): lo = P | FPD << 1 | TT << 2 | SLPTPTR; hi = AW | DID << 8. */
static inline void vt_context(struct vt_env *e, uint16_t sid, uint16_t did, unsigned aw, unsigned tt,
                              uint64_t slptptr, bool fpd)
{
    uint64_t re = e->root + 16ULL * (sid >> 8);
    uint64_t ctp = vt_get64(e, re) & ~0xFFFULL;
    if (!(vt_get64(e, re) & 1)) {
        ctp = vt_page(e);
        vt_put64(e, re, ctp | 1);
    }
    uint64_t ce = ctp + 16ULL * (sid & 0xFF);
    vt_put64(e, ce, 1 | (fpd ? 2 : 0) | ((uint64_t)tt << 2) | slptptr);
    vt_put64(e, ce + 8, aw | ((uint64_t)did << 8));
}

/* Map iova -> pa with a leaf of 2^shift (12, 21, 30) at the given rights, in a table of
 * `levels` levels rooted at `top`; table entries get R|W. Returns the leaf entry's address. */
static inline uint64_t vt_map(struct vt_env *e, uint64_t top, unsigned levels, uint64_t iova,
                              uint64_t pa, unsigned shift, uint64_t rights)
{
    uint64_t table = top;
    for (unsigned level = levels; level >= 1; level--) {
        unsigned sh = 12 + 9 * (level - 1);
        uint64_t slot = table + 8 * ((iova >> sh) & 0x1FF);
        if (sh == shift) {
            vt_put64(e, slot, pa | rights | (shift > 12 ? VT_PS : 0));
            return slot;
        }
        uint64_t ent = vt_get64(e, slot);
        if (!(ent & 3)) {
            ent = vt_page(e) | VT_R | VT_W;
            vt_put64(e, slot, ent);
        }
        table = ent & ~0xFFFULL & ((1ULL << 52) - 1);
    }
    return 0;
}

static inline void vt_tr(struct vt_env *e, uint16_t sid, uint64_t iova, bool write,
                         struct vtd_txn_rsp *r)
{
    struct vtd_txn_req q = {.sid = sid, .iova = iova, .write = write};
    vtd_translate(e->v, &q, r);
}

/* Queued invalidation: a queue of 2^(qs + 8) entries, IQA, then QIE. */
static inline void vt_qi_enable(struct vt_env *e, unsigned qs)
{
    e->iq = e->heap;
    for (unsigned i = 0; i < (1u << qs); i++)
        vt_page(e);
    e->iq_entries = 256u << qs;
    e->iq_tail = 0;
    vt_wr64(e, VT_IQA, e->iq | qs);
    vt_wr64(e, VT_IQT, 0);
    vt_gcmd(e, VT_GCMD_QIE, 0, 0);
}

/* Write one descriptor at the software tail and publish the new tail in IQT (no processing). */
static inline void vt_qi_push(struct vt_env *e, uint64_t qw0, uint64_t qw1)
{
    uint64_t slot = e->iq + 16 * e->iq_tail;
    vt_put64(e, slot, qw0);
    vt_put64(e, slot + 8, qw1);
    e->iq_tail = (e->iq_tail + 1) % e->iq_entries;
    vt_wr64(e, VT_IQT, e->iq_tail << 4);
}

#endif /* ILAB_TESTS_VTD_ENV_H */
