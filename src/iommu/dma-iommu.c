/* dma-iommu.c — the DMA API over IOMMU domains (Linux drivers/iommu/dma-iommu.c): IOVA policy,
 * map/unmap of pages, single buffers and scatterlists, coherent allocation, and the strict,
 * lazy (flush queue, flush_queue.c) and passthrough modes.
 * It is not the IOMMU core (iommu.c) nor a driver: it reaches the hardware only through the
 * domain's page-table ops, its iotlb_sync and its flush_iotlb_all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/dma_iommu.h>
#include <iommulab/iova.h>

#include "iommu/iommu_internal.h"
#include "iommu/swiotlb.h"
#include "iommulab/plat.h"

/* Counters of one CPU: written by that CPU only (relaxed load + store, no RMW), so keeping
 * statistics adds no shared cache line to the path being measured. */
struct dma_pcpu_stats {
	plat_word64 maps, unmaps, map_errors, unmap_errors, iotlb_syncs;
	plat_word64 refcount_lookups, direct_lookups, dac_fallbacks;
};

/* dma-iommu's state of one DMA / DMA_FQ domain (Linux struct iommu_dma_cookie). */
struct dma_cookie {
	struct ilab_iova_domain iovad;
	struct ilab_iommu_domain *domain;
	struct ilab_fq *fq;        /* DMA_FQ only */
	bool use_map_pages;
	void *stats;               /* per-CPU struct dma_pcpu_stats */
};

/* dma-iommu's state of one device. */
struct dma_dev {
	struct ilab_dma_options opts;
	bool passthrough;          /* identity default domain: dma-direct */
	plat_word32 pci_32bit_workaround; /* Linux dev->iommu->pci_32bit_workaround */
	struct ilab_swiotlb *swiotlb; /* passthrough: the machine's bounce pool (NULL: none) */
};

/* Bump a counter of this CPU's stats block s (found once per call: plat_this_cpu_ptr is not
 * free natively). */
#define STAT_INC_AT(s, field) plat_stat_add64(&(s)->field, 1)
#define STAT_INC(c, field)                                                                    \
	do {                                                                                  \
		struct dma_pcpu_stats *s_ = plat_this_cpu_ptr((c)->stats);                    \
		STAT_INC_AT(s_, field);                                                       \
	} while (0)

void ilab_dma_options_set_fq_kind(struct ilab_dma_options *o, enum ilab_dma_fq_kind kind)
{
	bool single = kind == ILAB_DMA_FQ_SINGLE;

	o->fq_kind = kind;
	o->fq_size = single ? ILAB_DMA_FQ_SINGLE_SIZE : ILAB_DMA_FQ_SIZE;
	o->fq_timeout_ns = single ? ILAB_DMA_FQ_SINGLE_TIMEOUT_NS : ILAB_DMA_FQ_TIMEOUT_NS;
}

void ilab_dma_options_default(struct ilab_dma_options *o)
{
	*o = (struct ilab_dma_options){
		.use_map_pages = true,
		.lookup = ILAB_DMA_LOOKUP_DIRECT,
		.forcedac = false,
		.check_iova_free = false,
		.fq_timer = true,
		.fq_size = ILAB_DMA_FQ_SIZE,
		.fq_timeout_ns = ILAB_DMA_FQ_TIMEOUT_NS,
		.max_seg_size = ILAB_DMA_MAX_SEG_SIZE,
		.sac_latch = true,
		.iova_mag_size = ILAB_IOVA_MAG_SIZE,
		.iova_depot = ILAB_IOVA_DEPOT_LIST,
	};
}

/* ---- helpers --------------------------------------------------------------------------- */

static inline uint64_t granule_of(const struct dma_cookie *c)
{
	return c->iovad.granule;
}

static inline uint64_t iova_align(const struct dma_cookie *c, uint64_t size)
{
	return (size + granule_of(c) - 1) & ~(granule_of(c) - 1);
}

static uint64_t dma_mask(const struct ilab_dev *dev)
{
	unsigned bits = dev->dma_bits ? dev->dma_bits : 32; /* Linux's default mask is 32-bit */

	return bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
}

static int dir_to_prot(enum ilab_dma_dir dir)
{
	/* Devices here are cache-coherent (the SMMU and the devices snoop): IOMMU_CACHE. */
	switch (dir) {
	case ILAB_DMA_BIDIRECTIONAL: return ILAB_IOMMU_CACHE | ILAB_IOMMU_READ | ILAB_IOMMU_WRITE;
	case ILAB_DMA_TO_DEVICE: return ILAB_IOMMU_CACHE | ILAB_IOMMU_READ;
	case ILAB_DMA_FROM_DEVICE: return ILAB_IOMMU_CACHE | ILAB_IOMMU_WRITE;
	}
	return -1;
}

static struct dma_dev *dma_dev_of(struct ilab_dev *dev)
{
	return dev ? dev->dma_priv : NULL;
}

/* The domain lookup seed 001 is about: either a refcounted group lookup or a dereference. */
static struct ilab_iommu_domain *dma_lookup(struct ilab_dev *dev, struct dma_dev *dd,
					    struct dma_cookie **cp, struct dma_pcpu_stats **sp)
{
	struct ilab_iommu_domain *d;
	bool refcount = dd->opts.lookup == ILAB_DMA_LOOKUP_REFCOUNT;

	plat_scope_enter(PLAT_SCOPE_DOMAIN_LOOKUP);
	d = refcount ? ilab_iommu_get_domain_for_dev(dev) : ilab_iommu_get_dma_domain(dev);
	plat_scope_leave();
	if (!d || !d->iova_cookie) {
		ilab_iommu_set_error(-ENODEV, "%s: not attached to a DMA domain", dev->name);
		return NULL;
	}
	*cp = d->iova_cookie;
	*sp = plat_this_cpu_ptr((*cp)->stats);
	if (refcount)
		STAT_INC_AT(*sp, refcount_lookups);
	else
		STAT_INC_AT(*sp, direct_lookups);
	return d;
}

/* ---- IOVA policy (Linux iommu_dma_alloc_iova / iommu_dma_free_iova) ------------------- */

static uint64_t alloc_iova(struct dma_cookie *c, struct dma_dev *dd, size_t size,
			   uint64_t dma_limit)
{
	unsigned shift = c->iovad.granule_shift;
	uint64_t len = size >> shift, pfn;

	if (c->domain->aperture_end < dma_limit)
		dma_limit = c->domain->aperture_end;
	/* PCI "SAC trick": try below 4 GiB first; with sac_latch (Linux >= 6.5), once that fails
	 * never again for this device, else (older kernels) on every allocation. */
	if (dma_limit > 0xffffffffull && plat_load_relaxed32(&dd->pci_32bit_workaround)) {
		pfn = ilab_alloc_iova_fast(&c->iovad, len, 0xffffffffull >> shift, false);
		if (pfn)
			return pfn << shift;
		if (dd->opts.sac_latch)
			plat_store32(&dd->pci_32bit_workaround, 0);
		STAT_INC(c, dac_fallbacks);
	}
	pfn = ilab_alloc_iova_fast(&c->iovad, len, dma_limit >> shift, true);
	return pfn << shift;
}

static void free_iova(struct dma_cookie *c, uint64_t iova, size_t size)
{
	ilab_free_iova_fast(&c->iovad, iova >> c->iovad.granule_shift,
			    size >> c->iovad.granule_shift);
}

/* ---- dma-direct: the passthrough path (Linux dma_direct_map_page / dma_direct_unmap_page) --- */

/* The buffer as the device reaches it: itself when it is below the mask, else a copy in the
 * swiotlb (whose slots must be below the mask too: Linux reports an overflow otherwise). */
static ilab_dma_addr_t direct_map(struct ilab_dev *dev, struct dma_dev *dd, ilab_pa_t pa,
				  size_t size, enum ilab_dma_dir dir, uint64_t limit)
{
	ilab_pa_t tlb;

	plat_charge(PLAT_CHARGE_DMA_DIRECT_MAP);
	if (pa + size - 1 <= limit)
		return pa;
	if (!dd->swiotlb) {
		ilab_iommu_set_error(-ERANGE, "map: no bounce buffer pool (swiotlb) for %#llx "
				     "beyond the %s DMA mask", (unsigned long long)pa, dev->name);
		return ILAB_DMA_MAPPING_ERROR;
	}
	tlb = ilab_swiotlb_map(dd->swiotlb, pa, size, dir);
	if (tlb == ILAB_PA_INVALID)
		return ILAB_DMA_MAPPING_ERROR; /* the pool said why */
	if (tlb + size - 1 > limit) {
		ilab_swiotlb_unmap(dd->swiotlb, tlb, size, ILAB_DMA_TO_DEVICE);
		ilab_iommu_set_error(-ERANGE, "map: %#llx and its bounce buffer %#llx are both "
				     "beyond the %s DMA mask", (unsigned long long)pa,
				     (unsigned long long)tlb, dev->name);
		return ILAB_DMA_MAPPING_ERROR;
	}
	return tlb;
}

static void direct_unmap(struct dma_dev *dd, ilab_dma_addr_t addr, size_t size,
			 enum ilab_dma_dir dir)
{
	plat_charge(PLAT_CHARGE_DMA_DIRECT_UNMAP);
	if (ilab_swiotlb_owns(dd->swiotlb, addr))
		ilab_swiotlb_unmap(dd->swiotlb, addr, size, dir);
}

/* ---- map / unmap core (Linux __iommu_dma_map / __iommu_dma_unmap) --------------------- */

static ilab_dma_addr_t dma_map(struct ilab_dev *dev, ilab_pa_t pa, size_t size,
			       enum ilab_dma_dir dir)
{
	int prot = dir_to_prot(dir);
	struct dma_dev *dd = dma_dev_of(dev);
	struct ilab_iommu_domain *d;
	struct dma_pcpu_stats *s;
	struct dma_cookie *c;
	uint64_t off, iova, limit;
	int ret;

	if (!dd) {
		ilab_iommu_set_error(-ENODEV, "map: device not set up for DMA");
		return ILAB_DMA_MAPPING_ERROR;
	}
	limit = dma_mask(dev);
	if (!size || prot < 0 || pa + size < pa) {
		ilab_iommu_set_error(-EINVAL, "map: bad size or direction");
		return ILAB_DMA_MAPPING_ERROR;
	}
	if (dd->passthrough)
		return direct_map(dev, dd, pa, size, dir, limit);
	d = dma_lookup(dev, dd, &c, &s);
	if (!d)
		return ILAB_DMA_MAPPING_ERROR;
	plat_charge(PLAT_CHARGE_DMA_MAP); /* simulation: iommu_dma_map_page's bookkeeping */
	off = pa & (granule_of(c) - 1);
	size = iova_align(c, size + off);
	iova = alloc_iova(c, dd, size, limit);
	if (!iova) {
		STAT_INC_AT(s, map_errors);
		ilab_iommu_set_error(-ENOSPC, "map: no IOVA space for %zu bytes", size);
		return ILAB_DMA_MAPPING_ERROR;
	}
	ret = ilab_iommu_map(&d->pt, iova, pa - off, size, prot, c->use_map_pages);
	if (ret) {
		free_iova(c, iova, size);
		STAT_INC_AT(s, map_errors);
		ilab_iommu_set_error(ret, "map: page-table error %d at IOVA %#llx", ret,
				     (unsigned long long)iova);
		return ILAB_DMA_MAPPING_ERROR;
	}
	STAT_INC_AT(s, maps);
	return iova + off;
}

static void dma_unmap(struct ilab_dev *dev, ilab_dma_addr_t addr, size_t size,
		      enum ilab_dma_dir dir)
{
	struct dma_dev *dd = dma_dev_of(dev);
	struct ilab_iotlb_gather gather;
	struct ilab_iommu_domain *d;
	struct dma_pcpu_stats *s;
	struct dma_cookie *c;
	uint64_t off, iova;
	size_t unmapped;

	if (!dd)
		return;
	if (dd->passthrough) {
		direct_unmap(dd, addr, size, dir);
		return;
	}
	d = dma_lookup(dev, dd, &c, &s);
	if (!d)
		return;
	plat_charge(PLAT_CHARGE_DMA_UNMAP); /* simulation: iommu_dma_unmap_page's bookkeeping */
	off = addr & (granule_of(c) - 1);
	iova = addr - off;
	if (!size || addr == ILAB_DMA_MAPPING_ERROR || iova + size + off < iova) {
		STAT_INC_AT(s, unmap_errors);
		ilab_iommu_set_error(-EINVAL, "unmap: bad address or size");
		return;
	}
	size = iova_align(c, size + off);
	ilab_iotlb_gather_init(&gather);
	gather.queued = c->fq != NULL;
	unmapped = ilab_iommu_unmap_fast(&d->pt, iova, size, &gather, c->use_map_pages);
	if (!unmapped) {
		/* Nothing there: a double unmap or a wrong address. Freeing the IOVA would hand
		 * out a range someone else may own, so do nothing (Linux WARNs). */
		STAT_INC_AT(s, unmap_errors);
		ilab_iommu_set_error(-ENOENT, "unmap: nothing mapped at %#llx",
				     (unsigned long long)iova);
		return;
	}
	if (unmapped != size)
		STAT_INC_AT(s, unmap_errors);
	if (!gather.queued) {
		/* Strict: the TLB must forget the range before the IOVA can be reused. */
		if (d->pt.iotlb_sync)
			d->pt.iotlb_sync(d->pt.priv, &gather);
		STAT_INC_AT(s, iotlb_syncs);
		free_iova(c, iova, size);
	} else {
		ilab_fq_queue(c->fq, iova >> c->iovad.granule_shift,
			      size >> c->iovad.granule_shift);
	}
	STAT_INC_AT(s, unmaps);
}

/* ---- streaming API --------------------------------------------------------------------- */

ilab_dma_addr_t ilab_dma_map_page(struct ilab_dev *dev, ilab_pa_t page, size_t offset,
				  size_t size, enum ilab_dma_dir dir)
{
	ilab_dma_addr_t a;

	plat_scope_enter(PLAT_SCOPE_DMA_MAP);
	a = dma_map(dev, page + offset, size, dir);
	plat_scope_leave();
	return a;
}

void ilab_dma_unmap_page(struct ilab_dev *dev, ilab_dma_addr_t addr, size_t size,
			 enum ilab_dma_dir dir)
{
	plat_scope_enter(PLAT_SCOPE_DMA_UNMAP);
	dma_unmap(dev, addr, size, dir);
	plat_scope_leave();
}

ilab_dma_addr_t ilab_dma_map_single(struct ilab_dev *dev, ilab_pa_t pa, size_t size,
				    enum ilab_dma_dir dir)
{
	return ilab_dma_map_page(dev, pa & ~(ILAB_PAGE_SIZE - 1), pa & (ILAB_PAGE_SIZE - 1), size,
				 dir);
}

void ilab_dma_unmap_single(struct ilab_dev *dev, ilab_dma_addr_t addr, size_t size,
			   enum ilab_dma_dir dir)
{
	ilab_dma_unmap_page(dev, addr, size, dir);
}

/* ---- scatterlists (Linux iommu_dma_map_sg / __finalise_sg) ----------------------------- */

/* Map the segments, merging physically contiguous ones into one ilab_iommu_map call. */
static int map_segments(struct ilab_iommu_domain *d, struct dma_cookie *c,
			struct ilab_scatterlist *sg, unsigned nents, uint64_t iova, int prot,
			size_t *done)
{
	ilab_pa_t run_pa = 0;
	size_t run_len = 0;
	uint64_t run_iova = iova;
	int ret;

	*done = 0;
	for (unsigned i = 0; i < nents; i++) {
		uint64_t off = sg[i].dma_address; /* stashed offset, see ilab_dma_map_sg */
		ilab_pa_t pa = sg[i].pa - off;
		size_t len = iova_align(c, sg[i].length + off);

		if (run_len && pa == run_pa + run_len) {
			run_len += len;
			continue;
		}
		if (run_len) {
			ret = ilab_iommu_map(&d->pt, run_iova, run_pa, run_len, prot,
					     c->use_map_pages);
			if (ret)
				return ret;
			*done += run_len;
		}
		run_iova = iova + *done;
		run_pa = pa;
		run_len = len;
	}
	ret = ilab_iommu_map(&d->pt, run_iova, run_pa, run_len, prot, c->use_map_pages);
	if (!ret)
		*done += run_len;
	return ret;
}

/* Turn the stashed offsets into DMA segments over [iova, ...): a segment may be merged into
 * the previous one when it starts on a granule boundary, the previous one ended on one, and
 * the result stays within max_seg_size. Returns the number of DMA segments. */
static int finalise_sg(struct dma_cookie *c, struct ilab_scatterlist *sg, unsigned nents,
		       uint64_t iova, uint32_t max_seg)
{
	unsigned cur = 0;
	uint64_t cur_len = 0;
	bool can_merge = false;

	for (unsigned i = 0; i < nents; i++) {
		uint64_t off = sg[i].dma_address;
		uint64_t len = sg[i].length;
		uint64_t iova_len = iova_align(c, len + off);

		sg[i].dma_address = ILAB_DMA_MAPPING_ERROR;
		sg[i].dma_length = 0;
		if (can_merge && off == 0 && cur_len + len <= max_seg) {
			cur_len += len;
		} else {
			if (i > 0)
				cur++;
			sg[cur].dma_address = iova + off;
			cur_len = len;
		}
		sg[cur].dma_length = (uint32_t)cur_len;
		iova += iova_len;
		can_merge = len + off == iova_len;
	}
	return (int)cur + 1;
}

static int map_sg(struct ilab_dev *dev, struct ilab_scatterlist *sg, unsigned nents,
		  enum ilab_dma_dir dir)
{
	struct dma_dev *dd = dma_dev_of(dev);
	struct ilab_iommu_domain *d;
	struct dma_pcpu_stats *s;
	struct dma_cookie *c;
	uint64_t total = 0, iova, limit;
	size_t done;
	int prot = dir_to_prot(dir), ret;

	if (!dd)
		return ilab_iommu_set_error(-ENODEV, "map_sg: device not set up for DMA");
	if (!sg || !nents || prot < 0)
		return ilab_iommu_set_error(-EINVAL, "map_sg: empty list or bad direction");
	limit = dma_mask(dev);
	for (unsigned i = 0; i < nents; i++)
		if (!sg[i].length || sg[i].pa + sg[i].length < sg[i].pa)
			return ilab_iommu_set_error(-EINVAL, "map_sg: bad segment %u", i);
	if (dd->passthrough) {
		/* Linux dma_direct_map_sg: each entry mapped (or bounced) on its own; on a
		 * failure the ones done are released without copying back. */
		for (unsigned i = 0; i < nents; i++) {
			sg[i].dma_address = direct_map(dev, dd, sg[i].pa, sg[i].length, dir, limit);
			if (sg[i].dma_address == ILAB_DMA_MAPPING_ERROR) {
				char why[128];

				snprintf(why, sizeof(why), "%s", ilab_iommu_strerror());
				for (unsigned j = 0; j < i; j++) {
					direct_unmap(dd, sg[j].dma_address, sg[j].length,
						     ILAB_DMA_TO_DEVICE);
					sg[j].dma_length = 0;
				}
				return ilab_iommu_set_error(-EIO, "map_sg: segment %u: %s", i, why);
			}
			sg[i].dma_length = sg[i].length;
		}
		return (int)nents;
	}
	d = dma_lookup(dev, dd, &c, &s);
	if (!d)
		return -ENODEV;
	/* Stash each segment's offset within its granule in dma_address (as Linux does in
	 * sg->dma_address) and size the single IOVA range. */
	for (unsigned i = 0; i < nents; i++) {
		uint64_t off = sg[i].pa & (granule_of(c) - 1);

		sg[i].dma_address = off;
		total += iova_align(c, sg[i].length + off);
	}
	iova = alloc_iova(c, dd, total, limit);
	if (!iova) {
		STAT_INC_AT(s, map_errors);
		return ilab_iommu_set_error(-ENOSPC, "map_sg: no IOVA space for %llu bytes",
					    (unsigned long long)total);
	}
	ret = map_segments(d, c, sg, nents, iova, prot, &done);
	if (ret) {
		if (done)
			ilab_iommu_unmap(&d->pt, iova, done, c->use_map_pages);
		free_iova(c, iova, total);
		STAT_INC_AT(s, map_errors);
		return ilab_iommu_set_error(ret, "map_sg: page-table error %d", ret);
	}
	STAT_INC_AT(s, maps);
	return finalise_sg(c, sg, nents, iova, dd->opts.max_seg_size);
}

int ilab_dma_map_sg(struct ilab_dev *dev, struct ilab_scatterlist *sg, unsigned nents,
		    enum ilab_dma_dir dir)
{
	int ret;

	plat_scope_enter(PLAT_SCOPE_DMA_MAP);
	ret = map_sg(dev, sg, nents, dir);
	plat_scope_leave();
	return ret;
}

static void unmap_sg(struct ilab_dev *dev, struct ilab_scatterlist *sg, unsigned nents,
		     enum ilab_dma_dir dir)
{
	struct dma_dev *dd = dma_dev_of(dev);
	uint64_t start, end;

	if (!dd || !sg || !nents)
		return;
	if (dd->passthrough) {
		/* Linux dma_direct_unmap_sg: each entry on its own (bounced ones copied back) */
		for (unsigned i = 0; i < nents; i++)
			direct_unmap(dd, sg[i].dma_address, sg[i].length, dir);
		return;
	}
	start = end = sg[0].dma_address;
	for (unsigned i = 0; i < nents && sg[i].dma_length; i++)
		end = sg[i].dma_address + sg[i].dma_length;
	dma_unmap(dev, start, end - start, dir);
}

void ilab_dma_unmap_sg(struct ilab_dev *dev, struct ilab_scatterlist *sg, unsigned nents,
		       enum ilab_dma_dir dir)
{
	plat_scope_enter(PLAT_SCOPE_DMA_UNMAP);
	unmap_sg(dev, sg, nents, dir);
	plat_scope_leave();
}

/* ---- coherent memory ------------------------------------------------------------------- */

int ilab_dma_alloc_coherent(struct ilab_dev *dev, size_t size, ilab_pa_t *pa,
			    ilab_dma_addr_t *dma, struct ilab_mem_alloc_info *info)
{
	struct dma_dev *dd = dma_dev_of(dev);
	int ret;

	if (!dd || !dev->iommu || !dev->iommu->mem)
		return ilab_iommu_set_error(-ENODEV, "alloc_coherent: device not set up for DMA");
	if (!size || !pa || !dma)
		return ilab_iommu_set_error(-EINVAL, "alloc_coherent: bad arguments");
	size = (size + ILAB_PAGE_SIZE - 1) & ~(ILAB_PAGE_SIZE - 1);
	ret = ilab_mem_alloc_coherent(dev->iommu->mem, dev->node, size, pa, info);
	if (ret)
		return ilab_iommu_set_error(ret, "alloc_coherent: %s", ilab_mem_strerror());
	memset(ilab_mem_va(dev->iommu->mem, *pa, size), 0, size);
	if (dd->passthrough) {
		/* dma-direct never bounces coherent memory (there is no sync point to copy at):
		 * it must lie below the mask (Linux allocates from ZONE_DMA32 then; the memory
		 * here has no such zone, so it fails). */
		*dma = *pa + size - 1 <= dma_mask(dev) ? *pa : ILAB_DMA_MAPPING_ERROR;
		if (*dma == ILAB_DMA_MAPPING_ERROR)
			ilab_iommu_set_error(-ENOMEM, "alloc_coherent: %#llx beyond the %s DMA mask",
					     (unsigned long long)*pa, dev->name);
	} else {
		*dma = dma_map(dev, *pa, size, ILAB_DMA_BIDIRECTIONAL);
	}
	if (*dma == ILAB_DMA_MAPPING_ERROR) {
		ilab_mem_free_coherent(dev->iommu->mem, *pa, size);
		return -ENOMEM;
	}
	return 0;
}

void ilab_dma_free_coherent(struct ilab_dev *dev, size_t size, ilab_pa_t pa,
			    ilab_dma_addr_t dma)
{
	if (!dev || !dev->dma_priv || !size)
		return;
	size = (size + ILAB_PAGE_SIZE - 1) & ~(ILAB_PAGE_SIZE - 1);
	if (!((struct dma_dev *)dev->dma_priv)->passthrough)
		dma_unmap(dev, dma, size, ILAB_DMA_BIDIRECTIONAL);
	if (dev->iommu && dev->iommu->mem)
		ilab_mem_free_coherent(dev->iommu->mem, pa, size);
}

/* ---- domain cookie --------------------------------------------------------------------- */

static void fq_flush_all(void *ctx)
{
	struct ilab_iommu_domain *d = ctx;

	d->ops->flush_iotlb_all(d);
}

static void fq_free_iova(void *ctx, uint64_t pfn, uint64_t pages)
{
	struct ilab_iommu_domain *d = ctx;
	struct dma_cookie *c = d->iova_cookie;

	ilab_free_iova_fast(&c->iovad, pfn, pages);
}

static const struct ilab_fq_ops fq_ops = {
	.flush_all = fq_flush_all,
	.free_iova = fq_free_iova,
};

static int cookie_fq_setup(struct ilab_iommu_domain *d, const struct ilab_dma_options *o)
{
	struct dma_cookie *c = d->iova_cookie;

	ilab_fq_destroy(c->fq);
	c->fq = NULL;
	if (d->type != ILAB_DOMAIN_DMA_FQ)
		return 0;
	return ilab_fq_create(o->fq_size, o->fq_timeout_ns, o->fq_timer,
			      o->fq_kind == ILAB_DMA_FQ_SINGLE, &fq_ops, d, &c->fq);
}

/* One reserved region, where it meets the aperture. Linux's iova_reserve_iommu_regions skips
 * IOMMU_RESV_SW_MSI in a DMA domain (MSI doorbells are mapped there only in domains with an
 * MSI cookie, VFIO's; a DMA domain maps them from its IOVA space). iommulab reserves it
 * too, as it did before the drivers reported their regions: SMMUv3's figures stay as they
 * were; at most 1 MiB at 128 MiB, far below where 32-bit-first allocations go. */
static void reserve_region(struct dma_cookie *c, const struct ilab_iommu_domain *d,
			   const struct ilab_iommu_resv_region *r, uint64_t granule)
{
	uint64_t lo = r->start, hi;

	if (!r->length || r->start + r->length - 1 < r->start)
		return;
	hi = r->start + r->length - 1;
	if (lo < d->aperture_start)
		lo = d->aperture_start;
	if (hi > d->aperture_end)
		hi = d->aperture_end;
	if (lo <= hi)
		ilab_reserve_iova(&c->iovad, lo / granule, hi / granule);
}

int ilab_dma_domain_init(struct ilab_iommu_domain *d)
{
	struct ilab_dma_options o;
	struct dma_cookie *c;
	struct ilab_iommu_resv_region resv[ILAB_IOMMU_RESV_MAX];
	uint64_t granule, start_pfn;
	unsigned nr_resv;
	int ret;

	if (!d || !d->pgsize_bitmap || d->iova_cookie)
		return -EINVAL;
	if (!d->pt.map_pages && !d->pt.map)
		return -EINVAL;
	granule = 1ull << __builtin_ctzll(d->pgsize_bitmap);
	c = plat_zalloc_array(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->domain = d;
	c->use_map_pages = d->pt.map_pages != NULL;
	start_pfn = d->aperture_start / granule;
	ret = ilab_iova_domain_init(&c->iovad, granule, start_pfn ? start_pfn : 1);
	if (ret) {
		free(c);
		return ret;
	}
	ilab_iova_set_fast_free_check(&c->iovad, false);
	/* iova_reserve_iommu_regions: the driver's reserved regions are never IOVAs (VT-d: the
	 * interrupt range; SMMUv3: its MSI window, see reserve_region). */
	nr_resv = ilab_iommu_get_resv_regions(d->iommu, NULL, resv, ILAB_IOMMU_RESV_MAX);
	for (unsigned i = 0; i < nr_resv; i++)
		reserve_region(c, d, &resv[i], granule);
	c->stats = plat_percpu_alloc(sizeof(struct dma_pcpu_stats));
	if (!c->stats) {
		ilab_iova_domain_destroy(&c->iovad);
		free(c);
		return -ENOMEM;
	}
	d->iova_cookie = c;
	ilab_dma_options_default(&o);
	if (cookie_fq_setup(d, &o))
		d->type = ILAB_DOMAIN_DMA; /* Linux: "FQ init failed, falling back to strict" */
	return 0;
}

void ilab_dma_domain_destroy(struct ilab_iommu_domain *d)
{
	struct dma_cookie *c = d ? d->iova_cookie : NULL;

	if (!c)
		return;
	ilab_fq_destroy(c->fq); /* flushes and frees what is still queued */
	ilab_iova_domain_destroy(&c->iovad);
	plat_percpu_free(c->stats);
	free(c);
	d->iova_cookie = NULL;
}

/* ---- per-device state and options ------------------------------------------------------ */

int ilab_dma_setup_dev(struct ilab_dev *dev)
{
	struct ilab_iommu_domain *d = ilab_iommu_get_dma_domain(dev);
	struct dma_dev *dd;

	if (!d)
		return ilab_iommu_set_error(-ENODEV, "dma setup: %s has no default domain",
					    dev ? dev->name : "?");
	dd = plat_zalloc_array(1, sizeof(*dd));
	if (!dd)
		return ilab_iommu_set_error(-ENOMEM, "dma setup: no memory");
	ilab_dma_options_default(&dd->opts);
	dd->passthrough = d->type == ILAB_DOMAIN_IDENTITY;
	/* The machine's swiotlb, set up with its first passthrough device as Linux sets it up at
	 * boot; without room below 4 GiB there is none, and maps beyond the mask fail. */
	if (dd->passthrough && dev->iommu && dev->iommu->mem)
		dd->swiotlb = ilab_swiotlb_get(dev->iommu->mem);
	plat_store32(&dd->pci_32bit_workaround, dev->pci && !dd->opts.forcedac);
	dev->dma_priv = dd;
	return 0;
}

void ilab_dma_teardown_dev(struct ilab_dev *dev)
{
	if (!dev)
		return;
	free(dev->dma_priv);
	dev->dma_priv = NULL;
}

static uint64_t sum_stat(struct dma_cookie *c, size_t off)
{
	uint64_t sum = 0;

	for (unsigned cpu = 0; cpu < plat_cpu_count(); cpu++)
		sum += plat_stat_read64((plat_word64 *)((char *)plat_percpu_ptr(c->stats, cpu) + off));
	return sum;
}

#define SUM(c, field) sum_stat((c), offsetof(struct dma_pcpu_stats, field))

int ilab_dma_configure(struct ilab_dev *dev, const struct ilab_dma_options *o)
{
	struct dma_dev *dd = dma_dev_of(dev);
	struct ilab_iommu_domain *d;
	struct dma_cookie *c;
	int ret;

	if (!dd)
		return ilab_iommu_set_error(-ENODEV, "configure: device not set up for DMA");
	if (!o || o->lookup > ILAB_DMA_LOOKUP_REFCOUNT || o->fq_size < 2 ||
	    (o->fq_size & (o->fq_size - 1)) || !o->fq_timeout_ns || o->max_seg_size < 512 ||
	    (o->fq_kind != ILAB_DMA_FQ_PERCPU && o->fq_kind != ILAB_DMA_FQ_SINGLE) ||
	    o->iova_mag_size < 2 || o->iova_mag_size > ILAB_IOVA_MAG_SIZE_MAX ||
	    (o->iova_depot != ILAB_IOVA_DEPOT_LIST && o->iova_depot != ILAB_IOVA_DEPOT_FIXED32))
		return ilab_iommu_set_error(-EINVAL, "configure: bad option");
	d = ilab_iommu_get_dma_domain(dev);
	c = d ? d->iova_cookie : NULL;
	if (c) {
		if (o->use_map_pages ? !d->pt.map_pages : !d->pt.map)
			return ilab_iommu_set_error(-EINVAL, "configure: the driver has no %s path",
						    o->use_map_pages ? "map_pages" : "per-page map");
		ilab_fq_drain(c->fq);
		if (SUM(c, maps) != SUM(c, unmaps))
			return ilab_iommu_set_error(-EBUSY, "configure: %s has live mappings",
						    dev->name);
		c->use_map_pages = o->use_map_pages;
		ilab_iova_set_fast_free_check(&c->iovad, o->check_iova_free);
		ilab_iova_set_depot_mode(&c->iovad, o->iova_depot);
		if (o->iova_mag_size != c->iovad.mag_size) {
			ilab_iova_flush_rcaches(&c->iovad); /* magazines of the old size */
			ret = ilab_iova_set_mag_size(&c->iovad, o->iova_mag_size);
			if (ret)
				return ilab_iommu_set_error(ret, "configure: IOVA magazines (%d)", ret);
		}
		if (d->type == ILAB_DOMAIN_DMA_FQ &&
		    (o->fq_size != dd->opts.fq_size || o->fq_timeout_ns != dd->opts.fq_timeout_ns ||
		     o->fq_timer != dd->opts.fq_timer || o->fq_kind != dd->opts.fq_kind)) {
			ret = cookie_fq_setup(d, o);
			if (ret)
				return ilab_iommu_set_error(ret, "configure: flush queue (%d)", ret);
		}
	}
	dd->opts = *o;
	plat_store32(&dd->pci_32bit_workaround, dev->pci && !o->forcedac);
	return 0;
}

bool ilab_dma_has_per_page_path(struct ilab_dev *dev)
{
	struct ilab_iommu_domain *d = ilab_iommu_get_dma_domain(dev);

	return !d || !d->iova_cookie || (d->pt.map && d->pt.unmap);
}

int ilab_dma_get_options(struct ilab_dev *dev, struct ilab_dma_options *o)
{
	struct dma_dev *dd = dma_dev_of(dev);

	if (!dd || !o)
		return -ENODEV;
	*o = dd->opts;
	return 0;
}

int ilab_dma_stats(struct ilab_dev *dev, struct ilab_dma_stats *st)
{
	struct ilab_iommu_domain *d = ilab_iommu_get_dma_domain(dev);
	struct dma_cookie *c = d ? d->iova_cookie : NULL;
	struct ilab_iova_stats is;
	struct ilab_fq_stats fs;

	if (!st || !dev || !dev->dma_priv)
		return -ENODEV;
	*st = (struct ilab_dma_stats){ 0 };
	if (!c)
		return 0;
	st->maps = SUM(c, maps);
	st->unmaps = SUM(c, unmaps);
	st->map_errors = SUM(c, map_errors);
	st->unmap_errors = SUM(c, unmap_errors);
	st->iotlb_syncs = SUM(c, iotlb_syncs);
	st->refcount_lookups = SUM(c, refcount_lookups);
	st->direct_lookups = SUM(c, direct_lookups);
	st->dac_fallbacks = SUM(c, dac_fallbacks);
	ilab_fq_stats(c->fq, &fs);
	st->fq_queued = fs.queued;
	st->fq_flushes = fs.flushes;
	st->fq_full_flushes = fs.full_flushes;
	st->fq_timeouts = fs.timeouts;
	st->fq_freed = fs.freed;
	ilab_iova_stats(&c->iovad, &is);
	st->iova_cache_hits = is.cache_hits;
	st->iova_cache_misses = is.cache_misses;
	st->iova_max_mag_fill = is.max_mag_fill;
	for (unsigned cls = 0; cls < ILAB_IOVA_RANGE_CACHE_MAX_SIZE; cls++)
		if (is.depot_max[cls] > st->iova_depot_max)
			st->iova_depot_max = is.depot_max[cls];
	return 0;
}

int ilab_dma_swiotlb_stats(struct ilab_dev *dev, struct ilab_swiotlb_stats *st)
{
	struct dma_dev *dd = dma_dev_of(dev);

	if (!dd || !dd->swiotlb || !st)
		return -ENODEV;
	ilab_swiotlb_get_stats(dd->swiotlb, st);
	return 0;
}

void ilab_dma_flush_queue_drain(struct ilab_dev *dev)
{
	struct ilab_iommu_domain *d = ilab_iommu_get_dma_domain(dev);
	struct dma_cookie *c = d ? d->iova_cookie : NULL;

	if (c)
		ilab_fq_drain(c->fq);
}
