/* arm-smmu-v3.h — private state of the SMMUv3 driver: the device, its queues, masters, domains,
 * field encodings of commands, STEs and CDs, and the functions the driver's files share.
 * Not public API (see include/iommulab/smmuv3_drv.h) and not the model's view of the same bits.
 * Field positions: Arm IHI 0070 and Linux arm-smmu-v3.h (reference/linux-dma-path.md §5).
 */
#ifndef ILAB_DRIVERS_ARM_SMMU_V3_H
#define ILAB_DRIVERS_ARM_SMMU_V3_H

#include <stdbool.h>
#include <stdint.h>

#include "iommulab/io_pgtable.h"
#include "iommulab/iommu.h"
#include "iommulab/mem.h"
#include "iommulab/plat.h"
#include "iommulab/smmuv3_drv.h"

#define ARM_BIT(n) (1ull << (n))
#define ARM_GENMASK(h, l) ((~0ull >> (63 - (h))) & (~0ull << (l)))
static inline uint64_t arm_field_get(uint64_t mask, uint64_t v)
{
	return (v & mask) >> __builtin_ctzll(mask);
}
static inline uint64_t arm_field_prep(uint64_t mask, uint64_t v)
{
	return (v << __builtin_ctzll(mask)) & mask;
}

/* ---- registers (IHI 0070 §6.3) ------------------------------------------------------------ */
#define ARM_SMMU_IDR0 0x0
#define IDR0_ST_LVL ARM_GENMASK(28, 27)
#define IDR0_ST_LVL_2LVL 1
#define IDR0_STALL_MODEL ARM_GENMASK(25, 24)
#define IDR0_TTENDIAN ARM_GENMASK(22, 21)
#define IDR0_CD2L ARM_BIT(19)
#define IDR0_VMID16 ARM_BIT(18)
#define IDR0_SEV ARM_BIT(14)
#define IDR0_MSI ARM_BIT(13)
#define IDR0_ASID16 ARM_BIT(12)
#define IDR0_ATS ARM_BIT(10)
#define IDR0_HYP ARM_BIT(9)
#define IDR0_COHACC ARM_BIT(4)
#define IDR0_TTF ARM_GENMASK(3, 2)
#define IDR0_TTF_AARCH64 2
#define IDR0_TTF_AARCH32_64 3
#define IDR0_S1P ARM_BIT(1)
#define ARM_SMMU_IDR1 0x4
#define IDR1_TABLES_PRESET ARM_BIT(30)
#define IDR1_QUEUES_PRESET ARM_BIT(29)
#define IDR1_CMDQS ARM_GENMASK(25, 21)
#define IDR1_EVTQS ARM_GENMASK(20, 16)
#define IDR1_SSIDSIZE ARM_GENMASK(10, 6)
#define IDR1_SIDSIZE ARM_GENMASK(5, 0)
#define ARM_SMMU_IDR3 0xc
#define IDR3_RIL ARM_BIT(10)
#define ARM_SMMU_IDR5 0x14
#define IDR5_GRAN64K ARM_BIT(6)
#define IDR5_GRAN16K ARM_BIT(5)
#define IDR5_GRAN4K ARM_BIT(4)
#define IDR5_OAS ARM_GENMASK(2, 0)
#define ARM_SMMU_CR0 0x20
#define CR0_ATSCHK ARM_BIT(4)
#define CR0_CMDQEN ARM_BIT(3)
#define CR0_EVTQEN ARM_BIT(2)
#define CR0_SMMUEN ARM_BIT(0)
#define ARM_SMMU_CR0ACK 0x24
#define ARM_SMMU_CR1 0x28
#define CR1_TABLE_SH ARM_GENMASK(11, 10)
#define CR1_TABLE_OC ARM_GENMASK(9, 8)
#define CR1_TABLE_IC ARM_GENMASK(7, 6)
#define CR1_QUEUE_SH ARM_GENMASK(5, 4)
#define CR1_QUEUE_OC ARM_GENMASK(3, 2)
#define CR1_QUEUE_IC ARM_GENMASK(1, 0)
#define CR1_CACHE_WB 1
#define ARM_SMMU_CR2 0x2c
#define CR2_PTM ARM_BIT(2)
#define CR2_RECINVSID ARM_BIT(1)
#define ARM_SMMU_GBPA 0x44
#define ARM_SMMU_IRQ_CTRL 0x50
#define ARM_SMMU_GERROR 0x60
#define ARM_SMMU_GERRORN 0x64
#define GERROR_CMDQ_ERR ARM_BIT(0)
/* The error bits a GERROR handler looks at: CMDQ_ERR, EVENTQ_ABT_ERR, PRIQ_ABT_ERR, the MSI
 * abort bits and SFM_ERR (Linux GERROR_ERR_MASK), and CMDQP_ERR of SMMUv3.3 (§6.3.17). */
#define GERROR_ERR_MASK 0x3fdu
#define ARM_SMMU_STRTAB_BASE 0x80
#define STRTAB_BASE_RA ARM_BIT(62)
#define STRTAB_BASE_ADDR_MASK ARM_GENMASK(51, 6)
#define ARM_SMMU_STRTAB_BASE_CFG 0x88
#define STRTAB_BASE_CFG_FMT ARM_GENMASK(17, 16)
#define STRTAB_BASE_CFG_FMT_LINEAR 0
#define STRTAB_BASE_CFG_FMT_2LVL 1
#define STRTAB_BASE_CFG_SPLIT ARM_GENMASK(10, 6)
#define STRTAB_BASE_CFG_LOG2SIZE ARM_GENMASK(5, 0)
#define ARM_SMMU_CMDQ_BASE 0x90
#define ARM_SMMU_CMDQ_PROD 0x98
#define ARM_SMMU_CMDQ_CONS 0x9c
#define ARM_SMMU_EVTQ_BASE 0xa0
#define ARM_SMMU_EVTQ_PROD 0x100a8
#define ARM_SMMU_EVTQ_CONS 0x100ac
#define Q_BASE_RWA ARM_BIT(62)
#define Q_BASE_ADDR_MASK ARM_GENMASK(51, 5)
#define Q_BASE_LOG2SIZE ARM_GENMASK(4, 0)
#define CMDQ_CONS_ERR ARM_GENMASK(30, 24)

/* SMMUv3.3 Enhanced Command queues (IHI 0070 §3.5.6, §6.3.49-51, §6.3.107-109; the field
 * positions the Zhen Lei series uses, reference/linux-dma-path.md §6). */
#define IDR1_ECMDQ ARM_BIT(31)
#define ARM_SMMU_IDR6 0x190
#define IDR6_LOG2NUMP ARM_GENMASK(27, 24)
#define IDR6_LOG2NUMQ ARM_GENMASK(19, 16)
#define ARM_SMMU_ECMDQ_CP_BASE 0x4000 /* + 32 n: CMDQ_CONTROL_PAGE_BASEn */
#define ECMDQ_CP_STRIDE 32
#define ECMDQ_CP_ADDR ARM_GENMASK(51, 16)
#define ECMDQ_CP_CMDQGS ARM_GENMASK(2, 1) /* 0b01: 64 KiB control pages */
#define ECMDQ_CP_PRESET ARM_BIT(0)        /* 1: register mode */
#define ECMDQ_CP_SIZE 0x10000
#define ARM_SMMU_ECMDQ_BASE 0x0 /* inside one queue's register group */
#define ARM_SMMU_ECMDQ_PROD 0x8
#define ARM_SMMU_ECMDQ_CONS 0xc
#define ECMDQ_PROD_EN ARM_BIT(31)
#define ECMDQ_PROD_ERRACK ARM_BIT(23)
#define ECMDQ_CONS_ENACK ARM_BIT(31)
#define ECMDQ_CONS_ERR_REASON ARM_GENMASK(26, 24)
#define ECMDQ_CONS_ERR ARM_BIT(23)
/* CMDQ_CONS.ERR / ECMDQ_CONS.ERR_REASON codes (§4.1.3, §7.1). */
#define CMDQ_ERR_CERROR_NONE 0
#define CMDQ_ERR_CERROR_ILL 1
#define CMDQ_ERR_CERROR_ABT 2
#define CMDQ_ERR_CERROR_ATC_INV_SYNC 3
/* The series' queue size: 256 entries, times the CPUs sharing the queue. */
#define ECMDQ_MAX_SZ_SHIFT 8

/* Queue pointers: index | wrap bit at max_n_shift | bit 31 overflow (cmdq: owned flag). */
#define Q_OVERFLOW_FLAG (1u << 31)
#define CMDQ_PROD_OWNED_FLAG Q_OVERFLOW_FLAG
#define CMDQ_ENT_DWORDS 2
#define EVTQ_ENT_DWORDS 4
/* Linux Q_MAX_SZ_SHIFT = PAGE_SHIFT + CONFIG_CMA_ALIGNMENT (12 + 8): 1 MiB per queue. */
#define Q_MAX_SZ_SHIFT 20
#define CMDQ_MAX_SZ_SHIFT (Q_MAX_SZ_SHIFT - 4)
#define EVTQ_MAX_SZ_SHIFT (Q_MAX_SZ_SHIFT - 5)
#define CMDQ_BATCH_ENTRIES 64
#define ARM_SMMU_POLL_TIMEOUT_NS 1000000000ull

/* ---- commands (§4, Linux CMDQ_*) ----------------------------------------------------------- */
#define CMDQ_0_OP ARM_GENMASK(7, 0)
#define CMDQ_0_SSV ARM_BIT(11)
#define CMDQ_PREFETCH_0_SID ARM_GENMASK(63, 32)
#define CMDQ_CFGI_0_SSID ARM_GENMASK(31, 12)
#define CMDQ_CFGI_0_SID ARM_GENMASK(63, 32)
#define CMDQ_CFGI_1_LEAF ARM_BIT(0)
#define CMDQ_CFGI_1_RANGE ARM_GENMASK(4, 0)
#define CMDQ_TLBI_0_NUM ARM_GENMASK(16, 12)
#define CMDQ_TLBI_RANGE_NUM_MAX 31
#define CMDQ_TLBI_0_SCALE ARM_GENMASK(24, 20)
#define CMDQ_TLBI_0_VMID ARM_GENMASK(47, 32)
#define CMDQ_TLBI_0_ASID ARM_GENMASK(63, 48)
#define CMDQ_TLBI_1_LEAF ARM_BIT(0)
#define CMDQ_TLBI_1_TTL ARM_GENMASK(9, 8)
#define CMDQ_TLBI_1_TG ARM_GENMASK(11, 10)
#define CMDQ_TLBI_1_VA_MASK ARM_GENMASK(63, 12)
#define CMDQ_SYNC_0_CS ARM_GENMASK(13, 12)
#define CMDQ_SYNC_0_CS_NONE 0
#define CMDQ_SYNC_0_CS_IRQ 1
#define CMDQ_SYNC_0_CS_SEV 2
#define CMDQ_SYNC_0_MSH ARM_GENMASK(23, 22)
#define CMDQ_SYNC_0_MSIATTR ARM_GENMASK(27, 24)
#define CMDQ_SYNC_0_MSIDATA ARM_GENMASK(63, 32)
#define CMDQ_SYNC_1_MSIADDR_MASK ARM_GENMASK(51, 2)
#define ARM_SMMU_SH_ISH 3
#define ARM_SMMU_MEMATTR_OIWB 0xf

enum arm_smmu_opcode {
	CMDQ_OP_PREFETCH_CFG = 0x1,
	CMDQ_OP_CFGI_STE = 0x3,
	CMDQ_OP_CFGI_ALL = 0x4,
	CMDQ_OP_CFGI_CD = 0x5,
	CMDQ_OP_CFGI_CD_ALL = 0x6,
	CMDQ_OP_TLBI_NH_ASID = 0x11,
	CMDQ_OP_TLBI_NH_VA = 0x12,
	CMDQ_OP_TLBI_EL2_ALL = 0x20,
	CMDQ_OP_TLBI_NSNH_ALL = 0x30,
	CMDQ_OP_CMD_SYNC = 0x46,
};

/* A command before encoding (Linux struct arm_smmu_cmdq_ent, the cases this driver uses). */
struct arm_smmu_cmdq_ent {
	uint8_t opcode;
	union {
		struct { uint32_t sid; } prefetch;
		struct { uint32_t sid, ssid; bool leaf; } cfgi;
		struct { uint16_t asid, vmid; uint8_t num, scale, ttl, tg; bool leaf;
			 uint64_t addr; } tlbi;
		struct { uint64_t msiaddr; bool sev; } sync;
	};
};

/* ---- stream table entries and context descriptors (§5.2, §5.4) -------------------------- */
#define STRTAB_STE_DWORDS 8
#define STRTAB_STE_SIZE 64
#define STRTAB_SPLIT 8
#define STRTAB_MAX_L1_ENTRIES (1u << 17)
#define STRTAB_L1_DESC_SPAN ARM_GENMASK(4, 0)
#define STRTAB_L1_DESC_L2PTR_MASK ARM_GENMASK(51, 6)
#define STRTAB_STE_0_V ARM_BIT(0)
#define STRTAB_STE_0_CFG ARM_GENMASK(3, 1)
#define STRTAB_STE_0_CFG_ABORT 0
#define STRTAB_STE_0_CFG_BYPASS 4
#define STRTAB_STE_0_CFG_S1_TRANS 5
#define STRTAB_STE_0_CFG_S2_TRANS 6
#define STRTAB_STE_0_S1FMT ARM_GENMASK(5, 4)
#define STRTAB_STE_0_S1CTXPTR_MASK ARM_GENMASK(51, 6)
#define STRTAB_STE_0_S1CDMAX ARM_GENMASK(63, 59)
#define STRTAB_STE_1_S1DSS ARM_GENMASK(1, 0)
#define STRTAB_STE_1_S1DSS_SSID0 2
#define STRTAB_STE_1_S1DSS_BYPASS 1
#define STRTAB_STE_1_S1CIR ARM_GENMASK(3, 2)
#define STRTAB_STE_1_S1COR ARM_GENMASK(5, 4)
#define STRTAB_STE_1_S1CSH ARM_GENMASK(7, 6)
#define STRTAB_STE_1_S1C_CACHE_WBRA 1
#define STRTAB_STE_1_S1STALLD ARM_BIT(27)
#define STRTAB_STE_1_EATS ARM_GENMASK(29, 28)
#define STRTAB_STE_1_STRW ARM_GENMASK(31, 30)
#define STRTAB_STE_1_SHCFG ARM_GENMASK(45, 44)
#define STRTAB_STE_1_SHCFG_INCOMING 1
#define STRTAB_STE_2_S2VMID ARM_GENMASK(15, 0)
#define STRTAB_STE_2_VTCR ARM_GENMASK(50, 32)
#define STRTAB_STE_2_S2AA64 ARM_BIT(51)
#define STRTAB_STE_2_S2ENDI ARM_BIT(52)
#define STRTAB_STE_2_S2PTW ARM_BIT(54)
#define STRTAB_STE_2_S2S ARM_BIT(57)
#define STRTAB_STE_2_S2R ARM_BIT(58)
#define STRTAB_STE_3_S2TTB_MASK ARM_GENMASK(51, 4)

#define CTXDESC_CD_DWORDS 8
#define CTXDESC_CD_0_TCR_T0SZ ARM_GENMASK(5, 0)
#define CTXDESC_CD_0_TCR_TG0 ARM_GENMASK(7, 6)
#define CTXDESC_CD_0_TCR_IRGN0 ARM_GENMASK(9, 8)
#define CTXDESC_CD_0_TCR_ORGN0 ARM_GENMASK(11, 10)
#define CTXDESC_CD_0_TCR_SH0 ARM_GENMASK(13, 12)
#define CTXDESC_CD_0_TCR_EPD0 ARM_BIT(14)
#define CTXDESC_CD_0_TCR_EPD1 ARM_BIT(30)
#define CTXDESC_CD_0_V ARM_BIT(31)
#define CTXDESC_CD_0_TCR_IPS ARM_GENMASK(34, 32)
#define CTXDESC_CD_0_AA64 ARM_BIT(41)
#define CTXDESC_CD_0_R ARM_BIT(45)
#define CTXDESC_CD_0_A ARM_BIT(46)
#define CTXDESC_CD_0_ASET ARM_BIT(47)
#define CTXDESC_CD_0_ASID ARM_GENMASK(63, 48)
#define CTXDESC_CD_1_TTB0_MASK ARM_GENMASK(51, 4)

/* ---- the entry writer (Linux >= 6.9 arm_smmu_write_entry) -------------------------------- */
#define ARM_SMMU_ENTRY_QWORDS 8
struct arm_smmu_entry_writer;
struct arm_smmu_entry_writer_ops {
	/* Which bits of each qword the SMMU reads for this entry's configuration. */
	void (*get_used)(const uint64_t *entry, uint64_t *used);
	/* Make the SMMU forget what it cached of the entry, and wait (CFGI + CMD_SYNC). */
	void (*sync)(struct arm_smmu_entry_writer *w);
};
struct arm_smmu_entry_writer {
	const struct arm_smmu_entry_writer_ops *ops;
	struct arm_smmu_master *master;
};
/* Update `entry` (in memory the SMMU reads) to `target` so that at every sync point the
 * SMMU sees either the old or the new configuration in all the bits it uses (hitless), or,
 * when that is impossible, an invalid entry (break-before-make). */
void arm_smmu_write_entry(struct arm_smmu_entry_writer *w, uint64_t *entry, const uint64_t *target);
void arm_smmu_get_ste_used(const uint64_t *ent, uint64_t *used);
void arm_smmu_get_cd_used(const uint64_t *ent, uint64_t *used);

/* ---- queues -------------------------------------------------------------------------------- */
struct arm_smmu_ll_queue {
	uint32_t prod, cons;
	unsigned max_n_shift;
};
static inline uint64_t llq_val(const struct arm_smmu_ll_queue *q)
{
	return (uint64_t)q->prod | ((uint64_t)q->cons << 32);
}
static inline void llq_set(struct arm_smmu_ll_queue *q, uint64_t v)
{
	q->prod = (uint32_t)v;
	q->cons = (uint32_t)(v >> 32);
}

/* A queue in coherent memory and its registers. */
struct arm_smmu_queue {
	_Alignas(PLAT_CACHELINE) plat_word64 llq; /* shared prod (low) | cons (high) */
	_Alignas(PLAT_CACHELINE) unsigned max_n_shift;
	unsigned ent_dwords;
	ilab_pa_t base_pa;
	uint64_t *base;          /* host view of the entries */
	size_t bytes;
	uint64_t q_base;         /* *_BASE register value */
	uint64_t prod_reg, cons_reg;
	int home_node;
};

/* Per-CPU counters (one writer each: plain load+store of tracked words). */
struct arm_smmu_pcpu_stats {
	plat_word64 cmds, issues, batches, syncs, sync_wait_ns, cmpxchg_retries, queue_full_waits,
		sync_timeouts, space_timeouts, cmds_refused;
	plat_word64 by_opcode[256];
};

/* A command queue with Linux's multi-producer state. An object of its own so that per-CPU
 * ECMDQs (§6) can later be more instances of it. */
struct arm_smmu_cmdq {
	struct arm_smmu_queue q;
	plat_word64 *valid_map;  /* one bit per entry; polarity flips each lap */
	unsigned valid_words;
	_Alignas(PLAT_CACHELINE) plat_word32 owner_prod;
	/* Written by the owner of each batch only (owners are serialized by owner_prod, so plain
	 * load+store suffices), on owner_prod's line, which the owner holds anyway. */
	plat_word64 st_entries;  /* entries made visible to the SMMU (CMD_SYNCs included) */
	plat_word64 st_prod_writes; /* PROD register writes (batches) */
	_Alignas(PLAT_CACHELINE) plat_word32 lock; /* int: >0 shared holders, INT_MIN exclusive */
	/* Tegra241 VCMDQ only (tegra241-cmdqv.c): CMD_SYNC with CS = SIG_NONE and CONS polling
	 * (busy_poll), the commands it takes (supports; NULL: all), errors in its own GERROR. */
	bool vcmdq, busy_poll;
	bool (*supports)(unsigned opcode);
	uint64_t vcmdq_regs;     /* its page0 (CONS, PROD, CONFIG, STATUS, GERROR, GERRORN) */
	/* ECMDQ only (arm-smmu-v3-ecmdq.c); all zero for SMMU_CMDQ. */
	_Alignas(PLAT_CACHELINE) bool ecmdq;
	bool exclusive;          /* one CPU's alone: the uncontended insertion path */
	bool fair_lock;          /* opts.cmdq_fair_lock: the lock as Linux since 2026-01 */
	unsigned index;          /* ECMDQ n */
	unsigned nr_cpus;        /* CPUs assigned to it */
	uint64_t regs;           /* offset of its register group (BASE) in the MMIO window */
	plat_word32 errack;      /* PROD.ERRACK to write: ECMDQ_PROD_ERRACK or 0 */
	plat_spinlock prod_lock; /* shared ECMDQ: PROD writes vs. error recovery (ERRACK) */
	/* errors handled on this queue (an ECMDQ's skip, or the GERROR handler for SMMU_CMDQ) */
	plat_word64 st_errors, st_err_ill, st_err_abt;
	/* ILAB_SMMU_CMDQ_SPINLOCK (arm-smmu-v3-cmdq-legacy.c): the lock and what Linux 4.x kept
	 * next to it on one cache line (software prod|cons, sync_nr, the last opcode). */
	_Alignas(PLAT_CACHELINE) plat_word32 legacy_next; /* ticket lock: next ticket, ... */
	plat_word32 legacy_owner; /* ... and the ticket being served */
	plat_word64 legacy_pc;   /* software prod (low) | cons (high), under the lock */
	plat_word32 legacy_sync_nr, legacy_prev_op;
	uint32_t *legacy_sync_count; /* MSI target (host view); allocated on first use */
	ilab_pa_t legacy_sync_count_pa;
	/* the lock's counters (plat_stat: exact in simulation, approximate natively), in this
	 * line's spare bytes so that the struct's layout does not move */
	plat_word64 st_lock_exclusive, st_lock_shared_waits;
	_Alignas(PLAT_CACHELINE) int dummy;
	plat_word64 st_lock_shared_wait_ns, st_lock_shared_wait_max_ns; /* dummy's spare bytes */
	/* 4.15-4.19 (opts.cmdq_sync_unordered): the device's atomic sync_nr, off the lock's line */
	plat_word32 legacy_sync_nr_atomic;
};

struct arm_smmu_cmdq_batch {
	uint64_t cmds[CMDQ_BATCH_ENTRIES * CMDQ_ENT_DWORDS];
	unsigned num;
	struct arm_smmu_cmdq *cmdq;
};

/* ---- device, masters, domains ----------------------------------------------------------- */
struct arm_smmu_strtab_l1 {
	ilab_pa_t l2_pa;         /* 0 until allocated */
	uint64_t *l2;
};

struct arm_smmu_device;
/* An implementation's hooks (Linux struct arm_smmu_impl_ops): NULL for a plain SMMU. */
struct arm_smmu_impl_ops {
	/* The calling CPU's queue for a command of this opcode, or NULL: the main queue. */
	struct arm_smmu_cmdq *(*get_secondary_cmdq)(struct arm_smmu_device *smmu, unsigned opcode);
	void (*device_remove)(struct arm_smmu_device *smmu);
};

struct arm_smmu_device {
	struct ilab_iommu iommu;
	struct plat_mmio *mmio;
	struct ilab_mem *mem;
	int node;
	struct ilab_smmu_drv_opts opts;

	/* features from the ID registers */
	unsigned sid_bits, ssid_bits, asid_bits, oas, ias;
	uint64_t pgsize_bitmap;
	bool ril, msi, sev, coherent, two_lvl_strtab, hyp, msipoll;

	struct arm_smmu_cmdq cmdq;
	struct arm_smmu_queue evtq;
	/* ECMDQs in use (arm-smmu-v3-ecmdq.c): nr_ecmdq queues, and each modelled CPU's queue;
	 * both NULL/0 when commands go to the main queue only. Read-only after probe. */
	struct arm_smmu_cmdq *ecmdqs;
	unsigned nr_ecmdq;
	struct arm_smmu_cmdq **cpu_cmdq;
	unsigned nr_cpu_cmdq;    /* entries of cpu_cmdq: plat_cpu_count() at probe */
	unsigned ecmdq_hw;       /* ECMDQs the SMMU has (IDR6), used or not */
	const char *ecmdq_why;   /* why ECMDQs are not used (NULL when they are) */
	/* Tegra241 CMDQV (tegra241-cmdqv.c): its hooks and state, NULL when not in use. */
	const struct arm_smmu_impl_ops *impl_ops;
	struct tegra241_cmdqv *cmdqv;
	const char *cmdqv_why;   /* why the CMDQV is not used (NULL when it is) */
	/* The GERROR handler runs on whichever waiter notices an error first; one at a time.
	 * Unlocked as allocated (zeroed) and named on first use, so that a run without errors
	 * has the statistics it had before the handler existed. */
	plat_spinlock gerror_lock;

	/* stream table */
	ilab_pa_t strtab_pa;
	uint64_t *strtab;        /* linear: STEs; 2-level: L1 descriptors */
	size_t strtab_bytes;
	unsigned num_l1_ents;
	struct arm_smmu_strtab_l1 *l1;
	uint64_t strtab_base, strtab_base_cfg;
	plat_spinlock strtab_lock; /* lazy L2 allocation */

	/* ASIDs: bitmap, under asid_lock */
	plat_spinlock asid_lock;
	uint64_t *asid_map;

	void *stats;             /* plat_percpu of struct arm_smmu_pcpu_stats */
};

struct arm_smmu_domain;
struct arm_smmu_master {
	struct arm_smmu_device *smmu;
	struct ilab_dev *dev;
	uint32_t sid;
	uint64_t *ste;           /* host view of the STE in the stream table */
	ilab_pa_t cd_pa;         /* the CD table: one CD (S1CDMAX 0) */
	uint64_t *cd;
	struct arm_smmu_domain *domain;
};

/* One SMMU instance a paging domain is attached to: what an invalidation of the domain must
 * reach there (Linux >= 6.x tracks per-instance invalidation targets the same way). ASIDs are
 * per instance: each SMMU has its own ASID space, so the domain gets an ASID on every SMMU it
 * is attached to, and every CD that points at the domain's one page table carries the ASID of
 * its own SMMU. `smmu` is published last (release) and cleared first, so a reader that sees
 * it non-zero sees a valid asid; a racing reader may at worst invalidate a stale ASID, which
 * is harmless (docs/smmuv3-driver.md "Domains on several SMMUs"). */
#define ARM_SMMU_DOMAIN_MAX_INSTS 16
struct arm_smmu_domain_inst {
	plat_word64 smmu;        /* struct arm_smmu_device *, 0: free slot */
	plat_word32 asid;
	unsigned nr_masters;     /* under the domain's inst_lock */
};

struct arm_smmu_domain {
	struct ilab_iommu_domain domain;
	struct arm_smmu_device *smmu; /* the allocating instance (slot 0, never released) */
	struct ilab_io_pgtable *pgtbl;
	uint16_t asid;           /* the allocating instance's ASID (= insts[0].asid) */
	plat_word32 nr_masters;
	plat_spinlock inst_lock; /* attach/detach: slot claim and release */
	plat_word32 nr_insts;    /* slots [0, nr_insts) may be in use (high-water mark) */
	struct arm_smmu_domain_inst insts[ARM_SMMU_DOMAIN_MAX_INSTS];
};

/* Call fn for every SMMU the domain is attached to (its allocating SMMU always). */
typedef void (*arm_smmu_inst_fn)(struct arm_smmu_device *smmu, uint16_t asid, void *arg);
void arm_smmu_domain_for_each_inst(struct arm_smmu_domain *d, arm_smmu_inst_fn fn, void *arg);

static inline struct arm_smmu_device *to_smmu(struct ilab_iommu *iommu)
{
	return iommu ? (struct arm_smmu_device *)iommu->priv : NULL;
}
static inline struct arm_smmu_domain *to_smmu_domain(const struct ilab_iommu_domain *d)
{
	return d ? (struct arm_smmu_domain *)d->priv : NULL;
}

/* ---- shared functions ---------------------------------------------------------------------- */
/* arm-smmu-v3-cmdq.c */
int arm_smmu_queue_alloc(struct arm_smmu_device *smmu, struct arm_smmu_queue *q, unsigned log2,
			 unsigned ent_dwords, uint64_t prod_reg, uint64_t cons_reg);
void arm_smmu_queue_free(struct arm_smmu_device *smmu, struct arm_smmu_queue *q);
int arm_smmu_cmdq_init(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq);
void arm_smmu_cmdq_free(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq);
int arm_smmu_cmdq_build_cmd(uint64_t cmd[2], const struct arm_smmu_cmdq_ent *ent);
/* arm-smmu-v3-cmdq-legacy.c: the Linux <= 5.3 producer (opts.cmdq_mode SPINLOCK). */
int arm_smmu_cmdq_issue_cmdlist_legacy(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
				       const uint64_t *cmds, unsigned n, bool sync);
void arm_smmu_cmdq_legacy_free(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq);
int arm_smmu_cmdq_issue_cmdlist(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq,
				const uint64_t *cmds, unsigned n, bool sync);
int arm_smmu_cmdq_issue_cmd(struct arm_smmu_device *smmu, const struct arm_smmu_cmdq_ent *ent,
			    bool sync);
void arm_smmu_cmdq_batch_init(struct arm_smmu_device *smmu, struct arm_smmu_cmdq_batch *b);
void arm_smmu_cmdq_batch_add(struct arm_smmu_device *smmu, struct arm_smmu_cmdq_batch *b,
			     const struct arm_smmu_cmdq_ent *ent);
int arm_smmu_cmdq_batch_submit(struct arm_smmu_device *smmu, struct arm_smmu_cmdq_batch *b);
struct arm_smmu_pcpu_stats *arm_smmu_this_stats(struct arm_smmu_device *smmu);
static inline void arm_smmu_stat_add(plat_word64 *w, uint64_t v)
{
	plat_stat_add64(w, v);
}

/* The GERROR handler (Linux arm_smmu_gerror_handler): if an error is active, report it, skip a
 * command the main queue stopped on (arm_smmu_cmdq_skip_err) and acknowledge everything in
 * GERRORN. This driver takes no interrupts, so CMD_SYNC waiters and producers waiting for space
 * call it (through arm_smmu_cmdq_recover) every CMDQ_ERR_CHECK_NS. True if a command was
 * skipped (the queue moves on: a waiter may restart its timeout); a retried fetch abort or
 * ATC invalidation timeout is acknowledged but returns false, so it still ends in -ETIMEDOUT. */
bool arm_smmu_gerror_handler(struct arm_smmu_device *smmu);
/* What a waiter on cmdq calls when it has waited CMDQ_ERR_CHECK_NS: the ECMDQ's own skip, or
 * the GERROR handler for the main queue. True if a command was skipped (the queue moves). */
bool arm_smmu_cmdq_recover(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq);
/* How long a waiter waits before it looks for a command error: an error stops the queue and
 * raises no interrupt this driver takes. Rare by design: a few MMIO reads per 200 µs of
 * waiting, which a CMD_SYNC that completes normally never reaches. */
#define CMDQ_ERR_CHECK_NS 200000ull

/* arm-smmu-v3-ecmdq.c */
/* The machine as the CPU → ECMDQ layout sees it: plat's topology at probe, a synthetic one in
 * tests. A node may list CPUs beyond `cpus`, or a CPU another node lists too, or the nodes
 * may together hold fewer CPUs than `cpus`: the layout copes with all three. */
struct arm_smmu_ecmdq_topo {
	unsigned cpus, nodes;
	unsigned (*node_cpu_count)(unsigned node);
	int (*node_cpu)(unsigned node, unsigned i);
};
/* Fill map[0 .. t->cpus) with queue indexes and return the number of queues used, n ≤ nq:
 * every map[c] < n (0 only when t->cpus or nq is 0). Docs: smmuv3-driver.md "CPU → queue". */
unsigned arm_smmu_ecmdq_layout(const struct arm_smmu_ecmdq_topo *t, unsigned nq, unsigned *map);
/* After device_reset: enable the ECMDQs and assign them to CPUs, or leave the main queue as
 * every CPU's (returns 0 then too; -ENODEV only when opts.ecmdq demands them). */
int arm_smmu_ecmdq_probe(struct arm_smmu_device *smmu);
/* Disable the ECMDQs and free them (harmless when there are none). */
void arm_smmu_ecmdq_remove(struct arm_smmu_device *smmu);
/* If the ECMDQ reports an error (CONS.ERR != our ERRACK): skip the failed command (an illegal
 * one becomes a CMD_SYNC, an aborted read is retried) and acknowledge. True if a command was
 * skipped; an acknowledged abort returns false (the retry may fail forever: no new timeout). */
bool arm_smmu_ecmdq_skip_err(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq);
/* The queue of the calling CPU: its ECMDQ, or the main queue (also for threads that are not
 * CPUs of the modelled machine). A set of commands and its CMD_SYNC go to one queue. */
static inline struct arm_smmu_cmdq *arm_smmu_get_cmdq(struct arm_smmu_device *smmu)
{
	int cpu = plat_cpu_id();

	if (!smmu->cpu_cmdq || cpu < 0 || (unsigned)cpu >= smmu->nr_cpu_cmdq)
		return &smmu->cmdq;
	return smmu->cpu_cmdq[cpu];
}

/* Can this queue take a command of this opcode (Linux arm_smmu_cmdq_supports_cmd)? */
static inline bool arm_smmu_cmdq_supports(const struct arm_smmu_cmdq *cmdq, unsigned opcode)
{
	return !cmdq->supports || cmdq->supports(opcode);
}

/* The queue for a command of this opcode (Linux arm_smmu_get_cmdq(smmu, ent)): the
 * implementation's secondary queue for this CPU if it has one that takes the command, else
 * this CPU's ECMDQ or the main queue. */
static inline struct arm_smmu_cmdq *arm_smmu_get_cmdq_for(struct arm_smmu_device *smmu,
							  unsigned opcode)
{
	if (smmu->impl_ops && smmu->impl_ops->get_secondary_cmdq) {
		struct arm_smmu_cmdq *q = smmu->impl_ops->get_secondary_cmdq(smmu, opcode);

		return q ? q : &smmu->cmdq;
	}
	return arm_smmu_get_cmdq(smmu);
}

/* tegra241-cmdqv.c */
/* After device_reset (Linux's impl device_reset): find the CMDQV at opts.cmdqv_offset, enable
 * it and VINTF0 with its VCMDQs, and hook get_secondary_cmdq. Returns 0 also when there is no
 * CMDQV or opts.cmdqv is off (cmdqv_why says why); -ENODEV only when opts.cmdqv demands one. */
int tegra241_cmdqv_probe(struct arm_smmu_device *smmu);
void tegra241_cmdqv_remove(struct arm_smmu_device *smmu);
/* A VCMDQ's GERROR differs from GERRORN: skip an illegal command (it becomes a CS_NONE
 * CMD_SYNC), retry an aborted read, acknowledge. True if a command was skipped. */
bool tegra241_vcmdq_skip_err(struct arm_smmu_device *smmu, struct arm_smmu_cmdq *cmdq);
/* For the public queries: CPU cpu's VCMDQ for a TLBI_NH_VA (1 + n, 0: the main queue), and
 * VINTF0's VCMDQ n (NULL beyond them). */
int tegra241_cmdqv_cpu_queue(struct arm_smmu_device *smmu, unsigned cpu);
struct arm_smmu_cmdq *tegra241_cmdqv_queue(struct arm_smmu_device *smmu, unsigned n);

/* arm-smmu-v3-ste.c */
void arm_smmu_make_abort_ste(uint64_t *ste);
void arm_smmu_make_bypass_ste(uint64_t *ste);
void arm_smmu_make_cdtable_ste(uint64_t *ste, ilab_pa_t cd_pa);
/* The CD of domain d as seen by the SMMU whose ASID for it is asid. */
void arm_smmu_make_s1_cd(uint64_t *cd, const struct arm_smmu_domain *d, uint16_t asid);
int arm_smmu_init_strtab(struct arm_smmu_device *smmu);
void arm_smmu_free_strtab(struct arm_smmu_device *smmu);
/* The STE of a StreamID, allocating its level-2 table if needed (NULL: -ENOMEM / range). */
uint64_t *arm_smmu_get_step(struct arm_smmu_device *smmu, uint32_t sid, bool alloc);
void arm_smmu_write_ste(struct arm_smmu_master *m, const uint64_t *target);
void arm_smmu_write_cd(struct arm_smmu_master *m, const uint64_t *target);

/* arm-smmu-v3-tlb.c */
extern const struct ilab_iommu_flush_ops arm_smmu_flush_ops;
void arm_smmu_iotlb_sync(void *priv, struct ilab_iotlb_gather *gather);
int arm_smmu_tlb_inv_range_domain(struct arm_smmu_domain *d, uint64_t iova, size_t size,
				  size_t granule, bool leaf);
int arm_smmu_tlb_inv_asid(struct arm_smmu_device *smmu, uint16_t asid);
/* TLBI_NH_ASID + CMD_SYNC on every SMMU the domain is attached to. */
int arm_smmu_tlb_inv_domain(struct arm_smmu_domain *d);

/* arm-smmu-v3.c */
int arm_smmu_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
