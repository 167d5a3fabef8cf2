/* sim.h — the deterministic timing simulator behind plat (engine "sim"): machine profiles
 * (YAML cost constants), the simulator object (fibers, virtual clocks, cost model) and its
 * statistics as JSON. It is not the platform API: kernel-style code keeps calling plat_*; this
 * header is for whoever sets up an experiment (the CLI, tests, benchmarks).
 *
 * Typical use:
 *   struct ilab_profile prof;
 *   ilab_profile_load("profiles/kunpeng920.yaml", &prof, err, sizeof(err));
 *   ilab_topo_load(prof.topology, &topo, err, sizeof(err));
 *   ilab_sim_create_topo(topo, &prof, &(struct ilab_sim_config){ .seed = 1 }, &sim, err, n);
 *   plat_init(&(struct plat_config){ .engine = PLAT_ENGINE_SIM, .topo = topo,
 *                                     .sim = ilab_sim_ops(sim) });
 *   ... plat_run_threads(...) ...      (runs as fibers in virtual time)
 *   ilab_sim_json_write(sim, stdout);
 *   plat_fini(); ilab_sim_destroy(sim);
 * See docs/simulation.md for the model.
 */
#ifndef IOMMULAB_SIM_H
#define IOMMULAB_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iommulab/plat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- machine profile ------------------------------------------------------------------------ */

#define ILAB_PROFILE_NAME_MAX 64
#define ILAB_PROFILE_PATH_MAX 512
#define ILAB_PROFILE_MAX_DIST 16
#define ILAB_PROFILE_MAX_COMPUTE 32

/* A cost that depends on the SLIT distance d between two nodes (10 = same node). Without a
 * table, the documented formula of each field is used (see docs/simulation.md); with a table,
 * every distance that occurs in the topology must be listed. */
struct ilab_dist_cost {
	uint64_t local_ns; /* the cost at distance 10 */
	unsigned nr;       /* table entries; 0 = formula */
	unsigned distance[ILAB_PROFILE_MAX_DIST];
	uint64_t ns[ILAB_PROFILE_MAX_DIST];
};

struct ilab_compute_cost {
	char name[ILAB_PROFILE_NAME_MAX];
	uint64_t ns;
};

/* The machine's NICs and the network stack that receives from them (profile "nic:" section,
 * every NIC device of the topology; docs/simulation.md). 0 = not given. The receive model of
 * seeds 001/003 (src/workloads/nic.c) uses link_gbps, rx_completions_kps, rx_buffer_ns and
 * rx_copy_mbps; the ATS model of seed 004 (allreduce.c) the rest. */
struct ilab_profile_nic {
	uint64_t link_gbps;          /* Ethernet line rate, Gbit/s */
	uint64_t rx_completions_kps; /* receive buffers the NIC completes per second, thousands */
	uint64_t rx_buffer_ns;       /* stack CPU cost per received buffer (one skb) */
	uint64_t rx_copy_mbps;       /* the stack's copy of payload to the application, MB/s */
	uint64_t payload_mbps;       /* DMA payload rate per direction, MB/s */
	uint64_t ats_round_trip_ns;  /* PCIe round trip of an ATS request, IOMMU work excluded */
	uint64_t ats_outstanding;    /* ATS requests in flight per DMA direction */
	uint64_t atc_entries;        /* the NIC's Address Translation Cache: entries ... */
	uint64_t atc_ways;           /* ... and ways */
	/* the netperf model's transmit and latency path (src/workloads/netperf.c): all or none */
	uint64_t tx_skb_ns;          /* stack CPU cost per sent skb (send call to the doorbell) */
	uint64_t tx_clean_ns;        /* CPU cost per TX completion reaped (skb freed) */
	uint64_t irq_ns;             /* one NIC interrupt: entry, NAPI schedule, exit */
	uint64_t nic_tx_ns;          /* doorbell to the first bit on the wire */
	uint64_t nic_rx_ns;          /* last bit in to the completion written */
	uint64_t wire_ns;            /* one way, cable and switch, to the peer */
	uint64_t queues;             /* channels (TX/RX queue pairs with their own MSI-X vector)
				      * the driver creates; 0: one per CPU */
};

/* The machine's NVMe drive and the block stack that drives it (profile "nvme:" section,
 * every NVMe device of the topology; docs/fio.md). 0 = not given; the section, when present,
 * gives every key but the optional trim pair. The device model is src/workloads/nvme.c. */
struct ilab_profile_nvme {
	uint64_t read_latency_ns;  /* one 4 KiB read, QD1, the media and controller's time */
	uint64_t write_latency_ns; /* one 4 KiB write, QD1 */
	uint64_t read_iops;        /* the drive's 4 KiB random read limit, all queues */
	uint64_t write_iops;       /* ... random write */
	uint64_t trim_latency_ns;  /* one deallocate (Dataset Management), QD1; optional: 0
				    * and trim jobs are refused */
	uint64_t trim_iops;        /* deallocate commands per second, all queues; optional */
	uint64_t read_mbps;        /* data rate, device to host, MB/s (10^6 B/s) */
	uint64_t write_mbps;       /* host to device */
	uint64_t submit_ns;        /* CPU: fio + syscall + block layer + nvme_queue_rq, per I/O,
				    * the DMA map excluded */
	uint64_t complete_ns;      /* CPU: nvme completion + block layer end + fio reap, per I/O,
				    * the DMA unmap excluded */
	uint64_t irq_ns;           /* CPU: one completion interrupt's entry, dispatch and exit */
};

/* Every constant of the cost model, in nanoseconds of the modelled machine. */
struct ilab_profile {
	char name[ILAB_PROFILE_NAME_MAX];
	char topology[ILAB_PROFILE_PATH_MAX]; /* topo spec: preset, hwloc XML or synthetic: */
	char source[ILAB_PROFILE_PATH_MAX];   /* file it was loaded from */
	/* iommu: the machine's IOMMU architecture, a registered name (iommu_arch.h: "smmuv3",
	 * "vtd"); "smmuv3" when the profile does not say */
	char iommu_arch[16];

	/* memory: load-to-use latency of one cache line from a node's DRAM.
	 * formula: mem(d) = memory.local_ns * d / 10 (ACPI SLIT: relative latency). */
	struct ilab_dist_cost mem;
	uint64_t mem_line_ns; /* each further line of a multi-line access (streaming) */

	/* tracked shared words (cache lines) */
	uint64_t cache_hit_ns;     /* load/store on a line already held in the right state */
	uint64_t atomic_local_ns;  /* atomic RMW on a line held exclusively by this CPU */
	/* cache-to-cache transfer. formula: xfer(d) = transfer_local_ns + mem(d) - mem(10) */
	struct ilab_dist_cost transfer;
	/* a line of simulated memory found in its home node's last-level cache (a device wrote
	 * it there), read from a CPU of that node; remotely + mem(d) - mem(10). Optional
	 * (cache.llc_local_ns), default transfer_local_ns */
	uint64_t llc_local_ns;
	/* each further line of a multi-line access that hits (cache.line_hit_stream_ns,
	 * default 1) */
	uint64_t line_hit_stream_ns;
	/* how long a CPU whose cmpxchg failed keeps the line for its immediate retry
	 * (cache.retry_hold_ns, default atomic_local_ns) */
	uint64_t retry_hold_ns;
	/* cache.contention: how a line's requests are served (docs/simulation.md, "Line
	 * contention model"). FLAT (default): a transfer costs the same whatever the number of
	 * waiters, reads do not queue; HOME: every miss occupies the line's home for
	 * cache.home_occupancy_ns, in arrival order, and takes effect at its service there. */
	int cache_contention;
#define ILAB_CONTENTION_FLAT 0
#define ILAB_CONTENTION_HOME 1
	/* cache.atomics (both line models): where an atomic RMW executes. LSE_NEAR (default):
	 * in the requester's L1 after it obtained the line unique (a failed CAS keeps it for its
	 * retry in flat); LSE_FAR: at the line's home, the line is not moved and a failed CAS
	 * keeps nothing; LLSC: load-exclusive + store-exclusive, which in home fails when
	 * another write to the line was served in between (flat holds the line for the whole
	 * RMW: near); LSE_UNIQUE_NEAR: near when the requester already holds the line unique
	 * (its own, uncontended lines), far otherwise. */
	int cache_atomics;
#define ILAB_ATOMICS_LSE_NEAR 0
#define ILAB_ATOMICS_LSE_FAR 1
#define ILAB_ATOMICS_LLSC 2
#define ILAB_ATOMICS_LSE_UNIQUE_NEAR 3
	/* cache.home_occupancy_ns (HOME only): how long the home serves one request to a line
	 * before it takes the next one to that line */
	uint64_t home_occupancy_ns;

	/* MMIO from a CPU to a device register.
	 * formula: read(d) = read_local_ns + mem(d) - mem(10) (non-posted: a round trip);
	 *          write(d) = write_local_ns + (mem(d) - mem(10)) / 2 (posted: one way). */
	struct ilab_dist_cost mmio_read;
	struct ilab_dist_cost mmio_write;

	/* SMMU-side costs (the SMMU's memory accesses are charged by memory latency from its
	 * node to the memory's home node, like any agent's). */
	uint64_t smmu_command_ns;    /* consume and execute one command-queue entry */
	uint64_t smmu_sync_ns;       /* extra for CMD_SYNC completion signalling */
	uint64_t smmu_tlbi_sync_ns;  /* a CMD_SYNC that follows TLB invalidations waits at least
				      * this long (their completion handshake); optional, 0 */
	uint64_t smmu_tlbi_ns;       /* one TLBI executed by the invalidation engine, pipelined
				      * behind the command processor; optional: 0 = executed
				      * in command_ns like any command */
	uint64_t smmu_tlbi_scan_ns;  /* a TLBI that scans every TLB and walk-cache entry (by
				      * ASID, VMID, all; a range with RIL) in the engine, instead
				      * of tlbi_ns; optional (at least 1): 0 = tlbi_ns */
	uint64_t smmu_tlbi_entry_ns; /* + each entry a TLBI invalidated; optional, 0 */
	uint64_t smmu_tlb_lookup_ns; /* one TLB / walk-cache lookup */
	/* The machine's SMMUs implement range invalidation (IDR3.RIL, SMMUv3.2):
	 * smmu.range_invalidation; -1 when the profile does not say (the model's default). */
	int smmu_ril;
	/* Command read-ahead of every command queue (SMMU_CMDQ and each ECMDQ): entries read
	 * at once up to PROD, smmu.cmd_readahead_entries (1 = one command per read); 64 when
	 * the profile does not say. */
	uint64_t smmu_cmd_readahead;
#define ILAB_PROFILE_READAHEAD_DEFAULT 64
	/* smmu.sync_waits_all_queues: a CMD_SYNC waits for the TLBIs of every queue, not only
	 * its own (cross-queue coalescing); 0 (off) when the profile does not say. */
	int smmu_sync_all_queues;
	/* smmu.invalidations_in_flight: TLBIs the command processor may have handed to the
	 * invalidation engine and not seen finish; past it the processor waits (0: no bound,
	 * when the profile does not say). */
	uint64_t smmu_inv_in_flight;
	/* smmu.cmdqv_vcmdqs / smmu.cmdqv_vintfs: the SMMUs have an NVIDIA Tegra241 CMDQV with
	 * this many VCMDQs (a power of two 1..128) shared out to this many VINTFs (1..64, at most
	 * the VCMDQs); 0 when the profile does not say (no CMDQV). */
	uint64_t smmu_cmdqv_vcmdqs, smmu_cmdqv_vintfs;

	/* VT-d-side costs (profile vtd: section, required when iommu: vtd; docs/simulation.md
	 * "VT-d costs"). The unit's memory accesses (descriptor fetches, the wait descriptor's
	 * status write, root/context/paging-entry reads) are charged by the memory model from
	 * where they are made to each line's home, like the SMMU's; these are the rest. */
	uint64_t vtd_desc_ns;         /* execute one invalidation descriptor, once fetched */
	uint64_t vtd_wait_ns;         /* extra per wait descriptor, before its status write;
				       * optional, 0 */
	uint64_t vtd_iotlb_lookup_ns; /* one IOTLB lookup (every request translated) */
	uint64_t vtd_walk_ns;         /* fixed part of an IOTLB-miss walk, beyond its reads */
	/* vtd.walkers / vtd.outstanding_requests: page walkers per unit, and translation
	 * requests a unit holds at once (src/hw/vtd_timing.c); 0 (no limit) when not said. */
	uint64_t vtd_walkers, vtd_outstanding;
	/* vtd.entry_read_fetches: memory fetches one paging-entry read of a walk makes, one
	 * after the other, each to the entry's home node; 0 when not said (= 1) */
	uint64_t vtd_entry_read_fetches;
	/* vtd.iotlb_entries, iotlb_ways, pml4e_cache_entries, pdpe_cache_entries,
	 * pde_cache_entries: the unit's IOTLB and paging-structure caches (VT-d §6.2); 0 when not
	 * said (the model's vtd_config_default sizes) */
	uint64_t vtd_iotlb_entries, vtd_iotlb_ways, vtd_pml4e_entries, vtd_pdpe_entries,
		 vtd_pde_entries;

	/* named compute charges for driver code (plat_charge_ns), looked up by name */
	unsigned nr_compute;
	struct ilab_compute_cost compute[ILAB_PROFILE_MAX_COMPUTE];

	struct ilab_profile_nic nic; /* optional section; all 0 when absent */
	struct ilab_profile_nvme nvme; /* optional section; all 0 when absent */
};

/* Load a profile from a YAML file. Returns 0, or a negative errno with err receiving
 * "file:line:column: what is wrong" (-EINVAL for malformed content, -ENOENT etc. for I/O). */
int ilab_profile_load(const char *path, struct ilab_profile *prof, char *err, size_t errlen);
/* The same from a string; name is used in messages in place of the file name. */
int ilab_profile_parse(const char *text, size_t len, const char *name, struct ilab_profile *prof,
		       char *err, size_t errlen);
/* The directory of the built-in profiles: $IOMMULAB_DATADIR/profiles when that variable is set,
 * else <source tree>/profiles when it exists, else <install prefix>/share/iommulab/profiles
 * (the same order as the built-in scenarios). Returns 0 or -ENOENT (err says where it looked). */
int ilab_profile_dir(char *buf, size_t len, char *err, size_t errlen);
/* What a user typed: a file (anything with a '/', or an existing file), else a profile name,
 * <profile dir>/<name>.yaml. Returns 0 with the path, or -ENOENT (-EINVAL: an empty name) with
 * err saying why. */
int ilab_profile_resolve(const char *what, char *path, size_t len, char *err, size_t errlen);
/* ilab_profile_resolve, then ilab_profile_load: the profile a user named. Returns 0, or the
 * first step's error with its message in err. */
int ilab_profile_open(const char *what, struct ilab_profile *prof, char *err, size_t errlen);
/* One value of a profile replaced (iommulab sweep's profile.* axes): key is a dot path
 * ("smmu.tlbi_sync_ns"), value its text; quoted: the value is a string (as "100" in YAML). */
#define ILAB_PROFILE_OVERRIDE_KEY_MAX 128
struct ilab_profile_override {
	const char *key;
	const char *value;
	bool quoted;
};
/* The profile text with the nr overrides applied, as new YAML text in *out (malloc'd, length
 * *outlen). A key whose sections do not exist, or that names a section, is an error (-EINVAL,
 * err says which); a missing last key is added. The values are not checked here: parse the
 * result with ilab_profile_parse, which applies a profile file's checks to them. */
int ilab_profile_override(const char *text, size_t len, const struct ilab_profile_override *o,
			  unsigned nr, char **out, size_t *outlen, char *err, size_t errlen);
/* A named compute charge (profile "compute:" section), or dflt when the profile has none. */
uint64_t ilab_profile_compute_ns(const struct ilab_profile *prof, const char *name,
				 uint64_t dflt);
/* Cost at SLIT distance d for one of the profile's distance costs (kind selects the formula):
 * returns 0 and sets *ns, or -ENOENT when a table lacks d. */
enum ilab_dist_kind { ILAB_DIST_MEM, ILAB_DIST_TRANSFER, ILAB_DIST_MMIO_READ, ILAB_DIST_MMIO_WRITE };
int ilab_profile_dist_ns(const struct ilab_profile *prof, enum ilab_dist_kind kind, unsigned d,
			 uint64_t *ns);

/* ---- the simulator ------------------------------------------------------------------------- */

struct ilab_sim;
struct ilab_topo;

/* The machine as the cost model needs it (ilab_sim_create_topo fills it from a topology). */
struct ilab_sim_machine {
	unsigned nr_nodes;        /* 1..64 */
	unsigned nr_cpus;         /* >= 1 */
	const int *cpu_node;      /* nr_cpus entries */
	const unsigned *distance; /* nr_nodes * nr_nodes SLIT, row-major, 10 on the diagonal */
};

/* How far a fiber may run ahead of the earliest runnable one before a tracked access, a poll
 * or a plat_wrote (docs/simulation.md, "Lookahead"). PROFILE: by the model's lookahead L,
 * the smallest latency with which one agent's access can affect another (computed from the
 * profile, ilab_sim_lookahead_ns); NONE: L = 0, strict virtual-time order at every such call
 * (the exact reference). MMIO, ilab_sim_sync, yields and exits are always strict. */
enum ilab_sim_lookahead {
	ILAB_SIM_LOOKAHEAD_DEFAULT = 0, /* = ILAB_SIM_LOOKAHEAD_NONE */
	ILAB_SIM_LOOKAHEAD_NONE,
	ILAB_SIM_LOOKAHEAD_PROFILE,
};

struct ilab_sim_config {
	uint64_t seed;          /* for ilab_sim_rand(); recorded in the JSON */
	size_t stack_bytes;     /* per fiber; 0 = 256 KiB (1 MiB under ASan) */
	uint64_t time_limit_ns; /* a wait still pending past this virtual time fails with
				 * -ETIME; 0 = 1000 s of virtual time */
	enum ilab_sim_lookahead lookahead; /* see below; 0 = the default */
};

int ilab_sim_create(const struct ilab_sim_machine *m, const struct ilab_profile *prof,
		    const struct ilab_sim_config *cfg, struct ilab_sim **out, char *err,
		    size_t errlen);
int ilab_sim_create_topo(const struct ilab_topo *t, const struct ilab_profile *prof,
			 const struct ilab_sim_config *cfg, struct ilab_sim **out, char *err,
			 size_t errlen);
/* Fibers still parked (after a deadlock) are abandoned: their stacks are freed unwound. */
void ilab_sim_destroy(struct ilab_sim *s);

/* The plat backend ops of this simulator, for plat_config.sim. The ops act on the simulator
 * most recently passed here (one simulator is active at a time per process). */
const struct plat_sim_ops *ilab_sim_ops(struct ilab_sim *s);

/* The same operations as plat_run_threads / plat_agent_* in simulation (plat dispatches to
 * them through the ops; tests may call them directly). They act on the active simulator.
 * A wait that can never end (every fiber parked, no timer pending) returns -EDEADLK and
 * ilab_sim_error() describes who waits on what; the simulator then refuses further waits. */
int ilab_sim_run_threads(unsigned n, const int *cpus, plat_thread_fn fn, void *arg);
int ilab_sim_agent_start(const char *name, int node, plat_agent_fn fn, void *arg,
			 struct plat_agent **out);
bool ilab_sim_agent_should_stop(const struct plat_agent *agent);
void ilab_sim_agent_stop(struct plat_agent *agent, const void *wake_addr);
void ilab_sim_agent_wake(struct plat_agent *agent);

/* Virtual time of the set-up context (the code that called ilab_sim_run_threads). */
uint64_t ilab_sim_now_ns(const struct ilab_sim *s);
/* Last error (deadlock report, time limit), or "" */
const char *ilab_sim_error(const struct ilab_sim *s);
/* Progress of a long run, for a command's progress line: fn(virtual_ns, arg) is called from
 * the scheduler about every period_s seconds of host time (checked every 65536 context
 * switches) with the virtual time of the fiber about to run. Process-wide, as a command runs
 * one simulation at a time; fn NULL turns it off. It does not change the simulation. */
typedef void (*ilab_sim_progress_fn)(uint64_t virtual_ns, void *arg);
void ilab_sim_set_progress(ilab_sim_progress_fn fn, void *arg, double period_s);
/* Deterministic pseudo-random numbers from the seed (splitmix64). */
uint64_t ilab_sim_rand(struct ilab_sim *s);
/* Cost model queries, in ns, between nodes (for models that charge themselves). */
uint64_t ilab_sim_mem_ns(const struct ilab_sim *s, unsigned from_node, unsigned home_node);
uint64_t ilab_sim_transfer_ns(const struct ilab_sim *s, unsigned from_node, unsigned to_node);
uint64_t ilab_sim_mmio_ns(const struct ilab_sim *s, unsigned cpu_node, unsigned dev_node,
			  bool write);
const struct ilab_profile *ilab_sim_profile(const struct ilab_sim *s);
/* The lookahead in use, in ns (0 = strict order; see enum ilab_sim_lookahead). */
uint64_t ilab_sim_lookahead_ns(const struct ilab_sim *s);

/* A model (the SMMU's agent, a device) is about to do something other fibers can see without
 * a plat call of its own (a register update, a plain store to simulated memory): first let
 * every fiber that is behind it in virtual time run, so they do not see the effect early.
 * Tracked accesses, plat_poll, plat_wrote and MMIO do this by themselves. No-op natively. */
void ilab_sim_sync(void);

/* Declare that host memory [va, va + len) backs simulated physical memory whose home is NUMA
 * node `node` (the board does it for each node's range): tracked or polled words there are
 * filled from that node's memory, and a write by an agent reported with plat_wrote (a device's
 * MSI or DMA) leaves the line in memory, so pollers re-read it from the home node. node < 0
 * forgets any range overlapping [va, va + len). Acts on the active simulator; no-op without. */
void ilab_sim_mem_home(const void *va, size_t len, int node);

/* Charge an access by the running CPU or agent to simulated memory at host address va (bytes
 * from there): like plat_mem_access, but line by line, from where each line's copies are: a
 * CPU re-reading a line it holds pays a cache hit, a line last written by another CPU or a
 * device pays a transfer that depends on requester, holder and home node, an uncached line
 * pays the memory latency from its home (ilab_sim_mem_home must have declared the range, else
 * the line counts as local memory). See docs/simulation.md. Not a scheduling point. No-op
 * natively or when no simulator is active. */
void ilab_sim_mem_access(const void *va, size_t bytes, bool write);

/* The breakdown of the CPUs' time by function (plat_scope_enter, docs/breakdown.md): off
 * until asked for, so that a run that does not report it pays no host time for it (13-23 %
 * more of bench_sim_dma's host time when on). Threads started after this call are profiled,
 * and ilab_sim_json then has "breakdown". NULL is ignored. */
void ilab_sim_breakdown_enable(struct ilab_sim *s);

/* The profile key of a charge ("iova_alloc_ns"), for documentation and tests. */
const char *ilab_sim_charge_name(enum plat_charge c); /* see plat_charge in plat.h */

/* Record one sample of a named distribution (e.g. "smmu0.cmd_sync_ns", "smmu0.cmdq_used")
 * in the active simulator's statistics: count, sum, min, max and log2 buckets. No-op when no
 * simulator is active. The name is copied. */
void ilab_sim_sample(const char *name, uint64_t value);

/* The same, for a caller that samples one distribution often (the board, per command): `d`
 * remembers where the distribution is in the active simulator, so that the name is looked up
 * once per simulator instead of per sample. Zero-initialise it; it re-binds by itself when
 * another simulator is active. */
struct ilab_sim_dist {
	uint64_t sim_serial; /* which simulator it is bound to (0: none) */
	unsigned idx;
};
void ilab_sim_sample_dist(struct ilab_sim_dist *d, const char *name, uint64_t value);

/* ---- statistics ---------------------------------------------------------------------------- */

/* All statistics as one JSON document (sorted keys, exact integers, no host times): the same
 * inputs and seed give byte-identical output. Returns a malloc'd string (free() it) or NULL. */
char *ilab_sim_json_dumps(const struct ilab_sim *s);
int ilab_sim_json_write(const struct ilab_sim *s, FILE *f);
/* The same as a jansson json_t (new reference), for embedding in a larger result. */
struct json_t;
struct json_t *ilab_sim_json(const struct ilab_sim *s);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_SIM_H */
