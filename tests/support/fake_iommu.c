/* fake_iommu.c — a stand-in IOMMU driver for tests (see fake_iommu.h): ilab_iommu_ops over
 * io-pgtable-arm, a 64-entry software IOTLB per domain, device DMA through it.
 * It is not the SMMUv3 driver: invalidation is immediate and there is no command queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/io_pgtable.h"
#include "iommulab/plat.h"
#include "support/fake_iommu.h"

struct fake_tlb_entry {
	uint64_t page;
	ilab_pa_t pa;
	bool valid;
};

struct fake_domain {
	struct ilab_iommu_domain dom;
	struct fake_iommu *f;
	struct ilab_io_pgtable *pgt;
	plat_spinlock tlb_lock;
	struct fake_tlb_entry tlb[FAKE_IOTLB_ENTRIES];
	unsigned next;
};

struct fake_ste {
	struct fake_domain *dom;
	bool valid;  /* false: blocked */
	bool bypass;
};

struct fake_iommu {
	struct ilab_iommu iommu;
	bool no_flush_all;
	plat_spinlock lock; /* ste[] and stats */
	struct fake_ste ste[FAKE_IOMMU_MAX_SIDS];
	struct fake_iommu_stats st;
};

static void tlb_inv(struct fake_domain *d, uint64_t start, uint64_t end) /* inclusive */
{
	plat_spin_lock(&d->tlb_lock);
	for (unsigned i = 0; i < FAKE_IOTLB_ENTRIES; i++)
		if (d->tlb[i].valid && d->tlb[i].page >= (start & ~0xfffull) && d->tlb[i].page <= end)
			d->tlb[i].valid = false;
	plat_spin_unlock(&d->tlb_lock);
}

static void count(struct fake_iommu *f, uint64_t *field)
{
	plat_spin_lock(&f->lock);
	(*field)++;
	plat_spin_unlock(&f->lock);
}

/* ---- io-pgtable flush ops ----------------------------------------------------------------- */

static void fk_flush_all(void *cookie)
{
	struct fake_domain *d = cookie;

	tlb_inv(d, 0, UINT64_MAX);
}

static void fk_flush_walk(uint64_t iova, size_t size, size_t granule, void *cookie)
{
	tlb_inv(cookie, iova, iova + size - 1);
}

static void fk_gather_sync(struct ilab_iotlb_gather *g, void *cookie)
{
	struct fake_domain *d = cookie;

	if (ilab_iotlb_gather_empty(g))
		return;
	tlb_inv(d, g->start, g->end);
	count(d->f, &d->f->st.tlbi_range);
}

static void fk_add_page(struct ilab_iotlb_gather *g, uint64_t iova, size_t granule, void *cookie)
{
	ilab_iotlb_gather_add_page(g, iova, granule, fk_gather_sync, cookie);
}

static const struct ilab_iommu_flush_ops fk_tlb_ops = {
	.tlb_flush_all = fk_flush_all,
	.tlb_flush_walk = fk_flush_walk,
	.tlb_add_page = fk_add_page,
};

static void fk_iotlb_sync(void *priv, struct ilab_iotlb_gather *g)
{
	struct ilab_io_pgtable *pgt = priv;

	fk_gather_sync(g, ilab_io_pgtable_cfg(pgt)->cookie);
	ilab_iotlb_gather_init(g);
}

/* ---- domain ops ------------------------------------------------------------------------- */

static struct fake_domain *to_fd(struct ilab_iommu_domain *dom)
{
	return (struct fake_domain *)dom;
}

static int fk_attach(struct ilab_iommu_domain *dom, struct ilab_dev *dev)
{
	struct fake_domain *d = to_fd(dom);
	struct fake_iommu *f = d->f;

	if (dev->sid >= FAKE_IOMMU_MAX_SIDS)
		return -ERANGE;
	plat_spin_lock(&f->lock);
	f->ste[dev->sid] = (struct fake_ste){ .dom = d, .valid = true,
					      .bypass = dom->type == ILAB_DOMAIN_IDENTITY };
	plat_spin_unlock(&f->lock);
	fk_flush_all(d); /* a new STE: nothing cached from before may be used */
	return 0;
}

static void fk_flush_iotlb_all(struct ilab_iommu_domain *dom)
{
	fk_flush_all(to_fd(dom));
	count(to_fd(dom)->f, &to_fd(dom)->f->st.tlbi_all);
}

static void fk_free(struct ilab_iommu_domain *dom)
{
	struct fake_domain *d = to_fd(dom);

	if (d->pgt)
		ilab_free_io_pgtable(d->pgt);
	free(d);
}

static ilab_pa_t fk_iova_to_phys(struct ilab_iommu_domain *dom, uint64_t iova)
{
	return to_fd(dom)->pgt ? ilab_io_pgtable_iova_to_phys(to_fd(dom)->pgt, iova) : 0;
}

static const struct ilab_iommu_domain_ops fk_domain_ops = {
	.attach_dev = fk_attach,
	.flush_iotlb_all = fk_flush_iotlb_all,
	.free = fk_free,
	.iova_to_phys = fk_iova_to_phys,
};

static const struct ilab_iommu_domain_ops fk_domain_ops_noflush = {
	.attach_dev = fk_attach,
	.free = fk_free,
	.iova_to_phys = fk_iova_to_phys,
};

/* ---- iommu ops -------------------------------------------------------------------------- */

static struct ilab_iommu_domain *fk_domain_alloc(struct ilab_iommu *iommu,
						 enum ilab_domain_type type, int node)
{
	struct fake_iommu *f = iommu->priv;
	struct fake_domain *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->f = f;
	d->dom.type = type;
	d->dom.ops = f->no_flush_all ? &fk_domain_ops_noflush : &fk_domain_ops;
	d->dom.node = node < 0 ? iommu->node : node;
	plat_spin_init(&d->tlb_lock, "fake.tlb");
	if (type != ILAB_DOMAIN_IDENTITY && type != ILAB_DOMAIN_BLOCKED) {
		struct ilab_io_pgtable_cfg cfg = {
			.pgsize_bitmap = (1ull << 12) | (1ull << 21) | (1ull << 30),
			.ias = 48,
			.oas = 48,
			.coherent_walk = true,
			.tlb = &fk_tlb_ops,
			.cookie = d,
			.mem = iommu->mem,
			.node = d->dom.node,
		};
		if (ilab_alloc_io_pgtable(ILAB_ARM_64_LPAE_S1, &cfg, &d->pgt)) {
			free(d);
			return NULL;
		}
		ilab_io_pgtable_pt_ops(d->pgt, &d->dom.pt);
		d->dom.pt.iotlb_sync = fk_iotlb_sync;
		d->dom.pgsize_bitmap = d->dom.pt.pgsize_bitmap;
		d->dom.aperture_start = 0;
		d->dom.aperture_end = (1ull << 48) - 1;
	}
	d->dom.priv = d;
	return &d->dom;
}

static int fk_probe_device(struct ilab_iommu *iommu, struct ilab_dev *dev)
{
	return dev->sid < FAKE_IOMMU_MAX_SIDS ? 0 : -ENODEV;
}

static void fk_release_device(struct ilab_iommu *iommu, struct ilab_dev *dev)
{
}

static int fk_block_dev(struct ilab_iommu *iommu, struct ilab_dev *dev)
{
	struct fake_iommu *f = iommu->priv;

	plat_spin_lock(&f->lock);
	f->ste[dev->sid] = (struct fake_ste){ 0 };
	plat_spin_unlock(&f->lock);
	return 0;
}

/* As the SMMUv3 driver it stands in for: the software MSI window. */
static unsigned fk_get_resv_regions(struct ilab_iommu *iommu, struct ilab_dev *dev,
				    struct ilab_iommu_resv_region *regs, unsigned max)
{
	(void)iommu;
	(void)dev;
	if (!max)
		return 0;
	regs[0] = (struct ilab_iommu_resv_region){ .start = ILAB_MSI_IOVA_BASE,
						   .length = ILAB_MSI_IOVA_LENGTH,
						   .type = ILAB_RESV_SW_MSI };
	return 1;
}

static const struct ilab_iommu_ops fk_ops = {
	.name = "fake-iommu",
	.domain_alloc = fk_domain_alloc,
	.probe_device = fk_probe_device,
	.release_device = fk_release_device,
	.block_dev = fk_block_dev,
	.get_resv_regions = fk_get_resv_regions,
};

int fake_iommu_create(struct ilab_mem *mem, int node, bool no_flush_all, struct fake_iommu **out)
{
	struct fake_iommu *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->iommu.ops = &fk_ops;
	f->iommu.name = "fake-iommu";
	f->iommu.node = node;
	f->iommu.mem = mem;
	f->iommu.priv = f;
	f->no_flush_all = no_flush_all;
	plat_spin_init(&f->lock, "fake.lock");
	*out = f;
	return 0;
}

void fake_iommu_destroy(struct fake_iommu *f)
{
	free(f);
}

struct ilab_iommu *fake_iommu_get(struct fake_iommu *f)
{
	return &f->iommu;
}

/* ---- device DMA ------------------------------------------------------------------------- */

static int fault(struct fake_iommu *f, uint32_t sid, uint64_t iova)
{
	plat_spin_lock(&f->lock);
	f->st.faults++;
	f->st.last_fault_iova = iova;
	f->st.last_fault_sid = sid;
	plat_spin_unlock(&f->lock);
	return -EFAULT;
}

static int translate(struct fake_iommu *f, struct fake_domain *d, uint64_t iova, ilab_pa_t *pa)
{
	uint64_t page = iova & ~0xfffull;
	ilab_pa_t base;
	bool hit = false;

	plat_spin_lock(&d->tlb_lock);
	for (unsigned i = 0; i < FAKE_IOTLB_ENTRIES; i++) {
		if (d->tlb[i].valid && d->tlb[i].page == page) {
			*pa = d->tlb[i].pa + (iova & 0xfff);
			hit = true;
			break;
		}
	}
	plat_spin_unlock(&d->tlb_lock);
	count(f, hit ? &f->st.tlb_hits : &f->st.tlb_misses);
	if (hit)
		return 0;
	base = ilab_io_pgtable_iova_to_phys(d->pgt, page);
	if (!base)
		return -EFAULT;
	plat_spin_lock(&d->tlb_lock);
	d->tlb[d->next] = (struct fake_tlb_entry){ .page = page, .pa = base, .valid = true };
	d->next = (d->next + 1) % FAKE_IOTLB_ENTRIES;
	plat_spin_unlock(&d->tlb_lock);
	*pa = base + (iova & 0xfff);
	return 0;
}

int fake_iommu_dma(struct fake_iommu *f, uint32_t sid, uint64_t iova, void *buf, size_t len,
		   bool write)
{
	struct fake_ste ste;
	char *p = buf;

	if (sid >= FAKE_IOMMU_MAX_SIDS)
		return fault(f, sid, iova);
	plat_spin_lock(&f->lock);
	ste = f->ste[sid];
	plat_spin_unlock(&f->lock);
	if (!ste.valid)
		return fault(f, sid, iova);
	while (len) {
		size_t chunk = 4096 - (iova & 0xfff);
		ilab_pa_t pa = iova;
		int ret;

		if (chunk > len)
			chunk = len;
		if (!ste.bypass && translate(f, ste.dom, iova, &pa))
			return fault(f, sid, iova);
		ret = write ? ilab_mem_write(f->iommu.mem, pa, p, chunk)
			    : ilab_mem_read(f->iommu.mem, pa, p, chunk);
		if (ret)
			return fault(f, sid, iova);
		iova += chunk;
		p += chunk;
		len -= chunk;
	}
	return 0;
}

void fake_iommu_stats(struct fake_iommu *f, struct fake_iommu_stats *st)
{
	plat_spin_lock(&f->lock);
	*st = f->st;
	plat_spin_unlock(&f->lock);
}
