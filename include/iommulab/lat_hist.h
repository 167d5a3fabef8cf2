/* lat_hist.h — latency samples in a bounded histogram: fio's log-linear buckets (stat.h's
 * FIO_IO_U_PLAT_BITS 6: values below 128 ns exact, above that 64 buckets per power of two, so
 * a bucket's midpoint is within 1/128 (0.78 %) of any value in it; 29 groups, the last bucket
 * holding everything from 2^34 ns, 17 s, up). Memory is fixed (1856 counters) whatever the
 * run length. The exact minimum, maximum, mean and standard deviation are kept beside it.
 * One percentile rule for every tool iommulab speaks (fio, netperf, iperf3): fio's.
 */
#ifndef IOMMULAB_LAT_HIST_H
#define IOMMULAB_LAT_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ILAB_LAT_HIST_BITS 6u
#define ILAB_LAT_HIST_VAL (1u << ILAB_LAT_HIST_BITS)           /* buckets per group */
#define ILAB_LAT_HIST_GROUPS 29u
#define ILAB_LAT_HIST_NR (ILAB_LAT_HIST_GROUPS * ILAB_LAT_HIST_VAL) /* 1856 */

struct ilab_lat_hist {
	uint64_t n, min, max;
	double sum, sumsq;
	uint64_t bucket[ILAB_LAT_HIST_NR];
};

void ilab_lat_hist_init(struct ilab_lat_hist *h);
void ilab_lat_hist_add(struct ilab_lat_hist *h, uint64_t v);
void ilab_lat_hist_merge(struct ilab_lat_hist *dst, const struct ilab_lat_hist *src);

/* The bucket of v, and the value a bucket stands for (its midpoint; the value itself below
 * 128): fio's plat_val_to_idx / plat_idx_to_val arithmetic. */
unsigned ilab_lat_hist_index(uint64_t v);
uint64_t ilab_lat_hist_value(unsigned idx);

/* fio's percentile rule: the value of the first bucket at which the running count reaches
 * pct/100 of all samples, kept within the exact minimum and maximum (a midpoint can lie
 * outside them: when every sample is the same the percentiles are that value). 0 with no
 * samples. pct in (0, 100]. */
uint64_t ilab_lat_hist_percentile(const struct ilab_lat_hist *h, double pct);

double ilab_lat_hist_mean(const struct ilab_lat_hist *h);
/* The sample standard deviation (n - 1 in the denominator, as fio's). 0 below two samples. */
double ilab_lat_hist_stdev(const struct ilab_lat_hist *h);

/* fio's default percentile list (HOWTO, percentile_list): 17 entries. */
extern const double ilab_fio_default_percentiles[17];

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_LAT_HIST_H */
