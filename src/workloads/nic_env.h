/* nic_env.h — private: the machine set-up behind the NIC workloads (nic_env.c), with plain
 * options so that the scenario glue can use it without including mem.h.
 * Not public API.
 */
#ifndef ILAB_WORKLOADS_NIC_ENV_H
#define ILAB_WORKLOADS_NIC_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/kernel_era.h>
#include <iommulab/nic.h>

enum ilab_nic_env_mode { ILAB_NIC_ENV_STRICT = 0, ILAB_NIC_ENV_LAZY, ILAB_NIC_ENV_PASSTHROUGH };

struct ilab_nic_env {
	const char *profile;      /* profile name or file */
	uint64_t seed;
	int nic_node;             /* use the NIC on this node (else the first NIC) */
	bool cma_pernuma;
	enum ilab_nic_env_mode mode;
	bool map_pages;
	bool lookup_refcount;
	bool ecmdq_hw;            /* the SMMU has one ECMDQ per CPU (serial execution) */
	bool ecmdq_use;           /* ... and the driver uses them */
	bool cmdq_spinlock;       /* Linux <= 5.3 command queue (and its 256 entries); applied
				   * after the kernel's behaviours */
	const struct ilab_kernel_era *kernel; /* NULL: today's (kernel_era.h) */
	/* the NIC's rates and the stack's costs are the profile's nic: section (link_gbps,
	 * rx_completions_kps, rx_buffer_ns, rx_copy_mbps), not the cfg's */
	bool nic_from_profile;
};

/* Build the machine, run the NIC, tear everything down. stats_json (may be NULL) receives the
 * simulator's statistics (malloc'd) on success. -EINVAL when e->nic_from_profile and the
 * profile has no receive stack in its nic: section. */
int ilab_nic_env_run(const struct ilab_nic_env *e, const struct ilab_nic_cfg *cfg,
		     struct ilab_nic_result *res, char **stats_json, char *err, size_t errlen);

/* What the machine used, for the netperf command's output. */
struct ilab_nic_env_info {
	char profile[64];
	char device[48];
	int node;                 /* the NIC's node */
	unsigned iommu;           /* its IOMMU unit */
};

/* A run on the machine once the NIC is probed in the mode: the board, the device, the
 * profile that built them. Returns 0 or a negative errno with err set. */
struct ilab_board;
struct ilab_dev;
struct ilab_profile;
typedef int (*ilab_nic_env_fn)(struct ilab_board *board, struct ilab_dev *dev,
			       const struct ilab_profile *prof, void *arg, char *err,
			       size_t errlen);

/* The same machine for any run on its NIC (ilab_nic_env_run is this with the receive model):
 * need_nic refuses a topology without a NIC (-EINVAL, "topology X has no NIC device") where
 * the seeds' run would take another device. info (may be NULL) receives what was used. */
int ilab_nic_env_run_fn(const struct ilab_nic_env *e, bool need_nic, ilab_nic_env_fn fn,
			void *arg, char **stats_json, struct ilab_nic_env_info *info, char *err,
			size_t errlen);

/* Does the profile describe the receive stack nic_from_profile needs? 0, or -EINVAL with a
 * one-line reason naming the profile. */
struct ilab_profile;
int ilab_nic_env_profile_check(const struct ilab_profile *p, char *err, size_t errlen);

/* netperf on the machine (netperf_env.c): the cfg's NIC and stack constants from the
 * profile, then ilab_netperf_run; a topology without a NIC is refused. e->nic_from_profile
 * is not read (netperf always takes the profile's). */
struct ilab_netperf_cfg;
struct ilab_netperf_result;
int ilab_netperf_env_run(const struct ilab_nic_env *e, const struct ilab_netperf_cfg *cfg,
			 struct ilab_netperf_result *res, char **stats_json,
			 struct ilab_nic_env_info *info, char *err, size_t errlen);

#endif /* ILAB_WORKLOADS_NIC_ENV_H */
