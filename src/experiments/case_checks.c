/* case_checks.c — the load-time checks (struct ilab_workload.check) of the five built-in
 * workloads: every parameter is in its range by then, but a combination can still be
 * impossible on the profile's machine (a node without CPUs, no device where the case puts it,
 * more simulated memory than a node has) or run too long for the host. Each is refused with a
 * one-line reason before anything runs, instead of a FAILED case (or a wait) at run time.
 *
 * Not the workloads themselves: the rules here restate what their set-up refuses (sim_env.c,
 * nic_env.c, nic.c, allreduce.c) from the case and the topology alone. Checks that the
 * workload files keep (ilab_workload_map_bench_check, ilab_workload_nic_check,
 * ilab_allreduce_check) are called first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "experiments/case_checks.h"
#include "experiments/host_time.h"
#include "experiments/sim_env.h"
#include "iommulab/allreduce.h"
#include "iommulab/nic.h"
#include "iommulab/netperf.h"
#include "iommulab/nvme.h"
#include "iommulab/topo.h"

/* What a case may use of a node's simulated memory: the board gives each node 4 GiB
 * (include/iommulab/board.h, node_bytes 0); a quarter is left for the kernel's own
 * allocations (page tables, CMA, IOVA caches). */
#define NODE_BYTES (4ull << 30)
#define CASE_BYTES (NODE_BYTES / 4 * 3)

static int refuse(char *msg, size_t msglen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int too_long(double seconds, const char *work, char *msg, size_t msglen)
{
	return ilab_host_time_check(seconds, work, "case", "make it smaller or split it", msg,
				    msglen);
}

/* The mechanisms a workload's set-up reads; any other set away from its default would be
 * ignored in silence, and the case would measure something other than it says. */
enum { M_CMA = 1, M_MODE = 2, M_MAP_PAGES = 4, M_LOOKUP = 8, M_ECMDQ = 16, M_VFIO_NODE = 32,
       M_INTEL_NID = 64, M_CMDQV = 128, M_FQ = 256, M_DEPOT = 512, M_CMDQ_LOCK = 1024 };

static int unused_mechanism(const struct ilab_case *c, unsigned used, const char *workload,
			    char *msg, size_t msglen)
{
	const struct ilab_mechanisms *m = &c->mech;
	const char *key = NULL, *val = NULL;

	if (!(used & M_CMA) && m->cma != ILAB_CMA_POLICY_GLOBAL)
		key = "cma", val = ilab_cma_policy_name(m->cma);
	else if (!(used & M_MODE) && m->mode != ILAB_MODE_STRICT)
		key = "mode", val = ilab_dma_mode_name(m->mode);
	else if (!(used & M_MAP_PAGES) && m->map_pages)
		key = "map_pages", val = "on";
	else if (!(used & M_LOOKUP) && m->lookup != ILAB_LOOKUP_REFCOUNT)
		key = "lookup", val = ilab_domain_lookup_name(m->lookup);
	else if (!(used & M_ECMDQ) && m->ecmdq)
		key = "ecmdq", val = "on";
	else if (!(used & M_CMDQV) && m->cmdqv)
		key = "cmdqv", val = "on";
	else if (!(used & M_VFIO_NODE) && m->vfio_attach_group_by_node)
		key = "vfio_attach_group_by_node", val = "on";
	else if (!(used & M_INTEL_NID) && m->intel_iommu_nid != ILAB_INTEL_NID_MECH_MAINLINE)
		key = "intel_iommu_nid", val = ilab_intel_nid_name(m->intel_iommu_nid);
	else if (!(used & M_FQ) && m->fq != ILAB_FQ_MECH_PERCPU)
		key = "fq", val = ilab_fq_mech_name(m->fq);
	else if (!(used & M_DEPOT) && m->iova_depot != ILAB_DEPOT_MECH_LIST)
		key = "iova_depot", val = ilab_depot_mech_name(m->iova_depot);
	else if (!(used & M_CMDQ_LOCK) && m->cmdq_fair_lock)
		key = "cmdq_lock", val = "fair";
	if (!key)
		return 0;
	return refuse(msg, msglen, "mechanisms: %s: %s has no effect on workload %s, which does "
		      "not model it", key, val, workload);
}

static unsigned param_u(const struct ilab_case *c, const char *name, double dflt)
{
	return (unsigned)ilab_case_param(c, name, dflt);
}

static unsigned node_cpus(const struct ilab_topo *t, unsigned node)
{
	unsigned n = 0;

	ilab_topo_node_cpus(t, node, &n);
	return n;
}

static unsigned devices_on(const struct ilab_topo *t, enum ilab_dev_kind kind, unsigned node)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_device *d = ilab_topo_device(t, i);

		n += d->kind == kind && d->node == (int)node;
	}
	return n;
}

/* The nodes that have a device of kind, as "2" or "0, 1" ("none" when no node has one). */
static void nodes_with(const struct ilab_topo *t, enum ilab_dev_kind kind, char *buf,
		       size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned n = 0; n < ilab_topo_nr_nodes(t) && off < len; n++)
		if (devices_on(t, kind, n))
			off += (size_t)snprintf(buf + off, len - off, "%s%u", off ? ", " : "", n);
	if (!off)
		snprintf(buf, len, "none");
}

/* sim_env.c measures through a device behind an IOMMU unit (SMMU or DMAR unit) of
 * smmu_node. */
static int check_smmu_device(const struct ilab_case *c, const struct ilab_topo *t, char *msg,
			     size_t msglen)
{
	unsigned node = param_u(c, "smmu_node", 2);
	char have[64];
	size_t off = 0;

	for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
		const struct ilab_smmu_desc *s = ilab_topo_smmu(t, ilab_topo_device(t, i)->smmu);

		if (s && s->node == (int)node)
			return 0;
	}
	have[0] = '\0';
	for (unsigned n = 0; n < ilab_topo_nr_nodes(t) && off < sizeof(have); n++)
		for (unsigned i = 0; i < ilab_topo_nr_devices(t); i++) {
			unsigned si = ilab_topo_device(t, i)->smmu;
			const struct ilab_smmu_desc *s = ilab_topo_smmu(t, si);

			if (s && s->node == (int)n) {
				off += (size_t)snprintf(have + off, sizeof(have) - off, "%s%u",
							off ? ", " : "", n);
				break;
			}
		}
	return refuse(msg, msglen, "smmu_node: %s has no device behind an IOMMU unit on node %u "
		      "(there are on nodes: %s)", ilab_topo_name(t), node, off ? have : "none");
}

int ilab_case_check_cmdsync(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			    size_t msglen)
{
	unsigned cpu_node = param_u(c, "cpu_node", 2);
	double iters = ilab_case_param(c, "iterations", 10000);
	char work[96];
	int ret;

	if ((ret = unused_mechanism(c, M_CMA | M_MODE | M_MAP_PAGES | M_LOOKUP, "cmdsync_latency",
				    msg, msglen)))
		return ret;
	if (!node_cpus(topo, cpu_node))
		return refuse(msg, msglen, "cpu_node: node %u has no CPUs", cpu_node);
	if ((ret = check_smmu_device(c, topo, msg, msglen)))
		return ret;
	snprintf(work, sizeof(work), "iterations: %.0f CMD_SYNCs", iters);
	return too_long(iters * ILAB_HOST_S_CMDSYNC, work, msg, msglen);
}

/* The flush queue exists only in lazy mode, and its ring index is masked: a size is a power of
 * two (0: the kind's, 256 or 32768). A passthrough device allocates no IOVA. */
static int check_map_bench_fq(const struct ilab_case *c, char *msg, size_t msglen)
{
	unsigned size = (unsigned)ilab_case_param(c, "fq_size", 0);
	bool lazy = c->mech.mode == ILAB_MODE_LAZY;

	if (!lazy && c->mech.fq != ILAB_FQ_MECH_PERCPU)
		return refuse(msg, msglen, "mechanisms: fq: %s needs mode: lazy (only lazy mode has "
			      "a flush queue)", ilab_fq_mech_name(c->mech.fq));
	if (!lazy && (size || ilab_case_param(c, "fq_timeout_ms", 0)))
		return refuse(msg, msglen, "params: fq_size and fq_timeout_ms need mode: lazy (only "
			      "lazy mode has a flush queue)");
	if (size && (size < 2 || (size & (size - 1))))
		return refuse(msg, msglen, "params: fq_size: %u is not a power of two >= 2", size);
	if (c->mech.mode == ILAB_MODE_PASSTHROUGH && c->mech.iova_depot != ILAB_DEPOT_MECH_LIST)
		return refuse(msg, msglen, "mechanisms: iova_depot needs mode: strict or lazy (a "
			      "passthrough device allocates no IOVA)");
	return 0;
}

int ilab_case_check_map_bench(const struct ilab_case *c, const struct ilab_topo *topo,
			      char *msg, size_t msglen)
{
	double pairs = ilab_case_param(c, "iterations", 2000) * ilab_case_param(c, "threads", 1);
	char work[96];
	int ret;

	if (c->mech.ecmdq && c->mech.cmdqv)
		return refuse(msg, msglen, "ecmdq: on and cmdqv: on: an SMMU has ECMDQs (SMMUv3.3) "
			      "or a Tegra241 CMDQV, not both");
	if ((ret = unused_mechanism(c, M_CMA | M_MODE | M_MAP_PAGES | M_LOOKUP | M_ECMDQ | M_CMDQV |
				    M_FQ | M_DEPOT | M_CMDQ_LOCK, "dma_map_benchmark", msg, msglen)) ||
	    (ret = check_map_bench_fq(c, msg, msglen)) ||
	    (ret = ilab_workload_map_bench_check(c, topo, msg, msglen)) ||
	    (ret = check_smmu_device(c, topo, msg, msglen)))
		return ret;
	snprintf(work, sizeof(work), "threads x iterations = %.0f map+unmap pairs", pairs);
	return too_long(pairs * ILAB_HOST_S_MAP_PAIR, work, msg, msglen);
}

/* nic.c gives queue i the i-th CPU of the NIC's node, then the machine's other CPUs from 0:
 * how many queues land on each node. */
static void queues_per_node(const struct ilab_topo *t, unsigned nic_node, unsigned queues,
			    unsigned *per_node)
{
	unsigned on_node = node_cpus(t, nic_node), k = queues < on_node ? queues : on_node;

	for (unsigned n = 0; n < ilab_topo_nr_nodes(t); n++)
		per_node[n] = 0;
	per_node[nic_node] = k;
	for (unsigned cpu = 0; cpu < ilab_topo_nr_cpus(t) && k < queues; cpu++) {
		int n = ilab_topo_cpu_node(t, cpu);

		if (n >= 0 && (unsigned)n != nic_node) {
			per_node[n]++;
			k++;
		}
	}
}

/* The NIC's rings: queues x ring_size buffers of frames_per_buffer x packet_bytes (whole
 * pages, a power of two of them), in the memory of each queue's CPU's node. */
static int check_nic(const struct ilab_case *c, const struct ilab_topo *topo,
		     const char *workload, unsigned queues, const char *queues_name,
		     double host_s_per_queue_us, char *msg, size_t msglen)
{
	unsigned node = param_u(c, "nic_node", 2), per_node[64];
	double buf = ilab_case_param(c, "packet_bytes", 64) *
		     ilab_case_param(c, "frames_per_buffer", 1);
	double us = ilab_case_param(c, "duration_us", 0) + ilab_case_param(c, "warmup_us", 0);
	double page = 4096, ring = ilab_case_param(c, "ring_size", 64);
	char have[64], work[128];
	int ret;

	if ((ret = unused_mechanism(c, M_CMA | M_MODE | M_MAP_PAGES | M_LOOKUP | M_ECMDQ,
				    workload, msg, msglen)) ||
	    (ret = ilab_workload_nic_check(c, topo, msg, msglen)))
		return ret;
	if (!devices_on(topo, ILAB_DEV_NIC, node)) {
		nodes_with(topo, ILAB_DEV_NIC, have, sizeof(have));
		return refuse(msg, msglen, "nic_node: %s has no NIC on node %u (NICs on nodes: %s)",
			      ilab_topo_name(topo), node, have);
	}
	if (queues > ilab_topo_nr_cpus(topo))
		return refuse(msg, msglen, "%s: %u need a CPU each; %s has %u", queues_name, queues,
			      ilab_topo_name(topo), ilab_topo_nr_cpus(topo));
	if (buf > 4 << 20)
		return refuse(msg, msglen, "frames_per_buffer x packet_bytes is %.0f bytes; a "
			      "receive buffer holds at most 4 MiB", buf);
	while (page < buf)
		page *= 2;
	if (ilab_topo_nr_nodes(topo) <= sizeof(per_node) / sizeof(per_node[0])) {
		queues_per_node(topo, node, queues, per_node);
		for (unsigned n = 0; n < ilab_topo_nr_nodes(topo); n++) {
			double need = per_node[n] * ring * page;

			if (need <= CASE_BYTES)
				continue;
			return refuse(msg, msglen, "the receive rings of %u queues on node %u "
				      "(ring_size %.0f x %.0f KiB buffers) need %.1f GiB of "
				      "simulated memory; a case may use %llu GiB of the "
				      "node's %llu GiB",
				      per_node[n], n, ring, page / 1024, need / (1 << 30),
				      CASE_BYTES >> 30, NODE_BYTES >> 30);
		}
	}
	snprintf(work, sizeof(work), "%u %s for %.0f simulated us", queues, queues_name, us);
	return too_long(queues * us * host_s_per_queue_us, work, msg, msglen);
}

int ilab_case_check_nic_rx(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			   size_t msglen)
{
	/* nic_env.c gives seed 001's machine no ECMDQs: the driver's probe would refuse */
	if (c->mech.ecmdq)
		return refuse(msg, msglen, "ecmdq: on, but nic_rx's SMMU has no ECMDQs (only "
			      "nic_throughput models them: its ecmdq_hw)");
	return check_nic(c, topo, "nic_rx", param_u(c, "processes", 128), "processes",
			 ILAB_HOST_S_NIC_RX, msg, msglen);
}

int ilab_case_check_nic_throughput(const struct ilab_case *c, const struct ilab_topo *topo,
				   char *msg, size_t msglen)
{
	if (c->mech.ecmdq && !ilab_case_param(c, "ecmdq_hw", 1))
		return refuse(msg, msglen, "ecmdq: on needs ecmdq_hw: 1 (an SMMU with ECMDQs)");
	return check_nic(c, topo, "nic_throughput", param_u(c, "nic_queues", 8), "nic_queues",
			 ILAB_HOST_S_NIC_TPUT, msg, msglen);
}

int ilab_case_check_allreduce(const struct ilab_case *c, const struct ilab_topo *topo,
			      char *msg, size_t msglen)
{
	unsigned first = param_u(c, "first_node", 0), nr = param_u(c, "nr_nodes", 1);
	unsigned gpus = param_u(c, "gpus_per_node", 4), nics = param_u(c, "nics_per_node", 4);
	unsigned hosts = param_u(c, "hosts", 2);
	double buf = ilab_case_param(c, "buffer_bytes", 16 << 20);
	double page = ilab_case_param(c, "iommu_page_bytes", 4096);
	double bytes = ilab_case_param(c, "message_bytes", 1 << 28);
	double iters = ilab_case_param(c, "iterations", 5);
	char work[128];
	int ret;

	if ((ret = unused_mechanism(c, M_CMA | M_VFIO_NODE | M_INTEL_NID, "allreduce", msg,
				    msglen)) ||
	    (ret = ilab_allreduce_check(c, topo, msg, msglen)))
		return ret;
	if (page != 4096 && page != 2 << 20)
		return refuse(msg, msglen, "iommu_page_bytes %.0f: 4096 or 2097152 (2 MiB)", page);
	if (buf < page)
		return refuse(msg, msglen, "buffer_bytes %.0f is smaller than iommu_page_bytes %.0f",
			      buf, page);
	if (nics != gpus)
		return refuse(msg, msglen, "nics_per_node %u and gpus_per_node %u: each NIC is "
			      "paired with one GPU", nics, gpus);
	for (unsigned n = first; n < first + nr; n++) {
		unsigned have_n = devices_on(topo, ILAB_DEV_NIC, n);
		unsigned have_g = devices_on(topo, ILAB_DEV_GPU, n);

		if (have_n < nics || have_g < gpus)
			return refuse(msg, msglen, "node %u of %s has %u NICs and %u GPUs; the "
				      "case uses %u of each", n, ilab_topo_name(topo), have_n,
				      have_g, nics);
	}
	if (hosts * nics < 2)
		return refuse(msg, msglen, "hosts x nics_per_node is %u: a ring needs 2 ranks",
			      hosts * nics);
	/* a send and a receive buffer per NIC, in its GPU's node */
	if (2.0 * nics * buf > CASE_BYTES)
		return refuse(msg, msglen, "buffer_bytes: 2 x %u NICs x %.0f bytes is %.1f GiB of "
			      "simulated memory on each node; a case may use %llu GiB of the "
			      "node's %llu GiB",
			      nics, buf, 2.0 * nics * buf / (1 << 30), CASE_BYTES >> 30,
			      NODE_BYTES >> 30);
	snprintf(work, sizeof(work), "%.0f allreduces of %.0f bytes over %u node%s", iters, bytes,
		 nr, nr == 1 ? "" : "s");
	return too_long(iters * bytes * nr * ILAB_HOST_S_ALLREDUCE, work, msg, msglen);
}

/* The buffers: numjobs x iodepth of bs (whole pages, a power of two of them), on the jobs'
 * nodes; counted as if on one node, which is the case up to 32 jobs on kunpeng920. */
int ilab_fio_buffers_check(unsigned jobs, unsigned depth, double bs, char *msg, size_t msglen)
{
	double page = 4096;

	while (page < bs)
		page *= 2;
	if ((double)jobs * depth * page > CASE_BYTES)
		return refuse(msg, msglen, "numjobs x iodepth x bs: %u x %u buffers of %.0f KiB "
			      "need %.1f GiB of simulated memory; a run may use %llu GiB of a "
			      "node's %llu GiB", jobs, depth, page / 1024,
			      (double)jobs * depth * page / (1 << 30), CASE_BYTES >> 30,
			      NODE_BYTES >> 30);
	return 0;
}

int ilab_case_check_fio(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
			size_t msglen)
{
	unsigned jobs = param_u(c, "numjobs", 8), depth = param_u(c, "iodepth", 32);
	double us = ilab_case_param(c, "runtime_us", 20000) + ilab_case_param(c, "ramp_us", 1000);
	char work[128];
	int ret;

	if ((ret = unused_mechanism(c, M_MODE, "fio", msg, msglen)) ||
	    (ret = ilab_workload_fio_check(c, topo, msg, msglen)) ||
	    (ret = ilab_fio_buffers_check(jobs, depth, ilab_case_param(c, "bs", 4096), msg,
					  msglen)))
		return ret;
	snprintf(work, sizeof(work), "%u fio jobs for %.0f simulated us", jobs, us);
	return too_long(ilab_host_s_fio(jobs, depth, us), work, msg, msglen);
}

/* netperf: the machine has a NIC (the one on nic_node, else its first), a CPU per stream,
 * sizes that fit the model (RR: one TSO skb each way). */
int ilab_case_check_netperf(const struct ilab_case *c, const struct ilab_topo *topo,
			    char *msg, size_t msglen)
{
	unsigned queues = param_u(c, "queues", 1), test = param_u(c, "test", 0);
	double us = ilab_case_param(c, "duration_us", 2000) + ilab_case_param(c, "warmup_us", 200);
	char work[128];
	bool nic = false;
	int ret;

	if ((ret = unused_mechanism(c, M_MODE, "netperf", msg, msglen)))
		return ret;
	for (unsigned i = 0; i < ilab_topo_nr_devices(topo); i++)
		nic |= ilab_topo_device(topo, i)->kind == ILAB_DEV_NIC;
	if (!nic)
		return refuse(msg, msglen, "topology %s has no NIC device: netperf needs one",
			      ilab_topo_name(topo));
	if (queues > ilab_topo_nr_cpus(topo))
		return refuse(msg, msglen, "queues: %u need a CPU each; %s has %u", queues,
			      ilab_topo_name(topo), ilab_topo_nr_cpus(topo));
	if (test == ILAB_NETPERF_RR &&
	    (ilab_case_param(c, "req_bytes", 1) > ILAB_NETPERF_TSO_BYTES ||
	     ilab_case_param(c, "rsp_bytes", 1) > ILAB_NETPERF_TSO_BYTES))
		return refuse(msg, msglen, "req_bytes and rsp_bytes must be at most %u (one TSO "
			      "skb each way)", ILAB_NETPERF_TSO_BYTES);
	snprintf(work, sizeof(work), "%u netperf streams for %.0f simulated us", queues, us);
	return too_long(queues * us * ILAB_HOST_S_NETPERF, work, msg, msglen);
}
