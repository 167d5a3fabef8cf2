/* test_smmuv3_regs.c — SMMUv3 model register file: reset values, ID registers, access rules.
 * Expected values are IHI 0070 chapter 6 encodings typed in here, never read back from the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

static int setup(void **state)
{
    static struct smt_env e;
    if (smt_env_init(&e, NULL, 8))
        return -1;
    *state = &e;
    return 0;
}

static int teardown(void **state)
{
    smt_env_fini(*state);
    return 0;
}

static struct smmu *fresh(void)
{
    struct smmu_config c;
    smmu_config_default(&c);
    struct smmu *s;
    static struct smt_mem m;
    if (m.buf)
        smt_mem_fini(&m);
    smt_mem_init(&m, 0, 4096);
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, &m, NULL), 0);
    return s;
}

static void test_idr_default(void **state)
{
    (void)state;
    struct smmu *s = fresh();
    uint32_t idr0 = (uint32_t)smmu_mmio_read(s, SMT_IDR0, 4);
    assert_int_equal(idr0 & 1, 0);              /* S2P */
    assert_int_equal((idr0 >> 1) & 1, 1);       /* S1P */
    assert_int_equal((idr0 >> 2) & 3, 2);       /* TTF = AArch64 */
    assert_int_equal((idr0 >> 6) & 3, 0);       /* HTTU none */
    assert_int_equal((idr0 >> 9) & 1, 0);       /* HYP: RES0 without S2P */
    assert_int_equal((idr0 >> 10) & 1, 1);      /* ATS */
    assert_int_equal((idr0 >> 12) & 1, 1);      /* ASID16 */
    assert_int_equal((idr0 >> 13) & 1, 1);      /* MSI */
    assert_int_equal((idr0 >> 14) & 1, 1);      /* SEV */
    assert_int_equal((idr0 >> 16) & 1, 0);      /* PRI */
    assert_int_equal((idr0 >> 18) & 1, 1);      /* VMID16 */
    assert_int_equal((idr0 >> 19) & 1, 1);      /* CD2L */
    assert_int_equal((idr0 >> 24) & 3, 1);      /* STALL_MODEL: no stall */
    assert_int_equal((idr0 >> 27) & 3, 1);      /* ST_LEVEL: 2-level */
    uint32_t idr1 = (uint32_t)smmu_mmio_read(s, SMT_IDR1, 4);
    assert_int_equal(idr1 & 0x3F, 16);          /* SIDSIZE */
    assert_int_equal((idr1 >> 6) & 0x1F, 20);   /* SSIDSIZE */
    assert_int_equal((idr1 >> 16) & 0x1F, 19);  /* EVENTQS */
    assert_int_equal((idr1 >> 21) & 0x1F, 19);  /* CMDQS */
    assert_int_equal((idr1 >> 11) & 0x1F, 0);   /* PRIQS */
    uint32_t idr3 = (uint32_t)smmu_mmio_read(s, SMT_IDR3, 4);
    assert_int_equal((idr3 >> 10) & 1, 1);      /* RIL */
    assert_int_equal((idr3 >> 2) & 1, 1);       /* HAD */
    uint32_t idr5 = (uint32_t)smmu_mmio_read(s, SMT_IDR5, 4);
    assert_int_equal(idr5 & 7, 5);              /* OAS 48 bits */
    assert_int_equal((idr5 >> 4) & 7, 7);       /* GRAN4K|16K|64K */
    assert_int_equal(smmu_mmio_read(s, SMT_AIDR, 4), 0x02); /* SMMUv3.2 */
    assert_int_equal(smmu_mmio_read(s, SMT_IDR2, 4), 0);
    assert_int_equal(smmu_mmio_read(s, SMT_IDR4, 4), 0);
    smmu_destroy(s);
}

static void test_idr_from_config(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.sidsize = 6; /* linear-only needs SIDSIZE < 7 (IHI 0070 §6.3.2) */
    c.ssidsize = 0;
    c.cmdqs = 10;
    c.eventqs = 7;
    c.oas = 40;
    c.gran16k = false;
    c.ril = false;
    c.arch_minor = 1; /* RIL is mandatory from v3.2 (§6.3.4) */
    c.msi = false;
    c.strtab_2lvl = false;
    struct smt_mem m;
    smt_mem_init(&m, 0, 4096);
    struct smmu *s;
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, &m, NULL), 0);
    uint32_t idr1 = (uint32_t)smmu_mmio_read(s, SMT_IDR1, 4);
    assert_int_equal(idr1 & 0x3F, 6);
    assert_int_equal((idr1 >> 6) & 0x1F, 0);
    assert_int_equal((idr1 >> 16) & 0x1F, 7);
    assert_int_equal((idr1 >> 21) & 0x1F, 10);
    assert_int_equal(smmu_mmio_read(s, SMT_IDR5, 4) & 0x77, 0x52); /* OAS 40 = 2; 4K, 64K */
    assert_int_equal((smmu_mmio_read(s, SMT_IDR3, 4) >> 10) & 1, 0);
    assert_int_equal((smmu_mmio_read(s, SMT_IDR0, 4) >> 13) & 1, 0);
    assert_int_equal((smmu_mmio_read(s, SMT_IDR0, 4) >> 27) & 3, 0);
    smmu_destroy(s);
    smt_mem_fini(&m);
}

static void test_invalid_config_rejected(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.oas = 47;
    struct smt_mem m;
    struct smmu *s = NULL;
    const char *why = NULL;
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, &m, &why), -22);
    assert_null(s);
    assert_non_null(why);
    smmu_config_default(&c);
    c.sidsize = 33;
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, &m, NULL), -22);
    smmu_config_default(&c);
    struct smmu_host_ops none = {0};
    assert_int_equal(smmu_create(&s, &c, &none, &m, NULL), -22);
}

static void test_reset_values(void **state)
{
    (void)state;
    struct smmu *s = fresh();
    const uint32_t zero_regs[] = {SMT_CR0, SMT_CR0ACK, SMT_CR1, SMT_CR2, SMT_STATUSR,
                                  SMT_IRQ_CTRL, SMT_IRQ_CTRLACK, SMT_GERROR, SMT_GERRORN,
                                  SMT_CMDQ_PROD, SMT_CMDQ_CONS, SMT_STRTAB_BASE_CFG, SMT_AGBPA};
    for (unsigned i = 0; i < sizeof(zero_regs) / sizeof(zero_regs[0]); i++)
        assert_int_equal(smmu_mmio_read(s, zero_regs[i], 4), 0);
    assert_int_equal(smmu_mmio_read(s, SMT_EVENTQ_PROD, 4), 0);
    assert_int_equal(smmu_mmio_read(s, SMT_EVENTQ_CONS, 4), 0);
    assert_int_equal(smmu_mmio_read(s, SMT_STRTAB_BASE, 8), 0);
    /* GBPA: SHCFG = 0b01 (use incoming), ABORT = 0 in the default configuration */
    assert_int_equal(smmu_mmio_read(s, SMT_GBPA, 4), 0x1000);
    smmu_destroy(s);
}

/* SMMUEN == 0: GBPA decides (§3.3.5). ABORT = 0 bypasses (PA = IOVA), and the statistics
 * count the transaction as translated and bypassed; ABORT = 1 aborts it, not bypassed. */
static void test_global_bypass_counted(void **state)
{
    (void)state;
    struct smmu *s = fresh();
    struct smmu_txn_req req = {.sid = 1, .iova = 0x12345000, .write = true};
    struct smmu_txn_rsp rsp;
    struct smmu_stats st;
    smmu_translate(s, &req, &rsp);
    assert_int_equal(rsp.status, SMMU_TXN_OK);
    assert_true(rsp.bypass);
    assert_int_equal(rsp.pa, 0x12345000);
    smmu_get_stats(s, &st);
    assert_int_equal(st.translations, 1);
    assert_int_equal(st.bypassed, 1);
    smmu_mmio_write(s, SMT_GBPA, (1u << 31) | (1u << 20), 4); /* UPDATE, ABORT */
    smmu_translate(s, &req, &rsp);
    assert_int_not_equal(rsp.status, SMMU_TXN_OK);
    smmu_get_stats(s, &st);
    assert_int_equal(st.translations, 2);
    assert_int_equal(st.bypassed, 1);
    smmu_destroy(s);
}

static void test_cr0_ack(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_CR0, 0);
    assert_int_equal(smt_rd(e, SMT_CR0ACK), 0);
    smt_wr(e, SMT_CR0, 0xFFFFFFFF);
    /* SMMUEN, EVENTQEN, CMDQEN, ATSCHK writable; PRIQEN (no PRI) and VMW (no S2) RES0 */
    assert_int_equal(smt_rd(e, SMT_CR0), 0x1D);
    assert_int_equal(smt_rd(e, SMT_CR0ACK), 0x1D);
}

static void test_cr1_cr2_rules(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_CR1, 0xFFF); /* SMMU enabled: ignored */
    assert_int_equal(smt_rd(e, SMT_CR1), 0);
    smt_wr(e, SMT_CR2, 0x7);
    assert_int_equal(smt_rd(e, SMT_CR2), 0);
    smt_wr(e, SMT_CR0, 0);
    smt_wr(e, SMT_CR1, 0xFFFFFFFF);
    assert_int_equal(smt_rd(e, SMT_CR1), 0xFFF);
    smt_wr(e, SMT_CR2, 0xFFFFFFFF); /* RECINVSID; E2H RES0 without Hyp, PTM without BTM */
    assert_int_equal(smt_rd(e, SMT_CR2), 0x2);
}

static void test_gbpa_update(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_GBPA, 1u << 20); /* no UPDATE: no effect */
    assert_int_equal(smt_rd(e, SMT_GBPA), 0x1000);
    smt_wr(e, SMT_GBPA, (1u << 31) | (1u << 20));
    assert_int_equal(smt_rd(e, SMT_GBPA), 1u << 20); /* UPDATE reads back 0 */
    smt_wr(e, SMT_CR0, 0);
    struct smmu_txn_rsp r;
    smt_translate(e, 0, 0x1234, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, 0);
    smt_wr(e, SMT_GBPA, 1u << 31);
    smt_translate(e, 0, 0x1234, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_true(r.bypass);
    assert_int_equal(r.pa, 0x1234);
}

static void test_irq_ctrl_ack(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_IRQ_CTRL, 0xFFFFFFFF); /* GERROR_IRQEN, EVENTQ_IRQEN; PRIQ RES0 */
    assert_int_equal(smt_rd(e, SMT_IRQ_CTRL), 0x5);
    assert_int_equal(smt_rd(e, SMT_IRQ_CTRLACK), 0x5);
}

static void test_gerror_ro_gerrorn_rw(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_GERROR, 0xFFFFFFFF);
    assert_int_equal(smt_rd(e, SMT_GERROR), 0);
    smt_wr(e, SMT_GERRORN, 0x1);
    assert_int_equal(smt_rd(e, SMT_GERRORN), 0x1);
    smt_wr(e, SMT_GERRORN, 0);
}

static void test_id_regs_read_only(void **state)
{
    struct smt_env *e = *state;
    const uint32_t ro[] = {SMT_IDR0, SMT_IDR1, SMT_IDR3, SMT_IDR5, SMT_IIDR, SMT_AIDR};
    for (unsigned i = 0; i < 6; i++) {
        uint64_t before = smt_rd(e, ro[i]);
        smt_wr(e, ro[i], ~before);
        assert_int_equal(smt_rd(e, ro[i]), before);
    }
}

static void test_strtab_base_locked_when_enabled(void **state)
{
    struct smt_env *e = *state;
    uint64_t before = smmu_mmio_read(e->smmu, SMT_STRTAB_BASE, 8);
    smmu_mmio_write(e->smmu, SMT_STRTAB_BASE, 0x12345000, 8);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_STRTAB_BASE, 8), before);
    smt_wr(e, SMT_CR0, 0);
    /* RA bit 62 and ADDR [51:6] are the only writable bits, and ADDR bits above the OAS (48)
     * are RES0 and not stored (§6.3.24) */
    smmu_mmio_write(e->smmu, SMT_STRTAB_BASE, 0xFFFFFFFFFFFFFFFFULL, 8);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_STRTAB_BASE, 8), 0x4000FFFFFFFFFFC0ULL);
    smt_wr(e, SMT_STRTAB_BASE_CFG, 0xFFFFFFFF); /* FMT [17:16], SPLIT [10:6], LOG2SIZE [5:0] */
    assert_int_equal(smt_rd(e, SMT_STRTAB_BASE_CFG), 0x307FF);
}

static void test_queue_base_masks(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_CR0, 0);
    /* RA, ADDR up to the OAS (48 bits: higher ADDR bits are RES0, not stored), LOG2SIZE */
    smmu_mmio_write(e->smmu, SMT_CMDQ_BASE, ~0ULL, 8);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_CMDQ_BASE, 8), 0x4000FFFFFFFFFFFFULL);
    smmu_mmio_write(e->smmu, SMT_EVENTQ_BASE, ~0ULL, 8);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_EVENTQ_BASE, 8), 0x4000FFFFFFFFFFFFULL);
    /* 32-bit halves are individually accessible */
    smt_wr(e, SMT_CMDQ_BASE + 4, 0);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_CMDQ_BASE, 8), 0xFFFFFFFFULL);
}

static void test_cmdq_cons_ro_when_enabled(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_CMDQ_CONS, 5);
    assert_int_equal(smt_rd(e, SMT_CMDQ_CONS), 0);
    smt_wr(e, SMT_CR0, 0);
    smt_wr(e, SMT_CMDQ_CONS, 0xFFFFFFFF); /* RD [19:0], ERR [30:24] */
    assert_int_equal(smt_rd(e, SMT_CMDQ_CONS), 0x7F0FFFFF);
    smt_wr(e, SMT_CMDQ_PROD, 0xFFFFFFFF); /* WR [19:0] */
    assert_int_equal(smt_rd(e, SMT_CMDQ_PROD), 0xFFFFF);
}

static void test_eventq_prod_owned_by_smmu(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_EVENTQ_PROD, 3);
    assert_int_equal(smt_rd(e, SMT_EVENTQ_PROD), 0);
    smt_wr(e, SMT_EVENTQ_CONS, 0x80000003); /* CONS: RD and OVACKFLG always writable */
    assert_int_equal(smt_rd(e, SMT_EVENTQ_CONS), 0x80000003);
    smt_wr(e, SMT_CR0, SMT_CR0_SMMUEN);
    smt_wr(e, SMT_EVENTQ_PROD, 0xFFFFFFFF);
    assert_int_equal(smt_rd(e, SMT_EVENTQ_PROD), 0x800FFFFF);
}

static void test_page0_eventq_offsets_reserved(void **state)
{
    struct smt_env *e = *state;
    smt_wr(e, SMT_CR0, SMT_CR0_SMMUEN);
    smt_wr(e, SMT_EVENTQ_CONS, 7);
    /* EVENTQ_PROD/CONS exist only in page 1; page-0 0xA8/0xAC are Reserved (RAZ/WI) */
    assert_int_equal(smt_rd(e, 0xA8), 0);
    assert_int_equal(smt_rd(e, 0xAC), 0);
    smt_wr(e, 0xAC, 1);
    assert_int_equal(smt_rd(e, SMT_EVENTQ_CONS), 7);
}

static void test_unknown_and_misaligned(void **state)
{
    struct smt_env *e = *state;
    assert_int_equal(smmu_mmio_read(e->smmu, 0x30, 4), 0);
    assert_int_equal(smmu_mmio_read(e->smmu, 0xE00, 4), 0);
    assert_int_equal(smmu_mmio_read(e->smmu, 0x20000, 4), 0);
    assert_int_equal(smmu_mmio_read(e->smmu, 0xFFFFFFFFFFFFFFF0ULL, 8), 0);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_IDR0 + 1, 4), 0);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_IDR0, 2), 0);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_IDR1, 8), 0); /* misaligned 8-byte */
    smmu_mmio_write(e->smmu, SMT_CR0 + 2, 0, 4);
    smmu_mmio_write(e->smmu, SMT_CR0, 0, 1);
    assert_int_equal(smt_rd(e, SMT_CR0), 0xD);
    smmu_mmio_write(e->smmu, 0x1234, 0xFFFFFFFF, 4);
    assert_int_equal(smmu_mmio_read(e->smmu, 0x1234, 4), 0);
}

static void test_64bit_access_to_32bit_pair(void **state)
{
    struct smt_env *e = *state;
    uint64_t v = smmu_mmio_read(e->smmu, SMT_IDR0, 8);
    assert_int_equal((uint32_t)v, smt_rd(e, SMT_IDR0));
    assert_int_equal((uint32_t)(v >> 32), smt_rd(e, SMT_IDR1));
    /* An 8-byte write is the two 32-bit writes, low half to PROD, high half to CONS; CONS is
     * RO while CMDQEN == 1 (the env enables the queue), so only PROD takes its half. */
    smmu_mmio_write(e->smmu, SMT_CMDQ_PROD, 5 | (7ULL << 32), 8);
    assert_int_equal(smt_rd(e, SMT_CMDQ_PROD), 5);
    assert_int_equal(smt_rd(e, SMT_CMDQ_CONS), 0);
    /* with the queue disabled CONS is writable: each half lands in its own register */
    smt_wr(e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN);
    smmu_mmio_write(e->smmu, SMT_CMDQ_PROD, 9 | (3ULL << 32), 8);
    assert_int_equal(smt_rd(e, SMT_CMDQ_PROD), 9);
    assert_int_equal(smt_rd(e, SMT_CMDQ_CONS), 3);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_CMDQ_PROD, 8), 9 | (3ULL << 32));
}

static void test_msi_cfg_registers(void **state)
{
    struct smt_env *e = *state;
    smmu_mmio_write(e->smmu, SMT_GERROR_IRQ_CFG0, ~0ULL, 8); /* ADDR [51:2] */
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_GERROR_IRQ_CFG0, 8), 0x000FFFFFFFFFFFFCULL);
    smt_wr(e, SMT_GERROR_IRQ_CFG1, 0xDEADBEEF);
    assert_int_equal(smt_rd(e, SMT_GERROR_IRQ_CFG1), 0xDEADBEEF);
    smt_wr(e, SMT_GERROR_IRQ_CFG2, 0xFF); /* MemAttr [3:0], SH [5:4] */
    assert_int_equal(smt_rd(e, SMT_GERROR_IRQ_CFG2), 0x3F);
    smmu_mmio_write(e->smmu, SMT_EVENTQ_IRQ_CFG0, 0x1003, 8);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_EVENTQ_IRQ_CFG0, 8), 0x1000);
    smt_wr(e, SMT_EVENTQ_IRQ_CFG1, 7);
    assert_int_equal(smt_rd(e, SMT_EVENTQ_IRQ_CFG1), 7);
}

static void test_msi_cfg_raz_without_msi(void **state)
{
    (void)state;
    struct smmu_config c;
    smmu_config_default(&c);
    c.msi = false;
    struct smt_mem m;
    smt_mem_init(&m, 0, 4096);
    struct smmu *s;
    assert_int_equal(smmu_create(&s, &c, &smt_host_ops, &m, NULL), 0);
    smmu_mmio_write(s, SMT_GERROR_IRQ_CFG0, 0x1000, 8);
    assert_int_equal(smmu_mmio_read(s, SMT_GERROR_IRQ_CFG0, 8), 0);
    /* GERRORN's MSI_*_ABT_ERR fields are RES0 too (§6.3.20): only CMDQ_ERR, EVENTQ_ABT_ERR and
     * SFM_ERR stay */
    smmu_mmio_write(s, SMT_GERRORN, 0xFFFFFFFFu, 4);
    assert_int_equal(smmu_mmio_read(s, SMT_GERRORN, 4) & 0xB0, 0);
    assert_int_equal(smmu_mmio_read(s, SMT_GERRORN, 4) & 0x5, 0x5);
    smmu_destroy(s);
    smt_mem_fini(&m);
}

static void test_reset_restores(void **state)
{
    struct smt_env *e = *state;
    /* The MSI configuration registers reset to 0 as well (§6.3.30-32 and §6.3.21-23). They
     * are written with their IRQs disabled: from SMMUv3.2 a write while enabled is ignored. */
    smt_wr(e, SMT_IRQ_CTRL, 0);
    static const uint32_t cfg[] = { SMT_GERROR_IRQ_CFG0, SMT_EVENTQ_IRQ_CFG0 };
    for (unsigned i = 0; i < 2; i++) {
        smmu_mmio_write(e->smmu, cfg[i], 0x1000, 8);
        smt_wr(e, cfg[i] + 8, 7);  /* CFG1: the MSI data */
        smt_wr(e, cfg[i] + 12, 1); /* CFG2: MemAttr */
        assert_int_equal(smmu_mmio_read(e->smmu, cfg[i], 8), 0x1000);
        assert_int_equal(smt_rd(e, cfg[i] + 8), 7);
        assert_int_equal(smt_rd(e, cfg[i] + 12), 1);
    }
    smmu_reset(e->smmu);
    assert_int_equal(smt_rd(e, SMT_CR0), 0);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_STRTAB_BASE, 8), 0);
    assert_int_equal(smt_rd(e, SMT_GBPA), 0x1000);
    for (unsigned i = 0; i < 2; i++) {
        assert_int_equal(smmu_mmio_read(e->smmu, cfg[i], 8), 0);
        assert_int_equal(smt_rd(e, cfg[i] + 8), 0);
        assert_int_equal(smt_rd(e, cfg[i] + 12), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idr_default),
        cmocka_unit_test(test_idr_from_config),
        cmocka_unit_test(test_invalid_config_rejected),
        cmocka_unit_test(test_reset_values),
        cmocka_unit_test(test_global_bypass_counted),
        cmocka_unit_test_setup_teardown(test_cr0_ack, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cr1_cr2_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gbpa_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_irq_ctrl_ack, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gerror_ro_gerrorn_rw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_id_regs_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strtab_base_locked_when_enabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_base_masks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmdq_cons_ro_when_enabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eventq_prod_owned_by_smmu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page0_eventq_offsets_reserved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_and_misaligned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_64bit_access_to_32bit_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_msi_cfg_registers, setup, teardown),
        cmocka_unit_test(test_msi_cfg_raz_without_msi),
        cmocka_unit_test_setup_teardown(test_reset_restores, setup, teardown),
    };
    return cmocka_run_group_tests_name("smmuv3_regs", tests, NULL, NULL);
}
