/* kernel_era.c — the kernel-era table: for each behaviour of the DMA-mapping path that changed
 * between Linux 4.14 and today, the version that changed it and what each side sets in the
 * layers' options. It is not the layers: they only read options (kernel_era.h).
 *
 * Versions and subjects come from the kernel's history (docs/kernel-eras.md); where a version
 * is inferred rather than read from a tag, the doc says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/intel_iommu_drv.h"
#include "iommulab/kernel_era.h"
#include "iommulab/nvme.h"

#define V(major, minor) ((major) * 100u + (minor))

static void set_sync_msi(struct ilab_kernel_era *e, bool after)
{
	e->cmdq_sync_cons = !after;
}

static void set_sync_order(struct ilab_kernel_era *e, bool after)
{
	e->cmdq_sync_unordered = !after;
}

static void set_lookup(struct ilab_kernel_era *e, bool after)
{
	e->lookup = after ? ILAB_DMA_LOOKUP_DIRECT : ILAB_DMA_LOOKUP_REFCOUNT;
}

static void set_non_strict(struct ilab_kernel_era *e, bool after)
{
	e->smmu_non_strict = after;
}

static void set_cmdq(struct ilab_kernel_era *e, bool after)
{
	e->cmdq_mode = after ? ILAB_SMMU_CMDQ_LOCKFREE : ILAB_SMMU_CMDQ_SPINLOCK;
	e->cmdq_log2 = after ? 0 : 8; /* <= 5.3: CMDQ_MAX_SZ_SHIFT 8, 256 entries */
}

static void set_ril(struct ilab_kernel_era *e, bool after)
{
	e->no_ril = !after;
}

static void set_map_pages(struct ilab_kernel_era *e, bool after)
{
	e->map_pages = after;
}

static void set_mag_size(struct ilab_kernel_era *e, bool after)
{
	e->iova_mag_size = after ? 127 : 128;
}

static void set_sac_latch(struct ilab_kernel_era *e, bool after)
{
	e->sac_latch = after;
}

static void set_depot(struct ilab_kernel_era *e, bool after)
{
	e->iova_depot = after ? ILAB_IOVA_DEPOT_LIST : ILAB_IOVA_DEPOT_FIXED32;
}

/* The single queue exists from 6.7, but dma-iommu picks it only for a device whose IOTLB
 * flushes sync shadow tables (s390); an SMMUv3 or VT-d device keeps the per-CPU queues. */
static void set_fq(struct ilab_kernel_era *e, bool after)
{
	(void)after;
	e->fq_kind = ILAB_DMA_FQ_PERCPU;
}

static void set_ste_writer(struct ilab_kernel_era *e, bool after)
{
	e->ste_hitless = after;
}

static void set_split(struct ilab_kernel_era *e, bool after)
{
	e->pgtable_split_blocks = !after;
}

static void set_fair_lock(struct ilab_kernel_era *e, bool after)
{
	e->cmdq_fair_lock = after;
}

/* Before the fix qi_flush_iotlb (qi_desc_iotlb from 6.10) built the PSI descriptor with a
 * local ih = 0 and QI_IOTLB_ADDR() masking the caller's hint out of the address: IH never
 * reached the unit, so every page-selective invalidation also dropped its paging-structure
 * caches (VT-d §6.5.2.3). Fixed upstream in 6b38a108eeb3 (posted October 2025, in 6.18-stable
 * review 16 December 2025 as a backport): taken here as 6.19, the first mainline release after
 * it (inferred from the dates; docs/kernel-eras.md). */
static void set_vtd_ih(struct ilab_kernel_era *e, bool after)
{
	e->vtd_drop_ih = !after;
}

/* nvme_irq and nvme_poll_cq pass an io_comp_batch from 5.16: a completion neither sent to
 * another CPU nor failed is unmapped, freed and delivered after the walk and its doorbell
 * (nvme_pci_complete_batch); before, each as its entry was walked. */
static void set_comp_batch(struct ilab_kernel_era *e, bool after)
{
	e->nvme_comp_batch = after;
}

static const struct ilab_kernel_change changes[] = {
	{ "sync_msi", "CMD_SYNC completion by MSI, waited for outside the queue lock (was: CONS "
	  "polled with the lock held)", V(4, 15), "iommu/arm-smmu-v3: Use CMD_SYNC completion MSI",
	  set_sync_msi },
	{ "lookup", "DMA domain found by a plain load (was: group refcount get/put per call)",
	  V(4, 19), "iommu: Add fast hook for getting DMA domains", set_lookup },
	{ "sync_order", "CMD_SYNC number taken under the queue lock, back-to-back CMD_SYNCs merged "
	  "(was: number taken before the lock, every CMD_SYNC inserted)", V(4, 20),
	  "iommu/arm-smmu-v3: Fix unexpected CMD_SYNC timeout; Avoid back-to-back CMD_SYNC "
	  "operations", set_sync_order },
	{ "non_strict", "SMMUv3 non-strict (lazy) invalidation through the flush queue (was: "
	  "strict only; lazy before it is a backport)", V(4, 20),
	  "iommu/arm-smmu-v3: Add support for non-strict mode", set_non_strict },
	{ "cmdq", "main command queue: lock-free insertion (was one spinlock, 256 entries)",
	  V(5, 4), "iommu/arm-smmu-v3: Reduce contention during command-queue insertion",
	  set_cmdq },
	{ "ril", "TLB range invalidation when IDR3.RIL (was one TLBI per page)",
	  V(5, 7), "iommu/arm-smmu-v3: Add support for TLB range invalidations", set_ril },
	{ "map_pages", "map_pages/unmap_pages: one walk per run of pages",
	  V(5, 15), "iommu/arm-smmu-v3: Implement the map_pages() IOMMU driver callback",
	  set_map_pages },
	{ "comp_batch", "NVMe: completions on the interrupt's CPU finished as a batch after the "
	  "CQ walk and its doorbell (was: each as its entry was walked)",
	  V(5, 16), "nvme: wire up completion batching for the IRQ path", set_comp_batch },
	{ "mag_size", "IOVA magazine of 127 pfns (was 128)",
	  V(6, 0), "iommu/iova: change IOVA_MAG_SIZE to 127 to save memory", set_mag_size },
	{ "sac_latch", "PCI 32-bit-first IOVA attempt given up after its first failure "
	  "(was tried on every allocation)",
	  V(6, 5), "iommu: Optimise PCI SAC address trick", set_sac_latch },
	{ "depot", "IOVA depot: unbounded list with delayed reclaim (was 32 magazines)",
	  V(6, 7), "iommu/iova: Make the rcache depot scale better", set_depot },
	{ "fq_kind", "single flush queue available (per-CPU queues stay an SMMUv3 device's)",
	  V(6, 7), "iommu/dma: Allow a single FQ in addition to per-CPU FQs", set_fq },
	{ "ste_writer", "hitless STE/CD writer (set-up only; not switched)",
	  V(6, 9), "iommu/arm-smmu-v3: Make STE programming independent of the callers",
	  set_ste_writer },
	{ "split", "partial unmap of a block refused (was: split into a table)",
	  V(6, 13), "iommu/io-pgtable-arm: Remove split on unmap behavior", set_split },
	{ "vtd_ih", "VT-d: the invalidation hint reaches the IOTLB descriptor (was dropped: every "
	  "PSI also flushed the paging-structure caches)",
	  V(6, 19), "iommu/vt-d: Fix unused invalidation hint in qi_desc_iotlb", set_vtd_ih },
	{ "fair_lock", "command-queue lock: exclusive unlock keeps the shared waiters' count",
	  V(7, 0), "iommu/arm-smmu-v3: Improve CMDQ lock fairness and efficiency",
	  set_fair_lock },
};

const struct ilab_kernel_change *ilab_kernel_changes(size_t *n)
{
	*n = sizeof(changes) / sizeof(changes[0]);
	return changes;
}

void ilab_kernel_era_at(unsigned version, struct ilab_kernel_era *era)
{
	memset(era, 0, sizeof(*era));
	era->version = version;
	snprintf(era->name, sizeof(era->name), "%u.%u", version / 100, version % 100);
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
		changes[i].apply(era, version >= changes[i].since);
}

void ilab_kernel_era_latest(struct ilab_kernel_era *era)
{
	ilab_kernel_era_at(ILAB_KERNEL_NEWEST, era);
	snprintf(era->name, sizeof(era->name), "latest");
}

/* Minor releases of each major: 4.0-4.20, 5.0-5.19, 6.0-6.19, 7.x. */
static bool version_exists(unsigned major, unsigned minor)
{
	unsigned v = V(major, minor);

	if (v < ILAB_KERNEL_OLDEST || v > ILAB_KERNEL_NEWEST)
		return false;
	return major == 4 ? minor <= 20 : major == 7 || minor <= 19;
}

static bool parse_uint(const char *s, size_t len, unsigned *out)
{
	unsigned v = 0;

	if (!len || len > 3 || (len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return true;
}

int ilab_kernel_era_parse(const char *text, struct ilab_kernel_era *era, char *err, size_t errlen)
{
	const char *dot;
	unsigned major, minor;

	if (!text || !era)
		return snprintf(err, errlen, "kernel: no version given"), -EINVAL;
	if (strcmp(text, "latest") == 0) {
		ilab_kernel_era_latest(era);
		return 0;
	}
	dot = strchr(text, '.');
	if (!dot || !parse_uint(text, (size_t)(dot - text), &major) ||
	    !parse_uint(dot + 1, strlen(dot + 1), &minor))
		return snprintf(err, errlen, "kernel: '%s' is not a version (X.Y, e.g. 6.6, or latest)",
				text), -EINVAL;
	if (!version_exists(major, minor))
		return snprintf(err, errlen, "kernel: %u.%u is not a Linux release from %u.%u to "
				"%u.x (or latest)", major, minor, ILAB_KERNEL_OLDEST / 100,
				ILAB_KERNEL_OLDEST % 100, ILAB_KERNEL_NEWEST / 100), -EINVAL;
	ilab_kernel_era_at(V(major, minor), era);
	return 0;
}

void ilab_kernel_era_drv_opts(const struct ilab_kernel_era *era, struct ilab_smmu_drv_opts *o)
{
	o->cmdq_mode = era->cmdq_mode;
	o->cmdq_log2 = era->cmdq_log2;
	o->no_ril = era->no_ril;
	o->pgtable_split_blocks = era->pgtable_split_blocks;
	o->cmdq_fair_lock = era->cmdq_fair_lock;
	o->cmdq_sync_unordered = era->cmdq_sync_unordered;
	if (era->cmdq_sync_cons)
		o->sync_mode = ILAB_SMMU_SYNC_CONS;
}

void ilab_kernel_era_vtd_opts(const struct ilab_kernel_era *era, struct ilab_intel_iommu_opts *o)
{
	o->drop_ih = era->vtd_drop_ih;
}

void ilab_kernel_era_nvme_opts(const struct ilab_kernel_era *era, struct ilab_nvme_cfg *c)
{
	c->no_comp_batch = !era->nvme_comp_batch;
}

void ilab_kernel_era_dma_opts(const struct ilab_kernel_era *era, struct ilab_dma_options *o)
{
	o->lookup = era->lookup;
	o->use_map_pages = era->map_pages;
	o->sac_latch = era->sac_latch;
	o->iova_mag_size = era->iova_mag_size;
	o->iova_depot = era->iova_depot;
	/* per-CPU in every era for the devices modelled here: their sizes stay as they are */
	if (era->fq_kind != o->fq_kind)
		ilab_dma_options_set_fq_kind(o, era->fq_kind);
}

bool ilab_kernel_era_lazy_is_backport(const struct ilab_kernel_era *era, bool smmuv3)
{
	/* VT-d had its deferred flush long before 4.14; SMMUv3 got lazy mode in 4.20 */
	return smmuv3 && !era->smmu_non_strict;
}
