/* fuzz_cmdqv.c — libFuzzer target for the Tegra241 CMDQV of the SMMUv3 model: the input is a
 * program of CMDQV register writes (config page, VINTFs, both VCMDQ apertures), raw accesses to
 * the whole window, queue memory, fault windows, command processing, translations and resets.
 * Any input must end in an architected state: no crash, no sanitizer report. Not a test. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/smmuv3.h"
#include "iommulab/tegra241_cmdqv.h"

#define MEM_SIZE (1u << 20)

struct fmem {
	uint8_t buf[MEM_SIZE];
	uint64_t flo, fhi; /* reads/writes in [flo, fhi) abort */
};

static int rd(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct fmem *m = ctx;

	if (pa >= MEM_SIZE || len > MEM_SIZE - pa || (pa < m->fhi && pa + len > m->flo))
		return -1;
	memcpy(buf, m->buf + pa, len);
	return 0;
}

static int wr(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct fmem *m = ctx;

	if (pa >= MEM_SIZE || len > MEM_SIZE - pa || (pa < m->fhi && pa + len > m->flo))
		return -1;
	memcpy(m->buf + pa, buf, len);
	return 0;
}

static const struct smmu_host_ops ops = { .mem_read = rd, .mem_write = wr };

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

/* A sane start: CMDQV on, VCMDQ q in VINTF q % nvi, hypervisor-owned, 16-entry queues at
 * 0x40000 + 4K * q, enabled. */
static void bring_up(struct smmu *s, uint64_t w, unsigned nq, unsigned nvi, bool guest)
{
	unsigned per = nq / nvi;

	smmu_mmio_write(s, w + CMDQV_CONFIG, CMDQV_CONFIG_EN, 4);
	for (unsigned q = 0; q < nq; q++)
		smmu_mmio_write(s, w + CMDQV_CMDQ_ALLOC(q), CMDQV_ALLOC_ALLOCATED |
				(q % per) << CMDQV_ALLOC_LVCMDQ_SHIFT |
				(q / per) << CMDQV_ALLOC_VINTF_SHIFT, 4);
	for (unsigned v = 0; v < nvi; v++)
		smmu_mmio_write(s, w + CMDQV_VINTF(v), (guest ? 0 : VINTF_CONFIG_HYP_OWN) | 1, 4);
	for (unsigned q = 0; q < nq; q++) {
		uint64_t p = w + CMDQV_VCMDQ_STRIDE * q;

		smmu_mmio_write(s, p + CMDQV_VCMDQ_PAGE1 + VCMDQ_BASE, 0x40000 + 0x1000ull * q + 4, 8);
		smmu_mmio_write(s, p + CMDQV_VCMDQ_PAGE0 + VCMDQ_CONFIG, 1, 4);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fmem *m;
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
	if (smmu_create(&s, &cfg, &ops, m, NULL))
		return 0;
	/* the main queue too, so both kinds of queue share the executor */
	smmu_mmio_write(s, 0x80, 0x10000, 8);
	smmu_mmio_write(s, 0x88, 8, 4);
	smmu_mmio_write(s, 0x90, 0x20000 | 6, 8);
	smmu_mmio_write(s, 0xA0, 0x30000 | 4, 8);
	smmu_mmio_write(s, 0x20, 0xD, 4);
	w = smmu_cmdqv_offset(s);
	window = smmu_mmio_size(s);
	if (knobs & 0x40)
		bring_up(s, w, cfg.cmdqv_vcmdqs, cfg.cmdqv_vintfs, knobs & 0x80);

	while (in.n && steps++ < 256) {
		unsigned op = (unsigned)take(&in, 1) % 8;

		switch (op) {
		case 0: { /* hot CMDQV register write */
			uint64_t off = hot_reg((unsigned)take(&in, 2), cfg.cmdqv_vcmdqs,
					       cfg.cmdqv_vintfs);
			smmu_mmio_write(s, w + off, take(&in, 8), (take(&in, 1) & 1) ? 8 : 4);
			break;
		}
		case 1: { /* any access in the window, any size */
			uint64_t off = take(&in, 3) % window;

			if (take(&in, 1) & 1)
				smmu_mmio_write(s, off, take(&in, 8), (unsigned)take(&in, 1) % 9);
			else
				(void)smmu_mmio_read(s, off, (unsigned)take(&in, 1) % 9);
			break;
		}
		case 2: { /* a command in some VCMDQ's memory */
			uint64_t pa = 0x40000 + ((take(&in, 2) % (16 * 0x1000)) & ~15ull);
			uint64_t d0 = take(&in, 8), d1 = take(&in, 8);

			memcpy(m->buf + pa, &d0, 8);
			memcpy(m->buf + pa + 8, &d1, 8);
			break;
		}
		case 3: { /* a PROD write through the direct aperture */
			unsigned q = (unsigned)take(&in, 1) % cfg.cmdqv_vcmdqs;

			smmu_mmio_write(s, w + CMDQV_VCMDQ_PAGE0 + CMDQV_VCMDQ_STRIDE * q + VCMDQ_PROD,
					take(&in, 3), 4);
			break;
		}
		case 4: {
			struct smmu_txn_req q = { 0 };
			struct smmu_txn_rsp r;

			q.sid = (uint32_t)take(&in, 1);
			q.iova = take(&in, 8);
			smmu_translate(s, &q, &r);
			break;
		}
		case 5:
			smmu_process_commands(s, (unsigned)take(&in, 1));
			break;
		case 6:
			m->flo = take(&in, 3) % MEM_SIZE;
			m->fhi = m->flo + take(&in, 2);
			break;
		case 7:
			if (take(&in, 1) == 0x5A)
				smmu_reset(s);
			break;
		}
	}
	smmu_destroy(s);
	return 0;
}
