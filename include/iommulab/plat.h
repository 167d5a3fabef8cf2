/* plat.h — the platform layer: the only primitives "kernel" code (drivers, iommu core, vfio,
 * workloads) may use for threads, time, shared memory words, locks, RCU, MMIO and polling.
 * It is not a general OS abstraction: it holds exactly what the DMA path needs, shaped so that
 * the simulation backend (src/sim) can charge virtual time for each call without any caller
 * changing. Two backends: native (real threads, real atomics) and sim (fibers, virtual time).
 *
 * Rules for callers:
 *  - A word that several CPUs touch (lock, refcount, queue prod/cons, bitmap, counter) is a
 *    plat_word32/plat_word64 and is accessed only through plat_load/store/cmpxchg/fetch_*:
 *    the simulator tracks its cache line (owner, transfer latency by NUMA distance,
 *    serialisation of contending atomics).
 *  - Waiting is plat_poll() with a predicate, never an open-coded loop: the simulator parks
 *    the waiting CPU until the watched word changes instead of spinning.
 *  - Pure computation that the simulator should see is charged with plat_charge_ns().
 *  - Accesses to simulated physical memory go through src/mem accessors, which charge
 *    plat_mem_access() by the memory's home node.
 */
#ifndef IOMMULAB_PLAT_H
#define IOMMULAB_PLAT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLAT_CACHELINE 64

#if defined(__x86_64__) || defined(__i386__)
#define plat_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define plat_cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define plat_cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

/* ---- tracked shared words ------------------------------------------------------------------ */

typedef struct { _Atomic uint32_t v; } plat_word32;
typedef struct { _Atomic uint64_t v; } plat_word64;

/* Kinds of access reported to the simulator. */
enum plat_access {
	PLAT_ACC_READ = 0,  /* load: needs the line shared */
	PLAT_ACC_WRITE = 1, /* store: needs the line exclusive */
	PLAT_ACC_RMW = 2,   /* atomic read-modify-write: exclusive, serialised */
};

/* ---- polling ------------------------------------------------------------------------------- */

/* A poll predicate: true when the value read at the watched address ends the wait. */
typedef bool (*plat_poll_pred)(uint64_t value, void *arg);

/* ---- MMIO ---------------------------------------------------------------------------------- */

/* A device's register window, as seen by a CPU. The device implements read/write; plat adds
 * the CPU→device cost (sim) and nothing else (native). */
struct plat_mmio_ops {
	uint64_t (*read)(void *ctx, uint64_t offset, unsigned size);
	void (*write)(void *ctx, uint64_t offset, uint64_t value, unsigned size);
};

struct plat_mmio {
	const struct plat_mmio_ops *ops;
	void *ctx;
	int node;      /* NUMA node the device sits on (MMIO latency depends on it) */
	const char *name;
};

/* ---- backend interface (implemented by src/sim; NULL when native) -------------------------- */

/* Thread and agent bodies (see plat_run_threads / plat_agent_start below). */
typedef void (*plat_thread_fn)(unsigned idx, void *arg);
struct plat_agent;
typedef void (*plat_agent_fn)(struct plat_agent *agent, void *arg);

struct plat_sim_ops {
	void (*access)(const void *addr, enum plat_access kind);
	void (*rmw_failed)(const void *addr); /* a cmpxchg lost: the simulator counts a retry */
	uint64_t (*now_ns)(void);
	void (*charge_ns)(uint64_t ns);
	void (*delay_ns)(uint64_t ns);
	int (*cpu_id)(void);
	int (*poll)(const void *addr, unsigned size, plat_poll_pred pred, void *arg,
		    uint64_t timeout_ns);
	void (*wrote)(const void *addr);
	void (*mem_access)(int home_node, size_t bytes, bool write);
	/* An access to simulated memory by host address, charged line by line (plat_mem_touch). */
	void (*mem_touch)(const void *va, size_t bytes, bool write);
	void (*mmio)(const struct plat_mmio *m, bool write);
	void (*track)(const void *addr, const char *name);
	void (*yield)(void);
	/* Threads and agents in simulation (added by src/sim): plat_run_threads,
	 * plat_agent_start/should_stop/stop call these when plat_sim is set. */
	int (*run_threads)(unsigned n, const int *cpus, plat_thread_fn fn, void *arg);
	int (*agent_start)(const char *name, int node, plat_agent_fn fn, void *arg,
			   struct plat_agent **out);
	bool (*agent_should_stop)(const struct plat_agent *agent);
	void (*agent_stop)(struct plat_agent *agent, const void *wake_addr);
	void (*agent_wake)(struct plat_agent *agent); /* optional: plat_agent_wake */
	/* The running CPU's or agent's own spinlock queue node (PLAT_LOCK_NODE_BYTES, one cache
	 * line at a fixed address per simulated context): a node on the stack would make the
	 * simulated results depend on the compiler's frame layout. */
	void *(*lock_node)(void);
	/* plat_zalloc / plat_percpu_alloc just returned this host memory for a new object: its
	 * cache lines start without history, whatever the host allocator reused (may be NULL). */
	void (*fresh)(const void *addr, size_t bytes);
};
#define PLAT_LOCK_NODE_BYTES 64

/* The active simulator, or NULL when running natively. Set by plat_init(). */
extern const struct plat_sim_ops *plat_sim;

/* The running simulated CPU's (or agent's) clock and identity, kept current by the simulator
 * at every context switch, so that the calls that only read or move it (plat_now_ns,
 * plat_charge_ns, plat_delay_ns, plat_cpu_id: ~40 per simulated DMA map+unmap) are a load and
 * an add instead of an indirect call. NULL when the backend does not provide it: those calls
 * then go through plat_sim's hooks. Only meaningful while plat_sim is set. */
struct plat_sim_clock {
	uint64_t t;           /* virtual clock, ns */
	uint64_t *charged_ns; /* statistics: where plat_charge_ns is counted */
	uint64_t *delayed_ns; /* statistics: where plat_delay_ns / plat_sleep_ns is counted */
	int cpu;              /* plat_cpu_id(): the simulated CPU, -1 outside CPU threads */
};
extern struct plat_sim_clock *plat_sim_cur;

#define plat_unlikely(x) __builtin_expect(!!(x), 0)

/* ---- engine set-up ------------------------------------------------------------------------- */

enum plat_engine { PLAT_ENGINE_NATIVE = 0, PLAT_ENGINE_SIM = 1 };

struct ilab_topo;

struct plat_config {
	enum plat_engine engine;
	const struct ilab_topo *topo; /* the machine whose CPUs plat exposes; NULL = this host */
	bool bind_threads;            /* native: pin each thread to a host PU (hwloc) */
	const struct plat_sim_ops *sim; /* the sim backend's ops, when engine == SIM */
};

/* Initialise plat for one experiment. Returns 0 or a negative errno. Not thread-safe: call
 * before any plat thread runs. plat_fini() undoes it. */
int plat_init(const struct plat_config *cfg);
void plat_fini(void);
enum plat_engine plat_engine_kind(void);

/* ---- CPU identity and threads -------------------------------------------------------------- */

/* Number of CPUs of the modelled machine (the topology), and their NUMA nodes. */
unsigned plat_cpu_count(void);
unsigned plat_node_count(void);
int plat_cpu_node(unsigned cpu);
/* First CPU of a node, or -1; and the i-th CPU of a node. */
int plat_node_cpu(unsigned node, unsigned i);
unsigned plat_node_cpu_count(unsigned node);

/* The calling thread's CPU in the modelled machine; -1 outside plat threads. */
int plat_native_cpu_id(void);
static inline int plat_cpu_id(void)
{
	if (plat_unlikely(plat_sim))
		return plat_sim_cur ? plat_sim_cur->cpu : plat_sim->cpu_id();
	return plat_native_cpu_id();
}
static inline int plat_this_node(void)
{
	int cpu = plat_cpu_id();
	return cpu < 0 ? 0 : plat_cpu_node((unsigned)cpu);
}

/* Run fn(i, arg) on n threads, thread i being CPU cpus[i] of the modelled machine; returns
 * when all have returned. Natively, each thread is pinned to a host PU when bind_threads is
 * set (modelled CPU i maps to host PU i % host PUs). Returns 0 or a negative errno. */
int plat_run_threads(unsigned n, const int *cpus, plat_thread_fn fn, void *arg);

/* A background agent (the SMMU model's consumer, a device): fn runs until it returns; it
 * should wait for work with plat_poll() and return when plat_agent_should_stop() is true.
 * Natively it is a thread; in simulation, an agent of the scheduler on the given node. */
int plat_agent_start(const char *name, int node, plat_agent_fn fn, void *arg,
		     struct plat_agent **out);
bool plat_agent_should_stop(const struct plat_agent *agent);
/* Ask the agent to stop and wait for it to return. A plat_poll() in the agent then returns
 * -ETIMEDOUT unless its predicate holds (natively and in simulation alike), so the agent gets
 * back to its loop to see plat_agent_should_stop(); wake_addr (may be NULL), the word it
 * polls, is also reported written in simulation so that a parked agent re-checks at once. */
void plat_agent_stop(struct plat_agent *agent, const void *wake_addr);
/* A signal between two agents of one device that is no memory (a unit handing work to
 * another): an agent parked in plat_poll re-checks its predicate now, at the caller's time,
 * and its re-read of the word is its own line's (the caller stored the word plainly, without
 * plat_wrote, so no line transfer is charged). Natively a no-op: a native poll spins. */
void plat_agent_wake(struct plat_agent *agent);

/* ---- kernel-side objects ------------------------------------------------------------------- */

/* Zeroed memory aligned to a cache line (kzalloc's role); release with free(). Objects that
 * hold tracked words must come from here, so that line sharing follows the struct layout. */
void *plat_zalloc(size_t size);
void *plat_zalloc_array(size_t n, size_t size);

/* ---- per-CPU data -------------------------------------------------------------------------- */

/* An array of plat_cpu_count() zeroed elements, each on its own cache line(s). */
void *plat_percpu_alloc(size_t elem_size);
void plat_percpu_free(void *base);
size_t plat_percpu_stride(const void *base); /* 0 for NULL */
/* CPU cpu's element of base, which must come from plat_percpu_alloc (not NULL): the stride
 * is read from the header in the cache line before the first element (percpu.c), inline,
 * as every per-CPU statistic and cache access on the fast path needs it. */
static inline void *plat_percpu_ptr(void *base, unsigned cpu)
{
	size_t stride = *(const size_t *)(const void *)((const char *)base - PLAT_CACHELINE);

	return (char *)base + (size_t)cpu * stride;
}
/* This CPU's element; outside plat threads, CPU 0's. */
static inline void *plat_this_cpu_ptr(void *base)
{
	int cpu = plat_cpu_id();
	return plat_percpu_ptr(base, cpu < 0 ? 0u : (unsigned)cpu);
}

/* ---- time ---------------------------------------------------------------------------------- */

uint64_t plat_native_now_ns(void);
/* Monotonic ns: host clock natively, this CPU's virtual clock in simulation. */
static inline uint64_t plat_now_ns(void)
{
	if (plat_unlikely(plat_sim))
		return plat_sim_cur ? plat_sim_cur->t : plat_sim->now_ns();
	return plat_native_now_ns();
}
/* Move the running context's virtual clock by ns, counted as computation (charged) or as
 * waiting (delayed); through the backend's hook when it does not keep plat_sim_cur. */
static inline void plat_sim__advance(uint64_t ns, bool delay)
{
	struct plat_sim_clock *c = plat_sim_cur;

	if (c) {
		c->t += ns;
		*(delay ? c->delayed_ns : c->charged_ns) += ns;
	} else {
		(delay ? plat_sim->delay_ns : plat_sim->charge_ns)(ns);
	}
}
/* Charge pure computation (simulation); no-op natively, where real code takes real time. */
static inline void plat_charge_ns(uint64_t ns)
{
	if (plat_unlikely(plat_sim))
		plat_sim__advance(ns, false);
}
/* Let time pass (a device's transfer time, a benchmark's -x delay): natively a busy-wait. */
void plat_native_delay_ns(uint64_t ns);
static inline void plat_sim__delay(uint64_t ns)
{
	plat_sim__advance(ns, true);
}
static inline void plat_delay_ns(uint64_t ns)
{
	if (plat_unlikely(plat_sim))
		plat_sim__delay(ns);
	else
		plat_native_delay_ns(ns);
}

/* Give the CPU away for about ns (a timer's period, an idle agent): natively the thread
 * sleeps (nanosleep), so it costs the host nothing; in simulation virtual time passes as for
 * plat_delay_ns. Use plat_delay_ns for short device/compute times, this for long waits. */
void plat_native_sleep_ns(uint64_t ns);
static inline void plat_sleep_ns(uint64_t ns)
{
	if (plat_unlikely(plat_sim))
		plat_sim__delay(ns);
	else
		plat_native_sleep_ns(ns);
}

/* ---- tracked accesses ---------------------------------------------------------------------- */

static inline void plat__acc(const void *a, enum plat_access k)
{
	if (plat_unlikely(plat_sim))
		plat_sim->access(a, k);
}

/* Give a tracked word a name for the simulator's per-line statistics (no-op natively). */
static inline void plat_track(const void *addr, const char *name)
{
	if (plat_unlikely(plat_sim))
		plat_sim->track(addr, name);
}

#define PLAT_WORD_OPS(bits)                                                                   \
	static inline uint##bits##_t plat_load##bits(plat_word##bits *w)                      \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_READ);                                                  \
		return atomic_load_explicit(&w->v, memory_order_acquire);                    \
	}                                                                                     \
	static inline uint##bits##_t plat_load_relaxed##bits(plat_word##bits *w)              \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_READ);                                                  \
		return atomic_load_explicit(&w->v, memory_order_relaxed);                    \
	}                                                                                     \
	static inline void plat_store##bits(plat_word##bits *w, uint##bits##_t v)             \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_WRITE);                                                 \
		atomic_store_explicit(&w->v, v, memory_order_release);                       \
	}                                                                                     \
	static inline bool plat_cmpxchg##bits(plat_word##bits *w, uint##bits##_t *expected,   \
					      uint##bits##_t desired)                         \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_RMW);                                                   \
		bool ok = atomic_compare_exchange_strong_explicit(                            \
			&w->v, expected, desired, memory_order_acq_rel, memory_order_acquire); \
		if (plat_unlikely(plat_sim) && !ok)                                           \
			plat_sim->rmw_failed(w);                                              \
		return ok;                                                                    \
	}                                                                                     \
	static inline uint##bits##_t plat_fetch_add##bits(plat_word##bits *w,                 \
							  uint##bits##_t v)                   \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_RMW);                                                   \
		return atomic_fetch_add_explicit(&w->v, v, memory_order_acq_rel);            \
	}                                                                                     \
	static inline uint##bits##_t plat_fetch_sub##bits(plat_word##bits *w,                 \
							  uint##bits##_t v)                   \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_RMW);                                                   \
		return atomic_fetch_sub_explicit(&w->v, v, memory_order_acq_rel);            \
	}                                                                                     \
	static inline uint##bits##_t plat_fetch_or##bits(plat_word##bits *w,                  \
							 uint##bits##_t v)                    \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_RMW);                                                   \
		return atomic_fetch_or_explicit(&w->v, v, memory_order_acq_rel);             \
	}                                                                                     \
	static inline uint##bits##_t plat_fetch_and##bits(plat_word##bits *w,                 \
							  uint##bits##_t v)                   \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_RMW);                                                   \
		return atomic_fetch_and_explicit(&w->v, v, memory_order_acq_rel);            \
	}                                                                                     \
	/* Clear bits with a store-release. Linux releases a queued spinlock by storing its  \
	 * locked byte (smp_store_release), a store; here the queue's tail shares the word, \
	 * so the host clears the bit atomically while the simulator charges the store. */  \
	static inline void plat_release_and##bits(plat_word##bits *w, uint##bits##_t v)      \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_WRITE);                                                 \
		atomic_fetch_and_explicit(&w->v, v, memory_order_release);                   \
	}                                                                                     \
	static inline uint##bits##_t plat_xchg##bits(plat_word##bits *w, uint##bits##_t v)    \
	{                                                                                     \
		plat__acc(w, PLAT_ACC_RMW);                                                   \
		return atomic_exchange_explicit(&w->v, v, memory_order_acq_rel);             \
	}

PLAT_WORD_OPS(32)
PLAT_WORD_OPS(64)
#undef PLAT_WORD_OPS

/* ---- statistics counters ------------------------------------------------------------------- */

/* iommulab's own counters, which Linux does not have: a word written by one CPU at a time
 * (its per-CPU slot, or the holder of a lock) and read when statistics are gathered. A relaxed
 * load and store natively; in simulation they are not reported, so they cost no virtual time
 * and move no modelled cache line: counting does not change what is counted. */
static inline void plat_stat_add64(plat_word64 *w, uint64_t v)
{
	atomic_store_explicit(&w->v, atomic_load_explicit(&w->v, memory_order_relaxed) + v,
			      memory_order_relaxed);
}
static inline uint64_t plat_stat_read64(plat_word64 *w)
{
	return atomic_load_explicit(&w->v, memory_order_relaxed);
}
static inline void plat_stat_set64(plat_word64 *w, uint64_t v)
{
	atomic_store_explicit(&w->v, v, memory_order_relaxed);
}

/* Full memory barrier between plain stores (e.g. PTEs) and a later doorbell. */
static inline void plat_mb(void)
{
#ifdef ILAB_TSAN
	/* TSan does not model fences (GCC refuses them under -fsanitize=thread); a seq_cst
	 * read-modify-write gives the same ordering in a form it understands. */
	static _Atomic unsigned plat_mb_word;
	atomic_fetch_add_explicit(&plat_mb_word, 0, memory_order_seq_cst);
#else
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* ---- polling ------------------------------------------------------------------------------- */

/* Wait until pred(*addr) is true; addr is a naturally aligned 4- or 8-byte word (size 4 or 8)
 * written by another CPU or by a device. timeout_ns = 0 waits forever. Returns 0, -ETIMEDOUT
 * (the timeout passed, or the caller is an agent asked to stop: see plat_agent_stop), or
 * -EINVAL for a malformed request (NULL address or predicate, size not 4 or 8, misaligned);
 * in simulation also the simulator's failure when the wait can never end (-EDEADLK) or passes
 * its time limit (-ETIME).
 * Natively: spin with cpu_relax, backing off to sched_yield (the host has few cores).
 * Simulated: the CPU parks until the word is written (see plat_wrote). */
int plat_native_poll(const void *addr, unsigned size, plat_poll_pred pred, void *arg,
		     uint64_t timeout_ns);
static inline int plat_poll(const void *addr, unsigned size, plat_poll_pred pred, void *arg,
			    uint64_t timeout_ns)
{
	if (plat_unlikely(plat_sim))
		return plat_sim->poll(addr, size, pred, arg, timeout_ns);
	return plat_native_poll(addr, size, pred, arg, timeout_ns);
}
/* Code that writes a polled word other than through plat_store/plat_fetch_* (a device model
 * writing memory, an MMIO register) calls this so simulated pollers of addr re-check. */
static inline void plat_wrote(const void *addr)
{
	if (plat_unlikely(plat_sim))
		plat_sim->wrote(addr);
}
/* Give the host CPU away (natively sched_yield; in simulation, a scheduling point). */
void plat_native_yield(void);
static inline void plat_yield(void)
{
	if (plat_unlikely(plat_sim))
		plat_sim->yield();
	else
		plat_native_yield();
}

/* ---- simulated physical memory and MMIO costs ---------------------------------------------- */

/* Charge an access of `bytes` by the current agent to memory whose home is home_node. */
static inline void plat_mem_access(int home_node, size_t bytes, bool write)
{
	if (plat_unlikely(plat_sim))
		plat_sim->mem_access(home_node, bytes, write);
}

/* Charge an access to simulated memory at host address va (what a driver writes through its
 * linear map: PTEs, queue entries) line by line, from where each line's copies are: the
 * simulator then knows which lines this CPU already holds. No-op natively. */
static inline void plat_mem_touch(const void *va, size_t bytes, bool write)
{
	if (plat_unlikely(plat_sim))
		plat_sim->mem_touch(va, bytes, write);
}

/* ---- named compute charges ----------------------------------------------------------------- */

/* Work of driver and core code that the simulator should see, by name: the machine profile's
 * compute: section gives each one's ns (the simulator fills plat_charge_table when it is
 * activated), so a charge is an array read. Natively: one predictable branch, no charge. */
enum plat_charge {
	PLAT_CHARGE_IOVA_ALLOC,         /* compute: iova_alloc_ns */
	PLAT_CHARGE_IOVA_FREE,          /* iova_free_ns */
	PLAT_CHARGE_PTE_WRITE,          /* pte_write_ns (per PTE built and stored) */
	PLAT_CHARGE_CMD_BUILD,          /* cmd_build_ns (per 16-byte command) */
	PLAT_CHARGE_PGTABLE_WALK_LEVEL, /* pgtable_walk_level_ns (per level walked) */
	PLAT_CHARGE_DMA_MAP,            /* dma_map_ns (dma-iommu map bookkeeping) */
	PLAT_CHARGE_DMA_UNMAP,          /* dma_unmap_ns (dma-iommu unmap bookkeeping) */
	PLAT_CHARGE_IOMMU_MAP,          /* iommu_map_ns (core map: size split, checks) */
	PLAT_CHARGE_IOMMU_UNMAP,        /* iommu_unmap_ns (core unmap + gather) */
	PLAT_CHARGE_IOVA_RBTREE,        /* iova_rbtree_ns (one IOVA tree insert or erase, lock held) */
	PLAT_CHARGE_THREAD_WAKE,        /* thread_wake_ns (a tool waking one of its threads) */
	PLAT_CHARGE_DMA_DIRECT_MAP,     /* dma_direct_map_ns (dma-direct map: passthrough) */
	PLAT_CHARGE_DMA_DIRECT_UNMAP,   /* dma_direct_unmap_ns (dma-direct unmap) */
	PLAT_CHARGE_NR
};
extern uint64_t plat_charge_table[PLAT_CHARGE_NR];
static inline void plat_charge(enum plat_charge c)
{
	if (plat_unlikely(plat_sim))
		plat_charge_ns(plat_charge_table[c]);
}
static inline void plat_charge_n(enum plat_charge c, uint64_t n)
{
	if (plat_unlikely(plat_sim))
		plat_charge_ns(plat_charge_table[c] * n);
}

/* ---- profiling scopes (the simulated perf report, docs/breakdown.md) ----------------------- */

/* Functions of the DMA path that the simulator's breakdown attributes time to. The names the
 * reports print are in src/sim/prof.c; a new scope goes at the end of the list, before NR. */
enum plat_scope {
	PLAT_SCOPE_DMA_MAP,         /* dma_map_page / dma_map_sg (dma-iommu or dma-direct) */
	PLAT_SCOPE_DMA_UNMAP,       /* dma_unmap_page / dma_unmap_sg */
	PLAT_SCOPE_DOMAIN_LOOKUP,   /* dma-iommu finding the device's domain (seed 001) */
	PLAT_SCOPE_REFCOUNT_GET,    /* iommu_group_get: the group's kref */
	PLAT_SCOPE_REFCOUNT_PUT,    /* iommu_group_put */
	PLAT_SCOPE_IOVA_ALLOC,      /* alloc_iova_fast */
	PLAT_SCOPE_IOVA_FREE,       /* free_iova_fast */
	PLAT_SCOPE_IOVA_RBTREE,     /* the IOVA tree behind the per-CPU caches */
	PLAT_SCOPE_IOMMU_MAP,       /* iommu_map */
	PLAT_SCOPE_IOMMU_UNMAP,     /* iommu_unmap_fast */
	PLAT_SCOPE_PGTABLE_MAP,     /* io-pgtable map_pages / map */
	PLAT_SCOPE_PGTABLE_UNMAP,   /* io-pgtable unmap_pages / unmap */
	PLAT_SCOPE_IOTLB_SYNC,      /* arm_smmu_iotlb_sync */
	PLAT_SCOPE_TLB_INV_RANGE,   /* arm_smmu_tlb_inv_range_domain */
	PLAT_SCOPE_ISSUE_CMDLIST,   /* arm_smmu_cmdq_issue_cmdlist */
	PLAT_SCOPE_CMDQ_CLAIM,      /* its cmpxchg loop on prod+cons (attempts: plat_scope_event) */
	PLAT_SCOPE_CMDQ_WRITE,      /* writing the entries, shared lock, setting the valid bits */
	PLAT_SCOPE_CMDQ_OWNER_WAIT, /* owner: previous owner's prod, then the batch's valid bits */
	PLAT_SCOPE_CMDQ_DOORBELL,   /* owner: PROD write and hand-over */
	PLAT_SCOPE_CMDQ_SYNC_WAIT,  /* polling until our CMD_SYNC completes, shared unlock */
	PLAT_SCOPE_FQ_QUEUE,        /* flush queue: queueing an IOVA (lazy mode) */
	PLAT_SCOPE_FQ_FLUSH,        /* flush queue: a domain-wide invalidation */
	PLAT_SCOPE_SPIN_LOCK,       /* plat_spin_lock: taking any spinlock */
	PLAT_SCOPE_WARMUP,          /* a workload's unmeasured warm-up */
	/* the Intel VT-d driver's path, named as Linux 6.3's functions */
	PLAT_SCOPE_INTEL_MAP_PAGES,     /* intel_iommu_map_pages: the second-stage tables */
	PLAT_SCOPE_INTEL_UNMAP_PAGES,   /* intel_iommu_unmap_pages */
	PLAT_SCOPE_INTEL_FLUSH_PSI,     /* iommu_flush_iotlb_psi: one unit's range flush */
	PLAT_SCOPE_INTEL_FLUSH_ALL,     /* intel_flush_iotlb_all: domain-selective, every unit */
	PLAT_SCOPE_QI_FLUSH_IOTLB,      /* qi_flush_iotlb: an IOTLB invalidation descriptor */
	PLAT_SCOPE_QI_FLUSH_DEV_IOTLB,  /* qi_flush_dev_iotlb: a device-TLB one */
	PLAT_SCOPE_QI_SUBMIT_SYNC,      /* qi_submit_sync: queue, IQT, poll the wait status */
	PLAT_SCOPE_QI_CHECK_FAULT,      /* qi_check_fault: the FSTS read between polls */
	PLAT_SCOPE_NR
};
#define PLAT_SCOPE_LEAVE (-1) /* plat_scope_fn's argument: leave the innermost scope */
#define PLAT_SCOPE_EVENT (-2) /* count one event (a cmpxchg attempt) in the innermost scope */

/* Set by the simulator when it is activated, NULL natively: the profiler's entry. Entering and
 * leaving only read the running CPU's clock, so they charge no simulated time and change no
 * simulated result. Every plat_scope_enter needs its plat_scope_leave on every path. */
extern void (*plat_scope_fn)(int what);
static inline void plat_scope_enter(enum plat_scope s)
{
	if (plat_unlikely(plat_scope_fn != NULL))
		plat_scope_fn((int)s);
}
static inline void plat_scope_leave(void)
{
	if (plat_unlikely(plat_scope_fn != NULL))
		plat_scope_fn(PLAT_SCOPE_LEAVE);
}
static inline void plat_scope_event(void)
{
	if (plat_unlikely(plat_scope_fn != NULL))
		plat_scope_fn(PLAT_SCOPE_EVENT);
}

/* ---- counters (the simulator's timeline trace, docs/trace.md) ------------------------------ */

/* Quantities kernel-side code reports to the trace as they change; the simulator keeps their
 * sums and writes each new value as a counter event. */
enum plat_count {
	PLAT_COUNT_FQ_DEPTH, /* IOVAs queued in flush queues, not yet freed (all CPUs, domains) */
	PLAT_COUNT_NR
};
/* Set while a traced simulator is active, NULL otherwise (natively too): one load and a
 * branch. Charges nothing. */
extern void (*plat_count_fn)(int what, int64_t delta);
static inline void plat_count_add(enum plat_count c, int64_t delta)
{
	if (plat_unlikely(plat_count_fn != NULL))
		plat_count_fn((int)c, delta);
}

/* The running CPU's wait for key is over: the trace draws a flow (an arrow) from the device's
 * work that released it, which the model named with the same key (ilab_sim_trace_flow_out in
 * iommulab/trace.h: for a CMD_SYNC, its queue's base address and index), to the wait's slice.
 * Call it inside the wait's scope. Set while a traced simulator is active, NULL otherwise. */
extern void (*plat_flow_fn)(uint64_t key);
static inline void plat_trace_flow_in(uint64_t key)
{
	if (plat_unlikely(plat_flow_fn != NULL))
		plat_flow_fn(key);
}

static inline uint32_t plat_mmio_read32(const struct plat_mmio *m, uint64_t off)
{
	if (plat_unlikely(plat_sim))
		plat_sim->mmio(m, false);
	return (uint32_t)m->ops->read(m->ctx, off, 4);
}
static inline uint64_t plat_mmio_read64(const struct plat_mmio *m, uint64_t off)
{
	if (plat_unlikely(plat_sim))
		plat_sim->mmio(m, false);
	return m->ops->read(m->ctx, off, 8);
}
static inline void plat_mmio_write32(const struct plat_mmio *m, uint64_t off, uint32_t v)
{
	if (plat_unlikely(plat_sim))
		plat_sim->mmio(m, true);
	m->ops->write(m->ctx, off, v, 4);
}
static inline void plat_mmio_write64(const struct plat_mmio *m, uint64_t off, uint64_t v)
{
	if (plat_unlikely(plat_sim))
		plat_sim->mmio(m, true);
	m->ops->write(m->ctx, off, v, 8);
}

/* ---- spinlock (tracked, built on plat words and plat_poll) --------------------------------- */

/* A queued spinlock (MCS, like Linux's qspinlock): FIFO hand-over, only the queue's head
 * watches the lock word. word = locked bit | tail waiter (see src/plat/spinlock.c). */
typedef struct { plat_word64 word; } plat_spinlock;

#define PLAT_SPINLOCK_INIT { { 0 } }
void plat_spin_init(plat_spinlock *l, const char *name);
void plat_spin_lock(plat_spinlock *l);
bool plat_spin_trylock(plat_spinlock *l);
void plat_spin_unlock(plat_spinlock *l);

/* ---- RCU (liburcu natively) ---------------------------------------------------------------- */

void plat_rcu_read_lock(void);
void plat_rcu_read_unlock(void);
void plat_synchronize_rcu(void);
/* Threads created by plat_run_threads / plat_agent_start are registered automatically; other
 * threads that use RCU read sections register themselves. */
void plat_rcu_register_thread(void);
void plat_rcu_unregister_thread(void);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_PLAT_H */
