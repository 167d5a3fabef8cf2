/* intel_rig.h — a board-free rig for the Intel VT-d driver tests: plat on the a100-2node
 * topology (native), a 2-node ilab_mem, up to four VT-d models (vtd_create) whose host
 * callbacks read and write that memory, each behind a plat_mmio window that processes the
 * invalidation queue synchronously after every register write (so a wait descriptor's status
 * is written before the IQT write returns, and the queue resumes as soon as IQE is cleared),
 * a log of the descriptors each model executed, device-TLB invalidations and fault events,
 * and devices. Not cmocka-dependent; header-only so each test stays self-contained. Spec
 * constants below are typed in from the VT-d specification (rev. 4.x), not the driver's.
 */
#ifndef ILAB_TESTS_INTEL_RIG_H
#define ILAB_TESTS_INTEL_RIG_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/intel_iommu_drv.h"
#include "iommulab/iommu.h"
#include "iommulab/mem.h"
#include "iommulab/plat.h"
#include "iommulab/topo.h"
#include "iommulab/vtd.h"

#define IR_MAX_UNITS 4
#define IR_MAX_DEVS 8
#define IR_LOG 4096

/* VT-d register offsets and fields (§10.4) and descriptor fields (§6.5.2) */
#define IR_GSTS 0x1c
#define IR_RTADDR 0x20
#define IR_FSTS 0x34
#define IR_FECTL 0x38
#define IR_FEDATA 0x3c
#define IR_FEADDR 0x40
#define IR_IQA 0x90
#define IR_GSTS_TES (1u << 31)
#define IR_GSTS_RTPS (1u << 30)
#define IR_GSTS_QIES (1u << 26)
#define IR_FSTS_PPF 0x2u
#define IR_FSTS_IQE 0x10u
#define IR_DESC_TYPE(qw0) ((qw0) & 0xf)
#define IR_DESC_G(qw0) (((qw0) >> 4) & 3)       /* context-cache and IOTLB granularity */
#define IR_DESC_DID(qw0) (((qw0) >> 16) & 0xffff)
#define IR_IOTLB_AM(qw1) ((qw1) & 0x3f)
#define IR_IOTLB_IH(qw1) (((qw1) >> 6) & 1)
#define IR_IOTLB_ADDR(qw1) ((qw1) & ~0xfffull)

struct ir_desc {
	uint64_t qw0, qw1;
};

struct ir_devtlb {
	uint16_t sid;
	unsigned qdep, size_log2;
	uint64_t addr;
};

struct ir_unit {
	struct rig *rig;
	struct vtd *v;
	struct plat_mmio mmio;
	struct ilab_iommu *iommu;
	int node;
	char name[16];
	unsigned nlog;                 /* executed descriptors (desc_exec), under the model lock */
	struct ir_desc log[IR_LOG];
	unsigned ndevtlb;
	struct ir_devtlb devtlb[64];
	unsigned fault_msis;
	uint64_t fault_msi_addr;
	uint32_t fault_msi_data;
};

struct rig {
	struct ilab_topo *topo;
	struct ilab_mem *mem;
	unsigned nunits;
	struct ir_unit units[IR_MAX_UNITS];
	struct ilab_dev devs[IR_MAX_DEVS];
	char err[200];
};

static inline void *ir_va(struct rig *r, uint64_t pa, size_t len)
{
	return ilab_mem_va(r->mem, pa, len);
}

/* Naturally aligned 4- and 8-byte accesses are atomic (the driver writes PTEs and polls the
 * status words with atomics: TSan must see both sides as atomics). */
static inline int ir_mem_read(void *ctx, uint64_t pa, void *buf, size_t len)
{
	struct ir_unit *u = ctx;
	void *va = ir_va(u->rig, pa, len);

	if (!va)
		return -1;
	if (len == 8 && !(pa & 7))
		*(uint64_t *)buf = __atomic_load_n((uint64_t *)va, __ATOMIC_ACQUIRE);
	else if (len == 16 && !(pa & 7)) {
		((uint64_t *)buf)[0] = __atomic_load_n((uint64_t *)va, __ATOMIC_ACQUIRE);
		((uint64_t *)buf)[1] = __atomic_load_n((uint64_t *)va + 1, __ATOMIC_ACQUIRE);
	} else if (len == 4 && !(pa & 3))
		*(uint32_t *)buf = __atomic_load_n((uint32_t *)va, __ATOMIC_ACQUIRE);
	else
		memcpy(buf, va, len);
	return 0;
}

static inline int ir_mem_write(void *ctx, uint64_t pa, const void *buf, size_t len)
{
	struct ir_unit *u = ctx;
	void *va = ir_va(u->rig, pa, len);

	if (!va)
		return -1;
	if (len == 8 && !(pa & 7))
		__atomic_store_n((uint64_t *)va, *(const uint64_t *)buf, __ATOMIC_RELEASE);
	else if (len == 4 && !(pa & 3))
		__atomic_store_n((uint32_t *)va, *(const uint32_t *)buf, __ATOMIC_RELEASE);
	else
		memcpy(va, buf, len);
	return 0;
}

static inline void ir_msi(void *ctx, enum vtd_event ev, uint64_t addr, uint32_t data)
{
	struct ir_unit *u = ctx;

	if (ev == VTD_EVENT_FAULT) {
		u->fault_msis++;
		u->fault_msi_addr = addr;
		u->fault_msi_data = data;
	}
}

static inline void ir_devtlb_inv(void *ctx, uint16_t sid, uint16_t pfsid, unsigned qdep,
				 uint64_t addr, unsigned size_log2)
{
	struct ir_unit *u = ctx;

	(void)pfsid;
	if (u->ndevtlb < 64)
		u->devtlb[u->ndevtlb++] = (struct ir_devtlb){ sid, qdep, size_log2, addr };
}

static inline void ir_desc_exec(void *ctx, uint64_t qw0, uint64_t qw1)
{
	struct ir_unit *u = ctx;

	if (u->nlog < IR_LOG)
		u->log[u->nlog++] = (struct ir_desc){ qw0, qw1 };
}

static const struct vtd_host_ops ir_host_ops = {
	.mem_read = ir_mem_read,
	.mem_write = ir_mem_write,
	.msi = ir_msi,
	.devtlb_inv = ir_devtlb_inv,
	.desc_exec = ir_desc_exec,
};

static inline uint64_t ir_mmio_read(void *ctx, uint64_t off, unsigned size)
{
	return vtd_mmio_read(((struct ir_unit *)ctx)->v, off, size);
}

/* The unit consumes its queue as soon as software writes a register (IQT, or FSTS clearing
 * IQE): synchronous, so tests need no agent. */
static inline void ir_mmio_write(void *ctx, uint64_t off, uint64_t val, unsigned size)
{
	struct ir_unit *u = ctx;

	vtd_mmio_write(u->v, off, val, size);
	vtd_process_queue(u->v, 1u << 16);
}

static const struct plat_mmio_ops ir_mmio_ops = { .read = ir_mmio_read, .write = ir_mmio_write };

/* The rig of the running test, so that a teardown can release it after a failed assertion
 * (which leaves the test body by longjmp). The rig is on the heap (rig_new), never in the
 * body's stack frame: that frame is gone when the teardown runs, and the models' host
 * callbacks and MMIO windows point into the rig. */
static struct rig *ir_current;

/* A new rig in *out: plat + memory (two nodes of 1 GiB: node n's PAs are
 * [(n + 1) GiB, (n + 2) GiB)). On an error the rig is still returned, partly set up, for
 * rig_fini (or rig_teardown); r->err says why. */
static inline int rig_new(struct rig **out)
{
	struct plat_config pc = { .engine = PLAT_ENGINE_NATIVE };
	struct ilab_mem_config mc = { .nr_nodes = 2, .node_bytes = 1ull << 30 };
	struct rig *r = calloc(1, sizeof(*r));
	int rc;

	*out = r;
	if (!r)
		return -ENOMEM;
	ir_current = r;
	rc = ilab_topo_load("a100-2node", &r->topo, r->err, sizeof(r->err));
	if (rc)
		return rc;
	pc.topo = r->topo;
	rc = plat_init(&pc);
	if (rc) {
		snprintf(r->err, sizeof(r->err), "plat_init %d", rc);
		return rc;
	}
	rc = ilab_mem_create(&mc, &r->mem);
	if (rc)
		snprintf(r->err, sizeof(r->err), "mem %d: %s", rc, ilab_mem_strerror());
	return rc;
}

/* A VT-d model on `node` (cfg NULL: vtd_config_default, thread-safe) without a driver. */
static inline struct ir_unit *rig_add_model(struct rig *r, int node, const struct vtd_config *cfg)
{
	struct ir_unit *u = &r->units[r->nunits];
	struct vtd_config c;
	const char *why = NULL;

	if (r->nunits >= IR_MAX_UNITS)
		return NULL;
	if (cfg)
		c = *cfg;
	else
		vtd_config_default(&c);
	c.thread_safe = true;
	u->rig = r;
	u->node = node;
	snprintf(u->name, sizeof(u->name), "dmar%u", r->nunits);
	if (vtd_create(&u->v, &c, &ir_host_ops, u, &why)) {
		snprintf(r->err, sizeof(r->err), "vtd_create: %s", why ? why : "?");
		return NULL;
	}
	u->mmio = (struct plat_mmio){ .ops = &ir_mmio_ops, .ctx = u, .node = node, .name = u->name };
	r->nunits++;
	return u;
}

/* A model and the driver probed on it. */
static inline struct ir_unit *rig_add_unit(struct rig *r, int node, const struct vtd_config *cfg,
					   const struct ilab_intel_iommu_opts *opts)
{
	struct ir_unit *u = rig_add_model(r, node, cfg);
	int rc;

	if (!u)
		return NULL;
	rc = ilab_intel_iommu_probe(&u->mmio, r->mem, node, opts, &u->iommu);
	if (rc) {
		snprintf(r->err, sizeof(r->err), "probe %d: %s", rc, ilab_intel_iommu_strerror());
		return NULL;
	}
	return u;
}

/* Device i behind unit u with requester id sid, on `node`. Not probed. */
static inline struct ilab_dev *rig_dev(struct rig *r, unsigned i, struct ir_unit *u, uint16_t sid,
				       int node)
{
	struct ilab_dev *d = &r->devs[i];

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "dev%u", i);
	d->node = node;
	d->sid = sid;
	d->dma_bits = 48;
	d->iommu = u->iommu;
	d->pci = true;
	return d;
}

/* Release everything the rig holds, a failed probe's model included, and the rig itself. */
static inline void rig_fini(struct rig *r)
{
	if (!r)
		return;
	if (ir_current == r)
		ir_current = NULL;
	for (unsigned i = 0; i < IR_MAX_DEVS; i++)
		if (r->devs[i].group)
			ilab_iommu_release_device(&r->devs[i]);
	for (unsigned i = 0; i < r->nunits; i++) {
		if (r->units[i].iommu)
			ilab_intel_iommu_remove(r->units[i].iommu);
		vtd_destroy(r->units[i].v);
	}
	ilab_mem_destroy(r->mem);
	plat_fini();
	ilab_topo_free(r->topo);
	free(r);
}

/* cmocka teardown: release the rig a failed test left behind. */
static inline int rig_teardown(void **state)
{
	(void)state;
	if (ir_current)
		rig_fini(ir_current);
	return 0;
}

/* The model's view: translate one request. */
static inline struct vtd_txn_rsp rig_tr(struct ir_unit *u, uint16_t sid, uint64_t iova, bool write)
{
	struct vtd_txn_req q = { .sid = sid, .iova = iova, .write = write };
	struct vtd_txn_rsp rsp;

	vtd_translate(u->v, &q, &rsp);
	return rsp;
}

/* Count logged descriptors of a type (and granularity, g < 0: any) since index `from`. */
static inline unsigned rig_count(const struct ir_unit *u, unsigned from, unsigned type, int g)
{
	unsigned n = 0;

	for (unsigned i = from; i < u->nlog; i++)
		if (IR_DESC_TYPE(u->log[i].qw0) == type && (g < 0 || IR_DESC_G(u->log[i].qw0) == (unsigned)g))
			n++;
	return n;
}

/* The first logged descriptor of a type since `from`, or NULL. */
static inline const struct ir_desc *rig_find(const struct ir_unit *u, unsigned from, unsigned type)
{
	for (unsigned i = from; i < u->nlog; i++)
		if (IR_DESC_TYPE(u->log[i].qw0) == type)
			return &u->log[i];
	return NULL;
}

#endif
