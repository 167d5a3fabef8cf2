/* test_vtd_board_fault_mt.c — VT-d fault events reach the driver through the board's
 * interrupt path: a device's DMA to an unmapped IOVA is recorded by the unit (fault recording
 * registers, FSTS.PPF), whose fault event message (FEADDR in the x86 interrupt range) is
 * raised on the board; the unit's agent thread runs the VT-d driver's dmar_fault, which
 * reports the record (source-id, address, reason) and clears it. More faults than records
 * while the event is masked: FSTS.PFO, reported and cleared. Reports are ratelimited as
 * Linux's. A native board on icelake-2s-a100 (real threads: the agent; _mt, so also TSan).
 * Not a test of the model's fault recording alone (test_vtd_fault.c) nor of the driver
 * without a board (test_intel_iommu_drv.c).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <iommulab/board.h>
#include <iommulab/intel_iommu_drv.h>
#include <iommulab/iommu.h>
#include <iommulab/plat.h>
#include <iommulab/topo.h>

/* Typed in from the VT-d specification rev. 4.x, not taken from the model's or driver's
 * headers: FSTS and FECTL offsets (§10.4.9-10), their bits, fault reasons (§7.1.3). */
#define VT_FSTS 0x034
#define VT_FECTL 0x038
#define VT_FSTS_PFO (1u << 0)
#define VT_FSTS_PPF (1u << 1)
#define VT_FSTS_FRI_SHIFT 8
#define VT_FECTL_IM (1u << 31)
#define VT_FR_WRITE 0x5 /* write to a page without W (not present included) */
#define VT_FR_READ 0x6  /* read of a page without R */

/* An IOVA no test maps: above the 32-bit range dma-iommu would hand out first. */
#define UNMAPPED_IOVA 0x123456000ull

#define MAX_LINES 64

struct rig {
	struct ilab_topo *topo;
	struct ilab_board *board;
	struct ilab_dev *dev;
	unsigned unit;
	struct ilab_iommu *drv;
	struct plat_mmio *mmio;
	pthread_mutex_t lock; /* the agent thread reports, the test reads */
	char lines[MAX_LINES][200];
	unsigned nr_lines;
	char err[256];
};

static void capture(void *ctx, const char *line)
{
	struct rig *r = ctx;

	pthread_mutex_lock(&r->lock);
	if (r->nr_lines < MAX_LINES)
		snprintf(r->lines[r->nr_lines], sizeof(r->lines[0]), "%s", line);
	r->nr_lines++;
	pthread_mutex_unlock(&r->lock);
}

static unsigned nr_lines(struct rig *r)
{
	unsigned n;

	pthread_mutex_lock(&r->lock);
	n = r->nr_lines;
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* icelake-2s-a100, every unit VT-d, only the first device's unit modelled; its driver probed
 * with reports captured, ratelimited at `burst` per hour; the device in a DMA domain. */
static void rig_up(struct rig *r, unsigned burst)
{
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_board_opts bo = { .node_bytes = 256ull << 20, .iommu_arch = "vtd" };
	struct ilab_intel_iommu_opts dopts = {
		.fault_report = capture,
		.fault_report_ctx = r,
		.fault_ratelimit_burst = burst,
		.fault_ratelimit_ns = 3600ull * 1000000000ull,
	};
	struct ilab_dev *devs;
	unsigned n;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	assert_int_equal(ilab_topo_load("icelake-2s-a100", &r->topo, r->err, sizeof(r->err)), 0);
	assert_true(ilab_topo_nr_devices(r->topo) > 0);
	r->unit = ilab_topo_device(r->topo, 0)->smmu;
	bo.iommu_mask = 1ull << r->unit;
	pc.topo = r->topo;
	assert_int_equal(plat_init(&pc), 0);
	assert_int_equal(ilab_board_create(r->topo, &bo, &r->board, r->err, sizeof(r->err)), 0);
	assert_int_equal(ilab_board_start(r->board), 0);
	assert_int_equal(ilab_board_probe_drivers(r->board, "vtd", &dopts), 0);
	assert_int_equal(ilab_board_devices(r->board, &devs, &n), 0);
	r->dev = &devs[0];
	r->drv = ilab_board_iommu(r->board, r->unit);
	r->mmio = ilab_board_mmio(r->board, r->unit);
	assert_non_null(r->drv);
	assert_ptr_equal(r->dev->iommu, r->drv);
	assert_int_equal(ilab_iommu_probe_device(r->dev, ILAB_DOMAIN_DMA), 0);
}

static void rig_down(struct rig *r)
{
	ilab_iommu_release_device(r->dev);
	ilab_board_destroy(r->board);
	plat_fini();
	ilab_topo_free(r->topo);
	pthread_mutex_destroy(&r->lock);
}

static struct ilab_intel_iommu_stats stats(struct rig *r)
{
	struct ilab_intel_iommu_stats st;

	assert_int_equal(ilab_intel_iommu_get_stats(r->drv, &st), 0);
	return st;
}

/* Wait until the driver has handled `records` fault records in all and made `lines`
 * reports: the agent thread runs the handler. 10 s at most: a bound against a hang, not a
 * timing assertion. */
static bool handled(struct rig *r, uint64_t records, unsigned lines)
{
	for (int i = 0; i < 10000; i++) {
		if (stats(r).faults_handled >= records && nr_lines(r) >= lines)
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return false;
}

static void dma_fault(struct rig *r, uint64_t iova, bool write, uint8_t reason)
{
	struct ilab_board_fault f = { 0 };
	uint64_t buf = 0;
	int rc;

	if (write)
		rc = ilab_board_dma_write(r->board, r->unit, r->dev->sid, 0, false, iova, &buf,
					  sizeof(buf), &f);
	else
		rc = ilab_board_dma_read(r->board, r->unit, r->dev->sid, 0, false, iova, &buf,
					 sizeof(buf), &f);
	assert_int_equal(rc, -EIO);
	assert_int_equal(f.event, reason);
	assert_int_equal(f.iova, iova);
}

/* What Linux's dmar_fault_do_one prints for a legacy-mode record: the source-id as PCI
 * bus:device.function (bus = sid[15:8], device = sid[7:3], function = sid[2:0]). */
static void expect_record_line(const char *line, bool read, uint16_t sid, uint64_t addr,
			       unsigned reason, const char *why)
{
	char want[200];

	snprintf(want, sizeof(want), "[%s NO_PASID] Request device [%02x:%02x.%d] fault addr "
		 "0x%llx [fault reason 0x%02x] %s", read ? "DMA Read" : "DMA Write", sid >> 8,
		 (sid >> 3) & 0x1f, sid & 7, (unsigned long long)addr, reason, why);
	assert_string_equal(line, want);
}

static void test_dma_to_an_unmapped_iova_is_one_reported_fault(void **state)
{
	struct rig r;
	struct ilab_intel_iommu_stats st;

	(void)state;
	rig_up(&r, 1000);
	dma_fault(&r, UNMAPPED_IOVA + 0x10, false, VT_FR_READ);
	/* one fault event: the status line and the record */
	assert_true(handled(&r, 1, 2));
	st = stats(&r);
	assert_int_equal(st.faults_handled, 1);
	assert_int_equal(st.fault_irqs, 1);
	assert_int_equal(st.fault_overflows, 0);
	assert_int_equal(r.nr_lines, 2);
	/* FSTS when the handler read it: PPF, FRI 0 (the unit's first record) */
	assert_string_equal(r.lines[0], "DRHD: handling fault status reg 2");
	expect_record_line(r.lines[1], true, (uint16_t)r.dev->sid, UNMAPPED_IOVA, VT_FR_READ,
			   "PTE Read access is not set");
	/* cleared: no fault pending, nothing overflowed */
	assert_int_equal(plat_mmio_read32(r.mmio, VT_FSTS) & (VT_FSTS_PFO | VT_FSTS_PPF), 0);

	/* a write: the next record (FRI 1), reason 5 */
	dma_fault(&r, UNMAPPED_IOVA + 0x5000, true, VT_FR_WRITE);
	assert_true(handled(&r, 2, 4));
	assert_string_equal(r.lines[2], "DRHD: handling fault status reg 102");
	expect_record_line(r.lines[3], false, (uint16_t)r.dev->sid, UNMAPPED_IOVA + 0x5000,
			   VT_FR_WRITE, "PTE Write access is not set");
	assert_int_equal(stats(&r).fault_irqs, 2);
	rig_down(&r);
}

/* With the fault event masked (FECTL.IM: the message is held, VT-d §7.3), NFR + 2 faults:
 * NFR are recorded, the next finds the record at the index full and sets PFO, the last is
 * not recorded (PFO set). Unmasking sends the held message: the driver reads the NFR records
 * in order from FRI, reports the overflow and clears PFO. */
static void test_more_faults_than_records_overflow_and_are_reported(void **state)
{
	struct ilab_intel_iommu_info info;
	struct ilab_intel_iommu_stats st;
	unsigned nfr;
	struct rig r;

	(void)state;
	rig_up(&r, 1000);
	assert_int_equal(ilab_intel_iommu_get_info(r.drv, &info), 0);
	nfr = info.nfr;
	assert_true(nfr >= 1 && nfr <= 16);
	plat_mmio_write32(r.mmio, VT_FECTL, VT_FECTL_IM);
	for (unsigned i = 0; i < nfr + 2; i++)
		dma_fault(&r, UNMAPPED_IOVA + 0x1000ull * i, false, VT_FR_READ);
	assert_int_equal(plat_mmio_read32(r.mmio, VT_FSTS) & (VT_FSTS_PFO | VT_FSTS_PPF),
			 VT_FSTS_PFO | VT_FSTS_PPF);
	assert_int_equal(stats(&r).fault_irqs, 0); /* held while masked */
	plat_mmio_write32(r.mmio, VT_FECTL, 0);
	assert_true(handled(&r, nfr, 1 + nfr));
	st = stats(&r);
	assert_int_equal(st.faults_handled, nfr);
	assert_int_equal(st.fault_overflows, 1);
	assert_int_equal(st.fault_irqs, 1);
	assert_int_equal(r.nr_lines, 1 + nfr);
	/* PFO | PPF, FRI 0: the first record written */
	assert_string_equal(r.lines[0], "DRHD: handling fault status reg 3");
	for (unsigned i = 0; i < nfr; i++)
		expect_record_line(r.lines[1 + i], true, (uint16_t)r.dev->sid,
				   UNMAPPED_IOVA + 0x1000ull * i, VT_FR_READ,
				   "PTE Read access is not set");
	assert_int_equal(plat_mmio_read32(r.mmio, VT_FSTS) & (VT_FSTS_PFO | VT_FSTS_PPF), 0);

	/* recording works again after the overflow was cleared */
	dma_fault(&r, UNMAPPED_IOVA + 0x100000, false, VT_FR_READ);
	assert_true(handled(&r, nfr + 1, 1 + nfr + 2));
	assert_int_equal(stats(&r).fault_overflows, 1);
	rig_down(&r);
}

/* Linux's ratelimit (burst calls per interval) is asked once for the status line and once per
 * record read, including the read that finds no F and ends the loop: with burst 4, a first
 * fault uses 3 (2 lines), a second one's status line the 4th; its record is still read and
 * cleared, not reported (and neither is the loop's end: 2 refusals). */
static void test_fault_reports_are_ratelimited_as_linux(void **state)
{
	struct ilab_intel_iommu_stats st;
	struct rig r;

	(void)state;
	rig_up(&r, 4);
	dma_fault(&r, UNMAPPED_IOVA, false, VT_FR_READ);
	assert_true(handled(&r, 1, 2));
	dma_fault(&r, UNMAPPED_IOVA + 0x1000, true, VT_FR_WRITE);
	assert_true(handled(&r, 2, 3));
	st = stats(&r);
	assert_int_equal(st.faults_handled, 2);
	assert_int_equal(st.fault_reports, 3);
	assert_int_equal(st.fault_reports_missed, 2);
	assert_int_equal(r.nr_lines, 3);
	assert_string_equal(r.lines[2], "DRHD: handling fault status reg 102");
	assert_int_equal(plat_mmio_read32(r.mmio, VT_FSTS) & VT_FSTS_PPF, 0);
	rig_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dma_to_an_unmapped_iova_is_one_reported_fault),
		cmocka_unit_test(test_more_faults_than_records_overflow_and_are_reported),
		cmocka_unit_test(test_fault_reports_are_ratelimited_as_linux),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
