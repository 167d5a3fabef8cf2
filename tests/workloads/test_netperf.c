/* test_netperf.c — the netperf workload on the simulated kunpeng920: transmit arithmetic by
 * hand (fragments per skb, TSO segments and skbs), maps and unmaps per fragment through the
 * model, TCP_RR's latency in passthrough against the sum of the profile's path constants
 * (computed here), strict slower than passthrough for small packets, TCP_MAERTS under the
 * line, the scenario netperf-modes and the load-time refusals (no NIC, no netperf path);
 * UDP's packets by hand and through the model (one skb and its maps per IP packet), TX
 * completions reaped on the interrupt's CPU (its unmaps there, the IOVA caches spilling),
 * TCP_CRR's five packets out and three in, and -l -N's count of transactions.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "iommulab/netperf.h"
#include "iommulab/scenario.h"
#include "iommulab/sim.h"
#include "workloads/nic_env.h"
#include "support/bare_profile.h"

/* ---- by hand -------------------------------------------------------------------------------- */

static void test_frags_per_skb(void **state)
{
	(void)state;
	/* the linear part, plus one fragment per 32 KiB page the payload touches */
	assert_int_equal(ilab_netperf_frags(0, 0), 1);
	assert_int_equal(ilab_netperf_frags(0, 64), 2);
	assert_int_equal(ilab_netperf_frags(32704, 64), 2);  /* ends exactly at the page end */
	assert_int_equal(ilab_netperf_frags(32705, 64), 3);  /* 63 + 1 bytes */
	assert_int_equal(ilab_netperf_frags(0, 32768), 2);
	assert_int_equal(ilab_netperf_frags(1, 32768), 3);
	assert_int_equal(ilab_netperf_frags(0, 65160), 3);   /* 32768 + 32392 */
	assert_int_equal(ilab_netperf_frags(32000, 65160), 4); /* 768 + 32768 + 31624 */
}

static void test_tso_segments_and_skbs(void **state)
{
	(void)state;
	/* GSO_MAX_SIZE 65536 with 66 bytes of headers: whole MSS segments of 1500 - 52 */
	assert_int_equal(ILAB_NETPERF_MSS, 1500 - 20 - 20 - 12);
	assert_int_equal(ILAB_NETPERF_TSO_SEGS, (65536 - 66) / 1448);
	assert_int_equal(ILAB_NETPERF_TSO_BYTES, 45 * 1448);
	assert_int_equal(ilab_netperf_segments(1), 1);
	assert_int_equal(ilab_netperf_segments(1448), 1);
	assert_int_equal(ilab_netperf_segments(1449), 2);
	assert_int_equal(ilab_netperf_segments(16384), 12); /* 11 x 1448 = 15928 < 16384 */
	assert_int_equal(ilab_netperf_segments(65160), 45);
	assert_int_equal(ilab_netperf_skbs(64), 1);
	assert_int_equal(ilab_netperf_skbs(65160), 1);
	assert_int_equal(ilab_netperf_skbs(65161), 2);
	assert_int_equal(ilab_netperf_skbs(65536), 2);
	assert_int_equal(ilab_netperf_skbs(1 << 20), 17); /* 16 x 65160 = 1042560 < 1048576 */
	/* 45 frames of 1448 + 52 + 38 bytes at 200 Gbit/s */
	assert_float_equal(ilab_netperf_wire_ns(65160, 200), 45 * 1538 * 8 / 200.0, 1e-9);
}

/* ---- through the model ---------------------------------------------------------------------- */

static struct ilab_profile prof;

static int load_profile(void **state)
{
	char err[512];

	(void)state;
	if (ilab_profile_open("kunpeng920", &prof, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static struct ilab_nic_env env(enum ilab_nic_env_mode mode)
{
	return (struct ilab_nic_env){ .profile = "kunpeng920", .seed = 1, .nic_node = 2,
				      .mode = mode, .map_pages = true };
}

static struct ilab_netperf_cfg cfg(enum ilab_netperf_test test, unsigned queues)
{
	return (struct ilab_netperf_cfg){ .test = test, .queues = queues, .send_bytes = 64,
					  .req_bytes = 1, .rsp_bytes = 1, .ring_size = 64,
					  .duration_ns = 1000000, .warmup_ns = 100000 };
}

static void run_ok(enum ilab_nic_env_mode mode, const struct ilab_netperf_cfg *c,
		   struct ilab_netperf_result *r)
{
	struct ilab_nic_env e = env(mode);
	char err[600] = "";
	int rc = ilab_netperf_env_run(&e, c, r, NULL, NULL, err, sizeof(err));

	if (rc)
		fail_msg("netperf run: %d %s", rc, err);
	assert_int_equal(r->dma_faults, 0);
	assert_int_equal(r->map_errors, 0);
}

/* 64-byte sends never cross a 32 KiB page (512 x 64): two maps per skb, the headers and one
 * fragment; every map is unmapped by the end. */
static void test_tx_maps_two_per_small_skb(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_STREAM, 1);
	struct ilab_netperf_result r;

	(void)state;
	run_ok(ILAB_NIC_ENV_STRICT, &c, &r);
	assert_true(r.tx_skbs > 10);
	assert_int_equal(r.tx_maps, 2 * r.tx_skbs);
	assert_int_equal(r.tx_unmaps, r.tx_maps);
	assert_int_equal(r.segments, r.skbs); /* one segment each */
}

/* Full TSO skbs of 65160 bytes from one page-fragment stream starting at offset 0: skb k
 * covers [k x 65160, (k + 1) x 65160) and is mapped once for its headers and once per 32 KiB
 * page that range touches. */
static void test_tx_maps_per_fragment_of_tso_skbs(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_STREAM, 1);
	struct ilab_netperf_result r;
	uint64_t want = 0;

	(void)state;
	c.send_bytes = 65160;
	run_ok(ILAB_NIC_ENV_LAZY, &c, &r);
	assert_true(r.tx_skbs > 10);
	for (uint64_t k = 0; k < r.tx_skbs; k++) {
		uint64_t first = k * 65160, last = first + 65160 - 1;

		want += 1 + (last / 32768 - first / 32768 + 1);
	}
	assert_int_equal(r.tx_maps, want);
	assert_int_equal(r.tx_unmaps, want);
	assert_int_equal(r.segments, 45 * r.skbs); /* TSO: 45 MSS segments each */
}

static uint64_t copy_ns(uint64_t bytes)
{
	return (bytes * 1000 + prof.nic.rx_copy_mbps / 2) / prof.nic.rx_copy_mbps;
}

static uint64_t wire(uint64_t payload)
{
	/* one frame: payload + IPv4/TCP/timestamps 52 + Ethernet, preamble and gap 38 bytes */
	return (uint64_t)((payload + 52 + 38) * 8.0 / (double)prof.nic.link_gbps + 0.5);
}

/* TCP_RR in passthrough is the sum of the path: this host's send, the NIC, the wire, the
 * peer (the same path back without an IOMMU), the wire, the NIC, this host's receive; the
 * maps are dma-direct's. Besides, the model hands four words between the CPU and the NIC
 * agent per transaction (doorbell, TX completion, RX buffer posted, RX completion), each
 * written by one side and re-read by the other on the NIC's node: eight cache-line
 * transfers, and 0.1 % of the sum for where the simulator homes those lines (a few ns).
 * Any path constant left out or charged twice (the smallest is tx_clean_ns, 300 ns) falls
 * outside. */
static void test_rr_passthrough_is_the_sum_of_the_path(void **state)
{
	static const unsigned sizes[][2] = { { 1, 1 }, { 200, 4000 } };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_RR, 1);
		struct ilab_netperf_result r;
		const struct ilab_profile_nic *n = &prof.nic;
		uint64_t req = sizes[i][0], rsp = sizes[i][1], xfer, sum;
		uint64_t dmap = ilab_profile_compute_ns(&prof, "dma_direct_map_ns", 0);
		uint64_t dunmap = ilab_profile_compute_ns(&prof, "dma_direct_unmap_ns", 0);
		uint64_t peer = n->nic_rx_ns + n->irq_ns + n->rx_buffer_ns + copy_ns(req) +
				n->tx_skb_ns + copy_ns(rsp) + n->nic_tx_ns;

		assert_int_equal(ilab_profile_dist_ns(&prof, ILAB_DIST_TRANSFER, 10, &xfer), 0);
		c.req_bytes = (unsigned)req;
		c.rsp_bytes = (unsigned)rsp;
		sum = n->tx_skb_ns + copy_ns(req) + 2 * dmap	/* send: headers + 1 fragment */
		      + n->nic_tx_ns + wire(req) + n->wire_ns	/* out */
		      + peer + n->wire_ns + wire(rsp)		/* back */
		      + n->nic_rx_ns + n->irq_ns		/* received */
		      + n->tx_clean_ns + 2 * dunmap		/* the request's completion */
		      + dunmap + n->rx_buffer_ns + copy_ns(rsp) + dmap; /* the response */
		run_ok(ILAB_NIC_ENV_PASSTHROUGH, &c, &r);
		assert_true(r.transactions > 10);
		if (r.lat_p50_ns < sum || r.lat_p50_ns > sum + 8 * xfer + sum / 1000)
			fail_msg("%llu,%llu: p50 %llu ns, the path's sum %llu (+ at most %llu)",
				 (unsigned long long)req, (unsigned long long)rsp,
				 (unsigned long long)r.lat_p50_ns, (unsigned long long)sum,
				 (unsigned long long)(8 * xfer + sum / 1000));
		assert_int_equal(r.lat_p99_ns, r.lat_p50_ns); /* nothing varies */
	}
}

/* Small packets: every skb's maps and unmaps are on the CPU's path, strict's with an
 * invalidation and a sync each. */
static void test_strict_slower_than_passthrough_small_packets(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_STREAM, 2);
	struct ilab_netperf_result s, l, p;

	(void)state;
	run_ok(ILAB_NIC_ENV_STRICT, &c, &s);
	run_ok(ILAB_NIC_ENV_LAZY, &c, &l);
	run_ok(ILAB_NIC_ENV_PASSTHROUGH, &c, &p);
	assert_true(s.gbps < l.gbps && l.gbps < p.gbps);
	c = cfg(ILAB_NETPERF_RR, 1);
	run_ok(ILAB_NIC_ENV_STRICT, &c, &s);
	run_ok(ILAB_NIC_ENV_PASSTHROUGH, &c, &p);
	assert_true(s.lat_p50_ns > p.lat_p50_ns);
	assert_true(s.tps < p.tps);
}

/* Receive (the peer sends): MTU frames, LRO buffers; under the line's goodput. */
static void test_maerts_under_the_line(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_MAERTS, 2);
	struct ilab_netperf_result r;

	(void)state;
	c.send_bytes = 65536;
	run_ok(ILAB_NIC_ENV_STRICT, &c, &r);
	assert_true(r.gbps > 1);
	assert_true(r.gbps < prof.nic.link_gbps * 1448.0 / 1538.0);
	assert_true(r.rx_buffers > 0);
}

static void test_bad_configurations(void **state)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_STRICT);
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_RR, 1);
	struct ilab_netperf_result r;
	char err[600];
	char bare[96];

	(void)state;
	c.rsp_bytes = 65161;
	assert_int_equal(ilab_netperf_env_run(&e, &c, &r, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "request and response sizes must be 1..65160"));
	c = cfg(ILAB_NETPERF_STREAM, 0);
	assert_int_equal(ilab_netperf_env_run(&e, &c, &r, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "queues must be 1..256"));
	c = cfg(ILAB_NETPERF_STREAM, 1);
	assert_int_equal(ilab_test_bare_profile(bare, sizeof(bare)), 0);
	e.profile = bare; /* NICs, but no nic: section: no netperf path */
	assert_int_equal(ilab_netperf_env_run(&e, &c, &r, NULL, NULL, err, sizeof(err)), -EINVAL);
	unlink(bare);
	assert_non_null(strstr(err, "profile bare describes no netperf path"));
}

/* ---- the scenario workload ------------------------------------------------------------------ */

static const struct ilab_figure *fig(const struct ilab_scenario_result *res,
				     const struct ilab_scenario *s, const char *label,
				     const char *metric)
{
	for (unsigned i = 0; i < res->nr_cases; i++)
		if (!strcmp(s->cases[i].label, label))
			return ilab_case_result_find(&res->cases[i], metric);
	return NULL;
}

static void test_scenario_netperf_modes(void **state)
{
	static const char *const modes[] = { "strict", "lazy", "passthrough" };
	struct ilab_scenario *s = NULL;
	struct ilab_scenario_result *res = NULL;
	char err[1024], label[64];

	(void)state;
	if (ilab_scenario_load(ILAB_TESTDATA "/../../scenarios/netperf-modes.yaml", &s, err,
			       sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(ilab_scenario_run(s, &(struct ilab_run_options){ .quick = true }, &res,
					   err, sizeof(err)), 0);
	assert_int_equal(res->nr_cases, 16);
	for (unsigned i = 0; i < res->nr_cases; i++)
		if (res->cases[i].status != ILAB_CASE_OK)
			fail_msg("%s: %s", s->cases[i].label, res->cases[i].message);
	/* TX and RX, small and large, in every mode */
	for (unsigned m = 0; m < 3; m++) {
		static const char *const tput[] = { "tx64", "tx64k", "rx64k" };

		for (unsigned t = 0; t < 3; t++) {
			const struct ilab_figure *f;

			snprintf(label, sizeof(label), "%s-%s", tput[t], modes[m]);
			f = fig(res, s, label, "throughput");
			assert_non_null(f);
			assert_true(f->value > 0);
		}
		snprintf(label, sizeof(label), "rr1-%s", modes[m]);
		assert_non_null(fig(res, s, label, "tps"));
		assert_non_null(fig(res, s, label, "lat_p99"));
	}
	assert_true(fig(res, s, "rr1-strict", "lat_p50")->value >
		    fig(res, s, "rr1-passthrough", "lat_p50")->value);
	assert_true(fig(res, s, "tx64-strict", "throughput")->value <
		    fig(res, s, "tx64-passthrough", "throughput")->value);
	/* UDP: a map per packet costs strict; the moved interrupts take the unmaps off the
	 * senders' CPUs */
	assert_true(fig(res, s, "udp1472-strict", "throughput")->value <
		    fig(res, s, "udp1472-passthrough", "throughput")->value);
	assert_true(fig(res, s, "tx64-irq40-strict", "throughput")->value >
		    fig(res, s, "tx64-strict", "throughput")->value);
	ilab_scenario_result_free(res);
	ilab_scenario_free(s);
}

/* A scenario whose machine has no NIC is refused when it is loaded. */
static void test_scenario_without_a_nic_refused_at_load(void **state)
{
	char dir[] = "/tmp/ilab-netperf-XXXXXX", cwd[1024], line[512], src[1024];
	struct ilab_scenario *s = NULL;
	FILE *in, *out;
	int rc;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	snprintf(src, sizeof(src), "%s/../../profiles/kunpeng920.yaml", ILAB_TESTDATA);
	in = fopen(src, "r");
	out = fopen("nonic.yaml", "w");
	assert_true(in && out);
	while (fgets(line, sizeof(line), in))
		fputs(strncmp(line, "topology:", 9) ? line
			: "topology: \"synthetic:pack:2 numa:2 pu:2\"\n", out);
	fclose(in);
	assert_int_equal(fclose(out), 0);
	out = fopen("s.yaml", "w");
	assert_non_null(out);
	fprintf(out, "name: t\nseed: \"022\"\ntitle: \"t\"\nprofile: nonic.yaml\n"
		     "workload: { type: netperf }\ncases:\n  - label: a\n");
	assert_int_equal(fclose(out), 0);
	rc = ilab_scenario_load("s.yaml", &s, line, sizeof(line));
	ilab_scenario_free(s);
	unlink("s.yaml");
	unlink("nonic.yaml");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
	assert_int_equal(rc, -EINVAL);
	if (!strstr(line, "has no NIC device: netperf needs one"))
		fail_msg("%s", line);
}

/* ---- UDP, completions on another CPU, TCP_CRR ------------------------------------------------ */

static void test_udp_packets_by_hand(void **state)
{
	(void)state;
	assert_int_equal(ilab_netperf_udp_packets(1), 1);
	assert_int_equal(ilab_netperf_udp_packets(1472), 1);
	assert_int_equal(ilab_netperf_udp_packets(1473), 2);
	assert_int_equal(ilab_netperf_udp_packets(2952), 2);     /* 1472 + 1480 */
	assert_int_equal(ilab_netperf_udp_packets(2953), 3);
	assert_int_equal(ilab_netperf_udp_packets(65507), 45);   /* 1472 + 43 x 1480 + 395 */
	assert_int_equal(ilab_netperf_udp_piece(65507, 0), 1472);
	assert_int_equal(ilab_netperf_udp_piece(65507, 1), 1480);
	assert_int_equal(ilab_netperf_udp_piece(65507, 44), 395);
	assert_int_equal(ilab_netperf_udp_piece(64, 0), 64);
	/* 4000 bytes at 100 Gbit/s: (1472+28+38) + (1480+20+38) + (1048+20+38) = 4182 bytes */
	assert_true(ilab_netperf_udp_wire_ns(4000, 100) > 334.55 &&
		    ilab_netperf_udp_wire_ns(4000, 100) < 334.57);
}

/* A UDP datagram of 4000 bytes leaves as three IP packets, each its own skb, mapped (headers
 * and payload) and completed on its own; TCP sends the same 4000 bytes as one TSO skb of
 * three segments. */
static void test_udp_one_skb_per_packet(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_UDP_STREAM, 1);
	struct ilab_netperf_result u, t;

	(void)state;
	c.send_bytes = 4000;
	run_ok(ILAB_NIC_ENV_LAZY, &c, &u);
	c.test = ILAB_NETPERF_STREAM;
	run_ok(ILAB_NIC_ENV_LAZY, &c, &t);
	assert_true(u.messages > 10);
	assert_int_equal(u.segments, u.skbs);                 /* no GSO: a packet per skb */
	/* a datagram counts when its last packet leaves in the window: the window's start can
	 * cut off up to two packets of a counted one, its end hold two of an uncounted one */
	assert_true(u.skbs + 2 >= 3 * u.messages && u.skbs <= 3 * u.messages + 2);
	assert_true(u.tx_maps >= 2 * u.tx_skbs && u.tx_maps <= 3 * u.tx_skbs);
	assert_int_equal(u.tx_unmaps, u.tx_maps);
	assert_true(t.segments >= 3 * t.skbs - 2);             /* TSO: three segments a skb */
	assert_true(t.skbs * 4000 <= t.bytes + 4000);          /* one skb per send */
	assert_true(u.skbs * 1480 >= u.bytes);                 /* one per packet */
	assert_true(u.remote_messages > 0 && u.remote_messages <= u.messages);
}

/* stats.breakdown ... iova_alloc's calls into the rbtree: the allocations the per-CPU IOVA
 * caches did not serve. */
static long long rbtree_allocs(const char *stats)
{
	json_error_t e;
	json_t *root = json_loads(stats, 0, &e), *v;
	long long n;

	assert_non_null(root);
	v = json_object_get(root, "breakdown");
	v = v ? json_object_get(v, "functions") : NULL;
	v = v ? json_object_get(v, "dma_map") : NULL;
	v = v ? json_object_get(v, "children") : NULL;
	v = v ? json_object_get(v, "iova_alloc") : NULL;
	v = v ? json_object_get(v, "children") : NULL;
	v = v ? json_object_get(v, "iova_rbtree") : NULL;
	v = v ? json_object_get(v, "calls") : NULL;
	n = v ? json_integer_value(v) : 0;
	json_decref(root);
	return n;
}

static void run_stats(const struct ilab_netperf_cfg *c, struct ilab_netperf_result *r,
		      long long *rbtree)
{
	struct ilab_nic_env e = env(ILAB_NIC_ENV_STRICT);
	char err[600] = "", *stats = NULL;
	int rc = ilab_netperf_env_run(&e, c, r, &stats, NULL, err, sizeof(err));

	if (rc)
		fail_msg("netperf run: %d %s", rc, err);
	assert_non_null(stats);
	*rbtree = rbtree_allocs(stats);
	free(stats);
}

/* Each stream's channel interrupt on its own CPU (XPS, the default): every unmap is the
 * mapping CPU's and the per-CPU IOVA caches serve nearly every allocation. Interrupts moved
 * 40 CPUs on: the completions are reaped, the buffers unmapped and their IOVAs freed there,
 * so the senders' caches run dry and allocations fall back to the rbtree. One channel for
 * two streams: the second stream's completions are the first's CPU's work. */
static void test_tx_completions_on_the_irq_cpu(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_STREAM, 2);
	struct ilab_netperf_result local, moved, shared;
	long long rb_local, rb_moved, rb_shared;

	(void)state;
	run_stats(&c, &local, &rb_local);
	c.irq_shift = 40;
	run_stats(&c, &moved, &rb_moved);
	c.irq_shift = 0;
	c.channels = 1;
	run_stats(&c, &shared, &rb_shared);
	assert_int_equal(local.tx_remote_unmaps, 0);
	assert_true(moved.tx_remote_unmaps * 10 >= moved.tx_unmaps * 9); /* all but teardown */
	assert_true(moved.work_cpus == 4 && local.work_cpus == 2);
	assert_true(moved.interrupts > 0);
	/* stream 1's unmaps are on stream 0's CPU (which runs them before its own sends: the
	 * softirq before the process) */
	assert_true(shared.tx_remote_unmaps > 0 && shared.tx_remote_unmaps < shared.tx_unmaps);
	assert_int_equal(shared.work_cpus, 2);
	assert_true(rb_local * 20 < (long long)local.tx_maps);
	assert_true(rb_moved * 5 > (long long)moved.tx_maps);
	if (rb_moved < 10 * rb_local + 10)
		fail_msg("rbtree allocations: %lld with the interrupts moved, %lld without",
			 rb_moved, rb_local);
}

/* TCP_CRR: five packets out (SYN, ACK, the request, FIN, ACK) and three in (SYN-ACK, the
 * response, the peer's FIN) per transaction, three round trips: more than twice TCP_RR's
 * latency. -l -N: each stream stops after N transactions. */
static void test_crr_and_a_count_of_transactions(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_CRR, 1);
	struct ilab_netperf_result crr, rr;

	(void)state;
	c.transactions = 50;
	c.warmup_ns = 0;
	c.duration_ns = 100000000;
	run_ok(ILAB_NIC_ENV_STRICT, &c, &crr);
	c.test = ILAB_NETPERF_RR;
	run_ok(ILAB_NIC_ENV_STRICT, &c, &rr);
	assert_int_equal(crr.transactions, 50);
	assert_int_equal(rr.transactions, 50);
	assert_true(crr.tx_skbs >= 5 * 50 && crr.tx_skbs <= 5 * 50 + 5);
	assert_int_equal(crr.rx_buffers, 3 * 50);
	assert_true(crr.lat_p50_ns > 2 * rr.lat_p50_ns);
	assert_true(crr.window_ns < c.duration_ns && crr.window_ns > 50 * crr.lat_min_ns);
	assert_true(crr.tps > 0.9e9 * 50 / (double)crr.window_ns);
}

/* iperf3 -b: a paced UDP stream sends rate x window of payload (to a datagram), an unpaced one
 * as much as its CPU can; the peer takes what its stack can, and the streams' figures add up
 * to the run's. */
static void test_udp_paced_to_a_rate(void **state)
{
	struct ilab_netperf_cfg c = cfg(ILAB_NETPERF_UDP_STREAM, 2);
	struct ilab_netperf_stream st[2];
	struct ilab_netperf_result paced, free_run;
	double want;

	(void)state;
	c.send_bytes = 1448;
	c.rate_bps = 2e8;
	c.streams = st;
	run_ok(ILAB_NIC_ENV_STRICT, &c, &paced);
	want = c.rate_bps * 1e-9 * (double)c.duration_ns / (1448 * 8.0); /* per stream */
	for (unsigned i = 0; i < 2; i++) {
		if (st[i].messages + 2 < want || st[i].messages > want + 2)
			fail_msg("stream %u: %llu datagrams at 200 Mbit/s, want %.1f", i,
				 (unsigned long long)st[i].messages, want);
		assert_int_equal(st[i].remote_messages, st[i].messages); /* the peer keeps up */
		assert_true(st[i].jitter_ns >= 0);
	}
	assert_int_equal(paced.messages, st[0].messages + st[1].messages);
	c.rate_bps = 0;
	run_ok(ILAB_NIC_ENV_STRICT, &c, &free_run);
	assert_true(free_run.messages > 2 * paced.messages);
	assert_true(free_run.remote_messages <= free_run.messages);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frags_per_skb),
		cmocka_unit_test(test_tso_segments_and_skbs),
		cmocka_unit_test(test_tx_maps_two_per_small_skb),
		cmocka_unit_test(test_tx_maps_per_fragment_of_tso_skbs),
		cmocka_unit_test(test_rr_passthrough_is_the_sum_of_the_path),
		cmocka_unit_test(test_strict_slower_than_passthrough_small_packets),
		cmocka_unit_test(test_maerts_under_the_line),
		cmocka_unit_test(test_bad_configurations),
		cmocka_unit_test(test_udp_packets_by_hand),
		cmocka_unit_test(test_udp_one_skb_per_packet),
		cmocka_unit_test(test_tx_completions_on_the_irq_cpu),
		cmocka_unit_test(test_crr_and_a_count_of_transactions),
		cmocka_unit_test(test_udp_paced_to_a_rate),
		cmocka_unit_test(test_scenario_netperf_modes),
		cmocka_unit_test(test_scenario_without_a_nic_refused_at_load),
	};

	return cmocka_run_group_tests(tests, load_profile, NULL);
}
