/* trace.c — the timeline trace (iommulab/trace.h, docs/trace.md): the simulation written as
 * Chrome/Perfetto JSON trace events while it runs. It is not the breakdown (prof.c), but it
 * hangs on the same scope boundaries, read from the same clock, so the two cannot disagree:
 * a CPU's top-level slices of one function sum to that function's total in the breakdown.
 *
 * One simulator is one process of the trace (pid), named by ilab_trace_use's label; in it a
 * simulated CPU is the thread (track) tid = its number, and each named track a model asks for
 * (ilab_sim_trace_track: an IOMMU unit, its invalidation engine) tid = nr_cpus + k. Times are
 * virtual ns written as microseconds with three decimals, exact. The events are written in
 * the order the simulator runs them, which the seed fixes, so one seed gives one byte stream;
 * per track they are in time order (a fiber's clock never goes back), across tracks not
 * (fibers run ahead within the lookahead), which both viewers accept: they sort.
 *
 * Memory: nothing is kept per event. The stream is a stdio FILE with a 1 MiB buffer; the
 * window (limit_ns) bounds the file in time, max_bytes in size: once the file is that long
 * no event starts any more (a viewer reads the whole file into one string, and V8's longest
 * is 512 MiB), the run goes on, and the CLI says where it stopped. It opens when a simulator first starts CPU threads (the
 * set-up before, a few dozen events, is written whole: its virtual time says nothing about
 * the workload) and an event that starts past its end is not written, except the E of a B
 * that was (the bit of its depth in the fiber's trace_open), so every slice is closed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/trace.h>

#include "sim/sim_internal.h"
#include "util/atomic_file.h"

#define TRACE_BUF_BYTES (1u << 20)
#define TRACE_LABEL_MAX 200
/* The file's size is read (ftello) once per this many events: cheap, and the bound is then
 * passed by at most this many events (~100 bytes each). */
#define TRACE_SIZE_EVERY 4096u
/* Flows started and not yet ended, per simulator: an open-addressed table by key. A flow
 * whose slot is taken by a newer key before its end is lost (its start stays, drawn alone):
 * more waits than this in flight at once do not happen with queues of a few thousand. */
#define TRACE_FLOWS 4096u

struct sim_trace_flow {
	uint64_t key;
	uint64_t id; /* 0: free */
	const char *name;
};

struct ilab_trace {
	FILE *f;              /* af.f */
	struct ilab_afile af; /* written whole or not at all: a full disk keeps the old trace */
	char *buf;
	uint64_t limit_ns; /* ~0: no window */
	uint64_t max_bytes; /* 0: no bound; else no event starts once the file is this long */
	uint64_t events;
	uint64_t next_flow; /* flow ids, unique in the file */
	bool full;          /* max_bytes reached: only the E of an open B is still written */
	uint64_t full_at_ns; /* the virtual time, in the process below, when it was reached */
	unsigned full_pid;
	char full_in[TRACE_LABEL_MAX + 16];
	unsigned next_pid;
	bool any;          /* an event was written: the next one needs a comma */
	char label[TRACE_LABEL_MAX];
	unsigned label_uses;
};

/* The trace that simulators created from now on attach to (ilab_trace_use). */
static struct ilab_trace *trace_next;

/* ---- the file ----------------------------------------------------------------------------- */

int ilab_trace_open(const char *path, uint64_t limit_ns, uint64_t max_bytes,
		    struct ilab_trace **out, char *err, size_t errlen)
{
	struct ilab_trace *t = calloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	if (t)
		t->buf = malloc(TRACE_BUF_BYTES);
	if (!t || !t->buf) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = ilab_afile_open(&t->af, path, err, errlen);
	if (rc) {
		free(t->buf);
		free(t);
		return rc;
	}
	t->f = t->af.f;
	setvbuf(t->f, t->buf, _IOFBF, TRACE_BUF_BYTES);
	t->limit_ns = limit_ns ? limit_ns : UINT64_MAX;
	t->max_bytes = max_bytes;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", t->f);
	*out = t;
	return 0;
}

bool ilab_trace_stopped(const struct ilab_trace *t, char *what, size_t len)
{
	if (!t || !t->full)
		return false;
	snprintf(what, len, "%s, at %" PRIu64 ".%03u us of simulated time", t->full_in,
		 t->full_at_ns / 1000, (unsigned)(t->full_at_ns % 1000));
	return true;
}

int ilab_trace_close(struct ilab_trace *t, char *err, size_t errlen)
{
	int rc = 0;

	if (!t)
		return 0;
	if (trace_next == t)
		trace_next = NULL;
	if (t->full)
		fprintf(t->f, ",\n{\"ph\":\"i\",\"cat\":\"run\",\"pid\":%u,\"ts\":%" PRIu64
			".%03u,\"s\":\"g\",\"name\":\"trace limit reached\"}", t->full_pid,
			t->full_at_ns / 1000, (unsigned)(t->full_at_ns % 1000));
	fputs("\n]}\n", t->f);
	rc = ilab_afile_commit(&t->af, err, errlen); /* "path: reason"; the temporary is gone */
	free(t->buf);
	free(t);
	return rc;
}

void ilab_trace_use(struct ilab_trace *t, const char *label)
{
	trace_next = t;
	if (!t)
		return;
	if (strncmp(t->label, label ? label : "", sizeof(t->label) - 1)) {
		snprintf(t->label, sizeof(t->label), "%s", label ? label : "");
		t->label_uses = 0;
	}
}

/* A JSON string: names come from the code, labels from scenario files. */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The category of an event (its "cat", by which both viewers filter): a CPU's scopes, an
 * IOMMU unit's tracks (commands, invalidation engine, descriptors), counters, the run's own
 * marks, and Chrome's name for metadata. */
static const char *category(const struct ilab_sim *s, char ph, int tid)
{
	if (ph == 'M')
		return "__metadata";
	if (ph == 's' || ph == 'f')
		return "flow";
	if (ph == 'b' || ph == 'e')
		return "device";
	if (ph == 'C')
		return "counter";
	if (tid < 0)
		return "run";
	return (unsigned)tid < s->nr_cpus ? "cpu" : "iommu";
}

/* Every TRACE_SIZE_EVERY events: has the file reached its bound? The first to find it full
 * notes where and when (the instant event "trace limit reached" is written at the close). */
static void size_check(struct ilab_sim *s)
{
	struct ilab_trace *t = s->trace;
	off_t size;

	if (!t->max_bytes || t->full || t->events % TRACE_SIZE_EVERY)
		return;
	size = ftello(t->f);
	if (size < 0 || (uint64_t)size < t->max_bytes)
		return;
	t->full = true;
	t->full_pid = s->trace_pid;
	t->full_at_ns = plat_sim_cur ? plat_sim_cur->t : s->cur->pc.t;
	snprintf(t->full_in, sizeof(t->full_in), "%s", s->trace_name);
}

/* The start of one event: separator, phase, category, process, and (tid >= 0) thread. */
static FILE *event(struct ilab_sim *s, char ph, int tid)
{
	struct ilab_trace *t = s->trace;

	size_check(s);
	fprintf(t->f, "%s{\"ph\":\"%c\",\"cat\":\"%s\",\"pid\":%u", t->any ? ",\n" : "",
		ph, category(s, ph, tid), s->trace_pid);
	if (tid >= 0)
		fprintf(t->f, ",\"tid\":%d", tid);
	t->any = true;
	t->events++;
	return t->f;
}

/* Virtual ns as the format's microseconds, exactly. */
static void put_us(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

/* May an event that starts at ts be written? Not past the window, nor once the file has
 * reached its bound (size_check). */
static bool may_write(struct ilab_sim *s, uint64_t ts)
{
	return ts <= s->trace_end_ns && !s->trace->full;
}

static void metadata(struct ilab_sim *s, int tid, const char *what, const char *name,
		     unsigned sort)
{
	FILE *f = event(s, 'M', tid);

	fprintf(f, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	put_str(f, name);
	fputs("}}", f);
	f = event(s, 'M', tid);
	fprintf(f, ",\"name\":\"%s_sort_index\",\"args\":{\"sort_index\":%u}}",
		tid >= 0 ? "thread" : "process", sort);
}

/* ---- a simulator's process ---------------------------------------------------------------- */

void sim_trace_attach(struct ilab_sim *s)
{
	struct ilab_trace *t = trace_next;
	char name[TRACE_LABEL_MAX + 16];

	if (!t)
		return;
	s->trace_cpu_named = calloc(s->nr_cpus, 1);
	if (!s->trace_cpu_named)
		return; /* not traced: the run itself goes on */
	s->trace = t;
	s->trace_pid = ++t->next_pid;
	s->trace_end_ns = UINT64_MAX; /* the set-up is written whole (sim_trace_threads) */
	if (t->label_uses++)
		snprintf(name, sizeof(name), "%s (%u)", t->label, t->label_uses);
	else
		snprintf(name, sizeof(name), "%s", t->label[0] ? t->label : "simulation");
	snprintf(s->trace_name, sizeof(s->trace_name), "%s", name);
	if (!t->full)
		metadata(s, -1, "process_name", name, s->trace_pid);
}

/* The first simulated CPU threads start: the window (limit_ns) opens now. */
void sim_trace_threads(struct ilab_sim *s, uint64_t now)
{
	if (s->trace && !s->trace_window && s->trace->limit_ns != UINT64_MAX) {
		s->trace_window = true;
		s->trace_end_ns = now + s->trace->limit_ns;
	}
}

void sim_trace_detach(struct ilab_sim *s)
{
	for (unsigned i = 0; i < s->nr_trace_tracks; i++)
		free(s->trace_tracks[i]);
	free(s->trace_tracks);
	free(s->trace_cpu_named);
	free(s->trace_flows);
	s->trace_flows = NULL;
	s->trace_tracks = NULL;
	s->trace_cpu_named = NULL;
	s->nr_trace_tracks = 0;
	s->trace = NULL;
}

void ilab_sim_trace_end(struct ilab_sim *s)
{
	FILE *o;

	if (!s || !s->trace)
		return;
	if (may_write(s, s->cur->pc.t)) {
		o = event(s, 'i', -1);
		put_us(o, "ts", s->cur->pc.t);
		fputs(",\"s\":\"p\",\"name\":\"statistics\"}", o);
	}
	s->trace = NULL; /* the rest stays until sim_trace_detach */
}

/* Is f a simulated CPU's thread (not the set-up context, not an agent)? */
static bool cpu_fiber(const struct ilab_sim *s, const struct sim_fiber *f)
{
	return f && f->pc.cpu >= 0 && (unsigned)f->pc.cpu < s->nr_cpus;
}

/* A CPU's track is named on its first event: idle CPUs get none. */
static int cpu_track(struct ilab_sim *s, int cpu)
{
	char name[48];

	if (!s->trace_cpu_named[cpu]) {
		s->trace_cpu_named[cpu] = 1;
		snprintf(name, sizeof(name), "cpu %d (node %d)", cpu, s->cpu_node[cpu]);
		metadata(s, cpu, "thread_name", name, (unsigned)cpu);
	}
	return cpu;
}

/* ---- CPUs: the breakdown's scopes (prof.c calls these for the scopes it records) ------------ */

void sim_trace_enter(struct ilab_sim *s, struct sim_fiber *f, int id)
{
	FILE *o;

	if (f->prof_depth >= 32 || !may_write(s, f->pc.t))
		return;
	o = event(s, 'B', cpu_track(s, f->pc.cpu));
	put_us(o, "ts", f->pc.t);
	fprintf(o, ",\"name\":\"%s\"}", sim_prof_scope_name(id));
	f->trace_open |= 1u << f->prof_depth;
}

/* f->prof_depth is already the depth of the scope left. */
void sim_trace_leave(struct ilab_sim *s, struct sim_fiber *f)
{
	uint32_t bit = f->prof_depth < 32 ? 1u << f->prof_depth : 0;
	FILE *o;

	if (!(f->trace_open & bit))
		return;
	f->trace_open &= ~bit;
	o = event(s, 'E', f->pc.cpu);
	put_us(o, "ts", f->pc.t);
	fputc('}', o);
}

/* ---- models: named tracks, slices, counters ----------------------------------------------- */

static struct ilab_sim *tracing_sim(void)
{
	struct ilab_sim *s = sim_active;

	return s && s->trace && plat_sim_cur ? s : NULL;
}

bool ilab_sim_tracing(void)
{
	return tracing_sim() != NULL;
}

int ilab_sim_trace_track(const char *name)
{
	struct ilab_sim *s = tracing_sim();
	char **v;
	unsigned k;

	if (!s || !name)
		return -1;
	for (k = 0; k < s->nr_trace_tracks; k++)
		if (!strcmp(s->trace_tracks[k], name))
			return (int)(s->nr_cpus + k);
	v = realloc(s->trace_tracks, (k + 1) * sizeof(*v));
	if (!v)
		return -1;
	s->trace_tracks = v;
	v[k] = strdup(name);
	if (!v[k])
		return -1;
	s->nr_trace_tracks++;
	if (!s->trace->full)
		metadata(s, (int)(s->nr_cpus + k), "thread_name", name, s->nr_cpus + k);
	return (int)(s->nr_cpus + k);
}

void ilab_sim_trace_slice(int track, const char *name, uint64_t start_ns, uint64_t dur_ns,
			  const char *arg_key, int64_t arg)
{
	struct ilab_sim *s = tracing_sim();
	FILE *o;

	if (!s || track < 0 || !may_write(s, start_ns))
		return;
	o = event(s, 'X', track);
	put_us(o, "ts", start_ns);
	put_us(o, "dur", dur_ns);
	fputs(",\"name\":", o);
	put_str(o, name);
	if (arg_key)
		fprintf(o, ",\"args\":{\"%s\":%" PRId64 "}", arg_key, arg);
	fputc('}', o);
}

static void counter_at(struct ilab_sim *s, uint64_t ts, const char *name, const char *key,
		       int64_t value)
{
	FILE *o;

	if (!may_write(s, ts))
		return;
	o = event(s, 'C', -1);
	put_us(o, "ts", ts);
	fputs(",\"name\":", o);
	put_str(o, name);
	fprintf(o, ",\"args\":{\"%s\":%" PRId64 "}}", key, value);
}

void ilab_sim_trace_counter(const char *name, const char *key, int64_t value)
{
	struct ilab_sim *s = tracing_sim();

	if (s)
		counter_at(s, plat_sim_cur->t, name, key, value);
}

/* plat_count_fn while a traced simulator is active: kernel-side code's counters (plat.h). */
void sim_trace_count(int what, int64_t delta)
{
	static const char *const names[PLAT_COUNT_NR] = {
		[PLAT_COUNT_FQ_DEPTH] = "flush queue",
	};
	struct ilab_sim *s = tracing_sim();

	if (!s || what < 0 || what >= PLAT_COUNT_NR)
		return;
	s->trace_count[what] += delta;
	counter_at(s, plat_sim_cur->t, names[what], "entries", s->trace_count[what]);
}

/* ---- flows: from the device's work to the CPU wait it released ------------------------------ */

static struct sim_trace_flow *flow_slot(struct ilab_sim *s, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	if (!s->trace_flows) {
		s->trace_flows = calloc(TRACE_FLOWS, sizeof(*s->trace_flows));
		if (!s->trace_flows)
			return NULL; /* no flows: the trace goes on without them */
	}
	return &s->trace_flows[(h >> 40) % TRACE_FLOWS];
}

void ilab_sim_trace_flow_out(int track, const char *name, uint64_t key, uint64_t start_ns)
{
	struct ilab_sim *s = tracing_sim();
	struct sim_trace_flow *fl;
	FILE *o;

	if (!s || track < 0 || !may_write(s, start_ns) || !(fl = flow_slot(s, key)))
		return;
	fl->key = key;
	fl->id = ++s->trace->next_flow;
	fl->name = name;
	o = event(s, 's', track);
	put_us(o, "ts", start_ns);
	fprintf(o, ",\"id\":%" PRIu64 ",\"name\":", fl->id);
	put_str(o, name);
	fputc('}', o);
}

/* plat_flow_fn while a traced simulator is active: the running CPU's wait for key is over.
 * The end binds to the slice open on the CPU's track (bp "e"): the wait, still open. */
void sim_trace_flow_in(uint64_t key)
{
	struct ilab_sim *s = tracing_sim();
	struct sim_trace_flow *fl;
	FILE *o;

	if (!s || !s->trace_flows)
		return;
	fl = flow_slot(s, key);
	if (!fl->id || fl->key != key)
		return;
	/* a simulated CPU's wait only: the set-up context and agents have no track of scopes */
	if (cpu_fiber(s, s->cur) && may_write(s, plat_sim_cur->t)) {
		o = event(s, 'f', cpu_track(s, s->cur->pc.cpu));
		put_us(o, "ts", plat_sim_cur->t);
		fprintf(o, ",\"bp\":\"e\",\"id\":%" PRIu64 ",\"name\":", fl->id);
		put_str(o, fl->name);
		fputc('}', o);
	}
	fl->id = 0;
}

/* ---- devices: DMA, translation requests, walks ---------------------------------------------- */

void ilab_sim_trace_async(const char *name, uint64_t start_ns, uint64_t dur_ns,
			  const char *arg_key, int64_t arg)
{
	struct ilab_sim *s = tracing_sim();
	uint64_t id;
	FILE *o;

	if (!s || !name || !may_write(s, start_ns))
		return;
	id = ++s->trace->next_flow; /* ids are unique in the file, flows' and these alike */
	o = event(s, 'b', -1);
	put_us(o, "ts", start_ns);
	fprintf(o, ",\"id\":%" PRIu64 ",\"name\":", id);
	put_str(o, name);
	if (arg_key)
		fprintf(o, ",\"args\":{\"%s\":%" PRId64 "}", arg_key, arg);
	fputc('}', o);
	o = event(s, 'e', -1);
	put_us(o, "ts", start_ns + dur_ns);
	fprintf(o, ",\"id\":%" PRIu64 ",\"name\":", id);
	put_str(o, name);
	fputc('}', o);
}

/* ---- contended lines: a counter track per named line (plat_track) -------------------------- */

/* A named line was contended at the running fiber's time: a cmpxchg on it failed (key
 * "failed cmpxchg", value the line's count so far), or a request queued value ns at its home
 * (key "queued ns"). Unnamed lines (PTEs, queue entries) have no track. */
void sim_trace_line(struct ilab_sim *s, const char *line, const char *key, int64_t value)
{
	char name[160];

	if (!s || !s->trace || !line || !plat_sim_cur)
		return;
	snprintf(name, sizeof(name), "line %s", line);
	counter_at(s, plat_sim_cur->t, name, key, value);
}

/* ---- polls released by a CPU's write: a lock's release, the queue owner's hand-over ---------- */

/* A wake flow's name: "release <line>", or "release" for an unnamed word. */
static const char *wake_name(char *buf, size_t len, const char *line)
{
	if (!line)
		return "release";
	snprintf(buf, len, "release %s", line);
	return buf;
}

/* writer's store at when wakes waiter's poll: a flow from the writer's slice (its release)
 * to the waiter's, ended by sim_trace_woken when the waiter runs again. CPUs only: a device's
 * write (a CMD_SYNC's MSI) has its own flow from the command. */
void sim_trace_wake(struct ilab_sim *s, struct sim_fiber *writer, struct sim_fiber *waiter,
		    const char *line, uint64_t when)
{
	char name[160];
	FILE *o;

	if (!s->trace || !cpu_fiber(s, writer) || !cpu_fiber(s, waiter) || !may_write(s, when))
		return;
	waiter->trace_wake = ++s->trace->next_flow;
	waiter->trace_wake_name = line;
	o = event(s, 's', cpu_track(s, writer->pc.cpu));
	put_us(o, "ts", when);
	fprintf(o, ",\"id\":%" PRIu64 ",\"name\":", waiter->trace_wake);
	put_str(o, wake_name(name, sizeof(name), line));
	fputc('}', o);
}

void sim_trace_woken(struct ilab_sim *s, struct sim_fiber *f)
{
	char name[160];
	FILE *o;

	if (!f->trace_wake)
		return;
	if (s->trace && may_write(s, f->pc.t)) {
		o = event(s, 'f', cpu_track(s, f->pc.cpu));
		put_us(o, "ts", f->pc.t);
		fprintf(o, ",\"bp\":\"e\",\"id\":%" PRIu64 ",\"name\":", f->trace_wake);
		put_str(o, wake_name(name, sizeof(name), f->trace_wake_name));
		fputc('}', o);
	}
	f->trace_wake = 0;
}
