/* nic.c — the receive NIC model: per queue a ring of descriptors (buffers the driver side
 * mapped with the DMA API), a device agent that fills them at the queue's share of the line
 * rate by DMA through the board's SMMU, and a CPU thread that takes completed buffers
 * (unmap, network-stack cost per frame, map a fresh buffer, post it back).
 * It is not a network stack and not the scenario glue (nic_experiments.c, nic_env.c).
 *
 * Device side, per queue (an agent on the NIC's node): frames arrive every
 * queues x max(wire time, 1 / max_mpps, 1 / (max_buffers_mps x frames_per_buffer)), queue i
 * offset by i slots (RSS spreads flows evenly).
 * A frame with no buffer posted is dropped. When frames_per_buffer frames have filled the
 * buffer, the NIC writes them with one ilab_board_dma_write (translated page by page by the
 * SMMU model, charged to the agent) and publishes the completion (a tracked store the CPU
 * polls). The write is done at completion rather than frame by frame so that one agent's
 * memory latency does not throttle the line rate: a real NIC keeps many posted writes in
 * flight. The descriptors' DMA reads are charged as one memory access per descriptor.
 *
 * CPU side, per queue (a plat thread bound to the queue's CPU), for each completed buffer in
 * order: dma_unmap_single, the network stack's cost (stack_cost_ns), dma_map_single of the same
 * physical buffer (a
 * page pool recycles pages), post (tracked store of the ring's tail). Frames are counted when
 * their buffer is finished inside [warm-up end, warm-up end + duration).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/nic.h>
#include <iommulab/plat.h>

struct nic_desc {
	ilab_dma_addr_t dma;
	ilab_pa_t pa;
	bool has_page, mapped;
};

struct nic_queue {
	/* written by the CPU, read by the NIC: buffers posted so far (monotonic) */
	_Alignas(PLAT_CACHELINE) plat_word32 tail;
	/* written by the NIC, polled by the CPU: buffers completed so far (monotonic) */
	_Alignas(PLAT_CACHELINE) plat_word32 head;
	_Alignas(PLAT_CACHELINE) struct nic_desc *ring;
	unsigned index;
	int cpu;
	/* NIC private */
	struct plat_agent *agent;
	uint64_t arrived, dropped, faults;
	/* CPU private */
	uint64_t frames, buffers, map_errors;
	unsigned order;
	int alloc_failed;
};

struct nic {
	struct ilab_board *board;
	struct ilab_dev *dev;
	const struct ilab_nic_cfg *cfg;
	int smmu;
	int ring_node;           /* where descriptors live: the CPU's node (driver allocation) */
	size_t buf_bytes;
	uint64_t interval_ns;    /* between two frames of one queue */
	uint64_t start_ns, win_lo, win_hi;
	struct nic_queue *q;
	void *payload;           /* what the NIC writes: a full buffer of frame bytes */
};

static unsigned order_of(size_t bytes)
{
	unsigned o = 0;

	while (((size_t)ILAB_PAGE_SIZE << o) < bytes)
		o++;
	return o;
}

/* ---- set-up: each CPU allocates and maps its ring's buffers (on its node) ------------------ */

static void ring_setup(unsigned idx, void *arg)
{
	struct nic *n = arg;
	struct nic_queue *q = &n->q[idx];

	for (unsigned i = 0; i < n->cfg->ring_size; i++) {
		struct nic_desc *d = &q->ring[i];

		if (ilab_mem_alloc_pages(ilab_board_mem(n->board), plat_this_node(), q->order,
					 &d->pa)) {
			q->alloc_failed = 1;
			return;
		}
		d->has_page = true;
		d->dma = ilab_dma_map_single(n->dev, d->pa, n->buf_bytes, ILAB_DMA_FROM_DEVICE);
		if (ilab_dma_mapping_error(d->dma)) {
			q->map_errors++;
			return;
		}
		d->mapped = true;
	}
	plat_store32(&q->tail, n->cfg->ring_size);
}

static void ring_teardown(unsigned idx, void *arg)
{
	struct nic *n = arg;
	struct nic_queue *q = &n->q[idx];

	for (unsigned i = 0; i < n->cfg->ring_size; i++) {
		struct nic_desc *d = &q->ring[i];

		if (d->mapped)
			ilab_dma_unmap_single(n->dev, d->dma, n->buf_bytes, ILAB_DMA_FROM_DEVICE);
		if (d->has_page)
			ilab_mem_free_pages(ilab_board_mem(n->board), d->pa, q->order);
		d->mapped = d->has_page = false;
	}
}

/* ---- the device: one agent per queue -------------------------------------------------------- */

struct agent_arg {
	struct nic *n;
	struct nic_queue *q;
};

static void queue_agent(struct plat_agent *agent, void *arg)
{
	struct agent_arg *a = arg;
	struct nic *n = a->n;
	struct nic_queue *q = a->q;
	const struct ilab_nic_cfg *c = n->cfg;
	uint64_t t = n->start_ns + (uint64_t)q->index * (n->interval_ns / c->queues);
	uint32_t posted = 0, taken = 0, done = 0;
	unsigned fill = 0;
	bool have = false;
	struct nic_desc d = { 0 };

	while (!plat_agent_should_stop(agent)) {
		uint64_t now = plat_now_ns();

		if (now >= n->win_hi)
			break; /* past the window: nothing more is counted */
		if (now < t)
			plat_sleep_ns(t - now);
		t += n->interval_ns;
		q->arrived++;
		if (!have) {
			if (taken == posted)
				posted = plat_load32(&q->tail);
			if (taken == posted) {
				q->dropped++;
				continue;
			}
			d = q->ring[taken % c->ring_size];
			plat_mem_access(n->ring_node, sizeof(d), false); /* descriptor fetch */
			taken++;
			have = true;
		}
		if (++fill < c->frames_per_buffer)
			continue;
		if (ilab_board_dma_write(n->board, (unsigned)n->smmu, n->dev->sid, 0, false, d.dma,
					 n->payload, (size_t)c->frames_per_buffer * c->packet_bytes,
					 NULL))
			q->faults++;
		fill = 0;
		have = false;
		plat_store32(&q->head, ++done);
	}
	/* Leave the CPU thread nothing to wait for: it stops at win_hi by itself. */
}

/* ---- the driver side: one thread per queue ------------------------------------------------ */

/* One buffer through the stack: per-frame work, per-buffer (one skb: with LRO all its frames
 * go up the stack together) and the copy of the payload to the application, rounded once so
 * that the parts add up as the profile gives them. */
static uint64_t stack_cost_ns(const struct ilab_nic_cfg *c)
{
	uint64_t ns = c->stack_ns * c->frames_per_buffer + c->stack_buffer_ns;
	uint64_t payload = c->packet_bytes > ILAB_NIC_TCPIP_HEADERS
				   ? c->packet_bytes - ILAB_NIC_TCPIP_HEADERS : 0;

	if (c->copy_mbps) /* bytes / (MB/s) = µs: x 1000 for ns */
		ns += (payload * c->frames_per_buffer * 1000 + c->copy_mbps / 2) / c->copy_mbps;
	return ns;
}

struct head_arg {
	uint32_t seen;
};

static bool head_moved(uint64_t v, void *arg)
{
	return (uint32_t)v != ((struct head_arg *)arg)->seen;
}

/* iperf3's intervals (nic.h): the frames finished at now in their interval's counter. */
static void count_interval(struct nic *n, struct nic_queue *q, uint64_t now)
{
	const struct ilab_nic_cfg *c = n->cfg;
	uint64_t i;

	if (!c->report_interval_ns || !c->interval_frames)
		return;
	i = (now - n->win_lo) / c->report_interval_ns;
	if (i < c->intervals)
		c->interval_frames[(uint64_t)q->index * c->intervals + i] += c->frames_per_buffer;
}

static void queue_cpu(unsigned idx, void *arg)
{
	struct nic *n = arg;
	struct nic_queue *q = &n->q[idx];
	const struct ilab_nic_cfg *c = n->cfg;
	struct head_arg h = { 0 };
	uint32_t posted = c->ring_size;

	for (;;) {
		uint64_t now = plat_now_ns();
		uint32_t head;

		if (now >= n->win_hi)
			break;
		if (plat_poll(&q->head, 4, head_moved, &h, n->win_hi - now))
			break; /* window over with nothing more to do */
		head = plat_load32(&q->head);
		while (h.seen != head) {
			struct nic_desc *d = &q->ring[h.seen % c->ring_size];

			ilab_dma_unmap_single(n->dev, d->dma, n->buf_bytes, ILAB_DMA_FROM_DEVICE);
			d->mapped = false;
			plat_charge_ns(stack_cost_ns(c));
			d->dma = ilab_dma_map_single(n->dev, d->pa, n->buf_bytes,
						     ILAB_DMA_FROM_DEVICE);
			d->mapped = !ilab_dma_mapping_error(d->dma);
			h.seen++;
			now = plat_now_ns();
			if (now >= n->win_lo && now < n->win_hi) {
				q->frames += c->frames_per_buffer;
				q->buffers++;
				count_interval(n, q, now);
			}
			if (!d->mapped) {
				/* nothing to post: the NIC will find the ring shorter */
				q->map_errors++;
				continue;
			}
			plat_store32(&q->tail, ++posted);
		}
	}
}

/* ---- the run ---------------------------------------------------------------------------- */

static int check(const struct ilab_nic_cfg *c, char *err, size_t errlen)
{
#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)
	if (!c)
		return BAD("no NIC configuration");
	if (c->queues < 1 || c->queues > ILAB_NIC_MAX_QUEUES)
		return BAD("queues must be 1..%u, not %u", ILAB_NIC_MAX_QUEUES, c->queues);
	if (c->queues > plat_cpu_count())
		return BAD("%u queues need as many CPUs; the machine has %u", c->queues,
			   plat_cpu_count());
	if (c->packet_bytes < 64 || c->packet_bytes > 65536)
		return BAD("packet_bytes must be 64..65536, not %u", c->packet_bytes);
	if (c->frames_per_buffer < 1 || (uint64_t)c->frames_per_buffer * c->packet_bytes > (4u << 20))
		return BAD("frames_per_buffer x packet_bytes must be 1 frame .. 4 MiB");
	if (c->ring_size < 2 || c->ring_size > 65536)
		return BAD("ring_size must be 2..65536, not %u", c->ring_size);
	if (!(c->link_gbps > 0) && !(c->max_mpps > 0) && !(c->max_buffers_mps > 0))
		return BAD("the NIC needs a line rate or a packet rate");
	if (c->link_gbps < 0 || c->max_mpps < 0 || c->max_buffers_mps < 0)
		return BAD("rates must not be negative");
	if (c->copy_mbps > 10000000)
		return BAD("copy_mbps must be at most 10000000, not %llu",
			   (unsigned long long)c->copy_mbps);
	if (!c->duration_ns)
		return BAD("duration must be > 0");
	return 0;
#undef BAD
}

/* Queue i's CPU: the i-th CPU of the NIC's node, then the machine's CPUs from 0 not yet used. */
static int pick_cpus(const struct ilab_nic_cfg *c, int node, int *cpus)
{
	unsigned k = 0, on_node = node >= 0 ? plat_node_cpu_count((unsigned)node) : 0;

	for (unsigned i = 0; i < c->queues; i++)
		if (c->cpus) {
			if (c->cpus[i] < 0 || (unsigned)c->cpus[i] >= plat_cpu_count())
				return -EINVAL;
			cpus[i] = c->cpus[i];
		}
	if (c->cpus)
		return 0;
	for (unsigned i = 0; i < on_node && k < c->queues; i++)
		cpus[k++] = plat_node_cpu((unsigned)node, i);
	for (unsigned cpu = 0; cpu < plat_cpu_count() && k < c->queues; cpu++) {
		bool used = plat_cpu_node(cpu) == node && node >= 0;

		if (!used)
			cpus[k++] = (int)cpu;
	}
	return k == c->queues ? 0 : -EINVAL;
}

int ilab_nic_run(struct ilab_board *board, struct ilab_dev *dev, const struct ilab_nic_cfg *cfg,
		 struct ilab_nic_result *res, char *err, size_t errlen)
{
	struct nic n = { .board = board, .dev = dev, .cfg = cfg };
	struct agent_arg *aa = NULL;
	int *cpus = NULL, ret;
	double wire_ns = 0, rate_ns = 0;
	unsigned nq;

	if (!board || !dev || !res) {
		snprintf(err, errlen, "no board, device or result");
		return -EINVAL;
	}
	ret = check(cfg, err, errlen);
	if (ret)
		return ret;
	memset(res, 0, sizeof(*res));
	nq = cfg->queues;
	n.smmu = ilab_board_dev_smmu(board, dev);
	if (n.smmu < 0) {
		snprintf(err, errlen, "device %s is not behind a modelled IOMMU unit", dev->name);
		return -EINVAL;
	}
	n.buf_bytes = (size_t)cfg->frames_per_buffer * cfg->packet_bytes;
	if (cfg->link_gbps > 0)
		wire_ns = (cfg->packet_bytes + ILAB_NIC_WIRE_OVERHEAD) * 8.0 / cfg->link_gbps;
	if (cfg->max_mpps > 0)
		rate_ns = 1000.0 / cfg->max_mpps;
	if (cfg->max_buffers_mps > 0) {
		double buf_ns = 1000.0 / (cfg->max_buffers_mps * cfg->frames_per_buffer);

		rate_ns = buf_ns > rate_ns ? buf_ns : rate_ns;
	}
	n.interval_ns = (uint64_t)((wire_ns > rate_ns ? wire_ns : rate_ns) * nq + 0.5);
	if (!n.interval_ns)
		n.interval_ns = 1;
	n.q = plat_zalloc_array(nq, sizeof(*n.q));
	cpus = plat_zalloc_array(nq, sizeof(*cpus));
	aa = plat_zalloc_array(nq, sizeof(*aa));
	n.payload = plat_zalloc_array(1, n.buf_bytes);
	if (!n.q || !cpus || !aa || !n.payload) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	memset(n.q, 0, nq * sizeof(*n.q));
	memset(n.payload, 0x5a, n.buf_bytes);
	if (pick_cpus(cfg, dev->node, cpus)) {
		ret = -EINVAL;
		snprintf(err, errlen, "cannot place %u queues on CPUs", nq);
		goto out;
	}
	n.ring_node = dev->node;
	for (unsigned i = 0; i < nq; i++) {
		struct nic_queue *q = &n.q[i];

		q->index = i;
		q->cpu = cpus[i];
		q->order = order_of(n.buf_bytes);
		q->ring = plat_zalloc_array(cfg->ring_size, sizeof(*q->ring));
		if (!q->ring) {
			ret = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto out_rings;
		}
		plat_track(&q->tail, "nic.rxq.tail");
		plat_track(&q->head, "nic.rxq.head");
	}
	ret = plat_run_threads(nq, cpus, ring_setup, &n);
	for (unsigned i = 0; !ret && i < nq; i++)
		if (n.q[i].alloc_failed || n.q[i].map_errors) {
			ret = n.q[i].alloc_failed ? -ENOMEM : -EIO;
			snprintf(err, errlen, "queue %u: cannot %s its ring buffers: %s", i,
				 n.q[i].alloc_failed ? "allocate" : "map", ilab_iommu_strerror());
		}
	if (ret) {
		if (!*err)
			snprintf(err, errlen, "cannot run %u threads (%d)", nq, ret);
		goto out_unmap;
	}
	n.start_ns = plat_now_ns();
	n.win_lo = n.start_ns + cfg->warmup_ns;
	n.win_hi = n.win_lo + cfg->duration_ns;
	for (unsigned i = 0; i < nq; i++) {
		aa[i] = (struct agent_arg){ .n = &n, .q = &n.q[i] };
		ret = plat_agent_start("nic.rxq", dev->node, queue_agent, &aa[i], &n.q[i].agent);
		if (ret) {
			snprintf(err, errlen, "cannot start the NIC's queue agents (%d)", ret);
			goto out_agents;
		}
	}
	ret = plat_run_threads(nq, cpus, queue_cpu, &n);
	if (ret)
		snprintf(err, errlen, "cannot run %u threads (%d)", nq, ret);
out_agents:
	for (unsigned i = 0; i < nq; i++)
		if (n.q[i].agent)
			plat_agent_stop(n.q[i].agent, &n.q[i].tail);
	if (!ret) {
		res->window_ns = cfg->duration_ns;
		for (unsigned i = 0; i < nq; i++) {
			struct nic_queue *q = &n.q[i];

			res->frames_arrived += q->arrived;
			res->frames_dropped += q->dropped;
			res->frames += q->frames;
			res->buffers += q->buffers;
			res->dma_faults += q->faults;
			res->map_errors += q->map_errors;
		}
		res->pps = res->frames * 1e9 / (double)res->window_ns;
		res->goodput_gbps = res->pps * (cfg->packet_bytes > ILAB_NIC_TCPIP_HEADERS
					       ? cfg->packet_bytes - ILAB_NIC_TCPIP_HEADERS : 0) *
				    8 / 1e9;
		if (cfg->link_gbps > 0)
			res->line_gbps = cfg->link_gbps *
					 (cfg->packet_bytes > ILAB_NIC_TCPIP_HEADERS
						  ? cfg->packet_bytes - ILAB_NIC_TCPIP_HEADERS : 0) /
					 (cfg->packet_bytes + ILAB_NIC_WIRE_OVERHEAD);
		if (res->dma_faults || res->map_errors) {
			ret = -EIO;
			snprintf(err, errlen, "%llu NIC writes faulted, %llu maps failed",
				 (unsigned long long)res->dma_faults,
				 (unsigned long long)res->map_errors);
		}
	}
out_unmap:
	{
		int r2 = plat_run_threads(nq, cpus, ring_teardown, &n);

		if (r2 && !ret) {
			ret = r2;
			snprintf(err, errlen, "cannot tear the rings down (%d)", r2);
		}
	}
out_rings:
	for (unsigned i = 0; i < nq; i++)
		free(n.q[i].ring);
out:
	free(n.q);
	free(cpus);
	free(aa);
	free(n.payload);
	return ret;
}
