/* test_allreduce.c — seed 004's pieces: the endpoint ATC (lookup, fill, LRU, invalidation by
 * range and PASID), the SMMUv3 driver's ATS (STE.EATS for ATS masters only, CMD_ATC_INV after
 * an unmap), and the allreduce in simulation checked against first principles: translation-
 * bound NIC engines whose ATS latency is the profile's round trip plus the SMMU's lookup plus
 * one page-table line fetched from the table's home node; the same on VT-d (icelake-2s-a100)
 * with the Intel driver's nid policies (Linux 6.3's, seed 004's patch).
 * Single host thread (the simulator; the driver test runs natively on one thread).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <iommulab/allreduce.h>
#include <iommulab/atc.h>
#include <iommulab/board.h>
#include <iommulab/intel_iommu_drv.h>
#include <iommulab/iommu.h>
#include <iommulab/plat.h>
#include <iommulab/scenario.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/smmuv3_drv_ats.h>
#include <iommulab/topo.h>
#include <iommulab/vfio.h>

#include "support/scenario_fixture.h"

#define PROFILE ILAB_TESTDATA "/../../profiles/a100-2node.yaml"
#define MiB (1ull << 20)

/* ---- ATC ----------------------------------------------------------------------------------- */

static struct ilab_atc_xlate rw(uint64_t pa)
{
	return (struct ilab_atc_xlate){ .pa = pa, .shift = 12, .read = true, .write = true };
}

static void test_atc_miss_fill_hit_with_offset(void **state)
{
	struct ilab_atc *a;
	struct ilab_atc_xlate x;
	struct ilab_atc_stats st;

	(void)state;
	assert_int_equal(ilab_atc_create(&(struct ilab_atc_config){ .entries = 64, .ways = 4 }, &a),
			 0);
	assert_false(ilab_atc_lookup(a, 0, false, 0x5000, false, &x));
	assert_int_equal(ilab_atc_fill(a, 0, false, 0x5123, &(struct ilab_atc_xlate){
				.pa = 0x9000123, .shift = 12, .read = true, .write = false }), 0);
	assert_true(ilab_atc_lookup(a, 0, false, 0x5ff8, false, &x));
	assert_int_equal(x.pa, 0x9000ff8);
	/* read-only: a write misses (the device must ask again) */
	assert_false(ilab_atc_lookup(a, 0, false, 0x5000, true, &x));
	/* a PASID-tagged lookup does not see the untagged entry */
	assert_false(ilab_atc_lookup(a, 1, true, 0x5000, false, &x));
	ilab_atc_get_stats(a, &st);
	assert_int_equal(st.capacity, 64);
	assert_int_equal(st.lookups, 4);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 3);
	assert_int_equal(st.fills, 1);
	ilab_atc_destroy(a);
}

static void test_atc_lru_evicts_least_recent(void **state)
{
	struct ilab_atc *a;
	struct ilab_atc_stats st;

	(void)state;
	/* fully associative, 2 entries: fill A, B; use A; fill C evicts B */
	assert_int_equal(ilab_atc_create(&(struct ilab_atc_config){ .entries = 2 }, &a), 0);
	ilab_atc_fill(a, 0, false, 0x1000, &(struct ilab_atc_xlate){ .pa = 0x10000, .shift = 12,
								       .read = true });
	ilab_atc_fill(a, 0, false, 0x2000, &(struct ilab_atc_xlate){ .pa = 0x20000, .shift = 12,
								       .read = true });
	assert_true(ilab_atc_lookup(a, 0, false, 0x1000, false, NULL));
	ilab_atc_fill(a, 0, false, 0x3000, &(struct ilab_atc_xlate){ .pa = 0x30000, .shift = 12,
								       .read = true });
	assert_true(ilab_atc_lookup(a, 0, false, 0x1000, false, NULL));
	assert_false(ilab_atc_lookup(a, 0, false, 0x2000, false, NULL));
	assert_true(ilab_atc_lookup(a, 0, false, 0x3000, false, NULL));
	ilab_atc_get_stats(a, &st);
	assert_int_equal(st.evictions, 1);
	/* a cyclic sweep larger than the cache misses every time under LRU */
	for (int pass = 0; pass < 3; pass++)
		for (uint64_t p = 0; p < 3; p++) {
			uint64_t va = 0x100000 + p * 4096;

			if (pass > 0)
				assert_false(ilab_atc_lookup(a, 0, false, va, false, NULL));
			struct ilab_atc_xlate x = rw(va);
			ilab_atc_fill(a, 0, false, va, &x);
		}
	ilab_atc_destroy(a);
}

static void test_atc_invalidate_by_range_pasid_and_global(void **state)
{
	struct ilab_atc *a;
	struct ilab_atc_xlate x = rw(0x80000000);

	(void)state;
	assert_int_equal(ilab_atc_create(&(struct ilab_atc_config){ .entries = 256, .ways = 8 }, &a),
			 0);
	for (uint64_t p = 0; p < 32; p++)
		ilab_atc_fill(a, 0, false, p << 12, &x);
	ilab_atc_fill(a, 7, true, 0x3000, &x);
	ilab_atc_fill(a, 8, true, 0x3000, &x);
	/* 64 KiB at 0x10000 (Size 4): pages 16..31 of the untagged ones, nothing else */
	assert_int_equal(ilab_atc_invalidate(a, 0, false, 0x10000, 16, false), 16);
	assert_true(ilab_atc_lookup(a, 0, false, 0xf000, false, NULL));
	assert_false(ilab_atc_lookup(a, 0, false, 0x10000, false, NULL));
	assert_true(ilab_atc_lookup(a, 7, true, 0x3000, false, NULL));
	/* PASID 7 only, then every PASID with Global */
	assert_int_equal(ilab_atc_invalidate(a, 7, true, 0, 64, false), 1);
	assert_true(ilab_atc_lookup(a, 8, true, 0x3000, false, NULL));
	assert_int_equal(ilab_atc_invalidate(a, 7, true, 0x3000, 12, true), 1);
	assert_false(ilab_atc_lookup(a, 8, true, 0x3000, false, NULL));
	/* everything untagged */
	assert_int_equal(ilab_atc_invalidate(a, 0, false, 0, 64, false), 16);
	assert_int_equal(ilab_atc_occupancy(a), 0);
	ilab_atc_destroy(a);
}

static void test_atc_rejects_bad_input(void **state)
{
	struct ilab_atc *a = NULL;

	(void)state;
	assert_int_equal(ilab_atc_create(&(struct ilab_atc_config){ .entries = 0 }, &a), -EINVAL);
	assert_int_equal(ilab_atc_create(&(struct ilab_atc_config){ .entries = 4, .policy = 9 },
					 &a), -EINVAL);
	assert_int_equal(ilab_atc_create(&(struct ilab_atc_config){ .entries = 4 }, &a), 0);
	assert_int_equal(ilab_atc_fill(a, 0, false, 0, &(struct ilab_atc_xlate){ .shift = 8 }),
			 -EINVAL);
	ilab_atc_destroy(a);
}

/* ---- the driver: STE.EATS and CMD_ATC_INV ------------------------------------------------------ */

/* What the board forwarded to the devices' side (ilab_board_set_atc_inv). */
struct atc_inv_seen {
	unsigned calls, smmu;
	uint32_t sid;
	uint64_t addr;
	unsigned size_log2;
};

static void record_atc_inv(void *ctx, unsigned smmu_index, uint32_t sid, uint32_t ssid,
			   bool ssv, uint64_t addr, unsigned size_log2, bool global)
{
	struct atc_inv_seen *seen = ctx;

	seen->calls++;
	seen->smmu = smmu_index;
	seen->sid = sid;
	seen->addr = addr;
	seen->size_log2 = size_log2;
}

static void test_driver_sets_eats_and_invalidates_atc_on_unmap(void **state)
{
	struct atc_inv_seen seen = { 0 };
	struct ilab_topo *topo;
	struct ilab_board *b;
	struct ilab_vfio_container *c;
	struct ilab_vfio_group *gn, *gg;
	struct ilab_dev *nic, *gpu;
	struct smmu_stats st0, st1;
	uint64_t ste[8], unmapped, cmds0;
	char err[256];

	(void)state;
	assert_int_equal(ilab_topo_load("a100-2node", &topo, err, sizeof(err)), 0);
	assert_int_equal(plat_init(&(struct plat_config){ .engine = PLAT_ENGINE_NATIVE,
							  .topo = topo }), 0);
	assert_int_equal(ilab_board_create(topo, &(struct ilab_board_opts){
				.node_bytes = 1ull << 30, .smmu_mask = 1 }, &b, err, sizeof(err)), 0);
	ilab_board_set_atc_inv(b, record_atc_inv, &seen);
	assert_int_equal(ilab_board_start(b), 0);
	assert_int_equal(ilab_board_probe_iommus(b, NULL), 0);
	nic = ilab_board_find_dev(b, "nic0"); /* both behind SMMU 0 (n0-rp0) */
	gpu = ilab_board_find_dev(b, "gpu0");
	assert_non_null(nic);
	assert_non_null(gpu);
	assert_int_equal(ilab_iommu_probe_device(nic, ILAB_DOMAIN_DMA), 0);
	assert_int_equal(ilab_iommu_probe_device(gpu, ILAB_DOMAIN_DMA), 0);
	/* switching ATS on twice is once: one switch off ends it */
	assert_int_equal(ilab_smmu_drv_set_ats(nic, true), 0);
	assert_int_equal(ilab_smmu_drv_set_ats(nic, true), 0);
	assert_int_equal(ilab_smmu_drv_set_ats(nic, false), 0);
	assert_false(ilab_smmu_drv_ats_enabled(nic));
	assert_int_equal(ilab_smmu_drv_set_ats(nic, true), 0);
	assert_true(ilab_smmu_drv_ats_enabled(nic));
	assert_false(ilab_smmu_drv_ats_enabled(gpu));
	assert_int_equal(ilab_vfio_container_create(ilab_board_mem(b), NULL, &c), 0);
	assert_int_equal(ilab_vfio_group_open(nic, &gn), 0);
	assert_int_equal(ilab_vfio_group_open(gpu, &gg), 0);
	assert_int_equal(ilab_vfio_attach_group(c, gn), 0);
	assert_int_equal(ilab_vfio_attach_group(c, gg), 0);
	/* STE dword 1 bits [29:28] = EATS (IHI 0070 §5.2): 0b01 for the ATS NIC, 0 for the GPU */
	assert_int_equal(ilab_smmu_drv_read_ste(nic->iommu, nic->sid, ste), 0);
	assert_int_equal((ste[1] >> 28) & 3, 1);
	assert_int_equal(ilab_smmu_drv_read_ste(gpu->iommu, gpu->sid, ste), 0);
	assert_int_equal((ste[1] >> 28) & 3, 0);

	assert_int_equal(ilab_vfio_mm_alloc(ilab_vfio_container_mm(c), 0x100000, 0x10000, 0), 0);
	assert_int_equal(ilab_vfio_dma_map(c, 0x100000, 0x100000, 0x10000,
					   ILAB_VFIO_DMA_READ | ILAB_VFIO_DMA_WRITE), 0);
	smmu_get_stats(ilab_board_smmu(b, 0), &st0);
	cmds0 = ilab_smmu_drv_atc_inv_count();
	assert_int_equal(ilab_vfio_dma_unmap(c, 0x100000, 0x10000, &unmapped), 0);
	assert_int_equal(unmapped, 0x10000);
	smmu_get_stats(ilab_board_smmu(b, 0), &st1);
	/* one ATC_INV for the one ATS master of the domain (the GPU has none), executed */
	assert_int_equal(ilab_smmu_drv_atc_inv_count() - cmds0, 1);
	assert_int_equal(st1.atc_invs - st0.atc_invs, 1);
	/* ... and the board handed it to the devices' side: the NIC's StreamID, a span that
	 * covers the whole unmapped range [0x100000, 0x110000) */
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.smmu, 0);
	assert_int_equal(seen.sid, nic->sid);
	assert_true(seen.addr <= 0x100000);
	assert_true(seen.size_log2 >= 64 || seen.addr + (1ull << seen.size_log2) >= 0x110000);

	ilab_vfio_container_destroy(c);
	assert_int_equal(ilab_vfio_group_close(gn), 0);
	assert_int_equal(ilab_vfio_group_close(gg), 0);
	ilab_iommu_release_device(nic);
	ilab_iommu_release_device(gpu);
	assert_false(ilab_smmu_drv_ats_enabled(nic)); /* released: forgotten */
	ilab_board_destroy(b);
	plat_fini();
	ilab_topo_free(topo);
}

/* ---- the allreduce in simulation ------------------------------------------------------------ */

static struct ilab_allreduce_cfg small_case(unsigned first, unsigned nodes, bool by_node)
{
	return (struct ilab_allreduce_cfg){
		.profile = PROFILE, .first_node = first, .nr_nodes = nodes, .gpus_per_node = 4,
		.nics_per_node = 4, .pgtable_node = 1, .attach_group_by_node = by_node,
		.message_bytes = 8.0 * MiB, .iterations = 1, .hosts = 2, .buffer_bytes = 4 * MiB,
	};
}

static double measure(struct ilab_allreduce_cfg cfg, struct ilab_allreduce_result *res)
{
	char err[512] = "";
	int ret = ilab_allreduce_measure(&cfg, res, err, sizeof(err));

	if (ret)
		fail_msg("allreduce: %d %s", ret, err);
	return res->algbw;
}

/* Latency of one ATS request from first principles: round trip + TLB lookup + the leaf PTE's
 * line fetched from the table's home node (the walk caches hold the upper levels), whose cost
 * is the home node's last-level cache (cache.llc_local_ns; it defaults to transfer_local_ns)
 * plus mem(d) - mem(10) for a remote home. */
static void expected_latency(uint64_t *local, uint64_t *remote)
{
	struct ilab_profile p;
	char err[256];
	uint64_t m10, m20, llc;

	assert_int_equal(ilab_profile_load(PROFILE, &p, err, sizeof(err)), 0);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 10, &m10), 0);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 20, &m20), 0);
	llc = p.llc_local_ns;
	*local = p.nic.ats_round_trip_ns + p.smmu_tlb_lookup_ns + llc;
	*remote = *local + m20 - m10;
}

static void test_remote_page_table_slows_node0_and_not_node1(void **state)
{
	struct ilab_allreduce_result s0, p0, s1, p1;
	uint64_t lat_local, lat_remote;
	double shared0, pernode0, shared1, pernode1;

	(void)state;
	expected_latency(&lat_local, &lat_remote);
	shared0 = measure(small_case(0, 1, false), &s0);
	pernode0 = measure(small_case(0, 1, true), &p0);
	shared1 = measure(small_case(1, 1, false), &s1);
	pernode1 = measure(small_case(1, 1, true), &p1);
	print_message("node0 shared %.2f pernode %.2f; node1 shared %.2f pernode %.2f GB/s; ATS "
		      "%llu/%llu ns (expected %llu/%llu)\n", shared0, pernode0, shared1, pernode1,
		      (unsigned long long)s0.ats_mean_ns, (unsigned long long)p0.ats_mean_ns,
		      (unsigned long long)lat_remote, (unsigned long long)lat_local);
	/* every page misses the ATC (the buffer is 8x its reach) */
	assert_int_equal(s0.atc_hits, 0);
	assert_int_equal(s0.ats_requests, s0.pages);
	assert_int_equal(s0.ats_refused, 0);
	/* the mean ATS latency is the first-principles one (within 1%: cold config fetches) */
	assert_true(s0.ats_mean_ns >= lat_remote - lat_remote / 100 &&
		    s0.ats_mean_ns <= lat_remote + lat_remote / 100);
	assert_true(p0.ats_mean_ns >= lat_local - lat_local / 100 &&
		    p0.ats_mean_ns <= lat_local + lat_local / 100);
	/* node 1 walks its own memory either way: the same figure */
	assert_true(shared1 > pernode1 * 0.999 && shared1 < pernode1 * 1.001);
	/* node 0: translation-bound, so bandwidth scales as 1 / latency (within 2%) */
	assert_true(shared0 < pernode0);
	double ratio = shared0 / pernode0, want = (double)lat_local / (double)lat_remote;
	assert_true(ratio > want * 0.98 && ratio < want * 1.02);
}

static void test_translation_bound_algbw_from_first_principles(void **state)
{
	struct ilab_profile p;
	struct ilab_allreduce_result r;
	uint64_t lat_local, lat_remote, n;
	char err[256];
	double ranks = 8, k = 4, per_engine_pages, want;

	(void)state;
	expected_latency(&lat_local, &lat_remote);
	assert_int_equal(ilab_profile_load(PROFILE, &p, err, sizeof(err)), 0);
	n = p.nic.ats_outstanding;
	assert_true(n >= 1);
	/* per NIC and direction: 2 (n-1)/n * S / K bytes, one ATS request per 4 KiB page, N in
	 * flight: time = pages * L / N; algbw = S / time */
	per_engine_pages = 2 * (ranks - 1) / ranks * 8.0 * MiB / k / 4096;
	want = 8.0 * MiB / (per_engine_pages * (double)lat_local / (double)n);
	double got = measure(small_case(1, 1, true), &r);
	print_message("algbw %.2f GB/s, first principles %.2f\n", got, want);
	assert_int_equal(r.engines, 8);
	assert_true(got > want * 0.98 && got < want * 1.02);
}

/* A copy of profile `from` with the line that starts with `key` (indented, in a section, not
 * the free: section's entry) replaced by `repl` ("" deletes it). Returns 0 with the copy's
 * path in path. */
static int profile_edit_of(const char *from, char *path, const char *key, const char *repl)
{
	char line[512];
	FILE *in = fopen(from, "r"), *out;
	int fd, found = 0;

	assert_non_null(in);
	fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	out = fdopen(fd, "w");
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		const char *k = line + strspn(line, " ");

		/* not the free: section's entry of the key (a { min, max } table) */
		if (k != line && !strncmp(k, key, strlen(key)) && k[strlen(key)] == ':' &&
		    !strchr(k, '{')) {
			fputs(repl, out);
			found++;
		} else {
			fputs(line, out);
		}
	}
	fclose(in);
	fclose(out);
	return found == 1 ? 0 : -1;
}

/* The same of the a100-2node profile. */
static int profile_edit(char *path, const char *key, const char *repl)
{
	return profile_edit_of(PROFILE, path, key, repl);
}

/* With enough ATS requests in flight the link is the limit: per NIC and direction the data
 * takes bytes / link rate, so algbw = K * link * n / (2 (n - 1)) (here 4 x 24 x 8/14). */
static void test_link_bound_when_translations_keep_up(void **state)
{
	char path[] = "/tmp/ilab-a100-XXXXXX.yaml";
	struct ilab_allreduce_cfg cfg = small_case(0, 1, false);
	struct ilab_allreduce_result r;
	struct ilab_profile p;
	char err[256];

	(void)state;
	assert_int_equal(profile_edit(path, "ats_outstanding", "  ats_outstanding: 8\n"), 0);
	assert_int_equal(ilab_profile_load(path, &p, err, sizeof(err)), 0);
	assert_int_equal(p.nic.ats_outstanding, 8);
	double link = (double)p.nic.payload_mbps / 1000.0;
	double want = 4 * link * 8.0 / 14.0;
	cfg.profile = path;
	double got = measure(cfg, &r); /* even with the remote page table */
	unlink(path);
	print_message("link-bound algbw %.2f GB/s, expected %.2f\n", got, want);
	assert_true(got > want * 0.99 && got <= want * 1.001);
}

/* The NICs' constants are the profile's nic: section: a profile with a partial ATS model does
 * not load, and one without any is refused by the workload with the profile's name. */
static void test_nic_constants_come_from_the_profile(void **state)
{
	char path[] = "/tmp/ilab-a100-XXXXXX.yaml";
	struct ilab_allreduce_cfg cfg = small_case(1, 1, true);
	struct ilab_allreduce_result r;
	char err[512] = "";

	(void)state;
	assert_int_equal(profile_edit(path, "atc_ways", ""), 0);
	cfg.profile = path;
	assert_int_equal(ilab_allreduce_measure(&cfg, &r, err, sizeof(err)), -EINVAL);
	unlink(path);
	if (!strstr(err, "the ATS model needs payload_mbps"))
		fail_msg("got '%s'", err);
	/* no nic: section at all (it is the profile's last) */
	strcpy(path, "/tmp/ilab-a100-XXXXXX.yaml");
	{
		char line[512];
		FILE *in = fopen(PROFILE, "r"), *out;
		int fd = mkstemps(path, 5);

		assert_non_null(in);
		assert_true(fd >= 0);
		out = fdopen(fd, "w");
		assert_non_null(out);
		while (fgets(line, sizeof(line), in) && strncmp(line, "nic:", 4))
			fputs(line, out);
		fclose(in);
		fclose(out);
	}
	err[0] = '\0';
	assert_int_equal(ilab_allreduce_measure(&cfg, &r, err, sizeof(err)), -EINVAL);
	unlink(path);
	if (!strstr(err, "has no ATS model of its NICs"))
		fail_msg("got '%s'", err);
	/* and a scenario naming such a profile is refused when it is loaded */
	assert_int_equal(scenario_load_without_nic("a100-2node", "allreduce", err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, "s.yaml:4:10: profile: profile a100-2node has no ATS model of its NICs"))
		fail_msg("got '%s'", err);
}

/* ---- the same workload on VT-d (icelake-2s-a100): seed 004's own machine -------------------- */

#define VTD_PROFILE ILAB_TESTDATA "/../../profiles/icelake-2s-a100.yaml"

static struct ilab_allreduce_cfg vtd_case(unsigned first, bool by_node, int nid_policy)
{
	struct ilab_allreduce_cfg c = small_case(first, 1, by_node);

	c.profile = VTD_PROFILE;
	c.intel_nid_policy = nid_policy;
	return c;
}

/* The VT-d profile without its walker limit (a copy in /tmp): a request's latency is then its
 * own path, with no wait for a walker, so it can be checked from first principles. */
static char vtd_unlimited[] = "/tmp/ilab-ar-vtd-XXXXXX.yaml";
static bool vtd_unlimited_made;

static struct ilab_allreduce_cfg vtd_case_unlimited(unsigned first, bool by_node, int nid_policy)
{
	struct ilab_allreduce_cfg c = vtd_case(first, by_node, nid_policy);

	if (!vtd_unlimited_made) {
		if (profile_edit_of(VTD_PROFILE, vtd_unlimited, "walkers", ""))
			fail_msg("icelake-2s-a100 has no vtd walkers line to remove");
		vtd_unlimited_made = true;
	}
	c.profile = vtd_unlimited;
	return c;
}

/* One ATS request on VT-d: round trip + IOTLB lookup + a walk's fixed part + the leaf entry's
 * read, vtd.entry_read_fetches fetches of its line from the table's home node (the
 * paging-structure caches hold the upper levels; the IOTLB holds far fewer than the buffers'
 * pages), as for the SMMU above. */
static void vtd_expected_latency(uint64_t *local, uint64_t *remote)
{
	struct ilab_profile p;
	char err[256];
	uint64_t m10, m20, fetches;

	assert_int_equal(ilab_profile_load(VTD_PROFILE, &p, err, sizeof(err)), 0);
	assert_string_equal(p.iommu_arch, "vtd");
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 10, &m10), 0);
	assert_int_equal(ilab_profile_dist_ns(&p, ILAB_DIST_MEM, 20, &m20), 0);
	fetches = p.vtd_entry_read_fetches ? p.vtd_entry_read_fetches : 1;
	*local = p.nic.ats_round_trip_ns + p.vtd_iotlb_lookup_ns + p.vtd_walk_ns +
		 fetches * p.llc_local_ns;
	*remote = *local + fetches * (m20 - m10);
}

static bool within_1pct(uint64_t got, uint64_t want)
{
	return got >= want - want / 100 && got <= want + want / 100;
}

/* The seed's patch (nid = the node of the last DMAR unit attached): with all 16 groups
 * attached in board order the shared domain's tables are on node 1 (dmar3's), so node 0's NICs
 * walk remote memory and node 1's do not; per node, each domain is local. */
static void test_vtd_patch_nid_rule_puts_shared_tables_on_node1(void **state)
{
	struct ilab_allreduce_result s0, p0, s1, p1;
	uint64_t local, remote;

	(void)state;
	vtd_expected_latency(&local, &remote);
	measure(vtd_case_unlimited(0, false, ILAB_INTEL_NID_UNIT_ON_ATTACH), &s0);
	measure(vtd_case_unlimited(0, true, ILAB_INTEL_NID_UNIT_ON_ATTACH), &p0);
	measure(vtd_case_unlimited(1, false, ILAB_INTEL_NID_UNIT_ON_ATTACH), &s1);
	measure(vtd_case_unlimited(1, true, ILAB_INTEL_NID_UNIT_ON_ATTACH), &p1);
	print_message("VT-d ATS ns: node0 shared %llu pernode %llu, node1 shared %llu pernode %llu "
		      "(expected remote %llu, local %llu)\n", (unsigned long long)s0.ats_mean_ns,
		      (unsigned long long)p0.ats_mean_ns, (unsigned long long)s1.ats_mean_ns,
		      (unsigned long long)p1.ats_mean_ns, (unsigned long long)remote,
		      (unsigned long long)local);
	assert_int_equal(s0.ats_refused, 0);
	assert_int_equal(s0.atc_hits, 0);
	assert_int_equal(s0.ats_requests, s0.pages);
	assert_true(within_1pct(s0.ats_mean_ns, remote));
	assert_true(within_1pct(p0.ats_mean_ns, local));
	assert_true(within_1pct(s1.ats_mean_ns, local));
	assert_true(within_1pct(p1.ats_mean_ns, local));
	assert_true(s0.algbw < p0.algbw);
}

/* Linux 6.3 (no patch): nid stays NUMA_NO_NODE on the first unit's attach and then comes from
 * the first listed device (gpu0, node 0) when a second unit attaches; every group attaches
 * before the buffers are mapped, so the shared tables are on node 0, not on node 1 as the
 * seed found them (why seed004-vfio-numa.yaml uses the patch's rule for its shared cases). */
static void test_vtd_mainline_shared_tables_on_first_device_node(void **state)
{
	struct ilab_allreduce_result s0, s1;
	uint64_t local, remote;

	(void)state;
	vtd_expected_latency(&local, &remote);
	measure(vtd_case_unlimited(0, false, ILAB_INTEL_NID_MAINLINE), &s0);
	measure(vtd_case_unlimited(1, false, ILAB_INTEL_NID_MAINLINE), &s1);
	assert_true(within_1pct(s0.ats_mean_ns, local));
	assert_true(within_1pct(s1.ats_mean_ns, remote));
}

/* VFIO superpages: with 2 MiB-contiguous backing mapped in one call the VT-d driver writes
 * 2 MiB leaves, the unit answers a Translation Request with a 2 MiB completion (its size in
 * the completion, PCIe ATS §10.2.3) and the ATC keeps one entry for its 512 pages: each 2 MiB
 * block is asked for at most once per request slot in flight when it is first touched, never
 * again, where 4 KiB leaves ask for every page. */
static void test_vtd_2m_leaves_one_ats_request_per_block(void **state)
{
	struct ilab_allreduce_cfg c4 = vtd_case(0, false, ILAB_INTEL_NID_UNIT_ON_ATTACH), c2 = c4;
	struct ilab_allreduce_result r4, r2;
	struct ilab_profile p;
	char err[256];
	uint64_t blocks, slots;

	(void)state;
	assert_int_equal(ilab_profile_load(VTD_PROFILE, &p, err, sizeof(err)), 0);
	c2.iommu_page_bytes = 2 * MiB;
	measure(c4, &r4);
	measure(c2, &r2);
	blocks = 2 * 4 * (c2.buffer_bytes / (2 * MiB)); /* 4 NICs, a send and a receive buffer */
	slots = p.nic.ats_outstanding;
	print_message("ATS requests: 4 KiB leaves %llu of %llu pages, 2 MiB leaves %llu (%llu "
		      "blocks); algbw %.2f -> %.2f GB/s\n", (unsigned long long)r4.ats_requests,
		      (unsigned long long)r4.pages, (unsigned long long)r2.ats_requests,
		      (unsigned long long)blocks, r4.algbw, r2.algbw);
	assert_int_equal(r4.ats_requests, r4.pages);
	assert_int_equal(r2.ats_refused, 0);
	assert_int_equal(r2.pages, r4.pages);
	assert_true(r2.ats_requests >= blocks);
	assert_true(r2.ats_requests <= blocks * slots);
	assert_int_equal(r2.atc_hits + r2.ats_requests, r2.pages);
	assert_true(r2.algbw > r4.algbw);
}

/* The nid policy is the Intel driver's: on an SMMUv3 machine it is refused, by name. */
static void test_intel_nid_policy_needs_vtd(void **state)
{
	struct ilab_allreduce_cfg cfg = small_case(1, 1, true);
	struct ilab_allreduce_result r;
	char err[256] = "";

	(void)state;
	cfg.intel_nid_policy = ILAB_INTEL_NID_UNIT_ON_ATTACH;
	assert_int_equal(ilab_allreduce_measure(&cfg, &r, err, sizeof(err)), -EINVAL);
	if (!strstr(err, "intel_iommu_nid is the Intel VT-d driver's; profile a100-2node has "
			 "iommu: smmuv3"))
		fail_msg("got '%s'", err);
}

static void test_bad_configuration_is_an_error(void **state)
{
	struct ilab_allreduce_cfg cfg = small_case(1, 2, true); /* nodes 1..2 of a 2-node box */
	struct ilab_allreduce_result r;
	char err[256] = "";

	(void)state;
	assert_int_equal(ilab_allreduce_measure(&cfg, &r, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) > 0);
	cfg = small_case(0, 1, true);
	cfg.nics_per_node = 5; /* a node has 4 */
	assert_int_equal(ilab_allreduce_measure(&cfg, &r, err, sizeof(err)), -EINVAL);
	cfg = small_case(0, 1, true);
	cfg.nics_per_node = cfg.gpus_per_node = 1;
	cfg.hosts = 1; /* one rank: no ring */
	assert_int_equal(ilab_allreduce_measure(&cfg, &r, err, sizeof(err)), -EINVAL);
	cfg = small_case(0, 1, true);
	cfg.iommu_page_bytes = 8192; /* neither 4 KiB nor 2 MiB */
	err[0] = '\0';
	assert_int_equal(ilab_allreduce_measure(&cfg, &r, err, sizeof(err)), -EINVAL);
	if (!strstr(err, "iommu_page_bytes 8192"))
		fail_msg("got '%s'", err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atc_miss_fill_hit_with_offset),
		cmocka_unit_test(test_atc_lru_evicts_least_recent),
		cmocka_unit_test(test_atc_invalidate_by_range_pasid_and_global),
		cmocka_unit_test(test_atc_rejects_bad_input),
		cmocka_unit_test(test_driver_sets_eats_and_invalidates_atc_on_unmap),
		cmocka_unit_test(test_remote_page_table_slows_node0_and_not_node1),
		cmocka_unit_test(test_translation_bound_algbw_from_first_principles),
		cmocka_unit_test(test_link_bound_when_translations_keep_up),
		cmocka_unit_test(test_nic_constants_come_from_the_profile),
		cmocka_unit_test(test_bad_configuration_is_an_error),
		cmocka_unit_test(test_vtd_patch_nid_rule_puts_shared_tables_on_node1),
		cmocka_unit_test(test_vtd_mainline_shared_tables_on_first_device_node),
		cmocka_unit_test(test_vtd_2m_leaves_one_ats_request_per_block),
		cmocka_unit_test(test_intel_nid_policy_needs_vtd),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	if (vtd_unlimited_made)
		unlink(vtd_unlimited);
	return failed;
}
