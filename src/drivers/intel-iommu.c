/* intel-iommu.c — the Intel VT-d driver's unit and domains (Linux 6.3
 * drivers/iommu/intel/iommu.c and dmar.c alloc_iommu): probe of one DMAR unit (VER/CAP/ECAP,
 * agaw, queued invalidation, domain ids, root table, SRTP, global invalidations, fault
 * interrupt, TE), devices (device_domain_info), domains with their iommu_array and nid
 * (domain_attach_iommu / domain_detach_iommu, domain_update_iommu_cap), context entries
 * (domain_context_mapping_one / domain_context_clear_one) and the ilab_iommu_ops. It is not the
 * queue (intel-iommu-dmar.c), the flush policy (intel-iommu-cache.c) or the page table
 * (intel-iommu-pgtable.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/intel-iommu.h"

static _Thread_local char err_msg[160];

int intel_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_msg, sizeof(err_msg), fmt, ap);
	va_end(ap);
	return err;
}

const char *ilab_intel_iommu_strerror(void)
{
	return err_msg[0] ? err_msg : "no error";
}

static const struct ilab_iommu_ops intel_iommu_ops;
static const struct ilab_iommu_domain_ops intel_domain_ops;

bool ilab_intel_iommu_is_ours(const struct ilab_iommu *iommu)
{
	return iommu && iommu->ops == &intel_iommu_ops && iommu->priv;
}

static struct dmar_domain *our_domain(const struct ilab_iommu_domain *d)
{
	return d && d->ops == &intel_domain_ops ? to_dmar_domain(d) : NULL;
}

/* Linux dmar_seq_ids: each unit's index in iommu_array. */
static _Atomic uint32_t seq_ids_used;

static int seq_id_alloc(void)
{
	uint32_t cur = atomic_load(&seq_ids_used);

	for (;;) {
		unsigned id;

		if (cur == (1u << INTEL_MAX_UNITS) - 1)
			return -ENOSPC;
		id = (unsigned)__builtin_ctz(~cur);
		if (atomic_compare_exchange_weak(&seq_ids_used, &cur, cur | (1u << id)))
			return (int)id;
	}
}

static void seq_id_free(unsigned id)
{
	atomic_fetch_and(&seq_ids_used, ~(1u << id));
}

/* ---- probe --------------------------------------------------------------------------------- */

/* __iommu_calculate_agaw: the largest agaw the unit supports not above width_to_agaw(width). */
static int calculate_agaw(uint64_t cap, int width)
{
	unsigned long sagaw = cap_sagaw(cap);

	for (int agaw = width_to_agaw(width); agaw >= 0; agaw--)
		if (agaw < 5 && (sagaw >> agaw) & 1)
			return agaw;
	return -1;
}

/* Linux iommu_alloc_root_entry + iommu_set_root_entry: a root table on the unit's node, RTADDR,
 * SRTP and wait for RTPS; then the global context-cache and IOTLB invalidations that VT-d
 * §10.4.4 asks for after SRTP. */
static int set_root_entry(struct intel_iommu *iommu)
{
	int err;

	err = ilab_mem_alloc_pages(iommu->mem, iommu->node, 0, &iommu->root_pa);
	if (err)
		return intel_set_error(-ENOMEM, "dmar: no memory for the root table");
	iommu->root_entry = ilab_mem_va(iommu->mem, iommu->root_pa, VTD_PAGE_SIZE);
	memset(iommu->root_entry, 0, VTD_PAGE_SIZE);
	plat_spin_lock(&iommu->register_lock);
	plat_mmio_write64(iommu->mmio, DMAR_RTADDR_REG, iommu->root_pa);
	plat_mmio_write32(iommu->mmio, DMAR_GCMD_REG, iommu->gcmd | DMA_GCMD_SRTP);
	err = intel_wait_gsts(iommu, DMA_GSTS_RTPS, true);
	plat_spin_unlock(&iommu->register_lock);
	if (err)
		return err;
	qi_flush_context(iommu, 0, 0, 0, QI_GRAN_GLOBAL);
	qi_flush_iotlb(iommu, 0, 0, 0, QI_GRAN_GLOBAL, false);
	return 0;
}

static int enable_translation(struct intel_iommu *iommu, bool on)
{
	int err;

	plat_spin_lock(&iommu->register_lock);
	if (on)
		iommu->gcmd |= DMA_GCMD_TE;
	else
		iommu->gcmd &= ~DMA_GCMD_TE;
	plat_mmio_write32(iommu->mmio, DMAR_GCMD_REG, iommu->gcmd);
	err = intel_wait_gsts(iommu, DMA_GSTS_TES, on);
	plat_spin_unlock(&iommu->register_lock);
	return err;
}

static void unit_free(struct intel_iommu *iommu)
{
	intel_dmar_free_qi(iommu);
	if (iommu->root_entry) {
		for (unsigned bus = 0; bus < 256; bus++) {
			uint64_t lo = iommu->root_entry[2 * bus];

			if (lo & 1)
				ilab_mem_free_pages(iommu->mem, lo & DMA_PTE_ADDR_MASK, 0);
		}
		ilab_mem_free_pages(iommu->mem, iommu->root_pa, 0);
	}
	free(iommu->domain_ids);
	plat_percpu_free(iommu->stats);
	seq_id_free(iommu->seq_id);
	free(iommu);
}

/* alloc_iommu + init_dmars + intel_iommu_init for one unit. */
int ilab_intel_iommu_probe(struct plat_mmio *mmio, struct ilab_mem *mem, int node,
			   const struct ilab_intel_iommu_opts *opts, struct ilab_iommu **out)
{
	struct intel_iommu *iommu;
	uint32_t sts;
	int err, seq;

	err_msg[0] = 0;
	if (!mmio || !mmio->ops || !mmio->ops->read || !mmio->ops->write || !mem || !out)
		return intel_set_error(-EINVAL, "dmar: probe needs an MMIO window, memory and out");
	if (node < 0 || (unsigned)node >= ilab_mem_nr_nodes(mem))
		return intel_set_error(-EINVAL, "dmar: node %d has no memory", node);
	if (opts && opts->nid_policy > ILAB_INTEL_NID_HINT)
		return intel_set_error(-EINVAL, "dmar: bad nid policy %d", (int)opts->nid_policy);
	seq = seq_id_alloc();
	if (seq < 0)
		return intel_set_error(-ENOSPC, "dmar: more than %d units", INTEL_MAX_UNITS);
	iommu = plat_zalloc(sizeof(*iommu));
	if (!iommu) {
		seq_id_free((unsigned)seq);
		return intel_set_error(-ENOMEM, "dmar: out of memory");
	}
	iommu->seq_id = (unsigned)seq;
	iommu->iommu.ops = &intel_iommu_ops;
	iommu->iommu.name = mmio->name ? mmio->name : "dmar";
	iommu->iommu.node = node;
	iommu->iommu.mem = mem;
	iommu->iommu.priv = iommu;
	iommu->mmio = mmio;
	iommu->mem = mem;
	iommu->node = node;
	if (opts)
		iommu->opts = *opts;
	plat_spin_init(&iommu->register_lock, "intel_iommu.register_lock");
	plat_spin_init(&iommu->lock, "intel_iommu.lock");
	iommu->stats = plat_percpu_alloc(sizeof(struct intel_iommu_stats_pcpu));
	if (!iommu->stats) {
		err = intel_set_error(-ENOMEM, "dmar: out of memory");
		goto fail;
	}

	iommu->ver = plat_mmio_read32(mmio, DMAR_VER_REG);
	iommu->cap = plat_mmio_read64(mmio, DMAR_CAP_REG);
	iommu->ecap = plat_mmio_read64(mmio, DMAR_ECAP_REG);
	if (iommu->cap == ~0ull || iommu->ecap == ~0ull) {
		err = intel_set_error(-ENODEV, "dmar: CAP/ECAP read all ones");
		goto fail;
	}
	iommu->agaw = calculate_agaw(iommu->cap, DEFAULT_DOMAIN_ADDRESS_WIDTH);
	iommu->msagaw = calculate_agaw(iommu->cap, 64);
	if (iommu->agaw < 1) { /* agaw 0 (30 bits) is not a second-stage format Linux uses */
		err = intel_set_error(-ENODEV, "dmar: no usable SAGAW (%#x)", cap_sagaw(iommu->cap));
		goto fail;
	}
	if (cap_mgaw(iommu->cap) < 39) {
		err = intel_set_error(-ENODEV, "dmar: MGAW %u below 39", cap_mgaw(iommu->cap));
		goto fail;
	}
	/* The persistent GCMD bits follow GSTS (alloc_iommu); translation left on by firmware
	 * is turned off before the tables change. */
	sts = plat_mmio_read32(mmio, DMAR_GSTS_REG);
	iommu->gcmd = sts & (DMA_GSTS_TES | DMA_GSTS_QIES);
	if (sts & DMA_GSTS_TES) {
		err = enable_translation(iommu, false);
		if (err)
			goto fail;
	}
	/* intel_iommu_init_qi: clear pending faults, QI off, then on with our queue. */
	ilab_intel_iommu_handle_fault(&iommu->iommu, NULL, 0, NULL);
	intel_dmar_disable_qi(iommu);
	err = intel_dmar_enable_qi(iommu);
	if (err)
		goto fail;
	/* iommu_init_domains: DID 0 is reserved (caching mode tags invalid entries with it, and
	 * Linux uses 0 as "no domain id"). */
	iommu->domain_ids = calloc((cap_ndoms(iommu->cap) + 63) / 64, sizeof(uint64_t));
	if (!iommu->domain_ids) {
		err = intel_set_error(-ENOMEM, "dmar: out of memory");
		goto fail;
	}
	iommu->domain_ids[0] = 1;
	err = set_root_entry(iommu);
	if (err)
		goto fail;
	intel_dmar_set_interrupt(iommu);
	err = enable_translation(iommu, true);
	if (err)
		goto fail;
	*out = &iommu->iommu;
	return 0;
fail:
	intel_dmar_disable_qi(iommu);
	unit_free(iommu);
	return err;
}

void ilab_intel_iommu_remove(struct ilab_iommu *iommu_)
{
	struct intel_iommu *iommu;

	if (!ilab_intel_iommu_is_ours(iommu_))
		return;
	iommu = to_intel_iommu(iommu_);
	enable_translation(iommu, false);
	intel_dmar_disable_qi(iommu);
	unit_free(iommu);
}

int ilab_intel_iommu_get_info(struct ilab_iommu *iommu_, struct ilab_intel_iommu_info *info)
{
	struct intel_iommu *iommu;
	unsigned sp;

	if (!ilab_intel_iommu_is_ours(iommu_) || !info)
		return -EINVAL;
	iommu = to_intel_iommu(iommu_);
	memset(info, 0, sizeof(*info));
	info->ver = iommu->ver;
	info->cap = iommu->cap;
	info->ecap = iommu->ecap;
	info->seq_id = iommu->seq_id;
	info->agaw = (unsigned)iommu->agaw;
	info->msagaw = (unsigned)iommu->msagaw;
	info->mgaw = cap_mgaw(iommu->cap);
	info->ndoms = cap_ndoms(iommu->cap);
	info->mamv = cap_max_amask_val(iommu->cap);
	info->nfr = cap_num_fault_regs(iommu->cap);
	sp = cap_super_page_val(iommu->cap) & 3;
	info->superpage = sp ? 32u - (unsigned)__builtin_clz(sp) : 0;
	info->coherent = ecap_coherent(iommu->ecap);
	info->psi = cap_pgsel_inv(iommu->cap);
	info->dev_iotlb = ecap_dev_iotlb_support(iommu->ecap);
	info->pass_through = ecap_pass_through(iommu->ecap);
	info->root_pa = iommu->root_pa;
	info->qi_desc_pa = iommu->qi.desc_pa;
	info->qi_status_pa = iommu->qi.status_pa;
	info->qi_entries = QI_LENGTH;
	info->gsts = plat_mmio_read32(iommu->mmio, DMAR_GSTS_REG);
	return 0;
}

int ilab_intel_iommu_get_stats(struct ilab_iommu *iommu_, struct ilab_intel_iommu_stats *st)
{
	struct intel_iommu *iommu;

	if (!ilab_intel_iommu_is_ours(iommu_) || !st)
		return -EINVAL;
	iommu = to_intel_iommu(iommu_);
	memset(st, 0, sizeof(*st));
	for (unsigned c = 0; c < plat_cpu_count(); c++) {
		struct intel_iommu_stats_pcpu *p = plat_percpu_ptr(iommu->stats, c);

		st->qi_submits += plat_stat_read64(&p->qi_submits);
		for (unsigned t = 0; t < 16; t++)
			st->descs[t] += plat_stat_read64(&p->descs[t]);
		st->iotlb_psi += plat_stat_read64(&p->psi);
		st->iotlb_dsi += plat_stat_read64(&p->dsi);
		st->iotlb_global += plat_stat_read64(&p->global);
		st->psi_ih += plat_stat_read64(&p->psi_ih);
		st->devtlb_invs += plat_stat_read64(&p->devtlb);
		st->iqe_recovered += plat_stat_read64(&p->iqe);
		st->faults_handled += plat_stat_read64(&p->faults);
		st->fault_irqs += plat_stat_read64(&p->fault_irqs);
		st->fault_overflows += plat_stat_read64(&p->fault_overflows);
		st->fault_reports += plat_stat_read64(&p->fault_reports);
		st->fault_reports_missed += plat_stat_read64(&p->fault_missed);
		st->pgtable_alloc += plat_stat_read64(&p->pt_alloc);
		st->pgtable_free += plat_stat_read64(&p->pt_free);
	}
	return 0;
}

void ilab_intel_iommu_clear_stats(struct ilab_iommu *iommu_)
{
	struct intel_iommu *iommu;

	if (!ilab_intel_iommu_is_ours(iommu_))
		return;
	iommu = to_intel_iommu(iommu_);
	for (unsigned c = 0; c < plat_cpu_count(); c++)
		memset(plat_percpu_ptr(iommu->stats, c), 0, sizeof(struct intel_iommu_stats_pcpu));
}

int ilab_intel_iommu_qi_submit(struct ilab_iommu *iommu_, const uint64_t *descs, unsigned n)
{
	struct qi_desc d[QI_LENGTH];

	if (!ilab_intel_iommu_is_ours(iommu_) || (!descs && n) || n + 2 > QI_LENGTH)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		d[i].qw0 = descs[2 * i];
		d[i].qw1 = descs[2 * i + 1];
	}
	return qi_submit_sync(to_intel_iommu(iommu_), d, n);
}

/* ---- domain ids and iommu_array ------------------------------------------------------------ */

static bool is_paging(enum ilab_domain_type t)
{
	return t == ILAB_DOMAIN_DMA || t == ILAB_DOMAIN_DMA_FQ || t == ILAB_DOMAIN_UNMANAGED;
}

static struct intel_iommu *array_unit(struct dmar_domain *d, unsigned i)
{
	return (struct intel_iommu *)(uintptr_t)plat_load64(&d->iommu_array[i].iommu);
}

static void set_nid(struct dmar_domain *d, int nid)
{
	d->nid = nid;
	d->domain.node = nid;
}

/* domain_update_iommu_cap, with domain->lock held: coherency and superpage support as the
 * intersection over the domain's units (Linux 6.3 takes superpages over all active units;
 * with none attached the allocating unit stands in), the nid fallback to a device's node, the
 * aperture, pgsize_bitmap |= the superpage sizes (Linux never shrinks it: a smaller superpage
 * level makes __domain_mapping split instead), and has_iotlb_device (domain_update_iotlb). */
static void domain_update_iommu_cap(struct dmar_domain *d)
{
	bool found = false, coherent = true, iotlb = false;
	unsigned mask = 3;

	for (unsigned i = 0; i < INTEL_MAX_UNITS; i++) {
		struct intel_iommu *u = array_unit(d, i);

		if (!u)
			continue;
		found = true;
		coherent &= ecap_coherent(u->ecap) != 0;
		mask &= cap_super_page_val(u->cap);
	}
	if (!found) {
		coherent = ecap_coherent(d->alloc_iommu->ecap) != 0;
		mask &= cap_super_page_val(d->alloc_iommu->cap);
	}
	if (d->alloc_iommu->opts.no_superpage)
		mask = 0;
	d->iommu_coherency = coherent;
	d->iommu_superpage = mask ? 32u - (unsigned)__builtin_clz(mask) : 0;
	if (d->nid == NUMA_NO_NODE && d->alloc_iommu->opts.nid_policy != ILAB_INTEL_NID_HINT) {
		for (unsigned i = 0; i < d->nr_devices; i++) {
			/* list_add puts the newest first: walk from the end of our array */
			struct device_domain_info *info = d->devices[d->nr_devices - 1 - i];

			if (info->dev->node >= 0) {
				set_nid(d, info->dev->node);
				break;
			}
		}
	}
	d->domain.aperture_end = (1ull << d->gaw) - 1;
	if (d->iommu_superpage >= 1)
		d->domain.pgsize_bitmap |= 1ull << 21;
	if (d->iommu_superpage >= 2)
		d->domain.pgsize_bitmap |= 1ull << 30;
	d->domain.pt.pgsize_bitmap = d->domain.pgsize_bitmap;
	for (unsigned i = 0; i < d->nr_devices; i++)
		iotlb |= d->devices[i]->ats_enabled;
	plat_store32(&d->has_iotlb_device, iotlb);
}

/* domain_attach_iommu: one more device of d behind iommu. A new unit gets a domain id from
 * its bitmap and a slot in iommu_array (published last: flushes then reach it); the seed-004
 * policy sets nid = iommu->node here, on every new (domain, unit). */
static int domain_attach_iommu(struct dmar_domain *d, struct intel_iommu *iommu)
{
	struct iommu_domain_info *slot = &d->iommu_array[iommu->seq_id];
	unsigned ndoms = cap_ndoms(iommu->cap), did = ndoms;

	plat_spin_lock(&d->lock);
	if (array_unit(d, iommu->seq_id) == iommu) {
		slot->refcnt++;
		plat_spin_unlock(&d->lock);
		return 0;
	}
	plat_spin_lock(&iommu->lock);
	for (unsigned w = 0; w < (ndoms + 63) / 64 && did == ndoms; w++)
		if (~iommu->domain_ids[w]) {
			unsigned b = (unsigned)__builtin_ctzll(~iommu->domain_ids[w]);

			if (w * 64 + b < ndoms) {
				did = w * 64 + b;
				iommu->domain_ids[w] |= 1ull << b;
			}
		}
	plat_spin_unlock(&iommu->lock);
	if (did >= ndoms) {
		plat_spin_unlock(&d->lock);
		return intel_set_error(-ENOSPC, "dmar: %s has no free domain id", iommu->iommu.name);
	}
	slot->refcnt = 1;
	plat_store32(&slot->did, did);
	plat_store64(&slot->iommu, (uint64_t)(uintptr_t)iommu);
	if (iommu->opts.nid_policy == ILAB_INTEL_NID_UNIT_ON_ATTACH ||
	    d->alloc_iommu->opts.nid_policy == ILAB_INTEL_NID_UNIT_ON_ATTACH)
		set_nid(d, iommu->node);
	domain_update_iommu_cap(d);
	plat_spin_unlock(&d->lock);
	return 0;
}

/* domain_detach_iommu: the unit's last device left: free the domain id (the caller has
 * invalidated it there), empty the slot, nid back to NUMA_NO_NODE (Linux and the seed). */
static void domain_detach_iommu(struct dmar_domain *d, struct intel_iommu *iommu)
{
	struct iommu_domain_info *slot = &d->iommu_array[iommu->seq_id];

	plat_spin_lock(&d->lock);
	if (array_unit(d, iommu->seq_id) == iommu && --slot->refcnt == 0) {
		unsigned did = plat_load32(&slot->did);

		plat_store64(&slot->iommu, 0);
		plat_spin_lock(&iommu->lock);
		iommu->domain_ids[did / 64] &= ~(1ull << (did % 64));
		plat_spin_unlock(&iommu->lock);
		if (d->alloc_iommu->opts.nid_policy != ILAB_INTEL_NID_HINT)
			set_nid(d, NUMA_NO_NODE);
		domain_update_iommu_cap(d);
	}
	plat_spin_unlock(&d->lock);
}

/* ---- domains --------------------------------------------------------------------------------- */

static struct ilab_iommu_domain *domain_alloc(struct ilab_iommu *iommu_, enum ilab_domain_type type,
					      int node)
{
	struct intel_iommu *iommu = ilab_intel_iommu_is_ours(iommu_) ? to_intel_iommu(iommu_) : NULL;
	struct dmar_domain *d;

	if (!iommu || type > ILAB_DOMAIN_DMA_FQ) {
		intel_set_error(-EINVAL, "dmar: bad domain type %d", (int)type);
		return NULL;
	}
	if (type == ILAB_DOMAIN_IDENTITY && !ecap_pass_through(iommu->ecap)) {
		intel_set_error(-EOPNOTSUPP, "dmar: %s has no pass-through (ECAP.PT 0)",
				iommu->iommu.name);
		return NULL;
	}
	if (node >= 0 && (unsigned)node >= ilab_mem_nr_nodes(iommu->mem)) {
		intel_set_error(-EINVAL, "dmar: node %d has no memory", node);
		return NULL;
	}
	d = plat_zalloc(sizeof(*d));
	if (!d) {
		intel_set_error(-ENOMEM, "dmar: out of memory");
		return NULL;
	}
	d->alloc_iommu = iommu;
	d->domain.type = type;
	d->domain.ops = &intel_domain_ops;
	d->domain.iommu = iommu_;
	d->domain.priv = d;
	plat_spin_init(&d->lock, "dmar_domain.lock");
	plat_spin_init(&d->free_lock, "dmar_domain.free_lock");
	if (iommu->opts.nid_policy == ILAB_INTEL_NID_HINT)
		set_nid(d, node < 0 ? iommu->node : node);
	else
		set_nid(d, NUMA_NO_NODE); /* Linux's domain_alloc has no node */
	/* md_domain_init(DEFAULT_DOMAIN_ADDRESS_WIDTH) followed by the allocating unit's
	 * knock-out, done at once: the pgd is the unit's top level. */
	d->agaw = iommu->agaw;
	d->gaw = agaw_to_width(d->agaw);
	if ((unsigned)d->gaw > cap_mgaw(iommu->cap))
		d->gaw = (int)cap_mgaw(iommu->cap);
	d->domain.pgsize_bitmap = VTD_PAGE_SIZE;
	d->domain.aperture_start = 0;
	plat_spin_lock(&d->lock);
	domain_update_iommu_cap(d);
	plat_spin_unlock(&d->lock);
	if (!is_paging(type))
		return &d->domain;
	if (intel_domain_pgd_alloc(d)) {
		free(d);
		intel_set_error(-ENOMEM, "dmar: no memory for a pgd");
		return NULL;
	}
	d->domain.pt.priv = d;
	d->domain.pt.pgsize_bitmap = d->domain.pgsize_bitmap;
	d->domain.pt.map_pages = intel_iommu_map_pages;
	d->domain.pt.unmap_pages = intel_iommu_unmap_pages;
	d->domain.pt.iotlb_sync = intel_iommu_tlb_sync;
	return &d->domain;
}

static void domain_free(struct ilab_iommu_domain *domain)
{
	struct dmar_domain *d = our_domain(domain);

	if (!d)
		return;
	/* Normally no unit is left (the last detach emptied iommu_array); flush any that is
	 * before its domain id goes back. */
	for (unsigned i = 0; i < INTEL_MAX_UNITS; i++) {
		struct intel_iommu *u = array_unit(d, i);

		if (!u)
			continue;
		qi_flush_iotlb(u, (uint16_t)plat_load32(&d->iommu_array[i].did), 0, 0,
			       QI_GRAN_DOMAIN, false);
		d->iommu_array[i].refcnt = 1;
		domain_detach_iommu(d, u);
	}
	intel_domain_pgtable_free(d);
	free(d->devices);
	free(d);
}

/* ---- context entries ------------------------------------------------------------------------- */

/* iommu_context_addr: the context entry of (bus, devfn), allocating the bus's context table
 * on the unit's node when asked. With iommu->lock held. */
static uint64_t *iommu_context_addr(struct intel_iommu *iommu, uint8_t bus, uint8_t devfn,
				    bool alloc)
{
	uint64_t *root = &iommu->root_entry[2 * bus];
	uint64_t lo = __atomic_load_n(root, __ATOMIC_ACQUIRE);
	ilab_pa_t pa;
	uint64_t *ctx;

	if (!(lo & 1)) {
		if (!alloc || ilab_mem_alloc_pages(iommu->mem, iommu->node, 0, &pa))
			return NULL;
		ctx = ilab_mem_va(iommu->mem, pa, VTD_PAGE_SIZE);
		memset(ctx, 0, VTD_PAGE_SIZE);
		plat_mem_touch(root, 16, true);
		__atomic_store_n(root, pa | 1, __ATOMIC_RELEASE);
		lo = pa | 1;
	}
	ctx = ilab_mem_va(iommu->mem, lo & DMA_PTE_ADDR_MASK, VTD_PAGE_SIZE);
	return ctx ? &ctx[2 * devfn] : NULL;
}

static void context_write(uint64_t *ce, uint64_t lo, uint64_t hi)
{
	plat_mem_touch(ce, 16, true);
	__atomic_store_n(&ce[0], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&ce[1], hi, __ATOMIC_RELEASE);
	__atomic_store_n(&ce[0], lo, __ATOMIC_RELEASE);
}

/* domain_context_mapping_one (legacy mode): DID, AW, the table root (skipping top levels the
 * unit does not walk), TT (01 for an ATS device, 10 for identity), P. A non-present entry
 * becoming present needs no invalidation without caching mode (CM = 0 here). */
static int domain_context_mapping_one(struct dmar_domain *d, struct device_domain_info *info,
				      uint16_t did)
{
	struct intel_iommu *iommu = info->iommu;
	uint64_t lo, hi, *ce;
	unsigned tt, aw;
	ilab_pa_t root;

	if (d->domain.type == ILAB_DOMAIN_IDENTITY) {
		tt = CONTEXT_TT_PASS_THROUGH;
		aw = (unsigned)iommu->msagaw;
		root = 0;
	} else {
		uint64_t *pgd = d->pgd;
		int agaw;

		root = d->pgd_pa;
		for (agaw = d->agaw; agaw > iommu->agaw; agaw--) {
			uint64_t pte = __atomic_load_n(&pgd[0], __ATOMIC_ACQUIRE);

			if (!(pte & 3))
				return intel_set_error(-ENOMEM, "dmar: no table to skip to");
			root = pte & DMA_PTE_ADDR_MASK;
			pgd = ilab_mem_va(iommu->mem, root, VTD_PAGE_SIZE);
		}
		tt = info->ats_supported ? CONTEXT_TT_DEV_IOTLB : CONTEXT_TT_MULTI_LEVEL;
		aw = (unsigned)agaw;
	}
	lo = 1 | ((uint64_t)tt << 2) | root;
	hi = aw | ((uint64_t)did << 8);
	plat_spin_lock(&iommu->lock);
	ce = iommu_context_addr(iommu, info->bus, info->devfn, true);
	if (!ce) {
		plat_spin_unlock(&iommu->lock);
		return intel_set_error(-ENOMEM, "dmar: no memory for a context table");
	}
	context_write(ce, lo, hi);
	plat_spin_unlock(&iommu->lock);
	return 0;
}

/* domain_context_clear_one: clear the entry, then invalidate the device's context-cache entry,
 * the old domain id's IOTLB entries, and the device-TLB. */
static void domain_context_clear_one(struct device_domain_info *info)
{
	struct intel_iommu *iommu = info->iommu;
	uint64_t *ce;
	uint16_t did_old;

	plat_spin_lock(&iommu->lock);
	ce = iommu_context_addr(iommu, info->bus, info->devfn, false);
	if (!ce || !(__atomic_load_n(&ce[0], __ATOMIC_ACQUIRE) & 1)) {
		plat_spin_unlock(&iommu->lock);
		return;
	}
	did_old = (uint16_t)(__atomic_load_n(&ce[1], __ATOMIC_ACQUIRE) >> 8);
	context_write(ce, 0, 0);
	plat_spin_unlock(&iommu->lock);
	qi_flush_context(iommu, did_old, info->sid, 0, QI_GRAN_PAGE);
	qi_flush_iotlb(iommu, did_old, 0, 0, QI_GRAN_DOMAIN, false);
	intel_flush_dev_iotlb_one(info, 0, MAX_AGAW_PFN_WIDTH);
}

/* ---- devices and attach ------------------------------------------------------------------------ */

static int probe_device(struct ilab_iommu *iommu_, struct ilab_dev *dev)
{
	struct device_domain_info *info;

	if (!ilab_intel_iommu_is_ours(iommu_) || !dev || dev->iommu != iommu_)
		return -ENODEV;
	if (dev->iommu_priv)
		return -EEXIST;
	if (dev->sid > 0xffff)
		return intel_set_error(-ERANGE, "dmar: source-id %#x is not a PCI requester id",
				       dev->sid);
	info = plat_zalloc(sizeof(*info));
	if (!info)
		return -ENOMEM;
	info->dev = dev;
	info->iommu = to_intel_iommu(iommu_);
	info->sid = (uint16_t)dev->sid;
	info->pfsid = info->sid;
	info->bus = (uint8_t)(dev->sid >> 8);
	info->devfn = (uint8_t)dev->sid;
	dev->iommu_priv = info;
	return 0;
}

static void domain_add_dev(struct dmar_domain *d, struct device_domain_info *info)
{
	plat_spin_lock(&d->lock);
	if (d->nr_devices == d->cap_devices) {
		unsigned cap = d->cap_devices ? 2 * d->cap_devices : 4;
		void *p = realloc(d->devices, cap * sizeof(*d->devices));

		if (p) {
			d->devices = p;
			d->cap_devices = cap;
		}
	}
	if (d->nr_devices < d->cap_devices)
		d->devices[d->nr_devices++] = info;
	plat_spin_unlock(&d->lock);
}

static void domain_del_dev(struct dmar_domain *d, struct device_domain_info *info)
{
	plat_spin_lock(&d->lock);
	for (unsigned i = 0; i < d->nr_devices; i++)
		if (d->devices[i] == info) {
			memmove(&d->devices[i], &d->devices[i + 1],
				(d->nr_devices - i - 1) * sizeof(*d->devices));
			d->nr_devices--;
			break;
		}
	plat_spin_unlock(&d->lock);
}

static void domain_update_iotlb(struct dmar_domain *d)
{
	plat_spin_lock(&d->lock);
	domain_update_iommu_cap(d);
	plat_spin_unlock(&d->lock);
}

/* device_block_translation: ATS off, context entry cleared (with its invalidations), off the
 * domain's list, domain_detach_iommu. */
static void device_block_translation(struct device_domain_info *info)
{
	struct dmar_domain *d = info->domain;

	if (info->ats_enabled) {
		info->ats_enabled = false;
		if (d)
			domain_update_iotlb(d);
	}
	domain_context_clear_one(info);
	if (!d)
		return;
	domain_del_dev(d, info);
	if (d->domain.type != ILAB_DOMAIN_BLOCKED)
		domain_detach_iommu(d, info->iommu);
	info->domain = NULL;
}

static int block_dev(struct ilab_iommu *iommu_, struct ilab_dev *dev)
{
	struct device_domain_info *info = dev ? dev->iommu_priv : NULL;

	if (!info || dev->iommu != iommu_ || !ilab_intel_iommu_is_ours(iommu_))
		return -ENODEV;
	device_block_translation(info);
	return 0;
}

static void release_device(struct ilab_iommu *iommu_, struct ilab_dev *dev)
{
	struct device_domain_info *info = dev ? dev->iommu_priv : NULL;

	if (!info || dev->iommu != iommu_ || !ilab_intel_iommu_is_ours(iommu_))
		return;
	device_block_translation(info);
	free(info);
	dev->iommu_priv = NULL;
}

/* prepare_domain_attach_device: the unit must walk the domain's table. Linux checks max_addr
 * against the unit's width and knocks out top levels; this also refuses a unit whose SAGAW
 * lacks the domain's depth or that lacks a leaf size the domain already uses, and keeps gaw
 * the smallest width seen (Linux sets it to the last unit's). */
static int prepare_domain_attach_device(struct dmar_domain *d, struct intel_iommu *iommu)
{
	int addr_width = agaw_to_width(iommu->agaw);
	uint64_t used = __atomic_load_n(&d->used_pgsizes, __ATOMIC_RELAXED);
	unsigned sp = cap_super_page_val(iommu->cap);

	if (d->alloc_iommu->mem != iommu->mem)
		return intel_set_error(-EINVAL, "dmar: %s does not share the domain's memory",
				       iommu->iommu.name);
	if ((unsigned)addr_width > cap_mgaw(iommu->cap))
		addr_width = (int)cap_mgaw(iommu->cap);
	if (__atomic_load_n(&d->max_addr, __ATOMIC_RELAXED) > (1ull << addr_width))
		return intel_set_error(-EINVAL, "dmar: %s: mappings above its %d-bit width",
				       iommu->iommu.name, addr_width);
	if (((used >> 21) & 1 && !(sp & 1)) || ((used >> 30) & 1 && !(sp & 2)))
		return intel_set_error(-EINVAL, "dmar: %s lacks a superpage size the domain uses",
				       iommu->iommu.name);
	if (iommu->agaw < d->agaw) {
		plat_spin_lock(&d->lock);
		intel_domain_knock_out_levels(d, iommu->agaw);
		plat_spin_unlock(&d->lock);
	}
	if (!((cap_sagaw(iommu->cap) >> d->agaw) & 1))
		return intel_set_error(-EINVAL, "dmar: %s cannot walk %u-level tables (SAGAW %#x)",
				       iommu->iommu.name, agaw_to_level(d->agaw),
				       cap_sagaw(iommu->cap));
	if (addr_width < d->gaw)
		d->gaw = addr_width;
	return 0;
}

/* intel_iommu_attach_device + dmar_domain_attach_device. */
static int attach_dev(struct ilab_iommu_domain *domain, struct ilab_dev *dev)
{
	struct dmar_domain *d = our_domain(domain);
	struct device_domain_info *info = dev ? dev->iommu_priv : NULL;
	struct intel_iommu *iommu;
	int ret;

	if (!d || !info || !ilab_intel_iommu_is_ours(dev->iommu))
		return intel_set_error(-ENODEV, "dmar: device not probed by this driver");
	iommu = info->iommu;
	if (info->domain)
		device_block_translation(info);
	if (domain->type == ILAB_DOMAIN_BLOCKED) {
		info->domain = d;
		domain_add_dev(d, info);
		return 0;
	}
	if (domain->type == ILAB_DOMAIN_IDENTITY && !ecap_pass_through(iommu->ecap))
		return intel_set_error(-EINVAL, "dmar: %s has no pass-through", iommu->iommu.name);
	if (is_paging(domain->type)) {
		ret = prepare_domain_attach_device(d, iommu);
		if (ret)
			return ret;
	}
	ret = domain_attach_iommu(d, iommu);
	if (ret)
		return ret;
	info->domain = d;
	domain_add_dev(d, info);
	ret = domain_context_mapping_one(d, info,
					 (uint16_t)plat_load32(&d->iommu_array[iommu->seq_id].did));
	if (ret) {
		device_block_translation(info);
		return ret;
	}
	/* iommu_enable_pci_caps: ATS after the context entry, then domain_update_iotlb. */
	if (info->ats_supported && is_paging(domain->type)) {
		info->ats_enabled = true;
		domain_update_iotlb(d);
	}
	return 0;
}

static bool domain_compatible(struct ilab_iommu_domain *domain, struct ilab_iommu *other)
{
	struct dmar_domain *d = our_domain(domain);
	struct intel_iommu *o = ilab_intel_iommu_is_ours(other) ? to_intel_iommu(other) : NULL;

	if (!d || !o)
		return false;
	if (!is_paging(domain->type))
		return domain->iommu == other;
	return o->mem == d->alloc_iommu->mem && o->agaw >= 1;
}

int ilab_intel_iommu_set_ats(struct ilab_dev *dev, bool on, unsigned qdep)
{
	struct device_domain_info *info;

	if (!dev || !ilab_intel_iommu_is_ours(dev->iommu) || !dev->iommu_priv)
		return -ENODEV;
	info = dev->iommu_priv;
	if (on && !ecap_dev_iotlb_support(info->iommu->ecap))
		return intel_set_error(-EOPNOTSUPP, "dmar: %s has no device-TLB support (ECAP.DT)",
				       info->iommu->iommu.name);
	info->ats_supported = on;
	info->ats_qdep = qdep ? qdep : QI_DEV_IOTLB_MAX_INVS;
	return 0;
}

int ilab_intel_domain_get_caps(const struct ilab_iommu_domain *domain,
			       struct ilab_intel_domain_caps *caps)
{
	struct dmar_domain *d = our_domain(domain);

	if (!d || !caps)
		return -EINVAL;
	memset(caps, 0, sizeof(*caps));
	plat_spin_lock(&d->lock);
	caps->agaw = (unsigned)d->agaw;
	caps->gaw = (unsigned)d->gaw;
	caps->superpage = d->iommu_superpage;
	caps->coherent = d->iommu_coherency;
	caps->pgsize_bitmap = d->domain.pgsize_bitmap;
	caps->aperture_end = d->domain.aperture_end;
	for (unsigned i = 0; i < INTEL_MAX_UNITS; i++)
		caps->nr_units += array_unit(d, i) != NULL;
	caps->has_iotlb_device = plat_load32(&d->has_iotlb_device);
	caps->nid = d->nid;
	caps->pgd = d->pgd ? d->pgd_pa : 0;
	plat_spin_unlock(&d->lock);
	return 0;
}

int ilab_intel_domain_did_on(const struct ilab_iommu_domain *domain, const struct ilab_iommu *iommu)
{
	struct dmar_domain *d = our_domain(domain);
	struct intel_iommu *u;

	if (!d || !ilab_intel_iommu_is_ours(iommu))
		return -EINVAL;
	u = to_intel_iommu(iommu);
	if (array_unit(d, u->seq_id) != u)
		return -ENOENT;
	return (int)plat_load32(&d->iommu_array[u->seq_id].did);
}

static const struct ilab_iommu_domain_ops intel_domain_ops = {
	.attach_dev = attach_dev,
	.flush_iotlb_all = intel_iommu_flush_iotlb_all,
	.free = domain_free,
	.iova_to_phys = intel_iommu_iova_to_phys,
};

/* intel_iommu_get_resv_regions: the x86 interrupt range (IOAPIC_RANGE_START..END), which the
 * unit never translates (VT-d §3.14: requests there are interrupt requests). Linux also adds
 * the device's RMRRs and, with the floppy workaround, the ISA range: no firmware tables
 * here. */
static unsigned get_resv_regions(struct ilab_iommu *iommu, struct ilab_dev *dev,
				 struct ilab_iommu_resv_region *regs, unsigned max)
{
	(void)iommu;
	(void)dev;
	if (!max)
		return 0;
	regs[0] = (struct ilab_iommu_resv_region){
		.start = IOAPIC_RANGE_START,
		.length = IOAPIC_RANGE_END - IOAPIC_RANGE_START + 1,
		.type = ILAB_RESV_MSI,
	};
	return 1;
}

static const struct ilab_iommu_ops intel_iommu_ops = {
	.name = "intel-iommu",
	.domain_alloc = domain_alloc,
	.probe_device = probe_device,
	.release_device = release_device,
	.block_dev = block_dev,
	.domain_compatible = domain_compatible,
	.get_resv_regions = get_resv_regions,
};
