/* nvme.h — an NVMe drive model and the fio-like block workload on it, for the simulator: one
 * submission/completion queue pair per hardware queue (per CPU, as Linux's nvme driver gives
 * each CPU its own; shared by a group of CPUs when the controller grants fewer), each I/O's buffer mapped through dma-iommu and described by PRP entries (a PRP list,
 * itself a mapped coherent page, above two pages), the drive fetching commands and PRP lists
 * and moving data by DMA through the board's IOMMU, a completion entry and an interrupt per
 * command, and fio's figures (IOPS, bandwidth, completion-latency percentiles).
 * It is not an NVMe controller's register model (no BAR, no admin queue: the queues exist
 * from the start), not a block layer and not SGL: data is described by PRPs only
 * (docs/fio.md says what is modelled and what is not).
 */
#ifndef IOMMULAB_NVME_H
#define IOMMULAB_NVME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/lat_hist.h>

struct ilab_board;
struct ilab_dev;
struct ilab_scenario;
struct ilab_case;
struct ilab_case_result;
struct ilab_topo;
struct ilab_profile;

#ifdef __cplusplus
extern "C" {
#endif

#define ILAB_NVME_PAGE 4096u             /* CC.MPS = 0: 4 KiB memory pages */
#define ILAB_NVME_SQE_BYTES 64u
#define ILAB_NVME_CQE_BYTES 16u
#define ILAB_NVME_MAX_JOBS 128u          /* one queue pair and one simulator agent each */
#define ILAB_NVME_MAX_IODEPTH 4096u
#define ILAB_NVME_MAX_BS (2u << 20)      /* one PRP list page of 512 entries, no chaining */
#define ILAB_NVME_DEFAULT_QUEUE 1024u    /* Linux nvme io_queue_depth */
#define ILAB_NVME_OPC_WRITE 0x01
#define ILAB_NVME_OPC_READ 0x02
#define ILAB_NVME_OPC_DSM 0x09           /* Dataset Management (NVM command set) */
#define ILAB_NVME_DSM_AD (1u << 2)       /* CDW11 Attribute - Deallocate */
#define ILAB_NVME_DSM_RANGE_BYTES 16u    /* one range: attributes, NLB, SLBA */
#define ILAB_NVME_DSM_MAX_RANGES 256u    /* CDW10 NR is 0-based, 8 bits */
/* Completion status field (CQE DW3 bits 31:17): generic command status (SCT 0). */
#define ILAB_NVME_SC_SUCCESS 0x00
#define ILAB_NVME_SC_DATA_XFER_ERROR 0x04 /* the drive's DMA was aborted */

/* fio's rw= values this model runs; the mixes draw each I/O's direction (rwmixread). */
enum ilab_fio_rw {
	ILAB_FIO_RANDREAD = 0, ILAB_FIO_RANDWRITE, ILAB_FIO_READ, ILAB_FIO_WRITE,
	ILAB_FIO_RW, ILAB_FIO_RANDRW, ILAB_FIO_TRIM, ILAB_FIO_RANDTRIM
};
/* fio's data directions, its DDIR_READ, DDIR_WRITE, DDIR_TRIM: the index of a job's
 * per-direction figures. */
#define ILAB_FIO_DDIRS 3u
const char *ilab_fio_rw_name(enum ilab_fio_rw rw); /* "randread" ... "randrw", "trim", "randtrim" */
/* 0 and *rw (fio's alias "readwrite" is rw), or -EINVAL for a name fio has that this model
 * does not run (or no such name). */
int ilab_fio_rw_parse(const char *name, enum ilab_fio_rw *rw);
static inline bool ilab_fio_rw_is_write(enum ilab_fio_rw rw)
{
	return rw == ILAB_FIO_RANDWRITE || rw == ILAB_FIO_WRITE;
}
static inline bool ilab_fio_rw_is_mixed(enum ilab_fio_rw rw)
{
	return rw == ILAB_FIO_RW || rw == ILAB_FIO_RANDRW;
}
static inline bool ilab_fio_rw_is_trim(enum ilab_fio_rw rw)
{
	return rw == ILAB_FIO_TRIM || rw == ILAB_FIO_RANDTRIM;
}
/* Does rw issue I/Os of direction d (0 read, 1 write, 2 trim)? */
static inline bool ilab_fio_rw_does(enum ilab_fio_rw rw, unsigned d)
{
	if (ilab_fio_rw_is_trim(rw) || d == 2)
		return ilab_fio_rw_is_trim(rw) && d == 2;
	return ilab_fio_rw_is_mixed(rw) || ilab_fio_rw_is_write(rw) == (d == 1);
}

/* ---- queue arithmetic (NVMe base specification, "Circular Queues") ----------------------- */

/* The entry after i in a queue of n. */
static inline unsigned ilab_nvme_q_next(unsigned i, unsigned n)
{
	return i + 1 == n ? 0 : i + 1;
}
/* Entries between head and tail (the producer's) in a queue of n. */
static inline unsigned ilab_nvme_q_used(unsigned head, unsigned tail, unsigned n)
{
	return tail >= head ? tail - head : n - head + tail;
}
/* Full when one more entry would make tail equal head: a queue of n holds n - 1. */
static inline bool ilab_nvme_q_full(unsigned head, unsigned tail, unsigned n)
{
	return ilab_nvme_q_next(tail, n) == head;
}

/* PRP entries of a transfer of len bytes at DMA address dma (NVMe base specification,
 * "Physical Region Page Entry and List"): PRP1 is dma; PRP2 is 0 when the data ends in PRP1's
 * page, the next page's address when it ends in that one, else list_dma, the address of a PRP
 * list whose entries (written to list[], at most list_max) are the pages after PRP1's.
 * Returns the number of list entries (0: no list), or -EINVAL (len 0, a list longer than
 * list_max: list chaining is not modelled). */
int ilab_nvme_build_prps(uint64_t dma, size_t len, uint64_t list_dma, uint64_t *list,
			 unsigned list_max, uint64_t *prp1, uint64_t *prp2);

/* ---- the workload ------------------------------------------------------------------------- */

/* Where an I/O's completion work (nvme_pci_complete_rq: dma_unmap, blk_mq_end_request, the aio
 * event) runs when its interrupt arrives on another CPU than the submitter's: the block
 * queue's sysfs rq_affinity (block/blk-mq.c, blk_mq_complete_need_ipi). The zero value is
 * Linux's default. */
enum ilab_nvme_rq_affinity {
	ILAB_NVME_RQ_AFFINITY_LLC = 0,   /* rq_affinity=1: on the IRQ CPU when it shares the
					  * submitter's last-level cache (its node here), else an
					  * IPI and the work on the submitter */
	ILAB_NVME_RQ_AFFINITY_NONE,      /* rq_affinity=0: always on the IRQ CPU */
	ILAB_NVME_RQ_AFFINITY_FORCE,     /* rq_affinity=2: always on the submitter (IPI) */
};
/* 0 and *a for Linux's sysfs value 0, 1 or 2; -EINVAL for anything else. */
int ilab_nvme_rq_affinity_from_sysfs(int v, enum ilab_nvme_rq_affinity *a);

#define ILAB_NVME_MAX_BSSPLIT 64u /* fio's BSSPLIT_MAX */

/* One direction's I/O sizes, drawn per I/O as fio's get_next_buflen: with a split, the first
 * entry (in ascending perc order) whose running perc reaches a uniform draw in [0, 100); else
 * min + max x u, then down to a multiple of min, at most max (fio's formula). min 0: the cfg's
 * bs for every I/O. Every size is a multiple of 512 up to ILAB_NVME_MAX_BS. */
struct ilab_nvme_bssplit {
	unsigned bs, perc;
};
struct ilab_nvme_bs_dist {
	unsigned min, max;
	unsigned nsplit;
	struct ilab_nvme_bssplit split[ILAB_NVME_MAX_BSSPLIT];
};

struct ilab_nvme_cfg {
	unsigned numjobs;          /* fio numjobs: one CPU each, and its CPU's queue pair */
	const int *cpus;           /* CPU of job i; NULL: the drive's node's CPUs, then the
				    * others from CPU 0 */
	unsigned iodepth;          /* I/Os in flight per job */
	unsigned bs;               /* bytes per I/O, a multiple of 512, at most ILAB_NVME_MAX_BS */
	enum ilab_fio_rw rw;
	unsigned rwmixread;        /* the mixes: percent of I/Os that are reads, 0..100 */
	struct ilab_nvme_bs_dist bs_dist[2]; /* per direction (read, write); min 0: bs */
	unsigned queue_entries;    /* per SQ and CQ, > iodepth; 0 = ILAB_NVME_DEFAULT_QUEUE. A
				    * hardware queue has one tag fewer (blk-mq's queue_depth), at
				    * most 10239 (BLK_MQ_MAX_DEPTH - 1): the I/Os in flight of the
				    * jobs sharing it, together */
	uint64_t runtime_ns;       /* measured window after the ramp; 0: number_ios decides */
	uint64_t ramp_ns;          /* fio ramp_time: I/O before the window, not counted */
	uint64_t number_ios;       /* per job, with runtime_ns 0 (fio number_ios) */
	uint64_t io_bytes;         /* with number_ios: also stop issuing after this many bytes
				    * per job (fio size with varying I/O sizes); 0: no limit */
	uint64_t size_bytes;       /* the region offsets are drawn from; 0 = 1 TiB */
	uint64_t offset_bytes;     /* where that region starts on the drive (fio offset) */
	uint64_t seed;             /* random offsets (rand*) */
	/* the drive (profile nvme:) */
	uint64_t read_latency_ns, write_latency_ns;
	uint64_t read_iops, write_iops;  /* 0: no limit */
	/* Dataset Management (deallocate): command slot rate and latency, needed by trim jobs
	 * only; the range list crosses the link at write_mbps. 0 iops: no limit */
	uint64_t trim_latency_ns, trim_iops;
	uint64_t read_mbps, write_mbps;  /* 0: no limit */
	/* the CPU's block stack (profile nvme:) */
	uint64_t submit_ns, complete_ns, irq_ns;
	/* Interrupts and polling (docs/fio.md "Where completions run"). By default each job's
	 * queue has its own MSI-X vector on the job's CPU (Linux's managed affinity with a queue
	 * per CPU), so completions run on the submitter. */
	const int *irq_cpus;       /* CPU that takes job i's queue interrupt (an smp_affinity
				    * mask of one CPU; a shared queue: its first job's); NULL:
				    * as the queues give it */
	unsigned nr_queues;        /* I/O queues the controller grants (NVMe Number of Queues,
				    * Feature 07h); 0: one per CPU. With fewer than the machine's
				    * CPUs, the CPUs are spread over the queues in contiguous
				    * groups (Linux's group_cpus_evenly): a group's CPUs share its
				    * queue's SQ (sq_lock), CQ and tags, and its interrupt lands on
				    * the group's first CPU */
	enum ilab_nvme_rq_affinity rq_affinity;
	bool hipri;                /* polled queues (io_uring hipri, nvme.poll_queues): no
				    * interrupt, the submitter polls its CQ and is never idle */
	bool no_comp_batch;        /* every completion finished as its CQ entry is walked, as
				    * before Linux 5.16; false (5.16 on): those finished on the
				    * walking CPU are unmapped, freed and delivered after the
				    * walk and its doorbell (nvme_pci_complete_batch). The
				    * kernel era sets it (kernel_era.h) */
	/* Per job, when not NULL: numjobs entries the run fills (fio's per-job reports). */
	struct ilab_nvme_job_result *job_results;
	/* Job sections running at the same time on the same drive (fio's jobs without
	 * stonewall): each its own jobs, I/O, window (from the common start) and job_results;
	 * the drive, the CPU costs and queue_entries are this cfg's. Jobs without cpus take the
	 * CPUs left, one job per CPU. NULL/0: none. */
	const struct ilab_nvme_cfg *const *also;
	unsigned nalso;
	/* Tests: every n-th I/O of each job gets a PRP1 the IOMMU has not mapped (0: none). */
	unsigned inject_unmapped_every;
};

/* Buckets of the I/Os in flight at each submission, fio's iodepth_level: 1, 2, 4, 8, 16, 32,
 * >=64 (a depth counts in the largest bucket not above it). */
#define ILAB_NVME_DEPTH_BUCKETS 7u

/* One direction's figures of a job, in the measured window. */
struct ilab_nvme_dir_result {
	uint64_t ios, errors, bytes;
	/* slat: the submission (block stack cost, dma_map_single, PRPs, doorbell); clat: the
	 * doorbell to the end of the completion work; lat: both (fio's slat, clat, lat) */
	struct ilab_lat_hist slat, clat, lat;
};

/* One job's figures, in the measured window (cpu_busy and run_ns: the job's whole run). */
struct ilab_nvme_job_result {
	uint64_t ios, errors;      /* both directions */
	uint64_t run_ns;           /* the job's thread, first submission to last completion */
	uint64_t window_ns;        /* its measured window: runtime, or the common start to its
				    * last completion */
	double cpu_busy;
	uint64_t depth[ILAB_NVME_DEPTH_BUCKETS];
	/* I/Os per submission round and per interrupt's CQ walk, fio's iodepth_submit and
	 * iodepth_complete buckets: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64 */
	uint64_t submit_batch[ILAB_NVME_DEPTH_BUCKETS], complete_batch[ILAB_NVME_DEPTH_BUCKETS];
	struct ilab_nvme_dir_result dir[ILAB_FIO_DDIRS]; /* read, write, trim (bytes: the
							  * ranges' deallocated bytes) */
};

struct ilab_nvme_result {
	uint64_t ios;              /* completed in the window, all jobs */
	uint64_t errors;           /* ... of which with an error status */
	uint64_t window_ns;
	double iops;
	double bw_mbps;            /* MB/s, 10^6 bytes, both directions */
	uint64_t clat_min_ns, clat_max_ns;
	double clat_mean_ns, clat_stdev_ns;
	uint64_t clat_p50_ns, clat_p99_ns, clat_p999_ns; /* fio's rule on its histogram
							  * (lat_hist.h) */
	double cpu_busy;           /* the jobs' CPUs' busy fraction, mean over jobs, whole run
				    * (ramp and drain included): not waiting for an interrupt */
	uint64_t dma_faults;       /* drive DMAs the IOMMU aborted (whole run) */
	uint64_t map_errors;
	uint64_t interrupts;       /* handler runs on the CPUs (whole run) */
	uint64_t remote_completions; /* I/Os whose completion work ran on another CPU than
				      * their submitter's (whole run) */
	uint64_t ipis;             /* completions sent back to the submitter (rq_affinity) */
	double irq_cpu_busy;       /* the busiest interrupt CPU that runs no job (0: none) */
	uint64_t iova_cache_misses; /* the domain's IOVA rcache misses (whole run) */
	uint64_t iova_depot_max;   /* most full magazines its depot held (any class) */
	uint64_t commands;         /* commands the drive completed (whole run) */
	uint64_t prp_lists;        /* ... of which with a PRP list */
	uint64_t dsm_commands;     /* ... of which Dataset Management (deallocate) */
	uint64_t dsm_range_reads;  /* range lists the drive read by DMA */
	uint64_t dsm_blocks;       /* 512-byte blocks those ranges deallocated */
	uint64_t sq_wraps;         /* submission queue tails that wrapped to entry 0 */
	uint64_t cq_wraps;         /* completion queue heads that wrapped (phase flips) */
	unsigned hw_queues;        /* hardware queues (SQ/CQ pairs) the jobs' CPUs map to */
	unsigned queue_jobs_max;   /* most jobs sharing one of them */
	unsigned queue_inflight_max; /* most commands outstanding on one of them (its tags
				      * taken): at most queue_entries - 1, and 10239 */
	uint64_t tag_waits;        /* submissions that found every tag of their queue taken and
				    * slept until a completion freed one */
	uint64_t tag_wakeups;      /* sleepers a freed tag woke (sbitmap: about one a tag) */
	uint64_t batched_completions; /* finished after their walk (io_comp_batch, 5.16 on) */
	uint64_t cq_walk_max;      /* most entries one walk of a CQ reaped (at most entries - 1:
				    * the drive posts into no full CQ) ... */
	uint64_t cq_walk_max_ns;   /* ... and that walk's time */
	uint64_t cq_full_waits;    /* times a drive found a CQ full and waited for its head
				    * doorbell (whole run) */
	uint64_t handoff_max_ns;   /* longest a completion handed to its submitter's CPU waited
				    * there to be reaped */
};

/* Run the jobs on dev (an NVMe of board, probed, its DMA options set), in the simulator.
 * Returns 0; -EINVAL (bad configuration, or not in simulation; err says which); -ENOMEM;
 * -EIO when I/Os completed with an error status or maps failed (res is filled: err says how
 * many); or the error of plat_run_threads / plat_agent_start. */
int ilab_nvme_run(struct ilab_board *board, struct ilab_dev *dev, const struct ilab_nvme_cfg *cfg,
		  struct ilab_nvme_result *res, char *err, size_t errlen);

/* The scenario workload `fio` (src/experiments/workload_registry.c) and its checks: the case
 * against the topology (an NVMe there, CPUs for the jobs) and the profile (an nvme: section). */
int ilab_workload_fio(const struct ilab_scenario *s, const struct ilab_case *c,
		      struct ilab_case_result *r, char *err, size_t errlen);
int ilab_workload_fio_check(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			    size_t msglen);
int ilab_workload_fio_check_profile(const struct ilab_profile *prof, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_NVME_H */
