/* test_swiotlb_sim.c — dma-direct on the whole simulated kunpeng920 (testbed: board, SMMUv3
 * model and driver, profile), as `iommulab bench --mode passthrough` runs it: with a 64-bit mask
 * a map or unmap costs exactly the profile's dma_direct_map_ns / dma_direct_unmap_ns (not 0);
 * with the bench's default 32-bit mask every buffer (memory starts at 4 GiB here) is bounced
 * through the swiotlb below 4 GiB, the copies are charged by the memory model (twice the bytes
 * cost more, an unmap copies back only FROM_DEVICE), and the device's DMA through the board
 * reads the bounce copy. Single host thread (every simulated CPU is a fiber): not an _mt test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/map_benchmark.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"
#define ITERS 20

struct stack {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	struct ilab_dev *nic;
};

/* kunpeng920 simulated, only the NIC's SMMU modelled, the NIC in a passthrough domain. */
static void stack_up(struct stack *st)
{
	char err[512];
	struct ilab_testbed_opts to = { .profile = &st->prof, .seed = 1, .cma = ILAB_CMA_GLOBAL };
	const struct ilab_device *td = NULL;

	memset(st, 0, sizeof(*st));
	if (ilab_profile_load(PROFILE, &st->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	if (ilab_testbed_load_topology(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < ilab_topo_nr_devices(st->tb.topo); i++) {
		const struct ilab_device *d = ilab_topo_device(st->tb.topo, i);

		if (d->kind == ILAB_DEV_NIC && d->node == 2)
			td = d;
	}
	assert_non_null(td);
	to.smmu_mask = 1ull << td->smmu;
	if (ilab_testbed_up(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	st->nic = ilab_testbed_dev(&st->tb, td->name);
	assert_non_null(st->nic);
	assert_int_equal(ilab_iommu_probe_device(st->nic, ILAB_DOMAIN_IDENTITY), 0);
}

static void stack_down(struct stack *st)
{
	ilab_iommu_release_device(st->nic);
	ilab_board_destroy(st->tb.board);
	st->tb.board = NULL;
	ilab_testbed_down(&st->tb);
}

static struct ilab_map_bench_result bench(struct stack *st, unsigned bits, unsigned granule,
					  enum ilab_dma_dir dir)
{
	struct ilab_map_bench_cfg cfg;
	struct ilab_map_bench_result res;
	char err[256];

	ilab_map_bench_cfg_default(&cfg);
	cfg.threads = 1;
	cfg.node = 2;
	cfg.iterations = ITERS;
	cfg.warmup = 2;
	cfg.dma_bits = bits;
	cfg.granule = granule;
	cfg.dir = dir;
	if (ilab_map_bench_run(st->nic, ilab_board_mem(st->tb.board), &cfg, &res, err,
			       sizeof(err)))
		fail_msg("bench: %s", err);
	assert_int_equal(res.map_errors, 0);
	assert_int_equal(res.loops, ITERS);
	return res;
}

static void test_direct_cost_is_the_profiles(void **state)
{
	struct stack st;
	struct ilab_map_bench_result r;
	struct ilab_swiotlb_stats s;
	uint64_t map_ns, unmap_ns;

	(void)state;
	stack_up(&st);
	map_ns = ilab_profile_compute_ns(&st.prof, "dma_direct_map_ns", 0);
	unmap_ns = ilab_profile_compute_ns(&st.prof, "dma_direct_unmap_ns", 0);
	assert_true(map_ns > 0 && unmap_ns > 0);
	r = bench(&st, 64, 1, ILAB_DMA_BIDIRECTIONAL);
	assert_int_equal(r.map_ns_min, map_ns);
	assert_int_equal(r.map_ns_max, map_ns);
	assert_int_equal(r.unmap_ns_min, unmap_ns);
	assert_int_equal(r.unmap_ns_max, unmap_ns);
	assert_int_equal(ilab_dma_swiotlb_stats(st.nic, &s), 0);
	assert_int_equal(s.maps, 0); /* nothing bounced */
	stack_down(&st);
}

static void test_32bit_mask_bounces_and_pays_the_copies(void **state)
{
	struct stack st;
	struct ilab_map_bench_result to1, to2, from1;
	struct ilab_swiotlb_stats s0, s1;
	uint64_t map_ns;

	(void)state;
	stack_up(&st);
	map_ns = ilab_profile_compute_ns(&st.prof, "dma_direct_map_ns", 0);
	assert_int_equal(ilab_dma_swiotlb_stats(st.nic, &s0), 0);
	assert_true(s0.base + s0.slots * 2048 <= 0x100000000ull);
	to1 = bench(&st, 32, 1, ILAB_DMA_TO_DEVICE);
	assert_int_equal(ilab_dma_swiotlb_stats(st.nic, &s1), 0);
	assert_int_equal(s1.maps - s0.maps, ITERS + 2); /* the warm-up too */
	assert_int_equal(s1.bytes_in - s0.bytes_in, (ITERS + 2) * 4096ull);
	assert_int_equal(s1.bytes_out, s0.bytes_out); /* TO_DEVICE: nothing back */
	assert_int_equal(s1.used, 0);
	to2 = bench(&st, 32, 2, ILAB_DMA_TO_DEVICE);
	from1 = bench(&st, 32, 1, ILAB_DMA_FROM_DEVICE);
	/* the copy in costs memory time on top of the direct map, and more for 8 KiB */
	assert_true(to1.map_ns_min > map_ns + 64);
	assert_true(to2.map_ns_min > to1.map_ns_min + 64);
	/* an unmap copies back for FROM_DEVICE only */
	assert_true(from1.unmap_ns_min > to1.unmap_ns_max + 64);
	stack_down(&st);
}

/* What the device reads at the bounced address is the buffer's content, through the board's
 * DMA path (SMMU in bypass, simulated memory below 4 GiB). */
static void test_device_reads_the_bounce_copy(void **state)
{
	struct stack st;
	struct ilab_board_fault f;
	struct ilab_mem *mem;
	uint8_t want[256], got[256];
	ilab_dma_addr_t a;
	ilab_pa_t pa;
	int si;

	(void)state;
	stack_up(&st);
	mem = ilab_board_mem(st.tb.board);
	assert_int_equal(ilab_mem_alloc_pages(mem, 2, 0, &pa), 0);
	assert_true(pa >= 0x100000000ull);
	for (unsigned i = 0; i < sizeof(want); i++)
		want[i] = (uint8_t)(i * 13 + 1);
	assert_int_equal(ilab_mem_write(mem, pa + 512, want, sizeof(want)), 0);
	st.nic->dma_bits = 32;
	a = ilab_dma_map_single(st.nic, pa + 512, sizeof(want), ILAB_DMA_TO_DEVICE);
	assert_false(ilab_dma_mapping_error(a));
	assert_true(a < 0x100000000ull);
	si = ilab_board_dev_smmu(st.tb.board, st.nic);
	assert_true(si >= 0);
	assert_int_equal(ilab_board_dma_read(st.tb.board, (unsigned)si, st.nic->sid, 0, false, a,
					     got, sizeof(got), &f),
			 0);
	assert_memory_equal(got, want, sizeof(want));
	ilab_dma_unmap_single(st.nic, a, sizeof(want), ILAB_DMA_TO_DEVICE);
	ilab_mem_free_pages(mem, pa, 0);
	stack_down(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct_cost_is_the_profiles),
		cmocka_unit_test(test_32bit_mask_bounces_and_pays_the_copies),
		cmocka_unit_test(test_device_reads_the_bounce_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
