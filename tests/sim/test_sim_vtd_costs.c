/* test_sim_vtd_costs.c — what a VT-d unit's work costs in simulation (src/hw/board_vtd.c, the
 * profile's vtd: and mmio: sections), on seed 004's host (profiles/icelake-2s-a100.yaml): the
 * machine itself (four DMAR units on their root ports' nodes, no VT-d driver yet), then one
 * named test per cost: register reads and writes (mmio:), the IOTLB lookup, an IOTLB-miss walk
 * (walk_ns plus one memory read per level on the page table's node), each invalidation
 * descriptor (desc_ns) and the wait descriptor (wait_ns, its status write through the cache
 * model), and the vtd: keys (read, required with iommu: vtd, refused when malformed).
 * Expected values are computed here from the profile's constants (one CPU, nothing else
 * running), never read back from the simulator. No driver: the test programs the unit's
 * registers and tables as the VT-d specification (rev. 4.x) lays them out.
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
#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/iommu_arch.h>
#include <iommulab/mem.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/icelake-2s-a100.yaml"

/* VT-d registers and encodings, typed in from the specification (§10.4, §9.1, §9.3, §6.5.2). */
#define VT_VER 0x000
#define VT_GCMD 0x018
#define VT_GSTS 0x01C
#define VT_RTADDR 0x020
#define VT_IQH 0x080
#define VT_IQT 0x088
#define VT_IQA 0x090
#define VT_GCMD_TE (1u << 31)
#define VT_GCMD_SRTP (1u << 30)
#define VT_GCMD_QIE (1u << 26)
#define VT_GSTS_QIES (1u << 26)
#define VT_R 0x1ull
#define VT_W 0x2ull
#define VT_DESC_IOTLB_GLOBAL (0x2ull | (1ull << 4)) /* IOTLB invalidate, G = 01 (global) */
#define VT_DESC_WAIT_SW (0x5ull | (1ull << 5))      /* invalidation wait, SW = 1 */

/* The test's own wait cost, distinct from desc_ns (the profile's is 0: nothing to see). */
#define WAIT_NS 41

/* ---- the machine ------------------------------------------------------------------------- */

struct rig {
	struct ilab_profile prof;
	struct ilab_testbed tb;
	struct ilab_mem *mem;
};

static struct rig *live;

static int rig_teardown(void **state)
{
	(void)state;
	if (live) {
		ilab_testbed_down(&live->tb);
		live = NULL;
	}
	return 0;
}

/* The profile's machine in simulation, every unit modelled, the board and its agents up and
 * no driver probed: these tests drive the units' registers and queues themselves. */
static void rig_up_walkers(struct rig *r, uint64_t wait_ns, uint64_t walkers,
			   uint64_t outstanding);

static void rig_up(struct rig *r, uint64_t wait_ns)
{
	rig_up_walkers(r, wait_ns, UINT64_MAX, UINT64_MAX);
}

/* A test's change to the profile before the machine is built (NULL: none). */
static void (*rig_edit)(struct ilab_profile *p);

/* The same with the profile's vtd.walkers and vtd.outstanding_requests replaced
 * (UINT64_MAX: as the profile says). */
static void rig_up_walkers(struct rig *r, uint64_t wait_ns, uint64_t walkers,
			   uint64_t outstanding)
{
	struct ilab_testbed_opts o = { .seed = 1, .no_driver = true };
	char err[512];

	memset(r, 0, sizeof(*r));
	if (ilab_profile_load(PROFILE, &r->prof, err, sizeof(err)))
		fail_msg("profile: %s", err);
	r->prof.vtd_wait_ns = wait_ns;
	if (walkers != UINT64_MAX)
		r->prof.vtd_walkers = walkers;
	if (outstanding != UINT64_MAX)
		r->prof.vtd_outstanding = outstanding;
	if (rig_edit)
		rig_edit(&r->prof);
	o.profile = &r->prof;
	live = r;
	if (ilab_testbed_up(&r->tb, &o, err, sizeof(err)))
		fail_msg("testbed: %s", err);
	assert_non_null(r->tb.board);
	assert_non_null(r->tb.sim);
	r->mem = ilab_board_mem(r->tb.board);
}

/* ilab_dist_cost at SLIT distance d, as the profile gives it (its table, else local). */
static uint64_t at(const struct ilab_dist_cost *c, unsigned d)
{
	for (unsigned i = 0; i < c->nr; i++)
		if (c->distance[i] == d)
			return c->ns[i];
	assert_int_equal(d, 10); /* this profile lists every remote distance it has */
	return c->local_ns;
}

/* One paging-entry read of a walk at SLIT distance d: vtd.entry_read_fetches fetches of the
 * line, one after the other, each at the memory's cost (1 when the key is not given). */
static uint64_t entry_read(const struct ilab_profile *p, unsigned d)
{
	return (p->vtd_entry_read_fetches ? p->vtd_entry_read_fetches : 1) * at(&p->mem, d);
}

static void test_profile_builds_four_dmar_units_on_their_nodes(void **state)
{
	static struct rig r;
	static const int want_node[] = { 0, 0, 1, 1 };
	const struct ilab_topo *t;

	(void)state;
	rig_up(&r, 0);
	t = r.tb.topo;
	assert_string_equal(r.prof.iommu_arch, "vtd");
	assert_string_equal(ilab_topo_name(t), "icelake-2s-a100");
	assert_int_equal(ilab_topo_nr_nodes(t), 2);
	assert_int_equal(ilab_topo_nr_packages(t), 2);
	assert_int_equal(ilab_topo_nr_cpus(t), 64);
	assert_int_equal(ilab_topo_nr_rootports(t), 4);
	assert_int_equal(ilab_board_nr_iommus(r.tb.board), 4);
	for (unsigned i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "dmar%u", i);
		assert_string_equal(ilab_topo_smmu(t, i)->name, name);
		assert_string_equal(ilab_topo_smmu(t, i)->arch, "vtd");
		assert_string_equal(ilab_board_iommu_arch(r.tb.board, i)->name, "vtd");
		assert_non_null(ilab_board_iommu_unit(r.tb.board, i));
		assert_int_equal(ilab_board_iommu_node(r.tb.board, i), want_node[i]);
		/* each root port has its own unit, on its node */
		assert_int_equal(ilab_topo_rootport(t, i)->smmu, i);
		assert_int_equal(ilab_topo_rootport(t, i)->node, want_node[i]);
		assert_null(ilab_board_iommu(r.tb.board, i)); /* no driver */
	}
	/* 2 A100 + 2 CX6 behind each root port, then the fio workload's NVMe (last, behind
	 * n0-rp0's switch); source-ids unique on the one segment */
	assert_int_equal(ilab_topo_nr_devices(t), 17);
	assert_int_equal(ilab_topo_device(t, 16)->kind, ILAB_DEV_NVME);
	assert_int_equal(ilab_topo_device(t, 16)->rootport, 0);
	for (unsigned i = 0; i < 17; i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);
		unsigned gpus = 0, nics = 0;

		assert_int_equal(d->node, want_node[d->rootport]);
		assert_int_equal(d->smmu, d->rootport);
		for (unsigned j = 0; j < 17; j++) {
			const struct ilab_device *e = ilab_topo_device(t, j);

			if (j != i)
				assert_int_not_equal(e->sid, d->sid);
			if (e->rootport == d->rootport) {
				gpus += e->kind == ILAB_DEV_GPU;
				nics += e->kind == ILAB_DEV_NIC;
			}
		}
		assert_int_equal(gpus, 2);
		assert_int_equal(nics, 2);
	}
	rig_teardown(NULL);
}

/* ---- register access (mmio:) ------------------------------------------------------------- */

struct mmio_arg {
	struct rig *r;
	uint64_t read_ns[4], write_ns[4];
};

static void mmio_fn(unsigned idx, void *arg)
{
	struct mmio_arg *a = arg;

	(void)idx;
	for (unsigned i = 0; i < 4; i++) {
		struct plat_mmio *m = ilab_board_mmio(a->r->tb.board, i);
		uint64_t t0 = plat_now_ns();

		(void)plat_mmio_read32(m, VT_VER);
		a->read_ns[i] = plat_now_ns() - t0;
		t0 = plat_now_ns();
		plat_mmio_write64(m, VT_IQT, 0); /* queue disabled: no effect */
		a->write_ns[i] = plat_now_ns() - t0;
	}
}

/* From a node-0 CPU: the node-0 units cost the local figures, the node-1 units the profile's
 * formula for distance 20 (read: + the remote memory penalty; write: + half of it). */
static void test_register_access_costs_the_mmio_section(void **state)
{
	static struct rig r;
	struct mmio_arg a = { .r = &r };
	int cpu;
	uint64_t extra;

	(void)state;
	rig_up(&r, 0);
	cpu = plat_node_cpu(0, 0);
	assert_int_equal(plat_run_threads(1, &cpu, mmio_fn, &a), 0);
	extra = at(&r.prof.mem, 20) - at(&r.prof.mem, 10);
	print_message("VER read %llu / %llu ns, IQT write %llu / %llu ns (local / remote unit)\n",
		      (unsigned long long)a.read_ns[0], (unsigned long long)a.read_ns[2],
		      (unsigned long long)a.write_ns[0], (unsigned long long)a.write_ns[2]);
	for (unsigned i = 0; i < 4; i++) {
		bool remote = ilab_board_iommu_node(r.tb.board, i) != 0;

		assert_int_equal(a.read_ns[i], r.prof.mmio_read.local_ns + (remote ? extra : 0));
		assert_int_equal(a.write_ns[i],
				 r.prof.mmio_write.local_ns + (remote ? extra / 2 : 0));
	}
	rig_teardown(NULL);
}

/* ---- translation: the IOTLB lookup and the walk -------------------------------------------- */

static uint64_t page_on(struct ilab_mem *mem, int node)
{
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_alloc_pages(mem, node, 0, &pa), 0);
	memset(ilab_mem_va(mem, pa, 4096), 0, 4096);
	return pa;
}

static void put64(struct ilab_mem *mem, uint64_t pa, uint64_t v)
{
	memcpy(ilab_mem_va(mem, pa, 8), &v, 8);
}

static uint64_t get64(struct ilab_mem *mem, uint64_t pa)
{
	uint64_t v;

	memcpy(&v, ilab_mem_va(mem, pa, 8), 8);
	return v;
}

/* Map iova -> pa (4 KiB, R/W) in a 4-level second-stage table rooted at top (§9.8), its
 * tables on `node`. */
static void map4k(struct ilab_mem *mem, int node, uint64_t top, uint64_t iova, uint64_t pa)
{
	uint64_t table = top;

	for (unsigned level = 4; level > 1; level--) {
		uint64_t slot = table + 8 * ((iova >> (12 + 9 * (level - 1))) & 0x1ff);
		uint64_t e = get64(mem, slot);

		if (!(e & 3)) {
			e = page_on(mem, node) | VT_R | VT_W;
			put64(mem, slot, e);
		}
		table = e & ~0xfffull;
	}
	put64(mem, table + 8 * ((iova >> 12) & 0x1ff), pa | VT_R | VT_W);
}

enum { NR_XLATE = 3 };

struct xlate_arg {
	struct rig *r;
	uint16_t sid;
	uint64_t root, iova[NR_XLATE];
	uint64_t ns[NR_XLATE];
	int rc[NR_XLATE];
};

static void xlate_fn(unsigned idx, void *arg)
{
	struct xlate_arg *a = arg;
	struct plat_mmio *m = ilab_board_mmio(a->r->tb.board, 0);
	struct ilab_iommu_unit *u = ilab_board_iommu_unit(a->r->tb.board, 0);

	(void)idx;
	plat_mmio_write64(m, VT_RTADDR, a->root);
	plat_mmio_write32(m, VT_GCMD, VT_GCMD_SRTP);
	plat_mmio_write32(m, VT_GCMD, VT_GCMD_TE);
	for (unsigned i = 0; i < NR_XLATE; i++) {
		struct ilab_iommu_dma_req req = { .sid = a->sid, .iova = a->iova[i] };
		struct ilab_iommu_dma_rsp rsp;
		uint64_t t0 = plat_now_ns();

		a->rc[i] = u->arch->translate(u, &req, &rsp, NULL);
		a->ns[i] = plat_now_ns() - t0;
	}
}

/* dmar0 (node 0), root and context tables on node 0, the page tables on node 1 (as seed 004's
 * shared domain has them), translated from a node-0 CPU:
 *  1. a cold request reads the root entry and the context entry (node 0), then one entry per
 *     level of the 4-level table (node 1): lookup + walk_ns + 2 mem(10) + 4 entry reads(20),
 *     an entry read being vtd.entry_read_fetches fetches (the root and context entries one);
 *  2. the same page again: an IOTLB hit, the lookup alone;
 *  3. a page 8 pages further (its PTE in another line of the same leaf table): the context
 *     and the PDE are cached, one PTE read: lookup + walk_ns + entry read(20). */
static void prepare_xlate(struct rig *r, struct xlate_arg *a)
{
	uint64_t ctx, top, data;

	a->r = r;
	a->sid = 0x1b00; /* nic0 */
	a->root = page_on(r->mem, 0);
	ctx = page_on(r->mem, 0);
	top = page_on(r->mem, 1);
	data = page_on(r->mem, 1);
	put64(r->mem, a->root + 16 * (a->sid >> 8), ctx | 1);
	put64(r->mem, ctx + 16 * (a->sid & 0xff), top | 1);
	put64(r->mem, ctx + 16 * (a->sid & 0xff) + 8, 2 | (7ull << 8)); /* AW 48, domain 7 */
	a->iova[0] = a->iova[1] = 0x7f3200000000ull + 0x5000;
	a->iova[2] = a->iova[0] + 8 * 4096;
	map4k(r->mem, 1, top, a->iova[0], data);
	map4k(r->mem, 1, top, a->iova[2], data);
}

static void test_iotlb_hit_costs_the_lookup(void **state)
{
	static struct rig r;
	struct xlate_arg a;
	int cpu;

	(void)state;
	rig_up(&r, 0);
	prepare_xlate(&r, &a);
	cpu = plat_node_cpu(0, 0);
	assert_int_equal(plat_run_threads(1, &cpu, xlate_fn, &a), 0);
	assert_int_equal(a.rc[1], 0);
	print_message("IOTLB hit: %llu ns\n", (unsigned long long)a.ns[1]);
	assert_int_equal(a.ns[1], r.prof.vtd_iotlb_lookup_ns);
	rig_teardown(NULL);
}

static void test_walk_costs_walk_ns_and_a_read_per_level_on_the_tables_node(void **state)
{
	static struct rig r;
	const struct ilab_profile *p = &r.prof;
	struct xlate_arg a;
	uint64_t local, remote;
	int cpu;

	(void)state;
	rig_up(&r, 0);
	prepare_xlate(&r, &a);
	cpu = plat_node_cpu(0, 0);
	assert_int_equal(plat_run_threads(1, &cpu, xlate_fn, &a), 0);
	assert_int_equal(a.rc[0], 0);
	assert_int_equal(a.rc[2], 0);
	local = at(&p->mem, 10);
	remote = entry_read(p, 20);
	print_message("cold walk %llu ns, one-level walk %llu ns (page tables on the other "
		      "node, %llu fetches per entry read)\n", (unsigned long long)a.ns[0],
		      (unsigned long long)a.ns[2], (unsigned long long)p->vtd_entry_read_fetches);
	assert_int_equal(a.ns[0], p->vtd_iotlb_lookup_ns + p->vtd_walk_ns + 2 * local +
					  4 * remote);
	assert_int_equal(a.ns[2], p->vtd_iotlb_lookup_ns + p->vtd_walk_ns + remote);
	rig_teardown(NULL);
}

/* An entry read is vtd.entry_read_fetches serial fetches to the entry's home: a remote table
 * pays the socket crossing once per fetch. The one-level walk of prepare_xlate (a PTE on the
 * other node) with 1, 2 and 3 fetches: each further fetch adds one remote memory latency,
 * and the walk's fixed part and the lookup stay as they are. */
static unsigned fetches_wanted;

static void set_fetches(struct ilab_profile *p)
{
	p->vtd_entry_read_fetches = fetches_wanted;
}

static void test_each_entry_read_pays_every_fetch_at_the_tables_node(void **state)
{
	static struct rig r;
	uint64_t ns[4];

	(void)state;
	for (unsigned k = 1; k <= 3; k++) {
		struct xlate_arg a;
		int cpu;

		fetches_wanted = k;
		rig_edit = set_fetches;
		rig_up(&r, 0);
		rig_edit = NULL;
		prepare_xlate(&r, &a);
		cpu = plat_node_cpu(0, 0);
		assert_int_equal(plat_run_threads(1, &cpu, xlate_fn, &a), 0);
		assert_int_equal(a.rc[2], 0);
		ns[k] = a.ns[2];
		print_message("one-level walk, page table on the other node, %u fetch(es) per entry "
			      "read: %llu ns\n", k, (unsigned long long)ns[k]);
		assert_int_equal(ns[k], r.prof.vtd_iotlb_lookup_ns + r.prof.vtd_walk_ns +
					k * at(&r.prof.mem, 20));
		rig_teardown(NULL);
	}
	assert_int_equal(ns[3] - ns[2], ns[2] - ns[1]);
}

/* ---- the walker pool (src/hw/vtd_timing.c) ----------------------------------------------- */

struct pair_arg {
	struct rig *r;
	uint16_t sid;
	uint64_t iova[2], ns[2];
	int rc[2];
};

static void pair_fn(unsigned idx, void *arg)
{
	struct pair_arg *a = arg;
	struct ilab_iommu_unit *u = ilab_board_iommu_unit(a->r->tb.board, 0);
	struct ilab_iommu_dma_req req = { .sid = a->sid, .iova = a->iova[idx] };
	struct ilab_iommu_dma_rsp rsp;
	uint64_t t0 = plat_now_ns();

	a->rc[idx] = u->arch->translate(u, &req, &rsp, NULL);
	a->ns[idx] = plat_now_ns() - t0;
}

/* After prepare_xlate's three requests (context and PDE cached), two requests at once from
 * two CPUs, each missing the IOTLB on a page whose PTE is in a line of its own: each walk
 * reads one PTE. Returns the two requests' times. */
static void two_walks_at_once(struct rig *r, uint64_t ns[2])
{
	struct xlate_arg a;
	struct pair_arg pa = { .r = r };
	int cpu[2] = { plat_node_cpu(0, 0), plat_node_cpu(0, 1) };
	uint64_t top;

	prepare_xlate(r, &a);
	assert_int_equal(plat_run_threads(1, &cpu[0], xlate_fn, &a), 0);
	top = get64(r->mem, (get64(r->mem, a.root + 16 * (a.sid >> 8)) & ~0xfffull) +
			    16 * (a.sid & 0xff)) & ~0xfffull;
	pa.sid = a.sid;
	for (unsigned i = 0; i < 2; i++) {
		pa.iova[i] = a.iova[2] + (uint64_t)(i + 1) * 8 * 4096;
		map4k(r->mem, 1, top, pa.iova[i], page_on(r->mem, 1));
	}
	assert_int_equal(plat_run_threads(2, cpu, pair_fn, &pa), 0);
	assert_int_equal(pa.rc[0], 0);
	assert_int_equal(pa.rc[1], 0);
	ns[0] = pa.ns[0];
	ns[1] = pa.ns[1];
}

static void test_walks_queue_behind_the_walkers(void **state)
{
	static struct rig r;
	uint64_t free_run[2], one[2], walk, hi;

	(void)state;
	rig_up_walkers(&r, 0, 0, UINT64_MAX); /* no bound (the profile's is fitted: free:) */
	two_walks_at_once(&r, free_run);
	walk = r.prof.vtd_iotlb_lookup_ns + r.prof.vtd_walk_ns + entry_read(&r.prof, 20);
	rig_teardown(NULL);
	rig_up_walkers(&r, 0, 1, UINT64_MAX); /* again with one walker */
	two_walks_at_once(&r, one);
	hi = one[0] > one[1] ? one[0] : one[1];
	print_message("two one-level walks at once: %llu / %llu ns with no limit, %llu / %llu ns "
		      "with one walker (one walk %llu ns)\n", (unsigned long long)free_run[0],
		      (unsigned long long)free_run[1], (unsigned long long)one[0],
		      (unsigned long long)one[1], (unsigned long long)walk);
	/* no limit: the two overlap, each one walk; one walker: the later waits for the other */
	assert_int_equal(free_run[0], walk);
	assert_int_equal(free_run[1], walk);
	assert_true(hi >= 2 * walk - r.prof.vtd_iotlb_lookup_ns);
	rig_teardown(NULL);
}

/* One request slot: the second request waits for the first's whole time, lookup included. */
static void test_requests_queue_behind_the_outstanding_limit(void **state)
{
	static struct rig r;
	uint64_t one[2], walk, hi;

	(void)state;
	rig_up_walkers(&r, 0, UINT64_MAX, 1);
	assert_int_equal(r.prof.vtd_outstanding, 1);
	two_walks_at_once(&r, one);
	walk = r.prof.vtd_iotlb_lookup_ns + r.prof.vtd_walk_ns + entry_read(&r.prof, 20);
	hi = one[0] > one[1] ? one[0] : one[1];
	print_message("two one-level walks at once, one request slot: %llu / %llu ns\n",
		      (unsigned long long)one[0], (unsigned long long)one[1]);
	assert_int_equal(hi, 2 * walk);
	rig_teardown(NULL);
}

/* ---- the caches' sizes ----------------------------------------------------------------------- */

/* A cache's capacity in a unit's statistics (caches.<name>.capacity). */
static json_int_t capacity(struct rig *r, unsigned unit, const char *name)
{
	struct ilab_iommu_unit *u = ilab_board_iommu_unit(r->tb.board, unit);
	json_t *j = u->arch->stats_json(u, NULL);
	json_int_t n = json_integer_value(json_object_get(json_object_get(json_object_get(j,
								"caches"), name), "capacity"));

	json_decref(j);
	return n;
}

static void small_caches(struct ilab_profile *p)
{
	p->vtd_iotlb_entries = 64;
	p->vtd_iotlb_ways = 4;
	p->vtd_pml4e_entries = 2;
	p->vtd_pdpe_entries = 8;
	p->vtd_pde_entries = 16;
}

/* The IOTLB and paging-structure caches are the profile's (VT-d §6.2 leaves their sizes to the
 * implementation), on every unit: first as shipped, then changed. */
static void test_cache_sizes_come_from_the_profile(void **state)
{
	static struct rig r;

	(void)state;
	rig_up(&r, 0);
	assert_true(r.prof.vtd_pde_entries > 0);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(capacity(&r, i, "iotlb"), r.prof.vtd_iotlb_entries);
		assert_int_equal(capacity(&r, i, "pml4e"), r.prof.vtd_pml4e_entries);
		assert_int_equal(capacity(&r, i, "pdpe"), r.prof.vtd_pdpe_entries);
		assert_int_equal(capacity(&r, i, "pde"), r.prof.vtd_pde_entries);
	}
	rig_teardown(NULL);
	rig_edit = small_caches;
	rig_up(&r, 0);
	rig_edit = NULL;
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(capacity(&r, i, "iotlb"), 64);
		assert_int_equal(capacity(&r, i, "pml4e"), 2);
		assert_int_equal(capacity(&r, i, "pdpe"), 8);
		assert_int_equal(capacity(&r, i, "pde"), 16);
	}
	rig_teardown(NULL);
}

/* ---- the invalidation queue: descriptors and the wait descriptor --------------------------- */

enum { NR_INV = 3 };

struct queue_arg {
	struct rig *r;
	uint64_t iq, status;
	uint64_t round_trip_ns; /* IQT write -> the CPU sees the status */
	int rc;
};

static bool status_done(uint64_t v, void *arg)
{
	(void)arg;
	return (uint32_t)v == 0x600dull;
}

/* Enable the queue, then post NR_INV global IOTLB invalidations and a wait descriptor whose
 * status write the CPU polls for. */
static void queue_fn(unsigned idx, void *arg)
{
	struct queue_arg *a = arg;
	struct plat_mmio *m = ilab_board_mmio(a->r->tb.board, 0);
	struct ilab_mem *mem = a->r->mem;
	uint64_t t0;
	unsigned i;

	(void)idx;
	plat_mmio_write64(m, VT_IQA, a->iq); /* 256 entries of 128 bits */
	plat_mmio_write64(m, VT_IQT, 0);
	plat_mmio_write32(m, VT_GCMD, VT_GCMD_QIE);
	if (!(plat_mmio_read32(m, VT_GSTS) & VT_GSTS_QIES)) {
		a->rc = -EIO;
		return;
	}
	for (i = 0; i < NR_INV; i++) {
		put64(mem, a->iq + 16 * i, VT_DESC_IOTLB_GLOBAL);
		put64(mem, a->iq + 16 * i + 8, 0);
	}
	put64(mem, a->iq + 16 * i, VT_DESC_WAIT_SW | (0x600dull << 32));
	put64(mem, a->iq + 16 * i + 8, a->status);
	ilab_sim_mem_access(ilab_mem_va(mem, a->iq, 64), 64, true); /* the CPU wrote them */
	t0 = plat_now_ns();
	plat_mmio_write64(m, VT_IQT, (uint64_t)(NR_INV + 1) << 4);
	a->rc = plat_poll(ilab_mem_va(mem, a->status, 4), 4, status_done, NULL, 0);
	a->round_trip_ns = plat_now_ns() - t0;
	if (!a->rc && plat_mmio_read64(m, VT_IQH) != (uint64_t)(NR_INV + 1) << 4)
		a->rc = -EIO;
}

static uint64_t agent_charged(struct rig *r, const char *name)
{
	json_t *root = ilab_sim_json(r->tb.sim), *v;
	uint64_t n;

	assert_non_null(root);
	v = json_object_get(json_object_get(json_object_get(root, "agents"), name),
			    "charged_ns");
	assert_true(json_is_integer(v));
	n = (uint64_t)json_integer_value(v);
	json_decref(root);
	return n;
}

static uint64_t run_queue(struct rig *r, int status_node, uint64_t *charged)
{
	struct queue_arg a = { .r = r };
	uint64_t c0 = agent_charged(r, "dmar0");
	int cpu = plat_node_cpu(0, 0);

	a.iq = page_on(r->mem, 0);
	a.status = page_on(r->mem, status_node);
	assert_int_equal(plat_run_threads(1, &cpu, queue_fn, &a), 0);
	assert_int_equal(a.rc, 0);
	*charged = agent_charged(r, "dmar0") - c0;
	return a.round_trip_ns;
}

/* The unit's agent is charged desc_ns per descriptor and wait_ns more for the wait one. */
static void test_each_descriptor_costs_desc_ns_and_the_wait_wait_ns(void **state)
{
	static struct rig r;
	uint64_t charged;

	(void)state;
	rig_up(&r, WAIT_NS);
	assert_int_not_equal(r.prof.vtd_desc_ns, WAIT_NS);
	run_queue(&r, 0, &charged);
	print_message("%d IOTLB invalidations + a wait: the unit charged %llu ns\n", NR_INV,
		      (unsigned long long)charged);
	assert_int_equal(charged, (NR_INV + 1) * r.prof.vtd_desc_ns + WAIT_NS);
	rig_teardown(NULL);
}

/* The wait descriptor's round trip (IQT write -> the CPU sees its status): wait_ns adds to it
 * one for one, and its status write goes through the cache model: a status word homed on the
 * other node costs the round trip at least that node's extra memory latency (the CPU re-reads
 * the line from its home). */
static void test_wait_round_trip_pays_wait_ns_and_the_status_lines_home(void **state)
{
	static struct rig r;
	uint64_t charged, base, slower, remote, extra;

	(void)state;
	rig_up(&r, 0);
	base = run_queue(&r, 0, &charged);
	rig_teardown(NULL);
	rig_up(&r, WAIT_NS);
	slower = run_queue(&r, 0, &charged);
	rig_teardown(NULL);
	rig_up(&r, 0);
	remote = run_queue(&r, 1, &charged);
	extra = at(&r.prof.mem, 20) - at(&r.prof.mem, 10);
	print_message("wait round trip: %llu ns; + wait_ns %d: %llu ns; status on node 1: %llu "
		      "ns\n", (unsigned long long)base, WAIT_NS, (unsigned long long)slower,
		      (unsigned long long)remote);
	assert_true(base >= r.prof.mmio_write.local_ns + (NR_INV + 1) * r.prof.vtd_desc_ns);
	assert_int_equal(slower - base, WAIT_NS);
	assert_true(remote >= base + extra);
	rig_teardown(NULL);
}

/* ---- the vtd: keys ------------------------------------------------------------------------ */

static const char head[] =
	"name: t\ntopology: x\n"
	"memory: {local_ns: 100, line_stream_ns: 6}\n"
	"cache: {hit_ns: 2, atomic_local_ns: 8, transfer_local_ns: 50}\n"
	"mmio: {read_local_ns: 400, write_local_ns: 50}\n";

static int parse(const char *rest, struct ilab_profile *p, char *err, size_t errlen)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s%s\n", head, rest);
	return ilab_profile_parse(text, strlen(text), "t.yaml", p, err, errlen);
}

static void test_vtd_keys_are_read_required_and_checked(void **state)
{
	static const char *const bad[] = {
		"iommu: vtd\nvtd: {desc_ns: 30, iotlb_lookup_ns: 2}",            /* no walk_ns */
		"iommu: vtd\nvtd: {desc_ns: -1, iotlb_lookup_ns: 2, walk_ns: 1}",
		"iommu: vtd\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: '1'}",
		"iommu: vtd\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: 1, tlb_ns: 1}",
		"iommu: vtd\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: 1, desc_ns: 4}",
		"iommu: vtd\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: 1, walkers: 0}",
		"iommu: vtd\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: 1, entry_read_fetches: 0}",
		"iommu: vtd\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: 1, entry_read_fetches: 17}",
		"iommu: vtd\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: 1, "
		"outstanding_requests: 65537}",
		"iommu: vtd",                                                   /* no vtd: */
		"iommu: smmuv3\nvtd: {desc_ns: 3, iotlb_lookup_ns: 2, walk_ns: 1}", /* no smmu: */
	};
	struct ilab_profile p;
	char err[256];

	(void)state;
	assert_int_equal(parse("iommu: vtd\nvtd: {desc_ns: 31, wait_ns: 7, iotlb_lookup_ns: 3, "
			       "walk_ns: 216, walkers: 3, outstanding_requests: 5, "
			       "entry_read_fetches: 2}", &p, err, sizeof(err)), 0);
	assert_int_equal(p.vtd_walkers, 3);
	assert_int_equal(p.vtd_entry_read_fetches, 2);
	assert_int_equal(p.vtd_outstanding, 5);
	assert_int_equal(p.vtd_desc_ns, 31);
	assert_int_equal(p.vtd_wait_ns, 7);
	assert_int_equal(p.vtd_iotlb_lookup_ns, 3);
	assert_int_equal(p.vtd_walk_ns, 216);
	/* wait_ns is optional (0); with iommu: vtd no smmu: section is needed */
	assert_int_equal(parse("iommu: vtd\nvtd: {desc_ns: 31, iotlb_lookup_ns: 3, walk_ns: 216}",
			       &p, err, sizeof(err)), 0);
	assert_int_equal(p.vtd_wait_ns, 0);
	assert_int_equal(p.vtd_walkers, 0); /* not given: no limit */
	assert_int_equal(p.vtd_entry_read_fetches, 0); /* not given: one fetch */
	assert_int_equal(p.vtd_outstanding, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(bad[i], &p, err, sizeof(err)), -EINVAL);
		print_message("%s -> %s\n", strchr(bad[i], '\n') ? strchr(bad[i], '\n') + 1
								   : bad[i], err);
		assert_non_null(strstr(err, "t.yaml:"));
	}
	assert_non_null(strstr(err, "missing key 'smmu'")); /* the last one */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_walks_queue_behind_the_walkers, rig_teardown),
		cmocka_unit_test_teardown(test_each_entry_read_pays_every_fetch_at_the_tables_node,
					  rig_teardown),
		cmocka_unit_test_teardown(test_requests_queue_behind_the_outstanding_limit,
					  rig_teardown),
		cmocka_unit_test_teardown(test_profile_builds_four_dmar_units_on_their_nodes,
					  rig_teardown),
		cmocka_unit_test_teardown(test_register_access_costs_the_mmio_section,
					  rig_teardown),
		cmocka_unit_test_teardown(test_iotlb_hit_costs_the_lookup, rig_teardown),
		cmocka_unit_test_teardown(
			test_walk_costs_walk_ns_and_a_read_per_level_on_the_tables_node,
			rig_teardown),
		cmocka_unit_test_teardown(test_each_descriptor_costs_desc_ns_and_the_wait_wait_ns,
					  rig_teardown),
		cmocka_unit_test_teardown(
			test_wait_round_trip_pays_wait_ns_and_the_status_lines_home, rig_teardown),
		cmocka_unit_test_teardown(test_cache_sizes_come_from_the_profile, rig_teardown),
		cmocka_unit_test(test_vtd_keys_are_read_required_and_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
