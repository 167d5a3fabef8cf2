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


/* fio's runtime in ms: the elapsed microseconds rounded up (backend.c) */
static uint64_t runtime_ms(uint64_t ns)
{
	return (ns / 1000 + 999) / 1000;
}

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

/* Direction d's figures (fio's DDIR_READ, DDIR_WRITE, DDIR_TRIM); active: the direction ran
 * in the window. */
static const struct ilab_nvme_dir_result *dir_of(const struct fio_report *rep, unsigned d,
						 bool *active)
{
	*active = rep->does[d];
	return &rep->r.dir[d];
}

static const char *const ddir_name[ILAB_FIO_DDIRS] = { "read", "write", "trim" };

static json_t *dir_obj(const struct fio_report *rep, unsigned d, bool plus)
{
	static const struct ilab_lat_hist empty = { .min = 0 };
	const struct fio_job *j = rep->job;
	bool active;
	const struct ilab_nvme_dir_result *r = dir_of(rep, d, &active);
	uint64_t ios = active ? r->ios : 0, bytes = active ? r->bytes : 0;
	double s = rep->window_ns / 1e9, iops = active && s > 0 ? ios / s : 0;
	bool slat = active && !j->sync_engine; /* sync engines have no submission latency */

	return json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:I,s:I,s:f,s:f,s:f,"
			 "s:I,s:I,s:I,s:f,s:f,s:I}",
			 "io_bytes", (json_int_t)bytes, "io_kbytes", (json_int_t)(bytes >> 10),
			 "bw_bytes", (json_int_t)(active && s > 0 ? bytes / s : 0),
			 "bw", (json_int_t)(active && s > 0 ? bytes / s / 1024 : 0), "iops", iops,
			 "runtime", (json_int_t)(active ? runtime_ms(rep->window_ns) : 0),
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

/* Over both directions' clat, as fio's io_u_lat_* count every I/O. */
static void lat_buckets(const struct ilab_nvme_job_result *r, uint64_t ns[10], uint64_t us[10],
			uint64_t ms[12])
{
	memset(ns, 0, 10 * sizeof(*ns));
	memset(us, 0, 10 * sizeof(*us));
	memset(ms, 0, 12 * sizeof(*ms));
	for (unsigned i = 0; i < ILAB_FIO_DDIRS * ILAB_LAT_HIST_NR; i++) {
		const struct ilab_lat_hist *h = &r->dir[i / ILAB_LAT_HIST_NR].clat;
		uint64_t v = ilab_lat_hist_value(i % ILAB_LAT_HIST_NR), *row = ns;
		unsigned k = 0, lim = 10;

		if (!h->bucket[i % ILAB_LAT_HIST_NR])
			continue;
		if (v >= 1000000) {
			row = ms, v /= 1000000, lim = 11;
		} else if (v >= 1000) {
			row = us, v /= 1000;
		}
		while (k < lim && v >= lat_edges[k])
			k++;
		row[k] += h->bucket[i % ILAB_LAT_HIST_NR];
	}
}

static json_t *job_obj(const struct fio_report *rep, bool plus)
{
	static const char *const depth_keys[] = { "1", "2", "4", "8", "16", "32", ">=64" };
	static const char *const batch_keys[] = { "0", "4", "8", "16", "32", "64", ">=64" };
	const struct fio_job *j = rep->job;
	const struct ilab_nvme_job_result *r = &rep->r;
	json_t *opts = json_object(), *o;
	uint64_t ns[10], us[10], ms[12];

	for (unsigned i = 0; opts && i < j->sec->nopts; i++)
		json_object_set_new(opts, j->sec->opts[i].key,
				    json_string(j->sec->opts[i].val ? j->sec->opts[i].val : ""));
	json_object_set_new(opts, "name", json_string(j->sec->name));
	lat_buckets(r, ns, us, ms);
	o = json_pack("{s:s,s:i,s:i,s:i,s:I,s:o,s:o,s:o,s:o,s:{s:i,s:o},s:I,s:f,s:f,s:i,s:i,s:i,"
		      "s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:i,s:f,s:i}",
		      "jobname", j->sec->name, "groupid", (int)rep->groupid, "error", rep->error,
		      "eta", 0,
		      "elapsed", (json_int_t)ceil(r->run_ns / 1e9), "job options", opts,
		      "read", dir_obj(rep, 0, plus), "write", dir_obj(rep, 1, plus),
		      "trim", dir_obj(rep, 2, plus),
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

static void print_lat_buckets(FILE *f, const struct ilab_nvme_job_result *r)
{
	static const char *const units[] = { "nsec", "usec", "msec" };
	static const unsigned lim[] = { 10, 10, 12 };
	uint64_t b[3][12], n = r->dir[0].clat.n + r->dir[1].clat.n + r->dir[2].clat.n;

	lat_buckets(r, b[0], b[1], b[2]);
	for (unsigned u = 0; u < 3; u++) {
		unsigned shown = 0;

		for (unsigned k = 0; k < lim[u]; k++) {
			if (!b[u][k])
				continue;
			if (shown % 5 == 0)
				fprintf(f, "%s  lat (%s)   : ", shown ? "\n" : "", units[u]);
			fprintf(f, "%s%s=%.2f%%", shown % 5 ? ", " : "", lat_keys[k],
				100.0 * b[u][k] / n);
			shown++;
		}
		if (shown)
			fputc('\n', f);
	}
}

/* Does the normal output show direction d? fio shows the directions that ran. */
static bool shows_dir(const struct fio_report *rep, unsigned d)
{
	bool active;
	const struct ilab_nvme_dir_result *r = dir_of(rep, d, &active);

	/* a mix (or reports merged over directions) shows a direction with I/O */
	return active && (r->ios || rep->does[0] != rep->does[1] ||
			  !ilab_fio_rw_is_mixed(rep->job->cfg.rw));
}

static void print_dir(FILE *f, const struct fio_report *rep, unsigned d)
{
	const struct fio_job *j = rep->job;
	const struct ilab_nvme_dir_result *r = &rep->r.dir[d];
	double s = rep->window_ns / 1e9, iops = s > 0 ? r->ios / s : 0;
	double bps = s > 0 ? r->bytes / s : 0;
	char n[32], bw[32], bws[32], io[32];

	num(n, sizeof(n), iops);
	iec(bw, sizeof(bw), bps);
	si(bws, sizeof(bws), bps);
	iec(io, sizeof(io), (double)r->bytes);
	fprintf(f, "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%llumsec)%s\n", ddir_name[d], n, bw,
		bws, io, (unsigned long long)runtime_ms(rep->window_ns),
		d == 1 ? "; 0 zone resets" : "");
	if (!j->sync_engine)
		print_stat(f, "slat", &r->slat);
	print_stat(f, "clat", &r->clat);
	print_stat(f, " lat", &r->lat);
	print_pcts(f, j, &r->clat);
}

static void print_job(FILE *f, const struct fio_report *rep, const char *date)
{
	static const char *const dk[] = { "1", "2", "4", "8", "16", "32", ">=64" };
	static const char *const bk[] = { "0", "4", "8", "16", "32", "64", ">=64" };
	const struct fio_job *j = rep->job;
	const struct ilab_nvme_job_result *r = &rep->r;
	uint64_t td = 0, ts = 0, tc = 0;

	fprintf(f, "%s: (groupid=%u, jobs=%u): err=%2d: pid=0: %s\n", j->sec->name, rep->groupid,
		rep->jobs, rep->error, date);
	for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++)
		if (shows_dir(rep, d))
			print_dir(f, rep, d);
	print_lat_buckets(f, r);
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
	fprintf(f, "     issued rwts: total=%llu,%llu,%llu,0 short=0,0,0,0 dropped=0,0,0,0\n",
		(unsigned long long)r->dir[0].ios, (unsigned long long)r->dir[1].ios,
		(unsigned long long)r->dir[2].ios);
	fprintf(f, "     latency   : target=0, window=0, percentile=100.00%%, depth=%u\n\n",
		j->iodepth_opt);
}

/* fio's "Run status group N" lines of the reports of group g. */
static void print_group(FILE *f, const struct fio_report *reps, unsigned nreps, unsigned g)
{
	double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { 0 }, span[3] = { 0 };
	uint64_t bytes[3] = { 0 }, rlo[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX }, rhi[3] = { 0 };

	for (unsigned i = 0; i < nreps; i++) {
		const struct fio_report *rep = &reps[i];
		double s = rep->window_ns / 1e9;
		uint64_t ms = runtime_ms(rep->window_ns);

		if (rep->groupid != g)
			continue;
		for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++) {
			double b = s > 0 ? rep->r.dir[d].bytes / s : 0;

			if (!shows_dir(rep, d))
				continue;
			lo[d] = fmin(lo[d], b);
			hi[d] = fmax(hi[d], b);
			bytes[d] += rep->r.dir[d].bytes;
			rlo[d] = ms < rlo[d] ? ms : rlo[d];
			rhi[d] = ms > rhi[d] ? ms : rhi[d];
			span[d] = fmax(span[d], s);
		}
	}
	fprintf(f, "%sRun status group %u (all jobs):\n", g ? "\n" : "", g);
	for (unsigned d = 0; d < ILAB_FIO_DDIRS; d++) {
		static const char *const up[] = { "READ", "WRITE", "TRIM" };
		char a[32], as[32], l[32], ls[32], h[32], hs[32], io[32], ios[32];

		if (!bytes[d] && rlo[d] == UINT64_MAX)
			continue;
		iec(a, sizeof(a), span[d] > 0 ? bytes[d] / span[d] : 0);
		si(as, sizeof(as), span[d] > 0 ? bytes[d] / span[d] : 0);
		iec(l, sizeof(l), lo[d]);
		si(ls, sizeof(ls), lo[d]);
		iec(h, sizeof(h), hi[d]);
		si(hs, sizeof(hs), hi[d]);
		iec(io, sizeof(io), (double)bytes[d]);
		si(ios, sizeof(ios), (double)bytes[d]);
		fprintf(f, "%7s: bw=%s/s (%s/s), %s/s-%s/s (%s/s-%s/s), io=%s (%s), "
			"run=%llu-%llumsec\n", up[d], a, as, l, h, ls, hs, io, ios,
			(unsigned long long)rlo[d], (unsigned long long)rhi[d]);
	}
}

static void write_normal(FILE *f, const struct fio_run *run, const struct fio_report *reps,
			 unsigned nreps, const char *machine)
{
	unsigned procs = 0;
	time_t now = time(NULL);
	char date[64];

	strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", localtime(&now));
	for (unsigned i = 0; i < run->nsecs; i++) {
		const struct fio_job *j = &run->jobs[i];
		char b[6][32];

		procs += j->cfg.numjobs;
		for (unsigned d = 0; d < 3; d++) {
			iec(b[2 * d], sizeof(b[0]), j->bs_lo[d]);
			iec(b[2 * d + 1], sizeof(b[0]), j->bs_hi[d]);
		}
		fprintf(f, "%s: (g=%u): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, "
			"ioengine=%s, iodepth=%u\n", j->sec->name, j->groupid,
			ilab_fio_rw_name(j->cfg.rw), b[0], b[1], b[2], b[3], b[4], b[5], j->ioengine,
			j->iodepth_opt);
		if (j->cfg.numjobs > 1)
			fprintf(f, "...\n"); /* fio: one line for a job's clones */
	}
	fprintf(f, "%s\nStarting %u process%s\n%s\n\n", FIO_VERSION, procs, procs > 1 ? "es" : "",
		machine);
	for (unsigned i = 0; i < nreps; i++)
		print_job(f, &reps[i], date);
	for (unsigned g = 0; nreps && g <= reps[nreps - 1].groupid; g++)
		print_group(f, reps, nreps, g);
}

/* ---- terse, version 3 (fio's stat.c show_thread_status_terse_all) ----------------------- */

#define FIO_TERSE_PCTS 20 /* FIO_IO_U_LIST_MAX_LEN: the percentile fields of a direction */

/* min;max;mean;stdev in usec (min and max truncated, as fio's integer division) */
static void terse_stat(FILE *f, const struct ilab_lat_hist *h)
{
	if (!h->n) {
		fprintf(f, ";0;0;%f;%f", 0.0, 0.0);
		return;
	}
	fprintf(f, ";%llu;%llu;%f;%f", (unsigned long long)(h->min / 1000),
		(unsigned long long)(h->max / 1000), ilab_lat_hist_mean(h) / 1000,
		ilab_lat_hist_stdev(h) / 1000);
}

static void terse_dir(FILE *f, const struct fio_report *rep, unsigned d)
{
	static const struct ilab_lat_hist empty = { .min = 0 };
	const struct fio_job *j = rep->job;
	bool active;
	const struct ilab_nvme_dir_result *r = dir_of(rep, d, &active);
	uint64_t runt = active ? runtime_ms(rep->window_ns) : 0, bytes = active ? r->bytes : 0;
	uint64_t ios = active ? r->ios : 0;

	/* fio: KiB; KiB/s and IOPS from the runtime in ms, integer arithmetic */
	fprintf(f, ";%llu;%llu;%llu;%llu", (unsigned long long)(bytes >> 10),
		(unsigned long long)(runt ? 1000 * bytes / runt / 1024 : 0),
		(unsigned long long)(runt ? 1000 * ios / runt : 0), (unsigned long long)runt);
	terse_stat(f, active && !j->sync_engine ? &r->slat : &empty);
	terse_stat(f, active ? &r->clat : &empty);
	for (unsigned i = 0; i < FIO_TERSE_PCTS; i++) {
		if (i >= j->npct) {
			fprintf(f, ";0%%=0");
			continue;
		}
		fprintf(f, ";%f%%=%llu", j->pct[i], (unsigned long long)(active && r->clat.n ?
			ilab_lat_hist_percentile(&r->clat, j->pct[i]) / 1000 : 0));
	}
	terse_stat(f, active ? &r->lat : &empty);
	/* the bandwidth log's min;max;% of aggregate;mean;stdev: no samples, as fio's without */
	fprintf(f, ";0;0;%f%%;%f;%f", 0.0, 0.0, 0.0);
}

/* fio's stat_calc_lat: percent of the I/Os, a non-empty bucket at least 0.01 */
static double terse_pct(uint64_t n, uint64_t total)
{
	double v = total ? 100.0 * n / total : 0;

	return n && v < 0.01 ? 0.01 : v;
}

static void write_terse(FILE *f, const struct fio_report *reps, unsigned nreps)
{
	for (unsigned i = 0; i < nreps; i++) {
		const struct fio_report *rep = &reps[i];
		const struct ilab_nvme_job_result *r = &rep->r;
		uint64_t ns[10], us[10], ms[12], total = 0, nsum = 0, depths = 0;
		const char *desc = NULL;

		fprintf(f, "3;%s;%s;%u;%d", FIO_VERSION, rep->job->sec->name, rep->groupid,
			rep->error);
		for (unsigned d = 0; d < 2; d++)
			terse_dir(f, rep, d); /* version 3: no trim fields */
		fprintf(f, ";%f%%;%f%%;0;0;0", 0.0, 100.0 * r->cpu_busy);
		for (unsigned k = 0; k < ILAB_NVME_DEPTH_BUCKETS; k++)
			depths += r->depth[k];
		for (unsigned k = 0; k < ILAB_NVME_DEPTH_BUCKETS; k++)
			fprintf(f, ";%3.1f%%", depths ? 100.0 * r->depth[k] / depths : 0);
		lat_buckets(r, ns, us, ms);
		total = r->dir[0].clat.n + r->dir[1].clat.n + r->dir[2].clat.n;
		for (unsigned k = 0; k < 10; k++)
			nsum += ns[k];
		/* fio keeps the terse fields: the nsec buckets go into the first usec one */
		for (unsigned k = 0; k < 10; k++)
			fprintf(f, ";%3.2f%%", terse_pct(us[k], total) +
				(k ? 0 : terse_pct(nsum, total)));
		for (unsigned k = 0; k < 12; k++)
			fprintf(f, ";%3.2f%%", terse_pct(ms[k], total));
		for (unsigned k = 0; k < rep->job->sec->nopts; k++)
			if (!strcmp(rep->job->sec->opts[k].key, "description"))
				desc = rep->job->sec->opts[k].val;
		if (desc && *desc)
			fprintf(f, ";%s", desc);
		fputc('\n', f);
	}
}

int fio_report_write(FILE *f, enum fio_format fmt, const struct fio_run *run,
		     const struct fio_report *reps, unsigned nreps, const char *machine)
{
	if (fmt == FIO_NORMAL) {
		write_normal(f, run, reps, nreps, machine);
		return 0;
	}
	if (fmt == FIO_TERSE) {
		write_terse(f, reps, nreps);
		return 0;
	}
	return write_json(f, run, reps, nreps, fmt == FIO_JSON_PLUS);
}
