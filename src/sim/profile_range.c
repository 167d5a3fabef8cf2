/* profile_range.c — the range of every numeric profile key (include/iommulab/profile_range.h),
 * which the loader (profile.c) checks. Not the loader, and no cost logic.
 *
 * How the bounds were chosen. The minimum is 1 for a latency (0 lets a simulated loop run
 * without virtual time advancing: a timed run never ends) and for a count or rate of a device
 * (0 would be no device: leave the key out), else 0 (an extra cost may be free). The maximum
 * is physical: of the order of a thousand times the largest shipped value, and far below the
 * time at which the cost itself would be a failure rather than a slow part (Linux gives up on
 * a CMD_SYNC after 1 s, ARM_SMMU_POLL_TIMEOUT_US) or would use up the simulator's 1000 s of
 * virtual time in a few thousand operations. Every shipped profile, every sweep in
 * tests/data/sweeps and scripts/sensitivity.py's x0.8 / x1.2 of them are inside.
 * The device models' own limits (nic.c, dma_engine.c, atc.c, nvme.c) cap the nic: and nvme:
 * keys: their arithmetic never overflows or is cut to 32 bits inside these.
 */
#include <stddef.h>
#include <string.h>

#include "iommulab/profile_range.h"

#define US 1000ull
#define MS 1000000ull

static const struct ilab_profile_range ranges[] = {
	/* memory: DRAM, local or across sockets (CXL-attached memory: ~0.3-0.6 us) */
	{ "memory.local_ns", 1, 10 * US, "ns" },
	{ "memory.latency_by_distance", 1, 10 * US, "ns" },
	{ "memory.line_stream_ns", 0, 1 * US, "ns" },
	/* cache: hits of a few ns, transfers of tens to hundreds */
	{ "cache.hit_ns", 1, 100, "ns" },
	{ "cache.atomic_local_ns", 1, 1 * US, "ns" },
	{ "cache.transfer_local_ns", 1, 10 * US, "ns" },
	{ "cache.transfer_by_distance", 1, 10 * US, "ns" },
	{ "cache.llc_local_ns", 1, 10 * US, "ns" },
	{ "cache.line_hit_stream_ns", 0, 100, "ns" },
	{ "cache.retry_hold_ns", 0, 10 * US, "ns" },
	{ "cache.home_occupancy_ns", 0, 10 * US, "ns" },
	/* mmio: a device register read is 0.2-1 us; a slow device's tens of us */
	{ "mmio.read_local_ns", 1, 100 * US, "ns" },
	{ "mmio.write_local_ns", 1, 100 * US, "ns" },
	{ "mmio.read_by_distance", 1, 100 * US, "ns" },
	{ "mmio.write_by_distance", 1, 100 * US, "ns" },
	/* smmu: the command processor and invalidation engine; a sync's handshake under 1 ms */
	{ "smmu.command_ns", 0, 100 * US, "ns" },
	{ "smmu.sync_ns", 0, 1 * MS, "ns" },
	{ "smmu.tlbi_sync_ns", 0, 1 * MS, "ns" },
	{ "smmu.tlbi_ns", 0, 100 * US, "ns" },
	{ "smmu.tlbi_scan_ns", 1, 1 * MS, "ns" },
	{ "smmu.tlbi_entry_ns", 0, 10 * US, "ns" },
	{ "smmu.tlb_lookup_ns", 0, 10 * US, "ns" },
	/* a unit's servers; the key left out means no limit */
	{ "smmu.invalidations_in_flight", 1, 65536, "invalidations" },
	{ "smmu.cmd_readahead_entries", 1, 1u << 19, "commands" }, /* IDR1.CMDQS <= 19 */
	{ "smmu.cmdqv_vcmdqs", 1, 128, "queues (a power of two)" },
	{ "smmu.cmdqv_vintfs", 1, 64, "interfaces (a power of two)" },
	/* vtd: the same for a DMAR unit */
	{ "vtd.desc_ns", 0, 100 * US, "ns" },
	{ "vtd.wait_ns", 0, 1 * MS, "ns" },
	{ "vtd.iotlb_lookup_ns", 0, 10 * US, "ns" },
	{ "vtd.walk_ns", 0, 100 * US, "ns" },
	{ "vtd.walkers", 1, 65536, "walkers" },
	{ "vtd.entry_read_fetches", 1, 16, "fetches per entry read" },
	{ "vtd.outstanding_requests", 1, 65536, "requests" },
	/* its caches: the model's bound (src/hw/vtd/cache.c, 2^24 entries) */
	{ "vtd.iotlb_entries", 1, 1u << 24, "entries" },
	{ "vtd.iotlb_ways", 1, 1u << 24, "ways (at most iotlb_entries)" },
	{ "vtd.pml4e_cache_entries", 1, 1u << 24, "entries" },
	{ "vtd.pdpe_cache_entries", 1, 1u << 24, "entries" },
	{ "vtd.pde_cache_entries", 1, 1u << 24, "entries" },
	/* compute: driver code paths of tens of ns to a cross-CPU wake-up of ~1 us */
	{ "compute.*", 0, 100 * US, "ns" },
	/* nic: (the receive, ATS and netperf models' limits) */
	{ "nic.link_gbps", 1, 10000, "Gbit/s" },
	{ "nic.rx_completions_kps", 1, 10000000, "thousand buffers/s" },
	{ "nic.rx_buffer_ns", 1, 10 * MS, "ns" },
	{ "nic.rx_copy_mbps", 1, 10000000, "MB/s" },
	{ "nic.payload_mbps", 1, 10000000, "MB/s" },
	{ "nic.ats_round_trip_ns", 1, 1 * MS, "ns" },
	{ "nic.ats_outstanding", 1, 4096, "requests" },
	{ "nic.atc_entries", 1, 1u << 20, "entries" },
	{ "nic.atc_ways", 1, 1u << 20, "ways (at most atc_entries)" },
	{ "nic.tx_skb_ns", 1, 10 * MS, "ns" },
	{ "nic.tx_clean_ns", 1, 10 * MS, "ns" },
	{ "nic.irq_ns", 1, 10 * MS, "ns" },
	{ "nic.nic_tx_ns", 1, 10 * MS, "ns" },
	{ "nic.nic_rx_ns", 1, 10 * MS, "ns" },
	{ "nic.wire_ns", 1, 10 * MS, "ns" },
	{ "nic.queues", 1, 4096, "channels" },
	/* nvme: (the drive model's picosecond arithmetic) */
	{ "nvme.read_latency_ns", 1, 100 * MS, "ns" },
	{ "nvme.write_latency_ns", 1, 100 * MS, "ns" },
	{ "nvme.read_iops", 1, 100000000, "IOPS" },
	{ "nvme.write_iops", 1, 100000000, "IOPS" },
	{ "nvme.trim_latency_ns", 1, 100 * MS, "ns" },
	{ "nvme.trim_iops", 1, 100000000, "IOPS" },
	{ "nvme.read_mbps", 1, 1000000, "MB/s" },
	{ "nvme.write_mbps", 1, 1000000, "MB/s" },
	{ "nvme.submit_ns", 0, 100 * MS, "ns" },
	{ "nvme.complete_ns", 0, 100 * MS, "ns" },
	{ "nvme.irq_ns", 0, 100 * MS, "ns" },
};

const struct ilab_profile_range *ilab_profile_ranges(unsigned *nr)
{
	if (nr)
		*nr = sizeof(ranges) / sizeof(ranges[0]);
	return ranges;
}

const struct ilab_profile_range *ilab_profile_range_find(const char *key)
{
	const char *dot = key ? strchr(key, '.') : NULL;

	if (!dot)
		return NULL;
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const char *k = ranges[i].key;
		size_t n = strlen(k);

		if (!strcmp(k, key))
			return &ranges[i];
		/* "section.*": any key of the section */
		if (n >= 2 && k[n - 1] == '*' && k[n - 2] == '.' && (size_t)(dot - key) == n - 2 &&
		    !strncmp(k, key, n - 2))
			return &ranges[i];
	}
	return NULL;
}
