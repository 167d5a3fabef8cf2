/* nvme.c — the NVMe drive model and fio's job loop on it (include/iommulab/nvme.h): per job a
 * CPU thread (fio + the Linux block stack + the nvme driver's submission and completion), per
 * hardware queue an SQ/CQ pair and a queue agent of the drive on the drive's node; the
 * drive's command rate, latency and data rate are shared by all its queues. Simulator only.
 * It is not the machine's set-up (nvme_env.c) nor the scenario glue (fio_experiments.c).
 *
 * Hardware queues: one per CPU by default; with fewer (nr_queues) the CPUs of a group share
 * one (blk-mq maps them to one hardware context), as Linux's nvme driver shares its struct
 * nvme_queue: one SQ its submitters fill under sq_lock, one CQ reaped in order on the CPU
 * its vector targets, and blk-mq's tags of the hardware context (the queue's entries less
 * one), which bound the I/Os in flight of all its CPUs together.
 *
 * CPU side, per job (a plat thread on the job's CPU): while fewer than iodepth I/Os are in
 * flight, take a tag of its queue (none free: sleep on the tags' wait queue until freed tags
 * wake it, about one sleeper a tag as sbitmap), submit
 * one I/O, its direction (rw mixes) and size (bs_dist) drawn as fio's: submit_ns,
 * dma_map_single of the I/O's buffer (pages on the CPU's node, allocated once, as fio's), the
 * PRP entries (a PRP list in the slot's coherent page above two pages), then under the
 * queue's sq_lock the 64-byte command into the SQ (coherent memory on the drive's node) and
 * the SQ tail doorbell. Then wait for the interrupt (polled: spin on the CQ, busy, no
 * handler): irq_ns per handler run, and for each new CQE (phase tag), whoever submitted it,
 * complete_ns, dma_unmap_single and the tag's release, the completion delivered to its
 * submitter then; then the CQ head doorbell once for the walk. clat is from the doorbell to
 * the end of the I/O's completion work (fio's clat: submission to reap).
 *
 * Drive side, per queue (an agent on the drive's node): when the SQ tail doorbell moves, fetch
 * each new command by DMA (64 bytes at the SQ's IOVA), and its PRP list by DMA when PRP2
 * points to one; book it on the drive by its opcode and NLB: a command slot at most read_iops (write_iops) per
 * second over all queues, then the media latency, then the data on the link at read_mbps
 * (write_mbps) in command order: it completes when its last byte has crossed. At the booked
 * transfer start the agent moves the data by DMA through the IOMMU page by page (its
 * translations and memory accesses charged to the agent, overlapping the link time), then at
 * the booked end writes the CQE by DMA and raises the interrupt (a tracked store the CPU
 * polls), in order, and only into a CQ with room as the CQ head doorbell last told it (a full
 * CQ: the completions wait for the doorbell, commands are still fetched and moved). A DMA the
 * IOMMU aborts ends the command with status Data Transfer Error.
 * The agents share the drive's booking through plain fields, touched after ilab_sim_sync(),
 * in virtual-time order (as dma_engine.c). A write's data is fetched at the end of its media
 * latency, like a read's delivered: the order does not change what the IOMMU translates.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/nvme.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>

#include "workloads/group_cpus.h"

/* An IOVA no DMA domain ever maps (the software-MSI window every domain reserves): what the
 * fault-injection test points a PRP at. */
#define UNMAPPED_IOVA ILAB_MSI_IOVA_BASE

static const char *const rw_names[] = { "randread", "randwrite", "read", "write", "rw",
					"randrw", "trim", "randtrim" };
#define NR_RW (sizeof(rw_names) / sizeof(rw_names[0]))

const char *ilab_fio_rw_name(enum ilab_fio_rw rw)
{
	return (unsigned)rw < NR_RW ? rw_names[rw] : "?";
}

int ilab_fio_rw_parse(const char *name, enum ilab_fio_rw *rw)
{
	if (name && !strcmp(name, "readwrite"))
		name = "rw"; /* fio's alias */
	for (unsigned i = 0; name && i < NR_RW; i++)
		if (!strcmp(name, rw_names[i])) {
			*rw = (enum ilab_fio_rw)i;
			return 0;
		}
	return -EINVAL;
}

int ilab_nvme_build_prps(uint64_t dma, size_t len, uint64_t list_dma, uint64_t *list,
			 unsigned list_max, uint64_t *prp1, uint64_t *prp2)
{
	const uint64_t page = ILAB_NVME_PAGE;
	uint64_t first = page - (dma & (page - 1)); /* bytes PRP1's page holds */
	uint64_t next = (dma & ~(page - 1)) + page;
	uint64_t rest;
	unsigned n = 0;

	if (!prp1 || !prp2)
		return -EINVAL;
	*prp1 = dma; /* set on every path, so a caller never reads an unset PRP */
	*prp2 = 0;
	if (!len)
		return -EINVAL;
	if (len <= first)
		return 0;
	rest = len - first;
	if (rest <= page) {
		*prp2 = next;
		return 0;
	}
	if ((rest + page - 1) / page > list_max || !list)
		return -EINVAL;
	for (; rest; n++, next += page)
		rest = rest > page ? rest - page : 0, list[n] = next;
	*prp2 = list_dma;
	return (int)n;
}

/* ---- state ----------------------------------------------------------------------------------- */

/* One I/O slot of a job: its buffer, its PRP list page, what it is doing. */
struct slot {
	ilab_pa_t buf_pa;
	ilab_dma_addr_t dma;
	ilab_pa_t list_pa;
	ilab_dma_addr_t list_dma;
	uint64_t *list_va;
	uint64_t t_start, t_submit; /* submission began; the doorbell */
	unsigned len;               /* the I/O's bytes and direction (0 read, 1 write, 2 trim) */
	unsigned ddir;
	unsigned map_len;           /* bytes mapped: the data, or a trim's range list */
	unsigned tag;               /* its command's tag in the queue (the CID) */
	bool has_buf, has_list, mapped;
};

/* A command the drive has fetched and booked. */
struct pending {
	uint16_t cid;
	uint16_t status;
	uint64_t prp1, prp2;
	unsigned len;            /* from the command's NLB (DSM: its range list's bytes) ... */
	unsigned ddir;           /* ... and opcode (0 read, 1 write, 2 DSM) */
	unsigned nr;             /* DSM: ranges (CDW10 NR + 1) */
	uint64_t t_data, t_done; /* ns */
	bool data_done;
};

struct job {
	_Alignas(PLAT_CACHELINE) unsigned index; /* over all the run's jobs */
	const struct ilab_nvme_cfg *cfg;        /* its section's (n->cfg or one of also[]) */
	unsigned local;                         /* its index in that section */
	uint64_t win_lo, win_hi;                /* its section's window (win_hi UINT64_MAX:
						 * number_ios decides) */
	unsigned max_bs, min_bs;                /* its largest I/O (its buffers), smallest */
	int cpu;
	struct hwq *q;                          /* the hardware queue its CPU maps to */
	struct slot *slots;
	unsigned buf_order;
	int setup_failed;       /* -ENOMEM, -EIO */
	/* CPU side: the submitter's, and the CQ walk's (the interrupt CPU's) */
	unsigned ctx;           /* the submitter's cpu_ctx */
	bool complete_on_irq;   /* the completion work runs on the interrupt CPU */
	bool finished;          /* every I/O reaped: the job's thread is done with it */
	bool tag_wait;          /* a free slot, but no free tag in its queue: asleep on one of
				 * its wait queues (wsi) */
	unsigned wsi;
	uint64_t tag_waits;     /* submissions that waited for a tag, each once */
	uint64_t wait_since;    /* when the wait for a tag began (0: not waiting) */
	unsigned *free_stack, nfree, inflight;
	struct done *ring;      /* completions handed to the submitter (iodepth entries) */
	unsigned ring_prod, ring_cons;
	unsigned walk_done;     /* of the CQ walk under way */
	uint64_t handoff_max;   /* longest a completion handed here waited to be reaped */
	uint64_t issued, issued_bytes, rng, seq_off;
	struct ilab_nvme_job_result r; /* the window's latencies and depths */
	uint64_t map_errors;
	uint64_t remote;        /* completion work done on the interrupt CPU, not here */
	uint64_t last_done;
	uint64_t t_begin, t_end, idle_ns; /* the job's run and its waits for interrupts */
};

/* Whose command a tag (the CID) is: a job's slot. */
struct tag_owner {
	unsigned job, slot;     /* job UINT32_MAX: the tag is free */
};

/* blk-mq's most tags per hardware queue: nvme_alloc_io_tag_set takes min(sqsize,
 * BLK_MQ_MAX_DEPTH - 1), BLK_MQ_MAX_DEPTH being 10240 (include/linux/blk-mq.h), so a queue
 * deeper than 10240 entries still has 10239 commands outstanding at most. */
#define BLK_MQ_TAGS_MAX 10239u

/* sbitmap's wait queues per tag set, and most waiters one wake-up wakes
 * (include/linux/sbitmap.h: SBQ_WAIT_QUEUES, SBQ_WAKE_BATCH). */
#define SBQ_WAIT_QUEUES 8u
#define SBQ_WAKE_BATCH 8u

/* Most tags blk_mq_end_request_batch frees together, one sbitmap wake-up for them
 * (block/blk-mq.c: TAG_COMP_BATCH). */
#define TAG_COMP_BATCH 32u

/* One of sbitmap's wait queues (struct sbq_wait_state): the jobs asleep on it for a tag, in
 * the order they went to sleep (exclusive waiters: a wake-up takes them from the head). */
struct tag_wait_queue {
	unsigned *jobs, n;
};

/* One hardware queue (Linux's struct nvme_queue behind one blk-mq hardware context): every
 * CPU that maps to it submits into its one SQ under sq_lock (nvme_submit_cmd: copy the
 * command at the tail, ring the tail doorbell), and its one CQ is walked in order by the CPU
 * its vector targets (nvme_irq -> nvme_poll_cq), the CQ head doorbell once per walk. Its
 * commands carry tags of the hardware context (blk-mq's tags, as many as the queue holds,
 * qsize - 1, at most BLK_MQ_TAGS_MAX), so the I/Os in flight of all its CPUs never exceed
 * the queue's depth; a submitter without one sleeps on one of the tags' wait queues. */
struct hwq {
	/* written by the CPUs under sq_lock, polled by the drive: SQ tail doorbell */
	_Alignas(PLAT_CACHELINE) plat_word32 sq_db;
	_Alignas(PLAT_CACHELINE) plat_word32 cq_db;  /* CQ head doorbell, the walker's */
	_Alignas(PLAT_CACHELINE) plat_spinlock sq_lock;
	_Alignas(PLAT_CACHELINE) unsigned index;
	int key;                /* the first CPU of its group (the CPU itself: one per CPU) */
	bool polled;            /* a polled queue (hipri): its job's own */
	unsigned *jobs, njobs;  /* the jobs whose CPUs map to it */
	unsigned irq_ctx;       /* the cpu_ctx its vector targets (polled: the submitter) */
	/* the queue pair, coherent memory on the drive's node, set up by its first job */
	ilab_pa_t sq_pa, cq_pa;
	ilab_dma_addr_t sq_dma, cq_dma;
	uint8_t *sq_va, *cq_va;
	bool has_sq, has_cq;
	unsigned sq_tail;       /* under sq_lock */
	unsigned cq_head, cq_phase; /* the walker's */
	uint32_t msi_raised, msi_seen; /* the queue's interrupts: sent by the drive, handled */
	/* blk-mq's tags: free ones, and whose each taken one is */
	unsigned *tag_free, ntag_free;
	struct tag_owner *owner;
	unsigned inflight, inflight_max; /* tags taken */
	/* sbitmap_queue's wake-up: its wait queues (a sleeper goes on the next, wait_index;
	 * a wake-up serves the next active one, wake_index), the sleepers, and every
	 * wake_batch tags freed while some sleep, up to wake_batch of them woken */
	struct tag_wait_queue ws[SBQ_WAIT_QUEUES];
	unsigned wait_index, wake_index, ws_active, wake_batch;
	uint64_t completion_cnt, wakeup_cnt, tag_wakeups;
	uint64_t walk_max, walk_max_ns; /* the longest CQ walk: entries, and its time */
	uint64_t sq_wraps, cq_wraps;
	/* the walk's io_comp_batch (5.16 on): entries whose completion is left for after the
	 * walk and its doorbell, in CQ order (at most the tags) */
	struct batched { uint16_t cid, sf; } *batch;
	unsigned nbatch;
	uint64_t batched;       /* completions finished in a batch */
	/* drive private */
	struct plat_agent *agent;
	struct pending *fifo;   /* booked commands, in fetch order (qsize entries) */
	unsigned fifo_head, fifo_n;
	unsigned dev_sq_head, dev_cq_tail, dev_phase;
	unsigned dev_cq_head;   /* the CQ head doorbell as the drive last read it */
	bool cq_rung;           /* the host wrote the CQ head doorbell since the drive read it */
	bool cq_stalled;        /* the drive waits for the doorbell: its next CQE has no room */
	uint64_t cq_full_waits; /* times the drive found the CQ full and waited for room */
	uint64_t faults, commands, prp_lists, dsm_commands, dsm_range_reads, dsm_blocks;
	uint64_t *pages;        /* the command being moved: its PRP entries ... */
	uint8_t *prp_raw;       /* ... and its PRP list as read (a fiber's stack is small) */
};

/* A completion the interrupt CPU hands to the submitter: done (the completion work ran there
 * and ended at t), or still to do on the submitter (an IPI, rq_affinity). Single producer (the
 * queue's interrupt CPU), single consumer (the submitter); the simulator runs one fiber at a
 * time, so the indices are plain fields. */
struct done {
	uint16_t cid, sf;
	bool work;
	uint64_t t;             /* handed over (the work done), or its work's end */
};

/* One simulated CPU of the run: a submitter (job >= 0), an interrupt target, or both. Its
 * events word is what wakes it: the drive's interrupts and completions handed to it. */
struct cpu_ctx {
	_Alignas(PLAT_CACHELINE) plat_word32 events;
	_Alignas(PLAT_CACHELINE) int cpu;
	int job;                /* the job it submits for, -1: none */
	unsigned *irq_qs, nirq; /* queues whose interrupt it takes */
	bool shared;            /* more than one producer raises its events word */
	uint32_t raised;        /* its single producer's count (!shared) */
	uint64_t interrupts, ipis, t_begin, t_end, idle_ns;
};

struct nvme {
	struct ilab_board *board;
	struct ilab_mem *mem;
	struct ilab_dev *dev;
	const struct ilab_nvme_cfg *cfg; /* the drive, the CPU costs, the first section */
	unsigned unit;
	unsigned qsize;
	unsigned ntags;         /* tags per hardware queue: qsize - 1, at most BLK_MQ_TAGS_MAX */
	unsigned max_bs;        /* the largest I/O of any job: payload and scratch */
	unsigned njobs;         /* over all sections */
	uint64_t start_ns;
	struct job *jobs;
	struct hwq *qs;         /* the hardware queues, at most one per job */
	unsigned nq;
	bool one_hw_queue;      /* the controller's one queue is blk-mq's only hardware context
				 * (nr_hw_queues == 1) on a machine of several CPUs */
	struct cpu_ctx *ctx;
	unsigned nctx;
	void *payload;          /* what the drive writes on a read (one I/O's bytes) */
	void *scratch;          /* what it reads on a write */
	/* the drive's booking, shared by its queues (picoseconds; per direction) */
	uint64_t slot_ps[ILAB_FIO_DDIRS], latency_ps[ILAB_FIO_DDIRS], mbps[ILAB_FIO_DDIRS];
	uint64_t next_slot_ps, link_free_ps[2]; /* the link each way (PCIe is full duplex) */
};

static unsigned order_of(size_t bytes)
{
	unsigned o = 0;

	while (((size_t)ILAB_PAGE_SIZE << o) < bytes)
		o++;
	return o;
}

/* A write's data and a trim's range list go to the device; a read's come from it. */
static enum ilab_dma_dir dma_dir(unsigned ddir)
{
	return ddir ? ILAB_DMA_TO_DEVICE : ILAB_DMA_FROM_DEVICE;
}

/* ---- set-up and tear-down, on each job's CPU ---------------------------------------------- */

static int alloc_coherent(struct nvme *n, size_t size, ilab_pa_t *pa, ilab_dma_addr_t *dma,
			  void **va)
{
	if (ilab_dma_alloc_coherent(n->dev, size, pa, dma, NULL))
		return -ENOMEM;
	*va = ilab_mem_va(n->mem, *pa, size);
	if (!*va) {
		ilab_dma_free_coherent(n->dev, size, *pa, *dma);
		return -EFAULT;
	}
	memset(*va, 0, size);
	return 0;
}

/* The queue's SQ and CQ, allocated by its first job (nvme_alloc_queue at probe). */
static int queue_setup(struct nvme *n, struct hwq *q)
{
	void *va;

	if (alloc_coherent(n, (size_t)n->qsize * ILAB_NVME_SQE_BYTES, &q->sq_pa, &q->sq_dma, &va))
		return -ENOMEM;
	q->sq_va = va;
	q->has_sq = true;
	if (alloc_coherent(n, (size_t)n->qsize * ILAB_NVME_CQE_BYTES, &q->cq_pa, &q->cq_dma, &va))
		return -ENOMEM;
	q->cq_va = va;
	q->has_cq = true;
	return 0;
}

static void queue_teardown(struct nvme *n, struct hwq *q)
{
	if (q->has_sq)
		ilab_dma_free_coherent(n->dev, (size_t)n->qsize * ILAB_NVME_SQE_BYTES, q->sq_pa,
				       q->sq_dma);
	if (q->has_cq)
		ilab_dma_free_coherent(n->dev, (size_t)n->qsize * ILAB_NVME_CQE_BYTES, q->cq_pa,
				       q->cq_dma);
	q->has_sq = q->has_cq = false;
}

static void job_setup(unsigned idx, void *arg)
{
	struct nvme *n = arg;
	struct job *j = &n->jobs[idx];
	void *va;

	if (j->q->jobs[0] == idx && queue_setup(n, j->q))
		goto fail;
	for (unsigned i = 0; i < j->cfg->iodepth; i++) {
		struct slot *s = &j->slots[i];

		if (ilab_mem_alloc_pages(n->mem, plat_this_node(), j->buf_order, &s->buf_pa))
			goto fail;
		s->has_buf = true;
		if (j->max_bs > 2 * ILAB_NVME_PAGE) { /* Linux: a dma_pool page for the list */
			if (alloc_coherent(n, ILAB_NVME_PAGE, &s->list_pa, &s->list_dma, &va))
				goto fail;
			s->list_va = va;
			s->has_list = true;
		}
	}
	return;
fail:
	j->setup_failed = -ENOMEM;
}

static void job_teardown(unsigned idx, void *arg)
{
	struct nvme *n = arg;
	struct job *j = &n->jobs[idx];

	for (unsigned i = 0; i < j->cfg->iodepth; i++) {
		struct slot *s = &j->slots[i];

		if (s->mapped)
			ilab_dma_unmap_single(n->dev, s->dma, s->map_len, dma_dir(s->ddir));
		if (s->has_list)
			ilab_dma_free_coherent(n->dev, ILAB_NVME_PAGE, s->list_pa, s->list_dma);
		if (s->has_buf)
			ilab_mem_free_pages(n->mem, s->buf_pa, j->buf_order);
		s->mapped = s->has_list = s->has_buf = false;
	}
	if (j->q->jobs[0] == idx)
		queue_teardown(n, j->q);
}

/* ---- the drive: one agent per queue -------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Book a command on the drive: a command slot, the media latency, the link in order, each
 * by the command's direction's figures (a mix shares the one slot timeline; the link is one
 * timeline each way: a DSM's range list goes host to device, as a write's data). */
static void book(struct nvme *n, struct pending *p)
{
	uint64_t now, start, x0, mbps = n->mbps[p->ddir];
	unsigned link = p->ddir != 0;
	/* bytes / (MB/s) = us: x 1e6 for ps */
	uint64_t xfer_ps = mbps ? ((uint64_t)p->len * 1000000ull + mbps / 2) / mbps : 0;

	ilab_sim_sync(); /* the booking is shared: take it in virtual-time order */
	now = plat_now_ns() * 1000;
	start = n->next_slot_ps > now ? n->next_slot_ps : now;
	n->next_slot_ps = start + n->slot_ps[p->ddir];
	x0 = start + n->latency_ps[p->ddir];
	if (n->link_free_ps[link] > x0)
		x0 = n->link_free_ps[link];
	n->link_free_ps[link] = x0 + xfer_ps;
	p->t_data = x0 / 1000;
	p->t_done = (n->link_free_ps[link] + 999) / 1000;
}

/* Fetch the SQ entry at the drive's head (and its PRP list), book it. */
static void fetch(struct nvme *n, struct hwq *q)
{
	struct pending *p = &q->fifo[(q->fifo_head + q->fifo_n) % n->qsize];
	uint8_t sqe[ILAB_NVME_SQE_BYTES];
	uint64_t iova = q->sq_dma + (uint64_t)q->dev_sq_head * ILAB_NVME_SQE_BYTES;

	memset(p, 0, sizeof(*p));
	q->dev_sq_head = ilab_nvme_q_next(q->dev_sq_head, n->qsize);
	q->fifo_n++;
	if (ilab_board_dma_read(n->board, n->unit, n->dev->sid, 0, false, iova, sqe, sizeof(sqe),
				NULL)) {
		/* the SQ itself is unreachable: nothing names the command; a real drive would
		 * report it as a controller fatal status. The driver never unmaps its SQ. */
		q->faults++;
		p->status = ILAB_NVME_SC_DATA_XFER_ERROR;
		p->cid = UINT16_MAX;
		p->t_data = p->t_done = plat_now_ns();
		p->data_done = true;
		return;
	}
	p->cid = (uint16_t)get_le(sqe + 2, 2);
	p->ddir = sqe[0] == ILAB_NVME_OPC_DSM ? 2 : sqe[0] == ILAB_NVME_OPC_WRITE;
	if (p->ddir == 2) { /* CDW10 NR, 0-based: the data is the range list */
		p->nr = (unsigned)(get_le(sqe + 40, 4) & 0xff) + 1;
		p->len = p->nr * ILAB_NVME_DSM_RANGE_BYTES;
	} else {
		p->len = ((unsigned)get_le(sqe + 48, 2) + 1) * 512; /* NLB, 0-based, 512 B blocks */
	}
	p->prp1 = get_le(sqe + 24, 8);
	p->prp2 = get_le(sqe + 32, 8);
	book(n, p);
}

/* The PRP entries of a fetched command, the list read by DMA when there is one. Returns the
 * number of pages, or -EIO when the list cannot be read. */
static int read_prps(struct nvme *n, struct hwq *q, const struct pending *p, uint64_t *pages)
{
	size_t len = p->len;
	uint64_t first = ILAB_NVME_PAGE - (p->prp1 & (ILAB_NVME_PAGE - 1));
	unsigned np = 1;

	pages[0] = p->prp1;
	if (len <= first)
		return 1;
	if (len - first <= ILAB_NVME_PAGE) {
		pages[1] = p->prp2;
		return 2;
	}
	np += (unsigned)((len - first + ILAB_NVME_PAGE - 1) / ILAB_NVME_PAGE);
	q->prp_lists++;
	if (ilab_board_dma_read(n->board, n->unit, n->dev->sid, 0, false, p->prp2, q->prp_raw,
				(size_t)(np - 1) * 8, NULL)) {
		q->faults++;
		return -EIO;
	}
	for (unsigned i = 1; i < np; i++)
		pages[i] = get_le(q->prp_raw + (i - 1) * 8, 8);
	return (int)np;
}

/* A DSM command's range list, read by DMA through the IOMMU at PRP1 (it fits one page:
 * 256 ranges of 16 bytes), then deallocated: each range's NLB (bytes 4-7) from its SLBA
 * (bytes 8-15). The mapping table update costs the drive its booked trim slot and latency;
 * no data moves. */
static void deallocate(struct nvme *n, struct hwq *q, struct pending *p)
{
	uint8_t *ranges = q->prp_raw; /* a page: ILAB_NVME_DSM_MAX_RANGES x 16 bytes */

	p->data_done = true;
	q->dsm_commands++;
	if ((p->prp1 & (ILAB_NVME_PAGE - 1)) + p->len > ILAB_NVME_PAGE ||
	    ilab_board_dma_read(n->board, n->unit, n->dev->sid, 0, false, p->prp1, ranges,
				p->len, NULL)) {
		q->faults++;
		p->status = ILAB_NVME_SC_DATA_XFER_ERROR;
		return;
	}
	q->dsm_range_reads++;
	for (unsigned i = 0; i < p->nr; i++)
		q->dsm_blocks += get_le(ranges + i * ILAB_NVME_DSM_RANGE_BYTES + 4, 4);
}

/* Move the data of the FIFO's head by DMA, page by page through the IOMMU. */
static void move_data(struct nvme *n, struct hwq *q, struct pending *p)
{
	uint64_t *pages = q->pages;
	size_t done = 0, len = p->len;
	int np;

	if (p->ddir == 2) {
		deallocate(n, q, p);
		return;
	}
	np = read_prps(n, q, p, pages);
	p->data_done = true;
	if (np < 0) {
		p->status = ILAB_NVME_SC_DATA_XFER_ERROR;
		return;
	}
	for (int i = 0; i < np && done < len; i++) {
		uint64_t off = pages[i] & (ILAB_NVME_PAGE - 1);
		size_t chunk = ILAB_NVME_PAGE - off;
		int rc;

		if (i > 0 && off) { /* only PRP1 may have an offset */
			p->status = ILAB_NVME_SC_DATA_XFER_ERROR;
			return;
		}
		if (chunk > len - done)
			chunk = len - done;
		if (p->ddir)
			rc = ilab_board_dma_read(n->board, n->unit, n->dev->sid, 0, false, pages[i],
						 (char *)n->scratch + done, chunk, NULL);
		else
			rc = ilab_board_dma_write(n->board, n->unit, n->dev->sid, 0, false,
						  pages[i], (const char *)n->payload + done, chunk,
						  NULL);
		if (rc) {
			q->faults++;
			p->status = ILAB_NVME_SC_DATA_XFER_ERROR;
			return;
		}
		done += chunk;
	}
}

/* Wake a CPU: the drive's interrupt, or completions handed to it. A word with one producer is
 * stored (the MSI-X message's write), one with several is added to so none is lost. */
static void raise_events(struct cpu_ctx *x)
{
	if (x->shared)
		plat_fetch_add32(&x->events, 1);
	else
		plat_store32(&x->events, ++x->raised);
}

/* Post the FIFO head's completion entry by DMA and raise the interrupt. */
static void complete(struct nvme *n, struct hwq *q, struct pending *p)
{
	uint8_t cqe[ILAB_NVME_CQE_BYTES] = { 0 };
	uint64_t iova = q->cq_dma + (uint64_t)q->dev_cq_tail * ILAB_NVME_CQE_BYTES;

	put_le(cqe + 8, q->dev_sq_head, 2);    /* SQHD */
	put_le(cqe + 10, q->index + 1u, 2);    /* SQID (queue 0 is the admin queue) */
	put_le(cqe + 12, p->cid, 2);
	put_le(cqe + 14, (uint64_t)p->status << 1 | q->dev_phase, 2);
	if (ilab_board_dma_write(n->board, n->unit, n->dev->sid, 0, false, iova, cqe, sizeof(cqe),
				 NULL))
		q->faults++; /* the CQ is never unmapped: the CPU would wait, the run deadlock */
	q->dev_cq_tail = ilab_nvme_q_next(q->dev_cq_tail, n->qsize);
	if (!q->dev_cq_tail)
		q->dev_phase ^= 1;
	q->commands++;
	q->fifo_head = (q->fifo_head + 1) % n->qsize;
	q->fifo_n--;
	q->msi_raised++; /* MSI-X: one message per entry, to the vector's CPU */
	raise_events(&n->ctx[q->irq_ctx]);
}

/* Room in the CQ for one more entry, as the controller sees it (NVM Express Base
 * Specification 2.0, 3.3.1.5 Full Queue: a queue is full when its head equals its tail plus
 * one; 3.3.1.2 Queue Usage, Completion Queue Flow Control: with no free slot the controller
 * shall not post status until the host frees slots by the CQ head doorbell). The drive reads
 * the doorbell only when the CQ looks full by the head it read last and the host has written
 * it since. */
static bool cq_has_room(struct nvme *n, struct hwq *q)
{
	unsigned next = ilab_nvme_q_next(q->dev_cq_tail, n->qsize);

	if (next != q->dev_cq_head)
		return true;
	if (q->cq_rung) {
		q->cq_rung = false;
		q->dev_cq_head = plat_load32(&q->cq_db);
	}
	return next != q->dev_cq_head;
}

struct db_arg {
	uint32_t seen;
	const struct hwq *q;
};

/* The SQ tail doorbell moved, or (the drive waiting for CQ room) the CQ head doorbell was
 * written: the host's doorbell writes are the controller's registers, seen as written. */
static bool db_moved(uint64_t v, void *arg)
{
	const struct db_arg *a = arg;

	return (uint32_t)v != a->seen || (a->q->cq_stalled && a->q->cq_rung);
}

struct agent_arg {
	struct nvme *n;
	struct hwq *q;
};

static void drive_queue(struct plat_agent *agent, void *arg)
{
	struct agent_arg *a = arg;
	struct nvme *n = a->n;
	struct hwq *q = a->q;
	struct db_arg db = { .q = q };

	q->dev_phase = 1;
	while (!plat_agent_should_stop(agent)) {
		uint64_t now = plat_now_ns(), next = 0;
		struct pending *p = q->fifo_n ? &q->fifo[q->fifo_head] : NULL;
		bool full = false;

		if (p) {
			next = p->data_done ? p->t_done : p->t_data;
			if (now >= next) {
				if (!p->data_done) {
					move_data(n, q, p);
					continue;
				}
				if (cq_has_room(n, q)) {
					q->cq_stalled = false;
					complete(n, q, p);
					continue;
				}
				/* the CQ is full: the completions wait for the head doorbell
				 * (in order); commands are still fetched and processed */
				full = true;
				q->cq_full_waits += !q->cq_stalled;
			}
		}
		q->cq_stalled = full; /* the walker's doorbell write wakes the drive */
		if (plat_poll(&q->sq_db, 4, db_moved, &db, p && !full ? next - now : 0))
			continue; /* the next event's time, or asked to stop */
		db.seen = plat_load32(&q->sq_db);
		while (q->dev_sq_head != db.seen && q->fifo_n + 1 < n->qsize)
			fetch(n, q);
	}
}

/* ---- the CPU side: one job per thread ------------------------------------------------------ */

static uint64_t next_rand(uint64_t *s)
{
	/* splitmix64: the offsets only need to differ, deterministically per seed and job */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool may_issue(const struct nvme *n, const struct job *j)
{
	(void)n;
	if (j->win_hi != UINT64_MAX)
		return plat_now_ns() < j->win_hi;
	return j->issued < j->cfg->number_ios &&
	       (!j->cfg->io_bytes || j->issued_bytes < j->cfg->io_bytes);
}

/* The next I/O's direction (1: write, 2: trim): a mix draws it, a read when a draw in
 * 1..100 is at most rwmixread (fio's get_rand_ddir). */
static unsigned next_dir(const struct ilab_nvme_cfg *c, struct job *j)
{
	if (ilab_fio_rw_is_trim(c->rw))
		return 2;
	if (!ilab_fio_rw_is_mixed(c->rw))
		return ilab_fio_rw_is_write(c->rw);
	return next_rand(&j->rng) % 100 + 1 > c->rwmixread;
}

/* The next I/O's bytes in direction d: fio's get_next_buflen (nvme.h, ilab_nvme_bs_dist). */
static unsigned next_len(const struct ilab_nvme_cfg *c, struct job *j, unsigned d)
{
	const struct ilab_nvme_bs_dist *b = &c->bs_dist[d < 2 ? d : 0];
	uint64_t len;
	double u;

	if (d == 2 || !b->min) /* a trim is bs bytes */
		return c->bs;
	if (b->min == b->max)
		return b->min;
	u = (double)(next_rand(&j->rng) >> 11) * 0x1p-53; /* [0, 1) */
	if (b->nsplit) {
		unsigned perc = 0;

		len = b->max;
		for (unsigned i = 0; i < b->nsplit; i++) {
			if (!b->split[i].perc)
				continue;
			len = b->split[i].bs;
			perc += b->split[i].perc;
			if (u * 100 <= perc)
				break;
		}
	} else {
		len = b->min + (uint64_t)((double)b->max * u);
	}
	len -= len % b->min;
	return (unsigned)(len > b->max ? b->max : len);
}

/* The I/O's byte offset in the region: sequential from the start (wrapping), or a uniform
 * multiple of the smallest I/O (fio's blockalign). */
static uint64_t next_offset(const struct nvme *n, struct job *j, unsigned len)
{
	const struct ilab_nvme_cfg *c = j->cfg;
	uint64_t region = c->size_bytes ? c->size_bytes : 1ull << 40, off, nblocks;

	if (c->rw == ILAB_FIO_READ || c->rw == ILAB_FIO_WRITE || c->rw == ILAB_FIO_RW ||
	    c->rw == ILAB_FIO_TRIM) {
		if (j->seq_off + len > region)
			j->seq_off = 0;
		off = j->seq_off;
		j->seq_off += len;
		return off;
	}
	nblocks = region >= len ? (region - len) / j->min_bs + 1 : 1;
	return next_rand(&j->rng) % nblocks * j->min_bs;
}

/* A trim's Dataset Management range list in the slot's buffer (Linux's nvme_setup_discard:
 * one range per discard bio, the whole I/O, in 512-byte blocks): 16 bytes to map. */
static unsigned write_dsm_range(struct nvme *n, struct slot *s, uint64_t off)
{
	uint8_t *r = ilab_mem_va(n->mem, s->buf_pa, ILAB_NVME_DSM_RANGE_BYTES);

	memset(r, 0, ILAB_NVME_DSM_RANGE_BYTES);      /* context attributes 0 */
	put_le(r + 4, s->len / 512, 4);               /* length in logical blocks */
	put_le(r + 8, off / 512, 8);                  /* starting LBA */
	plat_mem_touch(r, ILAB_NVME_DSM_RANGE_BYTES, true);
	return ILAB_NVME_DSM_RANGE_BYTES;
}

/* Submit one I/O in slot s: map, PRPs, the SQ entry, the doorbell. Returns false when the
 * map failed (the slot stays free). A trim maps its range list, not data. */
static bool submit(struct nvme *n, struct job *j, unsigned si)
{
	const struct ilab_nvme_cfg *c = j->cfg;
	struct slot *s = &j->slots[si];
	struct hwq *q = j->q;
	uint64_t off, prp1, prp2;
	uint8_t cmd[ILAB_NVME_SQE_BYTES], *sqe;
	int nl;

	/* fio's slat holds io_submit's sleep for a tag (blk_mq_get_tag) */
	s->t_start = j->wait_since ? j->wait_since : plat_now_ns();
	j->wait_since = 0;
	plat_charge_ns(n->cfg->submit_ns); /* the machine's block stack */
	s->ddir = next_dir(c, j);
	s->len = next_len(c, j, s->ddir);
	off = next_offset(n, j, s->len) + c->offset_bytes;
	s->map_len = s->ddir == 2 ? write_dsm_range(n, s, off) : s->len;
	s->dma = ilab_dma_map_single(n->dev, s->buf_pa, s->map_len, dma_dir(s->ddir));
	if (ilab_dma_mapping_error(s->dma)) {
		j->map_errors++;
		return false;
	}
	s->mapped = true;
	j->issued++;
	j->issued_bytes += s->len;
	nl = ilab_nvme_build_prps(s->dma, s->map_len, s->list_dma, s->list_va, 512, &prp1, &prp2);
	if (nl > 0)
		plat_mem_touch(s->list_va, (size_t)nl * 8, true);
	if (c->inject_unmapped_every && j->issued % c->inject_unmapped_every == 0)
		prp1 = UNMAPPED_IOVA;
	memset(cmd, 0, ILAB_NVME_SQE_BYTES);         /* built on the stack, as nvme_setup_cmd */
	put_le(cmd + 2, s->tag, 2);                   /* CID: the request's tag */
	put_le(cmd + 4, 1, 4);                        /* NSID */
	put_le(cmd + 24, prp1, 8);
	put_le(cmd + 32, prp2, 8);
	if (s->ddir == 2) {
		cmd[0] = ILAB_NVME_OPC_DSM;
		put_le(cmd + 40, 0, 4);               /* CDW10 NR: one range, 0-based */
		put_le(cmd + 44, ILAB_NVME_DSM_AD, 4); /* CDW11: deallocate */
	} else {
		cmd[0] = s->ddir ? ILAB_NVME_OPC_WRITE : ILAB_NVME_OPC_READ;
		put_le(cmd + 40, off / 512, 8);       /* SLBA in 512-byte blocks */
		put_le(cmd + 48, s->len / 512 - 1, 2); /* NLB, 0-based */
	}
	/* nvme_submit_cmd: the queue's CPUs copy into its one SQ and ring its doorbell in turn */
	plat_spin_lock(&q->sq_lock);
	sqe = q->sq_va + (size_t)q->sq_tail * ILAB_NVME_SQE_BYTES;
	memcpy(sqe, cmd, ILAB_NVME_SQE_BYTES);
	plat_mem_touch(sqe, ILAB_NVME_SQE_BYTES, true);
	q->sq_tail = ilab_nvme_q_next(q->sq_tail, n->qsize);
	if (!q->sq_tail)
		q->sq_wraps++;
	plat_store32(&q->sq_db, q->sq_tail);          /* the SQ tail doorbell */
	plat_spin_unlock(&q->sq_lock);
	s->t_submit = plat_now_ns();
	return true;
}

/* fio's iodepth_level bucket of d I/Os in flight: 1, 2, 4, ... 32, >=64. */
static unsigned depth_bucket(unsigned d)
{
	unsigned b = 0;

	while (b + 1 < ILAB_NVME_DEPTH_BUCKETS && d >= 2u << b)
		b++;
	return b;
}

/* fio's iodepth_submit / iodepth_complete bucket of n I/Os in one call. */
static unsigned batch_bucket(unsigned n)
{
	unsigned b = 1, top = 4;

	if (!n)
		return 0;
	while (b + 1 < ILAB_NVME_DEPTH_BUCKETS && n > top) {
		b++;
		top *= 2;
	}
	return b;
}

static void record(struct job *j, const struct slot *s, uint64_t now, bool error)
{
	struct ilab_nvme_dir_result *d = &j->r.dir[s->ddir];

	j->r.ios++;
	j->r.errors += error;
	d->ios++;
	d->errors += error;
	d->bytes += s->len;
	ilab_lat_hist_add(&d->slat, s->t_submit - s->t_start);
	ilab_lat_hist_add(&d->clat, now - s->t_submit);
	ilab_lat_hist_add(&d->lat, now - s->t_start);
}

/* blk_mq_get_tag: a free tag of the job's hardware queue for slot si, or false (the
 * submitter sleeps until a completion frees one). */
static bool get_tag(struct job *j, unsigned si)
{
	struct hwq *q = j->q;
	unsigned tag;

	if (!q->ntag_free)
		return false;
	tag = q->tag_free[--q->ntag_free];
	q->owner[tag] = (struct tag_owner){ .job = j->index, .slot = si };
	j->slots[si].tag = tag;
	if (++q->inflight > q->inflight_max)
		q->inflight_max = q->inflight;
	return true;
}

/* blk_mq_get_tag's sleep (sbitmap_prepare_to_wait on bt_wait_ptr): job j goes to the tail
 * of the queue's next wait queue, round robin. */
static void tag_sleep(struct hwq *q, struct job *j)
{
	struct tag_wait_queue *ws = &q->ws[q->wait_index];

	j->wsi = q->wait_index;
	q->wait_index = (q->wait_index + 1) % SBQ_WAIT_QUEUES;
	ws->jobs[ws->n++] = j->index;
	q->ws_active++;
	j->tag_wait = true;
}

/* Off its wait queue (sbitmap_finish_wait, or the wake-up's autoremove). */
static void tag_unsleep(struct hwq *q, struct job *j)
{
	struct tag_wait_queue *ws = &q->ws[j->wsi];
	unsigned k = 0;

	while (k < ws->n && ws->jobs[k] != j->index)
		k++;
	memmove(&ws->jobs[k], &ws->jobs[k + 1], (ws->n - k - 1) * sizeof(*ws->jobs));
	ws->n--;
	q->ws_active--;
	j->tag_wait = false;
}

/* Wake nr sleepers (__sbitmap_queue_wake_up): from the wait queue at wake_index on, each
 * index passed before its queue is looked at (so the queues take turns), up to nr from the
 * head of each queue with sleepers, on to the next while fewer than nr are woken; the index
 * is left past the last queue looked at. A woken one on CPU ctx needs no wake-up: it retries
 * when this CPU's loop comes back to it. */
static void tag_wake(struct nvme *n, unsigned ctx, struct hwq *q, unsigned nr)
{
	unsigned wi = q->wake_index;

	for (unsigned i = 0; i < SBQ_WAIT_QUEUES && nr; i++) {
		struct tag_wait_queue *ws = &q->ws[wi];

		wi = (wi + 1) % SBQ_WAIT_QUEUES;
		for (; ws->n && nr; nr--) {
			struct job *w = &n->jobs[ws->jobs[0]];

			tag_unsleep(q, w);
			q->tag_wakeups++;
			if (w->ctx != ctx)
				raise_events(&n->ctx[w->ctx]);
		}
	}
	q->wake_index = wi;
}

/* blk_mq_put_tag at the end of a request's completion, or blk_mq_put_tags for a batch's nr
 * (blk_mq_end_request_batch), on CPU ctx: the tags are free again. sbitmap's wake-up
 * (sbitmap_queue_wake_up(nr), Linux 6.2 on): while submitters sleep, the tags freed count
 * towards the next wake_batch, and a call that reaches it wakes wake_batch of them, over as
 * many wait queues as it takes: about one per tag freed one by one, wake_batch per call. */
static void put_tags(struct nvme *n, unsigned ctx, struct hwq *q, const unsigned *tags,
		     unsigned nr)
{
	for (unsigned i = 0; i < nr; i++) {
		q->owner[tags[i]].job = UINT32_MAX;
		q->tag_free[q->ntag_free++] = tags[i];
		q->inflight--;
	}
	if (!q->ws_active)
		return;
	q->completion_cnt += nr;
	if (q->completion_cnt - q->wakeup_cnt < q->wake_batch)
		return;
	q->wakeup_cnt += q->wake_batch;
	tag_wake(n, ctx, q, q->wake_batch);
}

static void put_tag(struct nvme *n, unsigned ctx, struct hwq *q, unsigned tag)
{
	put_tags(n, ctx, q, &tag, 1);
}

/* The unmap of one I/O's completion on this CPU (nvme_pci_unmap_rq), with its complete_ns:
 * its cost (strict: the invalidation and its sync) lands here, its IOVA goes into this CPU's
 * rcache. */
static void unmap_io(struct nvme *n, struct slot *s)
{
	plat_charge_ns(n->cfg->complete_ns);
	ilab_dma_unmap_single(n->dev, s->dma, s->map_len, dma_dir(s->ddir));
	s->mapped = false;
}

/* The completion work of one I/O on this CPU (nvme_pci_complete_rq): the unmap, then the
 * tag's release. */
static void complete_io(struct nvme *n, unsigned ctx, struct job *j, struct slot *s)
{
	unmap_io(n, s);
	put_tag(n, ctx, j->q, s->tag);
}

/* The submitter's reap of a completed I/O (fio's io_getevents): the slot is free again. at is
 * when its completion work ended (the clat's end). */
static void reaped(struct job *j, unsigned cid, uint16_t sf, uint64_t at)
{
	if (at >= j->win_lo && at < j->win_hi)
		record(j, &j->slots[cid], at, (sf >> 1) != ILAB_NVME_SC_SUCCESS);
	j->last_done = at;
	j->free_stack[j->nfree++] = cid;
	j->inflight--;
}

/* Hand a completion to its submitter's ring, done here or (an IPI) still to do there, and
 * signal the submitter when its ring was empty, as blk_mq_complete_send_ipi's llist_add: one
 * that has not drained it yet will see this entry too, since it drains up to the producer's
 * index before it sleeps again. */
static void hand_over(struct nvme *n, struct job *j, unsigned si, uint16_t sf)
{
	bool was_empty = j->ring_cons == j->ring_prod;
	struct done *d = &j->ring[j->ring_prod++ % j->cfg->iodepth];

	*d = (struct done){ .cid = (uint16_t)si, .sf = sf, .work = !j->complete_on_irq,
			    .t = plat_now_ns() };
	if (was_empty)
		raise_events(&n->ctx[j->ctx]);
}

/* A completion whose work ran on CPU xi goes to its submitter: reaped at once when xi is the
 * submitter's, else handed over (the submitter's wake-up, blk_mq_end_request's bio_endio). */
static void finish_here(struct nvme *n, unsigned xi, struct job *j, unsigned si, uint16_t sf)
{
	if (j->ctx == xi) {
		reaped(j, si, sf, plat_now_ns());
		return;
	}
	j->remote++;
	hand_over(n, j, si, sf);
}

/* Whether a completion the walking CPU finishes goes into the walk's io_comp_batch (5.16 on):
 * blk_mq_add_to_batch takes a request without error (fio's have no I/O scheduler and no
 * end_io), and is only reached when blk_mq_complete_request_remote kept the completion here.
 * With one hardware queue it never does for an interrupt's completion: it raises
 * BLOCK_SOFTIRQ for each (nr_hw_queues == 1; a polled request excepted), so nothing is
 * batched. The model then finishes them as walked, as before 5.16 (the softirq's deferral to
 * the handler's end is not modelled). */
static bool batchable(const struct nvme *n, uint16_t sf)
{
	return !n->cfg->no_comp_batch && !n->one_hw_queue && (sf >> 1) == ILAB_NVME_SC_SUCCESS;
}

/* One CQ entry of the walk on CPU x (nvme_handle_cqe). One whose completion goes to another
 * CPU (the IPI of rq_affinity, blk_mq_complete_request_remote) is handed over as walked.
 * One completed on this CPU (the submitter's own, or rq_affinity keeps it here) goes into
 * the walk's batch from 5.16 (blk_mq_add_to_batch: a request without error; fio's have no
 * I/O scheduler and no end_io), finished after the doorbell; before 5.16, or with an error,
 * its work runs now (nvme_pci_complete_rq). Delivered as each is finished, not at the walk's
 * end: the submitter runs meanwhile on its own CPU. */
static void walk_entry(struct nvme *n, struct cpu_ctx *x, struct job *j, unsigned si,
		       uint16_t sf)
{
	unsigned xi = (unsigned)(x - n->ctx);
	struct hwq *q = j->q;

	j->walk_done++;
	if (j->ctx != xi && !j->complete_on_irq) {
		hand_over(n, j, si, sf);
		return;
	}
	if (batchable(n, sf)) {
		q->batch[q->nbatch++] = (struct batched){ .cid = (uint16_t)j->slots[si].tag,
							  .sf = sf };
		return;
	}
	complete_io(n, xi, j, &j->slots[si]);
	finish_here(n, xi, j, si, sf);
}

/* The walk's batch on CPU xi, after its doorbell (nvme_pci_complete_batch): every I/O
 * unmapped first, then each delivered in turn (blk_mq_end_request_batch), its tag freed
 * with up to TAG_COMP_BATCH others, one sbitmap wake-up for them. */
static void complete_batch(struct nvme *n, unsigned xi, struct hwq *q)
{
	unsigned tags[TAG_COMP_BATCH], nr = 0;

	for (unsigned i = 0; i < q->nbatch; i++) {
		struct tag_owner o = q->owner[q->batch[i].cid];

		unmap_io(n, &n->jobs[o.job].slots[o.slot]);
	}
	for (unsigned i = 0; i < q->nbatch; i++) {
		struct tag_owner o = q->owner[q->batch[i].cid];

		finish_here(n, xi, &n->jobs[o.job], o.slot, q->batch[i].sf);
		if (nr == TAG_COMP_BATCH) {
			put_tags(n, xi, q, tags, nr);
			nr = 0;
		}
		tags[nr++] = q->batch[i].cid;
	}
	if (nr)
		put_tags(n, xi, q, tags, nr);
	q->batched += q->nbatch;
	q->nbatch = 0;
}

/* The interrupt handler's walk of queue q's one CQ on its vector's CPU x (nvme_poll_cq):
 * every entry with the current phase, in CQ order, whichever of the queue's CPUs submitted
 * it, each handled as walk_entry says; then the CQ head doorbell, once for the walk, which
 * gives the drive room in a full CQ; then the walk's batch (nvme_irq). Returns entries. */
static unsigned walk_cq(struct nvme *n, struct cpu_ctx *x, struct hwq *q)
{
	uint64_t t0 = plat_now_ns();
	unsigned done = 0;

	for (;;) {
		uint8_t *cqe = q->cq_va + (size_t)q->cq_head * ILAB_NVME_CQE_BYTES;
		uint16_t sf, cid;
		struct tag_owner o;

		plat_mem_touch(cqe, ILAB_NVME_CQE_BYTES, false);
		sf = (uint16_t)get_le(cqe + 14, 2);
		if ((sf & 1) != q->cq_phase)
			break;
		cid = (uint16_t)get_le(cqe + 12, 2);
		q->cq_head = ilab_nvme_q_next(q->cq_head, n->qsize);
		if (!q->cq_head) {
			q->cq_phase ^= 1;
			q->cq_wraps++;
		}
		done++;
		o = cid < n->ntags ? q->owner[cid] : (struct tag_owner){ .job = UINT32_MAX };
		if (o.job >= n->njobs || !n->jobs[o.job].slots[o.slot].mapped)
			continue; /* not one of ours: a drive bug, counted by the I/O never ending */
		walk_entry(n, x, &n->jobs[o.job], o.slot, sf);
	}
	if (done) {
		plat_store32(&q->cq_db, q->cq_head); /* nvme_ring_cq_doorbell */
		q->cq_rung = true;
		if (q->cq_stalled) /* the register write reaches the waiting controller */
			plat_agent_wake(q->agent);
	}
	if (q->nbatch)
		complete_batch(n, (unsigned)(x - n->ctx), q);
	if (done > q->walk_max) {
		q->walk_max = done;
		q->walk_max_ns = plat_now_ns() - t0;
	}
	for (unsigned i = 0; i < q->njobs; i++) {
		struct job *j = &n->jobs[q->jobs[i]];

		if (j->walk_done && plat_now_ns() >= j->win_lo)
			j->r.complete_batch[batch_bucket(j->walk_done)]++;
		j->walk_done = 0;
	}
	return done;
}

/* The interrupt on CPU x: one handler run (irq_ns; none for a polled queue) walks the CQ of
 * every queue whose vector fired since the last run. A message whose entries an earlier walk
 * already reaped still costs its handler run, as a real MSI-X does (nvme_irq finds nothing). */
static unsigned handle_irq(struct nvme *n, struct cpu_ctx *x)
{
	unsigned done = 0;
	bool fired = false, vector = false;

	for (unsigned i = 0; i < x->nirq; i++) {
		struct hwq *q = &n->qs[x->irq_qs[i]];

		if (q->msi_raised != q->msi_seen) {
			fired = true;
			vector |= !q->polled; /* a polled queue's CQE wakes no handler */
		}
	}
	if (!fired)
		return 0;
	if (vector) {
		plat_charge_ns(n->cfg->irq_ns);
		x->interrupts++;
	}
	for (unsigned i = 0; i < x->nirq; i++) {
		struct hwq *q = &n->qs[x->irq_qs[i]];

		if (q->msi_raised == q->msi_seen)
			continue;
		q->msi_seen = q->msi_raised;
		done += walk_cq(n, x, q);
	}
	return done;
}

/* The submitter's side of the ring: completions done elsewhere are reaped; those sent back
 * (the IPI of rq_affinity) run their completion work here first, one IPI handler for the
 * batch (irq_ns: the same exception entry, acknowledge and dispatch as the device's). */
static unsigned reap_ring(struct nvme *n, struct cpu_ctx *x, struct job *j)
{
	unsigned got = 0;
	bool ipi = false;

	while (j->ring_cons != j->ring_prod) {
		struct done d = j->ring[j->ring_cons++ % j->cfg->iodepth];

		if (plat_now_ns() > d.t && plat_now_ns() - d.t > j->handoff_max)
			j->handoff_max = plat_now_ns() - d.t; /* since it was handed over */
		if (d.work) {
			if (!ipi) {
				plat_charge_ns(n->cfg->irq_ns);
				x->ipis++;
				ipi = true;
			}
			complete_io(n, (unsigned)(x - n->ctx), j, &j->slots[d.cid]);
			d.t = plat_now_ns();
		}
		/* clat ends when fio can reap it: not before this CPU sees it */
		reaped(j, d.cid, d.sf, d.t > plat_now_ns() ? d.t : plat_now_ns());
		got++;
	}
	return got;
}

/* Submit while slots are free and the job may issue. */
static void submit_some(struct nvme *n, struct job *j)
{
	unsigned submitted = 0;

	if (j->tag_wait) /* awake before its wake-up: off the wait queue, retry */
		tag_unsleep(j->q, j);
	while (j->nfree && may_issue(n, j)) {
		unsigned si = j->free_stack[j->nfree - 1];

		if (!get_tag(j, si)) {
			tag_sleep(j->q, j); /* woken by put_tag */
			if (!j->wait_since) { /* not a wake-up that found the tags taken again */
				j->wait_since = plat_now_ns();
				j->tag_waits++;
			}
			break;
		}
		if (!submit(n, j, si)) {
			put_tag(n, j->ctx, j->q, j->slots[si].tag);
			break;
		}
		j->nfree--;
		j->inflight++;
		submitted++;
		if (plat_now_ns() >= j->win_lo)
			j->r.depth[depth_bucket(j->inflight)]++;
	}
	if (submitted && plat_now_ns() >= j->win_lo)
		j->r.submit_batch[batch_bucket(submitted)]++;
}

struct ev_arg {
	uint32_t seen;
};

static bool ev_moved(uint64_t v, void *arg)
{
	return (uint32_t)v != ((struct ev_arg *)arg)->seen;
}

/* Is CPU x done: its own job finished and every job of the queues whose interrupt it takes
 * too? */
static bool ctx_done(const struct nvme *n, const struct cpu_ctx *x)
{
	if (x->job >= 0 && !n->jobs[x->job].finished)
		return false;
	for (unsigned i = 0; i < x->nirq; i++) {
		const struct hwq *q = &n->qs[x->irq_qs[i]];

		for (unsigned k = 0; k < q->njobs; k++)
			if (!n->jobs[q->jobs[k]].finished)
				return false;
	}
	return true;
}

/* One CPU of the run: submit (fio's loop), take interrupts, reap; sleep on its events word. */
static void cpu_run(unsigned idx, void *arg)
{
	struct nvme *n = arg;
	struct cpu_ctx *x = &n->ctx[idx];
	struct job *j = x->job >= 0 ? &n->jobs[x->job] : NULL;
	struct ev_arg ea = { 0 };
	bool spins = j && j->cfg->hipri; /* fio hipri: the submitter polls its CQ */

	x->t_begin = plat_now_ns();
	if (j)
		j->t_begin = x->t_begin;
	for (;;) {
		uint64_t now, timeout = 0, waited;
		bool issuing = false;
		int ret;

		if (j && !j->finished) {
			submit_some(n, j);
			issuing = may_issue(n, j);
			if (!j->inflight && !j->tag_wait) { /* done, or every map failed */
				j->finished = true;
				j->t_end = plat_now_ns();
				if (j->q->irq_ctx != j->ctx)
					raise_events(&n->ctx[j->q->irq_ctx]);
			}
		}
		if (ctx_done(n, x))
			break;
		now = plat_now_ns();
		if (issuing && j->win_hi != UINT64_MAX)
			timeout = j->win_hi > now ? j->win_hi - now : 1;
		ret = plat_poll(&x->events, 4, ev_moved, &ea, timeout);
		waited = plat_now_ns() - now;
		if (!spins) /* a polled queue's submitter spins: busy */
			x->idle_ns += waited;
		if (j && !j->finished && !spins)
			j->idle_ns += waited;
		if (ret)
			continue; /* the window closed: drain what is in flight */
		ea.seen = plat_load32(&x->events);
		/* everything raised up to this load is published: handle it, then submit */
		handle_irq(n, x);
		if (j)
			reap_ring(n, x, j);
	}
	x->t_end = plat_now_ns();
}

/* ---- the run ------------------------------------------------------------------------------- */

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* One section's jobs and I/O; q: the queues' entries. */
static int check_section(const struct ilab_nvme_cfg *c, unsigned q, char *err, size_t errlen)
{
	if (c->numjobs < 1 || c->numjobs > ILAB_NVME_MAX_JOBS)
		return BAD("numjobs must be 1..%u, not %u", ILAB_NVME_MAX_JOBS, c->numjobs);
	if (c->iodepth < 1 || c->iodepth > ILAB_NVME_MAX_IODEPTH)
		return BAD("iodepth must be 1..%u, not %u", ILAB_NVME_MAX_IODEPTH, c->iodepth);
	if (q < 2 || q > 65536 || q <= c->iodepth)
		return BAD("queue_entries must be 2..65536 and more than iodepth %u (a queue of n "
			   "holds n - 1), not %u", c->iodepth, q);
	if (c->bs < 512 || c->bs % 512 || c->bs > ILAB_NVME_MAX_BS)
		return BAD("bs must be a multiple of 512 up to %u bytes, not %u", ILAB_NVME_MAX_BS,
			   c->bs);
	if ((unsigned)c->rw > ILAB_FIO_RANDTRIM)
		return BAD("rw must be randread, randwrite, read, write, rw, randrw, trim or "
			   "randtrim");
	if (ilab_fio_rw_is_mixed(c->rw) && c->rwmixread > 100)
		return BAD("rwmixread must be 0..100, not %u", c->rwmixread);
	for (unsigned d = 0; d < 2; d++) {
		const struct ilab_nvme_bs_dist *b = &c->bs_dist[d];

		if (!b->min)
			continue;
		if (b->min > b->max || b->min % 512 || b->max > ILAB_NVME_MAX_BS ||
		    b->nsplit > ILAB_NVME_MAX_BSSPLIT)
			return BAD("%s sizes must be multiples of 512 up to %u bytes, min <= max",
				   d ? "write" : "read", ILAB_NVME_MAX_BS);
		for (unsigned i = 0; i < b->nsplit; i++)
			if (b->split[i].bs < b->min || b->split[i].bs > b->max ||
			    b->split[i].bs % 512)
				return BAD("a %s bssplit size is not a multiple of 512 in min..max",
					   d ? "write" : "read");
	}
	if (!c->runtime_ns && !c->number_ios)
		return BAD("give a runtime or a number of I/Os");
	if (c->runtime_ns && c->number_ios)
		return BAD("give a runtime or a number of I/Os, not both");
	return 0;
}

static int check(const struct ilab_nvme_cfg *c, char *err, size_t errlen)
{
	unsigned q = c->queue_entries ? c->queue_entries : ILAB_NVME_DEFAULT_QUEUE, total;
	int ret;

	if (!plat_sim)
		return BAD("the NVMe model runs in the simulator only");
	if (c->nalso && !c->also)
		return BAD("nalso without also");
	ret = check_section(c, q, err, errlen);
	total = c->numjobs;
	for (unsigned i = 0; !ret && i < c->nalso; i++) {
		if (!c->also[i])
			return BAD("section %u has no configuration", i + 1);
		ret = check_section(c->also[i], q, err, errlen);
		total += c->also[i]->numjobs;
	}
	if (ret)
		return ret;
	if (total > plat_cpu_count())
		return BAD("numjobs %u needs as many CPUs; the machine has %u", total,
			   plat_cpu_count());
	if (!c->read_latency_ns || !c->write_latency_ns)
		return BAD("the drive needs a read and a write latency");
	for (unsigned i = 0; i <= c->nalso; i++)
		if (ilab_fio_rw_is_trim((i ? c->also[i - 1] : c)->rw) && !c->trim_latency_ns)
			return BAD("trim needs the drive's trim latency (profile nvme.trim_latency_ns)");
	return 0;
}


int ilab_nvme_rq_affinity_from_sysfs(int v, enum ilab_nvme_rq_affinity *a)
{
	static const enum ilab_nvme_rq_affinity of[3] = {
		ILAB_NVME_RQ_AFFINITY_NONE, ILAB_NVME_RQ_AFFINITY_LLC, ILAB_NVME_RQ_AFFINITY_FORCE
	};

	if (v < 0 || v > 2 || !a)
		return -EINVAL;
	*a = of[v];
	return 0;
}



/* Each CPU's group key, the group's first CPU: with fewer queues than CPUs, Linux spreads the
 * CPUs over the queues in groups (group_cpus_evenly, group_cpus.c: within NUMA nodes, the
 * queues shared among the nodes by their CPUs) and every CPU of a group maps to the group's
 * one hardware queue (blk_mq_map_queues). The queues are the controller's (n->cfg). With a
 * queue per CPU, the CPU itself. Returns the array (plat_cpu_count() keys) or NULL. */
static int *group_keys(const struct nvme *n)
{
	unsigned ncpu = plat_cpu_count(), nq = n->cfg->nr_queues;
	int *key = calloc(ncpu, sizeof(*key)), *node = calloc(ncpu, sizeof(*node));
	unsigned *group = calloc(ncpu, sizeof(*group));
	int ngroups = 0;

	if (key && node && group && nq && nq < ncpu) {
		for (unsigned c = 0; c < ncpu; c++)
			node[c] = plat_cpu_node(c);
		ngroups = ilab_group_cpus_evenly(nq, ncpu, node, plat_node_count(), group);
	}
	for (unsigned c = 0; key && c < ncpu; c++)
		key[c] = (int)c;
	for (unsigned c = 0; key && ngroups > 0 && c < ncpu; c++) {
		unsigned first = 0;

		while (group[first] != group[c]) /* the CPUs in order: the group's lowest */
			first++;
		key[c] = (int)first;
	}
	if (ngroups < 0) {
		free(key);
		key = NULL;
	}
	free(node);
	free(group);
	return key;
}

/* The CPU that takes queue q's interrupt: its first job's section's irq_cpus when given (an
 * smp_affinity mask of one CPU), else the vector's effective affinity, one CPU of its
 * group's mask: its first, in this model. A polled queue's submitter polls it. */
static int irq_cpu_of(const struct nvme *n, const struct hwq *q)
{
	const struct job *j = &n->jobs[q->jobs[0]];

	if (q->polled)
		return j->cpu;
	if (j->cfg->irq_cpus)
		return j->cfg->irq_cpus[j->local];
	return q->key;
}

static unsigned ctx_of(struct nvme *n, int cpu)
{
	unsigned i;

	for (i = 0; i < n->nctx; i++)
		if (n->ctx[i].cpu == cpu)
			return i;
	n->ctx[i].cpu = cpu; /* the rest is zero, irq_jobs allocated (alloc_jobs) */
	n->ctx[i].job = -1;
	plat_track(&n->ctx[i].events, "nvme.cq.irq");
	n->nctx++;
	return i;
}

/* Job j's hardware queue: its group's (a polled job's own: poll queues are not modelled as
 * shared), made when j is the first job there. */
static void place_queue(struct nvme *n, struct job *j, const int *keys)
{
	int key = keys[j->cpu];
	struct hwq *q = NULL;

	for (unsigned i = 0; !j->cfg->hipri && i < n->nq && !q; i++)
		if (!n->qs[i].polled && n->qs[i].key == key)
			q = &n->qs[i];
	if (!q) {
		q = &n->qs[n->nq];
		q->index = n->nq++;
		q->key = j->cfg->hipri ? j->cpu : key;
		q->polled = j->cfg->hipri;
		/* named for the line statistics: the queues in use only */
		plat_track(&q->sq_db, "nvme.sq.doorbell");
		plat_track(&q->cq_db, "nvme.cq.doorbell");
		plat_spin_init(&q->sq_lock, "nvme.sq.lock");
	}
	q->jobs[q->njobs++] = j->index;
	j->q = q;
}

/* Queue q's interrupt: its CPU's cpu_ctx, and where each of its jobs' completion work runs
 * (rq_affinity, the controller's). producers counts who raises each cpu_ctx's events word. */
static int place_irq(struct nvme *n, struct hwq *q, unsigned *producers, char *err,
		     size_t errlen)
{
	const struct ilab_nvme_cfg *c = n->cfg;
	int irq = irq_cpu_of(n, q);
	struct cpu_ctx *x;

	if (irq < 0 || (unsigned)irq >= plat_cpu_count())
		return BAD("job %u: interrupt CPU %d is not one of the machine's %u", q->jobs[0], irq,
			   plat_cpu_count());
	q->irq_ctx = ctx_of(n, irq);
	x = &n->ctx[q->irq_ctx];
	x->irq_qs[x->nirq++] = q->index;
	producers[q->irq_ctx]++; /* the drive's interrupts */
	for (unsigned i = 0; i < q->njobs; i++) {
		struct job *j = &n->jobs[q->jobs[i]];

		j->complete_on_irq = c->rq_affinity == ILAB_NVME_RQ_AFFINITY_NONE ||
				     (c->rq_affinity == ILAB_NVME_RQ_AFFINITY_LLC &&
				      plat_cpu_node((unsigned)irq) == plat_cpu_node((unsigned)j->cpu));
		/* from another CPU the job's end, and back the completions handed to the
		 * submitter; on a shared queue also the tags other CPUs free */
		producers[q->irq_ctx] += q->irq_ctx != j->ctx;
		producers[j->ctx] += q->irq_ctx != j->ctx || q->njobs > 1;
		producers[j->ctx] += q->njobs > 1;
	}
	return 0;
}

/* The run's CPUs, all picked here. Job i's CPU: its section's cpus when given (fio's
 * cpus_allowed), else the free ones in order, the drive's node's first, then the machine's
 * others from CPU 0; one job per CPU. Then each queue's interrupt CPU (place_irq). ctx_cpus
 * receives the CPUs to run threads on, one per cpu_ctx. */
static int pick_cpus(struct nvme *n, int node, int *ctx_cpus, char *err, size_t errlen)
{
	unsigned ncpu = plat_cpu_count(), norder = 0, next = 0;
	unsigned on_node = node >= 0 ? plat_node_cpu_count((unsigned)node) : 0;
	unsigned *order = plat_zalloc_array(ncpu, sizeof(*order));
	bool *used = plat_zalloc_array(ncpu, sizeof(*used));
	unsigned *producers = plat_zalloc_array(2 * n->njobs, sizeof(*producers));
	int *keys = group_keys(n);
	int ret = 0;

	if (!order || !used || !producers || !keys) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned k = 0; k < on_node; k++)
		order[norder++] = (unsigned)plat_node_cpu((unsigned)node, k);
	for (unsigned c = 0; c < ncpu; c++)
		if (!(node >= 0 && plat_cpu_node(c) == node))
			order[norder++] = c;
	for (unsigned i = 0; !ret && i < n->njobs; i++) {
		struct job *j = &n->jobs[i];
		int cpu = j->cfg->cpus ? j->cfg->cpus[j->local] : -1;

		j->cpu = -1;
		if (!j->cfg->cpus)
			continue;
		if (cpu < 0 || (unsigned)cpu >= ncpu)
			ret = BAD("cannot place %u jobs on CPUs given (the machine has %u)",
				  j->cfg->numjobs, ncpu);
		else if (used[cpu])
			ret = BAD("two jobs on CPU %d: the model runs one job per CPU", cpu);
		else
			used[cpu] = true, j->cpu = cpu;
	}
	for (unsigned i = 0; !ret && i < n->njobs; i++) {
		struct job *j = &n->jobs[i];

		while (j->cpu < 0 && next < norder && used[order[next]])
			next++;
		if (j->cpu >= 0)
			continue;
		if (next == norder)
			ret = BAD("cannot place %u jobs on CPUs (the machine has %u)", n->njobs, ncpu);
		else
			used[order[next]] = true, j->cpu = (int)order[next];
	}
	for (unsigned i = 0; !ret && i < n->njobs; i++) {
		n->jobs[i].ctx = ctx_of(n, n->jobs[i].cpu);
		n->ctx[n->jobs[i].ctx].job = (int)i;
	}
	for (unsigned i = 0; !ret && i < n->njobs; i++)
		place_queue(n, &n->jobs[i], keys);
	n->one_hw_queue = n->cfg->nr_queues == 1 && ncpu > 1;
	for (unsigned i = 0; !ret && i < n->nq; i++) {
		n->one_hw_queue &= !n->qs[i].polled; /* poll queues are hardware contexts too */
		ret = place_irq(n, &n->qs[i], producers, err, errlen);
	}
	for (unsigned i = 0; !ret && i < n->nctx; i++) {
		n->ctx[i].shared = producers[i] > 1;
		ctx_cpus[i] = n->ctx[i].cpu;
	}
out:
	free(order);
	free(used);
	free(producers);
	free(keys);
	return ret;
}


static int summarise(struct nvme *n, struct ilab_nvme_result *res)
{
	const struct ilab_nvme_cfg *c = n->cfg;
	struct ilab_lat_hist *all = malloc(sizeof(*all));
	uint64_t end = n->start_ns, bytes = 0;

	if (!all)
		return -ENOMEM;
	ilab_lat_hist_init(all);
	for (unsigned i = 0; i < n->njobs; i++) {
		struct job *j = &n->jobs[i];

		res->ios += j->r.ios;
		res->errors += j->r.errors;
		res->map_errors += j->map_errors;
		res->remote_completions += j->remote;
		res->tag_waits += j->tag_waits;
		if (j->handoff_max > res->handoff_max_ns)
			res->handoff_max_ns = j->handoff_max;
		if (j->last_done > end)
			end = j->last_done;
		if (j->t_end > j->t_begin) {
			j->r.run_ns = j->t_end - j->t_begin;
			j->r.cpu_busy = 1.0 - (double)j->idle_ns / (double)j->r.run_ns;
		}
		j->r.window_ns = j->win_hi != UINT64_MAX ? j->cfg->runtime_ns
			       : j->last_done > n->start_ns ? j->last_done - n->start_ns : 0;
		res->cpu_busy += j->r.cpu_busy;
		for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++) {
			bytes += j->r.dir[d].bytes;
			ilab_lat_hist_merge(all, &j->r.dir[d].clat);
		}
		if (j->cfg->job_results)
			j->cfg->job_results[j->local] = j->r;
	}
	res->cpu_busy /= n->njobs;
	res->hw_queues = n->nq;
	for (unsigned i = 0; i < n->nq; i++) {
		const struct hwq *q = &n->qs[i];

		res->dma_faults += q->faults;
		res->commands += q->commands;
		res->prp_lists += q->prp_lists;
		res->dsm_commands += q->dsm_commands;
		res->dsm_range_reads += q->dsm_range_reads;
		res->dsm_blocks += q->dsm_blocks;
		res->sq_wraps += q->sq_wraps;
		res->cq_wraps += q->cq_wraps;
		if (q->inflight_max > res->queue_inflight_max)
			res->queue_inflight_max = q->inflight_max;
		if (q->njobs > res->queue_jobs_max)
			res->queue_jobs_max = q->njobs;
		res->tag_wakeups += q->tag_wakeups;
		res->batched_completions += q->batched;
		res->cq_full_waits += q->cq_full_waits;
		if (q->walk_max > res->cq_walk_max) {
			res->cq_walk_max = q->walk_max;
			res->cq_walk_max_ns = q->walk_max_ns;
		}
	}
	for (unsigned i = 0; i < n->nctx; i++) {
		const struct cpu_ctx *x = &n->ctx[i];

		res->interrupts += x->interrupts;
		res->ipis += x->ipis;
		if (x->job < 0 && x->t_end > x->t_begin) {
			double b = 1.0 - (double)x->idle_ns / (double)(x->t_end - x->t_begin);

			if (b > res->irq_cpu_busy)
				res->irq_cpu_busy = b;
		}
	}
	res->window_ns = c->runtime_ns && !c->nalso ? c->runtime_ns : end - n->start_ns;
	if (res->window_ns) {
		res->iops = (double)res->ios * 1e9 / (double)res->window_ns;
		res->bw_mbps = (double)bytes * 1e3 / (double)res->window_ns;
	}
	if (all->n) {
		res->clat_min_ns = all->min;
		res->clat_max_ns = all->max;
		res->clat_mean_ns = ilab_lat_hist_mean(all);
		res->clat_stdev_ns = ilab_lat_hist_stdev(all);
		res->clat_p50_ns = ilab_lat_hist_percentile(all, 50);
		res->clat_p99_ns = ilab_lat_hist_percentile(all, 99);
		res->clat_p999_ns = ilab_lat_hist_percentile(all, 99.9);
	}
	free(all);
	return 0;
}

/* The drive's booking constants in picoseconds, per direction. */
static void drive_rates(struct nvme *n)
{
	const struct ilab_nvme_cfg *c = n->cfg;

	const uint64_t iops[] = { c->read_iops, c->write_iops, c->trim_iops };
	const uint64_t lat[] = { c->read_latency_ns, c->write_latency_ns, c->trim_latency_ns };
	const uint64_t mbps[] = { c->read_mbps, c->write_mbps, c->write_mbps };

	for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++) {
		n->slot_ps[d] = iops[d] ? (1000000000000ull + iops[d] / 2) / iops[d] : 0;
		n->latency_ps[d] = lat[d] * 1000;
		n->mbps[d] = mbps[d];
	}
}

/* A job's smallest and largest I/O, from its section's sizes. */
static void job_sizes(struct job *j)
{
	const struct ilab_nvme_cfg *c = j->cfg;

	j->max_bs = 0;
	j->min_bs = UINT32_MAX;
	for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++) {
		const struct ilab_nvme_bs_dist *b = &c->bs_dist[d < 2 ? d : 0];
		unsigned lo = b->min && d < 2 ? b->min : c->bs, hi = b->min && d < 2 ? b->max : c->bs;

		if (!ilab_fio_rw_does(c->rw, d))
			continue;
		j->max_bs = hi > j->max_bs ? hi : j->max_bs;
		j->min_bs = lo < j->min_bs ? lo : j->min_bs;
	}
}

#undef BAD

static int start_agents(struct nvme *n, struct agent_arg *aa, char *err, size_t errlen)
{
	for (unsigned i = 0; i < n->nq; i++) {
		int ret;

		aa[i] = (struct agent_arg){ .n = n, .q = &n->qs[i] };
		ret = plat_agent_start("nvme.q", n->dev->node, drive_queue, &aa[i],
				       &n->qs[i].agent);
		if (ret)
			return snprintf(err, errlen, "cannot start the drive's queue agents (%d)",
					ret), ret;
	}
	return 0;
}

/* Section k of the run: the first cfg, then its also[]. */
static const struct ilab_nvme_cfg *section(const struct ilab_nvme_cfg *c, unsigned k)
{
	return k ? c->also[k - 1] : c;
}

/* A job's slots, free slots (all free) and completion ring. */
static int alloc_job(struct job *j)
{
	unsigned depth = j->cfg->iodepth;

	j->slots = plat_zalloc_array(depth, sizeof(*j->slots));
	j->free_stack = plat_zalloc_array(depth, sizeof(*j->free_stack));
	j->ring = plat_zalloc_array(depth, sizeof(*j->ring));
	if (!j->slots || !j->free_stack || !j->ring)
		return -ENOMEM;
	for (unsigned k = depth; k-- > 0;)
		j->free_stack[j->nfree++] = k;
	return 0;
}

/* A hardware queue's jobs, tags (all free; blk-mq's queue_depth is the queue's entries less
 * one, at most BLK_MQ_TAGS_MAX) and their wait queues, booked commands and PRP scratch. */
static int alloc_queue(struct nvme *n, struct hwq *q)
{
	unsigned tags = n->ntags;

	for (unsigned k = 0; k < SBQ_WAIT_QUEUES; k++) {
		q->ws[k].jobs = plat_zalloc_array(n->njobs, sizeof(*q->ws[k].jobs));
		if (!q->ws[k].jobs)
			return -ENOMEM;
	}
	/* sbq_calc_wake_batch: the depth spread over the wait queues, 1..SBQ_WAKE_BATCH */
	q->wake_batch = tags / SBQ_WAIT_QUEUES;
	if (q->wake_batch < 1)
		q->wake_batch = 1;
	if (q->wake_batch > SBQ_WAKE_BATCH)
		q->wake_batch = SBQ_WAKE_BATCH;
	q->jobs = plat_zalloc_array(n->njobs, sizeof(*q->jobs));
	q->tag_free = plat_zalloc_array(tags, sizeof(*q->tag_free));
	q->owner = plat_zalloc_array(tags, sizeof(*q->owner));
	q->batch = plat_zalloc_array(tags, sizeof(*q->batch));
	q->fifo = plat_zalloc_array(n->qsize, sizeof(*q->fifo));
	q->pages = plat_zalloc_array(ILAB_NVME_MAX_BS / ILAB_NVME_PAGE + 1, sizeof(*q->pages));
	q->prp_raw = plat_zalloc_array(1, ILAB_NVME_PAGE);
	if (!q->jobs || !q->tag_free || !q->owner || !q->batch || !q->fifo || !q->pages || !q->prp_raw)
		return -ENOMEM;
	for (unsigned k = tags; k-- > 0;) {
		q->tag_free[q->ntag_free++] = k;
		q->owner[k].job = UINT32_MAX;
	}
	q->cq_phase = 1;
	return 0;
}

static int alloc_jobs(struct nvme *n, char *err, size_t errlen)
{
	const struct ilab_nvme_cfg *c = n->cfg;
	unsigned i = 0;

	n->njobs = 0;
	for (unsigned k = 0; k <= c->nalso; k++)
		n->njobs += section(c, k)->numjobs;
	n->jobs = plat_zalloc_array(n->njobs, sizeof(*n->jobs));
	n->qs = plat_zalloc_array(n->njobs, sizeof(*n->qs)); /* at most one per job */
	/* a CPU per job and at most one more per queue's interrupt */
	n->ctx = plat_zalloc_array(2 * n->njobs, sizeof(*n->ctx));
	for (unsigned k = 0; n->ctx && k < 2 * n->njobs; k++) {
		n->ctx[k].irq_qs = plat_zalloc_array(n->njobs, sizeof(*n->ctx[k].irq_qs));
		if (!n->ctx[k].irq_qs)
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	if (!n->jobs || !n->ctx || !n->qs)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (unsigned k = 0; k < n->njobs; k++)
		if (alloc_queue(n, &n->qs[k]))
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (unsigned k = 0; k <= c->nalso; k++)
		for (unsigned l = 0; l < section(c, k)->numjobs; l++, i++) {
			struct job *j = &n->jobs[i];

			j->index = i;
			j->cfg = section(c, k);
			j->local = l;
			job_sizes(j);
			n->max_bs = j->max_bs > n->max_bs ? j->max_bs : n->max_bs;
			for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++) {
				ilab_lat_hist_init(&j->r.dir[d].slat);
				ilab_lat_hist_init(&j->r.dir[d].clat);
				ilab_lat_hist_init(&j->r.dir[d].lat);
			}
			j->buf_order = order_of(j->max_bs);
			if (alloc_job(j))
				return snprintf(err, errlen, "out of memory"), -ENOMEM;
			j->rng = j->cfg->seed * 0x100000001b3ull + i;
		}
	n->payload = plat_zalloc_array(1, n->max_bs);
	n->scratch = plat_zalloc_array(1, n->max_bs);
	if (!n->payload || !n->scratch)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	memset(n->payload, 0xa5, n->max_bs);
	return 0;
}

static void free_jobs(struct nvme *n)
{
	for (unsigned i = 0; n->jobs && i < n->njobs; i++) {
		free(n->jobs[i].slots);
		free(n->jobs[i].free_stack);
		free(n->jobs[i].ring);
	}
	for (unsigned i = 0; n->qs && i < n->njobs; i++) {
		free(n->qs[i].jobs);
		free(n->qs[i].tag_free);
		free(n->qs[i].owner);
		free(n->qs[i].batch);
		free(n->qs[i].fifo);
		free(n->qs[i].pages);
		free(n->qs[i].prp_raw);
		for (unsigned k = 0; k < SBQ_WAIT_QUEUES; k++)
			free(n->qs[i].ws[k].jobs);
	}
	for (unsigned i = 0; n->ctx && i < 2 * n->njobs; i++)
		free(n->ctx[i].irq_qs);
	free(n->qs);
	free(n->ctx);
	free(n->jobs);
	free(n->payload);
	free(n->scratch);
}

/* Each job's measured window, from the common start: its section's ramp and runtime. */
static void set_windows(struct nvme *n)
{
	for (unsigned i = 0; i < n->njobs; i++) {
		struct job *j = &n->jobs[i];

		j->win_lo = j->cfg->runtime_ns ? n->start_ns + j->cfg->ramp_ns : 0;
		j->win_hi = j->cfg->runtime_ns ? j->win_lo + j->cfg->runtime_ns : UINT64_MAX;
	}
}

int ilab_nvme_run(struct ilab_board *board, struct ilab_dev *dev, const struct ilab_nvme_cfg *cfg,
		  struct ilab_nvme_result *res, char *err, size_t errlen)
{
	struct nvme n = { .board = board, .dev = dev, .cfg = cfg };
	struct agent_arg *aa = NULL;
	int *cpus = NULL, *ctx_cpus = NULL, ret, unit;

	if (!board || !dev || !res || !cfg)
		return snprintf(err, errlen, "no board, device, configuration or result"), -EINVAL;
	ret = check(cfg, err, errlen);
	if (ret)
		return ret;
	memset(res, 0, sizeof(*res));
	unit = ilab_board_dev_iommu(board, dev);
	if (unit < 0)
		return snprintf(err, errlen, "device %s is not behind a modelled IOMMU", dev->name),
		       -EINVAL;
	n.unit = (unsigned)unit;
	n.mem = ilab_board_mem(board);
	n.qsize = cfg->queue_entries ? cfg->queue_entries : ILAB_NVME_DEFAULT_QUEUE;
	n.ntags = n.qsize - 1 < BLK_MQ_TAGS_MAX ? n.qsize - 1 : BLK_MQ_TAGS_MAX;
	drive_rates(&n);
	ret = alloc_jobs(&n, err, errlen);
	if (ret)
		goto out;
	cpus = plat_zalloc_array(n.njobs, sizeof(*cpus));
	aa = plat_zalloc_array(n.njobs, sizeof(*aa));
	ctx_cpus = plat_zalloc_array(2 * n.njobs, sizeof(*ctx_cpus));
	if (!cpus || !aa || !ctx_cpus) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ret = pick_cpus(&n, dev->node, ctx_cpus, err, errlen);
	if (ret)
		goto out;
	for (unsigned i = 0; i < n.njobs; i++)
		cpus[i] = n.jobs[i].cpu;
	ret = plat_run_threads(n.njobs, cpus, job_setup, &n);
	for (unsigned i = 0; !ret && i < n.njobs; i++)
		if (n.jobs[i].setup_failed) {
			ret = -ENOMEM;
			snprintf(err, errlen, "job %u: cannot allocate its queues and buffers", i);
		}
	if (ret) {
		if (!*err)
			snprintf(err, errlen, "cannot run %u threads (%d)", n.njobs, ret);
		goto out_teardown;
	}
	n.start_ns = plat_now_ns();
	set_windows(&n);
	ret = start_agents(&n, aa, err, errlen);
	if (!ret) {
		ret = plat_run_threads(n.nctx, ctx_cpus, cpu_run, &n);
		if (ret)
			snprintf(err, errlen, "cannot run %u threads (%d)", n.nctx, ret);
	}
	for (unsigned i = 0; i < n.nq; i++)
		if (n.qs[i].agent)
			plat_agent_stop(n.qs[i].agent, &n.qs[i].sq_db);
	if (!ret) {
		ret = summarise(&n, res);
		if (ret)
			snprintf(err, errlen, "out of memory");
	}
	if (!ret) {
		struct ilab_dma_stats ds;

		if (!ilab_dma_stats(dev, &ds)) {
			res->iova_cache_misses = ds.iova_cache_misses;
			res->iova_depot_max = ds.iova_depot_max;
		}
	}
	if (!ret && (res->errors || res->map_errors)) {
		ret = -EIO;
		snprintf(err, errlen, "%llu I/Os completed with an error status (%llu drive DMAs "
			 "faulted), %llu maps failed", (unsigned long long)res->errors,
			 (unsigned long long)res->dma_faults, (unsigned long long)res->map_errors);
	}
out_teardown:
	{
		int r2 = plat_run_threads(n.njobs, cpus, job_teardown, &n);

		if (r2 && !ret) {
			ret = r2;
			snprintf(err, errlen, "cannot tear the queues down (%d)", r2);
		}
	}
out:
	free_jobs(&n);
	free(cpus);
	free(ctx_cpus);
	free(aa);
	return ret;
}
