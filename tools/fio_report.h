/* fio_report.h — fio's outputs of the simulated jobs: normal text, json, json+ and terse
 * (version 3) in fio 3.x's shape (fio_report.c). */
#ifndef ILAB_TOOLS_FIO_REPORT_H
#define ILAB_TOOLS_FIO_REPORT_H

#include <stdio.h>

#include "fio_job.h"

#define FIO_VERSION "fio-3.33" /* the fio whose formats these are */

/* One report: a job of a section (or all numjobs of it, with group_reporting). */
struct fio_report {
	const struct fio_job *job;
	unsigned jobs;                  /* numjobs merged in it */
	struct ilab_nvme_job_result r;  /* merged */
	uint64_t window_ns;
	unsigned groupid;
	bool does[3];                   /* it holds jobs that read (write, trim) */
	int error;
};

enum fio_format { FIO_NORMAL, FIO_JSON, FIO_JSON_PLUS, FIO_TERSE };

/* Write the reports; machine: a line saying what was simulated (normal output only, after
 * fio's "Starting" line). 0 or -ENOMEM. */
int fio_report_write(FILE *f, enum fio_format fmt, const struct fio_run *run,
		     const struct fio_report *reps, unsigned nreps, const char *machine);

#endif
