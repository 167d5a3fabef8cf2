/* nvme_env.h — private: the machine set-up behind `iommulab fio` and the scenario workload
 * `fio` (nvme_env.c): profile -> testbed -> the topology's NVMe, probed in the IOMMU mode ->
 * ilab_nvme_run with the profile's nvme: constants.
 * Not public API.
 */
#ifndef ILAB_WORKLOADS_NVME_ENV_H
#define ILAB_WORKLOADS_NVME_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/kernel_era.h>

#include <iommulab/nvme.h>

enum ilab_nvme_env_mode { ILAB_NVME_ENV_STRICT = 0, ILAB_NVME_ENV_LAZY, ILAB_NVME_ENV_PASSTHROUGH };

struct ilab_nvme_env {
	const char *profile;      /* profile name or file */
	uint64_t seed;
	const char *device;       /* the NVMe of that name; NULL: the topology's first NVMe */
	enum ilab_nvme_env_mode mode;
	bool drive_from_profile;  /* the drive's and the stack's constants are the profile's
				   * nvme: section, not the cfg's */
	const struct ilab_kernel_era *kernel; /* NULL: today's (kernel_era.h) */
};

/* What the run used, for the printout. */
struct ilab_nvme_env_info {
	char profile[64];
	char device[48];
	int node;                 /* the drive's node */
	unsigned iommu;           /* its IOMMU unit */
};

/* Build the machine, run the jobs, tear everything down. stats_json (may be NULL) receives
 * the run's statistics (malloc'd) on success; info (may be NULL) what was used. -EINVAL (with
 * a one-line reason) when the topology has no NVMe or the profile no nvme: section. */
int ilab_nvme_env_run(const struct ilab_nvme_env *e, const struct ilab_nvme_cfg *cfg,
		      struct ilab_nvme_result *res, char **stats_json,
		      struct ilab_nvme_env_info *info, char *err, size_t errlen);

/* Does the profile describe a drive and its block stack (nvme: section)? 0, or -EINVAL with a
 * one-line reason naming the profile. */
struct ilab_profile;
int ilab_nvme_env_profile_check(const struct ilab_profile *p, char *err, size_t errlen);
/* Fill the cfg's drive and stack constants from the profile's nvme: section. */
void ilab_nvme_env_drive_from_profile(const struct ilab_profile *p, struct ilab_nvme_cfg *c);
/* The topology's NVMe called name (NULL: its first), or NULL with a one-line reason in err
 * (no NVMe at all, or the names it has). */
struct ilab_topo;
const struct ilab_device *ilab_nvme_env_pick(const struct ilab_topo *t, const char *name,
					     char *err, size_t errlen);

#endif /* ILAB_WORKLOADS_NVME_ENV_H */
