/* sim_bench_run.h — one dma_map_benchmark run on a simulated machine, set up and torn down
 * for a test: kunpeng920's topology (or a profile's), only the node-2 NIC's SMMU, the NIC in
 * a strict DMA domain, the breakdown on or off. The set-up test_sim_breakdown.c and
 * test_sim_contention_stack.c share. Not a test itself.
 */
#ifndef ILAB_TESTS_SIM_BENCH_RUN_H
#define ILAB_TESTS_SIM_BENCH_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <iommulab/iommu.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>

struct sim_bench_run {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	struct ilab_iommu *iommu;
	struct ilab_map_bench_result res;
	struct ilab_smmu_drv_stats drv;
	json_t *sim; /* ilab_sim_json after the run */
	json_t *b;   /* its "breakdown" */
};

/* Load `profile` (a file), set the machine up, run `threads` x `iterations` map+unmap loops
 * (after `warmup` each) with the driver's counters cleared first; r keeps the results and
 * the simulator's JSON. A failed step fails the test (cmocka). r must outlive a failure
 * (static): sim_bench_run_teardown then tears it down. */
void sim_bench_run_up(struct sim_bench_run *r, const char *profile, unsigned threads,
		      uint64_t iterations, uint64_t warmup, bool breakdown);
void sim_bench_run_down(struct sim_bench_run *r);
/* A cmocka teardown: tears down the run a failed test left set up, if any. */
int sim_bench_run_teardown(void **state);

#endif
