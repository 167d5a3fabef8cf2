/* cmdqv.c — NVIDIA Tegra241 CMDQV, hardware side: the global registers (CONFIG, PARAM, STATUS,
 * error maps, the VCMDQ allocation map), the VINTFs with their logical VCMDQ apertures, each
 * VCMDQ's CONFIG/STATUS/GERROR/GERRORN/BASE/CONS_INDX_BASE, and the VCMDQ rules the command
 * consumer applies (CS_NONE-only CMD_SYNC, a guest VINTF's command subset, PROD range).
 * It is not the consumer: each VCMDQ is a queue object of cmdq.c, executed by the same code as
 * SMMU_CMDQ. Register facts: include/iommulab/tegra241_cmdqv.h; choices: docs/smmuv3-model.md.
 */
#include <errno.h>
#include <stdlib.h>

#include "iommulab/tegra241_cmdqv.h"
#include "smmuv3_internal.h"

#define LMAP_PER_VINTF 128u /* ALLOC.LVCMDQ is 7 bits */

static inline unsigned vq_index(const struct smmu_cmdq *q) { return q->index - 1; }
static inline struct smmu_vcmdq *vq_of(const struct smmu *s, const struct smmu_cmdq *q)
{
	return &s->cmdqv->vq[vq_index(q)];
}

static unsigned log2u(unsigned v)
{
	unsigned l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

int smmu_cmdqv_init(struct smmu *s)
{
	const struct smmu_config *c = &s->cfg;
	struct smmu_cmdqv *v;

	if (!c->cmdqv_vcmdqs)
		return 0;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->nvcmdq = c->cmdqv_vcmdqs;
	v->nvintf = c->cmdqv_vintfs;
	v->log2q = log2u(v->nvcmdq);
	v->log2vi = log2u(v->nvintf);
	v->vq = calloc(v->nvcmdq, sizeof(*v->vq));
	v->lmap = calloc((size_t)v->nvintf * LMAP_PER_VINTF, sizeof(*v->lmap));
	s->cmdqv = v;
	if (!v->vq || !v->lmap)
		return -ENOMEM;
	return 0;
}

void smmu_cmdqv_fini(struct smmu *s)
{
	if (!s->cmdqv)
		return;
	free(s->cmdqv->vq);
	free((void *)s->cmdqv->lmap);
	free(s->cmdqv);
	s->cmdqv = NULL;
}

/* Rebuild (VINTF, LVCMDQ) -> VCMDQ from the ALLOC registers. Two VCMDQs given the same slot
 * is a software error; the lower-numbered one gets the slot (a model choice). */
static void rebuild_lmap(struct smmu_cmdqv *v)
{
	for (unsigned i = 0; i < v->nvintf * LMAP_PER_VINTF; i++)
		atomic_store_explicit(&v->lmap[i], 0, memory_order_relaxed);
	for (unsigned q = v->nvcmdq; q-- > 0;) {
		uint32_t a = v->vq[q].alloc;
		unsigned vi = (a >> CMDQV_ALLOC_VINTF_SHIFT) & 0x3F;
		unsigned l = (a >> CMDQV_ALLOC_LVCMDQ_SHIFT) & 0x7F;

		if ((a & CMDQV_ALLOC_ALLOCATED) && vi < v->nvintf)
			atomic_store_explicit(&v->lmap[vi * LMAP_PER_VINTF + l], (uint16_t)(q + 1),
					      memory_order_release);
	}
}

void smmu_cmdqv_reset(struct smmu *s)
{
	struct smmu_cmdqv *v = s->cmdqv;

	if (!v)
		return;
	v->config = 0;
	v->vi_int_mask[0] = v->vi_int_mask[1] = 0;
	memset(v->vintf_config, 0, sizeof(v->vintf_config));
	memset(v->vintf_status, 0, sizeof(v->vintf_status));
	memset(v->vq, 0, v->nvcmdq * sizeof(*v->vq));
	rebuild_lmap(v);
}

/* ---- decoding the window -------------------------------------------------------------------- */

bool smmu_cmdqv_window(const struct smmu *s, uint64_t off)
{
	return s->cmdqv && off >= SMMU_ECMDQ_CP_OFFSET && off < s->mmio_size;
}

uint64_t smmu_cmdqv_offset(const struct smmu *s)
{
	return s->cmdqv ? SMMU_ECMDQ_CP_OFFSET : 0;
}

struct smmu_cmdq *smmu_cmdqv_vcmdq_at(struct smmu *s, uint64_t off, unsigned *reg)
{
	struct smmu_cmdqv *v = s->cmdqv;
	uint64_t rel;
	unsigned q, vi, in_vi, l;

	if (!smmu_cmdqv_window(s, off))
		return NULL;
	rel = off - SMMU_ECMDQ_CP_OFFSET;
	if (rel < CMDQV_VCMDQ_PAGE0)
		return NULL;
	if (rel < CMDQV_VINTF_PAGES) {
		bool page1 = rel >= CMDQV_VCMDQ_PAGE1;

		rel -= page1 ? CMDQV_VCMDQ_PAGE1 : CMDQV_VCMDQ_PAGE0;
		q = (unsigned)(rel / CMDQV_VCMDQ_STRIDE);
		if (q >= v->nvcmdq)
			return NULL;
		*reg = (unsigned)(rel % CMDQV_VCMDQ_STRIDE) + (page1 ? 0x1000u : 0);
		return &s->cmdq[1 + q];
	}
	rel -= CMDQV_VINTF_PAGES;
	vi = (unsigned)(rel / CMDQV_VINTF_STRIDE);
	in_vi = (unsigned)(rel % CMDQV_VINTF_STRIDE);
	l = (in_vi & 0xFFFF) / CMDQV_VCMDQ_STRIDE;
	if (vi >= v->nvintf || l >= LMAP_PER_VINTF)
		return NULL;
	q = atomic_load_explicit(&v->lmap[vi * LMAP_PER_VINTF + l], memory_order_acquire);
	if (!q)
		return NULL; /* no VCMDQ behind this logical slot: RAZ/WI */
	*reg = (in_vi % CMDQV_VCMDQ_STRIDE) + (in_vi >= 0x10000 ? 0x1000u : 0);
	return &s->cmdq[q];
}

/* ---- state the consumer asks about ------------------------------------------------------------ */

static int vq_vintf(const struct smmu_cmdqv *v, const struct smmu_vcmdq *vq)
{
	unsigned vi = (vq->alloc >> CMDQV_ALLOC_VINTF_SHIFT) & 0x3F;

	return (vq->alloc & CMDQV_ALLOC_ALLOCATED) && vi < v->nvintf ? (int)vi : -1;
}

/* A VCMDQ runs when the CMDQV, its VINTF and the queue itself are enabled. */
bool smmu_vcmdq_enabled(const struct smmu *s, const struct smmu_cmdq *q)
{
	const struct smmu_cmdqv *v = s->cmdqv;
	const struct smmu_vcmdq *vq = vq_of(s, q);
	int vi = vq_vintf(v, vq);

	return (v->config & CMDQV_CONFIG_EN) && vi >= 0 &&
	       (v->vintf_status[vi] & VINTF_STATUS_ENABLED) && (vq->status & VCMDQ_STATUS_ENABLED);
}

bool smmu_vcmdq_error_active(const struct smmu *s, const struct smmu_cmdq *q)
{
	const struct smmu_vcmdq *vq = vq_of(s, q);

	return (vq->gerror ^ vq->gerrorn) & VCMDQ_GERROR_MASK;
}

static void raise_bit(struct smmu *s, struct smmu_vcmdq *vq, uint32_t bit)
{
	struct smmu_cmdqv *v = s->cmdqv;
	int vi = vq_vintf(v, vq);

	if ((vq->gerror ^ vq->gerrorn) & bit)
		return; /* already active: a GERROR bit toggles only when inactive */
	vq->gerror ^= bit;
	if (vi >= 0 && (v->vi_int_mask[vi / 32] >> (vi % 32) & 1))
		return;
	s->st.irq_pulses++;
	if (s->ops.irq)
		s->ops.irq(s->ctx, SMMU_IRQ_CMDQV);
}

/* A command error: CONS.ERR [30:24] takes the code (RD stays on the failed command) and the
 * VCMDQ's GERROR.CMDQ_ERR toggles; the queue stops until GERRORN matches again. The SMMU's
 * own GERROR is not involved. */
void smmu_vcmdq_raise(struct smmu *s, struct smmu_cmdq *q, unsigned code, uint32_t gerror_bit)
{
	if (code) {
		uint32_t c = atomic_load_explicit(&q->cons, memory_order_relaxed);

		c = (c & ~(uint32_t)VCMDQ_CONS_ERR_MASK) | ((uint32_t)code << VCMDQ_CONS_ERR_SHIFT);
		atomic_store_explicit(&q->cons, c, memory_order_release);
	}
	smmu_trace(s, "vcmdq_error", vq_index(q), code ? code : gerror_bit);
	raise_bit(s, vq_of(s, q), gerror_bit);
}

#define OP_TLBI_NH_ASID 0x11
#define OP_TLBI_NH_VA 0x12
#define OP_ATC_INV 0x40
#define OP_CMD_SYNC 0x46

unsigned smmu_vcmdq_check_cmd(const struct smmu *s, const struct smmu_cmdq *q, uint64_t d0)
{
	const struct smmu_cmdqv *v = s->cmdqv;
	unsigned op = (unsigned)(d0 & 0xFF);
	int vi = vq_vintf(v, vq_of(s, q));

	/* VCMDQs signal nothing: a CMD_SYNC must be CS = SIG_NONE, and software polls CONS. */
	if (op == OP_CMD_SYNC && fld(d0, 13, 12) != 0)
		return VCMDQ_CERROR_ILL;
	if (vi >= 0 && !(v->vintf_config[vi] & VINTF_CONFIG_HYP_OWN) &&
	    op != OP_TLBI_NH_ASID && op != OP_TLBI_NH_VA && op != OP_ATC_INV && op != OP_CMD_SYNC)
		return VCMDQ_CERROR_ILL; /* a guest-owned VINTF takes invalidations only */
	return VCMDQ_CERROR_NONE;
}

/* PROD names an entry outside the queue: a WR bit above the wrap bit, or more entries
 * outstanding than the queue holds. */
bool smmu_vcmdq_prod_bad(const struct smmu_cmdq *q, unsigned log2, uint32_t prod, uint32_t cons)
{
	const uint32_t m = (2u << log2) - 1;

	(void)q;
	return (prod & Q_IDX_MASK & ~m) || ((prod - cons) & m) > (1u << log2);
}

void smmu_vcmdq_cons_written(struct smmu *s, struct smmu_cmdq *q)
{
	struct smmu_vcmdq *vq = vq_of(s, q);
	uint32_t c;
	uint8_t b[4];

	if (!(s->cmdqv->config & CMDQV_CONFIG_CONS_DRAM_EN))
		return;
	c = atomic_load_explicit(&q->cons, memory_order_relaxed);
	for (unsigned i = 0; i < 4; i++)
		b[i] = (uint8_t)(c >> (8 * i));
	if (smmu_mem_write(s, vq->cons_indx_base & 0xFFFFFFFFFFFCull, b, sizeof(b)))
		smmu_vcmdq_raise(s, q, VCMDQ_CERROR_NONE, VCMDQ_GERROR_CONS_DRAM_WR_ABT);
}

/* ---- registers ------------------------------------------------------------------------------ */

static inline void set_half64(uint64_t *r, bool high, uint32_t val, uint64_t mask)
{
	uint64_t n = high ? ((*r & 0xFFFFFFFFull) | ((uint64_t)val << 32))
			  : ((*r & ~0xFFFFFFFFull) | val);

	*r = n & mask;
}

static uint32_t vcmdq_reg_read(struct smmu *s, struct smmu_cmdq *q, unsigned reg)
{
	struct smmu_vcmdq *vq = vq_of(s, q);

	switch (reg) {
	case VCMDQ_CONS: return atomic_load_explicit(&q->cons, memory_order_acquire);
	case VCMDQ_PROD: return atomic_load_explicit(&q->prod, memory_order_acquire);
	case VCMDQ_CONFIG: return vq->config;
	case VCMDQ_STATUS: return vq->status;
	case VCMDQ_GERROR: return vq->gerror;
	case VCMDQ_GERRORN: return vq->gerrorn;
	case 0x1000 + VCMDQ_BASE: return (uint32_t)q->base;
	case 0x1000 + VCMDQ_BASE + 4: return (uint32_t)(q->base >> 32);
	case 0x1000 + VCMDQ_CONS_INDX_BASE: return (uint32_t)vq->cons_indx_base;
	case 0x1000 + VCMDQ_CONS_INDX_BASE + 4: return (uint32_t)(vq->cons_indx_base >> 32);
	default: return 0;
	}
}

/* A BASE the VCMDQ cannot use: LOG2SIZE above VCMDQ_LOG2SIZE_MAX, or a queue reaching above
 * the OAS. Enabling with it fails with GERROR.CMDQ_INIT_ERR. The SMMU aligns ADDR to the
 * queue size itself, as for SMMU_CMDQ. */
static bool vcmdq_base_bad(const struct smmu *s, uint64_t base)
{
	unsigned log2 = (unsigned)(base & VCMDQ_BASE_LOG2SIZE_MASK);
	uint64_t bytes, addr;

	if (log2 > VCMDQ_LOG2SIZE_MAX)
		return true;
	bytes = (uint64_t)16 << log2;
	addr = base & VCMDQ_BASE_ADDR_MASK & ~(bytes - 1);
	return s->cfg.oas < 64 && ((addr + bytes - 1) >> s->cfg.oas);
}

/* CONFIG.CMDQ_EN: STATUS.ENABLED follows at once, unless BASE is unusable. */
static void vcmdq_write_config(struct smmu *s, struct smmu_cmdq *q, uint32_t val)
{
	struct smmu_vcmdq *vq = vq_of(s, q);

	vq->config = val & VCMDQ_CONFIG_EN;
	if (!vq->config) {
		vq->status = 0;
	} else if (!(vq->status & VCMDQ_STATUS_ENABLED)) {
		if (vcmdq_base_bad(s, q->base))
			smmu_vcmdq_raise(s, q, VCMDQ_CERROR_NONE, VCMDQ_GERROR_INIT_ERR);
		else
			vq->status = VCMDQ_STATUS_ENABLED;
	}
	smmu_trace(s, "vcmdq_en", vq_index(q), vq->status);
}

static void vcmdq_reg_write(struct smmu *s, struct smmu_cmdq *q, unsigned reg, uint32_t val)
{
	struct smmu_vcmdq *vq = vq_of(s, q);
	const bool off = !(vq->status & VCMDQ_STATUS_ENABLED) && !vq->config;

	switch (reg) {
	case VCMDQ_CONS:
		if (!(vq->status & VCMDQ_STATUS_ENABLED)) /* RO while the queue runs */
			atomic_store_explicit(&q->cons, val & (Q_IDX_MASK | VCMDQ_CONS_ERR_MASK),
					      memory_order_release);
		break;
	case VCMDQ_PROD:
		atomic_store_explicit(&q->prod, val & Q_IDX_MASK, memory_order_release);
		smmu_cmdq_kick(s, q->index);
		break;
	case VCMDQ_CONFIG:
		vcmdq_write_config(s, q, val);
		break;
	case VCMDQ_GERRORN:
		vq->gerrorn = val & VCMDQ_GERROR_MASK;
		if (!smmu_vcmdq_error_active(s, q))
			smmu_cmdq_kick(s, q->index); /* resumes at CONS */
		break;
	case 0x1000 + VCMDQ_BASE:
	case 0x1000 + VCMDQ_BASE + 4:
		if (off) /* ignored while enabled (CONSTRAINED UNPREDICTABLE: this model's choice) */
			set_half64(&q->base, reg & 4, val,
				   VCMDQ_BASE_ADDR_MASK | VCMDQ_BASE_LOG2SIZE_MASK);
		break;
	case 0x1000 + VCMDQ_CONS_INDX_BASE:
	case 0x1000 + VCMDQ_CONS_INDX_BASE + 4:
		if (off)
			set_half64(&vq->cons_indx_base, reg & 4, val, 0x0000FFFFFFFFFFFFull);
		break;
	default:
		break; /* STATUS, GERROR: RO */
	}
}

static bool vq_err(const struct smmu_vcmdq *vq)
{
	return (vq->gerror ^ vq->gerrorn) & VCMDQ_GERROR_MASK;
}

/* Error maps are views of the VCMDQs' GERROR/GERRORN, computed when read. */
static uint32_t cmdq_err_map(const struct smmu_cmdqv *v, unsigned word)
{
	uint32_t m = 0;

	for (unsigned b = 0; b < 32 && word * 32 + b < v->nvcmdq; b++)
		if (vq_err(&v->vq[word * 32 + b]))
			m |= 1u << b;
	return m;
}

static uint32_t vi_err_map(const struct smmu_cmdqv *v, unsigned word)
{
	uint32_t m = 0;

	for (unsigned q = 0; q < v->nvcmdq; q++) {
		int vi = vq_vintf(v, &v->vq[q]);

		if (vi >= 0 && (unsigned)vi / 32 == word && vq_err(&v->vq[q]))
			m |= 1u << (vi % 32);
	}
	return m;
}

static uint32_t lvcmdq_err_map(const struct smmu_cmdqv *v, unsigned vi, unsigned word)
{
	uint32_t m = 0;

	for (unsigned l = word * 32; l < word * 32 + 32; l++) {
		unsigned q = atomic_load_explicit(&v->lmap[vi * LMAP_PER_VINTF + l],
						  memory_order_relaxed);

		if (q && vq_err(&v->vq[q - 1]))
			m |= 1u << (l % 32);
	}
	return m;
}

static uint32_t vintf_status(const struct smmu_cmdqv *v, unsigned vi)
{
	unsigned n = 0;
	bool err = false;

	for (unsigned l = 0; l < LMAP_PER_VINTF; l++) {
		unsigned q = atomic_load_explicit(&v->lmap[vi * LMAP_PER_VINTF + l],
						  memory_order_relaxed);

		if (q) {
			n++;
			err |= vq_err(&v->vq[q - 1]);
		}
	}
	return (v->vintf_status[vi] & VINTF_STATUS_ENABLED) | (err ? VINTF_STATUS_VCMDQ_ERR : 0) |
	       ((uint32_t)n << VINTF_STATUS_NUM_LVCMDQ_SHIFT);
}

static uint32_t config_page_read(struct smmu *s, uint32_t rel)
{
	struct smmu_cmdqv *v = s->cmdqv;

	if (rel >= 0x1000 && rel < 0x1000 + 0x100 * v->nvintf) {
		unsigned vi = (rel - 0x1000) / 0x100, r = (rel - 0x1000) % 0x100;

		if (r == VINTF_CONFIG)
			return v->vintf_config[vi];
		if (r == VINTF_STATUS)
			return vintf_status(v, vi);
		if (r >= VINTF_LVCMDQ_ERR_MAP && r < VINTF_LVCMDQ_ERR_MAP + 16)
			return lvcmdq_err_map(v, vi, (r - VINTF_LVCMDQ_ERR_MAP) / 4);
		return 0;
	}
	if (rel >= CMDQV_CMDQ_ALLOC(0) && rel < CMDQV_CMDQ_ALLOC(v->nvcmdq))
		return v->vq[(rel - CMDQV_CMDQ_ALLOC(0)) / 4].alloc;
	switch (rel) {
	case CMDQV_CONFIG: return v->config;
	case CMDQV_PARAM:
		return 1u << CMDQV_PARAM_VER_SHIFT | v->log2q << CMDQV_PARAM_NUM_VCMDQ_LOG2_SHIFT |
		       v->log2vi << CMDQV_PARAM_NUM_VINTF_LOG2_SHIFT;
	case CMDQV_STATUS: return v->config & CMDQV_CONFIG_EN;
	case CMDQV_VI_ERR_MAP: return vi_err_map(v, 0);
	case CMDQV_VI_ERR_MAP + 4: return vi_err_map(v, 1);
	case CMDQV_VI_INT_MASK: return v->vi_int_mask[0];
	case CMDQV_VI_INT_MASK + 4: return v->vi_int_mask[1];
	case CMDQV_CMDQ_ERR_MAP: return cmdq_err_map(v, 0);
	case CMDQV_CMDQ_ERR_MAP + 4: return cmdq_err_map(v, 1);
	case CMDQV_CMDQ_ERR_MAP + 8: return cmdq_err_map(v, 2);
	case CMDQV_CMDQ_ERR_MAP + 12: return cmdq_err_map(v, 3);
	default: return 0;
	}
}

/* VINTF CONFIG: VMID and HYP_OWN change only while the VINTF is off (or in the write that
 * turns it on); STATUS.ENABLED follows EN at once. A guest's HYP_OWN is wired to 0. */
static void vintf_write_config(struct smmu *s, unsigned vi, uint32_t val)
{
	struct smmu_cmdqv *v = s->cmdqv;
	uint32_t keep = VINTF_CONFIG_HYP_OWN | (0xFFFFu << VINTF_CONFIG_VMID_SHIFT);

	if (s->cfg.cmdqv_guest)
		val &= ~VINTF_CONFIG_HYP_OWN;
	val &= keep | VINTF_CONFIG_EN;
	if (v->vintf_status[vi] & VINTF_STATUS_ENABLED)
		val = (val & VINTF_CONFIG_EN) | (v->vintf_config[vi] & keep);
	v->vintf_config[vi] = val;
	v->vintf_status[vi] = val & VINTF_CONFIG_EN;
	for (unsigned q = 0; q < v->nvcmdq; q++)
		if (vq_vintf(v, &v->vq[q]) == (int)vi)
			smmu_cmdq_kick(s, 1 + q);
}

static void config_page_write(struct smmu *s, uint32_t rel, uint32_t val)
{
	struct smmu_cmdqv *v = s->cmdqv;

	if (rel >= 0x1000 && rel < 0x1000 + 0x100 * v->nvintf) {
		if ((rel - 0x1000) % 0x100 == VINTF_CONFIG)
			vintf_write_config(s, (rel - 0x1000) / 0x100, val);
		return;
	}
	if (rel >= CMDQV_CMDQ_ALLOC(0) && rel < CMDQV_CMDQ_ALLOC(v->nvcmdq)) {
		struct smmu_vcmdq *vq = &v->vq[(rel - CMDQV_CMDQ_ALLOC(0)) / 4];

		/* A running VCMDQ keeps its place (model choice: the write is ignored). */
		if (!vq->config && !(vq->status & VCMDQ_STATUS_ENABLED)) {
			vq->alloc = val & CMDQV_ALLOC_MASK;
			rebuild_lmap(v);
		}
		return;
	}
	switch (rel) {
	case CMDQV_CONFIG:
		v->config = val & CMDQV_CONFIG_MASK;
		for (unsigned q = 0; q < v->nvcmdq; q++)
			smmu_cmdq_kick(s, 1 + q);
		break;
	case CMDQV_VI_INT_MASK:
	case CMDQV_VI_INT_MASK + 4: {
		unsigned w = (rel - CMDQV_VI_INT_MASK) / 4;
		uint32_t exist = v->nvintf >= 32 * (w + 1) ? ~0u
				 : v->nvintf > 32 * w ? (1u << (v->nvintf - 32 * w)) - 1 : 0;

		v->vi_int_mask[w] = val & exist;
		break;
	}
	default:
		break; /* PARAM, STATUS, the error maps: RO */
	}
}

uint32_t smmu_cmdqv_read(struct smmu *s, uint64_t off)
{
	unsigned reg;
	struct smmu_cmdq *q = smmu_cmdqv_vcmdq_at(s, off, &reg);
	uint64_t rel = off - SMMU_ECMDQ_CP_OFFSET;

	if (q)
		return vcmdq_reg_read(s, q, reg);
	if (rel < CMDQV_VCMDQ_PAGE0)
		return config_page_read(s, (uint32_t)rel);
	return 0;
}

void smmu_cmdqv_write(struct smmu *s, uint64_t off, uint32_t val)
{
	unsigned reg;
	struct smmu_cmdq *q = smmu_cmdqv_vcmdq_at(s, off, &reg);
	uint64_t rel = off - SMMU_ECMDQ_CP_OFFSET;

	if (q)
		vcmdq_reg_write(s, q, reg, val);
	else if (rel < CMDQV_VCMDQ_PAGE0)
		config_page_write(s, (uint32_t)rel, val);
}

/* ---- for hosts ------------------------------------------------------------------------------ */

uint64_t smmu_cmdq_base_reg(const struct smmu *s, unsigned q)
{
	if (!q || q >= s->ncmdq)
		return SMMU_REG_CMDQ_BASE;
	if (s->cmdqv)
		return SMMU_ECMDQ_CP_OFFSET + CMDQV_VCMDQ_PAGE1 + CMDQV_VCMDQ_STRIDE * (q - 1) +
		       VCMDQ_BASE;
	return smmu_ecmdq_offset(s, q - 1) + SMMU_ECMDQ_REG_BASE;
}

int smmu_cmdq_prod_reg_queue(struct smmu *s, uint64_t off)
{
	unsigned reg;
	struct smmu_cmdq *q;

	if (off == SMMU_REG_CMDQ_PROD)
		return 0;
	if (s->cmdqv) {
		q = smmu_cmdqv_vcmdq_at(s, off, &reg);
		return q && reg == VCMDQ_PROD ? (int)q->index : -1;
	}
	return -1; /* ECMDQs: the board computes theirs from smmu_ecmdq_offset */
}
