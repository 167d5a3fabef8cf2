/* test_sim_tlbi_scope.c — what a TLBI costs the SMMU's invalidation engine in simulation, by
 * scope and by entries touched (src/hw/board.c, invalidation_engine_take): smmu.tlbi_ns for a
 * lookup by address, smmu.tlbi_scan_ns for a scan (by ASID, VMID, everything), plus
 * smmu.tlbi_entry_ns per TLB or walk-cache entry the model dropped; a CMD_SYNC after it waits
 * for that or for the handshake (smmu.tlbi_sync_ns), whichever ends later. Expected values are
 * computed from the profile's constants: one CPU, one batch, no contention, integer costs.
 * Also: the keys are read from YAML, and a malformed or negative one is refused.
 * Not a test of the model's invalidation semantics (tests/hw).
 *
 * Single host thread (every simulated CPU and agent is a fiber): not an _mt test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/iommu.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/smmuv3.h>
#include <iommulab/smmuv3_drv.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/kunpeng920.yaml"

/* The test's own scope constants, distinct from each other and from the profile's tlbi_ns, so
 * that a mix-up of two of them shows. A scan well above the handshake: the engine decides. */
#define SCAN_NS 900
#define ENTRY_NS 7

enum { DMA_PAGES = 16 };

/* kunpeng920, the node-2 SMMU only, SMMU_CMDQ (no ECMDQs), the node-2 NIC in a DMA domain. */
struct stack {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	unsigned smmu;
	struct ilab_iommu *iommu;
	struct ilab_dev *nic;
	int cpu;
};

static struct stack *live;

static int stack_teardown(void **state)
{
	(void)state;
	if (live) {
		ilab_iommu_release_device(live->nic);
		ilab_testbed_down(&live->tb);
		live = NULL;
	}
	return 0;
}

static void stack_up(struct stack *st)
{
	char err[512];
	struct ilab_testbed_opts to = { .profile = &st->prof, .seed = 1, .cma = ILAB_CMA_GLOBAL };
	const struct ilab_device *td = NULL;

	memset(st, 0, sizeof(*st));
	if (ilab_profile_load(PROFILE, &st->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	st->prof.smmu_tlbi_scan_ns = SCAN_NS;
	st->prof.smmu_tlbi_entry_ns = ENTRY_NS;
	assert_true(st->prof.smmu_tlbi_ns > 0 && st->prof.smmu_tlbi_ns != SCAN_NS);
	if (ilab_testbed_load_topology(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	for (unsigned i = 0; i < ilab_topo_nr_devices(st->tb.topo); i++) {
		const struct ilab_device *d = ilab_topo_device(st->tb.topo, i);

		if (d->kind == ILAB_DEV_NIC && d->node == 2)
			td = d;
	}
	assert_non_null(td);
	st->smmu = td->smmu;
	to.smmu_mask = 1ull << td->smmu;
	if (ilab_testbed_up(&st->tb, &to, err, sizeof(err)))
		fail_msg("%s", err);
	live = st;
	st->iommu = ilab_board_iommu(st->tb.board, st->smmu);
	assert_non_null(st->iommu);
	st->nic = ilab_testbed_dev(&st->tb, td->name);
	assert_non_null(st->nic);
	assert_int_equal(ilab_iommu_probe_device(st->nic, ILAB_DOMAIN_DMA), 0);
	st->cpu = plat_node_cpu(2, 0);
	assert_true(st->cpu >= 0);
}

static uint64_t agent_stat(struct stack *st, const char *key)
{
	json_t *root = ilab_sim_json(st->tb.sim), *agent, *v;
	uint64_t n;

	assert_non_null(root);
	agent = json_object_get(json_object_get(root, "agents"),
				ilab_topo_smmu(st->tb.topo, st->smmu)->name);
	assert_non_null(agent);
	v = json_object_get(agent, key);
	assert_true(json_is_integer(v));
	n = (uint64_t)json_integer_value(v);
	json_decref(root);
	return n;
}

/* TLB and walk-cache entries the model has invalidated so far (its statistics). */
static uint64_t model_invalidations(struct stack *st)
{
	struct smmu *s = ilab_board_smmu(st->tb.board, st->smmu);
	uint64_t n = 0;

	for (int id = SMMU_CACHE_TLB; id <= SMMU_CACHE_WALK_L2; id++) {
		struct smmu_cache_stats cs;

		assert_int_equal(smmu_get_cache_stats(s, (enum smmu_cache_id)id, &cs), 0);
		n += cs.invalidations;
	}
	return n;
}

struct issue_arg {
	struct stack *st;
	const uint64_t *cmd; /* one command, then a CMD_SYNC; NULL: the sync alone */
	int ret;
};

static void issue_fn(unsigned idx, void *arg)
{
	struct issue_arg *a = arg;

	(void)idx;
	a->ret = ilab_smmu_drv_issue_cmds(a->st->iommu, a->cmd, a->cmd ? 1 : 0, true);
}

/* What the SMMU's agent was charged (compute: command_ns, sync_ns, the sync's wait) for one
 * command + CMD_SYNC, issued from the node-2 CPU after a plain sync that leaves no TLBI
 * pending and the engine idle. */
static uint64_t charged_for(struct stack *st, const uint64_t *cmd)
{
	struct issue_arg a = { .st = st };
	uint64_t c0;

	assert_int_equal(plat_run_threads(1, &st->cpu, issue_fn, &a), 0);
	assert_int_equal(a.ret, 0);
	a.cmd = cmd;
	c0 = agent_stat(st, "charged_ns");
	assert_int_equal(plat_run_threads(1, &st->cpu, issue_fn, &a), 0);
	assert_int_equal(a.ret, 0);
	return agent_stat(st, "charged_ns") - c0;
}

/* From the constants: the TLBI goes to the idle engine when dispatched (after its command_ns)
 * and takes `engine_ns` there; the sync is dispatched after its entry read (a hit: read ahead
 * with the TLBI), command_ns and sync_ns, and then waits max(handshake, engine's remainder). */
static uint64_t expected_charge(const struct ilab_profile *p, uint64_t engine_ns)
{
	uint64_t gap = p->cache_hit_ns + p->smmu_command_ns + p->smmu_sync_ns;
	uint64_t wait = engine_ns > gap ? engine_ns - gap : 0;

	if (wait < p->smmu_tlbi_sync_ns)
		wait = p->smmu_tlbi_sync_ns;
	return 2 * p->smmu_command_ns + p->smmu_sync_ns + wait;
}

static void test_sync_pays_the_scope_of_the_tlbi(void **state)
{
	static struct stack st; /* static: the teardown runs after this frame is gone */
	uint64_t va[2], asid[2], all[2] = { 0x30, 0 }; /* CMD_TLBI_NSNH_ALL */
	uint64_t inv0, got_va, got_asid, got_all;

	(void)state;
	stack_up(&st);
	ilab_smmu_drv_build_tlbi_va(va, 1, 0x100000);
	ilab_smmu_drv_build_tlbi_asid(asid, 1);
	inv0 = model_invalidations(&st);
	got_va = charged_for(&st, va);
	got_asid = charged_for(&st, asid);
	got_all = charged_for(&st, all);
	/* nothing was translated: every TLBI found nothing to drop */
	assert_int_equal(model_invalidations(&st), inv0);
	print_message("sync after TLBI_NH_VA %llu ns, after TLBI_NH_ASID %llu ns, after "
		      "TLBI_NSNH_ALL %llu ns (agent's charges)\n", (unsigned long long)got_va,
		      (unsigned long long)got_asid, (unsigned long long)got_all);
	assert_int_equal(got_va, expected_charge(&st.prof, st.prof.smmu_tlbi_ns));
	assert_int_equal(got_asid, expected_charge(&st.prof, SCAN_NS));
	assert_int_equal(got_all, expected_charge(&st.prof, SCAN_NS));
	/* the scan, not the handshake, decides here: the test sees the scan's own cost */
	assert_true(got_asid > expected_charge(&st.prof, 0));
	stack_teardown(NULL);
}

struct dma_arg {
	struct stack *st;
	ilab_pa_t pa;
	unsigned pages;
	ilab_dma_addr_t iova;
	int ret;
};

/* Map `pages` pages for the NIC and read each through the SMMU: one TLB entry each, and the
 * walk caches' table entries of the first walk. */
static void dma_fn(unsigned idx, void *arg)
{
	struct dma_arg *a = arg;
	uint8_t b[64];

	(void)idx;
	a->iova = ilab_dma_map_single(a->st->nic, a->pa, (size_t)a->pages << 12,
				      ILAB_DMA_BIDIRECTIONAL);
	if (ilab_dma_mapping_error(a->iova)) {
		a->ret = -ENOMEM;
		return;
	}
	for (unsigned i = 0; i < a->pages && !a->ret; i++)
		a->ret = ilab_board_dma_read(a->st->tb.board, a->st->smmu, a->st->nic->sid, 0,
					     false, a->iova + ((uint64_t)i << 12), b, sizeof(b),
					     NULL);
}

static void test_each_dropped_entry_costs_entry_ns(void **state)
{
	static struct stack st;
	struct dma_arg a = { .st = &st, .pages = DMA_PAGES };
	struct ilab_iommu_domain *dom;
	uint64_t cmd[2], inv0, dropped, with, without;
	int asid;

	(void)state;
	stack_up(&st);
	dom = ilab_iommu_get_domain_for_dev(st.nic);
	assert_non_null(dom);
	asid = ilab_smmu_drv_domain_asid(dom);
	assert_true(asid > 0);
	assert_int_equal(ilab_mem_alloc_pages(ilab_board_mem(st.tb.board), 2, 4, &a.pa), 0);
	assert_int_equal(plat_run_threads(1, &st.cpu, dma_fn, &a), 0);
	assert_int_equal(a.ret, 0);

	ilab_smmu_drv_build_tlbi_asid(cmd, (uint16_t)asid);
	inv0 = model_invalidations(&st);
	with = charged_for(&st, cmd);
	dropped = model_invalidations(&st) - inv0;
	inv0 = model_invalidations(&st);
	without = charged_for(&st, cmd); /* the same command again: nothing left to drop */
	assert_int_equal(model_invalidations(&st), inv0);
	print_message("TLBI_NH_ASID + sync after %u pages of DMA: %llu entries dropped, %llu ns; "
		      "again, none dropped: %llu ns\n", DMA_PAGES, (unsigned long long)dropped,
		      (unsigned long long)with, (unsigned long long)without);
	/* one TLB entry per page read, plus at least one walk-cache entry (the first walk's) */
	assert_true(dropped > DMA_PAGES);
	assert_int_equal(without, expected_charge(&st.prof, SCAN_NS));
	assert_int_equal(with, expected_charge(&st.prof, SCAN_NS + dropped * ENTRY_NS));
	assert_int_equal(with - without, dropped * ENTRY_NS);
	stack_teardown(NULL);
}

/* ---- the profile keys ------------------------------------------------------------------- */

static const char head[] =
	"name: t\ntopology: x\n"
	"memory: {local_ns: 100, line_stream_ns: 6}\n"
	"cache: {hit_ns: 2, atomic_local_ns: 8, transfer_local_ns: 50}\n"
	"mmio: {read_local_ns: 400, write_local_ns: 50}\n"
	"smmu: {command_ns: 10, sync_ns: 53, tlbi_ns: 67, tlb_lookup_ns: 5";

static int parse_with(const char *keys, struct ilab_profile *p, char *err, size_t errlen)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s%s}\n", head, keys);
	return ilab_profile_parse(text, strlen(text), "t.yaml", p, err, errlen);
}

static void test_keys_are_read_defaulted_and_checked(void **state)
{
	static const char *const bad[] = {
		", tlbi_scan_ns: -5", ", tlbi_entry_ns: -1", ", tlbi_scan_ns: fast",
		", tlbi_entry_ns: 1.5", ", tlbi_scan_ns: '580'", ", tlbi_scan_ns: 0",
	};
	struct ilab_profile p;
	char err[256];

	(void)state;
	assert_int_equal(parse_with(", tlbi_scan_ns: 580, tlbi_entry_ns: 1", &p, err,
				    sizeof(err)), 0);
	assert_int_equal(p.smmu_tlbi_scan_ns, 580);
	assert_int_equal(p.smmu_tlbi_entry_ns, 1);
	/* absent: 0 in the profile, which the board reads as "a scan costs tlbi_ns", no
	 * per-entry cost (the results before these keys existed) */
	assert_int_equal(parse_with("", &p, err, sizeof(err)), 0);
	assert_int_equal(p.smmu_tlbi_scan_ns, 0);
	assert_int_equal(p.smmu_tlbi_entry_ns, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse_with(bad[i], &p, err, sizeof(err)), -EINVAL);
		print_message("%s -> %s\n", bad[i] + 2, err);
		assert_non_null(strstr(err, "t.yaml:"));
		assert_non_null(strstr(err, strstr(bad[i], "tlbi_scan") ? "tlbi_scan_ns"
									  : "tlbi_entry_ns"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sync_pays_the_scope_of_the_tlbi, stack_teardown),
		cmocka_unit_test_teardown(test_each_dropped_entry_costs_entry_ns, stack_teardown),
		cmocka_unit_test(test_keys_are_read_defaulted_and_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
