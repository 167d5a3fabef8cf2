/* lat_hist.c — the bounded latency histogram (lat_hist.h). */
#include <iommulab/lat_hist.h>

#include <math.h>
#include <string.h>

const double ilab_fio_default_percentiles[17] = {
	1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99,
};

void ilab_lat_hist_init(struct ilab_lat_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned ilab_lat_hist_index(uint64_t v)
{
	unsigned msb = v ? 63u - (unsigned)__builtin_clzll(v) : 0, shift, idx;

	if (msb <= ILAB_LAT_HIST_BITS)
		return (unsigned)v; /* below 128: one bucket per value */
	shift = msb - ILAB_LAT_HIST_BITS;
	/* group shift + 1 starts at (shift + 1) * 64; the 6 bits below the top one pick the
	 * bucket in it */
	idx = ((shift + 1) << ILAB_LAT_HIST_BITS) +
	      (unsigned)((v >> shift) & (ILAB_LAT_HIST_VAL - 1));
	return idx < ILAB_LAT_HIST_NR ? idx : ILAB_LAT_HIST_NR - 1;
}

uint64_t ilab_lat_hist_value(unsigned idx)
{
	unsigned shift;
	uint64_t base, k;

	if (idx < 2 * ILAB_LAT_HIST_VAL)
		return idx;
	shift = (idx >> ILAB_LAT_HIST_BITS) - 1;
	base = 1ull << (shift + ILAB_LAT_HIST_BITS);
	k = idx % ILAB_LAT_HIST_VAL;
	return base + (uint64_t)(((double)k + 0.5) * (double)(1ull << shift));
}

void ilab_lat_hist_add(struct ilab_lat_hist *h, uint64_t v)
{
	h->n++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += (double)v;
	h->sumsq += (double)v * (double)v;
	h->bucket[ilab_lat_hist_index(v)]++;
}

void ilab_lat_hist_merge(struct ilab_lat_hist *dst, const struct ilab_lat_hist *src)
{
	if (!src->n)
		return;
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	for (unsigned i = 0; i < ILAB_LAT_HIST_NR; i++)
		dst->bucket[i] += src->bucket[i];
}

static uint64_t clamp(const struct ilab_lat_hist *h, uint64_t v)
{
	return v < h->min ? h->min : v > h->max ? h->max : v;
}

uint64_t ilab_lat_hist_percentile(const struct ilab_lat_hist *h, double pct)
{
	long double want = (long double)pct / 100.0L * (long double)h->n;
	uint64_t run = 0;

	if (!h->n)
		return 0;
	for (unsigned i = 0; i < ILAB_LAT_HIST_NR; i++) {
		run += h->bucket[i];
		if (h->bucket[i] && (long double)run >= want)
			return clamp(h, ilab_lat_hist_value(i));
	}
	return h->max;
}

double ilab_lat_hist_mean(const struct ilab_lat_hist *h)
{
	return h->n ? h->sum / (double)h->n : 0;
}

double ilab_lat_hist_stdev(const struct ilab_lat_hist *h)
{
	double m = ilab_lat_hist_mean(h);

	if (h->n < 2)
		return 0;
	return sqrt(fmax(0, (h->sumsq - (double)h->n * m * m) / (double)(h->n - 1)));
}
