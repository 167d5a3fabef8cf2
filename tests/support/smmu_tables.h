/* smmu_tables.h — test-side builder for the SMMUv3 model: fake physical memory with fault
 * injection, STE/CD/page-table writers and a bring-up helper. Not cmocka-dependent, and it never
 * uses the model's private encodings: every field position below is typed in from IHI 0070. */
#ifndef ILAB_TESTS_SMMU_TABLES_H
#define ILAB_TESTS_SMMU_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "iommulab/smmuv3.h"

/* ---- spec constants (IHI 0070), independent of the model's headers ------------------------ */
#define SMT_IDR0 0x00
#define SMT_IDR1 0x04
#define SMT_IDR2 0x08
#define SMT_IDR3 0x0C
#define SMT_IDR4 0x10
#define SMT_IDR5 0x14
#define SMT_IIDR 0x18
#define SMT_AIDR 0x1C
#define SMT_CR0 0x20
#define SMT_CR0ACK 0x24
#define SMT_CR1 0x28
#define SMT_CR2 0x2C
#define SMT_STATUSR 0x40
#define SMT_GBPA 0x44
#define SMT_AGBPA 0x48
#define SMT_IRQ_CTRL 0x50
#define SMT_IRQ_CTRLACK 0x54
#define SMT_GERROR 0x60
#define SMT_GERRORN 0x64
#define SMT_GERROR_IRQ_CFG0 0x68
#define SMT_GERROR_IRQ_CFG1 0x70
#define SMT_GERROR_IRQ_CFG2 0x74
#define SMT_STRTAB_BASE 0x80
#define SMT_STRTAB_BASE_CFG 0x88
#define SMT_CMDQ_BASE 0x90
#define SMT_CMDQ_PROD 0x98
#define SMT_CMDQ_CONS 0x9C
#define SMT_EVENTQ_BASE 0xA0
#define SMT_EVENTQ_IRQ_CFG0 0xB0
#define SMT_EVENTQ_IRQ_CFG1 0xB8
#define SMT_EVENTQ_IRQ_CFG2 0xBC
#define SMT_EVENTQ_PROD 0x100A8
#define SMT_EVENTQ_CONS 0x100AC

#define SMT_CR0_SMMUEN 0x1u
#define SMT_CR0_EVENTQEN 0x4u
#define SMT_CR0_CMDQEN 0x8u
#define SMT_GERROR_CMDQ_ERR 0x1u
#define SMT_GERROR_EVENTQ_ABT 0x4u
#define SMT_GERROR_MSI_CMDQ_ABT 0x10u

/* event numbers */
#define SMT_C_BAD_STREAMID 0x02
#define SMT_F_STE_FETCH 0x03
#define SMT_C_BAD_STE 0x04
#define SMT_F_STREAM_DISABLED 0x06
#define SMT_C_BAD_SUBSTREAMID 0x08
#define SMT_F_CD_FETCH 0x09
#define SMT_C_BAD_CD 0x0A
#define SMT_F_WALK_EABT 0x0B
#define SMT_F_TRANSLATION 0x10
#define SMT_F_ADDR_SIZE 0x11
#define SMT_F_ACCESS 0x12
#define SMT_F_PERMISSION 0x13

/* command opcodes */
#define SMT_OP_PREFETCH_CONFIG 0x01
#define SMT_OP_PREFETCH_ADDR 0x02
#define SMT_OP_CFGI_STE 0x03
#define SMT_OP_CFGI_STE_RANGE 0x04
#define SMT_OP_CFGI_CD 0x05
#define SMT_OP_CFGI_CD_ALL 0x06
#define SMT_OP_TLBI_NH_ALL 0x10
#define SMT_OP_TLBI_NH_ASID 0x11
#define SMT_OP_TLBI_NH_VA 0x12
#define SMT_OP_TLBI_NH_VAA 0x13
#define SMT_OP_TLBI_EL2_ALL 0x20
#define SMT_OP_TLBI_EL2_ASID 0x21
#define SMT_OP_TLBI_EL2_VA 0x22
#define SMT_OP_TLBI_EL2_VAA 0x23
#define SMT_OP_TLBI_NSNH_ALL 0x30
#define SMT_OP_ATC_INV 0x40
#define SMT_OP_CMD_SYNC 0x46

/* page/block descriptor bits (VMSAv8-64 stage 1) */
#define SMT_PTE_AF (1ULL << 10)
#define SMT_PTE_NG (1ULL << 11)
#define SMT_PTE_AP_EL0 (1ULL << 6)  /* AP[1] */
#define SMT_PTE_AP_RO (1ULL << 7)   /* AP[2] */
#define SMT_PTE_SH_IS (3ULL << 8)
#define SMT_PTE_PXN (1ULL << 53)
#define SMT_PTE_UXN (1ULL << 54)
#define SMT_PTE_ATTR(i) ((uint64_t)(i) << 2)
#define SMT_PTE_DEFAULT (SMT_PTE_AF | SMT_PTE_NG | SMT_PTE_SH_IS | SMT_PTE_ATTR(1))

/* ---- fake physical memory -------------------------------------------------------------------- */
#define SMT_MAX_FAULTS 8
struct smt_mem {
    uint8_t *buf;
    uint64_t base, size, next;
    struct {
        uint64_t lo, hi;
        bool rd, wr;
    } fault[SMT_MAX_FAULTS];
    unsigned nfault;
    unsigned nmsi;
    uint64_t msi_addr[64];
    uint32_t msi_data[64];
    unsigned nirq[8];
    uint64_t reads, writes;
    /* With smmu set (by a test, to the model that has this memory as its ctx):
     * SMMU_CMDQ_CONS as it was when each MSI was made and at the last pulse of each
     * interrupt line, i.e. what a CPU woken by it would read. */
    struct smmu *smmu;
    uint32_t msi_cons[64];
    uint32_t irq_cons[8];
};

int smt_mem_init(struct smt_mem *m, uint64_t base, uint64_t size);
void smt_mem_fini(struct smt_mem *m);
uint64_t smt_alloc(struct smt_mem *m, uint64_t size, uint64_t align); /* zeroed */
void smt_w64(struct smt_mem *m, uint64_t pa, uint64_t v);
uint64_t smt_r64(struct smt_mem *m, uint64_t pa);
uint32_t smt_r32(struct smt_mem *m, uint64_t pa);
void smt_fault_add(struct smt_mem *m, uint64_t pa, uint64_t len, bool rd, bool wr);
void smt_fault_clear(struct smt_mem *m);
extern const struct smmu_host_ops smt_host_ops; /* ctx = struct smt_mem * */

/* ---- structure writers ------------------------------------------------------------------------- */
struct smt_ste {
    bool v;
    unsigned config; /* 0 abort, 4 bypass, 5 S1 */
    unsigned s1fmt, s1cdmax, s1dss, strw, privcfg, instcfg;
    bool s1stalld;
    uint64_t ctxptr;
};
void smt_ste_s1(struct smt_ste *ste, uint64_t ctxptr); /* V, Config=S1, linear, no SSIDs */
void smt_ste_write(struct smt_mem *m, uint64_t pa, const struct smt_ste *ste);

struct smt_cd {
    bool v, aa64, a, r, s, epd0, epd1, endi, affd, wxn, pan, tbi0, tbi1, ha, hd, had0;
    unsigned t0sz, tg0, t1sz, tg1, ips;
    uint16_t asid;
    uint64_t ttb0, ttb1, mair;
};
/* V, AA64, A, R, EPD1, IPS=48 bits, ASID 1, MAIR idx0 0x44 idx1 0xFF idx2 0x04 */
void smt_cd_init(struct smt_cd *cd, uint64_t ttb0, unsigned t0sz, unsigned tg0);
void smt_cd_write(struct smt_mem *m, uint64_t pa, const struct smt_cd *cd);

/* Stage-1 page tables: granule 2^pshift (12, 14, 16), input size ias bits. */
struct smt_pt {
    struct smt_mem *m;
    uint64_t root;
    unsigned pshift, ias, start;
};
void smt_pt_init(struct smt_pt *pt, struct smt_mem *m, unsigned pshift, unsigned ias);
/* Map va -> pa with a leaf at `level` (3 = page, 1-2 = block). Returns the leaf's PA. */
uint64_t smt_pt_map(struct smt_pt *pt, uint64_t va, uint64_t pa, unsigned level, uint64_t attrs);
/* PA of the descriptor used at `level` for va (tables must exist down to that level). */
uint64_t smt_pt_desc_addr(struct smt_pt *pt, uint64_t va, unsigned level);
unsigned smt_tg0(unsigned pshift); /* CD.TG0 encoding of a granule */

/* ---- a model brought up through MMIO ------------------------------------------------------------ */
struct smt_env {
    struct smt_mem mem;
    struct smmu *smmu;
    struct smmu_config cfg;
    uint64_t strtab, cmdq, evtq;
    unsigned sid_bits, cmdq_log2, evtq_log2;
    uint32_t prod, evcons;
};
/* cfg NULL = smmu_config_default() with thread_safe off; linear stream table of 2^sid_bits. */
int smt_env_init(struct smt_env *e, const struct smmu_config *cfg, unsigned sid_bits);
void smt_env_fini(struct smt_env *e);
uint64_t smt_rd(struct smt_env *e, uint64_t off);
void smt_wr(struct smt_env *e, uint64_t off, uint64_t v);
void smt_cmd(struct smt_env *e, uint64_t d0, uint64_t d1); /* enqueue + PROD write */
unsigned smt_run(struct smt_env *e);                          /* process up to 1000 */
int smt_evt_pop(struct smt_env *e, uint64_t rec[4]);         /* 1 if a record was read */
void smt_ste_at(struct smt_env *e, uint32_t sid, const struct smt_ste *ste);
/* One S1 stream with a single CD (no SSIDs) and 4K tables of 48 bits: returns the page table. */
void smt_simple_stream(struct smt_env *e, uint32_t sid, struct smt_pt *pt, struct smt_cd *cd,
                       uint64_t *cd_pa);
void smt_translate(struct smt_env *e, uint32_t sid, uint64_t iova, bool write,
                   struct smmu_txn_rsp *rsp);

#endif
