/* host_time.h — how long a simulated run takes on the host, estimated before it starts, and
 * the limit every command holds it to: run and sweep (each case, case_checks.c), bench
 * --engine sim, fio and netperf (the whole run). A run estimated over the limit is refused with
 * one line naming the estimate and how to shorten it. Definitions: host_time.c.
 */
#ifndef ILAB_EXPERIMENTS_HOST_TIME_H
#define ILAB_EXPERIMENTS_HOST_TIME_H

#include <stddef.h>

/* A run estimated to take longer than this is refused: the built-in scenarios' cases take
 * seconds, and a deterministic simulation gains nothing from hours. */
#define ILAB_HOST_SECONDS_MAX 600.0

/* Host seconds per unit of work, measured with `iommulab run` and the one-run commands on the
 * project's reference machine (a 2-core VM; docs/experiments.md "Load-time checks"), rounded
 * up. */
#define ILAB_HOST_S_CMDSYNC 1.0e-6    /* one CMD_SYNC: 1e6 take 0.84 s */
#define ILAB_HOST_S_MAP_PAIR 3.5e-6   /* one map+unmap pair: 1.8 us with 1 thread, 3.2 with 32 */
#define ILAB_HOST_S_NIC_RX 1.0e-6     /* one process for one simulated us: 128 x 20 ms, 1.5 s */
#define ILAB_HOST_S_NIC_TPUT 30e-6    /* one queue for one simulated us at full CPU load: 28 us */
#define ILAB_HOST_S_ALLREDUCE 0.5e-9  /* one byte per node per allreduce: 0.35-0.45 s/GiB */
#define ILAB_HOST_S_NETPERF 2.0e-6    /* one stream for one simulated us, 64-byte sends */
#define ILAB_HOST_S_FIO_JOB 1.0e-6    /* one job for one simulated us at iodepth 32 */
/* fio --number_ios: one I/O of one job (1 job x 100000 at iodepth 32: 0.30 s; 8 x 20000: 0.67 s) */
#define ILAB_HOST_S_FIO_IO 4.5e-6

/* bench --engine sim -s / --duration-ms: one simulated us. Translated maps serialize on the
 * IOMMU's command queue: 1.0e-6 per thread (1 thread: 0.96) up to 4 threads, then flat (8, 32,
 * 128 threads: 3.0, 2.3, 2.1e-6); passthrough maps do not: 6e-6 per thread (1 thread: 5.4,
 * 128: 0.9). Loaded 2-core VM, `bench --engine sim -t T --duration-ms 10|50 [--mode M]`. */
#define ILAB_HOST_S_MAP_US_PER_THREAD 1.0e-6
#define ILAB_HOST_S_MAP_THREADS_MAX 4
#define ILAB_HOST_S_MAP_PT_US_PER_THREAD 6.0e-6
double ilab_host_s_map_timed(unsigned threads, int passthrough, double sim_us);

/* bench natively with --iterations (with -s or --duration-ms a native run takes the time it is
 * given, at most 300 s): one map+unmap pair of g pages takes 8 us + g x 1 us of wall time
 * whatever the threads (1, 4, 16 threads: 7.7, 9.3, 8.6 us at g = 1; 22 us at g = 16; `bench -t
 * T --iterations N [-g G]` on the loaded 2-core VM). */
#define ILAB_HOST_S_NATIVE_PAIR 8.0e-6
#define ILAB_HOST_S_NATIVE_PAGE 1.0e-6

/* fio: jobs x (runtime + ramp) at iodepth 32, more for deeper queues. */
double ilab_host_s_fio(unsigned jobs, unsigned iodepth, double sim_us);

/* 0 when seconds is within the limit; else -EINVAL and msg = "<work> would take about N
 * minutes of host time (more than the 10 minutes a <what> may take): <shorten>". */
int ilab_host_time_check(double seconds, const char *work, const char *what,
			 const char *shorten, char *msg, size_t msglen);

#endif
