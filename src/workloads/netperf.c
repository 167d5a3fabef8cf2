/* netperf.c — netperf's TCP_STREAM, TCP_MAERTS and TCP_RR on the NIC model
 * (include/iommulab/netperf.h). Simulator only. TCP_MAERTS is the receive model of nic.c
 * (the seeds' code, unchanged) with the profile's constants; this file adds transmit and the
 * request-response loop. Not the machine's set-up (nic_env.c) nor the scenario glue
 * (netperf_experiments.c).
 *
 * Transmit, per skb (the CPU thread of the stream's queue): tx_skb_ns and the copy of its
 * payload into the socket's page fragments, then dma_map_single of the linear part (the
 * headers) and of each page fragment (ilab_netperf_frags), the descriptors, the doorbell (a
 * tracked store). The NIC's queue agent reads each fragment by DMA through the IOMMU, sends
 * the skb's TSO segments at the queue's share of the line rate and writes the completion;
 * the CPU reaps completions (tx_clean_ns and an unmap per fragment) before building the next
 * skb, and waits for one (an interrupt, irq_ns) when the ring is full.
 *
 * TCP_RR, per stream: one transaction at a time. The CPU sends the request as above; the
 * NIC reads it (its DMA inside nic_tx_ns from the doorbell), sends it (wire time), writes
 * the TX completion; the request crosses the wire (wire_ns), the peer turns it round
 * (ilab_netperf_peer_ns), the response comes back (wire_ns and its wire time); the NIC
 * writes it by DMA into the next posted receive buffer (inside nic_rx_ns) and raises the
 * interrupt. The CPU: irq_ns, the TX completion (tx_clean_ns, unmaps), the receive buffer's
 * unmap, rx_buffer_ns and the copy of the response, the buffer mapped again and posted. The
 * transaction's latency is from the send call to the end of that work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/board.h>
#include <iommulab/dma_iommu.h>
#include <iommulab/nic.h>
#include <iommulab/netperf.h>
#include <iommulab/lat_hist.h>
#include <iommulab/plat.h>
#include <iommulab/sim.h>

#define FRAG_PAGES 4u       /* order-3 pages a stream's page-fragment stream cycles through */
#define HDR_SLOT 128u       /* bytes of header area per TX descriptor (the skb head) */

/* ---- the arithmetic ------------------------------------------------------------------------ */

unsigned ilab_netperf_skbs(unsigned bytes)
{
	return bytes ? (bytes + ILAB_NETPERF_TSO_BYTES - 1) / ILAB_NETPERF_TSO_BYTES : 1;
}

unsigned ilab_netperf_segments(unsigned payload)
{
	return payload ? (payload + ILAB_NETPERF_MSS - 1) / ILAB_NETPERF_MSS : 1;
}

unsigned ilab_netperf_frags(uint64_t offset, unsigned payload)
{
	if (!payload)
		return 1; /* the headers alone */
	return 2 + (unsigned)((offset + payload - 1) / ILAB_NETPERF_FRAG_PAGE -
			      offset / ILAB_NETPERF_FRAG_PAGE);
}

double ilab_netperf_wire_ns(unsigned payload, double gbps)
{
	unsigned segs = ilab_netperf_segments(payload);
	double bytes = (double)payload + segs * (double)(ILAB_NIC_TCPIP_HEADERS +
						     ILAB_NIC_WIRE_OVERHEAD);

	return gbps > 0 ? bytes * 8 / gbps : 0;
}

unsigned ilab_netperf_udp_packets(unsigned bytes)
{
	if (bytes <= ILAB_NETPERF_UDP_FIRST)
		return 1;
	return 1 + (bytes - ILAB_NETPERF_UDP_FIRST + ILAB_NETPERF_UDP_NEXT - 1) /
		   ILAB_NETPERF_UDP_NEXT;
}

unsigned ilab_netperf_udp_piece(unsigned bytes, unsigned k)
{
	unsigned left;

	if (!k)
		return bytes < ILAB_NETPERF_UDP_FIRST ? bytes : ILAB_NETPERF_UDP_FIRST;
	left = bytes - ILAB_NETPERF_UDP_FIRST - (k - 1) * ILAB_NETPERF_UDP_NEXT;
	return left < ILAB_NETPERF_UDP_NEXT ? left : ILAB_NETPERF_UDP_NEXT;
}

/* One UDP packet on the wire: its payload, IPv4's 20 bytes, the UDP header's 8 on the first,
 * and Ethernet's header, FCS, preamble and gap. */
static double udp_packet_wire_ns(unsigned payload, bool first, double gbps)
{
	double bytes = (double)payload + 20 + (first ? 8 : 0) + ILAB_NIC_WIRE_OVERHEAD;

	return gbps > 0 ? bytes * 8 / gbps : 0;
}

double ilab_netperf_udp_wire_ns(unsigned bytes, double gbps)
{
	double ns = 0;

	for (unsigned k = 0; k < ilab_netperf_udp_packets(bytes); k++)
		ns += udp_packet_wire_ns(ilab_netperf_udp_piece(bytes, k), !k, gbps);
	return ns;
}

unsigned ilab_netperf_irq_slot(const struct ilab_netperf_cfg *c, unsigned i, unsigned ncpus)
{
	unsigned ch = c->channels && c->channels < ncpus ? c->channels : ncpus;

	return ((i < ch ? i : i % ch) + c->irq_shift) % ncpus;
}

uint64_t ilab_netperf_copy_ns(uint64_t bytes, uint64_t copy_mbps)
{
	return copy_mbps ? (bytes * 1000 + copy_mbps / 2) / copy_mbps : 0;
}

static uint64_t peer_turn_ns(const struct ilab_netperf_cfg *c, unsigned req, unsigned rsp)
{
	return c->nic_rx_ns + c->irq_ns + c->rx_buffer_ns + ilab_netperf_copy_ns(req, c->copy_mbps) +
	       c->tx_skb_ns + ilab_netperf_copy_ns(rsp, c->copy_mbps) + c->nic_tx_ns;
}

uint64_t ilab_netperf_peer_ns(const struct ilab_netperf_cfg *c)
{
	return peer_turn_ns(c, c->req_bytes, c->rsp_bytes);
}

static bool is_udp(const struct ilab_netperf_cfg *c)
{
	return c->test == ILAB_NETPERF_UDP_STREAM || c->test == ILAB_NETPERF_UDP_RR;
}

static bool is_rr(const struct ilab_netperf_cfg *c)
{
	return c->test == ILAB_NETPERF_RR || c->test == ILAB_NETPERF_UDP_RR ||
	       c->test == ILAB_NETPERF_CRR;
}

/* ---- state ----------------------------------------------------------------------------------- */

struct np_skb {
	ilab_pa_t pa[ILAB_NETPERF_MAX_FRAGS];
	ilab_dma_addr_t dma[ILAB_NETPERF_MAX_FRAGS];
	uint32_t len[ILAB_NETPERF_MAX_FRAGS];
	unsigned nfrags, payload;
	bool udp, udp_first, last;  /* a UDP packet, its datagram's first, its datagram's last */
	bool want_rsp;              /* RR: the peer answers this one with rsp_bytes */
	uint64_t t_send;            /* UDP: its datagram's send call */
	unsigned rsp_bytes;
};

struct np_queue {
	/* CPU -> NIC: skbs posted; NIC -> CPU: skbs completed */
	_Alignas(PLAT_CACHELINE) plat_word32 tx_tail;
	_Alignas(PLAT_CACHELINE) plat_word32 tx_done;
	/* CPU -> NIC: receive buffers posted; NIC -> CPU: receive buffers filled */
	_Alignas(PLAT_CACHELINE) plat_word32 rx_tail;
	_Alignas(PLAT_CACHELINE) plat_word32 rx_head;
	/* cleaning CPU -> sending CPU: skbs cleaned, when another CPU reaps them */
	_Alignas(PLAT_CACHELINE) plat_word32 tx_clean;
	_Alignas(PLAT_CACHELINE) unsigned index;
	int cpu;
	unsigned plan, irq_plan;   /* the CPUs (np_cpu) that send and that reap its completions */
	uint32_t cleaned;          /* the reaping CPU's count */
	unsigned left, frag_k;     /* the send call in progress: bytes left, its next packet */
	uint64_t t_send, next_send; /* its start; the paced next one's */
	struct plat_agent *agent;
	struct np_skb *tx;
	ilab_pa_t hdr_pa, frag_pa[FRAG_PAGES];
	ilab_pa_t *rx_pa;
	ilab_dma_addr_t *rx_dma;
	unsigned hdr_order, rx_order, nr_frag_pages, nr_rx;
	bool has_hdr;
	int setup_failed;
	/* CPU private */
	uint64_t frag_off, tx_skbs, tx_maps, tx_unmaps, map_errors, interrupts, rx_buffers;
	uint64_t tx_remote_unmaps;
	uint64_t transactions;
	struct ilab_lat_hist *lat; /* the window's transaction latencies */
	uint64_t t_begin, t_end, idle_ns;
	/* NIC private */
	uint64_t bytes, skbs, segments, messages, faults, dropped;
	uint64_t last_transit;
	double jitter;
};

/* A CPU of the run when completions are reaped away from the senders: the stream it sends
 * (or -1) and the queues whose interrupt it takes. The NIC, and a CPU that freed a sender's
 * ring slots, bump its event word; it waits on nothing else. */
struct np_cpu {
	_Alignas(PLAT_CACHELINE) plat_word32 ev;
	_Alignas(PLAT_CACHELINE) int cpu;
	int stream;
	unsigned nclean, *clean;
	uint64_t t_begin, t_end, idle_ns, interrupts;
};

struct np {
	struct ilab_board *board;
	struct ilab_dev *dev;
	const struct ilab_netperf_cfg *cfg;
	unsigned unit;
	double queue_gbps;     /* a queue's share of the line */
	size_t rx_bytes;       /* an RR receive buffer: the response and its headers */
	uint64_t start_ns, win_lo, win_hi;
	struct np_queue *q;
	void *scratch;         /* what the NIC reads and writes */
	bool cross;            /* some stream's completions are reaped on another CPU */
	unsigned nr_cpus;      /* np_cpu entries */
	struct np_cpu *cpu;
	unsigned hdr;          /* the skb's linear part: TCP's 66 or UDP's 42 */
};

static unsigned order_of(size_t bytes)
{
	unsigned o = 0;

	while (((size_t)ILAB_PAGE_SIZE << o) < bytes)
		o++;
	return o;
}

/* ---- set-up and tear-down, on each stream's CPU ------------------------------------------ */

static void queue_setup(unsigned idx, void *arg)
{
	struct np *n = arg;
	struct np_queue *q = &n->q[idx];
	struct ilab_mem *mem = ilab_board_mem(n->board);
	int node = plat_this_node();

	q->hdr_order = order_of((size_t)n->cfg->ring_size * HDR_SLOT);
	if (ilab_mem_alloc_pages(mem, node, q->hdr_order, &q->hdr_pa))
		goto nomem;
	q->has_hdr = true;
	for (; q->nr_frag_pages < FRAG_PAGES; q->nr_frag_pages++)
		if (ilab_mem_alloc_pages(mem, node, order_of(ILAB_NETPERF_FRAG_PAGE),
					 &q->frag_pa[q->nr_frag_pages]))
			goto nomem;
	if (!is_rr(n->cfg))
		return;
	q->rx_order = order_of(n->rx_bytes);
	for (; q->nr_rx < n->cfg->ring_size; q->nr_rx++) {
		unsigned i = q->nr_rx;

		if (ilab_mem_alloc_pages(mem, node, q->rx_order, &q->rx_pa[i]))
			goto nomem;
		q->rx_dma[i] = ilab_dma_map_single(n->dev, q->rx_pa[i], n->rx_bytes,
						   ILAB_DMA_FROM_DEVICE);
		if (ilab_dma_mapping_error(q->rx_dma[i])) {
			ilab_mem_free_pages(mem, q->rx_pa[i], q->rx_order);
			q->setup_failed = -EIO;
			return;
		}
	}
	plat_store32(&q->rx_tail, n->cfg->ring_size);
	return;
nomem:
	q->setup_failed = -ENOMEM;
}

static void tx_unmap(struct np *n, struct np_queue *q, struct np_skb *s)
{
	for (unsigned f = 0; f < s->nfrags; f++) {
		ilab_dma_unmap_single(n->dev, s->dma[f], s->len[f], ILAB_DMA_TO_DEVICE);
		q->tx_unmaps++;
	}
	s->nfrags = 0;
}

static void queue_teardown(unsigned idx, void *arg)
{
	struct np *n = arg;
	struct np_queue *q = &n->q[idx];
	struct ilab_mem *mem = ilab_board_mem(n->board);

	for (unsigned i = 0; i < n->cfg->ring_size; i++)
		tx_unmap(n, q, &q->tx[i]);
	for (unsigned i = 0; i < q->nr_rx; i++) {
		ilab_dma_unmap_single(n->dev, q->rx_dma[i], n->rx_bytes, ILAB_DMA_FROM_DEVICE);
		ilab_mem_free_pages(mem, q->rx_pa[i], q->rx_order);
	}
	for (unsigned i = 0; i < q->nr_frag_pages; i++)
		ilab_mem_free_pages(mem, q->frag_pa[i], order_of(ILAB_NETPERF_FRAG_PAGE));
	if (q->has_hdr)
		ilab_mem_free_pages(mem, q->hdr_pa, q->hdr_order);
	q->nr_rx = q->nr_frag_pages = 0;
	q->has_hdr = false;
}

/* ---- the CPU side ------------------------------------------------------------------------- */

struct seen_arg {
	uint32_t seen;
};

static bool word_moved(uint64_t v, void *arg)
{
	return (uint32_t)v != ((struct seen_arg *)arg)->seen;
}

/* Build skb `slot` of `payload` bytes: the stack's cost, the copy into the page fragments,
 * a map of the headers and of each fragment. False when a map failed (nothing left mapped). */
static bool tx_build(struct np *n, struct np_queue *q, unsigned slot, unsigned payload,
		     unsigned hdr)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	struct np_skb *s = &q->tx[slot];
	unsigned left = payload, nf = 1;

	plat_charge_ns(c->tx_skb_ns + ilab_netperf_copy_ns(payload, c->copy_mbps));
	s->payload = payload;
	s->nfrags = 0;
	s->udp = s->udp_first = s->want_rsp = false;
	s->last = true;
	s->pa[0] = q->hdr_pa + (ilab_pa_t)slot * HDR_SLOT;
	s->len[0] = hdr;
	for (; left; nf++) { /* at most 3 page fragments: payload <= 65160 */
		uint64_t in_page = q->frag_off % ILAB_NETPERF_FRAG_PAGE;
		unsigned room = ILAB_NETPERF_FRAG_PAGE - (unsigned)in_page;
		unsigned len = left < room ? left : room;

		s->pa[nf] = q->frag_pa[(q->frag_off / ILAB_NETPERF_FRAG_PAGE) % FRAG_PAGES] +
			    in_page;
		s->len[nf] = len;
		q->frag_off += len;
		left -= len;
	}
	for (unsigned f = 0; f < nf; f++) {
		s->dma[f] = ilab_dma_map_single(n->dev, s->pa[f], s->len[f], ILAB_DMA_TO_DEVICE);
		if (ilab_dma_mapping_error(s->dma[f])) {
			q->map_errors++;
			tx_unmap(n, q, s);
			return false;
		}
		s->nfrags = f + 1;
		q->tx_maps++;
	}
	q->tx_skbs++;
	return true;
}

/* Reap the TX completions the NIC has written: tx_clean_ns and the unmaps per skb. */
static uint32_t tx_reap(struct np *n, struct np_queue *q, uint32_t reaped)
{
	uint32_t done = plat_load32(&q->tx_done);

	for (; reaped != done; reaped++) {
		plat_charge_ns(n->cfg->tx_clean_ns);
		tx_unmap(n, q, &q->tx[reaped % n->cfg->ring_size]);
	}
	return reaped;
}

/* Wait for `w` to move from `seen` (the interrupt), up to the window's end: false at the end. */
static bool wait_irq(struct np *n, struct np_queue *q, plat_word32 *w, uint32_t seen)
{
	struct seen_arg a = { seen };
	uint64_t now = plat_now_ns();

	if (now >= n->win_hi || plat_poll(w, 4, word_moved, &a, n->win_hi - now)) {
		q->idle_ns += plat_now_ns() - now;
		return false;
	}
	q->idle_ns += plat_now_ns() - now;
	plat_charge_ns(n->cfg->irq_ns);
	q->interrupts++;
	return true;
}

/* The next skb of the send call in progress into slot `posted`, posted to the NIC: a TSO
 * piece of a TCP send, or one IP packet of a UDP datagram. Returns the new posted count. */
static uint32_t stream_send(struct np *n, struct np_queue *q, uint32_t posted)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	struct np_skb *s = &q->tx[posted % c->ring_size];
	unsigned piece, k = q->frag_k;

	if (!q->left) {
		q->left = c->send_bytes; /* the next send call */
		q->frag_k = k = 0;
		q->t_send = plat_now_ns();
	}
	if (c->test == ILAB_NETPERF_UDP_STREAM)
		piece = ilab_netperf_udp_piece(c->send_bytes, q->frag_k++);
	else
		piece = q->left < ILAB_NETPERF_TSO_BYTES ? q->left : ILAB_NETPERF_TSO_BYTES;
	q->left -= piece;
	if (!tx_build(n, q, posted % c->ring_size, piece,
		      c->test == ILAB_NETPERF_UDP_STREAM && k ? n->hdr - 8 : n->hdr))
		return posted; /* dropped: the send is lost, the stream goes on */
	s->udp = c->test == ILAB_NETPERF_UDP_STREAM;
	s->udp_first = !k;
	s->t_send = q->t_send;
	s->last = !q->left;
	plat_store32(&q->tx_tail, ++posted);
	return posted;
}

/* iperf3 -b: before a new send call, wait until the stream's payload so far is within its
 * rate; false when that is past the window's end. */
static bool pace(struct np *n, struct np_queue *q)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	uint64_t now = plat_now_ns();

	if (!(c->rate_bps > 0) || q->left)
		return true;
	if (!q->next_send)
		q->next_send = now;
	if (q->next_send >= n->win_hi)
		return false;
	if (now < q->next_send) {
		plat_sleep_ns(q->next_send - now);
		q->idle_ns += q->next_send - now;
	}
	q->next_send += (uint64_t)(c->send_bytes * 8e9 / c->rate_bps + 0.5);
	return true;
}

static void stream_cpu(unsigned idx, void *arg)
{
	struct np *n = arg;
	struct np_queue *q = &n->q[idx];
	const struct ilab_netperf_cfg *c = n->cfg;
	uint32_t posted = 0, reaped = 0;

	q->t_begin = plat_now_ns();
	while (plat_now_ns() < n->win_hi) {
		reaped = tx_reap(n, q, reaped);
		if (posted - reaped == c->ring_size) {
			if (!wait_irq(n, q, &q->tx_done, posted - c->ring_size))
				break;
			continue;
		}
		if (!pace(n, q))
			break;
		posted = stream_send(n, q, posted);
	}
	q->t_end = plat_now_ns();
}

/* ---- completions on another CPU ---------------------------------------------------------- */

/* Reap the completions of every queue whose interrupt CPU p is: tx_clean_ns and the unmaps,
 * here. Another stream's queue is an interrupt (irq_ns per pass that finds its completions:
 * the MSI-X landed here and NAPI ran), its sender is told of the freed slots (the socket's
 * write-space wake-up). The own queue's completions are reaped inline, as stream_cpu does.
 * Returns the skbs reaped. */
static unsigned cross_reap(struct np *n, struct np_cpu *p)
{
	unsigned total = 0;
	bool irq = false;

	for (unsigned k = 0; k < p->nclean; k++) {
		struct np_queue *q = &n->q[p->clean[k]];
		uint32_t done = plat_load32(&q->tx_done);
		bool foreign = (int)q->index != p->stream;

		if (done == q->cleaned)
			continue;
		if (foreign && !irq) {
			plat_charge_ns(n->cfg->irq_ns);
			p->interrupts++;
			irq = true;
		}
		for (; q->cleaned != done; q->cleaned++, total++) {
			struct np_skb *s = &q->tx[q->cleaned % n->cfg->ring_size];

			plat_charge_ns(n->cfg->tx_clean_ns);
			if (foreign)
				q->tx_remote_unmaps += s->nfrags;
			tx_unmap(n, q, s);
		}
		plat_store32(&q->tx_clean, q->cleaned);
		if (foreign)
			plat_fetch_add32(&n->cpu[q->plan].ev, 1);
	}
	return total;
}

/* Wait for p's event word to move from `seen`, up to the window's end: false at the end. */
static bool cross_wait(struct np *n, struct np_cpu *p, uint32_t seen)
{
	struct seen_arg a = { seen };
	uint64_t now = plat_now_ns();
	int ret = now >= n->win_hi ? -ETIMEDOUT
				   : plat_poll(&p->ev, 4, word_moved, &a, n->win_hi - now);

	p->idle_ns += plat_now_ns() - now;
	return !ret;
}

static void cross_cpu(unsigned idx, void *arg)
{
	struct np *n = arg;
	struct np_cpu *p = &n->cpu[idx];
	struct np_queue *q = p->stream >= 0 ? &n->q[p->stream] : NULL;
	bool own = q && q->irq_plan == idx;
	uint32_t posted = 0;

	p->t_begin = plat_now_ns();
	if (q)
		q->t_begin = p->t_begin;
	while (plat_now_ns() < n->win_hi) {
		uint32_t seen = plat_load32(&p->ev), freed;

		if (cross_reap(n, p))
			continue;
		if (!q) { /* an interrupt CPU only */
			if (!cross_wait(n, p, seen))
				break;
			continue;
		}
		freed = own ? q->cleaned : plat_load32(&q->tx_clean);
		if (posted - freed == n->cfg->ring_size) {
			if (!cross_wait(n, p, seen))
				break;
			if (own) { /* its own queue's interrupt, as wait_irq */
				plat_charge_ns(n->cfg->irq_ns);
				p->interrupts++;
			}
			continue;
		}
		if (!pace(n, q))
			break;
		posted = stream_send(n, q, posted);
	}
	p->t_end = plat_now_ns();
	if (q) {
		q->t_end = p->t_end;
		p->idle_ns += q->idle_ns; /* pace()'s waits */
		q->idle_ns = p->idle_ns;
	}
}

static void record(struct np_queue *q, uint64_t lat)
{
	ilab_lat_hist_add(q->lat, lat);
}

/* One packet of a transaction: this host sends `tx` payload bytes, and when `rsp` the peer
 * answers with rsp_bytes. TCP_RR and UDP_RR are one step; TCP_CRR is connect (SYN, SYN-ACK,
 * ACK), the request and its response, and close (FIN, the peer's FIN, ACK): five packets
 * out, three in, three round trips. */
struct rr_step {
	unsigned tx;
	bool rsp;
	unsigned rsp_bytes;
};

static unsigned rr_steps(const struct ilab_netperf_cfg *c, struct rr_step *st)
{
	if (c->test != ILAB_NETPERF_CRR) {
		st[0] = (struct rr_step){ c->req_bytes, true, c->rsp_bytes };
		return 1;
	}
	st[0] = (struct rr_step){ 0, true, 0 };              /* SYN, SYN-ACK */
	st[1] = (struct rr_step){ 0, false, 0 };             /* ACK */
	st[2] = (struct rr_step){ c->req_bytes, true, c->rsp_bytes };
	st[3] = (struct rr_step){ 0, true, 0 };              /* FIN, the peer's FIN */
	st[4] = (struct rr_step){ 0, false, 0 };             /* the last ACK */
	return 5;
}

/* The response's receive buffer: unmapped, the stack and the copy, mapped again, posted.
 * False when the map failed (the ring would shrink; the run reports -EIO). */
static bool rr_receive(struct np *n, struct np_queue *q, uint32_t rx_seen, unsigned bytes)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	unsigned b = rx_seen % c->ring_size;

	ilab_dma_unmap_single(n->dev, q->rx_dma[b], n->rx_bytes, ILAB_DMA_FROM_DEVICE);
	plat_charge_ns(c->rx_buffer_ns + ilab_netperf_copy_ns(bytes, c->copy_mbps));
	q->rx_dma[b] = ilab_dma_map_single(n->dev, q->rx_pa[b], n->rx_bytes, ILAB_DMA_FROM_DEVICE);
	if (ilab_dma_mapping_error(q->rx_dma[b])) {
		q->map_errors++;
		return false;
	}
	q->rx_buffers++;
	return true;
}

static void rr_cpu(unsigned idx, void *arg)
{
	struct np *n = arg;
	struct np_queue *q = &n->q[idx];
	const struct ilab_netperf_cfg *c = n->cfg;
	uint32_t posted = 0, reaped = 0, rx_seen = 0, rx_posted = c->ring_size;
	struct rr_step st[5];
	unsigned nst = rr_steps(c, st);

	q->t_begin = plat_now_ns();
	while (plat_now_ns() < n->win_hi &&
	       (!c->transactions || q->transactions < c->transactions)) {
		uint64_t t0 = plat_now_ns(), t1;
		bool ok = true, lost = false;

		for (unsigned k = 0; ok && k < nst; k++) {
			struct np_skb *s = &q->tx[posted % c->ring_size];

			if (!tx_build(n, q, posted % c->ring_size, st[k].tx, n->hdr)) {
				/* the first packet is sent again; a later one fails the run (-EIO) */
				lost = !k;
				ok = !k;
				break;
			}
			s->udp = s->udp_first = is_udp(c);
			s->want_rsp = st[k].rsp;
			s->rsp_bytes = st[k].rsp_bytes;
			plat_store32(&q->tx_tail, ++posted);
			if (!st[k].rsp)
				continue;
			if (!wait_irq(n, q, &q->rx_head, rx_seen))
				goto out;
			reaped = tx_reap(n, q, reaped);
			ok = rr_receive(n, q, rx_seen++, st[k].rsp_bytes);
			if (ok)
				plat_store32(&q->rx_tail, ++rx_posted);
		}
		if (!ok)
			break;
		if (lost)
			continue;
		t1 = plat_now_ns();
		if (t1 >= n->win_lo && t1 < n->win_hi) {
			q->transactions++;
			record(q, t1 - t0);
		}
	}
out:
	q->t_end = plat_now_ns();
}

/* ---- the NIC side: one agent per queue ------------------------------------------------------ */

struct agent_arg {
	struct np *n;
	struct np_queue *q;
};

static void sleep_until(uint64_t t)
{
	uint64_t now = plat_now_ns();

	if (now < t)
		plat_sleep_ns(t - now);
}

/* The NIC reads skb `s` by DMA: its descriptors, then each fragment through the IOMMU. */
static void nic_fetch(struct np *n, struct np_queue *q, const struct np_skb *s)
{
	plat_mem_access(n->dev->node, 16 * s->nfrags, false); /* the descriptors */
	for (unsigned f = 0; f < s->nfrags; f++)
		if (ilab_board_dma_read(n->board, n->unit, n->dev->sid, 0, false, s->dma[f],
					n->scratch, s->len[f], NULL))
			q->faults++;
}

static void count_tx(struct np *n, struct np_queue *q, const struct np_skb *s)
{
	uint64_t now = plat_now_ns();

	if (now < n->win_lo || now >= n->win_hi)
		return;
	q->bytes += s->payload;
	q->skbs++;
	if (s->udp && s->last) { /* the datagram's transit, for the receiver's jitter */
		uint64_t transit = now - s->t_send;

		if (q->messages) {
			double d = transit > q->last_transit ? (double)(transit - q->last_transit)
							     : (double)(q->last_transit - transit);

			q->jitter += (d - q->jitter) / 16;
		}
		q->last_transit = transit;
		q->messages++;
	}
	if (n->cfg->report_interval_ns && n->cfg->interval_bytes) {
		uint64_t i = (now - n->win_lo) / n->cfg->report_interval_ns;

		if (i < n->cfg->intervals)
			n->cfg->interval_bytes[(uint64_t)q->index * n->cfg->intervals + i] +=
				s->payload;
	}
	q->segments += s->udp ? 1 : ilab_netperf_segments(s->payload);
}

/* An skb's time on a link of gbps: TSO segments, or one UDP packet. */
static double skb_wire_ns(const struct np_skb *s, double gbps)
{
	return s->udp ? udp_packet_wire_ns(s->payload, s->udp_first, gbps)
		      : ilab_netperf_wire_ns(s->payload, gbps);
}

/* A response of `bytes` on the wire: one UDP packet, or TCP segments. */
static double rsp_wire_ns(const struct ilab_netperf_cfg *c, unsigned bytes)
{
	return is_udp(c) ? udp_packet_wire_ns(bytes, true, c->link_gbps)
			 : ilab_netperf_wire_ns(bytes, c->link_gbps);
}

/* Wait for the CPU to post skb number `taken`; false when asked to stop. */
static bool nic_wait_tx(struct plat_agent *agent, struct np_queue *q, uint32_t taken)
{
	struct seen_arg a = { taken };

	while (plat_load32(&q->tx_tail) == taken)
		if (plat_agent_should_stop(agent) || plat_poll(&q->tx_tail, 4, word_moved, &a, 0))
			return false;
	return true;
}

static void stream_nic(struct plat_agent *agent, void *arg)
{
	struct agent_arg *a = arg;
	struct np *n = a->n;
	struct np_queue *q = a->q;
	uint64_t link_free = 0;
	uint32_t taken = 0;

	while (!plat_agent_should_stop(agent) && nic_wait_tx(agent, q, taken)) {
		const struct np_skb *s = &q->tx[taken % n->cfg->ring_size];
		uint64_t now;

		nic_fetch(n, q, s);
		now = plat_now_ns();
		link_free = (link_free > now ? link_free : now) +
			    (uint64_t)(skb_wire_ns(s, n->queue_gbps) + 0.5);
		sleep_until(link_free);
		count_tx(n, q, s);
		plat_store32(&q->tx_done, ++taken);
		if (n->cross) /* the MSI-X write to the queue's interrupt CPU */
			plat_fetch_add32(&n->cpu[q->irq_plan].ev, 1);
	}
}

static void rr_nic(struct plat_agent *agent, void *arg)
{
	struct agent_arg *a = arg;
	struct np *n = a->n;
	struct np_queue *q = a->q;
	const struct ilab_netperf_cfg *c = n->cfg;
	uint32_t taken = 0, rx_taken = 0;

	while (!plat_agent_should_stop(agent) && nic_wait_tx(agent, q, taken)) {
		const struct np_skb *s = &q->tx[taken % c->ring_size];
		uint64_t t = plat_now_ns(), back;
		unsigned rsp = s->rsp_bytes;
		bool want = s->want_rsp;

		nic_fetch(n, q, s);
		sleep_until(t + c->nic_tx_ns);
		plat_sleep_ns((uint64_t)(skb_wire_ns(s, c->link_gbps) + 0.5));
		count_tx(n, q, s);
		back = 2 * c->wire_ns + peer_turn_ns(c, s->payload, rsp) +
		       (uint64_t)(rsp_wire_ns(c, rsp) + 0.5);
		plat_store32(&q->tx_done, ++taken);
		if (!want)
			continue; /* an ACK: the peer does not answer */
		plat_sleep_ns(back);
		if (plat_load32(&q->rx_tail) == rx_taken) {
			q->dropped++; /* no buffer posted: the response is lost */
			continue;
		}
		t = plat_now_ns();
		if (ilab_board_dma_write(n->board, n->unit, n->dev->sid, 0, false,
					 q->rx_dma[rx_taken % c->ring_size], n->scratch,
					 rsp + n->hdr, NULL))
			q->faults++;
		sleep_until(t + c->nic_rx_ns);
		plat_store32(&q->rx_head, ++rx_taken);
	}
}

/* ---- the run ---------------------------------------------------------------------------- */

static int check(const struct ilab_netperf_cfg *c, char *err, size_t errlen)
{
#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)
	if (!c)
		return BAD("no netperf configuration");
	if ((unsigned)c->test >= ILAB_NETPERF_NR_TESTS)
		return BAD("unknown test %d", (int)c->test);
	if (c->queues < 1 || c->queues > ILAB_NETPERF_MAX_QUEUES)
		return BAD("queues must be 1..%u, not %u", ILAB_NETPERF_MAX_QUEUES, c->queues);
	if (c->queues > plat_cpu_count())
		return BAD("%u queues need as many CPUs; the machine has %u", c->queues,
			   plat_cpu_count());
	if (c->test == ILAB_NETPERF_UDP_STREAM &&
	    (c->send_bytes < 1 || c->send_bytes > ILAB_NETPERF_UDP_MAX))
		return BAD("a UDP datagram holds 1..%u bytes, not %u", ILAB_NETPERF_UDP_MAX,
			   c->send_bytes);
	if (!is_rr(c) && (c->send_bytes < 1 || c->send_bytes > ILAB_NETPERF_MAX_MSG))
		return BAD("the send size must be 1..%u bytes, not %u", ILAB_NETPERF_MAX_MSG,
			   c->send_bytes);
	if (c->test == ILAB_NETPERF_UDP_RR &&
	    (c->req_bytes < 1 || c->req_bytes > ILAB_NETPERF_UDP_FIRST || c->rsp_bytes < 1 ||
	     c->rsp_bytes > ILAB_NETPERF_UDP_FIRST))
		return BAD("UDP_RR's request and response sizes must be 1..%u bytes (one packet: "
			   "IP fragments are not modelled there), not %u,%u", ILAB_NETPERF_UDP_FIRST,
			   c->req_bytes, c->rsp_bytes);
	if (c->rate_bps < 0 || (c->rate_bps > 0 && c->test != ILAB_NETPERF_UDP_STREAM))
		return BAD("a rate limit is modelled for UDP_STREAM only");
	if (c->transactions && !is_rr(c))
		return BAD("a count of transactions needs a request/response test");
	if (c->bind && c->bind_cpu >= plat_cpu_count())
		return BAD("-T %u: the machine has CPUs 0..%u", c->bind_cpu, plat_cpu_count() - 1);
	if (c->remote_bind && c->remote_cpu >= plat_cpu_count())
		return BAD("-T ,%u: the peer (modelled as this machine) has CPUs 0..%u",
			   c->remote_cpu, plat_cpu_count() - 1);
	if (c->bind && (c->queues != 1 || c->test == ILAB_NETPERF_MAERTS))
		return BAD("-T binds the one stream of a sending test: not with %u queues or "
			   "TCP_MAERTS", c->queues);
	if (c->irq_shift >= plat_cpu_count())
		return BAD("irq_shift must be below the machine's %u CPUs, not %u",
			   plat_cpu_count(), c->irq_shift);
	if ((c->test == ILAB_NETPERF_RR || c->test == ILAB_NETPERF_CRR) &&
	    (c->req_bytes < 1 || c->req_bytes > ILAB_NETPERF_TSO_BYTES || c->rsp_bytes < 1 ||
	     c->rsp_bytes > ILAB_NETPERF_TSO_BYTES))
		return BAD("request and response sizes must be 1..%u bytes (one TSO skb), not "
			   "%u,%u", ILAB_NETPERF_TSO_BYTES, c->req_bytes, c->rsp_bytes);
	if (c->ring_size < 2 || c->ring_size > 4096)
		return BAD("ring_size must be 2..4096, not %u", c->ring_size);
	if (!(c->link_gbps > 0))
		return BAD("the NIC needs a line rate");
	if (!c->duration_ns)
		return BAD("duration must be > 0");
	return 0;
#undef BAD
}

/* TCP_MAERTS: the peer sends, this host receives: the receive model, its packets the wire's
 * (a send below the MSS is one packet; above, MTU frames the NIC aggregates into 64 KiB
 * buffers as in seed 003). */
static int run_maerts(struct ilab_board *board, struct ilab_dev *dev,
		      const struct ilab_netperf_cfg *c, struct ilab_netperf_result *res,
		      char *err, size_t errlen)
{
	unsigned payload = c->send_bytes < ILAB_NETPERF_MSS ? c->send_bytes : ILAB_NETPERF_MSS;
	struct ilab_nic_cfg nc = {
		.queues = c->queues, .link_gbps = c->link_gbps,
		.max_buffers_mps = c->rx_completions_mps,
		.packet_bytes = payload + ILAB_NIC_TCPIP_HEADERS, .ring_size = c->ring_size,
		.stack_buffer_ns = c->rx_buffer_ns, .copy_mbps = c->copy_mbps,
		.duration_ns = c->duration_ns, .warmup_ns = c->warmup_ns,
	};
	struct ilab_nic_result nr;
	int ret;

	if (nc.packet_bytes < 64)
		nc.packet_bytes = 64; /* Ethernet's minimum frame: the payload is padded */
	nc.frames_per_buffer = payload == ILAB_NETPERF_MSS ? 65536 / nc.packet_bytes : 1;
	if (c->report_interval_ns && c->interval_bytes) {
		/* frames counted where the bytes go, then made bytes */
		nc.report_interval_ns = c->report_interval_ns;
		nc.intervals = c->intervals;
		nc.interval_frames = c->interval_bytes;
	}
	ret = ilab_nic_run(board, dev, &nc, &nr, err, errlen);
	if (ret)
		return ret;
	for (uint64_t i = 0; nc.interval_frames && i < (uint64_t)c->queues * c->intervals; i++)
		c->interval_bytes[i] *= payload;
	res->window_ns = nr.window_ns;
	res->bytes = nr.frames * (uint64_t)payload;
	res->gbps = res->bytes * 8.0 / (double)nr.window_ns;
	res->segments = nr.frames;
	res->rx_buffers = nr.buffers;
	res->cpu_busy = -1; /* the receive model does not measure it */
	return 0;
}

/* The CPU time of the run for netperf's -c: every CPU that ran its work, busy when not
 * waiting, over the whole run (warm-up included). */
static void collect_cpu(struct np *n, struct ilab_netperf_result *res)
{
	res->cpus = plat_cpu_count();
	if (!n->cross) {
		for (unsigned i = 0; i < n->cfg->queues; i++) {
			struct np_queue *q = &n->q[i];

			res->busy_ns += q->t_end - q->t_begin - q->idle_ns;
			if (q->t_end - q->t_begin > res->run_ns)
				res->run_ns = q->t_end - q->t_begin;
		}
		res->work_cpus = n->cfg->queues;
		return;
	}
	for (unsigned i = 0; i < n->nr_cpus; i++) {
		struct np_cpu *p = &n->cpu[i];

		res->busy_ns += p->t_end - p->t_begin - p->idle_ns;
		res->interrupts += p->interrupts;
		if (p->t_end - p->t_begin > res->run_ns)
			res->run_ns = p->t_end - p->t_begin;
	}
	res->work_cpus = n->nr_cpus;
}

/* The peer: what its stack received (UDP_STREAM: the datagrams one CPU per stream can take
 * at rx_buffer_ns and the copy each, within the NIC's completion rate: the rest are dropped,
 * as a UDP receiver drops) and the CPU time that took, for -C. The peer is this host's stack
 * without an IOMMU; nothing of it is simulated. */
static void peer_side(struct np *n, struct ilab_netperf_result *res)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	uint64_t per_msg, cap, nic_cap, turn;

	switch (c->test) {
	case ILAB_NETPERF_UDP_STREAM:
		per_msg = c->rx_buffer_ns + ilab_netperf_copy_ns(c->send_bytes, c->copy_mbps);
		cap = res->window_ns / per_msg;
		nic_cap = (uint64_t)(c->rx_completions_mps * 1e-3 * (double)res->window_ns) /
			  ilab_netperf_udp_packets(c->send_bytes) / c->queues;
		if (c->rx_completions_mps > 0 && nic_cap < cap)
			cap = nic_cap; /* the NIC's completions, shared by the streams */
		for (unsigned i = 0; i < c->queues; i++) {
			struct np_queue *q = &n->q[i];
			uint64_t got = q->messages < cap ? q->messages : cap;

			res->remote_messages += got;
			res->jitter_ns += q->jitter / c->queues;
			if (c->streams)
				c->streams[i] = (struct ilab_netperf_stream){
					.messages = q->messages, .remote_messages = got,
					.jitter_ns = q->jitter };
		}
		res->peer_busy_ns = res->remote_messages * per_msg;
		res->remote_gbps = res->remote_messages * (double)c->send_bytes * 8 /
				   (double)res->window_ns;
		break;
	case ILAB_NETPERF_STREAM: /* GRO's 64 KiB skbs (43 MSS), each a stack pass and a copy */
		res->peer_busy_ns = (res->segments + 42) / 43 * c->rx_buffer_ns +
				    ilab_netperf_copy_ns(res->bytes, c->copy_mbps);
		break;
	default: /* one turn-round (its stack's part) per response the peer sent */
		turn = c->irq_ns + c->rx_buffer_ns + c->tx_skb_ns +
		       ilab_netperf_copy_ns(c->req_bytes + c->rsp_bytes, c->copy_mbps);
		res->peer_busy_ns = res->transactions * turn *
				    (c->test == ILAB_NETPERF_CRR ? 3 : 1);
		break;
	}
}

static int collect(struct np *n, struct ilab_netperf_result *res, char *err, size_t errlen)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	struct ilab_lat_hist *all = malloc(sizeof(*all));

	if (!all)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	ilab_lat_hist_init(all);
	res->window_ns = c->transactions ? 0 : c->duration_ns;
	for (unsigned i = 0; i < c->queues; i++) {
		struct np_queue *q = &n->q[i];

		res->bytes += q->bytes;
		res->skbs += q->skbs;
		res->segments += q->segments;
		res->tx_skbs += q->tx_skbs;
		res->tx_maps += q->tx_maps;
		res->tx_unmaps += q->tx_unmaps;
		res->rx_buffers += q->rx_buffers;
		res->interrupts += q->interrupts;
		res->transactions += q->transactions;
		res->dma_faults += q->faults;
		res->map_errors += q->map_errors;
		res->messages += q->messages;
		res->tx_remote_unmaps += q->tx_remote_unmaps;
		if (q->t_end > q->t_begin)
			res->cpu_busy += 1.0 - (double)q->idle_ns / (double)(q->t_end - q->t_begin);
		if (c->transactions && q->t_end - n->win_lo > res->window_ns)
			res->window_ns = q->t_end - n->win_lo; /* -l -N: until the last stream ends */
		ilab_lat_hist_merge(all, q->lat);
	}
	res->cpu_busy /= c->queues;
	collect_cpu(n, res);
	peer_side(n, res);
	res->gbps = res->bytes * 8.0 / (double)res->window_ns;
	res->tps = res->transactions * 1e9 / (double)res->window_ns;
	if (all->n) {
		res->lat_min_ns = all->min;
		res->lat_max_ns = all->max;
		res->lat_mean_ns = ilab_lat_hist_mean(all);
		res->lat_p50_ns = ilab_lat_hist_percentile(all, 50);
		res->lat_p99_ns = ilab_lat_hist_percentile(all, 99);
		res->lat_p90_ns = ilab_lat_hist_percentile(all, 90);
	}
	free(all);
	return 0;
}

/* Queue i's CPU: the NIC node's CPUs in order, then the machine's others from CPU 0 (nic.c's
 * placement). */
static void pick_cpus(unsigned nq, int node, int *cpus)
{
	unsigned k = 0, on_node = node >= 0 ? plat_node_cpu_count((unsigned)node) : 0;

	for (unsigned i = 0; i < on_node && k < nq; i++)
		cpus[k++] = plat_node_cpu((unsigned)node, i);
	for (unsigned cpu = 0; cpu < plat_cpu_count() && k < nq; cpu++)
		if (node < 0 || plat_cpu_node(cpu) != node)
			cpus[k++] = (int)cpu;
}

static int alloc_queues(struct np *n, unsigned nq)
{
	n->q = plat_zalloc_array(nq, sizeof(*n->q));
	if (!n->q)
		return -ENOMEM;
	for (unsigned i = 0; i < nq; i++) {
		struct np_queue *q = &n->q[i];

		q->index = i;
		q->tx = plat_zalloc_array(n->cfg->ring_size, sizeof(*q->tx));
		q->rx_pa = plat_zalloc_array(n->cfg->ring_size, sizeof(*q->rx_pa));
		q->rx_dma = plat_zalloc_array(n->cfg->ring_size, sizeof(*q->rx_dma));
		q->lat = malloc(sizeof(*q->lat));
		if (!q->tx || !q->rx_pa || !q->rx_dma || !q->lat)
			return -ENOMEM;
		ilab_lat_hist_init(q->lat);
		plat_track(&q->tx_tail, "netperf.txq.tail");
		plat_track(&q->tx_done, "netperf.txq.done");
		plat_track(&q->rx_tail, "netperf.rxq.tail");
		plat_track(&q->rx_head, "netperf.rxq.head");
		plat_track(&q->tx_clean, "netperf.txq.clean");
	}
	return 0;
}

/* Where the streams' completions are reaped (netperf.h, cfg->channels): one np_cpu per
 * stream (entry i for stream i, on cpus[i]) and one per interrupt CPU that sends nothing.
 * A stream's XPS channel is its CPU's place in the spread order (i, unless bound by -T).
 * n->cross stays false, and nothing is allocated, when each stream's interrupt is its own
 * CPU's (the run is then stream_cpu's, as before the mechanism existed). */
static unsigned spread_pos(const int *order, unsigned ncpus, int cpu)
{
	unsigned p = 0;

	while (p < ncpus - 1 && order[p] != cpu)
		p++;
	return p;
}

static int plan_cpus(struct np *n, const int *cpus, const int *order, unsigned ncpus)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	unsigned nq = c->queues, nr = nq;
	int *plan_of = NULL;

	if (is_rr(c))
		return 0; /* the request/response tests reap on the stream's CPU */
	for (unsigned i = 0; i < nq; i++) {
		unsigned pos = spread_pos(order, ncpus, cpus[i]);

		n->cross |= ilab_netperf_irq_slot(c, pos, ncpus) != pos;
	}
	if (!n->cross)
		return 0;
	plan_of = malloc(ncpus * sizeof(*plan_of));
	/* zeroed and fresh to the simulator, as every object with a tracked word (plat.h) */
	n->cpu = plat_zalloc_array(2 * nq, sizeof(*n->cpu));
	if (!plan_of || !n->cpu) {
		free(plan_of);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < ncpus; i++)
		plan_of[i] = -1;
	for (unsigned i = 0; i < nq; i++) {
		plan_of[spread_pos(order, ncpus, cpus[i])] = (int)i;
		n->cpu[i].cpu = cpus[i];
		n->cpu[i].stream = (int)i;
		n->q[i].plan = i;
	}
	for (unsigned i = 0; i < nq; i++) {
		unsigned sl = ilab_netperf_irq_slot(c, spread_pos(order, ncpus, cpus[i]), ncpus);

		if (plan_of[sl] < 0) {
			n->cpu[nr].cpu = order[sl];
			n->cpu[nr].stream = -1;
			plan_of[sl] = (int)nr++;
		}
		n->q[i].irq_plan = (unsigned)plan_of[sl];
	}
	n->nr_cpus = nr;
	free(plan_of);
	for (unsigned i = 0; i < nr; i++) {
		n->cpu[i].clean = calloc(nq, sizeof(unsigned));
		if (!n->cpu[i].clean)
			return -ENOMEM;
		plat_track(&n->cpu[i].ev, "netperf.cpu.event");
	}
	for (unsigned i = 0; i < nq; i++) {
		struct np_cpu *p = &n->cpu[n->q[i].irq_plan];

		p->clean[p->nclean++] = i;
	}
	return 0;
}

static void free_cpus(struct np *n)
{
	for (unsigned i = 0; n->cpu && i < 2 * n->cfg->queues; i++)
		free(n->cpu[i].clean);
	free(n->cpu);
}

static void free_queues(struct np *n, unsigned nq)
{
	for (unsigned i = 0; n->q && i < nq; i++) {
		free(n->q[i].tx);
		free(n->q[i].rx_pa);
		free(n->q[i].rx_dma);
		free(n->q[i].lat);
	}
	free(n->q);
}

static int run_queues(struct np *n, int *cpus, struct agent_arg *aa, char *err, size_t errlen)
{
	const struct ilab_netperf_cfg *c = n->cfg;
	bool rr = is_rr(c);
	int ret;

	n->start_ns = plat_now_ns();
	n->win_lo = n->start_ns + c->warmup_ns;
	n->win_hi = n->win_lo + c->duration_ns;
	for (unsigned i = 0; i < c->queues; i++) {
		aa[i] = (struct agent_arg){ .n = n, .q = &n->q[i] };
		ret = plat_agent_start(rr ? "netperf.rr" : "netperf.txq", n->dev->node,
				       rr ? rr_nic : stream_nic, &aa[i], &n->q[i].agent);
		if (ret) {
			snprintf(err, errlen, "cannot start the NIC's queue agents (%d)", ret);
			goto stop;
		}
	}
	if (n->cross) {
		int *pc = plat_zalloc_array(n->nr_cpus, sizeof(*pc));

		for (unsigned i = 0; pc && i < n->nr_cpus; i++)
			pc[i] = n->cpu[i].cpu;
		ret = pc ? plat_run_threads(n->nr_cpus, pc, cross_cpu, n) : -ENOMEM;
		free(pc);
	} else {
		ret = plat_run_threads(c->queues, cpus, rr ? rr_cpu : stream_cpu, n);
	}
	if (ret)
		snprintf(err, errlen, "cannot run %u threads (%d)", c->queues, ret);
stop:
	for (unsigned i = 0; i < c->queues; i++)
		if (n->q[i].agent)
			plat_agent_stop(n->q[i].agent, &n->q[i].tx_tail);
	return ret;
}

int ilab_netperf_run(struct ilab_board *board, struct ilab_dev *dev,
		     const struct ilab_netperf_cfg *cfg, struct ilab_netperf_result *res,
		     char *err, size_t errlen)
{
	struct np n = { .board = board, .dev = dev, .cfg = cfg };
	struct agent_arg *aa = NULL;
	int *cpus = NULL, *order = NULL, ret, unit;

	if (!board || !dev || !res)
		return snprintf(err, errlen, "no board, device or result"), -EINVAL;
	ret = check(cfg, err, errlen);
	if (ret)
		return ret;
	memset(res, 0, sizeof(*res));
	res->stream_cpu = res->stream_node = -1;
	if (cfg->test == ILAB_NETPERF_MAERTS)
		return run_maerts(board, dev, cfg, res, err, errlen);
	unit = ilab_board_dev_iommu(board, dev);
	if (unit < 0)
		return snprintf(err, errlen, "device %s is not behind a modelled IOMMU", dev->name),
		       -EINVAL;
	n.unit = (unsigned)unit;
	n.queue_gbps = cfg->link_gbps / cfg->queues;
	n.hdr = is_udp(cfg) ? ILAB_NETPERF_UDP_HDR_BYTES : ILAB_NETPERF_HDR_BYTES;
	n.rx_bytes = cfg->rsp_bytes + n.hdr;
	cpus = plat_zalloc_array(cfg->queues, sizeof(*cpus));
	order = plat_zalloc_array(plat_cpu_count(), sizeof(*order));
	aa = plat_zalloc_array(cfg->queues, sizeof(*aa));
	n.scratch = plat_zalloc_array(1, ILAB_NETPERF_TSO_BYTES + 2 * ILAB_NETPERF_FRAG_PAGE);
	if (!cpus || !order || !aa || !n.scratch || alloc_queues(&n, cfg->queues)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	pick_cpus(cfg->queues, dev->node, cpus);
	if (cfg->bind)
		cpus[0] = (int)cfg->bind_cpu; /* netperf -T */
	res->stream_cpu = cpus[0];
	res->stream_node = plat_cpu_node((unsigned)cpus[0]);
	pick_cpus(plat_cpu_count(), dev->node, order); /* the NIC's spread order */
	if (plan_cpus(&n, cpus, order, plat_cpu_count())) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ret = plat_run_threads(cfg->queues, cpus, queue_setup, &n);
	for (unsigned i = 0; !ret && i < cfg->queues; i++)
		if (n.q[i].setup_failed) {
			ret = n.q[i].setup_failed;
			snprintf(err, errlen, "queue %u: cannot %s its buffers", i,
				 ret == -ENOMEM ? "allocate" : "map");
		}
	if (!ret)
		ret = run_queues(&n, cpus, aa, err, errlen);
	/* torn down before the count: the skbs still in flight are unmapped too */
	if (plat_run_threads(cfg->queues, cpus, queue_teardown, &n) && !ret) {
		ret = -EIO;
		snprintf(err, errlen, "cannot tear the queues down");
	}
	if (!ret)
		ret = collect(&n, res, err, errlen);
	if (!ret && (res->dma_faults || res->map_errors)) {
		ret = -EIO;
		snprintf(err, errlen, "%llu NIC DMAs faulted, %llu maps failed",
			 (unsigned long long)res->dma_faults, (unsigned long long)res->map_errors);
	}
out:
	free_cpus(&n);
	free_queues(&n, cfg->queues);
	free(order);
	free(cpus);
	free(aa);
	free(n.scratch);
	return ret;
}

/* ---- from the profile ------------------------------------------------------------------ */

int ilab_netperf_profile_check(const struct ilab_profile *p, char *err, size_t errlen)
{
	const struct ilab_profile_nic *n = &p->nic;

	if (n->tx_skb_ns && n->rx_buffer_ns && n->link_gbps)
		return 0; /* the loader saw to the rest of the group */
	snprintf(err, errlen, "profile %s describes no netperf path: its nic: section needs "
		 "link_gbps, the receive stack (rx_buffer_ns, rx_copy_mbps) and tx_skb_ns, "
		 "tx_clean_ns, irq_ns, nic_tx_ns, nic_rx_ns, wire_ns (docs/netperf.md)", p->name);
	return -EINVAL;
}

int ilab_netperf_from_profile(const struct ilab_profile *p, struct ilab_netperf_cfg *c,
			      char *err, size_t errlen)
{
	const struct ilab_profile_nic *n = &p->nic;
	int ret = ilab_netperf_profile_check(p, err, errlen);

	if (ret)
		return ret;
	c->link_gbps = (double)n->link_gbps;
	c->rx_completions_mps = (double)n->rx_completions_kps / 1000.0;
	c->tx_skb_ns = n->tx_skb_ns;
	c->tx_clean_ns = n->tx_clean_ns;
	c->irq_ns = n->irq_ns;
	c->nic_tx_ns = n->nic_tx_ns;
	c->nic_rx_ns = n->nic_rx_ns;
	c->wire_ns = n->wire_ns;
	if (!c->channels) /* the caller's (ethtool -L) wins */
		c->channels = (unsigned)n->queues;
	c->rx_buffer_ns = n->rx_buffer_ns;
	c->copy_mbps = n->rx_copy_mbps;
	return 0;
}
