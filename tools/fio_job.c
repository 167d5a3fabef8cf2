/* fio_job.c — fio's job files and command lines into jobs (fio_job.h). */
#include "fio_job.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/units.h"

#define FIO_MAX_INCLUDE_DEPTH 8

static char *keep(struct fio_run *r, const char *s, size_t n)
{
	char *c;

	if (r->nstrings == sizeof(r->strings) / sizeof(r->strings[0]))
		return NULL;
	c = strndup(s, n);
	if (c)
		r->strings[r->nstrings++] = c;
	return c;
}

void fio_run_free(struct fio_run *r)
{
	for (unsigned i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	r->nstrings = 0;
	for (unsigned i = 0; i < FIO_MAX_JOBS; i++) {
		free(r->jobs[i].cpus);
		r->jobs[i].cpus = NULL;
	}
}

static int usage(const char *where, const char *fmt, const char *a, const char *b)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a, b);
	if (where)
		return cli_usage_error("fio", "%s: %s", where, msg);
	return cli_usage_error("fio", "%s", msg);
}

int fio_run_add_section(struct fio_run *r, const char *name, const char *where)
{
	r->in_global = !strcmp(name, "global");
	if (r->in_global)
		return 0; /* options go on to the global section (fio: a second [global] adds) */
	if (r->nsecs == FIO_MAX_JOBS)
		return usage(where, "more than %s job sections%s", "16", "");
	r->secs[r->nsecs].name = keep(r, name, strlen(name));
	if (!r->secs[r->nsecs].name)
		return usage(where, "out of memory%s%s", "", "");
	r->nsecs++;
	return 0;
}

int fio_run_add_opt(struct fio_run *r, const char *key, const char *val, const char *where)
{
	struct fio_section *s = r->nsecs && !r->in_global ? &r->secs[r->nsecs - 1] : &r->global;
	struct fio_kv *kv;

	if (s->nopts == FIO_MAX_OPTS)
		return usage(where, "more than 64 options in section '%s'%s",
			     s == &r->global ? "global" : s->name, "");
	kv = &s->opts[s->nopts];
	kv->key = keep(r, key, strlen(key));
	kv->val = val ? keep(r, val, strlen(val)) : NULL;
	if (!kv->key || (val && !kv->val))
		return usage(where, "out of memory%s%s", "", "");
	s->nopts++;
	return 0;
}

/* ${VAR} in a value: the environment's VAR, or nothing (HOWTO, "Environment variables"). */
static int expand_env(const char *in, char *out, size_t len)
{
	size_t k = 0;

	while (*in) {
		const char *end;

		if (in[0] == '$' && in[1] == '{' && (end = strchr(in + 2, '}'))) {
			char name[128];
			const char *v;

			snprintf(name, sizeof(name), "%.*s", (int)(end - in - 2), in + 2);
			v = getenv(name);
			for (; v && *v; v++)
				if (k + 1 < len)
					out[k++] = *v;
			in = end + 1;
			continue;
		}
		if (k + 1 < len)
			out[k++] = *in;
		in++;
	}
	out[k] = '\0';
	return k + 1 < len ? 0 : -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int read_file(struct fio_run *r, const char *path, unsigned depth, bool sections_ok)
{
	FILE *f = fopen(path, "r");
	char line[4096], where[600];
	unsigned lineno = 0;
	int ret = 0;

	if (!f)
		return usage(NULL, "cannot read job file %s: %s", path, strerror(errno));
	while (!ret && fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq, val[4096];

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (!sections_ok)
				ret = usage(where, "an included file may not have sections (fio's "
					    "HOWTO)%s%s", "", "");
			else if (!close || close == s + 1 || *trim(close + 1))
				ret = usage(where, "a section is [name], not '%s'%s", s, "");
			else {
				*close = '\0';
				ret = fio_run_add_section(r, trim(s + 1), where);
			}
			continue;
		}
		if (!strncmp(s, "include", 7) && isspace((unsigned char)s[7])) {
			char inc[4096], dir[4096];

			if (depth >= FIO_MAX_INCLUDE_DEPTH) {
				ret = usage(where, "includes nested deeper than %s%s", "8", "");
				continue;
			}
			snprintf(dir, sizeof(dir), "%s", path);
			if (*trim(s + 7) == '/')
				snprintf(inc, sizeof(inc), "%s", trim(s + 7));
			else
				snprintf(inc, sizeof(inc), "%s/%s", dirname(dir), trim(s + 7));
			ret = read_file(r, inc, depth + 1, false);
			continue;
		}
		eq = strchr(s, '=');
		if (eq)
			*eq = '\0';
		if (eq && expand_env(trim(eq + 1), val, sizeof(val)))
			ret = usage(where, "option '%s': value too long%s", trim(s), "");
		else
			ret = fio_run_add_opt(r, trim(s), eq ? val : NULL, where);
	}
	if (!ret && ferror(f))
		ret = usage(NULL, "cannot read job file %s%s", path, "");
	fclose(f);
	return ret;
}

int fio_run_read_file(struct fio_run *r, const char *path)
{
	return read_file(r, path, 0, true);
}

/* ---- the options -------------------------------------------------------------------------- */

static int get_bool(const char *v, bool *out)
{
	if (!v || !strcmp(v, "1") || !strcmp(v, "true"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "false"))
		*out = false;
	else
		return -1;
	return 0;
}

static int get_count(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t x;

	if (!v || ilab_parse_size(v, ILAB_UNITS_FIO_1024, &x) || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

static int get_size(const struct fio_job *j, const char *v, uint64_t *out)
{
	return !v || ilab_parse_size(v, j->kb_base == 1000 ? ILAB_UNITS_FIO_1000
							   : ILAB_UNITS_FIO_1024, out);
}

static int get_pct_list(struct fio_job *j, const char *v)
{
	char buf[1024], *save = NULL;

	if (!v || strlen(v) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", v);
	j->npct = 0;
	for (char *t = strtok_r(buf, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		char *end;
		double p = strtod(t, &end);

		if (*end || !(p > 0 && p <= 100) || j->npct == FIO_MAX_PCT)
			return -1;
		j->pct[j->npct++] = p;
	}
	return j->npct ? 0 : -1;
}

static int set_rw(struct fio_job *j, const char *v)
{
	if (v && !ilab_fio_rw_parse(v, &j->cfg.rw))
		return 0;
	return -1;
}

/* fio's per-direction values (str_split_parse): "a" is every direction's, "a,b" read a,
 * write and trim b, "a,b,c" each; an empty part keeps that direction's value. */
static int split_dirs(const char *v, char part[3][1024])
{
	const char *c1, *c2;

	if (!v || strlen(v) >= 1024)
		return -1;
	c1 = strchr(v, ',');
	c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	if (c2 && strchr(c2 + 1, ','))
		return -1;
	if (!c1) {
		for (unsigned d = 0; d < 3; d++)
			snprintf(part[d], 1024, "%s", v);
		return 0;
	}
	snprintf(part[0], 1024, "%.*s", (int)(c1 - v), v);
	snprintf(part[1], 1024, "%.*s", (int)((c2 ? c2 : c1 + strlen(c1)) - c1 - 1), c1 + 1);
	snprintf(part[2], 1024, "%s", c2 ? c2 + 1 : part[1]);
	return 0;
}

static int get_bs(const struct fio_job *j, const char *v, unsigned *out)
{
	uint64_t x;

	if (get_size(j, v, &x) || x < 512 || x % 512 || x > ILAB_NVME_MAX_BS)
		return -1;
	*out = (unsigned)x;
	return 0;
}

static int set_bs(struct fio_job *j, const char *v)
{
	char part[3][1024];

	if (split_dirs(v, part))
		return -1;
	for (unsigned d = 0; d < 3; d++)
		if (*part[d] && get_bs(j, part[d], &j->bsd[d].bs))
			return -1;
	return 0;
}

/* bsrange: min-max or min:max per direction */
static int set_bsrange(struct fio_job *j, const char *v)
{
	char part[3][1024];

	if (split_dirs(v, part))
		return -1;
	for (unsigned d = 0; d < 3; d++) {
		char *sep = part[d] + strcspn(part[d], "-:");
		unsigned lo, hi;

		if (!*part[d])
			continue;
		if (!*sep)
			return -1;
		*sep = '\0';
		if (get_bs(j, part[d], &lo) || get_bs(j, sep + 1, &hi) || lo > hi)
			return -1;
		j->bsd[d].min = lo;
		j->bsd[d].max = hi;
	}
	return 0;
}

static int by_perc(const void *a, const void *b)
{
	const struct ilab_nvme_bssplit *x = a, *y = b;

	return (x->perc > y->perc) - (x->perc < y->perc);
}

/* One direction's bssplit (fio's bssplit_ddir): bs/perc entries joined by ':', a blank perc
 * (or 0) shares what the others leave; sorted by perc as fio's lookup wants. */
static int bssplit_dir(struct fio_job *j, char *v, struct fio_bs *b)
{
	char *save = NULL;
	unsigned n = 0, perc = 0, missing = 0;

	for (char *t = strtok_r(v, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(t, '/');
		unsigned p = UINT32_MAX;

		if (n == ILAB_NVME_MAX_BSSPLIT)
			return -1;
		if (slash) {
			char *end;
			long q;

			*slash = '\0';
			q = strtol(slash + 1, &end, 10);
			if (*end || q < 0 || (end == slash + 1 && slash[1]))
				return -1;
			p = q > 100 ? 100 : q ? (unsigned)q : UINT32_MAX;
		}
		if (get_bs(j, t, &b->split[n].bs))
			return -1;
		b->split[n++].perc = p;
	}
	if (!n)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (b->split[i].perc == UINT32_MAX)
			missing++;
		else
			perc += b->split[i].perc;
	if (perc > 100)
		return -1; /* fio: "bssplit percentages add to more than 100%" */
	if (missing == 1 && n == 1)
		perc = 100;
	for (unsigned i = 0; i < n; i++)
		if (b->split[i].perc == UINT32_MAX)
			b->split[i].perc = (100 - perc) / missing;
	qsort(b->split, n, sizeof(b->split[0]), by_perc);
	b->nsplit = n;
	return 0;
}

static int set_bssplit(struct fio_job *j, const char *v)
{
	char part[3][1024];

	if (split_dirs(v, part))
		return -1;
	for (unsigned d = 0; d < 3; d++)
		if (*part[d] && bssplit_dir(j, part[d], &j->bsd[d]))
			return -1;
	return 0;
}

/* cpus_allowed: CPUs and ranges joined by ',' (0,5,8-15). */
static int set_cpus(struct fio_job *j, const char *v)
{
	bool in[FIO_MAX_CPUS] = { false };
	char buf[1024], *save = NULL;

	if (!v || strlen(v) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end, *dash;
		unsigned long lo, hi;

		lo = strtoul(t, &end, 10);
		dash = end;
		hi = lo;
		if (*dash == '-')
			hi = strtoul(dash + 1, &end, 10);
		if (end == t || *end || (*dash == '-' && end == dash + 1) || lo > hi ||
		    hi >= FIO_MAX_CPUS)
			return -1;
		for (unsigned long c = lo; c <= hi; c++)
			in[c] = true;
	}
	j->ncpus_allowed = 0;
	for (unsigned c = 0; c < FIO_MAX_CPUS; c++)
		if (in[c])
			j->cpus_allowed[j->ncpus_allowed++] = (int)c;
	return j->ncpus_allowed ? 0 : -1;
}

static int set_engine(struct fio_job *j, const char *v)
{
	static const char *const async[] = { "libaio", "io_uring", "sim" };
	static const char *const sync[] = { "psync", "sync", "pvsync", "pvsync2" };

	for (unsigned i = 0; v && i < 3; i++)
		if (!strcmp(v, async[i]))
			return j->ioengine = async[i], j->sync_engine = false, 0;
	for (unsigned i = 0; v && i < 4; i++)
		if (!strcmp(v, sync[i]))
			return j->ioengine = sync[i], j->sync_engine = true, 0;
	return -1;
}

#define BAD(msg) usage(where, "option '%s': " msg, key, v ? v : "")

/* One option on job j. 0 or CLI_EXIT_USAGE after one line naming it. */
static int apply(struct fio_job *j, const char *key, const char *v, const char *where)
{
	struct ilab_nvme_cfg *c = &j->cfg;
	uint64_t x;
	bool b;

	if (!strcmp(key, "stonewall") || !strcmp(key, "wait_for_previous")) {
		if (get_bool(v, &j->stonewall))
			return BAD("'%s' must be 0 or 1");
		return 0;
	}
	if (!strcmp(key, "new_group")) {
		if (get_bool(v, &j->new_group))
			return BAD("'%s' must be 0 or 1");
		return 0;
	}
	if (!strcmp(key, "name") || !strcmp(key, "description") || !strcmp(key, "filename") ||
	    !strcmp(key, "thread") || !strcmp(key, "norandommap") ||
	    !strcmp(key, "randrepeat") || !strcmp(key, "invalidate") ||
	    !strcmp(key, "eta") || !strcmp(key, "eta-newline"))
		return 0; /* what the model is anyway (docs/fio.md) */
	if (!strcmp(key, "numjobs")) {
		if (get_count(v, 1, ILAB_NVME_MAX_JOBS, &x))
			return BAD("'%s' must be a number in 1..128");
		c->numjobs = (unsigned)x;
	} else if (!strcmp(key, "iodepth")) {
		if (get_count(v, 1, ILAB_NVME_DEFAULT_QUEUE - 1, &x))
			return BAD("'%s' must be a number in 1..1023 (a queue of 1024 entries)");
		c->iodepth = (unsigned)x;
	} else if (!strcmp(key, "bs") || !strcmp(key, "blocksize")) {
		if (v && strchr(v, '-'))
			return BAD("'%s': fio reads only the size before '-'; a range is "
				   "bsrange=MIN-MAX");
		if (set_bs(j, v))
			return BAD("'%s' must be a size, a multiple of 512 up to 2m, or one per "
				   "direction read,write,trim (4k, 8k,32k)");
	} else if (!strcmp(key, "bsrange") || !strcmp(key, "blocksize_range")) {
		if (set_bsrange(j, v))
			return BAD("'%s' must be MIN-MAX (or MIN:MAX) sizes, multiples of 512 up to "
				   "2m, per direction read,write,trim (1k-4k,2k-8k)");
	} else if (!strcmp(key, "bssplit")) {
		if (set_bssplit(j, v))
			return BAD("'%s' must be SIZE/PERCENT entries joined by ':' (percentages "
				   "adding to at most 100), per direction read,write,trim; sizes "
				   "multiples of 512 up to 2m (4k/10:64k/50:32k/40)");
	} else if (!strcmp(key, "rw") || !strcmp(key, "readwrite")) {
		if (v && !strcmp(v, "trimwrite"))
			return BAD("'%s': the model does not run fio's trim-then-write pairs; trim "
				   "and randtrim it does");
		if (set_rw(j, v))
			return BAD("'%s': the model runs randread, randwrite, read, write, rw "
				   "(readwrite), randrw, trim and randtrim");
	} else if (!strcmp(key, "rwmixread") || !strcmp(key, "rwmixwrite")) {
		if (get_count(v, 0, 100, &x))
			return BAD("'%s' must be a percentage, 0..100");
		/* fio: the latter of the two overrides the first */
		c->rwmixread = !strcmp(key, "rwmixread") ? (unsigned)x : 100 - (unsigned)x;
	} else if (!strcmp(key, "hipri")) {
		if (get_bool(v, &j->hipri))
			return BAD("'%s' must be 0 or 1");
	} else if (!strcmp(key, "cpus_allowed")) {
		if (set_cpus(j, v))
			return BAD("'%s' must be CPUs and ranges joined by ',' (0,5,8-15)");
	} else if (!strcmp(key, "cpus_allowed_policy")) {
		if (!v || (strcmp(v, "shared") && strcmp(v, "split")))
			return BAD("'%s' must be shared or split");
		j->cpus_split = !strcmp(v, "split");
	} else if (!strcmp(key, "runtime") || !strcmp(key, "timeout")) {
		if (!v || ilab_parse_time(v, 1000000000ull, &c->runtime_ns) || !c->runtime_ns)
			return BAD("'%s' must be a time (30, 500ms, 2m)");
		j->runtime_set = true;
	} else if (!strcmp(key, "ramp_time")) {
		if (!v || ilab_parse_time(v, 1000000000ull, &c->ramp_ns))
			return BAD("'%s' must be a time (1, 100ms)");
	} else if (!strcmp(key, "number_ios")) {
		if (get_count(v, 1, 100000000, &c->number_ios))
			return BAD("'%s' must be a number in 1..100000000");
	} else if (!strcmp(key, "size") || !strcmp(key, "io_size") || !strcmp(key, "io_limit")) {
		if (get_size(j, v, &x) || !x)
			return BAD("'%s' must be a size (1g, 512m)");
		j->size_set = x;
	} else if (!strcmp(key, "offset")) {
		if (get_size(j, v, &c->offset_bytes))
			return BAD("'%s' must be a size (0, 1g)");
	} else if (!strcmp(key, "ioengine")) {
		if (set_engine(j, v))
			return BAD("'%s': the model has libaio, io_uring, psync, sync, pvsync, pvsync2");
	} else if (!strcmp(key, "direct") || !strcmp(key, "buffered")) {
		if (!v && !strcmp(key, "buffered"))
			return BAD("%s: the model has no page cache: I/O is direct");
		if (get_bool(v, &b) || b != !strcmp(key, "direct"))
			return BAD("'%s': the model has no page cache: I/O is direct");
	} else if (!strcmp(key, "time_based")) {
		if (get_bool(v, &j->time_based))
			return BAD("'%s' must be 0 or 1");
	} else if (!strcmp(key, "group_reporting")) {
		if (get_bool(v, &j->group_reporting))
			return BAD("'%s' must be 0 or 1");
	} else if (!strcmp(key, "percentile_list")) {
		if (get_pct_list(j, v))
			return BAD("'%s' must be percentiles in (0, 100] joined by ':'");
	} else if (!strcmp(key, "kb_base")) {
		if (!v || (strcmp(v, "1024") && strcmp(v, "1000")))
			return BAD("'%s' must be 1024 or 1000");
		j->kb_base = atoi(v);
	} else {
		return usage(where, "option '%s' is not supported by iommulab fio (docs/fio.md "
			     "lists those that are)%s", key, "");
	}
	return 0;
}

static void job_defaults(struct fio_job *j)
{
	memset(j, 0, sizeof(*j));
	j->cfg.numjobs = 1; /* fio's defaults */
	j->cfg.iodepth = 1;
	j->cfg.bs = 4096;
	for (unsigned d = 0; d < 3; d++)
		j->bsd[d].bs = 4096;
	j->cfg.rw = ILAB_FIO_READ;
	j->cfg.rwmixread = 50; /* fio's default */
	j->ioengine = "psync";
	j->sync_engine = true;
	j->kb_base = 1024;
	memcpy(j->pct, ilab_fio_default_percentiles, sizeof(ilab_fio_default_percentiles));
	j->npct = sizeof(ilab_fio_default_percentiles) / sizeof(ilab_fio_default_percentiles[0]);
}

static int apply_section(struct fio_job *j, const struct fio_section *s)
{
	char where[300];
	int ret;

	snprintf(where, sizeof(where), "[%s]", s->name ? s->name : "global");
	/* kb_base first: it decides how the sizes before it read */
	for (unsigned i = 0; i < s->nopts; i++)
		if (!strcmp(s->opts[i].key, "kb_base") &&
		    (ret = apply(j, s->opts[i].key, s->opts[i].val, where)))
			return ret;
	for (unsigned i = 0; i < s->nopts; i++)
		if ((ret = apply(j, s->opts[i].key, s->opts[i].val, where)))
			return ret;
	return 0;
}

/* Each direction's sizes into the model's (fio's precedence: a split, a range, bs) and the
 * largest I/O as cfg.bs (what the buffers are sized by). */
static void finish_bs(struct fio_job *j)
{
	struct ilab_nvme_cfg *c = &j->cfg;

	c->bs = 0;
	for (unsigned d = 0; d < 3; d++) {
		const struct fio_bs *b = &j->bsd[d];

		j->bs_lo[d] = j->bs_hi[d] = b->bs;
		if (b->min)
			j->bs_lo[d] = b->min, j->bs_hi[d] = b->max;
		if (b->nsplit) {
			j->bs_lo[d] = UINT32_MAX;
			j->bs_hi[d] = 0;
			for (unsigned i = 0; i < b->nsplit; i++) {
				j->bs_lo[d] = b->split[i].bs < j->bs_lo[d] ? b->split[i].bs
									      : j->bs_lo[d];
				j->bs_hi[d] = b->split[i].bs > j->bs_hi[d] ? b->split[i].bs
									      : j->bs_hi[d];
			}
		}
		if (d == 2) { /* the model's trims are all bs bytes: the trim part's */
			if (ilab_fio_rw_is_trim(c->rw))
				c->bs = j->bs_hi[2];
			break;
		}
		c->bs_dist[d] = (struct ilab_nvme_bs_dist){ .min = j->bs_lo[d],
							    .max = j->bs_hi[d],
							    .nsplit = b->nsplit };
		memcpy(c->bs_dist[d].split, b->split, sizeof(b->split));
		if (ilab_fio_rw_does(c->rw, d) && j->bs_hi[d] > c->bs)
			c->bs = j->bs_hi[d];
	}
}

/* cpus_allowed: job i on the set's i-th CPU, round robin (split, fio's words); shared leaves
 * the kernel to place the jobs on the set, which spreads busy threads the same way. */
static int finish_cpus(struct fio_job *j, const char *name)
{
	char n[16];

	if (!j->ncpus_allowed)
		return 0;
	if (j->cfg.numjobs > j->ncpus_allowed) {
		snprintf(n, sizeof(n), "%u", j->ncpus_allowed);
		return usage(NULL, "job '%s': cpus_allowed gives %s CPUs for more jobs: the model "
			     "runs one job per CPU", name, n);
	}
	j->cpus = calloc(j->cfg.numjobs, sizeof(*j->cpus));
	if (!j->cpus)
		return -1;
	for (unsigned i = 0; i < j->cfg.numjobs; i++)
		j->cpus[i] = j->cpus_allowed[i % j->ncpus_allowed];
	j->cfg.cpus = j->cpus;
	return 0;
}

/* A job's smallest I/O in the directions it does: each direction's range minimum, else bs. */
static unsigned smallest_io(const struct ilab_nvme_cfg *c)
{
	unsigned lo = 0;

	for (unsigned d = 0; d < 2; d++) {
		unsigned m = c->bs_dist[d].min ? c->bs_dist[d].min : c->bs;

		if (ilab_fio_rw_does(c->rw, d) && (!lo || m < lo))
			lo = m;
	}
	return lo ? lo : 512;
}

static int finish(struct fio_job *j, const char *name)
{
	struct ilab_nvme_cfg *c = &j->cfg;

	int ret;

	finish_bs(j);
	if (ilab_fio_rw_is_trim(c->rw) && j->bs_lo[2] != j->bs_hi[2])
		return usage(NULL, "job '%s': trims of varying sizes (bsrange, bssplit) are not "
			     "modelled: give the trim part one size%s", name, "");
	ret = finish_cpus(j, name);
	if (ret)
		return ret < 0 ? usage(NULL, "out of memory%s%s", "", "") : ret;
	if (j->hipri && strcmp(j->ioengine, "io_uring") && strcmp(j->ioengine, "pvsync2"))
		return usage(NULL, "job '%s': option 'hipri' is io_uring's and pvsync2's, not "
			     "%s's", name, j->ioengine);
	c->hipri = j->hipri;
	j->iodepth_opt = c->iodepth;
	if (j->sync_engine && c->iodepth > 1) {
		/* fio: a sync engine has one I/O in flight whatever iodepth says; its note */
		fprintf(stderr, "note: both iodepth >= 1 and synchronous I/O engine are selected, "
			"queue depth will be capped at 1\n");
		c->iodepth = 1;
	}
	if (j->runtime_set && c->number_ios)
		return usage(NULL, "job '%s': give runtime or number_ios, not both%s", name, "");
	if (j->size_set) {
		c->size_bytes = j->size_set;
		if (j->size_set < c->bs)
			return usage(NULL, "job '%s': size is smaller than bs%s", name, "");
		/* fio: a job ends after size bytes unless time_based, or at runtime if sooner */
		if (!j->time_based && !c->number_ios) {
			if (j->runtime_set)
				return usage(NULL, "job '%s': size and runtime without time_based "
					     "(whichever ends first) is not modelled: add "
					     "time_based=1 or drop one%s", name, "");
			c->number_ios = j->size_set / c->bs;
			if (c->bs_dist[0].min != c->bs_dist[0].max ||
			    c->bs_dist[1].min != c->bs_dist[1].max ||
			    (ilab_fio_rw_is_mixed(c->rw) && c->bs_dist[0].min != c->bs_dist[1].min)) {
				/* sizes vary: the job ends after size bytes, as fio's; at most
				 * size over its smallest I/O (the host-time estimate's count) */
				c->io_bytes = j->size_set;
				c->number_ios = (j->size_set + smallest_io(c) - 1) / smallest_io(c);
			}
		}
	}
	if (!j->runtime_set && !c->number_ios)
		c->runtime_ns = 20000000ull; /* no size, no runtime: 20 ms of simulated time */
	if (c->number_ios && c->ramp_ns)
		return usage(NULL, "job '%s': ramp_time needs runtime (with number_ios or size "
			     "every I/O counts)%s", name, "");
	return 0;
}

int fio_run_resolve(struct fio_run *r)
{
	int ret;

	if (!r->nsecs)
		return usage(NULL, "no job: give --name=NAME or a job file with a [section]%s%s",
			     "", "");
	for (unsigned i = 0; i < r->nsecs; i++) {
		struct fio_job *j = &r->jobs[i];

		job_defaults(j);
		j->sec = &r->secs[i];
		j->global = &r->global;
		ret = apply_section(j, &r->global);
		if (!ret)
			ret = apply_section(j, &r->secs[i]);
		if (!ret)
			ret = finish(j, r->secs[i].name);
		if (ret)
			return ret;
		/* fio: jobs run at once unless stonewall; stonewall and new_group start a group */
		j->batch = i && j->stonewall ? r->jobs[i - 1].batch + 1 : i ? r->jobs[i - 1].batch : 0;
		j->groupid = i && (j->stonewall || j->new_group) ? r->jobs[i - 1].groupid + 1
				 : i ? r->jobs[i - 1].groupid : 0;
	}
	return 0;
}
