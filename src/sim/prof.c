/* prof.c — the breakdown: where each simulated CPU's time goes, by function of the DMA path
 * (plat_scope_enter/leave), the way a kernel profiler's call graph shows it. It is not a cost
 * model: it only reads the running thread's clock.
 *
 * Exactness without a hook in every place that moves a clock: a thread's clock only moves
 * while the thread runs its own code (a charge, an access, a line wait, a poll that parks and
 * is woken later), so the time between two scope boundaries belongs entirely to the scope that
 * was innermost in between. Each boundary adds (now - last boundary) to that scope's self time;
 * the thread's start and end are boundaries too, and time outside every scope is the root's
 * ("other"). Hence the self times of all nodes sum exactly to the threads' simulated time, and
 * a node's total (entry to leave) is its self time plus its children's totals.
 *
 * Off until ilab_sim_breakdown_enable: plat_scope_fn stays NULL, and a scope costs one load
 * and a branch, as natively.
 *
 * Only the CPUs' threads are profiled: agents (the SMMU model, timers) and the set-up context
 * are not CPUs of the modelled machine.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sim/sim_internal.h"

static const char *const scope_names[PLAT_SCOPE_NR] = {
	[PLAT_SCOPE_DMA_MAP] = "dma_map",
	[PLAT_SCOPE_DMA_UNMAP] = "dma_unmap",
	[PLAT_SCOPE_DOMAIN_LOOKUP] = "domain_lookup",
	[PLAT_SCOPE_REFCOUNT_GET] = "refcount_get",
	[PLAT_SCOPE_REFCOUNT_PUT] = "refcount_put",
	[PLAT_SCOPE_IOVA_ALLOC] = "iova_alloc",
	[PLAT_SCOPE_IOVA_FREE] = "iova_free",
	[PLAT_SCOPE_IOVA_RBTREE] = "iova_rbtree",
	[PLAT_SCOPE_IOMMU_MAP] = "iommu_map",
	[PLAT_SCOPE_IOMMU_UNMAP] = "iommu_unmap",
	[PLAT_SCOPE_PGTABLE_MAP] = "pgtable_map",
	[PLAT_SCOPE_PGTABLE_UNMAP] = "pgtable_unmap",
	[PLAT_SCOPE_IOTLB_SYNC] = "iotlb_sync",
	[PLAT_SCOPE_TLB_INV_RANGE] = "tlb_inv_range",
	[PLAT_SCOPE_ISSUE_CMDLIST] = "issue_cmdlist",
	[PLAT_SCOPE_CMDQ_CLAIM] = "cmdq_claim",
	[PLAT_SCOPE_CMDQ_WRITE] = "cmdq_write",
	[PLAT_SCOPE_CMDQ_OWNER_WAIT] = "cmdq_owner_wait",
	[PLAT_SCOPE_CMDQ_DOORBELL] = "cmdq_doorbell",
	[PLAT_SCOPE_CMDQ_SYNC_WAIT] = "cmdq_sync_wait",
	[PLAT_SCOPE_FQ_QUEUE] = "fq_queue",
	[PLAT_SCOPE_FQ_FLUSH] = "fq_flush",
	[PLAT_SCOPE_SPIN_LOCK] = "spin_lock",
	[PLAT_SCOPE_WARMUP] = "warmup",
	[PLAT_SCOPE_INTEL_MAP_PAGES] = "intel_iommu_map_pages",
	[PLAT_SCOPE_INTEL_UNMAP_PAGES] = "intel_iommu_unmap_pages",
	[PLAT_SCOPE_INTEL_FLUSH_PSI] = "iommu_flush_iotlb_psi",
	[PLAT_SCOPE_INTEL_FLUSH_ALL] = "intel_flush_iotlb_all",
	[PLAT_SCOPE_QI_FLUSH_IOTLB] = "qi_flush_iotlb",
	[PLAT_SCOPE_QI_FLUSH_DEV_IOTLB] = "qi_flush_dev_iotlb",
	[PLAT_SCOPE_QI_SUBMIT_SYNC] = "qi_submit_sync",
	[PLAT_SCOPE_QI_CHECK_FAULT] = "qi_check_fault",
};

const char *sim_prof_scope_name(int id)
{
	return id >= 0 && id < PLAT_SCOPE_NR ? scope_names[id] : "?";
}

/* Give the time since the last boundary to the innermost open scope. */
static inline void attribute(struct sim_fiber *f)
{
	f->prof_cur->self_ns += f->pc.t - f->prof_mark;
	f->prof_mark = f->pc.t;
}

static void enter(struct ilab_sim *s, struct sim_fiber *f, int id)
{
	struct sim_prof_node *n = f->prof_cur, *c;

	attribute(f);
	c = n->child[id];
	if (!c && f->prof_depth < SIM_PROF_DEPTH) {
		c = calloc(1, sizeof(*c));
		if (c) {
			c->parent = n;
			c->id = id;
			n->child[id] = c;
		}
	}
	/* Too deep, or no memory: the time stays with the parent, and the report says so. */
	if (!c || f->prof_depth >= SIM_PROF_DEPTH) {
		f->prof_skip++;
		s->prof_lost++;
		return;
	}
	c->calls++;
	if (s->trace)
		sim_trace_enter(s, f, id);
	f->prof_enter[f->prof_depth++] = f->pc.t;
	f->prof_cur = c;
}

static void leave(struct ilab_sim *s, struct sim_fiber *f)
{
	struct sim_prof_node *n = f->prof_cur;

	if (f->prof_skip) {
		f->prof_skip--;
		return;
	}
	if (!f->prof_depth) {
		s->prof_unbalanced++;
		return;
	}
	attribute(f);
	n->total_ns += f->pc.t - f->prof_enter[--f->prof_depth];
	f->prof_cur = n->parent;
	if (s->trace)
		sim_trace_leave(s, f);
}

/* plat_scope_fn while a simulator is active. */
void sim_prof_scope(int what)
{
	struct ilab_sim *s = sim_active;
	struct sim_fiber *f;

	if (!s || !plat_sim_cur)
		return;
	f = sim_running();
	if (f->kind != SIM_THREAD || !f->prof_cur)
		return;
	if (what >= 0 && what < PLAT_SCOPE_NR)
		enter(s, f, what);
	else if (what == PLAT_SCOPE_LEAVE)
		leave(s, f);
	else if (what == PLAT_SCOPE_EVENT && !f->prof_skip)
		f->prof_cur->events++;
}

void ilab_sim_breakdown_enable(struct ilab_sim *s)
{
	if (!s)
		return;
	s->prof_on = true;
	if (sim_active == s)
		plat_scope_fn = sim_prof_scope;
}

void sim_prof_thread_begin(struct ilab_sim *s, struct sim_fiber *f)
{
	s->prof_root.id = -1;
	f->prof_cur = &s->prof_root;
	f->prof_mark = f->pc.t;
	f->prof_depth = 0;
	f->prof_skip = 0;
}

/* The thread returned: its last stretch is attributed, and scopes left open (a missing
 * plat_scope_leave) are closed here so that totals stay consistent, and counted. */
void sim_prof_thread_end(struct ilab_sim *s, struct sim_fiber *f)
{
	if (!f->prof_cur)
		return;
	s->prof_unbalanced += f->prof_depth + f->prof_skip;
	f->prof_skip = 0;
	while (f->prof_depth)
		leave(s, f);
	attribute(f);
	f->prof_cur = NULL;
}

static void free_node(struct sim_prof_node *n)
{
	for (unsigned i = 0; i < PLAT_SCOPE_NR; i++)
		if (n->child[i]) {
			free_node(n->child[i]);
			free(n->child[i]);
		}
}

void sim_prof_fini(struct ilab_sim *s)
{
	free_node(&s->prof_root);
	memset(&s->prof_root, 0, sizeof(s->prof_root));
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void put(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

struct claim_sums {
	uint64_t claims, attempts;
};

/* A node and its subtree: children by name (keys are sorted when dumped). */
static json_t *node_json(const struct sim_prof_node *n, struct claim_sums *cs, uint64_t *self)
{
	json_t *o = json_object(), *kids = json_object();

	put(o, "self_ns", n->self_ns);
	put(o, "total_ns", n->total_ns);
	put(o, "calls", n->calls);
	put(o, "events", n->events);
	*self += n->self_ns;
	if (n->id == PLAT_SCOPE_CMDQ_CLAIM) {
		cs->claims += n->calls;
		cs->attempts += n->events;
	}
	for (unsigned i = 0; i < PLAT_SCOPE_NR; i++)
		if (n->child[i])
			json_object_set_new(kids, scope_names[i], node_json(n->child[i], cs, self));
	json_object_set_new(o, "children", kids);
	return o;
}

json_t *sim_prof_json(const struct ilab_sim *s)
{
	json_t *o = json_object(), *fns = json_object(), *other = json_object();
	struct claim_sums cs = { 0, 0 };
	uint64_t self = s->prof_root.self_ns;

	for (unsigned i = 0; i < PLAT_SCOPE_NR; i++)
		if (s->prof_root.child[i])
			json_object_set_new(fns, scope_names[i],
					    node_json(s->prof_root.child[i], &cs, &self));
	/* time outside every scope: a top-level entry of its own, as perf's unresolved samples */
	put(other, "self_ns", s->prof_root.self_ns);
	put(other, "total_ns", s->prof_root.self_ns);
	put(other, "calls", 0);
	put(other, "events", 0);
	json_object_set_new(other, "children", json_object());
	json_object_set_new(fns, "other", other);
	json_object_set_new(o, "functions", fns);
	put(o, "cpu_ns", self);
	put(o, "claims", cs.claims);
	/* integers only, as everywhere in the statistics: attempts per claim is the quotient */
	put(o, "claim_attempts", cs.attempts);
	put(o, "unbalanced", s->prof_unbalanced);
	put(o, "lost", s->prof_lost);
	return o;
}
