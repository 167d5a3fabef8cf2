/* test_sim_vtd_fault.c — the VT-d fault event's interrupt path in simulation: a simulated
 * CPU's device DMA to an unmapped IOVA is recorded by the unit, its fault event message goes
 * to the board, and the unit's agent (a fiber here) runs the VT-d driver's dmar_fault, which
 * reports and clears the record while the CPU waits. seed 004's host (icelake-2s-a100), the
 * testbed with the VT-d driver probed. The native path is test_vtd_board_fault_mt.c.
 *
 * Single host thread (every simulated CPU and agent is a fiber): not an _mt test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/board.h>
#include <iommulab/intel_iommu_drv.h>
#include <iommulab/iommu.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/icelake-2s-a100.yaml"

/* VT-d §10.4.9 and §7.1.3, typed in: FSTS, its PPF bit, reason 6h (read without R). */
#define VT_FSTS 0x034
#define VT_FSTS_PPF (1u << 1)
#define VT_FR_READ 0x6
#define UNMAPPED_IOVA 0x123456000ull

struct rig {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	struct ilab_dev *dev;
	unsigned unit;
	char lines[8][200];
	unsigned nr_lines;
	/* what the CPU saw */
	int dma_rc;
	uint8_t reason;
	uint32_t fsts_after;
	uint64_t handled_after;
};

static void capture(void *ctx, const char *line)
{
	struct rig *r = ctx;

	if (r->nr_lines < 8)
		snprintf(r->lines[r->nr_lines], sizeof(r->lines[0]), "%s", line);
	r->nr_lines++;
}

/* The CPU: the faulting DMA, then 100 us of virtual time (the handler's few register
 * accesses take a few us at the profile's MMIO costs), then FSTS. */
static void cpu_fn(unsigned idx, void *arg)
{
	struct rig *r = arg;
	struct ilab_board_fault f = { 0 };
	struct ilab_intel_iommu_stats st;
	uint64_t buf;

	(void)idx;
	r->dma_rc = ilab_board_dma_read(r->tb.board, r->unit, r->dev->sid, 0, false,
					UNMAPPED_IOVA, &buf, sizeof(buf), &f);
	r->reason = f.event;
	plat_sleep_ns(100000);
	r->fsts_after = plat_mmio_read32(ilab_board_mmio(r->tb.board, r->unit), VT_FSTS);
	ilab_intel_iommu_get_stats(r->dev->iommu, &st);
	r->handled_after = st.faults_handled;
}

static void test_fault_event_runs_the_driver_handler_in_simulation(void **state)
{
	static struct rig r;
	struct ilab_testbed_opts o = { .seed = 1 };
	struct ilab_intel_iommu_stats st;
	char err[512], want[200];
	const struct ilab_device *td;
	uint16_t sid;
	int cpu;

	(void)state;
	if (ilab_profile_load(PROFILE, &r.prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	o.profile = &r.prof;
	o.vtd_drv.fault_report = capture;
	o.vtd_drv.fault_report_ctx = &r;
	if (ilab_testbed_load_topology(&r.tb, &o, err, sizeof(err)))
		fail_msg("topology: %s", err);
	td = ilab_topo_device(r.tb.topo, 0);
	r.unit = td->smmu;
	o.iommu_mask = 1ull << r.unit;
	if (ilab_testbed_up(&r.tb, &o, err, sizeof(err)))
		fail_msg("testbed: %s", err);
	r.dev = ilab_testbed_dev(&r.tb, td->name);
	assert_non_null(r.dev);
	assert_int_equal(ilab_iommu_probe_device(r.dev, ILAB_DOMAIN_DMA), 0);
	cpu = plat_node_cpu(0, 0);
	assert_int_equal(plat_run_threads(1, &cpu, cpu_fn, &r), 0);

	assert_int_equal(r.dma_rc, -EIO);
	assert_int_equal(r.reason, VT_FR_READ);
	assert_int_equal(r.handled_after, 1);          /* handled while the CPU waited */
	assert_int_equal(r.fsts_after & VT_FSTS_PPF, 0); /* and cleared */
	assert_int_equal(ilab_intel_iommu_get_stats(r.dev->iommu, &st), 0);
	assert_int_equal(st.fault_irqs, 1);
	assert_int_equal(r.nr_lines, 2);
	assert_string_equal(r.lines[0], "DRHD: handling fault status reg 2");
	sid = (uint16_t)r.dev->sid;
	snprintf(want, sizeof(want), "[DMA Read NO_PASID] Request device [%02x:%02x.%d] fault "
		 "addr 0x%llx [fault reason 0x06] PTE Read access is not set", sid >> 8,
		 (sid >> 3) & 0x1f, sid & 7, (unsigned long long)UNMAPPED_IOVA);
	assert_string_equal(r.lines[1], want);
	ilab_iommu_release_device(r.dev);
	ilab_testbed_down(&r.tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_event_runs_the_driver_handler_in_simulation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
