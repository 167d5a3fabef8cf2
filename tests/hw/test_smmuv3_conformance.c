/* test_smmuv3_conformance.c — the SMMUv3 model against IHI 0070's "behaves as", "IGNORED when",
 * "RES0 when" and alignment rules, ID-register consistency at creation, range-invalidation
 * encodings and addresses above the OAS. One test per rule (docs/smmuv3-conformance.md maps
 * every rule to its test); every expected value is a spec constant typed in here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/smmu_tables.h"

#define SID 5
#define IOVA 0x12345000ULL
#define PA 0x41000000ULL
#define EINVAL_RC (-22)

#define IDR3_FWB (1u << 8)
#define IDR3_BBML(v) (((v) >> 11) & 3)
#define IDR3_E0PD (1u << 13)
#define IDR1_ATTR_PERMS_OVR (1u << 26)
#define STE_EATS_SHIFT 28 /* STE [93:92] = dword 1 [29:28] */
#define SMT_IRQ_SEV_LINE 3
#define SMT_F_BAD_ATS_TREQ 0x05

struct fx {
    struct smt_env e;
    struct smt_pt pt;
    struct smt_cd cd;
    uint64_t cd_pa;
    struct smt_ste ste;
};

static struct fx fxs;

/* A default (or `c`) model with stream SID translating IOVA -> PA, readable at EL0. */
static struct fx *up(const struct smmu_config *c, unsigned sid_bits)
{
    struct fx *f = &fxs;
    memset(f, 0, sizeof(*f));
    assert_int_equal(smt_env_init(&f->e, c, sid_bits), 0);
    smt_simple_stream(&f->e, SID, &f->pt, &f->cd, &f->cd_pa);
    smt_pt_map(&f->pt, IOVA, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    smt_ste_s1(&f->ste, f->cd_pa);
    return f;
}

static void down(struct fx *f) { smt_env_fini(&f->e); }

static struct smmu_config base_cfg(void)
{
    struct smmu_config c;
    smmu_config_default(&c);
    c.thread_safe = false;
    return c;
}

static void sync_cfg(struct fx *f, uint64_t cfgi_d0)
{
    smt_cmd(&f->e, cfgi_d0, 1);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
}

static void rewrite_ste(struct fx *f)
{
    smt_ste_at(&f->e, SID, &f->ste);
    sync_cfg(f, SMT_OP_CFGI_STE | ((uint64_t)SID << 32));
}

static void rewrite_cd(struct fx *f)
{
    smt_cd_write(&f->e.mem, f->cd_pa, &f->cd);
    sync_cfg(f, SMT_OP_CFGI_CD | ((uint64_t)SID << 32));
}

/* OR bits into a dword of the stream's STE or CD as written, then invalidate it. */
static void ste_or(struct fx *f, unsigned dword, uint64_t bits)
{
    uint64_t a = f->e.strtab + (uint64_t)SID * 64 + 8ULL * dword;
    smt_w64(&f->e.mem, a, smt_r64(&f->e.mem, a) | bits);
    sync_cfg(f, SMT_OP_CFGI_STE | ((uint64_t)SID << 32));
}

static void cd_or(struct fx *f, unsigned dword, uint64_t bits)
{
    uint64_t a = f->cd_pa + 8ULL * dword;
    smt_w64(&f->e.mem, a, smt_r64(&f->e.mem, a) | bits);
    sync_cfg(f, SMT_OP_CFGI_CD | ((uint64_t)SID << 32));
}

static void xl(struct fx *f, uint32_t sid, uint64_t va, bool priv, bool write,
               struct smmu_txn_rsp *r)
{
    struct smmu_txn_req q = {.sid = sid, .iova = va, .priv = priv, .write = write};
    smmu_translate(f->e.smmu, &q, r);
}

static void drain_events(struct fx *f)
{
    uint64_t rec[4];
    while (smt_evt_pop(&f->e, rec))
        ;
}

static void expect_ok(struct fx *f, uint32_t sid)
{
    struct smmu_txn_rsp r;
    xl(f, sid, IOVA, false, false, &r);
    assert_int_equal(r.event, 0);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.pa, PA);
}

/* Aborted with `type` (0: silently, and nothing in the Event queue). */
static void expect_fault(struct fx *f, uint32_t sid, unsigned type)
{
    struct smmu_txn_rsp r;
    xl(f, sid, IOVA, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, type);
    uint64_t rec[4];
    if (type == 0 || type == SMT_C_BAD_STREAMID) {
        assert_false(smt_evt_pop(&f->e, rec)); /* C_BAD_STREAMID: CR2.RECINVSID is 0 here */
        return;
    }
    assert_true(smt_evt_pop(&f->e, rec));
    assert_int_equal(rec[0] & 0xFF, type);
    assert_int_equal(rec[0] >> 32, sid);
}

static unsigned cmd_err(struct fx *f) { return (smt_rd(&f->e, SMT_CMDQ_CONS) >> 24) & 0x7F; }

static void ack_cmd_error(struct fx *f)
{
    smt_wr(&f->e, SMT_GERRORN, smt_rd(&f->e, SMT_GERROR));
}

static int create_rc(const struct smmu_config *c, const char **why)
{
    static struct smt_mem m;
    struct smmu *s = NULL;
    if (!m.buf)
        smt_mem_init(&m, 0, 4096);
    *why = NULL;
    int rc = smmu_create(&s, c, &smt_host_ops, &m, why);
    smmu_destroy(s);
    return rc;
}

static uint32_t idr(const struct smmu_config *c, uint64_t off)
{
    static struct smt_mem m;
    struct smmu *s = NULL;
    if (!m.buf)
        smt_mem_init(&m, 0, 4096);
    assert_int_equal(smmu_create(&s, c, &smt_host_ops, &m, NULL), 0);
    uint32_t v = (uint32_t)smmu_mmio_read(s, off, 4);
    smmu_destroy(s);
    return v;
}

/* ==== configurations the architecture does not allow are refused at creation ============= */

/* §6.3.2: when IDR1.SIDSIZE >= 7, IDR0.ST_LEVEL != 0b00. */
static void test_create_sidsize7_needs_2lvl_strtab(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.strtab_2lvl = false;
    c.sidsize = 7;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    assert_non_null(strstr(why, "ST_LEVEL"));
    c.sidsize = 6;
    assert_int_equal(create_rc(&c, &why), 0);
}

/* §6.3.1: IDR0.Hyp is RES0 when S2P == 0; the model implements stage 1 only, so Hyp is
 * refused and the default reports none. */
static void test_create_hyp_needs_stage2(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.hyp = true;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    assert_non_null(strstr(why, "S2P"));
    smmu_config_default(&c);
    assert_false(c.hyp);
    assert_int_equal((idr(&c, SMT_IDR0) >> 9) & 1, 0);
}

/* §6.3.4: RIL is an SMMUv3.2 feature (not in v3.0/v3.1). */
static void test_create_ril_only_from_v32(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.arch_minor = 1;
    c.ril = true;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    assert_non_null(strstr(why, "ril"));
    c.ril = false;
    assert_int_equal(create_rc(&c, &why), 0);
}

/* §6.3.4: "RIL is 1 in an implementation of SMMUv3.2 or later". */
static void test_create_v32_needs_ril(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    for (uint8_t minor = 2; minor <= 3; minor++) {
        c.arch_minor = minor;
        c.ril = false;
        assert_int_equal(create_rc(&c, &why), EINVAL_RC);
        assert_non_null(strstr(why, "RIL"));
        c.ril = true;
        assert_int_equal(create_rc(&c, &why), 0);
    }
}

/* §6.3.4: HAD is mandatory with stage 1 from SMMUv3.1; optional in v3.0. */
static void test_create_v31_needs_had(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.had = false;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    assert_non_null(strstr(why, "HAD"));
    c.arch_minor = 0;
    c.ril = false;
    assert_int_equal(create_rc(&c, &why), 0);
}

/* §6.3.6: a 52-bit OAS needs GRAN64K, DS or D128 (the model has neither DS nor D128). */
static void test_create_oas52_needs_64k_granule(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.oas = 52;
    c.gran64k = false;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    assert_non_null(strstr(why, "gran64k"));
    c.gran64k = true;
    assert_int_equal(create_rc(&c, &why), 0);
}

/* §6.3.6: OAS 0b110 (52 bits) is Reserved in SMMUv3.0. */
static void test_create_oas52_needs_v31(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.oas = 52;
    c.arch_minor = 0;
    c.ril = false;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    assert_non_null(why);
    c.arch_minor = 1;
    assert_int_equal(create_rc(&c, &why), 0);
}

/* §6.3.1: TTENDIAN 0b01 is Reserved: no SMMU reports it. */
static void test_create_ttendian_reserved_refused(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.ttendian = 1;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    assert_non_null(why);
    c.ttendian = 2;
    assert_int_equal(create_rc(&c, &why), 0);
}

/* §6.3.2 (IDR1.ECMDQ): ECMDQs need COHACC and MSI. */
static void test_create_ecmdq_needs_coherent_and_msi(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    const char *why;
    c.arch_minor = 3;
    c.ecmdq_count = 2;
    c.coherent = false;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    c.coherent = true;
    c.msi = false;
    assert_int_equal(create_rc(&c, &why), EINVAL_RC);
    c.msi = true;
    assert_int_equal(create_rc(&c, &why), 0);
}

/* ==== ID registers agree with each other and with the version ================================ */

/* §6.3.4: from SMMUv3.2 FWB is 1 and BBML is 0b01 or 0b10 (the model: level 2); before, 0. */
static void test_idr3_fwb_bbml_from_v32(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    uint32_t v = idr(&c, SMT_IDR3);
    assert_true(v & IDR3_FWB);
    assert_int_equal(IDR3_BBML(v), 2);
    c.arch_minor = 1;
    c.ril = false;
    v = idr(&c, SMT_IDR3);
    assert_false(v & IDR3_FWB);
    assert_int_equal(IDR3_BBML(v), 0);
}

/* §6.3.4: E0PD is 1 in SMMUv3.3 and later. */
static void test_idr3_e0pd_from_v33(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    assert_false(idr(&c, SMT_IDR3) & IDR3_E0PD);
    c.arch_minor = 3;
    assert_true(idr(&c, SMT_IDR3) & IDR3_E0PD);
}

/* §6.3.2: IDR1.ATTR_PERMS_OVR (bit 26) reports whether STE.PRIVCFG/INSTCFG exist. */
static void test_idr1_attr_perms_ovr(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    assert_true(idr(&c, SMT_IDR1) & IDR1_ATTR_PERMS_OVR);
    assert_false(idr(&c, SMT_IDR1) & (1u << 27)); /* ATTR_TYPES_OVR: no MTCFG/SHCFG */
    c.attr_perms_ovr = false;
    assert_false(idr(&c, SMT_IDR1) & IDR1_ATTR_PERMS_OVR);
}

/* §6.3.1: a stage-1-only SMMU: S2P 0, S1P 1, TTF VMSAv8-64, VMW and NS1ATS RES0 without S2P,
 * STALL_MODEL 0b01, no PRI/ATOS/VATOS/HTTU/BTM, ATSRECERR 0. */
static void test_idr0_stage1_only_fields(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    uint32_t v = idr(&c, SMT_IDR0);
    assert_int_equal(v & 1, 0);               /* S2P */
    assert_int_equal((v >> 1) & 1, 1);        /* S1P */
    assert_int_equal((v >> 2) & 3, 2);        /* TTF: VMSAv8-64 */
    assert_int_equal((v >> 5) & 1, 0);        /* BTM */
    assert_int_equal((v >> 6) & 3, 0);        /* HTTU */
    assert_int_equal((v >> 11) & 1, 0);       /* NS1ATS: RES0 when S2P == 0 */
    assert_int_equal((v >> 15) & 3, 0);       /* ATOS, PRI */
    assert_int_equal((v >> 17) & 1, 0);       /* VMW: RES0 when S2P == 0 */
    assert_int_equal((v >> 20) & 1, 0);       /* VATOS */
    assert_int_equal((v >> 23) & 1, 0);       /* ATSRECERR */
    assert_int_equal((v >> 24) & 3, 1);       /* STALL_MODEL: no stall */
}

/* §6.3.2: no preset tables or queues; REL RES0 then; ECMDQ 0 by default. */
static void test_idr1_no_presets(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    assert_int_equal(idr(&c, SMT_IDR1) >> 28, 0); /* ECMDQ, TABLES_PRESET, QUEUES_PRESET, REL */
}

/* §6.3.8: AIDR.ArchMajorRev 0 (SMMUv3), ArchMinorRev = the configured version. */
static void test_aidr_follows_version(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    assert_int_equal(idr(&c, SMT_AIDR), 2);
    c.arch_minor = 1;
    c.ril = false;
    assert_int_equal(idr(&c, SMT_AIDR), 1);
}

/* ==== registers: guarded writes, bits above the OAS ========================================== */

/* §6.3.24/26/29: ADDR bits above IDR5.OAS are RES0, not required to be stored: not stored. */
static void test_base_addr_above_oas_not_stored(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.oas = 40;
    struct fx *f = up(&c, 8);
    smt_wr(&f->e, SMT_CR0, 0);
    smmu_mmio_write(f->e.smmu, SMT_STRTAB_BASE, ~0ULL, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, SMT_STRTAB_BASE, 8), 0x400000FFFFFFFFC0ULL);
    smmu_mmio_write(f->e.smmu, SMT_CMDQ_BASE, ~0ULL, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, SMT_CMDQ_BASE, 8), 0x400000FFFFFFFFFFULL);
    smmu_mmio_write(f->e.smmu, SMT_EVENTQ_BASE, ~0ULL, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, SMT_EVENTQ_BASE, 8), 0x400000FFFFFFFFFFULL);
    down(f);
}

/* §6.3.25: STRTAB_BASE_CFG is RO while SMMUEN == 1 (v3.2: writes IGNORED). */
static void test_strtab_base_cfg_ignored_while_smmuen(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_wr(&f->e, SMT_STRTAB_BASE_CFG, (1u << 16) | (6u << 6) | 4);
    assert_int_equal(smt_rd(&f->e, SMT_STRTAB_BASE_CFG), 8);
    expect_ok(f, SID);
    down(f);
}

/* §6.3.26: CMDQ_BASE is RO while CMDQEN == 1. */
static void test_cmdq_base_ignored_while_cmdqen(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t before = smmu_mmio_read(f->e.smmu, SMT_CMDQ_BASE, 8);
    smmu_mmio_write(f->e.smmu, SMT_CMDQ_BASE, 0x1000 | 3, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, SMT_CMDQ_BASE, 8), before);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 1);
    down(f);
}

/* §6.3.29: EVENTQ_BASE is RO while EVENTQEN == 1. */
static void test_eventq_base_ignored_while_eventqen(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t before = smmu_mmio_read(f->e.smmu, SMT_EVENTQ_BASE, 8);
    smmu_mmio_write(f->e.smmu, SMT_EVENTQ_BASE, 0x2000 | 2, 8);
    assert_int_equal(smmu_mmio_read(f->e.smmu, SMT_EVENTQ_BASE, 8), before);
    f->ste.v = false;
    rewrite_ste(f);
    expect_fault(f, SID, SMT_C_BAD_STE); /* the record lands in the original queue */
    down(f);
}

/* §6.3.21-23, §6.3.30-32: from SMMUv3.2 a write to an IRQ_CFGn register while the matching
 * IRQ_CTRL.*_IRQEN is 1 is IGNORED; with the enable 0 it is RW. In v3.0/v3.1 the write is
 * CONSTRAINED UNPREDICTABLE: this model takes the value. */
static void irq_cfg_write_all(struct smt_env *e, uint64_t cfg0, uint32_t cfg1, uint32_t cfg2)
{
    smmu_mmio_write(e->smmu, SMT_GERROR_IRQ_CFG0, cfg0, 8);
    smt_wr(e, SMT_GERROR_IRQ_CFG1, cfg1);
    smt_wr(e, SMT_GERROR_IRQ_CFG2, cfg2);
    smmu_mmio_write(e->smmu, SMT_EVENTQ_IRQ_CFG0, cfg0, 8);
    smt_wr(e, SMT_EVENTQ_IRQ_CFG1, cfg1);
    smt_wr(e, SMT_EVENTQ_IRQ_CFG2, cfg2);
}

static void expect_irq_cfg(struct smt_env *e, uint64_t gcfg0, uint32_t gcfg1, uint64_t ecfg0,
                           uint32_t ecfg1)
{
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_GERROR_IRQ_CFG0, 8), gcfg0);
    assert_int_equal(smt_rd(e, SMT_GERROR_IRQ_CFG1), gcfg1);
    assert_int_equal(smmu_mmio_read(e->smmu, SMT_EVENTQ_IRQ_CFG0, 8), ecfg0);
    assert_int_equal(smt_rd(e, SMT_EVENTQ_IRQ_CFG1), ecfg1);
}

static void test_irq_cfg_ignored_while_irqen_from_v32(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8); /* SMMUv3.2, IDR0.MSI */
    smt_wr(&f->e, SMT_IRQ_CTRL, 0);
    irq_cfg_write_all(&f->e, 0x1000, 11, 0x13);
    /* GERROR_IRQEN only: the GERROR set is frozen, the EVENTQ set still writable */
    smt_wr(&f->e, SMT_IRQ_CTRL, 1);
    irq_cfg_write_all(&f->e, 0x2000, 22, 0x2F);
    expect_irq_cfg(&f->e, 0x1000, 11, 0x2000, 22);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR_IRQ_CFG2), 0x13);
    /* EVENTQ_IRQEN only: the other way round */
    smt_wr(&f->e, SMT_IRQ_CTRL, 4);
    irq_cfg_write_all(&f->e, 0x3000, 33, 0x31);
    expect_irq_cfg(&f->e, 0x3000, 33, 0x2000, 22);
    assert_int_equal(smt_rd(&f->e, SMT_EVENTQ_IRQ_CFG2), 0x2F);
    /* both enabled: nothing moves; both disabled: both writable again */
    smt_wr(&f->e, SMT_IRQ_CTRL, 1 | 4);
    irq_cfg_write_all(&f->e, 0x4000, 44, 0);
    expect_irq_cfg(&f->e, 0x3000, 33, 0x2000, 22);
    smt_wr(&f->e, SMT_IRQ_CTRL, 0);
    irq_cfg_write_all(&f->e, 0x5000, 55, 0);
    expect_irq_cfg(&f->e, 0x5000, 55, 0x5000, 55);
    down(f);

    struct smmu_config c = base_cfg();
    c.arch_minor = 1;
    c.ril = false;
    f = up(&c, 8);
    smt_wr(&f->e, SMT_IRQ_CTRL, 1 | 4);
    irq_cfg_write_all(&f->e, 0x6000, 66, 0);
    expect_irq_cfg(&f->e, 0x6000, 66, 0x6000, 66);
    down(f);
}

/* §6.3.12: CR2.E2H is RES0 without IDR0.Hyp (PTM without BTM, REC_CFG_ATS without ATSRECERR). */
static void test_cr2_e2h_res0_without_hyp(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.hyp = false;
    struct fx *f = up(&c, 8);
    smt_wr(&f->e, SMT_CR0, 0);
    smt_wr(&f->e, SMT_CR2, 0xF);
    assert_int_equal(smt_rd(&f->e, SMT_CR2), 0x2); /* RECINVSID only */
    down(f);
}

/* §6.3.9: CR0.ATSCHK is RES0 without IDR0.ATS. */
static void test_cr0_atschk_res0_without_ats(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.ats = false;
    struct fx *f = up(&c, 8);
    smt_wr(&f->e, SMT_CR0, 0x1F);
    assert_int_equal(smt_rd(&f->e, SMT_CR0), 0x0D); /* SMMUEN, EVENTQEN, CMDQEN */
    down(f);
}

/* ==== queues: the SMMU aligns the base itself ================================================ */

/* §6.3.26: the effective CMDQ base is aligned to the queue size (ADDR's low bits ignored). */
static void test_cmdq_base_aligned_to_queue_size(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN);
    smmu_mmio_write(f->e.smmu, SMT_CMDQ_BASE, (f->e.cmdq + 0x800) | f->e.cmdq_log2, 8);
    smt_wr(&f->e, SMT_CMDQ_PROD, 0);
    smt_wr(&f->e, SMT_CMDQ_CONS, 0);
    f->e.prod = 0;
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0); /* written at the aligned base, slot 0 */
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(cmd_err(f), 0);
    down(f);
}

/* §6.3.29: the effective EVENTQ base is aligned to the queue size. */
static void test_eventq_base_aligned_to_queue_size(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_CMDQEN);
    smmu_mmio_write(f->e.smmu, SMT_EVENTQ_BASE, (f->e.evtq + 0x400) | f->e.evtq_log2, 8);
    smt_wr(&f->e, SMT_EVENTQ_PROD, 0);
    smt_wr(&f->e, SMT_EVENTQ_CONS, 0);
    f->e.evcons = 0;
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    f->ste.v = false;
    rewrite_ste(f);
    expect_fault(f, SID, SMT_C_BAD_STE); /* popped from the aligned base */
    down(f);
}

/* ==== Stream table: STRTAB_BASE_CFG and L1STD ================================================== */

/* §5.2: STE.Config 0b001..0b011 are Reserved and behave as 0b000: abort, no event. */
static void test_ste_config_reserved_behaves_as_abort(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    for (unsigned cfg = 1; cfg <= 3; cfg++) {
        f->ste.config = cfg;
        rewrite_ste(f);
        expect_fault(f, SID, 0);
    }
    down(f);
}

/* §5.2: Config 0b000 ignores every other field (an S1CDMax beyond SSIDSIZE, S1STALLD). */
static void test_ste_abort_ignores_other_fields(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    f->ste.config = 0;
    f->ste.s1cdmax = 31;
    f->ste.s1stalld = true;
    f->ste.strw = 3;
    rewrite_ste(f);
    expect_fault(f, SID, 0);
    down(f);
}

/* §5.2: Config 0b100 (bypass) IGNOREs the stage-1 fields, even ILLEGAL-looking ones. */
static void test_ste_bypass_ignores_stage1_fields(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    f->ste.config = 4;
    f->ste.s1cdmax = 31;
    f->ste.s1fmt = 3;
    f->ste.s1stalld = true;
    f->ste.strw = 3;
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xl(f, SID, IOVA, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_true(r.bypass);
    assert_int_equal(r.pa, IOVA);
    down(f);
}

/* §6.3.25: SPLIT values other than 6, 8, 10 are Reserved and behave as 6. */
static void program_2lvl(struct fx *f, unsigned split_field, unsigned log2size, uint64_t base)
{
    smt_wr(&f->e, SMT_CR0, 0);
    smmu_mmio_write(f->e.smmu, SMT_STRTAB_BASE, base, 8);
    smt_wr(&f->e, SMT_STRTAB_BASE_CFG, (1u << 16) | (split_field << 6) | log2size);
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    smt_cmd(&f->e, SMT_OP_CFGI_STE_RANGE, 31); /* CFGI_ALL */
    smt_run(&f->e);
}

/* A 2-level table for SPLIT 6 holding the stream's STE at StreamID (2 << 6) | 3; returns it. */
static uint32_t build_2lvl(struct fx *f, unsigned log2size, uint64_t *l1, uint64_t *l2)
{
    uint64_t l1bytes = 8ULL << (log2size - 6);
    *l1 = smt_alloc(&f->e.mem, l1bytes < 64 ? 64 : l1bytes, l1bytes < 64 ? 64 : l1bytes);
    *l2 = smt_alloc(&f->e.mem, 64ULL << 6, 64ULL << 6);
    smt_ste_write(&f->e.mem, *l2 + 3 * 64, &f->ste);
    smt_w64(&f->e.mem, *l1 + 2 * 8, *l2 | 7); /* L1STD: L2Ptr, Span 7 (64 STEs) */
    return (2u << 6) | 3;
}

static void test_strtab_split_reserved_behaves_as_6(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t l1, l2;
    uint32_t sid = build_2lvl(f, 16, &l1, &l2);
    const unsigned reserved[] = {0, 7, 9, 11, 31};
    for (unsigned i = 0; i < 5; i++) {
        program_2lvl(f, reserved[i], 16, l1);
        expect_ok(f, sid);
    }
    down(f);
}

/* §6.3.25: FMT values other than 0b00/0b01 are Reserved and behave as 0b00 (linear). */
static void test_strtab_fmt_reserved_behaves_as_linear(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    for (unsigned fmt = 2; fmt <= 3; fmt++) {
        smt_wr(&f->e, SMT_CR0, 0);
        smt_wr(&f->e, SMT_STRTAB_BASE_CFG, (fmt << 16) | (6u << 6) | 8);
        smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
        expect_ok(f, SID);
    }
    down(f);
}

/* §6.3.25: FMT and SPLIT are RES0 when IDR0.ST_LEVEL == 0b00: the table is linear. */
static void test_strtab_fmt_res0_without_st_level(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.strtab_2lvl = false;
    c.sidsize = 6;
    struct fx *f = up(&c, 6);
    smt_wr(&f->e, SMT_CR0, 0);
    smt_wr(&f->e, SMT_STRTAB_BASE_CFG, (1u << 16) | (6u << 6) | 6);
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    expect_ok(f, SID);
    down(f);
}

/* §6.3.24: a linear table's base is aligned by the SMMU to the table size,
 * ADDR[LOG2SIZE + 5:0] = 0. */
static void test_strtab_linear_base_aligned_to_table_size(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8); /* 2^8 STEs: 16 KB, allocated 16 KB-aligned */
    smt_wr(&f->e, SMT_CR0, 0);
    smmu_mmio_write(f->e.smmu, SMT_STRTAB_BASE, f->e.strtab + 0x2040, 8);
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    expect_ok(f, SID);
    down(f);
}

/* §6.3.24: a 2-level table's base is aligned to the larger of 64 bytes and the L1 table,
 * ADDR[MAX(5, LOG2SIZE - SPLIT - 1 + 3):0] = 0. */
static void test_strtab_2lvl_base_aligned_to_l1_size(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t l1, l2;
    uint32_t sid = build_2lvl(f, 16, &l1, &l2); /* 1024 L1STDs: 8 KB */
    program_2lvl(f, 6, 16, l1 + 0x1040);
    expect_ok(f, sid);
    down(f);
}

/* §5.1: the L2 array is aligned to its size: L2Ptr[5 + Span - 1:0] are taken as 0. */
static void test_l1std_l2ptr_aligned_to_span(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t l1, l2;
    uint32_t sid = build_2lvl(f, 16, &l1, &l2);
    smt_w64(&f->e.mem, l1 + 2 * 8, (l2 + 0x800) | 7); /* Span 7: a 4 KB array */
    program_2lvl(f, 6, 16, l1);
    expect_ok(f, sid);
    down(f);
}

/* §5.1: Span 12..31 is Reserved and behaves as 0: every StreamID of it is invalid. */
static void test_l1std_span_reserved_behaves_as_0(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t l1, l2;
    uint32_t sid = build_2lvl(f, 16, &l1, &l2);
    program_2lvl(f, 10, 16, l1); /* SPLIT 10 allows Span up to 11 */
    sid = (2u << 10) | 3;
    const unsigned spans[] = {12, 13, 31};
    for (unsigned i = 0; i < 3; i++) {
        smt_w64(&f->e.mem, l1 + 2 * 8, l2 | spans[i]);
        smt_cmd(&f->e, SMT_OP_CFGI_STE_RANGE, 31);
        smt_run(&f->e);
        expect_fault(f, sid, SMT_C_BAD_STREAMID);
    }
    smt_w64(&f->e.mem, l1 + 2 * 8, l2 | 7); /* a valid Span makes it reachable */
    smt_cmd(&f->e, SMT_OP_CFGI_STE_RANGE, 31);
    smt_run(&f->e);
    expect_ok(f, sid);
    down(f);
}

/* §6.3.25: the effective LOG2SIZE is MIN(LOG2SIZE, IDR1.SIDSIZE) for range checks. */
static void test_strtab_log2size_capped_at_sidsize(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.sidsize = 6;
    struct fx *f = up(&c, 8); /* LOG2SIZE 8 written */
    expect_ok(f, SID);
    smt_ste_at(&f->e, 64 + SID, &f->ste); /* an STE the 6-bit StreamID space cannot reach */
    expect_fault(f, 64 + SID, SMT_C_BAD_STREAMID);
    down(f);
}

/* §6.3.25: STRTAB_BASE alignment uses the literal LOG2SIZE, not the capped one. */
static void test_strtab_alignment_uses_literal_log2size(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.sidsize = 6;
    struct fx *f = up(&c, 8); /* table of 2^8 STEs at a 16 KB boundary */
    smt_wr(&f->e, SMT_CR0, 0);
    smmu_mmio_write(f->e.smmu, SMT_STRTAB_BASE, f->e.strtab + 0x2000, 8); /* 8 KB off */
    smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
    expect_ok(f, SID); /* aligned by 2^(8+6), not by 2^(6+6) */
    down(f);
}

/* ==== STE fields: IGNORED / RES0 / behaves as ================================================= */

/* §5.2: S1CDMax, S1Fmt and S1DSS are IGNORED when IDR1.SSIDSIZE == 0. */
static void test_ste_substream_fields_ignored_without_ssidsize(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.ssidsize = 0;
    struct fx *f = up(&c, 8);
    f->ste.s1cdmax = 5;
    f->ste.s1fmt = 1;
    f->ste.s1dss = 3;
    rewrite_ste(f);
    expect_ok(f, SID); /* S1ContextPtr is the one CD */
    down(f);
}

/* §5.2: S1Fmt and S1DSS are IGNORED when S1CDMax == 0. */
static void test_ste_s1fmt_s1dss_ignored_when_s1cdmax_0(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    f->ste.s1fmt = 3;
    f->ste.s1dss = 3;
    rewrite_ste(f);
    expect_ok(f, SID);
    f->ste.s1fmt = 2;
    f->ste.s1dss = 0;
    rewrite_ste(f);
    expect_ok(f, SID);
    down(f);
}

/* §5.2: S1Fmt != 0b00 is ILLEGAL when IDR0.CD2L == 0. */
static void test_ste_2lvl_cd_illegal_without_cd2l(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.cd2l = false;
    struct fx *f = up(&c, 8);
    f->ste.s1cdmax = 4;
    f->ste.s1dss = 2;
    for (unsigned fmt = 1; fmt <= 2; fmt++) {
        f->ste.s1fmt = fmt;
        rewrite_ste(f);
        expect_fault(f, SID, SMT_C_BAD_STE);
    }
    down(f);
}

/* §5.2: PRIVCFG and INSTCFG are RES0 when IDR1.ATTR_PERMS_OVR == 0: incoming values used. */
static void test_ste_privcfg_res0_without_attr_perms_ovr(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.attr_perms_ovr = false;
    struct fx *f = up(&c, 8);
    smt_pt_map(&f->pt, 0x50000000, PA, 3, SMT_PTE_DEFAULT); /* privileged only */
    f->ste.privcfg = 3; /* would make the request privileged */
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xl(f, SID, 0x50000000, false, false, &r);
    assert_int_equal(r.event, SMT_F_PERMISSION);
    drain_events(f);
    xl(f, SID, 0x50000000, true, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    down(f);
}

/* §5.2: PRIVCFG 0b01 is Reserved and behaves as 0b00 (use incoming). */
static void test_ste_privcfg_01_behaves_as_incoming(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_pt_map(&f->pt, 0x50000000, PA, 3, SMT_PTE_DEFAULT); /* privileged only */
    f->ste.privcfg = 1;
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xl(f, SID, 0x50000000, false, false, &r);
    assert_int_equal(r.event, SMT_F_PERMISSION);
    drain_events(f);
    xl(f, SID, 0x50000000, true, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    down(f);
}

/* §5.2: INSTCFG 0b01 is Reserved and behaves as 0b00 (use incoming). */
static void test_ste_instcfg_01_behaves_as_incoming(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_pt_map(&f->pt, 0x50000000, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_PXN);
    f->ste.instcfg = 1;
    rewrite_ste(f);
    struct smmu_txn_req q = {.sid = SID, .iova = 0x50000000, .priv = true, .exec = true};
    struct smmu_txn_rsp r;
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.event, SMT_F_PERMISSION); /* an instruction fetch of a PXN page */
    drain_events(f);
    q.exec = false;
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    down(f);
}

/* §5.2: EATS 0b10 (split-stage ATS) is ILLEGAL unless Config == 0b111. */
static void test_ste_eats_split_stage_illegal(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    ste_or(f, 1, 2ULL << STE_EATS_SHIFT);
    expect_fault(f, SID, SMT_C_BAD_STE);
    down(f);
}

/* §5.2: EATS 0b11 is Reserved without IDR3.DPT and behaves as 0b00: an ATS Translation
 * Request gets UR and F_BAD_ATS_TREQ; ordinary traffic translates. */
static void test_ste_eats_reserved_behaves_as_0(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    ste_or(f, 1, 3ULL << STE_EATS_SHIFT);
    expect_ok(f, SID);
    struct smmu_txn_req q = {.sid = SID, .iova = IOVA, .ats = true};
    struct smmu_txn_rsp r;
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.ats_cpl, SMMU_ATS_CPL_UR);
    assert_int_equal(r.event, SMT_F_BAD_ATS_TREQ);
    uint64_t rec[4];
    assert_true(smt_evt_pop(&f->e, rec));
    assert_int_equal(rec[0] & 0xFF, SMT_F_BAD_ATS_TREQ);
    down(f);
}

/* §5.2: EATS is IGNORED when IDR0.ATS == 0 (0b10 is then not ILLEGAL). */
static void test_ste_eats_ignored_without_ats(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.ats = false;
    struct fx *f = up(&c, 8);
    ste_or(f, 1, 2ULL << STE_EATS_SHIFT);
    expect_ok(f, SID);
    down(f);
}

/* §5.2: STRW is RES0 when IDR0.Hyp == 0: every value is NS-EL1, none is ILLEGAL. */
static void test_ste_strw_res0_without_hyp(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.hyp = false;
    struct fx *f = up(&c, 8);
    for (unsigned strw = 1; strw <= 3; strw++) {
        f->ste.strw = strw;
        rewrite_ste(f);
        expect_ok(f, SID);
    }
    down(f);
}

/* §5.2: S1STALLD is ILLEGAL when STALL_MODEL != 0b00, IGNORED for bypass (Config 0b100). */
static void test_ste_s1stalld_ignored_in_bypass(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    f->ste.s1stalld = true;
    rewrite_ste(f);
    expect_fault(f, SID, SMT_C_BAD_STE);
    f->ste.config = 4;
    rewrite_ste(f);
    struct smmu_txn_rsp r;
    xl(f, SID, IOVA, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_true(r.bypass);
    down(f);
}

/* §5.2: S1CSH 0b01 is Reserved and behaves as 0b00; S1CIR/S1COR are attributes of CD fetches,
 * never ILLEGAL (STE bits [71:66] = dword 1 [7:2]). */
static void test_ste_s1csh_reserved_not_illegal(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    ste_or(f, 1, (1ULL << 6) | (3ULL << 4) | (2ULL << 2));
    expect_ok(f, SID);
    down(f);
}

/* §5.2: MTCFG, MemAttr, ALLOCCFG and SHCFG are RES0 when IDR1.ATTR_TYPES_OVR == 0 (this
 * model); NSCFG is IGNORED for a Non-secure STE. STE bits [111:96] = dword 1 [47:32]. */
static void test_ste_attr_overrides_ignored(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    ste_or(f, 1, 0xFFFFULL << 32);
    expect_ok(f, SID);
    down(f);
}

/* §5.2: DRE, CONT (a hint), DCP, PPAR (RES0 without PRI), MEV and SW_RESERVED never make the
 * STE ILLEGAL. STE bits [87:76] = dword 1 [23:12]. */
static void test_ste_hint_fields_not_illegal(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    ste_or(f, 1, 0xFFFULL << 12);
    expect_ok(f, SID);
    down(f);
}

/* §5.2: the stage-2 fields (S2VMID, S2T0SZ, S2TG, S2PS, S2TTB, ...; dwords 2 and 3) are
 * IGNORED for Config 0b101 on an SMMU without S2P. */
static void test_ste_stage2_fields_ignored_stage1_only(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    ste_or(f, 2, ~0ULL);
    ste_or(f, 3, ~0ULL);
    expect_ok(f, SID);
    down(f);
}

/* ==== CD fields ============================================================================ */

/* §5.4: the walk attributes IR0/OR0 (any value), ASET and NSCFG0/1 (IGNORED for a Non-secure
 * stream) never make the CD ILLEGAL. */
static void test_cd_walk_attributes_not_illegal(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    cd_or(f, 0, (0xFULL << 8) | (1ULL << 47));
    cd_or(f, 1, 1ULL << 0);
    cd_or(f, 2, 1ULL << 0);
    expect_ok(f, SID);
    down(f);
}

/* §5.4: feature bits RES0 on this SMMU: HAFT (bit 67, HTTU != 0b11), AIE (bit 131, no
 * IDR3.AIE), DS (bit 186, no IDR5.DS), PIE (bit 187, no S1PI). Set, they are ignored. */
static void test_cd_unimplemented_feature_bits_ignored(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    cd_or(f, 1, 1ULL << 3);
    cd_or(f, 2, (1ULL << 3) | (1ULL << 58) | (1ULL << 59));
    expect_ok(f, SID);
    down(f);
}

/* §5.4: SH0 0b01 is Reserved and behaves as 0b00: not ILLEGAL. */
static void test_cd_sh0_reserved_not_illegal(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    cd_or(f, 0, 1ULL << 12);
    expect_ok(f, SID);
    down(f);
}

/* §5.4: IPS 0b110 (and 0b111) are Reserved in SMMUv3.0 and behave as 0b101 (48 bits). */
static void test_cd_ips_reserved_v30_behaves_as_48(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.arch_minor = 0;
    c.ril = false;
    struct fx *f = up(&c, 8);
    smt_pt_map(&f->pt, 0x60000000, 1ULL << 47, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    for (unsigned ips = 6; ips <= 7; ips++) {
        f->cd.ips = ips;
        rewrite_cd(f);
        expect_ok(f, SID);
        struct smmu_txn_rsp r;
        xl(f, SID, 0x60000000, false, false, &r); /* a 48-bit output is in range */
        assert_int_equal(r.status, SMMU_TXN_OK);
        assert_int_equal(r.pa, 1ULL << 47);
    }
    down(f);
}

/* §5.4: the effective IPS is MIN(CD.IPS, IDR5.OAS): an output above the OAS is F_ADDR_SIZE. */
static void test_cd_ips_capped_at_oas(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.oas = 40;
    struct fx *f = up(&c, 8); /* CD.IPS 0b101: 48 bits */
    smt_pt_map(&f->pt, 0x60000000, 1ULL << 41, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    expect_ok(f, SID);
    struct smmu_txn_rsp r;
    xl(f, SID, 0x60000000, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, SMT_F_ADDR_SIZE);
    down(f);
}

/* §6.3.4 / §5.4: without IDR3.HAD, CD.HAD0/1 are IGNORED: APTable still applies. */
static void test_cd_had_ignored_without_idr3_had(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.arch_minor = 0; /* HAD is optional only in v3.0 */
    c.ril = false;
    c.had = false;
    struct fx *f = up(&c, 8);
    uint64_t tda = smt_pt_desc_addr(&f->pt, IOVA, 2); /* the level-2 table descriptor */
    smt_w64(&f->e.mem, tda, smt_r64(&f->e.mem, tda) | (1ULL << 62)); /* APTable[1]: RO */
    f->cd.had0 = true;
    rewrite_cd(f);
    struct smmu_txn_rsp r;
    xl(f, SID, IOVA, false, true, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, SMT_F_PERMISSION);
    down(f);
}

/* §5.4 (SMMUv3.3, IDR3.E0PD): CD.E0PD0 makes every unprivileged access through TTB0 fault with
 * F_TRANSLATION; privileged ones translate. */
static void test_cd_e0pd_faults_unprivileged_v33(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.arch_minor = 3;
    struct fx *f = up(&c, 8);
    cd_or(f, 1, 1ULL << 2); /* E0PD0 = CD bit 66 */
    for (int pass = 0; pass < 2; pass++) { /* before and after the TLB holds the page */
        struct smmu_txn_rsp r;
        xl(f, SID, IOVA, false, false, &r);
        assert_int_equal(r.event, SMT_F_TRANSLATION);
        drain_events(f);
        xl(f, SID, IOVA, true, false, &r);
        assert_int_equal(r.status, SMMU_TXN_OK);
    }
    down(f);
}

/* §5.4: E0PD0/1 are RES0 when IDR3.E0PD == 0 (before SMMUv3.3). */
static void test_cd_e0pd_res0_before_v33(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    cd_or(f, 1, 1ULL << 2);
    expect_ok(f, SID);
    down(f);
}

/* §5.4: ENDI is IGNORED when EPD0 and EPD1 are both 1 (TTENDIAN does not make it ILLEGAL). */
static void test_cd_endi_ignored_when_both_epd(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.ttendian = 2; /* little-endian only */
    struct fx *f = up(&c, 8);
    f->cd.endi = true;
    rewrite_cd(f);
    expect_fault(f, SID, SMT_C_BAD_CD);
    f->cd.epd0 = true;
    rewrite_cd(f);
    expect_fault(f, SID, SMT_F_TRANSLATION);
    down(f);
}

/* §5.4: with EPD0 == 1, T0SZ, TG0 and TTB0 are IGNORED (no ILLEGAL from them). */
static void test_cd_ttb0_fields_ignored_when_epd0(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    f->cd.epd0 = true;
    f->cd.t0sz = 0;
    f->cd.tg0 = 3;
    f->cd.ttb0 = 1ULL << 50;
    rewrite_cd(f);
    expect_fault(f, SID, SMT_F_TRANSLATION);
    down(f);
}

/* §5.4: with EPD1 == 1, T1SZ, TG1 (0b00 Reserved) and TTB1 are IGNORED. */
static void test_cd_ttb1_fields_ignored_when_epd1(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    f->cd.epd1 = true;
    f->cd.t1sz = 0;
    f->cd.tg1 = 0;
    f->cd.ttb1 = 1ULL << 50;
    rewrite_cd(f);
    expect_ok(f, SID);
    down(f);
}

/* ==== commands: range invalidation encodings and other reserved values ======================= */

/* §4.4.1.1: with IDR5.DS == 0, SCALE is bits [24:20]; bit 25 is RES0 (CERROR_ILL here). */
static void test_tlbi_scale_bit25_res0_without_ds(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA | (1ULL << 12) | (1ULL << 25), 1ULL << 10); /* NUM 1 */
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(cmd_err(f), 1);
    down(f);
    f = up(NULL, 8);
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA | (1ULL << 12) | (16ULL << 20), 1ULL << 10); /* control */
    assert_int_equal(smt_run(&f->e), 1);
    down(f);
}

/* §4.4.1.1: with TG == 0b00, NUM, SCALE and TTL are RES0 (CERROR_ILL here); with TG != 0,
 * 16K + TTL 0b01 without DS raises CERROR_ILL. */
static void test_tlbi_range_fields_res0_when_tg_0(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    const uint64_t bad[][2] = {
        {SMT_OP_TLBI_NH_VAA | (1ULL << 12), 0}, /* NUM */
        {SMT_OP_TLBI_NH_VAA | (1ULL << 20), 0}, /* SCALE */
        {SMT_OP_TLBI_NH_VAA, 1ULL << 8},        /* TTL */
        {SMT_OP_TLBI_NH_VAA, (2ULL << 10) | (1ULL << 8)},
    };
    for (unsigned i = 0; i < 4; i++) {
        smt_cmd(&f->e, bad[i][0], bad[i][1]);
        assert_int_equal(smt_run(&f->e), 0);
        assert_int_equal(cmd_err(f), 1);
        /* skip the command: CONS past it, then acknowledge */
        uint32_t cons = (uint32_t)smt_rd(&f->e, SMT_CMDQ_CONS) & 0xFFFFF;
        smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN);
        smt_wr(&f->e, SMT_CMDQ_CONS, (cons + 1) & 0x1FF);
        smt_wr(&f->e, SMT_CR0, SMT_CR0_SMMUEN | SMT_CR0_EVENTQEN | SMT_CR0_CMDQEN);
        ack_cmd_error(f);
    }
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA | (31ULL << 12) | (31ULL << 20), (3ULL << 10) | (3ULL << 8));
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(cmd_err(f), 0);
    down(f);
}

/* §4.4.1.1: with TG != 0, NUM == 0, SCALE == 0 and TTL == 0b00 together are Reserved:
 * CERROR_ILL. Any one of them non-zero is a valid command. */
static void test_tlbi_tg_without_range_or_ttl_reserved(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA, 0x1000 | (1ULL << 10));
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(cmd_err(f), 1);
    down(f);
    f = up(NULL, 8);
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA, 0x1000 | (1ULL << 10) | (3ULL << 8)); /* TTL 3 */
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA | (1ULL << 12), 0x1000 | (1ULL << 10)); /* NUM 1 */
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA | (1ULL << 20), 0x1000 | (1ULL << 10)); /* SCALE 1 */
    assert_int_equal(smt_run(&f->e), 3);
    assert_int_equal(cmd_err(f), 0);
    down(f);
}

/* §4.4.1.1: without IDR5.DS, TG 16K with TTL 0b01 is Reserved and treated as TTL 0b00: a
 * valid range when NUM or SCALE is non-zero. (The model matches entries of any granule:
 * over-invalidation, which §4.4 permits.) */
static void test_tlbi_16k_ttl1_treated_as_ttl0(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t da = smt_pt_map(&f->pt, 0x70000000, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    xl(f, SID, 0x70000000, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_w64(&f->e.mem, da, 0);
    /* NUM 1: two 16K granules from 0x70000000, TTL 0b01 */
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA | (1ULL << 12), 0x70000000 | (2ULL << 10) | (1ULL << 8));
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
    assert_int_equal(cmd_err(f), 0);
    xl(f, SID, 0x70000000, false, false, &r);
    assert_int_equal(r.event, SMT_F_TRANSLATION);
    down(f);
}

/* §4.4.1.1: a range past the top of the address space does not wrap into the bottom. */
static void test_tlbi_range_does_not_wrap(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t da = smt_pt_map(&f->pt, 0x1000, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    xl(f, SID, 0x1000, false, false, &r); /* cached */
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_w64(&f->e.mem, da, 0);
    /* 4K granules, (31 + 1) * 2^31 of them from the last page of the VA space */
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA | (31ULL << 12) | (31ULL << 20),
            0xFFFFFFFFFFFFF000ULL | (1ULL << 10));
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
    xl(f, SID, 0x1000, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK); /* still the cached entry */
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA, 0x1000);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
    xl(f, SID, 0x1000, false, false, &r);
    assert_int_equal(r.event, SMT_F_TRANSLATION); /* control: the entry was there to remove */
    down(f);
}

/* §4.4.1.1: TTL only narrows the required scope; over-invalidating is permitted (§4.4). A
 * TTL naming level 3 still removes a level-2 block in this model. */
static void test_tlbi_ttl_hint_over_invalidates(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t da = smt_pt_map(&f->pt, 0x80000000, 0x42000000, 2, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    xl(f, SID, 0x80001000, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    assert_int_equal(r.page_shift, 21);
    smt_w64(&f->e.mem, da, 0);
    smt_cmd(&f->e, SMT_OP_TLBI_NH_VAA, 0x80000000 | (1ULL << 10) | (3ULL << 8));
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
    xl(f, SID, 0x80001000, false, false, &r);
    assert_int_equal(r.event, SMT_F_TRANSLATION);
    down(f);
}

/* §4.7.3: CMD_SYNC.CS 0b11 is Reserved: CERROR_ILL. */
static void test_cmd_sync_cs_reserved_ill(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (3ULL << 12), 0);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(cmd_err(f), 1);
    down(f);
}

/* §4.7.3: CS == SIG_SEV without IDR0.SEV behaves as SIG_NONE: completes, no event. */
static void test_cmd_sync_sev_without_idr0_sev(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.sev = false;
    struct fx *f = up(&c, 8);
    assert_int_equal((smt_rd(&f->e, SMT_IDR0) >> 14) & 1, 0);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC | (2ULL << 12), 0);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(cmd_err(f), 0);
    assert_int_equal(f->e.mem.nirq[SMT_IRQ_SEV_LINE], 0);
    down(f);
}

/* §4.4.2: on a stage-1-only SMMU the VMID of CMD_TLBI_NH_* is RES0 and need not be checked;
 * the SMMU may invalidate on an UNKNOWN VMID. This model accepts it and invalidates (every
 * entry has VMID 0): over-invalidation. */
static void test_tlbi_nh_vmid_unchecked_stage1_only(void **state)
{
    (void)state;
    struct fx *f = up(NULL, 8);
    uint64_t da = smt_pt_map(&f->pt, 0x1000, PA, 3, SMT_PTE_DEFAULT | SMT_PTE_AP_EL0);
    struct smmu_txn_rsp r;
    xl(f, SID, 0x1000, false, false, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_w64(&f->e.mem, da, 0);
    smt_cmd(&f->e, SMT_OP_TLBI_NH_ALL | (5ULL << 32), 0);
    smt_cmd(&f->e, SMT_OP_CMD_SYNC, 0);
    assert_int_equal(smt_run(&f->e), 2);
    assert_int_equal(cmd_err(f), 0);
    xl(f, SID, 0x1000, false, false, &r);
    assert_int_equal(r.event, SMT_F_TRANSLATION);
    down(f);
}

/* §4.4.2: TLBI_EL2_* are CERROR_ILL when IDR0.Hyp == 0. */
static void test_tlbi_el2_ill_without_hyp(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.hyp = false;
    struct fx *f = up(&c, 8);
    smt_cmd(&f->e, SMT_OP_TLBI_EL2_ASID, 0);
    assert_int_equal(smt_run(&f->e), 0);
    assert_int_equal(cmd_err(f), 1);
    down(f);
}

/* ==== addresses above the OAS ================================================================ */

/* §3.4.3: queue and MSI addresses beyond the OAS are truncated to the OAS: a CMD_SYNC MSI to
 * MSIAddr | 2^45 with a 40-bit OAS lands at MSIAddr and is no abort. */
static void test_msi_address_above_oas_truncated(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.oas = 40;
    struct fx *f = up(&c, 8);
    uint64_t buf = smt_alloc(&f->e.mem, 64, 64);
    uint64_t d0 = SMT_OP_CMD_SYNC | (1ULL << 12) | (0xCAFEF00DULL << 32); /* SIG_IRQ, MSIData */
    smt_cmd(&f->e, d0, (buf | (1ULL << 45)) & 0x000FFFFFFFFFFFFCULL);
    assert_int_equal(smt_run(&f->e), 1);
    assert_int_equal(smt_rd(&f->e, SMT_GERROR) & SMT_GERROR_MSI_CMDQ_ABT, 0);
    assert_int_equal(smt_r32(&f->e.mem, buf), 0xCAFEF00D);
    down(f);
}

/* §3.4.3: an STE fetch address beyond the OAS either is truncated or gives F_STE_FETCH
 * (CONSTRAINED UNPREDICTABLE); this model aborts the fetch: F_STE_FETCH. */
static void test_l1std_l2ptr_above_oas_aborts_fetch(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.oas = 40;
    struct fx *f = up(&c, 8);
    uint64_t l1, l2;
    uint32_t sid = build_2lvl(f, 16, &l1, &l2);
    smt_w64(&f->e.mem, l1 + 2 * 8, (l2 | (1ULL << 41)) | 7);
    program_2lvl(f, 6, 16, l1);
    expect_fault(f, sid, SMT_F_STE_FETCH);
    down(f);
}

/* §3.4.3 (SMMUv3.1+): S1ContextPtr beyond the OAS of a stage-1-only STE gives C_BAD_STE. */
static void test_s1contextptr_above_oas_bad_ste(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.oas = 40;
    struct fx *f = up(&c, 8);
    f->ste.ctxptr = f->cd_pa | (1ULL << 40);
    rewrite_ste(f);
    expect_fault(f, SID, SMT_C_BAD_STE);
    down(f);
}

/* CD.TTB0 outside the effective IPS: ILLEGAL, C_BAD_CD (§5.4). */
static void test_cd_ttb0_above_eff_ips_bad_cd(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.oas = 40;
    struct fx *f = up(&c, 8); /* CD.IPS 48 bits, effective 40 */
    f->cd.ttb0 |= 1ULL << 44;
    rewrite_cd(f);
    expect_fault(f, SID, SMT_C_BAD_CD);
    down(f);
}

/* §3.4.3 (SMMUv3.1+): L1CD.L2Ptr beyond the OAS gives C_BAD_SUBSTREAMID. */
static void test_l1cd_l2ptr_above_oas_bad_substreamid(void **state)
{
    (void)state;
    struct smmu_config c = base_cfg();
    c.oas = 40;
    struct fx *f = up(&c, 8);
    uint64_t l1 = smt_alloc(&f->e.mem, 4096, 4096);
    uint64_t leaf = smt_alloc(&f->e.mem, 4096, 4096);
    smt_cd_write(&f->e.mem, leaf + 64 * 5, &f->cd);
    smt_w64(&f->e.mem, l1 + 8, leaf | 1);
    f->ste.ctxptr = l1;
    f->ste.s1cdmax = 8;
    f->ste.s1fmt = 1;
    f->ste.s1dss = 0;
    rewrite_ste(f);
    struct smmu_txn_req q = {.sid = SID, .ssv = true, .ssid = 64 + 5, .iova = IOVA};
    struct smmu_txn_rsp r;
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_OK);
    smt_w64(&f->e.mem, l1 + 8, leaf | (1ULL << 42) | 1);
    sync_cfg(f, SMT_OP_CFGI_CD | ((uint64_t)SID << 32) | ((uint64_t)(64 + 5) << 12));
    smmu_translate(f->e.smmu, &q, &r);
    assert_int_equal(r.status, SMMU_TXN_ABORT);
    assert_int_equal(r.event, SMT_C_BAD_SUBSTREAMID);
    down(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_sidsize7_needs_2lvl_strtab),
        cmocka_unit_test(test_create_ril_only_from_v32),
        cmocka_unit_test(test_create_v32_needs_ril),
        cmocka_unit_test(test_create_v31_needs_had),
        cmocka_unit_test(test_create_oas52_needs_64k_granule),
        cmocka_unit_test(test_create_oas52_needs_v31),
        cmocka_unit_test(test_create_ttendian_reserved_refused),
        cmocka_unit_test(test_create_hyp_needs_stage2),
        cmocka_unit_test(test_create_ecmdq_needs_coherent_and_msi),
        cmocka_unit_test(test_idr3_fwb_bbml_from_v32),
        cmocka_unit_test(test_idr3_e0pd_from_v33),
        cmocka_unit_test(test_idr1_attr_perms_ovr),
        cmocka_unit_test(test_idr0_stage1_only_fields),
        cmocka_unit_test(test_idr1_no_presets),
        cmocka_unit_test(test_aidr_follows_version),
        cmocka_unit_test(test_base_addr_above_oas_not_stored),
        cmocka_unit_test(test_strtab_base_cfg_ignored_while_smmuen),
        cmocka_unit_test(test_cmdq_base_ignored_while_cmdqen),
        cmocka_unit_test(test_eventq_base_ignored_while_eventqen),
        cmocka_unit_test(test_irq_cfg_ignored_while_irqen_from_v32),
        cmocka_unit_test(test_cr2_e2h_res0_without_hyp),
        cmocka_unit_test(test_cr0_atschk_res0_without_ats),
        cmocka_unit_test(test_cmdq_base_aligned_to_queue_size),
        cmocka_unit_test(test_eventq_base_aligned_to_queue_size),
        cmocka_unit_test(test_ste_config_reserved_behaves_as_abort),
        cmocka_unit_test(test_ste_abort_ignores_other_fields),
        cmocka_unit_test(test_ste_bypass_ignores_stage1_fields),
        cmocka_unit_test(test_strtab_split_reserved_behaves_as_6),
        cmocka_unit_test(test_strtab_fmt_reserved_behaves_as_linear),
        cmocka_unit_test(test_strtab_fmt_res0_without_st_level),
        cmocka_unit_test(test_strtab_linear_base_aligned_to_table_size),
        cmocka_unit_test(test_strtab_2lvl_base_aligned_to_l1_size),
        cmocka_unit_test(test_l1std_l2ptr_aligned_to_span),
        cmocka_unit_test(test_l1std_span_reserved_behaves_as_0),
        cmocka_unit_test(test_strtab_log2size_capped_at_sidsize),
        cmocka_unit_test(test_strtab_alignment_uses_literal_log2size),
        cmocka_unit_test(test_ste_substream_fields_ignored_without_ssidsize),
        cmocka_unit_test(test_ste_s1fmt_s1dss_ignored_when_s1cdmax_0),
        cmocka_unit_test(test_ste_2lvl_cd_illegal_without_cd2l),
        cmocka_unit_test(test_ste_privcfg_res0_without_attr_perms_ovr),
        cmocka_unit_test(test_ste_privcfg_01_behaves_as_incoming),
        cmocka_unit_test(test_ste_instcfg_01_behaves_as_incoming),
        cmocka_unit_test(test_ste_eats_split_stage_illegal),
        cmocka_unit_test(test_ste_eats_reserved_behaves_as_0),
        cmocka_unit_test(test_ste_eats_ignored_without_ats),
        cmocka_unit_test(test_ste_strw_res0_without_hyp),
        cmocka_unit_test(test_ste_s1stalld_ignored_in_bypass),
        cmocka_unit_test(test_ste_s1csh_reserved_not_illegal),
        cmocka_unit_test(test_ste_attr_overrides_ignored),
        cmocka_unit_test(test_ste_hint_fields_not_illegal),
        cmocka_unit_test(test_ste_stage2_fields_ignored_stage1_only),
        cmocka_unit_test(test_cd_walk_attributes_not_illegal),
        cmocka_unit_test(test_cd_unimplemented_feature_bits_ignored),
        cmocka_unit_test(test_cd_sh0_reserved_not_illegal),
        cmocka_unit_test(test_cd_ips_reserved_v30_behaves_as_48),
        cmocka_unit_test(test_cd_ips_capped_at_oas),
        cmocka_unit_test(test_cd_had_ignored_without_idr3_had),
        cmocka_unit_test(test_cd_e0pd_faults_unprivileged_v33),
        cmocka_unit_test(test_cd_e0pd_res0_before_v33),
        cmocka_unit_test(test_cd_endi_ignored_when_both_epd),
        cmocka_unit_test(test_cd_ttb0_fields_ignored_when_epd0),
        cmocka_unit_test(test_cd_ttb1_fields_ignored_when_epd1),
        cmocka_unit_test(test_tlbi_scale_bit25_res0_without_ds),
        cmocka_unit_test(test_tlbi_range_fields_res0_when_tg_0),
        cmocka_unit_test(test_tlbi_tg_without_range_or_ttl_reserved),
        cmocka_unit_test(test_tlbi_16k_ttl1_treated_as_ttl0),
        cmocka_unit_test(test_tlbi_range_does_not_wrap),
        cmocka_unit_test(test_tlbi_ttl_hint_over_invalidates),
        cmocka_unit_test(test_cmd_sync_cs_reserved_ill),
        cmocka_unit_test(test_cmd_sync_sev_without_idr0_sev),
        cmocka_unit_test(test_tlbi_nh_vmid_unchecked_stage1_only),
        cmocka_unit_test(test_tlbi_el2_ill_without_hyp),
        cmocka_unit_test(test_msi_address_above_oas_truncated),
        cmocka_unit_test(test_l1std_l2ptr_above_oas_aborts_fetch),
        cmocka_unit_test(test_s1contextptr_above_oas_bad_ste),
        cmocka_unit_test(test_cd_ttb0_above_eff_ips_bad_cd),
        cmocka_unit_test(test_l1cd_l2ptr_above_oas_bad_substreamid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
