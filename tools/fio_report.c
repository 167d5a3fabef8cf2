/* fio_report.c — fio's normal, json and json+ outputs (fio_report.h). The layout is fio
 * 3.33's as Debian's fio prints it (tests/cli/fio_real.sh compares the JSON key sets). Figures
 * fio measures that the model has no counterpart for are printed as fio prints them when it
 * has no sample (bandwidth log samples: 0; ctx, majf, minf: 0; usr_cpu: 0, as the model's
 * CPU time is the kernel's, sys_cpu). */
#include "fio_report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>


static json_t *stat_obj(const struct ilab_lat_hist *h, const struct fio_job *j, bool pct,
			bool bins)
{
	json_t *o = json_pack("{s:I,s:I,s:f,s:f,s:I}", "min", (json_int_t)(h->n ? h->min : 0),
			      "max", (json_int_t)h->max, "mean", ilab_lat_hist_mean(h), "stddev",
			      ilab_lat_hist_stdev(h), "N", (json_int_t)h->n);

	if (o && pct && h->n) {
		json_t *p = json_object();
		char key[32];

		for (unsigned i = 0; p && i < j->npct; i++) {
			snprintf(key, sizeof(key), "%f", j->pct[i]);
			json_object_set_new(p, key, json_integer((json_int_t)
				ilab_lat_hist_percentile(h, j->pct[i])));
		}
		json_object_set_new(o, "percentile", p);
	}
	if (o && bins && h->n) {
		json_t *b = json_object();
		char key[32];

		for (unsigned i = 0; b && i < ILAB_LAT_HIST_NR; i++)
			if (h->bucket[i]) {
				snprintf(key, sizeof(key), "%llu",
					 (unsigned long long)ilab_lat_hist_value(i));
				json_object_set_new(b, key, json_integer((json_int_t)h->bucket[i]));
			}
		json_object_set_new(o, "bins", b);
	}
	return o;
}

static json_t *dir_obj(const struct fio_report *rep, bool active, bool plus)
{
	static const struct ilab_lat_hist empty = { .min = 0 };
	const struct ilab_nvme_job_result *r = &rep->r;
	const struct fio_job *j = rep->job;
	uint64_t ios = active ? r->ios : 0, bytes = ios * j->cfg.bs;
	double s = rep->window_ns / 1e9, iops = active && s > 0 ? ios / s : 0;
	bool slat = active && !j->sync_engine; /* sync engines have no submission latency */

	return json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:I,s:I,s:f,s:f,s:f,"
			 "s:I,s:I,s:I,s:f,s:f,s:I}",
			 "io_bytes", (json_int_t)bytes, "io_kbytes", (json_int_t)(bytes >> 10),
			 "bw_bytes", (json_int_t)(active ? iops * j->cfg.bs : 0),
			 "bw", (json_int_t)(active ? iops * j->cfg.bs / 1024 : 0), "iops", iops,
			 "runtime", (json_int_t)(active ? rep->window_ns / 1000000 : 0),
			 "total_ios", (json_int_t)ios, "short_ios", (json_int_t)0,
			 "drop_ios", (json_int_t)0,
			 "slat_ns", stat_obj(slat ? &r->slat : &empty, j, false, false),
			 "clat_ns", stat_obj(active ? &r->clat : &empty, j, true, plus),
			 "lat_ns", stat_obj(active ? &r->lat : &empty, j, false, false),
			 "bw_min", (json_int_t)0, "bw_max", (json_int_t)0, "bw_agg", 0.0,
			 "bw_mean", 0.0, "bw_dev", 0.0, "bw_samples", (json_int_t)0,
			 "iops_min", (json_int_t)0, "iops_max", (json_int_t)0, "iops_mean", 0.0,
			 "iops_stddev", 0.0, "iops_samples", (json_int_t)0);
}

static json_t *pct_obj(const char *const *keys, unsigned n, const uint64_t *counts)
{
	json_t *o = json_object();
	uint64_t total = 0;

	for (unsigned i = 0; i < n; i++)
		total += counts[i];
	for (unsigned i = 0; o && i < n; i++)
		json_object_set_new(o, keys[i], json_real(total ? 100.0 * counts[i] / total : 0));
	return o;
}

/* fio's latency buckets (lat (nsec|usec|msec) lines, latency_ns/us/ms): [0,2), [2,4), [4,10),
 * ... [750,1000) of each unit, and for msec also [1000,2000) and >= 2000; from the
 * histogram's bucket values. */
static const char *const lat_keys[] = { "2", "4", "10", "20", "50", "100", "250", "500",
					"750", "1000", "2000", ">=2000" };
static const unsigned lat_edges[] = { 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000 };

static void lat_buckets(const struct ilab_lat_hist *h, uint64_t ns[10], uint64_t us[10],
			uint64_t ms[12])
{
	memset(ns, 0, 10 * sizeof(*ns));
	memset(us, 0, 10 * sizeof(*us));
	memset(ms, 0, 12 * sizeof(*ms));
	for (unsigned i = 0; i < ILAB_LAT_HIST_NR; i++) {
		uint64_t v = ilab_lat_hist_value(i), *row = ns;
		unsigned k = 0, lim = 10;

		if (!h->bucket[i])
			continue;
		if (v >= 1000000) {
			row = ms, v /= 1000000, lim = 11;
		} else if (v >= 1000) {
			row = us, v /= 1000;
		}
		while (k < lim && v >= lat_edges[k])
			k++;
		row[k] += h->bucket[i];
	}
}

static json_t *job_obj(const struct fio_report *rep, bool plus)
{
	static const char *const depth_keys[] = { "1", "2", "4", "8", "16", "32", ">=64" };
	static const char *const batch_keys[] = { "0", "4", "8", "16", "32", "64", ">=64" };
	const struct fio_job *j = rep->job;
	const struct ilab_nvme_job_result *r = &rep->r;
	bool w = ilab_fio_rw_is_write(j->cfg.rw);
	json_t *opts = json_object(), *o;
	uint64_t ns[10], us[10], ms[12];

	for (unsigned i = 0; opts && i < j->sec->nopts; i++)
		json_object_set_new(opts, j->sec->opts[i].key,
				    json_string(j->sec->opts[i].val ? j->sec->opts[i].val : ""));
	json_object_set_new(opts, "name", json_string(j->sec->name));
	lat_buckets(&r->clat, ns, us, ms);
	o = json_pack("{s:s,s:i,s:i,s:i,s:I,s:o,s:o,s:o,s:o,s:{s:i,s:o},s:I,s:f,s:f,s:i,s:i,s:i,"
		      "s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:i,s:f,s:i}",
		      "jobname", j->sec->name, "groupid", 0, "error", rep->error, "eta", 0,
		      "elapsed", (json_int_t)ceil(r->run_ns / 1e9), "job options", opts,
		      "read", dir_obj(rep, !w, plus), "write", dir_obj(rep, w, plus),
		      "trim", dir_obj(rep, false, plus),
		      "sync", "total_ios", 0, "lat_ns",
		      json_pack("{s:i,s:i,s:f,s:f,s:i}", "min", 0, "max", 0, "mean", 0.0, "stddev",
				0.0, "N", 0),
		      "job_runtime", (json_int_t)(r->run_ns / 1000000), "usr_cpu", 0.0,
		      "sys_cpu", 100.0 * r->cpu_busy, "ctx", 0, "majf", 0, "minf", 0,
		      "iodepth_level", pct_obj(depth_keys, 7, r->depth),
		      "iodepth_submit", pct_obj(batch_keys, 7, r->submit_batch),
		      "iodepth_complete", pct_obj(batch_keys, 7, r->complete_batch),
		      "latency_ns", pct_obj(lat_keys, 10, ns),
		      "latency_us", pct_obj(lat_keys, 10, us),
		      "latency_ms", pct_obj(lat_keys, 12, ms),
		      "latency_depth", (int)j->iodepth_opt, "latency_target", 0,
		      "latency_percentile", 100.0, "latency_window", 0);
	return o;
}

static int write_json(FILE *f, const struct fio_run *run, const struct fio_report *reps,
		      unsigned nreps, bool plus)
{
	time_t now = time(NULL);
	char tbuf[64];
	json_t *root, *jobs = json_array(), *glob = NULL;

	strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", localtime(&now));
	for (unsigned i = 0; jobs && i < nreps; i++)
		json_array_append_new(jobs, job_obj(&reps[i], plus));
	if (run->global.nopts) {
		glob = json_object();
		for (unsigned i = 0; glob && i < run->global.nopts; i++)
			json_object_set_new(glob, run->global.opts[i].key,
					    json_string(run->global.opts[i].val ?
							run->global.opts[i].val : ""));
	}
	root = json_pack("{s:s,s:I,s:I,s:s}", "fio version", FIO_VERSION, "timestamp",
			 (json_int_t)now, "timestamp_ms", (json_int_t)now * 1000, "time", tbuf);
	if (!root || !jobs)
		return json_decref(root), json_decref(jobs), json_decref(glob), -ENOMEM;
	if (glob)
		json_object_set_new(root, "global options", glob);
	json_object_set_new(root, "jobs", jobs);
	/* a failed write shows in the stream's error flag: the caller's close or commit says it */
	if (!json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)))
		fputc('\n', f);
	json_decref(root);
	return 0;
}

/* ---- normal text ---------------------------------------------------------------------------- */

/* fio's num2str: at most four digits, scaled by base (1000: k, M, G; 1024: Ki, Mi, Gi) until
 * they fit, with the decimals that fit in four characters: 82.7k, 256k, 1024KiB, 64.0MiB. */
static void num2str(char *buf, size_t len, double v, unsigned base, const char *const *units)
{
	unsigned k = 0, digits;

	while (v >= 9999.5 && units[k + 1]) {
		v /= base;
		k++;
	}
	digits = v >= 999.5 ? 4 : v >= 99.95 ? 3 : v >= 9.995 ? 2 : 1;
	snprintf(buf, len, "%.*f%s", k && digits < 3 ? 3 - (int)digits : 0, v, units[k]);
}

static const char *const count_units[] = { "", "k", "M", "G", "T", NULL };
static const char *const iec_units[] = { "B", "KiB", "MiB", "GiB", "TiB", NULL };
static const char *const si_units[] = { "B", "kB", "MB", "GB", "TB", NULL };

static void num(char *buf, size_t len, double v)
{
	num2str(buf, len, v, 1000, count_units);
}

static void iec(char *buf, size_t len, double v)
{
	num2str(buf, len, v, 1024, iec_units);
}

static void si(char *buf, size_t len, double v)
{
	num2str(buf, len, v, 1000, si_units);
}

static void print_stat(FILE *f, const char *name, const struct ilab_lat_hist *h)
{
	double div = 1;
	const char *unit = "nsec";

	if (!h->n)
		return;
	if (h->min >= 1000000)
		div = 1e6, unit = "msec";
	else if (h->min >= 1000)
		div = 1e3, unit = "usec";
	fprintf(f, "    %4s (%s): min=%.0f, max=%.0f, avg=%.2f, stdev=%.2f\n", name, unit,
		floor(h->min / div), floor(h->max / div), ilab_lat_hist_mean(h) / div,
		ilab_lat_hist_stdev(h) / div);
}

static void print_pcts(FILE *f, const struct fio_job *j, const struct ilab_lat_hist *h)
{
	uint64_t v[FIO_MAX_PCT], lo = UINT64_MAX, hi = 0;
	double div = 1;
	const char *unit = "nsec";

	if (!h->n)
		return;
	for (unsigned i = 0; i < j->npct; i++) {
		v[i] = ilab_lat_hist_percentile(h, j->pct[i]);
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	/* fio's scale: msec when every value is above 2 ms and the largest above 100 ms, usec
	 * when above 2 us and 100 us */
	if (lo > 2000000 && hi > 99999999)
		div = 1e6, unit = "msec";
	else if (lo > 2000 && hi > 99999)
		div = 1e3, unit = "usec";
	fprintf(f, "    clat percentiles (%s):\n", unit);
	for (unsigned i = 0; i < j->npct; i++)
		fprintf(f, "%s %5.2fth=[%5.0f]%s", i % 4 ? "" : "     |", j->pct[i],
			floor(v[i] / div), i + 1 == j->npct ? "\n" : i % 4 == 3 ? ",\n" : ",");
}

static void print_lat_buckets(FILE *f, const struct ilab_lat_hist *h)
{
	static const char *const units[] = { "nsec", "usec", "msec" };
	static const unsigned lim[] = { 10, 10, 12 };
	uint64_t b[3][12];

	lat_buckets(h, b[0], b[1], b[2]);
	for (unsigned u = 0; u < 3; u++) {
		unsigned shown = 0;

		for (unsigned k = 0; k < lim[u]; k++) {
			if (!b[u][k])
				continue;
			if (shown % 5 == 0)
				fprintf(f, "%s  lat (%s)   : ", shown ? "\n" : "", units[u]);
			fprintf(f, "%s%s=%.2f%%", shown % 5 ? ", " : "", lat_keys[k],
				100.0 * b[u][k] / h->n);
			shown++;
		}
		if (shown)
			fputc('\n', f);
	}
}

static void print_job(FILE *f, const struct fio_report *rep, const char *date)
{
	static const char *const dk[] = { "1", "2", "4", "8", "16", "32", ">=64" };
	static const char *const bk[] = { "0", "4", "8", "16", "32", "64", ">=64" };
	const struct fio_job *j = rep->job;
	const struct ilab_nvme_job_result *r = &rep->r;
	bool w = ilab_fio_rw_is_write(j->cfg.rw);
	double s = rep->window_ns / 1e9, iops = s > 0 ? r->ios / s : 0;
	char n[32], bw[32], bws[32], io[32];
	uint64_t td = 0, ts = 0, tc = 0;

	num(n, sizeof(n), iops);
	iec(bw, sizeof(bw), iops * j->cfg.bs);
	si(bws, sizeof(bws), iops * j->cfg.bs);
	iec(io, sizeof(io), (double)r->ios * j->cfg.bs);
	fprintf(f, "%s: (groupid=0, jobs=%u): err=%2d: pid=0: %s\n", j->sec->name, rep->jobs,
		rep->error, date);
	fprintf(f, "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%llumsec)\n", w ? "write" : "read", n, bw,
		bws, io, (unsigned long long)(rep->window_ns / 1000000));
	if (!j->sync_engine)
		print_stat(f, "slat", &r->slat);
	print_stat(f, "clat", &r->clat);
	print_stat(f, " lat", &r->lat);
	print_pcts(f, j, &r->clat);
	print_lat_buckets(f, &r->clat);
	fprintf(f, "  cpu          : usr=0.00%%, sys=%.2f%%, ctx=0, majf=0, minf=0\n",
		100.0 * r->cpu_busy);
	for (unsigned i = 0; i < 7; i++) {
		td += r->depth[i];
		ts += r->submit_batch[i];
		tc += r->complete_batch[i];
	}
	fprintf(f, "  IO depths    :");
	for (unsigned i = 0; i < 7; i++)
		fprintf(f, " %s=%.1f%%%s", dk[i], td ? 100.0 * r->depth[i] / td : 0, i < 6 ? "," : "\n");
	fprintf(f, "     submit    :");
	for (unsigned i = 0; i < 7; i++)
		fprintf(f, " %s=%.1f%%%s", bk[i], ts ? 100.0 * r->submit_batch[i] / ts : 0,
			i < 6 ? "," : "\n");
	fprintf(f, "     complete  :");
	for (unsigned i = 0; i < 7; i++)
		fprintf(f, " %s=%.1f%%%s", bk[i], tc ? 100.0 * r->complete_batch[i] / tc : 0,
			i < 6 ? "," : "\n");
	fprintf(f, "     issued rwts: total=%llu,%llu,0,0 short=0,0,0,0 dropped=0,0,0,0\n",
		(unsigned long long)(w ? 0 : r->ios), (unsigned long long)(w ? r->ios : 0));
	fprintf(f, "     latency   : target=0, window=0, percentile=100.00%%, depth=%u\n\n",
		j->iodepth_opt);
}

static void write_normal(FILE *f, const struct fio_report *reps, unsigned nreps,
			 const char *machine)
{
	double lo[2] = { INFINITY, INFINITY }, hi[2] = { 0, 0 };
	uint64_t bytes[2] = { 0, 0 }, rlo[2] = { UINT64_MAX, UINT64_MAX }, rhi[2] = { 0, 0 };
	double span[2] = { 0, 0 };
	unsigned procs = 0;
	time_t now = time(NULL);
	char date[64];

	strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", localtime(&now));

	for (unsigned i = 0; i < nreps; i++) {
		const struct fio_job *j = reps[i].job;

		procs += reps[i].jobs;
		if (i && reps[i - 1].job == j) {
			fprintf(f, "...\n"); /* fio: one line for a job's clones */
			continue;
		}
		fprintf(f, "%s: (g=0): rw=%s, bs=(R) %uB-%uB, (W) %uB-%uB, (T) %uB-%uB, "
			"ioengine=%s, iodepth=%u\n", j->sec->name, ilab_fio_rw_name(j->cfg.rw),
			j->cfg.bs, j->cfg.bs, j->cfg.bs, j->cfg.bs, j->cfg.bs, j->cfg.bs, j->ioengine,
			j->iodepth_opt);
	}
	fprintf(f, "%s\nStarting %u process%s\n%s\n\n", FIO_VERSION, procs, procs > 1 ? "es" : "",
		machine);
	for (unsigned i = 0; i < nreps; i++) {
		const struct fio_report *rep = &reps[i];
		unsigned d = ilab_fio_rw_is_write(rep->job->cfg.rw);
		double s = rep->window_ns / 1e9, b = s > 0 ? rep->r.ios * rep->job->cfg.bs / s : 0;
		uint64_t ms = rep->window_ns / 1000000;

		print_job(f, rep, date);
		lo[d] = fmin(lo[d], b);
		hi[d] = fmax(hi[d], b);
		bytes[d] += rep->r.ios * rep->job->cfg.bs;
		rlo[d] = ms < rlo[d] ? ms : rlo[d];
		rhi[d] = ms > rhi[d] ? ms : rhi[d];
		span[d] = fmax(span[d], s);
	}
	fprintf(f, "Run status group 0 (all jobs):\n");
	for (unsigned d = 0; d < 2; d++) {
		char a[32], as[32], l[32], ls[32], h[32], hs[32], io[32], ios[32];

		if (!bytes[d] && rlo[d] == UINT64_MAX)
			continue;
		iec(a, sizeof(a), bytes[d] / span[d]);
		si(as, sizeof(as), bytes[d] / span[d]);
		iec(l, sizeof(l), lo[d]);
		si(ls, sizeof(ls), lo[d]);
		iec(h, sizeof(h), hi[d]);
		si(hs, sizeof(hs), hi[d]);
		iec(io, sizeof(io), (double)bytes[d]);
		si(ios, sizeof(ios), (double)bytes[d]);
		fprintf(f, "%7s: bw=%s/s (%s/s), %s/s-%s/s (%s/s-%s/s), io=%s (%s), "
			"run=%llu-%llumsec\n", d ? "WRITE" : "READ", a, as, l, h, ls, hs, io, ios,
			(unsigned long long)rlo[d], (unsigned long long)rhi[d]);
	}
}

int fio_report_write(FILE *f, enum fio_format fmt, const struct fio_run *run,
		     const struct fio_report *reps, unsigned nreps, const char *machine)
{
	if (fmt == FIO_NORMAL) {
		write_normal(f, reps, nreps, machine);
		return 0;
	}
	return write_json(f, run, reps, nreps, fmt == FIO_JSON_PLUS);
}
