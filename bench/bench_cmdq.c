/* bench_cmdq.c — native cost of the SMMUv3 command queue: ns per CMD_SYNC round trip (the
 * model consuming in its own polling thread), for MSI and CONS completion, and commands/s with
 * 1 and 2 producer threads issuing TLBI+CMD_SYNC and 16 TLBI + CMD_SYNC.
 * Prints figures; it is not a test. Usage: bench_cmdq [seconds-per-figure, default 1]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/board.h"
#include "iommulab/plat.h"
#include "iommulab/smmuv3_drv.h"
#include "iommulab/topo.h"

struct ctx {
	struct ilab_iommu *iommu;
	uint64_t ns;
	unsigned per_issue;
	plat_word64 cmds;
	plat_word64 errors;
};

static void producer(unsigned idx, void *arg)
{
	struct ctx *c = arg;
	uint64_t cmds[2 * 16], n = 0, end = plat_now_ns() + c->ns;

	for (unsigned i = 0; i < c->per_issue; i++)
		ilab_smmu_drv_build_tlbi_va(&cmds[2 * i], (uint16_t)(idx + 1), (uint64_t)i << 12);
	while (plat_now_ns() < end) {
		for (unsigned k = 0; k < 64; k++) {
			if (ilab_smmu_drv_issue_cmds(c->iommu, cmds, c->per_issue, true))
				plat_fetch_add64(&c->errors, 1);
			n += c->per_issue + 1;
		}
	}
	plat_fetch_add64(&c->cmds, n);
}

static int run_mode(struct ilab_topo *topo, enum ilab_smmu_sync_mode mode, double seconds)
{
	struct ilab_board_opts bo = { .node_bytes = 1ull << 30, .cma = ILAB_CMA_PERNUMA,
				      .smmu_mask = 1ull << 2 };
	struct ilab_smmu_drv_opts o = { .sync_mode = mode };
	struct ilab_board *b;
	struct ilab_iommu *iommu;
	char err[160];
	uint64_t cmd[2];
	int rc;

	rc = ilab_board_create(topo, &bo, &b, err, sizeof(err));
	if (!rc)
		rc = ilab_board_start(b);
	if (!rc)
		rc = ilab_board_probe_iommus(b, &o);
	if (rc) {
		fprintf(stderr, "bench_cmdq: set-up failed (%d): %s %s\n", rc, err,
			ilab_smmu_drv_strerror());
		return 1;
	}
	iommu = ilab_board_iommu(b, 2);
	const char *name = mode == ILAB_SMMU_SYNC_MSI ? "msi" : "cons";

	/* Round trip: one thread, TLBI_NH_VA + CMD_SYNC per issue, wait for completion. */
	ilab_smmu_drv_build_tlbi_va(cmd, 1, 0x1000);
	for (unsigned i = 0; i < 1000; i++) /* warm up */
		ilab_smmu_drv_issue_cmds(iommu, cmd, 1, true);
	{
		/* Round trip measured on a modelled CPU of the SMMU's node, like the figures below. */
		struct ctx c = { .iommu = iommu, .ns = (uint64_t)(seconds * 1e9), .per_issue = 0 };
		int cpu = plat_node_cpu(2, 0);

		plat_run_threads(1, &cpu, producer, &c);
		printf("%-5s CMD_SYNC alone, round trip:        %8.0f ns\n", name,
		       (double)c.ns / (double)plat_load64(&c.cmds));
	}
	for (unsigned per = 1; per <= 16; per *= 16) {
		for (unsigned threads = 1; threads <= 2; threads++) {
			struct ctx c = { .iommu = iommu, .ns = (uint64_t)(seconds * 1e9),
					 .per_issue = per };
			int cpus[2] = { plat_node_cpu(2, 0), plat_node_cpu(2, 1) };
			struct ilab_smmu_drv_stats st;

			ilab_smmu_drv_clear_stats(iommu);
			plat_run_threads(threads, cpus, producer, &c);
			ilab_smmu_drv_get_stats(iommu, &st);
			printf("%-5s %2u TLBI+SYNC per issue, %u thread%s: %10.0f commands/s, "
			       "%6.0f ns/sync wait, %llu errors\n",
			       name, per, threads, threads > 1 ? "s" : " ",
			       (double)plat_load64(&c.cmds) / seconds,
			       st.syncs ? (double)st.sync_wait_ns / (double)st.syncs : 0.0,
			       (unsigned long long)plat_load64(&c.errors));
		}
	}
	ilab_board_destroy(b);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct ilab_topo *topo;
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	char err[160];
	int rc;

	if (seconds <= 0)
		seconds = 1.0;
	if (ilab_topo_load("kunpeng920", &topo, err, sizeof(err))) {
		fprintf(stderr, "bench_cmdq: %s\n", err);
		return 1;
	}
	pc.topo = topo;
	pc.bind_threads = true;
	if (plat_init(&pc)) {
		fprintf(stderr, "bench_cmdq: plat_init failed\n");
		return 1;
	}
	printf("bench_cmdq: native, SMMU model polling in its own thread, kunpeng920 SMMU on node 2,"
	       " default cmdq size (2^16)\n");
	rc = run_mode(topo, ILAB_SMMU_SYNC_MSI, seconds);
	if (!rc)
		rc = run_mode(topo, ILAB_SMMU_SYNC_CONS, seconds);
	plat_fini();
	ilab_topo_free(topo);
	return rc;
}
