/* vtd.h — public API of the Intel VT-d DMA-remapping hardware model (VT-d architecture
 * specification rev. 4.x): registers, root/context tables, second-stage walk, caches, the
 * invalidation queue and fault recording. Not a driver: software meets the model only through
 * MMIO offsets and simulated physical memory. Section numbers ("VT-d §10.4.7") are rev. 4.x's. */
#ifndef IOMMULAB_VTD_H
#define IOMMULAB_VTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Register offsets (VT-d §10.4). The IOTLB registers sit at ECAP.IRO * 16 and the fault
 * recording registers at CAP.FRO * 16: this model takes both from the configuration
 * (vtd_config.iro_offset / fro_offset), software finds them through CAP/ECAP. ------------ */
enum vtd_reg_offset {
    VTD_REG_VER = 0x000,     /* 32-bit, RO */
    VTD_REG_CAP = 0x008,     /* 64-bit, RO */
    VTD_REG_ECAP = 0x010,    /* 64-bit, RO */
    VTD_REG_GCMD = 0x018,    /* 32-bit, WO (reads 0) */
    VTD_REG_GSTS = 0x01C,    /* 32-bit, RO */
    VTD_REG_RTADDR = 0x020,  /* 64-bit */
    VTD_REG_CCMD = 0x028,    /* 64-bit */
    VTD_REG_FSTS = 0x034,
    VTD_REG_FECTL = 0x038,
    VTD_REG_FEDATA = 0x03C,
    VTD_REG_FEADDR = 0x040,
    VTD_REG_FEUADDR = 0x044,
    VTD_REG_IQH = 0x080,     /* 64-bit, RO */
    VTD_REG_IQT = 0x088,     /* 64-bit */
    VTD_REG_IQA = 0x090,     /* 64-bit */
    VTD_REG_ICS = 0x09C,
    VTD_REG_IECTL = 0x0A0,
    VTD_REG_IEDATA = 0x0A4,
    VTD_REG_IEADDR = 0x0A8,
    VTD_REG_IEUADDR = 0x0AC,
    VTD_REG_IQERCD = 0x0B0,  /* 64-bit, RO */
    /* relative to ECAP.IRO * 16 */
    VTD_REG_IVA_REL = 0x0,
    VTD_REG_IOTLB_REL = 0x8,
    /* each fault recording register is 16 bytes at CAP.FRO * 16 + 16 * n */
    VTD_FRCD_STRIDE = 16,
};

/* Non-recoverable fault reasons of legacy-mode DMA remapping (VT-d §7.1.3). */
enum vtd_fault_reason {
    VTD_FR_NONE = 0x0,
    VTD_FR_ROOT_NOT_PRESENT = 0x1,
    VTD_FR_CTX_NOT_PRESENT = 0x2,
    VTD_FR_CTX_INVALID = 0x3,      /* AW not in SAGAW, TT reserved or not supported */
    VTD_FR_ADDR_BEYOND_AW = 0x4,   /* input address above 2^min(MGAW, AGAW) - 1 */
    VTD_FR_WRITE = 0x5,            /* write to a page without W (or not present) */
    VTD_FR_READ = 0x6,             /* read from a page without R (or not present) */
    VTD_FR_PT_ACCESS = 0x7,        /* error reading a second-stage paging entry */
    VTD_FR_ROOT_ACCESS = 0x8,      /* error reading the root entry */
    VTD_FR_CTX_ACCESS = 0x9,       /* error reading the context entry */
    VTD_FR_ROOT_RSVD = 0xA,        /* reserved field set in a present root entry */
    VTD_FR_CTX_RSVD = 0xB,         /* reserved field set in a present context entry */
    VTD_FR_PT_RSVD = 0xC,          /* reserved field set in a present paging entry */
    VTD_FR_TT_BLOCKED = 0xD,       /* request blocked by the context entry's TT */
    VTD_FR_INTERRUPT_ADDR = 0xE,   /* translated address in the interrupt range 0xFEEx_xxxx */
};

/* ---- Implementation choices fixed at reset -------------------------------------------------- */
enum vtd_cache_policy {
    VTD_POLICY_LRU = 0,
    VTD_POLICY_FIFO = 1,
    VTD_POLICY_RANDOM = 2, /* seeded PRNG (vtd_config.seed): runs are reproducible */
};

/* A set-associative cache. entries == 0: no cache. ways == 0 or ways >= entries: fully
 * associative. Sets = entries / ways rounded DOWN to a power of two (capacity may shrink). */
struct vtd_cache_geom {
    uint32_t entries;
    uint32_t ways;
    enum vtd_cache_policy policy;
};

enum vtd_cache_id {
    VTD_CACHE_CONTEXT = 0, /* context-cache: decoded context entries, tagged by source-id */
    VTD_CACHE_IOTLB,       /* leaf translations, tagged by domain-id, page number and size */
    VTD_CACHE_PML5E,       /* paging-structure caches (VT-d §6.2.5): entries that point to */
    VTD_CACHE_PML4E,       /* the next table, tagged by domain-id and the input-address */
    VTD_CACHE_PDPE,        /* bits the entry translates */
    VTD_CACHE_PDE,
    VTD_CACHE_COUNT
};

struct vtd_config {
    /* VER (VT-d §10.4.1) */
    uint8_t ver_major, ver_minor;
    /* CAP (VT-d §10.4.2) */
    uint8_t nd;            /* ND: 4 + 2*nd domain-id bits, 0..6 */
    bool sagaw39, sagaw48, sagaw57; /* SAGAW: 3-, 4-, 5-level second-stage tables */
    uint8_t mgaw;          /* maximum guest address width in bits, 39..57 */
    uint8_t haw;           /* host address width (ACPI DMAR), 32..52: bits above are reserved */
    bool sllps_2m, sllps_1g; /* SLLPS bits 0 and 1 */
    bool psi;              /* page-selective invalidation */
    uint8_t mamv;          /* maximum address-mask value, 0..51 (PSI only) */
    uint16_t nfr;          /* number of fault recording registers, 1..256 */
    uint32_t fro_offset;   /* their offset (multiple of 16): CAP.FRO = offset / 16 */
    bool zlr, drain;       /* ZLR; DRD and DWD */
    /* ECAP (VT-d §10.4.3) */
    bool qi;               /* queued invalidation */
    bool dt;               /* device-TLBs (ATS): context TT = 01, device-TLB descriptors */
    bool pt;               /* pass-through: context TT = 10 */
    bool sc;               /* snoop control: SNP (bit 11) of leaf entries not reserved */
    bool coherent;         /* ECAP.C: page walks snoop (the model reads memory either way) */
    uint32_t iro_offset;   /* IOTLB registers' offset (multiple of 16): ECAP.IRO = offset / 16 */
    /* caches (VT-d §6.2): the architecture leaves their size to the implementation */
    struct vtd_cache_geom context_cache, iotlb, psc[4]; /* psc: PML5E, PML4E, PDPE, PDE */
    uint64_t seed;         /* PRNG seed for VTD_POLICY_RANDOM */
    /* Serialize every entry point with an internal spinlock. Off only when one host thread
     * drives the model (the deterministic simulator). */
    bool thread_safe;
};

/* A Skylake-SP-like unit (Linux boot log "ver 1:0 cap 8d2078c106f0466 ecap f020df", interrupt
 * remapping left out): VT-d 1.0, 16-bit domain ids, 48-bit MGAW, 4-level tables only, 46-bit
 * HAW, 2M and 1G pages, PSI with MAMV 18, 8 fault records at 0x100, IOTLB registers at 0x200,
 * ZLR, read/write draining, C, QI, DT, PT, SC; 256-entry context cache, 128-entry 8-way IOTLB,
 * 128-entry PDE cache (Intel publishes no sizes: docs/vtd-model.md says where these come from). */
void vtd_config_default(struct vtd_config *cfg);

/* ---- Host callbacks ---------------------------------------------------------------------- */
enum vtd_event {
    VTD_EVENT_FAULT = 0,       /* fault event: FEADDR/FEUADDR, FEDATA (VT-d §7.3) */
    VTD_EVENT_INV_COMPLETE = 1, /* invalidation completion event: IEADDR/IEUADDR, IEDATA */
};

struct vtd_host_ops {
    /* Physical memory. Return 0, or non-zero for an error (the model turns it into fault
     * reason 7h/8h/9h, or an invalidation queue error). */
    int (*mem_read)(void *ctx, uint64_t pa, void *buf, size_t len);
    int (*mem_write)(void *ctx, uint64_t pa, const void *buf, size_t len);
    /* Optional: an interrupt message is sent (the write of `data` to `addr`, which is the
     * interrupt address range, not memory: the model does not call mem_write for it). */
    void (*msi)(void *ctx, enum vtd_event ev, uint64_t addr, uint32_t data);
    /* Optional: an invalidation wait descriptor with SW = 1 wrote `data` to `addr` (through
     * mem_write, which succeeded). A simulator wakes the poller here. */
    void (*wait_status)(void *ctx, uint64_t addr, uint32_t data);
    /* Optional: a device-TLB invalidate descriptor (VT-d §6.5.2.5) for the endpoint `sid`
     * (pfsid: its physical function, for VFs; qdep: the MIP field): invalidate every ATC
     * entry overlapping [addr, addr + 2^size_log2); size_log2 64 = everything. Called while
     * the descriptor executes, so it completes before any later wait descriptor. */
    void (*devtlb_inv)(void *ctx, uint16_t sid, uint16_t pfsid, unsigned qdep, uint64_t addr,
                       unsigned size_log2);
    /* Optional: a descriptor starts executing (after its fetch and checks): the board charges
     * its cost here. */
    void (*desc_exec)(void *ctx, uint64_t qw0, uint64_t qw1);
    /* Optional: trace point (`what` is a static string). */
    void (*trace)(void *ctx, const char *what, uint64_t a, uint64_t b);
};

struct vtd;

/* Returns 0, or -EINVAL with *err_msg naming the bad field, -ENOMEM. */
int vtd_create(struct vtd **out, const struct vtd_config *cfg, const struct vtd_host_ops *ops,
               void *ctx, const char **err_msg);
void vtd_destroy(struct vtd *v);
/* Hardware reset: registers to reset values, caches invalidated, statistics kept. */
void vtd_reset(struct vtd *v);
const struct vtd_config *vtd_get_config(const struct vtd *v);

/* ---- Register access ------------------------------------------------------------------------ */
/* size 4 or 8, offset aligned to size; other accesses read 0 and ignore writes. An 8-byte
 * access is the two 4-byte halves, low first (so CCMD.ICC / IOTLB.IVT in the high half act
 * after the low half is stored). */
uint64_t vtd_mmio_read(struct vtd *v, uint64_t offset, unsigned size);
void vtd_mmio_write(struct vtd *v, uint64_t offset, uint64_t value, unsigned size);
/* The register window (a multiple of 4 KiB that holds the FRCD and IOTLB registers). */
uint64_t vtd_mmio_size(const struct vtd *v);

/* ---- Invalidation queue consumer ------------------------------------------------------------ */
/* Fetch and execute at most `max_desc` descriptors from IQH towards IQT (VT-d §6.5.2). Stops
 * on an empty or disabled queue, or an invalidation queue error (FSTS.IQE, IQH left on the
 * bad descriptor; nothing more is fetched until software clears IQE). Returns the number of
 * descriptors completed. */
unsigned vtd_process_queue(struct vtd *v, unsigned max_desc);

/* ---- Translation --------------------------------------------------------------------------- */
struct vtd_txn_req {
    uint16_t sid;      /* source-id: bus << 8 | device << 3 | function */
    uint64_t iova;     /* input address */
    bool write;        /* else read */
    /* ATS Translation Request (VT-d §4.2.3): allowed when the context entry's TT is 01;
     * returns the translation (rsp.perm may be 0: a completion granting no access) and
     * accesses nothing. */
    bool ats;
};

enum vtd_txn_status {
    VTD_TXN_OK = 0,     /* pa valid */
    VTD_TXN_FAULT = 1,  /* blocked: rsp.fault_reason says why (ATS: UR completion) */
};

#define VTD_PERM_R 1u
#define VTD_PERM_W 2u

struct vtd_txn_rsp {
    enum vtd_txn_status status;
    uint64_t pa;
    uint8_t page_shift;   /* 12, 21 or 30 (0 for untranslated pass-through) */
    uint8_t perm;         /* VTD_PERM_* of the translation */
    bool passthrough;     /* TES = 0 or context TT = 10 */
    uint16_t did;         /* domain-id of the context entry used (0 if none) */
    uint8_t fault_reason; /* enum vtd_fault_reason, VTD_FR_NONE if none */
    bool fault_recorded;  /* the fault reached a fault recording register */
};

/* Translate one request. Never fails for any input: every outcome is architected. */
void vtd_translate(struct vtd *v, const struct vtd_txn_req *req, struct vtd_txn_rsp *rsp);

/* ---- Statistics ----------------------------------------------------------------------------- */
struct vtd_cache_stats {
    uint32_t capacity; /* effective entries (sets * ways) */
    uint32_t sets, ways;
    uint64_t lookups, hits, misses, fills, evictions, invalidations;
};

struct vtd_stats {
    uint64_t translations, iotlb_hit_translations, passthrough, ats_requests;
    uint64_t faults;              /* requests blocked */
    uint64_t faults_recorded;     /* written to a fault recording register */
    uint64_t faults_suppressed;   /* by the context entry's FPD */
    uint64_t faults_lost;         /* not recorded: PFO set or the next record still full */
    uint64_t fault_overflows;     /* times PFO was set */
    uint64_t fault_events;        /* fault-event messages sent */
    uint64_t descriptors;         /* invalidation descriptors completed */
    uint64_t by_type[16];         /* completed, per descriptor type */
    uint64_t iq_errors;           /* times IQE was set */
    uint64_t wait_status_writes, inv_events; /* wait SW writes; completion-event messages */
    uint64_t devtlb_invs;         /* device-TLB invalidations passed to the host */
    uint64_t reg_context_invs, reg_iotlb_invs; /* register-based invalidations performed */
};

void vtd_get_stats(struct vtd *v, struct vtd_stats *out);
int vtd_get_cache_stats(struct vtd *v, enum vtd_cache_id id, struct vtd_cache_stats *out);
void vtd_clear_stats(struct vtd *v);

/* ---- Threading contract ------------------------------------------------------------------------
 * With cfg.thread_safe every entry point takes one internal spinlock; host callbacks run with it
 * held and must not call back into the model. Memory written by the driver (queue entries,
 * tables) must be visible before its IQT write. vtd_create/reset/destroy must not race. */

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_VTD_H */
