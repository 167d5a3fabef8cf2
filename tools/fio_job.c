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

	if (!strcmp(key, "name") || !strcmp(key, "description") || !strcmp(key, "filename") ||
	    !strcmp(key, "stonewall") || !strcmp(key, "wait_for_previous") ||
	    !strcmp(key, "new_group") || !strcmp(key, "thread") || !strcmp(key, "norandommap") ||
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
		if (get_size(j, v, &x) || x < 512 || x % 512 || x > ILAB_NVME_MAX_BS)
			return BAD("'%s' must be a size, a multiple of 512 up to 2m (4k, 128k)");
		c->bs = (unsigned)x;
	} else if (!strcmp(key, "rw") || !strcmp(key, "readwrite")) {
		if (set_rw(j, v))
			return BAD("'%s': the model runs randread, randwrite, read or write");
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
	j->cfg.rw = ILAB_FIO_READ;
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

static int finish(struct fio_job *j, const char *name)
{
	struct ilab_nvme_cfg *c = &j->cfg;

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
	}
	return 0;
}
