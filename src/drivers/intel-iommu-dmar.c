/* intel-iommu-dmar.c — the DMAR unit's queued invalidation and fault reporting (Linux
 * drivers/iommu/intel/dmar.c): __dmar_enable_qi / dmar_disable_qi, qi_submit_sync with
 * qi_check_fault and reclaim_free_desc, dmar_set_interrupt and dmar_fault, and the GSTS wait
 * (IOMMU_WAIT_OP). It is not the flush policy (intel-iommu-cache.c) nor probe (intel-iommu.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/intel-iommu.h"

/* IOMMU_WAIT_OP: the model updates GSTS as the GCMD write lands, real units within
 * microseconds; a bounded number of register reads (Linux: DMAR_OPERATION_TIMEOUT). */
#define GSTS_MAX_READS 100000u

int intel_wait_gsts(struct intel_iommu *iommu, uint32_t mask, bool set)
{
	for (unsigned i = 0; i < GSTS_MAX_READS; i++) {
		uint32_t sts = plat_mmio_read32(iommu->mmio, DMAR_GSTS_REG);

		if (set ? (sts & mask) == mask : !(sts & mask))
			return 0;
		plat_cpu_relax();
	}
	return intel_set_error(-ETIMEDOUT, "dmar: GSTS %#x did not %s", mask,
			       set ? "set" : "clear");
}

/* ---- enabling the queue ------------------------------------------------------------------ */

/* dmar_enable_qi + __dmar_enable_qi: the queue page on the unit's node (alloc_pages_node
 * (iommu->node)), the status words (here also simulated memory, on the unit's node: the unit
 * writes them), IQT = 0, IQA, then QIE and wait for QIES. */
int intel_dmar_enable_qi(struct intel_iommu *iommu)
{
	struct q_inval *qi = &iommu->qi;
	int err;

	if (!ecap_qis(iommu->ecap))
		return intel_set_error(-ENODEV, "dmar: no queued invalidation (ECAP.QI 0)");
	if (!qi->desc) {
		err = ilab_mem_alloc_pages(iommu->mem, iommu->node, 0, &qi->desc_pa);
		if (err)
			return intel_set_error(-ENOMEM, "dmar: no memory for the queue");
		qi->desc = ilab_mem_va(iommu->mem, qi->desc_pa, VTD_PAGE_SIZE);
		err = ilab_mem_alloc_pages(iommu->mem, iommu->node, 0, &qi->status_pa);
		if (err) {
			ilab_mem_free_pages(iommu->mem, qi->desc_pa, 0);
			qi->desc = NULL;
			return intel_set_error(-ENOMEM, "dmar: no memory for the queue status");
		}
		qi->desc_status = ilab_mem_va(iommu->mem, qi->status_pa, VTD_PAGE_SIZE);
		memset(qi->desc, 0, VTD_PAGE_SIZE);
		memset((void *)qi->desc_status, 0, VTD_PAGE_SIZE);
		plat_spin_init(&qi->q_lock, "intel_iommu.qi.q_lock");
	}
	qi->free_head = qi->free_tail = 0;
	qi->free_cnt = QI_LENGTH;
	plat_spin_lock(&iommu->register_lock);
	plat_mmio_write32(iommu->mmio, DMAR_IQT_REG, 0);
	plat_mmio_write64(iommu->mmio, DMAR_IQA_REG, qi->desc_pa); /* QS 0: 256 entries */
	iommu->gcmd |= DMA_GCMD_QIE;
	plat_mmio_write32(iommu->mmio, DMAR_GCMD_REG, iommu->gcmd);
	err = intel_wait_gsts(iommu, DMA_GSTS_QIES, true);
	plat_spin_unlock(&iommu->register_lock);
	return err;
}

/* dmar_disable_qi: let the unit drain what was submitted, then clear QIE. */
void intel_dmar_disable_qi(struct intel_iommu *iommu)
{
	uint32_t sts = plat_mmio_read32(iommu->mmio, DMAR_GSTS_REG);

	if (!(sts & DMA_GSTS_QIES))
		return;
	plat_spin_lock(&iommu->register_lock);
	for (unsigned i = 0; i < GSTS_MAX_READS; i++) {
		uint64_t h = plat_mmio_read64(iommu->mmio, DMAR_IQH_REG);
		uint64_t t = plat_mmio_read64(iommu->mmio, DMAR_IQT_REG);

		if (h == t || (plat_mmio_read32(iommu->mmio, DMAR_FSTS_REG) & DMA_FSTS_IQE))
			break;
		plat_cpu_relax();
	}
	iommu->gcmd &= ~DMA_GCMD_QIE;
	plat_mmio_write32(iommu->mmio, DMAR_GCMD_REG, iommu->gcmd);
	intel_wait_gsts(iommu, DMA_GSTS_QIES, false);
	plat_spin_unlock(&iommu->register_lock);
}

void intel_dmar_free_qi(struct intel_iommu *iommu)
{
	struct q_inval *qi = &iommu->qi;

	if (!qi->desc)
		return;
	ilab_mem_free_pages(iommu->mem, qi->desc_pa, 0);
	ilab_mem_free_pages(iommu->mem, qi->status_pa, 0);
	qi->desc = NULL;
	qi->desc_status = NULL;
}

/* ---- qi_submit_sync ------------------------------------------------------------------------ */

static inline uint32_t status_get(struct q_inval *qi, unsigned i)
{
	return plat_load32(&qi->desc_status[i]);
}

static inline void status_set(struct q_inval *qi, unsigned i, uint32_t v)
{
	plat_store32(&qi->desc_status[i], v);
}

/* reclaim_free_desc: hand back the slots the unit is done with, oldest first. */
static void reclaim_free_desc(struct q_inval *qi)
{
	while (qi->free_cnt < QI_LENGTH) {
		uint32_t s = status_get(qi, qi->free_tail);

		if (s != QI_DONE && s != QI_ABORT)
			break;
		status_set(qi, qi->free_tail, QI_FREE);
		qi->free_tail = (qi->free_tail + 1) % QI_LENGTH;
		qi->free_cnt++;
	}
}

static bool in_submission(unsigned head, unsigned index, unsigned wait_index)
{
	unsigned span = (wait_index + QI_LENGTH - index) % QI_LENGTH;

	return (head + QI_LENGTH - index) % QI_LENGTH < span;
}

/* qi_check_fault: one FSTS read per call. On IQE with IQH on one of our descriptors, Linux
 * overwrites the bad descriptor with a copy of our wait descriptor (so the unit, resuming,
 * writes our status instead of choking again), clears IQE and returns -EINVAL. Linux checks
 * only IQH == the first descriptor (index); this accepts any of ours, which is the same for
 * the one-descriptor submissions Linux makes and does not hang on a later bad one. An IQE on
 * another submitter's descriptor is left to that submitter. The model never raises ITE/ICE
 * (its device-TLB invalidations are synchronous); ICE is cleared as Linux does. */
static int qi_check_fault(struct intel_iommu *iommu, unsigned index, unsigned wait_index)
{
	struct q_inval *qi = &iommu->qi;
	uint32_t fault = plat_mmio_read32(iommu->mmio, DMAR_FSTS_REG);

	if (fault & DMA_FSTS_IQE) {
		unsigned head = (unsigned)(plat_mmio_read64(iommu->mmio, DMAR_IQH_REG) >> 4) %
				QI_LENGTH;

		if (in_submission(head, index, wait_index)) {
			qi->desc[head] = qi->desc[wait_index];
			plat_mem_touch(&qi->desc[head], sizeof(struct qi_desc), true);
			plat_mb();
			INTEL_STAT_ADD(iommu, iqe, 1);
			plat_mmio_write32(iommu->mmio, DMAR_FSTS_REG, DMA_FSTS_IQE);
			return -EINVAL;
		}
	}
	if (fault & DMA_FSTS_ICE)
		plat_mmio_write32(iommu->mmio, DMAR_FSTS_REG, DMA_FSTS_ICE);
	return 0;
}

static bool status_done(uint64_t value, void *arg)
{
	(void)arg;
	return (uint32_t)value == QI_DONE;
}

/* qi_submit_sync: with q_lock held (Linux: a raw spinlock with interrupts off), wait for
 * count + 2 free slots, copy the descriptors and a wait descriptor (status write of QI_DONE
 * into desc_status[wait_index]), write IQT, then poll the status word, reading FSTS
 * (qi_check_fault) between polls; the lock is dropped around each wait as Linux drops it
 * around cpu_relax(), so other CPUs can queue meanwhile. */
int qi_submit_sync(struct intel_iommu *iommu, struct qi_desc *desc, unsigned count)
{
	struct q_inval *qi = &iommu->qi;
	uint64_t slice = iommu->opts.qi_poll_slice_ns ? iommu->opts.qi_poll_slice_ns : 1000;
	uint64_t limit = iommu->opts.qi_timeout_ns ? iommu->opts.qi_timeout_ns : 1000000000ull;
	uint64_t t0 = plat_now_ns();
	unsigned index, wait_index;
	int rc = 0;

	if (!qi->desc || count + 2 > QI_LENGTH)
		return -EINVAL;
	plat_scope_enter(PLAT_SCOPE_QI_SUBMIT_SYNC);
	plat_spin_lock(&qi->q_lock);
	while (qi->free_cnt < count + 2) {
		reclaim_free_desc(qi);
		if (qi->free_cnt >= count + 2)
			break;
		plat_spin_unlock(&qi->q_lock);
		plat_cpu_relax();
		plat_yield();
		plat_spin_lock(&qi->q_lock);
	}
	index = qi->free_head;
	wait_index = (index + count) % QI_LENGTH;
	for (unsigned i = 0; i < count; i++) {
		unsigned slot = (index + i) % QI_LENGTH;

		qi->desc[slot] = desc[i];
		plat_mem_touch(&qi->desc[slot], sizeof(struct qi_desc), true);
		status_set(qi, slot, QI_IN_USE);
		INTEL_STAT_ADD(iommu, descs[desc[i].qw0 & 0xf], 1);
	}
	qi->desc[wait_index].qw0 = QI_IWD_STATUS_DATA(QI_DONE) | QI_IWD_STATUS_WRITE | QI_IWD_TYPE;
	qi->desc[wait_index].qw1 = qi->status_pa + 4ull * wait_index;
	status_set(qi, wait_index, QI_IN_USE);
	plat_charge_n(PLAT_CHARGE_CMD_BUILD, count + 1);
	plat_mem_touch(&qi->desc[wait_index], sizeof(struct qi_desc), true);
	INTEL_STAT_ADD(iommu, descs[QI_IWD_TYPE], 1);
	INTEL_STAT_ADD(iommu, qi_submits, 1);
	qi->free_head = (qi->free_head + count + 1) % QI_LENGTH;
	qi->free_cnt -= count + 1;
	plat_mb(); /* descriptors visible before the doorbell (Linux: writel's barrier) */
	plat_mmio_write64(iommu->mmio, DMAR_IQT_REG, (uint64_t)qi->free_head << 4);

	while (status_get(qi, wait_index) != QI_DONE) {
		plat_scope_enter(PLAT_SCOPE_QI_CHECK_FAULT);
		rc = qi_check_fault(iommu, index, wait_index);
		plat_scope_leave();
		if (rc)
			break;
		plat_spin_unlock(&qi->q_lock);
		plat_poll(&qi->desc_status[wait_index], 4, status_done, NULL, slice);
		plat_spin_lock(&qi->q_lock);
		if (status_get(qi, wait_index) != QI_DONE && plat_now_ns() - t0 > limit) {
			rc = intel_set_error(-ETIMEDOUT, "dmar: %s: wait descriptor %u not done",
					     iommu->iommu.name, wait_index);
			break;
		}
	}
	/* The unit has fetched (or skipped) ours: their slots may be reused once the wait
	 * descriptor's own status says so (reclaim stops at it until then). */
	for (unsigned i = 0; i < count; i++)
		status_set(qi, (index + i) % QI_LENGTH, QI_DONE);
	reclaim_free_desc(qi);
	plat_spin_unlock(&qi->q_lock);
	plat_scope_leave();
	return rc;
}

/* ---- faults ---------------------------------------------------------------------------------- */

/* dmar_set_interrupt + dmar_msi_write/unmask: FEDATA, FEADDR, FEUADDR, then FECTL.IM = 0; then
 * handle whatever was pending (Linux calls dmar_fault once after request_irq). */
void intel_dmar_set_interrupt(struct intel_iommu *iommu)
{
	uint64_t addr = iommu->opts.fault_msi_addr ? iommu->opts.fault_msi_addr : 0xfee00000ull;

	plat_spin_lock(&iommu->register_lock);
	plat_mmio_write32(iommu->mmio, DMAR_FEDATA_REG, iommu->opts.fault_msi_data);
	plat_mmio_write32(iommu->mmio, DMAR_FEADDR_REG, (uint32_t)addr);
	plat_mmio_write32(iommu->mmio, DMAR_FEUADDR_REG, (uint32_t)(addr >> 32));
	plat_mmio_write32(iommu->mmio, DMAR_FECTL_REG, 0);
	plat_spin_unlock(&iommu->register_lock);
	ilab_intel_iommu_handle_fault(&iommu->iommu, NULL, 0, NULL);
}

/* Linux __ratelimit (DEFAULT_RATELIMIT_INTERVAL 5 s, DEFAULT_RATELIMIT_BURST 10): the first
 * `burst` calls of an interval pass, the others are counted as missed. Under register_lock.
 * Linux's state is one static of dmar_fault, shared by every unit; here it is the unit's. */
static bool fault_ratelimit(struct intel_iommu *iommu)
{
	struct intel_fault_rs *rs = &iommu->fault_rs;
	uint64_t interval = iommu->opts.fault_ratelimit_ns ? iommu->opts.fault_ratelimit_ns
							   : 5000000000ull;
	unsigned burst = iommu->opts.fault_ratelimit_burst ? iommu->opts.fault_ratelimit_burst : 10;
	uint64_t now = plat_now_ns();

	if (!rs->started || now - rs->begin > interval) {
		rs->started = true;
		rs->begin = now;
		rs->printed = 0;
	}
	if (rs->printed < burst) {
		rs->printed++;
		return true;
	}
	INTEL_STAT_ADD(iommu, fault_missed, 1);
	return false;
}

static void fault_report(struct intel_iommu *iommu, const char *line)
{
	INTEL_STAT_ADD(iommu, fault_reports, 1);
	if (iommu->opts.fault_report)
		iommu->opts.fault_report(iommu->opts.fault_report_ctx, line);
	else
		fprintf(stderr, "DMAR: %s\n", line);
}

/* Linux dma_remap_fault_reasons: the text of VT-d fault reasons 0h..Dh (§7.1.3). */
static const char *fault_reason_text(unsigned reason)
{
	static const char *const text[] = {
		"Software",
		"Present bit in root entry is clear",
		"Present bit in context entry is clear",
		"Invalid context entry",
		"Access beyond MGAW",
		"PTE Write access is not set",
		"PTE Read access is not set",
		"Next page table ptr is invalid",
		"Root table address invalid",
		"Context table ptr is invalid",
		"non-zero reserved fields in RTP",
		"non-zero reserved fields in CTP",
		"non-zero reserved fields in PTE",
		"PCE for translation request specifies blocking",
	};

	return reason < sizeof(text) / sizeof(text[0]) ? text[reason] : "Unknown";
}

/* dmar_fault_do_one, legacy mode (no PASID): one line per fault record. */
static void fault_report_one(struct intel_iommu *iommu, const struct ilab_intel_fault *f)
{
	char line[200];

	snprintf(line, sizeof(line), "[%s NO_PASID] Request device [%02x:%02x.%d] fault addr "
		 "0x%llx [fault reason 0x%02x] %s", f->read ? "DMA Read" : "DMA Write",
		 f->sid >> 8, (f->sid >> 3) & 0x1f, f->sid & 7, (unsigned long long)f->addr,
		 f->reason, fault_reason_text(f->reason));
	fault_report(iommu, line);
}

/* How many fault records one handler call reads at most: the unit may record new faults while
 * we clear old ones (Linux loops until it meets a record without F); a bound against a unit
 * that never stops, far above any NFR (at most 256). */
#define FAULT_RECORDS_MAX 4096u

/* dmar_fault (the fault event's interrupt handler, also called at set-up): read FSTS and report
 * it (ratelimited); if PPF, from FSTS.FRI on read each fault record whose F is set (the high
 * dword first, as Linux), clear its F, report it unless ratelimited, wrap at NFR; then clear
 * PFO (PPF is the OR of the F bits). As Linux, the ratelimit is asked once per record read,
 * including the read that ends the loop, and the register lock is dropped around each
 * report. */
unsigned ilab_intel_iommu_handle_fault(struct ilab_iommu *iommu_, struct ilab_intel_fault *recs,
				       unsigned max, bool *overflow)
{
	struct intel_iommu *iommu = ilab_intel_iommu_is_ours(iommu_) ? to_intel_iommu(iommu_) : NULL;
	unsigned reg, index, nfr, n = 0;
	uint32_t fsts;

	if (overflow)
		*overflow = false;
	if (!iommu)
		return 0;
	plat_spin_lock(&iommu->register_lock);
	fsts = plat_mmio_read32(iommu->mmio, DMAR_FSTS_REG);
	if (fsts & DMA_FSTS_PFO)
		INTEL_STAT_ADD(iommu, fault_overflows, 1);
	if (overflow)
		*overflow = fsts & DMA_FSTS_PFO;
	if (fsts && fault_ratelimit(iommu)) {
		char line[64];

		snprintf(line, sizeof(line), "DRHD: handling fault status reg %x", fsts);
		fault_report(iommu, line);
	}
	if (!(fsts & DMA_FSTS_PPF))
		goto out;
	index = dma_fsts_fault_record_index(fsts);
	reg = cap_fault_reg_offset(iommu->cap);
	nfr = cap_num_fault_regs(iommu->cap);
	while (n < FAULT_RECORDS_MAX) {
		uint64_t off = reg + (uint64_t)(index % nfr) * PRIMARY_FAULT_REG_LEN;
		bool report = fault_ratelimit(iommu);
		uint32_t hi = plat_mmio_read32(iommu->mmio, off + 12);
		struct ilab_intel_fault f;

		if (!(hi & DMA_FRCD_F))
			break;
		f.reason = (uint8_t)dma_frcd_fault_reason(hi);
		f.read = dma_frcd_type(hi);
		f.sid = (uint16_t)dma_frcd_source_id(plat_mmio_read32(iommu->mmio, off + 8));
		f.addr = plat_mmio_read64(iommu->mmio, off) & ~0xfffull;
		if (recs && n < max)
			recs[n] = f;
		plat_mmio_write32(iommu->mmio, off + 12, DMA_FRCD_F);
		n++;
		plat_spin_unlock(&iommu->register_lock);
		if (report)
			fault_report_one(iommu, &f);
		index = (index + 1) % nfr;
		plat_spin_lock(&iommu->register_lock);
	}
	INTEL_STAT_ADD(iommu, faults, n);
	plat_mmio_write32(iommu->mmio, DMAR_FSTS_REG, DMA_FSTS_PFO | DMA_FSTS_PPF);
out:
	plat_spin_unlock(&iommu->register_lock);
	return n;
}

/* The fault event's interrupt (the board calls it when the unit's fault event message, sent
 * to FEADDR in the x86 interrupt range, arrives): dmar_fault, counted. */
void ilab_intel_iommu_fault_irq(struct ilab_iommu *iommu_)
{
	struct intel_iommu *iommu = ilab_intel_iommu_is_ours(iommu_) ? to_intel_iommu(iommu_) : NULL;

	if (!iommu)
		return;
	INTEL_STAT_ADD(iommu, fault_irqs, 1);
	ilab_intel_iommu_handle_fault(iommu_, NULL, 0, NULL);
}
