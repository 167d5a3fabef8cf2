/* test_kernel_era.c — the kernel-era table (kernel_era.h): versions parsed or refused; each row
 * at the version this file expects (written from the kernel's history, docs/kernel-eras.md,
 * not read from the table), and across each row's boundary exactly its options change; and the
 * options reach dma-iommu's IOVA domain (magazine size, depot, the PCI 32-bit latch) on the fake
 * driver. The io-pgtable split is tested in tests/drivers/test_io_pgtable.c, the bench figures
 * in tests/cli/kernel.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "iommulab/intel_iommu_drv.h"
#include "iommulab/kernel_era.h"
#include "iommulab/nvme.h"
#include "iommu/dma_test_util.h"

static struct tu T;

static int setup(void **state)
{
	(void)state;
	return tu_setup(&T, false) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_teardown(&T);
	return 0;
}

/* ---- parsing ------------------------------------------------------------------------------ */

static void versions_parsed_or_refused(void **state)
{
	static const char *const good[] = { "4.14", "4.19", "4.20", "5.0", "5.4", "5.10", "5.15",
					     "5.19", "6.0", "6.1", "6.6", "6.12", "6.19", "7.0",
					     "7.9", "latest" };
	static const char *const bad[] = { "", "5", "5.", ".4", "5.a", "a.4", "05.4", "5.04",
					   "4.13", "4.21", "5.20", "6.20", "8.0", "3.10", "5.4.1",
					   "latest2", " 5.4", "5.4 ", "-5.4", "5.-4", "1000.1" };
	struct ilab_kernel_era e;
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(ilab_kernel_era_parse(good[i], &e, err, sizeof(err)), 0);
		assert_string_equal(e.name, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(ilab_kernel_era_parse(bad[i], &e, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "kernel: "));
	}
	assert_int_equal(ilab_kernel_era_parse("5.10", &e, err, sizeof(err)), 0);
	assert_int_equal(e.version, 510);
}

/* ---- the rows ----------------------------------------------------------------------------- */

/* What a layer can see of an era: the options it is given. */
enum obs { O_CMDQ, O_RIL, O_MAP_PAGES, O_MAG, O_SAC, O_DEPOT, O_FQ, O_STE, O_SPLIT, O_FAIR,
	   O_SYNC_MODE, O_SYNC_ORDER, O_LOOKUP, O_LAZY, O_IH, O_BATCH, O_NR };

static void observe(unsigned version, long v[O_NR])
{
	struct ilab_kernel_era e;
	struct ilab_smmu_drv_opts d = { 0 };
	struct ilab_dma_options o;
	struct ilab_intel_iommu_opts vt = { 0 };
	struct ilab_nvme_cfg nc = { 0 };

	ilab_kernel_era_at(version, &e);
	ilab_kernel_era_nvme_opts(&e, &nc);
	ilab_kernel_era_drv_opts(&e, &d);
	ilab_kernel_era_vtd_opts(&e, &vt);
	ilab_dma_options_default(&o);
	ilab_kernel_era_dma_opts(&e, &o);
	v[O_CMDQ] = (long)d.cmdq_mode * 100 + (long)d.cmdq_log2;
	v[O_RIL] = d.no_ril;
	v[O_MAP_PAGES] = o.use_map_pages;
	v[O_MAG] = o.iova_mag_size;
	v[O_SAC] = o.sac_latch;
	v[O_DEPOT] = o.iova_depot;
	v[O_FQ] = o.fq_kind * 1000000L + (long)o.fq_size; /* the queue dma-iommu is given */
	v[O_STE] = e.ste_hitless;
	v[O_SPLIT] = d.pgtable_split_blocks;
	v[O_FAIR] = d.cmdq_fair_lock;
	v[O_SYNC_MODE] = d.sync_mode;
	v[O_SYNC_ORDER] = d.cmdq_sync_unordered;
	v[O_LOOKUP] = o.lookup;
	/* lazy on an SMMUv3 a backport (1) or the era's own (0); VT-d's never a backport */
	v[O_LAZY] = ilab_kernel_era_lazy_is_backport(&e, true) * 10 +
		    ilab_kernel_era_lazy_is_backport(&e, false);
	v[O_IH] = vt.drop_ih;
	v[O_BATCH] = nc.no_comp_batch;
}

/* The release before v: 5.0 follows 4.20, 6.0 follows 5.19, 7.0 follows 6.19. */
static unsigned prev_release(unsigned v)
{
	if (v % 100)
		return v - 1;
	return v == 500 ? 420 : v - 100 + 19;
}

static const struct {
	const char *key;
	unsigned since;
	int changes; /* the observation that changes there, -1: none an SMMUv3 device sees */
	long before, after;
} rows[] = {
	{ "sync_msi", 415, O_SYNC_MODE, ILAB_SMMU_SYNC_CONS, ILAB_SMMU_SYNC_AUTO },
	{ "lookup", 419, O_LOOKUP, ILAB_DMA_LOOKUP_REFCOUNT, ILAB_DMA_LOOKUP_DIRECT },
	{ "sync_order", 420, O_SYNC_ORDER, 1, 0 },
	{ "non_strict", 420, O_LAZY, 10, 0 },
	{ "cmdq", 504, O_CMDQ, ILAB_SMMU_CMDQ_SPINLOCK * 100 + 8, ILAB_SMMU_CMDQ_LOCKFREE * 100 },
	{ "ril", 507, O_RIL, 1, 0 },
	{ "map_pages", 515, O_MAP_PAGES, 0, 1 },
	{ "comp_batch", 516, O_BATCH, 1, 0 },
	{ "mag_size", 600, O_MAG, 128, 127 },
	{ "sac_latch", 605, O_SAC, 0, 1 },
	{ "depot", 607, O_DEPOT, ILAB_IOVA_DEPOT_FIXED32, ILAB_IOVA_DEPOT_LIST },
	{ "fq_kind", 607, -1, 0, 0 },
	{ "ste_writer", 609, O_STE, 0, 1 },
	{ "split", 613, O_SPLIT, 1, 0 },
	{ "vtd_ih", 619, O_IH, 1, 0 },
	{ "fair_lock", 700, O_FAIR, 0, 1 },
};

static void table_has_the_expected_rows(void **state)
{
	size_t n;
	const struct ilab_kernel_change *t = ilab_kernel_changes(&n);

	(void)state;
	assert_int_equal(n, sizeof(rows) / sizeof(rows[0]));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(t[i].key, rows[i].key);
		assert_int_equal(t[i].since, rows[i].since);
		assert_non_null(t[i].commit);
		assert_true(strlen(t[i].commit) > 10);
	}
}

/* Whether some row of release `since` changes observation k. */
static bool changed_at(unsigned since, int k)
{
	for (size_t j = 0; j < sizeof(rows) / sizeof(rows[0]); j++)
		if (rows[j].since == since && rows[j].changes == k)
			return true;
	return false;
}

/* Across each row's boundary its observation changes from `before` to `after` and no other
 * one changes but those of rows of the same release; between rows nothing changes. */
static void each_row_changes_only_its_options(void **state)
{
	long a[O_NR], b[O_NR];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		observe(prev_release(rows[i].since), a);
		observe(rows[i].since, b);
		for (int k = 0; k < O_NR; k++) {
			if (k == rows[i].changes) {
				assert_int_equal(a[k], rows[i].before);
				assert_int_equal(b[k], rows[i].after);
			} else if (!changed_at(rows[i].since, k)) {
				assert_int_equal(a[k], b[k]);
			}
		}
	}
	/* one release past a row (not itself a row) changes nothing */
	observe(505, a);
	observe(506, b);
	assert_memory_equal(a, b, sizeof(a));
	observe(610, a);
	observe(612, b);
	assert_memory_equal(a, b, sizeof(a));
}

/* latest is today's stack: the options' defaults, but for the command-queue lock, whose
 * default (false) is the lock before 7.0's fairness change. */
static void latest_is_the_defaults(void **state)
{
	struct ilab_kernel_era e;
	struct ilab_smmu_drv_opts d0 = { 0 }, d = { 0 };
	struct ilab_dma_options o0, o;

	(void)state;
	ilab_kernel_era_latest(&e);
	assert_string_equal(e.name, "latest");
	ilab_kernel_era_drv_opts(&e, &d);
	ilab_dma_options_default(&o0);
	o = o0;
	ilab_kernel_era_dma_opts(&e, &o);
	assert_true(d.cmdq_fair_lock);
	d0.cmdq_fair_lock = true;
	assert_memory_equal(&d, &d0, sizeof(d));
	assert_memory_equal(&o, &o0, sizeof(o));
	{
		struct ilab_intel_iommu_opts i0 = { 0 }, i = { .drop_ih = true };

		ilab_kernel_era_vtd_opts(&e, &i);
		assert_memory_equal(&i, &i0, sizeof(i));
	}
	{ /* the NVMe workload's default (a zeroed cfg) is today's batching */
		struct ilab_nvme_cfg c0 = { 0 }, c = { .no_comp_batch = true };

		ilab_kernel_era_nvme_opts(&e, &c);
		assert_memory_equal(&c, &c0, sizeof(c));
	}
}

/* ---- the options reach dma-iommu's IOVA domain ------------------------------------------- */

/* Map n single pages, then unmap them all on this CPU: full magazines go to the depot. */
static void churn(struct ilab_dev *d, ilab_pa_t pa, unsigned n)
{
	ilab_dma_addr_t *a = calloc(n, sizeof(*a));

	assert_non_null(a);
	for (unsigned i = 0; i < n; i++) {
		a[i] = ilab_dma_map_single(d, pa, 4096, ILAB_DMA_TO_DEVICE);
		assert_false(ilab_dma_mapping_error(a[i]));
	}
	for (unsigned i = 0; i < n; i++)
		ilab_dma_unmap_single(d, a[i], 4096, ILAB_DMA_TO_DEVICE);
	free(a);
}

static void magazines_and_depot_by_era(void **state)
{
	static const unsigned versions[] = { 419, 606, 607 };
	/* 5.19-: 128-pfn magazines, depot of 32; 6.6: 127, depot of 32; 6.7: 127, a list */
	static const uint64_t fill[] = { 128, 127, 127 }, depot_le32[] = { 1, 1, 0 };
	ilab_pa_t pa = tu_buffer(&T, 0, 0, 21);

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct ilab_kernel_era e;
		struct ilab_dma_options o;
		struct ilab_dma_stats st;
		struct ilab_dev d;

		tu_dev_init(&T, &d, "nic", 30, 0, 48);
		assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
		ilab_kernel_era_at(versions[i], &e);
		ilab_dma_options_default(&o);
		ilab_kernel_era_dma_opts(&e, &o);
		assert_int_equal(ilab_dma_configure(&d, &o), 0);
		churn(&d, pa, 48 * 128); /* 48 magazines' worth: more than a fixed depot holds */
		assert_int_equal(ilab_dma_stats(&d, &st), 0);
		assert_int_equal(st.iova_max_mag_fill, fill[i]);
		if (depot_le32[i])
			assert_int_equal(st.iova_depot_max, ILAB_IOVA_MAX_GLOBAL_MAGS);
		else
			assert_true(st.iova_depot_max > ILAB_IOVA_MAX_GLOBAL_MAGS);
		ilab_iommu_release_device(&d);
	}
	ilab_mem_free_pages(T.mem, pa, 0);
}

/* Before 6.5 a PCI device tries below 4 GiB on every allocation; from 6.5 only until the first
 * failure. Three 1 GiB mappings fill the 32-bit space (its first GiB holds the MSI window), so
 * the fourth and fifth fall back: two fallbacks before the latch, one with it. */
static void pci_32bit_attempts_by_era(void **state)
{
	static const unsigned versions[] = { 604, 605 };
	static const uint64_t fallbacks[] = { 2, 1 };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct ilab_kernel_era e;
		struct ilab_dma_options o;
		struct ilab_dma_stats st;
		struct ilab_dev d;
		ilab_dma_addr_t a[5];

		tu_dev_init(&T, &d, "pci", 31, 0, 48);
		d.pci = true;
		assert_int_equal(ilab_iommu_probe_device(&d, ILAB_DOMAIN_DMA), 0);
		ilab_kernel_era_at(versions[i], &e);
		ilab_dma_options_default(&o);
		ilab_kernel_era_dma_opts(&e, &o);
		assert_int_equal(ilab_dma_configure(&d, &o), 0);
		for (int k = 0; k < 5; k++) {
			a[k] = ilab_dma_map_single(&d, 0, 1ull << 30, ILAB_DMA_TO_DEVICE);
			assert_false(ilab_dma_mapping_error(a[k]));
			assert_true(k < 3 ? a[k] <= 0xffffffffull : a[k] > 0xffffffffull);
		}
		assert_int_equal(ilab_dma_stats(&d, &st), 0);
		assert_int_equal(st.dac_fallbacks, fallbacks[i]);
		for (int k = 0; k < 5; k++)
			ilab_dma_unmap_single(&d, a[k], 1ull << 30, ILAB_DMA_TO_DEVICE);
		ilab_iommu_release_device(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(versions_parsed_or_refused),
		cmocka_unit_test(table_has_the_expected_rows),
		cmocka_unit_test(each_row_changes_only_its_options),
		cmocka_unit_test(latest_is_the_defaults),
		cmocka_unit_test(magazines_and_depot_by_era),
		cmocka_unit_test(pci_32bit_attempts_by_era),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
