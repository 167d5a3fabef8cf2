/* fio_job.h — fio's jobs as users write them: job files ([global] and job sections, include,
 * ${ENV}, ; and # comments) and command lines (--name starts a job; options before it, or
 * under --name=global, are global), into one ilab_nvme_cfg per job section. Each option is
 * checked as it is read; an option fio has that the model does not run is refused naming it.
 */
#ifndef ILAB_TOOLS_FIO_JOB_H
#define ILAB_TOOLS_FIO_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/nvme.h>

#define FIO_MAX_JOBS 16
#define FIO_MAX_OPTS 64
#define FIO_MAX_PCT 64

struct fio_kv {
	char *key, *val; /* val NULL: a bare key (a boolean set) */
};

struct fio_section {
	char *name;
	struct fio_kv opts[FIO_MAX_OPTS]; /* as written, for JSON's "job options" */
	unsigned nopts;
};

/* One direction's sizes as the options gave them (bs, bsrange, bssplit), fio's precedence:
 * a split, else a range, else bs. */
struct fio_bs {
	unsigned bs, min, max; /* min 0: no range */
	unsigned nsplit;
	struct ilab_nvme_bssplit split[ILAB_NVME_MAX_BSSPLIT];
};

#define FIO_MAX_CPUS 1024

struct fio_job {
	const struct fio_section *sec, *global;
	struct ilab_nvme_cfg cfg;
	struct fio_bs bsd[3];       /* read, write, trim (trim: for the header only) */
	unsigned bs_lo[3], bs_hi[3]; /* each direction's smallest and largest I/O */
	int cpus_allowed[FIO_MAX_CPUS]; /* cpus_allowed's CPUs, ascending */
	unsigned ncpus_allowed;
	bool cpus_split;            /* cpus_allowed_policy=split */
	int *cpus;                  /* job i's CPU (numjobs), when cpus_allowed is given */
	bool runtime_set, time_based, group_reporting, sync_engine, hipri;
	bool stonewall, new_group;  /* stonewall (wait_for_previous): wait for the jobs before;
				     * it and new_group start a new reporting group */
	unsigned groupid;           /* fio's: 0, +1 at each stonewall or new_group */
	unsigned batch;             /* the jobs that run at the same time share it */
	uint64_t size_set;
	unsigned iodepth_opt;       /* iodepth as given (a sync engine runs at 1) */
	const char *ioengine;
	double pct[FIO_MAX_PCT];
	unsigned npct;
	int kb_base;
};

struct fio_run {
	struct fio_section global;
	struct fio_section secs[FIO_MAX_JOBS];
	unsigned nsecs;
	bool in_global; /* options go to [global] (a [global] section or --name=global) */
	struct fio_job jobs[FIO_MAX_JOBS];
	char *strings[1024]; /* every string the sections point at */
	unsigned nstrings;
};

/* Add a section's option or the global one (sec NULL: the current last section, or global
 * when there is none). 0 or CLI_EXIT_USAGE after one line on stderr. */
int fio_run_add_opt(struct fio_run *r, const char *key, const char *val, const char *where);
int fio_run_add_section(struct fio_run *r, const char *name, const char *where);
/* Read a job file (and the files it includes). */
int fio_run_read_file(struct fio_run *r, const char *path);
/* Resolve every section into its job (global options first, then its own). */
int fio_run_resolve(struct fio_run *r);
void fio_run_free(struct fio_run *r);

#endif /* ILAB_TOOLS_FIO_JOB_H */
