/* smmuv3.h — public API of the Arm SMMUv3 hardware model (IHI 0070): registers, queues, translate.
 * Not a driver: software meets the model only through MMIO offsets and simulated physical memory. */
#ifndef IOMMULAB_SMMUV3_H
#define IOMMULAB_SMMUV3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Register offsets (IHI 0070 §6.2). Page 1 starts at 0x10000. ------------------------- */
enum smmu_reg_offset {
    SMMU_REG_IDR0 = 0x000,
    SMMU_REG_IDR1 = 0x004,
    SMMU_REG_IDR2 = 0x008,
    SMMU_REG_IDR3 = 0x00C,
    SMMU_REG_IDR4 = 0x010,
    SMMU_REG_IDR5 = 0x014,
    SMMU_REG_IIDR = 0x018,
    SMMU_REG_AIDR = 0x01C,
    SMMU_REG_CR0 = 0x020,
    SMMU_REG_CR0ACK = 0x024,
    SMMU_REG_CR1 = 0x028,
    SMMU_REG_CR2 = 0x02C,
    SMMU_REG_STATUSR = 0x040,
    SMMU_REG_GBPA = 0x044,
    SMMU_REG_AGBPA = 0x048,
    SMMU_REG_IRQ_CTRL = 0x050,
    SMMU_REG_IRQ_CTRLACK = 0x054,
    SMMU_REG_GERROR = 0x060,
    SMMU_REG_GERRORN = 0x064,
    SMMU_REG_GERROR_IRQ_CFG0 = 0x068,
    SMMU_REG_GERROR_IRQ_CFG1 = 0x070,
    SMMU_REG_GERROR_IRQ_CFG2 = 0x074,
    SMMU_REG_STRTAB_BASE = 0x080,
    SMMU_REG_STRTAB_BASE_CFG = 0x088,
    SMMU_REG_CMDQ_BASE = 0x090,
    SMMU_REG_CMDQ_PROD = 0x098,
    SMMU_REG_CMDQ_CONS = 0x09C,
    SMMU_REG_EVENTQ_BASE = 0x0A0,
    SMMU_REG_EVENTQ_IRQ_CFG0 = 0x0B0,
    SMMU_REG_EVENTQ_IRQ_CFG1 = 0x0B8,
    SMMU_REG_EVENTQ_IRQ_CFG2 = 0x0BC,
    SMMU_REG_EVENTQ_PROD = 0x100A8,
    SMMU_REG_EVENTQ_CONS = 0x100AC,
    SMMU_MMIO_SIZE = 0x20000, /* pages 0 and 1; ECMDQ control pages follow: smmu_mmio_size() */
};

/* ---- SMMUv3.3 Enhanced Command queues (IHI 0070 §3.5.6, §6.2.5) ------------------------------
 * Page 0 describes the Command queue control pages; each 64 KiB control page holds
 * 2^IDR6.CMDQ_CONTROL_PAGE_LOG2NUMQ ECMDQs spaced evenly (stride 64 KiB >> LOG2NUMQ), each with
 * BASE (+0x0, 64-bit), PROD (+0x8) and CONS (+0xC). This model places control page 0 at
 * SMMU_ECMDQ_CP_OFFSET, right after page 1, so the window grows to smmu_mmio_size(s). */
enum smmu_ecmdq_reg_offset {
    SMMU_REG_IDR6 = 0x190,
    SMMU_REG_CMDQ_CP_BASE = 0x4000,   /* + 32*n: CMDQ_CONTROL_PAGE_BASEn (64-bit, RO) */
    SMMU_REG_CMDQ_CP_CFG = 0x4008,    /* + 32*n: CMDQ_CONTROL_PAGE_CFGn (RO, EN RES1) */
    SMMU_REG_CMDQ_CP_STATUS = 0x400C, /* + 32*n: CMDQ_CONTROL_PAGE_STATUSn (RO, ENACK RES1) */
    SMMU_CMDQ_CP_REG_STRIDE = 32,
    SMMU_ECMDQ_CP_OFFSET = 0x20000,   /* this model's CMDQ_CONTROL_PAGE_BASE0.ADDR */
    SMMU_ECMDQ_CP_SIZE = 0x10000,
    SMMU_ECMDQ_REG_BASE = 0x0,        /* offsets inside one ECMDQ's register group */
    SMMU_ECMDQ_REG_PROD = 0x8,
    SMMU_ECMDQ_REG_CONS = 0xC,
};

/* ---- Event numbers (IHI 0070 §7.3) --------------------------------------------------------- */
enum smmu_event_type {
    SMMU_EVT_NONE = 0x00,
    SMMU_EVT_F_UUT = 0x01,
    SMMU_EVT_C_BAD_STREAMID = 0x02,
    SMMU_EVT_F_STE_FETCH = 0x03,
    SMMU_EVT_C_BAD_STE = 0x04,
    SMMU_EVT_F_BAD_ATS_TREQ = 0x05, /* ATS Translation Request refused (§7.3.6) */
    SMMU_EVT_F_STREAM_DISABLED = 0x06,
    SMMU_EVT_C_BAD_SUBSTREAMID = 0x08,
    SMMU_EVT_F_CD_FETCH = 0x09,
    SMMU_EVT_C_BAD_CD = 0x0A,
    SMMU_EVT_F_WALK_EABT = 0x0B,
    SMMU_EVT_F_TRANSLATION = 0x10,
    SMMU_EVT_F_ADDR_SIZE = 0x11,
    SMMU_EVT_F_ACCESS = 0x12,
    SMMU_EVT_F_PERMISSION = 0x13,
};

/* ---- Implementation choices fixed at reset ----------------------------------------------- */
enum smmu_cache_policy {
    SMMU_POLICY_LRU = 0,
    SMMU_POLICY_FIFO = 1,
    SMMU_POLICY_RANDOM = 2, /* seeded PRNG (smmu_config.seed): runs are reproducible */
};

/* A set-associative cache. entries == 0: no cache. ways == 0 or ways >= entries: fully
 * associative. The number of sets is entries/ways rounded DOWN to a power of two, so the
 * effective capacity (smmu_cache_stats.capacity) can be below `entries`. */
struct smmu_cache_geom {
    uint32_t entries;
    uint32_t ways;
    enum smmu_cache_policy policy;
};

enum smmu_cache_id {
    SMMU_CACHE_STE = 0, /* configuration cache: decoded STEs, tagged by StreamID */
    SMMU_CACHE_CD,      /* configuration cache: decoded CDs, tagged by StreamID+SubstreamID */
    SMMU_CACHE_TLB,     /* leaf translations, tagged by VMID/ASID (+global), regime, VA */
    SMMU_CACHE_WALK_L0, /* table descriptors read at level 0 (pointer to a level-1 table) */
    SMMU_CACHE_WALK_L1,
    SMMU_CACHE_WALK_L2,
    SMMU_CACHE_COUNT
};

struct smmu_config {
    /* IDR0 */
    bool hyp;          /* EL2 StreamWorld, TLBI_EL2_*, CR2.E2H. Architecturally RES0 without
                        * S2P (IHI 0070 §6.3.1), which this model lacks: a known deviation,
                        * kept for the simulated results (docs/smmuv3-conformance.md) */
    bool ats;          /* ATC_INV legal, CR0.ATSCHK */
    bool asid16;
    bool vmid16;
    bool msi;          /* MSI-capable IRQ_CFG registers and CMD_SYNC MSI completion */
    bool sev;          /* CMD_SYNC CS=SEV signals the host (irq line SMMU_IRQ_SEV) */
    bool cd2l;         /* 2-level CD tables */
    bool strtab_2lvl;  /* IDR0.ST_LEVEL = 0b01 */
    bool term_model;   /* true: abort-only termination (CD.A == 0 is ILLEGAL) */
    bool coherent;     /* IDR0.COHACC */
    uint8_t ttendian;  /* IDR0.TTENDIAN: 0 mixed, 2 little only, 3 big only */
    /* IDR1 */
    uint8_t sidsize;   /* 0..32 */
    uint8_t ssidsize;  /* 0..20 */
    uint8_t cmdqs;     /* max log2 entries of the command queue, 0..19 */
    uint8_t eventqs;   /* max log2 entries of the event queue, 0..19 */
    /* IDR3 */
    bool ril;          /* range invalidation and TTL hint: an SMMUv3.2 feature, mandatory from
                        * v3.2 on (§6.3.4), so it must equal arch_minor >= 2 */
    bool had;          /* CD.HAD0/1 hierarchical attribute disable (mandatory from v3.1) */
    /* IDR5 */
    uint8_t oas;       /* output address size in bits: 32, 36, 40, 42, 44, 48 or 52 */
    bool gran4k, gran16k, gran64k;
    /* AIDR minor revision (0 = v3.0, 1 = v3.1, 2 = v3.2, 3 = v3.3: needed for ECMDQs); IIDR */
    uint8_t arch_minor;
    uint32_t iidr;
    /* GBPA.ABORT at reset: transactions abort (true) or bypass while SMMUEN == 0 */
    bool gbpa_abort_at_reset;
    /* Caches (implementation choice: IHI 0070 leaves them architecturally invisible) */
    struct smmu_cache_geom ste_cache, cd_cache, tlb, walk_cache[3];
    uint64_t seed;     /* PRNG seed for SMMU_POLICY_RANDOM */
    /* Serialize translate / process_commands / MMIO with an internal spinlock. Turn off only
     * when a single host thread drives the model (e.g. the deterministic simulator). */
    bool thread_safe;
    /* SMMUv3.3 Enhanced Command queues (IDR1.ECMDQ, IDR6). 0 = none (IDR1.ECMDQ = 0). Otherwise
     * a power of two <= 1024, which needs arch_minor 3, msi and coherent (§6.3.2). */
    unsigned ecmdq_count;
    /* Implementation cap on ECMDQ_BASE.LOG2SIZE below IDR1.CMDQS (not discoverable by
     * software); 0 = IDR1.CMDQS, the architected cap. */
    uint8_t ecmdq_log2size_max;
    /* false: one consumer takes commands round-robin, one at a time, from every enabled queue
     * (smmu_process_commands only), as on the seed-003 hardware. true: the queues are consumed
     * in parallel; the host may run one consumer per queue with smmu_process_queue(). */
    bool ecmdq_parallel;
    /* IDR1.ATTR_PERMS_OVR: STE.PRIVCFG/INSTCFG override the incoming attributes. false: the
     * fields are RES0 and ignored (§5.2). Default true. */
    bool attr_perms_ovr;
    /* NVIDIA Tegra241 CMDQV (tegra241_cmdqv.h): 0 = none. Otherwise the VCMDQs, a power of two
     * 2..128 (PARAM.NUM_VCMDQ_LOG2), shared out to cmdqv_vintfs VINTFs (a power of two 1..64,
     * at most cmdqv_vcmdqs). Not with ECMDQs. The VCMDQs are consumed with SMMU_CMDQ by the
     * serial consumer, queue indexes 1 + n. */
    unsigned cmdqv_vcmdqs;
    unsigned cmdqv_vintfs;
    /* VINTF_CONFIG.HYP_OWN wired to 0, as a guest sees the CMDQV. */
    bool cmdqv_guest;
};

/* A sensible SMMUv3.2-like configuration (MMU-600/700 class): 16-bit SIDs, 20-bit SSIDs,
 * 48-bit OAS, all granules, RIL, MSI, 2-level tables, 2048-entry 4-way TLB. */
void smmu_config_default(struct smmu_config *cfg);

/* ---- Host callbacks -------------------------------------------------------------------------- */
enum smmu_irq_line {
    SMMU_IRQ_EVENTQ = 0,
    SMMU_IRQ_GERROR = 1,
    SMMU_IRQ_CMD_SYNC = 2,
    SMMU_IRQ_SEV = 3, /* CMD_SYNC with CS=SEV: a WFE wake-up event */
    SMMU_IRQ_CMDQV = 4, /* a VCMDQ error of a VINTF whose VI_INT_MASK bit is clear */
};

struct smmu_host_ops {
    /* Physical memory. Return 0, or non-zero for an external abort (the model turns it into
     * F_STE_FETCH, F_CD_FETCH, F_WALK_EABT, CERROR_ABT or a GERROR *_ABT_ERR bit). */
    int (*mem_read)(void *ctx, uint64_t pa, void *buf, size_t len);
    int (*mem_write)(void *ctx, uint64_t pa, const void *buf, size_t len);
    /* Optional: called after the model wrote `data` (32-bit LE) to `addr` through mem_write. */
    void (*msi)(void *ctx, uint64_t addr, uint32_t data);
    /* Optional: wired interrupt pulse. */
    void (*irq)(void *ctx, enum smmu_irq_line line);
    /* Optional: trace point (`what` is a static string). */
    void (*trace)(void *ctx, const char *what, uint64_t a, uint64_t b);
    /* Optional: CMD_ATC_INV (IHI 0070 §4.5.1) sends an ATS Invalidation Request to the
     * endpoint behind `sid` (with PASID `ssid` when ssv): invalidate every ATC entry that
     * overlaps [addr, addr + 2^size_log2). addr is aligned to the span (Address[11+Size:0]
     * taken as zero); size_log2 = 12 + Size, 64 for Size 52 ("invalidate all"). global is the
     * Global Invalidate flag (only with ssv). Called while the command executes, so the
     * endpoint's invalidation completes before any later CMD_SYNC completes (§4.5.1: a
     * CMD_SYNC after CMD_ATC_INV ensures its completion). Without it, ATC_INV is a no-op. */
    void (*atc_inv)(void *ctx, uint32_t sid, uint32_t ssid, bool ssv, uint64_t addr,
                    unsigned size_log2, bool global);
    /* Optional: the command processor starts executing a command of queue `queue` (0 =
     * SMMU_CMDQ, 1 + n = ECMDQ or VCMDQ n), its entry read, before any of its effects. Called right
     * after the "cmd" trace point, which does not say the queue. */
    void (*cmd_exec)(void *ctx, unsigned queue, uint64_t d0, uint64_t d1);
    /* Optional, asked before cmd_exec: may the command at the head of `queue` begin now?
     * true: not yet (a CMD_SYNC whose preceding commands have not all completed, IHI 0070
     * §4.7.3): the command stays at the head, CONS where it is, and the consumer goes on
     * with the other queues; the host calls smmu_process_commands again later, and the
     * entry is read again then. */
    bool (*cmd_defer)(void *ctx, unsigned queue, uint64_t d0, uint64_t d1);
    /* Optional: that command has executed without error and CONS has moved past it (a
     * CMD_SYNC's completion signal, MSI, interrupt or SEV, has been sent just before).
     * `dropped` is the number of TLB and walk-cache entries it invalidated (0 for a command
     * that is not a TLBI), so a host can charge for the entries a TLBI touched. */
    void (*cmd_done)(void *ctx, unsigned queue, uint64_t d0, uint64_t d1, uint32_t dropped);
};

/* ---- Lifecycle ----------------------------------------------------------------------------- */
struct smmu;

/* Validate `cfg`, allocate the model (all memory is allocated here, never on the translate or
 * command paths) and reset it. Returns 0, -EINVAL (bad config; *err_msg if non-NULL names the
 * field) or -ENOMEM. */
int smmu_create(struct smmu **out, const struct smmu_config *cfg, const struct smmu_host_ops *ops,
                void *ctx, const char **err_msg);
void smmu_destroy(struct smmu *s);
/* Hardware reset: registers to reset values, all caches invalidated, statistics kept. */
void smmu_reset(struct smmu *s);
const struct smmu_config *smmu_get_config(const struct smmu *s);

/* ---- Register access ------------------------------------------------------------------------ */
/* size is 4 or 8; `offset` must be aligned to `size`. Unknown or misaligned accesses read as
 * zero and ignore writes. A 64-bit access to a pair of 32-bit registers accesses both. */
uint64_t smmu_mmio_read(struct smmu *s, uint64_t offset, unsigned size);
void smmu_mmio_write(struct smmu *s, uint64_t offset, uint64_t value, unsigned size);

/* ---- Command queue consumer ------------------------------------------------------------------ */
/* Consume at most `max_cmds` commands from every enabled command queue (today: the one
 * SMMU_CMDQ). Stops early on an empty queue, a disabled queue or a command error (the error
 * stays active until software acknowledges it through GERRORN). Returns the number of
 * commands completed. Cheap (no lock taken) when every queue is empty.
 * With ECMDQs, the main queue and every enabled ECMDQ are served round-robin, one command at a
 * time, until `max_cmds` or every queue is empty, stopped or in error (an ECMDQ error stops only
 * that queue, until PROD.ERRACK == CONS.ERR). This is the single consumer of the serial mode,
 * and a convenient drain-everything call in parallel mode too. */
unsigned smmu_process_commands(struct smmu *s, unsigned max_cmds);

/* Parallel mode only (cfg.ecmdq_parallel): consume at most `max_cmds` commands from queue
 * `queue` alone (0 = SMMU_CMDQ, 1..ecmdq_count = ECMDQ 0..n-1), so a host — a simulator
 * running one consumer agent per queue, each charged its own cost — decides who calls what.
 * Returns the number completed, -EINVAL for an unknown queue, or -EOPNOTSUPP in serial mode
 * (the hardware has one consumer there: use smmu_process_commands). Lock-free when empty. */
int smmu_process_queue(struct smmu *s, unsigned queue, unsigned max_cmds);

/* The whole register window: SMMU_MMIO_SIZE plus the ECMDQ control pages. A board that wants
 * ECMDQs maps this much; without ECMDQs it equals SMMU_MMIO_SIZE. */
uint64_t smmu_mmio_size(const struct smmu *s);
/* Offset of ECMDQ `n`'s register group (its BASE) in the window, as software finds it through
 * IDR6 and CMDQ_CONTROL_PAGE_BASE; 0 when n >= cfg.ecmdq_count. */
uint64_t smmu_ecmdq_offset(const struct smmu *s, unsigned n);
/* Offset of the Tegra241 CMDQV window (tegra241_cmdqv.h) in the register window, 0 without a
 * CMDQV. It takes the place of the ECMDQ control pages (an SMMU has one or the other here). */
uint64_t smmu_cmdqv_offset(const struct smmu *s);
/* Offset of queue q's BASE register (0 SMMU_CMDQ_BASE, 1 + n that of ECMDQ or VCMDQ n, the
 * direct aperture), and the queue whose PROD register is at `off` (-1: none). Lock-free; for
 * hosts that watch PROD writes. */
uint64_t smmu_cmdq_base_reg(const struct smmu *s, unsigned q);
int smmu_cmdq_prod_reg_queue(struct smmu *s, uint64_t off);

/* ---- Translation ----------------------------------------------------------------------------- */
struct smmu_txn_req {
    uint32_t sid;
    uint32_t ssid;
    bool ssv;      /* SubstreamID valid */
    uint64_t iova; /* input address as presented (InputAddr of any event) */
    bool write;    /* else read */
    bool exec;     /* instruction fetch (ignored for writes: InD == 0 when RnW == 0) */
    bool priv;     /* privileged */
    /* ATS Translation Request (PCIe ATS, IHI 0070 §3.9.1): the endpoint asks for the
     * translation of iova (read, plus write when `write`, i.e. NW == 0) to fill its ATC. No
     * data is accessed. Allowed only with SMMUEN == 1 and an STE whose effective EATS is 0b01
     * (full ATS; 0b10, split-stage, makes the STE ILLEGAL without stage 2); else the request is
     * refused with a UR completion and F_BAD_ATS_TREQ is recorded (not without IDR0.ATS, which
     * has no ATS interface to record it against, nor for an STE that terminates silently,
     * Config = 0b000). Configuration errors give
     * a CA completion and record nothing; translation faults give a successful completion
     * granting no access (R = W = 0) and record nothing (§3.9.1: "the SMMU does not record
     * fault events for ATS translation failures"). CR0.ATSCHK governs ATS *Translated*
     * traffic, which does not pass through smmu_translate. See rsp.ats_cpl. */
    bool ats;
};

enum smmu_txn_status {
    SMMU_TXN_OK = 0,    /* pa valid */
    SMMU_TXN_ABORT = 1, /* transaction terminated with an abort */
    SMMU_TXN_RAZWI = 2, /* terminated silently: reads return zero, writes ignored (CD.A == 0) */
};

#define SMMU_PERM_R 1u
#define SMMU_PERM_W 2u
#define SMMU_PERM_X 4u

struct smmu_txn_rsp {
    enum smmu_txn_status status;
    uint64_t pa;
    uint8_t page_shift; /* log2 of the translation's size (12 for a 4K page, 21 for 2M, ...) */
    bool bypass;        /* no translation was applied (SMMUEN == 0, STE bypass, S1DSS bypass) */
    uint8_t perm;       /* SMMU_PERM_* granted at the request's (post-override) privilege */
    uint8_t mem_attr;   /* MAIR attribute byte selected by the descriptor's AttrIndx */
    uint8_t sh;         /* shareability from the descriptor SH[1:0] */
    uint8_t event;      /* enum smmu_event_type of the fault, SMMU_EVT_NONE if none */
    bool event_recorded;  /* the record reached the event queue */
    uint64_t evt[4];    /* the event record as built (even when suppressed by CD.R) */
    uint8_t ats_cpl;    /* req.ats only: enum smmu_ats_cpl */
};

/* The completion of an ATS Translation Request (PCIe Translation Completion status). With
 * SUCCESS, status is SMMU_TXN_OK and pa, page_shift (the translation's size) and perm (the
 * access granted: R/W, possibly less than requested, possibly none after a fault) are valid.
 * UR and CA come with status SMMU_TXN_ABORT. */
enum smmu_ats_cpl {
    SMMU_ATS_CPL_SUCCESS = 0,
    SMMU_ATS_CPL_UR = 1,        /* Unsupported Request: ATS not allowed (F_BAD_ATS_TREQ) */
    SMMU_ATS_CPL_CA = 2,        /* Completer Abort: configuration error or walk abort */
};

/* Translate one transaction. Never fails for any input: every outcome is architected. */
void smmu_translate(struct smmu *s, const struct smmu_txn_req *req, struct smmu_txn_rsp *rsp);

/* ---- Statistics ------------------------------------------------------------------------------- */
struct smmu_cache_stats {
    uint32_t capacity; /* effective entries (sets * ways) */
    uint32_t sets, ways;
    uint64_t lookups, hits, misses, fills, evictions, invalidations;
};

struct smmu_queue_stats {
    uint64_t commands;          /* completed */
    uint64_t by_opcode[256];    /* completed, per opcode */
    uint64_t cerror_ill, cerror_abt;
    uint64_t syncs_msi, syncs_irq, syncs_sev;
};

struct smmu_stats {
    uint64_t translations, tlb_hit_translations, bypassed, faults;
    uint64_t events_written;    /* records written to the event queue */
    uint64_t events_suppressed; /* by CD.R == 0 */
    uint64_t events_discarded;  /* queue disabled, or EVENTQ_ABT_ERR active */
    uint64_t events_lost;       /* queue full (each one counted) */
    uint64_t event_overflows;   /* times PROD.OVFLG was toggled */
    uint64_t gerrors;           /* GERROR bits activated */
    uint64_t msi_writes, irq_pulses;
    uint64_t ats_requests;      /* ATS Translation Requests received */
    uint64_t ats_refused;       /* of which answered UR or CA */
    uint64_t atc_invs;          /* CMD_ATC_INV executed with SMMUEN = 1 (forwarded to host ops
                                 * atc_inv when set) */
};

void smmu_get_stats(struct smmu *s, struct smmu_stats *out);
int smmu_get_cache_stats(struct smmu *s, enum smmu_cache_id id, struct smmu_cache_stats *out);
/* Command queues: index 0 is SMMU_CMDQ; ECMDQ n (or VCMDQ n) is index 1 + n (count = 1 +
 * ecmdq_count + cmdqv_vcmdqs). */
unsigned smmu_cmdq_count(const struct smmu *s);
int smmu_get_cmdq_stats(struct smmu *s, unsigned queue, struct smmu_queue_stats *out);
void smmu_clear_stats(struct smmu *s);

/* ---- Threading contract -----------------------------------------------------------------------
 * - Any thread may call smmu_mmio_write(CMDQ_PROD) and smmu_mmio_read(CMDQ_CONS / CMDQ_PROD /
 *   EVENTQ_PROD / EVENTQ_CONS) and smmu_mmio_write(EVENTQ_CONS): these are C11 atomics
 *   (release on write, acquire on read) and take no lock, as a driver polls them. The same holds
 *   for 32-bit ECMDQ_PROD writes that keep EN unchanged and ECMDQ_PROD/CONS reads; a write that
 *   flips EN takes the lock (it updates CONS.ENACK).
 * - All other entry points (other registers, smmu_translate, smmu_process_commands, stats)
 *   are serialized by one internal spinlock when cfg.thread_safe is set. process_commands
 *   holds it for at most 32 commands at a time so translations interleave.
 * - Host callbacks run with that lock held: they must not call back into the model.
 * - Memory written by the driver (queues, tables) must be visible before its PROD write
 *   (release) — the consumer reads PROD with acquire semantics, as hardware would.
 * - smmu_create / smmu_reset / smmu_destroy must not race with anything. */

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_SMMUV3_H */
