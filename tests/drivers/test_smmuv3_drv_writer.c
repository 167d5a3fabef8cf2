/* test_smmuv3_drv_writer.c — the STE/CD entry writer alone, as Linux's KUnit arm-smmu-v3-test.c
 * checks it: a recorder replaces the CFGI+CMD_SYNC, counts syncs, and at every sync checks that
 * the bits the SMMU would use are those of the old or of the new entry (or that the entry is
 * invalid, which only a breaking update may show). Expected sync counts are KUnit's facts
 * (reference/linux-dma-path.md §5.9). No SMMU model is needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/arm-smmu-v3.h"

struct recorder {
	struct arm_smmu_entry_writer w;
	const uint64_t *init, *target;
	uint64_t *entry;
	unsigned syncs;
	bool invalid_seen;
	bool torn;
};

static void record_sync(struct arm_smmu_entry_writer *w)
{
	struct recorder *r = (struct recorder *)w;
	uint64_t used[8];
	bool as_init = true, as_target = true;

	r->syncs++;
	if (!(r->entry[0] & (r->w.ops->get_used == arm_smmu_get_ste_used ? STRTAB_STE_0_V
									  : CTXDESC_CD_0_V))) {
		r->invalid_seen = true;
		return;
	}
	r->w.ops->get_used(r->entry, used);
	for (unsigned i = 0; i < 8; i++) {
		as_init &= (r->entry[i] & used[i]) == (r->init[i] & used[i]);
		as_target &= (r->entry[i] & used[i]) == (r->target[i] & used[i]);
	}
	if (!as_init && !as_target)
		r->torn = true;
}

static const struct arm_smmu_entry_writer_ops ste_ops = { arm_smmu_get_ste_used, record_sync };
static const struct arm_smmu_entry_writer_ops cd_ops = { arm_smmu_get_cd_used, record_sync };

static void check(const struct arm_smmu_entry_writer_ops *ops, const uint64_t *init,
		  const uint64_t *target, unsigned want_syncs, bool want_hitless)
{
	uint64_t entry[8];
	struct recorder r = { .w = { .ops = ops }, .init = init, .target = target, .entry = entry };

	memcpy(entry, init, sizeof(entry));
	arm_smmu_write_entry(&r.w, entry, target);
	assert_memory_equal(entry, target, sizeof(entry));
	assert_int_equal(r.syncs, want_syncs);
	assert_false(r.torn);
	assert_int_equal(!r.invalid_seen, want_hitless);
}

/* KUnit's S1 CD-table STE: CD table at 0xF0F0F0F0F0F0, S1CDMAX 0xFF, 64K-L2 format, ATS on. */
static void cdtable_ste(uint64_t *ste, unsigned s1dss, uint64_t table)
{
	arm_smmu_make_cdtable_ste(ste, table);
	ste[0] |= arm_field_prep(STRTAB_STE_0_S1FMT, 2) | arm_field_prep(STRTAB_STE_0_S1CDMAX, 0xff);
	ste[1] &= ~STRTAB_STE_1_S1DSS;
	ste[1] |= arm_field_prep(STRTAB_STE_1_S1DSS, s1dss) | arm_field_prep(STRTAB_STE_1_EATS, 1);
	if (s1dss == STRTAB_STE_1_S1DSS_BYPASS)
		ste[1] |= arm_field_prep(STRTAB_STE_1_SHCFG, STRTAB_STE_1_SHCFG_INCOMING);
}

static void test_ste_bypass_abort(void **state)
{
	uint64_t bypass[8], abrt[8];

	(void)state;
	arm_smmu_make_bypass_ste(bypass);
	arm_smmu_make_abort_ste(abrt);
	check(&ste_ops, bypass, abrt, 2, true);
	check(&ste_ops, abrt, bypass, 2, true);
}

static void test_ste_cdtable_abort_bypass(void **state)
{
	uint64_t cdt[8], abrt[8], bypass[8];

	(void)state;
	cdtable_ste(cdt, STRTAB_STE_1_S1DSS_SSID0, 0xF0F0F0F0F0F0ull);
	arm_smmu_make_abort_ste(abrt);
	arm_smmu_make_bypass_ste(bypass);
	check(&ste_ops, cdt, abrt, 2, true);
	check(&ste_ops, abrt, cdt, 2, true);
	check(&ste_ops, cdt, bypass, 3, true);
	check(&ste_ops, bypass, cdt, 3, true);
}

static void test_ste_s1dss_change(void **state)
{
	uint64_t ssid0[8], byp[8], ste_bypass[8];

	(void)state;
	cdtable_ste(ssid0, STRTAB_STE_1_S1DSS_SSID0, 0xF0F0F0F0F0F0ull);
	cdtable_ste(byp, STRTAB_STE_1_S1DSS_BYPASS, 0xF0F0F0F0F0F0ull);
	arm_smmu_make_bypass_ste(ste_bypass);
	check(&ste_ops, ssid0, byp, 1, true);
	check(&ste_ops, byp, ssid0, 1, true);
	check(&ste_ops, byp, ste_bypass, 2, true);
	check(&ste_ops, ste_bypass, byp, 2, true);
}

static void test_ste_non_hitless(void **state)
{
	uint64_t a[8], b[8];

	(void)state;
	/* S1DSS and the table pointer both change: qwords 0 and 1 — break before make. */
	cdtable_ste(a, STRTAB_STE_1_S1DSS_SSID0, 0xF0F0F0F0F0F0ull);
	cdtable_ste(b, STRTAB_STE_1_S1DSS_BYPASS, 0x4B4B4B4B4B40ull);
	check(&ste_ops, a, b, 3, false);
}

static void s1_cd(uint64_t *cd, uint16_t asid)
{
	memset(cd, 0, 64);
	cd[0] = arm_field_prep(CTXDESC_CD_0_TCR_T0SZ, 16) | CTXDESC_CD_0_TCR_EPD1 | CTXDESC_CD_0_V |
		arm_field_prep(CTXDESC_CD_0_TCR_IPS, 5) | CTXDESC_CD_0_AA64 | CTXDESC_CD_0_R |
		CTXDESC_CD_0_A | CTXDESC_CD_0_ASET | arm_field_prep(CTXDESC_CD_0_ASID, asid);
	cd[1] = 0xdaf000;
	cd[3] = 0x0004ff44;
}

static void test_cd_updates(void **state)
{
	uint64_t empty[8] = { 0 }, a[8], b[8];

	(void)state;
	s1_cd(a, 1997);
	s1_cd(b, 778);
	check(&cd_ops, empty, a, 2, false);
	check(&cd_ops, a, empty, 2, false);
	check(&cd_ops, a, b, 1, true);
	check(&cd_ops, b, a, 1, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ste_bypass_abort),
		cmocka_unit_test(test_ste_cdtable_abort_bypass),
		cmocka_unit_test(test_ste_s1dss_change),
		cmocka_unit_test(test_ste_non_hitless),
		cmocka_unit_test(test_cd_updates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
