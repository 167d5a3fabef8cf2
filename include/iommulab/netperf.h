/* netperf.h — the netperf-like network workload on the NIC model: TCP_STREAM (this host
 * sends), TCP_MAERTS (the peer sends, this host receives: the receive model of nic.h) and
 * TCP_RR (one request out, one response in, per stream), over one NIC queue pair and CPU
 * per stream, in the simulator. Every skb's pieces are mapped through dma-iommu on transmit
 * and unmapped on its TX completion; receive buffers are unmapped and mapped again on
 * receive. The peer is a second host like this one without an IOMMU cost.
 * It is not a TCP: no congestion or flow control, no ACKs, no retransmission (docs/netperf.md).
 */
#ifndef IOMMULAB_NETPERF_H
#define IOMMULAB_NETPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Ethernet MTU 1500: IPv4 20 + TCP 20 + timestamps 12 leave an MSS of 1448 bytes. */
#define ILAB_NETPERF_MTU 1500u
#define ILAB_NETPERF_MSS 1448u
/* The skb's linear part on transmit: Ethernet 14 + IPv4 20 + TCP with timestamps 32. */
#define ILAB_NETPERF_HDR_BYTES 66u
/* TSO: an skb holds at most GSO_MAX_SIZE (65536) bytes with its headers, a whole number of
 * segments: (65536 - 66) / 1448 = 45 segments, 65160 payload bytes. */
#define ILAB_NETPERF_TSO_SEGS 45u
#define ILAB_NETPERF_TSO_BYTES (ILAB_NETPERF_TSO_SEGS * ILAB_NETPERF_MSS)
/* tcp_sendmsg copies payload into the socket's page fragment: order-3 (32 KiB) pages
 * (SKB_FRAG_PAGE_ORDER); a piece of payload that crosses a page is two fragments. */
#define ILAB_NETPERF_FRAG_PAGE 32768u
/* Fragments of one skb: its linear part and at most this many page fragments. */
#define ILAB_NETPERF_MAX_FRAGS 4u
#define ILAB_NETPERF_MAX_QUEUES 256u
#define ILAB_NETPERF_MAX_MSG (1u << 20)
/* UDP over IPv4 without UFO or UDP GSO (Linux removed UFO in 4.14; UDP_SEGMENT is opt-in and
 * netperf does not set it): a datagram above the MTU leaves as IP fragments, each its own skb
 * (ip_append_data), mapped and completed on its own. The first fragment carries the UDP
 * header: 1500 - 20 - 8 = 1472 payload bytes; each later one 1480 (RFC 791: fragment data
 * in multiples of 8 bytes, 1480 = 185 x 8). A datagram holds at most 65507 bytes
 * (65535 - 20 - 8). The linear part: Ethernet 14 + IPv4 20 + UDP 8 (42), or 34 without the
 * UDP header on the later fragments. */
#define ILAB_NETPERF_UDP_FIRST 1472u
#define ILAB_NETPERF_UDP_NEXT 1480u
#define ILAB_NETPERF_UDP_MAX 65507u
#define ILAB_NETPERF_UDP_HDR_BYTES 42u

enum ilab_netperf_test {
	ILAB_NETPERF_STREAM = 0, /* TCP_STREAM */
	ILAB_NETPERF_MAERTS,     /* TCP_MAERTS */
	ILAB_NETPERF_RR,         /* TCP_RR */
	ILAB_NETPERF_UDP_STREAM, /* this host sends datagrams of send_bytes */
	ILAB_NETPERF_UDP_RR,     /* one datagram out, one back, each within one packet */
	ILAB_NETPERF_CRR,        /* TCP_CRR: connect, request, response, close per transaction */
};
#define ILAB_NETPERF_NR_TESTS 6u

struct ilab_netperf_cfg {
	enum ilab_netperf_test test;
	unsigned queues;           /* streams, one queue pair and one CPU each */
	unsigned send_bytes;       /* STREAM/MAERTS: bytes per send call (netperf -m) */
	unsigned req_bytes;        /* RR: request and response sizes (netperf -r) */
	unsigned rsp_bytes;
	unsigned ring_size;        /* TX descriptors (skbs) per queue; RX buffers per queue */
	/* The NIC's channels (queue pairs, one MSI-X vector each: `ethtool -L combined`; 0: one
	 * per CPU) and where their interrupts go. Channel j's interrupt is on the j-th CPU of
	 * the NIC's spread order (the NIC node's CPUs first: the drivers' cpumask_local_spread)
	 * moved irq_shift places on (irqbalance or a hand-set smp_affinity); XPS sends stream i,
	 * on the i-th CPU of that order, on channel i while i < channels, else on channel
	 * i mod channels (no XPS entry: the flow hash). A stream whose channel's interrupt is on
	 * another CPU has its TX completions reaped, and its buffers unmapped, there (STREAM and
	 * UDP_STREAM; the request/response tests reap on the stream's CPU). */
	unsigned channels;
	unsigned irq_shift;
	/* netperf -T: the one stream runs on bind_cpu instead of the spread order's first CPU
	 * (queues must be 1); XPS then sends it on that CPU's channel */
	bool bind;
	unsigned bind_cpu;
	/* netperf -T ,N: the CPU netserver is asked to bind to, checked against the machine
	 * (the peer is modelled as the same machine) and reported; the peer's model has no
	 * CPU placement */
	bool remote_bind;
	unsigned remote_cpu;
	uint64_t duration_ns;      /* measured window, after the warm-up; with transactions, the
				    * most the run may take */
	uint64_t transactions;     /* RR tests: each stream stops after this many (netperf's
				    * -l -N); 0: run for duration_ns */
	uint64_t warmup_ns;
	/* the NIC, the wire and the stacks: the profile's nic: section */
	double link_gbps;
	double rx_completions_mps; /* MAERTS: receive buffers the NIC completes, M/s */
	uint64_t tx_skb_ns, tx_clean_ns, irq_ns, nic_tx_ns, nic_rx_ns, wire_ns;
	uint64_t rx_buffer_ns, copy_mbps;
	/* iperf3's intervals, when report_interval_ns: payload delivered by queue q in the
	 * window's i-th interval of report_interval_ns goes to interval_bytes[q * intervals + i]
	 * (queues x intervals counters the caller zeroed) */
	uint64_t report_interval_ns;
	unsigned intervals;
	uint64_t *interval_bytes;
	/* UDP_STREAM: each stream's send calls paced to rate_bps of payload (iperf3 -b: it
	 * sends while its average rate since the start is below the target, so a late stream
	 * catches up in a burst); 0: as fast as the CPU goes */
	double rate_bps;
	/* UDP_STREAM, when not NULL: per stream (queues entries the caller provides) */
	struct ilab_netperf_stream *streams;
};

struct ilab_netperf_stream {
	uint64_t messages;         /* datagrams sent whole within the window */
	uint64_t remote_messages;  /* of which the peer's stack took */
	double jitter_ns;          /* RFC 3550's interarrival jitter of the datagrams' transit
				    * times (the send call to the last bit on the wire), J += (|D| -
				    * J) / 16, as iperf3's receiver computes it */
};

struct ilab_netperf_result {
	uint64_t window_ns;
	uint64_t bytes;            /* STREAM/MAERTS: payload delivered within the window */
	double gbps;               /* bytes x 8 / window */
	uint64_t transactions;     /* RR: completed within the window */
	double tps;
	uint64_t lat_p50_ns, lat_p99_ns, lat_min_ns, lat_max_ns, lat_p90_ns; /* RR; percentiles by fio's rule on
							   * lat_hist.h's histogram */
	double lat_mean_ns;
	uint64_t skbs, segments;   /* sent within the window */
	uint64_t tx_skbs;          /* built over the whole run; their maps and unmaps: */
	uint64_t tx_maps, tx_unmaps, rx_buffers, interrupts;
	uint64_t tx_remote_unmaps; /* of tx_unmaps, those on another CPU than the map's */
	uint64_t messages;         /* UDP_STREAM: datagrams sent whole within the window */
	uint64_t remote_messages;  /* ... and those the peer's stack received (its CPU's limit) */
	double remote_gbps;
	double jitter_ns;          /* UDP_STREAM: the streams' mean RFC 3550 jitter */
	double cpu_busy;           /* mean over the streams' CPUs of time not waiting, whole run */
	/* CPU time for netperf's -c/-C: the busy ns of every CPU that ran the test's work (its
	 * streams' and its interrupts' CPUs) over the measured run, and the peer's modelled stack
	 * work; each machine has cpus CPUs */
	uint64_t busy_ns, run_ns, peer_busy_ns;
	unsigned cpus, work_cpus;
	int stream_cpu, stream_node; /* stream 0's CPU and its node (-1: TCP_MAERTS) */
	uint64_t dma_faults, map_errors;
};

/* The pure arithmetic of transmit (the unit tests check it by hand):
 * skbs one send call of `bytes` becomes (TSO-sized pieces), */
unsigned ilab_netperf_skbs(unsigned bytes);
/* wire segments of an skb of `payload` bytes (TSO: MSS-sized; at least one), */
unsigned ilab_netperf_segments(unsigned payload);
/* its fragments (linear part + page fragments) when its payload starts `offset` bytes into
 * the socket's page-fragment stream, */
unsigned ilab_netperf_frags(uint64_t offset, unsigned payload);
/* and the ns its segments take on a link of gbps (frames with headers, preamble and gap). */
double ilab_netperf_wire_ns(unsigned payload, double gbps);
/* UDP: the IP packets (skbs) of a datagram of `bytes`, the payload of its k-th packet, and
 * the ns the whole datagram takes on the wire. */
unsigned ilab_netperf_udp_packets(unsigned bytes);
unsigned ilab_netperf_udp_piece(unsigned bytes, unsigned k);
double ilab_netperf_udp_wire_ns(unsigned bytes, double gbps);
/* The CPU (index in the NIC's spread order) that takes the TX completions of stream i. */
unsigned ilab_netperf_irq_slot(const struct ilab_netperf_cfg *c, unsigned i, unsigned ncpus);
/* The per-byte copy at copy_mbps, rounded to the ns (0 MB/s: free). */
uint64_t ilab_netperf_copy_ns(uint64_t bytes, uint64_t copy_mbps);
/* The peer's time from a request's last bit in to its response's first bit out: this host's
 * receive and send path without an IOMMU (nic_rx + irq + rx_buffer + copy + tx_skb + copy +
 * nic_tx). */
uint64_t ilab_netperf_peer_ns(const struct ilab_netperf_cfg *c);

/* Fill the cfg's NIC and stack constants from the profile's nic: section; -EINVAL with a
 * one-line reason when the profile lacks the netperf path. */
int ilab_netperf_from_profile(const struct ilab_profile *p, struct ilab_netperf_cfg *c,
			      char *err, size_t errlen);
int ilab_netperf_profile_check(const struct ilab_profile *p, char *err, size_t errlen);

/* Run the test on `dev` (probed, its DMA configured) of `board`: 0, -EINVAL (bad cfg),
 * -ENOMEM, -EIO (DMA faults or map errors). */
int ilab_netperf_run(struct ilab_board *board, struct ilab_dev *dev,
		     const struct ilab_netperf_cfg *cfg, struct ilab_netperf_result *res,
		     char *err, size_t errlen);

/* The scenario workload `netperf` and its checks (workload_registry.c). */
int ilab_workload_netperf(const struct ilab_scenario *s, const struct ilab_case *c,
			  struct ilab_case_result *r, char *err, size_t errlen);
int ilab_workload_netperf_check_profile(const struct ilab_profile *prof, char *msg,
					size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_NETPERF_H */
