/* fuzz_cmdqv.c — libFuzzer target for the Tegra241 CMDQV of the SMMUv3 model: the input is a
 * program of CMDQV register writes (config page, VINTFs, both VCMDQ apertures), raw accesses to
 * the whole window, queue memory, fault windows, command processing, translations and resets.
 * Any input must end in an architected state: no crash, no sanitizer report. After every step it
 * checks the invariants of smmu_invariants.h (a VCMDQ's CMD_SYNC completes that queue's
 * invalidations), the VCMDQs' pointers and the CMDQV registers' defined fields. Not a test. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/smmuv3.h"
#include "iommulab/tegra241_cmdqv.h"
#include "smmu_invariants.h"

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)in->p[0] << (8 * i);
	return v;
}

/* A register of the CMDQV window worth hitting often, chosen by h. */
static uint64_t hot_reg(unsigned h, unsigned nq, unsigned nvi)
{
	unsigned q = (h >> 3) % nq, v = (h >> 3) % nvi, l = (h >> 5) % 8;

	switch (h & 7) {
	case 0: return CMDQV_CONFIG;
	case 1: return CMDQV_CMDQ_ALLOC(q);
	case 2: return CMDQV_VINTF(v) + VINTF_CONFIG;
	case 3: return CMDQV_VI_INT_MASK;
	case 4: return CMDQV_VCMDQ_PAGE0 + CMDQV_VCMDQ_STRIDE * q + 4 * ((h >> 10) % 6);
	case 5: return CMDQV_VCMDQ_PAGE1 + CMDQV_VCMDQ_STRIDE * q + 4 * ((h >> 10) % 4);
	case 6: return CMDQV_VINTF_PAGES + CMDQV_VINTF_STRIDE * v + CMDQV_VCMDQ_STRIDE * l +
		       4 * ((h >> 10) % 6);
	default: return CMDQV_VINTF_PAGES + CMDQV_VINTF_STRIDE * v + 0x10000 +
			CMDQV_VCMDQ_STRIDE * l + 4 * ((h >> 10) % 4);
	}
}

/* A sane start: CMDQV on, VCMDQ q in VINTF q % nvi, hypervisor-owned, 4- or 16-entry queues
 * at 0x40000 + 4K * q, enabled. */
static void bring_up(struct inv *iv, uint64_t w, unsigned nq, unsigned nvi, bool guest)
{
	unsigned per = nq / nvi;

	inv_mmio_write(iv, w + CMDQV_CONFIG, CMDQV_CONFIG_EN, 4);
	for (unsigned q = 0; q < nq; q++)
		inv_mmio_write(iv, w + CMDQV_CMDQ_ALLOC(q), CMDQV_ALLOC_ALLOCATED |
				(q % per) << CMDQV_ALLOC_LVCMDQ_SHIFT |
				(q / per) << CMDQV_ALLOC_VINTF_SHIFT, 4);
	for (unsigned v = 0; v < nvi; v++)
		inv_mmio_write(iv, w + CMDQV_VINTF(v), (guest ? 0 : VINTF_CONFIG_HYP_OWN) | 1, 4);
	for (unsigned q = 0; q < nq; q++) {
		uint64_t p = w + CMDQV_VCMDQ_STRIDE * q;

		/* even queues 4 entries: a few commands wrap them */
		inv_mmio_write(iv, p + CMDQV_VCMDQ_PAGE1 + VCMDQ_BASE,
			       0x40000 + 0x1000ull * q + (q & 1 ? 4 : 2), 8);
		inv_mmio_write(iv, p + CMDQV_VCMDQ_PAGE0 + VCMDQ_CONFIG, 1, 4);
	}
}

/* The CMDQV registers' defined fields (tegra241_cmdqv.h: Linux's and QEMU's layout; NVIDIA
 * publishes no specification), for the VCMDQs and VINTFs that PARAM reports. */
static void check_cmdqv_masks(struct smmu *s, uint64_t w, unsigned nq, unsigned nvi, bool guest)
{
	struct reg_mask t[8 + 2 * CMDQV_MAX_VCMDQS + CMDQV_MAX_VINTFS];
	unsigned n = 0;
	uint32_t param = (uint32_t)smmu_mmio_read(s, w + CMDQV_PARAM, 4);

	if (1u << ((param >> CMDQV_PARAM_NUM_VCMDQ_LOG2_SHIFT) & 0xF) != nq ||
	    1u << ((param >> CMDQV_PARAM_NUM_VINTF_LOG2_SHIFT) & 0xF) != nvi)
		INV_FAIL("CMDQV PARAM %#x: not %u VCMDQs and %u VINTFs", param, nq, nvi);
	t[n++] = (struct reg_mask){ CMDQV_CONFIG, 4, CMDQV_CONFIG_MASK };
	t[n++] = (struct reg_mask){ CMDQV_STATUS, 4, CMDQV_STATUS_ENABLED };
	for (unsigned q = 0; q < nq; q++) {
		uint64_t p0 = CMDQV_VCMDQ_PAGE0 + CMDQV_VCMDQ_STRIDE * q;

		t[n++] = (struct reg_mask){ CMDQV_CMDQ_ALLOC(q), 4, CMDQV_ALLOC_MASK };
		t[n++] = (struct reg_mask){ (uint32_t)p0 + VCMDQ_CONS, 4, 0x7F0FFFFFu };
		t[n++] = (struct reg_mask){ (uint32_t)p0 + VCMDQ_PROD, 4, 0xFFFFFu };
		t[n++] = (struct reg_mask){ (uint32_t)p0 + VCMDQ_CONFIG, 4, VCMDQ_CONFIG_EN };
		t[n++] = (struct reg_mask){ (uint32_t)p0 + VCMDQ_STATUS, 4, VCMDQ_STATUS_ENABLED };
		t[n++] = (struct reg_mask){ (uint32_t)p0 + VCMDQ_GERROR, 4, VCMDQ_GERROR_MASK };
		t[n++] = (struct reg_mask){ (uint32_t)p0 + VCMDQ_GERRORN, 4, VCMDQ_GERROR_MASK };
		t[n++] = (struct reg_mask){ CMDQV_VCMDQ_PAGE1 + CMDQV_VCMDQ_STRIDE * q + VCMDQ_BASE, 8,
					    VCMDQ_BASE_ADDR_MASK | VCMDQ_BASE_LOG2SIZE_MASK };
		if (n > sizeof(t) / sizeof(t[0]) - 12)
			break;
	}
	for (unsigned v = 0; v < nvi && n < sizeof(t) / sizeof(t[0]); v++)
		t[n++] = (struct reg_mask){ CMDQV_VINTF(v) + VINTF_CONFIG, 4,
					    0x1FFFFu | (guest ? 0 : VINTF_CONFIG_HYP_OWN) };
	for (unsigned i = 0; i < n; i++) {
		uint64_t val = smmu_mmio_read(s, w + t[i].off, t[i].size);

		if (val & ~t[i].mask)
			INV_FAIL("CMDQV register %#x reads %#llx: bits %#llx are not defined", t[i].off,
				 (unsigned long long)val, (unsigned long long)(val & ~t[i].mask));
	}
}

struct vsnap {
	uint32_t cons[16], prod[16];
};

static void vq_snap(struct smmu *s, uint64_t w, unsigned nq, struct vsnap *v)
{
	for (unsigned q = 0; q < nq && q < 16; q++) {
		uint64_t p0 = w + CMDQV_VCMDQ_PAGE0 + CMDQV_VCMDQ_STRIDE * q;

		v->cons[q] = (uint32_t)smmu_mmio_read(s, p0 + VCMDQ_CONS, 4);
		v->prod[q] = (uint32_t)smmu_mmio_read(s, p0 + VCMDQ_PROD, 4);
	}
}

/* After a step that wrote no register: each VCMDQ's CONS moved legally. */
static void check_vcmdq_pointers(struct smmu *s, uint64_t w, unsigned nq, const struct vsnap *a)
{
	struct vsnap b;

	vq_snap(s, w, nq, &b);
	for (unsigned q = 0; q < nq && q < 16; q++)
		if (b.cons[q] != a->cons[q])
			check_consumer("VCMDQ", a->cons[q], b.cons[q], a->prod[q],
				       q_log2(smmu_mmio_read(s, w + CMDQV_VCMDQ_PAGE1 +
							     CMDQV_VCMDQ_STRIDE * q + VCMDQ_BASE, 8),
					      VCMDQ_LOG2SIZE_MAX));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fmem *m;
	static struct inv iv;
	struct in in = { data, size };
	struct smmu_config cfg;
	struct smmu *s;
	uint8_t knobs;
	uint64_t w, window;
	unsigned steps = 0;

	if (!m)
		m = calloc(1, sizeof(*m));
	memset(m->buf, 0, sizeof(m->buf));
	m->flo = m->fhi = 0;
	smmu_config_default(&cfg);
	cfg.thread_safe = false;
	knobs = (uint8_t)take(&in, 1);
	cfg.cmdqv_vcmdqs = 1u << (knobs % 4 + 1);        /* 2..16 VCMDQs */
	cfg.cmdqv_vintfs = 1u << ((knobs >> 2) % 2);     /* 1 or 2 VINTFs */
	cfg.cmdqv_guest = knobs & 0x10;
	if (knobs & 0x20)
		cfg.oas = 40;
	cfg.cmdqs = 8;
	cfg.eventqs = 5;
	if (inv_create(&iv, m, &cfg))
		return 0;
	s = iv.s;
	working_streams(&iv);
	/* the main queue too, so both kinds of queue share the executor */
	inv_mmio_write(&iv, 0x80, STRTAB, 8);
	inv_mmio_write(&iv, 0x88, 8, 4);
	inv_mmio_write(&iv, 0x90, CMDQ | 6, 8);
	inv_mmio_write(&iv, 0xA0, EVTQ | 4, 8);
	inv_mmio_write(&iv, 0x20, 0xD, 4);
	w = smmu_cmdqv_offset(s);
	window = smmu_mmio_size(s);
	if (knobs & 0x40)
		bring_up(&iv, w, cfg.cmdqv_vcmdqs, cfg.cmdqv_vintfs, knobs & 0x80);
	check_reg_masks(s);
	check_cmdqv_masks(s, w, cfg.cmdqv_vcmdqs, cfg.cmdqv_vintfs, cfg.cmdqv_guest);

	while (in.n && steps++ < 256) {
		unsigned op = (unsigned)take(&in, 1) % 10;
		bool regwrite = false;
		struct qsnap qs;
		struct vsnap vs;

		q_snap(s, &qs, 0);
		vq_snap(s, w, cfg.cmdqv_vcmdqs, &vs);
		switch (op) {
		case 0: { /* hot CMDQV register write */
			uint64_t off = hot_reg((unsigned)take(&in, 2), cfg.cmdqv_vcmdqs,
					       cfg.cmdqv_vintfs);
			uint64_t val = take(&in, 8);

			inv_mmio_write(&iv, w + off, val, (take(&in, 1) & 1) ? 8 : 4);
			regwrite = true;
			break;
		}
		case 1: { /* any access in the window, any size */
			uint64_t off = take(&in, 3) % window;

			if (take(&in, 1) & 1) {
				uint64_t val = take(&in, 8);

				inv_mmio_write(&iv, off, val, (unsigned)take(&in, 1) % 9);
				regwrite = true;
			} else {
				(void)smmu_mmio_read(s, off, (unsigned)take(&in, 1) % 9);
			}
			break;
		}
		case 2: { /* a command in some VCMDQ's memory */
			uint64_t pa = 0x40000 + ((take(&in, 2) % (16 * 0x1000)) & ~15ull);
			uint64_t d0 = take(&in, 8), d1 = take(&in, 8);

			put64(&iv, pa, d0);
			put64(&iv, pa + 8, d1);
			break;
		}
		case 3: { /* a PROD write through the direct aperture */
			unsigned q = (unsigned)take(&in, 1) % cfg.cmdqv_vcmdqs;

			inv_mmio_write(&iv, w + CMDQV_VCMDQ_PAGE0 + CMDQV_VCMDQ_STRIDE * q + VCMDQ_PROD,
				       take(&in, 3), 4);
			regwrite = true;
			break;
		}
		case 4: {
			struct smmu_txn_req q = { 0 };
			uint8_t sid = (uint8_t)take(&in, 1);

			q.sid = sid & 0x80 ? sid % NSTREAMS : sid; /* a working stream, or any */
			q.iova = take(&in, 8);
			if (sid & 0x80)
				q.iova &= 0xFFFF;
			inv_translate(&iv, &q);
			break;
		}
		case 5:
			smmu_process_commands(s, (unsigned)take(&in, 1));
			break;
		case 6: {
			uint64_t lo = take(&in, 3) % MEM_SIZE;

			inv_fault_window(&iv, lo, lo + take(&in, 2));
			break;
		}
		case 7:
			if (take(&in, 1) == 0x5A) {
				inv_reset(&iv);
				regwrite = true;
			}
			break;
		case 8: { /* a driver's cycle through VCMDQ q: TLBI, CFGI_ALL, CMD_SYNC (a guest's
			   * queue refuses the CFGI), run, then translate the page */
			uint8_t k = (uint8_t)take(&in, 1);
			uint64_t pg = take(&in, 1) & 0xF;
			unsigned q = (k >> 4) % cfg.cmdqv_vcmdqs, sid = (k >> 2) & 3;
			static const unsigned tlbi[] = { 1, 3, 5, 6 };
			unsigned kind = tlbi[k & 3];
			uint64_t b = w + CMDQV_VCMDQ_PAGE1 + CMDQV_VCMDQ_STRIDE * q + VCMDQ_BASE;
			uint64_t p = w + CMDQV_VCMDQ_PAGE0 + CMDQV_VCMDQ_STRIDE * q + VCMDQ_PROD;
			struct smmu_txn_req t = { .sid = sid, .iova = pg << 12 };

			append_cmd_q(&iv, b, p, VCMDQ_LOG2SIZE_MAX, kind,
				     kind == 3 ? pg : (pg << 3) | (sid + 1), 0, 0);
			append_cmd_q(&iv, b, p, VCMDQ_LOG2SIZE_MAX, 0, 0, 0, 0);
			append_cmd_q(&iv, b, p, VCMDQ_LOG2SIZE_MAX, 4, 0, 0, 0);
			q_snap(s, &qs, 0);
			vq_snap(s, w, cfg.cmdqv_vcmdqs, &vs);
			smmu_process_commands(s, 255);
			check_queue_pointers(s, &qs, 0);
			check_vcmdq_pointers(s, w, cfg.cmdqv_vcmdqs, &vs);
			check_reg_masks(s);
			inv_translate(&iv, &t);
			regwrite = true;
			break;
		}
		case 9: /* a table entry of a working stream (PTE, table or CD word) */
			put64(&iv, PTS + 8 * (take(&in, 2) % (NSTREAMS * 0x800)), take(&in, 8));
			break;
		}
		if (!regwrite) {
			check_queue_pointers(s, &qs, 0);
			check_vcmdq_pointers(s, w, cfg.cmdqv_vcmdqs, &vs);
		}
		check_reg_masks(s);
		check_cmdqv_masks(s, w, cfg.cmdqv_vcmdqs, cfg.cmdqv_vintfs, cfg.cmdqv_guest);
	}
	inv_destroy(&iv);
	return 0;
}
