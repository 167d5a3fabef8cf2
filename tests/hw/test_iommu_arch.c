/* test_iommu_arch.c — the seam between the board and IOMMU architectures (iommu_arch.h): the
 * registry, a board whose units are chosen by name (an unknown one refused with a message),
 * a VT-d board driven end to end through the neutral board API (its register window, its
 * invalidation-queue agent woken by the doorbell, device DMA translated by its tables, a fault
 * with VT-d's reason, its JSON), SMMUv3 as the default, and the profile's iommu: key (default,
 * accepted, refused at its file:line) reaching the testbed's board.
 * Not a test of either model (tests/hw/test_smmuv3_*, test_vtd_*) nor of a driver.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include <iommulab/board.h>
#include <iommulab/intel_iommu_drv.h>
#include <iommulab/iommu_arch.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>
#include <iommulab/testbed.h>
#include <iommulab/topo.h>

#define PROFILE ILAB_TESTDATA "/../../profiles/a100-2node.yaml"

/* VT-d register offsets and bits, typed in from the VT-d specification rev. 4.x (§10.4),
 * not taken from the model's header. */
#define VT_GCMD 0x018
#define VT_GSTS 0x01C
#define VT_RTADDR 0x020
#define VT_IQT 0x088
#define VT_IQA 0x090
#define VT_GCMD_TE (1u << 31)
#define VT_GCMD_SRTP (1u << 30)
#define VT_GCMD_QIE (1u << 26)
#define VT_GSTS_TES (1u << 31)
#define VT_GSTS_QIES (1u << 26)
#define VT_FR_WRITE 0x5 /* §7.1.3: write to a page without W */
#define VT_R 0x1ull
#define VT_W 0x2ull

static void test_registry_finds_both_architectures_by_name(void **state)
{
	char names[64];

	(void)state;
	assert_non_null(ilab_iommu_arch_find("smmuv3"));
	assert_non_null(ilab_iommu_arch_find("vtd"));
	assert_string_equal(ilab_iommu_arch_find("smmuv3")->name, "smmuv3");
	assert_string_equal(ilab_iommu_arch_find("vtd")->name, "vtd");
	assert_null(ilab_iommu_arch_find("amdvi"));
	assert_null(ilab_iommu_arch_find(""));
	assert_null(ilab_iommu_arch_find(NULL));
	assert_int_equal(ilab_iommu_arch_count(), 2);
	assert_null(ilab_iommu_arch_at(2));
	assert_string_equal(ilab_iommu_arch_names(names, sizeof(names), "|"), "smmuv3|vtd");
	/* every entry is complete: the board calls each op without checking */
	for (unsigned i = 0; i < ilab_iommu_arch_count(); i++) {
		const struct ilab_iommu_arch *a = ilab_iommu_arch_at(i);

		assert_non_null(a->unit_kind);
		assert_non_null(a->driver_name);
		assert_non_null(a->doorbell_name);
		assert_true(a->create && a->destroy && a->mmio_size && a->mmio_read &&
			    a->mmio_write && a->consume && a->translate && a->stats_json &&
			    a->probe && a->remove);
	}
}

/* ---- a native board on the a100-2node preset (4 units) ---------------------------------------- */

struct rig {
	struct ilab_topo *topo;
	struct ilab_board *board;
	char err[256];
};

static int rig_up(struct rig *r, const char *arch, uint64_t mask)
{
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_board_opts bo = { .node_bytes = 256ull << 20, .iommu_arch = arch,
				      .iommu_mask = mask };
	int rc;

	memset(r, 0, sizeof(*r));
	rc = ilab_topo_load("a100-2node", &r->topo, r->err, sizeof(r->err));
	if (rc)
		return rc;
	pc.topo = r->topo;
	rc = plat_init(&pc);
	if (rc)
		return rc;
	return ilab_board_create(r->topo, &bo, &r->board, r->err, sizeof(r->err));
}

static void rig_down(struct rig *r)
{
	ilab_board_destroy(r->board);
	plat_fini();
	ilab_topo_free(r->topo);
}

static void test_board_refuses_an_unknown_architecture(void **state)
{
	struct rig r;

	(void)state;
	assert_int_equal(rig_up(&r, "amdvi", 0), -EINVAL);
	assert_null(r.board);
	assert_non_null(strstr(r.err, "'amdvi'"));
	assert_non_null(strstr(r.err, "smmuv3, vtd")); /* says what exists */
	rig_down(&r);
}

/* Without iommu_arch every unit is the topology's: SMMUv3 for the presets. */
static void test_units_default_to_the_topology_architecture(void **state)
{
	struct rig r;

	(void)state;
	assert_int_equal(rig_up(&r, NULL, 1ull << 1), 0);
	assert_int_equal(ilab_board_nr_iommus(r.board), ilab_topo_nr_smmus(r.topo));
	for (unsigned i = 0; i < ilab_board_nr_iommus(r.board); i++) {
		assert_string_equal(ilab_topo_smmu(r.topo, i)->arch, "smmuv3");
		assert_string_equal(ilab_board_iommu_arch(r.board, i)->name, "smmuv3");
		assert_int_equal(ilab_board_iommu_node(r.board, i), ilab_topo_smmu(r.topo, i)->node);
	}
	/* only unit 1 is modelled; the SMMU-named wrappers agree with the neutral API */
	assert_null(ilab_board_iommu_unit(r.board, 0));
	assert_non_null(ilab_board_iommu_unit(r.board, 1));
	assert_non_null(ilab_board_smmu(r.board, 1));
	assert_null(ilab_board_smmu(r.board, 0));
	assert_int_equal(ilab_board_mmio_size(r.board, 0), 0);
	assert_true(ilab_board_mmio_size(r.board, 1) >= 0x20000); /* SMMUv3 pages 0 and 1 */
	assert_int_equal(ilab_board_nr_smmus(r.board), ilab_board_nr_iommus(r.board));
	rig_down(&r);
}

/* Pages for the VT-d tables, zeroed, in unit 0's node. */
static uint64_t page(struct ilab_mem *mem)
{
	ilab_pa_t pa;

	assert_int_equal(ilab_mem_alloc_pages(mem, 0, 0, &pa), 0);
	memset(ilab_mem_va(mem, pa, 4096), 0, 4096);
	return pa;
}

static void put64(struct ilab_mem *mem, uint64_t pa, uint64_t v)
{
	assert_int_equal(ilab_mem_write(mem, pa, &v, 8), 0);
}

static uint64_t get64(struct ilab_mem *mem, uint64_t pa)
{
	uint64_t v = 0;

	assert_int_equal(ilab_mem_read(mem, pa, &v, 8), 0);
	return v;
}

/* Map iova -> pa (4 KiB, read/write) in a 4-level second-stage table rooted at top (§9.8). */
static void map4k(struct ilab_mem *mem, uint64_t top, uint64_t iova, uint64_t pa)
{
	uint64_t table = top;

	for (unsigned level = 4; level > 1; level--) {
		uint64_t slot = table + 8 * ((iova >> (12 + 9 * (level - 1))) & 0x1ff);
		uint64_t e = get64(mem, slot);

		if (!(e & 3)) {
			e = page(mem) | VT_R | VT_W;
			put64(mem, slot, e);
		}
		table = e & ~0xfffull;
	}
	put64(mem, table + 8 * ((iova >> 12) & 0x1ff), pa | VT_R | VT_W);
}

/* Wait (natively: the agent is a thread) until the 32-bit word at pa holds want, 10 s at most:
 * a bound against a hang, not a timing assertion. */
static bool word_becomes(struct ilab_mem *mem, uint64_t pa, uint32_t want)
{
	const volatile uint32_t *w = ilab_mem_va(mem, pa, 4);

	for (int i = 0; i < 10000; i++) {
		if (__atomic_load_n(w, __ATOMIC_ACQUIRE) == want)
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return false;
}

static void test_vtd_board_runs_queue_dma_and_faults_through_the_seam(void **state)
{
	const uint16_t sid = 0x0108; /* bus 1, device 1, function 0 */
	const uint64_t iova = 0x40000000ull + 0x3000;
	const char msg[] = "through the seam";
	struct ilab_board_fault f;
	struct plat_mmio *mmio;
	struct ilab_mem *mem;
	uint64_t root, ctx, top, data, iq, status;
	char back[sizeof(msg)];
	struct rig r;
	json_t *js, *model;

	(void)state;
	assert_int_equal(rig_up(&r, "vtd", 1ull << 0), 0);
	assert_string_equal(ilab_board_iommu_arch(r.board, 0)->name, "vtd");
	assert_string_equal(ilab_board_iommu_arch(r.board, 3)->name, "vtd");
	assert_null(ilab_board_smmu(r.board, 0)); /* not an SMMUv3 */
	assert_null(ilab_board_mmio(r.board, 1)); /* left out by the mask */
	assert_int_equal(ilab_board_mmio_size(r.board, 0) % 4096, 0);
	assert_int_equal(ilab_board_start(r.board), 0);
	mmio = ilab_board_mmio(r.board, 0);
	mem = ilab_board_mem(r.board);
	assert_non_null(mmio);

	/* Tables: root entry of bus 1 -> context table; context entry of devfn 08 -> a 4-level
	 * second-stage table (AW 2), domain 5 (§9.1, §9.3). */
	root = page(mem);
	ctx = page(mem);
	top = page(mem);
	data = page(mem);
	put64(mem, root + 16 * (sid >> 8), ctx | 1);
	put64(mem, ctx + 16 * (sid & 0xff), top | 1);
	put64(mem, ctx + 16 * (sid & 0xff) + 8, 2 | (5ull << 8));
	map4k(mem, top, iova, data);
	plat_mmio_write64(mmio, VT_RTADDR, root);
	plat_mmio_write32(mmio, VT_GCMD, VT_GCMD_SRTP);
	plat_mmio_write32(mmio, VT_GCMD, VT_GCMD_TE);
	assert_true(plat_mmio_read32(mmio, VT_GSTS) & VT_GSTS_TES);

	/* The invalidation queue (§6.5.2): a wait descriptor with SW=1 writes its status word;
	 * only the unit's agent, woken by the IQT write's doorbell, can execute it. */
	iq = page(mem);
	status = page(mem);
	plat_mmio_write64(mmio, VT_IQA, iq); /* 256 entries of 128 bits */
	plat_mmio_write64(mmio, VT_IQT, 0);
	plat_mmio_write32(mmio, VT_GCMD, VT_GCMD_TE | VT_GCMD_QIE);
	assert_true(plat_mmio_read32(mmio, VT_GSTS) & VT_GSTS_QIES);
	put64(mem, iq, 0x5ull | 0x20ull | (0x1234abcdull << 32)); /* wait, SW, status data */
	put64(mem, iq + 8, status);
	plat_mmio_write64(mmio, VT_IQT, 1 << 4);
	assert_true(word_becomes(mem, status, 0x1234abcd));

	/* Device DMA through the unit: lands at the mapped page, 8 bytes in. */
	assert_int_equal(ilab_board_dma_write(r.board, 0, sid, 0, false, iova + 8, msg,
					      sizeof(msg), &f), 0);
	assert_int_equal(ilab_mem_read(mem, data + 8, back, sizeof(back)), 0);
	assert_memory_equal(back, msg, sizeof(msg));
	assert_int_equal(ilab_board_dma_read(r.board, 0, sid, 0, false, iova + 8, back,
					     sizeof(back), &f), 0);
	/* An unmapped page: the write faults with VT-d's reason, at its address. */
	assert_int_equal(ilab_board_dma_write(r.board, 0, sid, 0, false, iova + 0x1000, msg,
					      sizeof(msg), &f), -EIO);
	assert_int_equal(f.event, VT_FR_WRITE);
	assert_int_equal(f.iova, iova + 0x1000);
	assert_int_equal(ilab_board_dma_write(r.board, 2, sid, 0, false, iova, msg, 1, &f),
			 -ENODEV);
	assert_int_equal(ilab_board_dma_write(r.board, 0, 0x10000, 0, false, iova, msg, 1, &f),
			 -EINVAL); /* no such source-id */

	/* Its statistics, from its architecture: 3 translations, 1 fault, 1 descriptor. */
	js = ilab_board_iommus_json(r.board);
	assert_int_equal(json_object_size(js), 1);
	model = json_object_get(json_object_get(js, "smmu0"), "model"); /* the topology's name */
	assert_non_null(model);
	assert_int_equal(json_integer_value(json_object_get(model, "translations")), 3);
	assert_int_equal(json_integer_value(json_object_get(model, "faults")), 1);
	assert_int_equal(json_integer_value(json_object_get(model, "descriptors")), 1);
	json_decref(js);

	/* The VT-d driver probes through the seam, and its statistics join the unit's. */
	assert_int_equal(ilab_board_probe_drivers(r.board, NULL, NULL), 0);
	assert_non_null(ilab_board_iommu(r.board, 0));
	assert_true(ilab_intel_iommu_is_ours(ilab_board_iommu(r.board, 0)));
	js = ilab_board_iommus_json(r.board);
	assert_true(json_integer_value(json_object_get(
			    json_object_get(json_object_get(js, "smmu0"), "driver"), "qi_submits")) > 0);
	json_decref(js);
	rig_down(&r);
}

/* ---- the profile's iommu: key ---------------------------------------------------------------- */

/* iommu: vtd needs the vtd: section's costs (test_sim_vtd_costs.c tests them) */
#define VTD_LINES "iommu: vtd\nvtd: {desc_ns: 1, iotlb_lookup_ns: 1, walk_ns: 1}"

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 64, f);
	fclose(f);
	return buf;
}

/* The profile text with `line` inserted after its topology: line; returns the 1-based line
 * number the insertion got. */
static unsigned with_line(const char *text, const char *line, char *out, size_t outlen)
{
	const char *at = strstr(text, "\ntopology:");
	const char *eol;
	unsigned n = 1;

	assert_non_null(at);
	eol = strchr(at + 1, '\n');
	assert_non_null(eol);
	for (const char *p = text; p <= eol; p++)
		n += *p == '\n';
	snprintf(out, outlen, "%.*s%s\n%s", (int)(eol + 1 - text), text, line, eol + 1);
	return n;
}

static void test_profile_iommu_key_default_accepted_and_refused(void **state)
{
	size_t len;
	char *text = read_text(PROFILE, &len), *buf = malloc(len + 256), err[512], want[64];
	struct ilab_profile p;
	unsigned line;

	(void)state;
	assert_int_equal(ilab_profile_parse(text, len, "a.yaml", &p, err, sizeof(err)), 0);
	assert_string_equal(p.iommu_arch, "smmuv3");
	with_line(text, VTD_LINES, buf, len + 256);
	assert_int_equal(ilab_profile_parse(buf, strlen(buf), "a.yaml", &p, err, sizeof(err)), 0);
	assert_string_equal(p.iommu_arch, "vtd");
	with_line(text, "iommu: smmuv3", buf, len + 256);
	assert_int_equal(ilab_profile_parse(buf, strlen(buf), "a.yaml", &p, err, sizeof(err)), 0);
	assert_string_equal(p.iommu_arch, "smmuv3");
	line = with_line(text, "iommu: amdvi", buf, len + 256);
	assert_int_equal(ilab_profile_parse(buf, strlen(buf), "a.yaml", &p, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "a.yaml:%u:", line);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "smmuv3 or vtd"));
	assert_non_null(strstr(err, "'amdvi'"));
	line = with_line(text, "iommu: [vtd]", buf, len + 256);
	assert_int_equal(ilab_profile_parse(buf, strlen(buf), "a.yaml", &p, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "a.yaml:%u:", line);
	assert_non_null(strstr(err, want));
	free(buf);
	free(text);
}

/* A simulated testbed on a profile that says `iommu: vtd` builds VT-d units and probes the
 * VT-d driver on them. */
static void test_testbed_builds_the_profiles_architecture(void **state)
{
	size_t len;
	char *text = read_text(PROFILE, &len), *buf = malloc(len + 256), err[512];
	struct ilab_profile p;
	struct ilab_testbed tb = { 0 };
	struct ilab_testbed_opts o = { .seed = 1, .iommu_mask = 1 };
	struct ilab_board_opts bo;
	struct smmu_config scfg;

	(void)state;
	with_line(text, VTD_LINES, buf, len + 256);
	assert_int_equal(ilab_profile_parse(buf, strlen(buf), "a.yaml", &p, err, sizeof(err)), 0);
	o.profile = &p;
	ilab_testbed_board_opts(&o, NULL, &bo, &scfg);
	assert_string_equal(bo.iommu_arch, "vtd");
	assert_int_equal(bo.iommu_mask, 1);
	if (ilab_testbed_up(&tb, &o, err, sizeof(err)))
		fail_msg("testbed: %s", err);
	assert_non_null(tb.board);
	assert_string_equal(ilab_board_iommu_arch(tb.board, 0)->name, "vtd");
	assert_non_null(ilab_board_iommu_unit(tb.board, 0));
	ilab_testbed_down(&tb);
	free(buf);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_finds_both_architectures_by_name),
		cmocka_unit_test(test_board_refuses_an_unknown_architecture),
		cmocka_unit_test(test_units_default_to_the_topology_architecture),
		cmocka_unit_test(test_vtd_board_runs_queue_dma_and_faults_through_the_seam),
		cmocka_unit_test(test_profile_iommu_key_default_accepted_and_refused),
		cmocka_unit_test(test_testbed_builds_the_profiles_architecture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
